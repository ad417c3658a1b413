/* translate_stats.c: what the translator knows about values without
 * reading them on the backend: the range of a store column (its minimum
 * and maximum) and whether a free-text store column holds distinct
 * strings, both computed on the host from the store's mapped files once
 * per column and process (as DuckDB's planner keeps its statistics), and
 * the bounds that follow from them for the tensors a run derives from
 * store columns (gathers and compresses of them stay within the column's
 * range). A join on several columns packs its keys with these bounds
 * instead of reducing every key tensor to its minimum and maximum and
 * copying those to the host (4 reductions and 4 host reads per column);
 * GROUP BY a free-text store column with distinct strings groups its row
 * numbers instead of dense host ids of the strings. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sql/translate_internal.h"

/* ---- per process: the store columns seen ---- */

#define MAX_STATS 512

typedef struct col_stats {
    const void *data;   /* the column's main array (mapped) */
    int64_t rows;
    uint32_t crc[2];    /* its files' crc32 and sizes: the same contents */
    uint64_t bytes[2];
    int has_range;      /* 1: lo..hi below */
    int64_t lo, hi;
    int distinct;       /* TEXT: -1 not known yet, 0 no, 1 every string distinct */
    int increasing;     /* integers (with the range): 1 when every value is above the one before */
} col_stats;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static col_stats g_stats[MAX_STATS];
static int g_nstats;

/* The entry of column c (made when new; NULL when the table is full). Under g_lock. */
static col_stats *stats_of(const dkb_store_column *c) {
    const void *data = dkb_column_data(c);
    int64_t rows = dkb_column_rows(c);
    uint32_t crc[2] = {0, 0};
    uint64_t bytes[2] = {0, 0};
    for (int i = 0; i < 2 && i < dkb_column_nfiles(c); i++) {
        const dkb_store_file *f = dkb_column_file(c, i);
        crc[i] = f->crc32, bytes[i] = f->bytes;
    }
    for (int i = 0; i < g_nstats; i++) {
        col_stats *s = &g_stats[i];
        if (s->data == data && s->rows == rows && s->crc[0] == crc[0] && s->crc[1] == crc[1] &&
            s->bytes[0] == bytes[0] && s->bytes[1] == bytes[1])
            return s;
    }
    if (g_nstats == MAX_STATS) return NULL;
    col_stats *s = &g_stats[g_nstats++];
    *s = (col_stats){.data = data, .rows = rows, .has_range = -1, .distinct = -1};
    memcpy(s->crc, crc, sizeof crc), memcpy(s->bytes, bytes, sizeof bytes);
    return s;
}

static bool store_range(const dkb_store_column *c, int64_t *lo, int64_t *hi, bool *inc) {
    if (inc) *inc = false;
    dkb_type_t ty = dkb_column_type(c);
    if (ty == DKB_TYPE_TEXT) return false;
    int64_t rows = dkb_column_rows(c);
    if (rows <= 0) return false;
    pthread_mutex_lock(&g_lock);
    col_stats *s = stats_of(c);
    if (s && s->has_range < 0) {
        int64_t l = INT64_MAX, h = INT64_MIN;
        const int32_t *i32 = dkb_column_i32(c);
        const int64_t *i64 = dkb_column_i64(c);
        const uint8_t *u8 = dkb_column_u8(c);
        s->has_range = 1;
        int up = i32 || i64;
        if (i32)
            for (int64_t r = 0; r < rows; r++) {
                l = i32[r] < l ? i32[r] : l, h = i32[r] > h ? i32[r] : h;
                up &= r == 0 || i32[r] > i32[r - 1];
            }
        else if (i64)
            for (int64_t r = 0; r < rows; r++) {
                l = i64[r] < l ? i64[r] : l, h = i64[r] > h ? i64[r] : h;
                up &= r == 0 || i64[r] > i64[r - 1];
            }
        else if (u8)
            for (int64_t r = 0; r < rows; r++) l = u8[r] < l ? u8[r] : l, h = u8[r] > h ? u8[r] : h;
        else
            s->has_range = 0;
        s->increasing = up;
        s->lo = l, s->hi = h;
    }
    bool ok = s && s->has_range == 1;
    if (ok) *lo = s->lo, *hi = s->hi;
    if (inc) *inc = ok && s->increasing == 1;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* ---- dense check of distinct strings (host, once per column) ---- */

static uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int text_distinct(const dkb_store_column *c) {
    const int64_t *off = dkb_column_text_offsets(c);
    const char *bytes = dkb_column_text_bytes(c, NULL);
    int64_t n = dkb_column_rows(c);
    if (!off || !bytes || n < 0) return 0;
    int64_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    int64_t *slot = malloc((size_t)cap * sizeof *slot);
    if (!slot) return -1;
    memset(slot, 0xff, (size_t)cap * sizeof *slot);
    int distinct = 1;
    for (int64_t r = 0; r < n && distinct; r++) {
        const char *p = bytes + off[r];
        size_t len = (size_t)(off[r + 1] - off[r]);
        for (int64_t k = (int64_t)(hash_bytes(p, len) & (uint64_t)(cap - 1));; k = (k + 1) & (cap - 1)) {
            int64_t q = slot[k];
            if (q < 0) {
                slot[k] = r;
                break;
            }
            if ((size_t)(off[q + 1] - off[q]) == len && !memcmp(bytes + off[q], p, len)) {
                distinct = 0;
                break;
            }
        }
    }
    free(slot);
    return distinct;
}

static bool store_text_distinct(const dkb_store_column *c) {
    if (dkb_column_type(c) != DKB_TYPE_TEXT) return false;
    pthread_mutex_lock(&g_lock);
    col_stats *s = stats_of(c);
    if (s && s->distinct < 0) s->distinct = text_distinct(c);
    bool ok = s && s->distinct == 1;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* ---- per run: the tensors with known bounds ---- */

static bool is_int(dkb_tp_dtype d) {
    return d == DKB_TP_BOOL || d == DKB_TP_U8 || d == DKB_TP_I8 || d == DKB_TP_I16 || d == DKB_TP_I32 ||
           d == DKB_TP_I64;
}

void tr_bound_set(tr_ctx *x, const dkb_tensor *t, int64_t lo, int64_t hi) {
    if (!t || !is_int(t->dtype) || x->nbound == TR_MAX_BOUND) return;
    x->bound[x->nbound++] = (struct tr_bound){t->data, t->n, lo, hi};
}

bool tr_bound_get(tr_ctx *x, const dkb_tensor *t, int64_t *lo, int64_t *hi) {
    if (!t || !is_int(t->dtype)) return false;
    for (int i = 0; i < x->nbound; i++)
        if (x->bound[i].data == t->data && x->bound[i].n == t->n) {
            *lo = x->bound[i].lo, *hi = x->bound[i].hi;
            return true;
        }
    return false;
}

void tr_bound_derive(tr_ctx *x, const dkb_tensor *from, const dkb_tensor *to, bool with_zero) {
    int64_t lo, hi;
    if (!to || !tr_bound_get(x, from, &lo, &hi)) return;
    if (with_zero) lo = lo < 0 ? lo : 0, hi = hi > 0 ? hi : 0;
    tr_bound_set(x, to, lo, hi);
}

void tr_store_column_seen(tr_ctx *x, const dkb_store_column *c, const dkb_tensor *t) {
    if (!t) return;
    int64_t lo, hi;
    bool inc;
    if (store_range(c, &lo, &hi, &inc)) tr_bound_set(x, t, lo, hi);
    if (inc) tr_distinct_set(x, t);
    if (dkb_column_type(c) == DKB_TYPE_TEXT && x->nstext < TR_MAX_BOUND)
        x->stext[x->nstext++] = (struct tr_stext){t->data, t->n, c};
}

bool tr_distinct_text(tr_ctx *x, const dkb_tensor *t) {
    if (!t || t->dtype != DKB_TP_STR) return false;
    for (int i = 0; i < x->nstext; i++)
        if (x->stext[i].data == t->data && x->stext[i].n == t->n) return store_text_distinct(x->stext[i].col);
    return false;
}

/* ---- per run: the tensors whose values are all distinct ---- */

void tr_distinct_set(tr_ctx *x, const dkb_tensor *t) {
    if (!t || !is_int(t->dtype) || tr_distinct_get(x, t)) return;
    int cap = (int)(sizeof x->dist / sizeof x->dist[0]);
    x->dist[x->ndist < cap ? x->ndist++ : (int)(t->n % cap)] = (struct tr_dist){t->data, t->n};
}

bool tr_distinct_get(tr_ctx *x, const dkb_tensor *t) {
    if (!t || !is_int(t->dtype)) return false;
    if (t->n <= 1) return true;
    for (int i = 0; i < x->ndist; i++)
        if (x->dist[i].data == t->data && x->dist[i].n == t->n) return true;
    return false;
}

void tr_distinct_derive(tr_ctx *x, const dkb_tensor *from, const dkb_tensor *idx, const dkb_tensor *to) {
    int64_t lo, hi;
    if (!to || !tr_distinct_get(x, from)) return;
    if (idx && !(tr_distinct_get(x, idx) && tr_bound_get(x, idx, &lo, &hi) && lo >= 0)) return;
    tr_distinct_set(x, to);
}
