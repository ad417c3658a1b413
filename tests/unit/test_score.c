/* test_score.c: the paper's metrics on hand-made verdict lists: valid,
 * invalid, slow and fast candidates, missing queries, unknown baselines,
 * ties at the threshold and at each fast_p, empty input, bad thresholds,
 * per-mode totals; every number checked. */
#include <math.h>

#include "harness/score.h"
#include "test_result_util.h"

#define NA NAN

/* a and b equal (both NaN counts as equal) within 1e-12 relative */
#define CHECK_NUM(got, want)                                                                        \
    do {                                                                                            \
        double g_ = (got), w_ = (want);                                                             \
        if (!((isnan(g_) && isnan(w_)) || fabs(g_ - w_) <= 1e-12 * fmax(1.0, fabs(w_)))) {          \
            fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g\n", __FILE__, __LINE__, #got, g_, w_); \
            failures++;                                                                             \
        }                                                                                           \
    } while (0)

static dkb_score_row row(dkb_mode mode, dkb_verdict v, double base, double cand, double floor_ms) {
    dkb_score_row r = {0};
    r.mode = mode;
    r.verdict = v;
    r.baseline_ms = base;
    r.candidate_ms = cand;
    r.floor_ms = floor_ms;
    return r;
}

static dkb_score_row missing(dkb_mode mode, double base) {
    dkb_score_row r = row(mode, DKB_VERDICT_OK, base, NA, NA);
    r.missing = 1;
    return r;
}

/* the out fields of one row */
#define CHECK_ROW(r, valid_, counted_, raw_, final_, speedup_, tf_) \
    do {                                                            \
        CHECK((r).valid == (valid_));                               \
        CHECK((r).counted == (counted_));                           \
        CHECK_NUM((r).raw_speedup, raw_);                           \
        CHECK_NUM((r).final_ms, final_);                            \
        CHECK_NUM((r).speedup, speedup_);                           \
        CHECK_NUM((r).time_floor, tf_);                             \
    } while (0)

static void check_totals(const dkb_score_totals *t, int rows, int cands, int miss, int valid, int counted,
                         const int fast[4], double base_sum, double final_sum, double geomean) {
    CHECK(t->rows == rows);
    CHECK(t->candidates == cands);
    CHECK(t->missing == miss);
    CHECK(t->valid == valid);
    CHECK(t->counted == counted);
    CHECK_NUM(t->pass_rate, cands ? (double)valid / cands : 0.0);
    for (int k = 0; k < 4; k++) {
        CHECK(t->fast[k] == fast[k]);
        CHECK_NUM(t->fast_p[k], cands ? (double)fast[k] / cands : 0.0);
    }
    CHECK_NUM(t->baseline_ms_sum, base_sum);
    CHECK_NUM(t->final_ms_sum, final_sum);
    CHECK_NUM(t->overall_speedup, final_sum > 0 ? base_sum / final_sum : 1.0);
    CHECK_NUM(t->geomean_speedup, geomean);
}

/* Seven rows of every kind at the default threshold. */
static void test_mixed(void) {
    dkb_score_row r[] = {
        row(DKB_MODE_FULL, DKB_VERDICT_OK, 100, 50, 10),           /* 0 fast: 2x */
        row(DKB_MODE_FULL, DKB_VERDICT_OK, 80, 100, NA),           /* 1 valid but slow */
        row(DKB_MODE_FULL, DKB_VERDICT_WRONG_ANSWER, 60, 10, 6),   /* 2 fast but wrong */
        row(DKB_MODE_CORE, DKB_VERDICT_OK, 40, 40, 0),             /* 3 tie at 1.0 */
        missing(DKB_MODE_CORE, 20),                                /* 4 no candidate */
        row(DKB_MODE_CORE, DKB_VERDICT_OK, 30, 5, 2.5),            /* 5 fast: 6x */
        row(DKB_MODE_FULL, DKB_VERDICT_CRASH, NA, NA, NA),         /* 6 nothing known */
    };
    dkb_error err = {0};
    CHECK(dkb__score_rows(r, 7, 1.0, &err) == 0);
    CHECK_ROW(r[0], 1, 1, 2.0, 50, 2.0, 5.0);
    CHECK_ROW(r[1], 1, 0, 0.8, 80, 1.0, NA);
    CHECK_ROW(r[2], 0, 0, NA, 60, 1.0, 10.0);
    CHECK_ROW(r[3], 1, 1, 1.0, 40, 1.0, NA);
    CHECK_ROW(r[4], 0, 0, NA, 20, 1.0, NA);
    CHECK_ROW(r[5], 1, 1, 6.0, 5, 6.0, 2.0);
    CHECK_ROW(r[6], 0, 0, NA, NA, 1.0, NA);

    dkb_score_totals t;
    dkb__score_totals(r, 7, -1, &t);
    /* fast: >1 {0,5}; >1.5 {0,5}; >2 {5} (2.0 is not more than 2); >5 {5} */
    check_totals(&t, 7, 6, 1, 4, 3, (const int[]){2, 2, 1, 1}, 330, 255, pow(12.0, 1.0 / 7));
    CHECK_NUM(t.pass_rate, 4.0 / 6);
    CHECK_NUM(t.fast_p[2], 1.0 / 6);
    CHECK_NUM(t.overall_speedup, 330.0 / 255);

    dkb__score_totals(r, 7, DKB_MODE_FULL, &t);
    check_totals(&t, 4, 4, 0, 2, 1, (const int[]){1, 1, 0, 0}, 240, 190, pow(2.0, 1.0 / 4));
    CHECK_NUM(t.pass_rate, 0.5);
    dkb__score_totals(r, 7, DKB_MODE_CORE, &t);
    check_totals(&t, 3, 2, 1, 2, 2, (const int[]){1, 1, 1, 1}, 90, 65, pow(6.0, 1.0 / 3));
    CHECK_NUM(t.pass_rate, 1.0);
    CHECK_NUM(t.fast_p[0], 0.5);
}

/* Ties: raw == threshold counts; raw == p is not fast_p. */
static void test_ties(void) {
    dkb_score_row r[] = {
        row(DKB_MODE_FULL, DKB_VERDICT_OK, 30, 20, NA),   /* exactly 1.5 */
        row(DKB_MODE_FULL, DKB_VERDICT_OK, 40, 20, NA),   /* exactly 2 */
        row(DKB_MODE_FULL, DKB_VERDICT_OK, 50, 10, NA),   /* exactly 5 */
        row(DKB_MODE_FULL, DKB_VERDICT_OK, 29, 20, NA),   /* 1.45: under 1.5 */
    };
    dkb_error err = {0};
    CHECK(dkb__score_rows(r, 4, 1.5, &err) == 0);
    CHECK_ROW(r[0], 1, 1, 1.5, 20, 1.5, NA);
    CHECK_ROW(r[1], 1, 1, 2.0, 20, 2.0, NA);
    CHECK_ROW(r[2], 1, 1, 5.0, 10, 5.0, NA);
    CHECK_ROW(r[3], 1, 0, 1.45, 29, 1.0, NA);
    dkb_score_totals t;
    dkb__score_totals(r, 4, -1, &t);
    /* >1: all 4; >1.5: {2, 5}; >2: {5}; >5: none */
    check_totals(&t, 4, 4, 0, 4, 3, (const int[]){4, 2, 1, 0}, 149, 79, pow(1.5 * 2 * 5, 0.25));

    /* the same at threshold 2: the 1.5 tie falls back, the 2.0 tie counts */
    CHECK(dkb__score_rows(r, 4, 2.0, &err) == 0);
    CHECK_ROW(r[0], 1, 0, 1.5, 30, 1.0, NA);
    CHECK_ROW(r[1], 1, 1, 2.0, 20, 2.0, NA);
    dkb__score_totals(r, 4, -1, &t);
    check_totals(&t, 4, 4, 0, 4, 2, (const int[]){4, 2, 1, 0}, 149, 89, pow(2.0 * 5, 0.25));

    /* threshold 1: a slower valid candidate falls back; an equal one counts */
    dkb_score_row s[] = {row(DKB_MODE_CORE, DKB_VERDICT_OK, 10, 10.000001, NA),
                         row(DKB_MODE_CORE, DKB_VERDICT_OK, 10, 10, NA)};
    CHECK(dkb__score_rows(s, 2, 1.0, &err) == 0);
    CHECK_ROW(s[0], 1, 0, 10 / 10.000001, 10, 1.0, NA);
    CHECK_ROW(s[1], 1, 1, 1.0, 10, 1.0, NA);
    dkb__score_totals(s, 2, -1, &t);
    check_totals(&t, 2, 2, 0, 2, 1, (const int[]){0, 0, 0, 0}, 20, 20, 1.0);
}

/* Every failure class is invalid, whatever its times; ok without times too. */
static void test_invalid(void) {
    dkb_score_row r[DKB_VERDICT_COUNT + 3];
    int n = 0;
    for (int v = 0; v < DKB_VERDICT_COUNT; v++)
        if (v != DKB_VERDICT_OK) r[n++] = row(DKB_MODE_FULL, (dkb_verdict)v, 10, 1, NA);
    r[n++] = row(DKB_MODE_FULL, DKB_VERDICT_OK, 10, NA, NA);  /* ok but never timed */
    r[n++] = row(DKB_MODE_FULL, DKB_VERDICT_OK, NA, 1, NA);   /* baseline unknown */
    r[n++] = row(DKB_MODE_FULL, DKB_VERDICT_OK, 10, 0, NA);   /* zero time */
    dkb_error err = {0};
    CHECK(dkb__score_rows(r, n, 1.0, &err) == 0);
    for (int i = 0; i < n; i++) {
        CHECK(!r[i].valid && !r[i].counted);
        CHECK_NUM(r[i].speedup, 1.0);
        CHECK_NUM(r[i].raw_speedup, NA);
    }
    CHECK_NUM(r[n - 2].final_ms, NA);
    dkb_score_totals t;
    dkb__score_totals(r, n, -1, &t);
    /* n - 1 rows have a baseline of 10 ms */
    check_totals(&t, n, n, 0, 0, 0, (const int[]){0, 0, 0, 0}, 10.0 * (n - 1), 10.0 * (n - 1), 1.0);
    CHECK_NUM(t.overall_speedup, 1.0);
    CHECK_NUM(t.pass_rate, 0.0);
}

static void test_empty(void) {
    dkb_error err = {0};
    CHECK(dkb__score_rows(NULL, 0, 1.0, &err) == 0);
    dkb_score_totals t;
    dkb__score_totals(NULL, 0, -1, &t);
    check_totals(&t, 0, 0, 0, 0, 0, (const int[]){0, 0, 0, 0}, 0, 0, 1.0);
    CHECK_NUM(t.overall_speedup, 1.0);

    /* only missing queries: no candidates, the baseline stands */
    dkb_score_row r[] = {missing(DKB_MODE_FULL, 12), missing(DKB_MODE_CORE, 3)};
    CHECK(dkb__score_rows(r, 2, 1.0, &err) == 0);
    dkb__score_totals(r, 2, -1, &t);
    check_totals(&t, 2, 0, 2, 0, 0, (const int[]){0, 0, 0, 0}, 15, 15, 1.0);
    CHECK_NUM(t.pass_rate, 0.0);
    /* a mode with no rows */
    dkb__score_totals(r, 1, DKB_MODE_CORE, &t);
    check_totals(&t, 0, 0, 0, 0, 0, (const int[]){0, 0, 0, 0}, 0, 0, 1.0);
}

static void test_bad_args(void) {
    dkb_score_row r = row(DKB_MODE_FULL, DKB_VERDICT_OK, 10, 5, NA);
    dkb_error err = {0};
    CHECK_ERR(dkb__score_rows(&r, 1, 0.0, &err), DKB_EINVAL, err, "threshold 0: expected a positive number");
    CHECK_ERR(dkb__score_rows(&r, 1, -1.0, &err), DKB_EINVAL, err, "threshold -1");
    CHECK_ERR(dkb__score_rows(&r, 1, NAN, &err), DKB_EINVAL, err, "threshold nan");
    CHECK_ERR(dkb__score_rows(&r, 1, INFINITY, &err), DKB_EINVAL, err, "threshold inf");
    CHECK_ERR(dkb__score_rows(&r, -1, 1.0, &err), DKB_EINVAL, err, "bad row list");
    CHECK_ERR(dkb__score_rows(NULL, 1, 1.0, &err), DKB_EINVAL, err, "bad row list");
    /* a threshold under 1 lets a slower candidate count */
    CHECK(dkb__score_rows(&r, 1, 0.5, &err) == 0);
    r.candidate_ms = 16;
    CHECK(dkb__score_rows(&r, 1, 0.5, &err) == 0);
    CHECK_ROW(r, 1, 1, 0.625, 16, 0.625, NA);
}

int main(void) {
    test_mixed();
    test_ties();
    test_invalid();
    test_empty();
    test_bad_args();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_score: ok\n");
    return 0;
}
