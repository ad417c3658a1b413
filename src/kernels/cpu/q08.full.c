/* q08.full.c: expert CPU candidate for TPC-H Q8 (National Market Share).
 *
 *   select o_year, sum(case when nation = ':nation' then volume else 0 end)
 *                  / sum(volume) as mkt_share
 *   from (select extract(year from o_orderdate) as o_year,
 *                l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation
 *         from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
 *         where p_partkey = l_partkey and s_suppkey = l_suppkey
 *           and l_orderkey = o_orderkey and o_custkey = c_custkey
 *           and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey
 *           and r_name = ':region' and s_nationkey = n2.n_nationkey
 *           and o_orderdate between date '1995-01-01' and date '1996-12-31'
 *           and p_type = ':type') as all_nations
 *   group by o_year order by o_year;
 *
 * Plan: the part type and the region are dictionary codes; the parts of the
 * type become a bitmap over the dense partkeys (a semi-join), the region's
 * customers a byte array over custkeys, and the suppliers of the nation a
 * byte array over suppkeys. The part filter is the most selective (1 type
 * in 150), so lineitem drives the join: chunks of orders and their items
 * (dkb_chunk_runs; lineitem is grouped by orderkey in the order of orders)
 * are taken by the threads as they come; each block of 1024 items selects,
 * branch-free, those whose part is in the bitmap (dkb_select_bits), and
 * each such item finds its order by galloping forward in o_orderkey (both
 * ascending), prefetching a later item's columns. An item whose order is of
 * 1995..1996 and from the region adds its volume (and, when the supplier is
 * of the nation, the nation's volume) to per-chunk __int128 sums per year
 * (exact, scale 4). The share is the quotient of the two exact sums as
 * doubles, as the baseline computes it. Orderkeys are int32 (the store
 * widens them only above SF ~357).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey (part, customer, supplier, nation, region whole
 * on every rank), so each rank joins its share locally; the per-year exact
 * sums and counts are summed over the ranks in one all-reduce, and the
 * share is the one division of the merged exact sums; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_chunk_runs, dkb_days_from_civil, dkb_gallop_i32,
                              dkb_max_i32, dkb_select_bits */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 1024, AHEAD = 8 }; /* items per selection block; prefetch distance */

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders and lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *rkey, *rname, *nkey, *nname, *nreg, *pkey, *ptype, *ckey, *cnat, *skey, *snat, *okey, *ocust,
        *odate, *lkey, *lpart, *lsupp, *lprice, *ldisc;
    const dkb_cand_param *nation, *region, *type;
    dkb_cand_res_col *c_year, *c_share;
    if (DKB_BIND_COLS(db, "region", "r_regionkey:i32 r_name:dict", &rkey, &rname) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict n_regionkey:i32", &nkey, &nname, &nreg) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_type:dict", &pkey, &ptype) ||
        DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_nationkey:i32", &ckey, &cnat) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_custkey:i32 o_orderdate:i32", &okey, &ocust, &odate) ||
        DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_partkey:i32 l_suppkey:i32 l_extendedprice:dec2 l_discount:dec2",
                      &lkey, &lpart, &lsupp, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "nation:str region:str type:str", &nation, &region, &type) ||
        DKB_BIND_RES(res, "o_year:int mkt_share:float", &c_year, &c_share))
        return DKB_CAND_EINVAL;

    /* dimension filters on dictionary codes (absent: -1, matches nothing) */
    const int rcode = dkb_cand_dict_code(rname->dict, region->s);
    const int ncode = dkb_cand_dict_code(nname->dict, nation->s);
    const int tcode = dkb_cand_dict_code(ptype->dict, type->s);
    uint8_t nat_in_region[256] = {0};
    int64_t target = -2; /* nation key of :nation */
    {
        const int32_t *rk = rkey->data, *nk = nkey->data, *nr = nreg->data;
        const uint8_t *rn = rname->data, *nn = nname->data;
        for (int64_t i = 0; i < nkey->n; i++) {
            if (nk[i] < 0 || nk[i] > 255) return DKB_CAND_EINTERNAL;
            if (nn[i] == ncode) target = nk[i];
            for (int64_t j = 0; j < rkey->n; j++)
                if (rn[j] == rcode && rk[j] == nr[i]) nat_in_region[nk[i]] = 1;
        }
    }
    const int64_t maxp = dkb_max_i32(pkey->data, pkey->n), maxc = dkb_max_i32(ckey->data, ckey->n),
                  maxs = dkb_max_i32(skey->data, skey->n);
    uint64_t *pbits = calloc((size_t)(maxp >> 6) + 1, sizeof(uint64_t));
    uint8_t *c_in = calloc((size_t)maxc + 1, 1), *s_is = calloc((size_t)maxs + 1, 1);
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n; /* the whole table's rows (also under a budget) */
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    __int128 *sums = calloc((size_t)nchunks * 4, sizeof(__int128)); /* [chunk][year][all, nation] */
    int64_t *hits = calloc((size_t)nchunks * 2, sizeof(int64_t));
    if (!pbits || !c_in || !s_is || !sums || !hits) {
        free(pbits), free(c_in), free(s_is), free(sums), free(hits);
        return DKB_CAND_ENOMEM;
    }
    {
        const int32_t *pk = pkey->data, *ck = ckey->data, *cn = cnat->data, *sk = skey->data, *sn = snat->data;
        const uint8_t *pt = ptype->data;
        if (tcode >= 0)
            for (int64_t i = 0; i < pkey->n; i++)
                if (pt[i] == tcode && pk[i] >= 0) pbits[pk[i] >> 6] |= 1ull << (pk[i] & 63);
        for (int64_t i = 0; i < ckey->n; i++)
            if (ck[i] >= 0 && cn[i] >= 0 && cn[i] < 256) c_in[ck[i]] = nat_in_region[cn[i]];
        for (int64_t i = 0; i < skey->n; i++)
            if (sk[i] >= 0) s_is[sk[i]] = sn[i] == target;
    }

    const int32_t d95 = (int32_t)dkb_days_from_civil(1995, 1, 1), d96 = (int32_t)dkb_days_from_civil(1996, 1, 1);
    const uint32_t width = (uint32_t)(dkb_days_from_civil(1997, 1, 1) - d95);
    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey): the revenue per year into the
     * chunks' sums */
    static const char *const COLS[] = {"o_orderkey", "o_custkey", "o_orderdate",     "l_orderkey",
                                       "l_partkey",  "l_suppkey", "l_extendedprice", "l_discount"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 8, COLS); dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *oc = st.cols[1].data, *od = st.cols[2].data;
        const int32_t *lk = st.cols[3].data, *lpa = st.cols[4].data, *lsu = st.cols[5].data;
        const int64_t *lp = st.cols[6].data, *ld = st.cols[7].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[3].n;
        /* at most the whole tables' chunks, which sums has room for */
        const int64_t nch = nol < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(nol >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            int64_t o0, o1, j0, j1; /* this chunk's orders and their line items */
            if (!dkb_chunk_runs(ok, nol, lk, nll, c, nch, &o0, &o1, &j0, &j1)) continue;
            int32_t sel[SUB + 16];
            __int128 *sum = sums + c * 4;
            int64_t *hit = hits + c * 2, o = o0;
            for (int64_t b = j0; b < j1; b += SUB) {
                const int ns = dkb_select_bits(lpa + b, (int)(b + SUB < j1 ? SUB : j1 - b), pbits, maxp + 1, sel);
                for (int x = 0; x < ns; x++) {
                    if (x + AHEAD < ns) { /* a later item's columns */
                        const int64_t jn = b + sel[x + AHEAD];
                        __builtin_prefetch(&lk[jn]);
                        __builtin_prefetch(&lsu[jn]);
                        __builtin_prefetch(&lp[jn]);
                        __builtin_prefetch(&ld[jn]);
                    }
                    const int64_t j = b + sel[x];
                    const int32_t k = lk[j];
                    o = dkb_gallop_i32(ok, o, o1, k); /* its order: both sides ascending */
                    if (o >= o1 || ok[o] != k || (uint32_t)(od[o] - d95) >= width) continue;
                    const uint64_t cu = (uint32_t)oc[o];
                    if (cu > (uint64_t)maxc || !c_in[cu]) continue;
                    const int y = od[o] >= d96;
                    const int64_t su = lsu[j], v = lp[j] * (100 - ld[j]);
                    sum[y * 2] += v;
                    if (su >= 0 && su <= maxs && s_is[su]) sum[y * 2 + 1] += v;
                    hit[y]++;
                }
            }
        }
    }
    const int st_rc = dkb_stream_end(&st);
    if (st_rc) {
        free(pbits), free(c_in), free(s_is), free(sums), free(hits);
        return st_rc;
    }

    /* the chunks' sums into chunk 0's, then the ranks' */
    for (int64_t c = 1; c < nchunks; c++) {
        for (int x = 0; x < 4; x++) sums[x] += sums[c * 4 + x];
        for (int x = 0; x < 2; x++) hits[x] += hits[c * 2 + x];
    }
    const int mrc = dkb_ranks_sum_mixed(env, hits, 2, sums, 4);
    if (mrc || !dkb_ranks_writes(env, res)) {
        free(pbits), free(c_in), free(s_is), free(sums), free(hits);
        return mrc;
    }
    int64_t r = 0;
    for (int y = 0; y < 2; y++) {
        __int128 all = 0, mine = 0;
        int64_t h = 0;
        all = sums[y * 2], mine = sums[y * 2 + 1], h = hits[y];
        if (!h) continue;
        if (r >= res->cap) break;
        c_year->i64[r] = 1995 + y;
        c_share->f64[r] = (double)mine / (double)all;
        c_year->is_null[r] = c_share->is_null[r] = 0;
        r++;
    }
    free(pbits), free(c_in), free(s_is), free(sums), free(hits);
    res->nrows = r;
    return 0;
}
