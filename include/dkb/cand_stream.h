/* cand_stream.h: an optional candidate helper (header-only, like
 * cand_util.h) for full-mode candidates under a memory budget: visit rows
 * of the streamed tables' columns run by run, the same code with or
 * without a budget.
 *
 *   static const char *const COLS[] = {"l_shipdate", "l_discount"};
 *   dkb_stream st;
 *   for (dkb_stream_begin(&st, db, env, 2, COLS); dkb_stream_next(&st);) {
 *       const int32_t *ship = st.cols[0].data;   // st.cols[i]: COLS[i]
 *       ... rows [0, st.cols[0].n), the first at st.row_start ...
 *   }
 *   int rc = dkb_stream_end(&st);
 *
 * runs the loop's body with st.cols[i] the vector of COLS[i]: once, over
 * the whole columns of db, when nothing streams (no budget, the query fits
 * it, or none of the columns is of a streamed table); else once per load
 * of consecutive partitions, as many per load as load_limit allows, each
 * released by the next dkb_stream_next (so the body must not keep pointers
 * into st.cols). The body is the caller's code, reading its own locals:
 * no context struct to fill and unpack (take st.cols[i].data into locals
 * before a hot loop, as above: st's address is taken, so loads through it
 * are not hoisted past the loop's stores). The columns are all of streamed
 * tables (one, or both co-partitioned ones) or all of tables kept whole.
 * st.row_start is the pass's first row in the first column's table (0
 * when whole). A candidate using it defines DKB_CANDIDATE_STREAMS itself
 * (candidate.h).
 *
 * dkb_stream_begin returns 0, or DKB_CAND_EINVAL (a column missing, more
 * than DKB_STREAM_MAXCOLS; the loop then does not run). dkb_stream_next
 * returns 1 when st.cols holds the next pass, 0 when done or when the
 * loader failed. A body may leave the loop early (break: its own error);
 * dkb_stream_end releases what is still held and returns the first error
 * of the walk: 0, DKB_CAND_EINVAL, or the loader's (DKB_CAND_ENOMEM: one
 * partition of these columns is over load_limit).
 *
 * Overlap (for CUDA, where the body only enqueues kernels):
 * dkb_stream_begin_ex(&st, db, env, 2, COLS, DKB_STREAM_OVERLAP) sizes each
 * load to at most half of load_limit and loads the next run before it
 * releases the current one, so the next run's copy overlaps the current
 * run's kernels (candidate.h, "On CUDA"); a partition over half of
 * load_limit is loaded alone, after the current run is released. The body
 * still must not keep pointers into st.cols past its pass.
 *
 * The same with a callback: dkb_stream_rows(db, env, 2, COLS, visit, &acc)
 * calls visit(&acc, cols, row_start) for each pass and returns 0, visit's
 * first nonzero return (the walk then stops), or dkb_stream_end's error. */
#ifndef DKB_CAND_STREAM_H
#define DKB_CAND_STREAM_H

#include <string.h>

#include "dkb/candidate.h"

#define DKB_STREAM_MAXCOLS 32
#define DKB_STREAM_OVERLAP 1 /* dkb_stream_begin_ex flag: hold the next load while the current one computes */

/* A walk over the passes of some columns (dkb_stream_begin fills it). */
typedef struct dkb_stream {
    const dkb_cand_vec *cols; /* this pass's columns, in the order asked for */
    int64_t row_start;        /* this pass's first row in the first column's table */
    int rc;                   /* the walk's first error, or 0 */
    /* the walk's own */
    const dkb_cand_env *env;
    const dkb_cand_budget *b; /* NULL when nothing streams */
    const char *const *names;
    int ncols, first, second, held, passes, overlap;
    dkb_cand_load load;
    dkb_cand_vec whole[DKB_STREAM_MAXCOLS];
} dkb_stream;

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

static inline int dkb_stream_begin_ex(dkb_stream *st, const dkb_cand_db *db, const dkb_cand_env *env, int ncols,
                                      const char *const *names, int flags) {
    memset(st, 0, sizeof *st);
    st->env = env, st->names = names, st->ncols = ncols, st->overlap = (flags & DKB_STREAM_OVERLAP) != 0;
    if (ncols < 1 || ncols > DKB_STREAM_MAXCOLS) return st->rc = DKB_CAND_EINVAL;
    int streamed = 0, t0 = -1;
    for (int i = 0; i < ncols; i++) {
        int t = -1;
        const dkb_cand_vec *v = dkb_stream_find(db, names[i], &t);
        if (!v) return st->rc = DKB_CAND_EINVAL;
        st->whole[i] = *v;
        streamed |= dkb_stream_is_streamed(db, env->budget, t);
        if (i == 0) t0 = t;
    }
    if (streamed) {
        st->b = env->budget;
        st->second = st->b->nstreamed > 1 && strcmp(st->b->streamed[1], db->tables[t0].name) == 0;
    }
    return DKB_CAND_OK;
}

static inline int dkb_stream_begin(dkb_stream *st, const dkb_cand_db *db, const dkb_cand_env *env, int ncols,
                                   const char *const *names) {
    return dkb_stream_begin_ex(st, db, env, ncols, names, 0);
}

/* Release the load held (if any): 0, or the loader's error (kept in st->rc). */
static inline int dkb_stream_release(dkb_stream *st) {
    if (!st->held) return 0;
    st->held = 0;
    const int rr = st->b->release(st->env, &st->load);
    if (rr && !st->rc) st->rc = rr;
    return rr;
}

static inline int dkb_stream_next(dkb_stream *st) {
    if (st->rc || (!st->overlap && dkb_stream_release(st))) return 0;
    if (!st->b) { /* whole: one pass */
        st->cols = st->whole, st->row_start = 0;
        return st->passes++ == 0;
    }
    const dkb_cand_budget *b = st->b;
    if (st->first >= b->nparts) {
        dkb_stream_release(st);
        return 0;
    }
    /* as many consecutive partitions as fit the cap (at least one): load_limit,
     * or half of it when overlapping, unless one partition is over the half */
    int64_t cap = st->overlap ? b->load_limit / 2 : b->load_limit;
    /* ... and never past what the run still held leaves (it may be a large one, loaded alone) */
    if (st->overlap && st->held && b->load_limit - st->load.bytes < cap) cap = b->load_limit - st->load.bytes;
    if (st->overlap && b->load_size(st->env, st->first, 1, st->ncols, st->names) > cap) {
        cap = b->load_limit;
        if (dkb_stream_release(st)) return 0;
    }
    int count = 1;
    while (st->first + count < b->nparts) {
        const int64_t need = b->load_size(st->env, st->first, count + 1, st->ncols, st->names);
        if (need < 0 || need > cap) break;
        count++;
    }
    dkb_cand_load next;
    const int rc = b->load(st->env, st->first, count, st->ncols, st->names, &next);
    if (rc) {
        st->rc = rc;
        return 0;
    }
    if (dkb_stream_release(st)) { /* overlap: the current run, after the next one is on its way */
        b->release(st->env, &next);
        return 0;
    }
    st->load = next;
    st->held = 1, st->passes++, st->first += count;
    st->cols = st->load.cols, st->row_start = st->load.row_start[st->second];
    return 1;
}

static inline int dkb_stream_end(dkb_stream *st) {
    dkb_stream_release(st);
    return st->rc;
}

static inline int dkb_stream_rows(const dkb_cand_db *db, const dkb_cand_env *env, int ncols,
                                  const char *const *names, dkb_stream_visit visit, void *ctx) {
    dkb_stream st;
    int rc = 0;
    for (dkb_stream_begin(&st, db, env, ncols, names); !rc && dkb_stream_next(&st);)
        rc = visit(ctx, st.cols, st.row_start);
    const int end = dkb_stream_end(&st);
    return rc ? rc : end;
}

#endif
