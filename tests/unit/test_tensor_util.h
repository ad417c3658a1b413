/* test_tensor_util.h: shared helpers of the TensorPlan unit tests: CHECK
 * (test_check.h, printing the first 30 failures), a deterministic random
 * generator, the awkward sizes and thread counts every test runs over, and
 * tensor builders. */
#ifndef DKB_TEST_TENSOR_UTIL_H
#define DKB_TEST_TENSOR_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/tensor.h"
#include "tensor/tp_internal.h"

#define CHECK_PRINT_LIMIT 30 /* checks run in loops over sizes and threads */
#include "test_check.h"

static const int64_t SIZES[] = {0, 1, 7, 65, 1000, 100003};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
static const int THREADS[] = {1, 2, 3};
#define NTHREADS ((int)(sizeof THREADS / sizeof THREADS[0]))

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static inline uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi]. */
static inline int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* A context with `threads` threads that runs every loop in parallel, even
 * on tiny inputs (the library's threshold lowered), so the parallel paths
 * meet the awkward sizes. */
static inline dkb_tp *new_tp(int threads) {
    dkb_tp *tp = NULL;
    dkb_error err;
    if (dkb_tp_create(DKB_TP_CPU, threads, &tp, &err)) {
        fprintf(stderr, "dkb_tp_create: %s\n", err.msg);
        exit(2);
    }
    tp->par_min = 1;
    return tp;
}

/* Check the context has no error; print it if it has. */
static inline void expect_ok(dkb_tp *tp, const char *what) {
    dkb_error err;
    int rc = dkb_tp_status(tp, &err);
    CHECK(rc == 0, "%s: unexpected error %d: %s", what, rc, rc ? err.msg : "");
}

static inline dkb_tensor *host_i64(dkb_tp *tp, const int64_t *v, int64_t n, int scale) {
    dkb_tensor *t = dkb_tp_from_host(tp, DKB_TP_I64, n, v);
    if (t) t->scale = scale;
    return t;
}
static inline dkb_tensor *host_i32(dkb_tp *tp, const int32_t *v, int64_t n) { return dkb_tp_from_host(tp, DKB_TP_I32, n, v); }
static inline dkb_tensor *host_u8(dkb_tp *tp, const uint8_t *v, int64_t n, dkb_tp_dtype t) {
    return dkb_tp_from_host(tp, t, n, v);
}

static inline int64_t *xmalloc_i64(int64_t n) { return malloc(sizeof(int64_t) * (size_t)(n + 1)); }

/* The tensor's data as a host array (CPU backend: the pointer itself). */
#define DATA(T, t) ((const T *)(t)->data)

/* Random strings from a small alphabet, with the words tests look for. */
static const char *const WORDS[] = {"green", "forest", "BRASS", "special", "requests", "blue", "", "x", "gre", "en"};
static inline char *rand_strings(int64_t n, int64_t *off) {
    size_t cap = (size_t)n * 64 + 16, used = 0;
    char *b = malloc(cap);
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int nw = (int)rnd_in(0, 4);
        for (int w = 0; w < nw; w++) {
            const char *s = WORDS[rnd_in(0, 9)];
            size_t l = strlen(s);
            memcpy(b + used, s, l);
            used += l;
            if (rnd_in(0, 2) == 0) b[used++] = ' ';
        }
        off[i + 1] = (int64_t)used;
    }
    return b;
}

#endif
