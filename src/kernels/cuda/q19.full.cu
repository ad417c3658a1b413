/* q19.full.cu: expert CUDA full-mode candidate for TPC-H Q19 (Discounted
 * Revenue).
 *
 *   select sum(l_extendedprice * (1 - l_discount)) as revenue
 *   from lineitem, part
 *   where p_partkey = l_partkey and l_shipmode in ('AIR', 'AIR REG')
 *     and l_shipinstruct = 'DELIVER IN PERSON'
 *     and (   (p_brand = ':brand1' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
 *              and l_quantity between :quantity1 and :quantity1 + 10 and p_size between 1 and 5)
 *          or (p_brand = ':brand2' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
 *              and l_quantity between :quantity2 and :quantity2 + 10 and p_size between 1 and 10)
 *          or (p_brand = ':brand3' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
 *              and l_quantity between :quantity3 and :quantity3 + 10 and p_size between 1 and 15));
 *
 * Plan (all on env->stream):
 *  1. Host: the brand and container parameters become 256-entry bit masks
 *     by dictionary code (bit b: branch b's brand / one of its containers).
 *  2. part_bits: one byte per dense part key 1..N (scattered by p_partkey):
 *     the branches the part can satisfy (brand & container & size bounds).
 *     2 MB at SF10: stays in L2.
 *  3. q19_scan: one fused pass over lineitem (grid-stride, 4 rows in flight
 *     per thread): ship mode and instruction codes first (1 + 1 byte, about
 *     1 line in 28 passes); only those read l_partkey and the part's bits;
 *     rows with bits read l_quantity, which clears the branches whose range
 *     excludes it; the rare survivors read price and discount (late
 *     materialization). Revenue is exact int64 at scale 4 per thread and
 *     block (a block reads at most 2^20 rows), per-block (sum, count)
 *     partials go to the host and are added in __int128. No line: NULL.
 *
 * Bytes read (floor, SF10): l_shipmode, l_shipinstruct 2 B per item (60M:
 * 0.12 GB) + l_partkey 4 B and l_quantity 8 B where the codes pass (most
 * sectors of l_partkey, ~1/4 of l_quantity's), price and discount for a
 * few thousand rows; p_partkey, p_brand, p_container, p_size 10 B x 2M. The
 * baseline's column floor (every column named, 60M x 30 B = 1.8 GB) is
 * what the harness divides by; this reads ~0.4-0.6 GB of it.
 *
 * Under a memory budget (env->budget streams lineitem; part is whole) the
 * six lineitem columns come load by load through a dkb_stream walk with
 * DKB_STREAM_OVERLAP (the next load's copy overlaps this load's scan);
 * without one the walk is one pass over the whole columns, as before. The
 * part bits are built once, before the walk. Every pass launches the same
 * grid (sized by the whole table's rows): the first pass writes each
 * block's (revenue, count), later passes add to it, so the partials are
 * the whole table's (exact integers, whatever the loads). A block's int64
 * sum stays safe: over all passes it reads at most n / grid + passes *
 * UNROLL * TPB rows (n / grid <= 2^20), each below 2^31 at scale 4. No
 * sync per pass; one round trip after the walk.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): each rank scans its
 * share of lineitem as above (part is whole on every rank, so the part
 * bits are the same); the exact (revenue, lines) pair is summed over the
 * ranks in one __int128 all-reduce (dkb_ranks_sum_i128), which every rank
 * calls, also one with an empty share or no scan (it adds zeros); rank 0
 * writes the row. On one rank nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i128, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

enum { TPB = 256, NWARP = TPB / 32, UNROLL = 4, MAX_ROWS_PER_BLOCK = 1 << 20, NBRANCH = 3, NCONT = 4 };
#define NO_PART 0x80u /* part_bits value of a key without a part */

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem (part whole) */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q19_COLS[] = {"l_partkey",  "l_quantity", "l_extendedprice",
                                       "l_discount", "l_shipmode", "l_shipinstruct"};


static const char *const CONTAINER[NBRANCH][NCONT] = {
    {"SM CASE", "SM BOX", "SM PACK", "SM PKG"},
    {"MED BAG", "MED BOX", "MED PKG", "MED PACK"},
    {"LG CASE", "LG BOX", "LG PACK", "LG PKG"},
};
static const int MAX_SIZE[NBRANCH] = {5, 10, 15};

/* Kernel arguments: the branch masks and quantity ranges. */
typedef struct {
    uint8_t brand_bits[256], cont_bits[256];
    int32_t max_size[NBRANCH]; /* p_size between 1 and this */
} part_masks;

typedef struct {
    int64_t qlo[NBRANCH], qhi[NBRANCH]; /* l_quantity bounds, hundredths, inclusive */
} qty_ranges;

/* bits[key] = branches part key can satisfy (bits preset to NO_PART); a key
 * outside 0..maxkey sets *bad. */
__global__ void part_bits(const int32_t *__restrict__ pkey, const uint8_t *__restrict__ pbrand,
                          const uint8_t *__restrict__ pcont, const int32_t *__restrict__ psize, int64_t np,
                          int64_t maxkey, part_masks masks, uint8_t *__restrict__ bits, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = pkey[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        const int32_t s = psize[i];
        unsigned size_bits = 0;
#pragma unroll
        for (int b = 0; b < NBRANCH; b++)
            if (s >= 1 && s <= masks.max_size[b]) size_bits |= 1u << b;
        bits[k] = (uint8_t)(masks.brand_bits[pbrand[i]] & masks.cont_bits[pcont[i]] & size_bits);
    }
}

/* partial[2 * block + {0, 1}] = revenue (scale 4) and count of the block's
 * qualifying lines (add: added to the partials already there).
 * mode1/mode2/instr: codes, or 256 (matches nothing). */
__global__ void __launch_bounds__(TPB) q19_scan(const uint8_t *__restrict__ lmode, const uint8_t *__restrict__ linstr,
                                                const int32_t *__restrict__ lpart, const int64_t *__restrict__ lqty,
                                                const int64_t *__restrict__ lprice,
                                                const int64_t *__restrict__ ldisc, int64_t n, int mode1, int mode2,
                                                int instr, const uint8_t *__restrict__ bits, int64_t maxkey,
                                                qty_ranges q, int64_t *__restrict__ partial, int *__restrict__ bad,
                                                int add) {
    const int64_t stride = (int64_t)gridDim.x * TPB;
    int64_t sum = 0, cnt = 0;
    int oops = 0;
    for (int64_t base = (int64_t)blockIdx.x * TPB + threadIdx.x; base < n; base += stride * UNROLL) {
        bool common[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int64_t i = base + u * stride;
            bool ok = false;
            if (i < n) {
                const int m = __ldg(lmode + i);
                ok = (m == mode1 || m == mode2) && (int)__ldg(linstr + i) == instr;
            }
            common[u] = ok;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (!common[u]) continue;
            const int64_t i = base + u * stride;
            const int64_t pk = __ldg(lpart + i);
            unsigned b = pk >= 0 && pk <= maxkey ? __ldg(bits + pk) : NO_PART;
            if (b & NO_PART) {
                oops = 1;
                continue;
            }
            if (!b) continue;
            const int64_t qv = __ldg(lqty + i);
#pragma unroll
            for (int k = 0; k < NBRANCH; k++)
                if (qv < q.qlo[k] || qv > q.qhi[k]) b &= ~(1u << k);
            if (!b) continue;
            sum += __ldg(lprice + i) * (100 - __ldg(ldisc + i));
            cnt++;
        }
    }
    if (oops) *bad = 1;
    int64_t v[2] = {sum, cnt};
    dkb_block_sums_add<TPB, 2>(v, partial, add);
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *lpart, *lqty, *lprice, *ldisc, *lmode, *linstr, *pkey, *pbrand, *pcont, *psize;
    const dkb_cand_param *pb[NBRANCH], *pq[NBRANCH];
    dkb_cand_res_col *out;
    if (DKB_BIND_COLS(db, "lineitem",
                      "l_partkey:i32 l_quantity:dec2 l_extendedprice:dec2 l_discount:dec2 l_shipmode:dict "
                      "l_shipinstruct:dict",
                      &lpart, &lqty, &lprice, &ldisc, &lmode, &linstr) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_brand:dict p_container:dict p_size:i32", &pkey, &pbrand, &pcont,
                      &psize) ||
        DKB_BIND_PARAMS(params, "brand1:str brand2:str brand3:str quantity1 quantity2 quantity3", &pb[0], &pb[1],
                        &pb[2], &pq[0], &pq[1], &pq[2]) ||
        DKB_BIND_RES(res, "revenue:dec4", &out) || res->cap < 1)
        return DKB_CAND_EINVAL;

    /* the branches' brand and container masks by dictionary code, size bounds and quantity ranges */
    part_masks masks;
    qty_ranges q;
    memset(&masks, 0, sizeof masks);
    for (int b = 0; b < NBRANCH; b++) {
        if (pq[b]->i > INT64_MAX / 100 - 10 || pq[b]->i < INT64_MIN / 100) return DKB_CAND_EINVAL;
        const int bc = dkb_cand_dict_code(pbrand->dict, pb[b]->s);
        if (bc >= 0) masks.brand_bits[bc] |= (uint8_t)(1u << b);
        for (int c = 0; c < NCONT; c++) {
            const int cc = dkb_cand_dict_code(pcont->dict, CONTAINER[b][c]);
            if (cc >= 0) masks.cont_bits[cc] |= (uint8_t)(1u << b);
        }
        q.qlo[b] = pq[b]->i * 100;
        q.qhi[b] = (pq[b]->i + 10) * 100;
        masks.max_size[b] = MAX_SIZE[b];
    }
    const int air = dkb_cand_dict_code(lmode->dict, "AIR"), air_reg = dkb_cand_dict_code(lmode->dict, "AIR REG");
    const int in_person = dkb_cand_dict_code(linstr->dict, "DELIVER IN PERSON");
    const int mode1 = air >= 0 ? air : 256, mode2 = air_reg >= 0 ? air_reg : 256, instr = in_person >= 0 ? in_person : 256;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t n = lpart->n, np = pkey->n, maxkey = np; /* dense part keys 1..N; n: the whole table's rows */
    int rc = 0, sms = 0, h_bad = 0, passes = 0;
    int64_t *d_part = NULL;
    uint8_t *d_bits = NULL;
    int *d_bad = NULL;
    void *d_block = NULL;
    __int128 sums[2] = {0, 0}; /* revenue, lines */
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    if (n > 0 && instr < 256 && (mode1 < 256 || mode2 < 256)) {
        DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
        const int64_t grid = dkb_scan_grid((int64_t)sms * 8, n, TPB, MAX_ROWS_PER_BLOCK);
        const dkb_dev_part parts[] = {
            {(void **)&d_bits, (size_t)maxkey + 1, NO_PART},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_part, sizeof(int64_t) * 2 * grid, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* the parts' branch bits, then the fused scan */
        if (np > 0)
            part_bits<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)pkey->data,
                                                               (const uint8_t *)pbrand->data,
                                                               (const uint8_t *)pcont->data,
                                                               (const int32_t *)psize->data, np, maxkey, masks,
                                                               d_bits, d_bad);
        DKB_CUDA_TRY("part_bits launch", cudaGetLastError());
        /* the whole columns in one pass, or under a budget load by load: every
         * pass the same grid, the first writing the partials, the rest adding */
        for (dkb_stream_begin_ex(&st, db, env, 6, Q19_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st); passes++) {
            const dkb_cand_vec *c = st.cols;
            q19_scan<<<(unsigned)grid, TPB, 0, stream>>>((const uint8_t *)c[4].data, (const uint8_t *)c[5].data,
                                                         (const int32_t *)c[0].data, (const int64_t *)c[1].data,
                                                         (const int64_t *)c[2].data, (const int64_t *)c[3].data,
                                                         c[0].n, mode1, mode2, instr, d_bits, maxkey, q, d_part,
                                                         d_bad, passes > 0);
            DKB_CUDA_TRY("q19_scan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
        if (passes > 0) DKB_TRY(dkb_partials_to_host(d_part, grid, 2, sums, d_bad, &h_bad, stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q19.full.cu: a part key outside 1..N (or without a part)\n");
    }
    if (env->nranks > 1) { /* across ranks: (revenue, lines) summed exactly, one all-reduce (every rank, scan or not) */
        DKB_TRY(dkb_ranks_sum_i128(env, sums, 2));
        if (!dkb_ranks_writes(env, res)) goto done; /* rank 0 writes the row */
    }
    res->nrows = 1;
    dkb_put_dec(out, 0, sums[0], 4);
    out->is_null[0] = sums[1] == 0;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    return rc;
}
