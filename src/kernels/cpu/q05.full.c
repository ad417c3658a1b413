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
 * Join mechanics: each chunk of orders first selects its qualifying orders
 * branch-free (blocks of 512), then gallops forward in l_orderkey to each
 * selected order's run of items, prefetching the probable run start of
 * the order 6 selections ahead; the runs of other orders are never read.
 * Orderkeys are int32 (the store widens them only above SF ~357). */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_add_years, dkb_gallop_i32, dkb_lower_bound_i32, dkb_max_i32, dkb_put_dec,
                              dkb_put_dict */

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

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *rkey = dkb_cand_column(db, "region", "r_regionkey");
    const dkb_cand_vec *rname = dkb_cand_column(db, "region", "r_name");
    const dkb_cand_vec *nkey = dkb_cand_column(db, "nation", "n_nationkey");
    const dkb_cand_vec *nname = dkb_cand_column(db, "nation", "n_name");
    const dkb_cand_vec *nreg = dkb_cand_column(db, "nation", "n_regionkey");
    const dkb_cand_vec *ckey = dkb_cand_column(db, "customer", "c_custkey");
    const dkb_cand_vec *cnat = dkb_cand_column(db, "customer", "c_nationkey");
    const dkb_cand_vec *skey = dkb_cand_column(db, "supplier", "s_suppkey");
    const dkb_cand_vec *snat = dkb_cand_column(db, "supplier", "s_nationkey");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lsupp = dkb_cand_column(db, "lineitem", "l_suppkey");
    const dkb_cand_vec *lprice = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *ldisc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_param *region = dkb_cand_param_find(params, "region");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    if (!rkey || !rname || !nkey || !nname || !nreg || !ckey || !cnat || !skey || !snat || !okey || !ocust ||
        !odate || !lkey || !lsupp || !lprice || !ldisc || !region || !date || !region->s)
        return DKB_CAND_EINVAL;
    if (okey->type != DKB_CAND_I32 || lkey->type != DKB_CAND_I32 || lprice->scale != 2 || ldisc->scale != 2 ||
        res->ncols != 2 || res->cols[0].type != DKB_CAND_RES_STRING ||
        res->cols[1].type != DKB_CAND_RES_DECIMAL || res->cols[1].scale < 4)
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
    int64_t maxc, maxs;
    int8_t *c_nat = nation_of(ckey, cnat, in_region, &maxc);
    int8_t *s_nat = nation_of(skey, snat, in_region, &maxs);
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t no = okey->n, nl = lkey->n;
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    __int128 *sums = calloc((size_t)nchunks * MAXNAT, sizeof(__int128));
    int64_t *hits = calloc((size_t)nchunks * MAXNAT, sizeof(int64_t));
    if (!c_nat || !s_nat || !sums || !hits) {
        free(c_nat), free(s_nat), free(sums), free(hits);
        return DKB_CAND_ENOMEM;
    }

    const int32_t lo_day = (int32_t)date->i;
    const uint32_t width = (uint32_t)(dkb_add_years(date->i, 1) - date->i);
    const int32_t *ok = okey->data, *oc = ocust->data, *od = odate->data;
    const int32_t *lk = lkey->data, *lsu = lsupp->data;
    const int64_t *lp = lprice->data, *ld = ldisc->data;

#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(no >= PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t o0 = c * no / nchunks, o1 = (c + 1) * no / nchunks; /* this chunk's orders */
        if (o0 >= o1) continue;
        int64_t j = dkb_lower_bound_i32(lk, nl, ok[o0]); /* and their line items [j, jend) */
        const int64_t jend = o1 < no ? dkb_lower_bound_i32(lk, nl, ok[o1]) : nl;
        const int64_t per = ((jend - j) << 8) / (o1 - o0); /* items per order, x 256 */
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
                if (x + AHEAD < ns) { /* where a later order's items probably start */
                    const int64_t est = j + (((int64_t)(sel[x + AHEAD] - sel[x]) * per) >> 8);
                    if (est < jend) {
                        __builtin_prefetch(&lk[est]);
                        __builtin_prefetch(&lsu[est]);
                        __builtin_prefetch(&lp[est]);
                        __builtin_prefetch(&ld[est]);
                    }
                }
                const int64_t o = b + sel[x];
                const int32_t k = ok[o];
                const int cn = c_nat[oc[o]];
                j = dkb_gallop_i32(lk, j, jend, k);
                int64_t s = 0, h = 0;
                for (; j < jend && lk[j] == k; j++) {
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

    /* per nation present; order by revenue desc */
    typedef struct { __int128 rev; int nation; } group;
    group g[MAXNAT];
    int ng = 0;
    for (int n = 0; n < MAXNAT; n++) {
        __int128 s = 0;
        int64_t h = 0;
        for (int64_t c = 0; c < nchunks; c++) s += sums[c * MAXNAT + n], h += hits[c * MAXNAT + n];
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
    dkb_cand_res_col *c_name = &res->cols[0], *c_rev = &res->cols[1];
    for (int r = 0; r < ng; r++) {
        if (dkb_put_dict(c_name, r, nname->dict, name_of[g[r].nation])) return DKB_CAND_ECAP;
        dkb_put_dec(c_rev, r, g[r].rev, 4);
    }
    res->nrows = ng;
    return 0;
}
