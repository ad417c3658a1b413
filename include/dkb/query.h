/* query.h: the 22 TPC-H queries as TensorPlan programs, their parameters,
 * and the registry that lists them.
 *
 * Every query is split as in the paper:
 *   prepare  picks the store columns the query needs and turns parameters
 *            into typed constants (dates as days, decimals as scaled
 *            integers, dictionary strings as codes or code masks);
 *   core     the pure tensor computation: prepared inputs -> core outputs
 *            (what a 'core' mode candidate replaces);
 *   finish   builds the result table from the core outputs on the host.
 * Inputs and outputs travel as named sets of tensors and host scalars, so
 * one calling convention serves every query, the baseline and candidates.
 * The steps' contracts are at dkb_query below; the words (prepare, core,
 * finish, core and full mode, baseline, candidate, expert, row, seed,
 * floor, must-read bound) are defined in docs/README.md, "Glossary". */
#ifndef DKB_QUERY_H
#define DKB_QUERY_H

#include <stdint.h>

#include "dkb/error.h"
#include "dkb/result.h"
#include "dkb/store.h"
#include "dkb/tensor.h"

/* The number of TPC-H queries, numbered 1..DKB_NQUERIES ("q01".."q22"). */
#define DKB_NQUERIES 22

/* ---- parameters ---- */

typedef enum {
    DKB_PARAM_INT = 0,   /* integer (sizes, quantities, days) */
    DKB_PARAM_DATE,      /* days since 1970-01-01; text YYYY-MM-DD */
    DKB_PARAM_DECIMAL,   /* scaled integer, `scale` digits; text 0.06 */
    DKB_PARAM_STRING,    /* text as it appears in the data */
} dkb_param_kind;

#define DKB_MAX_PARAMS 12
#define DKB_PARAM_STRLEN 48

typedef struct dkb_param_value {
    const char *name;            /* "date", "discount" (static storage) */
    dkb_param_kind kind;
    int scale;                   /* DECIMAL: digits after the point */
    int64_t i;                   /* INT, DATE, DECIMAL */
    char s[DKB_PARAM_STRLEN];    /* STRING */
} dkb_param_value;

typedef struct dkb_params {
    int n;
    dkb_param_value v[DKB_MAX_PARAMS];
} dkb_params;

/* The value of parameter `name` (NULL if the query has none by that name). */
const dkb_param_value *dkb_params_get(const dkb_params *p, const char *name);
/* Format a value as its command-line text ("1994-01-01", "0.06", "BRASS"),
 * truncated to n - 1 bytes. DECIMAL prints exactly `scale` digits. */
void dkb_param_text(const dkb_param_value *v, char *buf, size_t n);
/* "INT", "DATE", "DECIMAL", "STRING" ("?" otherwise). */
const char *dkb_param_kind_name(dkb_param_kind k);

/* ---- named sets of tensors and scalars (prepare/core/finish interface) ---- */

#define DKB_SET_MAX 32

typedef struct dkb_tensor_set {
    int n;
    const char *name[DKB_SET_MAX];      /* static strings: "l_shipdate" */
    dkb_tensor *t[DKB_SET_MAX];
    int nscalar;
    const char *sname[DKB_SET_MAX];     /* "date_lo" */
    int64_t ival[DKB_SET_MAX];          /* integer scalars (scaled as documented) */
    double fval[DKB_SET_MAX];           /* float scalars */
    const char *sval[DKB_SET_MAX];      /* string scalars (e.g. LIKE patterns), arena */
} dkb_tensor_set;

/* Add to / read from a set; errors are recorded in tp (sticky), the getters
 * then return NULL / 0. */
void dkb_set_put(dkb_tp *tp, dkb_tensor_set *s, const char *name, dkb_tensor *t);
void dkb_set_put_i64(dkb_tp *tp, dkb_tensor_set *s, const char *name, int64_t v);
void dkb_set_put_f64(dkb_tp *tp, dkb_tensor_set *s, const char *name, double v);
void dkb_set_put_str(dkb_tp *tp, dkb_tensor_set *s, const char *name, const char *v);
/* Putting a name already in the set replaces it. Getting a missing name,
 * a string scalar never put as one, or putting into a full set, fails tp
 * with a message naming the entry; a tensor put as NULL (an earlier
 * operation failed) gets NULL without a new error. */
dkb_tensor *dkb_set_get(dkb_tp *tp, const dkb_tensor_set *s, const char *name);
int64_t dkb_set_get_i64(dkb_tp *tp, const dkb_tensor_set *s, const char *name);
double dkb_set_get_f64(dkb_tp *tp, const dkb_tensor_set *s, const char *name);
const char *dkb_set_get_str(dkb_tp *tp, const dkb_tensor_set *s, const char *name);
/* For prepare: the store column table.column as a tensor (dkb_tp_column),
 * also put into s under the column's name. A store without that table or
 * column fails tp with "store DIR has no table T" / "... no column
 * T.C" (DKB_ENOENT) and returns NULL. */
dkb_tensor *dkb_set_put_column(dkb_tp *tp, dkb_tensor_set *s, const dkb_store *db, const char *table,
                               const char *column);

/* ---- queries ---- */

typedef struct dkb_param_def {
    const char *name;            /* as on the command line: "date" */
    dkb_param_kind kind;
    int scale;                   /* DECIMAL */
    const char *help;            /* "first day of the 1-year window (Jan 1 of 1993..1997)" */
} dkb_param_def;

typedef struct dkb_query {
    int number;                  /* 1..22 */
    const char *name;            /* "q01" */
    const char *title;           /* "Pricing Summary Report" */
    const char *sql;             /* the SQL with :name placeholders for parameters */
    int nparams;
    const dkb_param_def *params;
    /* Draw parameters as qgen does from `seed` (0: the qualification values)
     * at scale factor sf (Q11's fraction depends on it). */
    void (*draw)(uint64_t seed, double sf, dkb_params *out);
    /* Reject values the query does not accept (one line in err). */
    int (*check)(const dkb_params *p, dkb_error *err);

    /* The three steps, which dkb_query_run calls in order and the harness
     * also calls one by one. Each returns 0 or a DKB_E* code; a failed
     * TensorPlan operation is recorded in tp (sticky) instead, so a caller
     * checks both (dkb_tp_status). Names put into a set are static
     * strings. A step keeps no state of its own between calls.
     *
     * prepare: IN tp, db, p (checked parameters, q->params in order).
     *   OUT in (zeroed by the caller): the store columns the query reads, as
     *   views put under their column names (dkb_set_put_column; on CUDA
     *   resident device copies), and the parameters as typed scalars
     *   (dates as days, decimals as scaled integers, dictionary strings as
     *   codes, free-text patterns as strings) or as small tensors over a
     *   dictionary (a LIKE pattern's lookup table). Nothing that grows with
     *   a table is computed here: the harness counts the columns in `in`
     *   as the query's floor and hands `in`, as is, to a core candidate.
     *
     * core: IN in (as prepare left it; read-only: the harness prepares each
     *   parameter set once, on another context, and times core on it many
     *   times). OUT out (zeroed by the caller): the core outputs, tensors
     *   only, with the same names, dtypes and scales for every parameter
     *   set; what a core candidate must produce. All the query's work on
     *   the data happens here, on tp's backend; it reads nothing but in.
     *
     * finish: IN out (the baseline's core outputs, or a core candidate's:
     *   then on a CPU context of the harness's, tp, with lengths the
     *   candidate chose), p. OUT res (zeroed by the caller): the result
     *   table, columns declared with dkb_result_init, rows in ORDER BY
     *   order. Reads nothing but out and p; copies what it needs to the
     *   host (dkb_tp_get_*, dkb_tp_host_copy). Outputs it cannot use (a
     *   missing name, a code outside its dictionary, more text than rows)
     *   are an error code or tp's error; a result setter call that names a
     *   bad cell counts in res->nbad, which dkb_query_run reports as
     *   DKB_EINTERNAL. */
    int (*prepare)(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in);
    int (*core)(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out);
    int (*finish)(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res);
} dkb_query;

/* The registry: query number 1..DKB_NQUERIES, or by name ("q06", "Q6",
 * "6"); NULL for any other number or name. Every plan is linked into
 * every build, so a query number always has its plan. */
const dkb_query *dkb_query_get(int number);
const dkb_query *dkb_query_find(const char *name);
/* The number 1..DKB_NQUERIES a name means ("q06", "Q6", "6", "06"); 0
 * when it names no TPC-H query. */
int dkb_query_number(const char *name);

/* Parameters: draw from seed, then apply overrides "name=value" (each
 * checked: unknown name, unparsable or out-of-range value -> DKB_EINVAL
 * with one line naming the parameter), then q->check.
 * The draw must put exactly q's parameters in q->params order with their
 * kinds and scales (else DKB_EINTERNAL naming the first mismatch). Values
 * parse as: INT a decimal integer; DATE YYYY-MM-DD (a real date, years
 * 1000..9999); DECIMAL plain notation with at most `scale` digits after the
 * point ("0.06", ".06", "1"); STRING up to DKB_PARAM_STRLEN - 1 bytes, no
 * control characters. A name given twice is an error. sf must be > 0. */
int dkb_query_params(const dkb_query *q, uint64_t seed, double sf, const char *const *overrides,
                     int noverrides, dkb_params *out, dkb_error *err);
/* The SQL with this parameter set substituted (DuckDB dialect), malloc'ed
 * (NULL when out of memory or q has no SQL). Every `:name` of a parameter
 * in p is replaced (the longest name that matches and is not followed by
 * a letter, digit or '_'; `::` casts are left alone): DATE as YYYY-MM-DD,
 * DECIMAL as 0.06, INT in decimal, STRING raw with ' doubled (the
 * templates quote their string and date slots). */
char *dkb_query_sql(const dkb_query *q, const dkb_params *p);

/* Run the whole baseline plan: check, prepare, core, finish, on tp's
 * backend. Resets nothing: call dkb_tp_reset between runs. res must be
 * zeroed (or freed) on entry; finish fills it; on failure it is freed.
 * 0 or an error code with err filled as "q06 core: <message>" (tp's sticky
 * error, or a phase's own code; a finish that left bad setter calls in res
 * fails with DKB_EINTERNAL). */
int dkb_query_run(const dkb_query *q, dkb_tp *tp, const dkb_store *db, const dkb_params *p,
                  dkb_result *res, dkb_error *err);

#endif
