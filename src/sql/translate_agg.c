/* translate_agg.c: LOGICAL_AGGREGATE_AND_GROUP_BY (and DISTINCT): grouping
 * by any column types (strings and doubles through dense integer keys,
 * NULL a group of its own; free-text keys that follow from the other keys
 * are checked, not hashed), and the aggregates count(*), count,
 * count(DISTINCT), sum and avg (also DISTINCT), min and max (free text on
 * the host), first, stddev/variance (samp, pop) with DuckDB's semantics:
 * NULL inputs are skipped, an aggregate that saw no value is NULL (count:
 * 0), and without GROUP BY there is exactly one row even over no input.
 * Sums of integers and decimals are exact (int128, the input's scale: a
 * sum of DECIMAL(15,2) is DECIMAL(38,2)); avg is a double. A FILTER
 * (WHERE ...) clause restricts the rows one aggregate sees. */
#include <math.h>
#include <string.h>

#include "sql/translate_internal.h"

/* Whether free-text key c is one string per group of g (then it splits no
 * group: DuckDB groups Q10 by c_custkey and the customer's name, address,
 * phone and comment, which c_custkey determines). A byte comparison per
 * row instead of hashing every string. */
static bool text_follows(tr_ctx *x, const tr_col *c, const dkb_groups *g) {
    if (c->valid) return false;
    tr_hstr h;
    if (!tr_host_strings(x, c, &h)) return false;
    int64_t *gid = tr_host_i64(x, g->group_id), *first = tr_host_i64(x, g->first_row);
    if (!gid || !first) return false;
    for (int64_t i = 0; i < h.n; i++) {
        int64_t r = first[gid[i]];
        if (h.len[i] != h.len[r] || memcmp(h.p[i], h.p[r], h.len[i])) return false;
    }
    return true;
}

static bool group_keys(tr_ctx *x, const tr_col *keys, int nkeys, int64_t n, dkb_groups *g);

/* Whether the pending free-text key t (the strings T[rows]) is one string
 * per group of g without reading a string: every row of a group picks the
 * same row of T as the group's first row (Q10's customer texts beside
 * c_custkey: one customer per group). *rep caches each row's first row. */
static bool follows_by_rows(tr_ctx *x, const tr_col *t, const dkb_groups *g, int64_t n, dkb_tensor **rep) {
    if (!t->rows || t->miss || t->valid) return false;
    dkb_tp *tp = x->tp;
    dkb_tensor *rows = tr_rows(x, t->rows);
    if (!rows) return false;
    if (!*rep) *rep = dkb_tp_gather(tp, g->first_row, g->group_id, 0);
    dkb_tensor *same = dkb_tp_cmp(tp, dkb_tp_gather(tp, rows, *rep, 0), DKB_CMP_EQ, rows);
    return !tr_bad(x) && dkb_tp_count(tp, same) == n;
}

/* tr_group for GROUP BY, where a free-text key may still be pending (its
 * strings not gathered): group by the plain keys, and keep that grouping
 * when every text key follows from it, by rows (follows_by_rows: the text
 * is then never gathered here; the groups' values are gathered later
 * through first_row, for the rows that remain) or by bytes (text_follows);
 * else group by every key. */
static bool group_by_plain(tr_ctx *x, tr_col *keys, int nkeys, int64_t n, dkb_groups *g);

/* A free-text key that is a free-text store column whose strings are all
 * distinct (translate_stats.c; supplier's s_name in TPC-H Q21): equal
 * strings are equal rows of the column, so its row numbers group exactly
 * as the strings do, on the backend, and no string is copied to the
 * host. Those keys become their row numbers (the group's values are still
 * gathered from the column, through first_row); then group_by_plain. */
static bool group_by(tr_ctx *x, tr_col *keys, int nkeys, int64_t n, dkb_groups *g) {
    if (nkeys > 64) return group_by_plain(x, keys, nkeys, n, g);
    tr_col k[64];
    bool sub[64], any = false;
    for (int i = 0; i < nkeys; i++) {
        k[i] = keys[i], sub[i] = false;
        const tr_col *c = &keys[i];
        if (!c->v || c->v->dtype != DKB_TP_STR || c->valid || c->miss || !tr_distinct_text(x, c->v)) continue;
        memset(&k[i], 0, sizeof k[i]);
        k[i].ty = tr_ty(TY_BIGINT);
        k[i].v = c->rows ? tr_rows(x, c->rows) : tr_arange(x, n);
        if (!k[i].v) return tr_bad(x), false;
        sub[i] = any = true;
    }
    if (!any) return group_by_plain(x, keys, nkeys, n, g);
    tr_trace(x, "free-text key%s of distinct strings grouped by row numbers", nkeys == 1 ? "" : "s");
    bool ok = group_by_plain(x, k, nkeys, n, g);
    for (int i = 0; i < nkeys; i++)
        if (!sub[i]) keys[i] = k[i];
    return ok;
}

static bool group_by_plain(tr_ctx *x, tr_col *keys, int nkeys, int64_t n, dkb_groups *g) {
    int nplain = 0;
    for (int i = 0; i < nkeys; i++) nplain += keys[i].v->dtype != DKB_TP_STR;
    if (nplain && nplain < nkeys && nkeys <= 64) {
        tr_col plain[64];
        int np = 0;
        for (int i = 0; i < nkeys; i++)
            if (keys[i].v->dtype != DKB_TP_STR) plain[np++] = keys[i];
        if (!group_keys(x, plain, np, n, g)) return false;
        dkb_tensor *rep = NULL;
        bool follows = true;
        for (int i = 0; follows && i < nkeys; i++) {
            if (keys[i].v->dtype != DKB_TP_STR || follows_by_rows(x, &keys[i], g, n, &rep)) continue;
            follows = tr_col_ready(x, &keys[i]) && text_follows(x, &keys[i], g);
        }
        if (tr_bad(x)) return false;
        if (follows) return true;
    }
    for (int i = 0; i < nkeys; i++)
        if (!tr_col_ready(x, &keys[i])) return false;
    return group_keys(x, keys, nkeys, n, g);
}

bool tr_group(tr_ctx *x, const tr_col *keys, int nkeys, int64_t n, dkb_groups *g) {
    /* free-text keys beside others: group by the others first, and keep
     * that grouping when every free-text key follows from it */
    tr_col plain[64];
    int np = 0, ntext = 0;
    for (int i = 0; i < nkeys && i < 64; i++) {
        if (keys[i].v && keys[i].v->dtype == DKB_TP_STR) ntext++;
        else plain[np++] = keys[i];
    }
    if (ntext && np && nkeys <= 64) {
        if (!group_keys(x, plain, np, n, g)) return false;
        bool follows = true;
        for (int i = 0; follows && i < nkeys; i++)
            if (keys[i].v->dtype == DKB_TP_STR) follows = text_follows(x, &keys[i], g);
        if (tr_bad(x)) return false;
        if (follows) return true;
    }
    return group_keys(x, keys, nkeys, n, g);
}

static bool group_keys(tr_ctx *x, const tr_col *keys, int nkeys, int64_t n, dkb_groups *g) {
    dkb_tp *tp = x->tp;
    memset(g, 0, sizeof *g);
    const dkb_tensor *k[64];
    int nk = 0;
    for (int i = 0; i < nkeys; i++) {
        if (nk + 2 > 64) return tr_unsupported(x, NULL, "GROUP BY on more than 32 columns"), false;
        dkb_tensor *v = tr_key_of(x, &keys[i], n);
        if (!v) return tr_bad(x), false;
        if (keys[i].valid) {
            v = dkb_tp_where(tp, keys[i].valid, v, dkb_tp_full_i64(tp, v->dtype == DKB_TP_U8 ? DKB_TP_U8 : DKB_TP_I64, n, 0));
            k[nk++] = keys[i].valid;
        }
        k[nk++] = tr_relabel(x, v, 0, NULL);
    }
    if (nk == 0) { /* no keys: one group of every row */
        k[nk++] = tr_full(x, DKB_TP_BOOL, n, 0);
    }
    if (tr_bad(x)) return false;
    /* a key tensor given twice (the same data: a GROUP BY of several
     * columns read through one row-number tensor) groups as once */
    int nd = 0;
    for (int i = 0; i < nk; i++) {
        bool dup = false;
        for (int j = 0; j < nd && !dup; j++)
            dup = k[j]->data == k[i]->data && k[j]->dtype == k[i]->dtype && k[j]->n == k[i]->n;
        if (!dup) k[nd++] = k[i];
    }
    nk = nd;
    /* on the CPU, keys of known non-negative bounds packed into one I64
     * key (dkb_tp_pack2, as the hand plans do) group faster than several
     * keys that the group packs itself (it reduces each to its range
     * first: Q01's 6M rows at SF 1 grouped in 17 ms + 11 ms packing against
     * 37 ms); worth an operation over many rows only. CUDA groups one or
     * two small keys directly, so there they stay as they are */
    if (nk > 1 && n >= (1 << 20) && dkb_tp_backend_of(tp) == DKB_TP_CPU) {
        int64_t hi[64];
        __int128 total = 1;
        bool ok = true;
        for (int i = 0; i < nk && ok; i++) {
            int64_t lo = 0;
            const dkb_tensor *t = k[i];
            if (t->dtype == DKB_TP_BOOL) hi[i] = 1;
            else if (t->dtype == DKB_TP_U8) hi[i] = t->dict && t->dict->size > 0 ? t->dict->size - 1 : 255;
            else ok = tr_bound_get(x, t, &lo, &hi[i]) && lo >= 0 && hi[i] >= 0;
            if (ok) total *= (__int128)hi[i] + 1;
            if (total >= ((__int128)1 << 62)) ok = false;
        }
        if (ok) {
            dkb_tensor *acc = (dkb_tensor *)k[0];
            for (int i = 1; i < nk; i++) acc = dkb_tp_pack2(tp, acc, k[i], hi[i]);
            if (tr_bad(x)) return false;
            k[0] = acc;
            nk = 1;
        }
    }
    *g = dkb_tp_group(tp, k, nk);
    return !tr_bad(x);
}

tr_rel *tr_distinct(tr_ctx *x, const tr_rel *r) {
    if (r->n == 0) return (tr_rel *)r;
    dkb_groups g;
    tr_col *keys = tr_rel_ready_cols(x, r);
    /* a column whose values are known distinct (a key such as o_orderkey,
     * filtered): every row is its own first occurrence */
    for (int i = 0; keys && i < r->ncols; i++)
        if (!keys[i].valid && keys[i].v && keys[i].ty.id != TY_DOUBLE && tr_distinct_get(x, keys[i].v)) {
            tr_rel *o = tr_rel_new(x, r->ncols, r->n);
            if (!o) return NULL;
            for (int j = 0; j < r->ncols; j++) o->c[j] = keys[j];
            return o;
        }
    if (!keys || !tr_group(x, keys, r->ncols, r->n, &g)) return NULL;
    return tr_rel_gather(x, r, g.first_row, false);
}

typedef struct agg_in {
    const char *name;
    bool distinct;
    tr_col arg;         /* the argument (none for count_star) */
    bool has_arg;
    dkb_tensor *rows;   /* the rows it sees (filter AND argument not NULL); NULL: all */
    tr_type rt;
} agg_in;

static bool read_agg(tr_ctx *x, const cJSON *e, const tr_rel *in, agg_in *a) {
    memset(a, 0, sizeof *a);
    if (strcmp(tr_str(e, "expression_class"), "BOUND_AGGREGATE"))
        return tr_unsupported(x, e, "aggregate expression %s", tr_str(e, "expression_class")), false;
    a->name = tr_str(e, "name");
    a->distinct = !strcmp(tr_str(e, "aggregate_type"), "DISTINCT");
    a->rt = tr_parse_type(tr_get(e, "return_type"));
    const cJSON *ob = tr_get(e, "order_bys");
    if (ob && !cJSON_IsNull(ob)) return tr_unsupported(x, e, "%s() with ORDER BY", a->name), false;
    const cJSON *ch = tr_get(e, "children");
    int k = cJSON_GetArraySize(ch);
    if (k > 1) return tr_unsupported(x, e, "aggregate %s() of %d arguments", a->name, k), false;
    if (k == 1) {
        if (!tr_eval_col(x, cJSON_GetArrayItem(ch, 0), in, &a->arg)) return false;
        a->has_arg = true;
        a->rows = a->arg.valid;
    }
    const cJSON *f = tr_get(e, "filter");
    if (f && !cJSON_IsNull(f)) {
        tr_col fc;
        if (!tr_eval_col(x, f, in, &fc)) return false;
        a->rows = tr_and_valid(x, a->rows, tr_truth(x, &fc));
    }
    return !tr_bad(x);
}

static const struct {
    const char *name;
    dkb_agg agg;
} AGGS[] = {{"sum", DKB_AGG_SUM}, {"sum_no_overflow", DKB_AGG_SUM}, {"avg", DKB_AGG_AVG}, {"mean", DKB_AGG_AVG},
            {"min", DKB_AGG_MIN}, {"max", DKB_AGG_MAX},  {"count", DKB_AGG_COUNT}, {"count_star", DKB_AGG_COUNT},
            {"first", DKB_AGG_MIN}, {"any_value", DKB_AGG_MIN}, {"arbitrary", DKB_AGG_MIN}, {"fsum", DKB_AGG_SUM},
            {"stddev_samp", DKB_AGG_SUM}, {"stddev", DKB_AGG_SUM}, {"stddev_pop", DKB_AGG_SUM},
            {"var_samp", DKB_AGG_SUM}, {"variance", DKB_AGG_SUM}, {"var_pop", DKB_AGG_SUM}};

/* Per group (or, g NULL, over all), the row of the least (or greatest)
 * string among the rows it sees: free text on the host. */
static bool text_extreme(tr_ctx *x, const agg_in *a, const dkb_groups *g, bool max, tr_col *out) {
    dkb_tp *tp = x->tp;
    int64_t n = a->arg.v->n, ng = g ? g->ngroups : 1;
    tr_hstr h;
    if (!tr_host_strings(x, &a->arg, &h)) return false;
    int64_t *gid = g ? tr_host_i64(x, g->group_id) : NULL;
    uint8_t *see = NULL;
    if (a->rows) {
        see = tr_alloc(x, (size_t)n + 1);
        if (!see || (n && dkb_tp_to_host(tp, a->rows, see))) return tr_bad(x), false;
    }
    int64_t *best = tr_alloc(x, (size_t)(ng + 1) * sizeof *best);
    uint8_t *any = tr_alloc(x, (size_t)ng + 1);
    if ((g && !gid) || !best || !any) return false;
    for (int64_t i = 0; i < n; i++) {
        if (see && !see[i]) continue;
        int64_t k = gid ? gid[i] : 0;
        if (!any[k]) {
            any[k] = 1, best[k] = i;
            continue;
        }
        int c = tr_strcmp(h.p[i], h.len[i], h.p[best[k]], h.len[best[k]]);
        if (max ? c > 0 : c < 0) best[k] = i;
    }
    bool all = true;
    for (int64_t k = 0; k < ng; k++) {
        all &= any[k] != 0;
        if (!any[k]) best[k] = -1; /* no row (NULL): the empty string, not row 0 of a column with none */
    }
    out->v = dkb_tp_gather(tp, a->arg.v, dkb_tp_from_host(tp, DKB_TP_I64, ng, best), 0);
    out->valid = all ? NULL : dkb_tp_from_host(tp, DKB_TP_BOOL, ng, any);
    return !tr_bad(x);
}

/* stddev / variance from the count, sum and sum of squares (doubles). */
static bool spread(tr_ctx *x, const char *name, dkb_tensor *cnt, dkb_tensor *s1, dkb_tensor *s2, int64_t ng,
                   tr_col *out) {
    double *c = tr_host_f64(x, cnt), *a = tr_host_f64(x, s1), *b = tr_host_f64(x, s2);
    uint8_t *ok = tr_alloc(x, (size_t)ng + 1);
    if (!c || !a || !b || !ok) return false;
    bool pop = strstr(name, "pop") != NULL, sd = !strncmp(name, "stddev", 6);
    bool all = true;
    for (int64_t k = 0; k < ng; k++) {
        double d = pop ? c[k] : c[k] - 1;
        ok[k] = d > 0 || (pop && c[k] > 0);
        double v = ok[k] ? (b[k] - a[k] * a[k] / c[k]) / d : 0;
        if (v < 0) v = 0;
        a[k] = sd ? sqrt(v) : v;
        all &= ok[k] != 0;
    }
    out->v = dkb_tp_from_host(x->tp, DKB_TP_F64, ng, a);
    out->valid = all ? NULL : dkb_tp_from_host(x->tp, DKB_TP_BOOL, ng, ok);
    return !tr_bad(x);
}

/* The values an aggregate reduces, in a dtype TensorPlan aggregates. */
static dkb_tensor *agg_values(tr_ctx *x, const agg_in *a, dkb_agg agg, const cJSON *e) {
    dkb_tensor *v = a->arg.v;
    if (a->distinct) return tr_key_of(x, &a->arg, v->n);
    if (v->dtype == DKB_TP_STR && (agg == DKB_AGG_MIN || agg == DKB_AGG_MAX))
        return tr_unsupported(x, e, "%s() of free text", a->name);
    if (v->dtype == DKB_TP_STR || (a->arg.ty.id == TY_VARCHAR && agg != DKB_AGG_MIN && agg != DKB_AGG_MAX))
        return tr_unsupported(x, e, "%s() of a string", a->name);
    if (v->dtype == DKB_TP_BOOL && agg == DKB_AGG_SUM) return dkb_tp_cast(x->tp, v, DKB_TP_I64);
    return v;
}

/* One aggregate over groups g of in (g NULL: over all rows, one row out). */
static bool aggregate_one(tr_ctx *x, const cJSON *e, const tr_rel *in, const dkb_groups *g, tr_col *out) {
    dkb_groups sub;      /* the groups of the distinct rows (DISTINCT sum/avg) */
    tr_rel dist_in;      /* those rows */
    dkb_tp *tp = x->tp;
    agg_in a;
    if (!read_agg(x, e, in, &a)) return false;
    int which = -1;
    for (int i = 0; i < (int)(sizeof AGGS / sizeof AGGS[0]); i++)
        if (!strcmp(a.name, AGGS[i].name)) which = i;
    if (which < 0) return tr_unsupported(x, e, "aggregate %s()", a.name), false;
    dkb_agg agg = AGGS[which].agg;
    bool is_first = !strcmp(a.name, "first") || !strcmp(a.name, "any_value") || !strcmp(a.name, "arbitrary");
    bool is_count = agg == DKB_AGG_COUNT;
    bool is_spread = strstr(a.name, "std") || strstr(a.name, "var");
    if (a.distinct && is_spread) return tr_unsupported(x, e, "%s(DISTINCT ...)", a.name), false;
    if (!a.has_arg && !is_count) return tr_unsupported(x, e, "%s() without an argument", a.name), false;
    if (a.distinct && is_count) agg = DKB_AGG_COUNT_DISTINCT;
    if (a.has_arg && a.arg.v->dtype == DKB_TP_STR && (agg == DKB_AGG_MIN || agg == DKB_AGG_MAX) && !is_first) {
        out->ty = a.rt;
        return text_extreme(x, &a, g, agg == DKB_AGG_MAX, out);
    }
    if (a.distinct && (agg == DKB_AGG_SUM || agg == DKB_AGG_AVG)) {
        /* the distinct (group, value) rows only, then the plain aggregate */
        int64_t n0 = in->n;
        dkb_tensor *key = tr_key_of(x, &a.arg, n0);
        tr_col keys[2] = {{.v = g ? g->group_id : dkb_tp_full_i64(x->tp, DKB_TP_I64, n0, 0), .ty = tr_ty(TY_BIGINT)},
                          {.v = key, .valid = a.rows, .ty = tr_ty(TY_BIGINT)}};
        dkb_groups dg;
        if (!key || !tr_group(x, keys, 2, n0, &dg)) return tr_bad(x), false;
        tr_rel one = {.ncols = 1, .c = &a.arg, .n = n0};
        tr_rel *d = tr_rel_gather(x, &one, dg.first_row, false);
        if (!d) return false;
        a.arg = d->c[0];
        if (!tr_col_ready(x, &a.arg)) return false;
        a.rows = a.rows ? dkb_tp_gather(x->tp, a.rows, dg.first_row, 0) : NULL;
        a.distinct = false;
        if (g) {
            sub = *g;
            sub.group_id = dkb_tp_gather(x->tp, g->group_id, dg.first_row, 0);
            g = &sub;
        }
        dist_in = (tr_rel){.ncols = 0, .n = dg.ngroups};
        in = &dist_in;
    }
    out->ty = a.rt;
    out->valid = NULL;
    int64_t n = in->n;
    if (is_spread) {
        dkb_tp *tp0 = x->tp;
        dkb_tensor *v = dkb_tp_cast(tp0, a.arg.v, DKB_TP_F64);
        dkb_tensor *gid0 = g ? g->group_id : NULL;
        if (a.rows) v = dkb_tp_compress(tp0, v, a.rows), gid0 = gid0 ? dkb_tp_compress(tp0, gid0, a.rows) : NULL;
        dkb_tensor *sq = dkb_tp_arith(tp0, v, DKB_OP_MUL, v), *cnt, *s1, *s2;
        if (g) {
            dkb_groups h = *g;
            h.group_id = gid0;
            cnt = dkb_tp_aggregate(tp0, &h, DKB_AGG_COUNT, NULL);
            s1 = dkb_tp_aggregate(tp0, &h, DKB_AGG_SUM, v);
            s2 = dkb_tp_aggregate(tp0, &h, DKB_AGG_SUM, sq);
        } else {
            cnt = dkb_tp_full_i64(tp0, DKB_TP_I64, 1, v ? v->n : 0);
            s1 = dkb_tp_reduce(tp0, DKB_AGG_SUM, v);
            s2 = dkb_tp_reduce(tp0, DKB_AGG_SUM, sq);
        }
        out->ty = a.rt;
        return !tr_bad(x) && spread(x, a.name, cnt, s1, s2, g ? g->ngroups : 1, out);
    }
    if (agg == DKB_AGG_MIN || agg == DKB_AGG_MAX) a.distinct = false;
    bool values_needed = a.has_arg && !(is_count && agg == DKB_AGG_COUNT); /* count(x) needs only x's NULLs */
    dkb_tensor *vals = values_needed ? (is_first ? a.arg.v : agg_values(x, &a, agg, e)) : NULL;
    if (values_needed && !vals) return false;
    /* the rows it sees */
    dkb_tensor *gid = g ? g->group_id : NULL;
    if (a.rows) {
        if (vals) vals = dkb_tp_compress(tp, vals, a.rows);
        if (gid) gid = dkb_tp_compress(tp, gid, a.rows);
    }
    if (tr_bad(x)) return false;
    int64_t seen = a.rows ? dkb_tp_count(tp, a.rows) : n;
    if (!g) { /* one row */
        if (is_count && agg == DKB_AGG_COUNT) {
            out->v = dkb_tp_full_i64(tp, DKB_TP_I64, 1, seen);
            return !tr_bad(x);
        }
        if (seen == 0) {
            tr_const null = {.ty = a.rt, .null = true};
            if (agg == DKB_AGG_COUNT_DISTINCT) null.null = false, null.ty = tr_ty(TY_BIGINT);
            return tr_broadcast(x, &null, 1, out) && (out->ty = a.rt, true);
        }
        if (vals && vals->n == 1 && (is_first || agg == DKB_AGG_MIN || agg == DKB_AGG_MAX))
            out->v = vals; /* the one value seen (a scalar subquery's row) */
        else if (is_first) out->v = dkb_tp_gather(tp, vals, tr_full(x, DKB_TP_I64, 1, 0), 0);
        else out->v = dkb_tp_reduce(tp, agg, vals);
    } else {
        dkb_groups h = *g;
        h.group_id = gid;
        if (is_count && agg == DKB_AGG_COUNT) {
            out->v = dkb_tp_aggregate(tp, &h, DKB_AGG_COUNT, NULL);
            return !tr_bad(x);
        }
        if (is_first) {
            if (a.rows) {
                /* the first row of each group that it sees */
                dkb_tensor *rows = dkb_tp_nonzero(tp, a.rows);
                dkb_groups hg = *g;
                hg.group_id = gid;
                dkb_tensor *firsts = dkb_tp_aggregate(tp, &hg, DKB_AGG_MIN, rows);
                dkb_tensor *cnt = dkb_tp_aggregate(tp, &hg, DKB_AGG_COUNT, NULL);
                out->valid = dkb_tp_cmp_i64(tp, cnt, DKB_CMP_GT, 0);
                out->v = dkb_tp_gather(tp, a.arg.v, dkb_tp_where(tp, out->valid, firsts,
                                                                   dkb_tp_full_i64(tp, DKB_TP_I64, g->ngroups, 0)), 0);
                return !tr_bad(x);
            }
            out->v = dkb_tp_gather(tp, a.arg.v, g->first_row, 0);
            out->valid = a.arg.valid ? dkb_tp_gather(tp, a.arg.valid, g->first_row, 0) : NULL;
            return !tr_bad(x);
        }
        out->v = dkb_tp_aggregate(tp, &h, agg, vals);
        if (a.rows && agg != DKB_AGG_COUNT_DISTINCT) {
            dkb_tensor *cnt = dkb_tp_aggregate(tp, &h, DKB_AGG_COUNT, NULL);
            out->valid = dkb_tp_cmp_i64(tp, cnt, DKB_CMP_GT, 0);
        }
    }
    if (!out->v) return tr_bad(x), false;
    if (a.arg.v && a.arg.v->dict && (agg == DKB_AGG_MIN || agg == DKB_AGG_MAX))
        out->v = tr_relabel(x, out->v, 0, a.arg.v->dict);
    if (a.rt.id == TY_DECIMAL && out->v->dtype != DKB_TP_F64) out->v = tr_rescale(x, out->v, a.rt.scale);
    if (a.rt.id == TY_DOUBLE && out->v->dtype != DKB_TP_F64) out->v = dkb_tp_cast(tp, out->v, DKB_TP_F64);
    return !tr_bad(x);
}

tr_rel *tr_aggregate(tr_ctx *x, const cJSON *op, const tr_rel *in) {
    const cJSON *groups = tr_get(op, "groups"), *aggs = tr_get(op, "expressions");
    const cJSON *sets = tr_get(op, "grouping_sets");
    if (cJSON_GetArraySize(sets) > 1) return tr_unsupported(x, op, "GROUPING SETS, ROLLUP or CUBE");
    if (cJSON_GetArraySize(tr_get(op, "grouping_functions")) > 0) return tr_unsupported(x, op, "GROUPING()");
    int ng = cJSON_GetArraySize(groups), na = cJSON_GetArraySize(aggs);
    if (ng == 0) {
        tr_rel *o = tr_rel_new(x, na, 1);
        if (!o) return NULL;
        for (int i = 0; i < na; i++)
            if (!aggregate_one(x, cJSON_GetArrayItem(aggs, i), in, NULL, &o->c[i])) return NULL;
        tr_trace(x, "aggregate %d value%s over %lld rows", na, na == 1 ? "" : "s", (long long)in->n);
        return o;
    }
    tr_rel *keys = tr_rel_new(x, ng, in->n);
    if (!keys) return NULL;
    for (int i = 0; i < ng; i++) {
        const cJSON *e = cJSON_GetArrayItem(groups, i);
        int64_t ref = strcmp(tr_str(e, "expression_class"), "BOUND_REF") ? -1 : tr_int(e, "index", -1);
        if (ref >= 0 && ref < in->ncols && in->c[ref].rows && in->c[ref].v->dtype == DKB_TP_STR)
            keys->c[i] = in->c[ref]; /* free text: left pending (group_by) */
        else if (!tr_eval_col(x, e, in, &keys->c[i]))
            return NULL;
    }
    dkb_groups g;
    if (in->n == 0) {
        tr_rel *o = tr_rel_new(x, ng + na, 0);
        if (!o) return NULL;
        for (int i = 0; i < ng; i++) o->c[i] = keys->c[i];
        for (int i = 0; i < na; i++) {
            tr_const null = {.ty = tr_parse_type(tr_get(cJSON_GetArrayItem(aggs, i), "return_type")), .null = true};
            if (!tr_broadcast(x, &null, 0, &o->c[ng + i])) return NULL;
            o->c[ng + i].valid = NULL;
        }
        return o;
    }
    if (!group_by(x, keys->c, ng, in->n, &g)) return NULL;
    tr_rel *o = tr_rel_new(x, ng + na, g.ngroups);
    if (!o) return NULL;
    for (int i = 0; i < ng; i++) tr_col_gather(x, &keys->c[i], in->n, g.first_row, false, &o->c[i]);
    for (int i = 0; i < na; i++)
        if (!aggregate_one(x, cJSON_GetArrayItem(aggs, i), in, &g, &o->c[ng + i])) return NULL;
    tr_trace(x, "group %lld rows by %d key%s into %lld groups, %d aggregate%s", (long long)in->n, ng, ng == 1 ? "" : "s",
             (long long)g.ngroups, na, na == 1 ? "" : "s");
    return tr_bad(x) ? NULL : o;
}
