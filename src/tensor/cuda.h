/* cuda.h: the CUDA backend's operations (cuda_*.cu), collected into the
 * dkb__tp_cuda table by cuda_backend.cu. Each has the contract of the
 * backend.h entry of the same name (and the CPU backend's semantics,
 * exactly: the same outputs for the same inputs). */
#ifndef DKB_TENSOR_CUDA_H
#define DKB_TENSOR_CUDA_H

#include "tensor/tp_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cuda_backend.cu */
dkb_tensor *dkb__cuda_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value);
dkb_tensor *dkb__cuda_arange(dkb_tp *tp, int64_t n);
/* cuda_elementwise.cu */
dkb_tensor *dkb__cuda_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b);
dkb_tensor *dkb__cuda_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value);
dkb_tensor *dkb__cuda_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value);
dkb_tensor *dkb__cuda_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi);
dkb_tensor *dkb__cuda_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n);
dkb_tensor *dkb__cuda_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut, int lut_size);
dkb_tensor *dkb__cuda_logic(dkb_tp *tp, const dkb_tensor *a, dkb__logic_op op, const dkb_tensor *b);
dkb_tensor *dkb__cuda_year(dkb_tp *tp, const dkb_tensor *days);
dkb_tensor *dkb__cuda_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max);
/* cuda_arith.cu */
dkb_tensor *dkb__cuda_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b);
dkb_tensor *dkb__cuda_arith_scalar(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale,
                                  bool reverse);
dkb_tensor *dkb__cuda_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to);
dkb_tensor *dkb__cuda_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b);
/* cuda_string.cu */
dkb_tensor *dkb__cuda_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern);
dkb_tensor *dkb__cuda_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len);
dkb_tensor *dkb__cuda_str_to_i64(dkb_tp *tp, const dkb_tensor *str);
dkb_tensor *dkb__cuda_str_pack(dkb_tp *tp, const dkb_tensor *str, int64_t *longest);
/* cuda_select.cu */
dkb_tensor *dkb__cuda_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask);
dkb_tensor *dkb__cuda_nonzero(dkb_tp *tp, const dkb_tensor *mask);
dkb_tensor *dkb__cuda_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill);
int64_t dkb__cuda_count(dkb_tp *tp, const dkb_tensor *mask);
/* cuda_join.cu */
dkb_join_result dkb__cuda_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe, dkb_join_kind kind);
dkb_tensor *dkb__cuda_semi_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe);
/* cuda_group.cu, cuda_agg.cu */
dkb_groups dkb__cuda_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys);
dkb_tensor *dkb__cuda_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values);
dkb_tensor *dkb__cuda_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values);
/* cuda_sort.cu */
dkb_tensor *dkb__cuda_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys);
dkb_tensor *dkb__cuda_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k);

#ifdef __cplusplus
}
#endif

#endif
