/* q11.full.cu: expert CUDA full-mode candidate for TPC-H Q11 (Important
 * Stock Identification).
 *
 *   select ps_partkey, sum(ps_supplycost * ps_availqty) as value
 *   from partsupp, supplier, nation
 *   where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':nation'
 *   group by ps_partkey
 *   having sum(ps_supplycost * ps_availqty) > (
 *       select sum(ps_supplycost * ps_availqty) * :fraction
 *       from partsupp, supplier, nation
 *       where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':nation')
 *   order by value desc;
 *
 * Plan (all on env->stream):
 *  1. Host: nation (25 rows) copied back; the name's dictionary code gives
 *     the nation key. supp_in: a byte per dense suppkey, 1 for the nation's
 *     suppliers (a semi-join).
 *  2. ps_scan: one pass over partsupp (grid-stride); rows of those
 *     suppliers (1 in 25) read partkey, cost and quantity (late
 *     materialization) and add cost * qty to their part's slot of an int64
 *     array over the dense partkeys (one atomicAdd per row, ~4 rows per
 *     part in all: no hot keys) and mark the part; each block adds its
 *     rows' sum to the subquery's total (integers: exact, deterministic).
 *  3. The total comes back; as values are whole hundredths, value > total *
 *     fraction exactly when value > floor(total * fraction) at scale 2,
 *     computed in __int128 on the host (as the CPU expert).
 *  4. part_select: the marked parts above the bound are appended (partkey,
 *     value) to a list with one atomicAdd per warp; the list (normally a
 *     few thousand rows) comes back and is sorted on the host by value
 *     desc, partkey asc (a total order: the result does not depend on the
 *     append order).
 *
 * Bytes read (floor, SF10): ps_suppkey 4 B per row (8M: 32 MB) + ps_partkey,
 * ps_availqty 4 + 4 and ps_supplycost 8 B in the selected rows' sectors
 * (1 in 25 rows: most sectors of the 4-byte columns, ~1/3 of the cost's);
 * s_suppkey, s_nationkey (0.8 MB); 16 MB of part sums. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

enum { TPB = 256, NWARP = TPB / 32, MAXNAT = 256 };
#define FULL_MASK 0xffffffffu

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q11.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = 10;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

typedef struct {
    long long value; /* scale 2 + scale 0 = scale 2 */
    long long key;
} entry;

/* in[key] = 1 for the suppliers of nation nk (in preset to 0); a key
 * outside 0..maxkey sets *bad. */
__global__ void supp_in(const int32_t *__restrict__ skey, const int32_t *__restrict__ snat, int64_t ns,
                        int64_t maxkey, int32_t nk, uint8_t *__restrict__ in, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ns; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = skey[i];
        if (k < 0 || k > maxkey) {
            *bad = 1;
            continue;
        }
        if (snat[i] == nk) in[k] = 1;
    }
}

/* sum[partkey] += cost * qty and has[partkey] = 1 for rows of marked
 * suppliers; *total += all those products. */
__global__ void __launch_bounds__(TPB) ps_scan(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                                               const int32_t *__restrict__ psqty, const int64_t *__restrict__ pscost,
                                               int64_t nps, const uint8_t *__restrict__ in, int64_t maxs,
                                               int64_t maxp, unsigned long long *__restrict__ sum,
                                               uint8_t *__restrict__ has, unsigned long long *__restrict__ total,
                                               int *__restrict__ bad) {
    __shared__ unsigned long long w[NWARP];
    unsigned long long t = 0;
    int oops = 0;
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < nps; i += (int64_t)gridDim.x * TPB) {
        const int64_t s = __ldg(pssupp + i);
        if (s < 0 || s > maxs) {
            oops = 1;
            continue;
        }
        if (!__ldg(in + s)) continue;
        const int64_t p = __ldg(pspart + i);
        if (p < 0 || p > maxp) {
            oops = 1;
            continue;
        }
        const int64_t v = __ldg(pscost + i) * (int64_t)__ldg(psqty + i);
        atomicAdd(&sum[p], (unsigned long long)v);
        has[p] = 1;
        t += (unsigned long long)v;
    }
    if (oops) *bad = 1;
    for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(FULL_MASK, t, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) w[warp] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long s = 0;
        for (int k = 0; k < NWARP; k++) s += w[k];
        if (s) atomicAdd(total, s);
    }
}

/* Appends (key, sum[key]) for every marked key 0..maxp with sum > bound to
 * list (capacity maxp + 1); *count: entries appended. */
__global__ void __launch_bounds__(TPB) part_select(const unsigned long long *__restrict__ sum,
                                                   const uint8_t *__restrict__ has, int64_t maxp, long long bound,
                                                   entry *__restrict__ list, unsigned int *__restrict__ count) {
    const int lane = threadIdx.x & 31;
    const int64_t stride = (int64_t)gridDim.x * TPB;
    /* every lane of a warp runs the same rounds (the ballot needs all lanes) */
    for (int64_t base = (int64_t)blockIdx.x * TPB + (threadIdx.x & ~31); base <= maxp; base += stride) {
        const int64_t k = base + lane;
        const long long v = k <= maxp && has[k] ? (long long)sum[k] : 0;
        const bool take = k <= maxp && has[k] && v > bound;
        const unsigned m = __ballot_sync(FULL_MASK, take);
        if (!m) continue;
        unsigned at = 0;
        if (lane == 0) at = atomicAdd(count, (unsigned)__popc(m));
        at = __shfl_sync(FULL_MASK, at, 0);
        if (take) {
            entry e;
            e.value = v;
            e.key = k;
            list[at + __popc(m & ((1u << lane) - 1u))] = e;
        }
    }
}

static int by_value_desc(const void *a, const void *b) {
    const entry *x = (const entry *)a, *y = (const entry *)b;
    if (x->value != y->value) return x->value > y->value ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* n elements of a device column into host memory h (synchronously). */
static cudaError_t fetch(void *h, const dkb_cand_vec *v, size_t elem, cudaStream_t stream) {
    if (v->n <= 0) return cudaSuccess;
    cudaError_t e = cudaMemcpyAsync(h, v->data, elem * (size_t)v->n, cudaMemcpyDeviceToHost, stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *nkey = dkb_cand_column(db, "nation", "n_nationkey");
    const dkb_cand_vec *nname = dkb_cand_column(db, "nation", "n_name");
    const dkb_cand_vec *pkey = dkb_cand_column(db, "part", "p_partkey");
    const dkb_cand_vec *skey = dkb_cand_column(db, "supplier", "s_suppkey");
    const dkb_cand_vec *snat = dkb_cand_column(db, "supplier", "s_nationkey");
    const dkb_cand_vec *pspart = dkb_cand_column(db, "partsupp", "ps_partkey");
    const dkb_cand_vec *pssupp = dkb_cand_column(db, "partsupp", "ps_suppkey");
    const dkb_cand_vec *psqty = dkb_cand_column(db, "partsupp", "ps_availqty");
    const dkb_cand_vec *pscost = dkb_cand_column(db, "partsupp", "ps_supplycost");
    const dkb_cand_param *nation = dkb_cand_param_find(params, "nation");
    const dkb_cand_param *fraction = dkb_cand_param_find(params, "fraction");
    if (!nkey || !nname || !pkey || !skey || !snat || !pspart || !pssupp || !psqty || !pscost || !nation ||
        !nation->s || !fraction)
        return 1;
    if (nkey->type != DKB_CAND_I32 || nname->type != DKB_CAND_U8 || !nname->dict || skey->type != DKB_CAND_I32 ||
        snat->type != DKB_CAND_I32 || pspart->type != DKB_CAND_I32 || pssupp->type != DKB_CAND_I32 ||
        psqty->type != DKB_CAND_I32 || pscost->type != DKB_CAND_I64 || nkey->n > MAXNAT || res->ncols != 2 ||
        res->cols[0].type != DKB_CAND_RES_INT || res->cols[1].type != DKB_CAND_RES_DECIMAL ||
        res->cols[1].scale < pscost->scale || fraction->scale < 0 || fraction->scale > 30 || fraction->i < 0)
        return 2;

    cudaStream_t stream = dkb_cand_stream(env);
    const int code = dkb_cand_dict_code(nname->dict, nation->s);
    const int64_t ns = skey->n, nps = pspart->n, maxs = ns, maxp = pkey->n; /* dense keys 1..N */
    int rc = 0, dev = 0, sms = 0, h_bad = 0;
    int64_t nk = -2, n = 0; /* -2: name absent */
    int32_t h_nk[MAXNAT];
    uint8_t h_nn[MAXNAT];
    uint8_t *d_in = NULL, *d_has = NULL;
    unsigned long long *d_sum = NULL, *d_total = NULL, h_total = 0;
    unsigned int *d_count = NULL, h_count = 0;
    entry *d_list = NULL, *h_list = NULL;
    int *d_bad = NULL;
    dkb_cand_res_col *c_key = &res->cols[0], *c_val = &res->cols[1];

    CUDA_TRY("fetch nation keys", fetch(h_nk, nkey, sizeof(int32_t), stream));
    CUDA_TRY("fetch nation names", fetch(h_nn, nname, sizeof(uint8_t), stream));
    for (int64_t i = 0; i < nkey->n; i++)
        if (code >= 0 && h_nn[i] == code) nk = h_nk[i];
    if (nk >= 0 && ns > 0 && nps > 0 && maxp > 0) {
        CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
        CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        CUDA_TRY("cudaMallocAsync supplier marks", cudaMallocAsync((void **)&d_in, (size_t)maxs + 1, stream));
        CUDA_TRY("cudaMallocAsync part marks", cudaMallocAsync((void **)&d_has, (size_t)maxp + 1, stream));
        CUDA_TRY("cudaMallocAsync part sums",
                 cudaMallocAsync((void **)&d_sum, sizeof(unsigned long long) * (size_t)(maxp + 1), stream));
        CUDA_TRY("cudaMallocAsync total", cudaMallocAsync((void **)&d_total, sizeof(unsigned long long), stream));
        CUDA_TRY("cudaMallocAsync count", cudaMallocAsync((void **)&d_count, sizeof(unsigned int), stream));
        CUDA_TRY("cudaMallocAsync list", cudaMallocAsync((void **)&d_list, sizeof(entry) * (size_t)(maxp + 1), stream));
        CUDA_TRY("cudaMallocAsync flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
        CUDA_TRY("cudaMemsetAsync supplier marks", cudaMemsetAsync(d_in, 0, (size_t)maxs + 1, stream));
        CUDA_TRY("cudaMemsetAsync part marks", cudaMemsetAsync(d_has, 0, (size_t)maxp + 1, stream));
        CUDA_TRY("cudaMemsetAsync part sums",
                 cudaMemsetAsync(d_sum, 0, sizeof(unsigned long long) * (size_t)(maxp + 1), stream));
        CUDA_TRY("cudaMemsetAsync total", cudaMemsetAsync(d_total, 0, sizeof(unsigned long long), stream));
        CUDA_TRY("cudaMemsetAsync count", cudaMemsetAsync(d_count, 0, sizeof(unsigned int), stream));
        CUDA_TRY("cudaMemsetAsync flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
        supp_in<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)skey->data, (const int32_t *)snat->data, ns,
                                                         maxs, (int32_t)nk, d_in, d_bad);
        CUDA_TRY("supp_in launch", cudaGetLastError());
        ps_scan<<<(unsigned)(sms * 8), TPB, 0, stream>>>((const int32_t *)pspart->data,
                                                         (const int32_t *)pssupp->data, (const int32_t *)psqty->data,
                                                         (const int64_t *)pscost->data, nps, d_in, maxs, maxp, d_sum,
                                                         d_has, d_total, d_bad);
        CUDA_TRY("ps_scan launch", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync total", cudaMemcpyAsync(&h_total, d_total, sizeof h_total, cudaMemcpyDeviceToHost,
                                                          stream));
        CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaStreamSynchronize total", cudaStreamSynchronize(stream));
        if (h_bad) {
            fprintf(stderr, "q11.full.cu: a supplier or part key outside 1..N\n");
            rc = 5;
            goto done;
        }
        /* bound = floor(total * fraction), at the values' scale */
        __int128 unit = 1;
        for (int i = 0; i < fraction->scale; i++) unit *= 10;
        __int128 bound = (__int128)(int64_t)h_total * fraction->i / unit;
        if (bound > INT64_MAX) bound = INT64_MAX;
        part_select<<<(unsigned)(sms * 4), TPB, 0, stream>>>(d_sum, d_has, maxp, (long long)bound, d_list, d_count);
        CUDA_TRY("part_select launch", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync count", cudaMemcpyAsync(&h_count, d_count, sizeof h_count, cudaMemcpyDeviceToHost,
                                                          stream));
        CUDA_TRY("cudaStreamSynchronize count", cudaStreamSynchronize(stream));
        n = h_count;
        if (n > res->cap) {
            fprintf(stderr, "q11.full.cu: %lld rows over the result's capacity\n", (long long)n);
            rc = 4;
            goto done;
        }
        if (n > 0) {
            h_list = (entry *)malloc(sizeof(entry) * (size_t)n);
            if (!h_list) {
                fprintf(stderr, "q11.full.cu: out of host memory for %lld rows\n", (long long)n);
                rc = 3;
                goto done;
            }
            CUDA_TRY("cudaMemcpyAsync list", cudaMemcpyAsync(h_list, d_list, sizeof(entry) * (size_t)n,
                                                             cudaMemcpyDeviceToHost, stream));
            CUDA_TRY("cudaStreamSynchronize list", cudaStreamSynchronize(stream));
            qsort(h_list, (size_t)n, sizeof(entry), by_value_desc);
        }
    }
    for (int64_t r = 0; r < n; r++) {
        __int128 v = h_list[r].value;
        for (int s = pscost->scale; s < c_val->scale; s++) v *= 10;
        c_key->i64[r] = h_list[r].key;
        c_val->dec[r] = v;
        c_key->is_null[r] = c_val->is_null[r] = 0;
    }
    res->nrows = n;
done:
    if (d_in) cudaFreeAsync(d_in, stream);
    if (d_has) cudaFreeAsync(d_has, stream);
    if (d_sum) cudaFreeAsync(d_sum, stream);
    if (d_total) cudaFreeAsync(d_total, stream);
    if (d_count) cudaFreeAsync(d_count, stream);
    if (d_list) cudaFreeAsync(d_list, stream);
    if (d_bad) cudaFreeAsync(d_bad, stream);
    cudaStreamSynchronize(stream);
    free(h_list);
    return rc;
}
