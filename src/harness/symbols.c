/* symbols.c: the import allow-list of candidate shared objects, and the
 * check of a built object against it (nm -D): a candidate may use libc's
 * memory, string, conversion, sorting, malloc and printing functions, all
 * of libm, OpenMP, and what the compiler itself emits; nothing that reaches
 * the system (files, processes, threads, signals, clocks, dynamic loading)
 * and nothing of DataKernelBench. CUDA candidates (.cu) may also use the CUDA
 * runtime (but device selection and reset, limits, IPC, driver access,
 * managed memory, arrays, host callbacks), its allocation, free and
 * registration functions only through the worker's wraps (__wrap_*:
 * cuda_interpose.h), what nvcc emits for kernels, and the parts of the C++
 * runtime that CUB and Thrust use (allocation, exceptions, strings, trees). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/countof.h"
#include "harness/cuda_interpose.h"  // defines: dkb__cuda_is_wrapped
#include "harness/harness.h"
#include "harness/heap_interpose.h"  // defines: dkb__heap_is_wrapped

/* libc and compiler support, exact names. */
static const char *const LIBC[] = {
    /* memory and strings */
    "memcpy", "memmove", "memset", "memcmp", "memchr", "memrchr", "rawmemchr", "mempcpy", "bcmp", "bzero",
    "strlen", "strnlen", "strcmp", "strncmp", "strcpy", "strncpy", "stpcpy", "stpncpy", "strcat", "strncat",
    "strchr", "strrchr", "strchrnul", "strstr", "strcasestr", "strspn", "strcspn", "strpbrk", "strcasecmp",
    "strncasecmp", "strcoll", "memmem", "strtok_r", "strsep", "strverscmp",
    /* conversions and arithmetic */
    "strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof", "strtold", "strtoimax", "strtoumax", "atoi",
    "atol", "atoll", "atof", "abs", "labs", "llabs", "imaxabs", "div", "ldiv", "lldiv", "imaxdiv", "sscanf",
    "__isoc99_sscanf", "__isoc23_sscanf", "__isoc23_strtol", "__isoc23_strtoll", "__isoc23_strtoul",
    "__isoc23_strtoull", "__isoc23_strtoimax", "__isoc23_strtoumax", "__strtol_internal", "__strtoll_internal",
    "__strtoul_internal", "__strtoull_internal", "__strtod_internal",
    /* characters */
    "isalnum", "isalpha", "isblank", "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct", "isspace",
    "isupper", "isxdigit", "tolower", "toupper", "__ctype_b_loc", "__ctype_tolower_loc", "__ctype_toupper_loc",
    /* sorting and searching */
    "qsort", "qsort_r", "bsearch", "lfind", "lsearch",
    /* memory allocation: malloc, free, strdup and friends only through the
     * worker's wraps (__wrap_malloc: heap_interpose.h, above) */
    "malloc_usable_size",
    /* printing to stdout / stderr */
    "printf", "fprintf", "vprintf", "vfprintf", "puts", "putchar", "fputs", "fputc", "putc", "fwrite",
    "fflush", "snprintf", "sprintf", "vsnprintf", "vsprintf", "perror", "putchar_unlocked", "putc_unlocked",
    "fputc_unlocked", "fwrite_unlocked", "fputs_unlocked", "stdout", "stderr", "_IO_putc",
    /* what glibc's inline putc_unlocked / putchar_unlocked call when the buffer is full */
    "__overflow",
    /* ending */
    "abort", "exit", "__assert_fail", "__assert_perror_fail", "__assert",
    /* errno (strtol and friends) */
    "__errno_location",
    /* compiler support */
    "__stack_chk_fail", "__stack_chk_guard", "__cxa_finalize", "__gmon_start__",
    "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "_Jv_RegisterClasses", "__dso_handle",
    "__cpu_model", "__cpu_features2", "__cpu_indicator_init", "__udivti3", "__divti3", "__umodti3", "__modti3",
    "__udivmodti4", "__divmodti4", "__muloti4", "__mulodi4", "__popcountdi2", "__popcountti2", "__clzdi2",
    "__ctzdi2", "__clzti2", "__ctzti2", "__floattidf", "__floatuntidf", "__fixdfti", "__fixunsdfti",
    "__floattisf", "__floatuntisf", "__fixsfti", "__fixunssfti", "__powidf2", "__powisf2", "__bswapdi2",
    "__bswapsi2", "__ashlti3", "__ashrti3", "__lshrti3", "__negti2", "__multi3", "__cmpti2", "__ucmpti2",
    "__paritydi2", "__ffsdi2", "__ffsti2", "__mulxc3", "__muldc3", "__divdc3", "__mulsc3", "__divsc3",
    /* long double (x87) conversions and powers */
    "__floattixf", "__floatuntixf", "__fixxfti", "__fixunsxfti", "__powixf2", "__divxc3",
    /* libm symbols that are not derived from a name below (glibc internals) */
    "__finite", "__finitef", "__finitel", "__isnan", "__isnanf", "__isnanl", "__isinf", "__isinff", "__isinfl",
    "__fpclassify", "__fpclassifyf", "__fpclassifyl", "__signbit", "__signbitf", "__signbitl", "signgam",
    "__signgam", "finite", "finitef", "isnan", "isinf",
};

/* libm base names; the f and l variants (sqrtf, sqrtl), the C23 widths
 * (f32, f64, f128, f32x, f64x) and glibc's __NAME_finite forms count too. */
static const char *const LIBM[] = {
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh", "exp",
    "exp2", "exp10", "expm1", "log", "log10", "log1p", "log2", "logb", "pow", "pow10", "sqrt", "cbrt", "hypot",
    "fabs", "floor", "ceil", "round", "lround", "llround", "trunc", "rint", "lrint", "llrint", "nearbyint", "fmod",
    "remainder", "remquo", "copysign", "nan", "fdim", "fmax", "fmin", "fma", "frexp", "ldexp", "modf", "scalbn",
    "scalbln", "scalb", "ilogb", "llogb", "erf", "erfc", "lgamma", "lgamma_r", "tgamma", "gamma", "nextafter",
    "nexttoward", "nextup", "nextdown", "sincos", "significand", "drem", "j0", "j1", "jn", "y0", "y1", "yn",
    "roundeven", "fmaxmag", "fminmag", "fmaximum", "fminimum", "fmaximum_num", "fminimum_num", "fmaximum_mag",
    "fminimum_mag", "canonicalize", "totalorder", "totalordermag", "getpayload", "setpayload", "setpayloadsig",
    "fromfp", "fromfpx", "ufromfp", "ufromfpx", "fadd", "fsub", "fmul", "fdiv", "dadd", "dsub", "dmul", "ddiv",
    "exp2m1", "exp10m1", "log2p1", "log10p1", "logp1", "compoundn", "pown", "powr", "rootn", "rsqrt",
    "sinpi", "cospi", "tanpi", "acospi", "asinpi", "atanpi", "atan2pi",
};

/* OpenMP functions allowed besides GOMP_* and omp_get_* */
static const char *const OPENMP[] = {
    "omp_set_num_threads", "omp_set_dynamic", "omp_set_nested", "omp_set_max_active_levels", "omp_in_parallel",
    "omp_in_final", "omp_is_initial_device", "omp_init_lock", "omp_destroy_lock", "omp_set_lock", "omp_unset_lock",
    "omp_test_lock", "omp_init_nest_lock", "omp_destroy_nest_lock", "omp_set_nest_lock", "omp_unset_nest_lock",
    "omp_test_nest_lock", "omp_init_lock_with_hint", "omp_init_nest_lock_with_hint",
};
/* omp_get_* that are not allowed: clocks */
static const char *const OPENMP_NOT[] = {"omp_get_wtime", "omp_get_wtick"};

static int in_list(const char *name, size_t len, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && !memcmp(list[i], name, len)) return 1;
    return 0;
}


/* name[0..len) is a libm function (with a width suffix or not). */
static int is_libm(const char *name, size_t len) {
    if (in_list(name, len, LIBM, DKB_COUNTOF(LIBM))) return 1;
    static const char *const SUFFIX[] = {"f", "l", "f32", "f64", "f128", "f32x", "f64x", "_r", "f_r", "l_r"};
    for (size_t s = 0; s < DKB_COUNTOF(SUFFIX); s++) {
        size_t sl = strlen(SUFFIX[s]);
        if (len > sl && !memcmp(name + len - sl, SUFFIX[s], sl) && in_list(name, len - sl, LIBM, DKB_COUNTOF(LIBM)))
            return 1;
    }
    return 0;
}

/* ---- CUDA candidates: the CUDA runtime and what nvcc and g++ emit ---- */

/* cuda* functions of libcudart that are not allowed: device selection and
 * reset, limits and configuration that would outlive a call or change the
 * harness's measurements, IPC and other sharing with processes, devices
 * or graphics APIs, and the doors into the driver API. */
static const char *const CUDA_NOT_PREFIX[] = {
    "cudaIpc",                 /* opening other processes' memory (the harness's columns) */
    "cudaDeviceReset", "cudaThreadExit", "cudaDeviceSetLimit", "cudaThreadSetLimit",
    "cudaSetDevice", "cudaSetValidDevices", "cudaInitDevice", "cudaDeviceEnablePeerAccess",
    "cudaDeviceDisablePeerAccess", "cudaDeviceSetCacheConfig", "cudaThreadSetCacheConfig",
    "cudaDeviceSetSharedMemConfig", "cudaDeviceSetMemPool", "cudaDeviceSetGraphMemAttribute",
    "cudaMemPoolSetAttribute", "cudaMemPoolSetAccess", "cudaMemPoolExport", "cudaMemPoolImport",
    "cudaImportExternal", "cudaExternal", "cudaDestroyExternal", "cudaSignalExternal", "cudaWaitExternal",
    "cudaGraphics", "cudaGL", "cudaEGL", "cudaVDPAU", "cudaD3D",
    "cudaGetExportTable", "cudaGetDriverEntryPoint", /* raw driver API function pointers */
    "cudaHostRegister", "cudaHostUnregister",          /* pinning (and mapping) the harness's memory */
    "cudaProfilerInitialize", "cudaLogs",
    /* memory the worker does not see (so cannot poison between calls):
     * managed memory, arrays, graph memory nodes, pools of the candidate's
     * own or trimmed by it, another pool made current, modules loaded at
     * run time (their globals are not registered) */
    "cudaMallocManaged", "cudaStreamAttachMemAsync", "cudaMallocArray", "cudaMalloc3DArray",
    "cudaMallocMipmappedArray", "cudaGraphAddMemAllocNode", "cudaGraphAddMemFreeNode", "cudaMemPoolCreate",
    "cudaMemPoolDestroy", "cudaMemPoolTrimTo", "cudaMemSetMemPool", "cudaLibrary",
    /* candidate code run by the runtime's own threads (stacks nothing
     * scrubs): host functions, callbacks, graph host nodes; the generic
     * graph node calls can make host and memory nodes too */
    "cudaLaunchHostFunc", "cudaStreamAddCallback", "cudaGraphAddHostNode", "cudaGraphHostNodeSetParams",
    "cudaGraphExecHostNodeSetParams", "cudaGraphAddNode", "cudaGraphNodeSetParams", "cudaGraphExecNodeSetParams",
    "cudaUserObjectCreate", "cudaDeviceRegisterAsyncNotification",
    /* settings the worker does not put back: device flags, per-device kernel
     * attributes, shared-memory bank configuration */
    "cudaKernelSetAttributeForDevice", "cudaFuncSetSharedMemConfig",
};
/* What nvcc emits into a candidate (kernel registration and launch).
 * __cudaRegisterVar only through its wrap (the worker restores every
 * __device__ and __constant__ variable before each call); never
 * __cudaRegisterManagedVar (__managed__ memory the worker cannot poison). */
static const char *const CUDA_EMITTED[] = {
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
    "__cudaRegisterFunction", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration",
    "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "__cudaGetKernel", "__cudaInitModule",
    "__cudaRegisterLinkedBinary", "__cudaRegisterEntry",
};
/* The C++ runtime as nvcc's host code (g++) uses it: operator new/delete,
 * guarded statics, exceptions, static destructors (never run: the worker
 * _exits), and the std exception classes CUB/Thrust may throw. */
static const char *const CXX_EXACT[] = {
    "__cxa_atexit", "atexit", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort",
    "__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_rethrow", "__cxa_begin_catch",
    "__cxa_end_catch", "__cxa_pure_virtual", "__cxa_deleted_virtual", "__cxa_call_unexpected",
    "__cxa_get_exception_ptr", "__cxa_current_exception_type", "__cxa_bad_cast", "__cxa_bad_typeid",
    "__cxa_throw_bad_array_new_length", "__gxx_personality_v0", "_Unwind_Resume", "_ZSt9terminatev",
    "__dynamic_cast", "_ZdlPv", "_ZdaPv", "_Znwm", "_Znam", "_ZdlPvm", "_ZdaPvm",
    /* <iostream>'s one-time construction of the standard streams with
     * libstdc++ 13 (std::ios_base_library_init; older: ios_base::Init, below) */
    "_ZSt21ios_base_library_initv",
    /* thrust::system_error's message; CUB's caching allocator's mutex
     * (locking only: no thread is started) */
    "strerror", "pthread_mutex_init", "pthread_mutex_destroy", "pthread_mutex_lock", "pthread_mutex_trylock",
    "pthread_mutex_unlock",
};
/* Itanium-mangled names allowed by prefix: operator new/delete in all their
 * forms, typeinfo and vtables (data), std's throw helpers, the standard
 * exception classes' members, and what CUB's and Thrust's headers make a
 * candidate import: std::string's members (thrust::system_error's message),
 * std::ios_base::Init (<iostream>, included by a CUB header: it constructs
 * the standard streams once, at load), the red-black tree and hash table
 * helpers of std::map/set/unordered_map (CUB's caching allocator), and the
 * error categories. No stream output, locales, files, threads or clocks. */
static const char *const CXX_PREFIX[] = {
    "_Znw", "_Zna", "_Zdl", "_Zda", "_ZTI", "_ZTS", "_ZTV", "_ZSt19__throw_", "_ZSt20__throw_",
    "_ZSt21__throw_", "_ZSt24__throw_", "_ZSt16__throw_", "_ZSt17__throw_", "_ZSt18__throw_",
    "_ZNSt9exception", "_ZNKSt9exception", "_ZNSt9bad_alloc", "_ZNKSt9bad_alloc", "_ZNSt11logic_error",
    "_ZNKSt11logic_error", "_ZNSt13runtime_error", "_ZNKSt13runtime_error", "_ZNSt12length_error",
    "_ZNSt12out_of_range", "_ZNSt16invalid_argument", "_ZNSt20bad_array_new_length", "_ZNSt11range_error",
    "_ZNSt14overflow_error", "_ZNSt15underflow_error", "_ZNSt12domain_error", "_ZNSt9bad_cast",
    "_ZNSt8bad_cast", "_ZNKSt8bad_cast", "_ZNSt10bad_typeid", "_ZNKSt10bad_typeid", "_ZNKSt12length_error",
    "_ZNKSt12out_of_range", "_ZNSt12system_error", "_ZNKSt12system_error", "_ZNSt3_V214error_category",
    "_ZNKSt3_V214error_category", "_ZNSt3_V216generic_categoryEv", "_ZNSt3_V215system_categoryEv",
    "_ZNSt7__cxx1112basic_string", "_ZNKSt7__cxx1112basic_string", "_ZNSt8ios_base4InitC",
    "_ZNSt8ios_base4InitD", "_ZSt18_Rb_tree_", "_ZSt20_Rb_tree_", "_ZSt28_Rb_tree_", "_ZSt29_Rb_tree_",
    "_ZNSt8__detail15_Prime_rehash_policy", "_ZNKSt8__detail15_Prime_rehash_policy", "_ZSt11_Hash_bytes",
};

static int has_prefix(const char *name, size_t len, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(list[i]);
        if (len >= pl && !memcmp(name, list[i], pl)) return 1;
    }
    return 0;
}

/* A wrapped runtime function itself, or its per-thread-default-stream
 * form (cudaMallocAsync_ptsz): imported only by a candidate that reaches
 * around the worker's wrap (__real_cudaFree, CUDA_API_PER_THREAD_DEFAULT_STREAM). */
static bool is_wrapped_raw(const char *name, size_t len) {
    if (dkb__cuda_is_wrapped(name, len)) return true;
    return len > 5 && (!memcmp(name + len - 5, "_ptsz", 5) || !memcmp(name + len - 5, "_ptds", 5)) &&
           dkb__cuda_is_wrapped(name, len - 5);
}

bool dkb__symbol_allowed_cuda(const char *name) {
    if (!name || !*name) return false;
    size_t len = strcspn(name, "@");
    if (len > 7 && !memcmp(name, "__wrap_", 7))
        return dkb__cuda_is_wrapped(name + 7, len - 7) || dkb__heap_is_wrapped(name + 7, len - 7);
    if (is_wrapped_raw(name, len) || dkb__heap_is_wrapped(name, len)) return false;
    if (len > 4 && !memcmp(name, "cuda", 4)) return !has_prefix(name, len, CUDA_NOT_PREFIX, DKB_COUNTOF(CUDA_NOT_PREFIX));
    if (in_list(name, len, CUDA_EMITTED, DKB_COUNTOF(CUDA_EMITTED))) return true;
    if (in_list(name, len, CXX_EXACT, DKB_COUNTOF(CXX_EXACT))) return true;
    if (has_prefix(name, len, CXX_PREFIX, DKB_COUNTOF(CXX_PREFIX))) return true;
    return dkb__symbol_allowed(name);
}

/* The allowed imports that name data, not code: a candidate can write
 * them (the worker puts each back before every call; the test
 * test_symbols_data checks that every allowed name the C library defines
 * as an object is here). */
static const char *const DATA_OBJECTS[] = {
    "stdout", "stderr", "signgam", "__signgam", "__stack_chk_guard", "__cpu_model", "__cpu_features2",
};

const char *const *dkb__symbol_data_objects(size_t *n) {
    *n = DKB_COUNTOF(DATA_OBJECTS);
    return DATA_OBJECTS;
}

bool dkb__symbol_allowed(const char *name) {
    if (!name || !*name) return false;
    size_t len = strcspn(name, "@");
    /* the heap's functions only through the worker's wraps (heap_interpose.h):
     * a raw import comes from a __real_ reference, around the record */
    if (len > 7 && !memcmp(name, "__wrap_", 7)) return dkb__heap_is_wrapped(name + 7, len - 7);
    if (dkb__heap_is_wrapped(name, len)) return false;
    if (in_list(name, len, LIBC, DKB_COUNTOF(LIBC))) return true;
    /* OpenMP: what the compiler emits, the getters, and the settings the
     * worker puts back before every call; not omp_set_schedule and the
     * other setters of state that would outlive a call, nor clocks */
    if (len > 5 && !memcmp(name, "GOMP_", 5)) return true;
    if (in_list(name, len, OPENMP, DKB_COUNTOF(OPENMP))) return true;
    if (len > 8 && !memcmp(name, "omp_get_", 8) && !in_list(name, len, OPENMP_NOT, DKB_COUNTOF(OPENMP_NOT))) return true;
    /* fortified forms of allowed functions: __memcpy_chk, __printf_chk */
    if (len > 6 && !memcmp(name, "__", 2) && !memcmp(name + len - 4, "_chk", 4)) {
        const char *base = name + 2;
        size_t bl = len - 6;
        if (in_list(base, bl, LIBC, DKB_COUNTOF(LIBC))) return true;
    }
    if (is_libm(name, len)) return true;
    /* __exp_finite, __log10f_finite (older glibc with -ffast-math) */
    if (len > 9 && !memcmp(name, "__", 2) && !memcmp(name + len - 7, "_finite", 7) && is_libm(name + 2, len - 9))
        return true;
    return false;
}

/* Run nm -D with one option over so; output in *out. */
static int run_nm(const char *so, const char *opt, char **out, dkb_error *err) {
    const char *nm = getenv("DKB_NM");
    if (!nm || !*nm) nm = "nm";
    char *argv[] = {(char *)nm, (char *)"-D", (char *)opt, (char *)so, NULL};
    int st, rc = dkb__run_capture(argv, 0, (size_t)64 << 20, out, &st, err);
    if (rc) return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        free(*out);
        *out = NULL;
        return dkb_fail(err, DKB_EIO, "%s -D %s %s failed (status %d)", nm, opt, so, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    return 0;
}

/* Append name to the list in detail (", "-separated; "..." when full). */
static void append_name(char *detail, size_t n, const char *name, size_t len, int *count) {
    size_t used = strlen(detail);
    (*count)++;
    if (used + len + 8 >= n) {
        if (used + 5 < n && !strstr(detail, ", ...")) strcat(detail, ", ...");
        return;
    }
    if (*count > 1) strcat(detail, ", ");
    strncat(detail, name, len);
}

static int symbols_check(const char *so, const char *entry, bool cuda, dkb_verdict *v, char *detail, size_t n,
                         dkb_error *err) {
    *v = DKB_VERDICT_HARNESS_ERROR;
    if (n) detail[0] = 0;
    char *undef = NULL, *def = NULL;
    int rc = run_nm(so, "--undefined-only", &undef, err);
    if (!rc) rc = run_nm(so, "--defined-only", &def, err);
    if (rc) {
        free(undef);
        free(def);
        return rc;
    }
    /* undefined: lines "                 U memcpy@GLIBC_2.14" (or w for weak) */
    char list[1024] = "";
    int bad = 0;
    for (char *line = undef; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        char *name = strrchr(line, ' ');
        name = name ? name + 1 : line;
        size_t len = strcspn(name, "@");
        if (len && !(cuda ? dkb__symbol_allowed_cuda(name) : dkb__symbol_allowed(name))) {
            /* list each name once */
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(len < 200 ? len : 200), name);
            int seen = 0;
            for (char *p = strstr(list, key); p && !seen; p = strstr(p + 1, key))
                seen = (p == list || p[-1] == ' ') && (p[strlen(key)] == 0 || p[strlen(key)] == ',');
            if (!seen) append_name(list, sizeof list, name, len, &bad);
        }
        line = end ? end + 1 : NULL;
    }
    /* defined: "0000000000001139 T dkb_candidate_full" */
    int has_entry = 0;
    for (char *line = def; line && *line && !has_entry;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        char type = 0, name[256];
        if (sscanf(line, "%*s %c %255s", &type, name) == 2 && (type == 'T' || type == 'W' || type == 'i')) {
            name[strcspn(name, "@")] = 0;
            has_entry = !strcmp(name, entry);
        }
        line = end ? end + 1 : NULL;
    }
    free(undef);
    free(def);
    if (bad) {
        *v = DKB_VERDICT_FORBIDDEN_SYMBOL;
        snprintf(detail, n, "imports %s (not on the allow-list: libc memory/string/printing, libm, %s)", list,
                 cuda ? "the CUDA runtime but device selection, limits, IPC and driver access" : "OpenMP");
    } else if (!has_entry) {
        *v = DKB_VERDICT_BAD_ENTRY;
        snprintf(detail, n, "does not define %s", entry);
    } else {
        *v = DKB_VERDICT_OK;
    }
    return 0;
}

int dkb__symbols_check(const char *so, const char *entry, dkb_verdict *v, char *detail, size_t n, dkb_error *err) {
    return symbols_check(so, entry, false, v, detail, n, err);
}

int dkb__symbols_check_cuda(const char *so, const char *entry, dkb_verdict *v, char *detail, size_t n,
                            dkb_error *err) {
    return symbols_check(so, entry, true, v, detail, n, err);
}
