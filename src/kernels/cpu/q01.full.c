/* q01.full.c: expert CPU candidate for TPC-H Q1 (Pricing Summary Report).
 *
 *   select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
 *          sum(l_extendedprice * (1 - l_discount)),
 *          sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
 *          avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
 *   from lineitem where l_shipdate <= date '1998-12-01' - interval ':delta' day
 *   group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus;
 *
 * Plan: one fused filter-aggregate pass over lineitem. The group is the pair
 * of dictionary codes (flag * nstatus + status, a dense index: at most 256 x
 * 256 but 3 x 2 in TPC-H); each thread sums a block of 2048 rows into int64
 * accumulators (scale-6 charge per row < 2^37, so a block cannot overflow)
 * and folds the block into its own __int128 totals; the threads' totals are
 * merged in thread order. Sums are exact; averages are the exact sums divided
 * once at the end (as SQL's avg of a decimal). Groups come out in code order,
 * which is string order because dictionaries are sorted. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_days_from_civil, dkb_put_dec, dkb_put_dict, dkb_res_col */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { BLOCK = 2048 };

typedef struct {
    int64_t count, qty, price, disc, disc_price, charge;
} block_sums;

typedef struct {
    int64_t count;
    __int128 qty, price, disc, disc_price, charge;
} totals;

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *flag = dkb_cand_column(db, "lineitem", "l_returnflag");
    const dkb_cand_vec *status = dkb_cand_column(db, "lineitem", "l_linestatus");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *tax = dkb_cand_column(db, "lineitem", "l_tax");
    const dkb_cand_param *delta = dkb_cand_param_find(params, "delta");
    if (!ship || !flag || !status || !qty || !price || !disc || !tax || !delta) return DKB_CAND_EINVAL;
    if (ship->type != DKB_CAND_I32 || flag->type != DKB_CAND_U8 || status->type != DKB_CAND_U8 || !flag->dict ||
        !status->dict || qty->scale != 2 || price->scale != 2 || disc->scale != 2 || tax->scale != 2)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_flag = dkb_res_col(res, "l_returnflag", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_status = dkb_res_col(res, "l_linestatus", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_qty = dkb_res_col(res, "sum_qty", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_price = dkb_res_col(res, "sum_base_price", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_dprice = dkb_res_col(res, "sum_disc_price", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_charge = dkb_res_col(res, "sum_charge", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_aqty = dkb_res_col(res, "avg_qty", DKB_CAND_RES_FLOAT);
    dkb_cand_res_col *c_aprice = dkb_res_col(res, "avg_price", DKB_CAND_RES_FLOAT);
    dkb_cand_res_col *c_adisc = dkb_res_col(res, "avg_disc", DKB_CAND_RES_FLOAT);
    dkb_cand_res_col *c_count = dkb_res_col(res, "count_order", DKB_CAND_RES_INT);
    if (!c_flag || !c_status || !c_qty || !c_price || !c_dprice || !c_charge || !c_aqty || !c_aprice ||
        !c_adisc || !c_count || c_qty->scale < 2 || c_price->scale < 2 || c_dprice->scale < 4 ||
        c_charge->scale < 6)
        return DKB_CAND_EINVAL;

    const int32_t hi_day = (int32_t)(dkb_days_from_civil(1998, 12, 1) - delta->i);
    const int nf = flag->dict->size, ns = status->dict->size, ng = nf * ns;
    const int nt = env->threads > 0 ? env->threads : 1;
    totals *part = calloc((size_t)nt * (size_t)ng + 1, sizeof(totals));
    if (!part) return DKB_CAND_ENOMEM;

    const int32_t *s = ship->data;
    const uint8_t *f = flag->data, *st = status->data;
    const int64_t *q = qty->data, *p = price->data, *d = disc->data, *t = tax->data;
    const int64_t n = ship->n, nblocks = (n + BLOCK - 1) / BLOCK;
    int bad = 0;

#pragma omp parallel num_threads(nt) reduction(| : bad) if(n >= PAR_MIN)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        totals *mine = part + (size_t)tid * (size_t)ng;
        block_sums blk[256 * 2];
        block_sums *b = ng <= 512 ? blk : calloc((size_t)ng, sizeof(block_sums));
        if (!b) bad = 1;
        else memset(b, 0, sizeof(block_sums) * (size_t)ng);
#pragma omp for schedule(static)
        for (int64_t k = 0; k < nblocks; k++) {
            if (!b) continue;
            const int64_t lo = k * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
            for (int64_t i = lo; i < hi; i++) {
                if (s[i] > hi_day) continue;
                const unsigned fi = f[i], si = st[i];
                if (fi >= (unsigned)nf || si >= (unsigned)ns) { bad = 1; continue; }
                block_sums *a = &b[fi * (unsigned)ns + si];
                const int64_t dp = p[i] * (100 - d[i]);
                a->count++;
                a->qty += q[i];
                a->price += p[i];
                a->disc += d[i];
                a->disc_price += dp;
                a->charge += dp * (100 + t[i]);
            }
            for (int g = 0; g < ng; g++) {
                if (!b[g].count) continue;
                mine[g].count += b[g].count;
                mine[g].qty += b[g].qty;
                mine[g].price += b[g].price;
                mine[g].disc += b[g].disc;
                mine[g].disc_price += b[g].disc_price;
                mine[g].charge += b[g].charge;
                b[g] = (block_sums){0};
            }
        }
        if (b != blk) free(b);
    }

    int64_t r = 0;
    for (int g = 0; g < ng && !bad; g++) {
        totals a = {0};
        for (int k = 0; k < nt; k++) {
            const totals *x = &part[(size_t)k * (size_t)ng + (size_t)g];
            a.count += x->count;
            a.qty += x->qty;
            a.price += x->price;
            a.disc += x->disc;
            a.disc_price += x->disc_price;
            a.charge += x->charge;
        }
        if (!a.count) continue;
        const int fc = g / ns, sc = g % ns;
        if (r >= res->cap ||
            dkb_put_dict(c_flag, r, flag->dict, fc) ||
            dkb_put_dict(c_status, r, status->dict, sc)) {
            bad = 1;
            break;
        }
        dkb_put_dec(c_qty, r, a.qty, 2);
        dkb_put_dec(c_price, r, a.price, 2);
        dkb_put_dec(c_dprice, r, a.disc_price, 4);
        dkb_put_dec(c_charge, r, a.charge, 6);
        c_aqty->f64[r] = (double)a.qty / 100.0 / (double)a.count;
        c_aprice->f64[r] = (double)a.price / 100.0 / (double)a.count;
        c_adisc->f64[r] = (double)a.disc / 100.0 / (double)a.count;
        c_count->i64[r] = a.count;
        c_aqty->is_null[r] = c_aprice->is_null[r] = c_adisc->is_null[r] = c_count->is_null[r] = 0;
        r++;
    }
    free(part);
    if (bad) return DKB_CAND_EINTERNAL;
    res->nrows = r;
    return 0;
}
