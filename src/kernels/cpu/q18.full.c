/* q18.full.c: expert CPU candidate for TPC-H Q18 (Large Volume Customer).
 *
 *   select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
 *   from customer, orders, lineitem
 *   where o_orderkey in (select l_orderkey from lineitem group by l_orderkey
 *                        having sum(l_quantity) > :quantity)
 *     and c_custkey = o_custkey and o_orderkey = l_orderkey
 *   group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
 *   order by o_totalprice desc, o_orderdate limit 100;
 *
 * Plan: a partition-local merge of orders and lineitem: lineitem is grouped
 * by orderkey in the order of orders (both ascending), so each thread takes
 * a range of orders, finds its first line by binary search and sums each
 * order's quantities while walking both sides forward (the group-by of the
 * subquery, reused by the outer sum: same lines). Orders over the limit
 * (a handful) are kept per thread, then sorted by (o_totalprice desc,
 * o_orderdate, o_orderkey) and the first 100 read their customer's name at
 * row custkey - 1 (customer keys are dense 1..N). Integer sums: exact. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_lower_bound_i32, dkb_put_dec, dkb_put_strcol, dkb_res_col */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

typedef struct {
    int64_t order; /* row in orders */
    int64_t qty;   /* sum(l_quantity), hundredths */
    int64_t price;
    int32_t date, key;
} big_order;

typedef struct {
    big_order *v;
    int64_t n, cap;
} big_list;

static int push(big_list *l, big_order x) {
    if (l->n == l->cap) {
        const int64_t cap = l->cap ? 2 * l->cap : 256;
        big_order *v = realloc(l->v, (size_t)cap * sizeof(big_order));
        if (!v) return 0;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = x;
    return 1;
}

static int by_price_desc(const void *a, const void *b) {
    const big_order *x = a, *y = b;
    if (x->price != y->price) return x->price > y->price ? -1 : 1;
    if (x->date != y->date) return x->date < y->date ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lqty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *oprice = dkb_cand_column(db, "orders", "o_totalprice");
    const dkb_cand_vec *ckey = dkb_cand_column(db, "customer", "c_custkey");
    const dkb_cand_vec *cname = dkb_cand_column(db, "customer", "c_name");
    const dkb_cand_param *pq = dkb_cand_param_find(params, "quantity");
    if (!lkey || !lqty || !okey || !ocust || !odate || !oprice || !ckey || !cname || !pq) return DKB_CAND_EINVAL;
    if (lkey->type != DKB_CAND_I32 || okey->type != DKB_CAND_I32 || ocust->type != DKB_CAND_I32 ||
        odate->type != DKB_CAND_I32 || ckey->type != DKB_CAND_I32 || lqty->type != DKB_CAND_I64 ||
        oprice->type != DKB_CAND_I64 || lqty->scale != 2 || oprice->scale != 2)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_name = dkb_res_col(res, "c_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_cust = dkb_res_col(res, "c_custkey", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_okey = dkb_res_col(res, "o_orderkey", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_date = dkb_res_col(res, "o_orderdate", DKB_CAND_RES_DATE);
    dkb_cand_res_col *c_price = dkb_res_col(res, "o_totalprice", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_qty = dkb_res_col(res, "sum(l_quantity)", DKB_CAND_RES_DECIMAL);
    if (!c_name || !c_cust || !c_okey || !c_date || !c_price || !c_qty || c_price->scale < 2 || c_qty->scale < 2)
        return DKB_CAND_EINVAL;
    if (pq->i > INT64_MAX / 100 || pq->i < INT64_MIN / 100) return DKB_CAND_EINVAL;
    const int64_t limit = pq->i * 100; /* hundredths */

    const int32_t *lk = lkey->data, *ok = okey->data, *od = odate->data;
    const int64_t *lq = lqty->data, *op = oprice->data;
    const int64_t nl = lkey->n, no = okey->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = nl < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    big_list *lists = calloc((size_t)nt, sizeof(big_list));
    if (!lists) return DKB_CAND_ENOMEM;
    int bad = 0;

#pragma omp parallel num_threads(nt) reduction(| : bad)
    {
        int tid = 0, tn = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        tn = omp_get_num_threads();
#endif
        const int64_t o0 = no * tid / tn, o1 = no * (tid + 1) / tn;
        int64_t j = o0 < o1 ? dkb_lower_bound_i32(lk, nl, ok[o0]) : nl;
        for (int64_t o = o0; o < o1; o++) {
            const int32_t key = ok[o];
            while (j < nl && lk[j] < key) j++; /* a line without an order: none in TPC-H */
            int64_t s = 0;
            for (; j < nl && lk[j] == key; j++) s += lq[j];
            if (s > limit && !push(&lists[tid], (big_order){o, s, op[o], od[o], key})) bad = 1;
        }
    }
    int64_t total = 0;
    for (int t = 0; t < nt; t++) total += lists[t].n;
    big_order *all = malloc((size_t)(total > 0 ? total : 1) * sizeof(big_order));
    if (!all) bad = 1;
    int64_t m = 0;
    for (int t = 0; t < nt; t++) {
        if (all && lists[t].n) memcpy(all + m, lists[t].v, (size_t)lists[t].n * sizeof(big_order));
        m += lists[t].n;
        free(lists[t].v);
    }
    free(lists);
    if (bad) { free(all); return DKB_CAND_ENOMEM; }
    qsort(all, (size_t)m, sizeof(big_order), by_price_desc);
    const int64_t nout = m < 100 ? m : 100;
    const int32_t *oc = ocust->data, *ck = ckey->data;
    const int64_t nc = ckey->n;
    for (int64_t r = 0; r < nout; r++) {
        const big_order *b = &all[r];
        const int64_t c = (int64_t)oc[b->order] - 1;
        if (r >= res->cap || c < 0 || c >= nc || ck[c] != c + 1 || dkb_put_strcol(c_name, r, cname, c)) {
            free(all);
            return DKB_CAND_EINTERNAL;
        }
        c_cust->i64[r] = ck[c];
        c_okey->i64[r] = b->key;
        c_date->date[r] = b->date;
        c_cust->is_null[r] = c_okey->is_null[r] = c_date->is_null[r] = 0;
        dkb_put_dec(c_price, r, b->price, 2);
        dkb_put_dec(c_qty, r, b->qty, 2);
    }
    free(all);
    res->nrows = nout;
    return 0;
}
