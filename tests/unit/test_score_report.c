/* test_score_report.c: the evaluation's reports from hand-made rows:
 * results.json (schema, numbers, nulls, checks, totals per mode) read back
 * with cJSON, summary.md and the table, CSV quoting, notes for every kind
 * of row, atomic replacement of an old report, an unwritable directory,
 * and an empty evaluation. */
#include <math.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "common/fsutil.h"
#include "harness/report.h"
#include "test_result_util.h"

#define NA NAN

static dkb_timing timing(double median, int runs) {
    dkb_timing t = {median, runs ? median * 0.9 : NA, runs ? median * 1.2 : NA, runs};
    return t;
}

static void set_item(dkb_eval_item *it, int q, dkb_mode mode, int missing, dkb_verdict v, double base, double cand,
                     const char *detail) {
    memset(it, 0, sizeof *it);
    it->qnum = q;
    snprintf(it->query, sizeof it->query, "q%02d", q);
    it->mode = mode;
    it->missing = missing;
    if (!missing) {
        char path[64];
        snprintf(path, sizeof path, "cands/q%02d.%s.c", q, dkb__eval_mode_name(mode));
        it->file = strdup(path);
        memset(it->sha256, 'a' + q % 6, 64);
    }
    it->verdict = v;
    it->detail = strdup(detail);
    it->baseline = timing(base, isnan(base) ? 0 : 10);
    it->candidate = timing(cand, isnan(cand) ? 0 : 12);
    it->floor_ms = NA;
    it->bytes_read = NA;
    it->bandwidth_gbs = NA;
}

/* Four rows: a fast full q06, a wrong full q01 (detail with a comma, a
 * quote, a pipe and a newline), a slow core q06, a missing core q14. */
static void make_results(dkb_eval_results *res, const char *out) {
    memset(res, 0, sizeof *res);
    res->opts.dir = "cands";
    res->opts.store = "data/sf1";
    res->opts.out = out;
    res->opts.backend = "cpu";
    res->opts.threshold = 1.0;
    res->opts.warmup = 1;
    res->opts.min_runs = 10;
    res->opts.min_seconds = 1;
    res->opts.command_line = "dkb eval cands --data data/sf1";
    res->nseeds = 3;
    res->seeds[1] = 12345;
    res->seeds[2] = 2147483647;
    res->scale_factor = 1;
    res->store_bytes = 1u << 30;
    res->limits.timeout_s = 120;
    res->limits.mem_bytes = 4ull << 30;
    res->limits.output_bytes = 1 << 20;
    res->threads = 4;
    snprintf(res->cpu_model, sizeof res->cpu_model, "Test CPU @ 1.00GHz");
    res->cores = 4;
    snprintf(res->started, sizeof res->started, "2025-01-01T00:00:00Z");
    res->wall_s = 12.5;
    res->n = 4;
    res->items = calloc(4, sizeof *res->items);
    set_item(&res->items[0], 6, DKB_MODE_FULL, 0, DKB_VERDICT_OK, 100, 25, "");
    res->items[0].floor_ms = 5;
    res->items[0].bytes_read = 1e9;
    res->items[0].bandwidth_gbs = 200;
    res->items[0].compile_log = strdup("");
    res->items[0].checks = cJSON_Parse("[{\"seed\": 0, \"ok\": true, \"message\": \"\"}]");
    set_item(&res->items[1], 1, DKB_MODE_FULL, 0, DKB_VERDICT_WRONG_ANSWER, 200, NA,
             "seed 12345: row 2, \"sum_qty\": 1|2\nnext");
    res->items[1].compile_log = strdup("q01.full.c:3: warning: unused variable 'x'");
    set_item(&res->items[2], 6, DKB_MODE_CORE, 0, DKB_VERDICT_OK, 50, 80, "");
    set_item(&res->items[3], 14, DKB_MODE_CORE, 1, DKB_VERDICT_OK, 30, NA, "");
}

static double num(const cJSON *o, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static int is_null(const cJSON *o, const char *key) { return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key)); }

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

static char *print_str(const dkb_eval_results *res, dkb_results_format fmt) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dkb_error err = {0};
    CHECK(dkb__results_print(res, fmt, f, &err) == 0);
    fclose(f);
    return buf;
}

static void check_json(const char *path) {
    char *text = NULL;
    size_t len = 0;
    dkb_error err = {0};
    CHECK(dkb__read_file(path, 1 << 20, &text, &len, &err) == 0);
    CHECK(len > 0 && text[len - 1] == '\n');
    cJSON *doc = cJSON_Parse(text);
    CHECK(doc != NULL);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(doc, "harness");
    CHECK_STR(str(h, "version"), DKB_VERSION);
    CHECK(num(h, "candidate_abi") == 1);
    CHECK_STR(str(doc, "started"), "2025-01-01T00:00:00Z");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "config");
    CHECK_STR(str(c, "command_line"), "dkb eval cands --data data/sf1");
    CHECK_STR(str(c, "store"), "data/sf1");
    CHECK(is_null(c, "queries"));
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(c, "seeds");
    CHECK(cJSON_GetArraySize(seeds) == 3);
    CHECK(cJSON_GetArrayItem(seeds, 2)->valuedouble == 2147483647.0);
    CHECK(num(c, "threads") == 4 && num(c, "min_runs") == 10 && num(c, "threshold") == 1);
    const cJSON *lim = cJSON_GetObjectItemCaseSensitive(c, "limits");
    CHECK(num(lim, "timeout_s") == 120 && num(lim, "mem_bytes") == 4294967296.0 && num(lim, "output_bytes") == 1048576);
    CHECK_STR(str(cJSON_GetObjectItemCaseSensitive(c, "machine"), "cpu"), "Test CPU @ 1.00GHz");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "modes")) == 2);

    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "candidates");
    CHECK(cJSON_GetArraySize(rows) == 4);
    const cJSON *r0 = cJSON_GetArrayItem(rows, 0), *r1 = cJSON_GetArrayItem(rows, 1);
    const cJSON *r2 = cJSON_GetArrayItem(rows, 2), *r3 = cJSON_GetArrayItem(rows, 3);
    CHECK_STR(str(r0, "query"), "q06");
    CHECK_STR(str(r0, "mode"), "full");
    CHECK_STR(str(r0, "class"), "ok");
    CHECK_STR(str(r0, "file"), "cands/q06.full.c");
    CHECK(str(r0, "sha256") && strlen(str(r0, "sha256")) == 64);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r0, "counted")));
    CHECK(near(num(r0, "speedup"), 4) && near(num(r0, "raw_speedup"), 4) && near(num(r0, "final_ms"), 25));
    CHECK(near(num(r0, "time_floor"), 5) && near(num(r0, "floor_ms"), 5) && near(num(r0, "bandwidth_gbs"), 200));
    const cJSON *bt = cJSON_GetObjectItemCaseSensitive(r0, "baseline_ms");
    CHECK(near(num(bt, "median"), 100) && near(num(bt, "min"), 90) && near(num(bt, "max"), 120) && num(bt, "runs") == 10);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r0, "checks");
    CHECK(cJSON_GetArraySize(checks) == 1 && num(cJSON_GetArrayItem(checks, 0), "seed") == 0);

    CHECK_STR(str(r1, "class"), "wrong_answer");
    CHECK_STR(str(r1, "verdict"), "wrong_answer");
    CHECK_STR(str(r1, "detail"), "seed 12345: row 2, \"sum_qty\": 1|2\nnext");
    CHECK_STR(str(r1, "note"), "seed 12345: row 2, \"sum_qty\": 1|2 next");
    CHECK_STR(str(r1, "compile_log"), "q01.full.c:3: warning: unused variable 'x'");
    CHECK(is_null(r1, "candidate_ms") && is_null(r1, "raw_speedup") && is_null(r1, "time_floor"));
    CHECK(near(num(r1, "speedup"), 1) && near(num(r1, "final_ms"), 200));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r1, "valid")));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r1, "checks")) == 0);

    CHECK_STR(str(r2, "class"), "ok");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r2, "valid")));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r2, "counted")));
    CHECK(near(num(r2, "raw_speedup"), 0.625) && near(num(r2, "speedup"), 1) && near(num(r2, "final_ms"), 50));
    CHECK_STR(str(r2, "note"), "valid, but 0.62x is under the threshold 1.00x: baseline counted");

    CHECK_STR(str(r3, "class"), "missing");
    CHECK(is_null(r3, "file") && is_null(r3, "sha256") && is_null(r3, "verdict"));
    CHECK_STR(str(r3, "note"), "no candidate file: baseline counted");

    /* totals: base 100+200+50+30 = 380, final 25+200+50+30 = 305 */
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "totals");
    CHECK(num(t, "rows") == 4 && num(t, "candidates") == 3 && num(t, "missing") == 1 && num(t, "valid") == 2);
    CHECK(num(t, "counted") == 1);
    CHECK(near(num(t, "pass_rate"), 2.0 / 3));
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(t, "fast_p");
    CHECK(near(num(fp, "1"), 1.0 / 3) && near(num(fp, "1.5"), 1.0 / 3) && near(num(fp, "2"), 1.0 / 3));
    CHECK(near(num(fp, "5"), 0));
    CHECK(num(cJSON_GetObjectItemCaseSensitive(t, "fast_count"), "2") == 1);
    CHECK(near(num(t, "baseline_ms_sum"), 380) && near(num(t, "final_ms_sum"), 305));
    CHECK(near(num(t, "overall_speedup"), 380.0 / 305) && near(num(t, "geomean_speedup"), pow(4, 0.25)));
    const cJSON *bm = cJSON_GetObjectItemCaseSensitive(doc, "totals_by_mode");
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(bm, "full"), *tc = cJSON_GetObjectItemCaseSensitive(bm, "core");
    CHECK(num(tf, "candidates") == 2 && near(num(tf, "pass_rate"), 0.5) && near(num(tf, "overall_speedup"), 300.0 / 225));
    CHECK(near(num(tf, "geomean_speedup"), 2));
    CHECK(num(tc, "candidates") == 1 && num(tc, "missing") == 1 && near(num(tc, "pass_rate"), 1));
    CHECK(near(num(tc, "overall_speedup"), 1) && near(num(tc, "geomean_speedup"), 1));
    CHECK(num(doc, "harness_errors") == 0);
    cJSON_Delete(doc);
    free(text);
}

static void test_reports(const char *dir) {
    dkb_eval_results res;
    make_results(&res, dir);
    dkb_error err = {0};
    CHECK(dkb__eval_score(&res, &err) == 0);

    /* an old report is replaced whole */
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", dir);
    FILE *old = fopen(path, "w");
    fputs("{\"old\": true, \"padding\": \"................................................................\"}\n", old);
    fclose(old);
    CHECK(dkb__results_write(&res, &err) == 0);
    check_json(path);

    char *md = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    CHECK(dkb__read_file(path, 1 << 20, &md, &len, &err) == 0);
    CHECK(md && strstr(md, "| q06 | full | ok | 100.000 | 25.000 | 4.00x | 5.000 | 5.00 |  |"));
    CHECK(md && strstr(md, "| q01 | full | wrong_answer | 200.000 | - | 1.00x | - | - | seed 12345: row 2, \"sum_qty\": 1\\|2 next |"));
    CHECK(md && strstr(md, "| q14 | core | missing | 30.000 | - | 1.00x | - | - | no candidate file: baseline counted |"));
    CHECK(md && strstr(md, "| pass rate | 66.7% | 50.0% | 100.0% |"));
    CHECK(md && strstr(md, "| fast_1.5 | 33.3% | 50.0% | 0.0% |"));
    CHECK(md && strstr(md, "| overall speedup | 1.25x | 1.33x | 1.00x |"));
    CHECK(md && strstr(md, "| geometric mean | 1.41x | 2.00x | 1.00x |"));
    CHECK(md && strstr(md, "- seeds: 0, 12345, 2147483647\n"));
    free(md);
    /* no temporary files left behind */
    snprintf(path, sizeof path, "%s/.results.json.tmp.%ld", dir, (long)getpid());
    CHECK(access(path, F_OK) != 0);

    char *table = print_str(&res, DKB_RESULTS_TABLE);
    CHECK(strstr(table, "q06   full ok                    100.000       25.000    4.00x      5.000       5.00  \n"));
    CHECK(strstr(table, "q06   core ok                     50.000       80.000    1.00x          -          -  valid, but 0.62x"));
    CHECK(strstr(table, "3 candidates, 2 valid: pass rate 66.7%; 1 counted at threshold 1.00x; 1 query without a candidate\n"));
    CHECK(strstr(table, "fast_1 33.3%  fast_1.5 33.3%  fast_2 33.3%  fast_5 0.0%\n"));
    CHECK(strstr(table, "overall speedup 1.25x (baseline medians 380.000 ms / final medians 305.000 ms); geometric mean 1.41x\n"));
    CHECK(strstr(table, "full: 2 candidates, 1 valid: pass rate 50.0%"));
    CHECK(strstr(table, "seeds: 0, 12345, 2147483647\n"));
    free(table);

    char *csv = print_str(&res, DKB_RESULTS_CSV);
    const char *head = "query,mode,class,valid,counted,baseline_ms,candidate_ms,raw_speedup,final_ms,speedup,floor_ms,"
                       "time_floor,sha256,file,note\n";
    CHECK(!strncmp(csv, head, strlen(head)));
    CHECK(strstr(csv, "\nq06,full,ok,1,1,100,25,4,25,4,5,5,aaaa"));
    CHECK(strstr(csv, ",cands/q01.full.c,\"seed 12345: row 2, \"\"sum_qty\"\": 1|2 next\"\n"));
    CHECK(strstr(csv, "\nq14,core,missing,0,0,30,,,30,1,,,,,no candidate file: baseline counted\n"));
    free(csv);

    char *js = print_str(&res, DKB_RESULTS_JSON);
    cJSON *doc = cJSON_Parse(js);
    CHECK(doc && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "candidates")) == 4);
    cJSON_Delete(doc);
    free(js);

    /* notes: a baseline failure is appended; ok but untimed; a crash without detail */
    dkb_eval_item *it = &res.items[1];
    it->baseline_error = strdup("timeout after 120 s");
    char *note = dkb__results_note(it, 1.0);
    CHECK_STR(note, "seed 12345: row 2, \"sum_qty\": 1|2 next; baseline failed: timeout after 120 s");
    free(note);
    free(it->detail);
    it->detail = strdup("");
    it->verdict = DKB_VERDICT_CRASH;
    free(it->baseline_error);
    it->baseline_error = NULL;
    note = dkb__results_note(it, 1.0);
    CHECK_STR(note, "crashed (signal)");
    free(note);
    it->verdict = DKB_VERDICT_OK;
    it->candidate = timing(NA, 0);
    dkb__eval_score(&res, &err);
    note = dkb__results_note(it, 1.0);
    CHECK_STR(note, "not timed: baseline counted");
    free(note);

    dkb__eval_results_free(&res);
}

static void test_empty(const char *dir) {
    dkb_eval_results res;
    memset(&res, 0, sizeof res);
    res.opts.out = dir;
    res.opts.threshold = 1.0;
    res.opts.modes = DKB_EVAL_FULL;
    res.nseeds = 1;
    dkb_error err = {0};
    CHECK(dkb__eval_score(&res, &err) == 0);
    CHECK(dkb__results_write(&res, &err) == 0);
    char *table = print_str(&res, DKB_RESULTS_TABLE);
    CHECK(strstr(table, "(no candidates)\n"));
    CHECK(strstr(table, "0 candidates, 0 valid: pass rate 0.0%"));
    CHECK(strstr(table, "overall speedup 1.00x"));
    free(table);
    char *md = print_str(&res, DKB_RESULTS_MARKDOWN);
    CHECK(strstr(md, "| | all | full |\n|---|--:|--:|\n"));
    CHECK(!strstr(md, "| core"));
    free(md);
    char *csv = print_str(&res, DKB_RESULTS_CSV);
    CHECK(strchr(csv, '\n') == csv + strlen(csv) - 1);
    free(csv);
    dkb__eval_results_free(&res);
}

static void test_unwritable(const char *dir) {
    dkb_eval_results res;
    memset(&res, 0, sizeof res);
    char path[4096];
    snprintf(path, sizeof path, "%s/missing/deeper", dir);
    res.opts.out = path;
    res.opts.threshold = 1.0;
    dkb_error err = {0};
    CHECK(dkb__eval_score(&res, &err) == 0);
    CHECK_ERR(dkb__results_write(&res, &err), DKB_ENOENT, err, "results.json.tmp");
    dkb__eval_results_free(&res);
    /* a bad threshold is reported by the scoring */
    res.opts.threshold = 0;
    CHECK_ERR(dkb__eval_score(&res, &err), DKB_EINVAL, err, "threshold 0");
}

int main(void) {
    const char *base = getenv("TMPDIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/dkb-report-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_reports(dir);
    test_empty(dir);
    test_unwritable(dir);
    dkb__rm_rf(dir);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_score_report: ok\n");
    return 0;
}
