/* q08.full.cu: expert CUDA full-mode candidate for TPC-H Q8 (National
 * Market Share).
 *
 *   select o_year, sum(case when nation = ':nation' then volume else 0 end)
 *                  / sum(volume) as mkt_share
 *   from (select extract(year from o_orderdate) as o_year,
 *                l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation
 *         from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
 *         where p_partkey = l_partkey and s_suppkey = l_suppkey
 *           and l_orderkey = o_orderkey and o_custkey = c_custkey
 *           and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey
 *           and r_name = ':region' and s_nationkey = n2.n_nationkey
 *           and o_orderdate between date '1995-01-01' and date '1996-12-31'
 *           and p_type = ':type') as all_nations
 *   group by o_year order by o_year;
 *
 * Plan (all on env->stream):
 *  1. Host: region and nation (25 rows) copied back; the region's code
 *     gives a nation mask, the nation's code its key.
 *  2. part_bitmap: the parts of the type (dictionary code) as a semi-join
 *     bitmap over the dense partkeys (atomicOr on distinct words; 250 KB at
 *     SF10, L2-resident); cust_in: a byte per dense custkey, 1 when the
 *     customer's nation is in the region; supp_is: a byte per dense
 *     suppkey, 1 when the supplier is of the nation.
 *  3. chunk_bounds: orders cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so a chunk's items are one
 *     range (a warp per chunk: a 65-ary search on l_orderkey, 4 dependent
 *     rounds at SF10).
 *  4. q08_join (partition-local, persistent blocks over chunks): each order
 *     of the chunk gets its year (0/1) when it is of 1995..1996 and its
 *     customer is of the region, else -1 (shared memory); the chunk's items
 *     are read in tiles, each row's order found by counting run starts
 *     (ballot + popc + a per-warp prefix, checked against o_orderkey at run
 *     starts); only items of passing orders read l_partkey (1 in 5 orders),
 *     and only items of the type (1 in 150) read supplier, price and
 *     discount (late materialization). Per-warp sums per (year, all |
 *     nation) in shared memory (int64, scale 4), one atomicAdd per block
 *     and counter (integers: exact and deterministic).
 *  5. 4 sums + 2 counts come back; the share is the quotient of the two
 *     exact sums as doubles, as the CPU expert (and the baseline) form it.
 *
 * Under a memory budget (env->budget streaming orders and lineitem,
 * co-partitioned by orderkey: a load's line items are exactly those of its
 * orders) steps 3 and 4 run once per load (a dkb_stream walk over both
 * tables' columns, DKB_STREAM_OVERLAP: the next load's copy overlaps this
 * load's kernels): the chunks are the load's orders' chunks, their bounds
 * found in the load's l_orderkey, and the join adds into the same 6
 * counters (integers: the same sums for any partitioning, so the same
 * quotient). No host sync per load; one copy back at the end. Without a
 * budget the walk is one pass over the whole columns, as before.
 *
 * Bytes read (floor, SF10): o_orderkey, o_custkey, o_orderdate 12 B per
 * order (0.18 GB); l_orderkey 4 B per item (0.24 GB) + l_partkey in the
 * sectors of passing orders (~1/5) + the rest for a few hundred thousand
 * items; part, customer, supplier keys and codes (~30 MB). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i64, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

enum { TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, MAXNAT = 256, NACC = 6 };

/* The streamed columns, orders' then lineitem's (st.cols[0..2] have the
 * load's orders rows, st.cols[3..7] its lineitem rows). */
static const char *const Q08_COLS[] = {"o_orderkey", "o_custkey", "o_orderdate",     "l_orderkey",
                                       "l_partkey",  "l_suppkey", "l_extendedprice", "l_discount"};

/* The region's nations, by nation key (kernel argument). */
typedef struct {
    uint8_t in[MAXNAT];
} nation_mask;

/* bits[k >> 5] bit (k & 31) for every part key k of type code tcode; a key
 * outside 0..maxkey sets *bad. */
__global__ void part_bitmap(const int32_t *__restrict__ pkey, const uint8_t *__restrict__ ptype, int64_t np,
                            int tcode, int64_t maxkey, uint32_t *__restrict__ bits, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = pkey[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        if ((int)ptype[i] == tcode) atomicOr(&bits[k >> 5], 1u << (k & 31));
    }
}

/* out[key] = 1 when the row's nation is in mask (out preset to 0); keys
 * outside 0..maxkey set *bad. */
__global__ void key_in_mask(const int32_t *__restrict__ key, const int32_t *__restrict__ nat, int64_t n,
                            int64_t maxkey, nation_mask mask, uint8_t *__restrict__ out, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = key[i];
        const int32_t v = nat[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        if (v >= 0 && v < MAXNAT && mask.in[v]) out[k] = 1;
    }
}

/* acc[y * 2 + {0, 1}] += volume of all / of the nation's suppliers (scale 4)
 * in year 1995 + y; acc[4 + y] += items counted in year 1995 + y. */
__global__ void __launch_bounds__(TPB) q08_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ ocust,
                                                const int32_t *__restrict__ odate, int64_t no,
                                                const int32_t *__restrict__ lkey, const int32_t *__restrict__ lpart,
                                                const int32_t *__restrict__ lsupp, const int64_t *__restrict__ lprice,
                                                const int64_t *__restrict__ ldisc, const int64_t *__restrict__ bound,
                                                int64_t nchunks, const uint32_t *__restrict__ pbits, int64_t maxp,
                                                const uint8_t *__restrict__ c_in, int64_t maxc,
                                                const uint8_t *__restrict__ s_is, int64_t maxs, int32_t d95,
                                                int32_t d96, uint32_t width, unsigned long long *__restrict__ acc,
                                                int *__restrict__ bad) {
    __shared__ int8_t year_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ unsigned long long wacc[NWARP][NACC];
    const int tid = threadIdx.x, warp = tid >> 5;
    for (int i = tid; i < NWARP * NACC; i += TPB) (&wacc[0][0])[i] = 0;
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const dkb_chunk ch = dkb_chunk_at<OCHUNK>(c, no, bound);
        /* 1. the chunk's orders: 1995..1996 and a customer of the region */
        for (int o = tid; o < OCHUNK; o += TPB) {
            int8_t y = -1;
            if (o < ch.nord) {
                const int32_t d = odate[ch.o0 + o];
                if ((uint32_t)(d - d95) < width) {
                    const int64_t cu = ocust[ch.o0 + o];
                    if (cu < 0 || cu > maxc) oops = 1;
                    else if (c_in[cu]) y = (int8_t)(d >= d96);
                }
            }
            year_s[o] = y;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile */
        dkb_chunk_items<NWARP>(lkey, ch, wtot, oops, [&](int64_t j, int idx, bool start, int32_t key) {
            const int y = year_s[idx];
            if (y < 0) return;
            if (start && okey[ch.o0 + idx] != key) oops = 1;
            const int64_t pa = lpart[j];
            if (pa < 0 || pa > maxp) {
                oops = 1;
                return;
            }
            if (!((pbits[pa >> 5] >> (pa & 31)) & 1u)) return;
            const int64_t su = lsupp[j];
            if (su < 0 || su > maxs) {
                oops = 1;
                return;
            }
            const unsigned long long v = (unsigned long long)(lprice[j] * (100 - ldisc[j]));
            atomicAdd(&wacc[warp][y * 2], v);
            if (s_is[su]) atomicAdd(&wacc[warp][y * 2 + 1], v);
            atomicAdd(&wacc[warp][4 + y], 1ull);
        });
        __syncthreads();
    }
    if (oops) *bad = 1;
    __syncthreads();
    if (tid < NACC) {
        unsigned long long s = 0;
        for (int w = 0; w < NWARP; w++) s += wacc[w][tid];
        if (s) atomicAdd(&acc[tid], s);
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *rkey, *rname, *nkey, *nname, *nreg, *pkey, *ptype, *ckey, *cnat, *skey, *snat, *okey, *ocust,
        *odate, *lkey, *lpart, *lsupp, *lprice, *ldisc;
    const dkb_cand_param *nation, *region, *type;
    if (DKB_BIND_COLS(db, "region", "r_regionkey:i32 r_name:dict", &rkey, &rname) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict n_regionkey:i32", &nkey, &nname, &nreg) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_type:dict", &pkey, &ptype) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_nationkey:i32", &ckey, &cnat) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32", &okey, &ocust, &odate) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_partkey:i32 l_suppkey:i32 l_extendedprice:dec2 l_discount:dec2",
                      &lkey, &lpart, &lsupp, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "nation:str region:str type:str", &nation, &region, &type))
        return DKB_CAND_EINVAL;
    if (nkey->n > MAXNAT || rkey->n > MAXNAT || res->ncols != 2 || res->cols[0].type != DKB_CAND_RES_INT ||
        res->cols[1].type != DKB_CAND_RES_FLOAT)
        return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    const int rcode = dkb_cand_dict_code(rname->dict, region->s);
    const int ncode = dkb_cand_dict_code(nname->dict, nation->s);
    const int tcode = dkb_cand_dict_code(ptype->dict, type->s);
    const int64_t np = pkey->n, nc = ckey->n, ns = skey->n;
    const int64_t no = okey->n, nl = lkey->n; /* the whole tables' rows (also under a budget) */
    const int64_t maxp = np, maxc = nc, maxs = ns; /* dense keys 1..N */
    const int64_t pwords = (maxp >> 5) + 1;
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    const int32_t d95 = (int32_t)dkb_days_from_civil(1995, 1, 1), d96 = (int32_t)dkb_days_from_civil(1996, 1, 1);
    const uint32_t width = (uint32_t)(dkb_days_from_civil(1997, 1, 1) - d95);
    int rc = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, r = 0, target = -2; /* -2: nation name absent (no supplier matches) */
    int32_t h_rk[MAXNAT], h_nk[MAXNAT], h_nr[MAXNAT];
    uint8_t h_rn[MAXNAT], h_nn[MAXNAT];
    nation_mask in_region, is_target;
    uint32_t *d_pbits = NULL;
    uint8_t *d_cin = NULL, *d_sis = NULL;
    int64_t *d_bound = NULL;
    unsigned long long *d_acc = NULL, h_acc[NACC];
    int *d_bad = NULL;
    void *d_block = NULL;
    dkb_cand_res_col *c_year = &res->cols[0], *c_share = &res->cols[1];
    memset(&in_region, 0, sizeof in_region);
    memset(&is_target, 0, sizeof is_target);
    dkb_stream st;
    memset(&st, 0, sizeof st); /* dkb_stream_end at done: is a no-op until the walk begins */
    memset(h_acc, 0, sizeof h_acc);

    /* 1. the region's nations and the nation's key */
    DKB_CUDA_TRY("fetch region keys", dkb_copy_col_to_host(h_rk, rkey, sizeof(int32_t), stream));
    DKB_CUDA_TRY("fetch region names", dkb_copy_col_to_host(h_rn, rname, sizeof(uint8_t), stream));
    DKB_CUDA_TRY("fetch nation keys", dkb_copy_col_to_host(h_nk, nkey, sizeof(int32_t), stream));
    DKB_CUDA_TRY("fetch nation names", dkb_copy_col_to_host(h_nn, nname, sizeof(uint8_t), stream));
    DKB_CUDA_TRY("fetch nation regions", dkb_copy_col_to_host(h_nr, nreg, sizeof(int32_t), stream));
    for (int64_t i = 0; i < nkey->n; i++) {
        DKB_FAIL_IF(h_nk[i] < 0 || h_nk[i] >= MAXNAT, DKB_CAND_EINTERNAL, "q08.full.cu: nation key %d outside 0..%d\n",
                    h_nk[i], MAXNAT - 1);
        if (ncode >= 0 && h_nn[i] == ncode) target = h_nk[i];
        for (int64_t j = 0; j < rkey->n; j++)
            if (rcode >= 0 && h_rn[j] == rcode && h_rk[j] == h_nr[i]) in_region.in[h_nk[i]] = 1;
    }
    if (target >= 0) is_target.in[target] = 1;
    if (tcode >= 0 && no > 0 && nl > 0 && np > 0 && nc > 0 && ns > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q08_join, TPB, 0, &sms, &grid));
        if (grid > nchunks) grid = nchunks;
        const dkb_dev_part parts[] = {
            {(void **)&d_pbits, sizeof(uint32_t) * pwords, 0},
            {(void **)&d_cin, (size_t)maxc + 1, 0},
            {(void **)&d_sis, (size_t)maxs + 1, 0},
            {(void **)&d_acc, sizeof h_acc, 0},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* 2. the type's parts, the region's customers, the nation's suppliers; 3. the chunks; 4. the join */
        part_bitmap<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)pkey->data,
                                                             (const uint8_t *)ptype->data, np, tcode, maxp, d_pbits,
                                                             d_bad);
        DKB_CUDA_TRY("part_bitmap launch", cudaGetLastError());
        key_in_mask<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)ckey->data,
                                                             (const int32_t *)cnat->data, nc, maxc, in_region, d_cin,
                                                             d_bad);
        DKB_CUDA_TRY("key_in_mask customer launch", cudaGetLastError());
        key_in_mask<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)skey->data,
                                                             (const int32_t *)snat->data, ns, maxs, is_target, d_sis,
                                                             d_bad);
        DKB_CUDA_TRY("key_in_mask supplier launch", cudaGetLastError());
        /* the whole columns (one pass), or under a budget one pass per load of
         * orders and lineitem partitions: the load's chunks and join, into d_acc */
        for (dkb_stream_begin_ex(&st, db, env, 8, Q08_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int64_t pno = st.cols[0].n, pnl = st.cols[3].n; /* this pass's orders and line items */
            if (pno <= 0 || pnl <= 0) continue;                   /* no line item to count */
            const int64_t pch = (pno + OCHUNK - 1) / OCHUNK;
            DKB_FAIL_IF(pch > nchunks, DKB_CAND_EINTERNAL, "q08.full.cu: a load with more orders than the table\n");
            const int32_t *p_okey = (const int32_t *)st.cols[0].data, *p_lkey = (const int32_t *)st.cols[3].data;
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>(p_okey, p_lkey, pnl, pch, d_bound, stream));
            q08_join<<<(unsigned)(grid < pch ? grid : pch), TPB, 0, stream>>>(
                p_okey, (const int32_t *)st.cols[1].data, (const int32_t *)st.cols[2].data, pno, p_lkey,
                (const int32_t *)st.cols[4].data, (const int32_t *)st.cols[5].data, (const int64_t *)st.cols[6].data,
                (const int64_t *)st.cols[7].data, d_bound, pch, d_pbits, maxp, d_cin, maxc, d_sis, maxs, d95, d96,
                width, d_acc, d_bad);
            DKB_CUDA_TRY("q08_join launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        const dkb_host_copy back[] = {{h_acc, d_acc, sizeof h_acc}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL,
                    "q08.full.cu: a part/customer/supplier key outside 1..N or lineitem not grouped in orders' "
                    "order\n");
    }
    /* across ranks (orders and lineitem co-partitioned by orderkey, the rest
     * whole): every rank's 4 sums and 2 counts summed in one all-reduce of
     * int64 (exact; a rank with an empty share adds its zeros), so the
     * quotient below is the one-rank one; rank 0 writes */
    if (env->nranks > 1) {
        int64_t m[NACC];
        for (int x = 0; x < NACC; x++) m[x] = (int64_t)h_acc[x];
        DKB_TRY(dkb_ranks_sum_i64(env, m, NACC));
        for (int x = 0; x < NACC; x++) h_acc[x] = (unsigned long long)m[x];
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    /* 5. per year with items: the nation's share, the quotient of the two exact sums as doubles */
    for (int y = 0; y < 2; y++) {
        if (!h_acc[4 + y]) continue;
        DKB_FAIL_IF(r >= res->cap, DKB_CAND_ECAP, "q08.full.cu: result larger than its capacity\n");
        const __int128 all = (__int128)(int64_t)h_acc[y * 2], mine = (__int128)(int64_t)h_acc[y * 2 + 1];
        c_year->i64[r] = 1995 + y;
        c_share->f64[r] = (double)mine / (double)all;
        c_year->is_null[r] = c_share->is_null[r] = 0;
        r++;
    }
    res->nrows = r;
done:
    dkb_stream_end(&st); /* a load still held after a failure (its work is enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
