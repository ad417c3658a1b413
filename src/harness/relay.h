/* relay.h: the collectives of a sandboxed worker across the ranks of
 * `mpirun -np K dkb eval` (internal; docs/distributed.md, "The harness
 * across ranks").
 *
 * The worker runs candidate code under a system call filter and has no
 * MPI: its collectives (the candidate's env->comm, the baseline's gathers
 * through dkb__query_run_ranks, the harness's own agreements) go as
 * requests on a pipe to the evaluating process of its rank (fd 5, worker
 * to parent) and come back as answers (fd 6). Each rank's evaluating
 * process (the parent) relays them over MPI in rounds that never block:
 * every round is a non-blocking all-gather of each rank's header (its
 * worker running, in a request, or ended); when every rank is in the same
 * request the payloads follow (one more non-blocking all-gather, bytes in
 * rank order) and each parent answers its worker with all of them (the
 * worker reduces them itself, in rank order, so the result is the same on
 * every rank). A request while another rank's worker has ended, or while
 * the ranks are in different collectives, is answered with a failure at
 * once: no worker waits on a peer that is gone, and nobody waits longer
 * than the row's timeout (the worker that never calls is killed by its
 * own parent then). The parents keep posting rounds between requests (a
 * heartbeat) and after their worker ended, until every rank's has.
 *
 * The wire format below is shared by both sides (worker_ranks.c is the
 * worker's). */
#ifndef DKB_HARNESS_RELAY_H
#define DKB_HARNESS_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "dist/comm.h"        // defines: dkb__comm
#include "harness/harness.h"  // defines: dkb_verdict

#define DKB__RELAY_REQ_FD 5   /* the worker writes its requests here */
#define DKB__RELAY_ANS_FD 6   /* and reads the answers here */
#define DKB__RELAY_MAGIC 0x6462726cu
#define DKB__RELAY_MAX_BYTES ((int64_t)1 << 28)   /* one rank's payload, at most */
#define DKB__RELAY_MSG 256

/* whose collective */
enum { DKB__RELAY_HARNESS = 1, DKB__RELAY_CAND = 2 };
/* which (for matching the ranks' requests and naming them) */
enum {
    DKB__RELAY_BARRIER = 1,
    DKB__RELAY_BCAST,
    DKB__RELAY_ALLREDUCE_I64,
    DKB__RELAY_ALLREDUCE_F64,
    DKB__RELAY_ALLREDUCE_I128,
    DKB__RELAY_ALLGATHER_SIZES,
    DKB__RELAY_ALLGATHERV,
    DKB__RELAY_AGREE,      /* the harness's agreement after a candidate call */
};
/* answers */
enum {
    DKB__RELAY_OK = 0,
    DKB__RELAY_PEER_GONE = 1,   /* another rank's worker has ended */
    DKB__RELAY_VICTIM = 2,      /* the ranks are in different collectives; not this rank's doing */
    DKB__RELAY_BLAMED = 3,      /* ... and this rank is the one out of step */
};

/* worker -> parent: this header, then `bytes` bytes of payload */
typedef struct dkb__relay_req {
    uint32_t magic;
    int32_t kind, op, redop;   /* redop: the reduction (DKB_CAND_SUM...), 0 otherwise; root for a bcast */
    int64_t count;             /* elements (allreduce), 0 otherwise */
    int64_t bytes;
    int64_t seq;               /* the worker's requests, numbered from 1 */
} dkb__relay_req;

/* parent -> worker: this header, then nranks int64 lengths, then their
 * bytes in rank order (status OK only; else nothing follows) */
typedef struct dkb__relay_ans {
    int32_t status, nranks;
    char msg[DKB__RELAY_MSG];  /* why, when status is not OK */
} dkb__relay_ans;

/* ---- the parent's side (relay.c) ---- */

typedef struct dkb__relay dkb__relay;

/* A relay over comm (mpi, several ranks; it must outlive the relay). */
int dkb__relay_open(dkb__comm *comm, dkb__relay **out, dkb_error *err);
void dkb__relay_close(dkb__relay *r);

/* A job starts on this rank (its worker not started yet: it counts as
 * running). Every rank begins and ends the same jobs in the same order. */
void dkb__relay_job_begin(dkb__relay *r);
/* The sandbox started the worker: its ends of the pipes, and the time
 * (dkb__now_s) past which the sandbox kills it. */
void dkb__relay_attach(dkb__relay *r, int req_fd, int ans_fd, double deadline);
/* One step from the sandbox's poll loop: read a request, move the rounds
 * on, answer. Never waits longer than a few ms. An MPI failure stops every
 * rank (dkb__comm_abort): the ranks could not agree any more. */
void dkb__relay_poll(dkb__relay *r);
/* The fd to poll for requests (-1: none). */
int dkb__relay_req_fd(const dkb__relay *r);
/* The sandbox is killing the worker (timeout, memory, output): if it was
 * waiting in a request, its end is the others' doing (a follower). */
void dkb__relay_killed(dkb__relay *r);
/* The worker has been reaped: its pipes are closed by the sandbox. */
void dkb__relay_detach(dkb__relay *r);
/* After the job (started or not): rounds until every rank's worker has
 * ended. */
void dkb__relay_job_end(dkb__relay *r);

/* How this rank's worker ended, as the relay saw it: *follower 1 when a
 * request of it failed because of another rank (or it was killed while
 * waiting in one); 1 returned when it was the rank out of step (then *v
 * and detail say how: returned_error "returned without the collective
 * ..." or the ranks' different collectives). */
int dkb__relay_outcome(const dkb__relay *r, int *follower, dkb_verdict *v, char *detail, size_t n);

#endif
