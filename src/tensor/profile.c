/* profile.c: per-operation timing of a TensorPlan context (tensor.h,
 * dkb_tp_profile_*). Profiling puts a table of wrappers in front of the
 * context's backend: each wrapper calls the real operation, waits for the
 * backend to finish it (backend sync: the CUDA stream), and adds the wall
 * time to that operation's total. Plans and the public API do not change. */
#include <stdlib.h>
#include <string.h>

#include "tensor/tp_internal.h"

#include "common/timing.h"  // defines: dkb__now_s

/* The profiled operations: X(name). */
#define PROF_OPS(X)                                                                                      \
    X(to_host) X(from_host) X(column) X(full_i64) X(arange) X(cmp) X(cmp_i64) X(cmp_f64) X(between)      \
    X(in_i64) X(lookup_mask) X(logic) X(arith) X(arith_scalar) X(cast) X(where) X(year) X(pack2) X(like) \
    X(substr) X(str_to_i64) X(str_pack) X(compress) X(nonzero) X(gather) X(count) X(join) X(semi_join) X(group)     \
    X(aggregate) X(reduce) X(sort) X(topk)

enum {
#define PROF_ENUM(name) P_##name,
    PROF_OPS(PROF_ENUM)
#undef PROF_ENUM
    P_COUNT
};

static const char *const OP_NAMES[P_COUNT] = {
#define PROF_NAME(name) #name,
    PROF_OPS(PROF_NAME)
#undef PROF_NAME
};

struct dkb__tp_profile {
    const dkb__tp_backend *real;  /* the backend being timed */
    dkb__tp_backend shim;         /* the wrappers, installed while profiling */
    int64_t calls[P_COUNT];
    double seconds[P_COUNT];
};

/* Start timing an operation: earlier queued work is not its own. */
static double prof_begin(dkb_tp *tp) {
    tp->prof->real->sync(tp);
    return dkb__now_s();
}

static void prof_end(dkb_tp *tp, int op, double t0) {
    tp->prof->real->sync(tp);
    tp->prof->calls[op]++;
    tp->prof->seconds[op] += dkb__now_s() - t0;
}

/* One wrapper per backend entry: PROF_OP(return type, name, (params), (args)). */
#define PROF_OP(ret, name, params, args)           \
    static ret p_##name params {                   \
        double t0 = prof_begin(tp);                \
        ret r = tp->prof->real->name args;         \
        prof_end(tp, P_##name, t0);                \
        return r;                                  \
    }
#define PROF_VOID(name, params, args)              \
    static void p_##name params {                  \
        double t0 = prof_begin(tp);                \
        tp->prof->real->name args;                 \
        prof_end(tp, P_##name, t0);                \
    }

typedef dkb_tensor *tensor_p;
typedef const dkb_tensor *ctensor_p;

PROF_VOID(to_host, (dkb_tp * tp, void *dst, const void *src, size_t bytes), (tp, dst, src, bytes))
PROF_VOID(from_host, (dkb_tp * tp, void *dst, const void *src, size_t bytes), (tp, dst, src, bytes))
PROF_OP(tensor_p, column, (dkb_tp * tp, const dkb_store_column *col, dkb_tensor *t), (tp, col, t))
PROF_OP(tensor_p, full_i64, (dkb_tp * tp, dkb_tp_dtype t, int64_t n, int64_t v), (tp, t, n, v))
PROF_OP(tensor_p, arange, (dkb_tp * tp, int64_t n), (tp, n))
PROF_OP(tensor_p, cmp, (dkb_tp * tp, ctensor_p a, dkb_cmp op, ctensor_p b), (tp, a, op, b))
PROF_OP(tensor_p, cmp_i64, (dkb_tp * tp, ctensor_p a, dkb_cmp op, int64_t v), (tp, a, op, v))
PROF_OP(tensor_p, cmp_f64, (dkb_tp * tp, ctensor_p a, dkb_cmp op, double v), (tp, a, op, v))
PROF_OP(tensor_p, between, (dkb_tp * tp, ctensor_p a, int64_t lo, int64_t hi), (tp, a, lo, hi))
PROF_OP(tensor_p, in_i64, (dkb_tp * tp, ctensor_p a, const int64_t *values, int n), (tp, a, values, n))
PROF_OP(tensor_p, lookup_mask, (dkb_tp * tp, ctensor_p codes, const bool *lut, int size), (tp, codes, lut, size))
PROF_OP(tensor_p, logic, (dkb_tp * tp, ctensor_p a, dkb__logic_op op, ctensor_p b), (tp, a, op, b))
PROF_OP(tensor_p, arith, (dkb_tp * tp, ctensor_p a, dkb_arith op, ctensor_p b), (tp, a, op, b))
PROF_OP(tensor_p, arith_scalar, (dkb_tp * tp, ctensor_p a, dkb_arith op, int64_t v, int scale, bool reverse),
        (tp, a, op, v, scale, reverse))
PROF_OP(tensor_p, cast, (dkb_tp * tp, ctensor_p a, dkb_tp_dtype to), (tp, a, to))
PROF_OP(tensor_p, where, (dkb_tp * tp, ctensor_p cond, ctensor_p a, ctensor_p b), (tp, cond, a, b))
PROF_OP(tensor_p, year, (dkb_tp * tp, ctensor_p days), (tp, days))
PROF_OP(tensor_p, pack2, (dkb_tp * tp, ctensor_p a, ctensor_p b, int64_t b_max), (tp, a, b, b_max))
PROF_OP(tensor_p, like, (dkb_tp * tp, ctensor_p str, const char *pattern), (tp, str, pattern))
PROF_OP(tensor_p, substr, (dkb_tp * tp, ctensor_p str, int start, int len), (tp, str, start, len))
PROF_OP(tensor_p, str_to_i64, (dkb_tp * tp, ctensor_p str), (tp, str))
PROF_OP(tensor_p, str_pack, (dkb_tp * tp, ctensor_p str, int64_t *longest), (tp, str, longest))
PROF_OP(tensor_p, compress, (dkb_tp * tp, ctensor_p a, ctensor_p mask), (tp, a, mask))
PROF_OP(tensor_p, nonzero, (dkb_tp * tp, ctensor_p mask), (tp, mask))
PROF_OP(tensor_p, gather, (dkb_tp * tp, ctensor_p a, ctensor_p idx, int64_t fill), (tp, a, idx, fill))
PROF_OP(int64_t, count, (dkb_tp * tp, ctensor_p mask), (tp, mask))
PROF_OP(dkb_join_result, join, (dkb_tp * tp, ctensor_p build, ctensor_p probe, dkb_join_kind kind),
        (tp, build, probe, kind))
PROF_OP(tensor_p, semi_join, (dkb_tp * tp, ctensor_p build, ctensor_p probe), (tp, build, probe))
PROF_OP(dkb_groups, group, (dkb_tp * tp, const dkb_tensor *const *keys, int nkeys), (tp, keys, nkeys))
PROF_OP(tensor_p, aggregate, (dkb_tp * tp, const dkb_groups *g, dkb_agg agg, ctensor_p values), (tp, g, agg, values))
PROF_OP(tensor_p, reduce, (dkb_tp * tp, dkb_agg agg, ctensor_p values), (tp, agg, values))
PROF_OP(tensor_p, sort, (dkb_tp * tp, const dkb_sort_key *keys, int nkeys), (tp, keys, nkeys))
PROF_OP(tensor_p, topk, (dkb_tp * tp, const dkb_sort_key *keys, int nkeys, int64_t k), (tp, keys, nkeys, k))

int dkb_tp_profile_start(dkb_tp *tp) {
    if (!tp) return DKB_EINVAL;
    if (!tp->prof) {
        dkb__tp_profile *p = calloc(1, sizeof *p);
        if (!p) return DKB_ENOMEM;
        p->real = tp->be;
        p->shim = *tp->be;  /* name, alloc and sync pass through */
#define PROF_SET(name) p->shim.name = p_##name;
        PROF_OPS(PROF_SET)
#undef PROF_SET
        tp->prof = p;
    }
    tp->be = &tp->prof->shim;
    return 0;
}

void dkb_tp_profile_stop(dkb_tp *tp) {
    if (!tp || !tp->prof) return;
    tp->be = tp->prof->real;
}

void dkb_tp_profile_clear(dkb_tp *tp) {
    if (!tp || !tp->prof) return;
    memset(tp->prof->calls, 0, sizeof tp->prof->calls);
    memset(tp->prof->seconds, 0, sizeof tp->prof->seconds);
}

int dkb_tp_profile_read(const dkb_tp *tp, dkb_tp_profile_entry *out, int max) {
    if (!tp || !tp->prof || !out) return 0;
    int n = 0;
    for (int op = 0; op < P_COUNT && n < max; op++) {
        if (!tp->prof->calls[op]) continue;
        /* insertion by total time, longest first */
        int j = n++;
        while (j > 0 && out[j - 1].seconds < tp->prof->seconds[op]) {
            out[j] = out[j - 1];
            j--;
        }
        out[j].op = OP_NAMES[op];
        out[j].calls = tp->prof->calls[op];
        out[j].seconds = tp->prof->seconds[op];
    }
    return n;
}

void dkb__tp_profile_free(dkb_tp *tp) {
    if (!tp->prof) return;
    tp->be = tp->prof->real;
    free(tp->prof);
    tp->prof = NULL;
}
