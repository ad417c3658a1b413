/* q06.full.c (reads_released_descriptor): releases each partition, then
 * reads the load's descriptor once more (cur.cols[0].n: the descriptors sit
 * in the load's own pages, which the release made inaccessible) to steer
 * later work by it: the read faults, and the report names the partition.
 * Expected: crash. */
#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_add_years, dkb_rescale */

DKB_CANDIDATE_STREAMS;

/* The query's parameters in the columns' units. */
typedef struct q6p {
    int64_t slo, shi, dlo, dhi, qlt;
} q6p;

/* Add the qualifying rows of [s, d, q, p)[0, n) to *sum and *hits: branch
 * free, blocks of rows summed in int64, on `threads` threads. */
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
    __int128 sum = 0;
    int64_t hits = 0;
    const dkb_cand_budget *b = env->budget;
    if (!b || !b->nstreamed) {
        const dkb_cand_vec *c[4];
        for (int i = 0; i < 4; i++)
            if (!(c[i] = dkb_cand_column(db, "lineitem", COLS[i]))) return DKB_CAND_EINVAL;
        scan(c[0]->data, c[1]->data, c[2]->data, c[3]->data, c[0]->n, &w, env->threads, &sum, &hits);
    } else {
        /* two loads at once when they fit: the next is in before the current is released */
        int ahead = b->nparts > 1 && b->load_size(env, 0, 2, 4, COLS) <= b->load_limit;
        dkb_cand_load cur, next;
        int rc = b->load(env, 0, 1, 4, COLS, &cur);
        for (int part = 0; !rc && part < b->nparts; part++) {
            if (ahead && part + 1 < b->nparts && (rc = b->load(env, part + 1, 1, 4, COLS, &next))) break;
            scan(cur.cols[0].data, cur.cols[1].data, cur.cols[2].data, cur.cols[3].data, cur.cols[0].n, &w, env->threads,
                 &sum, &hits);
            if ((rc = b->release(env, &cur))) break;
            volatile int64_t again = cur.cols[0].n;   /* the descriptor, after the release */
            (void)again;
            if (part + 1 < b->nparts) {
                if (ahead) cur = next;
                else rc = b->load(env, part + 1, 1, 4, COLS, &cur);
            }
        }
        if (rc) return rc;
    }
    res->nrows = 1;
    res->cols[0].dec[0] = sum;
    res->cols[0].is_null[0] = hits == 0;
    return DKB_CAND_OK;
}
