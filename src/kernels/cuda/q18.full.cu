/* q18.full.cu: expert CUDA full-mode candidate for TPC-H Q18 (Large Volume
 * Customer).
 *
 *   select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
 *   from customer, orders, lineitem
 *   where o_orderkey in (select l_orderkey from lineitem group by l_orderkey
 *                        having sum(l_quantity) > :quantity)
 *     and c_custkey = o_custkey and o_orderkey = l_orderkey
 *   group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
 *   order by o_totalprice desc, o_orderdate limit 100;
 *
 * Plan (all on env->stream):
 *  1. chunk_bounds: orders cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order (both ascending), so a chunk's
 *     line items are one range, found by a warp per chunk (a 65-ary
 *     search on l_orderkey: 4 dependent rounds at SF10).
 *  2. q18_join (partition-local, persistent blocks over chunks): the chunk's
 *     line items are read in tiles (l_orderkey, l_quantity only), each row's
 *     order found by counting run starts (ballot + popc + a per-warp
 *     prefix) and checked against o_orderkey at the run start; quantities
 *     summed per order in shared memory (int64 hundredths; the subquery's
 *     group-by, reused by the outer sum: same lines). Orders over the limit
 *     (a handful) read their price, date and customer (late
 *     materialization) and are offered to their warp's top-100 list (a
 *     threshold test and a ballot; lane 0 inserts). Each block merges its
 *     warps' lists and appends them to one global list (one atomic per
 *     block).
 *  3. The list comes back (normally tens of rows), is sorted on the host by
 *     (o_totalprice desc, o_orderdate, o_orderkey); name_gather copies the
 *     first 100 customers' c_name (row custkey - 1: dense keys 1..N,
 *     checked against c_custkey) into fixed slots.
 *
 * Bytes read (floor, SF10): l_orderkey + l_quantity 12 B x 60M = 0.72 GB,
 * o_orderkey 4 B x 15M = 0.06 GB; the rest only for the big orders. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

enum { TOPK = 100, TPB = 256, NWARP = TPB / 32, OCHUNK = 2048, NAME_SLOT = 128 };
#define FULL_MASK 0xffffffffu

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q18.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = 10;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

typedef struct {
    int64_t price; /* o_totalprice, hundredths */
    int64_t qty;   /* sum(l_quantity), hundredths */
    int32_t key, date, cust, pad;
} cand;

/* a before b in the result order */
__host__ __device__ static inline bool before(const cand &a, const cand &b) {
    if (a.price != b.price) return a.price > b.price;
    if (a.date != b.date) return a.date < b.date;
    return a.key < b.key;
}

/* Insert x into the sorted list top[0..*n) (at most TOPK). */
__host__ __device__ static inline void top_insert(cand *top, int *n, const cand &x) {
    if (*n == TOPK && !before(x, top[TOPK - 1])) return;
    int i = *n < TOPK ? (*n)++ : TOPK - 1;
    while (i > 0 && before(x, top[i - 1])) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = x;
}

/* Every lane of the warp calls this; lanes with has offer c to the warp's
 * shared list (list, *cnt). Only candidates that beat the list's last
 * entry are moved (by shuffles) to lane 0, which inserts them. */
__device__ static void warp_offer(cand *list, int *cnt, bool has, const cand &c) {
    const int lane = threadIdx.x & 31;
    __syncwarp();
    const int n = *cnt;
    const bool want = has && (n < TOPK || before(c, list[TOPK - 1]));
    unsigned m = __ballot_sync(FULL_MASK, want);
    while (m) {
        const int src = __ffs(m) - 1;
        m &= m - 1;
        cand x;
        x.price = __shfl_sync(FULL_MASK, c.price, src);
        x.qty = __shfl_sync(FULL_MASK, c.qty, src);
        x.key = __shfl_sync(FULL_MASK, c.key, src);
        x.date = __shfl_sync(FULL_MASK, c.date, src);
        x.cust = __shfl_sync(FULL_MASK, c.cust, src);
        x.pad = 0;
        if (lane == 0) top_insert(list, cnt, x);
    }
    __syncwarp();
}

/* bound[c] = first lineitem row whose l_orderkey >= o_orderkey[c * OCHUNK],
 * i.e. the first row of orders chunk c (l_orderkey ascending: lineitem is
 * grouped by orderkey in orders' order); bound[nchunks] = nl. The same
 * result as a lower-bound binary search. One warp per chunk: each round the
 * 32 lanes probe 64 evenly spaced rows of the range and a ballot keeps the
 * rows between the last probe below the key and the first probe at or above
 * it (~65x fewer); a range of <= BOUNDS_SCAN rows is then counted in one
 * coalesced pass. 60M rows take 4 dependent rounds instead of 26 dependent
 * loads, and the first two rounds hit L2 (every chunk probes the same rows). */
enum { BOUNDS_WARPS = 8, BOUNDS_PROBES = 64, BOUNDS_SCAN = 256 };

__global__ void __launch_bounds__(BOUNDS_WARPS * 32)
    chunk_bounds(const int32_t *__restrict__ okey, const int32_t *__restrict__ lkey, int64_t nl, int64_t nchunks,
                 int64_t *__restrict__ bound) {
    const int lane = threadIdx.x & 31;
    const int64_t c = (int64_t)blockIdx.x * BOUNDS_WARPS + (threadIdx.x >> 5);
    if (c > nchunks) return; /* whole warps */
    if (c == nchunks) {
        if (lane == 0) bound[c] = nl;
        return;
    }
    const int32_t key = okey[c * OCHUNK];
    /* the answer is in lo .. lo + n: rows below lo hold keys < key, rows from lo + n keys >= key */
    int64_t lo = 0, n = nl;
    while (n > BOUNDS_SCAN) { /* n is the same in every lane */
        /* probe k = 0..63 at row lo + (k + 1) * n / 65 (< lo + n); this lane probes k = lane and lane + 32 */
        const int64_t p0 = lo + (int64_t)(lane + 1) * n / (BOUNDS_PROBES + 1);
        const int64_t p1 = lo + (int64_t)(lane + 33) * n / (BOUNDS_PROBES + 1);
        const int32_t k0 = lkey[p0], k1 = lkey[p1];
        const unsigned ge0 = __ballot_sync(0xffffffffu, k0 >= key), ge1 = __ballot_sync(0xffffffffu, k1 >= key);
        /* f = the first probe at or above the key (64: none) */
        const int f = ge0 ? __ffs(ge0) - 1 : ge1 ? 31 + __ffs(ge1) : BOUNDS_PROBES;
        const int64_t new_lo = f == 0 ? lo : lo + (int64_t)f * n / (BOUNDS_PROBES + 1) + 1;
        const int64_t new_hi = f == BOUNDS_PROBES ? lo + n : lo + (int64_t)(f + 1) * n / (BOUNDS_PROBES + 1);
        lo = new_lo;
        n = new_hi - new_lo;
    }
    int below = 0; /* rows lo .. lo + n - 1 with keys below the key */
#pragma unroll
    for (int t = 0; t < BOUNDS_SCAN / 32; t++) {
        const int i = t * 32 + lane;
        if (i < n && lkey[lo + i] < key) below++;
    }
    below = __reduce_add_sync(0xffffffffu, below);
    if (lane == 0) bound[c] = lo + below;
}

/* chunk_bounds for the nchunks + 1 bounds, BOUNDS_WARPS chunks per block. */
static cudaError_t launch_chunk_bounds(const int32_t *okey, const int32_t *lkey, int64_t nl, int64_t nchunks,
                                       int64_t *bound, cudaStream_t stream) {
    chunk_bounds<<<(unsigned)((nchunks + BOUNDS_WARPS) / BOUNDS_WARPS), BOUNDS_WARPS * 32, 0, stream>>>(okey, lkey, nl,
                                                                                                       nchunks, bound);
    return cudaGetLastError();
}

__global__ void __launch_bounds__(TPB) q18_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ ocust,
                                                const int32_t *__restrict__ odate, const int64_t *__restrict__ oprice,
                                                int64_t no, const int32_t *__restrict__ lkey,
                                                const int64_t *__restrict__ lqty, const int64_t *__restrict__ bound,
                                                int64_t nchunks, int64_t limit, cand *__restrict__ list,
                                                int *__restrict__ nlist, int *__restrict__ bad) {
    __shared__ unsigned long long sum_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ cand wlist[NWARP][TOPK];
    __shared__ int wcnt[NWARP];
    __shared__ int at_s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (lane == 0) wcnt[warp] = 0;
    int oops = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const int64_t o0 = c * OCHUNK;
        const int nord = (int)(no - o0 < OCHUNK ? no - o0 : OCHUNK);
        const int64_t j0 = bound[c], j1 = bound[c + 1];
        for (int o = tid; o < OCHUNK; o += TPB) sum_s[o] = 0;
        __syncthreads();
        /* the chunk's line items, tile by tile; idx = the row's order in the chunk */
        int carry = 0, parity = 0;
        for (int64_t base = j0; base < j1; base += TPB, parity ^= 1) {
            const int64_t j = base + tid;
            const bool active = j < j1;
            const int32_t key = active ? lkey[j] : 0;
            const int64_t q = active ? lqty[j] : 0;
            int32_t prev = __shfl_up_sync(FULL_MASK, key, 1);
            if (lane == 0 && active && j > j0) prev = lkey[j - 1];
            const bool start = active && (j == j0 || key != prev);
            const unsigned ballot = __ballot_sync(FULL_MASK, start);
            const int incl = __popc(ballot & (FULL_MASK >> (31 - lane)));
            if (lane == 0) wtot[parity][warp] = __popc(ballot);
            __syncthreads();
            int before_me = carry, total = 0;
            for (int w = 0; w < NWARP; w++) {
                const int t = wtot[parity][w];
                if (w < warp) before_me += t;
                total += t;
            }
            carry += total;
            if (!active) continue;
            const int idx = before_me + incl - 1;
            if (idx < 0 || idx >= nord || (start && okey[o0 + idx] != key)) {
                oops = 1;
                continue;
            }
            atomicAdd(&sum_s[idx], (unsigned long long)q);
        }
        __syncthreads();
        /* orders over the limit, offered to the warps' top lists */
        for (int r = 0; r < OCHUNK; r += TPB) {
            const int o = r + tid;
            const bool has = o < nord && (int64_t)sum_s[o] > limit;
            cand x = {0, 0, 0, 0, 0, 0};
            if (has) {
                x.qty = (int64_t)sum_s[o];
                x.price = oprice[o0 + o];
                x.key = okey[o0 + o];
                x.date = odate[o0 + o];
                x.cust = ocust[o0 + o];
            }
            warp_offer(wlist[warp], &wcnt[warp], has, x);
        }
        __syncthreads();
    }
    if (oops) *bad = 1;
    __syncthreads();
    if (tid == 0) {
        int total = 0;
        for (int w = 0; w < NWARP; w++) total += wcnt[w];
        at_s = total ? atomicAdd(nlist, total) : 0;
    }
    __syncthreads();
    /* every warp's list goes out (the host keeps the best 100 of all) */
    int at = at_s;
    for (int w = 0; w < warp; w++) at += wcnt[w];
    for (int i = lane; i < wcnt[warp]; i += 32) list[at + i] = wlist[warp][i];
}

/* Row r < n: the customer row cust[r] - 1's name into slot r (len[r]
 * bytes; text column: off/bytes; dictionary column: codes, len = code).
 * A key that is not at its row, or a name longer than a slot, sets *bad. */
__global__ void name_gather(const int32_t *__restrict__ cust, int n, const int32_t *__restrict__ ckey, int64_t nc,
                            const int64_t *__restrict__ off, const char *__restrict__ bytes,
                            const uint8_t *__restrict__ codes, char *__restrict__ slots, int *__restrict__ len,
                            int *__restrict__ bad) {
    const int r = blockIdx.x;
    if (r >= n) return;
    const int64_t c = (int64_t)cust[r] - 1;
    if (c < 0 || c >= nc || ckey[c] != c + 1) {
        if (threadIdx.x == 0) *bad = 1;
        return;
    }
    if (codes) {
        if (threadIdx.x == 0) len[r] = codes[c];
        return;
    }
    const int64_t a = off[c], l = off[c + 1] - a;
    if (l < 0 || l > NAME_SLOT) {
        if (threadIdx.x == 0) *bad = 1;
        return;
    }
    for (int64_t i = threadIdx.x; i < l; i += blockDim.x) slots[(int64_t)r * NAME_SLOT + i] = bytes[a + i];
    if (threadIdx.x == 0) len[r] = (int)l;
}

static dkb_cand_res_col *res_col(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

static int put_str(dkb_cand_res_col *col, int64_t r, const char *s, int64_t len) {
    const int64_t at = col->str_off[r];
    if (at + len > col->bytes_cap) return 0;
    memcpy(col->str_bytes + at, s, (size_t)len);
    col->str_off[r + 1] = at + len;
    col->is_null[r] = 0;
    return 1;
}

static void put_dec(dkb_cand_res_col *col, int64_t r, __int128 v, int from) {
    for (; from < col->scale; from++) v *= 10;
    col->dec[r] = v;
    col->is_null[r] = 0;
}

static int by_price_desc(const void *a, const void *b) {
    const cand *x = (const cand *)a, *y = (const cand *)b;
    return before(*x, *y) ? -1 : before(*y, *x) ? 1 : 0;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lqty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *oprice = dkb_cand_column(db, "orders", "o_totalprice");
    const dkb_cand_vec *ckey = dkb_cand_column(db, "customer", "c_custkey");
    const dkb_cand_vec *cname = dkb_cand_column(db, "customer", "c_name");
    const dkb_cand_param *pq = dkb_cand_param_find(params, "quantity");
    if (!lkey || !lqty || !okey || !ocust || !odate || !oprice || !ckey || !cname || !pq) return 1;
    if (lkey->type != DKB_CAND_I32 || okey->type != DKB_CAND_I32 || ocust->type != DKB_CAND_I32 ||
        odate->type != DKB_CAND_I32 || ckey->type != DKB_CAND_I32 || lqty->type != DKB_CAND_I64 ||
        oprice->type != DKB_CAND_I64 || lqty->scale != 2 || oprice->scale != 2 ||
        !(cname->type == DKB_CAND_STR || (cname->type == DKB_CAND_U8 && cname->dict)))
        return 2;
    dkb_cand_res_col *c_name = res_col(res, "c_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_cust = res_col(res, "c_custkey", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_okey = res_col(res, "o_orderkey", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_date = res_col(res, "o_orderdate", DKB_CAND_RES_DATE);
    dkb_cand_res_col *c_price = res_col(res, "o_totalprice", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_qty = res_col(res, "sum(l_quantity)", DKB_CAND_RES_DECIMAL);
    if (!c_name || !c_cust || !c_okey || !c_date || !c_price || !c_qty || c_price->scale < 2 || c_qty->scale < 2)
        return 3;
    if (pq->i > INT64_MAX / 100 || pq->i < INT64_MIN / 100) return 3;
    const int64_t limit = pq->i * 100; /* hundredths */
    const int64_t no = okey->n, nl = lkey->n, nc = ckey->n;
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    const bool text = cname->type == DKB_CAND_STR;
    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, dev = 0, sms = 0, per_sm = 0, h_flags[2] = {0, 0}, nout = 0;
    int64_t grid = 0;
    int64_t *d_bound = NULL;
    cand *d_list = NULL, *h_list = NULL;
    int *d_flags = NULL; /* [0]: bad, [1]: list length */
    int32_t *d_cust = NULL, h_cust[TOPK];
    char *d_slots = NULL, *h_slots = NULL;
    int *d_len = NULL, h_len[TOPK];
    c_name->str_off[0] = 0;
    if (no > 0 && nl > 0) {
        CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
        CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        CUDA_TRY("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                 cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, q18_join, TPB, 0));
        grid = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
        if (grid > nchunks) grid = nchunks;
        CUDA_TRY("cudaMallocAsync bounds", cudaMallocAsync((void **)&d_bound, sizeof(int64_t) * (nchunks + 1), stream));
        CUDA_TRY("cudaMallocAsync list", cudaMallocAsync((void **)&d_list, sizeof(cand) * TOPK * NWARP * grid, stream));
        CUDA_TRY("cudaMallocAsync flags", cudaMallocAsync((void **)&d_flags, sizeof(int) * 2, stream));
        CUDA_TRY("cudaMemsetAsync flags", cudaMemsetAsync(d_flags, 0, sizeof(int) * 2, stream));
        CUDA_TRY("chunk_bounds launch", launch_chunk_bounds((const int32_t *)okey->data, (const int32_t *)lkey->data,
                                                            nl, nchunks, d_bound, stream));
        q18_join<<<(unsigned)grid, TPB, 0, stream>>>(
            (const int32_t *)okey->data, (const int32_t *)ocust->data, (const int32_t *)odate->data,
            (const int64_t *)oprice->data, no, (const int32_t *)lkey->data, (const int64_t *)lqty->data, d_bound,
            nchunks, limit, d_list, d_flags + 1, d_flags);
        CUDA_TRY("q18_join launch", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync flags", cudaMemcpyAsync(h_flags, d_flags, sizeof(int) * 2, cudaMemcpyDeviceToHost,
                                                          stream));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        if (h_flags[0]) {
            fprintf(stderr, "q18.full.cu: lineitem not grouped by orderkey in orders' order\n");
            rc = 5;
            goto done;
        }
        const int m = h_flags[1];
        if (m > 0) {
            h_list = (cand *)malloc(sizeof(cand) * (size_t)m);
            if (!h_list) {
                fprintf(stderr, "q18.full.cu: out of host memory for %d big orders\n", m);
                rc = 4;
                goto done;
            }
            CUDA_TRY("cudaMemcpyAsync list", cudaMemcpyAsync(h_list, d_list, sizeof(cand) * (size_t)m,
                                                             cudaMemcpyDeviceToHost, stream));
            CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
            qsort(h_list, (size_t)m, sizeof(cand), by_price_desc);
            nout = m < TOPK ? m : TOPK;
            if (nout > res->cap) {
                rc = 4;
                goto done;
            }
            for (int r = 0; r < nout; r++) h_cust[r] = h_list[r].cust;
            h_slots = (char *)malloc((size_t)NAME_SLOT * nout);
            if (!h_slots) {
                rc = 4;
                goto done;
            }
            CUDA_TRY("cudaMallocAsync cust", cudaMallocAsync((void **)&d_cust, sizeof(int32_t) * nout, stream));
            CUDA_TRY("cudaMallocAsync slots", cudaMallocAsync((void **)&d_slots, (size_t)NAME_SLOT * nout, stream));
            CUDA_TRY("cudaMallocAsync len", cudaMallocAsync((void **)&d_len, sizeof(int) * nout, stream));
            CUDA_TRY("cudaMemcpyAsync cust", cudaMemcpyAsync(d_cust, h_cust, sizeof(int32_t) * nout,
                                                             cudaMemcpyHostToDevice, stream));
            name_gather<<<nout, 32, 0, stream>>>(d_cust, nout, (const int32_t *)ckey->data, nc,
                                                  text ? (const int64_t *)cname->data : NULL,
                                                  text ? cname->bytes : NULL,
                                                  text ? NULL : (const uint8_t *)cname->data, d_slots, d_len, d_flags);
            CUDA_TRY("name_gather launch", cudaGetLastError());
            CUDA_TRY("cudaMemcpyAsync slots", cudaMemcpyAsync(h_slots, d_slots, (size_t)NAME_SLOT * nout,
                                                              cudaMemcpyDeviceToHost, stream));
            CUDA_TRY("cudaMemcpyAsync len", cudaMemcpyAsync(h_len, d_len, sizeof(int) * nout, cudaMemcpyDeviceToHost,
                                                            stream));
            CUDA_TRY("cudaMemcpyAsync flags", cudaMemcpyAsync(h_flags, d_flags, sizeof(int), cudaMemcpyDeviceToHost,
                                                              stream));
            CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
            if (h_flags[0]) {
                fprintf(stderr, "q18.full.cu: a customer key not at row key - 1, or a name over %d bytes\n",
                        NAME_SLOT);
                rc = 6;
                goto done;
            }
            for (int r = 0; r < nout; r++) {
                const cand *b = &h_list[r];
                int ok;
                if (text) ok = put_str(c_name, r, h_slots + (size_t)r * NAME_SLOT, h_len[r]);
                else
                    ok = h_len[r] < cname->dict->size &&
                         put_str(c_name, r, cname->dict->str[h_len[r]], (int64_t)cname->dict->len[h_len[r]]);
                if (!ok) {
                    rc = 6;
                    goto done;
                }
                c_cust->i64[r] = b->cust;
                c_okey->i64[r] = b->key;
                c_date->date[r] = b->date;
                c_cust->is_null[r] = c_okey->is_null[r] = c_date->is_null[r] = 0;
                put_dec(c_price, r, b->price, 2);
                put_dec(c_qty, r, b->qty, 2);
            }
        }
    }
    res->nrows = nout;
done:
    if (d_bound) cudaFreeAsync(d_bound, stream);
    if (d_list) cudaFreeAsync(d_list, stream);
    if (d_flags) cudaFreeAsync(d_flags, stream);
    if (d_cust) cudaFreeAsync(d_cust, stream);
    if (d_slots) cudaFreeAsync(d_slots, stream);
    if (d_len) cudaFreeAsync(d_len, stream);
    cudaStreamSynchronize(stream);
    free(h_list);
    free(h_slots);
    return rc;
}
