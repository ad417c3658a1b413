/* py_build.c: the build step of a Python candidate: copy the source into the
 * row's scratch directory, check it statically in the sandbox (the bridge's
 * checker, py_bridge.py, run by the interpreter, which only parses the
 * candidate), and set up the worker's shim (python/py_shim.c) with its
 * configuration. The candidate's code first runs in the worker. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"             // defines: dkb__copy_file
#include "harness/py_build.h"
#include "py_bridge_src.h"   // defines: dkb__py_bridge_src (generated from python/py_bridge.py)

#define PY_SOURCE_MAX ((off_t)1 << 20)
#define PY_CHECK_TIMEOUT_S 60.0
#define PY_CHECK_AS_BYTES ((uint64_t)4 << 30)

bool dkb__is_python_source(const char *src) {
    size_t n = src ? strlen(src) : 0;
    return n > 3 && !strcmp(src + n - 3, ".py");
}

/* The interpreter: $DKB_PYTHON, /usr/bin/python3, python3 on PATH. */
static int find_python(char *out, size_t n) {
    const char *env = getenv("DKB_PYTHON");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, X_OK);
    }
    if (access("/usr/bin/python3", X_OK) == 0) {
        snprintf(out, n, "/usr/bin/python3");
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if ((size_t)snprintf(out, n, "%.*s/python3", (int)len, len ? path : ".") < n && access(out, X_OK) == 0)
            return 0;
        path += len + (end != NULL);
    }
    return -1;
}

/* The shim: $DKB_PYSHIM, else dkb_pyshim.so beside the running dkb. */
static int find_shim(char *out, size_t n) {
    const char *env = getenv("DKB_PYSHIM");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, R_OK);
    }
    char exe[PATH_MAX];
    if (dkb__self_exe(exe, sizeof exe)) return -1;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    if ((size_t)snprintf(out, n, "%s/dkb_pyshim.so", exe) >= n) return -1;
    return access(out, R_OK);
}

/* The whole text of path (malloc'd, at most max bytes), or NULL. */
static char *slurp(const char *path, size_t max) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(max + 1);
    size_t got = buf ? fread(buf, 1, max, f) : 0;
    fclose(f);
    if (buf) buf[got] = 0;
    return buf;
}

/* The value of line "key value" in text, into out; -1 when absent. */
static int line_value(const char *text, const char *key, char *out, size_t n) {
    size_t kl = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > kl && !strncmp(p, key, kl) && p[kl] == ' ') {
            if (len - kl - 1 >= n) return -1;
            memcpy(out, p + kl + 1, len - kl - 1);
            out[len - kl - 1] = 0;
            return 0;
        }
        p = e ? e + 1 : NULL;
    }
    return -1;
}

static int verdict(dkb_build *b, dkb_verdict v, const char *fmt, const char *what) {
    b->verdict = v;
    snprintf(b->detail, sizeof b->detail, fmt, what);
    return 0;
}

int dkb__py_build(const char *src, dkb_mode mode, const char *scratch_dir, dkb_build *b, dkb_error *err) {
    b->verdict = DKB_VERDICT_HARNESS_ERROR;
    free(b->log);
    if (!(b->log = strdup(""))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    struct stat st;
    if (stat(src, &st) != 0) return dkb_fail(err, dkb_errno_code(errno), "cannot read %s: %s", src, strerror(errno));
    const char *base = strrchr(src, '/');
    base = base ? base + 1 : src;
    int blen = (int)strlen(base) - 3;
    char copy[4096], cfg[4096], log[4096], cache[4096];
    if ((size_t)snprintf(b->so_path, sizeof b->so_path, "%s/%.*s.so", scratch_dir, blen, base) >= sizeof b->so_path)
        return dkb_fail(err, DKB_EINVAL, "build: scratch path too long");
    snprintf(copy, sizeof copy, "%s/%.*s.py", scratch_dir, blen, base);
    snprintf(cfg, sizeof cfg, "%s/%.*s.pycfg", scratch_dir, blen, base);
    snprintf(log, sizeof log, "%s/%.*s.log", scratch_dir, blen, base);
    snprintf(cache, sizeof cache, "%s/cache", scratch_dir);
    unlink(b->so_path);
    if (st.st_size > PY_SOURCE_MAX) {
        char what[64];
        snprintf(what, sizeof what, "%lld", (long long)st.st_size);
        return verdict(b, DKB_VERDICT_COMPILE_ERROR, "source is %s bytes (limit 1 MiB)", what);
    }
    int rc = dkb__copy_file(src, copy, err);
    if (rc) return rc;

    char python[4096], shim[4096];
    if (find_python(python, sizeof python) != 0)
        return verdict(b, DKB_VERDICT_HARNESS_ERROR, "%s", "no python3 for Python candidates (set DKB_PYTHON)");
    if (find_shim(shim, sizeof shim) != 0)
        return verdict(b, DKB_VERDICT_HARNESS_ERROR, "%s",
                       "the Python bridge's shim dkb_pyshim.so is not beside dkb (set DKB_PYSHIM)");

    /* the static check: the interpreter only parses the candidate */
    char *argv[] = {python, (char *)"-I", (char *)"-S", (char *)"-B", (char *)"-c", (char *)dkb__py_bridge_src,
                    (char *)"check", copy, (char *)(mode == DKB_MODE_CORE ? "core" : "full"), NULL};
    dkb_limits lim = {.timeout_s = PY_CHECK_TIMEOUT_S, .output_bytes = (uint64_t)1 << 20,
                      .as_bytes = PY_CHECK_AS_BYTES, .output_path = log};
    dkb_sandbox_result sr;
    rc = dkb__sandbox_run(argv, &lim, &sr, err);
    b->compile_s += sr.seconds;
    if (rc) {
        dkb__sandbox_result_free(&sr);
        return rc;
    }
    dkb_verdict sv = sr.verdict;
    int code = sr.exit_code;
    char sdetail[256];
    snprintf(sdetail, sizeof sdetail, "%.200s", sr.detail);
    dkb__sandbox_result_free(&sr);
    char *out = slurp(log, 1 << 16);
    if (!out) return dkb_fail(err, DKB_EIO, "build: cannot read %s", log);
    char first[400];
    const char *nl = strchr(out, '\n');
    snprintf(first, sizeof first, "%.*s", (int)(nl ? nl - out : (long)strlen(out)), out);
    dkb__text_sanitize(first, strlen(first));
    free(b->log);
    b->log = out;
    if (sv != DKB_VERDICT_EXITED) return verdict(b, DKB_VERDICT_COMPILE_ERROR, "the static check: %s", sdetail);
    if (code == 3) return verdict(b, DKB_VERDICT_FORBIDDEN_SYMBOL, "%s", first);
    if (code == 4) return verdict(b, DKB_VERDICT_COMPILE_ERROR, "%s", first);
    if (code == 5) return verdict(b, DKB_VERDICT_BAD_ENTRY, "%s", first);
    if (code != 0) {
        char what[32];
        snprintf(what, sizeof what, "%d", code);
        return verdict(b, DKB_VERDICT_HARNESS_ERROR, "the static check (python3) exited with status %s", what);
    }
    char lib[4096], prefix[4096], sites[8192];
    if (line_value(out, "site", sites, sizeof sites)) sites[0] = 0;   /* a virtual environment's */
    if (line_value(out, "libpython", lib, sizeof lib) || !lib[0] || line_value(out, "prefix", prefix, sizeof prefix))
        return verdict(b, DKB_VERDICT_HARNESS_ERROR, "%.300s has no shared libpython (set DKB_PYTHON)", python);
    if (!b->log[0] || strstr(b->log, "libpython ") == b->log) b->log[0] = 0;   /* nothing to say */

    if (mkdir(cache, 0755) != 0 && errno != EEXIST)
        return dkb_fail(err, dkb_errno_code(errno), "cannot create %s: %s", cache, strerror(errno));
    if ((rc = dkb__copy_file(shim, b->so_path, err))) return rc;
    FILE *f = fopen(cfg, "w");
    if (!f) return dkb_fail(err, dkb_errno_code(errno), "cannot create %s: %s", cfg, strerror(errno));
    fprintf(f, "libpython %s\nprefix %s\nsource %s\nmode %s\nbackend cpu\ncache %s\n", lib, prefix, copy,
            mode == DKB_MODE_CORE ? "core" : "full", cache);
    if (sites[0]) fprintf(f, "site %s\n", sites);
    if (fclose(f) != 0) return dkb_fail(err, DKB_EIO, "cannot write %s", cfg);
    b->verdict = DKB_VERDICT_OK;
    b->detail[0] = 0;
    return 0;
}
