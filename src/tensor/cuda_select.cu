/* cuda_select.cu: CUDA selection, as cpu_select.c: compress (the rows where
 * a mask is nonzero, every dtype including I128 and STR), nonzero, gather
 * (I64 or I32 indices, -1 giving the fill value or the empty string, any
 * other index outside the tensor failing with DKB_ERANGE) and count.
 *
 * Compress and nonzero work on warp segments of SEG rows: one pass counts
 * each segment's selected rows (and, for STR, their bytes), an exclusive
 * scan places the segments, the host reads the total (the one wait, to size
 * the output), and a second pass has each warp write its segment in order,
 * ranks within 32 rows coming from a ballot. Strings are copied by whole
 * warps, one string at a time, so the byte traffic coalesces. */
#include <cub/cub.cuh>

#include "tensor/cuda_select.cuh"

#define SEG_ROUNDS 32                        /* ballots of 32 rows per segment */
#define SEG ((int64_t)32 * SEG_ROUNDS)       /* rows per warp segment */

static inline int64_t nsegs(int64_t n) { return (n + SEG - 1) / SEG; }

/* Grid for kernels that give each warp whole units (segments, 32-row groups). */
static inline unsigned warp_grid(const dkb_tp *tp, int64_t units) { return dkb__cu_grid(tp, units * 32); }

#define STREAM(tp) dkb__cu_stream(tp)

static __device__ __forceinline__ int lane_id(void) { return (int)(threadIdx.x & 31); }
static __device__ __forceinline__ int64_t warp_first(void) {
    return ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
}
static __device__ __forceinline__ int64_t warp_count(void) { return ((int64_t)gridDim.x * blockDim.x) >> 5; }
/* Lanes below this one. */
static __device__ __forceinline__ unsigned lanes_below(void) { return (1u << lane_id()) - 1u; }

static __device__ __forceinline__ int64_t warp_sum_i64(int64_t v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(DKB_CU_FULL_MASK, v, o);
    return v;
}

static __device__ __forceinline__ int64_t warp_inclusive_sum_i64(int64_t v) {
    int lane = lane_id();
    for (int o = 1; o < 32; o <<= 1) {
        int64_t u = __shfl_up_sync(DKB_CU_FULL_MASK, v, o);
        if (lane >= o) v += u;
    }
    return v;
}

/* The warp copies len bytes from src to dst (all lanes call it). */
static __device__ __forceinline__ void warp_copy(char *dst, const char *src, int64_t len) {
    for (int64_t j = lane_id(); j < len; j += 32) dst[j] = src[j];
}

/* ---- shared helpers (cuda_select.cuh) ---- */

bool dkb__cu_exclusive_sum(dkb_tp *tp, const char *op, const int64_t *in, int64_t *out, int64_t n) {
    if (n <= 0) return true;
    size_t bytes = 0;
    if (!CU_OK(tp, op, cub::DeviceScan::ExclusiveSum(NULL, bytes, in, out, n, STREAM(tp)))) return false;
    void *tmp = dkb__cu_scratch(tp, op, bytes ? bytes : 1);
    return tmp && CU_OK(tp, op, cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n, STREAM(tp)));
}

/* ---- per-segment counts ---- */

/* cnt[s] = nonzero bytes of m in segment s; with ao (STR offsets), also
 * nbytes[s] = the bytes of the selected strings. */
static __global__ void seg_count_kernel(const uint8_t *m, int64_t n, int64_t nseg, bool aligned, const int64_t *ao,
                                        int64_t *cnt, int64_t *nbytes) {
    int lane = lane_id();
    for (int64_t s = warp_first(); s < nseg; s += warp_count()) {
        int64_t lo = s * SEG, hi = lo + SEG < n ? lo + SEG : n;
        int64_t c = 0, b = 0;
        if (ao) {
            for (int64_t i = lo + lane; i < hi; i += 32)
                if (m[i]) c++, b += ao[i + 1] - ao[i];
        } else if (aligned) { /* 4 mask bytes per load */
            const uint32_t *w = (const uint32_t *)(m + lo);
            int64_t nw = (hi - lo) >> 2;
            for (int64_t j = lane; j < nw; j += 32) c += __popc(__vcmpne4(w[j], 0u)) >> 3;
            for (int64_t i = lo + nw * 4 + lane; i < hi; i += 32) c += m[i] != 0;
        } else {
            for (int64_t i = lo + lane; i < hi; i += 32) c += m[i] != 0;
        }
        c = warp_sum_i64(c);
        if (ao) b = warp_sum_i64(b);
        if (lane == 0) {
            cnt[s] = c;
            if (ao) nbytes[s] = b;
        }
    }
}

static __global__ void pair_kernel(const int64_t *a, const int64_t *b, int64_t *out) {
    out[0] = *a;
    out[1] = b ? *b : 0;
}

/* Where each segment's selected rows (and, for STR with ao, their bytes)
 * start in the output: *roff (and *boff), nseg + 1 scratch entries each,
 * the last one the total; the totals on the host in tot[0] (rows) and
 * tot[1] (bytes). */
static bool seg_plan(dkb_tp *tp, const char *op, const uint8_t *m, int64_t n, const int64_t *ao, int64_t **roff,
                     int64_t **boff, int64_t tot[2]) {
    int64_t ns = nsegs(n);
    size_t sz = sizeof(int64_t) * (size_t)(ns + 1);
    int64_t *cnt = (int64_t *)dkb__cu_scratch(tp, op, sz), *off = (int64_t *)dkb__cu_scratch(tp, op, sz);
    int64_t *bcnt = NULL, *bo = NULL;
    int64_t *totals = (int64_t *)dkb__cu_scratch(tp, op, 2 * sizeof(int64_t));
    if (!cnt || !off || !totals) return false;
    if (ao) {
        bcnt = (int64_t *)dkb__cu_scratch(tp, op, sz);
        bo = (int64_t *)dkb__cu_scratch(tp, op, sz);
        if (!bcnt || !bo) return false;
        if (!CU_OK(tp, op, cudaMemsetAsync(bcnt + ns, 0, sizeof(int64_t), STREAM(tp)))) return false;
    }
    if (!CU_OK(tp, op, cudaMemsetAsync(cnt + ns, 0, sizeof(int64_t), STREAM(tp)))) return false;
    if (ns) {
        bool aligned = ((uintptr_t)m & 3) == 0;
        seg_count_kernel<<<warp_grid(tp, ns), DKB_CU_BLOCK, 0, STREAM(tp)>>>(m, n, ns, aligned, ao, cnt, bcnt);
        if (!CU_LAUNCHED(tp, op)) return false;
    }
    if (!dkb__cu_exclusive_sum(tp, op, cnt, off, ns + 1)) return false;
    if (ao && !dkb__cu_exclusive_sum(tp, op, bcnt, bo, ns + 1)) return false;
    pair_kernel<<<1, 1, 0, STREAM(tp)>>>(off + ns, ao ? bo + ns : NULL, totals);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_get(tp, op, tot, totals, 2 * sizeof(int64_t))) return false;
    *roff = off;
    if (boff) *boff = bo;
    return true;
}

/* ---- writing the selected rows ---- */

/* Types that CUB or templates see live in an anonymous namespace, so no
 * other file's type of the same name can merge with them at link time. */
namespace {
template <typename T>
struct load_value {
    const T *x;
    __device__ __forceinline__ T operator()(int64_t i) const { return x[i]; }
};

struct load_position {
    __device__ __forceinline__ int64_t operator()(int64_t i) const { return i; }
};
} // namespace

/* out[off[s] + rank] = src(i) for the selected rows i of each segment s. */
template <typename T, typename Src>
static __global__ void seg_write_kernel(Src src, const uint8_t *m, int64_t n, int64_t nseg, const int64_t *off,
                                        T *out) {
    int lane = lane_id();
    unsigned below = lanes_below();
    for (int64_t s = warp_first(); s < nseg; s += warp_count()) {
        int64_t lo = s * SEG, hi = lo + SEG < n ? lo + SEG : n, k = off[s];
        for (int64_t i = lo + lane; i - lane < hi; i += 32) { /* warp-uniform: i - lane is the group */
            bool f = i < hi && m[i] != 0;
            unsigned b = __ballot_sync(DKB_CU_FULL_MASK, f);
            if (f) out[k + __popc(b & below)] = src(i);
            k += __popc(b);
        }
    }
}

/* STR: the selected strings' offsets (ro) and bytes (rb). */
static __global__ void seg_write_str_kernel(const int64_t *ao, const char *ab, const uint8_t *m, int64_t n,
                                            int64_t nseg, const int64_t *roff, const int64_t *boff, int64_t *ro,
                                            char *rb) {
    int lane = lane_id();
    unsigned below = lanes_below();
    for (int64_t s = warp_first(); s < nseg; s += warp_count()) {
        int64_t lo = s * SEG, hi = lo + SEG < n ? lo + SEG : n, k = roff[s], base = boff[s];
        for (int64_t i = lo + lane; i - lane < hi; i += 32) {
            bool f = i < hi && m[i] != 0;
            int64_t src = f ? ao[i] : 0, len = f ? ao[i + 1] - src : 0;
            int64_t incl = warp_inclusive_sum_i64(len), excl = incl - len;
            unsigned b = __ballot_sync(DKB_CU_FULL_MASK, f);
            if (f) ro[k + __popc(b & below)] = base + excl;
            for (unsigned q = b; q; q &= q - 1) {
                int l = __ffs((int)q) - 1;
                int64_t ls = __shfl_sync(DKB_CU_FULL_MASK, src, l), ll = __shfl_sync(DKB_CU_FULL_MASK, len, l);
                int64_t le = __shfl_sync(DKB_CU_FULL_MASK, excl, l);
                warp_copy(rb + base + le, ab + ls, ll);
            }
            k += __popc(b);
            base += __shfl_sync(DKB_CU_FULL_MASK, incl, 31);
        }
    }
}

template <typename T, typename Src>
static bool seg_write(dkb_tp *tp, const char *op, Src src, const uint8_t *m, int64_t n, const int64_t *off, T *out) {
    int64_t ns = nsegs(n);
    if (!ns) return true;
    seg_write_kernel<T, Src><<<warp_grid(tp, ns), DKB_CU_BLOCK, 0, STREAM(tp)>>>(src, m, n, ns, off, out);
    return CU_LAUNCHED(tp, op);
}

bool dkb__cu_nonzero_into(dkb_tp *tp, const char *op, const uint8_t *m, int64_t n, int64_t *out, int64_t *total) {
    int64_t *off = NULL, tot[2];
    if (!seg_plan(tp, op, m, n, NULL, &off, NULL, tot)) return false;
    *total = tot[0];
    return seg_write(tp, op, load_position(), m, n, off, out);
}

/* ---- compress ---- */

static dkb_tensor *compress_str(dkb_tp *tp, const dkb_tensor *a, const uint8_t *m) {
    const char *op = "compress";
    int64_t n = a->n, *roff = NULL, *boff = NULL, tot[2];
    if (!seg_plan(tp, op, m, n, (const int64_t *)a->data, &roff, &boff, tot)) return NULL;
    dkb_tensor *r = dkb__tp_new_str(tp, op, tot[0], tot[1]);
    if (!r) return NULL;
    int64_t *ro = (int64_t *)r->data, ns = nsegs(n);
    /* the last offset: the total bytes (boff[ns]) */
    if (!CU_OK(tp, op, cudaMemcpyAsync(ro + tot[0], boff + ns, sizeof(int64_t), cudaMemcpyDeviceToDevice, STREAM(tp))))
        return NULL;
    if (ns) {
        seg_write_str_kernel<<<warp_grid(tp, ns), DKB_CU_BLOCK, 0, STREAM(tp)>>>(
            (const int64_t *)a->data, a->bytes, m, n, ns, roff, boff, ro, r->bytes);
        if (!CU_LAUNCHED(tp, op)) return NULL;
    }
    return r;
}

template <typename T>
static bool compress_as(dkb_tp *tp, const dkb_tensor *a, const uint8_t *m, const int64_t *off, dkb_tensor *r) {
    load_value<T> src = {(const T *)a->data};
    return seg_write(tp, "compress", src, m, a->n, off, (T *)r->data);
}

static dkb_tensor *compress_impl(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask) {
    const char *op = "compress";
    const uint8_t *m = (const uint8_t *)mask->data;
    if (a->dtype == DKB_TP_STR) return compress_str(tp, a, m);
    int64_t *off = NULL, tot[2];
    if (!seg_plan(tp, op, m, a->n, NULL, &off, NULL, tot)) return NULL;
    dkb_tensor *r = dkb__tp_new(tp, op, a->dtype, tot[0]);
    if (!r) return NULL;
    r->scale = a->scale;
    r->dict = a->dict;
    bool ok;
    switch (dkb_tp_dtype_size(a->dtype)) {
    case 1: ok = compress_as<uint8_t>(tp, a, m, off, r); break;
    case 2: ok = compress_as<uint16_t>(tp, a, m, off, r); break;
    case 4: ok = compress_as<uint32_t>(tp, a, m, off, r); break;
    case 8: ok = compress_as<uint64_t>(tp, a, m, off, r); break;
    default: ok = compress_as<dkb__i128>(tp, a, m, off, r); break;
    }
    return ok ? r : NULL;
}

extern "C" dkb_tensor *dkb__cuda_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask) {
    CU_SCRATCH_BEGIN(tp);
    dkb_tensor *r = compress_impl(tp, a, mask);
    CU_SCRATCH_END(tp);
    return r;
}

/* ---- nonzero ---- */

static dkb_tensor *nonzero_impl(dkb_tp *tp, const dkb_tensor *mask) {
    const char *op = "nonzero";
    const uint8_t *m = (const uint8_t *)mask->data;
    int64_t *off = NULL, tot[2];
    if (!seg_plan(tp, op, m, mask->n, NULL, &off, NULL, tot)) return NULL;
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_I64, tot[0]);
    if (!r || !seg_write(tp, op, load_position(), m, mask->n, off, (int64_t *)r->data)) return NULL;
    return r;
}

extern "C" dkb_tensor *dkb__cuda_nonzero(dkb_tp *tp, const dkb_tensor *mask) {
    CU_SCRATCH_BEGIN(tp);
    dkb_tensor *r = nonzero_impl(tp, mask);
    CU_SCRATCH_END(tp);
    return r;
}

/* ---- count ---- */

/* *out += the nonzero bytes of m[0..n); 16 bytes per load when aligned. */
static __global__ void count_kernel(const uint8_t *m, int64_t n, bool aligned, unsigned long long *out) {
    unsigned long long c = 0;
    int64_t head = 0;
    if (aligned) {
        int64_t nv = n >> 4;
        const uint4 *v = (const uint4 *)m;
        CU_FOR(j, nv) {
            uint4 w = v[j];
            c += (unsigned)(__popc(__vcmpne4(w.x, 0u)) + __popc(__vcmpne4(w.y, 0u)) + __popc(__vcmpne4(w.z, 0u)) +
                            __popc(__vcmpne4(w.w, 0u))) >> 3;
        }
        head = nv << 4;
    }
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = head + t; i < n; i += (int64_t)gridDim.x * blockDim.x) c += m[i] != 0;
    typedef cub::BlockReduce<unsigned long long, DKB_CU_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    unsigned long long s = reduce(tmp).Sum(c);
    if (threadIdx.x == 0 && s) atomicAdd(out, s);
}

static int64_t count_impl(dkb_tp *tp, const dkb_tensor *mask) {
    const char *op = "count";
    int64_t n = mask->n;
    if (n == 0) return 0;
    unsigned long long *d = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *d), h = 0;
    if (!d || !CU_OK(tp, op, cudaMemsetAsync(d, 0, sizeof *d, STREAM(tp)))) return 0;
    bool aligned = ((uintptr_t)mask->data & 15) == 0;
    count_kernel<<<dkb__cu_grid(tp, aligned ? (n + 15) / 16 : n), DKB_CU_BLOCK, 0, STREAM(tp)>>>(
        (const uint8_t *)mask->data, n, aligned, d);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_get(tp, op, &h, d, sizeof h)) return 0;
    return (int64_t)h;
}

extern "C" int64_t dkb__cuda_count(dkb_tp *tp, const dkb_tensor *mask) {
    CU_SCRATCH_BEGIN(tp);
    int64_t r = count_impl(tp, mask);
    CU_SCRATCH_END(tp);
    return r;
}

/* ---- gather ---- */

/* out[i] = x[idx[i]], fill for -1; other indices outside [0, an) raise the
 * INDEX flag (out[i] = fill). */
template <typename T, typename I>
static __global__ void gather_kernel(const T *x, int64_t an, const I *idx, int64_t n, T fill, T *out,
                                     unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        int64_t k = (int64_t)idx[i];
        bool ok = (uint64_t)k < (uint64_t)an;
        bad |= !ok && k != -1;
        out[i] = ok ? x[k] : fill;
    }
    if (bad) atomicOr(flag, DKB_CU_FLAG_INDEX);
}

/* len[i] = bytes of string idx[i] (0 for -1); bad indices raise the flag. */
template <typename I>
static __global__ void gather_len_kernel(const int64_t *ao, int64_t an, const I *idx, int64_t n, int64_t *len,
                                         unsigned long long *flag) {
    bool bad = false;
    CU_FOR(i, n) {
        int64_t k = (int64_t)idx[i];
        bool ok = (uint64_t)k < (uint64_t)an;
        bad |= !ok && k != -1;
        len[i] = ok ? ao[k + 1] - ao[k] : 0;
    }
    if (bad) atomicOr(flag, DKB_CU_FLAG_INDEX);
}

/* The bytes of string idx[i] to rb + ro[i]; a warp per 32 rows, copying
 * one string at a time. */
template <typename I>
static __global__ void gather_str_kernel(const int64_t *ao, const char *ab, const I *idx, int64_t n, const int64_t *ro,
                                         char *rb) {
    int lane = lane_id();
    for (int64_t g = warp_first(); g * 32 < n; g += warp_count()) {
        int64_t i = g * 32 + lane, src = 0, len = 0, dst = 0;
        if (i < n) {
            int64_t k = (int64_t)idx[i];
            dst = ro[i];
            len = ro[i + 1] - dst;
            src = len ? ao[k] : 0;
        }
        for (unsigned q = __ballot_sync(DKB_CU_FULL_MASK, len > 0); q; q &= q - 1) {
            int l = __ffs((int)q) - 1;
            warp_copy(rb + __shfl_sync(DKB_CU_FULL_MASK, dst, l), ab + __shfl_sync(DKB_CU_FULL_MASK, src, l),
                      __shfl_sync(DKB_CU_FULL_MASK, len, l));
        }
    }
}

/* Reads the flag after the gather kernels; false (error recorded) when an
 * index was outside [-1, an). */
static bool indices_ok(dkb_tp *tp, int64_t an) {
    unsigned long long f = dkb__cu_flag_get(tp, "gather");
    if (f == ~0ull) return false;
    if (f & DKB_CU_FLAG_INDEX) {
        dkb__tp_error(tp, DKB_ERANGE, "gather: an index outside [-1, %lld)", (long long)an);
        return false;
    }
    return true;
}

template <typename I>
static dkb_tensor *gather_str(dkb_tp *tp, const dkb_tensor *a, const I *idx, int64_t n) {
    const char *op = "gather";
    int64_t an = a->n;
    const int64_t *ao = (const int64_t *)a->data;
    size_t sz = sizeof(int64_t) * (size_t)(n + 1);
    int64_t *len = (int64_t *)dkb__cu_scratch(tp, op, sz), *off = (int64_t *)dkb__cu_scratch(tp, op, sz), total = 0;
    if (!len || !off || !dkb__cu_flag_clear(tp, op)) return NULL;
    if (!CU_OK(tp, op, cudaMemsetAsync(len + n, 0, sizeof(int64_t), STREAM(tp)))) return NULL;
    if (n) {
        gather_len_kernel<I><<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, STREAM(tp)>>>(ao, an, idx, n, len,
                                                                                  tp->cuda->flag);
        if (!CU_LAUNCHED(tp, op)) return NULL;
    }
    if (!indices_ok(tp, an)) return NULL;
    if (!dkb__cu_exclusive_sum(tp, op, len, off, n + 1) || !dkb__cu_get(tp, op, &total, off + n, sizeof total))
        return NULL;
    dkb_tensor *r = dkb__tp_new_str(tp, op, n, total);
    if (!r) return NULL;
    if (!CU_OK(tp, op, cudaMemcpyAsync(r->data, off, sz, cudaMemcpyDeviceToDevice, STREAM(tp)))) return NULL;
    if (n && total) {
        gather_str_kernel<I><<<warp_grid(tp, (n + 31) / 32), DKB_CU_BLOCK, 0, STREAM(tp)>>>(
            ao, a->bytes, idx, n, (const int64_t *)r->data, r->bytes);
        if (!CU_LAUNCHED(tp, op)) return NULL;
    }
    return r;
}

template <typename T, typename I>
static bool gather_as(dkb_tp *tp, const dkb_tensor *a, const I *idx, int64_t n, T fill, dkb_tensor *r) {
    if (!n) return true;
    gather_kernel<T, I><<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, STREAM(tp)>>>((const T *)a->data, a->n, idx, n, fill,
                                                                             (T *)r->data, tp->cuda->flag);
    return CU_LAUNCHED(tp, "gather");
}

template <typename I>
static dkb_tensor *gather_impl(dkb_tp *tp, const dkb_tensor *a, const I *idx, int64_t n, int64_t fill) {
    const char *op = "gather";
    if (a->dtype == DKB_TP_STR) return gather_str<I>(tp, a, idx, n);
    dkb_tensor *r = dkb__tp_new(tp, op, a->dtype, n);
    if (!r) return NULL;
    r->scale = a->scale;
    r->dict = a->dict;
    if (!dkb__cu_flag_clear(tp, op)) return NULL;
    bool ok;
    switch (a->dtype) {
    case DKB_TP_BOOL: ok = gather_as<uint8_t, I>(tp, a, idx, n, (uint8_t)(fill != 0), r); break;
    case DKB_TP_U8: ok = gather_as<uint8_t, I>(tp, a, idx, n, (uint8_t)fill, r); break;
    case DKB_TP_I8: ok = gather_as<int8_t, I>(tp, a, idx, n, (int8_t)fill, r); break;
    case DKB_TP_I16: ok = gather_as<int16_t, I>(tp, a, idx, n, (int16_t)fill, r); break;
    case DKB_TP_I32: ok = gather_as<int32_t, I>(tp, a, idx, n, (int32_t)fill, r); break;
    case DKB_TP_I64: ok = gather_as<int64_t, I>(tp, a, idx, n, fill, r); break;
    case DKB_TP_I128: ok = gather_as<dkb__i128, I>(tp, a, idx, n, (dkb__i128)fill, r); break;
    default: ok = gather_as<double, I>(tp, a, idx, n, (double)fill, r); break;
    }
    return ok && indices_ok(tp, a->n) ? r : NULL;
}

extern "C" dkb_tensor *dkb__cuda_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill) {
    CU_SCRATCH_BEGIN(tp);
    dkb_tensor *r = idx->dtype == DKB_TP_I32 ? gather_impl(tp, a, (const int32_t *)idx->data, idx->n, fill)
                                             : gather_impl(tp, a, (const int64_t *)idx->data, idx->n, fill);
    CU_SCRATCH_END(tp);
    return r;
}
