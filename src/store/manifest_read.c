/* manifest_read.c: parses and checks manifest.json (cJSON). Every problem
 * is reported as "DIR/manifest.json: field tables[5].columns[2].dtype: ...". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/reader_internal.h"

/* A field path being checked, for messages. */
typedef struct fpath {
    char s[160];
} fpath;

typedef struct rctx {
    dkb_store *s;
    dkb_error *err;
} rctx;

static fpath sub(const fpath *p, const char *key, int index) {
    fpath q;
    const char *dot = p->s[0] ? "." : "";
    int n = index >= 0 ? snprintf(q.s, sizeof q.s, "%s%s%s[%d]", p->s, dot, key, index)
                       : snprintf(q.s, sizeof q.s, "%s%s%s", p->s, dot, key);
    if (n < 0 || (size_t)n >= sizeof q.s) memcpy(q.s + sizeof q.s - 4, "...", 4);
    return q;
}

static int bad(const rctx *x, const fpath *p, const char *what) {
    return dkb_fail(x->err, DKB_ECORRUPT, "%s: field %s: %s", x->s->manifest_path, p->s, what);
}

static int get(const rctx *x, const cJSON *obj, const fpath *p, const char *key, int (*is)(const cJSON *),
               const char *what, const cJSON **out, fpath *qp) {
    fpath q = sub(p, key, -1);
    if (qp) *qp = q;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) return bad(x, &q, "missing");
    if (!is(it)) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected %s", what);
        return bad(x, &q, msg);
    }
    *out = it;
    return 0;
}

static int is_str(const cJSON *j) { return cJSON_IsString(j) && j->valuestring; }
static int is_num(const cJSON *j) { return cJSON_IsNumber(j); }
static int is_obj(const cJSON *j) { return cJSON_IsObject(j); }
static int is_arr(const cJSON *j) { return cJSON_IsArray(j); }

static int get_str(const rctx *x, const cJSON *o, const fpath *p, const char *key, const char **out) {
    const cJSON *it = NULL;
    int rc = get(x, o, p, key, is_str, "a string", &it, NULL);
    if (!rc) *out = it->valuestring;
    return rc;
}

/* An integer in [lo, hi] (hi at most 2^53: exact in a double). */
static int get_int(const rctx *x, const cJSON *o, const fpath *p, const char *key, int64_t lo,
                   int64_t hi, int64_t *out) {
    const cJSON *it = NULL;
    fpath q;
    int rc = get(x, o, p, key, is_num, "a number", &it, &q);
    if (rc) return rc;
    double d = it->valuedouble;
    if (d != floor(d) || d < (double)lo || d > (double)hi) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected an integer from %lld to %lld", (long long)lo, (long long)hi);
        return bad(x, &q, msg);
    }
    *out = (int64_t)d;
    return 0;
}

#define MAX_EXACT ((int64_t)1 << 53)

static int parse_dtype(const char *s, dkb_dtype_t *out) {
    static const char *names[] = {"int32", "int64", "uint8"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (dkb_dtype_t)i;
            return 0;
        }
    return -1;
}

static bool dtype_allowed(dkb_type_t t, dkb_dtype_t d) {
    switch (t) {
    case DKB_TYPE_INT: return d == DKB_DTYPE_INT32 || d == DKB_DTYPE_INT64;
    case DKB_TYPE_DATE: return d == DKB_DTYPE_INT32;
    case DKB_TYPE_DICT: return d == DKB_DTYPE_UINT8;
    default: return d == DKB_DTYPE_INT64;
    }
}

/* A path inside the store: relative, no "." or ".." components. */
static bool safe_path(const char *p) {
    if (!*p || *p == '/') return false;
    for (const char *c = p; *c;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return false;
        c += n + (e != NULL);
    }
    return true;
}

static int read_files(const rctx *x, const cJSON *jc, const fpath *cp, dkb_store_column *col) {
    static const char *roles[][2] = {{"data", NULL}, {"codes", "dictionary"}, {"offsets", "bytes"}};
    int kind = col->def->type == DKB_TYPE_DICT ? 1 : col->def->type == DKB_TYPE_TEXT ? 2 : 0;
    col->nfiles = kind ? 2 : 1;
    const cJSON *files = NULL;
    fpath fp;
    int rc = get(x, jc, cp, "files", is_arr, "an array", &files, &fp);
    if (rc) return rc;
    if (cJSON_GetArraySize(files) != col->nfiles) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected %d files for a %s column", col->nfiles,
                 dkb_type_name(col->def->type));
        return bad(x, &fp, msg);
    }
    for (int i = 0; i < col->nfiles; i++) {
        fpath p = sub(cp, "files", i);
        const cJSON *jf = cJSON_GetArrayItem(files, i);
        if (!is_obj(jf)) return bad(x, &p, "expected an object");
        dkb_store_file *f = &col->files[i];
        int64_t v;
        if ((rc = get_str(x, jf, &p, "role", &f->role))) return rc;
        if (strcmp(f->role, roles[kind][i]) != 0) {
            fpath q = sub(&p, "role", -1);
            char msg[64];
            snprintf(msg, sizeof msg, "expected \"%s\"", roles[kind][i]);
            return bad(x, &q, msg);
        }
        if ((rc = get_str(x, jf, &p, "path", &f->path))) return rc;
        if (!safe_path(f->path)) {
            fpath q = sub(&p, "path", -1);
            return bad(x, &q, "not a relative path inside the store");
        }
        if ((rc = get_int(x, jf, &p, "bytes", 0, MAX_EXACT, &v))) return rc;
        f->bytes = (uint64_t)v;
        if ((rc = get_int(x, jf, &p, "crc32", 0, UINT32_MAX, &v))) return rc;
        f->crc32 = (uint32_t)v;
    }
    /* Sizes implied by rows and dtype. */
    uint64_t rows = (uint64_t)col->rows;
    uint64_t want = kind == 2 ? (rows + 1) * 8 : rows * (uint64_t)dkb_dtype_size(col->dtype);
    if (col->files[0].bytes != want) {
        fpath p = sub(cp, "files", 0), q = sub(&p, "bytes", -1);
        char msg[96];
        snprintf(msg, sizeof msg, "%llu does not match %lld rows of %s", (unsigned long long)col->files[0].bytes,
                 (long long)col->rows, kind == 2 ? "int64 offsets (+1)" : dkb_dtype_name(col->dtype));
        return bad(x, &q, msg);
    }
    if (kind == 1) {
        const cJSON *d = NULL;
        fpath dp;
        int64_t size;
        if ((rc = get(x, jc, cp, "dictionary", is_obj, "an object", &d, &dp))) return rc;
        if ((rc = get_int(x, d, &dp, "size", 0, 256, &size))) return rc;
        const char *path;
        if ((rc = get_str(x, d, &dp, "path", &path))) return rc;
        if (strcmp(path, col->files[1].path) != 0) {
            fpath q = sub(&dp, "path", -1);
            return bad(x, &q, "differs from the column's dictionary file");
        }
        col->dict_size = (int)size;
    }
    return 0;
}

static int read_column(const rctx *x, const cJSON *jc, const fpath *cp, dkb_store_column *col,
                       const dkb_column_def *def, int64_t rows) {
    if (!is_obj(jc)) return bad(x, cp, "expected an object");
    const char *name, *type, *dtype;
    int rc = get_str(x, jc, cp, "name", &name);
    if (rc) return rc;
    if (strcmp(name, def->name) != 0) {
        fpath q = sub(cp, "name", -1);
        char msg[96];
        snprintf(msg, sizeof msg, "expected \"%s\" (columns are in schema order)", def->name);
        return bad(x, &q, msg);
    }
    col->def = def;
    col->rows = rows;
    if ((rc = get_str(x, jc, cp, "type", &type))) return rc;
    if (strcmp(type, dkb_type_name(def->type)) != 0) {
        fpath q = sub(cp, "type", -1);
        char msg[64];
        snprintf(msg, sizeof msg, "expected \"%s\"", dkb_type_name(def->type));
        return bad(x, &q, msg);
    }
    if ((rc = get_str(x, jc, cp, "dtype", &dtype))) return rc;
    if (parse_dtype(dtype, &col->dtype) != 0 || !dtype_allowed(def->type, col->dtype)) {
        fpath q = sub(cp, "dtype", -1);
        return bad(x, &q, "not a valid dtype for the column's type");
    }
    return read_files(x, jc, cp, col);
}

static int read_partitions(const rctx *x, const cJSON *jt, const fpath *tp, dkb_store_table *t) {
    const cJSON *parts = NULL;
    fpath pp;
    int rc = get(x, jt, tp, "partitions", is_arr, "an array", &parts, &pp);
    if (rc) return rc;
    int n = cJSON_GetArraySize(parts);
    if (n < 1) return bad(x, &pp, "expected at least one partition");
    t->parts = calloc((size_t)n, sizeof *t->parts);
    if (!t->parts) return dkb_fail(x->err, DKB_ENOMEM, "%s: out of memory", x->s->manifest_path);
    t->nparts = n;
    int64_t next = 0;
    for (int i = 0; i < n; i++) {
        fpath p = sub(tp, "partitions", i);
        const cJSON *jp = cJSON_GetArrayItem(parts, i);
        if (!is_obj(jp)) return bad(x, &p, "expected an object");
        dkb_store_partition *q = &t->parts[i];
        if ((rc = get_int(x, jp, &p, "row_start", 0, MAX_EXACT, &q->row_start))) return rc;
        if ((rc = get_int(x, jp, &p, "rows", 0, MAX_EXACT, &q->rows))) return rc;
        if (q->row_start != next) {
            fpath f = sub(&p, "row_start", -1);
            return bad(x, &f, "partitions must cover the rows in order without gaps");
        }
        next += q->rows;
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(jp, "key_min");
        const cJSON *hi = cJSON_GetObjectItemCaseSensitive(jp, "key_max");
        if (q->rows == 0 && (!lo || cJSON_IsNull(lo)) && (!hi || cJSON_IsNull(hi))) continue;
        if ((rc = get_int(x, jp, &p, "key_min", -MAX_EXACT, MAX_EXACT, &q->key_min))) return rc;
        if ((rc = get_int(x, jp, &p, "key_max", q->key_min, MAX_EXACT, &q->key_max))) return rc;
        q->has_key = true;
    }
    if (next != t->rows) return bad(x, &pp, "partition rows do not add up to the table's rows");
    return 0;
}

static int read_table(const rctx *x, const cJSON *jt, const fpath *tp, dkb_store_table *t) {
    if (!is_obj(jt)) return bad(x, tp, "expected an object");
    const char *name;
    int rc = get_str(x, jt, tp, "name", &name);
    if (rc) return rc;
    t->def = dkb_table_def_find(name);
    fpath np = sub(tp, "name", -1);
    if (!t->def) return bad(x, &np, "not a TPC-H table");
    for (const dkb_store_table *o = x->s->tables; o < t; o++)
        if (o->def == t->def) return bad(x, &np, "table listed twice");
    if ((rc = get_int(x, jt, tp, "rows", 0, MAX_EXACT, &t->rows))) return rc;
    if ((rc = read_partitions(x, jt, tp, t))) return rc;
    const cJSON *cols = NULL;
    fpath cp;
    if ((rc = get(x, jt, tp, "columns", is_arr, "an array", &cols, &cp))) return rc;
    int n = cJSON_GetArraySize(cols);
    if (n < 1 || n > t->def->ncols) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected 1 to %d columns (all of the table's, or a subset)", t->def->ncols);
        return bad(x, &cp, msg);
    }
    /* every column of the schema, or a subset of them, in schema order */
    int next = 0;
    for (int c = 0; c < n; c++) {
        fpath p = sub(tp, "columns", c);
        const cJSON *jc = cJSON_GetArrayItem(cols, c);
        const cJSON *jn = is_obj(jc) ? cJSON_GetObjectItemCaseSensitive(jc, "name") : NULL;
        int k = cJSON_IsString(jn) ? dkb_table_def_column(t->def, jn->valuestring) : -1;
        const dkb_column_def *def = k >= next ? &t->def->cols[k] : next < t->def->ncols ? &t->def->cols[next] : NULL;
        if (!def) return bad(x, &p, "more columns than the table has");
        rc = read_column(x, jc, &p, &t->cols[c], def, t->rows);
        if (rc) return rc;
        next = k + 1;
    }
    t->ncols = n;
    return 0;
}

int dkb__manifest_read(dkb_store *s, const char *text, size_t len, dkb_error *err) {
    rctx x = {s, err};
    const char *end = NULL;
    s->json = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!s->json)
        return dkb_fail(err, DKB_EPARSE, "%s: not valid JSON (near byte %lld)", s->manifest_path,
                        end ? (long long)(end - text) : -1LL);
    const cJSON *root = s->json;
    fpath top = {""};
    if (!is_obj(root)) return bad(&x, &top, "the manifest is not a JSON object");
    const char *format;
    int rc = get_str(&x, root, &top, "format", &format);
    if (rc) return rc;
    if (strcmp(format, DKB_STORE_FORMAT) != 0)
        return dkb_fail(err, DKB_ECORRUPT, "%s: field format: \"%s\" is not \"%s\"", s->manifest_path,
                        format, DKB_STORE_FORMAT);
    int64_t v;
    if ((rc = get_int(&x, root, &top, "format_version", 0, MAX_EXACT, &v))) return rc;
    if (v != DKB_STORE_FORMAT_VERSION)
        return dkb_fail(err, DKB_EVERSION,
                        "%s: field format_version: version %lld is not supported (this build reads %d)",
                        s->manifest_path, (long long)v, DKB_STORE_FORMAT_VERSION);
    const cJSON *it = NULL;
    fpath p;
    if ((rc = get(&x, root, &top, "scale_factor", is_num, "a number", &it, &p))) return rc;
    if (!(it->valuedouble > 0)) return bad(&x, &p, "expected a positive number");
    s->sf = it->valuedouble;
    if ((rc = get_str(&x, root, &top, "source", &s->source))) return rc;
    if ((rc = get_str(&x, root, &top, "created", &s->created))) return rc;
    const cJSON *slice = NULL;
    fpath sp;
    if ((rc = get(&x, root, &top, "slice", is_obj, "an object", &slice, &sp))) return rc;
    int64_t parts, part;
    if ((rc = get_int(&x, slice, &sp, "parts", 1, INT32_MAX, &parts))) return rc;
    if ((rc = get_int(&x, slice, &sp, "part", 1, parts, &part))) return rc;
    s->part = (int)part;
    s->parts = (int)parts;
    const cJSON *tables = NULL;
    fpath tp;
    if ((rc = get(&x, root, &top, "tables", is_arr, "an array", &tables, &tp))) return rc;
    int n = cJSON_GetArraySize(tables);
    if (n > DKB_TABLE_COUNT) return bad(&x, &tp, "more tables than TPC-H has");
    for (int i = 0; i < n; i++) {
        fpath q = sub(&top, "tables", i);
        s->ntables = i + 1;
        if ((rc = read_table(&x, cJSON_GetArrayItem(tables, i), &q, &s->tables[i]))) return rc;
    }
    return 0;
}
