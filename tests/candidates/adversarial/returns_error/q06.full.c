/* returns_error: a candidate that gives up and returns a non-zero status
 * (as one would on a failed allocation). Expected: returned_error. */
#include "dkb/candidate.h"

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)db; (void)params; (void)res; (void)env;
    return 7;
}
