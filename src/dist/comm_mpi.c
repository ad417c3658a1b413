/* comm_mpi.c: the MPI communicator (MPI_COMM_WORLD), host buffers. Built
 * as the module dkb_comm_mpi.so, linked against libmpi, and loaded by
 * comm.c only in a process that mpirun started (comm_module.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "dist/comm_module.h"

const int dkb__comm_module_abi = DKB__COMM_MODULE_ABI;


/* An MPI call's failure: "MPI_Allreduce: <MPI's error string>". */
static int check(int mrc, const char *what, dkb_error *err) {
    if (mrc == MPI_SUCCESS) return 0;
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(mrc, s, &n) != MPI_SUCCESS) snprintf(s, sizeof s, "error %d", mrc);
    return dkb__comm_module_fail(err, DKB_EIO, "%s: %s", what, s);
}

/* MPI counts are int: larger transfers go in pieces of at most this. */
#define PIECE ((int64_t)1 << 30)

static int mpi_barrier(dkb__comm *c, dkb_error *err) {
    (void)c;
    return check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", err);
}

static int mpi_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    (void)c;
    size_t at = 0;
    do { /* at least one call: a broadcast of 0 bytes is still collective */
        size_t n = bytes - at < (size_t)PIECE ? bytes - at : (size_t)PIECE;
        int rc = check(MPI_Bcast((char *)buf + at, (int)n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast", err);
        if (rc) return rc;
        at += n;
    } while (at < bytes);
    return 0;
}

static int mpi_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                         dkb_error *err) {
    (void)c;
    MPI_Datatype t = dtype == DKB__COMM_F64 ? MPI_DOUBLE : MPI_INT64_T;
    MPI_Op o = op == DKB__COMM_MIN ? MPI_MIN : op == DKB__COMM_MAX ? MPI_MAX : MPI_SUM;
    size_t w = 8, piece = (size_t)PIECE / w;
    for (size_t at = 0; at < count; at += piece) {
        size_t n = count - at < piece ? count - at : piece;
        int rc = check(MPI_Allreduce(MPI_IN_PLACE, (char *)buf + at * w, (int)n, t, o, MPI_COMM_WORLD),
                       "MPI_Allreduce", err);
        if (rc) return rc;
    }
    return 0;
}

static int mpi_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    (void)c;
    return check(MPI_Allgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD), "MPI_Allgather", err);
}

/* One MPI_Allgatherv when every count and displacement fits an int, else
 * one broadcast per rank (in pieces). */
static int mpi_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                          dkb_error *err) {
    int64_t total = 0;
    for (int r = 0; r < c->size; r++) total += counts[r];
    if (total < PIECE) {
        int *cn = malloc(sizeof *cn * (size_t)c->size), *at = malloc(sizeof *at * (size_t)c->size);
        if (!cn || !at) {
            free(cn), free(at);
            return dkb__comm_module_fail(err, DKB_ENOMEM, "MPI_Allgatherv: out of memory");
        }
        int64_t off = 0;
        for (int r = 0; r < c->size; r++) cn[r] = (int)counts[r], at[r] = (int)off, off += counts[r];
        /* MPI_IN_PLACE: this rank's bytes copied into place first */
        if (bytes) memmove((char *)recv + at[c->rank], send, (size_t)bytes);
        int rc = check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, recv, cn, at, MPI_BYTE, MPI_COMM_WORLD),
                       "MPI_Allgatherv", err);
        free(cn), free(at);
        return rc;
    }
    int64_t off = 0;
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank && bytes) memmove((char *)recv + off, send, (size_t)bytes);
        int rc = counts[r] ? mpi_bcast(c, (char *)recv + off, (size_t)counts[r], r, err) : 0;
        if (rc) return rc;
        off += counts[r];
    }
    return 0;
}

/* A non-blocking all-gather in flight: MPI's request and the int counts
 * and displacements it reads until it completes. */
typedef struct mpi_ireq {
    MPI_Request req;
    int *cn, *at;
} mpi_ireq;

static int mpi_iallgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                           void **req, dkb_error *err) {
    *req = NULL;
    mpi_ireq *q = calloc(1, sizeof *q);
    int *cn = malloc(sizeof *cn * (size_t)c->size), *at = malloc(sizeof *at * (size_t)c->size);
    if (!q || !cn || !at) {
        free(q), free(cn), free(at);
        return dkb__comm_module_fail(err, DKB_ENOMEM, "MPI_Iallgatherv: out of memory");
    }
    int64_t off = 0;
    for (int r = 0; r < c->size; r++) cn[r] = (int)counts[r], at[r] = (int)off, off += counts[r];
    if (bytes) memmove((char *)recv + at[c->rank], send, (size_t)bytes);
    int rc = check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, recv, cn, at, MPI_BYTE, MPI_COMM_WORLD, &q->req),
                   "MPI_Iallgatherv", err);
    if (rc) {
        free(q), free(cn), free(at);
        return rc;
    }
    q->cn = cn, q->at = at;
    *req = q;
    return 0;
}

static int mpi_test(dkb__comm *c, void *req, int *done, dkb_error *err) {
    (void)c;
    mpi_ireq *q = req;
    int flag = 0;
    int rc = check(MPI_Test(&q->req, &flag, MPI_STATUS_IGNORE), "MPI_Test", err);
    *done = flag;
    if (rc || flag) {
        free(q->cn), free(q->at), free(q);
        *done = 1;
    }
    return rc;
}

static void mpi_abort(dkb__comm *c, int code) {
    (void)c;
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static void mpi_close(dkb__comm *c) {
    int fin = 0;
    if (MPI_Finalized(&fin) == MPI_SUCCESS && !fin) MPI_Finalize();
    free(c);
}

static const dkb__comm_ops mpi_ops = {
    .name = "mpi",
    .barrier = mpi_barrier,
    .bcast = mpi_bcast,
    .allreduce = mpi_allreduce,
    .allgather_sizes = mpi_allgather_sizes,
    .allgatherv = mpi_allgatherv,
    .abort = mpi_abort,
    .close = mpi_close,
    .iallgatherv = mpi_iallgatherv,
    .test = mpi_test,
};

int dkb__comm_mpi_module_open(dkb__comm **out, dkb_error *err);
int dkb__comm_mpi_module_open(dkb__comm **out, dkb_error *err) {
    int init = 0, rc;
    if ((rc = check(MPI_Initialized(&init), "MPI_Initialized", err))) return rc;
    if (!init && (rc = check(MPI_Init(NULL, NULL), "MPI_Init", err))) return rc;
    /* errors come back as codes (reported as one line each), not MPI's
     * default of aborting every rank from inside the call */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    dkb__comm *c = calloc(1, sizeof *c);
    if (!c) return dkb__comm_module_fail(err, DKB_ENOMEM, "communicator: out of memory");
    c->ops = &mpi_ops;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    /* the ranks of this node: a communicator split by shared memory */
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &c->local_rank);
        MPI_Comm_free(&node);
    } else {
        c->local_rank = c->rank;
    }
    *out = c;
    return 0;
}
