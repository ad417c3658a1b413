/* worker_stream_cuda.h: the device side of the loader a full-mode CUDA
 * candidate calls under a memory budget (worker_stream.c keeps the
 * bookkeeping: limits, ids, descriptors; this moves the bytes). One device
 * region of `size` bytes holds the loads; worker_stream.c places them.
 *
 *   open      the region (overwritten once), pinned staging, a copy stream
 *   copy      len bytes of host memory (the store's mapping) to region
 *             offset off, through staging, on the copy stream (returns once
 *             the last piece is issued); offsets: int64 values less rebase
 *   issued    the load's copies are all issued: the candidate's stream
 *             waits for them
 *   release   overwrite [off, off + len) on the candidate's stream (after
 *             what it enqueued there before) and order every later copy
 *             after that
 *   call_end  after a call (the device idle): overwrite the whole region
 *
 * Every function but close returns 0 or a DKB_* code with err set; a
 * build without CUDA refuses open. */
#ifndef DKB_HARNESS_WORKER_STREAM_CUDA_H
#define DKB_HARNESS_WORKER_STREAM_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"

typedef struct dkb__wsdev dkb__wsdev;

/* Where a load of len bytes goes in a region of `size` bytes beside the n
 * loads held, [off[i], off[i] + len[i]) (any order, not overlapping): in a
 * gap between them (or the region's ends) that holds it, at the gap's
 * start or at its end (rounded down to `align`), whichever is farther from
 * the loads held (the lower address on a tie). So with two loads held in
 * turn (the next one loaded before the current is released) they sit at
 * the region's two ends and each new one fits where the one before the
 * current was, whatever their sizes, when any two fit together. 1 and
 * *out, or 0 when no gap holds it. Plain C (a unit test runs it). */
int dkb__wsdev_place(const size_t *off, const size_t *len, int n, size_t size, size_t want, size_t align,
                     size_t *out);

/* *out is set (also on failure: close it). */
int dkb__wsdev_open(size_t size, int threads, dkb__wsdev **out, dkb_error *err);
char *dkb__wsdev_region(const dkb__wsdev *d);
size_t dkb__wsdev_size(const dkb__wsdev *d);
int dkb__wsdev_copy(dkb__wsdev *d, size_t off, const void *src, size_t len, int offsets, int64_t rebase,
                    dkb_error *err);
int dkb__wsdev_issued(dkb__wsdev *d, void *stream, dkb_error *err);
int dkb__wsdev_release(dkb__wsdev *d, size_t off, size_t len, void *stream, dkb_error *err);
int dkb__wsdev_call_end(dkb__wsdev *d, dkb_error *err);
void dkb__wsdev_close(dkb__wsdev *d);

#endif
