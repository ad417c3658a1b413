/* protocol.h: what the harness and its worker process exchange: the job
 * file (JSON, written by the harness, read by `dkb __worker JOB`) and the
 * report (one JSON object on one line, written by the worker to the fd
 * named in env DKB_REPORT_FD); plus dkb__run_job, which does the whole
 * round trip in a sandbox.
 *
 * Job (every member but "store" and "query" optional):
 *   {"store": "data/sf1",        store directory
 *    "query": "q06",             query name (dkb_query_find)
 *    "mode": "full",             "full" | "core" | "baseline" (= full, no
 *                                candidate: time the whole baseline query)
 *    "so": "work/q06.full.so",   the candidate; null: time the baseline only
 *    "seeds": [0, 17, ...],      parameter seeds (numbers below 2^53 or
 *                                decimal strings); default [0]
 *    "threads": 0,               0: all cores (omp_get_max_threads)
 *    "warmup": 2, "min_runs": 10, "min_seconds": 1.0,
 *    "floor_slack": 0.5,         implausible when the candidate's median is
 *                                below floor_slack * floor_ms
 *    "backend": "cpu",           "cpu" | "cuda"
 *    "cuda_columns": [...],      cuda only: the store's columns resident in the
 *                                harness process, as CUDA IPC handles
 *                                (worker_cuda.h: one object per column)
 *    "sql": "SELECT ...",        a SQL task (src/sql/task.h): "query" is its
 *    "sql_plan": "{...}",        name, these its SQL text, DuckDB's plan JSON
 *    "sql_columns": ["a", ...],  (as a string) and its result column names,
 *                                all made by the evaluating process, so the
 *                                worker needs no libduckdb; all three or none
 *    "mem_budget": 8388608,      bytes (0: none): the baseline runs under it
 *                                (dkb__query_run_budget) and a full-mode
 *                                candidate gets env->budget (worker_stream.h)
 *    "ranks": {"rank": 1, "nranks": 3}}  the worker is rank 1 of 3 of `mpirun
 *                                dkb eval` (absent: rank 0 of 1): its
 *                                collectives go through the relay pipes,
 *                                fds 5 and 6 (relay.h); full mode and the
 *                                baseline, CPU backend, no budget; with
 *                                "solo": true the candidate runs on rank 0
 *                                alone over the whole store even when it
 *                                defines DKB_CANDIDATE_RANKS (dkb bench)
 *
 * Report:
 *   {"verdict": "ok",            a dkb_verdict name (harness.h)
 *    "detail": "...",            one line ("" when ok)
 *    "checks": [{"seed": 0, "ok": true, "message": ""}, ...],
 *    "baseline_ms": {"median": 1.2, "min": 1.1, "max": 1.9, "runs": 25},
 *    "candidate_ms": {...} or null (not timed),
 *    "bytes_read": 168000000,    store bytes of the columns the plan reads
 *    "bandwidth_gbs": 20.5,      read bandwidth measured by the worker over
 *                                a buffer of bytes_read bytes
 *    "floor_ms": 8.2,            bytes_read / bandwidth
 *    "floor_slack": 0.5,
 *    "threads": 16,              threads used
 *    "attribution": {...} | null, CUDA rows that passed both checks: how one
 *                                extra, untimed call's device time splits into
 *                                own and library kernels (attrib.h)
 *    "attribution_note": "..." | null, why attribution is null (or a caveat)
 *    "streamed": {...} | null,   with a budget: "partitioned" (bool), "chunks"
 *                                (the baseline's runs of partitions per pass),
 *                                "baseline_bytes" and "candidate_bytes"
 *                                (bytes streamed by one call: the baseline's
 *                                streamed columns x passes; what the
 *                                candidate's loads totalled, largest call),
 *                                "load_limit"
 *    "budget_error": "..." | null, the budget cannot run this query (too
 *                                small, or a store of one partition): the
 *                                message, for the evaluation to stop on
 *    "agreed": true,             with ranks: verdict and detail are the ones
 *                                the ranks agreed on (the same on every rank;
 *                                a detail from rank R > 0 says "rank R: ")
 *    "nonce": "9f0c..."}         the nonce the sandbox handed the worker (see
 *                                dkb__sandbox_run); absent when none
 * Checks list the first pass (one per seed). Every timed call's answer and
 * a second pass after timing (outputs poisoned differently) are compared
 * with the first pass's answers; a difference is NONDETERMINISTIC, named in
 * detail. */
#ifndef DKB_HARNESS_PROTOCOL_H
#define DKB_HARNESS_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/timing.h"  // defines: dkb_timing
#include "dkb/error.h"
#include "harness/attrib.h"   // defines: dkb_attribution
#include "harness/harness.h"

#define DKB_JOB_MAX_SEEDS 1024

/* Worker modes: a candidate's two modes, or the baseline alone. */
typedef enum { DKB_JOB_FULL = 0, DKB_JOB_CORE, DKB_JOB_BASELINE } dkb_job_mode;

typedef struct dkb_job {
    char *store;               /* malloc'd */
    char *query;               /* malloc'd, "q06" */
    dkb_job_mode mode;
    char *so;                  /* malloc'd or NULL: baseline only */
    int nseeds;
    uint64_t seeds[DKB_JOB_MAX_SEEDS];
    int threads;               /* 0: all cores */
    int warmup;                /* default 2 */
    int min_runs;              /* default 10 */
    double min_seconds;        /* default 1.0 */
    double floor_slack;        /* default 0.5 */
    bool cuda;                 /* backend cuda (default cpu) */
    char *cuda_columns;        /* malloc'd JSON array text (cuda only) */
    char *sql;                 /* malloc'd or NULL: a SQL task's text ... */
    char *sql_plan;            /* ... its plan JSON ... */
    char *sql_columns;         /* ... and its column names (JSON array text) */
    int64_t mem_budget;        /* bytes; 0: no budget */
    int rank, nranks;          /* the worker's rank of nranks (0 of 1: no ranks) */
    bool solo;                 /* with ranks: call the candidate on rank 0 alone over the
                                * whole store even when it defines DKB_CANDIDATE_RANKS
                                * (dkb bench's one-rank time of an expert) */
} dkb_job;

/* Defaults for a job (strings NULL, seeds {0}). */
void dkb__job_init(dkb_job *j);
/* Free the strings (accepts a zeroed or initialised job). */
void dkb__job_free(dkb_job *j);
/* Write j as JSON to path (created or truncated). 0 or DKB_EIO/ENOMEM. */
int dkb__job_write(const dkb_job *j, const char *path, dkb_error *err);
/* Read a job file written by dkb__job_write (or by hand). j is initialised
 * by the call; free it with dkb__job_free also on failure. DKB_ENOENT,
 * DKB_EIO, DKB_EPARSE (bad JSON, a missing or ill-typed member, a value
 * out of range: message names the member). */
int dkb__job_read(const char *path, dkb_job *j, dkb_error *err);
/* "full", "core", "baseline"; and back (-1 when none). */
const char *dkb__job_mode_name(dkb_job_mode m);
int dkb__job_mode_from_name(const char *s);

typedef struct dkb_check {
    uint64_t seed;
    bool ok;
    char message[512];
} dkb_check;

typedef struct dkb_report {
    dkb_verdict verdict;
    char detail[1024];
    int nchecks;
    dkb_check *checks;         /* malloc'd, nchecks */
    dkb_timing baseline, candidate;   /* runs 0 (and NaN): not timed */
    double bytes_read;         /* NaN: unknown */
    double bandwidth_gbs;      /* NaN: unknown */
    double floor_ms;           /* NaN: unknown */
    double floor_slack;
    int threads;
    char nonce[72];            /* the sandbox's nonce ("" when none) */
    dkb_attribution attribution;   /* the kernel attribution call (attrib.h): CUDA rows that
                                    * passed both checks; else not recorded, its note
                                    * saying why ("" for CPU rows) */
    /* with a memory budget (job mem_budget > 0) */
    bool budgeted;
    bool partitioned;          /* the baseline ran partitioned */
    int chunks;                /* its runs of partitions per pass */
    double streamed_baseline, streamed_candidate, load_limit;  /* bytes; NaN: unknown */
    char budget_error[512];    /* "" unless the budget cannot run the query */
    bool agreed;               /* with ranks: verdict and detail agreed by every rank */
} dkb_report;

/* A report with verdict HARNESS_ERROR, no checks, no timings
 * (dkb__timing_none), unknowns NaN. */
void dkb__report_init(dkb_report *r);
void dkb__report_free(dkb_report *r);   /* accepts an initialised report */
/* Add a check (copies message, truncated). 0 or DKB_ENOMEM. */
int dkb__report_add_check(dkb_report *r, uint64_t seed, bool ok, const char *message);
/* The report as one line of JSON ending in '\n', malloc'd (NULL when out of
 * memory). */
char *dkb__report_json(const dkb_report *r);
/* Parse a report (as dkb__report_json writes it). r is initialised by the
 * call. A timing that is null, missing, or has no positive "runs" reads as
 * not timed (dkb__timing_none). 0 or DKB_EPARSE naming what is wrong. */
int dkb__report_parse(const char *json, dkb_report *r, dkb_error *err);

/* ---- the round trip ---- */

/* Write job to DIR/job.json, run `exe __worker DIR/job.json` in the
 * sandbox under lim (stdout/stderr to DIR/worker.out unless
 * lim->output_path is set), and turn the outcome into *rep:
 *   - the worker reported: its report (verdict as it says);
 *   - it did not (crash, timeout, memory, output limit, exit): a report
 *     with the sandbox's verdict and detail, no timings;
 * exe: the dkb binary (NULL: /proc/self/exe, i.e. the running dkb).
 * *sr receives the sandbox's own result (output tail, exit code, seconds;
 * free it with dkb__sandbox_result_free). rep and sr are initialised by the
 * call (free both, also on failure). Returns 0 when the job ran (whatever
 * became of the candidate); an error when the job file could not be
 * written or the worker could not be started. */
int dkb__run_job(const dkb_job *job, const char *exe, const char *dir, const dkb_limits *lim,
                 dkb_report *rep, dkb_sandbox_result *sr, dkb_error *err);

/* ---- the worker (worker.c) ---- */

/* `dkb __worker JOB`: run the job and write the report to the fd named in
 * env DKB_REPORT_FD (stdout when unset, for debugging by hand). Returns
 * the process exit status (0 when a report was written, whatever its
 * verdict; 1 when even that failed). Candidate code runs in this process:
 * call it only in a sandboxed child. */
int dkb__worker_run(const char *job_path);

#endif
