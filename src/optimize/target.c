/* target.c: the table of `dkb optimize` / `dkb prompt` targets (target.h). */
#include "optimize/target.h"

#include <string.h>

#include "common/countof.h"   // defines: DKB_COUNTOF

static const dkb_opt_target targets[] = {
    {"c", "C11", "c", "c", DKB_CODE_C, "include/dkb/candidate.h", "cpu", NULL, 0},
    {"cuda", "CUDA C", "cu", "cuda", DKB_CODE_C, "include/dkb/candidate.h", "cuda", NULL, 1},
    {"python", "Python (PyTorch on the CPU)", "py", "python", DKB_CODE_PYTHON, "include/dkb/candidate.py", "cpu",
     "python", 0},
    {"triton", "Python (PyTorch and Triton on the GPU)", "py", "python", DKB_CODE_PYTHON, "include/dkb/candidate.py",
     "cuda", "python", 1},
};

const dkb_opt_target *dkb__opt_target_find(const char *name) {
    for (size_t i = 0; name && i < DKB_COUNTOF(targets); i++)
        if (!strcmp(targets[i].name, name)) return &targets[i];
    return NULL;
}

const char *dkb__opt_target_names(void) { return "c, cuda, python or triton"; }
