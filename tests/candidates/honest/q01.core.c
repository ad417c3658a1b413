/* q01.core.c: an honest core-mode candidate for TPC-H Q1.
 *
 * The baseline's core filters, compresses six columns, builds a group key,
 * aggregates, divides and sorts, each step materialised. This candidate does
 * it in one pass over the rows: the group is the pair of dictionary codes
 * (flag * nstatus + status, a dense index: dictionaries hold at most 256
 * entries, these two hold 3 and 2), and each thread keeps its own sums per
 * group. Sums are exact: per-row products are int64 (scale 4; the charge is
 * scale 6), summed in int64 over a block of rows and the blocks in __int128.
 * Dictionary codes sort as their strings, so walking the groups in index
 * order gives ORDER BY l_returnflag, l_linestatus.
 *
 *   in:  l_shipdate I32; l_returnflag, l_linestatus U8 codes; l_quantity,
 *        l_extendedprice, l_discount, l_tax I64 hundredths; ship_hi (days,
 *        inclusive)
 *   out: one element per group present, in order: l_returnflag,
 *        l_linestatus U8; sum_qty, sum_base_price I128 scale 2;
 *        sum_disc_price I128 scale 4; sum_charge I128 scale 6; avg_qty,
 *        avg_price, avg_disc F64; count_order I64 */
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

enum { NOUT = 10 };
static const char *const OUT[NOUT] = {"l_returnflag", "l_linestatus", "sum_qty", "sum_base_price",
                                      "sum_disc_price", "sum_charge", "avg_qty", "avg_price",
                                      "avg_disc", "count_order"};
static const dkb_cand_type OUT_TYPE[NOUT] = {DKB_CAND_U8,   DKB_CAND_U8,   DKB_CAND_I128, DKB_CAND_I128,
                                             DKB_CAND_I128, DKB_CAND_I128, DKB_CAND_F64,  DKB_CAND_F64,
                                             DKB_CAND_F64,  DKB_CAND_I64};
static const int OUT_SCALE[NOUT] = {0, 0, 2, 2, 4, 6, -1, -1, -1, -1};  /* -1: not checked */

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *flag = dkb_cand_vec_find(in, "l_returnflag");
    const dkb_cand_vec *status = dkb_cand_vec_find(in, "l_linestatus");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *tax = dkb_cand_vec_find(in, "l_tax");
    const dkb_cand_scalar *ship_hi = dkb_cand_scalar_find(in, "ship_hi");
    if (!ship || !flag || !status || !qty || !price || !disc || !tax || !ship_hi) return 1;
    if (ship->type != DKB_CAND_I32 || flag->type != DKB_CAND_U8 || status->type != DKB_CAND_U8 ||
        qty->type != DKB_CAND_I64 || price->type != DKB_CAND_I64 || disc->type != DKB_CAND_I64 ||
        tax->type != DKB_CAND_I64 || qty->scale != 2 || price->scale != 2 || disc->scale != 2 ||
        tax->scale != 2)
        return 2;
    dkb_cand_vec *o[NOUT];
    for (int c = 0; c < NOUT; c++) {
        o[c] = dkb_cand_vec_find(out, OUT[c]);
        if (!o[c] || o[c]->type != OUT_TYPE[c] || (OUT_SCALE[c] >= 0 && o[c]->scale != OUT_SCALE[c]))
            return 3;
    }

    /* dense groups: flag code * nstatus + status code (codes are < 256) */
    const int nf = flag->dict ? flag->dict->size : 256, ns = status->dict ? status->dict->size : 256;
    const int ngroups = nf * ns;
    const int nthreads = env->threads > 0 ? env->threads : 1;
    acc *part = calloc((size_t)nthreads * ngroups, sizeof(acc));
    if (!part) return 4;

    const int32_t *s = ship->data;
    const uint8_t *f = flag->data, *st = status->data;
    const int64_t *q = qty->data, *p = price->data, *d = disc->data, *t = tax->data;
    const int64_t n = ship->n, hi_day = ship_hi->i, nblocks = (n + BLOCK - 1) / BLOCK;
    int bad = 0;

#pragma omp parallel num_threads(nthreads) reduction(| : bad)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        acc *mine = part + (size_t)tid * ngroups;
        block_acc *blk = calloc((size_t)ngroups, sizeof(block_acc));
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
    if (bad) {
        free(part);
        return 5;
    }

    /* merge the threads' sums; emit the groups present in code order */
    int64_t rows = 0;
    for (int g = 0; g < ngroups; g++) {
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
        if (rows >= o[0]->cap) {
            free(part);
            return 6;
        }
        ((uint8_t *)o[0]->data)[rows] = (uint8_t)(g / ns);
        ((uint8_t *)o[1]->data)[rows] = (uint8_t)(g % ns);
        ((__int128 *)o[2]->data)[rows] = a.qty;
        ((__int128 *)o[3]->data)[rows] = a.price;
        ((__int128 *)o[4]->data)[rows] = a.disc_price;
        ((__int128 *)o[5]->data)[rows] = a.charge;
        /* avg = sum / count, the sum as a decimal value first (as SQL's avg) */
        ((double *)o[6]->data)[rows] = (double)a.qty / 100.0 / (double)a.count;
        ((double *)o[7]->data)[rows] = (double)a.price / 100.0 / (double)a.count;
        ((double *)o[8]->data)[rows] = (double)a.disc / 100.0 / (double)a.count;
        ((int64_t *)o[9]->data)[rows] = a.count;
        rows++;
    }
    for (int c = 0; c < NOUT; c++) o[c]->n = rows;
    free(part);
    return 0;
}
