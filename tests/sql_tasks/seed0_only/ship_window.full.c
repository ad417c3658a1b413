/* ship_window.full.c: a candidate for tests/sql_tasks/ship_window.sql (a SQL task with
 * parameters) that ignores its parameters:
 *
 *   SELECT l_linestatus, count(*) AS n, sum(l_extendedprice) AS price
 *   FROM lineitem
 *   WHERE l_shipdate >= DATE ':ship_from' AND l_shipdate < DATE ':ship_from' + 90
 *     AND l_quantity <= :max_qty AND l_returnflag = ':flag'
 *   GROUP BY l_linestatus ORDER BY l_linestatus;
 *
 * WRONG on purpose: the parameters of seed 0 written in (1994-01-01, 25,
 * R), not read: right on seed 0 only; the other seeds must catch it.
 */
#include "dkb/candidate.h"

static dkb_cand_res_col *column(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

static const dkb_cand_param *param(const dkb_cand_params *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->p[i].name, name) == 0) return &p->p[i];
    return NULL;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)env;
    const dkb_cand_param *from = param(p, "ship_from"), *maxq = param(p, "max_qty"), *flagp = param(p, "flag");
    const dkb_cand_vec *status = dkb_cand_column(db, "lineitem", "l_linestatus");
    const dkb_cand_vec *flag = dkb_cand_column(db, "lineitem", "l_returnflag");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    dkb_cand_res_col *cs = column(res, "l_linestatus", DKB_CAND_RES_STRING);
    dkb_cand_res_col *cn = column(res, "n", DKB_CAND_RES_INT);
    dkb_cand_res_col *cp = column(res, "price", DKB_CAND_RES_DECIMAL);
    if (!from || !maxq || !flagp || !status || !flag || !qty || !price || !ship || !cs || !cn || !cp ||
        status->type != DKB_CAND_U8 || !status->dict || flag->type != DKB_CAND_U8 || !flag->dict ||
        qty->type != DKB_CAND_I64 || price->type != DKB_CAND_I64 || ship->type != DKB_CAND_I32 ||
        status->dict->size > 256)
        return DKB_CAND_EINVAL;
    int want = -1; /* the flag's code (none: no line has it) */
    for (int c = 0; c < flag->dict->size; c++)
        if (flag->dict->len[c] == 1 && memcmp("R", flag->dict->str[c], flag->dict->len[c]) == 0)
            want = c;
    (void)from, (void)maxq;
    const int64_t lo = 8766, hi = 8766 + 90, qmax = 2500; /* 1994-01-01, 25 units */
    int64_t count[256] = {0};
    __int128 sum[256] = {0};
    const uint8_t *st = (const uint8_t *)status->data, *fl = (const uint8_t *)flag->data;
    const int64_t *q = (const int64_t *)qty->data, *pr = (const int64_t *)price->data;
    const int32_t *d = (const int32_t *)ship->data;
    for (int64_t r = 0; r < status->n; r++)
        if (fl[r] == want && d[r] >= lo && d[r] < hi && q[r] <= qmax) count[st[r]]++, sum[st[r]] += pr[r];
    int64_t rows = 0;
    cs->str_off[0] = 0;
    for (int c = 0; c < status->dict->size; c++) {
        if (!count[c]) continue;
        if (rows >= res->cap) return DKB_CAND_ECAP;
        int64_t at = cs->str_off[rows], len = (int64_t)status->dict->len[c];
        if (at + len > cs->bytes_cap) return DKB_CAND_ECAP;
        memcpy(cs->str_bytes + at, status->dict->str[c], (size_t)len);
        cs->str_off[rows + 1] = at + len;
        cn->i64[rows] = count[c];
        __int128 v = sum[c];
        for (int s = 2; s < cp->scale; s++) v *= 10;
        cp->dec[rows] = v;
        rows++;
    }
    res->nrows = rows;
    return DKB_CAND_OK;
}
