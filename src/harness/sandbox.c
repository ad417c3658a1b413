/* sandbox.c: run a command (the worker, or the compiler) in a child process
 * under limits and classify how it ended: a wall-clock timeout, resident
 * memory and output size are watched by polling and enforced with SIGKILL
 * to the child's whole process group; a report arrives on a pipe.
 *
 * The child: its own process group, stdin /dev/null, stdout and stderr to
 * one file, no core dumps, RLIMIT_AS when asked, every other fd closed but
 * the report pipe (fd 3, named in env DKB_REPORT_FD) and the nonce pipe
 * (fd 4, env DKB_NONCE_FD): a fresh random nonce per run that the worker
 * reads only when it writes its report and puts into it; only a report
 * line carrying it counts, so lines a candidate forges on fd 3 are
 * ignored. Everything the child needs (argv, envp) is
 * built before fork, so only async-signal-safe calls run between fork and
 * exec. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/timing.h"
#include "harness/harness.h"
#include "harness/relay.h"

#define REPORT_FD 3
#define NONCE_FD 4
#define NONCE_HEX 32
#define REPORT_MAX ((size_t)16 << 20)   /* a larger report is an output limit */
#define TAIL_BYTES 4096
#define POLL_MS 5

extern char **environ;

void dkb__text_sanitize(char *s, size_t n) {
    unsigned char *p = (unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) p[i] = '?';
            i++;
            continue;
        }
        /* a well-formed UTF-8 sequence (no overlongs, no surrogates, <= U+10FFFF) */
        size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        int ok = len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++) ok = (p[i + k] & 0xC0) == 0x80;
        if (ok && len == 3) ok = !(c == 0xE0 && p[i + 1] < 0xA0) && !(c == 0xED && p[i + 1] >= 0xA0);
        if (ok && len == 4) ok = !(c == 0xF0 && p[i + 1] < 0x90) && !(c == 0xF4 && p[i + 1] >= 0x90);
        if (!ok) {
            p[i++] = '?';
            continue;
        }
        i += len;
    }
}

const char *dkb__signal_name(int sig, char *buf, size_t n) {
    static const struct { int sig; const char *name; } NAMES[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGABRT, "SIGABRT"}, {SIGFPE, "SIGFPE"},
        {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
        {SIGPIPE, "SIGPIPE"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
        {SIGTRAP, "SIGTRAP"}, {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGUSR1, "SIGUSR1"},
        {SIGUSR2, "SIGUSR2"}, {SIGALRM, "SIGALRM"},
    };
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (NAMES[i].sig == sig) return NAMES[i].name;
    snprintf(buf, n, "signal %d", sig);
    return buf;
}

void dkb__sandbox_result_free(dkb_sandbox_result *r) {
    if (!r) return;
    free(r->report);
    free(r->output_tail);
    r->report = r->output_tail = NULL;
}


/* Anonymous resident bytes of pid (statm: resident - shared), 0 if gone. */
static uint64_t anon_rss(pid_t pid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    unsigned long long size, resident, shared;
    if (sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3) return 0;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return resident > shared ? (resident - shared) * page : 0;
}

/* The environment for the child: ours without DKB_REPORT_FD/DKB_NONCE_FD/
 * DKB_MEM_LIMIT/DKB_OUTPUT_LIMIT, plus those four, and with
 * CUDA_VISIBLE_DEVICES=cuda_visible instead of ours when that is given.
 * One malloc'd block of pointers and the new strings appended to it. */
static char **child_env(uint64_t mem, uint64_t out, const char *cuda_visible) {
    size_t n = 0;
    for (char **e = environ; e && *e; e++) n++;
    enum { EXTRA = 5, LEN = 96 };
    if (cuda_visible && strlen(cuda_visible) > LEN - 32) return NULL;
    char **env = malloc((n + EXTRA + 1) * sizeof *env + EXTRA * LEN);
    if (!env) return NULL;
    char *strs = (char *)(env + n + EXTRA + 1);
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "DKB_REPORT_FD=", 14) && strncmp(*e, "DKB_MEM_LIMIT=", 14) &&
            strncmp(*e, "DKB_OUTPUT_LIMIT=", 17) && strncmp(*e, "DKB_NONCE_FD=", 13) &&
            !(cuda_visible && !strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21)))
            env[k++] = *e;
    snprintf(strs, LEN, "DKB_REPORT_FD=%d", REPORT_FD);
    snprintf(strs + LEN, LEN, "DKB_MEM_LIMIT=%llu", (unsigned long long)mem);
    snprintf(strs + 2 * LEN, LEN, "DKB_OUTPUT_LIMIT=%llu", (unsigned long long)out);
    snprintf(strs + 3 * LEN, LEN, "DKB_NONCE_FD=%d", NONCE_FD);
    env[k++] = strs, env[k++] = strs + LEN, env[k++] = strs + 2 * LEN, env[k++] = strs + 3 * LEN;
    if (cuda_visible) {
        snprintf(strs + 4 * LEN, LEN, "CUDA_VISIBLE_DEVICES=%s", cuda_visible);
        env[k++] = strs + 4 * LEN;
    }
    env[k] = NULL;
    return env;
}

/* In the child, after fork: set up and exec; never returns. Only
 * async-signal-safe calls. */
static void child(char *const argv[], char **env, int devnull, int outfd, int report_w, int nonce_r,
                  uint64_t as_bytes, int relay_req_w, int relay_ans_r) {
    setpgid(0, 0);
    struct rlimit rl = {0, 0};
    setrlimit(RLIMIT_CORE, &rl);
    if (as_bytes) {
        rl.rlim_cur = rl.rlim_max = as_bytes;
        setrlimit(RLIMIT_AS, &rl);
    }
    /* move the three fds out of the way (any may sit on 0..3), then place them */
    int nd = fcntl(devnull, F_DUPFD, 10), no = fcntl(outfd, F_DUPFD, 10), nr = fcntl(report_w, F_DUPFD, 10);
    int nn = fcntl(nonce_r, F_DUPFD, 10);
    if (nd < 0 || no < 0 || nr < 0 || nn < 0) _exit(126);
    int rq = relay_req_w >= 0 ? fcntl(relay_req_w, F_DUPFD, 10) : -1;
    int ra = relay_ans_r >= 0 ? fcntl(relay_ans_r, F_DUPFD, 10) : -1;
    if (dup2(nd, 0) < 0 || dup2(no, 1) < 0 || dup2(no, 2) < 0 || dup2(nr, REPORT_FD) < 0 || dup2(nn, NONCE_FD) < 0)
        _exit(126);
    if (relay_req_w >= 0 &&
        (rq < 0 || ra < 0 || dup2(rq, DKB__RELAY_REQ_FD) < 0 || dup2(ra, DKB__RELAY_ANS_FD) < 0))
        _exit(126);
    int keep = relay_req_w >= 0 ? DKB__RELAY_ANS_FD : NONCE_FD;
    /* close everything else */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, keep + 1, ~0u, 0) != 0)
#endif
    {
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = keep + 1; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close((int)fd);
    }
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(argv[0], argv, env);
    _exit(127);
}

/* The last TAIL_BYTES of the output file (malloc'd, NUL-terminated). */
static char *read_tail(int fd, uint64_t size) {
    size_t n = size < TAIL_BYTES ? (size_t)size : TAIL_BYTES;
    char *buf = malloc(n + 1);
    if (!buf) return NULL;
    ssize_t got = n ? pread(fd, buf, n, (off_t)(size - n)) : 0;
    if (got < 0) got = 0;
    buf[got] = 0;
    /* a cut at the start may have split a UTF-8 sequence: sanitize mends it */
    dkb__text_sanitize(buf, (size_t)got);
    return buf;
}

/* Verdict of a complete report when the child died by a signal: CRASH with
 * the report's detail, or WROTE_INPUT if the report says so. */
static dkb_verdict report_verdict(const char *report, char *detail, size_t n) {
    cJSON *o = report ? cJSON_Parse(report) : NULL;
    dkb_verdict v = DKB_VERDICT_CRASH;
    if (cJSON_IsObject(o)) {
        const cJSON *vv = cJSON_GetObjectItemCaseSensitive(o, "verdict");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "detail");
        if (cJSON_IsString(vv) && !strcmp(vv->valuestring, "wrote_input")) v = DKB_VERDICT_WROTE_INPUT;
        if (cJSON_IsString(d) && d->valuestring[0]) snprintf(detail, n, "%s", d->valuestring);
    }
    cJSON_Delete(o);
    return v;
}

/* The last line of the report buffer that is a JSON object whose "nonce"
 * is ours (malloc'd), or NULL. */
static char *find_report(const char *buf, size_t len, const char *nonce) {
    char *found = NULL;
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(buf + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - buf) : len;
        if (end > start) {
            char *line = strndup(buf + start, end - start);
            cJSON *o = line ? cJSON_ParseWithOpts(line, NULL, 1) : NULL;
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "nonce");
            if (cJSON_IsObject(o) && cJSON_IsString(n) && !strcmp(n->valuestring, nonce)) {
                free(found);
                found = line;
                line = NULL;
            }
            cJSON_Delete(o);
            free(line);
        }
        start = end + 1;
    }
    return found;
}

/* A fresh nonce: NONCE_HEX hex digits. */
static int make_nonce(char *out) {
    unsigned char raw[NONCE_HEX / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = "0123456789abcdef"[raw[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
    }
    out[NONCE_HEX] = 0;
    return 0;
}

typedef enum { END_NONE = 0, END_EXIT, END_TIMEOUT, END_MEMORY, END_OUTPUT, END_REPORT } end_reason;

int dkb__sandbox_run(char *const argv[], const dkb_limits *lim, dkb_sandbox_result *r, dkb_error *err) {
    memset(r, 0, sizeof *r);
    r->verdict = DKB_VERDICT_HARNESS_ERROR;
    r->exit_code = -1;
    if (!argv || !argv[0] || !lim || !(lim->timeout_s > 0))
        return dkb_fail(err, DKB_EINVAL, "sandbox: missing command or time limit");
    uint64_t out_limit = lim->output_bytes ? lim->output_bytes : (uint64_t)1 << 20;

    int devnull = -1, outfd = -1, pipefd[2] = {-1, -1}, noncefd[2] = {-1, -1}, rc = 0;
    int rreq[2] = {-1, -1}, rans[2] = {-1, -1};   /* the relay's pipes (lim->relay) */
    char nonce[NONCE_HEX + 2];
    char **env = NULL;
    char *report = NULL, *line = NULL;
    size_t rlen = 0, rcap = 0;
    pid_t pid = -1;

    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        rc = dkb_fail(err, DKB_EIO, "sandbox: cannot open /dev/null: %s", strerror(errno));
        goto done;
    }
    if (lim->output_path) {
        outfd = open(lim->output_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (outfd < 0) {
            rc = dkb_fail(err, dkb_errno_code(errno), "sandbox: cannot create %s: %s", lim->output_path, strerror(errno));
            goto done;
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        char path[4096];
        snprintf(path, sizeof path, "%s/dkb-sandbox-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        outfd = mkostemp(path, O_CLOEXEC | O_APPEND);
        if (outfd < 0) {
            rc = dkb_fail(err, dkb_errno_code(errno), "sandbox: cannot create a file in %s: %s", path, strerror(errno));
            goto done;
        }
        unlink(path);
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        rc = dkb_fail(err, dkb_errno_code(errno), "sandbox: pipe: %s", strerror(errno));
        goto done;
    }
    if (pipe2(noncefd, O_CLOEXEC) != 0) {
        rc = dkb_fail(err, dkb_errno_code(errno), "sandbox: pipe: %s", strerror(errno));
        goto done;
    }
    if (lim->relay && (pipe2(rreq, O_CLOEXEC) != 0 || pipe2(rans, O_CLOEXEC) != 0)) {
        rc = dkb_fail(err, dkb_errno_code(errno), "sandbox: pipe: %s", strerror(errno));
        goto done;
    }
    if (make_nonce(nonce) != 0) {
        rc = dkb_fail(err, DKB_EIO, "sandbox: getrandom: %s", strerror(errno));
        goto done;
    }
    nonce[NONCE_HEX] = '\n';
    if (write(noncefd[1], nonce, NONCE_HEX + 1) != NONCE_HEX + 1) {
        rc = dkb_fail(err, DKB_EIO, "sandbox: cannot write the nonce: %s", strerror(errno));
        goto done;
    }
    nonce[NONCE_HEX] = 0;
    close(noncefd[1]);
    noncefd[1] = -1;
    env = child_env(lim->mem_bytes, out_limit, lim->cuda_visible);
    if (!env) {
        rc = dkb_fail(err, DKB_ENOMEM, "sandbox: out of memory");
        goto done;
    }

    double t0 = dkb__now_s();
    pid = fork();
    if (pid < 0) {
        rc = dkb_fail(err, dkb_errno_code(errno), "sandbox: fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) child(argv, env, devnull, outfd, pipefd[1], noncefd[0], lim->as_bytes, rreq[1], rans[0]);
    setpgid(pid, pid); /* also in the parent, so the group exists before any kill */
    close(pipefd[1]);
    pipefd[1] = -1;
    if (lim->relay) {
        close(rreq[1]), close(rans[0]);
        rreq[1] = rans[0] = -1;
        dkb__relay_attach(lim->relay, rreq[0], rans[1], t0 + lim->timeout_s);
    }

    int status = 0, reaped = 0, pipe_open = 1;
    end_reason why = END_NONE;
    uint64_t rss_over = 0;
    while (!reaped) {
        struct pollfd pfd = {pipefd[0], POLLIN, 0};
        int pr;
        if (lim->relay) {
            /* the worker's requests too, and the rounds between the ranks moved on every millisecond */
            struct pollfd two[2] = {{pipe_open ? pipefd[0] : -1, POLLIN, 0}, {dkb__relay_req_fd(lim->relay), POLLIN, 0}};
            pr = poll(two, 2, 1);
            pfd.revents = two[0].revents;
            if (pr > 0 && !(two[0].revents & (POLLIN | POLLHUP | POLLERR))) pr = 0;
            dkb__relay_poll(lim->relay);
        } else {
            pr = pipe_open ? poll(&pfd, 1, POLL_MS) : (nanosleep(&(struct timespec){0, POLL_MS * 1000000L}, NULL), 0);
        }
        if (pr < 0 && errno != EINTR) {
            rc = dkb_fail(err, DKB_EIO, "sandbox: poll: %s", strerror(errno));
            why = END_REPORT;
        }
        if (pr > 0 && pipe_open) {
            if (rlen + 65536 + 1 > rcap) {
                size_t ncap = rcap ? rcap * 2 : 65536 * 2;
                char *nb = ncap <= REPORT_MAX + 65536 * 2 ? realloc(report, ncap) : NULL;
                if (!nb) {
                    why = END_OUTPUT;
                } else {
                    report = nb, rcap = ncap;
                }
            }
            if (why == END_NONE) {
                ssize_t got = read(pipefd[0], report + rlen, rcap - rlen - 1);
                if (got > 0) rlen += (size_t)got;
                else if (got == 0 || (errno != EINTR && errno != EAGAIN)) pipe_open = 0;
                if (rlen > REPORT_MAX) why = END_OUTPUT;
            }
        }
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            reaped = 1;
            why = why == END_NONE ? END_EXIT : why;
            break;
        }
        if (w < 0 && errno != EINTR) {
            rc = dkb_fail(err, DKB_EINTERNAL, "sandbox: waitpid: %s", strerror(errno));
            why = END_REPORT;
        }
        if (why == END_NONE) {
            double el = dkb__now_s() - t0;
            uint64_t rss = anon_rss(pid);
            if (rss > r->peak_rss) r->peak_rss = rss;
            struct stat st;
            uint64_t osz = fstat(outfd, &st) == 0 ? (uint64_t)st.st_size : 0;
            if (el > lim->timeout_s) why = END_TIMEOUT;
            else if (lim->mem_bytes && rss > lim->mem_bytes) why = END_MEMORY, rss_over = rss;
            else if (osz > out_limit) why = END_OUTPUT;
        }
        if (why != END_NONE && !reaped) {
            if (lim->relay) dkb__relay_killed(lim->relay);
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            reaped = 1;
        }
    }
    r->seconds = dkb__now_s() - t0;
    kill(-pid, SIGKILL); /* whatever the child left behind in its group */
    if (lim->relay) dkb__relay_detach(lim->relay);
    /* drain what is left of the report (the write ends are closed now,
     * unless a grandchild escaped the group: then stop at once) */
    if (pipe_open) {
        int fl = fcntl(pipefd[0], F_GETFL);
        if (fl >= 0) fcntl(pipefd[0], F_SETFL, fl | O_NONBLOCK);
        while (rlen <= REPORT_MAX) {
            if (rlen + 65536 + 1 > rcap) {
                size_t ncap = rcap ? rcap * 2 : 65536 * 2;
                char *nb = realloc(report, ncap);
                if (!nb) break;
                report = nb, rcap = ncap;
            }
            ssize_t got = read(pipefd[0], report + rlen, rcap - rlen - 1);
            if (got <= 0) break;
            rlen += (size_t)got;
        }
    }
    line = rlen <= REPORT_MAX && report ? find_report(report, rlen, nonce) : NULL;

    struct stat st;
    r->output_size = fstat(outfd, &st) == 0 ? (uint64_t)st.st_size : 0;
    r->output_tail = read_tail(outfd, r->output_size);
    if (WIFEXITED(status)) r->exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r->signal = WTERMSIG(status);
    if (rc) goto done;

    int complete = line != NULL;
    char sbuf[16];
    switch (why) {
    case END_TIMEOUT:
        r->verdict = DKB_VERDICT_TIMEOUT;
        snprintf(r->detail, sizeof r->detail, "killed after %.1f s (limit %.1f s)", r->seconds, lim->timeout_s);
        break;
    case END_MEMORY:
        r->verdict = DKB_VERDICT_OUT_OF_MEMORY;
        snprintf(r->detail, sizeof r->detail, "resident memory %.1f MiB over the limit of %.1f MiB",
                 rss_over / 1048576.0, lim->mem_bytes / 1048576.0);
        break;
    case END_OUTPUT:
        r->verdict = DKB_VERDICT_OUTPUT_LIMIT;
        if (rlen > REPORT_MAX || !report)
            snprintf(r->detail, sizeof r->detail, "report over %zu bytes", REPORT_MAX);
        else
            snprintf(r->detail, sizeof r->detail, "wrote more than %llu bytes to stdout/stderr",
                     (unsigned long long)out_limit);
        break;
    default:
        if (r->output_size > out_limit) {
            r->verdict = DKB_VERDICT_OUTPUT_LIMIT;
            snprintf(r->detail, sizeof r->detail, "wrote %llu bytes to stdout/stderr (limit %llu)",
                     (unsigned long long)r->output_size, (unsigned long long)out_limit);
        } else if (WIFSIGNALED(status)) {
            const char *name = dkb__signal_name(r->signal, sbuf, sizeof sbuf);
            snprintf(r->detail, sizeof r->detail, "killed by %s", name);
            r->verdict = complete ? report_verdict(line, r->detail, sizeof r->detail) : DKB_VERDICT_CRASH;
        } else if (complete) {
            r->verdict = DKB_VERDICT_OK;
        } else {
            r->verdict = DKB_VERDICT_EXITED;
            if (r->exit_code == 127 && r->seconds < 1.0 && !rlen)
                snprintf(r->detail, sizeof r->detail, "exited with status 127 without a report (could not run %s?)",
                         argv[0]);
            else
                snprintf(r->detail, sizeof r->detail, "exited with status %d without a report%s", r->exit_code,
                         rlen ? " (what came on the report pipe was not the worker's)" : "");
        }
    }
    if (complete) {
        r->report = line;
        line = NULL;
    }

done:
    for (int i = 0; i < 2; i++) {
        if (rreq[i] >= 0) close(rreq[i]);
        if (rans[i] >= 0) close(rans[i]);
    }
    free(line);
    free(report);
    if (noncefd[0] >= 0) close(noncefd[0]);
    if (noncefd[1] >= 0) close(noncefd[1]);
    free(env);
    if (devnull >= 0) close(devnull);
    if (outfd >= 0) close(outfd);
    if (pipefd[0] >= 0) close(pipefd[0]);
    if (pipefd[1] >= 0) close(pipefd[1]);
    return rc;
}
