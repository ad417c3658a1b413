/* prompt.c: build the first prompt and the feedback messages of
 * `dkb optimize` from the templates (prompt.h). */
#include "optimize/prompt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/countof.h"       // defines: DKB_COUNTOF
#include "common/fsutil.h"        // defines: dkb__read_file
#include "optimize/budget.h"      // defines: dkb__opt_budget_context
#include "optimize/context.h"     // defines: dkb__opt_workload_context, dkb__opt_hardware_context
#include "optimize/target.h"      // defines: dkb__opt_target_find, dkb_opt_target
#include "optimize/template.h"    // defines: dkb__opt_render, dkb_opt_buf

/* The target called name (the commands accept only the table's names; an
 * unknown one reads as "c"). */
static const dkb_opt_target *target_of(const char *name) {
    const dkb_opt_target *t = dkb__opt_target_find(name);
    return t ? t : dkb__opt_target_find("c");
}

static int is_python(const dkb_opt_target *t) { return t->code == DKB_CODE_PYTHON; }

void dkb__opt_file_name(int qnum, dkb_mode mode, const char *target, char *buf, size_t n) {
    snprintf(buf, n, "q%02d.%s.%s", qnum, mode == DKB_MODE_CORE ? "core" : "full", target_of(target)->ext);
}

void dkb__opt_task_file_name(const dkb_opt_prompt_opts *o, int qnum, char *buf, size_t n) {
    if (o->sql_task) snprintf(buf, n, "%s.full.%s", o->sql_task, target_of(o->target)->ext);
    else dkb__opt_file_name(qnum, o->mode, o->target, buf, n);
}

static int read_source(const char *rel, char **out, dkb_error *err) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dkb__source_root(), rel);
    size_t len;
    int rc = dkb__read_file(path, 1u << 22, out, &len, err);
    if (rc) dkb_fail(err, rc, "%s: cannot read the source (the prompt shows it)", path);
    return rc;
}

/* How candidate.h applies to a .cu file (docs/harness.md, "CUDA candidates"):
 * shown before the header for target "cuda", as a C comment in its block. */
static const char CUDA_ABI[] =
    "/* CUDA target: how this ABI applies to your .cu file.\n"
    " *\n"
    " * Build: nvcc -std=c++17 -O3 -gencode arch=compute_90,code=[sm_90,compute_90]\n"
    " * -shared -cudart shared; the file is CUDA C++, the entry point keeps C linkage\n"
    " * through this header's extern \"C\". Include only dkb/candidate.h (and, if\n"
    " * you like, the optional toolkit dkb/cand_util.h, dkb/cand_cuda.cuh, below)\n"
    " * and system or CUDA toolkit headers (CUB and Thrust included).\n"
    " *\n"
    " * Memory: the descriptors (dkb_cand_set, dkb_cand_vec, dkb_cand_scalar,\n"
    " * dkb_cand_dict, names, n, cap, scale) are HOST memory; the data they point to\n"
    " * is on the GPU:\n"
    " * - core mode: every vector's `data` and `bytes`, inputs and outputs alike, are\n"
    " *   DEVICE pointers (read-only inputs; outputs allocated by the harness with\n"
    " *   `cap` elements and filled with garbage before every call). Write the\n"
    " *   output elements on the device and set `n` (and `nbytes`) in the host\n"
    " *   descriptor before you return (copy a count back if a kernel computes it).\n"
    " * - full mode: every column's `data`/`bytes` is a DEVICE pointer (resident,\n"
    " *   read-only, shared with the baseline); dictionaries, parameters and the\n"
    " *   whole dkb_cand_result are HOST memory: copy your small result back and\n"
    " *   fill the result columns and `nrows` on the host.\n"
    " * Scalars and parameters are host values: pass them to kernels as arguments.\n"
    " *\n"
    " * Stream: launch every kernel, async copy and cudaMallocAsync/cudaFreeAsync on\n"
    " * dkb_cand_stream(env) (env->stream). The harness times from before the call\n"
    " * until the device is idle after it (cudaDeviceSynchronize), so all work you\n"
    " * start counts; free what you allocate before returning.\n"
    " *\n"
    " * Allowed: the CUDA runtime API, CUB and Thrust (cub/..., thrust/...: e.g.\n"
    " * cub::DeviceRadixSort, DeviceSelect, DeviceScan, BlockReduce, WarpReduce;\n"
    " * pass dkb_cand_stream(env) to them), and __device__, __constant__ global\n"
    " * variables. No state survives a call: before every call each such variable\n"
    " * is put back to its value at load, the stream's attributes and the kernel\n"
    " * attributes you set (cudaFuncSetAttribute) are reset; after the call\n"
    " * everything it allocated (cudaMalloc*, cudaMallocAsync, cudaMallocHost) is\n"
    " * overwritten and freed, so memory you allocate holds garbage at first.\n"
    " * Allocate in the call, not in static constructors.\n"
    " *\n"
    " * Not allowed (the build rejects it): __managed__ variables and managed\n"
    " * memory, CUDA arrays, memory pools of your own and pool settings, the driver\n"
    " * API (cu* functions), cudaDeviceReset, another device (cudaSetDevice),\n"
    " * cudaIpc*, device limits and cache configuration, host memory\n"
    " * registration, host callbacks (cudaLaunchHostFunc, cudaStreamAddCallback,\n"
    " * graph host nodes), loading modules at run time (cudaLibrary*), inline\n"
    " * assembly, files and threads. A kernel fault is judged a crash, a kernel\n"
    " * that never ends a timeout. */\n\n";

/* How candidate.py applies on the GPU (target "triton"), shown before it. */
static const char TRITON_ABI[] =
    "# Triton target: how this ABI applies to your .py file on the GPU.\n"
    "#\n"
    "# env.device is \"cuda\": every column, input and output tensor is a CUDA\n"
    "# tensor, a zero-copy view of the harness's resident device memory\n"
    "# (read-only inputs). Launch your @triton.jit kernels and torch work on\n"
    "# env.stream (a torch.cuda.Stream): the harness times from before the call\n"
    "# until the device is idle after it, so all work you start counts. Triton\n"
    "# compiles a kernel the first time it runs: the harness's untimed warm-up\n"
    "# calls pay for that, with a compile cache of the row's own. Your module\n"
    "# runs afresh in every call: define kernels at module level (no default\n"
    "# arguments, plain decorator arguments) and a later call launches them\n"
    "# without Triton's per-kernel set-up; prefer fixed block sizes to\n"
    "# triton.autotune, which tunes again in every call. Allowed:\n"
    "# torch, triton (triton.language as tl), numpy, math. The report says how\n"
    "# much of your device time was in your own Triton kernels and how much in\n"
    "# torch's library kernels.\n\n";

/* Append the optional toolkit header rel (include/dkb/...) to b, introduced
 * as optional; nothing when the tree has none. */
static void append_toolkit(dkb_opt_buf *b, const char *rel, const char *what) {
    char *text = NULL;
    dkb_error e = {0};
    if (read_source(rel, &text, &e)) return;
    dkb__opt_buf_puts(b, "\n/* ---- optional: ");
    dkb__opt_buf_puts(b, rel + strlen("include/"));
    dkb__opt_buf_puts(b, " (");
    dkb__opt_buf_puts(b, what);
    dkb__opt_buf_puts(b, "; a candidate needs nothing but candidate.h, and may #include this too) ---- */\n");
    dkb__opt_buf_puts(b, text);
    free(text);
}

int dkb__opt_candidate_abi(const char *target, char **out, dkb_error *err) {
    *out = NULL;
    char *hdr = NULL;
    const dkb_opt_target *t = target_of(target);
    int rc = read_source(t->abi_file, &hdr, err);
    if (rc) return rc;
    int cuda = !strcmp(t->name, "cuda");
    dkb_opt_buf b = {0};
    if (cuda) dkb__opt_buf_puts(&b, CUDA_ABI);
    if (!strcmp(t->name, "triton")) dkb__opt_buf_puts(&b, TRITON_ABI);
    dkb__opt_buf_puts(&b, hdr);
    free(hdr);
    if (!is_python(t)) append_toolkit(&b, "include/dkb/cand_util.h", "dates, decimals, searches, result writers");
    if (cuda) append_toolkit(&b, "include/dkb/cand_cuda.cuh", "device helpers: error checks, grids, chunk bounds, text");
    *out = dkb__opt_buf_take(&b);
    return *out ? 0 : dkb_fail(err, DKB_ENOMEM, "candidate ABI for target %s: out of memory", target);
}

/* The function starting at the line "static int NAME(" through the next line
 * that is "}", appended to b; 0 when not found. */
static int append_function(dkb_opt_buf *b, const char *src, const char *name) {
    char head[64];
    snprintf(head, sizeof head, "\nstatic int %s(", name);
    const char *start = strstr(src, head);
    if (!start) return 0;
    start++;
    const char *end = strstr(start, "\n}\n");
    if (!end) return 0;
    dkb__opt_buf_add(b, start, (size_t)(end - start) + 3);
    return 1;
}

int dkb__opt_plan_source(int qnum, dkb_mode mode, char **out, dkb_error *err) {
    char rel[64], *src = NULL;
    snprintf(rel, sizeof rel, "src/queries/q%02d.c", qnum);
    *out = NULL;
    int rc = read_source(rel, &src, err);
    if (rc) return rc;
    if (mode == DKB_MODE_FULL) {
        *out = src;
        return 0;
    }
    dkb_opt_buf b = {0};
    const char *end = strstr(src, "*/");
    if (end) {
        dkb__opt_buf_add(&b, src, (size_t)(end - src) + 2);
        dkb__opt_buf_puts(&b, "\n\n");
    }
    int ok = append_function(&b, src, "prepare");
    dkb__opt_buf_puts(&b, "\n");
    ok &= append_function(&b, src, "core");
    free(src);
    *out = dkb__opt_buf_take(&b);
    if (!*out) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", rel);
    if (!ok) {
        free(*out);
        *out = NULL;
        return dkb_fail(err, DKB_EPARSE, "%s: no 'static int prepare(' or 'static int core(' function found", rel);
    }
    return 0;
}

/* What a candidate returns, by language ({{status_rules}} of the task). */
static const char C_STATUS[] =
    "Return 0 when it worked. When it cannot finish, return one of candidate.h's `DKB_CAND_E*` codes "
    "(`DKB_CAND_EINVAL`, `DKB_CAND_ENOMEM`, `DKB_CAND_ECUDA`, `DKB_CAND_ECAP`, `DKB_CAND_EINTERNAL`): the "
    "feedback then names the failure. Any nonzero return fails the candidate.";
static const char PYTHON_STATUS[] =
    "Return the answer as candidate.py's docstrings say (full mode: the result's columns; core mode: what "
    "each output holds). When it cannot finish, raise an exception: the feedback then names it. An answer "
    "of the wrong shape fails the candidate.";

/* Render template `name` with vars into *out. */
static int render_file(const char *dir, const char *name, const dkb_opt_var *vars, int n, char **out,
                       dkb_error *err) {
    char *text = NULL;
    int rc = dkb__opt_template_load(dir, name, &text, err);
    if (!rc) rc = dkb__opt_render(name, text, vars, n, out, err);
    free(text);
    return rc;
}

static int reply_format(const dkb_opt_prompt_opts *o, int qnum, char **out, dkb_error *err) {
    char file[80];
    dkb__opt_task_file_name(o, qnum, file, sizeof file);
    const dkb_opt_var vars[] = {{"file", file}, {"fence", target_of(o->target)->fence}};
    return render_file(o->templates, "reply_format.md", vars, 2, out, err);
}

int dkb__opt_build_prompt(const dkb_opt_prompt_opts *o, const dkb_query *q, const dkb_store *db,
                          const dkb_params *p, char **system, char **user, dkb_error *err) {
    *system = *user = NULL;
    char *sql = NULL, *plan = NULL, *cand_h = NULL, *wl = NULL, *hw = NULL, *wl_sec = NULL, *hw_sec = NULL,
         *fmt = NULL, *bud = NULL, *bud_sec = NULL;
    int rc = 0;
    const dkb_opt_target *tg = target_of(o->target);
    const dkb_opt_var sys_vars[] = {{"language", tg->language}};
    if ((rc = render_file(o->templates, "system.md", sys_vars, 1, system, err))) goto done;
    sql = dkb_query_sql(q, p);
    if (!sql) {
        rc = dkb_fail(err, DKB_ENOMEM, "%s: no SQL", q->name);
        goto done;
    }
    if (o->sql_task) {
        if (!o->plan_source || !(plan = strdup(o->plan_source))) {
            rc = dkb_fail(err, DKB_ENOMEM, "%s: no TensorPlan program", q->name);
            goto done;
        }
    } else if ((rc = dkb__opt_plan_source(q->number, o->mode, &plan, err))) {
        goto done;
    }
    if ((rc = dkb__opt_candidate_abi(o->target, &cand_h, err))) goto done;
    if (o->mem_budget && o->mode == DKB_MODE_FULL && !o->sql_task) {
        /* the budget: measured under it (budget.h), and the streaming helper after the ABI */
        if ((rc = dkb__opt_budget_context(q, db, p, o->mem_budget, !strcmp(o->target, "cuda"), &bud, err))) goto done;
        const dkb_opt_var v[] = {{"budget_context", bud}};
        if ((rc = render_file(o->templates, "budget.md", v, 1, &bud_sec, err))) goto done;
        dkb_opt_buf ab = {0};
        dkb__opt_buf_puts(&ab, cand_h);
        append_toolkit(&ab, "include/dkb/cand_stream.h", "visit columns whole or load by load under a budget");
        free(cand_h);
        if (!(cand_h = dkb__opt_buf_take(&ab))) {
            rc = dkb_fail(err, DKB_ENOMEM, "%s: out of memory", q->name);
            goto done;
        }
    }
    if (o->workload) {
        if ((rc = dkb__opt_workload_context(q, db, p, &wl, err))) goto done;
        const dkb_opt_var v[] = {{"workload_context", wl}};
        if ((rc = render_file(o->templates, "workload.md", v, 1, &wl_sec, err))) goto done;
    }
    if (o->hardware) {
        dkb_error he = {0};
        if ((rc = dkb__opt_hardware_context(o->target, &hw, &he))) {
            if (rc != DKB_ENOENT || o->need_gpu || !tg->gpu) {
                rc = dkb_fail(err, rc, "%s", he.msg);
                goto done;
            }
            /* dkb prompt on a machine without a GPU: the section says so */
            rc = asprintf(&hw,
                          "- GPU: none found where this prompt was made (%s); dkb optimize --target %s "
                          "describes the GPU it runs on\n",
                          he.msg, tg->name) < 0
                     ? dkb_fail(err, DKB_ENOMEM, "hardware context: out of memory")
                     : 0;
            if (rc) {
                hw = NULL;
                goto done;
            }
        }
        const dkb_opt_var v[] = {{"hardware_context", hw}};
        if ((rc = render_file(o->templates, "hardware.md", v, 1, &hw_sec, err))) goto done;
    }
    if ((rc = reply_format(o, q->number, &fmt, err))) goto done;
    char file[80];
    dkb__opt_task_file_name(o, q->number, file, sizeof file);
    const char *mode = o->mode == DKB_MODE_CORE ? "core" : "full";
    const dkb_opt_var vars[] = {
        {"query", q->name},
        {"title", q->title},
        {"mode", mode},
        {"language", tg->language},
        {"file", file},
        {"entry", is_python(tg) ? (o->mode == DKB_MODE_CORE ? "core" : "full")
                                : (o->mode == DKB_MODE_CORE ? "dkb_candidate_core" : "dkb_candidate_full")},
        {"abi_name", tg->abi_file + strlen("include/")},
        {"abi_file", tg->abi_file},
        {"abi_fence", is_python(tg) ? "python" : "c"},
        {"status_rules", is_python(tg) ? PYTHON_STATUS : C_STATUS},
        {"sql", sql},
        {"plan_source", plan},
        {"candidate_h", cand_h},
        {"workload_section", wl_sec ? wl_sec : ""},
        {"hardware_section", hw_sec ? hw_sec : ""},
        {"budget_section", bud_sec ? bud_sec : ""},
        {"reply_format", fmt},
    };
    rc = render_file(o->templates, o->sql_task ? "task_sql.md" : o->mode == DKB_MODE_CORE ? "task_core.md" : "task_full.md", vars,
                     (int)DKB_COUNTOF(vars), user, err);
done:
    free(sql);
    free(plan);
    free(cand_h);
    free(wl);
    free(hw);
    free(wl_sec);
    free(hw_sec);
    free(fmt);
    free(bud);
    free(bud_sec);
    if (rc) {
        free(*system);
        free(*user);
        *system = *user = NULL;
    }
    return rc;
}

char *dkb__opt_trim(const char *s, size_t max) {
    if (!s) return strdup("");
    size_t n = strlen(s);
    if (n <= max) return strdup(s);
    static const char MARK[] = "\n[... trimmed ...]\n";
    size_t keep = max > sizeof MARK ? max - sizeof MARK : 0, head = keep * 2 / 3, tail = keep - head;
    char *out = malloc(max + 1);
    if (!out) return NULL;
    memcpy(out, s, head);
    memcpy(out + head, MARK, sizeof MARK - 1);
    memcpy(out + head + sizeof MARK - 1, s + n - tail, tail);
    out[head + sizeof MARK - 1 + tail] = '\0';
    return out;
}

int dkb__opt_feedback(const dkb_opt_prompt_opts *o, int qnum, const dkb_opt_feedback_in *in, char **out,
                      dkb_error *err) {
    *out = NULL;
    char round[16], rounds[16];
    snprintf(round, sizeof round, "%d", in->round);
    snprintf(rounds, sizeof rounds, "%d", in->rounds);
    dkb_opt_buf detail = {0}, log = {0}, checks = {0}, timings = {0}, best = {0};
    if (in->detail && *in->detail) dkb__opt_buf_printf(&detail, "\n%s\n", in->detail);
    if (in->compile_log && *in->compile_log) {
        char *t = dkb__opt_trim(in->compile_log, 4000);
        dkb__opt_buf_printf(&log, "\nCompiler diagnostics (trimmed):\n```\n%s\n```\n", t ? t : "");
        free(t);
    }
    if (in->checks && *in->checks) dkb__opt_buf_printf(&checks, "\n%s", in->checks);
    if (isfinite(in->baseline_ms) || isfinite(in->candidate_ms)) {
        dkb__opt_buf_puts(&timings, "\nTimings (median):");
        if (isfinite(in->candidate_ms)) dkb__opt_buf_printf(&timings, " yours %.3f ms,", in->candidate_ms);
        if (isfinite(in->baseline_ms)) dkb__opt_buf_printf(&timings, " baseline %.3f ms,", in->baseline_ms);
        if (isfinite(in->floor_ms)) dkb__opt_buf_printf(&timings, " bandwidth floor %.3f ms,", in->floor_ms);
        if (isfinite(in->candidate_ms) && isfinite(in->baseline_ms) && in->candidate_ms > 0)
            dkb__opt_buf_printf(&timings, " speedup %.2fx", in->baseline_ms / in->candidate_ms);
        if (timings.s && timings.s[timings.n - 1] == ',') timings.s[--timings.n] = '\0';
        dkb__opt_buf_puts(&timings, ".\n");
    }
    if (isfinite(in->best_speedup)) dkb__opt_buf_printf(&best, "\nBest valid speedup so far: %.2fx.\n", in->best_speedup);
    char *fmt = NULL;
    int rc = reply_format(o, qnum, &fmt, err);
    char *d = dkb__opt_buf_take(&detail), *l = dkb__opt_buf_take(&log), *c = dkb__opt_buf_take(&checks),
         *t = dkb__opt_buf_take(&timings), *b = dkb__opt_buf_take(&best);
    if (!rc && (!d || !l || !c || !t || !b)) rc = dkb_fail(err, DKB_ENOMEM, "feedback: out of memory");
    if (!rc) {
        const dkb_opt_var vars[] = {{"round", round},         {"rounds", rounds}, {"verdict", in->cls},
                                    {"verdict_text", in->verdict_text}, {"detail", d}, {"compile_log", l},
                                    {"checks", c},            {"timings", t},     {"best", b},
                                    {"reply_format", fmt}};
        rc = render_file(o->templates, "feedback.md", vars, (int)DKB_COUNTOF(vars), out, err);
    }
    free(fmt);
    free(d);
    free(l);
    free(c);
    free(t);
    free(b);
    return rc;
}
