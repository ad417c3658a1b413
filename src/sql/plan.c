/* plan.c: an in-memory DuckDB holding a store's tables, and DuckDB's
 * optimized logical plan of SQL over them as JSON (contract in plan.h). */
#include "sql/plan.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/duckdb_load.h"

struct dkb__sql_planner {
    const dkb__duckdb_api *d;
    dkb__ddb_database db;
    dkb__ddb_connection con;
    dkb__ddb_prepared plan_stmt; /* SELECT json_serialize_plan($1::VARCHAR, optimize := true) */
};

#define PLAN_SQL "SELECT json_serialize_plan($1::VARCHAR, optimize := true)"

/* INT columns that are BIGINT in the oracle's schema (tools/oracle/lib.mjs):
 * the order keys, which pass 2^31 above SF ~89. */
static int is_bigint(const char *col) { return !strcmp(col, "o_orderkey") || !strcmp(col, "l_orderkey"); }

/* Run a statement that returns nothing we read. */
static int exec(dkb__sql_planner *p, const char *sql, dkb_error *err) {
    dkb__ddb_result r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    if (p->d->query(p->con, sql, &r) != DKB__DDB_SUCCESS) {
        const char *e = p->d->result_error(&r);
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: %.80s: %s", sql, e ? e : "failed");
    }
    p->d->destroy_result(&r);
    return rc;
}

/* CREATE TABLE name (col type NOT NULL, ...) for store table t, into buf. */
static int create_sql(const dkb_store_table *t, char *buf, size_t cap, dkb_error *err) {
    size_t n = (size_t)snprintf(buf, cap, "CREATE TABLE %s (", dkb_store_table_name(t));
    for (int i = 0; i < dkb_store_table_ncolumns(t) && n < cap; i++) {
        const dkb_store_column *c = dkb_store_table_column_at(t, i);
        const char *type = "VARCHAR";
        switch (dkb_column_type(c)) {
        case DKB_TYPE_INT: type = is_bigint(dkb_column_name(c)) ? "BIGINT" : "INTEGER"; break;
        case DKB_TYPE_DECIMAL: type = "DECIMAL(15,2)"; break;
        case DKB_TYPE_DATE: type = "DATE"; break;
        case DKB_TYPE_DICT:
        case DKB_TYPE_TEXT: type = "VARCHAR"; break;
        }
        n += (size_t)snprintf(buf + n, cap - n, "%s%s %s NOT NULL", i ? ", " : "", dkb_column_name(c), type);
    }
    if (n + 2 >= cap) return dkb_fail(err, DKB_EINTERNAL, "%s: CREATE TABLE text too long", dkb_store_table_name(t));
    memcpy(buf + n, ")", 2);
    return 0;
}

/* Rows [r0, r0 + n) of column c into vector v of the DuckDB type the
 * table has (create_sql's choice). */
static int fill_vector(const dkb__duckdb_api *d, dkb__ddb_vector v, const dkb_store_column *c, int64_t r0, int64_t n,
                       dkb_error *err) {
    switch (dkb_column_type(c)) {
    case DKB_TYPE_INT: {
        const int32_t *a32 = dkb_column_i32(c);
        const int64_t *a64 = dkb_column_i64(c);
        if (is_bigint(dkb_column_name(c))) {
            int64_t *out = d->vector_get_data(v);
            for (int64_t i = 0; i < n; i++) out[i] = a64 ? a64[r0 + i] : a32[r0 + i];
        } else {
            int32_t *out = d->vector_get_data(v);
            if (a32) {
                memcpy(out, a32 + r0, (size_t)n * sizeof *out);
            } else {
                for (int64_t i = 0; i < n; i++) {
                    int64_t x = a64[r0 + i];
                    if (x < INT32_MIN || x > INT32_MAX)
                        return dkb_fail(err, DKB_ERANGE, "%s row %lld: %lld does not fit DuckDB's INTEGER",
                                        dkb_column_name(c), (long long)(r0 + i), (long long)x);
                    out[i] = (int32_t)x;
                }
            }
        }
        return 0;
    }
    case DKB_TYPE_DECIMAL: /* int64 hundredths: DECIMAL(15,2)'s physical value */
        memcpy(d->vector_get_data(v), dkb_column_i64(c) + r0, (size_t)n * sizeof(int64_t));
        return 0;
    case DKB_TYPE_DATE: /* int32 days since 1970-01-01 in both */
        memcpy(d->vector_get_data(v), dkb_column_i32(c) + r0, (size_t)n * sizeof(int32_t));
        return 0;
    case DKB_TYPE_DICT:
    case DKB_TYPE_TEXT:
        for (int64_t i = 0; i < n; i++) {
            size_t len;
            const char *s = dkb_column_str(c, r0 + i, &len);
            if (!s)
                return dkb_fail(err, DKB_ECORRUPT, "%s row %lld: string outside its file", dkb_column_name(c),
                                (long long)(r0 + i));
            d->vector_assign_string_element_len(v, (dkb__ddb_idx)i, s, (dkb__ddb_idx)len);
        }
        return 0;
    }
    return dkb_fail(err, DKB_EINTERNAL, "%s: unknown column type", dkb_column_name(c));
}

/* Create table t and append all its rows. */
static int load_table(dkb__sql_planner *p, const dkb_store_table *t, dkb_error *err) {
    const dkb__duckdb_api *d = p->d;
    const char *name = dkb_store_table_name(t);
    char sql[2048];
    int rc = create_sql(t, sql, sizeof sql, err);
    if (rc || (rc = exec(p, sql, err))) return rc;

    int ncols = dkb_store_table_ncolumns(t);
    dkb__ddb_logical_type types[DKB_MAX_COLUMNS];
    for (int i = 0; i < ncols; i++) {
        const dkb_store_column *c = dkb_store_table_column_at(t, i);
        switch (dkb_column_type(c)) {
        case DKB_TYPE_INT:
            types[i] = d->create_logical_type(is_bigint(dkb_column_name(c)) ? DKB__DDB_TYPE_BIGINT
                                                                            : DKB__DDB_TYPE_INTEGER);
            break;
        case DKB_TYPE_DECIMAL: types[i] = d->create_decimal_type(15, 2); break;
        case DKB_TYPE_DATE: types[i] = d->create_logical_type(DKB__DDB_TYPE_DATE); break;
        default: types[i] = d->create_logical_type(DKB__DDB_TYPE_VARCHAR); break;
        }
    }
    dkb__ddb_data_chunk chunk = d->create_data_chunk(types, (dkb__ddb_idx)ncols);
    for (int i = 0; i < ncols; i++) d->destroy_logical_type(&types[i]);
    dkb__ddb_appender app = NULL;
    if (!chunk) return dkb_fail(err, DKB_ENOMEM, "duckdb: no data chunk for %s", name);
    if (d->appender_create(p->con, NULL, name, &app) != DKB__DDB_SUCCESS) {
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: appender for %s: %s", name,
                      app && d->appender_error(app) ? d->appender_error(app) : "failed");
        goto done;
    }
    int64_t rows = dkb_store_table_rows(t), step = (int64_t)d->vector_size();
    for (int64_t r0 = 0; r0 < rows && !rc; r0 += step) {
        int64_t n = rows - r0 < step ? rows - r0 : step;
        d->data_chunk_reset(chunk);
        for (int i = 0; i < ncols && !rc; i++)
            rc = fill_vector(d, d->data_chunk_get_vector(chunk, (dkb__ddb_idx)i), dkb_store_table_column_at(t, i), r0,
                             n, err);
        if (rc) break;
        d->data_chunk_set_size(chunk, (dkb__ddb_idx)n);
        if (d->append_data_chunk(app, chunk) != DKB__DDB_SUCCESS)
            rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: appending to %s: %s", name,
                          d->appender_error(app) ? d->appender_error(app) : "failed");
    }
    if (!rc && d->appender_close(app) != DKB__DDB_SUCCESS)
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: appending to %s: %s", name,
                      d->appender_error(app) ? d->appender_error(app) : "failed");
done:
    if (app) d->appender_destroy(&app);
    d->destroy_data_chunk(&chunk);
    return rc;
}

int dkb__sql_planner_open(const dkb_store *s, const dkb__sql_options *opt, dkb__sql_planner **out,
                          dkb_error *err) {
    if (!out) return dkb_fail(err, DKB_EINVAL, "dkb__sql_planner_open: NULL out");
    *out = NULL;
    if (!s) return dkb_fail(err, DKB_EINVAL, "dkb__sql_planner_open: NULL store");
    const char *disabled = opt && opt->disabled_optimizers ? opt->disabled_optimizers : "column_lifetime,compressed_materialization";
    if (strchr(disabled, '\''))
        return dkb_fail(err, DKB_EINVAL, "disabled optimizers '%s': a quote in the list", disabled);
    dkb__sql_planner *p = calloc(1, sizeof *p);
    if (!p) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int rc = dkb__duckdb_load(&p->d, err);
    if (rc) goto fail;
    if (p->d->open(NULL, &p->db) != DKB__DDB_SUCCESS) {
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: cannot open an in-memory database (%s)", p->d->path);
        goto fail;
    }
    if (p->d->connect(p->db, &p->con) != DKB__DDB_SUCCESS) {
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: cannot connect to the in-memory database");
        goto fail;
    }
    char set[512];
    snprintf(set, sizeof set, "SET disabled_optimizers = '%s'", disabled);
    if ((rc = exec(p, set, err))) goto fail;
    if (opt && opt->threads > 0) {
        snprintf(set, sizeof set, "SET threads = %d", opt->threads);
        if ((rc = exec(p, set, err))) goto fail;
    }
    for (int i = 0; i < dkb_store_ntables(s); i++)
        if ((rc = load_table(p, dkb_store_table_at(s, i), err))) goto fail;
    if (p->d->prepare(p->con, PLAN_SQL, &p->plan_stmt) != DKB__DDB_SUCCESS) {
        const char *e = p->d->prepare_error(p->plan_stmt);
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: %s: %s (json_serialize_plan needs DuckDB v1.1 or later)",
                      PLAN_SQL, e ? e : "failed");
        goto fail;
    }
    *out = p;
    return 0;
fail:
    dkb__sql_planner_close(p);
    return rc;
}

void dkb__sql_planner_close(dkb__sql_planner *p) {
    if (!p) return;
    if (p->d) {
        if (p->plan_stmt) p->d->destroy_prepare(&p->plan_stmt);
        if (p->con) p->d->disconnect(&p->con);
        if (p->db) p->d->close(&p->db);
    }
    free(p);
}

const char *dkb__sql_duckdb_version(const dkb__sql_planner *p) { return p ? p->d->library_version() : ""; }

void dkb__sql_locate(const char *sql, size_t pos, int *line, int *col, const char **line_start, size_t *line_len) {
    size_t len = strlen(sql);
    if (pos > len) pos = len;
    int ln = 1;
    size_t start = 0;
    for (size_t i = 0; i < pos; i++)
        if (sql[i] == '\n') ln++, start = i + 1;
    size_t end = start;
    while (end < len && sql[end] != '\n') end++;
    if (line) *line = ln;
    if (col) *col = (int)(pos - start) + 1;
    if (line_start) *line_start = sql + start;
    if (line_len) *line_len = end - start;
}

/* json_serialize_plan's error object into diag and a one-line err. */
static int sql_error(const char *sql, const cJSON *doc, dkb__sql_diag *diag, dkb_error *err) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(doc, "error_type");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(doc, "error_message");
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(doc, "position");
    long position = -1;
    if (cJSON_IsString(pos) && pos->valuestring[0]) {
        char *end;
        long v = strtol(pos->valuestring, &end, 10);
        if (!*end && v >= 0) position = v;
    } else if (cJSON_IsNumber(pos) && pos->valuedouble >= 0) {
        position = (long)pos->valuedouble;
    }
    const char *t = cJSON_IsString(type) ? type->valuestring : "sql";
    const char *m = cJSON_IsString(msg) ? msg->valuestring : "(DuckDB gave no message)";
    snprintf(diag->type, sizeof diag->type, "%s", t);
    snprintf(diag->msg, sizeof diag->msg, "%s", m);
    diag->position = position;
    char one[400];
    snprintf(one, sizeof one, "%s", m);
    for (char *c = one; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    if (position < 0) return dkb_fail(err, DKB_EPARSE, "%s error: %s", t, one);
    int line, col;
    dkb__sql_locate(sql, (size_t)position, &line, &col, NULL, NULL);
    return dkb_fail(err, DKB_EPARSE, "%s error: %s (line %d, column %d)", t, one, line, col);
}

int dkb__sql_plan(dkb__sql_planner *p, const char *sql, char **json, dkb__sql_diag *diag, dkb_error *err) {
    dkb__sql_diag scratch;
    if (!diag) diag = &scratch;
    diag->type[0] = diag->msg[0] = 0;
    diag->position = -1;
    if (!json) return dkb_fail(err, DKB_EINVAL, "dkb__sql_plan: NULL json");
    *json = NULL;
    if (!p || !sql) return dkb_fail(err, DKB_EINVAL, "dkb__sql_plan: NULL argument");
    const dkb__duckdb_api *d = p->d;
    dkb__ddb_result r;
    memset(&r, 0, sizeof r);
    if (d->bind_varchar(p->plan_stmt, 1, sql) != DKB__DDB_SUCCESS)
        return dkb_fail(err, DKB_EINVAL, "duckdb: the SQL text is not valid UTF-8");
    if (d->execute_prepared(p->plan_stmt, &r) != DKB__DDB_SUCCESS) {
        const char *e = d->result_error(&r);
        int rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: json_serialize_plan: %s", e ? e : "failed");
        d->destroy_result(&r);
        return rc;
    }
    char *v = d->row_count(&r) == 1 ? d->value_varchar(&r, 0, 0) : NULL;
    d->destroy_result(&r);
    if (!v) return dkb_fail(err, DKB_EINTERNAL, "duckdb: json_serialize_plan returned no text");
    char *text = strdup(v);
    d->free(v);
    if (!text) return dkb_fail(err, DKB_ENOMEM, "out of memory");

    int rc = 0;
    cJSON *doc = cJSON_Parse(text);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
    const cJSON *plans = cJSON_GetObjectItemCaseSensitive(doc, "plans");
    if (!doc || !cJSON_IsBool(e)) {
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: json_serialize_plan's answer is not the expected JSON");
    } else if (cJSON_IsTrue(e)) {
        rc = sql_error(sql, doc, diag, err);
    } else if (!cJSON_IsArray(plans)) {
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: json_serialize_plan's answer has no \"plans\" array");
    } else if (cJSON_GetArraySize(plans) != 1) {
        int n = cJSON_GetArraySize(plans);
        rc = n ? dkb_fail(err, DKB_EINVAL, "the SQL holds %d statements; give one", n)
               : dkb_fail(err, DKB_EINVAL, "the SQL holds no statement");
    }
    cJSON_Delete(doc);
    if (rc) {
        free(text);
        return rc;
    }
    *json = text;
    return 0;
}

/* ---- running SQL in DuckDB itself (the translator's names and oracle) ---- */

/* sql without trailing blanks and ';', malloc'ed (NULL: out of memory). */
static char *strip_statement(const char *sql) {
    size_t n = strlen(sql);
    while (n && (sql[n - 1] == ';' || sql[n - 1] == ' ' || sql[n - 1] == '\n' || sql[n - 1] == '\t' ||
                 sql[n - 1] == '\r'))
        n--;
    char *s = malloc(n + 1);
    if (s) memcpy(s, sql, n), s[n] = 0;
    return s;
}

int dkb__sql_column_names(dkb__sql_planner *p, const char *sql, char ***names, int *n, dkb_error *err) {
    *names = NULL;
    *n = 0;
    char *body = strip_statement(sql);
    size_t cap = body ? strlen(body) + 64 : 0;
    char *q = body ? malloc(cap) : NULL;
    if (!q) {
        free(body);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    snprintf(q, cap, "SELECT * FROM (%s\n) LIMIT 0", body);
    free(body);
    dkb__ddb_result r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    if (p->d->query(p->con, q, &r) != DKB__DDB_SUCCESS) {
        const char *e = p->d->result_error(&r);
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: the result's column names: %s", e ? e : "failed");
    } else {
        int k = (int)p->d->column_count(&r);
        char **v = calloc((size_t)k + 1, sizeof *v);
        for (int i = 0; v && i < k; i++) {
            const char *name = p->d->column_name(&r, (dkb__ddb_idx)i);
            if (!(v[i] = strdup(name ? name : ""))) {
                for (int j = 0; j < i; j++) free(v[j]);
                free(v), v = NULL;
            }
        }
        if (!v) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        else *names = v, *n = k;
    }
    p->d->destroy_result(&r);
    free(q);
    return rc;
}

int dkb__sql_copy_csv(dkb__sql_planner *p, const char *sql, const char *path, dkb_error *err) {
    char *body = strip_statement(sql);
    size_t cap = body ? strlen(body) + 2 * strlen(path) + 64 : 0;
    char *q = body ? malloc(cap) : NULL;
    if (!q) {
        free(body);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    size_t k = (size_t)snprintf(q, cap, "COPY (%s\n) TO '", body);
    for (const char *c = path; *c; c++) {
        if (*c == '\'') q[k++] = '\'';
        q[k++] = *c;
    }
    snprintf(q + k, cap - k, "' (HEADER, DELIMITER ',')");
    free(body);
    dkb__ddb_result r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    if (p->d->query(p->con, q, &r) != DKB__DDB_SUCCESS) {
        const char *e = p->d->result_error(&r);
        rc = dkb_fail(err, DKB_EINTERNAL, "duckdb: running the SQL: %s", e ? e : "failed");
    }
    p->d->destroy_result(&r);
    free(q);
    return rc;
}
