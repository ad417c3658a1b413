/* comm.c: the communicator's entry points (comm.h): choosing and loading
 * an implementation (single here; mpi and nccl from their modules, opened
 * with dlopen beside dkb), the collectives' wrappers, and the helpers built
 * on them (variable-length gathers, agreeing on an outcome, shares). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"     // defines: dkb__self_exe
#include "dist/comm.h"
#include "dist/comm_module.h"  // defines: the modules' symbols

/* ---- loading a module ---- */

/* The launcher's rank variable that says this process was started by
 * mpirun (or another MPI launcher), or NULL. */
static const char *launched_by(void) {
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return vars[i];
    return NULL;
}

#if defined(DKB_HAVE_MPI) || defined(DKB_HAVE_NCCL)
/* path := $env, else NAME beside the running dkb. */
static int module_path(const char *env, const char *name, char *path, size_t n) {
    const char *e = getenv(env);
    if (e && *e) return (size_t)snprintf(path, n, "%s", e) < n ? 0 : -1;
    char exe[4096];
    if (dkb__self_exe(exe, sizeof exe)) return -1;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    return (size_t)snprintf(path, n, "%s/%s", exe, name) < n ? 0 : -1;
}

/* dlopen the module (RTLD_GLOBAL: Open MPI's own plugins resolve libmpi's
 * symbols through the global scope) and look up `entry`. */
static int module_load(const char *env, const char *name, const char *entry, void **fn, dkb_error *err) {
    char path[4096];
    if (module_path(env, name, path, sizeof path))
        return dkb_fail(err, DKB_ENOENT, "%s: cannot tell where dkb is (set %s)", name, env);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) return dkb_fail(err, DKB_ENOENT, "%s", dlerror());
    const int *abi = dlsym(h, DKB__COMM_MODULE_ABI_SYMBOL);
    if (!abi || *abi != DKB__COMM_MODULE_ABI)
        return dkb_fail(err, DKB_EVERSION, "%s: communicator module ABI %d, this dkb needs %d (rebuild both)", path,
                        abi ? *abi : -1, DKB__COMM_MODULE_ABI);
    *fn = dlsym(h, entry);
    if (!*fn) return dkb_fail(err, DKB_ENOENT, "%s: no %s", path, entry);
    return 0; /* never dlclose'd: MPI and NCCL keep threads and handlers */
}
#endif

/* The first of vars[0..n) that holds a whole number in [lo, 2^24], or -1. */
static int env_int(const char *const *vars, int n, long lo) {
    for (int i = 0; i < n; i++) {
        const char *v = getenv(vars[i]);
        char *end = NULL;
        long x = v ? strtol(v, &end, 10) : 0;
        if (v && end != v && !*end && x >= lo && x <= 1 << 24) return (int)x;
    }
    return -1;
}

int dkb__comm_launched_size(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    if (!launched_by()) return 1;
    int n = env_int(vars, 2, 1);
    return n < 0 ? 0 : n;
}

int dkb__comm_launched_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    int r = launched_by() ? env_int(vars, 3, 0) : 0;
    return r < 0 ? 0 : r;
}

int dkb__comm_open(dkb__comm **out, dkb_error *err) {
    *out = NULL;
    const char *var = launched_by();
    if (!var) return dkb__comm_open_single(out, err);
#ifndef DKB_HAVE_MPI
    return dkb_fail(err, DKB_ENOENT,
                    "started by mpirun ($%s is set) but this dkb was built without MPI (install libopenmpi-dev and "
                    "rebuild; docs/distributed.md)", var);
#else
    void *fn = NULL;
    int rc = module_load("DKB_COMM_MPI", "dkb_comm_mpi.so", DKB__COMM_MPI_OPEN_SYMBOL, &fn, err);
    if (rc) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err && err->msg[0] ? err->msg : dkb_strerror(rc));
        return dkb_fail(err, rc, "started by mpirun ($%s is set) but the MPI communicator cannot be loaded: %s", var,
                        msg);
    }
    dkb__comm_mpi_open_fn open_mpi;
    memcpy(&open_mpi, &fn, sizeof fn);
    return open_mpi(out, err);
#endif
}

#ifdef DKB_HAVE_NCCL
static void *nccl_open_fn; /* the module's entry, once loaded */
#endif

int dkb__comm_nccl_load(dkb_error *err) {
#ifndef DKB_HAVE_NCCL
    return dkb_fail(err, DKB_ENOENT,
                    "this dkb was built without NCCL (it needs CUDA and nccl.h at build time; docs/distributed.md)");
#else
    if (nccl_open_fn) return 0;
    return module_load("DKB_COMM_NCCL", "dkb_comm_nccl.so", DKB__COMM_NCCL_OPEN_SYMBOL, &nccl_open_fn, err);
#endif
}

int dkb__comm_open_nccl(dkb__comm *boot, int device, dkb__comm **out, dkb_error *err) {
    *out = NULL;
    int rc = dkb__comm_nccl_load(err);
    if (rc) return rc;
#ifndef DKB_HAVE_NCCL
    (void)boot, (void)device;
    return DKB_ENOENT;
#else
    dkb__comm_nccl_open_fn open_nccl;
    memcpy(&open_nccl, &nccl_open_fn, sizeof nccl_open_fn);
    return open_nccl(boot, device, out, err);
#endif
}

void dkb__comm_close(dkb__comm *c) {
    if (c) c->ops->close(c);
}

/* ---- the collectives ---- */

int dkb__comm_barrier(dkb__comm *c, dkb_error *err) { return c->ops->barrier(c, err); }

int dkb__comm_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    if (root < 0 || root >= c->size) return dkb_fail(err, DKB_EINVAL, "broadcast: root %d of %d ranks", root, c->size);
    return c->ops->bcast(c, buf, bytes, root, err);
}

int dkb__comm_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                        dkb_error *err) {
    return c->ops->allreduce(c, buf, count, dtype, op, err);
}

int dkb__comm_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    return c->ops->allgather_sizes(c, mine, all, err);
}

int dkb__comm_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                         dkb_error *err) {
    if (counts[c->rank] != bytes)
        return dkb_fail(err, DKB_EINVAL, "allgatherv: rank %d sends %lld bytes, counts say %lld", c->rank,
                        (long long)bytes, (long long)counts[c->rank]);
    return c->ops->allgatherv(c, send, bytes, recv, counts, err);
}

int dkb__comm_iallgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                          void **req, dkb_error *err) {
    *req = NULL;
    if (!c->ops->iallgatherv || !c->ops->test)
        return dkb_fail(err, DKB_EINVAL, "the %s communicator has no non-blocking all-gather", c->ops->name);
    int64_t total = 0;
    for (int r = 0; r < c->size; r++) total += counts[r];
    if (counts[c->rank] != bytes || total < 0 || total >= (int64_t)1 << 30)
        return dkb_fail(err, DKB_EINVAL, "iallgatherv: rank %d sends %lld bytes of %lld (at most 2^30 in all)", c->rank,
                        (long long)bytes, (long long)total);
    return c->ops->iallgatherv(c, send, bytes, recv, counts, req, err);
}

int dkb__comm_test(dkb__comm *c, void *req, int *done, dkb_error *err) {
    if (!req) {
        *done = 1;
        return 0;
    }
    return c->ops->test(c, req, done, err);
}

_Noreturn void dkb__comm_abort(dkb__comm *c, int code) {
    c->ops->abort(c, code);
    exit(code); /* an implementation's abort that returned */
}

/* ---- helpers ---- */

int dkb__comm_allgather_bytes(dkb__comm *c, const void *mine, int64_t bytes, unsigned char **all, int64_t *lens,
                              dkb_error *err) {
    *all = NULL;
    int rc = dkb__comm_allgather_sizes(c, bytes, lens, err);
    if (rc) return rc;
    int64_t total = 0;
    for (int r = 0; r < c->size; r++) {
        if (lens[r] < 0 || lens[r] > INT64_MAX / 2 - total)
            return dkb_fail(err, DKB_ERANGE, "allgather: rank %d sends %lld bytes", r, (long long)lens[r]);
        total += lens[r];
    }
    unsigned char *buf = malloc((size_t)total + 1);
    /* every rank takes part in the gather even when its buffer failed:
     * a rank that left now would leave the others waiting */
    int bad = !buf;
    int64_t flag = bad;
    if ((rc = dkb__comm_allreduce(c, &flag, 1, DKB__COMM_I64, DKB__COMM_MAX, err))) {
        free(buf);
        return rc;
    }
    if (flag) {
        free(buf);
        return dkb_fail(err, DKB_ENOMEM, "allgather of %lld bytes: out of memory on %s", (long long)total,
                        bad ? "this rank" : "another rank");
    }
    if ((rc = dkb__comm_allgatherv(c, mine, bytes, buf, lens, err))) {
        free(buf);
        return rc;
    }
    *all = buf;
    return 0;
}

/* The record a rank contributes to dkb__comm_agree. */
typedef struct agree_rec {
    int32_t rc;
    char msg[sizeof ((dkb_error *)0)->msg];
} agree_rec;

int dkb__comm_agree(dkb__comm *c, int rc, dkb_error *err) {
    if (c->size == 1) return rc;
    agree_rec mine;
    memset(&mine, 0, sizeof mine);
    mine.rc = rc;
    if (rc) snprintf(mine.msg, sizeof mine.msg, "%s", err && err->msg[0] ? err->msg : dkb_strerror(rc));
    agree_rec *all = calloc((size_t)c->size, sizeof *all);
    int64_t *lens = calloc((size_t)c->size, sizeof *lens);
    dkb_error cerr = {0};
    int crc = !all || !lens ? dkb_fail(&cerr, DKB_ENOMEM, "agree: out of memory") : 0;
    /* the counts are known (one record each): no size exchange needed */
    for (int r = 0; lens && r < c->size; r++) lens[r] = (int64_t)sizeof mine;
    if (!crc) crc = dkb__comm_allgatherv(c, &mine, (int64_t)sizeof mine, all, lens, &cerr);
    int out = 0;
    if (crc) {
        out = dkb_fail(err, crc, "%s", cerr.msg);
    } else {
        int first = -1, alike = 1;
        for (int r = 0; r < c->size; r++) {
            all[r].msg[sizeof all[r].msg - 1] = 0;
            if (all[r].rc && first < 0) first = r;
            alike = alike && all[r].rc && !strcmp(all[r].msg, all[0].msg);
        }
        if (first >= 0 && alike) out = dkb_fail(err, all[first].rc, "%s", all[first].msg);
        else if (first >= 0) out = dkb_fail(err, all[first].rc, "rank %d: %s", first, all[first].msg);
    }
    free(all);
    free(lens);
    return out;
}

void dkb__comm_share(const dkb__comm *c, int n, int *lo, int *hi) {
    *lo = (int)((int64_t)n * c->rank / c->size);
    *hi = (int)((int64_t)n * (c->rank + 1) / c->size);
}
