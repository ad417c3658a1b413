/* wrong_answer (core mode, Q1): "l_shipdate <= ship_hi" written as <, so the
 * last day's rows are left out; otherwise a correct single-pass Q1 core.
 * Expected: wrong_answer. */
#include <stdlib.h>

#include "dkb/candidate.h"


int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)env;
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *flag = dkb_cand_vec_find(in, "l_returnflag");
    const dkb_cand_vec *status = dkb_cand_vec_find(in, "l_linestatus");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *tax = dkb_cand_vec_find(in, "l_tax");
    const dkb_cand_scalar *ship_hi = dkb_cand_scalar_find(in, "ship_hi");
    static const char *const names[10] = {"l_returnflag", "l_linestatus", "sum_qty", "sum_base_price",
                                          "sum_disc_price", "sum_charge", "avg_qty", "avg_price",
                                          "avg_disc", "count_order"};
    dkb_cand_vec *o[10];
    for (int c = 0; c < 10; c++)
        if (!(o[c] = dkb_cand_vec_find(out, names[c]))) return 1;
    if (!ship || !flag || !status || !qty || !price || !disc || !tax || !ship_hi) return 1;

    /* sums per (flag, status) code pair: 256 x 256 slots */
    struct group { int64_t count, qty, price, disc; __int128 disc_price, charge; };
    struct group *g = calloc(256 * 256, sizeof *g);
    if (!g) return 1;
    const int32_t *s = ship->data;
    const uint8_t *f = flag->data, *st = status->data;
    const int64_t *q = qty->data, *p = price->data, *d = disc->data, *t = tax->data;
    for (int64_t i = 0; i < ship->n; i++) {
        if (!(s[i] < ship_hi->i)) continue;       /* bug: the SQL says <= */
        struct group *a = &g[f[i] * 256 + st[i]];
        const __int128 dp = (__int128)p[i] * (100 - d[i]);
        a->count++;
        a->qty += q[i];
        a->price += p[i];
        a->disc += d[i];
        a->disc_price += dp;
        a->charge += dp * (100 + t[i]);
    }
    int64_t r = 0;
    for (int k = 0; k < 256 * 256; k++) {
        const struct group *a = &g[k];
        if (!a->count) continue;
        if (r >= o[0]->cap) break;
        ((uint8_t *)o[0]->data)[r] = (uint8_t)(k / 256);
        ((uint8_t *)o[1]->data)[r] = (uint8_t)(k % 256);
        ((__int128 *)o[2]->data)[r] = a->qty;
        ((__int128 *)o[3]->data)[r] = a->price;
        ((__int128 *)o[4]->data)[r] = a->disc_price;
        ((__int128 *)o[5]->data)[r] = a->charge;
        ((double *)o[6]->data)[r] = (double)a->qty / 100.0 / (double)a->count;
        ((double *)o[7]->data)[r] = (double)a->price / 100.0 / (double)a->count;
        ((double *)o[8]->data)[r] = (double)a->disc / 100.0 / (double)a->count;
        ((int64_t *)o[9]->data)[r] = a->count;
        r++;
    }
    for (int c = 0; c < 10; c++) o[c]->n = r;
    free(g);
    return 0;
}
