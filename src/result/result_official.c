/* result_official.c: read an official TPC-H answer file (dbgen's
 * answers/qN.out): a header line of truncated column names, then rows of
 * '|'-separated fields padded with spaces. */
#include <stdlib.h>
#include <string.h>

#include "result/result_internal.h"

/* Split line[0, len) at '|' into at most max fields; returns the count
 * (max + 1 when there are more). */
static int split(const char *line, size_t len, const char **field, size_t *flen, int max) {
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != '|') continue;
        if (n == max) return max + 1;
        field[n] = line + start;
        flen[n++] = i - start;
        start = i + 1;
    }
    return n;
}

int dkb_result_read_official(const char *path, const dkb_result *like, dkb_result *out, dkb_error *err) {
    char *buf;
    size_t size;
    dkb__res_builder b;
    int rc = dkb__res_reader_start("read_official", path, like, out, &b, &buf, &size, err);
    if (rc) return rc;
    b.trim = 1;
    b.str_rtrim = 1;
    const char *field[DKB__RES_MAX_COLS + 1];
    size_t flen[DKB__RES_MAX_COLS + 1];
    int ncols = like->ncols, have_header = 0;
    int64_t line = 0;
    for (size_t pos = 0; pos < size && !rc;) {
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - s) : size - pos;
        pos += len + 1;
        line++;
        if (len && s[len - 1] == '\r') len--;
        if (!len) continue; /* blank lines (the end of some files) */
        int n = split(s, len, field, flen, ncols);
        if (n != ncols) {
            const char *what = have_header ? "" : "header has ";
            if (n > ncols)
                rc = dkb_fail(err, DKB_EPARSE, "%s:%lld: %smore than %d fields", path, (long long)line, what, ncols);
            else
                rc = dkb_fail(err, DKB_EPARSE, "%s:%lld: %s%d field%s, expected %d", path, (long long)line, what, n,
                              n == 1 ? "" : "s", ncols);
        } else if (!have_header) {
            have_header = 1;
        } else {
            rc = dkb__res_builder_row(&b, field, flen, NULL, line, err);
        }
    }
    if (!rc && !have_header) rc = dkb_fail(err, DKB_EPARSE, "%s: empty file (expected a header line)", path);
    if (rc) dkb_result_free(out);
    free(buf);
    return rc;
}
