/* test_sql_task.c: the parts of a SQL task (src/sql/task.h) that need no
 * libduckdb: the task name of a file (good stems; a bad character, a
 * missing .sql, an empty or over-long stem, a TPC-H query's name refused),
 * the job file's "sql"/"sql_plan"/"sql_columns" members (written and read
 * back byte for byte; absent for a built-in query; a SQL job without its
 * column names refused), and a task rebuilt from its parts as a worker
 * does (the query object: number 0, the name, no parameters for any seed;
 * bad plans and column lists refused), the "-- dkb:param" declarations
 * (task_params.h: grids, seed 0's defaults, draws on the grid and the same
 * for the same seed, a value off the grid refused, each bad declaration one
 * line with the file and line) and a task with parameters rebuilt from its
 * plan bundle (finds the plan of its parameter set). The planning and the
 * end-to-end runs are in tests/cli/sql_task.sh. */
#include <stdlib.h>
#include <unistd.h>

#include "dkb/query.h"
#include "harness/protocol.h"
#include "common/date.h"
#include "sql/task.h"
#include "sql/task_params.h"
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

static const char PSQL[] =
    "-- a task with parameters\n"
    "-- dkb:param d date 1993-01-01..1997-10-01 step month default 1994-01-01\n"
    "  --dkb:param n int 10..50 step 5\n"
    "-- dkb:param disc decimal 0.02..0.09 step 0.01 default 0.06\n"
    "-- dkb:param f choice 'A', 'N''s', R default R\n"
    "SELECT count(*) AS c FROM lineitem WHERE l_shipdate >= DATE ':d' AND l_quantity < :n\n"
    "  AND l_discount = :disc AND l_returnflag = ':f' AND 1::INT = 1";

static void test_params(void) {
    dkb__sql_params ps;
    dkb_error err = {0};
    CHECK(dkb__sql_params_parse("t.sql", PSQL, &ps, &err) == 0, "%s", err.msg);
    CHECK(ps.n == 4);
    CHECK(ps.d[0].kind == DKB_PARAM_DATE && ps.d[0].count == 58, "months 1993-01..1997-10: %lld", (long long)ps.d[0].count);
    CHECK(ps.d[1].kind == DKB_PARAM_INT && ps.d[1].count == 9 && ps.d[1].lo == 10 && ps.d[1].step == 5);
    CHECK(ps.d[2].kind == DKB_PARAM_DECIMAL && ps.d[2].scale == 2 && ps.d[2].lo == 2 && ps.d[2].count == 8);
    CHECK(ps.d[3].kind == DKB_PARAM_STRING && ps.d[3].nchoice == 3 && !strcmp(ps.d[3].choice[1], "N's"));
    dkb_params p, q;
    dkb__sql_params_draw(&ps, 0, &p);
    CHECK(p.n == 4 && p.v[0].i == dkb__days_from_civil(1994, 1, 1) && p.v[1].i == 10 && p.v[2].i == 6 &&
          !strcmp(p.v[3].s, "R"), "seed 0: the defaults");
    bool varied = false;
    for (uint64_t seed = 1; seed < 200; seed++) {
        dkb__sql_params_draw(&ps, seed, &p);
        dkb__sql_params_draw(&ps, seed, &q);
        CHECK(!memcmp(&p, &q, sizeof p), "seed %llu drew twice differently", (unsigned long long)seed);
        int y, m, d;
        dkb__civil_from_days((int32_t)p.v[0].i, &y, &m, &d);
        CHECK(d == 1 && y * 12 + m >= 1993 * 12 + 1 && y * 12 + m <= 1997 * 12 + 10, "date %d-%d-%d off the grid", y, m, d);
        CHECK(p.v[1].i >= 10 && p.v[1].i <= 50 && p.v[1].i % 5 == 0);
        CHECK(p.v[2].i >= 2 && p.v[2].i <= 9 && p.v[2].scale == 2);
        CHECK(dkb__sql_params_check(&ps, "t", &p, &err) == 0, "%s", err.msg);
        varied |= p.v[0].i != dkb__days_from_civil(1994, 1, 1);
    }
    CHECK(varied, "no seed moved the date");
    p.v[1].i = 12;
    CHECK_ERR(dkb__sql_params_check(&ps, "t", &p, &err), DKB_EINVAL, err, "parameter n: 12 is not declared");
    static const struct {
        const char *decl, *msg;
    } BAD[] = {
        {"-- dkb:param x int 5..1", "t.sql:2: dkb:param: range 5..1: LO is above HI"},
        {"-- dkb:param x integer 1..5", "type 'integer'"},
        {"-- dkb:param X int 1..5", "name 'X'"},
        {"-- dkb:param x int 1..5 step 0", "must be positive"},
        {"-- dkb:param x int 1..5 step 2 default 4", "default 4 is not on the declared range"},
        {"-- dkb:parm x int 1..5", "the only dkb: directive"},
        {"-- dkb:param y int 1..5", "parameter y is declared but the SQL never uses it"},
        {"-- dkb:param param int 1..5", "parameter param is declared but the SQL never uses it"},
        {"-- dkb:param x date 1994-01-31..1995-01-01 step month", "day 1..28"},
        {"-- dkb:param x date 1994-02-30..1995-01-01", "not a date"},
        {"-- dkb:param x choice a, a", "listed twice"},
        {"-- dkb:param x choice 'a", "not closed"},
        {"-- dkb:param x decimal 0.1..0.5 default 0.123", "default 0.123 has more digits"},
        {"-- dkb:param x decimal 1000000000000000..1000000000000001 step 0.000000001", "out of range at its scale"},
        {"-- dkb:param x int 1..5 foo", "unexpected 'foo'"},
        {"-- dkb:param x int", "expected LO..HI"},
        {"-- dkb:param x int 1..5\n-- dkb:param x int 1..5", "t.sql:3: dkb:param: parameter x is declared twice"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char sql[512];
        snprintf(sql, sizeof sql, "-- head\n%s\nSELECT :x", BAD[i].decl);
        err = (dkb_error){0};
        CHECK_ERR(dkb__sql_params_parse("t.sql", sql, &ps, &err), DKB_EINVAL, err, BAD[i].msg);
    }
}

/* A task with parameters from its parts: the plan of each parameter set. */
static void test_bundle(void) {
    static const char SQL[] = "-- dkb:param k int 1..3\nSELECT l_quantity FROM lineitem WHERE l_orderkey = :k";
    static const char GET[] =
        "{\"error\": false, \"plans\": [{\"type\": \"LOGICAL_GET\", \"name\": \"seq_scan\", "
        "\"function_data\": {\"table\": \"lineitem\"}, \"names\": [\"l_orderkey\", \"l_quantity\"], "
        "\"column_indexes\": [{\"index\": 1}], \"children\": []}]}";
    char bundle[4096];
    snprintf(bundle, sizeof bundle,
             "{\"dkb_sql_plans\": [{\"sql\": \"-- dkb:param k int 1..3\\nSELECT l_quantity FROM lineitem WHERE "
             "l_orderkey = 1\", \"plan\": %s, \"columns\": [\"l_quantity\"]}]}",
             GET);
    dkb__sql_task *t = NULL;
    dkb_error err = {0};
    CHECK(dkb__sql_task_from_parts("by_key", SQL, bundle, "[\"l_quantity\"]", &t, &err) == 0, "%s", err.msg);
    if (t) {
        const dkb_query *q = dkb__sql_task_query(t);
        CHECK(q->nparams == 1 && !strcmp(q->params[0].name, "k") && dkb__sql_task_nparams(t) == 1);
        dkb_params p;
        CHECK(dkb_query_params(q, 0, 1.0, NULL, 0, &p, &err) == 0 && p.n == 1 && p.v[0].i == 1, "%s", err.msg);
        const char *over[] = {"k=4"};
        CHECK_ERR(dkb_query_params(q, 0, 1.0, over, 1, &p, &err), DKB_EINVAL, err, "parameter k: 4 is not declared");
    }
    dkb__sql_task_free(t);
    t = NULL;
    CHECK_ERR(dkb__sql_task_from_parts("by_key", SQL, GET, "[\"l_quantity\"]", &t, &err), DKB_EPARSE, err,
              "do not parse");
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
    test_params();
    test_bundle();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
