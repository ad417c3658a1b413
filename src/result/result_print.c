/* result_print.c: results as text: one cell, an aligned table for people,
 * CSV (RFC 4180) and JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/date.h"
#include "result/result_internal.h"

const char *dkb__res_cell(const dkb_result *r, int64_t row, int col, char *buf) {
    const dkb_res_column *c = &r->cols[col];
    if (c->null && c->null[row]) {
        buf[0] = 0;
        return buf;
    }
    switch (c->type) {
    case DKB_RES_INT: snprintf(buf, DKB__RES_CELL_BUF, "%lld", (long long)c->i64[row]); break;
    case DKB_RES_DECIMAL: dkb__res_dec_text(c->dec[row], c->scale, buf, DKB__RES_CELL_BUF); break;
    case DKB_RES_FLOAT: dkb__res_float_text(c->f64[row], c->scale ? c->scale : 6, buf, DKB__RES_CELL_BUF); break;
    case DKB_RES_DATE: {
        int y, m, d;
        dkb__civil_from_days(c->date[row], &y, &m, &d);
        snprintf(buf, DKB__RES_CELL_BUF, "%04d-%02d-%02d", y, m, d);
        break;
    }
    case DKB_RES_STRING: return c->str[row];
    }
    return buf;
}

void dkb_result_cell_text(const dkb_result *r, int64_t row, int col, char *buf, size_t n) {
    if (!buf || !n) return;
    if (!r || col < 0 || col >= r->ncols || row < 0 || row >= r->nrows) {
        buf[0] = 0;
        return;
    }
    char tmp[DKB__RES_CELL_BUF];
    snprintf(buf, n, "%s", dkb__res_cell(r, row, col, tmp));
}

/* A cell for CSV and JSON: as dkb__res_cell, but a FLOAT with every digit
 * it needs (shortest round trip, plain decimal), as the goldens write it;
 * the column's scale only sets how many decimals the table shows. */
static const char *data_cell(const dkb_result *r, int64_t row, int col, char *buf) {
    const dkb_res_column *c = &r->cols[col];
    if (c->type == DKB_RES_FLOAT && !(c->null && c->null[row])) {
        dkb__res_float_plain(c->f64[row], buf, DKB__RES_CELL_BUF);
        return buf;
    }
    return dkb__res_cell(r, row, col, buf);
}

/* ---- CSV ---- */

static void csv_field(FILE *f, const char *s, int is_string) {
    if (is_string && (!*s || strpbrk(s, ",\"\r\n"))) {
        /* quoted: empty strings too, so they differ from a missing value */
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

static void print_csv(const dkb_result *r, FILE *f) {
    for (int c = 0; c < r->ncols; c++) {
        if (c) fputc(',', f);
        csv_field(f, r->cols[c].name, 1);
    }
    fputc('\n', f);
    char buf[DKB__RES_CELL_BUF];
    for (int64_t i = 0; i < r->nrows; i++) {
        for (int c = 0; c < r->ncols; c++) {
            if (c) fputc(',', f);
            if (!dkb_result_is_null(r, i, c)) /* NULL: an empty field */
                csv_field(f, data_cell(r, i, c, buf), r->cols[c].type == DKB_RES_STRING);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ---- */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (ch < 0x20 || ch == 0x7f) fprintf(f, "\\u%04x", ch);
            else fputc(ch, f);
        }
    }
    fputc('"', f);
}

int dkb_result_print_json_fields(const dkb_result *r, FILE *f) {
    if (!r || !f) return DKB_EINVAL;
    fputs("\"columns\": [", f);
    for (int c = 0; c < r->ncols; c++) {
        fputs(c ? ", {\"name\": " : "{\"name\": ", f);
        json_string(f, r->cols[c].name);
        fprintf(f, ", \"type\": \"%s\"", dkb_res_type_name(r->cols[c].type));
        if (r->cols[c].type == DKB_RES_DECIMAL || r->cols[c].type == DKB_RES_FLOAT)
            fprintf(f, ", \"scale\": %d", r->cols[c].scale);
        fputc('}', f);
    }
    fputs("], \"rows\": [", f);
    char buf[DKB__RES_CELL_BUF];
    for (int64_t i = 0; i < r->nrows; i++) {
        fputs(i ? ",\n  [" : "\n  [", f);
        for (int c = 0; c < r->ncols; c++) {
            if (c) fputs(", ", f);
            const char *text = data_cell(r, i, c, buf);
            dkb_res_type t = r->cols[c].type;
            if (dkb_result_is_null(r, i, c)) fputs("null", f);
            else if (t == DKB_RES_STRING || t == DKB_RES_DATE) json_string(f, text);
            else if (t == DKB_RES_FLOAT && !isfinite(r->cols[c].f64[i])) fputs("null", f);
            else fputs(text, f);
        }
        fputc(']', f);
    }
    fputs(r->nrows ? "\n]" : "]", f);
    return ferror(f) ? DKB_EIO : 0;
}

/* ---- aligned table ---- */

static int right_aligned(dkb_res_type t) { return t == DKB_RES_INT || t == DKB_RES_DECIMAL || t == DKB_RES_FLOAT; }

static int print_table(const dkb_result *r, FILE *f) {
    size_t *w = calloc((size_t)r->ncols, sizeof *w);
    if (!w) return DKB_ENOMEM;
    char buf[DKB__RES_CELL_BUF];
    for (int c = 0; c < r->ncols; c++) {
        w[c] = strlen(r->cols[c].name);
        for (int64_t i = 0; i < r->nrows; i++) {
            size_t len = dkb_result_is_null(r, i, c) ? 4 : strlen(dkb__res_cell(r, i, c, buf));
            if (len > w[c]) w[c] = len;
        }
    }
    for (int c = 0; c < r->ncols; c++) {
        if (right_aligned(r->cols[c].type)) fprintf(f, "%s%*s", c ? " | " : "", (int)w[c], r->cols[c].name);
        else fprintf(f, "%s%-*s", c ? " | " : "", c == r->ncols - 1 ? 0 : (int)w[c], r->cols[c].name);
    }
    fputc('\n', f);
    for (int c = 0; c < r->ncols; c++) {
        fputs(c ? "-+-" : "", f);
        for (size_t k = 0; k < w[c]; k++) fputc('-', f);
    }
    fputc('\n', f);
    for (int64_t i = 0; i < r->nrows; i++) {
        for (int c = 0; c < r->ncols; c++) {
            const char *text = dkb_result_is_null(r, i, c) ? "NULL" : dkb__res_cell(r, i, c, buf);
            int last = c == r->ncols - 1;
            if (right_aligned(r->cols[c].type)) fprintf(f, "%s%*s", c ? " | " : "", (int)w[c], text);
            else fprintf(f, "%s%-*s", c ? " | " : "", last ? 0 : (int)w[c], text);
        }
        fputc('\n', f);
    }
    fprintf(f, "(%lld row%s)\n", (long long)r->nrows, r->nrows == 1 ? "" : "s");
    free(w);
    return 0;
}

int dkb_result_print(const dkb_result *r, dkb_res_format fmt, FILE *f) {
    if (!r || !f) return DKB_EINVAL;
    int rc = 0;
    switch (fmt) {
    case DKB_RES_FMT_TABLE: rc = print_table(r, f); break;
    case DKB_RES_FMT_CSV: print_csv(r, f); break;
    case DKB_RES_FMT_JSON:
        fputc('{', f);
        rc = dkb_result_print_json_fields(r, f);
        fputs("}\n", f);
        break;
    default: return DKB_EINVAL;
    }
    if (!rc && (fflush(f) || ferror(f))) rc = DKB_EIO;
    return rc;
}
