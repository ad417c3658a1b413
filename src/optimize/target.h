/* target.h: what each `dkb optimize` / `dkb prompt` target means: the
 * language the model writes, the candidate file's extension and fence, the
 * ABI shown in the prompt, and how the harness evaluates it (backend and
 * dkb eval --target). One table, so the prompt, the loop and the commands
 * agree. */
#ifndef DKB_OPTIMIZE_TARGET_H
#define DKB_OPTIMIZE_TARGET_H

#include "model/model.h"   // defines: dkb_code_lang

typedef struct dkb_opt_target {
    const char *name;         /* "c", "cuda", "python", "triton" */
    const char *language;     /* for the prompt: "C11", "CUDA C", ... */
    const char *ext;          /* candidate file extension: "c", "cu", "py" */
    const char *fence;        /* the reply's code block language */
    dkb_code_lang code;       /* which code blocks of a reply count */
    const char *abi_file;     /* the ABI file the prompt shows (include/...) */
    const char *backend;      /* dkb eval --backend: "cpu" or "cuda" */
    const char *eval_target;  /* dkb eval --target ("python", "triton"), or NULL */
    int gpu;                  /* 1: every evaluation needs a GPU */
    const char *toolchain;    /* the hardware section's line: how the code is built or run */
} dkb_opt_target;

/* The target called name, or NULL. */
const dkb_opt_target *dkb__opt_target_find(const char *name);

/* "c, cuda, python or triton": for usage lines. */
const char *dkb__opt_target_names(void);

#endif
