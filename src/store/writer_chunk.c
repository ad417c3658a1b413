/* writer_chunk.c: encoding batches into store chunks (thread-safe, any
 * order) and appending encoded chunks to the column files (in row order).
 *
 * encode does the per-row work: int32 narrowing with range checks,
 * dictionary codes, text offsets, and the crc32 of every buffer whose bytes
 * are final. reserve (in row order) gives the chunk its byte range in every
 * file, adds the running base to text offsets and folds chunk crcs into
 * file crcs with crc32_combine; flush (any thread, any order) copies the
 * buffers there with pwrite. write is reserve + flush. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/crc.h"
#include "common/fsutil.h"
#include "store/writer_internal.h"

enum { CACHE_SLOTS = 1024 }; /* power of two, > 2 * DKB__DICT_MAX */

typedef struct cbuf {
    void *p;
    size_t len, cap;
    uint32_t crc;
} cbuf;

/* A thread's view of a dictionary: string -> code, without the lock. */
typedef struct dslot {
    const char *s;   /* the dictionary's own copy; NULL: empty slot */
    uint64_t hash;
    uint32_t len;
    int code;
} dslot;

struct dkb_store_chunk {
    dkb_store_writer *w;
    uint64_t gen;                    /* table generation of the caches and data */
    size_t nrows;
    bool encoded;                    /* holds rows not yet written */
    bool reserved;                   /* placed in the files, not yet flushed */
    uint64_t at_a[DKB_MAX_COLUMNS];  /* file offsets of a[] and b[] once reserved */
    uint64_t at_b[DKB_MAX_COLUMNS];
    cbuf a[DKB_MAX_COLUMNS];         /* values / codes / text offsets */
    cbuf b[DKB_MAX_COLUMNS];         /* text bytes */
    dslot *cache[DKB_MAX_COLUMNS];
    bool has_key;
    int64_t key_min, key_max;
};

int dkb__store_chunk_create(dkb_store_writer *w, dkb_store_chunk **out) {
    *out = NULL;
    if (!w) return DKB_EINVAL;
    dkb_store_chunk *c = calloc(1, sizeof *c);
    if (!c) return DKB_ENOMEM;
    c->w = w;
    *out = c;
    return 0;
}

void dkb__store_chunk_destroy(dkb_store_chunk *c) {
    if (!c) return;
    for (int i = 0; i < DKB_MAX_COLUMNS; i++) {
        free(c->a[i].p);
        free(c->b[i].p);
        free(c->cache[i]);
    }
    free(c);
}

size_t dkb__store_chunk_rows(const dkb_store_chunk *c) { return c && c->encoded ? c->nrows : 0; }

static int reserve(cbuf *b, size_t n) {
    b->len = 0;
    if (n <= b->cap) return 0;
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap < n) ncap *= 2;
    void *p = malloc(ncap);
    if (!p) return DKB_ENOMEM;
    free(b->p);
    b->p = p;
    b->cap = ncap;
    return 0;
}

/* Names the rows of a batch in error messages. */
typedef struct origin {
    const char *where;      /* encode: free text */
    const char *file;       /* encode_lines: .tbl file name */
    int64_t first_line;
} origin;

static int row_fail(const origin *o, dkb_error *err, int code, const dkb_column_def *col, int c,
                    size_t row, const char *what) {
    if (o->file)
        return dkb_fail(err, code, "%s:%lld: field %d (%s): %s", o->file,
                        (long long)(o->first_line + (int64_t)row), c + 1, col->name, what);
    return dkb_fail(err, code, "%s: batch row %zu, column %s: %s", o->where, row, col->name, what);
}

static int encode_i32(const origin *o, const dkb_batch *b, int c, cbuf *out, dkb_error *err) {
    size_t n = b->nrows;
    const int64_t *v = b->col[c].v;
    int32_t *d = out->p;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= v[i] < INT32_MIN || v[i] > INT32_MAX;
        d[i] = (int32_t)v[i];
    }
    if (bad) {
        for (size_t i = 0; i < n; i++)
            if (v[i] < INT32_MIN || v[i] > INT32_MAX) {
                char what[96];
                snprintf(what, sizeof what, "value %lld does not fit in int32", (long long)v[i]);
                return row_fail(o, err, DKB_ERANGE, &b->table->cols[c], c, i, what);
            }
    }
    out->len = n * sizeof(int32_t);
    return 0;
}

static int encode_dict(const origin *o, dkb_store_writer *w, const dkb_batch *b, int c,
                       dkb_store_chunk *k, dkb_error *err) {
    wdict *d = w->cur.cols[c].dict;
    dslot *cache = k->cache[c];
    uint8_t *out = k->a[c].p;
    for (size_t i = 0; i < b->nrows; i++) {
        size_t len;
        const char *s = dkb__batch_str(b, c, i, &len);
        uint64_t h = dkb__dict_hash(s, len);
        size_t at = (size_t)h & (CACHE_SLOTS - 1);
        while (cache[at].s &&
               !(cache[at].hash == h && cache[at].len == len && memcmp(cache[at].s, s, len) == 0))
            at = (at + 1) & (CACHE_SLOTS - 1);
        if (!cache[at].s) {
            if (memchr(s, '\n', len))
                return row_fail(o, err, DKB_EPARSE, &b->table->cols[c], c, i,
                                "dictionary value contains a newline");
            int code = dkb__dict_intern(d, s, len, h);
            if (code == -2) return row_fail(o, err, DKB_ENOMEM, &b->table->cols[c], c, i, "out of memory");
            if (code < 0)
                return row_fail(o, err, DKB_EPARSE, &b->table->cols[c], c, i,
                                "more than 256 distinct values for a dictionary column");
            cache[at] = (dslot){d->s[code], h, (uint32_t)len, code};
        }
        out[i] = (uint8_t)cache[at].code;
    }
    k->a[c].len = b->nrows;
    return 0;
}

static int encode_text(const dkb_batch *b, int c, dkb_store_chunk *k) {
    size_t n = b->nrows;
    const uint32_t *off = b->col[c].off;
    size_t nbytes = n ? off[n] - off[0] : 0;
    if (reserve(&k->b[c], nbytes + 1)) return DKB_ENOMEM;
    int64_t *o = k->a[c].p;
    for (size_t i = 0; i < n; i++) o[i] = (int64_t)(off[i + 1] - off[0]);
    k->a[c].len = n * sizeof(int64_t);
    if (nbytes) memcpy(k->b[c].p, b->col[c].bytes + off[0], nbytes);
    k->b[c].len = nbytes;
    k->b[c].crc = dkb__crc32(0, k->b[c].p, nbytes);
    return 0;
}

static int encode_column(const origin *o, dkb_store_writer *w, const dkb_batch *b, int c,
                         dkb_store_chunk *k, dkb_error *err) {
    const wcol *col = &w->cur.cols[c];
    size_t n = b->nrows;
    size_t width = col->dtype == DKB_DTYPE_UINT8 ? 1 : col->dtype == DKB_DTYPE_INT32 ? 4 : 8;
    if (reserve(&k->a[c], n * width + 1)) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", col->def->name);
    int rc = 0;
    switch (col->def->type) {
    case DKB_TYPE_DICT:
        if (!k->cache[c]) {
            k->cache[c] = calloc(CACHE_SLOTS, sizeof(dslot));
            if (!k->cache[c]) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", col->def->name);
        }
        return encode_dict(o, w, b, c, k, err);
    case DKB_TYPE_TEXT:
        rc = encode_text(b, c, k);
        return rc ? dkb_fail(err, rc, "%s: out of memory", col->def->name) : 0;
    default:
        if (width == 4) {
            rc = encode_i32(o, b, c, &k->a[c], err);
        } else {
            memcpy(k->a[c].p, b->col[c].v, n * 8);
            k->a[c].len = n * 8;
        }
        if (!rc) k->a[c].crc = dkb__crc32(0, k->a[c].p, k->a[c].len);
        return rc;
    }
    return 0;
}

static int encode(dkb_store_writer *w, const dkb_batch *b, dkb_store_chunk *k, const origin *o,
                  dkb_error *err) {
    if (!w || !b || !k || k->w != w)
        return dkb_fail(err, DKB_EINVAL, "store writer: encode without writer, batch or chunk");
    if (!w->in_table || b->table != w->cur.def)
        return dkb_fail(err, DKB_EINVAL, "%s: encode of a batch of another table",
                        b->table ? b->table->name : "?");
    if (k->reserved) return dkb_fail(err, DKB_EINVAL, "%s: encode of a chunk not yet flushed", b->table->name);
    k->encoded = false;
    if (k->gen != w->gen) {
        for (int c = 0; c < DKB_MAX_COLUMNS; c++)
            if (k->cache[c]) memset(k->cache[c], 0, CACHE_SLOTS * sizeof(dslot));
        k->gen = w->gen;
    }
    for (int c = 0; c < b->table->ncols; c++) {
        if (w->cur.cols[c].absent) continue;
        int rc = encode_column(o, w, b, c, k, err);
        if (rc) return rc;
    }
    k->nrows = b->nrows;
    k->has_key = false;
    if (b->nrows > 0 && b->table->cols[0].type == DKB_TYPE_INT) {
        const int64_t *v = b->col[0].v;
        int64_t lo = v[0], hi = v[0];
        for (size_t i = 1; i < b->nrows; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        k->has_key = true;
        k->key_min = lo;
        k->key_max = hi;
    }
    k->encoded = true;
    return 0;
}

int dkb__store_writer_encode(dkb_store_writer *w, const dkb_batch *b, dkb_store_chunk *c,
                             const char *where, dkb_error *err) {
    origin o = {where ? where : "batch", NULL, 0};
    return encode(w, b, c, &o, err);
}

int dkb__store_writer_encode_lines(dkb_store_writer *w, const dkb_batch *b, dkb_store_chunk *c,
                                   const char *file, int64_t first_line, dkb_error *err) {
    origin o = {NULL, file ? file : "<input>", first_line};
    return encode(w, b, c, &o, err);
}

/* Give buffer buf its place at the end of file f; crc_known: buf->crc is
 * its crc32 (else computed here); track_crc: fold it into f's crc. */
static uint64_t place(wfile *f, const cbuf *buf, bool crc_known, bool track_crc) {
    uint64_t at = f->bytes;
    if (track_crc && buf->len) {
        uint32_t crc = crc_known ? buf->crc : dkb__crc32(0, buf->p, buf->len);
        f->crc = dkb__crc32_combine(f->crc, crc, buf->len);
    }
    f->bytes += buf->len;
    return at;
}

int dkb__store_writer_reserve(dkb_store_writer *w, dkb_store_chunk *k, dkb_error *err) {
    if (!w || !k || k->w != w) return dkb_fail(err, DKB_EINVAL, "store writer: write without writer or chunk");
    if (w->failed || atomic_load(&w->io_failed) || !w->in_table || k->gen != w->gen || !k->encoded ||
        k->reserved) {
        w->failed = true;
        return dkb_fail(err, DKB_EINVAL, "%s: write of a chunk that is not encoded for this table",
                        w->cur.def ? w->cur.def->name : w->out.dir);
    }
    const dkb_table_def *t = w->cur.def;
    for (int c = 0; c < t->ncols; c++) {
        wcol *col = &w->cur.cols[c];
        if (col->absent) continue;
        switch (t->cols[c].type) {
        case DKB_TYPE_DICT: /* crc at end_table, after the codes are remapped */
            k->at_a[c] = place(&col->f[0], &k->a[c], false, false);
            break;
        case DKB_TYPE_TEXT: {
            int64_t base = (int64_t)(col->f[1].bytes), *o = k->a[c].p;
            for (size_t i = 0; i < k->nrows; i++) o[i] += base;
            k->at_a[c] = place(&col->f[0], &k->a[c], false, true);
            k->at_b[c] = place(&col->f[1], &k->b[c], true, true);
            break;
        }
        default:
            k->at_a[c] = place(&col->f[0], &k->a[c], true, true);
        }
    }
    k->reserved = true;
    atomic_fetch_add(&w->pending, 1);
    w->cur.rows += (int64_t)k->nrows;
    if (k->has_key) {
        wpart *p = &w->part_cur;
        p->key_min = p->has_key && p->key_min < k->key_min ? p->key_min : k->key_min;
        p->key_max = p->has_key && p->key_max > k->key_max ? p->key_max : k->key_max;
        p->has_key = true;
    }
    return 0;
}

int dkb__store_writer_flush(dkb_store_writer *w, dkb_store_chunk *k, dkb_error *err) {
    if (!w || !k || k->w != w || !k->reserved)
        return dkb_fail(err, DKB_EINVAL, "store writer: flush of a chunk that is not reserved");
    const dkb_table_def *t = w->cur.def;
    int rc = 0;
    for (int c = 0; c < t->ncols && !rc; c++) {
        wcol *col = &w->cur.cols[c];
        if (col->absent) continue;
        if (k->a[c].len)
            rc = dkb__pwrite_all(col->f[0].fd, k->a[c].p, k->a[c].len, (off_t)k->at_a[c], col->f[0].path, err);
        if (!rc && t->cols[c].type == DKB_TYPE_TEXT && k->b[c].len)
            rc = dkb__pwrite_all(col->f[1].fd, k->b[c].p, k->b[c].len, (off_t)k->at_b[c], col->f[1].path, err);
    }
    k->reserved = k->encoded = false;
    atomic_fetch_sub(&w->pending, 1);
    if (rc) atomic_store(&w->io_failed, true);
    return rc;
}

int dkb__store_writer_write(dkb_store_writer *w, dkb_store_chunk *k, dkb_error *err) {
    int rc = dkb__store_writer_reserve(w, k, err);
    return rc ? rc : dkb__store_writer_flush(w, k, err);
}
