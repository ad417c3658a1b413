/* worker_stream.c: the loader a full-mode candidate calls under a memory
 * budget, and the budget's description (worker_stream.h; the ABI in
 * candidate.h, "full mode under a memory budget").
 *
 * Every load is copied from the store's mapping into one region reserved
 * at setup (PROT_NONE, no swap reserved), at the next page boundary:
 * made writable, filled (descriptors, then each column 64-byte aligned,
 * text offsets rebased to 0, every gap and the rest of its last page
 * zeroed), made read-only, and handed out. A release, and the end of every
 * call, makes its pages PROT_NONE again, so a pointer kept past its
 * release faults, and gives them to the kernel to reclaim when it needs
 * memory (MADV_FREE; until then the next call's loads, which start at the
 * region's base again, find them in place: half the cost of dropping them,
 * measured). Addresses are never reused within a call.
 *
 * Nothing of an earlier call can be found there: only the loader writes
 * into the region, only what it copies and zeroes (the descriptor a load
 * hands out goes to the candidate's *out only once the load succeeded, and
 * an out pointing into the region is refused); every byte a load makes
 * readable is written in this call or known to be zero: its pages up to
 * the end of its bytes are filled whole, and the rest of a 2 MiB-aligned
 * load's reservation is zeroed where an earlier load left bytes (a bitmap
 * of the region's pages that may hold any; kept readable, so its huge
 * pages stay whole); and the loads' ids are numbered from 1 in every call
 * (a counter kept across calls would tell a call how many loads came
 * before it).
 *
 * On CUDA (dkb__wstream_use_cuda) the same bookkeeping holds, and the
 * region above holds only each load's descriptors: the rows go to device
 * memory (worker_stream_cuda.c), placed in a gap between the loads still
 * held (dkb__wsdev_place), overwritten when released and after every call; the
 * loads of one call are bounded by the same 4 x the streamed tables' bytes. */
#include "harness/worker_stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/worker_guard.h"  // defines: dkb__guard_add_range_unmapped
#include "harness/worker_stream_cuda.h"  // defines: dkb__wsdev_*

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  /* Linux 5.14; older kernels refuse it (EINVAL): pages then fault in */
#endif

#define MAX_LOADS 4096     /* loads per call */
#define MAX_LOAD_COLS 64   /* columns per load */
#define REGION_SLACK ((size_t)64 << 20)
#define DEV_ALIGN ((size_t)256)   /* device columns start on 256-byte boundaries */
#define HUGE ((size_t)2 << 20)  /* loads start on 2 MiB boundaries: transparent huge pages where the kernel
                                 * allows them (MADV_HUGEPAGE), 512 times fewer page faults per load */

typedef struct load_rec {
    uint64_t id;
    char *lo;
    size_t len;
    int64_t bytes;
    int live;
    size_t dev_off, dev_len;  /* CUDA: its rows in the device region */
} load_rec;

static struct {
    int on;
    int ns, nparts;
    const dkb_store_table *tb[2];
    const dkb_cand_table *ct[2];   /* the view's descriptors (data hidden) */
    int64_t load_limit;
    char *base;
    size_t size, used;
    size_t pg;          /* the page size */
    uint64_t *dirty;    /* per page of the region: may hold bytes of an earlier load (else zero) */
    int64_t held, total;
    load_rec loads[MAX_LOADS];
    int nloads;
    uint64_t next_id;
    dkb__wsdev *dev;    /* CUDA: the device side (else NULL) */
    int64_t call_cap;   /* CUDA: the bytes one call may load (4 x the streamed tables) */
    pthread_mutex_t mu;
    char last_err[512];
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Under g.mu: remember why the loader refused; returns rc. */
static int refuse(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g.last_err, sizeof g.last_err, fmt, ap);
    va_end(ap);
    return rc;
}

/* A streamed column by name: its table s and store column. */
typedef struct scol {
    int s;
    const dkb_store_column *col;
    const dkb_cand_vec *desc;
    size_t es;   /* element size (text: its offsets') */
    int text;
} scol;

static int find_col(const char *name, scol *c) {
    for (int s = 0; s < g.ns; s++)
        for (int i = 0; i < g.ct[s]->ncols; i++)
            if (!strcmp(g.ct[s]->cols[i].name, name)) {
                c->s = s;
                c->desc = &g.ct[s]->cols[i];
                c->col = dkb_store_table_column(g.tb[s], name);
                if (!c->col) return 0;
                c->text = dkb_column_type(c->col) == DKB_TYPE_TEXT;
                dkb_dtype_t dt = dkb_column_dtype(c->col);
                c->es = c->text || dt == DKB_DTYPE_INT64 ? 8 : dt == DKB_DTYPE_INT32 ? 4 : 1;
                return 1;
            }
    return 0;
}

/* Rows [*start, *start + *rows) of streamed table s in partitions first .. first + count - 1. */
static void part_rows(int s, int first, int count, int64_t *start, int64_t *rows) {
    const dkb_store_partition *a = dkb_store_table_partition(g.tb[s], first);
    const dkb_store_partition *z = dkb_store_table_partition(g.tb[s], first + count - 1);
    *start = a->row_start;
    *rows = z->row_start + z->rows - a->row_start;
}

/* Check a request and size it: what it counts (*bytes), the pages its
 * bytes take (*used: filled whole) and its mapping (*len: the address
 * space it takes, readable, a whole number of 2 MiB pages from 1 MiB on).
 * 0, or DKB_CAND_EINVAL with g.last_err set. Under g.mu. */
static int plan_load(int first, int count, int ncols, const char *const *cols, scol *sc, int64_t *bytes, size_t *used,
                     size_t *len, size_t *dev_len) {
    if (!g.on) return refuse(DKB_CAND_EINVAL, "load: nothing streams in this run");
    if (first < 0 || count < 1 || first >= g.nparts || count > g.nparts - first)
        return refuse(DKB_CAND_EINVAL, "load: partitions %d..%lld: the streamed tables have partitions 0..%d", first,
                      (long long)first + count - 1, g.nparts - 1);
    if (ncols < 1 || ncols > MAX_LOAD_COLS || !cols)
        return refuse(DKB_CAND_EINVAL, "load: %d columns (1..%d, named in cols)", ncols, MAX_LOAD_COLS);
    *bytes = 0;
    *dev_len = 0;
    size_t l = round_up((size_t)ncols * sizeof(dkb_cand_vec), 64), dl = 0;
    for (int i = 0; i < ncols; i++) {
        if (!cols[i]) return refuse(DKB_CAND_EINVAL, "load: column %d is NULL", i);
        if (!find_col(cols[i], &sc[i]))
            return refuse(DKB_CAND_EINVAL, "load: '%.60s' is not a column of %s%s%s", cols[i], g.ct[0]->name,
                          g.ns > 1 ? " or " : "", g.ns > 1 ? g.ct[1]->name : "");
        int64_t start, rows;
        part_rows(sc[i].s, first, count, &start, &rows);
        int64_t b = rows * (int64_t)sc[i].es;
        /* the rows' place: in the host mapping after the descriptors, 64-byte
         * aligned (CPU), or in the device region, 256-byte aligned (CUDA) */
        size_t *at = g.dev ? &dl : &l;
        const size_t align = g.dev ? DEV_ALIGN : 64;
        *at += round_up((size_t)(sc[i].text ? rows + 1 : rows) * sc[i].es, align);
        if (sc[i].text) {
            const int64_t *off = dkb_column_text_offsets(sc[i].col);
            int64_t chars = off[start + rows] - off[start];
            b += chars;
            *at += round_up((size_t)chars, align);
        }
        *bytes += b;
    }
    *dev_len = dl;
    *used = round_up(l ? l : 1, g.pg);
    *len = round_up(l ? l : 1, l >= HUGE / 2 ? HUGE : g.pg);
    return 0;
}

/* n bytes were written at *at: zero up to the next 64-byte boundary and
 * move past it. */
static void pad64(char **at, size_t n) {
    size_t r = round_up(n, 64);
    memset(*at + n, 0, r - n);
    *at += r;
}

static void fill_out(int first, int count, int ncols, dkb_cand_vec *v, dkb_cand_load *out) {
    memset(out, 0, sizeof *out);
    out->first = first;
    out->count = count;
    for (int s = 0; s < g.ns; s++) part_rows(s, first, count, &out->row_start[s], &out->rows[s]);
    out->ncols = ncols;
    out->cols = v;
}

/* CUDA: the descriptors at p (writable, `used` bytes), the rows copied to
 * device region offset dev_off on; out's fields. 0, or the copy's error. */
static int fill_device(char *p, size_t used, size_t dev_off, int first, int count, int ncols, const scol *sc,
                       dkb_cand_load *out, dkb_error *e) {
    dkb_cand_vec *v = (dkb_cand_vec *)p;
    char *region = dkb__wsdev_region(g.dev);
    size_t at = dev_off;
    memset(p, 0, used);
    int rc = 0;
    for (int i = 0; !rc && i < ncols; i++) {
        int64_t start, rows;
        part_rows(sc[i].s, first, count, &start, &rows);
        v[i] = *sc[i].desc;
        v[i].n = rows;
        v[i].data = region + at;
        v[i].bytes = NULL;
        v[i].nbytes = 0;
        if (sc[i].text) {
            const int64_t *off = dkb_column_text_offsets(sc[i].col);
            uint64_t nb = 0;
            const char *bytes = dkb_column_text_bytes(sc[i].col, &nb);
            rc = dkb__wsdev_copy(g.dev, at, off + start, (size_t)(rows + 1) * 8, 1, off[start], e);
            at += round_up((size_t)(rows + 1) * 8, DEV_ALIGN);
            v[i].bytes = region + at;
            v[i].nbytes = off[start + rows] - off[start];
            if (!rc) rc = dkb__wsdev_copy(g.dev, at, bytes + off[start], (size_t)v[i].nbytes, 0, 0, e);
            at += round_up((size_t)v[i].nbytes, DEV_ALIGN);
        } else {
            const char *src = (const char *)dkb_column_data(sc[i].col) + (size_t)start * sc[i].es;
            rc = dkb__wsdev_copy(g.dev, at, src, (size_t)rows * sc[i].es, 0, 0, e);
            at += round_up((size_t)rows * sc[i].es, DEV_ALIGN);
        }
    }
    fill_out(first, count, ncols, v, out);
    return rc;
}

/* CUDA: a place for dlen bytes in the device region beside the loads
 * still held (dkb__wsdev_place). */
static int dev_place(size_t dlen, size_t *off) {
    static size_t offs[MAX_LOADS], lens[MAX_LOADS];
    int n = 0;
    for (int i = 0; i < g.nloads; i++)
        if (g.loads[i].live) offs[n] = g.loads[i].dev_off, lens[n++] = g.loads[i].dev_len;
    return dkb__wsdev_place(offs, lens, n, dkb__wsdev_size(g.dev), dlen, DEV_ALIGN, off);
}

/* Fill the mapping at p (writable, `used` bytes: a whole number of pages)
 * for the request, every byte of it: descriptors, columns, zeroed gaps;
 * out's fields. */
static void fill(char *p, size_t used, int first, int count, int ncols, const scol *sc, dkb_cand_load *out) {
    dkb_cand_vec *v = (dkb_cand_vec *)p;
    char *at = p;
    pad64(&at, (size_t)ncols * sizeof *v);
    for (int i = 0; i < ncols; i++) {
        int64_t start, rows;
        part_rows(sc[i].s, first, count, &start, &rows);
        v[i] = *sc[i].desc;
        v[i].n = rows;
        v[i].data = at;
        if (sc[i].text) {
            const int64_t *off = dkb_column_text_offsets(sc[i].col);
            int64_t *o = (int64_t *)at;
            for (int64_t r = 0; r <= rows; r++) o[r] = off[start + r] - off[start];
            pad64(&at, (size_t)(rows + 1) * 8);
            uint64_t nb = 0;
            const char *bytes = dkb_column_text_bytes(sc[i].col, &nb);
            v[i].bytes = at;
            v[i].nbytes = o[rows];
            memcpy(at, bytes + off[start], (size_t)o[rows]);
            pad64(&at, (size_t)o[rows]);
        } else {
            const char *src = (const char *)dkb_column_data(sc[i].col) + (size_t)start * sc[i].es;
            memcpy(at, src, (size_t)rows * sc[i].es);
            v[i].bytes = NULL;
            v[i].nbytes = 0;
            pad64(&at, (size_t)rows * sc[i].es);
        }
    }
    /* the rest of the last page: it may hold an earlier call's bytes (MADV_FREE keeps them) */
    memset(at, 0, used - (size_t)(at - p));
    fill_out(first, count, ncols, v, out);
}

/* The region's pages [lo, hi) (offsets, page-aligned): marked as holding
 * bytes (mark), or zeroed where they may (clean). */
static void pages_mark(size_t lo, size_t hi) {
    for (size_t i = lo / g.pg; i < hi / g.pg; i++) g.dirty[i / 64] |= (uint64_t)1 << (i % 64);
}

static void pages_clean(size_t lo, size_t hi) {
    for (size_t i = lo / g.pg; i < hi / g.pg; i++)
        if (g.dirty[i / 64] >> (i % 64) & 1) {
            memset(g.base + i * g.pg, 0, g.pg);
            g.dirty[i / 64] &= ~((uint64_t)1 << (i % 64));
        }
}

static int load(const dkb_cand_env *env, int first, int count, int ncols, const char *const *cols,
                dkb_cand_load *out) {
    scol sc[MAX_LOAD_COLS];
    int64_t bytes;
    size_t used, len, dlen = 0, doff = 0;
    dkb_cand_load got;
    pthread_mutex_lock(&g.mu);
    int rc = plan_load(first, count, ncols, cols, sc, &bytes, &used, &len, &dlen);
    if (!rc && !out) rc = refuse(DKB_CAND_EINVAL, "load: out is NULL");
    if (!rc && g.dev && (!env || !env->stream)) rc = refuse(DKB_CAND_EINVAL, "load: env (with its stream) is NULL");
    /* the loader would write there: a way to leave data in the region for a later call */
    if (!rc && (uintptr_t)out < (uintptr_t)g.base + g.size && (uintptr_t)out + sizeof *out > (uintptr_t)g.base)
        rc = refuse(DKB_CAND_EINVAL, "load: out points into the loads' memory (env->budget->load's region)");
    if (!rc && g.held + bytes > g.load_limit)
        rc = refuse(DKB_CAND_ENOMEM,
                    "load of partitions %d..%d (%lld bytes) refused: with the %lld bytes held it would pass "
                    "load_limit %lld",
                    first, first + count - 1, (long long)bytes, (long long)g.held, (long long)g.load_limit);
    size_t at = len % HUGE == 0 ? round_up(g.used, HUGE) : g.used;
    if (!rc && (g.nloads == MAX_LOADS || at > g.size || len > g.size - at))
        rc = refuse(DKB_CAND_ENOMEM, "load of partitions %d..%d refused: this call has loaded %lld bytes in %d loads, "
                    "the most one call may (4 x the streamed tables, %d loads)",
                    first, first + count - 1, (long long)g.total, g.nloads, MAX_LOADS);
    if (!rc && g.dev && g.total + bytes > g.call_cap)
        rc = refuse(DKB_CAND_ENOMEM, "load of partitions %d..%d refused: this call has loaded %lld bytes, the most one "
                    "call may is %lld (4 x the streamed tables)",
                    first, first + count - 1, (long long)g.total, (long long)g.call_cap);
    if (!rc && g.dev && !dev_place(dlen, &doff))
        rc = refuse(DKB_CAND_ENOMEM, "load of partitions %d..%d (%zu bytes of device memory) refused: no room beside "
                    "the loads held in the loader's %zu bytes", first, first + count - 1, dlen, dkb__wsdev_size(g.dev));
    char *p = g.base + at;
    if (!rc && mprotect(p, len, PROT_READ | PROT_WRITE) != 0)
        rc = refuse(DKB_CAND_ENOMEM, "load: mprotect: %s", strerror(errno));
    /* the pages in one call rather than one fault each (Linux 5.14+; a hint elsewhere) */
    if (!rc) (void)madvise(p, len, MADV_POPULATE_WRITE);
    if (!rc) {
        if (g.dev) {
            dkb_error de = {0};
            int cr = fill_device(p, used, doff, first, count, ncols, sc, &got, &de);
            if (!cr) cr = dkb__wsdev_issued(g.dev, env->stream, &de);
            if (cr) rc = refuse(DKB_CAND_EINVAL, "load: %s", de.msg);
        } else {
            fill(p, used, first, count, ncols, sc, &got);
        }
        pages_mark(at, at + used);
        pages_clean(at + used, at + len);
        got.bytes = bytes;
        got.id = ++g.next_id;
        if (mprotect(p, len, PROT_READ) != 0) {
            /* cannot make it read-only: take it back */
            mprotect(p, len, PROT_NONE);
            rc = refuse(DKB_CAND_ENOMEM, "load: mprotect: %s", strerror(errno));
        }
        g.used = at + len;
        if (!rc) {
            g.loads[g.nloads++] = (load_rec){got.id, p, len, bytes, 1, doff, dlen};
            g.held += bytes;
            g.total += bytes;
        }
    }
    pthread_mutex_unlock(&g.mu);
    if (!rc) *out = got;   /* the candidate's memory, written once the load is held */
    return rc;
}

static int release(const dkb_cand_env *env, const dkb_cand_load *l) {
    pthread_mutex_lock(&g.mu);
    int rc = DKB_CAND_EINVAL;
    if (!l) {
        refuse(rc, "release: load is NULL");
    } else if (g.dev && (!env || !env->stream)) {
        refuse(rc, "release: env (with its stream) is NULL");
    } else {
        uint64_t id = l->id;
        int i = 0;
        while (i < g.nloads && !(g.loads[i].id == id && g.loads[i].live)) i++;
        if (i == g.nloads) {
            refuse(rc, "release: load %llu is not held (released already, or not a load of this call)",
                   (unsigned long long)id);
        } else {
            dkb_error de = {0};
            if (g.dev && dkb__wsdev_release(g.dev, g.loads[i].dev_off, g.loads[i].dev_len, env->stream, &de)) {
                refuse(rc, "release: %s", de.msg);
            } else {
                mprotect(g.loads[i].lo, g.loads[i].len, PROT_NONE);
                madvise(g.loads[i].lo, g.loads[i].len, MADV_FREE);
                g.loads[i].live = 0;
                g.held -= g.loads[i].bytes;
                rc = DKB_CAND_OK;
            }
        }
    }
    pthread_mutex_unlock(&g.mu);
    return rc;
}

static int64_t load_size(const dkb_cand_env *env, int first, int count, int ncols, const char *const *cols) {
    (void)env;
    scol sc[MAX_LOAD_COLS];
    int64_t bytes;
    size_t used, len, dlen;
    pthread_mutex_lock(&g.mu);
    int rc = plan_load(first, count, ncols, cols, sc, &bytes, &used, &len, &dlen);
    pthread_mutex_unlock(&g.mu);
    return rc ? -1 : bytes;
}

void dkb__wstream_call_begin(void) {
    pthread_mutex_lock(&g.mu);
    g.last_err[0] = 0;
    g.total = g.held = 0;
    g.nloads = 0;
    g.next_id = 0;   /* ids from 1 in every call: they tell nothing of earlier calls */
    pthread_mutex_unlock(&g.mu);
}

int dkb__wstream_call_end(int64_t *loaded_bytes, dkb_error *err) {
    pthread_mutex_lock(&g.mu);
    if (g.used) {
        mprotect(g.base, g.used, PROT_NONE);
        madvise(g.base, g.used, MADV_FREE);
    }
    g.used = 0;
    g.nloads = 0;
    g.held = 0;
    if (loaded_bytes) *loaded_bytes = g.total;
    const int rc = g.dev ? dkb__wsdev_call_end(g.dev, err) : 0;
    pthread_mutex_unlock(&g.mu);
    return rc;
}

int dkb__wstream_use_cuda(int threads, dkb_error *err) {
    if (!g.on) return 0;
    /* room for the loads held at once (load_limit bytes), their 256-byte
     * alignment, and the gaps a new placement may have to skip */
    const size_t size = round_up((size_t)g.load_limit + (size_t)g.load_limit / 4 + ((size_t)64 << 20), HUGE);
    if (dkb__wsdev_open(size, threads, &g.dev, err)) {
        dkb__wsdev_close(g.dev);
        g.dev = NULL;
        return err->code ? err->code : DKB_EIO;
    }
    return 0;
}

void dkb__wstream_close(void) {
    dkb__wsdev_close(g.dev);
    g.dev = NULL;
}

const char *dkb__wstream_last_error(void) { return g.last_err; }

/* ---- setup ---- */

static const dkb_cand_table *view_table(const dkb_cand_db *cdb, const char *name) {
    for (int t = 0; t < cdb->ntables; t++)
        if (!strcmp(cdb->tables[t].name, name)) return &cdb->tables[t];
    return NULL;
}

int dkb__wstream_setup(const dkb_store *db, const dkb_cand_db *cdb, const char *const streamed[2], int64_t budget,
                       int64_t load_limit, dkb_ro_arena *ro, const dkb_cand_budget **out, dkb_error *err) {
    *out = NULL;
    dkb_cand_budget *b = dkb__ro_alloc(ro, sizeof *b);
    if (!b) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    b->budget = budget;
    b->load_limit = load_limit;
    b->load = load;
    b->release = release;
    b->load_size = load_size;
    size_t total = 0;
    for (int s = 0; s < 2 && streamed[s]; s++) {
        const dkb_store_table *tb = dkb_store_table_find(db, streamed[s]);
        const dkb_cand_table *ct = view_table(cdb, streamed[s]);
        if (!tb || !ct) return dkb_fail(err, DKB_EINVAL, "the store has no table %s to stream", streamed[s]);
        int np = dkb_store_table_npartitions(tb);
        if (s && np != b->nparts)
            return dkb_fail(err, DKB_EINVAL, "%s and %s have %d and %d partitions", streamed[0], streamed[1],
                            b->nparts, np);
        b->nparts = np;
        int64_t *start = dkb__ro_alloc(ro, (size_t)(np + 1) * sizeof *start);
        if (!start) return dkb_fail(err, DKB_ENOMEM, "out of memory");
        for (int i = 0; i < np; i++) start[i] = dkb_store_table_partition(tb, i)->row_start;
        start[np] = dkb_store_table_rows(tb);
        b->part_start[s] = start;
        b->streamed[s] = ct->name;
        b->nstreamed = s + 1;
        g.tb[s] = tb;
        g.ct[s] = ct;
        /* the view keeps names, types and rows; the data only through load */
        for (int c = 0; c < ct->ncols; c++) {
            dkb_cand_vec *v = (dkb_cand_vec *)&ct->cols[c];
            const dkb_store_column *col = dkb_store_table_column_at(tb, c);
            total += (size_t)dkb_column_rows(col) * 8 + 64;
            if (v->type == DKB_CAND_STR) total += (size_t)v->nbytes + 64;
            v->data = NULL;
            v->bytes = NULL;
            v->nbytes = 0;
        }
    }
    if (b->nstreamed) {
        g.ns = b->nstreamed;
        g.nparts = b->nparts;
        g.load_limit = load_limit;
        g.call_cap = (int64_t)(4 * total);
        g.size = round_up(4 * total + REGION_SLACK, HUGE);
        g.pg = page_size();
        g.dirty = calloc((g.size / g.pg + 63) / 64, sizeof *g.dirty);
        if (!g.dirty) return dkb_fail(err, DKB_ENOMEM, "out of memory");
        void *m = mmap(NULL, g.size + HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return dkb_fail(err, DKB_ENOMEM, "cannot reserve %zu bytes of address space for the loads: %s", g.size,
                            strerror(errno));
        g.base = (char *)round_up((size_t)m, HUGE);   /* the slack before it stays reserved, unused */
        madvise(g.base, g.size, MADV_HUGEPAGE);        /* a hint: fine to fail */
        g.used = 0;
        g.on = 1;
        dkb__guard_add_range_unmapped((uintptr_t)g.base, (uintptr_t)g.base + g.size,
                                      "loaded partition (env->budget->load)",
                                      "read a partition it had released, or memory no load gave it "
                                      "(env->budget->load's region)");
    }
    *out = b;
    return 0;
}
