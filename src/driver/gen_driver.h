/* gen_driver.h: runs the generator over whole tables on many threads and
 * sends the rows to .tbl files or to a columnar store, in order, in bounded
 * memory (each thread holds one chunk of rows at a time). */
#ifndef DKB_GEN_DRIVER_H
#define DKB_GEN_DRIVER_H

#include <stdint.h>

#include "common/progress.h"
#include "dkb/error.h"
#include "dkb/schema.h"

typedef enum { DKB_OUT_STORE = 0, DKB_OUT_TBL } dkb_out_format;

typedef struct dkb_gen_opts {
    double sf;               /* scale factor as given (dbgen rules apply) */
    int threads;             /* >= 1 */
    unsigned tables;         /* bit (1u << dkb_table_id) per table to write */
    int part, parts;         /* write slice `part` (1-based) of `parts` */
    int partitions;          /* store only: partitions per table (>= 1) */
    const uint32_t *keep_cols; /* store only: NULL (every column), or per table
                              * the columns to write (bit c: column c) */
    dkb_out_format format;
    const char *out;         /* output directory (created; must not exist
                              * or be empty, unless force) */
    int force;
    dkb_progress progress;   /* done/total in rows of the current table */
} dkb_gen_opts;

typedef struct dkb_gen_summary {
    double sf;                            /* scale factor in effect */
    int64_t rows[DKB_TABLE_COUNT];        /* rows written per table */
    uint64_t bytes[DKB_TABLE_COUNT];      /* bytes written per table */
    double seconds[DKB_TABLE_COUNT];      /* wall time per table */
    double pool_seconds;                  /* building the text pool */
    double total_seconds;
} dkb_gen_summary;

/* Generate and write. On failure nothing is left at opts->out (or the
 * previous contents stay, with force) and err names what failed. */
int dkb__gen_run(const dkb_gen_opts *opts, dkb_gen_summary *sum, dkb_error *err);

/* The unit range [first, first + count) of slice `part` of `parts` for a
 * table of `units` units: as dbgen -C parts -S part (equal shares, the
 * remainder to the last). */
void dkb__slice_units(int64_t units, int part, int parts, int64_t *first, int64_t *count);

#endif
