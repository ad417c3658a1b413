/* task.c: a SQL file as a benchmark task (contract in task.h): planned
 * once with DuckDB where libduckdb is, rebuilt from its texts in a worker,
 * and run as a dkb_query whose finish step is the translated program. */
#include "sql/task.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/fsutil.h"   // defines: dkb__read_file
#include "sql/plan.h"        // defines: dkb__sql_planner_open, dkb__sql_plan, dkb__sql_column_names
#include "sql/translate.h"   // defines: dkb__sql_translate_named

struct dkb__sql_task {
    char name[DKB_SQL_TASK_NAME_MAX];
    char title[DKB_SQL_TASK_NAME_MAX + 16];
    char *sql, *plan;
    cJSON *doc;                  /* plan, parsed once */
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

static int task_finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)out, (void)p;
    dkb__sql_task *t = g_task;
    if (!t || !t->db) return DKB_EINTERNAL;
    dkb_error e = {0};
    int rc = dkb__sql_translate_named(t->db, tp, t->sql, t->doc, t->cols, t->ncols, NULL, res, &e);
    /* the error's text into tp, where dkb_query_run reads a step's message */
    if (rc) dkb_tp_fail(tp, rc, "%s", e.msg);
    return rc;
}

/* ---- building ---- */

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
static int finish_task(dkb__sql_task *t, dkb_error *err) {
    t->doc = cJSON_Parse(t->plan);
    if (!cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t->doc, "plans"), 0))
        return dkb_fail(err, DKB_EPARSE, "%s: the plan JSON has no plan", t->name);
    if (collect_reads(t, t->doc)) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    snprintf(t->title, sizeof t->title, "SQL file %s.sql", t->name);
    t->q = (dkb_query){.number = 0,
                       .name = t->name,
                       .title = t->title,
                       .sql = t->sql,
                       .prepare = task_prepare,
                       .core = task_core,
                       .finish = task_finish};
    return 0;
}

int dkb__sql_task_plan(const char *path, const dkb_store *db, dkb__sql_task **out, dkb_error *err) {
    *out = NULL;
    dkb__sql_task *t = calloc(1, sizeof *t);
    if (!t) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    size_t len;
    int rc = dkb__sql_task_name(path, t->name, sizeof t->name, err);
    if (!rc) rc = dkb__read_file(path, 1u << 20, &t->sql, &len, err);
    dkb__sql_planner *p = NULL;
    if (!rc) rc = dkb__sql_planner_open(db, NULL, &p, err);
    if (!rc) {
        dkb__sql_diag diag;
        rc = dkb__sql_plan(p, t->sql, &t->plan, &diag, err);
        if (rc && err && !strstr(err->msg, path)) {
            char msg[sizeof err->msg + 256];
            snprintf(msg, sizeof msg, "%.200s: %s", path, err->msg);
            size_t n = strlen(msg) < sizeof err->msg ? strlen(msg) : sizeof err->msg - 1;
            memcpy(err->msg, msg, n);
            err->msg[n] = '\0';
        }
    }
    if (!rc) rc = dkb__sql_column_names(p, t->sql, &t->cols, &t->ncols, err);
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
    int n = cJSON_GetArraySize(cols);
    if (!rc && (!cJSON_IsArray(cols) || n < 1)) rc = dkb_fail(err, DKB_EPARSE, "SQL task %s: bad column names", name);
    if (!rc && !(t->cols = calloc((size_t)n + 1, sizeof *t->cols))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    const cJSON *c;
    if (!rc)
        cJSON_ArrayForEach(c, cols) {
            if (!cJSON_IsString(c)) {
                rc = dkb_fail(err, DKB_EPARSE, "SQL task %s: a column name is not a string", name);
                break;
            }
            if (!(t->cols[t->ncols++] = strdup(c->valuestring))) {
                rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
                break;
            }
        }
    cJSON_Delete(cols);
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

char *dkb__sql_task_columns_json(const dkb__sql_task *t) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < t->ncols; i++) {
        cJSON *s = cJSON_CreateString(t->cols[i]);
        if (!s || !cJSON_AddItemToArray(a, s)) {
            cJSON_Delete(s);
            cJSON_Delete(a);
            return NULL;
        }
    }
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
    rc = dkb__sql_translate_named(db, tp, t->sql, t->doc, t->cols, t->ncols, f, &res, err);
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
    free(t);
}
