/* q22.full.cu: expert CUDA full-mode candidate for TPC-H Q22 (Global Sales
 * Opportunity).
 *
 *   select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
 *   from (select substring(c_phone from 1 for 2) as cntrycode, c_acctbal from customer
 *         where substring(c_phone from 1 for 2) in (':code1', ..., ':code7')
 *           and c_acctbal > (select avg(c_acctbal) from customer
 *                            where c_acctbal > 0.00
 *                              and substring(c_phone from 1 for 2) in (':code1', ..., ':code7'))
 *           and not exists (select * from orders where o_custkey = c_custkey)) as custsale
 *   group by cntrycode order by cntrycode;
 *
 * Plan (all on env->stream):
 *  1. has_orders: NOT EXISTS as a bitmap over custkey - 1 (customer keys
 *     are dense 1..N, checked; 32-bit words). When the bitmap fits in a
 *     block's shared memory (up to ~1.8M customers on an H200: SF10's 1.5M
 *     take 188 KB), has_orders_smem runs one 1024-thread block per SM: each
 *     marks its share of o_custkey (16-byte loads) with shared-memory
 *     atomicOr, then ors its nonzero words into the global bitmap
 *     (coalesced). The first version stored one byte per order straight to
 *     a 1.5 MB map in L2 (15M scattered stores: 206 us at SF10). Larger
 *     customer tables use has_orders_global (one global atomicOr per order).
 *  2. cust_codes: one pass over customer: the phone's first two bytes give
 *     the country code 0..99, mapped through a 100-entry table (passed by
 *     value) to the index of a wanted code (at most 7) or -1, kept as one
 *     byte per customer; the positive balances of wanted codes are summed
 *     exactly (int64 per block, __int128 on the host) and counted.
 *  3. The host forms the average as the baseline does (long double quotient
 *     rounded once to double); no such balance: no row qualifies.
 *  4. cust_groups: per customer with a wanted code, a balance above the
 *     average (the balance / 100 as a double, as the baseline compares) and
 *     no order: count and sum into per-thread registers for the <= 7
 *     groups, warp and block reductions, per-block partials (no atomics);
 *     the host adds them in __int128 and emits codes in numeric order
 *     (the string order of two-digit codes).
 *
 * Under a memory budget (env->budget streams orders by partition) step 1
 * runs once per load of o_custkey (dkb_stream with DKB_STREAM_OVERLAP: the
 * next load's copy overlaps this one's kernel): each launch ors the load's
 * customers into the same bitmap, which is zeroed once; nothing else reads
 * orders, so the rest runs as without a budget. Without a budget the walk
 * is one pass over the whole column (the same launch as before).
 *
 * Bytes read (floor, SF10): o_custkey 4 B x 15M = 60 MB; customer
 * c_custkey 4, c_phone 8 (offsets) + 15 (bytes), c_acctbal 8 B x 1.5M =
 * 52 MB: about 0.11 GB, ~27 us at 4.2 TB/s (launches and two host round
 * trips dominate at this size).
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): orders is split
 * (customer whole on every rank) and a customer's orders lie on several
 * ranks, so after step 1 each rank copies its bitmap (and its bad-key
 * flag) back and they are gathered in rank order (dkb_ranks_gather, every
 * rank, also one with an empty share); rank 0 ors them, puts the merged
 * bitmap and flag back into d_has and d_bad and runs steps 2-4 on the
 * whole customer table as before; the other ranks return no rows
 * (dkb_ranks_writes). On one rank nothing changes. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_gather, dkb_ranks_gather_free, dkb_ranks_writes
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of orders (customer whole) */

enum { TPB = 256, NWARP = TPB / 32, NCODE = 7, HAS_TPB = 1024 };

typedef struct {
    int8_t group[100]; /* by two-digit country code: wanted group 0..NCODE-1, or -1 */
} code_map;

/* Bit c of has (32-bit words over custkey - 1; customer keys dense 1..N):
 * the customer has an order. */
__device__ __forceinline__ uint32_t has_bit(const uint32_t *__restrict__ has, int64_t c) {
    return (has[c >> 5] >> (c & 31)) & 1u;
}

/* Mark customer key k - 1 in the bitmap bits (shared or global memory);
 * a key outside 1..nc sets oops. */
__device__ __forceinline__ void mark(uint32_t *bits, int32_t k, int64_t nc, int &oops) {
    const uint32_t c = (uint32_t)k - 1u;
    if ((uint64_t)c >= (uint64_t)nc) {
        oops = 1;
        return;
    }
    atomicOr(bits + (c >> 5), 1u << (c & 31));
}

/* has (preset to 0, nwords words) |= the customers of orders rows; the
 * bitmap is built in the block's dynamic shared memory (nwords words fit)
 * from the block's share of o_custkey (the first 4 * n4 keys 16 bytes at a
 * time, two loads in flight, the rest one by one), then or-ed into has word
 * by word (coalesced, zero words skipped): the 15M random marks of SF10
 * stay in shared memory instead of going to L2 one by one. A key outside
 * 1..nc sets *bad. */
__global__ void __launch_bounds__(HAS_TPB) has_orders_smem(const int32_t *__restrict__ ocust, int64_t no, int64_t n4,
                                                           int64_t nc, int64_t nwords, uint32_t *__restrict__ has,
                                                           int *__restrict__ bad) {
    extern __shared__ uint32_t bits_s[];
    for (int64_t k = threadIdx.x; k < nwords; k += HAS_TPB) bits_s[k] = 0;
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * HAS_TPB;
    int oops = 0;
    int64_t v = (int64_t)blockIdx.x * HAS_TPB + threadIdx.x;
    for (; v + stride < n4; v += 2 * stride) {
        const int4 a = __ldg((const int4 *)ocust + v), b = __ldg((const int4 *)ocust + v + stride);
        mark(bits_s, a.x, nc, oops), mark(bits_s, a.y, nc, oops), mark(bits_s, a.z, nc, oops);
        mark(bits_s, a.w, nc, oops), mark(bits_s, b.x, nc, oops), mark(bits_s, b.y, nc, oops);
        mark(bits_s, b.z, nc, oops), mark(bits_s, b.w, nc, oops);
    }
    if (v < n4) {
        const int4 a = __ldg((const int4 *)ocust + v);
        mark(bits_s, a.x, nc, oops), mark(bits_s, a.y, nc, oops), mark(bits_s, a.z, nc, oops);
        mark(bits_s, a.w, nc, oops);
    }
    for (int64_t i = 4 * n4 + (int64_t)blockIdx.x * HAS_TPB + threadIdx.x; i < no; i += stride)
        mark(bits_s, __ldg(ocust + i), nc, oops);
    if (oops) *bad = 1;
    __syncthreads();
    for (int64_t k = threadIdx.x; k < nwords; k += HAS_TPB) {
        const uint32_t w = bits_s[k];
        if (w) atomicOr(has + k, w);
    }
}

/* The same straight into the global bitmap (one atomic per order), for a
 * customer count whose bitmap does not fit in a block's shared memory. */
__global__ void has_orders_global(const int32_t *__restrict__ ocust, int64_t no, int64_t n4, int64_t nc,
                                  uint32_t *__restrict__ has, int *__restrict__ bad) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int oops = 0;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n4; v += stride) {
        const int4 a = __ldg((const int4 *)ocust + v);
        mark(has, a.x, nc, oops), mark(has, a.y, nc, oops), mark(has, a.z, nc, oops), mark(has, a.w, nc, oops);
    }
    for (int64_t i = 4 * n4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < no; i += stride)
        mark(has, __ldg(ocust + i), nc, oops);
    if (oops) *bad = 1;
}

/* Block sums of a and b into out[2 * blockIdx.x + {0, 1}]. */
__device__ static void block_sum2(int64_t a, int64_t b, int64_t *__restrict__ out) {
    for (int off = 16; off > 0; off >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, off);
        b += __shfl_down_sync(0xffffffffu, b, off);
    }
    __shared__ int64_t w[2][NWARP];
    if ((threadIdx.x & 31) == 0) w[0][threadIdx.x >> 5] = a, w[1][threadIdx.x >> 5] = b;
    __syncthreads();
    if (threadIdx.x < 2) {
        int64_t s = 0;
        for (int k = 0; k < NWARP; k++) s += w[threadIdx.x][k];
        out[2 * blockIdx.x + threadIdx.x] = s;
    }
}

/* grp[c] = the customer's wanted group or -1; partial: (sum, count) of the
 * positive balances of wanted groups per block. A key that is not its
 * row + 1 sets *bad. */
__global__ void __launch_bounds__(TPB) cust_codes(const int32_t *__restrict__ ckey, const int64_t *__restrict__ off,
                                                  const char *__restrict__ phone, const int64_t *__restrict__ bal,
                                                  int64_t nc, code_map map, int8_t *__restrict__ grp,
                                                  int64_t *__restrict__ partial, int *__restrict__ bad) {
    __shared__ int8_t map_s[100];
    for (int k = threadIdx.x; k < 100; k += TPB) map_s[k] = map.group[k];
    __syncthreads();
    int64_t sum = 0, cnt = 0;
    int oops = 0;
    for (int64_t c = (int64_t)blockIdx.x * TPB + threadIdx.x; c < nc; c += (int64_t)gridDim.x * TPB) {
        if (__ldg(ckey + c) != c + 1) oops = 1;
        const int64_t a = __ldg(off + c), len = __ldg(off + c + 1) - a;
        int g = -1;
        if (len >= 2) {
            const char d0 = phone[a], d1 = phone[a + 1];
            if (d0 >= '0' && d0 <= '9' && d1 >= '0' && d1 <= '9') g = map_s[(d0 - '0') * 10 + (d1 - '0')];
        }
        grp[c] = (int8_t)g;
        const int64_t b = __ldg(bal + c);
        if (g >= 0 && b > 0) sum += b, cnt++;
    }
    if (oops) *bad = 1;
    block_sum2(sum, cnt, partial);
}

/* Per block and group: count and balance sum of the customers of a wanted
 * group above the average without orders; partial[(2 * NCODE) * block +
 * 2 * group + {0: count, 1: sum}]. */
__global__ void __launch_bounds__(TPB) cust_groups(const int8_t *__restrict__ grp, const int64_t *__restrict__ bal,
                                                   const uint32_t *__restrict__ has, int64_t nc, double avg,
                                                   int64_t *__restrict__ partial) {
    int64_t num[NCODE], sum[NCODE];
#pragma unroll
    for (int k = 0; k < NCODE; k++) num[k] = 0, sum[k] = 0;
    for (int64_t c = (int64_t)blockIdx.x * TPB + threadIdx.x; c < nc; c += (int64_t)gridDim.x * TPB) {
        const int g = grp[c];
        if (g < 0) continue;
        const int64_t b = __ldg(bal + c);
        if (!((double)b / (double)100 > avg) || has_bit(has, c)) continue;
#pragma unroll
        for (int k = 0; k < NCODE; k++) {
            num[k] += g == k;
            sum[k] += g == k ? b : 0;
        }
    }
    __shared__ int64_t w[2 * NCODE][NWARP];
#pragma unroll
    for (int k = 0; k < NCODE; k++) {
        for (int o = 16; o > 0; o >>= 1) {
            num[k] += __shfl_down_sync(0xffffffffu, num[k], o);
            sum[k] += __shfl_down_sync(0xffffffffu, sum[k], o);
        }
        if ((threadIdx.x & 31) == 0) w[2 * k][threadIdx.x >> 5] = num[k], w[2 * k + 1][threadIdx.x >> 5] = sum[k];
    }
    __syncthreads();
    if (threadIdx.x < 2 * NCODE) {
        int64_t s = 0;
        for (int k = 0; k < NWARP; k++) s += w[threadIdx.x][k];
        partial[(int64_t)(2 * NCODE) * blockIdx.x + threadIdx.x] = s;
    }
}

/* C's atoi (leading blanks, a sign, digits), kept small: the baseline parses the codes so. */
static int64_t parse_int(const char *s) {
    while (*s == ' ' || (*s >= '\t' && *s <= '\r')) s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9' && v < 1000000000) v = v * 10 + (*s++ - '0');
    return neg ? -v : v;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *ckey, *cphone, *cbal, *ocust;
    const dkb_cand_param *pc[NCODE];
    dkb_cand_res_col *c_code, *c_num, *c_bal;
    if (DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_phone:str c_acctbal:dec2", &ckey, &cphone, &cbal) ||
        DKB_BIND_COLS(db, "orders", "o_custkey:i32", &ocust) ||
        DKB_BIND_RES(res, "cntrycode:str numcust:int totacctbal:dec2", &c_code, &c_num, &c_bal) ||
        DKB_BIND_PARAMS(params, "code1:str code2:str code3:str code4:str code5:str code6:str code7:str", &pc[0], &pc[1],
                        &pc[2], &pc[3], &pc[4], &pc[5], &pc[6]))
        return DKB_CAND_EINVAL;
    res->nrows = 0;
    c_code->str_off[0] = 0;

    /* the wanted codes, each distinct one a group (numbered in code order) */
    uint8_t want[100] = {0};
    for (int k = 0; k < NCODE; k++) {
        const int64_t v = parse_int(pc[k]->s);
        if (v >= 0 && v < 100) want[v] = 1;
    }
    code_map map;
    int code_of_group[NCODE], ngroups = 0;
    for (int v = 0; v < 100; v++) {
        map.group[v] = -1;
        if (want[v]) code_of_group[ngroups] = v, map.group[v] = (int8_t)ngroups++;
    }
    const int64_t nc = ckey->n, no = ocust->n;
    if (nc == 0 || ngroups == 0) return 0;

    cudaStream_t stream = dkb_cand_stream(env);
    int rc = 0, dev = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, *h_part = NULL, *d_part = NULL, *d_part2 = NULL;
    uint32_t *d_has = NULL;
    const int64_t nwords = (nc + 31) / 32;
    int smem_max = 0;
    int8_t *d_grp = NULL;
    int *d_bad = NULL;
    void *d_block = NULL;
    __int128 pos_sum = 0, gsum[NCODE] = {0};
    int64_t pos_cnt = 0, gnum[NCODE] = {0}, r = 0;
    double avg = 0;
    static const char *const OCOLS[] = {"o_custkey"};
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */
    DKB_CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
    DKB_CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    grid = dkb_grid_cap((int64_t)sms * 4, nc, TPB);
    h_part = (int64_t *)malloc(sizeof(int64_t) * 2 * NCODE * (size_t)grid);
    DKB_FAIL_IF(!h_part, DKB_CAND_ENOMEM, "q22.full.cu: out of host memory for %lld partials\n", (long long)grid);
    DKB_CUDA_TRY("cudaDeviceGetAttribute smem",
                 cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_has, sizeof(uint32_t) * (size_t)nwords, 0},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_grp, (size_t)nc, DKB_NO_FILL},
            {(void **)&d_part, sizeof(int64_t) * 2 * grid, DKB_NO_FILL},
            {(void **)&d_part2, sizeof(int64_t) * 2 * NCODE * grid, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    if (no > 0) {
        /* o_custkey: the whole column in one pass, or under a budget load by load
         * (each launch ors its rows' customers into d_has) */
        const size_t smem = sizeof(uint32_t) * (size_t)nwords;
        const int use_smem = smem <= (size_t)smem_max;
        if (use_smem)
            DKB_CUDA_TRY("cudaFuncSetAttribute has_orders_smem",
                         cudaFuncSetAttribute(has_orders_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        for (dkb_stream_begin_ex(&st, db, env, 1, OCOLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const int32_t *oc = (const int32_t *)st.cols[0].data;
            const int64_t nol = st.cols[0].n;
            if (nol <= 0) continue;
            const int64_t n4 = (uintptr_t)oc % 16 == 0 ? nol / 4 : 0;
            if (use_smem) {
                has_orders_smem<<<(unsigned)sms, HAS_TPB, smem, stream>>>(oc, nol, n4, nc, nwords, d_has, d_bad);
                DKB_CUDA_TRY("has_orders_smem launch", cudaGetLastError());
            } else {
                has_orders_global<<<(unsigned)(sms * 8), 256, 0, stream>>>(oc, nol, n4, nc, d_has, d_bad);
                DKB_CUDA_TRY("has_orders_global launch", cudaGetLastError());
            }
        }
        rc = dkb_stream_end(&st);
        if (rc) goto done;
    }
    if (env->nranks > 1) {
        /* across ranks: a customer's orders lie on several ranks, so every
         * rank's bitmap (nwords words, then its bad-key flag) is gathered in
         * rank order (every rank, an empty share too: its bitmap is zeros);
         * rank 0 ors them into d_has and d_bad and goes on below, the
         * others return no rows */
        uint32_t *mine = (uint32_t *)malloc(sizeof(uint32_t) * ((size_t)nwords + 1));
        void *every = NULL;
        int64_t ne = 0;
        int mrc = mine ? DKB_CAND_OK : DKB_CAND_ENOMEM;
        if (!mrc) {
            const dkb_host_copy back[] = {{mine, d_has, sizeof(uint32_t) * (size_t)nwords},
                                          {mine + nwords, d_bad, sizeof(int)}};
            if (dkb_copy_back(back, DKB_COUNT(back), stream) != cudaSuccess) mrc = DKB_CAND_ECUDA;
        }
        if (!mrc) mrc = dkb_ranks_gather(env, mine, nwords + 1, sizeof(uint32_t), &every, &ne);
        if (!mrc && dkb_ranks_writes(env, res)) {
            const uint32_t *all = (const uint32_t *)every;
            memset(mine, 0, sizeof(uint32_t) * ((size_t)nwords + 1));
            for (int64_t b = 0; b + nwords + 1 <= ne; b += nwords + 1) {
                for (int64_t k = 0; k < nwords; k++) mine[k] |= all[b + k];
                mine[nwords] |= all[b + nwords] != 0;
            }
            if (cudaMemcpyAsync(d_has, mine, sizeof(uint32_t) * (size_t)nwords, cudaMemcpyHostToDevice, stream) !=
                    cudaSuccess ||
                cudaMemcpyAsync(d_bad, mine + nwords, sizeof(int), cudaMemcpyHostToDevice, stream) != cudaSuccess ||
                cudaStreamSynchronize(stream) != cudaSuccess)
                mrc = DKB_CAND_ECUDA;
        } else if (!mrc) { /* not rank 0: res->nrows = 0, nothing more to do */
            dkb_ranks_gather_free(every, mine);
            free(mine);
            goto done;
        }
        dkb_ranks_gather_free(every, mine);
        free(mine);
        DKB_FAIL_IF(mrc, mrc, "q22.full.cu: merging the ranks' order bitmaps failed (%d)\n", mrc);
    }
    cust_codes<<<(unsigned)grid, TPB, 0, stream>>>((const int32_t *)ckey->data, (const int64_t *)cphone->data,
                                                   cphone->bytes, (const int64_t *)cbal->data, nc, map, d_grp, d_part,
                                                   d_bad);
    DKB_CUDA_TRY("cust_codes launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{h_part, d_part, sizeof(int64_t) * 2 * grid}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back partials", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q22.full.cu: an o_custkey outside 1..N or a c_custkey not its row + 1\n");
    for (int64_t b = 0; b < grid; b++) pos_sum += h_part[2 * b], pos_cnt += h_part[2 * b + 1];
    if (pos_cnt == 0) goto done; /* avg of no rows is NULL: nothing compares true */
    avg = (double)((long double)pos_sum / ((long double)pos_cnt * (long double)100));
    cust_groups<<<(unsigned)grid, TPB, 0, stream>>>(d_grp, (const int64_t *)cbal->data, d_has, nc, avg, d_part2);
    DKB_CUDA_TRY("cust_groups launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{h_part, d_part2, sizeof(int64_t) * 2 * NCODE * grid}};
        DKB_CUDA_TRY("copy back group partials", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int64_t b = 0; b < grid; b++)
        for (int k = 0; k < NCODE; k++)
            gnum[k] += h_part[2 * NCODE * b + 2 * k], gsum[k] += h_part[2 * NCODE * b + 2 * k + 1];
    for (int k = 0; k < ngroups; k++) {
        if (!gnum[k]) continue;
        const int v = code_of_group[k];
        const char text[2] = {(char)('0' + v / 10), (char)('0' + v % 10)};
        DKB_FAIL_IF(r >= res->cap || dkb_put_str(c_code, r, text, 2) != DKB_CAND_OK, DKB_CAND_ECAP,
                    "q22.full.cu: result over its row or byte cap\n");
        c_num->i64[r] = gnum[k]; /* is_null starts zeroed */
        dkb_put_dec(c_bal, r, gsum[k], 2);
        r++;
    }
    res->nrows = r;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    free(h_part);
    return rc;
}
