/* guard_cost.c: what the worker's pristine state costs per candidate call
 * (docs/harness.md "Overhead"): dkb__guard_pristine_restore (statics,
 * stdio, named objects, every team thread's stack and per-thread state),
 * the heap record's begin and end, and the stack wipe, as candidate_call
 * runs them, outside the timed region. Runs them N times after a warm-up
 * with T OpenMP threads and prints the mean and the median per call.
 *
 *   build/dkb_guard_cost [THREADS] [CALLS]      (defaults: all cores, 2000) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/timing.h"
#include "harness/heap_interpose.h"
#include "harness/worker_guard.h"

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
    int calls = argc > 2 ? atoi(argv[2]) : 2000;
    if (threads < 1 || calls < 1) {
        fprintf(stderr, "usage: dkb_guard_cost [THREADS >= 1] [CALLS >= 1]\n");
        return 2;
    }
    omp_set_num_threads(threads);
#pragma omp parallel
    {
        volatile int x = omp_get_thread_num();
        (void)x;
    }
    dkb_error e = {0};
    if (dkb__guard_pristine_take(threads, &e)) {
        fprintf(stderr, "dkb_guard_cost: %s\n", e.msg);
        return 1;
    }
    double *ms = malloc((size_t)calls * sizeof *ms);
    if (!ms) return 1;
    for (int i = -calls / 10; i < calls; i++) { /* a tenth as warm-up */
        double t0 = dkb__now_ms();
        char *lo = dkb__guard_pristine_restore();
        dkb__heap_call_begin();
        dkb__guard_wipe_below(lo);
        dkb__heap_call_end();
        if (i >= 0) ms[i] = dkb__now_ms() - t0;
    }
    double sum = 0;
    for (int i = 0; i < calls; i++) sum += ms[i];
    dkb_timing t = dkb__timing_summary(ms, calls);
    printf("threads %d, %d calls: mean %.1f us, median %.1f us, min %.1f us, max %.1f us per call\n", threads, calls,
           sum / calls * 1e3, t.median * 1e3, t.min * 1e3, t.max * 1e3);
    free(ms);
    return 0;
}
