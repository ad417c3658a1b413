/* cpu_select.c: CPU selection: compress (rows where a mask holds, any
 * dtype including STR), nonzero, gather (with -1 fill) and count. Outputs of
 * compress/nonzero are placed by per-chunk counts and a prefix sum, so their
 * order is the input order whatever the thread count. */
#include <string.h>

#include "tensor/cpu.h"

/* Selected rows per DKB__CHUNK chunk of mask: cnt[c], and their exclusive
 * prefix sums in off[c] (off[nc] = total). Scratch; NULL on failure. */
/* Nonzero bytes of m[lo, hi), 8 at a time. */
static int64_t count_nonzero(const uint8_t *m, int64_t lo, int64_t hi) {
    const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full, hi1 = 0x8080808080808080ull;
    int64_t s = 0, i = lo;
    for (; i + 8 <= hi; i += 8) {
        uint64_t w;
        memcpy(&w, m + i, 8);
        uint64_t b = ((((w & lo7) + lo7) | w) & hi1) >> 7; /* 1 per nonzero byte */
        s += (int64_t)((b * 0x0101010101010101ull) >> 56);
    }
    for (; i < hi; i++) s += m[i] != 0;
    return s;
}

static int64_t *chunk_counts(dkb_tp *tp, const char *op, const dkb_tensor *mask, int64_t **cnt_out) {
    int64_t n = mask->n, nc = dkb__nchunks(n);
    int64_t *cnt = dkb__tp_scratch(tp, op, sizeof *cnt * (size_t)(2 * nc + 2));
    if (!cnt) return NULL;
    int64_t *off = cnt + nc + 1;
    const uint8_t *m = mask->data;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n;
        cnt[c] = count_nonzero(m, lo, hi);
    }
    int64_t s = 0;
    for (int64_t c = 0; c < nc; c++) {
        off[c] = s;
        s += cnt[c];
    }
    off[nc] = s;
    *cnt_out = cnt;
    return off;
}

/* Copy the selected elements VAL(i) of chunk [lo, hi) to o[off[c]...].
 * Chunks with more than 1/64 selected go branch-free up to the last
 * selected row (never writing past the chunk's share of the output);
 * sparser ones skip 8 unselected rows at a time. */
#define COMPRESS_CHUNK(T, o, VAL)                                              \
    do {                                                                       \
        int64_t k_ = off[c];                                                   \
        if (cnt[c] * 64 > hi - lo) {                                           \
            int64_t last_ = hi - 1;                                            \
            while (last_ >= lo && !m[last_]) last_--;                          \
            for (int64_t i_ = lo; i_ <= last_; i_++) {                         \
                (o)[k_] = (T)VAL(i_);                                          \
                k_ += m[i_] != 0;                                              \
            }                                                                  \
        } else {                                                               \
            int64_t i_ = lo;                                                   \
            for (; i_ + 8 <= hi; i_ += 8) {                                    \
                uint64_t w_;                                                   \
                memcpy(&w_, m + i_, 8);                                        \
                if (!w_) continue;                                             \
                for (int64_t e_ = i_; e_ < i_ + 8; e_++)                       \
                    if (m[e_]) (o)[k_++] = (T)VAL(e_);                         \
            }                                                                  \
            for (; i_ < hi; i_++)                                              \
                if (m[i_]) (o)[k_++] = (T)VAL(i_);                             \
        }                                                                      \
    } while (0)
#define VAL_X(j) x[j]
#define VAL_I(j) (j)

#define COMPRESS(T)                                                            \
    do {                                                                       \
        const T *x = (const T *)a->data;                                       \
        T *o = (T *)r->data;                                                   \
        _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt)") for (int64_t c = 0; c < nc; c++) { \
            int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n; \
            COMPRESS_CHUNK(T, o, VAL_X);                                       \
        }                                                                      \
    } while (0)

static dkb_tensor *compress_str(dkb_tp *tp, const dkb_tensor *a, const uint8_t *m, const int64_t *off,
                                int64_t total) {
    int64_t n = a->n, nc = dkb__nchunks(n);
    int nt = dkb__nthreads(tp, n);
    const int64_t *ao = a->data;
    int64_t *boff = dkb__tp_scratch(tp, "compress", sizeof *boff * (size_t)(nc + 1));
    if (!boff) return NULL;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n, s = 0;
        for (int64_t i = lo; i < hi; i++)
            if (m[i]) s += ao[i + 1] - ao[i];
        boff[c] = s;
    }
    int64_t s = 0;
    for (int64_t c = 0; c < nc; c++) {
        int64_t t = boff[c];
        boff[c] = s;
        s += t;
    }
    dkb_tensor *r = dkb__tp_new_str(tp, "compress", total, s);
    if (!r) return NULL;
    int64_t *ro = r->data;
    ro[total] = s;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t c = 0; c < nc; c++) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n;
        int64_t k = off[c], b = boff[c];
        for (int64_t i = lo; i < hi; i++) {
            if (!m[i]) continue;
            int64_t len = ao[i + 1] - ao[i];
            ro[k++] = b;
            memcpy(r->bytes + b, a->bytes + ao[i], (size_t)len);
            b += len;
        }
    }
    return r;
}

dkb_tensor *dkb__cpu_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask) {
    int64_t n = a->n, nc = dkb__nchunks(n), *cnt = NULL;
    int nt = dkb__nthreads(tp, n);
    const uint8_t *m = mask->data;
    dkb_tensor *r = NULL;
    SCRATCH_BEGIN(tp);
    int64_t *off = chunk_counts(tp, "compress", mask, &cnt);
    if (!off) goto out;
    int64_t total = off[nc];
    if (a->dtype == DKB_TP_STR) {
        r = compress_str(tp, a, m, off, total);
        goto out;
    }
    r = dkb__tp_new(tp, "compress", a->dtype, total);
    if (!r) goto out;
    r->scale = a->scale;
    r->dict = a->dict;
    switch (dkb_tp_dtype_size(a->dtype)) {
    case 1: COMPRESS(uint8_t); break;
    case 2: COMPRESS(uint16_t); break;
    case 4: COMPRESS(uint32_t); break;
    case 8: COMPRESS(uint64_t); break;
    default: COMPRESS(dkb__i128); break;
    }
out:
    SCRATCH_END(tp);
    return r;
}

dkb_tensor *dkb__cpu_nonzero(dkb_tp *tp, const dkb_tensor *mask) {
    int64_t n = mask->n, nc = dkb__nchunks(n), *cnt = NULL;
    int nt = dkb__nthreads(tp, n);
    const uint8_t *m = mask->data;
    dkb_tensor *r = NULL;
    SCRATCH_BEGIN(tp);
    int64_t *off = chunk_counts(tp, "nonzero", mask, &cnt);
    if (off) r = dkb__tp_new(tp, "nonzero", DKB_TP_I64, off[nc]);
    if (r) {
        int64_t *o = r->data;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (int64_t c = 0; c < nc; c++) {
            int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n;
            COMPRESS_CHUNK(int64_t, o, VAL_I);
        }
    }
    SCRATCH_END(tp);
    return r;
}

int64_t dkb__cpu_count(dkb_tp *tp, const dkb_tensor *mask) {
    const uint8_t *m = mask->data;
    int64_t n = mask->n, nc = dkb__nchunks(n), s = 0;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt) reduction(+ : s)
    for (int64_t c = 0; c < nc; c++) s += count_nonzero(m, c * DKB__CHUNK, c * DKB__CHUNK + DKB__CHUNK < n ? c * DKB__CHUNK + DKB__CHUNK : n);
    return s;
}

/* ---- gather ---- */

#define GATHER(T, FILLV)                                                              \
    do {                                                                              \
        const T *x = (const T *)a->data;                                              \
        T *o = (T *)r->data, fv = (T)(FILLV);                                         \
        _Pragma("omp parallel for schedule(static) num_threads(nt) reduction(| : bad)") for (int64_t bi = 0; bi < nb; bi++) { \
            int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK; \
            int64_t ib[DKB__BLK];                                                     \
            dkb__ld_i64(idx, off, m, ib);                                             \
            for (int64_t j = 0; j < m; j++) {                                         \
                int64_t k = ib[j];                                                    \
                bool ok = (uint64_t)k < (uint64_t)an;                                 \
                bad |= !ok & (k != -1);                                               \
                o[off + j] = ok ? x[k] : fv;                                          \
            }                                                                         \
        }                                                                             \
    } while (0)

static dkb_tensor *gather_str(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx) {
    int64_t n = idx->n, an = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    const int64_t *ao = a->data;
    SCRATCH_BEGIN(tp);
    dkb_tensor *r = NULL;
    int64_t *len = dkb__tp_scratch(tp, "gather", sizeof *len * (size_t)(n + 1));
    if (!len) goto out;
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        int64_t ib[DKB__BLK];
        dkb__ld_i64(idx, off, m, ib);
        for (int64_t j = 0; j < m; j++) {
            int64_t k = ib[j];
            bool ok = (uint64_t)k < (uint64_t)an;
            bad |= !ok & (k != -1);
            len[off + j] = ok ? ao[k + 1] - ao[k] : 0;
        }
    }
    if (bad) {
        dkb__tp_error(tp, DKB_ERANGE, "gather: an index outside [-1, %lld)", (long long)an);
        goto out;
    }
    int64_t total = dkb__scan_i64(tp, len, n);
    r = dkb__tp_new_str(tp, "gather", n, total);
    if (!r) goto out;
    int64_t *ro = r->data;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t off = bi * DKB__BLK, m = n - off < DKB__BLK ? n - off : DKB__BLK;
        int64_t ib[DKB__BLK];
        dkb__ld_i64(idx, off, m, ib);
        for (int64_t j = 0; j < m; j++) {
            int64_t i = off + j, k = ib[j], b = i ? len[i - 1] : 0;
            ro[i] = b;
            if (k >= 0) memcpy(r->bytes + b, a->bytes + ao[k], (size_t)(len[i] - b));
        }
    }
    ro[n] = total;
out:
    SCRATCH_END(tp);
    return r;
}

dkb_tensor *dkb__cpu_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill) {
    if (a->dtype == DKB_TP_STR) return gather_str(tp, a, idx);
    int64_t n = idx->n, an = a->n, nb = (n + DKB__BLK - 1) / DKB__BLK;
    int nt = dkb__nthreads(tp, n);
    dkb_tensor *r = dkb__tp_new(tp, "gather", a->dtype, n);
    if (!r) return NULL;
    r->scale = a->scale;
    r->dict = a->dict;
    int bad = 0;
    switch (a->dtype) {
    case DKB_TP_BOOL: GATHER(uint8_t, fill != 0); break;
    case DKB_TP_U8: GATHER(uint8_t, fill); break;
    case DKB_TP_I8: GATHER(int8_t, fill); break;
    case DKB_TP_I16: GATHER(int16_t, fill); break;
    case DKB_TP_I32: GATHER(int32_t, fill); break;
    case DKB_TP_I64: GATHER(int64_t, fill); break;
    case DKB_TP_I128: GATHER(dkb__i128, fill); break;
    default: GATHER(double, fill); break;
    }
    if (bad) return dkb__tp_error(tp, DKB_ERANGE, "gather: an index outside [-1, %lld)", (long long)an);
    return r;
}
