/* translate_util.c: the translator's plumbing: its allocations and first
 * error, reading DuckDB's JSON (types, constants), and the relation-wide
 * moves every operator uses (gather, filter, concatenate, rescale,
 * broadcast a constant). Contracts in translate_internal.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sql/plan.h"  // defines: dkb__sql_locate
#include "sql/translate_internal.h"

/* ---- memory and errors ---- */

void *tr_alloc(tr_ctx *x, size_t bytes) {
    if (x->nblocks == x->capblocks) {
        int cap = x->capblocks ? x->capblocks * 2 : 256;
        void **b = realloc(x->blocks, (size_t)cap * sizeof *b);
        if (!b) return tr_fail(x, DKB_ENOMEM, "out of memory");
        x->blocks = b, x->capblocks = cap;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) return tr_fail(x, DKB_ENOMEM, "out of memory");
    x->blocks[x->nblocks++] = p;
    return p;
}

char *tr_strndup(tr_ctx *x, const char *s, size_t n) {
    char *p = tr_alloc(x, n + 1);
    if (p) memcpy(p, s, n);
    return p;
}

void tr_free_all(tr_ctx *x) {
    for (int i = 0; i < x->nblocks; i++) free(x->blocks[i]);
    free(x->blocks);
    x->blocks = NULL;
    x->nblocks = x->capblocks = 0;
}

void *tr_fail(tr_ctx *x, int code, const char *fmt, ...) {
    if (x->failed) return NULL;
    x->failed = true;
    va_list ap;
    va_start(ap, fmt);
    dkb_vfail(x->err, code, fmt, ap);
    va_end(ap);
    return NULL;
}

void *tr_unsupported(tr_ctx *x, const cJSON *node, const char *fmt, ...) {
    if (x->failed) return NULL;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const cJSON *loc = tr_get(node, "query_location");
    if (cJSON_IsNumber(loc) && loc->valuedouble >= 0 && loc->valuedouble < 1e15 && x->sql) {
        int line, col;
        dkb__sql_locate(x->sql, (size_t)loc->valuedouble, &line, &col, NULL, NULL);
        return tr_fail(x, DKB_EINVAL, "not translatable to TensorPlan: %s (line %d, column %d)", what, line, col);
    }
    return tr_fail(x, DKB_EINVAL, "not translatable to TensorPlan: %s", what);
}

bool tr_bad(tr_ctx *x) {
    if (x->failed) return true;
    dkb_error e = {0};
    if (dkb_tp_status(x->tp, &e)) {
        tr_fail(x, e.code, "TensorPlan: %s", e.msg);
        return true;
    }
    return false;
}

void tr_trace(tr_ctx *x, const char *fmt, ...) {
    if (!x->trace) return;
    fprintf(x->trace, "%*s", 2 * x->depth, "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(x->trace, fmt, ap);
    va_end(ap);
    fputc('\n', x->trace);
}

/* ---- JSON ---- */

const cJSON *tr_get(const cJSON *o, const char *key) { return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL; }

const char *tr_str(const cJSON *o, const char *key) {
    const cJSON *v = tr_get(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

int64_t tr_int(const cJSON *o, const char *key, int64_t dflt) {
    const cJSON *v = tr_get(o, key);
    if (!cJSON_IsNumber(v)) return dflt;
    if (v->valuedouble >= 9.2e18) return -1; /* the unset sentinel 2^64 - 1 */
    return (int64_t)v->valuedouble;
}

tr_type tr_ty(tr_tyid id) {
    static const char *names[] = {"BOOLEAN", "INTEGER", "BIGINT", "HUGEINT", "DECIMAL",
                                  "DOUBLE",  "DATE",    "VARCHAR", "NULL",   "?"};
    tr_type t = {.id = id};
    snprintf(t.name, sizeof t.name, "%s", names[id]);
    return t;
}

tr_type tr_parse_type(const cJSON *t) {
    const char *id = tr_str(t, "id");
    static const struct {
        const char *name;
        tr_tyid id;
    } map[] = {{"BOOLEAN", TY_BOOL},   {"TINYINT", TY_INT}, {"SMALLINT", TY_INT}, {"INTEGER", TY_INT},
               {"BIGINT", TY_BIGINT},  {"HUGEINT", TY_HUGEINT}, {"DECIMAL", TY_DECIMAL}, {"DOUBLE", TY_DOUBLE},
               {"FLOAT", TY_DOUBLE},   {"DATE", TY_DATE},   {"VARCHAR", TY_VARCHAR}, {"NULL", TY_NULL},
               {"SQLNULL", TY_NULL},   {"UTINYINT", TY_INT}, {"USMALLINT", TY_INT}, {"UINTEGER", TY_BIGINT}};
    tr_type r = tr_ty(TY_OTHER);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(id, map[i].name)) r.id = map[i].id;
    snprintf(r.name, sizeof r.name, "%s", id);
    if (r.id == TY_DECIMAL) {
        const cJSON *ti = tr_get(t, "type_info");
        r.width = (int)tr_int(ti, "width", 18);
        r.scale = (int)tr_int(ti, "scale", 0);
    }
    return r;
}

bool tr_is_int(tr_tyid id) { return id == TY_BOOL || id == TY_INT || id == TY_BIGINT || id == TY_HUGEINT; }

/* A JSON integer, or a HUGEINT {upper, lower}. */
static bool json_i128(const cJSON *v, __int128 *out) {
    if (cJSON_IsNumber(v)) {
        *out = (__int128)v->valuedouble;
        return true;
    }
    const cJSON *up = tr_get(v, "upper"), *lo = tr_get(v, "lower");
    if (cJSON_IsNumber(up) && cJSON_IsNumber(lo)) {
        /* lower is an unsigned 64-bit number; cJSON reads it as a double,
         * exact only below 2^53, which the decimals we meet stay under */
        __int128 u = (__int128)up->valuedouble;
        unsigned __int128 l = (unsigned __int128)lo->valuedouble;
        *out = (__int128)(((unsigned __int128)u << 64) + l);
        return true;
    }
    return false;
}

bool tr_parse_const(tr_ctx *x, const cJSON *v, tr_const *out) {
    memset(out, 0, sizeof *out);
    out->ty = tr_parse_type(tr_get(v, "type"));
    out->null = cJSON_IsTrue(tr_get(v, "is_null"));
    if (out->null) return true;
    const cJSON *val = tr_get(v, "value");
    switch (out->ty.id) {
    case TY_BOOL: out->i = cJSON_IsTrue(val) ? 1 : (cJSON_IsNumber(val) ? (val->valuedouble != 0) : 0); return true;
    case TY_INT:
    case TY_BIGINT:
    case TY_HUGEINT:
    case TY_DECIMAL:
    case TY_DATE:
        if (json_i128(val, &out->i)) return true;
        break;
    case TY_DOUBLE:
        if (cJSON_IsNumber(val)) {
            out->f = val->valuedouble;
            return true;
        }
        break;
    case TY_VARCHAR:
        if (cJSON_IsString(val)) {
            out->s = val->valuestring;
            out->slen = strlen(val->valuestring);
            return true;
        }
        break;
    case TY_NULL: out->null = true; return true;
    default: break;
    }
    tr_unsupported(x, NULL, "a constant of type %s", out->ty.name);
    return false;
}

/* ---- tensors ---- */

dkb_tensor *tr_relabel(tr_ctx *x, const dkb_tensor *t, int scale, const dkb_tp_dict *dict) {
    if (!t) return NULL;
    dkb_tensor *r = tr_alloc(x, sizeof *r);
    if (!r) return NULL;
    *r = *t;
    r->scale = scale;
    r->dict = dict;
    dkb__rec_relabel(r, t, scale, dict);
    return r;
}

dkb_tensor *tr_full(tr_ctx *x, dkb_tp_dtype dt, int64_t n, int64_t value) {
    int cap = (int)(sizeof x->full / sizeof x->full[0]);
    for (int i = 0; i < x->nfull && i < cap; i++)
        if (x->full[i].dt == dt && x->full[i].n == n && x->full[i].value == value) return x->full[i].t;
    dkb_tensor *t = dkb_tp_full_i64(x->tp, dt, n, value);
    if (t) x->full[x->nfull < cap ? x->nfull++ : (int)(n % cap)] = (struct tr_full_memo){dt, n, value, t};
    return t;
}

dkb_tensor *tr_lut_mask(tr_ctx *x, const dkb_tensor *codes, const bool *lut) {
    if (!codes || !lut) return tr_bad(x), NULL;
    if (codes->dtype != DKB_TP_U8 || !codes->dict) return dkb_tp_lookup_mask(x->tp, codes, lut);
    int d = codes->dict->size, lo = -1, hi = -1, ntrue = 0;
    for (int i = 0; i < d; i++)
        if (lut[i]) {
            if (lo < 0) lo = i;
            hi = i, ntrue++;
        }
    dkb_tp *tp = x->tp;
    if (ntrue == 0 || ntrue != hi - lo + 1) {
        /* no true entry, or not one run: one false entry is a single NE
         * (the codes of a dictionary are below its size) */
        int nfalse = d - ntrue, f = -1;
        for (int i = 0; nfalse == 1 && i < d; i++)
            if (!lut[i]) f = i;
        if (nfalse == 1) return dkb_tp_cmp_i64(tp, codes, DKB_CMP_NE, f);
        return dkb_tp_lookup_mask(tp, codes, lut);
    }
    if (lo == hi) return dkb_tp_cmp_i64(tp, codes, DKB_CMP_EQ, lo);
    if (lo == 0) return dkb_tp_cmp_i64(tp, codes, DKB_CMP_LE, hi);
    return dkb_tp_between(tp, codes, lo, hi);
}

dkb_tensor *tr_arange(tr_ctx *x, int64_t n) {
    for (int i = 0; i < x->nident; i++)
        if (x->ident[i]->n == n) return (dkb_tensor *)x->ident[i];
    dkb_tensor *t = dkb_tp_arange(x->tp, n);
    if (!t) return tr_bad(x), NULL;
    tr_bound_set(x, t, 0, n > 0 ? n - 1 : 0);
    tr_distinct_set(x, t);
    int cap = (int)(sizeof x->ident / sizeof x->ident[0]);
    x->ident[x->nident < cap ? x->nident++ : (int)(n % cap)] = t;
    return t;
}

void tr_maxlen_set(tr_ctx *x, const dkb_tensor *t, int maxlen) {
    int cap = (int)(sizeof x->maxlen / sizeof x->maxlen[0]);
    if (t) x->maxlen[x->nmaxlen < cap ? x->nmaxlen++ : (int)(t->n % cap)] = (struct tr_maxlen){t, maxlen};
}

int tr_maxlen_get(tr_ctx *x, const dkb_tensor *t) {
    for (int i = 0; i < x->nmaxlen; i++)
        if (x->maxlen[i].t == t) return x->maxlen[i].maxlen;
    return INT32_MAX;
}

bool tr_is_identity(tr_ctx *x, const dkb_tensor *rows, int64_t n) {
    if (!rows || rows->n != n) return false;
    for (int i = 0; i < x->nident; i++)
        if (x->ident[i]->data == rows->data && x->ident[i]->n == n && rows->dtype == DKB_TP_I64) return true;
    return false;
}

bool tr_full_value(tr_ctx *x, const dkb_tensor *t, int64_t *value) {
    int cap = (int)(sizeof x->full / sizeof x->full[0]);
    for (int i = 0; t && i < x->nfull && i < cap; i++)
        if (x->full[i].t == t) {
            *value = x->full[i].value;
            return true;
        }
    return false;
}

dkb_tensor *tr_ones(tr_ctx *x, int64_t n) { return tr_full(x, DKB_TP_BOOL, n, 1); }

dkb_tensor *tr_valid_or_ones(tr_ctx *x, const tr_col *c, int64_t n) { return c->valid ? c->valid : tr_ones(x, n); }

dkb_tensor *tr_and_valid(tr_ctx *x, dkb_tensor *a, dkb_tensor *b) {
    if (!a) return b;
    if (!b) return a;
    return dkb_tp_and(x->tp, a, b);
}

const dkb_tp_dict *tr_dict_of(tr_ctx *x, const char *const *s, const size_t *len, int n) {
    dkb_tp_dict *d = tr_alloc(x, sizeof *d);
    const char **str = tr_alloc(x, (size_t)(n + 1) * sizeof *str);
    size_t *l = tr_alloc(x, (size_t)(n + 1) * sizeof *l);
    if (!d || !str || !l) return NULL;
    for (int i = 0; i < n; i++) {
        str[i] = tr_strndup(x, s[i], len[i]);
        l[i] = len[i];
        if (!str[i]) return NULL;
    }
    d->size = n;
    d->str = str;
    d->len = l;
    return d;
}

bool tr_broadcast(tr_ctx *x, const tr_const *k, int64_t n, tr_col *out) {
    dkb_tp *tp = x->tp;
    memset(out, 0, sizeof *out);
    out->ty = k->ty;
    if (k->null) {
        if (out->ty.id == TY_NULL) out->ty = tr_ty(TY_INT);
        if (out->ty.id == TY_VARCHAR) {
            const char *e = "";
            size_t zero = 0;
            out->v = tr_relabel(x, tr_full(x, DKB_TP_U8, n, 0), 0, tr_dict_of(x, &e, &zero, 1));
        } else if (out->ty.id == TY_DOUBLE) {
            out->v = dkb_tp_cast(tp, tr_full(x, DKB_TP_I64, n, 0), DKB_TP_F64);
        } else {
            out->v = tr_relabel(x, tr_full(x, DKB_TP_I64, n, 0), out->ty.scale, NULL);
        }
        out->valid = tr_full(x, DKB_TP_BOOL, n, 0);
        return !tr_bad(x);
    }
    switch (k->ty.id) {
    case TY_BOOL: out->v = tr_full(x, DKB_TP_BOOL, n, (int64_t)k->i); break;
    case TY_INT:
    case TY_DATE: out->v = tr_full(x, DKB_TP_I32, n, (int64_t)k->i); break;
    case TY_BIGINT:
    case TY_HUGEINT:
    case TY_DECIMAL:
        if (k->i > INT64_MAX || k->i < INT64_MIN) {
            tr_unsupported(x, NULL, "a constant beyond 64 bits");
            return false;
        }
        out->v = tr_relabel(x, tr_full(x, DKB_TP_I64, n, (int64_t)k->i), k->ty.scale, NULL);
        break;
    case TY_DOUBLE: {
        double *h = malloc((size_t)(n ? n : 1) * sizeof *h);
        if (!h) {
            tr_fail(x, DKB_ENOMEM, "out of memory");
            return false;
        }
        for (int64_t i = 0; i < n; i++) h[i] = k->f;
        out->v = dkb_tp_from_host(tp, DKB_TP_F64, n, h);
        free(h);
        break;
    }
    case TY_VARCHAR: {
        const dkb_tp_dict *d = tr_dict_of(x, &k->s, &k->slen, 1);
        out->v = tr_relabel(x, tr_full(x, DKB_TP_U8, n, 0), 0, d);
        break;
    }
    default: tr_unsupported(x, NULL, "a constant of type %s", k->ty.name); return false;
    }
    return !tr_bad(x);
}

/* ---- relations ---- */

tr_rel *tr_rel_new(tr_ctx *x, int ncols, int64_t n) {
    tr_rel *r = tr_alloc(x, sizeof *r);
    if (!r) return NULL;
    r->c = tr_alloc(x, (size_t)(ncols ? ncols : 1) * sizeof *r->c);
    if (!r->c) return NULL;
    r->ncols = ncols;
    r->n = n;
    return r;
}

/* Composed row numbers are lazy: rows[idx] is a header that stands for
 * the gather until a column reads it (tr_rows), so a join composes no
 * row numbers for the relations whose columns are never read again (a
 * chain of joins otherwise gathers every relation's row numbers at every
 * join). The header's data points at lazy_mark. */
static const char lazy_mark = 0;

typedef struct tr_lazy_rows {
    dkb_tensor hdr;               /* first: the tensor the columns hold */
    dkb_tensor *rows;             /* rows (itself lazy or not) ... */
    const dkb_tensor *idx;        /* ... composed with idx */
    dkb_tensor *real;             /* the gather, once made */
} tr_lazy_rows;

dkb_tensor *tr_rows(tr_ctx *x, dkb_tensor *r) {
    if (!r || r->data != (const void *)&lazy_mark) return r;
    tr_lazy_rows *z = (tr_lazy_rows *)r;
    if (!z->real) {
        dkb_tensor *base = tr_rows(x, z->rows);
        z->real = base ? dkb_tp_gather(x->tp, base, z->idx, -1) : NULL;
        if (!z->real) tr_bad(x);
        else {
            /* row numbers from row numbers: within base's bounds, and -1 only where idx misses */
            int64_t blo, bhi, ilo, ihi;
            if (tr_bound_get(x, base, &blo, &bhi) && tr_bound_get(x, z->idx, &ilo, &ihi))
                tr_bound_set(x, z->real, ilo >= 0 ? blo : (blo < -1 ? blo : -1), bhi);
            tr_distinct_derive(x, base, z->idx, z->real);
        }
    }
    return z->real;
}

static dkb_tensor *lazy_rows(tr_ctx *x, dkb_tensor *rows, const dkb_tensor *idx) {
    tr_lazy_rows *z = tr_alloc(x, sizeof *z);
    if (!z) return NULL;
    z->hdr.dtype = DKB_TP_I64;
    z->hdr.n = idx->n;
    z->hdr.data = (void *)&lazy_mark;
    z->rows = rows, z->idx = idx;
    return &z->hdr;
}

bool tr_col_gather(tr_ctx *x, const tr_col *c, int64_t n, const dkb_tensor *idx, bool may_miss, tr_col *out) {
    *out = *c;
    /* through the identity (a cross product's arange): the same rows */
    if (!may_miss && tr_is_identity(x, idx, n)) return true;
    if (c->rows && !c->miss && c->rows->data != (const void *)&lazy_mark && tr_is_identity(x, c->rows, c->rows->n) &&
        c->v && c->v->n == c->rows->n) {
        /* the identity composed with idx is idx */
        out->rows = (dkb_tensor *)idx;
        out->miss = may_miss;
        return true;
    }
    if (c->rows) { /* compose: row i is c's row idx[i] (-1 stays -1); once per (rows, idx) */
        out->rows = NULL;
        for (int i = 0; i < x->nrmemo && !out->rows; i++)
            if (x->rmemo[i].rows == c->rows && x->rmemo[i].idx == idx) out->rows = x->rmemo[i].out;
        if (!out->rows) {
            out->rows = lazy_rows(x, c->rows, idx);
            int n_memo = (int)(sizeof x->rmemo / sizeof x->rmemo[0]);
            if (out->rows) x->rmemo[x->nrmemo < n_memo ? x->nrmemo++ : (int)(out->rows->n % n_memo)] =
                (struct tr_rows_memo){c->rows, idx, out->rows};
        }
        out->miss = c->miss || may_miss;
    } else {
        out->rows = (dkb_tensor *)idx;
        out->miss = may_miss;
    }
    return out->rows != NULL || !tr_bad(x);
}

static void ready_note(tr_ctx *x, const dkb_tensor *v, const dkb_tensor *valid, const dkb_tensor *rows, bool miss,
                       const tr_col *c) {
    int cap = (int)(sizeof x->ready / sizeof x->ready[0]);
    x->ready[x->nready < cap ? x->nready++ : (int)(rows->n % cap)] =
        (struct tr_ready_memo){v, valid, rows, miss, c->v, c->valid};
}

bool tr_col_ready(tr_ctx *x, tr_col *c) {
    if (!c->rows) return true;
    dkb_tensor *rows = c->rows = tr_rows(x, c->rows);
    if (!rows) return false;
    if (!c->miss && c->v && tr_is_identity(x, rows, c->v->n)) { /* every row, in order */
        c->rows = NULL;
        return true;
    }
    /* the same column made ready before (tensors are immutable: same values) */
    const dkb_tensor *v0 = c->v, *valid0 = c->valid;
    bool miss0 = c->miss;
    for (int i = 0; i < x->nready; i++) {
        const struct tr_ready_memo *m = &x->ready[i];
        if (m->v == v0 && m->valid == valid0 && m->rows == rows && m->miss == miss0) {
            c->v = m->out_v, c->valid = m->out_valid, c->rows = NULL, c->miss = false;
            return true;
        }
    }
    /* the rows of a filter over c's own rows: a compress (streaming) gives
     * the same values as the gather (ascending rows) */
    for (int i = 0; i < x->nsmemo && !c->miss; i++) {
        const dkb_tensor *mask = x->smemo[i].mask;
        if (x->smemo[i].rows != rows || c->v->n != mask->n || (c->valid && c->valid->n != mask->n)) continue;
        dkb_tensor *v = dkb_tp_compress(x->tp, c->v, mask);
        dkb_tensor *valid = c->valid ? dkb_tp_compress(x->tp, c->valid, mask) : NULL;
        if (!v || tr_bad(x)) return false;
        tr_bound_derive(x, c->v, v, false);
        tr_distinct_derive(x, c->v, NULL, v);
        c->v = v, c->valid = valid, c->rows = NULL;
        ready_note(x, v0, valid0, rows, miss0, c);
        return true;
    }
    dkb_tensor *v = dkb_tp_gather(x->tp, c->v, rows, 0);
    /* a missed row (-1) is NULL; with every source row valid that is
     * rows >= 0, one comparison instead of a column of ones gathered */
    dkb_tensor *valid = c->miss ? (c->valid ? dkb_tp_gather(x->tp, c->valid, rows, 0) : dkb_tp_cmp_i64(x->tp, rows, DKB_CMP_GE, 0))
                      : c->valid ? dkb_tp_gather(x->tp, c->valid, rows, 0) : NULL;
    if (!v || tr_bad(x)) return false;
    tr_bound_derive(x, c->v, v, c->miss);
    if (!c->miss) tr_distinct_derive(x, c->v, rows, v);
    c->v = v, c->valid = valid, c->rows = NULL, c->miss = false;
    ready_note(x, v0, valid0, rows, miss0, c);
    return true;
}

tr_col *tr_rel_ready_cols(tr_ctx *x, const tr_rel *r) {
    tr_col *c = tr_alloc(x, (size_t)(r->ncols ? r->ncols : 1) * sizeof *c);
    if (!c) return NULL;
    for (int i = 0; i < r->ncols; i++) {
        c[i] = r->c[i];
        if (!tr_col_ready(x, &c[i])) return NULL;
    }
    return c;
}

tr_rel *tr_rel_gather(tr_ctx *x, const tr_rel *r, const dkb_tensor *idx, bool may_miss) {
    if (!idx) return tr_bad(x), NULL;
    tr_rel *o = tr_rel_new(x, r->ncols, idx->n);
    if (!o) return NULL;
    for (int i = 0; i < r->ncols; i++) tr_col_gather(x, &r->c[i], r->n, idx, may_miss, &o->c[i]);
    return tr_bad(x) ? NULL : o;
}

tr_rel *tr_rel_filter(tr_ctx *x, const tr_rel *r, const dkb_tensor *mask) {
    if (!mask) return tr_bad(x), NULL;
    dkb_tensor *rows = dkb_tp_nonzero(x->tp, mask);
    if (rows) { /* ascending row numbers of r */
        tr_bound_set(x, rows, 0, r->n > 0 ? r->n - 1 : 0);
        tr_distinct_set(x, rows);
    }
    int n_memo = (int)(sizeof x->smemo / sizeof x->smemo[0]);
    if (rows && mask->dtype == DKB_TP_BOOL)
        x->smemo[x->nsmemo < n_memo ? x->nsmemo++ : (int)(rows->n % n_memo)] = (struct tr_sel_memo){rows, mask};
    return tr_rel_gather(x, r, rows, false);
}

dkb_tensor *tr_truth(tr_ctx *x, const tr_col *c) {
    dkb_tensor *m = c->v && c->v->dtype != DKB_TP_BOOL ? dkb_tp_cast(x->tp, c->v, DKB_TP_BOOL) : c->v;
    return c->valid ? dkb_tp_and(x->tp, m, c->valid) : m;
}

/* Host concatenation of two tensors of one dtype (STR: offsets rebased). */
static dkb_tensor *concat_host(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b);

/* concat_host, recorded for --emit c as one step, concat(tp, a, b) (emit_rec.h). */
static dkb_tensor *concat_tensor(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b) {
    dkb__rec_pause();
    dkb_tensor *r = concat_host(x, a, b);
    dkb__rec_resume();
    if (r) dkb__rec_concat(r, a, b);
    return r;
}

static dkb_tensor *concat_host(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b) {
    dkb_tp *tp = x->tp;
    if (!a || !b) return NULL;
    if (a->dtype != b->dtype) return tr_fail(x, DKB_EINTERNAL, "concatenating tensors of two dtypes");
    if (a->dtype == DKB_TP_STR) {
        int64_t *ha = dkb_tp_host_copy(tp, a), *hb = dkb_tp_host_copy(tp, b);
        if (!ha || !hb) return NULL;
        int64_t n = a->n + b->n, na = ha[a->n], nb = hb[b->n];
        int64_t *off = malloc((size_t)(n + 1) * sizeof *off);
        char *bytes = malloc((size_t)(na + nb + 1));
        if (!off || !bytes) {
            free(off), free(bytes);
            return tr_fail(x, DKB_ENOMEM, "out of memory");
        }
        for (int64_t i = 0; i <= a->n; i++) off[i] = ha[i];
        for (int64_t i = 1; i <= b->n; i++) off[a->n + i] = na + hb[i];
        memcpy(bytes, (char *)(ha + a->n + 1), (size_t)na);
        memcpy(bytes + na, (char *)(hb + b->n + 1), (size_t)nb);
        dkb_tensor *r = dkb_tp_from_host_str(tp, n, off, bytes);
        free(off), free(bytes);
        return r;
    }
    const dkb_tp_dict *dict = a->dict == b->dict ? a->dict : NULL;
    size_t es = dkb_tp_dtype_size(a->dtype);
    char *ha = a->n ? dkb_tp_host_copy(tp, a) : NULL, *hb = b->n ? dkb_tp_host_copy(tp, b) : NULL;
    if ((a->n && !ha) || (b->n && !hb)) return NULL;
    char *buf = malloc(es * (size_t)(a->n + b->n) + 1);
    if (!buf) return tr_fail(x, DKB_ENOMEM, "out of memory");
    if (a->n) memcpy(buf, ha, es * (size_t)a->n);
    if (b->n) memcpy(buf + es * (size_t)a->n, hb, es * (size_t)b->n);
    dkb_tensor *r = dkb_tp_from_host(tp, a->dtype, a->n + b->n, buf);
    free(buf);
    return tr_relabel(x, r, a->scale, dict); /* from_host gives scale 0 */
}

/* Rows of a then rows of b (I64, scale 0: the joins' row numbers). On the
 * CPU through host memory (concat_tensor: memcpy, cheapest there); on
 * another backend on the device, not through host memory: position i < na
 * reads a[i], the others b[i - na] (gathers with -1 for the positions of
 * the other part, then a where), the same values without a round trip
 * over PCIe (Q13's RIGHT join appended 15M-row tensors that way at SF 10:
 * 383 ms against the hand plan's 5 ms on an H200). */
dkb_tensor *tr_concat_i64(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b) {
    dkb_tp *tp = x->tp;
    if (!a || !b) return tr_bad(x), NULL;
    dkb_tensor *ca = dkb_tp_cast(tp, a, DKB_TP_I64), *cb = dkb_tp_cast(tp, b, DKB_TP_I64);
    if (tr_bad(x)) return NULL;
    if (dkb_tp_backend_of(tp) == DKB_TP_CPU) return concat_tensor(x, ca, cb);
    int64_t na = ca->n, nb = cb->n, n = na + nb;
    if (nb == 0) return ca;
    if (na == 0) return cb;
    dkb_tensor *idx = dkb_tp_arange(tp, n);
    dkb_tensor *in_a = dkb_tp_cmp_i64(tp, idx, DKB_CMP_LT, na);
    dkb_tensor *none = dkb_tp_full_i64(tp, DKB_TP_I64, n, -1);
    dkb_tensor *ia = dkb_tp_where(tp, in_a, idx, none);
    dkb_tensor *ib = dkb_tp_where(tp, in_a, none, dkb_tp_arith_i64(tp, idx, DKB_OP_SUB, na, 0));
    dkb_tensor *r = dkb_tp_where(tp, in_a, dkb_tp_gather(tp, ca, ia, 0), dkb_tp_gather(tp, cb, ib, 0));
    return tr_bad(x) ? NULL : r;
}

/* Bring two columns of one SQL type to one encoding (dtype, scale, dictionary). */
static bool unify(tr_ctx *x, tr_col *a, int64_t na, tr_col *b, int64_t nb) {
    (void)na, (void)nb;
    if (a->ty.id == TY_VARCHAR || b->ty.id == TY_VARCHAR) {
        if (a->v->dtype == DKB_TP_U8 && b->v->dtype == DKB_TP_U8 && a->v->dict == b->v->dict) return true;
        /* two dictionaries, or free text: both as free text */
        tr_hstr ha, hb;
        if (!tr_host_strings(x, a, &ha) || !tr_host_strings(x, b, &hb)) return false;
        dkb_tensor *sa = tr_str_from_host(x, &ha), *sb = tr_str_from_host(x, &hb);
        if (!sa || !sb) return false;
        a->v = sa, b->v = sb;
        if (a->v->dtype != b->v->dtype) return tr_fail(x, DKB_EINTERNAL, "string encodings differ"), false;
        return true;
    }
    if (a->v->dtype == DKB_TP_F64 || b->v->dtype == DKB_TP_F64) {
        a->v = dkb_tp_cast(x->tp, a->v, DKB_TP_F64);
        b->v = dkb_tp_cast(x->tp, b->v, DKB_TP_F64);
        return !tr_bad(x);
    }
    int s = a->v->scale > b->v->scale ? a->v->scale : b->v->scale;
    a->v = tr_rescale(x, a->v, s);
    b->v = tr_rescale(x, b->v, s);
    dkb_tp_dtype dt = a->v && b->v && (a->v->dtype == DKB_TP_I128 || b->v->dtype == DKB_TP_I128) ? DKB_TP_I128
                                                                                                 : DKB_TP_I64;
    if (a->v && a->v->dtype == DKB_TP_BOOL && b->v && b->v->dtype == DKB_TP_BOOL) dt = DKB_TP_BOOL;
    a->v = dkb_tp_cast(x->tp, a->v, dt);
    b->v = dkb_tp_cast(x->tp, b->v, dt);
    return !tr_bad(x);
}

tr_rel *tr_rel_concat(tr_ctx *x, const tr_rel *a, const tr_rel *b) {
    if (a->ncols != b->ncols) return tr_fail(x, DKB_EINTERNAL, "concatenating relations of %d and %d columns",
                                             a->ncols, b->ncols);
    tr_rel *o = tr_rel_new(x, a->ncols, a->n + b->n);
    if (!o) return NULL;
    for (int i = 0; i < a->ncols; i++) {
        tr_col ca = a->c[i], cb = b->c[i];
        if (!tr_col_ready(x, &ca) || !tr_col_ready(x, &cb) || !unify(x, &ca, a->n, &cb, b->n)) return NULL;
        o->c[i].ty = a->c[i].ty.id == TY_NULL ? b->c[i].ty : a->c[i].ty;
        o->c[i].v = concat_tensor(x, ca.v, cb.v);
        if (o->c[i].v && ca.v->dict) o->c[i].v = tr_relabel(x, o->c[i].v, 0, ca.v->dict);
        if (ca.valid || cb.valid)
            o->c[i].valid = concat_tensor(x, tr_valid_or_ones(x, &ca, a->n), tr_valid_or_ones(x, &cb, b->n));
    }
    return tr_bad(x) ? NULL : o;
}

static __int128 pow10_i128(int k) {
    __int128 p = 1;
    while (k-- > 0) p *= 10;
    return p;
}

dkb_tensor *tr_rescale(tr_ctx *x, const dkb_tensor *t, int scale) {
    if (!t) return NULL;
    if (t->dtype == DKB_TP_F64 || t->scale == scale) return (dkb_tensor *)t;
    if (scale > t->scale) {
        int k = scale - t->scale;
        if (k > 18) return tr_fail(x, DKB_ERANGE, "rescaling a decimal by 10^%d", k);
        dkb_tensor *m = dkb_tp_arith_i64(x->tp, t, DKB_OP_MUL, (int64_t)pow10_i128(k), 0);
        return tr_relabel(x, m, scale, NULL);
    }
    /* down: on the host, rounded half away from zero */
    __int128 p = pow10_i128(t->scale - scale);
    int64_t n = t->n;
    __int128 *h = tr_host_i128(x, t);
    if (!h) return NULL;
    for (int64_t i = 0; i < n; i++) {
        __int128 v = h[i], q = v / p, r = v % p;
        if (r < 0 ? -2 * r >= p : 2 * r >= p) q += v < 0 ? -1 : 1;
        h[i] = q;
    }
    dkb_tensor *r = dkb_tp_from_host(x->tp, DKB_TP_I128, n, h);
    return tr_relabel(x, r, scale, NULL);
}
