/* translate_host.c: what the translator does on the host, for either
 * backend: the row strings of a VARCHAR column, integer keys for
 * strings and doubles (dense ids from one hash table, so that a join's two
 * sides agree), widened copies of integer tensors, and byte-wise string
 * comparison and LIKE. TensorPlan groups and joins integer keys only; a
 * dictionary-coded column needs none of this (its codes are the keys). */
#include <stdlib.h>
#include <string.h>

#include "sql/translate_internal.h"

int tr_strcmp(const char *a, size_t la, const char *b, size_t lb) {
    int c = memcmp(a, b, la < lb ? la : lb);
    if (c) return c;
    return la < lb ? -1 : la > lb;
}

bool tr_like(const char *s, size_t n, const char *p, size_t pn) {
    /* greedy with backtracking to the last %: linear in practice */
    size_t i = 0, j = 0, star = (size_t)-1, mark = 0;
    while (i < n) {
        if (j < pn && (p[j] == '_' || (p[j] != '%' && p[j] == s[i]))) {
            i++, j++;
        } else if (j < pn && p[j] == '%') {
            star = j++, mark = i;
        } else if (star != (size_t)-1) {
            j = star + 1, i = ++mark;
        } else {
            return false;
        }
    }
    while (j < pn && p[j] == '%') j++;
    return j == pn;
}

__int128 *tr_host_i128(tr_ctx *x, const dkb_tensor *t) {
    if (!t) return NULL;
    __int128 *h = tr_alloc(x, (size_t)(t->n ? t->n : 1) * sizeof *h);
    const void *src = t->n ? dkb_tp_host_copy(x->tp, t) : NULL;
    if (!h || (t->n && !src)) return tr_bad(x), NULL;
    for (int64_t i = 0; i < t->n; i++) {
        switch (t->dtype) {
        case DKB_TP_BOOL:
        case DKB_TP_U8: h[i] = ((const uint8_t *)src)[i]; break;
        case DKB_TP_I8: h[i] = ((const int8_t *)src)[i]; break;
        case DKB_TP_I16: h[i] = ((const int16_t *)src)[i]; break;
        case DKB_TP_I32: h[i] = ((const int32_t *)src)[i]; break;
        case DKB_TP_I64: h[i] = ((const int64_t *)src)[i]; break;
        case DKB_TP_I128: h[i] = ((const __int128 *)src)[i]; break;
        default: return tr_fail(x, DKB_EINTERNAL, "an integer tensor was expected");
        }
    }
    return h;
}

int64_t *tr_host_i64(tr_ctx *x, const dkb_tensor *t) {
    __int128 *w = tr_host_i128(x, t);
    if (!w) return NULL;
    int64_t *h = tr_alloc(x, (size_t)(t->n ? t->n : 1) * sizeof *h);
    if (!h) return NULL;
    for (int64_t i = 0; i < t->n; i++) {
        if (w[i] > INT64_MAX || w[i] < INT64_MIN) return tr_fail(x, DKB_ERANGE, "a value beyond 64 bits");
        h[i] = (int64_t)w[i];
    }
    return h;
}

double *tr_host_f64(tr_ctx *x, const dkb_tensor *t) {
    if (!t) return NULL;
    const dkb_tensor *f = t->dtype == DKB_TP_F64 ? t : dkb_tp_cast(x->tp, t, DKB_TP_F64);
    double *h = tr_alloc(x, (size_t)(t->n ? t->n : 1) * sizeof *h);
    if (!f || !h) return tr_bad(x), NULL;
    if (t->n && dkb_tp_to_host(x->tp, f, h)) return tr_bad(x), NULL;
    return h;
}

bool tr_host_strings(tr_ctx *x, const tr_col *c, tr_hstr *out) {
    const dkb_tensor *t = c->v;
    int64_t n = t->n;
    out->n = n;
    out->p = tr_alloc(x, (size_t)(n ? n : 1) * sizeof *out->p);
    out->len = tr_alloc(x, (size_t)(n ? n : 1) * sizeof *out->len);
    if (!out->p || !out->len) return false;
    if (t->dtype == DKB_TP_STR) {
        const int64_t *off = dkb_tp_host_copy(x->tp, t); /* n + 1 offsets, then the bytes */
        if (!off) return tr_bad(x), false;
        const char *bytes = (const char *)(off + n + 1);
        for (int64_t i = 0; i < n; i++) out->p[i] = bytes + off[i], out->len[i] = (size_t)(off[i + 1] - off[i]);
        return true;
    }
    if (t->dtype == DKB_TP_U8 && t->dict) {
        const uint8_t *codes = n ? dkb_tp_host_copy(x->tp, t) : NULL;
        if (n && !codes) return tr_bad(x), false;
        for (int64_t i = 0; i < n; i++) {
            int k = codes[i] < t->dict->size ? codes[i] : 0;
            out->p[i] = t->dict->size ? t->dict->str[k] : "";
            out->len[i] = t->dict->size ? t->dict->len[k] : 0;
        }
        return true;
    }
    tr_fail(x, DKB_EINTERNAL, "a string column without strings");
    return false;
}

dkb_tensor *tr_str_from_host(tr_ctx *x, const tr_hstr *h) {
    size_t total = 0;
    for (int64_t i = 0; i < h->n; i++) total += h->len[i];
    int64_t *off = malloc((size_t)(h->n + 1) * sizeof *off);
    char *bytes = malloc(total + 1);
    if (!off || !bytes) {
        free(off), free(bytes);
        return tr_fail(x, DKB_ENOMEM, "out of memory");
    }
    off[0] = 0;
    for (int64_t i = 0; i < h->n; i++) {
        memcpy(bytes + off[i], h->p[i], h->len[i]);
        off[i + 1] = off[i] + (int64_t)h->len[i];
    }
    dkb_tensor *r = dkb_tp_from_host_str(x->tp, h->n, off, bytes);
    free(off), free(bytes);
    return r;
}

/* ---- dense ids of byte strings: one table over one or two inputs ---- */

typedef struct idmap {
    int64_t cap, used;
    int64_t *slot;       /* -1 empty, else an id */
    const char **kp;     /* per id */
    size_t *kl;
} idmap;

static uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static bool idmap_init(tr_ctx *x, idmap *m, int64_t n) {
    int64_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    m->cap = cap, m->used = 0;
    m->slot = malloc((size_t)cap * sizeof *m->slot);
    m->kp = malloc((size_t)(n + 1) * sizeof *m->kp);
    m->kl = malloc((size_t)(n + 1) * sizeof *m->kl);
    if (!m->slot || !m->kp || !m->kl) {
        free(m->slot), free(m->kp), free(m->kl);
        tr_fail(x, DKB_ENOMEM, "out of memory");
        return false;
    }
    memset(m->slot, 0xff, (size_t)cap * sizeof *m->slot);
    return true;
}

static int64_t idmap_id(idmap *m, const char *p, size_t n) {
    uint64_t h = hash_bytes(p, n);
    for (int64_t s = (int64_t)(h & (uint64_t)(m->cap - 1));; s = (s + 1) & (m->cap - 1)) {
        int64_t id = m->slot[s];
        if (id < 0) {
            m->slot[s] = id = m->used++;
            m->kp[id] = p, m->kl[id] = n;
            return id;
        }
        if (m->kl[id] == n && !memcmp(m->kp[id], p, n)) return id;
    }
}

static void idmap_free(idmap *m) { free(m->slot), free(m->kp), free(m->kl); }

/* The items of a column as byte strings: strings, or the 8 bytes of a double. */
static bool items(tr_ctx *x, const tr_col *c, tr_hstr *h) {
    if (c->ty.id == TY_VARCHAR) return tr_host_strings(x, c, h);
    double *f = tr_host_f64(x, c->v);
    if (!f) return false;
    h->n = c->v->n;
    h->p = tr_alloc(x, (size_t)(h->n ? h->n : 1) * sizeof *h->p);
    h->len = tr_alloc(x, (size_t)(h->n ? h->n : 1) * sizeof *h->len);
    if (!h->p || !h->len) return false;
    for (int64_t i = 0; i < h->n; i++) {
        if (f[i] == 0) f[i] = 0; /* -0.0 is 0.0 */
        h->p[i] = (const char *)&f[i], h->len[i] = sizeof(double);
    }
    return true;
}

static dkb_tensor *ids_of(tr_ctx *x, idmap *m, const tr_hstr *h) {
    int64_t *ids = malloc((size_t)(h->n ? h->n : 1) * sizeof *ids);
    if (!ids) return tr_fail(x, DKB_ENOMEM, "out of memory");
    for (int64_t i = 0; i < h->n; i++) ids[i] = idmap_id(m, h->p[i], h->len[i]);
    dkb_tensor *r = dkb_tp_from_host(x->tp, DKB_TP_I64, h->n, ids);
    free(ids);
    return r;
}

static bool needs_ids(const tr_col *c) {
    return (c->ty.id == TY_VARCHAR && c->v->dtype == DKB_TP_STR) || c->v->dtype == DKB_TP_F64;
}

/* The key of free text whose strings are all short: packed on the backend
 * (dkb_tp_str_pack: one pass and one flag read), so no string goes to the
 * host (TPC-H Q22's substring(c_phone, 1, 2)); NULL, no error, when a
 * string is too long. */
static dkb_tensor *packed_key(tr_ctx *x, const tr_col *c) {
    if (c->ty.id != TY_VARCHAR || c->v->dtype != DKB_TP_STR) return NULL;
    bool fits = false;
    dkb_tensor *k = dkb_tp_str_pack(x->tp, c->v, &fits);
    if (!k && fits) tr_bad(x);
    if (k) tr_trace(x, "free-text key of strings of at most %d bytes packed into integers", DKB_TP_STR_PACK_MAX);
    return k;
}

dkb_tensor *tr_key_of(tr_ctx *x, const tr_col *c, int64_t n) {
    (void)n;
    if (!c->v) return NULL;
    dkb_tensor *packed = packed_key(x, c);
    if (packed || tr_bad(x)) return packed;
    if (needs_ids(c)) {
        tr_hstr h;
        idmap m;
        if (!items(x, c, &h) || !idmap_init(x, &m, h.n)) return NULL;
        dkb_tensor *r = ids_of(x, &m, &h);
        idmap_free(&m);
        return r;
    }
    if (c->v->dtype == DKB_TP_I128) return dkb_tp_cast(x->tp, c->v, DKB_TP_I64);
    return c->v;
}

bool tr_key_pair(tr_ctx *x, const tr_col *a, int64_t na, const tr_col *b, int64_t nb, dkb_tensor **ka,
                 dkb_tensor **kb) {
    (void)na, (void)nb;
    *ka = *kb = NULL;
    bool str = a->ty.id == TY_VARCHAR || b->ty.id == TY_VARCHAR;
    if (str && a->v->dtype == DKB_TP_U8 && b->v->dtype == DKB_TP_U8 && a->v->dict == b->v->dict) {
        *ka = a->v, *kb = b->v;
        return true;
    }
    if (str || needs_ids(a) || needs_ids(b)) {
        tr_col ca = *a, cb = *b;
        if (!str) { /* doubles: both sides as doubles */
            ca.v = dkb_tp_cast(x->tp, a->v, DKB_TP_F64);
            cb.v = dkb_tp_cast(x->tp, b->v, DKB_TP_F64);
        }
        tr_hstr ha, hb;
        idmap m;
        if (!ca.v || !cb.v || !items(x, &ca, &ha) || !items(x, &cb, &hb) || !idmap_init(x, &m, ha.n + hb.n))
            return tr_bad(x), false;
        *ka = ids_of(x, &m, &ha);
        *kb = ids_of(x, &m, &hb);
        idmap_free(&m);
        return !tr_bad(x);
    }
    int s = a->v->scale > b->v->scale ? a->v->scale : b->v->scale;
    *ka = tr_rescale(x, a->v, s);
    *kb = tr_rescale(x, b->v, s);
    if (*ka && (*ka)->dtype == DKB_TP_I128) *ka = dkb_tp_cast(x->tp, *ka, DKB_TP_I64);
    if (*kb && (*kb)->dtype == DKB_TP_I128) *kb = dkb_tp_cast(x->tp, *kb, DKB_TP_I64);
    return !tr_bad(x);
}
