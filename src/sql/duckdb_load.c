/* duckdb_load.c: find libduckdb, dlopen it and resolve the C API functions
 * of dkb__duckdb_api (the search order is in duckdb_load.h). */
#include "sql/duckdb_load.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "common/fsutil.h"   // defines: dkb__source_root

/* The npm package that carries libduckdb.so for Linux x86-64 (an optional
 * dependency of @duckdb/node-api that npm installs on that platform). */
#define NPM_LIB "tools/oracle/node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_done, load_rc;
static dkb_error load_err;
static dkb__duckdb_api api;
static char api_path[PATH_MAX];

/* One entry per resolved function: its name and where its pointer goes. */
#define FN(name) {"duckdb_" #name, (void **)&api.name}
static const struct {
    const char *sym;
    void **slot;
} fns[] = {
    FN(library_version), FN(open), FN(close), FN(connect), FN(disconnect), FN(query),
    FN(result_error), FN(destroy_result), FN(row_count), FN(value_varchar), FN(free),
    FN(prepare), FN(prepare_error), FN(bind_varchar), FN(execute_prepared), FN(destroy_prepare),
    FN(appender_create), FN(appender_error), FN(append_data_chunk), FN(appender_close),
    FN(appender_destroy), FN(create_logical_type), FN(create_decimal_type), FN(destroy_logical_type),
    FN(create_data_chunk), FN(destroy_data_chunk), FN(data_chunk_reset), FN(data_chunk_get_vector),
    FN(data_chunk_set_size), FN(vector_get_data), FN(vector_assign_string_element_len), FN(vector_size),
    FN(column_count), FN(column_name),
};
#undef FN

/* dlopen path (a file, or a bare name for the system search). 0 and the
 * handle; DKB_ENOENT when a file path does not exist (try the next);
 * DKB_EIO with dlerror's text when it exists but does not load. */
static int try_open(const char *path, int is_file, void **h, dkb_error *err) {
    if (is_file && access(path, F_OK) != 0) return DKB_ENOENT;
    dlerror();
    *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (*h) return 0;
    if (!is_file) return DKB_ENOENT; /* no system libduckdb.so */
    const char *e = dlerror();
    return dkb_fail(err, DKB_EIO, "libduckdb %s does not load: %s", path, e ? e : "dlopen failed");
}

/* The directory above the running binary's directory (build-x/dkb -> the
 * tree holding build-x), into buf; 0 or -1. */
static int exe_parent_dir(char *buf, size_t cap) {
    if (dkb__self_exe(buf, cap)) return -1;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(buf, '/');
        if (!slash) return -1;
        *slash = 0;
    }
    return buf[0] ? 0 : -1;
}

static int do_load(dkb_error *err) {
    void *h = NULL;
    int rc;
    const char *env = getenv("DKB_LIBDUCKDB");
    if (env && *env) {
        /* DKB_ENOENT: try_open's access() failed, errno says why */
        if ((rc = try_open(env, 1, &h, err)) == DKB_ENOENT)
            return dkb_fail(err, DKB_ENOENT, "libduckdb not found: DKB_LIBDUCKDB=%s: %s", env, strerror(errno));
        if (rc) return rc;
        snprintf(api_path, sizeof api_path, "%s", env);
    } else {
        /* the configured path, then NPM_LIB in the source tree and beside the binary */
        char *cands[3] = {NULL, NULL, NULL}, dir[PATH_MAX];
        int nc = 0;
#ifdef DKB_LIBDUCKDB_PATH
        if (DKB_LIBDUCKDB_PATH[0]) cands[nc++] = strdup(DKB_LIBDUCKDB_PATH);
#endif
        cands[nc++] = dkb__path_join(dkb__source_root(), NPM_LIB);
        if (!exe_parent_dir(dir, sizeof dir)) cands[nc++] = dkb__path_join(dir, NPM_LIB);
        rc = 0;
        for (int i = 0; i < nc && !h && rc != DKB_EIO; i++) {
            if (!cands[i]) continue;   /* out of memory: try the next */
            rc = try_open(cands[i], 1, &h, err);
            if (!rc) snprintf(api_path, sizeof api_path, "%s", cands[i]);
        }
        for (int i = 0; i < nc; i++) free(cands[i]);
        if (rc == DKB_EIO) return rc;
        if (!h && !try_open("libduckdb.so", 0, &h, err)) snprintf(api_path, sizeof api_path, "libduckdb.so (system)");
        if (!h)
            return dkb_fail(err, DKB_ENOENT,
                            "libduckdb not found: set DKB_LIBDUCKDB or run tools/install-deps.sh");
    }
    for (size_t i = 0; i < DKB_COUNTOF(fns); i++) {
        *fns[i].slot = dlsym(h, fns[i].sym);
        if (!*fns[i].slot)
            return dkb_fail(err, DKB_EVERSION, "libduckdb %s lacks %s (DuckDB older than the v1.1 C API?)", api_path,
                            fns[i].sym);
    }
    api.path = api_path;
    return 0;
}

int dkb__duckdb_load(const dkb__duckdb_api **out, dkb_error *err) {
    if (!out) return dkb_fail(err, DKB_EINVAL, "dkb__duckdb_load: NULL out");
    *out = NULL;
    pthread_mutex_lock(&load_lock);
    if (!load_done) {
        load_err.code = 0;
        load_err.msg[0] = 0;
        load_rc = do_load(&load_err);
        load_done = 1;
    }
    int rc = load_rc;
    pthread_mutex_unlock(&load_lock);
    if (rc) return dkb_fail(err, rc, "%s", load_err.msg);
    *out = &api;
    return 0;
}
