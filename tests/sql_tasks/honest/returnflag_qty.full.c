/* returnflag_qty.full.c: an honest full-mode candidate for the SQL task
 * tests/sql_tasks/returnflag_qty.sql:
 *
 *   SELECT l_returnflag, count(*) AS n, sum(l_quantity) AS qty
 *   FROM lineitem WHERE l_shipdate <= DATE '1998-09-02'
 *   GROUP BY l_returnflag ORDER BY l_returnflag;
 *
 * One pass over lineitem, counts and exact scale-2 sums per flag code
 * (codes are in string order: the dictionary is sorted); the groups that
 * have rows are written in code order. The result's columns are found by
 * name, as the harness declared them from the translated program. */
#include "dkb/candidate.h"

static dkb_cand_res_col *column(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)p, (void)env;
    const dkb_cand_vec *flag = dkb_cand_column(db, "lineitem", "l_returnflag");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    dkb_cand_res_col *cf = column(res, "l_returnflag", DKB_CAND_RES_STRING);
    dkb_cand_res_col *cn = column(res, "n", DKB_CAND_RES_INT);
    dkb_cand_res_col *cq = column(res, "qty", DKB_CAND_RES_DECIMAL);
    if (!flag || !qty || !ship || !cf || !cn || !cq || flag->type != DKB_CAND_U8 || !flag->dict ||
        qty->type != DKB_CAND_I64 || ship->type != DKB_CAND_I32 || flag->dict->size > 256)
        return DKB_CAND_EINVAL;
    /* 1998-09-02 as days since 1970-01-01 */
    const int32_t last = 10471;
    int64_t count[256] = {0};
    __int128 sum[256] = {0};
    const uint8_t *f = (const uint8_t *)flag->data;
    const int64_t *q = (const int64_t *)qty->data;
    const int32_t *d = (const int32_t *)ship->data;
    for (int64_t r = 0; r < flag->n; r++)
        if (d[r] <= last) count[f[r]]++, sum[f[r]] += q[r];
    int64_t rows = 0;
    cf->str_off[0] = 0;
    for (int c = 0; c < flag->dict->size; c++) {
        if (!count[c]) continue;
        if (rows >= res->cap) return DKB_CAND_ECAP;
        int64_t at = cf->str_off[rows], len = (int64_t)flag->dict->len[c];
        if (at + len > cf->bytes_cap) return DKB_CAND_ECAP;
        memcpy(cf->str_bytes + at, flag->dict->str[c], (size_t)len);
        cf->str_off[rows + 1] = at + len;
        cn->i64[rows] = count[c];
        /* qty at the declared scale (the sum of scale-2 values is scale 2) */
        __int128 v = sum[c];
        for (int s = 2; s < cq->scale; s++) v *= 10;
        cq->dec[rows] = v;
        rows++;
    }
    res->nrows = rows;
    return DKB_CAND_OK;
}
