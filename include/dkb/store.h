/* store.h: read-only access to a DataKernelBench columnar store.
 *
 * A store is a directory holding manifest.json and one raw little-endian
 * array file per column (docs/store.md describes the layout). Opening a
 * store parses the manifest, checks every file's size against it and
 * memory-maps every file read-only (MAP_SHARED, PROT_READ), so column data
 * is a plain pointer to typed values:
 *
 *     dkb_store *s;
 *     dkb_error err;
 *     if (dkb_store_open("data/sf1", 0, &s, &err)) { puts(err.msg); ... }
 *     const dkb_store_table *li = dkb_store_table_find(s, "lineitem");
 *     const dkb_store_column *q = dkb_store_table_column(li, "l_quantity");
 *     const int64_t *qty = dkb_column_i64(q);        // hundredths
 *     for (int64_t r = 0; r < dkb_column_rows(q); r++) sum += qty[r];
 *     dkb_store_close(s);
 *
 * Every pointer handed out (names, tables, columns, data) stays valid until
 * dkb_store_close. A store is immutable once opened: every function here is
 * safe to call from any number of threads at once. Files must not be
 * truncated while a store is open (reading a vanished page raises SIGBUS).
 *
 * Functions taking a dkb_error * accept NULL; on failure they fill it with a
 * one-line message naming the file (and the manifest field) at fault. */
#ifndef DKB_STORE_H
#define DKB_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"
#include "dkb/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The manifest's "format" and the "format_version" this build reads. */
#define DKB_STORE_FORMAT "dkb-store"
#define DKB_STORE_FORMAT_VERSION 1

/* dkb_store_open flags. */
#define DKB_STORE_VERIFY 0x1u /* also check every file's crc32 and contents */

/* Physical element type of a column's main array (the manifest's "dtype"). */
typedef enum {
    DKB_DTYPE_INT32 = 0, /* "int32": INT (narrow), DATE */
    DKB_DTYPE_INT64,     /* "int64": INT (wide), DECIMAL, TEXT offsets */
    DKB_DTYPE_UINT8,     /* "uint8": DICT codes */
} dkb_dtype_t;

typedef struct dkb_store dkb_store;
typedef struct dkb_store_table dkb_store_table;
typedef struct dkb_store_column dkb_store_column;

/* A run of rows of one table. For lineitem and orders, partition i of both
 * tables covers the same orderkey range. key_min/key_max are the smallest
 * and largest value of the table's first column (its key) in the partition;
 * has_key is false for an empty partition. */
typedef struct dkb_store_partition {
    int64_t row_start;
    int64_t rows;
    bool has_key;
    int64_t key_min, key_max;
} dkb_store_partition;

/* One file of a column. */
typedef struct dkb_store_file {
    const char *path;   /* relative to the store directory: "lineitem/l_tax.i64" */
    const char *role;   /* "data", "codes", "dictionary", "offsets" or "bytes" */
    uint64_t bytes;     /* size, checked against the file at open */
    uint32_t crc32;     /* zlib crc32 of the whole file */
    const void *map;    /* the mapped contents (never NULL, even for 0 bytes) */
} dkb_store_file;

/* ---- the store ---- */

/* Open the store in directory dir read-only. Parses manifest.json, checks
 * format, format_version and every field, opens and maps every column file
 * and checks its size (always); with DKB_STORE_VERIFY also runs
 * dkb_store_verify. On success *out owns the mapping (release it with
 * dkb_store_close). Errors: DKB_ENOENT (no manifest or a missing file),
 * DKB_EPARSE (manifest is not JSON), DKB_EVERSION (another format_version),
 * DKB_ECORRUPT (a missing or wrong manifest field, a file of the wrong size,
 * a malformed dictionary; or a verify failure), DKB_EIO, DKB_ENOMEM,
 * DKB_EINVAL (NULL dir or out). *out is NULL on failure. */
int dkb_store_open(const char *dir, unsigned flags, dkb_store **out, dkb_error *err);

/* Unmap every file and free s. Accepts NULL. Invalidates every pointer
 * obtained from s. */
void dkb_store_close(dkb_store *s);

/* Full check of an open store, in parallel (OpenMP) over files and chunks:
 * the crc32 of every file equals the manifest's, every dictionary code is
 * below the dictionary size, text offsets never decrease. Returns 0, or
 * DKB_ECORRUPT with a message naming the first bad file in manifest order
 * and what is wrong ("crc32 mismatch (file 0x..., manifest 0x...)",
 * "row 17: text offset 1234 decreases to 12", "row 7: code 238 is not
 * below the dictionary size 7"). */
int dkb_store_verify(const dkb_store *s, dkb_error *err);

/* The structure alone, without crc32s: every dictionary code is below the
 * dictionary size and text offsets never decrease (reads only the codes
 * and offsets files). With what dkb_store_open always checks (file sizes,
 * so every column of a table has its rows; first offset 0, last offset the
 * size of the bytes file; dictionaries whole and sorted), every string and
 * dictionary entry a query can reach lies inside its file. Same errors as
 * dkb_store_verify, without the crc32 mismatch. */
int dkb_store_check_structure(const dkb_store *s, dkb_error *err);

/* The directory s was opened from (as given to dkb_store_open). */
const char *dkb_store_dir(const dkb_store *s);
/* The scale factor recorded by the writer (0.01, 1, 100, ...). */
double dkb_store_scale_factor(const dkb_store *s);
/* The slice this store holds: part (1-based) of parts; 1 of 1 for a whole
 * data set. Either pointer may be NULL. */
void dkb_store_slice(const dkb_store *s, int *part, int *parts);
/* Free-form origin ("dkb gen 0.1.0", "import /data/tbl") and creation time
 * (ISO 8601, UTC, "2024-05-01T12:00:00Z"). Never NULL. */
const char *dkb_store_source(const dkb_store *s);
const char *dkb_store_created(const dkb_store *s);

/* Tables in the order the writer wrote them; a store may hold any subset of
 * the 8 TPC-H tables, each at most once. */
int dkb_store_ntables(const dkb_store *s);
/* Table i (0 <= i < ntables), or NULL when i is out of range. */
const dkb_store_table *dkb_store_table_at(const dkb_store *s, int i);
/* The table called name ("lineitem"), or NULL when the store lacks it. */
const dkb_store_table *dkb_store_table_find(const dkb_store *s, const char *name);
/* The table with schema id, or NULL when the store lacks it. */
const dkb_store_table *dkb_store_table_get(const dkb_store *s, dkb_table_id id);

/* ---- tables ---- */

const char *dkb_store_table_name(const dkb_store_table *t);
/* The schema definition. The table holds its columns, in the same order, or
 * a subset of them (a store written by `dkb gen --columns`). */
const dkb_table_def *dkb_store_table_def(const dkb_store_table *t);
int64_t dkb_store_table_rows(const dkb_store_table *t);
/* Partitions tile [0, rows) in order; there is always at least one. */
int dkb_store_table_npartitions(const dkb_store_table *t);
/* Partition i, or NULL when i is out of range. */
const dkb_store_partition *dkb_store_table_partition(const dkb_store_table *t, int i);
/* Number of columns the store holds (dkb_store_table_def(t)->ncols, or
 * fewer for a column subset). */
int dkb_store_table_ncolumns(const dkb_store_table *t);
/* 1 when the store holds only some of the table's columns. */
int dkb_store_table_is_subset(const dkb_store_table *t);
/* Column i of those held, in schema order, or NULL when i is out of range. */
const dkb_store_column *dkb_store_table_column_at(const dkb_store_table *t, int i);
/* The column called name ("l_shipdate"), or NULL (no such column, or one
 * a column subset left out). */
const dkb_store_column *dkb_store_table_column(const dkb_store_table *t, const char *name);
/* Total size of the table's files in bytes. */
uint64_t dkb_store_table_disk_bytes(const dkb_store_table *t);

/* ---- columns ---- */

const char *dkb_column_name(const dkb_store_column *c);
/* Logical type (INT, DECIMAL, DATE, DICT, TEXT) and its schema definition. */
dkb_type_t dkb_column_type(const dkb_store_column *c);
const dkb_column_def *dkb_column_schema(const dkb_store_column *c);
/* Element type of the main array: int32/int64 values, uint8 codes (DICT),
 * int64 offsets (TEXT). */
dkb_dtype_t dkb_column_dtype(const dkb_store_column *c);
/* Number of rows (== the table's rows). */
int64_t dkb_column_rows(const dkb_store_column *c);
/* The main array: rows values of dkb_column_dtype (rows + 1 offsets for
 * TEXT). Never NULL, even for 0 rows. */
const void *dkb_column_data(const dkb_store_column *c);
/* Typed views of the main array; NULL when the dtype differs.
 * INT: int32 or int64 as recorded; DECIMAL: int64 hundredths; DATE: int32
 * days since 1970-01-01; DICT: uint8 codes; TEXT: see dkb_column_text_offsets. */
const int32_t *dkb_column_i32(const dkb_store_column *c);
const int64_t *dkb_column_i64(const dkb_store_column *c);
const uint8_t *dkb_column_u8(const dkb_store_column *c);

/* TEXT columns (NULL/0 for other types): rows + 1 offsets, offsets[0] == 0,
 * row r is bytes[offsets[r] .. offsets[r + 1]); the bytes are not
 * NUL-terminated. *nbytes (may be NULL) receives the size of the bytes. */
const int64_t *dkb_column_text_offsets(const dkb_store_column *c);
const char *dkb_column_text_bytes(const dkb_store_column *c, uint64_t *nbytes);
/* Row r of a TEXT or DICT column as pointer + length (len may be NULL; not
 * NUL-terminated); NULL for other types, r out of range, or offsets/codes
 * that point outside the files (possible only in a store not verified). */
const char *dkb_column_str(const dkb_store_column *c, int64_t r, size_t *len);

/* DICT columns: the dictionary, sorted byte-wise, so comparing codes
 * compares strings. Size is 0 for other types. */
int dkb_column_dict_size(const dkb_store_column *c);
/* Entry `code` as pointer + length (len may be NULL; not NUL-terminated),
 * or NULL when code is out of range or c is not DICT. */
const char *dkb_column_dict_entry(const dkb_store_column *c, int code, size_t *len);
/* The code of string s[0, len), or -1 when the dictionary lacks it. */
int dkb_column_dict_lookup(const dkb_store_column *c, const char *s, size_t len);

/* Bytes on disk of the column's files (data, dictionary, offsets, text). */
uint64_t dkb_column_disk_bytes(const dkb_store_column *c);
/* The column's files: 1 for INT/DECIMAL/DATE ("data"), 2 for DICT ("codes",
 * "dictionary") and TEXT ("offsets", "bytes"). */
int dkb_column_nfiles(const dkb_store_column *c);
/* File i, or NULL when i is out of range. */
const dkb_store_file *dkb_column_file(const dkb_store_column *c, int i);

/* "int32", "int64", "uint8"; and the element size in bytes (4, 8, 1). */
const char *dkb_dtype_name(dkb_dtype_t dtype);
int dkb_dtype_size(dkb_dtype_t dtype);

#ifdef __cplusplus
}
#endif

#endif
