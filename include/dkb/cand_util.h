/* cand_util.h: the optional candidate toolkit, header-only, shipped beside
 * candidate.h: what TPC-H candidates keep writing again and the harness's
 * ABI does not give them. A candidate needs nothing but candidate.h; one
 * that includes "dkb/cand_util.h" (C, OpenMP or CUDA: the date and decimal
 * helpers are host and device functions under nvcc) gets:
 *
 *   dates    dkb_days_from_civil, dkb_civil_from_days, dkb_add_months (SQL's
 *            date + interval 'k' month: the day clamped to the month's end),
 *            dkb_add_years, dkb_year_of (days since 1970-01-01, as the store
 *            holds them);
 *   decimals dkb_rescale (a value at one scale exactly at another), dkb_pow10;
 *   search   dkb_lower_bound_i32 / _i64 over a sorted array, dkb_gallop_i32
 *            (the same, forward from a position), dkb_max_i32 (a dense key
 *            map's size), dkb_chunk_runs (a chunk of parent rows and its
 *            children's run, e.g. orders and their lineitems);
 *   select   dkb_select_bits (the rows whose key has its bit set in a
 *            bitmap: a semi-join on a dense key, AVX-512 where built with it),
 *            dkb_select_range_i32 (the rows whose value is in [lo, hi)),
 *            dkb_select_mask (the set bytes of a byte mask, 8 at a time);
 *   runs     dkb_walk_init / dkb_walk_to / dkb_walk_guess: one chunk's child
 *            runs (an order's lineitems) walked forward parent by parent;
 *   top-k    dkb_topk_insert (a small sorted array of the k best: ORDER BY
 *            ... LIMIT k);
 *   strings  dkb_like (SQL LIKE), dkb_find (a substring, AVX2 where built
 *            with it; host only), dkb_find_row (the next row of a text
 *            column holding a substring: one scan of its bytes);
 *   inputs   DKB_BIND_COLS (a table's columns by a spec string:
 *            "l_orderkey:i32 l_discount:dec2 l_returnflag:dict"),
 *            DKB_BIND_PARAMS, DKB_BIND_RES (the same for parameters and
 *            result columns): found and type-checked in one call each;
 *   results  dkb_res_col (a declared result column by name and type),
 *            dkb_put_str / dkb_put_text / dkb_put_dict / dkb_put_strcol
 *            (append a string to a STRING column), dkb_put_dec (a decimal
 *            at the column's scale), dkb_res_rows (check and set the row count).
 *
 * Everything is static inline: a candidate still links nothing of ours.
 * The CUDA device helpers are in cand_cuda.cuh. */
#ifndef DKB_CAND_UTIL_H
#define DKB_CAND_UTIL_H

#include <stdarg.h> /* defines: va_list (the dkb_bind_*_spec tables) */
#include <stdint.h>
#include <stdio.h>  /* defines: fprintf (a binding's failure, named on stderr) */
#include <string.h>

#include "dkb/candidate.h"

#if defined(__AVX2__) && !defined(__CUDACC__)
#include <immintrin.h> /* defines: _mm256_* (dkb_find) */
#endif

#if defined(__CUDACC__)
#define DKB_CAND_HD __host__ __device__ __forceinline__
#else
#define DKB_CAND_HD inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- dates: int32/int64 days since 1970-01-01, proleptic Gregorian ---- */

/* The day number of y-m-d (m 1..12, d 1..31). H. Hinnant's algorithm. */
static DKB_CAND_HD int64_t dkb_days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* y-m-d of day number z. */
static DKB_CAND_HD void dkb_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static DKB_CAND_HD int dkb_is_leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

/* days + interval 'k' month, as SQL: the day clamped to the new month's
 * last day (Jan 31 + 1 month = Feb 28 or 29). k may be negative. */
static DKB_CAND_HD int64_t dkb_add_months(int64_t days, int k) {
    int64_t y;
    int m, d;
    dkb_civil_from_days(days, &y, &m, &d);
    const int64_t months = y * 12 + (m - 1) + k;
    y = months / 12 - (months % 12 < 0);
    m = (int)(months - y * 12 + 1);
    const int last = m == 2 ? 28 + dkb_is_leap(y) : 30 + ((m + (m >= 8)) & 1);
    return dkb_days_from_civil(y, m, d < last ? d : last);
}

/* days + interval 'k' year (Feb 29 becomes Feb 28 in a common year). */
static DKB_CAND_HD int64_t dkb_add_years(int64_t days, int k) { return dkb_add_months(days, 12 * k); }

/* The year of day number z (EXTRACT(YEAR FROM ...)). */
static DKB_CAND_HD int64_t dkb_year_of(int64_t z) {
    int64_t y;
    int m, d;
    dkb_civil_from_days(z, &y, &m, &d);
    return y;
}

/* ---- decimals: int64 values at a scale (2: hundredths) ---- */

/* 10^k for k in 0..18; 0 outside. */
static DKB_CAND_HD int64_t dkb_pow10(int k) {
    int64_t p = 1;
    if (k < 0 || k > 18) return 0;
    while (k--) p *= 10;
    return p;
}

/* v at scale `from` exactly at scale `to` into *out: 1, or 0 when it cannot
 * be (overflow, or digits lost going down). */
static DKB_CAND_HD int dkb_rescale(int64_t v, int from, int to, int64_t *out) {
    for (; from < to; from++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10) return 0;
        v *= 10;
    }
    for (; from > to; from--) {
        if (v % 10) return 0;
        v /= 10;
    }
    *out = v;
    return 1;
}

/* ---- search ---- */

/* The first index in a[0..n) (ascending) whose value is >= key; n when none. */
static DKB_CAND_HD int64_t dkb_lower_bound_i32(const int32_t *a, int64_t n, int64_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static DKB_CAND_HD int64_t dkb_lower_bound_i64(const int64_t *a, int64_t n, int64_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The first index in [lo, hi) of ascending a whose value is >= key; hi when
 * none. Gallops forward from lo, then searches: cheap when the answer is near
 * lo (walking one sorted key column in step with another). */
static DKB_CAND_HD int64_t dkb_gallop_i32(const int32_t *a, int64_t lo, int64_t hi, int64_t key) {
    if (lo >= hi || a[lo] >= key) return lo;
    int64_t step = 1, base = lo;
    while (base + step < hi && a[base + step] < key) {
        base += step;
        step <<= 1;
    }
    int64_t l = base + 1, h = base + step < hi ? base + step : hi;
    while (l < h) {
        const int64_t mid = l + (h - l) / 2;
        if (a[mid] < key) l = mid + 1;
        else h = mid;
    }
    return l;
}

/* The largest of a[0..n) and 0 (0 when n is 0): the last index of a dense
 * map keyed by a's values (negative keys are the caller's to skip). */
static DKB_CAND_HD int64_t dkb_max_i32(const int32_t *a, int64_t n) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
    return m;
}

/* Chunk c of nchunks of a parent table's rows [0, np) (keys pk, ascending)
 * and the run of child rows that join it (keys ck[0..nc), ascending, e.g.
 * orders and lineitem by orderkey): parent rows [*p0, *p1) (the even split
 * c * np / nchunks) and child rows [*c0, *c1), those with keys from pk[*p0]
 * up to, not including, the next chunk's first key (to nc for the last
 * chunk). 0 when the chunk has no parent rows (*c0, *c1 then unset), else 1.
 * Two binary searches: chunks can be cut independently, one per thread. */
static DKB_CAND_HD int dkb_chunk_runs(const int32_t *pk, int64_t np, const int32_t *ck, int64_t nc, int64_t c,
                                      int64_t nchunks, int64_t *p0, int64_t *p1, int64_t *c0, int64_t *c1) {
    *p0 = c * np / nchunks, *p1 = (c + 1) * np / nchunks;
    if (*p0 >= *p1) return 0;
    *c0 = dkb_lower_bound_i32(ck, nc, pk[*p0]);
    *c1 = *p1 < np ? dkb_lower_bound_i32(ck, nc, pk[*p1]) : nc;
    return 1;
}

/* ---- strings (host memory) ---- */

/* s[0..n) LIKE p (p NUL-terminated; '%' any run of bytes, '_' one byte, no
 * escapes): 1 or 0. Recursive at each '%': for the short patterns of TPC-H. */
static inline int dkb_like(const char *s, int64_t n, const char *p) {
    while (*p) {
        if (*p == '%') {
            while (*p == '%') p++;
            if (!*p) return 1;
            for (int64_t i = 0; i <= n; i++)
                if (dkb_like(s + i, n - i, p)) return 1;
            return 0;
        }
        if (n == 0 || (*p != '_' && *p != *s)) return 0;
        p++, s++, n--;
    }
    return n == 0;
}

/* The first occurrence of w[0..L) starting in [p, end - L], or NULL (p when
 * L is 0). Built with AVX2 (host code only), 32 starts at a time: the first,
 * second and last bytes of w compared at once, a memcmp for the survivors;
 * then byte by byte. */
static inline const char *dkb_find(const char *p, const char *end, const char *w, size_t L) {
    if (L == 0) return p;
    if (p > end || (size_t)(end - p) < L) return NULL;
    const char *last = end - L;
#if defined(__AVX2__) && !defined(__CUDACC__)
    const size_t k = L > 1 ? 1 : 0; /* the second byte (the first again when L is 1) */
    const __m256i f = _mm256_set1_epi8(w[0]), s = _mm256_set1_epi8(w[k]), l = _mm256_set1_epi8(w[L - 1]);
    while (last - p >= 31) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
        const __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + k));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + L - 1));
        const __m256i eq = _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(a, f), _mm256_cmpeq_epi8(a1, s)),
                                            _mm256_cmpeq_epi8(b, l));
        uint32_t m = (uint32_t)_mm256_movemask_epi8(eq);
        while (m) {
            const int j = __builtin_ctz(m);
            if (memcmp(p + j, w, L) == 0) return p + j;
            m &= m - 1;
        }
        p += 32;
    }
#endif
    for (; p <= last; p++)
        if (p[0] == w[0] && memcmp(p, w, L) == 0) return p;
    return NULL;
}

/* ---- inputs: the columns a candidate reads, found and checked at once ---- */

/* The number of elements of an array. */
#define DKB_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Any type or any scale (a spec word's kind, see DKB_BIND_COLS). */
#define DKB_ANY (-1)

/* ---- results (host memory: what dkb_candidate_full fills) ---- */

/* The result column called name, when it has type `type`; else NULL. */
static inline dkb_cand_res_col *dkb_res_col(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

/* Set the result's row count: DKB_CAND_OK, or DKB_CAND_ECAP when over the
 * cap (nothing set). Fill a STRING column's rows in order from row 0, with
 * str_off[0] = 0 (dkb_put_str sets str_off[r + 1]). */
static inline int dkb_res_rows(dkb_cand_result *res, int64_t n) {
    if (n < 0 || n > res->cap) return DKB_CAND_ECAP;
    res->nrows = n;
    return DKB_CAND_OK;
}

/* Row r of STRING column col := s[0..len) (rows appended in order, from
 * str_off[r]; row 0 needs str_off[0] = 0 first). DKB_CAND_OK, or
 * DKB_CAND_ECAP when the column's bytes_cap is too small. */
static inline int dkb_put_str(dkb_cand_res_col *col, int64_t r, const char *s, int64_t len) {
    if (r == 0) col->str_off[0] = 0;
    const int64_t at = col->str_off[r];
    if (len < 0 || at + len > col->bytes_cap) return DKB_CAND_ECAP;
    memcpy(col->str_bytes + at, s, (size_t)len);
    col->str_off[r + 1] = at + len;
    col->is_null[r] = 0;
    return DKB_CAND_OK;
}

/* Row r of STRING column col := row `row` of a free-text input vector v
 * (host memory: C candidates). */
static inline int dkb_put_text(dkb_cand_res_col *col, int64_t r, const dkb_cand_vec *v, int64_t row) {
    const int64_t *off = (const int64_t *)v->data;
    return dkb_put_str(col, r, v->bytes + off[row], off[row + 1] - off[row]);
}

/* Row r of STRING column col := dictionary entry `code` of d. */
static inline int dkb_put_dict(dkb_cand_res_col *col, int64_t r, const dkb_cand_dict *d, int code) {
    if (!d || code < 0 || code >= d->size) return DKB_CAND_EINVAL;
    return dkb_put_str(col, r, d->str[code], (int64_t)d->len[code]);
}

/* Row r of STRING column col := row `row` of a string input column v,
 * whichever its encoding: free text (STR) or dictionary codes (U8 with a
 * dict). DKB_CAND_EINVAL for another type or a code outside the dict. */
static inline int dkb_put_strcol(dkb_cand_res_col *col, int64_t r, const dkb_cand_vec *v, int64_t row) {
    if (v->type == DKB_CAND_STR) return dkb_put_text(col, r, v, row);
    if (v->type == DKB_CAND_U8) return dkb_put_dict(col, r, v->dict, ((const uint8_t *)v->data)[row]);
    return DKB_CAND_EINVAL;
}

/* Row r of DECIMAL column col := v, a value at scale `from`, scaled up to
 * the column's scale (exact; the caller keeps it within __int128).
 * DKB_CAND_OK, or DKB_CAND_EINVAL (nothing written) when the column's scale
 * is below `from`: check that once before the rows. */
static inline int dkb_put_dec(dkb_cand_res_col *col, int64_t r, __int128 v, int from) {
    if (col->scale < from) return DKB_CAND_EINVAL;
    for (; from < col->scale; from++) v *= 10;
    col->dec[r] = v;
    col->is_null[r] = 0;
    return DKB_CAND_OK;
}

/* ---- text columns: rows holding a word (host memory) ---- */

/* The first row r in [row, end) of free-text column text (STR: n + 1
 * offsets, bytes) whose text holds w[0..L), or end when none; *at (when
 * not NULL) := the byte offset in text->bytes of the first occurrence in
 * that row. One dkb_find over the bytes of rows [row, end) instead of one
 * call per row: a hit is mapped to its row by walking the offsets forward;
 * one that runs past its row's end is no hit (the search goes on at the
 * next row). Every row holds the empty word. */
static inline int64_t dkb_find_row(const dkb_cand_vec *text, int64_t row, int64_t end, const char *w, size_t L,
                                   int64_t *at) {
    const int64_t *off = (const int64_t *)text->data;
    const char *base = text->bytes, *stop = base + off[end < row ? row : end];
    if (row >= end) return end;
    if (L == 0) {
        if (at) *at = off[row];
        return row;
    }
    const char *p = base + off[row];
    for (;;) {
        const char *x = dkb_find(p, stop, w, L);
        if (!x) return end;
        const int64_t pos = x - base;
        while (off[row + 1] <= pos) row++;
        if (pos + (int64_t)L <= off[row + 1]) {
            if (at) *at = pos;
            return row;
        }
        p = base + off[row + 1]; /* it ran into the next row, as would any later start in this row */
    }
}

/* ---- selection: rows whose key is in a bitmap (host memory) ---- */

/* The indices i of [0, n) whose key[i] lies in [0, nbits) and has its bit
 * set in bits (64-bit words: key k is bit k & 63 of word k >> 6), in
 * ascending order into sel[0..m) (sel must hold n + 16 entries: whole
 * vectors are stored); returns m. A semi-join of a key column with a set
 * of dense keys, branch-free: built with AVX-512 (host code), 16 keys at a
 * time (a gather of their bitmap words, a compress of the hits), then one
 * by one. */
static inline int dkb_select_bits(const int32_t *key, int n, const uint64_t *bits, int64_t nbits, int32_t *sel) {
    int m = 0, i = 0;
    const uint32_t *w32 = (const uint32_t *)(const void *)bits; /* little-endian: word k >> 5 holds bit k & 31 */
#if defined(__AVX512F__) && defined(__AVX2__) && !defined(__CUDACC__)
    if (nbits <= INT32_MAX) {
        const __m512i vn = _mm512_set1_epi32((int)nbits), low = _mm512_set1_epi32(31), one = _mm512_set1_epi32(1);
        __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        for (; i + 16 <= n; i += 16, idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16))) {
            const __m512i k = _mm512_loadu_si512((const void *)(key + i));
            const __mmask16 in = _mm512_cmplt_epu32_mask(k, vn); /* negative keys are large unsigned */
            const __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), in, _mm512_srli_epi32(k, 5), w32, 4);
            const __m512i bit = _mm512_and_si512(_mm512_srlv_epi32(w, _mm512_and_si512(k, low)), one);
            const __mmask16 hit = _mm512_mask_test_epi32_mask(in, bit, bit);
            _mm512_storeu_si512((void *)(sel + m), _mm512_maskz_compress_epi32(hit, idx));
            m += __builtin_popcount((unsigned)hit);
        }
    }
#endif
    for (; i < n; i++) {
        const uint64_t k = (uint32_t)key[i], in = k < (uint64_t)nbits, kk = in ? k : 0;
        sel[m] = i;
        m += (int)(((w32[kk >> 5] >> (kk & 31)) & 1) & in);
    }
    return m;
}

/* The indices i of [0, n) with mask[i] != 0 (0/1 bytes, n + 8 of them: the
 * 8 past n are cleared here), ascending, into sel[0..m); returns m. The
 * mask is read 8 bytes at a time and only the set ones are visited: for a
 * filter computed as a byte mask (vector code) that keeps few rows. */
static inline int dkb_select_mask(uint8_t *mask, int n, int32_t *sel) {
    int m = 0;
    if (n <= 0) return 0;
    memset(mask + n, 0, 8);
    for (int j = 0; j < n; j += 8) {
        uint64_t w;
        memcpy(&w, mask + j, 8);
        for (; w; w &= w - 1) sel[m++] = j + (__builtin_ctzll(w) >> 3);
    }
    return m;
}

/* The indices i of [0, n) with lo <= v[i] < hi, in ascending order into
 * sel[0..m) (sel holds n + 16 entries); returns m. Branch-free: a byte mask
 * (vector code), then its set bytes 8 at a time (a date window, typically:
 * a few rows in a block). */
static inline int dkb_select_range_i32(const int32_t *v, int n, int64_t lo, int64_t hi, int32_t *sel) {
    enum { STEP = 256 };
    int m = 0;
    if (hi <= lo || n <= 0) return 0;
    if (lo < INT32_MIN) lo = INT32_MIN;
    if (hi > (int64_t)INT32_MAX + 1) hi = (int64_t)INT32_MAX + 1;
    const uint32_t base = (uint32_t)(int32_t)lo, width = (uint32_t)(hi - lo - 1); /* v - lo <= width */
    for (int from = 0; from < n; from += STEP) {
        const int len = n - from < STEP ? n - from : STEP;
        uint8_t mask[STEP + 8];
        for (int j = 0; j < len; j++) mask[j] = (uint32_t)v[from + j] - base <= width;
        const int k = dkb_select_mask(mask, len, sel + m);
        for (int x = 0; x < k; x++) sel[m + x] += from;
        m += k;
    }
    return m;
}

/* ---- runs: the child rows of parent rows, walked forward (e.g. orders and
 * their lineitems, both by orderkey) ---- */

/* One chunk's walk: child keys ck, the next child row j, the chunk's end,
 * and the children per parent in the chunk (x 256, for guesses). */
typedef struct dkb_walk {
    const int32_t *ck;
    int64_t j, end, per;
} dkb_walk;

/* Chunk c of nchunks as dkb_chunk_runs cuts it (parent rows [*p0, *p1) of
 * keys pk, ascending; the run of child rows with their keys, ck ascending),
 * and *w set to walk its child rows from the first: 1, or 0 when the chunk
 * has no parent rows (*w then unset). */
static inline int dkb_walk_init(dkb_walk *w, const int32_t *pk, int64_t np, const int32_t *ck, int64_t nc, int64_t c,
                                int64_t nchunks, int64_t *p0, int64_t *p1) {
    int64_t c0, c1;
    if (!dkb_chunk_runs(pk, np, ck, nc, c, nchunks, p0, p1, &c0, &c1)) return 0;
    w->ck = ck, w->j = c0, w->end = c1;
    w->per = ((c1 - c0) << 8) / (*p1 - *p0);
    return 1;
}

/* The run of child rows with key `key` (keys asked in ascending order):
 * *first := its first row, found by galloping forward from the last run;
 * returns its end (the first row past it; *first when no child has the
 * key). The walk goes on from there. */
static inline int64_t dkb_walk_to(dkb_walk *w, int64_t key, int64_t *first) {
    int64_t j = dkb_gallop_i32(w->ck, w->j, w->end, key);
    *first = j;
    while (j < w->end && w->ck[j] == key) j++;
    w->j = j;
    return j;
}

/* Walking the parents selected in sel[0..n) (rows from one base, in
 * ascending order), now at sel[x]: where the run of the parent `ahead`
 * selections later probably starts (the chunk's mean run length times the
 * parent rows between, from the walk's position): a row to prefetch, or -1
 * when there is no such selection or the guess is past the chunk. */
static inline int64_t dkb_walk_guess(const dkb_walk *w, const int32_t *sel, int n, int x, int ahead) {
    if (x + ahead >= n) return -1;
    const int64_t est = w->j + (((int64_t)(sel[x + ahead] - sel[x]) * w->per) >> 8);
    return est < w->end ? est : -1;
}

/* ---- top-k: the k best rows in a small sorted array ---- */

/* Insert the element *x (size bytes) into top[0..*n), kept sorted by
 * `before` (before(a, b): a ranks first) and at most k long: it goes in
 * when there is room or it ranks before the last, which then drops out.
 * Equal elements keep their order of arrival. O(k) per call: for LIMIT k
 * with small k, one array per chunk or thread, merged by inserting each
 * chunk's elements into one more. */
static inline void dkb_topk_insert(void *top, int *n, int k, const void *x, size_t size,
                                   int (*before)(const void *, const void *)) {
    char *t = (char *)top;
    if (k <= 0 || (*n == k && !before(x, t + (size_t)(k - 1) * size))) return;
    const int last = *n < k ? (*n)++ : k - 1; /* the slot that is free, or given up */
    int i = last;
    while (i > 0 && before(x, t + (size_t)(i - 1) * size)) i--;
    memmove(t + (size_t)(i + 1) * size, t + (size_t)i * size, (size_t)(last - i) * size);
    memcpy(t + (size_t)i * size, x, size);
}

/* ---- binding by spec: a table's columns, the parameters, the result
 * columns, each in one call ----
 *
 * A spec is a string of words "name:kind" separated by spaces, one word per
 * pointer that follows it, in order. Kinds of a table's columns:
 *   i32 i64 f64 u8 str  of that type (i64: any scale);
 *   decN                 I64 at exactly scale N (dec2: hundredths);
 *   dict                 U8 codes with a dictionary;
 *   any (or no kind)     whatever it is.
 * Parameters: str (a string), or any. Result columns: int, float, date,
 * str, dec (any scale), decN (a scale of at least N: values at scale N are
 * written scaled up to it). */

/* The next word of spec *s: its name into name[0..cap) (NUL-terminated),
 * its kind as kind[0..*klen) (empty when there is no ':'); *s moves past
 * it. 1; 0 at the spec's end; -1 when the name is empty or does not fit
 * (name and kind then empty). */
static inline int dkb_spec_word(const char **s, char *name, size_t cap, const char **kind, size_t *klen) {
    const char *p = *s, *e, *k;
    *kind = p, *klen = 0;
    if (cap) name[0] = 0;
    while (*p == ' ') p++;
    *s = p;
    if (!*p) return 0;
    for (e = p; *e && *e != ' ' && *e != ':'; e++) {}
    if (e == p || (size_t)(e - p) >= cap) return -1;
    memcpy(name, p, (size_t)(e - p));
    name[e - p] = 0;
    for (k = *e == ':' ? e + 1 : e, e = k; *e && *e != ' '; e++) {}
    *kind = k, *klen = (size_t)(e - k), *s = e;
    return 1;
}

/* kind[0..klen) is the word w (NUL-terminated); for "dec" kinds (w "dec"),
 * *digits := the scale after it, or DKB_ANY when there is none: 1 or 0. */
static inline int dkb_spec_is(const char *kind, size_t klen, const char *w, int *digits) {
    const size_t wl = strlen(w);
    if (klen < wl || memcmp(kind, w, wl) != 0) return 0;
    if (!digits) return klen == wl;
    *digits = DKB_ANY;
    if (klen == wl) return 1;
    if (klen > wl + 2) return 0;
    int d = 0;
    for (size_t i = wl; i < klen; i++) {
        if (kind[i] < '0' || kind[i] > '9') return 0;
        d = d * 10 + (kind[i] - '0');
    }
    *digits = d;
    return d <= 18;
}

/* The type, scale (DKB_ANY: any) and dictionary (1: U8 codes with one) a
 * column kind asks for: 1, or 0 for a kind that is none of the above. */
static inline int dkb_spec_col_kind(const char *kind, size_t klen, int *type, int *scale, int *dict) {
    static const struct {
        const char *w;
        int type, dict;
    } plain[] = {{"i32", DKB_CAND_I32, 0}, {"i64", DKB_CAND_I64, 0}, {"f64", DKB_CAND_F64, 0},
                 {"u8", DKB_CAND_U8, 0},   {"str", DKB_CAND_STR, 0}, {"dict", DKB_CAND_U8, 1}};
    *type = DKB_ANY, *scale = DKB_ANY, *dict = 0;
    if (klen == 0 || dkb_spec_is(kind, klen, "any", NULL)) return 1;
    for (int i = 0; i < DKB_COUNT(plain); i++)
        if (dkb_spec_is(kind, klen, plain[i].w, NULL)) {
            *type = plain[i].type, *dict = plain[i].dict;
            return 1;
        }
    if (!dkb_spec_is(kind, klen, "dec", scale) || *scale == DKB_ANY) return 0;
    *type = DKB_CAND_I64;
    return 1;
}

/* The columns of `table` that spec names (see above), then one
 * `const dkb_cand_vec **` per word, then a NULL one (DKB_BIND_COLS adds
 * it): each *out := the column, NULL when missing. DKB_CAND_OK;
 * DKB_CAND_EINVAL when a column is missing or not of its kind (a line on
 * stderr for each); DKB_CAND_EINTERNAL when the spec is malformed or names
 * more or fewer columns than there are pointers (later pointers then
 * unset). */
static inline int dkb_bind_table(const dkb_cand_db *db, const char *table, const char *spec, ...) {
    va_list ap;
    char name[64];
    const char *s = spec, *kind = spec;
    size_t kl = 0;
    int rc = DKB_CAND_OK, w, type, scale, dict;
    va_start(ap, spec);
    while ((w = dkb_spec_word(&s, name, sizeof name, &kind, &kl)) != 0) {
        const dkb_cand_vec **out = va_arg(ap, const dkb_cand_vec **);
        if (w < 0 || !out || !dkb_spec_col_kind(kind, kl, &type, &scale, &dict)) {
            fprintf(stderr, "dkb_bind_table: %s: \"%s:%.*s\": a bad spec word, or no pointer for it\n", table,
                    name, (int)kl, kind);
            va_end(ap);
            return DKB_CAND_EINTERNAL;
        }
        const dkb_cand_vec *v = *out = dkb_cand_column(db, table, name);
        if (!v || (type != DKB_ANY && (int)v->type != type) || (scale != DKB_ANY && v->scale != scale) ||
            (dict && !v->dict)) {
            fprintf(stderr, "%s.%s: %s (wanted %.*s)\n", table, name, v ? "not of the kind wanted" : "missing",
                    (int)kl, kl ? kind : "any");
            rc = DKB_CAND_EINVAL;
        }
    }
    if (va_arg(ap, const dkb_cand_vec **) != NULL) {
        fprintf(stderr, "dkb_bind_table: %s: more pointers than the spec \"%s\" names\n", table, spec);
        rc = DKB_CAND_EINTERNAL;
    }
    va_end(ap);
    return rc;
}

/* The parameters spec names (kinds: str, any), then one
 * `const dkb_cand_param **` per word and a NULL one (DKB_BIND_PARAMS adds
 * it); as dkb_bind_table. */
static inline int dkb_bind_param_spec(const dkb_cand_params *params, const char *spec, ...) {
    va_list ap;
    char name[64];
    const char *s = spec, *kind = spec;
    size_t kl = 0;
    int rc = DKB_CAND_OK, w;
    va_start(ap, spec);
    while ((w = dkb_spec_word(&s, name, sizeof name, &kind, &kl)) != 0) {
        const dkb_cand_param **out = va_arg(ap, const dkb_cand_param **);
        const int str = dkb_spec_is(kind, kl, "str", NULL);
        if (w < 0 || !out || !(str || kl == 0 || dkb_spec_is(kind, kl, "any", NULL))) {
            fprintf(stderr, "dkb_bind_param_spec: \"%s:%.*s\": a bad spec word, or no pointer for it\n", name,
                    (int)kl, kind);
            va_end(ap);
            return DKB_CAND_EINTERNAL;
        }
        const dkb_cand_param *p = *out = dkb_cand_param_find(params, name);
        if (!p || (str && !p->s)) {
            fprintf(stderr, "parameter %s: %s\n", name, p ? "not a string" : "missing");
            rc = DKB_CAND_EINVAL;
        }
    }
    if (va_arg(ap, const dkb_cand_param **) != NULL) {
        fprintf(stderr, "dkb_bind_param_spec: more pointers than the spec \"%s\" names\n", spec);
        rc = DKB_CAND_EINTERNAL;
    }
    va_end(ap);
    return rc;
}

/* The result columns spec names (kinds: int, float, date, str, dec, decN),
 * then one `dkb_cand_res_col **` per word and a NULL one (DKB_BIND_RES
 * adds it); as dkb_bind_table. */
static inline int dkb_bind_res_spec(dkb_cand_result *res, const char *spec, ...) {
    static const struct {
        const char *w;
        dkb_cand_res_type type;
    } kinds[] = {{"int", DKB_CAND_RES_INT},
                 {"float", DKB_CAND_RES_FLOAT},
                 {"date", DKB_CAND_RES_DATE},
                 {"str", DKB_CAND_RES_STRING},
                 {"dec", DKB_CAND_RES_DECIMAL}};
    va_list ap;
    char name[64];
    const char *s = spec, *kind = spec;
    size_t kl = 0;
    int rc = DKB_CAND_OK, w;
    va_start(ap, spec);
    while ((w = dkb_spec_word(&s, name, sizeof name, &kind, &kl)) != 0) {
        dkb_cand_res_col **out = va_arg(ap, dkb_cand_res_col **);
        int k = 0, digits = DKB_ANY;
        while (k < DKB_COUNT(kinds) && !dkb_spec_is(kind, kl, kinds[k].w, k == DKB_COUNT(kinds) - 1 ? &digits : NULL))
            k++;
        if (w < 0 || !out || k == DKB_COUNT(kinds)) {
            fprintf(stderr, "dkb_bind_res_spec: \"%s:%.*s\": a bad spec word, or no pointer for it\n", name,
                    (int)kl, kind);
            va_end(ap);
            return DKB_CAND_EINTERNAL;
        }
        dkb_cand_res_col *c = *out = dkb_res_col(res, name, kinds[k].type);
        if (!c || (digits != DKB_ANY && c->scale < digits)) {
            fprintf(stderr, "result column %s: %s (wanted %.*s)\n", name, c ? "of too small a scale" : "missing or of another type",
                    (int)kl, kind);
            rc = DKB_CAND_EINVAL;
        }
    }
    if (va_arg(ap, dkb_cand_res_col **) != NULL) {
        fprintf(stderr, "dkb_bind_res_spec: more pointers than the spec \"%s\" names\n", spec);
        rc = DKB_CAND_EINTERNAL;
    }
    va_end(ap);
    return rc;
}

/* One call per table, one for the parameters, one for the result:
 *   if (DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_discount:dec2", &lkey, &ldisc) ||
 *       DKB_BIND_PARAMS(params, "segment:str date", &segment, &date) ||
 *       DKB_BIND_RES(res, "l_orderkey:int revenue:dec4", &c_key, &c_rev))
 *       return DKB_CAND_EINVAL;
 * (the pointers' count is checked against the spec's words at run time). */
#define DKB_BIND_COLS(db, table, spec, ...) \
    dkb_bind_table((db), (table), (spec), __VA_ARGS__, (const dkb_cand_vec **)NULL)
#define DKB_BIND_PARAMS(params, spec, ...) \
    dkb_bind_param_spec((params), (spec), __VA_ARGS__, (const dkb_cand_param **)NULL)
#define DKB_BIND_RES(res, spec, ...) dkb_bind_res_spec((res), (spec), __VA_ARGS__, (dkb_cand_res_col **)NULL)

#ifdef __cplusplus
}
#endif

#endif
