/* worker_guard.h: the worker's process hardening (worker_guard.c), kept
 * apart from its evaluation protocol (worker.c). What is here:
 *   - the report channel's descriptors and the sandbox's nonce;
 *   - fault handlers that turn a write to a read-only input into
 *     wrote_input (naming the input) and any other fault into a crash
 *     report naming what the worker was doing (the phase);
 *   - glibc's malloc tunables (the process re-executes itself once with
 *     them), the address-space and file-size backstops, the system call
 *     filter;
 *   - the candidate's image: its writable segments, snapshotted once and
 *     restored before every call;
 *   - the pristine state every candidate call starts from: OpenMP's
 *     settings, every thread's stack below the call scrubbed, each team
 *     thread's errno, ctype table pointers and floating-point environment,
 *     the C library's stdio streams (their FILE objects, locks and
 *     buffers) and every data object a candidate may import by name
 *     (symbols.c), put back as they were before the first call.
 * Functions here may be called from the fault handler only where they say
 * so. */
#ifndef DKB_HARNESS_WORKER_GUARD_H
#define DKB_HARNESS_WORKER_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"

/* The poison byte: glibc's malloc perturbation (freed blocks filled with
 * it, fresh ones with its complement), and the fill of output buffers
 * before the first check and every timed call. The second check fills
 * them with DKB_POISON_AGAIN instead. The tunables string is built from
 * this one number. */
#define DKB_POISON 165 /* 0xA5 */
#define DKB_POISON_AGAIN (0xFF ^ DKB_POISON)

/* ---- the report channel ---- */

/* Read DKB_REPORT_FD (default 1) and DKB_NONCE_FD from the environment. */
void dkb__guard_report_init(void);
/* Write all of s[0..n) to the report descriptor (async-signal-safe). */
void dkb__guard_report_write(const char *s, size_t n);
/* The nonce the sandbox wrote on DKB_NONCE_FD, read from the pipe at the
 * first call (so it is nowhere in memory while candidate code runs); ""
 * when the worker runs by hand. Async-signal-safe. */
const char *dkb__guard_nonce(void);

/* ---- faults ---- */

/* What the worker is doing, for a crash report ("the candidate call,
 * timing (seed 17)"). Not async-signal-safe (the handler only reads it). */
void dkb__guard_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A read-only range [lo, hi) whose writes are wrote_input, with its label
 * (kept, not copied). At most a few thousand; extra ones are dropped. */
void dkb__guard_add_range(uintptr_t lo, uintptr_t hi, const char *label);
/* The same for a range the harness maps and unmaps while candidate code
 * runs (a loader's partitions): a write there is wrote_input naming label,
 * a read a crash naming read_label (x86-64, from the fault's error code;
 * elsewhere every fault there counts as a write). */
void dkb__guard_add_range_unmapped(uintptr_t lo, uintptr_t hi, const char *label, const char *read_label);
/* Install the handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
 * SIGTRAP and SIGSYS on an alternate stack. */
int dkb__guard_install_handlers(dkb_error *err);

/* ---- process limits ---- */

/* Re-execute `dkb __worker job_path` once with glibc's malloc tunables (no
 * per-thread cache, perturbation DKB_POISON) unless they are in effect.
 * Returns only when they are, or when exec failed. */
void dkb__guard_reexec_with_tunables(const char *job_path);
/* Address space = what the process holds now + 4 x DKB_MEM_LIMIT; file
 * size <= DKB_OUTPUT_LIMIT (both from the environment, when set). */
void dkb__guard_set_backstops(void);
/* The time-stamp counter off for this thread and a team of `threads`
 * (PR_SET_TSC, PR_TSC_SIGSEGV): candidate code that reads it faults. The
 * worker's clocks are system calls (common/timing.c). */
void dkb__guard_tsc_off(int threads);

/* The system call filter for the rest of the process's life (x86-64, not
 * under AddressSanitizer): 0, or -1 when not installed. */
int dkb__guard_syscall_filter(void);

/* ---- the candidate's image ---- */

/* Snapshot the writable segments of the loaded object `so` (a dlopen
 * handle). *tls is set when it has thread-local storage (which the worker
 * refuses). 0, or an error (not found, too many segments, no memory). */
int dkb__guard_image_take(void *so, int *tls, dkb_error *err);
/* Put every snapshotted segment back. */
void dkb__guard_image_restore(void);

/* ---- the pristine state of a call ---- */

/* Record the state every candidate call must start from, with `threads`
 * OpenMP threads already started: OpenMP's settings, the main thread's
 * stack bounds, the stdio streams (stdout gets a harness buffer first),
 * the importable data objects. Call once, before any candidate code. */
int dkb__guard_pristine_take(int threads, dkb_error *err);
/* Put OpenMP's settings back (before and after every call). */
void dkb__guard_openmp_restore(void);
/* Before a call, from the function that makes it: the candidate's
 * segments, OpenMP settings, stdio streams and named data objects put
 * back; every other team thread's stack below its parallel-region frame
 * scrubbed and its errno, ctype pointers and floating-point environment
 * reset; the same resets on this thread. Returns the lowest resident
 * address of this thread's stack, for dkb__guard_wipe_below. */
char *dkb__guard_pristine_restore(void);
/* Zero this thread's stack from lo up to the return address of this call:
 * everything the caller's callees (the last candidate call among them)
 * left. Call it directly from the function that then calls the candidate,
 * as the last thing before the call, with what dkb__guard_pristine_restore
 * returned. */
void dkb__guard_wipe_below(char *lo);

#endif
