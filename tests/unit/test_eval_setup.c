/* test_eval_setup.c: the steps before an evaluation runs anything: finding
 * candidate files (good names, near misses, directories, CUDA files, an
 * empty or missing directory), --queries lists, the random seeds (0 first,
 * distinct, nonzero, below 2^31, different between draws), the machine;
 * and dkb__eval_run's refusals before any worker starts (bad options, a
 * missing store or candidate directory, a results path that is a file). */
#include <sys/stat.h>

#include "common/fsutil.h"
#include "harness/eval.h"
#include "test_result_util.h"

static void touch(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs("int x;\n", f);
    fclose(f);
}

static void test_scan(const char *base) {
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/cands", base);
    mkdir(dir, 0777);
    dkb_eval_results res;
    memset(&res, 0, sizeof res);
    uint32_t found[2];
    dkb_error err = {0};
    /* empty */
    CHECK(dkb__eval_scan(dir, found, &res, &err) == 0);
    CHECK(found[0] == 0 && found[1] == 0 && res.nignored == 0);

    const char *good[] = {"q01.full.c", "q06.full.c", "q06.core.c", "q22.core.c"};
    for (size_t i = 0; i < 4; i++) touch(dir, good[i]);
    const char *bad[] = {"q6.full.c", "q23.full.c", "q00.core.c", "q06.fast.c", "q06.full.cu", "helper.c", "Q06.full.c"};
    for (size_t i = 0; i < 7; i++) touch(dir, bad[i]);
    touch(dir, "README.md");      /* not a candidate-looking name: silently skipped */
    touch(dir, ".hidden.c");
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/q07.full.c", dir);   /* a directory with a candidate's name */
    mkdir(sub, 0777);
    CHECK(dkb__eval_scan(dir, found, &res, &err) == 0);
    CHECK(found[DKB_MODE_FULL] == ((1u << 1) | (1u << 6)));
    CHECK(found[DKB_MODE_CORE] == ((1u << 6) | (1u << 22)));
    CHECK(res.nignored == 8);
    const char *want[] = {"Q06.full.c", "helper.c", "q00.core.c", "q06.fast.c", "q06.full.cu", "q07.full.c",
                          "q23.full.c", "q6.full.c"};
    for (int i = 0; i < 8 && i < res.nignored; i++) CHECK_STR(res.ignored[i], want[i]);
    dkb__eval_results_free(&res);

    snprintf(sub, sizeof sub, "%s/none", base);
    CHECK_ERR(dkb__eval_scan(sub, found, &res, &err), DKB_ENOENT, err, "none: cannot open the candidate directory");
    dkb__eval_results_free(&res);
}

static void test_queries(void) {
    uint32_t m;
    dkb_error err = {0};
    CHECK(dkb__eval_parse_queries("all", &m, &err) == 0 && m == 0x7ffffeu);
    CHECK(dkb__eval_parse_queries("q01,6,Q14", &m, &err) == 0 && m == ((1u << 1) | (1u << 6) | (1u << 14)));
    CHECK(dkb__eval_parse_queries("q06,q06", &m, &err) == 0 && m == (1u << 6));
    CHECK_ERR(dkb__eval_parse_queries("q01,q23", &m, &err), DKB_EINVAL, err, "--queries: unknown query 'q23'");
    CHECK_ERR(dkb__eval_parse_queries("lineitem", &m, &err), DKB_EINVAL, err, "unknown query 'lineitem'");
    CHECK_ERR(dkb__eval_parse_queries(",", &m, &err), DKB_EINVAL, err, "--queries: no query named");
    CHECK_ERR(dkb__eval_parse_queries("", &m, &err), DKB_EINVAL, err, "--queries: no query named");
}

static void test_seeds(void) {
    uint64_t a[DKB_EVAL_MAX_SEEDS + 1], b[DKB_EVAL_MAX_SEEDS + 1];
    dkb_error err = {0};
    CHECK(dkb__eval_draw_seeds(a, 0, &err) == 0 && a[0] == 0);
    CHECK(dkb__eval_draw_seeds(a, DKB_EVAL_MAX_SEEDS, &err) == 0);
    CHECK(a[0] == 0);
    for (int i = 1; i <= DKB_EVAL_MAX_SEEDS; i++) {
        CHECK(a[i] > 0 && a[i] < (1ull << 31));
        for (int k = 1; k < i; k++) CHECK(a[k] != a[i]);
    }
    CHECK(dkb__eval_draw_seeds(b, 5, &err) == 0);
    /* two draws of 5 out of 2^31 agree only by accident (p ~ 2^-155) */
    CHECK(memcmp(a + 1, b + 1, 5 * sizeof a[0]) != 0);
}

static void test_machine(void) {
    char cpu[256];
    int cores = 0;
    dkb__eval_machine(cpu, sizeof cpu, &cores);
    CHECK(cores >= 1);
    CHECK(cpu[0] != '\0' && !strchr(cpu, '\n'));
}

/* dkb__eval_run must fail with code and a message containing want */
static void eval_fails(const dkb_eval_opts *o, int code, const char *want) {
    dkb_eval_results res;
    dkb_error err = {0};
    CHECK_ERR(dkb__eval_run(o, NULL, &res, &err), code, err, want);
    dkb__eval_results_free(&res);
}

static void test_run_refusals(const char *base) {
    char cands[2048], file[2048], store[2048], out[2048];
    snprintf(cands, sizeof cands, "%s/cands", base);
    snprintf(file, sizeof file, "%s/afile", base);
    snprintf(store, sizeof store, "%s/nostore", base);
    snprintf(out, sizeof out, "%s/out", base);
    touch(base, "afile");
    dkb_eval_opts o = {.dir = cands, .store = store, .out = out, .nseeds = 5, .threshold = 1, .timeout_s = 10,
                       .min_runs = 1};
    eval_fails(&o, DKB_ENOENT, "nostore/manifest.json");
    o.threshold = 0;
    eval_fails(&o, DKB_EINVAL, "--threshold 0: expected a positive number");
    o.threshold = 1, o.nseeds = DKB_EVAL_MAX_SEEDS + 1;
    eval_fails(&o, DKB_EINVAL, "--seeds 1001: expected 0 to 1000");
    o.nseeds = 5, o.timeout_s = 0;
    eval_fails(&o, DKB_EINVAL, "--timeout 0");
    o.timeout_s = 10, o.backend = "gpu";
    eval_fails(&o, DKB_EINVAL, "--backend gpu: expected cpu or cuda");
    o.backend = NULL, o.queries = "q99";
    eval_fails(&o, DKB_EINVAL, "unknown query 'q99'");
    o.queries = NULL, o.dir = file;
    eval_fails(&o, DKB_EIO, "afile: cannot open the candidate directory");
    o.dir = NULL;
    eval_fails(&o, DKB_EINVAL, "are required");
    dkb_eval_results res;
    dkb_error err = {0};
    CHECK_ERR(dkb__eval_run(NULL, NULL, &res, &err), DKB_EINVAL, err, "no options");
    dkb__eval_results_free(&res);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    char base[1024];
    snprintf(base, sizeof base, "%s/dkb-eval-setup-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 2;
    }
    test_scan(base);
    test_queries();
    test_seeds();
    test_machine();
    test_run_refusals(base);
    dkb__rm_rf(base);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_eval_setup: ok\n");
    return 0;
}
