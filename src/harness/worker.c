/* worker.c: `dkb __worker JOB`, the process that runs candidate code (only
 * ever in a sandboxed child: see sandbox.c). For one query it
 *   - opens the store read-only (a write to it faults), draws each seed's
 *     parameters and computes the expected results with the baseline;
 *   - loads the candidate (dlopen), refuses thread-local storage, and
 *     snapshots its writable segments, restored before every call so no
 *     state survives between calls;
 *   - builds the candidate's inputs in read-only memory (adapter.c) and
 *     installs SIGSEGV/SIGBUS handlers that name a write there WROTE_INPUT
 *     (any other fault is reported as a crash with the phase it hit);
 *   - runs with glibc's malloc perturbation on and its thread cache off
 *     (freed blocks carry nothing into the next call), puts OpenMP's
 *     settings back around every call, and installs a system call filter
 *     before the first candidate call (no fork, exec, file writes, limits,
 *     executable memory);
 *   - checks every seed (outputs poisoned, thread count before and after),
 *     times baseline and candidate interleaved (every timed answer checked
 *     too), checks every seed again (poisoned differently) against the
 *     first answers, and compares the candidate's median with the
 *     bandwidth floor;
 *   - writes one JSON report (protocol.h) to the report fd and _exits
 *     (no candidate destructor or atexit handler runs after the report).
 * With backend cuda (worker_cuda.c) the store's columns are the evaluating
 * process's device copies (CUDA IPC), baseline and candidate run on the
 * GPU and are timed with CUDA events, core outputs are device buffers, and
 * input columns are watched by checksum (a change is wrote_input); a CUDA
 * error after a candidate call is a crash. The system call filter and the
 * address-space backstop are off there: the CUDA driver needs ioctls on
 * its device files and reserves a large address space.
 * The worker may exit without freeing: it is a short-lived process. */
#include <dirent.h>
#include <sched.h>  // defines: CLONE_THREAD
#include <fcntl.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/adapter.h"
#include "harness/harness_cuda.h"
#include "harness/protocol.h"

#define MAX_RANGES 4096
#define MAX_SEGMENTS 16
#define MAX_TIMED 10000000       /* timed calls per side, at most */
#define BW_MAX_BYTES ((size_t)1 << 30)
#define BW_MIN_BYTES ((size_t)1 << 16)

static const dkb_compare_opts CMP_OPTS = {1e-9, 1e-9, 0, false};

/* ---- what the fault handler reads (set before candidate code runs) ---- */

static dkb_range g_ranges[MAX_RANGES];
static const char *g_range_label[MAX_RANGES];
static int g_nranges;
static char g_phase[256] = "the harness's setup";
static int g_report_fd = 1;
static char g_nonce[72];       /* from the sandbox (DKB_NONCE_FD); "" when run by hand */
static int g_nonce_fd = -1;    /* read only when a report is written (see nonce) */
static atomic_int g_faulted;

/* ---- small async-signal-safe formatting ---- */

static size_t put_str(char *b, size_t at, size_t cap, const char *s) {
    while (s && *s && at + 1 < cap) b[at++] = *s++;
    b[at] = 0;
    return at;
}

static size_t put_hex(char *b, size_t at, size_t cap, uintptr_t v) {
    char tmp[2 + 16];
    int n = 0;
    do tmp[n++] = "0123456789abcdef"[v & 15], v >>= 4;
    while (v);
    at = put_str(b, at, cap, "0x");
    while (n && at + 1 < cap) b[at++] = tmp[--n];
    b[at] = 0;
    return at;
}

static void write_all(int fd, const char *s, size_t n) {
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w, n -= (size_t)w;
    }
}

static const char *sig_text(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "a signal";
    }
}

/* The nonce the sandbox wrote on DKB_NONCE_FD. It is read from the pipe
 * only when a report is about to be written (async-signal-safe: the fault
 * handler calls it too), so it is nowhere in this process's memory while
 * candidate code runs; a candidate has no function that reads a file
 * descriptor. "" when the worker runs by hand. */
static const char *nonce(void) {
    if (g_nonce_fd < 0) return g_nonce;
    size_t len = 0;
    while (len + 1 < sizeof g_nonce) {
        ssize_t got = read(g_nonce_fd, g_nonce + len, sizeof g_nonce - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
        if (memchr(g_nonce, '\n', len)) break;
    }
    g_nonce[len] = 0;
    for (size_t i = 0; i < len; i++)
        if (g_nonce[i] == '\n' || g_nonce[i] == '\r' || g_nonce[i] == '"' || g_nonce[i] == '\\') g_nonce[i] = 0;
    close(g_nonce_fd);
    g_nonce_fd = -1;
    return g_nonce;
}

/* The fault handler: the first faulting thread writes a report (a write to
 * a read-only input: wrote_input, then _exit; anything else: crash, then
 * the default action kills the process); others wait for it. */
static void on_fault(int sig, siginfo_t *si, void *uctx) {
    (void)uctx;
    if (atomic_exchange(&g_faulted, 1)) {
        for (;;) pause();
    }
    uintptr_t a = (uintptr_t)si->si_addr;
    int hit = -1;
    if (sig == SIGSEGV || sig == SIGBUS)
        for (int i = 0; i < g_nranges && hit < 0; i++)
            if (a >= g_ranges[i].lo && a < g_ranges[i].hi) hit = i;
    char b[1024];
    size_t at = put_str(b, 0, sizeof b, "\n{\"nonce\":\"");
    at = put_str(b, at, sizeof b, nonce());
    at = put_str(b, at, sizeof b, "\",");
    if (hit >= 0) {
        at = put_str(b, at, sizeof b, "\"verdict\":\"wrote_input\",\"detail\":\"wrote to read-only ");
        at = put_str(b, at, sizeof b, g_range_label[hit]);
        at = put_str(b, at, sizeof b, " at ");
    } else {
        at = put_str(b, at, sizeof b, "\"verdict\":\"crash\",\"detail\":\"");
        at = put_str(b, at, sizeof b, sig_text(sig));
    }
    if (sig == SIGSYS && si->si_code == 1 /* SYS_SECCOMP */) {
        at = put_str(b, at, sizeof b, " (system call ");
        char num[16];
        int k = 0, v = si->si_syscall;
        do num[k++] = (char)('0' + v % 10), v /= 10;
        while (v && k < 15);
        while (k && at + 1 < sizeof b) b[at++] = num[--k];
        b[at] = 0;
        at = put_str(b, at, sizeof b, ", not allowed in the worker)");
    } else if (si->si_code > 0) { /* a fault: si_addr means something */
        at = put_str(b, at, sizeof b, hit >= 0 ? "" : sig == SIGSEGV || sig == SIGBUS ? " at address " : " at ");
        at = put_hex(b, at, sizeof b, a);
    }
    at = put_str(b, at, sizeof b, " during ");
    at = put_str(b, at, sizeof b, g_phase);
    at = put_str(b, at, sizeof b, "\",\"checks\":[],\"baseline_ms\":null,\"candidate_ms\":null}\n");
    write_all(g_report_fd, b, at);
    if (hit >= 0) _exit(0);
    signal(sig, SIG_DFL);
    /* sent (not a fault), or a trapped system call (returning would skip
     * it and go on): re-raise; a fault: returning re-runs the instruction,
     * now with the default action */
    if (sig == SIGABRT || sig == SIGSYS || si->si_code <= 0) raise(sig);
}

static int install_handlers(dkb_error *err) {
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) return dkb_fail(err, DKB_EINTERNAL, "sigaltstack: %s", strerror(errno));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], &sa, NULL) != 0) return dkb_fail(err, DKB_EINTERNAL, "sigaction: %s", strerror(errno));
    return 0;
}

/* ---- timing helpers ---- */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static dkb_timing summarize(samples *s) {
    dkb_timing t = {NAN, NAN, NAN, 0};
    if (!s->n) return t;
    qsort(s->ms, (size_t)s->n, sizeof *s->ms, cmp_double);
    t.runs = s->n;
    t.min = s->ms[0];
    t.max = s->ms[s->n - 1];
    t.median = s->n % 2 ? s->ms[s->n / 2] : (s->ms[s->n / 2 - 1] + s->ms[s->n / 2]) / 2;
    return t;
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
        double t0 = now_ms();
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
        double t = now_ms() - t0;
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

typedef struct segment {
    char *addr;
    size_t size;
    char *copy;
} segment;

/* The OpenMP settings a candidate may change (omp_set_num_threads and
 * friends): put back before and after every call, so they hold no state. */
typedef struct icvs {
    int num_threads, dynamic, max_active_levels;
    omp_sched_t sched;
    int chunk;
} icvs;

static icvs icvs_get(void) {
    icvs v;
    v.num_threads = omp_get_max_threads();
    v.dynamic = omp_get_dynamic();
    v.max_active_levels = omp_get_max_active_levels();
    omp_get_schedule(&v.sched, &v.chunk);
    return v;
}

static void icvs_set(const icvs *v) {
    omp_set_num_threads(v->num_threads);
    omp_set_dynamic(v->dynamic);
    omp_set_max_active_levels(v->max_active_levels);
    omp_set_schedule(v->sched, v->chunk);
}

typedef struct worker {
    dkb_job job;
    icvs icv;
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
    segment seg[MAX_SEGMENTS];
    int nseg;
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
    /* the implausibility floor: bytes any correct implementation must read
     * (dkb__set_store_must_read) at the measured bandwidth */
    double must_read_bytes, must_read_ms;
} worker;

/* Write the report and leave (never returns). */
static void finish_report(worker *w) {
    snprintf(w->rep.nonce, sizeof w->rep.nonce, "%s", nonce());
    /* messages may quote the candidate's strings: keep the report valid text */
    dkb__text_sanitize(w->rep.detail, strlen(w->rep.detail));
    for (int i = 0; i < w->rep.nchecks; i++) dkb__text_sanitize(w->rep.checks[i].message, strlen(w->rep.checks[i].message));
    char *json = dkb__report_json(&w->rep);
    fflush(stdout);
    fflush(stderr);
    /* a newline first: it ends any partial line a candidate left on the pipe */
    write_all(g_report_fd, "\n", 1);
    if (!json) {
        char b[256];
        size_t at = put_str(b, 0, sizeof b, "{\"nonce\":\"");
        at = put_str(b, at, sizeof b, nonce());
        at = put_str(b, at, sizeof b, "\",\"verdict\":\"harness_error\",\"detail\":\"worker: out of memory\"}\n");
        write_all(g_report_fd, b, at);
        _exit(1);
    }
    write_all(g_report_fd, json, strlen(json));
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
    snprintf(g_phase, sizeof g_phase, "%s (seed %llu)", what, (unsigned long long)seed);
}

static void add_range(uintptr_t lo, uintptr_t hi, const char *label) {
    if (g_nranges < MAX_RANGES && hi > lo) {
        g_ranges[g_nranges].lo = lo;
        g_ranges[g_nranges].hi = hi;
        g_range_label[g_nranges++] = label;
    }
}

/* ---- loading the candidate ---- */

typedef struct phdr_ctx {
    uintptr_t base;
    const char *name;
    worker *w;
    int found, tls, too_many;
} phdr_ctx;

static int on_phdr(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    phdr_ctx *c = data;
    if (info->dlpi_addr != c->base || info->dlpi_name != c->name) return 0;
    c->found = 1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t rlo = 0, rhi = 0; /* the part ld.so made read-only again (RELRO) */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_TLS) c->tls = 1;
        if (ph->p_type == PT_GNU_RELRO) {
            rlo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
            rhi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        }
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || !ph->p_memsz) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        uintptr_t parts[2][2] = {{lo, hi < rlo ? hi : rlo}, {lo > rhi ? lo : rhi, hi}};
        if (rlo >= rhi) parts[0][1] = hi, parts[1][0] = parts[1][1] = 0;
        for (int k = 0; k < 2; k++) {
            if (parts[k][1] <= parts[k][0]) continue;
            if (c->w->nseg == MAX_SEGMENTS) {
                c->too_many = 1;
                continue;
            }
            segment *s = &c->w->seg[c->w->nseg++];
            s->addr = (char *)parts[k][0];
            s->size = parts[k][1] - parts[k][0];
            s->copy = malloc(s->size);
            if (!s->copy) {
                c->too_many = 1;
                continue;
            }
            memcpy(s->copy, s->addr, s->size);
        }
    }
    return 1;
}

static void restore_segments(worker *w) {
    for (int i = 0; i < w->nseg; i++) memcpy(w->seg[i].addr, w->seg[i].copy, w->seg[i].size);
}

static void load_candidate(worker *w) {
    const char *entry = dkb__entry_symbol(w->core ? DKB_MODE_CORE : DKB_MODE_FULL);
    snprintf(g_phase, sizeof g_phase, "loading the candidate (its constructors)");
    dlerror();
    w->so = dlopen(w->job.so, RTLD_NOW | RTLD_LOCAL);
    if (!w->so) fail_report(w, DKB_VERDICT_BAD_ENTRY, "cannot load %s: %s", w->job.so, dlerror());
    snprintf(g_phase, sizeof g_phase, "the harness");
    void *sym = dlsym(w->so, entry);
    if (!sym) fail_report(w, DKB_VERDICT_BAD_ENTRY, "does not define %s", entry);
    if (w->core) w->core_entry = (core_fn)sym;
    else w->full_entry = (full_fn)sym;
    struct link_map *lm = NULL;
    if (dlinfo(w->so, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "dlinfo %s: %s", w->job.so, dlerror());
    phdr_ctx c = {.base = lm->l_addr, .name = lm->l_name, .w = w};
    dl_iterate_phdr(on_phdr, &c);
    if (!c.found) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "cannot find %s among the loaded objects", w->job.so);
    if (c.too_many) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "cannot snapshot the candidate's writable segments");
    if (c.tls)
        fail_report(w, DKB_VERDICT_FORBIDDEN_SYMBOL,
                    "uses thread-local storage (state that would survive between calls)");
}

/* ---- baseline ---- */

static void check_tp(worker *w, dkb_tp *tp, const char *what, uint64_t seed) {
    dkb_error e = {0};
    if (dkb_tp_status(tp, &e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline %s %s (seed %llu): %s", w->q->name, what,
                    (unsigned long long)seed, e.msg);
}

/* One timed baseline call for seed index s: the whole query (full), or
 * the core over the prepared inputs (core). */
static double baseline_call(worker *w, int s) {
    dkb_tp_reset(w->tp);
    dkb_error e = {0};
    double t0, t1;
    if (w->cuda && dkb__wcuda_time_begin(w->cu, &e))
        fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)w->job.seeds[s], e.msg);
    if (w->core) {
        dkb_tensor_set out;
        memset(&out, 0, sizeof out);
        t0 = now_ms();
        int rc = w->q->core(w->tp, &w->prep[s], &out);
        t1 = now_ms();
        if (rc) {
            check_tp(w, w->tp, "core", w->job.seeds[s]);
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline %s core failed (%s)", w->q->name, dkb_err_name(rc));
        }
    } else {
        dkb_result res = {0};
        t0 = now_ms();
        int rc = dkb_query_run(w->q, w->tp, w->db, &w->params[s], &res, &e);
        t1 = now_ms();
        if (rc) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)w->job.seeds[s], e.msg);
        dkb_result_free(&res);
    }
    if (w->cuda) {
        double ms;
        if (dkb__wcuda_time_end(w->cu, &ms, &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)w->job.seeds[s], e.msg);
        t0 = 0, t1 = ms;
    }
    dkb_tp_reset(w->tp);
    return t1 - t0;
}

/* ---- candidate calls ---- */

typedef struct call_out {
    dkb_verdict v;
    char msg[512];
    double ms;
} call_out;

/* One candidate call for seed index s: restore its statics, poison the
 * outputs, call, time. With count: threads counted before and after. */
static void candidate_call(worker *w, int s, uint8_t poison, int count, const char *what, call_out *o) {
    uint64_t seed = w->job.seeds[s];
    o->v = DKB_VERDICT_OK;
    o->msg[0] = 0;
    restore_segments(w);
    icvs_set(&w->icv);
    if (w->core) dkb__out_set_reset(&w->oset, poison);
    else dkb__out_result_reset(&w->ores, poison);
    dkb_error e = {0};
    if (w->cuda) {
        /* device outputs, poisoned; the cache flushed; the device idle */
        if ((w->core && dkb__wcuda_outs_point(w->cu, &w->oset, poison, &e)) || dkb__wcuda_call_prepare(w->cu, &e) ||
            dkb__wcuda_time_begin(w->cu, &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "before %s (seed %llu): %s", what, (unsigned long long)seed, e.msg);
        count = 0; /* the CUDA runtime starts threads of its own */
    }
    int before = count ? count_threads() : 0;
    set_phase(what, seed);
    double t0 = now_ms();
    int rc = w->core ? w->core_entry(w->cin[s], &w->oset.set, w->env)
                     : w->full_entry(w->cdb, w->cparams[s], &w->ores.res, w->env);
    double t1 = now_ms();
    icvs_set(&w->icv);
    snprintf(g_phase, sizeof g_phase, "the harness (after a candidate call, seed %llu)", (unsigned long long)seed);
    o->ms = t1 - t0;
    if (w->cuda) {
        /* a CUDA error the call left (illegal address, trap, bad launch)
         * usually kills the context: nothing more can run here */
        if (dkb__wcuda_time_end(w->cu, &o->ms, &e))
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", e.msg, what, (unsigned long long)seed);
        if (w->core && dkb__wcuda_outs_fetch(w->cu, &w->oset, &e))
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", e.msg, what, (unsigned long long)seed);
        if (dkb__wcuda_call_cleanup(w->cu, &e))
            fail_report(w, DKB_VERDICT_CRASH, "%s after %s (seed %llu)", e.msg, what, (unsigned long long)seed);
    }
    if (rc != 0) {
        o->v = DKB_VERDICT_RETURNED_ERROR;
        dkb__cand_status_text(rc, o->msg, sizeof o->msg);
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
    snprintf(g_phase, sizeof g_phase, "the harness");
    return v;
}

/* ---- setup ---- */

static void setup(worker *w, const char *job_path) {
    dkb_error e = {0};
    if (dkb__job_read(job_path, &w->job, &e)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    w->q = dkb_query_find(w->job.query);
    if (!w->q) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: no query '%s' in this build", w->job.query);
    w->core = w->job.mode == DKB_JOB_CORE;
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
    w->icv = icvs_get();
    /* cuda: baseline and prepared inputs on the GPU over the shared columns;
     * the finish over the candidate's (copied back) outputs on the CPU */
    w->cuda = w->job.cuda;
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
        if (dkb_query_run(w->q, w->tp, w->db, &w->params[s], &w->expected[s], &e))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "baseline (seed %llu): %s", (unsigned long long)seed, e.msg);
        dkb_tp_reset(w->tp);
        if (w->core) {
            if (w->q->prepare(w->tp_prep, w->db, &w->params[s], &w->prep[s])) check_tp(w, w->tp_prep, "prepare", seed);
            check_tp(w, w->tp_prep, "prepare", seed);
        }
    }
    /* bytes the query reads: the store columns its prepare step hands over */
    if (w->cuda) {
        /* device views: the columns the prepare step asked for */
        dkb_tensor_set in;
        memset(&in, 0, sizeof in);
        dkb_tp_reset(w->tp);
        if (w->q->prepare(w->tp, w->db, &w->params[0], &in)) check_tp(w, w->tp, "prepare", w->job.seeds[0]);
        check_tp(w, w->tp, "prepare", w->job.seeds[0]);
        int64_t bytes = 0;
        dkb_tp_touched(w->tp, NULL, &bytes);
        w->rep.bytes_read = (double)bytes;
        w->must_read_bytes = (double)dkb__set_store_must_read(&in, w->db);
        dkb_tp_reset(w->tp);
        w->rep.bandwidth_gbs = dkb__wcuda_bandwidth(w->cu, (size_t)bytes);
        w->rep.floor_ms = w->rep.bytes_read / (w->rep.bandwidth_gbs * 1e9) * 1e3;
        w->must_read_ms = w->must_read_bytes / (w->rep.bandwidth_gbs * 1e9) * 1e3;
        snprintf(g_phase, sizeof g_phase, "the harness");
        return;
    }
    if (w->core) {
        w->rep.bytes_read = (double)dkb__set_store_bytes(&w->prep[0], w->db);
        w->must_read_bytes = (double)dkb__set_store_must_read(&w->prep[0], w->db);
    } else {
        dkb_tensor_set in;
        memset(&in, 0, sizeof in);
        if (w->q->prepare(w->tp, w->db, &w->params[0], &in)) check_tp(w, w->tp, "prepare", w->job.seeds[0]);
        check_tp(w, w->tp, "prepare", w->job.seeds[0]);
        w->rep.bytes_read = (double)dkb__set_store_bytes(&in, w->db);
        w->must_read_bytes = (double)dkb__set_store_must_read(&in, w->db);
        dkb_tp_reset(w->tp);
    }
    w->rep.bandwidth_gbs = measure_bandwidth((size_t)w->rep.bytes_read, w->threads);
    w->rep.floor_ms = w->rep.bytes_read / (w->rep.bandwidth_gbs * 1e9) * 1e3;
    w->must_read_ms = w->must_read_bytes / (w->rep.bandwidth_gbs * 1e9) * 1e3;
    snprintf(g_phase, sizeof g_phase, "the harness");
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
            if (w->q->core(w->tp, &w->prep[s], &out)) check_tp(w, w->tp, "core", w->job.seeds[s]);
            check_tp(w, w->tp, "core", w->job.seeds[s]);
            if (dkb__out_likes_add(likes, &nl, &out, &e))
                fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s: %s", w->q->name, e.msg);
            dkb_tp_reset(w->tp);
        }
        if (dkb__out_set_init(&w->oset, likes, nl, &e) || (w->cuda && dkb__wcuda_outs_init(w->cu, &w->oset, &e)))
            fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    } else {
        w->cparams = calloc((size_t)w->ns, sizeof *w->cparams);
        if (!w->cparams) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "worker: out of memory");
        if (dkb__adapt_db(w->db, &w->ro, &w->cdb, &e) || (w->cuda && dkb__wcuda_patch_db(w->cu, w->db, w->cdb, &e)))
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
                add_range((uintptr_t)file->map, (uintptr_t)file->map + file->bytes, file->path);
            }
        }
    }
    dkb_range r[MAX_RANGES];
    int n = dkb__ro_ranges(&w->ro, r, 0, MAX_RANGES);
    for (int i = 0; i < n; i++)
        add_range(r[i].lo, r[i].hi, w->core ? "input (prepared vectors, scalars or descriptors)"
                                            : "input (database descriptors or parameters)");
}

/* A system call filter for the rest of the worker's life (x86-64): only
 * what the harness, malloc, stdio printing and OpenMP need (memory without
 * PROT_EXEC, futexes, threads of this process, read-only opens for
 * /proc/self/task, reads and writes on open descriptors, signals to this
 * process, exit). Anything else traps (SIGSYS: a crash that names the
 * call), so code that found its way to a system call without importing
 * its function (a raw syscall instruction, a pointer into libc) cannot
 * fork, exec, open files for writing, raise limits or map code. Returns 0,
 * or -1 where filters are not available (the worker goes on without; so
 * in AddressSanitizer builds, whose runtime needs more). */
static int install_syscall_filter(void) {
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) /* sanitizer runtimes make calls of their own */
#define ALLOW_NR(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define ARG_LO(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define ARG_HI(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]) + 4)
    const uint32_t pid = (uint32_t)getpid();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 calls */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        ALLOW_NR(__NR_read), ALLOW_NR(__NR_write), ALLOW_NR(__NR_pread64), ALLOW_NR(__NR_readv),
        ALLOW_NR(__NR_writev), ALLOW_NR(__NR_close), ALLOW_NR(__NR_fstat), ALLOW_NR(__NR_newfstatat),
        ALLOW_NR(__NR_lseek), ALLOW_NR(__NR_getdents64), ALLOW_NR(__NR_fcntl), ALLOW_NR(__NR_munmap),
        ALLOW_NR(__NR_brk), ALLOW_NR(__NR_mremap), ALLOW_NR(__NR_madvise), ALLOW_NR(__NR_futex),
        ALLOW_NR(__NR_sched_yield), ALLOW_NR(__NR_sched_getaffinity), ALLOW_NR(__NR_rt_sigaction),
        ALLOW_NR(__NR_rt_sigprocmask), ALLOW_NR(__NR_rt_sigreturn), ALLOW_NR(__NR_sigaltstack),
        ALLOW_NR(__NR_getpid), ALLOW_NR(__NR_gettid), ALLOW_NR(__NR_clock_gettime),
        ALLOW_NR(__NR_clock_nanosleep), ALLOW_NR(__NR_nanosleep), ALLOW_NR(__NR_getrandom),
        ALLOW_NR(__NR_set_robust_list), ALLOW_NR(__NR_rseq), ALLOW_NR(__NR_exit), ALLOW_NR(__NR_exit_group),
        /* what libc asks the system about itself (qsort: sysinfo; sysconf) */
        ALLOW_NR(__NR_sysinfo), ALLOW_NR(__NR_uname), ALLOW_NR(__NR_getuid), ALLOW_NR(__NR_geteuid),
        ALLOW_NR(__NR_getgid), ALLOW_NR(__NR_getegid), ALLOW_NR(__NR_getppid), ALLOW_NR(__NR_getcpu),
        ALLOW_NR(__NR_getrusage), ALLOW_NR(__NR_times), ALLOW_NR(__NR_clock_getres), ALLOW_NR(__NR_statx),
        /* clone3: "not implemented", so glibc falls back to clone, whose flags can be seen */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        /* ioctl: stdio's terminal query; "not a terminal" */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY),
        /* each block below returns on every path once entered; a call it
         * is not about skips it with the number still loaded */
        /* clone: threads of this process only */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4), ARG_LO(0),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        /* mmap, mprotect: never executable */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4), ARG_LO(2),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        /* openat: read-only */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 4), ARG_LO(2),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        /* prlimit64: reading a limit only (sysconf), never setting one */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 6), ARG_LO(2),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3), ARG_HI(2),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        /* tgkill: this process only (raise, abort) */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 0, 4), ARG_LO(0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
#undef ALLOW_NR
#undef ARG_LO
#undef ARG_HI
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return -1;
    return 0;
#else
    return -1;
#endif
}

/* Apply the memory backstop: address space = what we hold now + 4 x the
 * sandbox's memory limit. */
static void set_backstops(void) {
    const char *m = getenv("DKB_MEM_LIMIT"), *o = getenv("DKB_OUTPUT_LIMIT");
    unsigned long long mem = m ? strtoull(m, NULL, 10) : 0, out = o ? strtoull(o, NULL, 10) : 0;
    if (out) {
        struct rlimit rl = {out + 65536, out + 65536};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    if (mem) {
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long long size = 0;
        if (f) {
            if (fscanf(f, "%llu", &size) != 1) size = 0;
            fclose(f);
        }
        if (size) {
            unsigned long long as = size * (unsigned long long)sysconf(_SC_PAGESIZE) + 4 * mem;
            struct rlimit rl = {as, as};
            setrlimit(RLIMIT_AS, &rl);
        }
    }
}

/* ---- the passes ---- */

static dkb_verdict check_pass(worker *w) {
    dkb_verdict verdict = DKB_VERDICT_OK;
    for (int s = 0; s < w->ns; s++) {
        uint64_t seed = w->job.seeds[s];
        call_out o;
        candidate_call(w, s, 0xA5, 1, "the candidate call, first check", &o);
        dkb_verdict v = o.v;
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", o.msg);
        if (v == DKB_VERDICT_OK) v = collect(w, s, &w->first[s], msg, sizeof msg);
        if (v == DKB_VERDICT_OK) {
            dkb_error ce = {0};
            if (dkb_result_compare(&w->first[s], &w->expected[s], &CMP_OPTS, &ce)) {
                v = DKB_VERDICT_WRONG_ANSWER;
                snprintf(msg, sizeof msg, "%s", ce.msg);
            }
        }
        if (v == DKB_VERDICT_HARNESS_ERROR) fail_report(w, v, "seed %llu: %s", (unsigned long long)seed, msg);
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
        uint64_t seed = w->job.seeds[s];
        call_out o;
        candidate_call(w, s, 0x5A, 1, "the candidate call, second check", &o);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", o.msg);
        dkb_verdict v = o.v;
        dkb_result got = {0};
        if (v == DKB_VERDICT_OK) v = collect(w, s, &got, msg, sizeof msg);
        if (v == DKB_VERDICT_OK) {
            dkb_error ce = {0};
            if (dkb_result_compare(&got, &w->first[s], &CMP_OPTS, &ce)) {
                v = DKB_VERDICT_NONDETERMINISTIC;
                snprintf(msg, sizeof msg, "the second run differs from the first: %s", ce.msg);
            }
        }
        dkb_result_free(&got);
        if (v == DKB_VERDICT_HARNESS_ERROR) fail_report(w, v, "seed %llu: %s", (unsigned long long)seed, msg);
        if (v != DKB_VERDICT_OK) {
            w->rep.verdict = v;
            snprintf(w->rep.detail, sizeof w->rep.detail, "seed %llu, after timing: %.960s", (unsigned long long)seed, msg);
            return v;
        }
    }
    return DKB_VERDICT_OK;
}

/* The answer of timed call k (seed index s) against the first pass's: true
 * when it matches; else o holds the verdict and message. */
static int timed_answer_ok(worker *w, int s, int k, call_out *o) {
    dkb_result got = {0};
    char msg[1024] = "";
    dkb_verdict v = collect(w, s, &got, msg, sizeof msg);
    if (v == DKB_VERDICT_OK) {
        dkb_error ce = {0};
        if (dkb_result_compare(&got, &w->first[s], &CMP_OPTS, &ce)) {
            v = DKB_VERDICT_NONDETERMINISTIC;
            snprintf(msg, sizeof msg, "timed call %d (seed %llu) differs from the first check: %s", k,
                     (unsigned long long)w->job.seeds[s], ce.msg);
        }
    }
    dkb_result_free(&got);
    if (v == DKB_VERDICT_HARNESS_ERROR) fail_report(w, v, "%s", msg);
    if (v == DKB_VERDICT_OK) return 1;
    o->v = v;
    snprintf(o->msg, sizeof o->msg, "%.500s", msg);
    return 0;
}

/* The interleaved timing loop of timing() below. */
static dkb_verdict timing_loop(worker *w, int with_cand) {
    samples b = {0}, c = {0};
    int ns = w->ns;
    call_out o;
    for (int k = 0; k < w->job.warmup; k++) {
        snprintf(g_phase, sizeof g_phase, "warm-up");
        baseline_call(w, k % ns);
        if (with_cand) {
            candidate_call(w, k % ns, 0xA5, 0, "the candidate call, warm-up", &o);
            if (o.v != DKB_VERDICT_OK) goto bad;
        }
    }
    double t0 = now_ms();
    for (int i = 0; i < MAX_TIMED; i++) {
        if (b.n >= w->job.min_runs && (!with_cand || c.n >= w->job.min_runs) &&
            now_ms() - t0 >= w->job.min_seconds * 1e3)
            break;
        int s = i % ns;
        for (int half = 0; half < 2; half++) {
            /* alternate who goes first, so neither always follows the other */
            int cand_turn = (half == 0) == (i % 2 == 1);
            if (!cand_turn) {
                snprintf(g_phase, sizeof g_phase, "timing the baseline");
                if (samples_add(&b, baseline_call(w, s))) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "out of memory");
            } else if (with_cand) {
                candidate_call(w, s, 0xA5, 0, "the candidate call, timing", &o);
                if (o.v != DKB_VERDICT_OK) goto bad;
                if (samples_add(&c, o.ms)) fail_report(w, DKB_VERDICT_HARNESS_ERROR, "out of memory");
                /* every timed answer is checked too (outside the timed
                 * region): a candidate cannot be right only when checked */
                if (!timed_answer_ok(w, s, c.n, &o)) goto bad;
            }
        }
    }
    w->rep.baseline = summarize(&b);
    w->rep.candidate = summarize(&c);
    free(b.ms);
    free(c.ms);
    return DKB_VERDICT_OK;
bad:
    w->rep.baseline = summarize(&b);
    free(b.ms);
    free(c.ms);
    w->rep.verdict = o.v;
    snprintf(w->rep.detail, sizeof w->rep.detail, "while timing: %s", o.msg);
    return o.v;
}

/* Time baseline (and candidate, when with_cand) interleaved until each has
 * min_runs calls and min_seconds have passed. Malloc perturbation is off
 * while timing: it fills every allocated and freed block, which would slow
 * the allocating side (mostly the baseline) and distort the speedup; the
 * checks before and after timing run with it on. */
static dkb_verdict timing(worker *w, int with_cand) {
    mallopt(M_PERTURB, 0);
    dkb_verdict v = timing_loop(w, with_cand);
    mallopt(M_PERTURB, 0xA5);
    return v;
}


/* glibc's malloc settings for the worker: no per-thread cache (its blocks
 * skip perturbation) and perturbation on (freed blocks filled with 0xA5,
 * fresh ones with 0x5A). Tunables are read at startup: when they are not
 * in effect, exec this program again with them (once). */
#define TUNABLES "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"

static void reexec_with_tunables(const char *job_path) {
    const char *t = getenv("GLIBC_TUNABLES");
    if ((t && strstr(t, TUNABLES)) || getenv("DKB_WORKER_REEXEC")) return;
    size_t n = (t ? strlen(t) + 1 : 0) + sizeof TUNABLES;
    char *v = malloc(n);
    if (!v) return;
    snprintf(v, n, "%s%s%s", t ? t : "", t ? ":" : "", TUNABLES);
    if (setenv("GLIBC_TUNABLES", v, 1) || setenv("DKB_WORKER_REEXEC", "1", 1)) {
        free(v);
        return;
    }
    free(v);
    char *argv[] = {(char *)"dkb", (char *)"__worker", (char *)job_path, NULL};
    execv("/proc/self/exe", argv);
    /* exec failed: go on without (the perturbation below still applies) */
}

int dkb__worker_run(const char *job_path) {
    reexec_with_tunables(job_path);
    const char *fd = getenv("DKB_REPORT_FD");
    g_report_fd = fd && *fd ? atoi(fd) : 1;
    const char *nfd = getenv("DKB_NONCE_FD");
    g_nonce_fd = nfd && *nfd ? atoi(nfd) : -1;
    signal(SIGPIPE, SIG_IGN);
    static worker w; /* large; zeroed */
    dkb__report_init(&w.rep);
    dkb_error e = {0};
    if (install_handlers(&e)) fail_report(&w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    setup(&w, job_path);
    if (!w.cuda) set_backstops();
    int with_cand = w.job.so != NULL && w.job.mode != DKB_JOB_BASELINE;
    if (!with_cand) {
        timing(&w, 0);
        w.rep.verdict = DKB_VERDICT_OK;
        finish_report(&w);
    }
    /* freed heap memory is overwritten, fresh malloc memory is garbage: a
     * block freed in one call brings nothing into the next */
    mallopt(M_PERTURB, 0xA5);
    load_candidate(&w);
    setup_candidate(&w);
    if (w.cuda) {
        if (dkb__wcuda_watch_snapshot(w.cu, &e)) fail_report(&w, DKB_VERDICT_HARNESS_ERROR, "worker: %s", e.msg);
    } else {
        install_syscall_filter();
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
            candidate_call(&w, 0, 0xA5, 0, "the candidate call, kernel attribution", &o);
            if (!dkb__wcuda_attrib_end(w.cu, &w.rep.attribution, &ae) && o.v != DKB_VERDICT_OK) {
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
    if (w.rep.candidate.runs && isfinite(w.must_read_ms) && w.must_read_ms > 0 &&
        w.rep.candidate.median < w.job.floor_slack * w.must_read_ms) {
        w.rep.verdict = DKB_VERDICT_IMPLAUSIBLE;
        snprintf(w.rep.detail, sizeof w.rep.detail,
                 "median %.4f ms is below %.2f x the time to read what any correct implementation must "
                 "(%.0f bytes at %.1f GB/s: %.4f ms; the floor reading every referenced column is %.4f ms)",
                 w.rep.candidate.median, w.job.floor_slack, w.must_read_bytes, w.rep.bandwidth_gbs, w.must_read_ms,
                 w.rep.floor_ms);
    }
    finish_report(&w);
    return 1;
}
