/* test_model_client.c: the HTTP backend of the model client against the
 * scripted fake server (tests/tools/fake_model_server.py, loopback):
 * a 200 reply with usage and one without; 429 then 200 with Retry-After
 * honoured; 500 twice then 200; 500 forever; 400 not retried; a reply that
 * hangs (silent, and dribbling) ends at the timeout; a reply cut mid-body;
 * a huge reply cut at max_reply_bytes (within the body cap and past it); a
 * 200 that is not JSON; a closed port; the retry wait cap; concurrent
 * requests on one client; and the key: sent as a Bearer header, absent from
 * the server's log and from every error message (the files a run writes are
 * checked by tests/cli/optimize_loop.sh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dkb/error.h"
#include "model/model.h"
#include "test_check.h"
#include "test_model_server.h"

#define KEY_ENV "DKB_TEST_MODEL_KEY"
#define KEY "sk-dkbtest-7f3a9c1e5b20d4"

static const dkb_model_msg conv[] = {
    {"system", "You write CUDA kernels."},
    {"user", "Write q06 in core mode."},
};

/* Options for the fake server at url: fast retries, a short timeout. */
static dkb_model_opts test_opts(const char *url) {
    dkb_model_opts o;
    dkb_model_opts_init(&o);
    o.model = "fake-coder";
    o.base_url = url;
    o.api_key_env = KEY_ENV;
    o.timeout_s = 5;
    o.max_retries = 3;
    o.retry_base_s = 0.01;
    o.retry_max_wait_s = 10;
    return o;
}

/* One request to a fresh server playing script; rc, reply and err out.
 * The server's log is copied into *log (malloc'd) when log is non-NULL. */
static int chat_script(const char *script, dkb_model_opts *o, dkb_model_reply *r, dkb_error *err, char **log) {
    fake_server s;
    if (log) *log = NULL;
    if (fake_server_start(&s, script)) {
        failures++;
        memset(r, 0, sizeof *r);
        return -999;
    }
    if (!o->base_url || strcmp(o->base_url, "SERVER") == 0) o->base_url = s.url;
    dkb_model *m = NULL;
    int rc = dkb_model_open(o, &m, err);
    CHECK(rc == 0, "open: %s", err->msg);
    if (rc == 0) rc = dkb_model_chat(m, conv, 2, r, err);
    dkb_model_close(m);
    if (log) *log = fake_read_file(s.log);
    fake_server_stop(&s);
    return rc;
}

static int one_line(const char *s) { return strchr(s, '\n') == NULL && strchr(s, '\r') == NULL; }

static void test_ok_with_usage(void) {
    dkb_model_opts o = test_opts("SERVER");
    o.max_tokens = 2048;
    o.temperature = 0.2;
    o.price_in_per_mtok = 2;
    o.price_out_per_mtok = 8;
    dkb_model_reply r;
    dkb_error e = {0};
    char *log;
    int rc = chat_script("[{\"content\": \"```cuda\\nint x;\\n```\", \"usage\": {\"prompt_tokens\": 1100, "
                         "\"completion_tokens\": 700}}]",
                         &o, &r, &e, &log);
    CHECK(rc == 0, "ok: rc %d: %s", rc, e.msg);
    CHECK(r.text && strcmp(r.text, "```cuda\nint x;\n```") == 0, "ok: text '%s'", r.text ? r.text : "(null)");
    CHECK(r.tokens_in == 1100 && r.tokens_out == 700, "ok: tokens %lld/%lld", (long long)r.tokens_in,
          (long long)r.tokens_out);
    double want = (1100 * 2.0 + 700 * 8.0) / 1e6;
    CHECK(r.cost_usd > want - 1e-12 && r.cost_usd < want + 1e-12, "ok: cost %g want %g", r.cost_usd, want);
    CHECK(r.attempts == 1 && r.http_status == 200, "ok: attempts %d status %d", r.attempts, r.http_status);
    CHECK(strcmp(r.finish_reason, "stop") == 0, "ok: finish '%s'", r.finish_reason);
    CHECK(r.latency_s > 0 && r.latency_s < 5, "ok: latency %g", r.latency_s);
    CHECK(log && strstr(log, "\"model\": \"fake-coder\""), "ok: model not in the request: %s", log ? log : "(no log)");
    CHECK(log && strstr(log, "\"max_tokens\": 2048"), "ok: max_tokens not in the request");
    CHECK(log && strstr(log, "\"temperature\": 0.2"), "ok: temperature not in the request");
    CHECK(log && strstr(log, "\"role\": \"system\", \"content\": \"You write CUDA kernels.\""),
          "ok: messages not in the request: %s", log ? log : "(no log)");
    CHECK(log && strstr(log, "\"path\": \"/v1/chat/completions\""), "ok: path");
    free(log);
    dkb_model_reply_free(&r);
}

static void test_ok_without_usage(void) {
    dkb_model_opts o = test_opts("SERVER");
    dkb_model_reply r;
    dkb_error e = {0};
    char *log;
    int rc = chat_script("[{\"content\": \"0123456789abcdef\", \"usage\": null, \"finish_reason\": \"length\"}]",
                         &o, &r, &e, &log);
    CHECK(rc == 0, "no usage: rc %d: %s", rc, e.msg);
    CHECK(r.tokens_out == 4, "no usage: tokens_out %lld (16 bytes / 4)", (long long)r.tokens_out);
    CHECK(r.tokens_in > 0, "no usage: tokens_in %lld", (long long)r.tokens_in);
    CHECK(strcmp(r.finish_reason, "length") == 0, "no usage: finish '%s'", r.finish_reason);
    CHECK(r.cost_usd == 0, "no usage: cost %g without prices", r.cost_usd);
    CHECK(log && !strstr(log, "max_tokens") && !strstr(log, "temperature"),
          "defaults: max_tokens/temperature sent: %s", log ? log : "(no log)");
    free(log);
    dkb_model_reply_free(&r);
}

static void test_429_then_ok(void) {
    dkb_model_opts o = test_opts("SERVER");
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"status\": 429, \"retry_after\": 1}, {\"content\": \"done\"}]", &o, &r, &e, NULL);
    CHECK(rc == 0, "429: rc %d: %s", rc, e.msg);
    CHECK(r.attempts == 2 && r.http_status == 200, "429: attempts %d status %d", r.attempts, r.http_status);
    CHECK(r.latency_s >= 0.95 && r.latency_s < 4, "429: Retry-After 1 s not honoured: latency %g", r.latency_s);
    CHECK(r.text && strcmp(r.text, "done") == 0, "429: text");
    dkb_model_reply_free(&r);
}

static void test_500_twice_then_ok(void) {
    dkb_model_opts o = test_opts("SERVER");
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"status\": 500}, {\"status\": 503}, {\"content\": \"third\"}]", &o, &r, &e, NULL);
    CHECK(rc == 0, "500x2: rc %d: %s", rc, e.msg);
    CHECK(r.attempts == 3, "500x2: attempts %d", r.attempts);
    CHECK(r.latency_s < 2, "500x2: latency %g with a 0.01 s base", r.latency_s);
    dkb_model_reply_free(&r);
}

static void test_500_forever(void) {
    dkb_model_opts o = test_opts("SERVER");
    o.max_retries = 2;
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"status\": 500, \"message\": \"overloaded\\nreally\"}]", &o, &r, &e, NULL);
    CHECK_ERR(rc, DKB_EIO, e, "HTTP 500");
    CHECK(strstr(e.msg, "overloaded really") && strstr(e.msg, "3 attempts"), "500: message '%s'", e.msg);
    CHECK(one_line(e.msg), "500: message not one line: '%s'", e.msg);
    CHECK(r.attempts == 3 && r.http_status == 500, "500: attempts %d status %d", r.attempts, r.http_status);
    CHECK(r.text && r.text[0] == '\0', "500: text not empty");
    CHECK(strcmp(r.finish_reason, "error") == 0, "500: finish '%s'", r.finish_reason);
    dkb_model_reply_free(&r);
}

static void test_400_not_retried(void) {
    dkb_model_opts o = test_opts("SERVER");
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"status\": 400, \"message\": \"bad model\"}, {\"content\": \"no\"}]", &o, &r, &e, NULL);
    CHECK_ERR(rc, DKB_EIO, e, "HTTP 400: bad model");
    CHECK(r.attempts == 1, "400: attempts %d (no retry on 4xx)", r.attempts);
    dkb_model_reply_free(&r);
}

static void test_hang(const char *how) {
    char script[128];
    snprintf(script, sizeof script, "[{\"hang\": %s, \"hang_s\": 30}]", how);
    dkb_model_opts o = test_opts("SERVER");
    o.timeout_s = 1.5;
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script(script, &o, &r, &e, NULL);
    CHECK_ERR(rc, DKB_EIO, e, "timed out");
    CHECK(strcmp(r.finish_reason, "timeout") == 0, "hang %s: finish '%s'", how, r.finish_reason);
    CHECK(r.attempts == 1, "hang %s: attempts %d (a timeout is not retried)", how, r.attempts);
    CHECK(r.latency_s >= 1.4 && r.latency_s < 1.5 + 2, "hang %s: latency %g for timeout 1.5", how, r.latency_s);
    dkb_model_reply_free(&r);
}

static void test_truncated(void) {
    dkb_model_opts o = test_opts("SERVER");
    o.max_retries = 1;
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"content\": \"some code\", \"truncate\": 40}]", &o, &r, &e, NULL);
    CHECK(rc == DKB_EIO, "truncated: rc %s: %s", dkb_err_name(rc), e.msg);
    CHECK(r.attempts == 2, "truncated: attempts %d (a cut reply is retried)", r.attempts);
    CHECK(one_line(e.msg) && strstr(e.msg, "127.0.0.1"), "truncated: message '%s'", e.msg);
    dkb_model_reply_free(&r);
    rc = chat_script("[{\"content\": \"x\", \"truncate\": 40}, {\"content\": \"whole\"}]", &o, &r, &e, NULL);
    CHECK(rc == 0 && r.attempts == 2 && strcmp(r.text, "whole") == 0, "truncated then ok: rc %d attempts %d: %s",
          rc, r.attempts, e.msg);
    dkb_model_reply_free(&r);
}

static void test_huge(int64_t bytes, int64_t max) {
    char script[128];
    snprintf(script, sizeof script, "[{\"huge_bytes\": %lld}]", (long long)bytes);
    dkb_model_opts o = test_opts("SERVER");
    o.max_reply_bytes = max;
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script(script, &o, &r, &e, NULL);
    CHECK(rc == 0, "huge %lld: rc %d: %s", (long long)bytes, rc, e.msg);
    CHECK(r.text && (int64_t)strlen(r.text) == max, "huge %lld: %zu bytes kept, want %lld", (long long)bytes,
          r.text ? strlen(r.text) : 0, (long long)max);
    CHECK(strcmp(r.finish_reason, "truncated") == 0, "huge: finish '%s'", r.finish_reason);
    CHECK(r.text && strncmp(r.text, "xxxxxxxx", 8) == 0 && r.text[79] == '\n', "huge: content garbled");
    dkb_model_reply_free(&r);
}

static void test_not_json(void) {
    dkb_model_opts o = test_opts("SERVER");
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"raw\": \"<html>gateway\\n</html>\"}]", &o, &r, &e, NULL);
    CHECK_ERR(rc, DKB_EPARSE, e, "not JSON");
    CHECK(one_line(e.msg), "not json: message not one line: '%s'", e.msg);
    dkb_model_reply_free(&r);
    rc = chat_script("[{\"raw\": \"{\\\"choices\\\": []}\"}]", &o, &r, &e, NULL);
    CHECK_ERR(rc, DKB_EPARSE, e, "no choices[0]");
    dkb_model_reply_free(&r);
}

static void test_no_server(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd); /* a port nobody listens on */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/", ntohs(a.sin_port));
    dkb_model_opts o = test_opts(url);
    o.max_retries = 1;
    dkb_model *m = NULL;
    dkb_error e = {0};
    CHECK(dkb_model_open(&o, &m, &e) == 0, "open: %s", e.msg);
    dkb_model_reply r;
    int rc = dkb_model_chat(m, conv, 2, &r, &e);
    CHECK_ERR(rc, DKB_EIO, e, "failed");
    CHECK(strstr(e.msg, "/v1/chat/completions") && !strstr(e.msg, "//chat"), "closed port: url in '%s'", e.msg);
    CHECK(r.attempts == 2 && r.http_status == 0, "closed port: attempts %d status %d", r.attempts, r.http_status);
    dkb_model_reply_free(&r);
    dkb_model_close(m);
}

static void test_retry_cap(void) {
    dkb_model_opts o = test_opts("SERVER");
    o.retry_max_wait_s = 1;
    dkb_model_reply r;
    dkb_error e = {0};
    int rc = chat_script("[{\"status\": 429, \"retry_after\": 30}]", &o, &r, &e, NULL);
    CHECK_ERR(rc, DKB_EIO, e, "retry wait cap");
    CHECK(r.attempts == 1 && r.latency_s < 3, "retry cap: attempts %d latency %g", r.attempts, r.latency_s);
    dkb_model_reply_free(&r);
}

typedef struct thread_arg {
    dkb_model *m;
    int rc;
    char text[32];
} thread_arg;

static void *chat_thread(void *p) {
    thread_arg *t = p;
    dkb_model_reply r;
    dkb_error e = {0};
    t->rc = dkb_model_chat(t->m, conv, 2, &r, &e);
    snprintf(t->text, sizeof t->text, "%s", r.text ? r.text : "");
    dkb_model_reply_free(&r);
    return NULL;
}

static void test_threads(void) {
    fake_server s;
    if (fake_server_start(&s, "[{\"content\": \"same\", \"delay_s\": 0.2}]")) {
        failures++;
        return;
    }
    dkb_model_opts o = test_opts(s.url);
    dkb_model *m = NULL;
    dkb_error e = {0};
    CHECK(dkb_model_open(&o, &m, &e) == 0, "open: %s", e.msg);
    enum { N = 4 };
    pthread_t th[N];
    thread_arg args[N];
    for (int i = 0; i < N; i++) {
        args[i] = (thread_arg){.m = m};
        pthread_create(&th[i], NULL, chat_thread, &args[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].rc == 0 && strcmp(args[i].text, "same") == 0, "thread %d: rc %d text '%s'", i, args[i].rc,
              args[i].text);
    }
    dkb_model_close(m);
    fake_server_stop(&s);
}

/* The key: sent (the log says a Bearer header was present), but in no log
 * line, no error message (even when the server echoes it), no file. */
static void test_key(void) {
    setenv(KEY_ENV, KEY, 1);
    dkb_model_opts o = test_opts("SERVER");
    o.max_retries = 0;
    dkb_model_reply r;
    dkb_error e = {0};
    char *log;
    int rc = chat_script("[{\"status\": 401, \"message\": \"Incorrect API key provided: " KEY ".\"}]", &o, &r, &e,
                         &log);
    CHECK_ERR(rc, DKB_EIO, e, "HTTP 401: Incorrect API key provided: [REDACTED]");
    CHECK(!strstr(e.msg, KEY) && !strstr(e.msg, "sk-dkbtest"), "key: in the error message '%s'", e.msg);
    CHECK(log && strstr(log, "\"authorization\": \"present\"") && strstr(log, "\"authorization_scheme\": \"Bearer\""),
          "key: no Bearer header was sent: %s", log ? log : "(no log)");
    CHECK(log && !strstr(log, "7f3a9c1e5b20d4"), "key: written to the server's log");
    free(log);
    dkb_model_reply_free(&r);

    o = test_opts("SERVER");
    rc = chat_script("[{\"content\": \"fine\"}]", &o, &r, &e, &log);
    CHECK(rc == 0 && log && !strstr(log, "7f3a9c1e5b20d4"), "key: rc %d, or the key in the log", rc);
    free(log);
    dkb_model_reply_free(&r);

    unsetenv(KEY_ENV);
    o = test_opts("SERVER");
    rc = chat_script("[{\"content\": \"fine\"}]", &o, &r, &e, &log);
    CHECK(rc == 0 && log && strstr(log, "\"authorization\": \"absent\""), "no key: rc %d, header sent anyway: %s",
          rc, log ? log : "");
    free(log);
    dkb_model_reply_free(&r);
}

static void test_bad_args(void) {
    dkb_model *m = NULL;
    dkb_error e = {0};
    dkb_model_opts o;
    dkb_model_opts_init(&o);
    CHECK_ERR(dkb_model_open(&o, &m, &e), DKB_EINVAL, e, "no model name");
    CHECK(m == NULL);
    o.model = "x";
    o.timeout_s = -1;
    CHECK_ERR(dkb_model_open(&o, &m, &e), DKB_EINVAL, e, "negative option");
    o.timeout_s = 1;
    CHECK(dkb_model_open(&o, &m, &e) == 0, "open: %s", e.msg);
    dkb_model_reply r;
    CHECK_ERR(dkb_model_chat(m, conv, 0, &r, &e), DKB_EINVAL, e, "0 messages");
    CHECK(r.text && r.text[0] == '\0');
    dkb_model_reply_free(&r);
    dkb_model_msg bad = {"user", NULL};
    CHECK_ERR(dkb_model_chat(m, &bad, 1, &r, &e), DKB_EINVAL, e, "message 0");
    dkb_model_reply_free(&r);
    dkb_model_close(m);
    dkb_model_close(NULL);
    dkb_model_reply_free(NULL);
}

int main(void) {
#ifndef DKB_HAVE_CURL
    printf("test_model_client: skipped: this build has no libcurl (the HTTP backend reports so)\n");
    return 77;
#endif
    unsetenv("http_proxy"), unsetenv("HTTP_PROXY"), unsetenv("all_proxy"), unsetenv("ALL_PROXY");
    unsetenv(KEY_ENV);
    test_bad_args();
    test_ok_with_usage();
    test_ok_without_usage();
    test_429_then_ok();
    test_500_twice_then_ok();
    test_500_forever();
    test_400_not_retried();
    test_hang("true");
    test_hang("\"dribble\"");
    test_truncated();
    test_huge(300000, 100000);
    test_huge(3000000, 65536); /* past the body cap: the content's start is salvaged */
    test_not_json();
    test_no_server();
    test_retry_cap();
    test_threads();
    test_key();
    if (failures) fprintf(stderr, "test_model_client: %d failures\n", failures);
    return failures != 0;
}
