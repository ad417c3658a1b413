/* tp_api.c: the public TensorPlan operations: argument checks (NULL inputs,
 * dtypes, lengths, sticky errors) and dispatch to the context's backend.
 * Host-only helpers on dictionaries (like_dict, dict_code) live here too. */
#include <string.h>

#include "tensor/like.h"
#include "tensor/tp_internal.h"

/* An operation given a NULL tensor returns NULL; the error is normally
 * recorded already (the op that made it failed), else it is recorded here. */
#define NEED(tp, op, x)                                                         \
    do {                                                                        \
        if (!(x)) return dkb__tp_error((tp), DKB_EINVAL, "%s: NULL argument", (op)); \
    } while (0)
#define CHECK(tp, cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) return dkb__tp_error((tp), DKB_EINVAL, __VA_ARGS__);      \
    } while (0)

static const char *dtype_name(dkb_tp_dtype t) {
    static const char *const names[] = {"BOOL", "U8", "I8", "I16", "I32", "I64", "I128", "F64", "STR"};
    return (unsigned)t < DKB_TP_NTYPES ? names[t] : "?";
}
static bool is_num(const dkb_tensor *a) { return a->dtype < DKB_TP_STR; }
static bool is_int(const dkb_tensor *a) { return a->dtype <= DKB_TP_I128; }
static bool is_key(const dkb_tensor *a) { return a->dtype <= DKB_TP_I64; }
static bool is_mask(const dkb_tensor *a) { return a->dtype == DKB_TP_BOOL || a->dtype == DKB_TP_U8; }

#define NUM(tp, op, a) CHECK(tp, is_num(a), "%s: %s tensor is not numeric", op, dtype_name((a)->dtype))
#define INT(tp, op, a) CHECK(tp, is_int(a), "%s: %s tensor is not an integer tensor", op, dtype_name((a)->dtype))
#define KEY(tp, op, a) \
    CHECK(tp, is_key(a), "%s: %s tensor is not an integer key (BOOL..I64)", op, dtype_name((a)->dtype))
#define MASK(tp, op, a) CHECK(tp, is_mask(a), "%s: %s tensor is not a BOOL mask", op, dtype_name((a)->dtype))
#define SAMELEN(tp, op, a, b)                                                               \
    CHECK(tp, (a)->n == (b)->n, "%s: lengths differ (%lld and %lld)", op, (long long)(a)->n, \
          (long long)(b)->n)
#define CTX(tp) \
    do {        \
        if (!(tp)) return NULL; \
    } while (0)

/* ---- constants ---- */

dkb_tensor *dkb_tp_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value) {
    CTX(tp);
    CHECK(tp, (unsigned)t < DKB_TP_STR, "full_i64: dtype %s is not numeric", dtype_name(t));
    CHECK(tp, n >= 0, "full_i64: negative length");
    return tp->be->full_i64(tp, t, n, value);
}

dkb_tensor *dkb_tp_arange(dkb_tp *tp, int64_t n) {
    CTX(tp);
    CHECK(tp, n >= 0, "arange: negative length");
    return tp->be->arange(tp, n);
}

/* ---- elementwise ---- */

dkb_tensor *dkb_tp_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b) {
    CTX(tp);
    NEED(tp, "cmp", a && b);
    NUM(tp, "cmp", a);
    NUM(tp, "cmp", b);
    SAMELEN(tp, "cmp", a, b);
    CHECK(tp, (unsigned)op <= DKB_CMP_GE, "cmp: bad operator %d", (int)op);
    return tp->be->cmp(tp, a, op, b);
}

dkb_tensor *dkb_tp_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value) {
    CTX(tp);
    NEED(tp, "cmp_i64", a);
    NUM(tp, "cmp_i64", a);
    CHECK(tp, (unsigned)op <= DKB_CMP_GE, "cmp_i64: bad operator %d", (int)op);
    return tp->be->cmp_i64(tp, a, op, value);
}

dkb_tensor *dkb_tp_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value) {
    CTX(tp);
    NEED(tp, "cmp_f64", a);
    NUM(tp, "cmp_f64", a);
    CHECK(tp, (unsigned)op <= DKB_CMP_GE, "cmp_f64: bad operator %d", (int)op);
    return tp->be->cmp_f64(tp, a, op, value);
}

dkb_tensor *dkb_tp_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi) {
    CTX(tp);
    NEED(tp, "between", a);
    NUM(tp, "between", a);
    return tp->be->between(tp, a, lo, hi);
}

dkb_tensor *dkb_tp_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n) {
    CTX(tp);
    NEED(tp, "in_i64", a);
    INT(tp, "in_i64", a);
    CHECK(tp, n >= 0 && (n == 0 || values), "in_i64: bad value list");
    return tp->be->in_i64(tp, a, values, n);
}

dkb_tensor *dkb_tp_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut) {
    CTX(tp);
    NEED(tp, "lookup_mask", codes && lut);
    CHECK(tp, codes->dtype == DKB_TP_U8 && codes->dict, "lookup_mask: codes must be U8 with a dictionary");
    return tp->be->lookup_mask(tp, codes, lut, codes->dict->size);
}

dkb_tensor *dkb_tp_and(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b) {
    CTX(tp);
    NEED(tp, "and", a && b);
    MASK(tp, "and", a);
    MASK(tp, "and", b);
    SAMELEN(tp, "and", a, b);
    return tp->be->logic(tp, a, DKB__LOGIC_AND, b);
}

dkb_tensor *dkb_tp_or(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b) {
    CTX(tp);
    NEED(tp, "or", a && b);
    MASK(tp, "or", a);
    MASK(tp, "or", b);
    SAMELEN(tp, "or", a, b);
    return tp->be->logic(tp, a, DKB__LOGIC_OR, b);
}

dkb_tensor *dkb_tp_not(dkb_tp *tp, const dkb_tensor *a) {
    CTX(tp);
    NEED(tp, "not", a);
    MASK(tp, "not", a);
    return tp->be->logic(tp, a, DKB__LOGIC_NOT, NULL);
}

dkb_tensor *dkb_tp_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b) {
    CTX(tp);
    NEED(tp, "arith", a && b);
    NUM(tp, "arith", a);
    NUM(tp, "arith", b);
    SAMELEN(tp, "arith", a, b);
    CHECK(tp, (unsigned)op <= DKB_OP_MAX, "arith: bad operator %d", (int)op);
    CHECK(tp, a->scale >= 0 && b->scale >= 0 && a->scale + b->scale <= 36, "arith: scales out of range");
    return tp->be->arith(tp, a, op, b);
}

dkb_tensor *dkb_tp_arith_i64(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale) {
    CTX(tp);
    NEED(tp, "arith_i64", a);
    NUM(tp, "arith_i64", a);
    CHECK(tp, (unsigned)op <= DKB_OP_MAX, "arith_i64: bad operator %d", (int)op);
    CHECK(tp, scale >= 0 && scale <= 18 && a->scale >= 0 && a->scale + scale <= 36,
          "arith_i64: scale %d out of range", scale);
    return tp->be->arith_scalar(tp, a, op, value, scale, false);
}

dkb_tensor *dkb_tp_rsub_i64(dkb_tp *tp, int64_t value, int scale, const dkb_tensor *a) {
    CTX(tp);
    NEED(tp, "rsub_i64", a);
    NUM(tp, "rsub_i64", a);
    CHECK(tp, scale >= 0 && scale <= 18 && a->scale >= 0 && a->scale + scale <= 36,
          "rsub_i64: scale %d out of range", scale);
    return tp->be->arith_scalar(tp, a, DKB_OP_SUB, value, scale, true);
}

dkb_tensor *dkb_tp_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to) {
    CTX(tp);
    NEED(tp, "cast", a);
    NUM(tp, "cast", a);
    CHECK(tp, (unsigned)to < DKB_TP_STR, "cast: cannot cast to %s", dtype_name(to));
    CHECK(tp, a->scale >= 0 && a->scale <= 38, "cast: scale out of range");
    return tp->be->cast(tp, a, to);
}

dkb_tensor *dkb_tp_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b) {
    CTX(tp);
    NEED(tp, "where", cond && a && b);
    MASK(tp, "where", cond);
    NUM(tp, "where", a);
    NUM(tp, "where", b);
    SAMELEN(tp, "where", cond, a);
    SAMELEN(tp, "where", cond, b);
    CHECK(tp, a->scale >= 0 && b->scale >= 0 && a->scale <= 36 && b->scale <= 36, "where: scales out of range");
    return tp->be->where(tp, cond, a, b);
}

dkb_tensor *dkb_tp_year(dkb_tp *tp, const dkb_tensor *days) {
    CTX(tp);
    NEED(tp, "year", days);
    KEY(tp, "year", days);
    return tp->be->year(tp, days);
}

dkb_tensor *dkb_tp_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max) {
    CTX(tp);
    NEED(tp, "pack2", a && b);
    KEY(tp, "pack2", a);
    KEY(tp, "pack2", b);
    SAMELEN(tp, "pack2", a, b);
    CHECK(tp, b_max >= 0 && b_max < INT64_MAX, "pack2: b_max %lld out of range", (long long)b_max);
    return tp->be->pack2(tp, a, b, b_max);
}

/* ---- strings ---- */

bool *dkb_tp_like_dict(dkb_tp *tp, const dkb_tp_dict *dict, const char *pattern) {
    CTX(tp);
    NEED(tp, "like_dict", dict && pattern);
    CHECK(tp, dict->size >= 0 && (dict->size == 0 || (dict->str && dict->len)), "like_dict: bad dictionary");
    bool *lut = dkb__arena_alloc(&tp->arena, (size_t)dict->size + 1);
    if (!lut) return dkb__tp_error(tp, DKB_ENOMEM, "like_dict: out of memory");
    SCRATCH_BEGIN(tp);
    dkb__like *lk = dkb__like_compile(&tp->scratch, pattern);
    if (lk)
        for (int i = 0; i < dict->size; i++) lut[i] = dkb__like_match(lk, dict->str[i], (int64_t)dict->len[i]);
    SCRATCH_END(tp);
    if (!lk) return dkb__tp_error(tp, DKB_ENOMEM, "like_dict: out of memory");
    return lut;
}

dkb_tensor *dkb_tp_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern) {
    CTX(tp);
    NEED(tp, "like", str && pattern);
    CHECK(tp, str->dtype == DKB_TP_STR, "like: %s tensor is not STR", dtype_name(str->dtype));
    return tp->be->like(tp, str, pattern);
}

int dkb_tp_dict_code(const dkb_tp_dict *dict, const char *s) {
    if (!dict || !s) return -1;
    size_t n = strlen(s);
    int lo = 0, hi = dict->size - 1;
    while (lo <= hi) { /* dictionaries are sorted byte-wise */
        int mid = lo + (hi - lo) / 2;
        size_t m = dict->len[mid];
        int c = memcmp(dict->str[mid], s, m < n ? m : n);
        if (c == 0) c = m < n ? -1 : m > n ? 1 : 0;
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    for (int i = 0; i < dict->size; i++) /* an unsorted dictionary still works */
        if (dict->len[i] == n && memcmp(dict->str[i], s, n) == 0) return i;
    return -1;
}

dkb_tensor *dkb_tp_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len) {
    CTX(tp);
    NEED(tp, "substr", str);
    CHECK(tp, str->dtype == DKB_TP_STR, "substr: %s tensor is not STR", dtype_name(str->dtype));
    return tp->be->substr(tp, str, start, len);
}

dkb_tensor *dkb_tp_str_to_i64(dkb_tp *tp, const dkb_tensor *str) {
    CTX(tp);
    NEED(tp, "str_to_i64", str);
    CHECK(tp, str->dtype == DKB_TP_STR, "str_to_i64: %s tensor is not STR", dtype_name(str->dtype));
    return tp->be->str_to_i64(tp, str);
}

dkb_tensor *dkb_tp_str_pack(dkb_tp *tp, const dkb_tensor *str, bool *fits) {
    CTX(tp);
    NEED(tp, "str_pack", str);
    CHECK(tp, str->dtype == DKB_TP_STR, "str_pack: %s tensor is not STR", dtype_name(str->dtype));
    int64_t longest = 0;
    dkb_tensor *r = tp->be->str_pack(tp, str, &longest);
    if (fits) *fits = r != NULL || longest <= DKB_TP_STR_PACK_MAX;
    if (r || longest <= DKB_TP_STR_PACK_MAX || fits) return r;
    return dkb__tp_error(tp, DKB_ERANGE, "str_pack: a string longer than %d bytes", DKB_TP_STR_PACK_MAX);
}

/* ---- selection ---- */

dkb_tensor *dkb_tp_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask) {
    CTX(tp);
    NEED(tp, "compress", a && mask);
    MASK(tp, "compress", mask);
    SAMELEN(tp, "compress", a, mask);
    return tp->be->compress(tp, a, mask);
}

dkb_tensor *dkb_tp_nonzero(dkb_tp *tp, const dkb_tensor *mask) {
    CTX(tp);
    NEED(tp, "nonzero", mask);
    MASK(tp, "nonzero", mask);
    return tp->be->nonzero(tp, mask);
}

dkb_tensor *dkb_tp_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill) {
    CTX(tp);
    NEED(tp, "gather", a && idx);
    CHECK(tp, idx->dtype == DKB_TP_I64 || idx->dtype == DKB_TP_I32, "gather: index tensor is %s, not I64/I32",
          dtype_name(idx->dtype));
    CHECK(tp, (unsigned)a->dtype < DKB_TP_NTYPES, "gather: bad dtype");
    return tp->be->gather(tp, a, idx, fill);
}

int64_t dkb_tp_count(dkb_tp *tp, const dkb_tensor *mask) {
    if (!tp) return 0;
    if (!mask) return dkb__tp_error(tp, DKB_EINVAL, "count: NULL argument"), 0;
    if (!is_mask(mask)) return dkb__tp_error(tp, DKB_EINVAL, "count: %s tensor is not a mask", dtype_name(mask->dtype)), 0;
    return tp->be->count(tp, mask);
}

/* ---- joins ---- */

dkb_join_result dkb_tp_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys,
                            dkb_join_kind kind) {
    dkb_join_result none = {NULL, NULL};
    if (!tp) return none;
    const char *bad = !build_keys || !probe_keys ? "NULL argument"
                      : !is_key(build_keys) || !is_key(probe_keys) ? "keys must be integer tensors (BOOL..I64)"
                      : (unsigned)kind > DKB_JOIN_LEFT ? "bad join kind"
                                                        : NULL;
    if (bad) {
        dkb__tp_error(tp, DKB_EINVAL, "join: %s", bad);
        return none;
    }
    return tp->be->join(tp, build_keys, probe_keys, kind);
}

dkb_tensor *dkb_tp_semi_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys) {
    CTX(tp);
    NEED(tp, "semi_join", build_keys && probe_keys);
    KEY(tp, "semi_join", build_keys);
    KEY(tp, "semi_join", probe_keys);
    return tp->be->semi_join(tp, build_keys, probe_keys);
}

/* ---- group-by and aggregation ---- */

dkb_groups dkb_tp_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys) {
    dkb_groups none = {NULL, NULL, 0};
    if (!tp) return none;
    const char *bad = NULL;
    if (!keys || nkeys < 1) bad = "no keys";
    for (int i = 0; !bad && i < nkeys; i++) {
        if (!keys[i]) bad = "NULL key";
        else if (!is_key(keys[i])) bad = "keys must be integer tensors (BOOL..I64)";
        else if (keys[i]->n != keys[0]->n) bad = "keys of different lengths";
    }
    if (bad) {
        dkb__tp_error(tp, DKB_EINVAL, "group: %s", bad);
        return none;
    }
    return tp->be->group(tp, keys, nkeys);
}

dkb_tensor *dkb_tp_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values) {
    CTX(tp);
    NEED(tp, "aggregate", g && g->group_id && g->first_row);
    CHECK(tp, (unsigned)agg <= DKB_AGG_COUNT_DISTINCT, "aggregate: bad aggregate %d", (int)agg);
    CHECK(tp, g->group_id->dtype == DKB_TP_I64 && g->first_row->n == g->ngroups, "aggregate: malformed groups");
    if (agg == DKB_AGG_COUNT && !values) return tp->be->aggregate(tp, g, agg, NULL);
    NEED(tp, "aggregate", values);
    SAMELEN(tp, "aggregate", g->group_id, values);
    NUM(tp, "aggregate", values);
    if (agg == DKB_AGG_COUNT_DISTINCT) KEY(tp, "aggregate count distinct", values);
    CHECK(tp, values->scale >= 0 && values->scale <= 38, "aggregate: scale out of range");
    return tp->be->aggregate(tp, g, agg, values);
}

dkb_tensor *dkb_tp_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values) {
    CTX(tp);
    NEED(tp, "reduce", values);
    CHECK(tp, (unsigned)agg <= DKB_AGG_COUNT_DISTINCT, "reduce: bad aggregate %d", (int)agg);
    if (agg != DKB_AGG_COUNT) NUM(tp, "reduce", values);
    if (agg == DKB_AGG_COUNT_DISTINCT) KEY(tp, "reduce count distinct", values);
    CHECK(tp, values->scale >= 0 && values->scale <= 38, "reduce: scale out of range");
    return tp->be->reduce(tp, agg, values);
}

/* ---- ordering ---- */

static const char *sort_check(const dkb_sort_key *keys, int nkeys) {
    if (!keys || nkeys < 1) return "no keys";
    for (int i = 0; i < nkeys; i++) {
        if (!keys[i].key) return "NULL key";
        if ((unsigned)keys[i].key->dtype >= DKB_TP_NTYPES) return "bad key dtype";
        if (keys[i].key->n != keys[0].key->n) return "keys of different lengths";
    }
    return NULL;
}

dkb_tensor *dkb_tp_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys) {
    CTX(tp);
    const char *bad = sort_check(keys, nkeys);
    if (bad) return dkb__tp_error(tp, DKB_EINVAL, "sort: %s", bad);
    return tp->be->sort(tp, keys, nkeys);
}

dkb_tensor *dkb_tp_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k) {
    CTX(tp);
    const char *bad = sort_check(keys, nkeys);
    if (bad) return dkb__tp_error(tp, DKB_EINVAL, "topk: %s", bad);
    CHECK(tp, k >= 0, "topk: negative k");
    return tp->be->topk(tp, keys, nkeys, k);
}
