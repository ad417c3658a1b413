/* translate.c: the translator's entry point (contract in translate.h):
 * walk the plan from its root (translate_ops.c), then turn the root's
 * relation into a result table with DuckDB's column names and types. */
#include "sql/translate.h"

#include <stdlib.h>
#include <string.h>

#include "sql/emit_c.h"  // defines: dkb__rec_on, dkb__rec_result (--emit c)
#include "sql/translate_internal.h"

static bool result_type(tr_ctx *x, const tr_col *c, dkb_res_type *t, int *scale) {
    *scale = 0;
    switch (c->ty.id) {
    case TY_INT:
    case TY_BIGINT:
    case TY_NULL: *t = DKB_RES_INT; return true;
    case TY_HUGEINT: *t = DKB_RES_DECIMAL; return true;
    case TY_DECIMAL: *t = DKB_RES_DECIMAL, *scale = c->ty.scale; return true;
    case TY_DOUBLE: *t = DKB_RES_FLOAT; return true;
    case TY_DATE: *t = DKB_RES_DATE; return true;
    case TY_VARCHAR:
    case TY_BOOL: *t = DKB_RES_STRING; return true;
    default: tr_unsupported(x, NULL, "a result column of type %s", c->ty.name); return false;
    }
}

/* Column i of rel into column i of res (rows already added). */
static bool fill_column(tr_ctx *x, const tr_col *c, int64_t n, dkb_res_type t, int scale, int i, dkb_result *res) {
    if (n == 0) return true;
    uint8_t *valid = NULL;
    if (c->valid) {
        valid = tr_alloc(x, (size_t)n);
        if (!valid || dkb_tp_to_host(x->tp, c->valid, valid)) return tr_bad(x), false;
    }
    if (t == DKB_RES_STRING && c->ty.id == TY_BOOL) {
        __int128 *h = tr_host_i128(x, c->v);
        if (!h) return false;
        for (int64_t r = 0; r < n; r++)
            if (dkb_result_set_str(res, r, i, h[r] ? "true" : "false", h[r] ? 4 : 5)) return tr_fail(x, DKB_ENOMEM, "out of memory"), false;
    } else if (t == DKB_RES_STRING) {
        tr_hstr h;
        if (!tr_host_strings(x, c, &h)) return false;
        for (int64_t r = 0; r < n; r++)
            if (dkb_result_set_str(res, r, i, h.p[r], h.len[r])) return tr_fail(x, DKB_ENOMEM, "out of memory"), false;
    } else if (t == DKB_RES_FLOAT) {
        double *h = tr_host_f64(x, c->v);
        if (!h) return false;
        for (int64_t r = 0; r < n; r++) dkb_result_set_float(res, r, i, h[r]);
    } else {
        dkb_tensor *v = c->v;
        if (t == DKB_RES_DECIMAL && v->scale != scale) v = tr_rescale(x, v, scale);
        __int128 *h = tr_host_i128(x, v);
        if (!h) return false;
        for (int64_t r = 0; r < n; r++) {
            if (t == DKB_RES_DECIMAL) dkb_result_set_dec(res, r, i, h[r]);
            else if (t == DKB_RES_DATE) dkb_result_set_date(res, r, i, (int32_t)h[r]);
            else dkb_result_set_int(res, r, i, (int64_t)h[r]);
        }
    }
    if (valid)
        for (int64_t r = 0; r < n; r++)
            if (!valid[r] && dkb_result_set_null(res, r, i)) return tr_fail(x, DKB_ENOMEM, "out of memory"), false;
    return true;
}

static int to_result(tr_ctx *x, const tr_rel *rel, char **names, dkb_result *res) {
    int nc = rel->ncols;
    if (nc < 1 || nc > 64) return tr_unsupported(x, NULL, "a result of %d columns", nc), DKB_EINVAL;
    dkb_res_type types[64];
    int scales[64];
    tr_col *cols = tr_rel_ready_cols(x, rel);
    if (!cols) return x->err->code ? x->err->code : DKB_EINTERNAL;
    for (int i = 0; i < nc; i++)
        if (!result_type(x, &cols[i], &types[i], &scales[i])) return x->err->code;
    if (dkb__rec_on()) { /* --emit c: the core's outputs, decimals at their result scale */
        dkb_tensor *v[64], *valid[64];
        for (int i = 0; i < nc; i++) {
            if (types[i] == DKB_RES_DECIMAL && cols[i].v->dtype != DKB_TP_F64 && cols[i].v->scale != scales[i])
                cols[i].v = tr_rescale(x, cols[i].v, scales[i]);
            if (tr_bad(x)) return x->err->code;
            v[i] = cols[i].v, valid[i] = cols[i].valid;
        }
        dkb__rec_result(nc, names, v, valid, types, scales, rel->norder, rel->order);
    }
    int rc = dkb_result_init(res, nc, (const char *const *)names, types, scales);
    if (rc) return tr_fail(x, rc, "result: %s", dkb_strerror(rc)), rc;
    for (int64_t r = 0; r < rel->n; r++)
        if (dkb_result_add_row(res) < 0) return tr_fail(x, DKB_ENOMEM, "out of memory"), DKB_ENOMEM;
    for (int i = 0; i < nc; i++)
        if (!fill_column(x, &cols[i], rel->n, types[i], scales[i], i, res)) return x->err->code ? x->err->code : DKB_EINTERNAL;
    if (rel->norder) dkb_result_set_order(res, rel->norder, rel->order);
    if (res->nbad) return tr_fail(x, DKB_EINTERNAL, "result: %s", res->bad), DKB_EINTERNAL;
    return 0;
}

/* The plan's root in doc, translated and run (contract in translate.h);
 * the column names from p (DuckDB) or, when p is NULL, from given. */
static int translate_doc(dkb__sql_planner *p, char *const *given, int ngiven, const dkb_store *db, dkb_tp *tp,
                         const char *sql, const cJSON *doc, FILE *trace, dkb_result *res, dkb_error *err) {
    const cJSON *root = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "plans"), 0);
    if (!root) return dkb_fail(err, DKB_EPARSE, "the plan JSON has no plan");
    tr_ctx x = {.tp = tp, .db = db, .sql = sql, .err = err, .trace = trace, .depth = -1};
    dkb_tp_reset(tp);
    tr_rel *rel = tr_op(&x, root);
    char **names = NULL;
    int nnames = 0, rc = 0;
    if (rel && !tr_bad(&x)) {
        if (p) {
            rc = dkb__sql_column_names(p, sql, &names, &nnames, err);
        } else {
            names = (char **)given;
            nnames = ngiven;
        }
        if (rc) x.failed = true;
        else if (nnames != rel->ncols)
            tr_fail(&x, DKB_EINTERNAL, "the plan gives %d columns, DuckDB's result %d", rel->ncols, nnames);
        else
            rc = to_result(&x, rel, names, res);
    }
    if (!rc && (x.failed || !rel)) rc = err->code ? err->code : DKB_EINTERNAL;
    if (!rc && tr_bad(&x)) rc = err->code;
    if (rc) dkb_result_free(res), memset(res, 0, sizeof *res);
    if (p) {
        for (int i = 0; i < nnames; i++) free(names[i]);
        free(names);
    }
    tr_free_all(&x);
    dkb_tp_reset(tp);
    return rc;
}

int dkb__sql_translate(dkb__sql_planner *p, const dkb_store *db, dkb_tp *tp, const char *sql, const char *json,
                       FILE *trace, dkb_result *res, dkb_error *err) {
    dkb_error scratch = {0};
    if (!err) err = &scratch;
    err->code = 0, err->msg[0] = 0;
    if (!p || !db || !tp || !sql || !json || !res) return dkb_fail(err, DKB_EINVAL, "dkb__sql_translate: NULL argument");
    cJSON *doc = cJSON_Parse(json);
    int rc = translate_doc(p, NULL, 0, db, tp, sql, doc, trace, res, err);
    cJSON_Delete(doc);
    return rc;
}

int dkb__sql_translate_named(const dkb_store *db, dkb_tp *tp, const char *sql, const struct cJSON *doc,
                             char *const *names, int nnames, FILE *trace, dkb_result *res, dkb_error *err) {
    dkb_error scratch = {0};
    if (!err) err = &scratch;
    err->code = 0, err->msg[0] = 0;
    if (!db || !tp || !sql || !doc || !res || (nnames && !names) || nnames < 0)
        return dkb_fail(err, DKB_EINVAL, "dkb__sql_translate_named: NULL argument");
    return translate_doc(NULL, names, nnames, db, tp, sql, doc, trace, res, err);
}
