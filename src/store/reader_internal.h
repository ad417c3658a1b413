/* reader_internal.h: the open store's layout, shared by reader.c (open,
 * mapping, accessors), manifest_read.c (manifest.json -> these structs)
 * verify.c (checksums and content checks) and verify_cache.c (which
 * file versions a verification held for). */
#ifndef DKB_STORE_READER_INTERNAL_H
#define DKB_STORE_READER_INTERNAL_H

#include <time.h>

#include <cjson/cJSON.h>

#include "dkb/store.h"

/* One version of a file, from fstat of the descriptor that was mapped (or
 * read): a change of contents, a replaced file or a touch changes it. */
typedef struct dkb__file_stamp {
    uint64_t dev, ino, size;
    int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
} dkb__file_stamp;

struct dkb_store_column {
    const dkb_column_def *def;
    dkb_dtype_t dtype;
    int64_t rows;
    int nfiles;
    dkb_store_file files[2];   /* strings point into the manifest's cJSON tree */
    uint64_t map_len[2];       /* bytes mapped (0: files[i].map is a static empty block) */
    dkb__file_stamp stamp[2];  /* files[i] as opened */
    int dict_size;
    const char **dict_s;       /* DICT: entries into the mapped dictionary */
    uint32_t *dict_len;
};

struct dkb_store_table {
    const dkb_table_def *def;
    int64_t rows;
    int nparts;
    dkb_store_partition *parts;
    int ncols;                 /* the columns the store holds: all of the schema's, or a
                                * subset (dkb gen --columns), in schema order */
    dkb_store_column cols[DKB_MAX_COLUMNS];
};

struct dkb_store {
    char *dir;
    char *manifest_path;
    cJSON *json;               /* the parsed manifest, kept for its strings */
    dkb__file_stamp manifest_stamp;  /* manifest.json as read */
    uint32_t manifest_crc;     /* crc32 of the manifest text read */
    struct timespec opened;    /* CLOCK_REALTIME_COARSE before any file was looked at */
    double sf;
    int part, parts;
    const char *source, *created;
    int ntables;
    dkb_store_table tables[DKB_TABLE_COUNT];
};

/* Fill s (dir and manifest_path set, everything else zero) from the
 * manifest text; checks every field. Files are not touched. */
int dkb__manifest_read(dkb_store *s, const char *text, size_t len, dkb_error *err);

#endif
