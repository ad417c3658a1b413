/* task_params.h: parameters declared in a SQL task file (docs/sql.md,
 * "Parameters"): comment lines
 *
 *     -- dkb:param NAME int LO..HI [step N] [default V]
 *     -- dkb:param NAME decimal LO..HI [step S] [default V]
 *     -- dkb:param NAME date LO..HI [step [N] day|month|year] [default V]
 *     -- dkb:param NAME choice V1, V2, ... [default V]
 *
 * (a decimal's scale: the most digits after the point of LO, HI and the
 * step) declare NAME, written :NAME in the SQL and substituted as a literal by
 * dkb_query_sql (INT and DECIMAL as numbers, DATE as YYYY-MM-DD, a choice
 * as its text with ' doubled: the SQL quotes dates and strings, DATE ':d',
 * ':s'). Seed 0 takes every default (the declared one, else LO or the
 * first choice); another seed draws each parameter uniformly from its grid
 * (LO, LO + step, ... up to HI; the choices), deterministically from the
 * seed. */
#ifndef DKB_SQL_TASK_PARAMS_H
#define DKB_SQL_TASK_PARAMS_H

#include <stdint.h>

#include "dkb/error.h"
#include "dkb/query.h"

#define DKB_SQL_PARAM_NAME_MAX 32
#define DKB_SQL_PARAM_CHOICES 64

typedef enum { DKB_SQL_STEP_UNIT = 0, DKB_SQL_STEP_MONTH, DKB_SQL_STEP_YEAR } dkb__sql_step_unit;

typedef struct dkb__sql_pdecl {
    char name[DKB_SQL_PARAM_NAME_MAX];
    dkb_param_kind kind;              /* INT, DECIMAL, DATE; STRING for a choice */
    int scale;                        /* DECIMAL */
    int64_t lo, hi, step;             /* units (DATE: days; a month/year step counts months/years) */
    dkb__sql_step_unit unit;
    int64_t count;                    /* grid points (choices) */
    int64_t def;                      /* the default's grid index */
    int nchoice;
    char choice[DKB_SQL_PARAM_CHOICES][DKB_PARAM_STRLEN];
    char help[96];                    /* "int 1..5", for the parameter table */
} dkb__sql_pdecl;

typedef struct dkb__sql_params {
    int n;
    dkb__sql_pdecl d[DKB_MAX_PARAMS];
    dkb_param_def defs[DKB_MAX_PARAMS];  /* the query's parameter table (names point into d) */
} dkb__sql_params;

/* The declarations in sql (the text of the file at path, for messages).
 * A bad declaration, a second one of a name, more than DKB_MAX_PARAMS, a
 * "-- dkb:" line that is not "dkb:param", or a declared NAME that :NAME
 * never uses is DKB_EINVAL with one line "PATH:LINE: dkb:param: PROBLEM". */
int dkb__sql_params_parse(const char *path, const char *sql, dkb__sql_params *out, dkb_error *err);

/* The parameter set of seed (0: the defaults), in declaration order. */
void dkb__sql_params_draw(const dkb__sql_params *ps, uint64_t seed, dkb_params *out);

/* DKB_EINVAL with one line naming the parameter when a value of p (an
 * override) is off its declared grid or not a choice. */
int dkb__sql_params_check(const dkb__sql_params *ps, const char *task, const dkb_params *p, dkb_error *err);

#endif
