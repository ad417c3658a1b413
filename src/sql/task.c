/* task.c: a SQL file as a benchmark task (contract in task.h): planned
 * once with DuckDB where libduckdb is, rebuilt from its texts in a worker,
 * and run as a dkb_query whose finish step is the translated program. */
#include "sql/task.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/fsutil.h"   // defines: dkb__read_file
#include "sql/plan.h"        // defines: dkb__sql_planner_open, dkb__sql_plan, dkb__sql_column_names
#include "sql/task_params.h" // defines: dkb__sql_params_parse, dkb__sql_params_draw, dkb__sql_params_check
#include "sql/translate.h"   // defines: dkb__sql_translate_named

/* One planned parameter set of a task with declared parameters: the
 * substituted SQL, its plan (inside the task's parsed bundle) and DuckDB's
 * column names (a parameter in the select list changes them). */
typedef struct task_plan {
    char *sql;
    const cJSON *doc;            /* {"plans": [...]} */
    int ncols;
    char **cols;
} task_plan;

struct dkb__sql_task {
    char name[DKB_SQL_TASK_NAME_MAX];
    char title[DKB_SQL_TASK_NAME_MAX + 16];
    char *sql, *plan;            /* the file's text; the plan JSON, or the bundle of a task with parameters */
    cJSON *doc;                  /* plan, parsed once */
    dkb__sql_params ps;          /* the declared parameters (none: one plan) */
    int nplans;
    task_plan plans[DKB_SQL_TASK_MAX_PLANS];
    int ncols;
    char **cols;                 /* DuckDB's result column names */
    int nread;                   /* the store columns the scans read */
    char *read_table[DKB_SET_MAX], *read_col[DKB_SET_MAX];
    const dkb_store *db;         /* as prepare last saw it */
    dkb_query q;
};

/* The process's task: the steps below have no other way to reach it. */
static dkb__sql_task *g_task;

int dkb__sql_task_name(const char *path, char *name, size_t n, dkb_error *err) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len < 5 || strcmp(base + len - 4, ".sql"))
        return dkb_fail(err, DKB_EINVAL, "%s: a SQL task file is named NAME.sql", path);
    len -= 4;
    if (len >= DKB_SQL_TASK_NAME_MAX || len >= n)
        return dkb_fail(err, DKB_EINVAL, "%s: the task name is longer than %d characters", path, DKB_SQL_TASK_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        char c = base[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return dkb_fail(err, DKB_EINVAL, "%s: the task name (the file's stem) must be [a-z0-9_]+", path);
    }
    memcpy(name, base, len);
    name[len] = '\0';
    if (dkb_query_number(name))
        return dkb_fail(err, DKB_EINVAL, "%s: '%s' names a TPC-H query; give the SQL task another name", path, name);
    return 0;
}

/* ---- the steps ---- */

static int task_prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    (void)p;
    dkb__sql_task *t = g_task;
    if (!t) return DKB_EINTERNAL;
    t->db = db;
    for (int i = 0; i < t->nread; i++) dkb_set_put_column(tp, in, db, t->read_table[i], t->read_col[i]);
    return 0;
}

static int task_core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    (void)tp, (void)in, (void)out;
    return g_task ? 0 : DKB_EINTERNAL;
}

/* The plan of parameter set p (the task's one plan when it declares none);
 * NULL with a message in tp when p was not planned. */
static const task_plan *plan_of(dkb__sql_task *t, dkb_tp *tp, const dkb_params *p, task_plan *one) {
    if (!t->ps.n) {
        *one = (task_plan){t->sql, t->doc, t->ncols, t->cols};
        return one;
    }
    char *sql = dkb_query_sql(&t->q, p);
    const task_plan *found = NULL;
    for (int i = 0; sql && i < t->nplans && !found; i++)
        if (!strcmp(t->plans[i].sql, sql)) found = &t->plans[i];
    free(sql);
    if (!found) dkb_tp_fail(tp, DKB_EINVAL, "%s: these parameter values were not planned (the plans are made for the seeds of the evaluation)", t->name);
    return found;
}

static int task_finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)out;
    dkb__sql_task *t = g_task;
    if (!t || !t->db) return DKB_EINTERNAL;
    task_plan one;
    const task_plan *tp_plan = plan_of(t, tp, p, &one);
    if (!tp_plan) return DKB_EINVAL;
    dkb_error e = {0};
    int rc = dkb__sql_translate_named(t->db, tp, tp_plan->sql, tp_plan->doc, tp_plan->cols, tp_plan->ncols, NULL, res, &e);
    /* the error's text into tp, where dkb_query_run reads a step's message */
    if (rc) dkb_tp_fail(tp, rc, "%s", e.msg);
    return rc;
}

static void task_draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (g_task) dkb__sql_params_draw(&g_task->ps, seed, out);
    else memset(out, 0, sizeof *out);
}

static int task_check(const dkb_params *p, dkb_error *err) {
    return g_task ? dkb__sql_params_check(&g_task->ps, g_task->name, p, err) : DKB_EINTERNAL;
}

/* ---- building ---- */

/* Column names from a JSON array of strings into *cols (n + 1 entries). */
static int names_from_json(const char *task, const cJSON *a, char ***cols, int *ncols, dkb_error *err) {
    int n = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || n < 1) return dkb_fail(err, DKB_EPARSE, "SQL task %s: bad column names", task);
    if (!(*cols = calloc((size_t)n + 1, sizeof **cols))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    *ncols = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, a) {
        if (!cJSON_IsString(c)) return dkb_fail(err, DKB_EPARSE, "SQL task %s: a column name is not a string", task);
        if (!((*cols)[(*ncols)++] = strdup(c->valuestring))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    return 0;
}

static cJSON *names_to_json(char *const *cols, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) {
        cJSON *s = cJSON_CreateString(cols[i]);
        if (!s || !cJSON_AddItemToArray(a, s)) {
            cJSON_Delete(s);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

/* Record table.column as read (once; at most DKB_SET_MAX). */
static int add_read(dkb__sql_task *t, const char *table, const char *col) {
    for (int i = 0; i < t->nread; i++)
        if (!strcmp(t->read_table[i], table) && !strcmp(t->read_col[i], col)) return 0;
    if (t->nread == DKB_SET_MAX) return 0;   /* the floor then counts fewer: still a lower bound */
    t->read_table[t->nread] = strdup(table);
    t->read_col[t->nread] = strdup(col);
    if (!t->read_table[t->nread] || !t->read_col[t->nread]) return DKB_ENOMEM;
    t->nread++;
    return 0;
}

/* Every LOGICAL_GET under op: its table's columns that the scan reads
 * (projected or filtered). */
static int collect_reads(dkb__sql_task *t, const cJSON *op) {
    if (!cJSON_IsObject(op)) return 0;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(op, "type");
    if (cJSON_IsString(type) && !strcmp(type->valuestring, "LOGICAL_GET")) {
        const cJSON *fd = cJSON_GetObjectItemCaseSensitive(op, "function_data");
        const cJSON *table = cJSON_GetObjectItemCaseSensitive(fd, "table");
        const cJSON *names = cJSON_GetObjectItemCaseSensitive(op, "names");
        const cJSON *cidx = cJSON_GetObjectItemCaseSensitive(op, "column_indexes");
        const cJSON *ci;
        if (cJSON_IsString(table))
            cJSON_ArrayForEach(ci, cidx) {
                const cJSON *ix = cJSON_GetObjectItemCaseSensitive(ci, "index");
                if (!cJSON_IsNumber(ix) || ix->valuedouble < 0 || ix->valuedouble >= 1e9) continue;   /* the row id */
                const cJSON *nm = cJSON_GetArrayItem(names, (int)ix->valuedouble);
                if (cJSON_IsString(nm) && add_read(t, table->valuestring, nm->valuestring)) return DKB_ENOMEM;
            }
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, op) {
        if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            if (cJSON_IsArray(c)) {
                const cJSON *e;
                cJSON_ArrayForEach(e, c) if (collect_reads(t, e)) return DKB_ENOMEM;
            } else if (collect_reads(t, c)) {
                return DKB_ENOMEM;
            }
        }
    }
    return 0;
}

/* t with name, sql, plan and cols set: parse the plan, fill the query. */
/* The query object of t (its parameters from t->ps). */
static void set_query(dkb__sql_task *t) {
    snprintf(t->title, sizeof t->title, "SQL file %s.sql", t->name);
    t->q = (dkb_query){.number = 0,
                       .name = t->name,
                       .title = t->title,
                       .sql = t->sql,
                       .nparams = t->ps.n,
                       .params = t->ps.n ? t->ps.defs : NULL,
                       .draw = t->ps.n ? task_draw : NULL,
                       .check = t->ps.n ? task_check : NULL,
                       .prepare = task_prepare,
                       .core = task_core,
                       .finish = task_finish};
}

/* t with name, sql, plan and cols set (and ps parsed): parse the plan (a
 * task with parameters: the bundle {"dkb_sql_plans": [{"sql", "plan",
 * "columns"}, ...]}), fill the query. */
static int finish_task(dkb__sql_task *t, dkb_error *err) {
    t->doc = cJSON_Parse(t->plan);
    set_query(t);
    if (t->ps.n) {
        const cJSON *all = cJSON_GetObjectItemCaseSensitive(t->doc, "dkb_sql_plans"), *e;
        if (!cJSON_IsArray(all) || cJSON_GetArraySize(all) < 1 || cJSON_GetArraySize(all) > DKB_SQL_TASK_MAX_PLANS)
            return dkb_fail(err, DKB_EPARSE, "%s: the plans of a SQL task with parameters do not parse", t->name);
        cJSON_ArrayForEach(e, all) {
            task_plan *p = &t->plans[t->nplans++];
            const cJSON *sql = cJSON_GetObjectItemCaseSensitive(e, "sql");
            p->doc = cJSON_GetObjectItemCaseSensitive(e, "plan");
            if (!cJSON_IsString(sql) || !cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p->doc, "plans"), 0))
                return dkb_fail(err, DKB_EPARSE, "%s: a plan of the SQL task's bundle has no plan", t->name);
            if (!(p->sql = strdup(sql->valuestring))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
            int rc = names_from_json(t->name, cJSON_GetObjectItemCaseSensitive(e, "columns"), &p->cols, &p->ncols, err);
            if (rc) return rc;
        }
    } else if (!cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t->doc, "plans"), 0)) {
        return dkb_fail(err, DKB_EPARSE, "%s: the plan JSON has no plan", t->name);
    }
    if (collect_reads(t, t->doc)) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    return 0;
}

/* Prefix err's message with path (DuckDB's errors do not name the file). */
static void name_file(const char *path, dkb_error *err) {
    if (!err || strstr(err->msg, path)) return;
    char msg[sizeof err->msg + 256];
    snprintf(msg, sizeof msg, "%.200s: %s", path, err->msg);
    size_t n = strlen(msg) < sizeof err->msg ? strlen(msg) : sizeof err->msg - 1;
    memcpy(err->msg, msg, n);
    err->msg[n] = '\0';
}

/* Plan every distinct parameter set of seed 0 and seeds[0..nseeds) into
 * the bundle t->plan (t->cols: seed 0's names). */
static int plan_bundle(dkb__sql_task *t, const char *path, dkb__sql_planner *p, const uint64_t *seeds, int nseeds,
                       dkb_error *err) {
    cJSON *all = cJSON_CreateArray(), *bundle = cJSON_CreateObject();
    int rc = all && bundle && cJSON_AddItemToObject(bundle, "dkb_sql_plans", all) ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
    if (rc) cJSON_Delete(all);
    int distinct = 0;
    for (int k = -1; !rc && k < nseeds; k++) {
        dkb_params params;
        dkb__sql_params_draw(&t->ps, k < 0 ? 0 : seeds[k], &params);
        char *sql = dkb_query_sql(&t->q, &params);
        if (!sql) {
            rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
            break;
        }
        bool seen = false;
        const cJSON *e;
        cJSON_ArrayForEach(e, all) seen |= !strcmp(cJSON_GetObjectItemCaseSensitive(e, "sql")->valuestring, sql);
        if (seen) {
            free(sql);
            continue;
        }
        if (++distinct > DKB_SQL_TASK_MAX_PLANS) {
            free(sql);
            rc = dkb_fail(err, DKB_EINVAL, "%s: more than %d distinct parameter sets to plan: give fewer --seeds", path,
                          DKB_SQL_TASK_MAX_PLANS);
            break;
        }
        char *json = NULL, **cols = NULL;
        int ncols = 0;
        dkb__sql_diag diag;
        rc = dkb__sql_plan(p, sql, &json, &diag, err);
        if (!rc) rc = dkb__sql_column_names(p, sql, &cols, &ncols, err);
        if (rc) name_file(path, err);
        cJSON *entry = rc ? NULL : cJSON_CreateObject(), *plan = entry ? cJSON_Parse(json) : NULL;
        cJSON *names = plan ? names_to_json(cols, ncols) : NULL;
        if (!rc && (!names || !cJSON_AddStringToObject(entry, "sql", sql) || !cJSON_AddItemToObject(entry, "plan", plan) ||
                    !cJSON_AddItemToObject(entry, "columns", names) || !cJSON_AddItemToArray(all, entry)))
            rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        if (!rc && k < 0) {
            t->cols = cols, t->ncols = ncols;
            cols = NULL, ncols = 0;
        }
        for (int i = 0; i < ncols; i++) free(cols[i]);
        free(cols);
        free(json);
        free(sql);
    }
    if (!rc && !(t->plan = cJSON_PrintUnformatted(bundle))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    cJSON_Delete(bundle);
    return rc;
}

int dkb__sql_task_plan(const char *path, const dkb_store *db, dkb__sql_task **out, dkb_error *err) {
    return dkb__sql_task_plan_seeds(path, db, NULL, 0, out, err);
}

int dkb__sql_task_plan_seeds(const char *path, const dkb_store *db, const uint64_t *seeds, int nseeds,
                             dkb__sql_task **out, dkb_error *err) {
    *out = NULL;
    dkb__sql_task *t = calloc(1, sizeof *t);
    if (!t) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    size_t len;
    int rc = dkb__sql_task_name(path, t->name, sizeof t->name, err);
    if (!rc) rc = dkb__read_file(path, 1u << 20, &t->sql, &len, err);
    if (!rc) rc = dkb__sql_params_parse(path, t->sql, &t->ps, err);
    dkb__sql_planner *p = NULL;
    if (!rc) rc = dkb__sql_planner_open(db, NULL, &p, err);
    if (!rc && t->ps.n) {
        set_query(t);
        rc = plan_bundle(t, path, p, seeds, nseeds, err);
    } else if (!rc) {
        dkb__sql_diag diag;
        rc = dkb__sql_plan(p, t->sql, &t->plan, &diag, err);
        if (rc) name_file(path, err);
        if (!rc) rc = dkb__sql_column_names(p, t->sql, &t->cols, &t->ncols, err);
    }
    dkb__sql_planner_close(p);
    if (!rc) rc = finish_task(t, err);
    if (rc) {
        dkb__sql_task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int dkb__sql_task_from_parts(const char *name, const char *sql, const char *plan, const char *columns_json,
                             dkb__sql_task **out, dkb_error *err) {
    *out = NULL;
    if (!name || !sql || !plan || !columns_json) return dkb_fail(err, DKB_EINVAL, "SQL task: missing part");
    if (strlen(name) >= DKB_SQL_TASK_NAME_MAX || !name[0])
        return dkb_fail(err, DKB_EINVAL, "SQL task: bad name '%s'", name);
    dkb__sql_task *t = calloc(1, sizeof *t);
    if (!t) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    snprintf(t->name, sizeof t->name, "%s", name);
    t->sql = strdup(sql);
    t->plan = strdup(plan);
    int rc = t->sql && t->plan ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
    cJSON *cols = rc ? NULL : cJSON_Parse(columns_json);
    if (!rc) rc = names_from_json(name, cols, &t->cols, &t->ncols, err);
    cJSON_Delete(cols);
    char path[DKB_SQL_TASK_NAME_MAX + 8];
    snprintf(path, sizeof path, "%s.sql", t->name);
    if (!rc) rc = dkb__sql_params_parse(path, t->sql, &t->ps, err);
    if (!rc) rc = finish_task(t, err);
    if (rc) {
        dkb__sql_task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

const char *dkb__sql_task_sql(const dkb__sql_task *t) { return t->sql; }
const char *dkb__sql_task_plan_json(const dkb__sql_task *t) { return t->plan; }

int dkb__sql_task_nparams(const dkb__sql_task *t) { return t->ps.n; }

char *dkb__sql_task_columns_json(const dkb__sql_task *t) {
    cJSON *a = names_to_json(t->cols, t->ncols);
    char *text = a ? cJSON_PrintUnformatted(a) : NULL;
    cJSON_Delete(a);
    return text;
}

const dkb_query *dkb__sql_task_query(dkb__sql_task *t) {
    g_task = t;
    return &t->q;
}

int dkb__sql_task_program(dkb__sql_task *t, const dkb_store *db, char **out, dkb_error *err) {
    *out = NULL;
    dkb_tp *tp = NULL;
    int rc = dkb_tp_create(DKB_TP_CPU, 0, &tp, err);
    if (rc) return rc;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        dkb_tp_destroy(tp);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    dkb_result res = {0};
    task_plan one = {t->sql, t->doc, t->ncols, t->cols};
    const task_plan *p0 = t->ps.n ? &t->plans[0] : &one;   /* seed 0's */
    rc = dkb__sql_translate_named(db, tp, p0->sql, p0->doc, p0->cols, p0->ncols, f, &res, err);
    if (!rc) fprintf(f, "-- %lld row%s\n", (long long)res.nrows, res.nrows == 1 ? "" : "s");
    fclose(f);
    dkb_result_free(&res);
    dkb_tp_destroy(tp);
    if (rc) {
        free(text);
        return rc;
    }
    *out = text;
    return 0;
}

void dkb__sql_task_free(dkb__sql_task *t) {
    if (!t) return;
    if (g_task == t) g_task = NULL;
    free(t->sql);
    free(t->plan);
    cJSON_Delete(t->doc);
    for (int i = 0; i < t->ncols; i++) free(t->cols[i]);
    free(t->cols);
    for (int i = 0; i < t->nread; i++) free(t->read_table[i]), free(t->read_col[i]);
    for (int i = 0; i < t->nplans; i++) {
        free(t->plans[i].sql);
        for (int k = 0; k < t->plans[i].ncols; k++) free(t->plans[i].cols[k]);
        free(t->plans[i].cols);
    }
    free(t);
}
