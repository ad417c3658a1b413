/* eval.h: `dkb eval` as a library function: find the candidates in a
 * directory, build and run each in a sandboxed worker against the baseline,
 * score the outcomes (score.h). Reports are written by report.h.
 *
 * Rows: for each selected mode (full, core), one row per query of that mode:
 * the queries named by opts.queries, or (by default) those with a candidate
 * file DIR/qNN.<mode>.c. A listed query without a file is a "missing" row:
 * the baseline is timed and stands (speedup 1.0). */
#ifndef DKB_HARNESS_EVAL_H
#define DKB_HARNESS_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/progress.h"
#include "common/timing.h"  // defines: dkb_timing
#include "dkb/error.h"
#include "harness/attrib.h"   // defines: dkb_attribution
#include "harness/harness.h"
#include "harness/score.h"
#include "store/verify_cache.h"   // defines: dkb__verify_info

struct cJSON;

/* opts.modes bits */
#define DKB_EVAL_FULL (1u << DKB_MODE_FULL)
#define DKB_EVAL_CORE (1u << DKB_MODE_CORE)

#define DKB_EVAL_MAX_SEEDS 1000

typedef struct dkb_eval_opts {
    const char *dir;           /* IN: candidate directory */
    const char *store;         /* IN: store directory */
    const char *out;           /* IN: results directory (created; work/ inside) */
    const char *exe;           /* IN: the dkb binary (workers run `exe __worker JOB`) */
    const char *backend;       /* IN: "cpu" (NULL too) or "cuda" (qNN.<mode>.cu candidates,
                                * baseline and candidates on the GPU) */
    const char *target;        /* IN: which candidate files: NULL (the backend's: qNN.<mode>.c on
                                * cpu, .cu on cuda) or "python" (qNN.<mode>.py, Python candidates:
                                * include/dkb/candidate.py; cpu backend only, for now) */
    unsigned modes;            /* IN: DKB_EVAL_FULL | DKB_EVAL_CORE (0: both) */
    const char *queries;       /* IN: "q01,q06", "all", or NULL: queries with a file */
    int nseeds;                /* IN: random parameter seeds besides seed 0 */
    double threshold;          /* IN: a candidate counts at raw speedup >= this */
    int threads;               /* IN: threads for baseline and candidate (0: all cores) */
    double timeout_s;          /* IN: wall clock per worker run */
    uint64_t mem_bytes;        /* IN: worker memory (0: 2 x store size + 2 GiB) */
    uint64_t output_bytes;     /* IN: worker stdout+stderr kept (0: 1 MiB) */
    int warmup, min_runs;      /* IN: timing: warm-up calls, at least this many timed */
    double min_seconds;        /* IN: ... and at least this long */
    const char *command_line;  /* IN: recorded in results.json (may be NULL) */
    const char *sql;           /* IN: a SQL task file NAME.sql (src/sql/task.h) instead of the
                                * TPC-H queries: one full-mode row, candidate DIR/NAME.full.c
                                * (.cu on cuda); planned here with DuckDB (libduckdb needed),
                                * translated in the worker; no parameters, so seed 0 only
                                * (nseeds is not used); modes must be 0 or full; queries NULL */
    int64_t mem_budget;        /* IN: bytes a query's columns may take at once (0: none):
                                * the baseline runs partitioned where they do not fit
                                * (docs/partitions.md), a full-mode candidate gets
                                * env->budget (candidate.h); full mode, CPU, C only; a
                                * budget a query cannot run under stops the evaluation */
    int gpus;                  /* IN: backend cuda: rows spread over this many GPUs at once,
                                * one timed worker per GPU (0: every GPU this process sees;
                                * more than it sees is refused); the CPU runs one row at a
                                * time (eval_slots.h) */
    int on_gpu;                /* IN: backend cuda: 1 + the one GPU every row runs on (its
                                * workers see only it), for a caller that spreads whole
                                * evaluations over the GPUs (dkb optimize); 0: gpus decides */
    int build_jobs;            /* IN: candidates compiled at once, all before the first
                                * worker runs (0: one per core); timed runs stay one
                                * at a time */
    struct dkb__comm *comm;    /* IN: the ranks of `mpirun -np K dkb eval` (NULL or one rank:
                                * one process). With K > 1 every rank calls dkb__eval_run
                                * alike: the rows, seeds and store are checked to be rank
                                * 0's, every rank builds in RESULTS/work/rank-R (rank 0 in
                                * work/), and every job runs on all ranks at once, its
                                * collectives relayed (relay.h); every rank's results hold
                                * the rows' agreed verdicts, rank 0's the timings to
                                * report. Full mode, CPU backend, C candidates, no budget,
                                * no SQL (docs/distributed.md) */
    bool ranks_solo;           /* IN: with K > 1 ranks (comm), also time every candidate that
                                * passed on rank 0 alone over the whole store, its
                                * DKB_CANDIDATE_RANKS ignored (a job with "solo": seed 0
                                * checked, then timed as the row was): dkb bench's
                                * one-rank time and scaling efficiency (item's
                                * candidate_solo) */
    bool no_verify;            /* IN: trust the store: skip its crc32 and structure check
                                * (done once, before anything is written or run; a
                                * record of an earlier pass stands, verify_cache.h) */
} dkb_eval_opts;

/* One row: a candidate (or a missing one) and what became of it. */
typedef struct dkb_eval_item {
    int qnum;                  /* 1..22; 0 for a SQL task */
    char query[48];            /* "q06", or a SQL task's name */
    dkb_mode mode;
    int missing;               /* no candidate file */
    char *file;                /* candidate path (NULL when missing) */
    char sha256[65];           /* of the file ("" when missing) */
    dkb_verdict verdict;       /* how it ended (OK when missing) */
    char *detail;              /* one line, "" when nothing to say */
    char *compile_log;         /* trimmed compiler diagnostics (may be NULL) */
    char *output_tail;         /* the worker's last stdout/stderr bytes (may be NULL) */
    char *baseline_error;      /* the baseline job failed: why (else NULL) */
    struct cJSON *checks;      /* the worker's per-seed checks (array) or NULL */
    dkb_timing baseline, candidate;   /* as the worker reported them (runs 0, NaN: not timed) */
    dkb_timing candidate_solo; /* opts.ranks_solo: the candidate on rank 0 alone over the whole
                                * store (runs 0: not timed); candidate is then its time on
                                * nranks ranks */
    int nranks;                /* ranks the row ran on (1: one process) */
    char *solo_error;          /* opts.ranks_solo: why the one-rank run failed (else NULL) */
    double floor_ms;           /* bandwidth floor (NaN unknown) */
    double bytes_read;         /* bytes the query must read (NaN unknown) */
    double bandwidth_gbs;      /* measured memory bandwidth (NaN unknown) */
    dkb_attribution attribution;   /* CUDA: own vs library kernel time of one untimed call
                                    * (attrib.h); not recorded for CPU rows */
    double compile_s, run_s;   /* wall seconds: build; worker runs (all jobs) */
    int budgeted;              /* under --mem-budget: the four below are known */
    int partitioned;           /* the baseline ran partitioned */
    int chunks;                /* its runs of partitions per pass */
    double streamed_baseline;  /* bytes one baseline call streamed (0 when it fit) */
    double streamed_candidate; /* bytes the candidate's loads totalled in one call, the most
                                * over its calls (NaN: it did not run) */
    dkb_score_row score;       /* filled by dkb__score_rows */
} dkb_eval_item;

typedef struct dkb_eval_results {
    dkb_eval_opts opts;        /* a copy; its strings are borrowed from the caller */
    uint64_t seeds[DKB_EVAL_MAX_SEEDS + 1];  /* seeds[0] = 0, then nseeds drawn */
    int nseeds;                /* entries in seeds (opts.nseeds + 1) */
    double scale_factor;
    uint64_t store_bytes;
    dkb__verify_info verify;   /* how the store was verified (zero with opts.no_verify) */
    dkb_limits limits;         /* as applied */
    int threads;               /* as applied */
    char cpu_model[256];
    int cores;
    char started[32];          /* UTC, ISO 8601 */
    double wall_s;
    int n;
    dkb_eval_item *items;      /* n rows: by query number, full before core */
    int nignored;
    char **ignored;            /* files in DIR that look like candidates but are not */
    dkb_score_totals totals;   /* every row */
    dkb_score_totals by_mode[2];  /* indexed by dkb_mode */
    int harness_errors;        /* rows whose worker or baseline job failed on the harness's side */
} dkb_eval_results;

/* Evaluate. res is zeroed by the call and owned by the caller afterwards
 * (dkb__eval_results_free, also after a failure). Returns 0 when the
 * evaluation ran, whatever the candidates did (rows that met a harness
 * problem are counted in res->harness_errors); an error code with err set
 * for a bad option, a store that does not open, a results directory that
 * cannot be written, a compiler or worker that cannot be started; a
 * corrupt store fails (DKB_ECORRUPT naming the file) before anything is
 * written or run.
 * progress (may be NULL) is called with ("eval", rows done, rows). */
int dkb__eval_run(const dkb_eval_opts *opts, const dkb_progress *progress, dkb_eval_results *res,
                  dkb_error *err);
void dkb__eval_results_free(dkb_eval_results *res);

/* "full" / "core". */
const char *dkb__eval_mode_name(dkb_mode m);
/* The class of a row: "missing", or the verdict's name. */
const char *dkb__eval_class(const dkb_eval_item *it);

/* Recompute every item's score row and the totals at res->opts.threshold
 * (after filling items by hand, e.g. in tests). */
int dkb__eval_score(dkb_eval_results *res, dkb_error *err);

/* ---- steps (eval_setup.c), exposed for tests ---- */

/* The candidate files of dir: found[mode] gets bit q for each regular file
 * qNN.<mode>.c (q 1..22); other *.c / *.cu names go to res->ignored
 * (sorted). DKB_ENOENT etc. when dir cannot be read. */
int dkb__eval_scan(const char *dir, uint32_t found[2], dkb_eval_results *res, dkb_error *err);
/* The same with cuda: the candidate files are qNN.<mode>.cu (and *.c files
 * are the ignored ones). */
int dkb__eval_scan_ext(const char *dir, bool cuda, uint32_t found[2], dkb_eval_results *res, dkb_error *err);
/* The same for candidate files qNN.<mode>.<ext>, ext "c", "cu" or "py" (for
 * "py" the ignored names are the other *.py files; for the others *.c and
 * *.cu files, as above). */
int dkb__eval_scan_files(const char *dir, const char *ext, uint32_t found[2], dkb_eval_results *res,
                         dkb_error *err);
/* A Python row's worker verdict made specific (py_verdict.c): a
 * returned_error whose status is one of the bridge's (100 the candidate
 * raised, 101 it did something the allow-list forbids, 102 its answer is
 * not what the ABI asks for, 103 the bridge failed) becomes
 * returned_error, forbidden_symbol, returned_error or harness_error, its
 * "returned 10N" replaced by the bridge's line from the worker's output
 * ("dkb-python: CLASS: message"). Anything else is left as it is. */
void dkb__py_refine_verdict(dkb_verdict *v, char *detail, size_t n, const char *output_tail);
/* "q01,6,Q14" or "all" -> bit q for each query. DKB_EINVAL naming a bad entry. */
int dkb__eval_parse_queries(const char *list, uint32_t *mask, dkb_error *err);
/* seeds[0] = 0, seeds[1..n] distinct, nonzero, below 2^31, from /dev/urandom. */
int dkb__eval_draw_seeds(uint64_t *seeds, int n, dkb_error *err);
/* The CPU model (/proc/cpuinfo "model name", else "unknown") and online cores. */
void dkb__eval_machine(char *cpu, size_t n, int *cores);

#endif
