/* score.c: per-row decisions (counted, final time, speedup) and the paper's
 * totals (pass rate, fast_p, overall speedup, geometric mean); definitions
 * in score.h. */
#include "harness/score.h"

#include <math.h>
#include <string.h>

const double dkb__fast_p[DKB_FAST_P_COUNT] = {1.0, 1.5, 2.0, 5.0};

static int known(double ms) { return isfinite(ms) && ms > 0; }

int dkb__score_rows(dkb_score_row *rows, int n, double threshold, dkb_error *err) {
    if (!isfinite(threshold) || threshold <= 0)
        return dkb_fail(err, DKB_EINVAL, "threshold %g: expected a positive number", threshold);
    if (n < 0 || (n > 0 && !rows)) return dkb_fail(err, DKB_EINVAL, "score: bad row list");
    for (int i = 0; i < n; i++) {
        dkb_score_row *r = &rows[i];
        r->valid = !r->missing && r->verdict == DKB_VERDICT_OK && known(r->baseline_ms) && known(r->candidate_ms);
        r->raw_speedup = r->valid ? r->baseline_ms / r->candidate_ms : NAN;
        r->counted = r->valid && r->raw_speedup >= threshold;
        r->final_ms = r->counted ? r->candidate_ms : known(r->baseline_ms) ? r->baseline_ms : NAN;
        r->speedup = r->counted ? r->raw_speedup : 1.0;
        r->time_floor = known(r->floor_ms) && known(r->final_ms) ? r->final_ms / r->floor_ms : NAN;
    }
    return 0;
}

void dkb__score_totals(const dkb_score_row *rows, int n, int mode, dkb_score_totals *t) {
    memset(t, 0, sizeof *t);
    double log_sum = 0;
    for (int i = 0; i < n; i++) {
        const dkb_score_row *r = &rows[i];
        if (mode >= 0 && (int)r->mode != mode) continue;
        t->rows++;
        if (r->missing) t->missing++;
        else t->candidates++;
        t->valid += r->valid;
        t->counted += r->counted;
        for (int k = 0; k < DKB_FAST_P_COUNT; k++) t->fast[k] += r->valid && r->raw_speedup > dkb__fast_p[k];
        if (known(r->baseline_ms)) {
            t->baseline_ms_sum += r->baseline_ms;
            t->final_ms_sum += r->final_ms;
        }
        log_sum += log(r->speedup);
    }
    t->pass_rate = t->candidates ? (double)t->valid / t->candidates : 0.0;
    for (int k = 0; k < DKB_FAST_P_COUNT; k++)
        t->fast_p[k] = t->candidates ? (double)t->fast[k] / t->candidates : 0.0;
    t->overall_speedup = t->final_ms_sum > 0 ? t->baseline_ms_sum / t->final_ms_sum : 1.0;
    t->geomean_speedup = t->rows ? exp(log_sum / t->rows) : 1.0;
}
