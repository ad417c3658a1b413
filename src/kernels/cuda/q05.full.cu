/* q05.full.cu: expert CUDA full-mode candidate for TPC-H Q5 (Local
 * Supplier Volume).
 *
 *   select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
 *   from customer, orders, lineitem, supplier, nation, region
 *   where c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and l_suppkey = s_suppkey and c_nationkey = s_nationkey
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *     and r_name = ':region' and o_orderdate >= date ':date'
 *     and o_orderdate < date ':date' + interval '1' year
 *   group by n_name order by revenue desc;
 *
 * Plan (all on env->stream):
 *  1. Host: region and nation (25 rows) copied back; the region's test on
 *     the dictionary code gives a nation mask (in_region[nationkey]).
 *  2. key_nation: customers and suppliers become int8 arrays over their
 *     dense keys 1..N holding the nation key when it is in the region, else
 *     -1, so c_nationkey = s_nationkey folds into one compare.
 *  3. chunk_bounds: orders cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so a chunk's items are one
 *     range (a warp per chunk: a 65-ary search on l_orderkey, 4 dependent
 *     rounds at SF10).
 *  4. q05_join (partition-local, persistent blocks over chunks): each order
 *     of the chunk gets its customer's nation if the order is in the year
 *     (shared memory); the chunk's items are read in tiles, each row's order
 *     found by counting run starts (ballot + popc + a warp prefix, checked
 *     against o_orderkey at run starts); only items of passing orders read
 *     l_suppkey, then price and discount (late materialization). Matches
 *     (about 1 item in 200) add to per-warp nation sums in shared memory
 *     (int64, scale 4), merged per block into int64 partials.
 *  5. acc_partials adds the blocks' partials per nation in __int128 in a
 *     fixed order (into sums zeroed once); 256 x (sum, count) come back;
 *     sorted by revenue desc.
 *
 * Under a memory budget (env->budget streaming orders and lineitem,
 * co-partitioned by orderkey: a load's line items are exactly those of its
 * orders) steps 3 to 5 run once per load (a dkb_stream walk over both
 * tables' columns, DKB_STREAM_OVERLAP: the next load's copy overlaps this
 * load's kernels): the chunks are the load's orders' chunks, their bounds
 * found in the load's l_orderkey; the join writes the pass's block partials
 * and acc_partials adds them into the __int128 sums (integers: the same
 * sums for any partitioning). No host sync per load; one copy back at the
 * end. Without a budget the walk is one pass over the whole columns, as
 * before (acc_partials into zeroed sums is the sum_partials of before).
 *
 * Bytes read (floor, SF10): l_orderkey, l_suppkey 4 + 4, l_extendedprice,
 * l_discount 8 + 8 per item (60M: 1.44 GB; only passing orders' sectors of
 * the last three in practice), o_orderkey, o_custkey, o_orderdate 12 B per
 * order (0.18 GB), c_custkey, c_nationkey, s_suppkey, s_nationkey (~13 MB). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i128, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

enum { TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, MAXNAT = 256, RED_TPB = 256 };

/* The streamed columns, orders' then lineitem's (st.cols[0..2] have the
 * load's orders rows, st.cols[3..6] its lineitem rows). */
static const char *const Q05_COLS[] = {"o_orderkey", "o_custkey",       "o_orderdate", "l_orderkey",
                                       "l_suppkey",  "l_extendedprice", "l_discount"};

/* out[k] += the sum over blocks b < nblocks of partial[b * K + k] (int64),
 * in __int128, in a fixed order (dkb_sum_partials, adding instead of
 * storing: out accumulates over the passes of a walk). Launch K blocks of
 * RED_TPB threads (a power of two). */
__global__ void __launch_bounds__(RED_TPB)
    acc_partials(const int64_t *__restrict__ partial, int64_t nblocks, int K, __int128 *__restrict__ out) {
    __shared__ __int128 sh[RED_TPB];
    const int k = blockIdx.x;
    __int128 s = 0;
    for (int64_t b = threadIdx.x; b < nblocks; b += RED_TPB) s += partial[b * K + k];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = RED_TPB / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[k] += sh[0];
}

/* The region's nations, by nation key (kernel argument). */
typedef struct {
    int8_t in[MAXNAT];
} nation_mask;

/* out[key] = nation of the row when in the region, else stays -1 (the
 * caller sets out to -1 first); keys outside 0..maxkey set *bad. */
__global__ void key_nation(const int32_t *__restrict__ key, const int32_t *__restrict__ nat, int64_t n, int64_t maxkey,
                           nation_mask mask, int8_t *__restrict__ out, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = key[i];
        const int32_t v = nat[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        if (v >= 0 && v < MAXNAT && mask.in[v]) out[k] = (int8_t)v;
    }
}

/* partial[(block * MAXNAT + nation) * 2 + {0, 1}] = the block's revenue sum
 * (scale 4) and item count per nation. */
__global__ void __launch_bounds__(TPB) q05_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ ocust,
                                                const int32_t *__restrict__ odate, int64_t no,
                                                const int32_t *__restrict__ lkey, const int32_t *__restrict__ lsupp,
                                                const int64_t *__restrict__ lprice, const int64_t *__restrict__ ldisc,
                                                const int64_t *__restrict__ bound, int64_t nchunks,
                                                const int8_t *__restrict__ c_nat, int64_t maxc,
                                                const int8_t *__restrict__ s_nat, int64_t maxs, int32_t lo_day,
                                                uint32_t width, int64_t *__restrict__ partial, int *__restrict__ bad) {
    __shared__ int8_t cn_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ unsigned long long wsum[NWARP][MAXNAT];
    __shared__ unsigned int wcnt[NWARP][MAXNAT];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int i = tid; i < NWARP * MAXNAT; i += TPB) {
        (&wsum[0][0])[i] = 0;
        (&wcnt[0][0])[i] = 0;
    }
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const int64_t o0 = c * OCHUNK;
        const int nord = (int)(no - o0 < OCHUNK ? no - o0 : OCHUNK);
        const int64_t j0 = bound[c], j1 = bound[c + 1];
        /* 1. the chunk's orders: in the year, and the customer's nation if in the region */
        for (int o = tid; o < OCHUNK; o += TPB) {
            int8_t cn = -1;
            if (o < nord && (uint32_t)(odate[o0 + o] - lo_day) < width) {
                const int64_t cu = ocust[o0 + o];
                if (cu >= 0 && cu <= maxc) cn = c_nat[cu];
            }
            cn_s[o] = cn;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile */
        int carry = 0, parity = 0;
        for (int64_t base = j0; base < j1; base += TPB, parity ^= 1) {
            const int64_t j = base + tid;
            const bool active = j < j1;
            const int32_t key = active ? lkey[j] : 0;
            int32_t prev = __shfl_up_sync(DKB_FULL_MASK, key, 1);
            if (lane == 0 && active && j > j0) prev = lkey[j - 1];
            const bool start = active && (j == j0 || key != prev);
            int before_me, incl;
            dkb_chunk_tile_runs<NWARP>(start, lane, warp, wtot[parity], carry, before_me, incl);
            if (!active) continue;
            const int idx = before_me + incl - 1;
            if (idx < 0 || idx >= nord) {
                oops = 1;
                continue;
            }
            const int cn = cn_s[idx];
            if (cn < 0) continue;
            if (start && okey[o0 + idx] != key) oops = 1;
            const int64_t su = lsupp[j];
            if (su < 0 || su > maxs || s_nat[su] != cn) continue;
            const int64_t v = ldisc[j];
            atomicAdd(&wsum[warp][cn], (unsigned long long)(lprice[j] * (100 - v)));
            atomicAdd(&wcnt[warp][cn], 1u);
        }
        __syncthreads();
    }
    if (oops) *bad = 1;
    __syncthreads();
    for (int k = tid; k < MAXNAT; k += TPB) {
        int64_t s = 0, h = 0;
        for (int w = 0; w < NWARP; w++) s += (int64_t)wsum[w][k], h += wcnt[w][k];
        partial[((int64_t)blockIdx.x * MAXNAT + k) * 2] = s;
        partial[((int64_t)blockIdx.x * MAXNAT + k) * 2 + 1] = h;
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *rkey, *rname, *nkey, *nname, *nreg, *ckey, *cnat, *skey, *snat, *okey, *ocust, *odate, *lkey,
        *lsupp, *lprice, *ldisc;
    const dkb_cand_param *region, *date;
    if (DKB_BIND_COLS(db, "region", "r_regionkey:i32 r_name:dict", &rkey, &rname) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict n_regionkey:i32", &nkey, &nname, &nreg) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_nationkey:i32", &ckey, &cnat) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32", &okey, &ocust, &odate) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_suppkey:i32 l_extendedprice:dec2 l_discount:dec2", &lkey,
                      &lsupp, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "region:str date", &region, &date))
        return DKB_CAND_EINVAL;
    if (res->ncols != 2 || res->cols[0].type != DKB_CAND_RES_STRING || res->cols[1].type != DKB_CAND_RES_DECIMAL ||
        res->cols[1].scale < 4)
        return DKB_CAND_EINVAL;
    if (nkey->n > MAXNAT || rkey->n > MAXNAT) return DKB_CAND_EINVAL;
    const int64_t hi_day = dkb_add_years(date->i, 1);
    if (date->i < INT32_MIN || hi_day > INT32_MAX) return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, sms = 0, h_bad = 0, ng = 0;
    int32_t h_rk[MAXNAT], h_nk[MAXNAT], h_nr[MAXNAT];
    uint8_t h_rn[MAXNAT], h_nn[MAXNAT];
    int name_of[MAXNAT];
    nation_mask mask;
    memset(&mask, 0, sizeof mask);
    const int64_t nc = ckey->n, ns = skey->n;
    const int64_t no = okey->n, nl = lkey->n; /* the whole tables' rows (also under a budget) */
    const int64_t maxc = nc, maxs = ns; /* dense keys 1..N */
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    const int K = MAXNAT * 2;
    int64_t grid = 0;
    int8_t *d_cnat = NULL, *d_snat = NULL;
    int64_t *d_bound = NULL, *d_part = NULL;
    __int128 *d_sum = NULL;
    int *d_bad = NULL;
    void *d_block = NULL;
    __int128 h_sum[MAXNAT * 2];
    typedef struct {
        __int128 rev;
        int nation;
    } group;
    group g[MAXNAT];
    dkb_cand_res_col *c_name = &res->cols[0], *c_rev = &res->cols[1];
    dkb_stream st;
    memset(&st, 0, sizeof st); /* dkb_stream_end at done: is a no-op until the walk begins */

    /* 1. the region's nations */
    DKB_CUDA_TRY("fetch region keys", dkb_copy_col_to_host(h_rk, rkey, sizeof(int32_t), stream));
    DKB_CUDA_TRY("fetch region names", dkb_copy_col_to_host(h_rn, rname, sizeof(uint8_t), stream));
    DKB_CUDA_TRY("fetch nation keys", dkb_copy_col_to_host(h_nk, nkey, sizeof(int32_t), stream));
    DKB_CUDA_TRY("fetch nation names", dkb_copy_col_to_host(h_nn, nname, sizeof(uint8_t), stream));
    DKB_CUDA_TRY("fetch nation regions", dkb_copy_col_to_host(h_nr, nreg, sizeof(int32_t), stream));
    {
        const int rcode = dkb_cand_dict_code(rname->dict, region->s);
        for (int64_t i = 0; i < nkey->n; i++) {
            if (h_nk[i] < 0 || h_nk[i] >= MAXNAT)
                DKB_FAIL(DKB_CAND_EINTERNAL);
            name_of[h_nk[i]] = h_nn[i];
            for (int64_t j = 0; j < rkey->n; j++)
                if (rcode >= 0 && h_rn[j] == rcode && h_rk[j] == h_nr[i]) mask.in[h_nk[i]] = 1;
        }
    }
    memset(h_sum, 0, sizeof h_sum);
    if (no > 0 && nl > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q05_join, TPB, 0, &sms, &grid));
        if (grid > nchunks) grid = nchunks;
        const dkb_dev_part parts[] = {
            {(void **)&d_cnat, (size_t)maxc + 1, 0xff},
            {(void **)&d_snat, (size_t)maxs + 1, 0xff},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
            {(void **)&d_part, sizeof(int64_t) * K * grid, DKB_NO_FILL},
            {(void **)&d_sum, sizeof(__int128) * K, 0}, /* acc_partials adds into it */
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        if (nc > 0)
            key_nation<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)ckey->data,
                                                                (const int32_t *)cnat->data, nc, maxc, mask, d_cnat,
                                                                d_bad);
        DKB_CUDA_TRY("key_nation customer launch", cudaGetLastError());
        if (ns > 0)
            key_nation<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)skey->data,
                                                                (const int32_t *)snat->data, ns, maxs, mask, d_snat,
                                                                d_bad);
        DKB_CUDA_TRY("key_nation supplier launch", cudaGetLastError());
        /* the whole columns (one pass), or under a budget one pass per load of
         * orders and lineitem partitions: the load's chunks, the join into the
         * pass's block partials, and those added into d_sum */
        for (dkb_stream_begin_ex(&st, db, env, 7, Q05_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int64_t pno = st.cols[0].n, pnl = st.cols[3].n; /* this pass's orders and line items */
            if (pno <= 0 || pnl <= 0) continue;                   /* no line item to count */
            const int64_t pch = (pno + OCHUNK - 1) / OCHUNK, pgrid = grid < pch ? grid : pch;
            DKB_FAIL_IF(pch > nchunks, DKB_CAND_EINTERNAL, "q05.full.cu: a load with more orders than the table\n");
            const int32_t *p_okey = (const int32_t *)st.cols[0].data, *p_lkey = (const int32_t *)st.cols[3].data;
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>(p_okey, p_lkey, pnl, pch, d_bound, stream));
            q05_join<<<(unsigned)pgrid, TPB, 0, stream>>>(
                p_okey, (const int32_t *)st.cols[1].data, (const int32_t *)st.cols[2].data, pno, p_lkey,
                (const int32_t *)st.cols[4].data, (const int64_t *)st.cols[5].data, (const int64_t *)st.cols[6].data,
                d_bound, pch, d_cnat, maxc, d_snat, maxs, (int32_t)date->i, (uint32_t)(hi_day - date->i), d_part,
                d_bad);
            DKB_CUDA_TRY("q05_join launch", cudaGetLastError());
            acc_partials<<<K, RED_TPB, 0, stream>>>(d_part, pgrid, K, d_sum); /* the pass's pgrid blocks' partials */
            DKB_CUDA_TRY("acc_partials launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        DKB_CUDA_TRY("cudaMemcpyAsync sums", cudaMemcpyAsync(h_sum, d_sum, sizeof(__int128) * K, cudaMemcpyDeviceToHost,
                                                         stream));
        DKB_CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL,
                    "q05.full.cu: a customer/supplier key outside 1..N or lineitem not grouped in orders' "
                    "order\n");
    }
    /* across ranks (orders and lineitem co-partitioned by orderkey, the rest
     * whole): every rank's exact (sum, count) per nation summed in one
     * all-reduce of __int128 (a rank with an empty share adds its zeros);
     * rank 0 writes */
    if (env->nranks > 1) {
        DKB_TRY(dkb_ranks_sum_i128(env, h_sum, K));
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    /* per nation present; order by revenue desc (ties: nation key, fixed) */
    for (int n = 0; n < MAXNAT; n++)
        if (h_sum[n * 2 + 1] != 0) g[ng].rev = h_sum[n * 2], g[ng].nation = n, ng++;
    for (int a = 1; a < ng; a++)
        for (int b = a; b > 0 && g[b].rev > g[b - 1].rev; b--) {
            const group t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    if (ng > res->cap)
        DKB_FAIL(DKB_CAND_ECAP);
    c_name->str_off[0] = 0;
    for (int r = 0; r < ng; r++) {
        const int code = name_of[g[r].nation];
        const int64_t at = c_name->str_off[r], len = (int64_t)nname->dict->len[code];
        if (code >= nname->dict->size || at + len > c_name->bytes_cap)
            DKB_FAIL(DKB_CAND_ECAP);
        memcpy(c_name->str_bytes + at, nname->dict->str[code], (size_t)len);
        c_name->str_off[r + 1] = at + len;
        __int128 v = g[r].rev;
        for (int s = 4; s < c_rev->scale; s++) v *= 10;
        c_rev->dec[r] = v;
        c_name->is_null[r] = c_rev->is_null[r] = 0;
    }
    res->nrows = ng;
done:
    dkb_stream_end(&st); /* a load still held after a failure (its work is enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
