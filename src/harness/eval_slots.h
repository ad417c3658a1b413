/* eval_slots.h: rows spread over slots that run at once (internal to the
 * harness; docs/harness.md, "Several GPUs").
 *
 * dkb eval times one worker at a time per device: on the CPU there is one
 * slot (timed runs stay exclusive), on CUDA one per GPU. With several
 * slots every slot is a thread that takes the next row not yet taken and
 * runs it with its own context (its GPU), so rows go to whichever GPU is
 * free, and no two rows ever run on one slot at once. */
#ifndef DKB_HARNESS_EVAL_SLOTS_H
#define DKB_HARNESS_EVAL_SLOTS_H

#include "dkb/error.h"
#include <stddef.h>

#include "common/progress.h"   // defines: dkb_progress

/* One row: 0, or an error that stops the evaluation. */
typedef int (*dkb__slot_row_fn)(void *slot_ctx, int row, dkb_error *err);

/* Run rows 0 .. nrows-1, each exactly once, on nslots slots (slot s calls
 * fn(ctx[s], row, ...)); progress ("eval", rows done, nrows) is reported
 * from one thread at a time. After the first error no new row starts; the
 * rows already running finish; that error (the lowest row's, when several
 * fail) is returned. nslots 1 runs the rows in order on this thread. */
int dkb__eval_slots_run(int nslots, void *const *ctx, int nrows, dkb__slot_row_fn fn, const dkb_progress *progress,
                        dkb_error *err);

/* CUDA_VISIBLE_DEVICES for slot s of a machine whose evaluating process
 * sees the devices `visible` (its own CUDA_VISIBLE_DEVICES, NULL or "" when
 * unset: every device, numbered 0 ..): the s-th entry ("2,3", s 1: "3"),
 * or s itself when unset. 0, or -1 when there is no s-th entry or out is
 * too small. */
int dkb__eval_slot_devices(const char *visible, int s, char *out, size_t n);

#endif
