/* like.h: SQL LIKE patterns (% any run of bytes, _ one byte, no escapes)
 * compiled into literal segments and matched byte-wise, host code shared by
 * like_dict and the CPU LIKE kernel.
 *
 * A pattern splits at each % into segments. Without a %, the string must
 * equal the single segment (with _ matching any byte). With one or more %,
 * the first segment must match at the start, the last at the end (without
 * overlapping the first), and each middle segment at its leftmost
 * occurrence after the previous one (greedy leftmost is exact for LIKE). */
#ifndef DKB_TENSOR_LIKE_H
#define DKB_TENSOR_LIKE_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor/arena.h"

typedef struct dkb__like_seg {
    const char *s;  /* the pattern bytes (not NUL-terminated) */
    int64_t len;
    bool wild;      /* contains _ */
} dkb__like_seg;

typedef struct dkb__like {
    bool has_pct;         /* the pattern holds at least one % */
    int nseg;             /* segments (>= 1) */
    dkb__like_seg *seg;
    int64_t min_len;      /* shortest matching string */
} dkb__like;

/* Compile pattern (NUL-terminated) with memory from arena; NULL when out of
 * memory. The result points into pattern, which must outlive it. */
dkb__like *dkb__like_compile(dkb__arena *arena, const char *pattern);
/* Does s[0, n) match? */
bool dkb__like_match(const dkb__like *lk, const char *s, int64_t n);

#endif
