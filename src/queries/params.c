/* params.c: query parameters: lookup and text form, drawing from a seed
 * then applying NAME=VALUE overrides (parsed and checked per kind), and
 * substituting a parameter set into a query's SQL template. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/date.h"
#include "dkb/query.h"
#include "result/result_internal.h"  // defines: dkb__res_parse_dec/_date/_int, dkb__res_dec_text

const dkb_param_value *dkb_params_get(const dkb_params *p, const char *name) {
    for (int i = 0; p && name && i < p->n && i < DKB_MAX_PARAMS; i++)
        if (p->v[i].name && !strcmp(p->v[i].name, name)) return &p->v[i];
    return NULL;
}

const char *dkb_param_kind_name(dkb_param_kind k) {
    switch (k) {
    case DKB_PARAM_INT: return "INT";
    case DKB_PARAM_DATE: return "DATE";
    case DKB_PARAM_DECIMAL: return "DECIMAL";
    case DKB_PARAM_STRING: return "STRING";
    }
    return "?";
}

void dkb_param_text(const dkb_param_value *v, char *buf, size_t n) {
    if (!buf || !n) return;
    if (!v) {
        buf[0] = 0;
        return;
    }
    switch (v->kind) {
    case DKB_PARAM_INT: snprintf(buf, n, "%lld", (long long)v->i); break;
    case DKB_PARAM_DATE: {
        int y, m, d;
        dkb__civil_from_days((int32_t)v->i, &y, &m, &d);
        snprintf(buf, n, "%04d-%02d-%02d", y, m, d);
        break;
    }
    case DKB_PARAM_DECIMAL: dkb__res_dec_text(v->i, v->scale, buf, n); break;
    case DKB_PARAM_STRING: snprintf(buf, n, "%s", v->s); break;
    default: buf[0] = 0;
    }
}

/* "date, discount, quantity" */
static void name_list(const dkb_query *q, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < q->nparams && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", q->params[i].name);
}

/* The draw put exactly q's parameters, in order, with their kinds and scales. */
static int check_draw(const dkb_query *q, const dkb_params *p, dkb_error *err) {
    if (p->n != q->nparams)
        return dkb_fail(err, DKB_EINTERNAL, "%s: the parameter draw put %d values, the query has %d parameters",
                        q->name, p->n, q->nparams);
    for (int i = 0; i < q->nparams; i++) {
        const dkb_param_def *d = &q->params[i];
        const dkb_param_value *v = &p->v[i];
        if (!v->name || strcmp(v->name, d->name) || v->kind != d->kind ||
            (d->kind == DKB_PARAM_DECIMAL && v->scale != d->scale))
            return dkb_fail(err, DKB_EINTERNAL,
                            "%s: the parameter draw put %s '%s' (scale %d) where parameter %d is %s '%s' (scale %d)",
                            q->name, dkb_param_kind_name(v->kind), v->name ? v->name : "(null)", v->scale, i + 1,
                            dkb_param_kind_name(d->kind), d->name, d->scale);
    }
    return 0;
}

/* s[0, len) is well-formed UTF-8 (no overlong forms, surrogates or code
 * points above U+10FFFF). */
static int utf8_valid(const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned c = u[i];
        size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!n || i + n > len) return 0;
        for (size_t k = 1; k < n; k++)
            if ((u[i + k] & 0xc0) != 0x80) return 0;
        if ((c == 0xe0 && u[i + 1] < 0xa0) || (c == 0xed && u[i + 1] > 0x9f) || (c == 0xf0 && u[i + 1] < 0x90) ||
            (c == 0xf4 && u[i + 1] > 0x8f))
            return 0;
        i += n;
    }
    return 1;
}

/* Parse text into v (its kind and scale already set). */
static int parse_value(const dkb_query *q, dkb_param_value *v, const char *text, dkb_error *err) {
    size_t len = strlen(text);
    switch (v->kind) {
    case DKB_PARAM_INT: {
        int64_t x;
        if (dkb__res_parse_int(text, len, &x))
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: '%s' is not an integer", q->name, v->name, text);
        v->i = x;
        return 0;
    }
    case DKB_PARAM_DATE: {
        int32_t days;
        if (dkb__res_parse_date(text, len, &days))
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: '%s' is not a date (YYYY-MM-DD)", q->name, v->name,
                            text);
        v->i = days;
        return 0;
    }
    case DKB_PARAM_DECIMAL: {
        __int128 x;
        int sc;
        /* plain notation only: digits, one point, a sign */
        int plain = len > 0 && strspn(text, "+-0123456789.") == len && !strchr(text + 1, '-') &&
                    !strchr(text + 1, '+');
        if (!plain || dkb__res_parse_dec(text, len, 60, &x, &sc))
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: '%s' is not a decimal number (e.g. 0.06)", q->name,
                            v->name, text);
        while (sc > v->scale && x % 10 == 0) x /= 10, sc--; /* trailing zeros: 0.060 is 0.06 */
        if (sc > v->scale)
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: '%s' has more than %d digit%s after the point",
                            q->name, v->name, text, v->scale, v->scale == 1 ? "" : "s");
        if (dkb__res_rescale(x, sc, v->scale, &x) || x > INT64_MAX || x < -INT64_MAX)
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: '%s' is too large", q->name, v->name, text);
        v->i = (int64_t)x;
        return 0;
    }
    case DKB_PARAM_STRING:
        if (len >= DKB_PARAM_STRLEN)
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: value longer than %d bytes", q->name, v->name,
                            DKB_PARAM_STRLEN - 1);
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
                return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: control character in the value", q->name,
                                v->name);
        if (!utf8_valid(text, len)) /* printed in JSON, substituted into SQL: text only */
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: the value is not valid UTF-8", q->name, v->name);
        memset(v->s, 0, sizeof v->s); /* no bytes of the drawn value linger */
        memcpy(v->s, text, len + 1);
        return 0;
    }
    return dkb_fail(err, DKB_EINTERNAL, "%s: parameter %s has an unknown kind", q->name, v->name);
}

int dkb_query_params(const dkb_query *q, uint64_t seed, double sf, const char *const *overrides,
                     int noverrides, dkb_params *out, dkb_error *err) {
    if (!q || !out || (noverrides && !overrides) || noverrides < 0)
        return dkb_fail(err, DKB_EINVAL, "query parameters: missing query or output");
    memset(out, 0, sizeof *out);
    if (!(sf > 0) || !isfinite(sf)) return dkb_fail(err, DKB_EINVAL, "%s: scale factor must be positive", q->name);
    if (q->nparams < 0 || q->nparams > DKB_MAX_PARAMS || (q->nparams && (!q->params || !q->draw)))
        return dkb_fail(err, DKB_EINTERNAL, "%s: malformed parameter table", q->name);
    if (q->draw) q->draw(seed, sf, out);
    int rc = check_draw(q, out, err);
    if (rc) return rc;
    unsigned given = 0; /* bit i: parameter i overridden */
    for (int k = 0; k < noverrides; k++) {
        const char *o = overrides[k], *eq = o ? strchr(o, '=') : NULL;
        if (!eq || eq == o)
            return dkb_fail(err, DKB_EINVAL, "%s: parameter override '%s' is not NAME=VALUE", q->name, o ? o : "");
        int i = 0;
        while (i < q->nparams && (strlen(q->params[i].name) != (size_t)(eq - o) ||
                                  strncmp(q->params[i].name, o, (size_t)(eq - o))))
            i++;
        if (i == q->nparams) {
            char names[256];
            name_list(q, names, sizeof names);
            return dkb_fail(err, DKB_EINVAL, "%s: unknown parameter '%.*s' (parameters: %s)", q->name,
                            (int)(eq - o > 64 ? 64 : eq - o), o, q->nparams ? names : "none");
        }
        if (given & (1u << i))
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s given twice", q->name, q->params[i].name);
        given |= 1u << i;
        if ((rc = parse_value(q, &out->v[i], eq + 1, err))) return rc;
    }
    if (q->check && (rc = q->check(out, err))) {
        if (err && !err->msg[0]) dkb_fail(err, rc, "%s: parameters rejected", q->name);
        return rc;
    }
    return 0;
}

/* ---- SQL substitution ---- */

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A growing string. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

char *dkb_query_sql(const dkb_query *q, const dkb_params *p) {
    if (!q || !q->sql) return NULL;
    sbuf b = {0};
    put(&b, "", 0);
    const char *s = q->sql;
    while (*s) {
        if (s[0] == ':' && s[1] == ':') { /* a cast, not a parameter */
            put(&b, s, 2);
            s += 2;
            continue;
        }
        const dkb_param_value *best = NULL;
        size_t best_len = 0;
        if (*s == ':' && p)
            for (int i = 0; i < p->n && i < DKB_MAX_PARAMS; i++) {
                const char *name = p->v[i].name;
                size_t len = name ? strlen(name) : 0;
                if (len > best_len && !strncmp(s + 1, name, len) && !ident_char(s[1 + len]))
                    best = &p->v[i], best_len = len;
            }
        if (!best) {
            put(&b, s, 1);
            s++;
            continue;
        }
        char text[DKB_PARAM_STRLEN + 64];
        dkb_param_text(best, text, sizeof text);
        if (best->kind == DKB_PARAM_STRING) {
            for (const char *t = text; *t; t++) {
                if (*t == '\'') put(&b, "''", 2);
                else put(&b, t, 1);
            }
        } else {
            put(&b, text, strlen(text));
        }
        s += 1 + best_len;
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
