/* score.h: the paper's metrics from per-query outcomes (dkb eval).
 *
 * One row per evaluated (query, mode): a candidate's verdict and medians, or
 * a query without a candidate ("missing"). dkb__score_rows decides for each
 * row whether the candidate counts and what the query's final time is;
 * dkb__score_totals aggregates rows (all, or one mode) into pass rate,
 * fast_p, overall speedup and geometric mean. Pure arithmetic: no I/O.
 *
 * Definitions (docs/harness.md, "Scoring"):
 *   valid      verdict ok, and both medians known (> 0, finite)
 *   raw        baseline_ms / candidate_ms            (valid rows only)
 *   counted    valid and raw >= threshold            (a tie counts)
 *   final_ms   candidate_ms if counted, else baseline_ms
 *   speedup    baseline_ms / final_ms: raw if counted, else exactly 1.0
 *   time/floor final_ms / floor_ms                   (when a floor is known)
 *   pass rate  valid / candidates                    (missing rows excluded)
 *   fast_p     #(valid and raw > p) / candidates     (strictly faster), p in
 *              {1, 1.5, 2, 5}
 *   overall    sum baseline_ms / sum final_ms over rows whose baseline is
 *              known (missing rows included: they add baseline to both sums)
 *   geomean    exp(mean(log speedup)) over every row (rows without a known
 *              baseline contribute 1.0)
 * With no candidates the rates are 0; with no rows both speedups are 1.0. */
#ifndef DKB_HARNESS_SCORE_H
#define DKB_HARNESS_SCORE_H

#include "dkb/error.h"
#include "harness/harness.h"

#define DKB_FAST_P_COUNT 4
/* The p of fast_p, in order: 1, 1.5, 2, 5. */
extern const double dkb__fast_p[DKB_FAST_P_COUNT];

typedef struct dkb_score_row {
    /* in */
    int missing;           /* no candidate file: the baseline stands */
    dkb_mode mode;         /* for per-mode totals */
    dkb_verdict verdict;   /* ignored when missing */
    double baseline_ms;    /* baseline median; NaN (or <= 0) when unknown */
    double candidate_ms;   /* candidate median; NaN when not timed */
    double floor_ms;       /* bandwidth floor; NaN (or <= 0) when unknown */
    /* out (dkb__score_rows) */
    int valid;
    int counted;
    double raw_speedup;    /* NaN unless valid */
    double final_ms;       /* NaN when the baseline is unknown and not counted */
    double speedup;        /* 1.0 unless counted */
    double time_floor;     /* NaN without a floor or a final time */
} dkb_score_row;

typedef struct dkb_score_totals {
    int rows;              /* rows aggregated (candidates + missing) */
    int candidates;        /* rows with a candidate file */
    int missing;
    int valid;
    int counted;
    int fast[DKB_FAST_P_COUNT];       /* counts behind fast_p */
    double pass_rate;
    double fast_p[DKB_FAST_P_COUNT];
    double baseline_ms_sum;           /* over rows with a known baseline */
    double final_ms_sum;
    double overall_speedup;
    double geomean_speedup;
} dkb_score_totals;

/* Fill the out fields of rows[0..n) (n >= 0; rows may be NULL when n is 0)
 * at threshold (finite, > 0). DKB_EINVAL for a bad threshold or n. */
int dkb__score_rows(dkb_score_row *rows, int n, double threshold, dkb_error *err);

/* Aggregate the rows already scored. mode < 0: every row; else only rows of
 * that dkb_mode. Never fails. */
void dkb__score_totals(const dkb_score_row *rows, int n, int mode, dkb_score_totals *t);

#endif
