/* test_store_util.h: shared by the store tests: test_check.h, temporary
 * directories, a deterministic synthetic lineitem (every logical type,
 * dictionary values first seen out of sorted order, empty and long text)
 * and a helper writing it as a store with parallel encodes; small .tbl
 * files of all 8 tables (orders sorted by sparse keys, lineitem matching). */
#ifndef DKB_TEST_STORE_UTIL_H
#define DKB_TEST_STORE_UTIL_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/date.h"
#include "dkb/store.h"
#include "store/store_writer.h"
#include "table/batch.h"
#include "test_check.h"

static inline int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static inline void rm_tree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* A fresh empty directory under $TMPDIR, else /dev/shm (the tests create
 * and delete thousands of small files), else /tmp; the caller frees it. */
static inline char *make_tmpdir(void) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/dkb-test-XXXXXX", base);
    char *d = mkdtemp(tmpl);
    if (!d) {
        perror("mkdtemp");
        exit(2);
    }
    return strdup(d);
}

static inline char *join(const char *a, const char *b) {
    char *p = malloc(strlen(a) + strlen(b) + 2);
    sprintf(p, "%s/%s", a, b);
    return p;
}

static inline bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- synthetic lineitem: row r's values are functions of r ---- */

static const char *const li_modes[] = {"TRUCK", "MAIL", "REG AIR", "AIR", "FOB", "SHIP", "RAIL"};
static const char *const li_instr[] = {"TAKE BACK RETURN", "NONE", "DELIVER IN PERSON", "COLLECT COD"};
static const char *const li_flags[] = {"N", "R", "A"};
static const char *const li_status[] = {"O", "F"};

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static inline int64_t li_int(int c, int64_t r) {
    switch (c) {
    case 0: return 1 + r / 3;                              /* l_orderkey: sorted */
    case 1: return 1 + (int64_t)(mix((uint64_t)r) % 200000);
    case 2: return 1 + r % 10000;
    case 3: return 1 + r % 3;
    case 4: return (1 + r % 50) * 100;                     /* l_quantity */
    case 5: return (int64_t)(mix((uint64_t)r + 7) % 10000000) - 5000;
    case 6: return r % 11;
    case 7: return r % 9;
    case 10: return 8035 + r % 2500;                        /* dates */
    case 11: return -1 - r % 400;
    case 12: return r % 100000;
    default: return 0;
    }
}

/* String of column c at row r into buf (returns its length). */
static inline size_t li_str(int c, int64_t r, char *buf, size_t cap) {
    const char *s = NULL;
    switch (c) {
    case 8: s = li_flags[mix((uint64_t)r) % 3]; break;
    case 9: s = li_status[r % 2]; break;
    case 13: s = li_instr[mix((uint64_t)r + 1) % 4]; break;
    case 14: s = li_modes[mix((uint64_t)r + 2) % 7]; break;
    default: {
        if (r % 5 == 0) return 0;                           /* empty text */
        size_t n = 0;
        for (int k = 0; k <= r % 4; k++) n += (size_t)snprintf(buf + n, cap - n, "c%lld|x, ", (long long)r);
        return n > 0 ? n - 1 : 0;
        }
    }
    size_t n = strlen(s);
    memcpy(buf, s, n);
    return n;
}

static inline void li_fill(dkb_batch *b, int64_t first, size_t n) {
    dkb__batch_clear(b);
    const dkb_table_def *t = b->table;
    char buf[256];
    for (size_t i = 0; i < n; i++) {
        int64_t r = first + (int64_t)i;
        for (int c = 0; c < t->ncols; c++) {
            if (b->col[c].v) {
                b->col[c].v[i] = li_int(c, r);
            } else {
                size_t len = li_str(c, r, buf, sizeof buf);
                dkb__batch_put_str(b, c, i, buf, len);
            }
        }
    }
    b->nrows = n;
}

/* Compare row r of every column of a lineitem store table with li_*. */
static inline int li_check_row(const dkb_store_table *t, int64_t r, int64_t value_row) {
    char buf[256];
    for (int c = 0; c < dkb_store_table_ncolumns(t); c++) {
        const dkb_store_column *col = dkb_store_table_column_at(t, c);
        switch (dkb_column_type(col)) {
        case DKB_TYPE_DICT:
        case DKB_TYPE_TEXT: {
            size_t len, want = li_str(c, value_row, buf, sizeof buf);
            const char *s = dkb_column_str(col, r, &len);
            if (!s || len != want || memcmp(s, buf, len) != 0) return c;
            break;
        }
        default: {
            int64_t v = dkb_column_dtype(col) == DKB_DTYPE_INT32 ? dkb_column_i32(col)[r]
                                                                : dkb_column_i64(col)[r];
            if (v != li_int(c, value_row)) return c;
        }
        }
    }
    return -1;
}

/* Write lineitem as chunks of the given sizes (a partition ends after
 * chunk i when ends[i]); encodes run in parallel, writes in order. */
static inline int write_chunks(dkb_store_writer *w, const size_t *sizes, const int *ends, int n, dkb_error *err) {
    const dkb_table_def *t = dkb_table_def_get(DKB_TABLE_LINEITEM);
    int rc = dkb__store_writer_begin_table(w, t, err);
    if (rc) return rc;
    int64_t *first = calloc((size_t)n + 1, sizeof *first);
    for (int i = 0; i < n; i++) first[i + 1] = first[i] + (int64_t)sizes[i];
    int failed = 0;
    dkb_error e2 = {0};
#pragma omp parallel for ordered schedule(dynamic, 1) num_threads(3)
    for (int i = 0; i < n; i++) {
        dkb_batch b;
        dkb_store_chunk *k = NULL;
        dkb_error e = {0};
        int r = dkb__batch_init(&b, t, sizes[i] ? sizes[i] : 1);
        if (!r) r = dkb__store_chunk_create(w, &k);
        if (!r) {
            li_fill(&b, first[i], sizes[i]);
            r = dkb__store_writer_encode(w, &b, k, "test lineitem", &e);
        }
        bool split = i % 2 == 1, reserved = false; /* odd chunks: reserve + flush */
#pragma omp ordered
        {
            if (!failed && r) {
                failed = r;
                e2 = e;
            }
            if (!failed) {
                failed = split ? dkb__store_writer_reserve(w, k, &e2) : dkb__store_writer_write(w, k, &e2);
                reserved = split && !failed;
                if (!failed && ends && ends[i]) failed = dkb__store_writer_end_partition(w, &e2);
            }
        }
        if (reserved && dkb__store_writer_flush(w, k, &e) != 0) {
#pragma omp critical(test_flush)
            failed = failed ? failed : DKB_EIO;
        }
        dkb__store_chunk_destroy(k);
        dkb__batch_free(&b);
    }
    free(first);
    if (failed) {
        if (err) *err = e2;
        return failed;
    }
    return dkb__store_writer_end_table(w, err);
}

/* A whole store at dir holding only lineitem in the given chunks. */
static inline int write_li_store(const char *dir, double sf, const size_t *sizes, const int *ends, int n,
                          int force, dkb_error *err) {
    dkb_store_writer_opts o = {.scale_factor = sf, .part = 1, .parts = 1, .force = force, .source = "test"};
    dkb_store_writer *w;
    int rc = dkb__store_writer_open(dir, &o, &w, err);
    if (rc) return rc;
    rc = write_chunks(w, sizes, ends, n, err);
    if (rc) {
        dkb__store_writer_abort(w);
        return rc;
    }
    return dkb__store_writer_commit(w, err);
}

/* ---- synthetic .tbl files of all 8 tables ---- */

enum { CUSTOMERS = 150, ORDERS = 300 };

static inline int64_t orderkey(int64_t r) { return (r / 8) * 32 + r % 8 + 1; } /* sparse, like dbgen */

/* Append the text of field c of row r of table t (key: the row's key). */
static inline void field(FILE *f, const dkb_column_def *c, int ci, int64_t r, int64_t key) {
    static const char *dict[] = {"ZETA", "ALPHA", "MIDDLE", "BETA GAMMA", "A"};
    switch (c->type) {
    case DKB_TYPE_INT:
        fprintf(f, "%lld", (long long)(ci == 0 ? key : (r * 31 + ci) % 1000));
        break;
    case DKB_TYPE_DECIMAL: {
        int64_t v = (r * 7919 + ci * 13) % 2000000 - (r % 3 == 0 ? 1000000 : 0);
        if (c->flags & DKB_COL_WHOLE)
            fprintf(f, "%lld", (long long)(1 + r % 50));
        else
            fprintf(f, "%s%lld.%02lld", v < 0 ? "-" : "", (long long)(llabs(v) / 100), (long long)(llabs(v) % 100));
        break;
    }
    case DKB_TYPE_DATE: {
        int y, m, d;
        dkb__civil_from_days((int32_t)(8035 + (r * 37 + ci) % 2557), &y, &m, &d);
        fprintf(f, "%04d-%02d-%02d", y, m, d);
        break;
    }
    case DKB_TYPE_DICT:
        fputs(dict[(r * 3 + ci) % 5], f);
        break;
    default:
        for (int64_t i = 0; i < (r + ci) % 4; i++) fprintf(f, "text %lld, more.", (long long)(r + i));
    }
    fputc('|', f);
}

static inline void write_table(const char *dir, dkb_table_id id, int64_t rows, bool sorted) {
    const dkb_table_def *t = dkb_table_def_get(id);
    char name[64];
    snprintf(name, sizeof name, "%s.tbl", t->name);
    char *path = join(dir, name);
    FILE *f = fopen(path, "w");
    if (id == DKB_TABLE_LINEITEM) {
        int64_t r = 0;
        for (int64_t o = 0; o < ORDERS; o++) {
            int64_t oo = sorted ? o : (o == 100 ? 200 : o == 200 ? 100 : o);
            for (int64_t l = 0; l < 1 + orderkey(oo) % 7; l++, r++) {
                for (int c = 0; c < t->ncols; c++) field(f, &t->cols[c], c, r, orderkey(oo));
                fputc('\n', f);
            }
        }
    } else {
        for (int64_t r = 0; r < rows; r++) {
            int64_t key = id == DKB_TABLE_ORDERS ? orderkey(r) : r + (id == DKB_TABLE_NATION || id == DKB_TABLE_REGION ? 0 : 1);
            for (int c = 0; c < t->ncols; c++) field(f, &t->cols[c], c, r, key);
            fputc('\n', f);
        }
    }
    fclose(f);
    free(path);
}

static inline void write_all_tables(const char *dir) {
    mkdir(dir, 0777);
    int64_t rows[] = {20, 80, 10, CUSTOMERS, ORDERS, 0, 25, 5};
    for (int t = 0; t < DKB_TABLE_COUNT; t++) write_table(dir, (dkb_table_id)t, rows[t], true);
}

static inline char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc(*len + 1);
    *len = fread(p, 1, *len, f);
    fclose(f);
    return p;
}

#endif
