/* heap_interpose.h: link-time interposition of a candidate's heap
 * allocations (the C library's malloc family and C++'s operator new and
 * delete), so that no block outlives the call that allocated it.
 *
 * The harness links every candidate itself (build.c) with the linker's
 * --wrap for each name of DKB_HEAP_WRAPPED: the candidate's call to malloc
 * becomes a call to __wrap_malloc, which the dkb executable defines and
 * exports (heap_interpose.c; CMakeLists.txt exports these __wrap_ names).
 * The real function is reachable only through a reference to __real_malloc,
 * which imports malloc itself: the import check refuses that (symbols.c).
 *
 * Every wrap forwards to the C library. While recording (the worker,
 * around every candidate call) it also keeps the set of blocks the call
 * allocated; the candidate's frees are deferred (recorded, not performed),
 * and at the end of the call every block of the set, freed or leaked, is
 * freed by the worker, outside the timed region and with glibc's
 * perturbation on (overwritten; a mapped block is unmapped), so a later
 * call finds none of this call's data, not even by looking next to its own
 * blocks, and the timed region pays no overwriting. Past
 * DKB__HEAP_DEFER_MAX deferred bytes in one call, frees are performed at
 * once, overwritten first (the candidate pays for it). Blocks allocated while the candidate was
 * loaded (its constructors) are part of its image: snapshotted once and
 * put back before every call, like its static memory, and never freed
 * (a free of one is ignored).
 *
 * The wraps may be called from any thread (a mutex guards the set). */
#ifndef DKB_HARNESS_HEAP_INTERPOSE_H
#define DKB_HARNESS_HEAP_INTERPOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "dkb/error.h"

/* The wrapped names, as the linker's --wrap options take them. */
#define DKB_HEAP_WRAPPED                                                                                  \
    "malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign", "memalign",  \
        "valloc", "strdup", "strndup", "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",          \
        "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",       \
        "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",   \
        "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",           \
        "_ZnamSt11align_val_tRKSt9nothrow_t"

/* Deferred frees of one call beyond this are performed in the call. */
#define DKB__HEAP_DEFER_MAX ((size_t)1 << 30)

/* The names of DKB_HEAP_WRAPPED, *n of them. */
const char *const *dkb__heap_wrapped(size_t *n);
/* Is name[0..len) one of them? */
bool dkb__heap_is_wrapped(const char *name, size_t len);

/* Record what the candidate's constructors allocate (call before dlopen);
 * dkb__heap_load_end takes the image of every block still live. 0, or
 * DKB_ENOMEM. */
void dkb__heap_load_begin(void);
int dkb__heap_load_end(dkb_error *err);
/* Before a call: the image blocks put back, recording on. */
void dkb__heap_call_begin(void);
/* After a call: recording off; every block the call left allocated freed.
 * Returns their count. */
size_t dkb__heap_call_end(void);

#endif
