/* loop.h: the repair loop of `dkb optimize`: for each query x mode, ask a
 * model for a candidate file, evaluate it with the harness (dkb__eval_run,
 * one evaluation at a time so timings stay clean), feed the verdict back,
 * for up to `rounds` rounds with `samples` independent replies each; model
 * requests of different queries run concurrently on `jobs` threads. Every
 * event goes to the trajectory (traj.h); a run resumes from it. */
#ifndef DKB_OPTIMIZE_LOOP_H
#define DKB_OPTIMIZE_LOOP_H

#include <stdint.h>

#include "dkb/error.h"
#include "model/model.h"
#include "store/verify_cache.h"   // defines: dkb__verify_info

/* What the loop reports as it goes, to the caller's callback
 * (dkb_opt_opts.progress); the library itself prints nothing. */
typedef enum {
    DKB_OPT_EV_ATTEMPT = 0,   /* an attempt was asked, evaluated and recorded */
    DKB_OPT_EV_WARNING,       /* something failed that does not stop the run */
} dkb_opt_event_kind;

typedef struct dkb_opt_event {
    dkb_opt_event_kind kind;
    /* DKB_OPT_EV_ATTEMPT: */
    const char *query, *mode; /* "q06", "full" */
    int round, rounds;        /* round (1-based) of rounds */
    int sample, samples;      /* sample (1-based) of samples */
    const char *cls;          /* the attempt's class: a verdict name, "missing",
                               * "harness_error", "model_error", "no_code", "truncated_reply" */
    double raw_speedup;       /* NaN unless the harness scored it valid */
    double best_speedup;      /* best valid raw speedup of the task so far (NaN: none) */
    /* DKB_OPT_EV_WARNING: */
    const char *message;      /* one line, e.g. why the trajectory could not be appended to */
} dkb_opt_event;

/* Called from the loop's threads, one call at a time; ev and its strings
 * are valid only during the call. */
typedef void (*dkb_opt_progress_fn)(void *ctx, const dkb_opt_event *ev);

typedef struct dkb_opt_opts {
    dkb_model_opts model;     /* IN: the model client's options */
    const char *store;        /* IN: store directory */
    const char *out;          /* IN: run directory */
    const char *exe;          /* IN: the dkb binary (harness workers) */
    const char *templates;    /* IN: template directory (NULL: default) */
    const char *target;       /* IN: a target of target.h ("c", "cuda", "python", "triton") */
    unsigned modes;           /* IN: DKB_EVAL_FULL | DKB_EVAL_CORE */
    uint32_t queries;         /* IN: bit q for query q */
    const char *sql;          /* IN: a SQL task file NAME.sql instead of queries (src/sql/task.h):
                               * one task, modes must be DKB_EVAL_FULL; libduckdb needed */
    int rounds, samples, jobs;
    int gpus;                 /* IN: GPU targets: evaluations at once, one per GPU (0: every
                               * GPU seen); the CPU evaluates one at a time */
    int workload, hardware;   /* IN: context sections in the prompt */
    int64_t max_tokens;       /* IN: stop asking past this many tokens in + out (0: no limit) */
    double max_cost;          /* IN: ... past this many USD (0: no limit) */
    double max_wall;          /* IN: ... past this many seconds of this invocation (0: no limit) */
    /* the harness's options for each evaluation */
    int nseeds, threads, warmup, min_runs;
    double min_seconds, timeout_s, threshold;
    dkb_opt_progress_fn progress;  /* IN: events as they happen (NULL: none) */
    void *progress_ctx;       /* IN: passed to progress */
    bool no_verify;           /* IN: trust the store (else verified once at the start, verify_cache.h) */
    int64_t mem_budget;       /* IN: bytes (0: none): full mode, target c: evaluated as dkb eval
                               * --mem-budget, the prompt describes the partitioned ABI */
    const char *command_line; /* recorded in run.json */
} dkb_opt_opts;

typedef struct dkb_opt_outcome {
    int tasks, finished;      /* query x mode pairs; those that ran all rounds */
    int requests, evaluations;
    int64_t tokens_in, tokens_out;
    double cost_usd;
    char stopped[256];        /* why the loop stopped asking early ("" when it did not) */
    int model_failed;         /* 1 when it stopped because the endpoint refused or could not be reached */
    dkb__verify_info verify;  /* how the store was verified (zero with no_verify) */
} dkb_opt_outcome;

/* Run (or resume) the loop. 0 when it ran (whatever the models did), an
 * error code with err set when the run directory, store or templates are
 * unusable (a corrupt store fails before anything is written or asked),
 * (DKB_ENOENT) when a GPU target finds no GPU, or (DKB_EINVAL) for a
 * target the harness cannot evaluate here (triton: Python on the GPU is
 * not built yet; a Python target with a SQL task): then nothing is
 * written, asked or evaluated. */
int dkb__opt_run(const dkb_opt_opts *o, dkb_opt_outcome *out, dkb_error *err);

/* The best-speedup rule, of the loop (the best so far that the feedback
 * quotes, the attempt a round continues from) and of `dkb report` (a
 * task's best candidate): 1 when an attempt that is valid (valid != 0)
 * with raw speedup raw beats best, the best so far (NaN or negative: none
 * yet): raw is finite and, unless there is none yet, strictly above best
 * (a tie keeps the earlier attempt). */
int dkb__opt_improves(int valid, double raw, double best);

#endif
