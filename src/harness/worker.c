/* worker.c: `dkb __worker JOB`, the process that runs candidate code (only
 * ever in a sandboxed child: see sandbox.c), and its evaluation protocol.
 * For one query it
 *   - opens the store read-only (a write to it faults), draws each seed's
 *     parameters and computes the expected results with the baseline;
 *   - loads the candidate (dlopen), refuses thread-local storage, and
 *     builds its inputs in read-only memory (adapter.c);
 *   - starts every candidate call from the same state (worker_guard.c: its
 *     static memory, OpenMP settings, stdio streams and named C library
 *     objects put back, every team thread's stack scrubbed and per-thread
 *     C library state reset; glibc's malloc perturbation on throughout, so
 *     no freed block carries data into a later call; on CUDA also its
 *     device variables, stream attributes and device memory: worker_cuda.c);
 *   - checks every seed (outputs poisoned, thread count before and after),
 *     times baseline and candidate interleaved (every timed answer checked
 *     too), checks every seed again (poisoned differently) against the
 *     first answers, and compares the candidate's median with the
 *     bandwidth floor;
 *   - writes one JSON report (protocol.h) to the report fd and _exits
 *     (no candidate destructor or atexit handler runs after the report).
 * The process hardening (fault handlers, system call filter, limits, the
 * pristine state) is in worker_guard.c. With backend cuda (worker_cuda.c)
 * the store's columns are the evaluating process's device copies (CUDA
 * IPC), baseline and candidate run on the GPU and are timed with CUDA
 * events, core outputs are device buffers, and input columns are watched
 * by checksum (a change is wrote_input); a CUDA error after a candidate
 * call is a crash. The system call filter and the address-space backstop
 * are off there: the CUDA driver needs ioctls on its device files and
 * reserves a large address space.
 * The worker may exit without freeing: it is a short-lived process. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/timing.h"
#include "harness/adapter.h"
#include "harness/harness_cuda.h"
#include "harness/heap_interpose.h"
#include "harness/protocol.h"
#include "harness/relay.h"   // defines: DKB__RELAY_MSG
#include "harness/worker_guard.h"
#include "harness/worker_ranks.h"
#include "harness/worker_stream.h"
#include "queries/partition.h"   // defines: dkb__query_run_budget, dkb__part_plan_get
#include "queries/stream.h"      // defines: dkb__cuda_stream_scrub
#include "sql/task.h"   // defines: dkb__sql_task_from_parts

#define MAX_RANGES 4096
#define MAX_TIMED 10000000       /* timed calls per side, at most */
#define BW_MAX_BYTES ((size_t)1 << 30)
#define BW_MIN_BYTES ((size_t)1 << 16)

static const dkb_compare_opts CMP_OPTS = {1e-9, 1e-9, 0, false};

/* ---- timing helpers ---- */

typedef struct samples {
    double *ms;
    int n, cap;
} samples;

static int samples_add(samples *s, double ms) {
    if (s->n == s->cap) {
        int ncap = s->cap ? s->cap * 2 : 256;
        double *nm = realloc(s->ms, (size_t)ncap * sizeof *nm);
        if (!nm) return DKB_ENOMEM;
        s->ms = nm, s->cap = ncap;
    }
    s->ms[s->n++] = ms;
    return 0;
}

/* Threads of this process (entries of /proc/self/task), -1 on error. */
static int count_threads(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Best time (ms) to scan buf in parallel on `threads` threads with memchr
 * (vectorised, read-only): the best of up to 50 scans, stopping after 5
 * once 100 ms have gone. */
static double best_scan_ms(const char *buf, size_t bytes, int threads) {
    double best = INFINITY, spent = 0;
    volatile size_t sink = 0;
    for (int r = 0; r < 50 && !(r >= 5 && spent > 100); r++) {
        double t0 = dkb__now_ms();
        size_t found = 0;
        if (threads <= 1) {
            /* no OpenMP region: its start-up would count against small buffers */
            found = memchr(buf, 1, bytes) != NULL;
        } else {
#pragma omp parallel num_threads(threads) reduction(+ : found)
            {
                int nt = omp_get_num_threads(), me = omp_get_thread_num();
                size_t chunk = (bytes / (size_t)nt + 63) & ~(size_t)63;
                size_t lo = chunk * (size_t)me, hi = lo + chunk < bytes ? lo + chunk : bytes;
                if (lo < hi) found += memchr(buf + lo, 1, hi - lo) != NULL;
            }
        }
        double t = dkb__now_ms() - t0;
        spent += t;
        sink += found;
        if (t < best) best = t;
    }
    (void)sink;
    return best;
}

/* Read bandwidth (GB/s) over a buffer of `bytes` (the bytes the query
 * reads, so the cache level matches the query's): the better of one thread
 * and `threads` threads, so a busy machine (threads waiting to be
 * scheduled) makes the floor lower, never higher. NaN when out of memory. */
static double measure_bandwidth(size_t bytes, int threads) {
    if (bytes < BW_MIN_BYTES) bytes = BW_MIN_BYTES;
    if (bytes > BW_MAX_BYTES) bytes = BW_MAX_BYTES;
    char *buf = malloc(bytes);
    if (!buf) return NAN;
    /* a non-zero fill: malloc + memset(0) may become calloc, whose untouched
     * zero pages read far faster than real memory */
    memset(buf, 0x5a, bytes);
    double one = best_scan_ms(buf, bytes, 1);
    double all = threads > 1 ? best_scan_ms(buf, bytes, threads) : one;
    free(buf);
    double best = one < all ? one : all;
    return best > 0 ? (double)bytes / (best * 1e-3) / 1e9 : NAN;
}

/* ---- the worker's state ---- */

typedef int (*core_fn)(const dkb_cand_set *, dkb_cand_set *, const dkb_cand_env *);
typedef int (*full_fn)(const dkb_cand_db *, const dkb_cand_params *, dkb_cand_result *, const dkb_cand_env *);

typedef struct worker {
    dkb_job job;
    dkb_report rep;
    const dkb_query *q;
    dkb_store *db;
    double sf;
    int threads;
    int core;                  /* core mode (candidate or baseline) */
    dkb_tp *tp;                /* baseline runs (reset around every call) */
    dkb_tp *tp_prep;           /* core: every seed's prepared inputs (never reset) */
    dkb_tp *tp_fin;            /* core: finish over the candidate's outputs */
    int ns;
    dkb_params *params;        /* ns */
    dkb_result *expected;      /* ns */
    dkb_tensor_set *prep;      /* core: ns */
    /* candidate */
    void *so;
    core_fn core_entry;
    full_fn full_entry;
    int (*after_call)(void);   /* a Python candidate's shim on CUDA: dkb_shim_after_call */
    dkb_ro_arena ro;
    const dkb_cand_db *cdb;
    const dkb_cand_params **cparams;  /* ns */
    const dkb_cand_set **cin;         /* ns */
    const dkb_cand_env *env;
    dkb_cand_out_result ores;
    dkb_cand_out_set oset;
    dkb_result *first;         /* ns: the candidate's answers of the first pass */
    /* backend cuda */
    int cuda;
    dkb__wcuda *cu;
    /* a SQL task (job "sql"): the query object's owner */
    dkb__sql_task *sqlt;
    /* the implausibility floor: bytes any correct implementation must read
     * (dkb__set_store_must_read) at the measured bandwidth */
    double must_read_bytes, must_read_ms;
    /* --mem-budget (job mem_budget > 0): the baseline runs under it; how
     * the seeds' runs went (part: seed 0's; resident: the most over the
     * seeds); the candidate's largest total of loads in one call */
    int64_t budget;
    dkb__part_info part;
    int64_t resident_max;
    int64_t cand_loaded_max;
    int cand_called;           /* the candidate has been called (its loads are known) */
    /* ranks (job "ranks", nranks > 1: `mpirun dkb eval`, worker_ranks.h):
     * every exchange relayed; the candidate runs on this rank's share when
     * it declares DKB_CANDIDATE_RANKS (aware), else on rank 0 alone, whole */
    int rank, nranks;
    int aware;                 /* the candidate defines DKB_CANDIDATE_RANKS */
    int cand_here;             /* the candidate is called on this rank */
} worker;

/* Several ranks? */
static int ranked(const worker *w) { return w->nranks > 1; }

/* Write the report and leave (never returns). */
static void finish_report(worker *w) {
    if (w->budget && w->cand_called) w->rep.streamed_candidate = (double)w->cand_loaded_max;
    snprintf(w->rep.nonce, sizeof w->rep.nonce, "%s", dkb__guard_nonce());
    /* messages may quote the candidate's strings: keep the report valid text */
    dkb__text_sanitize(w->rep.detail, strlen(w->rep.detail));
    for (int i = 0; i < w->rep.nchecks; i++) dkb__text_sanitize(w->rep.checks[i].message, strlen(w->rep.checks[i].message));
    char *json = dkb__report_json(&w->rep);
    fflush(stdout);
    fflush(stderr);
    /* a newline first: it ends any partial line a candidate left on the pipe */
    dkb__guard_report_write("\n", 1);
    if (!json) {
        char b[256];
        snprintf(b, sizeof b, "{\"nonce\":\"%s\",\"verdict\":\"harness_error\",\"detail\":\"worker: out of memory\"}\n",
                 dkb__guard_nonce());
        dkb__guard_report_write(b, strlen(b));
        _exit(1);
    }
    dkb__guard_report_write(json, strlen(json));
    _exit(0);
}

static void fail_report(worker *w, dkb_verdict v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_report(worker *w, dkb_verdict v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    w->rep.verdict = v;
    vsnprintf(w->rep.detail, sizeof w->rep.detail, fmt, ap);
    va_end(ap);
    finish_report(w);
}

static void set_phase(const char *what, uint64_t seed) {
    dkb__guard_phase("%s (seed %llu)", what, (unsigned long long)seed);
}

/* ---- loading the candidate ---- */

static int python_shim(const char *so);

static void load_candidate(worker *w) {
    const char *entry = dkb__entry_symbol(w->core ? DKB_MODE_CORE : DKB_MODE_FULL);
    dkb__guard_phase("loading the candidate (its constructors)");
    dlerror();
    dkb__heap_load_begin();
    w->so = dlopen(w->job.so, RTLD_NOW | RTLD_LOCAL);
    if (!w->so) fail_report(w, DKB_VERDICT_BAD_ENTRY, "cannot load %s: %s", w->job.so, dlerror());
    dkb__guard_phase("the harness");
    void *sym = dlsym(w->so, entry);
    if (!sym) fail_report(w, DKB_VERDICT_BAD_ENTRY, "does not define %s", entry);
    if (w->core) w->core_entry = (core_fn)sym;
    else w->full_entry = (full_fn)sym;
    /* the Python bridge's untimed work after each call (py_shim.c) */
    if (w->cuda && python_shim(w->job.so)) *(void **)&w->after_call = dlsym(w->so, "dkb_shim_after_call");
    int tls = 0;
    dkb_error e = {0};
    if (dkb__guard_image_take(w->so, &tls, &e) || dkb__heap_load_end(&e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s: %s", w->job.so, e.msg);
    if (tls)
        fail_report(w, DKB_VERDICT_FORBIDDEN_SYMBOL,
                    "uses thread-local storage (state that would survive between calls)");
    /* solo: dkb bench's one-rank time of a ranks candidate (rank 0 alone, whole) */
    w->aware = dlsym(w->so, "dkb_candidate_ranks") != NULL && !w->job.solo;
    w->cand_here = !ranked(w) || w->aware || w->rank == 0;
}

/* Ranks: the db view of this rank's share (a candidate with
 * DKB_CANDIDATE_RANKS): the tables the query's partition plan streams
 * (lineitem and orders, or part and partsupp) cut to partitions
 * [P r / K, P (r + 1) / K) of the store's P, as the baseline splits them
 * (dkb__comm_share); every other table whole. The vectors point into the
 * mapped columns at the share's first row; a text column's n + 1 offsets
 * are the whole column's from that row (offsets[0] need not be 0), into the
 * whole column's characters. Before the arena is sealed. */
static void share_db(worker *w) {
    const dkb__part_plan *pl = dkb__part_plan_get(w->q->number);
    if (!pl) return;
    dkb_cand_db *db = (dkb_cand_db *)w->cdb;
    for (int t = 0; t < db->ntables; t++) {
        dkb_cand_table *tab = (dkb_cand_table *)&db->tables[t];
        if (!(pl->stream[0] && !strcmp(tab->name, pl->stream[0])) && !(pl->stream[1] && !strcmp(tab->name, pl->stream[1])))
            continue;
        const dkb_store_table *st = dkb_store_table_at(w->db, t);
        int P = dkb_store_table_npartitions(st);
        int64_t rows = dkb_store_table_rows(st), r0 = 0, r1 = rows;
        if (P < 1) {
            /* no partitions: rank 0 has the table */
            if (w->rank) r0 = r1 = rows;
        } else {
            int lo = (int)((int64_t)P * w->rank / w->nranks), hi = (int)((int64_t)P * (w->rank + 1) / w->nranks);
            r0 = lo < P ? dkb_store_table_partition(st, lo)->row_start : rows;
            r1 = hi > lo ? dkb_store_table_partition(st, hi - 1)->row_start + dkb_store_table_partition(st, hi - 1)->rows
                         : r0;
        }
        tab->rows = r1 - r0;
        for (int c = 0; c < tab->ncols; c++) {
            dkb_cand_vec *v = (dkb_cand_vec *)&tab->cols[c];
            size_t es = v->type == DKB_CAND_STR ? sizeof(int64_t) : dkb_tp_dtype_size((dkb_tp_dtype)v->type);
            v->n = r1 - r0;
            v->data = (char *)v->data + (size_t)r0 * es;
        }
    }
}

/* ---- baseline ---- */

/* A baseline step (prepare, core) on context tp returned rc: any failure,
 * a nonzero rc with a clean context as well as an error the context
 * recorded, fails the row as a harness error naming the step. */
static void step_ok(worker *w, int rc, dkb_tp *tp, const char *what, uint64_t seed) {
    dkb_error e = {0};
    int st = dkb_tp_status(tp, &e);
    if (rc || st)
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline %s %s (seed %llu): %s", w->q->name, what,
                    (unsigned long long)seed, st ? e.msg : dkb_err_name(rc));
}

/* Entering (1) or leaving (0) a call's window, baseline or candidate,
 * checked or timed alike: glibc's malloc perturbation is off inside (it
 * would make the side that allocates more pay for overwriting every block)
 * and on outside, so every block the harness frees is overwritten, and
 * every block the candidate frees too (its frees are deferred to the end of
 * its call: heap_interpose.h). */
static void timed_window(int inside) { mallopt(M_PERTURB, inside ? 0 : DKB_POISON); }

/* A CUDA baseline call's window closes (the device idle): *t0, *t1 := 0
 * and its event time. */
static void baseline_time_end(worker *w, uint64_t seed, double *t0, double *t1) {
    dkb_error e = {0};
    double ms;
    if (dkb__wcuda_time_end(w->cu, &ms, &e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)seed, e.msg);
    *t0 = 0, *t1 = ms;
}

/* One timed baseline call for seed index s: the whole query (full), or
 * the core over the prepared inputs (core). */
static void ranks_fail(worker *w, const char *what) __attribute__((noreturn));

/* Under a budget on CUDA, after a baseline run (outside the timed
 * window): the device slots its streaming keeps for the next run hold the
 * streamed tables' last runs of partitions; zeroed, so that a candidate
 * finds no streamed rows on the device but the loads it pays for. */
static void scrub_streamed(worker *w) {
    dkb_error e = {0};
    if (w->cuda && w->budget && dkb__cuda_stream_scrub(&e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: zeroing the baseline's streaming slots: %s", e.msg);
}

static double baseline_call(worker *w, int s) {
    uint64_t seed = w->job.seeds[s];
    dkb_tp_reset(w->tp);
    dkb_error e = {0};
    double t0, t1;
    /* ranks: every rank starts together (outside the window) */
    if (ranked(w) && dkb__comm_barrier(dkb__wranks_comm(), &e)) ranks_fail(w, "the barrier before a baseline call");
    if (w->cuda && dkb__wcuda_time_begin(w->cu, &e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)seed, e.msg);
    if (w->core) {
        dkb_tensor_set out;
        memset(&out, 0, sizeof out);
        timed_window(1);
        t0 = dkb__now_ms();
        int rc = w->q->core(w->tp, &w->prep[s], &out);
        t1 = dkb__now_ms();
        if (w->cuda) baseline_time_end(w, seed, &t0, &t1);
        timed_window(0);
        step_ok(w, rc, w->tp, "core", seed);
    } else {
        dkb_result res = {0};
        timed_window(1);
        t0 = dkb__now_ms();
        int rc = ranked(w) ? dkb__query_run_ranks(w->q, w->tp, w->db, &w->params[s], 0, w->threads, dkb__wranks_comm(),
                                                  &res, NULL, &e)
                 : w->budget ? dkb__query_run_budget(w->q, w->tp, w->db, &w->params[s], w->budget, w->threads, &res, NULL, &e)
                             : dkb_query_run(w->q, w->tp, w->db, &w->params[s], &res, &e);
        t1 = dkb__now_ms();
        /* the CUDA window closes before the result is freed, as a
         * candidate's before the harness's housekeeping */
        if (w->cuda) baseline_time_end(w, seed, &t0, &t1);
        timed_window(0);
        if (rc && ranked(w) && dkb__wranks_broken(NULL, 0)) ranks_fail(w, "a baseline call across the ranks");
        if (rc) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)seed, e.msg);
        dkb_result_free(&res);
    }
    dkb_tp_reset(w->tp);
    scrub_streamed(w);
    double ms = t1 - t0;
    /* ranks: the call's time is the slowest rank's */
    if (ranked(w) && dkb__comm_allreduce(dkb__wranks_comm(), &ms, 1, DKB__COMM_F64, DKB__COMM_MAX, &e))
        ranks_fail(w, "the time of a baseline call");
    return ms;
}

/* An exchange across the ranks failed (another rank ended, or the ranks
 * were out of step): the report keeps a verdict the row already has, else
 * says which exchange; the evaluating process decides whose doing it was
 * (relay.h). */
static void ranks_fail(worker *w, const char *what) {
    char why[DKB__RELAY_MSG + 64];
    dkb__wranks_broken(why, sizeof why);
    if (w->rep.verdict != DKB_VERDICT_OK) finish_report(w);
    fail_report(w, dkb__wranks_blamed() ? DKB_VERDICT_RETURNED_ERROR : DKB_VERDICT_HARNESS_ERROR, "%s: %s", what, why);
    _exit(1); /* not reached: fail_report leaves */
}

/* Ranks: the outcome of a candidate call agreed by every rank (the lowest
 * failing rank's verdict and message, the slowest rank's time), so every
 * rank takes the same branch. A failed exchange ends the report with the
 * call's own verdict when it had one. */
static void agree_call(worker *w, dkb_verdict *v, char *msg, size_t n, double *ms) {
    if (!ranked(w)) return;
    int iv = (int)*v;
    double t = ms ? *ms : 0;
    if (dkb__wranks_agree(&iv, &t, msg, n)) {
        if (*v != DKB_VERDICT_OK) fail_report(w, *v, "%s", msg);
        ranks_fail(w, "the agreement after a candidate call");
    }
    w->rep.agreed = 1;
    *v = (dkb_verdict)iv;
    if (ms) *ms = t;
}

/* Ranks: rank 0's decision (go on timing or not), on every rank. */
static int rank0_says(worker *w, int mine) {
    if (!ranked(w)) return mine;
    int32_t x = mine;
    dkb_error e = {0};
    if (dkb__comm_bcast(dkb__wranks_comm(), &x, sizeof x, 0, &e)) ranks_fail(w, "rank 0's decision to go on timing");
    return x;
}

/* ---- candidate calls ---- */

typedef struct call_out {
    dkb_verdict v;
    char msg[512];
    double ms;
} call_out;

/* One candidate call for seed index s: the pristine state put back
 * (worker_guard.h: statics, OpenMP, stdio, named objects, every thread's
 * stack and per-thread state; on CUDA the device state too), the outputs
 * poisoned, then the call, timed. With count: threads counted before and
 * after. The stack below this frame is wiped right before the call, so the
 * candidate's frames start on zeros whatever the last call left. */
static void candidate_call(worker *w, int s, uint8_t poison, int count, const char *what, call_out *o) {
    uint64_t seed = w->job.seeds[s];
    o->v = DKB_VERDICT_OK;
    o->msg[0] = 0;
    o->ms = 0;
    if (ranked(w)) {
        /* every rank starts together, outside the window */
        dkb_error be = {0};
        if (dkb__comm_barrier(dkb__wranks_comm(), &be)) ranks_fail(w, "the barrier before a candidate call");
        if (!w->cand_here) return; /* a candidate without DKB_CANDIDATE_RANKS runs on rank 0 alone */
    }
    if (w->core) dkb__out_set_reset(&w->oset, poison);
    else dkb__out_result_reset(&w->ores, poison);
    if (w->budget) dkb__wstream_call_begin();
    w->cand_called = 1;
    dkb_error e = {0};
    if (w->cuda) {
        /* device outputs, poisoned; the device state pristine; the cache
         * flushed and the device idle (time_begin, last) */
        if ((w->core && dkb__wcuda_outs_point(w->cu, &w->oset, poison, &e)) || dkb__wcuda_call_prepare(w->cu, &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "before %s (seed %llu): %s", what, (unsigned long long)seed, e.msg);
        count = 0; /* the CUDA runtime starts threads of its own */
    }
    int before = count ? count_threads() : 0;
    set_phase(what, seed);
    char *stack_lo = dkb__guard_pristine_restore();
    dkb__heap_call_begin();
    /* the stack below this frame zeroed (what earlier calls and the harness
     * left there) before the window opens: the wipe is the harness's work,
     * not the candidate's (up to the stack's high-water mark: tens of us);
     * what time_begin's own frames leave below is the CUDA runtime's */
    dkb__guard_wipe_below(stack_lo);
    /* the CUDA window opens here: the device idle, the cache flushed */
    if (w->cuda && dkb__wcuda_time_begin(w->cu, &e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "before %s (seed %llu): %s", what, (unsigned long long)seed, e.msg);
    timed_window(1);
    double t0 = dkb__now_ms();
    int rc = w->core ? w->core_entry(w->cin[s], &w->oset.set, w->env)
                     : w->full_entry(w->cdb, w->cparams[s], &w->ores.res, w->env);
    double t1 = dkb__now_ms();
    /* ... and closes when the device has done the call's work: the
     * harness's housekeeping below is not the candidate's time. A CUDA
     * error the call left (illegal address, trap, bad launch) usually kills
     * the context: nothing more can run here. */
    o->ms = t1 - t0;
    const int cuda_failed = w->cuda && dkb__wcuda_time_end(w->cu, &o->ms, &e);
    timed_window(0);
    if (w->budget) {
        /* everything the call loaded unmapped, before anything else runs */
        int64_t loaded = 0;
        dkb_error le = {0};
        if (dkb__wstream_call_end(&loaded, &le))
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", le.msg, what, (unsigned long long)seed);
        if (loaded > w->cand_loaded_max) w->cand_loaded_max = loaded;
    }
    dkb__guard_openmp_restore();
    /* every block the call left allocated freed (overwritten, or unmapped) */
    dkb__heap_call_end();
    dkb__guard_phase("the harness (after a candidate call, seed %llu)", (unsigned long long)seed);
    if (w->cuda) {
        if (cuda_failed)
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", e.msg, what, (unsigned long long)seed);
        if (w->core && dkb__wcuda_outs_fetch(w->cu, &w->oset, &e))
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", e.msg, what, (unsigned long long)seed);
        if (dkb__wcuda_call_cleanup(w->cu, &e))
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", e.msg, what, (unsigned long long)seed);
        if (w->after_call && w->after_call() != 0)
            fail_report(w, DKB_VERDICT_CRASH, "the device failed after %s (seed %llu): the Python bridge's "
                        "cleanup (its stderr says why)", what, (unsigned long long)seed);
    }
    if (rc != 0) {
        o->v = DKB_VERDICT_RETURNED_ERROR;
        dkb__cand_status_text(rc, o->msg, sizeof o->msg);
        const char *why = w->budget ? dkb__wstream_last_error() : "";
        if (*why) {
            size_t used = strlen(o->msg);
            snprintf(o->msg + used, sizeof o->msg - used, " (the loader: %.400s)", why);
        }
        return;
    }
    if (count) {
        int after = count_threads();
        if (before > 0 && after > before) {
            o->v = DKB_VERDICT_LEFT_THREADS;
            snprintf(o->msg, sizeof o->msg, "%d threads after the call, %d before (use at most env->threads OpenMP threads)",
                     after, before);
        }
    }
}

/* The candidate's answer of the last call for seed index s as a result
 * (*got zeroed on entry). OK, or a verdict with msg. */
static dkb_verdict collect(worker *w, int s, dkb_result *got, char *msg, size_t n) {
    dkb_verdict v = DKB_VERDICT_OK;
    if (!w->core) {
        dkb__out_result_collect(&w->ores, &w->expected[s], got, &v, msg, n);
        return v;
    }
    dkb_tensor_set out;
    if (dkb__out_set_collect(&w->oset, &out, &v, msg, n)) return v;
    set_phase("the baseline's finish over the candidate's outputs", w->job.seeds[s]);
    dkb_tp_reset(w->tp_fin);
    int rc = w->q->finish(w->tp_fin, &out, &w->params[s], got);
    dkb_error e = {0};
    int st = dkb_tp_status(w->tp_fin, &e);
    if (!rc && !st && got->nbad) snprintf(e.msg, sizeof e.msg, "%s", got->bad), rc = DKB_EINVAL;
    if (rc || st) {
        snprintf(msg, n, "the baseline's finish rejected the outputs: %s", e.msg[0] ? e.msg : dkb_err_name(rc ? rc : st));
        dkb_result_free(got);
        v = DKB_VERDICT_WRONG_ANSWER;
    }
    dkb_tp_reset(w->tp_fin);
    dkb__guard_phase("the harness");
    return v;
}

/* ---- setup ---- */

/* The bytes the query reads (the store columns its prepare step hands
 * over; on CUDA the columns it asked the device for), the machine's
 * bandwidth over that many bytes, the floor (reading them once) and the
 * implausibility bound (reading what any correct implementation must). */
static void measure_floor(worker *w) {
    dkb_tensor_set in;
    memset(&in, 0, sizeof in);
    const dkb_tensor_set *set = &in;
    if (w->core && !w->cuda) {
        set = &w->prep[0];
    } else {
        dkb_tp_reset(w->tp);
        step_ok(w, w->q->prepare(w->tp, w->db, &w->params[0], &in), w->tp, "prepare", w->job.seeds[0]);
    }
    int64_t bytes = 0;
    if (w->cuda) dkb_tp_touched(w->tp, NULL, &bytes);
    else bytes = dkb__set_store_bytes(set, w->db);
    w->must_read_bytes = (double)dkb__set_store_must_read(set, w->db);
    if (set == &in) dkb_tp_reset(w->tp);
    w->rep.bytes_read = (double)bytes;
    w->rep.bandwidth_gbs = w->cuda ? dkb__wcuda_bandwidth(w->cu, (size_t)bytes)
                                   : measure_bandwidth((size_t)bytes, w->threads);
    w->rep.floor_ms = w->rep.bytes_read / (w->rep.bandwidth_gbs * 1e9) * 1e3;
    w->must_read_ms = w->must_read_bytes / (w->rep.bandwidth_gbs * 1e9) * 1e3;
}

/* Seed index s's expected result under the budget; the runs recorded. A
 * budget the query cannot run under (too small, or a store of one
 * partition: dkb__query_run_budget's messages, which name --mem-budget) is
 * the report's budget_error as well. */
static void expected_budgeted(worker *w, int s) {
    uint64_t seed = w->job.seeds[s];
    dkb_error e = {0};
    dkb__part_info info;
    if (dkb__query_run_budget(w->q, w->tp, w->db, &w->params[s], w->budget, w->threads, &w->expected[s], &info, &e)) {
        if (strstr(e.msg, "--mem-budget")) snprintf(w->rep.budget_error, sizeof w->rep.budget_error, "%s", e.msg);
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)seed, e.msg);
    }
    if (s == 0) w->part = info;
    if (info.resident_bytes > w->resident_max) w->resident_max = info.resident_bytes;
    w->rep.partitioned = w->part.partitioned;
    w->rep.chunks = w->part.chunks;
    w->rep.streamed_baseline = w->part.partitioned ? (double)w->part.streamed_bytes * w->part.passes : 0;
}

static void setup(worker *w, const char *job_path) {
    dkb_error e = {0};
    if (dkb__job_read(job_path, &w->job, &e)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    if (w->job.sql) {
        /* a SQL task: planned by the evaluating process, translated here */
        if (w->job.mode == DKB_JOB_CORE) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: a SQL task has no core mode");
        if (dkb__sql_task_from_parts(w->job.query, w->job.sql, w->job.sql_plan, w->job.sql_columns, &w->sqlt, &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
        w->q = dkb__sql_task_query(w->sqlt);
    } else {
        w->q = dkb_query_find(w->job.query);
    }
    if (!w->q) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: no query '%s' in this build", w->job.query);
    w->core = w->job.mode == DKB_JOB_CORE;
    w->rank = w->job.rank, w->nranks = w->job.nranks > 1 ? w->job.nranks : 1;
    if (ranked(w)) dkb__wranks_init(w->rank, w->nranks);
    if (dkb_store_open(w->job.store, 0, &w->db, &e)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    w->sf = dkb_store_scale_factor(w->db);

    w->threads = w->job.threads > 0 ? w->job.threads : omp_get_max_threads();
    omp_set_dynamic(0);
    omp_set_num_threads(w->threads);
    w->rep.threads = w->threads;
    w->rep.floor_slack = w->job.floor_slack;
    /* start the OpenMP pool now, so the thread count before a call includes it */
#pragma omp parallel num_threads(w->threads)
    {
        volatile int x = omp_get_thread_num();
        (void)x;
    }
    /* cuda: baseline and prepared inputs on the GPU over the shared columns;
     * the finish over the candidate's (copied back) outputs on the CPU */
    w->cuda = w->job.cuda;
    w->budget = w->job.mem_budget;
    w->rep.budgeted = w->budget > 0;
    if (w->budget && w->core) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: --mem-budget is for full mode");
    dkb_tp_backend be = w->cuda ? DKB_TP_CUDA : DKB_TP_CPU;
    if (w->cuda && dkb__wcuda_open(w->job.cuda_columns, w->db, &w->cu, &e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    if (dkb_tp_create(be, w->threads, &w->tp, &e) ||
        (w->core && (dkb_tp_create(be, w->threads, &w->tp_prep, &e) ||
                     dkb_tp_create(DKB_TP_CPU, w->threads, &w->tp_fin, &e))))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    if (w->cuda && (dkb__wcuda_adopt(w->cu, w->tp, &e) || (w->core && dkb__wcuda_adopt(w->cu, w->tp_prep, &e))))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);

    w->ns = w->job.nseeds;
    w->params = calloc((size_t)w->ns, sizeof *w->params);
    w->expected = calloc((size_t)w->ns, sizeof *w->expected);
    w->prep = calloc((size_t)w->ns, sizeof *w->prep);
    w->first = calloc((size_t)w->ns, sizeof *w->first);
    if (!w->params || !w->expected || !w->prep || !w->first)
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: out of memory");
    for (int s = 0; s < w->ns; s++) {
        uint64_t seed = w->job.seeds[s];
        if (dkb_query_params(w->q, seed, w->sf, NULL, 0, &w->params[s], &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: parameters of seed %llu: %s", (unsigned long long)seed, e.msg);
        set_phase("the baseline", seed);
        dkb_tp_reset(w->tp);
        if (w->budget) {
            expected_budgeted(w, s);
        } else if (dkb_query_run(w->q, w->tp, w->db, &w->params[s], &w->expected[s], &e)) {
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)seed, e.msg);
        }
        dkb_tp_reset(w->tp);
        if (w->core) step_ok(w, w->q->prepare(w->tp_prep, w->db, &w->params[s], &w->prep[s]), w->tp_prep, "prepare", seed);
    }
    scrub_streamed(w);
    measure_floor(w);
    dkb__guard_phase("the harness");
}

/* cuda: the device inputs whose checksums must not change: every store
 * column, and in core mode every prepared vector. */
static void cuda_watch_inputs(worker *w) {
    dkb_error e = {0};
    int rc = dkb__wcuda_watch_columns(w->cu, &e);
    for (int s = 0; !rc && w->core && s < w->ns; s++)
        for (int i = 0; !rc && i < w->cin[s]->nvec; i++) {
            const dkb_cand_vec *v = &w->cin[s]->vec[i];
            size_t es = dkb_tp_dtype_size((dkb_tp_dtype)v->type);
            char label[160];
            snprintf(label, sizeof label, "input vector '%.100s'", v->name);
            rc = dkb__wcuda_watch_add(w->cu, v->data, (size_t)(v->type == DKB_CAND_STR ? v->n + 1 : v->n) * es, label, &e);
            if (!rc && v->type == DKB_CAND_STR)
                rc = dkb__wcuda_watch_add(w->cu, v->bytes, (size_t)v->nbytes, label, &e);
        }
    if (rc) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
}

/* cuda: did the candidate write to a device input? (wrote_input, and the
 * report leaves) */
static void cuda_check_inputs(worker *w, const char *when) {
    if (!w->cuda) return;
    dkb_error e = {0};
    char changed[512];
    int n = 0;
    if (dkb__wcuda_watch_check(w->cu, changed, sizeof changed, &n, &e))
        fail_report(w, DKB_VERDICT_CRASH, "checking the inputs %s: %s", when, e.msg);
    if (n) fail_report(w, DKB_VERDICT_WROTE_INPUT, "wrote to read-only device %s (checksum changed %s)", changed, when);
}

/* Under a budget: env->budget, and when the query streams the db view's
 * streamed tables hidden and the loader's region reserved
 * (worker_stream.h). A candidate that does not declare that it streams is
 * not run on a query that streams (bad_entry). */
static void setup_budget(worker *w, dkb_cand_env *env) {
    const dkb__part_plan *pl = dkb__part_plan_get(w->q->number);
    const char *streamed[2] = {NULL, NULL};
    if (w->part.partitioned && pl) streamed[0] = pl->stream[0], streamed[1] = pl->stream[1];
    if (streamed[0] && !dlsym(w->so, "dkb_candidate_streams"))
        fail_report(w, DKB_VERDICT_BAD_ENTRY,
                    "does not stream: under this --mem-budget %s streams %s%s%s by partition, and the candidate does "
                    "not define DKB_CANDIDATE_STREAMS (dkb/candidate.h, \"full mode under a memory budget\")",
                    w->q->name, streamed[0], streamed[1] ? " and " : "", streamed[1] ? streamed[1] : "");
    int64_t limit = w->budget - w->resident_max;
    const dkb_cand_budget *b = NULL;
    dkb_error e = {0};
    if (dkb__wstream_setup(w->db, w->cdb, streamed, w->budget, limit, &w->ro, &b, &e) ||
        (w->cuda && dkb__wstream_use_cuda(w->threads, &e)))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: the loader: %s", e.msg);
    env->budget = b;
    w->rep.load_limit = streamed[0] ? (double)limit : NAN;
}

/* The candidate's inputs and outputs, in read-only memory and harness
 * buffers; the fault handler's ranges. */
static void setup_candidate(worker *w) {
    dkb_error e = {0};
    if (w->core) {
        w->cin = calloc((size_t)w->ns, sizeof *w->cin);
        dkb_out_like likes[DKB_SET_MAX];
        int nl = 0;
        if (!w->cin) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: out of memory");
        for (int s = 0; s < w->ns; s++) {
            if (w->cuda ? dkb__adapt_inputs_device(&w->prep[s], &w->ro, &w->cin[s], &e)
                        : dkb__adapt_inputs(&w->prep[s], w->db, &w->ro, &w->cin[s], &e))
                fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: inputs: %s", e.msg);
            /* the baseline core's outputs: names, types, scales, sizes */
            dkb_tp_reset(w->tp);
            dkb_tensor_set out;
            memset(&out, 0, sizeof out);
            step_ok(w, w->q->core(w->tp, &w->prep[s], &out), w->tp, "core", w->job.seeds[s]);
            if (dkb__out_likes_add(likes, &nl, &out, &e))
                fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s: %s", w->q->name, e.msg);
            dkb_tp_reset(w->tp);
        }
        if (dkb__out_set_init(&w->oset, likes, nl, &e) || (w->cuda && dkb__wcuda_outs_init(w->cu, &w->oset, &e)))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    } else {
        w->cparams = calloc((size_t)w->ns, sizeof *w->cparams);
        if (!w->cparams) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: out of memory");
        if (dkb__adapt_db(w->db, &w->ro, &w->cdb, &e) ||
            (w->cuda && dkb__wcuda_patch_db(w->cu, w->cdb, w->db, w->tp, w->budget > 0, &e)))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: db: %s", e.msg);
        int64_t rows = 0, bytes = 0;
        for (int s = 0; s < w->ns; s++) {
            if (dkb__adapt_params(&w->params[s], &w->ro, &w->cparams[s], &e))
                fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: params: %s", e.msg);
            const dkb_result *x = &w->expected[s];
            if (x->nrows > rows) rows = x->nrows;
            for (int c = 0; c < x->ncols; c++) {
                if (x->cols[c].type != DKB_RES_STRING) continue;
                int64_t b = 0;
                for (int64_t r = 0; r < x->nrows; r++) b += (int64_t)strlen(x->cols[c].str[r]);
                if (b > bytes) bytes = b;
            }
        }
        if (dkb__out_result_init(&w->ores, &w->expected[0], 2 * rows + 64, 2 * bytes + 64, &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    }
    dkb_cand_env *env = dkb__ro_alloc(&w->ro, sizeof *env);
    if (!env) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: out of memory");
    env->abi_version = DKB_CANDIDATE_ABI_VERSION;
    env->threads = w->threads;
    env->stream = w->cuda ? dkb__wcuda_stream(w->cu) : NULL;
    /* one rank, unless the job has ranks and the candidate declares them
     * (worker_ranks.h); a candidate without runs whole on rank 0 */
    env->rank = 0;
    env->nranks = 1;
    env->comm = dkb__wranks_single();
    if (ranked(w) && w->aware) {
        env->rank = w->rank;
        env->nranks = w->nranks;
        env->comm = dkb__wranks_table();
        share_db(w);
    }
    if (w->budget) setup_budget(w, env);
    w->env = env;
    if (w->cuda) cuda_watch_inputs(w);
    if (dkb__ro_seal(&w->ro, &e)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);

    /* fault ranges: store files by column, then the harness's read-only copies */
    for (int t = 0; t < dkb_store_ntables(w->db); t++) {
        const dkb_store_table *tab = dkb_store_table_at(w->db, t);
        for (int c = 0; c < dkb_store_table_ncolumns(tab); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(tab, c);
            for (int f = 0; f < dkb_column_nfiles(col); f++) {
                const dkb_store_file *file = dkb_column_file(col, f);
                dkb__guard_add_range((uintptr_t)file->map, (uintptr_t)file->map + file->bytes, file->path);
            }
        }
    }
    dkb_range r[MAX_RANGES];
    int n = dkb__ro_ranges(&w->ro, r, 0, MAX_RANGES);
    for (int i = 0; i < n; i++)
        dkb__guard_add_range(r[i].lo, r[i].hi, w->core ? "input (prepared vectors, scalars or descriptors)"
                                            : "input (database descriptors or parameters)");
}

/* ---- the passes ---- */

/* A call's outcome for seed index s against a reference answer: the call's
 * own verdict, else the answer collected (into *got, which the caller
 * frees) and compared; a difference is `differ`, its message prefixed by
 * `what`. A harness error ends the run. OK, or the verdict with msg. */
static dkb_verdict judge(worker *w, int s, const call_out *o, const dkb_result *against, dkb_verdict differ,
                         const char *what, dkb_result *got, char *msg, size_t n) {
    dkb_verdict v = o->v;
    snprintf(msg, n, "%s", o->msg);
    /* ranks: rank 0's result is the one checked; the others' are ignored */
    if (ranked(w) && w->rank != 0) return v;
    if (v == DKB_VERDICT_OK) v = collect(w, s, got, msg, n);
    if (v == DKB_VERDICT_OK) {
        dkb_error ce = {0};
        if (dkb_result_compare(got, against, &CMP_OPTS, &ce)) {
            v = differ;
            snprintf(msg, n, "%s%s", what, ce.msg);
        }
    }
    if (v == DKB_VERDICT_HARNESS_ERROR)
        fail_report(w, v, "seed %llu: %s", (unsigned long long)w->job.seeds[s], msg);
    return v;
}

/* The first check: every seed against the baseline's answer; the answers
 * kept for the later comparisons. */
static dkb_verdict check_pass(worker *w) {
    dkb_verdict verdict = DKB_VERDICT_OK;
    for (int s = 0; s < w->ns; s++) {
        uint64_t seed = w->job.seeds[s];
        call_out o;
        char msg[1024];
        candidate_call(w, s, DKB_POISON, 1, "the candidate call, first check", &o);
        dkb_verdict v = judge(w, s, &o, &w->expected[s], DKB_VERDICT_WRONG_ANSWER, "", &w->first[s], msg, sizeof msg);
        agree_call(w, &v, msg, sizeof msg, NULL);
        if (dkb__report_add_check(&w->rep, seed, v == DKB_VERDICT_OK, msg))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: out of memory");
        if (v != DKB_VERDICT_OK && verdict == DKB_VERDICT_OK) {
            verdict = v;
            w->rep.verdict = v;
            snprintf(w->rep.detail, sizeof w->rep.detail, "seed %llu: %.980s", (unsigned long long)seed, msg);
        }
        if (v == DKB_VERDICT_LEFT_THREADS) break;
    }
    return verdict;
}

/* The second check, after timing: each seed again (poisoned differently),
 * against the first answers. */
static dkb_verdict recheck_pass(worker *w) {
    for (int s = 0; s < w->ns; s++) {
        call_out o;
        char msg[1024];
        dkb_result got = {0};
        candidate_call(w, s, DKB_POISON_AGAIN, 1, "the candidate call, second check", &o);
        dkb_verdict v = judge(w, s, &o, &w->first[s], DKB_VERDICT_NONDETERMINISTIC,
                              "the second run differs from the first: ", &got, msg, sizeof msg);
        dkb_result_free(&got);
        agree_call(w, &v, msg, sizeof msg, NULL);
        if (v != DKB_VERDICT_OK) {
            w->rep.verdict = v;
            snprintf(w->rep.detail, sizeof w->rep.detail, "seed %llu, after timing: %.960s",
                     (unsigned long long)w->job.seeds[s], msg);
            return v;
        }
    }
    return DKB_VERDICT_OK;
}

/* The answer of timed call k (seed index s) against the first pass's: true
 * when it matches; else o holds the verdict and message. */
static int timed_answer_ok(worker *w, int s, int k, call_out *o) {
    dkb_result got = {0};
    char msg[1024], what[96];
    snprintf(what, sizeof what, "timed call %d (seed %llu) differs from the first check: ", k,
             (unsigned long long)w->job.seeds[s]);
    dkb_verdict v = judge(w, s, o, &w->first[s], DKB_VERDICT_NONDETERMINISTIC, what, &got, msg, sizeof msg);
    dkb_result_free(&got);
    if (ranked(w)) {
        /* every rank's call agreed, with its time (the slowest rank's) */
        agree_call(w, &v, msg, sizeof msg, &o->ms);
    }
    if (v == DKB_VERDICT_OK) return 1;
    o->v = v;
    snprintf(o->msg, sizeof o->msg, "%.500s", msg);
    return 0;
}

/* Time baseline (and candidate, when with_cand) interleaved until each has
 * min_runs calls and min_seconds have passed. Every candidate call starts
 * from the pristine state; both sides run their windows under the same
 * allocator settings as in the checks (timed_window). */
static dkb_verdict timing(worker *w, int with_cand) {
    samples b = {0}, c = {0};
    int ns = w->ns;
    call_out o;
    for (int k = 0; k < w->job.warmup; k++) {
        dkb__guard_phase("warm-up");
        baseline_call(w, k % ns);
        if (with_cand) {
            candidate_call(w, k % ns, DKB_POISON, 0, "the candidate call, warm-up", &o);
            agree_call(w, &o.v, o.msg, sizeof o.msg, NULL);
            if (o.v != DKB_VERDICT_OK) goto bad;
        }
    }
    double t0 = dkb__now_ms();
    for (int i = 0; i < MAX_TIMED; i++) {
        /* ranks: rank 0's clock decides, so every rank makes the same calls */
        if (rank0_says(w, b.n >= w->job.min_runs && (!with_cand || c.n >= w->job.min_runs) &&
                              dkb__now_ms() - t0 >= w->job.min_seconds * 1e3))
            break;
        int s = i % ns;
        for (int half = 0; half < 2; half++) {
            /* alternate who goes first, so neither always follows the other */
            int cand_turn = (half == 0) == (i % 2 == 1);
            if (!cand_turn) {
                dkb__guard_phase("timing the baseline");
                if (samples_add(&b, baseline_call(w, s))) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "out of memory");
            } else if (with_cand) {
                candidate_call(w, s, DKB_POISON, 0, "the candidate call, timing", &o);
                if (ranked(w)) {
                    /* checked on rank 0, agreed with every rank's time (the slowest) */
                    if (!timed_answer_ok(w, s, c.n + 1, &o)) goto bad;
                    if (samples_add(&c, o.ms)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "out of memory");
                    continue;
                }
                if (o.v != DKB_VERDICT_OK) goto bad;
                if (samples_add(&c, o.ms)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "out of memory");
                /* every timed answer is checked too (outside the timed
                 * region): a candidate cannot be right only when checked */
                if (!timed_answer_ok(w, s, c.n, &o)) goto bad;
            }
        }
    }
    w->rep.baseline = dkb__timing_summary(b.ms, b.n);
    w->rep.candidate = dkb__timing_summary(c.ms, c.n);
    free(b.ms);
    free(c.ms);
    return DKB_VERDICT_OK;
bad:
    w->rep.baseline = dkb__timing_summary(b.ms, b.n);
    free(b.ms);
    free(c.ms);
    w->rep.verdict = o.v;
    snprintf(w->rep.detail, sizeof w->rep.detail, "while timing: %s", o.msg);
    return o.v;
}

/* Is so the Python bridge's shim (a Python candidate's build writes
 * NAME.pycfg beside NAME.so; a C or CUDA build never does)? */
static int python_shim(const char *so) {
    size_t n = so ? strlen(so) : 0;
    if (n < 4 || strcmp(so + n - 3, ".so")) return 0;
    char cfg[4096];
    if ((size_t)snprintf(cfg, sizeof cfg, "%.*s.pycfg", (int)(n - 3), so) >= sizeof cfg) return 0;
    return access(cfg, R_OK) == 0;
}

int dkb__worker_run(const char *job_path) {
    dkb__guard_reexec_with_tunables(job_path);
    /* in case the tunables are not in effect (exec failed): the same
     * perturbation, from the first allocation on */
    mallopt(M_PERTURB, DKB_POISON);
    dkb__guard_report_init();
    signal(SIGPIPE, SIG_IGN);
    static worker w; /* large; zeroed */
    dkb__report_init(&w.rep);
    dkb_error e = {0};
    if (dkb__guard_install_handlers(&e)) fail_report(&w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    setup(&w, job_path);
    if (!w.cuda) dkb__guard_set_backstops();
    int with_cand = w.job.so != NULL && w.job.mode != DKB_JOB_BASELINE;
    if (!with_cand) {
        timing(&w, 0);
        w.rep.verdict = DKB_VERDICT_OK;
        finish_report(&w);
    }
    if (dkb__guard_pristine_take(w.threads, &e)) fail_report(&w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    /* a Python candidate's shim starts torch on the worker's backend */
    setenv("DKB_PY_BACKEND", w.cuda ? "cuda" : "cpu", 1);
    load_candidate(&w);
    setup_candidate(&w);
    if (w.cuda) {
        if (dkb__wcuda_watch_snapshot(w.cu, &e)) fail_report(&w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    } else {
        /* before the filter, which refuses prctl; not for a Python candidate
         * (the interpreter reads the clock: its build left a .pycfg beside
         * the shim, py_build.c) */
        if (!python_shim(w.job.so)) dkb__guard_tsc_off(w.threads);
        dkb__guard_syscall_filter();
    }
    w.rep.verdict = DKB_VERDICT_OK;
    dkb_verdict first = check_pass(&w);
    cuda_check_inputs(&w, "during the first check");
    if (first != DKB_VERDICT_OK) {
        /* still time the baseline, so the score has it */
        dkb_report keep = w.rep;
        timing(&w, 0);
        keep.baseline = w.rep.baseline;
        w.rep = keep;
        finish_report(&w);
    }
    dkb_verdict timed = timing(&w, 1);
    cuda_check_inputs(&w, "while timing");
    if (timed != DKB_VERDICT_OK) finish_report(&w);
    dkb_verdict again = recheck_pass(&w);
    cuda_check_inputs(&w, "during the second check");
    if (again != DKB_VERDICT_OK) finish_report(&w);
    /* kernel attribution (worker_attrib.c): one more, untimed call on seed 0
     * recorded with CUPTI; its answer and return value decide nothing */
    if (w.cuda) {
        call_out o = {.v = DKB_VERDICT_OK};
        dkb_error ae = {0};
        if (!dkb__wcuda_attrib_begin(w.cu, &ae)) {
            candidate_call(&w, 0, DKB_POISON, 0, "the candidate call, kernel attribution", &o);
            if (!dkb__wcuda_attrib_end(w.cu, python_shim(w.job.so), &w.rep.attribution, &ae) && o.v != DKB_VERDICT_OK) {
                dkb__attrib_init(&w.rep.attribution);   /* it failed: nothing to attribute */
                dkb_fail(&ae, DKB_EINVAL, "the attribution call: %s", o.msg);
            }
        }
        if (ae.code) snprintf(w.rep.attribution.note, sizeof w.rep.attribution.note, "%.250s", ae.msg);
        cuda_check_inputs(&w, "during the kernel attribution call");
    }
    /* Implausible: faster than reading, at the measured bandwidth, what any
     * correct implementation must read (the narrowest referenced column of
     * the largest table; the reported floor reads every referenced column
     * once, which late materialization may legitimately beat). */
    /* ranks: each rank reads its share (a candidate with DKB_CANDIDATE_RANKS) */
    if (ranked(&w) && w.aware) w.must_read_ms /= w.nranks;
    if (w.rep.candidate.runs && isfinite(w.must_read_ms) && w.must_read_ms > 0 &&
        w.rep.candidate.median < w.job.floor_slack * w.must_read_ms) {
        w.rep.verdict = DKB_VERDICT_IMPLAUSIBLE;
        snprintf(w.rep.detail, sizeof w.rep.detail,
                 "median %.4f ms is below %.2f x the time to read what any correct implementation must "
                 "(%.0f bytes at %.1f GB/s: %.4f ms; the floor reading every referenced column is %.4f ms)",
                 w.rep.candidate.median, w.job.floor_slack, w.must_read_bytes, w.rep.bandwidth_gbs, w.must_read_ms,
                 w.rep.floor_ms);
    }
    if (ranked(&w) && !w.aware && w.rep.verdict == DKB_VERDICT_OK && !w.rep.detail[0])
        snprintf(w.rep.detail, sizeof w.rep.detail,
                 "ran on rank 0 alone over the whole store (no DKB_CANDIDATE_RANKS); the baseline on %d ranks",
                 w.nranks);
    finish_report(&w);
    return 1;
}
