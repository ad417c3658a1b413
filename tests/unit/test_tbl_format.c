/* test_tbl_format.c: dkb__tbl_format against a printf-based reference, on
 * edge values (0, negatives, int64 limits, dates inside and outside the
 * preformatted range, strings of awkward lengths at the very end of their
 * buffers) and random rows; appending; empty batches. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/date.h"
#include "tbl/tbl.h"
#include "test_check.h"

/* ---- reference formatting with snprintf ---- */
static size_t ref_field(const dkb_batch *b, int c, size_t r, char *out) {
    const dkb_column_def *cd = &b->table->cols[c];
    const dkb_batch_col *k = &b->col[c];
    switch (cd->type) {
    case DKB_TYPE_INT: return (size_t)sprintf(out, "%" PRId64, k->v[r]);
    case DKB_TYPE_DECIMAL: {
        int64_t v = k->v[r];
        if (cd->flags & DKB_COL_WHOLE) return (size_t)sprintf(out, "%" PRId64, v / 100);
        uint64_t m = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
        return (size_t)sprintf(out, "%s%" PRIu64 ".%02u", v < 0 ? "-" : "", m / 100,
                               (unsigned)(m % 100));
    }
    case DKB_TYPE_DATE: {
        int y, m, d;
        dkb__civil_from_days((int32_t)k->v[r], &y, &m, &d);
        return (size_t)sprintf(out, "%04d-%02d-%02d", y, m, d);
    }
    default: {
        size_t len;
        const char *s = dkb__batch_str(b, c, r, &len);
        memcpy(out, s, len);
        return len;
    }
    }
}

static char *ref_text(const dkb_batch *b, size_t *len) {
    size_t cap = 1024, n = 0;
    char *out = malloc(cap);
    for (size_t r = 0; r < b->nrows; r++)
        for (int c = 0; c < b->table->ncols; c++) {
            size_t slen = b->col[c].off ? b->col[c].off[r + 1] - b->col[c].off[r] : 0;
            while (n + slen + 64 > cap) out = realloc(out, cap *= 2);
            n += ref_field(b, c, r, out + n);
            out[n++] = '|';
            if (c == b->table->ncols - 1) out[n++] = '\n';
        }
    *len = n;
    return out;
}

static void check_batch(const dkb_batch *b, const char *what) {
    size_t want_len;
    char *want = ref_text(b, &want_len);
    dkb_buf out = {0};
    int rc = dkb__tbl_format(b, &out);
    CHECK(rc == 0, "%s: format returned %d", what, rc);
    size_t i = 0;
    while (i < want_len && i < out.len && want[i] == out.data[i]) i++;
    size_t from = i > 20 ? i - 20 : 0;
    CHECK(out.len == want_len && i == want_len, "%s: differs at byte %zu:\n got: %.80s\nwant: %.80s",
          what, i, out.data ? out.data + from : "", want + from);
    dkb__buf_free(&out);
    free(want);
}

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* A value of random magnitude (0 to 19 digits), random sign if `sign`. */
static int64_t rnd_value(int sign) {
    int digits = (int)(rnd() % 20);
    uint64_t m = 1;
    for (int i = 0; i < digits; i++) m *= 10;
    int64_t v = (int64_t)(rnd() % m);
    return sign && (rnd() & 1) ? -v : v;
}

/* Lineitem has every kind of column: INT, DECIMAL, whole DECIMAL, DATE, DICT, TEXT. */
static void test_edges(void) {
    const dkb_table_def *t = dkb_table_def_find("lineitem");
    static const int64_t ints[] = {0, 1, 9, 10, 99, 100, 999, 1000, 123456789, 9999999999,
                                   -1, -10, -100, INT64_MAX, INT64_MIN, 1000000000000000000};
    static const int64_t decs[] = {0, 5, 10, 99, 100, 101, -1, -50, -100, -28384, 123456,
                                   INT64_MAX, INT64_MIN, 99999999, -99999999, 1000000};
    static const int64_t days[] = {0, 8035, 10591, -7305, -7306, 29219, 29220, -1, 60000,
                                   -719468, 2932896, 9298, 9299, 11016, 365, 8034};
    const size_t n = sizeof ints / sizeof ints[0];
    dkb_batch b;
    CHECK(dkb__batch_init(&b, t, n) == 0, "batch_init");
    char text[256];
    for (size_t r = 0; r < n; r++) {
        for (int c = 0; c < t->ncols; c++) {
            switch (t->cols[c].type) {
            case DKB_TYPE_INT: b.col[c].v[r] = ints[(r + (size_t)c) % n]; break;
            case DKB_TYPE_DECIMAL: b.col[c].v[r] = decs[(r + (size_t)c) % n]; break;
            case DKB_TYPE_DATE: b.col[c].v[r] = days[(r + (size_t)c) % n]; break;
            default: {
                size_t len = (r * 17 + (size_t)c * 5) % 70; /* 0 .. 69: around the 48-byte block */
                for (size_t i = 0; i < len; i++) text[i] = (char)('a' + (i + r) % 26);
                CHECK(dkb__batch_put_str(&b, c, r, text, len) == 0, "put_str");
            }
            }
        }
    }
    b.nrows = n;
    check_batch(&b, "edge values");

    /* Appending keeps what the buffer holds. */
    dkb_buf out = {0};
    CHECK(dkb__tbl_format(&b, &out) == 0, "format");
    size_t one = out.len;
    CHECK(dkb__tbl_format(&b, &out) == 0, "format again");
    CHECK(out.len == 2 * one && memcmp(out.data, out.data + one, one) == 0, "append");
    /* An empty batch appends nothing. */
    b.nrows = 0;
    CHECK(dkb__tbl_format(&b, &out) == 0 && out.len == 2 * one, "empty batch");
    dkb__buf_free(&out);
    dkb__batch_free(&b);
}

/* Random rows, strings up to 300 bytes. */
static void test_random(void) {
    const dkb_table_def *t = dkb_table_def_find("lineitem");
    const size_t n = 5000;
    dkb_batch b;
    CHECK(dkb__batch_init(&b, t, n) == 0, "batch_init");
    char text[300];
    for (size_t r = 0; r < n; r++)
        for (int c = 0; c < t->ncols; c++) {
            switch (t->cols[c].type) {
            case DKB_TYPE_INT: b.col[c].v[r] = rnd_value(1); break;
            case DKB_TYPE_DECIMAL: b.col[c].v[r] = rnd_value(1); break;
            case DKB_TYPE_DATE: b.col[c].v[r] = (int64_t)(rnd() % 80000) - 20000; break;
            default: {
                size_t len = (size_t)(rnd() % (rnd() & 1 ? 50 : 300));
                for (size_t i = 0; i < len; i++) text[i] = (char)(' ' + rnd() % 95);
                CHECK(dkb__batch_put_str(&b, c, r, text, len) == 0, "put_str");
            }
            }
        }
    b.nrows = n;
    check_batch(&b, "random rows");
    dkb__batch_free(&b);
}

/* Strings that end exactly at the end of their allocation (the formatter
 * must not read past it), in a hand-built region batch. */
static void test_tight_strings(void) {
    const dkb_table_def *t = dkb_table_def_find("region");
    const char *names[] = {"A", "", "AMERICA", "MIDDLE EAST", "x"};
    const size_t n = 5;
    dkb_batch b;
    memset(&b, 0, sizeof b);
    b.table = t;
    b.cap = b.nrows = n;
    b.col[0].v = malloc(n * sizeof(int64_t));
    for (int c = 1; c <= 2; c++) {
        size_t total = 0;
        for (size_t r = 0; r < n; r++) total += strlen(names[r]) * (size_t)c * 7;
        b.col[c].off = malloc((n + 1) * sizeof(uint32_t));
        b.col[c].bytes = malloc(total ? total : 1);
        b.col[c].bytes_cap = total;
        b.col[c].off[0] = 0;
        for (size_t r = 0; r < n; r++) {
            size_t len = strlen(names[r]) * (size_t)c * 7;
            for (size_t i = 0; i < len; i++)
                b.col[c].bytes[b.col[c].bytes_len + i] = names[r][i % strlen(names[r])];
            b.col[c].bytes_len += len;
            b.col[c].off[r + 1] = (uint32_t)b.col[c].bytes_len;
        }
    }
    for (size_t r = 0; r < n; r++) b.col[0].v[r] = (int64_t)r;
    check_batch(&b, "tight strings");
    free(b.col[0].v);
    for (int c = 1; c <= 2; c++) {
        free(b.col[c].off);
        free(b.col[c].bytes);
    }
}

/* One-row batches: string buffers smaller than the formatter's copy blocks,
 * empty and short strings. */
static void test_small_batches(void) {
    const dkb_table_def *t = dkb_table_def_find("region");
    const char *names[] = {"", "A", "AMERICA", "0123456789abcdef"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        dkb_batch b;
        CHECK(dkb__batch_init(&b, t, 1) == 0, "batch_init");
        b.col[0].v[0] = (int64_t)i;
        CHECK(dkb__batch_put_str(&b, 1, 0, names[i], strlen(names[i])) == 0, "put_str");
        CHECK(dkb__batch_put_str(&b, 2, 0, "", 0) == 0, "put_str");
        b.nrows = 1;
        check_batch(&b, "one-row batch");
        dkb__batch_free(&b);
    }
}

static void test_buf(void) {
    dkb_buf buf = {0};
    CHECK(dkb__buf_reserve(&buf, 0) == 0, "reserve 0");
    CHECK(dkb__buf_reserve(&buf, 10) == 0 && buf.cap >= 10, "reserve 10");
    buf.len = 10;
    CHECK(dkb__buf_reserve(&buf, 100000) == 0 && buf.cap >= 100010, "reserve more");
    CHECK(dkb__buf_reserve(&buf, SIZE_MAX) == DKB_ENOMEM, "reserve SIZE_MAX");
    dkb__buf_free(&buf);
    CHECK(buf.data == NULL && buf.len == 0 && buf.cap == 0, "free resets");
    dkb__buf_free(&buf);
}

int main(void) {
    test_edges();
    test_random();
    test_tight_strings();
    test_small_batches();
    test_buf();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_tbl_format: all checks passed\n");
    return 0;
}
