/* plan.h: DuckDB's optimized logical plan of a SQL query over a store.
 *
 * A planner is an in-memory DuckDB database (libduckdb loaded at run time,
 * duckdb_load.h) holding the store's tables with the oracle's types
 * (tools/oracle/lib.mjs): INTEGER keys and counts, BIGINT o_orderkey and
 * l_orderkey, DECIMAL(15,2) money and quantities, DATE dates, VARCHAR text
 * (dictionary and free text alike), every column NOT NULL. Every row of the
 * store is loaded, not a sample: DuckDB's optimizer reads the tables'
 * statistics (join order from cardinalities, filters against min/max, an
 * empty table folded to an empty result), so the plan is the one DuckDB
 * picks for exactly this data. Loading goes through the appender's
 * data-chunk API with the store's arrays copied as they are (DECIMAL is
 * int64 hundredths and DATE int32 days since 1970 in both), so SF 0.1 loads
 * in well under a second.
 *
 * Planning runs `SELECT json_serialize_plan(sql, optimize := true)` with
 * `SET disabled_optimizers = 'column_lifetime,compressed_materialization'`:
 * without column_lifetime DuckDB 1.5.6 fails to serialize TPC-H Q2, Q5, Q7,
 * Q8, Q9 and Q21 with an internal re-binding error; compressed
 * materialization only wraps keys and strings in __internal_compress_* /
 * __internal_decompress_* projections around sorts and aggregates (a
 * physical trick of DuckDB's own executor that a translator would have to
 * undo; without it the 22 plans have 54 fewer operators). json_serialize_plan
 * only plans: nothing in the SQL is executed (a DROP TABLE is planned as
 * LOGICAL_DROP, not run; the translator refuses what is not a query).
 *
 *     dkb__sql_planner *p;
 *     if (dkb__sql_planner_open(store, NULL, &p, &err)) ...
 *     char *json; dkb__sql_diag d;
 *     rc = dkb__sql_plan(p, "SELECT count(*) FROM lineitem", &json, &d, &err);
 *     ... free(json); dkb__sql_planner_close(p);
 *
 * A planner is used by one thread at a time. */
#ifndef DKB_SQL_PLAN_H
#define DKB_SQL_PLAN_H

#include <stddef.h>

#include "dkb/error.h"  // defines: dkb_error
#include "dkb/store.h"  // defines: dkb_store

typedef struct dkb__sql_planner dkb__sql_planner;

typedef struct dkb__sql_options {
    /* DuckDB optimizers to disable, comma-separated (NULL: the default,
     * "column_lifetime,compressed_materialization"; column_lifetime must
     * stay in the list for TPC-H). */
    const char *disabled_optimizers;
    int threads; /* DuckDB's threads; 0: DuckDB's default (all cores) */
} dkb__sql_options;

/* DuckDB's own report of an error in the SQL (json_serialize_plan's
 * {"error": true, "error_type", "error_message", "position"}). */
typedef struct dkb__sql_diag {
    char type[32];    /* "parser", "binder", "catalog", ...; "" when none */
    char msg[1024];   /* DuckDB's message as it is (may hold newlines) */
    long position;    /* byte offset into the SQL; -1 when DuckDB gives none */
} dkb__sql_diag;

/* Load libduckdb, open an in-memory database and load every table of s
 * into it. opt may be NULL. s is read only during the call (the data is
 * copied into DuckDB; s may be closed afterwards). On success *out
 * is the planner (release with dkb__sql_planner_close). Errors: what
 * dkb__duckdb_load returns (DKB_ENOENT "libduckdb not found: ...", DKB_EIO,
 * DKB_EVERSION); DKB_ERANGE (a key beyond INTEGER); DKB_EINTERNAL (DuckDB
 * refused to open, create or append: its message); DKB_ENOMEM; DKB_EINVAL
 * (NULL s or out). *out is NULL on failure. */
int dkb__sql_planner_open(const dkb_store *s, const dkb__sql_options *opt, dkb__sql_planner **out,
                          dkb_error *err);

/* Close the database. Accepts NULL. */
void dkb__sql_planner_close(dkb__sql_planner *p);

/* The version of the loaded libduckdb ("v1.5.6"). */
const char *dkb__sql_duckdb_version(const dkb__sql_planner *p);

/* Plan sql (one statement; a trailing ';' is fine). On success *json is
 * DuckDB's document, malloc'ed, caller frees:
 *     {"error": false, "plans": [ROOT]}
 * with ROOT the optimized logical plan's root operator ("type":
 * "LOGICAL_PROJECTION", "children": [...], and the operator's fields).
 * diag (may be NULL) is cleared. Errors: DKB_EPARSE when DuckDB rejects the
 * SQL: diag holds DuckDB's report and err one line, "<type> error:
 * <message, newlines as spaces> (line L, column C)" (the position part
 * only when DuckDB gives one); DKB_EINVAL (not exactly one statement; NULL
 * arguments); DKB_EINTERNAL (DuckDB failed otherwise, or its answer is not
 * the JSON described); DKB_ENOMEM. *json is NULL on failure. */
int dkb__sql_plan(dkb__sql_planner *p, const char *sql, char **json, dkb__sql_diag *diag, dkb_error *err);

/* Where byte offset pos lies in sql: 1-based *line and *col (bytes), and
 * the line as [*line_start, *line_start + *line_len) without its '\n'. pos
 * past the end is taken as the end. */
void dkb__sql_locate(const char *sql, size_t pos, int *line, int *col, const char **line_start, size_t *line_len);

/* A compact tree of the plan document json (dkb__sql_plan's): one line per
 * operator, indented two spaces per level, its type without "LOGICAL_",
 * its table index (#N) where it defines one, and its main expressions, e.g.
 *     ORDER_BY #0 ASC, #1 ASC
 *       AGGREGATE_AND_GROUP_BY #2 groups: #0, #1 aggregates: sum(#2), count_star()
 *         GET lineitem #0 [l_returnflag, l_linestatus, l_quantity] filters: l_shipdate<='1998-09-02'
 * Column references print as #t.c (table index t, column c) or #i (the
 * i-th input column). Sets *out (malloc'ed, caller frees). Errors:
 * DKB_EPARSE (json is not a plan document), DKB_ENOMEM. */
int dkb__sql_plan_tree(const char *json, char **out, dkb_error *err);

/* json (any JSON text) indented two spaces per level, one member or
 * element per line, with every token kept byte for byte as DuckDB wrote it
 * (no re-parsing: the 18446744073709551615 of an unset index stays exact),
 * ending in '\n'. Sets *out (malloc'ed, caller frees). Errors: DKB_EPARSE
 * (brackets unbalanced, a string unterminated), DKB_ENOMEM. */
int dkb__sql_json_pretty(const char *json, char **out, dkb_error *err);

/* The names of the columns DuckDB gives sql's result (the statement run
 * as `SELECT * FROM (sql) LIMIT 0`): *names (n + 1 entries, the last
 * NULL; caller frees each and the array) and *n. Errors: DKB_EINTERNAL
 * (DuckDB's message), DKB_ENOMEM. */
int dkb__sql_column_names(dkb__sql_planner *p, const char *sql, char ***names, int *n, dkb_error *err);

/* Run sql in DuckDB and write its result to path as CSV with a header
 * (`COPY (sql) TO path (HEADER)`): DuckDB's own answer, the oracle the
 * translator is checked against. Errors: DKB_EINTERNAL (DuckDB's message),
 * DKB_ENOMEM. */
int dkb__sql_copy_csv(dkb__sql_planner *p, const char *sql, const char *path, dkb_error *err);

#endif
