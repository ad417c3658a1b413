/* import_plan.h: cutting a mapped .tbl file into chunks of whole lines and
 * partitions, with the line number of each chunk (internal to import). */
#ifndef DKB_STORE_IMPORT_PLAN_H
#define DKB_STORE_IMPORT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"

typedef struct dkb_import_span {
    size_t begin, end;       /* bytes [begin, end) of the file: whole lines */
    int64_t first_line;      /* 1-based number of the first line */
    int64_t lines;
    int part;                /* partition index */
    bool ends_partition;     /* last span of a partition that is not the last */
} dkb_import_span;

typedef struct dkb_import_plan {
    dkb_import_span *spans;
    size_t nspans;
    int64_t lines;           /* in the whole file */
} dkb_import_plan;

/* Number of lines in p[0, n): newlines, plus one for unterminated text. */
int64_t dkb__count_lines(const char *p, size_t n);

/* Plan text[0, len) into spans of about chunk_bytes and `parts` partitions.
 * keys has parts + 1 entries. split_by_keys: partition p holds the lines
 * whose leading integer key is in [keys[p], keys[p + 1]) (the file must be
 * sorted by it; keys[0] and keys[parts] are ignored). Otherwise partitions
 * are equal line ranges and, when keys is non-NULL, keys[p] receives the
 * key of partition p's first line (INT64_MAX when it is empty), keys[0] =
 * INT64_MIN and keys[parts] = INT64_MAX. Every partition has at least one
 * span (an empty one when it has no lines). file names the text in errors. */
int dkb__import_plan(const char *text, size_t len, size_t chunk_bytes, int parts, int64_t *keys,
                     bool split_by_keys, const char *file, dkb_import_plan *plan, dkb_error *err);
void dkb__import_plan_free(dkb_import_plan *plan);

#endif
