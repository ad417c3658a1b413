/* harness_cuda.h: the CUDA parts of the harness (dkb eval --backend cuda).
 *
 *   eval_cuda.c      the evaluating process: loads the store's columns onto
 *                    the GPU once (a CUDA TensorPlan context, one cudaMalloc
 *                    per column), exports them as CUDA IPC handles for the
 *                    workers, and after every worker run checksums them on
 *                    the device and re-uploads any a candidate changed;
 *   worker_cuda.c    the worker: opens the handles, adopts them as the
 *                    resident columns of its CUDA contexts, gives the
 *                    candidate device views, poisons device outputs, times
 *                    calls with CUDA events (L2 flushed before each), watches
 *                    the inputs' checksums, measures device bandwidth;
 *   cuda_checksum.cu the device kernels (a 64-bit hash of device bytes).
 *
 * Every function here exists in every build; without CUDA (DKB_HAVE_CUDA
 * undefined) they fail with DKB_EINVAL "not built with CUDA".
 *
 * The columns handed to a worker (job "cuda_columns"), one object each:
 *   {"table": "lineitem", "column": "l_shipdate",
 *    "data": "<128 hex digits: cudaIpcMemHandle_t of the values / offsets>",
 *    "data_size": 240000,        bytes of data (TEXT: rows + 1 int64 offsets)
 *    "bytes": "<128 hex>" | null, TEXT: the characters' handle
 *    "nbytes": 1234}              TEXT: characters */
#ifndef DKB_HARNESS_CUDA_H
#define DKB_HARNESS_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkb/candidate.h"
#include "dkb/error.h"
#include "dkb/store.h"
#include "dkb/tensor.h"
#include "harness/adapter.h"
#include "harness/attrib.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device kernels (cuda_checksum.cu) ---- */

/* A 64-bit hash of bytes of device memory at dev (any alignment), computed
 * on the device on `stream` (a cudaStream_t; NULL: the legacy stream) and
 * waited for. 0, or DKB_EIO with the CUDA error in err. */
int dkb__cuda_checksum(const void *dev, size_t bytes, void *stream, uint64_t *out, dkb_error *err);
/* Zero the shared memory of every SM (all a block may opt in to, one such
 * block per SM at a time, 4 per SM in all) with a kernel on `stream`, not
 * waited for. 0, or DKB_EIO with the CUDA error. */
int dkb__cuda_scrub_shared(void *stream, dkb_error *err);

/* ---- the evaluating process (eval_cuda.c) ---- */

typedef struct dkb__eval_cuda dkb__eval_cuda;

/* Open the store, make every column resident on GPU `device` (the
 * evaluating process's numbering), export the IPC handles and record each
 * column's checksum. budgeted (--mem-budget): leave out the tables that a
 * query's partitioned form can stream (lineitem, orders, part, partsupp:
 * partition.h), so that neither this process nor any worker holds them
 * whole on the device; a worker loads the columns of a query that fits the
 * budget itself, and a candidate never gets a handle to a table it must
 * stream. *out owns it all (close it with dkb__eval_cuda_close, also after
 * a failure); restore and close make that device current on the calling
 * thread first. */
int dkb__eval_cuda_open(const char *store_dir, int device, int budgeted, dkb__eval_cuda **out, dkb_error *err);
/* The GPUs this process sees (0 without CUDA or a usable driver). */
int dkb__eval_cuda_devices(void);
/* The job's "cuda_columns" array (JSON text owned by c). */
const char *dkb__eval_cuda_columns(const dkb__eval_cuda *c);
/* After a worker run: checksum every column on the device; re-upload (from
 * the store's mapped files) every one whose checksum changed. Their names,
 * "table.column" comma-separated, in changed (truncated to n); their count
 * in *nchanged. 0, or an error when the GPU cannot be read or written. */
int dkb__eval_cuda_restore(dkb__eval_cuda *c, char *changed, size_t n, int *nchanged, dkb_error *err);
void dkb__eval_cuda_close(dkb__eval_cuda *c);   /* accepts NULL */

/* ---- the worker (worker_cuda.c) ---- */

typedef struct dkb__wcuda dkb__wcuda;

/* Set the persisting-L2 limit to 0, open the IPC handles of columns_json
 * (matching each to db's column by table and name), create the candidate's
 * stream, the timing events and the L2 flush buffer (2 x the L2 size). */
int dkb__wcuda_open(const char *columns_json, const dkb_store *db, dkb__wcuda **out, dkb_error *err);
/* Register every opened column as the resident copy in CUDA context tp
 * (dkb__cuda_adopt_column), so the baseline reads the shared memory. */
int dkb__wcuda_adopt(dkb__wcuda *c, dkb_tp *tp, dkb_error *err);
/* Point every column of the candidate's database view (dkb__adapt_db over
 * db, not yet sealed) at its device memory: the opened columns; and under
 * a budget (budgeted: the evaluating process left the streamable tables
 * out) the columns the baseline made resident in CUDA context tp (a query
 * that fits, or the tables a partitioned one keeps whole), watched like
 * the opened ones. A column neither holds (one the query does not read,
 * or a table it streams) is hidden: data and bytes NULL, nbytes 0. */
int dkb__wcuda_patch_db(dkb__wcuda *c, const dkb_cand_db *cdb, const dkb_store *db, const dkb_tp *tp, int budgeted,
                        dkb_error *err);
/* The candidate's stream (a cudaStream_t). */
void *dkb__wcuda_stream(const dkb__wcuda *c);

/* Core outputs on the device: a device buffer per output of o (cap
 * elements, STR: cap + 1 offsets and bytes_cap characters). */
int dkb__wcuda_outs_init(dkb__wcuda *c, const dkb_cand_out_set *o, dkb_error *err);
/* After dkb__out_set_reset(o, poison): the descriptors the candidate gets
 * point at the device buffers, which are filled with poison. */
int dkb__wcuda_outs_point(dkb__wcuda *c, dkb_cand_out_set *o, uint8_t poison, dkb_error *err);
/* After a call: the device buffers copied into o's host buffers (what
 * dkb__out_set_collect reads). */
int dkb__wcuda_outs_fetch(dkb__wcuda *c, const dkb_cand_out_set *o, dkb_error *err);

/* Timing one call: begin flushes L2 (writes the flush buffer), waits for
 * the device and records the start event on the candidate's stream; end
 * waits for the whole device (work on any stream counts), records the stop
 * event and gives the elapsed ms. end fails (DKB_EIO) with the CUDA error
 * the call left ("an illegal memory access was encountered
 * (cudaErrorIllegalAddress)"); after most such errors the context is dead. */
int dkb__wcuda_time_begin(dkb__wcuda *c, dkb_error *err);
int dkb__wcuda_time_end(dkb__wcuda *c, double *ms, dkb_error *err);

/* Around every candidate call, outside the timed region: prepare runs
 * before dkb__wcuda_time_begin (the call's device state made pristine:
 * registered variables restored, the stream's attributes reset), cleanup
 * after dkb__wcuda_time_end (what the call allocated and freed, poisoned and
 * released). 0, or DKB_EIO with the CUDA error. */
int dkb__wcuda_call_prepare(dkb__wcuda *c, dkb_error *err);
int dkb__wcuda_call_cleanup(dkb__wcuda *c, dkb_error *err);

/* Inputs watched for writes: add device ranges (label copied), take the
 * reference checksums, and compare later (changed: the first labels). */
int dkb__wcuda_watch_add(dkb__wcuda *c, const void *dev, size_t bytes, const char *label, dkb_error *err);
int dkb__wcuda_watch_columns(dkb__wcuda *c, dkb_error *err);   /* every opened column */
int dkb__wcuda_watch_snapshot(dkb__wcuda *c, dkb_error *err);
int dkb__wcuda_watch_check(dkb__wcuda *c, char *changed, size_t n, int *nchanged, dkb_error *err);

/* Device copy bandwidth (GB/s: bytes read and written per second of a
 * cudaMemcpy device to device, best of several) over a buffer of at least
 * `bytes` and 4 x the L2 size (at most 1 GiB). NaN on failure. */
double dkb__wcuda_bandwidth(dkb__wcuda *c, size_t bytes);

/* ---- kernel attribution (worker_attrib.c; attrib.h) ----
 * One extra, untimed candidate call recorded with CUPTI's activity API,
 * after every timed call (libcupti is loaded by begin: no timed call ever
 * runs with it in the process):
 *   dkb__wcuda_attrib_begin(c, &e);   loads libcupti, starts recording
 *   (the candidate call: its dkb__wcuda_time_begin / _end mark the window)
 *   dkb__wcuda_attrib_end(c, py, &a, &e); stops, tallies the window into a
 *                                     (py: a Python candidate's call, whose
 *                                     mangled kernels are torch's: attrib.h)
 * begin: 0, or an error saying why nothing can be recorded ("not available
 * in this build", libcupti cannot be loaded, CUPTI refused: insufficient
 * privileges, ...); then make no call and no end. end: 0 with *out
 * recorded, or an error (*out not recorded). Only activity whose midpoint
 * lies between the marks counts (all of it, with a note, when the marks
 * are missing). */
int dkb__wcuda_attrib_begin(dkb__wcuda *c, dkb_error *err);
int dkb__wcuda_attrib_end(dkb__wcuda *c, int python, dkb_attribution *out, dkb_error *err);
/* Called by dkb__wcuda_time_begin right after its synchronisation (end 0)
 * and by dkb__wcuda_time_end right after its (end 1); does nothing unless
 * recording. */
void dkb__wcuda_attrib_mark(int end);

#ifdef __cplusplus
}
#endif

#endif
