/* bad_entry: a core-mode file (q06.core.c) that defines the full-mode entry
 * point instead of dkb_candidate_core. It compiles and imports nothing
 * forbidden, but the mode's entry point is missing. Expected: bad_entry. */
#include "dkb/candidate.h"

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)db; (void)params; (void)env;
    res->nrows = 0;
    return 0;
}
