/* comm_single.c: the communicator of one process (rank 0 of 1), the one a
 * run not started by mpirun gets: every collective is a copy or nothing. */
#include <stdlib.h>
#include <string.h>

#include "dist/comm.h"

static int single_barrier(dkb__comm *c, dkb_error *err) {
    (void)c, (void)err;
    return 0;
}

/* root and counts were checked by comm.c's wrappers */
static int single_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    (void)c, (void)buf, (void)bytes, (void)root, (void)err;
    return 0;
}

static int single_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                            dkb_error *err) {
    (void)c, (void)buf, (void)count, (void)dtype, (void)op, (void)err;
    return 0;
}

static int single_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    (void)c, (void)err;
    all[0] = mine;
    return 0;
}

static int single_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                             dkb_error *err) {
    (void)c, (void)counts, (void)err;
    if (bytes) memmove(recv, send, (size_t)bytes);
    return 0;
}

/* complete at once: *req stays NULL */
static int single_iallgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                              void **req, dkb_error *err) {
    *req = NULL;
    return single_allgatherv(c, send, bytes, recv, counts, err);
}

static int single_test(dkb__comm *c, void *req, int *done, dkb_error *err) {
    (void)c, (void)req, (void)err;
    *done = 1;
    return 0;
}

static void single_abort(dkb__comm *c, int code) {
    (void)c;
    exit(code);
}

static void single_close(dkb__comm *c) { free(c); }

static const dkb__comm_ops single_ops = {
    .name = "single",
    .barrier = single_barrier,
    .bcast = single_bcast,
    .allreduce = single_allreduce,
    .allgather_sizes = single_allgather_sizes,
    .allgatherv = single_allgatherv,
    .abort = single_abort,
    .close = single_close,
    .iallgatherv = single_iallgatherv,
    .test = single_test,
};

int dkb__comm_open_single(dkb__comm **out, dkb_error *err) {
    dkb__comm *c = calloc(1, sizeof *c);
    if (!c) return dkb_fail(err, DKB_ENOMEM, "communicator: out of memory");
    c->ops = &single_ops;
    c->rank = 0, c->size = 1, c->local_rank = 0;
    *out = c;
    return 0;
}
