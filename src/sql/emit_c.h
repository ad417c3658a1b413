/* emit_c.h: `dkb sql --emit c`: a translated SQL query written as C source
 * in the shape of src/queries/qNN.c (issue 18).
 *
 * dkb__sql_emit_c translates json (dkb__sql_plan's plan of sql) over db
 * on tp, as dkb__sql_translate does, recording every TensorPlan operation
 * the translator makes (emit_rec.h), and writes to out one C file: a file
 * comment with the SQL, prepare (the store columns the scans read, put
 * into the input set), core (the recorded operations as a straight-line
 * function of dkb_tp_* calls; operations whose results only fed host-side
 * decisions are dropped, and values the translator computed on the host
 * from the data, such as row counts, key ranges, dense ids and dictionary
 * lookup tables, appear as literals: the program is specialised to db),
 * finish (the result table: DuckDB's column names and types, NULLs, the
 * ORDER BY) and `const dkb_query dkb__sql_emitted` named `name`.
 *
 * 0, or an error code with one line in err: the translator's errors, and
 * DKB_EINVAL "--emit c: ..." for a program the recorder cannot write (a
 * host-computed tensor too large for a literal, more than DKB_SET_MAX
 * columns or outputs). Nothing is written to out on failure. */
#ifndef DKB_SQL_EMIT_C_H
#define DKB_SQL_EMIT_C_H

#include <stdio.h>

#include "dkb/error.h"
#include "dkb/store.h"
#include "dkb/tensor.h"
#include "sql/plan.h"

int dkb__sql_emit_c(dkb__sql_planner *p, const dkb_store *db, dkb_tp *tp, const char *sql, const char *json,
                    const char *name, FILE *out, dkb_error *err);

/* Called by the translator (translate.c) with the result's columns once
 * the plan has run, while a recording is on: v[i] the values of column i
 * (exact decimals already at scales[i]), valid[i] its mask or NULL. */
#include "dkb/result.h"
void dkb__rec_result(int nc, char *const *names, dkb_tensor *const *v, dkb_tensor *const *valid,
                     const dkb_res_type *types, const int *scales, int norder, const dkb_sort_spec *order);
/* True while a recording is on. */
int dkb__rec_on(void);

#endif
