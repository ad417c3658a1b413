/* cuda_sort.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_tensor *dkb__cuda_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys) {
    (void)keys;
    (void)nkeys;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "sort: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k) {
    (void)keys;
    (void)nkeys;
    (void)k;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "topk: not implemented on CUDA");
}
