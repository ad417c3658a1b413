/* result.c: building result tables: columns, rows, cell setters, ORDER BY,
 * and freeing. Setter misuse (bad row, column or type) is ignored and
 * counted in the result, so a plan bug surfaces as an error, not a crash. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/result.h"
#include "result/result_internal.h"

/* Empty cells point here; never freed, never written. */
static char empty_string[1];

const char *dkb_res_type_name(dkb_res_type t) {
    switch (t) {
    case DKB_RES_INT: return "INT";
    case DKB_RES_DECIMAL: return "DECIMAL";
    case DKB_RES_FLOAT: return "FLOAT";
    case DKB_RES_DATE: return "DATE";
    case DKB_RES_STRING: return "STRING";
    }
    return "?";
}

size_t dkb__res_elem_size(dkb_res_type t) {
    switch (t) {
    case DKB_RES_INT: return sizeof(int64_t);
    case DKB_RES_DECIMAL: return sizeof(__int128);
    case DKB_RES_FLOAT: return sizeof(double);
    case DKB_RES_DATE: return sizeof(int32_t);
    case DKB_RES_STRING: return sizeof(char *);
    }
    return 0;
}

/* The value array of a column, whatever its type. */
static void **column_array(dkb_res_column *c) {
    switch (c->type) {
    case DKB_RES_INT: return (void **)&c->i64;
    case DKB_RES_DECIMAL: return (void **)&c->dec;
    case DKB_RES_FLOAT: return (void **)&c->f64;
    case DKB_RES_DATE: return (void **)&c->date;
    case DKB_RES_STRING: return (void **)&c->str;
    }
    return NULL;
}

int dkb_result_init(dkb_result *r, int ncols, const char *const *names, const dkb_res_type *types,
                    const int *scales) {
    if (!r) return DKB_EINVAL;
    memset(r, 0, sizeof *r);
    if (ncols < 1 || ncols > DKB__RES_MAX_COLS || !names || !types) return DKB_EINVAL;
    for (int i = 0; i < ncols; i++) {
        if (!names[i] || (unsigned)types[i] > DKB_RES_STRING) return DKB_EINVAL;
        if (scales && (scales[i] < 0 || scales[i] > DKB__RES_MAX_SCALE)) return DKB_EINVAL;
    }
    r->cols = calloc((size_t)ncols, sizeof *r->cols);
    if (!r->cols) return DKB_ENOMEM;
    r->ncols = ncols;
    for (int i = 0; i < ncols; i++) {
        r->cols[i].type = types[i];
        r->cols[i].scale = scales ? scales[i] : 0;
        r->cols[i].name = strdup(names[i]);
        if (!r->cols[i].name) {
            dkb_result_free(r);
            return DKB_ENOMEM;
        }
    }
    return 0;
}

void dkb_result_free(dkb_result *r) {
    if (!r) return;
    for (int c = 0; c < r->ncols && r->cols; c++) {
        dkb_res_column *col = &r->cols[c];
        if (col->type == DKB_RES_STRING && col->str)
            for (int64_t i = 0; i < r->nrows; i++)
                if (col->str[i] != empty_string) free(col->str[i]);
        free(col->name);
        free(col->null);
        free(*column_array(col));
    }
    free(r->cols);
    memset(r, 0, sizeof *r);
}

/* Record an ignored setter call (the first one's description is kept). */
static void bad_call(dkb_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_call(dkb_result *r, const char *fmt, ...) {
    if (r->nbad++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->bad, sizeof r->bad, fmt, ap);
        va_end(ap);
    }
}

void dkb_result_set_order(dkb_result *r, int n, const dkb_sort_spec *keys) {
    if (!r) return;
    if (n < 0 || n > 8 || (n && !keys)) {
        bad_call(r, "set_order with %d keys (at most 8)", n);
        return;
    }
    for (int i = 0; i < n; i++)
        if (keys[i].column < 0 || keys[i].column >= r->ncols) {
            bad_call(r, "set_order key %d: no column %d", i, keys[i].column);
            return;
        }
    r->norder = n;
    for (int i = 0; i < n; i++) r->order[i] = keys[i];
}

int64_t dkb_result_add_row(dkb_result *r) {
    if (!r || !r->cols) return -1;
    if (r->nrows == r->cap) {
        int64_t cap = r->cap ? r->cap * 2 : 16;
        for (int c = 0; c < r->ncols; c++) {
            void **a = column_array(&r->cols[c]);
            void *p = realloc(*a, (size_t)cap * dkb__res_elem_size(r->cols[c].type));
            if (!p) return -1; /* columns grown so far keep their larger arrays: harmless */
            *a = p;
            if (r->cols[c].null) {
                uint8_t *n = realloc(r->cols[c].null, (size_t)cap);
                if (!n) return -1;
                r->cols[c].null = n;
            }
        }
        r->cap = cap;
    }
    int64_t row = r->nrows++;
    for (int c = 0; c < r->ncols; c++) {
        dkb_res_column *col = &r->cols[c];
        switch (col->type) {
        case DKB_RES_INT: col->i64[row] = 0; break;
        case DKB_RES_DECIMAL: col->dec[row] = 0; break;
        case DKB_RES_FLOAT: col->f64[row] = 0; break;
        case DKB_RES_DATE: col->date[row] = 0; break;
        case DKB_RES_STRING: col->str[row] = empty_string; break;
        }
        if (col->null) col->null[row] = 0;
    }
    return row;
}

/* The column to set, or NULL (counted as a bad call) when row, col or the
 * type do not fit. */
static dkb_res_column *cell(dkb_result *r, int64_t row, int col, dkb_res_type type, const char *setter) {
    if (!r) return NULL;
    if (col < 0 || col >= r->ncols) {
        bad_call(r, "%s: no column %d (%d columns)", setter, col, r->ncols);
        return NULL;
    }
    if (row < 0 || row >= r->nrows) {
        bad_call(r, "%s: no row %lld (%lld rows), column %s", setter, (long long)row, (long long)r->nrows,
                 r->cols[col].name);
        return NULL;
    }
    if (r->cols[col].type != type) {
        bad_call(r, "%s on %s column %s", setter, dkb_res_type_name(r->cols[col].type), r->cols[col].name);
        return NULL;
    }
    if (r->cols[col].null) r->cols[col].null[row] = 0;
    return &r->cols[col];
}

void dkb_result_set_int(dkb_result *r, int64_t row, int col, int64_t v) {
    dkb_res_column *c = cell(r, row, col, DKB_RES_INT, "set_int");
    if (c) c->i64[row] = v;
}

void dkb_result_set_dec(dkb_result *r, int64_t row, int col, __int128 v) {
    dkb_res_column *c = cell(r, row, col, DKB_RES_DECIMAL, "set_dec");
    if (c) c->dec[row] = v;
}

void dkb_result_set_float(dkb_result *r, int64_t row, int col, double v) {
    dkb_res_column *c = cell(r, row, col, DKB_RES_FLOAT, "set_float");
    if (c) c->f64[row] = v;
}

void dkb_result_set_date(dkb_result *r, int64_t row, int col, int32_t days) {
    dkb_res_column *c = cell(r, row, col, DKB_RES_DATE, "set_date");
    if (c) c->date[row] = days;
}

int dkb_result_set_str(dkb_result *r, int64_t row, int col, const char *s, size_t len) {
    dkb_res_column *c = cell(r, row, col, DKB_RES_STRING, "set_str");
    if (!c) return DKB_EINVAL;
    if (!s) len = 0;
    char *copy = empty_string;
    if (len) {
        copy = malloc(len + 1);
        if (!copy) return DKB_ENOMEM;
        memcpy(copy, s, len);
        copy[len] = 0;
    }
    if (c->str[row] != empty_string) free(c->str[row]);
    c->str[row] = copy;
    return 0;
}

int dkb_result_set_null(dkb_result *r, int64_t row, int col) {
    if (!r) return DKB_EINVAL;
    if (col < 0 || col >= r->ncols || row < 0 || row >= r->nrows) {
        bad_call(r, "set_null: no cell (%lld, %d)", (long long)row, col);
        return DKB_EINVAL;
    }
    dkb_res_column *c = &r->cols[col];
    if (!c->null && !(c->null = calloc((size_t)r->cap, 1))) return DKB_ENOMEM;
    c->null[row] = 1;
    return 0;
}

bool dkb_result_is_null(const dkb_result *r, int64_t row, int col) {
    return r && col >= 0 && col < r->ncols && row >= 0 && row < r->nrows && r->cols[col].null &&
           r->cols[col].null[row];
}
