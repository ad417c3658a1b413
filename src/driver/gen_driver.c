/* gen_driver.c: parallel, ordered, bounded-memory generation of whole tables
 * into .tbl files or a columnar store (see gen_driver.h).
 *
 * Each table's unit range is cut into chunks (never across a partition
 * boundary). Threads take chunks in turn, generate and format/encode them,
 * and write them strictly in chunk order (OpenMP ordered; .tbl chunks only
 * take their file offset in order and are written in parallel). */
#include "gen_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/gen.h"
#include "common/outdir.h"
#include "common/fsutil.h"
#include "common/timing.h"
#include "store/store_writer.h"
#include "tbl/tbl.h"

enum { CHUNK_ROWS = 16384 };

typedef struct chunk_span {
    int64_t first, count;
    int ends_partition;  /* the last chunk of a partition that is not the last */
} chunk_span;

/* Per-thread buffers. */
typedef struct slot {
    dkb_batch batch;
    dkb_buf text;           /* .tbl output */
    dkb_store_chunk *enc;   /* store output */
} slot;

/* What one table run writes to. */
typedef struct sink {
    dkb_out_format format;
    int fd;                 /* .tbl: the open file */
    char path[4200];        /* .tbl: its (temporary) path, for messages */
    dkb_store_writer *store;
    uint64_t bytes;
    int64_t rows;
} sink;

void dkb__slice_units(int64_t units, int part, int parts, int64_t *first, int64_t *count) {
    int64_t share = units / parts;
    *first = share * (part - 1);
    *count = part == parts ? units - *first : share;
}

/* Cut [first, first + count) into partitions, then chunks of about
 * CHUNK_ROWS rows. Returns the number of spans (0 on allocation failure). */
static size_t plan_chunks(dkb_table_id t, int64_t first, int64_t count, int partitions,
                          chunk_span **out) {
    int per_unit = t == DKB_TABLE_LINEITEM || t == DKB_TABLE_PARTSUPP ? 4 : 1;
    int64_t chunk_units = CHUNK_ROWS / per_unit;
    if (partitions < 1) partitions = 1;
    /* Exactly `partitions` partitions, as import makes them (docs/store.md):
     * one with no rows still gets an (empty) span. */
    size_t cap = (size_t)(count / chunk_units) + (size_t)partitions + 1, n = 0;
    chunk_span *spans = malloc(cap * sizeof *spans);
    if (!spans) return 0;
    for (int p = 0; p < partitions; p++) {
        int64_t lo = first + count * p / partitions, hi = first + count * (p + 1) / partitions;
        for (int64_t u = lo; u < hi; u += chunk_units) {
            int64_t c = hi - u < chunk_units ? hi - u : chunk_units;
            spans[n++] = (chunk_span){u, c, 0};
        }
        if (lo == hi) spans[n++] = (chunk_span){lo, 0, 0};
        if (p + 1 < partitions) spans[n - 1].ends_partition = 1;
    }
    *out = spans;
    return n;
}

static int produce(const dkb_gen *g, dkb_table_id t, const chunk_span *s, slot *sl, sink *k,
                   dkb_error *err) {
    dkb__batch_clear(&sl->batch);
    int rc = dkb__gen_fill(g, t, s->first, s->count, &sl->batch);
    if (rc) return dkb_fail(err, rc, "generating %s rows: %s", dkb_table_def_get(t)->name, dkb_strerror(rc));
    if (k->format == DKB_OUT_TBL) {
        sl->text.len = 0;
        rc = dkb__tbl_format(&sl->batch, &sl->text);
        if (rc) return dkb_fail(err, rc, "formatting %s rows: %s", dkb_table_def_get(t)->name, dkb_strerror(rc));
        return 0;
    }
    return dkb__store_writer_encode(k->store, &sl->batch, sl->enc, dkb_table_def_get(t)->name, err);
}

/* The in-order step of a chunk. For .tbl it only reserves the chunk's place
 * in the file (*at); the bytes are written after, in parallel (pwrite). */
static int consume(const chunk_span *s, slot *sl, sink *k, off_t *at, dkb_error *err) {
    int rc = 0;
    if (k->format == DKB_OUT_TBL) {
        *at = (off_t)k->bytes;
        k->bytes += sl->text.len;
    } else {
        rc = dkb__store_writer_write(k->store, sl->enc, err);
        if (!rc && s->ends_partition) rc = dkb__store_writer_end_partition(k->store, err);
    }
    k->rows += (int64_t)sl->batch.nrows;
    return rc;
}

static int slot_init(slot *sl, const dkb_table_def *td, size_t cap, sink *k) {
    memset(sl, 0, sizeof *sl);
    if (dkb__batch_init(&sl->batch, td, cap)) return DKB_ENOMEM;
    if (k->format == DKB_OUT_STORE) return dkb__store_chunk_create(k->store, &sl->enc);
    return 0;
}

static void slot_free(slot *sl) {
    dkb__batch_free(&sl->batch);
    dkb__buf_free(&sl->text);
    dkb__store_chunk_destroy(sl->enc);
}

/* Generate units [first, first + count) of t into k on opts->threads threads. */
static int run_table(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count,
                     const dkb_gen_opts *opts, sink *k, dkb_error *err) {
    const dkb_table_def *td = dkb_table_def_get(t);
    chunk_span *spans = NULL;
    size_t nspans = plan_chunks(t, first, count, opts->format == DKB_OUT_STORE ? opts->partitions : 1, &spans);
    if (nspans == 0) return dkb_fail(err, DKB_ENOMEM, "out of memory planning %s", td->name);
    size_t cap = (size_t)(spans[0].count ? spans[0].count : 1) * (size_t)dkb__gen_max_rows_per_unit(t);
    for (size_t i = 1; i < nspans; i++) {
        size_t c = (size_t)spans[i].count * (size_t)dkb__gen_max_rows_per_unit(t);
        if (c > cap) cap = c;
    }
    int failed = 0;
    dkb_error first_err = {0};
    int64_t done = 0;
    dkb__progress(&opts->progress, td->name, 0, (uint64_t)count);
#pragma omp parallel num_threads(opts->threads)
    {
        slot sl;
        dkb_error my_err = {0};
        int rc = slot_init(&sl, td, cap, k);
        if (rc) dkb_fail(&my_err, rc, "out of memory for %s buffers", td->name);
#pragma omp for ordered schedule(dynamic, 1)
        for (size_t i = 0; i < nspans; i++) {
            int skip;
#pragma omp atomic read
            skip = failed;
            if (!skip && !rc) rc = produce(g, t, &spans[i], &sl, k, &my_err);
            off_t at = -1;
#pragma omp ordered
            {
                if (!failed && !rc) {
                    rc = consume(&spans[i], &sl, k, &at, &my_err);
                    done += spans[i].count;
                    dkb__progress(&opts->progress, td->name, (uint64_t)done, (uint64_t)count);
                }
                if (rc && !failed) {
                    first_err = my_err;
#pragma omp atomic write
                    failed = 1;
                }
            }
            if (at >= 0 && !rc && (rc = dkb__pwrite_all(k->fd, sl.text.data, sl.text.len, at, k->path, &my_err))) {
#pragma omp critical(gen_driver_error)
                if (!failed) {
                    first_err = my_err;
#pragma omp atomic write
                    failed = 1;
                }
            }
        }
        slot_free(&sl);
    }
    free(spans);
    if (failed) {
        if (err) *err = first_err;
        return first_err.code ? first_err.code : DKB_EINTERNAL;
    }
    return 0;
}

static int run_tbl_table(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count,
                         const dkb_gen_opts *opts, dkb_outdir *od, sink *k, dkb_error *err) {
    const dkb_table_def *td = dkb_table_def_get(t);
    char name[64];
    int whole = t == DKB_TABLE_NATION || t == DKB_TABLE_REGION || opts->parts == 1;
    if (whole) snprintf(name, sizeof name, "%s.tbl", td->name);
    else snprintf(name, sizeof name, "%s.tbl.%d", td->name, opts->part);
    int n = snprintf(k->path, sizeof k->path, "%s/%s", od->tmp, name);
    if (n < 0 || (size_t)n >= sizeof k->path) return dkb_fail(err, DKB_EINVAL, "%s/%s: path too long", od->tmp, name);
    k->fd = open(k->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (k->fd < 0) return dkb_fail(err, dkb_errno_code(errno), "%s: cannot create: %s", k->path, strerror(errno));
    int rc = run_table(g, t, first, count, opts, k, err);
    if (!rc && fsync(k->fd) != 0 && errno != EINVAL)
        rc = dkb_fail(err, dkb_errno_code(errno), "%s: fsync failed: %s", k->path, strerror(errno));
    if (close(k->fd) != 0 && !rc)
        rc = dkb_fail(err, dkb_errno_code(errno), "%s: close failed: %s", k->path, strerror(errno));
    k->fd = -1;
    return rc;
}

static int check_opts(const dkb_gen_opts *o, dkb_error *err) {
    if (o->threads < 1) return dkb_fail(err, DKB_EINVAL, "threads must be at least 1 (got %d)", o->threads);
    if (o->parts < 1 || o->part < 1 || o->part > o->parts)
        return dkb_fail(err, DKB_EINVAL, "--part %d --parts %d: need 1 <= part <= parts", o->part, o->parts);
    if (o->partitions < 1) return dkb_fail(err, DKB_EINVAL, "partitions must be at least 1 (got %d)", o->partitions);
    if ((o->tables & ((1u << DKB_TABLE_COUNT) - 1)) == 0) return dkb_fail(err, DKB_EINVAL, "no table selected");
    return 0;
}

int dkb__gen_run(const dkb_gen_opts *opts, dkb_gen_summary *sum, dkb_error *err) {
    memset(sum, 0, sizeof *sum);
    int rc = check_opts(opts, err);
    if (rc) return rc;
    double t0 = dkb__now_s();
    dkb_gen *g = NULL;
    rc = dkb__gen_create_threads(opts->sf, opts->threads, &g, err);
    if (rc) return rc;
    sum->sf = dkb__gen_scale(g);
    sum->pool_seconds = dkb__now_s() - t0;

    dkb_outdir od;
    sink k = {.format = opts->format, .fd = -1};
    if (opts->format == DKB_OUT_TBL) {
        rc = dkb__outdir_begin(&od, opts->out, opts->force, err);
    } else {
        char source[64];
        snprintf(source, sizeof source, "dkb gen %s", DKB_VERSION);
        dkb_store_writer_opts wo = {.scale_factor = sum->sf, .part = opts->part, .parts = opts->parts,
                                    .force = opts->force, .source = source, .keep_cols = opts->keep_cols};
        rc = dkb__store_writer_open(opts->out, &wo, &k.store, err);
    }
    if (rc) {
        dkb__gen_destroy(g);
        return rc;
    }
    for (int t = 0; t < DKB_TABLE_COUNT && !rc; t++) {
        if (!(opts->tables & (1u << t))) continue;
        int64_t first = 0, count = dkb__gen_units(g, (dkb_table_id)t);
        if (t != DKB_TABLE_NATION && t != DKB_TABLE_REGION)
            dkb__slice_units(count, opts->part, opts->parts, &first, &count);
        double ts = dkb__now_s();
        k.rows = 0;
        k.bytes = 0;
        if (opts->format == DKB_OUT_TBL) {
            rc = run_tbl_table(g, (dkb_table_id)t, first, count, opts, &od, &k, err);
        } else {
            rc = dkb__store_writer_begin_table(k.store, dkb_table_def_get((dkb_table_id)t), err);
            if (!rc) rc = run_table(g, (dkb_table_id)t, first, count, opts, &k, err);
            if (!rc) rc = dkb__store_writer_end_table(k.store, err);
        }
        sum->rows[t] = k.rows;
        sum->bytes[t] = k.bytes;
        sum->seconds[t] = dkb__now_s() - ts;
    }
    if (opts->format == DKB_OUT_TBL) {
        if (!rc) rc = dkb__outdir_commit(&od, err);
        if (rc) dkb__outdir_abort(&od);
    } else if (!rc) {
        rc = dkb__store_writer_commit(k.store, err);
    } else {
        dkb__store_writer_abort(k.store);
    }
    dkb__gen_destroy(g);
    sum->total_seconds = dkb__now_s() - t0;
    return rc;
}
