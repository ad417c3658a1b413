/* cuda_select.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_tensor *dkb__cuda_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask) {
    (void)a;
    (void)mask;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "compress: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_nonzero(dkb_tp *tp, const dkb_tensor *mask) {
    (void)mask;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "nonzero: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill) {
    (void)a;
    (void)idx;
    (void)fill;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "gather: not implemented on CUDA");
}

extern "C" int64_t dkb__cuda_count(dkb_tp *tp, const dkb_tensor *mask) {
    (void)mask;
    dkb__tp_error(tp, DKB_EINTERNAL, "count: not implemented on CUDA");
    return 0;
}
