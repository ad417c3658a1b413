/* cuda_sort.cu: CUDA ordering: stable multi-key sort and top-k, with the
 * CPU backend's results (cpu_sort.c) exactly.
 *
 * Keys become subkeys (cuda_sort_keys.cuh): each key's range is measured
 * on the device first (one wait; a second one for STR keys, whose chunk
 * count follows from their longest string), so each subkey has the fewest
 * bits its values need. Subkeys are packed from the right into composites
 * of at most 64 bits, and the rows sorted least significant composite
 * first: gather the composite through the current permutation, then a
 * stable CUB DeviceRadixSort::SortPairs over just its bits (32-bit keys
 * when they fit; 32-bit row numbers below 2^32 rows).
 *
 * Top-k with k small against n: a radix select on the most significant
 * composite finds T, the k-th smallest value of it (histograms of 8-bit
 * digits, all on the device); the rows whose composite is <= T (in row
 * order; at least k, every tie at T included) are sorted as above and the
 * first k kept. Otherwise a full sort. */
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "tensor/cuda_sort_keys.cuh"

/* Min and max raw value of a source (128-bit halves). */
typedef struct sk_range {
    uint64_t mn_lo, mn_hi, mx_lo, mx_hi;
} sk_range;

/* Subkeys sk[lo..hi] packed into one composite of `total` bits. */
typedef struct sk_group {
    int lo, hi, total;
} sk_group;

/* Radix select state: the threshold's bits found so far and the rank
 * (0-based) of the wanted value among rows matching them. */
typedef struct sk_select {
    uint64_t prefix;
    uint64_t rank;
} sk_select;

/* ---- kernels ---- */

__global__ void range_partial_kernel(sk_source s, int64_t n, sk_range *part) {
    __shared__ sk_u128 smn[DKB_CU_BLOCK], smx[DKB_CU_BLOCK];
    sk_u128 mn = ~(sk_u128)0, mx = 0;
    CU_FOR(i, n) {
        sk_u128 u = sk_raw(s, i);
        mn = u < mn ? u : mn;
        mx = u > mx ? u : mx;
    }
    int t = (int)threadIdx.x;
    smn[t] = mn;
    smx[t] = mx;
    __syncthreads();
    for (int w = DKB_CU_BLOCK / 2; w > 0; w >>= 1) {
        if (t < w) {
            smn[t] = smn[t + w] < smn[t] ? smn[t + w] : smn[t];
            smx[t] = smx[t + w] > smx[t] ? smx[t + w] : smx[t];
        }
        __syncthreads();
    }
    if (t == 0) {
        sk_range r = {(uint64_t)smn[0], (uint64_t)(smn[0] >> 64), (uint64_t)smx[0], (uint64_t)(smx[0] >> 64)};
        part[blockIdx.x] = r;
    }
}

/* One block per source: reduce its nparts partial ranges into out. */
__global__ void range_final_kernel(const sk_range *part, int nparts, sk_range *out) {
    __shared__ sk_u128 smn[DKB_CU_BLOCK], smx[DKB_CU_BLOCK];
    const sk_range *p = part + (int64_t)blockIdx.x * nparts;
    sk_u128 mn = ~(sk_u128)0, mx = 0;
    for (int i = (int)threadIdx.x; i < nparts; i += blockDim.x) {
        sk_u128 a = ((sk_u128)p[i].mn_hi << 64) | p[i].mn_lo, b = ((sk_u128)p[i].mx_hi << 64) | p[i].mx_lo;
        mn = a < mn ? a : mn;
        mx = b > mx ? b : mx;
    }
    int t = (int)threadIdx.x;
    smn[t] = mn;
    smx[t] = mx;
    __syncthreads();
    for (int w = DKB_CU_BLOCK / 2; w > 0; w >>= 1) {
        if (t < w) {
            smn[t] = smn[t + w] < smn[t] ? smn[t + w] : smn[t];
            smx[t] = smx[t + w] > smx[t] ? smx[t + w] : smx[t];
        }
        __syncthreads();
    }
    if (t == 0) {
        sk_range r = {(uint64_t)smn[0], (uint64_t)(smn[0] >> 64), (uint64_t)smx[0], (uint64_t)(smx[0] >> 64)};
        out[blockIdx.x] = r;
    }
}

/* out[i] = composite of sk[lo..hi] at row perm[i] (row i when perm is NULL). */
template <typename K, typename V>
__global__ void composite_kernel(const sk_subkey *sk, int lo, int hi, const V *perm, int64_t n, K *out) {
    CU_FOR(i, n) {
        int64_t r = perm ? (int64_t)perm[i] : i;
        out[i] = (K)sk_composite(sk, lo, hi, r);
    }
}

template <typename V>
__global__ void iota_kernel(V *v, int64_t n) {
    CU_FOR(i, n) v[i] = (V)i;
}

template <typename V>
__global__ void rows_to_i64_kernel(const V *src, int64_t *dst, int64_t n) {
    CU_FOR(i, n) dst[i] = (int64_t)src[i];
}

__device__ __forceinline__ uint64_t shr64(uint64_t x, int s) { return s >= 64 ? 0 : x >> s; }

/* Histogram of bits [lo, hi) of the values whose bits above hi match the
 * threshold's prefix. */
__global__ void select_hist_kernel(const uint64_t *c, int64_t n, int lo, int hi, const sk_select *st,
                                   unsigned long long *hist) {
    __shared__ unsigned int sh[256];
    for (int b = (int)threadIdx.x; b < 256; b += blockDim.x) sh[b] = 0;
    __syncthreads();
    uint64_t want = shr64(st->prefix, hi), mask = ((uint64_t)1 << (hi - lo)) - 1;
    CU_FOR(i, n) {
        uint64_t v = c[i];
        if (shr64(v, hi) == want) atomicAdd(&sh[(v >> lo) & mask], 1u);
    }
    __syncthreads();
    for (int b = (int)threadIdx.x; b < 256; b += blockDim.x)
        if (sh[b]) atomicAdd(&hist[b], (unsigned long long)sh[b]);
}

/* One thread: the digit holding the wanted rank; clears the histogram. */
__global__ void select_pick_kernel(sk_select *st, unsigned long long *hist, int lo, int hi) {
    uint64_t rank = st->rank, cum = 0;
    int digits = 1 << (hi - lo);
    bool found = false;
    for (int b = 0; b < digits; b++) {
        uint64_t h = hist[b];
        if (!found && rank < cum + h) {
            st->prefix |= (uint64_t)b << lo;
            st->rank = rank - cum;
            found = true;
        }
        cum += h;
    }
    for (int b = 0; b < 256; b++) hist[b] = 0;
}

__global__ void select_init_kernel(sk_select *st, unsigned long long *hist, uint64_t rank) {
    st->prefix = 0;
    st->rank = rank;
    for (int b = 0; b < 256; b++) hist[b] = 0;
}

/* Rows whose composite is at most the threshold. */
template <typename V>
struct at_most_threshold {
    const uint64_t *c;
    const sk_select *st;
    __device__ __forceinline__ bool operator()(V i) const { return c[i] <= st->prefix; }
};

/* ---- subkeys ---- */

static int bit_width128(sk_u128 d) {
    int b = 0;
    while (d) b++, d >>= 1;
    return b;
}

/* Ranges of sources src[0..ns) over n rows into out (host); waits once. */
static bool measure_ranges(dkb_tp *tp, const char *op, const sk_source *src, int ns, int64_t n, sk_range *out) {
    cudaStream_t st = dkb__cu_stream(tp);
    unsigned grid = dkb__cu_grid(tp, n);
    sk_range *part = (sk_range *)dkb__cu_scratch(tp, op, sizeof *part * (size_t)grid * (size_t)ns);
    sk_range *res = (sk_range *)dkb__cu_scratch(tp, op, sizeof *res * (size_t)ns);
    if (!part || !res) return false;
    for (int s = 0; s < ns; s++) {
        range_partial_kernel<<<grid, DKB_CU_BLOCK, 0, st>>>(src[s], n, part + (size_t)s * grid);
        if (!CU_LAUNCHED(tp, op)) return false;
    }
    range_final_kernel<<<ns, DKB_CU_BLOCK, 0, st>>>(part, (int)grid, res);
    if (!CU_LAUNCHED(tp, op)) return false;
    return dkb__cu_get(tp, op, out, res, sizeof *out * (size_t)ns);
}

/* Append the subkeys of one source with range r to sk; returns the count. */
static int subkeys_of(const sk_source *src, const sk_range *r, bool desc, sk_subkey *sk) {
    sk_u128 mn = ((sk_u128)r->mn_hi << 64) | r->mn_lo, mx = ((sk_u128)r->mx_hi << 64) | r->mx_lo;
    sk_u128 base = desc ? mx : mn;
    int bits = bit_width128(mx - mn);
    sk_subkey k;
    memset(&k, 0, sizeof k);
    k.src = *src;
    k.desc = desc;
    k.base_lo = (uint64_t)base;
    k.base_hi = (uint64_t)(base >> 64);
    if (bits <= 64) {
        k.bits = bits;
        sk[0] = k;
        return 1;
    }
    k.high = 1;
    k.bits = bits - 64;
    sk[0] = k;
    k.high = 0;
    k.bits = 64;
    sk[1] = k;
    return 2;
}

/* The subkeys of all keys (on the device in *d_sk) and their composites
 * (host, least significant first). Host arrays from tp's scratch. */
typedef struct sk_plan {
    sk_subkey *d_sk;
    sk_group *groups;
    int ngroups;
} sk_plan;

static bool plan_keys(dkb_tp *tp, const char *op, const dkb_sort_key *keys, int nkeys, int64_t n, sk_plan *plan) {
    sk_source *src = (sk_source *)dkb__tp_scratch(tp, op, sizeof *src * (size_t)nkeys);
    sk_range *rg = (sk_range *)dkb__tp_scratch(tp, op, sizeof *rg * (size_t)nkeys);
    if (!src || !rg) return false;
    memset(src, 0, sizeof *src * (size_t)nkeys);
    for (int j = 0; j < nkeys; j++) {
        const dkb_tensor *t = keys[j].key;
        src[j].kind = t->dtype == DKB_TP_STR ? SK_STR_LEN : SK_NUM;
        src[j].dtype = t->dtype;
        src[j].data = t->data;
        src[j].bytes = t->bytes;
    }
    if (!measure_ranges(tp, op, src, nkeys, n, rg)) return false;
    /* STR keys: chunks of their bytes up to the longest string */
    int nchunks = 0;
    for (int j = 0; j < nkeys; j++)
        if (src[j].kind == SK_STR_LEN) nchunks += (int)((rg[j].mx_lo + 7) / 8);
    sk_source *csrc = (sk_source *)dkb__tp_scratch(tp, op, sizeof *csrc * (size_t)(nchunks + 1));
    sk_range *crg = (sk_range *)dkb__tp_scratch(tp, op, sizeof *crg * (size_t)(nchunks + 1));
    if (!csrc || !crg) return false;
    for (int j = 0, c = 0; j < nkeys; j++) {
        if (src[j].kind != SK_STR_LEN) continue;
        int64_t maxlen = (int64_t)rg[j].mx_lo;
        for (int64_t pos = 0; pos < maxlen; pos += 8, c++) {
            csrc[c] = src[j];
            csrc[c].kind = SK_STR_CHUNK;
            csrc[c].pos = (int)pos;
            csrc[c].width = (int)(maxlen - pos < 8 ? maxlen - pos : 8);
        }
    }
    if (nchunks && !measure_ranges(tp, op, csrc, nchunks, n, crg)) return false;
    /* subkeys, most significant first */
    int cap = 2 * nkeys + nchunks;
    sk_subkey *sk = (sk_subkey *)dkb__tp_scratch(tp, op, sizeof *sk * (size_t)cap);
    sk_group *groups = (sk_group *)dkb__tp_scratch(tp, op, sizeof *groups * (size_t)cap);
    if (!sk || !groups) return false;
    int ns = 0;
    for (int j = 0, c = 0; j < nkeys; j++) {
        bool desc = keys[j].desc;
        if (src[j].kind == SK_STR_LEN) {
            int64_t maxlen = (int64_t)rg[j].mx_lo;
            for (int64_t pos = 0; pos < maxlen; pos += 8, c++) ns += subkeys_of(&csrc[c], &crg[c], desc, sk + ns);
        }
        ns += subkeys_of(&src[j], &rg[j], desc, sk + ns);
    }
    /* composites from the right */
    int ng = 0;
    for (int j = ns - 1; j >= 0;) {
        if (sk[j].bits == 0) {
            j--;
            continue;
        }
        int hi = j, total = 0;
        while (j >= 0 && total + sk[j].bits <= 64) total += sk[j--].bits;
        groups[ng].lo = j + 1;
        groups[ng].hi = hi;
        groups[ng].total = total;
        ng++;
    }
    sk_subkey *d_sk = (sk_subkey *)dkb__cu_scratch(tp, op, sizeof *d_sk * (size_t)(ns + 1));
    if (!d_sk || !dkb__cu_put(tp, op, d_sk, sk, sizeof *sk * (size_t)ns)) return false;
    plan->d_sk = d_sk;
    plan->groups = groups;
    plan->ngroups = ng;
    return true;
}

/* ---- the stable LSD sort ---- */

/* Sort the n rows init[0..n) (device; NULL: 0..n-1) by the plan's
 * composites; *out gets the device array holding the result. */
template <typename V>
static bool lsd_sort(dkb_tp *tp, const char *op, const sk_plan *plan, int64_t n, const V *init, V **out) {
    cudaStream_t st = dkb__cu_stream(tp);
    unsigned grid = dkb__cu_grid(tp, n);
    V *v0 = (V *)dkb__cu_scratch(tp, op, sizeof(V) * (size_t)n);
    if (!v0) return false;
    if (init) {
        if (!CU_OK(tp, op, cudaMemcpyAsync(v0, init, sizeof(V) * (size_t)n, cudaMemcpyDeviceToDevice, st)))
            return false;
    } else {
        iota_kernel<V><<<grid, DKB_CU_BLOCK, 0, st>>>(v0, n);
        if (!CU_LAUNCHED(tp, op)) return false;
    }
    *out = v0;
    if (plan->ngroups == 0) return true;
    uint64_t *k0 = (uint64_t *)dkb__cu_scratch(tp, op, sizeof(uint64_t) * (size_t)n);
    uint64_t *k1 = (uint64_t *)dkb__cu_scratch(tp, op, sizeof(uint64_t) * (size_t)n);
    V *v1 = (V *)dkb__cu_scratch(tp, op, sizeof(V) * (size_t)n);
    if (!k0 || !k1 || !v1) return false;
    cub::DoubleBuffer<V> vals(v0, v1);
    size_t temp_bytes = 0, t32 = 0, t64 = 0;
    {
        cub::DoubleBuffer<uint32_t> q32((uint32_t *)k0, (uint32_t *)k1);
        cub::DoubleBuffer<uint64_t> q64(k0, k1);
        if (!CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(NULL, t32, q32, vals, n, 0, 32, st)) ||
            !CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(NULL, t64, q64, vals, n, 0, 64, st)))
            return false;
        temp_bytes = t32 > t64 ? t32 : t64;
    }
    void *temp = dkb__cu_scratch(tp, op, temp_bytes);
    if (!temp) return false;
    bool identity = init == NULL;
    for (int q = 0; q < plan->ngroups; q++) {
        const sk_group *g = &plan->groups[q];
        const V *perm = identity ? NULL : vals.Current();
        size_t tb = temp_bytes;
        if (g->total <= 32) {
            cub::DoubleBuffer<uint32_t> ks((uint32_t *)k0, (uint32_t *)k1);
            composite_kernel<uint32_t, V><<<grid, DKB_CU_BLOCK, 0, st>>>(plan->d_sk, g->lo, g->hi, perm, n, ks.Current());
            if (!CU_LAUNCHED(tp, op) ||
                !CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(temp, tb, ks, vals, n, 0, g->total, st)))
                return false;
        } else {
            cub::DoubleBuffer<uint64_t> ks(k0, k1);
            composite_kernel<uint64_t, V><<<grid, DKB_CU_BLOCK, 0, st>>>(plan->d_sk, g->lo, g->hi, perm, n, ks.Current());
            if (!CU_LAUNCHED(tp, op) ||
                !CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(temp, tb, ks, vals, n, 0, g->total, st)))
                return false;
        }
        identity = false;
    }
    *out = vals.Current();
    return true;
}

/* The first m rows of the sorted order into out (device, I64). */
template <typename V>
static bool sort_first(dkb_tp *tp, const char *op, const sk_plan *plan, int64_t n, int64_t m, int64_t *out) {
    V *res = NULL;
    if (!lsd_sort<V>(tp, op, plan, n, (const V *)NULL, &res)) return false;
    if (m == 0) return true;
    rows_to_i64_kernel<V><<<dkb__cu_grid(tp, m), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)>>>(res, out, m);
    return CU_LAUNCHED(tp, op);
}

/* Top m by a radix select on the most significant composite, then a sort
 * of the rows at or below its threshold. Needs plan->ngroups > 0, m > 0. */
template <typename V>
static bool select_first(dkb_tp *tp, const char *op, const sk_plan *plan, int64_t n, int64_t m, int64_t *out) {
    cudaStream_t st = dkb__cu_stream(tp);
    unsigned grid = dkb__cu_grid(tp, n);
    const sk_group *g0 = &plan->groups[plan->ngroups - 1];
    uint64_t *c0 = (uint64_t *)dkb__cu_scratch(tp, op, sizeof *c0 * (size_t)n);
    sk_select *sel = (sk_select *)dkb__cu_scratch(tp, op, sizeof *sel);
    unsigned long long *hist = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *hist * 256);
    V *surv = (V *)dkb__cu_scratch(tp, op, sizeof(V) * (size_t)n);
    int64_t *d_count = (int64_t *)dkb__cu_scratch(tp, op, sizeof *d_count);
    if (!c0 || !sel || !hist || !surv || !d_count) return false;
    composite_kernel<uint64_t, V><<<grid, DKB_CU_BLOCK, 0, st>>>(plan->d_sk, g0->lo, g0->hi, (const V *)NULL, n, c0);
    select_init_kernel<<<1, 1, 0, st>>>(sel, hist, (uint64_t)(m - 1));
    if (!CU_LAUNCHED(tp, op)) return false;
    for (int hi = g0->total; hi > 0; hi -= 8) {
        int lo = hi > 8 ? hi - 8 : 0;
        select_hist_kernel<<<grid, DKB_CU_BLOCK, 0, st>>>(c0, n, lo, hi, sel, hist);
        select_pick_kernel<<<1, 1, 0, st>>>(sel, hist, lo, hi);
        if (!CU_LAUNCHED(tp, op)) return false;
    }
    thrust::counting_iterator<V> rows((V)0);
    at_most_threshold<V> pred = {c0, sel};
    size_t temp_bytes = 0;
    if (!CU_OK(tp, op, cub::DeviceSelect::If(NULL, temp_bytes, rows, surv, d_count, n, pred, st))) return false;
    void *temp = dkb__cu_scratch(tp, op, temp_bytes);
    if (!temp || !CU_OK(tp, op, cub::DeviceSelect::If(temp, temp_bytes, rows, surv, d_count, n, pred, st)))
        return false;
    int64_t count = 0;
    if (!dkb__cu_get(tp, op, &count, d_count, sizeof count)) return false;
    if (count < m || count > n) {
        dkb__tp_error(tp, DKB_EINTERNAL, "%s: radix select kept %lld of %lld rows for k = %lld", op, (long long)count,
                      (long long)n, (long long)m);
        return false;
    }
    V *res = NULL;
    if (!lsd_sort<V>(tp, op, plan, count, surv, &res)) return false;
    rows_to_i64_kernel<V><<<dkb__cu_grid(tp, m), DKB_CU_BLOCK, 0, st>>>(res, out, m);
    return CU_LAUNCHED(tp, op);
}

/* Below this many rows, or for k above n / TOPK_SELECT_RATIO, top-k sorts
 * everything. */
#define TOPK_SELECT_MIN_ROWS ((int64_t)32768)
#define TOPK_SELECT_RATIO 8

/* The first m of the n rows in key order into out (device, I64). */
static bool order_rows(dkb_tp *tp, const char *op, const dkb_sort_key *keys, int nkeys, int64_t n, int64_t m,
                       int64_t *out) {
    sk_plan plan;
    if (!plan_keys(tp, op, keys, nkeys, n, &plan)) return false;
    bool narrow = n <= (int64_t)UINT32_MAX;
    if (m > 0 && plan.ngroups > 0 && n >= TOPK_SELECT_MIN_ROWS && m <= n / TOPK_SELECT_RATIO)
        return narrow ? select_first<uint32_t>(tp, op, &plan, n, m, out)
                      : select_first<int64_t>(tp, op, &plan, n, m, out);
    return narrow ? sort_first<uint32_t>(tp, op, &plan, n, m, out) : sort_first<int64_t>(tp, op, &plan, n, m, out);
}

static dkb_tensor *order(dkb_tp *tp, const char *op, const dkb_sort_key *keys, int nkeys, int64_t m) {
    int64_t n = keys[0].key->n;
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_I64, m);
    if (!r) return NULL;
    if (m == 0) return r;
    if (n == 1) return CU_OK(tp, op, cudaMemsetAsync(r->data, 0, sizeof(int64_t), dkb__cu_stream(tp))) ? r : NULL;
    SCRATCH_BEGIN(tp);
    CU_SCRATCH_BEGIN(tp);
    bool ok = order_rows(tp, op, keys, nkeys, n, m, (int64_t *)r->data);
    CU_SCRATCH_END(tp);
    SCRATCH_END(tp);
    return ok ? r : NULL;
}

extern "C" dkb_tensor *dkb__cuda_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys) {
    return order(tp, "sort", keys, nkeys, keys[0].key->n);
}

extern "C" dkb_tensor *dkb__cuda_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k) {
    int64_t n = keys[0].key->n;
    return order(tp, "topk", keys, nkeys, k < n ? k : n);
}
