/* result.h: typed query result tables: build, print (table, CSV, JSON),
 * read back from CSV, and compare against an expected result.
 *
 * A result has named, typed columns and rows, stored column-major on the
 * host. Column types:
 *   INT      int64
 *   DECIMAL  exact scaled integer (__int128) with a per-column scale:
 *            value 12345 at scale 2 prints as 123.45
 *   FLOAT    double (averages and other float paths); TABLE prints `scale`
 *            decimals (6 when scale is 0), CSV and JSON every digit it
 *            needs (shortest round trip, plain decimal, as DuckDB)
 *   DATE     int32 days since 1970-01-01, printed YYYY-MM-DD
 *   STRING   bytes (copied into the result)
 * Any cell may be NULL (SQL NULL, e.g. a sum over no rows): set with
 * dkb_result_set_null; setting a value clears it.
 * A result owns all its memory; the caller allocates the dkb_result itself
 * (zeroed, e.g. `dkb_result r = {0};`) and releases it with dkb_result_free.
 *
 * Comparison (dkb_result_compare): row counts always; column count and
 * names; INT, DATE, STRING exactly; DECIMAL exactly when both sides are
 * exact (an expected value read from text is exact at its written scale);
 * FLOAT within abs_tol + rel_tol * |expected|. Row order: the result
 * declares its ORDER BY keys (columns with directions, dkb_result_set_order);
 * rows must be in that order, and rows that tie on the order keys are
 * compared as a set. A result with no ORDER BY is compared entirely as a
 * set. The first difference is reported as
 * "row R, column NAME: got X, expected Y" (R counts from 1 in expected's
 * order). */
#ifndef DKB_RESULT_H
#define DKB_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dkb/error.h"

typedef enum {
    DKB_RES_INT = 0,
    DKB_RES_DECIMAL,
    DKB_RES_FLOAT,
    DKB_RES_DATE,
    DKB_RES_STRING,
} dkb_res_type;

typedef struct dkb_res_column {
    char *name;
    dkb_res_type type;
    int scale;        /* DECIMAL: digits after the point; FLOAT: digits TABLE prints */
    /* values, nrows of them, according to type: */
    int64_t *i64;     /* INT */
    __int128 *dec;    /* DECIMAL */
    double *f64;      /* FLOAT */
    int32_t *date;    /* DATE */
    char **str;       /* STRING: NUL-terminated copies, never NULL */
    uint8_t *null;    /* NULL when no cell was ever set NULL; else 1 per NULL cell */
} dkb_res_column;

typedef struct dkb_sort_spec {
    int column;       /* index of a result column */
    bool desc;
} dkb_sort_spec;

typedef struct dkb_result {
    int ncols;
    dkb_res_column *cols;
    int64_t nrows, cap;
    int norder;                 /* ORDER BY keys, 0 = unordered */
    dkb_sort_spec order[8];
    /* Setter calls that named a bad row, column or type were ignored and
     * counted here, the first described in bad (dkb_query_run fails the
     * run when nbad > 0: a plan bug). */
    int64_t nbad;
    char bad[96];
} dkb_result;

/* "INT", "DECIMAL", "FLOAT", "DATE", "STRING" ("?" otherwise). */
const char *dkb_res_type_name(dkb_res_type t);

/* Define the columns: names and types (and scales; NULL: all 0) of a zeroed
 * result. 0, DKB_EINVAL (ncols < 1 or > 64, NULL names or types, a
 * negative scale or one above 30) or DKB_ENOMEM (r is then zeroed). */
int dkb_result_init(dkb_result *r, int ncols, const char *const *names, const dkb_res_type *types,
                    const int *scales);
void dkb_result_free(dkb_result *r);   /* accepts a zeroed result */
/* Declare the ORDER BY: column indices with directions (at most 8; more,
 * or a column out of range, sets nothing and counts as a bad call). */
void dkb_result_set_order(dkb_result *r, int n, const dkb_sort_spec *keys);
/* Append one empty row (values zero / empty string); returns its index or
 * -1 on allocation failure. Then set cells: */
int64_t dkb_result_add_row(dkb_result *r);
void dkb_result_set_int(dkb_result *r, int64_t row, int col, int64_t v);
void dkb_result_set_dec(dkb_result *r, int64_t row, int col, __int128 v);
void dkb_result_set_float(dkb_result *r, int64_t row, int col, double v);
void dkb_result_set_date(dkb_result *r, int64_t row, int col, int32_t days);
int dkb_result_set_str(dkb_result *r, int64_t row, int col, const char *s, size_t len); /* 0/ENOMEM */
/* Make a cell SQL NULL (any type). 0, DKB_ENOMEM or DKB_EINVAL (bad cell). */
int dkb_result_set_null(dkb_result *r, int64_t row, int col);
/* The cell is NULL (false for a bad row or column). */
bool dkb_result_is_null(const dkb_result *r, int64_t row, int col);

typedef enum { DKB_RES_FMT_TABLE = 0, DKB_RES_FMT_CSV, DKB_RES_FMT_JSON } dkb_res_format;
/* Print: TABLE aligned for people; CSV a header line then one line per row,
 * numbers in plain decimal, strings quoted when they contain , " or
 * newline (and the empty string as "", since NULL is an empty field);
 * NULL is "NULL" in TABLE, an empty field in CSV, null in JSON; JSON {"columns": [{"name","type"}...], "rows": [[...], ...]}
 * with numbers as JSON numbers (DECIMAL exact in plain notation; a FLOAT
 * that is not finite as null), dates as strings; columns carry "scale".
 * TABLE ends with "(N rows)". 0, or DKB_EIO when writing to f failed. */
int dkb_result_print(const dkb_result *r, dkb_res_format fmt, FILE *f);
/* The JSON object's members without the braces: `"columns": [...],
 * "rows": [...]`, for callers that add members of their own. */
int dkb_result_print_json_fields(const dkb_result *r, FILE *f);
/* Format one cell as text into buf (truncated to n - 1 bytes): numbers and
 * dates as in CSV, strings raw (not quoted), NULL as "". */
void dkb_result_cell_text(const dkb_result *r, int64_t row, int col, char *buf, size_t n);

/* Read a CSV written by dkb_result_print (or DuckDB's CSV with a header) as
 * a result with the column types of `like` (names must match, in order).
 * DECIMAL cells keep their written digits exactly: the column's scale is
 * the most digits written after the point in it (plain or exponent
 * notation). FLOAT columns take like's scale, and `out` like's ORDER BY.
 * Fields are RFC 4180 (quotes, "" inside quotes, newlines in quotes, CRLF
 * or LF); an empty unquoted field is NULL (DuckDB's convention). Errors (DKB_ENOENT, DKB_EIO, DKB_EPARSE, DKB_ENOMEM) name file,
 * line and column; *out is zeroed on failure and must be zeroed on entry. */
int dkb_result_read_csv(const char *path, const dkb_result *like, dkb_result *out, dkb_error *err);
/* Read an official TPC-H answer file (answers/qN.out of dbgen: a header
 * line, then one row per line, fields separated by '|' and padded with
 * spaces) as a result with like's columns, names and ORDER BY. Only the
 * number of header fields is checked (the file truncates names: "l",
 * "o_orderdat", "col6"). Numbers and dates are trimmed; strings lose
 * trailing spaces (compare with str_rtrim). Errors as dkb_result_read_csv. */
int dkb_result_read_official(const char *path, const dkb_result *like, dkb_result *out, dkb_error *err);

typedef struct dkb_compare_opts {
    double abs_tol, rel_tol;   /* FLOAT columns; e.g. 1e-9 and 1e-9 */
    double dec_rel_tol;        /* DECIMAL columns when the expected side is
                                * rounded (official answers); 0 = exact.
                                * When > 0 a DECIMAL (or INT against
                                * DECIMAL) passes within half a unit of the
                                * coarser scale or dec_rel_tol * |expected| */
    bool str_rtrim;            /* compare strings without trailing spaces */
} dkb_compare_opts;

/* 0 when got matches expected under opts (NULL: FLOAT within 1e-9 abs and
 * rel, DECIMAL exact), else DKB_EINVAL with the first difference in
 * err->msg. Columns must agree in number, name and type, except that INT,
 * DECIMAL and FLOAT compare with each other as numbers (exactly unless a
 * FLOAT is involved). NULL equals only NULL; a FLOAT NaN counts as NULL. The ORDER BY is got's (expected's if got has none). */
int dkb_result_compare(const dkb_result *got, const dkb_result *expected, const dkb_compare_opts *opts,
                       dkb_error *err);

#endif
