/* batch.c: allocation and growth of column batches (see batch.h). */
#include "batch.h"

#include <stdlib.h>

#include "dkb/error.h"

static int is_string(dkb_type_t t) { return t == DKB_TYPE_DICT || t == DKB_TYPE_TEXT; }

int dkb__batch_init(dkb_batch *b, const dkb_table_def *t, size_t cap) {
    memset(b, 0, sizeof *b);
    if (cap == 0 || !t) return DKB_EINVAL;
    b->table = t;
    b->cap = cap;
    for (int c = 0; c < t->ncols; c++) {
        dkb_batch_col *k = &b->col[c];
        if (is_string(t->cols[c].type)) {
            k->off = calloc(cap + 1, sizeof *k->off);
            k->bytes_cap = cap * 16;
            k->bytes = malloc(k->bytes_cap);
            if (!k->off || !k->bytes) goto oom;
        } else {
            k->v = malloc(cap * sizeof *k->v);
            if (!k->v) goto oom;
        }
    }
    return 0;
oom:
    dkb__batch_free(b);
    return DKB_ENOMEM;
}

void dkb__batch_free(dkb_batch *b) {
    if (!b) return;
    for (int c = 0; c < DKB_MAX_COLUMNS; c++) {
        free(b->col[c].v);
        free(b->col[c].off);
        free(b->col[c].bytes);
    }
    memset(b, 0, sizeof *b);
}

void dkb__batch_clear(dkb_batch *b) {
    b->nrows = 0;
    for (int c = 0; b->table && c < b->table->ncols; c++) {
        b->col[c].bytes_len = 0;
        if (b->col[c].off) b->col[c].off[0] = 0;
    }
}

int dkb__batch_reserve_bytes(dkb_batch *b, int c, size_t more) {
    dkb_batch_col *k = &b->col[c];
    if (k->bytes_len + more <= k->bytes_cap) return 0;
    if (k->bytes_len + more > UINT32_MAX) return DKB_ERANGE;
    size_t ncap = k->bytes_cap ? k->bytes_cap : 64;
    while (ncap < k->bytes_len + more) ncap *= 2;
    char *p = realloc(k->bytes, ncap);
    if (!p) return DKB_ENOMEM;
    k->bytes = p;
    k->bytes_cap = ncap;
    return 0;
}
