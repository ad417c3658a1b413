/* cuda_internal.cuh: what every CUDA backend file (cuda_*.cu) shares: the
 * CUDA context of a TensorPlan context, checked CUDA calls, device scratch
 * memory, launch shapes, and device-side element loaders matching the CPU
 * backend's converters (cpu_convert.c).
 *
 * Conventions (the CPU backend's, on the device):
 *   - every operation runs on the context's one stream, in order; nothing
 *     synchronizes except copies to the host (dkb__cu_get) and reset;
 *   - outputs come from dkb__tp_new / dkb__tp_new_str (device memory from
 *     the context's device arena: one pool per run, blocks reused across
 *     resets, never a cudaMalloc per operation);
 *   - temporaries (CUB temp storage, hash tables) come from dkb__cu_scratch
 *     between CU_SCRATCH_BEGIN and CU_SCRATCH_END; the stream order makes
 *     reusing them after the operation returns safe;
 *   - every CUDA call is checked with CU_OK(tp, op, call), every launch
 *     with CU_LAUNCHED(tp, op): a failure records "op: <call>: <CUDA
 *     message>" (sticky, first error wins) and the operation returns NULL;
 *   - errors found on the device (overflow, a bad index) are raised through
 *     the context's device flag: kernels atomicOr a DKB_CU_FLAG_* bit, the
 *     host reads it with dkb__cu_flag_get after the launch. */
#ifndef DKB_TENSOR_CUDA_INTERNAL_CUH
#define DKB_TENSOR_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tensor/arena.h"
#include "tensor/cuda.h"
#include "tensor/tp_internal.h"

/* A store column copied to the device (kept until the context is destroyed). */
typedef struct dkb__cu_resident {
    struct dkb__cu_resident *next;
    const dkb_store_column *col;  /* the key: column object, its mapped data, rows */
    const void *host_data;
    int64_t rows;
    void *data;                   /* device: values, or STR offsets */
    char *bytes;                  /* device: STR characters */
    int64_t nbytes;
    size_t device_bytes;
    bool borrowed;                /* adopted memory (CUDA IPC): not freed here */
} dkb__cu_resident;

struct dkb__cuda_ctx {
    int device;
    int sms;                      /* multiprocessors, for grid sizes */
    cudaStream_t stream;
    dkb__arena dev;               /* device memory of tensors (reset per run) */
    dkb__arena dscratch;          /* device temporaries of one operation */
    void *pinned;                 /* pinned host staging for small transfers */
    size_t pinned_size;
    unsigned long long *flag;     /* device error flag (DKB_CU_FLAG_* bits) */
    dkb__cu_resident *resident;
    int64_t resident_columns, resident_bytes;
    double resident_seconds;
};

/* Bits of the device error flag. */
#define DKB_CU_FLAG_RANGE 1ull    /* a value does not fit (DKB_ERANGE) */
#define DKB_CU_FLAG_INDEX 2ull    /* an index outside its tensor (DKB_ERANGE) */

/* Record a failed CUDA call (returns false) / true when e is cudaSuccess. */
bool dkb__cu_check(dkb_tp *tp, const char *op, cudaError_t e, const char *what);
#define CU_OK(tp, op, call) dkb__cu_check((tp), (op), (call), #call)
/* After a kernel launch: checks the launch (not its completion). */
#define CU_LAUNCHED(tp, op) dkb__cu_check((tp), (op), cudaGetLastError(), "kernel launch")

/* The context's stream. */
static inline cudaStream_t dkb__cu_stream(const dkb_tp *tp) { return tp->cuda->stream; }

/* Device scratch memory for the current operation; NULL + ENOMEM. */
void *dkb__cu_scratch(dkb_tp *tp, const char *op, size_t bytes);
#define CU_SCRATCH_BEGIN(tp) dkb__arena_mark cu_scratch_mark_ = dkb__arena_get_mark(&(tp)->cuda->dscratch)
#define CU_SCRATCH_END(tp) dkb__arena_release(&(tp)->cuda->dscratch, cu_scratch_mark_)

/* Copy bytes from the device to the host and wait (through the pinned
 * staging buffer when it fits); false (error recorded) on failure. */
bool dkb__cu_get(dkb_tp *tp, const char *op, void *host_dst, const void *dev_src, size_t bytes);
/* Copy host memory to the device (asynchronously when it fits the staging
 * buffer, which is then reused only after the stream passes it). */
bool dkb__cu_put(dkb_tp *tp, const char *op, void *dev_dst, const void *host_src, size_t bytes);
/* Zero the device flag before a kernel that may raise it; after it, read
 * the flag (waits for the stream): 0, or its bits. ~0 on a CUDA error. */
bool dkb__cu_flag_clear(dkb_tp *tp, const char *op);
unsigned long long dkb__cu_flag_get(dkb_tp *tp, const char *op);

/* Launch shape of grid-stride loops over n elements. */
#define DKB_CU_BLOCK 256
static inline unsigned dkb__cu_grid(const dkb_tp *tp, int64_t n) {
    int64_t want = (n + DKB_CU_BLOCK - 1) / DKB_CU_BLOCK;
    int64_t cap = (int64_t)tp->cuda->sms * 32;
    if (want < 1) want = 1;
    return (unsigned)(want < cap ? want : cap);
}
#define CU_FOR(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                          i += (int64_t)gridDim.x * blockDim.x)

/* ---- device-side element access (any dtype; as cpu_convert.c) ---- */

__device__ __forceinline__ int64_t dkb__d_ld_i64(const void *data, dkb_tp_dtype t, int64_t i) {
    switch (t) {
    case DKB_TP_BOOL: case DKB_TP_U8: return ((const uint8_t *)data)[i];
    case DKB_TP_I8: return ((const int8_t *)data)[i];
    case DKB_TP_I16: return ((const int16_t *)data)[i];
    case DKB_TP_I32: return ((const int32_t *)data)[i];
    case DKB_TP_I128: return (int64_t)((const dkb__i128 *)data)[i];
    case DKB_TP_F64: return (int64_t)((const double *)data)[i];
    default: return ((const int64_t *)data)[i];
    }
}

__device__ __forceinline__ dkb__i128 dkb__d_ld_i128(const void *data, dkb_tp_dtype t, int64_t i) {
    if (t == DKB_TP_I128) return ((const dkb__i128 *)data)[i];
    return (dkb__i128)dkb__d_ld_i64(data, t, i);
}

/* 10^k as a double, k in 0..38: the exact integer rounded once, as the
 * CPU's (double)dkb__pow10_i128(k). */
__device__ __forceinline__ double dkb__d_pow10(int k) {
    dkb__i128 r = 1;
    for (int j = 0; j < k; j++) r *= 10;
    return (double)r;
}

/* Element i as a double, divided by 10^scale (F64 as is). The division by
 * an exact power of ten is correctly rounded, as on the CPU. */
__device__ __forceinline__ double dkb__d_ld_f64(const void *data, dkb_tp_dtype t, int scale, int64_t i) {
    if (t == DKB_TP_F64) return ((const double *)data)[i];
    double v = t == DKB_TP_I128 ? (double)((const dkb__i128 *)data)[i] : (double)dkb__d_ld_i64(data, t, i);
    return scale > 0 ? v / dkb__d_pow10(scale) : v;
}

#endif
