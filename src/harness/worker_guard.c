/* worker_guard.c: the worker's process hardening (see worker_guard.h):
 * report descriptors and nonce, fault handlers, malloc tunables, limits,
 * the system call filter, the candidate's segments, and the pristine
 * state (stacks, per-thread C library state, stdio, named data objects,
 * OpenMP settings) every candidate call starts from. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>  // defines: CLONE_THREAD
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctype.h>  // defines: __ctype_b_loc

#include "common/countof.h"
#include "harness/harness.h"
#include "harness/worker_guard.h"

#define MAX_RANGES 4096
#define MAX_SEGMENTS 16
#define MAX_OBJECTS 16
#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- the report channel ---- */

static int g_report_fd = 1;
static char g_nonce[72];    /* from the sandbox (DKB_NONCE_FD); "" when run by hand */
static int g_nonce_fd = -1; /* read only when a report is written (see nonce) */

void dkb__guard_report_init(void) {
    const char *fd = getenv("DKB_REPORT_FD");
    g_report_fd = fd && *fd ? atoi(fd) : 1;
    const char *nfd = getenv("DKB_NONCE_FD");
    g_nonce_fd = nfd && *nfd ? atoi(nfd) : -1;
}

void dkb__guard_report_write(const char *s, size_t n) {
    while (n) {
        ssize_t w = write(g_report_fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w, n -= (size_t)w;
    }
}

/* A candidate has no function that reads a file descriptor, and the nonce
 * is read only when a report is about to be written. */
const char *dkb__guard_nonce(void) {
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

/* ---- faults ---- */

static struct {
    uintptr_t lo, hi;
    const char *label;
    const char *read_label;   /* not NULL: reads fault here too (a crash so named) */
} g_ranges[MAX_RANGES];
static int g_nranges;
static char g_phase[256] = "the harness's setup";
static atomic_int g_faulted;

void dkb__guard_phase(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_phase, sizeof g_phase, fmt, ap);
    va_end(ap);
}

void dkb__guard_add_range(uintptr_t lo, uintptr_t hi, const char *label) {
    dkb__guard_add_range_unmapped(lo, hi, label, NULL);
}

void dkb__guard_add_range_unmapped(uintptr_t lo, uintptr_t hi, const char *label, const char *read_label) {
    if (g_nranges < MAX_RANGES && hi > lo) {
        g_ranges[g_nranges].lo = lo;
        g_ranges[g_nranges].hi = hi;
        g_ranges[g_nranges].read_label = read_label;
        g_ranges[g_nranges++].label = label;
    }
}

/* Was the fault a write? (x86-64: the page-fault error code's bit 1; else
 * unknown, taken as a write.) */
static int fault_was_write(const void *uctx) {
#if defined(__x86_64__) && defined(REG_ERR)
    return uctx && (((const ucontext_t *)uctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    (void)uctx;
    return 1;
#endif
}

/* small async-signal-safe formatting */
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

static size_t put_uint(char *b, size_t at, size_t cap, unsigned v) {
    char num[16];
    int k = 0;
    do num[k++] = (char)('0' + v % 10), v /= 10;
    while (v && k < 15);
    while (k && at + 1 < cap) b[at++] = num[--k];
    b[at] = 0;
    return at;
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

/* The first faulting thread writes a report (a write to a read-only input:
 * wrote_input, then _exit; anything else: crash, then the default action
 * kills the process); others wait for it. */
static void on_fault(int sig, siginfo_t *si, void *uctx) {
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
    at = put_str(b, at, sizeof b, dkb__guard_nonce());
    at = put_str(b, at, sizeof b, "\",");
    if (hit >= 0 && g_ranges[hit].read_label && !fault_was_write(uctx)) {
        /* a read of memory the harness unmapped (a released partition) */
        at = put_str(b, at, sizeof b, "\"verdict\":\"crash\",\"detail\":\"SIGSEGV: ");
        at = put_str(b, at, sizeof b, g_ranges[hit].read_label);
        at = put_str(b, at, sizeof b, " at ");
        hit = -2;
    } else if (hit >= 0) {
        at = put_str(b, at, sizeof b, "\"verdict\":\"wrote_input\",\"detail\":\"wrote to read-only ");
        at = put_str(b, at, sizeof b, g_ranges[hit].label);
        at = put_str(b, at, sizeof b, " at ");
    } else {
        at = put_str(b, at, sizeof b, "\"verdict\":\"crash\",\"detail\":\"");
        at = put_str(b, at, sizeof b, sig_text(sig));
    }
    if (sig == SIGSYS && si->si_code == 1 /* SYS_SECCOMP */) {
        at = put_str(b, at, sizeof b, " (system call ");
        at = put_uint(b, at, sizeof b, (unsigned)si->si_syscall);
        at = put_str(b, at, sizeof b, ", not allowed in the worker)");
    } else if (si->si_code > 0) { /* a fault: si_addr means something */
        at = put_str(b, at, sizeof b, hit != -1 ? "" : sig == SIGSEGV || sig == SIGBUS ? " at address " : " at ");
        at = put_hex(b, at, sizeof b, a);
    }
    at = put_str(b, at, sizeof b, " during ");
    at = put_str(b, at, sizeof b, g_phase);
    at = put_str(b, at, sizeof b, "\",\"checks\":[],\"baseline_ms\":null,\"candidate_ms\":null}\n");
    dkb__guard_report_write(b, at);
    if (hit >= 0) _exit(0);
    signal(sig, SIG_DFL);
    /* sent (not a fault), or a trapped system call (returning would skip
     * it and go on): re-raise; a fault: returning re-runs the instruction,
     * now with the default action */
    if (sig == SIGABRT || sig == SIGSYS || si->si_code <= 0) raise(sig);
}

int dkb__guard_install_handlers(dkb_error *err) {
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) return dkb_fail(err, DKB_EINTERNAL, "sigaltstack: %s", strerror(errno));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < DKB_COUNTOF(sigs); i++)
        if (sigaction(sigs[i], &sa, NULL) != 0) return dkb_fail(err, DKB_EINTERNAL, "sigaction: %s", strerror(errno));
    return 0;
}

/* ---- process limits ---- */

/* glibc's malloc settings for the worker: no per-thread cache (its blocks
 * skip perturbation) and perturbation on, for the checks and the timing
 * alike (freed blocks filled with DKB_POISON, fresh ones with its
 * complement). Tunables are read at startup: when they are not in effect,
 * exec this program again with them (once). */
#define TUNABLES "glibc.malloc.tcache_count=0:glibc.malloc.perturb=" STR(DKB_POISON)

void dkb__guard_reexec_with_tunables(const char *job_path) {
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
    /* exec failed: go on without (mallopt's perturbation still applies) */
}

void dkb__guard_set_backstops(void) {
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

/* The processor's time-stamp counter off for this thread and the OpenMP
 * team (rdtsc and rdtscp then fault: SIGSEGV, a crash): a clock that needs
 * no system call and no import, and that no check of the machine code can
 * rule out (a jump into an instruction's immediate runs its bytes). The
 * flag is per thread and inherited by threads started later. Linux x86
 * only, and not in AddressSanitizer builds (their runtime reads the
 * clock through the vDSO, as it makes system calls the filter below would
 * refuse); elsewhere, or where the kernel refuses, nothing changes (the
 * build's instruction check, insns.c, still stands). */
void dkb__guard_tsc_off(int threads) {
#if defined(__x86_64__) && defined(PR_SET_TSC) && !defined(__SANITIZE_ADDRESS__) /* its runtime reads the clock */
    (void)prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        (void)prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    }
#else
    (void)threads;
#endif
}

/* Only what the harness, malloc, stdio printing and OpenMP need (memory
 * without PROT_EXEC, futexes, threads of this process, read-only opens,
 * reads and writes on open descriptors, signals to this process, exit).
 * Anything else traps (SIGSYS: a crash that names the call), so code that
 * found its way to a system call without importing its function cannot
 * fork, exec, open files for writing, raise limits or map code. */
int dkb__guard_syscall_filter(void) {
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
        /* the stack scrubber's residency query */
        ALLOW_NR(__NR_mincore),
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
    struct sock_fprog prog = {(unsigned short)DKB_COUNTOF(f), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return -1;
    return 0;
#else
    return -1;
#endif
}

/* ---- the candidate's image ---- */

static struct {
    char *addr;
    size_t size;
    char *copy;
} g_seg[MAX_SEGMENTS];
static int g_nseg;

typedef struct phdr_ctx {
    uintptr_t base;
    const char *name;
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
            if (g_nseg == MAX_SEGMENTS) {
                c->too_many = 1;
                continue;
            }
            char *copy = malloc(parts[k][1] - parts[k][0]);
            if (!copy) {
                c->too_many = 1;
                continue;
            }
            g_seg[g_nseg].addr = (char *)parts[k][0];
            g_seg[g_nseg].size = parts[k][1] - parts[k][0];
            g_seg[g_nseg].copy = copy;
            memcpy(copy, g_seg[g_nseg].addr, g_seg[g_nseg].size);
            g_nseg++;
        }
    }
    return 1;
}

int dkb__guard_image_take(void *so, int *tls, dkb_error *err) {
    struct link_map *lm = NULL;
    *tls = 0;
    if (dlinfo(so, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return dkb_fail(err, DKB_EINTERNAL, "dlinfo: %s", dlerror());
    phdr_ctx c = {.base = lm->l_addr, .name = lm->l_name};
    dl_iterate_phdr(on_phdr, &c);
    if (!c.found) return dkb_fail(err, DKB_EINTERNAL, "cannot find %s among the loaded objects", lm->l_name);
    if (c.too_many) return dkb_fail(err, DKB_EINTERNAL, "cannot snapshot the candidate's writable segments");
    *tls = c.tls;
    return 0;
}

void dkb__guard_image_restore(void) {
    for (int i = 0; i < g_nseg; i++) memcpy(g_seg[i].addr, g_seg[i].copy, g_seg[i].size);
}

/* ---- the pristine state of a call ---- */

/* The OpenMP settings a candidate may change (omp_set_num_threads and
 * friends). */
static struct {
    int num_threads, dynamic, max_active_levels;
    omp_sched_t sched;
    int chunk;
} g_icv;
static int g_threads;

void dkb__guard_openmp_restore(void) {
    omp_set_num_threads(g_icv.num_threads);
    omp_set_dynamic(g_icv.dynamic);
    omp_set_max_active_levels(g_icv.max_active_levels);
    omp_set_schedule(g_icv.sched, g_icv.chunk);
}

/* The stdio streams: stdout gets a harness buffer (so its buffer pointer
 * is fixed), and each FILE object and its lock are restored after a flush;
 * the buffer is cleared (a flushed buffer still holds what was printed). */
static char g_stdout_buf[1 << 14];
typedef struct {
    FILE *f;
    FILE copy;
    void *lock;
    char lock_copy[16]; /* glibc's _IO_lock_t: int lock, int cnt, void *owner */
} stream_snap;
static stream_snap g_streams[3];
static int g_nstreams;

/* Data objects a candidate may import by name (symbols.c), as they were. */
static struct {
    void *addr;
    size_t size;
    unsigned char copy[64];
} g_objects[MAX_OBJECTS];
static int g_nobjects;

/* Per-thread C library state: the ctype table pointers (whose slots
 * __ctype_*_loc hand out) as this thread found them. */
static const unsigned short *g_ctype_b;
static const int32_t *g_ctype_lower, *g_ctype_upper;

static char *g_main_stack_lo; /* the lowest address the main thread's stack may grow to */
static pid_t g_main_tid;

static int snap_streams(dkb_error *err) {
    fflush(stdout);
    fflush(stderr);
    if (setvbuf(stdout, g_stdout_buf, _IOFBF, sizeof g_stdout_buf) != 0)
        return dkb_fail(err, DKB_EINTERNAL, "setvbuf(stdout) failed");
    FILE *fs[3] = {stdin, stdout, stderr};
    for (int i = 0; i < 3; i++) {
        stream_snap *s = &g_streams[g_nstreams++];
        s->f = fs[i];
        memcpy(&s->copy, fs[i], sizeof(FILE));
#ifdef __GLIBC__
        s->lock = fs[i]->_lock;
        if (s->lock) memcpy(s->lock_copy, s->lock, sizeof s->lock_copy);
#endif
    }
    return 0;
}

static void restore_streams(void) {
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < g_nstreams; i++) {
        stream_snap *s = &g_streams[i];
        memcpy(s->f, &s->copy, sizeof(FILE));
        if (s->lock) memcpy(s->lock, s->lock_copy, sizeof s->lock_copy);
    }
    memset(g_stdout_buf, 0, sizeof g_stdout_buf);
}

static int snap_objects(dkb_error *err) {
    size_t n = 0;
    const char *const *names = dkb__symbol_data_objects(&n);
    for (size_t i = 0; i < n; i++) {
        void *a = dlsym(RTLD_DEFAULT, names[i]);
        if (!a) continue; /* not in this C library: nothing can import it */
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (!dladdr1(a, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
            return dkb_fail(err, DKB_EINTERNAL, "cannot find the size of %s", names[i]);
        size_t size = sym->st_size;
        if (size > sizeof g_objects[0].copy || g_nobjects == MAX_OBJECTS)
            return dkb_fail(err, DKB_EINTERNAL, "%s is too large to restore (%zu bytes)", names[i], size);
        int seen = 0; /* aliases (signgam, __signgam) */
        for (int k = 0; k < g_nobjects; k++) seen |= g_objects[k].addr == a;
        if (seen) continue;
        g_objects[g_nobjects].addr = a;
        g_objects[g_nobjects].size = size;
        memcpy(g_objects[g_nobjects].copy, a, size);
        g_nobjects++;
    }
    return 0;
}

static void restore_objects(void) {
    for (int i = 0; i < g_nobjects; i++) memcpy(g_objects[i].addr, g_objects[i].copy, g_objects[i].size);
}

int dkb__guard_pristine_take(int threads, dkb_error *err) {
    g_threads = threads;
    g_icv.num_threads = omp_get_max_threads();
    g_icv.dynamic = omp_get_dynamic();
    g_icv.max_active_levels = omp_get_max_active_levels();
    omp_get_schedule(&g_icv.sched, &g_icv.chunk);
    g_ctype_b = *__ctype_b_loc();
    g_ctype_lower = *__ctype_tolower_loc();
    g_ctype_upper = *__ctype_toupper_loc();
    g_main_tid = (pid_t)syscall(SYS_gettid);
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return dkb_fail(err, DKB_EINTERNAL, "pthread_getattr_np failed");
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    g_main_stack_lo = addr;
    int rc = snap_streams(err);
    if (!rc) rc = snap_objects(err);
    return rc;
}

/* The lowest address the calling thread's stack may reach (the main
 * thread's from its limit, recorded at pristine_take). */
static void stack_bounds(char **lo) {
    if ((pid_t)syscall(SYS_gettid) == g_main_tid) {
        *lo = g_main_stack_lo;
        return;
    }
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    *lo = NULL;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    *lo = addr;
}

/* The lowest resident page of the stack mapping that holds hi, going down
 * from hi's page to at most lo and stopping at the first page that is not
 * mapped (the end of the main thread's growth; the kernel keeps a gap below
 * a stack). Pages that are mapped but not resident (never touched, the
 * guard page) do not count. hi's page when nothing lower is resident. */
static char *lowest_resident(char *lo, char *hi) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    enum { CHUNK = 256 };
    unsigned char vec[CHUNK];
    char *floor_ = (char *)(((uintptr_t)lo + page - 1) & ~(page - 1));
    char *p = (char *)((uintptr_t)hi & ~(page - 1)), *best = p;
    while (p > floor_) {
        size_t pages = (size_t)((p - floor_) / (ptrdiff_t)page);
        if (pages > CHUNK) pages = CHUNK;
        char *base = p - pages * page;
        if (mincore(base, pages * page, vec) != 0) {
            /* the end of the mapping is in this chunk: page by page downwards */
            for (size_t k = pages; k-- > 0;) {
                char *q = base + k * page;
                if (mincore(q, page, vec) != 0) return best;
                if (vec[0] & 1) best = q;
            }
            return best;
        }
        for (size_t k = 0; k < pages; k++)
            if (vec[k] & 1) {
                best = base + k * page;
                break;
            }
        p = base;
    }
    return best;
}

#if defined(__x86_64__)
/* Zero [lo, the return address): at entry %rsp points at the return
 * address, and everything below it is dead. No frame of its own, so the
 * caller's callees' leftovers are all covered. */
__attribute__((naked, noinline)) void dkb__guard_wipe_below(char *lo) {
    (void)lo;
    __asm__ volatile(
        "mov %rsp, %rcx\n\t"
        "and $-8, %rdi\n\t"
        "sub %rdi, %rcx\n\t"
        "jbe 1f\n\t"
        "shr $3, %rcx\n\t"
        "xor %eax, %eax\n\t"
        "rep stosq\n\t"
        "1:\n\t"
        "ret\n\t");
}
#else
/* Elsewhere: zero up to a little below this function's locals. */
__attribute__((noinline)) void dkb__guard_wipe_below(char *lo) {
    volatile char here;
    uintptr_t top = ((uintptr_t)&here - 512) & ~(uintptr_t)7;
    for (volatile uint64_t *p = (uint64_t *)(((uintptr_t)lo + 7) & ~(uintptr_t)7); (uintptr_t)p < top; p++) *p = 0;
}
#endif

/* This thread's errno, ctype pointers and floating-point environment
 * (rounding, exception masks, flush-to-zero) as at the start. */
static void reset_thread_state(void) {
    *__ctype_b_loc() = g_ctype_b;
    *__ctype_tolower_loc() = g_ctype_lower;
    *__ctype_toupper_loc() = g_ctype_upper;
    fesetenv(FE_DFL_ENV);
    errno = 0;
}

/* A team thread other than the main one: reset, then zero its stack below
 * this parallel region's frame (where the candidate's region bodies ran). */
__attribute__((noinline)) static void scrub_team_thread(void) {
    reset_thread_state();
    char *lo = NULL;
    stack_bounds(&lo);
    volatile char here;
    if (lo) dkb__guard_wipe_below(lowest_resident(lo, (char *)&here));
}

char *dkb__guard_pristine_restore(void) {
    dkb__guard_image_restore();
    dkb__guard_openmp_restore();
    restore_objects(); /* first: stdout and stderr are among them */
    restore_streams();
    if (g_threads > 1) {
#pragma omp parallel num_threads(g_threads)
        if (omp_get_thread_num() != 0) scrub_team_thread();
    }
    reset_thread_state();
    volatile char here;
    return lowest_resident(g_main_stack_lo, (char *)&here);
}
