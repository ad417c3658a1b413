/* q21.full.c: expert CPU candidate for TPC-H Q21 (Suppliers Who Kept Orders
 * Waiting).
 *
 *   select s_name, count(*) as numwait
 *   from supplier, lineitem l1, orders, nation
 *   where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
 *     and l1.l_receiptdate > l1.l_commitdate
 *     and exists (select * from lineitem l2
 *                 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
 *     and not exists (select * from lineitem l3
 *                     where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
 *                       and l3.l_receiptdate > l3.l_commitdate)
 *     and s_nationkey = n_nationkey and n_name = ':nation'
 *   group by s_name order by numwait desc, s_name limit 100;
 *
 * Plan: a partition-local merge of orders and lineitem (lineitem is grouped
 * by orderkey in the order of orders, both ascending): each thread takes a
 * range of orders, finds its first line by binary search, and walks each
 * order's few lines once. For an F order it notes whether the order has a
 * second supplier (EXISTS) and the supplier of its late lines, or that they
 * have two (NOT EXISTS fails for every late line then). When the order has
 * two suppliers and all its late lines share one supplier of the nation
 * (a slot array over suppkey - 1; supplier keys are dense 1..N), that
 * supplier's count grows by the number of those late lines (each is an l1
 * row). Counts are per thread per nation supplier, merged, then sorted by
 * (numwait desc, s_name) and cut to 100. Integer counts: exact. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_lower_bound_i32, dkb_put_strcol, dkb_res_col */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

typedef struct {
    int64_t supp; /* row in supplier */
    int64_t count;
} wait_row;

static const dkb_cand_vec *g_names; /* for the sort's comparison only (set, used and done in one call) */

static int by_count_then_name(const void *a, const void *b) {
    const wait_row *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    const int64_t *off = g_names->data;
    const int64_t lx = off[x->supp + 1] - off[x->supp], ly = off[y->supp + 1] - off[y->supp];
    const int c = memcmp(g_names->bytes + off[x->supp], g_names->bytes + off[y->supp], (size_t)(lx < ly ? lx : ly));
    if (c) return c;
    return (lx > ly) - (lx < ly);
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lsupp = dkb_cand_column(db, "lineitem", "l_suppkey");
    const dkb_cand_vec *lcommit = dkb_cand_column(db, "lineitem", "l_commitdate");
    const dkb_cand_vec *lreceipt = dkb_cand_column(db, "lineitem", "l_receiptdate");
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *ostatus = dkb_cand_column(db, "orders", "o_orderstatus");
    const dkb_cand_vec *skey = dkb_cand_column(db, "supplier", "s_suppkey");
    const dkb_cand_vec *sname = dkb_cand_column(db, "supplier", "s_name");
    const dkb_cand_vec *snation = dkb_cand_column(db, "supplier", "s_nationkey");
    const dkb_cand_vec *nkey = dkb_cand_column(db, "nation", "n_nationkey");
    const dkb_cand_vec *nname = dkb_cand_column(db, "nation", "n_name");
    const dkb_cand_param *pnation = dkb_cand_param_find(params, "nation");
    if (!lkey || !lsupp || !lcommit || !lreceipt || !okey || !ostatus || !skey || !sname || !snation || !nkey ||
        !nname || !pnation || !pnation->s)
        return DKB_CAND_EINVAL;
    if (lkey->type != DKB_CAND_I32 || lsupp->type != DKB_CAND_I32 || lcommit->type != DKB_CAND_I32 ||
        lreceipt->type != DKB_CAND_I32 || okey->type != DKB_CAND_I32 || ostatus->type != DKB_CAND_U8 ||
        !ostatus->dict || skey->type != DKB_CAND_I32 || sname->type != DKB_CAND_STR ||
        snation->type != DKB_CAND_I32 || nkey->type != DKB_CAND_I32 || nname->type != DKB_CAND_U8 || !nname->dict)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_name = dkb_res_col(res, "s_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_wait = dkb_res_col(res, "numwait", DKB_CAND_RES_INT);
    if (!c_name || !c_wait) return DKB_CAND_EINVAL;
    res->nrows = 0;

    const int ncode = dkb_cand_dict_code(nname->dict, pnation->s);
    const int fcode = dkb_cand_dict_code(ostatus->dict, "F");
    int64_t nation = -1;
    for (int64_t r = 0; ncode >= 0 && r < nname->n; r++)
        if (((const uint8_t *)nname->data)[r] == ncode) nation = ((const int32_t *)nkey->data)[r];
    if (nation < 0 || fcode < 0) return 0;

    /* the nation's suppliers: a dense slot per supplier row */
    const int64_t ns = skey->n, nl = lkey->n, no = okey->n;
    const int32_t *sn = snation->data, *sk = skey->data;
    int32_t *slot = malloc((size_t)(ns + 1) * sizeof(int32_t));
    int64_t *slot_supp = malloc((size_t)(ns + 1) * sizeof(int64_t));
    if (!slot || !slot_supp) { free(slot); free(slot_supp); return DKB_CAND_ENOMEM; }
    int32_t nslots = 0;
    int bad = 0;
    for (int64_t s = 0; s < ns; s++) {
        if (sk[s] != s + 1) bad = 1;
        slot[s] = sn[s] == nation ? nslots : -1;
        if (sn[s] == nation) slot_supp[nslots++] = s;
    }
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = nl < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    int64_t *counts = calloc((size_t)nt * (size_t)(nslots + 1), sizeof(int64_t));
    if (!counts) bad = 1;
    const int32_t *lk = lkey->data, *ls = lsupp->data, *cd = lcommit->data, *rd = lreceipt->data, *ok = okey->data;
    const uint8_t *st = ostatus->data, f = (uint8_t)fcode;

    if (!bad && nslots > 0) {
#pragma omp parallel num_threads(nt) reduction(| : bad)
        {
            int tid = 0, tn = 1;
#ifdef _OPENMP
            tid = omp_get_thread_num();
            tn = omp_get_num_threads();
#endif
            int64_t *cnt = counts + (size_t)tid * (size_t)(nslots + 1);
            const int64_t o0 = no * tid / tn, o1 = no * (tid + 1) / tn;
            int64_t j = o0 < o1 ? dkb_lower_bound_i32(lk, nl, ok[o0]) : nl;
            for (int64_t o = o0; o < o1; o++) {
                const int32_t key = ok[o];
                while (j < nl && lk[j] < key) j++;
                if (st[o] != f) {
                    while (j < nl && lk[j] == key) j++;
                    continue;
                }
                const int64_t a = j;
                if (a >= nl || lk[a] != key) continue;
                const int32_t first = ls[a];
                int multi = 0, late_multi = 0;
                int32_t late = -1, nlate = 0;
                for (; j < nl && lk[j] == key; j++) {
                    const int32_t s = ls[j];
                    multi |= s != first;
                    if (rd[j] > cd[j]) {
                        if (late < 0) late = s;
                        else late_multi |= s != late;
                        nlate++;
                    }
                }
                if (!multi || late < 0 || late_multi) continue;
                const uint32_t si = (uint32_t)late - 1u;
                if (si >= (uint64_t)ns) { bad = 1; continue; }
                if (slot[si] >= 0) cnt[slot[si]] += nlate;
            }
        }
    }
    wait_row *rows = malloc((size_t)(nslots + 1) * sizeof(wait_row));
    int64_t m = 0;
    if (!rows) bad = 1;
    for (int32_t k = 0; !bad && k < nslots; k++) {
        int64_t c = 0;
        for (int t = 0; t < nt; t++) c += counts[(size_t)t * (size_t)(nslots + 1) + (size_t)k];
        if (c > 0) rows[m++] = (wait_row){slot_supp[k], c};
    }
    free(slot);
    free(slot_supp);
    free(counts);
    if (bad) { free(rows); return DKB_CAND_EINTERNAL; }
    g_names = sname;
    qsort(rows, (size_t)m, sizeof(wait_row), by_count_then_name);
    g_names = NULL;
    const int64_t nout = m < 100 ? m : 100;
    if (nout > res->cap) { free(rows); return DKB_CAND_ECAP; }
    for (int64_t r = 0; r < nout; r++) {
        if (dkb_put_strcol(c_name, r, sname, rows[r].supp)) { free(rows); return DKB_CAND_ECAP; }
        c_wait->i64[r] = rows[r].count;
        c_wait->is_null[r] = 0;
    }
    free(rows);
    res->nrows = nout;
    return 0;
}
