/* compile_error: a candidate that does not compile (a missing semicolon and
 * an undeclared name). Expected: compile_error, with the compiler's
 * diagnostics kept as the row's compile log. */
#include "dkb/candidate.h"

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    (void)db; (void)params; (void)env;
    res->nrows = 1
    res->cols[0].dec[0] = revenue_so_far;
    return 0;
}
