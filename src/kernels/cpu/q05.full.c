/* q05.full.c: expert CPU candidate for TPC-H Q5 (Local Supplier Volume).
 *
 *   select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
 *   from customer, orders, lineitem, supplier, nation, region
 *   where c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and l_suppkey = s_suppkey and c_nationkey = s_nationkey
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *     and r_name = ':region' and o_orderdate >= date ':date'
 *     and o_orderdate < date ':date' + interval '1' year
 *   group by n_name order by revenue desc;
 *
 * Plan: the region (dictionary code) gives a nation mask; customers and
 * suppliers become arrays over their dense keys holding the nation key when
 * it is in the region, else -1 (so c_nationkey = s_nationkey folds into one
 * compare). Then one partition-local merge of orders and lineitem (lineitem
 * is grouped by orderkey in the order of orders): an order of the year whose
 * customer is in the region sums its items whose supplier has the same
 * nation, per nation, into per-chunk __int128 sums (exact, scale 4), merged
 * at the end. Items of orders outside the test are not read.
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
 * co-partitioned by orderkey (customer, supplier, nation, region whole on
 * every rank), so each rank joins its share locally; the per-nation exact
 * sums and counts are summed over the ranks in one all-reduce; rank 0 sorts
 * and writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_years, dkb_max_i32, dkb_put_dec, dkb_put_dict,
                              dkb_walk_* */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

enum { MAXNAT = 256 };

/* key -> nation key when that nation is in the region, else -1. */
static int8_t *nation_of(const dkb_cand_vec *key, const dkb_cand_vec *nat, const int8_t *in_region, int64_t *maxk) {
    const int32_t *k = key->data, *nk = nat->data;
    *maxk = dkb_max_i32(k, key->n);
    int8_t *out = malloc((size_t)*maxk + 1);
    if (!out) return NULL;
    memset(out, -1, (size_t)*maxk + 1);
    for (int64_t i = 0; i < key->n; i++)
        if (k[i] >= 0 && nk[i] >= 0 && nk[i] < MAXNAT && in_region[nk[i]]) out[k[i]] = (int8_t)nk[i];
    return out;
}

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *rkey, *rname, *nkey, *nname, *nreg, *ckey, *cnat, *skey, *snat, *okey, *ocust, *odate, *lkey,
        *lsupp, *lprice, *ldisc;
    const dkb_cand_param *region, *date;
    dkb_cand_res_col *c_name, *c_rev;
    if (DKB_BIND_COLS(db, "region", "r_regionkey:i32 r_name:dict", &rkey, &rname) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict n_regionkey:i32", &nkey, &nname, &nreg) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_nationkey:i32", &ckey, &cnat) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32", &okey, &ocust, &odate) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_suppkey:i32 l_extendedprice:dec2 l_discount:dec2", &lkey,
                      &lsupp, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "region:str date", &region, &date) ||
        DKB_BIND_RES(res, "n_name:str revenue:dec4", &c_name, &c_rev))
        return DKB_CAND_EINVAL;

    /* the region's nations */
    int8_t in_region[MAXNAT] = {0};
    int name_of[MAXNAT];
    const int rc = dkb_cand_dict_code(rname->dict, region->s);
    const int32_t *rk = rkey->data, *nk = nkey->data, *nr = nreg->data;
    const uint8_t *rn = rname->data, *nn = nname->data;
    for (int64_t i = 0; i < nkey->n; i++) {
        if (nk[i] < 0 || nk[i] >= MAXNAT) return DKB_CAND_EINTERNAL;
        name_of[nk[i]] = nn[i];
        for (int64_t j = 0; j < rkey->n; j++)
            if (rn[j] == rc && rk[j] == nr[i]) in_region[nk[i]] = 1;
    }
    int64_t cmax, smax;
    int8_t *c_nat = nation_of(ckey, cnat, in_region, &cmax);
    int8_t *s_nat = nation_of(skey, snat, in_region, &smax);
    const int64_t maxc = cmax, maxs = smax; /* locals the scan reads */
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n; /* the whole table's rows (also under a budget) */
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    __int128 *sums = calloc((size_t)nchunks * MAXNAT, sizeof(__int128));
    int64_t *hits = calloc((size_t)nchunks * MAXNAT, sizeof(int64_t));
    if (!c_nat || !s_nat || !sums || !hits) {
        free(c_nat), free(s_nat), free(sums), free(hits);
        return DKB_CAND_ENOMEM;
    }

    const int32_t lo_day = (int32_t)date->i;
    const uint32_t width = (uint32_t)(dkb_add_years(date->i, 1) - date->i); /* [lo, lo + width) */
    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey): the revenue per nation into the
     * chunks' sums */
    static const char *const COLS[] = {"o_orderkey", "o_custkey",       "o_orderdate", "l_orderkey",
                                       "l_suppkey",  "l_extendedprice", "l_discount"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 7, COLS); dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *oc = st.cols[1].data, *od = st.cols[2].data;
        const int32_t *lk = st.cols[3].data, *lsu = st.cols[4].data;
        const int64_t *lp = st.cols[5].data, *ld = st.cols[6].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[3].n;
        /* at most the whole tables' chunks, which sums has room for */
        const int64_t nch = nol < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(nol >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            dkb_walk w; /* this chunk's orders [o0, o1) and their line items */
            int64_t o0, o1;
            if (!dkb_walk_init(&w, ok, nol, lk, nll, c, nch, &o0, &o1)) continue;
            int32_t sel[SUB];
            __int128 *sum = sums + c * MAXNAT;
            int64_t *hit = hits + c * MAXNAT;
            for (int64_t b = o0; b < o1; b += SUB) {
                const int64_t be = b + SUB < o1 ? b + SUB : o1;
                int ns = 0;
                for (int64_t o = b; o < be; o++) { /* branch-free selection of the block's orders */
                    const uint64_t cu = (uint64_t)(int64_t)oc[o], ci = cu <= (uint64_t)maxc ? cu : 0;
                    sel[ns] = (int32_t)(o - b);
                    ns += ((uint32_t)(od[o] - lo_day) < width) & (c_nat[ci] >= 0);
                }
                for (int x = 0; x < ns; x++) {
                    const int64_t g = dkb_walk_guess(&w, sel, ns, x, AHEAD); /* a later order's run, probably */
                    if (g >= 0)
                        __builtin_prefetch(&lk[g]), __builtin_prefetch(&lsu[g]),
                            __builtin_prefetch(&lp[g]), __builtin_prefetch(&ld[g]);
                    const int64_t o = b + sel[x];
                    const int cn = c_nat[oc[o]];
                    int64_t j, s = 0, h = 0;
                    for (const int64_t e = dkb_walk_to(&w, ok[o], &j); j < e; j++) {
                        const int64_t su = lsu[j];
                        if (su >= 0 && su <= maxs && s_nat[su] == cn) {
                            s += lp[j] * (100 - ld[j]);
                            h++;
                        }
                    }
                    sum[cn] += s;
                    hit[cn] += h;
                }
            }
        }
    }
    const int st_rc = dkb_stream_end(&st);
    if (st_rc) {
        free(c_nat), free(s_nat), free(sums), free(hits);
        return st_rc;
    }

    /* the chunks' sums into chunk 0's, then the ranks' */
    for (int64_t c = 1; c < nchunks; c++)
        for (int n = 0; n < MAXNAT; n++) sums[n] += sums[c * MAXNAT + n], hits[n] += hits[c * MAXNAT + n];
    const int mrc = dkb_ranks_sum_mixed(env, hits, MAXNAT, sums, MAXNAT);
    if (mrc || !dkb_ranks_writes(env, res)) {
        free(c_nat), free(s_nat), free(sums), free(hits);
        return mrc;
    }
    /* per nation present; order by revenue desc */
    typedef struct { __int128 rev; int nation; } group;
    group g[MAXNAT];
    int ng = 0;
    for (int n = 0; n < MAXNAT; n++) {
        __int128 s = 0;
        int64_t h = 0;
        s += sums[n], h += hits[n];
        if (h) g[ng++] = (group){s, n};
    }
    free(c_nat), free(s_nat), free(sums), free(hits);
    for (int a = 1; a < ng; a++)
        for (int b = a; b > 0 && g[b].rev > g[b - 1].rev; b--) {
            const group t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    if (ng > res->cap) return DKB_CAND_ECAP;
    for (int r = 0; r < ng; r++) {
        if (dkb_put_dict(c_name, r, nname->dict, name_of[g[r].nation])) return DKB_CAND_ECAP;
        dkb_put_dec(c_rev, r, g[r].rev, 4);
    }
    res->nrows = ng;
    return 0;
}
