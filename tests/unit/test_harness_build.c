/* test_harness_build.c: the import allow-list (names), the symbol check of
 * small shared objects compiled here (allowed imports; pthread_create;
 * a TensorPlan symbol; a missing entry point), and dkb__build_candidate:
 * a clean build, a compile error with its log, an include outside the
 * allowed headers, the source hash, thread-local storage. */
#include <dlfcn.h>
#include <link.h>
#include <math.h>

#include "test_harness_util.h"

static void test_names(void) {
    static const char *const yes[] = {
        "memcpy", "memcpy@GLIBC_2.14", "strlen", "qsort", "__wrap_malloc", "__wrap_free", "printf", "fwrite", "stdout", "abort",
        "exit", "sqrt", "sqrtf", "expl", "powf64", "__exp_finite", "__log10f_finite", "lround", "GOMP_parallel",
        "GOMP_barrier", "omp_get_thread_num", "omp_get_num_threads", "omp_set_num_threads", "omp_init_lock",
        "__stack_chk_fail", "__cxa_finalize", "__gmon_start__", "_ITM_registerTMCloneTable", "__memcpy_chk",
        "__printf_chk", "__divti3", "__isoc99_sscanf", "__ctype_b_loc", "strtoll", "__isoc23_strtol",
        "__overflow", "__udivti3", "__modti3", "__umodti3", "memchr", "memcmp", "strncmp", "__wrap_calloc", "memset",
        "__wrap_aligned_alloc", "__wrap_posix_memalign", "__wrap_strdup", "malloc_usable_size", "__overflow@GLIBC_2.2.5", "__floattixf", "__fixxfti",
    };
    static const char *const no[] = {
        "pthread_create", "fork", "execve", "system", "popen", "dlopen", "dlsym", "open", "fopen", "read", "mmap",
        "socket", "signal", "sigaction", "setjmp", "clock_gettime", "gettimeofday", "time", "getenv", "sysconf",
        "dkb_tp_compress", "dkb_query_run", "__tls_get_addr", "omp_set_schedule", "omp_set_num_teams",
        "omp_get_wtime", "syscall", "mprotect", "atexit", "__cxa_atexit", "__memcpy", "sqrtx", "", "fdopen",
        "__open_chk", "__read_chk", "__uflow", "__kmpc_set_defaults",
        /* the heap only through the worker's wraps (heap_interpose.h) */
        "malloc", "free", "calloc", "realloc", "aligned_alloc", "posix_memalign", "strdup", "strndup",
        "__wrap_fopen", "__wrap_", "__wrap_mmap",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECK(dkb__symbol_allowed(yes[i]), "%s should be allowed", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK(!dkb__symbol_allowed(no[i]), "%s should not be allowed", no[i]);
    CHECK(!dkb__symbol_allowed(NULL), "NULL");
}

/* Compile text as dir/name.c into dir/name.so; check it with entry. */
static dkb_verdict check_so(const char *dir, const char *name, const char *text, const char *extra, const char *entry,
                            char *detail, size_t n) {
    char file[256];
    snprintf(file, sizeof file, "%s.c", name);
    char *src = join(dir, file);
    snprintf(file, sizeof file, "%s.so", name);
    char *so = join(dir, file);
    write_text(src, text);
    dkb_verdict v = DKB_VERDICT_HARNESS_ERROR;
    if (cc_shared(src, so, extra) != 0) {
        CHECK(0, "cannot compile %s", name);
    } else {
        dkb_error err = {0};
        int rc = dkb__symbols_check(so, entry, &v, detail, n, &err);
        CHECK(rc == 0, "%s: %s", name, err.msg);
    }
    free(src);
    free(so);
    return v;
}

static void test_symbols(const char *dir) {
    char detail[512];
    dkb_verdict v = check_so(dir, "good",
                             "#include <math.h>\n#include <string.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                             "int dkb_candidate_full(void *a, void *b, void *c, void *d) {\n"
                             "  char buf[64]; memcpy(buf, a, 8); double x = sqrt((double)buf[0]);\n"
                             "  char *p = malloc(16); free(p); if (x < 0) abort(); printf(\"%g\\n\", x);\n"
                             "  (void)b, (void)c, (void)d; return (int)strlen(buf);\n}\n",
                             "-fopenmp -lm -Wl,--wrap=malloc,--wrap=free", "dkb_candidate_full", detail,
                             sizeof detail);
    CHECK(v == DKB_VERDICT_OK, "good: %s %s", dkb__verdict_name(v), detail);

    /* around the wrap: __real_malloc imports malloc itself */
    v = check_so(dir, "real_malloc",
                 "#include <stddef.h>\nvoid *__real_malloc(size_t);\n"
                 "int dkb_candidate_full(void *a, void *b, void *c, void *d) {\n"
                 "  (void)a, (void)b, (void)c, (void)d; return __real_malloc(16) == NULL;\n}\n",
                 "-Wl,--wrap=malloc", "dkb_candidate_full", detail, sizeof detail);
    CHECK(v == DKB_VERDICT_FORBIDDEN_SYMBOL && strstr(detail, "malloc"), "real_malloc: %s %s", dkb__verdict_name(v),
          detail);

    v = check_so(dir, "omp",
                 "#include <omp.h>\nint dkb_candidate_core(void *a, void *b, void *c) {\n  int s = 0;\n"
                 "#pragma omp parallel for reduction(+:s)\n  for (int i = 0; i < 100; i++) s += omp_get_thread_num();\n"
                 "  (void)a, (void)b, (void)c; return s < 0;\n}\n",
                 "-fopenmp", "dkb_candidate_core", detail, sizeof detail);
    CHECK(v == DKB_VERDICT_OK, "omp: %s %s", dkb__verdict_name(v), detail);

    v = check_so(dir, "thread",
                 "#include <pthread.h>\nstatic void *run(void *p) { return p; }\n"
                 "int dkb_candidate_core(void *a, void *b, void *c) {\n  pthread_t t;\n"
                 "  (void)b, (void)c; return pthread_create(&t, 0, run, a);\n}\n",
                 "-pthread", "dkb_candidate_core", detail, sizeof detail);
    CHECK(v == DKB_VERDICT_FORBIDDEN_SYMBOL && strstr(detail, "pthread_create"), "thread: %s %s",
          dkb__verdict_name(v), detail);

    v = check_so(dir, "tp",
                 "void *dkb_tp_compress(void *, const void *, const void *);\n"
                 "int dkb_candidate_core(void *a, void *b, void *c) { return dkb_tp_compress(a, b, c) != 0; }\n",
                 NULL, "dkb_candidate_core", detail, sizeof detail);
    CHECK(v == DKB_VERDICT_FORBIDDEN_SYMBOL && strstr(detail, "dkb_tp_compress"), "tp: %s %s", dkb__verdict_name(v),
          detail);

    /* several forbidden names are all listed, each once */
    v = check_so(dir, "many",
                 "#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n"
                 "int dkb_candidate_full(void *a, void *b, void *c, void *d) {\n"
                 "  FILE *f = fopen(\"/etc/passwd\", \"r\"); struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);\n"
                 "  FILE *g = fopen(\"/x\", \"r\"); (void)a, (void)b, (void)c, (void)d;\n"
                 "  return system(\"true\") + (f != 0) + (g != 0) + (int)ts.tv_sec;\n}\n",
                 "-D_GNU_SOURCE", "dkb_candidate_full", detail, sizeof detail);
    CHECK(v == DKB_VERDICT_FORBIDDEN_SYMBOL && strstr(detail, "fopen") && strstr(detail, "system") &&
              strstr(detail, "clock_gettime"),
          "many: %s %s", dkb__verdict_name(v), detail);
    const char *first = strstr(detail, "fopen");
    CHECK(first && !strstr(first + 1, "fopen"), "fopen listed twice: %s", detail);

    v = check_so(dir, "noentry", "int dkb_candidate_fullx(void) { return 0; }\n", NULL, "dkb_candidate_full", detail,
                 sizeof detail);
    CHECK(v == DKB_VERDICT_BAD_ENTRY && strstr(detail, "dkb_candidate_full"), "noentry: %s %s", dkb__verdict_name(v),
          detail);
    /* the other mode's entry is not this mode's */
    v = check_so(dir, "othermode", "int dkb_candidate_core(void *a, void *b, void *c) { return a == b && b == c; }\n",
                 NULL, "dkb_candidate_full", detail, sizeof detail);
    CHECK(v == DKB_VERDICT_BAD_ENTRY, "othermode: %s", dkb__verdict_name(v));

    /* nm on something that is not an object: an error, not a verdict */
    char *bogus = join(dir, "bogus.so");
    write_text(bogus, "not an ELF file\n");
    dkb_error err = {0};
    CHECK(dkb__symbols_check(bogus, "dkb_candidate_full", &v, detail, sizeof detail, &err) != 0, "bogus accepted");
    free(bogus);
}

/* Build text as dir/src/name (a candidate file); b filled (free it). */
static int build(const char *dir, const char *name, const char *text, dkb_mode mode, dkb_build *b) {
    char *srcdir = join(dir, "src"), *scratch = join(dir, "scratch");
    mkdir(srcdir, 0755);
    mkdir(scratch, 0755);
    char *src = join(srcdir, name);
    write_text(src, text);
    dkb_error err = {0};
    int rc = dkb__build_candidate(src, mode, scratch, b, &err);
    CHECK(rc == 0, "build %s: %s", name, err.msg);
    free(src);
    free(srcdir);
    free(scratch);
    return rc;
}

static const char *GOOD_FULL =
    "#include \"dkb/candidate.h\"\n"
    "int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,\n"
    "                       const dkb_cand_env *env) {\n"
    "    (void)db, (void)p, (void)env;\n"
    "    res->nrows = 0;\n"
    "    return 0;\n"
    "}\n";

static void test_build(const char *dir) {
    dkb_build b;
    build(dir, "q06.full.c", GOOD_FULL, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_OK, "good: %s %s [%s]", dkb__verdict_name(b.verdict), b.detail, b.log ? b.log : "");
    CHECK(access(b.so_path, R_OK) == 0 && strstr(b.so_path, "q06.full.so"), "so %s", b.so_path);
    CHECK(strlen(b.hash) == 64, "hash %s", b.hash);
    CHECK(b.log && b.compile_s > 0, "log and time");
    char *scratch_hdr = join(dir, "scratch/include/dkb/candidate.h");
    CHECK(access(scratch_hdr, R_OK) == 0, "candidate.h copied into the scratch include directory");
    free(scratch_hdr);
    /* the hash is sha256sum's */
    char cmd[8192], want[65] = "";
    snprintf(cmd, sizeof cmd, "sha256sum '%s/src/q06.full.c'", dir);
    FILE *p = popen(cmd, "r");
    if (p) {
        if (!fgets(want, sizeof want, p)) want[0] = 0;
        pclose(p);
    }
    CHECK(!strcmp(want, b.hash), "hash %s, sha256sum %s", b.hash, want);
    char first[65];
    memcpy(first, b.hash, sizeof first);
    dkb__build_free(&b);
    /* the wrong mode: no entry */
    build(dir, "q06.core.c", GOOD_FULL, DKB_MODE_CORE, &b);
    CHECK(b.verdict == DKB_VERDICT_BAD_ENTRY, "wrong mode: %s", dkb__verdict_name(b.verdict));
    CHECK(!strcmp(first, b.hash), "same text, same hash");
    dkb__build_free(&b);

    /* the optional toolkit: copied beside candidate.h, and includable */
    build(dir, "q06.full.c",
          "#include \"dkb/cand_util.h\"\n"
          "int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,\n"
          "                       const dkb_cand_env *env) {\n"
          "  (void)db, (void)p, (void)env; return (int)dkb_add_months(0, 1) == 31 ? dkb_res_rows(res, 0) : 1;\n}\n",
          DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_OK, "toolkit: %s %s [%s]", dkb__verdict_name(b.verdict), b.detail, b.log ? b.log : "");
    dkb__build_free(&b);
    scratch_hdr = join(dir, "scratch/include/dkb/cand_util.h");
    CHECK(access(scratch_hdr, R_OK) == 0, "cand_util.h copied into the scratch include directory");
    free(scratch_hdr);

    /* a compile error: its diagnostics in the log */
    build(dir, "q01.full.c", "#include \"dkb/candidate.h\"\nint dkb_candidate_full(void) { return undeclared_x; }\n",
          DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR, "compile error: %s", dkb__verdict_name(b.verdict));
    CHECK(b.log && strstr(b.log, "undeclared_x"), "log: [%s]", b.log ? b.log : "");
    dkb__build_free(&b);

    /* many errors: the log is trimmed */
    char big[65536] = "";
    for (int i = 0; i < 300; i++) {
        char line[128];
        snprintf(line, sizeof line, "int f%d(void) { return nope%d; }\n", i, i);
        strcat(big, line);
    }
    build(dir, "q02.full.c", big, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR, "big: %s", dkb__verdict_name(b.verdict));
    int lines = 0;
    for (const char *c = b.log; c && *c; c++) lines += *c == '\n';
    CHECK(b.log && lines <= 62 && strlen(b.log) <= 8300 && strstr(b.log, "more line"), "trimmed: %d lines, %zu bytes",
          lines, b.log ? strlen(b.log) : 0);
    dkb__build_free(&b);

    /* including one of our other headers (or any file outside the system's) */
    char text[8192];
    const char *hdr = getenv("DKB_CANDIDATE_H");
    char other[4096];
    snprintf(other, sizeof other, "%s", hdr ? hdr : "");
    char *slash = strrchr(other, '/');
    if (slash) strcpy(slash, "/error.h"); /* includes only <stdarg.h> */
    if (hdr && access(other, R_OK) == 0) {
        snprintf(text, sizeof text, "#include \"%s\"\n%s", other, GOOD_FULL);
        build(dir, "q03.full.c", text, DKB_MODE_FULL, &b);
        CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR && strstr(b.detail, "error.h"), "include: %s %s",
              dkb__verdict_name(b.verdict), b.detail);
        CHECK(access(b.so_path, F_OK) != 0, "the object of a refused build is removed");
        dkb__build_free(&b);
    }
    char *helper = join(dir, "helper.h");
    write_text(helper, "#define HELPER 1\n");
    snprintf(text, sizeof text, "#include \"%s\"\n%s", helper, GOOD_FULL);
    build(dir, "q04.full.c", text, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR && strstr(b.detail, "helper.h"), "helper include: %s %s",
          dkb__verdict_name(b.verdict), b.detail);
    dkb__build_free(&b);
    free(helper);
    /* system headers are fine */
    snprintf(text, sizeof text, "#include <stdlib.h>\n#include <math.h>\n#include <omp.h>\n%s", GOOD_FULL);
    build(dir, "q05.full.c", text, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_OK, "system headers: %s %s", dkb__verdict_name(b.verdict), b.detail);
    dkb__build_free(&b);

    /* a file outside the allowed headers: refused, and its contents (quoted
     * by the preprocessor's warnings) stay out of the log */
    char *secret = join(dir, "secret.txt");
    write_text(secret, "SECRET-TOKEN 'unterminated\n");
    snprintf(text, sizeof text, "#include \"%s\"\n%s", secret, GOOD_FULL);
    build(dir, "q08.full.c", text, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR && strstr(b.detail, "secret.txt"), "secret: %s %s",
          dkb__verdict_name(b.verdict), b.detail);
    CHECK(b.log && !strstr(b.log, "SECRET"), "the log quotes the file: [%s]", b.log ? b.log : "");
    dkb__build_free(&b);
    /* ... also when preprocessing fails: only the source's own message lines */
    snprintf(text, sizeof text, "#include \"%s\"\n#error stop here\n", secret);
    build(dir, "q08.full.c", text, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR && b.log && strstr(b.log, "stop here") && !strstr(b.log, "SECRET"),
          "secret with #error: %s [%s]", dkb__verdict_name(b.verdict), b.log ? b.log : "");
    dkb__build_free(&b);
    free(secret);
    /* a missing header: the message line about the source is kept */
    build(dir, "q09.full.c", "#include \"/nonexistent/dir/x.h\"\nint x;\n", DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR && b.log && strstr(b.log, "x.h"), "missing header: %s [%s]",
          dkb__verdict_name(b.verdict), b.log ? b.log : "");
    dkb__build_free(&b);

    /* inline assembly, in a function or at file scope, or through a macro:
     * refused; the word in a string or inside an identifier is fine */
    static const char *const asms[] = {
        "static long f(long x) { long r; __asm__ volatile(\"mov %1, %0\" : \"=r\"(r) : \"r\"(x)); return r; }\n",
        "__asm__(\".section .rodata\\n.incbin \\\"/etc/hostname\\\"\\n.previous\");\n",
        "#define A __asm__\nstatic void g(void) { A volatile(\"nop\"); }\n",
        "#define S(x) x\nstatic void h(void) { S(__asm)(\"nop\"); }\n",
    };
    for (size_t i = 0; i < sizeof asms / sizeof asms[0]; i++) {
        snprintf(text, sizeof text, "%s%s", asms[i], GOOD_FULL);
        build(dir, "q10.full.c", text, DKB_MODE_FULL, &b);
        CHECK(b.verdict == DKB_VERDICT_COMPILE_ERROR && strstr(b.detail, "inline assembly"), "asm %zu: %s %s", i,
              dkb__verdict_name(b.verdict), b.detail);
        dkb__build_free(&b);
    }
    snprintf(text, sizeof text, "static const char *w = \"asm __asm__\"; static int asm_count, my__asm;\n"
                                "int *dkb_candidate_peek(void) { __asm__ volatile(\"\" ::: \"memory\");\n"
                                "  __asm (\"\" : \"+r\"(w)); return w ? &asm_count : &my__asm; }\n%s",
             GOOD_FULL);
    build(dir, "q11.full.c", text, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_OK, "asm as a word: %s %s [%s]", dkb__verdict_name(b.verdict), b.detail,
          b.log ? b.log : "");
    dkb__build_free(&b);

    /* thread-local storage needs __tls_get_addr: refused */
    snprintf(text, sizeof text, "static _Thread_local int cache;\nint *dkb_candidate_peek(void) { return &cache; }\n%s",
             GOOD_FULL);
    build(dir, "q07.full.c", text, DKB_MODE_FULL, &b);
    CHECK(b.verdict == DKB_VERDICT_FORBIDDEN_SYMBOL && strstr(b.detail, "__tls_get_addr"), "tls: %s %s",
          dkb__verdict_name(b.verdict), b.detail);
    dkb__build_free(&b);

    /* a missing source is an error of the harness's caller */
    dkb_error err = {0};
    char *scratch = join(dir, "scratch");
    CHECK(dkb__build_candidate("/nonexistent/q06.full.c", DKB_MODE_FULL, scratch, &b, &err) != 0, "missing source");
    dkb__build_free(&b);
    /* a compiler that does not exist */
    setenv("DKB_CC", "/nonexistent/cc", 1);
    char *src = join(dir, "src/q06.full.c");
    CHECK(dkb__build_candidate(src, DKB_MODE_FULL, scratch, &b, &err) != 0 && strstr(err.msg, "compiler"),
          "bad DKB_CC: %s", err.msg);
    unsetenv("DKB_CC");
    dkb__build_free(&b);
    free(src);
    free(scratch);
}

/* Every data object (not function) of the C library, libm and libgcc_s
 * that the allow-list lets a candidate import is one the worker restores
 * before every call (dkb__symbol_data_objects): read from `nm -D` of the
 * libraries this test has loaded, so a new allowed name that is writable
 * data cannot slip past the restore list. */
/* The loaded C library and libm (their paths; at most 4). */
static int lib_paths(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    char(*paths)[512] = data;
    const char *n = info->dlpi_name;
    if (n && (strstr(n, "/libc.so") || strstr(n, "/libm.so")))
        for (int i = 0; i < 4; i++)
            if (!paths[i][0]) {
                snprintf(paths[i], sizeof paths[i], "%s", n);
                break;
            }
    return 0;
}

static void test_data_objects(void) {
    size_t n = 0;
    const char *const *restored = dkb__symbol_data_objects(&n);
    double (*volatile libm_fn)(double) = sqrt; /* a reference: libm stays loaded */
    volatile double keep = libm_fn(2.0);
    (void)keep;
    char paths[4][512] = {{0}};
    dl_iterate_phdr(lib_paths, paths);
    int objects = 0;
    for (int l = 0; l < 4 && paths[l][0]; l++) {
        char cmd[2200];
        snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s' 2>/dev/null", paths[l]);
        FILE *f = popen(cmd, "r");
        CHECK(f != NULL, "popen %s", cmd);
        if (!f) continue;
        char line[1024];
        while (fgets(line, sizeof line, f)) {
            char type = 0, name[512];
            if (sscanf(line, "%*s %c %511s", &type, name) != 2) continue;
            if (!strchr("BDVGS", type)) continue; /* data: bss, data, weak object, small data */
            name[strcspn(name, "@")] = 0;
            if (!dkb__symbol_allowed(name)) continue;
            objects++;
            int found = 0;
            for (size_t i = 0; i < n && !found; i++) found = !strcmp(restored[i], name);
            CHECK(found, "%s (%s) is allowed data the worker does not restore", name, paths[l]);
        }
        pclose(f);
    }
    CHECK(objects >= 3, "only %d allowed data objects found in the C library and libm (nm -D of %s, %s)", objects,
          paths[0], paths[1]);
}

int main(void) {
    set_candidate_header();
    char *dir = make_tmpdir("build");
    test_names();
    test_data_objects();
    test_symbols(dir);
    test_build(dir);
    rm_tree(dir);
    free(dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_build: ok\n");
    return failures != 0;
}
