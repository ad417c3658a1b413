/* cuda_agg.cu: CUDA aggregation per group (aggregate) and over all rows
 * (reduce), mirroring cpu_agg.c: SUM (exact int128 for integers), COUNT,
 * MIN, MAX, AVG and COUNT_DISTINCT, with the CPU's dtypes, scales,
 * dictionaries and bits.
 *
 *   - Integer SUM and COUNT per group: 128-bit accumulators kept as two
 *     64-bit words (low word atomicAdd, its carry added to the high word),
 *     exact in any order. With at most 2048 groups each block first
 *     accumulates in shared memory, in up to 32 copies (one per warp lane
 *     when groups are few) so hot groups do not serialize, then adds its
 *     partials to the global words.
 *   - MIN/MAX per group: int64 atomicMin/Max (after a plain read, so only
 *     improving rows pay an atomic), shared-memory partials as above; F64
 *     through an order-preserving int64 image of the bits; I128 in two
 *     passes (the high word, then the low word among rows with the best
 *     high word).
 *   - F64 SUM (and AVG's F64 sum) per group: the CPU's order exactly. The
 *     CPU splits the rows into P = f64_parts() contiguous parts, each
 *     summed in L lanes (L = 4 for up to 1024 groups: row i of a part
 *     starting at lo goes to lane (i - lo) & 3), each lane a left-to-right
 *     sum from +0.0 per group; lanes fold 0+1+2+3, then parts fold in
 *     order. Here rows are stably radix-sorted by segment (part, lane,
 *     group); a warp sums each segment left to right (all lanes carry the
 *     same running sum, fed by shuffles from a coalesced load), and one
 *     thread per group folds the segment sums in the CPU's order.
 *   - Reductions: integer SUM/MIN/MAX as per-block partials (exact, so any
 *     order) combined by one thread; F64 SUM as the CPU's 65536-row chunks
 *     summed left to right (one warp per chunk, as above), then combined in
 *     chunk order.
 *   - AVG of integers: the exact sum divided as the CPU's long double
 *     computes it (cuda_avg.h reproduces the 80-bit steps bit for bit).
 *
 * Known differences from the CPU (values its own thread count may also
 * change): MIN/MAX of F64 with both -0.0 and +0.0 as the extreme give
 * -0.0 for MIN and +0.0 for MAX (the CPU keeps the first it meets); NaN
 * payloads of F64 sums and averages follow the GPU's canonical NaN. */
#include <limits.h>
#include <string.h>

#include <cub/cub.cuh>

#include "tensor/cuda_avg.h"
#include "tensor/cuda_internal.cuh"

#define F64_PARTS 8            /* cpu_agg.c F64_PARTS */
#define CPU_LANES 4            /* cpu_agg.c LANES */
#define CPU_LANES_MAX_GROUPS 1024
#define SHARED_SLOTS 2048      /* accumulators per block in shared memory */
#define X86_DEFAULT_NAN 0xfff8000000000000ull

/* ---- device helpers ---- */

/* Add x into the 128-bit number (hi, lo) (shared or global memory). */
__device__ __forceinline__ void add128_atomic(unsigned long long *lo, unsigned long long *hi, dkb__u128 x) {
    unsigned long long xl = (unsigned long long)x, xh = (unsigned long long)(x >> 64);
    unsigned long long old = atomicAdd(lo, xl);
    xh += old + xl < old ? 1ull : 0ull;
    if (xh) atomicAdd(hi, xh);
}

/* An int64 whose order is the order of the doubles (-0.0 below +0.0). */
__device__ __forceinline__ long long f64_key(double d) {
    long long b = __double_as_longlong(d);
    return b >= 0 ? b : b ^ 0x7fffffffffffffffll;
}
__device__ __forceinline__ double key_f64(long long k) {
    return __longlong_as_double(k >= 0 ? k : k ^ 0x7fffffffffffffffll);
}

/* Store v into element i of an output of dtype t (as cpu_agg.c store_acc). */
__device__ __forceinline__ void store_int(void *out, dkb_tp_dtype t, int64_t i, dkb__i128 v) {
    switch (t) {
    case DKB_TP_BOOL: case DKB_TP_U8: ((uint8_t *)out)[i] = (uint8_t)v; break;
    case DKB_TP_I8: ((int8_t *)out)[i] = (int8_t)v; break;
    case DKB_TP_I16: ((int16_t *)out)[i] = (int16_t)v; break;
    case DKB_TP_I32: ((int32_t *)out)[i] = (int32_t)v; break;
    case DKB_TP_I64: ((int64_t *)out)[i] = (int64_t)v; break;
    default: ((dkb__i128 *)out)[i] = v; break;
    }
}

__device__ __forceinline__ double x86_div(double a, double b) {
    if (b == 0.0 && a == 0.0) return __longlong_as_double((long long)X86_DEFAULT_NAN);
    return a / b;
}

/* ---- per group: integer SUM and COUNT ---- */

/* Rows i with 0 <= gid[i] < ng add their value (COUNT: vals NULL, 1) to
 * group gid[i]'s (ghi, glo). copies > 0: block partials in shared memory,
 * copies (a power of two <= 32) of ng each. */
__global__ void sum_kernel(const int64_t *gid, const void *vals, dkb_tp_dtype t, int64_t n, int64_t ng, int copies,
                           unsigned long long *glo, unsigned long long *ghi) {
    extern __shared__ unsigned long long sh_sum[];
    int64_t slots = (int64_t)copies * ng;
    unsigned long long *slo = sh_sum, *shi = sh_sum + slots;
    for (int64_t s = threadIdx.x; s < 2 * slots; s += blockDim.x) sh_sum[s] = 0;
    if (copies) __syncthreads();
    int64_t cbase = copies ? (int64_t)((threadIdx.x & 31) & (copies - 1)) * ng : 0;
    CU_FOR(i, n) {
        int64_t g = gid[i];
        if ((uint64_t)g >= (uint64_t)ng) continue;
        dkb__u128 x = vals ? (dkb__u128)dkb__d_ld_i128(vals, t, i) : (dkb__u128)1;
        if (copies) add128_atomic(&slo[cbase + g], &shi[cbase + g], x);
        else add128_atomic(&glo[g], &ghi[g], x);
    }
    if (!copies) return;
    __syncthreads();
    for (int64_t g = threadIdx.x; g < ng; g += blockDim.x) {
        dkb__u128 s = 0;
        for (int c = 0; c < copies; c++) s += ((dkb__u128)shi[c * ng + g] << 64) | slo[c * ng + g];
        if (s) add128_atomic(&glo[g], &ghi[g], s);
    }
}

/* ng <= TINY_GROUPS (Q1's 4 groups): each thread sums its rows in
 * registers (an unrolled compare-and-add per group: no atomics per row),
 * warps combine with shuffles, blocks in shared memory, and one thread per
 * group adds the block's sum into global memory. Exact, as sum_kernel:
 * 128-bit sums modulo 2^128, whose order does not matter. */
#define TINY_GROUPS 8

__device__ __forceinline__ dkb__u128 shfl_down_u128(dkb__u128 v, int d) {
    unsigned long long lo = __shfl_down_sync(0xffffffffu, (unsigned long long)v, d);
    unsigned long long hi = __shfl_down_sync(0xffffffffu, (unsigned long long)(v >> 64), d);
    return ((dkb__u128)hi << 64) | lo;
}

__global__ void sum_tiny_kernel(const int64_t *gid, const void *vals, dkb_tp_dtype t, int64_t n, int ng,
                                unsigned long long *glo, unsigned long long *ghi) {
    __shared__ unsigned long long slo[TINY_GROUPS], shi[TINY_GROUPS];
    if (threadIdx.x < TINY_GROUPS) slo[threadIdx.x] = shi[threadIdx.x] = 0;
    __syncthreads();
    dkb__u128 acc[TINY_GROUPS];
#pragma unroll
    for (int k = 0; k < TINY_GROUPS; k++) acc[k] = 0;
    CU_FOR(i, n) {
        int64_t g = gid[i];
        if ((uint64_t)g >= (uint64_t)ng) continue;
        dkb__u128 x = vals ? (dkb__u128)dkb__d_ld_i128(vals, t, i) : (dkb__u128)1;
#pragma unroll
        for (int k = 0; k < TINY_GROUPS; k++)
            if (g == k) acc[k] += x;
    }
#pragma unroll
    for (int k = 0; k < TINY_GROUPS; k++) {
        if (k >= ng) break;
        dkb__u128 v = acc[k];
        for (int d = 16; d > 0; d >>= 1) v += shfl_down_u128(v, d);
        if ((threadIdx.x & 31) == 0 && v) add128_atomic(&slo[k], &shi[k], v);
    }
    __syncthreads();
    if ((int)threadIdx.x < ng) {
        dkb__u128 v = ((dkb__u128)shi[threadIdx.x] << 64) | slo[threadIdx.x];
        if (v) add128_atomic(&glo[threadIdx.x], &ghi[threadIdx.x], v);
    }
}

/* ---- per group: MIN and MAX ---- */

enum { KEY_INT = 0, KEY_F64, KEY_I128_HI };

__device__ __forceinline__ long long minmax_key(const void *vals, dkb_tp_dtype t, int mode, int64_t i) {
    if (mode == KEY_F64) return f64_key(((const double *)vals)[i]);
    if (mode == KEY_I128_HI) return (long long)(((const dkb__i128 *)vals)[i] >> 64);
    return (long long)dkb__d_ld_i64(vals, t, i);
}

__device__ __forceinline__ void improve(long long *a, long long k, bool is_max) {
    long long cur = *a;
    if (is_max ? k > cur : k < cur) {
        if (is_max) atomicMax(a, k);
        else atomicMin(a, k);
    }
}

/* gacc[g] (initialised to the identity) becomes the min/max key of group
 * g's rows, gseen[g] 1 when it has any. */
__global__ void minmax_kernel(const int64_t *gid, const void *vals, dkb_tp_dtype t, int mode, bool is_max, int64_t n,
                              int64_t ng, int copies, long long *gacc, unsigned *gseen) {
    extern __shared__ long long sh_mm[];
    int64_t slots = (int64_t)copies * ng;
    long long *sacc = sh_mm, ident = is_max ? LLONG_MIN : LLONG_MAX;
    unsigned *sseen = (unsigned *)(sh_mm + slots);
    for (int64_t s = threadIdx.x; s < slots; s += blockDim.x) sacc[s] = ident;
    for (int64_t s = threadIdx.x; copies && s < ng; s += blockDim.x) sseen[s] = 0;
    if (copies) __syncthreads();
    int64_t cbase = copies ? (int64_t)((threadIdx.x & 31) & (copies - 1)) * ng : 0;
    CU_FOR(i, n) {
        int64_t g = gid[i];
        if ((uint64_t)g >= (uint64_t)ng) continue;
        long long k = minmax_key(vals, t, mode, i);
        improve(copies ? &sacc[cbase + g] : &gacc[g], k, is_max);
        unsigned *seen = copies ? &sseen[g] : &gseen[g];
        if (!*seen) *seen = 1;
    }
    if (!copies) return;
    __syncthreads();
    for (int64_t g = threadIdx.x; g < ng; g += blockDim.x) {
        if (!sseen[g]) continue;
        long long best = sacc[g];
        for (int c = 1; c < copies; c++) best = is_max ? max(best, sacc[c * ng + g]) : min(best, sacc[c * ng + g]);
        improve(&gacc[g], best, is_max);
        if (!gseen[g]) gseen[g] = 1;
    }
}

/* I128 second pass: among rows whose high word is the group's best, the
 * best low word (unsigned). */
__global__ void minmax_lo_kernel(const int64_t *gid, const dkb__i128 *vals, bool is_max, int64_t n, int64_t ng,
                                 const long long *best_hi, unsigned long long *best_lo) {
    CU_FOR(i, n) {
        int64_t g = gid[i];
        if ((uint64_t)g >= (uint64_t)ng) continue;
        dkb__i128 v = vals[i];
        if ((long long)(v >> 64) != best_hi[g]) continue;
        unsigned long long lo = (unsigned long long)v, cur = best_lo[g];
        if (is_max ? lo > cur : lo < cur) {
            if (is_max) atomicMax(&best_lo[g], lo);
            else atomicMin(&best_lo[g], lo);
        }
    }
}

__global__ void minmax_store_kernel(int64_t ng, int mode, const long long *acc, const unsigned long long *lo,
                                    const unsigned *seen, void *out, dkb_tp_dtype t) {
    CU_FOR(g, ng) {
        if (mode == KEY_F64) {
            ((double *)out)[g] = seen[g] ? key_f64(acc[g]) : 0.0;
        } else if (mode == KEY_I128_HI) {
            ((dkb__i128 *)out)[g] = seen[g] ? (dkb__i128)(((dkb__u128)(unsigned long long)acc[g] << 64) | lo[g]) : 0;
        } else {
            store_int(out, t, g, seen[g] ? (dkb__i128)acc[g] : 0);
        }
    }
}

/* ---- per group: results of sums ---- */

__global__ void sum_store_kernel(int64_t ng, const unsigned long long *lo, const unsigned long long *hi,
                                 const unsigned long long *cnt, double p10, dkb__i128 *sum_out, double *avg_out) {
    CU_FOR(g, ng) {
        dkb__i128 s = (dkb__i128)(((dkb__u128)hi[g] << 64) | lo[g]);
        if (sum_out) sum_out[g] = s;
        else avg_out[g] = dkb__exact_avg(s, (int64_t)cnt[g], p10);
    }
}

/* ---- F64 sums in the CPU's order ---- */

/* cpu_agg.c parts_for(.., fixed = true). */
static int f64_parts(int64_t n, int64_t ng) {
    int p = F64_PARTS;
    while (p > 1 && (ng * 16 * p > ((int64_t)1 << 30) || n / p < 4096)) p /= 2;
    return p < 1 ? 1 : p;
}

/* Segment of row i: (part * L + lane) * ng + group; S (past all) for a
 * row outside the groups. */
__global__ void f64_segment_kernel(const int64_t *gid, int64_t n, int64_t ng, int P, int L, unsigned long long *seg) {
    unsigned long long S = (unsigned long long)P * L * ng;
    CU_FOR(i, n) {
        int64_t g = gid[i];
        if ((uint64_t)g >= (uint64_t)ng) {
            seg[i] = S;
            continue;
        }
        int p = (int)(i * P / n);
        while (p + 1 < P && n * (p + 1) / P <= i) p++;
        while (p > 0 && n * p / P > i) p--;
        int64_t lo = n * p / P;
        int lane = L == CPU_LANES ? (int)((i - lo) & (CPU_LANES - 1)) : 0;
        seg[i] = ((unsigned long long)p * L + lane) * ng + g;
    }
}

__device__ __forceinline__ int64_t lower_bound(const unsigned long long *a, int64_t n, unsigned long long v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Left-to-right sum from +0.0 of vals[lo, hi) by one whole warp: each
 * lane loads one of 32 consecutive values, every lane adds all 32 in
 * order (shuffled), so all lanes hold the running sum. */
__device__ __forceinline__ double warp_chain_sum(const double *vals, int64_t lo, int64_t hi) {
    int lane = threadIdx.x & 31;
    double acc = 0.0;
    for (int64_t base = lo; base < hi; base += 32) {
        double v = base + lane < hi ? vals[base + lane] : 0.0;
        int cnt = hi - base < 32 ? (int)(hi - base) : 32;
        for (int k = 0; k < cnt; k++) acc += __shfl_sync(0xffffffffu, v, k);
    }
    return acc;
}

/* out[s] = chain sum of segment s of the sorted (seg, vals). */
__global__ void segment_sum_kernel(const unsigned long long *seg, const double *vals, int64_t n, int64_t S,
                                   double *out) {
    int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t s = warp; s < S; s += nwarps) {
        int64_t lo = lower_bound(seg, n, (unsigned long long)s), hi = lower_bound(seg, n, (unsigned long long)s + 1);
        double acc = warp_chain_sum(vals, lo, hi);
        if ((threadIdx.x & 31) == 0) out[s] = acc;
    }
}

/* Fold segment sums per group in the CPU's order; AVG divides by cnt. */
__global__ void f64_fold_kernel(const double *segsum, int64_t ng, int P, int L, const unsigned long long *cnt,
                                double *out) {
    CU_FOR(g, ng) {
        double r = 0.0;
        for (int p = 0; p < P; p++) {
            double a = segsum[((int64_t)p * L) * ng + g];
            for (int l = 1; l < L; l++) a += segsum[((int64_t)p * L + l) * ng + g];
            r = p == 0 ? a : r + a;
        }
        out[g] = cnt ? x86_div(r, (double)cnt[g]) : r;
    }
}

/* Per-group F64 sums into out (AVG: divided by cnt), or NULL + error. */
static bool f64_group_sum(dkb_tp *tp, const char *op, const int64_t *gid, const dkb_tensor *v, int64_t ng,
                          const unsigned long long *cnt, double *out) {
    cudaStream_t st = dkb__cu_stream(tp);
    int64_t n = v->n;
    int P = f64_parts(n, ng), L = ng <= CPU_LANES_MAX_GROUPS ? CPU_LANES : 1;
    int64_t S = (int64_t)P * L * ng;
    double *segsum = (double *)dkb__cu_scratch(tp, op, sizeof *segsum * (size_t)(S + 1));
    if (!segsum) return false;
    unsigned long long *seg_sorted = NULL;
    double *vals_sorted = NULL;
    if (n > 0) {
        unsigned long long *seg = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *seg * (size_t)n);
        seg_sorted = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *seg * (size_t)n);
        vals_sorted = (double *)dkb__cu_scratch(tp, op, sizeof *vals_sorted * (size_t)n);
        if (!seg || !seg_sorted || !vals_sorted) return false;
        f64_segment_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, st>>>(gid, n, ng, P, L, seg);
        if (!CU_LAUNCHED(tp, op)) return false;
        int end_bit = 1;
        while (end_bit < 64 && ((uint64_t)S >> end_bit)) end_bit++;
        size_t tb = 0;
        const double *vin = (const double *)v->data;
        if (!CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(NULL, tb, seg, seg_sorted, vin, vals_sorted, n, 0, end_bit, st)))
            return false;
        void *tmp = dkb__cu_scratch(tp, op, tb ? tb : 1);
        if (!tmp || !CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(tmp, tb, seg, seg_sorted, vin, vals_sorted, n, 0,
                                                                   end_bit, st)))
            return false;
    }
    if (S > 0) {
        int64_t blocks = (S * 32 + DKB_CU_BLOCK - 1) / DKB_CU_BLOCK, cap = (int64_t)tp->cuda->sms * 32;
        segment_sum_kernel<<<(unsigned)(blocks < cap ? blocks : cap), DKB_CU_BLOCK, 0, st>>>(seg_sorted, vals_sorted, n,
                                                                                             S, segsum);
        if (!CU_LAUNCHED(tp, op)) return false;
        f64_fold_kernel<<<dkb__cu_grid(tp, ng), DKB_CU_BLOCK, 0, st>>>(segsum, ng, P, L, cnt, out);
        if (!CU_LAUNCHED(tp, op)) return false;
    }
    return true;
}

/* ---- aggregate ---- */

/* Shared-memory copies for ng groups (0: accumulate in global memory). */
static int copies_for(int64_t ng) {
    if (ng > SHARED_SLOTS || ng < 1) return 0;
    int c = 32;
    while (c > 1 && (int64_t)c * ng > SHARED_SLOTS) c /= 2;
    return c;
}

/* Grid of the accumulating kernels: with shared partials, fewer blocks
 * (each flushes ng * copies slots). */
static unsigned acc_grid(dkb_tp *tp, int64_t n, int copies) {
    unsigned g = dkb__cu_grid(tp, n), cap = (unsigned)tp->cuda->sms * 4;
    return copies && g > cap ? cap : g;
}

/* Group sums (lo, hi) of values (NULL: counts), zeroed first. */
static bool group_sums(dkb_tp *tp, const char *op, const int64_t *gid, int64_t n, const dkb_tensor *v, int64_t ng,
                       unsigned long long *lo, unsigned long long *hi) {
    cudaStream_t st = dkb__cu_stream(tp);
    if (!CU_OK(tp, op, cudaMemsetAsync(lo, 0, sizeof *lo * (size_t)ng, st)) ||
        !CU_OK(tp, op, cudaMemsetAsync(hi, 0, sizeof *hi * (size_t)ng, st)))
        return false;
    if (n == 0) return true;
    if (ng <= TINY_GROUPS) {
        sum_tiny_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, st>>>(gid, v ? v->data : NULL,
                                                                      v ? v->dtype : DKB_TP_I64, n, (int)ng, lo, hi);
        return CU_LAUNCHED(tp, op);
    }
    int copies = copies_for(ng);
    size_t shm = sizeof(unsigned long long) * 2 * (size_t)copies * (size_t)ng;
    sum_kernel<<<acc_grid(tp, n, copies), DKB_CU_BLOCK, shm, st>>>(gid, v ? v->data : NULL, v ? v->dtype : DKB_TP_I64, n,
                                                                  ng, copies, lo, hi);
    return CU_LAUNCHED(tp, op);
}

__global__ void minmax_init_kernel(int64_t ng, bool is_max, long long *acc, unsigned long long *lo, unsigned *seen) {
    CU_FOR(g, ng) {
        acc[g] = is_max ? LLONG_MIN : LLONG_MAX;
        lo[g] = is_max ? 0ull : ~0ull;
        seen[g] = 0;
    }
}

/* MIN/MAX per group into out (values' dtype). */
static bool group_minmax(dkb_tp *tp, const char *op, const int64_t *gid, const dkb_tensor *v, int64_t ng, bool is_max,
                         void *out) {
    cudaStream_t st = dkb__cu_stream(tp);
    int64_t n = v->n;
    int mode = v->dtype == DKB_TP_F64 ? KEY_F64 : v->dtype == DKB_TP_I128 ? KEY_I128_HI : KEY_INT;
    long long *acc = (long long *)dkb__cu_scratch(tp, op, sizeof *acc * (size_t)ng);
    unsigned long long *lo = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *lo * (size_t)ng);
    unsigned *seen = (unsigned *)dkb__cu_scratch(tp, op, sizeof *seen * (size_t)ng);
    if (!acc || !lo || !seen) return false;
    minmax_init_kernel<<<dkb__cu_grid(tp, ng), DKB_CU_BLOCK, 0, st>>>(ng, is_max, acc, lo, seen);
    if (!CU_LAUNCHED(tp, op)) return false;
    if (n > 0) {
        int copies = copies_for(ng);
        size_t shm = (sizeof(long long) * (size_t)copies + sizeof(unsigned)) * (size_t)ng;
        if (!copies) shm = 0;
        minmax_kernel<<<acc_grid(tp, n, copies), DKB_CU_BLOCK, shm, st>>>(gid, v->data, v->dtype, mode, is_max, n, ng,
                                                                         copies, acc, seen);
        if (!CU_LAUNCHED(tp, op)) return false;
        if (mode == KEY_I128_HI) {
            minmax_lo_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, st>>>(gid, (const dkb__i128 *)v->data, is_max, n,
                                                                           ng, acc, lo);
            if (!CU_LAUNCHED(tp, op)) return false;
        }
    }
    minmax_store_kernel<<<dkb__cu_grid(tp, ng), DKB_CU_BLOCK, 0, st>>>(ng, mode, acc, lo, seen, out, v->dtype);
    return CU_LAUNCHED(tp, op);
}

/* COUNT_DISTINCT: the groups of (group, value) pairs, counted per group. */
__global__ void count_pairs_kernel(const int64_t *gid, const int64_t *pair_first, int64_t npairs, int64_t ng,
                                   unsigned long long *out) {
    CU_FOR(p, npairs) {
        int64_t g = gid[pair_first[p]];
        if ((uint64_t)g < (uint64_t)ng) atomicAdd(&out[g], 1ull);
    }
}

static dkb_tensor *count_distinct(dkb_tp *tp, const dkb_groups *g, const dkb_tensor *values) {
    static const char op[] = "aggregate";
    int64_t ng = g->ngroups;
    const dkb_tensor *keys[2] = {g->group_id, values};
    dkb_groups pairs = dkb__cuda_group(tp, keys, 2);
    if (!pairs.group_id) return NULL;
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_I64, ng);
    if (!r) return NULL;
    cudaStream_t st = dkb__cu_stream(tp);
    if (!CU_OK(tp, op, cudaMemsetAsync(r->data, 0, sizeof(int64_t) * (size_t)ng, st))) return NULL;
    if (pairs.ngroups > 0) {
        count_pairs_kernel<<<dkb__cu_grid(tp, pairs.ngroups), DKB_CU_BLOCK, 0, st>>>(
            (const int64_t *)g->group_id->data, (const int64_t *)pairs.first_row->data, pairs.ngroups, ng,
            (unsigned long long *)r->data);
        if (!CU_LAUNCHED(tp, op)) return NULL;
    }
    return r;
}

extern "C" dkb_tensor *dkb__cuda_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values) {
    static const char op[] = "aggregate";
    if (agg == DKB_AGG_COUNT_DISTINCT) return count_distinct(tp, g, values);
    int64_t ng = g->ngroups, n = g->group_id->n;
    const int64_t *gid = (const int64_t *)g->group_id->data;
    bool f = values && values->dtype == DKB_TP_F64;
    dkb_tensor *r = NULL, *t_out = NULL;
    CU_SCRATCH_BEGIN(tp);
    unsigned long long *lo = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *lo * (size_t)(ng + 1));
    unsigned long long *hi = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *hi * (size_t)(ng + 1));
    if (!lo || !hi) goto out;
    if (agg == DKB_AGG_COUNT) {
        t_out = dkb__tp_new(tp, op, DKB_TP_I64, ng);
        if (t_out && group_sums(tp, op, gid, n, NULL, ng, (unsigned long long *)t_out->data, hi)) r = t_out;
        goto out;
    }
    if (agg == DKB_AGG_AVG) {
        t_out = dkb__tp_new(tp, op, DKB_TP_F64, ng);
        unsigned long long *cnt = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *cnt * (size_t)(ng + 1));
        unsigned long long *cnt_hi = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *cnt * (size_t)(ng + 1));
        if (!t_out || !cnt || !cnt_hi || !group_sums(tp, op, gid, n, NULL, ng, cnt, cnt_hi)) goto out;
        if (f) {
            if (!f64_group_sum(tp, op, gid, values, ng, cnt, (double *)t_out->data)) goto out;
        } else {
            if (!group_sums(tp, op, gid, n, values, ng, lo, hi)) goto out;
            if (ng > 0) {
                sum_store_kernel<<<dkb__cu_grid(tp, ng), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)>>>(
                    ng, lo, hi, cnt, (double)dkb__pow10_i128(values->scale), NULL, (double *)t_out->data);
                if (!CU_LAUNCHED(tp, op)) goto out;
            }
        }
        r = t_out;
        goto out;
    }
    t_out = dkb__tp_new(tp, op, agg == DKB_AGG_SUM ? (f ? DKB_TP_F64 : DKB_TP_I128) : values->dtype, ng);
    if (!t_out) goto out;
    t_out->scale = f ? 0 : values->scale;
    if (agg != DKB_AGG_SUM) t_out->dict = values->dict;
    if (agg == DKB_AGG_SUM && f) {
        if (!f64_group_sum(tp, op, gid, values, ng, NULL, (double *)t_out->data)) goto out;
    } else if (agg == DKB_AGG_SUM) {
        if (!group_sums(tp, op, gid, n, values, ng, lo, hi)) goto out;
        if (ng > 0) {
            sum_store_kernel<<<dkb__cu_grid(tp, ng), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)>>>(ng, lo, hi, NULL, 1.0,
                                                                                         (dkb__i128 *)t_out->data, NULL);
            if (!CU_LAUNCHED(tp, op)) goto out;
        }
    } else if (ng > 0) {
        if (!group_minmax(tp, op, gid, values, ng, agg == DKB_AGG_MAX, t_out->data)) goto out;
    }
    r = t_out;
out:
    CU_SCRATCH_END(tp);
    return r;
}

/* ---- reduce ---- */

enum { RED_SUM = 0, RED_MIN, RED_MAX };

__device__ __forceinline__ dkb__i128 red_combine(dkb__i128 a, dkb__i128 b, int op) {
    if (op == RED_SUM) return (dkb__i128)((dkb__u128)a + (dkb__u128)b);
    if (op == RED_MIN) return b < a ? b : a;
    return b > a ? b : a;
}

__device__ __forceinline__ dkb__i128 red_identity(int op) {
    dkb__i128 mx = (dkb__i128)(~(dkb__u128)0 >> 1);
    return op == RED_SUM ? (dkb__i128)0 : op == RED_MIN ? mx : -mx - 1;
}

/* part[block] = the block's sum / min / max of its rows, as int128 (F64
 * MIN/MAX: the ordered key). */
__global__ void reduce_block_kernel(const void *vals, dkb_tp_dtype t, int op, int64_t n, dkb__i128 *part) {
    __shared__ dkb__i128 warp_part[32];
    dkb__i128 acc = red_identity(op);
    bool f = t == DKB_TP_F64;
    CU_FOR(i, n) acc = red_combine(acc, f ? (dkb__i128)f64_key(((const double *)vals)[i]) : dkb__d_ld_i128(vals, t, i), op);
    for (int off = 16; off > 0; off >>= 1) {
        unsigned long long lo = __shfl_down_sync(0xffffffffu, (unsigned long long)acc, off);
        long long hi = __shfl_down_sync(0xffffffffu, (long long)(acc >> 64), off);
        acc = red_combine(acc, (dkb__i128)(((dkb__u128)(unsigned long long)hi << 64) | lo), op);
    }
    if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (unsigned w = 1; w < blockDim.x / 32; w++) acc = red_combine(acc, warp_part[w], op);
        part[blockIdx.x] = acc;
    }
}

/* One thread: combine the block partials, store the result as dtype t
 * (AVG: the exact average over n). */
__global__ void reduce_final_kernel(const dkb__i128 *part, unsigned nparts, int op, bool avg, int64_t n, double p10,
                                    dkb_tp_dtype vt, void *out, dkb_tp_dtype t) {
    dkb__i128 acc = part[0];
    for (unsigned b = 1; b < nparts; b++) acc = red_combine(acc, part[b], op);
    if (avg) ((double *)out)[0] = dkb__exact_avg(acc, n, p10);
    else if (vt == DKB_TP_F64) ((double *)out)[0] = key_f64((long long)acc);
    else store_int(out, t, 0, acc);
}

/* F64 sums of the CPU's DKB__CHUNK chunks, one warp per chunk. */
__global__ void chunk_sum_kernel(const double *vals, int64_t n, int64_t nchunks, double *out) {
    int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t c = warp; c < nchunks; c += nwarps) {
        int64_t lo = c * DKB__CHUNK, hi = lo + DKB__CHUNK < n ? lo + DKB__CHUNK : n;
        double acc = warp_chain_sum(vals, lo, hi);
        if ((threadIdx.x & 31) == 0) out[c] = acc;
    }
}

/* Chunk sums combined in order (AVG: divided by n). */
__global__ void chunk_final_kernel(const double *part, int64_t nchunks, bool avg, int64_t n, double *out) {
    double t = part[0];
    for (int64_t c = 1; c < nchunks; c++) t += part[c];
    out[0] = avg ? x86_div(t, (double)n) : t;
}

extern "C" dkb_tensor *dkb__cuda_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values) {
    static const char op_name[] = "reduce";
    int64_t n = values->n;
    bool f = values->dtype == DKB_TP_F64;
    cudaStream_t st = dkb__cu_stream(tp);
    if (agg == DKB_AGG_COUNT) return dkb__cuda_full_i64(tp, DKB_TP_I64, 1, n);
    if (agg == DKB_AGG_COUNT_DISTINCT) {
        const dkb_tensor *keys[1] = {values};
        dkb_groups g = dkb__cuda_group(tp, keys, 1);
        return g.group_id ? dkb__cuda_full_i64(tp, DKB_TP_I64, 1, g.ngroups) : NULL;
    }
    if (n == 0 && agg != DKB_AGG_SUM) {
        dkb_tensor *r = dkb__tp_new(tp, op_name, agg == DKB_AGG_AVG ? DKB_TP_F64 : values->dtype, 0);
        if (r && agg != DKB_AGG_AVG) r->scale = values->scale, r->dict = values->dict;
        return r;
    }
    int op = agg == DKB_AGG_MIN ? RED_MIN : agg == DKB_AGG_MAX ? RED_MAX : RED_SUM;
    bool avg = agg == DKB_AGG_AVG;
    dkb_tp_dtype t = avg ? DKB_TP_F64 : op == RED_SUM ? (f ? DKB_TP_F64 : DKB_TP_I128) : values->dtype;
    dkb_tensor *r = dkb__tp_new(tp, op_name, t, 1), *res = NULL;
    if (!r) return NULL;
    if (!avg) {
        r->scale = f ? 0 : values->scale;
        if (op != RED_SUM) r->dict = values->dict;
    }
    CU_SCRATCH_BEGIN(tp);
    if (n == 0) { /* SUM of nothing: 0 (F64 +0.0 or I128 0: all bits zero) */
        if (CU_OK(tp, op_name, cudaMemsetAsync(r->data, 0, dkb_tp_dtype_size(t), st))) res = r;
        goto out;
    }
    if (f && op == RED_SUM) {
        int64_t nc = dkb__nchunks(n), blocks = (nc * 32 + DKB_CU_BLOCK - 1) / DKB_CU_BLOCK;
        double *part = (double *)dkb__cu_scratch(tp, op_name, sizeof *part * (size_t)nc);
        if (!part) goto out;
        chunk_sum_kernel<<<(unsigned)blocks, DKB_CU_BLOCK, 0, st>>>((const double *)values->data, n, nc, part);
        if (!CU_LAUNCHED(tp, op_name)) goto out;
        chunk_final_kernel<<<1, 1, 0, st>>>(part, nc, avg, n, (double *)r->data);
        if (CU_LAUNCHED(tp, op_name)) res = r;
        goto out;
    }
    {
        unsigned grid = dkb__cu_grid(tp, n);
        dkb__i128 *part = (dkb__i128 *)dkb__cu_scratch(tp, op_name, sizeof *part * grid);
        if (!part) goto out;
        reduce_block_kernel<<<grid, DKB_CU_BLOCK, 0, st>>>(values->data, values->dtype, op, n, part);
        if (!CU_LAUNCHED(tp, op_name)) goto out;
        reduce_final_kernel<<<1, 1, 0, st>>>(part, grid, op, avg, n, (double)dkb__pow10_i128(values->scale), values->dtype,
                                             r->data, t);
        if (CU_LAUNCHED(tp, op_name)) res = r;
    }
out:
    CU_SCRATCH_END(tp);
    return res;
}
