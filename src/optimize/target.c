/* target.c: the table of `dkb optimize` / `dkb prompt` targets (target.h). */
#include "optimize/target.h"

#include <string.h>

#include "common/countof.h"   // defines: DKB_COUNTOF

static const dkb_opt_target targets[] = {
    {"c", "C11", "c", "c", DKB_CODE_C, "include/dkb/candidate.h", "cpu", NULL, 0,
     "- Compiler: cc -std=c11 -O3 -march=native -fopenmp (OpenMP threads: env->threads)\n"},
    {"cuda", "CUDA C", "cu", "cuda", DKB_CODE_C, "include/dkb/candidate.h", "cuda", NULL, 1,
     "- Compiler: nvcc -std=c++17 -O3 -gencode arch=compute_90,code=[sm_90,compute_90] "
     "(one stream: dkb_cand_stream(env))\n"},
    {"python", "Python (PyTorch on the CPU)", "py", "python", DKB_CODE_PYTHON, "include/dkb/candidate.py", "cpu",
     "python", 0, "- Runtime: CPython with torch on the CPU (torch's intra-op threads: env.threads)\n"},
    {"triton", "Python (PyTorch and Triton on the GPU)", "py", "python", DKB_CODE_PYTHON, "include/dkb/candidate.py",
     "cuda", "triton", 1,
     "- Runtime: CPython with torch and Triton (kernels JIT-compiled in the untimed warm-up; one stream: "
     "env.stream)\n"},
};

const dkb_opt_target *dkb__opt_target_find(const char *name) {
    for (size_t i = 0; name && i < DKB_COUNTOF(targets); i++)
        if (!strcmp(targets[i].name, name)) return &targets[i];
    return NULL;
}

const char *dkb__opt_target_names(void) { return "c, cuda, python or triton"; }
