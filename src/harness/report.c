/* report.c: results.json (the cJSON document, schema in docs/harness.md)
 * and the atomic writes of results.json and summary.md; the text formats
 * are in report_text.c. */
#include "harness/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/fsutil.h"
#include "dkb/candidate.h"

/* ---- building the document (every helper tolerates a NULL parent: an
 * allocation failure anywhere is caught once, at the end) ---- */

static void add_num(cJSON *o, const char *key, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static void add_str(cJSON *o, const char *key, const char *s) {
    if (s) cJSON_AddStringToObject(o, key, s);
    else cJSON_AddNullToObject(o, key);
}

static void add_timing(cJSON *o, const char *key, const dkb_timing *t) {
    if (t->runs <= 0 || !isfinite(t->median)) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, key);
    add_num(j, "median", t->median);
    add_num(j, "min", t->min);
    add_num(j, "max", t->max);
    cJSON_AddNumberToObject(j, "runs", t->runs);
}

static void add_totals(cJSON *o, const char *key, const dkb_score_totals *t) {
    cJSON *j = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(j, "rows", t->rows);
    cJSON_AddNumberToObject(j, "candidates", t->candidates);
    cJSON_AddNumberToObject(j, "missing", t->missing);
    cJSON_AddNumberToObject(j, "valid", t->valid);
    cJSON_AddNumberToObject(j, "counted", t->counted);
    cJSON_AddNumberToObject(j, "pass_rate", t->pass_rate);
    cJSON *fp = cJSON_AddObjectToObject(j, "fast_p");
    cJSON *fc = cJSON_AddObjectToObject(j, "fast_count");
    for (int k = 0; k < DKB_FAST_P_COUNT; k++) {
        char name[16];
        snprintf(name, sizeof name, "%g", dkb__fast_p[k]);
        cJSON_AddNumberToObject(fp, name, t->fast_p[k]);
        cJSON_AddNumberToObject(fc, name, t->fast[k]);
    }
    cJSON_AddNumberToObject(j, "baseline_ms_sum", t->baseline_ms_sum);
    cJSON_AddNumberToObject(j, "final_ms_sum", t->final_ms_sum);
    cJSON_AddNumberToObject(j, "overall_speedup", t->overall_speedup);
    cJSON_AddNumberToObject(j, "geomean_speedup", t->geomean_speedup);
}

static void add_config(cJSON *doc, const dkb_eval_results *res) {
    const dkb_eval_opts *o = &res->opts;
    cJSON *c = cJSON_AddObjectToObject(doc, "config");
    add_str(c, "command_line", o->command_line);
    add_str(c, "candidates_dir", o->dir);
    add_str(c, "store", o->store);
    add_num(c, "scale_factor", res->scale_factor);
    cJSON_AddNumberToObject(c, "store_bytes", (double)res->store_bytes);
    add_str(c, "results_dir", o->out);
    add_str(c, "backend", o->backend ? o->backend : "cpu");
    if (o->target) add_str(c, "target", o->target);   /* python, triton; absent for C/CUDA files */
    cJSON *modes = cJSON_AddArrayToObject(c, "modes");
    unsigned m = o->modes ? o->modes : DKB_EVAL_FULL | DKB_EVAL_CORE;
    if (m & DKB_EVAL_FULL) cJSON_AddItemToArray(modes, cJSON_CreateString("full"));
    if (m & DKB_EVAL_CORE) cJSON_AddItemToArray(modes, cJSON_CreateString("core"));
    add_str(c, "queries", o->queries);
    if (o->sql) add_str(c, "sql_file", o->sql);   /* a SQL task (docs/sql.md); absent otherwise */
    if (o->mem_budget) add_num(c, "mem_budget", (double)o->mem_budget);   /* bytes; absent without a budget */
    cJSON *seeds = cJSON_AddArrayToObject(c, "seeds");
    for (int i = 0; i < res->nseeds; i++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)res->seeds[i]));
    add_num(c, "threshold", o->threshold);
    cJSON_AddNumberToObject(c, "threads", res->threads);
    cJSON_AddNumberToObject(c, "warmup", o->warmup);
    cJSON_AddNumberToObject(c, "min_runs", o->min_runs);
    add_num(c, "min_seconds", o->min_seconds);
    cJSON *l = cJSON_AddObjectToObject(c, "limits");
    add_num(l, "timeout_s", res->limits.timeout_s);
    cJSON_AddNumberToObject(l, "mem_bytes", (double)res->limits.mem_bytes);
    cJSON_AddNumberToObject(l, "output_bytes", (double)res->limits.output_bytes);
    cJSON *mach = cJSON_AddObjectToObject(c, "machine");
    add_str(mach, "cpu", res->cpu_model);
    cJSON_AddNumberToObject(mach, "cores", res->cores);
}

static void add_item(cJSON *arr, const dkb_eval_item *it, double threshold) {
    cJSON *j = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(arr, j)) {
        cJSON_Delete(j);
        return;
    }
    const dkb_score_row *s = &it->score;
    cJSON_AddStringToObject(j, "query", it->query);
    cJSON_AddStringToObject(j, "mode", dkb__eval_mode_name(it->mode));
    add_str(j, "file", it->file);
    add_str(j, "sha256", it->missing ? NULL : it->sha256);
    cJSON_AddStringToObject(j, "class", dkb__eval_class(it));
    add_str(j, "verdict", it->missing ? NULL : dkb__verdict_name(it->verdict));
    cJSON_AddBoolToObject(j, "valid", s->valid);
    cJSON_AddBoolToObject(j, "counted", s->counted);
    add_str(j, "detail", it->detail ? it->detail : "");
    char *note = dkb__results_note(it, threshold);
    add_str(j, "note", note ? note : "");
    free(note);
    add_str(j, "compile_log", it->compile_log);
    add_str(j, "output_tail", it->output_tail);
    add_str(j, "baseline_error", it->baseline_error);
    if (it->checks) cJSON_AddItemToObject(j, "checks", cJSON_Duplicate(it->checks, 1));
    else cJSON_AddArrayToObject(j, "checks");
    add_timing(j, "baseline_ms", &it->baseline);
    add_timing(j, "candidate_ms", &it->candidate);
    add_num(j, "floor_ms", it->floor_ms);
    add_num(j, "bytes_read", it->bytes_read);
    add_num(j, "bandwidth_gbs", it->bandwidth_gbs);
    add_num(j, "raw_speedup", s->raw_speedup);
    add_num(j, "final_ms", s->final_ms);
    add_num(j, "speedup", s->speedup);
    add_num(j, "time_floor", s->time_floor);
    add_num(j, "compile_s", it->compile_s);
    add_num(j, "run_s", it->run_s);
    (void)dkb__attrib_add_json(j, "attribution", &it->attribution);   /* and "attribution_note" */
    if (it->budgeted) {   /* under --mem-budget (docs/partitions.md) */
        cJSON *st = cJSON_AddObjectToObject(j, "streamed");
        if (st) {
            cJSON_AddBoolToObject(st, "partitioned", it->partitioned);
            cJSON_AddNumberToObject(st, "chunks", it->chunks);
            add_num(st, "baseline_bytes", it->streamed_baseline);
            add_num(st, "candidate_bytes", it->streamed_candidate);
        }
    }
}

cJSON *dkb__results_json(const dkb_eval_results *res) {
    cJSON *doc = cJSON_CreateObject();
    cJSON *h = cJSON_AddObjectToObject(doc, "harness");
    cJSON_AddStringToObject(h, "name", "DataKernelBench");
    cJSON_AddStringToObject(h, "version", DKB_VERSION);
    cJSON_AddNumberToObject(h, "candidate_abi", DKB_CANDIDATE_ABI_VERSION);
    cJSON_AddStringToObject(doc, "started", res->started);
    add_num(doc, "wall_s", res->wall_s);
    add_config(doc, res);
    cJSON *arr = cJSON_AddArrayToObject(doc, "candidates");
    for (int i = 0; i < res->n; i++) add_item(arr, &res->items[i], res->opts.threshold);
    cJSON *ign = cJSON_AddArrayToObject(doc, "ignored_files");
    for (int i = 0; i < res->nignored; i++) cJSON_AddItemToArray(ign, cJSON_CreateString(res->ignored[i]));
    add_totals(doc, "totals", &res->totals);
    cJSON *bm = cJSON_AddObjectToObject(doc, "totals_by_mode");
    add_totals(bm, "full", &res->by_mode[DKB_MODE_FULL]);
    add_totals(bm, "core", &res->by_mode[DKB_MODE_CORE]);
    cJSON_AddNumberToObject(doc, "harness_errors", res->harness_errors);
    /* every Add* above returns NULL on allocation failure and leaves the
     * document short; the last member tells whether all went in */
    if (!doc || !cJSON_GetObjectItemCaseSensitive(doc, "harness_errors") ||
        cJSON_GetArraySize(arr) != res->n) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

int dkb__results_write(const dkb_eval_results *res, dkb_error *err) {
    const char *dir = res->opts.out;
    if (!dir) return dkb_fail(err, DKB_EINVAL, "no results directory");
    cJSON *doc = dkb__results_json(res);
    char *json = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!json) return dkb_fail(err, DKB_ENOMEM, "out of memory building results.json");
    size_t jlen = strlen(json);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    int rc = f ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory building summary.md");
    if (!rc) rc = dkb__results_print(res, DKB_RESULTS_MARKDOWN, f, err);
    if (f && fclose(f) != 0 && !rc) rc = dkb_fail(err, DKB_ENOMEM, "out of memory building summary.md");
    /* results.json ends with a newline like every other text file */
    char *jnl = rc ? NULL : realloc(json, jlen + 2);
    if (!rc && !jnl) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    if (jnl) {
        json = jnl;
        json[jlen++] = '\n';
        json[jlen] = '\0';
    }
    if (!rc) rc = dkb__write_file_atomic(dir, "results.json", json, jlen, err);
    if (!rc) rc = dkb__write_file_atomic(dir, "summary.md", text, tlen, err);
    free(json);
    free(text);
    return rc;
}
