/* cuda_interpose.c: the __wrap_ functions every CUDA candidate calls instead
 * of the CUDA runtime's allocation, free, variable registration, kernel
 * attribute and device functions (link-time interposition, see
 * cuda_interpose.h), and the records the worker uses to start every call
 * from the same device state: deferred frees, leaks, registered variables
 * and changed kernel attributes. The dkb executable exports the __wrap_
 * symbols (CMakeLists.txt, cuda_interpose.dynlist) so that a candidate
 * loaded into it binds to them. */
#include <stdlib.h>
#include <string.h>

#include "harness/cuda_interpose.h"

#define DKB__NAME_STR(n) #n,
static const char *const WRAPPED[] = {DKB_CUDA_WRAPPED(DKB__NAME_STR)};
#undef DKB__NAME_STR

const char *const *dkb__cuda_wrapped_names(size_t *n) {
    *n = sizeof WRAPPED / sizeof WRAPPED[0];
    return WRAPPED;
}

bool dkb__cuda_is_wrapped(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof WRAPPED / sizeof WRAPPED[0]; i++)
        if (strlen(WRAPPED[i]) == len && !memcmp(WRAPPED[i], name, len)) return true;
    return false;
}

/* Linked into every executable that links dkb_core (CMakeLists.txt:
 * --undefined=dkb__cuda_interpose_anchor), so the wraps are there for any
 * candidate it loads. */
const int dkb__cuda_interpose_anchor = 1;

#ifdef DKB_HAVE_CUDA

#include <pthread.h>

#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))

/* What nvcc's host code calls to register a __device__/__constant__
 * variable (crt/host_runtime.h, C++ only). */
extern void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global);

enum { K_DEVICE = 1, K_POOL, K_HOST };   /* cudaMalloc*, stream-ordered, pinned host */

typedef struct block {
    void *p;
    size_t bytes;
    unsigned char kind, freed;
} block;

typedef struct func_rec {
    const void *f;
    struct cudaFuncAttributes init;   /* as they were before the first change in a call */
    unsigned dirty;                   /* 1 << cudaFuncAttribute changed; DIRTY_CACHE */
} func_rec;
#define DIRTY_CACHE (1u << 31)

static struct {
    pthread_mutex_t mu;
    int enabled, in_call, device;
    cudaStream_t stream;              /* the poisoning's own stream */
    size_t defer_max_dev;
    block *b;                         /* this call's blocks, live and freed */
    size_t nb, capb;
    size_t deferred_dev, deferred_host;
    dkb__cuda_var *vars;
    size_t nvars, capvars;
    int vars_lost;
    func_rec *funcs;
    size_t nfuncs, capfuncs;
    dkb__cuda_interpose_stats st;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need) nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p) return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* The record of block p (NULL: none); the most recent first, as most code
 * frees in reverse order of allocation. Under g.mu. */
static block *find_block(const void *p) {
    for (size_t i = g.nb; i-- > 0;)
        if (g.b[i].p == p) return &g.b[i];
    return NULL;
}

static int record_block(void *p, size_t bytes, int kind) {
    if (!p) return 0;
    if (grow((void **)&g.b, &g.capb, g.nb + 1, sizeof *g.b)) return -1;
    g.b[g.nb++] = (block){p, bytes, (unsigned char)kind, 0};
    g.st.allocs++;
    return 0;
}

/* Fill the blocks chosen by only_freed (freed ones, or all) with the
 * poison and free them for real, on stream st; the device must be idle.
 * Under g.mu. */
static cudaError_t poison_and_free(int only_freed, cudaStream_t st) {
    cudaError_t e = cudaSuccess;
    /* 1. poison: device memory on our stream, pinned host memory here */
    for (size_t i = 0; i < g.nb && e == cudaSuccess; i++) {
        block *k = &g.b[i];
        if ((only_freed && !k->freed) || !k->bytes) continue;
        int host = k->kind == K_HOST;
        void *hp = k->p;
        if (k->kind == K_POOL) {
            /* a pool may have a host location (cudaMemGetDefaultMemPool) */
            struct cudaPointerAttributes a;
            memset(&a, 0, sizeof a);
            if (cudaPointerGetAttributes(&a, k->p) == cudaSuccess && a.type == cudaMemoryTypeHost && a.hostPointer)
                host = 1, hp = a.hostPointer;
            else
                (void)cudaGetLastError();
        }
        if (host) memset(hp, DKB__CUDA_POISON, k->bytes);
        else e = cudaMemsetAsync(k->p, DKB__CUDA_POISON, k->bytes, st);
        g.st.blocks_poisoned++;
        g.st.bytes_poisoned += k->bytes;
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) return e; /* nothing freed unpoisoned; the records stay */
    /* 2. free for real; compact the records */
    size_t w = 0;
    for (size_t i = 0; i < g.nb; i++) {
        block *k = &g.b[i];
        if (only_freed && !k->freed) {
            g.b[w++] = *k;
            continue;
        }
        cudaError_t f = k->kind == K_HOST ? cudaFreeHost(k->p)
                        : k->kind == K_POOL ? cudaFreeAsync(k->p, st)
                                            : cudaFree(k->p);
        if (f != cudaSuccess) e = f;
    }
    g.nb = w;
    g.deferred_dev = g.deferred_host = 0;
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    return e;
}

/* Perform this call's deferred frees now (too many bytes deferred, or an
 * allocation failed): wait for the device, poison, free. A failure (e.g.
 * a stream capture in progress forbids the synchronisation) leaves them
 * deferred. Under g.mu. */
static void flush_in_call(void) {
    if (!g.deferred_dev && !g.deferred_host) return;
    if (cudaDeviceSynchronize() != cudaSuccess || poison_and_free(1, g.stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    g.st.in_call_flushes++;
}

/* ---- the worker's side ---- */

int dkb__cuda_interpose_enable(int device, dkb_error *err) {
    pthread_mutex_lock(&g.mu);
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e == cudaSuccess && !g.stream) e = cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
        g.enabled = 1;
        g.device = device;
        g.defer_max_dev = total_b / DKB__CUDA_DEFER_SHARE;
    }
    pthread_mutex_unlock(&g.mu);
    if (e != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "worker: CUDA interposition: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
}

bool dkb__cuda_interpose_enabled(void) { return g.enabled != 0; }

const dkb__cuda_var *dkb__cuda_interpose_vars(size_t *n, bool *lost) {
    *n = g.nvars;
    *lost = g.vars_lost != 0;
    return g.vars;
}

void dkb__cuda_interpose_call_begin(void) {
    pthread_mutex_lock(&g.mu);
    g.in_call = 1;
    pthread_mutex_unlock(&g.mu);
}

int dkb__cuda_interpose_call_end(void *stream, dkb_error *err) {
    pthread_mutex_lock(&g.mu);
    g.in_call = 0;
    cudaError_t e = g.nb ? cudaDeviceSynchronize() : cudaSuccess;
    if (e == cudaSuccess && g.nb) e = poison_and_free(0, stream ? (cudaStream_t)stream : g.stream);
    pthread_mutex_unlock(&g.mu);
    if (e != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "CUDA error %s (%s) while freeing what the call allocated", cudaGetErrorString(e),
                        cudaGetErrorName(e));
    return 0;
}

int dkb__cuda_interpose_funcs_restore(dkb_error *err) {
    static const enum cudaFuncAttribute CLUSTER[] = {
        cudaFuncAttributeRequiredClusterWidth, cudaFuncAttributeRequiredClusterHeight,
        cudaFuncAttributeRequiredClusterDepth, cudaFuncAttributeNonPortableClusterSizeAllowed,
        cudaFuncAttributeClusterSchedulingPolicyPreference};
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&g.mu);
    for (size_t i = 0; i < g.nfuncs && e == cudaSuccess; i++) {
        func_rec *r = &g.funcs[i];
        if (!r->dirty) continue;
        const struct cudaFuncAttributes *a = &r->init;
        if (r->dirty & (1u << cudaFuncAttributeMaxDynamicSharedMemorySize))
            e = cudaFuncSetAttribute(r->f, cudaFuncAttributeMaxDynamicSharedMemorySize, a->maxDynamicSharedSizeBytes);
        if (e == cudaSuccess && (r->dirty & (1u << cudaFuncAttributePreferredSharedMemoryCarveout)))
            e = cudaFuncSetAttribute(r->f, cudaFuncAttributePreferredSharedMemoryCarveout, a->preferredShmemCarveout);
        if (e == cudaSuccess && (r->dirty & DIRTY_CACHE)) e = cudaFuncSetCacheConfig(r->f, cudaFuncCachePreferNone);
        /* cluster settings: a few bits each; one fixed at compile time
         * cannot be set (cudaErrorNotPermitted), so failures are ignored */
        const int vals[] = {a->requiredClusterWidth, a->requiredClusterHeight, a->requiredClusterDepth,
                            a->nonPortableClusterSizeAllowed, a->clusterSchedulingPolicyPreference};
        for (size_t k = 0; e == cudaSuccess && k < sizeof CLUSTER / sizeof CLUSTER[0]; k++)
            if ((r->dirty & (1u << CLUSTER[k])) && cudaFuncSetAttribute(r->f, CLUSTER[k], vals[k]) != cudaSuccess)
                (void)cudaGetLastError();
        r->dirty = 0;
        g.st.funcs_restored++;
    }
    pthread_mutex_unlock(&g.mu);
    if (e != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "worker: restoring a kernel's attributes: %s (%s)", cudaGetErrorString(e),
                        cudaGetErrorName(e));
    return 0;
}

void dkb__cuda_interpose_get_stats(dkb__cuda_interpose_stats *st) {
    pthread_mutex_lock(&g.mu);
    *st = g.st;
    pthread_mutex_unlock(&g.mu);
}

/* ---- the wraps ---- */

/* An allocation is allowed now (not enabled, or inside a call). */
static int may_allocate(void) {
    if (!g.enabled || g.in_call) return 1;
    g.st.allocs_refused++;
    return 0;
}

/* After a failed allocation: perform the deferred frees and say whether to
 * try again (the error the failure left is cleared then). Under g.mu. */
static int retry_after_flush(cudaError_t e) {
    if (e != cudaErrorMemoryAllocation || !g.enabled || (!g.deferred_dev && !g.deferred_host)) return 0;
    flush_in_call();
    (void)cudaGetLastError();
    return 1;
}

/* Record a successful allocation; an allocation that cannot be recorded
 * (the records are out of host memory) is undone. Under g.mu. */
static cudaError_t keep(cudaError_t e, void *p, size_t bytes, int kind) {
    if (e != cudaSuccess || !g.enabled || !p) return e;
    if (record_block(p, bytes, kind) == 0) return cudaSuccess;
    if (kind == K_HOST) cudaFreeHost(p);
    else cudaFree(p); /* also frees a stream-ordered allocation */
    return cudaErrorMemoryAllocation;
}

/* A stream-ordered allocation on a stream being captured would become a
 * graph memory node, outside these records. */
static int capturing(cudaStream_t s) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return cs != cudaStreamCaptureStatusNone;
}

EXPORT cudaError_t __wrap_cudaMalloc(void **p, size_t size);
EXPORT cudaError_t __wrap_cudaMalloc(void **p, size_t size) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (may_allocate()) {
        e = cudaMalloc(p, size);
        if (retry_after_flush(e)) e = cudaMalloc(p, size);
        e = keep(e, p ? *p : NULL, size, K_DEVICE);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
EXPORT cudaError_t __wrap_cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (may_allocate()) {
        e = cudaMallocPitch(p, pitch, width, height);
        if (retry_after_flush(e)) e = cudaMallocPitch(p, pitch, width, height);
        e = keep(e, p ? *p : NULL, e == cudaSuccess ? *pitch * height : 0, K_DEVICE);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent ext);
EXPORT cudaError_t __wrap_cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent ext) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (may_allocate()) {
        e = cudaMalloc3D(pp, ext);
        if (retry_after_flush(e)) e = cudaMalloc3D(pp, ext);
        e = keep(e, pp ? pp->ptr : NULL, e == cudaSuccess ? pp->pitch * ext.height * (ext.depth ? ext.depth : 1) : 0,
                 K_DEVICE);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaMallocAsync(void **p, size_t size, cudaStream_t s);
EXPORT cudaError_t __wrap_cudaMallocAsync(void **p, size_t size, cudaStream_t s) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (g.enabled && capturing(s)) e = cudaErrorStreamCaptureUnsupported;
    else if (may_allocate()) {
        e = cudaMallocAsync(p, size, s);
        if (retry_after_flush(e)) e = cudaMallocAsync(p, size, s);
        e = keep(e, p ? *p : NULL, size, K_POOL);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s);
EXPORT cudaError_t __wrap_cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (g.enabled && capturing(s)) e = cudaErrorStreamCaptureUnsupported;
    else if (may_allocate()) {
        e = cudaMallocFromPoolAsync(p, size, pool, s);
        if (retry_after_flush(e)) e = cudaMallocFromPoolAsync(p, size, pool, s);
        e = keep(e, p ? *p : NULL, size, K_POOL);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaMallocHost(void **p, size_t size);
EXPORT cudaError_t __wrap_cudaMallocHost(void **p, size_t size) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (may_allocate()) {
        e = cudaMallocHost(p, size);
        if (retry_after_flush(e)) e = cudaMallocHost(p, size);
        e = keep(e, p ? *p : NULL, size, K_HOST);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaHostAlloc(void **p, size_t size, unsigned int flags);
EXPORT cudaError_t __wrap_cudaHostAlloc(void **p, size_t size, unsigned int flags) {
    pthread_mutex_lock(&g.mu);
    cudaError_t e = cudaErrorNotPermitted;
    if (may_allocate()) {
        e = cudaHostAlloc(p, size, flags);
        if (retry_after_flush(e)) e = cudaHostAlloc(p, size, flags);
        e = keep(e, p ? *p : NULL, size, K_HOST);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

/* A free: deferred when p is one of this call's blocks of a matching kind
 * (host: pinned blocks only, device: the others), refused otherwise (not
 * the candidate's: the harness's memory, or freed already); performed at
 * once when not enabled. Stream-ordered frees need no stream here: the
 * block stays allocated until the device is idle after the call. */
static cudaError_t defer_free(void *p, int host) {
    block *k = find_block(p);
    if (!k || k->freed || (k->kind == K_HOST) != host) {
        g.st.frees_refused++;
        return cudaErrorInvalidValue;
    }
    k->freed = 1;
    g.st.frees_deferred++;
    if (host) g.deferred_host += k->bytes;
    else g.deferred_dev += k->bytes;
    if (g.in_call && (g.deferred_dev > g.defer_max_dev || g.deferred_host > DKB__CUDA_DEFER_HOST)) flush_in_call();
    return cudaSuccess;
}

EXPORT cudaError_t __wrap_cudaFree(void *p);
EXPORT cudaError_t __wrap_cudaFree(void *p) {
    if (!g.enabled || !p) return cudaFree(p); /* cudaFree(NULL): context set-up, as ever */
    pthread_mutex_lock(&g.mu);
    cudaError_t e = defer_free(p, 0);
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaFreeAsync(void *p, cudaStream_t s);
EXPORT cudaError_t __wrap_cudaFreeAsync(void *p, cudaStream_t s) {
    if (!g.enabled || !p) return cudaFreeAsync(p, s);
    pthread_mutex_lock(&g.mu);
    cudaError_t e = defer_free(p, 0);
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaFreeHost(void *p);
EXPORT cudaError_t __wrap_cudaFreeHost(void *p) {
    if (!g.enabled || !p) return cudaFreeHost(p);
    pthread_mutex_lock(&g.mu);
    cudaError_t e = defer_free(p, 1);
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT void __wrap___cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                                     size_t size, int constant, int global);
EXPORT void __wrap___cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                                     size_t size, int constant, int global) {
    __cudaRegisterVar(h, hostVar, deviceAddress, deviceName, ext, size, constant, global);
    if (!g.enabled) return;
    pthread_mutex_lock(&g.mu);
    /* out of memory: the variable goes unrecorded, so unrestored; the
     * worker refuses to run the candidate then (vars_lost) */
    if (grow((void **)&g.vars, &g.capvars, g.nvars + 1, sizeof *g.vars) == 0)
        g.vars[g.nvars++] = (dkb__cuda_var){hostVar, size, constant, deviceName};
    else
        g.vars_lost = 1;
    pthread_mutex_unlock(&g.mu);
}

/* The record of kernel f, made (with its present attributes) if needed;
 * NULL when they cannot be read or kept. Under g.mu. */
static func_rec *func_touch(const void *f) {
    for (size_t i = 0; i < g.nfuncs; i++)
        if (g.funcs[i].f == f) return &g.funcs[i];
    if (grow((void **)&g.funcs, &g.capfuncs, g.nfuncs + 1, sizeof *g.funcs)) return NULL;
    func_rec *r = &g.funcs[g.nfuncs];
    memset(r, 0, sizeof *r);
    r->f = f;
    if (cudaFuncGetAttributes(&r->init, f) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    g.nfuncs++;
    return r;
}

/* A change of kernel attributes made during a call is undone before the
 * next call; one made at load (a constructor) belongs to the initial state. */
EXPORT cudaError_t __wrap_cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute attr, int value);
EXPORT cudaError_t __wrap_cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute attr, int value) {
    if (!g.enabled || !g.in_call) return cudaFuncSetAttribute(f, attr, value);
    pthread_mutex_lock(&g.mu);
    func_rec *r = func_touch(f);
    cudaError_t e = cudaErrorInvalidDeviceFunction;
    if (r && (unsigned)attr < 31) {
        r->dirty |= 1u << attr;
        e = cudaFuncSetAttribute(f, attr, value);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

EXPORT cudaError_t __wrap_cudaFuncSetCacheConfig(const void *f, enum cudaFuncCache c);
EXPORT cudaError_t __wrap_cudaFuncSetCacheConfig(const void *f, enum cudaFuncCache c) {
    if (!g.enabled || !g.in_call) return cudaFuncSetCacheConfig(f, c);
    pthread_mutex_lock(&g.mu);
    func_rec *r = func_touch(f);
    cudaError_t e = cudaErrorInvalidDeviceFunction;
    if (r) {
        r->dirty |= DIRTY_CACHE;
        e = cudaFuncSetCacheConfig(f, c);
    }
    pthread_mutex_unlock(&g.mu);
    return e;
}

/* CUB and Thrust make sure of the current device (cudaSetDevice to the
 * device they found current); switching to another device is refused. */
EXPORT cudaError_t __wrap_cudaSetDevice(int device);
EXPORT cudaError_t __wrap_cudaSetDevice(int device) {
    if (g.enabled && device != g.device) return cudaErrorInvalidDevice;
    return cudaSetDevice(device);
}

#else /* no CUDA: the names only */

int dkb__cuda_interpose_enable(int device, dkb_error *err) {
    (void)device;
    return dkb_fail(err, DKB_EINVAL, "this dkb was built without CUDA");
}
bool dkb__cuda_interpose_enabled(void) { return false; }
const dkb__cuda_var *dkb__cuda_interpose_vars(size_t *n, bool *lost) {
    *n = 0;
    *lost = false;
    return NULL;
}
void dkb__cuda_interpose_call_begin(void) {}
int dkb__cuda_interpose_call_end(void *stream, dkb_error *err) {
    (void)stream, (void)err;
    return 0;
}
int dkb__cuda_interpose_funcs_restore(dkb_error *err) {
    (void)err;
    return 0;
}
void dkb__cuda_interpose_get_stats(dkb__cuda_interpose_stats *st) { memset(st, 0, sizeof *st); }

#endif
