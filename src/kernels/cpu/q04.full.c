/* q04.full.c: expert CPU candidate for TPC-H Q4 (Order Priority Checking).
 *
 *   select o_orderpriority, count(*) as order_count from orders
 *   where o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and exists (select * from lineitem
 *                 where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
 *   group by o_orderpriority order by o_orderpriority;
 *
 * Plan: a partition-local merge of orders and lineitem. dbgen (and the
 * store) keeps lineitem grouped by orderkey in the same ascending order as
 * orders, so the orders are cut into chunks, each chunk's first lineitem is
 * found by binary search on l_orderkey, and each chunk reads its
 * orders once. The EXISTS is decided per order on its own run of line items
 * (stopping at the first late one); the run is only skipped, never read,
 * when the order is outside the window. Counts per priority code are kept
 * per chunk and added at the end (exact, deterministic); codes are in
 * string order, so the groups come out sorted.
 *
 * Join mechanics: each chunk of orders first selects its qualifying orders
 * branch-free (blocks of 512), then gallops forward in l_orderkey to each
 * selected order's run of items, prefetching the probable run start of
 * the order 6 selections ahead; the runs of other orders are never read.
 * Orderkeys are int32 (the store widens them only above SF ~357). */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_add_months, dkb_gallop_i32, dkb_lower_bound_i32, dkb_put_dict */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *oprio = dkb_cand_column(db, "orders", "o_orderpriority");
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lcommit = dkb_cand_column(db, "lineitem", "l_commitdate");
    const dkb_cand_vec *lreceipt = dkb_cand_column(db, "lineitem", "l_receiptdate");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    if (!okey || !odate || !oprio || !lkey || !lcommit || !lreceipt || !date) return DKB_CAND_EINVAL;
    if (okey->type != DKB_CAND_I32 || lkey->type != DKB_CAND_I32 || odate->type != DKB_CAND_I32 ||
        oprio->type != DKB_CAND_U8 || !oprio->dict || res->ncols != 2 ||
        res->cols[0].type != DKB_CAND_RES_STRING || res->cols[1].type != DKB_CAND_RES_INT)
        return DKB_CAND_EINVAL;

    const int32_t lo_day = (int32_t)date->i, hi_day = (int32_t)dkb_add_months(date->i, 3); /* [lo, hi) */
    const uint32_t width = (uint32_t)(hi_day - lo_day);
    const int32_t *ok = okey->data, *od = odate->data, *lk = lkey->data;
    const int32_t *cd = lcommit->data, *rd = lreceipt->data;
    const uint8_t *pr = oprio->data;
    const int64_t no = okey->n, nl = lkey->n;
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    int64_t *counts = calloc((size_t)nchunks * 256, sizeof(int64_t));
    if (!counts) return DKB_CAND_ENOMEM;

#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(no >= PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t o0 = c * no / nchunks, o1 = (c + 1) * no / nchunks; /* this chunk's orders */
        if (o0 >= o1) continue;
        int64_t j = dkb_lower_bound_i32(lk, nl, ok[o0]); /* and their line items [j, jend) */
        const int64_t jend = o1 < no ? dkb_lower_bound_i32(lk, nl, ok[o1]) : nl;
        int64_t *cnt = counts + c * 256;
        /* items per order in this chunk (about 4): where an order's run
         * probably starts, to prefetch it a few orders ahead */
        const int64_t j0 = j, per = o1 > o0 ? ((jend - j0) << 8) / (o1 - o0) : 0;
        int32_t sel[SUB];
        for (int64_t b = o0; b < o1; b += SUB) {
            const int64_t be = b + SUB < o1 ? b + SUB : o1;
            int ns = 0;
            for (int64_t o = b; o < be; o++) {
                sel[ns] = (int32_t)(o - b);
                ns += (uint32_t)(od[o] - lo_day) < width;
            }
            for (int x = 0; x < ns; x++) {
                if (x + AHEAD < ns) {
                    const int64_t est = j + (((b + sel[x + AHEAD]) - (b + sel[x])) * per >> 8);
                    if (est < jend) {
                        __builtin_prefetch(&lk[est]);
                        __builtin_prefetch(&cd[est]);
                        __builtin_prefetch(&rd[est]);
                    }
                }
                const int64_t o = b + sel[x];
                const int32_t k = ok[o];
                j = dkb_gallop_i32(lk, j, jend, k);
                int late = 0;
                for (; j < jend && lk[j] == k; j++)
                    if (cd[j] < rd[j]) { late = 1; break; }
                cnt[pr[o]] += late;
            }
        }
    }

    dkb_cand_res_col *c_prio = &res->cols[0], *c_count = &res->cols[1];
    int64_t r = 0;
    for (int code = 0; code < oprio->dict->size; code++) {
        int64_t total = 0;
        for (int64_t c = 0; c < nchunks; c++) total += counts[c * 256 + code];
        if (!total) continue;
        if (r >= res->cap || dkb_put_dict(c_prio, r, oprio->dict, code)) {
            free(counts);
            return DKB_CAND_ECAP;
        }
        c_count->i64[r] = total;
        c_count->is_null[r] = 0;
        r++;
    }
    free(counts);
    res->nrows = r;
    return 0;
}
