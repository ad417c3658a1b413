/* q14.full.cu: expert CUDA full-mode candidate for TPC-H Q14 (Promotion
 * Effect).
 *
 *   select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
 *          / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
 *   from lineitem, part
 *   where l_partkey = p_partkey
 *     and l_shipdate >= date ':date' and l_shipdate < date ':date' + interval '1' month;
 *
 * Plan: the LIKE is evaluated once per dictionary entry on the host (a
 * 256-entry promo mask, kept in shared memory by each block). part_codes
 * turns part into a byte array over the dense part keys 1..N (the type code,
 * 255 for "no part"), 1 byte per part. Then one fused pass over lineitem,
 * built for memory-level parallelism: each warp streams l_shipdate in tiles
 * of 256 dates (two 16-byte loads per lane, coalesced), tests the month with
 * one unsigned compare per date, and appends the rows in the month (~1.2%)
 * to a per-warp queue in shared memory (popcount prefix over the warp).
 * Whenever the queue holds 32 rows, every lane takes one and reads its
 * l_partkey, price and discount together, then the part's type code (a
 * gather from the 2 MB array, L2-resident): 32 independent load chains per
 * warp, where the per-row branch of the first version issued them one row
 * after another (875 us at SF10, latency-bound). Late materialization: only
 * the month's rows touch the 4- and 8-byte columns (DRAM traffic is per
 * 32-byte sector). Rows past the last full tile (and every row when
 * l_shipdate is not 16-byte aligned) are read one per lane into the same
 * queue. The grid is one resident wave (occupancy query).
 * Revenue is exact int64 at scale 4; thread and block sums stay int64 (a
 * block reads at most 2^20 rows), the per-block (promo, total, count) go
 * to the host and are added in __int128; the ratio is formed as in the
 * baseline (one division of doubles). No line: NULL.
 *
 * Bytes read (floor, SF10): l_shipdate, l_partkey 4 + 4, price, discount
 * 8 + 8 per item (60M: 1.44 GB), p_partkey + p_type 5 B x 2M (10 MB).
 *
 * Under a memory budget (env->budget streams lineitem; part is whole) the
 * four lineitem columns come load by load through a dkb_stream walk with
 * DKB_STREAM_OVERLAP (the next load's copy overlaps this load's scan);
 * without one the walk is one pass over the whole columns, as before. The
 * part codes are built once, before the walk. Every pass launches the same
 * grid (sized by the whole table's rows): the first pass writes each
 * block's (promo, total, count), later passes add to it, so the partials
 * are the whole table's (exact integers, whatever the loads). A block's
 * int64 sums stay safe: over all passes it reads at most n / grid + passes
 * * 2 * WARPS * TILE_ROWS rows (n / grid <= 2^20), each below 2^31 at
 * scale 4. No sync per pass; one round trip after the walk.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): each rank scans its
 * share of lineitem as above (part is whole on every rank, so the part
 * codes are the same; a share's first row need not be 16-byte aligned: the
 * host's alignment test covers it); the exact (promo, revenue, lines)
 * triple is summed over the ranks in one __int128 all-reduce
 * (dkb_ranks_sum_i128; an empty share adds zeros); rank 0 forms the ratio
 * from the merged sums and writes the row. On one rank nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i128, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

/* TPB threads a block; a warp reads tiles of TILE_ROWS dates (VEC int4 per
 * lane); its queue holds a tile's rows plus the < 32 left over. */
enum {
    TPB = 256,
    WARPS = TPB / 32,
    VEC = 2,
    TILE_ROWS = 32 * 4 * VEC,
    QCAP = TILE_ROWS + 32,
    MAX_ROWS_PER_BLOCK = 1 << 20,
    NO_PART = 255
};

typedef struct {
    uint8_t is_promo[256]; /* by p_type code */
} promo_mask;

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem (part whole) */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q14_COLS[] = {"l_shipdate", "l_partkey", "l_extendedprice", "l_discount"};


/* code[key] = p_type of the part with that key (code preset to NO_PART);
 * a key outside 0..maxkey or a code equal to NO_PART sets *bad. */
__global__ void part_codes(const int32_t *__restrict__ pkey, const uint8_t *__restrict__ ptype, int64_t np,
                           int64_t maxkey, uint8_t *__restrict__ code, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = pkey[i];
        const uint8_t t = ptype[i];
        if (k < 0 || k > maxkey || t == NO_PART) {
            *bad = 1;
            continue;
        }
        code[k] = t;
    }
}

/* One row of the month (already tested): its revenue into (sp, st, cnt).
 * The three column loads are independent and issue together; the type code
 * is one gather behind them. A part key outside 0..maxkey, or a key without
 * a part, sets oops. */
__device__ __forceinline__ void q14_row(int64_t i, const int32_t *__restrict__ lpart,
                                        const int64_t *__restrict__ price, const int64_t *__restrict__ disc,
                                        const uint8_t *__restrict__ code, int64_t maxkey, const uint8_t *promo_s,
                                        int64_t &sp, int64_t &st, int64_t &cnt, int &oops) {
    const int64_t pk = __ldg(lpart + i);
    const int64_t p = __ldg(price + i), d = __ldg(disc + i);
    const uint8_t t = pk >= 0 && pk <= maxkey ? __ldg(code + pk) : (uint8_t)NO_PART;
    if (t == NO_PART) {
        oops = 1;
        return;
    }
    const int64_t rev = p * (100 - d);
    st += rev;
    sp += promo_s[t] ? rev : 0;
    cnt++;
}

/* partial[3 * block + {0, 1, 2}] = promo revenue, total revenue (scale 4)
 * and count of the block's rows in the month (add: added to the partials
 * already there).
 *
 * Each warp streams tiles of TILE_ROWS dates (VEC 16-byte loads per lane,
 * coalesced; the first ntiles tiles, the host passes 0 when ship is not
 * 16-byte aligned), then rows n_tiled..n-1 one per lane. Rows in the month
 * go to the warp's shared-memory queue; whenever it holds 32, all lanes
 * take one each and issue their loads together (32 independent chains per
 * warp instead of one row after another). The rest (< 32) at the end. */
__global__ void __launch_bounds__(TPB) q14_scan(const int32_t *__restrict__ ship, const int32_t *__restrict__ lpart,
                                                const int64_t *__restrict__ price, const int64_t *__restrict__ disc,
                                                int64_t n, int64_t ntiles, int32_t lo, uint32_t span,
                                                const uint8_t *__restrict__ code, int64_t maxkey, promo_mask mask,
                                                int64_t *__restrict__ partial, int *__restrict__ bad, int add) {
    __shared__ uint8_t promo_s[256];
    __shared__ int64_t queue_s[WARPS][QCAP];
    for (int i = threadIdx.x; i < 256; i += TPB) promo_s[i] = mask.is_promo[i];
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t *queue = queue_s[warp];
    const int64_t gwarp = (int64_t)blockIdx.x * WARPS + warp, nwarps = (int64_t)gridDim.x * WARPS;
    int64_t sp = 0, st = 0, cnt = 0;
    int oops = 0;
    const int pending = dkb_queued_scan<VEC>(
        ship, n, ntiles, gwarp, nwarps, queue, lane,
        [&](int32_t d) { return (uint32_t)((uint32_t)d - (uint32_t)lo <= span); },
        [&](int64_t i) { q14_row(i, lpart, price, disc, code, maxkey, promo_s, sp, st, cnt, oops); });
    if (lane < pending) q14_row(queue[lane], lpart, price, disc, code, maxkey, promo_s, sp, st, cnt, oops);
    if (oops) *bad = 1;
    int64_t v[3] = {sp, st, cnt};
    dkb_block_sums_add<TPB, 3>(v, partial, add);
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *lpart, *price, *disc, *pkey, *ptype;
    const dkb_cand_param *pdate;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_partkey:i32 l_extendedprice:dec2 l_discount:dec2", &ship,
                      &lpart, &price, &disc) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_type:dict", &pkey, &ptype) ||
        DKB_BIND_PARAMS(params, "date", &pdate))
        return DKB_CAND_EINVAL;
    if (ptype->dict->size > NO_PART) return DKB_CAND_EINVAL;
    if (res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_FLOAT || res->cap < 1) return DKB_CAND_EINVAL;
    const int64_t hi = dkb_add_months(pdate->i, 1) - 1;
    if (pdate->i < INT32_MIN || hi > INT32_MAX) return DKB_CAND_EINVAL;
    dkb_cand_res_col *out = &res->cols[0];
    promo_mask mask;
    memset(&mask, 0, sizeof mask);
    for (int c = 0; c < ptype->dict->size; c++)
        mask.is_promo[c] = ptype->dict->len[c] >= 5 && memcmp(ptype->dict->str[c], "PROMO", 5) == 0;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = ship->n, np = pkey->n, maxkey = np; /* dense part keys 1..N; n: the whole table's rows */
    int rc = 0, sms = 0, h_bad = 0, passes = 0;
    int64_t grid = 0, *d_part = NULL;
    uint8_t *d_code = NULL;
    int *d_bad = NULL;
    void *d_block = NULL;
    __int128 sums[3] = {0, 0, 0}; /* promo revenue, revenue, lines */
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    if (n > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q14_scan, TPB, 0, &sms, &grid)); /* one resident wave */
        grid = dkb_scan_grid(grid, n, TPB, MAX_ROWS_PER_BLOCK);
        const dkb_dev_part parts[] = {
            {(void **)&d_code, (size_t)maxkey + 1, NO_PART},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_part, sizeof(int64_t) * 3 * grid, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* the parts' type codes, then the fused scan */
        if (np > 0)
            part_codes<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)pkey->data,
                                                                (const uint8_t *)ptype->data, np, maxkey, d_code,
                                                                d_bad);
        DKB_CUDA_TRY("part_codes launch", cudaGetLastError());
        /* the whole columns in one pass, or under a budget load by load: every
         * pass the same grid, the first writing the partials, the rest adding */
        for (dkb_stream_begin_ex(&st, db, env, 4, Q14_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st); passes++) {
            const dkb_cand_vec *c = st.cols;
            const int64_t m = c[0].n;
            q14_scan<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)c[0].data, (const int32_t *)c[1].data,
                                                         (const int64_t *)c[2].data, (const int64_t *)c[3].data, m,
                                                         (uintptr_t)c[0].data % 16 == 0 ? m / 4 / (32 * VEC) : 0,
                                                         (int32_t)pdate->i, (uint32_t)(hi - pdate->i), d_code,
                                                         maxkey, mask, d_part, d_bad, passes > 0);
            DKB_CUDA_TRY("q14_scan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        if (passes > 0) DKB_TRY(dkb_partials_to_host(d_part, grid, 3, sums, d_bad, &h_bad, stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q14.full.cu: a part key outside 1..N (or without a part)\n");
    }
    if (env->nranks > 1) { /* across ranks: (promo, revenue, lines) summed exactly, one all-reduce */
        DKB_TRY(dkb_ranks_sum_i128(env, sums, 3));
        if (!dkb_ranks_writes(env, res)) goto done; /* rank 0 writes the row */
    }
    res->nrows = 1;
    if (sums[2] == 0) {
        out->f64[0] = 0;
        out->is_null[0] = 1;
    } else {
        /* as the baseline: (promo * 100.00 at scale 6) / (total at scale 4), in doubles */
        const double x = (double)(sums[0] * 10000) / 1e6, y = (double)sums[1] / 1e4;
        out->f64[0] = x / y;
        out->is_null[0] = 0;
    }
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    return rc;
}
