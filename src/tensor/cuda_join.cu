/* cuda_join.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_join_result dkb__cuda_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe, dkb_join_kind kind) {
    (void)build;
    (void)probe;
    (void)kind;
    dkb__tp_error(tp, DKB_EINTERNAL, "join: not implemented on CUDA");
    dkb_join_result z = {NULL, NULL};
    return z;
}

extern "C" dkb_tensor *dkb__cuda_semi_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe) {
    (void)build;
    (void)probe;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "semi_join: not implemented on CUDA");
}
