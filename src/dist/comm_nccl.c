/* comm_nccl.c: the NCCL communicator, device buffers: every buffer the
 * collectives take is CUDA device memory of this rank's GPU. Built as the
 * module dkb_comm_nccl.so (linked against libnccl and the CUDA runtime;
 * comm_module.h) and loaded only when a run asks for it. Bootstrapped by
 * another communicator (mpi, or single for one rank): rank 0's
 * ncclGetUniqueId is broadcast through it, then ncclCommInitRank. Each
 * collective runs on the communicator's own stream and is waited for
 * before it returns; the variable-length gather is one ncclBroadcast per
 * rank inside one group (NCCL has no allgatherv). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "dist/comm_module.h"

const int dkb__comm_module_abi = DKB__COMM_MODULE_ABI;

typedef struct nccl_impl {
    ncclComm_t comm;
    cudaStream_t stream;
    dkb__comm *boot;   /* host collectives (sizes) and the bootstrap */
    int device;
} nccl_impl;


/* NCCL's and CUDA's failures as one line naming the call, file and line. */
#define NCCL_CHECK(call, err) nccl_check((call), #call, __FILE__, __LINE__, (err))
#define CUDA_CHECK(call, err) cuda_check((call), #call, __FILE__, __LINE__, (err))
static int nccl_check(ncclResult_t r, const char *what, const char *file, int line, dkb_error *err) {
    if (r == ncclSuccess) return 0;
    return dkb__comm_module_fail(err, DKB_EIO, "%s (%s:%d): %s", what, file, line, ncclGetErrorString(r));
}
static int cuda_check(cudaError_t r, const char *what, const char *file, int line, dkb_error *err) {
    if (r == cudaSuccess) return 0;
    return dkb__comm_module_fail(err, DKB_EIO, "%s (%s:%d): %s", what, file, line, cudaGetErrorString(r));
}

static nccl_impl *impl_of(dkb__comm *c) { return (nccl_impl *)c->impl; }

/* Wait for the stream: the collective is done on this rank. */
static int wait_stream(nccl_impl *m, dkb_error *err) { return CUDA_CHECK(cudaStreamSynchronize(m->stream), err); }

static int nccl_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                          dkb_error *err) {
    nccl_impl *m = impl_of(c);
    ncclDataType_t t = dtype == DKB__COMM_F64 ? ncclFloat64 : ncclInt64;
    ncclRedOp_t o = op == DKB__COMM_MIN ? ncclMin : op == DKB__COMM_MAX ? ncclMax : ncclSum;
    int rc = NCCL_CHECK(ncclAllReduce(buf, buf, count, t, o, m->comm, m->stream), err);
    return rc ? rc : wait_stream(m, err);
}

/* A barrier: an all-reduce of one device value. */
static int nccl_barrier(dkb__comm *c, dkb_error *err) {
    nccl_impl *m = impl_of(c);
    int64_t *d = NULL;
    int rc = CUDA_CHECK(cudaMallocAsync((void **)&d, sizeof *d, m->stream), err);
    if (!rc) rc = CUDA_CHECK(cudaMemsetAsync(d, 0, sizeof *d, m->stream), err);
    if (!rc) rc = nccl_allreduce(c, d, 1, DKB__COMM_I64, DKB__COMM_SUM, err);
    if (d) cudaFreeAsync(d, m->stream);
    int wrc = wait_stream(m, err);
    return rc ? rc : wrc;
}

static int nccl_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    nccl_impl *m = impl_of(c);
    int rc = NCCL_CHECK(ncclBroadcast(buf, buf, bytes, ncclChar, root, m->comm, m->stream), err);
    return rc ? rc : wait_stream(m, err);
}

/* Sizes are host values: gathered through the bootstrap communicator. */
static int nccl_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    dkb__comm *b = impl_of(c)->boot;
    return b->ops->allgather_sizes(b, mine, all, err);
}

static int nccl_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                           dkb_error *err) {
    nccl_impl *m = impl_of(c);
    int rc = NCCL_CHECK(ncclGroupStart(), err);
    int64_t off = 0;
    for (int r = 0; r < c->size && !rc; r++) {
        const void *src = r == c->rank ? send : NULL;
        if (counts[r]) rc = NCCL_CHECK(ncclBroadcast(src, (char *)recv + off, (size_t)counts[r], ncclChar, r,
                                                     m->comm, m->stream), err);
        off += counts[r];
    }
    int grc = NCCL_CHECK(ncclGroupEnd(), rc ? NULL : err);
    (void)bytes;
    if (rc || grc) return rc ? rc : grc;
    return wait_stream(m, err);
}

static void nccl_abort(dkb__comm *c, int code) {
    nccl_impl *m = impl_of(c);
    ncclCommAbort(m->comm);
    m->boot->ops->abort(m->boot, code);
    exit(code);
}

static void nccl_close(dkb__comm *c) {
    nccl_impl *m = impl_of(c);
    if (m) {
        cudaStreamSynchronize(m->stream);
        ncclCommDestroy(m->comm);
        cudaStreamDestroy(m->stream);
        free(m);
    }
    free(c);
}

static const dkb__comm_ops nccl_ops = {
    .name = "nccl",
    .barrier = nccl_barrier,
    .bcast = nccl_bcast,
    .allreduce = nccl_allreduce,
    .allgather_sizes = nccl_allgather_sizes,
    .allgatherv = nccl_allgatherv,
    .abort = nccl_abort,
    .close = nccl_close,
};

int dkb__comm_nccl_module_open(dkb__comm *boot, int device, dkb__comm **out, dkb_error *err);
int dkb__comm_nccl_module_open(dkb__comm *boot, int device, dkb__comm **out, dkb_error *err) {
    *out = NULL;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    /* every rank reaches the broadcast and the agreement after it, whatever
     * its own CUDA state: ncclCommInitRank waits for every rank, so a rank
     * that failed before it would leave the others waiting */
    nccl_impl *m = calloc(1, sizeof *m);
    dkb__comm *c = calloc(1, sizeof *c);
    int rc = !m || !c ? dkb__comm_module_fail(err, DKB_ENOMEM, "NCCL communicator: out of memory") : 0;
    if (!rc) rc = CUDA_CHECK(cudaSetDevice(device), err);
    if (!rc) rc = CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking), err);
    if (boot->rank == 0 && !rc) rc = NCCL_CHECK(ncclGetUniqueId(&id), err);
    dkb_error berr = {0};
    int64_t bad = rc != 0;
    int brc = boot->ops->bcast(boot, &id, sizeof id, 0, &berr);
    if (!brc) brc = boot->ops->allreduce(boot, &bad, 1, DKB__COMM_I64, DKB__COMM_MAX, &berr);
    if (brc) rc = dkb__comm_module_fail(err, brc, "NCCL bootstrap: %s", berr.msg);
    else if (!rc && bad) rc = dkb__comm_module_fail(err, DKB_EIO, "NCCL bootstrap: another rank failed to set up");
    if (!rc) {
        m->boot = boot, m->device = device;
        rc = NCCL_CHECK(ncclCommInitRank(&m->comm, boot->size, id, boot->rank), err);
    }
    if (rc) {
        if (m && m->stream) cudaStreamDestroy(m->stream);
        free(m), free(c);
        return rc;
    }
    c->ops = &nccl_ops;
    c->rank = boot->rank, c->size = boot->size, c->local_rank = boot->local_rank;
    c->impl = m;
    *out = c;
    return 0;
}
