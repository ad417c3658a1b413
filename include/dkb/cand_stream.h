/* cand_stream.h: an optional candidate helper (header-only, like
 * cand_util.h) for full-mode candidates under a memory budget: visit rows
 * of the streamed tables' columns run by run, the same code with or
 * without a budget.
 *
 *   static const char *const COLS[] = {"l_shipdate", "l_discount"};
 *   int rc = dkb_stream_rows(db, env, 2, COLS, visit, &acc);
 *
 * calls visit(&acc, cols, row_start) with cols[i] the vector of COLS[i]:
 * once, over the whole columns of db, when nothing streams (no budget, the
 * query fits it, or none of the columns is of a streamed table); else once
 * per load of consecutive partitions, as many per load as load_limit
 * allows, each released after its visit (so a visit must not keep
 * pointers into cols). The columns are all of streamed tables (one, or
 * both co-partitioned ones) or all of tables kept whole. row_start is the load's first row in the first
 * column's table (0 when whole). A candidate using it defines
 * DKB_CANDIDATE_STREAMS itself (candidate.h). Returns 0, visit's first
 * nonzero return, DKB_CAND_EINVAL (a column missing, more than
 * DKB_STREAM_MAXCOLS), or the loader's error (DKB_CAND_ENOMEM: one
 * partition of these columns is over load_limit). */
#ifndef DKB_CAND_STREAM_H
#define DKB_CAND_STREAM_H

#include "dkb/candidate.h"

#define DKB_STREAM_MAXCOLS 32

typedef int (*dkb_stream_visit)(void *ctx, const dkb_cand_vec *cols, int64_t row_start);

/* The vector of column `name` in any table of db, or NULL (TPC-H column
 * names are unique across tables). */
static inline const dkb_cand_vec *dkb_stream_find(const dkb_cand_db *db, const char *name, int *table) {
    for (int t = 0; t < db->ntables; t++)
        for (int c = 0; c < db->tables[t].ncols; c++)
            if (strcmp(db->tables[t].cols[c].name, name) == 0) {
                if (table) *table = t;
                return &db->tables[t].cols[c];
            }
    return NULL;
}

/* Is table t of db one the budget streams? */
static inline int dkb_stream_is_streamed(const dkb_cand_db *db, const dkb_cand_budget *b, int t) {
    for (int s = 0; b && s < b->nstreamed; s++)
        if (strcmp(b->streamed[s], db->tables[t].name) == 0) return 1;
    return 0;
}

static inline int dkb_stream_rows(const dkb_cand_db *db, const dkb_cand_env *env, int ncols,
                                  const char *const *names, dkb_stream_visit visit, void *ctx) {
    if (ncols < 1 || ncols > DKB_STREAM_MAXCOLS) return DKB_CAND_EINVAL;
    const dkb_cand_budget *b = env->budget;
    dkb_cand_vec whole[DKB_STREAM_MAXCOLS];
    int streamed = 0;
    for (int i = 0; i < ncols; i++) {
        int t = -1;
        const dkb_cand_vec *v = dkb_stream_find(db, names[i], &t);
        if (!v) return DKB_CAND_EINVAL;
        whole[i] = *v;
        streamed |= dkb_stream_is_streamed(db, b, t);
    }
    if (!streamed) return visit(ctx, whole, 0);
    int first = 0;
    while (first < b->nparts) {
        /* as many consecutive partitions as fit load_limit (at least one) */
        int count = 1;
        while (first + count < b->nparts) {
            int64_t need = b->load_size(env, first, count + 1, ncols, names);
            if (need < 0 || need > b->load_limit) break;
            count++;
        }
        dkb_cand_load l;
        int rc = b->load(env, first, count, ncols, names, &l);
        if (rc) return rc;
        int t = -1;
        (void)dkb_stream_find(db, names[0], &t);
        int s = b->nstreamed > 1 && strcmp(b->streamed[1], db->tables[t].name) == 0;
        rc = visit(ctx, l.cols, l.row_start[s]);
        int rr = b->release(env, &l);
        if (rc) return rc;
        if (rr) return rr;
        first += count;
    }
    return DKB_CAND_OK;
}

#endif
