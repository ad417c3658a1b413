/* translate_strfn.c: string functions (contract in translate_strfn.h).
 * One item function computes a function on one row's strings; it runs
 * over a dictionary's entries when the only column argument is
 * dictionary-coded (then the result is mapped back through the codes), else
 * over the rows on the host. Byte semantics: the TPC-H data is ASCII. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/date.h"  // defines: dkb__civil_from_days
#include "sql/translate_strfn.h"

typedef enum { R_BOOL, R_INT, R_STR } rkind;

typedef struct fn_def {
    const char *name;
    rkind kind;
} fn_def;

static const fn_def FNS[] = {
    {"~~", R_BOOL},        {"!~~", R_BOOL},      {"like", R_BOOL},     {"not_like", R_BOOL},
    {"prefix", R_BOOL},    {"starts_with", R_BOOL}, {"suffix", R_BOOL}, {"ends_with", R_BOOL},
    {"contains", R_BOOL},  {"substring", R_STR}, {"substr", R_STR},    {"length", R_INT},
    {"len", R_INT},        {"strlen", R_INT},    {"char_length", R_INT}, {"upper", R_STR},
    {"ucase", R_STR},      {"lower", R_STR},     {"lcase", R_STR},     {"trim", R_STR},
    {"ltrim", R_STR},      {"rtrim", R_STR},     {"concat", R_STR},    {"||", R_STR},
    {"replace", R_STR},    {"strpos", R_INT},    {"instr", R_INT},     {"position", R_INT},
    {"left", R_STR},       {"right", R_STR},     {"reverse", R_STR},   {"~~*", R_BOOL},
    {"!~~*", R_BOOL},      {"ilike", R_BOOL},    {"not_ilike", R_BOOL}, {"like_escape", R_BOOL},
    {"not_like_escape", R_BOOL}, {"ilike_escape", R_BOOL}, {"not_ilike_escape", R_BOOL},
};

static const fn_def *find(const char *name) {
    for (size_t i = 0; i < sizeof FNS / sizeof FNS[0]; i++)
        if (!strcmp(FNS[i].name, name)) return &FNS[i];
    return NULL;
}

bool tr_strfn_known(const char *name) { return find(name) != NULL; }

/* A growable byte buffer for one item's string result. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static bool put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return false;
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return true;
}

static const char *find_sub(const char *s, size_t n, const char *t, size_t m) {
    if (m == 0) return s;
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(s + i, t, m)) return s + i;
    return NULL;
}

/* LIKE with an escape character (esc < 0: none) and optional ASCII case
 * folding: % any run, _ one byte, esc followed by a byte that byte itself. */
static bool like_ex(const char *s, size_t n, const char *p, size_t pn, int esc, bool fold) {
    if (pn == 0) return n == 0;
    if (esc >= 0 && (unsigned char)p[0] == esc && pn >= 2) {
        if (!n) return false;
        char a = s[0], b = p[1];
        if (fold) a = (char)tolower((unsigned char)a), b = (char)tolower((unsigned char)b);
        return a == b && like_ex(s + 1, n - 1, p + 2, pn - 2, esc, fold);
    }
    if (p[0] == '%') {
        while (pn && p[0] == '%') p++, pn--;
        if (!pn) return true;
        for (size_t i = 0; i <= n; i++)
            if (like_ex(s + i, n - i, p, pn, esc, fold)) return true;
        return false;
    }
    if (!n) return false;
    char a = s[0], b = p[0];
    if (fold) a = (char)tolower((unsigned char)a), b = (char)tolower((unsigned char)b);
    if (p[0] != '_' && a != b) return false;
    return like_ex(s + 1, n - 1, p + 1, pn - 1, esc, fold);
}

/* One item: p/l the string arguments (NULL p for a non-string), v the
 * arguments as values (integers for constants). Results into b / *iv. */
static bool item(const char *name, int k, const char *const *p, const size_t *l, const tr_val *v, sbuf *b,
                 int64_t *iv) {
    const char *s = p[0];
    size_t n = l[0];
    if (!strcmp(name, "~~") || !strcmp(name, "like")) return *iv = tr_like(s, n, p[1], l[1]), true;
    if (!strcmp(name, "!~~") || !strcmp(name, "not_like")) return *iv = !tr_like(s, n, p[1], l[1]), true;
    if (strstr(name, "like")) { /* like_escape, ilike, ilike_escape and their negations */
        bool neg = !strncmp(name, "not_", 4), fold = strstr(name, "ilike") != NULL;
        int esc = strstr(name, "escape") && k > 2 && l[2] == 1 ? (unsigned char)p[2][0] : -1;
        return *iv = like_ex(s, n, p[1], l[1], esc, fold) != neg, true;
    }
    if (!strcmp(name, "~~*") || !strcmp(name, "!~~*")) return *iv = like_ex(s, n, p[1], l[1], -1, true) != (name[0] == '!'), true;
    if (!strcmp(name, "prefix") || !strcmp(name, "starts_with"))
        return *iv = l[1] <= n && !memcmp(s, p[1], l[1]), true;
    if (!strcmp(name, "suffix") || !strcmp(name, "ends_with"))
        return *iv = l[1] <= n && !memcmp(s + n - l[1], p[1], l[1]), true;
    if (!strcmp(name, "contains")) return *iv = find_sub(s, n, p[1], l[1]) != NULL, true;
    if (!strcmp(name, "strpos") || !strcmp(name, "instr") || !strcmp(name, "position")) {
        const char *f = find_sub(s, n, p[1], l[1]);
        return *iv = f ? (int64_t)(f - s) + 1 : 0, true;
    }
    if (!strcmp(name, "length") || !strcmp(name, "len") || !strcmp(name, "strlen") || !strcmp(name, "char_length"))
        return *iv = (int64_t)n, true;
    if (!strcmp(name, "substring") || !strcmp(name, "substr")) {
        /* 1-based start; DuckDB: a start <= 0 counts the missing positions
         * against the length; a negative start counts from the end */
        int64_t start = (int64_t)v[1].k.i, len = k > 2 ? (int64_t)v[2].k.i : (int64_t)n + 1;
        int64_t from = start > 0 ? start - 1 : start < 0 ? (int64_t)n + start : 0;
        int64_t to = start == 0 ? len - 1 : from + len;
        if (start < 0 && from < 0) to = from + len, from = 0;
        if (from < 0) from = 0;
        if (to > (int64_t)n) to = (int64_t)n;
        return to > from ? put(b, s + from, (size_t)(to - from)) : true;
    }
    if (!strcmp(name, "left") || !strcmp(name, "right")) {
        int64_t m = (int64_t)v[1].k.i;
        if (m < 0) m = (int64_t)n + m > 0 ? (int64_t)n + m : 0;
        if (m > (int64_t)n) m = (int64_t)n;
        return name[0] == 'l' ? put(b, s, (size_t)m) : put(b, s + n - (size_t)m, (size_t)m);
    }
    if (!strcmp(name, "upper") || !strcmp(name, "ucase") || !strcmp(name, "lower") || !strcmp(name, "lcase")) {
        size_t at = b->n;
        if (!put(b, s, n)) return false;
        bool up = name[0] == 'u';
        for (size_t i = 0; i < n; i++) b->p[at + i] = (char)(up ? toupper((unsigned char)s[i]) : tolower((unsigned char)s[i]));
        return true;
    }
    if (!strcmp(name, "trim") || !strcmp(name, "ltrim") || !strcmp(name, "rtrim")) {
        size_t a = 0, z = n;
        if (name[0] != 'r')
            while (a < z && s[a] == ' ') a++;
        if (name[0] != 'l')
            while (z > a && s[z - 1] == ' ') z--;
        return put(b, s + a, z - a);
    }
    if (!strcmp(name, "reverse")) {
        for (size_t i = n; i > 0; i--)
            if (!put(b, s + i - 1, 1)) return false;
        return true;
    }
    if (!strcmp(name, "concat") || !strcmp(name, "||")) {
        for (int i = 0; i < k; i++)
            if (p[i] && !put(b, p[i], l[i])) return false;
        return true;
    }
    if (!strcmp(name, "replace")) {
        if (l[1] == 0) return put(b, s, n);
        size_t i = 0;
        while (i < n) {
            if (i + l[1] <= n && !memcmp(s + i, p[1], l[1])) {
                if (!put(b, p[2], l[2])) return false;
                i += l[1];
            } else {
                if (!put(b, s + i, 1)) return false;
                i++;
            }
        }
        return true;
    }
    return false;
}

/* Sorted, deduplicated dictionary of m strings; map[i] is string i's code. */
static const dkb_tp_dict *sorted_dict(tr_ctx *x, const char **s, const size_t *len, int m, uint8_t *map) {
    int *ord = tr_alloc(x, (size_t)(m + 1) * sizeof *ord);
    if (!ord) return NULL;
    for (int i = 0; i < m; i++) ord[i] = i;
    /* insertion sort: dictionaries hold at most 256 entries */
    for (int i = 1; i < m; i++) {
        int t = ord[i], j = i;
        while (j > 0 && tr_strcmp(s[ord[j - 1]], len[ord[j - 1]], s[t], len[t]) > 0) ord[j] = ord[j - 1], j--;
        ord[j] = t;
    }
    const char **us = tr_alloc(x, (size_t)(m + 1) * sizeof *us);
    size_t *ul = tr_alloc(x, (size_t)(m + 1) * sizeof *ul);
    if (!us || !ul) return NULL;
    int u = 0;
    for (int i = 0; i < m; i++) {
        int t = ord[i];
        if (!u || tr_strcmp(us[u - 1], ul[u - 1], s[t], len[t])) us[u] = s[t], ul[u] = len[t], u++;
        map[t] = (uint8_t)(u - 1);
    }
    return tr_dict_of(x, us, ul, u);
}

bool tr_strfn(tr_ctx *x, const char *name, const tr_val *v, int k, tr_type rt, int64_t n, const cJSON *node,
              tr_val *out) {
    dkb_tp *tp = x->tp;
    const fn_def *f = find(name);
    memset(out, 0, sizeof *out);
    if (k < 1 || k > 8) return tr_unsupported(x, node, "%s() with %d arguments", name, k), false;
    bool concat = !strcmp(name, "concat");
    int ncol = 0, colarg = -1;
    dkb_tensor *valid = NULL;
    for (int i = 0; i < k; i++) {
        tr_tyid t = v[i].is_const ? v[i].k.ty.id : v[i].c.ty.id;
        bool strarg = t == TY_VARCHAR || t == TY_NULL;
        bool want_str = i == 0 || !(strcmp(name, "substring") == 0 || strcmp(name, "substr") == 0 ||
                                    strcmp(name, "left") == 0 || strcmp(name, "right") == 0);
        if (want_str && !strarg) return tr_unsupported(x, node, "%s() of a %s", name, v[i].is_const ? v[i].k.ty.name : v[i].c.ty.name), false;
        if (!want_str && !v[i].is_const) return tr_unsupported(x, node, "%s() with a computed position", name), false;
        if (v[i].is_const && v[i].k.null && !concat) { /* NULL in, NULL out */
            out->is_const = true;
            out->k.ty = rt;
            out->k.null = true;
            return true;
        }
        if (!v[i].is_const) {
            ncol++, colarg = i;
            if (!concat) valid = tr_and_valid(x, valid, v[i].c.valid);
        }
    }
    if ((!strcmp(name, "substring") || !strcmp(name, "substr")) &&
        (k < 2 || !v[1].is_const || v[1].k.i < 1 || (k > 2 && (!v[2].is_const || v[2].k.i < 0))))
        return tr_unsupported(x, node, "%s() with a start below 1 or a negative length", name), false;
    if ((!strcmp(name, "left") || !strcmp(name, "right")) && (k < 2 || !v[1].is_const || v[1].k.i < 0))
        return tr_unsupported(x, node, "%s() with a negative count", name), false;
    if (ncol == 0) { /* all constant: evaluate once */
        tr_val w[8];
        for (int i = 0; i < k; i++) w[i] = v[i];
        const char *p[8];
        size_t l[8];
        for (int i = 0; i < k; i++) p[i] = w[i].k.ty.id == TY_VARCHAR ? w[i].k.s : NULL, l[i] = w[i].k.slen;
        sbuf b = {0};
        int64_t iv = 0;
        if (!item(name, k, p, l, w, &b, &iv)) return free(b.p), tr_fail(x, DKB_ENOMEM, "out of memory"), false;
        out->is_const = true;
        out->k.ty = rt;
        if (f->kind == R_STR) {
            out->k.s = tr_strndup(x, b.p ? b.p : "", b.n);
            out->k.slen = b.n;
        } else {
            out->k.i = iv;
        }
        free(b.p);
        return out->k.s || f->kind != R_STR;
    }
    const tr_col *col = &v[colarg].c;
    bool use_dict = ncol == 1 && col->v->dtype == DKB_TP_U8 && col->v->dict;
    /* LIKE-like on free text through TensorPlan */
    if (!use_dict && ncol == 1 && colarg == 0 && f->kind == R_BOOL && k == 2 && v[1].is_const &&
        strlen(v[1].k.s) == v[1].k.slen && !strchr(name, '*') && !strstr(name, "ilike")) {
        const char *pat = v[1].k.s;
        bool plain = !strpbrk(pat, "%_");
        char *like = NULL;
        bool neg = name[0] == '!' || !strcmp(name, "not_like");
        if (!strcmp(name, "~~") || !strcmp(name, "like") || neg) like = tr_strndup(x, pat, strlen(pat));
        else if (plain) {
            size_t m = strlen(pat);
            like = tr_alloc(x, m + 3);
            if (like) {
                bool pre = !strcmp(name, "prefix") || !strcmp(name, "starts_with");
                bool suf = !strcmp(name, "suffix") || !strcmp(name, "ends_with");
                snprintf(like, m + 3, "%s%s%s", pre ? "" : "%", pat, suf ? "" : "%");
            }
        }
        if (like) {
            dkb_tensor *m = dkb_tp_like(tp, col->v, like);
            if (neg) m = dkb_tp_not(tp, m);
            out->c.v = m, out->c.valid = valid, out->c.ty = tr_ty(TY_BOOL);
            return !tr_bad(x);
        }
    }
    if (!use_dict && ncol == 1 && colarg == 0 && (!strcmp(name, "substring") || !strcmp(name, "substr")) && k == 3 &&
        v[1].k.i >= 1 && v[2].k.i >= 0 && v[1].k.i < 1 << 30 && v[2].k.i < 1 << 30) {
        out->c.v = dkb_tp_substr(tp, col->v, (int)v[1].k.i - 1, (int)v[2].k.i);
        if (out->c.v && v[2].k.i >= 0 && v[2].k.i < INT32_MAX) tr_maxlen_set(x, out->c.v, (int)v[2].k.i);
        out->c.valid = valid, out->c.ty = rt;
        return !tr_bad(x);
    }
    /* per item on the host: the dictionary's entries, or every row */
    int64_t m = use_dict ? col->v->dict->size : n;
    tr_hstr h[8];
    for (int i = 0; i < k; i++) {
        if (v[i].is_const) continue;
        if (use_dict) continue;
        if (!tr_host_strings(x, &v[i].c, &h[i])) return false;
    }
    uint8_t *nul[8] = {0};
    if (concat)
        for (int i = 0; i < k; i++)
            if (!v[i].is_const && v[i].c.valid) {
                nul[i] = tr_alloc(x, (size_t)(n ? n : 1));
                if (!nul[i] || (n && dkb_tp_to_host(tp, v[i].c.valid, nul[i]))) return tr_bad(x), false;
            }
    const char **rs = tr_alloc(x, (size_t)(m ? m : 1) * sizeof *rs);
    size_t *rl = tr_alloc(x, (size_t)(m ? m : 1) * sizeof *rl);
    int64_t *ri = tr_alloc(x, (size_t)(m ? m : 1) * sizeof *ri);
    if (!rs || !rl || !ri) return false;
    sbuf b = {0};
    size_t *at = tr_alloc(x, (size_t)(m ? m : 1) * sizeof *at);
    if (!at) return false;
    for (int64_t r = 0; r < m; r++) {
        const char *p[8];
        size_t l[8];
        for (int i = 0; i < k; i++) {
            if (v[i].is_const) {
                p[i] = v[i].k.ty.id == TY_VARCHAR ? v[i].k.s : NULL, l[i] = v[i].k.slen;
            } else if (use_dict) {
                p[i] = col->v->dict->str[r], l[i] = col->v->dict->len[r];
            } else {
                p[i] = h[i].p[r], l[i] = h[i].len[r];
                if (nul[i] && !nul[i][r]) p[i] = NULL, l[i] = 0;
            }
        }
        at[r] = b.n;
        if (!item(name, k, p, l, v, &b, &ri[r])) {
            free(b.p);
            return tr_fail(x, DKB_ENOMEM, "out of memory"), false;
        }
        rl[r] = b.n - at[r];
    }
    char *bytes = tr_strndup(x, b.p ? b.p : "", b.n);
    free(b.p);
    if (!bytes) return false;
    for (int64_t r = 0; r < m; r++) rs[r] = bytes + at[r];
    out->c.ty = rt;
    out->c.valid = valid;
    if (f->kind == R_STR) {
        if (use_dict) {
            uint8_t *map = tr_alloc(x, (size_t)m + 1);
            if (!map) return false;
            const dkb_tp_dict *d = sorted_dict(x, rs, rl, (int)m, map);
            dkb_tensor *lut = dkb_tp_from_host(tp, DKB_TP_U8, m, map);
            out->c.v = tr_relabel(x, dkb_tp_gather(tp, lut, dkb_tp_cast(tp, col->v, DKB_TP_I32), 0), 0, d);
        } else {
            tr_hstr o = {.n = m, .p = rs, .len = rl};
            out->c.v = tr_str_from_host(x, &o);
        }
    } else if (f->kind == R_BOOL) {
        uint8_t *bv = tr_alloc(x, (size_t)m + 1);
        if (!bv) return false;
        for (int64_t r = 0; r < m; r++) bv[r] = ri[r] != 0;
        if (use_dict) out->c.v = tr_lut_mask(x, col->v, (const bool *)bv);
        else out->c.v = dkb_tp_from_host(tp, DKB_TP_BOOL, m, bv);
    } else {
        dkb_tensor *t = dkb_tp_from_host(tp, DKB_TP_I64, m, ri);
        if (use_dict) t = dkb_tp_gather(tp, t, dkb_tp_cast(tp, col->v, DKB_TP_I32), 0);
        out->c.v = t;
    }
    return !tr_bad(x);
}

bool tr_strfn_format(tr_ctx *x, const tr_col *c, int64_t n, tr_col *out) {
    __int128 *h = tr_host_i128(x, c->v);
    if (!h) return false;
    sbuf b = {0};
    int64_t *off = tr_alloc(x, (size_t)(n + 1) * sizeof *off);
    if (!off) return false;
    int s = c->ty.id == TY_DECIMAL ? c->v->scale : 0;
    for (int64_t i = 0; i < n; i++) {
        char buf[64];
        if (c->ty.id == TY_DATE) {
            int y, m, d;
            dkb__civil_from_days((int32_t)h[i], &y, &m, &d);
            snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, d);
        } else {
            __int128 v = h[i] < 0 ? -h[i] : h[i];
            char dig[48];
            int nd = 0;
            do dig[nd++] = (char)('0' + (int)(v % 10)), v /= 10;
            while (v || nd <= s);
            size_t p = 0;
            if (h[i] < 0) buf[p++] = '-';
            for (int j = nd - 1; j >= 0; j--) {
                buf[p++] = dig[j];
                if (j == s && s > 0) buf[p++] = '.';
            }
            buf[p] = 0;
        }
        off[i] = (int64_t)b.n;
        if (!put(&b, buf, strlen(buf))) return free(b.p), tr_fail(x, DKB_ENOMEM, "out of memory"), false;
    }
    off[n] = (int64_t)b.n;
    out->v = dkb_tp_from_host_str(x->tp, n, off, b.p ? b.p : "");
    free(b.p);
    out->valid = c->valid;
    out->ty = tr_ty(TY_VARCHAR);
    return !tr_bad(x);
}
