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
 *  1. order_counts: each block takes tiles of TILE = 512 consecutive orders
 *     (grid-stride, as many blocks as fit on the SMs): it reads the tile's
 *     513 offsets, then copies the tile's text, one contiguous byte range
 *     starting at any byte, into shared memory with all threads (16-byte
 *     vector loads on the aligned middle, byte loads at the edges, the copy
 *     shifted by the start's address mod 16 so aligned vectors stay
 *     aligned). Then one thread per order searches its comment in shared
 *     memory for the leftmost word1 (4 positions at a time against word1's
 *     first byte, each candidate compared in full), and after it for word2:
 *     exactly LIKE '%w1%w2%' (the leftmost word1 leaves the most room).
 *     Orders that do not match add 1 to cnt[custkey - 1] (customer keys
 *     dense 1..N; ~1M distinct addresses, no hot key). The words (any
 *     length) are staged in shared memory when they fit, else read from
 *     device memory. A tile whose text is over the shared buffer (40 KB;
 *     dbgen comments are at most 78 bytes, 512 x 78 < 40 KB) is searched
 *     in global memory, one thread per comment: correct for any data,
 *     slow only then.
 *  2. count_hist: per-block shared histograms of the customers' counts
 *     (customers without a row count 0: the outer join) over HB bins,
 *     added to a global histogram once per block and bin; a count >= HB
 *     sets a flag and the host then builds the histogram from the counts
 *     copied back (correct for any data, slow only then).
 *  3. The few histogram rows are sorted on the host by (custdist desc,
 *     c_count desc). Integer counts: exact.
 *
 * Under a memory budget (env->budget streams orders by partition) step 1
 * runs once per load of o_custkey and o_comment (dkb_stream with
 * DKB_STREAM_OVERLAP: the next load's copy overlaps this one's kernel),
 * each launch adding into the same per-customer counts (zeroed once; a
 * load's offsets start at 0, and the kernel only uses differences of
 * them); the rest reads only customer-sized memory and runs as without a
 * budget. Without a budget the walk is one pass over the whole columns
 * (the same launch as before).
 *
 * Bytes read (floor, SF10): o_custkey 4 B x 15M = 60 MB, o_comment offsets
 * 8 B x 15M = 120 MB and bytes ~49 B x 15M = 0.73 GB: about 0.91 GB,
 * ~0.22 ms at 4.2 TB/s. Each is read once, coalesced (offsets: one extra
 * per tile); plus the random atomics on the 1.5M counts (6 MB, L2). The
 * previous version (a thread per comment reading global memory, byte by
 * byte, uncoalesced) took 2.26 ms at SF10. Measured on the H200 (SF 10):
 * the kernel is bound by issue, not memory (Nsight Compute: SM 66%, DRAM
 * 14%, 8.4 of 32 threads active per warp: lanes verifying a first-byte
 * hit stall the rest); the two-byte prefilter took it from 1.36 to 0.89 ms
 * (the call 1.43 -> 0.99 ms); 15M random atomicAdds on 1.5M counters
 * alone take 0.155 ms there.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): orders is split
 * (customer whole on every rank) and a customer's orders lie on several
 * ranks, so after step 1 each rank copies its per-customer counts back and
 * they are summed over the ranks, with the bad-key flag, in one int64
 * all-reduce over the dense custkeys (dkb_ranks_sum_i64, nc + 1 values,
 * called by every rank, also one with an empty share); the sums go back to
 * the device and steps 2 and 3 run on them as before; rank 0 writes the
 * rows, the others return none. The text offsets of a share are the whole
 * column's (offsets[0] need not be 0): step 1 only uses differences of
 * them and text + offset, as for a load. On one rank nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_sum_i64, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of orders (customer whole) */

/* TPB threads per block; TILE consecutive orders per tile; TEXT_CAP bytes
 * of shared memory for a tile's text (16-aligned, with room for the
 * alignment shift and the 4-byte word reads past a comment's end); words
 * up to WORD_CAP bytes in all are staged in shared memory. */
enum { TPB = 256, HB = 1024, TILE = 512, TEXT_CAP = 40960, TEXT_SLACK = 32, WORD_CAP = 128 };
static_assert(TEXT_CAP % 16 == 0, "the tile text buffer is copied in 16-byte vectors");

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

/* Shared-memory path: the first start p in [from, end - L] of w (length
 * L >= 1, first bytes w0 and, when L >= 2, w1) in buf, or -1. buf is
 * 4-byte aligned and readable up to index end + 7: the scan reads aligned
 * 4-byte words (each once: the next word is carried) and tests their four
 * positions against w's first two bytes at once (the word and the word
 * shifted by a byte against w0 and w1), so that few positions reach the
 * full comparison (a thread per comment: every lane that does one stalls
 * its warp; one byte alone let ~6% of positions through); each candidate
 * (only those inside [from, end - L], lowest address first) is checked
 * against the rest of w. */
__device__ __forceinline__ static int find_in_shared(const char *buf, int from, int end, const char *w, int64_t L,
                                                     char w0, char w1) {
    if (L > (int64_t)end - from) return -1;
    const int Li = (int)L, last = end - Li; /* L <= end - from: fits an int */
    const uint32_t pat0 = 0x01010101u * (uint8_t)w0, pat1 = 0x01010101u * (uint8_t)w1;
    const uint32_t *words = reinterpret_cast<const uint32_t *>(buf);
    uint32_t cur = words[(from & ~3) >> 2];
    for (int q = from & ~3; q <= last; q += 4) {
        const uint32_t next = words[(q >> 2) + 1];
        uint32_t hit = __vcmpeq4(cur, pat0); /* bit 8b+7: byte b equals w0 */
        if (Li >= 2) hit &= __vcmpeq4(__funnelshift_r(cur, next, 8), pat1); /* ... and byte b + 1 equals w1 */
        hit &= 0x80808080u;
        cur = next;
        while (hit) {
            const int p = q + ((__ffs((int)hit) - 1) >> 3);
            hit &= hit - 1;
            if (p < from || p > last) continue;
            int k = Li >= 2 ? 2 : 1;
            while (k < Li && buf[p + k] == w[k]) k++;
            if (k == Li) return p;
        }
    }
    return -1;
}

/* Whether buf[cs..ce) is like '%w1%w2%': the leftmost w1, then w2 at or
 * after its end (the leftmost w1 leaves the most room). c1, d1 (c2, d2):
 * w1's (w2's) first two bytes. */
__device__ __forceinline__ static bool special_in_shared(const char *buf, int cs, int ce, const char *w1, int64_t l1,
                                                         char c1, char d1, const char *w2, int64_t l2, char c2,
                                                         char d2) {
    int p1 = cs;
    if (l1 > 0 && (p1 = find_in_shared(buf, cs, ce, w1, l1, c1, d1)) < 0) return false;
    if (l2 == 0) return true; /* p1 + l1 <= ce */
    return find_in_shared(buf, p1 + (int)l1, ce, w2, l2, c2, d2) >= 0;
}

/* cnt[custkey - 1] += 1 for every order whose comment is not like
 * '%w1%w2%'; a customer key outside 1..nc sets *bad. Blocks take tiles of
 * TILE consecutive orders (grid-stride): the tile's offsets, then its text
 * (one contiguous range, copied coalesced into shared memory when it fits;
 * otherwise the tile's comments are searched in global memory), then one
 * thread per order tests its comment. */
__global__ void __launch_bounds__(TPB) order_counts(const int32_t *__restrict__ ocust,
                                                    const int64_t *__restrict__ off, const char *__restrict__ text,
                                                    int64_t no, int64_t nc, const char *__restrict__ w1, int64_t l1,
                                                    const char *__restrict__ w2, int64_t l2,
                                                    unsigned *__restrict__ cnt, int *__restrict__ bad) {
    __shared__ int64_t s_off[TILE + 1];
    __shared__ __align__(16) char s_text[TEXT_CAP];
    __shared__ char s_words[WORD_CAP];
    const bool words_fit = l1 + l2 <= WORD_CAP;
    if (words_fit)
        for (int k = threadIdx.x; k < (int)(l1 + l2); k += TPB) s_words[k] = k < l1 ? w1[k] : w2[k - l1];
    /* (visible after the first barrier below) */
    const char *sw1 = words_fit ? s_words : w1, *sw2 = words_fit ? s_words + l1 : w2;
    const char c1 = l1 > 0 ? w1[0] : 0, c2 = l2 > 0 ? w2[0] : 0, d1 = l1 > 1 ? w1[1] : 0, d2 = l2 > 1 ? w2[1] : 0;
    int oops = 0;
    for (int64_t first = (int64_t)blockIdx.x * TILE; first < no; first += (int64_t)gridDim.x * TILE) {
        const int rows = no - first < TILE ? (int)(no - first) : TILE;
        __syncthreads(); /* the previous tile's readers are done with s_off and s_text */
        for (int i = threadIdx.x; i <= rows; i += TPB) s_off[i] = __ldg(off + first + i);
        __syncthreads();
        const int64_t a = s_off[0], n = s_off[rows] - a;
        const bool staged = n >= 0 && n <= TEXT_CAP - TEXT_SLACK;
        const int mis = staged ? dkb_copy_text_to_shared<TPB>(s_text, text + a, n) : 0;
        __syncthreads();
        for (int i = threadIdx.x; i < rows; i += TPB) {
            const int64_t start = s_off[i] - a, len = s_off[i + 1] - s_off[i];
            bool special;
            if (staged) {
                const int cs = mis + (int)start;
                special = special_in_shared(s_text, cs, cs + (int)len, sw1, l1, c1, d1, sw2, l2, c2, d2);
            } else {
                const int64_t p1 = find_from(text + a + start, 0, len, w1, l1);
                special = p1 >= 0 && find_from(text + a + start, p1 + l1, len, w2, l2) >= 0;
            }
            if (special) continue;
            const uint32_t c = (uint32_t)__ldg(ocust + first + i) - 1u;
            if ((uint64_t)c >= (uint64_t)nc) {
                oops = 1;
                continue;
            }
            atomicAdd(cnt + c, 1u);
        }
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
    const dkb_cand_vec *ocust, *ocomment;
    const dkb_cand_param *pw1, *pw2;
    dkb_cand_res_col *c_count, *c_dist;
    if (!customer || DKB_BIND_COLS(db, "orders", "o_custkey:i32 o_comment:str", &ocust, &ocomment) ||
        DKB_BIND_PARAMS(params, "word1:str word2:str", &pw1, &pw2) ||
        DKB_BIND_RES(res, "c_count:int custdist:int", &c_count, &c_dist))
        return DKB_CAND_EINVAL;
    res->nrows = 0;

    const int64_t nc = customer->rows, no = ocust->n;
    const size_t l1 = strlen(pw1->s), l2 = strlen(pw2->s);
    if (nc == 0) return 0;
    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, sms = 0, h_flags[2] = {0, 0}; /* [0]: bad key, [1]: a count >= HB */
    int64_t nr = 0, maxc = 0;
    unsigned *d_cnt = NULL, *h_cnt = NULL;
    unsigned long long *d_hist = NULL;
    int64_t *hist = NULL;
    unsigned long long h_hist[HB];
    hist_row *rows = NULL;
    char *d_words = NULL;
    int *d_flags = NULL;
    void *d_block = NULL;
    static const char *const OCOLS[] = {"o_custkey", "o_comment"};
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_cnt, sizeof(unsigned) * (size_t)nc, 0},
            {(void **)&d_hist, sizeof(unsigned long long) * HB, 0},
            {(void **)&d_flags, sizeof(int) * 2, 0},
            {(void **)&d_words, l1 + l2 + 2, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    DKB_CUDA_TRY("cudaMemcpyAsync word1", cudaMemcpyAsync(d_words, pw1->s, l1 + 1, cudaMemcpyHostToDevice, stream));
    DKB_CUDA_TRY("cudaMemcpyAsync word2",
             cudaMemcpyAsync(d_words + l1 + 1, pw2->s, l2 + 1, cudaMemcpyHostToDevice, stream));
    if (no > 0) {
        /* the whole columns in one pass, or under a budget load by load (each
         * launch adds its rows' orders into d_cnt) */
        int64_t resident = 0;
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(order_counts, TPB, 0, &sms, &resident));
        for (dkb_stream_begin_ex(&st, db, env, 2, OCOLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const dkb_cand_vec *lc = &st.cols[0], *lt = &st.cols[1];
            const int64_t nol = lc->n;
            if (nol <= 0) continue;
            const int64_t grid = resident < (nol + TILE - 1) / TILE ? resident : (nol + TILE - 1) / TILE;
            order_counts<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)lc->data, (const int64_t *)lt->data,
                                                             lt->bytes, nol, nc, d_words, (int64_t)l1,
                                                             d_words + l1 + 1, (int64_t)l2, d_cnt, d_flags);
            DKB_CUDA_TRY("order_counts launch", cudaGetLastError());
        }
        rc = dkb_stream_end(&st);
        if (rc) goto done;
    }
    if (env->nranks > 1) {
        /* across ranks: a customer's orders lie on several ranks, so the
         * per-customer counts (and the bad-key flag, element nc) are summed
         * over the ranks in one int64 all-reduce (every rank, an empty share
         * too: its counts are zeros), then put back into d_cnt and
         * d_flags[0] for the histogram below, the same on every rank */
        int64_t *sum = (int64_t *)malloc(sizeof(int64_t) * ((size_t)nc + 1));
        unsigned *mine = (unsigned *)malloc(sizeof(unsigned) * (size_t)nc);
        int mrc = sum && mine ? DKB_CAND_OK : DKB_CAND_ENOMEM;
        if (!mrc) {
            const dkb_host_copy back[] = {{mine, d_cnt, sizeof(unsigned) * (size_t)nc}, {h_flags, d_flags, sizeof(int)}};
            if (dkb_copy_back(back, DKB_COUNT(back), stream) != cudaSuccess) mrc = DKB_CAND_ECUDA;
        }
        if (!mrc) {
            for (int64_t c = 0; c < nc; c++) sum[c] = mine[c];
            sum[nc] = h_flags[0] != 0;
            mrc = dkb_ranks_sum_i64(env, sum, nc + 1);
        }
        if (!mrc) {
            for (int64_t c = 0; c < nc; c++) mine[c] = (unsigned)sum[c];
            h_flags[0] = sum[nc] != 0;
            if (cudaMemcpyAsync(d_cnt, mine, sizeof(unsigned) * (size_t)nc, cudaMemcpyHostToDevice, stream) !=
                    cudaSuccess ||
                cudaMemcpyAsync(d_flags, h_flags, sizeof(int), cudaMemcpyHostToDevice, stream) != cudaSuccess ||
                cudaStreamSynchronize(stream) != cudaSuccess)
                mrc = DKB_CAND_ECUDA;
        }
        free(sum);
        free(mine);
        DKB_FAIL_IF(mrc, mrc, "q13.full.cu: merging the ranks' per-customer counts failed (%d)\n", mrc);
    }
    {
        int64_t grid = (int64_t)sms * 2;
        if (grid > (nc + TPB - 1) / TPB) grid = (nc + TPB - 1) / TPB;
        count_hist<<<(unsigned)grid, TPB, 0, stream>>>(d_cnt, nc, d_hist, d_flags + 1);
        DKB_CUDA_TRY("count_hist launch", cudaGetLastError());
    }
    {
        const dkb_host_copy back[] = {{h_hist, d_hist, sizeof(unsigned long long) * HB},
                                      {h_flags, d_flags, sizeof(int) * 2}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    DKB_FAIL_IF(h_flags[0], DKB_CAND_EINTERNAL, "q13.full.cu: an o_custkey outside 1..%lld\n", (long long)nc);
    if (env->nranks > 1 && !dkb_ranks_writes(env, res)) goto done; /* across ranks: rank 0 writes the rows */
    if (!h_flags[1]) {
        maxc = HB - 1;
        hist = (int64_t *)malloc(sizeof(int64_t) * HB);
        if (hist)
            for (int k = 0; k < HB; k++) hist[k] = (int64_t)h_hist[k];
    } else { /* a customer with >= HB orders: the histogram on the host */
        h_cnt = (unsigned *)malloc(sizeof(unsigned) * (size_t)nc);
        if (!h_cnt)
            DKB_FAIL(DKB_CAND_ENOMEM);
        const dkb_host_copy back[] = {{h_cnt, d_cnt, sizeof(unsigned) * (size_t)nc}};
        DKB_CUDA_TRY("copy back counts", dkb_copy_back(back, DKB_COUNT(back), stream));
        for (int64_t c = 0; c < nc; c++) maxc = h_cnt[c] > maxc ? h_cnt[c] : maxc;
        hist = (int64_t *)calloc((size_t)maxc + 1, sizeof(int64_t));
        if (hist)
            for (int64_t c = 0; c < nc; c++) hist[h_cnt[c]]++;
    }
    rows = (hist_row *)malloc(sizeof(hist_row) * ((size_t)maxc + 1));
    DKB_FAIL_IF(!hist || !rows, DKB_CAND_ENOMEM, "q13.full.cu: out of host memory for the histogram\n");
    for (int64_t k = 0; k <= maxc; k++)
        if (hist[k]) rows[nr].count = k, rows[nr].dist = hist[k], nr++;
    qsort(rows, (size_t)nr, sizeof(hist_row), by_dist_desc);
    DKB_FAIL_IF(nr > res->cap, DKB_CAND_ECAP, "q13.full.cu: %lld result rows over the cap %lld\n", (long long)nr,
                (long long)res->cap);
    for (int64_t r = 0; r < nr; r++) {
        c_count->i64[r] = rows[r].count;
        c_dist->i64[r] = rows[r].dist;
        c_count->is_null[r] = c_dist->is_null[r] = 0;
    }
    res->nrows = nr;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    free(h_cnt);
    free(hist);
    free(rows);
    return rc;
}
