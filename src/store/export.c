/* export.c: store -> .tbl files (see export.h). Each chunk of rows is read
 * from the mapped columns into a batch (int32 widened, dictionary codes and
 * text offsets resolved), formatted by dkb__tbl_format, and written in
 * order (OpenMP ordered) to a temporary file; all files are renamed into
 * place at the end. */
#include "store/export.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/timing.h"  // defines: dkb__now_s
#include "tbl/tbl.h"

enum { DEFAULT_CHUNK_ROWS = 65536 };

typedef struct out_file {
    const dkb_store_table *t;
    char *path, *tmp;
    int fd;
} out_file;

/* Rows [first, first + n) of string column c into the batch. */
static int fill_strings(const dkb_store *s, const dkb_store_column *col, int c, int64_t first,
                        size_t n, dkb_batch *b, dkb_error *err) {
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *p = dkb_column_str(col, first + (int64_t)i, &len);
        if (!p) {
            const dkb_store_file *f = dkb_column_file(col, 0);
            return dkb_fail(err, DKB_ECORRUPT, "%s/%s: row %lld: %s outside its file (run verify)",
                            dkb_store_dir(s), f->path, (long long)(first + (int64_t)i),
                            dkb_column_type(col) == DKB_TYPE_DICT ? "dictionary code" : "text offset");
        }
        int rc = dkb__batch_put_str(b, c, i, p, len);
        if (rc) return dkb_fail(err, rc, "%s: %s: out of memory", dkb_store_dir(s), dkb_column_name(col));
    }
    return 0;
}

/* Rows [first, first + n) of table t into b. */
static int fill_batch(const dkb_store *s, const dkb_store_table *t, int64_t first, size_t n,
                      dkb_batch *b, dkb_error *err) {
    dkb__batch_clear(b);
    for (int c = 0; c < dkb_store_table_ncolumns(t); c++) {
        const dkb_store_column *col = dkb_store_table_column_at(t, c);
        int64_t *v = b->col[c].v;
        const int32_t *i32 = dkb_column_i32(col);
        const int64_t *i64 = dkb_column_i64(col);
        if (i32) {
            for (size_t i = 0; i < n; i++) v[i] = i32[first + (int64_t)i];
        } else if (i64) {
            memcpy(v, i64 + first, n * sizeof *v);
        } else {
            int rc = fill_strings(s, col, c, first, n, b, err);
            if (rc) return rc;
        }
    }
    b->nrows = n;
    return 0;
}

typedef struct worker {
    dkb_batch batch;
    dkb_buf text;
    dkb_error err;
} worker;

static int export_table(const dkb_store *s, out_file *o, const dkb_export_opts *opts,
                        const dkb_progress *progress, uint64_t *bytes, dkb_error *err) {
    const dkb_store_table *t = o->t;
    int64_t rows = dkb_store_table_rows(t);
    size_t chunk = opts->chunk_rows ? opts->chunk_rows : DEFAULT_CHUNK_ROWS;
    int64_t nchunks = (rows + (int64_t)chunk - 1) / (int64_t)chunk;
    int threads = opts->threads > 0 ? opts->threads : omp_get_max_threads();
    atomic_int failed = 0;
    dkb_error first = {0};
    uint64_t written = 0;
    const char *name = dkb_store_table_name(t);
#pragma omp parallel num_threads(threads)
    {
        worker k;
        memset(&k, 0, sizeof k);
        int setup = dkb__batch_init(&k.batch, dkb_store_table_def(t), chunk);
#pragma omp for ordered schedule(dynamic, 1)
        for (int64_t i = 0; i < nchunks; i++) {
            int64_t at = i * (int64_t)chunk;
            size_t n = rows - at < (int64_t)chunk ? (size_t)(rows - at) : chunk;
            int rc = setup ? dkb_fail(&k.err, DKB_ENOMEM, "%s: out of memory", o->tmp) : 0;
            if (!rc && !atomic_load(&failed)) {
                k.text.len = 0;
                rc = fill_batch(s, t, at, n, &k.batch, &k.err);
                if (!rc && (rc = dkb__tbl_format(&k.batch, &k.text)) != 0)
                    dkb_fail(&k.err, rc, "%s: formatting rows: %s", o->tmp, dkb_strerror(rc));
            }
#pragma omp ordered
            {
                if (rc && !atomic_load(&failed)) {
                    first = k.err;
                    atomic_store(&failed, rc);
                }
                if (!atomic_load(&failed)) {
                    rc = dkb__write_all(o->fd, k.text.data, k.text.len, o->tmp, &first);
                    if (rc) atomic_store(&failed, rc);
                    written += k.text.len;
                    dkb__progress(progress, name, (uint64_t)(at + (int64_t)n), (uint64_t)rows);
                }
            }
        }
        dkb__batch_free(&k.batch);
        dkb__buf_free(&k.text);
    }
    if (failed) {
        if (err) *err = first;
        return failed;
    }
    *bytes = written;
    if (fsync(o->fd) != 0) return dkb__io_fail(err, o->tmp, "fsync failed");
    int rc = close(o->fd) != 0 ? dkb__io_fail(err, o->tmp, "close failed") : 0;
    o->fd = -1;
    return rc;
}

/* Choose the tables, name their files, check nothing is in the way. */
static int prepare(const dkb_store *s, const char *out_dir, const dkb_export_opts *opts,
                   out_file *files, int *nfiles, dkb_error *err) {
    int n = 0;
    struct stat st;
    if (stat(out_dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return dkb_fail(err, DKB_EEXIST, "%s: exists and is not a directory", out_dir);
    } else if (errno != ENOENT) {
        return dkb__io_fail(err, out_dir, "cannot use as the output directory");
    }
    for (int id = 0; id < DKB_TABLE_COUNT; id++) {
        const dkb_store_table *t = dkb_store_table_get(s, (dkb_table_id)id);
        bool wanted = opts->tables ? (opts->tables >> id) & 1u : t != NULL;
        if (!wanted) continue;
        const char *name = dkb_table_def_get((dkb_table_id)id)->name;
        if (!t) return dkb_fail(err, DKB_ENOENT, "%s: the store has no table %s", dkb_store_dir(s), name);
        if (dkb_store_table_is_subset(t))
            return dkb_fail(err, DKB_EINVAL, "%s: table %s holds %d of its %d columns (a column subset): a .tbl "
                            "file needs every column", dkb_store_dir(s), name, dkb_store_table_ncolumns(t),
                            dkb_store_table_def(t)->ncols);
        out_file *o = &files[n++];
        *nfiles = n;
        o->t = t;
        char fname[64];
        snprintf(fname, sizeof fname, "%s.tbl", name);
        o->path = dkb__path_join(out_dir, fname);
        size_t len = o->path ? strlen(o->path) + 32 : 0;
        o->tmp = o->path ? malloc(len) : NULL;
        if (!o->tmp) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", out_dir);
        snprintf(o->tmp, len, "%s.tmp.%ld", o->path, (long)getpid());
        if (!opts->force && dkb__path_kind(o->path) != DKB__PATH_MISSING)
            return dkb_fail(err, DKB_EEXIST, "%s: exists (use --force to replace it)", o->path);
    }
    return 0;
}

int dkb__store_export(const dkb_store *s, const char *out_dir, const dkb_export_opts *opts,
                      const dkb_progress *progress, dkb_export_summary *sum, dkb_error *err) {
    if (!s || !out_dir || !opts) return dkb_fail(err, DKB_EINVAL, "export: no store or output directory");
    double t0 = dkb__now_s();
    dkb_export_summary sm;
    memset(&sm, 0, sizeof sm);
    out_file files[DKB_TABLE_COUNT];
    for (int i = 0; i < DKB_TABLE_COUNT; i++) files[i] = (out_file){.fd = -1};
    int n = 0;
    int rc = prepare(s, out_dir, opts, files, &n, err);
    /* A directory made here goes again on failure (rmdir: only if empty). */
    bool made_dir = !rc && dkb__path_kind(out_dir) == DKB__PATH_MISSING;
    if (!rc) rc = dkb__mkdir_p(out_dir, err);
    for (int i = 0; i < n && !rc; i++) {
        out_file *o = &files[i];
        double ts = dkb__now_s();
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (o->fd < 0) rc = dkb__io_fail(err, o->tmp, "cannot create");
        dkb_table_id id = dkb_store_table_def(o->t)->id;
        if (!rc) rc = export_table(s, o, opts, progress, &sm.bytes[id], err);
        sm.rows[id] = dkb_store_table_rows(o->t);
        sm.seconds[id] = dkb__now_s() - ts;
    }
    for (int i = 0; i < n && !rc; i++)
        if (rename(files[i].tmp, files[i].path) != 0) rc = dkb__io_fail(err, files[i].path, "cannot rename into place");
    if (!rc) rc = dkb__fsync_dir(out_dir, err);
    for (int i = 0; i < n; i++) {
        if (files[i].fd >= 0) close(files[i].fd);
        if (rc && files[i].tmp) unlink(files[i].tmp);
        free(files[i].path);
        free(files[i].tmp);
    }
    if (rc && made_dir) rmdir(out_dir);
    sm.total_seconds = dkb__now_s() - t0;
    if (!rc && sum) *sum = sm;
    return rc;
}
