/* ship_window.full.cu: an honest full-mode CUDA candidate for the SQL task
 * with parameters tests/sql_tasks/ship_window.sql (`dkb eval --sql FILE
 * --backend cuda`):
 *
 *   SELECT l_linestatus, count(*) AS n, sum(l_extendedprice) AS price
 *   FROM lineitem
 *   WHERE l_shipdate >= DATE ':ship_from' AND l_shipdate < DATE ':ship_from' + 90
 *     AND l_quantity <= :max_qty AND l_returnflag = ':flag'
 *   GROUP BY l_linestatus ORDER BY l_linestatus;
 *
 * The parameters by name on the host (ship_from a DATE in days, max_qty an
 * INT, turned into l_quantity's hundredths, flag a STRING, turned into its
 * dictionary code: none when no line has it). The columns are device
 * memory (resident, shared by the harness); one kernel on env's stream
 * filters and groups by the line status code (codes in string order):
 * shared-memory counters per block, then 2 x codes device counters, which
 * come back; the groups with rows are written in code order. Sums exact in
 * int64 (added modulo 2^64; l_extendedprice's sum stays far below 2^63); a
 * status code outside its dictionary is DKB_CAND_EINTERNAL. The C
 * candidate tests/sql_tasks/honest/ship_window.full.c computes the same on
 * the CPU. */
#include "dkb/candidate.h"

enum { TPB = 256, MAX_CODES = 256, MAX_BLOCKS = 1024 };

/* acc[c]: rows of status code c, acc[nd + c]: their l_extendedprice sum,
 * acc[2 nd]: kept rows whose status code is not below nd. */
__global__ void __launch_bounds__(TPB) window_sums(const uint8_t *__restrict__ status,
                                                   const uint8_t *__restrict__ flag, const int64_t *__restrict__ qty,
                                                   const int64_t *__restrict__ price,
                                                   const int32_t *__restrict__ ship, int64_t n, int want, int64_t lo,
                                                   int64_t hi, int64_t qmax, int nd,
                                                   unsigned long long *__restrict__ acc) {
    __shared__ unsigned long long cnt[MAX_CODES], sum[MAX_CODES];
    for (int c = threadIdx.x; c < nd; c += TPB) cnt[c] = sum[c] = 0;
    __syncthreads();
    unsigned long long bad = 0;
    for (int64_t i = blockIdx.x * (int64_t)TPB + threadIdx.x; i < n; i += (int64_t)gridDim.x * TPB) {
        const int64_t d = ship[i];
        if ((int)flag[i] != want || d < lo || d >= hi || qty[i] > qmax) continue;
        const int c = status[i];
        if (c >= nd) {
            bad++;
            continue;
        }
        atomicAdd(&cnt[c], 1ull);
        atomicAdd(&sum[c], (unsigned long long)price[i]);
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
    const dkb_cand_param *from = dkb_cand_param_find(p, "ship_from"), *maxq = dkb_cand_param_find(p, "max_qty"),
                         *flagp = dkb_cand_param_find(p, "flag");
    const dkb_cand_vec *status = dkb_cand_column(db, "lineitem", "l_linestatus");
    const dkb_cand_vec *flag = dkb_cand_column(db, "lineitem", "l_returnflag");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    dkb_cand_res_col *cs = column(res, "l_linestatus", DKB_CAND_RES_STRING);
    dkb_cand_res_col *cn = column(res, "n", DKB_CAND_RES_INT);
    dkb_cand_res_col *cp = column(res, "price", DKB_CAND_RES_DECIMAL);
    if (!from || !maxq || !flagp || !flagp->s || !status || !flag || !qty || !price || !ship || !cs || !cn ||
        !cp || status->type != DKB_CAND_U8 || !status->dict || flag->type != DKB_CAND_U8 || !flag->dict ||
        qty->type != DKB_CAND_I64 || price->type != DKB_CAND_I64 || ship->type != DKB_CAND_I32 ||
        status->dict->size > MAX_CODES || cp->scale < 2)
        return DKB_CAND_EINVAL;
    const int want = dkb_cand_dict_code(flag->dict, flagp->s); /* -1: no line has it */
    const int64_t lo = from->i, hi = from->i + 90, qmax = maxq->i * 100; /* l_quantity in hundredths */
    const int nd = status->dict->size;
    const int64_t n = status->n;

    cudaStream_t st = dkb_cand_stream(env);
    unsigned long long host[2 * MAX_CODES + 1], *acc = NULL;
    const size_t bytes = (size_t)(2 * nd + 1) * sizeof host[0];
    if (cudaMallocAsync((void **)&acc, bytes, st) != cudaSuccess) return DKB_CAND_ENOMEM;
    cudaMemsetAsync(acc, 0, bytes, st);
    if (n > 0 && want >= 0) {
        const int64_t need = (n + TPB - 1) / TPB;
        const int blocks = (int)(need < MAX_BLOCKS ? need : MAX_BLOCKS);
        window_sums<<<blocks, TPB, 0, st>>>((const uint8_t *)status->data, (const uint8_t *)flag->data,
                                            (const int64_t *)qty->data, (const int64_t *)price->data,
                                            (const int32_t *)ship->data, n, want, lo, hi, qmax, nd, acc);
    }
    cudaMemcpyAsync(host, acc, bytes, cudaMemcpyDeviceToHost, st);
    cudaFreeAsync(acc, st);
    if (cudaStreamSynchronize(st) != cudaSuccess || cudaGetLastError() != cudaSuccess) return DKB_CAND_ECUDA;
    if (host[2 * nd]) return DKB_CAND_EINTERNAL;

    /* the result table is host memory: every reported cell written */
    int64_t rows = 0;
    cs->str_off[0] = 0;
    for (int c = 0; c < nd; c++) {
        if (!host[c]) continue;
        if (rows >= res->cap) return DKB_CAND_ECAP;
        int64_t at = cs->str_off[rows], len = (int64_t)status->dict->len[c];
        if (at + len > cs->bytes_cap) return DKB_CAND_ECAP;
        memcpy(cs->str_bytes + at, status->dict->str[c], (size_t)len);
        cs->str_off[rows + 1] = at + len;
        cn->i64[rows] = (int64_t)host[c];
        __int128 v = (int64_t)host[nd + c];
        for (int s = 2; s < cp->scale; s++) v *= 10;
        cp->dec[rows] = v;
        rows++;
    }
    res->nrows = rows;
    return DKB_CAND_OK;
}
