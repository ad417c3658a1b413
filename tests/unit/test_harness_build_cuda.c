/* test_harness_build_cuda.c: the build of CUDA candidates (.cu), which
 * needs nvcc but no GPU: the CUDA allow-list by name (runtime yes, its
 * allocation, free and registration functions only as the worker's
 * __wrap_ functions; IPC, device reset, limits, device selection, driver
 * access, managed memory, arrays, host callbacks no; what CUB and Thrust
 * import from the C++ runtime yes), and dkb__build_candidate on small .cu
 * files: a clean core and full candidate, a compile error with its log, a
 * forbidden runtime call (cudaIpcOpenMemHandle, cudaDeviceReset,
 * cudaLaunchHostFunc, cudaMallocManaged), a call around the wraps
 * (__real_cudaFree), __device__ and __constant__ variables (allowed: the
 * worker restores them), CUB and Thrust (the honest CUB candidate of the
 * corpus, tests/candidates/cuda/honest/q04.full.cu, and a Thrust one), the
 * whole CUDA corpus (each file refused or built as its EXPECTED says; the
 * SQL tasks' CUDA candidates under tests/sql_tasks too), a
 * missing entry point, an include outside the allowed headers, host inline
 * assembly; and that a candidate built so loads into a process that links
 * dkb_core (the __wrap_ functions are exported) and that its wraps forward
 * to the runtime outside the worker. Exits 77 (skipped) when nvcc
 * ($DKB_NVCC) is not found. */
#include <dirent.h>
#include <dlfcn.h>

#include "test_harness_util.h"
#ifdef DKB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static void test_names(void) {
    static const char *const yes[] = {
        "__wrap_cudaMalloc", "__wrap_cudaFree", "__wrap_cudaMallocAsync", "__wrap_cudaFreeAsync",
        "__wrap_cudaMallocFromPoolAsync", "__wrap_cudaMallocHost", "__wrap_cudaHostAlloc", "__wrap_cudaFreeHost",
        "__wrap_cudaMallocPitch", "__wrap_cudaMalloc3D", "__wrap___cudaRegisterVar", "__wrap_cudaSetDevice",
        "__wrap_cudaFuncSetAttribute", "__wrap_cudaFuncSetCacheConfig", "cudaMemcpyAsync", "cudaMemsetAsync",
        "cudaGetLastError", "cudaStreamCreate", "cudaStreamSynchronize", "cudaLaunchKernel",
        "cudaFuncGetAttributes", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaGetSymbolAddress",
        "cudaStreamSetAttribute", "cudaGraphLaunch", "cudaStreamBeginCapture", "cudaDeviceGetDefaultMemPool",
        "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaGetLastError@libcudart.so.13",
        "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction",
        "__cudaUnregisterFatBinary", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration",
        "__cudaLaunchKernel", "__cudaGetKernel", "__cxa_atexit", "__cxa_guard_acquire", "__gxx_personality_v0",
        "_Unwind_Resume", "__wrap__Znwm", "__wrap__ZdlPvm", "__wrap_malloc", "memcpy", "sqrt", "__cxa_throw",
        "_ZTISt9exception",
        /* what CUB's and Thrust's headers import */
        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm@GLIBCXX_3.4.21",
        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEED1Ev", "_ZNSt8ios_base4InitC1Ev",
        "_ZNSt8ios_base4InitD1Ev", "_ZNSt13runtime_errorC2EPKc", "_ZNKSt13runtime_error4whatEv",
        "_ZNSt12length_errorC1EPKc", "_ZSt20__throw_system_errori", "_ZSt18_Rb_tree_incrementPSt18_Rb_tree_node_base",
        "_ZSt29_Rb_tree_insert_and_rebalancebPSt18_Rb_tree_node_baseS0_RS_", "_ZTVN10__cxxabiv120__si_class_type_infoE",
        "strerror", "pthread_mutex_lock", "pthread_mutex_unlock",
    };
    static const char *const no[] = {
        "cudaIpcOpenMemHandle", "cudaIpcGetMemHandle", "cudaDeviceReset", "cudaDeviceSetLimit", "cudaSetDevice",
        "cudaSetDeviceFlags", "cudaGetExportTable", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion",
        "cudaHostRegister", "cudaThreadExit", "cudaMemPoolExportPointer", "cudaImportExternalMemory",
        "__cudaRegisterVar", "__cudaRegisterManagedVar", "cuMemAlloc", "cuInit", "dlopen", "dlsym", "getenv",
        "pthread_create", "fopen", "dkb_tp_column",
        "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
        "cudaDeviceEnablePeerAccess",
        /* the wrapped functions themselves (only reachable through __real_) and their _ptsz forms */
        "cudaMalloc", "cudaFree", "cudaFree@libcudart.so.13", "cudaMallocAsync", "cudaFreeAsync", "cudaMallocHost",
        "cudaHostAlloc", "cudaFreeHost", "cudaMallocPitch", "cudaMalloc3D", "cudaMallocFromPoolAsync",
        "cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaMallocAsync_ptsz", "cudaFreeAsync_ptsz",
        "__wrap_cudaMemcpy", "__wrap_cudaMemcpyAsync", "__wrap_", "malloc", "_Znwm",
        /* memory the worker cannot poison, code on the runtime's threads, settings it does not put back */
        "cudaMallocManaged", "cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmappedArray",
        "cudaGraphAddMemAllocNode", "cudaGraphAddMemFreeNode", "cudaMemPoolCreate", "cudaMemPoolTrimTo",
        "cudaMemSetMemPool", "cudaLibraryLoadData", "cudaLibraryGetGlobal", "cudaLaunchHostFunc",
        "cudaLaunchHostFunc_ptsz", "cudaStreamAddCallback", "cudaGraphAddHostNode", "cudaGraphAddNode",
        "cudaGraphAddNode_v2", "cudaGraphNodeSetParams", "cudaGraphExecHostNodeSetParams", "cudaUserObjectCreate",
        "cudaDeviceRegisterAsyncNotification", "cudaKernelSetAttributeForDevice", "cudaFuncSetSharedMemConfig",
        /* C++ runtime parts CUB and Thrust do not need: streams, locales */
        "_ZSt4cout", "_ZNSolsEi", "_ZNSt6localeC1Ev",
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

    /* __device__ and __constant__ variables build: the worker restores them before every call */
    v = build(dir, "devvar", "q06.core.cu", DKB_MODE_CORE,
              "#include \"dkb/candidate.h\"\n"
              "__device__ unsigned long long calls;\n"
              "__constant__ int table[4] = {1, 2, 3, 4};\n"
              "__global__ void bump(void) { calls += table[calls & 3]; }\n"
              "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
              "  (void)in; (void)out; int t[4] = {4, 3, 2, 1};\n"
              "  cudaMemcpyToSymbol(table, t, sizeof t);\n"
              "  bump<<<1, 1, 0, dkb_cand_stream(env)>>>(); return 0;\n"
              "}\n",
              d, sizeof d, NULL);
    CHECK(v == DKB_VERDICT_OK, "__device__ and __constant__ variables: %s (%s)", dkb__verdict_name(v), d);

    /* reaching around the worker's wraps, and host callbacks */
    expect_rejected(dir, "real", "q06.core.cu", DKB_MODE_CORE,
                    "#include \"dkb/candidate.h\"\n"
                    "extern \"C\" cudaError_t __real_cudaFree(void *);\n"
                    "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                    "  (void)in; (void)out; (void)env; void *p = 0;\n"
                    "  if (cudaMalloc(&p, 64) != cudaSuccess) return 1;\n"
                    "  return __real_cudaFree(p) != cudaSuccess;\n"
                    "}\n",
                    DKB_VERDICT_FORBIDDEN_SYMBOL, "cudaFree", "__real_cudaFree");
    expect_rejected(dir, "hostfn", "q06.core.cu", DKB_MODE_CORE,
                    "#include \"dkb/candidate.h\"\n"
                    "static void CUDART_CB note(void *arg) { ++*(int *)arg; }\n"
                    "static int calls;\n"
                    "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                    "  (void)in; (void)out;\n"
                    "  return cudaLaunchHostFunc(dkb_cand_stream(env), note, &calls) != cudaSuccess;\n"
                    "}\n",
                    DKB_VERDICT_FORBIDDEN_SYMBOL, "cudaLaunchHostFunc", "cudaLaunchHostFunc");
    expect_rejected(dir, "managed", "q06.core.cu", DKB_MODE_CORE,
                    "#include \"dkb/candidate.h\"\n"
                    "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                    "  (void)in; (void)out; (void)env; void *p = 0;\n"
                    "  return cudaMallocManaged(&p, 64, cudaMemAttachGlobal) != cudaSuccess;\n"
                    "}\n",
                    DKB_VERDICT_FORBIDDEN_SYMBOL, "cudaMallocManaged", "cudaMallocManaged");

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

/* Build src into dir/sub; the verdict (HARNESS_ERROR when the build did
 * not run), the detail and the log's start in what. */
static dkb_verdict build_file(const char *dir, const char *sub, const char *src, dkb_mode mode, char *what,
                              size_t n) {
    char *scratch = join(dir, sub);
    mkdir(scratch, 0755);
    dkb_build b;
    dkb_error err = {0};
    int rc = dkb__build_candidate(src, mode, scratch, &b, &err);
    dkb_verdict v = rc ? DKB_VERDICT_HARNESS_ERROR : b.verdict;
    snprintf(what, n, "%s; log: %.600s", rc ? err.msg : b.detail, b.log ? b.log : "");
    dkb__build_free(&b);
    free(scratch);
    return v;
}

/* Build every .cu of the corpus directory cdir (label: its name) and
 * check the verdict against its EXPECTED: compile_error and
 * forbidden_symbol as such, anything else (a run-time verdict) OK. The
 * count built is added to *built. */
static void build_corpus_dir(const char *dir, const char *cdir, const char *label, int *built) {
    char expected[64] = "", ep[4200];
    snprintf(ep, sizeof ep, "%s/EXPECTED", cdir);
    FILE *f = fopen(ep, "r");
    if (f) {
        if (fscanf(f, "%63s", expected) != 1) expected[0] = 0;
        fclose(f);
    }
    dkb_verdict want = !strcmp(expected, "compile_error")      ? DKB_VERDICT_COMPILE_ERROR
                       : !strcmp(expected, "forbidden_symbol") ? DKB_VERDICT_FORBIDDEN_SYMBOL
                                                               : DKB_VERDICT_OK;
    DIR *d = opendir(cdir);
    CHECK(d != NULL, "cannot read %s", cdir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".cu")) continue;
        char src[4400], sub[600], what[1200];
        snprintf(src, sizeof src, "%s/%s", cdir, e->d_name);
        snprintf(sub, sizeof sub, "corpus-%s-%s", label, e->d_name);
        dkb_mode mode = strstr(e->d_name, ".core.") ? DKB_MODE_CORE : DKB_MODE_FULL;
        dkb_verdict v = build_file(dir, sub, src, mode, what, sizeof what);
        CHECK(v == want, "%s: %s, expected %s (%s)", src, dkb__verdict_name(v), dkb__verdict_name(want), what);
        (*built)++;
    }
    if (d) closedir(d);
}

/* The CUDA corpora (tests/candidates/cuda, tests/candidates/budget_cuda,
 * tests/sql_tasks/honest_cuda and wrong_cuda) as the build sees them: the
 * compile_error and forbidden_symbol cases are refused as such, every
 * other file (the honest ones, the CUB candidate q04.full.cu, the
 * device-state caches, the crash, timeout and wrong-answer cases, the SQL
 * tasks' candidates) builds and passes the import check. */
static void test_corpus(const char *dir) {
    const char *td = getenv("DKB_TESTDATA");
    if (!td || !*td) {
        printf("test_harness_build_cuda: DKB_TESTDATA not set, the CUDA corpus not built\n");
        return;
    }
    char root[4096], cdir[4400];
    int built = 0;
    snprintf(root, sizeof root, "%s/../candidates/cuda/adversarial", td);
    snprintf(cdir, sizeof cdir, "%s/../candidates/cuda/honest", td);
    build_corpus_dir(dir, cdir, "honest", &built);
    DIR *d = opendir(root);
    CHECK(d != NULL, "cannot read %s", root);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(cdir, sizeof cdir, "%s/%s", root, e->d_name);
        build_corpus_dir(dir, cdir, e->d_name, &built);
    }
    if (d) closedir(d);
    /* and the CUDA budget corpus (tests/cli/eval_budget_cuda.sh runs it on a GPU) */
    const int before = built;
    snprintf(root, sizeof root, "%s/../candidates/budget_cuda", td);
    d = opendir(root);
    CHECK(d != NULL, "cannot read %s", root);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char label[300];
        snprintf(cdir, sizeof cdir, "%s/%s", root, e->d_name);
        snprintf(label, sizeof label, "budget_cuda-%s", e->d_name);
        build_corpus_dir(dir, cdir, label, &built);
    }
    if (d) closedir(d);
    CHECK(built - before >= 8, "only %d CUDA budget corpus files built", built - before);
    /* and the CUDA candidates of the SQL tasks (tests/cli/sql_task_cuda.sh
     * runs them on a GPU): honest and wrong ones both build */
    static const char *const sql_dirs[] = {"honest_cuda", "wrong_cuda"};
    const int before_sql = built;
    for (size_t i = 0; i < sizeof sql_dirs / sizeof sql_dirs[0]; i++) {
        char label[64];
        snprintf(cdir, sizeof cdir, "%s/../sql_tasks/%s", td, sql_dirs[i]);
        snprintf(label, sizeof label, "sql_tasks-%s", sql_dirs[i]);
        build_corpus_dir(dir, cdir, label, &built);
    }
    CHECK(built - before_sql >= 3, "only %d SQL task CUDA files built", built - before_sql);
    CHECK(built >= 21, "only %d CUDA corpus files built", built);
    printf("test_harness_build_cuda: %d CUDA corpus files built as their EXPECTED says\n", built);
}

/* A Thrust candidate (device_vector, sort, copy_if, reduce, exceptions)
 * builds and passes the import check. */
static void test_thrust(const char *dir) {
    char d[512];
    char *log = NULL;
    dkb_verdict v = build(dir, "thrust", "q06.core.cu", DKB_MODE_CORE,
                          "#include <thrust/copy.h>\n"
                          "#include <thrust/device_vector.h>\n"
                          "#include <thrust/execution_policy.h>\n"
                          "#include <thrust/reduce.h>\n"
                          "#include <thrust/sort.h>\n"
                          "#include <thrust/system_error.h>\n"
                          "#include \"dkb/candidate.h\"\n"
                          "struct positive { __host__ __device__ bool operator()(int x) const { return x > 0; } };\n"
                          "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                          "  const int *a = (const int *)in->vec[0].data; long long n = in->vec[0].n;\n"
                          "  try {\n"
                          "    auto pol = thrust::cuda::par.on(dkb_cand_stream(env));\n"
                          "    thrust::device_vector<int> v(a, a + n), o(n);\n"
                          "    thrust::sort(pol, v.begin(), v.end());\n"
                          "    auto e = thrust::copy_if(pol, v.begin(), v.end(), o.begin(), positive());\n"
                          "    out->vec[0].n = thrust::reduce(pol, o.begin(), e, 0LL);\n"
                          "  } catch (const thrust::system_error &) {\n"
                          "    return DKB_CAND_ECUDA;\n"
                          "  } catch (const std::bad_alloc &) {\n"
                          "    return DKB_CAND_ENOMEM;\n"
                          "  }\n"
                          "  return 0;\n"
                          "}\n",
                          d, sizeof d, &log);
    CHECK(v == DKB_VERDICT_OK, "a Thrust candidate: %s (%s) log: %.600s", dkb__verdict_name(v), d, log ? log : "");
    free(log);
}

/* Outside the worker (no interposition enabled) a built candidate loads
 * into this process, whose __wrap_ functions dkb_core exports, and its
 * cudaMalloc/cudaFree reach the runtime: the same status as a direct
 * cudaMalloc (cudaSuccess on a GPU, e.g. cudaErrorNoDevice without). */
static void test_forwarding(const char *dir) {
#ifdef DKB_HAVE_CUDA
    char d[512];
    dkb_verdict v = build(dir, "fwd", "q06.core.cu", DKB_MODE_CORE,
                          "#include \"dkb/candidate.h\"\n"
                          "int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n"
                          "  (void)in; (void)out; (void)env; void *p = 0;\n"
                          "  cudaError_t e = cudaMalloc(&p, 4096);\n"
                          "  if (e != cudaSuccess) return (int)e;\n"
                          "  if (!p) return -1;\n"
                          "  e = cudaFree(p);\n"
                          "  return e == cudaSuccess ? 0 : 10000 + (int)e;\n"
                          "}\n",
                          d, sizeof d, NULL);
    CHECK(v == DKB_VERDICT_OK, "the forwarding candidate: %s (%s)", dkb__verdict_name(v), d);
    if (v != DKB_VERDICT_OK) return;
    char *so = join(dir, "fwd/q06.core.so");
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen of a CUDA candidate in a process linking dkb_core: %s", h ? "" : dlerror());
    if (h) {
        typedef int (*core_fn)(const dkb_cand_set *, dkb_cand_set *, const dkb_cand_env *);
        core_fn f = (core_fn)dlsym(h, "dkb_candidate_core");
        CHECK(f != NULL, "dkb_candidate_core in the forwarding candidate");
        void *p = NULL;
        cudaError_t direct = cudaMalloc(&p, 4096);
        if (direct == cudaSuccess) cudaFree(p);
        (void)cudaGetLastError();
        int got = f ? f(NULL, NULL, NULL) : -2;
        CHECK(got == (int)direct, "the candidate's cudaMalloc/cudaFree through the wraps returned %d, a direct "
              "cudaMalloc %d", got, (int)direct);
        printf("test_harness_build_cuda: wraps forward (cudaMalloc: %s)\n", cudaGetErrorName(direct));
        dlclose(h);
    }
    free(so);
#else
    (void)dir;
#endif
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
    test_corpus(dir);
    test_thrust(dir);
    test_forwarding(dir);
    rm_tree(dir);
    free(dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_build_cuda: ok\n");
    return failures != 0;
}
