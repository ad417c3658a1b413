/* test_harness_util.h: shared by the harness tests: test_check.h's CHECK
 * macros, temporary directories, writing and compiling small C
 * files, finding the dkb binary and dkb/candidate.h, and a tiny generated
 * store. */
#ifndef DKB_TEST_HARNESS_UTIL_H
#define DKB_TEST_HARNESS_UTIL_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/gen_driver.h"
#include "harness/harness.h"
#include "test_check.h"

static inline int rm_entry_(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}
static inline void rm_tree(const char *path) { nftw(path, rm_entry_, 16, FTW_DEPTH | FTW_PHYS); }

/* A fresh directory under $TMPDIR (malloc'd); exits on failure. */
static inline char *make_tmpdir(const char *tag) {
    const char *t = getenv("TMPDIR");
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/dkb-%s-XXXXXX", t && *t ? t : "/tmp", tag);
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        exit(2);
    }
    return p;
}

/* dir/name (malloc'd). */
static inline char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static inline void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

/* Whether the CUDA compiler the harness uses ($DKB_NVCC, default nvcc) is
 * on the PATH. */
static inline int have_nvcc(void) {
    const char *nv = getenv("DKB_NVCC");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", nv && *nv ? nv : "nvcc");
    return system(cmd) == 0;
}

/* The directory of this test executable, and of the source tree's include/
 * (for dkb/candidate.h): DKB_CANDIDATE_H is set from $DKB_TESTDATA when
 * given, else found next to the executable by the build itself. */
static inline void set_candidate_header(void) {
    const char *td = getenv("DKB_TESTDATA");
    if (td && *td && !getenv("DKB_CANDIDATE_H")) {
        char p[4096];
        snprintf(p, sizeof p, "%s/../../include/dkb/candidate.h", td);
        if (access(p, R_OK) == 0) setenv("DKB_CANDIDATE_H", p, 1);
    }
}

/* The dkb binary: $DKB, else ../dkb from this executable (build/tests/x ->
 * build/dkb). NULL when not found. */
static inline const char *find_dkb(void) {
    static char p[4096];
    const char *env = getenv("DKB");
    if (env && *env) return env;
    ssize_t n = readlink("/proc/self/exe", p, sizeof p - 16);
    if (n <= 0) return NULL;
    p[n] = 0;
    char *slash = strrchr(p, '/');
    if (!slash) return NULL;
    *slash = 0;
    slash = strrchr(p, '/');
    if (!slash) return NULL;
    strcpy(slash, "/dkb");
    return access(p, X_OK) == 0 ? p : NULL;
}

/* Compile src (a file) into a shared object out with cc -shared -fPIC
 * (extra flags appended); 0 on success. */
static inline int cc_shared(const char *src, const char *out, const char *extra) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cc -std=c11 -O1 -fPIC -shared %s -o '%s' '%s' 2>&1", extra ? extra : "", out, src);
    return system(cmd);
}

/* A generated store at a small scale factor in dir/store (path malloc'd);
 * exits on failure. */
static inline char *make_store(const char *dir, double sf) {
    char *out = join(dir, "store");
    dkb_gen_opts o = {.sf = sf, .threads = 2, .tables = (1u << DKB_TABLE_COUNT) - 1, .part = 1, .parts = 1,
                      .partitions = 1, .format = DKB_OUT_STORE, .out = out};
    dkb_gen_summary sum;
    dkb_error err = {0};
    if (dkb__gen_run(&o, &sum, &err)) {
        fprintf(stderr, "generating a store at SF %g: %s\n", sf, err.msg);
        exit(2);
    }
    return out;
}

#endif
