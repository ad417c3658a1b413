/* test_gen_api.c: the generator's contract apart from dbgen equality:
 * scale factor rules and errors, unit counts, fill argument checks, large
 * scale factors (64-bit keys, the last units of SF 1000 and 100000), and
 * concurrent fills giving the same text as a serial one. */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "tbl/tbl.h"
#include "test_check.h"

/* Text of units [first, first + count) of t. Caller frees. */
static char *gen_text(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count, int *rc,
                      size_t *rows) {
    dkb_batch b;
    size_t cap = (size_t)(count ? count : 1) * (size_t)dkb__gen_max_rows_per_unit(t);
    dkb_buf out = {0};
    *rc = dkb__batch_init(&b, dkb_table_def_get(t), cap);
    if (*rc) return NULL;
    *rc = dkb__gen_fill(g, t, first, count, &b);
    if (!*rc) *rc = dkb__tbl_format(&b, &out);
    if (rows) *rows = b.nrows;
    dkb__batch_free(&b);
    if (dkb__buf_reserve(&out, 1) == 0) out.data[out.len] = 0;
    return out.data;
}

static void test_errors(void) {
    static max_align_t dummy;
    dkb_gen *g = (dkb_gen *)(void *)&dummy;
    dkb_error err;
    const double bad[] = {0, -1, NAN, 100000.5, 1e9};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        int rc = dkb__gen_create(bad[i], &g, &err);
        CHECK(rc == DKB_ERANGE && err.code == DKB_ERANGE && err.msg[0] && g == NULL,
              "sf %g: rc %d, msg \"%s\"", bad[i], rc, err.msg);
    }
    CHECK(dkb__gen_create(-1, &g, NULL) == DKB_ERANGE, "NULL error pointer");
    dkb__gen_destroy(NULL);
    CHECK(dkb__gen_max_rows_per_unit(DKB_TABLE_PARTSUPP) == 4, "partsupp rows per unit");
    CHECK(dkb__gen_max_rows_per_unit(DKB_TABLE_LINEITEM) == 7, "lineitem rows per unit");
    CHECK(dkb__gen_max_rows_per_unit(DKB_TABLE_ORDERS) == 1, "orders rows per unit");
}

/* Scale factor rules and unit counts. */
static void test_scales(void) {
    static const struct {
        double sf, eff;
        int64_t part, supp, cust, orders;
    } cases[] = {
        {0.01, 0.01, 2000, 100, 1500, 15000},
        {0.0015, 0.001, 200, 10, 150, 1500},
        {0.0001, 0.0, 1, 1, 1, 1},
        {0.5, 0.5, 100000, 5000, 75000, 750000},
        {1.5, 1, 200000, 10000, 150000, 1500000},
        {1000, 1000, 200000000, 10000000, 150000000, 1500000000},
        {100000, 100000, 20000000000, 1000000000, 15000000000, 150000000000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dkb_gen *g;
        dkb_error err;
        int rc = dkb__gen_create_threads(cases[i].sf, 2, &g, &err);
        CHECK(rc == 0, "create sf %g: %s", cases[i].sf, err.msg);
        if (rc) continue;
        CHECK(fabs(dkb__gen_scale(g) - cases[i].eff) < 1e-12, "sf %g: scale %g", cases[i].sf,
              dkb__gen_scale(g));
        const int64_t want[DKB_TABLE_COUNT] = {cases[i].part, cases[i].part, cases[i].supp,
                                               cases[i].cust, cases[i].orders, cases[i].orders,
                                               25, 5};
        for (int t = 0; t < DKB_TABLE_COUNT; t++)
            CHECK(dkb__gen_units(g, t) == want[t], "sf %g %s: %lld units, want %lld",
                  cases[i].sf, dkb_table_def_get(t)->name, (long long)dkb__gen_units(g, t),
                  (long long)want[t]);
        /* First and last two units of every table generate, with the keys
         * dbgen gives them (orders: sparse, 8 used keys in every 32). */
        for (int t = 0; t < DKB_TABLE_COUNT; t++) {
            int64_t units = dkb__gen_units(g, t);
            int64_t firsts[2] = {0, units > 2 ? units - 2 : 0};
            for (int k = 0; k < 2; k++) {
                int64_t n = units - firsts[k] < 2 ? units - firsts[k] : 2;
                size_t rows;
                char *text = gen_text(g, t, firsts[k], n, &rc, &rows);
                CHECK(rc == 0 && text, "sf %g %s units %lld+%lld: rc %d", cases[i].sf,
                      dkb_table_def_get(t)->name, (long long)firsts[k], (long long)n, rc);
                if (!text) continue;
                long long key = atoll(text);
                int64_t u = firsts[k] + 1;
                long long want_key = (long long)u;
                if (t == DKB_TABLE_ORDERS || t == DKB_TABLE_LINEITEM)
                    want_key = (long long)(((u >> 3) << 5) | (u & 7));
                else if (t >= DKB_TABLE_NATION)
                    want_key = (long long)u - 1;
                CHECK(key == want_key, "sf %g %s unit %lld: key %lld, want %lld", cases[i].sf,
                      dkb_table_def_get(t)->name, (long long)firsts[k], key, want_key);
                size_t lines = 0;
                for (char *p = text; *p; p++) lines += *p == '\n';
                CHECK(lines == rows && rows >= (size_t)n, "sf %g %s: %zu lines, %zu rows",
                      cases[i].sf, dkb_table_def_get(t)->name, lines, rows);
                free(text);
            }
        }
        dkb__gen_destroy(g);
    }
}

static void test_fill_checks(const dkb_gen *g) {
    dkb_batch b;
    CHECK(dkb__batch_init(&b, dkb_table_def_get(DKB_TABLE_LINEITEM), 70) == 0, "batch_init");
    int64_t units = dkb__gen_units(g, DKB_TABLE_LINEITEM);
    CHECK(dkb__gen_fill(g, DKB_TABLE_ORDERS, 0, 1, &b) == DKB_EINVAL, "wrong table");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, -1, 1, &b) == DKB_EINVAL, "negative first");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, 0, -1, &b) == DKB_EINVAL, "negative count");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, units, 1, &b) == DKB_EINVAL, "past the end");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, units - 1, 2, &b) == DKB_EINVAL, "overlaps end");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, 0, 11, &b) == DKB_EINVAL, "capacity (11 x 7 > 70)");
    CHECK(dkb__gen_fill(g, (dkb_table_id)99, 0, 1, &b) == DKB_EINVAL, "bad table id");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, units, 0, &b) == 0 && b.nrows == 0, "empty range");
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, 0, 10, &b) == 0 && b.nrows > 0, "fill 10");
    /* The capacity check counts the rows already in the batch. */
    size_t had = b.nrows;
    int want = 70 - had >= 5 * 7 ? 0 : DKB_EINVAL;
    CHECK(dkb__gen_fill(g, DKB_TABLE_LINEITEM, 10, 5, &b) == want,
          "5 more units with %zu of 70 rows used", had);
    dkb__batch_free(&b);
    CHECK(dkb__gen_units(g, (dkb_table_id)99) == 0, "units of a bad table id");
}

/* Appending two ranges to one batch, and filling ranges on many threads at
 * once, give the same text as one serial fill. */
static void test_concurrency(const dkb_gen *g) {
    for (int t = 0; t < DKB_TABLE_COUNT; t++) {
        int64_t units = dkb__gen_units(g, t);
        int rc;
        char *whole = gen_text(g, t, 0, units, &rc, NULL);
        CHECK(rc == 0 && whole, "%s: serial", dkb_table_def_get(t)->name);
        if (!whole) continue;

        dkb_batch b;
        dkb_buf two = {0};
        size_t cap = (size_t)units * (size_t)dkb__gen_max_rows_per_unit(t);
        rc = dkb__batch_init(&b, dkb_table_def_get(t), cap);
        if (!rc) rc = dkb__gen_fill(g, t, 0, units / 3, &b);
        if (!rc) rc = dkb__gen_fill(g, t, units / 3, units - units / 3, &b);
        if (!rc) rc = dkb__tbl_format(&b, &two);
        CHECK(rc == 0 && two.len == strlen(whole) && memcmp(two.data, whole, two.len) == 0,
              "%s: two fills into one batch differ", dkb_table_def_get(t)->name);
        dkb__batch_free(&b);
        dkb__buf_free(&two);

        const int parts = 16;
        char *piece[16] = {0};
        int bad = 0;
#pragma omp parallel for num_threads(4) schedule(dynamic, 1) reduction(+ : bad)
        for (int p = 0; p < parts; p++) {
            int64_t lo = units * p / parts, hi = units * (p + 1) / parts;
            int prc;
            piece[p] = gen_text(g, t, lo, hi - lo, &prc, NULL);
            bad += prc != 0 || !piece[p];
        }
        size_t off = 0, len = strlen(whole);
        for (int p = 0; p < parts && !bad; p++) {
            size_t n = strlen(piece[p]);
            bad += off + n > len || memcmp(whole + off, piece[p], n) != 0;
            off += n;
        }
        CHECK(!bad && off == len, "%s: parallel fills differ from the serial one",
              dkb_table_def_get(t)->name);
        for (int p = 0; p < parts; p++) free(piece[p]);
        free(whole);
    }
}

int main(void) {
    test_errors();
    test_scales();
    dkb_gen *g;
    dkb_error err;
    if (dkb__gen_create(0.01, &g, &err) == 0) {
        test_fill_checks(g);
        test_concurrency(g);
        dkb__gen_destroy(g);
    } else {
        CHECK(0, "create SF 0.01: %s", err.msg);
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_gen_api: all checks passed\n");
    return 0;
}
