/* context.h: what a prompt of `dkb optimize` tells the model about the data
 * and the machine (the paper's workload and hardware context).
 *
 * Workload context is measured, not assumed: the baseline's prepare step is
 * run on the store at the drawn parameters (CPU backend), and for each input
 * it hands over the text gives the row count, the value range (dates as
 * dates), the dictionary size, key density (max key / rows) and, for the
 * query's main predicates (a small table per query, context.c), the fraction
 * of rows that pass at these parameters. Hardware context: the GPU
 * (dkb_tp_device_query) for CUDA targets, the CPU (model, cores, caches from
 * /proc and sysfs) for C targets. */
#ifndef DKB_OPTIMIZE_CONTEXT_H
#define DKB_OPTIMIZE_CONTEXT_H

#include "dkb/error.h"
#include "dkb/query.h"
#include "dkb/store.h"

/* The workload context of query q at parameters p on db, as Markdown lines,
 * malloc'd into *out. An error code with err set when prepare fails. */
int dkb__opt_workload_context(const dkb_query *q, const dkb_store *db, const dkb_params *p, char **out,
                              dkb_error *err);

/* The hardware context for a target (target.h): the GPU for "cuda" and
 * "triton" (DKB_ENOENT when there is none), the CPU for "c" and "python",
 * then how the target's code is built or run; malloc'd into *out. */
int dkb__opt_hardware_context(const char *target, char **out, dkb_error *err);

/* The number of main predicates whose selectivity the workload context
 * measures for query qnum (0 when none are listed). */
int dkb__opt_npredicates(int qnum);

#endif
