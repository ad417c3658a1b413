/* prompt.h: the messages `dkb optimize` sends a model: the first prompt of
 * a query (task, SQL, baseline plan source, candidate.h, workload and
 * hardware context, reply format) and the feedback after each evaluation
 * (trimmed diagnostics, failure class and message, the parameters and first
 * differing row of a wrong answer, timings against baseline and floor).
 * Every text comes from an editable template (template.h). */
#ifndef DKB_OPTIMIZE_PROMPT_H
#define DKB_OPTIMIZE_PROMPT_H

#include <stdint.h>

#include "dkb/error.h"
#include "dkb/query.h"
#include "dkb/store.h"
#include "harness/harness.h"

typedef struct dkb_opt_prompt_opts {
    const char *templates;   /* template directory (dkb__opt_templates_dir) */
    const char *target;      /* a target of target.h: "c", "cuda", "python", "triton" */
    dkb_mode mode;
    int workload, hardware;  /* include these context sections */
    int need_gpu;            /* target "cuda": 1 makes a failed GPU query an error
                              * (dkb optimize); 0 lets the hardware section say that
                              * no GPU was found here (dkb prompt on any machine) */
    const char *sql_task;    /* a SQL task's name (src/sql/task.h), else NULL: files are
                              * NAME.full.c / .cu, the template task_sql.md, full mode */
    const char *plan_source; /* a SQL task: its TensorPlan program (dkb__sql_task_program),
                              * shown as the baseline instead of src/queries/qNN.c */
    int64_t mem_budget;      /* bytes (0: none): full mode under --mem-budget; the prompt
                              * adds the budget section (budget.md, budget.h) and the
                              * optional dkb/cand_stream.h after the ABI */
} dkb_opt_prompt_opts;

/* The candidate ABI as the prompt shows it: include/dkb/candidate.h (the
 * Python targets: include/dkb/candidate.py), and for targets "cuda" and
 * "triton" a comment before it saying how the ABI applies on the GPU
 * (device pointers or CUDA tensors, the stream, what is forbidden); the C
 * targets' optional toolkit headers after it. malloc'd. */
int dkb__opt_candidate_abi(const char *target, char **out, dkb_error *err);

/* The candidate file name for a query and target: "q06.core.c", "q06.full.cu". */
void dkb__opt_file_name(int qnum, dkb_mode mode, const char *target, char *buf, size_t n);
/* The same for the prompt's task: o->sql_task's "NAME.full.c" when set, else
 * as dkb__opt_file_name. */
void dkb__opt_task_file_name(const dkb_opt_prompt_opts *o, int qnum, char *buf, size_t n);

/* The baseline source shown for a mode: the whole src/queries/qNN.c (full),
 * or its header comment, prepare and core functions (core). malloc'd. */
int dkb__opt_plan_source(int qnum, dkb_mode mode, char **out, dkb_error *err);

/* System and first user message for query q at parameters p (seed 0) on
 * db. Both malloc'd; on failure both NULL and err set. */
int dkb__opt_build_prompt(const dkb_opt_prompt_opts *o, const dkb_query *q, const dkb_store *db,
                          const dkb_params *p, char **system, char **user, dkb_error *err);

/* What the feedback tells about one evaluated reply. */
typedef struct dkb_opt_feedback_in {
    int round, rounds;          /* 1-based round, of rounds */
    const char *cls;            /* verdict name, or no_code / truncated_reply / model_error */
    const char *verdict_text;   /* "gave a wrong answer" */
    const char *detail;         /* the harness's one line (may be NULL) */
    const char *compile_log;    /* trimmed diagnostics (may be NULL) */
    const char *checks;         /* failing checks with their parameters (may be NULL) */
    double baseline_ms, candidate_ms, floor_ms;   /* NaN: unknown */
    double best_speedup;        /* best valid raw speedup so far (NaN: none) */
} dkb_opt_feedback_in;

/* The feedback message (feedback.md), malloc'd. Long diagnostics are
 * trimmed (the head and the tail kept). */
int dkb__opt_feedback(const dkb_opt_prompt_opts *o, int qnum, const dkb_opt_feedback_in *in, char **out,
                      dkb_error *err);

/* s cut to at most max bytes: its first and last parts with a marker
 * between; malloc'd (NULL s gives ""). */
char *dkb__opt_trim(const char *s, size_t max);

#endif
