/* emit_rec.h: the recorder behind `dkb sql --emit c` (internal to
 * src/sql/translate_*.c and emit_c.c).
 *
 * translate_internal.h includes this header last: every dkb_tp_* call the
 * translator makes then goes through a dkb__rec_* wrapper that calls the
 * real operation and, while a recording is on (emit_c.c), writes the call
 * as one C statement with its arguments, naming the tensor it produced.
 * With no recording on, a wrapper is the call itself plus one test.
 * emit_c.c defines DKB_SQL_NO_REC before including translate_internal.h,
 * so it calls the real functions. */
#ifndef DKB_SQL_EMIT_REC_H
#define DKB_SQL_EMIT_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "dkb/store.h"
#include "dkb/tensor.h"

dkb_tensor *dkb__rec_column(dkb_tp *tp, const dkb_store_column *col);
dkb_tensor *dkb__rec_from_host(dkb_tp *tp, dkb_tp_dtype t, int64_t n, const void *data);
dkb_tensor *dkb__rec_from_host_str(dkb_tp *tp, int64_t n, const int64_t *offsets, const char *bytes);
dkb_tensor *dkb__rec_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value);
dkb_tensor *dkb__rec_arange(dkb_tp *tp, int64_t n);
dkb_tensor *dkb__rec_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b);
dkb_tensor *dkb__rec_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value);
dkb_tensor *dkb__rec_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value);
dkb_tensor *dkb__rec_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi);
dkb_tensor *dkb__rec_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n);
dkb_tensor *dkb__rec_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut);
dkb_tensor *dkb__rec_and(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b);
dkb_tensor *dkb__rec_or(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b);
dkb_tensor *dkb__rec_not(dkb_tp *tp, const dkb_tensor *a);
dkb_tensor *dkb__rec_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b);
dkb_tensor *dkb__rec_arith_i64(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale);
dkb_tensor *dkb__rec_rsub_i64(dkb_tp *tp, int64_t value, int scale, const dkb_tensor *a);
dkb_tensor *dkb__rec_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to);
dkb_tensor *dkb__rec_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b);
dkb_tensor *dkb__rec_year(dkb_tp *tp, const dkb_tensor *days);
dkb_tensor *dkb__rec_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max);
dkb_tensor *dkb__rec_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern);
dkb_tensor *dkb__rec_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len);
dkb_tensor *dkb__rec_str_to_i64(dkb_tp *tp, const dkb_tensor *str);
dkb_tensor *dkb__rec_str_pack(dkb_tp *tp, const dkb_tensor *str, bool *fits);
dkb_tensor *dkb__rec_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask);
dkb_tensor *dkb__rec_nonzero(dkb_tp *tp, const dkb_tensor *mask);
dkb_tensor *dkb__rec_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill);
dkb_join_result dkb__rec_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys,
                              dkb_join_kind kind);
dkb_tensor *dkb__rec_semi_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys);
dkb_groups dkb__rec_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys);
dkb_tensor *dkb__rec_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values);
dkb_tensor *dkb__rec_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values);
dkb_tensor *dkb__rec_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys);
dkb_tensor *dkb__rec_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k);
/* tr_relabel's new header (not a TensorPlan call): t with scale and dict. */
void dkb__rec_relabel(const dkb_tensor *out, const dkb_tensor *t, int scale, const dkb_tp_dict *dict);
/* concat_tensor (translate_util.c): its host copies and upload are one
 * statement, concat(tp, a, b) in the file; pause/resume bracket them. */
void dkb__rec_pause(void);
void dkb__rec_resume(void);
void dkb__rec_concat(const dkb_tensor *out, const dkb_tensor *a, const dkb_tensor *b);

#ifndef DKB_SQL_NO_REC
#define dkb_tp_column(...) dkb__rec_column(__VA_ARGS__)
#define dkb_tp_from_host(...) dkb__rec_from_host(__VA_ARGS__)
#define dkb_tp_from_host_str(...) dkb__rec_from_host_str(__VA_ARGS__)
#define dkb_tp_full_i64(...) dkb__rec_full_i64(__VA_ARGS__)
#define dkb_tp_arange(...) dkb__rec_arange(__VA_ARGS__)
#define dkb_tp_cmp(...) dkb__rec_cmp(__VA_ARGS__)
#define dkb_tp_cmp_i64(...) dkb__rec_cmp_i64(__VA_ARGS__)
#define dkb_tp_cmp_f64(...) dkb__rec_cmp_f64(__VA_ARGS__)
#define dkb_tp_between(...) dkb__rec_between(__VA_ARGS__)
#define dkb_tp_in_i64(...) dkb__rec_in_i64(__VA_ARGS__)
#define dkb_tp_lookup_mask(...) dkb__rec_lookup_mask(__VA_ARGS__)
#define dkb_tp_and(...) dkb__rec_and(__VA_ARGS__)
#define dkb_tp_or(...) dkb__rec_or(__VA_ARGS__)
#define dkb_tp_not(...) dkb__rec_not(__VA_ARGS__)
#define dkb_tp_arith(...) dkb__rec_arith(__VA_ARGS__)
#define dkb_tp_arith_i64(...) dkb__rec_arith_i64(__VA_ARGS__)
#define dkb_tp_rsub_i64(...) dkb__rec_rsub_i64(__VA_ARGS__)
#define dkb_tp_cast(...) dkb__rec_cast(__VA_ARGS__)
#define dkb_tp_where(...) dkb__rec_where(__VA_ARGS__)
#define dkb_tp_year(...) dkb__rec_year(__VA_ARGS__)
#define dkb_tp_pack2(...) dkb__rec_pack2(__VA_ARGS__)
#define dkb_tp_like(...) dkb__rec_like(__VA_ARGS__)
#define dkb_tp_substr(...) dkb__rec_substr(__VA_ARGS__)
#define dkb_tp_str_to_i64(...) dkb__rec_str_to_i64(__VA_ARGS__)
#define dkb_tp_str_pack(...) dkb__rec_str_pack(__VA_ARGS__)
#define dkb_tp_compress(...) dkb__rec_compress(__VA_ARGS__)
#define dkb_tp_nonzero(...) dkb__rec_nonzero(__VA_ARGS__)
#define dkb_tp_gather(...) dkb__rec_gather(__VA_ARGS__)
#define dkb_tp_join(...) dkb__rec_join(__VA_ARGS__)
#define dkb_tp_semi_join(...) dkb__rec_semi_join(__VA_ARGS__)
#define dkb_tp_group(...) dkb__rec_group(__VA_ARGS__)
#define dkb_tp_aggregate(...) dkb__rec_aggregate(__VA_ARGS__)
#define dkb_tp_reduce(...) dkb__rec_reduce(__VA_ARGS__)
#define dkb_tp_sort(...) dkb__rec_sort(__VA_ARGS__)
#define dkb_tp_topk(...) dkb__rec_topk(__VA_ARGS__)
#endif

#endif
