/* stream.h: streaming the streamed tables' partitions to a device under a
 * memory budget (internal; docs/partitions.md, "CUDA streaming").
 *
 * Everything here but the device primitives is plain C, so the CPU build
 * tests it (tests/unit/test_stream.c, and tests/cli/partitions_staged.sh
 * through the host device below):
 *
 *   - dkb__stream_plan_chunks: runs of consecutive partitions and the
 *     number of device buffers ("slots") that fit a budget beside the
 *     resident tables;
 *   - dkb__pipe_run: the order of the steps of a partitioned run: stage
 *     (start bringing a run of partitions into a slot), acquire (wait
 *     until it is there), compute, release (compute no longer reads the
 *     slot), with run i + 1 staged before run i is computed when there are
 *     two slots, and every slot reused;
 *   - dkb__stream: a stager thread that copies the pieces of a run (column
 *     row ranges of the mapped store) into host staging buffers (in
 *     parallel, text offsets rebased to 0 on the way) and hands each
 *     filled buffer to the device primitives, which copy it into the slot
 *     asynchronously (CUDA: pinned buffers, cudaMemcpyAsync on a copy
 *     stream, events; src/tensor/cuda_stream.cu).
 *
 * The device primitives (dkb__sdev_ops) are the only backend-specific
 * part: dkb__sdev_host copies within host memory (and checks that no slot
 * is overwritten while it is read), dkb__cuda_sdev_open gives CUDA's. */
#ifndef DKB_QUERIES_STREAM_H
#define DKB_QUERIES_STREAM_H

#include <stdint.h>

#include "dkb/error.h"   // defines: dkb_error
#include "dkb/tensor.h"  // defines: dkb_tp

#ifdef __cplusplus
extern "C" {
#endif

/* Every piece in a slot starts at a multiple of this (device loads). */
#define DKB__STREAM_ALIGN ((int64_t)256)
#define DKB__STREAM_MAXSLOTS 4
#define DKB__STREAM_MAXRUNS 1024
/* Host staging: buffers of a run's pieces on their way to the device. */
#define DKB__STREAM_NSTAGE 2
#define DKB__STREAM_STAGE_BYTES ((int64_t)32 << 20)

static inline int64_t dkb__stream_align(int64_t b) {
    return (b + DKB__STREAM_ALIGN - 1) / DKB__STREAM_ALIGN * DKB__STREAM_ALIGN;
}

/* ---- planning ---- */

/* The bytes partitions [from, to] (inclusive) take at once. */
typedef int64_t (*dkb__stream_bytes_fn)(void *arg, int from, int to);

typedef struct dkb__stream_plan {
    int nslots;         /* device buffers, each holding one run */
    int nchunks;        /* runs of partitions */
    int first[DKB__STREAM_MAXRUNS + 1]; /* run k: partitions first[k] .. first[k + 1] - 1 */
    int64_t largest;    /* the largest single partition */
    int64_t slot_bytes; /* the largest run: each slot's size */
    int64_t peak;       /* resident + nslots * slot_bytes (what the budget bounds) */
} dkb__stream_plan;

/* Partitions [lo, hi) in runs, greedily as few as possible, each at most
 * (budget - resident) / nslots bytes, nslots = maxslots when resident +
 * maxslots x the largest partition fit the budget, else the most that do
 * (at least 1). maxslots 1 is the unstreamed CPU path's chunking: a run
 * takes partitions while resident + its bytes <= budget. 0, or DKB_ENOMEM
 * when resident + the largest partition exceed the budget (pl->largest is
 * set; the caller words the message), DKB_EINVAL for bad arguments (more
 * than DKB__STREAM_MAXRUNS partitions). hi <= lo: no runs. */
int dkb__stream_plan_chunks(dkb__stream_bytes_fn bytes, void *arg, int lo, int hi, int64_t resident,
                            int64_t budget, int maxslots, dkb__stream_plan *pl);

/* ---- the order of a streamed run ---- */

/* Steps are pass-major: step j is run (chunk) j % nchunks of pass
 * j / nchunks, in slot j % nslots (when every run has a slot of its own,
 * nchunks <= nslots, a run stays in its slot over all passes and is
 * staged once). Any nonzero return stops the run with that code. */
typedef struct dkb__pipe_ops {
    int (*stage)(void *arg, int chunk, int slot);
    int (*acquire)(void *arg, int chunk, int slot);
    int (*compute)(void *arg, int step, int chunk, int slot);
    int (*release)(void *arg, int chunk, int slot);
} dkb__pipe_ops;

/* Run npasses x nchunks steps: runs 0 .. nslots - 1 are staged first;
 * then per step acquire, compute, release, and the slot just released is
 * staged with the next run it is to hold. So with two slots run i + 1 is
 * being copied while run i computes, and a slot is staged again only after
 * its compute released it. 0, or the first nonzero code. */
int dkb__pipe_run(const dkb__pipe_ops *ops, void *arg, int nchunks, int npasses, int nslots);

/* ---- device primitives ---- */

/* Called by the stager thread (thread_init, fence, stage_wait, copy,
 * staged) and by the caller's thread (open, wait, release, close), never
 * two at once on one thread; the stream orders them: a slot is fenced and
 * copied into only after the caller released its previous contents. */
typedef struct dkb__sdev_ops {
    const char *name;
    /* nslots slots of slot_bytes (device memory: *slots[i]) and nstage
     * staging buffers of stage_bytes (host memory the copies read:
     * *stage[i]) */
    int (*open)(void *dev, int nslots, int64_t slot_bytes, int nstage, int64_t stage_bytes, void **slots,
                void **stage, dkb_error *err);
    int (*thread_init)(void *dev, dkb_error *err);
    /* before slot s is copied into: order the copies after the compute
     * that read its previous contents (its release) */
    int (*fence)(void *dev, int slot, dkb_error *err);
    /* before staging buffer b is filled again: wait until its last copy is done */
    int (*stage_wait)(void *dev, int b, dkb_error *err);
    /* copy len bytes of staging buffer b to offset off of slot s (may return before it is done) */
    int (*copy)(void *dev, int b, int slot, int64_t off, int64_t len, dkb_error *err);
    /* every copy of slot s is issued */
    int (*staged)(void *dev, int slot, dkb_error *err);
    /* wait until slot s's copies are done; *copy_ms: how long they took on the device (from its fence) */
    int (*wait)(void *dev, int slot, double *copy_ms, dkb_error *err);
    /* the compute that reads slot s is issued (it may still be running) */
    int (*release)(void *dev, int slot, dkb_error *err);
    /* after every copy has finished: free everything; dev too */
    void (*close)(void *dev);
} dkb__sdev_ops;

/* Host memory "device" (slots and staging from malloc, copies memcpy):
 * for the CPU backend's staged mode and the tests. It fails a copy into a
 * slot between its wait and its release (a slot overwritten while
 * compute reads it) and a wait before the slot is staged. */
extern const dkb__sdev_ops dkb__sdev_host;
void *dkb__sdev_host_new(void);

/* CUDA's device primitives for the compute of work (its stream): pinned
 * staging (cudaHostAlloc), slots from cudaMalloc, cudaMemcpyAsync on a
 * copy stream of their own, events. DKB_EINVAL in a build without CUDA. */
int dkb__cuda_sdev_open(dkb_tp *work, const dkb__sdev_ops **ops, void **dev, dkb_error *err);
/* Host-to-device bandwidth from pinned memory in GB/s, measured once per
 * process (256 MiB copies, CUDA events, the best of 5); NaN when it cannot
 * be measured (no CUDA, no memory). */
double dkb__cuda_h2d_gbs(void);
/* Free device memory in bytes (cudaMemGetInfo), or -1. */
int64_t dkb__cuda_free_bytes(void);
/* Zero the device slots this process keeps between streamed runs (they
 * hold the streamed tables' last runs of partitions) and wait for it: for
 * a process where other code runs beside the baseline (the harness's
 * worker, outside its timed windows), so that no streamed rows stay on the
 * device after a baseline call. 0, or DKB_EIO; 0 without CUDA or slots. */
int dkb__cuda_stream_scrub(dkb_error *err);

/* ---- the stream ---- */

/* len bytes from src to dst (a staging buffer) on `threads` threads, in 1
 * MiB pieces; as int64 values less rebase when offsets (len a multiple of
 * 8: text offsets rebased to a run's first). Also the CUDA loader's
 * (src/harness/worker_stream_cuda.c). */
void dkb__stream_fill(void *dst, const void *src, int64_t len, int offsets, int64_t rebase, int threads);

/* One piece of a run: bytes consecutive bytes at src, to offset dst_off
 * of the slot; when rebase is set, src holds int64 values (text offsets)
 * and each is copied less `rebase`. */
typedef struct dkb__stream_piece {
    const void *src;
    int64_t bytes;
    int64_t dst_off;
    int64_t rebase;
    int is_offsets;
} dkb__stream_piece;

#define DKB__STREAM_MAXPIECES 128

typedef struct dkb__stream_stats {
    int64_t bytes;    /* copied to the device */
    int loads;        /* runs staged */
    double copy_ms;   /* the device's time in the copies (fence to last byte), summed over loads */
    double fill_ms;   /* the stager's wall time per load (filling staging, issuing copies), summed */
    double stall_ms;  /* the caller's wall time waiting in acquire */
} dkb__stream_stats;

typedef struct dkb__stream dkb__stream;

/* A stream over the device primitives ops/dev (the stream owns dev: it is
 * closed with it, also when open fails), nslots slots of slot_bytes;
 * fill_threads threads fill a staging buffer (>= 1). */
int dkb__stream_open(const dkb__sdev_ops *ops, void *dev, int nslots, int64_t slot_bytes, int fill_threads,
                     dkb__stream **out, dkb_error *err);
/* Slot s's memory (device addresses for the compute). */
void *dkb__stream_slot(const dkb__stream *s, int slot);
/* Queue n pieces into slot s (copied; returns at once). The slot must be
 * free: never staged, or released since its last acquire. */
int dkb__stream_stage(dkb__stream *s, int slot, const dkb__stream_piece *p, int n, dkb_error *err);
/* Wait until slot s holds what was last staged into it (an error of the
 * stager is returned here). */
int dkb__stream_acquire(dkb__stream *s, int slot, dkb_error *err);
/* The compute reading slot s is issued: the slot may be staged again. */
int dkb__stream_release(dkb__stream *s, int slot, dkb_error *err);
/* Stop the stager (after the loads queued), wait for every copy, free
 * everything; st (may be NULL) gets the totals. Accepts NULL. */
void dkb__stream_close(dkb__stream *s, dkb__stream_stats *st);

#ifdef __cplusplus
}
#endif

#endif
