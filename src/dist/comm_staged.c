/* comm_staged.c: a host-buffer communicator over a device-buffer one (the
 * NCCL communicator; comm.h, dkb__comm_open_staged). Every collective
 * copies its host buffers into one device buffer of the current CUDA
 * device, runs the device communicator's collective on it and copies the
 * result back, each copy on a stream of its own and waited for (the device
 * collective waits for its own stream before it returns). This is how
 * `dkb run --comm nccl` sends the partials, which a rank keeps in host
 * memory between its runs: the first step, two host copies more than a
 * merge on the device would need (docs/distributed.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/comm.h"

#ifndef DKB_HAVE_CUDA

int dkb__comm_open_staged(dkb__comm *dev, dkb__comm **out, dkb_error *err) {
    (void)dev;
    *out = NULL;
    return dkb_fail(err, DKB_ENOENT, "this dkb was built without CUDA");
}

#else

#include <cuda_runtime_api.h>

typedef struct staged_impl {
    dkb__comm *dev;      /* the device communicator (owned) */
    cudaStream_t stream; /* the copies */
    void *buf;           /* device memory, cap bytes (the same on every rank) */
    size_t cap;
} staged_impl;

static staged_impl *impl_of(dkb__comm *c) { return (staged_impl *)c->impl; }

/* A copy that failed: the other ranks are in (or on their way to) the
 * device collective, which this rank cannot join; say so in one line and
 * stop every rank, as MPI's default error handler does. */
static _Noreturn void fatal(dkb__comm *c, const char *what, const char *why) {
    fprintf(stderr, "dkb: error: rank %d: --comm nccl: %s: %s\n", c->rank, what, why);
    fflush(stderr);
    dkb__comm_abort(c, 1);
}

/* Copy bytes between host and device on the stream and wait for it. */
static void copy(dkb__comm *c, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
    staged_impl *s = impl_of(c);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, s->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess)
        fatal(c, kind == cudaMemcpyHostToDevice ? "copy to the device" : "copy from the device", cudaGetErrorString(e));
}

/* The device buffer holds at least `bytes`. Every rank calls it with the
 * same bytes (the collectives' arguments match), so every rank grows at
 * the same call; whether all could is agreed through the device
 * communicator's host gather, so that no rank is left in the collective
 * when another could not allocate. */
static int reserve(dkb__comm *c, size_t bytes, dkb_error *err) {
    staged_impl *s = impl_of(c);
    if (bytes <= s->cap) return 0;
    size_t cap = s->cap * 2 > bytes ? s->cap * 2 : bytes;
    if (cap < 65536) cap = 65536;
    if (s->buf) cudaFree(s->buf);
    s->buf = NULL, s->cap = 0;
    cudaError_t e = cudaMalloc(&s->buf, cap);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        s->buf = NULL;
    }
    int64_t *ok = calloc((size_t)c->size, sizeof *ok);
    if (!ok) fatal(c, "staging", "out of memory");
    int rc = s->dev->ops->allgather_sizes(s->dev, s->buf != NULL, ok, err);
    int all = !rc;
    for (int r = 0; r < c->size && all; r++) all = ok[r] != 0;
    free(ok);
    if (rc) return rc;
    if (all) {
        s->cap = cap;
        return 0;
    }
    if (s->buf) cudaFree(s->buf);
    s->buf = NULL;
    return dkb_fail(err, DKB_ENOMEM, "--comm nccl: %zu bytes of device memory for a collective: %s", cap,
                    e != cudaSuccess ? cudaGetErrorString(e) : "out of memory on another rank");
}

static int staged_barrier(dkb__comm *c, dkb_error *err) { return impl_of(c)->dev->ops->barrier(impl_of(c)->dev, err); }

static int staged_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    staged_impl *s = impl_of(c);
    if (!bytes) return 0;
    int rc = reserve(c, bytes, err);
    if (rc) return rc;
    if (c->rank == root) copy(c, s->buf, buf, bytes, cudaMemcpyHostToDevice);
    if ((rc = s->dev->ops->bcast(s->dev, s->buf, bytes, root, err))) return rc;
    copy(c, buf, s->buf, bytes, cudaMemcpyDeviceToHost);
    return 0;
}

static int staged_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                            dkb_error *err) {
    staged_impl *s = impl_of(c);
    size_t bytes = count * 8; /* int64 and double */
    if (!bytes) return 0;
    int rc = reserve(c, bytes, err);
    if (rc) return rc;
    copy(c, s->buf, buf, bytes, cudaMemcpyHostToDevice);
    if ((rc = s->dev->ops->allreduce(s->dev, s->buf, count, dtype, op, err))) return rc;
    copy(c, buf, s->buf, bytes, cudaMemcpyDeviceToHost);
    return 0;
}

static int staged_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    dkb__comm *d = impl_of(c)->dev;
    return d->ops->allgather_sizes(d, mine, all, err);
}

/* This rank's bytes go to its place in the device buffer, which is then
 * both the send and the receive buffer (in place). */
static int staged_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                             dkb_error *err) {
    staged_impl *s = impl_of(c);
    int64_t total = 0, at = 0;
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank) at = total;
        total += counts[r];
    }
    if (!total) return 0;
    int rc = reserve(c, (size_t)total, err);
    if (rc) return rc;
    char *d = (char *)s->buf;
    if (bytes) copy(c, d + at, send, (size_t)bytes, cudaMemcpyHostToDevice);
    if ((rc = s->dev->ops->allgatherv(s->dev, d + at, bytes, d, counts, err))) return rc;
    copy(c, recv, d, (size_t)total, cudaMemcpyDeviceToHost);
    return 0;
}

static void staged_abort(dkb__comm *c, int code) {
    dkb__comm *d = impl_of(c)->dev;
    d->ops->abort(d, code);
}

static void staged_close(dkb__comm *c) {
    staged_impl *s = impl_of(c);
    if (s) {
        if (s->buf) cudaFree(s->buf);
        if (s->stream) cudaStreamDestroy(s->stream);
        dkb__comm_close(s->dev);
        free(s);
    }
    free(c);
}

static const dkb__comm_ops staged_ops = {
    .name = "nccl",
    .barrier = staged_barrier,
    .bcast = staged_bcast,
    .allreduce = staged_allreduce,
    .allgather_sizes = staged_allgather_sizes,
    .allgatherv = staged_allgatherv,
    .abort = staged_abort,
    .close = staged_close,
};

int dkb__comm_open_staged(dkb__comm *dev, dkb__comm **out, dkb_error *err) {
    *out = NULL;
    staged_impl *s = calloc(1, sizeof *s);
    dkb__comm *c = calloc(1, sizeof *c);
    if (!s || !c) {
        free(s), free(c);
        return dkb_fail(err, DKB_ENOMEM, "communicator: out of memory");
    }
    cudaError_t e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        free(s), free(c);
        return dkb_fail(err, DKB_EIO, "cudaStreamCreateWithFlags: %s", cudaGetErrorString(e));
    }
    s->dev = dev;
    c->ops = &staged_ops;
    c->rank = dev->rank, c->size = dev->size, c->local_rank = dev->local_rank;
    c->impl = s;
    *out = c;
    return 0;
}

#endif
