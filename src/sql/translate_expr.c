/* translate_expr.c: DuckDB's bound expressions (BOUND_REF, constants,
 * casts, comparisons, AND/OR/NOT with SQL's three-valued logic, IN,
 * IS NULL, COALESCE, CASE, arithmetic with DuckDB's decimal scales) as
 * TensorPlan operations over a relation's columns. Functions of one string
 * column run once per dictionary entry when the column is dictionary-coded
 * (translate_strfn.c); dates are days. Anything else is refused with its
 * name (tr_unsupported). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/date.h"  // defines: dkb__civil_from_days
#include "sql/translate_internal.h"
#include "sql/translate_strfn.h"

static const cJSON *child_at(const cJSON *e, int i) { return cJSON_GetArrayItem(tr_get(e, "children"), i); }
static int nchildren(const cJSON *e) { return cJSON_GetArraySize(tr_get(e, "children")); }

bool tr_val_col(tr_ctx *x, const tr_val *v, int64_t n, tr_col *out) {
    if (!v->is_const) {
        *out = v->c;
        return out->v != NULL || !tr_bad(x);
    }
    return tr_broadcast(x, &v->k, n, out);
}

bool tr_eval_col(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_col *out) {
    tr_val v;
    return tr_eval(x, e, in, &v) && tr_val_col(x, &v, in->n, out);
}

static tr_type ret_type(const cJSON *e) { return tr_parse_type(tr_get(e, "return_type")); }

static void set_col(tr_val *out, dkb_tensor *v, dkb_tensor *valid, tr_type ty) {
    memset(out, 0, sizeof *out);
    out->c.v = v;
    out->c.valid = valid;
    out->c.ty = ty;
}

/* ---- comparisons ---- */

typedef struct cmp_op {
    const char *name;
    dkb_cmp cmp;
    dkb_cmp flipped;
} cmp_op;
static const cmp_op CMPS[] = {
    {"COMPARE_EQUAL", DKB_CMP_EQ, DKB_CMP_EQ},        {"COMPARE_NOTEQUAL", DKB_CMP_NE, DKB_CMP_NE},
    {"COMPARE_LESSTHAN", DKB_CMP_LT, DKB_CMP_GT},     {"COMPARE_GREATERTHAN", DKB_CMP_GT, DKB_CMP_LT},
    {"COMPARE_LESSTHANOREQUALTO", DKB_CMP_LE, DKB_CMP_GE}, {"COMPARE_GREATERTHANOREQUALTO", DKB_CMP_GE, DKB_CMP_LE},
    {"COMPARE_NOT_DISTINCT_FROM", DKB_CMP_EQ, DKB_CMP_EQ}, {"COMPARE_DISTINCT_FROM", DKB_CMP_NE, DKB_CMP_NE},
};

static bool cmp_holds(dkb_cmp op, int c) {
    switch (op) {
    case DKB_CMP_EQ: return c == 0;
    case DKB_CMP_NE: return c != 0;
    case DKB_CMP_LT: return c < 0;
    case DKB_CMP_LE: return c <= 0;
    case DKB_CMP_GT: return c > 0;
    case DKB_CMP_GE: return c >= 0;
    }
    return false;
}

static double const_double(const tr_const *k) {
    if (k->ty.id == TY_DOUBLE) return k->f;
    double v = (double)k->i;
    for (int i = 0; i < k->ty.scale; i++) v /= 10;
    return v;
}

/* String column a OP constant or column b, values only. */
static dkb_tensor *cmp_strings(tr_ctx *x, dkb_cmp op, const tr_col *a, const tr_val *b, int64_t n) {
    dkb_tp *tp = x->tp;
    if (b->is_const && a->v->dtype == DKB_TP_U8 && a->v->dict) {
        const dkb_tp_dict *d = a->v->dict;
        bool *lut = tr_alloc(x, (size_t)d->size + 1);
        if (!lut) return NULL;
        for (int i = 0; i < d->size; i++) lut[i] = cmp_holds(op, tr_strcmp(d->str[i], d->len[i], b->k.s, b->k.slen));
        return tr_lut_mask(x, a->v, lut);
    }
    if (!b->is_const && a->v->dtype == DKB_TP_U8 && b->c.v->dtype == DKB_TP_U8 && a->v->dict == b->c.v->dict)
        return dkb_tp_cmp(tp, a->v, op, b->c.v);
    if (b->is_const && op == DKB_CMP_EQ && a->v->dtype == DKB_TP_STR && !memchr(b->k.s, '%', b->k.slen) &&
        !memchr(b->k.s, '_', b->k.slen) && strlen(b->k.s) == b->k.slen)
        return dkb_tp_like(tp, a->v, b->k.s);
    tr_hstr ha, hb;
    tr_col bc;
    if (!tr_host_strings(x, a, &ha)) return NULL;
    if (!b->is_const) {
        bc = b->c;
        if (!tr_host_strings(x, &bc, &hb)) return NULL;
    }
    uint8_t *m = malloc((size_t)(n ? n : 1));
    if (!m) return tr_fail(x, DKB_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        const char *bp = b->is_const ? b->k.s : hb.p[i];
        size_t bl = b->is_const ? b->k.slen : hb.len[i];
        m[i] = cmp_holds(op, tr_strcmp(ha.p[i], ha.len[i], bp, bl));
    }
    dkb_tensor *r = dkb_tp_from_host(tp, DKB_TP_BOOL, n, m);
    free(m);
    return r;
}

/* Numeric column a OP constant k, values only. */
static dkb_tensor *cmp_const(tr_ctx *x, dkb_cmp op, const tr_col *a, const tr_const *k, int64_t n) {
    if (a->v->dtype == DKB_TP_F64 || k->ty.id == TY_DOUBLE) return dkb_tp_cmp_f64(x->tp, a->v, op, const_double(k));
    int ks = k->ty.id == TY_DECIMAL ? k->ty.scale : 0, as = a->v->scale;
    if (ks <= as && as - ks <= 18) {
        __int128 v = k->i;
        for (int i = ks; i < as; i++) v *= 10;
        if (v <= INT64_MAX && v >= INT64_MIN) return dkb_tp_cmp_i64(x->tp, a->v, op, (int64_t)v);
    }
    tr_col kc;
    if (!tr_broadcast(x, k, n, &kc)) return NULL;
    return dkb_tp_cmp(x->tp, a->v, op, kc.v);
}

bool tr_compare(tr_ctx *x, const char *opname, const tr_val *a0, const tr_val *b0, int64_t n, const cJSON *node,
                tr_col *out) {
    const cmp_op *op = NULL;
    for (size_t i = 0; i < sizeof CMPS / sizeof CMPS[0]; i++)
        if (!strcmp(CMPS[i].name, opname)) op = &CMPS[i];
    if (!op) return tr_unsupported(x, node, "comparison %s", opname), false;
    bool distinct = strstr(opname, "DISTINCT") != NULL;
    tr_val a = *a0, b = *b0;
    dkb_cmp c = op->cmp;
    if (a.is_const && !b.is_const) {
        tr_val t = a;
        a = b, b = t;
        c = op->flipped;
    }
    memset(out, 0, sizeof *out);
    out->ty = tr_ty(TY_BOOL);
    if (b.is_const && b.k.null && !distinct) return tr_broadcast(x, &b.k, n, out) && (out->ty = tr_ty(TY_BOOL), true);
    tr_col ac;
    if (!tr_val_col(x, &a, n, &ac)) return false;
    if (b.is_const && b.k.null) { /* x IS [NOT] DISTINCT FROM NULL */
        out->v = ac.valid ? (c == DKB_CMP_EQ ? dkb_tp_not(x->tp, ac.valid) : ac.valid)
                          : dkb_tp_full_i64(x->tp, DKB_TP_BOOL, n, c != DKB_CMP_EQ);
        return !tr_bad(x);
    }
    bool str = ac.ty.id == TY_VARCHAR || (b.is_const ? b.k.ty.id == TY_VARCHAR : b.c.ty.id == TY_VARCHAR);
    if (str && (ac.ty.id != TY_VARCHAR || (b.is_const ? b.k.ty.id != TY_VARCHAR : b.c.ty.id != TY_VARCHAR)))
        return tr_unsupported(x, node, "comparing a string with a %s", ac.ty.id == TY_VARCHAR ? "non-string" : ac.ty.name),
               false;
    if (str) out->v = cmp_strings(x, c, &ac, &b, n);
    else if (b.is_const) out->v = cmp_const(x, c, &ac, &b.k, n);
    else out->v = dkb_tp_cmp(x->tp, ac.v, c, b.c.v);
    dkb_tensor *bvalid = b.is_const ? NULL : b.c.valid;
    if (distinct && (ac.valid || bvalid)) {
        /* NULLs compare equal to each other and unequal to values */
        dkb_tensor *va = tr_valid_or_ones(x, &ac, n), *vb = bvalid ? bvalid : tr_ones(x, n);
        dkb_tensor *both = dkb_tp_and(x->tp, va, vb);
        dkb_tensor *same_null = dkb_tp_cmp(x->tp, va, DKB_CMP_EQ, vb);
        dkb_tensor *eq = c == DKB_CMP_EQ ? out->v : dkb_tp_not(x->tp, out->v);
        dkb_tensor *r = dkb_tp_or(x->tp, dkb_tp_and(x->tp, both, eq),
                                  dkb_tp_and(x->tp, dkb_tp_not(x->tp, both), dkb_tp_and(x->tp, same_null,
                                                                                    dkb_tp_not(x->tp, va))));
        out->v = c == DKB_CMP_EQ ? r : dkb_tp_not(x->tp, r);
    } else if (!distinct) {
        out->valid = tr_and_valid(x, ac.valid, bvalid);
    }
    return !tr_bad(x);
}

/* ---- predicates over one dictionary-coded column ---- */

/* A column of `in` that is dictionary-coded VARCHAR without NULLs (a
 * pending gather keeps the codes' dictionary; a missed row would be NULL). */
static const tr_col *dict_ref(const cJSON *e, const tr_rel *in, int *col) {
    if (strcmp(tr_str(e, "expression_class"), "BOUND_REF")) return NULL;
    int64_t i = tr_int(e, "index", -1);
    if (i < 0 || i >= in->ncols) return NULL;
    const tr_col *c = &in->c[i];
    if (c->ty.id != TY_VARCHAR || !c->v || c->v->dtype != DKB_TP_U8 || !c->v->dict || c->valid || c->miss) return NULL;
    if (*col >= 0 && *col != (int)i) return NULL;
    *col = (int)i;
    return c;
}

/* A non-NULL VARCHAR constant. */
static bool str_const(tr_ctx *x, const cJSON *e, tr_const *k) {
    if (strcmp(tr_str(e, "expression_class"), "BOUND_CONSTANT")) return false;
    const cJSON *v = tr_get(e, "value");
    if (strcmp(tr_str(tr_get(v, "type"), "id"), "VARCHAR") || cJSON_IsTrue(tr_get(v, "is_null"))) return false;
    return tr_parse_const(x, v, k) && !k->null && k->s;
}

/* e as a predicate of one dictionary-coded column of `in` without NULLs
 * (comparisons with string constants, IN lists of them, NOT, AND, OR over
 * the same column): lut[i] is e's value for dictionary entry i (never
 * NULL, as neither the column nor the constants are); *col is the column.
 * A tree of such tests is then one dkb_tp_lookup_mask instead of one per
 * test and a logic operation per AND/OR. False (nothing ran, nothing
 * failed) when e is not such a predicate. */
static bool dict_pred(tr_ctx *x, const cJSON *e, const tr_rel *in, int *col, bool **lut, int depth) {
    if (depth > 32 || x->failed) return false;
    const char *cls = tr_str(e, "expression_class");
    if (!strcmp(cls, "BOUND_COMPARISON")) {
        const cmp_op *op = NULL;
        for (size_t i = 0; i < sizeof CMPS / sizeof CMPS[0]; i++)
            if (!strcmp(CMPS[i].name, tr_str(e, "type"))) op = &CMPS[i];
        if (!op) return false;
        const cJSON *l = tr_get(e, "left"), *r = tr_get(e, "right");
        dkb_cmp c = op->cmp;
        if (!strcmp(tr_str(l, "expression_class"), "BOUND_CONSTANT")) {
            const cJSON *t = l;
            l = r, r = t;
            c = op->flipped;
        }
        tr_const k;
        const tr_col *a = dict_ref(l, in, col);
        if (!a || !str_const(x, r, &k)) return false;
        const dkb_tp_dict *d = a->v->dict;
        *lut = tr_alloc(x, (size_t)d->size + 1);
        if (!*lut) return false;
        for (int i = 0; i < d->size; i++) (*lut)[i] = cmp_holds(c, tr_strcmp(d->str[i], d->len[i], k.s, k.slen));
        return true;
    }
    if (!strcmp(cls, "BOUND_OPERATOR")) {
        const char *t = tr_str(e, "type");
        int k = nchildren(e);
        if (!strcmp(t, "OPERATOR_NOT")) {
            if (k != 1 || !dict_pred(x, child_at(e, 0), in, col, lut, depth + 1)) return false;
            const dkb_tp_dict *d = in->c[*col].v->dict;
            for (int i = 0; i < d->size; i++) (*lut)[i] = !(*lut)[i];
            return true;
        }
        bool not_in = !strcmp(t, "COMPARE_NOT_IN");
        if ((strcmp(t, "COMPARE_IN") && !not_in) || k < 2) return false;
        const tr_col *a = dict_ref(child_at(e, 0), in, col);
        if (!a) return false;
        const dkb_tp_dict *d = a->v->dict;
        bool *m = tr_alloc(x, (size_t)d->size + 1);
        if (!m) return false;
        for (int j = 1; j < k; j++) {
            tr_const c;
            if (!str_const(x, child_at(e, j), &c)) return false;
            for (int i = 0; i < d->size; i++) m[i] |= !tr_strcmp(d->str[i], d->len[i], c.s, c.slen);
        }
        for (int i = 0; not_in && i < d->size; i++) m[i] = !m[i];
        *lut = m;
        return true;
    }
    if (!strcmp(cls, "BOUND_CONJUNCTION")) {
        bool is_and = !strcmp(tr_str(e, "type"), "CONJUNCTION_AND");
        if (!is_and && strcmp(tr_str(e, "type"), "CONJUNCTION_OR")) return false;
        const cJSON *ch = tr_get(e, "children");
        int k = cJSON_GetArraySize(ch);
        if (k < 1) return false;
        bool *acc = NULL;
        for (int j = 0; j < k; j++) {
            bool *m;
            if (!dict_pred(x, cJSON_GetArrayItem(ch, j), in, col, &m, depth + 1)) return false;
            if (!acc) {
                acc = m;
                continue;
            }
            const dkb_tp_dict *d = in->c[*col].v->dict;
            for (int i = 0; i < d->size; i++) acc[i] = is_and ? acc[i] && m[i] : acc[i] || m[i];
        }
        *lut = acc;
        return true;
    }
    return false;
}

/* e through dict_pred: one lookup mask; false when e is not such (nothing ran). */
static bool eval_dict_pred(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out) {
    int col = -1;
    bool *lut = NULL;
    if (!dict_pred(x, e, in, &col, &lut, 0)) return false;
    tr_col *c = (tr_col *)&in->c[col];
    if (!tr_col_ready(x, c)) return false;
    set_col(out, tr_lut_mask(x, c->v, lut), NULL, tr_ty(TY_BOOL));
    return true;
}

/* ---- casts ---- */

static bool int_type(tr_tyid t) { return t == TY_INT || t == TY_BIGINT || t == TY_HUGEINT || t == TY_BOOL; }
static bool exact_type(tr_tyid t) { return int_type(t) || t == TY_DECIMAL; }
static int scale_of(tr_type t) { return t.id == TY_DECIMAL ? t.scale : 0; }

static dkb_tp_dtype int_dtype(tr_type t) {
    switch (t.id) {
    case TY_INT:
    case TY_DATE: return DKB_TP_I32;
    case TY_HUGEINT: return DKB_TP_I128;
    case TY_DECIMAL: return t.width > 18 ? DKB_TP_I128 : DKB_TP_I64;
    default: return DKB_TP_I64;
    }
}

/* A double rounded to an integer at scale s (DuckDB: to nearest, half away). */
static dkb_tensor *double_to_exact(tr_ctx *x, const dkb_tensor *t, int s) {
    double *h = tr_host_f64(x, t);
    if (!h) return NULL;
    int64_t *o = malloc((size_t)(t->n ? t->n : 1) * sizeof *o);
    if (!o) return tr_fail(x, DKB_ENOMEM, "out of memory");
    for (int64_t i = 0; i < t->n; i++) o[i] = (int64_t)llround(h[i] * pow(10, s));
    dkb_tensor *r = dkb_tp_from_host(x->tp, DKB_TP_I64, t->n, o);
    free(o);
    return tr_relabel(x, r, s, NULL);
}

static bool format_const(tr_ctx *x, const tr_const *k, tr_const *out) {
    char buf[64];
    if (k->ty.id == TY_DATE) {
        int y, m, d;
        dkb__civil_from_days((int32_t)k->i, &y, &m, &d);
        snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, d);
    } else if (k->ty.id == TY_DOUBLE) {
        snprintf(buf, sizeof buf, "%.17g", k->f);
    } else if (exact_type(k->ty.id)) {
        __int128 v = k->i < 0 ? -k->i : k->i;
        int s = scale_of(k->ty);
        char dig[48];
        int nd = 0;
        do dig[nd++] = (char)('0' + (int)(v % 10)), v /= 10;
        while (v || nd <= s);
        size_t p = 0;
        if (k->i < 0) buf[p++] = '-';
        for (int i = nd - 1; i >= 0; i--) {
            buf[p++] = dig[i];
            if (i == s && s > 0) buf[p++] = '.';
        }
        buf[p] = 0;
    } else {
        return false;
    }
    *out = *k;
    out->ty = tr_ty(TY_VARCHAR);
    out->s = tr_strndup(x, buf, strlen(buf));
    out->slen = strlen(buf);
    return out->s != NULL;
}

static bool cast_const(tr_ctx *x, const tr_const *k, tr_type to, tr_const *out) {
    *out = *k;
    out->ty = to;
    if (k->null) return true;
    tr_tyid f = k->ty.id;
    if (to.id == TY_VARCHAR) return f == TY_VARCHAR ? true : format_const(x, k, out);
    if (to.id == TY_DOUBLE) {
        if (f == TY_VARCHAR) out->f = strtod(k->s, NULL);
        else out->f = const_double(k);
        return true;
    }
    if (exact_type(to.id) || to.id == TY_DATE) {
        int ts = scale_of(to), fs = scale_of(k->ty);
        if (f == TY_DOUBLE) {
            out->i = (__int128)llround(k->f * pow(10, ts));
            return true;
        }
        if (f == TY_VARCHAR || (f == TY_DATE) != (to.id == TY_DATE)) return false;
        __int128 v = k->i;
        for (; fs < ts; fs++) v *= 10;
        if (fs > ts) {
            __int128 p = 1;
            for (int i = ts; i < fs; i++) p *= 10;
            __int128 q = v / p, r = v % p;
            if (r < 0 ? -2 * r >= p : 2 * r >= p) q += v < 0 ? -1 : 1;
            v = q;
        }
        out->i = to.id == TY_BOOL ? v != 0 : v;
        return true;
    }
    return false;
}

bool tr_cast(tr_ctx *x, const tr_val *a, tr_type to, int64_t n, const cJSON *node, tr_val *out) {
    tr_tyid f = a->is_const ? a->k.ty.id : a->c.ty.id;
    tr_type from = a->is_const ? a->k.ty : a->c.ty;
    if (a->is_const) {
        out->is_const = true;
        if (cast_const(x, &a->k, to, &out->k)) return true;
        return tr_unsupported(x, node, "CAST(%s AS %s)", from.name, to.name), false;
    }
    *out = *a;
    out->c.ty = to;
    dkb_tensor *v = a->c.v;
    if (f == TY_NULL) return true;
    if (f == to.id && (to.id != TY_DECIMAL || from.scale == to.scale)) return true;
    if (to.id == TY_DOUBLE && (exact_type(f) || f == TY_DOUBLE)) {
        out->c.v = dkb_tp_cast(x->tp, v, DKB_TP_F64);
    } else if ((exact_type(to.id)) && exact_type(f)) {
        dkb_tensor *r = tr_rescale(x, v, scale_of(to));
        if (to.id == TY_BOOL) r = dkb_tp_cast(x->tp, r, DKB_TP_BOOL);
        else if (r && r->dtype != int_dtype(to) && !(r->dtype == DKB_TP_I128 && int_dtype(to) == DKB_TP_I64))
            r = tr_relabel(x, dkb_tp_cast(x->tp, r, int_dtype(to)), scale_of(to), NULL);
        out->c.v = r;
    } else if (exact_type(to.id) && f == TY_DOUBLE) {
        out->c.v = double_to_exact(x, v, scale_of(to));
    } else if (to.id == TY_VARCHAR && (exact_type(f) || f == TY_DATE)) {
        return tr_strfn_format(x, &a->c, n, &out->c);
    } else {
        return tr_unsupported(x, node, "CAST(%s AS %s)", from.name, to.name), false;
    }
    return !tr_bad(x);
}

/* ---- logic ---- */

static bool logic(tr_ctx *x, bool is_and, const tr_col *a, const tr_col *b, int64_t n, tr_col *res) {
    dkb_tp *tp = x->tp;
    tr_col r = {.ty = tr_ty(TY_BOOL)}, *out = &r; /* res may be a or b */
    dkb_tensor *av = tr_truth(x, &(tr_col){.v = a->v, .ty = a->ty}), *bv = tr_truth(x, &(tr_col){.v = b->v, .ty = b->ty});
    if (!a->valid && !b->valid) {
        out->v = is_and ? dkb_tp_and(tp, av, bv) : dkb_tp_or(tp, av, bv);
        *res = r;
        return !tr_bad(x);
    }
    dkb_tensor *va = tr_valid_or_ones(x, a, n), *vb = tr_valid_or_ones(x, b, n);
    dkb_tensor *ta = dkb_tp_and(tp, av, va), *tb = dkb_tp_and(tp, bv, vb);
    dkb_tensor *fa = dkb_tp_and(tp, dkb_tp_not(tp, av), va), *fb = dkb_tp_and(tp, dkb_tp_not(tp, bv), vb);
    dkb_tensor *t = is_and ? dkb_tp_and(tp, ta, tb) : dkb_tp_or(tp, ta, tb);
    dkb_tensor *fl = is_and ? dkb_tp_or(tp, fa, fb) : dkb_tp_and(tp, fa, fb);
    out->v = t;
    out->valid = dkb_tp_or(tp, t, fl);
    *res = r;
    return !tr_bad(x);
}

/* ---- arithmetic ---- */

/* Constant k as an integer cu at scale cs with cu / 10^cs (as a correctly
 * rounded double division, as the backends take a scalar) equal to k's
 * value: exact integers and decimals of 64 bits, doubles such as 0.2 or
 * 7.0 (|cu| < 2^53). */
static bool const_units(const tr_const *k, int64_t *cu, int *cs) {
    if (k->null) return false;
    if (k->ty.id == TY_DOUBLE) {
        if (!isfinite(k->f)) return false;
        double p = 1;
        for (int s = 0; s <= 17; s++, p *= 10) {
            double v = k->f * p;
            if (fabs(v) >= 9007199254740992.0) return false;
            double rv = nearbyint(v);
            if ((double)(int64_t)rv / p == k->f) {
                *cu = (int64_t)rv, *cs = s;
                return true;
            }
        }
        return false;
    }
    if (!exact_type(k->ty.id) || k->i > INT64_MAX || k->i < INT64_MIN || scale_of(k->ty) > 18) return false;
    *cu = (int64_t)k->i, *cs = scale_of(k->ty);
    return true;
}

/* a OP b for + - * / with DuckDB's result type rt. */
static bool arith(tr_ctx *x, dkb_arith op, const tr_val *a0, const tr_val *b0, tr_type rt, int64_t n,
                  const cJSON *node, tr_val *out) {
    dkb_tp *tp = x->tp;
    tr_val a = *a0, b = *b0;
    tr_type at = a.is_const ? a.k.ty : a.c.ty, bt = b.is_const ? b.k.ty : b.c.ty;
    if (at.id == TY_VARCHAR || bt.id == TY_VARCHAR || at.id == TY_OTHER || bt.id == TY_OTHER)
        return tr_unsupported(x, node, "arithmetic on %s and %s", at.name, bt.name), false;
    if ((a.is_const && a.k.null) || (b.is_const && b.k.null)) {
        out->is_const = true;
        memset(&out->k, 0, sizeof out->k);
        out->k.null = true;
        out->k.ty = rt;
        return true;
    }
    bool dbl = rt.id == TY_DOUBLE || op == DKB_OP_DIV;
    if (dbl && op != DKB_OP_DIV && (a.is_const ? a.k.ty.id != TY_DOUBLE : a.c.v->dtype != DKB_TP_F64)) {
        tr_val t;
        if (!tr_cast(x, &a, tr_ty(TY_DOUBLE), n, node, &t)) return false;
        a = t;
    }
    tr_col ac, bc;
    dkb_tensor *r = NULL;
    if (a.is_const && !b.is_const && (op == DKB_OP_ADD || op == DKB_OP_MUL)) {
        tr_val t = a;
        a = b, b = t;
    }
    /* constant - column: one dkb_tp_rsub_i64 (1 - l_discount), no column of the constant */
    if (a.is_const && !b.is_const && op == DKB_OP_SUB && !dbl && exact_type(a.k.ty.id) && a.k.i <= INT64_MAX &&
        a.k.i >= INT64_MIN && b.c.v && b.c.v->dtype != DKB_TP_F64) {
        dkb_tensor *bv = b.c.v;
        if (exact_type(rt.id) && int_dtype(rt) == DKB_TP_I128 && bv->dtype != DKB_TP_I128) bv = dkb_tp_cast(tp, bv, DKB_TP_I128);
        r = dkb_tp_rsub_i64(tp, (int64_t)a.k.i, scale_of(a.k.ty), bv);
        if (!r) return tr_bad(x), false;
        if (rt.id == TY_DECIMAL || (exact_type(rt.id) && r->scale != 0)) r = tr_rescale(x, r, scale_of(rt));
        if (rt.id == TY_DATE || rt.id == TY_INT) r = dkb_tp_cast(tp, r, DKB_TP_I32);
        set_col(out, r, b.c.valid, rt);
        return !tr_bad(x);
    }
    if (!tr_val_col(x, &a, n, &ac)) return false;
    /* a result wider than 18 digits (DuckDB: HUGEINT, DECIMAL(19..38)) is computed in int128 */
    if (!dbl && exact_type(rt.id) && int_dtype(rt) == DKB_TP_I128 && ac.v->dtype != DKB_TP_I128 &&
        ac.v->dtype != DKB_TP_F64)
        ac.v = dkb_tp_cast(tp, ac.v, DKB_TP_I128);
    bool small_const = b.is_const && b.k.ty.id != TY_DOUBLE && !dbl && b.k.i <= INT64_MAX && b.k.i >= INT64_MIN &&
                       op != DKB_OP_DIV;
    dkb_tensor *bvalid = NULL;
    int64_t cu;
    int cs;
    if (small_const) {
        r = dkb_tp_arith_i64(tp, ac.v, op, (int64_t)b.k.i, scale_of(b.k.ty));
    } else if (dbl && b.is_const && const_units(&b.k, &cu, &cs) && ac.v->dtype != DKB_TP_STR) {
        /* column OP a double constant that is cu / 10^cs exactly (0.2, 7.0):
         * the backend's scalar takes that quotient, correctly rounded, so
         * the same double; no column of the constant */
        dkb_tensor *av = ac.v->dtype == DKB_TP_F64 || op == DKB_OP_DIV ? ac.v : dkb_tp_cast(tp, ac.v, DKB_TP_F64);
        r = dkb_tp_arith_i64(tp, av, op, cu, cs);
    } else {
        if (!tr_val_col(x, &b, n, &bc)) return false;
        if (dbl && bc.v->dtype != DKB_TP_F64 && op != DKB_OP_DIV) bc.v = dkb_tp_cast(tp, bc.v, DKB_TP_F64);
        bvalid = bc.valid; /* x / 0 is IEEE's inf or nan, as DuckDB's double division gives */
        r = dkb_tp_arith(tp, ac.v, op, bc.v);
    }
    if (!r) return tr_bad(x), false;
    if (rt.id == TY_DECIMAL || (exact_type(rt.id) && r->scale != 0)) r = tr_rescale(x, r, scale_of(rt));
    if (rt.id == TY_DATE || rt.id == TY_INT) r = dkb_tp_cast(tp, r, DKB_TP_I32);
    set_col(out, r, tr_and_valid(x, ac.valid, bvalid), rt);
    return !tr_bad(x);
}

/* Integer % and // on the host (TensorPlan has no integer division). */
static bool int_divmod(tr_ctx *x, bool mod, const tr_col *a, const tr_col *b, tr_type rt, int64_t n, tr_val *out) {
    if (scale_of(a->ty) || scale_of(b->ty) || a->v->dtype == DKB_TP_F64 || b->v->dtype == DKB_TP_F64)
        return tr_unsupported(x, NULL, "%s on decimals or doubles", mod ? "%" : "//"), false;
    int64_t *ha = tr_host_i64(x, a->v), *hb = tr_host_i64(x, b->v);
    uint8_t *ok = tr_alloc(x, (size_t)(n ? n : 1));
    if (!ha || !hb || !ok) return false;
    for (int64_t i = 0; i < n; i++) {
        ok[i] = hb[i] != 0;
        ha[i] = hb[i] ? (mod ? ha[i] % hb[i] : ha[i] / hb[i]) : 0;
    }
    dkb_tensor *v = dkb_tp_from_host(x->tp, DKB_TP_I64, n, ha);
    dkb_tensor *valid = tr_and_valid(x, tr_and_valid(x, a->valid, b->valid), dkb_tp_from_host(x->tp, DKB_TP_BOOL, n, ok));
    set_col(out, rt.id == TY_INT ? dkb_tp_cast(x->tp, v, DKB_TP_I32) : v, valid, rt);
    return !tr_bad(x);
}

/* Date parts of DATE days on the host (year through TensorPlan). */
static bool date_part(tr_ctx *x, const char *part, const tr_col *d, int64_t n, const cJSON *node, tr_val *out) {
    if (!strcmp(part, "year")) {
        set_col(out, dkb_tp_cast(x->tp, dkb_tp_year(x->tp, dkb_tp_cast(x->tp, d->v, DKB_TP_I32)), DKB_TP_I64), d->valid,
                tr_ty(TY_BIGINT));
        return !tr_bad(x);
    }
    int which = !strcmp(part, "month") ? 1 : !strcmp(part, "day") ? 2 : !strcmp(part, "quarter") ? 3
              : !strcmp(part, "dayofweek") || !strcmp(part, "dow") ? 4 : !strcmp(part, "dayofyear") || !strcmp(part, "doy") ? 5 : 0;
    if (!which) return tr_unsupported(x, node, "date part '%s'", part), false;
    int64_t *h = tr_host_i64(x, d->v);
    if (!h) return false;
    for (int64_t i = 0; i < n; i++) {
        int y, m, dd;
        int32_t days = (int32_t)h[i];
        dkb__civil_from_days(days, &y, &m, &dd);
        switch (which) {
        case 1: h[i] = m; break;
        case 2: h[i] = dd; break;
        case 3: h[i] = (m - 1) / 3 + 1; break;
        case 4: h[i] = ((days % 7) + 7 + 4) % 7; break; /* 1970-01-01 was a Thursday (4); Sunday 0 */
        case 5: h[i] = days - dkb__days_from_civil(y, 1, 1) + 1; break;
        }
    }
    set_col(out, dkb_tp_from_host(x->tp, DKB_TP_I64, n, h), d->valid, tr_ty(TY_BIGINT));
    return !tr_bad(x);
}

static bool eval_children(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *v, int max) {
    int k = nchildren(e);
    if (k > max) return tr_unsupported(x, e, "function %s with %d arguments", tr_str(e, "name"), k), false;
    for (int i = 0; i < k; i++)
        if (!tr_eval(x, child_at(e, i), in, &v[i])) return false;
    return true;
}

/* abs() and round(x, digits) */
static bool numeric_fn(tr_ctx *x, const char *name, tr_val *v, int k, tr_type rt, int64_t n, const cJSON *e,
                       tr_val *out) {
    tr_col a;
    if (!tr_val_col(x, &v[0], n, &a)) return false;
    if (!strcmp(name, "abs")) {
        dkb_tensor *neg = a.v->dtype == DKB_TP_F64 ? dkb_tp_cmp_f64(x->tp, a.v, DKB_CMP_LT, 0)
                                                   : dkb_tp_cmp_i64(x->tp, a.v, DKB_CMP_LT, 0);
        dkb_tensor *m = dkb_tp_arith_i64(x->tp, a.v, DKB_OP_MUL, -1, 0);
        set_col(out, dkb_tp_where(x->tp, neg, m, a.v), a.valid, rt);
        return !tr_bad(x);
    }
    /* round */
    int digits = 0;
    if (k > 1) {
        if (!v[1].is_const) return tr_unsupported(x, e, "round() with a non-constant precision"), false;
        digits = (int)v[1].k.i;
    }
    if (a.v->dtype == DKB_TP_F64) {
        double *h = tr_host_f64(x, a.v);
        if (!h) return false;
        double p = pow(10, digits);
        for (int64_t i = 0; i < n; i++) h[i] = round(h[i] * p) / p;
        set_col(out, dkb_tp_from_host(x->tp, DKB_TP_F64, n, h), a.valid, rt);
        return !tr_bad(x);
    }
    int target = rt.id == TY_DECIMAL ? rt.scale : 0;
    int keep = digits < a.v->scale ? (digits < 0 ? 0 : digits) : a.v->scale;
    dkb_tensor *r = tr_rescale(x, tr_rescale(x, a.v, keep), target);
    set_col(out, r, a.valid, rt);
    return !tr_bad(x);
}

static bool function(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out) {
    const char *name = tr_str(e, "name");
    tr_type rt = ret_type(e);
    int64_t n = in->n;
    int k = nchildren(e);
    tr_val v[8];
    static const struct {
        const char *name;
        dkb_arith op;
    } ar[] = {{"+", DKB_OP_ADD}, {"-", DKB_OP_SUB}, {"*", DKB_OP_MUL}, {"/", DKB_OP_DIV},
              {"add", DKB_OP_ADD}, {"subtract", DKB_OP_SUB}, {"multiply", DKB_OP_MUL}, {"divide", DKB_OP_DIV},
              {"least", DKB_OP_MIN}, {"greatest", DKB_OP_MAX}};
    for (size_t i = 0; i < sizeof ar / sizeof ar[0]; i++) {
        if (strcmp(name, ar[i].name)) continue;
        if (!eval_children(x, e, in, v, 8)) return false;
        if (k == 1 && ar[i].op == DKB_OP_SUB) { /* unary minus */
            tr_val zero = {.is_const = true};
            zero.k.ty = v[0].is_const ? v[0].k.ty : v[0].c.ty;
            if (zero.k.ty.id == TY_DOUBLE) zero.k.f = 0;
            return arith(x, DKB_OP_SUB, &zero, &v[0], rt, n, e, out);
        }
        if (k == 1 && ar[i].op == DKB_OP_ADD) return *out = v[0], true;
        if (k < 2) break;
        tr_val acc = v[0];
        for (int j = 1; j < k; j++) {
            tr_val r;
            if (!arith(x, ar[i].op, &acc, &v[j], rt, n, e, &r)) return false;
            acc = r;
        }
        *out = acc;
        return true;
    }
    if (!strcmp(name, "%") || !strcmp(name, "mod") || !strcmp(name, "//")) {
        if (!eval_children(x, e, in, v, 2) || k != 2) return false;
        tr_col a, b;
        if (!tr_val_col(x, &v[0], n, &a) || !tr_val_col(x, &v[1], n, &b)) return false;
        return int_divmod(x, name[0] != '/', &a, &b, rt, n, out);
    }
    if (!strcmp(name, "abs") || !strcmp(name, "round")) {
        if (!eval_children(x, e, in, v, 2)) return false;
        return numeric_fn(x, name, v, k, rt, n, e, out);
    }
    static const char *const parts[] = {"year", "month", "day", "quarter", "dayofweek", "dayofyear"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (strcmp(name, parts[i])) continue;
        if (!eval_children(x, e, in, v, 1)) return false;
        tr_col d;
        if (!tr_val_col(x, &v[0], n, &d)) return false;
        if (d.ty.id != TY_DATE) return tr_unsupported(x, e, "%s() of %s", name, d.ty.name), false;
        return date_part(x, name, &d, n, e, out);
    }
    if (!strcmp(name, "date_part") || !strcmp(name, "datepart") || !strcmp(name, "extract")) {
        if (!eval_children(x, e, in, v, 2) || k != 2) return false;
        tr_col d;
        if (!v[0].is_const || v[0].k.ty.id != TY_VARCHAR) return tr_unsupported(x, e, "%s with a computed part", name), false;
        if (!tr_val_col(x, &v[1], n, &d)) return false;
        if (d.ty.id != TY_DATE) return tr_unsupported(x, e, "%s of %s", name, d.ty.name), false;
        return date_part(x, v[0].k.s, &d, n, e, out);
    }
    if (!strcmp(name, "error"))
        return tr_fail(x, DKB_EINVAL, "the query raised an error: %s", "a scalar subquery returned more than one row"),
               false;
    /* string functions */
    if (tr_strfn_known(name)) {
        if (!eval_children(x, e, in, v, 8)) return false;
        return tr_strfn(x, name, v, k, rt, n, e, out);
    }
    return tr_unsupported(x, e, "function %s()", name), false;
}

/* ---- CASE, IN, COALESCE ---- */

static bool is_error_call(const cJSON *e) {
    return !strcmp(tr_str(e, "expression_class"), "BOUND_FUNCTION") && !strcmp(tr_str(e, "name"), "error");
}

/* cond ? a : b over columns of one SQL type. */
static bool select_col(tr_ctx *x, dkb_tensor *cond, const tr_col *a, const tr_col *b, int64_t n, tr_type rt,
                       tr_col *res) {
    dkb_tp *tp = x->tp;
    tr_col r = {.ty = rt}, *out = &r; /* res may be a or b */
    if (rt.id == TY_VARCHAR &&
        !(a->v->dtype == DKB_TP_U8 && b->v->dtype == DKB_TP_U8 && a->v->dict == b->v->dict)) {
        tr_hstr ha, hb;
        uint8_t *c = n ? dkb_tp_host_copy(tp, cond) : NULL;
        if (!tr_host_strings(x, a, &ha) || !tr_host_strings(x, b, &hb) || (n && !c)) return tr_bad(x), false;
        for (int64_t i = 0; i < n; i++)
            if (!c[i]) ha.p[i] = hb.p[i], ha.len[i] = hb.len[i];
        out->v = tr_str_from_host(x, &ha);
    } else {
        tr_col ca = *a, cb = *b;
        if (rt.id == TY_DOUBLE) {
            ca.v = dkb_tp_cast(tp, ca.v, DKB_TP_F64);
            cb.v = dkb_tp_cast(tp, cb.v, DKB_TP_F64);
        }
        out->v = dkb_tp_where(tp, cond, ca.v, cb.v);
        if (rt.id == TY_VARCHAR) out->v = tr_relabel(x, out->v, 0, a->v->dict);
        else if (rt.id == TY_DECIMAL) out->v = tr_rescale(x, out->v, rt.scale);
    }
    out->valid = a->valid || b->valid ? dkb_tp_where(tp, cond, tr_valid_or_ones(x, a, n), tr_valid_or_ones(x, b, n))
                                      : NULL;
    *res = r;
    return !tr_bad(x);
}

static bool eval_case(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out) {
    tr_type rt = ret_type(e);
    int64_t n = in->n;
    tr_col acc;
    const cJSON *els = tr_get(e, "else_expr");
    const cJSON *checks = tr_get(e, "case_checks");
    /* CASE WHEN c THEN 1 ELSE 0 END (or THEN 0 ELSE 1) of an integer type:
     * the condition's truth cast, not a select between two broadcasts */
    if (cJSON_GetArraySize(checks) == 1 && (rt.id == TY_INT || rt.id == TY_BIGINT) && els &&
        !strcmp(tr_str(els, "expression_class"), "BOUND_CONSTANT")) {
        const cJSON *ch = cJSON_GetArrayItem(checks, 0), *th = tr_get(ch, "then_expr");
        tr_val tv, cv, ev, evc;
        if (!strcmp(tr_str(th, "expression_class"), "BOUND_CONSTANT") && !is_error_call(th)) {
            if (!tr_eval(x, th, in, &tv) || !tr_cast(x, &tv, rt, n, th, &cv) || !tr_eval(x, els, in, &ev) ||
                !tr_cast(x, &ev, rt, n, els, &evc))
                return false;
            if (cv.is_const && evc.is_const && !cv.k.null && !evc.k.null &&
                ((cv.k.i == 1 && evc.k.i == 0) || (cv.k.i == 0 && evc.k.i == 1))) {
                tr_col cond;
                if (!tr_eval_col(x, tr_get(ch, "when_expr"), in, &cond)) return false;
                dkb_tensor *m = tr_truth(x, &cond);
                if (cv.k.i == 0) m = dkb_tp_not(x->tp, m);
                set_col(out, dkb_tp_cast(x->tp, m, int_dtype(rt)), NULL, rt);
                return !tr_bad(x);
            }
        }
    }
    tr_val ev;
    if (els && !cJSON_IsNull(els)) {
        if (is_error_call(els)) return tr_unsupported(x, els, "error() in ELSE"), false;
        if (!tr_eval(x, els, in, &ev)) return false;
        tr_val cv;
        if (!tr_cast(x, &ev, rt, n, els, &cv) || !tr_val_col(x, &cv, n, &acc)) return false;
    } else {
        tr_const null = {.ty = rt, .null = true};
        if (!tr_broadcast(x, &null, n, &acc)) return false;
    }
    for (int i = cJSON_GetArraySize(checks) - 1; i >= 0; i--) {
        const cJSON *ch = cJSON_GetArrayItem(checks, i);
        tr_col cond;
        if (!tr_eval_col(x, tr_get(ch, "when_expr"), in, &cond)) return false;
        dkb_tensor *m = tr_truth(x, &cond);
        const cJSON *th = tr_get(ch, "then_expr");
        if (is_error_call(th)) {
            /* DuckDB's guard of a scalar subquery: fails only when a row takes it */
            if (dkb_tp_count(x->tp, m) > 0)
                return tr_fail(x, DKB_EINVAL, "More than one row returned by a subquery used as an expression"), false;
            continue;
        }
        tr_val tv, cv;
        tr_col tc;
        if (!tr_eval(x, th, in, &tv) || !tr_cast(x, &tv, rt, n, th, &cv) || !tr_val_col(x, &cv, n, &tc)) return false;
        tr_col r;
        if (!select_col(x, m, &tc, &acc, n, rt, &r)) return false;
        acc = r;
    }
    memset(out, 0, sizeof *out);
    out->c = acc;
    out->c.ty = rt;
    return !tr_bad(x);
}

/* s IN (c1, ..., ck) on free text where every ci is L digits without a
 * leading zero (1 <= L <= 18; TPC-H Q22's country codes): s equals some ci
 * exactly when s has L bytes and its first L bytes parse to one of the
 * values (a string of L bytes whose parse has L digits is those digits), so
 * one length test and one integer IN replace k string comparisons. NULL
 * when the constants are not such (then nothing ran). */
static dkb_tensor *in_digit_strings(tr_ctx *x, const cJSON *e, const tr_col *ac) {
    int k = nchildren(e);
    if (ac->v->dtype != DKB_TP_STR || k < 3 || k > 1025) return NULL;
    int64_t *vals = tr_alloc(x, (size_t)k * sizeof *vals);
    if (!vals) return NULL;
    size_t len = 0;
    for (int i = 1; i < k; i++) {
        const cJSON *v = tr_get(child_at(e, i), "value");
        const cJSON *t = tr_get(v, "value");
        if (cJSON_IsTrue(tr_get(v, "is_null")) || !cJSON_IsString(t) || strcmp(tr_str(tr_get(v, "type"), "id"), "VARCHAR"))
            return NULL;
        const char *d = t->valuestring;
        size_t n = strlen(d);
        if (n < 1 || n > 18 || (len && n != len) || d[0] == '0') return NULL;
        int64_t val = 0;
        for (size_t j = 0; j < n; j++) {
            if (d[j] < '0' || d[j] > '9') return NULL;
            val = val * 10 + (d[j] - '0');
        }
        len = n;
        vals[i - 1] = val;
    }
    char pat[19];
    memset(pat, '_', len);
    pat[len] = 0;
    dkb_tp *tp = x->tp;
    /* strings of at most len bytes already (a substring's): their own first len bytes */
    dkb_tensor *head = tr_maxlen_get(x, ac->v) <= (int)len ? ac->v : dkb_tp_substr(tp, ac->v, 0, (int)len);
    dkb_tensor *num = dkb_tp_str_to_i64(tp, head);
    return dkb_tp_and(tp, dkb_tp_like(tp, ac->v, pat), dkb_tp_in_i64(tp, num, vals, k - 1));
}

static bool eval_in(tr_ctx *x, const cJSON *e, const tr_rel *in, bool negate, tr_val *out) {
    int k = nchildren(e);
    int64_t n = in->n;
    tr_val a;
    if (k < 2 || !tr_eval(x, child_at(e, 0), in, &a)) return false;
    tr_col ac;
    if (!tr_val_col(x, &a, n, &ac)) return false;
    bool all_const = true;
    for (int i = 1; i < k; i++)
        if (strcmp(tr_str(child_at(e, i), "expression_class"), "BOUND_CONSTANT")) all_const = false;
    dkb_tensor *m = NULL;
    if (all_const && exact_type(ac.ty.id) && ac.v->dtype != DKB_TP_F64) {
        int64_t *vals = tr_alloc(x, (size_t)k * sizeof *vals);
        int nv = 0;
        if (!vals) return false;
        for (int i = 1; i < k; i++) {
            tr_const c, cc;
            if (!tr_parse_const(x, tr_get(child_at(e, i), "value"), &c)) return false;
            if (c.null) continue;
            if (!cast_const(x, &c, ac.ty, &cc)) return tr_unsupported(x, e, "IN with a %s constant", c.ty.name), false;
            __int128 v = cc.i;
            for (int s = scale_of(ac.ty); s < ac.v->scale; s++) v *= 10;
            vals[nv++] = (int64_t)v;
        }
        m = dkb_tp_in_i64(x->tp, ac.v, vals, nv);
    } else if (all_const && ac.ty.id == TY_VARCHAR && (m = in_digit_strings(x, e, &ac))) {
        if (ac.valid) m = dkb_tp_and(x->tp, m, ac.valid);
    } else {
        if (tr_bad(x)) return false;
        for (int i = 1; i < k; i++) {
            tr_val b;
            tr_col c;
            if (!tr_eval(x, child_at(e, i), in, &b) || !tr_compare(x, "COMPARE_EQUAL", &a, &b, n, e, &c)) return false;
            m = m ? dkb_tp_or(x->tp, m, tr_truth(x, &c)) : tr_truth(x, &c);
        }
        m = tr_relabel(x, m, 0, NULL);
        if (m && ac.valid) m = dkb_tp_and(x->tp, m, ac.valid);
    }
    if (negate) m = dkb_tp_not(x->tp, m);
    set_col(out, m, ac.valid, tr_ty(TY_BOOL));
    return !tr_bad(x);
}

static bool eval_operator(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out) {
    const char *t = tr_str(e, "type");
    int64_t n = in->n;
    if (!strcmp(t, "COMPARE_IN") || !strcmp(t, "COMPARE_NOT_IN")) return eval_in(x, e, in, t[8] == 'N', out);
    if (!strcmp(t, "OPERATOR_COALESCE")) {
        tr_type rt = ret_type(e);
        int k = nchildren(e);
        tr_col acc;
        for (int i = k - 1; i >= 0; i--) {
            tr_val v, cv;
            tr_col c;
            if (!tr_eval(x, child_at(e, i), in, &v) || !tr_cast(x, &v, rt, n, e, &cv) || !tr_val_col(x, &cv, n, &c))
                return false;
            if (i == k - 1) acc = c;
            else if (!c.valid) acc = c;
            else if (!select_col(x, c.valid, &c, &acc, n, rt, &acc)) return false;
        }
        memset(out, 0, sizeof *out);
        out->c = acc;
        return true;
    }
    tr_col a;
    if (nchildren(e) != 1 || !tr_eval_col(x, child_at(e, 0), in, &a)) return tr_bad(x) ? false : (tr_unsupported(x, e, "operator %s", t), false);
    if (!strcmp(t, "OPERATOR_NOT")) {
        set_col(out, dkb_tp_not(x->tp, tr_truth(x, &(tr_col){.v = a.v, .ty = a.ty})), a.valid, tr_ty(TY_BOOL));
    } else if (!strcmp(t, "OPERATOR_IS_NULL") || !strcmp(t, "OPERATOR_IS_NOT_NULL")) {
        bool isnull = !strcmp(t, "OPERATOR_IS_NULL");
        dkb_tensor *v = a.valid ? (isnull ? dkb_tp_not(x->tp, a.valid) : a.valid)
                                : dkb_tp_full_i64(x->tp, DKB_TP_BOOL, n, !isnull);
        set_col(out, v, NULL, tr_ty(TY_BOOL));
    } else {
        return tr_unsupported(x, e, "operator %s", t), false;
    }
    return !tr_bad(x);
}

static bool eval_between(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out) {
    tr_val a, lo, hi;
    if (!tr_eval(x, tr_get(e, "input"), in, &a) || !tr_eval(x, tr_get(e, "lower"), in, &lo) ||
        !tr_eval(x, tr_get(e, "upper"), in, &hi))
        return false;
    bool li = cJSON_IsTrue(tr_get(e, "lower_inclusive")), ui = cJSON_IsTrue(tr_get(e, "upper_inclusive"));
    tr_col l, u;
    if (!tr_compare(x, li ? "COMPARE_GREATERTHANOREQUALTO" : "COMPARE_GREATERTHAN", &a, &lo, in->n, e, &l) ||
        !tr_compare(x, ui ? "COMPARE_LESSTHANOREQUALTO" : "COMPARE_LESSTHAN", &a, &hi, in->n, e, &u))
        return false;
    memset(out, 0, sizeof *out);
    return logic(x, true, &l, &u, in->n, &out->c);
}

bool tr_eval(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out) {
    memset(out, 0, sizeof *out);
    if (x->failed) return false;
    const char *cls = tr_str(e, "expression_class");
    if (!strcmp(cls, "BOUND_REF")) {
        int64_t i = tr_int(e, "index", -1);
        if (i < 0 || i >= in->ncols) return tr_fail(x, DKB_EINTERNAL, "plan: column #%lld of %d", (long long)i, in->ncols), false;
        /* a late gather happens here, once: the relation keeps the gathered column */
        tr_col *c = (tr_col *)&in->c[i];
        if (!tr_col_ready(x, c)) return false;
        out->c = *c;
        return true;
    }
    if (!strcmp(cls, "BOUND_CONSTANT")) {
        out->is_const = true;
        return tr_parse_const(x, tr_get(e, "value"), &out->k);
    }
    if (!strcmp(cls, "BOUND_CAST")) {
        tr_val c;
        if (cJSON_IsTrue(tr_get(e, "try_cast"))) return tr_unsupported(x, e, "TRY_CAST"), false;
        return tr_eval(x, tr_get(e, "child"), in, &c) && tr_cast(x, &c, ret_type(e), in->n, e, out);
    }
    if (!strcmp(cls, "BOUND_COMPARISON")) {
        tr_val a, b;
        return tr_eval(x, tr_get(e, "left"), in, &a) && tr_eval(x, tr_get(e, "right"), in, &b) &&
               tr_compare(x, tr_str(e, "type"), &a, &b, in->n, e, &out->c);
    }
    if ((!strcmp(cls, "BOUND_CONJUNCTION") || !strcmp(cls, "BOUND_OPERATOR")) && eval_dict_pred(x, e, in, out))
        return !tr_bad(x);
    if (x->failed) return false;
    if (!strcmp(cls, "BOUND_CONJUNCTION")) {
        bool is_and = !strcmp(tr_str(e, "type"), "CONJUNCTION_AND");
        const cJSON *ch = tr_get(e, "children");
        tr_col acc;
        for (int i = 0; i < cJSON_GetArraySize(ch); i++) {
            tr_col c;
            if (!tr_eval_col(x, cJSON_GetArrayItem(ch, i), in, &c)) return false;
            if (i == 0) acc = c;
            else if (!logic(x, is_and, &acc, &c, in->n, &acc)) return false;
        }
        out->c = acc;
        out->c.ty = tr_ty(TY_BOOL);
        return true;
    }
    if (!strcmp(cls, "BOUND_OPERATOR")) return eval_operator(x, e, in, out);
    if (!strcmp(cls, "BOUND_FUNCTION")) return function(x, e, in, out);
    if (!strcmp(cls, "BOUND_CASE")) return eval_case(x, e, in, out);
    if (!strcmp(cls, "BOUND_BETWEEN")) return eval_between(x, e, in, out);
    if (!strcmp(cls, "BOUND_AGGREGATE")) return tr_unsupported(x, e, "aggregate %s() here", tr_str(e, "name")), false;
    if (!strcmp(cls, "BOUND_WINDOW")) return tr_unsupported(x, e, "window function %s()", tr_str(e, "name")), false;
    return tr_unsupported(x, e, "expression %s", cls[0] ? cls : "?"), false;
}
