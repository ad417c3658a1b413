/* q06.core.cu (adversarial, forbidden_symbol): resets the device (and with
 * it the harness's context); cudaDeviceReset is not on the allow-list. */
#include "dkb/candidate.h"

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)in, (void)out, (void)env;
    return cudaDeviceReset() != cudaSuccess;
}
