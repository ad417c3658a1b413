/* q11.full.cu: expert CUDA full-mode candidate for TPC-H Q11 (Important
 * Stock Identification).
 *
 *   select ps_partkey, sum(ps_supplycost * ps_availqty) as value
 *   from partsupp, supplier, nation
 *   where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':nation'
 *   group by ps_partkey
 *   having sum(ps_supplycost * ps_availqty) > (
 *       select sum(ps_supplycost * ps_availqty) * :fraction
 *       from partsupp, supplier, nation
 *       where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':nation')
 *   order by value desc;
 *
 * Plan (all on env->stream; two host round trips):
 *  1. supp_in: each block finds the nation's key on the device (the last
 *     nation row whose name has the parameter's dictionary code, found on
 *     the host; none: no supplier) and marks a byte per dense suppkey, 1 for
 *     the nation's suppliers (a semi-join).
 *  2. ps_scan: one pass over partsupp (grid-stride); rows of those
 *     suppliers (1 in 25) read partkey, cost and quantity (late
 *     materialization) and add cost * qty to their part's slot of an int64
 *     array over the dense partkeys (one atomicAdd per row, ~4 rows per
 *     part in all: no hot keys) and mark the part; each block adds its
 *     rows' sum to the subquery's total (integers: exact, deterministic).
 *  3. The HAVING bound is computed on the device from the total (as values
 *     are whole hundredths, value > total * fraction exactly when value >
 *     floor(total * fraction) at scale 2, in __int128 as the CPU expert):
 *     no round trip for the total.
 *  4. part_count / tile_scan / part_write: an ordered compaction of the
 *     marked parts above the bound into (order, partkey) entries in
 *     ascending partkey order (tiles of 2048 keys: counts, one-block
 *     exclusive scan, then ballot-prefix writes; no atomics, so the list is
 *     the same every run). order = ~(value ^ sign bit): ascending order is
 *     value descending.
 *  5. The count and the bad-key flag come back (round trip 1), then the
 *     list (round trip 2; ~30k entries, 480 KB at SF10). The host sorts it
 *     stably by order with an LSD radix sort (11-bit digits, only the
 *     digits in which values differ: 3 passes at SF10); the list being in
 *     partkey order, that is value desc, then ps_partkey asc.
 *
 * Under a memory budget (env->budget streams partsupp by partition) step
 * 2 runs once per load of the four partsupp columns (dkb_stream with
 * DKB_STREAM_OVERLAP: the next load's copy overlaps this one's kernel),
 * each launch adding into the same part sums, marks and total (zeroed
 * once; integer adds: the same sums for any partitioning); the steps after
 * it read only part-sized memory. Without a budget the walk is one pass
 * over the whole columns (the same launch as before).
 *
 * Host cost (SF10, ~30k rows; measured on a 2-core x86 host): sort ~95 us
 * (glibc qsort before: ~3 ms). Round trips: 2 (before: 5, with the nation
 * columns and the total fetched separately).
 *
 * Bytes read (floor, SF10): ps_suppkey 4 B per row (8M: 32 MB) + ps_partkey,
 * ps_availqty 4 + 4 and ps_supplycost 8 B in the selected rows' sectors
 * (1 in 25 rows: most sectors of the 4-byte columns, ~1/3 of the cost's);
 * s_suppkey, s_nationkey (0.8 MB); 16 MB of part sums.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): partsupp is split by
 * partkey (part, supplier and nation whole on every rank: the part array
 * is over the whole table's keys), so a part's rows, and its group's sum,
 * are on one rank. After the walk the subquery's total and the bad-key
 * flag come to the host and are summed over the ranks in one all-reduce of
 * __int128 (dkb_ranks_sum_i128, as the CPU expert; the total narrowed back
 * to the 64 bits the one-rank atomics keep) and the total goes back to the
 * device, so steps 3-5 use the global bound on every rank; each rank's
 * sorted parts above it are gathered in rank order (dkb_ranks_gather) and
 * sorted again on rank 0 by (order, key) (value desc, then ps_partkey:
 * the same total order); the other ranks return no rows. A rank whose
 * share is empty still takes part (its walk is empty). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"  // defines: dkb_ranks_sum_i128, dkb_ranks_gather, dkb_ranks_writes

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: partsupp load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its total and its parts merged through env->comm */

enum { TPB = 256, NWARP = TPB / 32, MAXNAT = 256, TILE = 2048 };

/* A result row as the host sorts it: ascending order, then key, is value
 * desc, then ps_partkey asc. order = ~(value ^ sign bit): the sign flip
 * maps signed to unsigned order, the complement reverses it. */
typedef struct {
    unsigned long long order;
    unsigned long long key;
} entry;

#define SIGN_BIT 0x8000000000000000ull

/* in[key] = 1 for the suppliers of the nation whose name has dictionary code
 * code (its key: the last nation row with that name; none: no supplier);
 * in preset to 0; a key outside 0..maxkey sets *bad. */
__global__ void supp_in(const int32_t *__restrict__ skey, const int32_t *__restrict__ snat, int64_t ns,
                        int64_t maxkey, const int32_t *__restrict__ nkey, const uint8_t *__restrict__ nname,
                        int64_t nn, int code, uint8_t *__restrict__ in, int *__restrict__ bad) {
    __shared__ int64_t nk;
    if (threadIdx.x == 0) {
        int64_t k = -2; /* no nation of that name */
        for (int64_t i = 0; i < nn; i++)
            if (nname[i] == code) k = nkey[i];
        nk = k;
    }
    __syncthreads();
    if (nk < 0) return;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ns; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = skey[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        if (snat[i] == nk) in[k] = 1;
    }
}

/* sum[partkey] += cost * qty and has[partkey] = 1 for rows of marked
 * suppliers; *total += all those products. */
__global__ void __launch_bounds__(TPB) ps_scan(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                                               const int32_t *__restrict__ psqty, const int64_t *__restrict__ pscost,
                                               int64_t nps, const uint8_t *__restrict__ in, int64_t maxs,
                                               int64_t maxp, unsigned long long *__restrict__ sum,
                                               uint8_t *__restrict__ has, unsigned long long *__restrict__ total,
                                               int *__restrict__ bad) {
    __shared__ unsigned long long w[NWARP];
    unsigned long long t = 0;
    int oops = 0;
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < nps; i += (int64_t)gridDim.x * TPB) {
        const int64_t s = __ldg(pssupp + i);
        if (s < 0 || s > maxs) {
            oops = 1;
            continue;
        }
        if (!__ldg(in + s)) continue;
        const int64_t p = __ldg(pspart + i);
        if (p < 0 || p > maxp) {
            oops = 1;
            continue;
        }
        const int64_t v = __ldg(pscost + i) * (int64_t)__ldg(psqty + i);
        atomicAdd(&sum[p], (unsigned long long)v);
        has[p] = 1;
        t += (unsigned long long)v;
    }
    if (oops) *bad = 1;
    for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(DKB_FULL_MASK, t, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) w[warp] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long s = 0;
        for (int k = 0; k < NWARP; k++) s += w[k];
        if (s) atomicAdd(total, s);
    }
}

/* The HAVING bound: total * fraction at the values' scale truncated to an
 * integer (fraction = fi / 10^fscale, fi >= 0; __int128, as the CPU
 * expert), clamped to int64 (*below: it was under INT64_MIN, every value
 * is above it). As values are whole units of that scale, value > bound
 * exactly when value > total * fraction (for total >= 0). */
__device__ static long long having_bound(unsigned long long total, long long fi, int fscale, bool *below) {
    __int128 unit = 1;
    for (int i = 0; i < fscale; i++) unit *= 10;
    __int128 b = (__int128)(long long)total * fi / unit;
    *below = b < (__int128)INT64_MIN;
    if (b > (__int128)INT64_MAX) b = INT64_MAX;
    if (b < (__int128)INT64_MIN) b = INT64_MIN;
    return (long long)b;
}

/* The keys 0..maxp fall in tiles of TILE keys; tile_count[t] = how many of
 * tile t's keys are marked with a sum above the bound. */
__global__ void __launch_bounds__(TPB) part_count(const unsigned long long *__restrict__ sum,
                                                  const uint8_t *__restrict__ has, int64_t maxp,
                                                  const unsigned long long *__restrict__ total, long long fi,
                                                  int fscale, int64_t ntiles, unsigned int *__restrict__ tile_count) {
    __shared__ long long bound_s;
    __shared__ bool below_s;
    __shared__ unsigned int tile_n;
    if (threadIdx.x == 0) bound_s = having_bound(*total, fi, fscale, &below_s);
    const int lane = threadIdx.x & 31;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (threadIdx.x == 0) tile_n = 0;
        __syncthreads();
        const long long bound = bound_s;
        const bool below = below_s;
        const int64_t end = (t + 1) * TILE <= maxp + 1 ? (t + 1) * TILE : maxp + 1;
        unsigned int n = 0;
        for (int64_t k = t * TILE + threadIdx.x; k < end; k += TPB)
            n += has[k] && ((long long)sum[k] > bound || below);
        for (int off = 16; off > 0; off >>= 1) n += __shfl_down_sync(DKB_FULL_MASK, n, off);
        if (lane == 0 && n) atomicAdd(&tile_n, n);
        __syncthreads();
        if (threadIdx.x == 0) tile_count[t] = tile_n;
    }
}

/* One block: tile_start[t] = the sum of tile_count[0..t) (exclusive prefix
 * sum, in order of t), *count = the sum of all. */
__global__ void __launch_bounds__(TPB) tile_scan(const unsigned int *__restrict__ tile_count, int64_t ntiles,
                                                 unsigned long long *__restrict__ tile_start,
                                                 unsigned long long *__restrict__ count) {
    __shared__ unsigned long long wsum[NWARP];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long carry = 0; /* the same in every thread */
    for (int64_t c0 = 0; c0 < ntiles; c0 += TPB) {
        const int64_t i = c0 + threadIdx.x;
        const unsigned long long x = i < ntiles ? tile_count[i] : 0;
        unsigned long long incl = x; /* inclusive prefix within the warp */
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned long long y = __shfl_up_sync(DKB_FULL_MASK, incl, o);
            if (lane >= o) incl += y;
        }
        if (lane == 31) wsum[warp] = incl;
        __syncthreads();
        unsigned long long before = 0, all = 0;
        for (int w = 0; w < NWARP; w++) {
            if (w < warp) before += wsum[w];
            all += wsum[w];
        }
        if (i < ntiles) tile_start[i] = carry + before + incl - x;
        carry += all;
        __syncthreads(); /* wsum is rewritten next round */
    }
    if (threadIdx.x == 0) *count = carry;
}

/* Writes (order of sum[key], key) for every marked key 0..maxp with a sum
 * above the bound to list, in ascending key order: tile t's entries from
 * tile_start[t] on, each round of TPB keys placed by a ballot prefix per
 * warp and the warps' counts (no atomics: the same list every run). */
__global__ void __launch_bounds__(TPB) part_write(const unsigned long long *__restrict__ sum,
                                                  const uint8_t *__restrict__ has, int64_t maxp,
                                                  const unsigned long long *__restrict__ total, long long fi,
                                                  int fscale, int64_t ntiles,
                                                  const unsigned long long *__restrict__ tile_start,
                                                  entry *__restrict__ list) {
    __shared__ long long bound_s;
    __shared__ bool below_s;
    __shared__ unsigned int wtot[NWARP];
    if (threadIdx.x == 0) bound_s = having_bound(*total, fi, fscale, &below_s);
    __syncthreads();
    const long long bound = bound_s;
    const bool below = below_s;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        unsigned long long at = tile_start[t];
        const int64_t end = (t + 1) * TILE <= maxp + 1 ? (t + 1) * TILE : maxp + 1;
        /* every thread of the block runs the same rounds (ballots, barriers) */
        for (int64_t k0 = t * TILE; k0 < end; k0 += TPB) {
            const int64_t k = k0 + threadIdx.x;
            const long long v = k < end && has[k] ? (long long)sum[k] : 0;
            const bool take = k < end && has[k] && (v > bound || below);
            const unsigned int m = __ballot_sync(DKB_FULL_MASK, take);
            if (lane == 0) wtot[warp] = (unsigned int)__popc(m);
            __syncthreads();
            unsigned long long before = 0, all = 0;
            for (int w = 0; w < NWARP; w++) {
                if (w < warp) before += wtot[w];
                all += wtot[w];
            }
            if (take) {
                entry e;
                e.order = ~((unsigned long long)v ^ SIGN_BIT);
                e.key = (unsigned long long)k;
                list[at + before + (unsigned int)__popc(m & ((1u << lane) - 1u))] = e;
            }
            at += all;
            __syncthreads(); /* wtot is rewritten next round */
        }
    }
}

/* Sorts a[0..n) stably by order, ascending (tmp: room for n entries): LSD
 * radix over 11-bit digits, skipping the digits in which all entries agree
 * (a stable pass over such a digit changes nothing). With a in ascending
 * key order that is (order, key) ascending: value desc, then ps_partkey
 * asc. Returns the array that holds the result (a or tmp). */
static entry *sort_by_order(entry *a, entry *tmp, int64_t n) {
    enum { BITS = 11, RADIX = 1 << BITS };
    unsigned long long any = 0, all = ~0ull;
    for (int64_t i = 0; i < n; i++) any |= a[i].order, all &= a[i].order;
    const unsigned long long varies = any ^ all;
    int64_t start[RADIX];
    for (int lo = 0; lo < 64; lo += BITS) {
        if (!((varies >> lo) & (RADIX - 1))) continue;
        memset(start, 0, sizeof start);
        for (int64_t i = 0; i < n; i++) start[(a[i].order >> lo) & (RADIX - 1)]++;
        int64_t at = 0;
        for (int d = 0; d < RADIX; d++) {
            const int64_t c = start[d];
            start[d] = at;
            at += c;
        }
        for (int64_t i = 0; i < n; i++) tmp[start[(a[i].order >> lo) & (RADIX - 1)]++] = a[i];
        entry *x = a;
        a = tmp;
        tmp = x;
    }
    return a;
}

/* The count and the bad-key flag: they come back together. */
typedef struct {
    unsigned long long count;
    int bad;
} count_flag;

/* (order, key) ascending: value desc, then ps_partkey asc (the ranks' merge) */
static int by_order_key(const void *pa, const void *pb) {
    const entry *a = (const entry *)pa, *b = (const entry *)pb;
    if (a->order != b->order) return a->order < b->order ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

/* Across ranks (nranks > 1): this rank's total (*d_total) and bad-key flag
 * (*d_bad) summed over the ranks in one all-reduce; the total back into
 * *d_total; *bad: some rank's flag was set. */
static int ranks_total(const dkb_cand_env *env, unsigned long long *d_total, const int *d_bad, cudaStream_t stream,
                       int *bad) {
    unsigned long long total = 0;
    int flag = 0;
    if (cudaMemcpyAsync(&total, d_total, sizeof total, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
        cudaMemcpyAsync(&flag, d_bad, sizeof flag, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
        return DKB_CAND_ECUDA; /* the others' all-reduce then fails */
    __int128 buf[2] = {(__int128)(long long)total, (__int128)(flag != 0)};
    const int rc = dkb_ranks_sum_i128(env, buf, 2);
    if (rc) return rc;
    *bad = buf[1] != 0;
    total = (unsigned long long)buf[0]; /* the low 64 bits: the one-rank atomics' wrapped sum */
    if (cudaMemcpyAsync(d_total, &total, sizeof total, cudaMemcpyHostToDevice, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
        return DKB_CAND_ECUDA;
    return DKB_CAND_OK;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *pkey, *skey, *snat, *pspart, *pssupp, *psqty, *pscost;
    const dkb_cand_param *nation, *fraction;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "part", "p_partkey", &pkey) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_availqty:i32 ps_supplycost:i64", &pspart,
                      &pssupp, &psqty, &pscost) ||
        DKB_BIND_PARAMS(params, "nation:str fraction", &nation, &fraction))
        return DKB_CAND_EINVAL;
    if (nkey->n > MAXNAT || res->ncols != 2 || res->cols[0].type != DKB_CAND_RES_INT ||
        res->cols[1].type != DKB_CAND_RES_DECIMAL || res->cols[1].scale < pscost->scale || fraction->scale < 0 ||
        fraction->scale > 30 || fraction->i < 0)
        return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    const int code = dkb_cand_dict_code(nname->dict, nation->s);
    const int64_t ns = skey->n, nps = pspart->n, maxs = ns, maxp = pkey->n; /* dense keys 1..N */
    int rc = 0, sms = 0;
    int64_t n = 0;
    uint8_t *d_in = NULL, *d_has = NULL;
    unsigned long long *d_sum = NULL, *d_total = NULL, *d_tile_start = NULL;
    unsigned int *d_tile_count = NULL;
    const int64_t ntiles = (maxp + 1 + TILE - 1) / TILE;
    entry *d_list = NULL, *h_list = NULL, *h_tmp = NULL, *sorted = NULL;
    count_flag h_small = {0, 0}, *d_small = NULL;
    void *d_block = NULL;
    dkb_cand_res_col *c_key = &res->cols[0], *c_val = &res->cols[1];
    static const char *const PSCOLS[] = {"ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost"};
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */

    if (code >= 0 && nkey->n > 0 && ns > 0 && (nps > 0 || env->nranks > 1) && maxp > 0) { /* ranks: all take part */
        DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
        const dkb_dev_part parts[] = {
            {(void **)&d_in, (size_t)maxs + 1, 0},
            {(void **)&d_has, (size_t)maxp + 1, 0},
            {(void **)&d_sum, sizeof(unsigned long long) * (size_t)(maxp + 1), 0},
            {(void **)&d_total, sizeof(unsigned long long), 0},
            {(void **)&d_small, sizeof h_small, 0},
            {(void **)&d_list, sizeof(entry) * (size_t)(maxp + 1), DKB_NO_FILL},
            {(void **)&d_tile_count, sizeof(unsigned int) * (size_t)ntiles, DKB_NO_FILL},
            {(void **)&d_tile_start, sizeof(unsigned long long) * (size_t)ntiles, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        unsigned long long *d_count = &d_small->count;
        int *d_bad = &d_small->bad;
        supp_in<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)skey->data, (const int32_t *)snat->data, ns,
                                                         maxs, (const int32_t *)nkey->data,
                                                         (const uint8_t *)nname->data, nkey->n, code, d_in, d_bad);
        DKB_CUDA_TRY("supp_in launch", cudaGetLastError());
        /* partsupp: the whole columns in one pass, or under a budget load by load
         * (each launch adds its rows into d_sum, d_has and d_total) */
        for (dkb_stream_begin_ex(&st, db, env, 4, PSCOLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int64_t nl = st.cols[0].n;
            if (nl <= 0) continue;
            ps_scan<<<(unsigned)(sms * 8), TPB, 0, stream>>>(
                (const int32_t *)st.cols[0].data, (const int32_t *)st.cols[1].data, (const int32_t *)st.cols[2].data,
                (const int64_t *)st.cols[3].data, nl, d_in, maxs, maxp, d_sum, d_has, d_total, d_bad);
            DKB_CUDA_TRY("ps_scan launch", cudaGetLastError());
        }
        rc = dkb_stream_end(&st);
        if (rc) goto done;
        if (env->nranks > 1) { /* the subquery's total (and the flag) over every rank's rows */
            int any_bad = 0;
            DKB_TRY(ranks_total(env, d_total, d_bad, stream, &any_bad));
            DKB_FAIL_IF(any_bad, DKB_CAND_EINTERNAL, "q11.full.cu: a supplier or part key outside 1..N, on some rank\n");
        }
        const unsigned grid = (unsigned)(ntiles < (int64_t)sms * 8 ? ntiles : (int64_t)sms * 8);
        part_count<<<grid, TPB, 0, stream>>>(d_sum, d_has, maxp, d_total, (long long)fraction->i, fraction->scale,
                                             ntiles, d_tile_count);
        DKB_CUDA_TRY("part_count launch", cudaGetLastError());
        tile_scan<<<1, TPB, 0, stream>>>(d_tile_count, ntiles, d_tile_start, d_count);
        DKB_CUDA_TRY("tile_scan launch", cudaGetLastError());
        part_write<<<grid, TPB, 0, stream>>>(d_sum, d_has, maxp, d_total, (long long)fraction->i, fraction->scale,
                                             ntiles, d_tile_start, d_list);
        DKB_CUDA_TRY("part_write launch", cudaGetLastError());
        {
            const dkb_host_copy back[] = {{&h_small, d_small, sizeof h_small}};
            DKB_CUDA_TRY("copy back count and flag", dkb_copy_back(back, DKB_COUNT(back), stream));
        }
        DKB_FAIL_IF(h_small.bad, DKB_CAND_EINTERNAL, "q11.full.cu: a supplier or part key outside 1..N\n");
        DKB_FAIL_IF(h_small.count > (unsigned long long)res->cap, DKB_CAND_ECAP,
                    "q11.full.cu: %llu rows over the result's capacity\n", h_small.count);
        n = (int64_t)h_small.count;
        if (n > 0) {
            h_list = (entry *)malloc(sizeof(entry) * (size_t)n);
            h_tmp = (entry *)malloc(sizeof(entry) * (size_t)n);
            DKB_FAIL_IF(!h_list || !h_tmp, DKB_CAND_ENOMEM, "q11.full.cu: out of host memory for %lld rows\n",
                        (long long)n);
            const dkb_host_copy back[] = {{h_list, d_list, sizeof(entry) * (size_t)n}};
            DKB_CUDA_TRY("copy back list", dkb_copy_back(back, DKB_COUNT(back), stream));
            sorted = sort_by_order(h_list, h_tmp, n);
        }
        if (env->nranks > 1) { /* every rank's parts above the bound, in one order; rank 0 writes */
            entry none = {0, 0};
            void *every = NULL;
            int64_t ne = 0;
            DKB_TRY(dkb_ranks_gather(env, sorted ? sorted : &none, n, sizeof(entry), &every, &ne));
            free(h_list), free(h_tmp);
            h_list = (entry *)every, h_tmp = NULL, sorted = NULL, n = 0; /* freed at done: */
            if (!dkb_ranks_writes(env, res)) goto done;
            DKB_FAIL_IF(ne > res->cap, DKB_CAND_ECAP, "q11.full.cu: %lld rows over the result's capacity\n",
                        (long long)ne);
            qsort(h_list, (size_t)ne, sizeof(entry), by_order_key);
            sorted = h_list, n = ne;
        }
    }
    {
        __int128 up = 1; /* the result's scale over the values' */
        for (int s = pscost->scale; s < c_val->scale; s++) up *= 10;
        for (int64_t r = 0; r < n; r++) { /* is_null starts zeroed */
            c_key->i64[r] = (int64_t)sorted[r].key;
            c_val->dec[r] = (__int128)(long long)(~sorted[r].order ^ SIGN_BIT) * up;
        }
    }
    res->nrows = n;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    free(h_list);
    free(h_tmp);
    return rc;
}
