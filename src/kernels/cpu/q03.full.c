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
 * Join mechanics (the toolkit's walk): each chunk of orders (taken by the
 * threads as they come) first selects its qualifying orders branch-free
 * (blocks of 512), then gallops forward in l_orderkey to each selected
 * order's run of items (dkb_walk_to), prefetching the probable run start of
 * the order 6 selections ahead (dkb_walk_guess); the runs of other orders
 * are never read.
 * Orderkeys are int32 (the store widens them only above SF ~357).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey and an order is one group, so each rank's
 * orders' revenues are final; each rank's top 10 is gathered in rank order
 * and merged (dkb_ranks_topk) on every rank; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_max_i32, dkb_put_dec, dkb_topk_insert,
                                       dkb_walk_* */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

enum { TOPK = 10 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

typedef struct {
    int64_t revenue;  /* scale 4 */
    int32_t date;
    int32_t prio;
    int64_t key;
} row;

/* a before b in the result order: revenue desc, o_orderdate, then the key
 * (a fixed order for ties). */
static int before(const void *pa, const void *pb) {
    const row *a = pa, *b = pb;
    if (a->revenue != b->revenue) return a->revenue > b->revenue;
    if (a->date != b->date) return a->date < b->date;
    return a->key < b->key;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ckey, *cseg, *okey, *ocust, *odate, *oprio, *lkey, *lship, *lprice, *ldisc;
    const dkb_cand_param *segment, *date;
    dkb_cand_res_col *c_key, *c_rev, *c_date, *c_prio;
    if (DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_mktsegment:dict", &ckey, &cseg) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32 o_shippriority:i32", &okey, &ocust,
                      &odate, &oprio) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_shipdate:i32 l_extendedprice:dec2 l_discount:dec2", &lkey,
                      &lship, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "segment:str date", &segment, &date) ||
        DKB_BIND_RES(res, "l_orderkey:int revenue:dec4 o_orderdate:date o_shippriority:int", &c_key, &c_rev, &c_date,
                     &c_prio))
        return DKB_CAND_EINVAL;

    /* customers of the segment: a bitmap over custkey */
    const int seg = dkb_cand_dict_code(cseg->dict, segment->s);
    const int64_t nc = ckey->n;
    const int32_t *ck = ckey->data;
    const uint8_t *cs = cseg->data;
    const int64_t maxc = dkb_max_i32(ck, nc), nwords = (maxc >> 6) + 1;
    uint64_t *cbits = calloc((size_t)nwords, sizeof(uint64_t));
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n; /* the whole table's rows (also under a budget) */
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
    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey: a load's lines are those of its
     * orders): the qualifying orders into the chunks' top lists */
    static const char *const COLS[] = {"o_orderkey", "o_custkey",  "o_orderdate",     "o_shippriority",
                                       "l_orderkey", "l_shipdate", "l_extendedprice", "l_discount"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 8, COLS); dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *oc = st.cols[1].data, *od = st.cols[2].data, *op = st.cols[3].data;
        const int32_t *lk = st.cols[4].data, *ls = st.cols[5].data;
        const int64_t *lp = st.cols[6].data, *ld = st.cols[7].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[4].n;
        /* at most the whole tables' chunks, which tops has room for */
        const int64_t nch = nol < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(nol >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            dkb_walk w; /* this chunk's orders [o0, o1) and their line items */
            int64_t o0, o1;
            if (!dkb_walk_init(&w, ok, nol, lk, nll, c, nch, &o0, &o1)) continue;
            int32_t sel[SUB];
            row *top = tops + c * TOPK;
            int n = ntop[c]; /* earlier loads' candidates stay in the chunk's top 10 */
            for (int64_t b = o0; b < o1; b += SUB) {
                const int64_t be = b + SUB < o1 ? b + SUB : o1;
                int ns = 0;
                for (int64_t o = b; o < be; o++) { /* branch-free selection of the block's orders */
                    const uint64_t cu = (uint64_t)(int64_t)oc[o], ci = cu <= (uint64_t)maxc ? cu : 0;
                    sel[ns] = (int32_t)(o - b);
                    ns += (od[o] < day) & (int)((cbits[ci >> 6] >> (ci & 63)) & 1);
                }
                for (int x = 0; x < ns; x++) {
                    const int64_t g = dkb_walk_guess(&w, sel, ns, x, AHEAD); /* a later order's run, probably */
                    if (g >= 0)
                        __builtin_prefetch(&lk[g]), __builtin_prefetch(&ls[g]),
                            __builtin_prefetch(&lp[g]), __builtin_prefetch(&ld[g]);
                    const int64_t o = b + sel[x];
                    int64_t j, sum = 0;
                    int any = 0;
                    for (const int64_t e = dkb_walk_to(&w, ok[o], &j); j < e; j++)
                        if (ls[j] > day) {
                            sum += lp[j] * (100 - ld[j]);
                            any = 1;
                        }
                    if (any) {
                        const row r = {sum, od[o], op[o], ok[o]};
                        dkb_topk_insert(top, &n, TOPK, &r, sizeof r, before);
                    }
                }
            }
            ntop[c] = n;
        }

    }
    const int rc = dkb_stream_end(&st);
    if (rc) {
        free(cbits), free(tops), free(ntop);
        return rc;
    }

    row best[TOPK];
    int nb = 0;
    for (int64_t c = 0; c < nchunks; c++)
        for (int i = 0; i < ntop[c]; i++) dkb_topk_insert(best, &nb, TOPK, &tops[c * TOPK + i], sizeof(row), before);
    free(cbits), free(tops), free(ntop);
    const int mrc = dkb_ranks_topk(env, best, &nb, TOPK, sizeof(row), before);
    if (mrc || !dkb_ranks_writes(env, res)) return mrc;
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
