/* q21.full.cu: expert CUDA full-mode candidate for TPC-H Q21 (Suppliers Who
 * Kept Orders Waiting).
 *
 *   select s_name, count(*) as numwait
 *   from supplier, lineitem l1, orders, nation
 *   where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
 *     and l1.l_receiptdate > l1.l_commitdate
 *     and exists (select * from lineitem l2
 *                 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
 *     and not exists (select * from lineitem l3
 *                     where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
 *                       and l3.l_receiptdate > l3.l_commitdate)
 *     and s_nationkey = n_nationkey and n_name = ':nation'
 *   group by s_name order by numwait desc, s_name limit 100;
 *
 * Plan (all on env->stream; the CPU expert's logic, one thread per order):
 *  1. Host: the 'F' code from o_orderstatus's dictionary, the nation's code
 *     from n_name's.
 *  2. supp_mark: a byte per supplier row, 1 for the nation's suppliers (the
 *     nation's key found on the device in the 25-row nation table: no
 *     round trip); supplier keys must be dense (s_suppkey = row + 1), else
 *     an error.
 *  3. chunk_bounds: orders are cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order (both ascending), so a chunk's
 *     lines are one range, found by a warp per chunk (a 65-ary search on
 *     l_orderkey: 4 dependent rounds at SF10).
 *  4. q21_orders: one thread per 'F' order finds its first line by a
 *     binary search inside its chunk's range and walks the order's few
 *     lines once: whether a second supplier exists (EXISTS), the supplier of
 *     the late lines or that there are two (NOT EXISTS fails then). With two
 *     suppliers and all late lines from one supplier of the nation, that
 *     supplier's count grows by the number of late lines (each an l1 row;
 *     one atomicAdd per such order: rare, spread over suppliers).
 *  5. On the device: count_hist, a histogram of the counts (bins 1..1023,
 *     the last one for every count >= 1023); keep_top finds the largest
 *     bin T with at least 100 counts >= T (else 1: T is <= the 100th
 *     largest count) and lists the suppliers with a count >= T (100 plus
 *     ties, instead of the nation's ~4000 counted suppliers at SF10);
 *     top_gather puts the first OUT_ROWS of them with their counts and
 *     s_name (SLOT-byte slots) into a ~22 KB block: one copy back, one
 *     synchronize. The host sorts those by (numwait desc, s_name) and cuts
 *     to 100. Only when more than OUT_ROWS are kept or a name is longer than
 *     SLOT, the general path copies the kept rows and counts back and
 *     gathers the names exactly.
 * Integer counts: exact, independent of the order of the atomics.
 *
 * Under a memory budget (env->budget streaming lineitem and orders,
 * co-partitioned by orderkey; supplier and nation whole) steps 3 and 4 run
 * once per load of partitions (dkb_stream with DKB_STREAM_OVERLAP: the next
 * load's copy overlaps this one's kernels): an order's lines are all in its
 * load, so the chunk bounds and searches are the load's own; d_bound is
 * reused (same stream: the next load's bounds are written after this
 * load's q21_orders read them) and every load adds into the same supplier
 * counts. Step 5 runs once after the last load. No synchronize per load.
 *
 * Bytes read (floor, SF10): o_orderkey, o_orderstatus 5 B x 15M, l_orderkey,
 * l_suppkey, l_commitdate, l_receiptdate 16 B x 60M (~1 GB; half the orders
 * are 'F'), s_nationkey, s_suppkey 0.8 MB.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): lineitem and orders
 * are co-partitioned by orderkey, so an order's lines (all that EXISTS and
 * NOT EXISTS look at) are on one rank and each rank decides its orders
 * locally (supplier and nation whole on every rank). After the walk
 * (ranks_merge) each rank copies its counts, the nation marks and the
 * error flag to the host; the counts of the nation's suppliers (the same
 * slots on every rank) and the flag are summed over the ranks in one
 * all-reduce (dkb_ranks_sum_i64, as the CPU expert) and copied back into
 * d_cnt; rank 0 runs step 5 on them and writes, the others return no rows
 * (every rank fails when a rank's flag was set). A rank whose share is
 * empty still takes part (its walk is skipped, its counts are 0). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh"   // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h"   // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"    // defines: dkb_ranks_sum_i64, dkb_ranks_writes (the ranks' partials merged)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its supplier counts merged through env->comm */

enum { TPB = 256, OCHUNK = 256, LIMIT = 100 };

/* One thread per order: the CPU expert's walk over an 'F' order's lines;
 * cnt[suppkey - 1] += late lines of the order when they qualify. */
__global__ void __launch_bounds__(TPB) q21_orders(const int32_t *__restrict__ okey, const uint8_t *__restrict__ ostat,
                                                  int64_t no, const int32_t *__restrict__ lkey,
                                                  const int32_t *__restrict__ lsupp,
                                                  const int32_t *__restrict__ lcommit,
                                                  const int32_t *__restrict__ lreceipt, int64_t nl,
                                                  const int64_t *__restrict__ bound, uint8_t fcode,
                                                  const uint8_t *__restrict__ in, int64_t ns,
                                                  unsigned long long *__restrict__ cnt, int *__restrict__ bad) {
    int oops = 0;
    for (int64_t o = (int64_t)blockIdx.x * TPB + threadIdx.x; o < no; o += (int64_t)gridDim.x * TPB) {
        if (__ldg(ostat + o) != fcode) continue;
        const int32_t key = __ldg(okey + o);
        const int64_t c = o / OCHUNK;
        int64_t lo = __ldg(bound + c), hi = __ldg(bound + c + 1);
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (__ldg(lkey + mid) < key) lo = mid + 1;
            else hi = mid;
        }
        int64_t j = lo;
        if (j >= nl || __ldg(lkey + j) != key) continue;
        const int32_t first = __ldg(lsupp + j);
        int multi = 0, late_multi = 0;
        int32_t late = -1;
        long long nlate = 0;
        for (; j < nl && __ldg(lkey + j) == key; j++) {
            const int32_t s = __ldg(lsupp + j);
            multi |= s != first;
            if (__ldg(lreceipt + j) > __ldg(lcommit + j)) {
                if (late < 0) late = s;
                else late_multi |= s != late;
                nlate++;
            }
        }
        if (!multi || late < 0 || late_multi) continue;
        const uint32_t si = (uint32_t)late - 1u;
        if ((uint64_t)si >= (uint64_t)ns) {
            oops = 1;
            continue;
        }
        if (__ldg(in + si)) atomicAdd(cnt + si, (unsigned long long)nlate);
    }
    if (oops) *bad = 1;
}

/* ---- the top suppliers on the device ---- */

/* HB histogram bins of the counts (count c >= 1 in bin min(c, HB - 1));
 * OUT_ROWS suppliers with their names in SLOT-byte slots come back in the
 * one round trip (~22 KB). */
enum { HB = 1024, OUT_ROWS = 512, SLOT = 32 };

struct q21_out {
    unsigned long long m; /* suppliers kept: count >= thresh */
    unsigned thresh;      /* a count <= the LIMIT-th largest (1 when fewer than LIMIT are counted) */
    int bad;              /* supp_mark / q21_orders: supplier keys not dense 1..N */
    unsigned long long cnt[OUT_ROWS];
    int32_t len[OUT_ROWS]; /* s_name's length (bytes copied when 0..SLOT) */
    char name[OUT_ROWS][SLOT];
};

/* in[s] = 1 for the supplier rows of the nation whose n_name code is ncode
 * (its n_nationkey: the last such row of the nation table, as the host
 * did; none, or a negative key: no supplier); a key other than row + 1
 * sets *bad (the counts are indexed by suppkey - 1). */
__global__ void supp_mark(const int32_t *__restrict__ skey, const int32_t *__restrict__ snat, int64_t ns,
                          const uint8_t *__restrict__ ncodes, const int32_t *__restrict__ nkeys, int64_t nn, int ncode,
                          uint8_t *__restrict__ in, int *__restrict__ bad) {
    int64_t nk = -1;
    for (int64_t r = 0; r < nn; r++)
        if (ncodes[r] == ncode) nk = nkeys[r];
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < ns; s += (int64_t)gridDim.x * blockDim.x) {
        if (skey[s] != s + 1) *bad = 1;
        in[s] = nk >= 0 && snat[s] == nk;
    }
}

/* hist[min(c, HB - 1)] += 1 for every count c >= 1 (a block histogram in
 * shared memory, then one atomic per nonzero bin). */
__global__ void count_hist(const unsigned long long *__restrict__ cnt, int64_t ns, unsigned *__restrict__ hist) {
    __shared__ unsigned h[HB];
    for (int b = threadIdx.x; b < HB; b += blockDim.x) h[b] = 0;
    __syncthreads();
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < ns; s += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long c = cnt[s];
        if (c) atomicAdd(&h[c >= HB - 1 ? HB - 1 : (int)c], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < HB; b += blockDim.x)
        if (h[b]) atomicAdd(&hist[b], h[b]);
}

/* Launched with HB threads a block. Each block finds the threshold T: the
 * largest bin t >= 1 with at least LIMIT counts in bins t.. (a suffix
 * scan), else 1; at least LIMIT counts are >= T, so T <= the LIMIT-th
 * largest count and every supplier of the result has a count >= T. Then
 * the suppliers with count >= T go to rows[0..out->m) (any order: the
 * host sorts them). */
__global__ void keep_top(const unsigned long long *__restrict__ cnt, int64_t ns, const unsigned *__restrict__ hist,
                         int64_t *__restrict__ rows, q21_out *__restrict__ out) {
    __shared__ unsigned suf[HB];
    __shared__ unsigned thresh_s;
    const int t = threadIdx.x;
    suf[t] = hist[t];
    if (t == 0) thresh_s = 1;
    __syncthreads();
    for (int off = 1; off < HB; off <<= 1) {
        const unsigned v = t + off < HB ? suf[t + off] : 0u;
        __syncthreads();
        suf[t] += v;
        __syncthreads();
    }
    if (t >= 1 && suf[t] >= LIMIT && (t == HB - 1 || suf[t + 1] < LIMIT)) thresh_s = (unsigned)t;
    __syncthreads();
    const unsigned long long thresh = thresh_s;
    if (blockIdx.x == 0 && t == 0) out->thresh = thresh_s;
    for (int64_t s = (int64_t)blockIdx.x * HB + t; s < ns; s += (int64_t)gridDim.x * HB)
        if (cnt[s] >= thresh) rows[atomicAdd(&out->m, 1ull)] = s;
}

/* Block k < min(out->m, OUT_ROWS): kept supplier rows[k]'s count and s_name
 * (its length; its bytes when they fit a slot). */
__global__ void top_gather(const int64_t *__restrict__ rows, const unsigned long long *__restrict__ cnt,
                           const int64_t *__restrict__ off, const char *__restrict__ bytes, q21_out *__restrict__ out) {
    const unsigned k = blockIdx.x;
    if (k >= OUT_ROWS || (unsigned long long)k >= out->m) return;
    const int64_t r = rows[k], a = off[r], l = off[r + 1] - a;
    if (threadIdx.x == 0) {
        out->cnt[k] = cnt[r];
        out->len[k] = l < 0 || l > SLOT ? -1 : (int32_t)l;
    }
    if (l < 0 || l > SLOT) return;
    for (int64_t i = threadIdx.x; i < l; i += blockDim.x) out->name[k][i] = bytes[a + i];
}

/* ---- end of the device selection ---- */

/* A result row on the host (name: into the result block or a gathered text). */
typedef struct {
    long long count;
    const char *name;
    int64_t len;
} wait_row;

static int by_count_then_name(const void *a, const void *b) {
    const wait_row *x = (const wait_row *)a, *y = (const wait_row *)b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    const int c = memcmp(x->name, y->name, (size_t)(x->len < y->len ? x->len : y->len));
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* Across ranks (nranks > 1): this rank's counts d_cnt[0, ns) of the nation's
 * suppliers (d_in) and its error flag *d_bad summed over the ranks in one
 * all-reduce (the nation's suppliers are the same slots on every rank), the
 * sums back into d_cnt; *bad: some rank's flag was set. */
static int ranks_merge(const dkb_cand_env *env, unsigned long long *d_cnt, const uint8_t *d_in, const int *d_bad,
                       int64_t ns, cudaStream_t stream, int *bad) {
    unsigned long long *cnt = (unsigned long long *)malloc(sizeof *cnt * (size_t)ns);
    uint8_t *in = (uint8_t *)malloc((size_t)ns);
    int64_t *buf = NULL, nslots = 0;
    int flag = 0, rc = (cnt && in) ? DKB_CAND_OK : DKB_CAND_ENOMEM;
    /* a rank failing before the all-reduce returns: the others' all-reduce fails */
    if (!rc && (cudaMemcpyAsync(cnt, d_cnt, sizeof *cnt * (size_t)ns, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
                cudaMemcpyAsync(in, d_in, (size_t)ns, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
                cudaMemcpyAsync(&flag, d_bad, sizeof flag, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
                cudaStreamSynchronize(stream) != cudaSuccess))
        rc = DKB_CAND_ECUDA;
    if (!rc) {
        for (int64_t k = 0; k < ns; k++) nslots += in[k] != 0;
        if (!(buf = (int64_t *)malloc(sizeof *buf * (size_t)(nslots + 1)))) rc = DKB_CAND_ENOMEM;
    }
    if (!rc) {
        for (int64_t k = 0, i = 0; k < ns; k++)
            if (in[k]) buf[i++] = (int64_t)cnt[k];
        buf[nslots] = flag != 0;
        rc = dkb_ranks_sum_i64(env, buf, nslots + 1);
    }
    if (!rc) {
        for (int64_t k = 0, i = 0; k < ns; k++)
            if (in[k]) cnt[k] = (unsigned long long)buf[i++];
        *bad = buf[nslots] != 0;
        if (cudaMemcpyAsync(d_cnt, cnt, sizeof *cnt * (size_t)ns, cudaMemcpyHostToDevice, stream) != cudaSuccess ||
            cudaStreamSynchronize(stream) != cudaSuccess)
            rc = DKB_CAND_ECUDA;
    }
    free(buf), free(cnt), free(in);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *lkey, *lsupp, *lcommit, *lreceipt, *okey, *ostatus, *skey, *sname, *snation, *nkey, *nname;
    const dkb_cand_param *pnation;
    dkb_cand_res_col *c_name, *c_wait;
    if (DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_suppkey:i32 l_commitdate:i32 l_receiptdate:i32", &lkey, &lsupp,
                      &lcommit, &lreceipt) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderstatus:dict", &okey, &ostatus) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_name:str s_nationkey:i32", &skey, &sname, &snation) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_PARAMS(params, "nation:str", &pnation) ||
        DKB_BIND_RES(res, "s_name:str numwait:int", &c_name, &c_wait))
        return DKB_CAND_EINVAL;
    res->nrows = 0;
    c_name->str_off[0] = 0;

    cudaStream_t stream = dkb_cand_stream(env);
    const int ncode = dkb_cand_dict_code(nname->dict, pnation->s);
    const int fcode = dkb_cand_dict_code(ostatus->dict, "F");
    const int64_t ns = skey->n, nl = lkey->n, no = okey->n, nn = nname->n;
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    int rc = 0, sms = 0, fast = 1;
    int64_t m = 0, nout = 0;
    uint8_t *d_in = NULL;
    int *d_bad = NULL;
    int64_t *d_bound = NULL, *h_rows = NULL, *d_rows = NULL, *t_off = NULL;
    char *t_bytes = NULL;
    unsigned long long *d_cnt = NULL, *h_cnt = NULL;
    unsigned *d_hist = NULL;
    q21_out *d_out = NULL, *h_out = NULL;
    wait_row *rows = NULL;
    void *d_block = NULL;
    /* the whole columns in one pass, or the loads of lineitem and orders */
    static const char *const COLS[] = {"l_orderkey", "l_suppkey",  "l_commitdate",
                                       "l_receiptdate", "o_orderkey", "o_orderstatus"};
    dkb_stream st;
    memset(&st, 0, sizeof st);

    if (ncode < 0 || fcode < 0 || nn == 0 || ns == 0) return 0;
    if (nkey->n != nn || sname->n != ns) {
        fprintf(stderr, "q21.full.cu: n_nationkey / s_name row counts differ from n_name / s_suppkey\n");
        return DKB_CAND_EINVAL;
    }
    h_out = (q21_out *)malloc(sizeof(q21_out));
    DKB_FAIL_IF(!h_out, DKB_CAND_ENOMEM, "q21.full.cu: out of host memory for the result block\n");
    DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_out, sizeof(q21_out), 0},
            {(void **)&d_cnt, sizeof(unsigned long long) * (size_t)ns, 0},
            {(void **)&d_hist, sizeof(unsigned) * HB, 0},
            {(void **)&d_in, (size_t)ns, DKB_NO_FILL},
            {(void **)&d_rows, sizeof(int64_t) * (size_t)ns, DKB_NO_FILL},
            {(void **)&d_bound, sizeof(int64_t) * (size_t)(nchunks + 1), DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    d_bad = &d_out->bad;
    /* 2. the nation's suppliers; 3. the chunks' line item ranges; 4. the late-supplier counts */
    supp_mark<<<(unsigned)((ns + 255) / 256), 256, 0, stream>>>(
        (const int32_t *)skey->data, (const int32_t *)snation->data, ns, (const uint8_t *)nname->data,
        (const int32_t *)nkey->data, nn, ncode, d_in, d_bad);
    DKB_CUDA_TRY("supp_mark launch", cudaGetLastError());
    if (no > 0 && nl > 0) {
        DKB_TRY(dkb_stream_begin_ex(&st, db, env, 6, COLS, DKB_STREAM_OVERLAP));
        while (dkb_stream_next(&st)) {
            const dkb_cand_vec *c = st.cols; /* c[0..3]: lineitem (c[0].n rows), c[4..5]: orders (c[4].n rows) */
            const int64_t pnl = c[0].n, pno = c[4].n, pch = (pno + OCHUNK - 1) / OCHUNK; /* pch <= nchunks */
            if (pno <= 0 || pnl <= 0) continue; /* no lines: no order of the load counts */
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>((const int32_t *)c[4].data, (const int32_t *)c[0].data, pnl,
                                                         pch, d_bound, stream));
            const int64_t grid = dkb_grid_cap((int64_t)sms * 32, pno, TPB);
            q21_orders<<<(unsigned)grid, TPB, 0, stream>>>(
                (const int32_t *)c[4].data, (const uint8_t *)c[5].data, pno, (const int32_t *)c[0].data,
                (const int32_t *)c[1].data, (const int32_t *)c[2].data, (const int32_t *)c[3].data, pnl, d_bound,
                (uint8_t)fcode, d_in, ns, d_cnt, d_bad);
            DKB_CUDA_TRY("q21_orders launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
    }
    if (env->nranks > 1) { /* the counts per nation supplier and the error flag, summed over the ranks */
        int any_bad = 0;
        DKB_TRY(ranks_merge(env, d_cnt, d_in, d_bad, ns, stream, &any_bad));
        DKB_FAIL_IF(any_bad, DKB_CAND_EINTERNAL,
                    "q21.full.cu: supplier keys not dense 1..N (s_suppkey or l_suppkey), on some rank\n");
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    {
        /* 5. the suppliers that can be in the top LIMIT (normally LIMIT plus ties), their names */
        count_hist<<<(unsigned)dkb_grid_cap((int64_t)sms * 4, ns, 256), 256, 0, stream>>>(d_cnt, ns, d_hist);
        DKB_CUDA_TRY("count_hist launch", cudaGetLastError());
        keep_top<<<(unsigned)dkb_grid_cap(sms, ns, HB), HB, 0, stream>>>(d_cnt, ns, d_hist, d_rows, d_out);
        DKB_CUDA_TRY("keep_top launch", cudaGetLastError());
        top_gather<<<OUT_ROWS, 32, 0, stream>>>(d_rows, d_cnt, (const int64_t *)sname->data, sname->bytes, d_out);
        DKB_CUDA_TRY("top_gather launch", cudaGetLastError());
        const dkb_host_copy back[] = {{h_out, d_out, sizeof(q21_out)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    DKB_FAIL_IF(h_out->bad, DKB_CAND_EINTERNAL, "q21.full.cu: supplier keys not dense 1..N (s_suppkey or l_suppkey)\n");
    m = (int64_t)h_out->m;
    if (m == 0) goto done;
    rows = (wait_row *)malloc(sizeof(wait_row) * (size_t)m);
    DKB_FAIL_IF(!rows, DKB_CAND_ENOMEM, "q21.full.cu: out of host memory for %lld result rows\n", (long long)m);
    if (m > OUT_ROWS) fast = 0;
    for (int64_t k = 0; k < m && fast; k++)
        if (h_out->len[k] < 0) fast = 0;
    if (fast) { /* normally: everything came back in the result block */
        for (int64_t k = 0; k < m; k++) {
            rows[k].count = (long long)h_out->cnt[k];
            rows[k].name = h_out->name[k];
            rows[k].len = h_out->len[k];
        }
    } else { /* many ties or long names: the kept rows, all counts, then the names exactly */
        h_rows = (int64_t *)malloc(sizeof(int64_t) * (size_t)m);
        h_cnt = (unsigned long long *)malloc(sizeof(unsigned long long) * (size_t)ns);
        DKB_FAIL_IF(!h_rows || !h_cnt, DKB_CAND_ENOMEM, "q21.full.cu: out of host memory for %lld supplier counts\n",
                    (long long)ns);
        const dkb_host_copy back[] = {{h_rows, d_rows, sizeof(int64_t) * (size_t)m},
                                      {h_cnt, d_cnt, sizeof(unsigned long long) * (size_t)ns}};
        DKB_CUDA_TRY("copy back counts", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_TRY(dkb_fetch_text(sname, d_rows, m, stream, &t_off, &t_bytes));
        for (int64_t k = 0; k < m; k++) {
            rows[k].count = (long long)h_cnt[h_rows[k]];
            rows[k].name = t_bytes + t_off[k];
            rows[k].len = t_off[k + 1] - t_off[k];
        }
    }
    qsort(rows, (size_t)m, sizeof(wait_row), by_count_then_name);
    nout = m < LIMIT ? m : LIMIT;
    DKB_FAIL_IF(nout > res->cap, DKB_CAND_ECAP, "q21.full.cu: %lld result rows over the cap %lld\n", (long long)nout,
                (long long)res->cap);
    for (int64_t r = 0; r < nout; r++) {
        DKB_FAIL_IF(dkb_put_str(c_name, r, rows[r].name, rows[r].len) != DKB_CAND_OK, DKB_CAND_ECAP,
                    "q21.full.cu: s_name over its byte cap\n");
        c_wait->i64[r] = rows[r].count;
        c_wait->is_null[r] = 0;
    }
    res->nrows = nout;
done:
    dkb_stream_end(&st); /* a load still held after a failure (after its kernels were enqueued) */
    dkb_dev_release(d_block, stream);
    free(h_out);
    free(h_cnt);
    free(h_rows);
    free(t_off);
    free(t_bytes);
    free(rows);
    return rc;
}
