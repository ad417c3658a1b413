/* plan_util.c: helpers the 22 baseline plans share (plan_util.h): store
 * columns into the input set, dictionary codes and LIKE lookup tables,
 * named core outputs, and result cells from codes, strings and single
 * aggregates. */
#include "queries/plan_util.h"

/* ---- prepare ---- */

void dkb__plan_put_columns(dkb_tp *tp, const dkb_store *db, dkb_tensor_set *in, const char *table,
                           const char *const *names, int n) {
    for (int i = 0; i < n; i++) dkb_set_put_column(tp, in, db, table, names[i]);
}

int64_t dkb__plan_code_required(dkb_tp *tp, const char *query, const dkb_tensor_set *in, const char *name,
                                const char *s) {
    dkb_tensor *t = dkb_set_get(tp, in, name);
    if (!t) return -1;
    int c = t->dict ? dkb_tp_dict_code(t->dict, s) : -1;
    if (c < 0) dkb_tp_fail(tp, DKB_EINVAL, "%s: '%s' does not occur in %s", query, s, name);
    return c;
}

int64_t dkb__plan_code_or_none(dkb_tp *tp, const char *query, const dkb_tensor_set *in, const char *name,
                               const char *s) {
    dkb_tensor *t = dkb_set_get(tp, in, name);
    if (!t) return -1;
    if (!t->dict) dkb_tp_fail(tp, DKB_EINVAL, "%s: %s is not dictionary-coded", query, name);
    return t->dict ? dkb_tp_dict_code(t->dict, s) : -1;
}

void dkb__plan_put_like_lut(dkb_tp *tp, const char *query, dkb_tensor_set *in, const char *name,
                            const char *pattern, const char *lut) {
    dkb_tensor *t = dkb_set_get(tp, in, name);
    if (!t) return;
    if (!t->dict) {
        dkb_tp_fail(tp, DKB_EINVAL, "%s: %s is not dictionary-coded", query, name);
        return;
    }
    bool *mask = dkb_tp_like_dict(tp, t->dict, pattern);
    if (mask) dkb_set_put(tp, in, lut, dkb_tp_from_host(tp, DKB_TP_BOOL, t->dict->size, mask));
}

/* ---- core ---- */

dkb_tensor *dkb__plan_lut_mask(dkb_tp *tp, const dkb_tensor_set *in, const char *lut, const dkb_tensor *codes) {
    bool *table = dkb_tp_host_copy(tp, dkb_set_get(tp, in, lut));
    return table ? dkb_tp_lookup_mask(tp, codes, table) : NULL;
}

void dkb__plan_put_outputs(dkb_tp *tp, dkb_tensor_set *out, const char *const *names, dkb_tensor *const *cols,
                           int n) {
    for (int i = 0; i < n; i++) dkb_set_put(tp, out, names[i], cols[i]);
}

void dkb__plan_put_gathered(dkb_tp *tp, dkb_tensor_set *out, const char *const *names, dkb_tensor *const *cols,
                            int n, const dkb_tensor *idx) {
    for (int i = 0; i < n; i++) dkb_set_put(tp, out, names[i], dkb_tp_gather(tp, cols[i], idx, 0));
}

void dkb__plan_put_aggregate(dkb_tp *tp, dkb_tensor_set *out, const char *name, dkb_tensor *value,
                             const dkb_tensor *over) {
    dkb_tensor *nonempty = dkb_tp_full_i64(tp, DKB_TP_BOOL, 1, over && over->n > 0);
    dkb_set_put(tp, out, name, dkb_tp_compress(tp, value, nonempty));
}

/* ---- finish ---- */

int dkb__plan_get_outputs(dkb_tp *tp, const dkb_tensor_set *out, const char *const *names, int n,
                          dkb_tensor **t) {
    for (int i = 0; i < n; i++) t[i] = dkb_set_get(tp, out, names[i]);
    return dkb_tp_status(tp, NULL);
}

int dkb__plan_set_code(dkb_tp *tp, const char *query, dkb_result *res, int64_t row, int col,
                       const dkb_tensor *codes, int64_t i) {
    int64_t c = dkb_tp_get_i64(tp, codes, i);
    const dkb_tp_dict *d = codes->dict;
    if (!d || c < 0 || c >= d->size) {
        dkb_tp_fail(tp, DKB_EINTERNAL, "%s: code %lld outside its dictionary", query, (long long)c);
        return DKB_EINTERNAL;
    }
    return dkb_result_set_str(res, row, col, d->str[c], d->len[c]);
}

int dkb__plan_set_texts(dkb_tp *tp, dkb_result *res, int col, const dkb_tensor *s) {
    const int64_t *off = dkb_tp_host_copy(tp, s);
    if (!off) return dkb_tp_status(tp, NULL);
    const char *bytes = (const char *)(off + s->n + 1);
    for (int64_t i = 0; i < s->n; i++) {
        int rc = dkb_result_set_str(res, i, col, bytes + off[i], (size_t)(off[i + 1] - off[i]));
        if (rc) return rc;
    }
    return 0;
}

int dkb__plan_finish_single(dkb_tp *tp, const dkb_tensor_set *out, dkb_result *res, const char *name,
                            dkb_res_type type) {
    if (type != DKB_RES_DECIMAL && type != DKB_RES_FLOAT) return DKB_EINTERNAL;
    dkb_tensor *v = dkb_set_get(tp, out, name);
    int rc = dkb_tp_status(tp, NULL);
    if (rc) return rc;
    const char *const names[] = {name};
    const dkb_res_type types[] = {type};
    const int scales[] = {type == DKB_RES_DECIMAL ? v->scale : 6};
    rc = dkb_result_init(res, 1, names, types, scales);
    if (rc) return rc;
    int64_t r = dkb_result_add_row(res);
    if (r < 0) return DKB_ENOMEM;
    if (v->n == 0)
        rc = dkb_result_set_null(res, r, 0);
    else if (type == DKB_RES_DECIMAL)
        dkb_result_set_dec(res, r, 0, dkb_tp_get_i128(tp, v, 0));
    else
        dkb_result_set_float(res, r, 0, dkb_tp_get_f64(tp, v, 0));
    return rc ? rc : dkb_tp_status(tp, NULL);
}
