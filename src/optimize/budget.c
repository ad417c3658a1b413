/* budget.c: the memory-budget section of a prompt (budget.h): the baseline
 * runs once under the budget on a CPU context (dkb__query_run_budget), and
 * what it did (fits, or the streamed tables, partitions, runs, resident
 * bytes) becomes the lines the model reads beside candidate.h's "full mode
 * under a memory budget". */
#include "optimize/budget.h"

#include <stdlib.h>

#include "dkb/tensor.h"
#include "optimize/template.h"   // defines: dkb_opt_buf, dkb__opt_buf_printf, dkb__opt_buf_take
#include "queries/partition.h"   // defines: dkb__query_run_budget, dkb__part_plan_get

int dkb__opt_budget_context(const dkb_query *q, const dkb_store *db, const dkb_params *p, int64_t budget, int cuda,
                            char **out, dkb_error *err) {
    *out = NULL;
    dkb_tp *tp = NULL;
    int rc = dkb_tp_create(DKB_TP_CPU, 0, &tp, err);
    if (rc) return rc;
    dkb_result res = {0};
    dkb__part_info info;
    rc = dkb__query_run_budget(q, tp, db, p, budget, 0, &res, &info, err);
    dkb_result_free(&res);
    dkb_tp_destroy(tp);
    if (rc) return rc;
    dkb_opt_buf b = {0};
    dkb__opt_buf_printf(&b, "- `--mem-budget` is %lld bytes: what the query's columns may take at once.\n",
                        (long long)budget);
    if (!info.partitioned) {
        dkb__opt_buf_printf(&b,
                            "- The columns the baseline reads (%lld bytes) fit it: `env->budget` is set with "
                            "`nstreamed == 0`, every table is whole in `db`, and nothing changes.\n",
                            (long long)(info.resident_bytes + info.streamed_bytes));
    } else {
        const dkb__part_plan *pl = dkb__part_plan_get(q->number);
        const char *s0 = pl->stream[0], *s1 = pl->stream[1];
        dkb__opt_buf_printf(
            &b,
            "- They do not fit (%lld bytes): %s%s%s stream%s by partition, %d partitions; the other tables "
            "stay whole in `db` (%lld bytes of the baseline's columns).\n"
            "- In `db` the columns of %s%s%s have `data == NULL` and `bytes == NULL`: bring rows in with "
            "`env->budget->load` and give each load back with `env->budget->release`. The loads you hold at "
            "once may total at most `load_limit` = %lld bytes (a load past it returns `DKB_CAND_ENOMEM`); %s "
            "The harness times the whole call, loads included.\n"
            "- Your file must define `DKB_CANDIDATE_STREAMS;` at file scope, or it is not run (bad_entry). "
            "The optional helper `dkb/cand_stream.h` (after the ABI) visits columns whole or load by load.\n"
            "- The baseline runs this in %d run%s of partitions per pass (%d pass%s), streaming %lld bytes "
            "per call; results must be exact whatever the partitioning (merge sums and counts as integers).\n",
            (long long)(info.resident_bytes + info.streamed_bytes), s0, s1 ? " and " : "", s1 ? s1 : "",
            s1 ? "" : "s", info.partitions, (long long)info.resident_bytes, s0, s1 ? " and " : "", s1 ? s1 : "",
            (long long)(budget - info.resident_bytes),
            cuda ? "loads are device memory: `load` makes `env->stream` wait for its copies (launch on it after "
                   "`load` returns), `release` after enqueuing the kernels that read the load (its memory is then "
                   "overwritten on `env->stream`); hold the next load before releasing the current one to overlap "
                   "copies with compute (`dkb_stream_begin_ex(..., DKB_STREAM_OVERLAP)`); loads are read-only."
                 : "a released load is unmapped (reading it crashes); loads are read-only.",
            info.chunks, info.chunks == 1 ? "" : "s", info.passes,
            info.passes == 1 ? "" : "es", (long long)info.streamed_bytes * info.passes);
    }
    *out = dkb__opt_buf_take(&b);
    return *out ? 0 : dkb_fail(err, DKB_ENOMEM, "budget context: out of memory");
}
