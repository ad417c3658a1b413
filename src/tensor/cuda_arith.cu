/* cuda_arith.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_tensor *dkb__cuda_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b) {
    (void)a;
    (void)op;
    (void)b;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "arith: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to) {
    (void)a;
    (void)to;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "cast: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b) {
    (void)cond;
    (void)a;
    (void)b;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "where: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_arith_scalar(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale,
                                             bool reverse) {
    (void)a;
    (void)op;
    (void)value;
    (void)scale;
    (void)reverse;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "arith_scalar: not implemented on CUDA");
}
