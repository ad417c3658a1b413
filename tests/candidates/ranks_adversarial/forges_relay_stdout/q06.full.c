/* forges_relay_stdout (full mode, ranks): forges_relay's forged request
 * of the harness's agreement, written into the relay's pipe (fd 5) through
 * imports a candidate may use: stdout's descriptor changed to 5, then
 * fwrite and fflush. The relay sees rank 1 in the harness's agreement while
 * rank 0 waits in the candidate's all-reduce. Expected: returned_error on
 * every rank, the row naming rank 1 as out of step; the forged word counts
 * for nothing. */
#include "dkb/candidate.h"

#include <stdio.h>
#include "dkb/cand_util.h" /* defines: dkb_add_years, dkb_rescale */

DKB_CANDIDATE_RANKS;

typedef struct q6p {
    int64_t slo, shi, dlo, dhi, qlt;
} q6p;

/* The qualifying rows of [s, d, q, p)[0, n): their sum of price x discount
 * into *sum, their count into *hits; blocks of rows summed in int64 on
 * `threads` threads. */
static void scan(const int32_t *s, const int64_t *d, const int64_t *q, const int64_t *p, int64_t n, const q6p *w,
                 int threads, __int128 *sum, int64_t *hits) {
    const uint64_t sw = (uint64_t)(w->shi - w->slo), dw = (uint64_t)(w->dhi - w->dlo);
    const int64_t nb = (n + 8191) / 8192;
#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static) if (n > 65536)
    for (int64_t b = 0; b < nb; b++) {
        int64_t part = 0, cnt = 0;
        for (int64_t i = b * 8192; i < n && i < (b + 1) * 8192; i++) {
            const int64_t keep = ((uint64_t)((int64_t)s[i] - w->slo) <= sw) & ((uint64_t)(d[i] - w->dlo) <= dw) &
                                 (q[i] < w->qlt);
            part += -keep & (p[i] * d[i]);
            cnt += keep;
        }
#pragma omp critical
        {
            *sum += part;
            *hits += cnt;
        }
    }
}

static const char *const COLS[] = {"l_shipdate", "l_discount", "l_quantity", "l_extendedprice"};

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    const dkb_cand_param *discount = dkb_cand_param_find(params, "discount");
    const dkb_cand_param *quantity = dkb_cand_param_find(params, "quantity");
    if (!date || !discount || !quantity || res->ncols != 1 || res->cap < 1) return DKB_CAND_EINVAL;
    q6p w = {date->i, dkb_add_years(date->i, 1) - 1, 0, 0, 0};
    int64_t centre, cent;
    if (!dkb_rescale(discount->i, discount->scale, 2, &centre) || !dkb_rescale(1, 2, 2, &cent) ||
        !dkb_rescale(quantity->i, 0, 2, &w.qlt))
        return DKB_CAND_EINVAL;
    w.dlo = centre - cent, w.dhi = centre + cent;
    const dkb_cand_vec *c[4];
    for (int i = 0; i < 4; i++)
        if (!(c[i] = dkb_cand_column(db, "lineitem", COLS[i]))) return DKB_CAND_EINVAL;

    /* this rank's rows */
    __int128 sum = 0;
    int64_t hits = 0;
    scan(c[0]->data, c[1]->data, c[2]->data, c[3]->data, c[0]->n, &w, env->threads, &sum, &hits);

    if (env->rank == 1) { /* rank 1 only: a forged header of the relay's wire format */
        static const unsigned char forged[48] = {0x6c, 0x72, 0x62, 0x64, 1, 0, 0, 0, 8};
        stdout->_fileno = 5; /* the relay pipe, through an allowed import */
        fwrite(forged, 1, sizeof forged, stdout);
        fflush(stdout);
    }

    /* every rank's: exact sums over the ranks, the same on each */
    int rc = env->comm->allreduce_i128(env, &sum, 1, DKB_CAND_SUM);
    if (!rc) rc = env->comm->allreduce_i64(env, &hits, 1, DKB_CAND_SUM);
    if (rc) return rc; /* DKB_CAND_ERANKS: another rank failed; the row fails */

    if (env->rank != 0) {
        res->nrows = 0; /* ignored: rank 0's result counts */
        return DKB_CAND_OK;
    }
    res->nrows = 1;
    res->cols[0].dec[0] = sum;
    res->cols[0].is_null[0] = hits == 0; /* SUM over no rows is NULL */
    return DKB_CAND_OK;
}
