/* manifest_write.c: builds manifest.json from the writer's finished tables
 * (cJSON; 64-bit integers are written as exact decimal text). */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "store/writer_internal.h"

/* Builder state: every add goes through here so one check covers all. */
typedef struct jb {
    bool ok;
} jb;

static cJSON *add(jb *b, cJSON *obj, const char *name, cJSON *item) {
    if (!item) {
        b->ok = false;
        return NULL;
    }
    if (!obj) {
        cJSON_Delete(item);
        b->ok = false;
        return NULL;
    }
    if (name ? !cJSON_AddItemToObject(obj, name, item) : !cJSON_AddItemToArray(obj, item)) {
        cJSON_Delete(item);
        b->ok = false;
        return NULL;
    }
    return item;
}

static void add_i64(jb *b, cJSON *obj, const char *name, int64_t v) {
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)v);
    add(b, obj, name, cJSON_CreateRaw(num));
}

static void add_str(jb *b, cJSON *obj, const char *name, const char *s) {
    add(b, obj, name, cJSON_CreateString(s));
}

static void add_partitions(jb *b, cJSON *tab, const wtable *t) {
    cJSON *parts = add(b, tab, "partitions", cJSON_CreateArray());
    for (int i = 0; i < t->nparts; i++) {
        const wpart *p = &t->parts[i];
        cJSON *o = add(b, parts, NULL, cJSON_CreateObject());
        add_i64(b, o, "row_start", p->row_start);
        add_i64(b, o, "rows", p->rows);
        if (p->has_key) {
            add_i64(b, o, "key_min", p->key_min);
            add_i64(b, o, "key_max", p->key_max);
        } else {
            add(b, o, "key_min", cJSON_CreateNull());
            add(b, o, "key_max", cJSON_CreateNull());
        }
    }
}

static void add_column(jb *b, cJSON *cols, const wcol *k) {
    static const char *dtypes[] = {"int32", "int64", "uint8"};
    cJSON *o = add(b, cols, NULL, cJSON_CreateObject());
    add_str(b, o, "name", k->def->name);
    add_str(b, o, "type", dkb_type_name(k->def->type));
    add_str(b, o, "dtype", dtypes[k->dtype]);
    uint64_t total = 0;
    for (int i = 0; i < k->nfiles; i++) total += k->f[i].bytes;
    add_i64(b, o, "bytes", (int64_t)total);
    cJSON *files = add(b, o, "files", cJSON_CreateArray());
    for (int i = 0; i < k->nfiles; i++) {
        cJSON *f = add(b, files, NULL, cJSON_CreateObject());
        add_str(b, f, "role", k->f[i].role);
        add_str(b, f, "path", k->f[i].rel);
        add_i64(b, f, "bytes", (int64_t)k->f[i].bytes);
        add_i64(b, f, "crc32", (int64_t)k->f[i].crc);
    }
    if (k->def->type == DKB_TYPE_DICT) {
        cJSON *d = add(b, o, "dictionary", cJSON_CreateObject());
        add_str(b, d, "path", k->f[1].rel);
        add_i64(b, d, "size", k->dict_size);
    }
}

static cJSON *build(const dkb_store_writer *w) {
    jb b = {true};
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    add_str(&b, root, "format", DKB_STORE_FORMAT);
    add_i64(&b, root, "format_version", DKB_STORE_FORMAT_VERSION);
    add(&b, root, "scale_factor", cJSON_CreateNumber(w->sf));
    add_str(&b, root, "source", w->source);
    cJSON *slice = add(&b, root, "slice", cJSON_CreateObject());
    add_i64(&b, slice, "part", w->part);
    add_i64(&b, slice, "parts", w->parts);
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    add_str(&b, root, "created", created);
    cJSON *tables = add(&b, root, "tables", cJSON_CreateArray());
    for (int i = 0; i < w->ntables; i++) {
        const wtable *t = &w->tables[i];
        cJSON *o = add(&b, tables, NULL, cJSON_CreateObject());
        add_str(&b, o, "name", t->def->name);
        add_i64(&b, o, "rows", t->rows);
        add_str(&b, o, "key", t->def->cols[0].name);
        add_partitions(&b, o, t);
        cJSON *cols = add(&b, o, "columns", cJSON_CreateArray());
        for (int c = 0; c < t->def->ncols; c++)
            if (!t->cols[c].absent) add_column(&b, cols, &t->cols[c]);
    }
    if (!b.ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int dkb__manifest_write(const dkb_store_writer *w, dkb_error *err) {
    char *path = dkb__path_join(w->out.tmp, "manifest.json");
    cJSON *root = path ? build(w) : NULL;
    char *text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text) {
        free(path);
        return dkb_fail(err, DKB_ENOMEM, "%s/manifest.json: out of memory", w->out.dir);
    }
    size_t n = strlen(text);
    text[n] = '\n'; /* replace the terminator: the file ends in a newline */
    int rc = 0, fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = dkb__io_fail(err, path, "cannot create");
    } else {
        rc = dkb__write_all(fd, text, n + 1, path, err);
        if (!rc && fsync(fd) != 0) rc = dkb__io_fail(err, path, "fsync failed");
        if (close(fd) != 0 && !rc) rc = dkb__io_fail(err, path, "close failed");
    }
    cJSON_free(text);
    free(path);
    return rc;
}
