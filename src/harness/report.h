/* report.h: the evaluation's reports: results.json (everything: harness
 * version, configuration, seeds, machine, every row with its hash, compile
 * log, checks and timings, the totals), summary.md (a Markdown table and
 * the totals), and the same rows printed as a table, JSON or CSV.
 * Schema: docs/harness.md, "results.json". */
#ifndef DKB_HARNESS_REPORT_H
#define DKB_HARNESS_REPORT_H

#include <stdio.h>

#include "harness/eval.h"

typedef enum {
    DKB_RESULTS_TABLE = 0,   /* aligned text table + totals (stdout) */
    DKB_RESULTS_JSON,        /* the results.json document */
    DKB_RESULTS_CSV,         /* one header line, one line per row */
    DKB_RESULTS_MARKDOWN,    /* summary.md */
} dkb_results_format;

/* The results.json document (the caller cJSON_Deletes it); NULL when out
 * of memory. Unknown numbers are null. */
struct cJSON *dkb__results_json(const dkb_eval_results *res);

/* Write res->opts.out/results.json and res->opts.out/summary.md, each to a
 * temporary file in the same directory, fsync'ed, then renamed over the
 * old one: a reader sees the old or the new file, never a partial one.
 * 0, or DKB_EIO/DKB_ENOSPC/DKB_ENOMEM naming the file. */
int dkb__results_write(const dkb_eval_results *res, dkb_error *err);

/* Print res in fmt to f. 0, or DKB_EIO when writing f fails. */
int dkb__results_print(const dkb_eval_results *res, dkb_results_format fmt, FILE *f, dkb_error *err);

/* The note a row shows beside its class (malloc'd; NULL when out of
 * memory): the candidate's detail, why a valid candidate did not count,
 * "no candidate file", a baseline failure. */
char *dkb__results_note(const dkb_eval_item *it, double threshold);

#endif
