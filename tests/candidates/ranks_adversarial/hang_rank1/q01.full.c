/* hang_rank1 (full mode, ranks): rank 1 never returns (a loop on a
 * volatile flag nothing sets) and never reaches the barrier the other ranks
 * wait in. Not a Q1: the row never gets as far as a check. Expected:
 * timeout on every rank (rank 1 is killed at the timeout, the others'
 * barrier then fails), mpirun does not hang, and the evaluation goes on to
 * q06.full.c (the example ranks Q6: ok). */
#include "dkb/candidate.h"

DKB_CANDIDATE_RANKS;

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)db, (void)params;
    if (env->rank == 1) {
        volatile int stop = 0;
        while (!stop) {
        }
    }
    int rc = env->comm->barrier(env);
    if (rc) return rc;
    res->nrows = 0;
    return DKB_CAND_EINVAL; /* never the answer: the row ends at the timeout first */
}
