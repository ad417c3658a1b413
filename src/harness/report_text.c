/* report_text.c: the evaluation's rows and totals as an aligned table, as
 * Markdown (summary.md), as CSV, or as the results.json document. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness/report.h"

/* malloc'd printf */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

char *dkb__results_note(const dkb_eval_item *it, double threshold) {
    const dkb_score_row *s = &it->score;
    const char *detail = it->detail ? it->detail : "";
    char *note;
    if (it->missing) note = strdup("no candidate file: baseline counted");
    else if (s->valid && !s->counted)
        note = str_printf("valid, but %.2fx is under the threshold %.2fx: baseline counted", s->raw_speedup, threshold);
    else if (s->valid) note = strdup(detail);
    else if (it->verdict == DKB_VERDICT_OK) note = str_printf("%s%snot timed: baseline counted", detail, *detail ? "; " : "");
    else note = strdup(*detail ? detail : dkb__verdict_text(it->verdict));
    if (note && it->baseline_error) {
        char *both = str_printf("%s%sbaseline failed: %s", note, *note ? "; " : "", it->baseline_error);
        free(note);
        note = both;
    }
    /* one line */
    for (char *p = note; p && *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    return note;
}

/* ---- numbers: "-" when unknown ---- */

static const char *fmt_ms(char *buf, size_t n, double v) {
    if (!isfinite(v)) return "-";
    snprintf(buf, n, "%.3f", v);
    return buf;
}

static const char *fmt_x(char *buf, size_t n, double v) {
    if (!isfinite(v)) return "-";
    snprintf(buf, n, "%.2fx", v);
    return buf;
}

static const char *fmt_ratio(char *buf, size_t n, double v) {
    if (!isfinite(v)) return "-";
    snprintf(buf, n, "%.2f", v);
    return buf;
}

static unsigned modes_of(const dkb_eval_results *res) {
    return res->opts.modes ? res->opts.modes : DKB_EVAL_FULL | DKB_EVAL_CORE;
}

/* ---- kernel attribution (CUDA rows: own vs library kernel time) ---- */

static int shows_attribution(const dkb_eval_results *res) {
    if (res->opts.backend && !strcmp(res->opts.backend, "cuda")) return 1;
    for (int i = 0; i < res->n; i++)
        if (res->items[i].attribution.recorded) return 1;
    return 0;
}

/* The cells of a row's attribution: own, library, copy, memset ms, kernel
 * launches, own share, the device's idle ms in the call's window and the
 * time to its first activity ("-" each when not recorded) and the last column
 * (the top kernels, or why nothing was recorded). */
typedef struct attrib_cells {
    char own[32], lib[32], copy[32], mset[32], kernels[16], share[16], idle[32], lead[32];
    char last[640];            /* top (360) + "; " + note (256) */
} attrib_cells;

static void attrib_cells_of(const dkb_eval_item *it, attrib_cells *c) {
    const dkb_attribution *a = &it->attribution;
    char b[32];
    snprintf(c->own, sizeof c->own, "%s", fmt_ms(b, sizeof b, a->recorded ? a->own_ms : NAN));
    snprintf(c->lib, sizeof c->lib, "%s", fmt_ms(b, sizeof b, a->recorded ? a->library_ms : NAN));
    snprintf(c->copy, sizeof c->copy, "%s", fmt_ms(b, sizeof b, a->recorded ? a->copy_ms : NAN));
    snprintf(c->mset, sizeof c->mset, "%s", fmt_ms(b, sizeof b, a->recorded ? a->memset_ms : NAN));
    snprintf(c->idle, sizeof c->idle, "%s",
             fmt_ms(b, sizeof b, a->recorded ? a->window_ms - a->busy_ms : NAN));
    snprintf(c->lead, sizeof c->lead, "%s", fmt_ms(b, sizeof b, a->recorded ? a->lead_ms : NAN));
    if (a->recorded) snprintf(c->kernels, sizeof c->kernels, "%d", a->kernels);
    else snprintf(c->kernels, sizeof c->kernels, "-");
    double share = dkb__attrib_own_share(a);
    if (isfinite(share)) snprintf(c->share, sizeof c->share, "%.1f%%", 100 * share);
    else snprintf(c->share, sizeof c->share, "-");
    char top[360];
    dkb__attrib_top_line(a, 3, top, sizeof top);
    if (a->recorded) snprintf(c->last, sizeof c->last, "%s%s%s", top, a->note[0] ? "; " : "", a->note);
    else if (a->note[0]) snprintf(c->last, sizeof c->last, "not recorded: %s", a->note);
    else snprintf(c->last, sizeof c->last, "not recorded (%s)", dkb__eval_class(it));
}

static void print_attribution_table(const dkb_eval_results *res, FILE *f) {
    enum { LAST_MAX = 90 };
    fprintf(f, "kernel attribution (one untimed call on seed 0, CUPTI; device ms):\n");
    fprintf(f, "%-5s %-4s %10s %10s %9s %9s %7s %9s %8s %8s  %s\n", "query", "mode", "own ms", "library ms",
            "copy ms", "memset ms", "kernels", "own share", "idle ms", "lead ms", "top kernels");
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        if (it->missing) continue;
        attrib_cells c;
        attrib_cells_of(it, &c);
        if (strlen(c.last) > LAST_MAX) strcpy(c.last + LAST_MAX - 3, "...");
        fprintf(f, "%-5s %-4s %10s %10s %9s %9s %7s %9s %8s %8s  %s\n", it->query, dkb__eval_mode_name(it->mode),
                c.own, c.lib, c.copy, c.mset, c.kernels, c.share, c.idle, c.lead, c.last);
    }
    fprintf(f, "\n");
}

/* ---- table ---- */

static void totals_lines(FILE *f, const char *label, const dkb_score_totals *t, double threshold) {
    fprintf(f, "%s%d candidate%s, %d valid: pass rate %.1f%%; %d counted at threshold %.2fx", label, t->candidates,
            t->candidates == 1 ? "" : "s", t->valid, 100 * t->pass_rate, t->counted, threshold);
    if (t->missing) fprintf(f, "; %d quer%s without a candidate", t->missing, t->missing == 1 ? "y" : "ies");
    fprintf(f, "\n%*s", (int)strlen(label), "");
    for (int k = 0; k < DKB_FAST_P_COUNT; k++)
        fprintf(f, "%sfast_%g %.1f%%", k ? "  " : "", dkb__fast_p[k], 100 * t->fast_p[k]);
    fprintf(f, "\n%*soverall speedup %.2fx (baseline medians %.3f ms / final medians %.3f ms); geometric mean %.2fx\n",
            (int)strlen(label), "", t->overall_speedup, t->baseline_ms_sum, t->final_ms_sum, t->geomean_speedup);
}

static void print_table(const dkb_eval_results *res, FILE *f) {
    enum { NOTE_MAX = 72 };
    fprintf(f, "%-5s %-4s %-16s %12s %12s %8s %10s %10s  %s\n", "query", "mode", "class", "baseline ms", "candidate ms",
            "speedup", "floor ms", "time/floor", "note");
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        char *note = dkb__results_note(it, res->opts.threshold);
        if (note && strlen(note) > NOTE_MAX) strcpy(note + NOTE_MAX - 3, "...");
        fprintf(f, "%-5s %-4s %-16s %12s %12s %8s %10s %10s  %s\n", it->query, dkb__eval_mode_name(it->mode),
                dkb__eval_class(it), fmt_ms(b1, sizeof b1, it->baseline.median),
                fmt_ms(b2, sizeof b2, it->candidate.median), fmt_x(b3, sizeof b3, it->score.speedup),
                fmt_ms(b4, sizeof b4, it->floor_ms), fmt_ratio(b5, sizeof b5, it->score.time_floor), note ? note : "");
        free(note);
    }
    if (!res->n) fprintf(f, "(no candidates)\n");
    fprintf(f, "\n");
    if (res->n && shows_attribution(res)) print_attribution_table(res, f);
    unsigned m = modes_of(res);
    int both = (m & DKB_EVAL_FULL) && (m & DKB_EVAL_CORE) && res->by_mode[DKB_MODE_FULL].rows &&
               res->by_mode[DKB_MODE_CORE].rows;
    totals_lines(f, "", &res->totals, res->opts.threshold);
    if (both) {
        totals_lines(f, "full: ", &res->by_mode[DKB_MODE_FULL], res->opts.threshold);
        totals_lines(f, "core: ", &res->by_mode[DKB_MODE_CORE], res->opts.threshold);
    }
    fprintf(f, "seeds:");
    for (int i = 0; i < res->nseeds; i++) fprintf(f, "%s %llu", i ? "," : "", (unsigned long long)res->seeds[i]);
    fprintf(f, "\n");
}

/* ---- Markdown ---- */

/* s with | escaped (a table cell) */
static void md_cell(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else fputc(*s, f);
    }
}

static void md_totals_row(FILE *f, const char *name, const dkb_eval_results *res, unsigned m,
                          void (*cell)(FILE *, const dkb_score_totals *, int), int arg) {
    fprintf(f, "| %s | ", name);
    cell(f, &res->totals, arg);
    for (int mode = DKB_MODE_FULL; mode <= DKB_MODE_CORE; mode++) {
        if (!(m & (1u << mode))) continue;
        fputs(" | ", f);
        cell(f, &res->by_mode[mode], arg);
    }
    fputs(" |\n", f);
}

enum { C_ROWS, C_CANDS, C_MISSING, C_VALID, C_COUNTED };
static void cell_count(FILE *f, const dkb_score_totals *t, int which) {
    int v = which == C_ROWS ? t->rows : which == C_CANDS ? t->candidates : which == C_MISSING ? t->missing
          : which == C_VALID ? t->valid : t->counted;
    fprintf(f, "%d", v);
}
static void cell_pass(FILE *f, const dkb_score_totals *t, int unused) {
    (void)unused;
    fprintf(f, "%.1f%%", 100 * t->pass_rate);
}
static void cell_fast(FILE *f, const dkb_score_totals *t, int k) { fprintf(f, "%.1f%%", 100 * t->fast_p[k]); }
static void cell_overall(FILE *f, const dkb_score_totals *t, int unused) {
    (void)unused;
    fprintf(f, "%.2fx", t->overall_speedup);
}
static void cell_geomean(FILE *f, const dkb_score_totals *t, int unused) {
    (void)unused;
    fprintf(f, "%.2fx", t->geomean_speedup);
}
static void cell_sums(FILE *f, const dkb_score_totals *t, int unused) {
    (void)unused;
    fprintf(f, "%.3f / %.3f", t->baseline_ms_sum, t->final_ms_sum);
}

static void print_markdown(const dkb_eval_results *res, FILE *f) {
    const dkb_eval_opts *o = &res->opts;
    unsigned m = modes_of(res);
    fprintf(f, "# dkb eval results\n\n");
    fprintf(f, "- candidates: `%s`\n", o->dir ? o->dir : "");
    fprintf(f, "- store: `%s` (SF %g, %llu bytes); backend %s, %d thread%s\n", o->store ? o->store : "",
            res->scale_factor, (unsigned long long)res->store_bytes, o->backend ? o->backend : "cpu", res->threads,
            res->threads == 1 ? "" : "s");
    fprintf(f, "- machine: %s, %d core%s\n", res->cpu_model[0] ? res->cpu_model : "unknown CPU", res->cores,
            res->cores == 1 ? "" : "s");
    fprintf(f, "- seeds:");
    for (int i = 0; i < res->nseeds; i++) fprintf(f, "%s %llu", i ? "," : "", (unsigned long long)res->seeds[i]);
    fprintf(f, "\n- threshold %.2fx; timing: %d warm-up%s, then at least %d runs and %g s; limits: %g s, %llu MiB memory\n",
            o->threshold, o->warmup, o->warmup == 1 ? "" : "s", o->min_runs, o->min_seconds, res->limits.timeout_s,
            (unsigned long long)(res->limits.mem_bytes >> 20));
    fprintf(f, "- harness: DataKernelBench %s, started %s, %.1f s\n\n", DKB_VERSION, res->started, res->wall_s);

    fprintf(f, "| query | mode | class | baseline ms | candidate ms | speedup | floor ms | time/floor | note |\n");
    fprintf(f, "|---|---|---|--:|--:|--:|--:|--:|---|\n");
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        char *note = dkb__results_note(it, o->threshold);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | ", it->query, dkb__eval_mode_name(it->mode),
                dkb__eval_class(it), fmt_ms(b1, sizeof b1, it->baseline.median),
                fmt_ms(b2, sizeof b2, it->candidate.median), fmt_x(b3, sizeof b3, it->score.speedup),
                fmt_ms(b4, sizeof b4, it->floor_ms), fmt_ratio(b5, sizeof b5, it->score.time_floor));
        md_cell(f, note);
        fputs(" |\n", f);
        free(note);
    }
    fprintf(f, "\n## Totals\n\n| | all");
    if (m & DKB_EVAL_FULL) fputs(" | full", f);
    if (m & DKB_EVAL_CORE) fputs(" | core", f);
    fprintf(f, " |\n|---|--:");
    if (m & DKB_EVAL_FULL) fputs("|--:", f);
    if (m & DKB_EVAL_CORE) fputs("|--:", f);
    fputs("|\n", f);
    md_totals_row(f, "rows", res, m, cell_count, C_ROWS);
    md_totals_row(f, "candidates", res, m, cell_count, C_CANDS);
    md_totals_row(f, "missing", res, m, cell_count, C_MISSING);
    md_totals_row(f, "valid", res, m, cell_count, C_VALID);
    md_totals_row(f, "pass rate", res, m, cell_pass, 0);
    md_totals_row(f, "counted", res, m, cell_count, C_COUNTED);
    for (int k = 0; k < DKB_FAST_P_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "fast_%g", dkb__fast_p[k]);
        md_totals_row(f, name, res, m, cell_fast, k);
    }
    md_totals_row(f, "baseline / final ms", res, m, cell_sums, 0);
    md_totals_row(f, "overall speedup", res, m, cell_overall, 0);
    md_totals_row(f, "geometric mean", res, m, cell_geomean, 0);
    if (res->harness_errors)
        fprintf(f, "\n%d row%s met a harness error; see results.json.\n", res->harness_errors,
                res->harness_errors == 1 ? "" : "s");
    if (res->n && shows_attribution(res)) {
        fprintf(f, "\n## Kernel attribution\n\n"
                   "One extra, untimed call per CUDA row (seed 0) recorded with CUPTI: device time of the "
                   "candidate's own kernels and of library kernels (CUB, Thrust, ...), of its memory copies "
                   "and memsets; idle: the device's time without any of them in the call's window "
                   "(host work, round trips, launch gaps), lead: the window's opening to the first "
                   "(docs/harness.md, \"Kernel attribution\").\n\n");
        fprintf(f, "| query | mode | own ms | library ms | copy ms | memset ms | kernels | own share | idle ms | lead ms "
                   "| top kernels |\n");
        fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
        for (int i = 0; i < res->n; i++) {
            const dkb_eval_item *it = &res->items[i];
            if (it->missing) continue;
            attrib_cells c;
            attrib_cells_of(it, &c);
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | ", it->query, dkb__eval_mode_name(it->mode),
                    c.own, c.lib, c.copy, c.mset, c.kernels, c.share, c.idle, c.lead);
            md_cell(f, c.last);
            fputs(" |\n", f);
        }
    }
}

/* ---- CSV ---- */

static void csv_field(FILE *f, const char *s) {
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
}

static void print_csv(const dkb_eval_results *res, FILE *f) {
    fputs("query,mode,class,valid,counted,baseline_ms,candidate_ms,raw_speedup,final_ms,speedup,floor_ms,"
          "time_floor,sha256,file,note\n", f);
    for (int i = 0; i < res->n; i++) {
        const dkb_eval_item *it = &res->items[i];
        const dkb_score_row *s = &it->score;
        fprintf(f, "%s,%s,%s,%d,%d,", it->query, dkb__eval_mode_name(it->mode), dkb__eval_class(it), s->valid, s->counted);
        csv_num(f, it->baseline.median), fputc(',', f);
        csv_num(f, it->candidate.median), fputc(',', f);
        csv_num(f, s->raw_speedup), fputc(',', f);
        csv_num(f, s->final_ms), fputc(',', f);
        csv_num(f, s->speedup), fputc(',', f);
        csv_num(f, it->floor_ms), fputc(',', f);
        csv_num(f, s->time_floor), fputc(',', f);
        fprintf(f, "%s,", it->missing ? "" : it->sha256);
        csv_field(f, it->file), fputc(',', f);
        char *note = dkb__results_note(it, res->opts.threshold);
        csv_field(f, note);
        free(note);
        fputc('\n', f);
    }
}

int dkb__results_print(const dkb_eval_results *res, dkb_results_format fmt, FILE *f, dkb_error *err) {
    switch (fmt) {
    case DKB_RESULTS_TABLE: print_table(res, f); break;
    case DKB_RESULTS_MARKDOWN: print_markdown(res, f); break;
    case DKB_RESULTS_CSV: print_csv(res, f); break;
    case DKB_RESULTS_JSON: {
        cJSON *doc = dkb__results_json(res);
        char *s = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        if (!s) return dkb_fail(err, DKB_ENOMEM, "out of memory building the JSON report");
        fputs(s, f);
        fputc('\n', f);
        free(s);
        break;
    }
    default: return dkb_fail(err, DKB_EINVAL, "unknown report format %d", (int)fmt);
    }
    if (fflush(f) != 0 || ferror(f)) return dkb_fail(err, DKB_EIO, "writing the report failed");
    return 0;
}
