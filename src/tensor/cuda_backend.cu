/* cuda_backend.cu: the CUDA backend's context (device, stream, device
 * memory pools, pinned staging, error flag), checked copies, resident store
 * columns, constants, and the dkb__tp_cuda operation table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/cuda_internal.cuh"

#include "common/timing.h"  // defines: dkb__now_s

/* Device arena blocks: 256 MiB, so a run needs few cudaMalloc calls (and
 * none once the blocks are warm). */
#define DEV_BLOCK ((size_t)256 << 20)
#define SCRATCH_BLOCK ((size_t)64 << 20)
/* Pinned staging: small transfers, and the two halves of column loads. */
#define PINNED_BYTES ((size_t)64 << 20)

extern "C" const dkb__tp_backend dkb__tp_cuda;

/* ---- checked calls, scratch, copies, the flag ---- */

bool dkb__cu_check(dkb_tp *tp, const char *op, cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    int code = e == cudaErrorMemoryAllocation ? DKB_ENOMEM : DKB_EINTERNAL;
    dkb__tp_error(tp, code, "%s: %s: CUDA error %s (%s)", op, what, cudaGetErrorName(e), cudaGetErrorString(e));
    return false;
}

void *dkb__cu_scratch(dkb_tp *tp, const char *op, size_t bytes) {
    void *p = dkb__arena_alloc(&tp->cuda->dscratch, bytes);
    if (!p) dkb__tp_error(tp, DKB_ENOMEM, "%s: out of device memory (%zu bytes of scratch)", op, bytes);
    return p;
}

bool dkb__cu_get(dkb_tp *tp, const char *op, void *host_dst, const void *dev_src, size_t bytes) {
    if (!bytes) return true;
    dkb__cuda_ctx *c = tp->cuda;
    if (bytes <= c->pinned_size) {
        if (!CU_OK(tp, op, cudaMemcpyAsync(c->pinned, dev_src, bytes, cudaMemcpyDeviceToHost, c->stream)) ||
            !CU_OK(tp, op, cudaStreamSynchronize(c->stream)))
            return false;
        memcpy(host_dst, c->pinned, bytes);
        return true;
    }
    return CU_OK(tp, op, cudaMemcpyAsync(host_dst, dev_src, bytes, cudaMemcpyDeviceToHost, c->stream)) &&
           CU_OK(tp, op, cudaStreamSynchronize(c->stream));
}

bool dkb__cu_put(dkb_tp *tp, const char *op, void *dev_dst, const void *host_src, size_t bytes) {
    if (!bytes) return true;
    /* From pageable memory the call returns once the source is staged, so
     * the caller may reuse host_src at once. */
    return CU_OK(tp, op, cudaMemcpyAsync(dev_dst, host_src, bytes, cudaMemcpyHostToDevice, tp->cuda->stream));
}

bool dkb__cu_flag_clear(dkb_tp *tp, const char *op) {
    return CU_OK(tp, op, cudaMemsetAsync(tp->cuda->flag, 0, sizeof *tp->cuda->flag, tp->cuda->stream));
}

unsigned long long dkb__cu_flag_get(dkb_tp *tp, const char *op) {
    unsigned long long v = 0;
    if (!dkb__cu_get(tp, op, &v, tp->cuda->flag, sizeof v)) return ~0ull;
    return v;
}

/* ---- the backend table's memory entries ---- */

/* Device arena blocks come from cudaMalloc and are zeroed before they go
 * back to the driver: memory a process frees is handed out again by its
 * next cudaMalloc (or grows a memory pool) with its contents, so a block
 * the baseline gives back would show its intermediates (a query's answer
 * among them) to whatever allocates next, e.g. a candidate in the
 * harness's worker. Blocks are freed at a reset (dkb_tp_reset: outside any
 * timed region) and only when idle through a whole run, so the zeroing is
 * rare. The arena hands back each block's size (arena.h). */
static void *dev_block_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* an allocation failure is not sticky */
        return NULL;
    }
    return p;
}

static void dev_block_free(void *p, size_t bytes) {
    /* zeroed, and the zeroing finished, before the driver has it back */
    if (cudaMemset(p, 0, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
    cudaFree(p);
}

static void *cu_alloc(dkb_tp *tp, size_t bytes) { return dkb__arena_alloc(&tp->cuda->dev, bytes); }

static void cu_to_host(dkb_tp *tp, void *dst, const void *src, size_t bytes) {
    dkb__cu_get(tp, "to_host", dst, src, bytes);
}

static void cu_from_host(dkb_tp *tp, void *dst, const void *src, size_t bytes) {
    dkb__cu_put(tp, "from_host", dst, src, bytes);
}

static void cu_sync(dkb_tp *tp) { CU_OK(tp, "sync", cudaStreamSynchronize(tp->cuda->stream)); }

/* ---- resident store columns ---- */

/* Copy host bytes to the device through the two halves of the pinned
 * buffer: while one half is on its way, the CPU fills the other. */
static bool load_bytes(dkb_tp *tp, const char *op, void *dev, const void *host, size_t bytes) {
    dkb__cuda_ctx *c = tp->cuda;
    size_t half = c->pinned_size / 2;
    cudaEvent_t done[2];
    if (!CU_OK(tp, op, cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming))) return false;
    if (!CU_OK(tp, op, cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming))) {
        cudaEventDestroy(done[0]);
        return false;
    }
    bool ok = true, used[2] = {false, false};
    for (size_t off = 0, k = 0; ok && off < bytes; off += half, k ^= 1) {
        size_t len = bytes - off < half ? bytes - off : half;
        char *stage = (char *)c->pinned + k * half;
        if (used[k]) ok = CU_OK(tp, op, cudaEventSynchronize(done[k]));
        if (!ok) break;
        memcpy(stage, (const char *)host + off, len);
        ok = CU_OK(tp, op, cudaMemcpyAsync((char *)dev + off, stage, len, cudaMemcpyHostToDevice, c->stream)) &&
             CU_OK(tp, op, cudaEventRecord(done[k], c->stream));
        used[k] = true;
    }
    if (ok) ok = CU_OK(tp, op, cudaStreamSynchronize(c->stream));
    cudaEventDestroy(done[0]);
    cudaEventDestroy(done[1]);
    return ok;
}

static dkb__cu_resident *resident_find(dkb__cuda_ctx *c, const dkb_store_column *col, const void *host, int64_t rows) {
    for (dkb__cu_resident *r = c->resident; r; r = r->next)
        if (r->col == col && r->host_data == host && r->rows == rows) return r;
    return NULL;
}

static void resident_free(dkb__cu_resident *r) {
    if (!r->borrowed) {
        cudaFree(r->data);
        cudaFree(r->bytes);
    }
    free(r);
}

extern "C" int dkb__cuda_adopt_column(dkb_tp *tp, const dkb_store_column *col, void *data, char *bytes,
                                      int64_t nbytes, dkb_error *err) {
    if (!tp || !tp->cuda || !col || !data) return dkb_fail(err, DKB_EINVAL, "adopt_column: bad arguments");
    bool str = dkb_column_type(col) == DKB_TYPE_TEXT;
    const void *host = str ? (const void *)dkb_column_text_offsets(col) : dkb_column_data(col);
    int64_t rows = (int64_t)dkb_column_rows(col);
    dkb__cuda_ctx *c = tp->cuda;
    if (resident_find(c, col, host, rows))
        return dkb_fail(err, DKB_EEXIST, "adopt_column %s: already resident", dkb_column_name(col));
    dkb__cu_resident *r = (dkb__cu_resident *)calloc(1, sizeof *r);
    if (!r) return dkb_fail(err, DKB_ENOMEM, "adopt_column: out of memory");
    r->col = col;
    r->host_data = host;
    r->rows = rows;
    r->data = data;
    r->bytes = bytes;
    r->nbytes = str ? nbytes : 0;
    r->borrowed = true;
    r->next = c->resident;
    c->resident = r;
    return 0;
}

extern "C" int dkb__cuda_resident_get(const dkb_tp *tp, const dkb_store_column *col, void **data, size_t *data_size,
                                      char **bytes, int64_t *nbytes) {
    if (!tp || !tp->cuda || !col) return 0;
    bool str = dkb_column_type(col) == DKB_TYPE_TEXT;
    const void *host = str ? (const void *)dkb_column_text_offsets(col) : dkb_column_data(col);
    const dkb__cu_resident *r = resident_find(tp->cuda, col, host, (int64_t)dkb_column_rows(col));
    if (!r || r->borrowed) return 0;
    *data = r->data;
    *bytes = str ? r->bytes : NULL;
    *nbytes = str ? r->nbytes : 0;
    *data_size = r->device_bytes - (size_t)r->nbytes;
    return 1;
}

static dkb__cu_resident *resident_load(dkb_tp *tp, const dkb_store_column *col, const dkb_tensor *t) {
    const char *op = "column";
    bool str = t->dtype == DKB_TP_STR;
    const void *host = str ? (const void *)dkb_column_text_offsets(col) : dkb_column_data(col);
    if (!host) return (dkb__cu_resident *)dkb__tp_error(tp, DKB_EINVAL, "column %s: no data", dkb_column_name(col));
    dkb__cuda_ctx *c = tp->cuda;
    dkb__cu_resident *r = resident_find(c, col, host, t->n);
    if (r) return r;
    double t0 = dkb__now_s();
    r = (dkb__cu_resident *)calloc(1, sizeof *r);
    if (!r) return (dkb__cu_resident *)dkb__tp_error(tp, DKB_ENOMEM, "column %s: out of memory", dkb_column_name(col));
    r->col = col;
    r->host_data = host;
    r->rows = t->n;
    size_t bytes = (size_t)(str ? t->n + 1 : t->n) * dkb_tp_dtype_size(t->dtype);
    const char *text = NULL;
    if (str) {
        uint64_t nb = 0;
        text = dkb_column_text_bytes(col, &nb);
        r->nbytes = (int64_t)nb;
    }
    bool ok = CU_OK(tp, op, cudaMalloc(&r->data, bytes ? bytes : 1)) &&
              (!str || CU_OK(tp, op, cudaMalloc((void **)&r->bytes, r->nbytes ? (size_t)r->nbytes : 1))) &&
              load_bytes(tp, op, r->data, host, bytes) &&
              (!str || !r->nbytes || load_bytes(tp, op, r->bytes, text, (size_t)r->nbytes));
    if (!ok) {
        resident_free(r);
        return NULL;
    }
    r->device_bytes = bytes + (size_t)r->nbytes;
    r->next = c->resident;
    c->resident = r;
    c->resident_columns++;
    c->resident_bytes += (int64_t)r->device_bytes;
    c->resident_seconds += dkb__now_s() - t0;
    return r;
}

static dkb_tensor *cu_column(dkb_tp *tp, const dkb_store_column *col, dkb_tensor *t) {
    dkb__cu_resident *res = resident_load(tp, col, t);
    if (!res) return NULL;
    dkb_tensor *r = dkb__tp_view(tp, "column", t);
    if (!r) return NULL;
    r->data = res->data;
    if (t->dtype == DKB_TP_STR) {
        r->bytes = res->bytes;
        r->nbytes = res->nbytes;
    }
    return r;
}

/* ---- constants ---- */

template <typename T>
__global__ void fill_kernel(T *out, int64_t n, T v) {
    CU_FOR(i, n) out[i] = v;
}

__global__ void arange_kernel(int64_t *out, int64_t n) {
    CU_FOR(i, n) out[i] = i;
}

template <typename T>
static void fill(dkb_tp *tp, void *out, int64_t n, T v) {
    if (n) fill_kernel<T><<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)>>>((T *)out, n, v);
}

extern "C" dkb_tensor *dkb__cuda_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value) {
    dkb_tensor *r = dkb__tp_new(tp, "full_i64", t, n);
    if (!r) return NULL;
    switch (t) {
    case DKB_TP_BOOL: fill<uint8_t>(tp, r->data, n, value != 0); break;
    case DKB_TP_U8: fill<uint8_t>(tp, r->data, n, (uint8_t)value); break;
    case DKB_TP_I8: fill<int8_t>(tp, r->data, n, (int8_t)value); break;
    case DKB_TP_I16: fill<int16_t>(tp, r->data, n, (int16_t)value); break;
    case DKB_TP_I32: fill<int32_t>(tp, r->data, n, (int32_t)value); break;
    case DKB_TP_I64: fill<int64_t>(tp, r->data, n, value); break;
    case DKB_TP_I128: fill<dkb__i128>(tp, r->data, n, (dkb__i128)value); break;
    default: fill<double>(tp, r->data, n, (double)value); break;
    }
    return CU_LAUNCHED(tp, "full_i64") ? r : NULL;
}

extern "C" dkb_tensor *dkb__cuda_arange(dkb_tp *tp, int64_t n) {
    dkb_tensor *r = dkb__tp_new(tp, "arange", DKB_TP_I64, n);
    if (!r) return NULL;
    if (n) arange_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)>>>((int64_t *)r->data, n);
    return CU_LAUNCHED(tp, "arange") ? r : NULL;
}

/* ---- context ---- */

extern "C" bool dkb_tp_cuda_available(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return n > 0;
}

extern "C" int dkb_tp_device_query(dkb_tp_device_info *out, dkb_error *err) {
    if (!out) return dkb_fail(err, DKB_EINVAL, "device query: NULL out");
    memset(out, 0, sizeof *out);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return dkb_fail(err, DKB_ENOENT, "no GPU: %s", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "device query: %s", cudaGetErrorString(e));
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sms = p.multiProcessorCount;
    out->mem_bytes = (int64_t)p.totalGlobalMem;
    out->l2_bytes = p.l2CacheSize;
    out->mem_bus_bits = p.memoryBusWidth;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess) out->mem_clock_khz = khz;
    (void)cudaGetLastError();
    return 0;
}

extern "C" int dkb__cuda_create(dkb_tp *tp, dkb_error *err) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return dkb_fail(err, DKB_ENOENT, "no GPU for the CUDA backend: %s",
                        e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    dkb__cuda_ctx *c = (dkb__cuda_ctx *)calloc(1, sizeof *c);
    if (!c) return dkb_fail(err, DKB_ENOMEM, "cuda: out of memory");
    tp->cuda = c;
    tp->be = &dkb__tp_cuda;
    dkb__arena_init_with(&c->dev, DEV_BLOCK, dev_block_alloc, dev_block_free);
    dkb__arena_init_with(&c->dscratch, SCRATCH_BLOCK, dev_block_alloc, dev_block_free);
#define CREATE_CHECK(call)                                                                      \
    do {                                                                                        \
        if ((e = (call)) != cudaSuccess)                                                        \
            return dkb_fail(err, DKB_EIO, "cuda: %s: %s", #call, cudaGetErrorString(e));       \
    } while (0)
    CREATE_CHECK(cudaGetDevice(&c->device));
    CREATE_CHECK(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, c->device));
    CREATE_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CREATE_CHECK(cudaMallocHost(&c->pinned, PINNED_BYTES));
    c->pinned_size = PINNED_BYTES;
    CREATE_CHECK(cudaMalloc((void **)&c->flag, sizeof *c->flag));
#undef CREATE_CHECK
    if (c->sms < 1) c->sms = 1;
    return 0;
}

extern "C" void dkb__cuda_reset(dkb_tp *tp) {
    dkb__cuda_ctx *c = tp->cuda;
    /* kernels of the run may still use its memory */
    cudaStreamSynchronize(c->stream);
    (void)cudaGetLastError();
    dkb__arena_reset(&c->dev);
    dkb__arena_reset(&c->dscratch);
}

extern "C" dkb__arena_mark dkb__cuda_mark(const dkb_tp *tp) { return dkb__arena_get_mark(&tp->cuda->dev); }

/* Kernels still queued may read the released memory: every later kernel
 * that reuses it runs after them on the same stream. */
extern "C" void dkb__cuda_release(dkb_tp *tp, dkb__arena_mark m) { dkb__arena_release(&tp->cuda->dev, m); }

extern "C" void dkb__cuda_destroy(dkb_tp *tp) {
    dkb__cuda_ctx *c = tp->cuda;
    if (c->stream) cudaStreamSynchronize(c->stream);
    dkb__arena_free(&c->dev);
    dkb__arena_free(&c->dscratch);
    while (c->resident) {
        dkb__cu_resident *next = c->resident->next;
        resident_free(c->resident);
        c->resident = next;
    }
    if (c->flag) cudaFree(c->flag);
    if (c->pinned) cudaFreeHost(c->pinned);
    if (c->stream) cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    free(c);
    tp->cuda = NULL;
}

extern "C" void dkb__cuda_resident(const dkb_tp *tp, dkb_tp_resident_stats *st) {
    st->columns = tp->cuda->resident_columns;
    st->bytes = tp->cuda->resident_bytes;
    st->seconds = tp->cuda->resident_seconds;
}

extern "C" const dkb__tp_backend dkb__tp_cuda = {
    /* .name = */ "cuda",
    /* .alloc = */ cu_alloc,
    /* .to_host = */ cu_to_host,
    /* .from_host = */ cu_from_host,
    /* .column = */ cu_column,
    /* .full_i64 = */ dkb__cuda_full_i64,
    /* .arange = */ dkb__cuda_arange,
    /* .cmp = */ dkb__cuda_cmp,
    /* .cmp_i64 = */ dkb__cuda_cmp_i64,
    /* .cmp_f64 = */ dkb__cuda_cmp_f64,
    /* .between = */ dkb__cuda_between,
    /* .in_i64 = */ dkb__cuda_in_i64,
    /* .lookup_mask = */ dkb__cuda_lookup_mask,
    /* .logic = */ dkb__cuda_logic,
    /* .arith = */ dkb__cuda_arith,
    /* .arith_scalar = */ dkb__cuda_arith_scalar,
    /* .cast = */ dkb__cuda_cast,
    /* .where = */ dkb__cuda_where,
    /* .year = */ dkb__cuda_year,
    /* .pack2 = */ dkb__cuda_pack2,
    /* .like = */ dkb__cuda_like,
    /* .substr = */ dkb__cuda_substr,
    /* .str_to_i64 = */ dkb__cuda_str_to_i64,
    /* .str_pack = */ dkb__cuda_str_pack,
    /* .compress = */ dkb__cuda_compress,
    /* .nonzero = */ dkb__cuda_nonzero,
    /* .gather = */ dkb__cuda_gather,
    /* .count = */ dkb__cuda_count,
    /* .join = */ dkb__cuda_join,
    /* .semi_join = */ dkb__cuda_semi_join,
    /* .group = */ dkb__cuda_group,
    /* .aggregate = */ dkb__cuda_aggregate,
    /* .reduce = */ dkb__cuda_reduce,
    /* .sort = */ dkb__cuda_sort,
    /* .topk = */ dkb__cuda_topk,
    /* .sync = */ cu_sync,
};
