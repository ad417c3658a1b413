/* result_csv.c: read a result back from CSV (what dkb_result_print writes,
 * or DuckDB's COPY ... (HEADER)): RFC 4180 records, parsed in place. */
#include <stdlib.h>
#include <string.h>

#include "result/result_internal.h"

/* One record's fields, unescaped in place inside the file buffer. */
typedef struct record {
    int n, cap;
    const char **field;
    size_t *len;
    unsigned char *quoted;
} record;

static int record_push(record *rec, const char *s, size_t len, int quoted) {
    if (rec->n == rec->cap) {
        int cap = rec->cap ? rec->cap * 2 : 16;
        const char **f = realloc(rec->field, (size_t)cap * sizeof *f);
        if (!f) return -1;
        rec->field = f;
        size_t *l = realloc(rec->len, (size_t)cap * sizeof *l);
        if (!l) return -1;
        rec->len = l;
        unsigned char *q = realloc(rec->quoted, (size_t)cap);
        if (!q) return -1;
        rec->quoted = q;
        rec->cap = cap;
    }
    rec->quoted[rec->n] = (unsigned char)quoted;
    rec->field[rec->n] = s;
    rec->len[rec->n++] = len;
    return 0;
}

/* Parse the record at buf[*pos] (end at buf[size]) into rec, advancing *pos
 * past its newline and *line by the lines it spans; *more is set when it
 * ended with a newline (another record follows, maybe an empty one). 0 or
 * an error. */
static int parse_record(char *buf, size_t size, size_t *pos, int64_t *line, record *rec, int *more,
                        const char *path, dkb_error *err) {
    size_t p = *pos;
    int64_t start_line = *line;
    rec->n = 0;
    for (;;) {
        char *start = buf + p;
        size_t len;
        int quoted = p < size && buf[p] == '"';
        if (quoted) {
            size_t w = p;
            p++;
            for (;;) {
                if (p >= size)
                    return dkb_fail(err, DKB_EPARSE, "%s:%lld: unterminated quoted field", path,
                                    (long long)start_line);
                if (buf[p] == '"') {
                    if (p + 1 < size && buf[p + 1] == '"') {
                        buf[w++] = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                if (buf[p] == '\n') ++*line;
                buf[w++] = buf[p++];
            }
            len = w - (size_t)(start - buf);
            if (p < size && buf[p] == '\r' && p + 1 < size && buf[p + 1] == '\n') p++;
            if (p < size && buf[p] != ',' && buf[p] != '\n')
                return dkb_fail(err, DKB_EPARSE, "%s:%lld: unexpected character after a closing quote", path,
                                (long long)*line);
        } else {
            while (p < size && buf[p] != ',' && buf[p] != '\n') p++;
            len = (size_t)(buf + p - start);
            if (len && start[len - 1] == '\r' && (p >= size || buf[p] == '\n')) len--;
        }
        if (record_push(rec, start, len, quoted)) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", path);
        if (p < size && buf[p] == ',') {
            p++;
            continue;
        }
        *more = p < size;
        if (p < size) p++; /* the newline */
        ++*line;
        break;
    }
    *pos = p;
    return 0;
}

int dkb_result_read_csv(const char *path, const dkb_result *like, dkb_result *out, dkb_error *err) {
    char *buf;
    size_t size;
    dkb__res_builder b;
    int rc = dkb__res_reader_start("read_csv", path, like, out, &b, &buf, &size, err);
    if (rc) return rc;
    b.nulls = 1;
    size_t pos = 0;
    if (size >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) pos = 3; /* UTF-8 byte order mark */
    /* The last line's terminator ends the file; an empty line before it is
     * a record (a one-column row holding NULL: DuckDB writes "x\n\n"). */
    if (size > pos && buf[size - 1] == '\n') size -= 1 + (size - 1 > pos && buf[size - 2] == '\r');
    record rec = {0};
    int64_t line = 1;
    int more = 0;
    if (pos >= size) {
        rc = dkb_fail(err, DKB_EPARSE, "%s: empty file (expected a header line)", path);
        goto done;
    }
    if ((rc = parse_record(buf, size, &pos, &line, &rec, &more, path, err))) goto done;
    if (rec.n != like->ncols) {
        rc = dkb_fail(err, DKB_EPARSE, "%s:1: header has %d column%s, expected %d", path, rec.n,
                          rec.n == 1 ? "" : "s", like->ncols);
        goto done;
    }
    for (int c = 0; c < rec.n; c++)
        if (strlen(like->cols[c].name) != rec.len[c] || memcmp(like->cols[c].name, rec.field[c], rec.len[c])) {
            rc = dkb_fail(err, DKB_EPARSE, "%s:1: column %d is named '%.*s', expected '%s'", path, c + 1,
                          (int)(rec.len[c] > 60 ? 60 : rec.len[c]), rec.field[c], like->cols[c].name);
            goto done;
        }
    while (more) {
        int64_t rec_line = line;
        if ((rc = parse_record(buf, size, &pos, &line, &rec, &more, path, err))) goto done;
        if (rec.n != like->ncols) {
            rc = dkb_fail(err, DKB_EPARSE, "%s:%lld: %d field%s, expected %d", path, (long long)rec_line, rec.n,
                          rec.n == 1 ? "" : "s", like->ncols);
            goto done;
        }
        if ((rc = dkb__res_builder_row(&b, rec.field, rec.len, rec.quoted, rec_line, err))) goto done;
    }
done:
    if (rc) dkb_result_free(out);
    free(rec.field);
    free(rec.len);
    free(rec.quoted);
    free(buf);
    return rc;
}
