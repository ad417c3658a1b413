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
 * Plan: lineitem is grouped by orderkey in the order of orders (both
 * ascending), so chunks of orders and their lines (dkb_chunk_runs, taken by
 * the threads as they come) are independent: each chunk keeps a running
 * sum of the quantities of each run of equal l_orderkey in one branch-free
 * pass over its lines (the group-by of the subquery, reused by the outer
 * sum: same lines); only when the running sum passes the limit (rare, so
 * the test is predicted) is the run summed whole, and if it is over the
 * limit, its order found by galloping forward in o_orderkey (a run without
 * an order joins nothing). Those
 * orders are kept per chunk, then sorted by (o_totalprice desc,
 * o_orderdate, o_orderkey) and the first 100 read their customer's name at
 * row custkey - 1 (customer keys are dense 1..N). Integer sums: exact.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey, so an order's lines, and so its sum of
 * quantities and the HAVING test, are on one rank (customer is whole on
 * every rank); each rank's first 100 big orders are gathered in rank order
 * and sorted again by the same total order (dkb_ranks_gather); rank 0
 * writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_chunk_runs, dkb_gallop_i32, dkb_put_dec,
                                       dkb_put_strcol */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

typedef struct {
    int64_t cust;  /* its o_custkey */
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
    const dkb_cand_vec *lkey, *lqty, *okey, *ocust, *odate, *oprice, *ckey, *cname;
    const dkb_cand_param *pq;
    dkb_cand_res_col *c_name, *c_cust, *c_okey, *c_date, *c_price, *c_qty;
    if (DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_quantity:dec2", &lkey, &lqty) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32 o_totalprice:dec2", &okey, &ocust,
                      &odate, &oprice) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_name", &ckey, &cname) ||
        DKB_BIND_PARAMS(params, "quantity", &pq) ||
        DKB_BIND_RES(res,
                     "c_name:str c_custkey:int o_orderkey:int o_orderdate:date o_totalprice:dec2 sum(l_quantity):dec2",
                     &c_name, &c_cust, &c_okey, &c_date, &c_price, &c_qty))
        return DKB_CAND_EINVAL;
    if (pq->i > INT64_MAX / 100 || pq->i < INT64_MIN / 100)
        return DKB_CAND_EINVAL;
    const int64_t limit = pq->i * 100; /* hundredths */

    const int64_t nl = lkey->n; /* the whole table's rows (also under a budget) */
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = nl < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const int64_t nchunks = nt == 1 ? 1 : (int64_t)nt * 16;
    big_list *lists = calloc((size_t)nchunks, sizeof(big_list));
    if (!lists) return DKB_CAND_ENOMEM;
    /* the whole columns, or under a memory budget lineitem and orders load by
     * load (co-partitioned by orderkey: a load's lines are those of its
     * orders): the orders whose lines' quantity passes the limit, in the
     * chunks' lists */
    static const char *const COLS[] = {"l_orderkey", "l_quantity",  "o_orderkey",
                                       "o_custkey",  "o_orderdate", "o_totalprice"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 6, COLS); dkb_stream_next(&st);) {
        const int32_t *lk = st.cols[0].data, *ok = st.cols[2].data, *oc = st.cols[3].data, *od = st.cols[4].data;
        const int64_t *lq = st.cols[1].data, *op = st.cols[5].data;
        const int64_t nll = st.cols[0].n, nol = st.cols[2].n;
        /* this load's rows decide the team and its chunks (at most the whole tables' nchunks) */
        const int team = nll < PAR_MIN ? 1 : nt;
        const int64_t nch = team == 1 ? 1 : (int64_t)team * 16;

#pragma omp parallel for num_threads(team) schedule(dynamic, 1) reduction(| : bad)
        for (int64_t c = 0; c < nch; c++) {
            int64_t o0, o1, j0, j1;
            if (!dkb_chunk_runs(ok, nol, lk, nll, c, nch, &o0, &o1, &j0, &j1) || j0 >= j1) continue;
            /* each run's sum, branch-free; a run over the limit is rare, so its test is predicted */
            int32_t prev = lk[j0];
            int64_t s = 0, o = o0, done = INT64_MIN; /* the key of the last run summed whole */
            for (int64_t j = j0; j < j1; j++) {
                const int32_t k = lk[j];
                s = (s & -(int64_t)(k == prev)) + lq[j];
                prev = k;
                if (s <= limit || k == done) continue; /* rarely over: predicted */
                done = k;
                int64_t e = j + 1, sum = s; /* the run's whole sum */
                for (; e < j1 && lk[e] == k; e++) sum += lq[e];
                if (sum <= limit) continue;
                o = dkb_gallop_i32(ok, o, o1, k); /* its order, if there is one */
                if (o < o1 && ok[o] == k && !push(&lists[c], (big_order){oc[o], sum, op[o], od[o], k})) bad = 1;
            }
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) {
        for (int64_t c = 0; c < nchunks; c++) free(lists[c].v);
        free(lists);
        return rc;
    }
    int64_t total = 0;
    for (int64_t c = 0; c < nchunks; c++) total += lists[c].n;
    big_order *all = malloc((size_t)(total > 0 ? total : 1) * sizeof(big_order));
    if (!all) bad = 1;
    int64_t m = 0;
    for (int64_t c = 0; c < nchunks; c++) {
        if (all && lists[c].n) memcpy(all + m, lists[c].v, (size_t)lists[c].n * sizeof(big_order));
        m += lists[c].n;
        free(lists[c].v);
    }
    free(lists);
    if (bad) { free(all); return DKB_CAND_ENOMEM; }
    qsort(all, (size_t)m, sizeof(big_order), by_price_desc);
    if (dkb_ranks_many(env)) { /* every rank's first 100, in one total order */
        void *every;
        int64_t ne;
        const int mrc = dkb_ranks_gather(env, all, m < 100 ? m : 100, sizeof(big_order), &every, &ne);
        free(all);
        if (mrc) return mrc;
        all = every, m = ne;
        qsort(all, (size_t)m, sizeof(big_order), by_price_desc);
        if (!dkb_ranks_writes(env, res)) {
            free(all);
            return 0;
        }
    }
    const int64_t nout = m < 100 ? m : 100;
    const int32_t *ck = ckey->data;
    const int64_t nc = ckey->n;
    for (int64_t r = 0; r < nout; r++) {
        const big_order *b = &all[r];
        const int64_t c = b->cust - 1;
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
