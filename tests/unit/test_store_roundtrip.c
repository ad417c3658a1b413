/* test_store_roundtrip.c: write stores with the writer (parallel encodes,
 * awkward chunk sizes, partitions, several tables, 0 and 1 rows), reopen
 * them with the reader and compare every value; int widths, dictionaries,
 * manifest fields, and the writer's value errors. */
#include <stdbool.h>

#include "test_store_util.h"

static void test_lineitem_roundtrip(const char *root) {
    char *dir = join(root, "li");
    /* 0 rows, 1 row, around 4096, partitions ending after chunks 2 and 5. */
    size_t sizes[] = {0, 1, 4095, 4096, 4097, 2, 1000, 3};
    int ends[] = {0, 0, 1, 0, 0, 1, 0, 0};
    int n = (int)(sizeof sizes / sizeof sizes[0]);
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += (int64_t)sizes[i];
    dkb_error err = {0};
    int rc = write_li_store(dir, 0.01, sizes, ends, n, 0, &err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "write: %s\n", err.msg);
        free(dir);
        return;
    }
    char *tmp = malloc(strlen(dir) + 32);
    sprintf(tmp, "%s.tmp.%ld", dir, (long)getpid());
    CHECK(!exists(tmp));
    free(tmp);

    dkb_store *s;
    rc = dkb_store_open(dir, DKB_STORE_VERIFY, &s, &err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "open: %s\n", err.msg);
        free(dir);
        return;
    }
    CHECK(dkb_store_scale_factor(s) == 0.01);
    int part, parts;
    dkb_store_slice(s, &part, &parts);
    CHECK(part == 1 && parts == 1);
    CHECK(strcmp(dkb_store_source(s), "test") == 0);
    CHECK(strlen(dkb_store_created(s)) == 20 && dkb_store_created(s)[19] == 'Z');
    CHECK(dkb_store_ntables(s) == 1);
    const dkb_store_table *t = dkb_store_table_find(s, "lineitem");
    CHECK(t && t == dkb_store_table_get(s, DKB_TABLE_LINEITEM) && t == dkb_store_table_at(s, 0));
    CHECK(!dkb_store_table_find(s, "orders") && !dkb_store_table_get(s, DKB_TABLE_ORDERS));
    CHECK(!dkb_store_table_at(s, 1) && !dkb_store_table_at(s, -1));
    CHECK(dkb_store_table_rows(t) == total);
    CHECK(dkb_store_table_def(t) == dkb_table_def_get(DKB_TABLE_LINEITEM));

    /* Partitions: rows [0, 4096), [4096, 12291), [12291, total). */
    CHECK(dkb_store_table_npartitions(t) == 3);
    int64_t bounds[] = {0, 4096, 4096 + 4096 + 4097 + 2, total};
    for (int p = 0; p < 3; p++) {
        const dkb_store_partition *q = dkb_store_table_partition(t, p);
        CHECK(q->row_start == bounds[p] && q->rows == bounds[p + 1] - bounds[p]);
        CHECK(q->has_key && q->key_min == li_int(0, bounds[p]) && q->key_max == li_int(0, bounds[p + 1] - 1));
    }
    CHECK(!dkb_store_table_partition(t, 3));

    /* Every value of every column. */
    int bad = 0;
    for (int64_t r = 0; r < total && bad < 5; r++) {
        int c = li_check_row(t, r, r);
        if (c >= 0) {
            fprintf(stderr, "row %lld column %d differs\n", (long long)r, c);
            bad++;
        }
    }
    CHECK(bad == 0);

    /* Types, dtypes, typed accessors. */
    const dkb_store_column *ok = dkb_store_table_column(t, "l_orderkey");
    CHECK(dkb_column_type(ok) == DKB_TYPE_INT && dkb_column_dtype(ok) == DKB_DTYPE_INT32);
    CHECK(dkb_column_i32(ok) && !dkb_column_i64(ok) && !dkb_column_u8(ok) && dkb_column_rows(ok) == total);
    CHECK(dkb_column_data(ok) == dkb_column_i32(ok));
    const dkb_store_column *price = dkb_store_table_column(t, "l_extendedprice");
    CHECK(dkb_column_dtype(price) == DKB_DTYPE_INT64 && dkb_column_i64(price) && !dkb_column_i32(price));
    const dkb_store_column *ship = dkb_store_table_column(t, "l_shipdate");
    CHECK(dkb_column_dtype(ship) == DKB_DTYPE_INT32 && dkb_column_i32(ship));
    const dkb_store_column *cm = dkb_store_table_column(t, "l_comment");
    CHECK(dkb_column_type(cm) == DKB_TYPE_TEXT && !dkb_column_i64(cm) && dkb_column_text_offsets(cm));
    uint64_t nbytes;
    CHECK(dkb_column_text_bytes(cm, &nbytes) && (int64_t)nbytes == dkb_column_text_offsets(cm)[total]);
    CHECK(dkb_column_text_offsets(cm)[0] == 0);
    uint64_t none = 1;
    CHECK(!dkb_column_text_offsets(price) && !dkb_column_text_bytes(price, &none) && none == 0);
    CHECK(!dkb_store_table_column(t, "nope") && !dkb_store_table_column_at(t, 16));

    /* Dictionaries: sorted, complete, lookups; codes compare like strings. */
    const dkb_store_column *mode = dkb_store_table_column(t, "l_shipmode");
    CHECK(dkb_column_type(mode) == DKB_TYPE_DICT && dkb_column_u8(mode) && dkb_column_dict_size(mode) == 7);
    const char *sorted[] = {"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"};
    for (int i = 0; i < 7; i++) {
        size_t len;
        const char *e = dkb_column_dict_entry(mode, i, &len);
        CHECK(e && len == strlen(sorted[i]) && memcmp(e, sorted[i], len) == 0);
        CHECK(dkb_column_dict_lookup(mode, sorted[i], strlen(sorted[i])) == i);
    }
    CHECK(dkb_column_dict_lookup(mode, "BOAT", 4) == -1 && dkb_column_dict_lookup(mode, "AI", 2) == -1);
    CHECK(dkb_column_dict_lookup(mode, "", 0) == -1 && !dkb_column_dict_entry(mode, 7, NULL));
    CHECK(dkb_column_dict_size(price) == 0 && dkb_column_dict_lookup(price, "A", 1) == -1);
    const dkb_store_column *flag = dkb_store_table_column(t, "l_returnflag");
    CHECK(dkb_column_dict_size(flag) == 3 && dkb_column_dict_lookup(flag, "A", 1) == 0 &&
          dkb_column_dict_lookup(flag, "N", 1) == 1 && dkb_column_dict_lookup(flag, "R", 1) == 2);

    /* Files and sizes (what `dkb info` shows). */
    CHECK(dkb_column_nfiles(ok) == 1 && dkb_column_nfiles(mode) == 2 && dkb_column_nfiles(cm) == 2);
    const dkb_store_file *f = dkb_column_file(ok, 0);
    CHECK(strcmp(f->path, "lineitem/l_orderkey.i32") == 0 && strcmp(f->role, "data") == 0);
    CHECK(f->bytes == (uint64_t)total * 4 && dkb_column_disk_bytes(ok) == f->bytes);
    CHECK(strcmp(dkb_column_file(mode, 1)->path, "lineitem/l_shipmode.dict") == 0);
    CHECK(dkb_column_file(mode, 1)->bytes == 37); /* 30 bytes of names + 7 newlines */
    CHECK(strcmp(dkb_column_file(cm, 0)->path, "lineitem/l_comment.off") == 0);
    CHECK(dkb_column_file(cm, 0)->bytes == (uint64_t)(total + 1) * 8);
    CHECK(dkb_column_disk_bytes(cm) == (uint64_t)(total + 1) * 8 + nbytes);
    CHECK(!dkb_column_file(ok, 1));
    uint64_t sum = 0;
    for (int c = 0; c < 16; c++) sum += dkb_column_disk_bytes(dkb_store_table_column_at(t, c));
    CHECK(sum == dkb_store_table_disk_bytes(t));
    CHECK(strcmp(dkb_dtype_name(DKB_DTYPE_UINT8), "uint8") == 0 && dkb_dtype_size(DKB_DTYPE_INT64) == 8);
    CHECK(dkb_store_verify(s, &err) == 0);
    dkb_store_close(s);

    /* The raw files are plain arrays (what numpy.memmap reads). */
    char *p = join(dir, "lineitem/l_linenumber.i32");
    FILE *fp = fopen(p, "rb");
    int32_t v[3] = {0};
    CHECK(fp && fread(v, 4, 3, fp) == 3);
    CHECK(v[0] == li_int(3, 0) && v[1] == li_int(3, 1) && v[2] == li_int(3, 2));
    if (fp) fclose(fp);
    free(p);
    free(dir);
}

/* Several tables in one store: empty region, 1-row nation, lineitem. */
static void test_multi_table(const char *root) {
    char *dir = join(root, "multi");
    dkb_store_writer_opts o = {.scale_factor = 1, .part = 2, .parts = 3, .source = "multi"};
    dkb_store_writer *w;
    dkb_error err = {0};
    CHECK(dkb__store_writer_open(dir, &o, &w, &err) == 0);
    const dkb_table_def *rt = dkb_table_def_get(DKB_TABLE_REGION), *nt = dkb_table_def_get(DKB_TABLE_NATION);
    CHECK(dkb__store_writer_begin_table(w, rt, &err) == 0);
    CHECK(dkb__store_writer_end_table(w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, nt, &err) == 0);
    dkb_batch b;
    dkb_store_chunk *k = NULL;
    CHECK(dkb__batch_init(&b, nt, 4) == 0 && dkb__store_chunk_create(w, &k) == 0);
    b.col[0].v[0] = 24;
    dkb__batch_put_str(&b, 1, 0, "UNITED STATES", 13);
    b.col[2].v[0] = 1;
    dkb__batch_put_str(&b, 3, 0, "", 0);
    b.nrows = 1;
    CHECK(dkb__store_writer_encode(w, &b, k, "nation", &err) == 0);
    CHECK(dkb__store_chunk_rows(k) == 1);
    CHECK(dkb__store_writer_write(w, k, &err) == 0);
    CHECK(dkb__store_chunk_rows(k) == 0);
    CHECK(dkb__store_writer_end_table(w, &err) == 0);
    /* Then lineitem, one row. */
    size_t one = 1;
    CHECK(write_chunks(w, &one, NULL, 1, &err) == 0);
    CHECK(dkb__store_writer_commit(w, &err) == 0);
    dkb__store_chunk_destroy(k);
    dkb__batch_free(&b);

    dkb_store *s;
    CHECK(dkb_store_open(dir, DKB_STORE_VERIFY, &s, &err) == 0);
    if (!s) {
        fprintf(stderr, "open: %s\n", err.msg);
        free(dir);
        return;
    }
    int part, parts;
    dkb_store_slice(s, &part, &parts);
    CHECK(part == 2 && parts == 3 && dkb_store_scale_factor(s) == 1 && dkb_store_ntables(s) == 3);
    const dkb_store_table *r = dkb_store_table_at(s, 0), *n = dkb_store_table_at(s, 1);
    CHECK(strcmp(dkb_store_table_name(r), "region") == 0 && dkb_store_table_rows(r) == 0);
    CHECK(dkb_store_table_npartitions(r) == 1 && !dkb_store_table_partition(r, 0)->has_key);
    const dkb_store_column *rc = dkb_store_table_column(r, "r_comment");
    CHECK(dkb_column_text_offsets(rc)[0] == 0 && dkb_column_disk_bytes(rc) == 8);
    CHECK(dkb_column_i32(dkb_store_table_column_at(r, 0)) != NULL);
    CHECK(dkb_column_dict_size(dkb_store_table_column(r, "r_name")) == 0);
    CHECK(dkb_store_table_rows(n) == 1 && dkb_column_i32(dkb_store_table_column_at(n, 0))[0] == 24);
    size_t len;
    const char *name = dkb_column_str(dkb_store_table_column(n, "n_name"), 0, &len);
    CHECK(name && len == 13 && memcmp(name, "UNITED STATES", 13) == 0);
    CHECK(dkb_column_str(dkb_store_table_column(n, "n_comment"), 0, &len) && len == 0);
    CHECK(!dkb_column_str(dkb_store_table_column(n, "n_comment"), 1, &len));
    const dkb_store_partition *q = dkb_store_table_partition(n, 0);
    CHECK(q->has_key && q->key_min == 24 && q->key_max == 24);
    CHECK(li_check_row(dkb_store_table_at(s, 2), 0, 0) == -1);
    dkb_store_close(s);
    free(dir);
}

/* At a scale factor where orderkeys exceed int32 they are stored as int64. */
static void test_wide(const char *root) {
    char *dir = join(root, "wide");
    dkb_store_writer_opts o = {.scale_factor = 1000, .part = 1, .parts = 1, .source = "wide"};
    dkb_store_writer *w;
    dkb_error err = {0};
    const dkb_table_def *t = dkb_table_def_get(DKB_TABLE_LINEITEM);
    CHECK(dkb__store_writer_open(dir, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, t, &err) == 0);
    dkb_batch b;
    dkb_store_chunk *k = NULL;
    CHECK(dkb__batch_init(&b, t, 3) == 0 && dkb__store_chunk_create(w, &k) == 0);
    li_fill(&b, 0, 3);
    b.col[0].v[0] = 1;
    b.col[0].v[1] = 3000000000LL;
    b.col[0].v[2] = 5999999999LL;
    CHECK(dkb__store_writer_encode(w, &b, k, "wide", &err) == 0);
    CHECK(dkb__store_writer_write(w, k, &err) == 0);
    CHECK(dkb__store_writer_end_table(w, &err) == 0);
    CHECK(dkb__store_writer_commit(w, &err) == 0);
    dkb_store *s;
    CHECK(dkb_store_open(dir, DKB_STORE_VERIFY, &s, &err) == 0);
    if (s) {
        const dkb_store_table *tb = dkb_store_table_find(s, "lineitem");
        const dkb_store_column *c = dkb_store_table_column(tb, "l_orderkey");
        CHECK(dkb_column_dtype(c) == DKB_DTYPE_INT64 && !dkb_column_i32(c));
        CHECK(dkb_column_i64(c)[1] == 3000000000LL && dkb_column_i64(c)[2] == 5999999999LL);
        CHECK(dkb_store_table_partition(tb, 0)->key_max == 5999999999LL);
        /* Columns that never exceed int32 stay narrow. */
        CHECK(dkb_column_dtype(dkb_store_table_column(tb, "l_linenumber")) == DKB_DTYPE_INT32);
        CHECK(dkb_column_dtype(dkb_store_table_column(tb, "l_partkey")) == DKB_DTYPE_INT32);
        dkb_store_close(s);
    }
    dkb__store_chunk_destroy(k);
    dkb__batch_free(&b);
    free(dir);
}

/* Values the writer refuses: too wide for int32, too many dictionary
 * values, a newline in a dictionary value. */
static void test_value_errors(const char *root) {
    char *dir = join(root, "errs");
    dkb_store_writer_opts o = {.scale_factor = 0.01, .part = 1, .parts = 1, .source = "e"};
    dkb_store_writer *w;
    dkb_error err = {0};
    const dkb_table_def *li = dkb_table_def_get(DKB_TABLE_LINEITEM);
    CHECK(dkb__store_writer_open(dir, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, li, &err) == 0);
    dkb_batch b;
    dkb_store_chunk *k = NULL;
    CHECK(dkb__batch_init(&b, li, 10) == 0 && dkb__store_chunk_create(w, &k) == 0);
    li_fill(&b, 0, 10);
    b.col[0].v[5] = 3000000000LL;
    CHECK_ERR(dkb__store_writer_encode(w, &b, k, "generated lineitem", &err), DKB_ERANGE, err,
              "generated lineitem: batch row 5, column l_orderkey: value 3000000000 does not fit in int32");
    CHECK_ERR(dkb__store_writer_encode_lines(w, &b, k, "lineitem.tbl", 100, &err), DKB_ERANGE, err,
              "lineitem.tbl:105: field 1 (l_orderkey): value 3000000000 does not fit in int32");
    b.col[0].v[5] = INT32_MIN - 1LL;
    CHECK_ERR(dkb__store_writer_encode(w, &b, k, "g", &err), DKB_ERANGE, err, "value -2147483649 does not fit");
    b.col[0].v[5] = INT32_MIN;
    b.col[10].v[9] = INT32_MAX + 1LL;
    CHECK_ERR(dkb__store_writer_encode(w, &b, k, "g", &err), DKB_ERANGE, err,
              "g: batch row 9, column l_shipdate: value 2147483648 does not fit in int32");
    b.col[10].v[9] = INT32_MAX;
    CHECK(dkb__store_writer_encode(w, &b, k, "g", &err) == 0);
    /* A failed encode leaves nothing to write. */
    b.col[0].v[0] = INT64_MAX;
    CHECK(dkb__store_writer_encode(w, &b, k, "g", &err) == DKB_ERANGE);
    CHECK(dkb__store_chunk_rows(k) == 0);
    CHECK_ERR(dkb__store_writer_write(w, k, &err), DKB_EINVAL, err, "not encoded");
    /* The writer is now failed: commit refuses and cleans up. */
    CHECK(dkb__store_writer_commit(w, &err) == DKB_EINVAL);
    CHECK(!exists(dir));
    dkb__store_chunk_destroy(k);
    dkb__batch_free(&b);

    /* 257 distinct values in a dictionary column. */
    const dkb_table_def *pt = dkb_table_def_get(DKB_TABLE_PART);
    CHECK(dkb__store_writer_open(dir, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, pt, &err) == 0);
    CHECK(dkb__batch_init(&b, pt, 300) == 0 && dkb__store_chunk_create(w, &k) == 0);
    for (size_t r = 0; r < 300; r++) {
        char s[32];
        int n = snprintf(s, sizeof s, "TYPE %zu", r % 257);
        for (int c = 0; c < pt->ncols; c++) {
            if (b.col[c].v)
                b.col[c].v[r] = (int64_t)r;
            else
                dkb__batch_put_str(&b, c, r, s, c == 4 ? (size_t)n : 4);
        }
    }
    b.nrows = 256;
    CHECK(dkb__store_writer_encode(w, &b, k, "p", &err) == 0);
    b.nrows = 300;
    CHECK_ERR(dkb__store_writer_encode(w, &b, k, "part.tbl", &err), DKB_EPARSE, err,
              "part.tbl: batch row 256, column p_type: more than 256 distinct values");
    dkb__store_writer_abort(w);
    dkb__store_chunk_destroy(k);
    dkb__batch_free(&b);

    /* A newline inside a dictionary value. */
    const dkb_table_def *rt = dkb_table_def_get(DKB_TABLE_REGION);
    CHECK(dkb__store_writer_open(dir, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, rt, &err) == 0);
    CHECK(dkb__batch_init(&b, rt, 1) == 0 && dkb__store_chunk_create(w, &k) == 0);
    b.col[0].v[0] = 0;
    dkb__batch_put_str(&b, 1, 0, "A\nB", 3);
    dkb__batch_put_str(&b, 2, 0, "x", 1);
    b.nrows = 1;
    CHECK_ERR(dkb__store_writer_encode(w, &b, k, "r", &err), DKB_EPARSE, err,
              "r: batch row 0, column r_name: dictionary value contains a newline");
    /* Batches of another table are refused. */
    dkb_batch nb;
    CHECK(dkb__batch_init(&nb, dkb_table_def_get(DKB_TABLE_NATION), 1) == 0);
    CHECK(dkb__store_writer_encode(w, &nb, k, "n", &err) == DKB_EINVAL);
    dkb__batch_free(&nb);
    dkb__store_writer_abort(w);
    dkb__store_chunk_destroy(k);
    dkb__batch_free(&b);
    CHECK(!exists(dir));
    free(dir);
}

/* Many threads encoding the same dictionary columns at once get the same
 * final codes as one thread. */
static void test_parallel_many_chunks(const char *root) {
    char *dir = join(root, "par");
    enum { N = 64 };
    size_t sizes[N];
    int ends[N];
    for (int i = 0; i < N; i++) {
        sizes[i] = (size_t)(1 + (i * 37) % 300);
        ends[i] = i % 16 == 15 && i + 1 < N; /* not after the last: end_table closes it */
    }
    dkb_error err = {0};
    CHECK(write_li_store(dir, 0.01, sizes, ends, N, 0, &err) == 0);
    dkb_store *s;
    CHECK(dkb_store_open(dir, DKB_STORE_VERIFY, &s, &err) == 0);
    if (s) {
        const dkb_store_table *t = dkb_store_table_at(s, 0);
        int64_t total = dkb_store_table_rows(t);
        int bad = 0;
        for (int64_t r = 0; r < total; r++) bad += li_check_row(t, r, r) >= 0;
        CHECK(bad == 0);
        CHECK(dkb_store_table_npartitions(t) == 4);
        dkb_store_close(s);
    }
    free(dir);
}

int main(void) {
    char *root = make_tmpdir();
    test_lineitem_roundtrip(root);
    test_multi_table(root);
    test_wide(root);
    test_value_errors(root);
    test_parallel_many_chunks(root);
    rm_tree(root);
    free(root);
    if (failures) fprintf(stderr, "test_store_roundtrip: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
