/* backend.h: the TensorPlan backend interface, a table of operations.
 *
 * The public functions of tensor.h (tensor.c, tp_api.c) check their
 * arguments (NULL inputs, dtypes, lengths, sticky errors) and then call the
 * context's backend through this table, so a plan never knows which backend
 * runs it. A backend may assume validated arguments: non-NULL tensors of
 * the dtypes and lengths the public contract requires. It allocates outputs
 * with dkb__tp_new / dkb__tp_new_str (tp_internal.h), records failures with
 * dkb__tp_error and returns NULL.
 *
 * Backends: CPU (cpu_*.c, OpenMP; dkb__tp_cpu in cpu_backend.c) and CUDA
 * (cuda_*.cu, built when nvcc is found; dkb__tp_cuda in cuda_backend.cu),
 * which fills the same table with device implementations. */
#ifndef DKB_TENSOR_BACKEND_H
#define DKB_TENSOR_BACKEND_H

#include <stddef.h>

#include "dkb/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The logic operation of the backend's `logic` entry (dkb_tp_and, _or, _not). */
typedef enum {
    DKB__LOGIC_AND = 0,   /* a && b */
    DKB__LOGIC_OR,        /* a || b */
    DKB__LOGIC_NOT,       /* !a (b is NULL) */
} dkb__logic_op;

typedef struct dkb__tp_backend {
    const char *name;  /* "cpu" */

    /* memory: tensor storage (from the context's arena on the CPU) and the
     * copies between it and host memory */
    void *(*alloc)(dkb_tp *tp, size_t bytes);
    void (*to_host)(dkb_tp *tp, void *dst, const void *src, size_t bytes);
    void (*from_host)(dkb_tp *tp, void *dst, const void *src, size_t bytes);
    /* a store column as a tensor (t is filled with dtype, n, scale, dict) */
    dkb_tensor *(*column)(dkb_tp *tp, const dkb_store_column *col, dkb_tensor *t);

    /* constants */
    dkb_tensor *(*full_i64)(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value);
    dkb_tensor *(*arange)(dkb_tp *tp, int64_t n);

    /* elementwise (cpu_elementwise.c, cpu_arith.c) */
    dkb_tensor *(*cmp)(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b);
    dkb_tensor *(*cmp_i64)(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value);
    dkb_tensor *(*cmp_f64)(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value);
    dkb_tensor *(*between)(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi);
    dkb_tensor *(*in_i64)(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n);
    dkb_tensor *(*lookup_mask)(dkb_tp *tp, const dkb_tensor *codes, const bool *lut, int lut_size);
    /* a op b as BOOL (nonzero bytes are true); b NULL for DKB__LOGIC_NOT */
    dkb_tensor *(*logic)(dkb_tp *tp, const dkb_tensor *a, dkb__logic_op op, const dkb_tensor *b);
    dkb_tensor *(*arith)(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b);
    /* a OP value (reverse: value OP a), value at scale `scale` */
    dkb_tensor *(*arith_scalar)(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale,
                                bool reverse);
    dkb_tensor *(*cast)(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to);
    dkb_tensor *(*where)(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b);
    dkb_tensor *(*year)(dkb_tp *tp, const dkb_tensor *days);
    dkb_tensor *(*pack2)(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max);

    /* strings (cpu_string.c); the pattern is already checked */
    dkb_tensor *(*like)(dkb_tp *tp, const dkb_tensor *str, const char *pattern);
    dkb_tensor *(*substr)(dkb_tp *tp, const dkb_tensor *str, int start, int len);
    dkb_tensor *(*str_to_i64)(dkb_tp *tp, const dkb_tensor *str);
    /* NULL with *longest > DKB_TP_STR_PACK_MAX (no error) when a string is longer */
    dkb_tensor *(*str_pack)(dkb_tp *tp, const dkb_tensor *str, int64_t *longest);

    /* selection (cpu_select.c) */
    dkb_tensor *(*compress)(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask);
    dkb_tensor *(*nonzero)(dkb_tp *tp, const dkb_tensor *mask);
    dkb_tensor *(*gather)(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill);
    int64_t (*count)(dkb_tp *tp, const dkb_tensor *mask);

    /* joins (cpu_join.c) */
    dkb_join_result (*join)(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe, dkb_join_kind kind);
    dkb_tensor *(*semi_join)(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe);

    /* group-by (cpu_group.c, cpu_agg.c) */
    dkb_groups (*group)(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys);
    dkb_tensor *(*aggregate)(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values);
    dkb_tensor *(*reduce)(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values);

    /* ordering (cpu_sort.c) */
    dkb_tensor *(*sort)(dkb_tp *tp, const dkb_sort_key *keys, int nkeys);
    dkb_tensor *(*topk)(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k);

    /* wait until every queued operation has finished (CPU: nothing to do);
     * for profiling (profile.c) */
    void (*sync)(dkb_tp *tp);
} dkb__tp_backend;

extern const dkb__tp_backend dkb__tp_cpu;

#ifdef __cplusplus
}
#endif

#endif
