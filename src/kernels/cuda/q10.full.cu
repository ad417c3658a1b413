/* q10.full.cu: expert CUDA full-mode candidate for TPC-H Q10 (Returned Item
 * Reporting).
 *
 *   select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue,
 *          c_acctbal, n_name, c_address, c_phone, c_comment
 *   from customer, orders, lineitem, nation
 *   where c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and l_returnflag = 'R' and c_nationkey = n_nationkey
 *   group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
 *   order by revenue desc limit 20;
 *
 * Plan (all on env->stream):
 *  1. chunk_bounds: orders cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so a chunk's items are one
 *     range (a warp per chunk: a 65-ary search on l_orderkey, 4 dependent
 *     rounds at SF10).
 *  2. q10_join (partition-local, persistent blocks over chunks): the
 *     chunk's orders are tested on the quarter (one unsigned compare) into
 *     shared memory; the chunk's items are read in tiles, each row's order
 *     found by counting run starts (ballot + popc + a per-warp prefix,
 *     checked against o_orderkey at run starts); only items of orders in
 *     the quarter read l_returnflag, and only 'R' items read price and
 *     discount (late materialization). Revenue per order is summed in
 *     shared memory (int64, scale 4); each order with an 'R' item then adds
 *     its sum to its customer's slot of a global int64 array over the dense
 *     custkeys 1..N (one atomicAdd per order, keys spread: no hot keys;
 *     integer sums: exact and deterministic) and marks the customer.
 *  3. cust_top: the marked customers are offered to per-warp sorted lists
 *     of 32 held in registers (those beating the 20th entry are
 *     bitonic-sorted by shuffles and merged in), merged per block by a tree
 *     of warp merges; top_merge merges the blocks' lists the same way in
 *     one block (no single-thread insertion sorts). Order:
 *     revenue desc, then custkey (a fixed order for ties, as the CPU
 *     expert).
 *  4. cust_gather: one block per result row copies the customer's key,
 *     nation key, balance and its four texts (row = custkey - 1: dense
 *     keys, checked against c_custkey) into fixed slots; the host adds the
 *     nation name from the 25-row nation table (copied back with the rows:
 *     one round trip in all).
 *
 * Under a memory budget (env->budget streaming orders and lineitem,
 * co-partitioned by orderkey) steps 1 and 2 run once per load of
 * partitions (dkb_stream with DKB_STREAM_OVERLAP: the next load's copy
 * overlaps this one's kernels): the chunk bounds are those of the load's
 * own orders and items (every item's order is in its load), d_bound is
 * reused (same stream: the next load's bounds are written after this
 * load's join has read them), and every load adds into the same customer
 * sums (integers: the same result for any partitioning). Steps 3 and 4
 * run once after the last load; one synchronize in all, none per load.
 *
 * Bytes read (floor, SF10): l_orderkey 4 B + l_returnflag 1 B per item
 * (60M: 0.3 GB; the flag only in the quarter's sectors) + price, discount
 * for the quarter's 'R' items; o_orderkey, o_orderdate, o_custkey 12 B per
 * order (0.18 GB); 12 MB of customer sums; 20 customers' rows.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): orders and lineitem
 * are co-partitioned by orderkey, but a customer's orders are on every rank
 * (customer and nation whole on every rank), so after the walk each rank
 * copies its customer sums and marks to the host (ranks_merge) and its
 * (custkey, revenue) entries of the customers it saw are gathered in rank
 * order (dkb_ranks_gather, as the CPU expert; a rank whose kernels flagged
 * an error adds an entry with custkey -1, which fails the merge); rank 0
 * adds them up exactly (int64, as the atomics) into the arrays over
 * custkeys, copies them back, and runs steps 3 and 4 on them; the other
 * ranks return with no rows. A rank whose share is empty still takes part
 * (the walk is then empty). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh"   // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h"   // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"    // defines: dkb_ranks_gather, dkb_ranks_writes (the ranks' partials merged)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its customers' sums merged through env->comm */

enum { TOPK = 20, TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, MERGE_TPB = 1024, SLOT = 256, NTEXT = 4, MAXNAT = 256 };
static_assert(TOPK <= 32, "the top-k lists hold 32 per warp");

typedef struct {
    int64_t rev; /* scale 4 */
    int64_t cust;
} cand;

/* a before b in the result order */
__host__ __device__ static inline bool before(const cand &a, const cand &b) {
    if (a.rev != b.rev) return a.rev > b.rev;
    return a.cust < b.cust;
}

/* Warp lists for the final merge: lane i holds entry i of a list sorted in
 * the result order; v = false marks an empty entry (after all others).
 * cand_shfl and first_of are what cand_cuda.cuh's top-k lists
 * (dkb_list_offer, dkb_block_merge) call for cand. */
__device__ static inline cand cand_shfl(const cand &x, int src) {
    cand y;
    y.rev = __shfl_sync(DKB_FULL_MASK, x.rev, src);
    y.cust = __shfl_sync(DKB_FULL_MASK, x.cust, src);
    return y;
}

/* (a, av) comes before (b, bv): a is an entry and b empty or after a. */
__device__ static inline bool first_of(const cand &a, bool av, const cand &b, bool bv) {
    return av && (!bv || before(a, b));
}

/* cust_rev[custkey] += revenue of the 'R' items of the customer's orders in
 * the quarter; cust_has[custkey] = 1 for those customers. */
__global__ void __launch_bounds__(TPB) q10_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ ocust,
                                                const int32_t *__restrict__ odate, int64_t no,
                                                const int32_t *__restrict__ lkey, const uint8_t *__restrict__ lflag,
                                                const int64_t *__restrict__ lprice,
                                                const int64_t *__restrict__ ldisc, const int64_t *__restrict__ bound,
                                                int64_t nchunks, int rflag, int32_t lo_day, uint32_t width,
                                                int64_t maxc, unsigned long long *__restrict__ cust_rev,
                                                uint8_t *__restrict__ cust_has, int *__restrict__ bad) {
    __shared__ unsigned long long sum_s[OCHUNK];
    __shared__ uint8_t pass_s[OCHUNK], hit_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const int64_t o0 = c * OCHUNK;
        const int nord = (int)(no - o0 < OCHUNK ? no - o0 : OCHUNK);
        const int64_t j0 = bound[c], j1 = bound[c + 1];
        /* 1. the chunk's orders: the quarter */
        for (int o = tid; o < OCHUNK; o += TPB) {
            pass_s[o] = o < nord && (uint32_t)(odate[o0 + o] - lo_day) < width;
            hit_s[o] = 0;
            sum_s[o] = 0;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile; idx = the row's order in the chunk */
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
            if (!pass_s[idx]) continue;
            if (start && okey[o0 + idx] != key) oops = 1;
            if ((int)lflag[j] != rflag) continue;
            atomicAdd(&sum_s[idx], (unsigned long long)(lprice[j] * (100 - ldisc[j])));
            hit_s[idx] = 1;
        }
        __syncthreads();
        /* 3. the chunk's orders with 'R' items, added to their customers */
        for (int o = tid; o < nord; o += TPB) {
            if (!hit_s[o]) continue;
            const int64_t cu = ocust[o0 + o];
            if (cu < 0 || cu > maxc) {
                oops = 1;
                continue;
            }
            atomicAdd(&cust_rev[cu], sum_s[o]);
            cust_has[cu] = 1;
        }
        __syncthreads();
    }
    if (oops) *bad = 1;
}

/* Each block's top TOPK marked customers of 0..maxc -> blist, bcount: a
 * sorted list of 32 per warp in registers, then a tree of warp merges. */
__global__ void __launch_bounds__(TPB) cust_top(const unsigned long long *__restrict__ cust_rev,
                                                const uint8_t *__restrict__ cust_has, int64_t maxc,
                                                cand *__restrict__ blist, int *__restrict__ bcount) {
    __shared__ cand sl[NWARP][32];
    __shared__ bool slv[NWARP][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    cand x = {0, 0};
    bool v = false;
    const int64_t stride = (int64_t)gridDim.x * TPB;
    /* every lane of a warp runs the same number of rounds (list_offer syncs the warp) */
    for (int64_t base = (int64_t)blockIdx.x * TPB + warp * 32; base <= maxc; base += stride) {
        const int64_t k = base + lane;
        const bool has = k <= maxc && cust_has[k];
        cand c = {0, 0};
        if (has) c.rev = (int64_t)cust_rev[k], c.cust = k;
        dkb_list_offer<TOPK>(x, v, has, c);
    }
    dkb_block_merge<NWARP>(x, v, sl, slv);
    if (warp == 0) {
        const bool keep = lane < TOPK && v; /* the entries are a prefix */
        if (keep) blist[(int64_t)blockIdx.x * TOPK + lane] = x;
        const unsigned kept = __ballot_sync(DKB_FULL_MASK, keep);
        if (lane == 0) bcount[blockIdx.x] = __popc(kept);
    }
}

/* One block: the union of the nb blocks' lists -> out[0..*nout), the same
 * way (a list per warp, then a tree of merges). */
__global__ void __launch_bounds__(MERGE_TPB) top_merge(const cand *__restrict__ blist, const int *__restrict__ bcount,
                                                       int64_t nb, cand *__restrict__ out, int *__restrict__ nout) {
    __shared__ cand sl[MERGE_TPB / 32][32];
    __shared__ bool slv[MERGE_TPB / 32][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    cand x = {0, 0};
    bool v = false;
    const int64_t total = nb * TOPK;
    for (int64_t base = (int64_t)warp * 32; base < total; base += MERGE_TPB) {
        const int64_t i = base + lane;
        const bool has = i < total && (int)(i % TOPK) < bcount[i / TOPK];
        cand c = {0, 0};
        if (has) c = blist[i];
        dkb_list_offer<TOPK>(x, v, has, c);
    }
    dkb_block_merge<MERGE_TPB / 32>(x, v, sl, slv);
    if (warp == 0) {
        const bool keep = lane < TOPK && v;
        if (keep) out[lane] = x;
        const unsigned kept = __ballot_sync(DKB_FULL_MASK, keep);
        if (lane == 0) *nout = __popc(kept);
    }
}

/* The device pointers of the four customer texts (kernel argument). */
typedef struct {
    const int64_t *off[NTEXT];
    const char *bytes[NTEXT];
} text_cols;

/* One block per result row r < *nrows: meta[r * 3 + {0,1,2}] = custkey,
 * c_nationkey, c_acctbal; len[r * NTEXT + t] = text t's length and its
 * first SLOT bytes in slots[(r * NTEXT + t) * SLOT]. A row whose key is not
 * at row custkey - 1 sets *bad. */
__global__ void cust_gather(const cand *__restrict__ top, const int *__restrict__ nrows,
                            const int32_t *__restrict__ ckey, const int32_t *__restrict__ cnat,
                            const int64_t *__restrict__ cbal, int64_t nc, text_cols texts,
                            int64_t *__restrict__ meta, int64_t *__restrict__ len, char *__restrict__ slots,
                            int *__restrict__ bad) {
    const int r = blockIdx.x;
    if (r >= *nrows) return;
    const int64_t key = top[r].cust, row = key - 1;
    if (row < 0 || row >= nc || ckey[row] != key) {
        if (threadIdx.x == 0) *bad = 1;
        return;
    }
    if (threadIdx.x == 0) {
        meta[r * 3] = key;
        meta[r * 3 + 1] = cnat[row];
        meta[r * 3 + 2] = cbal[row];
    }
    for (int t = 0; t < NTEXT; t++) {
        const int64_t from = texts.off[t][row], n = texts.off[t][row + 1] - from;
        if (threadIdx.x == 0) len[r * NTEXT + t] = n;
        char *dst = slots + ((int64_t)r * NTEXT + t) * SLOT;
        for (int64_t i = threadIdx.x; i < n && i < SLOT; i += blockDim.x) dst[i] = texts.bytes[t][from + i];
    }
}

/* Across ranks (nranks > 1): this rank's customer sums (d_rev, d_has over
 * 0..maxc, and the error flag d_flags[0]) to the host, every rank's
 * (custkey, revenue) entries gathered in rank order; on rank 0 (*writes =
 * 1) they are added up into the arrays, copied back to the device; other
 * ranks: *writes = 0 and res->nrows = 0. Every rank calls the one gather. */
static int ranks_merge(const dkb_cand_env *env, dkb_cand_result *res, unsigned long long *d_rev, uint8_t *d_has,
                       const int *d_flags, int64_t maxc, cudaStream_t stream, int *writes) {
    *writes = 1;
    const size_t nk = (size_t)(maxc + 1);
    unsigned long long *rev = (unsigned long long *)malloc(sizeof *rev * nk);
    uint8_t *has = (uint8_t *)malloc(nk);
    cand *mine = NULL;
    void *every = NULL;
    int64_t ne = 0, nm = 0;
    int bad = 0, rc = (rev && has) ? DKB_CAND_OK : DKB_CAND_ENOMEM;
    if (!rc && (cudaMemcpyAsync(rev, d_rev, sizeof *rev * nk, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
                cudaMemcpyAsync(has, d_has, nk, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
                cudaMemcpyAsync(&bad, d_flags, sizeof bad, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
                cudaStreamSynchronize(stream) != cudaSuccess))
        rc = DKB_CAND_ECUDA;
    /* a rank failing here returns before the gather: the others' gather fails */
    if (!rc) {
        for (size_t k = 0; k < nk; k++) nm += has[k];
        if (!(mine = (cand *)malloc(sizeof(cand) * (size_t)(nm + 1)))) rc = DKB_CAND_ENOMEM;
    }
    if (!rc) {
        int64_t i = 0;
        for (size_t k = 0; k < nk; k++)
            if (has[k]) mine[i].rev = (int64_t)rev[k], mine[i].cust = (int64_t)k, i++;
        if (bad) mine[i].rev = 0, mine[i].cust = -1, i++; /* this rank's error travels to rank 0 */
        rc = dkb_ranks_gather(env, mine, i, sizeof(cand), &every, &ne);
    }
    if (!rc && !dkb_ranks_writes(env, res)) {
        *writes = 0;
        if (bad) rc = DKB_CAND_EINTERNAL;
    } else if (!rc) {
        memset(rev, 0, sizeof *rev * nk);
        memset(has, 0, nk);
        const cand *e = (const cand *)every;
        for (int64_t i = 0; i < ne; i++) {
            if (e[i].cust < 0 || e[i].cust > maxc) {
                bad = 1;
                continue;
            }
            rev[e[i].cust] += (unsigned long long)e[i].rev;
            has[e[i].cust] = 1;
        }
        if (bad) {
            fprintf(stderr, "q10.full.cu: a customer key outside 1..N or lineitem not grouped in orders' order\n");
            rc = DKB_CAND_EINTERNAL;
        } else if (cudaMemcpyAsync(d_rev, rev, sizeof *rev * nk, cudaMemcpyHostToDevice, stream) != cudaSuccess ||
                   cudaMemcpyAsync(d_has, has, nk, cudaMemcpyHostToDevice, stream) != cudaSuccess ||
                   cudaStreamSynchronize(stream) != cudaSuccess)
            rc = DKB_CAND_ECUDA;
    }
    dkb_ranks_gather_free(every, mine);
    free(mine), free(rev), free(has);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *ckey, *cname, *caddr, *cnat, *cphone, *cbal, *ccomment, *okey, *ocust, *odate,
        *lkey, *lflag, *lprice, *ldisc;
    const dkb_cand_param *date;
    dkb_cand_res_col *r_key, *r_name, *r_rev, *r_bal, *r_nat, *r_addr, *r_phone, *r_comment;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "customer",
                      "c_custkey:i32 c_name:str c_address:str c_nationkey:i32 c_phone:str c_acctbal:i64 c_comment:str",
                      &ckey, &cname, &caddr, &cnat, &cphone, &cbal, &ccomment) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32", &okey, &ocust, &odate) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_returnflag:dict l_extendedprice:dec2 l_discount:dec2", &lkey,
                      &lflag, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "date", &date) ||
        DKB_BIND_RES(
            res,
            "c_custkey:int c_name:str revenue:dec4 c_acctbal:dec n_name:str c_address:str c_phone:str c_comment:str",
            &r_key, &r_name, &r_rev, &r_bal, &r_nat, &r_addr, &r_phone, &r_comment))
        return DKB_CAND_EINVAL;
    if (r_bal->scale < cbal->scale || nkey->n > MAXNAT || nname->n != nkey->n)
        return DKB_CAND_EINVAL;
    const int64_t hi_day = dkb_add_months(date->i, 3);
    if (date->i < INT32_MIN || hi_day > INT32_MAX || hi_day < date->i) return DKB_CAND_EINVAL;

    const dkb_cand_vec *text[NTEXT] = {cname, caddr, cphone, ccomment};
    dkb_cand_res_col *r_text[NTEXT] = {r_name, r_addr, r_phone, r_comment};
    const int rflag = dkb_cand_dict_code(lflag->dict, "R");
    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t no = okey->n, nl = lkey->n, nc = ckey->n, maxc = nc; /* dense custkeys 1..N */
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    int rc = 0, sms = 0, h_bad = 0, h_n = 0;
    int64_t grid = 0, tgrid = 0;
    /* the whole columns in one pass, or the loads of orders and lineitem */
    static const char *const COLS[] = {"o_orderkey",   "o_custkey",       "o_orderdate", "l_orderkey",
                                       "l_returnflag", "l_extendedprice", "l_discount"};
    dkb_stream st;
    memset(&st, 0, sizeof st);
    int64_t *d_bound = NULL, *d_meta = NULL, *d_len = NULL;
    unsigned long long *d_rev = NULL;
    uint8_t *d_has = NULL;
    cand *d_blist = NULL, *d_top = NULL, h_top[TOPK];
    int *d_bcount = NULL, *d_flags = NULL; /* d_flags[0]: bad, [1]: rows */
    char *d_slots = NULL;
    void *d_block = NULL;
    int64_t h_meta[TOPK * 3], h_len[TOPK * NTEXT];
    char h_slots[TOPK * NTEXT * SLOT];
    int32_t h_nk[MAXNAT];
    uint8_t h_nn[MAXNAT];
    text_cols texts;
    for (int t = 0; t < NTEXT; t++) texts.off[t] = (const int64_t *)text[t]->data, texts.bytes[t] = text[t]->bytes;

    if (rflag >= 0 && ((no > 0 && nl > 0) || env->nranks > 1) && nc > 0) { /* across ranks every rank takes part */
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q10_join, TPB, 0, &sms, &grid)); /* capped per pass */
        tgrid = (int64_t)sms * 4;
        if (tgrid > (maxc + TPB) / TPB) tgrid = (maxc + TPB) / TPB;
        const dkb_dev_part parts[] = {
            {(void **)&d_rev, sizeof(unsigned long long) * (size_t)(maxc + 1), 0},
            {(void **)&d_has, (size_t)(maxc + 1), 0},
            {(void **)&d_flags, sizeof(int) * 2, 0},
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
            {(void **)&d_blist, sizeof(cand) * TOPK * tgrid, DKB_NO_FILL},
            {(void **)&d_bcount, sizeof(int) * tgrid, DKB_NO_FILL},
            {(void **)&d_top, sizeof(cand) * TOPK, DKB_NO_FILL},
            {(void **)&d_meta, sizeof h_meta, DKB_NO_FILL},
            {(void **)&d_len, sizeof h_len, DKB_NO_FILL},
            {(void **)&d_slots, sizeof h_slots, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        DKB_TRY(dkb_stream_begin_ex(&st, db, env, 7, COLS, DKB_STREAM_OVERLAP));
        while (dkb_stream_next(&st)) {
            const dkb_cand_vec *c = st.cols; /* c[0..2]: orders (c[0].n rows), c[3..6]: lineitem (c[3].n rows) */
            const int64_t pno = c[0].n, pnl = c[3].n, pch = (pno + OCHUNK - 1) / OCHUNK; /* pch <= nchunks */
            if (pno <= 0) continue;
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>((const int32_t *)c[0].data, (const int32_t *)c[3].data, pnl,
                                                         pch, d_bound, stream));
            q10_join<<<(unsigned)(grid < pch ? grid : pch), TPB, 0, stream>>>(
                (const int32_t *)c[0].data, (const int32_t *)c[1].data, (const int32_t *)c[2].data, pno,
                (const int32_t *)c[3].data, (const uint8_t *)c[4].data, (const int64_t *)c[5].data,
                (const int64_t *)c[6].data, d_bound, pch, rflag, (int32_t)date->i, (uint32_t)(hi_day - date->i),
                maxc, d_rev, d_has, d_flags);
            DKB_CUDA_TRY("q10_join launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        if (env->nranks > 1) { /* every rank's customer sums, added up on rank 0 */
            int writes = 1;
            DKB_TRY(ranks_merge(env, res, d_rev, d_has, d_flags, maxc, stream, &writes));
            if (!writes) goto done;
        }
        cust_top<<<(unsigned)tgrid, TPB, 0, stream>>>(d_rev, d_has, maxc, d_blist, d_bcount);
        DKB_CUDA_TRY("cust_top launch", cudaGetLastError());
        top_merge<<<1, MERGE_TPB, 0, stream>>>(d_blist, d_bcount, tgrid, d_top, d_flags + 1);
        DKB_CUDA_TRY("top_merge launch", cudaGetLastError());
        cust_gather<<<TOPK, 128, 0, stream>>>(d_top, d_flags + 1, (const int32_t *)ckey->data,
                                              (const int32_t *)cnat->data, (const int64_t *)cbal->data, nc, texts,
                                              d_meta, d_len, d_slots, d_flags);
        DKB_CUDA_TRY("cust_gather launch", cudaGetLastError());
        /* the nation table (<= MAXNAT rows) comes in the same round trip */
        const dkb_host_copy back[] = {
            {&h_bad, d_flags, sizeof(int)},  {&h_n, d_flags + 1, sizeof(int)},    {h_top, d_top, sizeof h_top},
            {h_meta, d_meta, sizeof h_meta}, {h_len, d_len, sizeof h_len},        {h_slots, d_slots, sizeof h_slots},
            {h_nk, nkey->data, sizeof(int32_t) * (size_t)nkey->n},                {h_nn, nname->data, (size_t)nkey->n},
        };
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back) - (nkey->n > 0 ? 0 : 2), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL,
                    "q10.full.cu: a customer key outside 1..N or lineitem not grouped in orders' order\n");
    }
    DKB_FAIL_IF(h_n > res->cap, DKB_CAND_ECAP, "q10.full.cu: %d rows over the result's capacity\n", h_n);
    r_name->str_off[0] = r_nat->str_off[0] = r_addr->str_off[0] = r_phone->str_off[0] = r_comment->str_off[0] = 0;
    for (int r = 0; r < h_n; r++) {
        int64_t nrow = 0;
        while (nrow < nkey->n && h_nk[nrow] != h_meta[r * 3 + 1]) nrow++;
        const int code = nrow < nkey->n ? h_nn[nrow] : -1;
        DKB_FAIL_IF(code < 0 || code >= nname->dict->size ||
                        (dkb_put_str(r_nat, r, nname->dict->str[code], (int64_t)nname->dict->len[code]) != DKB_CAND_OK),
                    DKB_CAND_EINTERNAL, "q10.full.cu: customer %lld: nation missing or result text over capacity\n",
                    (long long)h_meta[r * 3]);
        for (int t = 0; t < NTEXT; t++) {
            const int64_t len = h_len[r * NTEXT + t];
            DKB_FAIL_IF(len < 0 || len > SLOT ||
                            (dkb_put_str(r_text[t], r, h_slots + ((int64_t)r * NTEXT + t) * SLOT, len) != DKB_CAND_OK),
                        DKB_CAND_EINTERNAL,
                        "q10.full.cu: customer %lld: text %d of %lld bytes over its slot or capacity\n",
                        (long long)h_meta[r * 3], t, (long long)len);
        }
        __int128 v = h_top[r].rev, b = h_meta[r * 3 + 2];
        for (int s = 4; s < r_rev->scale; s++) v *= 10;
        for (int s = cbal->scale; s < r_bal->scale; s++) b *= 10;
        r_key->i64[r] = h_meta[r * 3];
        r_rev->dec[r] = v;
        r_bal->dec[r] = b;
        r_key->is_null[r] = r_rev->is_null[r] = r_bal->is_null[r] = 0;
    }
    res->nrows = h_n;
done:
    dkb_stream_end(&st); /* a load still held after a failure (after its kernels were enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
