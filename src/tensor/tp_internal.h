/* tp_internal.h: the TensorPlan context and helpers shared by the front
 * end (tensor.c, tp_api.c) and the CPU backend (cpu_*.c).
 *
 * Conventions inside the backend:
 *   - outputs come from dkb__tp_new / dkb__tp_new_str (context arena);
 *   - temporaries come from dkb__tp_scratch between SCRATCH_BEGIN and
 *     SCRATCH_END (released when the operation returns);
 *   - a failure calls dkb__tp_error (first error wins) and returns NULL;
 *   - parallel loops run on tp->threads OpenMP threads; work split into
 *     fixed-size chunks (DKB__CHUNK rows), so results never depend on the
 *     thread count. */
#ifndef DKB_TENSOR_TP_INTERNAL_H
#define DKB_TENSOR_TP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dkb/tensor.h"
#include "tensor/arena.h"
#include "tensor/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dkb__column_entry dkb__column_entry;
typedef struct dkb__cuda_ctx dkb__cuda_ctx;
typedef struct dkb__tp_profile dkb__tp_profile;

/* Host copies of small device tensors read element by element (tensor.c). */
#define DKB__HOST_CACHE_SLOTS 16
#define DKB__HOST_CACHE_MAX ((size_t)4 << 20)
typedef struct dkb__host_cache_entry {
    const void *dev;  /* the tensor's data */
    size_t bytes;
    void *host;       /* its copy, in the arena (until reset) */
} dkb__host_cache_entry;

struct dkb_tp {
    dkb_tp_backend kind;
    const dkb__tp_backend *be;
    int threads;           /* OpenMP threads per parallel region (>= 1) */
    int64_t par_min;       /* loops over fewer elements run on one thread
                            * (DKB__PAR_MIN; tests lower it to force the
                            * parallel paths on small inputs) */
    dkb__arena arena;      /* tensors, headers, host copies: freed by reset */
    dkb__arena scratch;    /* temporaries of one operation */
    dkb_error err;         /* sticky: err.code == 0 while all is well */
    dkb__column_entry *columns; /* per store column: its dictionary (DICT) and the touched
                                * flag for dkb_tp_touched (kept until destroy) */
    dkb__cuda_ctx *cuda;   /* CUDA backend state (cuda_backend.cu), else NULL */
    dkb__tp_profile *prof; /* per-operation timing (profile.c), else NULL */
    dkb__host_cache_entry hcache[DKB__HOST_CACHE_SLOTS];
    unsigned hcache_next;
    /* dkb__tp_host_tables: columns of these tables are host views */
    const dkb_store_table *host_tables[2];
    int nhost_tables;
};

/* While set (n > 0), dkb_tp_column of a column of one of the store tables
 * t[0..n) (n <= 2) gives a host view of the mapped column, as the CPU
 * backend's, whatever the backend: no device copy, and its data must not
 * reach a device operation (for the tables a partitioned run streams,
 * src/queries/partition.c). n = 0 clears it. */
void dkb__tp_host_tables(dkb_tp *tp, const dkb_store_table *const *t, int n);

/* profile.c: free a context's profile (dkb_tp_destroy). */
void dkb__tp_profile_free(dkb_tp *tp);

/* The CUDA backend's context hooks (cuda_backend.cu; built with CUDA only):
 * create fills tp->cuda and tp->be (device, stream, memory pools) or fails
 * with one line in err; reset waits for the stream and frees the run's
 * device tensors (resident columns stay); destroy frees everything. */
int dkb__cuda_create(dkb_tp *tp, dkb_error *err);
void dkb__cuda_reset(dkb_tp *tp);
/* The device arena's position, and the release back to it (dkb_tp_release). */
dkb__arena_mark dkb__cuda_mark(const dkb_tp *tp);
void dkb__cuda_release(dkb_tp *tp, dkb__arena_mark m);
void dkb__cuda_destroy(dkb_tp *tp);
void dkb__cuda_resident(const dkb_tp *tp, dkb_tp_resident_stats *st);
/* Use device memory that already holds store column col (values, or a TEXT
 * column's n + 1 offsets in data and nbytes characters in bytes; e.g. opened
 * from another process by CUDA IPC) as its resident copy: dkb_tp_column then
 * returns it without a copy. The context never frees it. */
int dkb__cuda_adopt_column(dkb_tp *tp, const dkb_store_column *col, void *data, char *bytes, int64_t nbytes,
                           dkb_error *err);
/* Is store column col resident in CUDA context tp, uploaded by one of its
 * dkb_tp_column calls (not adopted)? 1 with its device memory (values or TEXT
 * offsets in *data, *data_size bytes; TEXT characters in *bytes, *nbytes of
 * them, else NULL and 0); 0 when not, and nothing is loaded. */
int dkb__cuda_resident_get(const dkb_tp *tp, const dkb_store_column *col, void **data, size_t *data_size,
                           char **bytes, int64_t *nbytes);

/* Rows per chunk of chunked parallel loops. */
#define DKB__CHUNK ((int64_t)65536)
/* Below this many elements a loop runs on one thread: a parallel region
 * costs microseconds, and on a busy machine up to a scheduler time slice. */
#define DKB__PAR_MIN ((int64_t)262144)

typedef unsigned __int128 dkb__u128;
typedef __int128 dkb__i128;

/* Record a failure (when none is recorded yet); always returns NULL. */
void *dkb__tp_error(dkb_tp *tp, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A new tensor of n elements of dtype t (scale 0, no dict); NULL + ENOMEM. */
dkb_tensor *dkb__tp_new(dkb_tp *tp, const char *op, dkb_tp_dtype t, int64_t n);
/* A new STR tensor of n strings and nbytes bytes (offsets uninitialised). */
dkb_tensor *dkb__tp_new_str(dkb_tp *tp, const char *op, int64_t n, int64_t nbytes);
/* A tensor header sharing a's data (for no-op conversions). */
dkb_tensor *dkb__tp_view(dkb_tp *tp, const char *op, const dkb_tensor *a);
/* Scratch memory for the current operation; NULL + ENOMEM. */
void *dkb__tp_scratch(dkb_tp *tp, const char *op, size_t bytes);
#define SCRATCH_BEGIN(tp) dkb__arena_mark scratch_mark_ = dkb__arena_get_mark(&(tp)->scratch)
#define SCRATCH_END(tp) dkb__arena_release(&(tp)->scratch, scratch_mark_)

/* Threads for a loop over n elements. */
static inline int dkb__nthreads(const dkb_tp *tp, int64_t n) { return n < tp->par_min ? 1 : tp->threads; }
/* Number of DKB__CHUNK chunks covering n rows (>= 1 when n > 0). */
static inline int64_t dkb__nchunks(int64_t n) { return (n + DKB__CHUNK - 1) / DKB__CHUNK; }


/* 10^k for k in 0..18 (int64) and 0..38 (int128). */
extern const int64_t dkb__pow10_i64[19];
dkb__i128 dkb__pow10_i128(int k);

/* Block converters (cpu_convert.c): elements [off, off + n) of a into dst.
 * ld_i64: any dtype except I128/F64/STR; ld_i128: any integer dtype;
 * ld_f64: any numeric dtype, integers divided by 10^scale. */
void dkb__ld_i64(const dkb_tensor *a, int64_t off, int64_t n, int64_t *dst);
void dkb__ld_i128(const dkb_tensor *a, int64_t off, int64_t n, dkb__i128 *dst);
void dkb__ld_f64(const dkb_tensor *a, int64_t off, int64_t n, double *dst);
/* Element i as int128 (integer dtypes). */
dkb__i128 dkb__get_i128(const dkb_tensor *a, int64_t i);
/* Inclusive prefix sum of v[0..n) in place, in parallel; returns the total. */
int64_t dkb__scan_i64(dkb_tp *tp, int64_t *v, int64_t n);
/* String i of a STR tensor. */
static inline const char *dkb__str(const dkb_tensor *s, int64_t i, int64_t *len) {
    const int64_t *off = (const int64_t *)s->data;
    *len = off[i + 1] - off[i];
    return s->bytes + off[i];
}

#ifdef __cplusplus
}
#endif

#endif
