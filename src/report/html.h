/* html.h: the pieces of a self-contained HTML report that `dkb report`
 * (src/optimize/summary.c) and `dkb bench` (src/bench/) share: escaping,
 * the page head with inline CSS, and an inline SVG bar chart of per-query
 * speedups on a log scale with the 1x line. Nothing is fetched when the
 * page is viewed: no scripts, fonts, images or URLs (the SVG is inline and
 * carries no xmlns, which HTML does not need). */
#ifndef DKB_REPORT_HTML_H
#define DKB_REPORT_HTML_H

#include <stdio.h>

/* s with < > & " escaped (s may be NULL: nothing written). */
void dkb__html_escape(FILE *f, const char *s);

/* "<!DOCTYPE html>...<body><h1>title</h1>": the page head with the shared
 * inline style sheet (tables, totals, notes); title escaped. */
void dkb__html_begin(FILE *f, const char *title);
/* "</body></html>". */
void dkb__html_end(FILE *f);

/* How a bar is coloured. */
typedef enum {
    DKB_HTML_BAR_COUNTED = 0,   /* a valid result that counts (green) */
    DKB_HTML_BAR_SLOWER,        /* valid but not counted, e.g. slower (orange) */
    DKB_HTML_BAR_NONE,          /* no valid result: a stub at 1x (grey) */
} dkb_html_bar_kind;

/* One bar of the chart. */
typedef struct dkb_html_bar {
    const char *label;       /* IN: left of the bar ("q06"), escaped */
    double speedup;          /* IN: drawn value; NaN or <= 0 draws 1x */
    dkb_html_bar_kind kind;  /* IN: colour */
    const char *text;        /* IN: right of the bar; NULL: "%.2fx" of speedup */
    const char *title;       /* IN: tooltip; NULL: label and value */
} dkb_html_bar;

/* An <svg> of n bars (n >= 0), one per row, on a log2 axis from 1/8x to 64x
 * (widened to cover the values, clamped to 1/1024x .. 4096x), with grid
 * lines and labels at the powers of two and the 1x line in black; bars
 * grow right of 1x for a speedup, left for a slowdown. */
void dkb__html_speedup_chart(FILE *f, const dkb_html_bar *bars, int n);

#endif
