/* arena.c: block bump allocator with block reuse across resets (see arena.h). */
#include "tensor/arena.h"

#include <stdint.h>
#include <stdlib.h>

#define ALIGN 64u
#define DEFAULT_BLOCK ((size_t)16 << 20)

struct dkb__arena_block {
    dkb__arena_block *next;
    size_t size;  /* usable bytes after the header */
    size_t used;
    void *raw;    /* what malloc returned (host blocks) */
    char *data;   /* the usable memory: ALIGN bytes after the aligned header
                   * (host), or what mem_alloc returned (device) */
};

static char *block_data(dkb__arena_block *b) { return b->data; }

void dkb__arena_init(dkb__arena *a, size_t block_size) {
    a->used = NULL;
    a->idle = NULL;
    a->block_size = block_size ? block_size : DEFAULT_BLOCK;
    a->bytes_held = 0;
    a->mem_alloc = NULL;
    a->mem_free = NULL;
}

void dkb__arena_init_with(dkb__arena *a, size_t block_size, void *(*mem_alloc)(size_t),
                          void (*mem_free)(void *, size_t)) {
    dkb__arena_init(a, block_size);
    a->mem_alloc = mem_alloc;
    a->mem_free = mem_free;
}

static dkb__arena_block *block_new(dkb__arena *a, size_t size) {
    if (size > SIZE_MAX - 2 * ALIGN) return NULL;
    if (a->mem_alloc) {
        /* foreign memory (device): the header lives on the host */
        dkb__arena_block *h = malloc(sizeof *h);
        void *mem = h ? a->mem_alloc(size) : NULL;
        if (!mem) {
            free(h);
            return NULL;
        }
        h->next = NULL;
        h->size = size;
        h->used = 0;
        h->raw = h;
        h->data = mem;
        a->bytes_held += size;
        return h;
    }
    void *raw = malloc(size + 2 * ALIGN);
    if (!raw) return NULL;
    uintptr_t p = ((uintptr_t)raw + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    dkb__arena_block *b = (dkb__arena_block *)p;
    _Static_assert(sizeof(dkb__arena_block) <= ALIGN, "block header fits its slot");
    b->next = NULL;
    b->size = size;
    b->used = 0;
    b->raw = raw;
    b->data = (char *)b + ALIGN;
    a->bytes_held += size;
    return b;
}

/* Smallest idle block of at least size bytes, unlinked; or NULL. */
static dkb__arena_block *take_idle(dkb__arena *a, size_t size) {
    dkb__arena_block **best = NULL;
    for (dkb__arena_block **p = &a->idle; *p; p = &(*p)->next)
        if ((*p)->size >= size && (!best || (*p)->size < (*best)->size)) best = p;
    if (!best) return NULL;
    dkb__arena_block *b = *best;
    *best = b->next;
    b->next = NULL;
    b->used = 0;
    return b;
}

void *dkb__arena_alloc(dkb__arena *a, size_t bytes) {
    if (bytes > SIZE_MAX - 4 * ALIGN) return NULL;
    size_t need = (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need == 0) need = ALIGN;
    dkb__arena_block *b = a->used;
    if (b && b->size - b->used >= need) {
        void *r = block_data(b) + b->used;
        b->used += need;
        return r;
    }
    size_t want = need > a->block_size / 4 ? need : a->block_size;
    b = take_idle(a, want);
    if (!b) b = block_new(a, want);
    if (!b) return NULL;
    b->next = a->used;
    a->used = b;
    b->used = need;
    return block_data(b);
}

static void free_list(dkb__arena *a, dkb__arena_block *b) {
    while (b) {
        dkb__arena_block *next = b->next;
        a->bytes_held -= b->size;
        if (a->mem_free) a->mem_free(b->data, b->size);
        free(b->raw);
        b = next;
    }
}

void dkb__arena_reset(dkb__arena *a) {
    /* Nothing allocated since the last reset: not a run, keep the warm
     * blocks (callers may reset before and after each run). */
    if (!a->used) return;
    free_list(a, a->idle);  /* idle through the whole run: give back */
    a->idle = a->used;
    a->used = NULL;
}

void dkb__arena_free(dkb__arena *a) {
    free_list(a, a->idle);
    free_list(a, a->used);
    a->idle = a->used = NULL;
}

dkb__arena_mark dkb__arena_get_mark(const dkb__arena *a) {
    dkb__arena_mark m = {a->used, a->used ? a->used->used : 0};
    return m;
}

void dkb__arena_release(dkb__arena *a, dkb__arena_mark m) {
    while (a->used && a->used != m.block) {
        dkb__arena_block *b = a->used;
        a->used = b->next;
        b->next = a->idle;
        a->idle = b;
    }
    if (a->used) a->used->used = m.used;
}
