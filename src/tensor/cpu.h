/* cpu.h: the CPU backend's operations (cpu_*.c), collected into the
 * dkb__tp_cpu table by cpu_backend.c. Each has the contract of the
 * backend.h entry of the same name. */
#ifndef DKB_TENSOR_CPU_H
#define DKB_TENSOR_CPU_H

#include "tensor/tp_internal.h"

/* Elements per block of the block-at-a-time elementwise loops. */
#define DKB__BLK 1024

/* cpu_backend.c */
dkb_tensor *dkb__cpu_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value);
dkb_tensor *dkb__cpu_arange(dkb_tp *tp, int64_t n);
/* cpu_elementwise.c */
dkb_tensor *dkb__cpu_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b);
dkb_tensor *dkb__cpu_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value);
dkb_tensor *dkb__cpu_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value);
dkb_tensor *dkb__cpu_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi);
dkb_tensor *dkb__cpu_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n);
dkb_tensor *dkb__cpu_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut, int lut_size);
dkb_tensor *dkb__cpu_logic(dkb_tp *tp, const dkb_tensor *a, dkb__logic_op op, const dkb_tensor *b);
dkb_tensor *dkb__cpu_year(dkb_tp *tp, const dkb_tensor *days);
dkb_tensor *dkb__cpu_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max);
/* cpu_arith.c */
dkb_tensor *dkb__cpu_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b);
dkb_tensor *dkb__cpu_arith_scalar(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale,
                                  bool reverse);
dkb_tensor *dkb__cpu_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to);
dkb_tensor *dkb__cpu_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b);
/* cpu_string.c */
dkb_tensor *dkb__cpu_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern);
dkb_tensor *dkb__cpu_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len);
dkb_tensor *dkb__cpu_str_to_i64(dkb_tp *tp, const dkb_tensor *str);
dkb_tensor *dkb__cpu_str_pack(dkb_tp *tp, const dkb_tensor *str, int64_t *longest);
/* cpu_select.c */
dkb_tensor *dkb__cpu_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask);
dkb_tensor *dkb__cpu_nonzero(dkb_tp *tp, const dkb_tensor *mask);
dkb_tensor *dkb__cpu_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill);
int64_t dkb__cpu_count(dkb_tp *tp, const dkb_tensor *mask);
/* cpu_join.c */
dkb_join_result dkb__cpu_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe, dkb_join_kind kind);
dkb_tensor *dkb__cpu_semi_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe);
/* cpu_group.c, cpu_agg.c */
dkb_groups dkb__cpu_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys);
dkb_tensor *dkb__cpu_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values);
dkb_tensor *dkb__cpu_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values);
/* cpu_sort.c */
dkb_tensor *dkb__cpu_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys);
dkb_tensor *dkb__cpu_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k);

#endif
