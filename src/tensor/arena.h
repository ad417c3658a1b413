/* arena.h: a bump allocator in large blocks for TensorPlan tensors and
 * per-operation scratch memory.
 *
 * Allocations are 64-byte aligned and never freed one by one. Blocks are
 * BLOCK bytes (16 MiB) unless a request is larger than a quarter of that,
 * which then gets a block of its own. dkb__arena_reset makes every block
 * free again but keeps the blocks that were in use (so the next run reuses
 * warm pages instead of faulting in fresh ones) and frees the ones that sat
 * idle through the whole run. Marks give stack-like release for scratch
 * memory. Not thread-safe: allocate before a parallel region, never in it. */
#ifndef DKB_TENSOR_ARENA_H
#define DKB_TENSOR_ARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dkb__arena_block dkb__arena_block;

typedef struct dkb__arena {
    dkb__arena_block *used;  /* blocks in use, most recent first */
    dkb__arena_block *idle;  /* blocks kept for reuse */
    size_t block_size;       /* 0: default 16 MiB */
    size_t bytes_held;       /* total size of all blocks (for stats) */
    /* where blocks come from: NULL for malloc (host); else e.g. cudaMalloc
     * wrappers (mem_alloc returns NULL on failure; headers stay on the host;
     * mem_free gets back the size mem_alloc was asked for) */
    void *(*mem_alloc)(size_t bytes);
    void (*mem_free)(void *p, size_t bytes);
} dkb__arena;

/* A position in an arena, to release back to. */
typedef struct dkb__arena_mark {
    dkb__arena_block *block;
    size_t used;
} dkb__arena_mark;

/* An empty arena (no memory held yet). */
void dkb__arena_init(dkb__arena *a, size_t block_size);
/* The same with blocks from mem_alloc / mem_free (device memory). */
void dkb__arena_init_with(dkb__arena *a, size_t block_size, void *(*mem_alloc)(size_t),
                          void (*mem_free)(void *, size_t));
/* bytes of 64-byte aligned memory, or NULL when out of memory (or on
 * size overflow). bytes == 0 gives a valid unique pointer. */
void *dkb__arena_alloc(dkb__arena *a, size_t bytes);
/* Free all allocations; keep the blocks used since the last reset. A reset
 * with nothing allocated since the previous one does nothing, so resetting
 * before and after a run keeps the warm blocks. */
void dkb__arena_reset(dkb__arena *a);
/* Free everything (the arena may be used again). */
void dkb__arena_free(dkb__arena *a);
/* The current position / release every allocation made after it. */
dkb__arena_mark dkb__arena_get_mark(const dkb__arena *a);
void dkb__arena_release(dkb__arena *a, dkb__arena_mark m);

#ifdef __cplusplus
}
#endif

#endif
