/* cpu_backend.c: the CPU backend table: host memory from the context's
 * arena, zero-copy views of store columns, constants, and the operations of
 * cpu_*.c. */
#include <string.h>

#include "tensor/cpu.h"

static void *cpu_alloc(dkb_tp *tp, size_t bytes) { return dkb__arena_alloc(&tp->arena, bytes); }

static void cpu_copy(dkb_tp *tp, void *dst, const void *src, size_t bytes) {
    (void)tp;
    if (bytes) memcpy(dst, src, bytes);
}

static void cpu_sync(dkb_tp *tp) { (void)tp; }

static dkb_tensor *cpu_column(dkb_tp *tp, const dkb_store_column *col, dkb_tensor *t) {
    dkb_tensor *r = dkb__tp_view(tp, "column", t);
    if (!r) return NULL;
    /* tensors are immutable: the mapped file is only ever read */
    if (t->dtype == DKB_TP_STR) {
        uint64_t nb = 0;
        r->data = (void *)dkb_column_text_offsets(col);
        r->bytes = (char *)dkb_column_text_bytes(col, &nb);
        r->nbytes = (int64_t)nb;
        if (!r->bytes) r->bytes = (char *)"";
    } else {
        r->data = (void *)dkb_column_data(col);
    }
    if (!r->data) return dkb__tp_error(tp, DKB_EINVAL, "column %s: no data", dkb_column_name(col));
    return r;
}

#define FILL(T, V)                                                                   \
    do {                                                                             \
        T *o_ = (T *)r->data;                                                        \
        T v_ = (T)(V);                                                               \
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int64_t i = 0; i < n; i++) \
            o_[i] = v_;                                                              \
    } while (0)

dkb_tensor *dkb__cpu_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value) {
    dkb_tensor *r = dkb__tp_new(tp, "full_i64", t, n);
    if (!r) return NULL;
    int nt = dkb__nthreads(tp, n);
    switch (t) {
    case DKB_TP_BOOL: FILL(uint8_t, value != 0); break;
    case DKB_TP_U8: FILL(uint8_t, value); break;
    case DKB_TP_I8: FILL(int8_t, value); break;
    case DKB_TP_I16: FILL(int16_t, value); break;
    case DKB_TP_I32: FILL(int32_t, value); break;
    case DKB_TP_I64: FILL(int64_t, value); break;
    case DKB_TP_I128: FILL(dkb__i128, value); break;
    default: FILL(double, value); break;
    }
    return r;
}

dkb_tensor *dkb__cpu_arange(dkb_tp *tp, int64_t n) {
    dkb_tensor *r = dkb__tp_new(tp, "arange", DKB_TP_I64, n);
    if (!r) return NULL;
    int64_t *o = r->data;
    int nt = dkb__nthreads(tp, n);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) o[i] = i;
    return r;
}

const dkb__tp_backend dkb__tp_cpu = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .to_host = cpu_copy,
    .from_host = cpu_copy,
    .column = cpu_column,
    .full_i64 = dkb__cpu_full_i64,
    .arange = dkb__cpu_arange,
    .cmp = dkb__cpu_cmp,
    .cmp_i64 = dkb__cpu_cmp_i64,
    .cmp_f64 = dkb__cpu_cmp_f64,
    .between = dkb__cpu_between,
    .in_i64 = dkb__cpu_in_i64,
    .lookup_mask = dkb__cpu_lookup_mask,
    .logic = dkb__cpu_logic,
    .arith = dkb__cpu_arith,
    .arith_scalar = dkb__cpu_arith_scalar,
    .cast = dkb__cpu_cast,
    .where = dkb__cpu_where,
    .year = dkb__cpu_year,
    .pack2 = dkb__cpu_pack2,
    .like = dkb__cpu_like,
    .substr = dkb__cpu_substr,
    .str_to_i64 = dkb__cpu_str_to_i64,
    .str_pack = dkb__cpu_str_pack,
    .compress = dkb__cpu_compress,
    .nonzero = dkb__cpu_nonzero,
    .gather = dkb__cpu_gather,
    .count = dkb__cpu_count,
    .join = dkb__cpu_join,
    .semi_join = dkb__cpu_semi_join,
    .group = dkb__cpu_group,
    .aggregate = dkb__cpu_aggregate,
    .reduce = dkb__cpu_reduce,
    .sort = dkb__cpu_sort,
    .topk = dkb__cpu_topk,
    .sync = cpu_sync,
};
