/* worker_ranks.h: the collectives a candidate finds in env->comm
 * (candidate.h, "ranks"), and the worker's own across ranks.
 *
 * On one rank (every `dkb eval` not started by mpirun, and a candidate
 * without DKB_CANDIDATE_RANKS, which runs whole on rank 0) the one-rank
 * table: each collective checks its arguments and gives back the caller's
 * own values. On K ranks (the job's "ranks") every collective is relayed
 * to this rank's evaluating process through the pipes of relay.h, which
 * exchanges it with the other ranks'; the reductions are done here, in
 * rank order, so every rank gets the same bits. Called from candidate code
 * inside its call: no allocation; read and write on the relay's pipes are
 * the only system calls. After one failed exchange (another rank ended, or
 * the ranks were in different collectives) every later one fails at once:
 * the row is lost on every rank. */
#ifndef DKB_HARNESS_WORKER_RANKS_H
#define DKB_HARNESS_WORKER_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "dist/comm.h"   // defines: dkb__comm
#include "dkb/candidate.h"

/* The one-rank table (static storage, read-only). */
const dkb_cand_comm *dkb__wranks_single(void);

/* This worker is rank `rank` of `nranks` (> 1), its relay on the fds of
 * relay.h. */
void dkb__wranks_init(int rank, int nranks);
/* The relayed table for env->comm (static storage). */
const dkb_cand_comm *dkb__wranks_table(void);
/* A communicator over the relay for the harness's own collectives (the
 * baseline's dkb__query_run_ranks); static storage, never closed. */
dkb__comm *dkb__wranks_comm(void);
/* Has an exchange failed? Then msg says why (the relay's line). */
int dkb__wranks_broken(char *msg, size_t n);
/* Did this rank's failed exchange make it the rank out of step (the relay
 * blamed it: it returned without a collective the others wait in)? */
int dkb__wranks_blamed(void);

/* The harness's agreement after a candidate call: every rank's record
 * (verdict, time, message) gathered; OUT *v and msg the lowest failing
 * rank's (msg prefixed "rank R: " for R > 0, so the same on every rank),
 * *ms the largest. 0, or -1 when the exchange failed (dkb__wranks_broken). */
int dkb__wranks_agree(int *v, double *ms, char *msg, size_t n);

#endif
