/* export.h: write a store's tables back as dbgen .tbl files (internal API;
 * `dkb export` is its front end). A store imported from dbgen output, or
 * generated, exports byte-identical to dbgen's files. */
#ifndef DKB_STORE_EXPORT_H
#define DKB_STORE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/progress.h"
#include "dkb/error.h"
#include "dkb/store.h"

typedef struct dkb_export_opts {
    unsigned tables;       /* bit (1u << dkb_table_id) per table; 0: every table of the store */
    int threads;           /* 0: OpenMP's default */
    int force;             /* replace existing TABLE.tbl files */
    size_t chunk_rows;     /* 0: 65536; rows formatted per chunk */
} dkb_export_opts;

typedef struct dkb_export_summary {
    int64_t rows[DKB_TABLE_COUNT];
    uint64_t bytes[DKB_TABLE_COUNT];   /* .tbl bytes written */
    double seconds[DKB_TABLE_COUNT];
    double total_seconds;
} dkb_export_summary;

/* Write out_dir/TABLE.tbl for the chosen tables of s (out_dir is created
 * when missing). Every file is written as TABLE.tbl.tmp.<pid>, fsynced, and
 * all are renamed into place only after the last one is complete; on
 * failure the temporary files are removed and existing files are
 * untouched. Chunks of rows are decoded and formatted on many threads and
 * written in order. progress (may be NULL) gets done/total rows of the
 * current table; sum (may be NULL) is filled on success.
 * Errors: DKB_EEXIST (a TABLE.tbl exists and !force), DKB_ENOENT (a table
 * asked for is not in the store), DKB_ECORRUPT (a dictionary code or text
 * offset outside its file: the store was not verified), DKB_EIO,
 * DKB_ENOSPC, DKB_ENOMEM; messages name the file. */
int dkb__store_export(const dkb_store *s, const char *out_dir, const dkb_export_opts *opts,
                      const dkb_progress *progress, dkb_export_summary *sum, dkb_error *err);

#endif
