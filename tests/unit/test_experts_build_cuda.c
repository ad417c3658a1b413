/* test_experts_build_cuda.c: the 22 CUDA expert kernels
 * (src/kernels/cuda/qNN.full.cu) pass the harness's build on a machine
 * without a GPU: each is compiled by dkb__build_candidate exactly as
 * `dkb eval --backend cuda` compiles it (nvcc flags, include and
 * inline-assembly checks, the CUDA import allow-list). This catches an
 * expert that stops compiling or starts importing what the harness refuses
 * (a host callback, managed memory, say) before a GPU run does. Their
 * answers are checked on a GPU (cli.eval_corpus_cuda, dkb bench). Exits 77
 * (skipped) when nvcc ($DKB_NVCC) is not found. */
#include "test_harness_util.h"

/* src/kernels/cuda of the source tree: $DKB_TESTDATA/../../src/kernels/cuda. */
static char *experts_dir(void) {
    const char *td = getenv("DKB_TESTDATA");
    if (!td || !*td) return NULL;
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/../../src/kernels/cuda", td);
    return p;
}

int main(void) {
    if (!have_nvcc()) {
        printf("test_experts_build_cuda: skipped: nvcc not found\n");
        return 77;
    }
    char *experts = experts_dir();
    if (!experts) {
        fprintf(stderr, "test_experts_build_cuda: DKB_TESTDATA is not set\n");
        return 1;
    }
    set_candidate_header();
    char *dir = make_tmpdir("experts-cuda");
    int built = 0;
    for (int q = 1; q <= 22; q++) {
        char name[32], sub[32];
        snprintf(name, sizeof name, "q%02d.full.cu", q);
        snprintf(sub, sizeof sub, "q%02d", q);
        char *src = join(experts, name), *scratch = join(dir, sub);
        mkdir(scratch, 0755);
        dkb_build b;
        dkb_error err = {0};
        int rc = dkb__build_candidate(src, DKB_MODE_FULL, scratch, &b, &err);
        CHECK(rc == 0, "%s: the build did not run: %s", name, err.msg);
        if (rc == 0) {
            CHECK(b.verdict == DKB_VERDICT_OK, "%s: %s (%s)\n%s", name, dkb__verdict_name(b.verdict), b.detail,
                  b.log ? b.log : "");
            built += b.verdict == DKB_VERDICT_OK;
            dkb__build_free(&b);
        }
        free(scratch);
        free(src);
    }
    rm_tree(dir);
    free(dir);
    free(experts);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_experts_build_cuda: %d of 22 experts build under the harness's rules\n", built);
    return failures != 0;
}
