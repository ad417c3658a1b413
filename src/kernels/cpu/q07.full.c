/* q07.full.c: expert CPU candidate for TPC-H Q7 (Volume Shipping).
 *
 *   select supp_nation, cust_nation, l_year, sum(volume) as revenue
 *   from (select n1.n_name as supp_nation, n2.n_name as cust_nation,
 *                extract(year from l_shipdate) as l_year,
 *                l_extendedprice * (1 - l_discount) as volume
 *         from supplier, lineitem, orders, customer, nation n1, nation n2
 *         where s_suppkey = l_suppkey and o_orderkey = l_orderkey
 *           and c_custkey = o_custkey and s_nationkey = n1.n_nationkey
 *           and c_nationkey = n2.n_nationkey
 *           and ((n1.n_name = ':nation1' and n2.n_name = ':nation2')
 *             or (n1.n_name = ':nation2' and n2.n_name = ':nation1'))
 *           and l_shipdate between date '1995-01-01' and date '1996-12-31') as shipping
 *   group by supp_nation, cust_nation, l_year order by supp_nation, cust_nation, l_year;
 *
 * Plan: the two names are dictionary codes; suppliers and customers become
 * arrays over their dense keys holding 0 or 1 (which of the two nations) or
 * -1. Then one partition-local merge of orders and lineitem (lineitem is
 * grouped by orderkey in the order of orders): an order whose customer is
 * of one of the nations sums those of its items shipped in 1995..1996 whose
 * supplier is of the other listed nation (or the same one, when both
 * parameters name it), into 2 x 2 x 2 per-chunk __int128 sums (exact, scale
 * 4). The few groups are sorted by name code (string order) and year.
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
 * co-partitioned by orderkey (customer, supplier, nation whole on every
 * rank), so each rank joins its share locally; the 8 groups' exact sums and
 * counts are summed over the ranks in one all-reduce; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_days_from_civil, dkb_max_i32, dkb_put_dec,
                                       dkb_put_dict,
                              dkb_walk_* */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

/* key -> 0 / 1 when its nation key is nk[0] / nk[1] (0 when both), else -1. */
static int8_t *side_of(const dkb_cand_vec *key, const dkb_cand_vec *nat, const int64_t nk[2], int64_t *maxk) {
    const int32_t *k = key->data, *n = nat->data;
    const int64_t m = *maxk = dkb_max_i32(k, key->n);
    int8_t *out = malloc((size_t)m + 1);
    if (!out) return NULL;
    memset(out, -1, (size_t)m + 1);
    for (int64_t i = 0; i < key->n; i++)
        if (k[i] >= 0) out[k[i]] = n[i] == nk[0] ? 0 : n[i] == nk[1] ? 1 : -1;
    return out;
}

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *ckey, *cnat, *skey, *snat, *okey, *ocust, *lkey, *lsupp, *lship, *lprice, *ldisc;
    const dkb_cand_param *p1, *p2;
    dkb_cand_res_col *c_s, *c_c, *c_y, *c_r;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_nationkey:i32", &ckey, &cnat) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32", &okey, &ocust) ||
        DKB_BIND_COLS(db, "lineitem",
                      "l_orderkey:i32 l_suppkey:i32 l_shipdate:i32 l_extendedprice:dec2 l_discount:dec2", &lkey, &lsupp,
                      &lship, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "nation1:str nation2:str", &p1, &p2) ||
        DKB_BIND_RES(res, "supp_nation:str cust_nation:str l_year:int revenue:dec4", &c_s, &c_c, &c_y, &c_r))
        return DKB_CAND_EINVAL;

    /* the two nations: name code -> nation key (-2: absent, matches nothing) */
    const int code[2] = {dkb_cand_dict_code(nname->dict, p1->s), dkb_cand_dict_code(nname->dict, p2->s)};
    int64_t nk[2] = {-2, -2};
    const int32_t *nkd = nkey->data;
    const uint8_t *nnd = nname->data;
    for (int64_t i = 0; i < nkey->n; i++)
        for (int s = 0; s < 2; s++)
            if (code[s] >= 0 && nnd[i] == code[s]) nk[s] = nkd[i];
    if (nk[0] < 0 || nk[1] < 0) { /* a name absent: no row */
        res->nrows = 0;
        return 0;
    }
    const int same = nk[0] == nk[1];
    int64_t cmax, smax;
    int8_t *c_side = side_of(ckey, cnat, nk, &cmax);
    int8_t *s_side = side_of(skey, snat, nk, &smax);
    const int64_t maxc = cmax, maxs = smax; /* locals the scan reads */
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n; /* the whole table's rows (also under a budget) */
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    __int128 *sums = calloc((size_t)nchunks * 8, sizeof(__int128));
    int64_t *hits = calloc((size_t)nchunks * 8, sizeof(int64_t));
    if (!c_side || !s_side || !sums || !hits) {
        free(c_side), free(s_side), free(sums), free(hits);
        return DKB_CAND_ENOMEM;
    }

    const int32_t d95 = (int32_t)dkb_days_from_civil(1995, 1, 1), d96 = (int32_t)dkb_days_from_civil(1996, 1, 1);
    const uint32_t width = (uint32_t)(dkb_days_from_civil(1997, 1, 1) - d95);
    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey): the revenue per (side, side, year)
     * into the chunks' sums */
    static const char *const COLS[] = {"o_orderkey", "o_custkey",  "l_orderkey",     "l_suppkey",
                                       "l_shipdate", "l_extendedprice", "l_discount"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 7, COLS); dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *oc = st.cols[1].data;
        const int32_t *lk = st.cols[2].data, *lsu = st.cols[3].data, *ls = st.cols[4].data;
        const int64_t *lp = st.cols[5].data, *ld = st.cols[6].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[2].n;
        /* at most the whole tables' chunks, which sums has room for */
        const int64_t nch = nol < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(nol >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            dkb_walk w; /* this chunk's orders [o0, o1) and their line items */
            int64_t o0, o1;
            if (!dkb_walk_init(&w, ok, nol, lk, nll, c, nch, &o0, &o1)) continue;
            int32_t sel[SUB];
            __int128 *sum = sums + c * 8;
            int64_t *hit = hits + c * 8;
            for (int64_t b = o0; b < o1; b += SUB) {
                const int64_t be = b + SUB < o1 ? b + SUB : o1;
                int ns = 0;
                for (int64_t o = b; o < be; o++) { /* branch-free selection of the block's orders */
                    const uint64_t cu = (uint64_t)(int64_t)oc[o], ci = cu <= (uint64_t)maxc ? cu : 0;
                    sel[ns] = (int32_t)(o - b);
                    ns += c_side[ci] >= 0;
                }
                for (int x = 0; x < ns; x++) {
                    const int64_t g = dkb_walk_guess(&w, sel, ns, x, AHEAD); /* a later order's run, probably */
                    if (g >= 0)
                        __builtin_prefetch(&lk[g]), __builtin_prefetch(&lsu[g]), __builtin_prefetch(&ls[g]),
                            __builtin_prefetch(&lp[g]), __builtin_prefetch(&ld[g]);
                    const int64_t o = b + sel[x];
                    const int cs = c_side[oc[o]];
                    const int want = same ? 0 : 1 - cs; /* the supplier's side */
                    int64_t j;
                    for (const int64_t e = dkb_walk_to(&w, ok[o], &j); j < e; j++) {
                        const int64_t su = lsu[j];
                        if ((uint32_t)(ls[j] - d95) >= width || su < 0 || su > maxs || s_side[su] != want) continue;
                        const int grp = (want * 2 + cs) * 2 + (ls[j] >= d96);
                        sum[grp] += lp[j] * (100 - ld[j]);
                        hit[grp]++;
                    }
                }
            }
        }
    }
    const int st_rc = dkb_stream_end(&st);
    if (st_rc) {
        free(c_side), free(s_side), free(sums), free(hits);
        return st_rc;
    }

    /* the chunks' sums into chunk 0's, then the ranks' */
    for (int64_t c = 1; c < nchunks; c++)
        for (int x = 0; x < 8; x++) sums[x] += sums[c * 8 + x], hits[x] += hits[c * 8 + x];
    const int mrc = dkb_ranks_sum_mixed(env, hits, 8, sums, 8);
    if (mrc || !dkb_ranks_writes(env, res)) {
        free(c_side), free(s_side), free(sums), free(hits);
        return mrc;
    }
    typedef struct { int scode, ccode, year; __int128 rev; } group;
    group g[8];
    int ng = 0;
    for (int x = 0; x < 8; x++) {
        __int128 s = 0;
        int64_t h = 0;
        s += sums[x], h += hits[x];
        if (!h) continue;
        const int ss = x >> 2, cs = (x >> 1) & 1;
        g[ng++] = (group){code[ss], code[cs], 1995 + (x & 1), s};
    }
    free(c_side), free(s_side), free(sums), free(hits);
    for (int a = 1; a < ng; a++)
        for (int b = a; b > 0; b--) {
            const group *p = &g[b - 1], *q = &g[b];
            const int gt = p->scode != q->scode ? p->scode > q->scode
                         : p->ccode != q->ccode ? p->ccode > q->ccode
                                                : p->year > q->year;
            if (!gt) break;
            const group t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    if (ng > res->cap) return DKB_CAND_ECAP;
    for (int r = 0; r < ng; r++) {
        if (dkb_put_dict(c_s, r, nname->dict, g[r].scode) || dkb_put_dict(c_c, r, nname->dict, g[r].ccode))
            return DKB_CAND_ECAP;
        c_y->i64[r] = g[r].year;
        c_y->is_null[r] = 0;
        dkb_put_dec(c_r, r, g[r].rev, 4);
    }
    res->nrows = ng;
    return 0;
}
