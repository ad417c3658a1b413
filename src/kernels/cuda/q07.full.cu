/* q07.full.cu: expert CUDA full-mode candidate for TPC-H Q7 (Volume
 * Shipping).
 *
 *   select supp_nation, cust_nation, l_year, sum(volume) as revenue
 *   from (select n1.n_name as supp_nation, n2.n_name as cust_nation,
 *                extract(year from l_shipdate) as l_year,
 *                l_extendedprice * (1 - l_discount) as volume
 *         from supplier, lineitem, orders, customer, nation n1, nation n2
 *         where s_suppkey = l_suppkey and o_orderkey = l_orderkey
 *           and c_custkey = o_custkey and s_nationkey = n1.n_nationkey
 *           and c_nationkey = n2.n_nationkey
 *           and ((n1.n_name = ':nation1' and n2.n_name = ':nation2')
 *             or (n1.n_name = ':nation2' and n2.n_name = ':nation1'))
 *           and l_shipdate between date '1995-01-01' and date '1996-12-31') as shipping
 *   group by supp_nation, cust_nation, l_year order by supp_nation, cust_nation, l_year;
 *
 * Plan (all on env->stream):
 *  1. Host: nation (25 rows) copied back; the two names' dictionary codes
 *     give the two nation keys (a name absent: no rows).
 *  2. key_side: customers and suppliers become int8 arrays over their dense
 *     keys 1..N holding 0 or 1 (which of the two nations) or -1.
 *  3. chunk_bounds: orders cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so a chunk's items are one
 *     range (a warp per chunk: a 65-ary search on l_orderkey, 4 dependent
 *     rounds at SF10).
 *  4. q07_join (partition-local, persistent blocks over chunks): each order
 *     of the chunk gets its customer's side (shared memory); the chunk's
 *     items are read in tiles, each row's order found by counting run
 *     starts (ballot + popc + a per-warp prefix, checked against o_orderkey
 *     at run starts); only items of orders with a side read l_shipdate,
 *     then l_suppkey, then price and discount (late materialization). An
 *     item counts when its supplier is on the other side (the same side
 *     when both parameters name one nation); it adds to one of 2 x 2 x 2
 *     (supplier side, customer side, year) per-warp sums in shared memory
 *     (int64, scale 4), and each block adds its 8 sums and counts to global
 *     counters (integer atomics: exact and deterministic; the total of all
 *     lineitem revenue fits int64 up to SF ~4000).
 *  5. 8 (sum, count) come back; the groups present are sorted by
 *     (supplier name code, customer name code, year): codes are in string
 *     order.
 *
 * Under a memory budget (env->budget streaming orders and lineitem,
 * co-partitioned by orderkey: a load's line items are exactly those of its
 * orders) steps 3 and 4 run once per load (a dkb_stream walk over both
 * tables' columns, DKB_STREAM_OVERLAP: the next load's copy overlaps this
 * load's kernels): the chunks are the load's orders' chunks, their bounds
 * found in the load's l_orderkey, and the join adds into the same 8 sums
 * and counts (integers: the same values for any partitioning). No host
 * sync per load; one copy back at the end. Without a budget the walk is
 * one pass over the whole columns, as before.
 *
 * Bytes read (floor, SF10): o_orderkey, o_custkey 8 B per order (0.12 GB);
 * l_orderkey 4 B per item (0.24 GB) + l_shipdate, l_suppkey, price,
 * discount only in the sectors of the 2/25 orders whose customer is of one
 * of the nations; customer and supplier keys and nations (~13 MB). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i64, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

enum { TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, NGROUP = 8, MAXNAT = 256 };

/* The streamed columns, orders' then lineitem's (st.cols[0..1] have the
 * load's orders rows, st.cols[2..6] its lineitem rows). */
static const char *const Q07_COLS[] = {"o_orderkey", "o_custkey",       "l_orderkey", "l_suppkey",
                                       "l_shipdate", "l_extendedprice", "l_discount"};

/* out[key] = 0 when the row's nation is nk0, 1 when nk1 (nk0 first), else
 * stays -1 (the caller sets out to -1); keys outside 0..maxkey set *bad. */
__global__ void key_side(const int32_t *__restrict__ key, const int32_t *__restrict__ nat, int64_t n, int64_t maxkey,
                         int32_t nk0, int32_t nk1, int8_t *__restrict__ out, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = key[i];
        const int32_t v = nat[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        if (v == nk0) out[k] = 0;
        else if (v == nk1) out[k] = 1;
    }
}

/* sums[g], counts[g] += revenue (scale 4) and items of group
 * g = (supplier side * 2 + customer side) * 2 + (shipped in 1996). */
__global__ void __launch_bounds__(TPB) q07_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ ocust,
                                                int64_t no, const int32_t *__restrict__ lkey,
                                                const int32_t *__restrict__ lsupp, const int32_t *__restrict__ lship,
                                                const int64_t *__restrict__ lprice,
                                                const int64_t *__restrict__ ldisc, const int64_t *__restrict__ bound,
                                                int64_t nchunks, const int8_t *__restrict__ c_side, int64_t maxc,
                                                const int8_t *__restrict__ s_side, int64_t maxs, int same,
                                                int32_t d95, int32_t d96, uint32_t width,
                                                unsigned long long *__restrict__ sums,
                                                unsigned long long *__restrict__ counts, int *__restrict__ bad) {
    __shared__ int8_t cs_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ unsigned long long wsum[NWARP][NGROUP];
    __shared__ unsigned int wcnt[NWARP][NGROUP];
    const int tid = threadIdx.x, warp = tid >> 5;
    for (int i = tid; i < NWARP * NGROUP; i += TPB) {
        (&wsum[0][0])[i] = 0;
        (&wcnt[0][0])[i] = 0;
    }
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const dkb_chunk ch = dkb_chunk_at<OCHUNK>(c, no, bound);
        /* 1. the chunk's orders: the customer's side */
        for (int o = tid; o < OCHUNK; o += TPB) {
            int8_t cs = -1;
            if (o < ch.nord) {
                const int64_t cu = ocust[ch.o0 + o];
                if (cu >= 0 && cu <= maxc) cs = c_side[cu];
                else oops = 1;
            }
            cs_s[o] = cs;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile */
        dkb_chunk_items<NWARP>(lkey, ch, wtot, oops, [&](int64_t j, int idx, bool start, int32_t key) {
            const int cs = cs_s[idx];
            if (cs < 0) return;
            if (start && okey[ch.o0 + idx] != key) oops = 1;
            const int32_t sd = lship[j];
            if ((uint32_t)(sd - d95) >= width) return;
            const int64_t su = lsupp[j];
            const int want = same ? 0 : 1 - cs; /* the supplier's side */
            if (su < 0 || su > maxs) {
                oops = 1;
                return;
            }
            if (s_side[su] != want) return;
            const int g = (want * 2 + cs) * 2 + (sd >= d96);
            atomicAdd(&wsum[warp][g], (unsigned long long)(lprice[j] * (100 - ldisc[j])));
            atomicAdd(&wcnt[warp][g], 1u);
        });
        __syncthreads();
    }
    if (oops) *bad = 1;
    __syncthreads();
    if (tid < NGROUP) {
        unsigned long long s = 0, h = 0;
        for (int w = 0; w < NWARP; w++) s += wsum[w][tid], h += wcnt[w][tid];
        if (h) {
            atomicAdd(&sums[tid], s);
            atomicAdd(&counts[tid], h);
        }
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *ckey, *cnat, *skey, *snat, *okey, *ocust, *lkey, *lsupp, *lship, *lprice, *ldisc;
    const dkb_cand_param *p1, *p2;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_nationkey:i32", &ckey, &cnat) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32", &okey, &ocust) ||
        DKB_BIND_COLS(db, "lineitem",
                      "l_orderkey:i32 l_suppkey:i32 l_shipdate:i32 l_extendedprice:dec2 l_discount:dec2", &lkey, &lsupp,
                      &lship, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "nation1:str nation2:str", &p1, &p2))
        return DKB_CAND_EINVAL;
    if (nkey->n > MAXNAT || res->ncols != 4 || res->cols[0].type != DKB_CAND_RES_STRING ||
        res->cols[1].type != DKB_CAND_RES_STRING || res->cols[2].type != DKB_CAND_RES_INT ||
        res->cols[3].type != DKB_CAND_RES_DECIMAL || res->cols[3].scale < 4)
        return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    const int code[2] = {dkb_cand_dict_code(nname->dict, p1->s), dkb_cand_dict_code(nname->dict, p2->s)};
    const int64_t nc = ckey->n, ns = skey->n, no = okey->n, nl = lkey->n; /* whole tables' rows (also under a budget) */
    const int64_t maxc = nc, maxs = ns; /* dense keys 1..N */
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    const int32_t d95 = (int32_t)dkb_days_from_civil(1995, 1, 1), d96 = (int32_t)dkb_days_from_civil(1996, 1, 1);
    const uint32_t width = (uint32_t)(dkb_days_from_civil(1997, 1, 1) - d95);
    int rc = 0, sms = 0, h_bad = 0, ng = 0, same = 0;
    int64_t grid = 0, nk[2] = {-2, -2}; /* -2: name absent */
    int32_t h_nk[MAXNAT];
    uint8_t h_nn[MAXNAT];
    int8_t *d_cside = NULL, *d_sside = NULL;
    int64_t *d_bound = NULL;
    unsigned long long *d_acc = NULL, h_acc[2 * NGROUP]; /* sums then counts */
    int *d_bad = NULL;
    void *d_block = NULL;
    typedef struct {
        int scode, ccode, year;
        __int128 rev;
    } group;
    group g[NGROUP];
    dkb_cand_res_col *c_s = &res->cols[0], *c_c = &res->cols[1], *c_y = &res->cols[2], *c_r = &res->cols[3];
    dkb_stream st;
    memset(&st, 0, sizeof st); /* dkb_stream_end at done: is a no-op until the walk begins */
    memset(h_acc, 0, sizeof h_acc);

    /* 1. the two nations' keys */
    DKB_CUDA_TRY("fetch nation keys", dkb_copy_col_to_host(h_nk, nkey, sizeof(int32_t), stream));
    DKB_CUDA_TRY("fetch nation names", dkb_copy_col_to_host(h_nn, nname, sizeof(uint8_t), stream));
    for (int64_t i = 0; i < nkey->n; i++)
        for (int s = 0; s < 2; s++)
            if (code[s] >= 0 && h_nn[i] == code[s]) nk[s] = h_nk[i];
    same = nk[0] == nk[1];
    if (nk[0] >= 0 && nk[1] >= 0 && no > 0 && nl > 0 && nc > 0 && ns > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q07_join, TPB, 0, &sms, &grid));
        if (grid > nchunks) grid = nchunks;
        const dkb_dev_part parts[] = {
            {(void **)&d_cside, (size_t)maxc + 1, 0xff},
            {(void **)&d_sside, (size_t)maxs + 1, 0xff},
            {(void **)&d_acc, sizeof h_acc, 0},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* 2. each customer's and supplier's side, the chunks' line item ranges, the join */
        key_side<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)ckey->data, (const int32_t *)cnat->data,
                                                          nc, maxc, (int32_t)nk[0], (int32_t)nk[1], d_cside, d_bad);
        DKB_CUDA_TRY("key_side customer launch", cudaGetLastError());
        key_side<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)skey->data, (const int32_t *)snat->data,
                                                          ns, maxs, (int32_t)nk[0], (int32_t)nk[1], d_sside, d_bad);
        DKB_CUDA_TRY("key_side supplier launch", cudaGetLastError());
        /* the whole columns (one pass), or under a budget one pass per load of
         * orders and lineitem partitions: the load's chunks and join, into d_acc */
        for (dkb_stream_begin_ex(&st, db, env, 7, Q07_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int64_t pno = st.cols[0].n, pnl = st.cols[2].n; /* this pass's orders and line items */
            if (pno <= 0 || pnl <= 0) continue;                   /* no line item to count */
            const int64_t pch = (pno + OCHUNK - 1) / OCHUNK;
            DKB_FAIL_IF(pch > nchunks, DKB_CAND_EINTERNAL, "q07.full.cu: a load with more orders than the table\n");
            const int32_t *p_okey = (const int32_t *)st.cols[0].data, *p_lkey = (const int32_t *)st.cols[2].data;
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>(p_okey, p_lkey, pnl, pch, d_bound, stream));
            q07_join<<<(unsigned)(grid < pch ? grid : pch), TPB, 0, stream>>>(
                p_okey, (const int32_t *)st.cols[1].data, pno, p_lkey, (const int32_t *)st.cols[3].data,
                (const int32_t *)st.cols[4].data, (const int64_t *)st.cols[5].data, (const int64_t *)st.cols[6].data,
                d_bound, pch, d_cside, maxc, d_sside, maxs, same, d95, d96, width, d_acc, d_acc + NGROUP, d_bad);
            DKB_CUDA_TRY("q07_join launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        const dkb_host_copy back[] = {{h_acc, d_acc, sizeof h_acc}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL,
                    "q07.full.cu: a customer/supplier key outside 1..N or lineitem not grouped in orders' order\n");
    }
    /* across ranks (orders and lineitem co-partitioned by orderkey, the rest
     * whole): every rank's 8 sums and 8 counts summed in one all-reduce of
     * int64 (exact; a rank with an empty share adds its zeros); rank 0
     * writes */
    if (env->nranks > 1) {
        int64_t m[2 * NGROUP];
        for (int x = 0; x < 2 * NGROUP; x++) m[x] = (int64_t)h_acc[x];
        DKB_TRY(dkb_ranks_sum_i64(env, m, 2 * NGROUP));
        for (int x = 0; x < 2 * NGROUP; x++) h_acc[x] = (unsigned long long)m[x];
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    /* the groups present, by (supplier name code, customer name code, year): codes are in string order */
    for (int x = 0; x < NGROUP; x++) {
        if (!h_acc[NGROUP + x]) continue;
        const int ss = x >> 2, cs = (x >> 1) & 1;
        g[ng].scode = code[ss];
        g[ng].ccode = code[cs];
        g[ng].year = 1995 + (x & 1);
        g[ng].rev = (__int128)(int64_t)h_acc[x];
        ng++;
    }
    for (int a = 1; a < ng; a++)
        for (int b = a; b > 0; b--) {
            const group *p = &g[b - 1], *q = &g[b];
            const int gt = p->scode != q->scode   ? p->scode > q->scode
                           : p->ccode != q->ccode ? p->ccode > q->ccode
                                                  : p->year > q->year;
            if (!gt) break;
            const group t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    DKB_FAIL_IF(ng > res->cap, DKB_CAND_ECAP, "q07.full.cu: %d groups over the result's capacity\n", ng);
    c_s->str_off[0] = c_c->str_off[0] = 0;
    for (int r = 0; r < ng; r++) {
        DKB_FAIL_IF(dkb_put_dict(c_s, r, nname->dict, g[r].scode) != DKB_CAND_OK ||
                        dkb_put_dict(c_c, r, nname->dict, g[r].ccode) != DKB_CAND_OK,
                    DKB_CAND_ECAP, "q07.full.cu: nation names over the result's text capacity\n");
        c_y->i64[r] = g[r].year;
        c_y->is_null[r] = 0;
        dkb_put_dec(c_r, r, g[r].rev, 4);
    }
    res->nrows = ng;
done:
    dkb_stream_end(&st); /* a load still held after a failure (its work is enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
