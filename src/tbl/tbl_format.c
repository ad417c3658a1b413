/* tbl_format.c: column batch -> dbgen's .tbl text (tbl.h), without printf:
 * integers through a two-digit table, dates from a preformatted table, and
 * strings copied in 16-byte blocks into a buffer sized for the worst case. */
#include <pthread.h>
#include <string.h>

#include "common/date.h"
#include "dkb/error.h"
#include "tbl/tbl.h"

static const char pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Dates from 1950-01-01 to 2049-12-31, preformatted. */
#define DATE_FIRST (-7305) /* 1950-01-01 */
#define DATE_COUNT 36525
static char date_text[DATE_COUNT][10];
static pthread_once_t date_once = PTHREAD_ONCE_INIT;

/* The most bytes one numeric field takes ("-92233720368547758.08"). */
#define NUM_MAX 24
/* Strings are copied as one STR_BLOCK-byte block, then 16-byte blocks, so
 * a copy may write up to SLACK bytes past the string (which is why the
 * output buffer gets SLACK bytes more than the text needs). */
#define STR_BLOCK 48
#define SLACK 64

enum { K_INT, K_DEC, K_WHOLE, K_DATE, K_STR };

static const uint64_t pow10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull,
};

/* Number of decimal digits of v: from its bit length, then one compare. */
static inline int digits(uint64_t v) {
    int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12; /* 1233 / 4096 ~ log10(2) */
    return t + (v >= pow10[t]) + (v == 0);
}

static inline char *put_u64(char *p, uint64_t v) {
    char *end = p + digits(v), *q = end;
    while (v >= 100) {
        q -= 2;
        memcpy(q, pairs + (v % 100) * 2, 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(q - 2, pairs + v * 2, 2);
    else
        q[-1] = (char)('0' + v);
    return end;
}

static inline uint64_t magnitude(int64_t v) { return v < 0 ? 0u - (uint64_t)v : (uint64_t)v; }

static inline char *put_i64(char *p, int64_t v) {
    if (v < 0) *p++ = '-';
    return put_u64(p, magnitude(v));
}

/* Hundredths as [-]D.DD. */
static inline char *put_dec(char *p, int64_t v) {
    if (v < 0) *p++ = '-';
    uint64_t m = magnitude(v);
    p = put_u64(p, m / 100);
    *p = '.';
    memcpy(p + 1, pairs + (m % 100) * 2, 2);
    return p + 3;
}

static char *put_ymd(char *p, int y, int m, int d) {
    if (y < 0) {
        *p++ = '-';
        y = -y;
    }
    if (y < 1000) *p++ = '0';
    if (y < 100) *p++ = '0';
    if (y < 10) *p++ = '0';
    p = put_u64(p, (uint64_t)y);
    *p = '-';
    memcpy(p + 1, pairs + m * 2, 2);
    p[3] = '-';
    memcpy(p + 4, pairs + d * 2, 2);
    return p + 6;
}

static void date_init(void) {
    for (int i = 0; i < DATE_COUNT; i++) {
        int y, m, d;
        dkb__civil_from_days(DATE_FIRST + i, &y, &m, &d);
        put_ymd(date_text[i], y, m, d);
    }
}

static inline char *put_date(char *p, int64_t days) {
    uint64_t i = (uint64_t)(days - DATE_FIRST);
    if (i < DATE_COUNT) {
        memcpy(p, date_text[i], 10);
        return p + 10;
    }
    /* Far dates: day numbers beyond what the calendar code takes are
     * clamped (a valid batch holds int32 days). */
    const int64_t lim = (int64_t)1 << 30;
    int32_t z = (int32_t)(days < -lim ? -lim : days > lim ? lim : days);
    int y, m, d;
    dkb__civil_from_days(z, &y, &m, &d);
    return put_ymd(p, y, m, d);
}

/* What the row loop needs of a column, packed. */
typedef struct field {
    int kind;
    const int64_t *v;
    const uint32_t *off;
    const char *bytes;
    size_t cap;      /* bytes allocated: block copies must stay below */
} field;

int dkb__tbl_format(const dkb_batch *b, dkb_buf *out) {
    const dkb_table_def *t = b->table;
    const size_t n = b->nrows;
    if (!t || n == 0) return 0;
    field f[DKB_MAX_COLUMNS];
    const int nc = t->ncols;
    size_t need = n + SLACK; /* newlines */
    for (int c = 0; c < nc; c++) {
        const dkb_column_def *cd = &t->cols[c];
        const dkb_batch_col *k = &b->col[c];
        switch (cd->type) {
        case DKB_TYPE_INT: f[c].kind = K_INT; break;
        case DKB_TYPE_DECIMAL: f[c].kind = (cd->flags & DKB_COL_WHOLE) ? K_WHOLE : K_DEC; break;
        case DKB_TYPE_DATE: f[c].kind = K_DATE; break;
        default: f[c].kind = K_STR; break;
        }
        f[c].v = k->v;
        f[c].off = k->off;
        f[c].bytes = k->bytes;
        f[c].cap = k->bytes_cap;
        if (f[c].kind == K_STR)
            need += n + (k->off[n] - k->off[0]);
        else
            need += n * (NUM_MAX + 1);
    }
    if (dkb__buf_reserve(out, need)) return DKB_ENOMEM;
    pthread_once(&date_once, date_init);

    char *p = out->data + out->len;
    for (size_t r = 0; r < n; r++) {
        for (const field *k = f; k < f + nc; k++) {
            switch (k->kind) {
            case K_INT: p = put_i64(p, k->v[r]); break;
            case K_DEC: p = put_dec(p, k->v[r]); break;
            case K_WHOLE: p = put_i64(p, k->v[r] / 100); break;
            case K_DATE: p = put_date(p, k->v[r]); break;
            default: {
                size_t o = k->off[r], e = k->off[r + 1];
                const char *s = k->bytes + o;
                if (e + STR_BLOCK <= k->cap) {
                    memcpy(p, s, STR_BLOCK);
                    for (size_t i = STR_BLOCK; i < e - o; i += 16) memcpy(p + i, s + i, 16);
                } else {
                    memcpy(p, s, e - o);
                }
                p += e - o;
                break;
            }
            }
            *p++ = '|';
        }
        *p++ = '\n';
    }
    out->len = (size_t)(p - out->data);
    return 0;
}
