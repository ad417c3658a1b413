/* test_budget_protocol.c: what the harness and its worker exchange about a
 * memory budget (protocol.h): the job's "mem_budget" (written, read back,
 * absent means none, refused for core mode and when not whole bytes), and
 * the report's "streamed" object and "budget_error" (round trip; a report
 * without them reads as no budget, unknown bytes NaN). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/protocol.h"
#include "test_check.h"

/* Write `text` to a fresh file under /tmp; its path in path. */
static void write_text(char *path, size_t n, const char *text) {
    snprintf(path, n, "/tmp/test_budget_protocol.%ld.json", (long)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot create %s", path);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_job(void) {
    char path[128];
    snprintf(path, sizeof path, "/tmp/test_budget_protocol.%ld.job", (long)getpid());
    dkb_job j;
    dkb__job_init(&j);
    CHECK(j.mem_budget == 0, "a fresh job has no budget");
    j.store = strdup("/data/sf1");
    j.query = strdup("q06");
    j.mem_budget = (int64_t)6 << 20;
    dkb_error err = {0};
    CHECK(dkb__job_write(&j, path, &err) == 0, "%s", err.msg);
    dkb_job back;
    CHECK(dkb__job_read(path, &back, &err) == 0, "%s", err.msg);
    CHECK(back.mem_budget == (int64_t)6 << 20, "mem_budget read back as %lld", (long long)back.mem_budget);
    dkb__job_free(&back);
    j.mem_budget = 0;   /* none: not written, reads back as 0 */
    CHECK(dkb__job_write(&j, path, &err) == 0, "%s", err.msg);
    CHECK(dkb__job_read(path, &back, &err) == 0 && back.mem_budget == 0, "%s", err.msg);
    dkb__job_free(&back);
    dkb__job_free(&j);
    unlink(path);

    static const char *const bad[] = {
        "{\"store\": \"s\", \"query\": \"q06\", \"mode\": \"core\", \"mem_budget\": 1048576}",
        "{\"store\": \"s\", \"query\": \"q06\", \"mem_budget\": 1.5}",
        "{\"store\": \"s\", \"query\": \"q06\", \"mem_budget\": -1}",
        "{\"store\": \"s\", \"query\": \"q06\", \"mem_budget\": \"8M\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char p[128];
        write_text(p, sizeof p, bad[i]);
        dkb_error e = {0};
        CHECK(dkb__job_read(p, &back, &e) == DKB_EPARSE && strstr(e.msg, "mem_budget"), "%s: %s", bad[i], e.msg);
        dkb__job_free(&back);
        unlink(p);
    }
}

static void test_report(void) {
    dkb_report r;
    dkb__report_init(&r);
    CHECK(!r.budgeted && isnan(r.streamed_baseline) && isnan(r.streamed_candidate) && !r.budget_error[0],
          "an initialised report has no budget");
    r.verdict = DKB_VERDICT_OK;
    r.budgeted = true;
    r.partitioned = true;
    r.chunks = 4;
    r.streamed_baseline = 16816016;
    r.streamed_candidate = 16816016;
    r.load_limit = 4194304;
    snprintf(r.budget_error, sizeof r.budget_error, "q06: --mem-budget 1.0M is too small: it needs at least 2.0M");
    char *line = dkb__report_json(&r);
    CHECK(line != NULL);
    dkb_report back;
    dkb_error err = {0};
    CHECK(line && dkb__report_parse(line, &back, &err) == 0, "%s", err.msg);
    CHECK(back.budgeted && back.partitioned && back.chunks == 4, "streamed: %d %d %d", back.budgeted,
          back.partitioned, back.chunks);
    CHECK(back.streamed_baseline == 16816016 && back.streamed_candidate == 16816016 && back.load_limit == 4194304,
          "bytes %g %g %g", back.streamed_baseline, back.streamed_candidate, back.load_limit);
    CHECK(!strcmp(back.budget_error, r.budget_error), "budget_error '%s'", back.budget_error);
    dkb__report_free(&back);
    free(line);

    /* a candidate that never ran: its bytes unknown, written as null */
    r.streamed_candidate = NAN;
    r.budget_error[0] = 0;
    line = dkb__report_json(&r);
    CHECK(line && strstr(line, "\"candidate_bytes\":null") && !strstr(line, "budget_error"), "%s", line ? line : "(null)");
    CHECK(line && dkb__report_parse(line, &back, &err) == 0 && isnan(back.streamed_candidate), "%s", err.msg);
    dkb__report_free(&back);
    free(line);
    dkb__report_free(&r);

    /* no budget: no "streamed" member, and one without it reads as none */
    dkb__report_init(&r);
    r.verdict = DKB_VERDICT_OK;
    line = dkb__report_json(&r);
    CHECK(line && !strstr(line, "streamed"), "%s", line ? line : "(null)");
    free(line);
    CHECK(dkb__report_parse("{\"verdict\": \"ok\"}", &back, &err) == 0 && !back.budgeted &&
              isnan(back.streamed_baseline),
          "%s", err.msg);
    dkb__report_free(&back);
    dkb__report_free(&r);
}

int main(void) {
    test_job();
    test_report();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
