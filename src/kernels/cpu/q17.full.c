/* q17.full.c: expert CPU candidate for TPC-H Q17 (Small-Quantity-Order
 * Revenue).
 *
 *   select sum(l_extendedprice) / 7.0 as avg_yearly
 *   from lineitem, part
 *   where p_partkey = l_partkey and p_brand = ':brand' and p_container = ':container'
 *     and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey);
 *
 * Plan: the parts of the brand and container (two dictionary codes, about
 * 1 in 1000) become a bitmap over partkey - 1 (part keys are dense 1..N)
 * with a rank per 64-bit word, so a part's dense slot is rank + popcount.
 * One parallel pass over l_partkey tests the bit; the few lines that pass
 * are kept per thread (slot, quantity, price). Per slot the exact quantity
 * sum and count give the average as the baseline computes it (long double
 * quotient rounded once to double, times 0.2 as a double; the quantity as a
 * double), so the "<" decides the same way; the prices of the small lines
 * are summed exactly in __int128 and divided by 7.0 once. No line: NULL.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): lineitem is split but part is not
 * split with it (part is whole on every rank), so a part's lines, whose
 * average the subquery needs, are on every rank. No shuffle: the per-part
 * work is over the few qualifying parts only, so each rank sums its lines'
 * quantities and counts per slot, the slots' sums and counts (and the error
 * flag) are summed over the ranks in one all-reduce of int64, every rank
 * then tests its own lines against the merged averages, and the small lines'
 * exact price sums and counts are summed in a second all-reduce; rank 0
 * writes.
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

typedef struct {
    int32_t slot;
    int64_t qty, price;
} hit;

typedef struct {
    hit *h;
    int64_t n, cap;
} hit_list;

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

static int push(hit_list *l, hit x) {
    if (l->n == l->cap) {
        const int64_t cap = l->cap ? 2 * l->cap : 1024;
        hit *h = realloc(l->h, (size_t)cap * sizeof(hit));
        if (!h) return 0;
        l->h = h, l->cap = cap;
    }
    l->h[l->n++] = x;
    return 1;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *pkey, *pbrand, *pcont, *lpart, *lqty, *lprice;
    const dkb_cand_param *pb, *pc;
    dkb_cand_res_col *out;
    if (DKB_BIND_COLS(db, "part", "p_partkey:i32 p_brand:dict p_container:dict", &pkey, &pbrand, &pcont) ||
        DKB_BIND_COLS(db, "lineitem", "l_partkey:i32 l_quantity:dec2 l_extendedprice:dec2", &lpart, &lqty, &lprice) ||
        DKB_BIND_PARAMS(params, "brand:str container:str", &pb, &pc) || DKB_BIND_RES(res, "avg_yearly:float", &out) ||
        res->cap < 1)
        return DKB_CAND_EINVAL;
    res->nrows = 1;
    out->f64[0] = 0;
    out->is_null[0] = 1;
    const int bc = dkb_cand_dict_code(pbrand->dict, pb->s), cc = dkb_cand_dict_code(pcont->dict, pc->s);
    if (bc < 0 || cc < 0) return 0; /* no part qualifies: sum over no rows */

    const int64_t np = pkey->n, nwords = (np + 63) / 64, n = lpart->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = n < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    uint64_t *bits = malloc((size_t)(nwords + 1) * sizeof(uint64_t));
    int32_t *rank = malloc((size_t)(nwords + 1) * sizeof(int32_t));
    hit_list *lists = calloc((size_t)nt, sizeof(hit_list));
    if (!bits || !rank || !lists) { free(bits); free(rank); free(lists); return DKB_CAND_ENOMEM; }
    const uint8_t *br = pbrand->data, *co = pcont->data;
    const int32_t *keys = pkey->data;
    int bad = 0;

    /* the parts' bitmap over partkey - 1, word by word */
#pragma omp parallel for num_threads(np < PAR_MIN ? 1 : nt) schedule(static) reduction(| : bad)
    for (int64_t w = 0; w < nwords; w++) {
        uint64_t m = 0;
        const int64_t hi = (w + 1) * 64 < np ? (w + 1) * 64 : np;
        for (int64_t r = w * 64; r < hi; r++) {
            if ((br[r] == bc) & (co[r] == cc)) {
                if (keys[r] != r + 1) bad = 1; /* keys are dense 1..N in row order */
                m |= 1ull << (r - w * 64);
            }
        }
        bits[w] = m;
    }
    int32_t nsel = 0;
    for (int64_t w = 0; w < nwords; w++) rank[w] = nsel, nsel += __builtin_popcountll(bits[w]);

    if (!bad && nsel > 0) {
        /* the whole columns, or under a memory budget lineitem load by load:
         * the lines whose part qualifies, in the threads' lists */
        static const char *const COLS[] = {"l_partkey", "l_quantity", "l_extendedprice"};
        dkb_stream st;
        for (dkb_stream_begin(&st, db, env, 3, COLS); dkb_stream_next(&st);) {
            const int32_t *lp = st.cols[0].data;
            const int64_t *lq = st.cols[1].data, *lpr = st.cols[2].data;
            const int64_t nrow = st.cols[0].n;
            /* this load's rows decide the team (at most the nt there are lists for) */
            const int team = nrow < PAR_MIN ? 1 : nt;
#pragma omp parallel num_threads(team) reduction(| : bad)
            {
                int tid = 0;
#ifdef _OPENMP
                tid = omp_get_thread_num();
#endif
                hit_list *mine = &lists[tid];
#pragma omp for schedule(static)
                for (int64_t i = 0; i < nrow; i++) {
                    const uint64_t p = (uint64_t)((uint32_t)lp[i] - 1u);
                    if (p >= (uint64_t)np || !((bits[p >> 6] >> (p & 63)) & 1)) continue;
                    const int32_t slot = rank[p >> 6] + __builtin_popcountll(bits[p >> 6] & ((1ull << (p & 63)) - 1));
                    if (!push(mine, (hit){slot, lq[i], lpr[i]})) bad = 1;
                }
            }
        }
        const int rc = dkb_stream_end(&st);
        if (rc) {
            for (int t = 0; t < nt; t++) free(lists[t].h);
            free(lists);
            free(bits);
            free(rank);
            return rc;
        }
    }
    /* per slot: quantity sums [0, nsel], counts [nsel + 1, 2 nsel + 1], the error flag */
    int64_t *qs = calloc((size_t)nsel * 2 + 3, sizeof(int64_t)), *qsum = qs, *qcnt = qs ? qs + nsel + 1 : NULL;
    double *limit = malloc(((size_t)nsel + 1) * sizeof(double));
    if (!qs || !limit) bad = 1;
    __int128 lost = 0;
    int64_t nlost = 0;
    if (qs) {
        for (int t = 0; !bad && t < nt; t++)
            for (int64_t k = 0; k < lists[t].n; k++) {
                qsum[lists[t].h[k].slot] += lists[t].h[k].qty;
                qcnt[lists[t].h[k].slot]++;
            }
        qs[2 * nsel + 2] = bad;
        const int mrc = dkb_ranks_sum_i64(env, qs, (int64_t)nsel * 2 + 3); /* every rank's lines of each part */
        if (mrc) {
            for (int t = 0; t < nt; t++) free(lists[t].h);
            free(lists), free(bits), free(rank), free(qs), free(limit);
            return mrc;
        }
        bad = qs[2 * nsel + 2] != 0;
    }
    if (!bad) {
        /* 0.2 * avg(l_quantity), as the baseline: exact avg rounded once, times 0.2 */
        const double fifth = (double)2 / (double)10;
        for (int32_t s = 0; s < nsel; s++)
            limit[s] = qcnt[s] ? (double)((long double)qsum[s] / ((long double)qcnt[s] * (long double)100)) * fifth
                               : 0;
        for (int t = 0; t < nt; t++)
            for (int64_t k = 0; k < lists[t].n; k++) {
                const hit *h = &lists[t].h[k];
                if ((double)h->qty / (double)100 < limit[h->slot]) lost += h->price, nlost++;
            }
    }
    for (int t = 0; t < nt; t++) free(lists[t].h);
    free(lists);
    free(bits);
    free(rank);
    free(qs);
    free(limit);
    {
        int64_t c2[2] = {nlost, bad};
        const int mrc = dkb_ranks_sum_mixed(env, c2, 2, &lost, 1);
        if (mrc) return mrc;
        nlost = c2[0], bad = (int)c2[1];
    }
    if (bad) return DKB_CAND_EINTERNAL;
    if (!dkb_ranks_writes(env, res)) return 0;
    if (nlost > 0) {
        out->f64[0] = ((double)lost / (double)100) / ((double)70 / (double)10);
        out->is_null[0] = 0;
    }
    return 0;
}
