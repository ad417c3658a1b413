/* py_shim.c: the shared object the worker loads for a Python candidate
 * (qNN.full.py / qNN.core.py; docs/harness.md "Python candidates"). To the
 * unchanged worker (worker.c) it is a candidate like any other: it defines
 * dkb_candidate_full and dkb_candidate_core, so every check, the poisoning,
 * the fault ranges, the pristine state, the system call filter and the
 * interleaved timing apply as to C candidates. Behind those entry points it
 * embeds CPython:
 *   - its constructor (run by the worker's dlopen, before the system call
 *     filter and before any candidate code) reads <base>.pycfg beside this
 *     file (written by the build step, py_build.c), dlopens the shared
 *     libpython named there (RTLD_GLOBAL: extension modules link against
 *     it), starts the interpreter without its signal handlers, runs the
 *     bridge (py_bridge.py, embedded) as module dkb_bridge and calls its
 *     init(): the allowed libraries imported, torch primed, the audit hook
 *     installed, the candidate's source compiled (not run);
 *   - each entry point calls dkb_bridge.call() (the candidate module run
 *     afresh, its entry function called over zero-copy tensors), and
 *     returns its status (PY_RC_*: 100 raised, 101 forbidden, 102 bad
 *     answer, 103 the bridge failed).
 * The interpreter is reached only through a handful of stable-ABI
 * functions looked up with dlsym, so the build needs no Python headers.
 * The worker restores this object's writable segments before every call:
 * everything here is set in the constructor and never changed afterwards
 * (the bridge keeps its state in Python objects). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dkb/candidate.h"
#include "py_bridge_src.h"   // defines: dkb__py_bridge_src (py_bridge.py as a C string)

#define PY_RC_BRIDGE 103

typedef struct _object PyObject;

/* the interpreter's functions (stable ABI) */
typedef struct py_api {
    void (*Py_InitializeEx)(int);
    PyObject *(*Py_CompileString)(const char *, const char *, int);
    PyObject *(*PyImport_ExecCodeModule)(const char *, PyObject *);
    PyObject *(*PyObject_GetAttrString)(PyObject *, const char *);
    PyObject *(*PyObject_CallObject)(PyObject *, PyObject *);
    PyObject *(*Py_BuildValue)(const char *, ...);
    long (*PyLong_AsLong)(PyObject *);
    PyObject *(*PyErr_Occurred)(void);
    void (*PyErr_Print)(void);
    void (*Py_DecRef)(PyObject *);
    const char *(*PyUnicode_AsUTF8AndSize)(PyObject *, long *);
} py_api;

static py_api g_py;
static PyObject *g_call;       /* dkb_bridge.call */
static PyObject *g_after;      /* dkb_bridge.after_call */
static int g_ready;            /* 1 when init() succeeded */
static char g_why[512];        /* why not, when not */

enum { PY_FILE_INPUT = 257 };  /* Py_file_input */

/* Say why the bridge is not ready on stderr (the harness reads this line). */
static void say(const char *msg) {
    char line[700];
    int n = snprintf(line, sizeof line, "dkb-python: bridge: %s\n", msg);
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) return;
}

static int load_api(const char *libpython) {
    void *h = dlopen(libpython, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(g_why, sizeof g_why, "cannot load %.200s: %.200s", libpython, dlerror());
        return -1;
    }
#define SYM(name)                                                                        \
    do {                                                                                 \
        *(void **)&g_py.name = dlsym(h, #name);                                          \
        if (!g_py.name) {                                                                \
            snprintf(g_why, sizeof g_why, "%.300s does not define %s", libpython, #name);    \
            return -1;                                                                   \
        }                                                                                \
    } while (0)
    SYM(Py_InitializeEx);
    SYM(Py_CompileString);
    SYM(PyImport_ExecCodeModule);
    SYM(PyObject_GetAttrString);
    SYM(PyObject_CallObject);
    SYM(Py_BuildValue);
    SYM(PyLong_AsLong);
    SYM(PyErr_Occurred);
    SYM(PyErr_Print);
    SYM(Py_DecRef);
    SYM(PyUnicode_AsUTF8AndSize);
#undef SYM
    return 0;
}

/* A config line "key value" of the build step's <base>.pycfg. */
static int cfg_get(const char *text, const char *key, char *out, size_t n) {
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (!strncmp(p, key, kl) && p[kl] == ' ') {
            const char *v = p + kl + 1, *e = strchr(v, '\n');
            size_t len = e ? (size_t)(e - v) : strlen(v);
            if (len >= n) return -1;
            memcpy(out, v, len);
            out[len] = 0;
            return 0;
        }
    }
    return -1;
}

static int read_cfg(char *text, size_t n) {
    Dl_info info;
    if (!dladdr((void *)&read_cfg, &info) || !info.dli_fname) {
        snprintf(g_why, sizeof g_why, "cannot find the shim's own path");
        return -1;
    }
    char path[4096];
    size_t len = strlen(info.dli_fname);
    if (len < 3 || len + 3 >= sizeof path || strcmp(info.dli_fname + len - 3, ".so")) {
        snprintf(g_why, sizeof g_why, "unexpected shim path %.400s", info.dli_fname);
        return -1;
    }
    snprintf(path, sizeof path, "%.*s.pycfg", (int)(len - 3), info.dli_fname);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(g_why, sizeof g_why, "cannot read %.400s", path);
        return -1;
    }
    size_t got = fread(text, 1, n - 1, f);
    fclose(f);
    text[got] = 0;
    return 0;
}

__attribute__((constructor)) static void shim_init(void) {
    char cfg[16384], lib[4096], prefix[4096], src[4096], mode[16], backend[16], cache[4096], sites[8192];
    if (read_cfg(cfg, sizeof cfg)) return;
    if (cfg_get(cfg, "libpython", lib, sizeof lib) || cfg_get(cfg, "prefix", prefix, sizeof prefix) ||
        cfg_get(cfg, "source", src, sizeof src) || cfg_get(cfg, "mode", mode, sizeof mode) ||
        cfg_get(cfg, "backend", backend, sizeof backend) || cfg_get(cfg, "cache", cache, sizeof cache)) {
        snprintf(g_why, sizeof g_why, "incomplete bridge configuration");
        return;
    }
    /* a virtual environment's site-packages (optional) */
    if (cfg_get(cfg, "site", sites, sizeof sites)) sites[0] = 0;
    /* the worker says which backend it runs (CUDA: the columns are on the
     * device); the build step does not know */
    const char *wb = getenv("DKB_PY_BACKEND");
    if (wb && (!strcmp(wb, "cpu") || !strcmp(wb, "cuda"))) snprintf(backend, sizeof backend, "%s", wb);
    /* the interpreter's environment: its own prefix, no user site, no
     * bytecode files, every cache (Triton's, torch's) inside the row's work
     * directory */
    setenv("PYTHONHOME", prefix, 1);
    setenv("PYTHONNOUSERSITE", "1", 1);
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    unsetenv("PYTHONPATH");
    unsetenv("PYTHONSTARTUP");
    unsetenv("PYTHONSAFEPATH");
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/triton", cache);
    setenv("TRITON_CACHE_DIR", sub, 1);
    snprintf(sub, sizeof sub, "%s/torch", cache);
    setenv("TORCH_HOME", sub, 1);
    setenv("TORCHINDUCTOR_CACHE_DIR", sub, 1);
    setenv("XDG_CACHE_HOME", cache, 1);
    setenv("HOME", cache, 1);
    /* Triton's compiler writes its temporary files (ptxas's input and
     * output, the launcher's build) under TMPDIR: inside the cache too */
    snprintf(sub, sizeof sub, "%s/tmp", cache);
    (void)mkdir(sub, 0700);
    setenv("TMPDIR", sub, 1);
    if (load_api(lib)) return;
    g_py.Py_InitializeEx(0);   /* 0: no signal handlers (the worker's stay) */
    PyObject *code = g_py.Py_CompileString(dkb__py_bridge_src, "py_bridge.py", PY_FILE_INPUT);
    PyObject *mod = code ? g_py.PyImport_ExecCodeModule("dkb_bridge", code) : NULL;
    if (code) g_py.Py_DecRef(code);
    PyObject *init = mod ? g_py.PyObject_GetAttrString(mod, "init") : NULL;
    g_call = mod ? g_py.PyObject_GetAttrString(mod, "call") : NULL;
    g_after = mod ? g_py.PyObject_GetAttrString(mod, "after_call") : NULL;
    if (!init || !g_call || !g_after) {
        if (g_py.PyErr_Occurred()) g_py.PyErr_Print();
        snprintf(g_why, sizeof g_why, "cannot start the bridge module");
        return;
    }
    int (*max_threads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    int threads = max_threads ? max_threads() : 1;
    PyObject *args = g_py.Py_BuildValue("(sssis)", src, mode, backend, threads, sites);
    PyObject *r = args ? g_py.PyObject_CallObject(init, args) : NULL;
    if (args) g_py.Py_DecRef(args);
    g_py.Py_DecRef(init);
    long rc = r ? g_py.PyLong_AsLong(r) : -1;
    if (r) g_py.Py_DecRef(r);
    if (!r || g_py.PyErr_Occurred()) {
        g_py.PyErr_Print();
        snprintf(g_why, sizeof g_why, "the bridge's init() failed");
        return;
    }
    if (rc != 0) {
        /* the bridge's own words (dkb_bridge.init_error), for every call's line */
        PyObject *why = g_py.PyObject_GetAttrString(mod, "init_error");
        const char *text = why ? g_py.PyUnicode_AsUTF8AndSize(why, NULL) : NULL;
        if (text && *text) snprintf(g_why, sizeof g_why, "%s", text);
        else snprintf(g_why, sizeof g_why, "the bridge's init() returned %ld", rc);
        if (why) g_py.Py_DecRef(why);
        if (g_py.PyErr_Occurred()) g_py.PyErr_Print();
        return;
    }
    g_ready = 1;
}

/* dkb_bridge.call(mode, a, b, c, d): its status, PY_RC_BRIDGE when the
 * bridge is not there or Python itself failed. */
static int bridge_call(const char *mode, const void *a, const void *b, const void *c, const void *d) {
    if (!g_ready) {
        say(g_why[0] ? g_why : "not initialised");
        return PY_RC_BRIDGE;
    }
    PyObject *args = g_py.Py_BuildValue("(sKKKK)", mode, (unsigned long long)(uintptr_t)a,
                                        (unsigned long long)(uintptr_t)b, (unsigned long long)(uintptr_t)c,
                                        (unsigned long long)(uintptr_t)d);
    PyObject *r = args ? g_py.PyObject_CallObject(g_call, args) : NULL;
    if (args) g_py.Py_DecRef(args);
    if (!r) {
        g_py.PyErr_Print();
        say("dkb_bridge.call raised");
        return PY_RC_BRIDGE;
    }
    long rc = g_py.PyLong_AsLong(r);
    g_py.Py_DecRef(r);
    if (rc == -1 && g_py.PyErr_Occurred()) {
        g_py.PyErr_Print();
        return PY_RC_BRIDGE;
    }
    return (int)rc;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    return bridge_call("full", db, p, res, env);
}

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    return bridge_call("core", in, out, NULL, env);
}

/* After each call, outside its timed window, the device idle (worker.c
 * calls it when the shim exports it): the bridge's after_call(), which
 * poisons what torch's CUDA allocator holds free. 0, or PY_RC_BRIDGE. */
int dkb_shim_after_call(void) {
    if (!g_ready) return 0;
    PyObject *r = g_py.PyObject_CallObject(g_after, NULL);
    if (!r) {
        g_py.PyErr_Print();
        say("dkb_bridge.after_call raised");
        return PY_RC_BRIDGE;
    }
    long rc = g_py.PyLong_AsLong(r);
    g_py.Py_DecRef(r);
    return rc == 0 ? 0 : PY_RC_BRIDGE;
}
