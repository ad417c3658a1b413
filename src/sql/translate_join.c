/* translate_join.c: DuckDB's joins as TensorPlan hash joins:
 * COMPARISON_JOIN of every join type (INNER, LEFT, RIGHT, OUTER, SEMI,
 * ANTI, RIGHT_SEMI, RIGHT_ANTI, MARK, SINGLE), DELIM_JOIN (a decorrelated
 * subquery: the distinct values of the outer side's correlated columns are
 * what the subquery's DELIM_GET reads, then the two sides join like a
 * comparison join), ANY_JOIN (a join on an arbitrary condition such as an
 * OR: all pairs, bounded, then the condition) and CROSS_PRODUCT.
 *
 * Equality conditions (= and IS NOT DISTINCT FROM) become one integer key
 * per side (several columns packed: each shifted to start at 0, then
 * a * (span_b + 1) + b; strings and doubles through dense host ids that
 * agree across the sides); a NULL never matches under =, and matches NULL
 * under IS NOT DISTINCT FROM (the validity is one more key column). Other
 * conditions (<>, <, ...) filter the matched pairs; without any equality
 * the pairs are all pairs (bounded). Outer joins append the unmatched rows
 * of a side with NULLs for the other. */
#include <stdlib.h>
#include <string.h>

#include "sql/translate_internal.h"

#define MAX_CROSS_PAIRS (1LL << 27)

static const cJSON *child(const cJSON *op, int i) { return cJSON_GetArrayItem(tr_get(op, "children"), i); }

/* One side's key: an I64 tensor of values >= 0, and the rows that can
 * match at all (NULL: every row). */
typedef struct side_key {
    dkb_tensor *key;
    dkb_tensor *can;
} side_key;

static bool span_of(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b, int64_t *lo, int64_t *hi) {
    dkb_tp *tp = x->tp;
    /* bounds known from the store columns the keys come from: no reduction */
    int64_t la, ha, lb, hb;
    if (tr_bound_get(x, a, &la, &ha) && tr_bound_get(x, b, &lb, &hb)) {
        *lo = la < lb ? la : lb;
        *hi = ha > hb ? ha : hb;
        return true;
    }
    int64_t l1 = dkb_tp_get_i64(tp, dkb_tp_reduce(tp, DKB_AGG_MIN, a), 0);
    int64_t l2 = dkb_tp_get_i64(tp, dkb_tp_reduce(tp, DKB_AGG_MIN, b), 0);
    int64_t h1 = dkb_tp_get_i64(tp, dkb_tp_reduce(tp, DKB_AGG_MAX, a), 0);
    int64_t h2 = dkb_tp_get_i64(tp, dkb_tp_reduce(tp, DKB_AGG_MAX, b), 0);
    *lo = l1 < l2 ? l1 : l2;
    *hi = h1 > h2 ? h1 : h2;
    return !tr_bad(x);
}

/* Keys of both sides from columns lc[i] = rc[i], i < m (both sides non-empty). */
static bool make_keys(tr_ctx *x, const tr_col *lc, int64_t nl, const tr_col *rc, int64_t nr, const bool *null_eq,
                      int m, side_key *L, side_key *R) {
    dkb_tp *tp = x->tp;
    dkb_tensor *ka[64], *kb[64];
    int nk = 0;
    L->can = R->can = NULL;
    for (int i = 0; i < m; i++) {
        dkb_tensor *a, *b;
        if (!tr_key_pair(x, &lc[i], nl, &rc[i], nr, &a, &b)) return false;
        a = tr_relabel(x, a, 0, NULL);
        b = tr_relabel(x, b, 0, NULL);
        if (a->dtype == DKB_TP_BOOL) a = dkb_tp_cast(tp, a, DKB_TP_I32);
        if (b->dtype == DKB_TP_BOOL) b = dkb_tp_cast(tp, b, DKB_TP_I32);
        if (nk + 2 > 64) return tr_unsupported(x, NULL, "a join on more than 32 columns"), false;
        if (null_eq[i] && (lc[i].valid || rc[i].valid)) {
            dkb_tensor *va = tr_valid_or_ones(x, &lc[i], nl), *vb = tr_valid_or_ones(x, &rc[i], nr);
            a = dkb_tp_where(tp, va, a, dkb_tp_full_i64(tp, DKB_TP_I64, nl, 0));
            b = dkb_tp_where(tp, vb, b, dkb_tp_full_i64(tp, DKB_TP_I64, nr, 0));
            ka[nk] = a, kb[nk++] = b;
            ka[nk] = dkb_tp_cast(tp, va, DKB_TP_I32), kb[nk++] = dkb_tp_cast(tp, vb, DKB_TP_I32);
        } else {
            ka[nk] = a, kb[nk++] = b;
            if (!null_eq[i]) {
                L->can = tr_and_valid(x, L->can, lc[i].valid);
                R->can = tr_and_valid(x, R->can, rc[i].valid);
            }
        }
    }
    if (tr_bad(x)) return false;
    if (nk == 1 && !L->can && !R->can) { /* the common case: the values themselves */
        L->key = ka[0], R->key = kb[0];
        return true;
    }
    dkb_tensor *acc_a = NULL, *acc_b = NULL;
    int64_t acc_span = 0, los[64], his[64];
    /* shifted to start at 0 only when some value is negative, or when the
     * columns as they are would not pack into 2^62 (keys are mostly >= 0
     * and narrow already: then they are packed as they are) */
    __int128 unshifted = 0;
    for (int i = 0; i < nk; i++) {
        if (!span_of(x, ka[i], kb[i], &los[i], &his[i])) return false;
        __int128 span = (__int128)his[i] - (los[i] < 0 ? los[i] : 0);
        unshifted = i ? (unshifted + 1) * (span + 1) - 1 : span;
        if (unshifted >= ((__int128)1 << 62)) unshifted = (__int128)1 << 62; /* too wide: kept from overflowing */
    }
    bool shift_all = unshifted >= ((__int128)1 << 62);
    for (int i = 0; i < nk; i++) {
        int64_t lo = los[i], hi = his[i];
        int64_t base = lo < 0 || shift_all ? lo : 0;
        dkb_tensor *sa = base ? dkb_tp_arith_i64(tp, dkb_tp_cast(tp, ka[i], DKB_TP_I64), DKB_OP_SUB, base, 0) : ka[i];
        dkb_tensor *sb = base ? dkb_tp_arith_i64(tp, dkb_tp_cast(tp, kb[i], DKB_TP_I64), DKB_OP_SUB, base, 0) : kb[i];
        __int128 span = (__int128)hi - base;
        if (!acc_a) {
            acc_a = sa, acc_b = sb, acc_span = (int64_t)span;
            continue;
        }
        __int128 total = ((__int128)acc_span + 1) * (span + 1) - 1;
        if (span >= ((__int128)1 << 62) || total >= ((__int128)1 << 62))
            return tr_unsupported(x, NULL, "a join on keys whose combined range exceeds 2^62"), false;
        acc_a = dkb_tp_pack2(tp, acc_a, sa, (int64_t)span);
        acc_b = dkb_tp_pack2(tp, acc_b, sb, (int64_t)span);
        acc_span = (int64_t)total;
    }
    if (nk == 1) { /* one column: its keys as I64 (a masked row becomes -1 below) */
        dkb_tensor *a0 = acc_a, *b0 = acc_b;
        acc_a = dkb_tp_cast(tp, acc_a, DKB_TP_I64);
        acc_b = dkb_tp_cast(tp, acc_b, DKB_TP_I64);
        tr_distinct_derive(x, a0, NULL, acc_a); /* widened: still distinct */
        tr_distinct_derive(x, b0, NULL, acc_b);
    }
    L->key = acc_a, R->key = acc_b;
    if (L->can) L->key = dkb_tp_where(tp, L->can, L->key, dkb_tp_full_i64(tp, DKB_TP_I64, nl, -1));
    return !tr_bad(x);
}

/* BOOL per probe row: its key occurs among the build rows that can match. */
static dkb_tensor *exists(tr_ctx *x, const side_key *probe, int64_t np, const side_key *build) {
    dkb_tp *tp = x->tp;
    (void)np;
    dkb_tensor *bk = build->can ? dkb_tp_compress(tp, build->key, build->can) : build->key;
    dkb_tensor *pk = probe->key;
    if (probe->can && pk == probe->key && pk->dtype != DKB_TP_I64) pk = dkb_tp_cast(tp, pk, DKB_TP_I64);
    dkb_tensor *m = dkb_tp_semi_join(tp, bk, pk);
    return probe->can ? dkb_tp_and(tp, m, probe->can) : m;
}

/* A memo's probe side is worth keeping when it is large and the build
 * side small against it (then probing again is what costs). */
#define MEMO_MIN_PROBE (1 << 16)
#define MEMO_RATIO 8

static bool same_tensor(const dkb_tensor *a, const dkb_tensor *b) {
    return a == b || (a->data == b->data && a->dtype == b->dtype && a->n == b->n && a->dtype != DKB_TP_STR);
}

/* The pairs of joining bk against probe from an earlier join of the same
 * probe tensor (x->memo), when bk's keys are all among that join's build
 * keys and those are distinct: each probe row then had at most one pair,
 * so the rows whose key is in bk are among those pairs, in probe order;
 * joining bk against the pairs' keys gives the pairs of bk in the order
 * dkb_tp_join gives them (probe rows ascending, build rows ascending).
 * False (nothing set) when no memo applies. */
static bool memo_pairs(tr_ctx *x, const dkb_tensor *bk, const dkb_tensor *probe, dkb_join_result *out) {
    dkb_tp *tp = x->tp;
    for (int i = 0; i < x->nmemo; i++) {
        tr_join_memo *m = &x->memo[i];
        if (!same_tensor(m->probe, probe) || bk->n > m->build->n) continue;
        if (m->unique < 0 && tr_distinct_get(x, m->build)) m->unique = 1; /* known distinct: no group */
        if (m->unique < 0) {
            const dkb_tensor *keys[] = {m->build};
            dkb_groups g = dkb_tp_group(tp, keys, 1);
            if (tr_bad(x)) return false;
            m->unique = g.ngroups == m->build->n;
        }
        if (!m->unique || dkb_tp_count(tp, dkb_tp_semi_join(tp, m->build, bk)) != bk->n || tr_bad(x)) continue;
        dkb_tensor *pair_key = dkb_tp_gather(tp, m->build, m->build_idx, 0);
        dkb_join_result j = dkb_tp_join(tp, bk, pair_key, DKB_JOIN_INNER);
        out->probe_idx = dkb_tp_gather(tp, m->probe_idx, j.probe_idx, 0);
        out->build_idx = j.build_idx;
        tr_trace(x, "pairs from the join of %lld x %lld rows above (the probe side not read again)",
                 (long long)probe->n, (long long)m->build->n);
        return !tr_bad(x);
    }
    return false;
}

/* On the CPU, a join of a large probe side against a build side a
 * thousandth of its size (TPC-H Q18: 6M lines against 57 orders) writes
 * every probe row's chain head in its first pass; a semi-join (no chains)
 * finds the few rows that match, and only those are joined. */
static bool few_probe_matches(tr_ctx *x, const dkb_tensor *bk, const dkb_tensor *probe) {
    return dkb_tp_backend_of(x->tp) == DKB_TP_CPU && probe->n >= (1 << 20) && bk->n * 1024 <= probe->n;
}

static dkb_join_result join_matched(tr_ctx *x, const dkb_tensor *bk, const dkb_tensor *probe) {
    dkb_tp *tp = x->tp;
    dkb_tensor *rows = dkb_tp_nonzero(tp, dkb_tp_semi_join(tp, bk, probe));
    dkb_join_result j = dkb_tp_join(tp, bk, dkb_tp_gather(tp, probe, rows, 0), DKB_JOIN_INNER);
    j.probe_idx = dkb_tp_gather(tp, rows, j.probe_idx, 0); /* the matched rows ascend: the pairs' order is kept */
    return j;
}

/* Matching pairs (probe rows of L, build rows of R). */
static bool pairs_eq(tr_ctx *x, const side_key *L, const side_key *R, int64_t nr, dkb_tensor **li, dkb_tensor **ri) {
    dkb_tp *tp = x->tp;
    (void)nr;
    dkb_tensor *rsel = R->can ? dkb_tp_nonzero(tp, R->can) : NULL;
    dkb_tensor *bk = rsel ? dkb_tp_gather(tp, R->key, rsel, 0) : R->key;
    dkb_join_result j = {0};
    bool memo_ok = !L->can && L->key->n >= MEMO_MIN_PROBE && bk->n <= L->key->n / MEMO_RATIO;
    if (!memo_ok || !memo_pairs(x, bk, L->key, &j)) {
        if (tr_bad(x)) return false;
        j = few_probe_matches(x, bk, L->key) ? join_matched(x, bk, L->key) : dkb_tp_join(tp, bk, L->key, DKB_JOIN_INNER);
        if (memo_ok && x->nmemo < TR_MAX_MEMO && !tr_bad(x))
            x->memo[x->nmemo++] = (tr_join_memo){L->key, bk, j.probe_idx, j.build_idx, -1};
    }
    *li = j.probe_idx;
    *ri = rsel ? dkb_tp_gather(tp, rsel, j.build_idx, 0) : j.build_idx;
    if (tr_bad(x)) return false;
    /* rows of the sides; a side's rows repeat only where the other side's keys do */
    tr_bound_set(x, *li, 0, L->key->n > 0 ? L->key->n - 1 : 0);
    tr_bound_set(x, *ri, 0, nr > 0 ? nr - 1 : 0);
    if (!R->can && tr_distinct_get(x, bk)) tr_distinct_set(x, *li);
    if (!L->can && tr_distinct_get(x, L->key)) tr_distinct_set(x, *ri);
    return true;
}

/* A LEFT join's pairs in one dkb_tp_join LEFT (as the hand plans join),
 * R building and L probing as in pairs_eq: every row of L in order with
 * its matching rows of R (ascending), or -1 when none; no semi-join for
 * the unmatched rows and no concatenation. A row of L that cannot match
 * has key -1 (make_keys), and R's keys are then packed, all >= 0. Only
 * for joins on equalities alone. */
static bool pairs_left(tr_ctx *x, const side_key *L, const side_key *R, dkb_tensor **li, dkb_tensor **ri) {
    dkb_tp *tp = x->tp;
    dkb_tensor *rsel = R->can ? dkb_tp_nonzero(tp, R->can) : NULL;
    dkb_tensor *bk = rsel ? dkb_tp_gather(tp, R->key, rsel, 0) : R->key;
    dkb_join_result j = dkb_tp_join(tp, bk, L->key, DKB_JOIN_LEFT);
    *li = j.probe_idx;
    *ri = rsel ? dkb_tp_gather(tp, rsel, j.build_idx, -1) : j.build_idx;
    if (tr_bad(x)) return false;
    tr_bound_set(x, *li, 0, L->key->n > 0 ? L->key->n - 1 : 0);
    if (!R->can && tr_distinct_get(x, bk)) tr_distinct_set(x, *li);
    return true;
}

static bool pairs_cross(tr_ctx *x, int64_t nl, int64_t nr, dkb_tensor **li, dkb_tensor **ri) {
    if (nl && nr > MAX_CROSS_PAIRS / nl)
        return tr_unsupported(x, NULL, "a join without an equality condition over %lld x %lld rows", (long long)nl,
                              (long long)nr),
               false;
    if (nr == 1 || nl == 1) { /* a scalar subquery's one row against every row: no host arrays */
        *li = nr == 1 ? tr_arange(x, nl) : tr_full(x, DKB_TP_I64, nr, 0);
        *ri = nr == 1 ? tr_full(x, DKB_TP_I64, nl, 0) : tr_arange(x, nr);
        return !tr_bad(x);
    }
    int64_t n = nl * nr;
    int64_t *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return tr_fail(x, DKB_ENOMEM, "out of memory"), false;
    }
    for (int64_t i = 0, k = 0; i < nl; i++)
        for (int64_t j = 0; j < nr; j++, k++) a[k] = i, b[k] = j;
    *li = dkb_tp_from_host(x->tp, DKB_TP_I64, n, a);
    *ri = dkb_tp_from_host(x->tp, DKB_TP_I64, n, b);
    free(a), free(b);
    return !tr_bad(x);
}

/* The join's output: left columns through li, right through ri (either
 * may be NULL: that side is not output), each after its projection map. */
static tr_rel *assemble(tr_ctx *x, const cJSON *op, const tr_rel *l, const dkb_tensor *li, bool lmiss, const tr_rel *r,
                        const dkb_tensor *ri, bool rmiss, int64_t n) {
    const cJSON *lm = tr_get(op, "left_projection_map"), *rm = tr_get(op, "right_projection_map");
    int nlc = l ? (cJSON_GetArraySize(lm) ? cJSON_GetArraySize(lm) : l->ncols) : 0;
    int nrc = r ? (cJSON_GetArraySize(rm) ? cJSON_GetArraySize(rm) : r->ncols) : 0;
    tr_rel *o = tr_rel_new(x, nlc + nrc, n);
    if (!o) return NULL;
    for (int i = 0; i < nlc; i++) {
        int j = cJSON_GetArraySize(lm) ? (int)cJSON_GetArrayItem(lm, i)->valuedouble : i;
        if (j < 0 || j >= l->ncols) return tr_fail(x, DKB_EINTERNAL, "plan: left projection map entry %d", j);
        if (li) tr_col_gather(x, &l->c[j], l->n, li, lmiss, &o->c[i]);
        else o->c[i] = l->c[j];
    }
    for (int i = 0; i < nrc; i++) {
        int j = cJSON_GetArraySize(rm) ? (int)cJSON_GetArrayItem(rm, i)->valuedouble : i;
        if (j < 0 || j >= r->ncols) return tr_fail(x, DKB_EINTERNAL, "plan: right projection map entry %d", j);
        if (ri) tr_col_gather(x, &r->c[j], r->n, ri, rmiss, &o->c[nlc + i]);
        else o->c[nlc + i] = r->c[j];
    }
    return tr_bad(x) ? NULL : o;
}

static const char *const JOIN_TYPES[] = {"INNER", "LEFT", "RIGHT", "FULL", "SEMI", "ANTI", "RIGHT_SEMI", "RIGHT_ANTI",
                                         "MARK", "SINGLE"};
enum { J_INNER, J_LEFT, J_RIGHT, J_OUTER, J_SEMI, J_ANTI, J_RSEMI, J_RANTI, J_MARK, J_SINGLE };

/* Rows of 0..n-1 not in idx (I64 rows that matched). */
static dkb_tensor *unmatched(tr_ctx *x, const dkb_tensor *idx, int64_t n) {
    dkb_tensor *all = dkb_tp_arange(x->tp, n);
    return dkb_tp_nonzero(x->tp, dkb_tp_not(x->tp, dkb_tp_semi_join(x->tp, idx, all)));
}

static dkb_tensor *minus_ones(tr_ctx *x, int64_t n) { return dkb_tp_full_i64(x->tp, DKB_TP_I64, n, -1); }

/* The pairs (li, ri) where pred, an expression over the left columns then
 * the right ones (ANY_JOIN's condition), is true. */
/* The pairs' rows idx[sel] (sel: ascending positions of the pairs kept):
 * sel itself through the identity (a cross product's arange), n copies of
 * one row through copies of it (its one-row side), else a gather. */
static dkb_tensor *pairs_select(tr_ctx *x, dkb_tensor *idx, dkb_tensor *sel) {
    int64_t v;
    if (tr_is_identity(x, idx, idx->n)) return sel;
    if (tr_full_value(x, idx, &v)) return tr_full(x, idx->dtype, sel->n, v);
    dkb_tensor *r = dkb_tp_gather(x->tp, idx, sel, 0);
    int64_t lo, hi;
    if (r && tr_bound_get(x, idx, &lo, &hi)) tr_bound_set(x, r, lo, hi);
    return r;
}

static bool filter_pairs_pred(tr_ctx *x, const cJSON *pred, const tr_rel *l, const tr_rel *r, dkb_tensor **li,
                              dkb_tensor **ri) {
    tr_rel *lg = tr_rel_gather(x, l, *li, false), *rg = lg ? tr_rel_gather(x, r, *ri, false) : NULL;
    if (!rg) return false;
    tr_rel *both = tr_rel_new(x, l->ncols + r->ncols, (*li)->n);
    if (!both) return false;
    memcpy(both->c, lg->c, (size_t)l->ncols * sizeof *both->c);
    memcpy(both->c + l->ncols, rg->c, (size_t)r->ncols * sizeof *both->c);
    tr_col t;
    if (!tr_eval_col(x, pred, both, &t)) return false;
    dkb_tensor *sel = dkb_tp_nonzero(x->tp, tr_truth(x, &t));
    if (!sel) return tr_bad(x), false;
    tr_bound_set(x, sel, 0, (*li)->n > 0 ? (*li)->n - 1 : 0);
    tr_distinct_set(x, sel);
    *li = pairs_select(x, *li, sel);
    *ri = pairs_select(x, *ri, sel);
    return !tr_bad(x);
}

static tr_rel *comparison_join(tr_ctx *x, const cJSON *op, const tr_rel *l, const tr_rel *r, const cJSON *pred) {
    dkb_tp *tp = x->tp;
    const char *jt_name = tr_str(op, "join_type");
    int jt = -1;
    for (int i = 0; i < (int)(sizeof JOIN_TYPES / sizeof JOIN_TYPES[0]); i++)
        if (!strcmp(jt_name, JOIN_TYPES[i])) jt = i;
    if (jt < 0) return tr_unsupported(x, op, "%s join", jt_name);
    if (!pred && tr_get(op, "predicate") && !cJSON_IsNull(tr_get(op, "predicate"))) pred = tr_get(op, "predicate");
    const cJSON *conds = tr_get(op, "conditions");
    int nc = cJSON_GetArraySize(conds);
    if (nc > 32) return tr_unsupported(x, op, "a join with %d conditions", nc);
    tr_col lc[32], rc[32], el[32], er[32];
    bool null_eq[32];
    const char *resid_op[32];
    int ne = 0, nres = 0;
    for (int i = 0; i < nc; i++) {
        const cJSON *c = cJSON_GetArrayItem(conds, i);
        const char *cmp = tr_str(c, "comparison");
        tr_col a, b;
        if (!tr_eval_col(x, tr_get(c, "left"), l, &a) || !tr_eval_col(x, tr_get(c, "right"), r, &b)) return NULL;
        if (!strcmp(cmp, "COMPARE_EQUAL") || !strcmp(cmp, "COMPARE_NOT_DISTINCT_FROM")) {
            null_eq[ne] = cmp[8] == 'N';
            el[ne] = a, er[ne++] = b;
        } else {
            resid_op[nres] = cmp;
            lc[nres] = a, rc[nres++] = b;
        }
    }
    int64_t nl = l->n, nr = r->n;
    /* matched pairs (or, for semi/anti/mark without other conditions, the masks directly) */
    dkb_tensor *li = NULL, *ri = NULL, *lmask = NULL, *rmask = NULL;
    side_key L = {0}, R = {0};
    tr_rel *o = NULL;
    bool empty = nl == 0 || nr == 0;
    if (empty) {
        li = dkb_tp_full_i64(tp, DKB_TP_I64, 0, 0), ri = li;
        if (jt == J_SEMI || jt == J_ANTI || jt == J_MARK) lmask = dkb_tp_full_i64(tp, DKB_TP_BOOL, nl, 0);
        if (jt == J_RSEMI || jt == J_RANTI) rmask = dkb_tp_full_i64(tp, DKB_TP_BOOL, nr, 0);
    } else {
        if (ne && !make_keys(x, el, nl, er, nr, null_eq, ne, &L, &R)) return NULL;
        if (ne && !nres && !pred && (jt == J_SEMI || jt == J_ANTI || jt == J_MARK)) {
            lmask = exists(x, &L, nl, &R);
        } else if (ne && !nres && !pred && (jt == J_RSEMI || jt == J_RANTI)) {
            side_key Lb = L, Rp = R;
            if (Rp.can) Rp.key = dkb_tp_where(tp, Rp.can, Rp.key, dkb_tp_full_i64(tp, DKB_TP_I64, nr, -1));
            if (Lb.can) Lb.key = dkb_tp_compress(tp, Lb.key, Lb.can), Lb.can = NULL;
            rmask = dkb_tp_semi_join(tp, Lb.key, Rp.key);
            if (Rp.can) rmask = dkb_tp_and(tp, rmask, Rp.can);
        } else if (ne && !nres && !pred && (jt == J_LEFT || jt == J_SINGLE)) {
            dkb_tensor *pi, *bi;
            if (!pairs_left(x, &L, &R, &pi, &bi)) return NULL;
            if (jt == J_SINGLE && pi->n > nl)
                return tr_fail(x, DKB_EINVAL, "More than one row returned by a subquery used as an expression");
            o = assemble(x, op, l, pi, false, r, bi, true, pi->n);
            if (o) tr_trace(x, "%s join on %d equalit%s: %lld x %lld rows -> %lld", jt_name, ne, ne == 1 ? "y" : "ies",
                            (long long)nl, (long long)nr, (long long)o->n);
            return tr_bad(x) ? NULL : o;
        } else if (ne && !nres && !pred && jt == J_RIGHT && (nl <= nr || dkb_tp_backend_of(tp) != DKB_TP_CPU)) {
            /* a RIGHT join whose other side is not the larger: a LEFT join
             * the other way round (R probing, every row of R in order with
             * its matches of L or -1), as pairs_left; no semi-join for the
             * unmatched rows and no concatenation. A row of R that cannot
             * match probes with key -1 (its keys are then packed, >= 0).
             * On CUDA also when L is the larger (Q13's orders building, as
             * the hand plan joins): there the inner join, the semi-join for
             * the unmatched rows and two appends on the device (tr_concat_i64,
             * 9 operations each) cost far more than a join whose build keys
             * repeat; on the CPU the inner join's order is cheaper (see
             * docs/sql.md, "On the GPU"). */
            side_key Rp = R;
            if (Rp.can) Rp.key = dkb_tp_where(tp, Rp.can, Rp.key, dkb_tp_full_i64(tp, DKB_TP_I64, nr, -1)), Rp.can = NULL;
            if (!pairs_left(x, &Rp, &L, &ri, &li)) return NULL;
            o = assemble(x, op, l, li, true, r, ri, false, ri->n);
            if (o) tr_trace(x, "%s join on %d equalit%s: %lld x %lld rows -> %lld", jt_name, ne, ne == 1 ? "y" : "ies",
                            (long long)nl, (long long)nr, (long long)o->n);
            return tr_bad(x) ? NULL : o;
        } else {
            if (ne ? !pairs_eq(x, &L, &R, nr, &li, &ri) : !pairs_cross(x, nl, nr, &li, &ri)) return NULL;
            if (nres) {
                dkb_tensor *keep = NULL;
                int64_t np = li->n;
                for (int i = 0; i < nres; i++) {
                    tr_col a, b, t;
                    if (!tr_col_gather(x, &lc[i], nl, li, false, &a) || !tr_col_gather(x, &rc[i], nr, ri, false, &b) ||
                        !tr_col_ready(x, &a) || !tr_col_ready(x, &b))
                        return NULL;
                    tr_val va = {.c = a}, vb = {.c = b};
                    if (!tr_compare(x, resid_op[i], &va, &vb, np, op, &t)) return NULL;
                    keep = keep ? dkb_tp_and(tp, keep, tr_truth(x, &t)) : tr_truth(x, &t);
                }
                dkb_tensor *sel = dkb_tp_nonzero(tp, keep);
                if (!sel) return tr_bad(x), NULL;
                tr_bound_set(x, sel, 0, np > 0 ? np - 1 : 0);
                tr_distinct_set(x, sel);
                li = pairs_select(x, li, sel);
                ri = pairs_select(x, ri, sel);
            }
            if (pred && !filter_pairs_pred(x, pred, l, r, &li, &ri)) return NULL;
        }
    }
    if (tr_bad(x)) return NULL;
    if ((jt == J_SEMI || jt == J_ANTI || jt == J_MARK) && !lmask)
        lmask = dkb_tp_semi_join(tp, li, dkb_tp_arange(tp, nl));
    if ((jt == J_RSEMI || jt == J_RANTI) && !rmask) rmask = dkb_tp_semi_join(tp, ri, dkb_tp_arange(tp, nr));
    switch (jt) {
    case J_INNER: o = assemble(x, op, l, li, false, r, ri, false, li->n); break;
    case J_SINGLE:
    case J_LEFT: {
        if (jt == J_SINGLE && li->n > 0 &&
            li->n > dkb_tp_count(tp, dkb_tp_semi_join(tp, li, dkb_tp_arange(tp, nl))))
            return tr_fail(x, DKB_EINVAL, "More than one row returned by a subquery used as an expression");
        dkb_tensor *u = unmatched(x, li, nl);
        dkb_tensor *L2 = tr_concat_i64(x, li, u), *R2 = tr_concat_i64(x, ri, minus_ones(x, u ? u->n : 0));
        o = L2 && R2 ? assemble(x, op, l, L2, false, r, R2, true, L2->n) : NULL;
        break;
    }
    case J_RIGHT: {
        dkb_tensor *u = unmatched(x, ri, nr);
        dkb_tensor *L2 = tr_concat_i64(x, li, minus_ones(x, u ? u->n : 0)), *R2 = tr_concat_i64(x, ri, u);
        o = L2 && R2 ? assemble(x, op, l, L2, true, r, R2, false, L2->n) : NULL;
        break;
    }
    case J_OUTER: {
        dkb_tensor *ul = unmatched(x, li, nl), *ur = unmatched(x, ri, nr);
        int64_t a = ul ? ul->n : 0, b = ur ? ur->n : 0;
        dkb_tensor *L2 = tr_concat_i64(x, tr_concat_i64(x, li, ul), minus_ones(x, b));
        dkb_tensor *R2 = tr_concat_i64(x, tr_concat_i64(x, ri, minus_ones(x, a)), ur);
        o = L2 && R2 ? assemble(x, op, l, L2, true, r, R2, true, L2->n) : NULL;
        break;
    }
    case J_SEMI:
    case J_ANTI: {
        dkb_tensor *m = jt == J_ANTI ? dkb_tp_not(tp, lmask) : lmask;
        dkb_tensor *sel = dkb_tp_nonzero(tp, m);
        o = sel ? assemble(x, op, l, sel, false, NULL, NULL, false, sel->n) : NULL;
        break;
    }
    case J_RSEMI:
    case J_RANTI: {
        dkb_tensor *m = jt == J_RANTI ? dkb_tp_not(tp, rmask) : rmask;
        dkb_tensor *sel = dkb_tp_nonzero(tp, m);
        o = sel ? assemble(x, op, NULL, NULL, false, r, sel, false, sel->n) : NULL;
        break;
    }
    case J_MARK: {
        o = assemble(x, op, l, NULL, false, NULL, NULL, false, nl);
        if (!o) break;
        tr_rel *m = tr_rel_new(x, o->ncols + 1, nl);
        if (!m) return NULL;
        memcpy(m->c, o->c, (size_t)o->ncols * sizeof *o->c);
        tr_col *mk = &m->c[o->ncols];
        mk->v = lmask;
        mk->ty = tr_ty(TY_BOOL);
        /* x IN (...): NULL instead of false when x is NULL or the list holds a NULL */
        bool rnull = false;
        for (int i = 0; i < ne; i++) rnull |= er[i].valid && nr > 0 && dkb_tp_count(tp, er[i].valid) < nr;
        dkb_tensor *lnull = NULL;
        for (int i = 0; i < ne; i++)
            if (el[i].valid && nr > 0) lnull = tr_and_valid(x, lnull, el[i].valid);
        if (rnull) mk->valid = lmask;
        else if (lnull) mk->valid = dkb_tp_or(tp, lmask, lnull);
        o = m;
        break;
    }
    }
    if (o) tr_trace(x, "%s join on %d equalit%s%s: %lld x %lld rows -> %lld", jt_name, ne, ne == 1 ? "y" : "ies",
                    nres || pred ? " and other conditions" : "", (long long)nl, (long long)nr, (long long)o->n);
    return tr_bad(x) ? NULL : o;
}

static bool is_ref(const cJSON *e) { return !strcmp(tr_str(e, "expression_class"), "BOUND_REF"); }

/* BOOL per outer row: some row of X with the outer row's key has a value
 * other than v (X's values s; NULLs on either side compare as nothing).
 * That is: X's rows of the key, those whose s is not NULL, have a least or
 * a greatest s other than v; X's rows whose key is an outer row's grouped
 * by key and one lookup, not the pairs (TPC-H Q21's "another supplier of
 * the order"). */
static dkb_tensor *exists_other(tr_ctx *x, const side_key *outer, int64_t no, const side_key *xk, const tr_col *v,
                                const tr_col *s) {
    dkb_tp *tp = x->tp;
    dkb_tensor *vk, *sk;
    if (!tr_key_pair(x, v, no, s, s->v->n, &vk, &sk)) return NULL; /* one id space for v and s */
    vk = dkb_tp_cast(tp, tr_relabel(x, vk, 0, NULL), DKB_TP_I64);
    sk = dkb_tp_cast(tp, tr_relabel(x, sk, 0, NULL), DKB_TP_I64);
    /* X's rows that can match: a key among the outer rows' (a probe of X
     * against them, as the join DuckDB planned), and s not NULL */
    dkb_tensor *ok = outer->can ? dkb_tp_compress(tp, outer->key, outer->can) : outer->key;
    dkb_tensor *keep = tr_and_valid(x, tr_and_valid(x, xk->can, s->valid), dkb_tp_semi_join(tp, ok, xk->key));
    dkb_tensor *rk = keep ? dkb_tp_compress(tp, xk->key, keep) : xk->key;
    if (keep) sk = dkb_tp_compress(tp, sk, keep);
    if (tr_bad(x)) return NULL;
    if (rk->n == 0) return dkb_tp_full_i64(tp, DKB_TP_BOOL, no, 0);
    const dkb_tensor *keys[] = {rk};
    dkb_groups g = dkb_tp_group(tp, keys, 1);
    dkb_tensor *lo = dkb_tp_aggregate(tp, &g, DKB_AGG_MIN, sk), *hi = dkb_tp_aggregate(tp, &g, DKB_AGG_MAX, sk);
    dkb_join_result j = dkb_tp_join(tp, dkb_tp_gather(tp, rk, g.first_row, 0), outer->key, DKB_JOIN_LEFT);
    dkb_tensor *has = dkb_tp_cmp_i64(tp, j.build_idx, DKB_CMP_GE, 0);
    dkb_tensor *other = dkb_tp_or(tp, dkb_tp_cmp(tp, dkb_tp_gather(tp, lo, j.build_idx, 0), DKB_CMP_NE, vk),
                                  dkb_tp_cmp(tp, dkb_tp_gather(tp, hi, j.build_idx, 0), DKB_CMP_NE, vk));
    dkb_tensor *m = dkb_tp_and(tp, has, other);
    if (outer->can) m = dkb_tp_and(tp, m, outer->can);
    if (v->valid) m = dkb_tp_and(tp, m, v->valid);
    return tr_bad(x) ? NULL : m;
}

static bool has_delim_get(const cJSON *op) {
    if (!strcmp(tr_str(op, "type"), "LOGICAL_DELIM_GET")) return true;
    const cJSON *ch;
    cJSON_ArrayForEach(ch, tr_get(op, "children")) if (has_delim_get(ch)) return true;
    return false;
}

/* An EXISTS / NOT EXISTS (or IN / NOT IN over non-NULL keys) that DuckDB
 * decorrelated into DELIM_JOIN op of type SEMI or ANTI (RIGHT_SEMI or
 * RIGHT_ANTI when flipped) whose subquery side is a projection of an
 * inner join of some rows X with DELIM_GET on equalities only: a row of
 * the outer side d matches when some row of X has its correlated values,
 * so it is a semi (anti) join of d against X on those columns, without
 * the distinct outer values, the join's pairs and the second join (TPC-H
 * Q04 and Q22; what the hand plans do). The projection's columns must be
 * the join's key columns and the DELIM_JOIN's conditions must give each
 * correlated column back to itself; anything else leaves *done false and
 * the plan runs as DuckDB wrote it. */
static tr_rel *exists_as_semi(tr_ctx *x, const cJSON *op, int ds, const tr_rel *d, bool *done) {
    const char *jt = tr_str(op, "join_type");
    bool anti = !strcmp(jt, ds ? "RIGHT_ANTI" : "ANTI");
    if (!anti && strcmp(jt, ds ? "RIGHT_SEMI" : "SEMI")) return NULL;
    if (tr_get(op, "predicate") && !cJSON_IsNull(tr_get(op, "predicate"))) return NULL;
    const cJSON *proj = child(op, 1 - ds), *dup = tr_get(op, "duplicate_eliminated_columns");
    if (strcmp(tr_str(proj, "type"), "LOGICAL_PROJECTION") || cJSON_GetArraySize(tr_get(proj, "children")) != 1)
        return NULL;
    const cJSON *j = child(proj, 0);
    if (strcmp(tr_str(j, "type"), "LOGICAL_COMPARISON_JOIN") || strcmp(tr_str(j, "join_type"), "INNER") ||
        cJSON_GetArraySize(tr_get(j, "left_projection_map")) || cJSON_GetArraySize(tr_get(j, "right_projection_map")) ||
        (tr_get(j, "predicate") && !cJSON_IsNull(tr_get(j, "predicate"))))
        return NULL;
    int gs = !strcmp(tr_str(child(j, 1), "type"), "LOGICAL_DELIM_GET") ? 1
           : !strcmp(tr_str(child(j, 0), "type"), "LOGICAL_DELIM_GET") ? 0 : -1;
    if (gs < 0 || has_delim_get(child(j, 1 - gs))) return NULL;
    int nd = cJSON_GetArraySize(dup);
    const cJSON *jc = tr_get(j, "conditions"), *dc = tr_get(op, "conditions");
    int nj = cJSON_GetArraySize(jc), ndc = cJSON_GetArraySize(dc);
    if (nd < 1 || nd > 32 || nj < 1 || nj > 32 || ndc != nd) return NULL;
    /* the equalities: X's column xcol[i] = DELIM_GET's column dcol[i], i < ne;
     * at most one X's column ne_x <> DELIM_GET's column ne_d; every column of
     * DELIM_GET in one of them */
    int64_t xcol[32], dcol[32], ne_x = -1, ne_d = -1;
    int ne = 0;
    bool covered[32] = {false};
    for (int i = 0; i < nj; i++) {
        const cJSON *c = cJSON_GetArrayItem(jc, i);
        const cJSON *a = tr_get(c, gs ? "left" : "right"), *b = tr_get(c, gs ? "right" : "left");
        const char *cmp = tr_str(c, "comparison");
        bool neq = !strcmp(cmp, "COMPARE_NOTEQUAL");
        if ((strcmp(cmp, "COMPARE_EQUAL") && !neq) || (neq && ne_x >= 0) || !is_ref(a) || !is_ref(b)) return NULL;
        int64_t xc_i = tr_int(a, "index", -1), dc_i = tr_int(b, "index", -1);
        if (dc_i < 0 || dc_i >= nd) return NULL;
        if (neq) ne_x = xc_i, ne_d = dc_i;
        else xcol[ne] = xc_i, dcol[ne++] = dc_i;
        covered[dc_i] = true;
    }
    for (int m = 0; m < nd; m++)
        if (!covered[m]) return NULL;
    if (ne == 0) return NULL;
    /* X's columns are known once it is evaluated (a DELIM_GET has nd); when the
     * conditions below do not hold after all, the plan runs as written (X again) */
    tr_rel *xr = tr_op(x, child(j, 1 - gs));
    if (!xr) return *done = true, NULL;
    int64_t nxc = xr->ncols;
    /* each DELIM_JOIN condition: the outer side's correlated column m against
     * a projected key column that equals DELIM_GET's column m */
    bool seen[32] = {false};
    for (int k = 0; k < ndc; k++) {
        const cJSON *c = cJSON_GetArrayItem(dc, k);
        const cJSON *o = tr_get(c, ds ? "right" : "left"), *s = tr_get(c, ds ? "left" : "right");
        const char *cmp = tr_str(c, "comparison");
        if ((strcmp(cmp, "COMPARE_NOT_DISTINCT_FROM") && strcmp(cmp, "COMPARE_EQUAL")) || !is_ref(o) || !is_ref(s))
            return NULL;
        const cJSON *pe = cJSON_GetArrayItem(tr_get(proj, "expressions"), (int)tr_int(s, "index", -1));
        if (!pe || !is_ref(pe)) return NULL;
        int64_t jcol = tr_int(pe, "index", -1), m = -1; /* the join's output: X's columns, then DELIM_GET's (gs 1) */
        int64_t xbase = gs ? 0 : nd, gbase = gs ? nxc : 0;
        if (jcol >= gbase && jcol < gbase + nd) m = jcol - gbase; /* DELIM_GET's own column */
        for (int i = 0; i < ne && m < 0; i++)
            if (jcol == xbase + xcol[i]) m = dcol[i]; /* X's column equal to it */
        if (m < 0 || seen[m]) return NULL;
        const cJSON *dm = cJSON_GetArrayItem(dup, (int)m);
        if (!is_ref(dm) || tr_int(dm, "index", -1) != tr_int(o, "index", -2)) return NULL;
        seen[m] = true;
    }
    *done = true;
    tr_col oc[33], xc[33];
    bool null_eq[32] = {false};
    for (int i = 0; i <= ne; i++) { /* the equalities' columns, then the <>'s */
        int64_t xi = i < ne ? xcol[i] : ne_x, di = i < ne ? dcol[i] : ne_d;
        if (i == ne && ne_x < 0) break;
        if (xi < 0 || xi >= xr->ncols) return tr_fail(x, DKB_EINTERNAL, "plan: join column %lld", (long long)xi);
        if (!tr_eval_col(x, cJSON_GetArrayItem(dup, (int)di), d, &oc[i])) return NULL;
        xc[i] = xr->c[xi];
        if (!tr_col_ready(x, &xc[i])) return NULL;
    }
    dkb_tensor *m;
    if (d->n == 0 || xr->n == 0) {
        m = dkb_tp_full_i64(x->tp, DKB_TP_BOOL, d->n, 0);
    } else {
        side_key L, R;
        if (!make_keys(x, oc, d->n, xc, xr->n, null_eq, ne, &L, &R)) return NULL;
        m = ne_x < 0 ? exists(x, &L, d->n, &R) : exists_other(x, &L, d->n, &R, &oc[ne], &xc[ne]);
    }
    if (anti) m = dkb_tp_not(x->tp, m);
    dkb_tensor *sel = dkb_tp_nonzero(x->tp, m);
    tr_rel *o = sel ? (ds ? assemble(x, op, NULL, NULL, false, d, sel, false, sel->n)
                          : assemble(x, op, d, sel, false, NULL, NULL, false, sel->n))
                    : NULL;
    if (o) tr_trace(x, "correlated %s as %s join on %d equalit%s%s: %lld x %lld rows -> %lld",
                    anti ? "NOT EXISTS" : "EXISTS", anti ? "an anti" : "a semi", ne, ne == 1 ? "y" : "ies",
                    ne_x >= 0 ? " and a <> by the least and greatest value per key" : "", (long long)d->n,
                    (long long)xr->n, (long long)o->n);
    return tr_bad(x) ? NULL : o;
}

tr_rel *tr_join_rels(tr_ctx *x, const cJSON *op, const tr_rel *l, const tr_rel *r) {
    return comparison_join(x, op, l, r, NULL);
}

/* The pairs of joining keys a and b, estimated from every k-th of 4096
 * rows of a (exact when a has no more): the sampled rows are the build
 * side of a join that b probes, so it costs one pass over b. */
#define SAMPLE_ROWS 4096
static __int128 sampled_pairs(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b) {
    dkb_tp *tp = x->tp;
    int64_t n = a->n, k = n <= SAMPLE_ROWS ? n : SAMPLE_ROWS;
    const dkb_tensor *s = a;
    if (k < n) s = dkb_tp_gather(tp, a, dkb_tp_arith_i64(tp, tr_arange(x, k), DKB_OP_MUL, n / k, 0), 0);
    dkb_join_result j = dkb_tp_join(tp, s, b, DKB_JOIN_INNER);
    if (tr_bad(x) || !j.probe_idx) return 0;
    return (__int128)j.probe_idx->n * n / (k ? k : 1);
}

dkb_tensor *tr_join_fanout(tr_ctx *x, const cJSON *op, const tr_rel *l, const tr_rel *r, int64_t limit,
                           int64_t *total) {
    dkb_tp *tp = x->tp;
    const cJSON *conds = tr_get(op, "conditions");
    int nc = cJSON_GetArraySize(conds), ne = 0;
    tr_col el[32], er[32];
    bool null_eq[32];
    if (nc > 32 || l->n == 0 || r->n == 0) return NULL;
    for (int i = 0; i < nc; i++) {
        const cJSON *c = cJSON_GetArrayItem(conds, i);
        const char *cmp = tr_str(c, "comparison");
        if (strcmp(cmp, "COMPARE_EQUAL") && strcmp(cmp, "COMPARE_NOT_DISTINCT_FROM")) continue;
        if (!tr_eval_col(x, tr_get(c, "left"), l, &el[ne]) || !tr_eval_col(x, tr_get(c, "right"), r, &er[ne]))
            return NULL;
        null_eq[ne++] = cmp[8] == 'N';
    }
    side_key L, R;
    if (!ne || !make_keys(x, el, l->n, er, r->n, null_eq, ne, &L, &R)) return NULL;
    dkb_tensor *bk = R.can ? dkb_tp_compress(tp, R.key, R.can) : R.key;
    if (!bk || tr_distinct_get(x, bk)) return NULL;
    if (!L.can && tr_distinct_get(x, L.key)) return NULL; /* each row of r pairs at most once */
    /* r's keys distinct? A group of them, first when r is the smaller side
     * (it costs less than the join after it: TPC-H Q17's 2040 parts against
     * lineitem); when r is the larger, samples of either side estimate the
     * pairs first (a key that pairs with many rows is many rows of the other
     * side, which that side's sample meets), and well under the limit they
     * are not counted (TPC-H Q09: partsupp's 8M keys against 3.2M lines) */
    const dkb_tensor *keys[] = {bk};
    dkb_groups g = {0};
    bool grouped = bk->n <= L.key->n;
    if (grouped) {
        g = dkb_tp_group(tp, keys, 1);
        if (tr_bad(x)) return NULL;
        if (g.ngroups == bk->n) return tr_distinct_set(x, bk), NULL; /* the join finds it out again without a group */
    }
    __int128 est_l = sampled_pairs(x, L.key, bk), est_r = sampled_pairs(x, bk, L.key);
    if (tr_bad(x) || (est_l > est_r ? est_l : est_r) <= limit / 4) return NULL;
    if (!grouped) {
        g = dkb_tp_group(tp, keys, 1);
        if (tr_bad(x)) return NULL;
        if (g.ngroups == bk->n) return tr_distinct_set(x, bk), NULL;
    }
    dkb_tensor *cnt = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, NULL);
    dkb_join_result j = dkb_tp_join(tp, dkb_tp_gather(tp, bk, g.first_row, 0), L.key, DKB_JOIN_LEFT);
    dkb_tensor *per = dkb_tp_gather(tp, cnt, j.build_idx, 0);
    *total = dkb_tp_get_i64(tp, dkb_tp_reduce(tp, DKB_AGG_SUM, per), 0);
    return tr_bad(x) ? NULL : per;
}

tr_rel *tr_join(tr_ctx *x, const cJSON *op) {
    const char *type = tr_str(op, "type");
    if (!strcmp(type, "LOGICAL_ANY_JOIN")) { /* all pairs (bounded), then the condition */
        tr_rel *l = tr_op(x, child(op, 0));
        tr_rel *r = l ? tr_op(x, child(op, 1)) : NULL;
        const cJSON *cond = tr_get(op, "condition");
        if (!cond || cJSON_IsNull(cond)) return tr_unsupported(x, op, "ANY_JOIN without a condition");
        return r ? comparison_join(x, op, l, r, cond) : NULL;
    }
    if (!strcmp(type, "LOGICAL_CROSS_PRODUCT")) {
        tr_rel *l = tr_op(x, child(op, 0));
        tr_rel *r = l ? tr_op(x, child(op, 1)) : NULL;
        dkb_tensor *li, *ri;
        if (!r || !pairs_cross(x, l->n, r->n, &li, &ri)) return NULL;
        tr_trace(x, "cross product: %lld x %lld rows", (long long)l->n, (long long)r->n);
        return assemble(x, op, l, li, false, r, ri, false, li->n);
    }
    if (strcmp(type, "LOGICAL_DELIM_JOIN")) {
        tr_rel *l = tr_op(x, child(op, 0));
        tr_rel *r = l ? tr_op(x, child(op, 1)) : NULL;
        return r ? comparison_join(x, op, l, r, NULL) : NULL;
    }
    /* DELIM_JOIN: the delim side first, its distinct correlated values for DELIM_GET */
    int ds = cJSON_IsTrue(tr_get(op, "delim_flipped")) ? 1 : 0;
    tr_rel *d = tr_op(x, child(op, ds));
    if (!d) return NULL;
    bool done = false;
    tr_rel *e = exists_as_semi(x, op, ds, d, &done);
    if (done) return e;
    const cJSON *dup = tr_get(op, "duplicate_eliminated_columns");
    int k = cJSON_GetArraySize(dup);
    tr_rel *cols = tr_rel_new(x, k, d->n);
    if (!cols) return NULL;
    for (int i = 0; i < k; i++)
        if (!tr_eval_col(x, cJSON_GetArrayItem(dup, i), d, &cols->c[i])) return NULL;
    tr_rel *distinct = tr_distinct(x, cols);
    if (!distinct) return NULL;
    if (x->ndelim == TR_MAX_DELIM) return tr_unsupported(x, op, "subqueries nested more than %d deep", TR_MAX_DELIM);
    tr_trace(x, "correlated subquery over %lld distinct outer values:", (long long)distinct->n);
    x->delim[x->ndelim++] = distinct;
    tr_rel *other = tr_op(x, child(op, 1 - ds));
    x->ndelim--;
    if (!other) return NULL;
    return ds == 0 ? comparison_join(x, op, d, other, NULL) : comparison_join(x, op, other, d, NULL);
}

tr_rel *tr_setop_semi(tr_ctx *x, const tr_rel *a, const tr_rel *b, bool anti) {
    if (a->ncols != b->ncols || a->ncols > 32) return tr_unsupported(x, NULL, "INTERSECT/EXCEPT of %d and %d columns", a->ncols, b->ncols);
    dkb_tensor *m;
    if (a->n == 0 || b->n == 0) {
        m = dkb_tp_full_i64(x->tp, DKB_TP_BOOL, a->n, 0);
    } else {
        bool null_eq[32];
        for (int i = 0; i < a->ncols; i++) null_eq[i] = true;
        side_key L, R;
        tr_col *ac = tr_rel_ready_cols(x, a), *bc = tr_rel_ready_cols(x, b);
        if (!ac || !bc || !make_keys(x, ac, a->n, bc, b->n, null_eq, a->ncols, &L, &R)) return NULL;
        m = exists(x, &L, a->n, &R);
    }
    if (anti) m = dkb_tp_not(x->tp, m);
    tr_trace(x, "%s: %lld rows against %lld", anti ? "except" : "intersect", (long long)a->n, (long long)b->n);
    return tr_rel_filter(x, a, m);
}
