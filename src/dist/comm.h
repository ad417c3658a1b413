/* comm.h: the communicator of a run over several processes (ranks), one
 * interface with three implementations (internal; docs/distributed.md):
 *
 *   single  this process alone (rank 0 of 1): every collective is a copy.
 *           Always there; a run not started by mpirun gets it, and needs
 *           no MPI or NCCL library at run time.
 *   mpi     MPI_COMM_WORLD (comm_mpi.c, built as dkb_comm_mpi.so beside
 *           dkb and loaded only when the process was started by mpirun, so
 *           dkb itself does not link libmpi). Host buffers.
 *   nccl    an NCCL communicator over the same ranks (comm_nccl.c, built
 *           as dkb_comm_nccl.so; bootstrapped by the mpi communicator's
 *           broadcast of NCCL's unique id). Device buffers: every buffer
 *           argument is CUDA device memory. `dkb run --comm nccl` uses it
 *           through the staging communicator below (host buffers copied to
 *           the device and back; dist_nccl.h).
 *
 * Plans and the CLI are written once against dkb__comm_*; which
 * implementation is behind a communicator is its business. Every call is a
 * collective: all ranks call it in the same order with matching arguments
 * (the same count, dtype, op, root), and it returns when this rank's part
 * is done. Errors (a failed MPI or NCCL call) name the operation; after one
 * the ranks cannot be assumed to agree, so the caller stops (and aborts,
 * when other ranks may be left waiting). */
#ifndef DKB_DIST_COMM_H
#define DKB_DIST_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"  // defines: dkb_error, DKB_E*

typedef struct dkb__comm dkb__comm;

typedef enum { DKB__COMM_I64 = 0, DKB__COMM_F64 } dkb__comm_dtype;
typedef enum { DKB__COMM_SUM = 0, DKB__COMM_MIN, DKB__COMM_MAX } dkb__comm_op;

/* One implementation's operations (the table behind a dkb__comm; see the
 * wrappers below for the contracts). */
typedef struct dkb__comm_ops {
    const char *name; /* "single", "mpi", "nccl" */
    int (*barrier)(dkb__comm *c, dkb_error *err);
    int (*bcast)(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err);
    int (*allreduce)(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op, dkb_error *err);
    int (*allgather_sizes)(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err);
    int (*allgatherv)(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                      dkb_error *err);
    void (*abort)(dkb__comm *c, int code);
    void (*close)(dkb__comm *c);
    /* Non-blocking all-gather of variable-length bytes (the evaluating
     * processes' relay, src/harness/relay.c): as allgatherv, started now;
     * *req (NULL when it completed at once) is tested until done. NULL in
     * an implementation without it (nccl, staged). */
    int (*iallgatherv)(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts, void **req,
                       dkb_error *err);
    /* *done := whether req has completed (then it is freed). */
    int (*test)(dkb__comm *c, void *req, int *done, dkb_error *err);
} dkb__comm_ops;

/* A communicator: filled by its implementation's open, read-only after. */
struct dkb__comm {
    const dkb__comm_ops *ops;
    int rank, size;   /* 0 <= rank < size */
    int local_rank;   /* rank among the ranks of this node (the GPU it uses: local_rank mod the node's GPUs) */
    void *impl;       /* the implementation's state */
};

/* ---- opening ---- */

/* Open the communicator of this process: "mpi" when it was started by
 * mpirun (Open MPI's OMPI_COMM_WORLD_SIZE, or PMIX_RANK / PMI_RANK of
 * another launcher), else "single". OUT *out (close with dkb__comm_close).
 * DKB_ENOENT "... started by mpirun but ..." when this build has no MPI or
 * dkb_comm_mpi.so cannot be loaded (the path is named); an MPI_Init failure
 * as DKB_EIO. $DKB_COMM_MPI names the module to load instead of the one
 * beside dkb. */
int dkb__comm_open(dkb__comm **out, dkb_error *err);

/* How many ranks the MPI launcher that started this process says it
 * started ($OMPI_COMM_WORLD_SIZE or $PMI_SIZE), without starting MPI: 1
 * when not started by one, 0 when a launcher is there but says no count. */
int dkb__comm_launched_size(void);
/* And this process's rank by the launcher ($OMPI_COMM_WORLD_RANK,
 * $PMIX_RANK or $PMI_RANK): 0 when not started by one or none is given. */
int dkb__comm_launched_rank(void);

/* The single-process communicator (rank 0 of 1), never failing but for
 * memory. */
int dkb__comm_open_single(dkb__comm **out, dkb_error *err);

/* An NCCL communicator over the ranks of `boot` (an open "mpi" or "single"
 * communicator, which stays open and must outlive it), on CUDA device
 * `device` of this node. DKB_ENOENT when this build has no NCCL module or
 * it cannot be loaded; NCCL's and CUDA's errors as DKB_EIO naming the call. */
int dkb__comm_open_nccl(dkb__comm *boot, int device, dkb__comm **out, dkb_error *err);

/* Load the NCCL module now (once; dkb__comm_open_nccl would load it), so
 * that a run asking for NCCL is refused before it starts when it cannot
 * have it: 0, or DKB_ENOENT "this dkb was built without NCCL ..." or the
 * loader's message (the module's path; $DKB_COMM_NCCL). Not a collective. */
int dkb__comm_nccl_load(dkb_error *err);

/* A host-buffer communicator over `dev`, a device-buffer one ("nccl"),
 * on the current CUDA device (comm_staged.c): every collective copies its
 * host buffers into device memory, runs dev's collective there and copies
 * the result back; sizes go through dev's allgather_sizes (host values).
 * Takes dev (its close closes dev). Name "nccl", rank and size dev's.
 * DKB_ENOENT in a build without CUDA; CUDA's errors as DKB_EIO. A staging
 * buffer that cannot grow on one rank fails the collective on every rank
 * (agreed through dev's sizes gather); any other CUDA failure of a copy
 * prints one line and stops every rank (dkb__comm_abort), as a failed MPI
 * call does: the other ranks are already in the collective. */
int dkb__comm_open_staged(dkb__comm *dev, dkb__comm **out, dkb_error *err);

/* MPI_Finalize for "mpi" (then the process should exit soon); frees c.
 * NULL is fine. */
void dkb__comm_close(dkb__comm *c);

/* ---- collectives (all ranks, same order) ---- */

static inline int dkb__comm_rank(const dkb__comm *c) { return c->rank; }
static inline int dkb__comm_size(const dkb__comm *c) { return c->size; }
static inline const char *dkb__comm_name(const dkb__comm *c) { return c->ops->name; }

/* Every rank has entered it. */
int dkb__comm_barrier(dkb__comm *c, dkb_error *err);
/* IN/OUT buf[0, bytes): root's bytes, on every rank. */
int dkb__comm_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err);
/* IN/OUT buf: count int64 or double values, replaced in place by their
 * sum, min or max over the ranks (elementwise). */
int dkb__comm_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                        dkb_error *err);
/* IN mine; OUT all[r] (host memory, size entries): rank r's value. */
int dkb__comm_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err);
/* IN send[0, bytes); counts[r] (host, size entries: rank r's bytes, as
 * dkb__comm_allgather_sizes gave; counts[rank] == bytes). OUT recv (caller
 * allocated, sum of counts bytes): rank 0's bytes, then rank 1's, ... */
int dkb__comm_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                         dkb_error *err);
/* Non-blocking dkb__comm_allgatherv (host buffers; mpi and single only):
 * started now, every rank in the same order as the other collectives;
 * send and recv stay valid until dkb__comm_test says done. OUT *req (NULL:
 * complete already). Total bytes below 2^30. DKB_EINVAL for a communicator
 * without it. */
int dkb__comm_iallgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                          void **req, dkb_error *err);
/* Has req (from dkb__comm_iallgatherv; NULL: yes) completed? *done 1 (req
 * freed) or 0. Never blocks. */
int dkb__comm_test(dkb__comm *c, void *req, int *done, dkb_error *err);
/* Stop every rank now with exit status code (MPI_Abort; exit for
 * "single"); does not return. For a rank that cannot take part in the
 * next collective: the caller prints its one line first. */
_Noreturn void dkb__comm_abort(dkb__comm *c, int code);

/* ---- helpers built on the collectives (host buffers: "single" or "mpi") ---- */

/* Every rank's bytes, in rank order: OUT *all (malloc'ed, free()), lens[r]
 * (size entries, caller allocated). */
int dkb__comm_allgather_bytes(dkb__comm *c, const void *mine, int64_t bytes, unsigned char **all, int64_t *lens,
                              dkb_error *err);

/* Agree on an outcome: every rank passes its status rc (0 ok) and, when
 * rc != 0, its message in *err. Returns 0 when every rank passed 0; else
 * the lowest failing rank's rc, with err set on every rank to that rank's
 * message prefixed "rank R: " (R its rank; no prefix with one rank, or when
 * every rank failed with the same message). A failure of the collective
 * itself is returned as such. */
int dkb__comm_agree(dkb__comm *c, int rc, dkb_error *err);

/* This rank's share of n items split over the ranks in order: OUT [*lo,
 * *hi), consecutive ranges covering 0..n-1, sizes differing by at most 1
 * (8 over 3 ranks: 0-1, 2-4, 5-7); empty when n < size for some ranks. */
void dkb__comm_share(const dkb__comm *c, int n, int *lo, int *hi);

#endif
