/* translate_ops.c: one function per logical operator of DuckDB's plan
 * (LOGICAL_GET with its table filters, FILTER, PROJECTION, ORDER_BY,
 * TOP_N, LIMIT, MATERIALIZED_CTE / CTE_REF, DELIM_GET, CHUNK_GET,
 * EXPRESSION_GET, DUMMY_SCAN, EMPTY_RESULT, UNION / EXCEPT / INTERSECT,
 * DISTINCT), and tr_op, which dispatches on the operator's type; joins are
 * in translate_join.c, aggregates in translate_agg.c. Each returns the
 * operator's output relation, or NULL with the context failed. */
#include <stdlib.h>
#include <string.h>

#include "sql/translate_internal.h"

static const cJSON *children(const cJSON *op) { return tr_get(op, "children"); }
static const cJSON *child(const cJSON *op, int i) { return cJSON_GetArrayItem(children(op), i); }

/* ---- LOGICAL_GET ---- */

/* A store column as a column of SQL type ty. */
static bool store_col(tr_ctx *x, const dkb_store_table *t, const char *name, tr_type ty, tr_col *out) {
    const dkb_store_column *c = dkb_store_table_column(t, name);
    if (!c) return tr_fail(x, DKB_ENOENT, "store has no column %s.%s", dkb_store_table_name(t), name), false;
    memset(out, 0, sizeof *out);
    out->v = dkb_tp_column(x->tp, c);
    out->ty = ty;
    tr_store_column_seen(x, c, out->v);
    return !tr_bad(x);
}

/* A CONSTANT_COMPARISON's constant as an integer in col's units (a DATE's
 * days, a DECIMAL's unscaled value at the column's scale); false when the
 * column or constant is not such an integer. */
static bool filter_const_units(tr_ctx *x, const tr_col *col, const cJSON *f, int64_t *v) {
    dkb_tp_dtype dt = col->v->dtype;
    if (dt != DKB_TP_I8 && dt != DKB_TP_I16 && dt != DKB_TP_I32 && dt != DKB_TP_I64) return false;
    tr_const k;
    if (!tr_parse_const(x, tr_get(f, "constant"), &k) || k.null) return false;
    tr_tyid id = k.ty.id;
    if (id != TY_INT && id != TY_BIGINT && id != TY_DATE && id != TY_DECIMAL) return false;
    if ((id == TY_DECIMAL ? k.ty.scale : 0) != col->v->scale) return false;
    if (k.i > INT64_MAX - 1 || k.i < INT64_MIN + 1) return false;
    *v = (int64_t)k.i;
    return true;
}

/* lo <= col <= hi for a table filter `col > a AND col < b` (>=, <= too) on
 * an integer column: one dkb_tp_between instead of two comparisons and an
 * AND; NULL when the children are not two such comparisons. */
static dkb_tensor *range_filter(tr_ctx *x, const tr_col *col, const cJSON *ch) {
    if (cJSON_GetArraySize(ch) != 2) return NULL;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    int have_lo = 0, have_hi = 0;
    for (int i = 0; i < 2; i++) {
        const cJSON *f = cJSON_GetArrayItem(ch, i);
        if (strcmp(tr_str(f, "filter_type"), "CONSTANT_COMPARISON")) return NULL;
        const char *op = tr_str(f, "comparison_type");
        int64_t v;
        if (!filter_const_units(x, col, f, &v)) return NULL;
        if (!strcmp(op, "COMPARE_GREATERTHAN")) lo = v + 1, have_lo++;
        else if (!strcmp(op, "COMPARE_GREATERTHANOREQUALTO")) lo = v, have_lo++;
        else if (!strcmp(op, "COMPARE_LESSTHAN")) hi = v - 1, have_hi++;
        else if (!strcmp(op, "COMPARE_LESSTHANOREQUALTO")) hi = v, have_hi++;
        else return NULL;
    }
    if (have_lo != 1 || have_hi != 1) return NULL;
    return dkb_tp_between(x->tp, col->v, lo, hi);
}

/* col LIKE 'P%' for a table filter `col >= 'P' AND col < 'Q'` on free
 * text, where Q is P with its last byte one higher (DuckDB's form of
 * LIKE 'P%', as Q20's p_name >= 'forest' AND p_name < 'foresu'): under
 * byte-wise comparison exactly the strings starting with P, and store
 * columns hold no NULL. One dkb_tp_like (the hand plans' operation)
 * instead of two comparisons on the host; NULL when the filter is not of
 * that form (P empty, holding % or _ or a NUL byte). */
static dkb_tensor *prefix_filter(tr_ctx *x, const tr_col *col, const cJSON *ch) {
    if (col->v->dtype != DKB_TP_STR || col->valid || cJSON_GetArraySize(ch) != 2) return NULL;
    tr_const lo = {0}, hi = {0};
    int have_lo = 0, have_hi = 0;
    for (int i = 0; i < 2; i++) {
        const cJSON *f = cJSON_GetArrayItem(ch, i);
        if (strcmp(tr_str(f, "filter_type"), "CONSTANT_COMPARISON")) return NULL;
        const char *op = tr_str(f, "comparison_type");
        tr_const k;
        if (!tr_parse_const(x, tr_get(f, "constant"), &k) || k.null || k.ty.id != TY_VARCHAR || !k.s) return NULL;
        if (!strcmp(op, "COMPARE_GREATERTHANOREQUALTO")) lo = k, have_lo++;
        else if (!strcmp(op, "COMPARE_LESSTHAN")) hi = k, have_hi++;
        else return NULL;
    }
    if (have_lo != 1 || have_hi != 1) return NULL;
    size_t n = lo.slen;
    if (n == 0 || n > 1000 || hi.slen != n || strlen(lo.s) != n || memchr(lo.s, '%', n) || memchr(lo.s, '_', n) ||
        memcmp(lo.s, hi.s, n - 1) || (unsigned char)hi.s[n - 1] != (unsigned char)lo.s[n - 1] + 1)
        return NULL;
    char pattern[1002];
    memcpy(pattern, lo.s, n);
    pattern[n] = '%';
    pattern[n + 1] = '\0';
    return dkb_tp_like(x->tp, col->v, pattern);
}

/* A table filter on a dictionary-coded column as its value per dictionary
 * entry (constant comparisons with strings, IN lists, AND, OR; store
 * columns hold no NULL): one comparison or lookup for the whole filter
 * (tr_lut_mask) instead of one per constant and an OR or AND each. False
 * (nothing ran) when f is not such. */
static bool filter_lut(tr_ctx *x, const tr_col *col, const cJSON *f, bool **lut, int depth) {
    const dkb_tp_dict *d = col->v->dict;
    const char *ft = tr_str(f, "filter_type");
    if (depth > 32 || x->failed) return false;
    bool *m = tr_alloc(x, (size_t)d->size + 1);
    if (!m) return false;
    if (!strcmp(ft, "CONSTANT_COMPARISON") || !strcmp(ft, "IN_FILTER")) {
        bool in = ft[0] == 'I';
        const cJSON *vals = in ? tr_get(f, "values") : NULL;
        int nv = in ? cJSON_GetArraySize(vals) : 1;
        const char *op = in ? "COMPARE_EQUAL" : tr_str(f, "comparison_type");
        dkb_cmp c;
        if (!strcmp(op, "COMPARE_EQUAL")) c = DKB_CMP_EQ;
        else if (!strcmp(op, "COMPARE_NOTEQUAL")) c = DKB_CMP_NE;
        else if (!strcmp(op, "COMPARE_LESSTHAN")) c = DKB_CMP_LT;
        else if (!strcmp(op, "COMPARE_LESSTHANOREQUALTO")) c = DKB_CMP_LE;
        else if (!strcmp(op, "COMPARE_GREATERTHAN")) c = DKB_CMP_GT;
        else if (!strcmp(op, "COMPARE_GREATERTHANOREQUALTO")) c = DKB_CMP_GE;
        else return false;
        for (int j = 0; j < nv; j++) {
            tr_const k;
            const cJSON *kv = in ? cJSON_GetArrayItem(vals, j) : tr_get(f, "constant");
            if (strcmp(tr_str(tr_get(kv, "type"), "id"), "VARCHAR") || !tr_parse_const(x, kv, &k) || k.null || !k.s)
                return false;
            for (int i = 0; i < d->size; i++) {
                int r = tr_strcmp(d->str[i], d->len[i], k.s, k.slen);
                bool h = c == DKB_CMP_EQ ? r == 0 : c == DKB_CMP_NE ? r != 0 : c == DKB_CMP_LT ? r < 0
                       : c == DKB_CMP_LE ? r <= 0 : c == DKB_CMP_GT ? r > 0 : r >= 0;
                m[i] = m[i] || h;
            }
        }
        *lut = m;
        return true;
    }
    if (!strcmp(ft, "CONJUNCTION_AND") || !strcmp(ft, "CONJUNCTION_OR")) {
        bool is_and = ft[12] == 'A';
        const cJSON *ch = tr_get(f, "child_filters");
        int k = cJSON_GetArraySize(ch);
        if (k < 1) return false;
        for (int i = 0; i < d->size; i++) m[i] = is_and;
        for (int j = 0; j < k; j++) {
            bool *c;
            if (!filter_lut(x, col, cJSON_GetArrayItem(ch, j), &c, depth + 1)) return false;
            for (int i = 0; i < d->size; i++) m[i] = is_and ? m[i] && c[i] : m[i] || c[i];
        }
        *lut = m;
        return true;
    }
    return false;
}

static dkb_tensor *table_filter(tr_ctx *x, const tr_col *col, int64_t n, const cJSON *f) {
    const char *ft = tr_str(f, "filter_type");
    dkb_tp *tp = x->tp;
    if (col->v && col->v->dtype == DKB_TP_U8 && col->v->dict && !col->valid && col->ty.id == TY_VARCHAR) {
        bool *lut;
        if (filter_lut(x, col, f, &lut, 0)) return tr_lut_mask(x, col->v, lut);
        if (x->failed) return NULL;
    }
    if (!strcmp(ft, "CONSTANT_COMPARISON")) {
        tr_val a = {.c = *col}, b = {.is_const = true};
        tr_col r;
        if (!tr_parse_const(x, tr_get(f, "constant"), &b.k) ||
            !tr_compare(x, tr_str(f, "comparison_type"), &a, &b, n, f, &r))
            return NULL;
        return tr_truth(x, &r);
    }
    if (!strcmp(ft, "CONJUNCTION_AND") || !strcmp(ft, "CONJUNCTION_OR")) {
        bool is_and = ft[12] == 'A';
        dkb_tensor *rng = is_and ? range_filter(x, col, tr_get(f, "child_filters")) : NULL;
        if (!rng && is_and && !x->failed) rng = prefix_filter(x, col, tr_get(f, "child_filters"));
        if (rng || x->failed) return rng;
        dkb_tensor *m = NULL;
        const cJSON *ch = tr_get(f, "child_filters");
        for (int i = 0; i < cJSON_GetArraySize(ch); i++) {
            dkb_tensor *c = table_filter(x, col, n, cJSON_GetArrayItem(ch, i));
            if (!c) {
                if (x->failed) return NULL;
                if (is_and) continue;  /* an optional part passes every row */
                return NULL;           /* ... and so does an OR with one */
            }
            m = !m ? c : is_and ? dkb_tp_and(tp, m, c) : dkb_tp_or(tp, m, c);
        }
        return m;
    }
    if (!strcmp(ft, "IN_FILTER")) {
        const cJSON *vals = tr_get(f, "values");
        dkb_tensor *m = NULL;
        for (int i = 0; i < cJSON_GetArraySize(vals); i++) {
            tr_val a = {.c = *col}, b = {.is_const = true};
            tr_col r;
            if (!tr_parse_const(x, cJSON_GetArrayItem(vals, i), &b.k) || !tr_compare(x, "COMPARE_EQUAL", &a, &b, n, f, &r))
                return NULL;
            m = m ? dkb_tp_or(tp, m, tr_truth(x, &r)) : tr_truth(x, &r);
        }
        return m ? m : dkb_tp_full_i64(tp, DKB_TP_BOOL, n, 0);
    }
    if (!strcmp(ft, "IS_NULL")) return dkb_tp_full_i64(tp, DKB_TP_BOOL, n, 0);   /* store columns are NOT NULL */
    if (!strcmp(ft, "IS_NOT_NULL")) return dkb_tp_full_i64(tp, DKB_TP_BOOL, n, 1);
    if (!strcmp(ft, "OPTIONAL_FILTER") || !strcmp(ft, "DYNAMIC_FILTER")) return NULL; /* hints: the exact test stays above */
    if (!strcmp(ft, "EXPRESSION_FILTER")) {
        tr_rel one = {.ncols = 1, .c = (tr_col *)col, .n = n};
        tr_col r;
        if (!tr_eval_col(x, tr_get(f, "expr"), &one, &r)) return NULL;
        return tr_truth(x, &r);
    }
    return tr_unsupported(x, NULL, "table filter %s", ft);
}

/* Members that do not change what a filter computes. */
static bool position_only(const char *key) { return key && (!strcmp(key, "query_location") || !strcmp(key, "alias")); }

static int members(const cJSON *o) {
    int n = 0;
    for (const cJSON *c = o->child; c; c = c->next) n += !position_only(c->string);
    return n;
}

/* a and b the same JSON but for positions in the SQL and aliases. */
static bool same_filter(const cJSON *a, const cJSON *b, int depth) {
    if (depth > 64 || (a->type & 0xff) != (b->type & 0xff)) return false;
    if (cJSON_IsNumber(a)) return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a)) return !strcmp(a->valuestring, b->valuestring);
    if (cJSON_IsArray(a)) {
        const cJSON *c = a->child, *d = b->child;
        for (; c && d; c = c->next, d = d->next)
            if (!same_filter(c, d, depth + 1)) return false;
        return !c && !d;
    }
    if (cJSON_IsObject(a)) {
        if (members(a) != members(b)) return false;
        for (const cJSON *c = a->child; c; c = c->next) {
            if (position_only(c->string)) continue;
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(b, c->string);
            if (!d || !same_filter(c, d, depth + 1)) return false;
        }
        return true;
    }
    return true; /* true, false, null */
}

/* table_filter of column `key` of table t, once per distinct filter: a
 * second scan with the same filter (but for SQL positions) reuses the mask. */
static dkb_tensor *filter_mask(tr_ctx *x, const dkb_store_table *t, int64_t key, const tr_col *col, int64_t n,
                               const cJSON *f) {
    for (int i = 0; i < x->nfmemo; i++)
        if (x->fmemo[i].table == t && x->fmemo[i].key == key && same_filter(x->fmemo[i].filter, f, 0))
            return x->fmemo[i].mask;
    dkb_tensor *m = table_filter(x, col, n, f);
    if (m && !x->failed && x->nfmemo < TR_MAX_MEMO) x->fmemo[x->nfmemo++] = (tr_filter_memo){t, key, f, m};
    return m;
}

static tr_rel *op_get(tr_ctx *x, const cJSON *op) {
    const char *table = tr_str(tr_get(op, "function_data"), "table");
    const char *fn = tr_str(op, "name");
    if (strcmp(fn, "seq_scan") || !table[0]) return tr_unsupported(x, op, "table function %s()", fn);
    const dkb_store_table *t = dkb_store_table_find(x->db, table);
    if (!t) return tr_fail(x, DKB_ENOENT, "the store has no table %s", table);
    const cJSON *names = tr_get(op, "names"), *types = tr_get(op, "returned_types");
    const cJSON *cidx = tr_get(op, "column_indexes"), *pids = tr_get(op, "projection_ids");
    int64_t n = dkb_store_table_rows(t);
    /* the table filters: one mask */
    dkb_tensor *mask = NULL;
    const cJSON *filters = tr_get(tr_get(op, "table_filters"), "filters");
    for (int i = 0; i < cJSON_GetArraySize(filters); i++) {
        const cJSON *f = cJSON_GetArrayItem(filters, i);
        int64_t key = tr_int(f, "key", -1);
        const cJSON *nm = cJSON_GetArrayItem(names, (int)key);
        if (!cJSON_IsString(nm)) return tr_fail(x, DKB_EINTERNAL, "plan: table filter on column %lld", (long long)key);
        tr_col c;
        if (!store_col(x, t, nm->valuestring, tr_parse_type(cJSON_GetArrayItem(types, (int)key)), &c)) return NULL;
        dkb_tensor *m = filter_mask(x, t, key, &c, n, tr_get(f, "value"));
        if (x->failed) return NULL;
        if (m) mask = mask ? dkb_tp_and(x->tp, mask, m) : m;
    }
    int nidx = cJSON_GetArraySize(cidx), nout = cJSON_GetArraySize(pids);
    if (nout == 0) nout = nidx;
    tr_rel *r = tr_rel_new(x, nout, n);
    if (!r) return NULL;
    char desc[512];
    size_t dl = 0;
    for (int i = 0; i < nout; i++) {
        int pid = i;
        const cJSON *pe = cJSON_GetArraySize(pids) ? cJSON_GetArrayItem(pids, i) : NULL;
        if (pe) pid = cJSON_IsNumber(pe) ? (int)pe->valuedouble : -1;
        const cJSON *ci = cJSON_GetArrayItem(cidx, pid);
        const cJSON *ix = tr_get(ci, "index");
        if (!cJSON_IsNumber(ix)) return tr_fail(x, DKB_EINTERNAL, "plan: GET %s without column index", table);
        if (ix->valuedouble >= 1.8e19) { /* the row id */
            r->c[i].v = tr_arange(x, n);
            r->c[i].ty = tr_ty(TY_BIGINT);
            dl += (size_t)snprintf(desc + dl, dl < sizeof desc ? sizeof desc - dl : 0, "%srowid", i ? ", " : "");
        } else {
            int k = (int)ix->valuedouble;
            const cJSON *nm = cJSON_GetArrayItem(names, k);
            if (!cJSON_IsString(nm)) return tr_fail(x, DKB_EINTERNAL, "plan: GET %s column %d", table, k);
            if (!store_col(x, t, nm->valuestring, tr_parse_type(cJSON_GetArrayItem(types, k)), &r->c[i])) return NULL;
            dl += (size_t)snprintf(desc + dl, dl < sizeof desc ? sizeof desc - dl : 0, "%s%s", i ? ", " : "",
                                   nm->valuestring);
        }
        if (dl >= sizeof desc) dl = sizeof desc - 1;
    }
    tr_rel *o = mask ? tr_rel_filter(x, r, mask) : r;
    if (o) tr_trace(x, "scan %s [%s]%s: %lld of %lld rows", table, desc, mask ? " filtered" : "", (long long)o->n,
                    (long long)n);
    return o;
}

/* ---- FILTER, PROJECTION ---- */

static tr_rel *apply_projection_map(tr_ctx *x, tr_rel *r, const cJSON *map) {
    int k = cJSON_GetArraySize(map);
    if (!r || k == 0) return r;
    tr_rel *o = tr_rel_new(x, k, r->n);
    if (!o) return NULL;
    for (int i = 0; i < k; i++) {
        int j = (int)cJSON_GetArrayItem(map, i)->valuedouble;
        if (j < 0 || j >= r->ncols) return tr_fail(x, DKB_EINTERNAL, "plan: projection map entry %d", j);
        o->c[i] = r->c[j];
    }
    return o;
}

static tr_rel *op_filter(tr_ctx *x, const cJSON *op, tr_rel *in) {
    const cJSON *ex = tr_get(op, "expressions");
    dkb_tensor *mask = NULL;
    for (int i = 0; i < cJSON_GetArraySize(ex); i++) {
        tr_col c;
        if (!tr_eval_col(x, cJSON_GetArrayItem(ex, i), in, &c)) return NULL;
        dkb_tensor *m = tr_truth(x, &c);
        mask = mask ? dkb_tp_and(x->tp, mask, m) : m;
    }
    tr_rel *o = mask ? tr_rel_filter(x, in, mask) : in;
    if (o) tr_trace(x, "filter: %lld of %lld rows", (long long)o->n, (long long)in->n);
    return apply_projection_map(x, o, tr_get(op, "projection_map"));
}

static tr_rel *op_projection(tr_ctx *x, const cJSON *op, tr_rel *in) {
    const cJSON *ex = tr_get(op, "expressions");
    int k = cJSON_GetArraySize(ex);
    tr_rel *o = tr_rel_new(x, k, in->n);
    if (!o) return NULL;
    int src[64];
    for (int i = 0; i < k; i++) {
        const cJSON *e = cJSON_GetArrayItem(ex, i);
        int ref = !strcmp(tr_str(e, "expression_class"), "BOUND_REF") ? (int)tr_int(e, "index", -1) : -1;
        src[i < 64 ? i : 63] = ref;
        if (ref >= 0 && ref < in->ncols) o->c[i] = in->c[ref]; /* passed on as it is (a pending gather stays pending) */
        else if (!tr_eval_col(x, e, in, &o->c[i])) return NULL;
        tr_type rt = tr_parse_type(tr_get(e, "return_type"));
        if (rt.id != TY_OTHER) o->c[i].ty = rt;
    }
    tr_trace(x, "project %d expression%s over %lld rows", k, k == 1 ? "" : "s", (long long)in->n);
    /* an ORDER BY below stays visible through columns passed on */
    for (int j = 0; j < in->norder; j++) {
        int found = -1;
        for (int i = 0; i < k && i < 64; i++)
            if (src[i] == in->order[j].column) found = i;
        if (found < 0) {
            o->norder = 0;
            break;
        }
        o->order[o->norder].column = found;
        o->order[o->norder++].desc = in->order[j].desc;
    }
    return o;
}

/* ---- ORDER BY, TOP_N, LIMIT ---- */

/* The sort keys of `orders` over in (nulls last unless asked first), and
 * the result's order spec when every key is a column. */
static int sort_keys(tr_ctx *x, const cJSON *orders, const tr_rel *in, dkb_sort_key *keys, int max, tr_rel *spec) {
    int nk = 0;
    spec->norder = 0;
    bool refs = true;
    for (int i = 0; i < cJSON_GetArraySize(orders); i++) {
        const cJSON *o = cJSON_GetArrayItem(orders, i);
        const cJSON *e = tr_get(o, "expression");
        bool desc = !strcmp(tr_str(o, "type"), "DESCENDING");
        bool nulls_first = !strcmp(tr_str(o, "null_order"), "NULLS FIRST");
        tr_col c;
        if (!tr_eval_col(x, e, in, &c)) return -1;
        if (nk + 2 > max) return tr_unsupported(x, o, "ORDER BY with more than %d keys", max / 2), -1;
        if (c.valid) keys[nk].key = nulls_first ? c.valid : dkb_tp_not(x->tp, c.valid), keys[nk++].desc = false;
        keys[nk].key = c.v->dtype == DKB_TP_BOOL ? dkb_tp_cast(x->tp, c.v, DKB_TP_I32) : c.v;
        keys[nk++].desc = desc;
        if (!strcmp(tr_str(e, "expression_class"), "BOUND_REF") && spec->norder < 8) {
            spec->order[spec->norder].column = (int)tr_int(e, "index", 0);
            spec->order[spec->norder++].desc = desc;
        } else {
            refs = false;
        }
    }
    if (!refs) spec->norder = 0;
    return tr_bad(x) ? -1 : nk;
}

static tr_rel *with_order(tr_rel *o, const tr_rel *spec) {
    if (!o) return NULL;
    o->norder = spec->norder;
    memcpy(o->order, spec->order, sizeof o->order);
    return o;
}

/* Rows [off, off + cnt) of r (clipped). */
static tr_rel *slice(tr_ctx *x, tr_rel *r, int64_t off, int64_t cnt) {
    if (off < 0) off = 0;
    if (off > r->n) off = r->n;
    if (cnt < 0 || cnt > r->n - off) cnt = r->n - off;
    if (off == 0 && cnt == r->n) return r;
    dkb_tensor *idx = dkb_tp_arith_i64(x->tp, dkb_tp_arange(x->tp, cnt), DKB_OP_ADD, off, 0);
    tr_rel *o = tr_rel_gather(x, r, idx, false);
    return with_order(o, r);
}

static tr_rel *op_order(tr_ctx *x, const cJSON *op, tr_rel *in) {
    dkb_sort_key keys[32];
    tr_rel spec = {0};
    int nk = sort_keys(x, tr_get(op, "orders"), in, keys, 32, &spec);
    if (nk < 0) return NULL;
    tr_rel *o = with_order(tr_rel_gather(x, in, dkb_tp_sort(x->tp, keys, nk), false), &spec);
    if (o) tr_trace(x, "sort %lld rows by %d key%s", (long long)o->n, nk, nk == 1 ? "" : "s");
    return apply_projection_map(x, o, tr_get(op, "projections"));
}

/* A LIMIT/OFFSET count: numbers from 2^63 on (cJSON reads doubles) as INT64_MAX. */
static int64_t count_of(const cJSON *o, const char *key, int64_t dflt) {
    const cJSON *v = tr_get(o, key);
    if (!cJSON_IsNumber(v)) return dflt;
    if (v->valuedouble >= 9.2e18) return INT64_MAX;
    return v->valuedouble < 0 ? -1 : (int64_t)v->valuedouble;
}

static tr_rel *op_top_n(tr_ctx *x, const cJSON *op, tr_rel *in) {
    int64_t limit = count_of(op, "limit", -1), offset = count_of(op, "offset", 0);
    if (limit < 0 || offset < 0) return tr_unsupported(x, op, "TOP_N without a constant limit");
    dkb_sort_key keys[32];
    tr_rel spec = {0};
    int nk = sort_keys(x, tr_get(op, "orders"), in, keys, 32, &spec);
    if (nk < 0) return NULL;
    int64_t k = limit > INT64_MAX - offset ? INT64_MAX : limit + offset;
    tr_rel *o = with_order(tr_rel_gather(x, in, dkb_tp_topk(x->tp, keys, nk, k), false), &spec);
    if (o) tr_trace(x, "top %lld (offset %lld) of %lld rows by %d keys", (long long)limit, (long long)offset,
                    (long long)in->n, nk);
    return o ? slice(x, o, offset, limit) : NULL;
}

static bool limit_value(tr_ctx *x, const cJSON *v, int64_t dflt, int64_t *out) {
    const char *t = tr_str(v, "type");
    if (!v || cJSON_IsNull(v) || !strcmp(t, "UNSET")) return *out = dflt, true;
    if (!strcmp(t, "CONSTANT_VALUE")) {
        *out = count_of(v, "constant_integer", -1);
        if (*out >= 0) return true;
        tr_unsupported(x, NULL, "LIMIT/OFFSET without a non-negative constant");
        return false;
    }
    tr_unsupported(x, NULL, "LIMIT/OFFSET of type %s (a percentage or an expression)", t);
    return false;
}

static tr_rel *op_limit(tr_ctx *x, const cJSON *op, tr_rel *in) {
    int64_t limit, offset;
    if (!limit_value(x, tr_get(op, "limit_val"), -1, &limit) || !limit_value(x, tr_get(op, "offset_val"), 0, &offset))
        return NULL;
    tr_trace(x, "limit %lld offset %lld of %lld rows", (long long)limit, (long long)offset, (long long)in->n);
    return slice(x, in, offset, limit);
}

/* ---- constant tables ---- */

/* A column from n constants of one type. */
static bool const_column(tr_ctx *x, const tr_const *k, int64_t n, tr_type ty, tr_col *out) {
    memset(out, 0, sizeof *out);
    out->ty = ty;
    bool any_null = false;
    for (int64_t i = 0; i < n; i++) any_null |= k[i].null;
    if (any_null) {
        uint8_t *v = tr_alloc(x, (size_t)n + 1);
        if (!v) return false;
        for (int64_t i = 0; i < n; i++) v[i] = !k[i].null;
        out->valid = dkb_tp_from_host(x->tp, DKB_TP_BOOL, n, v);
    }
    if (ty.id == TY_VARCHAR) {
        tr_hstr h = {.n = n, .p = tr_alloc(x, (size_t)(n + 1) * sizeof(char *)),
                     .len = tr_alloc(x, (size_t)(n + 1) * sizeof(size_t))};
        if (!h.p || !h.len) return false;
        for (int64_t i = 0; i < n; i++) h.p[i] = k[i].null ? "" : k[i].s, h.len[i] = k[i].null ? 0 : k[i].slen;
        out->v = tr_str_from_host(x, &h);
    } else if (ty.id == TY_DOUBLE) {
        double *v = tr_alloc(x, (size_t)(n + 1) * sizeof *v);
        if (!v) return false;
        for (int64_t i = 0; i < n; i++) v[i] = k[i].null ? 0 : k[i].ty.id == TY_DOUBLE ? k[i].f : (double)k[i].i;
        out->v = dkb_tp_from_host(x->tp, DKB_TP_F64, n, v);
    } else if (tr_is_int(ty.id) || ty.id == TY_DECIMAL || ty.id == TY_DATE || ty.id == TY_NULL) {
        int64_t *v = tr_alloc(x, (size_t)(n + 1) * sizeof *v);
        if (!v) return false;
        for (int64_t i = 0; i < n; i++) v[i] = k[i].null ? 0 : (int64_t)k[i].i;
        out->v = tr_relabel(x, dkb_tp_from_host(x->tp, DKB_TP_I64, n, v), ty.id == TY_DECIMAL ? ty.scale : 0, NULL);
        if (ty.id == TY_DATE || ty.id == TY_INT) out->v = dkb_tp_cast(x->tp, out->v, DKB_TP_I32);
    } else {
        tr_unsupported(x, NULL, "constants of type %s", ty.name);
        return false;
    }
    return !tr_bad(x);
}

static tr_rel *op_chunk_get(tr_ctx *x, const cJSON *op) {
    const cJSON *coll = tr_get(op, "collection");
    const cJSON *types = tr_get(coll, "types"), *vals = tr_get(coll, "values");
    int nc = cJSON_GetArraySize(types);
    if (cJSON_GetArraySize(vals) != nc) return tr_unsupported(x, op, "CHUNK_GET with %d value lists for %d columns",
                                                              cJSON_GetArraySize(vals), nc);
    int64_t n = nc ? cJSON_GetArraySize(cJSON_GetArrayItem(vals, 0)) : 0;
    tr_rel *r = tr_rel_new(x, nc, n);
    tr_const *k = tr_alloc(x, (size_t)(n + 1) * sizeof *k);
    if (!r || !k) return NULL;
    for (int c = 0; c < nc; c++) {
        const cJSON *col = cJSON_GetArrayItem(vals, c);
        if (cJSON_GetArraySize(col) != n) return tr_unsupported(x, op, "CHUNK_GET with ragged columns");
        for (int64_t i = 0; i < n; i++)
            if (!tr_parse_const(x, cJSON_GetArrayItem(col, (int)i), &k[i])) return NULL;
        if (!const_column(x, k, n, tr_parse_type(cJSON_GetArrayItem(types, c)), &r->c[c])) return NULL;
    }
    tr_trace(x, "constant table: %d columns, %lld rows", nc, (long long)n);
    return r;
}

static tr_rel *op_expression_get(tr_ctx *x, const cJSON *op, tr_rel *in) {
    const cJSON *rows = tr_get(op, "expressions"), *types = tr_get(op, "expr_types");
    int nc = cJSON_GetArraySize(types);
    int64_t n = cJSON_GetArraySize(rows);
    if (in->n != 1) return tr_unsupported(x, op, "EXPRESSION_GET over %lld rows", (long long)in->n);
    tr_rel *r = tr_rel_new(x, nc, n);
    tr_const *k = tr_alloc(x, (size_t)(n + 1) * sizeof *k);
    if (!r || !k) return NULL;
    for (int c = 0; c < nc; c++) {
        tr_type ty = tr_parse_type(cJSON_GetArrayItem(types, c));
        for (int64_t i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, (int)i), c);
            tr_val v, cv;
            if (!tr_eval(x, e, in, &v) || !tr_cast(x, &v, ty, 1, e, &cv)) return NULL;
            if (!cv.is_const) return tr_unsupported(x, e, "VALUES with a computed value");
            k[i] = cv.k;
        }
        if (!const_column(x, k, n, ty, &r->c[c])) return NULL;
    }
    return r;
}

static tr_rel *op_empty(tr_ctx *x, const cJSON *op) {
    const cJSON *types = tr_get(op, "return_types");
    int nc = cJSON_GetArraySize(types);
    tr_rel *r = tr_rel_new(x, nc, 0);
    if (!r) return NULL;
    for (int c = 0; c < nc; c++) {
        tr_const k = {.ty = tr_parse_type(cJSON_GetArrayItem(types, c)), .null = true};
        if (!tr_broadcast(x, &k, 0, &r->c[c])) return NULL;
        r->c[c].valid = NULL;
    }
    tr_trace(x, "empty result: %d columns", nc);
    return r;
}

/* ---- CTEs and DELIM_GET ---- */

static tr_rel *op_cte(tr_ctx *x, const cJSON *op) {
    if (x->ncte == TR_MAX_CTE) return tr_unsupported(x, op, "more than %d common table expressions", TR_MAX_CTE);
    tr_trace(x, "common subplan #%lld (%s):", (long long)tr_int(op, "table_index", -1), tr_str(op, "ctename"));
    tr_rel *def = tr_op(x, child(op, 0));
    if (!def) return NULL;
    int slot = x->ncte++;
    x->cte_index[slot] = tr_int(op, "table_index", -1);
    x->cte_rel[slot] = def;
    tr_rel *r = tr_op(x, child(op, 1));
    return r;
}

static tr_rel *op_cte_ref(tr_ctx *x, const cJSON *op) {
    int64_t idx = tr_int(op, "cte_index", -1);
    for (int i = x->ncte - 1; i >= 0; i--)
        if (x->cte_index[i] == idx) {
            tr_trace(x, "read common subplan #%lld: %lld rows", (long long)idx, (long long)x->cte_rel[i]->n);
            tr_rel *r = tr_rel_new(x, x->cte_rel[i]->ncols, x->cte_rel[i]->n);
            if (r) memcpy(r->c, x->cte_rel[i]->c, (size_t)r->ncols * sizeof *r->c);
            return r;
        }
    return tr_unsupported(x, op, "CTE_REF to a CTE not materialized (#%lld)", (long long)idx);
}

static tr_rel *op_delim_get(tr_ctx *x, const cJSON *op) {
    if (!x->ndelim) return tr_fail(x, DKB_EINTERNAL, "plan: DELIM_GET outside a DELIM_JOIN");
    tr_rel *d = x->delim[x->ndelim - 1];
    if (cJSON_GetArraySize(tr_get(op, "chunk_types")) != d->ncols)
        return tr_fail(x, DKB_EINTERNAL, "plan: DELIM_GET of %d columns, DELIM_JOIN gives %d",
                       cJSON_GetArraySize(tr_get(op, "chunk_types")), d->ncols);
    tr_trace(x, "distinct outer values: %lld rows", (long long)d->n);
    tr_rel *r = tr_rel_new(x, d->ncols, d->n);
    if (r) memcpy(r->c, d->c, (size_t)r->ncols * sizeof *r->c);
    return r;
}

/* ---- set operations ---- */

static tr_rel *op_setop(tr_ctx *x, const cJSON *op, const char *type) {
    int nch = cJSON_GetArraySize(children(op));
    if (nch < 2) return tr_fail(x, DKB_EINTERNAL, "plan: %s with %d inputs", type, nch);
    bool all = cJSON_IsTrue(tr_get(op, "setop_all"));
    bool is_union = !strcmp(type, "LOGICAL_UNION");
    if (!is_union && all) return tr_unsupported(x, op, "%s ALL", type + 8);
    tr_rel *acc = tr_op(x, child(op, 0));
    /* DuckDB may give one set operation more than two inputs: left to right */
    for (int i = 1; acc && i < nch; i++) {
        tr_rel *b = tr_op(x, child(op, i));
        if (!b) return NULL;
        if (is_union) {
            tr_trace(x, "union%s: %lld + %lld rows", all ? " all" : "", (long long)acc->n, (long long)b->n);
            acc = tr_rel_concat(x, acc, b);
        } else {
            tr_rel *d = tr_distinct(x, acc);
            acc = d ? tr_setop_semi(x, d, b, !strcmp(type, "LOGICAL_EXCEPT")) : NULL;
        }
    }
    return acc && is_union && !all ? tr_distinct(x, acc) : acc;
}

static tr_rel *op_distinct(tr_ctx *x, const cJSON *op, tr_rel *in) {
    const cJSON *targets = tr_get(op, "distinct_targets");
    if (strcmp(tr_str(op, "distinct_type"), "DISTINCT") && tr_str(op, "distinct_type")[0])
        return tr_unsupported(x, op, "DISTINCT ON");
    /* DISTINCT over all columns (targets are the input's columns) */
    if (cJSON_GetArraySize(targets) != in->ncols) return tr_unsupported(x, op, "DISTINCT ON");
    return tr_distinct(x, in);
}

/* ---- dispatch ---- */

tr_rel *tr_unary(tr_ctx *x, const cJSON *op, tr_rel *in) {
    const char *type = tr_str(op, "type");
    if (!strcmp(type, "LOGICAL_FILTER")) return op_filter(x, op, in);
    if (!strcmp(type, "LOGICAL_PROJECTION")) return op_projection(x, op, in);
    if (!strcmp(type, "LOGICAL_AGGREGATE_AND_GROUP_BY")) return tr_aggregate(x, op, in);
    if (!strcmp(type, "LOGICAL_ORDER_BY")) return op_order(x, op, in);
    if (!strcmp(type, "LOGICAL_TOP_N")) return op_top_n(x, op, in);
    if (!strcmp(type, "LOGICAL_LIMIT")) return op_limit(x, op, in);
    if (!strcmp(type, "LOGICAL_EXPRESSION_GET")) return op_expression_get(x, op, in);
    if (!strcmp(type, "LOGICAL_DISTINCT")) return op_distinct(x, op, in);
    return tr_fail(x, DKB_EINTERNAL, "plan: %s is not an operator of one input", type);
}

tr_rel *tr_op(tr_ctx *x, const cJSON *op) {
    if (x->failed) return NULL;
    const char *type = tr_str(op, "type");
    x->depth++;
    tr_rel *r = NULL;
    if (!strcmp(type, "LOGICAL_GET")) r = op_get(x, op);
    else if (!strcmp(type, "LOGICAL_CHUNK_GET")) r = op_chunk_get(x, op);
    else if (!strcmp(type, "LOGICAL_DUMMY_SCAN")) r = tr_rel_new(x, 0, 1);
    else if (!strcmp(type, "LOGICAL_EMPTY_RESULT")) r = op_empty(x, op);
    else if (!strcmp(type, "LOGICAL_MATERIALIZED_CTE")) r = op_cte(x, op);
    else if (!strcmp(type, "LOGICAL_CTE_REF")) r = op_cte_ref(x, op);
    else if (!strcmp(type, "LOGICAL_DELIM_GET")) r = op_delim_get(x, op);
    else if (!strcmp(type, "LOGICAL_UNION") || !strcmp(type, "LOGICAL_EXCEPT") || !strcmp(type, "LOGICAL_INTERSECT"))
        r = op_setop(x, op, type);
    else if (!strcmp(type, "LOGICAL_COMPARISON_JOIN") || !strcmp(type, "LOGICAL_DELIM_JOIN") ||
             !strcmp(type, "LOGICAL_CROSS_PRODUCT") || !strcmp(type, "LOGICAL_ANY_JOIN"))
        r = tr_join(x, op);
    else {
        static const char *const unary[] = {"LOGICAL_FILTER", "LOGICAL_PROJECTION", "LOGICAL_AGGREGATE_AND_GROUP_BY",
                                            "LOGICAL_ORDER_BY", "LOGICAL_TOP_N", "LOGICAL_LIMIT",
                                            "LOGICAL_EXPRESSION_GET", "LOGICAL_DISTINCT"};
        int u = -1;
        for (int i = 0; i < (int)(sizeof unary / sizeof unary[0]); i++)
            if (!strcmp(type, unary[i])) u = i;
        if (u < 0) {
            x->depth--;
            return tr_unsupported(x, op, "operator %s", type[0] ? type + (strncmp(type, "LOGICAL_", 8) ? 0 : 8) : "?");
        }
        if (cJSON_GetArraySize(children(op)) != 1) {
            x->depth--;
            return tr_fail(x, DKB_EINTERNAL, "plan: %s with %d inputs", type, cJSON_GetArraySize(children(op)));
        }
        bool done = false;
        if (u == 2) r = tr_aggregate_join_chunked(x, op, &done); /* an aggregate over a join */
        if (!done) {
            tr_rel *in = tr_op(x, child(op, 0));
            if (in) r = tr_unary(x, op, in);
        }
    }
    x->depth--;
    if (r && tr_bad(x)) r = NULL;
    return r;
}
