/* test_harness_insns.c: the machine-code check of a built candidate
 * (insns.c) over canned disassembly: a fake objdump ($DKB_OBJDUMP, a shell
 * script printing a file) so every case is exact: clean code, rdtsc,
 * rdtscp behind a prefix, rdpmc, AArch64 counter reads, names and call
 * targets that only mention rdtsc, an instruction after a line longer
 * than the reader's buffer, and objdump failing or printing nothing. Then
 * the real objdump over a real object with and without the builtin. */
#include "test_harness_util.h"

/* The verdict for a disassembly `listing` (exit status `status` of the
 * fake objdump); *rc the function's return, detail its text. */
static dkb_verdict check_listing(const char *dir, const char *listing, int status, int *rc, char *detail, size_t n) {
    char *text = join(dir, "listing.txt"), *tool = join(dir, "objdump.sh");
    FILE *f = fopen(text, "w");
    if (f) fputs(listing, f), fclose(f);
    f = fopen(tool, "w");
    if (f) fprintf(f, "#!/bin/sh\ncat '%s'\nexit %d\n", text, status), fclose(f);
    chmod(tool, 0755);
    setenv("DKB_OBJDUMP", tool, 1);
    dkb_verdict v = DKB_VERDICT_OK;
    dkb_error err = {0};
    detail[0] = 0;
    *rc = dkb__insns_check("candidate.so", &v, detail, n, &err);
    unsetenv("DKB_OBJDUMP");
    free(text);
    free(tool);
    return v;
}

static const char *HEADER = "\ncandidate.so:     file format elf64-x86-64\n\n\nDisassembly of section .text:\n\n"
                            "0000000000001139 <dkb_candidate_full>:\n";

static void test_listings(const char *dir) {
    char detail[512], buf[8192];
    int rc;
    struct {
        const char *body, *found; /* found: NULL when clean */
    } cases[] = {
        {"    1139:\tpush   %rbp\n    113a:\tmov    %rsp,%rbp\n    113d:\tret\n", NULL},
        {"    1139:\tpush   %rbp\n    113a:\trdtsc\n    113c:\tshl    $0x20,%rdx\n", "rdtsc"},
        {"    1139:\trdtscp\n", "rdtscp"},
        {"    1139:\trdpmc  \n", "rdpmc"},
        {"    1139:\tnotrack rdtsc\n", "rdtsc"},
        {"  40:\tmrs\tx0, cntvct_el0\n", "cntvct_el0"},
        {"  40:\tmrs\tx1, pmccntr_el0\n", "pmccntr_el0"},
        {"  40:\tmrs\tx0, tpidr_el0\n", NULL},
        /* only names mention it */
        {"0000000000001200 <rdtsc>:\n    1200:\tret\n    1139:\tcall   1200 <rdtsc>\n", NULL},
        {"    1139:\tlea    0x2ec4(%rip),%rdi        # 4004 <rdtsc_name>\n", NULL},
        {"    1139:\trdtscx\n", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(buf, sizeof buf, "%s%s", HEADER, cases[i].body);
        dkb_verdict v = check_listing(dir, buf, 0, &rc, detail, sizeof detail);
        CHECK(rc == 0, "case %zu: rc %d", i, rc);
        if (cases[i].found) {
            CHECK(v == DKB_VERDICT_COMPILE_ERROR && strstr(detail, cases[i].found) && strstr(detail, "clock"),
                  "case %zu: verdict %d, detail '%s'", i, (int)v, detail);
        } else {
            CHECK(v == DKB_VERDICT_OK && !detail[0], "case %zu: verdict %d, detail '%s'", i, (int)v, detail);
        }
    }

    /* an instruction after a line longer than the reader's 64 KB buffer */
    size_t big = 200000;
    char *long_listing = malloc(big + 256);
    if (long_listing) {
        size_t at = (size_t)snprintf(long_listing, 256, "%s0000000000001200 <", HEADER);
        memset(long_listing + at, 'x', big - at);
        snprintf(long_listing + big, 256, ">:\n    1200:\trdtsc\n");
        dkb_verdict v = check_listing(dir, long_listing, 0, &rc, detail, sizeof detail);
        CHECK(rc == 0 && v == DKB_VERDICT_COMPILE_ERROR && strstr(detail, "rdtsc"), "long line: rc %d verdict %d",
              rc, (int)v);
        free(long_listing);
    }

    /* objdump failing, or printing nothing: an error, not a pass */
    check_listing(dir, HEADER, 1, &rc, detail, sizeof detail);
    CHECK(rc != 0, "a failing objdump passed");
    check_listing(dir, "", 0, &rc, detail, sizeof detail);
    CHECK(rc != 0, "an empty disassembly passed");
    setenv("DKB_OBJDUMP", "/nonexistent/objdump", 1);
    dkb_verdict v = DKB_VERDICT_OK;
    dkb_error err = {0};
    rc = dkb__insns_check("candidate.so", &v, detail, sizeof detail, &err);
    unsetenv("DKB_OBJDUMP");
    CHECK(rc != 0 && strstr(err.msg, "/nonexistent/objdump"), "missing objdump: rc %d, '%s'", rc, err.msg);
}

/* The real objdump over objects compiled here (x86-64 only: the builtin). */
static void test_real(const char *dir) {
#if defined(__x86_64__)
    static const char *const clean = "long f(long x) { return x * 3; }\n";
    static const char *const tsc = "unsigned long long f(void) { return __builtin_ia32_rdtsc(); }\n";
    const char *texts[] = {clean, tsc};
    for (int i = 0; i < 2; i++) {
        char *src = join(dir, i ? "tsc.c" : "clean.c"), *so = join(dir, i ? "tsc.so" : "clean.so");
        FILE *f = fopen(src, "w");
        if (f) fputs(texts[i], f), fclose(f);
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "cc -O2 -fPIC -shared -o '%s' '%s'", so, src);
        CHECK(system(cmd) == 0, "cc failed: %s", cmd);
        dkb_verdict v = DKB_VERDICT_OK;
        dkb_error err = {0};
        char detail[512] = "";
        int rc = dkb__insns_check(so, &v, detail, sizeof detail, &err);
        CHECK(rc == 0, "objdump over %s: %s", so, err.msg);
        CHECK(i ? v == DKB_VERDICT_COMPILE_ERROR && strstr(detail, "rdtsc") : v == DKB_VERDICT_OK,
              "%s: verdict %d, '%s'", so, (int)v, detail);
        free(src);
        free(so);
    }
#else
    (void)dir;
#endif
}

int main(void) {
    char *dir = make_tmpdir("insns");
    test_listings(dir);
    test_real(dir);
    rm_tree(dir);
    free(dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_insns: ok\n");
    return failures != 0;
}
