/* q01.full.c: an honest full-mode candidate for TPC-H Q1.
 *
 *   select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
 *          sum(l_extendedprice * (1 - l_discount)),
 *          sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
 *          avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
 *   from lineitem
 *   where l_shipdate <= date '1998-12-01' - interval ':delta' day
 *   group by l_returnflag, l_linestatus
 *   order by l_returnflag, l_linestatus;
 *
 * One pass over lineitem: the group is the pair of dictionary codes (a dense
 * index flag * nstatus + status), each thread keeps its own exact sums per
 * group (int64 per block of rows, __int128 across blocks), and the groups
 * present are written in code order, which is string order (dictionaries
 * are sorted). The result columns are found by name and filled at the
 * scales the harness declared; the strings come from the dictionaries. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"

enum { BLOCK = 1 << 12 };  /* rows summed in int64 before going to __int128 */

typedef struct {
    int64_t count, qty, price, disc;  /* count and scale-2 sums fit int64 at any SF */
    __int128 disc_price, charge;      /* scale 4 and 6 */
} acc;

typedef struct {
    int64_t count, qty, price, disc, disc_price, charge;  /* one block's sums */
} block_acc;

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static dkb_cand_res_col *column(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

/* Append dictionary entry `code` as row r of a string column (str_off[0]
 * set to 0 first); 0 if it does not fit. */
static int put_str(dkb_cand_res_col *col, int64_t r, const dkb_cand_dict *dict, int code) {
    const int64_t at = col->str_off[r];
    const int64_t len = (int64_t)dict->len[code];
    if (at + len > col->bytes_cap) return 0;
    memcpy(col->str_bytes + at, dict->str[code], (size_t)len);
    col->str_off[r + 1] = at + len;
    return 1;
}

/* A sum at scale `from` as a decimal cell at the column's scale (>= from). */
static void put_dec(dkb_cand_res_col *col, int64_t r, __int128 v, int from) {
    for (; from < col->scale; from++) v *= 10;
    col->dec[r] = v;
    col->is_null[r] = 0;
}

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
    if (!ship || !flag || !status || !qty || !price || !disc || !tax || !delta) return 1;
    if (ship->type != DKB_CAND_I32 || flag->type != DKB_CAND_U8 || status->type != DKB_CAND_U8 ||
        !flag->dict || !status->dict || qty->type != DKB_CAND_I64 || price->type != DKB_CAND_I64 ||
        disc->type != DKB_CAND_I64 || tax->type != DKB_CAND_I64 || qty->scale != 2 || price->scale != 2 ||
        disc->scale != 2 || tax->scale != 2)
        return 2;
    dkb_cand_res_col *c_flag = column(res, "l_returnflag", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_status = column(res, "l_linestatus", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_sum_qty = column(res, "sum_qty", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_sum_price = column(res, "sum_base_price", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_sum_disc_price = column(res, "sum_disc_price", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_sum_charge = column(res, "sum_charge", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *c_avg_qty = column(res, "avg_qty", DKB_CAND_RES_FLOAT);
    dkb_cand_res_col *c_avg_price = column(res, "avg_price", DKB_CAND_RES_FLOAT);
    dkb_cand_res_col *c_avg_disc = column(res, "avg_disc", DKB_CAND_RES_FLOAT);
    dkb_cand_res_col *c_count = column(res, "count_order", DKB_CAND_RES_INT);
    if (!c_flag || !c_status || !c_sum_qty || !c_sum_price || !c_sum_disc_price || !c_sum_charge ||
        !c_avg_qty || !c_avg_price || !c_avg_disc || !c_count || c_sum_qty->scale < 2 ||
        c_sum_price->scale < 2 || c_sum_disc_price->scale < 4 || c_sum_charge->scale < 6)
        return 3;

    /* where l_shipdate <= 1998-12-01 - delta days */
    const int64_t hi_day = days_from_civil(1998, 12, 1) - delta->i;

    const int nf = flag->dict->size, ns = status->dict->size, ngroups = nf * ns;
    const int nthreads = env->threads > 0 ? env->threads : 1;
    acc *part = calloc((size_t)nthreads * ngroups + 1, sizeof(acc));
    if (!part) return 4;

    const int32_t *s = ship->data;
    const uint8_t *f = flag->data, *st = status->data;
    const int64_t *q = qty->data, *p = price->data, *d = disc->data, *t = tax->data;
    const int64_t n = ship->n, nblocks = (n + BLOCK - 1) / BLOCK;
    int bad = 0;

#pragma omp parallel num_threads(nthreads) reduction(| : bad)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        acc *mine = part + (size_t)tid * ngroups;
        block_acc *blk = calloc((size_t)ngroups + 1, sizeof(block_acc));
        if (!blk) bad = 1;
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nblocks; b++) {
            if (!blk) continue;
            const int64_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
            for (int64_t i = lo; i < hi; i++) {
                if (s[i] > hi_day) continue;
                if (f[i] >= nf || st[i] >= ns) { bad = 1; continue; }
                block_acc *a = &blk[f[i] * ns + st[i]];
                const int64_t dp = p[i] * (100 - d[i]);   /* scale 4 */
                a->count++;
                a->qty += q[i];
                a->price += p[i];
                a->disc += d[i];
                a->disc_price += dp;
                a->charge += dp * (100 + t[i]);            /* scale 6 */
            }
            for (int g = 0; g < ngroups; g++) {
                if (!blk[g].count) continue;
                mine[g].count += blk[g].count;
                mine[g].qty += blk[g].qty;
                mine[g].price += blk[g].price;
                mine[g].disc += blk[g].disc;
                mine[g].disc_price += blk[g].disc_price;
                mine[g].charge += blk[g].charge;
                blk[g] = (block_acc){0};
            }
        }
        free(blk);
    }

    /* merge the threads' sums; one row per group present, in code order */
    int64_t r = 0;
    c_flag->str_off[0] = c_status->str_off[0] = 0;
    for (int g = 0; g < ngroups && !bad; g++) {
        acc a = {0};
        for (int k = 0; k < nthreads; k++) {
            const acc *x = &part[(size_t)k * ngroups + g];
            a.count += x->count;
            a.qty += x->qty;
            a.price += x->price;
            a.disc += x->disc;
            a.disc_price += x->disc_price;
            a.charge += x->charge;
        }
        if (!a.count) continue;
        if (r >= res->cap || !put_str(c_flag, r, flag->dict, g / ns) ||
            !put_str(c_status, r, status->dict, g % ns)) {
            bad = 1;
            break;
        }
        c_flag->is_null[r] = c_status->is_null[r] = 0;
        put_dec(c_sum_qty, r, a.qty, 2);
        put_dec(c_sum_price, r, a.price, 2);
        put_dec(c_sum_disc_price, r, a.disc_price, 4);
        put_dec(c_sum_charge, r, a.charge, 6);
        /* avg = sum / count, the sum as a decimal value first (as SQL's avg) */
        c_avg_qty->f64[r] = (double)a.qty / 100.0 / (double)a.count;
        c_avg_price->f64[r] = (double)a.price / 100.0 / (double)a.count;
        c_avg_disc->f64[r] = (double)a.disc / 100.0 / (double)a.count;
        c_count->i64[r] = a.count;
        c_avg_qty->is_null[r] = c_avg_price->is_null[r] = c_avg_disc->is_null[r] = 0;
        c_count->is_null[r] = 0;
        r++;
    }
    free(part);
    if (bad) return 5;
    res->nrows = r;
    return 0;
}
