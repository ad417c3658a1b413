/* q03.full.c: expert CPU candidate for TPC-H Q3 (Shipping Priority).
 *
 *   select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue,
 *          o_orderdate, o_shippriority
 *   from customer, orders, lineitem
 *   where c_mktsegment = ':segment' and c_custkey = o_custkey
 *     and l_orderkey = o_orderkey
 *     and o_orderdate < date ':date' and l_shipdate > date ':date'
 *   group by l_orderkey, o_orderdate, o_shippriority
 *   order by revenue desc, o_orderdate limit 10;
 *
 * Plan: the segment test is on the dictionary code, turned into a bitmap
 * over the dense custkeys (1..N). Then a partition-local merge of orders
 * and lineitem (lineitem is grouped by orderkey in the order of orders): the
 * orders are cut into chunks, each chunk's first line item found by binary
 * search, and each order's run of items is summed only when the order
 * passes the date and segment tests (other runs are never read). An
 * order is one group, so its revenue is final when its run ends and goes
 * straight into the chunk's top 10 (a small sorted array); the chunks' top
 * lists are merged at the end. Revenue is exact int64 at scale 4 (an order
 * has at most 7 items). A segment absent from the dictionary matches no
 * customer.
 *
 * Join mechanics: each chunk of orders first selects its qualifying orders
 * branch-free (blocks of 512), then gallops forward in l_orderkey to each
 * selected order's run of items, prefetching the probable run start of
 * the order 6 selections ahead; the runs of other orders are never read.
 * Orderkeys are int32 (the store widens them only above SF ~357). */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_gallop_i32, dkb_lower_bound_i32, dkb_put_dec */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

enum { TOPK = 10 };

typedef struct {
    int64_t revenue;  /* scale 4 */
    int32_t date;
    int32_t prio;
    int64_t key;
} row;

/* a before b in the result order: revenue desc, o_orderdate, then the key
 * (a fixed order for ties). */
static inline int before(const row *a, const row *b) {
    if (a->revenue != b->revenue) return a->revenue > b->revenue;
    if (a->date != b->date) return a->date < b->date;
    return a->key < b->key;
}

/* Insert x into the sorted top list top[0..*n) (at most TOPK). */
static inline void top_insert(row *top, int *n, const row *x) {
    if (*n == TOPK && !before(x, &top[TOPK - 1])) return;
    int i = *n < TOPK ? (*n)++ : TOPK - 1;
    while (i > 0 && before(x, &top[i - 1])) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = *x;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ckey = dkb_cand_column(db, "customer", "c_custkey");
    const dkb_cand_vec *cseg = dkb_cand_column(db, "customer", "c_mktsegment");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *oprio = dkb_cand_column(db, "orders", "o_shippriority");
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *lprice = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *ldisc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_param *segment = dkb_cand_param_find(params, "segment");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    if (!ckey || !cseg || !okey || !ocust || !odate || !oprio || !lkey || !lship || !lprice || !ldisc ||
        !segment || !date || !segment->s)
        return DKB_CAND_EINVAL;
    if (okey->type != DKB_CAND_I32 || lkey->type != DKB_CAND_I32 || ckey->type != DKB_CAND_I32 ||
        ocust->type != DKB_CAND_I32 || oprio->type != DKB_CAND_I32 || lprice->scale != 2 ||
        ldisc->scale != 2 || res->ncols != 4)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_key = &res->cols[0], *c_rev = &res->cols[1], *c_date = &res->cols[2],
                     *c_prio = &res->cols[3];
    if (c_key->type != DKB_CAND_RES_INT || c_rev->type != DKB_CAND_RES_DECIMAL || c_rev->scale < 4 ||
        c_date->type != DKB_CAND_RES_DATE || c_prio->type != DKB_CAND_RES_INT)
        return DKB_CAND_EINVAL;

    /* customers of the segment: a bitmap over custkey */
    const int seg = dkb_cand_dict_code(cseg->dict, segment->s);
    const int64_t nc = ckey->n;
    const int32_t *ck = ckey->data;
    const uint8_t *cs = cseg->data;
    int64_t maxc = 0;
    for (int64_t i = 0; i < nc; i++) maxc = ck[i] > maxc ? ck[i] : maxc;
    const int64_t nwords = (maxc >> 6) + 1;
    uint64_t *cbits = calloc((size_t)nwords, sizeof(uint64_t));
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n, nl = lkey->n;
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    row *tops = malloc(sizeof(row) * (size_t)nchunks * TOPK);
    int *ntop = calloc((size_t)nchunks, sizeof(int));
    if (!cbits || !tops || !ntop) {
        free(cbits), free(tops), free(ntop);
        return DKB_CAND_ENOMEM;
    }
    if (seg >= 0)
        for (int64_t i = 0; i < nc; i++)
            if (cs[i] == seg && ck[i] >= 0) cbits[ck[i] >> 6] |= 1ull << (ck[i] & 63);

    const int32_t day = (int32_t)date->i;
    const int32_t *ok = okey->data, *oc = ocust->data, *od = odate->data, *op = oprio->data;
    const int32_t *lk = lkey->data, *ls = lship->data;
    const int64_t *lp = lprice->data, *ld = ldisc->data;

#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(no >= PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t o0 = c * no / nchunks, o1 = (c + 1) * no / nchunks; /* this chunk's orders */
        if (o0 >= o1) continue;
        int64_t j = dkb_lower_bound_i32(lk, nl, ok[o0]); /* and their line items [j, jend) */
        const int64_t jend = o1 < no ? dkb_lower_bound_i32(lk, nl, ok[o1]) : nl;
        const int64_t per = ((jend - j) << 8) / (o1 - o0); /* items per order, x 256 */
        int32_t sel[SUB];
        row *top = tops + c * TOPK;
        int n = 0;
        for (int64_t b = o0; b < o1; b += SUB) {
            const int64_t be = b + SUB < o1 ? b + SUB : o1;
            int ns = 0;
            for (int64_t o = b; o < be; o++) { /* branch-free selection of the block's orders */
                const uint64_t cu = (uint64_t)(int64_t)oc[o], ci = cu <= (uint64_t)maxc ? cu : 0;
                sel[ns] = (int32_t)(o - b);
                ns += (od[o] < day) & (int)((cbits[ci >> 6] >> (ci & 63)) & 1);
            }
            for (int x = 0; x < ns; x++) {
                if (x + AHEAD < ns) { /* where a later order's items probably start */
                    const int64_t est = j + (((int64_t)(sel[x + AHEAD] - sel[x]) * per) >> 8);
                    if (est < jend) {
                        __builtin_prefetch(&lk[est]);
                        __builtin_prefetch(&ls[est]);
                        __builtin_prefetch(&lp[est]);
                        __builtin_prefetch(&ld[est]);
                    }
                }
                const int64_t o = b + sel[x];
                const int32_t k = ok[o];
                j = dkb_gallop_i32(lk, j, jend, k);
                int64_t sum = 0;
                int any = 0;
                for (; j < jend && lk[j] == k; j++)
                    if (ls[j] > day) {
                        sum += lp[j] * (100 - ld[j]);
                        any = 1;
                    }
                if (any) {
                    const row x = {sum, od[o], op[o], k};
                    top_insert(top, &n, &x);
                }
            }
        }
        ntop[c] = n;
    }

    row best[TOPK];
    int nb = 0;
    for (int64_t c = 0; c < nchunks; c++)
        for (int i = 0; i < ntop[c]; i++) top_insert(best, &nb, &tops[c * TOPK + i]);
    free(cbits), free(tops), free(ntop);
    if (nb > res->cap) return DKB_CAND_ECAP;
    for (int r = 0; r < nb; r++) {
        dkb_put_dec(c_rev, r, best[r].revenue, 4);
        c_key->i64[r] = best[r].key;
        c_date->date[r] = best[r].date;
        c_prio->i64[r] = best[r].prio;
        c_key->is_null[r] = c_date->is_null[r] = c_prio->is_null[r] = 0;
    }
    res->nrows = nb;
    return 0;
}
