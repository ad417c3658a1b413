/* q17.full.cu: expert CUDA full-mode candidate for TPC-H Q17 (Small-Quantity-
 * Order Revenue).
 *
 *   select sum(l_extendedprice) / 7.0 as avg_yearly
 *   from lineitem, part
 *   where p_partkey = l_partkey and p_brand = ':brand' and p_container = ':container'
 *     and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey);
 *
 * Plan (all on env->stream):
 *  1. part_select: one thread per 32 parts tests the two dictionary codes
 *     (about 1 part in 1000) into a bitmap over partkey - 1 (part keys are
 *     dense 1..N, checked for the chosen parts), gives each chosen part a
 *     dense slot (one atomic per chosen part) and sets its bit in a 16 KB
 *     coarse bitmap (one bit per 2^shift parts: 16 parts at SF10, so ~1.6%
 *     of the lines pass it). The slot count comes back.
 *  2. q17_scan, built for memory-level parallelism: each block copies the
 *     coarse bitmap into shared memory; each warp streams l_partkey in
 *     tiles of 256 keys (two 16-byte loads per lane, coalesced) and tests
 *     them against the shared copy (no global gather per line: the first
 *     version read the 250 KB fine bitmap per line, one line after another
 *     per thread: 556 us at SF10). Lines that pass go to a per-warp queue in
 *     shared memory; each time it holds 32, every lane takes one: the fine
 *     bit, then (chosen part) slot, quantity and price read together (late
 *     materialization), quantity and count added into the slot (global
 *     atomics over ~2000 addresses, ~0.1% of the lines), and the warp's hits
 *     appended to a global hit list with one atomic. If the list overflows
 *     its capacity, step 4 rescans lineitem.
 *  3. The per-slot sums and counts come back; the host forms each limit as
 *     the baseline does (exact average as a long double quotient rounded once
 *     to double, times 0.2 as a double) and sends the limits back.
 *  4. q17_hits (or q17_rescan): lines with quantity / 100 (a double) below
 *     their slot's limit add their price into per-block int64 partials; the
 *     host adds them in __int128 and divides by 7.0 once. No line: NULL.
 *
 * Bytes read (floor, SF10): l_partkey 4 B x 60M = 0.24 GB; quantity and
 * price only for ~0.1% of lines (counted whole: + 0.96 GB); part's two code
 * bytes and keys 6 B x 2M = 12 MB.
 *
 * Under a memory budget (env->budget streams lineitem; part is whole) step
 * 2 runs once per load of l_partkey, l_quantity and l_extendedprice,
 * through a dkb_stream walk with DKB_STREAM_OVERLAP (the next load's copy
 * overlaps this load's scan); without one the walk is one pass over the
 * whole columns, as before. Every pass adds into the same slot sums and
 * counts and appends to the same hit list (integer atomics and values, not
 * row numbers: nothing points into a load after its pass), so after the
 * walk they are the whole table's whatever the loads, and steps 3 and 4
 * run once as without a budget: a budget costs no extra sync or pass. Only
 * when the hit list overflowed does step 4 walk lineitem a second time
 * (q17_rescan per load, adding into per-block partials zeroed before that
 * walk). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i64, dkb_ranks_sum_mixed, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

/* TPB threads a block; a warp reads tiles of TILE_ROWS part keys (VEC int4
 * per lane); its queue holds a tile's rows plus the < 32 left over. The
 * coarse bitmap (COARSE_WORDS words, in shared memory) has one bit per
 * 2^shift parts. */
enum { TPB = 256, WARPS = TPB / 32, VEC = 2, TILE_ROWS = 32 * 4 * VEC, QCAP = TILE_ROWS + 32, COARSE_WORDS = 4096 };

typedef struct {
    int64_t qty, price; /* hundredths */
    int32_t slot, pad;
} hit;

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q17_COLS[] = {"l_partkey", "l_quantity", "l_extendedprice"};

/* dkb_block_sums<TPB, 1> with a choice: add == 0 writes the block's sum
 * into out[blockIdx.x], add != 0 adds it to what is there (q17_rescan's
 * later passes). Exact and deterministic as dkb_block_sums. */
__device__ __forceinline__ void q17_block_sum(int64_t v, int64_t *__restrict__ out, int add) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(DKB_FULL_MASK, v, off);
    __shared__ int64_t w[TPB / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) w[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        int64_t s = 0;
        for (int k = 0; k < TPB / 32; k++) s += w[k];
        out[blockIdx.x] = add ? out[blockIdx.x] + s : s;
    }
}

/* bits[w] bit j: part row 32w + j has the brand and container; slot[row]
 * its dense slot (*nsel counts them); coarse bit (row >> shift) set for
 * each chosen row (coarse preset to 0); a chosen part whose key is not
 * row + 1 sets *bad. */
__global__ void part_select(const int32_t *__restrict__ pkey, const uint8_t *__restrict__ brand,
                            const uint8_t *__restrict__ cont, int64_t np, int bc, int cc,
                            uint32_t *__restrict__ bits, int32_t *__restrict__ slot, int *__restrict__ nsel,
                            uint32_t *__restrict__ coarse, int shift, int *__restrict__ bad) {
    const int64_t nwords = (np + 31) / 32;
    for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += (int64_t)gridDim.x * blockDim.x) {
        uint32_t m = 0;
        const int64_t hi = (w + 1) * 32 < np ? (w + 1) * 32 : np;
        for (int64_t r = w * 32; r < hi; r++) {
            if (brand[r] != bc || cont[r] != cc) continue;
            if (pkey[r] != r + 1) *bad = 1;
            m |= 1u << (r - w * 32);
            slot[r] = atomicAdd(nsel, 1);
            const uint32_t c = (uint32_t)(r >> shift);
            atomicOr(coarse + (c >> 5), 1u << (c & 31));
        }
        bits[w] = m;
    }
}

/* 1 when part row p = key - 1 exists and its coarse bit (p >> shift) is
 * set in the block's shared copy: the part may be chosen. */
__device__ __forceinline__ uint32_t coarse_hit(int32_t key, int64_t np, int shift, const uint32_t *coarse_s) {
    const uint32_t p = (uint32_t)key - 1u;
    if ((uint64_t)p >= (uint64_t)np) return 0;
    const uint32_t c = p >> shift;
    return (coarse_s[c >> 5] >> (c & 31)) & 1u;
}

/* One batch of up to 32 coarse hits, one per lane (valid lanes; every lane
 * of the warp calls it). The fine bit decides; a chosen part's line reads
 * its slot, quantity and price together, adds quantity and count into the
 * slot, and the warp's hits are appended to the list with one atomic
 * (list[0..min(*nlist, cap)); *nlist counts past cap on overflow). */
__device__ __forceinline__ void q17_batch(bool valid, int64_t i, const int32_t *__restrict__ lpart,
                                          const int64_t *__restrict__ lqty, const int64_t *__restrict__ lprice,
                                          const uint32_t *__restrict__ bits, const int32_t *__restrict__ slot,
                                          unsigned long long *__restrict__ qsum, unsigned long long *__restrict__ qcnt,
                                          hit *__restrict__ list, int64_t cap, unsigned long long *__restrict__ nlist,
                                          int lane) {
    bool chosen = false;
    hit h;
    if (valid) {
        const uint32_t p = (uint32_t)__ldg(lpart + i) - 1u; /* < np: the coarse test passed */
        if ((__ldg(bits + (p >> 5)) >> (p & 31)) & 1) {
            h.slot = __ldg(slot + p);
            h.qty = __ldg(lqty + i);
            h.price = __ldg(lprice + i);
            h.pad = 0;
            atomicAdd(qsum + h.slot, (unsigned long long)h.qty);
            atomicAdd(qcnt + h.slot, 1ull);
            chosen = true;
        }
    }
    const unsigned m = __ballot_sync(0xffffffffu, chosen);
    if (!m) return;
    unsigned long long base = 0;
    if (lane == 0) base = atomicAdd(nlist, (unsigned long long)__popc(m));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (chosen) {
        const unsigned long long at = base + (unsigned long long)__popc(m & ((1u << lane) - 1u));
        if (at < (unsigned long long)cap) list[at] = h;
    }
}

/* The chosen parts' lines: quantity sums and counts per slot, and the hits
 * listed (list[0..min(*nlist, cap))). A part key outside 1..np is not in
 * part: no match (as the baseline's join).
 *
 * Each block copies the 16 KB coarse bitmap into shared memory. Each warp
 * streams tiles of TILE_ROWS part keys (VEC 16-byte loads per lane; the
 * first ntiles tiles, 0 when lpart is not 16-byte aligned), then rows
 * ntiles * TILE_ROWS..n-1 one per lane; keys whose coarse bit is set (a few
 * percent) go to the warp's queue, processed 32 at a time (q17_batch), the
 * rest (< 32) at the end. */
__global__ void __launch_bounds__(TPB) q17_scan(const int32_t *__restrict__ lpart, const int64_t *__restrict__ lqty,
                                                const int64_t *__restrict__ lprice, int64_t n, int64_t ntiles,
                                                int64_t np, const uint32_t *__restrict__ coarse, int shift,
                                                const uint32_t *__restrict__ bits, const int32_t *__restrict__ slot,
                                                unsigned long long *__restrict__ qsum,
                                                unsigned long long *__restrict__ qcnt, hit *__restrict__ list,
                                                int64_t cap, unsigned long long *__restrict__ nlist) {
    __shared__ uint32_t coarse_s[COARSE_WORDS];
    __shared__ int64_t queue_s[WARPS][QCAP];
    for (int k = threadIdx.x; k < COARSE_WORDS; k += TPB) coarse_s[k] = __ldg(coarse + k);
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t *queue = queue_s[warp];
    const int64_t gwarp = (int64_t)blockIdx.x * WARPS + warp, nwarps = (int64_t)gridDim.x * WARPS;
    const int pending = dkb_queued_scan<VEC>(
        lpart, n, ntiles, gwarp, nwarps, queue, lane,
        [&](int32_t key) { return coarse_hit(key, np, shift, coarse_s); },
        [&](int64_t i) { q17_batch(true, i, lpart, lqty, lprice, bits, slot, qsum, qcnt, list, cap, nlist, lane); });
    if (pending > 0)
        q17_batch(lane < pending, lane < pending ? queue[lane] : 0, lpart, lqty, lprice, bits, slot, qsum, qcnt,
                  list, cap, nlist, lane);
}

/* Price sums (and counts) of the listed hits below their slot's limit. */
__global__ void __launch_bounds__(TPB) q17_hits(const hit *__restrict__ list, int64_t m,
                                                const double *__restrict__ limit, int64_t *__restrict__ psum,
                                                int64_t *__restrict__ pcnt) {
    int64_t s = 0, c = 0;
    for (int64_t k = (int64_t)blockIdx.x * TPB + threadIdx.x; k < m; k += (int64_t)gridDim.x * TPB) {
        const hit h = list[k];
        if ((double)h.qty / (double)100 < limit[h.slot]) s += h.price, c++;
    }
    int64_t vs[1] = {s}, vc[1] = {c};
    dkb_block_sums<TPB, 1>(vs, psum);
    __syncthreads();
    dkb_block_sums<TPB, 1>(vc, pcnt);
}

/* The same over lineitem itself (when the hit list overflowed), one load
 * at a time: the block's sums are added to psum / pcnt (zeroed before the
 * first load). A block reads at most n / gridDim.x + passes * TPB rows of
 * the whole table over the walk, each price below 2^24: int64 is safe. */
__global__ void __launch_bounds__(TPB) q17_rescan(const int32_t *__restrict__ lpart, const int64_t *__restrict__ lqty,
                                                  const int64_t *__restrict__ lprice, int64_t n, int64_t np,
                                                  const uint32_t *__restrict__ bits, const int32_t *__restrict__ slot,
                                                  const double *__restrict__ limit, int64_t *__restrict__ psum,
                                                  int64_t *__restrict__ pcnt) {
    int64_t s = 0, c = 0;
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < n; i += (int64_t)gridDim.x * TPB) {
        const uint32_t p = (uint32_t)__ldg(lpart + i) - 1u;
        if ((uint64_t)p >= (uint64_t)np || !((__ldg(bits + (p >> 5)) >> (p & 31)) & 1)) continue;
        if ((double)__ldg(lqty + i) / (double)100 < limit[__ldg(slot + p)]) s += __ldg(lprice + i), c++;
    }
    q17_block_sum(s, psum, 1);
    __syncthreads();
    q17_block_sum(c, pcnt, 1);
}

/* ---- across ranks (env->nranks > 1) ----
 *
 * lineitem is split, part whole on every rank: a chosen part's lines are on
 * every rank, but its slot is not the same on every rank (part_select hands
 * slots out by atomicAdd). So the slots' quantity sums and counts are
 * merged in a rank-independent order, the chosen parts' row order:
 * q17_slot_rows gives each slot its part row, the host sorts the (row, slot)
 * pairs, and the sums and counts go through one all-reduce of int64 in row
 * order, back into this rank's slots. Every rank then forms the same limits
 * and tests its own lines; the small lines' price sums and counts are
 * summed in a second all-reduce (dkb_ranks_sum_mixed). */

/* row_of[slot[r]] = r for every chosen part row r (bits[r >> 5] bit r & 31). */
__global__ void q17_slot_rows(const uint32_t *__restrict__ bits, const int32_t *__restrict__ slot, int64_t nwords,
                              int32_t *__restrict__ row_of) {
    for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += (int64_t)gridDim.x * blockDim.x)
        for (uint32_t m = bits[w]; m; m &= m - 1) {
            const int64_t r = w * 32 + (__ffs(m) - 1);
            row_of[slot[r]] = (int32_t)r;
        }
}

typedef struct {
    int32_t row, slot;
} q17_row_slot;

static int q17_by_row(const void *a, const void *b) {
    const int32_t x = ((const q17_row_slot *)a)->row, y = ((const q17_row_slot *)b)->row;
    return (x > y) - (x < y);
}

/* h_q[0, nsel) (quantity sums) and h_q[nsel, 2 nsel) (counts), by this
 * rank's slots, replaced by their sums over the ranks. d_scratch: room for
 * nsel int32 on the device (free until the limits are copied there). */
static int q17_ranks_merge_slots(const dkb_cand_env *env, const uint32_t *d_bits, const int32_t *d_slot,
                                 int64_t nwords, int64_t nsel, int sms, int32_t *d_scratch, unsigned long long *h_q,
                                 cudaStream_t stream) {
    int rc = 0;
    int32_t *row_of = (int32_t *)malloc(sizeof(int32_t) * (size_t)nsel);
    q17_row_slot *rs = (q17_row_slot *)malloc(sizeof(q17_row_slot) * (size_t)nsel);
    int64_t *w = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)nsel);
    DKB_FAIL_IF(!row_of || !rs || !w, DKB_CAND_ENOMEM, "q17.full.cu: out of host memory for the ranks' merge\n");
    q17_slot_rows<<<(unsigned)(sms * 4), 256, 0, stream>>>(d_bits, d_slot, nwords, d_scratch);
    DKB_CUDA_TRY("q17_slot_rows launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{row_of, d_scratch, sizeof(int32_t) * (size_t)nsel}};
        DKB_CUDA_TRY("copy back slot rows", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int64_t s = 0; s < nsel; s++) rs[s].row = row_of[s], rs[s].slot = (int32_t)s;
    qsort(rs, (size_t)nsel, sizeof *rs, q17_by_row);
    for (int64_t k = 0; k < nsel; k++) w[k] = (int64_t)h_q[rs[k].slot], w[nsel + k] = (int64_t)h_q[nsel + rs[k].slot];
    DKB_TRY(dkb_ranks_sum_i64(env, w, 2 * nsel));
    for (int64_t k = 0; k < nsel; k++)
        h_q[rs[k].slot] = (unsigned long long)w[k], h_q[nsel + rs[k].slot] = (unsigned long long)w[nsel + k];
done:
    free(row_of);
    free(rs);
    free(w);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *pkey, *pbrand, *pcont, *lpart, *lqty, *lprice;
    const dkb_cand_param *pb, *pc;
    if (DKB_BIND_COLS(db, "part", "p_partkey:i32 p_brand:dict p_container:dict", &pkey, &pbrand, &pcont) ||
        DKB_BIND_COLS(db, "lineitem", "l_partkey:i32 l_quantity:dec2 l_extendedprice:dec2", &lpart, &lqty, &lprice) ||
        DKB_BIND_PARAMS(params, "brand:str container:str", &pb, &pc))
        return DKB_CAND_EINVAL;
    if (res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_FLOAT || res->cap < 1) return DKB_CAND_EINVAL;
    dkb_cand_res_col *out = &res->cols[0];
    res->nrows = 1;
    out->f64[0] = 0;
    out->is_null[0] = 1;
    const int bc = dkb_cand_dict_code(pbrand->dict, pb->s), cc = dkb_cand_dict_code(pcont->dict, pc->s);
    if (bc < 0 || cc < 0) return 0; /* no part qualifies: sum over no rows */
    const int64_t np = pkey->n, n = lpart->n, nwords = (np + 31) / 32;
    if (np == 0 || (n == 0 && env->nranks <= 1)) return 0; /* across ranks an empty share still merges (below) */

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t cap = n / 256 > 65536 ? n / 256 : 65536; /* hit list; overflow: rescan */
    int rc = 0, sms = 0, shift = 0, h_flags[2] = {0, 0}; /* [0]: bad, [1]: chosen parts */
    unsigned long long h_nlist = 0;
    int64_t grid = 0, grid2 = 0, nsel = 0;
    uint32_t *d_bits = NULL, *d_coarse = NULL;
    int32_t *d_slot = NULL;
    int *d_flags = NULL;
    unsigned long long *d_qsum = NULL, *d_nlist = NULL, *h_q = NULL;
    hit *d_list = NULL;
    double *d_limit = NULL, *h_limit = NULL;
    int64_t *d_part = NULL, *h_part = NULL;
    void *d_block = NULL, *d_block2 = NULL; /* the parts' buffers; the lines' (sized by the chosen parts) */
    __int128 lost = 0;
    int64_t nlost = 0;
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until a walk begins (done: ends it) */
    DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_flags, sizeof(int) * 2, 0},
            {(void **)&d_coarse, sizeof(uint32_t) * COARSE_WORDS, 0},
            {(void **)&d_bits, sizeof(uint32_t) * (size_t)nwords, DKB_NO_FILL},
            {(void **)&d_slot, sizeof(int32_t) * (size_t)np, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    /* 1. the chosen parts: bitmap, slots, coarse bitmap; their count comes back */
    while (((np - 1) >> shift) >= (int64_t)COARSE_WORDS * 32) shift++; /* np >= 1 */
    part_select<<<(unsigned)((nwords + 255) / 256), 256, 0, stream>>>(
        (const int32_t *)pkey->data, (const uint8_t *)pbrand->data, (const uint8_t *)pcont->data, np, bc, cc, d_bits,
        d_slot, d_flags + 1, d_coarse, shift, d_flags);
    DKB_CUDA_TRY("part_select launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{h_flags, d_flags, sizeof(int) * 2}};
        DKB_CUDA_TRY("copy back flags", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    DKB_FAIL_IF(h_flags[0], DKB_CAND_EINTERNAL,
                "q17.full.cu: a chosen part's p_partkey is not its row + 1 (keys must be dense 1..N)\n");
    nsel = h_flags[1];
    if (nsel == 0) goto done;

    /* 2. the chosen parts' lines: quantity sums and counts per slot, the hit list */
    DKB_CUDA_TRY("resident grid", dkb_resident_grid(q17_scan, TPB, 0, &sms, &grid)); /* one resident wave */
    h_q = (unsigned long long *)malloc(sizeof(unsigned long long) * 2 * (size_t)nsel);
    h_limit = (double *)malloc(sizeof(double) * (size_t)nsel);
    grid2 = (int64_t)sms * 4;
    h_part = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)grid2);
    DKB_FAIL_IF(!h_q || !h_limit || !h_part, DKB_CAND_ENOMEM, "q17.full.cu: out of host memory for %lld chosen parts\n",
                (long long)nsel);
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_qsum, sizeof(unsigned long long) * 2 * nsel, 0},
            {(void **)&d_nlist, sizeof(unsigned long long), 0},
            {(void **)&d_list, sizeof(hit) * (size_t)cap, DKB_NO_FILL},
            {(void **)&d_limit, sizeof(double) * (size_t)nsel, DKB_NO_FILL},
            {(void **)&d_part, sizeof(int64_t) * 2 * grid2, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers (lines)", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block2, stream));
    }
    /* the whole columns in one pass, or under a budget load by load (each pass
     * adds into the slots' sums and appends to the hit list) */
    for (dkb_stream_begin_ex(&st, db, env, 3, Q17_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
        const dkb_cand_vec *c = st.cols;
        const int64_t m = c[0].n;
        if (m <= 0) continue;
        q17_scan<<<(unsigned)dkb_grid_cap(grid, m, TPB), TPB, 0, stream>>>(
            (const int32_t *)c[0].data, (const int64_t *)c[1].data, (const int64_t *)c[2].data, m,
            (uintptr_t)c[0].data % 16 == 0 ? m / 4 / (32 * VEC) : 0, np, d_coarse, shift, d_bits, d_slot, d_qsum,
            d_qsum + nsel, d_list, cap, d_nlist);
        DKB_CUDA_TRY("q17_scan launch", cudaGetLastError());
    }
    DKB_TRY(dkb_stream_end(&st));
    {
        const dkb_host_copy back[] = {{h_q, d_qsum, sizeof(unsigned long long) * 2 * nsel},
                                      {&h_nlist, d_nlist, sizeof(unsigned long long)}};
        DKB_CUDA_TRY("copy back sums", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    /* across ranks: every rank's quantity sums and counts per chosen part
     * (in part row order: slots differ by rank), summed into h_q */
    if (env->nranks > 1)
        DKB_TRY(q17_ranks_merge_slots(env, d_bits, d_slot, nwords, nsel, sms, (int32_t *)d_limit, h_q, stream));
    {
        /* 3. 0.2 * avg(l_quantity), as the baseline: exact avg rounded once, times 0.2 */
        const double fifth = (double)2 / (double)10;
        for (int64_t s = 0; s < nsel; s++) {
            const int64_t qs = (int64_t)h_q[s], qc = (int64_t)h_q[nsel + s];
            h_limit[s] = qc ? (double)((long double)qs / ((long double)qc * (long double)100)) * fifth : 0;
        }
    }
    DKB_CUDA_TRY("cudaMemcpyAsync limits",
                 cudaMemcpyAsync(d_limit, h_limit, sizeof(double) * (size_t)nsel, cudaMemcpyHostToDevice, stream));
    /* 4. the lines below their part's limit: from the hit list, or lineitem again when it overflowed */
    if (h_nlist <= (unsigned long long)cap) {
        if (h_nlist > 0)
            q17_hits<<<(unsigned)grid2, TPB, 0, stream>>>(d_list, (int64_t)h_nlist, d_limit, d_part, d_part + grid2);
        else
            DKB_CUDA_TRY("cudaMemsetAsync partials", cudaMemsetAsync(d_part, 0, sizeof(int64_t) * 2 * grid2, stream));
        DKB_CUDA_TRY("q17_hits launch", cudaGetLastError());
    } else { /* lineitem again (the whole columns, or load by load), adding into zeroed partials */
        DKB_CUDA_TRY("cudaMemsetAsync partials", cudaMemsetAsync(d_part, 0, sizeof(int64_t) * 2 * grid2, stream));
        for (dkb_stream_begin_ex(&st, db, env, 3, Q17_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const dkb_cand_vec *c = st.cols;
            if (c[0].n <= 0) continue;
            q17_rescan<<<(unsigned)grid2, TPB, 0, stream>>>((const int32_t *)c[0].data, (const int64_t *)c[1].data,
                                                            (const int64_t *)c[2].data, c[0].n, np, d_bits, d_slot,
                                                            d_limit, d_part, d_part + grid2);
            DKB_CUDA_TRY("q17_rescan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
    }
    {
        const dkb_host_copy back[] = {{h_part, d_part, sizeof(int64_t) * 2 * grid2}};
        DKB_CUDA_TRY("copy back partials", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int64_t b = 0; b < grid2; b++) lost += h_part[b], nlost += h_part[grid2 + b];
    /* across ranks: the small lines' exact price sum and count of every
     * rank, summed in one all-reduce; rank 0 writes */
    if (env->nranks > 1) {
        DKB_TRY(dkb_ranks_sum_mixed(env, &nlost, 1, &lost, 1));
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    if (nlost > 0) {
        out->f64[0] = ((double)lost / (double)100) / ((double)70 / (double)10);
        out->is_null[0] = 0;
    }
done:
    dkb_stream_end(&st); /* a load still held after a failure inside a walk (none otherwise) */
    if (d_block2) cudaFreeAsync(d_block2, stream);
    dkb_dev_release(d_block, stream);
    free(h_q);
    free(h_limit);
    free(h_part);
    return rc;
}
