/* fuzz_tbl_parse.c: libFuzzer target for dkb__tbl_parse.
 *
 * Input: byte 0 picks the table (low 3 bits) and whether the batch has room
 * for every line (bit 3); the rest is .tbl text, copied into a buffer of
 * exactly its size so that any read past the end is caught by ASan.
 * Checked on every input: the status is one the contract allows, a failure
 * leaves a one-line message and a consistent batch; a success parsed every
 * line, and formatting the rows and parsing that text again gives the same
 * values (dkb__tbl_format prints DKB_COL_WHOLE decimals without fraction). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbl/tbl.h"

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_tbl_parse: %s\n", what);
        abort();
    }
}

static void same_rows(const dkb_batch *a, const dkb_batch *b) {
    check(a->nrows == b->nrows, "reparse: row count differs");
    const dkb_table_def *t = a->table;
    for (int c = 0; c < t->ncols; c++)
        for (size_t r = 0; r < a->nrows; r++) {
            if (a->col[c].v) {
                int64_t want = a->col[c].v[r];
                if (t->cols[c].flags & DKB_COL_WHOLE) want = want / 100 * 100;
                check(b->col[c].v[r] == want, "reparse: value differs");
            } else {
                size_t n1, n2;
                const char *s1 = dkb__batch_str(a, c, r, &n1), *s2 = dkb__batch_str(b, c, r, &n2);
                check(n1 == n2 && memcmp(s1, s2, n1) == 0, "reparse: string differs");
            }
        }
}

static void check_consistent(const dkb_batch *b) {
    for (int c = 0; c < b->table->ncols; c++)
        if (b->col[c].off) check(b->col[c].bytes_len == b->col[c].off[b->nrows], "batch inconsistent");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const dkb_table_def *t = dkb_table_def_get((dkb_table_id)(data[0] % DKB_TABLE_COUNT));
    size_t len = size - 1, lines = 0;
    char *text = malloc(len ? len : 1);
    if (!text) return 0;
    memcpy(text, data + 1, len);
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    size_t cap = (data[0] & 8) ? lines / 2 + 1 : lines + 1;
    dkb_batch b, b2;
    if (dkb__batch_init(&b, t, cap)) {
        free(text);
        return 0;
    }
    dkb_error err = {0};
    int rc = dkb__tbl_parse(text, len, &b, "fuzz.tbl", 1, &err);
    check(rc == 0 || rc == DKB_EPARSE || rc == DKB_ERANGE || rc == DKB_EINVAL || rc == DKB_ENOMEM,
          "unexpected status");
    check_consistent(&b);
    if (rc) {
        check(err.code == rc && strncmp(err.msg, "fuzz.tbl:", 9) == 0, "error message");
        check(strchr(err.msg, '\n') == NULL, "message spans lines");
    } else {
        check(b.nrows == lines && (len == 0 || text[len - 1] == '\n'), "not every line parsed");
        dkb_buf out = {0};
        check(dkb__tbl_format(&b, &out) == 0, "format failed");
        check(dkb__batch_init(&b2, t, cap) == 0, "batch");
        rc = dkb__tbl_parse(out.data, out.len, &b2, "fuzz-again.tbl", 1, &err);
        if (rc) fprintf(stderr, "reparse: %s\n", err.msg);
        check(rc == 0, "formatted text does not parse");
        same_rows(&b, &b2);
        dkb__batch_free(&b2);
        dkb__buf_free(&out);
    }
    dkb__batch_free(&b);
    free(text);
    return 0;
}
