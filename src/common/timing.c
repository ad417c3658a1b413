/* timing.c: the monotonic clock and the summary of timed runs (timing.h). */
#include "common/timing.h"

#include <math.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The monotonic clock by its system call, not the vDSO: the vDSO reads the
 * processor's time-stamp counter, which a CPU worker turns off for itself
 * before it runs candidate code (worker_guard.c, dkb__guard_tsc_off); the
 * call costs a fraction of a microsecond more. */
static void monotonic(struct timespec *ts) {
    if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts) != 0) ts->tv_sec = 0, ts->tv_nsec = 0;
}

double dkb__now_s(void) {
    struct timespec ts;
    monotonic(&ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double dkb__now_ms(void) {
    struct timespec ts;
    monotonic(&ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

dkb_timing dkb__timing_none(void) {
    dkb_timing t = {NAN, NAN, NAN, 0};
    return t;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

dkb_timing dkb__timing_summary(double *ms, int n) {
    if (!ms || n <= 0) return dkb__timing_none();
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    dkb_timing t;
    t.runs = n;
    t.min = ms[0];
    t.max = ms[n - 1];
    t.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    return t;
}
