/* q06.full.c: env->comm's collectives refuse bad arguments with
 * DKB_CAND_EINVAL (candidate.h, "ranks") and exchange nothing: a negative
 * count, a NULL buffer, an unknown op, a gather whose counts do not match.
 * Every refusal is checked; the last code is returned, so the row is
 * returned_error "returned 1 (DKB_CAND_EINVAL ...)" when all were refused
 * (and returned 5 when one was not). The good calls in between must work
 * (a one-rank gather hands back the rank's own bytes). */
#include "dkb/candidate.h"

DKB_CANDIDATE_RANKS;

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)db, (void)params, (void)res;
    const dkb_cand_comm *c = env->comm;
    int64_t v[2] = {3, 4}, sizes[1] = {0};
    double f = 1.5;
    __int128 x = 7;
    if (env->nranks != 1 || env->rank != 0) return DKB_CAND_EINTERNAL;
    if (c->allreduce_i64(env, v, -1, DKB_CAND_SUM) != DKB_CAND_EINVAL) return DKB_CAND_EINTERNAL;
    if (c->allreduce_i64(env, NULL, 2, DKB_CAND_MAX) != DKB_CAND_EINVAL) return DKB_CAND_EINTERNAL;
    if (c->allreduce_f64(env, &f, 1, (dkb_cand_op)9) != DKB_CAND_EINVAL) return DKB_CAND_EINTERNAL;
    if (c->allreduce_i128(env, &x, 1, DKB_CAND_MIN) || x != 7) return DKB_CAND_EINTERNAL;
    if (c->allreduce_i64(env, v, 2, DKB_CAND_SUM) || v[0] != 3 || v[1] != 4) return DKB_CAND_EINTERNAL;
    if (c->allgather_sizes(env, 5, NULL) != DKB_CAND_EINVAL) return DKB_CAND_EINTERNAL;
    if (c->allgather_sizes(env, 5, sizes) || sizes[0] != 5) return DKB_CAND_EINTERNAL;
    char out[5] = {0};
    if (c->allgatherv(env, "hello", 5, out, sizes) || memcmp(out, "hello", 5)) return DKB_CAND_EINTERNAL;
    if (c->barrier(env)) return DKB_CAND_EINTERNAL;
    int64_t wrong[1] = {4};
    return c->allgatherv(env, "hello", 5, out, wrong); /* DKB_CAND_EINVAL */
}
