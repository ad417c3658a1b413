/* worker_ranks.h: the collectives a candidate finds in env->comm
 * (candidate.h, "ranks"). Today a call runs on one rank (rank 0 of 1), and
 * these are the one-rank collectives: each checks its arguments and gives
 * back the caller's own values. docs/distributed.md ("The harness across
 * ranks") has the design of K ranks, where the same table relays each
 * collective to the evaluating process. */
#ifndef DKB_HARNESS_WORKER_RANKS_H
#define DKB_HARNESS_WORKER_RANKS_H

#include "dkb/candidate.h"

/* The one-rank table (static storage, read-only). */
const dkb_cand_comm *dkb__wranks_single(void);

#endif
