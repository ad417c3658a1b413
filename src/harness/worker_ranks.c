/* worker_ranks.c: env->comm for a call on one rank (worker_ranks.h). Called
 * from candidate code inside its call: no allocation, no system call. */
#include "harness/worker_ranks.h"

#include <string.h>

static int op_ok(dkb_cand_op op) { return op == DKB_CAND_SUM || op == DKB_CAND_MIN || op == DKB_CAND_MAX; }

/* A buffer of n elements: n >= 0, and a pointer when n > 0. */
static int buf_ok(const void *buf, int64_t n) { return n >= 0 && (n == 0 || buf); }

/* One rank: the op over one buffer is the buffer. */
static int allreduce_i64(const dkb_cand_env *env, int64_t *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return buf_ok(buf, n) && op_ok(op) ? DKB_CAND_OK : DKB_CAND_EINVAL;
}

static int allreduce_f64(const dkb_cand_env *env, double *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return buf_ok(buf, n) && op_ok(op) ? DKB_CAND_OK : DKB_CAND_EINVAL;
}

static int allreduce_i128(const dkb_cand_env *env, __int128 *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return buf_ok(buf, n) && op_ok(op) ? DKB_CAND_OK : DKB_CAND_EINVAL;
}

static int allgather_sizes(const dkb_cand_env *env, int64_t mine, int64_t *all) {
    (void)env;
    if (!all) return DKB_CAND_EINVAL;
    all[0] = mine;
    return DKB_CAND_OK;
}

static int allgatherv(const dkb_cand_env *env, const void *send, int64_t bytes, void *recv, const int64_t *counts) {
    (void)env;
    if (!counts || counts[0] != bytes || !buf_ok(send, bytes) || !buf_ok(recv, bytes)) return DKB_CAND_EINVAL;
    if (bytes) memmove(recv, send, (size_t)bytes);
    return DKB_CAND_OK;
}

static int barrier(const dkb_cand_env *env) {
    (void)env;
    return DKB_CAND_OK;
}

static const dkb_cand_comm SINGLE = {allreduce_i64, allreduce_f64, allreduce_i128, allgather_sizes, allgatherv, barrier};

const dkb_cand_comm *dkb__wranks_single(void) { return &SINGLE; }
