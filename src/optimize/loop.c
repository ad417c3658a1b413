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
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"       // defines: dkb__mkdir_p, dkb__path_join, dkb__rm_rf
#include "dkb/query.h"
#include "dkb/store.h"
#include "dkb/tensor.h"          // defines: dkb_tp_device_query
#include "harness/eval.h"        // defines: dkb__eval_run, dkb_eval_results
#include "harness/report.h"      // defines: dkb__results_write
#include "optimize/prompt.h"     // defines: dkb__opt_build_prompt, dkb__opt_feedback
#include "optimize/template.h"   // defines: dkb_opt_buf, dkb__opt_templates_dir
#include "optimize/traj.h"       // defines: dkb_traj

typedef struct task {
    const dkb_query *q;
    dkb_mode mode;
    const char *mode_name;
    char file[32];
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
    pthread_mutex_t eval_lock;   /* one evaluation at a time */
    dkb_opt_outcome stats;
    int stop;
} run;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

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
        else if (o->max_wall > 0 && now_s() - R->start >= o->max_wall)
            snprintf(s->stopped, sizeof s->stopped, "--max-wall %g s reached", o->max_wall);
        R->stop = s->stopped[0] != '\0';
    }
    int ok = !R->stop;
    pthread_mutex_unlock(&R->lock);
    return ok;
}

/* ---- one attempt ---- */

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

/* Evaluate code as this task's candidate; fill rec. */
static void evaluate(run *R, const task *t, int round, int sample, const char *code, cJSON *rec) {
    const dkb_opt_opts *o = R->o;
    char rel[128];
    snprintf(rel, sizeof rel, "work/%s.%s/r%02d.s%02d", t->q->name, t->mode_name, round, sample);
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
            if (!f || fputs(code, f) < 0 || fclose(f)) dkb_fail(&err, DKB_EIO, "%s: cannot write the candidate", file);
        }
    }
    if (file) cJSON_AddStringToObject(rec, "file", file + strlen(o->out) + 1);
    if (err.code) {
        cJSON_AddStringToObject(rec, "class", "harness_error");
        cJSON_AddStringToObject(rec, "detail", err.msg);
        goto done;
    }
    dkb_eval_opts eo = {.dir = cand, .store = o->store, .out = res_dir, .exe = o->exe,
                        .backend = !strcmp(o->target, "cuda") ? "cuda" : "cpu",
                        .modes = 1u << t->mode, .queries = t->q->name, .nseeds = o->nseeds,
                        .threshold = o->threshold, .threads = o->threads, .timeout_s = o->timeout_s,
                        .warmup = o->warmup, .min_runs = o->min_runs, .min_seconds = o->min_seconds,
                        .command_line = "dkb optimize (one candidate)",
                        .no_verify = true /* verified once, in dkb__opt_run */};
    dkb_eval_results res;
    pthread_mutex_lock(&R->eval_lock);
    int rc = dkb__eval_run(&eo, NULL, &res, &err);
    if (!rc) dkb__results_write(&res, NULL);
    pthread_mutex_unlock(&R->eval_lock);
    if (rc || res.n != 1) {
        cJSON_AddStringToObject(rec, "class", "harness_error");
        cJSON_AddStringToObject(rec, "detail", rc ? err.msg : "the harness returned no row");
    } else {
        const dkb_eval_item *it = &res.items[0];
        cJSON_AddStringToObject(rec, "class", dkb__eval_class(it));
        cJSON_AddStringToObject(rec, "verdict_text", it->missing ? "was not found by the harness"
                                                                 : dkb__verdict_text(it->verdict));
        cJSON_AddBoolToObject(rec, "valid", it->score.valid);
        cJSON_AddStringToObject(rec, "detail", it->detail ? it->detail : "");
        char *log = dkb__opt_trim(it->compile_log, 4000);
        cJSON_AddStringToObject(rec, "compile_log", log ? log : "");
        free(log);
        char *ct = it->checks ? checks_text(R, t, it->checks) : NULL;
        cJSON_AddStringToObject(rec, "checks", ct ? ct : "");
        free(ct);
        cJSON_AddNumberToObject(rec, "baseline_ms", it->baseline.median);
        cJSON_AddNumberToObject(rec, "candidate_ms", it->candidate.median);
        cJSON_AddNumberToObject(rec, "floor_ms", it->floor_ms);
        cJSON_AddNumberToObject(rec, "raw_speedup", it->score.raw_speedup);
        cJSON_AddStringToObject(rec, "sha256", it->sha256);
        /* CUDA: the kernel attribution (harness/attrib.h), for dkb report */
        if (it->attribution.recorded || it->attribution.note[0])
            dkb__attrib_add_json(rec, "attribution", &it->attribution);
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

/* Ask once and evaluate; the record (owned by the caller) or NULL when the
 * loop must stop asking. */
static cJSON *attempt(run *R, const task *t, const history *h, int round, int sample, double best) {
    const dkb_opt_opts *o = R->o;
    if (!may_ask(R)) return NULL;
    cJSON *rec = new_record("attempt", t, o->target);
    cJSON_AddNumberToObject(rec, "round", round);
    cJSON_AddNumberToObject(rec, "sample", sample);
    cJSON_AddStringToObject(rec, "prompt_sha256", t->prompt_hash);
    dkb_model_reply reply = {0};
    dkb_error err = {0};
    int rc = dkb_model_chat(R->model, h->msgs, h->n, &reply, &err);
    pthread_mutex_lock(&R->lock);
    R->stats.requests++;
    R->stats.tokens_in += reply.tokens_in;
    R->stats.tokens_out += reply.tokens_out;
    R->stats.cost_usd += reply.cost_usd;
    pthread_mutex_unlock(&R->lock);
    cJSON_AddStringToObject(rec, "reply", reply.text ? reply.text : "");
    cJSON_AddNumberToObject(rec, "tokens_in", (double)reply.tokens_in);
    cJSON_AddNumberToObject(rec, "tokens_out", (double)reply.tokens_out);
    cJSON_AddNumberToObject(rec, "latency_s", reply.latency_s);
    cJSON_AddNumberToObject(rec, "cost_usd", reply.cost_usd);
    cJSON_AddNumberToObject(rec, "attempts", reply.attempts);
    cJSON_AddNumberToObject(rec, "http_status", reply.http_status);
    cJSON_AddStringToObject(rec, "finish_reason", reply.finish_reason);
    char *code = NULL;
    const char *cls = NULL, *text = NULL;
    if (rc) {
        cls = "model_error";
        cJSON_AddStringToObject(rec, "detail", err.msg);
        if (endpoint_unusable(o, &reply)) {
            /* every later request would fail the same way: stop asking, and
             * leave the round to be asked again when the run is resumed */
            cJSON_AddTrueToObject(rec, "fatal");
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
        int xrc = dkb_model_extract_code(reply.text ? reply.text : "", &code, &xe);
        int cut = !strcmp(reply.finish_reason, "length") || !strcmp(reply.finish_reason, "truncated");
        if (xrc) {
            code = NULL;
            cls = xrc == DKB_EPARSE || cut ? "truncated_reply" : "no_code";
            text = xrc == DKB_EPARSE || cut ? "was cut off before the code block ended (too long: write a shorter file)"
                                            : "could not be found: the reply had no fenced code block";
            cJSON_AddStringToObject(rec, "detail", xe.msg);
        }
    }
    if (code) {
        cJSON_AddStringToObject(rec, "code", code);
        evaluate(R, t, round, sample, code, rec);
        pthread_mutex_lock(&R->lock);
        R->stats.evaluations++;
        pthread_mutex_unlock(&R->lock);
    } else {
        cJSON_AddStringToObject(rec, "class", cls);
        cJSON_AddBoolToObject(rec, "valid", 0);
        if (text) cJSON_AddStringToObject(rec, "verdict_text", text);
    }
    free(code);
    dkb_model_reply_free(&reply);

    /* the feedback (none for a failed request: the same conversation is sent again) */
    if (strcmp(str(rec, "class"), "model_error")) {
        double raw = num(rec, "raw_speedup");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "valid")) && (!isfinite(best) || raw > best)) best = raw;
        dkb_opt_feedback_in in = {.round = round, .rounds = o->rounds, .cls = str(rec, "class"),
                                  .verdict_text = str(rec, "verdict_text"), .detail = str(rec, "detail"),
                                  .compile_log = str(rec, "compile_log"), .checks = str(rec, "checks"),
                                  .baseline_ms = num(rec, "baseline_ms"), .candidate_ms = num(rec, "candidate_ms"),
                                  .floor_ms = num(rec, "floor_ms"), .best_speedup = best};
        if (!in.verdict_text[0]) in.verdict_text = in.cls;
        char *fb = NULL;
        dkb_error fe = {0};
        if (dkb__opt_feedback(&R->po, t->q->number, &in, &fb, &fe)) cJSON_AddStringToObject(rec, "feedback_error", fe.msg);
        cJSON_AddStringToObject(rec, "feedback", fb ? fb : "");
        free(fb);
    }
    dkb_error te = {0};
    if (dkb__traj_append(&R->traj, rec, &te) && !o->quiet) fprintf(stderr, "dkb optimize: warning: %s\n", te.msg);
    if (!o->quiet && isatty(2))
        fprintf(stderr, "dkb optimize: %s %s round %d/%d sample %d/%d: %s (raw speedup %.2fx; best so far %.2fx)\n",
                t->q->name, t->mode_name, round, o->rounds, sample + 1, o->samples, str(rec, "class"),
                num(rec, "raw_speedup"), best);
    return rec;
}

/* The record of a round the conversation continues from: the fastest valid
 * one, else the first that is not a model error; NULL when all were. */
static const cJSON *chosen(const cJSON *round_recs) {
    const cJSON *pick = NULL, *r;
    double best = -1;
    cJSON_ArrayForEach(r, round_recs) {
        double raw = num(r, "raw_speedup");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "valid")) && isfinite(raw) && raw > best) {
            best = raw;
            pick = r;
        }
    }
    if (pick) return pick;
    cJSON_ArrayForEach(r, round_recs) if (strcmp(str(r, "class"), "model_error")) return r;
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
    dkb_eval_opts eo = {.dir = empty, .store = o->store, .out = res_dir, .exe = o->exe,
                        .backend = !strcmp(o->target, "cuda") ? "cuda" : "cpu", .modes = 1u << t->mode,
                        .queries = t->q->name, .nseeds = o->nseeds, .threshold = o->threshold,
                        .threads = o->threads, .timeout_s = o->timeout_s, .warmup = o->warmup,
                        .min_runs = o->min_runs, .min_seconds = o->min_seconds,
                        .no_verify = true /* verified once, in dkb__opt_run */};
    dkb_eval_results res;
    pthread_mutex_lock(&R->eval_lock);
    int rc = dkb__eval_run(&eo, NULL, &res, &err);
    pthread_mutex_unlock(&R->eval_lock);
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
    history h = {0};
    history_push(&h, "system", t->system);
    history_push(&h, "user", t->user);
    double best = NAN;
    int stopped = 0;
    for (int round = 1; round <= o->rounds && !stopped; round++) {
        cJSON *recs = cJSON_CreateArray();
        for (int k = 0; k < o->samples && !stopped; k++) {
            const cJSON *old = NULL;
            /* a request that stopped the run (fatal) is asked again */
            cJSON_ArrayForEach(r, R->records) if (same_task(r, t, o->target) && !strcmp(str(r, "type"), "attempt") &&
                                                  num(r, "round") == round && num(r, "sample") == k &&
                                                  !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fatal"))) old = r;
            cJSON *rec = old ? cJSON_Duplicate(old, 1) : attempt(R, t, &h, round, k, best);
            if (rec && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "fatal"))) {
                cJSON_Delete(rec);
                rec = NULL;
            }
            if (!rec) {
                stopped = 1;
                break;
            }
            have_baseline |= isfinite(num(rec, "baseline_ms"));
            double raw = num(rec, "raw_speedup");
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "valid")) && (!isfinite(best) || raw > best))
                best = raw;
            cJSON_AddItemToArray(recs, rec);
        }
        const cJSON *pick = stopped ? NULL : chosen(recs);
        if (pick) {
            history_push(&h, "assistant", str(pick, "reply"));
            history_push(&h, "user", str(pick, "feedback"));
        }
        cJSON_Delete(recs);
    }
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
    R->tasks = calloc(44, sizeof *R->tasks);
    if (!R->tasks) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    char *pdir = dkb__path_join(o->out, "prompts");
    int rc = pdir ? dkb__mkdir_p(pdir, err) : dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int qn = 1; qn <= 22 && !rc; qn++) {
        if (!(o->queries & (1u << qn))) continue;
        for (int m = 0; m < 2 && !rc; m++) {
            if (!(o->modes & (1u << m))) continue;
            task *t = &R->tasks[R->ntasks];
            t->q = dkb_query_get(qn);
            if (!t->q) {
                rc = dkb_fail(err, DKB_ENOENT, "q%02d: no baseline plan in this build", qn);
                break;
            }
            t->mode = (dkb_mode)m;
            t->mode_name = dkb__eval_mode_name(t->mode);
            dkb__opt_file_name(qn, t->mode, o->target, t->file, sizeof t->file);
            dkb_params p;
            if ((rc = dkb_query_params(t->q, 0, R->sf, NULL, 0, &p, err))) break;
            R->po.mode = t->mode;
            if ((rc = dkb__opt_build_prompt(&R->po, t->q, db, &p, &t->system, &t->user, err))) break;
            R->ntasks++;
            char name[64];
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
    if (o->rounds < 1 || o->samples < 1 || o->jobs < 1 || !o->queries || !o->modes)
        return dkb_fail(err, DKB_EINVAL, "optimize: rounds, samples, jobs, queries and modes must be set");
    int cuda = !strcmp(o->target, "cuda");
    if (cuda) {
        /* before anything is written, asked or evaluated: every evaluation needs the GPU */
        dkb_tp_device_info dev;
        dkb_error ge = {0};
        if (dkb_tp_device_query(&dev, &ge))
            return dkb_fail(err, DKB_ENOENT, "--target cuda: no usable GPU (%s); nothing was asked or evaluated",
                            ge.msg);
    }
    run R = {.o = o, .start = now_s()};
    R.po = (dkb_opt_prompt_opts){.templates = dkb__opt_templates_dir(o->templates), .target = o->target,
                                 .workload = o->workload, .hardware = o->hardware, .need_gpu = cuda};
    pthread_mutex_init(&R.lock, NULL);
    pthread_mutex_init(&R.eval_lock, NULL);
    dkb_store *db = NULL;
    int rc = check_same_run(o, err);
    /* the store is verified once, before anything is written or asked */
    if (!rc) rc = dkb_store_open(o->store, 0, &db, err);
    if (!rc && !o->no_verify) rc = dkb__store_verify_cached(db, DKB__VERIFY_FULL, &R.stats.verify, err);
    if (!rc) rc = dkb__mkdir_p(o->out, err);
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
    pthread_mutex_destroy(&R.lock);
    pthread_mutex_destroy(&R.eval_lock);
    return rc;
}
