/* emit_c.c: `dkb sql --emit c` (contract in emit_c.h): the recorder behind
 * the dkb__rec_* wrappers of emit_rec.h, and the writer of the C file.
 *
 * While a recording is on, each wrapper calls the real TensorPlan
 * operation and appends one statement to a list: its C text (the call with
 * its arguments: tensors by the names of the statements that made them,
 * scalars, patterns and enums as literals, host arrays as static const
 * literals next to it) and the statements it uses. At the end the
 * statements the result needs are kept (a backward pass from the core's
 * outputs) and printed in order as the body of core. One recording at a
 * time per process (the CLI's use). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define DKB_SQL_NO_REC
#include "dkb/query.h"  // defines: DKB_SET_MAX
#include "sql/emit_c.h"
#include "sql/emit_rec.h"
#include "sql/translate.h"  // defines: dkb__sql_translate

enum { MAX_LITERAL = 1 << 16 };  /* elements of one host array written as a literal */

typedef struct stmt {
    char *code;      /* the statement(s), each line indented, '\n'-terminated */
    char *statics;   /* file-scope literals it needs, or NULL */
    int *uses;       /* statements it reads */
    int nuses, capuses;
    bool live;
    bool reads_in;   /* a dkb_set_get of the input set */
    bool relabels;   /* calls the file's relabel helper */
    bool fills;      /* calls the file's from_host_fill helper */
    bool concats;    /* calls the file's concat helper */
} stmt;

typedef struct name_ent {
    const void *p;
    char name[64];
    int stmt;        /* defining statement, -1: none (a dictionary of a column, say) */
} name_ent;

typedef struct recorder {
    bool on, failed;
    int paused;      /* inside a step recorded as one statement (concat) */
    char msg[300];
    const dkb_store *db;
    stmt *s;
    int ns, caps;
    name_ent *t;     /* tensors (and group / join members) */
    int nt, capt;
    name_ent *d;     /* dictionaries */
    int nd, capd;
    int nvar, nlit, nhead, ndict, ngroup, njoin;
    const char *ctab[DKB_SET_MAX], *ccol[DKB_SET_MAX];  /* store columns read */
    int ncols;
    char *outputs;   /* the dkb_set_put lines of core */
    char *finish;    /* the finish body */
    int nout;
    int out_uses[2 * 64];
    int nout_uses;
    bool have_result;
} recorder;

static recorder R;

int dkb__rec_on(void) { return R.on; }

static void rfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rfail(const char *fmt, ...) {
    if (R.failed) return;
    R.failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R.msg, sizeof R.msg, fmt, ap);
    va_end(ap);
}

/* ---- growing strings ---- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_vadd(sbuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (k < 0) {
            rfail("--emit c: formatting failed");
            return;
        }
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            rfail("--emit c: out of memory");
            return;
        }
        b->p = q, b->cap = cap;
    }
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    b->n += (size_t)k;
}

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sb_vadd(b, fmt, ap);
    va_end(ap);
}

/* s[0..n) as a C string literal (split every 72 bytes). */
static void sb_cstr(sbuf *b, const char *s, size_t n) {
    sb_add(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i && i % 72 == 0) sb_add(b, "\"\n    \"");
        if (c == '"' || c == '\\') sb_add(b, "\\%c", c);
        else if (c == '?') sb_add(b, "\\?");
        else if (c == '\n') sb_add(b, "\\n");
        else if (c == '\t') sb_add(b, "\\t");
        else if (c >= 32 && c < 127) sb_add(b, "%c", c);
        else sb_add(b, "\\%03o", c);
    }
    sb_add(b, "\"");
}

/* ---- names ---- */

static name_ent *find(name_ent *tab, int n, const void *p) {
    for (int i = n - 1; i >= 0; i--)
        if (tab[i].p == p) return &tab[i];
    return NULL;
}

static void put_name(name_ent **tab, int *n, int *cap, const void *p, const char *name, int st) {
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 256;
        name_ent *q = realloc(*tab, (size_t)c * sizeof *q);
        if (!q) {
            rfail("--emit c: out of memory");
            return;
        }
        *tab = q, *cap = c;
    }
    name_ent *e = &(*tab)[(*n)++];
    e->p = p;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->stmt = st;
}

/* The statement being built (the last one). */
static stmt *cur(void) { return R.ns ? &R.s[R.ns - 1] : NULL; }

static void use(int st) {
    stmt *c = cur();
    if (!c || st < 0) return;
    if (c->nuses == c->capuses) {
        int k = c->capuses ? c->capuses * 2 : 8;
        int *q = realloc(c->uses, (size_t)k * sizeof *q);
        if (!q) {
            rfail("--emit c: out of memory");
            return;
        }
        c->uses = q, c->capuses = k;
    }
    c->uses[c->nuses++] = st;
}

static char ring[16][64];
static int ringi;

/* The C name of tensor t for the statement being built (its maker used). */
static const char *T(const dkb_tensor *t) {
    if (!t) return "NULL";
    name_ent *e = find(R.t, R.nt, t);
    if (!e) {
        rfail("--emit c: a tensor the recorder did not see (an operation outside TensorPlan)");
        return "NULL";
    }
    use(e->stmt);
    char *b = ring[ringi++ % 16];
    snprintf(b, 64, "%s", e->name);
    return b;
}

static sbuf SB;       /* the statement's code */
static sbuf LIT;      /* the statement's literals */

static void begin(void) {
    if (R.ns == R.caps) {
        int c = R.caps ? R.caps * 2 : 256;
        stmt *q = realloc(R.s, (size_t)c * sizeof *q);
        if (!q) {
            rfail("--emit c: out of memory");
            return;
        }
        R.s = q, R.caps = c;
    }
    memset(&R.s[R.ns++], 0, sizeof(stmt));
    SB.n = 0, LIT.n = 0;
    if (SB.p) SB.p[0] = 0;
    if (LIT.p) LIT.p[0] = 0;
}

static void end(void) {
    stmt *c = cur();
    if (!c) return;
    c->code = strdup(SB.p ? SB.p : "");
    c->statics = LIT.n ? strdup(LIT.p) : NULL;
    if (!c->code) rfail("--emit c: out of memory");
}

/* Register r as defined by the current statement under name; its
 * dictionary (when new) as name->dict. */
static void define(const dkb_tensor *r, const char *name) {
    if (!r) return;
    put_name(&R.t, &R.nt, &R.capt, r, name, R.ns - 1);
    if (r->dict && !find(R.d, R.nd, r->dict)) {
        char dn[64];
        snprintf(dn, sizeof dn, "%s->dict", name);
        put_name(&R.d, &R.nd, &R.capd, r->dict, dn, R.ns - 1);
    }
}

/* One statement `dkb_tensor *tN = EXPR;` for result r. */
static void emit_tensor(const dkb_tensor *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit_tensor(const dkb_tensor *r, const char *fmt, ...) {
    char name[32];
    snprintf(name, sizeof name, "t%d", R.nvar++);
    sb_add(&SB, "    dkb_tensor *%s = ", name);
    va_list ap;
    va_start(ap, fmt);
    sb_vadd(&SB, fmt, ap);
    va_end(ap);
    sb_add(&SB, ";\n");
    end();
    define(r, name);
}

static const char *dtype_c(dkb_tp_dtype t) {
    static const char *n[] = {"DKB_TP_BOOL", "DKB_TP_U8", "DKB_TP_I8", "DKB_TP_I16", "DKB_TP_I32",
                              "DKB_TP_I64", "DKB_TP_I128", "DKB_TP_F64", "DKB_TP_STR"};
    return (unsigned)t < 9 ? n[t] : "DKB_TP_NTYPES";
}
static const char *cmp_c(dkb_cmp op) {
    static const char *n[] = {"DKB_CMP_EQ", "DKB_CMP_NE", "DKB_CMP_LT", "DKB_CMP_LE", "DKB_CMP_GT", "DKB_CMP_GE"};
    return (unsigned)op < 6 ? n[op] : "DKB_CMP_EQ";
}
static const char *arith_c(dkb_arith op) {
    static const char *n[] = {"DKB_OP_ADD", "DKB_OP_SUB", "DKB_OP_MUL", "DKB_OP_DIV", "DKB_OP_MIN", "DKB_OP_MAX"};
    return (unsigned)op < 6 ? n[op] : "DKB_OP_ADD";
}
static const char *agg_c(dkb_agg a) {
    static const char *n[] = {"DKB_AGG_SUM", "DKB_AGG_COUNT", "DKB_AGG_MIN", "DKB_AGG_MAX", "DKB_AGG_AVG",
                              "DKB_AGG_COUNT_DISTINCT"};
    return (unsigned)a < 6 ? n[a] : "DKB_AGG_SUM";
}

/* An int64 as a C literal (INT64_MIN has no literal of its own). */
static const char *I(int64_t v) {
    char *b = ring[ringi++ % 16];
    if (v == INT64_MIN) snprintf(b, 64, "INT64_MIN");
    else if (v > INT32_MAX || v < -INT32_MAX) snprintf(b, 64, "INT64_C(%lld)", (long long)v);
    else snprintf(b, 64, "%lld", (long long)v);
    return b;
}

static const char *F(double v) {
    char *b = ring[ringi++ % 16];
    if (!isfinite(v)) {
        rfail("--emit c: a non-finite double constant");
        snprintf(b, 64, "0.0");
    } else {
        snprintf(b, 64, "%.17g", v);
        if (!strpbrk(b, ".eE")) strcat(b, ".0");
    }
    return b;
}

/* A file-scope literal name "kN". */
static const char *lit_name(void) {
    char *b = ring[ringi++ % 16];
    snprintf(b, 64, "k%d", R.nlit++);
    return b;
}

/* The C expression of dictionary d (a column's, or a literal). */
static const char *D(const dkb_tp_dict *d) {
    if (!d) return "NULL";
    name_ent *e = find(R.d, R.nd, d);
    char *b = ring[ringi++ % 16];
    if (e) {
        use(e->stmt);
        snprintf(b, 64, "%s", e->name);
        return b;
    }
    if (d->size > MAX_LITERAL) {
        rfail("--emit c: a dictionary of %d entries is too large to write as a literal", d->size);
        return "NULL";
    }
    int k = R.ndict++;
    sb_add(&LIT, "static const char *const d%d_str[] = {", k);
    for (int i = 0; i < d->size; i++) {
        sb_add(&LIT, i ? ", " : "");
        sb_cstr(&LIT, d->str[i], d->len[i]);
    }
    sb_add(&LIT, "%s};\nstatic const size_t d%d_len[] = {", d->size ? "" : "NULL", k);
    for (int i = 0; i < d->size; i++) sb_add(&LIT, "%s%zu", i ? ", " : "", d->len[i]);
    sb_add(&LIT, "%s};\nstatic const dkb_tp_dict d%d = {%d, d%d_str, d%d_len};\n", d->size ? "" : "0", k, d->size, k,
           k);
    snprintf(b, 64, "&d%d", k);
    return b;
}

/* ---- the wrappers ---- */

#define REC if (R.on && !R.failed && !R.paused)

void dkb__rec_pause(void) { R.paused++; }
void dkb__rec_resume(void) { R.paused--; }

dkb_tensor *dkb__rec_column(dkb_tp *tp, const dkb_store_column *col) {
    dkb_tensor *r = dkb_tp_column(tp, col);
    REC {
        const char *table = NULL, *name = dkb_column_name(col);
        for (int i = 0; i < dkb_store_ntables(R.db) && !table; i++) {
            const dkb_store_table *t = dkb_store_table_at(R.db, i);
            for (int j = 0; j < dkb_store_table_ncolumns(t); j++)
                if (dkb_store_table_column_at(t, j) == col) table = dkb_store_table_name(t);
        }
        if (!table) {
            rfail("--emit c: a column outside the store");
            return r;
        }
        int k = 0;
        while (k < R.ncols && strcmp(R.ccol[k], name)) k++;
        if (k == R.ncols) {
            if (k == DKB_SET_MAX) {
                rfail("--emit c: more than %d store columns", DKB_SET_MAX);
                return r;
            }
            R.ctab[k] = table;
            R.ccol[k] = name;
            R.ncols++;
        }
        begin();
        cur()->reads_in = true;
        emit_tensor(r, "dkb_set_get(tp, in, \"%s\")", name);
    }
    return r;
}

/* The element of host array data at i as a C literal of dtype t. */
static void lit_elem(sbuf *b, dkb_tp_dtype t, const void *data, int64_t i) {
    switch (t) {
    case DKB_TP_BOOL:
    case DKB_TP_U8: sb_add(b, "%u", ((const uint8_t *)data)[i]); break;
    case DKB_TP_I8: sb_add(b, "%d", ((const int8_t *)data)[i]); break;
    case DKB_TP_I16: sb_add(b, "%d", ((const int16_t *)data)[i]); break;
    case DKB_TP_I32: sb_add(b, "%s", I(((const int32_t *)data)[i])); break;
    case DKB_TP_I64: sb_add(b, "%s", I(((const int64_t *)data)[i])); break;
    case DKB_TP_I128: {
        __int128 v = ((const __int128 *)data)[i];
        if (v > INT64_MAX || v < INT64_MIN) rfail("--emit c: a host value beyond 64 bits");
        sb_add(b, "(__int128)%s", I((int64_t)v));
        break;
    }
    case DKB_TP_F64: sb_add(b, "%s", F(((const double *)data)[i])); break;
    default: rfail("--emit c: a host array of dtype %d", (int)t);
    }
}

static const char *elem_type(dkb_tp_dtype t) {
    static const char *n[] = {"uint8_t", "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t", "__int128", "double"};
    return (unsigned)t < 8 ? n[t] : "int64_t";
}

/* STR of n strings: offsets (rebased to 0) and bytes as literals. */
static void emit_str(const dkb_tensor *r, int64_t n, const int64_t *off, const char *bytes) {
    if (n > MAX_LITERAL || off[n] - off[0] > 16 * MAX_LITERAL)
    {
        rfail("--emit c: a host-computed string tensor of %lld rows is too large to write as a literal", (long long)n);
        return;
    }
    const char *k = lit_name();
    char kn[32];
    snprintf(kn, sizeof kn, "%s", k);
    if (n > 8) sb_add(&LIT, "/* %lld strings the translator computed on the host from the data */\n", (long long)n);
    sb_add(&LIT, "static const int64_t %s_off[] = {", kn);
    for (int64_t i = 0; i <= n; i++) sb_add(&LIT, "%s%s", i ? ", " : "", I(off[i] - off[0]));
    sb_add(&LIT, "};\nstatic const char %s_bytes[] = ", kn);
    sb_cstr(&LIT, bytes + off[0], (size_t)(off[n] - off[0]));
    sb_add(&LIT, ";\n");
    emit_tensor(r, "dkb_tp_from_host_str(tp, %s, %s_off, %s_bytes)", I(n), kn, kn);
}

dkb_tensor *dkb__rec_from_host(dkb_tp *tp, dkb_tp_dtype t, int64_t n, const void *data) {
    dkb_tensor *r = dkb_tp_from_host(tp, t, n, data);
    REC {
        begin();
        if (t == DKB_TP_STR) {
            const int64_t *off = data;
            emit_str(r, n, off, (const char *)(off + n + 1));
            return r;
        }
        size_t es = dkb_tp_dtype_size(t);
        bool same = n > 0;
        for (int64_t i = 1; i < n && same; i++) same = !memcmp((const char *)data, (const char *)data + i * es, es);
        const char *k = lit_name();
        char kn[32];
        snprintf(kn, sizeof kn, "%s", k);
        if (same && n > 8) {
            /* n copies of one value */
            cur()->fills = true;
            sb_add(&LIT, "static const %s %s[] = {", elem_type(t), kn);
            lit_elem(&LIT, t, data, 0);
            sb_add(&LIT, "};\n");
            emit_tensor(r, "from_host_fill(tp, %s, %s, %s, sizeof %s[0])", dtype_c(t), I(n), kn, kn);
            return r;
        }
        bool iota = t == DKB_TP_I64 && n > 8;
        for (int64_t i = 0; i < n && iota; i++) iota = ((const int64_t *)data)[i] == i;
        if (iota) {
            emit_tensor(r, "dkb_tp_arange(tp, %s)", I(n));
            return r;
        }
        if (n > MAX_LITERAL) {
            rfail("--emit c: a host-computed tensor of %lld rows is too large to write as a literal", (long long)n);
            return r;
        }
        if (n > 8)
            sb_add(&LIT, "/* %lld values the translator computed on the host from the data */\n", (long long)n);
        sb_add(&LIT, "static const %s %s[] = {", elem_type(t), kn);
        for (int64_t i = 0; i < n; i++) {
            if (i) sb_add(&LIT, i % 16 ? ", " : ",\n    ");
            lit_elem(&LIT, t, data, i);
        }
        sb_add(&LIT, "%s};\n", n ? "" : "0");
        emit_tensor(r, "dkb_tp_from_host(tp, %s, %s, %s)", dtype_c(t), I(n), kn);
    }
    return r;
}

dkb_tensor *dkb__rec_from_host_str(dkb_tp *tp, int64_t n, const int64_t *offsets, const char *bytes) {
    dkb_tensor *r = dkb_tp_from_host_str(tp, n, offsets, bytes);
    REC {
        begin();
        emit_str(r, n, offsets, bytes);
    }
    return r;
}

dkb_tensor *dkb__rec_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value) {
    dkb_tensor *r = dkb_tp_full_i64(tp, t, n, value);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_full_i64(tp, %s, %s, %s)", dtype_c(t), I(n), I(value));
    }
    return r;
}

dkb_tensor *dkb__rec_arange(dkb_tp *tp, int64_t n) {
    dkb_tensor *r = dkb_tp_arange(tp, n);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_arange(tp, %s)", I(n));
    }
    return r;
}

dkb_tensor *dkb__rec_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b) {
    dkb_tensor *r = dkb_tp_cmp(tp, a, op, b);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_cmp(tp, %s, %s, %s)", T(a), cmp_c(op), T(b));
    }
    return r;
}

dkb_tensor *dkb__rec_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value) {
    dkb_tensor *r = dkb_tp_cmp_i64(tp, a, op, value);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_cmp_i64(tp, %s, %s, %s)", T(a), cmp_c(op), I(value));
    }
    return r;
}

dkb_tensor *dkb__rec_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi) {
    dkb_tensor *r = dkb_tp_between(tp, a, lo, hi);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_between(tp, %s, %s, %s)", T(a), I(lo), I(hi));
    }
    return r;
}

dkb_tensor *dkb__rec_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value) {
    dkb_tensor *r = dkb_tp_cmp_f64(tp, a, op, value);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_cmp_f64(tp, %s, %s, %s)", T(a), cmp_c(op), F(value));
    }
    return r;
}

dkb_tensor *dkb__rec_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n) {
    dkb_tensor *r = dkb_tp_in_i64(tp, a, values, n);
    REC {
        begin();
        if (n > MAX_LITERAL) {
            rfail("--emit c: an IN list of %d values is too large", n);
            return r;
        }
        const char *k = lit_name();
        char kn[32];
        snprintf(kn, sizeof kn, "%s", k);
        sb_add(&LIT, "static const int64_t %s[] = {", kn);
        for (int i = 0; i < n; i++) sb_add(&LIT, "%s%s", i ? ", " : "", I(values[i]));
        sb_add(&LIT, "%s};\n", n ? "" : "0");
        emit_tensor(r, "dkb_tp_in_i64(tp, %s, %s, %d)", T(a), kn, n);
    }
    return r;
}

dkb_tensor *dkb__rec_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut) {
    dkb_tensor *r = dkb_tp_lookup_mask(tp, codes, lut);
    REC {
        begin();
        int n = codes && codes->dict ? codes->dict->size : 0;
        const char *k = lit_name();
        char kn[32];
        snprintf(kn, sizeof kn, "%s", k);
        sb_add(&LIT, "static const bool %s[] = {", kn);
        for (int i = 0; i < n; i++) sb_add(&LIT, "%s%d", i ? (i % 32 ? ", " : ",\n    ") : "", lut[i] ? 1 : 0);
        sb_add(&LIT, "%s};  /* per dictionary entry */\n", n ? "" : "0");
        emit_tensor(r, "dkb_tp_lookup_mask(tp, %s, %s)", T(codes), kn);
    }
    return r;
}

/* The recorder of a call of one or two tensor arguments and nothing else:
 * the call itself, then (recording) its one statement. */
#define REC_TENSOR_CALL1(op)                                                                                         \
    dkb_tensor *dkb__rec_##op(dkb_tp *tp, const dkb_tensor *a) {                                                     \
        dkb_tensor *r = dkb_tp_##op(tp, a);                                                                          \
        REC {                                                                                                        \
            begin();                                                                                                 \
            emit_tensor(r, "dkb_tp_" #op "(tp, %s)", T(a));                                                          \
        }                                                                                                            \
        return r;                                                                                                    \
    }
#define REC_TENSOR_CALL2(op)                                                                                         \
    dkb_tensor *dkb__rec_##op(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b) {                                \
        dkb_tensor *r = dkb_tp_##op(tp, a, b);                                                                       \
        REC {                                                                                                        \
            begin();                                                                                                 \
            emit_tensor(r, "dkb_tp_" #op "(tp, %s, %s)", T(a), T(b));                                                \
        }                                                                                                            \
        return r;                                                                                                    \
    }

REC_TENSOR_CALL2(and)

REC_TENSOR_CALL2(or)

REC_TENSOR_CALL1(not)

dkb_tensor *dkb__rec_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b) {
    dkb_tensor *r = dkb_tp_arith(tp, a, op, b);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_arith(tp, %s, %s, %s)", T(a), arith_c(op), T(b));
    }
    return r;
}

dkb_tensor *dkb__rec_arith_i64(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale) {
    dkb_tensor *r = dkb_tp_arith_i64(tp, a, op, value, scale);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_arith_i64(tp, %s, %s, %s, %d)", T(a), arith_c(op), I(value), scale);
    }
    return r;
}

dkb_tensor *dkb__rec_rsub_i64(dkb_tp *tp, int64_t value, int scale, const dkb_tensor *a) {
    dkb_tensor *r = dkb_tp_rsub_i64(tp, value, scale, a);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_rsub_i64(tp, %s, %d, %s)", I(value), scale, T(a));
    }
    return r;
}

dkb_tensor *dkb__rec_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to) {
    dkb_tensor *r = dkb_tp_cast(tp, a, to);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_cast(tp, %s, %s)", T(a), dtype_c(to));
    }
    return r;
}

dkb_tensor *dkb__rec_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b) {
    dkb_tensor *r = dkb_tp_where(tp, cond, a, b);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_where(tp, %s, %s, %s)", T(cond), T(a), T(b));
    }
    return r;
}

REC_TENSOR_CALL1(year)

dkb_tensor *dkb__rec_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max) {
    dkb_tensor *r = dkb_tp_pack2(tp, a, b, b_max);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_pack2(tp, %s, %s, %s)", T(a), T(b), I(b_max));
    }
    return r;
}

dkb_tensor *dkb__rec_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern) {
    dkb_tensor *r = dkb_tp_like(tp, str, pattern);
    REC {
        begin();
        sbuf pat = {0};
        sb_cstr(&pat, pattern, strlen(pattern));
        emit_tensor(r, "dkb_tp_like(tp, %s, %s)", T(str), pat.p ? pat.p : "\"\"");
        free(pat.p);
    }
    return r;
}

dkb_tensor *dkb__rec_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len) {
    dkb_tensor *r = dkb_tp_substr(tp, str, start, len);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_substr(tp, %s, %d, %d)", T(str), start, len);
    }
    return r;
}

/* recorded only when it packed (else the caller's other way is) */
dkb_tensor *dkb__rec_str_pack(dkb_tp *tp, const dkb_tensor *str, bool *fits) {
    dkb_tensor *r = dkb_tp_str_pack(tp, str, fits);
    REC {
        if (r) {
            begin();
            emit_tensor(r, "dkb_tp_str_pack(tp, %s, NULL)", T(str));
        }
    }
    return r;
}

dkb_tensor *dkb__rec_str_to_i64(dkb_tp *tp, const dkb_tensor *str) {
    dkb_tensor *r = dkb_tp_str_to_i64(tp, str);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_str_to_i64(tp, %s)", T(str));
    }
    return r;
}

REC_TENSOR_CALL2(compress)

REC_TENSOR_CALL1(nonzero)

dkb_tensor *dkb__rec_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill) {
    dkb_tensor *r = dkb_tp_gather(tp, a, idx, fill);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_gather(tp, %s, %s, %s)", T(a), T(idx), I(fill));
    }
    return r;
}

dkb_join_result dkb__rec_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys,
                              dkb_join_kind kind) {
    dkb_join_result r = dkb_tp_join(tp, build_keys, probe_keys, kind);
    REC {
        begin();
        int k = R.njoin++;
        sb_add(&SB, "    dkb_join_result j%d = dkb_tp_join(tp, %s, ", k, T(build_keys));
        sb_add(&SB, "%s, %s);\n", T(probe_keys), kind == DKB_JOIN_LEFT ? "DKB_JOIN_LEFT" : "DKB_JOIN_INNER");
        end();
        char n[48];
        snprintf(n, sizeof n, "j%d.probe_idx", k);
        define(r.probe_idx, n);
        snprintf(n, sizeof n, "j%d.build_idx", k);
        define(r.build_idx, n);
    }
    return r;
}

REC_TENSOR_CALL2(semi_join)

dkb_groups dkb__rec_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys) {
    dkb_groups g = dkb_tp_group(tp, keys, nkeys);
    REC {
        begin();
        int k = R.ngroup++;
        sb_add(&SB, "    dkb_groups g%d = dkb_tp_group(tp, (const dkb_tensor *const[]){", k);
        for (int i = 0; i < nkeys; i++) sb_add(&SB, "%s%s", i ? ", " : "", T(keys[i]));
        sb_add(&SB, "}, %d);\n", nkeys);
        end();
        char n[48];
        snprintf(n, sizeof n, "g%d.group_id", k);
        define(g.group_id, n);
        snprintf(n, sizeof n, "g%d.first_row", k);
        define(g.first_row, n);
    }
    return g;
}

dkb_tensor *dkb__rec_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values) {
    dkb_tensor *r = dkb_tp_aggregate(tp, g, agg, values);
    REC {
        begin();
        char id[64], gn[200];
        snprintf(id, sizeof id, "%s", T(g->group_id));
        char *dot = strchr(id, '.');
        if (dot && !strcmp(dot, ".group_id")) { /* a dkb_tp_group's groups */
            *dot = 0;
            snprintf(gn, sizeof gn, "%s", id);
        } else { /* groups the translator put together */
            snprintf(gn, sizeof gn, "(dkb_groups){%s, %s, %s}", id, T(g->first_row), I(g->ngroups));
        }
        emit_tensor(r, "dkb_tp_aggregate(tp, &%s, %s, %s)", gn, agg_c(agg), T(values));
    }
    return r;
}

dkb_tensor *dkb__rec_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values) {
    dkb_tensor *r = dkb_tp_reduce(tp, agg, values);
    REC {
        begin();
        emit_tensor(r, "dkb_tp_reduce(tp, %s, %s)", agg_c(agg), T(values));
    }
    return r;
}

/* `(dkb_sort_key[]){{t1, false}, ...}` into SB's argument text. */
static char *sort_keys_c(const dkb_sort_key *keys, int nkeys) {
    sbuf b = {0};
    sb_add(&b, "(dkb_sort_key[]){");
    for (int i = 0; i < nkeys; i++) sb_add(&b, "%s{%s, %s}", i ? ", " : "", T(keys[i].key), keys[i].desc ? "true" : "false");
    sb_add(&b, "}");
    return b.p;
}

dkb_tensor *dkb__rec_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys) {
    dkb_tensor *r = dkb_tp_sort(tp, keys, nkeys);
    REC {
        begin();
        char *k = sort_keys_c(keys, nkeys);
        emit_tensor(r, "dkb_tp_sort(tp, %s, %d)", k ? k : "NULL", nkeys);
        free(k);
    }
    return r;
}

dkb_tensor *dkb__rec_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t kk) {
    dkb_tensor *r = dkb_tp_topk(tp, keys, nkeys, kk);
    REC {
        begin();
        char *k = sort_keys_c(keys, nkeys);
        emit_tensor(r, "dkb_tp_topk(tp, %s, %d, %s)", k ? k : "NULL", nkeys, I(kk));
        free(k);
    }
    return r;
}

void dkb__rec_relabel(const dkb_tensor *out, const dkb_tensor *t, int scale, const dkb_tp_dict *dict) {
    REC {
        begin();
        const char *tn = T(t), *dn = D(dict);
        char tcopy[64], dcopy[64];
        snprintf(tcopy, sizeof tcopy, "%s", tn);
        snprintf(dcopy, sizeof dcopy, "%s", dn);
        cur()->relabels = true;
        emit_tensor(out, "relabel(&H[%d], %s, %d, %s)", R.nhead++, tcopy, scale, dcopy);
    }
}

void dkb__rec_concat(const dkb_tensor *out, const dkb_tensor *a, const dkb_tensor *b) {
    REC {
        begin();
        cur()->concats = true;
        const char *an = T(a), *bn = T(b);
        char ac[64], bc[64];
        snprintf(ac, sizeof ac, "%s", an);
        snprintf(bc, sizeof bc, "%s", bn);
        emit_tensor(out, "concat(tp, %s, %s)", ac, bc);
    }
}

/* ---- the result ---- */

void dkb__rec_result(int nc, char *const *names, dkb_tensor *const *v, dkb_tensor *const *valid,
                     const dkb_res_type *types, const int *scales, int norder, const dkb_sort_spec *order) {
    if (!R.on || R.failed) return;
    int nout = 0;
    for (int i = 0; i < nc; i++) nout += 1 + (valid[i] != NULL);
    if (nout > DKB_SET_MAX) {
        rfail("--emit c: %d core outputs (at most %d)", nout, DKB_SET_MAX);
        return;
    }
    sbuf o = {0}, f = {0};
    /* core's outputs: one statement, the root of liveness */
    begin();
    for (int i = 0; i < nc; i++) {
        sb_add(&SB, "    dkb_set_put(tp, out, \"col%d\", %s);\n", i, T(v[i]));
        if (valid[i]) sb_add(&SB, "    dkb_set_put(tp, out, \"col%d_valid\", %s);\n", i, T(valid[i]));
    }
    end();
    if (cur()) cur()->live = true;
    static const char *resty[] = {"DKB_RES_INT", "DKB_RES_DECIMAL", "DKB_RES_FLOAT", "DKB_RES_DATE", "DKB_RES_STRING"};
    sb_add(&f, "    enum { NC = %d };\n    static const char *const names[NC] = {", nc);
    for (int i = 0; i < nc; i++) {
        sb_add(&f, i ? ", " : "");
        sb_cstr(&f, names[i], strlen(names[i]));
    }
    sb_add(&f, "};\n    static const dkb_res_type types[NC] = {");
    for (int i = 0; i < nc; i++) sb_add(&f, "%s%s", i ? ", " : "", (unsigned)types[i] < 5 ? resty[types[i]] : "DKB_RES_INT");
    sb_add(&f, "};\n    static const int scales[NC] = {");
    for (int i = 0; i < nc; i++) sb_add(&f, "%s%d", i ? ", " : "", scales[i]);
    sb_add(&f, "};\n    dkb_tensor *t[NC];\n");
    for (int i = 0; i < nc; i++) sb_add(&f, "    t[%d] = dkb_set_get(tp, out, \"col%d\");\n", i, i);
    sb_add(&f, "    int rc = dkb_tp_status(tp, NULL);\n    if (rc) return rc;\n"
               "    if ((rc = dkb_result_init(res, NC, names, types, scales))) return rc;\n"
               "    int64_t n = t[0]->n;\n"
               "    for (int64_t r = 0; r < n; r++)\n"
               "        if (dkb_result_add_row(res) < 0) return DKB_ENOMEM;\n");
    for (int i = 0; i < nc; i++) {
        const dkb_tensor *x = v[i];
        sb_add(&f, "    /* %s */\n", names[i]);
        if (types[i] == DKB_RES_STRING && x->dtype == DKB_TP_STR) {
            sb_add(&f, "    if ((rc = dkb__plan_set_texts(tp, res, %d, t[%d]))) return rc;\n", i, i);
        } else if (types[i] == DKB_RES_STRING && x->dtype == DKB_TP_U8) {
            sb_add(&f, "    for (int64_t r = 0; r < n; r++)\n"
                       "        if ((rc = dkb__plan_set_code(tp, \"sql\", res, r, %d, t[%d], r))) return rc;\n", i, i);
        } else if (types[i] == DKB_RES_STRING) {
            sb_add(&f, "    for (int64_t r = 0; r < n; r++) {\n"
                       "        bool b = dkb_tp_get_i64(tp, t[%d], r) != 0;\n"
                       "        if (dkb_result_set_str(res, r, %d, b ? \"true\" : \"false\", b ? 4 : 5)) return DKB_ENOMEM;\n"
                       "    }\n", i, i);
        } else {
            static const char *set[] = {"dkb_result_set_int(res, r, %d, dkb_tp_get_i64(tp, t[%d], r))",
                                        "dkb_result_set_dec(res, r, %d, dkb_tp_get_i128(tp, t[%d], r))",
                                        "dkb_result_set_float(res, r, %d, dkb_tp_get_f64(tp, t[%d], r))",
                                        "dkb_result_set_date(res, r, %d, (int32_t)dkb_tp_get_i64(tp, t[%d], r))"};
            sb_add(&f, "    for (int64_t r = 0; r < n; r++) ");
            sb_add(&f, set[(unsigned)types[i] < 4 ? types[i] : 0], i, i);
            sb_add(&f, ";\n");
        }
        if (valid[i])
            sb_add(&f, "    {\n        const dkb_tensor *valid = dkb_set_get(tp, out, \"col%d_valid\");\n"
                       "        for (int64_t r = 0; r < n; r++)\n"
                       "            if (!dkb_tp_get_i64(tp, valid, r) && dkb_result_set_null(res, r, %d)) return DKB_ENOMEM;\n"
                       "    }\n", i, i);
    }
    if (norder > 0) {
        sb_add(&f, "    static const dkb_sort_spec order[] = {");
        for (int i = 0; i < norder && i < 8; i++)
            sb_add(&f, "%s{%d, %s}", i ? ", " : "", order[i].column, order[i].desc ? "true" : "false");
        sb_add(&f, "};\n    dkb_result_set_order(res, %d, order);\n", norder < 8 ? norder : 8);
    }
    sb_add(&f, "    return dkb_tp_status(tp, NULL);\n");
    (void)o;
    R.finish = f.p;
    R.have_result = true;
}

/* ---- the file ---- */

static void reset_recorder(void) {
    for (int i = 0; i < R.ns; i++) free(R.s[i].code), free(R.s[i].statics), free(R.s[i].uses);
    free(R.s), free(R.t), free(R.d), free(R.finish);
    free(SB.p), free(LIT.p);
    memset(&SB, 0, sizeof SB), memset(&LIT, 0, sizeof LIT);
    memset(&R, 0, sizeof R);
}

/* The SQL inside a comment: each line after " *   ", a star-slash broken. */
static void comment_sql(FILE *out, const char *sql) {
    const char *s = sql;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        fputs(" *   ", out);
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '/' && i && s[i - 1] == '*') fputc(' ', out);
            if (s[i] != '\r') fputc(s[i], out);
        }
        fputc('\n', out);
        s += n + (e ? 1 : 0);
    }
}

static void write_file(FILE *out, const char *sql, const char *name, int nlive) {
    fprintf(out, "/* %s.c: a SQL query as a TensorPlan baseline, written by `dkb sql --emit c`.\n *\n", name);
    comment_sql(out, sql);
    fprintf(out, " *\n * Plan: the %d TensorPlan operations the SQL translator ran over DuckDB's\n"
                 " * optimized plan of this query (operations whose results only fed host-side\n"
                 " * decisions left out). Values the translator computed on the host from the\n"
                 " * store it ran on (row counts, key ranges, dense ids, dictionary lookup\n"
                 " * tables) are literals here: the program is specialised to that store. */\n",
            nlive);
    fprintf(out, "#include <stdbool.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
                 "#include \"dkb/query.h\"\n\n"
                 "#include \"queries/plan_util.h\"  // defines: dkb__plan_set_code, dkb__plan_set_texts\n\n");
    bool any = false;
    for (int i = 0; i < R.ns; i++)
        if (R.s[i].live && R.s[i].statics) {
            if (!any) fputs("/* ---- constants ---- */\n\n", out);
            any = true;
            fputs(R.s[i].statics, out);
        }
    if (any) fputc('\n', out);
    fputs("/* ---- plan ---- */\n\n", out);
    bool relabels = false, fills = false, concats = false;
    for (int i = 0; i < R.ns; i++) {
        concats |= R.s[i].live && R.s[i].concats;
        relabels |= R.s[i].live && R.s[i].relabels;
        fills |= R.s[i].live && R.s[i].fills;
    }
    if (relabels) {
        fprintf(out, "/* Tensor headers that relabel a tensor's scale or dictionary (same data). */\n"
                     "static dkb_tensor H[%d];\n\n"
                     "static dkb_tensor *relabel(dkb_tensor *h, const dkb_tensor *t, int scale, const dkb_tp_dict *dict) {\n"
                     "    if (!t) return NULL;\n    *h = *t;\n    h->scale = scale;\n    h->dict = dict;\n    return h;\n}\n\n",
                R.nhead);
    }
    if (fills)
        fputs("/* n copies of the value at v (size bytes) as a tensor of dtype t. */\n"
              "static dkb_tensor *from_host_fill(dkb_tp *tp, dkb_tp_dtype t, int64_t n, const void *v, size_t size) {\n"
              "    char *h = malloc(size * (size_t)(n > 0 ? n : 1));\n"
              "    if (!h) return dkb_tp_fail(tp, DKB_ENOMEM, \"out of memory\");\n"
              "    for (int64_t i = 0; i < n; i++) memcpy(h + (size_t)i * size, v, size);\n"
              "    dkb_tensor *r = dkb_tp_from_host(tp, t, n, h);\n    free(h);\n    return r;\n}\n\n",
              out);
    if (concats)
        fputs("/* Rows of a, then rows of b (one dtype; STR too), through host memory: the\n"
              " * translator's concatenation (UNION ALL, the unmatched rows of outer joins). */\n"
              "static dkb_tensor *concat(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b) {\n"
              "    if (!a || !b) return NULL;\n"
              "    if (a->dtype != b->dtype) return dkb_tp_fail(tp, DKB_EINTERNAL, \"concat: two dtypes\");\n"
              "    int64_t n = a->n + b->n;\n"
              "    if (a->dtype == DKB_TP_STR) {\n"
              "        int64_t *ha = dkb_tp_host_copy(tp, a), *hb = dkb_tp_host_copy(tp, b);\n"
              "        if (!ha || !hb) return NULL;\n"
              "        int64_t na = ha[a->n], nb = hb[b->n];\n"
              "        int64_t *off = malloc((size_t)(n + 1) * sizeof *off);\n"
              "        char *bytes = malloc((size_t)(na + nb + 1));\n"
              "        dkb_tensor *r = NULL;\n"
              "        if (off && bytes) {\n"
              "            for (int64_t i = 0; i <= a->n; i++) off[i] = ha[i];\n"
              "            for (int64_t i = 1; i <= b->n; i++) off[a->n + i] = na + hb[i];\n"
              "            memcpy(bytes, (char *)(ha + a->n + 1), (size_t)na);\n"
              "            memcpy(bytes + na, (char *)(hb + b->n + 1), (size_t)nb);\n"
              "            r = dkb_tp_from_host_str(tp, n, off, bytes);\n"
              "        } else {\n"
              "            dkb_tp_fail(tp, DKB_ENOMEM, \"out of memory\");\n"
              "        }\n"
              "        free(off), free(bytes);\n"
              "        return r;\n"
              "    }\n"
              "    size_t es = dkb_tp_dtype_size(a->dtype);\n"
              "    char *ha = a->n ? dkb_tp_host_copy(tp, a) : NULL, *hb = b->n ? dkb_tp_host_copy(tp, b) : NULL;\n"
              "    if ((a->n && !ha) || (b->n && !hb)) return NULL;\n"
              "    char *buf = malloc(es * (size_t)n + 1);\n"
              "    if (!buf) return dkb_tp_fail(tp, DKB_ENOMEM, \"out of memory\");\n"
              "    if (a->n) memcpy(buf, ha, es * (size_t)a->n);\n"
              "    if (b->n) memcpy(buf + es * (size_t)a->n, hb, es * (size_t)b->n);\n"
              "    dkb_tensor *r = dkb_tp_from_host(tp, a->dtype, n, buf);\n"
              "    free(buf);\n"
              "    if (r) r->scale = a->scale, r->dict = a->dict == b->dict ? a->dict : NULL;\n"
              "    return r;\n"
              "}\n\n",
              out);
    fputs("static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {\n"
          "    (void)p;\n", out);
    if (!R.ncols) fputs("    (void)db, (void)in;\n", out);
    for (int i = 0; i < R.ncols; i++)
        fprintf(out, "    dkb_set_put_column(tp, in, db, \"%s\", \"%s\");\n", R.ctab[i], R.ccol[i]);
    fputs("    return dkb_tp_status(tp, NULL);\n}\n\n", out);
    fputs("static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {\n", out);
    bool reads = false;
    for (int i = 0; i < R.ns; i++) reads |= R.s[i].live && R.s[i].reads_in;
    if (!reads) fputs("    (void)in;\n", out);
    for (int i = 0; i < R.ns; i++)
        if (R.s[i].live) fputs(R.s[i].code, out);
    fputs("    return dkb_tp_status(tp, NULL);\n}\n\n", out);
    fputs("/* ---- result ---- */\n\n"
          "static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {\n"
          "    (void)p;\n", out);
    fputs(R.finish, out);
    fputs("}\n\n", out);
    fputs("static void draw(uint64_t seed, double sf, dkb_params *out) { (void)seed, (void)sf, (void)out; }\n\n"
          "static int check(const dkb_params *p, dkb_error *err) { (void)p, (void)err; return 0; }\n\n", out);
    fprintf(out, "const dkb_query dkb__sql_emitted = {\n    .number = 0,\n    .name = \"%s\",\n"
                 "    .title = \"SQL translated by dkb sql --emit c\",\n    .sql = ", name);
    sbuf q = {0};
    const char *s = sql;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s + 1) : strlen(s);
        if (s != sql) sb_add(&q, "\n           ");
        sb_cstr(&q, s, n);
        s += n;
    }
    fprintf(out, "%s,\n", q.p ? q.p : "\"\"");
    free(q.p);
    fputs("    .nparams = 0,\n    .params = NULL,\n    .draw = draw,\n    .check = check,\n"
          "    .prepare = prepare,\n    .core = core,\n    .finish = finish,\n};\n", out);
}

int dkb__sql_emit_c(dkb__sql_planner *p, const dkb_store *db, dkb_tp *tp, const char *sql, const char *json,
                    const char *name, FILE *out, dkb_error *err) {
    dkb_error scratch = {0};
    if (!err) err = &scratch;
    if (!p || !db || !tp || !sql || !json || !name || !out) return dkb_fail(err, DKB_EINVAL, "dkb__sql_emit_c: NULL argument");
    reset_recorder();
    R.db = db;
    R.on = true;
    dkb_result res = {0};
    int rc = dkb__sql_translate(p, db, tp, sql, json, NULL, &res, err);
    R.on = false;
    dkb_result_free(&res);
    if (!rc && !R.failed && !R.have_result) rfail("--emit c: the translator gave no result");
    if (!rc && R.failed) rc = dkb_fail(err, DKB_EINVAL, "%s", R.msg);
    if (!rc) {
        /* liveness, backwards from the outputs */
        int nlive = 0;
        for (int i = R.ns - 1; i >= 0; i--)
            if (R.s[i].live)
                for (int k = 0; k < R.s[i].nuses; k++) R.s[R.s[i].uses[k]].live = true;
        for (int i = 0; i < R.ns; i++) nlive += R.s[i].live;
        write_file(out, sql, name, nlive - 1);
    }
    reset_recorder();
    return rc;
}
