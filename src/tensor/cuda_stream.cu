/* cuda_stream.cu: CUDA's device primitives for streaming partitions
 * (src/queries/stream.h, dkb__sdev_ops): slots from cudaMalloc, pinned
 * host staging buffers (cudaHostAlloc, not the mapped store), copies with
 * cudaMemcpyAsync on a copy stream of their own, and events: per staging
 * buffer (refilled only after its copy is done), per slot its start and
 * end on the copy stream (timed) and its release on the compute stream
 * (the copies into a slot wait for it on the device). Also the pinned
 * host-to-device bandwidth of the transfer floor and the free device
 * memory. Nothing here is managed memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "queries/stream.h"
#include "tensor/cuda_internal.cuh"

typedef struct cu_sdev {
    int device;
    cudaStream_t compute;  /* the work context's stream (not ours) */
    cudaStream_t copy;
    int nslots, nstage;
    char *slot_mem;        /* one allocation: nslots slots */
    int64_t slot_stride;
    void *pinned[DKB__STREAM_NSTAGE];
    cudaEvent_t stage_done[DKB__STREAM_NSTAGE];
    bool stage_used[DKB__STREAM_NSTAGE];
    cudaEvent_t start[DKB__STREAM_MAXSLOTS], ready[DKB__STREAM_MAXSLOTS], freed[DKB__STREAM_MAXSLOTS];
    bool freed_set[DKB__STREAM_MAXSLOTS];
    int nevents;           /* events created, in the order below */
    bool cached;           /* pinned[] are the process's kept staging buffers */
    bool slots_kept;       /* slot_mem and copy are the process's kept ones */
} cu_sdev;

/* The pinned staging buffers are kept for the process after the first
 * streamed run (cudaHostAlloc of 64 MiB costs milliseconds per run);
 * a run that finds them taken (none today: one query runs at a time)
 * allocates its own. */
static void *kept_pinned[DKB__STREAM_NSTAGE];
static int64_t kept_bytes;
static bool kept_busy;
/* The slots' memory and the copy stream are kept the same way (a cudaMalloc
 * of gigabytes per partitioned run was part of every timed call): the
 * largest asked for so far, on the device that asked, reused while no other
 * run holds it. */
static char *kept_slots;
static int64_t kept_slots_bytes;
static int kept_slots_device = -1;
static cudaStream_t kept_copy;
static bool kept_slots_busy;

static int cu_fail(dkb_error *err, const char *what, cudaError_t e) {
    (void)cudaGetLastError();
    return dkb_fail(err, e == cudaErrorMemoryAllocation ? DKB_ENOMEM : DKB_EIO, "stream: %s: CUDA error %s (%s)", what,
                    cudaGetErrorName(e), cudaGetErrorString(e));
}
#define SD_OK(call)                                             \
    do {                                                        \
        cudaError_t e_ = (call);                                \
        if (e_ != cudaSuccess) return cu_fail(err, #call, e_);  \
    } while (0)

static int sd_open(void *dev, int nslots, int64_t slot_bytes, int nstage, int64_t stage_bytes, void **slots,
                   void **stage, dkb_error *err) {
    cu_sdev *d = (cu_sdev *)dev;
    if (nslots > DKB__STREAM_MAXSLOTS || nstage > DKB__STREAM_NSTAGE)
        return dkb_fail(err, DKB_EINVAL, "stream: %d slots, %d staging buffers", nslots, nstage);
    SD_OK(cudaSetDevice(d->device));
    d->slot_stride = dkb__stream_align(slot_bytes ? slot_bytes : 1);
    const int64_t need = d->slot_stride * nslots;
    if (!kept_slots_busy && (kept_slots_device == d->device || kept_slots_device < 0)) {
        if (kept_slots && kept_slots_bytes < need) { /* too small: replaced by a larger one */
            cudaFree(kept_slots);
            kept_slots = NULL, kept_slots_bytes = 0;
        }
        if (!kept_copy) SD_OK(cudaStreamCreateWithFlags(&kept_copy, cudaStreamNonBlocking));
        if (!kept_slots) {
            SD_OK(cudaMalloc((void **)&kept_slots, (size_t)need));
            kept_slots_bytes = need;
        }
        kept_slots_device = d->device;
        kept_slots_busy = d->slots_kept = true;
        d->slot_mem = kept_slots;
        d->copy = kept_copy;
    } else {
        SD_OK(cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking));
        SD_OK(cudaMalloc((void **)&d->slot_mem, (size_t)need));
    }
    d->nslots = nslots;
    for (int i = 0; i < nslots; i++) slots[i] = d->slot_mem + i * d->slot_stride;
    if (!kept_busy && kept_bytes == stage_bytes && nstage == DKB__STREAM_NSTAGE) {
        for (int i = 0; i < nstage; i++) d->pinned[i] = kept_pinned[i];
        d->cached = kept_busy = true;
    }
    for (int i = 0; i < nstage; i++) {
        if (!d->cached) SD_OK(cudaHostAlloc(&d->pinned[i], (size_t)stage_bytes, cudaHostAllocDefault));
        d->nstage = i + 1;
        stage[i] = d->pinned[i];
        SD_OK(cudaEventCreateWithFlags(&d->stage_done[i], cudaEventDisableTiming));
    }
    if (!d->cached && !kept_busy && !kept_bytes && d->nstage == DKB__STREAM_NSTAGE) {
        /* the first: kept for the next runs */
        for (int i = 0; i < nstage; i++) kept_pinned[i] = d->pinned[i];
        kept_bytes = stage_bytes;
        d->cached = kept_busy = true;
    }
    for (int i = 0; i < nslots; i++) {
        SD_OK(cudaEventCreate(&d->start[i]));
        SD_OK(cudaEventCreate(&d->ready[i]));
        SD_OK(cudaEventCreateWithFlags(&d->freed[i], cudaEventDisableTiming));
        d->nevents = i + 1;
    }
    return 0;
}

static int sd_thread_init(void *dev, dkb_error *err) {
    SD_OK(cudaSetDevice(((cu_sdev *)dev)->device));
    return 0;
}

static int sd_fence(void *dev, int slot, dkb_error *err) {
    cu_sdev *d = (cu_sdev *)dev;
    if (d->freed_set[slot]) SD_OK(cudaStreamWaitEvent(d->copy, d->freed[slot], 0));
    SD_OK(cudaEventRecord(d->start[slot], d->copy));
    return 0;
}

static int sd_stage_wait(void *dev, int b, dkb_error *err) {
    cu_sdev *d = (cu_sdev *)dev;
    if (d->stage_used[b]) SD_OK(cudaEventSynchronize(d->stage_done[b]));
    return 0;
}

static int sd_copy(void *dev, int b, int slot, int64_t off, int64_t len, dkb_error *err) {
    cu_sdev *d = (cu_sdev *)dev;
    SD_OK(cudaMemcpyAsync(d->slot_mem + slot * d->slot_stride + off, d->pinned[b], (size_t)len,
                          cudaMemcpyHostToDevice, d->copy));
    SD_OK(cudaEventRecord(d->stage_done[b], d->copy));
    d->stage_used[b] = true;
    return 0;
}

static int sd_staged(void *dev, int slot, dkb_error *err) {
    SD_OK(cudaEventRecord(((cu_sdev *)dev)->ready[slot], ((cu_sdev *)dev)->copy));
    return 0;
}

static int sd_wait(void *dev, int slot, double *copy_ms, dkb_error *err) {
    cu_sdev *d = (cu_sdev *)dev;
    float ms = 0;
    SD_OK(cudaEventSynchronize(d->ready[slot]));
    SD_OK(cudaEventElapsedTime(&ms, d->start[slot], d->ready[slot]));
    *copy_ms = ms;
    return 0;
}

static int sd_release(void *dev, int slot, dkb_error *err) {
    cu_sdev *d = (cu_sdev *)dev;
    SD_OK(cudaEventRecord(d->freed[slot], d->compute));
    d->freed_set[slot] = true;
    return 0;
}

static void sd_close(void *dev) {
    cu_sdev *d = (cu_sdev *)dev;
    if (!d) return;
    if (d->copy) cudaStreamSynchronize(d->copy);
    if (d->compute) cudaStreamSynchronize(d->compute); /* its kernels may read the slots */
    for (int i = 0; i < d->nevents; i++) {
        cudaEventDestroy(d->start[i]);
        cudaEventDestroy(d->ready[i]);
        cudaEventDestroy(d->freed[i]);
    }
    for (int i = 0; i < d->nstage; i++) {
        if (d->stage_done[i]) cudaEventDestroy(d->stage_done[i]);
        if (!d->cached && d->pinned[i]) cudaFreeHost(d->pinned[i]);
    }
    if (d->cached) kept_busy = false;
    /* the slots hold store rows: kept as they are (dkb__cuda_stream_scrub
     * zeroes them where other code runs next, outside any timing), or
     * zeroed before they go back to the driver, whose next cudaMalloc may
     * hand them to anyone in the process */
    if (d->slots_kept) {
        kept_slots_busy = false;
    } else {
        const size_t bytes = (size_t)(d->slot_stride * d->nslots);
        if (d->slot_mem && d->copy && cudaMemsetAsync(d->slot_mem, 0, bytes, d->copy) == cudaSuccess)
            cudaStreamSynchronize(d->copy);
        if (d->slot_mem) cudaFree(d->slot_mem);
        if (d->copy) cudaStreamDestroy(d->copy);
    }
    (void)cudaGetLastError();
    free(d);
}

extern "C" int dkb__cuda_stream_scrub(dkb_error *err) {
    if (!kept_slots || kept_slots_busy) return 0;
    int dev = -1;
    SD_OK(cudaGetDevice(&dev));
    if (dev != kept_slots_device) SD_OK(cudaSetDevice(kept_slots_device));
    SD_OK(cudaMemsetAsync(kept_slots, 0, (size_t)kept_slots_bytes, kept_copy));
    SD_OK(cudaStreamSynchronize(kept_copy));
    if (dev != kept_slots_device) SD_OK(cudaSetDevice(dev));
    return 0;
}

static const dkb__sdev_ops cu_sdev_ops = {
    /* .name = */ "cuda",
    /* .open = */ sd_open,
    /* .thread_init = */ sd_thread_init,
    /* .fence = */ sd_fence,
    /* .stage_wait = */ sd_stage_wait,
    /* .copy = */ sd_copy,
    /* .staged = */ sd_staged,
    /* .wait = */ sd_wait,
    /* .release = */ sd_release,
    /* .close = */ sd_close,
};

extern "C" int dkb__cuda_sdev_open(dkb_tp *work, const dkb__sdev_ops **ops, void **dev, dkb_error *err) {
    *ops = NULL, *dev = NULL;
    if (!work || !work->cuda) return dkb_fail(err, DKB_EINVAL, "stream: not a CUDA context");
    cu_sdev *d = (cu_sdev *)calloc(1, sizeof *d);
    if (!d) return dkb_fail(err, DKB_ENOMEM, "stream: out of memory");
    d->device = work->cuda->device;
    d->compute = work->cuda->stream;
    *ops = &cu_sdev_ops;
    *dev = d;
    return 0;
}

extern "C" double dkb__cuda_h2d_gbs(void) {
    static double gbs = -1;
    if (gbs >= 0 || isnan(gbs)) return gbs;
    const size_t size = (size_t)256 << 20;
    void *h = NULL, *dv = NULL;
    cudaStream_t st = NULL;
    cudaEvent_t a = NULL, b = NULL;
    double best = INFINITY;
    bool ok = cudaHostAlloc(&h, size, cudaHostAllocDefault) == cudaSuccess && cudaMalloc(&dv, size) == cudaSuccess &&
              cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess &&
              cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess;
    if (ok) memset(h, 0x5a, size);
    for (int r = 0; ok && r < 6; r++) {
        float ms = 0;
        ok = cudaEventRecord(a, st) == cudaSuccess &&
             cudaMemcpyAsync(dv, h, size, cudaMemcpyHostToDevice, st) == cudaSuccess &&
             cudaEventRecord(b, st) == cudaSuccess && cudaEventSynchronize(b) == cudaSuccess &&
             cudaEventElapsedTime(&ms, a, b) == cudaSuccess;
        if (ok && r > 0 && ms > 0 && ms < best) best = ms; /* the first copy warms up */
    }
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    if (st) cudaStreamDestroy(st);
    if (dv) cudaFree(dv);
    if (h) cudaFreeHost(h);
    (void)cudaGetLastError();
    gbs = ok && isfinite(best) ? (double)size / (best * 1e-3) / 1e9 : NAN;
    return gbs;
}

extern "C" int64_t dkb__cuda_free_bytes(void) {
    size_t fr = 0, total = 0;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return (int64_t)fr;
}
