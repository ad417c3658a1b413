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
 * lineitem is grouped by orderkey, ascending, so an order's line items are
 * one run of equal l_orderkey and both sums (the subquery's and the outer
 * group-by's) are that run's sum. Plan (all on env->stream):
 *  1. q18_runs streams l_orderkey and l_quantity once: each thread takes 4
 *     consecutive rows (one 16-byte load of keys, two of quantities; scalar
 *     loads for unaligned columns and the tail). For each row that starts a
 *     run (row 0, or a key other than the previous row's) it sums the run
 *     forward (registers, then single loads past its 4 rows until the key
 *     changes: any run length). A start whose key is not above the previous
 *     key means lineitem is not grouped ascending (error). A run over the
 *     limit (rare) finds its order by a binary search on o_orderkey (absent:
 *     error), reads price, date and customer (late materialization) and is
 *     appended to a list (one atomicAdd per qualifying run).
 *  2. q18_finish (one block): sorts the list (<= SORT_N rows) in shared
 *     memory by (o_totalprice desc, o_orderdate, o_orderkey), keeps the first
 *     100, and copies their customers' c_name (row custkey - 1: dense keys
 *     1..N, checked against c_custkey) into fixed slots of a result block.
 *  3. One copy of the result block (flags, count, rows, names) and one sync
 *     (none after the frees: the harness synchronises after the call).
 *     If more than SORT_N runs qualified (SF 100, or a low :quantity), the
 *     host cuts the list to 100 per SORT_N rows with q18_reduce until <=
 *     SORT_N remain, then runs step 2 on those; the list holds LIST_CAP
 *     runs, and only past that (an extreme :quantity) step 1 is rerun into
 *     a list of the count's size.
 *
 * Under a memory budget (env->budget streaming lineitem and orders,
 * co-partitioned by orderkey) step 1 runs once per load of partitions
 * (dkb_stream with DKB_STREAM_OVERLAP: the next load's copy overlaps this
 * one's kernel): an order's line items, and so its whole run, are in one
 * load with the order, so the runs (row 0 of a load starts one) and the
 * binary search are the load's own; every load appends to the same list
 * and count. Steps 2 and 3 run once after the last load. The rerun past
 * LIST_CAP (rare) walks the loads a second time. No synchronize per load.
 *
 * Bytes read (floor, SF10): l_orderkey + l_quantity 12 B x 60M = 0.72 GB;
 * orders and customer only for the qualifying orders.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): lineitem and orders
 * are co-partitioned by orderkey, so an order's run, its sum and the HAVING
 * test are on one rank (customer is whole on every rank): each rank finds
 * its first 100 with their names as above, then every rank's rows (with
 * their name slots: ranked) are gathered in rank order (dkb_ranks_gather,
 * as the CPU expert), sorted again by the same total order on the host and
 * cut to 100 into the result block; rank 0 writes, the others return no
 * rows. A rank whose share is empty still takes part (its walk is empty). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh"   // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h"   // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"    // defines: dkb_ranks_gather, dkb_ranks_writes (the ranks' partials merged)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its first 100 merged through env->comm */

enum { TOPK = 100, TPB = 256, ROWS = 4, SORT_N = 1024, NAME_SLOT = 128, LIST_CAP = 1 << 16 };

typedef struct {
    int64_t price;    /* o_totalprice, hundredths */
    int64_t qty;      /* sum(l_quantity), hundredths */
    int32_t key, date, cust;
    int32_t sentinel; /* 1: padding of a sort, after every real row */
} cand;

/* The block copied back at the end: written by q18_runs (count, flags) and
 * q18_finish (nout, rows, names). */
typedef struct {
    unsigned long long count; /* qualifying runs found (may exceed the list's capacity) */
    int bad_group;            /* lineitem not grouped ascending, or a qualifying key not in orders */
    int bad_cust;             /* a customer key not at row key - 1, or a name over NAME_SLOT bytes */
    int nout;                 /* result rows (<= TOPK) */
    int pad;
    cand top[TOPK];
    int len[TOPK];            /* name bytes (text column) or dictionary code */
    char name[TOPK][NAME_SLOT];
} q18_out;

/* a before b in the result order */
__host__ __device__ static inline bool before(const cand &a, const cand &b) {
    if (a.price != b.price) return a.price > b.price;
    if (a.date != b.date) return a.date < b.date;
    return a.key < b.key;
}

/* before, with padding after every real row */
__host__ __device__ static inline bool sort_before(const cand &a, const cand &b) {
    if (a.sentinel != b.sentinel) return a.sentinel < b.sentinel;
    return before(a, b);
}

__host__ __device__ static inline cand pad_cand(void) {
    cand c = {0, 0, 0, 0, 0, 1};
    return c;
}

__host__ __device__ static inline unsigned long long bump(unsigned long long *p) {
#ifdef __CUDA_ARCH__
    return atomicAdd(p, 1ull);
#else
    return (*p)++;
#endif
}

/* The columns q18_runs reads. */
typedef struct {
    const int32_t *lkey;
    const int64_t *lqty;
    int64_t nl;
    const int32_t *okey, *ocust, *odate;
    const int64_t *oprice;
    int64_t no;
} q18_cols;

/* A run of orderkey key with quantity sum qty (hundredths) over the limit:
 * its order (binary search on o_orderkey, ascending) goes to the list
 * (slot = count, kept if below cap); an absent key sets bad_group. */
__host__ __device__ static void emit_run(const q18_cols &c, int32_t key, int64_t qty, cand *list,
                                         unsigned long long cap, q18_out *out) {
    int64_t lo = 0, hi = c.no;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (c.okey[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    if (lo == c.no || c.okey[lo] != key) {
        out->bad_group = 1;
        return;
    }
    cand x;
    x.price = c.oprice[lo];
    x.qty = qty;
    x.key = key;
    x.date = c.odate[lo];
    x.cust = c.ocust[lo];
    x.sentinel = 0;
    const unsigned long long at = bump(&out->count);
    if (at < cap) list[at] = x;
}

/* Rows 4g .. 4g + 3 (those below nl): every run starting there is summed
 * (forward, any length) and emitted if over the limit. vec: both columns
 * 16-byte aligned (then full groups use vector loads). */
__host__ __device__ static inline void run_group(const q18_cols &c, int64_t g, bool vec, int64_t limit, cand *list,
                                                 unsigned long long cap, q18_out *out) {
    const int64_t r0 = g * ROWS;
    const int64_t left = c.nl - r0;
    const int nrows = left < ROWS ? (int)left : ROWS;
    int32_t k[ROWS];
    int64_t q[ROWS];
    if (vec && nrows == ROWS) {
        const int4 kv = *reinterpret_cast<const int4 *>(c.lkey + r0);
        const longlong2 qa = *reinterpret_cast<const longlong2 *>(c.lqty + r0);
        const longlong2 qb = *reinterpret_cast<const longlong2 *>(c.lqty + r0 + 2);
        k[0] = kv.x, k[1] = kv.y, k[2] = kv.z, k[3] = kv.w;
        q[0] = qa.x, q[1] = qa.y, q[2] = qb.x, q[3] = qb.y;
    } else {
#pragma unroll
        for (int i = 0; i < ROWS; i++) {
            k[i] = i < nrows ? c.lkey[r0 + i] : 0;
            q[i] = i < nrows ? c.lqty[r0 + i] : 0;
        }
    }
    const int32_t prev = r0 > 0 ? c.lkey[r0 - 1] : 0;
#pragma unroll
    for (int i = 0; i < ROWS; i++) {
        if (i >= nrows) break;
        const int32_t pk = i > 0 ? k[i - 1] : prev;
        const bool first = r0 == 0 && i == 0;
        if (!first && k[i] == pk) continue; /* not a run start */
        if (!first && k[i] < pk) out->bad_group = 1;
        /* the run's sum (unsigned: wraps like the int64 sum would, no UB) */
        unsigned long long s = (unsigned long long)q[i];
        bool open = true; /* the run reaches row i + j */
#pragma unroll
        for (int j = i + 1; j < ROWS; j++) {
            if (open && j < nrows && k[j] == k[i]) s += (unsigned long long)q[j];
            else open = false;
        }
        if (open) /* past this thread's rows (nrows < 4 only at the table's end); both loads of a row at once */
            for (int64_t r = r0 + nrows; r < c.nl; r++) {
                const int32_t kr = c.lkey[r];
                const int64_t qr = c.lqty[r];
                if (kr != k[i]) break;
                s += (unsigned long long)qr;
            }
        if ((int64_t)s > limit) emit_run(c, k[i], (int64_t)s, list, cap, out);
    }
}

__global__ void __launch_bounds__(TPB) q18_runs(q18_cols c, int64_t limit, cand *__restrict__ list,
                                                unsigned long long cap, q18_out *__restrict__ out) {
    const bool vec = ((uintptr_t)c.lkey % 16 == 0) && ((uintptr_t)c.lqty % 16 == 0);
    const int64_t ngroups = (c.nl + ROWS - 1) / ROWS;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < ngroups; g += stride)
        run_group(c, g, vec, limit, list, cap, out);
}

/* One compare-exchange of a bitonic sort of s[0..SORT_N) (best first) by
 * thread tid; the pairs of one (k, j) step are disjoint. */
__host__ __device__ static inline void bitonic_step(cand *s, int tid, int k, int j) {
    const int p = tid ^ j;
    if (p <= tid) return;
    const bool up = (tid & k) == 0;
    if (up ? sort_before(s[p], s[tid]) : sort_before(s[tid], s[p])) {
        const cand t = s[tid];
        s[tid] = s[p];
        s[p] = t;
    }
}

/* Sort s[0..SORT_N) best first; every thread of a SORT_N-thread block calls it. */
__device__ static void block_sort(cand *s) {
    __syncthreads();
    for (int k = 2; k <= SORT_N; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            bitonic_step(s, threadIdx.x, k, j);
            __syncthreads();
        }
}

/* Block b keeps the best min(TOPK, len) of in[b * SORT_N ..] (len rows, at
 * most SORT_N), sorted, at out[b * TOPK ..]. */
__global__ void __launch_bounds__(SORT_N) q18_reduce(const cand *__restrict__ in, int64_t n, cand *__restrict__ out) {
    __shared__ cand s[SORT_N];
    const int64_t base = (int64_t)blockIdx.x * SORT_N;
    const int64_t len = n - base < SORT_N ? n - base : SORT_N;
    s[threadIdx.x] = threadIdx.x < len ? in[base + threadIdx.x] : pad_cand();
    block_sort(s);
    if (threadIdx.x < TOPK && threadIdx.x < len) out[(int64_t)blockIdx.x * TOPK + threadIdx.x] = s[threadIdx.x];
}

/* q18_reduce's output rows for n input rows */
__host__ __device__ static inline int64_t reduced_rows(int64_t n) {
    const int64_t blocks = (n + SORT_N - 1) / SORT_N;
    const int64_t last = n - (blocks - 1) * SORT_N;
    return (blocks - 1) * TOPK + (last < TOPK ? last : TOPK);
}

/* The customer name of result row r (customer row cust - 1) into out's slot
 * r: len = bytes (text: off/bytes) or the code (codes); lanes lane, lane +
 * lanes, .. copy the bytes. A key not at its row or a long name sets bad_cust. */
__host__ __device__ static inline void name_row(int r, int lane, int lanes, const int32_t *ckey, int64_t nc,
                                                const int64_t *off, const char *bytes, const uint8_t *codes,
                                                q18_out *out) {
    const int64_t c = (int64_t)out->top[r].cust - 1;
    if (c < 0 || c >= nc || ckey[c] != c + 1) {
        out->bad_cust = 1;
        return;
    }
    if (codes) {
        if (lane == 0) out->len[r] = codes[c];
        return;
    }
    const int64_t a = off[c], l = off[c + 1] - a;
    if (l < 0 || l > NAME_SLOT) {
        out->bad_cust = 1;
        return;
    }
    for (int64_t i = lane; i < l; i += lanes) out->name[r][i] = bytes[a + i];
    if (lane == 0) out->len[r] = (int)l;
}

/* One SORT_N-thread block: the best TOPK of in[0..n) (n = *count if count,
 * else n_rows; nothing if n > SORT_N) into out->top, sorted, with names. */
__global__ void __launch_bounds__(SORT_N)
    q18_finish(const cand *__restrict__ in, const unsigned long long *count, int64_t n_rows,
               const int32_t *__restrict__ ckey, int64_t nc, const int64_t *__restrict__ off,
               const char *__restrict__ bytes, const uint8_t *__restrict__ codes, q18_out *out) {
    __shared__ cand s[SORT_N];
    const int64_t n = count ? (int64_t)*count : n_rows;
    if (n > SORT_N) return; /* the host reruns with a list of n rows */
    s[threadIdx.x] = threadIdx.x < n ? in[threadIdx.x] : pad_cand();
    block_sort(s);
    const int nout = n < TOPK ? (int)n : TOPK;
    if (threadIdx.x < nout) out->top[threadIdx.x] = s[threadIdx.x];
    if (threadIdx.x == 0) out->nout = nout;
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int r = warp; r < nout; r += SORT_N / 32) name_row(r, lane, 32, ckey, nc, off, bytes, codes, out);
}

/* Step 1 over the whole columns, or load by load: q18_runs appends each
 * pass's qualifying runs to list (cap rows; out->count counts them all,
 * over every pass). grid: one resident wave (capped per pass). Returns
 * DKB_CAND_OK or the first error (the walk's, or a launch's: a line on
 * stderr); the walk in *st is ended either way. */
static int runs_walk(dkb_stream *st, const dkb_cand_db *db, const dkb_cand_env *env, int64_t grid, int64_t limit,
                     cand *list, unsigned long long cap, q18_out *out, cudaStream_t stream) {
    static const char *const COLS[] = {"l_orderkey", "l_quantity",  "o_orderkey",
                                       "o_custkey",  "o_orderdate", "o_totalprice"};
    int rc = dkb_stream_begin_ex(st, db, env, 6, COLS, DKB_STREAM_OVERLAP);
    while (!rc && dkb_stream_next(st)) {
        const dkb_cand_vec *v = st->cols; /* v[0..1]: lineitem (v[0].n rows), v[2..5]: orders (v[2].n rows) */
        const q18_cols c = {(const int32_t *)v[0].data, (const int64_t *)v[1].data, v[0].n,
                            (const int32_t *)v[2].data, (const int32_t *)v[3].data, (const int32_t *)v[4].data,
                            (const int64_t *)v[5].data, v[2].n};
        if (c.nl <= 0) continue;
        q18_runs<<<(unsigned)dkb_grid_cap(grid, (c.nl + ROWS - 1) / ROWS, TPB), TPB, 0, stream>>>(c, limit, list, cap,
                                                                                                 out);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            fprintf(stderr, "q18.full.cu: q18_runs launch: %s\n", cudaGetErrorString(e));
            rc = DKB_CAND_ECUDA;
        }
    }
    const int end = dkb_stream_end(st);
    return rc ? rc : end;
}

/* A result row with its name slot, as the ranks exchange them. */
typedef struct {
    cand c;
    int len;
    char name[NAME_SLOT];
} ranked;

static int ranked_cmp(const void *pa, const void *pb) {
    const cand &a = ((const ranked *)pa)->c, &b = ((const ranked *)pb)->c;
    return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* Across ranks (nranks > 1): every rank's rows of out (out->nout, sorted)
 * gathered in rank order, sorted again, the first TOPK back into out on
 * every rank. */
static int ranks_merge(const dkb_cand_env *env, q18_out *out) {
    ranked *mine = (ranked *)calloc(TOPK, sizeof(ranked));
    if (!mine) return DKB_CAND_ENOMEM; /* the others' gather then fails */
    const int n = out->nout;
    for (int r = 0; r < n; r++) {
        mine[r].c = out->top[r];
        mine[r].len = out->len[r];
        memcpy(mine[r].name, out->name[r], NAME_SLOT);
    }
    void *every = NULL;
    int64_t ne = 0;
    const int rc = dkb_ranks_gather(env, mine, n, sizeof(ranked), &every, &ne);
    if (!rc) {
        ranked *all = (ranked *)every;
        qsort(all, (size_t)ne, sizeof(ranked), ranked_cmp);
        const int nout = ne < TOPK ? (int)ne : TOPK;
        for (int r = 0; r < nout; r++) {
            out->top[r] = all[r].c;
            out->len[r] = all[r].len;
            memcpy(out->name[r], all[r].name, NAME_SLOT);
        }
        out->nout = nout;
    }
    dkb_ranks_gather_free(every, mine);
    free(mine);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *lkey, *lqty, *okey, *ocust, *odate, *oprice, *ckey, *cname;
    const dkb_cand_param *pq;
    dkb_cand_res_col *c_name, *c_cust, *c_okey, *c_date, *c_price, *c_qty;
    if (DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_quantity:dec2", &lkey, &lqty) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32 o_totalprice:dec2", &okey, &ocust,
                      &odate, &oprice) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_name", &ckey, &cname) ||
        DKB_BIND_PARAMS(params, "quantity", &pq))
        return DKB_CAND_EINVAL;
    if (!(cname->type == DKB_CAND_STR || (cname->type == DKB_CAND_U8 && cname->dict)))
        return DKB_CAND_EINVAL;
    if (DKB_BIND_RES(res,
                     "c_name:str c_custkey:int o_orderkey:int o_orderdate:date o_totalprice:dec2 sum(l_quantity):dec2",
                     &c_name, &c_cust, &c_okey, &c_date, &c_price, &c_qty))
        return DKB_CAND_EINVAL;
    if (pq->i > INT64_MAX / 100 || pq->i < INT64_MIN / 100) return DKB_CAND_EINVAL;
    const int64_t limit = pq->i * 100; /* hundredths */
    const int64_t no = okey->n, nl = lkey->n, nc = ckey->n;
    const bool text = cname->type == DKB_CAND_STR;
    const int64_t *name_off = text ? (const int64_t *)cname->data : NULL;
    const char *name_bytes = text ? cname->bytes : NULL;
    const uint8_t *name_codes = text ? NULL : (const uint8_t *)cname->data;
    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, sms = 0, nout = 0;
    int64_t grid = 0, m = 0;
    q18_out *d_out = NULL, *h_out = NULL;
    cand *d_list = NULL, *d_big = NULL, *d_tmp = NULL;
    void *d_block = NULL, *d_block2 = NULL; /* the call's buffers; the long list's (rare) */
    dkb_stream st; /* the walk over lineitem and orders (whole: one pass) */
    memset(&st, 0, sizeof st);
    c_name->str_off[0] = 0;
    if ((no > 0 && nl > 0) || env->nranks > 1) { /* across ranks every rank takes part */
        h_out = (q18_out *)malloc(sizeof(q18_out));
        DKB_FAIL_IF(!h_out, DKB_CAND_ENOMEM, "q18.full.cu: out of host memory for the result block\n");
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q18_runs, TPB, 0, &sms, &grid)); /* capped per pass */
        const dkb_dev_part parts[] = {
            {(void **)&d_out, sizeof(q18_out), 0},
            {(void **)&d_list, sizeof(cand) * LIST_CAP, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        /* 1. the runs over the limit; 2. their best 100 with names, in one result block */
        DKB_TRY(runs_walk(&st, db, env, grid, limit, d_list, LIST_CAP, d_out, stream));
        q18_finish<<<1, SORT_N, 0, stream>>>(d_list, &d_out->count, 0, (const int32_t *)ckey->data, nc, name_off,
                                              name_bytes, name_codes, d_out);
        DKB_CUDA_TRY("q18_finish launch", cudaGetLastError());
        const dkb_host_copy back[] = {{h_out, d_out, sizeof(q18_out)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        m = (int64_t)h_out->count;
        if (!h_out->bad_group && m > SORT_N) {
            /* many qualifying orders: the whole list (in d_list up to LIST_CAP,
             * else found again into one of m rows), cut down on the device */
            const int rerun = m > LIST_CAP;
            const dkb_dev_part big[] = {
                {(void **)&d_tmp, sizeof(cand) * (size_t)reduced_rows(m), DKB_NO_FILL},
                {(void **)&d_big, sizeof(cand) * (size_t)m, DKB_NO_FILL},
            };
            DKB_CUDA_TRY("device buffers (long list)", dkb_dev_carve(big, rerun ? 2 : 1, &d_block2, stream));
            if (rerun) {
                DKB_CUDA_TRY("cudaMemsetAsync out", cudaMemsetAsync(d_out, 0, sizeof(q18_out), stream));
                DKB_TRY(runs_walk(&st, db, env, grid, limit, d_big, (unsigned long long)m, d_out, stream)); /* again */
            }
            cand *src = rerun ? d_big : d_list, *dst = d_tmp;
            int64_t n = m;
            while (n > SORT_N) {
                q18_reduce<<<(unsigned)((n + SORT_N - 1) / SORT_N), SORT_N, 0, stream>>>(src, n, dst);
                DKB_CUDA_TRY("q18_reduce launch", cudaGetLastError());
                n = reduced_rows(n);
                cand *t = src;
                src = dst;
                dst = t;
            }
            q18_finish<<<1, SORT_N, 0, stream>>>(src, NULL, n, (const int32_t *)ckey->data, nc, name_off, name_bytes,
                                                  name_codes, d_out);
            DKB_CUDA_TRY("q18_finish launch (big list)", cudaGetLastError());
            DKB_CUDA_TRY("copy back (long list)", dkb_copy_back(back, DKB_COUNT(back), stream));
            DKB_FAIL_IF(rerun && !h_out->bad_group && (int64_t)h_out->count != m, DKB_CAND_EINTERNAL,
                        "q18.full.cu: qualifying orders changed between passes (%lld, then %llu)\n", (long long)m,
                        h_out->count);
        }
        DKB_FAIL_IF(h_out->bad_group, DKB_CAND_EINTERNAL,
                    "q18.full.cu: lineitem not grouped by orderkey in orders' order\n");
        DKB_FAIL_IF(h_out->bad_cust, DKB_CAND_EINTERNAL,
                    "q18.full.cu: a customer key not at row key - 1, or a name over %d bytes\n", NAME_SLOT);
        if (env->nranks > 1) { /* every rank's first 100, in one total order; rank 0 writes */
            DKB_TRY(ranks_merge(env, h_out));
            if (!dkb_ranks_writes(env, res)) goto done;
        }
        nout = h_out->nout;
        if (nout > res->cap) DKB_FAIL(DKB_CAND_ECAP);
        for (int r = 0; r < nout; r++) {
            const cand *b = &h_out->top[r];
            const int l = h_out->len[r];
            int ok;
            if (text) ok = (dkb_put_str(c_name, r, h_out->name[r], l) == DKB_CAND_OK);
            else ok = (dkb_put_dict(c_name, r, cname->dict, l) == DKB_CAND_OK);
            if (!ok) DKB_FAIL(DKB_CAND_EINTERNAL);
            c_cust->i64[r] = b->cust;
            c_okey->i64[r] = b->key;
            c_date->date[r] = b->date;
            c_cust->is_null[r] = c_okey->is_null[r] = c_date->is_null[r] = 0;
            dkb_put_dec(c_price, r, b->price, 2);
            dkb_put_dec(c_qty, r, b->qty, 2);
        }
    }
    res->nrows = nout;
done:
    dkb_stream_end(&st); /* a load still held after a failure: none (runs_walk ends its walk), kept for safety */
    if (d_block) cudaFreeAsync(d_block, stream);
    if (d_block2) cudaFreeAsync(d_block2, stream);
    /* on success everything but the frees was synchronised (the harness
     * synchronises the device after the call); an error may leave a copy
     * into h_out in flight */
    if (rc) cudaStreamSynchronize(stream);
    free(h_out);
    return rc;
}
