/* test_store_export.c: dkb__store_export: .tbl -> import -> export gives
 * the same bytes (any chunk size and thread count), table selection, an
 * empty table, existing files (force), a missing table, and a corrupt
 * store failing cleanly. */
#include "store/export.h"
#include "store/import.h"
#include "test_store_util.h"

static bool same_file(const char *a, const char *b) {
    size_t na, nb;
    char *pa = slurp(a, &na), *pb = slurp(b, &nb);
    bool same = na == nb && memcmp(pa, pb, na) == 0;
    free(pa);
    free(pb);
    return same;
}

static char *tbl_path(const char *dir, dkb_table_id id) {
    char name[64];
    snprintf(name, sizeof name, "%s.tbl", dkb_table_def_get(id)->name);
    return join(dir, name);
}

static void test_roundtrip(const char *root, const char *in, const char *store) {
    dkb_store *s;
    dkb_error err = {0};
    CHECK(dkb_store_open(store, 0, &s, &err) == 0);
    if (!s) return;
    size_t chunks[] = {7, 0, 1};
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "out%d", k);
        char *out = join(root, name);
        dkb_export_opts o = {.threads = k == 2 ? 1 : 3, .chunk_rows = chunks[k]};
        dkb_export_summary sum;
        int rc = dkb__store_export(s, out, &o, NULL, &sum, &err);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "export: %s\n", err.msg);
        for (int t = 0; t < DKB_TABLE_COUNT && !rc; t++) {
            char *a = tbl_path(in, (dkb_table_id)t), *b = tbl_path(out, (dkb_table_id)t);
            if (!same_file(a, b)) {
                fprintf(stderr, "%s differs from %s\n", b, a);
                failures++;
            }
            free(a);
            free(b);
        }
        CHECK(rc || (sum.rows[DKB_TABLE_NATION] == 25 && sum.bytes[DKB_TABLE_NATION] > 0));
        free(out);
    }

    /* Existing files: refused without force (nothing touched), replaced with. */
    char *out = join(root, "out0");
    char *region = tbl_path(out, DKB_TABLE_REGION);
    FILE *f = fopen(region, "w");
    fputs("junk\n", f);
    fclose(f);
    dkb_export_opts o = {.threads = 2};
    CHECK_ERR(dkb__store_export(s, out, &o, NULL, NULL, &err), DKB_EEXIST, err,
              "/out0/part.tbl: exists (use --force to replace it)");
    o.tables = 1u << DKB_TABLE_REGION;
    CHECK_ERR(dkb__store_export(s, out, &o, NULL, NULL, &err), DKB_EEXIST, err, "region.tbl: exists");
    size_t len;
    char *text = slurp(region, &len);
    CHECK(len == 5 && memcmp(text, "junk\n", 5) == 0);
    free(text);
    o.force = 1;
    CHECK(dkb__store_export(s, out, &o, NULL, NULL, &err) == 0);
    char *orig = tbl_path(in, DKB_TABLE_REGION);
    CHECK(same_file(region, orig));
    free(orig);

    /* Only the tables asked for. */
    char *sel = join(root, "sel");
    o.tables = (1u << DKB_TABLE_NATION) | (1u << DKB_TABLE_ORDERS);
    CHECK(dkb__store_export(s, sel, &o, NULL, NULL, &err) == 0);
    char *np = tbl_path(sel, DKB_TABLE_NATION), *op = tbl_path(sel, DKB_TABLE_ORDERS), *lp = tbl_path(sel, DKB_TABLE_LINEITEM);
    CHECK(exists(np) && exists(op) && !exists(lp));
    free(np);
    free(op);
    free(lp);
    free(sel);
    free(region);
    free(out);
    dkb_store_close(s);
}

static void test_errors(const char *root) {
    dkb_error err = {0};
    /* A store with only lineitem (empty) and region (empty). */
    char *dir = join(root, "small");
    dkb_store_writer_opts wo = {.scale_factor = 1, .part = 1, .parts = 1, .source = "t"};
    dkb_store_writer *w;
    CHECK(dkb__store_writer_open(dir, &wo, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, dkb_table_def_get(DKB_TABLE_REGION), &err) == 0);
    CHECK(dkb__store_writer_end_table(w, &err) == 0);
    CHECK(dkb__store_writer_commit(w, &err) == 0);
    dkb_store *s;
    CHECK(dkb_store_open(dir, 0, &s, &err) == 0);
    if (!s) return;
    char *out = join(root, "small-out");
    dkb_export_opts o = {.tables = 1u << DKB_TABLE_ORDERS};
    CHECK_ERR(dkb__store_export(s, out, &o, NULL, NULL, &err), DKB_ENOENT, err, "the store has no table orders");
    o.tables = 0;
    CHECK(dkb__store_export(s, out, &o, NULL, NULL, &err) == 0);
    char *rp = tbl_path(out, DKB_TABLE_REGION);
    size_t len;
    free(slurp(rp, &len));
    CHECK(len == 0);
    free(rp);
    dkb_store_close(s);
    free(out);
    free(dir);
}

/* Codes beyond the dictionary in a store opened without verify. */
static void test_corrupt(const char *root, const char *store) {
    char *codes = join(store, "nation/n_name.u8");
    FILE *f = fopen(codes, "r+b");
    fseek(f, 3, SEEK_SET);
    fputc(200, f);
    fclose(f);
    dkb_store *s;
    dkb_error err = {0};
    CHECK(dkb_store_open(store, 0, &s, &err) == 0);
    if (!s) return;
    char *out = join(root, "corrupt-out");
    dkb_export_opts o = {.threads = 2};
    CHECK_ERR(dkb__store_export(s, out, &o, NULL, NULL, &err), DKB_ECORRUPT, err,
              "nation/n_name.u8: row 3: dictionary code outside its file (run verify)");
    char *np = tbl_path(out, DKB_TABLE_NATION);
    CHECK(!exists(np));
    char *tmp = malloc(strlen(np) + 32);
    sprintf(tmp, "%s.tmp.%ld", np, (long)getpid());
    CHECK(!exists(tmp));
    free(tmp);
    free(np);
    free(out);
    free(codes);
    dkb_store_close(s);
}

int main(void) {
    char *root = make_tmpdir();
    char *in = join(root, "tbl"), *store = join(root, "store");
    write_all_tables(in);
    dkb_import_opts io = {.partitions = 2, .threads = 2, .chunk_bytes = 500};
    dkb_error err = {0};
    int rc = dkb__store_import(in, store, &io, NULL, NULL, &err);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "import: %s\n", err.msg);
    test_roundtrip(root, in, store);
    test_errors(root);
    test_corrupt(root, store);
    free(in);
    free(store);
    rm_tree(root);
    free(root);
    if (failures) fprintf(stderr, "test_store_export: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
