/* test_store_errors.c: what goes wrong with stores, and the messages:
 * truncated, missing and corrupted files, bad manifests, output directory
 * rules (non-empty, force, abort), calls out of order, a full disk. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <zlib.h>

#include "test_store_util.h"

static const size_t sizes[] = {10, 20};
static const int ends[] = {1, 0};

/* A fresh two-partition lineitem store at root/name. */
static char *make_store(const char *root, const char *name) {
    char *dir = join(root, name);
    dkb_error err = {0};
    if (write_li_store(dir, 0.01, sizes, ends, 2, 1, &err) != 0) {
        fprintf(stderr, "cannot write test store: %s\n", err.msg);
        exit(2);
    }
    return dir;
}

static int open_err(const char *dir, unsigned flags, dkb_error *err) {
    dkb_store *s = (dkb_store *)1;
    memset(err, 0, sizeof *err);
    int rc = dkb_store_open(dir, flags, &s, err);
    if (rc) CHECK(s == NULL);
    dkb_store_close(s);
    return rc;
}

static void write_bytes(const char *path, long at, const void *p, size_t n) {
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, at, SEEK_SET);
    fwrite(p, 1, n, f);
    fclose(f);
}

static void test_files(const char *root) {
    dkb_error err;
    char *dir = make_store(root, "files");
    CHECK(open_err(dir, DKB_STORE_VERIFY, &err) == 0);

    /* Truncated: always caught at open, naming the file. */
    char *tax = join(dir, "lineitem/l_tax.i64");
    CHECK(truncate(tax, 8) == 0);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "lineitem/l_tax.i64: file is 8 bytes, manifest says 240 (truncated)");
    CHECK(strchr(err.msg, '\n') == NULL);
    free(tax);
    free(dir);

    /* Missing. */
    dir = make_store(root, "missing");
    char *txt = join(dir, "lineitem/l_comment.txt");
    CHECK(unlink(txt) == 0);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ENOENT, err, "lineitem/l_comment.txt: cannot open: ");
    free(txt);
    free(dir);

    /* A flipped byte: open succeeds, verification names the file. */
    dir = make_store(root, "flip");
    txt = join(dir, "lineitem/l_comment.txt");
    write_bytes(txt, 3, "#", 1);
    CHECK(open_err(dir, 0, &err) == 0);
    CHECK_ERR(open_err(dir, DKB_STORE_VERIFY, &err), DKB_ECORRUPT, err,
              "lineitem/l_comment.txt: crc32 mismatch (file 0x");
    dkb_store *s;
    CHECK(dkb_store_open(dir, 0, &s, &err) == 0);
    CHECK_ERR(dkb_store_verify(s, &err), DKB_ECORRUPT, err, "lineitem/l_comment.txt: crc32 mismatch");
    dkb_store_close(s);
    free(txt);
    free(dir);

    /* A dictionary out of order, same size. */
    dir = make_store(root, "dict");
    char *flags = join(dir, "lineitem/l_linestatus.dict");
    write_bytes(flags, 0, "O\nF\n", 4);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "lineitem/l_linestatus.dict: dictionary is not sorted");
    write_bytes(flags, 0, "F\nO\nx", 5);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "lineitem/l_linestatus.dict: file is 5 bytes, manifest says 4 (too long)");
    free(flags);
    free(dir);
}

/* Load, edit and save a store's manifest with cJSON. */
static cJSON *load_manifest(const char *dir) {
    char *p = join(dir, "manifest.json");
    FILE *f = fopen(p, "rb");
    static char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    free(p);
    return cJSON_Parse(buf);
}

static void save_text(const char *dir, const char *text) {
    char *p = join(dir, "manifest.json");
    FILE *f = fopen(p, "wb");
    fputs(text, f);
    fclose(f);
    free(p);
}

static void save_manifest(const char *dir, cJSON *m) {
    char *text = cJSON_Print(m);
    save_text(dir, text);
    free(text);
    cJSON_Delete(m);
}

static cJSON *col0(cJSON *m) {
    return cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tables"), 0), "columns"), 0);
}
static cJSON *table0(cJSON *m) { return cJSON_GetArrayItem(cJSON_GetObjectItem(m, "tables"), 0); }

static void test_manifest(const char *root) {
    dkb_error err;
    char *dir = make_store(root, "man");
    cJSON *orig = load_manifest(dir);
    char *orig_text = cJSON_Print(orig);
    cJSON_Delete(orig);
    cJSON *m;
#define RESET() (save_text(dir, orig_text), m = load_manifest(dir))

    RESET();
    cJSON_Delete(m);
    CHECK(open_err(dir, DKB_STORE_VERIFY, &err) == 0);

    save_text(dir, "{\"format\": \"dkb-store\", ");
    CHECK_ERR(open_err(dir, 0, &err), DKB_EPARSE, err, "/manifest.json: not valid JSON");

    RESET();
    cJSON_ReplaceItemInObject(m, "format_version", cJSON_CreateNumber(2));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_EVERSION, err,
              "/manifest.json: field format_version: version 2 is not supported (this build reads 1)");

    RESET();
    cJSON_ReplaceItemInObject(m, "format", cJSON_CreateString("parquet"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err, "field format: \"parquet\" is not \"dkb-store\"");

    RESET();
    cJSON_DeleteItemFromObject(table0(m), "rows");
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err, "/manifest.json: field tables[0].rows: missing");

    RESET();
    cJSON_ReplaceItemInObject(m, "scale_factor", cJSON_CreateString("1"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err, "field scale_factor: expected a number");

    RESET();
    cJSON_ReplaceItemInObject(col0(m), "dtype", cJSON_CreateString("float32"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[0].dtype: not a valid dtype for the column's type");

    RESET();
    cJSON_ReplaceItemInObject(col0(m), "dtype", cJSON_CreateString("int64"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[0].files[0].bytes: 120 does not match 30 rows of int64");

    RESET();
    cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(col0(m), "files"), 0);
    cJSON_ReplaceItemInObject(f0, "path", cJSON_CreateString("../../etc/passwd"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[0].files[0].path: not a relative path inside the store");

    RESET();
    f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(col0(m), "files"), 0);
    cJSON_ReplaceItemInObject(f0, "crc32", cJSON_CreateNumber(1.5));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[0].files[0].crc32: expected an integer from 0 to 4294967295");

    RESET();
    cJSON_ReplaceItemInObject(table0(m), "name", cJSON_CreateString("lineitems"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err, "field tables[0].name: not a TPC-H table");

    /* a column left out is a column subset (dkb gen --columns): it opens,
     * without that column */
    RESET();
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(table0(m), "columns"), 3);
    save_manifest(dir, m);
    {
        dkb_store *sub = NULL;
        CHECK(dkb_store_open(dir, DKB_STORE_VERIFY, &sub, &err) == 0);
        const dkb_store_table *li = sub ? dkb_store_table_find(sub, "lineitem") : NULL;
        CHECK(li && dkb_store_table_ncolumns(li) == 15 && dkb_store_table_is_subset(li));
        CHECK(li && !dkb_store_table_column(li, "l_linenumber") && dkb_store_table_column(li, "l_quantity"));
        CHECK(li && strcmp(dkb_column_name(dkb_store_table_column_at(li, 3)), "l_quantity") == 0);
        dkb_store_close(sub);
    }

    RESET();
    cJSON_AddItemToArray(cJSON_GetObjectItem(table0(m), "columns"),
                         cJSON_Duplicate(col0(m), 1));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns: expected 1 to 16 columns (all of the table's, or a subset)");

    RESET();
    cJSON_ReplaceItemInObject(table0(m), "columns", cJSON_CreateArray());
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err, "field tables[0].columns: expected 1 to 16 columns");

    RESET();
    cJSON *cols = cJSON_GetObjectItem(table0(m), "columns");
    cJSON *second = cJSON_DetachItemFromArray(cols, 1);
    cJSON_InsertItemInArray(cols, 0, second);   /* l_partkey before l_orderkey */
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[1].name: expected \"l_suppkey\" (columns are in schema order)");

    RESET();
    cJSON *p1 = cJSON_GetArrayItem(cJSON_GetObjectItem(table0(m), "partitions"), 1);
    cJSON_ReplaceItemInObject(p1, "rows", cJSON_CreateNumber(19));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].partitions: partition rows do not add up to the table's rows");

    RESET();
    cJSON_ReplaceItemInObject(col0(m), "name", cJSON_CreateString("l_partkey"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[1].name: expected \"l_suppkey\" (columns are in schema order)");

    RESET();
    cJSON_ReplaceItemInObject(col0(m), "name", cJSON_CreateString("l_nosuch"));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "field tables[0].columns[0].name: expected \"l_orderkey\" (columns are in schema order)");

    RESET();
    cJSON *dict = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(table0(m), "columns"), 8), "dictionary");
    cJSON_ReplaceItemInObject(dict, "size", cJSON_CreateNumber(2));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err,
              "lineitem/l_returnflag.dict: dictionary has more entries than the manifest's size 2");

    RESET();
    cJSON_AddItemToArray(cJSON_GetObjectItem(m, "tables"), cJSON_Duplicate(table0(m), 1));
    save_manifest(dir, m);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ECORRUPT, err, "field tables[1].name: table listed twice");

    /* Codes beyond the dictionary, with a matching crc: content check. */
    RESET();
    char *codes = join(dir, "lineitem/l_shipmode.u8");
    write_bytes(codes, 7, "\xee", 1);
    FILE *fc = fopen(codes, "rb");
    unsigned char buf[64];
    size_t n = fread(buf, 1, sizeof buf, fc);
    fclose(fc);
    cJSON *mode = cJSON_GetArrayItem(cJSON_GetObjectItem(table0(m), "columns"), 14);
    cJSON *fm = cJSON_GetArrayItem(cJSON_GetObjectItem(mode, "files"), 0);
    cJSON_ReplaceItemInObject(fm, "crc32", cJSON_CreateNumber((double)crc32(0, buf, (uInt)n)));
    save_manifest(dir, m);
    CHECK(open_err(dir, 0, &err) == 0);
    CHECK_ERR(open_err(dir, DKB_STORE_VERIFY, &err), DKB_ECORRUPT, err,
              "lineitem/l_shipmode.u8: row 7: code 238 is not below the dictionary size 7");
    free(codes);

    char *mp = join(dir, "manifest.json");
    unlink(mp);
    CHECK_ERR(open_err(dir, 0, &err), DKB_ENOENT, err, "/manifest.json: cannot open: No such file");
    free(mp);
    CHECK(dkb_store_open(NULL, 0, &(dkb_store *){NULL}, &err) == DKB_EINVAL);
#undef RESET
    free(orig_text);
    free(dir);
}

static void test_output_dir(const char *root) {
    dkb_error err;
    char *dir = join(root, "out");
    CHECK(mkdir(dir, 0777) == 0);
    char *junk = join(dir, "precious.txt");
    FILE *f = fopen(junk, "w");
    fputs("keep", f);
    fclose(f);
    /* Non-empty without force. */
    CHECK_ERR(write_li_store(dir, 0.01, sizes, ends, 2, 0, &err), DKB_EEXIST, err,
              "out: directory exists and is not empty (use --force to replace it)");
    CHECK(exists(junk));
    /* An empty directory is fine. */
    char *empty = join(root, "empty");
    CHECK(mkdir(empty, 0777) == 0);
    CHECK(write_li_store(empty, 0.01, sizes, ends, 2, 0, &err) == 0);
    CHECK(open_err(empty, DKB_STORE_VERIFY, &err) == 0);
    /* A regular file is never replaced. */
    CHECK_ERR(write_li_store(junk, 0.01, sizes, ends, 2, 1, &err), DKB_EEXIST, err,
              "precious.txt: exists and is not a directory");

    /* Force: the old contents stay until commit, then are gone. */
    dkb_store_writer_opts o = {.scale_factor = 0.01, .part = 1, .parts = 1, .force = 1, .source = "f"};
    dkb_store_writer *w;
    CHECK(dkb__store_writer_open(dir, &o, &w, &err) == 0);
    CHECK(write_chunks(w, sizes, ends, 2, &err) == 0);
    CHECK(exists(junk));
    CHECK(dkb__store_writer_commit(w, &err) == 0);
    CHECK(!exists(junk));
    CHECK(open_err(dir, DKB_STORE_VERIFY, &err) == 0);
    /* Force over an existing store. */
    CHECK(write_li_store(dir, 0.01, sizes, ends, 2, 1, &err) == 0);
    CHECK(open_err(dir, DKB_STORE_VERIFY, &err) == 0);

    /* Abort leaves nothing; nor does a failed commit. Parents are created. */
    char *fresh = join(root, "a/b/fresh");
    char *tmp = malloc(strlen(fresh) + 32);
    sprintf(tmp, "%s.tmp.%ld", fresh, (long)getpid());
    CHECK(dkb__store_writer_open(fresh, &o, &w, &err) == 0);
    CHECK(exists(tmp));
    CHECK(write_chunks(w, sizes, ends, 2, &err) == 0);
    dkb__store_writer_abort(w);
    CHECK(!exists(tmp) && !exists(fresh));
    dkb__store_writer_abort(NULL);

    /* Out of order. */
    const dkb_table_def *li = dkb_table_def_get(DKB_TABLE_LINEITEM);
    CHECK(dkb__store_writer_open(fresh, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_end_table(w, &err) == DKB_EINVAL);
    CHECK(dkb__store_writer_begin_table(w, li, &err) == DKB_EINVAL); /* failed writer */
    CHECK(dkb__store_writer_commit(w, &err) == DKB_EINVAL);
    CHECK(!exists(tmp) && !exists(fresh));
    CHECK(dkb__store_writer_open(fresh, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, li, &err) == 0);
    CHECK_ERR(dkb__store_writer_commit(w, &err), DKB_EINVAL, err, "inside a table");
    CHECK(!exists(tmp) && !exists(fresh));
    /* Reserved but not flushed at end_table; encode of a reserved chunk. */
    CHECK(dkb__store_writer_open(fresh, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, li, &err) == 0);
    dkb_batch b;
    dkb_store_chunk *k = NULL;
    CHECK(dkb__batch_init(&b, li, 4) == 0 && dkb__store_chunk_create(w, &k) == 0);
    li_fill(&b, 0, 4);
    CHECK(dkb__store_writer_encode(w, &b, k, "t", &err) == 0);
    CHECK(dkb__store_writer_reserve(w, k, &err) == 0);
    CHECK_ERR(dkb__store_writer_encode(w, &b, k, "t", &err), DKB_EINVAL, err, "not yet flushed");
    CHECK_ERR(dkb__store_writer_end_table(w, &err), DKB_EINVAL, err, "chunks not flushed");
    CHECK(dkb__store_writer_flush(w, k, &err) == 0);
    CHECK(dkb__store_writer_flush(w, k, &err) == DKB_EINVAL);
    dkb__store_writer_abort(w);
    dkb__store_chunk_destroy(k);
    dkb__batch_free(&b);
    CHECK(!exists(tmp) && !exists(fresh));
    CHECK(dkb__store_writer_open(fresh, &o, &w, &err) == 0);
    CHECK(dkb__store_writer_begin_table(w, li, &err) == 0 && dkb__store_writer_end_table(w, &err) == 0);
    CHECK_ERR(dkb__store_writer_begin_table(w, li, &err), DKB_EINVAL, err, "table written twice");
    dkb__store_writer_abort(w);
    dkb_store_writer_opts bad = o;
    bad.scale_factor = 0;
    CHECK_ERR(dkb__store_writer_open(fresh, &bad, &w, &err), DKB_EINVAL, err, "scale factor must be positive");
    bad = o;
    bad.part = 3, bad.parts = 2;
    CHECK(dkb__store_writer_open(fresh, &bad, &w, &err) == DKB_EINVAL);
    CHECK(!exists(tmp) && !exists(fresh));
    free(tmp);
    free(fresh);
    free(empty);
    free(junk);
    free(dir);
}

/* A full disk, simulated with a file-size limit (writes fail with EFBIG). */
static void test_full_disk(const char *root) {
    dkb_error err;
    char *dir = join(root, "full");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 16384;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    size_t big[] = {3000, 3000};
    int rc = write_li_store(dir, 0.01, big, NULL, 2, 0, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK_ERR(rc, DKB_ENOSPC, err, ": write failed: File too large");
    CHECK(strstr(err.msg, "full.tmp.") && strstr(err.msg, "lineitem/l_"));
    CHECK(!exists(dir));
    free(dir);
}

int main(void) {
    char *root = make_tmpdir();
    test_files(root);
    test_manifest(root);
    test_output_dir(root);
    test_full_disk(root);
    rm_tree(root);
    free(root);
    if (failures) fprintf(stderr, "test_store_errors: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
