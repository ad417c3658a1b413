/* result_read.c: what both result readers share: reading a whole file, and
 * turning rows of field texts into typed cells shaped like a given result
 * (exact decimals, strict dates and integers, errors naming file, line and
 * column). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result_internal.h"

int dkb__res_read_file(const char *path, char **data, size_t *size, dkb_error *err) {
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return dkb_fail(err, dkb_errno_code(errno), "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", path);
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return dkb_fail(err, DKB_EIO, "%s: read error", path);
    }
    buf[n] = 0;
    *data = buf;
    *size = n;
    return 0;
}

int dkb__res_builder_init(dkb__res_builder *b, dkb_result *out, const dkb_result *like, const char *path,
                          dkb_error *err) {
    memset(out, 0, sizeof *out);
    if (!like || like->ncols < 1 || like->ncols > DKB__RES_MAX_COLS)
        return dkb_fail(err, DKB_EINVAL, "%s: no result shape to read it as", path);
    const char *names[DKB__RES_MAX_COLS];
    dkb_res_type types[DKB__RES_MAX_COLS];
    int scales[DKB__RES_MAX_COLS];
    for (int c = 0; c < like->ncols; c++) {
        names[c] = like->cols[c].name;
        types[c] = like->cols[c].type;
        scales[c] = types[c] == DKB_RES_FLOAT ? like->cols[c].scale : 0;
    }
    int rc = dkb_result_init(out, like->ncols, names, types, scales);
    if (rc) return dkb_fail(err, rc, "%s: %s", path, dkb_strerror(rc));
    dkb_result_set_order(out, like->norder, like->order);
    b->out = out;
    b->path = path;
    b->str_rtrim = b->trim = b->nulls = 0;
    return 0;
}

int dkb__res_reader_start(const char *reader, const char *path, const dkb_result *like, dkb_result *out,
                          dkb__res_builder *b, char **data, size_t *size, dkb_error *err) {
    if (!path || !out) return dkb_fail(err, DKB_EINVAL, "%s: no path or output", reader);
    memset(out, 0, sizeof *out);
    int rc = dkb__res_read_file(path, data, size, err);
    if (rc) return rc;
    if ((rc = dkb__res_builder_init(b, out, like, path, err))) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

/* A field quoted for a message (at most 40 bytes of it). */
static const char *shown(const char *s, size_t len, char *buf, size_t n) {
    snprintf(buf, n, "'%.*s%s'", (int)(len > 40 ? 40 : len), s, len > 40 ? "..." : "");
    return buf;
}

/* Put a DECIMAL written at scale sc into column c, row `row`, growing the
 * column's scale when sc is larger. */
static int put_dec(dkb_result *r, int64_t row, int c, __int128 v, int sc) {
    dkb_res_column *col = &r->cols[c];
    if (sc > col->scale) {
        for (int64_t i = 0; i < row; i++)
            if (dkb__res_rescale(col->dec[i], col->scale, sc, &col->dec[i])) return -1;
        col->scale = sc;
    } else if (dkb__res_rescale(v, sc, col->scale, &v)) {
        return -1;
    }
    col->dec[row] = v;
    return 0;
}

int dkb__res_builder_row(dkb__res_builder *b, const char *const *fields, const size_t *lens,
                         const unsigned char *quoted, int64_t line, dkb_error *err) {
    dkb_result *r = b->out;
    int64_t row = dkb_result_add_row(r);
    if (row < 0) return dkb_fail(err, DKB_ENOMEM, "%s:%lld: out of memory", b->path, (long long)line);
    char q[64];
    for (int c = 0; c < r->ncols; c++) {
        const char *s = fields[c];
        size_t len = lens[c];
        dkb_res_column *col = &r->cols[c];
        if (b->nulls && !len && !(quoted && quoted[c])) {
            if (dkb_result_set_null(r, row, c))
                return dkb_fail(err, DKB_ENOMEM, "%s:%lld: out of memory", b->path, (long long)line);
            continue;
        }
        if (col->type == DKB_RES_STRING) {
            if (b->str_rtrim)
                while (len && s[len - 1] == ' ') len--;
            if (dkb_result_set_str(r, row, c, s, len))
                return dkb_fail(err, DKB_ENOMEM, "%s:%lld: out of memory", b->path, (long long)line);
            continue;
        }
        if (b->trim) {
            while (len && (*s == ' ' || *s == '\t')) s++, len--;
            while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
        }
        const char *what = NULL;
        switch (col->type) {
        case DKB_RES_INT:
            if (dkb__res_parse_int(s, len, &col->i64[row])) what = "an integer";
            break;
        case DKB_RES_DECIMAL: {
            __int128 v;
            int sc;
            if (dkb__res_parse_dec(s, len, DKB__RES_MAX_SCALE, &v, &sc) || put_dec(r, row, c, v, sc))
                what = "an exact decimal number (at most 38 digits)";
            break;
        }
        case DKB_RES_FLOAT: {
            char tmp[DKB__RES_CELL_BUF], *end;
            if (!len || len >= sizeof tmp) {
                what = "a number";
                break;
            }
            memcpy(tmp, s, len);
            tmp[len] = 0;
            col->f64[row] = strtod(tmp, &end);
            if (*end) what = "a number";
            break;
        }
        case DKB_RES_DATE:
            if (dkb__res_parse_date(s, len, &col->date[row])) what = "a date (YYYY-MM-DD)";
            break;
        case DKB_RES_STRING: break;
        }
        if (what)
            return dkb_fail(err, DKB_EPARSE, "%s:%lld: column %s: %s is not %s", b->path, (long long)line,
                            col->name, shown(s, len, q, sizeof q), what);
    }
    return 0;
}
