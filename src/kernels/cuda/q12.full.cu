/* q12.full.cu: expert CUDA full-mode candidate for TPC-H Q12 (Shipping Modes
 * and Order Priority).
 *
 *   select l_shipmode, sum(case when o_orderpriority in ('1-URGENT', '2-HIGH') then 1 else 0 end),
 *          sum(case when o_orderpriority not in ('1-URGENT', '2-HIGH') then 1 else 0 end)
 *   from orders, lineitem
 *   where o_orderkey = l_orderkey and l_shipmode in (':shipmode1', ':shipmode2')
 *     and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
 *     and l_receiptdate >= date ':date' and l_receiptdate < date ':date' + interval '1' year
 *   group by l_shipmode order by l_shipmode;
 *
 * Plan (all on env->stream): one fused pass over lineitem, built for
 * memory-level parallelism (the first version, a branch per row with a
 * binary search inside it, ran latency-bound: 660 us for 881 MB at SF10).
 *  - Each warp streams tiles of TILE_ROWS rows: per lane VEC 4-byte words
 *    of l_shipmode (4 codes each) and VEC 16-byte vectors of
 *    l_receiptdate (4 dates each), the same rows, coalesced. A row passes
 *    this stage when its mode is one of the two parameters' codes and its
 *    receipt date is in the year (one unsigned compare): ~4% of rows.
 *  - Passing rows go to the warp's queue A in shared memory (popcount
 *    prefix over the warp; entry = row << 1 | second mode). Whenever it
 *    holds 32, every lane takes one and reads its l_commitdate,
 *    l_shipdate (and the receipt again, a cache hit) together; rows with
 *    commit < receipt and ship < commit go to queue B.
 *  - Whenever queue B holds 32, every lane takes one line: l_orderkey, a
 *    binary search on o_orderkey (sorted ascending; the upper levels stay
 *    in L2), the priority code classified by a 256-entry "high" mask in
 *    shared memory: 32 searches in flight per warp instead of one.
 *  - Rows past the last full tile (all rows when the columns are not
 *    aligned for the vector loads) are tested one per lane into the same
 *    queues; what is left in the queues at the end is processed by the
 *    first lanes.
 * Each thread counts (mode 1 | mode 2) x (high | low); warp shuffles and
 * shared memory reduce them per block, one atomicAdd per block and counter
 * adds them to 4 global counters (integers: exact and deterministic). The
 * grid is one resident wave (occupancy query). Groups come out in code
 * order, which is string order; a mode without lines is left out. A line
 * whose order is missing is reported as an error.
 *
 * Under a memory budget (env->budget streaming lineitem and orders,
 * co-partitioned by orderkey) the same kernel runs once per load of
 * partitions (dkb_stream with DKB_STREAM_OVERLAP: the next load's copy
 * overlaps this one's kernel), its binary search over the load's orders
 * (every order of the load's lines is in it); the counters add up over
 * the loads (integers: the same result for any partitioning). One
 * synchronize at the end, none per load.
 *
 * Bytes read (floor, SF10): l_shipmode 1 B, l_receiptdate 4 B per item
 * (60M: 0.30 GB, streamed); l_commitdate, l_shipdate only in the sectors of
 * queue A's rows (~28% of sectors), l_orderkey in queue B's (~10%);
 * o_orderkey and o_orderpriority only for the ~300K passing lines.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): each rank runs the
 * pass above over its share (lineitem and orders co-partitioned by
 * orderkey: a share's orders hold every order of its lines, so the binary
 * search stays within the share); the 4 counters are summed over the ranks
 * in one int64 all-reduce (dkb_ranks_sum_i64), which every rank calls, also
 * one with an empty share or no scan; rank 0 writes the groups. On one rank
 * nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh"   // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h"   // defines: dkb_ranks_sum_i64, dkb_ranks_writes
#include "dkb/cand_stream.h"   // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem and orders (co-partitioned) */

/* TPB threads a block; a warp's tile is TILE_ROWS rows (VEC vectors of 4
 * rows per lane); queue A holds a tile's rows plus the < 32 left over,
 * queue B a batch of 32 plus the < 32 left over. */
enum {
    TPB = 256,
    NWARP = TPB / 32,
    VEC = 2,
    TILE_ROWS = 32 * 4 * VEC,
    QA_CAP = TILE_ROWS + 32,
    QB_CAP = 64,
    NCOUNT = 4
};

typedef struct {
    uint8_t high[256]; /* by o_orderpriority code */
} prio_mask;

/* The four counters of one thread: (mode 1, mode 2) x (high, low). */
typedef struct {
    unsigned long long c[NCOUNT];
} counters;

/* A line that passed every filter (entry = row << 1 | second mode): its
 * order by binary search on o_orderkey, the priority class counted. A
 * missing order sets *oops. */
__device__ __forceinline__ void count_line(long long e, const int32_t *__restrict__ lkey,
                                           const int32_t *__restrict__ okey, const uint8_t *__restrict__ oprio,
                                           int64_t no, const uint8_t *high_s, counters *cnt, int *oops) {
    const int32_t key = __ldg(lkey + (e >> 1));
    int64_t a = 0, b = no;
    while (a < b) {
        const int64_t mid = a + (b - a) / 2;
        if (__ldg(okey + mid) < key) a = mid + 1;
        else b = mid;
    }
    if (a >= no || __ldg(okey + a) != key) {
        *oops = 1;
        return;
    }
    const int k = (int)(e & 1) * 2 + (high_s[__ldg(oprio + a)] ? 0 : 1);
#pragma unroll
    for (int q = 0; q < NCOUNT; q++) cnt->c[q] += k == q;
}

/* One batch of queue A (all 32 lanes call it; lane's entry e valid when
 * `valid`): the commit and ship dates; lines with commit < receipt and
 * ship < commit are appended to queue B (qb, *pb entries before, < 32),
 * and a full batch of B is counted. */
__device__ __forceinline__ void batch_a(long long e, bool valid, int lane, const int32_t *__restrict__ lship,
                                        const int32_t *__restrict__ lcommit, const int32_t *__restrict__ lreceipt,
                                        const int32_t *__restrict__ lkey, const int32_t *__restrict__ okey,
                                        const uint8_t *__restrict__ oprio, int64_t no, const uint8_t *high_s,
                                        long long *qb, int *pb, counters *cnt, int *oops) {
    bool pass = false;
    if (valid) {
        const int64_t i = e >> 1;
        const int32_t r = __ldg(lreceipt + i), c = __ldg(lcommit + i), s = __ldg(lship + i);
        pass = c < r && s < c;
    }
    int total;
    const int at = *pb + dkb_warp_exclusive(pass ? 1 : 0, lane, &total);
    if (pass) qb[at] = e;
    __syncwarp();
    *pb += total;
    if (*pb >= 32) {
        *pb -= 32;
        const long long f = qb[*pb + lane];
        __syncwarp();
        count_line(f, lkey, okey, oprio, no, high_s, cnt, oops);
    }
}

/* counts[{0,1,2,3}] += lines of (mode1 high, mode1 low, mode2 high, mode2 low).
 * mode1/mode2 are codes or 256 (no code); the host never passes two equal
 * codes. The first ntiles tiles are read with vector loads (the host
 * passes 0 when l_shipmode is not 4-byte or l_receiptdate not 16-byte
 * aligned), rows ntiles * TILE_ROWS .. n-1 one per lane. */
__global__ void __launch_bounds__(TPB) q12_scan(const uint8_t *__restrict__ lmode, const int32_t *__restrict__ lship,
                                                const int32_t *__restrict__ lcommit,
                                                const int32_t *__restrict__ lreceipt,
                                                const int32_t *__restrict__ lkey, int64_t n, int64_t ntiles,
                                                const int32_t *__restrict__ okey, const uint8_t *__restrict__ oprio,
                                                int64_t no, int mode1, int mode2, int32_t lo, uint32_t span,
                                                prio_mask mask, unsigned long long *__restrict__ counts,
                                                int *__restrict__ bad) {
    __shared__ uint8_t high_s[256];
    __shared__ long long qa_s[NWARP][QA_CAP];
    __shared__ long long qb_s[NWARP][QB_CAP];
    __shared__ unsigned long long part_s[NWARP][NCOUNT];
    for (int i = threadIdx.x; i < 256; i += TPB) high_s[i] = mask.high[i];
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    long long *qa = qa_s[warp], *qb = qb_s[warp];
    const int64_t gwarp = (int64_t)blockIdx.x * NWARP + warp, nwarps = (int64_t)gridDim.x * NWARP;
    counters cnt = {{0, 0, 0, 0}};
    int oops = 0, pa = 0, pb = 0;
    /* queue A's full batches of 32, one entry per lane */
    const auto drain_a = [&]() {
        while (pa >= 32) {
            pa -= 32;
            const long long e = qa[pa + lane];
            __syncwarp();
            batch_a(e, true, lane, lship, lcommit, lreceipt, lkey, okey, oprio, no, high_s, qb, &pb, &cnt, &oops);
        }
    };
    for (int64_t t = gwarp; t < ntiles; t += nwarps) {
        const int64_t v0 = t * (32 * VEC) + lane; /* this lane's first vector: rows 4 * v0 .. 4 * v0 + 3 */
        uint32_t mw[VEC];
        int4 rv[VEC];
#pragma unroll
        for (int v = 0; v < VEC; v++) {
            mw[v] = __ldg(reinterpret_cast<const uint32_t *>(lmode) + v0 + 32 * v);
            rv[v] = __ldg(reinterpret_cast<const int4 *>(lreceipt) + v0 + 32 * v);
        }
        uint32_t bits = 0, second = 0; /* bit 4v + k: row 4 * (v0 + 32 v) + k */
#pragma unroll
        for (int v = 0; v < VEC; v++) {
            const int32_t r[4] = {rv[v].x, rv[v].y, rv[v].z, rv[v].w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int m = (int)((mw[v] >> (8 * k)) & 0xffu);
                const bool in1 = m == mode1, in2 = m == mode2;
                const bool win = (uint32_t)r[k] - (uint32_t)lo <= span;
                bits |= (uint32_t)((in1 || in2) && win) << (4 * v + k);
                second |= (uint32_t)in2 << (4 * v + k);
            }
        }
        int total;
        int at = pa + dkb_warp_exclusive(__popc(bits), lane, &total);
        while (bits) {
            const int b = __ffs(bits) - 1;
            bits &= bits - 1;
            const long long row = 4 * v0 + 4 * 32 * (b >> 2) + (b & 3);
            qa[at++] = row << 1 | ((second >> b) & 1u);
        }
        __syncwarp();
        pa += total;
        drain_a();
    }
    for (int64_t base = ntiles * TILE_ROWS + gwarp * 32; base < n; base += nwarps * 32) {
        const int64_t i = base + lane;
        bool in = false, in2 = false;
        if (i < n) {
            const int m = (int)__ldg(lmode + i);
            in2 = m == mode2;
            in = (m == mode1 || in2) && (uint32_t)__ldg(lreceipt + i) - (uint32_t)lo <= span;
        }
        int total;
        const int at = pa + dkb_warp_exclusive(in ? 1 : 0, lane, &total);
        if (in) qa[at] = (long long)i << 1 | (in2 ? 1 : 0);
        __syncwarp();
        pa += total;
        drain_a();
    }
    /* the rest: < 32 in queue A, then < 32 in queue B */
    const long long last = lane < pa ? qa[lane] : 0;
    __syncwarp();
    batch_a(last, lane < pa, lane, lship, lcommit, lreceipt, lkey, okey, oprio, no, high_s, qb, &pb, &cnt, &oops);
    if (lane < pb) count_line(qb[lane], lkey, okey, oprio, no, high_s, &cnt, &oops);
    if (oops) *bad = 1;
#pragma unroll
    for (int k = 0; k < NCOUNT; k++) {
        unsigned long long c = cnt.c[k];
        for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(DKB_FULL_MASK, c, off);
        if (lane == 0) part_s[warp][k] = c;
    }
    __syncthreads();
    if (threadIdx.x < NCOUNT) {
        unsigned long long s = 0;
        for (int w = 0; w < NWARP; w++) s += part_s[w][threadIdx.x];
        if (s) atomicAdd(&counts[threadIdx.x], s);
    }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *lkey, *lmode, *lship, *lcommit, *lreceipt, *okey, *oprio;
    const dkb_cand_param *pm1, *pm2, *pdate;
    dkb_cand_res_col *c_mode, *c_high, *c_low;
    if (DKB_BIND_COLS(db, "lineitem",
                      "l_orderkey:i32 l_shipmode:dict l_shipdate:i32 l_commitdate:i32 l_receiptdate:i32", &lkey, &lmode,
                      &lship, &lcommit, &lreceipt) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderpriority:dict", &okey, &oprio) ||
        DKB_BIND_PARAMS(params, "shipmode1:str shipmode2:str date", &pm1, &pm2, &pdate) ||
        DKB_BIND_RES(res, "l_shipmode:str high_line_count:int low_line_count:int", &c_mode, &c_high, &c_low))
        return DKB_CAND_EINVAL;
    const int64_t hi_day = dkb_add_months(pdate->i, 12);
    if (pdate->i < INT32_MIN || hi_day > INT32_MAX || hi_day <= pdate->i) return DKB_CAND_EINVAL;

    prio_mask mask;
    memset(&mask, 0, sizeof mask);
    const int urgent = dkb_cand_dict_code(oprio->dict, "1-URGENT"), high2 = dkb_cand_dict_code(oprio->dict, "2-HIGH");
    if (urgent >= 0) mask.high[urgent] = 1;
    if (high2 >= 0) mask.high[high2] = 1;
    const int m1 = dkb_cand_dict_code(lmode->dict, pm1->s), m2 = dkb_cand_dict_code(lmode->dict, pm2->s);
    const int mode1 = m1 >= 0 ? m1 : 256, mode2 = m2 >= 0 && m2 != m1 ? m2 : 256; /* 256: matches no code */

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = lkey->n; /* whole-table rows (kept in db when lineitem streams) */
    int rc = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, row = 0;
    unsigned long long *d_counts = NULL, h_counts[NCOUNT] = {0, 0, 0, 0};
    int *d_bad = NULL;
    void *d_block = NULL;
    /* the whole columns in one pass, or under a memory budget lineitem and
     * orders load by load (co-partitioned by orderkey: a load's orders hold
     * every order of its lines, sorted, so the binary search stays within
     * the load); every pass adds into the same 4 counters */
    static const char *const COLS[] = {"l_orderkey",    "l_shipmode", "l_shipdate",     "l_commitdate",
                                       "l_receiptdate", "o_orderkey", "o_orderpriority"};
    dkb_stream st;
    memset(&st, 0, sizeof st);
    if (n > 0 && (mode1 < 256 || mode2 < 256)) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q12_scan, TPB, 0, &sms, &grid)); /* one resident wave */
        const dkb_dev_part parts[] = {{(void **)&d_counts, sizeof h_counts, 0}, {(void **)&d_bad, sizeof(int), 0}};
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        DKB_TRY(dkb_stream_begin_ex(&st, db, env, 7, COLS, DKB_STREAM_OVERLAP));
        while (dkb_stream_next(&st)) {
            const dkb_cand_vec *c = st.cols; /* c[0..4]: lineitem (c[0].n rows), c[5..6]: orders (c[5].n rows) */
            const int64_t pn = c[0].n, pno = c[5].n;
            if (pn <= 0) continue;
            const int64_t pgrid = dkb_grid_cap(grid, pn, TPB);
            q12_scan<<<(unsigned)pgrid, TPB, 0, stream>>>(
                (const uint8_t *)c[1].data, (const int32_t *)c[2].data, (const int32_t *)c[3].data,
                (const int32_t *)c[4].data, (const int32_t *)c[0].data, pn,
                (uintptr_t)c[1].data % 4 == 0 && (uintptr_t)c[4].data % 16 == 0 ? pn / TILE_ROWS : 0,
                (const int32_t *)c[5].data, (const uint8_t *)c[6].data, pno, mode1, mode2, (int32_t)pdate->i,
                (uint32_t)(hi_day - 1 - pdate->i), mask, d_counts, d_bad);
            DKB_CUDA_TRY("q12_scan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        const dkb_host_copy back[] = {{h_counts, d_counts, sizeof h_counts}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q12.full.cu: a line item whose l_orderkey is not in orders\n");
    }
    if (env->nranks > 1) { /* across ranks: the 4 counters summed, one all-reduce (every rank, scan or not) */
        int64_t sum[NCOUNT];
        for (int k = 0; k < NCOUNT; k++) sum[k] = (int64_t)h_counts[k];
        DKB_TRY(dkb_ranks_sum_i64(env, sum, NCOUNT));
        for (int k = 0; k < NCOUNT; k++) h_counts[k] = (unsigned long long)sum[k];
        if (!dkb_ranks_writes(env, res)) goto done; /* rank 0 writes the rows */
    }
    /* groups in code order (string order); a mode without lines is left out */
    c_mode->str_off[0] = 0;
    for (int code = 0; code < lmode->dict->size && code < 256; code++) {
        const int k = code == mode1 ? 0 : code == mode2 ? 2 : -1;
        if (k < 0 || h_counts[k] + h_counts[k + 1] == 0) continue;
        DKB_FAIL_IF(row >= res->cap || dkb_put_dict(c_mode, row, lmode->dict, code) != DKB_CAND_OK, DKB_CAND_ECAP,
                    "q12.full.cu: result larger than its capacity\n");
        c_high->i64[row] = (int64_t)h_counts[k];
        c_low->i64[row] = (int64_t)h_counts[k + 1];
        c_high->is_null[row] = c_low->is_null[row] = 0;
        row++;
    }
    res->nrows = row;
done:
    dkb_stream_end(&st); /* a load still held after a failure (after its kernels were enqueued) */
    dkb_dev_release(d_block, stream);
    return rc;
}
