/* progress.h: the callback through which long library work reports progress.
 * The library calls it from one thread at a time; the CLI draws a bar. */
#ifndef DKB_PROGRESS_H
#define DKB_PROGRESS_H

#include <stdint.h>

typedef struct dkb_progress {
    /* what: a short label ("lineitem"); done/total in any unit (rows, bytes).
     * May be NULL (no reporting). */
    void (*fn)(void *ctx, const char *what, uint64_t done, uint64_t total);
    void *ctx;
} dkb_progress;

static inline void dkb__progress(const dkb_progress *p, const char *what, uint64_t done,
                                 uint64_t total) {
    if (p && p->fn) p->fn(p->ctx, what, done, total);
}

#endif
