/* returnflag_qty.full.cu: an honest full-mode CUDA candidate for the SQL
 * task tests/sql_tasks/returnflag_qty.sql (`dkb eval --sql FILE --backend
 * cuda`):
 *
 *   SELECT l_returnflag, count(*) AS n, sum(l_quantity) AS qty
 *   FROM lineitem WHERE l_shipdate <= DATE '1998-09-02'
 *   GROUP BY l_returnflag ORDER BY l_returnflag;
 *
 * The columns are device memory (resident, shared by the harness). One
 * kernel on env's stream filters and groups by the flag's dictionary code
 * (codes are in string order: the dictionary is sorted): each block adds
 * into shared-memory counters per code, then into 2 x codes device
 * counters; those few numbers come back and the groups that have rows are
 * written, in code order, into the host result (found by name, as the
 * harness declared it from the translated program). The sums are exact
 * int64 (added modulo 2^64; l_quantity's sum stays far below 2^63); a
 * code outside the dictionary is counted and reported as
 * DKB_CAND_EINTERNAL. The C candidate tests/sql_tasks/honest/
 * returnflag_qty.full.c computes the same on the CPU. */
#include "dkb/candidate.h"

enum { TPB = 256, MAX_CODES = 256, MAX_BLOCKS = 1024 };

/* acc[c]: rows of code c, acc[nd + c]: their l_quantity sum, acc[2 nd]:
 * rows whose code is not below nd. */
__global__ void __launch_bounds__(TPB) flag_sums(const uint8_t *__restrict__ flag, const int64_t *__restrict__ qty,
                                                 const int32_t *__restrict__ ship, int64_t n, int32_t last, int nd,
                                                 unsigned long long *__restrict__ acc) {
    __shared__ unsigned long long cnt[MAX_CODES], sum[MAX_CODES];
    for (int c = threadIdx.x; c < nd; c += TPB) cnt[c] = sum[c] = 0;
    __syncthreads();
    unsigned long long bad = 0;
    for (int64_t i = blockIdx.x * (int64_t)TPB + threadIdx.x; i < n; i += (int64_t)gridDim.x * TPB) {
        if (ship[i] > last) continue;
        const int c = flag[i];
        if (c >= nd) {
            bad++;
            continue;
        }
        atomicAdd(&cnt[c], 1ull);
        atomicAdd(&sum[c], (unsigned long long)qty[i]);
    }
    if (bad) atomicAdd(&acc[2 * nd], bad);
    __syncthreads();
    for (int c = threadIdx.x; c < nd; c += TPB)
        if (cnt[c]) {
            atomicAdd(&acc[c], cnt[c]);
            atomicAdd(&acc[nd + c], sum[c]);
        }
}

static dkb_cand_res_col *column(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)p;
    const dkb_cand_vec *flag = dkb_cand_column(db, "lineitem", "l_returnflag");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    dkb_cand_res_col *cf = column(res, "l_returnflag", DKB_CAND_RES_STRING);
    dkb_cand_res_col *cn = column(res, "n", DKB_CAND_RES_INT);
    dkb_cand_res_col *cq = column(res, "qty", DKB_CAND_RES_DECIMAL);
    if (!flag || !qty || !ship || !cf || !cn || !cq || flag->type != DKB_CAND_U8 || !flag->dict ||
        qty->type != DKB_CAND_I64 || ship->type != DKB_CAND_I32 || flag->dict->size > MAX_CODES || cq->scale < 2)
        return DKB_CAND_EINVAL;
    /* 1998-09-02 as days since 1970-01-01 */
    const int32_t last = 10471;
    const int nd = flag->dict->size;
    const int64_t n = flag->n;

    cudaStream_t st = dkb_cand_stream(env);
    unsigned long long host[2 * MAX_CODES + 1], *acc = NULL;
    const size_t bytes = (size_t)(2 * nd + 1) * sizeof host[0];
    if (cudaMallocAsync((void **)&acc, bytes, st) != cudaSuccess) return DKB_CAND_ENOMEM;
    cudaMemsetAsync(acc, 0, bytes, st);
    if (n > 0) {
        const int64_t want = (n + TPB - 1) / TPB;
        const int blocks = (int)(want < MAX_BLOCKS ? want : MAX_BLOCKS);
        flag_sums<<<blocks, TPB, 0, st>>>((const uint8_t *)flag->data, (const int64_t *)qty->data,
                                          (const int32_t *)ship->data, n, last, nd, acc);
    }
    cudaMemcpyAsync(host, acc, bytes, cudaMemcpyDeviceToHost, st);
    cudaFreeAsync(acc, st);
    if (cudaStreamSynchronize(st) != cudaSuccess || cudaGetLastError() != cudaSuccess) return DKB_CAND_ECUDA;
    if (host[2 * nd]) return DKB_CAND_EINTERNAL;

    /* the result table is host memory: every reported cell written */
    int64_t rows = 0;
    cf->str_off[0] = 0;
    for (int c = 0; c < nd; c++) {
        if (!host[c]) continue;
        if (rows >= res->cap) return DKB_CAND_ECAP;
        int64_t at = cf->str_off[rows], len = (int64_t)flag->dict->len[c];
        if (at + len > cf->bytes_cap) return DKB_CAND_ECAP;
        memcpy(cf->str_bytes + at, flag->dict->str[c], (size_t)len);
        cf->str_off[rows + 1] = at + len;
        cn->i64[rows] = (int64_t)host[c];
        /* qty at the declared scale (the sum of scale-2 values is scale 2) */
        __int128 v = (int64_t)host[nd + c];
        for (int s = 2; s < cq->scale; s++) v *= 10;
        cq->dec[rows] = v;
        rows++;
    }
    res->nrows = rows;
    return DKB_CAND_OK;
}
