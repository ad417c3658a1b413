/* tbl.h: dbgen's pipe-delimited .tbl text <-> column batches.
 *
 * Format: one row per line, each field followed by '|', then '\n'.
 * INT as decimal integer; DECIMAL as [-]D.DD (DKB_COL_WHOLE columns: the
 * integer part only); DATE as YYYY-MM-DD; strings verbatim. */
#ifndef DKB_TBL_H
#define DKB_TBL_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"
#include "table/batch.h"

/* A growable byte buffer. */
typedef struct dkb_buf {
    char *data;
    size_t len, cap;
} dkb_buf;
int dkb__buf_reserve(dkb_buf *buf, size_t more);  /* 0 or DKB_ENOMEM */
void dkb__buf_free(dkb_buf *buf);                  /* accepts a zeroed buffer */

/* Append rows [0, b->nrows) of b to out as .tbl text. 0 or DKB_ENOMEM. */
int dkb__tbl_format(const dkb_batch *b, dkb_buf *out);

/* Parse the .tbl lines in text[0, len) (whole lines, each ending in '\n')
 * and append them to b, which must have room for every line.
 * `file` and `first_line` (1-based number of the first line) only name the
 * place in error messages: "lineitem.tbl:17: field 5 (l_quantity): ...".
 * Returns 0, DKB_EPARSE (wrong field count, bad number, bad date, ...),
 * DKB_ERANGE (value does not fit) or DKB_ENOMEM. */
int dkb__tbl_parse(const char *text, size_t len, dkb_batch *b, const char *file,
                   int64_t first_line, dkb_error *err);

#endif
