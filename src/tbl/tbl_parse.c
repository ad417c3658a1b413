/* tbl_parse.c: strict, fast parser of dbgen .tbl lines into column batches.
 *
 * Each line is located with memchr('\n') first; every field scan then stops
 * at that newline by itself (a digit loop ends at any non-digit, memchr for
 * '|' is bounded by the line end), so the parser never reads past len.
 * Fields are parsed on a fast path; when a field does not parse, a slow
 * path looks at the whole line again to explain exactly what is wrong. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/date.h"
#include "tbl/tbl.h"

/* Where the parser is, for error messages. */
typedef struct parse_ctx {
    const char *file;
    long long line;
    const dkb_table_def *t;
    dkb_error *err;
} parse_ctx;

static bool is_digit(char ch) { return (unsigned char)(ch - '0') < 10; }

/* Copy field text s[0, n) into out as a short printable quote. */
static void quote(const char *s, size_t n, char *out, size_t cap) {
    size_t max = cap - 4, j = 0;
    for (size_t i = 0; i < n && j < max; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[j++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (n > max) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = '\0';
}

static int field_fail(const parse_ctx *x, int code, int c, const char *what, const char *s,
                      size_t n) {
    char q[48];
    quote(s, n, q, sizeof q);
    return dkb_fail(x->err, code, "%s:%lld: field %d (%s): %s: '%s'", x->file, x->line, c + 1,
                    x->t->cols[c].name, what, q);
}

/* Number of fields on line [p, eol): '|'-terminated ones plus trailing text. */
static int count_fields(const char *p, const char *eol) {
    int n = 0;
    const char *q = p;
    for (const char *bar; (bar = memchr(q, '|', (size_t)(eol - q))) != NULL; q = bar + 1) n++;
    return n + (q < eol);
}

/* Field c starting at q has no '|' before the line end: a count problem. */
static int missing_fail(const parse_ctx *x, int c, const char *p, const char *eol) {
    int have = count_fields(p, eol), want = x->t->ncols;
    if (have >= want)
        return dkb_fail(x->err, DKB_EPARSE, "%s:%lld: field %d (%s): missing trailing '|'",
                        x->file, x->line, c + 1, x->t->cols[c].name);
    return dkb_fail(x->err, DKB_EPARSE,
                    "%s:%lld: field %d (%s): missing (line has %d fields, expected %d)", x->file,
                    x->line, have + 1, x->t->cols[have].name, have, want);
}

/* Slow path for an INT field at q that the fast path rejected. */
static int int_fail(const parse_ctx *x, int c, const char *q, const char *p, const char *eol) {
    const char *bar = memchr(q, '|', (size_t)(eol - q));
    if (!bar) return missing_fail(x, c, p, eol);
    size_t n = (size_t)(bar - q);
    const char *s = q + (n > 0 && *q == '-');
    bool digits = s < bar;
    for (const char *d = s; d < bar; d++) digits = digits && is_digit(*d);
    if (!digits) return field_fail(x, DKB_EPARSE, c, "not an integer", q, n);
    return field_fail(x, DKB_ERANGE, c, "integer out of range", q, n);
}

/* Slow path for a DECIMAL field. */
static int dec_fail(const parse_ctx *x, int c, const char *q, const char *p, const char *eol) {
    const char *bar = memchr(q, '|', (size_t)(eol - q));
    if (!bar) return missing_fail(x, c, p, eol);
    size_t n = (size_t)(bar - q);
    const char *s = q + (n > 0 && *q == '-');
    const char *d = s;
    while (d < bar && is_digit(*d)) d++;
    size_t ndig = (size_t)(d - s), nfrac = 0;
    bool ok = ndig > 0;
    if (ok && d < bar && *d == '.') {
        const char *f = ++d;
        while (d < bar && is_digit(*d)) d++;
        nfrac = (size_t)(d - f);
        ok = nfrac > 0;
    }
    if (!ok || d != bar) return field_fail(x, DKB_EPARSE, c, "not a decimal", q, n);
    if (nfrac > 2) return field_fail(x, DKB_EPARSE, c, "more than 2 decimal places", q, n);
    return field_fail(x, DKB_ERANGE, c, "decimal out of range", q, n);
}

static int date_fail(const parse_ctx *x, int c, const char *q, const char *p, const char *eol,
                     bool shape_ok) {
    const char *bar = memchr(q, '|', (size_t)(eol - q));
    if (!bar) return missing_fail(x, c, p, eol);
    size_t n = (size_t)(bar - q);
    if (shape_ok && n == 10) return field_fail(x, DKB_EPARSE, c, "invalid date", q, n);
    return field_fail(x, DKB_EPARSE, c, "not a date (YYYY-MM-DD)", q, n);
}

/* Fast INT parse: [-]digits then '|'. Returns the position after the '|',
 * or NULL (caller takes the slow path). */
static inline const char *parse_int(const char *q, int64_t *out) {
    bool neg = *q == '-';
    const char *s = q + neg, *d = s;
    uint64_t u = 0;
    while (is_digit(*d)) u = u * 10 + (uint64_t)(*d++ - '0');
    size_t nd = (size_t)(d - s);
    if (nd == 0 || nd > 19 || *d != '|') return NULL;
    if (u > (uint64_t)INT64_MAX + neg) return NULL;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return d + 1;
}

/* Fast DECIMAL parse: [-]digits[.d[d]] then '|', in hundredths. */
static inline const char *parse_dec(const char *q, int64_t *out) {
    bool neg = *q == '-';
    const char *s = q + neg, *d = s;
    uint64_t u = 0;
    while (is_digit(*d)) u = u * 10 + (uint64_t)(*d++ - '0');
    size_t nd = (size_t)(d - s);
    if (nd == 0 || nd > 17) return NULL;
    uint64_t frac = 0;
    if (*d == '.') {
        d++;
        if (!is_digit(*d)) return NULL;
        frac = (uint64_t)(*d++ - '0') * 10;
        if (is_digit(*d)) frac += (uint64_t)(*d++ - '0');
    }
    if (*d != '|') return NULL;
    uint64_t v = u * 100 + frac; /* < 10^19, no wrap */
    if (v > (uint64_t)INT64_MAX + neg) return NULL;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return d + 1;
}

static int days_in_month(int y, int m) {
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return dm[m - 1] + (m == 2 && leap);
}

/* Fast DATE parse of YYYY-MM-DD| (q + 11 <= eol + 1 checked by caller).
 * *shape tells the slow path whether the text looked like a date. */
static inline const char *parse_date(const char *q, int64_t *out, bool *shape) {
    *shape = false;
    for (int i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? q[i] != '-' : !is_digit(q[i])) return NULL;
    if (q[10] != '|') return NULL;
    *shape = true;
    int y = (q[0] - '0') * 1000 + (q[1] - '0') * 100 + (q[2] - '0') * 10 + (q[3] - '0');
    int m = (q[5] - '0') * 10 + (q[6] - '0');
    int d = (q[8] - '0') * 10 + (q[9] - '0');
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return NULL;
    *out = dkb__days_from_civil(y, m, d);
    return q + 11;
}

/* Undo a half-appended row: string columns back to `row` strings. */
static void rollback(dkb_batch *b, size_t row) {
    for (int c = 0; c < b->table->ncols; c++)
        if (b->col[c].off) b->col[c].bytes_len = b->col[c].off[row];
}

/* Parse the line [p, eol) into row `row` of b. */
static int parse_line(const parse_ctx *x, const char *p, const char *eol, dkb_batch *b, size_t row) {
    const dkb_table_def *t = x->t;
    const char *q = p;
    for (int c = 0; c < t->ncols; c++) {
        dkb_batch_col *k = &b->col[c];
        const char *next;
        switch (t->cols[c].type) {
        case DKB_TYPE_INT:
            next = parse_int(q, &k->v[row]);
            if (!next) return int_fail(x, c, q, p, eol);
            break;
        case DKB_TYPE_DECIMAL:
            next = parse_dec(q, &k->v[row]);
            if (!next) return dec_fail(x, c, q, p, eol);
            break;
        case DKB_TYPE_DATE: {
            bool shape = false;
            next = eol - q >= 11 ? parse_date(q, &k->v[row], &shape) : NULL;
            if (!next) return date_fail(x, c, q, p, eol, shape);
            break;
        }
        default: {
            const char *bar = memchr(q, '|', (size_t)(eol - q));
            if (!bar) return missing_fail(x, c, p, eol);
            int rc = dkb__batch_put_str(b, c, row, q, (size_t)(bar - q));
            if (rc)
                return dkb_fail(x->err, rc, "%s:%lld: field %d (%s): %s", x->file, x->line, c + 1,
                                t->cols[c].name,
                                rc == DKB_ENOMEM ? "out of memory" : "batch text exceeds 4 GiB");
            next = bar + 1;
        }
        }
        q = next;
    }
    if (q + 1 == eol && *q == '\r')
        return dkb_fail(x->err, DKB_EPARSE, "%s:%lld: line ends with CR (CRLF line endings; dbgen writes LF)",
                        x->file, x->line);
    if (q != eol)
        return dkb_fail(x->err, DKB_EPARSE, "%s:%lld: too many fields (expected %d)", x->file,
                        x->line, t->ncols);
    return 0;
}

int dkb__tbl_parse(const char *text, size_t len, dkb_batch *b, const char *file,
                   int64_t first_line, dkb_error *err) {
    if (!b || !b->table || (!text && len)) return dkb_fail(err, DKB_EINVAL, "tbl parse: no batch or text");
    if (len == 0) return 0;
    parse_ctx x = {file ? file : "<input>", (long long)first_line, b->table, err};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            return dkb_fail(err, DKB_EPARSE, "%s:%lld: last line does not end with a newline",
                            x.file, x.line);
        if (b->nrows >= b->cap)
            return dkb_fail(err, DKB_EINVAL, "%s:%lld: batch is full (%zu rows)", x.file, x.line,
                            b->cap);
        int rc = parse_line(&x, p, eol, b, b->nrows);
        if (rc) {
            rollback(b, b->nrows);
            return rc;
        }
        b->nrows++;
        x.line++;
        p = eol + 1;
    }
    return 0;
}
