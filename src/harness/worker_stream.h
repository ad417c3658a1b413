/* worker_stream.h: the worker's side of a full-mode candidate under a
 * memory budget (candidate.h, "full mode under a memory budget"): the
 * budget's description handed over in env->budget, the database view with
 * the streamed tables' data hidden, and the loader that copies partitions
 * into harness memory while the candidate runs.
 *
 * What the loader enforces (docs/harness.md, "Candidates under a memory
 * budget"): the loads held at once total at most load_limit bytes (a load
 * past it is refused, DKB_CAND_ENOMEM); every load lives in one region the
 * worker reserved at setup, page-aligned, never reused within a call, made
 * read-only once filled (a write is wrote_input) and inaccessible
 * (PROT_NONE) when released and after every call (a read then is a crash
 * naming it); the loads of one
 * call total at most the region (4 x the streamed tables' bytes); nothing
 * of an earlier call is readable in a load, nor written there for a later
 * one (ids count from 1 per call, an out into the region is refused). The
 * loader locks, so any thread may call it. Its last refusal is kept, for
 * the row's detail when the candidate then returns an error. */
#ifndef DKB_HARNESS_WORKER_STREAM_H
#define DKB_HARNESS_WORKER_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/candidate.h"
#include "dkb/error.h"
#include "dkb/store.h"
#include "harness/adapter.h"  // defines: dkb_ro_arena

/* Build the budget for a candidate (in ro, before it is sealed): `budget`
 * bytes; streamed[0..1] the tables the query streams (NULL entries: none;
 * nstream 0 when the query fits); load_limit the bytes loads may hold at
 * once. With tables to stream their columns in *cdb (the view
 * dkb__adapt_db built in ro, not yet sealed) get data = bytes = NULL, the
 * load region is reserved and its fault range registered. *out points into
 * ro. 0, DKB_ENOMEM, DKB_EINVAL (a table missing, partitions that differ). */
int dkb__wstream_setup(const dkb_store *db, const dkb_cand_db *cdb, const char *const streamed[2], int64_t budget,
                       int64_t load_limit, dkb_ro_arena *ro, const dkb_cand_budget **out, dkb_error *err);

/* CUDA: loads go to device memory (worker_stream_cuda.h), load_limit plus
 * slack allocated now; fill threads for the staging. After setup; 0 when
 * nothing streams. */
int dkb__wstream_use_cuda(int threads, dkb_error *err);
/* The device side's memory given back (at the worker's end). */
void dkb__wstream_close(void);

/* Around every candidate call: begin clears the call's records; end
 * (after the call, outside its timed window) unmaps everything the call
 * loaded, released or not (CUDA: and overwrites the device region), and
 * gives the bytes it loaded in all; 0, or a CUDA error. */
void dkb__wstream_call_begin(void);
int dkb__wstream_call_end(int64_t *loaded_bytes, dkb_error *err);

/* The loader's last refusal in the call just ended ("" when none). */
const char *dkb__wstream_last_error(void);

#endif
