/* q06.full.cu (adversarial, forbidden_symbol): opens another process's
 * device memory by CUDA IPC; cudaIpc* is not on the allow-list. */
#include "dkb/candidate.h"

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    cudaIpcMemHandle_t h;
    void *mem = NULL;
    (void)db, (void)p, (void)res, (void)env;
    memset(&h, 0, sizeof h);
    return cudaIpcOpenMemHandle(&mem, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess;
}
