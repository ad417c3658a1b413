/* translate_chunk.c: an aggregate over an inner join whose pairs would not
 * fit in memory (a join on a key that repeats on both sides: the
 * customers and the suppliers of each nation are 6e9 pairs at SF 10).
 *
 * The join's left rows are cut into runs whose pairs number at most the
 * pair limit (tr_join_fanout counts each row's pairs first, when samples
 * of both sides estimate more than a quarter of the limit). Each run is
 * joined, passed through the projections and filters between the join and
 * the aggregate, and aggregated into partials: per group its counts, sums,
 * minima and maxima (an average as a sum and a count), and for a
 * count(DISTINCT v) the distinct (group, v) rows. The partials go to host
 * memory and the run's tensors are released (dkb_tp_release) before the
 * next run, so memory holds one run at a time. The partials are merged
 * (counts and sums summed, min of minima, max of maxima, distinct rows made
 * distinct again) whenever they grow large and at the end, into the rows
 * and types the aggregate gives unchunked.
 *
 * The pair limit is 2^26 pairs on the CPU and 2^27 on CUDA (a run's
 * intermediates take about 100 bytes per pair); DKB_SQL_JOIN_PAIRS (a
 * positive integer) sets it instead, so tests run this path on small data.
 * Aggregates that do not merge this way (first, min/max of strings,
 * stddev/variance, DISTINCT other than count, count(DISTINCT) with a
 * FILTER), and `--emit c` recordings, join whole as before. */
#include <stdlib.h>
#include <string.h>

#include "sql/emit_c.h"
#include "sql/translate_internal.h"
#include "tensor/cuda_avg.h"

#define MAX_CHAIN 16
#define MAX_AGGS 64
#define MERGE_ROWS ((int64_t)1 << 22) /* partial rows held before a merge */

static const cJSON *child0(const cJSON *op) { return cJSON_GetArrayItem(tr_get(op, "children"), 0); }

static int64_t pair_limit(tr_ctx *x) {
    const char *e = getenv("DKB_SQL_JOIN_PAIRS");
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (!*end && v > 0) return v;
    }
    return dkb_tp_backend_of(x->tp) == DKB_TP_CPU ? (int64_t)1 << 26 : (int64_t)1 << 27;
}

/* ---- what the aggregate computes, as partials ---- */

enum { S_COUNT, S_SUM, S_MIN, S_MAX };

typedef struct agg_plan {
    enum { A_PLAIN, A_AVG, A_DISTINCT } kind;
    int slot, slot2;   /* main partial columns (after the keys): the value; AVG: sum, count */
    int d;             /* A_DISTINCT: which distinct partial */
    tr_type rt;
} agg_plan;

typedef struct chunk_plan {
    int ng, na, nslots, ndist;
    int slot_kind[2 * MAX_AGGS];
    agg_plan a[MAX_AGGS];
    cJSON *main_op;               /* the groups, the slots' aggregates */
    cJSON *dist_op[MAX_AGGS];     /* the groups and the argument, no aggregate: distinct rows */
} chunk_plan;

static void plan_free(chunk_plan *p) {
    cJSON_Delete(p->main_op);
    for (int i = 0; i < p->ndist; i++) cJSON_Delete(p->dist_op[i]);
}

/* An aggregate op of groups and aggregates exprs (references into op's JSON). */
static cJSON *agg_op(const cJSON *groups, cJSON *exprs) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return cJSON_Delete(exprs), NULL;
    cJSON_AddStringToObject(o, "type", "LOGICAL_AGGREGATE_AND_GROUP_BY");
    cJSON_AddItemToObject(o, "groups", (cJSON *)groups);
    cJSON_AddItemToObject(o, "expressions", exprs);
    return o;
}

/* e as another aggregate: name, return type id */
static cJSON *agg_as(const cJSON *e, const char *name, const char *type_id) {
    cJSON *d = cJSON_Duplicate(e, true);
    if (!d) return NULL;
    cJSON_ReplaceItemInObject(d, "name", cJSON_CreateString(name));
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "id", type_id);
    cJSON_AddNullToObject(t, "type_info");
    cJSON_ReplaceItemInObject(d, "return_type", t);
    return d;
}

static int add_slot(chunk_plan *p, cJSON *exprs, cJSON *e, int kind) {
    cJSON_AddItemToArray(exprs, e);
    p->slot_kind[p->nslots] = kind;
    return p->nslots++;
}

/* False (nothing to free) when some aggregate does not merge. */
static bool plan_aggs(const cJSON *op, chunk_plan *p) {
    memset(p, 0, sizeof *p);
    const cJSON *groups = tr_get(op, "groups"), *aggs = tr_get(op, "expressions");
    if (cJSON_GetArraySize(tr_get(op, "grouping_sets")) > 1 || cJSON_GetArraySize(tr_get(op, "grouping_functions")))
        return false;
    p->ng = cJSON_GetArraySize(groups);
    p->na = cJSON_GetArraySize(aggs);
    if (p->na > MAX_AGGS) return false;
    cJSON *exprs = cJSON_CreateArray();
    if (!exprs) return false;
    for (int i = 0; i < p->na; i++) {
        const cJSON *e = cJSON_GetArrayItem(aggs, i);
        const char *name = tr_str(e, "name");
        const cJSON *ob = tr_get(e, "order_bys"), *f = tr_get(e, "filter"), *ch = tr_get(e, "children");
        bool distinct = !strcmp(tr_str(e, "aggregate_type"), "DISTINCT");
        bool has_filter = f && !cJSON_IsNull(f);
        agg_plan *a = &p->a[i];
        a->rt = tr_parse_type(tr_get(e, "return_type"));
        bool ok = strcmp(tr_str(e, "expression_class"), "BOUND_AGGREGATE") == 0 && (!ob || cJSON_IsNull(ob)) &&
                  cJSON_GetArraySize(ch) <= 1;
        if (ok && distinct) {
            ok = !strcmp(name, "count") && !has_filter && cJSON_GetArraySize(ch) == 1;
            if (ok) {
                cJSON *g = cJSON_CreateArray();
                for (int k = 0; k < p->ng; k++) cJSON_AddItemReferenceToArray(g, cJSON_GetArrayItem(groups, k));
                cJSON_AddItemReferenceToArray(g, cJSON_GetArrayItem(ch, 0));
                a->kind = A_DISTINCT, a->d = p->ndist;
                p->dist_op[p->ndist++] = agg_op(g, cJSON_CreateArray());
            }
        } else if (ok && (!strcmp(name, "count") || !strcmp(name, "count_star"))) {
            a->kind = A_PLAIN, a->slot = add_slot(p, exprs, cJSON_Duplicate(e, true), S_COUNT);
        } else if (ok && (!strcmp(name, "sum") || !strcmp(name, "sum_no_overflow") || !strcmp(name, "fsum"))) {
            a->kind = A_PLAIN, a->slot = add_slot(p, exprs, cJSON_Duplicate(e, true), S_SUM);
        } else if (ok && (!strcmp(name, "min") || !strcmp(name, "max")) && a->rt.id != TY_VARCHAR) {
            a->kind = A_PLAIN, a->slot = add_slot(p, exprs, cJSON_Duplicate(e, true), name[1] == 'i' ? S_MIN : S_MAX);
        } else if (ok && (!strcmp(name, "avg") || !strcmp(name, "mean")) && cJSON_GetArraySize(ch) == 1) {
            const cJSON *arg_t = tr_get(cJSON_GetArrayItem(ch, 0), "return_type");
            bool dbl = tr_parse_type(arg_t).id == TY_DOUBLE;
            a->kind = A_AVG;
            a->slot = add_slot(p, exprs, agg_as(e, "sum", dbl ? "DOUBLE" : "HUGEINT"), S_SUM);
            a->slot2 = add_slot(p, exprs, agg_as(e, "count", "BIGINT"), S_COUNT);
        } else {
            ok = false;
        }
        if (!ok) {
            cJSON_Delete(exprs);
            p->main_op = NULL;
            plan_free(p);
            return false;
        }
    }
    cJSON *g = cJSON_CreateArray();
    for (int k = 0; k < p->ng; k++) cJSON_AddItemReferenceToArray(g, cJSON_GetArrayItem(groups, k));
    p->main_op = agg_op(g, exprs);
    return p->main_op != NULL;
}

/* ---- partial rows in host memory ---- */

typedef struct hcol {
    tr_type ty;
    dkb_tp_dtype dt;
    int scale;
    const dkb_tp_dict *dict;
    char *data;        /* values; STR: n + 1 offsets */
    size_t cap;
    char *bytes;       /* STR characters */
    size_t bcap, blen;
    uint8_t *valid;    /* n flags */
    size_t vcap;
    bool nulls;        /* some row is NULL */
} hcol;

typedef struct hrel {
    int ncols;
    int64_t n;
    hcol *c;
} hrel;

static void hrel_free(hrel *h) {
    for (int i = 0; h->c && i < h->ncols; i++) free(h->c[i].data), free(h->c[i].bytes), free(h->c[i].valid);
    free(h->c);
    memset(h, 0, sizeof *h);
}

static bool grow(tr_ctx *x, void *pp, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 4096;
    while (c < need) c *= 2;
    void *p = realloc(*(void **)pp, c);
    if (!p) return tr_fail(x, DKB_ENOMEM, "out of memory (a chunked aggregate's partials)"), false;
    *(void **)pp = p, *cap = c;
    return true;
}

/* Append r's rows (r->n > 0) to h. */
static bool hrel_append(tr_ctx *x, hrel *h, const tr_rel *r) {
    dkb_tp *tp = x->tp;
    if (!h->c) {
        h->c = calloc((size_t)(r->ncols ? r->ncols : 1), sizeof *h->c);
        if (!h->c) return tr_fail(x, DKB_ENOMEM, "out of memory"), false;
        h->ncols = r->ncols;
    }
    int64_t n0 = h->n, n = r->n;
    for (int i = 0; i < r->ncols; i++) {
        tr_col c = r->c[i];
        hcol *o = &h->c[i];
        if (!tr_col_ready(x, &c)) return false;
        if (n0 == 0 && !o->dt && !o->scale && !o->dict) {
            o->ty = c.ty, o->dt = c.v->dtype, o->scale = c.v->scale, o->dict = c.v->dict;
        } else if (o->dt != c.v->dtype || o->scale != c.v->scale || o->dict != c.v->dict) {
            return tr_fail(x, DKB_EINTERNAL, "a chunked aggregate's partials differ in type between runs"), false;
        }
        if (c.v->dtype == DKB_TP_STR) {
            int64_t *off = dkb_tp_host_copy(tp, c.v); /* n + 1 offsets, then the characters */
            if (!off || !grow(x, &o->data, &o->cap, (size_t)(n0 + n + 1) * 8)) return tr_bad(x), false;
            int64_t *dst = (int64_t *)o->data, nb = off[n] - off[0];
            if (n0 == 0) dst[0] = 0;
            for (int64_t k = 1; k <= n; k++) dst[n0 + k] = dst[n0] + off[k] - off[0];
            if (!grow(x, &o->bytes, &o->bcap, o->blen + (size_t)nb + 1)) return false;
            memcpy(o->bytes + o->blen, (char *)(off + n + 1) + off[0], (size_t)nb);
            o->blen += (size_t)nb;
        } else {
            size_t es = dkb_tp_dtype_size(c.v->dtype);
            if (!grow(x, &o->data, &o->cap, (size_t)(n0 + n) * es) || dkb_tp_to_host(tp, c.v, o->data + n0 * es))
                return tr_bad(x), false;
        }
        if (!grow(x, &o->valid, &o->vcap, (size_t)(n0 + n))) return false;
        if (c.valid) {
            if (dkb_tp_to_host(tp, c.valid, o->valid + n0)) return tr_bad(x), false;
            for (int64_t k = 0; k < n && !o->nulls; k++) o->nulls = !o->valid[n0 + k];
        } else {
            memset(o->valid + n0, 1, (size_t)n);
        }
    }
    h->n += n;
    return !tr_bad(x);
}

/* h's rows as a relation (new tensors). */
static tr_rel *hrel_upload(tr_ctx *x, const hrel *h) {
    dkb_tp *tp = x->tp;
    tr_rel *r = tr_rel_new(x, h->ncols, h->n);
    if (!r) return NULL;
    for (int i = 0; i < h->ncols; i++) {
        const hcol *c = &h->c[i];
        tr_col *o = &r->c[i];
        o->ty = c->ty;
        if (c->dt == DKB_TP_STR) o->v = dkb_tp_from_host_str(tp, h->n, (const int64_t *)c->data, c->bytes);
        else o->v = tr_relabel(x, dkb_tp_from_host(tp, c->dt, h->n, c->data), c->scale, c->dict);
        o->valid = c->nulls ? dkb_tp_from_host(tp, DKB_TP_BOOL, h->n, c->valid) : NULL;
    }
    return tr_bad(x) ? NULL : r;
}

/* ---- merging partials ---- */

/* The groups of p's first ng columns (ng 0: one group of every row). */
static bool key_groups(tr_ctx *x, const tr_rel *p, int ng, dkb_groups *g) {
    if (ng > 0) return tr_group(x, p->c, ng, p->n, g);
    g->group_id = tr_full(x, DKB_TP_I64, p->n, 0);
    g->first_row = tr_full(x, DKB_TP_I64, 1, 0);
    g->ngroups = 1;
    return !tr_bad(x);
}

/* One slot column c over groups g: the sum of counts (I64), the sum, min
 * or max of the values that are not NULL (NULL where a group has none). */
static bool merge_slot(tr_ctx *x, const tr_col *c, int kind, const dkb_groups *g, tr_col *out) {
    dkb_tp *tp = x->tp;
    *out = (tr_col){.ty = c->ty};
    dkb_groups h = *g;
    const dkb_tensor *vals = c->v;
    if (c->valid) vals = dkb_tp_compress(tp, vals, c->valid), h.group_id = dkb_tp_compress(tp, g->group_id, c->valid);
    dkb_agg agg = kind == S_MIN ? DKB_AGG_MIN : kind == S_MAX ? DKB_AGG_MAX : DKB_AGG_SUM;
    out->v = dkb_tp_aggregate(tp, &h, agg, vals);
    if (kind == S_COUNT) out->v = dkb_tp_cast(tp, out->v, DKB_TP_I64);
    else if (out->v && c->v->dtype != DKB_TP_F64 && agg == DKB_AGG_SUM && c->v->dtype != DKB_TP_I128)
        out->v = dkb_tp_cast(tp, out->v, c->v->dtype); /* a sum of sums keeps the partials' width */
    if (c->valid && kind != S_COUNT)
        out->valid = dkb_tp_cmp_i64(tp, dkb_tp_aggregate(tp, &h, DKB_AGG_COUNT, NULL), DKB_CMP_GT, 0);
    if (out->v && c->v->dict) out->v = tr_relabel(x, out->v, 0, c->v->dict);
    return !tr_bad(x);
}

/* The main partials p (keys, then slots) merged: one row per group. */
static tr_rel *merge_main(tr_ctx *x, const chunk_plan *pl, const tr_rel *p) {
    dkb_groups g;
    if (!key_groups(x, p, pl->ng, &g)) return NULL;
    tr_rel *o = tr_rel_new(x, p->ncols, g.ngroups);
    if (!o) return NULL;
    for (int i = 0; i < pl->ng; i++) tr_col_gather(x, &p->c[i], p->n, g.first_row, false, &o->c[i]);
    for (int s = 0; s < pl->nslots; s++)
        if (!merge_slot(x, &p->c[pl->ng + s], pl->slot_kind[s], &g, &o->c[pl->ng + s])) return NULL;
    return tr_bad(x) ? NULL : o;
}

/* Replace h's rows by their merge (main: merge_main; distinct: tr_distinct). */
static bool hrel_merge(tr_ctx *x, const chunk_plan *pl, hrel *h, bool main) {
    if (h->n == 0) return true;
    dkb_tp_mark m = dkb_tp_mark_get(x->tp);
    tr_rel *r = hrel_upload(x, h);
    tr_rel *merged = r ? (main ? merge_main(x, pl, r) : tr_distinct(x, r)) : NULL;
    if (!merged) return false;
    h->n = 0;
    for (int i = 0; i < h->ncols; i++) h->c[i].blen = 0, h->c[i].nulls = false;
    bool ok = merged->n == 0 || hrel_append(x, h, merged);
    dkb_tp_release(x->tp, m);
    return ok;
}

/* avg from the merged sum and count (the exact average of integers, as
 * dkb_tp_aggregate's AVG; NULL where the count is 0). */
static bool finish_avg(tr_ctx *x, const tr_col *sum, const tr_col *cnt, int64_t ng, tr_col *out) {
    int64_t *c = tr_host_i64(x, cnt->v);
    double *v = tr_alloc(x, (size_t)(ng + 1) * sizeof *v);
    uint8_t *ok = tr_alloc(x, (size_t)ng + 1);
    bool dbl = sum->v->dtype == DKB_TP_F64, all = true;
    double *fs = dbl ? tr_host_f64(x, sum->v) : NULL;
    __int128 *is = dbl ? NULL : tr_host_i128(x, sum->v);
    if (!c || !v || !ok || (!fs && !is)) return false;
    double p10 = 1;
    for (int k = 0; k < sum->v->scale; k++) p10 *= 10;
    for (int64_t k = 0; k < ng; k++) {
        ok[k] = c[k] > 0;
        all &= ok[k] != 0;
        v[k] = !ok[k] ? 0 : dbl ? fs[k] / (double)c[k] : dkb__exact_avg(is[k], c[k], p10);
    }
    out->v = dkb_tp_from_host(x->tp, DKB_TP_F64, ng, v);
    out->valid = all ? NULL : dkb_tp_from_host(x->tp, DKB_TP_BOOL, ng, ok);
    return !tr_bad(x);
}

/* The aggregate's result from the merged partials: the main rows (one per
 * group) give the keys and the plain aggregates; each distinct partial
 * (distinct (keys, v) rows) is grouped with the main keys in front, so its
 * rows take the main rows' group numbers, and counted per group. */
static tr_rel *finish(tr_ctx *x, const chunk_plan *pl, const tr_rel *m, tr_rel *const *d) {
    dkb_tp *tp = x->tp;
    int ng = pl->ng;
    const tr_rel *base = m;
    if (!base) { /* no plain aggregate: the groups are the distinct keys of a distinct partial (all
                  * have the same keys: those of every row) */
        if (!d[0]) return tr_fail(x, DKB_EINTERNAL, "a chunked aggregate without partial rows");
        tr_rel *k = tr_rel_new(x, ng, d[0]->n);
        if (!k) return NULL;
        memcpy(k->c, d[0]->c, (size_t)ng * sizeof *k->c);
        base = ng ? tr_distinct(x, k) : tr_rel_new(x, 0, 1);
        if (!base) return NULL;
    }
    int64_t nb = base->n;
    tr_rel *o = tr_rel_new(x, ng + pl->na, nb);
    if (!o) return NULL;
    memcpy(o->c, base->c, (size_t)ng * sizeof *o->c);
    for (int i = 0; i < pl->na; i++) {
        const agg_plan *a = &pl->a[i];
        tr_col *out = &o->c[ng + i];
        if (a->kind == A_PLAIN) {
            *out = m->c[ng + a->slot];
            out->ty = a->rt;
        } else if (a->kind == A_AVG) {
            out->ty = a->rt;
            if (!finish_avg(x, &m->c[ng + a->slot], &m->c[ng + a->slot2], nb, out)) return NULL;
        } else if (!d[a->d]) {
            out->ty = a->rt;
            out->v = tr_full(x, DKB_TP_I64, nb, 0);
        } else {
            const tr_rel *dr = d[a->d];
            dkb_groups g = {.ngroups = nb, .first_row = tr_arange(x, nb)}; /* first_row: not read by COUNT */
            if (ng) {
                tr_rel *kb = tr_rel_new(x, ng, nb), *kd = tr_rel_new(x, ng, dr->n);
                if (!kb || !kd) return NULL;
                memcpy(kb->c, base->c, (size_t)ng * sizeof *kb->c);
                memcpy(kd->c, dr->c, (size_t)ng * sizeof *kd->c);
                tr_rel *both = tr_rel_concat(x, kb, kd);
                dkb_groups all;
                if (!both || !tr_group(x, both->c, ng, both->n, &all)) return NULL;
                if (all.ngroups != nb)
                    return tr_fail(x, DKB_EINTERNAL, "a chunked count(DISTINCT) saw groups the aggregate did not");
                dkb_tensor *idx = dkb_tp_arith_i64(tp, tr_arange(x, dr->n), DKB_OP_ADD, nb, 0);
                g.group_id = dkb_tp_gather(tp, all.group_id, idx, 0);
            } else {
                g.group_id = tr_full(x, DKB_TP_I64, dr->n, 0);
            }
            tr_col v = dr->c[ng];
            if (!tr_col_ready(x, &v)) return NULL;
            if (v.valid) g.group_id = dkb_tp_compress(tp, g.group_id, v.valid);
            out->ty = a->rt;
            out->v = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, NULL); /* the rows are distinct already */
            if (!out->v) return tr_bad(x), NULL;
        }
    }
    return tr_bad(x) ? NULL : o;
}

/* ---- the runs ---- */

/* The translator's memos (bounds, pending rows, made columns, ...) as they
 * are before a run: a run's entries name tensors its release frees, and
 * some memos are rings that a run would overwrite. */
typedef struct memo_state {
    int nmemo, nfmemo, nrmemo, nsmemo, nfull, nready, nbound, nmaxlen, nident, ndist, nstext;
    tr_join_memo memo[TR_MAX_MEMO];
    tr_filter_memo fmemo[TR_MAX_MEMO];
    struct tr_rows_memo rmemo[4 * TR_MAX_MEMO];
    struct tr_sel_memo smemo[4 * TR_MAX_MEMO];
    struct tr_full_memo full[16];
    struct tr_ready_memo ready[64];
    struct tr_bound bound[TR_MAX_BOUND];
    struct tr_maxlen maxlen[16];
    const dkb_tensor *ident[16];
    struct tr_dist dist[TR_MAX_BOUND];
    struct tr_stext stext[TR_MAX_BOUND];
} memo_state;

#define MEMO_FIELDS(X)                                                                                                 \
    X(nmemo) X(nfmemo) X(nrmemo) X(nsmemo) X(nfull) X(nready) X(nbound) X(nmaxlen) X(nident) X(ndist) X(nstext)        \
    X(memo) X(fmemo) X(rmemo) X(smemo) X(full) X(ready) X(bound) X(maxlen) X(ident) X(dist) X(stext)

static void memo_save(const tr_ctx *x, memo_state *s) {
#define SAVE(f) memcpy(&s->f, &x->f, sizeof s->f);
    MEMO_FIELDS(SAVE)
#undef SAVE
}

static void memo_restore(tr_ctx *x, const memo_state *s) {
#define RESTORE(f) memcpy(&x->f, &s->f, sizeof s->f);
    MEMO_FIELDS(RESTORE)
#undef RESTORE
}

/* What every run reads is made before the runs, since a run's release
 * frees what it makes: l's pending row numbers (a run gathers its rows of
 * l through them), and r's columns, which an expression reading one makes
 * ready in place (the relation keeps the gathered column). */
static bool before_runs(tr_ctx *x, tr_rel *l, tr_rel *r) {
    for (int i = 0; i < l->ncols; i++)
        if (l->c[i].rows && !(l->c[i].rows = tr_rows(x, l->c[i].rows))) return tr_bad(x), false;
    tr_col *c = tr_rel_ready_cols(x, r);
    if (!c) return false;
    r->c = c;
    return true;
}

/* The join and the chain over rows [lo, hi) of l. */
static tr_rel *run_rows(tr_ctx *x, const cJSON *join, const cJSON *const *chain, int nchain, const tr_rel *l,
                        const tr_rel *r, int64_t lo, int64_t hi) {
    dkb_tensor *idx = dkb_tp_arith_i64(x->tp, tr_arange(x, hi - lo), DKB_OP_ADD, lo, 0);
    if (!idx) return tr_bad(x), NULL;
    tr_bound_set(x, idx, lo, hi > lo ? hi - 1 : lo);
    tr_distinct_set(x, idx);
    tr_rel *lc = tr_rel_gather(x, l, idx, false);
    tr_rel *in = lc ? tr_join_rels(x, join, lc, r) : NULL;
    for (int i = nchain - 1; i >= 0 && in; i--) in = tr_unary(x, chain[i], in);
    return in;
}

/* The join and the chain over rows [lo, hi) of l, aggregated into partials. */
static bool run_one(tr_ctx *x, const chunk_plan *pl, const cJSON *join, const cJSON *const *chain, int nchain,
                    const tr_rel *l, const tr_rel *r, int64_t lo, int64_t hi, hrel *hm, hrel *hd) {
    tr_rel *in = run_rows(x, join, chain, nchain, l, r, lo, hi);
    if (!in) return false;
    if (pl->nslots) {
        tr_rel *p = tr_aggregate(x, pl->main_op, in);
        if (!p || (p->n && !hrel_append(x, hm, p))) return false;
    }
    for (int j = 0; j < pl->ndist; j++) {
        tr_rel *p = tr_aggregate(x, pl->dist_op[j], in);
        if (!p || (p->n && !hrel_append(x, &hd[j], p))) return false;
    }
    return true;
}

static tr_rel *run_chunked(tr_ctx *x, const cJSON *op, const chunk_plan *pl, const cJSON *join, const cJSON *const *chain, int nchain,
                           tr_rel *l, const tr_rel *r, const dkb_tensor *fanout, int64_t total, int64_t limit) {
    int64_t nl = l->n, *per = tr_host_i64(x, fanout);
    if (!per) return NULL;
    hrel hm = {0}, hd[MAX_AGGS];
    memset(hd, 0, sizeof hd);
    memo_state *saved = malloc(sizeof *saved);
    if (!saved) return tr_fail(x, DKB_ENOMEM, "out of memory");
    memo_save(x, saved);
    FILE *trace = x->trace;
    x->trace = NULL; /* one line for all runs, below */
    int64_t runs = 0, biggest = 0;
    tr_rel *out = NULL;
    bool ok = true;
    for (int64_t lo = 0; lo < nl && ok;) {
        int64_t hi = lo, pairs = 0;
        while (hi < nl && (hi == lo || pairs + per[hi] <= limit)) pairs += per[hi++];
        if (pairs > biggest) biggest = pairs;
        dkb_tp_mark m = dkb_tp_mark_get(x->tp);
        ok = run_one(x, pl, join, chain, nchain, l, r, lo, hi, &hm, hd);
        memo_restore(x, saved);
        dkb_tp_release(x->tp, m);
        runs++, lo = hi;
        if (ok && hm.n > MERGE_ROWS) ok = hrel_merge(x, pl, &hm, true), memo_restore(x, saved);
        for (int j = 0; ok && j < pl->ndist; j++)
            if (hd[j].n > MERGE_ROWS) ok = hrel_merge(x, pl, &hd[j], false), memo_restore(x, saved);
    }
    x->trace = trace;
    bool none = hm.n == 0;
    for (int j = 0; j < pl->ndist; j++) none &= hd[j].n == 0;
    if (ok && none) { /* no run has a row past the chain: the aggregate over no rows */
        tr_rel *in = run_rows(x, join, chain, nchain, l, r, 0, 0);
        out = in ? tr_aggregate(x, op, in) : NULL;
        ok = false;
    }
    if (ok) {
        tr_rel *m = NULL, *d[MAX_AGGS] = {0};
        if (pl->nslots) m = hm.n ? hrel_upload(x, &hm) : NULL;
        if (m) m = merge_main(x, pl, m);
        for (int j = 0; j < pl->ndist && ok; j++) { /* NULL: no row has a value (count 0) */
            d[j] = hd[j].n ? hrel_upload(x, &hd[j]) : NULL;
            if (d[j]) d[j] = tr_distinct(x, d[j]);
            ok = !tr_bad(x);
        }
        if (pl->nslots && !m) ok = false;
        if (!ok && !tr_bad(x))
            tr_fail(x, DKB_EINTERNAL, "a chunked aggregate's runs gave no partial rows");
        if (ok) out = finish(x, pl, m, d);
    }
    hrel_free(&hm);
    for (int j = 0; j < pl->ndist; j++) hrel_free(&hd[j]);
    free(saved);
    if (out)
        tr_trace(x, "join of %lld x %lld rows into %lld pairs, in %lld runs of at most %lld pairs (largest %lld), "
                    "aggregated per run and merged: %lld groups",
                 (long long)nl, (long long)r->n, (long long)total, (long long)runs, (long long)limit,
                 (long long)biggest, (long long)out->n);
    return out;
}

tr_rel *tr_aggregate_join_chunked(tr_ctx *x, const cJSON *op, bool *done) {
    *done = false;
    const cJSON *chain[MAX_CHAIN], *node = child0(op);
    int nchain = 0;
    while (node && nchain < MAX_CHAIN &&
           (!strcmp(tr_str(node, "type"), "LOGICAL_PROJECTION") || !strcmp(tr_str(node, "type"), "LOGICAL_FILTER")) &&
           cJSON_GetArraySize(tr_get(node, "children")) == 1)
        chain[nchain++] = node, node = child0(node);
    if (!node || strcmp(tr_str(node, "type"), "LOGICAL_COMPARISON_JOIN") || strcmp(tr_str(node, "join_type"), "INNER") ||
        cJSON_GetArraySize(tr_get(node, "children")) != 2 || dkb__rec_on())
        return NULL;
    chunk_plan pl;
    if (!plan_aggs(op, &pl)) return NULL;
    *done = true;
    /* the children at the depths tr_op would give them */
    int depth = x->depth;
    x->depth = depth + nchain + 1;
    tr_rel *l = tr_op(x, cJSON_GetArrayItem(tr_get(node, "children"), 0));
    tr_rel *r = l ? tr_op(x, cJSON_GetArrayItem(tr_get(node, "children"), 1)) : NULL;
    tr_rel *out = NULL;
    if (r) {
        int64_t limit = pair_limit(x), total = 0;
        dkb_tensor *fan = (__int128)l->n * r->n > limit ? tr_join_fanout(x, node, l, r, limit, &total) : NULL;
        if (fan && total > limit) {
            x->depth = depth;
            if (before_runs(x, l, r))
                out = run_chunked(x, op, &pl, node, chain, nchain, l, r, fan, total, limit);
        } else if (!tr_bad(x)) {
            tr_rel *in = tr_join_rels(x, node, l, r);
            for (int i = nchain - 1; i >= 0 && in; i--) {
                x->depth = depth + i + 1;
                in = tr_unary(x, chain[i], in);
            }
            x->depth = depth;
            out = in ? tr_aggregate(x, op, in) : NULL;
        }
    }
    x->depth = depth;
    plan_free(&pl);
    return tr_bad(x) ? NULL : out;
}
