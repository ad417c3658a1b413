/* import.c: dbgen .tbl files -> columnar store (see import.h). Per table:
 * map the file, plan spans (import_plan.c), then parse + encode spans on
 * all threads, reserve their place in the files in order (OpenMP ordered)
 * and copy them there in parallel. */
#include "store/import.h"

#include <fcntl.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "common/fsutil.h"
#include "common/timing.h"  // defines: dkb__now_s
#include "store/import_plan.h"
#include "store/store_writer.h"
#include "tbl/tbl.h"

/* Default chunk size: about 8 chunks per thread, from 256 KiB to 4 MiB. */
enum { CHUNK_MIN = 256 << 10, CHUNK_MAX = 4 << 20, CHUNKS_PER_THREAD = 8 };

/* An opened .tbl file. */
typedef struct tbl_file {
    char *path;
    int fd;
    size_t len;
    const char *text;   /* mapped; NULL while unmapped or empty */
} tbl_file;

static int file_open(tbl_file *f, const char *dir, const char *table, dkb_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s.tbl", table);
    f->fd = -1;
    f->path = dkb__path_join(dir, name);
    if (!f->path) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", dir);
    f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) return dkb__io_fail(err, f->path, "cannot open");
    struct stat st;
    if (fstat(f->fd, &st) != 0) return dkb__io_fail(err, f->path, "stat failed");
    if (!S_ISREG(st.st_mode)) return dkb_fail(err, DKB_EINVAL, "%s: not a regular file", f->path);
    f->len = (size_t)st.st_size;
    return 0;
}

static int file_map(tbl_file *f, dkb_error *err) {
    if (f->len == 0 || f->text) return 0;
    void *m = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, f->fd, 0);
    if (m == MAP_FAILED) return dkb__io_fail(err, f->path, "mmap failed");
    madvise(m, f->len, MADV_SEQUENTIAL);
    f->text = m;
    return 0;
}

static void file_close(tbl_file *f) {
    if (f->text) munmap((void *)f->text, f->len);
    if (f->fd >= 0) close(f->fd);
    free(f->path);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

/* Per-thread working memory. */
typedef struct worker {
    dkb_batch batch;
    dkb_store_chunk *chunk;
    dkb_error err;
} worker;

/* Co-partitioned spans: every key must lie in its partition's range. */
static int check_keys(const dkb_batch *b, const dkb_import_span *s, const int64_t *keys,
                      const char *file, dkb_error *err) {
    int64_t lo = keys[s->part], hi = keys[s->part + 1];
    const int64_t *v = b->col[0].v;
    for (size_t i = 0; i < b->nrows; i++)
        if (v[i] < lo || (v[i] >= hi && hi != INT64_MAX))
            return dkb_fail(err, DKB_EPARSE,
                            "%s:%lld: field 1 (%s): key %lld is outside partition %d's range; the file "
                            "must be sorted by it to be partitioned",
                            file, (long long)(s->first_line + (int64_t)i), b->table->cols[0].name,
                            (long long)v[i], s->part + 1);
    return 0;
}

static int work_span(dkb_store_writer *w, worker *k, const dkb_table_def *t, const tbl_file *f,
                     const dkb_import_span *s, const int64_t *keys) {
    size_t need = s->lines > 0 ? (size_t)s->lines : 1;
    if (k->batch.cap < need) {
        dkb__batch_free(&k->batch);
        if (dkb__batch_init(&k->batch, t, need + need / 8))
            return dkb_fail(&k->err, DKB_ENOMEM, "%s: out of memory", f->path);
    }
    dkb__batch_clear(&k->batch);
    const char *text = f->text ? f->text + s->begin : "";
    int rc = dkb__tbl_parse(text, s->end - s->begin, &k->batch, f->path, s->first_line, &k->err);
    if (!rc && keys) rc = check_keys(&k->batch, s, keys, f->path, &k->err);
    if (!rc) rc = dkb__store_writer_encode_lines(w, &k->batch, k->chunk, f->path, s->first_line, &k->err);
    return rc;
}

/* Keep the first failure (by span order for parse errors). */
static void record(atomic_int *failed, dkb_error *first, int rc, const dkb_error *e) {
#pragma omp critical(dkb_import_error)
    if (!atomic_load(failed)) {
        *first = *e;
        atomic_store(failed, rc);
    }
}

/* Parse, encode and write every span of one table. */
static int run_spans(dkb_store_writer *w, const dkb_table_def *t, const tbl_file *f,
                     const dkb_import_plan *plan, const int64_t *keys, int threads,
                     const dkb_progress *progress, dkb_error *err) {
    atomic_int failed = 0;
    dkb_error first = {0};
#pragma omp parallel num_threads(threads)
    {
        worker k;
        memset(&k, 0, sizeof k);
        int setup = dkb__store_chunk_create(w, &k.chunk);
#pragma omp for ordered schedule(dynamic, 1)
        for (size_t i = 0; i < plan->nspans; i++) {
            const dkb_import_span *s = &plan->spans[i];
            int rc = setup ? dkb_fail(&k.err, setup, "%s: out of memory", f->path) : 0;
            if (!rc && !atomic_load(&failed)) rc = work_span(w, &k, t, f, s, keys);
            bool reserved = false;
#pragma omp ordered
            {
                if (!rc && !atomic_load(&failed)) {
                    rc = dkb__store_writer_reserve(w, k.chunk, &k.err);
                    reserved = rc == 0;
                    if (!rc && s->ends_partition) rc = dkb__store_writer_end_partition(w, &k.err);
                    dkb__progress(progress, t->name, s->end, f->len);
                }
                if (rc) record(&failed, &first, rc, &k.err);
            }
            /* The copy into the files runs outside the ordered region. */
            if (reserved && (rc = dkb__store_writer_flush(w, k.chunk, &k.err)) != 0)
                record(&failed, &first, rc, &k.err);
        }
        dkb__store_chunk_destroy(k.chunk);
        dkb__batch_free(&k.batch);
    }
    if (failed) {
        if (err) *err = first;
        return failed;
    }
    return 0;
}

/* Partition keys of a table with partitions > 1: orders and part record the
 * first key of each equal-row partition in keys[] (order_keys / part_keys);
 * lineitem and partsupp are then split at those keys (co-partitioned by
 * orderkey and by partkey, as dkb gen partitions them). Others: none. */
static int64_t *partition_keys(dkb_table_id t, int64_t *order_keys, int64_t *part_keys, bool *by_keys) {
    *by_keys = t == DKB_TABLE_LINEITEM || t == DKB_TABLE_PARTSUPP;
    if (t == DKB_TABLE_ORDERS || t == DKB_TABLE_LINEITEM) return order_keys;
    if (t == DKB_TABLE_PART || t == DKB_TABLE_PARTSUPP) return part_keys;
    *by_keys = false;
    return NULL;
}

static int import_table(dkb_store_writer *w, const dkb_table_def *t, tbl_file *f, int64_t *order_keys,
                        int64_t *part_keys, const dkb_import_opts *o, const dkb_progress *progress,
                        int64_t *rows, dkb_error *err) {
    int parts = o->partitions > 1 ? o->partitions : 1;
    bool by_keys = false;
    int64_t *kp = parts > 1 ? partition_keys(t->id, order_keys, part_keys, &by_keys) : NULL;
    dkb_import_plan plan;
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    size_t chunk = o->chunk_bytes;
    if (!chunk) {
        chunk = f->len / ((size_t)threads * CHUNKS_PER_THREAD);
        chunk = chunk < CHUNK_MIN ? CHUNK_MIN : chunk > CHUNK_MAX ? CHUNK_MAX : chunk;
    }
    int rc = file_map(f, err);
    if (!rc) rc = dkb__import_plan(f->text ? f->text : "", f->len, chunk, parts, kp, by_keys, f->path, &plan, err);
    if (rc) return rc;
    dkb__progress(progress, t->name, 0, f->len);
    rc = dkb__store_writer_begin_table(w, t, err);
    if (!rc) rc = run_spans(w, t, f, &plan, kp, threads, progress, err);
    if (!rc) rc = dkb__store_writer_end_table(w, err);
    *rows = plan.lines;
    dkb__import_plan_free(&plan);
    return rc;
}

/* Scale factor from the line count of the first selected table whose size
 * is a fixed multiple of it (customer, supplier, part, partsupp, orders). */
static int infer_sf(tbl_file *files, unsigned tables, double *sf, dkb_error *err) {
    static const struct {
        dkb_table_id t;
        double per_sf;
    } base[] = {{DKB_TABLE_CUSTOMER, 150000}, {DKB_TABLE_SUPPLIER, 10000}, {DKB_TABLE_PART, 200000},
                {DKB_TABLE_PARTSUPP, 800000}, {DKB_TABLE_ORDERS, 1500000}};
    for (size_t i = 0; i < DKB_COUNTOF(base); i++) {
        if (!(tables & (1u << base[i].t))) continue;
        tbl_file *f = &files[base[i].t];
        int rc = file_map(f, err);
        if (rc) return rc;
        int64_t rows = f->text ? dkb__count_lines(f->text, f->len) : 0;
        if (rows == 0)
            return dkb_fail(err, DKB_EINVAL, "%s: no rows, cannot infer the scale factor (give --sf)", f->path);
        *sf = (double)rows / base[i].per_sf;
        return 0;
    }
    return dkb_fail(err, DKB_EINVAL,
                    "import: cannot infer the scale factor from the selected tables (give --sf)");
}

int dkb__store_import(const char *tbl_dir, const char *out_dir, const dkb_import_opts *opts,
                      const dkb_progress *progress, dkb_import_summary *sum, dkb_error *err) {
    if (!tbl_dir || !out_dir || !opts) return dkb_fail(err, DKB_EINVAL, "import: no input or output directory");
    if (opts->scale_factor < 0 || opts->partitions < 0)
        return dkb_fail(err, DKB_EINVAL, "import: negative scale factor or partitions");
    double t0 = dkb__now_s();
    dkb_import_summary s;
    memset(&s, 0, sizeof s);
    tbl_file files[DKB_TABLE_COUNT];
    for (int t = 0; t < DKB_TABLE_COUNT; t++) files[t] = (tbl_file){.fd = -1};
    unsigned tables = opts->tables ? opts->tables : (1u << DKB_TABLE_COUNT) - 1;
    int parts = opts->partitions > 1 ? opts->partitions : 1;
    int rc = 0;
    if ((tables & (1u << DKB_TABLE_LINEITEM)) && !(tables & (1u << DKB_TABLE_ORDERS)) && parts > 1)
        rc = dkb_fail(err, DKB_EINVAL,
                      "import: partitioning lineitem needs orders (they are co-partitioned by orderkey)");
    if (!rc && (tables & (1u << DKB_TABLE_PARTSUPP)) && !(tables & (1u << DKB_TABLE_PART)) && parts > 1)
        rc = dkb_fail(err, DKB_EINVAL,
                      "import: partitioning partsupp needs part (they are co-partitioned by partkey)");
    for (int t = 0; t < DKB_TABLE_COUNT && !rc; t++)
        if (tables & (1u << t)) rc = file_open(&files[t], tbl_dir, dkb_table_def_get((dkb_table_id)t)->name, err);
    s.sf = opts->scale_factor;
    if (!rc && s.sf == 0) rc = infer_sf(files, tables, &s.sf, err);
    char *source = NULL;
    dkb_store_writer *w = NULL;
    if (!rc) {
        size_t n = strlen(tbl_dir) + 16;
        source = malloc(n);
        if (!source) rc = dkb_fail(err, DKB_ENOMEM, "import: out of memory");
        else snprintf(source, n, "import %s", tbl_dir);
    }
    if (!rc) {
        dkb_store_writer_opts wo = {.scale_factor = s.sf, .part = 1, .parts = 1, .force = opts->force,
                                    .source = opts->source ? opts->source : source};
        rc = dkb__store_writer_open(out_dir, &wo, &w, err);
    }
    int64_t *order_keys = calloc((size_t)parts + 1, sizeof *order_keys);
    int64_t *part_keys = calloc((size_t)parts + 1, sizeof *part_keys);
    if (!rc && (!order_keys || !part_keys)) rc = dkb_fail(err, DKB_ENOMEM, "import: out of memory");
    for (int t = 0; t < DKB_TABLE_COUNT && !rc; t++) {
        if (!(tables & (1u << t))) continue;
        double ts = dkb__now_s();
        rc = import_table(w, dkb_table_def_get((dkb_table_id)t), &files[t], order_keys, part_keys, opts,
                          progress, &s.rows[t], err);
        s.bytes[t] = files[t].len;
        s.seconds[t] = dkb__now_s() - ts;
        file_close(&files[t]);
    }
    if (!rc) rc = dkb__store_writer_commit(w, err);
    else dkb__store_writer_abort(w);
    for (int t = 0; t < DKB_TABLE_COUNT; t++) file_close(&files[t]);
    free(order_keys);
    free(part_keys);
    free(source);
    s.total_seconds = dkb__now_s() - t0;
    if (!rc && sum) *sum = s;
    return rc;
}
