/* timing.h: the tree's one monotonic clock, and the one summary of timed
 * runs (median, minimum, maximum) that the harness's worker and report,
 * `dkb run` and the benches share (internal).
 *
 * C and CUDA C++ (cuda_backend.cu) include it, hence the extern "C". */
#ifndef DKB_COMMON_TIMING_H
#define DKB_COMMON_TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds (resp. milliseconds) on CLOCK_MONOTONIC since an arbitrary fixed
 * point: only differences mean anything, and they do not jump when the
 * wall clock is set. Never fails. */
double dkb__now_s(void);
double dkb__now_ms(void);

/* Timed runs summarised. Unmeasured ("not timed", a report's null) is
 * runs 0 with median, min and max NaN (dkb__timing_none); a measured one
 * has runs >= 1 and min <= median <= max. */
typedef struct dkb_timing {
    double median, min, max;   /* ms */
    int runs;                  /* timed runs; 0: not measured */
} dkb_timing;

/* {NaN, NaN, NaN, 0}: not measured. */
dkb_timing dkb__timing_none(void);

/* The summary of the n run times ms[0..n) (any unit; the harness uses ms).
 * Sorts ms in place, ascending (copy first to keep the run order). The
 * median of an even count is the mean of the two middle values.
 * n <= 0 or ms NULL gives dkb__timing_none(). */
dkb_timing dkb__timing_summary(double *ms, int n);

#ifdef __cplusplus
}
#endif

#endif
