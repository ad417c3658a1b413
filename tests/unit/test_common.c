/* test_common.c: the definitions the tree shares instead of private copies:
 * the monotonic clock and the summary of timed runs (common/timing.h) over
 * awkward counts (0, 1, 2, 3, 7, unsorted, ties), DKB_COUNTOF, DKB_NQUERIES
 * against the registry, and the report's timings (one dkb_timing from the
 * worker to the eval row: a null or unmeasured timing reads back as
 * not measured, NaN). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/countof.h"
#include "common/timing.h"
#include "dkb/query.h"
#include "harness/protocol.h"
#include "test_check.h"

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

#define CHECK_TIMING(t, med, lo, hi, n)                                                                    \
    CHECK(same((t).median, med) && same((t).min, lo) && same((t).max, hi) && (t).runs == (n),             \
          "got median %g min %g max %g runs %d, want %g %g %g %d", (t).median, (t).min, (t).max, (t).runs, \
          (double)(med), (double)(lo), (double)(hi), (n))

static void test_clock(void) {
    double s0 = dkb__now_s(), m0 = dkb__now_ms();
    double s1 = dkb__now_s(), m1 = dkb__now_ms();
    CHECK(s1 >= s0 && m1 >= m0, "the clock went back: %.9f -> %.9f s, %.6f -> %.6f ms", s0, s1, m0, m1);
    /* one clock in two units: ms is 1000 x s (taken within the same second) */
    CHECK(fabs(m0 / 1e3 - s0) < 1.0, "ms %.3f and s %.6f are not one clock", m0, s0);
}

static void test_summary(void) {
    dkb_timing none = dkb__timing_none();
    CHECK_TIMING(none, NAN, NAN, NAN, 0);
    CHECK_TIMING(dkb__timing_summary(NULL, 3), NAN, NAN, NAN, 0);
    double v0[1] = {5};
    CHECK_TIMING(dkb__timing_summary(v0, 0), NAN, NAN, NAN, 0);
    CHECK_TIMING(dkb__timing_summary(v0, -1), NAN, NAN, NAN, 0);
    double v1[] = {2.5};
    CHECK_TIMING(dkb__timing_summary(v1, 1), 2.5, 2.5, 2.5, 1);
    double v2[] = {3, 1};
    CHECK_TIMING(dkb__timing_summary(v2, 2), 2, 1, 3, 2);
    CHECK(v2[0] == 1 && v2[1] == 3, "sorted in place");
    double v3[] = {9, 1, 4};
    CHECK_TIMING(dkb__timing_summary(v3, 3), 4, 1, 9, 3);
    double v7[] = {7, 7, 1, 3, 7, 2, 100};
    CHECK_TIMING(dkb__timing_summary(v7, 7), 7, 1, 100, 7);
    double ties[] = {4, 4, 4, 4};
    CHECK_TIMING(dkb__timing_summary(ties, 4), 4, 4, 4, 4);
    double even[] = {10, 1, 2, 20, 3, 4};   /* sorted 1 2 3 4 10 20: (3 + 4) / 2 */
    CHECK_TIMING(dkb__timing_summary(even, 6), 3.5, 1, 20, 6);
    /* a prefix only: the rest is left alone */
    double part[] = {5, 1, 0};
    CHECK_TIMING(dkb__timing_summary(part, 2), 3, 1, 5, 2);
    CHECK(part[2] == 0, "an element past n was touched");
}

static void test_countof(void) {
    static const char *const names[] = {"a", "b", "c"};
    int64_t wide[7];
    char text[] = "four";
    CHECK(DKB_COUNTOF(names) == 3);
    CHECK(DKB_COUNTOF(wide) == 7);
    CHECK(DKB_COUNTOF(text) == 5);   /* the NUL counts */
    (void)wide;
}

static void test_nqueries(void) {
    CHECK(DKB_NQUERIES == 22);
    for (int n = 1; n <= DKB_NQUERIES; n++) {
        const dkb_query *q = dkb_query_get(n);
        CHECK(q && q->number == n, "dkb_query_get(%d)", n);
        char name[8];
        snprintf(name, sizeof name, "q%02d", n);
        CHECK(dkb_query_number(name) == n, "dkb_query_number(%s)", name);
    }
    CHECK(!dkb_query_get(0) && !dkb_query_get(DKB_NQUERIES + 1) && !dkb_query_get(-1));
    CHECK(dkb_query_number("q23") == 0 && dkb_query_number("0") == 0);
}

/* A report's timings after the round trip through its JSON line. */
static void test_report_timing(void) {
    dkb_report r;
    dkb__report_init(&r);
    CHECK(r.baseline.runs == 0 && r.candidate.runs == 0, "an initialised report has no timings");
    double ms[] = {2, 1, 3};
    r.verdict = DKB_VERDICT_OK;
    r.baseline = dkb__timing_summary(ms, 3);
    char *line = dkb__report_json(&r);
    CHECK(line != NULL);
    dkb_report back;
    dkb_error err = {0};
    CHECK(line && dkb__report_parse(line, &back, &err) == 0, "%s", err.msg);
    CHECK_TIMING(back.baseline, 2, 1, 3, 3);
    CHECK_TIMING(back.candidate, NAN, NAN, NAN, 0);   /* written as null */
    dkb__report_free(&back);
    free(line);
    dkb__report_free(&r);

    /* written by hand: an object that says 0 runs is not a measurement */
    static const char *const hand[] = {
        "{\"verdict\": \"ok\", \"baseline_ms\": {\"median\": 1.5, \"min\": 1, \"max\": 2, \"runs\": 0}}",
        "{\"verdict\": \"ok\", \"baseline_ms\": {\"median\": 1.5, \"min\": 1, \"max\": 2}}",
        "{\"verdict\": \"ok\", \"baseline_ms\": {\"median\": 1.5, \"runs\": -4}}",
        "{\"verdict\": \"ok\", \"baseline_ms\": null}",
        "{\"verdict\": \"ok\"}",
    };
    for (size_t i = 0; i < DKB_COUNTOF(hand); i++) {
        CHECK(dkb__report_parse(hand[i], &back, &err) == 0, "%s: %s", hand[i], err.msg);
        CHECK_TIMING(back.baseline, NAN, NAN, NAN, 0);
        dkb__report_free(&back);
    }
}

int main(void) {
    test_clock();
    test_summary();
    test_countof();
    test_nqueries();
    test_report_timing();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
