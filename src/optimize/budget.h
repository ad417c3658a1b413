/* budget.h: what a prompt of `dkb optimize` / `dkb prompt` tells the model
 * about a memory budget (--mem-budget): whether the query's columns fit,
 * which tables stream in how many partitions, the load limit, what the
 * candidate must do (DKB_CANDIDATE_STREAMS, env->budget->load), measured
 * by running the baseline under the budget once (CPU backend). */
#ifndef DKB_OPTIMIZE_BUDGET_H
#define DKB_OPTIMIZE_BUDGET_H

#include <stdint.h>

#include "dkb/error.h"
#include "dkb/query.h"
#include "dkb/store.h"

/* The budget context of query q at parameters p on db under `budget`
 * bytes, as Markdown lines, malloc'd into *out. The baseline's errors for a
 * budget it cannot run under ("qNN: --mem-budget 1.0M is too small: it
 * needs at least ...") are returned as they are. */
int dkb__opt_budget_context(const dkb_query *q, const dkb_store *db, const dkb_params *p, int64_t budget, int cuda,
                            char **out, dkb_error *err);

#endif
