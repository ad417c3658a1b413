/* q13.full.c: expert CPU candidate for TPC-H Q13 (Customer Distribution).
 *
 *   select c_count, count(*) as custdist
 *   from (select c_custkey, count(o_orderkey)
 *         from customer left outer join orders
 *              on c_custkey = o_custkey and o_comment not like '%:word1%:word2%'
 *         group by c_custkey) as c_orders (c_custkey, c_count)
 *   group by c_count order by custdist desc, c_count desc;
 *
 * Plan: each thread takes a contiguous range of orders and scans its
 * comments as one byte range for word1 (AVX2 test of word1's first, second
 * and last bytes at 32 positions, then memcmp), mapping each hit to its row
 * by walking the offsets forward; only a row holding word1 is searched for
 * word2 after that first word1 (the leftmost word1 leaves the most room,
 * so this is exactly LIKE '%w1%w2%'). Every other row adds 1 to its customer's count
 * in the thread's array indexed by custkey - 1 (customer keys are dense
 * 1..N). The threads' arrays are summed per customer (customers without a
 * row count 0: the outer join) into a histogram over counts, which is
 * ordered by (custdist desc, c_count desc) with a sort of its few rows.
 * Integer counts: exact. */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_find, dkb_res_col */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

typedef struct {
    int64_t count, dist;
} hist_row;

static int by_dist_desc(const void *a, const void *b) {
    const hist_row *x = a, *y = b;
    if (x->dist != y->dist) return x->dist > y->dist ? -1 : 1;
    return x->count > y->count ? -1 : x->count < y->count;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_table *customer = dkb_cand_table_find(db, "customer");
    const dkb_cand_vec *ocust = dkb_cand_column(db, "orders", "o_custkey");
    const dkb_cand_vec *ocomment = dkb_cand_column(db, "orders", "o_comment");
    const dkb_cand_param *pw1 = dkb_cand_param_find(params, "word1");
    const dkb_cand_param *pw2 = dkb_cand_param_find(params, "word2");
    if (!customer || !ocust || !ocomment || !pw1 || !pw2 || !pw1->s || !pw2->s) return DKB_CAND_EINVAL;
    if (ocust->type != DKB_CAND_I32 || ocomment->type != DKB_CAND_STR) return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_count = dkb_res_col(res, "c_count", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_dist = dkb_res_col(res, "custdist", DKB_CAND_RES_INT);
    if (!c_count || !c_dist) return DKB_CAND_EINVAL;

    const int64_t ncust = customer->rows, n = ocust->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = n * 8 < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const int32_t *ck = ocust->data;
    const int64_t *off = ocomment->data;
    const char *base = ocomment->bytes;
    const char *w1 = pw1->s, *w2 = pw2->s;
    const size_t l1 = strlen(w1), l2 = strlen(w2);
    int32_t *cnt = calloc((size_t)nt * (size_t)(ncust > 0 ? ncust : 1), sizeof(int32_t));
    if (!cnt) return DKB_CAND_ENOMEM;
    int bad = 0;

#pragma omp parallel num_threads(nt) reduction(| : bad)
    {
        int tid = 0, tn = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        tn = omp_get_num_threads();
#endif
        int32_t *mine = cnt + (size_t)tid * (size_t)ncust;
        const int64_t r0 = n * tid / tn, r1 = n * (tid + 1) / tn;
        int64_t row = r0;
#define COUNT_ROW(r)                                                   \
    do {                                                               \
        const uint32_t c = (uint32_t)ck[r] - 1u;                       \
        if (c < (uint64_t)ncust) mine[c]++;                            \
        else bad = 1;                                                  \
    } while (0)
        const char *p = base + off[r0], *end = base + off[r1];
        const char *x;
        while (row < r1 && (x = dkb_find(p, end, w1, l1)) != NULL) {
            const int64_t pos = x - base;
            while (off[row + 1] <= pos) { COUNT_ROW(row); row++; }
            const int64_t rend = off[row + 1];
            const int special = pos + (int64_t)l1 <= rend &&
                                dkb_find(base + pos + (int64_t)l1, base + rend, w2, l2) != NULL;
            if (!special) COUNT_ROW(row);
            row++;
            p = base + off[row];
        }
        for (; row < r1; row++) COUNT_ROW(row);
#undef COUNT_ROW
    }
    if (bad) { free(cnt); return DKB_CAND_EINTERNAL; }

    /* per customer: its total count; the histogram over totals */
    int32_t maxc = 0;
#pragma omp parallel for num_threads(ncust < PAR_MIN ? 1 : nt) schedule(static) reduction(max : maxc)
    for (int64_t c = 0; c < ncust; c++) {
        int32_t s = 0;
        for (int t = 0; t < nt; t++) s += cnt[(size_t)t * (size_t)ncust + (size_t)c];
        cnt[c] = s;
        if (s > maxc) maxc = s;
    }
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
