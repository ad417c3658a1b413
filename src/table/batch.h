/* batch.h: a column batch, the in-memory interchange between the generator,
 * the .tbl parser and formatter, and the store reader and writer.
 *
 * A batch holds up to `cap` rows of one table, column-major:
 *   - INT, DECIMAL and DATE columns: v[row] as int64 (DECIMAL in hundredths,
 *     DATE in days since 1970-01-01).
 *   - DICT and TEXT columns: strings as offsets into one byte buffer;
 *     row r is bytes[off[r] .. off[r+1]), off[0] == 0. Not NUL-terminated.
 * Rows are appended in order; within a column, string rows must be appended
 * in row order. Set nrows when every column of the rows is filled. */
#ifndef DKB_BATCH_H
#define DKB_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/schema.h"

typedef struct dkb_batch_col {
    int64_t *v;        /* numeric columns: cap values; NULL for strings */
    uint32_t *off;     /* string columns: cap + 1 offsets; NULL otherwise */
    char *bytes;       /* string columns: the text of all rows */
    size_t bytes_len;  /* bytes used == off[rows appended] */
    size_t bytes_cap;  /* bytes allocated */
} dkb_batch_col;

typedef struct dkb_batch {
    const dkb_table_def *table;
    size_t nrows;      /* complete rows */
    size_t cap;        /* row capacity */
    dkb_batch_col col[DKB_MAX_COLUMNS];
} dkb_batch;

/* Allocate a batch for table t with room for cap rows (cap >= 1).
 * Returns 0 or DKB_ENOMEM (the batch is then left freed). */
int dkb__batch_init(dkb_batch *b, const dkb_table_def *t, size_t cap);
/* Release a batch's memory; accepts a zeroed or freed batch. */
void dkb__batch_free(dkb_batch *b);
/* Forget all rows, keep the memory. */
void dkb__batch_clear(dkb_batch *b);

/* Ensure string column c can take `more` further bytes; 0 or DKB_ENOMEM.
 * May move col[c].bytes. */
int dkb__batch_reserve_bytes(dkb_batch *b, int c, size_t more);

/* Append one string to string column c as row `row` (which must equal the
 * number of strings appended so far to c). 0 or DKB_ENOMEM. */
static inline int dkb__batch_put_str(dkb_batch *b, int c, size_t row, const char *s, size_t len);

/* Row r of string column c: pointer and length. */
static inline const char *dkb__batch_str(const dkb_batch *b, int c, size_t r, size_t *len) {
    const dkb_batch_col *k = &b->col[c];
    *len = k->off[r + 1] - k->off[r];
    return k->bytes + k->off[r];
}

/* ---- inline definitions ---- */
#include <string.h>
static inline int dkb__batch_put_str(dkb_batch *b, int c, size_t row, const char *s, size_t len) {
    dkb_batch_col *k = &b->col[c];
    if (k->bytes_len + len > k->bytes_cap) {
        int rc = dkb__batch_reserve_bytes(b, c, len);
        if (rc) return rc;
    }
    memcpy(k->bytes + k->bytes_len, s, len);
    k->bytes_len += len;
    k->off[row + 1] = (uint32_t)k->bytes_len;
    return 0;
}

#endif
