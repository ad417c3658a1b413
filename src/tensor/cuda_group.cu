/* cuda_group.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_groups dkb__cuda_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys) {
    (void)keys;
    (void)nkeys;
    dkb__tp_error(tp, DKB_EINTERNAL, "group: not implemented on CUDA");
    dkb_groups z = {NULL, NULL, 0};
    return z;
}

extern "C" dkb_tensor *dkb__cuda_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values) {
    (void)g;
    (void)agg;
    (void)values;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "aggregate: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values) {
    (void)agg;
    (void)values;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "reduce: not implemented on CUDA");
}
