/* cuda_elementwise.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_tensor *dkb__cuda_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b) {
    (void)a;
    (void)op;
    (void)b;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "cmp: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value) {
    (void)a;
    (void)op;
    (void)value;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "cmp_i64: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value) {
    (void)a;
    (void)op;
    (void)value;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "cmp_f64: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi) {
    (void)a;
    (void)lo;
    (void)hi;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "between: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n) {
    (void)a;
    (void)values;
    (void)n;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "in_i64: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut, int lut_size) {
    (void)codes;
    (void)lut;
    (void)lut_size;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "lookup_mask: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_logic(dkb_tp *tp, const dkb_tensor *a, int op, const dkb_tensor *b) {
    (void)a;
    (void)op;
    (void)b;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "logic: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_year(dkb_tp *tp, const dkb_tensor *days) {
    (void)days;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "year: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max) {
    (void)a;
    (void)b;
    (void)b_max;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "pack2: not implemented on CUDA");
}
