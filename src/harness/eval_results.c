/* eval_results.c: the evaluation's result rows: the names of modes and
 * classes, scoring every row into the totals, and freeing. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness/eval.h"

const char *dkb__eval_mode_name(dkb_mode m) { return m == DKB_MODE_CORE ? "core" : "full"; }

const char *dkb__eval_class(const dkb_eval_item *it) {
    return it->missing ? "missing" : dkb__verdict_name(it->verdict);
}

int dkb__eval_score(dkb_eval_results *res, dkb_error *err) {
    dkb_score_row *rows = res->n ? calloc((size_t)res->n, sizeof *rows) : NULL;
    if (res->n && !rows) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        rows[i].missing = it->missing;
        rows[i].mode = it->mode;
        rows[i].verdict = it->verdict;
        rows[i].baseline_ms = it->baseline.median;
        rows[i].candidate_ms = it->candidate.median;
        rows[i].floor_ms = it->floor_ms;
    }
    int rc = dkb__score_rows(rows, res->n, res->opts.threshold, err);
    if (!rc) {
        for (int i = 0; i < res->n; i++) res->items[i].score = rows[i];
        dkb__score_totals(rows, res->n, -1, &res->totals);
        dkb__score_totals(rows, res->n, DKB_MODE_FULL, &res->by_mode[DKB_MODE_FULL]);
        dkb__score_totals(rows, res->n, DKB_MODE_CORE, &res->by_mode[DKB_MODE_CORE]);
    }
    free(rows);
    return rc;
}

void dkb__eval_results_free(dkb_eval_results *res) {
    if (!res) return;
    for (int i = 0; i < res->n; i++) {
        dkb_eval_item *it = &res->items[i];
        free(it->file);
        free(it->detail);
        free(it->compile_log);
        free(it->output_tail);
        free(it->baseline_error);
        free(it->solo_error);
        cJSON_Delete(it->checks);
    }
    free(res->items);
    for (int i = 0; i < res->nignored; i++) free(res->ignored[i]);
    free(res->ignored);
    memset(res, 0, sizeof *res);
}
