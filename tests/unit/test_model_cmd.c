/* test_model_cmd.c: the command backend of the model client with scripted
 * shell commands: a reply on stdout, the conversation format on stdin, a
 * non-zero exit (stderr quoted), death by a signal, a command that sleeps
 * past the timeout (killed with the helper it started), a reply over
 * max_reply_bytes (cut, flagged "truncated"), an endless reply, a big
 * conversation read in full, a big conversation the command ignores, and a
 * helper that keeps stdout open after the command exits. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dkb/error.h"
#include "model/model.h"
#include "test_check.h"

static const dkb_model_msg conv[] = {
    {"system", "You write CUDA kernels."},
    {"user", "Write q06.\nIn core mode."},
};

/* Run cmd on msgs with the given timeout and reply cap. */
static int run_cmd(const char *cmd, const dkb_model_msg *msgs, int n, double timeout_s, int64_t max_reply,
                   dkb_model_reply *r, dkb_error *e) {
    dkb_model_opts o;
    dkb_model_opts_init(&o);
    o.cmd = cmd;
    o.timeout_s = timeout_s;
    o.max_reply_bytes = max_reply;
    o.max_retries = 3; /* ignored: commands are not retried */
    dkb_model *m = NULL;
    int rc = dkb_model_open(&o, &m, e);
    CHECK(rc == 0, "open '%s': %s", cmd, e->msg);
    if (rc) {
        memset(r, 0, sizeof *r);
        return rc;
    }
    rc = dkb_model_chat(m, msgs, n, r, e);
    dkb_model_close(m);
    return rc;
}

static void test_reply(void) {
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = run_cmd("cat >/dev/null; printf 'Here:\\n```c\\nint x;\\n```\\n'", conv, 2, 5, 0, &r, &e);
    CHECK(rc == 0, "reply: rc %d: %s", rc, e.msg);
    CHECK(r.text && strcmp(r.text, "Here:\n```c\nint x;\n```\n") == 0, "reply: text '%s'", r.text);
    CHECK(strcmp(r.finish_reason, "stop") == 0 && r.attempts == 1 && r.http_status == 0,
          "reply: finish '%s' attempts %d status %d", r.finish_reason, r.attempts, r.http_status);
    CHECK(r.tokens_out == 6 && r.tokens_in > 0, "reply: tokens %lld/%lld (estimates)", (long long)r.tokens_in,
          (long long)r.tokens_out);
    dkb_model_reply_free(&r);
}

static void test_stdin_format(void) {
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = run_cmd("cat", conv, 2, 5, 0, &r, &e);
    const char *want = "### system\nYou write CUDA kernels.\n### user\nWrite q06.\nIn core mode.\n";
    CHECK(rc == 0 && r.text && strcmp(r.text, want) == 0, "stdin: rc %d, got '%s'", rc, r.text ? r.text : "");
    dkb_model_reply_free(&r);
}

static void test_exit_status(void) {
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = run_cmd("echo partial; echo 'model tool: quota exhausted' >&2; exit 3", conv, 2, 5, 0, &r, &e);
    CHECK_ERR(rc, DKB_EIO, e, "exited with status 3; stderr: model tool: quota exhausted");
    CHECK(r.text && r.text[0] == '\0' && r.attempts == 1, "exit: text '%s' attempts %d", r.text, r.attempts);
    CHECK(strcmp(r.finish_reason, "error") == 0, "exit: finish '%s'", r.finish_reason);
    dkb_model_reply_free(&r);
    rc = run_cmd("kill -TERM $$", conv, 2, 5, 0, &r, &e);
    CHECK_ERR(rc, DKB_EIO, e, "killed by signal 15");
    dkb_model_reply_free(&r);
}

static int alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

static void test_timeout(void) {
    char dir[] = "/tmp/dkb-model-cmd-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char cmd[256], pidfile[128];
    snprintf(pidfile, sizeof pidfile, "%s/helper.pid", dir);
    snprintf(cmd, sizeof cmd, "sleep 60 & echo $! > %s; echo started; sleep 60", pidfile);
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = run_cmd(cmd, conv, 2, 1.0, 0, &r, &e);
    CHECK_ERR(rc, DKB_EIO, e, "timed out after 1 s");
    CHECK(strcmp(r.finish_reason, "timeout") == 0, "timeout: finish '%s'", r.finish_reason);
    CHECK(r.latency_s >= 0.95 && r.latency_s < 3, "timeout: latency %g", r.latency_s);
    dkb_model_reply_free(&r);
    FILE *f = fopen(pidfile, "r");
    int helper = 0;
    CHECK(f && fscanf(f, "%d", &helper) == 1, "timeout: no helper pid in %s", pidfile);
    if (f) fclose(f);
    if (helper > 0) {
        for (int i = 0; i < 200 && alive(helper); i++) nanosleep(&(struct timespec){0, 10000000L}, NULL);
        CHECK(!alive(helper), "timeout: the helper (pid %d) survived its group's kill", helper);
    }
    unlink(pidfile);
    rmdir(dir);
}

static void test_huge_reply(void) {
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = run_cmd("head -c 5000000 /dev/zero | tr '\\0' x", conv, 2, 10, 100000, &r, &e);
    CHECK(rc == 0, "huge: rc %d: %s", rc, e.msg);
    CHECK(r.text && strlen(r.text) == 100000, "huge: %zu bytes kept", r.text ? strlen(r.text) : 0);
    CHECK(strcmp(r.finish_reason, "truncated") == 0, "huge: finish '%s'", r.finish_reason);
    dkb_model_reply_free(&r);
    rc = run_cmd("yes 'endless reply'", conv, 2, 10, 65536, &r, &e);
    CHECK(rc == 0 && strcmp(r.finish_reason, "truncated") == 0 && r.latency_s < 5, "endless: rc %d finish '%s' %g s",
          rc, r.finish_reason, r.latency_s);
    dkb_model_reply_free(&r);
}

static void test_big_stdin(void) {
    size_t big = 4u << 20;
    char *content = malloc(big + 1);
    if (!content) return;
    memset(content, 'a', big);
    content[big] = '\0';
    dkb_model_msg msgs[] = {{"user", content}};
    dkb_model_reply r;
    dkb_error e = {0};
    /* reads it all, and writes a big reply meanwhile: no deadlock */
    int rc = run_cmd("tee /dev/stderr | wc -c", msgs, 1, 10, 0, &r, &e);
    CHECK(rc == 0 && r.text && strtoull(r.text, NULL, 10) == big + 9 + 1, "big stdin: rc %d: %s, read '%s'", rc,
          e.msg, r.text ? r.text : "");
    dkb_model_reply_free(&r);
    rc = run_cmd("cat; cat >&2", msgs, 1, 10, 8 << 20, &r, &e); /* echoes it back */
    CHECK(rc == 0 && r.text && strlen(r.text) == big + 10, "big echo: rc %d %s len %zu", rc, e.msg,
          r.text ? strlen(r.text) : 0);
    dkb_model_reply_free(&r);
    rc = run_cmd("echo ignored-input", msgs, 1, 10, 0, &r, &e); /* never reads: EPIPE, not SIGPIPE */
    CHECK(rc == 0 && r.text && strcmp(r.text, "ignored-input\n") == 0, "no read: rc %d: %s", rc, e.msg);
    dkb_model_reply_free(&r);
    free(content);
}

static void test_helper_holds_stdout(void) {
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = run_cmd("sleep 30 & echo quick", conv, 2, 10, 0, &r, &e);
    CHECK(rc == 0 && r.text && strcmp(r.text, "quick\n") == 0, "helper: rc %d: %s", rc, e.msg);
    CHECK(r.latency_s < 3, "helper: waited %g s for a helper's stdout", r.latency_s);
    dkb_model_reply_free(&r);
}

int main(void) {
    test_reply();
    test_stdin_format();
    test_exit_status();
    test_timeout();
    test_huge_reply();
    test_big_stdin();
    test_helper_holds_stdout();
    if (failures) fprintf(stderr, "test_model_cmd: %d failures\n", failures);
    return failures != 0;
}
