/* dist_nccl.h: the NCCL communicator of `dkb run --comm nccl` on the CUDA
 * backend (internal; docs/distributed.md). */
#ifndef DKB_DIST_NCCL_H
#define DKB_DIST_NCCL_H

#include "dist/comm.h"  // defines: dkb__comm

/* What opening it found and measured. */
typedef struct dkb__nccl_info {
    int device;          /* this rank's CUDA device */
    char bus_id[32];     /* and its PCI bus id */
    double init_ms;      /* ncclGetUniqueId, its broadcast, ncclCommInitRank (this rank) */
    double allreduce_us; /* the self-check: median time of an all-reduce of one int64, */
    double allgather_us; /* and of dkb__comm_allgather_bytes (the sizes, a flag, the bytes: 1 from rank 0, 2
                          * from rank 1, ...), as the partials are gathered, */
    int64_t allgather_bytes; /* the bytes that all-gather gathers (all ranks') */
    int reps;            /* over reps calls, host copies included (rank 0's clock) */
} dkb__nccl_info;

/* A collective over the ranks of boot (an open "mpi" or "single"
 * communicator, which must outlive *out; the CUDA device `device` current
 * on the calling thread, dkb__dist_use_device): refuse ranks that would
 * share a GPU (NCCL takes one GPU per rank; a GPU is its PCI bus id on a
 * host, the host $NCCL_HOSTID or the host name, as NCCL tells them),
 * open the NCCL communicator on `device`, wrap it in the staging
 * communicator (host buffers, dkb__comm_open_staged) and check it: an
 * all-reduce and an all-gather whose answers are known, timed. OUT *out
 * (close with dkb__comm_close; boot stays open), *info (may be NULL).
 * Every rank returns the same: 0, or the lowest failing rank's error
 * (dkb__comm_agree's "rank R: ..."), e.g. "ranks 0 and 1 would share GPU
 * ...". */
int dkb__dist_open_nccl(dkb__comm *boot, int device, dkb__comm **out, dkb__nccl_info *info, dkb_error *err);

#endif
