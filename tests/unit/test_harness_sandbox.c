/* test_harness_sandbox.c: dkb__sandbox_run classifies how a child ended:
 * shell one-liners and a small compiled helper that hangs, crash, exit with
 * and without a report, forge reports, hog memory, flood stdout; plus fd
 * hygiene, process-group cleanup, the text sanitizer and signal names. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>

#include "test_harness_util.h"

static dkb_limits lim(double timeout_s, uint64_t mem, uint64_t out) {
    dkb_limits l = {.timeout_s = timeout_s, .mem_bytes = mem, .output_bytes = out};
    return l;
}

/* Run `sh -c script` under l; r is filled (free it). */
static void run_sh(const char *script, const dkb_limits *l, dkb_sandbox_result *r) {
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)script, NULL};
    dkb_error err = {0};
    int rc = dkb__sandbox_run(argv, l, r, &err);
    CHECK(rc == 0, "sandbox_run(%s): %s", script, err.msg);
}

/* A report line with the nonce read from fd 4, verdict v. */
#define REPORT(v) "read n <&4; printf '{\"nonce\":\"%s\",\"verdict\":\"" v "\",\"detail\":\"d\"}\\n' \"$n\" >&3"

static void test_ok_report(void) {
    dkb_limits l = lim(10, 0, 0);
    dkb_sandbox_result r;
    run_sh("echo hello; " REPORT("ok"), &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OK, "verdict %s: %s", dkb__verdict_name(r.verdict), r.detail);
    CHECK(r.report && strstr(r.report, "\"verdict\":\"ok\""), "report %s", r.report ? r.report : "(null)");
    CHECK(r.exit_code == 0 && r.signal == 0, "exit %d signal %d", r.exit_code, r.signal);
    CHECK(r.output_tail && !strcmp(r.output_tail, "hello\n"), "tail [%s]", r.output_tail ? r.output_tail : "");
    CHECK(r.output_size == 6, "output size %llu", (unsigned long long)r.output_size);
    dkb__sandbox_result_free(&r);

    /* the environment names the fds and limits */
    l = lim(10, 1234567890, 678);
    run_sh("test \"$DKB_REPORT_FD\" = 3 && test \"$DKB_NONCE_FD\" = 4 && test \"$DKB_MEM_LIMIT\" = 1234567890 && "
           "test \"$DKB_OUTPUT_LIMIT\" = 678 && " REPORT("ok"),
           &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OK, "env: verdict %s: %s", dkb__verdict_name(r.verdict), r.detail);
    dkb__sandbox_result_free(&r);
}

static void test_timeout(void) {
    dkb_limits l = lim(0.5, 0, 0);
    dkb_sandbox_result r;
    run_sh("sleep 100", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_TIMEOUT, "verdict %s", dkb__verdict_name(r.verdict));
    CHECK(r.seconds >= 0.5 && r.seconds < 5, "seconds %.2f", r.seconds);
    CHECK(r.signal == SIGKILL, "signal %d", r.signal);
    dkb__sandbox_result_free(&r);

    /* a busy loop too, and a child that ignores SIGTERM */
    run_sh("trap '' TERM; while :; do :; done", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_TIMEOUT, "busy: verdict %s", dkb__verdict_name(r.verdict));
    dkb__sandbox_result_free(&r);
}

static void test_crash(void) {
    dkb_limits l = lim(10, 0, 0);
    dkb_sandbox_result r;
    run_sh("kill -SEGV $$", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_CRASH, "verdict %s", dkb__verdict_name(r.verdict));
    CHECK(r.signal == SIGSEGV && strstr(r.detail, "SIGSEGV"), "signal %d detail %s", r.signal, r.detail);
    CHECK(r.report == NULL, "no report expected");
    dkb__sandbox_result_free(&r);

    run_sh("kill -ABRT $$", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_CRASH && strstr(r.detail, "SIGABRT"), "abort: %s %s", dkb__verdict_name(r.verdict),
          r.detail);
    dkb__sandbox_result_free(&r);

    /* a fault handler's report names the crash; wrote_input is its own class */
    run_sh(REPORT("crash") "; kill -SEGV $$", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_CRASH && !strcmp(r.detail, "d"), "crash report: %s [%s]",
          dkb__verdict_name(r.verdict), r.detail);
    dkb__sandbox_result_free(&r);
    run_sh(REPORT("wrote_input") "; kill -SEGV $$", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_WROTE_INPUT, "wrote_input report: %s", dkb__verdict_name(r.verdict));
    dkb__sandbox_result_free(&r);
}

static void test_exit(void) {
    dkb_limits l = lim(10, 0, 0);
    dkb_sandbox_result r;
    run_sh("exit 0", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_EXITED && r.exit_code == 0, "verdict %s exit %d", dkb__verdict_name(r.verdict),
          r.exit_code);
    dkb__sandbox_result_free(&r);
    run_sh("exit 3", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_EXITED && r.exit_code == 3 && strstr(r.detail, "status 3"), "verdict %s exit %d %s",
          dkb__verdict_name(r.verdict), r.exit_code, r.detail);
    dkb__sandbox_result_free(&r);

    /* a report without the nonce, or with another one, is not a report */
    run_sh("printf '{\"verdict\":\"ok\"}\\n' >&3; printf '{\"nonce\":\"00\",\"verdict\":\"ok\"}\\n' >&3; exit 0", &l, &r);
    CHECK(r.verdict == DKB_VERDICT_EXITED && r.report == NULL, "forged: verdict %s", dkb__verdict_name(r.verdict));
    dkb__sandbox_result_free(&r);
    /* forged lines before and a partial line right before the real report:
     * the last line with the nonce counts */
    run_sh("printf '{\"verdict\":\"ok\",\"nonce\":\"x\"}\\n{\"verdict\":' >&3; printf '\\n' >&3; " REPORT("wrong_answer"),
           &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OK && r.report && strstr(r.report, "wrong_answer"), "real after forged: %s %s",
          dkb__verdict_name(r.verdict), r.report ? r.report : "(null)");
    dkb__sandbox_result_free(&r);
    /* a program that cannot be run */
    char *argv[] = {(char *)"/nonexistent/program", NULL};
    dkb_error err = {0};
    int rc = dkb__sandbox_run(argv, &l, &r, &err);
    CHECK(rc == 0 && r.verdict == DKB_VERDICT_EXITED && r.exit_code == 127, "nonexistent: rc %d verdict %s exit %d", rc,
          dkb__verdict_name(r.verdict), r.exit_code);
    dkb__sandbox_result_free(&r);
}

static void test_output(void) {
    dkb_limits l = lim(10, 0, 100000);
    dkb_sandbox_result r;
    run_sh("head -c 3000000 /dev/zero | tr '\\0' x; " REPORT("ok"), &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OUTPUT_LIMIT, "verdict %s", dkb__verdict_name(r.verdict));
    CHECK(r.output_tail && strlen(r.output_tail) <= 4096, "tail kept short");
    dkb__sandbox_result_free(&r);
    /* within the limit: fine */
    run_sh("head -c 50000 /dev/zero | tr '\\0' x; " REPORT("ok"), &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OK && r.output_size == 50000, "verdict %s size %llu", dkb__verdict_name(r.verdict),
          (unsigned long long)r.output_size);
    dkb__sandbox_result_free(&r);
    /* binary garbage comes back as printable text */
    run_sh("printf 'a\\001\\377\\303\\251b'; " REPORT("ok"), &l, &r);
    CHECK(r.output_tail && !strcmp(r.output_tail, "a??\xc3\xa9" "b"), "sanitized tail [%s]", r.output_tail);
    dkb__sandbox_result_free(&r);
    /* output to a named file */
    char *dir = make_tmpdir("sbx"), *path = join(dir, "out.txt");
    l.output_path = path;
    run_sh("echo to-file; " REPORT("ok"), &l, &r);
    FILE *f = fopen(path, "r");
    char buf[64] = "";
    CHECK(f && fgets(buf, sizeof buf, f) && !strcmp(buf, "to-file\n"), "output file holds [%s]", buf);
    if (f) fclose(f);
    dkb__sandbox_result_free(&r);
    rm_tree(dir);
    free(path);
    free(dir);
}

/* A helper that touches `mb` MiB and then sleeps. */
static const char *HOG_C = "#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
                           "int main(int c, char **v) { size_t n = (size_t)atoi(v[1]) << 20; char *p = malloc(n);\n"
                           "  if (!p) return 9; memset(p, 1, n); sleep(30); return p[n / 2]; }\n";

static void test_memory(const char *dir) {
    char *src = join(dir, "hog.c"), *exe = join(dir, "hog"), cmd[8192];
    write_text(src, HOG_C);
    snprintf(cmd, sizeof cmd, "cc -O1 -o '%s' '%s'", exe, src);
    /* the harness needs a compiler anyway: failing to build the hog is a failure */
    int built = system(cmd) == 0;
    CHECK(built, "cannot compile the memory hog: %s", cmd);
    if (!built) {
        free(src), free(exe);
        return;
    }
    dkb_limits l = lim(20, (uint64_t)64 << 20, 0);
    dkb_sandbox_result r;
    char *argv[] = {exe, (char *)"400", NULL};
    dkb_error err = {0};
    CHECK(dkb__sandbox_run(argv, &l, &r, &err) == 0, "%s", err.msg);
    CHECK(r.verdict == DKB_VERDICT_OUT_OF_MEMORY, "verdict %s (%s)", dkb__verdict_name(r.verdict), r.detail);
    CHECK(r.peak_rss > ((uint64_t)64 << 20) && r.seconds < 15, "peak %llu seconds %.2f", (unsigned long long)r.peak_rss,
          r.seconds);
    dkb__sandbox_result_free(&r);
    /* the address-space backstop: the allocation fails, the helper exits 9 */
    l = lim(20, 0, 0);
    l.as_bytes = (uint64_t)200 << 20;
    CHECK(dkb__sandbox_run(argv, &l, &r, &err) == 0, "%s", err.msg);
    CHECK(r.verdict == DKB_VERDICT_EXITED && r.exit_code == 9, "as limit: verdict %s exit %d",
          dkb__verdict_name(r.verdict), r.exit_code);
    dkb__sandbox_result_free(&r);
    free(src), free(exe);
}

/* fds the parent holds (without close-on-exec) do not reach the child; the
 * child's whole process group dies with it. */
static void test_hygiene(const char *dir) {
    int fd = open("/dev/null", O_RDONLY);
    int high = fd >= 0 ? dup2(fd, 9) : -1;
    CHECK(high == 9, "dup2");
    dkb_limits l = lim(10, 0, 0);
    dkb_sandbox_result r;
    run_sh("test -e /proc/self/fd/9 && exit 5; " REPORT("ok"), &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OK, "fd 9 leaked into the child: %s exit %d", dkb__verdict_name(r.verdict),
          r.exit_code);
    dkb__sandbox_result_free(&r);
    if (fd >= 0) close(fd);
    close(9);

    /* a background grandchild: killed with the group when the child ends */
    char *pidfile = join(dir, "bg.pid"), script[8192];
    snprintf(script, sizeof script, "sleep 60 & echo $! > '%s'; ", pidfile);
    strcat(script, REPORT("ok"));
    run_sh(script, &l, &r);
    CHECK(r.verdict == DKB_VERDICT_OK && r.seconds < 30, "background: %s %.1f s", dkb__verdict_name(r.verdict), r.seconds);
    dkb__sandbox_result_free(&r);
    FILE *f = fopen(pidfile, "r");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1) pid = 0;
        fclose(f);
    }
    CHECK(pid > 0, "no pid file");
    int alive = 0;
    for (int i = 0; i < 100 && pid > 0; i++) {
        char path[64], stat[512] = "";
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *s = fopen(path, "r");
        alive = 0;
        if (s) {
            if (fgets(stat, sizeof stat, s)) {
                const char *close_paren = strrchr(stat, ')');
                alive = close_paren && close_paren[2] != 'Z' && close_paren[2] != 'X';
            }
            fclose(s);
        }
        if (!alive) break;
        usleep(20000);
    }
    CHECK(!alive, "the background sleep %d outlived the sandbox", pid);
    free(pidfile);
}

static void test_bad_args(void) {
    dkb_limits l = lim(0, 0, 0);
    dkb_sandbox_result r;
    char *argv[] = {(char *)"/bin/true", NULL};
    dkb_error err = {0};
    CHECK(dkb__sandbox_run(argv, &l, &r, &err) == DKB_EINVAL, "timeout 0 accepted");
    dkb__sandbox_result_free(&r);
}

static void test_text(void) {
    char a[] = "ok\ttext\n";
    dkb__text_sanitize(a, strlen(a));
    CHECK(!strcmp(a, "ok\ttext\n"), "[%s]", a);
    char b[] = "\x01\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82";
    dkb__text_sanitize(b, strlen(b));
    CHECK(!strcmp(b, "??\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|??|???|????|??"), "[%s]", b);
    char buf[16];
    CHECK(!strcmp(dkb__signal_name(SIGSEGV, buf, sizeof buf), "SIGSEGV"), "SIGSEGV");
    CHECK(!strcmp(dkb__signal_name(77, buf, sizeof buf), "signal 77"), "signal 77");
}

int main(void) {
    char *dir = make_tmpdir("sandbox");
    test_text();
    test_bad_args();
    test_ok_report();
    test_timeout();
    test_crash();
    test_exit();
    test_output();
    test_memory(dir);
    test_hygiene(dir);
    rm_tree(dir);
    free(dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_sandbox: ok\n");
    return failures != 0;
}
