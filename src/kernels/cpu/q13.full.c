/* q13.full.c: expert CPU candidate for TPC-H Q13 (Customer Distribution).
 *
 *   select c_count, count(*) as custdist
 *   from (select c_custkey, count(o_orderkey)
 *         from customer left outer join orders
 *              on c_custkey = o_custkey and o_comment not like '%:word1%:word2%'
 *         group by c_custkey) as c_orders (c_custkey, c_count)
 *   group by c_count order by custdist desc, c_count desc;
 *
 * Plan: the orders are cut into chunks the threads take as they come; each
 * chunk's comments are scanned as one byte range for word1 (dkb_find_row:
 * AVX2 test of word1's first, second and last bytes at 32 positions, then
 * memcmp, each hit mapped to its row); only a row holding word1 is searched for
 * word2 after that first word1 (the leftmost word1 leaves the most room,
 * so this is exactly LIKE '%w1%w2%'). Every other row adds 1 to its customer's count
 * in the thread's array indexed by custkey - 1 (customer keys are dense
 * 1..N). The threads' arrays are summed per customer (customers without a
 * row count 0: the outer join) into a histogram over counts, which is
 * ordered by (custdist desc, c_count desc) with a sort of its few rows.
 * Integer counts: exact.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders is split (customer whole on
 * every rank) and a customer's orders are on several ranks, so each rank
 * counts its orders per customer, the per-customer counts (and the error
 * flag) are summed over the ranks in one all-reduce of int64 over the dense
 * custkeys, and rank 0 makes the histogram of the totals.
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_find, dkb_find_row */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

typedef struct {
    int64_t count, dist;
} hist_row;

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

static int by_dist_desc(const void *a, const void *b) {
    const hist_row *x = a, *y = b;
    if (x->dist != y->dist) return x->dist > y->dist ? -1 : 1;
    return x->count > y->count ? -1 : x->count < y->count;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_table *customer = dkb_cand_table_find(db, "customer");
    const dkb_cand_vec *ocust, *ocomment;
    const dkb_cand_param *pw1, *pw2;
    dkb_cand_res_col *c_count, *c_dist;
    if (DKB_BIND_COLS(db, "orders", "o_custkey:i32 o_comment:str", &ocust, &ocomment) ||
        DKB_BIND_PARAMS(params, "word1:str word2:str", &pw1, &pw2) ||
        DKB_BIND_RES(res, "c_count:int custdist:int", &c_count, &c_dist) || !customer)
        return DKB_CAND_EINVAL;

    const int64_t ncust = customer->rows, n = ocust->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = n * 8 < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const char *w1 = pw1->s, *w2 = pw2->s;
    const size_t l1 = strlen(w1), l2 = strlen(w2);
    int32_t *cnt = calloc((size_t)nt * (size_t)(ncust > 0 ? ncust : 1), sizeof(int32_t));
    if (!cnt) return DKB_CAND_ENOMEM;
    /* the whole columns, or under a memory budget orders load by load: per
     * customer, its orders whose comment does not hold word1 ... word2 */
    static const char *const COLS[] = {"o_custkey", "o_comment"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 2, COLS); dkb_stream_next(&st);) {
        const int64_t nrow = st.cols[0].n;
        /* this load's rows decide the team (at most the nt there are counts for) */
        const int team = nrow * 8 < PAR_MIN ? 1 : nt;
        const int64_t nchunks = team == 1 ? 1 : (int64_t)team * 16;
        const int32_t *ck = st.cols[0].data;
        const dkb_cand_vec *text = &st.cols[1];
        const int64_t *off = text->data;
        const char *base = text->bytes;

#pragma omp parallel for num_threads(team) schedule(dynamic, 1) reduction(| : bad)
        for (int64_t c = 0; c < nchunks; c++) {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            int32_t *mine = cnt + (size_t)tid * (size_t)ncust;
            const int64_t r1 = nrow * (c + 1) / nchunks;
            int64_t row = nrow * c / nchunks, hit, pos = 0;
            /* every row counts for its customer but those holding word2 after their first word1 */
            for (; row < r1; row++) {
                hit = dkb_find_row(text, row, r1, w1, l1, &pos);
                for (; row < hit; row++) {
                    const uint32_t cu = (uint32_t)ck[row] - 1u;
                    if (cu < (uint64_t)ncust) mine[cu]++;
                    else bad = 1;
                }
                if (row == r1 || dkb_find(base + pos + (int64_t)l1, base + off[row + 1], w2, l2)) continue;
                const uint32_t cu = (uint32_t)ck[row] - 1u;
                if (cu < (uint64_t)ncust) mine[cu]++;
                else bad = 1;
            }
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) { free(cnt); return rc; }

    /* per customer: its total count; the histogram over totals */
    int32_t maxc = 0;
#pragma omp parallel for num_threads(ncust < PAR_MIN ? 1 : nt) schedule(static) reduction(max : maxc)
    for (int64_t c = 0; c < ncust; c++) {
        int32_t s = 0;
        for (int t = 0; t < nt; t++) s += cnt[(size_t)t * (size_t)ncust + (size_t)c];
        cnt[c] = s;
        if (s > maxc) maxc = s;
    }
    if (dkb_ranks_many(env)) { /* the ranks' counts per customer, summed */
        int64_t *w = malloc(((size_t)ncust + 1) * sizeof(int64_t));
        if (!w) { free(cnt); return DKB_CAND_ENOMEM; }
        for (int64_t c = 0; c < ncust; c++) w[c] = cnt[c];
        w[ncust] = bad;
        const int mrc = dkb_ranks_sum_i64(env, w, ncust + 1);
        bad = w[ncust] != 0, maxc = 0;
        for (int64_t c = 0; c < ncust; c++) cnt[c] = (int32_t)w[c], maxc = cnt[c] > maxc ? cnt[c] : maxc;
        free(w);
        if (mrc || !dkb_ranks_writes(env, res)) { free(cnt); return mrc ? mrc : bad ? DKB_CAND_EINTERNAL : 0; }
    }
    if (bad) { free(cnt); return DKB_CAND_EINTERNAL; }
    int64_t *hist = calloc((size_t)maxc + 1, sizeof(int64_t));
    hist_row *rows = malloc(((size_t)maxc + 1) * sizeof(hist_row));
    if (!hist || !rows) { free(cnt); free(hist); free(rows); return DKB_CAND_ENOMEM; }
    for (int64_t c = 0; c < ncust; c++) hist[cnt[c]]++;
    int64_t nr = 0;
    for (int32_t k = 0; k <= maxc; k++)
        if (hist[k]) rows[nr++] = (hist_row){k, hist[k]};
    qsort(rows, (size_t)nr, sizeof(hist_row), by_dist_desc);
    free(cnt);
    free(hist);
    if (nr > res->cap) { free(rows); return DKB_CAND_ECAP; }
    for (int64_t r = 0; r < nr; r++) {
        c_count->i64[r] = rows[r].count;
        c_dist->i64[r] = rows[r].dist;
        c_count->is_null[r] = c_dist->is_null[r] = 0;
    }
    free(rows);
    res->nrows = nr;
    return 0;
}
