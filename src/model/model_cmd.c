/* model_cmd.c: the command backend: run `/bin/sh -c CMD` in its own
 * process group, write the conversation to its stdin ("### role" lines
 * before each message) while reading its stdout (kept up to
 * max_reply_bytes; past that the command is stopped and the reply flagged
 * "truncated") and the tail of its stderr (for the error message), all in
 * one poll loop so a big conversation and a big reply cannot deadlock.
 * Past timeout_s, or once the command has exited, the whole process group
 * is killed (SIGKILL) before the child is reaped, so no helper it started
 * outlives it. SIGPIPE is blocked in the calling thread while it runs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/timing.h"  // defines: dkb__now_s
#include "model/model_internal.h"

#define ERR_TAIL 300          /* stderr bytes quoted in an error */
#define DRAIN_AFTER_EXIT_S 1.0 /* after the command exits, wait this long for its stdout to end */
#define READ_CHUNK 65536

/* The conversation as the command reads it. */
static char *build_input(const dkb_model_msg *msgs, int n, size_t *len) {
    size_t total = 1;
    for (int i = 0; i < n; i++) total += 6 + strlen(msgs[i].role) + strlen(msgs[i].content) + 2;
    char *s = malloc(total);
    if (!s) return NULL;
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        size_t cl = strlen(msgs[i].content);
        o += (size_t)sprintf(s + o, "### %s\n", msgs[i].role);
        memcpy(s + o, msgs[i].content, cl);
        o += cl;
        if (cl == 0 || msgs[i].content[cl - 1] != '\n') s[o++] = '\n';
    }
    s[o] = '\0';
    *len = o;
    return s;
}

typedef struct run_state {
    int in_fd, out_fd, err_fd;   /* -1 once closed */
    const char *input;
    size_t input_len, input_off;
    char *out;
    size_t out_len, out_cap, out_max;
    int out_cut;                 /* more than out_max came */
    char err_tail[ERR_TAIL + 1];
    size_t err_len;
} run_state;

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Read what is ready on stdout; -1 when out of memory. */
static int read_out(run_state *s) {
    for (;;) {
        if (s->out_len + READ_CHUNK + 1 > s->out_cap) {
            size_t cap = s->out_cap ? s->out_cap * 2 : 2 * READ_CHUNK;
            char *p = realloc(s->out, cap);
            if (!p) return -1;
            s->out = p;
            s->out_cap = cap;
        }
        ssize_t k = read(s->out_fd, s->out + s->out_len, READ_CHUNK);
        if (k > 0) {
            s->out_len += (size_t)k;
            if (s->out_len > s->out_max) {
                s->out_cut = 1;
                close_fd(&s->out_fd);
                return 0;
            }
            continue;
        }
        if (k == 0 || (errno != EINTR && errno != EAGAIN)) close_fd(&s->out_fd);
        if (k < 0 && errno == EINTR) continue;
        return 0;
    }
}

/* Keep the last ERR_TAIL bytes of stderr. */
static void read_err(run_state *s) {
    char buf[4096];
    for (;;) {
        ssize_t k = read(s->err_fd, buf, sizeof buf);
        if (k > 0) {
            size_t n = (size_t)k;
            if (n >= ERR_TAIL) {
                memcpy(s->err_tail, buf + n - ERR_TAIL, ERR_TAIL);
                s->err_len = ERR_TAIL;
            } else {
                size_t keep = s->err_len + n > ERR_TAIL ? ERR_TAIL - n : s->err_len;
                memmove(s->err_tail, s->err_tail + s->err_len - keep, keep);
                memcpy(s->err_tail + keep, buf, n);
                s->err_len = keep + n;
            }
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k == 0 || errno != EAGAIN) close_fd(&s->err_fd);
        return;
    }
}

static void write_in(run_state *s) {
    while (s->input_off < s->input_len) {
        ssize_t k = write(s->in_fd, s->input + s->input_off, s->input_len - s->input_off);
        if (k > 0) {
            s->input_off += (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && errno == EAGAIN) return;
        break; /* EPIPE: the command stopped reading; the rest is dropped */
    }
    close_fd(&s->in_fd);
}

/* The last line of the stderr tail, on one line, for messages. */
static void err_summary(const run_state *s, char *out, size_t cap) {
    size_t end = s->err_len;
    while (end > 0 && (s->err_tail[end - 1] == '\n' || s->err_tail[end - 1] == '\r')) end--;
    size_t start = end;
    while (start > 0 && s->err_tail[start - 1] != '\n') start--;
    size_t o = 0;
    for (size_t i = start; i < end && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s->err_tail[i];
        out[o++] = c < 0x20 ? ' ' : (char)c;
    }
    out[o] = '\0';
}

/* Start the command: its own process group, pipes on 0/1/2. The pipes are
 * O_CLOEXEC, so a concurrent fork in another thread does not keep them
 * open. -1 with errno on failure. */
static pid_t spawn(const char *cmd, int fds[3], const sigset_t *child_mask) {
    int in[2], out[2], er[2];
    if (pipe2(in, O_CLOEXEC)) return -1;
    if (pipe2(out, O_CLOEXEC)) {
        close(in[0]), close(in[1]);
        return -1;
    }
    if (pipe2(er, O_CLOEXEC)) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) { /* only async-signal-safe calls until exec */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGPIPE, &dfl, NULL);
        sigprocmask(SIG_SETMASK, child_mask, NULL);
        setpgid(0, 0);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(er[1], 2) < 0) _exit(127);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int saved = errno;
    close(in[0]), close(out[1]), close(er[1]);
    if (pid < 0) {
        close(in[1]), close(out[0]), close(er[0]);
        errno = saved;
        return -1;
    }
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    fds[0] = in[1], fds[1] = out[0], fds[2] = er[0];
    for (int i = 0; i < 3; i++) fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    return pid;
}

/* Has the child exited (not reaped, so its pid and group id stay reserved)?
 * ECHILD (SIGCHLD ignored, so the kernel reaped it) counts as exited. */
static int child_exited(pid_t pid) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return si.si_pid == pid;
}

/* Poll the pipes until the command's stdout ends and it has exited, the
 * reply is over the cap, or the deadline passes. Returns 1 on timeout,
 * -1 when out of memory, else 0. */
static int pump(run_state *s, pid_t pid, double deadline) {
    double exited_at = -1;
    for (;;) {
        double now = dkb__now_s();
        if (s->out_fd < 0 && (s->out_cut || exited_at >= 0 || child_exited(pid))) return 0;
        if (exited_at < 0 && child_exited(pid)) exited_at = now;
        if (exited_at >= 0 && now - exited_at > DRAIN_AFTER_EXIT_S) return 0; /* a helper holds stdout */
        if (now >= deadline) return 1;
        struct pollfd p[3];
        int np = 0;
        if (s->in_fd >= 0) p[np++] = (struct pollfd){.fd = s->in_fd, .events = POLLOUT};
        if (s->out_fd >= 0) p[np++] = (struct pollfd){.fd = s->out_fd, .events = POLLIN};
        if (s->err_fd >= 0) p[np++] = (struct pollfd){.fd = s->err_fd, .events = POLLIN};
        double left = deadline - now;
        int ms = left > 0.05 ? 50 : (int)(left * 1000) + 1; /* wake often to notice the exit */
        if (np == 0) {
            struct timespec ts = {0, (long)ms * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        if (poll(p, (nfds_t)np, ms) < 0 && errno != EINTR) return 0;
        for (int i = 0; i < np; i++) {
            if (!p[i].revents) continue;
            if (p[i].fd == s->in_fd) write_in(s);
            else if (p[i].fd == s->out_fd) {
                if (read_out(s) < 0) return -1;
            } else if (p[i].fd == s->err_fd) read_err(s);
        }
    }
}

int dkb__model_cmd_run(const dkb_model *m, const dkb_model_msg *msgs, int n, dkb__model_attempt *a,
                       dkb_error *err) {
    run_state s = {.in_fd = -1, .out_fd = -1, .err_fd = -1, .out_max = (size_t)m->o.max_reply_bytes};
    char *input = build_input(msgs, n, &s.input_len);
    if (!input) return dkb_fail(err, DKB_ENOMEM, "model command: out of memory building its input");
    s.input = input;

    sigset_t pipe_set, old_mask;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    int fds[3];
    double t0 = dkb__now_s();
    pid_t pid = spawn(m->o.cmd, fds, &old_mask);
    if (pid < 0) {
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        free(input);
        return dkb_fail(err, dkb_errno_code(e), "model command: cannot start /bin/sh: %s", strerror(e));
    }
    s.in_fd = fds[0], s.out_fd = fds[1], s.err_fd = fds[2];
    if (s.input_len == 0) close_fd(&s.in_fd);
    int pr = pump(&s, pid, t0 + m->o.timeout_s);
    kill(-pid, SIGKILL); /* the group: helpers the command left behind */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close_fd(&s.in_fd);
    close_fd(&s.out_fd);
    close_fd(&s.err_fd);
    /* Consume a SIGPIPE our writes raised, then restore the mask. */
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&old_mask, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    free(input);

    char tail[ERR_TAIL + 1];
    err_summary(&s, tail, sizeof tail);
    int rc = 0;
    if (pr < 0) {
        rc = dkb_fail(err, DKB_ENOMEM, "model command: out of memory reading its reply");
    } else if (pr > 0) {
        snprintf(a->finish_reason, sizeof a->finish_reason, "timeout");
        rc = dkb_fail(err, DKB_EIO, "model command timed out after %g s (killed with its process group)%s%s",
                      m->o.timeout_s, tail[0] ? "; stderr: " : "", tail);
    } else if (s.out_cut) {
        size_t keep = dkb__model_utf8_cut(s.out, s.out_len, s.out_max);
        s.out[keep] = '\0';
        snprintf(a->finish_reason, sizeof a->finish_reason, "truncated");
    } else if (WIFSIGNALED(status)) {
        rc = dkb_fail(err, DKB_EIO, "model command killed by signal %d%s%s", WTERMSIG(status),
                      tail[0] ? "; stderr: " : "", tail);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        rc = dkb_fail(err, DKB_EIO, "model command exited with status %d%s%s", WEXITSTATUS(status),
                      tail[0] ? "; stderr: " : "", tail);
    }
    if (rc) {
        free(s.out);
        return rc;
    }
    if (!s.out) s.out = calloc(1, 1);
    if (!s.out) return dkb_fail(err, DKB_ENOMEM, "model command: out of memory");
    if (!s.out_cut) s.out[s.out_len] = '\0';
    a->text = s.out;
    if (!a->finish_reason[0]) snprintf(a->finish_reason, sizeof a->finish_reason, "stop");
    return 0;
}
