/* q01.full.c: expert CPU candidate for TPC-H Q1 (Pricing Summary Report).
 *
 *   select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
 *          sum(l_extendedprice * (1 - l_discount)),
 *          sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
 *          avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
 *   from lineitem where l_shipdate <= date '1998-12-01' - interval ':delta' day
 *   group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus;
 *
 * Plan: one fused filter-aggregate pass over lineitem in blocks of 512 rows
 * (the threads take runs of blocks as they come). A block first computes,
 * branch-free, each row's group (the pair of dictionary codes, flag *
 * nstatus + status, a dense index: 3 x 2 in TPC-H; -1 when the row fails
 * the date filter), its discounted price and its charge, and which groups
 * occur; then each occurring group's six sums are masked reductions over
 * the block, in L1 (vector code: no per-row scatter into accumulators).
 * Block sums are int64 (scale-6 charge per row < 2^37), folded into the
 * thread's __int128 totals; the threads' totals are merged at the end. Sums
 * are exact; averages are the exact sums divided once at the end (as SQL's
 * avg of a decimal). Groups come out in code order, which is string order
 * because dictionaries are sorted.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): each rank aggregates its share of
 * lineitem; the groups' exact sums and counts (6 x groups __int128) are
 * summed over the ranks in one all-reduce; rank 0 writes the rows. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_sum_i128, dkb_ranks_writes */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_days_from_civil, dkb_put_dec, dkb_put_dict */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

/* rows per block (its columns and scratch stay in L1); blocks a thread takes at once */
enum { BLOCK = 512, RUN = 16 };

typedef struct {
    int64_t count;
    __int128 qty, price, disc, disc_price, charge;
} totals;

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: each on its share of lineitem */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ship, *flag, *status, *qty, *price, *disc, *tax;
    const dkb_cand_param *delta;
    dkb_cand_res_col *c_flag, *c_status, *c_qty, *c_price, *c_dprice, *c_charge, *c_aqty, *c_aprice, *c_adisc,
        *c_count;
    if (DKB_BIND_COLS(db, "lineitem",
                      "l_shipdate:i32 l_returnflag:dict l_linestatus:dict l_quantity:dec2 l_extendedprice:dec2 "
                      "l_discount:dec2 l_tax:dec2",
                      &ship, &flag, &status, &qty, &price, &disc, &tax) ||
        DKB_BIND_PARAMS(params, "delta", &delta) ||
        DKB_BIND_RES(res,
                     "l_returnflag:str l_linestatus:str sum_qty:dec2 sum_base_price:dec2 sum_disc_price:dec4 "
                     "sum_charge:dec avg_qty:float avg_price:float avg_disc:float count_order:int",
                     &c_flag, &c_status, &c_qty, &c_price, &c_dprice, &c_charge, &c_aqty, &c_aprice, &c_adisc,
                     &c_count))
        return DKB_CAND_EINVAL;
    if (c_charge->scale < 6) return DKB_CAND_EINVAL;

    const int32_t hi_day = (int32_t)(dkb_days_from_civil(1998, 12, 1) - delta->i);
    const int nf = flag->dict->size, ns = status->dict->size, ng = nf * ns;
    const int nt = env->threads > 0 ? env->threads : 1;
    totals *part = calloc((size_t)nt * (size_t)ng + 1, sizeof(totals));
    if (!part) return DKB_CAND_ENOMEM;

    /* the whole columns, or under a memory budget lineitem load by load */
    static const char *const COLS[] = {"l_shipdate", "l_returnflag",    "l_linestatus", "l_quantity",
                                       "l_extendedprice", "l_discount", "l_tax"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 7, COLS); dkb_stream_next(&st);) {
        const int32_t *S = st.cols[0].data;
        const uint8_t *F = st.cols[1].data, *ST = st.cols[2].data;
        const int64_t *Q = st.cols[3].data, *P = st.cols[4].data, *D = st.cols[5].data, *T = st.cols[6].data;
        const int64_t n = st.cols[0].n, nblocks = (n + BLOCK - 1) / BLOCK;

#pragma omp parallel num_threads(nt) reduction(| : bad) if(n >= PAR_MIN)
        {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            totals *mine = part + (size_t)tid * (size_t)ng;
            int32_t grp[BLOCK];
            int64_t dp[BLOCK], ch[BLOCK];
#pragma omp for schedule(dynamic, RUN)
            for (int64_t k = 0; k < nblocks; k++) {
                const int64_t lo = k * BLOCK, len = lo + BLOCK < n ? BLOCK : n - lo;
                const int64_t *q = Q + lo, *p = P + lo, *d = D + lo;
                int odd = 0;
                for (int64_t i = 0; i < len; i++) { /* the row's group (-1: filtered out), price, charge */
                    const int fi = F[lo + i], si = ST[lo + i], keep = S[lo + i] <= hi_day;
                    odd |= keep & (fi >= nf || si >= ns);
                    grp[i] = keep ? fi * ns + si : -1;
                    dp[i] = p[i] * (100 - d[i]);
                    ch[i] = dp[i] * (100 + T[lo + i]);
                }
                uint64_t present = ng > 64 ? ~0ull : 0; /* which groups occur (all, past 64) */
                if (ng <= 64)
                    for (int64_t i = 0; i < len; i++) present |= (uint64_t)(grp[i] >= 0) << (grp[i] & 63);
                bad |= odd;
                for (int g = 0; g < ng && !odd; g++) {
                    if (g < 64 && !(present >> g & 1)) continue;
                    int64_t cnt = 0, sq = 0, sp = 0, sd = 0, sdp = 0, sch = 0;
                    for (int64_t i = 0; i < len; i++) { /* masked sums: vector code */
                        const int64_t m = -(int64_t)(grp[i] == g);
                        cnt -= m;
                        sq += q[i] & m;
                        sp += p[i] & m;
                        sd += d[i] & m;
                        sdp += dp[i] & m;
                        sch += ch[i] & m;
                    }
                    mine[g].count += cnt;
                    mine[g].qty += sq;
                    mine[g].price += sp;
                    mine[g].disc += sd;
                    mine[g].disc_price += sdp;
                    mine[g].charge += sch;
                }
            }
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) {
        free(part);
        return rc;
    }

    /* the threads' totals, then the ranks': 6 exact sums per group */
    __int128 *sum = calloc((size_t)ng * 6 + 1, sizeof *sum);
    if (!sum) {
        free(part);
        return DKB_CAND_ENOMEM;
    }
    for (int g = 0; g < ng; g++)
        for (int k = 0; k < nt; k++) {
            const totals *x = &part[(size_t)k * (size_t)ng + (size_t)g];
            __int128 *a = sum + (size_t)g * 6;
            a[0] += x->count, a[1] += x->qty, a[2] += x->price, a[3] += x->disc, a[4] += x->disc_price,
                a[5] += x->charge;
        }
    const int mrc = dkb_ranks_sum_i128(env, sum, (int64_t)ng * 6);
    if (mrc || !dkb_ranks_writes(env, res)) {
        free(sum);
        free(part);
        return mrc;
    }
    int64_t r = 0;
    for (int g = 0; g < ng && !bad; g++) {
        const __int128 *x = sum + (size_t)g * 6;
        totals a = {(int64_t)x[0], x[1], x[2], x[3], x[4], x[5]};
        if (!a.count) continue;
        if (r >= res->cap || dkb_put_dict(c_flag, r, flag->dict, g / ns) ||
            dkb_put_dict(c_status, r, status->dict, g % ns)) {
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
    free(sum);
    free(part);
    if (bad) return DKB_CAND_EINTERNAL;
    res->nrows = r;
    return 0;
}
