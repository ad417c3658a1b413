/* cpu_string.c: CPU string operations on STR tensors: LIKE per row (a
 * pattern compiled once into literal segments, like.h), substr, and parsing
 * integers (str_to_i64). */
#include <string.h>

#include "tensor/cpu.h"
#include "tensor/like.h"

dkb_tensor *dkb__cpu_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern) {
    dkb_tensor *r = dkb__tp_new(tp, "like", DKB_TP_BOOL, str->n);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    dkb__like *lk = dkb__like_compile(&tp->scratch, pattern);
    if (!lk) {
        SCRATCH_END(tp);
        return dkb__tp_error(tp, DKB_ENOMEM, "like: out of memory");
    }
    const int64_t *off = str->data;
    const char *bytes = str->bytes;
    uint8_t *out = r->data;
    int64_t n = str->n;
    int nt = dkb__nthreads(tp, n / 8);
#pragma omp parallel for schedule(dynamic, 4096) num_threads(nt)
    for (int64_t i = 0; i < n; i++) out[i] = dkb__like_match(lk, bytes + off[i], off[i + 1] - off[i]);
    SCRATCH_END(tp);
    return r;
}

dkb_tensor *dkb__cpu_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len) {
    int64_t n = str->n;
    int nt = dkb__nthreads(tp, n);
    const int64_t *ao = str->data;
    int64_t b0 = start, e0 = (int64_t)start + (len > 0 ? len : 0);
    if (b0 < 0) b0 = 0;
    dkb_tensor *r = dkb__tp_new_str(tp, "substr", n, 0);
    if (!r) return NULL;
    int64_t *ro = r->data;
    /* lengths first (into offsets 1..n), then a prefix sum, then bytes */
    ro[0] = 0;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++) {
        int64_t sl = ao[i + 1] - ao[i], e = e0 < sl ? e0 : sl;
        ro[i + 1] = e > b0 ? e - b0 : 0;
    }
    int64_t total = dkb__scan_i64(tp, ro + 1, n);
    r->bytes = tp->be->alloc(tp, (size_t)total);
    if (!r->bytes) return dkb__tp_error(tp, DKB_ENOMEM, "substr: out of memory");
    r->nbytes = total;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t i = 0; i < n; i++)
        if (ro[i + 1] > ro[i]) memcpy(r->bytes + ro[i], str->bytes + ao[i] + b0, (size_t)(ro[i + 1] - ro[i]));
    return r;
}

dkb_tensor *dkb__cpu_str_to_i64(dkb_tp *tp, const dkb_tensor *str) {
    int64_t n = str->n;
    int nt = dkb__nthreads(tp, n);
    dkb_tensor *r = dkb__tp_new(tp, "str_to_i64", DKB_TP_I64, n);
    if (!r) return NULL;
    const int64_t *ao = str->data;
    int64_t *o = r->data;
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(| : bad)
    for (int64_t i = 0; i < n; i++) {
        const char *s = str->bytes + ao[i], *e = str->bytes + ao[i + 1];
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        bool neg = false;
        if (s < e && (*s == '-' || *s == '+')) neg = *s++ == '-';
        int64_t v = 0;
        for (; s < e && *s >= '0' && *s <= '9'; s++)
            bad |= __builtin_mul_overflow(v, 10, &v) | __builtin_sub_overflow(v, *s - '0', &v);
        if (!neg) bad |= __builtin_mul_overflow(v, -1, &v);
        o[i] = v;
    }
    if (bad) return dkb__tp_error(tp, DKB_ERANGE, "str_to_i64: a number does not fit in int64");
    return r;
}
