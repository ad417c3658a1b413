/* cuda_string.cu: placeholder until the CUDA implementation lands. */
#include "tensor/cuda_internal.cuh"

extern "C" dkb_tensor *dkb__cuda_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern) {
    (void)str;
    (void)pattern;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "like: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len) {
    (void)str;
    (void)start;
    (void)len;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "substr: not implemented on CUDA");
}

extern "C" dkb_tensor *dkb__cuda_str_to_i64(dkb_tp *tp, const dkb_tensor *str) {
    (void)str;
    return (dkb_tensor *)dkb__tp_error(tp, DKB_EINTERNAL, "str_to_i64: not implemented on CUDA");
}
