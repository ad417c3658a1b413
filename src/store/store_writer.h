/* store_writer.h: writes a columnar store directory (internal API).
 *
 * Everything is written under a temporary directory beside the target
 * (DIR.tmp.<pid>) and renamed to DIR by dkb__store_writer_commit, so a
 * crash or error never leaves something at DIR that looks like a store.
 *
 * Tables are written one at a time: begin_table, then batches in row order,
 * then end_table. Work on a batch is split in two so that callers can run
 * the expensive half on many threads:
 *   dkb__store_writer_encode(w, batch, chunk)  thread-safe, any order:
 *       converts the batch to store encodings (int32 narrowing, dictionary
 *       codes, text offsets) in the chunk's own buffers;
 *   dkb__store_writer_write(w, chunk)          one at a time, in row order:
 *       appends the chunk to the column files (and checksums);
 *       or reserve (in order) + flush (parallel), below.
 * Partition boundaries: dkb__store_writer_end_partition after the last
 * chunk of each partition except the last (end_table closes the last). */
#ifndef DKB_STORE_WRITER_H
#define DKB_STORE_WRITER_H

#include <stdint.h>

#include "dkb/error.h"
#include "dkb/schema.h"
#include "table/batch.h"

typedef struct dkb_store_writer dkb_store_writer;
typedef struct dkb_store_chunk dkb_store_chunk;   /* encoded batch, reusable */

typedef struct dkb_store_writer_opts {
    double scale_factor;   /* recorded in the manifest; decides int widths */
    int part, parts;       /* this store holds slice part of parts (1 of 1 normally) */
    int force;             /* replace DIR if it exists and is not empty */
    const char *source;    /* "dkb gen 0.1.0" or "import /path"; recorded */
    /* NULL: every column. Else indexed by dkb_table_id: bit c keeps column c
     * of that table (a column subset, `dkb gen --columns`); the others are
     * encoded and written nowhere and left out of the manifest. A table
     * written must keep at least one column. */
    const uint32_t *keep_cols;
} dkb_store_writer_opts;

/* Calls must follow the order above; a call out of order returns
 * DKB_EINVAL. After any error the writer only accepts abort (commit then
 * aborts too). Dictionary values must not contain '\n'; a table may have at
 * most 256 distinct values per DICT column. INT columns are int64 where
 * dkb_column_is_wide(col, scale_factor), else int32; DATE is int32.
 *
 * Start a store at dir (missing parent directories are created). Fails
 * (DKB_EEXIST) if dir exists and is non-empty (or is not a directory)
 * unless opts->force; with force the old directory stays in place until
 * commit swaps the new store in and removes it. */
int dkb__store_writer_open(const char *dir, const dkb_store_writer_opts *opts,
                           dkb_store_writer **out, dkb_error *err);
int dkb__store_writer_begin_table(dkb_store_writer *w, const dkb_table_def *t, dkb_error *err);
int dkb__store_chunk_create(dkb_store_writer *w, dkb_store_chunk **out);
void dkb__store_chunk_destroy(dkb_store_chunk *c);   /* accepts NULL */
/* `where` names the rows in error messages ("lineitem.tbl:1200..1300" or
 * "generated lineitem"). Errors: DKB_ERANGE (value too wide), DKB_EPARSE
 * (too many distinct values for a dictionary column), DKB_ENOMEM. */
int dkb__store_writer_encode(dkb_store_writer *w, const dkb_batch *b, dkb_store_chunk *c,
                             const char *where, dkb_error *err);
/* Same as encode, for rows that came from lines first_line, first_line + 1,
 * ... of .tbl file `file`: errors then read "lineitem.tbl:1205: field 1
 * (l_orderkey): value 3000000000 does not fit in int32". */
int dkb__store_writer_encode_lines(dkb_store_writer *w, const dkb_batch *b, dkb_store_chunk *c,
                                   const char *file, int64_t first_line, dkb_error *err);
/* Rows in an encoded chunk. */
size_t dkb__store_chunk_rows(const dkb_store_chunk *c);
int dkb__store_writer_write(dkb_store_writer *w, dkb_store_chunk *c, dkb_error *err);
/* write split in two so that the copying can run on many threads too:
 *   reserve  in row order, one at a time, cheap: gives the chunk its byte
 *            range in every column file (and does the checksum work);
 *   flush    thread-safe, any order, once per reserved chunk: copies the
 *            chunk's buffers into those ranges (pwrite).
 * write == reserve + flush. Every reserved chunk must be flushed before
 * end_table (else DKB_EINVAL), and a chunk can be encoded again only after
 * its flush. end_partition may follow the reserve of a partition's last
 * chunk. A failed flush fails the writer (end_table and commit refuse). */
int dkb__store_writer_reserve(dkb_store_writer *w, dkb_store_chunk *c, dkb_error *err);
int dkb__store_writer_flush(dkb_store_writer *w, dkb_store_chunk *c, dkb_error *err);
int dkb__store_writer_end_partition(dkb_store_writer *w, dkb_error *err);
int dkb__store_writer_end_table(dkb_store_writer *w, dkb_error *err);
/* Write the manifest, fsync, rename into place, free w. On failure the
 * temporary directory is removed and w freed. */
int dkb__store_writer_commit(dkb_store_writer *w, dkb_error *err);
/* Remove the temporary directory and free w; accepts NULL. */
void dkb__store_writer_abort(dkb_store_writer *w);

#endif
