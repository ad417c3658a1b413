/* writer.c: the store writer's lifecycle: open (temporary directory),
 * tables and partitions, commit (manifest, fsync, rename into place) and
 * abort. Encoding and appending rows live in writer_chunk.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/crc.h"
#include "common/fsutil.h"
#include "store/writer_internal.h"

static int wfail(dkb_store_writer *w, dkb_error *err, int code, const char *fmt, const char *arg) {
    w->failed = true;
    return dkb_fail(err, code, fmt, arg);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static void wfile_free(wfile *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    free(f->rel);
    free(f->path);
    f->rel = f->path = NULL;
}

static void wtable_init(wtable *t) {
    memset(t, 0, sizeof *t);
    for (int c = 0; c < DKB_MAX_COLUMNS; c++) t->cols[c].f[0].fd = t->cols[c].f[1].fd = -1;
}

static void wtable_free(wtable *t) {
    for (int c = 0; c < DKB_MAX_COLUMNS; c++) {
        for (int i = 0; i < 2; i++) wfile_free(&t->cols[c].f[i]);
        dkb__dict_free(t->cols[c].dict);
    }
    free(t->parts);
    wtable_init(t);
}

static void writer_free(dkb_store_writer *w) {
    wtable_free(&w->cur);
    for (int i = 0; i < w->ntables; i++) wtable_free(&w->tables[i]);
    dkb__outdir_abort(&w->out);
    free(w->source);
    free(w);
}

int dkb__store_writer_open(const char *dir, const dkb_store_writer_opts *opts,
                           dkb_store_writer **out, dkb_error *err) {
    *out = NULL;
    if (!dir || !*dir || !opts) return dkb_fail(err, DKB_EINVAL, "store writer: no directory given");
    if (!(opts->scale_factor > 0))
        return dkb_fail(err, DKB_EINVAL, "%s: scale factor must be positive", dir);
    if (opts->parts < 1 || opts->part < 1 || opts->part > opts->parts)
        return dkb_fail(err, DKB_EINVAL, "%s: bad slice %d of %d", dir, opts->part, opts->parts);
    dkb_store_writer *w = calloc(1, sizeof *w);
    if (!w) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", dir);
    wtable_init(&w->cur);
    w->source = dup_str(opts->source ? opts->source : "");
    if (!w->source) {
        writer_free(w);
        return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", dir);
    }
    w->sf = opts->scale_factor;
    w->part = opts->part;
    w->parts = opts->parts;
    if (opts->keep_cols) {
        w->subset = true;
        memcpy(w->keep_cols, opts->keep_cols, sizeof w->keep_cols);
    }
    int rc = dkb__outdir_begin(&w->out, dir, opts->force, err);
    if (rc) {
        writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

static const char *ext_of(dkb_dtype_t dt) {
    return dt == DKB_DTYPE_INT32 ? "i32" : dt == DKB_DTYPE_INT64 ? "i64" : "u8";
}

/* Create file f of column `col` in table directory `tname`. */
static int wfile_create(dkb_store_writer *w, wfile *f, const char *tname, const char *col,
                        const char *ext, const char *role, dkb_error *err) {
    size_t n = strlen(tname) + strlen(col) + strlen(ext) + 3;
    f->rel = malloc(n);
    if (!f->rel) return wfail(w, err, DKB_ENOMEM, "%s: out of memory", w->out.dir);
    snprintf(f->rel, n, "%s/%s.%s", tname, col, ext);
    f->path = dkb__path_join(w->out.tmp, f->rel);
    if (!f->path) return wfail(w, err, DKB_ENOMEM, "%s: out of memory", w->out.dir);
    f->role = role;
    f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (f->fd < 0) {
        w->failed = true;
        return dkb__io_fail(err, f->path, "cannot create");
    }
    return 0;
}

static dkb_dtype_t dtype_of(const dkb_column_def *c, double sf) {
    switch (c->type) {
    case DKB_TYPE_INT: return dkb_column_is_wide(c, sf) ? DKB_DTYPE_INT64 : DKB_DTYPE_INT32;
    case DKB_TYPE_DATE: return DKB_DTYPE_INT32;
    case DKB_TYPE_DICT: return DKB_DTYPE_UINT8;
    default: return DKB_DTYPE_INT64;
    }
}

static int open_column(dkb_store_writer *w, wcol *k, const dkb_column_def *def, const char *tname,
                       dkb_error *err) {
    k->def = def;
    k->dtype = dtype_of(def, w->sf);
    int rc;
    switch (def->type) {
    case DKB_TYPE_DICT:
        k->nfiles = 2;
        k->dict = dkb__dict_create();
        if (!k->dict) return wfail(w, err, DKB_ENOMEM, "%s: out of memory", w->out.dir);
        rc = wfile_create(w, &k->f[0], tname, def->name, "u8", "codes", err);
        if (!rc) rc = wfile_create(w, &k->f[1], tname, def->name, "dict", "dictionary", err);
        return rc;
    case DKB_TYPE_TEXT: {
        k->nfiles = 2;
        rc = wfile_create(w, &k->f[0], tname, def->name, "off", "offsets", err);
        if (!rc) rc = wfile_create(w, &k->f[1], tname, def->name, "txt", "bytes", err);
        if (rc) return rc;
        static const int64_t zero = 0;
        rc = dkb__write_all(k->f[0].fd, &zero, sizeof zero, k->f[0].path, err);
        if (rc) w->failed = true;
        k->f[0].bytes = sizeof zero;
        k->f[0].crc = dkb__crc32(0, &zero, sizeof zero);
        return rc;
    }
    default:
        k->nfiles = 1;
        return wfile_create(w, &k->f[0], tname, def->name, ext_of(k->dtype), "data", err);
    }
}

int dkb__store_writer_begin_table(dkb_store_writer *w, const dkb_table_def *t, dkb_error *err) {
    if (!w || !t) return dkb_fail(err, DKB_EINVAL, "store writer: no writer or table");
    if (w->failed || w->in_table)
        return wfail(w, err, DKB_EINVAL, "%s: begin_table out of order", w->out.dir);
    for (int i = 0; i < w->ntables; i++)
        if (w->tables[i].def == t)
            return wfail(w, err, DKB_EINVAL, "%s: table written twice", t->name);
    _Static_assert(DKB_MAX_COLUMNS < 32, "keep_cols holds a bit per column");
    if (w->subset && !(w->keep_cols[t->id] & ((1u << t->ncols) - 1u)))
        return wfail(w, err, DKB_EINVAL, "%s: a column subset without any of its columns", t->name);
    char *tdir = dkb__path_join(w->out.tmp, t->name);
    if (!tdir) return wfail(w, err, DKB_ENOMEM, "%s: out of memory", w->out.dir);
    int rc = mkdir(tdir, 0777) != 0 && errno != EEXIST ? dkb__io_fail(err, tdir, "mkdir failed") : 0;
    free(tdir);
    if (rc) {
        w->failed = true;
        return rc;
    }
    wtable_free(&w->cur);
    w->cur.def = t;
    w->in_table = true;
    w->gen++;
    w->part_cur = (wpart){0};
    uint32_t keep = w->subset ? w->keep_cols[t->id] : ~0u;
    for (int c = 0; c < t->ncols && !rc; c++) {
        w->cur.cols[c].def = &t->cols[c];
        w->cur.cols[c].absent = !(keep >> c & 1u);
        if (!w->cur.cols[c].absent) rc = open_column(w, &w->cur.cols[c], &t->cols[c], t->name, err);
    }
    return rc;
}

static int push_partition(dkb_store_writer *w, dkb_error *err) {
    wtable *t = &w->cur;
    if (t->nparts == t->cap_parts) {
        int ncap = t->cap_parts ? 2 * t->cap_parts : 8;
        wpart *p = realloc(t->parts, (size_t)ncap * sizeof *p);
        if (!p) return wfail(w, err, DKB_ENOMEM, "%s: out of memory", t->def->name);
        t->parts = p;
        t->cap_parts = ncap;
    }
    w->part_cur.rows = t->rows - w->part_cur.row_start;
    t->parts[t->nparts++] = w->part_cur;
    w->part_cur = (wpart){.row_start = t->rows};
    return 0;
}

int dkb__store_writer_end_partition(dkb_store_writer *w, dkb_error *err) {
    if (!w || w->failed || !w->in_table)
        return w ? wfail(w, err, DKB_EINVAL, "%s: end_partition out of order", w->out.dir)
                 : dkb_fail(err, DKB_EINVAL, "store writer: none");
    return push_partition(w, err);
}

int dkb__wcol_close(wcol *col, bool sync, dkb_error *err) {
    int rc = 0;
    for (int i = 0; i < col->nfiles; i++) {
        wfile *f = &col->f[i];
        if (f->fd < 0) continue;
        if (!rc && sync && fsync(f->fd) != 0) rc = dkb__io_fail(err, f->path, "fsync failed");
        if (close(f->fd) != 0 && !rc) rc = dkb__io_fail(err, f->path, "close failed");
        f->fd = -1;
    }
    return rc;
}

int dkb__store_writer_end_table(dkb_store_writer *w, dkb_error *err) {
    if (!w || w->failed || !w->in_table)
        return w ? wfail(w, err, DKB_EINVAL, "%s: end_table out of order", w->out.dir)
                 : dkb_fail(err, DKB_EINVAL, "store writer: none");
    if (atomic_load(&w->pending) != 0 || atomic_load(&w->io_failed))
        return wfail(w, err, DKB_EINVAL, "%s: end_table with chunks not flushed or after a failed flush",
                     w->cur.def->name);
    int rc = push_partition(w, err);
    if (rc) return rc;
    int ncols = w->cur.def->ncols, first_bad = ncols;
    dkb_error errs[DKB_MAX_COLUMNS];
    /* Dictionary remaps and fsyncs are independent per column. */
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < ncols; c++) {
        wcol *k = &w->cur.cols[c];
        int r = k->def->type == DKB_TYPE_DICT && !k->absent ? dkb__dict_finish(k, &errs[c]) : 0;
        int r2 = dkb__wcol_close(k, true, r ? NULL : &errs[c]);
        if (r || r2) {
#pragma omp critical(dkb_store_end_table)
            if (c < first_bad) first_bad = c;
        }
    }
    if (first_bad < ncols) {
        w->failed = true;
        return dkb_fail(err, errs[first_bad].code, "%s", errs[first_bad].msg);
    }
    for (int c = 0; c < ncols; c++) {
        dkb__dict_free(w->cur.cols[c].dict);
        w->cur.cols[c].dict = NULL;
    }
    w->tables[w->ntables++] = w->cur;
    wtable_init(&w->cur);
    w->in_table = false;
    return 0;
}

int dkb__store_writer_commit(dkb_store_writer *w, dkb_error *err) {
    if (!w) return dkb_fail(err, DKB_EINVAL, "store writer: none");
    int rc = 0;
    if (w->failed || atomic_load(&w->io_failed) || w->in_table)
        rc = dkb_fail(err, DKB_EINVAL, "%s: commit after an error or inside a table", w->out.dir);
    if (!rc) rc = dkb__manifest_write(w, err);
    for (int i = 0; i < w->ntables && !rc; i++) {
        char *tdir = dkb__path_join(w->out.tmp, w->tables[i].def->name);
        rc = tdir ? dkb__fsync_dir(tdir, err) : dkb_fail(err, DKB_ENOMEM, "%s: out of memory", w->out.dir);
        free(tdir);
    }
    if (rc) {
        dkb__store_writer_abort(w);
        return rc;
    }
    rc = dkb__outdir_commit(&w->out, err);
    writer_free(w);
    return rc;
}

void dkb__store_writer_abort(dkb_store_writer *w) {
    if (!w) return;
    wtable_free(&w->cur);
    writer_free(w);
}
