/* test_sql_task.c: the parts of a SQL task (src/sql/task.h) that need no
 * libduckdb: the task name of a file (good stems; a bad character, a
 * missing .sql, an empty or over-long stem, a TPC-H query's name refused),
 * the job file's "sql"/"sql_plan"/"sql_columns" members (written and read
 * back byte for byte; absent for a built-in query; a SQL job without its
 * column names refused), and a task rebuilt from its parts as a worker
 * does (the query object: number 0, the name, no parameters for any seed;
 * bad plans and column lists refused). The planning and the end-to-end
 * runs are in tests/cli/sql_task.sh. */
#include <stdlib.h>
#include <unistd.h>

#include "dkb/query.h"
#include "harness/protocol.h"
#include "sql/task.h"
#include "test_check.h"


static void test_names(void) {
    char name[DKB_SQL_TASK_NAME_MAX];
    dkb_error err = {0};
    CHECK(dkb__sql_task_name("returnflag_qty.sql", name, sizeof name, &err) == 0 && !strcmp(name, "returnflag_qty"));
    CHECK(dkb__sql_task_name("some/dir/a1_b2.sql", name, sizeof name, &err) == 0 && !strcmp(name, "a1_b2"));
    const char *bad[] = {"Bad.sql", "a-b.sql", "a.b.sql", "x.txt", ".sql", "noext", "q06.sql", "6.sql", "Q6.sql",
                         "dir/q22.sql"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = (dkb_error){0};
        CHECK(dkb__sql_task_name(bad[i], name, sizeof name, &err) == DKB_EINVAL, "%s accepted", bad[i]);
        CHECK(strstr(err.msg, bad[i]) != NULL, "%s: message '%s' does not name the file", bad[i], err.msg);
    }
    char longname[128];
    memset(longname, 'a', 60);
    strcpy(longname + 60, ".sql");
    CHECK(dkb__sql_task_name(longname, name, sizeof name, &err) == DKB_EINVAL);
}

static void test_job(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/job.json", dir);
    dkb_job j, r;
    dkb__job_init(&j);
    j.store = strdup("/data/sf1");
    j.query = strdup("returnflag_qty");
    j.sql = strdup("SELECT 'a\"b', 1 -- \\n\n");
    j.sql_plan = strdup("{\"error\": false, \"plans\": [{\"type\": \"LOGICAL_GET\"}]}");
    j.sql_columns = strdup("[\"l_returnflag\",\"n\"]");
    dkb_error err = {0};
    CHECK(dkb__job_write(&j, path, &err) == 0, "%s", err.msg);
    CHECK(dkb__job_read(path, &r, &err) == 0, "%s", err.msg);
    CHECK(r.sql && !strcmp(r.sql, j.sql));
    CHECK(r.sql_plan && !strcmp(r.sql_plan, j.sql_plan));
    CHECK(r.sql_columns && !strcmp(r.sql_columns, j.sql_columns), "%s", r.sql_columns ? r.sql_columns : "(null)");
    dkb__job_free(&r);
    /* a built-in query's job has none of them */
    free(j.sql), free(j.sql_plan), free(j.sql_columns);
    j.sql = j.sql_plan = j.sql_columns = NULL;
    CHECK(dkb__job_write(&j, path, &err) == 0, "%s", err.msg);
    CHECK(dkb__job_read(path, &r, &err) == 0, "%s", err.msg);
    CHECK(!r.sql && !r.sql_plan && !r.sql_columns);
    dkb__job_free(&r);
    dkb__job_free(&j);
    /* a SQL job without its column names */
    FILE *f = fopen(path, "w");
    fputs("{\"store\": \"/s\", \"query\": \"t\", \"sql\": \"SELECT 1\", \"sql_plan\": \"{}\"}", f);
    fclose(f);
    err = (dkb_error){0};
    CHECK_ERR(dkb__job_read(path, &r, &err), DKB_EPARSE, err, "sql_columns");
    dkb__job_free(&r);
}

static void test_parts(void) {
    static const char PLAN[] =
        "{\"error\": false, \"plans\": [{\"type\": \"LOGICAL_GET\", \"name\": \"seq_scan\", "
        "\"function_data\": {\"table\": \"lineitem\"}, \"names\": [\"l_orderkey\", \"l_quantity\"], "
        "\"column_indexes\": [{\"index\": 1}], \"children\": []}]}";
    dkb__sql_task *t = NULL;
    dkb_error err = {0};
    CHECK(dkb__sql_task_from_parts("qty_only", "SELECT l_quantity FROM lineitem", PLAN, "[\"l_quantity\"]", &t, &err) == 0,
          "%s", err.msg);
    if (t) {
        const dkb_query *q = dkb__sql_task_query(t);
        CHECK(q->number == 0 && !strcmp(q->name, "qty_only") && q->nparams == 0);
        CHECK(strstr(q->title, "qty_only.sql") != NULL, "%s", q->title);
        CHECK(!strcmp(q->sql, "SELECT l_quantity FROM lineitem"));
        dkb_params p;
        CHECK(dkb_query_params(q, 12345, 1.0, NULL, 0, &p, &err) == 0 && p.n == 0, "%s", err.msg);
        char *cols = dkb__sql_task_columns_json(t);
        CHECK(cols && !strcmp(cols, "[\"l_quantity\"]"), "%s", cols ? cols : "(null)");
        free(cols);
        CHECK(!strcmp(dkb__sql_task_plan_json(t), PLAN));
    }
    dkb__sql_task_free(t);
    t = NULL;
    CHECK_ERR(dkb__sql_task_from_parts("x", "SELECT 1", "{\"plans\": []}", "[\"a\"]", &t, &err), DKB_EPARSE, err,
              "no plan");
    CHECK(!t);
    CHECK_ERR(dkb__sql_task_from_parts("x", "SELECT 1", PLAN, "[]", &t, &err), DKB_EPARSE, err, "column names");
    CHECK_ERR(dkb__sql_task_from_parts("x", "SELECT 1", PLAN, "[1]", &t, &err), DKB_EPARSE, err, "not a string");
    CHECK_ERR(dkb__sql_task_from_parts("x", "SELECT 1", PLAN, "not json", &t, &err), DKB_EPARSE, err, "column names");
    CHECK_ERR(dkb__sql_task_from_parts("", "SELECT 1", PLAN, "[\"a\"]", &t, &err), DKB_EINVAL, err, "bad name");
    CHECK(!t);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    char base[1024];
    snprintf(base, sizeof base, "%s/dkb-sql-task-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 2;
    }
    test_names();
    test_job(base);
    test_parts();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
