/* harness.h: the evaluation harness's internal interfaces (dkb eval).
 *
 * Flow for one candidate file (qNN.core.c or qNN.full.c):
 *   build     compile it with fixed flags into a shared object in a scratch
 *             directory; keep the trimmed diagnostics; check the symbols it
 *             imports against the allow-list                   (build.c, symbols.c)
 *   sandbox   run `dkb __worker JOB` in a child process with a wall-clock
 *             timeout (SIGKILL), a memory limit (RSS watched, SIGKILL), an
 *             output limit; classify how it ended               (sandbox.c)
 *   worker    in the child: open the store read-only, dlopen the candidate,
 *             snapshot its writable segments (restored before every call, so
 *             no state survives), and for each parameter set run the baseline
 *             and the candidate (outputs poisoned, inputs read-only), compare,
 *             then time baseline and candidate interleaved, compare again;
 *             write a JSON report to the result fd                (worker.c)
 *   adapter   TensorPlan sets, store, params and results <-> candidate ABI
 *             structs (candidate.h)                               (adapter.c)
 *   score     per-query verdicts -> pass rate, fast_p, overall speedup,
 *             geometric mean; results.json and summary.md    (score.c, report.c)
 */
#ifndef DKB_HARNESS_H
#define DKB_HARNESS_H

#include <stdint.h>

#include "dkb/candidate.h"
#include "dkb/error.h"
#include "dkb/query.h"

/* How a candidate ended up. Stable names (results.json "class"). */
#define DKB_VERDICT_MAP(X)                                                       \
    X(OK, "ok", "valid")                                                         \
    X(COMPILE_ERROR, "compile_error", "did not compile")                         \
    X(FORBIDDEN_SYMBOL, "forbidden_symbol", "imports a symbol outside the allow-list") \
    X(BAD_ENTRY, "bad_entry", "does not define the mode's entry point")          \
    X(CRASH, "crash", "crashed (signal)")                                        \
    X(TIMEOUT, "timeout", "ran past the time limit")                             \
    X(OUT_OF_MEMORY, "out_of_memory", "exceeded the memory limit")               \
    X(EXITED, "exited", "exited the process during a call")                      \
    X(WROTE_INPUT, "wrote_input", "wrote to a read-only input")                  \
    X(OUTPUT_LIMIT, "output_limit", "exceeded an output limit")                  \
    X(RETURNED_ERROR, "returned_error", "returned a non-zero status")            \
    X(WRONG_ANSWER, "wrong_answer", "gave a wrong answer")                       \
    X(NONDETERMINISTIC, "nondeterministic", "gave different answers on repeated runs") \
    X(LEFT_THREADS, "left_threads", "left threads running after returning")      \
    X(IMPLAUSIBLE, "implausible", "faster than the bandwidth floor")             \
    X(HARNESS_ERROR, "harness_error", "the harness itself failed")

typedef enum {
#define DKB__VERDICT_ENUM(id, name, text) DKB_VERDICT_##id,
    DKB_VERDICT_MAP(DKB__VERDICT_ENUM)
#undef DKB__VERDICT_ENUM
    DKB_VERDICT_COUNT
} dkb_verdict;

const char *dkb__verdict_name(dkb_verdict v);     /* "wrong_answer" */
const char *dkb__verdict_text(dkb_verdict v);     /* "gave a wrong answer" */

typedef enum { DKB_MODE_FULL = 0, DKB_MODE_CORE } dkb_mode;

/* ---- build (build.c, symbols.c) ---- */

typedef struct dkb_build {
    char so_path[4096];        /* the shared object, when built */
    char *log;                 /* trimmed compiler diagnostics (malloc'd, may be "") */
    char hash[65];             /* sha256 of the source file, hex */
    dkb_verdict verdict;       /* OK, COMPILE_ERROR, FORBIDDEN_SYMBOL or BAD_ENTRY */
    char detail[512];          /* e.g. "imports pthread_create, dkb_tp_compress" */
} dkb_build;

/* Compile src (a .c candidate) for mode into scratch_dir with fixed flags;
 * fill b. Returns 0 when the build step itself ran (whatever the verdict),
 * an error when the harness could not run the compiler. */
int dkb__build_candidate(const char *src, dkb_mode mode, const char *scratch_dir, dkb_build *b,
                         dkb_error *err);
void dkb__build_free(dkb_build *b);

/* ---- sandbox (sandbox.c) ---- */

typedef struct dkb_limits {
    double timeout_s;          /* wall clock for the whole worker run */
    uint64_t mem_bytes;        /* resident memory */
    uint64_t output_bytes;     /* stdout + stderr kept; more is output_limit */
} dkb_limits;

typedef struct dkb_sandbox_result {
    dkb_verdict verdict;       /* OK when the worker reported; else how it died */
    int exit_code, signal;
    char *report;              /* the worker's JSON report (malloc'd) or NULL */
    char *output_tail;         /* last bytes of its stdout/stderr (malloc'd) */
    double seconds;
    char detail[512];
} dkb_sandbox_result;

/* Run argv (argv[0] an executable path) with limits; the child finds the
 * report fd number in env DKB_REPORT_FD. */
int dkb__sandbox_run(char *const argv[], const dkb_limits *lim, dkb_sandbox_result *r, dkb_error *err);
void dkb__sandbox_result_free(dkb_sandbox_result *r);

#endif
