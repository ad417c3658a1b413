/* test_harness_worker.c: the worker end to end, through the sandbox: small
 * candidates (written here, built with dkb__build_candidate) run by `dkb
 * __worker` on a generated store, one per verdict the worker or the sandbox
 * gives: ok (both modes, timings and floor present), wrong answers, writes
 * to the store, to prepared inputs and to descriptors, crash, exit, a
 * returned error, too many output rows, an uninitialised output, state in
 * statics (restored) and in the freed heap (perturbed), a forged report,
 * a counter kept in C library state and on the stack (restored: ok), an
 * answer that depends on the output poison (nondeterministic), extra threads,
 * thread-local storage, timeout, memory, output flood, implausible speed,
 * system calls past the allow-list (the worker's filter), and a
 * baseline-only job. Needs the dkb binary ($DKB or ../dkb). */
#include <math.h>

#include "harness/protocol.h"
#include "test_harness_util.h"

static const char *dkb_exe;
static char *store, *tmp;
static int counter;

/* Q6 in full mode; BODY_FULL's hooks: PRE runs first, ADJ changes the sum. */
#define Q6_FULL(PRE, ADJ)                                                                                    \
    "#include \"dkb/candidate.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"                               \
    "static int64_t plus_year(int64_t z) {\n"                                                                \
    "  z += 719468; int64_t era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;\n"            \
    "  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;\n"                             \
    "  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;\n"                 \
    "  int d = (int)(doy - (153 * mp + 2) / 5 + 1), m = (int)(mp < 10 ? mp + 3 : mp - 9);\n"                \
    "  int64_t y = yoe + era * 400 + (m <= 2) + 1;\n"                                                      \
    "  if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) d = 28;\n"                 \
    "  y -= m <= 2; int64_t e2 = (y >= 0 ? y : y - 399) / 400, ye = y - e2 * 400;\n"                        \
    "  int64_t dy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;\n"                                    \
    "  return e2 * 146097 + ye * 365 + ye / 4 - ye / 100 + dy - 719468;\n}\n"                               \
    "int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,\n"       \
    "                       const dkb_cand_env *env) {\n"                                                  \
    "  (void)env;\n" PRE "\n"                                                                              \
    "  const dkb_cand_vec *s = dkb_cand_column(db, \"lineitem\", \"l_shipdate\");\n"                       \
    "  const dkb_cand_vec *d = dkb_cand_column(db, \"lineitem\", \"l_discount\");\n"                       \
    "  const dkb_cand_vec *q = dkb_cand_column(db, \"lineitem\", \"l_quantity\");\n"                       \
    "  const dkb_cand_vec *e = dkb_cand_column(db, \"lineitem\", \"l_extendedprice\");\n"                  \
    "  int64_t lo = dkb_cand_param_find(p, \"date\")->i, hi = plus_year(lo);\n"                           \
    "  int64_t disc = dkb_cand_param_find(p, \"discount\")->i, qty = dkb_cand_param_find(p, \"quantity\")->i * 100;\n" \
    "  const int32_t *sv = s->data; const int64_t *dv = d->data, *qv = q->data, *ev = e->data;\n"          \
    "  __int128 sum = 0; int64_t hits = 0;\n"                                                              \
    "  for (int64_t i = 0; i < s->n; i++)\n"                                                               \
    "    if (sv[i] >= lo && sv[i] < hi && dv[i] >= disc - 1 && dv[i] <= disc + 1 && qv[i] < qty)\n"         \
    "      sum += (__int128)ev[i] * dv[i], hits++;\n"                                                       \
    "  " ADJ "\n"                                                                                          \
    "  for (int k = 4; k < res->cols[0].scale; k++) sum *= 10;\n"                                          \
    "  res->nrows = 1; res->cols[0].dec[0] = sum; res->cols[0].is_null[0] = hits == 0;\n"                  \
    "  return 0;\n}\n"

/* Q6 in core mode; PRE runs first, OUT writes the output (sum, hits known). */
#define Q6_CORE(PRE, OUT)                                                                                   \
    "#include \"dkb/candidate.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"                               \
    "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"       \
    "  (void)env;\n" PRE "\n"                                                                              \
    "  const dkb_cand_vec *s = dkb_cand_vec_find(in, \"l_shipdate\"), *d = dkb_cand_vec_find(in, \"l_discount\");\n" \
    "  const dkb_cand_vec *q = dkb_cand_vec_find(in, \"l_quantity\"), *e = dkb_cand_vec_find(in, \"l_extendedprice\");\n" \
    "  int64_t slo = dkb_cand_scalar_find(in, \"ship_lo\")->i, shi = dkb_cand_scalar_find(in, \"ship_hi\")->i;\n" \
    "  int64_t dlo = dkb_cand_scalar_find(in, \"disc_lo\")->i, dhi = dkb_cand_scalar_find(in, \"disc_hi\")->i;\n" \
    "  int64_t qlt = dkb_cand_scalar_find(in, \"qty_lt\")->i;\n"                                           \
    "  const int32_t *sv = s->data; const int64_t *dv = d->data, *qv = q->data, *ev = e->data;\n"          \
    "  __int128 sum = 0; int64_t hits = 0;\n"                                                              \
    "  for (int64_t i = 0; i < s->n; i++)\n"                                                               \
    "    if (sv[i] >= slo && sv[i] <= shi && dv[i] >= dlo && dv[i] <= dhi && qv[i] < qlt)\n"               \
    "      sum += (__int128)ev[i] * dv[i], hits++;\n"                                                       \
    "  dkb_cand_vec *r = dkb_cand_vec_find(out, \"revenue\");\n"                                           \
    "  " OUT "\n"                                                                                          \
    "  return 0;\n}\n"

#define CORE_OUT_OK "r->n = hits > 0; if (hits) ((__int128 *)r->data)[0] = sum;"

typedef struct outcome {
    dkb_report rep;
    dkb_sandbox_result sr;
    dkb_verdict verdict;
} outcome;

/* Build text as qNN.<mode>.c and run a job for it (seeds 0, 1, 2). */
static void run_candidate(const char *text, dkb_mode mode, const dkb_limits *lim, double floor_slack, outcome *o) {
    char name[64], sub[64];
    snprintf(sub, sizeof sub, "c%d", counter++);
    char *dir = join(tmp, sub);
    mkdir(dir, 0755);
    snprintf(name, sizeof name, "q06.%s.c", mode == DKB_MODE_CORE ? "core" : "full");
    char *src = join(dir, name);
    write_text(src, text);
    dkb_build b;
    dkb_error err = {0};
    memset(o, 0, sizeof *o);
    dkb__report_init(&o->rep);
    o->verdict = DKB_VERDICT_HARNESS_ERROR;
    if (dkb__build_candidate(src, mode, dir, &b, &err)) {
        CHECK(0, "build %s: %s", sub, err.msg);
    } else if (b.verdict != DKB_VERDICT_OK) {
        o->verdict = b.verdict;
        snprintf(o->rep.detail, sizeof o->rep.detail, "%s", b.detail);
    } else {
        dkb_job job;
        dkb__job_init(&job);
        job.store = store;
        job.query = (char *)"q06";
        job.mode = mode == DKB_MODE_CORE ? DKB_JOB_CORE : DKB_JOB_FULL;
        job.so = b.so_path;
        job.nseeds = 3;
        job.seeds[0] = 0, job.seeds[1] = 1, job.seeds[2] = 2;
        job.threads = 2;
        job.warmup = 1;
        job.min_runs = 3;
        job.min_seconds = 0.05;
        if (floor_slack > 0) job.floor_slack = floor_slack;
        dkb__report_free(&o->rep);
        int rc = dkb__run_job(&job, dkb_exe, dir, lim, &o->rep, &o->sr, &err);
        CHECK(rc == 0, "run_job %s: %s", sub, err.msg);
        o->verdict = o->rep.verdict;
    }
    dkb__build_free(&b);
    free(src);
    free(dir);
}

static void done(outcome *o) {
    dkb__report_free(&o->rep);
    dkb__sandbox_result_free(&o->sr);
}

static dkb_limits limits(void) {
    dkb_limits l = {.timeout_s = 60, .mem_bytes = (uint64_t)2 << 30, .output_bytes = 1 << 20};
    return l;
}

/* Expect verdict v (and detail containing want, when given). */
static void expect(const char *what, const char *text, dkb_mode mode, dkb_verdict v, const char *want) {
    dkb_limits l = limits();
    outcome o;
    run_candidate(text, mode, &l, 0, &o);
    CHECK(o.verdict == v, "%s: %s (%s), expected %s; output: %s", what, dkb__verdict_name(o.verdict), o.rep.detail,
          dkb__verdict_name(v), o.sr.output_tail ? o.sr.output_tail : "");
    if (want) CHECK(strstr(o.rep.detail, want) != NULL, "%s: detail [%s] lacks [%s]", what, o.rep.detail, want);
    done(&o);
}

static void test_ok(void) {
    dkb_limits l = limits();
    outcome o;
    for (int m = 0; m < 2; m++) {
        dkb_mode mode = m ? DKB_MODE_CORE : DKB_MODE_FULL;
        run_candidate(m ? Q6_CORE("", CORE_OUT_OK) : Q6_FULL("", ""), mode, &l, 0, &o);
        CHECK(o.verdict == DKB_VERDICT_OK, "honest %s: %s %s", m ? "core" : "full", dkb__verdict_name(o.verdict),
              o.rep.detail);
        CHECK(o.rep.nchecks == 3 && o.rep.checks[0].ok && o.rep.checks[1].seed == 1 && o.rep.checks[2].ok, "checks");
        CHECK(o.rep.baseline.runs >= 3 && o.rep.candidate.runs >= 3 && o.rep.baseline.median > 0 &&
                  o.rep.candidate.min <= o.rep.candidate.median && o.rep.candidate.median <= o.rep.candidate.max,
              "timings %d %d", o.rep.baseline.runs, o.rep.candidate.runs);
        CHECK(o.rep.bytes_read == 60175.0 * 28 || o.rep.bytes_read > 0, "bytes_read %g", o.rep.bytes_read);
        CHECK(isfinite(o.rep.bandwidth_gbs) && o.rep.bandwidth_gbs > 0 && isfinite(o.rep.floor_ms) && o.rep.floor_ms > 0,
              "floor %g ms at %g GB/s", o.rep.floor_ms, o.rep.bandwidth_gbs);
        CHECK(o.rep.threads == 2 && o.rep.nonce[0], "threads %d nonce [%s]", o.rep.threads, o.rep.nonce);
        done(&o);
    }
    /* implausibly fast: the same candidate against a floor made huge */
    run_candidate(Q6_FULL("", ""), DKB_MODE_FULL, &l, 1e5, &o);
    CHECK(o.verdict == DKB_VERDICT_IMPLAUSIBLE && strstr(o.rep.detail, "floor"), "implausible: %s %s",
          dkb__verdict_name(o.verdict), o.rep.detail);
    CHECK(o.rep.candidate.runs >= 3, "implausible keeps its timing");
    done(&o);
}

static void test_answers(void) {
    expect("wrong full", Q6_FULL("", "sum += 1;"), DKB_MODE_FULL, DKB_VERDICT_WRONG_ANSWER, "seed 0: row 1, column revenue");
    expect("wrong for seed 2", Q6_FULL("", "if (dkb_cand_param_find(p, \"date\")->i != 8766) sum += 1;"),
           DKB_MODE_FULL, DKB_VERDICT_WRONG_ANSWER, "seed 1");
    expect("wrong core", Q6_CORE("", "r->n = 1; ((__int128 *)r->data)[0] = sum * 2;"), DKB_MODE_CORE,
           DKB_VERDICT_WRONG_ANSWER, "revenue");
    /* accumulates into the poisoned output */
    expect("uninitialised core", Q6_CORE("", "r->n = 1; ((__int128 *)r->data)[0] += sum;"), DKB_MODE_CORE,
           DKB_VERDICT_WRONG_ANSWER, NULL);
    expect("nrows unset", Q6_FULL("", "res->nrows = -5; return 0;"), DKB_MODE_FULL, DKB_VERDICT_WRONG_ANSWER, "nrows");
    expect("too many rows", Q6_FULL("", "res->nrows = res->cap + 1; return 0;"), DKB_MODE_FULL, DKB_VERDICT_OUTPUT_LIMIT,
           "cap");
    expect("too many elements", Q6_CORE("", "r->n = r->cap + 1;"), DKB_MODE_CORE, DKB_VERDICT_OUTPUT_LIMIT, "cap");
    expect("error", Q6_FULL("return 3;", ""), DKB_MODE_FULL, DKB_VERDICT_RETURNED_ERROR, "returned 3");
}

static void test_faults(void) {
    expect("write the store", Q6_FULL("((int64_t *)dkb_cand_column(db, \"lineitem\", \"l_tax\")->data)[5] = 0;", ""),
           DKB_MODE_FULL, DKB_VERDICT_WROTE_INPUT, "lineitem/l_tax");
    expect("write a descriptor", Q6_FULL("((dkb_cand_table *)db->tables)[0].rows = 0;", ""), DKB_MODE_FULL,
           DKB_VERDICT_WROTE_INPUT, "descriptors");
    expect("write a parameter", Q6_FULL("((dkb_cand_param *)p->p)[0].i = 0;", ""), DKB_MODE_FULL,
           DKB_VERDICT_WROTE_INPUT, NULL);
    expect("write a prepared input", Q6_CORE("((int64_t *)dkb_cand_vec_find(in, \"l_discount\")->data)[0] = 0;", CORE_OUT_OK),
           DKB_MODE_CORE, DKB_VERDICT_WROTE_INPUT, "l_discount");
    expect("write a scalar", Q6_CORE("((dkb_cand_scalar *)in->scalar)[0].i = 0;", CORE_OUT_OK), DKB_MODE_CORE,
           DKB_VERDICT_WROTE_INPUT, "input");
    expect("write from an OpenMP thread",
           Q6_CORE("volatile int64_t *x = (int64_t *)dkb_cand_vec_find(in, \"l_quantity\")->data;\n"
                   "#pragma omp parallel num_threads(2)\n  { x[1] = 1; }",
                   CORE_OUT_OK),
           DKB_MODE_CORE, DKB_VERDICT_WROTE_INPUT, "l_quantity");
    expect("null pointer", Q6_FULL("volatile int *volatile z = 0; z[3] = 1;", ""), DKB_MODE_FULL, DKB_VERDICT_CRASH,
           "SIGSEGV at address 0xc during the candidate call");
    expect("abort", Q6_CORE("abort();", CORE_OUT_OK), DKB_MODE_CORE, DKB_VERDICT_CRASH, "SIGABRT");
    expect("exit", Q6_FULL("exit(0);", ""), DKB_MODE_FULL, DKB_VERDICT_EXITED, "status 0");
    expect("exit 7", Q6_CORE("exit(7);", CORE_OUT_OK), DKB_MODE_CORE, DKB_VERDICT_EXITED, "status 7");
}

static void test_state(void) {
    /* a static counter: restored before every call, so the answer holds */
    expect("static state", Q6_FULL("static int calls; if (calls++ > 0) return 9;", ""), DKB_MODE_FULL, DKB_VERDICT_OK,
           NULL);
    expect("static state core", Q6_CORE("static __int128 cache; static int have;", "if (have) sum = cache; cache = sum; have = 1; " CORE_OUT_OK),
           DKB_MODE_CORE, DKB_VERDICT_OK, NULL);
    /* freed blocks are overwritten and fresh ones hold garbage (malloc
     * perturbation), so a note left in a freed block is gone next call */
    expect("perturbed heap",
           Q6_FULL("unsigned char *blk = malloc(64); if (!blk) return 1; int fresh = blk[10];\n"
                   "  blk[10] = 42; free(blk); if (fresh == 42) return 8;",
                   ""),
           DKB_MODE_FULL, DKB_VERDICT_OK, NULL);
    /* a block left allocated (never freed) is released after the call: the
     * next call finds its note neither in a fresh block nor next to one.
     * The candidate reads next to its block, which AddressSanitizer's
     * allocator (not glibc's) may leave unmapped: glibc builds only. */
#ifdef __SANITIZE_ADDRESS__
    printf("skip: leaked heap (the candidate's neighbour reads need glibc's allocator, not ASan's)\n");
#else
    expect("leaked heap",
           Q6_FULL("static const char note[16] = \"dkb-leaked-note\";\n"
                   "  unsigned char *blk = malloc(100); if (!blk) return 1; int seen = 0;\n"
                   "  for (unsigned char *p = blk - 4096; p < blk + 4096; p += 16) seen |= !memcmp(p, note, 16);\n"
                   "  memcpy(blk, note, 16); if (seen) return 8;",
                   ""),
           DKB_MODE_FULL, DKB_VERDICT_OK, NULL);
#endif
    /* a counter kept where the worker now restores things (spare bytes of
     * stdout's FILE, a deep stack slot, the stdout variable's neighbour
     * signgam): every call starts from the same state, so the counter
     * never moves and the answers stay right */
    expect("no counter survives",
           Q6_CORE("unsigned char *u = (unsigned char *)stdout->_unused2; int calls = u[0] == 0x5c ? u[1] : 0;\n"
                   "  u[0] = 0x5c; u[1] = (unsigned char)(calls < 200 ? calls + 1 : 200);\n"
                   "  extern int signgam; calls += signgam; signgam = 1;\n"
                   "  volatile unsigned char deep[1 << 16]; calls += deep[0] == 0x77; deep[0] = 0x77;",
                   "r->n = 1; ((__int128 *)r->data)[0] = sum + (calls > 0);"),
           DKB_MODE_CORE, DKB_VERDICT_OK, NULL);
    /* stateless but not a function of its inputs alone: it reads its output
     * buffer before writing it and is off when it finds the second check's
     * poison (the first check and the timing fill with DKB_POISON) */
    expect("nondeterministic",
           Q6_CORE("", "int second = ((unsigned char *)r->data)[0] == 0x5a;\n"
                       "  r->n = 1; ((__int128 *)r->data)[0] = sum + second;"),
           DKB_MODE_CORE, DKB_VERDICT_NONDETERMINISTIC, "second run differs");
    /* a forged report through stdout's FILE on every fd: the worker's own counts */
    expect("forged report",
           Q6_FULL("int fd0 = stdout->_fileno;\n"
                   "  for (int fd = 3; fd < 64; fd++) { stdout->_fileno = fd;\n"
                   "    fputs(\"{\\\"verdict\\\":\\\"ok\\\",\\\"detail\\\":\\\"\\\"}\\n\", stdout); fflush(stdout); }\n"
                   "  stdout->_fileno = fd0;",
                   "sum += 1;"),
           DKB_MODE_FULL, DKB_VERDICT_WRONG_ANSWER, NULL);
    /* more OpenMP threads than env->threads stay behind in the pool */
    expect("left threads", Q6_CORE("int k = 0;\n#pragma omp parallel num_threads(env->threads + 3)\n  {\n#pragma omp atomic\n  k++; }\n  if (!k) return 1;", CORE_OUT_OK),
           DKB_MODE_CORE, DKB_VERDICT_LEFT_THREADS, "threads");
    /* thread-local storage in the initial-exec model imports nothing: the worker refuses the segment */
    expect("tls",
           "static __thread int tls_cache __attribute__((tls_model(\"initial-exec\")));\n" Q6_FULL("tls_cache++;", ""),
           DKB_MODE_FULL, DKB_VERDICT_FORBIDDEN_SYMBOL, "thread-local");
}

static void test_limits(void) {
    outcome o;
    dkb_limits l = limits();
    l.timeout_s = 2;
    run_candidate(Q6_FULL("for (volatile int spin = 1; spin;) {}", ""), DKB_MODE_FULL, &l, 0, &o);
    CHECK(o.verdict == DKB_VERDICT_TIMEOUT && o.sr.seconds < 10, "timeout: %s %.1f s", dkb__verdict_name(o.verdict),
          o.sr.seconds);
    done(&o);
    l = limits();
    l.mem_bytes = (uint64_t)256 << 20;
    run_candidate(Q6_CORE("for (;;) { char *m = malloc(16 << 20); if (!m) return 5; for (int i = 0; i < (16 << 20); i += 4096) m[i] = 1; }",
                          CORE_OUT_OK),
                  DKB_MODE_CORE, &l, 0, &o);
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer's allocator may die at the address-space backstop first */
    CHECK(o.verdict == DKB_VERDICT_OUT_OF_MEMORY || o.verdict == DKB_VERDICT_EXITED, "memory: %s %s",
          dkb__verdict_name(o.verdict), o.rep.detail);
#else
    CHECK(o.verdict == DKB_VERDICT_OUT_OF_MEMORY, "memory: %s %s", dkb__verdict_name(o.verdict), o.rep.detail);
#endif
    done(&o);
    l = limits();
    l.output_bytes = 100000;
    run_candidate(Q6_FULL("for (int i = 0; i < 100000; i++) printf(\"garbage %d\\n\", i);", ""), DKB_MODE_FULL, &l, 0,
                  &o);
    CHECK(o.verdict == DKB_VERDICT_OUTPUT_LIMIT, "flood: %s %s", dkb__verdict_name(o.verdict), o.rep.detail);
    done(&o);
    /* a little printing is fine */
    l = limits();
    run_candidate(Q6_FULL("printf(\"hello \\001\\377\\n\");", ""), DKB_MODE_FULL, &l, 0, &o);
    CHECK(o.verdict == DKB_VERDICT_OK && o.sr.output_tail && strstr(o.sr.output_tail, "hello ??"), "print: %s [%s]",
          dkb__verdict_name(o.verdict), o.sr.output_tail ? o.sr.output_tail : "");
    done(&o);
}

/* The worker without a candidate, and with a bad job. */
static void test_jobs(void) {
    for (int m = 0; m < 2; m++) {
        dkb_job job;
        dkb__job_init(&job);
        job.store = store;
        job.query = (char *)"q01";
        job.mode = m ? DKB_JOB_CORE : DKB_JOB_BASELINE;
        job.min_runs = 3;
        job.min_seconds = 0.05;
        char sub[64];
        snprintf(sub, sizeof sub, "b%d", m);
        char *dir = join(tmp, sub);
        mkdir(dir, 0755);
        dkb_limits l = limits();
        dkb_report rep;
        dkb_sandbox_result sr;
        dkb_error err = {0};
        CHECK(dkb__run_job(&job, dkb_exe, dir, &l, &rep, &sr, &err) == 0, "baseline job: %s", err.msg);
        CHECK(rep.verdict == DKB_VERDICT_OK && rep.baseline.runs >= 3 && rep.candidate.runs == 0 && rep.nchecks == 0,
              "baseline-only: %s %s runs %d/%d", dkb__verdict_name(rep.verdict), rep.detail, rep.baseline.runs,
              rep.candidate.runs);
        dkb__report_free(&rep);
        dkb__sandbox_result_free(&sr);
        /* a query that does not exist: the worker says harness_error */
        job.query = (char *)"q99";
        CHECK(dkb__run_job(&job, dkb_exe, dir, &l, &rep, &sr, &err) == 0, "bad job: %s", err.msg);
        CHECK(rep.verdict == DKB_VERDICT_HARNESS_ERROR && strstr(rep.detail, "q99"), "bad query: %s %s",
              dkb__verdict_name(rep.verdict), rep.detail);
        dkb__report_free(&rep);
        dkb__sandbox_result_free(&sr);
        free(dir);
    }
    /* code that reached a system call without importing it through the
     * allow-list (built here without the harness's checks, as if it had
     * found libc's functions by their addresses): the worker's system call
     * filter traps it */
    static const char *const escapes[] = {
        "#include <unistd.h>\nint e(void) { return fork() < 0; }\n",
        "#include <fcntl.h>\nint e(void) { return open(\"/tmp/dkb-escape\", O_WRONLY | O_CREAT, 0600) < 0; }\n",
        "#include <sys/mman.h>\nint e(void) { static char page[8192] __attribute__((aligned(4096)));\n"
        "  return mprotect(page, 4096, PROT_READ | PROT_EXEC); }\n",
        "#include <sys/resource.h>\nint e(void) { struct rlimit r = {1, 1}; return setrlimit(RLIMIT_AS, &r); }\n",
        "#include <signal.h>\nint e(void) { return kill(1, 0); }\n",
    };
#ifdef __SANITIZE_ADDRESS__
    const size_t nescapes = 0; /* no filter under AddressSanitizer */
#else
    const size_t nescapes = sizeof escapes / sizeof escapes[0];
#endif
    for (size_t i = 0; i < nescapes; i++) {
        char name[64];
        snprintf(name, sizeof name, "esc%zu", i);
        char *edir = join(tmp, name), *esrc = join(edir, "e.c"), *eso = join(edir, "e.so");
        mkdir(edir, 0755);
        char text[2048];
        snprintf(text, sizeof text,
                 "#define _GNU_SOURCE\n%sint dkb_candidate_full(void *db, void *p, void *res, void *env) {\n"
                 "  (void)db, (void)p, (void)res, (void)env; return e(); }\n",
                 escapes[i]);
        write_text(esrc, text);
        if (cc_shared(esrc, eso, NULL) != 0) {
            CHECK(0, "cannot compile escape %zu", i);
        } else {
            dkb_job job;
            dkb__job_init(&job);
            job.store = store;
            job.query = (char *)"q06";
            job.so = eso;
            dkb_limits l = limits();
            dkb_report rep;
            dkb_sandbox_result sr;
            dkb_error err = {0};
            CHECK(dkb__run_job(&job, dkb_exe, edir, &l, &rep, &sr, &err) == 0, "%s", err.msg);
            CHECK(rep.verdict == DKB_VERDICT_CRASH && strstr(rep.detail, "system call") &&
                      strstr(rep.detail, "candidate call"),
                  "escape %zu: %s %s", i, dkb__verdict_name(rep.verdict), rep.detail);
            dkb__report_free(&rep);
            dkb__sandbox_result_free(&sr);
        }
        free(edir), free(esrc), free(eso);
    }
    CHECK(access("/tmp/dkb-escape", F_OK) != 0, "an escaped candidate created /tmp/dkb-escape");
    unlink("/tmp/dkb-escape");

    /* a shared object without the entry, handed straight to the worker */
    char *src = join(tmp, "noentry.c"), *so = join(tmp, "noentry.so"), *dir = join(tmp, "ne");
    mkdir(dir, 0755);
    write_text(src, "int unrelated(void) { return 1; }\n");
    if (cc_shared(src, so, NULL) == 0) {
        dkb_job job;
        dkb__job_init(&job);
        job.store = store;
        job.query = (char *)"q06";
        job.so = so;
        dkb_limits l = limits();
        dkb_report rep;
        dkb_sandbox_result sr;
        dkb_error err = {0};
        CHECK(dkb__run_job(&job, dkb_exe, dir, &l, &rep, &sr, &err) == 0, "%s", err.msg);
        CHECK(rep.verdict == DKB_VERDICT_BAD_ENTRY, "no entry: %s %s", dkb__verdict_name(rep.verdict), rep.detail);
        dkb__report_free(&rep);
        dkb__sandbox_result_free(&sr);
    }
    free(src), free(so), free(dir);
}

int main(void) {
    set_candidate_header();
    dkb_exe = find_dkb();
    if (!dkb_exe) {
        fprintf(stderr, "test_harness_worker: no dkb binary (set DKB); skipped\n");
        return 77;
    }
    tmp = make_tmpdir("worker");
    store = make_store(tmp, 0.01);
    test_ok();
    test_answers();
    test_faults();
    test_state();
    test_limits();
    test_jobs();
    if (!failures) rm_tree(tmp);
    else fprintf(stderr, "work files kept in %s\n", tmp);
    free(store);
    free(tmp);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_worker: ok\n");
    return failures != 0;
}
