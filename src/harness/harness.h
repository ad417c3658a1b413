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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
/* The number of modes: an evaluation has at most DKB_NQUERIES x DKB_NMODES rows. */
#define DKB_NMODES 2

/* ---- build (build.c, symbols.c) ---- */

typedef struct dkb_build {
    char so_path[4096];        /* the shared object, when built */
    char *log;                 /* trimmed compiler diagnostics (malloc'd, may be "") */
    char hash[65];             /* sha256 of the source file, hex */
    dkb_verdict verdict;       /* OK, COMPILE_ERROR, FORBIDDEN_SYMBOL or BAD_ENTRY */
    char detail[512];          /* e.g. "imports pthread_create, dkb_tp_compress" */
    double compile_s;          /* wall seconds of the compiler run */
} dkb_build;

/* Compile src (a .c candidate; a .cu candidate: see below) for mode into
 * scratch_dir with fixed flags;
 * fill b. The compiler is $DKB_CC (default cc), run in the sandbox (60 s,
 * its diagnostics kept: at most 60 lines / 8 KiB, the first ones), with
 *   -std=c11 -O3 -march=native -fopenmp -fPIC -shared -Wall
 *   -I SCRATCH/include   (holding only dkb/candidate.h)
 * in three sandboxed steps: preprocess (a source that includes any file
 * other than dkb/candidate.h and the system's headers, under /usr/, /opt/
 * or /lib, is a COMPILE_ERROR, and then the diagnostics of this step are
 * withheld but for their message lines about the source, lest they quote
 * the file it should not have read); compile to assembly (its diagnostics
 * are the log; inline assembly, `asm` in the source or #APP in the output,
 * is a COMPILE_ERROR: it could make system calls the allow-list never
 * sees; only an empty asm statement, a compiler barrier, is allowed);
 * assemble and link. A step that fails or runs past its time is a
 * COMPILE_ERROR. Then the symbol check.
 * A .cu candidate is compiled by $DKB_NVCC (default nvcc) in two sandboxed
 * steps: preprocess (-E -MD: the same include and inline-assembly checks;
 * PTX inline assembly is refused too), then compile and link with
 *   -std=c++17 -O3 -DCCCL_DISABLE_NVTX -DNVTX_DISABLE
 *   -gencode arch=compute_90,code=[sm_90,compute_90] -Xcompiler -fPIC
 *   -shared -cudart shared -Xlinker --wrap=... -I SCRATCH/include
 * (its diagnostics are the log; --wrap: the heap's functions and the CUDA
 * runtime's of DKB_CUDA_WRAPPED, cuda_interpose.h); then
 * dkb__symbols_check_cuda.
 * scratch_dir must exist. Returns 0 when the build step itself ran
 * (whatever the verdict), an error when the harness could not run the
 * compiler or write into scratch_dir. b is initialised by the call (free
 * it with dkb__build_free, also on failure). */
int dkb__build_candidate(const char *src, dkb_mode mode, const char *scratch_dir, dkb_build *b,
                         dkb_error *err);
void dkb__build_free(dkb_build *b);   /* accepts a zeroed build */

/* The mode's entry symbol: "dkb_candidate_full" / "dkb_candidate_core". */
const char *dkb__entry_symbol(dkb_mode mode);

/* Start argv (argv[0] found on PATH) with stdin /dev/null and its stdout
 * (and stderr too when merge, else /dev/null) on a pipe: *pid, and *fd to
 * read (close it, then dkb__spawn_wait). 0, or an error. */
int dkb__spawn_reading(char *const argv[], int merge, pid_t *pid, int *fd, dkb_error *err);
/* waitpid(pid) through EINTR; *status as waitpid's. 0, or an error. */
int dkb__spawn_wait(pid_t pid, const char *what, int *status, dkb_error *err);
/* Run argv (argv[0] found on PATH) to completion; its stdout (and stderr
 * too when merge) in *out (malloc'd, NUL-terminated, at most max bytes kept;
 * more is read and dropped), its exit status in *status (as waitpid).
 * 0, or an error when it could not be started or read. */
int dkb__run_capture(char *const argv[], int merge, size_t max, char **out, int *status, dkb_error *err);
/* sha256 of a file as 64 hex digits (via sha256sum). */
int dkb__sha256_file(const char *path, char hex[65], dkb_error *err);

/* symbols.c: check a built shared object: every symbol it imports must be on
 * the allow-list (libc memory/string/stdio-printing/malloc/qsort utilities,
 * libm, OpenMP, compiler support), else FORBIDDEN_SYMBOL naming them (up to
 * detail's size); the entry symbol must be defined, else BAD_ENTRY. Uses
 * `nm -D` ($DKB_NM, default nm). *v = OK when both hold. 0, or an error
 * when nm could not be run or failed. */
int dkb__symbols_check(const char *so, const char *entry, dkb_verdict *v, char *detail, size_t n,
                       dkb_error *err);
/* The allow-list: name without its @version. */
bool dkb__symbol_allowed(const char *name);
/* The data objects (not functions) on the allow-list, for the worker to
 * restore before every call: *n names (stdout, stderr, signgam, ...). */
const char *const *dkb__symbol_data_objects(size_t *n);
/* CUDA candidates (.cu): the same check with the CUDA allow-list: the C
 * list, plus the CUDA runtime's cuda* functions but those that select or
 * reset the device, set limits or configuration, share memory with other
 * processes (cudaIpc*, memory pool export/import, external memory,
 * graphics interop) or reach the driver API (cudaGetExportTable,
 * cudaGetDriverEntryPoint*), allocate memory the worker cannot poison
 * (managed memory, arrays, pools of one's own) or run host callbacks; the
 * wrapped functions (cuda_interpose.h) only as __wrap_ imports; plus what
 * nvcc emits to register and launch kernels (__cudaRegisterVar through its
 * wrap: __device__/__constant__ variables are restored before every call),
 * plus the C++ runtime's operator new/delete, guarded statics, exceptions
 * and what CUB's and Thrust's headers import (docs/harness.md, "CUDA
 * candidates"). */
int dkb__symbols_check_cuda(const char *so, const char *entry, dkb_verdict *v, char *detail, size_t n,
                            dkb_error *err);
bool dkb__symbol_allowed_cuda(const char *name);
/* insns.c: after the symbols, the built object's machine code: an
 * instruction that reads a clock with no system call (x86 rdtsc, rdtscp,
 * rdpmc; AArch64 mrs of the counter registers) makes it COMPILE_ERROR,
 * naming it in detail; *v is left as it was otherwise. Disassembles with
 * `objdump -d` ($DKB_OBJDUMP). 0, or an error when objdump could not be
 * run or failed. */
int dkb__insns_check(const char *so, dkb_verdict *v, char *detail, size_t n, dkb_error *err);
/* Is src a CUDA candidate (its name ends in .cu)? */
bool dkb__is_cuda_source(const char *src);

/* ---- sandbox (sandbox.c) ---- */

typedef struct dkb_limits {
    double timeout_s;          /* wall clock for the whole worker run (> 0) */
    uint64_t mem_bytes;        /* resident anonymous memory (RSS less file
                                * pages, so the mapped store does not count);
                                * 0: no limit */
    uint64_t output_bytes;     /* stdout + stderr; more is output_limit (0: 1 MiB) */
    uint64_t as_bytes;         /* RLIMIT_AS of the child (0: none); the worker
                                * sets its own backstop from mem_bytes */
    const char *output_path;   /* where stdout/stderr go (NULL: an unlinked
                                * temporary file) */
    struct dkb__relay *relay;  /* a worker of `mpirun dkb eval` (relay.h): two more
                                * pipes, fds 5 and 6, served from the poll loop
                                * (NULL: none) */
    const char *cuda_visible;  /* the child's CUDA_VISIBLE_DEVICES (its one GPU, when
                                * rows run on several: eval_slots.h); NULL: ours */
} dkb_limits;

typedef struct dkb_sandbox_result {
    dkb_verdict verdict;       /* OK when the worker reported (exit status 0
                                * and a complete report); else how it died:
                                * TIMEOUT, OUT_OF_MEMORY, OUTPUT_LIMIT,
                                * CRASH (signal), EXITED (no report),
                                * WROTE_INPUT (its fault handler said so) */
    int exit_code;             /* -1 when killed by a signal */
    int signal;                /* 0 unless killed by a signal */
    char *report;              /* the worker's JSON report (malloc'd) or NULL */
    char *output_tail;         /* last bytes of its stdout/stderr (malloc'd, may be "") */
    uint64_t output_size;      /* bytes it wrote to stdout/stderr */
    uint64_t peak_rss;         /* largest anonymous RSS seen (bytes) */
    double seconds;
    char detail[512];
} dkb_sandbox_result;

/* Run argv (argv[0] an executable path) with limits in a child process (its
 * own process group; stdin /dev/null; core dumps off; every fd but 0, 1, 2
 * and the report pipe closed). The child finds the report fd number in env
 * DKB_REPORT_FD, the memory and output limits in DKB_MEM_LIMIT and
 * DKB_OUTPUT_LIMIT (bytes). When the run ends, the whole process group is
 * killed. The report: the last line on the report pipe that is a JSON
 * object whose "nonce" is the one the sandbox wrote (one line) on the fd
 * named in env DKB_NONCE_FD; the worker reads it from that pipe only when
 * it writes its report (a candidate can call nothing that reads a file
 * descriptor), so a report the candidate forges does not count. Returns 0
 * when the child ran (whatever its verdict); an error (r->verdict
 * HARNESS_ERROR) when it could not be started or watched. r is initialised
 * by the call; free it with dkb__sandbox_result_free. */
int dkb__sandbox_run(char *const argv[], const dkb_limits *lim, dkb_sandbox_result *r, dkb_error *err);
void dkb__sandbox_result_free(dkb_sandbox_result *r);   /* accepts a zeroed result */
/* Make s[0..n) printable text for JSON and Markdown: every byte that is a
 * control character (but newline and tab) or not part of well-formed UTF-8
 * becomes '?'. */
void dkb__text_sanitize(char *s, size_t n);
/* "SIGSEGV" for 11, "signal 77" for unknown ones (buf holds at least 16). */
const char *dkb__signal_name(int sig, char *buf, size_t n);

#endif
