/* bench_report.c: the reports of `dkb bench` (bench.h): each query's
 * numbers, the table and CSV on stdout, results.json with the "bench"
 * summary, and the atomic writes of results.json, summary.md and
 * report.html. The HTML itself is in bench_html.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bench/bench.h"
#include "common/fsutil.h"     // defines: dkb__write_file_atomic
#include "harness/report.h"    // defines: dkb__results_json, dkb__results_write

void dkb__bench_row(const dkb_eval_item *it, dkb_bench_row *row) {
    const dkb_score_row *s = &it->score;
    row->query = it->query;
    row->cls = dkb__eval_class(it);
    row->pass = it->missing ? "-" : s->valid ? "yes" : "no";
    row->baseline_ms = it->baseline.runs > 0 ? it->baseline.median : NAN;
    row->expert_ms = !it->missing && it->candidate.runs > 0 ? it->candidate.median : NAN;
    row->speedup = s->valid ? s->raw_speedup : NAN;
    row->floor_ms = isfinite(it->floor_ms) && it->floor_ms > 0 ? it->floor_ms : NAN;
    row->time_floor = s->valid && isfinite(row->floor_ms) ? row->expert_ms / row->floor_ms : NAN;
    row->nranks = it->nranks > 1 ? it->nranks : 1;
    row->expert_1rank_ms = row->nranks > 1 && !it->missing && it->candidate_solo.runs > 0 ? it->candidate_solo.median : NAN;
    row->efficiency = isfinite(row->expert_1rank_ms) && isfinite(row->expert_ms) && row->expert_ms > 0
                          ? row->expert_1rank_ms / (row->nranks * row->expert_ms)
                          : NAN;
}

/* The ranks the bench ran on (mpirun -np K; 1 for one process). */
static int bench_ranks(const dkb_eval_results *res) { return res->n > 0 && res->items[0].nranks > 1 ? res->items[0].nranks : 1; }

/* ---- results.json ---- */

/* One call's streamed bytes over the pinned host-to-device bandwidth, in
 * ms (the transfer floor); NaN without both. */
static double transfer_floor_ms(double bytes, double gbs) {
    return isfinite(bytes) && bytes > 0 && isfinite(gbs) && gbs > 0 ? bytes / (gbs * 1e6) : NAN;
}

static void add_num(cJSON *o, const char *key, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

cJSON *dkb__bench_json(const dkb_eval_results *res, const dkb_bench_info *info) {
    cJSON *doc = dkb__results_json(res);
    if (!doc) return NULL;
    cJSON *b = cJSON_AddObjectToObject(doc, "bench");
    cJSON_AddStringToObject(b, "backend", info->backend);
    if (info->target) cJSON_AddStringToObject(b, "target", info->target);
    else cJSON_AddNullToObject(b, "target");
    cJSON_AddStringToObject(b, "device", info->device ? info->device : "");
    cJSON_AddStringToObject(b, "cpu", res->cpu_model);
    cJSON_AddNumberToObject(b, "cores", res->cores);
    cJSON_AddNumberToObject(b, "scale_factor", isfinite(res->scale_factor) && res->scale_factor > 0
                                                   ? res->scale_factor : info->sf);
    cJSON_AddStringToObject(b, "store", info->store);
    cJSON_AddBoolToObject(b, "store_generated", info->generated);
    add_num(b, "gen_seconds", info->generated ? info->gen_seconds : NAN);
    cJSON_AddStringToObject(b, "experts", info->experts);
    cJSON_AddNumberToObject(b, "experts_found", info->experts_found);
    cJSON_AddBoolToObject(b, "quick", info->quick);
    cJSON_AddStringToObject(b, "command", info->command_line ? info->command_line : "");
    cJSON_AddNumberToObject(b, "ranks", bench_ranks(res));
    if (info->h2d_gbs > 0) cJSON_AddNumberToObject(b, "pinned_h2d_gbs", info->h2d_gbs);
    cJSON *rows = cJSON_AddArrayToObject(b, "queries");
    for (int i = 0; i < res->n; i++) {
        dkb_bench_row r;
        dkb__bench_row(&res->items[i], &r);
        cJSON *j = cJSON_CreateObject();
        if (!cJSON_AddItemToArray(rows, j)) {
            cJSON_Delete(j);
            break;
        }
        cJSON_AddStringToObject(j, "query", r.query);
        cJSON_AddStringToObject(j, "class", r.cls);
        cJSON_AddStringToObject(j, "pass", r.pass);
        add_num(j, "baseline_ms", r.baseline_ms);
        add_num(j, "expert_ms", r.expert_ms);
        add_num(j, "speedup", r.speedup);
        add_num(j, "counted_speedup", res->items[i].score.speedup);
        add_num(j, "floor_ms", r.floor_ms);
        add_num(j, "time_floor", r.time_floor);
        const dkb_eval_item *it = &res->items[i];
        if (r.nranks > 1) {   /* mpirun -np K: expert_ms is on K ranks (docs/distributed.md) */
            cJSON_AddNumberToObject(j, "ranks", r.nranks);
            add_num(j, "expert_1rank_ms", r.expert_1rank_ms);
            add_num(j, "scaling_efficiency", r.efficiency);
            if (it->solo_error) cJSON_AddStringToObject(j, "expert_1rank_error", it->solo_error);
        }
        if (it->budgeted) {   /* --mem-budget: what one call streamed (docs/partitions.md) */
            cJSON_AddBoolToObject(j, "partitioned", it->partitioned);
            cJSON_AddNumberToObject(j, "baseline_runs", it->chunks);
            add_num(j, "baseline_streamed_bytes", it->streamed_baseline);
            add_num(j, "expert_streamed_bytes", it->streamed_candidate);
            if (info->h2d_gbs > 0) {   /* cuda: the transfer floors of the bytes each side streamed */
                add_num(j, "baseline_transfer_floor_ms", transfer_floor_ms(it->streamed_baseline, info->h2d_gbs));
                add_num(j, "expert_transfer_floor_ms", transfer_floor_ms(it->streamed_candidate, info->h2d_gbs));
            }
        }
    }
    const dkb_score_totals *t = &res->totals;
    cJSON *tj = cJSON_AddObjectToObject(b, "totals");
    cJSON_AddNumberToObject(tj, "queries", t->rows);
    cJSON_AddNumberToObject(tj, "experts", t->candidates);
    cJSON_AddNumberToObject(tj, "missing", t->missing);
    cJSON_AddNumberToObject(tj, "passed", t->valid);
    cJSON_AddNumberToObject(tj, "pass_rate", t->pass_rate);
    cJSON_AddNumberToObject(tj, "overall_speedup", t->overall_speedup);
    cJSON_AddNumberToObject(tj, "geomean_speedup", t->geomean_speedup);
    cJSON_AddNumberToObject(tj, "baseline_ms_sum", t->baseline_ms_sum);
    cJSON_AddNumberToObject(tj, "final_ms_sum", t->final_ms_sum);
    /* the last member tells whether every allocation went in */
    if (!cJSON_GetObjectItemCaseSensitive(tj, "final_ms_sum") || cJSON_GetArraySize(rows) != res->n) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

/* ---- text ---- */

static const char *fmt(char *buf, size_t n, const char *f, double v) {
    if (!isfinite(v)) return "-";
    snprintf(buf, n, f, v);
    return buf;
}

/* Under --mem-budget: per query whether the baseline ran partitioned (its
 * runs of partitions per pass) and the bytes one call of each side
 * streamed (the expert's: its loads, the largest call); on CUDA also the
 * expert's transfer floor and its time over it. */
static void print_streamed(const dkb_eval_results *res, const dkb_bench_info *info, FILE *f) {
    if (!res->opts.mem_budget) return;
    const int cuda = info->h2d_gbs > 0;
    fprintf(f, "\nstreamed under --mem-budget %lld bytes (one call", (long long)res->opts.mem_budget);
    if (cuda) fprintf(f, "; pinned host-to-device %.1f GB/s, measured in this run", info->h2d_gbs);
    fprintf(f, "):\n%-5s %-12s %18s %18s", "query", "baseline", "baseline bytes", "expert bytes");
    if (cuda) fprintf(f, " %12s %11s %11s", "floor ms", "base/floor", "expert/floor");
    fputc('\n', f);
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        char runs[32], b1[32], b2[32];
        if (it->budgeted && it->partitioned) snprintf(runs, sizeof runs, "%d runs", it->chunks);
        else snprintf(runs, sizeof runs, "%s", it->budgeted ? "fits" : "-");
        fprintf(f, "%-5s %-12s %18s %18s", it->query, runs, fmt(b1, sizeof b1, "%.0f", it->streamed_baseline),
                fmt(b2, sizeof b2, "%.0f", it->streamed_candidate));
        if (cuda) {
            dkb_bench_row r;
            dkb__bench_row(it, &r);
            const double fb = transfer_floor_ms(it->streamed_baseline, info->h2d_gbs);
            const double fe = transfer_floor_ms(it->streamed_candidate, info->h2d_gbs);
            char b3[32], b4[32], b5[32];
            fprintf(f, " %12s %11s %11s", fmt(b3, sizeof b3, "%.3f", fe),
                    fmt(b4, sizeof b4, "%.2f", r.baseline_ms / fb), fmt(b5, sizeof b5, "%.2f", r.expert_ms / fe));
        }
        fputc('\n', f);
    }
}

int dkb__bench_print_table(const dkb_eval_results *res, const dkb_bench_info *info, FILE *f, dkb_error *err) {
    enum { NOTE_MAX = 60 };
    const int K = bench_ranks(res);
    char kms[32];
    snprintf(kms, sizeof kms, "expert %dr ms", K);
    if (K > 1) /* mpirun -np K: the expert on K ranks, on one, and the efficiency t1 / (K tK) */
        fprintf(f, "%-5s %12s %12s %12s %6s %9s %10s %10s  %-4s  %-16s %s\n", "query", "baseline ms", kms,
                "expert 1r ms", "eff.", "speedup", "floor ms", "time/floor", "pass", "class", "note");
    else
        fprintf(f, "%-5s %12s %12s %9s %10s %10s  %-4s  %-16s %s\n", "query", "baseline ms", "expert ms", "speedup",
                "floor ms", "time/floor", "pass", "class", "note");
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        dkb_bench_row r;
        dkb__bench_row(it, &r);
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        char *note = dkb__results_note(it, res->opts.threshold);
        if (note && strlen(note) > NOTE_MAX) strcpy(note + NOTE_MAX - 3, "...");
        if (K > 1) {
            char b6[32], b7[32];
            fprintf(f, "%-5s %12s %12s %12s %6s %9s %10s %10s  %-4s  %-16s %s\n", r.query,
                    fmt(b1, sizeof b1, "%.3f", r.baseline_ms), fmt(b2, sizeof b2, "%.3f", r.expert_ms),
                    fmt(b6, sizeof b6, "%.3f", r.expert_1rank_ms), fmt(b7, sizeof b7, "%.2f", r.efficiency),
                    fmt(b3, sizeof b3, "%.2fx", r.speedup), fmt(b4, sizeof b4, "%.3f", r.floor_ms),
                    fmt(b5, sizeof b5, "%.2f", r.time_floor), r.pass, r.cls, note ? note : "");
        } else
            fprintf(f, "%-5s %12s %12s %9s %10s %10s  %-4s  %-16s %s\n", r.query, fmt(b1, sizeof b1, "%.3f", r.baseline_ms),
                    fmt(b2, sizeof b2, "%.3f", r.expert_ms), fmt(b3, sizeof b3, "%.2fx", r.speedup),
                    fmt(b4, sizeof b4, "%.3f", r.floor_ms), fmt(b5, sizeof b5, "%.2f", r.time_floor), r.pass, r.cls,
                    note ? note : "");
        free(note);
    }
    if (!res->n) fprintf(f, "(no queries)\n");
    print_streamed(res, info, f);
    const dkb_score_totals *t = &res->totals;
    fprintf(f, "\npass rate %.1f%% (%d of %d experts valid", 100 * t->pass_rate, t->valid, t->candidates);
    if (t->missing) fprintf(f, "; %d quer%s without an expert", t->missing, t->missing == 1 ? "y" : "ies");
    fprintf(f, ")\noverall speedup %.2fx (baseline %.3f ms / bench %.3f ms); geometric mean %.2fx\n",
            t->overall_speedup, t->baseline_ms_sum, t->final_ms_sum, t->geomean_speedup);
    if (K > 1)
        fprintf(f, "%d ranks (mpirun): baseline and expert ms on %d ranks (the slowest rank's), expert 1r ms on rank 0 "
                   "alone over the whole store; eff. = 1r / (%d x %dr)\n", K, K, K, K);
    fprintf(f, "backend %s%s%s%s, SF %g, %d thread%s; %s\n", info->backend, info->device && *info->device ? " " : "",
            info->device ? info->device : "", info->target ? " (Triton experts)" : "", res->scale_factor > 0 ? res->scale_factor : info->sf, res->threads,
            res->threads == 1 ? "" : "s", res->cpu_model);
    if (ferror(f)) return dkb_fail(err, DKB_EIO, "writing the table failed");
    return 0;
}

int dkb__bench_print_csv(const dkb_eval_results *res, FILE *f, dkb_error *err) {
    const int K = bench_ranks(res);
    fputs(K > 1 ? "query,class,pass,baseline_ms,expert_ms,speedup,floor_ms,time_floor,ranks,expert_1rank_ms,"
                  "scaling_efficiency\n"
                : "query,class,pass,baseline_ms,expert_ms,speedup,floor_ms,time_floor\n",
          f);
    for (int i = 0; i < res->n; i++) {
        dkb_bench_row r;
        dkb__bench_row(&res->items[i], &r);
        char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];
        fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s", r.query, r.cls, r.pass, fmt(b1, sizeof b1, "%.6f", r.baseline_ms),
                fmt(b2, sizeof b2, "%.6f", r.expert_ms), fmt(b3, sizeof b3, "%.6f", r.speedup),
                fmt(b4, sizeof b4, "%.6f", r.floor_ms), fmt(b5, sizeof b5, "%.6f", r.time_floor));
        if (K > 1)
            fprintf(f, ",%d,%s,%s", K, fmt(b6, sizeof b6, "%.6f", r.expert_1rank_ms),
                    fmt(b7, sizeof b7, "%.4f", r.efficiency));
        fputc('\n', f);
    }
    if (ferror(f)) return dkb_fail(err, DKB_EIO, "writing the CSV failed");
    return 0;
}

/* ---- files ---- */


int dkb__bench_write(const dkb_eval_results *res, const dkb_bench_info *info, dkb_error *err) {
    const char *dir = res->opts.out;
    if (!dir) return dkb_fail(err, DKB_EINVAL, "bench: no results directory");
    int rc = dkb__results_write(res, err);   /* summary.md and the harness's results.json */
    if (rc) return rc;
    cJSON *doc = dkb__bench_json(res, info);
    char *json = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!json) return dkb_fail(err, DKB_ENOMEM, "%s/results.json: out of memory building it", dir);
    size_t jlen = strlen(json);
    char *jnl = realloc(json, jlen + 2);   /* ends with a newline like every text file */
    if (!jnl) {
        free(json);
        return dkb_fail(err, DKB_ENOMEM, "%s/results.json: out of memory", dir);
    }
    json = jnl;
    json[jlen++] = '\n';
    json[jlen] = '\0';
    rc = dkb__write_file_atomic(dir, "results.json", json, jlen, err);
    free(json);
    if (rc) return rc;
    char *html = NULL;
    size_t hlen = 0;
    FILE *f = open_memstream(&html, &hlen);
    if (!f) return dkb_fail(err, DKB_ENOMEM, "%s/report.html: out of memory building it", dir);
    dkb__bench_html(res, info, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(html);
        return dkb_fail(err, DKB_ENOMEM, "%s/report.html: out of memory building it", dir);
    }
    rc = dkb__write_file_atomic(dir, "report.html", html, hlen, err);
    free(html);
    return rc;
}
