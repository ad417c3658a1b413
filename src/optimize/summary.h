/* summary.h: `dkb report`: the paper's tables and an HTML report from one
 * or more `dkb optimize` run directories (run.json + trajectory.jsonl).
 *
 * Per run and mode, each query is one row scored exactly as `dkb eval`
 * scores it (harness/score.h): the best valid candidate of all rounds (the
 * highest raw speedup), else the last attempt's verdict with the baseline
 * standing; rows then aggregate into pass rate, fast_p, overall speedup and
 * geometric mean. "Rounds used" is the round of the best valid candidate
 * (the rounds run when none was valid). */
#ifndef DKB_OPTIMIZE_SUMMARY_H
#define DKB_OPTIMIZE_SUMMARY_H

#include <stdio.h>

#include "dkb/error.h"

/* Write the tables (Markdown) to md and, when html is non-NULL, a
 * self-contained HTML report (inline SVG chart of per-query speedups, no
 * network) to html. DKB_ENOENT naming a run directory without run.json. */
int dkb__opt_report(const char *const *rundirs, int n, FILE *md, FILE *html, dkb_error *err);

#endif
