/* writer_internal.h: the store writer's state, shared by the files that
 * implement it (writer.c: lifecycle, writer_chunk.c: encode/write,
 * writer_dict.c: dictionaries, manifest_write.c: manifest.json). */
#ifndef DKB_STORE_WRITER_INTERNAL_H
#define DKB_STORE_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dkb/store.h"
#include "common/outdir.h"
#include "store/store_writer.h"

#define DKB__DICT_MAX 256

/* One output file of a column. */
typedef struct wfile {
    char *rel;          /* path inside the store: "lineitem/l_tax.i64" */
    char *path;         /* full path under the temporary directory */
    const char *role;   /* "data", "codes", "dictionary", "offsets", "bytes" */
    int fd;             /* -1 when closed */
    uint64_t bytes;
    uint32_t crc;
} wfile;

/* A dictionary being built: codes in first-appearance order, shared by all
 * encoding threads under mu. Entries are never moved or freed before
 * end_table, so threads may keep pointers to them. */
typedef struct wdict {
    pthread_mutex_t mu;
    int n;
    const char *s[DKB__DICT_MAX];
    uint32_t len[DKB__DICT_MAX];
    uint64_t hash[DKB__DICT_MAX];
} wdict;

typedef struct wcol {
    const dkb_column_def *def;
    bool absent;        /* left out of a column subset: no files, not encoded */
    dkb_dtype_t dtype;
    int nfiles;
    wfile f[2];         /* data | codes+dictionary | offsets+bytes */
    wdict *dict;        /* DICT while the table is open */
    int dict_size;      /* DICT, after end_table */
} wcol;

typedef struct wpart {
    int64_t row_start, rows;
    bool has_key;
    int64_t key_min, key_max;
} wpart;

/* A table, open or finished. */
typedef struct wtable {
    const dkb_table_def *def;
    int64_t rows;
    int nparts, cap_parts;
    wpart *parts;
    wcol cols[DKB_MAX_COLUMNS];
} wtable;

struct dkb_store_writer {
    dkb_outdir out;         /* the target directory and where it is built */
    char *source;
    double sf;
    int part, parts;
    bool subset;                          /* opts.keep_cols given */
    uint32_t keep_cols[DKB_TABLE_COUNT];  /* when subset: bit c keeps column c */
    bool failed;
    atomic_bool io_failed;  /* a flush failed (flushes run concurrently) */
    atomic_int pending;     /* chunks reserved and not yet flushed */
    bool in_table;
    uint64_t gen;           /* bumped per table; chunks compare it */
    wtable cur;             /* the open table */
    wpart part_cur;         /* the open partition */
    int ntables;
    wtable tables[DKB_TABLE_COUNT];
};

/* Hash of a dictionary string. */
uint64_t dkb__dict_hash(const char *s, size_t len);
/* Code of s in d, inserting it if new; -1 when d is full, -2 out of memory. */
int dkb__dict_intern(wdict *d, const char *s, size_t len, uint64_t hash);
/* Create / free a column's dictionary. */
wdict *dkb__dict_create(void);
void dkb__dict_free(wdict *d);
/* At end_table: sort the dictionary, rewrite the codes file (f[0]) in
 * sorted code order, write the dictionary file (f[1]), set crcs and sizes. */
int dkb__dict_finish(wcol *col, dkb_error *err);

/* Write manifest.json into w->tmp (fsynced). */
int dkb__manifest_write(const dkb_store_writer *w, dkb_error *err);

/* Close (and fsync when sync) the files of a column; errors name the file. */
int dkb__wcol_close(wcol *col, bool sync, dkb_error *err);

#endif
