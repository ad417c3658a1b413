/* summary.c: `dkb report` (summary.h): score each run's best candidates
 * with the harness's definitions (score.c) and print the tables and the
 * HTML report. */
#include "optimize/summary.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"    // defines: dkb__read_file, dkb__path_join
#include "dkb/query.h"        // defines: dkb_query_number, DKB_NQUERIES
#include "harness/attrib.h"   // defines: dkb__attrib_from_json, dkb__attrib_own_share
#include "harness/score.h"    // defines: dkb__score_rows, dkb__score_totals
#include "optimize/loop.h"     // defines: dkb__opt_improves
#include "optimize/traj.h"    // defines: dkb__traj_load
#include "report/html.h"     // defines: dkb__html_begin, dkb__html_speedup_chart

#define MAX_ROWS (DKB_NQUERIES * DKB_NMODES)

typedef struct row {
    char query[48], mode[8], cls[32];
    int rounds_used;
    dkb_score_row s;
    dkb_attribution attr;      /* the best valid candidate's kernel attribution (CUDA) */
} row;

typedef struct run_sum {
    char model[128], target[16], dir[512];
    int n;
    row rows[MAX_ROWS];
    dkb_score_totals totals[DKB_NMODES];   /* by dkb_mode */
    double rounds_mean[DKB_NMODES];
} run_sum;

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* q01..q22 as the loop writes them (dkb_query_number also takes "6", "Q6"),
 * or a SQL task's name ([a-z0-9_]+, shorter than a row's query field; not
 * another spelling of a TPC-H query: src/sql/task.h) */
static int known_query(const char *q) {
    if (q[0] == 'q' && strlen(q) == 3 && dkb_query_number(q)) return 1;
    size_t n = strlen(q);
    if (!n || n >= sizeof ((row *)0)->query || dkb_query_number(q)) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((q[i] >= 'a' && q[i] <= 'z') || (q[i] >= '0' && q[i] <= '9') || q[i] == '_')) return 0;
    return 1;
}
static int known_mode(const char *m) { return !strcmp(m, "full") || !strcmp(m, "core"); }

/* The record's round, 0 when absent or not a sensible count. */
static int round_of(const cJSON *r) {
    double v = num(r, "round");
    return isfinite(v) && v >= 0 && v <= 1e6 ? (int)v : 0;
}

static row *row_of(run_sum *s, const char *q, const char *mode) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->rows[i].query, q) && !strcmp(s->rows[i].mode, mode)) return &s->rows[i];
    if (s->n == MAX_ROWS || strlen(q) >= sizeof s->rows[0].query || strlen(mode) >= 8) return NULL;
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
    if (!cJSON_IsObject(cfg)) {
        cJSON_Delete(cfg);
        return dkb_fail(err, DKB_EPARSE, "%s/run.json: not a JSON object", dir);
    }
    snprintf(s->model, sizeof s->model, "%s", str(cfg, "model"));
    snprintf(s->target, sizeof s->target, "%s", str(cfg, "target"));
    double threshold = num(cfg, "threshold");
    if (!isfinite(threshold) || threshold <= 0) threshold = 1.0;
    cJSON_Delete(cfg);

    cJSON *recs = NULL;
    int skipped = 0;
    if ((rc = dkb__traj_load(dir, &recs, &skipped, err))) return rc;
    if (skipped)
        fprintf(stderr, "dkb report: note: %s/trajectory.jsonl: %d unreadable line%s left out\n", dir, skipped,
                skipped == 1 ? "" : "s");
    double best[MAX_ROWS];
    for (int i = 0; i < MAX_ROWS; i++) best[i] = -1;
    const cJSON *r;
    cJSON_ArrayForEach(r, recs) {
        const char *type = str(r, "type");
        if (strcmp(type, "attempt") && strcmp(type, "baseline")) continue;
        if (!known_query(str(r, "query")) || !known_mode(str(r, "mode"))) continue;   /* not a record we wrote */
        row *w = row_of(s, str(r, "query"), str(r, "mode"));
        if (!w) continue;
        double b = num(r, "baseline_ms"), fl = num(r, "floor_ms");
        if (isfinite(b) && (!isfinite(w->s.baseline_ms) || w->s.verdict != DKB_VERDICT_OK)) w->s.baseline_ms = b;
        if (isfinite(fl) && !isfinite(w->s.floor_ms)) w->s.floor_ms = fl;
        if (strcmp(type, "attempt")) continue;
        int round = round_of(r);
        double raw = num(r, "raw_speedup");
        int valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "valid"));
        double *bp = &best[w - s->rows];
        if (dkb__opt_improves(valid, raw, *bp)) {   /* the best valid candidate: its own medians */
            *bp = raw;
            w->s.verdict = DKB_VERDICT_OK;
            w->s.baseline_ms = b;
            w->s.candidate_ms = num(r, "candidate_ms");
            if (isfinite(fl)) w->s.floor_ms = fl;
            w->rounds_used = round;
            snprintf(w->cls, sizeof w->cls, "ok");
            dkb__attrib_from_json(r, "attribution", &w->attr);
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
    for (int m = 0; m < DKB_NMODES; m++) {
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

static const char *const MODES[2] = {"full", "core"};

/* The best candidate's own and library kernel time: "0.750 / 0.250
 * (75.0%)", or "-" when none was recorded (CPU targets, no CUPTI). */
static void fmt_attr(char *b, size_t n, const dkb_attribution *a) {
    double share = dkb__attrib_own_share(a);
    if (!a->recorded) snprintf(b, n, "-");
    else if (isfinite(share)) snprintf(b, n, "%.3f / %.3f (%.1f%%)", a->own_ms, a->library_ms, 100 * share);
    else snprintf(b, n, "%.3f / %.3f", a->own_ms, a->library_ms);
}

/* A Markdown table cell: '|' escaped, line breaks as spaces. */
static void md_cell(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '\n' || *s == '\r') fputc(' ', f);
        else fputc(*s, f);
    }
}

static void write_md(FILE *md, run_sum *runs, int n) {
    fprintf(md, "## Totals (per model x target x mode)\n\n");
    fprintf(md, "| model | target | mode | queries | pass rate | fast_1 | fast_1.5 | fast_2 | fast_5 | overall speedup | geomean | rounds used (mean) |\n");
    fprintf(md, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++) {
            const dkb_score_totals *t = &runs[i].totals[m];
            if (!t->rows) continue;
            fputs("| ", md);
            md_cell(md, runs[i].model);
            fputs(" | ", md);
            md_cell(md, runs[i].target);
            fprintf(md, " | %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.2fx | %.2fx | %.1f |\n",
                    MODES[m], t->rows, 100 * t->pass_rate, 100 * t->fast_p[0],
                    100 * t->fast_p[1], 100 * t->fast_p[2], 100 * t->fast_p[3], t->overall_speedup,
                    t->geomean_speedup, runs[i].rounds_mean[m]);
        }
    fprintf(md, "\n## Per query\n\n| model | target | query | mode | class | baseline ms | best ms | speedup | rounds used "
                "| own / library kernel ms |\n");
    fprintf(md, "|---|---|---|---|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < runs[i].n; k++) {
            const row *w = &runs[i].rows[k];
            char b[32], c[32];
            fmt_ms(b, sizeof b, w->s.baseline_ms);
            fmt_ms(c, sizeof c, w->s.valid ? w->s.candidate_ms : NAN);
            fputs("| ", md);
            md_cell(md, runs[i].model);
            fputs(" | ", md);
            md_cell(md, runs[i].target);
            fprintf(md, " | %s | %s | ", w->query, w->mode);
            md_cell(md, w->cls);
            char at[64];
            fmt_attr(at, sizeof at, &w->attr);
            fprintf(md, " | %s | %s | %.2fx | %d | %s |\n", b, c, w->s.speedup, w->rounds_used, at);
        }
}

static void write_html(FILE *h, run_sum *runs, int n) {
    dkb__html_begin(h, "dkb optimize report");
    fputs("<h2>Totals</h2>\n<table><tr><th>model</th><th>target</th><th>mode</th>"
          "<th>queries</th><th>pass rate</th><th>fast_1</th><th>fast_2</th><th>overall speedup</th><th>geomean</th>"
          "<th>rounds used</th></tr>\n",
          h);
    for (int i = 0; i < n; i++)
        for (int m = 0; m < 2; m++) {
            const dkb_score_totals *t = &runs[i].totals[m];
            if (!t->rows) continue;
            fputs("<tr><td>", h);
            dkb__html_escape(h, runs[i].model);
            fputs("</td><td>", h);
            dkb__html_escape(h, runs[i].target);
            fprintf(h, "</td><td>%s</td><td>%d</td><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td>"
                       "<td>%.2fx</td><td>%.2fx</td><td>%.1f</td></tr>\n",
                    MODES[m], t->rows, 100 * t->pass_rate, 100 * t->fast_p[0], 100 * t->fast_p[2],
                    t->overall_speedup, t->geomean_speedup, runs[i].rounds_mean[m]);
        }
    fputs("</table>\n<h2>Per-query speedup (best valid candidate; 1.0 = baseline)</h2>\n", h);
    /* one bar per (run, row) */
    int nbars = 0;
    for (int i = 0; i < n; i++) nbars += runs[i].n;
    dkb_html_bar *bars = calloc(nbars > 0 ? (size_t)nbars : 1, sizeof *bars);
    char (*labels)[320] = calloc(nbars > 0 ? (size_t)nbars : 1, sizeof *labels);
    char (*titles)[400] = calloc(nbars > 0 ? (size_t)nbars : 1, sizeof *titles);
    if (bars && labels && titles) {
        int b = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < runs[i].n; k++, b++) {
                const row *w = &runs[i].rows[k];
                double sp = isfinite(w->s.speedup) && w->s.speedup > 0 ? w->s.speedup : 1.0;
                snprintf(labels[b], sizeof labels[b], "%s %s %s %s", runs[i].model, runs[i].target, w->query, w->mode);
                snprintf(titles[b], sizeof titles[b], "%s %s: %.2fx (%s)", w->query, w->mode, sp, w->cls);
                bars[b] = (dkb_html_bar){.label = labels[b], .speedup = sp, .title = titles[b],
                                         .kind = w->s.counted ? DKB_HTML_BAR_COUNTED : DKB_HTML_BAR_NONE};
            }
        dkb__html_speedup_chart(h, bars, nbars);
    } else {
        fputs("<p>(chart left out: out of memory)</p>\n", h);
    }
    free(bars);
    free(labels);
    free(titles);
    fputs("<h2>Per query</h2>\n<table><tr><th>model</th><th>target</th><th>query</th><th>mode</th><th>class</th>"
          "<th>baseline ms</th><th>best ms</th><th>speedup</th><th>rounds used</th><th>own / library kernel ms</th></tr>\n",
          h);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < runs[i].n; k++) {
            const row *w = &runs[i].rows[k];
            char b[32], c[32];
            fmt_ms(b, sizeof b, w->s.baseline_ms);
            fmt_ms(c, sizeof c, w->s.valid ? w->s.candidate_ms : NAN);
            fputs("<tr><td>", h);
            dkb__html_escape(h, runs[i].model);
            fputs("</td><td>", h);
            dkb__html_escape(h, runs[i].target);
            fprintf(h, "</td><td>%s</td><td>%s</td><td>", w->query, w->mode);
            dkb__html_escape(h, w->cls);
            char at[64];
            fmt_attr(at, sizeof at, &w->attr);
            fprintf(h, "</td><td>%s</td><td>%s</td><td>%.2fx</td><td>%d</td><td>%s</td></tr>\n", b, c, w->s.speedup,
                    w->rounds_used, at);
        }
    fputs("</table>\n<p>Metrics as in docs/harness.md, \"Scoring\".</p>\n", h);
    dkb__html_end(h);
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
