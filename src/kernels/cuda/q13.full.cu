/* q13.full.cu: expert CUDA full-mode candidate for TPC-H Q13 (Customer
 * Distribution).
 *
 *   select c_count, count(*) as custdist
 *   from (select c_custkey, count(o_orderkey)
 *         from customer left outer join orders
 *              on c_custkey = o_custkey and o_comment not like '%:word1%:word2%'
 *         group by c_custkey) as c_orders (c_custkey, c_count)
 *   group by c_count order by custdist desc, c_count desc;
 *
 * Plan (all on env->stream):
 *  1. order_counts: each block takes tiles of TILE = 256 consecutive orders
 *     (grid-stride; 5 blocks per SM, 48 registers): a tile's offsets and
 *     customer keys are loaded a tile ahead into registers; its text, one
 *     contiguous byte range starting at any byte, is copied into shared
 *     memory with all threads (16-byte vector loads on the aligned middle,
 *     byte loads at the edges, the copy shifted by the start's address mod
 *     16 so aligned vectors stay aligned). The block then sweeps the text
 *     as a stream: thread t reads aligned 4-byte words t, t + 256, ... and
 *     the word after each (consecutive words per warp: no bank conflicts),
 *     and tests all 4 byte positions against the first min(len, 4) bytes
 *     of both words at once (funnel shifts, masked compares). Each
 *     candidate is compared in full and mapped to its comment by a binary
 *     search in the tile's comment starts (shared memory); an occurrence
 *     must lie wholly inside one comment. Per comment the block keeps the
 *     smallest start of word1 (atomicMin) and the largest start of word2
 *     (atomicMax) in shared memory; then a thread per order decides:
 *     LIKE '%w1%w2%' iff first_w1 + len(w1) <= last_w2 (exact: the
 *     leftmost word1 leaves the most room and any word2 starting at or
 *     after its end will do, so the rightmost word2 decides). An empty
 *     word1 matches at the comment's start, an empty word2 at its end.
 *     Orders that do not match add 1 to cnt[custkey - 1] (customer keys
 *     dense 1..N; ~1M distinct addresses, no hot key). The words (any
 *     length, any bytes) are staged in shared memory when they fit, else
 *     read from device memory. A tile whose text is over the shared buffer
 *     (20 KB; dbgen comments are at most 78 bytes, 256 x 78 < 20 KB) is
 *     searched in global memory, one thread per comment: correct for any
 *     data, slow only then.
 *  2. count_hist: per-block shared histograms of the customers' counts
 *     (customers without a row count 0: the outer join) over HB bins,
 *     added to a global histogram once per block and bin; a count >= HB
 *     sets a flag and the host then builds the histogram from the counts
 *     copied back (correct for any data, slow only then).
 *  3. The few histogram rows are sorted on the host by (custdist desc,
 *     c_count desc). Integer counts: exact.
 *
 * Bytes read (floor, SF10): o_custkey 4 B x 15M = 60 MB, o_comment offsets
 * 8 B x 15M = 120 MB and bytes ~49 B x 15M = 0.73 GB: about 0.91 GB,
 * ~0.22 ms at 4.2 TB/s. Each is read once, coalesced (offsets: one extra
 * per tile); plus the random atomics on the 1.5M counts (6 MB, L2).
 * History at SF10 on the H200: a thread per comment reading global memory
 * byte by byte took 2.26 ms; tiles of 512 in shared memory searched by a
 * thread per comment (divergent over lengths 19..78, bank conflicts on
 * scattered 4-byte reads) 1.37 ms; this streaming sweep: not yet measured. */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

/* TPB threads per block and TILE = TPB consecutive orders per tile (one
 * thread per order in the tile's last step); TEXT_CAP bytes of shared
 * memory for a tile's text (16-aligned, with room for the alignment shift
 * of up to 15 bytes and for the sweep's read of the 4-byte word after the
 * text's end); words up to WORD_CAP bytes in all are staged in shared
 * memory. dbgen comments are at most 78 bytes: 256 x 78 = 19968 bytes fit
 * in TEXT_CAP - TEXT_SLACK, so the global-memory fallback never runs on
 * dbgen data. */
enum { TPB = 256, HB = 1024, TILE = TPB, TEXT_CAP = 20480, TEXT_SLACK = 32, WORD_CAP = 128 };
static_assert(TEXT_CAP % 16 == 0, "the tile text buffer is copied in 16-byte vectors");
static_assert(TILE == TPB, "one thread per order of a tile");
static_assert(TEXT_SLACK >= 15 + 8, "the shift and the sweep's look-ahead word fit after the text");

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q13.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = 10;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

/* Global-memory path (a tile whose text does not fit in shared memory):
 * the first start >= from of w (length L) in s[0..len), or -1. */
__device__ static int64_t find_from(const char *__restrict__ s, int64_t from, int64_t len, const char *__restrict__ w,
                                    int64_t L) {
    if (L == 0) return from <= len ? from : -1;
    const char w0 = w[0];
    for (int64_t i = from; i + L <= len; i++) {
        if (s[i] != w0) continue;
        int64_t k = 1;
        while (k < L && s[i + k] == w[k]) k++;
        if (k == L) return i;
    }
    return -1;
}

/* Copies src[0..n) into buf[mis .. mis + n), mis = src's address mod 16,
 * so that 16-byte aligned global vectors land on 16-byte aligned shared
 * addresses: byte loads for the unaligned head and tail, 16-byte loads
 * (four in flight per thread) between. All threads of the block call it;
 * needs mis + n <= TEXT_CAP. Returns mis. */
__device__ static int copy_text_to_shared(char *buf, const char *__restrict__ src, int64_t n) {
    const int mis = (int)((uintptr_t)src & 15);
    const int64_t head = n < (16 - mis) % 16 ? n : (16 - mis) % 16; /* bytes before the first aligned vector */
    const int64_t nvec = (n - head) / 16, tail = head + 16 * nvec;   /* [tail, n): bytes after the last vector */
    for (int64_t j = threadIdx.x; j < head; j += TPB) buf[mis + j] = __ldg(src + j);
    for (int64_t j = tail + threadIdx.x; j < n; j += TPB) buf[mis + j] = __ldg(src + j);
    const uint4 *src4 = reinterpret_cast<const uint4 *>(src + head);
    uint4 *dst4 = reinterpret_cast<uint4 *>(buf + mis + head); /* mis + head is 0 or 16 */
    for (int64_t v0 = threadIdx.x; v0 < nvec; v0 += 4 * TPB) {
        uint4 r[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (v0 + u * TPB < nvec) r[u] = __ldg(src4 + v0 + u * TPB);
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (v0 + u * TPB < nvec) dst4[v0 + u * TPB] = r[u];
    }
    return mis;
}

/* A searched word: its bytes (shared or device memory), its length, and
 * its first min(len, 4) bytes packed little-endian (as a 4-byte load of
 * the text reads them) with the mask of those bytes. */
struct word_ref {
    const char *s;
    int len; /* min(the word's length, TEXT_CAP): no longer word fits in a tile's text */
    uint32_t head, mask;
};

/* A candidate start p (a position in the tile's shared text, whose first
 * min(len, 4) bytes already equal w's): the index of the tile's comment
 * that holds the whole of w at p, or -1 when w does not match there or
 * crosses a comment's end. The text is buf[lo, hi); comment i is
 * buf[cs[i], cs[i + 1]), cs[0] = lo, cs[rows] = hi. */
__device__ __forceinline__ static int confirm(const char *buf, const int *cs, int rows, int lo, int hi, int p,
                                              const word_ref &w) {
    if (p < lo || w.len > hi - p) return -1;
    const int L = w.len;
    for (int k = 4; k < L; k++)
        if (buf[p + k] != w.s[k]) return -1;
    int a = 0, b = rows - 1; /* the last comment starting at or before p (cs[0] = lo <= p) */
    while (a < b) {
        const int m = (a + b + 1) >> 1;
        if (cs[m] <= p) a = m;
        else b = m - 1;
    }
    return p + L <= cs[a + 1] ? a : -1;
}

/* One tile's rows as read from device memory (prefetched a tile ahead):
 * the tile's text range [a, e) in the bytes column; for this thread's
 * order (when it has one) its comment [lo, hi) and customer key. */
struct tile_rows {
    int64_t a, e, lo, hi;
    int32_t cust;
};

__device__ __forceinline__ static tile_rows load_tile(const int32_t *__restrict__ ocust,
                                                      const int64_t *__restrict__ off, int64_t no, int64_t first) {
    tile_rows r = {0, 0, 0, 0, 0};
    if (first >= no) return r;
    const int rows = no - first < TILE ? (int)(no - first) : TILE;
    const int t = threadIdx.x;
    r.a = __ldg(off + first);
    r.e = __ldg(off + first + rows);
    if (t < rows) {
        r.lo = __ldg(off + first + t);
        r.hi = __ldg(off + first + t + 1);
        r.cust = __ldg(ocust + first + t);
    }
    return r;
}

/* cnt[custkey - 1] += 1 for every order whose comment is not like
 * '%w1%w2%'; a customer key outside 1..nc sets *bad. Blocks take tiles of
 * TILE consecutive orders (grid-stride). A tile's text (one contiguous
 * range) is copied coalesced into shared memory; the block sweeps it as a
 * stream (thread t: aligned 4-byte words t, t + TPB, ...), testing every
 * byte position against the first 4 bytes of both words at once; each
 * candidate is compared in full and mapped to its comment, keeping per
 * comment the smallest start of w1 and the largest start of w2. Comment o
 * is like '%w1%w2%' iff first_w1 + len(w1) <= last_w2 (the leftmost w1
 * leaves the most room, and any w2 at or after its end will do, so the
 * rightmost w2 decides); an empty w1 matches at the comment's start, an
 * empty w2 at its end. A tile whose text does not fit is searched in
 * global memory, one thread per comment. */
__global__ void __launch_bounds__(TPB, 5) order_counts(const int32_t *__restrict__ ocust,
                                                    const int64_t *__restrict__ off, const char *__restrict__ text,
                                                    int64_t no, int64_t nc, const char *__restrict__ w1, int64_t l1,
                                                    uint32_t head1, uint32_t mask1, const char *__restrict__ w2,
                                                    int64_t l2, uint32_t head2, uint32_t mask2,
                                                    unsigned *__restrict__ cnt, int *__restrict__ bad) {
    __shared__ __align__(16) char s_text[TEXT_CAP];
    __shared__ int s_cs[TILE + 1];                   /* comment starts in s_text, then the text's end */
    __shared__ int s_first1[TILE], s_last2[TILE]; /* smallest w1 start, largest w2 start per comment */
    __shared__ char s_words[WORD_CAP];
    const int t = threadIdx.x;
    const bool words_fit = l1 + l2 <= WORD_CAP;
    if (words_fit)
        for (int k = t; k < (int)(l1 + l2); k += TPB) s_words[k] = k < l1 ? w1[k] : w2[k - l1];
    /* (visible after the first barrier below) */
    const word_ref W1 = {words_fit ? s_words : w1, (int)(l1 < TEXT_CAP ? l1 : TEXT_CAP), head1, mask1};
    const word_ref W2 = {words_fit ? s_words + l1 : w2, (int)(l2 < TEXT_CAP ? l2 : TEXT_CAP), head2, mask2};
    const unsigned en1 = l1 > 0 ? 15u : 0u, en2 = l2 > 0 ? 15u : 0u; /* an empty word is not searched */
    const uint32_t *s_text4 = reinterpret_cast<const uint32_t *>(s_text);
    const int64_t stride = (int64_t)gridDim.x * TILE;
    int oops = 0;
    int64_t first = (int64_t)blockIdx.x * TILE;
    tile_rows cur = load_tile(ocust, off, no, first);
    for (; first < no; first += stride) {
        const tile_rows next = load_tile(ocust, off, no, first + stride); /* in flight during this tile */
        const int rows = no - first < TILE ? (int)(no - first) : TILE;
        const int64_t n = cur.e - cur.a;
        const bool staged = n >= 0 && n <= TEXT_CAP - TEXT_SLACK; /* the same in all threads */
        int cs = 0, ce = 0;
        __syncthreads(); /* the previous tile's readers are done with the shared arrays */
        if (staged) {
            const int mis = copy_text_to_shared(s_text, text + cur.a, n);
            cs = mis + (int)(cur.lo - cur.a);
            ce = mis + (int)(cur.hi - cur.a);
            if (t < rows) s_cs[t + 1] = ce;
            if (t == 0) s_cs[0] = mis;
            s_first1[t] = INT_MAX;
            s_last2[t] = -1;
        }
        __syncthreads();
        if (staged) {
            const int lo = s_cs[0], hi = s_cs[rows];
            const int nw = (hi + 3) >> 2; /* the 4-byte words that overlap [0, hi) */
            for (int q = t; q < nw; q += TPB) {
                const uint32_t x = s_text4[q], y = s_text4[q + 1]; /* consecutive words per warp: no conflicts */
                unsigned h1 = 0, h2 = 0;                           /* bit b: position 4q + b starts a candidate */
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    const uint32_t v = b == 0 ? x : __funnelshift_r(x, y, 8 * b); /* bytes 4q + b ... 4q + b + 3 */
                    h1 |= (unsigned)(((v ^ W1.head) & W1.mask) == 0) << b;
                    h2 |= (unsigned)(((v ^ W2.head) & W2.mask) == 0) << b;
                }
                h1 &= en1;
                h2 &= en2;
                if (!(h1 | h2)) continue;
                for (; h1; h1 &= h1 - 1) {
                    const int p = 4 * q + __ffs((int)h1) - 1;
                    const int i = confirm(s_text, s_cs, rows, lo, hi, p, W1);
                    if (i >= 0) atomicMin(s_first1 + i, p);
                }
                for (; h2; h2 &= h2 - 1) {
                    const int p = 4 * q + __ffs((int)h2) - 1;
                    const int i = confirm(s_text, s_cs, rows, lo, hi, p, W2);
                    if (i >= 0) atomicMax(s_last2 + i, p);
                }
            }
        }
        __syncthreads();
        if (t < rows) {
            bool special;
            if (staged) {
                const int f1 = l1 == 0 ? cs : s_first1[t], g2 = l2 == 0 ? ce : s_last2[t];
                special = f1 != INT_MAX && (int64_t)f1 + l1 <= g2;
            } else {
                const char *s = text + cur.lo;
                const int64_t len = cur.hi - cur.lo, p1 = find_from(s, 0, len, w1, l1);
                special = p1 >= 0 && find_from(s, p1 + l1, len, w2, l2) >= 0;
            }
            if (!special) {
                const uint32_t c = (uint32_t)cur.cust - 1u;
                if ((uint64_t)c >= (uint64_t)nc) oops = 1;
                else atomicAdd(cnt + c, 1u);
            }
        }
        cur = next;
    }
    if (oops) *bad = 1;
}

/* hist[k] += customers with count k (k < HB); a count >= HB sets *big. */
__global__ void __launch_bounds__(TPB) count_hist(const unsigned *__restrict__ cnt, int64_t nc,
                                                  unsigned long long *__restrict__ hist, int *__restrict__ big) {
    __shared__ unsigned h[HB];
    for (int k = threadIdx.x; k < HB; k += TPB) h[k] = 0;
    __syncthreads();
    int over = 0;
    for (int64_t c = (int64_t)blockIdx.x * TPB + threadIdx.x; c < nc; c += (int64_t)gridDim.x * TPB) {
        const unsigned k = cnt[c];
        if (k >= HB) over = 1;
        else atomicAdd(h + k, 1u);
    }
    if (over) *big = 1;
    __syncthreads();
    for (int k = threadIdx.x; k < HB; k += TPB)
        if (h[k]) atomicAdd(hist + k, (unsigned long long)h[k]);
}

/* The first min(len, 4) bytes of s packed little-endian (as a 4-byte load
 * of the text reads them) and the mask of those bytes. */
static void word_head(const char *s, size_t len, uint32_t *head, uint32_t *mask) {
    *head = *mask = 0;
    for (size_t k = 0; k < len && k < 4; k++) {
        *head |= (uint32_t)(uint8_t)s[k] << (8 * k);
        *mask |= 0xffu << (8 * k);
    }
}

static dkb_cand_res_col *res_col(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

typedef struct {
    int64_t count, dist;
} hist_row;

static int by_dist_desc(const void *a, const void *b) {
    const hist_row *x = (const hist_row *)a, *y = (const hist_row *)b;
    if (x->dist != y->dist) return x->dist > y->dist ? -1 : 1;
    return x->count > y->count ? -1 : x->count < y->count;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_table *customer = dkb_cand_table_find(db, "customer");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *ocomment = dkb_cand_column(db, "orders", "o_comment");
    const dkb_cand_param *pw1 = dkb_cand_param_find(params, "word1");
    const dkb_cand_param *pw2 = dkb_cand_param_find(params, "word2");
    if (!customer || !ocust || !ocomment || !pw1 || !pw2 || !pw1->s || !pw2->s) return 1;
    if (ocust->type != DKB_CAND_I32 || ocomment->type != DKB_CAND_STR) return 2;
    dkb_cand_res_col *c_count = res_col(res, "c_count", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_dist = res_col(res, "custdist", DKB_CAND_RES_INT);
    if (!c_count || !c_dist) return 3;
    res->nrows = 0;

    const int64_t nc = customer->rows, no = ocust->n;
    const size_t l1 = strlen(pw1->s), l2 = strlen(pw2->s);
    uint32_t head1, mask1, head2, mask2;
    word_head(pw1->s, l1, &head1, &mask1);
    word_head(pw2->s, l2, &head2, &mask2);
    if (nc == 0) return 0;
    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, dev = 0, sms = 0, h_flags[2] = {0, 0}; /* [0]: bad key, [1]: a count >= HB */
    int64_t nr = 0, maxc = 0;
    unsigned *d_cnt = NULL, *h_cnt = NULL;
    unsigned long long *d_hist = NULL;
    int64_t *hist = NULL;
    unsigned long long h_hist[HB];
    hist_row *rows = NULL;
    char *d_words = NULL;
    int *d_flags = NULL;
    CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
    CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_TRY("cudaMallocAsync counts", cudaMallocAsync((void **)&d_cnt, sizeof(unsigned) * (size_t)nc, stream));
    CUDA_TRY("cudaMallocAsync histogram", cudaMallocAsync((void **)&d_hist, sizeof(unsigned long long) * HB, stream));
    CUDA_TRY("cudaMallocAsync words", cudaMallocAsync((void **)&d_words, l1 + l2 + 2, stream));
    CUDA_TRY("cudaMallocAsync flags", cudaMallocAsync((void **)&d_flags, sizeof(int) * 2, stream));
    CUDA_TRY("cudaMemsetAsync counts", cudaMemsetAsync(d_cnt, 0, sizeof(unsigned) * (size_t)nc, stream));
    CUDA_TRY("cudaMemsetAsync histogram", cudaMemsetAsync(d_hist, 0, sizeof(unsigned long long) * HB, stream));
    CUDA_TRY("cudaMemsetAsync flags", cudaMemsetAsync(d_flags, 0, sizeof(int) * 2, stream));
    CUDA_TRY("cudaMemcpyAsync word1", cudaMemcpyAsync(d_words, pw1->s, l1 + 1, cudaMemcpyHostToDevice, stream));
    CUDA_TRY("cudaMemcpyAsync word2",
             cudaMemcpyAsync(d_words + l1 + 1, pw2->s, l2 + 1, cudaMemcpyHostToDevice, stream));
    if (no > 0) {
        int per_sm = 0; /* resident blocks per SM (shared memory bounds it) */
        CUDA_TRY("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                 cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, order_counts, TPB, 0));
        int64_t grid = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
        if (grid > (no + TILE - 1) / TILE) grid = (no + TILE - 1) / TILE;
        order_counts<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)ocust->data,
                                                         (const int64_t *)ocomment->data, ocomment->bytes, no, nc,
                                                         d_words, (int64_t)l1, head1, mask1, d_words + l1 + 1,
                                                         (int64_t)l2, head2, mask2, d_cnt, d_flags);
        CUDA_TRY("order_counts launch", cudaGetLastError());
    }
    {
        int64_t grid = (int64_t)sms * 2;
        if (grid > (nc + TPB - 1) / TPB) grid = (nc + TPB - 1) / TPB;
        count_hist<<<(unsigned)grid, TPB, 0, stream>>>(d_cnt, nc, d_hist, d_flags + 1);
        CUDA_TRY("count_hist launch", cudaGetLastError());
    }
    CUDA_TRY("cudaMemcpyAsync histogram",
             cudaMemcpyAsync(h_hist, d_hist, sizeof(unsigned long long) * HB, cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync flags", cudaMemcpyAsync(h_flags, d_flags, sizeof(int) * 2, cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
    if (h_flags[0]) {
        fprintf(stderr, "q13.full.cu: an o_custkey outside 1..%lld\n", (long long)nc);
        rc = 5;
        goto done;
    }
    if (!h_flags[1]) {
        maxc = HB - 1;
        hist = (int64_t *)malloc(sizeof(int64_t) * HB);
        if (hist)
            for (int k = 0; k < HB; k++) hist[k] = (int64_t)h_hist[k];
    } else { /* a customer with >= HB orders: the histogram on the host */
        h_cnt = (unsigned *)malloc(sizeof(unsigned) * (size_t)nc);
        if (!h_cnt) {
            rc = 6;
            goto done;
        }
        CUDA_TRY("cudaMemcpyAsync counts",
                 cudaMemcpyAsync(h_cnt, d_cnt, sizeof(unsigned) * (size_t)nc, cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        for (int64_t c = 0; c < nc; c++) maxc = h_cnt[c] > maxc ? h_cnt[c] : maxc;
        hist = (int64_t *)calloc((size_t)maxc + 1, sizeof(int64_t));
        if (hist)
            for (int64_t c = 0; c < nc; c++) hist[h_cnt[c]]++;
    }
    rows = (hist_row *)malloc(sizeof(hist_row) * ((size_t)maxc + 1));
    if (!hist || !rows) {
        fprintf(stderr, "q13.full.cu: out of host memory for the histogram\n");
        rc = 6;
        goto done;
    }
    for (int64_t k = 0; k <= maxc; k++)
        if (hist[k]) rows[nr].count = k, rows[nr].dist = hist[k], nr++;
    qsort(rows, (size_t)nr, sizeof(hist_row), by_dist_desc);
    if (nr > res->cap) {
        fprintf(stderr, "q13.full.cu: %lld result rows over the cap %lld\n", (long long)nr, (long long)res->cap);
        rc = 7;
        goto done;
    }
    for (int64_t r = 0; r < nr; r++) {
        c_count->i64[r] = rows[r].count;
        c_dist->i64[r] = rows[r].dist;
        c_count->is_null[r] = c_dist->is_null[r] = 0;
    }
    res->nrows = nr;
done:
    if (d_cnt) cudaFreeAsync(d_cnt, stream);
    if (d_hist) cudaFreeAsync(d_hist, stream);
    if (d_words) cudaFreeAsync(d_words, stream);
    if (d_flags) cudaFreeAsync(d_flags, stream);
    cudaStreamSynchronize(stream);
    free(h_cnt);
    free(hist);
    free(rows);
    return rc;
}
