/* heap_interpose.c: the wraps of a candidate's heap allocations and the
 * record of its live blocks (see heap_interpose.h). */
#include "harness/heap_interpose.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/countof.h"
#include "harness/worker_guard.h"  // defines: DKB_POISON


static const char *const WRAPPED[] = {DKB_HEAP_WRAPPED};

const char *const *dkb__heap_wrapped(size_t *n) {
    *n = DKB_COUNTOF(WRAPPED);
    return WRAPPED;
}

bool dkb__heap_is_wrapped(const char *name, size_t len) {
    for (size_t i = 0; i < DKB_COUNTOF(WRAPPED); i++)
        if (strlen(WRAPPED[i]) == len && !memcmp(WRAPPED[i], name, len)) return true;
    return false;
}

/* ---- the record ---- */

enum { OFF = 0, LOAD, CALL };

typedef struct block {
    uintptr_t p;
    size_t size;
    int freed; /* the candidate freed it: the free is deferred to the call's end */
} block;

/* An open-addressing set of live blocks (linear probing, 0 = empty). */
typedef struct block_set {
    block *slot;
    size_t cap, n; /* cap: a power of two */
} block_set;

typedef struct image_block {
    void *p;
    size_t size;
    void *copy;
} image_block;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_mode = OFF;
static block_set g_call;         /* this call's blocks (mode CALL), or the constructors' (LOAD) */
static size_t g_deferred;        /* bytes of this call's deferred frees */
static image_block *g_image;     /* the constructors' blocks, with their contents */
static size_t g_nimage;

static size_t slot_of(const block_set *s, uintptr_t p) {
    uint64_t h = (uint64_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (s->cap - 1);
}

static int set_grow(block_set *s) {
    size_t ncap = s->cap ? s->cap * 2 : 1024;
    block *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    block_set t = {ns, ncap, 0};
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i].p) {
            size_t k = slot_of(&t, s->slot[i].p);
            while (t.slot[k].p) k = (k + 1) & (t.cap - 1);
            t.slot[k] = s->slot[i];
            t.n++;
        }
    free(s->slot);
    *s = t;
    return 0;
}

/* The slot holding p, or the empty slot where its probe chain ends (the
 * set has room: cap > 0). */
static size_t probe(const block_set *s, const void *p) {
    size_t k = slot_of(s, (uintptr_t)p);
    while (s->slot[k].p && s->slot[k].p != (uintptr_t)p) k = (k + 1) & (s->cap - 1);
    return k;
}

/* Record p (size bytes). -1 when the set cannot grow. */
static int set_add(block_set *s, void *p, size_t size) {
    if ((s->n + 1) * 2 > s->cap && set_grow(s)) return -1;
    size_t k = probe(s, p);
    if (!s->slot[k].p) s->n++;
    s->slot[k].p = (uintptr_t)p;
    s->slot[k].size = size;
    s->slot[k].freed = 0;
    return 0;
}

/* Remove p: 1 when it was there (its size in *size), else 0. Backward-shift
 * deletion keeps every probe chain unbroken. */
static int set_remove(block_set *s, void *p, size_t *size) {
    if (!s->cap) return 0;
    size_t k = probe(s, p);
    if (!s->slot[k].p) return 0;
    if (size) *size = s->slot[k].size;
    s->slot[k].p = 0;
    s->n--;
    for (size_t j = (k + 1) & (s->cap - 1); s->slot[j].p; j = (j + 1) & (s->cap - 1)) {
        size_t home = slot_of(s, s->slot[j].p);
        /* move j back into the hole k unless its home lies in (k, j] */
        int stays = k <= j ? (home > k && home <= j) : (home > k || home <= j);
        if (!stays) {
            s->slot[k] = s->slot[j];
            s->slot[j].p = 0;
            k = j;
        }
    }
    return 1;
}

/* The live (not yet freed) record of p, or NULL. */
static block *set_find(block_set *s, const void *p) {
    if (!s->cap) return NULL;
    size_t k = probe(s, p);
    return s->slot[k].p && !s->slot[k].freed ? &s->slot[k] : NULL;
}

static int is_image(const void *p, size_t *size) {
    for (size_t i = 0; i < g_nimage; i++)
        if (g_image[i].p == p) {
            if (size) *size = g_image[i].size;
            return 1;
        }
    return 0;
}

/* A fresh block p of size bytes from the C library: recorded when the
 * harness records. Out of room in the record: the block is given back and
 * the allocation fails. */
static void *recorded(void *p, size_t size) {
    if (!p) return NULL;
    pthread_mutex_lock(&g_lock);
    int bad = g_mode != OFF && set_add(&g_call, p, size);
    pthread_mutex_unlock(&g_lock);
    if (bad) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    return p;
}

/* A free by the candidate. Not recording: the C library frees it. While
 * loading: freed, and forgotten. During a call: a block of this call is
 * only marked freed; the worker frees it after the call, outside the timed
 * region, with glibc's perturbation on (so it is overwritten), and no later
 * allocation of the same call can be handed it either. Past
 * DKB__HEAP_DEFER_MAX deferred bytes in one call the block is overwritten
 * and freed at once, in the call (the candidate pays for that). Anything
 * else (an image block, the harness's memory, a second free) is ignored. */
static void candidate_free(void *p) {
    if (!p) return;
    pthread_mutex_lock(&g_lock);
    int now = g_mode == OFF, poison = 0;
    if (g_mode == LOAD) {
        now = set_remove(&g_call, p, NULL);
    } else if (g_mode == CALL) {
        block *b = set_find(&g_call, p);
        if (b && g_deferred + b->size <= DKB__HEAP_DEFER_MAX) {
            b->freed = 1;
            g_deferred += b->size;
        } else if (b) {
            now = poison = set_remove(&g_call, p, NULL);
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (poison) memset(p, DKB_POISON, malloc_usable_size(p));
    if (now) free(p);
}

/* ---- the worker's side ---- */

void dkb__heap_load_begin(void) {
    pthread_mutex_lock(&g_lock);
    g_mode = LOAD;
    pthread_mutex_unlock(&g_lock);
}

int dkb__heap_load_end(dkb_error *err) {
    pthread_mutex_lock(&g_lock);
    g_mode = OFF;
    int rc = 0;
    g_image = calloc(g_call.n ? g_call.n : 1, sizeof *g_image);
    if (!g_image) rc = -1;
    for (size_t i = 0; !rc && i < g_call.cap; i++) {
        const block *b = &g_call.slot[i];
        if (!b->p) continue;
        image_block *ib = &g_image[g_nimage];
        ib->p = (void *)b->p;
        ib->size = malloc_usable_size(ib->p);
        ib->copy = malloc(ib->size ? ib->size : 1);
        if (!ib->copy) {
            rc = -1;
            break;
        }
        memcpy(ib->copy, ib->p, ib->size);
        g_nimage++;
    }
    free(g_call.slot);
    memset(&g_call, 0, sizeof g_call);
    pthread_mutex_unlock(&g_lock);
    return rc ? dkb_fail(err, DKB_ENOMEM, "out of memory (the candidate's constructors' blocks)") : 0;
}

void dkb__heap_call_begin(void) {
    for (size_t i = 0; i < g_nimage; i++) memcpy(g_image[i].p, g_image[i].copy, g_image[i].size);
    pthread_mutex_lock(&g_lock);
    g_mode = CALL;
    pthread_mutex_unlock(&g_lock);
}

size_t dkb__heap_call_end(void) {
    pthread_mutex_lock(&g_lock);
    g_mode = OFF;
    size_t freed = 0;
    for (size_t i = 0; i < g_call.cap; i++)
        if (g_call.slot[i].p) {
            free((void *)g_call.slot[i].p);
            g_call.slot[i].p = 0;
            freed++;
        }
    g_call.n = 0;
    g_deferred = 0;
    pthread_mutex_unlock(&g_lock);
    return freed;
}

/* ---- the wraps (the candidate's calls land here) ---- */

/* Exported from the dkb executable; referenced by the worker so the linker
 * keeps this object. */
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t k, size_t n);
void __wrap_free(void *p);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **out, size_t align, size_t n);
void *__wrap_memalign(size_t align, size_t n);
void *__wrap_valloc(size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n) { return recorded(malloc(n), n); }

void *__wrap_calloc(size_t k, size_t n) { return recorded(calloc(k, n), k * n); }

void __wrap_free(void *p) { candidate_free(p); }

/* realloc: while recording, a new block (the data copied) and a deferred
 * free of the old one, so the old contents never become free memory in the
 * call; a constructor's block stays where it is. Not recording: the C
 * library's. */
void *__wrap_realloc(void *p, size_t n) {
    if (!p) return __wrap_malloc(n);
    pthread_mutex_lock(&g_lock);
    int mode = g_mode;
    size_t old = 0;
    int image = mode != OFF && is_image(p, &old);
    const block *b = mode != OFF && !image ? set_find(&g_call, p) : NULL;
    if (b) old = b->size;
    pthread_mutex_unlock(&g_lock);
    if (mode == OFF) return realloc(p, n);
    if (!image && !b) { /* not the candidate's block */
        errno = ENOMEM;
        return NULL;
    }
    void *q = __wrap_malloc(n ? n : 1);
    if (!q) return NULL;
    memcpy(q, p, old < n ? old : n);
    if (!image) candidate_free(p);
    return q;
}

void *__wrap_reallocarray(void *p, size_t k, size_t n) {
    if (n && k > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    return __wrap_realloc(p, k * n);
}

void *__wrap_aligned_alloc(size_t align, size_t n) { return recorded(aligned_alloc(align, n), n); }

int __wrap_posix_memalign(void **out, size_t align, size_t n) {
    void *p = NULL;
    int rc = posix_memalign(&p, align, n);
    if (rc) return rc;
    *out = recorded(p, n);
    return *out ? 0 : ENOMEM;
}

void *__wrap_memalign(size_t align, size_t n) { return recorded(memalign(align, n), n); }

void *__wrap_valloc(size_t n) { return recorded(valloc(n), n); }

char *__wrap_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = __wrap_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

char *__wrap_strndup(const char *s, size_t n) {
    size_t len = strnlen(s, n);
    char *p = __wrap_malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = 0;
    }
    return p;
}

/* C++ (CUDA candidates' host code): operator new and delete in their
 * plain, nothrow, sized and aligned forms, on the same record. A throwing
 * new that cannot allocate aborts (a crash): it cannot throw from here. */
static void *new_block(size_t n, size_t align, int nothrow) {
    if (!n) n = 1;
    void *p = align > sizeof(void *) * 2 ? __wrap_aligned_alloc(align, (n + align - 1) / align * align)
                                         : __wrap_malloc(n);
    if (!p && !nothrow) abort();
    return p;
}

void *__wrap__Znwm(size_t n);
void *__wrap__Znam(size_t n);
void *__wrap__ZnwmRKSt9nothrow_t(size_t n, const void *tag);
void *__wrap__ZnamRKSt9nothrow_t(size_t n, const void *tag);
void *__wrap__ZnwmSt11align_val_t(size_t n, size_t align);
void *__wrap__ZnamSt11align_val_t(size_t n, size_t align);
void *__wrap__ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag);
void *__wrap__ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag);
void __wrap__ZdlPv(void *p);
void __wrap__ZdaPv(void *p);
void __wrap__ZdlPvm(void *p, size_t n);
void __wrap__ZdaPvm(void *p, size_t n);
void __wrap__ZdlPvRKSt9nothrow_t(void *p, const void *tag);
void __wrap__ZdaPvRKSt9nothrow_t(void *p, const void *tag);
void __wrap__ZdlPvSt11align_val_t(void *p, size_t align);
void __wrap__ZdaPvSt11align_val_t(void *p, size_t align);
void __wrap__ZdlPvmSt11align_val_t(void *p, size_t n, size_t align);
void __wrap__ZdaPvmSt11align_val_t(void *p, size_t n, size_t align);

void *__wrap__Znwm(size_t n) { return new_block(n, 0, 0); }
void *__wrap__Znam(size_t n) { return new_block(n, 0, 0); }
void *__wrap__ZnwmRKSt9nothrow_t(size_t n, const void *tag) { return (void)tag, new_block(n, 0, 1); }
void *__wrap__ZnamRKSt9nothrow_t(size_t n, const void *tag) { return (void)tag, new_block(n, 0, 1); }
void *__wrap__ZnwmSt11align_val_t(size_t n, size_t align) { return new_block(n, align, 0); }
void *__wrap__ZnamSt11align_val_t(size_t n, size_t align) { return new_block(n, align, 0); }
void *__wrap__ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag) {
    return (void)tag, new_block(n, align, 1);
}
void *__wrap__ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag) {
    return (void)tag, new_block(n, align, 1);
}
void __wrap__ZdlPv(void *p) { __wrap_free(p); }
void __wrap__ZdaPv(void *p) { __wrap_free(p); }
void __wrap__ZdlPvm(void *p, size_t n) { (void)n, __wrap_free(p); }
void __wrap__ZdaPvm(void *p, size_t n) { (void)n, __wrap_free(p); }
void __wrap__ZdlPvRKSt9nothrow_t(void *p, const void *tag) { (void)tag, __wrap_free(p); }
void __wrap__ZdaPvRKSt9nothrow_t(void *p, const void *tag) { (void)tag, __wrap_free(p); }
void __wrap__ZdlPvSt11align_val_t(void *p, size_t align) { (void)align, __wrap_free(p); }
void __wrap__ZdaPvSt11align_val_t(void *p, size_t align) { (void)align, __wrap_free(p); }
void __wrap__ZdlPvmSt11align_val_t(void *p, size_t n, size_t align) { (void)n, (void)align, __wrap_free(p); }
void __wrap__ZdaPvmSt11align_val_t(void *p, size_t n, size_t align) { (void)n, (void)align, __wrap_free(p); }
