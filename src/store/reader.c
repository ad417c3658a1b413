/* reader.c: dkb_store_open/close: reads the manifest, maps every column
 * file read-only after checking its size, indexes dictionaries; and the
 * accessors of include/dkb/store.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "store/crc.h"
#include "store/reader_internal.h"

/* What 0-byte files map to: aligned for any dtype, never dereferenced. */
static const int64_t empty_block[1];

enum { MANIFEST_MAX = 64 << 20 };

static void stamp_of(const struct stat *st, dkb__file_stamp *out) {
    *out = (dkb__file_stamp){(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                             (int64_t)st->st_mtim.tv_sec, (int64_t)st->st_mtim.tv_nsec,
                             (int64_t)st->st_ctim.tv_sec, (int64_t)st->st_ctim.tv_nsec};
}

static int map_file(const dkb_store *s, dkb_store_file *f, uint64_t *map_len, dkb__file_stamp *stamp,
                    dkb_error *err) {
    char *path = dkb__path_join(s->dir, f->path);
    if (!path) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", s->dir);
    int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        rc = dkb__io_fail(err, path, "cannot open");
    } else if (fstat(fd, &st) != 0) {
        rc = dkb__io_fail(err, path, "stat failed");
    } else if (!S_ISREG(st.st_mode)) {
        rc = dkb_fail(err, DKB_ECORRUPT, "%s: not a regular file", path);
    } else if ((uint64_t)st.st_size != f->bytes) {
        rc = dkb_fail(err, DKB_ECORRUPT, "%s: file is %lld bytes, manifest says %llu (%s)", path,
                      (long long)st.st_size, (unsigned long long)f->bytes,
                      (uint64_t)st.st_size < f->bytes ? "truncated" : "too long");
    } else if (f->bytes == 0) {
        f->map = empty_block;
    } else {
        void *m = mmap(NULL, (size_t)f->bytes, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            rc = dkb__io_fail(err, path, "mmap failed");
        } else {
            f->map = m;
            *map_len = f->bytes;
        }
    }
    if (!rc) stamp_of(&st, stamp);
    if (fd >= 0) close(fd);
    free(path);
    return rc;
}

static int corrupt(const dkb_store *s, const dkb_store_file *f, dkb_error *err, const char *what) {
    return dkb_fail(err, DKB_ECORRUPT, "%s/%s: %s", s->dir, f->path, what);
}

/* Split the mapped dictionary into entries; check count and order. */
static int index_dict(const dkb_store *s, dkb_store_column *c, dkb_error *err) {
    const dkb_store_file *f = &c->files[1];
    int n = c->dict_size;
    c->dict_s = calloc((size_t)n + 1, sizeof *c->dict_s);
    c->dict_len = calloc((size_t)n + 1, sizeof *c->dict_len);
    if (!c->dict_s || !c->dict_len) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", s->dir);
    const char *p = f->map, *end = p + f->bytes;
    int k = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return corrupt(s, f, err, "last dictionary entry does not end with a newline");
        if (k == n) break;
        c->dict_s[k] = p;
        c->dict_len[k] = (uint32_t)(nl - p);
        if (k > 0) {
            size_t a = c->dict_len[k - 1], b = c->dict_len[k];
            int cmp = memcmp(c->dict_s[k - 1], p, a < b ? a : b);
            if (cmp > 0 || (cmp == 0 && a >= b))
                return corrupt(s, f, err, "dictionary is not sorted (or has a duplicate)");
        }
        k++;
        p = nl + 1;
    }
    if (k != n || p != end) {
        char msg[96];
        snprintf(msg, sizeof msg, "dictionary has %s entries than the manifest's size %d",
                 k < n ? "fewer" : "more", n);
        return corrupt(s, f, err, msg);
    }
    return 0;
}

static int map_column(const dkb_store *s, dkb_store_column *c, dkb_error *err) {
    for (int i = 0; i < c->nfiles; i++) {
        int rc = map_file(s, &c->files[i], &c->map_len[i], &c->stamp[i], err);
        if (rc) return rc;
    }
    if (c->def->type == DKB_TYPE_TEXT) {
        const int64_t *off = c->files[0].map;
        if (off[0] != 0) return corrupt(s, &c->files[0], err, "first text offset is not 0");
        if ((uint64_t)off[c->rows] != c->files[1].bytes)
            return corrupt(s, &c->files[0], err, "last text offset is not the size of the text file");
    }
    if (c->def->type == DKB_TYPE_DICT) return index_dict(s, c, err);
    return 0;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

int dkb_store_open(const char *dir, unsigned flags, dkb_store **out, dkb_error *err) {
    if (out) *out = NULL;
    if (!dir || !out) return dkb_fail(err, DKB_EINVAL, "dkb_store_open: no directory or result");
    dkb_store *s = calloc(1, sizeof *s);
    if (!s) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", dir);
    s->dir = dup_str(dir);
    s->manifest_path = dkb__path_join(dir, "manifest.json");
    int rc = 0;
    if (!s->dir || !s->manifest_path) rc = dkb_fail(err, DKB_ENOMEM, "%s: out of memory", dir);
    char *text = NULL;
    size_t len = 0;
    /* the clock before any stat, the manifest's fstat before its read: a
     * later change of any file shows in a later stamp (verify_cache.c) */
    clock_gettime(CLOCK_REALTIME_COARSE, &s->opened);
    struct stat mst;
    if (!rc) rc = dkb__read_file_st(s->manifest_path, MANIFEST_MAX, &text, &len, &mst, err);
    if (!rc) stamp_of(&mst, &s->manifest_stamp);
    if (!rc) s->manifest_crc = dkb__crc32(0, text, len);
    if (!rc) rc = dkb__manifest_read(s, text, len, err);
    free(text);
    for (int t = 0; t < s->ntables && !rc; t++)
        for (int c = 0; c < s->tables[t].ncols && !rc; c++)
            rc = map_column(s, &s->tables[t].cols[c], err);
    if (!rc && (flags & DKB_STORE_VERIFY)) rc = dkb_store_verify(s, err);
    if (rc) {
        dkb_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void dkb_store_close(dkb_store *s) {
    if (!s) return;
    for (int t = 0; t < s->ntables; t++) {
        dkb_store_table *tb = &s->tables[t];
        for (int c = 0; tb->def && c < tb->ncols; c++) {
            dkb_store_column *col = &tb->cols[c];
            for (int i = 0; i < col->nfiles; i++)
                if (col->map_len[i]) munmap((void *)col->files[i].map, (size_t)col->map_len[i]);
            free(col->dict_s);
            free(col->dict_len);
        }
        free(tb->parts);
    }
    cJSON_Delete(s->json);
    free(s->manifest_path);
    free(s->dir);
    free(s);
}

/* ---- store ---- */

const char *dkb_store_dir(const dkb_store *s) { return s->dir; }
double dkb_store_scale_factor(const dkb_store *s) { return s->sf; }
void dkb_store_slice(const dkb_store *s, int *part, int *parts) {
    if (part) *part = s->part;
    if (parts) *parts = s->parts;
}
const char *dkb_store_source(const dkb_store *s) { return s->source; }
const char *dkb_store_created(const dkb_store *s) { return s->created; }
int dkb_store_ntables(const dkb_store *s) { return s->ntables; }

const dkb_store_table *dkb_store_table_at(const dkb_store *s, int i) {
    return i >= 0 && i < s->ntables ? &s->tables[i] : NULL;
}

const dkb_store_table *dkb_store_table_find(const dkb_store *s, const char *name) {
    for (int i = 0; name && i < s->ntables; i++)
        if (strcmp(s->tables[i].def->name, name) == 0) return &s->tables[i];
    return NULL;
}

const dkb_store_table *dkb_store_table_get(const dkb_store *s, dkb_table_id id) {
    for (int i = 0; i < s->ntables; i++)
        if (s->tables[i].def->id == id) return &s->tables[i];
    return NULL;
}

/* ---- tables ---- */

const char *dkb_store_table_name(const dkb_store_table *t) { return t->def->name; }
const dkb_table_def *dkb_store_table_def(const dkb_store_table *t) { return t->def; }
int64_t dkb_store_table_rows(const dkb_store_table *t) { return t->rows; }
int dkb_store_table_npartitions(const dkb_store_table *t) { return t->nparts; }

const dkb_store_partition *dkb_store_table_partition(const dkb_store_table *t, int i) {
    return i >= 0 && i < t->nparts ? &t->parts[i] : NULL;
}

int dkb_store_table_ncolumns(const dkb_store_table *t) { return t->ncols; }

int dkb_store_table_is_subset(const dkb_store_table *t) { return t->ncols < t->def->ncols; }

const dkb_store_column *dkb_store_table_column_at(const dkb_store_table *t, int i) {
    return i >= 0 && i < t->ncols ? &t->cols[i] : NULL;
}

const dkb_store_column *dkb_store_table_column(const dkb_store_table *t, const char *name) {
    for (int i = 0; name && i < t->ncols; i++)
        if (strcmp(t->cols[i].def->name, name) == 0) return &t->cols[i];
    return NULL;
}

uint64_t dkb_store_table_disk_bytes(const dkb_store_table *t) {
    uint64_t n = 0;
    for (int c = 0; c < t->ncols; c++) n += dkb_column_disk_bytes(&t->cols[c]);
    return n;
}

/* ---- columns ---- */

const char *dkb_column_name(const dkb_store_column *c) { return c->def->name; }
dkb_type_t dkb_column_type(const dkb_store_column *c) { return c->def->type; }
const dkb_column_def *dkb_column_schema(const dkb_store_column *c) { return c->def; }
dkb_dtype_t dkb_column_dtype(const dkb_store_column *c) { return c->dtype; }
int64_t dkb_column_rows(const dkb_store_column *c) { return c->rows; }
const void *dkb_column_data(const dkb_store_column *c) { return c->files[0].map; }

const int32_t *dkb_column_i32(const dkb_store_column *c) {
    return c->dtype == DKB_DTYPE_INT32 ? c->files[0].map : NULL;
}

const int64_t *dkb_column_i64(const dkb_store_column *c) {
    return c->dtype == DKB_DTYPE_INT64 && c->def->type != DKB_TYPE_TEXT ? c->files[0].map : NULL;
}

const uint8_t *dkb_column_u8(const dkb_store_column *c) {
    return c->dtype == DKB_DTYPE_UINT8 ? c->files[0].map : NULL;
}

const int64_t *dkb_column_text_offsets(const dkb_store_column *c) {
    return c->def->type == DKB_TYPE_TEXT ? c->files[0].map : NULL;
}

const char *dkb_column_text_bytes(const dkb_store_column *c, uint64_t *nbytes) {
    bool text = c->def->type == DKB_TYPE_TEXT;
    if (nbytes) *nbytes = text ? c->files[1].bytes : 0;
    return text ? c->files[1].map : NULL;
}

const char *dkb_column_str(const dkb_store_column *c, int64_t r, size_t *len) {
    if (r < 0 || r >= c->rows) return NULL;
    if (c->def->type == DKB_TYPE_TEXT) {
        const int64_t *off = c->files[0].map;
        if (off[r] < 0 || off[r] > off[r + 1] || (uint64_t)off[r + 1] > c->files[1].bytes) return NULL;
        if (len) *len = (size_t)(off[r + 1] - off[r]);
        return (const char *)c->files[1].map + off[r];
    }
    if (c->def->type == DKB_TYPE_DICT) return dkb_column_dict_entry(c, ((const uint8_t *)c->files[0].map)[r], len);
    return NULL;
}

int dkb_column_dict_size(const dkb_store_column *c) {
    return c->def->type == DKB_TYPE_DICT ? c->dict_size : 0;
}

const char *dkb_column_dict_entry(const dkb_store_column *c, int code, size_t *len) {
    if (c->def->type != DKB_TYPE_DICT || code < 0 || code >= c->dict_size) return NULL;
    if (len) *len = c->dict_len[code];
    return c->dict_s[code];
}

int dkb_column_dict_lookup(const dkb_store_column *c, const char *s, size_t len) {
    if (c->def->type != DKB_TYPE_DICT || (!s && len)) return -1;
    int lo = 0, hi = c->dict_size;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        size_t n = c->dict_len[mid];
        int cmp = memcmp(c->dict_s[mid], s, n < len ? n : len);
        if (cmp == 0) cmp = (n > len) - (n < len);
        if (cmp == 0) return mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

uint64_t dkb_column_disk_bytes(const dkb_store_column *c) {
    uint64_t n = 0;
    for (int i = 0; i < c->nfiles; i++) n += c->files[i].bytes;
    return n;
}

int dkb_column_nfiles(const dkb_store_column *c) { return c->nfiles; }

const dkb_store_file *dkb_column_file(const dkb_store_column *c, int i) {
    return i >= 0 && i < c->nfiles ? &c->files[i] : NULL;
}

const char *dkb_dtype_name(dkb_dtype_t dtype) {
    static const char *names[] = {"int32", "int64", "uint8"};
    return (unsigned)dtype < 3 ? names[dtype] : "?";
}

int dkb_dtype_size(dkb_dtype_t dtype) {
    static const int sizes[] = {4, 8, 1};
    return (unsigned)dtype < 3 ? sizes[dtype] : 0;
}
