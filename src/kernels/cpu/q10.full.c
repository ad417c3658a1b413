/* q10.full.c: expert CPU candidate for TPC-H Q10 (Returned Item Reporting).
 *
 *   select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue,
 *          c_acctbal, n_name, c_address, c_phone, c_comment
 *   from customer, orders, lineitem, nation
 *   where c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and l_returnflag = 'R' and c_nationkey = n_nationkey
 *   group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
 *   order by revenue desc limit 20;
 *
 * Plan: one partition-local merge of orders and lineitem (lineitem is
 * grouped by orderkey in the order of orders): an order of the quarter sums
 * its items whose return flag has the code of 'R' (exact int64, scale 4) and
 * appends (custkey, revenue) to its chunk's slice of a per-order array; no
 * shared writes. The slices are then added sequentially into an array over
 * the dense custkeys (late materialization: nothing of the customer is read
 * yet), the top 20 are picked in one scan, and only those 20 customers'
 * rows, names and texts are fetched (row = custkey - 1 when the keys are
 * dense, a search otherwise).
 *
 * Join mechanics (the toolkit's walk): each chunk of orders (taken by the
 * threads as they come) selects the orders of the quarter branch-free
 * (dkb_select_range_i32, blocks of 512), then gallops forward in
 * l_orderkey to each selected order's run of items (dkb_walk_to),
 * prefetching the probable run start of the order 6 selections ahead
 * (dkb_walk_guess); the runs of other orders are never read. Orderkeys are
 * int32 (the store widens them only above SF ~357).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey, but a customer's orders are on every rank
 * (customer and nation are whole on every rank): each rank sums its orders'
 * revenue per customer as above, then every rank's (custkey, revenue) entries
 * of the customers it saw are gathered in rank order (dkb_ranks_gather) and
 * rank 0 adds them up exactly into the array over custkeys before the top
 * 20.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_months, dkb_max_i32, dkb_put_dec, dkb_put_dict,
                              dkb_put_text, dkb_select_range_i32, dkb_topk_insert, dkb_walk_* */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

enum { TOPK = 20 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

typedef struct {
    int64_t rev;
    int64_t cust;
} entry;

/* a ranks before b: revenue desc, then custkey (a fixed order for ties) */
static int before(const void *pa, const void *pb) {
    const entry *a = pa, *b = pb;
    return a->rev != b->rev ? a->rev > b->rev : a->cust < b->cust;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *ckey, *cname, *caddr, *cnat, *cphone, *cbal, *ccomment, *okey, *ocust, *odate,
        *lkey, *lflag, *lprice, *ldisc;
    const dkb_cand_param *date;
    dkb_cand_res_col *r_key, *r_name, *r_rev, *r_bal, *r_nat, *r_addr, *r_phone, *r_comment;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "customer",
                      "c_custkey:i32 c_name:str c_address:str c_nationkey:i32 c_phone:str c_acctbal:i64 c_comment:str",
                      &ckey, &cname, &caddr, &cnat, &cphone, &cbal, &ccomment) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32", &okey, &ocust, &odate) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_returnflag:dict l_extendedprice:dec2 l_discount:dec2", &lkey,
                      &lflag, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "date", &date) ||
        DKB_BIND_RES(
            res,
            "c_custkey:int c_name:str revenue:dec4 c_acctbal:dec n_name:str c_address:str c_phone:str c_comment:str",
            &r_key, &r_name, &r_rev, &r_bal, &r_nat, &r_addr, &r_phone, &r_comment) ||
        r_bal->scale < cbal->scale)
        return DKB_CAND_EINVAL;

    const int rflag = dkb_cand_dict_code(lflag->dict, "R");
    const int64_t lo_day = date->i, hi_day = dkb_add_months(date->i, 3); /* [lo, hi) */
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n, nc = ckey->n; /* no: the whole table's rows (also under a budget) */
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    const int32_t *ck = ckey->data;
    const int64_t maxc = dkb_max_i32(ck, nc);
    entry *ent = malloc(sizeof(entry) * (size_t)(no + 1));
    int64_t *nent = calloc((size_t)nchunks, sizeof(int64_t));
    int64_t *rev = calloc((size_t)maxc + 1, sizeof(int64_t));
    uint8_t *has = calloc((size_t)maxc + 1, 1);
    if (!ent || !nent || !rev || !has) {
        free(ent), free(nent), free(rev), free(has);
        return DKB_CAND_ENOMEM;
    }
    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey): the returned lines' revenue per
     * customer (none without an 'R' flag) */
    static const char *const COLS[] = {"o_orderkey",   "o_custkey",       "o_orderdate", "l_orderkey",
                                       "l_returnflag", "l_extendedprice", "l_discount"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 7, COLS); rflag >= 0 && dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *oc = st.cols[1].data, *od = st.cols[2].data, *lk = st.cols[3].data;
        const uint8_t *lf = st.cols[4].data;
        const int64_t *lp = st.cols[5].data, *ld = st.cols[6].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[3].n;
        /* at most the whole tables' chunks, which nent has room for */
        const int64_t nch = nol < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(nol >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            dkb_walk w; /* this chunk's orders [o0, o1) and their line items */
            int64_t o0, o1, n = 0;
            nent[c] = 0; /* an earlier load's entries are summed already */
            if (!dkb_walk_init(&w, ok, nol, lk, nll, c, nch, &o0, &o1)) continue;
            int32_t sel[SUB + 16];
            entry *out = ent + c * nol / nch;
            for (int64_t b = o0; b < o1; b += SUB) {
                const int ns = dkb_select_range_i32(od + b, (int)(b + SUB < o1 ? SUB : o1 - b), lo_day, hi_day, sel);
                for (int x = 0; x < ns; x++) {
                    const int64_t g = dkb_walk_guess(&w, sel, ns, x, AHEAD); /* a later order's run, probably */
                    if (g >= 0)
                        __builtin_prefetch(&lk[g]), __builtin_prefetch(&lf[g]),
                            __builtin_prefetch(&lp[g]), __builtin_prefetch(&ld[g]);
                    const int64_t o = b + sel[x];
                    int64_t j, s = 0;
                    int any = 0;
                    for (const int64_t e = dkb_walk_to(&w, ok[o], &j); j < e; j++)
                        if (lf[j] == rflag) {
                            s += lp[j] * (100 - ld[j]);
                            any = 1;
                        }
                    if (any) out[n++] = (entry){s, oc[o]};
                }
            }
            nent[c] = n;
        }
        for (int64_t c = 0; c < nch; c++) {
            const entry *e = ent + c * nol / nch;
            for (int64_t i = 0; i < nent[c]; i++) {
                if (e[i].cust < 0 || e[i].cust > maxc) { bad = 1; continue; }
                rev[e[i].cust] += e[i].rev;
                has[e[i].cust] = 1;
            }
        }
    }
    const int st_rc = dkb_stream_end(&st);
    if (st_rc) {
        free(ent), free(nent), free(rev), free(has);
        return st_rc;
    }
    if (dkb_ranks_many(env)) { /* every rank's customers' revenues, added up on rank 0 */
        int64_t nm = 0;
        for (int64_t k = 0; k <= maxc; k++) nm += has[k];
        entry *mine = malloc(sizeof(entry) * (size_t)(nm + 1));
        int mrc = mine ? 0 : DKB_CAND_ENOMEM;
        for (int64_t k = 0, i = 0; mine && k <= maxc; k++)
            if (has[k]) mine[i++] = (entry){rev[k], k};
        void *every = NULL;
        int64_t ne = 0;
        if (!mrc) mrc = dkb_ranks_gather(env, mine, nm, sizeof(entry), &every, &ne);
        free(mine);
        if (mrc || !dkb_ranks_writes(env, res)) {
            dkb_ranks_gather_free(every, NULL);
            free(ent), free(nent), free(rev), free(has);
            return mrc ? mrc : bad ? DKB_CAND_EINTERNAL : 0;
        }
        memset(rev, 0, sizeof(int64_t) * (size_t)(maxc + 1));
        memset(has, 0, (size_t)maxc + 1);
        const entry *e = every;
        for (int64_t i = 0; i < ne; i++) {
            if (e[i].cust < 0 || e[i].cust > maxc) { bad = 1; continue; }
            rev[e[i].cust] += e[i].rev;
            has[e[i].cust] = 1;
        }
        dkb_ranks_gather_free(every, NULL);
    }
    entry top[TOPK];
    int ntop = 0;
    for (int64_t k = 0; k <= maxc; k++)
        if (has[k]) {
            const entry x = {rev[k], k};
            dkb_topk_insert(top, &ntop, TOPK, &x, sizeof x, before);
        }
    free(ent), free(nent), free(rev), free(has);
    if (bad) return DKB_CAND_EINTERNAL;
    if (ntop > res->cap) return DKB_CAND_ECAP;

    /* late materialization: the 20 customers' columns */
    const int32_t *cn = cnat->data, *nk = nkey->data;
    const uint8_t *nn = nname->data;
    const int64_t *cb = cbal->data;
    for (int r = 0; r < ntop; r++) {
        const int64_t key = top[r].cust;
        int64_t row = key - 1;
        if (row < 0 || row >= nc || ck[row] != key)
            for (row = 0; row < nc && ck[row] != key; row++) {}
        if (row >= nc) return DKB_CAND_EINTERNAL;
        int64_t nrow = 0;
        while (nrow < nkey->n && nk[nrow] != cn[row]) nrow++;
        if (nrow >= nkey->n) return DKB_CAND_EINTERNAL;
        if (dkb_put_dict(r_nat, r, nname->dict, nn[nrow]) || dkb_put_text(r_name, r, cname, row) ||
            dkb_put_text(r_addr, r, caddr, row) || dkb_put_text(r_phone, r, cphone, row) ||
            dkb_put_text(r_comment, r, ccomment, row))
            return DKB_CAND_ECAP;
        r_key->i64[r] = key;
        r_key->is_null[r] = 0;
        dkb_put_dec(r_rev, r, top[r].rev, 4);
        dkb_put_dec(r_bal, r, cb[row], cbal->scale);
    }
    res->nrows = ntop;
    return 0;
}
