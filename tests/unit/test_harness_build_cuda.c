/* test_harness_build_cuda.c: the build of CUDA candidates (.cu), which
 * needs nvcc but no GPU: the CUDA allow-list by name (runtime yes; IPC,
 * device reset, limits, device selection, driver access, __device__
 * variables no), and dkb__build_candidate on small .cu files: a clean core
 * and full candidate, a compile error with its log, a forbidden runtime
 * call (cudaIpcOpenMemHandle, cudaDeviceReset), a __device__ variable, a
 * missing entry point, an include outside the allowed headers, host inline
 * assembly. Exits 77 (skipped) when nvcc ($DKB_NVCC) is not found. */
#include "test_harness_util.h"

static void test_names(void) {
    static const char *const yes[] = {
        "cudaMalloc", "cudaFree", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaGetLastError", "cudaStreamCreate",
        "cudaStreamSynchronize", "cudaLaunchKernel", "cudaMallocAsync", "cudaFuncGetAttributes",
        "cudaGetLastError@libcudart.so.13", "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd",
        "__cudaRegisterFunction", "__cudaUnregisterFatBinary", "__cudaPushCallConfiguration",
        "__cudaPopCallConfiguration", "__cudaLaunchKernel", "__cudaGetKernel", "__cxa_atexit",
        "__cxa_guard_acquire", "__gxx_personality_v0", "_Unwind_Resume", "_Znwm", "_ZdlPvm", "memcpy", "sqrt",
        "__cxa_throw", "_ZTISt9exception",
    };
    static const char *const no[] = {
        "cudaIpcOpenMemHandle", "cudaIpcGetMemHandle", "cudaDeviceReset", "cudaDeviceSetLimit", "cudaSetDevice",
        "cudaGetExportTable", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cudaHostRegister",
        "cudaThreadExit", "cudaMemPoolExportPointer", "cudaImportExternalMemory", "__cudaRegisterVar",
        "__cudaRegisterManagedVar", "cuMemAlloc", "cuInit", "dlopen", "pthread_create", "fopen",
        "dkb_tp_column", "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
        "cudaDeviceEnablePeerAccess",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECK(dkb__symbol_allowed_cuda(yes[i]), "%s should be allowed for CUDA candidates", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        CHECK(!dkb__symbol_allowed_cuda(no[i]), "%s should not be allowed for CUDA candidates", no[i]);
    CHECK(!dkb__symbol_allowed("cudaMalloc"), "cudaMalloc must stay off the C allow-list");
    CHECK(dkb__is_cuda_source("x/q06.full.cu") && !dkb__is_cuda_source("q06.full.c"), "is_cuda_source");
}

/* Build text as dir/sub/name for mode; the verdict, detail in detail. */
static dkb_verdict build(const char *dir, const char *sub, const char *name, dkb_mode mode, const char *text,
                         char *detail, size_t n, char **log) {
    char *scratch = join(dir, sub);
    mkdir(scratch, 0755);
    char *src = join(scratch, name);
    write_text(src, text);
    dkb_build b;
    dkb_error err = {0};
    int rc = dkb__build_candidate(src, mode, scratch, &b, &err);
    CHECK(rc == 0, "%s: the build did not run: %s", name, err.msg);
    snprintf(detail, n, "%s", b.detail);
    if (log) *log = strdup(b.log ? b.log : "");
    dkb_verdict v = rc ? DKB_VERDICT_HARNESS_ERROR : b.verdict;
    dkb__build_free(&b);
    free(src);
    free(scratch);
    return v;
}

/* A candidate the build must reject: verdict want, needle in the detail. */
static void expect_rejected(const char *dir, const char *sub, const char *name, dkb_mode mode, const char *text,
                            dkb_verdict want, const char *needle, const char *what) {
    char d[512];
    dkb_verdict v = build(dir, sub, name, mode, text, d, sizeof d, NULL);
    CHECK(v == want && strstr(d, needle), "%s: %s (%s)", what, dkb__verdict_name(v), d);
}

#define KERNEL                                                                                         \
    "#include \"dkb/candidate.h\"\n"                                                                   \
    "__global__ void sum(const int *a, long long n, unsigned long long *out) {\n"                     \
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"                             \
    "  if (i < n) atomicAdd(out, (unsigned long long)a[i]);\n"                                       \
    "}\n"

static void test_builds(const char *dir) {
    char d[512];
    char *log = NULL;
    dkb_verdict v = build(dir, "core", "q06.core.cu", DKB_MODE_CORE,
                          KERNEL "extern \"C\" int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out,\n"
                                 "                                  const dkb_cand_env *env) {\n"
                                 "  cudaStream_t s = dkb_cand_stream(env);\n"
                                 "  cudaMemsetAsync(out->vec[0].data, 0, 8, s);\n"
                                 "  sum<<<1, 32, 0, s>>>((const int *)in->vec[0].data, in->vec[0].n,\n"
                                 "                       (unsigned long long *)out->vec[0].data);\n"
                                 "  out->vec[0].n = 1;\n"
                                 "  return cudaGetLastError() != cudaSuccess;\n"
                                 "}\n",
                          d, sizeof d, &log);
    CHECK(v == DKB_VERDICT_OK, "clean core candidate: %s (%s) log: %s", dkb__verdict_name(v), d, log);
    free(log);

    v = build(dir, "full", "q06.full.cu", DKB_MODE_FULL,
              KERNEL "int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *r,\n"
                     "                       const dkb_cand_env *env) {\n"
                     "  (void)db; (void)p; unsigned long long *d = 0, h = 0;\n"
                     "  if (cudaMalloc(&d, 8) != cudaSuccess) return 1;\n"
                     "  cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost); cudaFree(d);\n"
                     "  r->nrows = (int64_t)h; (void)env; return 0;\n"
                     "}\n",
              d, sizeof d, NULL);
    CHECK(v == DKB_VERDICT_OK, "clean full candidate (no extern \"C\": candidate.h declares it): %s (%s)",
          dkb__verdict_name(v), d);

    v = build(dir, "err", "q06.full.cu", DKB_MODE_FULL, "#include \"dkb/candidate.h\"\nint x = ;\n", d, sizeof d, &log);
    CHECK(v == DKB_VERDICT_COMPILE_ERROR, "syntax error: %s (%s)", dkb__verdict_name(v), d);
    CHECK(log && strstr(log, "q06.full.cu"), "the compile log names the file: %s", log ? log : "(null)");
    free(log);

    expect_rejected(dir, "ipc", "q06.full.cu", DKB_MODE_FULL,
                    "#include \"dkb/candidate.h\"\n"
                    "int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *r,\n"
                    "                       const dkb_cand_env *env) {\n"
                    "  cudaIpcMemHandle_t h; void *q; (void)db; (void)p; (void)r; (void)env;\n"
                    "  memset(&h, 0, sizeof h);\n"
                    "  return cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess;\n"
                    "}\n",
                    DKB_VERDICT_FORBIDDEN_SYMBOL, "cudaIpcOpenMemHandle", "cudaIpcOpenMemHandle");

    expect_rejected(dir, "reset", "q06.core.cu", DKB_MODE_CORE,
                    "#include \"dkb/candidate.h\"\n"
                    "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                    "  (void)in; (void)out; (void)env; return cudaDeviceReset() != cudaSuccess;\n"
                    "}\n",
                    DKB_VERDICT_FORBIDDEN_SYMBOL, "cudaDeviceReset", "cudaDeviceReset");

    expect_rejected(dir, "devvar", "q06.core.cu", DKB_MODE_CORE,
                    "#include \"dkb/candidate.h\"\n"
                    "__device__ unsigned long long calls;\n"
                    "__global__ void bump(void) { calls++; }\n"
                    "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                    "  (void)in; (void)out; bump<<<1, 1, 0, dkb_cand_stream(env)>>>(); return 0;\n"
                    "}\n",
                    DKB_VERDICT_FORBIDDEN_SYMBOL, "__cudaRegisterVar", "a __device__ variable");

    expect_rejected(dir, "entry", "q06.core.cu", DKB_MODE_CORE,
                    KERNEL "int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *r,\n"
                           "                       const dkb_cand_env *env) { (void)db; (void)p; (void)r; (void)env; return 0; }\n",
                    DKB_VERDICT_BAD_ENTRY, "dkb_candidate_core", "full entry in a core file");

    char *other = join(dir, "other.h");
    write_text(other, "#define SECRET 1\n");
    char text[1024];
    snprintf(text, sizeof text, "#include \"dkb/candidate.h\"\n#include \"%s\"\n"
                                "int dkb_candidate_core(const dkb_cand_set *i, dkb_cand_set *o, const dkb_cand_env *e)"
                                " { (void)i; (void)o; (void)e; return SECRET - 1; }\n", other);
    expect_rejected(dir, "inc", "q06.core.cu", DKB_MODE_CORE, text,
                    DKB_VERDICT_COMPILE_ERROR, "other.h", "an include outside the allowed headers");
    free(other);

    expect_rejected(dir, "asm", "q06.core.cu", DKB_MODE_CORE,
                    "#include \"dkb/candidate.h\"\n"
                    "int dkb_candidate_core(const dkb_cand_set *i, dkb_cand_set *o, const dkb_cand_env *e) {\n"
                    "  (void)i; (void)o; (void)e; long r; __asm__ volatile(\"mov $39, %%eax; syscall\" : \"=a\"(r)); return (int)r;\n"
                    "}\n",
                    DKB_VERDICT_COMPILE_ERROR, "inline assembly", "host inline assembly");
}

/* Is the CUDA compiler on PATH (or $DKB_NVCC)? */
int main(void) {
    test_names();
    if (!have_nvcc()) {
        printf("test_harness_build_cuda: allow-list ok; builds skipped: nvcc not found\n");
        return failures ? 1 : 77;
    }
    set_candidate_header();
    char *dir = make_tmpdir("build-cuda");
    test_builds(dir);
    rm_tree(dir);
    free(dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_build_cuda: ok\n");
    return failures != 0;
}
