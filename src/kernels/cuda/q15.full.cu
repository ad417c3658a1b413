/* q15.full.cu: expert CUDA full-mode candidate for TPC-H Q15 (Top Supplier).
 *
 *   with revenue0 (supplier_no, total_revenue) as (
 *       select l_suppkey, sum(l_extendedprice * (1 - l_discount)) from lineitem
 *       where l_shipdate >= date ':date' and l_shipdate < date ':date' + interval '3' month
 *       group by l_suppkey)
 *   select s_suppkey, s_name, s_address, s_phone, total_revenue
 *   from supplier, revenue0
 *   where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue0)
 *   order by s_suppkey;
 *
 * Plan (all on env->stream):
 *  1. q15_scan: one fused pass over lineitem built for memory-level
 *     parallelism. Each warp streams l_shipdate in tiles of 256 dates (two
 *     16-byte loads per lane, coalesced), tests the window with one
 *     unsigned compare per date and appends the rows inside it (~4%) to a
 *     per-warp queue in shared memory. Each time the queue holds 32 rows,
 *     every lane takes one and reads its l_suppkey, price and discount
 *     together (32 independent chains per warp; the first version's
 *     per-row branch issued them row after row: 616 us at SF10). Late
 *     materialization: only the window's rows touch those columns. Lanes
 *     of a batch with the same supplier are combined (__match_any_sync)
 *     before the leader adds the exact int64 revenue (scale 4) into
 *     rev[suppkey - 1] with one global atomic (supplier keys dense 1..N;
 *     ~100K addresses, so repeats within a batch are rare at SF10 but
 *     common at small scale factors) and marks seen[suppkey - 1] (the
 *     group exists). Rows past the last full tile (every row when
 *     l_shipdate is not 16-byte aligned) are read one per lane into the
 *     same queue.
 *  2. On the device (no per-supplier data crosses PCIe): q15_max, the
 *     exact maximum over the seen suppliers (a block reduction, one
 *     atomicMax per block on rev ^ 2^63, an order-preserving unsigned key);
 *     q15_count, the winners per tile of SEL_TILE suppliers (and their
 *     total); q15_list, the winners in key order (a tile starts after the
 *     earlier tiles' winners, a thread after its block's earlier threads':
 *     ties keep key order); winners_gather, for the first OUT_ROWS winners,
 *     s_suppkey (checked: row + 1) and s_name, s_address, s_phone into
 *     fixed SLOT-byte slots with their lengths.
 *  3. One copy of that ~7 KB block, one synchronize. Only when the winners
 *     are more than OUT_ROWS, a text is longer than SLOT or a text column
 *     is a dictionary column, the general path copies the winners' rows
 *     back and gathers each column exactly (lengths, prefix sum, copy).
 *
 * Bytes read (floor, SF10): l_shipdate 4 B x 60M = 0.24 GB, plus l_suppkey,
 * price, discount (4 + 8 + 8 B) = 1.2 GB if counted whole (in fact only the
 * window's sectors): 1.44 GB, ~0.34 ms at 4.2 TB/s.
 *
 * Under a memory budget (env->budget streams lineitem; supplier is whole)
 * step 1 runs once per load of the four lineitem columns, through a
 * dkb_stream walk with DKB_STREAM_OVERLAP (the next load's copy overlaps
 * this load's scan); without one the walk is one pass over the whole
 * columns, as before. Each pass adds into the same rev / seen (integer
 * atomics: exact and order-free, so the sums are the whole table's
 * whatever the loads); steps 2 and 3 run once after the walk. No sync per
 * pass. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i64, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

/* TPB threads a block; a warp reads tiles of TILE_ROWS dates (VEC int4 per
 * lane); its queue holds a tile's rows plus the < 32 left over. NO_SUPP: a
 * lane without a supplier in q15_batch. */
enum { TPB = 256, WARPS = TPB / 32, VEC = 2, TILE_ROWS = 32 * 4 * VEC, QCAP = TILE_ROWS + 32 };
#define NO_SUPP 0xffffffffu

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q15_COLS[] = {"l_shipdate", "l_suppkey", "l_extendedprice", "l_discount"};

/* One batch of up to 32 rows of the window, one per lane (valid lanes;
 * every lane of the warp calls it): l_suppkey, price and discount are read
 * together, then lanes with the same supplier add their revenues first
 * (__match_any_sync; the leader sums its peers' values from the warp's
 * scratch) so a supplier gets one atomic per batch, and the leader marks it
 * seen. A supplier key outside 1..ns sets oops. */
__device__ __forceinline__ void q15_batch(bool valid, int64_t i, const int32_t *__restrict__ lsupp,
                                          const int64_t *__restrict__ price, const int64_t *__restrict__ disc,
                                          int64_t ns, unsigned long long *__restrict__ rev,
                                          uint8_t *__restrict__ seen, int64_t *scratch, int lane, int &oops) {
    uint32_t s = NO_SUPP;
    int64_t r = 0;
    if (valid) {
        const uint32_t k = (uint32_t)__ldg(lsupp + i) - 1u;
        const int64_t p = __ldg(price + i), d = __ldg(disc + i);
        if ((uint64_t)k >= (uint64_t)ns) oops = 1;
        else s = k, r = p * (100 - d);
    }
    const unsigned peers = __match_any_sync(0xffffffffu, s);
    scratch[lane] = r;
    __syncwarp();
    if (s != NO_SUPP && lane == __ffs(peers) - 1) {
        int64_t t = 0;
        for (unsigned m = peers; m; m &= m - 1) t += scratch[__ffs(m) - 1];
        atomicAdd(rev + s, (unsigned long long)t);
        seen[s] = 1;
    }
    __syncwarp();
}

/* rev[s] += revenue (scale 4) and seen[s] = 1 for the window's lines of
 * supplier s + 1; a supplier key outside 1..ns sets *bad.
 *
 * Each warp streams tiles of TILE_ROWS dates (VEC 16-byte loads per lane;
 * the first ntiles tiles, 0 when ship is not 16-byte aligned), then rows
 * ntiles * TILE_ROWS..n-1 one per lane. Rows in the window go to the warp's
 * shared-memory queue; each time it holds 32, all lanes take one and issue
 * their loads together (q15_batch); the rest (< 32) at the end. */
__global__ void __launch_bounds__(TPB) q15_scan(const int32_t *__restrict__ ship, const int32_t *__restrict__ lsupp,
                                                const int64_t *__restrict__ price, const int64_t *__restrict__ disc,
                                                int64_t n, int64_t ntiles, int32_t lo, uint32_t span, int64_t ns,
                                                unsigned long long *__restrict__ rev, uint8_t *__restrict__ seen,
                                                int *__restrict__ bad) {
    __shared__ int64_t queue_s[WARPS][QCAP];
    __shared__ int64_t scratch_s[WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t *queue = queue_s[warp], *scratch = scratch_s[warp];
    const int64_t gwarp = (int64_t)blockIdx.x * WARPS + warp, nwarps = (int64_t)gridDim.x * WARPS;
    int oops = 0;
    const int pending = dkb_queued_scan<VEC>(
        ship, n, ntiles, gwarp, nwarps, queue, lane,
        [&](int32_t d) { return (uint32_t)((uint32_t)d - (uint32_t)lo <= span); },
        [&](int64_t i) { q15_batch(true, i, lsupp, price, disc, ns, rev, seen, scratch, lane, oops); });
    if (pending > 0)
        q15_batch(lane < pending, lane < pending ? queue[lane] : 0, lsupp, price, disc, ns, rev, seen, scratch, lane,
                  oops);
    if (oops) *bad = 1;
}

/* ---- the winners on the device: max, ordered list, text into slots ---- */

/* What comes back in the one round trip (one copy, ~7 KB): the maximum
 * revenue as an order-preserving unsigned key (int64 value ^ 2^63, so 0 is
 * INT64_MIN and a zeroed field is below every value), how many seen
 * suppliers have it, the error flags, and for the first OUT_ROWS of them (in
 * key order) s_suppkey and the text columns' lengths and bytes (a length
 * over SLOT is reported, its bytes are not copied: the host falls back). */
enum { SEL_TPB = 256, SEL_ITEMS = 4, SEL_TILE = SEL_TPB * SEL_ITEMS, OUT_ROWS = 32, SLOT = 64, NTEXT = 3 };
#define SIGN_BIT 0x8000000000000000ull

struct q15_out {
    unsigned long long best;  /* max over seen suppliers of rev ^ SIGN_BIT */
    unsigned long long count; /* seen suppliers with rev ^ SIGN_BIT == best */
    int bad;                  /* q15_scan: an l_suppkey outside 1..ns */
    int bad_key;              /* winners_gather: s_suppkey not row + 1 */
    int32_t key[OUT_ROWS];
    int64_t len[NTEXT][OUT_ROWS];
    char text[NTEXT][OUT_ROWS][SLOT];
};

/* out->best = max(out->best, rev[s] ^ SIGN_BIT over the seen suppliers s):
 * a block reduction, one atomicMax per block. */
__global__ void q15_max(const unsigned long long *__restrict__ rev, const uint8_t *__restrict__ seen, int64_t ns,
                        q15_out *__restrict__ out) {
    __shared__ unsigned long long part[SEL_TPB];
    unsigned long long m = 0;
    for (int64_t s = (int64_t)blockIdx.x * SEL_TPB + threadIdx.x; s < ns; s += (int64_t)gridDim.x * SEL_TPB)
        if (seen[s]) {
            const unsigned long long k = rev[s] ^ SIGN_BIT;
            if (k > m) m = k;
        }
    part[threadIdx.x] = m;
    __syncthreads();
    for (int h = SEL_TPB / 2; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h && part[threadIdx.x + h] > part[threadIdx.x]) part[threadIdx.x] = part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax(&out->best, part[0]);
}

/* How many of suppliers first..first + SEL_ITEMS - 1 (< ns) are winners. */
__device__ __forceinline__ unsigned winners_in(const unsigned long long *__restrict__ rev,
                                               const uint8_t *__restrict__ seen, int64_t ns, int64_t first,
                                               unsigned long long best) {
    unsigned c = 0;
    for (int i = 0; i < SEL_ITEMS; i++) {
        const int64_t s = first + i;
        if (s < ns && seen[s] && (rev[s] ^ SIGN_BIT) == best) c++;
    }
    return c;
}

/* Block b owns suppliers b * SEL_TILE .. + SEL_TILE - 1 (thread t the
 * SEL_ITEMS from b * SEL_TILE + t * SEL_ITEMS): tile_cnt[b] = its winners;
 * out->count += them. */
__global__ void q15_count(const unsigned long long *__restrict__ rev, const uint8_t *__restrict__ seen, int64_t ns,
                          q15_out *__restrict__ out, unsigned *__restrict__ tile_cnt) {
    __shared__ unsigned part[SEL_TPB];
    const unsigned long long best = out->best;
    part[threadIdx.x] =
        winners_in(rev, seen, ns, (int64_t)blockIdx.x * SEL_TILE + (int64_t)threadIdx.x * SEL_ITEMS, best);
    __syncthreads();
    for (int h = SEL_TPB / 2; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        tile_cnt[blockIdx.x] = part[0];
        if (part[0]) atomicAdd(&out->count, (unsigned long long)part[0]);
    }
}

/* The winners in key order: rows[0..out->count). Block b starts after the
 * winners of the tiles before it (thread 0 sums tile_cnt[0..b)), thread t
 * after those of the threads before it (thread 0's serial scan). */
__global__ void q15_list(const unsigned long long *__restrict__ rev, const uint8_t *__restrict__ seen, int64_t ns,
                         const q15_out *__restrict__ out, const unsigned *__restrict__ tile_cnt,
                         int64_t *__restrict__ rows) {
    __shared__ unsigned long long at_s[SEL_TPB];
    const unsigned long long best = out->best;
    const int64_t first = (int64_t)blockIdx.x * SEL_TILE + (int64_t)threadIdx.x * SEL_ITEMS;
    at_s[threadIdx.x] = winners_in(rev, seen, ns, first, best);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long run = 0;
        for (unsigned b = 0; b < blockIdx.x; b++) run += tile_cnt[b];
        for (int t = 0; t < SEL_TPB; t++) {
            const unsigned long long c = at_s[t];
            at_s[t] = run;
            run += c;
        }
    }
    __syncthreads();
    unsigned long long at = at_s[threadIdx.x];
    for (int i = 0; i < SEL_ITEMS; i++) {
        const int64_t s = first + i;
        if (s < ns && seen[s] && (rev[s] ^ SIGN_BIT) == best) rows[at++] = s;
    }
}

/* Block k < min(out->count, OUT_ROWS): winner rows[k]'s s_suppkey (checked
 * against row + 1) and the NTEXT text columns' lengths, and their bytes
 * when they fit a slot. */
__global__ void winners_gather(const int64_t *__restrict__ rows, const int32_t *__restrict__ skey,
                               const int64_t *__restrict__ off0, const char *__restrict__ bytes0,
                               const int64_t *__restrict__ off1, const char *__restrict__ bytes1,
                               const int64_t *__restrict__ off2, const char *__restrict__ bytes2,
                               q15_out *__restrict__ out) {
    const unsigned k = blockIdx.x;
    if (k >= OUT_ROWS || (unsigned long long)k >= out->count) return;
    const int64_t r = rows[k];
    if (threadIdx.x == 0) {
        const int32_t key = skey[r];
        out->key[k] = key;
        if ((int64_t)key != r + 1) out->bad_key = 1;
    }
    const int64_t *off[NTEXT] = {off0, off1, off2};
    const char *bytes[NTEXT] = {bytes0, bytes1, bytes2};
    for (int c = 0; c < NTEXT; c++) {
        const int64_t a = off[c][r], l = off[c][r + 1] - a;
        if (threadIdx.x == 0) out->len[c][k] = l;
        if (l < 0 || l > SLOT) continue;
        for (int64_t i = threadIdx.x; i < l; i += blockDim.x) out->text[c][k][i] = bytes[c][a + i];
    }
}

/* ---- end of the device selection ---- */

/* ---- text gather: rows of a STR or dictionary column into host memory ---- */

/* key[k] = int32 column value at row rows[k] (rows checked by the caller). */
__global__ void i32_gather(const int32_t *__restrict__ col, const int64_t *__restrict__ rows, int64_t m,
                           int32_t *__restrict__ key) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += (int64_t)gridDim.x * blockDim.x)
        key[k] = col[rows[k]];
}

/* Across ranks (env->nranks > 1; lineitem split, supplier whole): this
 * rank's rev[0, ns), seen[0, ns) and *bad come to the host, are summed
 * over the ranks in one all-reduce of int64 (rev as the device adds it,
 * mod 2^64; seen and bad as counts), and the merged values go back into
 * the same device buffers (seen and bad as 0/1), so the selection kernels
 * run on the whole table's sums. *merged_bad: the merged error flag. */
static int q15_ranks_merge(const dkb_cand_env *env, unsigned long long *d_rev, uint8_t *d_seen, int *d_bad,
                           int64_t ns, cudaStream_t stream, int *merged_bad) {
    int rc = 0, hb = 0;
    int64_t *w = (int64_t *)malloc(sizeof(int64_t) * (size_t)(2 * ns + 1));
    uint8_t *sb = (uint8_t *)malloc((size_t)ns + 1);
    *merged_bad = 0;
    DKB_FAIL_IF(!w || !sb, DKB_CAND_ENOMEM, "q15.full.cu: out of host memory for the ranks' merge\n");
    {
        const dkb_host_copy back[] = {
            {w, d_rev, sizeof(int64_t) * (size_t)ns}, {sb, d_seen, (size_t)ns}, {&hb, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back for the ranks' merge", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int64_t s = 0; s < ns; s++) w[ns + s] = sb[s] != 0;
    w[2 * ns] = hb != 0;
    DKB_TRY(dkb_ranks_sum_i64(env, w, 2 * ns + 1));
    for (int64_t s = 0; s < ns; s++) sb[s] = w[ns + s] != 0;
    hb = w[2 * ns] != 0;
    *merged_bad = hb;
    DKB_CUDA_TRY("merged sums to the device",
                 cudaMemcpyAsync(d_rev, w, sizeof(int64_t) * (size_t)ns, cudaMemcpyHostToDevice, stream));
    DKB_CUDA_TRY("merged marks to the device", cudaMemcpyAsync(d_seen, sb, (size_t)ns, cudaMemcpyHostToDevice, stream));
    DKB_CUDA_TRY("merged flag to the device", cudaMemcpyAsync(d_bad, &hb, sizeof(int), cudaMemcpyHostToDevice, stream));
    DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream)); /* before w, sb and hb go */
done:
    free(w);
    free(sb);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *lsupp, *price, *disc, *skey, *sname, *saddr, *sphone;
    const dkb_cand_param *pdate;
    dkb_cand_res_col *c_key, *c_name, *c_addr, *c_phone, *c_rev;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_suppkey:i32 l_extendedprice:dec2 l_discount:dec2", &ship,
                      &lsupp, &price, &disc) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_name s_address s_phone", &skey, &sname, &saddr, &sphone) ||
        DKB_BIND_PARAMS(params, "date", &pdate) ||
        DKB_BIND_RES(res, "s_suppkey:int s_name:str s_address:str s_phone:str total_revenue:dec", &c_key, &c_name,
                     &c_addr, &c_phone, &c_rev))
        return DKB_CAND_EINVAL;
    if (c_rev->scale < 4) return DKB_CAND_EINVAL;
    const int64_t hi = dkb_add_months(pdate->i, 3) - 1;
    if (pdate->i < INT32_MIN || hi > INT32_MAX) return DKB_CAND_EINVAL;

    cudaStream_t stream = dkb_cand_stream(env);
    /* n: the whole table's rows (kept in db when lineitem streams) */
    const int64_t n = ship->n, ns = skey->n, ntiles = (ns + SEL_TILE - 1) / SEL_TILE;
    const dkb_cand_vec *text[NTEXT] = {sname, saddr, sphone};
    dkb_cand_res_col *out[NTEXT] = {c_name, c_addr, c_phone};
    int rc = 0, sms = 0, fast = 1;
    int64_t grid = 0, m = 0;
    unsigned long long *d_rev = NULL;
    uint8_t *d_seen = NULL;
    unsigned *d_tile_cnt = NULL;
    q15_out *d_out = NULL, *h_out = NULL;
    int64_t *rows = NULL, *d_rows = NULL;
    int32_t *keys = NULL, *d_keys = NULL;
    int64_t *t_off[NTEXT] = {NULL, NULL, NULL};
    char *t_bytes[NTEXT] = {NULL, NULL, NULL};
    void *d_block = NULL, *d_block2 = NULL; /* the call's buffers; the general path's keys */
    __int128 best = 0;
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    res->nrows = 0;
    c_name->str_off[0] = c_addr->str_off[0] = c_phone->str_off[0] = 0;
    if ((n == 0 && env->nranks <= 1) || ns == 0) return 0; /* across ranks an empty share still merges (below) */
    for (int t = 0; t < NTEXT; t++) /* the one-trip gather reads text columns of ns rows; else the general path */
        if (text[t]->type != DKB_CAND_STR || text[t]->n != ns) fast = 0;

    h_out = (q15_out *)malloc(sizeof(q15_out));
    DKB_FAIL_IF(!h_out, DKB_CAND_ENOMEM, "q15.full.cu: out of host memory for the result block\n");
    DKB_CUDA_TRY("resident grid", dkb_resident_grid(q15_scan, TPB, 0, &sms, &grid)); /* one resident wave */
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_rev, sizeof(unsigned long long) * (size_t)ns, 0},
            {(void **)&d_seen, (size_t)ns, 0},
            {(void **)&d_out, sizeof(q15_out), 0},
            {(void **)&d_tile_cnt, sizeof(unsigned) * (size_t)ntiles, DKB_NO_FILL},
            {(void **)&d_rows, sizeof(int64_t) * (size_t)ns, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    /* 1. the revenue per supplier: the whole columns in one pass, or under a
     * budget load by load (each pass adds into rev and seen) */
    for (dkb_stream_begin_ex(&st, db, env, 4, Q15_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
        const dkb_cand_vec *c = st.cols;
        const int64_t m = c[0].n;
        if (m <= 0) continue;
        q15_scan<<<(unsigned)dkb_grid_cap(grid, m, TPB), TPB, 0, stream>>>(
            (const int32_t *)c[0].data, (const int32_t *)c[1].data, (const int64_t *)c[2].data,
            (const int64_t *)c[3].data, m, (uintptr_t)c[0].data % 16 == 0 ? m / 4 / (32 * VEC) : 0,
            (int32_t)pdate->i, (uint32_t)(hi - pdate->i), ns, d_rev, d_seen, &d_out->bad);
        DKB_CUDA_TRY("q15_scan launch", cudaGetLastError());
    }
    DKB_TRY(dkb_stream_end(&st));
    /* across ranks: every rank's revenue, seen marks and error flag per
     * supplier summed (one all-reduce of int64) into d_rev, d_seen and
     * d_out->bad; rank 0 takes the maximum over the merged sums and writes */
    if (env->nranks > 1) {
        int merged_bad = 0;
        DKB_TRY(q15_ranks_merge(env, d_rev, d_seen, &d_out->bad, ns, stream, &merged_bad));
        if (!dkb_ranks_writes(env, res)) {
            DKB_FAIL_IF(merged_bad, DKB_CAND_EINTERNAL, "q15.full.cu: an l_suppkey outside 1..%lld\n", (long long)ns);
            goto done;
        }
    }
    /* 2. the exact maximum over the suppliers seen, then its suppliers in key order (normally one) */
    q15_max<<<(unsigned)(ntiles < (int64_t)sms * 4 ? ntiles : (int64_t)sms * 4), SEL_TPB, 0, stream>>>(d_rev, d_seen,
                                                                                                       ns, d_out);
    DKB_CUDA_TRY("q15_max launch", cudaGetLastError());
    q15_count<<<(unsigned)ntiles, SEL_TPB, 0, stream>>>(d_rev, d_seen, ns, d_out, d_tile_cnt);
    DKB_CUDA_TRY("q15_count launch", cudaGetLastError());
    q15_list<<<(unsigned)ntiles, SEL_TPB, 0, stream>>>(d_rev, d_seen, ns, d_out, d_tile_cnt, d_rows);
    DKB_CUDA_TRY("q15_list launch", cudaGetLastError());
    if (fast) {
        winners_gather<<<OUT_ROWS, 32, 0, stream>>>(d_rows, (const int32_t *)skey->data, (const int64_t *)sname->data,
                                                    sname->bytes, (const int64_t *)saddr->data, saddr->bytes,
                                                    (const int64_t *)sphone->data, sphone->bytes, d_out);
        DKB_CUDA_TRY("winners_gather launch", cudaGetLastError());
    }
    /* 3. the result block in one round trip */
    {
        const dkb_host_copy back[] = {{h_out, d_out, sizeof(q15_out)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    DKB_FAIL_IF(h_out->bad, DKB_CAND_EINTERNAL, "q15.full.cu: an l_suppkey outside 1..%lld\n", (long long)ns);
    m = (int64_t)h_out->count;
    best = (__int128)(int64_t)(h_out->best ^ SIGN_BIT);
    if (m == 0) goto done;
    DKB_FAIL_IF(m > res->cap, DKB_CAND_ECAP, "q15.full.cu: %lld result rows over the cap %lld\n", (long long)m,
                (long long)res->cap);
    if (fast && m <= OUT_ROWS) { /* normally: everything came back in the result block */
        for (int64_t r = 0; r < m && fast; r++)
            for (int t = 0; t < NTEXT; t++)
                if (h_out->len[t][r] < 0 || h_out->len[t][r] > SLOT) fast = 0;
    } else
        fast = 0;
    if (fast) {
        DKB_FAIL_IF(h_out->bad_key, DKB_CAND_EINTERNAL,
                    "q15.full.cu: an s_suppkey is not its row + 1 (keys must be dense 1..N)\n");
        for (int64_t r = 0; r < m; r++) {
            for (int t = 0; t < NTEXT; t++)
                DKB_FAIL_IF(dkb_put_str(out[t], r, h_out->text[t][r], h_out->len[t][r]) != DKB_CAND_OK, DKB_CAND_ECAP,
                            "q15.full.cu: result text over its byte cap\n");
            c_key->i64[r] = h_out->key[r];
            c_key->is_null[r] = 0;
            dkb_put_dec(c_rev, r, best, 4);
        }
        res->nrows = m;
        goto done;
    }
    /* general path (many ties, long text or dictionary columns): the listed rows, then each column's text */
    rows = (int64_t *)malloc(sizeof(int64_t) * (size_t)m);
    keys = (int32_t *)malloc(sizeof(int32_t) * (size_t)m);
    DKB_FAIL_IF(!rows || !keys, DKB_CAND_ENOMEM, "q15.full.cu: out of host memory for %lld winners\n", (long long)m);
    {
        const dkb_dev_part parts[] = {{(void **)&d_keys, sizeof(int32_t) * (size_t)m, DKB_NO_FILL}};
        DKB_CUDA_TRY("device keys", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block2, stream));
    }
    i32_gather<<<(unsigned)((m + 255) / 256), 256, 0, stream>>>((const int32_t *)skey->data, d_rows, m, d_keys);
    DKB_CUDA_TRY("i32_gather launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{rows, d_rows, sizeof(int64_t) * (size_t)m},
                                      {keys, d_keys, sizeof(int32_t) * (size_t)m}};
        DKB_CUDA_TRY("copy back winners", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int t = 0; t < NTEXT; t++) DKB_TRY(dkb_fetch_text(text[t], d_rows, m, stream, &t_off[t], &t_bytes[t]));
    for (int64_t r = 0; r < m; r++) {
        DKB_FAIL_IF(keys[r] != rows[r] + 1, DKB_CAND_EINTERNAL,
                    "q15.full.cu: s_suppkey at row %lld is not %lld (keys must be dense 1..N)\n", (long long)rows[r],
                    (long long)rows[r] + 1);
        for (int t = 0; t < NTEXT; t++)
            DKB_FAIL_IF(dkb_put_str(out[t], r, t_bytes[t] + t_off[t][r], t_off[t][r + 1] - t_off[t][r]) != DKB_CAND_OK,
                        DKB_CAND_ECAP, "q15.full.cu: result text over its byte cap\n");
        c_key->i64[r] = keys[r];
        c_key->is_null[r] = 0;
        dkb_put_dec(c_rev, r, best, 4);
    }
    res->nrows = m;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    if (d_block2) cudaFreeAsync(d_block2, stream);
    dkb_dev_release(d_block, stream);
    for (int t = 0; t < NTEXT; t++) free(t_off[t]), free(t_bytes[t]);
    free(h_out);
    free(rows);
    free(keys);
    return rc;
}
