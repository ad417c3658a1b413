/* cuda_interpose.h: link-time interposition of the CUDA runtime calls of a
 * CUDA candidate, so that no device state survives from one candidate call
 * to the next (docs/harness.md, "CUDA candidates").
 *
 * The harness links every CUDA candidate itself (build.c) with
 * `-Xlinker --wrap=SYM` for each name of DKB_CUDA_WRAPPED below: the
 * candidate's calls to SYM become calls to __wrap_SYM, which the dkb
 * executable defines and exports (cuda_interpose.c; CMakeLists.txt exports
 * __wrap_* and nothing else). A candidate could reach the real SYM only
 * through a reference to __real_SYM, which imports SYM itself: the import
 * check refuses that (symbols.c, forbidden_symbol).
 *
 * Each wrap forwards to the real runtime function. Once the worker has
 * called dkb__cuda_interpose_enable (before it loads the candidate) they
 * also record what the candidate does:
 *   - allocations (cudaMalloc, cudaMallocPitch, cudaMalloc3D,
 *     cudaMallocAsync, cudaMallocFromPoolAsync, cudaMallocHost,
 *     cudaHostAlloc) are allowed only during a call, and are recorded;
 *   - frees (cudaFree, cudaFreeAsync, cudaFreeHost) of a recorded block are
 *     deferred: recorded, not performed; a free of anything else (the
 *     harness's own memory) is refused with cudaErrorInvalidValue;
 *   - at the end of the call (dkb__cuda_interpose_call_end, device idle,
 *     outside the timed region) every recorded block, freed or leaked, is
 *     poisoned and really freed, so nothing a later call allocates (from
 *     the default pool, from cudaMalloc or pinned) holds this call's data;
 *   - when the deferred frees of one call pass DKB__CUDA_DEFER_SHARE of
 *     the device's memory (pinned host memory: DKB__CUDA_DEFER_HOST), or an
 *     allocation fails for lack of memory while frees are deferred, they
 *     are performed in the call (device synchronised, poisoned, freed):
 *     the candidate pays for that, and honest alloc/free loops never run
 *     out of memory because of the deferral;
 *   - stream-ordered allocation in a stream that is being captured is
 *     refused (cudaErrorStreamCaptureUnsupported): it would become a graph
 *     memory node, memory outside these records;
 *   - __cudaRegisterVar: every __device__/__constant__ variable of the
 *     candidate's module (host shadow, size, constant flag), restored to
 *     its initial device image before every call (worker_cuda.c);
 *   - cudaFuncSetAttribute, cudaFuncSetCacheConfig: the first time a
 *     kernel's attributes change, its initial attributes are kept; before
 *     every call the changed ones are put back (dkb__cuda_interpose_funcs_restore);
 *   - cudaSetDevice: only the worker's device (the CUB/Thrust headers call it
 *     to make sure of the current device).
 * Without dkb__cuda_interpose_enable (a unit test that dlopens a candidate,
 * `dkb run`) every wrap only forwards.
 *
 * Not thread-safe against concurrent enable/call_begin/call_end; the wraps
 * themselves may be called from any thread (a mutex guards the records). */
#ifndef DKB_HARNESS_CUDA_INTERPOSE_H
#define DKB_HARNESS_CUDA_INTERPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA runtime functions the harness wraps in every CUDA candidate
 * (X(name)): build.c passes --wrap=name for each, symbols.c allows
 * __wrap_name and refuses name itself. */
#define DKB_CUDA_WRAPPED(X)                                                                          \
    X(__cudaRegisterVar) X(cudaMalloc) X(cudaMallocPitch) X(cudaMalloc3D) X(cudaMallocAsync)         \
    X(cudaMallocFromPoolAsync) X(cudaMallocHost) X(cudaHostAlloc) X(cudaFree) X(cudaFreeAsync)       \
    X(cudaFreeHost) X(cudaFuncSetAttribute) X(cudaFuncSetCacheConfig) X(cudaSetDevice)

/* The names of DKB_CUDA_WRAPPED, *n of them. */
const char *const *dkb__cuda_wrapped_names(size_t *n);
/* Is name[0..len) one of them? */
bool dkb__cuda_is_wrapped(const char *name, size_t len);

/* Deferred frees of one call above this share of the device's memory
 * (1/DKB__CUDA_DEFER_SHARE), or above DKB__CUDA_DEFER_HOST bytes of pinned
 * host memory, are performed in the call. */
#define DKB__CUDA_DEFER_SHARE 8
#define DKB__CUDA_DEFER_HOST ((size_t)1 << 30)
/* The byte every freed or leaked block is filled with before its real free. */
#define DKB__CUDA_POISON 0xA5

/* A registered variable of the candidate's module (__cudaRegisterVar). */
typedef struct dkb__cuda_var {
    const void *host;          /* the host shadow: the symbol for cudaGetSymbolAddress */
    size_t size;
    int constant;              /* __constant__ */
    const char *name;          /* the device name (the module's string) */
} dkb__cuda_var;

/* What the interposer did (for the docs' cost figures and tests). */
typedef struct dkb__cuda_interpose_stats {
    uint64_t allocs, frees_deferred, frees_refused, allocs_refused;
    uint64_t blocks_poisoned, bytes_poisoned;   /* at call ends */
    uint64_t in_call_flushes;                   /* deferred frees performed in a call */
    uint64_t funcs_restored;
} dkb__cuda_interpose_stats;

/* Start recording (the worker, before it loads the candidate): device is
 * the worker's device; the deferral limit is computed from its memory.
 * 0, or DKB_EIO with the CUDA error. */
int dkb__cuda_interpose_enable(int device, dkb_error *err);
bool dkb__cuda_interpose_enabled(void);
/* The variables __cudaRegisterVar recorded since enable (*n of them);
 * *lost when one could not be recorded (out of host memory). */
const dkb__cuda_var *dkb__cuda_interpose_vars(size_t *n, bool *lost);
/* A candidate call begins: allocations are allowed from here. */
void dkb__cuda_interpose_call_begin(void);
/* The call has ended and the device is idle: no more allocations; poison
 * (DKB__CUDA_POISON) and really free every block the call allocated
 * (freed or not) on stream (a cudaStream_t: the candidate's, so that the
 * pool hands its stream-ordered blocks back to the next call on the same
 * stream; NULL: the interposer's own), then wait for that. 0, or DKB_EIO
 * with the CUDA error. */
int dkb__cuda_interpose_call_end(void *stream, dkb_error *err);
/* Put back the initial attributes of every kernel whose attributes a
 * candidate changed (cudaFuncSetAttribute / cudaFuncSetCacheConfig). 0, or
 * DKB_EIO with the CUDA error. */
int dkb__cuda_interpose_funcs_restore(dkb_error *err);
void dkb__cuda_interpose_get_stats(dkb__cuda_interpose_stats *st);

#ifdef __cplusplus
}
#endif

#endif
