/* result_internal.h: what the result files share: limits, cell text, and
 * exact parsers for decimals and dates (also used by query parameters). */
#ifndef DKB_RESULT_INTERNAL_H
#define DKB_RESULT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/result.h"

#define DKB__RES_MAX_COLS 64
#define DKB__RES_MAX_SCALE 30
/* Enough for any non-string cell: a FLOAT of 1e308 at 30 digits. */
#define DKB__RES_CELL_BUF 352

size_t dkb__res_elem_size(dkb_res_type t);

/* The text of a cell: a string cell's own bytes, else formatted into buf
 * (DKB__RES_CELL_BUF bytes) and buf returned. */
const char *dkb__res_cell(const dkb_result *r, int64_t row, int col, char *buf);
/* v at `scale` digits in plain notation ("-0.05", "12", "0.0001000000"). */
void dkb__res_dec_text(__int128 v, int scale, char *buf, size_t n);
/* A double with `digits` decimals (%.*f), "nan", "inf" or "-inf"; never
 * "-0.00" (negative zero and tiny negatives print without the sign). */
void dkb__res_float_text(double v, int digits, char *buf, size_t n);
/* A double in plain decimal with the shortest digits that read back as the
 * same double (DuckDB's text: 25.575154611454693, 1e21 as
 * 1000000000000000000000, 1e-7 as 0.0000001, 3.0 as 3), never an exponent;
 * zero as "0", and "nan", "inf", "-inf". CSV and JSON print FLOATs so. */
void dkb__res_float_plain(double v, char *buf, size_t n);

/* Parse s[0, len) as an exact decimal: optional sign, digits with an
 * optional point (".5", "5.", "1.25"), optional exponent (e-3, E+10).
 * *v at *scale digits (the written digits: "1.50" gives 150 at scale 2,
 * "1.5e3" 1500 at scale 0). 0, or -1 when it is not a number or needs more
 * than 38 digits or a scale above max_scale. */
int dkb__res_parse_dec(const char *s, size_t len, int max_scale, __int128 *v, int *scale);
/* Parse s[0, len) as YYYY-MM-DD (a real date, year 1000..9999). 0 or -1. */
int dkb__res_parse_date(const char *s, size_t len, int32_t *days);
/* Parse s[0, len) as a decimal integer with optional sign. 0 or -1. */
int dkb__res_parse_int(const char *s, size_t len, int64_t *v);
/* v * 10^(to - from) for to >= from; 0, or -1 on overflow. */
int dkb__res_rescale(__int128 v, int from, int to, __int128 *out);

/* Text reader shared by the CSV and official readers: builds `out` with
 * like's columns and converts one row of field texts at a time. A DECIMAL
 * column's scale grows to the most digits written in it (earlier cells are
 * rescaled), so every written value is kept exactly. */
typedef struct dkb__res_builder {
    dkb_result *out;
    const char *path;
    int str_rtrim; /* strings lose trailing spaces (official answers) */
    int trim;      /* numbers and dates lose surrounding spaces */
    int nulls;     /* an empty field that was not quoted is NULL */
} dkb__res_builder;
/* Start out (zeroed by the caller) as like's columns: names, types, FLOAT
 * scales, ORDER BY; DECIMAL scales start at 0. */
int dkb__res_builder_init(dkb__res_builder *b, dkb_result *out, const dkb_result *like, const char *path,
                          dkb_error *err);
/* Append one row from fields[0..ncols) (lengths len[], quoted[] 1 for a
 * field that was quoted, or NULL); line for errors. */
int dkb__res_builder_row(dkb__res_builder *b, const char *const *fields, const size_t *len,
                         const unsigned char *quoted, int64_t line, dkb_error *err);
/* The whole of file path, NUL-terminated, malloc'ed; *size its length. */
int dkb__res_read_file(const char *path, char **data, size_t *size, dkb_error *err);
/* How both readers start: check path and out ("READER: no path or output"),
 * zero out, read the whole file into *data (free it) and start b as like's
 * columns. 0, or an error with nothing left to free. */
int dkb__res_reader_start(const char *reader, const char *path, const dkb_result *like, dkb_result *out,
                          dkb__res_builder *b, char **data, size_t *size, dkb_error *err);

#endif
