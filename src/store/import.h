/* import.h: load a directory of dbgen .tbl files into a columnar store
 * (internal API; `dkb import` is its front end).
 *
 * Each TABLE.tbl is memory-mapped, cut into chunks at line boundaries,
 * parsed and encoded on many threads (OpenMP) and written in order. With
 * partitions > 1, orders is split into equal row ranges and the orderkey at
 * each boundary also splits lineitem (co-partitioned: partition i of both
 * holds the same orderkeys; both files must be sorted by orderkey, as dbgen
 * writes them); part and partsupp likewise by partkey (as dkb gen
 * partitions them: a part's partsupp rows stay in its partition); the other
 * tables are split into equal row ranges. */
#ifndef DKB_STORE_IMPORT_H
#define DKB_STORE_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/progress.h"
#include "dkb/error.h"
#include "dkb/schema.h"

typedef struct dkb_import_opts {
    unsigned tables;       /* bit (1u << dkb_table_id) per table to import; 0: all 8 */
    double scale_factor;   /* 0: inferred from the row count of customer,
                            * supplier, part, partsupp or orders */
    int partitions;        /* per table; 0 or 1: one */
    int threads;           /* 0: OpenMP's default */
    int force;             /* replace a non-empty out_dir */
    size_t chunk_bytes;    /* text per parsed chunk; 0: ~8 chunks per thread, 256 KiB to 4 MiB */
    const char *source;    /* recorded in the manifest; NULL: "import <tbl_dir>" */
} dkb_import_opts;

typedef struct dkb_import_summary {
    double sf;                          /* scale factor recorded */
    int64_t rows[DKB_TABLE_COUNT];
    uint64_t bytes[DKB_TABLE_COUNT];    /* .tbl bytes read */
    double seconds[DKB_TABLE_COUNT];
    double total_seconds;
} dkb_import_summary;

/* Import tbl_dir/{part,partsupp,supplier,customer,orders,lineitem,nation,
 * region}.tbl (or the tables opts->tables selects) into a store at out_dir (written atomically, see
 * store_writer.h). progress (may be NULL) gets done/total in bytes of the
 * current table; sum (may be NULL) is filled on success.
 * Errors: DKB_ENOENT (a missing .tbl file, named), DKB_EPARSE/DKB_ERANGE
 * ("lineitem.tbl:17: field 5 (l_quantity): ..."), DKB_EEXIST (out_dir not
 * empty), DKB_EINVAL (bad options; scale factor not inferable), DKB_EIO,
 * DKB_ENOSPC, DKB_ENOMEM. Nothing is left at out_dir on failure. */
int dkb__store_import(const char *tbl_dir, const char *out_dir, const dkb_import_opts *opts,
                      const dkb_progress *progress, dkb_import_summary *sum, dkb_error *err);

#endif
