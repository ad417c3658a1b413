/* tensor.c: the TensorPlan context (backend choice, threads, arena, sticky
 * error) and moving data between tensors and host memory. The operations
 * themselves are checked in tp_api.c and run by a backend (backend.h). */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tp_internal.h"

/* One entry per store column given to dkb_tp_column (kept until destroy):
 * its dictionary as a dkb_tp_dict (DICT columns, built once), and whether
 * the column was touched since the last reset with its bytes (for
 * dkb_tp_touched). */
struct dkb__column_entry {
    dkb__column_entry *next;
    const dkb_store_column *col;
    dkb_tp_dict dict;
    bool dict_built;
    bool touched;   /* passed to dkb_tp_column since the last reset */
    int64_t bytes;  /* rows x element size (TEXT: offsets + characters) */
};

const int64_t dkb__pow10_i64[19] = {1LL,
                                    10LL,
                                    100LL,
                                    1000LL,
                                    10000LL,
                                    100000LL,
                                    1000000LL,
                                    10000000LL,
                                    100000000LL,
                                    1000000000LL,
                                    10000000000LL,
                                    100000000000LL,
                                    1000000000000LL,
                                    10000000000000LL,
                                    100000000000000LL,
                                    1000000000000000LL,
                                    10000000000000000LL,
                                    100000000000000000LL,
                                    1000000000000000000LL};

dkb__i128 dkb__pow10_i128(int k) {
    dkb__i128 r = 1;
    for (int i = 0; i < k; i++) r *= 10;
    return r;
}

size_t dkb_tp_dtype_size(dkb_tp_dtype t) {
    switch (t) {
    case DKB_TP_BOOL: case DKB_TP_U8: case DKB_TP_I8: return 1;
    case DKB_TP_I16: return 2;
    case DKB_TP_I32: return 4;
    case DKB_TP_I64: case DKB_TP_F64: case DKB_TP_STR: return 8;
    case DKB_TP_I128: return 16;
    default: return 0;
    }
}

/* ---- context ---- */

int dkb_tp_create(dkb_tp_backend backend, int threads, dkb_tp **out, dkb_error *err) {
    if (!out) return dkb_fail(err, DKB_EINVAL, "dkb_tp_create: NULL out");
    *out = NULL;
#ifdef DKB_HAVE_CUDA
    if (backend != DKB_TP_CPU && backend != DKB_TP_CUDA)
#else
    if (backend != DKB_TP_CPU)
#endif
        return dkb_fail(err, DKB_EINVAL, "dkb_tp_create: backend %d is not available in this build%s",
                        (int)backend, backend == DKB_TP_CUDA ? " (built without CUDA)" : "");
    if (threads < 0) return dkb_fail(err, DKB_EINVAL, "dkb_tp_create: threads %d < 0", threads);
    dkb_tp *tp = calloc(1, sizeof *tp);
    if (!tp) return dkb_fail(err, DKB_ENOMEM, "dkb_tp_create: out of memory");
    tp->kind = backend;
    tp->be = &dkb__tp_cpu;
    tp->threads = threads ? threads : omp_get_max_threads();
    if (tp->threads < 1) tp->threads = 1;
    tp->par_min = DKB__PAR_MIN;
    dkb__arena_init(&tp->arena, 0);
    dkb__arena_init(&tp->scratch, 0);
#ifdef DKB_HAVE_CUDA
    if (backend == DKB_TP_CUDA) {
        int rc = dkb__cuda_create(tp, err);
        if (rc) {
            dkb_tp_destroy(tp);
            return rc;
        }
    }
#endif
    *out = tp;
    return 0;
}

void dkb_tp_destroy(dkb_tp *tp) {
    if (!tp) return;
    dkb__tp_profile_free(tp);
#ifdef DKB_HAVE_CUDA
    if (tp->cuda) dkb__cuda_destroy(tp);
#endif
    dkb__arena_free(&tp->arena);
    dkb__arena_free(&tp->scratch);
    while (tp->columns) {
        dkb__column_entry *next = tp->columns->next;
        free((void *)tp->columns->dict.str);
        free((void *)tp->columns->dict.len);
        free(tp->columns);
        tp->columns = next;
    }
    free(tp);
}

void dkb_tp_reset(dkb_tp *tp) {
    if (!tp) return;
#ifdef DKB_HAVE_CUDA
    if (tp->cuda) dkb__cuda_reset(tp);
#endif
    dkb__arena_reset(&tp->arena);
    memset(tp->hcache, 0, sizeof tp->hcache);
    for (dkb__column_entry *c = tp->columns; c; c = c->next) c->touched = false;
    tp->err.code = 0;
    tp->err.msg[0] = '\0';
}

dkb_tp_mark dkb_tp_mark_get(const dkb_tp *tp) {
    dkb_tp_mark m = {{NULL, NULL}, {0, 0}};
    dkb__arena_mark h = dkb__arena_get_mark(&tp->arena), d = {NULL, 0};
#ifdef DKB_HAVE_CUDA
    if (tp->cuda) d = dkb__cuda_mark(tp);
#endif
    m.block[0] = h.block, m.used[0] = h.used;
    m.block[1] = d.block, m.used[1] = d.used;
    return m;
}

void dkb_tp_release(dkb_tp *tp, dkb_tp_mark m) {
    dkb__arena_mark h = {(dkb__arena_block *)m.block[0], m.used[0]};
    dkb__arena_release(&tp->arena, h);
#ifdef DKB_HAVE_CUDA
    dkb__arena_mark d = {(dkb__arena_block *)m.block[1], m.used[1]};
    if (tp->cuda) dkb__cuda_release(tp, d);
#endif
    /* host copies of released device tensors: their addresses are reused */
    memset(tp->hcache, 0, sizeof tp->hcache);
}

int dkb_tp_status(const dkb_tp *tp, dkb_error *err) {
    if (!tp) return dkb_fail(err, DKB_EINVAL, "dkb_tp_status: NULL context");
    if (tp->err.code && err) *err = tp->err;
    return tp->err.code;
}

void *dkb__tp_error(dkb_tp *tp, int code, const char *fmt, ...) {
    if (tp && tp->err.code == 0) {
        va_list ap;
        va_start(ap, fmt);
        dkb_vfail(&tp->err, code ? code : DKB_EINTERNAL, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

dkb_tensor *dkb_tp_fail(dkb_tp *tp, int code, const char *fmt, ...) {
    if (tp && tp->err.code == 0) {
        va_list ap;
        va_start(ap, fmt);
        dkb_vfail(&tp->err, code ? code : DKB_EINTERNAL, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

dkb_tp_backend dkb_tp_backend_of(const dkb_tp *tp) { return tp ? tp->kind : DKB_TP_CPU; }

#ifndef DKB_HAVE_CUDA
bool dkb_tp_cuda_available(void) { return false; }

int dkb_tp_device_query(dkb_tp_device_info *out, dkb_error *err) {
    if (out) memset(out, 0, sizeof *out);
    return dkb_fail(err, DKB_ENOENT, "no GPU: this build has no CUDA backend");
}
#endif

void dkb_tp_resident(const dkb_tp *tp, dkb_tp_resident_stats *st) {
    if (!st) return;
    memset(st, 0, sizeof *st);
#ifdef DKB_HAVE_CUDA
    if (tp && tp->cuda) dkb__cuda_resident(tp, st);
#else
    (void)tp;
#endif
}

/* ---- allocation helpers for backends ---- */

dkb_tensor *dkb__tp_new(dkb_tp *tp, const char *op, dkb_tp_dtype t, int64_t n) {
    size_t es = dkb_tp_dtype_size(t);
    if (n < 0 || (uint64_t)n > (SIZE_MAX / 2) / (es ? es : 1))
        return dkb__tp_error(tp, DKB_ERANGE, "%s: %lld elements is too many", op, (long long)n);
    dkb_tensor *r = dkb__arena_alloc(&tp->arena, sizeof *r);
    size_t bytes = (size_t)(t == DKB_TP_STR ? n + 1 : n) * es;
    void *d = r ? tp->be->alloc(tp, bytes) : NULL;
    if (!d) return dkb__tp_error(tp, DKB_ENOMEM, "%s: out of memory (%zu bytes)", op, bytes);
    memset(r, 0, sizeof *r);
    r->dtype = t;
    r->n = n;
    r->data = d;
    return r;
}

dkb_tensor *dkb__tp_new_str(dkb_tp *tp, const char *op, int64_t n, int64_t nbytes) {
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_STR, n);
    if (!r) return NULL;
    if (nbytes < 0) return dkb__tp_error(tp, DKB_ERANGE, "%s: negative string bytes", op);
    r->bytes = tp->be->alloc(tp, (size_t)nbytes);
    if (!r->bytes) return dkb__tp_error(tp, DKB_ENOMEM, "%s: out of memory (%lld bytes)", op, (long long)nbytes);
    r->nbytes = nbytes;
    return r;
}

dkb_tensor *dkb__tp_view(dkb_tp *tp, const char *op, const dkb_tensor *a) {
    dkb_tensor *r = dkb__arena_alloc(&tp->arena, sizeof *r);
    if (!r) return dkb__tp_error(tp, DKB_ENOMEM, "%s: out of memory", op);
    *r = *a;
    return r;
}

void *dkb__tp_scratch(dkb_tp *tp, const char *op, size_t bytes) {
    void *p = dkb__arena_alloc(&tp->scratch, bytes);
    if (!p) dkb__tp_error(tp, DKB_ENOMEM, "%s: out of memory (%zu bytes of scratch)", op, bytes);
    return p;
}

/* ---- moving data in and out ---- */

/* The entry of col, created (untouched, no dictionary) on first sight;
 * NULL when out of memory. */
static dkb__column_entry *column_entry(dkb_tp *tp, const dkb_store_column *col) {
    for (dkb__column_entry *c = tp->columns; c; c = c->next)
        if (c->col == col) return c;
    dkb__column_entry *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->col = col;
    c->next = tp->columns;
    tp->columns = c;
    return c;
}

/* The DICT column's dictionary, built on first use; NULL when out of memory. */
static const dkb_tp_dict *column_dict(dkb__column_entry *c) {
    if (c->dict_built) return &c->dict;
    int size = dkb_column_dict_size(c->col);
    const char **str = calloc((size_t)size + 1, sizeof *str);
    size_t *len = calloc((size_t)size + 1, sizeof *len);
    if (!str || !len) {
        free(str);
        free(len);
        return NULL;
    }
    for (int i = 0; i < size; i++) {
        str[i] = dkb_column_dict_entry(c->col, i, &len[i]);
        if (!str[i]) str[i] = "";
    }
    c->dict.size = size;
    c->dict.str = str;
    c->dict.len = len;
    c->dict_built = true;
    return &c->dict;
}

void dkb_tp_touched(const dkb_tp *tp, int64_t *columns, int64_t *bytes) {
    int64_t n = 0, b = 0;
    for (const dkb__column_entry *c = tp ? tp->columns : NULL; c; c = c->next)
        if (c->touched) n++, b += c->bytes;
    if (columns) *columns = n;
    if (bytes) *bytes = b;
}

dkb_tensor *dkb_tp_column(dkb_tp *tp, const dkb_store_column *col) {
    if (!tp) return NULL;
    if (!col) return dkb__tp_error(tp, DKB_EINVAL, "column: NULL column");
    dkb__column_entry *entry = column_entry(tp, col);
    if (!entry) return dkb__tp_error(tp, DKB_ENOMEM, "column %s: out of memory", dkb_column_name(col));
    dkb_tensor t = {0};
    t.n = dkb_column_rows(col);
    switch (dkb_column_type(col)) {
    case DKB_TYPE_INT: t.dtype = dkb_column_dtype(col) == DKB_DTYPE_INT32 ? DKB_TP_I32 : DKB_TP_I64; break;
    case DKB_TYPE_DECIMAL: t.dtype = DKB_TP_I64; t.scale = 2; break;
    case DKB_TYPE_DATE: t.dtype = DKB_TP_I32; break;
    case DKB_TYPE_DICT:
        t.dtype = DKB_TP_U8;
        t.dict = column_dict(entry);
        if (!t.dict) return dkb__tp_error(tp, DKB_ENOMEM, "column %s: out of memory", dkb_column_name(col));
        break;
    case DKB_TYPE_TEXT: t.dtype = DKB_TP_STR; break;
    default: return dkb__tp_error(tp, DKB_EINVAL, "column %s: unknown type", dkb_column_name(col));
    }
    uint64_t text_bytes = 0;
    if (t.dtype == DKB_TP_STR) dkb_column_text_bytes(col, &text_bytes);
    entry->bytes = (t.dtype == DKB_TP_STR ? t.n + 1 : t.n) * (int64_t)dkb_tp_dtype_size(t.dtype) + (int64_t)text_bytes;
    entry->touched = true;
    for (int i = 0; i < tp->nhost_tables; i++)
        if (dkb_store_table_column(tp->host_tables[i], dkb_column_name(col)) == col)
            return dkb__tp_cpu.column(tp, col, &t);
    return tp->be->column(tp, col, &t);
}

void dkb__tp_host_tables(dkb_tp *tp, const dkb_store_table *const *t, int n) {
    if (!tp) return;
    tp->nhost_tables = 0;
    for (int i = 0; i < n && i < 2; i++)
        if (t[i]) tp->host_tables[tp->nhost_tables++] = t[i];
}

dkb_tensor *dkb_tp_from_host(dkb_tp *tp, dkb_tp_dtype t, int64_t n, const void *data) {
    if (!tp) return NULL;
    if ((unsigned)t >= DKB_TP_NTYPES) return dkb__tp_error(tp, DKB_EINVAL, "from_host: bad dtype %d", (int)t);
    if (n < 0 || (n > 0 && !data)) return dkb__tp_error(tp, DKB_EINVAL, "from_host: bad length or NULL data");
    if (t == DKB_TP_STR) {
        if (!data) return dkb_tp_from_host_str(tp, 0, NULL, NULL);
        const int64_t *off = data;
        if (off[0] != 0 || off[n] < 0) return dkb__tp_error(tp, DKB_EINVAL, "from_host: STR offsets must start at 0");
        return dkb_tp_from_host_str(tp, n, off, (const char *)(off + n + 1));
    }
    dkb_tensor *r = dkb__tp_new(tp, "from_host", t, n);
    if (!r) return NULL;
    if (n) tp->be->from_host(tp, r->data, data, (size_t)n * dkb_tp_dtype_size(t));
    return r;
}

dkb_tensor *dkb_tp_from_host_str(dkb_tp *tp, int64_t n, const int64_t *offsets, const char *bytes) {
    if (!tp) return NULL;
    if (n < 0 || (n > 0 && !offsets)) return dkb__tp_error(tp, DKB_EINVAL, "from_host_str: bad length or NULL offsets");
    int64_t z = offsets ? offsets[0] : 0, nb = offsets ? offsets[n] - z : 0;
    if (nb < 0 || (nb > 0 && !bytes)) return dkb__tp_error(tp, DKB_EINVAL, "from_host_str: bad offsets or NULL bytes");
    for (int64_t i = 0; i < n; i++)
        if (offsets[i + 1] < offsets[i])
            return dkb__tp_error(tp, DKB_EINVAL, "from_host_str: offsets decrease at %lld", (long long)i);
    dkb_tensor *r = dkb__tp_new_str(tp, "from_host_str", n, nb);
    if (!r) return NULL;
    SCRATCH_BEGIN(tp);
    int64_t *o = dkb__tp_scratch(tp, "from_host_str", (size_t)(n + 1) * 8);
    if (o) {
        for (int64_t i = 0; i <= n; i++) o[i] = offsets ? offsets[i] - z : 0;
        tp->be->from_host(tp, r->data, o, (size_t)(n + 1) * 8);
        if (nb) tp->be->from_host(tp, r->bytes, bytes + z, (size_t)nb);
    }
    SCRATCH_END(tp);
    return o ? r : NULL;
}

int dkb_tp_to_host(dkb_tp *tp, const dkb_tensor *a, void *dst) {
    if (!tp) return DKB_EINVAL;
    if (!a || (!dst && a->n)) {
        if (!tp->err.code) dkb__tp_error(tp, DKB_EINVAL, "to_host: NULL tensor or destination");
        return tp->err.code;
    }
    size_t bytes = (size_t)(a->dtype == DKB_TP_STR ? a->n + 1 : a->n) * dkb_tp_dtype_size(a->dtype);
    if (bytes) tp->be->to_host(tp, dst, a->data, bytes);
    return 0;
}

int dkb_tp_str_to_host(dkb_tp *tp, const dkb_tensor *a, char *dst) {
    if (!tp) return DKB_EINVAL;
    if (!a || a->dtype != DKB_TP_STR) {
        if (!tp->err.code) dkb__tp_error(tp, DKB_EINVAL, "str_to_host: NULL or non-STR tensor");
        return tp->err.code;
    }
    int64_t ends[2];
    tp->be->to_host(tp, &ends[0], a->data, 8);
    tp->be->to_host(tp, &ends[1], (const int64_t *)a->data + a->n, 8);
    if (ends[1] > ends[0]) {
        if (!dst) return dkb__tp_error(tp, DKB_EINVAL, "str_to_host: NULL destination"), tp->err.code;
        tp->be->to_host(tp, dst, a->bytes + ends[0], (size_t)(ends[1] - ends[0]));
    }
    return 0;
}

void *dkb_tp_host_copy(dkb_tp *tp, const dkb_tensor *a) {
    if (!tp) return NULL;
    if (!a) return dkb__tp_error(tp, DKB_EINVAL, "host_copy: NULL tensor");
    size_t bytes = (size_t)(a->dtype == DKB_TP_STR ? a->n + 1 : a->n) * dkb_tp_dtype_size(a->dtype);
    int64_t nb = 0;
    if (a->dtype == DKB_TP_STR) {
        int64_t ends[2];
        tp->be->to_host(tp, &ends[0], a->data, 8);
        tp->be->to_host(tp, &ends[1], (const int64_t *)a->data + a->n, 8);
        nb = ends[1] - ends[0];
    }
    char *p = dkb__arena_alloc(&tp->arena, bytes + (size_t)nb + 1);
    if (!p) return dkb__tp_error(tp, DKB_ENOMEM, "host_copy: out of memory (%zu bytes)", bytes);
    if (bytes) tp->be->to_host(tp, p, a->data, bytes);
    if (a->dtype == DKB_TP_STR && a->n >= 0) {
        int64_t *off = (int64_t *)p, z = off[0];
        for (int64_t i = 0; i <= a->n; i++) off[i] -= z;
        if (nb) tp->be->to_host(tp, p + bytes, a->bytes + z, (size_t)nb);
    }
    p[bytes + (size_t)nb] = '\0';
    return p;
}

static bool get_check(dkb_tp *tp, const char *op, const dkb_tensor *a, int64_t i, bool allow_f64) {
    if (!tp) return false;
    if (!a) {
        dkb__tp_error(tp, DKB_EINVAL, "%s: NULL tensor", op);
        return false;
    }
    if (i < 0 || i >= a->n) {
        dkb__tp_error(tp, DKB_ERANGE, "%s: index %lld outside [0, %lld)", op, (long long)i, (long long)a->n);
        return false;
    }
    if (a->dtype == DKB_TP_STR || (a->dtype == DKB_TP_F64 && !allow_f64)) {
        dkb__tp_error(tp, DKB_EINVAL, "%s: not an integer tensor", op);
        return false;
    }
    return true;
}

/* A host copy of a whole small device tensor, for element reads: finish
 * steps read results element by element, and one copy per tensor beats a
 * round trip per element. Tensors are immutable and their memory is not
 * reused before reset or dkb_tp_release, which empty the cache. NULL: read one element. */
static const void *host_cached(dkb_tp *tp, const dkb_tensor *a) {
    size_t bytes = (size_t)a->n * dkb_tp_dtype_size(a->dtype);
    if (tp->kind == DKB_TP_CPU || bytes > DKB__HOST_CACHE_MAX) return NULL;
    for (int k = 0; k < DKB__HOST_CACHE_SLOTS; k++)
        if (tp->hcache[k].dev == a->data && tp->hcache[k].bytes == bytes) return tp->hcache[k].host;
    void *host = dkb__arena_alloc(&tp->arena, bytes);
    if (!host) return NULL;
    tp->be->to_host(tp, host, a->data, bytes);
    dkb__host_cache_entry *e = &tp->hcache[tp->hcache_next++ % DKB__HOST_CACHE_SLOTS];
    e->dev = a->data;
    e->bytes = bytes;
    e->host = host;
    return host;
}

/* Element i copied to the host (buf holds 16 bytes), as a 1-element tensor. */
static dkb_tensor host_elem(dkb_tp *tp, const dkb_tensor *a, int64_t i, unsigned char *buf) {
    size_t es = dkb_tp_dtype_size(a->dtype);
    const char *cached = host_cached(tp, a);
    if (cached) memcpy(buf, cached + (size_t)i * es, es);
    else tp->be->to_host(tp, buf, (const char *)a->data + (size_t)i * es, es);
    dkb_tensor one = *a;
    one.n = 1;
    one.data = buf;
    return one;
}

/* Element i copied to the host and widened. */
static dkb__i128 host_elem_i128(dkb_tp *tp, const dkb_tensor *a, int64_t i) {
    unsigned char buf[16];
    dkb_tensor one = host_elem(tp, a, i, buf);
    return dkb__get_i128(&one, 0);
}

int64_t dkb_tp_get_i64(dkb_tp *tp, const dkb_tensor *a, int64_t i) {
    if (!get_check(tp, "get_i64", a, i, false)) return 0;
    dkb__i128 v = host_elem_i128(tp, a, i);
    if (v > INT64_MAX || v < INT64_MIN) {
        dkb__tp_error(tp, DKB_ERANGE, "get_i64: element %lld does not fit in int64", (long long)i);
        return 0;
    }
    return (int64_t)v;
}

__int128 dkb_tp_get_i128(dkb_tp *tp, const dkb_tensor *a, int64_t i) {
    if (!get_check(tp, "get_i128", a, i, false)) return 0;
    return host_elem_i128(tp, a, i);
}

double dkb_tp_get_f64(dkb_tp *tp, const dkb_tensor *a, int64_t i) {
    if (!get_check(tp, "get_f64", a, i, true)) return 0;
    if (a->dtype == DKB_TP_F64) {
        unsigned char buf[16];
        double d;
        dkb_tensor one = host_elem(tp, a, i, buf);
        memcpy(&d, one.data, sizeof d);
        return d;
    }
    dkb__i128 v = host_elem_i128(tp, a, i);
    if (a->scale > 0 && a->scale <= 38) return (double)v / (double)dkb__pow10_i128(a->scale);
    return (double)v;
}
