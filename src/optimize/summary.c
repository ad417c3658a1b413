/* summary.c: `dkb report` (summary.h): score each run's best candidates
 * with the harness's definitions (score.c) and print the tables and the
 * HTML report. */
#include "optimize/summary.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"    // defines: dkb__read_file, dkb__path_join
#include "harness/score.h"    // defines: dkb__score_rows, dkb__score_totals
#include "optimize/traj.h"    // defines: dkb__traj_load

#define MAX_ROWS 44

typedef struct row {
    char query[8], mode[8], cls[32];
    int rounds_used;
    dkb_score_row s;
} row;

typedef struct run_sum {
    char model[128], target[16], dir[512];
    int n;
    row rows[MAX_ROWS];
    dkb_score_totals totals[2];   /* by dkb_mode */
    double rounds_mean[2];
} run_sum;

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static row *row_of(run_sum *s, const char *q, const char *mode) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->rows[i].query, q) && !strcmp(s->rows[i].mode, mode)) return &s->rows[i];
    if (s->n == MAX_ROWS || strlen(q) >= 8 || strlen(mode) >= 8) return NULL;
    row *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->query, sizeof r->query, "%s", q);
    snprintf(r->mode, sizeof r->mode, "%s", mode);
    snprintf(r->cls, sizeof r->cls, "no_attempt");
    r->s.mode = strcmp(mode, "core") ? DKB_MODE_FULL : DKB_MODE_CORE;
    r->s.verdict = DKB_VERDICT_HARNESS_ERROR;
    r->s.baseline_ms = r->s.candidate_ms = r->s.floor_ms = NAN;
    return r;
}

static int load_run(const char *dir, run_sum *s, dkb_error *err) {
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    char *path = dkb__path_join(dir, "run.json"), *text = NULL;
    size_t len;
    int rc = path ? dkb__read_file(path, 1u << 20, &text, &len, err) : DKB_ENOMEM;
    if (rc) {
        dkb_fail(err, rc, "%s: not a dkb optimize run directory (no readable run.json)", dir);
        free(path);
        return rc;
    }
    cJSON *cfg = cJSON_Parse(text);
    free(text);
    free(path);
    if (!cfg) return dkb_fail(err, DKB_EPARSE, "%s/run.json: not JSON", dir);
    snprintf(s->model, sizeof s->model, "%s", str(cfg, "model"));
    snprintf(s->target, sizeof s->target, "%s", str(cfg, "target"));
    double threshold = num(cfg, "threshold");
    if (!isfinite(threshold) || threshold <= 0) threshold = 1.0;
    cJSON_Delete(cfg);

    cJSON *recs = NULL;
    if ((rc = dkb__traj_load(dir, &recs, NULL, err))) return rc;
    double best[MAX_ROWS];
    for (int i = 0; i < MAX_ROWS; i++) best[i] = -1;
    const cJSON *r;
    cJSON_ArrayForEach(r, recs) {
        const char *type = str(r, "type");
        if (strcmp(type, "attempt") && strcmp(type, "baseline")) continue;
        row *w = row_of(s, str(r, "query"), str(r, "mode"));
        if (!w) continue;
        double b = num(r, "baseline_ms"), fl = num(r, "floor_ms");
        if (isfinite(b) && (!isfinite(w->s.baseline_ms) || w->s.verdict != DKB_VERDICT_OK)) w->s.baseline_ms = b;
        if (isfinite(fl) && !isfinite(w->s.floor_ms)) w->s.floor_ms = fl;
        if (strcmp(type, "attempt")) continue;
        int round = (int)num(r, "round");
        double raw = num(r, "raw_speedup");
        int valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "valid")) && isfinite(raw);
        double *bp = &best[w - s->rows];
        if (valid && raw > *bp) {   /* the best valid candidate: its own medians */
            *bp = raw;
            w->s.verdict = DKB_VERDICT_OK;
            w->s.baseline_ms = b;
            w->s.candidate_ms = num(r, "candidate_ms");
            if (isfinite(fl)) w->s.floor_ms = fl;
            w->rounds_used = round;
            snprintf(w->cls, sizeof w->cls, "ok");
        } else if (*bp < 0) {       /* none valid yet: the latest verdict */
            snprintf(w->cls, sizeof w->cls, "%s", str(r, "class"));
            if (round > w->rounds_used) w->rounds_used = round;
        }
    }
    cJSON_Delete(recs);
    dkb_score_row rows[MAX_ROWS];
    for (int i = 0; i < s->n; i++) rows[i] = s->rows[i].s;
    if ((rc = dkb__score_rows(rows, s->n, threshold, err))) return rc;
    for (int i = 0; i < s->n; i++) s->rows[i].s = rows[i];
    for (int m = 0; m < 2; m++) {
        dkb__score_totals(rows, s->n, m, &s->totals[m]);
        int cnt = 0, sum = 0;
        for (int i = 0; i < s->n; i++)
            if ((int)s->rows[i].s.mode == m) cnt++, sum += s->rows[i].rounds_used;
        s->rounds_mean[m] = cnt ? (double)sum / cnt : NAN;
    }
    return 0;
}

static void fmt_ms(char *b, size_t n, double v) {
    if (isfinite(v)) snprintf(b, n, "%.3f", v);
    else snprintf(b, n, "-");
}

static void html_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static const char *const MODES[2] = {"full", "core"};

static void write_md(FILE *md, run_sum *runs, int n) {
    fprintf(md, "## Totals (per model x target x mode)\n\n");
    fprintf(md, "| model | target | mode | queries | pass rate | fast_1 | fast_1.5 | fast_2 | fast_5 | overall speedup | geomean | rounds used (mean) |\n");
    fprintf(md, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++) {
            const dkb_score_totals *t = &runs[i].totals[m];
            if (!t->rows) continue;
            fprintf(md, "| %s | %s | %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.2fx | %.2fx | %.1f |\n",
                    runs[i].model, runs[i].target, MODES[m], t->rows, 100 * t->pass_rate, 100 * t->fast_p[0],
                    100 * t->fast_p[1], 100 * t->fast_p[2], 100 * t->fast_p[3], t->overall_speedup,
                    t->geomean_speedup, runs[i].rounds_mean[m]);
        }
    fprintf(md, "\n## Per query\n\n| model | target | query | mode | class | baseline ms | best ms | speedup | rounds used |\n");
    fprintf(md, "|---|---|---|---|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < runs[i].n; k++) {
            const row *w = &runs[i].rows[k];
            char b[32], c[32];
            fmt_ms(b, sizeof b, w->s.baseline_ms);
            fmt_ms(c, sizeof c, w->s.valid ? w->s.candidate_ms : NAN);
            fprintf(md, "| %s | %s | %s | %s | %s | %s | %s | %.2fx | %d |\n", runs[i].model, runs[i].target, w->query,
                    w->mode, w->cls, b, c, w->s.speedup, w->rounds_used);
        }
}

static void write_html(FILE *h, run_sum *runs, int n) {
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dkb optimize report</title>\n"
          "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}</style></head><body>\n"
          "<h1>dkb optimize report</h1>\n<h2>Totals</h2>\n<table><tr><th>model</th><th>target</th><th>mode</th>"
          "<th>queries</th><th>pass rate</th><th>fast_1</th><th>fast_2</th><th>overall speedup</th><th>geomean</th>"
          "<th>rounds used</th></tr>\n",
          h);
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++) {
            const dkb_score_totals *t = &runs[i].totals[m];
            if (!t->rows) continue;
            fputs("<tr><td>", h);
            html_escape(h, runs[i].model);
            fprintf(h, "</td><td>%s</td><td>%s</td><td>%d</td><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td>"
                       "<td>%.2fx</td><td>%.2fx</td><td>%.1f</td></tr>\n",
                    runs[i].target, MODES[m], t->rows, 100 * t->pass_rate, 100 * t->fast_p[0], 100 * t->fast_p[2],
                    t->overall_speedup, t->geomean_speedup, runs[i].rounds_mean[m]);
        }
    fputs("</table>\n<h2>Per-query speedup (best valid candidate; 1.0 = baseline)</h2>\n", h);
    /* one bar per (run, row), on a log2 scale from 1/8x to 64x */
    int bars = 0;
    for (int i = 0; i < n; i++) bars += runs[i].n;
    const int bar_h = 18, left = 260, width = 520, height = bars * bar_h + 40;
    fprintf(h, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"12\">\n",
            left + width + 80, height);
    const double lo = -3, hi = 6;   /* log2 range */
    const double x1 = left + (0 - lo) / (hi - lo) * width;
    int y = 10;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < runs[i].n; k++, y += bar_h) {
            const row *w = &runs[i].rows[k];
            double sp = isfinite(w->s.speedup) && w->s.speedup > 0 ? w->s.speedup : 1.0;
            double l = log2(sp);
            if (l < lo) l = lo;
            if (l > hi) l = hi;
            double x = left + (l - lo) / (hi - lo) * width;
            double xa = x < x1 ? x : x1, wd = fabs(x - x1);
            fprintf(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + 13);
            html_escape(h, runs[i].model);
            fprintf(h, " %s %s %s</text>\n", runs[i].target, w->query, w->mode);
            fprintf(h, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s: %.2fx (%s)</title></rect>\n",
                    xa, y + 2, wd < 1 ? 1 : wd, bar_h - 4, w->s.counted ? "#2a7" : "#bbb", w->query, w->mode, sp,
                    w->cls);
            fprintf(h, "<text x=\"%.1f\" y=\"%d\">%.2fx</text>\n", (x > x1 ? x : x1) + 4, y + 13, sp);
        }
    fprintf(h, "<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n", x1, x1, y + 4);
    fprintf(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1x (log scale)</text>\n</svg>\n", x1, y + 20);
    fputs("<h2>Per query</h2>\n<table><tr><th>model</th><th>target</th><th>query</th><th>mode</th><th>class</th>"
          "<th>baseline ms</th><th>best ms</th><th>speedup</th><th>rounds used</th></tr>\n",
          h);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < runs[i].n; k++) {
            const row *w = &runs[i].rows[k];
            char b[32], c[32];
            fmt_ms(b, sizeof b, w->s.baseline_ms);
            fmt_ms(c, sizeof c, w->s.valid ? w->s.candidate_ms : NAN);
            fputs("<tr><td>", h);
            html_escape(h, runs[i].model);
            fprintf(h, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.2fx</td><td>%d</td></tr>\n",
                    runs[i].target, w->query, w->mode, w->cls, b, c, w->s.speedup, w->rounds_used);
        }
    fputs("</table>\n<p>Metrics as in docs/harness.md, \"Scoring\".</p>\n</body></html>\n", h);
}

int dkb__opt_report(const char *const *rundirs, int n, FILE *md, FILE *html, dkb_error *err) {
    run_sum *runs = calloc(n > 0 ? (size_t)n : 1, sizeof *runs);
    if (!runs) return dkb_fail(err, DKB_ENOMEM, "report: out of memory");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) rc = load_run(rundirs[i], &runs[i], err);
    if (!rc) {
        write_md(md, runs, n);
        if (html) write_html(html, runs, n);
    }
    free(runs);
    return rc;
}
