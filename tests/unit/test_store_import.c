/* test_store_import.c: dkb__store_import on small .tbl files the test
 * writes itself (all 8 tables): every value equals a direct parse, chunk
 * sizes down to one line per chunk, co-partitioned orders/lineitem, thread
 * counts giving identical files, and the errors (missing file, bad line in
 * a later chunk, unsorted keys, empty input, no trailing newline). */
#include "store/import.h"
#include "tbl/tbl.h"
#include "test_store_util.h"

/* Every value of table t in store s equals a direct parse of its .tbl. */
static void compare_table(const dkb_store *s, const char *tbl_dir, dkb_table_id id) {
    const dkb_table_def *td = dkb_table_def_get(id);
    char name[64];
    snprintf(name, sizeof name, "%s.tbl", td->name);
    char *path = join(tbl_dir, name);
    size_t len;
    char *text = slurp(path, &len);
    int64_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    dkb_batch b;
    dkb_error err;
    CHECK(dkb__batch_init(&b, td, lines ? (size_t)lines : 1) == 0);
    CHECK(dkb__tbl_parse(text, len, &b, name, 1, &err) == 0);
    const dkb_store_table *t = dkb_store_table_get(s, id);
    CHECK(t && dkb_store_table_rows(t) == (int64_t)b.nrows);
    int bad = 0;
    for (int c = 0; t && c < td->ncols; c++) {
        const dkb_store_column *col = dkb_store_table_column_at(t, c);
        for (size_t r = 0; r < b.nrows; r++) {
            if (b.col[c].v) {
                int64_t v = dkb_column_i32(col) ? dkb_column_i32(col)[r] : dkb_column_i64(col)[r];
                bad += v != b.col[c].v[r];
            } else {
                size_t n1, n2;
                const char *s1 = dkb__batch_str(&b, c, r, &n1), *s2 = dkb_column_str(col, (int64_t)r, &n2);
                bad += !s2 || n1 != n2 || memcmp(s1, s2, n1) != 0;
            }
        }
    }
    if (bad) fprintf(stderr, "%s: %d values differ\n", td->name, bad);
    CHECK(bad == 0);
    dkb__batch_free(&b);
    free(text);
    free(path);
}

static void test_import(const char *root) {
    char *in = join(root, "tbl");
    write_all_tables(in);
    size_t chunks[] = {1, 2000, 0}; /* one line per chunk; ~15 lines; default */
    int threads[] = {1, 3, 2};
    uint32_t crcs[3][64];
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "store%d", k);
        char *out = join(root, name);
        dkb_import_opts o = {.partitions = 3, .threads = threads[k], .chunk_bytes = chunks[k]};
        dkb_import_summary sum;
        dkb_error err = {0};
        int rc = dkb__store_import(in, out, &o, NULL, &sum, &err);
        CHECK(rc == 0);
        if (rc) {
            fprintf(stderr, "import: %s\n", err.msg);
            free(out);
            continue;
        }
        CHECK(sum.sf == 0.001 && sum.rows[DKB_TABLE_CUSTOMER] == CUSTOMERS && sum.rows[DKB_TABLE_NATION] == 25);
        dkb_store *s;
        CHECK(dkb_store_open(out, DKB_STORE_VERIFY, &s, &err) == 0);
        if (!s) {
            free(out);
            continue;
        }
        CHECK(dkb_store_scale_factor(s) == 0.001 && dkb_store_ntables(s) == 8);
        CHECK(strncmp(dkb_store_source(s), "import ", 7) == 0);
        for (int t = 0; t < DKB_TABLE_COUNT; t++) compare_table(s, in, (dkb_table_id)t);
        /* Row-split partitions: 20 parts -> 6, 7, 7. */
        const dkb_store_table *part = dkb_store_table_get(s, DKB_TABLE_PART);
        CHECK(dkb_store_table_npartitions(part) == 3 && dkb_store_table_partition(part, 0)->rows == 6 &&
              dkb_store_table_partition(part, 1)->rows == 7 && dkb_store_table_partition(part, 2)->rows == 7);
        /* Co-partitioned: lineitem partition p holds exactly orders p's keys. */
        const dkb_store_table *ord = dkb_store_table_get(s, DKB_TABLE_ORDERS);
        const dkb_store_table *li = dkb_store_table_get(s, DKB_TABLE_LINEITEM);
        CHECK(dkb_store_table_npartitions(ord) == 3 && dkb_store_table_npartitions(li) == 3);
        for (int p = 0; p < 3; p++) {
            const dkb_store_partition *po = dkb_store_table_partition(ord, p);
            const dkb_store_partition *pl = dkb_store_table_partition(li, p);
            CHECK(po->rows == 100 && po->has_key && pl->has_key);
            CHECK(pl->key_min == po->key_min && pl->key_max == po->key_max);
        }
        /* Same bytes whatever the threads and chunk sizes. */
        int nf = 0;
        for (int t = 0; t < 8; t++) {
            const dkb_store_table *tb = dkb_store_table_at(s, t);
            for (int c = 0; c < dkb_store_table_ncolumns(tb); c++) {
                const dkb_store_column *col = dkb_store_table_column_at(tb, c);
                for (int f = 0; f < dkb_column_nfiles(col) && nf < 64; f++)
                    crcs[k][nf++] = dkb_column_file(col, f)->crc32 ^ (uint32_t)(t * 131 + c * 7 + f);
            }
        }
        if (k > 0) CHECK(memcmp(crcs[0], crcs[k], sizeof crcs[0]) == 0);
        dkb_store_close(s);
        free(out);
    }
    free(in);
}

static void test_errors(const char *root) {
    char *in = join(root, "bad");
    char *out = join(root, "bad-out");
    write_all_tables(in);
    dkb_import_opts o = {.partitions = 2, .threads = 2, .chunk_bytes = 200};
    dkb_error err = {0};

    /* A missing table. */
    char *region = join(in, "region.tbl");
    char *saved = join(root, "region.saved");
    rename(region, saved);
    CHECK_ERR(dkb__store_import(in, out, &o, NULL, NULL, &err), DKB_ENOENT, err,
              "/bad/region.tbl: cannot open: No such file or directory");
    rename(saved, region);
    CHECK(!exists(out));

    /* A bad value far into lineitem: the right line, nothing left behind. */
    char *lpath = join(in, "lineitem.tbl");
    size_t len;
    char *text = slurp(lpath, &len);
    char *p = text;
    for (int i = 0; i < 700; i++) p = strchr(p, '\n') + 1;
    char *q = p;
    for (int i = 0; i < 4; i++) q = strchr(q, '|') + 1;
    char *bad = malloc(len + 8);
    size_t at = (size_t)(q - text), fl = (size_t)(strchr(q, '|') - q);
    memcpy(bad, text, at);
    memcpy(bad + at, "abc", 3);
    memcpy(bad + at + 3, q + fl, len - at - fl);
    FILE *f = fopen(lpath, "w");
    fwrite(bad, 1, len - fl + 3, f);
    fclose(f);
    CHECK_ERR(dkb__store_import(in, out, &o, NULL, NULL, &err), DKB_EPARSE, err,
              "/bad/lineitem.tbl:701: field 5 (l_quantity): not a decimal: 'abc'");
    CHECK(!exists(out));
    char *tmp = malloc(strlen(out) + 32);
    sprintf(tmp, "%s.tmp.%ld", out, (long)getpid());
    CHECK(!exists(tmp));

    /* No newline at the end. */
    f = fopen(lpath, "w");
    fwrite(text, 1, len - 1, f);
    fclose(f);
    int64_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    char want[128];
    snprintf(want, sizeof want, "lineitem.tbl:%lld: last line does not end with a newline", (long long)lines);
    CHECK_ERR(dkb__store_import(in, out, &o, NULL, NULL, &err), DKB_EPARSE, err, want);

    /* Unsorted lineitem cannot be co-partitioned (fine with one partition). */
    write_table(in, DKB_TABLE_LINEITEM, 0, false);
    CHECK_ERR(dkb__store_import(in, out, &o, NULL, NULL, &err), DKB_EPARSE, err,
              "is outside partition");
    dkb_import_opts one = o;
    one.partitions = 1;
    CHECK(dkb__store_import(in, out, &one, NULL, NULL, &err) == 0);
    /* The output now exists: refused without force, replaced with it. */
    CHECK_ERR(dkb__store_import(in, out, &one, NULL, NULL, &err), DKB_EEXIST, err, "not empty");
    one.force = 1;
    one.scale_factor = 7;
    CHECK(dkb__store_import(in, out, &one, NULL, NULL, &err) == 0);
    dkb_store *s;
    CHECK(dkb_store_open(out, 0, &s, &err) == 0 && dkb_store_scale_factor(s) == 7);
    dkb_store_close(s);

    /* Empty customer: no scale factor to infer unless given. */
    char *cust = join(in, "customer.tbl");
    fclose(fopen(cust, "w"));
    free(cust);
    CHECK_ERR(dkb__store_import(in, out, &o, NULL, NULL, &err), DKB_EINVAL, err,
              "customer.tbl: no rows, cannot infer the scale factor");
    free(text);
    free(bad);
    free(tmp);
    free(lpath);
    free(region);
    free(saved);
    free(in);
    free(out);
}

/* Every table empty, more partitions than rows. */
static void test_empty(const char *root) {
    char *in = join(root, "empty");
    mkdir(in, 0777);
    for (int t = 0; t < DKB_TABLE_COUNT; t++) write_table(in, (dkb_table_id)t, 0, true);
    /* lineitem from 0 orders would still have rows: rewrite it empty. */
    char *lp = join(in, "lineitem.tbl");
    fclose(fopen(lp, "w"));
    char *out = join(root, "empty-out");
    dkb_import_opts o = {.scale_factor = 1, .partitions = 4, .threads = 2};
    dkb_error err = {0};
    CHECK(dkb__store_import(in, out, &o, NULL, NULL, &err) == 0);
    dkb_store *s;
    CHECK(dkb_store_open(out, DKB_STORE_VERIFY, &s, &err) == 0);
    if (s) {
        for (int t = 0; t < 8; t++) {
            const dkb_store_table *tb = dkb_store_table_at(s, t);
            CHECK(dkb_store_table_rows(tb) == 0 && dkb_store_table_npartitions(tb) == 4);
        }
        dkb_store_close(s);
    }
    /* Two rows, four partitions: some partitions are empty. */
    char *rp = join(in, "region.tbl");
    FILE *f = fopen(rp, "w");
    fputs("0|AFRICA|x|\n1|AMERICA||\n", f);
    fclose(f);
    free(rp);
    o.force = 1;
    CHECK(dkb__store_import(in, out, &o, NULL, NULL, &err) == 0);
    CHECK(dkb_store_open(out, DKB_STORE_VERIFY, &s, &err) == 0);
    if (s) {
        const dkb_store_table *r = dkb_store_table_get(s, DKB_TABLE_REGION);
        CHECK(dkb_store_table_rows(r) == 2 && dkb_store_table_npartitions(r) == 4);
        int64_t total = 0;
        for (int p = 0; p < 4; p++) total += dkb_store_table_partition(r, p)->rows;
        CHECK(total == 2);
        dkb_store_close(s);
    }
    free(lp);
    free(in);
    free(out);
}

static void count_progress(void *ctx, const char *what, uint64_t done, uint64_t total) {
    (void)what;
    int64_t *n = ctx;
    n[0]++;
    if (done > total) n[1]++;
}

static void test_progress(const char *root) {
    char *in = join(root, "tbl");
    char *out = join(root, "prog");
    int64_t calls[2] = {0, 0};
    dkb_progress pr = {count_progress, calls};
    dkb_import_opts o = {.threads = 2, .chunk_bytes = 1000};
    dkb_error err = {0};
    CHECK(dkb__store_import(in, out, &o, &pr, NULL, &err) == 0);
    CHECK(calls[0] > 16 && calls[1] == 0);
    free(in);
    free(out);
}

int main(void) {
    char *root = make_tmpdir();
    test_import(root);
    test_errors(root);
    test_empty(root);
    test_progress(root);
    rm_tree(root);
    free(root);
    if (failures) fprintf(stderr, "test_store_import: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
