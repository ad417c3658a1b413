/* loop.c: the repair loop of `dkb optimize` (loop.h): prompts, model
 * requests on a pool of threads, one evaluation at a time, feedback,
 * trajectory records, resume, limits. */
#include "optimize/loop.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"       // defines: dkb__mkdir_p, dkb__path_join, dkb__rm_rf
#include "common/timing.h"       // defines: dkb__now_s
#include "dkb/query.h"
#include "dkb/store.h"
#include "dkb/tensor.h"          // defines: dkb_tp_device_query
#include "harness/eval.h"        // defines: dkb__eval_run, dkb_eval_results
#include "harness/harness_cuda.h" // defines: dkb__eval_cuda_devices
#include "harness/report.h"      // defines: dkb__results_write
#include "optimize/prompt.h"     // defines: dkb__opt_build_prompt, dkb__opt_feedback
#include "optimize/target.h"     // defines: dkb__opt_target_find (language, files, backend of o->target)
#include "optimize/template.h"   // defines: dkb_opt_buf, dkb__opt_templates_dir
#include "optimize/traj.h"       // defines: dkb_traj
#include "sql/task.h"            // defines: dkb__sql_task_plan (a SQL task, o->sql)

typedef struct task {
    const dkb_query *q;
    dkb_mode mode;
    const char *mode_name;
    char file[80];
    char *system, *user;
    char prompt_hash[65];
} task;

typedef struct run {
    const dkb_opt_opts *o;
    dkb_opt_prompt_opts po;
    dkb_traj traj;
    cJSON *records;          /* loaded at start (resume) */
    dkb_model *model;
    task *tasks;
    int ntasks, next_task;
    double sf;
    double start;
    pthread_mutex_t lock;    /* next_task, stats, stop */
    pthread_mutex_t eval_lock;   /* gpu_busy: one evaluation at a time per device */
    pthread_cond_t gpu_free;
    int ngpu;                /* devices evaluations spread over (1: the CPU, or one GPU) */
    uint64_t gpu_busy;       /* bit g: an evaluation runs on GPU g */
    pthread_mutex_t event_lock;  /* one call of o->progress at a time */
    dkb_opt_outcome stats;
    int stop;
    dkb__sql_task *sql;      /* o->sql planned (one task, full mode) */
    char *sql_program;       /* its TensorPlan program, the prompt's baseline */
} run;

static double num(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *str(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int same_task(const cJSON *rec, const task *t, const char *target) {
    return !strcmp(str(rec, "query"), t->q->name) && !strcmp(str(rec, "mode"), t->mode_name) &&
           !strcmp(str(rec, "target"), target);
}

static cJSON *new_record(const char *type, const task *t, const char *target) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "type", type);
    cJSON_AddStringToObject(r, "query", t->q->name);
    cJSON_AddStringToObject(r, "mode", t->mode_name);
    cJSON_AddStringToObject(r, "target", target);
    return r;
}

/* ---- limits ---- */

/* 1 when the loop may send another request; else sets the stop reason. */
static int may_ask(run *R) {
    const dkb_opt_opts *o = R->o;
    pthread_mutex_lock(&R->lock);
    if (!R->stop) {
        dkb_opt_outcome *s = &R->stats;
        if (o->max_tokens > 0 && s->tokens_in + s->tokens_out >= o->max_tokens)
            snprintf(s->stopped, sizeof s->stopped, "--max-tokens %lld reached (%lld tokens used)",
                     (long long)o->max_tokens, (long long)(s->tokens_in + s->tokens_out));
        else if (o->max_cost > 0 && s->cost_usd >= o->max_cost)
            snprintf(s->stopped, sizeof s->stopped, "--max-cost %.2f USD reached (%.4f USD spent)", o->max_cost,
                     s->cost_usd);
        else if (o->max_wall > 0 && dkb__now_s() - R->start >= o->max_wall)
            snprintf(s->stopped, sizeof s->stopped, "--max-wall %g s reached", o->max_wall);
        R->stop = s->stopped[0] != '\0';
    }
    int ok = !R->stop;
    pthread_mutex_unlock(&R->lock);
    return ok;
}

/* ---- one attempt: its data, its record, the best-speedup rule ---- */

int dkb__opt_improves(int valid, double raw, double best) {
    return valid && isfinite(raw) && (!isfinite(best) || best < 0 || raw > best);
}

/* One request to the model and what became of its reply. ask() fills it;
 * attempt_record writes it to the trajectory, the one place that names its
 * members there (traj.h lists them), and attempt_read takes a record of a
 * resumed run back. Strings are malloc'd; NULL ones are left out of the
 * record. */
typedef struct attempt {
    int round, sample;          /* 1-based round, 0-based sample */
    /* the request */
    char *reply;                /* the model's text ("" when the request failed) */
    int64_t tokens_in, tokens_out;
    double latency_s, cost_usd;
    int attempts, http_status;
    char finish_reason[32];
    int fatal;                  /* the endpoint refuses every request: the run stops and asks again on resume */
    /* the reply's code, and what became of it */
    char *code;                 /* NULL: the reply had none (then nothing was evaluated) */
    char *file;                 /* where the code was written, relative to the run directory */
    char cls[32];               /* a verdict name, "missing", "harness_error", "model_error",
                                 * "no_code" or "truncated_reply" */
    char *verdict_text;         /* "gave a wrong answer" */
    char *detail;               /* one line ("" when nothing to say) */
    int valid;                  /* the harness scored it valid */
    int scored;                 /* the harness returned its row: the members below, up to
                                 * attribution, are its */
    char *compile_log, *checks;
    double baseline_ms, candidate_ms, floor_ms, raw_speedup;   /* NaN: unknown */
    char sha256[65];
    dkb_attribution attribution;   /* CUDA: own vs library kernel time (harness/attrib.h) */
    /* the next user message: NULL after a model error (the same conversation is sent again) */
    char *feedback, *feedback_error;
} attempt;

static void attempt_init(attempt *a, int round, int sample) {
    memset(a, 0, sizeof *a);
    a->round = round;
    a->sample = sample;
    a->baseline_ms = a->candidate_ms = a->floor_ms = a->raw_speedup = NAN;
}

static void attempt_free(attempt *a) {
    free(a->reply);
    free(a->code);
    free(a->file);
    free(a->verdict_text);
    free(a->detail);
    free(a->compile_log);
    free(a->checks);
    free(a->feedback);
    free(a->feedback_error);
    memset(a, 0, sizeof *a);
}

/* *dst = a copy of s (NULL stays NULL); an out-of-memory copy is left NULL,
 * so the member is absent from the record. */
static void set_str(char **dst, const char *s) {
    free(*dst);
    *dst = s ? strdup(s) : NULL;
}

static void set_cls(attempt *a, const char *cls) { snprintf(a->cls, sizeof a->cls, "%s", cls); }

/* The record of a, as the trajectory keeps it (type "attempt"). */
static cJSON *attempt_record(const attempt *a, const task *t, const char *target) {
    cJSON *r = new_record("attempt", t, target);
    cJSON_AddNumberToObject(r, "round", a->round);
    cJSON_AddNumberToObject(r, "sample", a->sample);
    cJSON_AddStringToObject(r, "prompt_sha256", t->prompt_hash);
    cJSON_AddStringToObject(r, "reply", a->reply ? a->reply : "");
    cJSON_AddNumberToObject(r, "tokens_in", (double)a->tokens_in);
    cJSON_AddNumberToObject(r, "tokens_out", (double)a->tokens_out);
    cJSON_AddNumberToObject(r, "latency_s", a->latency_s);
    cJSON_AddNumberToObject(r, "cost_usd", a->cost_usd);
    cJSON_AddNumberToObject(r, "attempts", a->attempts);
    cJSON_AddNumberToObject(r, "http_status", a->http_status);
    cJSON_AddStringToObject(r, "finish_reason", a->finish_reason);
    if (a->fatal) cJSON_AddTrueToObject(r, "fatal");
    if (a->code) cJSON_AddStringToObject(r, "code", a->code);
    if (a->file) cJSON_AddStringToObject(r, "file", a->file);
    cJSON_AddStringToObject(r, "class", a->cls);
    if (a->verdict_text) cJSON_AddStringToObject(r, "verdict_text", a->verdict_text);
    cJSON_AddBoolToObject(r, "valid", a->valid);
    cJSON_AddStringToObject(r, "detail", a->detail ? a->detail : "");
    if (a->scored) {
        cJSON_AddStringToObject(r, "compile_log", a->compile_log ? a->compile_log : "");
        cJSON_AddStringToObject(r, "checks", a->checks ? a->checks : "");
        cJSON_AddNumberToObject(r, "baseline_ms", a->baseline_ms);
        cJSON_AddNumberToObject(r, "candidate_ms", a->candidate_ms);
        cJSON_AddNumberToObject(r, "floor_ms", a->floor_ms);
        cJSON_AddNumberToObject(r, "raw_speedup", a->raw_speedup);
        cJSON_AddStringToObject(r, "sha256", a->sha256);
        if (a->attribution.recorded || a->attribution.note[0])
            dkb__attrib_add_json(r, "attribution", &a->attribution);
    }
    if (a->feedback_error) cJSON_AddStringToObject(r, "feedback_error", a->feedback_error);
    if (a->feedback) cJSON_AddStringToObject(r, "feedback", a->feedback);
    return r;
}

static const char *str_or_null(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* a from the record rec of attempt (round, sample) of a resumed run
 * (attempt_record's inverse; a member the record lacks keeps attempt_init's
 * value). */
static void attempt_read(attempt *a, const cJSON *rec, int round, int sample) {
    attempt_init(a, round, sample);
    set_str(&a->reply, str_or_null(rec, "reply"));
    a->tokens_in = (int64_t)(isfinite(num(rec, "tokens_in")) ? num(rec, "tokens_in") : 0);
    a->tokens_out = (int64_t)(isfinite(num(rec, "tokens_out")) ? num(rec, "tokens_out") : 0);
    a->latency_s = num(rec, "latency_s");
    a->cost_usd = num(rec, "cost_usd");
    a->attempts = isfinite(num(rec, "attempts")) ? (int)num(rec, "attempts") : 0;
    a->http_status = isfinite(num(rec, "http_status")) ? (int)num(rec, "http_status") : 0;
    snprintf(a->finish_reason, sizeof a->finish_reason, "%s", str(rec, "finish_reason"));
    a->fatal = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "fatal"));
    set_str(&a->code, str_or_null(rec, "code"));
    set_str(&a->file, str_or_null(rec, "file"));
    set_cls(a, str(rec, "class"));
    set_str(&a->verdict_text, str_or_null(rec, "verdict_text"));
    set_str(&a->detail, str_or_null(rec, "detail"));
    a->valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "valid"));
    a->scored = cJSON_HasObjectItem(rec, "raw_speedup");
    set_str(&a->compile_log, str_or_null(rec, "compile_log"));
    set_str(&a->checks, str_or_null(rec, "checks"));
    a->baseline_ms = num(rec, "baseline_ms");
    a->candidate_ms = num(rec, "candidate_ms");
    a->floor_ms = num(rec, "floor_ms");
    a->raw_speedup = num(rec, "raw_speedup");
    snprintf(a->sha256, sizeof a->sha256, "%s", str(rec, "sha256"));
    dkb__attrib_from_json(rec, "attribution", &a->attribution);
    set_str(&a->feedback, str_or_null(rec, "feedback"));
    set_str(&a->feedback_error, str_or_null(rec, "feedback_error"));
}

/* The failing checks of an evaluation with the parameters of their seeds. */
static char *checks_text(const run *R, const task *t, const cJSON *checks) {
    dkb_opt_buf b = {0};
    int shown = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, checks) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok")) || shown >= 3) continue;
        double seed = num(c, "seed");
        if (!shown) dkb__opt_buf_puts(&b, "Failing checks (parameters, then the first difference):\n");
        shown++;
        dkb__opt_buf_printf(&b, "- seed %.0f:", seed);
        dkb_params p;
        dkb_error e = {0};
        if (isfinite(seed) && !dkb_query_params(t->q, (uint64_t)seed, R->sf, NULL, 0, &p, &e)) {
            for (int i = 0; i < p.n; i++) {
                char v[64];
                dkb_param_text(&p.v[i], v, sizeof v);
                dkb__opt_buf_printf(&b, " %s=%s", p.v[i].name, v);
            }
        }
        dkb__opt_buf_printf(&b, "\n  %s\n", str(c, "message"));
    }
    return dkb__opt_buf_take(&b);
}

/* The harness's options for evaluating task t: the candidates in dir (or
 * none: the baseline alone), the results in out. */
static dkb_eval_opts eval_opts(const dkb_opt_opts *o, const task *t, const char *dir, const char *out,
                               const char *command_line) {
    return (dkb_eval_opts){.dir = dir, .store = o->store, .out = out, .exe = o->exe,
                           .backend = dkb__opt_target_find(o->target)->backend,
                           .target = dkb__opt_target_find(o->target)->eval_target, .modes = 1u << t->mode,
                           .queries = o->sql ? NULL : t->q->name, .sql = o->sql, .nseeds = o->nseeds, .threshold = o->threshold,
                           .threads = o->threads, .timeout_s = o->timeout_s, .warmup = o->warmup,
                           .min_runs = o->min_runs, .min_seconds = o->min_seconds, .command_line = command_line,
                           .mem_budget = o->mem_budget,
                           .no_verify = true /* verified once, in dkb__opt_run */};
}

/* A device for one evaluation, waited for (every one busy: the jobs'
 * evaluations queue); -1 means the only one (the CPU, or one GPU). */
static int device_take(run *R) {
    pthread_mutex_lock(&R->eval_lock);
    for (;;) {
        for (int g = 0; g < R->ngpu; g++)
            if (!(R->gpu_busy >> g & 1)) {
                R->gpu_busy |= 1ull << g;
                pthread_mutex_unlock(&R->eval_lock);
                return R->ngpu > 1 ? g : -1;
            }
        pthread_cond_wait(&R->gpu_free, &R->eval_lock);
    }
}

static void device_give(run *R, int g) {
    pthread_mutex_lock(&R->eval_lock);
    R->gpu_busy &= ~(1ull << (g < 0 ? 0 : g));
    pthread_cond_signal(&R->gpu_free);
    pthread_mutex_unlock(&R->eval_lock);
}

/* Evaluate a->code as this task's candidate; fill a's verdict members. */
static void evaluate(run *R, const task *t, attempt *a) {
    const dkb_opt_opts *o = R->o;
    char rel[128];
    snprintf(rel, sizeof rel, "work/%s.%s/r%02d.s%02d", t->q->name, t->mode_name, a->round, a->sample);
    char *dir = dkb__path_join(o->out, rel), *cand = dir ? dkb__path_join(dir, "cand") : NULL,
         *res_dir = dir ? dkb__path_join(dir, "eval") : NULL, *file = cand ? dkb__path_join(cand, t->file) : NULL;
    dkb_error err = {0};
    FILE *f = NULL;
    if (!file) {
        dkb_fail(&err, DKB_ENOMEM, "out of memory");
    } else {
        dkb__rm_rf(dir);
        if (!dkb__mkdir_p(cand, &err)) {
            f = fopen(file, "w");
            if (!f || fputs(a->code, f) < 0 || fclose(f))
                dkb_fail(&err, DKB_EIO, "%s: cannot write the candidate", file);
        }
    }
    if (file) set_str(&a->file, file + strlen(o->out) + 1);
    if (err.code) {
        set_cls(a, "harness_error");
        set_str(&a->detail, err.msg);
        goto done;
    }
    dkb_eval_opts eo = eval_opts(o, t, cand, res_dir, "dkb optimize (one candidate)");
    dkb_eval_results res;
    int g = device_take(R);
    eo.on_gpu = g + 1;
    int rc = dkb__eval_run(&eo, NULL, &res, &err);
    if (!rc) dkb__results_write(&res, NULL);
    device_give(R, g);
    if (rc || res.n != 1) {
        set_cls(a, "harness_error");
        set_str(&a->detail, rc ? err.msg : "the harness returned no row");
    } else {
        const dkb_eval_item *it = &res.items[0];
        set_cls(a, dkb__eval_class(it));
        set_str(&a->verdict_text, it->missing ? "was not found by the harness" : dkb__verdict_text(it->verdict));
        a->valid = it->score.valid;
        set_str(&a->detail, it->detail ? it->detail : "");
        a->scored = 1;
        a->compile_log = dkb__opt_trim(it->compile_log, 4000);
        a->checks = it->checks ? checks_text(R, t, it->checks) : NULL;
        a->baseline_ms = it->baseline.median;
        a->candidate_ms = it->candidate.median;
        a->floor_ms = it->floor_ms;
        a->raw_speedup = it->score.raw_speedup;
        snprintf(a->sha256, sizeof a->sha256, "%s", it->sha256);
        a->attribution = it->attribution;
    }
    dkb__eval_results_free(&res);
done:
    free(dir);
    free(cand);
    free(res_dir);
    free(file);
}

typedef struct history {
    dkb_model_msg *msgs;
    char **owned;
    int n, cap;
} history;

static void history_push(history *h, const char *role, const char *content) {
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 8;
        dkb_model_msg *m = realloc(h->msgs, (size_t)cap * sizeof *m);
        char **ow = m ? realloc(h->owned, (size_t)cap * sizeof *ow) : NULL;
        if (m) h->msgs = m;
        if (!ow) return;   /* out of memory: the message is dropped */
        h->owned = ow;
        h->cap = cap;
    }
    h->owned[h->n] = strdup(content ? content : "");
    h->msgs[h->n] = (dkb_model_msg){role, h->owned[h->n]};
    h->n++;
}

static void history_free(history *h) {
    for (int i = 0; i < h->n; i++) free(h->owned[i]);
    free(h->msgs);
    free(h->owned);
}

/* 1 when a failed request says the endpoint will refuse every request:
 * HTTP 401/403 (the key), 404 (the URL or the model name), or no HTTP
 * answer at all after the client's retries (unreachable, no libcurl). A
 * timeout, a 400 or a failing command are not: other requests may pass. */
static int endpoint_unusable(const dkb_opt_opts *o, const dkb_model_reply *reply) {
    if (o->model.cmd) return 0;
    int st = reply->http_status;
    if (st == 401 || st == 403 || st == 404) return 1;
    return st == 0 && strcmp(reply->finish_reason, "timeout") != 0;
}

/* Tell the caller (one event at a time). */
static void report(run *R, const dkb_opt_event *ev) {
    if (!R->o->progress) return;
    pthread_mutex_lock(&R->event_lock);
    R->o->progress(R->o->progress_ctx, ev);
    pthread_mutex_unlock(&R->event_lock);
}

static void warn(run *R, const char *message) {
    dkb_opt_event ev = {.kind = DKB_OPT_EV_WARNING, .message = message};
    report(R, &ev);
}

/* The feedback on a (the next user message), with best the best valid
 * raw speedup so far, a included. */
static void give_feedback(run *R, const task *t, attempt *a, double best) {
    dkb_opt_feedback_in in = {.round = a->round, .rounds = R->o->rounds, .cls = a->cls,
                              .verdict_text = a->verdict_text && a->verdict_text[0] ? a->verdict_text : a->cls,
                              .detail = a->detail ? a->detail : "", .compile_log = a->compile_log ? a->compile_log : "",
                              .checks = a->checks ? a->checks : "", .baseline_ms = a->baseline_ms,
                              .candidate_ms = a->candidate_ms, .floor_ms = a->floor_ms, .best_speedup = best};
    char *fb = NULL;
    dkb_error fe = {0};
    if (dkb__opt_feedback(&R->po, t->q->number, &in, &fb, &fe)) set_str(&a->feedback_error, fe.msg);
    set_str(&a->feedback, fb ? fb : "");
    free(fb);
}

/* Ask once, evaluate the reply's code, give feedback, record it: 0 with
 * *a filled (the caller frees it), or -1 (a untouched) when the loop must
 * stop asking. best: the best valid raw speedup of the task so far. */
static int ask(run *R, const task *t, const history *h, int round, int sample, double best, attempt *a) {
    const dkb_opt_opts *o = R->o;
    if (!may_ask(R)) return -1;
    attempt_init(a, round, sample);
    dkb_model_reply reply = {0};
    dkb_error err = {0};
    int rc = dkb_model_chat(R->model, h->msgs, h->n, &reply, &err);
    pthread_mutex_lock(&R->lock);
    R->stats.requests++;
    R->stats.tokens_in += reply.tokens_in;
    R->stats.tokens_out += reply.tokens_out;
    R->stats.cost_usd += reply.cost_usd;
    pthread_mutex_unlock(&R->lock);
    set_str(&a->reply, reply.text ? reply.text : "");
    a->tokens_in = reply.tokens_in;
    a->tokens_out = reply.tokens_out;
    a->latency_s = reply.latency_s;
    a->cost_usd = reply.cost_usd;
    a->attempts = reply.attempts;
    a->http_status = reply.http_status;
    snprintf(a->finish_reason, sizeof a->finish_reason, "%s", reply.finish_reason);
    if (rc) {
        set_cls(a, "model_error");
        set_str(&a->detail, err.msg);
        if (endpoint_unusable(o, &reply)) {
            /* every later request would fail the same way: stop asking, and
             * leave the round to be asked again when the run is resumed */
            a->fatal = 1;
            pthread_mutex_lock(&R->lock);
            if (!R->stop) {
                snprintf(R->stats.stopped, sizeof R->stats.stopped, "the model endpoint is unusable: %.200s", err.msg);
                R->stats.model_failed = 1;
                R->stop = 1;
            }
            pthread_mutex_unlock(&R->lock);
        }
    } else {
        dkb_error xe = {0};
        int xrc = dkb_model_extract_code(reply.text ? reply.text : "", dkb__opt_target_find(o->target)->code,
                                         &a->code, &xe);
        int cut = !strcmp(reply.finish_reason, "length") || !strcmp(reply.finish_reason, "truncated");
        if (xrc) {
            a->code = NULL;
            int truncated = xrc == DKB_EPARSE || cut;
            set_cls(a, truncated ? "truncated_reply" : "no_code");
            set_str(&a->verdict_text, truncated
                                          ? "was cut off before the code block ended (too long: write a shorter file)"
                                          : "could not be found: the reply had no fenced code block");
            set_str(&a->detail, xe.msg);
        }
    }
    dkb_model_reply_free(&reply);
    if (a->code) {
        evaluate(R, t, a);
        pthread_mutex_lock(&R->lock);
        R->stats.evaluations++;
        pthread_mutex_unlock(&R->lock);
    }
    /* the feedback (none for a failed request: the same conversation is sent again) */
    if (dkb__opt_improves(a->valid, a->raw_speedup, best)) best = a->raw_speedup;
    if (strcmp(a->cls, "model_error")) give_feedback(R, t, a, best);
    cJSON *rec = attempt_record(a, t, o->target);
    dkb_error te = {0};
    if (!rec) warn(R, "the trajectory: out of memory formatting a record");
    else if (dkb__traj_append(&R->traj, rec, &te)) warn(R, te.msg);
    cJSON_Delete(rec);
    dkb_opt_event ev = {.kind = DKB_OPT_EV_ATTEMPT, .query = t->q->name, .mode = t->mode_name, .round = round,
                        .rounds = o->rounds, .sample = sample + 1, .samples = o->samples, .cls = a->cls,
                        .raw_speedup = a->raw_speedup, .best_speedup = best};
    report(R, &ev);
    return 0;
}

/* The attempt of a round (a[0..n)) the conversation continues from: the
 * fastest valid one, else the first that is not a model error; NULL when
 * all were. */
static const attempt *chosen(const attempt *a, int n) {
    const attempt *pick = NULL;
    double best = NAN;
    for (int i = 0; i < n; i++)
        if (dkb__opt_improves(a[i].valid, a[i].raw_speedup, best)) {
            best = a[i].raw_speedup;
            pick = &a[i];
        }
    if (pick) return pick;
    for (int i = 0; i < n; i++)
        if (strcmp(a[i].cls, "model_error")) return &a[i];
    return NULL;
}

/* Measure the baseline alone (a missing row) when no attempt did. */
static void baseline_only(run *R, const task *t) {
    const dkb_opt_opts *o = R->o;
    char rel[96];
    snprintf(rel, sizeof rel, "work/%s.%s/baseline", t->q->name, t->mode_name);
    char *dir = dkb__path_join(o->out, rel), *empty = dir ? dkb__path_join(dir, "empty") : NULL,
         *res_dir = dir ? dkb__path_join(dir, "eval") : NULL;
    dkb_error err = {0};
    if (!res_dir || dkb__mkdir_p(empty, &err)) goto done;
    dkb_eval_opts eo = eval_opts(o, t, empty, res_dir, "dkb optimize (the baseline alone)");
    dkb_eval_results res;
    int g = device_take(R);
    eo.on_gpu = g + 1;
    int rc = dkb__eval_run(&eo, NULL, &res, &err);
    device_give(R, g);
    if (!rc && res.n == 1) {
        cJSON *rec = new_record("baseline", t, o->target);
        cJSON_AddNumberToObject(rec, "baseline_ms", res.items[0].baseline.median);
        cJSON_AddNumberToObject(rec, "floor_ms", res.items[0].floor_ms);
        dkb__traj_append(&R->traj, rec, NULL);
        cJSON_Delete(rec);
    }
    dkb__eval_results_free(&res);
done:
    free(dir);
    free(empty);
    free(res_dir);
}

/* The attempt (round, sample) of t recorded by an earlier invocation, or
 * NULL: the last such record, unless it stopped the run (fatal: asked
 * again). */
static const cJSON *recorded(const run *R, const task *t, int round, int sample) {
    const cJSON *r, *old = NULL;
    cJSON_ArrayForEach(r, R->records) if (same_task(r, t, R->o->target) && !strcmp(str(r, "type"), "attempt") &&
                                          num(r, "round") == round && num(r, "sample") == sample &&
                                          !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fatal"))) old = r;
    return old;
}

static void run_task(run *R, const task *t) {
    const dkb_opt_opts *o = R->o;
    const cJSON *r;
    int have_baseline = 0;
    cJSON_ArrayForEach(r, R->records) {
        if (!same_task(r, t, o->target)) continue;
        if (!strcmp(str(r, "type"), "done")) {
            pthread_mutex_lock(&R->lock);
            R->stats.finished++;
            pthread_mutex_unlock(&R->lock);
            return;
        }
        have_baseline |= isfinite(num(r, "baseline_ms"));
    }
    attempt *round_attempts = calloc((size_t)o->samples, sizeof *round_attempts);
    if (!round_attempts) {
        warn(R, "out of memory");
        return;
    }
    history h = {0};
    history_push(&h, "system", t->system);
    history_push(&h, "user", t->user);
    double best = NAN;
    int stopped = 0;
    for (int round = 1; round <= o->rounds && !stopped; round++) {
        int n = 0;
        for (int k = 0; k < o->samples && !stopped; k++) {
            attempt *a = &round_attempts[n];
            const cJSON *old = recorded(R, t, round, k);
            if (old) attempt_read(a, old, round, k);
            else if (ask(R, t, &h, round, k, best, a)) stopped = 1;
            if (stopped) break;
            n++;
            if (a->fatal) {
                stopped = 1;
                break;
            }
            have_baseline |= isfinite(a->baseline_ms);
            if (dkb__opt_improves(a->valid, a->raw_speedup, best)) best = a->raw_speedup;
        }
        const attempt *pick = stopped ? NULL : chosen(round_attempts, n);
        if (pick) {
            history_push(&h, "assistant", pick->reply ? pick->reply : "");
            history_push(&h, "user", pick->feedback ? pick->feedback : "");
        }
        for (int i = 0; i < n; i++) attempt_free(&round_attempts[i]);
    }
    free(round_attempts);
    history_free(&h);
    if (stopped) return;
    if (!have_baseline) baseline_only(R, t);
    cJSON *done = new_record("done", t, o->target);
    cJSON_AddNumberToObject(done, "rounds", o->rounds);
    dkb__traj_append(&R->traj, done, NULL);
    cJSON_Delete(done);
    pthread_mutex_lock(&R->lock);
    R->stats.finished++;
    pthread_mutex_unlock(&R->lock);
}

static void *worker(void *arg) {
    run *R = arg;
    for (;;) {
        pthread_mutex_lock(&R->lock);
        int i = R->stop ? R->ntasks : R->next_task++;
        pthread_mutex_unlock(&R->lock);
        if (i >= R->ntasks) return NULL;
        run_task(R, &R->tasks[i]);
    }
}

/* run.json: what the run is (model, target, modes, context, harness
 * options); never the API key. */
static int write_run_json(const run *R, dkb_error *err) {
    const dkb_opt_opts *o = R->o;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "dkb_version", DKB_VERSION);
    cJSON_AddStringToObject(j, "model", o->model.model ? o->model.model : "");
    cJSON_AddStringToObject(j, "backend", o->model.cmd ? "command" : "http");
    if (o->model.base_url) cJSON_AddStringToObject(j, "base_url", o->model.base_url);
    if (o->model.cmd) cJSON_AddStringToObject(j, "model_cmd", o->model.cmd);
    cJSON_AddStringToObject(j, "target", o->target);
    cJSON *modes = cJSON_AddArrayToObject(j, "modes");
    if (o->modes & DKB_EVAL_FULL) cJSON_AddItemToArray(modes, cJSON_CreateString("full"));
    if (o->modes & DKB_EVAL_CORE) cJSON_AddItemToArray(modes, cJSON_CreateString("core"));
    cJSON *qs = cJSON_AddArrayToObject(j, "queries");
    for (int i = 0; i < R->ntasks; i++)
        if (R->tasks[i].mode == R->tasks[0].mode) cJSON_AddItemToArray(qs, cJSON_CreateString(R->tasks[i].q->name));
    if (o->sql) cJSON_AddStringToObject(j, "sql_file", o->sql);
    cJSON_AddNumberToObject(j, "rounds", o->rounds);
    cJSON_AddNumberToObject(j, "samples", o->samples);
    cJSON_AddBoolToObject(j, "workload_context", o->workload);
    cJSON_AddBoolToObject(j, "hardware_context", o->hardware);
    cJSON_AddStringToObject(j, "store", o->store);
    cJSON_AddNumberToObject(j, "scale_factor", R->sf);
    cJSON_AddNumberToObject(j, "threshold", o->threshold);
    cJSON_AddNumberToObject(j, "seeds", o->nseeds);
    if (o->command_line) cJSON_AddStringToObject(j, "command_line", o->command_line);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    char *path = dkb__path_join(o->out, "run.json");
    int rc = 0;
    FILE *f = path && text ? fopen(path, "w") : NULL;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) == EOF) rc = dkb_fail(err, DKB_EIO, "%s: cannot write", path ? path : "run.json");
    if (f && fclose(f) && !rc) rc = dkb_fail(err, DKB_EIO, "%s: cannot write", path);
    free(text);
    free(path);
    return rc;
}

/* A run directory that already holds a run must hold this one: the same
 * model name, backend (HTTP or command), target, context and samples (the
 * endpoint or command, rounds, queries, modes and the harness options may
 * change between invocations: a server may move to another port).
 * Else its records would be replayed as this model's. */
static int check_same_run(const dkb_opt_opts *o, dkb_error *err) {
    char *path = dkb__path_join(o->out, "run.json"), *text = NULL;
    size_t len = 0;
    if (!path) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int rc = 0;
    if (access(path, F_OK) != 0 || dkb__read_file(path, 1u << 20, &text, &len, NULL)) {
        free(path);
        return 0;   /* a new run (an unreadable run.json is rewritten) */
    }
    cJSON *j = cJSON_Parse(text);
    const char *backend = o->model.cmd ? "command" : "http";
    const char *what = NULL, *was = "", *now = "";
    char nb[16], ob[16];
    if (j) {
        if (strcmp(str(j, "model"), o->model.model ? o->model.model : "")) what = "model", was = str(j, "model"), now = o->model.model;
        else if (strcmp(str(j, "backend"), backend)) what = "backend", was = str(j, "backend"), now = backend;
        else if (strcmp(str(j, "target"), o->target)) what = "--target", was = str(j, "target"), now = o->target;
        else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "workload_context")) != !!o->workload ||
                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "hardware_context")) != !!o->hardware)
            what = "--context", was = "another context", now = "this one";
        else if (num(j, "samples") != o->samples) {
            snprintf(ob, sizeof ob, "%g", num(j, "samples"));
            snprintf(nb, sizeof nb, "%d", o->samples);
            what = "--samples", was = ob, now = nb;
        }
    }
    if (what)
        rc = dkb_fail(err, DKB_EINVAL,
                      "%s holds a run with another %s ('%.80s', now '%.80s'): resume it with the same options or use another --out",
                      o->out, what, was, now);
    cJSON_Delete(j);
    free(text);
    free(path);
    return rc;
}

static int prepare_tasks(run *R, const dkb_store *db, dkb_error *err) {
    const dkb_opt_opts *o = R->o;
    R->tasks = calloc(DKB_NQUERIES * DKB_NMODES, sizeof *R->tasks);
    if (!R->tasks) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    char *pdir = dkb__path_join(o->out, "prompts");
    int rc = pdir ? dkb__mkdir_p(pdir, err) : dkb_fail(err, DKB_ENOMEM, "out of memory");
    /* a SQL task is the one task (qn 0, full mode); else the listed queries */
    for (int qn = R->sql ? 0 : 1; qn <= (R->sql ? 0 : DKB_NQUERIES) && !rc; qn++) {
        if (!R->sql && !(o->queries & (1u << qn))) continue;
        for (int m = 0; m < DKB_NMODES && !rc; m++) {
            if (!(o->modes & (1u << m))) continue;
            task *t = &R->tasks[R->ntasks];
            t->q = R->sql ? dkb__sql_task_query(R->sql) : dkb_query_get(qn);
            if (!t->q) {
                rc = dkb_fail(err, DKB_ENOENT, "q%02d: no baseline plan in this build", qn);
                break;
            }
            t->mode = (dkb_mode)m;
            t->mode_name = dkb__eval_mode_name(t->mode);
            R->po.mode = t->mode;
            dkb__opt_task_file_name(&R->po, qn, t->file, sizeof t->file);
            dkb_params p;
            if ((rc = dkb_query_params(t->q, 0, R->sf, NULL, 0, &p, err))) break;
            R->po.mode = t->mode;
            if ((rc = dkb__opt_build_prompt(&R->po, t->q, db, &p, &t->system, &t->user, err))) break;
            R->ntasks++;
            char name[96];
            snprintf(name, sizeof name, "%s.%s.md", t->q->name, t->mode_name);
            char *path = dkb__path_join(pdir, name);
            FILE *f = path ? fopen(path, "w") : NULL;
            if (!f || fprintf(f, "### system\n%s\n### user\n%s", t->system, t->user) < 0 || fclose(f)) {
                rc = dkb_fail(err, DKB_EIO, "%s: cannot write the prompt", path ? path : name);
            } else if ((rc = dkb__sha256_file(path, t->prompt_hash, err))) {
                /* err set */
            }
            free(path);
        }
    }
    free(pdir);
    return rc;
}

int dkb__opt_run(const dkb_opt_opts *o, dkb_opt_outcome *out, dkb_error *err) {
    memset(out, 0, sizeof *out);
    if (o->rounds < 1 || o->samples < 1 || o->jobs < 1 || (!o->queries && !o->sql) || !o->modes)
        return dkb_fail(err, DKB_EINVAL, "optimize: rounds, samples, jobs, queries and modes must be set");
    if (o->sql && o->modes != DKB_EVAL_FULL)
        return dkb_fail(err, DKB_EINVAL, "--mode core: a SQL task (--sql) is full mode only");
    const dkb_opt_target *tg = dkb__opt_target_find(o->target);
    if (!tg) return dkb_fail(err, DKB_EINVAL, "--target %s: expected %s", o->target, dkb__opt_target_names());
    if (tg->eval_target && o->sql)
        return dkb_fail(err, DKB_EINVAL, "--target %s: not with a SQL task (--sql) yet: dkb eval --sql takes C or CUDA files",
                        tg->name);
    int cuda = tg->gpu;
    if (o->gpus && !cuda)
        return dkb_fail(err, DKB_EINVAL, "--gpus: GPU targets only (cuda, triton); --target %s evaluates one at a time",
                        tg->name);
    if (cuda) {
        /* before anything is written, asked or evaluated: every evaluation needs the GPU */
        dkb_tp_device_info dev;
        dkb_error ge = {0};
        if (dkb_tp_device_query(&dev, &ge))
            return dkb_fail(err, DKB_ENOENT, "--target %s: no usable GPU (%s); nothing was asked or evaluated",
                            tg->name, ge.msg);
    }
    /* GPU targets: evaluations at once, one per GPU (device_take) */
    int ngpu = 1;
    if (cuda) {
        int seen = dkb__eval_cuda_devices();
        if (o->gpus > seen)
            return dkb_fail(err, DKB_EINVAL, "--gpus %d: this machine has %d GPU%s", o->gpus, seen, seen == 1 ? "" : "s");
        ngpu = o->gpus > 0 ? o->gpus : seen > 0 ? seen : 1;
        if (ngpu > 64) ngpu = 64;
    }
    run R = {.o = o, .start = dkb__now_s()};
    R.po = (dkb_opt_prompt_opts){.templates = dkb__opt_templates_dir(o->templates), .target = o->target,
                                 .workload = o->workload, .hardware = o->hardware, .need_gpu = cuda,
                                 .mem_budget = o->mem_budget};
    pthread_mutex_init(&R.lock, NULL);
    pthread_mutex_init(&R.eval_lock, NULL);
    pthread_cond_init(&R.gpu_free, NULL);
    R.ngpu = ngpu;
    pthread_mutex_init(&R.event_lock, NULL);
    dkb_store *db = NULL;
    int rc = check_same_run(o, err);
    /* the store is verified once, before anything is written or asked */
    if (!rc) rc = dkb_store_open(o->store, 0, &db, err);
    if (!rc && !o->no_verify) rc = dkb__store_verify_cached(db, DKB__VERIFY_FULL, &R.stats.verify, err);
    if (!rc) rc = dkb__mkdir_p(o->out, err);
    if (!rc && o->sql) {
        /* planned once here for the prompt; each evaluation plans it again (dkb__eval_run) */
        rc = dkb__sql_task_plan(o->sql, db, &R.sql, err);
        if (!rc) rc = dkb__sql_task_program(R.sql, db, &R.sql_program, err);
        if (!rc) {
            R.po.sql_task = dkb__sql_task_query(R.sql)->name;
            R.po.plan_source = R.sql_program;
        }
    }
    if (!rc) {
        R.sf = dkb_store_scale_factor(db);
        rc = prepare_tasks(&R, db, err);
    }
    dkb_store_close(db);
    if (!rc) rc = write_run_json(&R, err);
    int skipped = 0;
    if (!rc) rc = dkb__traj_load(o->out, &R.records, &skipped, err);
    if (!rc) rc = dkb__traj_open(&R.traj, o->out, err);
    if (!rc) rc = dkb_model_open(&o->model, &R.model, err);
    if (!rc) {
        out->tasks = R.ntasks;
        int nthreads = o->jobs < R.ntasks ? o->jobs : R.ntasks;
        pthread_t th[64];
        if (nthreads > 64) nthreads = 64;
        int started = 0;
        for (; started < nthreads; started++)
            if (pthread_create(&th[started], NULL, worker, &R)) break;
        if (!started) worker(&R);
        for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
        R.stats.tasks = R.ntasks;
        *out = R.stats;
    }
    dkb_model_close(R.model);
    dkb__traj_close(&R.traj);
    cJSON_Delete(R.records);
    for (int i = 0; i < R.ntasks; i++) {
        free(R.tasks[i].system);
        free(R.tasks[i].user);
    }
    free(R.tasks);
    dkb__sql_task_free(R.sql);
    free(R.sql_program);
    pthread_mutex_destroy(&R.lock);
    pthread_mutex_destroy(&R.eval_lock);
    pthread_cond_destroy(&R.gpu_free);
    pthread_mutex_destroy(&R.event_lock);
    return rc;
}
