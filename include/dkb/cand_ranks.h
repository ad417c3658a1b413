/* cand_ranks.h: an optional candidate helper (header-only, like
 * cand_util.h) for full-mode candidates that run across ranks
 * (candidate.h, "ranks": DKB_CANDIDATE_RANKS, env->rank, env->nranks,
 * env->comm): merge every rank's partial answer into the whole one, the
 * same code on one rank and on K.
 *
 *   dense partials (sums, counts, minima, maxima over a small key domain):
 *     dkb_ranks_sum_i64 / _i128 / _f64 (buf, n), dkb_ranks_min_i64 /
 *     dkb_ranks_max_i64 (and _i128, _f64): buf[0, n) replaced, elementwise,
 *     by the op over the ranks' buffers, the same on every rank (integer
 *     sums exact; double sums in rank order, so deterministic; bit-equal to
 *     one rank's only when the rank sums are exact, so prefer exact integer
 *     partials converted once at the end);
 *   lists (group rows, top-k candidates: fixed-size records):
 *     dkb_ranks_gather (mine, n, size, &all, &total): every rank's records
 *     one after the other in rank order (which is partition order: shares
 *     are consecutive partitions), *all malloc'd, or `mine` itself on one
 *     rank (no copy); dkb_ranks_gather_free (all, mine) frees it;
 *     dkb_ranks_topk (rows, &n, k, size, before): the k best of every
 *     rank's rows[0, n) (each rank's k best), merged in rank order with
 *     dkb_topk_insert's order (before; ties keep rank order), back into
 *     rows (room for k) and *n, on every rank;
 *   the result: dkb_ranks_writes (env, res): 1 on rank 0 (it writes the
 *     merged answer), else 0 with res->nrows = 0 (the harness counts rank
 *     0's result only).
 *
 * On one rank (nranks == 1, every `dkb eval` without mpirun) each helper
 * returns at once without calling env->comm: no copy, no cost. Every helper
 * returns DKB_CAND_OK, or the collective's error (DKB_CAND_EINVAL,
 * DKB_CAND_ERANKS: return it from the entry point), or DKB_CAND_ENOMEM.
 * Every rank must call the same helpers in the same order with the same n
 * (the dense ones) as env->comm's collectives require; the list helpers
 * take each rank's own count. Cost: one collective per dense helper, two
 * per gather (the sizes, then the bytes); under `mpirun dkb eval` each is
 * relayed (about 1-2 ms on a small shared machine: docs/distributed.md),
 * so merge a query's partials in as few calls as it can (one array of
 * __int128 for sums and counts: dkb_ranks_sum_mixed). */
#ifndef DKB_CAND_RANKS_H
#define DKB_CAND_RANKS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_topk_insert */

/* More than one rank? */
static inline int dkb_ranks_many(const dkb_cand_env *env) { return env && env->nranks > 1 && env->comm; }

#define DKB__RANKS_DENSE(name, type, fn, op)                                             \
    static inline int name(const dkb_cand_env *env, type *buf, int64_t n) {              \
        if (!dkb_ranks_many(env) || n <= 0) return DKB_CAND_OK;                          \
        return env->comm->fn(env, buf, n, op);                                           \
    }
DKB__RANKS_DENSE(dkb_ranks_sum_i64, int64_t, allreduce_i64, DKB_CAND_SUM)
DKB__RANKS_DENSE(dkb_ranks_min_i64, int64_t, allreduce_i64, DKB_CAND_MIN)
DKB__RANKS_DENSE(dkb_ranks_max_i64, int64_t, allreduce_i64, DKB_CAND_MAX)
DKB__RANKS_DENSE(dkb_ranks_sum_i128, __int128, allreduce_i128, DKB_CAND_SUM)
DKB__RANKS_DENSE(dkb_ranks_min_i128, __int128, allreduce_i128, DKB_CAND_MIN)
DKB__RANKS_DENSE(dkb_ranks_max_i128, __int128, allreduce_i128, DKB_CAND_MAX)
DKB__RANKS_DENSE(dkb_ranks_sum_f64, double, allreduce_f64, DKB_CAND_SUM)
DKB__RANKS_DENSE(dkb_ranks_min_f64, double, allreduce_f64, DKB_CAND_MIN)
DKB__RANKS_DENSE(dkb_ranks_max_f64, double, allreduce_f64, DKB_CAND_MAX)
#undef DKB__RANKS_DENSE

/* The sum over the ranks of n int64 values, exact, through one __int128
 * all-reduce together with m __int128 values (one collective for counts
 * and sums of a partial): buf64[0, n) and buf128[0, m) replaced by the
 * sums. buf64's values are widened and narrowed back (the caller knows
 * its totals fit int64). */
static inline int dkb_ranks_sum_mixed(const dkb_cand_env *env, int64_t *buf64, int64_t n, __int128 *buf128,
                                      int64_t m) {
    if (!dkb_ranks_many(env) || n + m <= 0) return DKB_CAND_OK;
    __int128 *t = (__int128 *)malloc((size_t)(n + m) * sizeof *t);
    if (!t) return DKB_CAND_ENOMEM;
    for (int64_t i = 0; i < n; i++) t[i] = buf64[i];
    if (m) memcpy(t + n, buf128, (size_t)m * sizeof *t);
    const int rc = env->comm->allreduce_i128(env, t, n + m, DKB_CAND_SUM);
    if (!rc) {
        for (int64_t i = 0; i < n; i++) buf64[i] = (int64_t)t[i];
        if (m) memcpy(buf128, t + n, (size_t)m * sizeof *t);
    }
    free(t);
    return rc;
}

/* Every rank's records (n of `size` bytes each from this rank) in rank
 * order: *all (malloc'd; `mine` itself on one rank), *total of them.
 * *all is NULL (and *total 0) on an error. */
static inline int dkb_ranks_gather(const dkb_cand_env *env, const void *mine, int64_t n, size_t size, void **all,
                                   int64_t *total) {
    *all = NULL, *total = 0;
    if (!dkb_ranks_many(env)) {
        *all = (void *)mine, *total = n;
        return DKB_CAND_OK;
    }
    const int K = env->nranks;
    int64_t *counts = (int64_t *)malloc((size_t)K * sizeof *counts);
    if (!counts) return DKB_CAND_ENOMEM;
    int rc = env->comm->allgather_sizes(env, n * (int64_t)size, counts);
    int64_t bytes = 0;
    for (int r = 0; !rc && r < K; r++) bytes += counts[r];
    char *buf = NULL;
    /* a rank without room returns DKB_CAND_ENOMEM before the gather: the
     * others' gather then fails (DKB_CAND_ERANKS) and so does the row, with
     * two collectives per gather rather than three */
    if (!rc && !(buf = (char *)malloc((size_t)bytes + 1))) rc = DKB_CAND_ENOMEM;
    if (!rc) rc = env->comm->allgatherv(env, mine, n * (int64_t)size, buf, counts);
    free(counts);
    if (rc) {
        free(buf);
        return rc;
    }
    *all = buf, *total = bytes / (int64_t)(size ? size : 1);
    return DKB_CAND_OK;
}

/* Free what dkb_ranks_gather gave (nothing when it is `mine`). */
static inline void dkb_ranks_gather_free(void *all, const void *mine) {
    if (all && all != mine) free(all);
}

/* The k best of every rank's rows[0, *n) (sorted by `before`, at most k:
 * e.g. each rank's dkb_topk_insert array) into rows[0, *n) on every rank,
 * rows holding room for k. Ties keep rank order. */
static inline int dkb_ranks_topk(const dkb_cand_env *env, void *rows, int *n, int k, size_t size,
                                 int (*before)(const void *, const void *)) {
    if (!dkb_ranks_many(env)) return DKB_CAND_OK;
    void *all;
    int64_t total;
    const int rc = dkb_ranks_gather(env, rows, *n, size, &all, &total);
    if (rc) return rc;
    *n = 0;
    for (int64_t i = 0; i < total; i++) dkb_topk_insert(rows, n, k, (const char *)all + (size_t)i * size, size, before);
    dkb_ranks_gather_free(all, rows);
    return DKB_CAND_OK;
}

/* 1 when this rank writes the result (rank 0); else 0, and the result is
 * set empty (ignored by the harness). */
static inline int dkb_ranks_writes(const dkb_cand_env *env, dkb_cand_result *res) {
    if (!env || env->rank == 0) return 1;
    res->nrows = 0;
    return 0;
}

#endif
