/* task.h: a user's SQL file as a benchmark task (issue 18, item 5): the
 * query object the harness, `dkb prompt` and `dkb optimize` use for a
 * built-in query (dkb/query.h), with the translator's program as its
 * baseline.
 *
 * A task is planned once, where libduckdb is (the evaluating process:
 * dkb__sql_task_plan opens a planner over the store, plans the file's SQL
 * and takes DuckDB's result column names), and travels as three texts:
 * the SQL, DuckDB's plan JSON and the column names. A worker rebuilds it
 * from them (dkb__sql_task_from_parts) without libduckdb and runs it with
 * dkb__sql_translate_named.
 *
 * The query object (dkb__sql_task_query): number 0, name the file's stem
 * ([a-z0-9_]+, at most DKB_SQL_TASK_NAME_MAX - 1 bytes), title "SQL file
 * NAME.sql", sql the file's text, the parameters the file declares
 * (task_params.h: "-- dkb:param" lines; none: every seed gives the one,
 * empty, parameter set). A task with parameters is planned once per
 * distinct parameter set of the seeds it is planned for (its "plan" is
 * then a bundle of the substituted SQL texts, their plans and column
 * names), and finish runs the plan of its parameter set. Its steps:
 *   prepare  puts into `in` the store columns the plan's scans read (at
 *            most DKB_SET_MAX; named by column, so the harness's floor
 *            counts them) and remembers db;
 *   core     nothing (SQL tasks are full mode only: no core candidate);
 *   finish   runs the whole translated program over the db prepare saw,
 *            on tp's backend, into res (column names and types of the
 *            translated program's result, DuckDB's names).
 * The steps read the task through one process-wide pointer set by
 * dkb__sql_task_query: one task is in use per process at a time (a worker
 * runs one job; the CLI one task). */
#ifndef DKB_SQL_TASK_H
#define DKB_SQL_TASK_H

#include <stdint.h>
#include <stdio.h>

#include "dkb/error.h"
#include "dkb/query.h"
#include "dkb/store.h"

#define DKB_SQL_TASK_NAME_MAX 48
#define DKB_SQL_TASK_MAX_PLANS 64   /* distinct parameter sets a task plans */

typedef struct dkb__sql_task dkb__sql_task;

/* The task name of a SQL file path: its base name without ".sql", which
 * must be [a-z0-9_]+ and shorter than DKB_SQL_TASK_NAME_MAX (else DKB_EINVAL
 * with one line naming the file). A name that is a TPC-H query's (q01..q22)
 * is refused too, so a row never means two queries. */
int dkb__sql_task_name(const char *path, char *name, size_t n, dkb_error *err);

/* Read the SQL file at path, plan it over db with DuckDB (libduckdb needed:
 * plan.h) and take the result's column names. *out is the task (free with
 * dkb__sql_task_free). Errors: those of dkb__sql_task_name, of reading the
 * file (DKB_ENOENT, DKB_EIO), of dkb__sql_planner_open (DKB_ENOENT
 * "libduckdb not found: ...") and dkb__sql_plan (DKB_EPARSE with DuckDB's
 * line); DKB_ENOMEM. */
int dkb__sql_task_plan(const char *path, const dkb_store *db, dkb__sql_task **out, dkb_error *err);
/* The same for a file that may declare parameters: planned for seed 0 and
 * seeds[0..nseeds) (dkb__sql_task_plan: seed 0 only). A bad declaration is
 * DKB_EINVAL "PATH:LINE: dkb:param: ..."; more than DKB_SQL_TASK_MAX_PLANS
 * distinct parameter sets DKB_EINVAL. */
int dkb__sql_task_plan_seeds(const char *path, const dkb_store *db, const uint64_t *seeds, int nseeds,
                             dkb__sql_task **out, dkb_error *err);
/* The number of parameters the file declares. */
int dkb__sql_task_nparams(const dkb__sql_task *t);

/* A task from its parts (a worker's job): name, the SQL, the plan JSON and
 * the column names as a JSON array of strings. Copies all. DKB_EPARSE
 * when the plan or the names do not parse; DKB_EINVAL for a bad name. */
int dkb__sql_task_from_parts(const char *name, const char *sql, const char *plan, const char *columns_json,
                             dkb__sql_task **out, dkb_error *err);

/* The parts, borrowed from t: the SQL text, the plan JSON, the column names
 * as a JSON array (malloc'd by the call, caller frees; NULL when out of
 * memory). */
const char *dkb__sql_task_sql(const dkb__sql_task *t);
const char *dkb__sql_task_plan_json(const dkb__sql_task *t);
char *dkb__sql_task_columns_json(const dkb__sql_task *t);

/* The query object (lives as long as t); makes t the process's task. */
const dkb_query *dkb__sql_task_query(dkb__sql_task *t);

/* The TensorPlan program as it runs (the translator's trace, as `dkb sql
 * --explain=tensorplan` prints it), run once over db on a CPU context:
 * malloc'd text in *out. Errors of the translation. */
int dkb__sql_task_program(dkb__sql_task *t, const dkb_store *db, char **out, dkb_error *err);

/* Accepts NULL; clears the process's task when it is t. */
void dkb__sql_task_free(dkb__sql_task *t);

#endif
