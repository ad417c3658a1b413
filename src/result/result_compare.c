/* result_compare.c: compare a result with an expected one: shape, row
 * count, then rows in ORDER BY order with tied rows (and unordered results)
 * compared as sets; FLOAT within a tolerance, DECIMAL exactly or within
 * the rounding of an official answer. Reports the first difference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result_internal.h"

/* Sets of at most this many rows that fail the sorted pairing are matched
 * row by row (quadratic), so values within tolerance that sort apart
 * still pair up. */
#define GREEDY_MAX 4096

typedef struct ctx {
    const dkb_result *g, *e;
    dkb_compare_opts o;
    int keyorder[DKB__RES_MAX_COLS]; /* columns for canonical sorting: exact ones first */
    int nkeys;
    const dkb_sort_spec *order;      /* ORDER BY of the comparison */
    int norder;
} ctx;

static int is_num(dkb_res_type t) { return t == DKB_RES_INT || t == DKB_RES_DECIMAL || t == DKB_RES_FLOAT; }

/* A cell as an exact scaled integer (INT, DECIMAL). */
static __int128 exact(const dkb_res_column *c, int64_t i, int *scale) {
    *scale = c->type == DKB_RES_DECIMAL ? c->scale : 0;
    return c->type == DKB_RES_DECIMAL ? c->dec[i] : c->i64[i];
}

static long double as_ld(const dkb_res_column *c, int64_t i) {
    switch (c->type) {
    case DKB_RES_INT: return (long double)c->i64[i];
    case DKB_RES_DECIMAL: return (long double)c->dec[i] / powl(10.0L, c->scale);
    case DKB_RES_FLOAT: return c->f64[i];
    default: return 0;
    }
}

/* Length of s without trailing spaces when trimming. */
static size_t slen(const char *s, int rtrim) {
    size_t n = strlen(s);
    if (rtrim)
        while (n && s[n - 1] == ' ') n--;
    return n;
}

static int str_cmp(const char *a, const char *b, int rtrim) {
    size_t na = slen(a, rtrim), nb = slen(b, rtrim);
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* The cell is NULL, or a FLOAT NaN (how float paths write NULL). */
static int nullish(const dkb_res_column *c, int64_t i) {
    return (c->null && c->null[i]) || (c->type == DKB_RES_FLOAT && isnan(c->f64[i]));
}

/* Cell gi of got's column c equals cell ei of expected's under the options. */
static int cell_eq(const ctx *x, int64_t gi, int64_t ei, int c) {
    const dkb_res_column *gc = &x->g->cols[c], *ec = &x->e->cols[c];
    int gn = nullish(gc, gi), en = nullish(ec, ei);
    if (gn || en) return gn && en;
    if (gc->type == DKB_RES_STRING) return !str_cmp(gc->str[gi], ec->str[ei], x->o.str_rtrim);
    if (gc->type == DKB_RES_DATE) return gc->date[gi] == ec->date[ei];
    if (gc->type == DKB_RES_FLOAT || ec->type == DKB_RES_FLOAT) {
        long double gv = as_ld(gc, gi), ev = as_ld(ec, ei);
        if (isinf(gv) || isinf(ev)) return gv == ev;
        return fabsl(gv - ev) <= x->o.abs_tol + x->o.rel_tol * fabsl(ev);
    }
    int gs, es;
    __int128 gv = exact(gc, gi, &gs), ev = exact(ec, ei, &es);
    int s = gs > es ? gs : es;
    if (dkb__res_rescale(gv, gs, s, &gv) || dkb__res_rescale(ev, es, s, &ev))
        return x->o.dec_rel_tol > 0 && fabsl(as_ld(gc, gi) - as_ld(ec, ei)) <= x->o.dec_rel_tol * fabsl(as_ld(ec, ei));
    if (gv == ev) return 1;
    if (x->o.dec_rel_tol <= 0) return 0;
    __int128 diff = gv > ev ? gv - ev : ev - gv;
    int coarse = gs < es ? gs : es;
    /* half a unit of the coarser scale, in units of 10^-s */
    long double half = s > coarse ? 0.5L * powl(10.0L, s - coarse) : 0;
    long double absdiff = (long double)diff, absev = fabsl((long double)ev);
    return absdiff <= half || absdiff <= x->o.dec_rel_tol * absev;
}

/* Canonical order of two rows of one result (r is got or expected): the
 * same order on values in both, so equal sets sort alike. */
static int row_cmp(const ctx *x, const dkb_result *r, int64_t a, int64_t b) {
    for (int k = 0; k < x->nkeys; k++) {
        const dkb_res_column *c = &r->cols[x->keyorder[k]];
        int an = nullish(c, a), bn = nullish(c, b), d = 0;
        if (an || bn) { /* NULLs first */
            if (an != bn) return an ? -1 : 1;
            continue;
        }
        switch (c->type) {
        case DKB_RES_INT: d = (c->i64[a] > c->i64[b]) - (c->i64[a] < c->i64[b]); break;
        case DKB_RES_DECIMAL: d = (c->dec[a] > c->dec[b]) - (c->dec[a] < c->dec[b]); break;
        case DKB_RES_DATE: d = (c->date[a] > c->date[b]) - (c->date[a] < c->date[b]); break;
        case DKB_RES_STRING: d = str_cmp(c->str[a], c->str[b], x->o.str_rtrim); break;
        case DKB_RES_FLOAT: d = (c->f64[a] > c->f64[b]) - (c->f64[a] < c->f64[b]); break;
        }
        if (d) return d;
    }
    return 0;
}

/* Stable merge sort of idx[0..n) by row_cmp (tmp: n scratch entries). */
static void sort_rows(const ctx *x, const dkb_result *r, int64_t *idx, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t h = n / 2;
    sort_rows(x, r, idx, tmp, h);
    sort_rows(x, r, idx + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = row_cmp(x, r, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* First column where got row gi and expected row ei differ, or -1. */
static int row_diff(const ctx *x, int64_t gi, int64_t ei) {
    for (int c = 0; c < x->e->ncols; c++)
        if (!cell_eq(x, gi, ei, c)) return c;
    return -1;
}

/* A cell for a message: strings quoted, FLOATs with every digit they need. */
static void shown(const dkb_result *r, int64_t i, int c, char *buf, size_t n) {
    const dkb_res_column *col = &r->cols[c];
    char tmp[DKB__RES_CELL_BUF];
    if (dkb_result_is_null(r, i, c)) snprintf(buf, n, "NULL");
    else if (col->type == DKB_RES_FLOAT) {
        /* the shortest text that reads back as the same double */
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, n, "%.*g", digits, col->f64[i]);
            if (strtod(buf, NULL) == col->f64[i]) break;
        }
    }
    else if (col->type == DKB_RES_STRING)
        snprintf(buf, n, "'%.60s%s'", col->str[i], strlen(col->str[i]) > 60 ? "..." : "");
    else snprintf(buf, n, "%s", dkb__res_cell(r, i, c, tmp));
}

static int report(const ctx *x, int64_t gi, int64_t ei, int c, dkb_error *err) {
    char gv[96], ev[96];
    shown(x->g, gi, c, gv, sizeof gv);
    shown(x->e, ei, c, ev, sizeof ev);
    return dkb_fail(err, DKB_EINVAL, "row %lld, column %s: got %s, expected %s", (long long)ei + 1,
                    x->e->cols[c].name, gv, ev);
}

/* Compare got rows [s, t) with expected rows [s, t) as sets. */
static int compare_set(const ctx *x, int64_t s, int64_t t, int64_t *scratch, dkb_error *err) {
    int64_t n = t - s, *gi = scratch, *ei = scratch + n, *tmp = scratch + 2 * n;
    for (int64_t i = 0; i < n; i++) gi[i] = ei[i] = s + i;
    sort_rows(x, x->g, gi, tmp, n);
    sort_rows(x, x->e, ei, tmp, n);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (row_diff(x, gi[i], ei[i]) >= 0) bad = i;
    if (bad < 0) return 0;
    if (n <= GREEDY_MAX) {
        /* Values within tolerance may sort apart: match row by row. */
        char *used = calloc((size_t)n, 1);
        if (!used) return dkb_fail(err, DKB_ENOMEM, "out of memory comparing results");
        int64_t unmatched = -1, partner = -1;
        for (int64_t i = 0; i < n && unmatched < 0; i++) {
            int64_t j = 0;
            while (j < n && (used[j] || row_diff(x, gi[j], s + i) >= 0)) j++;
            if (j < n) used[j] = 1;
            else unmatched = s + i; /* the first in expected's order */
        }
        /* Show the difference against the closest got row left unmatched
         * (fewest differing columns; it differs: it was tried and rejected). */
        for (int64_t j = 0, best = INT64_MAX; unmatched >= 0 && j < n; j++) {
            if (used[j]) continue;
            int64_t nd = 0;
            for (int c = 0; c < x->e->ncols; c++) nd += !cell_eq(x, gi[j], unmatched, c);
            if (nd < best) best = nd, partner = j;
        }
        free(used);
        if (unmatched < 0) return 0;
        return report(x, gi[partner], unmatched, row_diff(x, gi[partner], unmatched), err);
    }
    return report(x, gi[bad], ei[bad], row_diff(x, gi[bad], ei[bad]), err);
}

/* Expected rows a and b tie on every ORDER BY key. */
static int order_tie(const ctx *x, int64_t a, int64_t b) {
    ctx self = *x;
    self.g = x->e;
    for (int k = 0; k < x->norder; k++)
        if (!cell_eq(&self, a, b, x->order[k].column)) return 0;
    return 1;
}

static int check_shape(const dkb_result *g, const dkb_result *e, dkb_error *err) {
    if (g->ncols != e->ncols) return dkb_fail(err, DKB_EINVAL, "got %d columns, expected %d", g->ncols, e->ncols);
    for (int c = 0; c < g->ncols; c++) {
        const dkb_res_column *gc = &g->cols[c], *ec = &e->cols[c];
        if (strcmp(gc->name, ec->name))
            return dkb_fail(err, DKB_EINVAL, "column %d is named '%s', expected '%s'", c + 1, gc->name, ec->name);
        if (gc->type != ec->type && !(is_num(gc->type) && is_num(ec->type)))
            return dkb_fail(err, DKB_EINVAL, "column %s is %s, expected %s", gc->name, dkb_res_type_name(gc->type),
                            dkb_res_type_name(ec->type));
    }
    return 0;
}

int dkb_result_compare(const dkb_result *got, const dkb_result *expected, const dkb_compare_opts *opts,
                       dkb_error *err) {
    static const dkb_compare_opts defaults = {1e-9, 1e-9, 0, false};
    if (!got || !expected) return dkb_fail(err, DKB_EINVAL, "compare: missing result");
    int rc = check_shape(got, expected, err);
    if (rc) return rc;
    if (got->nrows != expected->nrows)
        return dkb_fail(err, DKB_EINVAL, "got %lld row%s, expected %lld", (long long)got->nrows,
                        got->nrows == 1 ? "" : "s", (long long)expected->nrows);
    ctx x = {.g = got, .e = expected, .o = opts ? *opts : defaults};
    x.order = got->norder ? got->order : expected->order;
    x.norder = got->norder ? got->norder : expected->norder;
    for (int k = 0; k < x.norder; k++)
        if (x.order[k].column < 0 || x.order[k].column >= got->ncols)
            return dkb_fail(err, DKB_EINVAL, "compare: ORDER BY key %d names no column", k + 1);
    /* canonical sort keys: exact columns, then rounded DECIMALs, then FLOATs */
    for (int pass = 0; pass < 3; pass++)
        for (int c = 0; c < got->ncols; c++) {
            dkb_res_type gt = got->cols[c].type, et = expected->cols[c].type;
            int fl = gt == DKB_RES_FLOAT || et == DKB_RES_FLOAT;
            int rounded = !fl && x.o.dec_rel_tol > 0 && (gt == DKB_RES_DECIMAL || et == DKB_RES_DECIMAL);
            if ((pass == 0 && !fl && !rounded) || (pass == 1 && rounded) || (pass == 2 && fl)) x.keyorder[x.nkeys++] = c;
        }
    int64_t n = expected->nrows;
    int64_t *scratch = malloc((size_t)(n ? n : 1) * 3 * sizeof *scratch);
    if (!scratch) return dkb_fail(err, DKB_ENOMEM, "out of memory comparing results");
    if (!x.norder) {
        rc = compare_set(&x, 0, n, scratch, err);
    } else {
        for (int64_t s = 0, t; s < n && !rc; s = t) {
            for (t = s + 1; t < n && order_tie(&x, t - 1, t); t++) {}
            if (t - s == 1) {
                int c = row_diff(&x, s, s);
                if (c >= 0) rc = report(&x, s, s, c, err);
            } else {
                rc = compare_set(&x, s, t, scratch, err);
            }
        }
    }
    free(scratch);
    return rc;
}
