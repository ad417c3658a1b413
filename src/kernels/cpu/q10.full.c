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
 * Join mechanics: each chunk of orders first selects its qualifying orders
 * branch-free (blocks of 512), then gallops forward in l_orderkey to each
 * selected order's run of items, prefetching the probable run start of
 * the order 6 selections ahead; the runs of other orders are never read.
 * Orderkeys are int32 (the store widens them only above SF ~357). */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_add_months, dkb_gallop_i32, dkb_lower_bound_i32, dkb_put_dec,
                              dkb_put_dict, dkb_put_text, dkb_res_col */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

enum { TOPK = 20 };

typedef struct {
    int64_t rev;
    int64_t cust;
} entry;

/* a ranks before b: revenue desc, then custkey (a fixed order for ties) */
static inline int before(const entry *a, const entry *b) {
    return a->rev != b->rev ? a->rev > b->rev : a->cust < b->cust;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *nkey = dkb_cand_column(db, "nation", "n_nationkey");
    const dkb_cand_vec *nname = dkb_cand_column(db, "nation", "n_name");
    const dkb_cand_vec *ckey = dkb_cand_column(db, "customer", "c_custkey");
    const dkb_cand_vec *cname = dkb_cand_column(db, "customer", "c_name");
    const dkb_cand_vec *caddr = dkb_cand_column(db, "customer", "c_address");
    const dkb_cand_vec *cnat = dkb_cand_column(db, "customer", "c_nationkey");
    const dkb_cand_vec *cphone = dkb_cand_column(db, "customer", "c_phone");
    const dkb_cand_vec *cbal = dkb_cand_column(db, "customer", "c_acctbal");
    const dkb_cand_vec *ccomment = dkb_cand_column(db, "customer", "c_comment");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lflag = dkb_cand_column(db, "lineitem", "l_returnflag");
    const dkb_cand_vec *lprice = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *ldisc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    if (!nkey || !nname || !ckey || !cname || !caddr || !cnat || !cphone || !cbal || !ccomment || !okey ||
        !ocust || !odate || !lkey || !lflag || !lprice || !ldisc || !date)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *r_key = dkb_res_col(res, "c_custkey", DKB_CAND_RES_INT);
    dkb_cand_res_col *r_name = dkb_res_col(res, "c_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_rev = dkb_res_col(res, "revenue", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *r_bal = dkb_res_col(res, "c_acctbal", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *r_nat = dkb_res_col(res, "n_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_addr = dkb_res_col(res, "c_address", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_phone = dkb_res_col(res, "c_phone", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_comment = dkb_res_col(res, "c_comment", DKB_CAND_RES_STRING);
    if (okey->type != DKB_CAND_I32 || lkey->type != DKB_CAND_I32 || lprice->scale != 2 || ldisc->scale != 2 ||
        !r_key || !r_name || !r_rev || !r_bal || !r_nat || !r_addr || !r_phone || !r_comment ||
        r_rev->scale < 4 || r_bal->scale < cbal->scale)
        return DKB_CAND_EINVAL;

    const int rflag = dkb_cand_dict_code(lflag->dict, "R");
    const int32_t lo_day = (int32_t)date->i;
    const uint32_t width = (uint32_t)(dkb_add_months(date->i, 3) - date->i);
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n, nl = lkey->n, nc = ckey->n;
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    const int32_t *ck = ckey->data;
    int64_t maxc = 0;
    for (int64_t i = 0; i < nc; i++) maxc = ck[i] > maxc ? ck[i] : maxc;
    entry *ent = malloc(sizeof(entry) * (size_t)(no + 1));
    int64_t *nent = calloc((size_t)nchunks, sizeof(int64_t));
    int64_t *rev = calloc((size_t)maxc + 1, sizeof(int64_t));
    uint8_t *has = calloc((size_t)maxc + 1, 1);
    if (!ent || !nent || !rev || !has) {
        free(ent), free(nent), free(rev), free(has);
        return DKB_CAND_ENOMEM;
    }
    const int32_t *ok = okey->data, *oc = ocust->data, *od = odate->data, *lk = lkey->data;
    const uint8_t *lf = lflag->data;
    const int64_t *lp = lprice->data, *ld = ldisc->data;

    if (rflag >= 0) {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(no >= PAR_MIN)
        for (int64_t c = 0; c < nchunks; c++) {
            const int64_t o0 = c * no / nchunks, o1 = (c + 1) * no / nchunks; /* this chunk's orders */
            if (o0 >= o1) continue;
            int64_t j = dkb_lower_bound_i32(lk, nl, ok[o0]); /* and their line items [j, jend) */
            const int64_t jend = o1 < no ? dkb_lower_bound_i32(lk, nl, ok[o1]) : nl;
            const int64_t per = ((jend - j) << 8) / (o1 - o0); /* items per order, x 256 */
            int32_t sel[SUB];
            entry *out = ent + o0;
            int64_t n = 0;
            for (int64_t b = o0; b < o1; b += SUB) {
                const int64_t be = b + SUB < o1 ? b + SUB : o1;
                int ns = 0;
                for (int64_t o = b; o < be; o++) { /* branch-free selection of the block's orders */
                    sel[ns] = (int32_t)(o - b);
                    ns += (uint32_t)(od[o] - lo_day) < width;
                }
                for (int x = 0; x < ns; x++) {
                    if (x + AHEAD < ns) { /* where a later order's items probably start */
                        const int64_t est = j + (((int64_t)(sel[x + AHEAD] - sel[x]) * per) >> 8);
                        if (est < jend) {
                            __builtin_prefetch(&lk[est]);
                            __builtin_prefetch(&lf[est]);
                            __builtin_prefetch(&lp[est]);
                            __builtin_prefetch(&ld[est]);
                        }
                    }
                    const int64_t o = b + sel[x];
                    const int32_t k = ok[o];
                    j = dkb_gallop_i32(lk, j, jend, k);
                    int64_t s = 0;
                    int any = 0;
                    for (; j < jend && lk[j] == k; j++)
                        if (lf[j] == rflag) {
                            s += lp[j] * (100 - ld[j]);
                            any = 1;
                        }
                    if (any) out[n++] = (entry){s, oc[o]};
                }
            }
            nent[c] = n;
        }
    }
    int bad = 0;
    for (int64_t c = 0; c < nchunks; c++) {
        const entry *e = ent + c * no / nchunks;
        for (int64_t i = 0; i < nent[c]; i++) {
            if (e[i].cust < 0 || e[i].cust > maxc) { bad = 1; continue; }
            rev[e[i].cust] += e[i].rev;
            has[e[i].cust] = 1;
        }
    }
    entry top[TOPK];
    int ntop = 0;
    for (int64_t k = 0; k <= maxc; k++) {
        if (!has[k]) continue;
        const entry x = {rev[k], k};
        if (ntop == TOPK && !before(&x, &top[TOPK - 1])) continue;
        int i = ntop < TOPK ? ntop++ : TOPK - 1;
        while (i > 0 && before(&x, &top[i - 1])) {
            top[i] = top[i - 1];
            i--;
        }
        top[i] = x;
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
