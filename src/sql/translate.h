/* translate.h: SQL to a TensorPlan program and its result (issue 18).
 *
 * dkb__sql_translate takes DuckDB's optimized logical plan of sql (the JSON
 * of dkb__sql_plan) and executes it operator by operator as TensorPlan
 * operations on tp's backend (src/sql/translate_*.c: operators, joins,
 * aggregates, expressions, string functions), then builds the result table
 * with DuckDB's column names, its types (exact DECIMAL at DuckDB's result
 * scale, DOUBLE as FLOAT, DATE, VARCHAR as STRING, integers as INT; a
 * HUGEINT as DECIMAL of scale 0; BOOLEAN as the strings true/false) and
 * NULLs, and the ORDER BY of the plan's root when its keys are result
 * columns (so a comparison checks the order).
 *
 *     char *json; dkb__sql_plan(p, sql, &json, &diag, &err);
 *     dkb_result res = {0};
 *     rc = dkb__sql_translate(p, store, tp, sql, json, NULL, &res, &err);
 *
 * A construct the translator does not handle (an operator, function, type
 * or join shape) fails with DKB_EINVAL and one line "not translatable to
 * TensorPlan: <what> (line L, column C)" (the position when DuckDB gives
 * one); a failed TensorPlan operation with its message; nothing is partly
 * computed into res. trace (may be NULL) receives one line per operator
 * executed, indented by depth: the TensorPlan program as it ran. tp is
 * reset before and after (its tensors are freed; res owns its memory). */
#ifndef DKB_SQL_TRANSLATE_H
#define DKB_SQL_TRANSLATE_H

#include <stdio.h>

#include "dkb/error.h"
#include "dkb/result.h"
#include "dkb/store.h"
#include "dkb/tensor.h"
#include "sql/plan.h"

int dkb__sql_translate(dkb__sql_planner *p, const dkb_store *db, dkb_tp *tp, const char *sql, const char *json,
                       FILE *trace, dkb_result *res, dkb_error *err);

/* The same without DuckDB (a worker process, which has no planner): doc is
 * the plan document already parsed (cJSON_Parse of dkb__sql_plan's JSON;
 * read only, so it may be reused for many runs) and names the nnames
 * column names DuckDB gives the result (dkb__sql_column_names, taken where
 * the plan was made). Errors as above, DKB_EINVAL for NULL arguments;
 * a plan whose root gives another number of columns is DKB_EINTERNAL. */
struct cJSON;
int dkb__sql_translate_named(const dkb_store *db, dkb_tp *tp, const char *sql, const struct cJSON *doc,
                             char *const *names, int nnames, FILE *trace, dkb_result *res, dkb_error *err);

#endif
