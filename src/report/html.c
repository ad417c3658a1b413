/* html.c: shared HTML report pieces (html.h): escaping, page head, and the
 * log-scale SVG speedup chart. */
#include "report/html.h"

#include <math.h>

void dkb__html_escape(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

void dkb__html_begin(FILE *f, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    dkb__html_escape(f, title);
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:2em;color:#222}\n"
          "table{border-collapse:collapse;margin:0.5em 0}\n"
          "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\n"
          "th{background:#eee}\n"
          "td.l,th.l{text-align:left}\n"
          "tr.fail td{background:#fdecea}\n"
          "tr.missing td{color:#888}\n"
          ".totals{font-size:1.2em;margin:0.5em 0}\n"
          ".totals b{margin-right:1.5em}\n"
          ".meta td{text-align:left;border:none;padding:1px 8px}\n"
          ".note{color:#666;font-size:0.9em}\n"
          "</style></head><body>\n<h1>",
          f);
    dkb__html_escape(f, title);
    fputs("</h1>\n", f);
}

void dkb__html_end(FILE *f) { fputs("</body></html>\n", f); }

static const char *fill_of(dkb_html_bar_kind k) {
    return k == DKB_HTML_BAR_COUNTED ? "#2a7" : k == DKB_HTML_BAR_SLOWER ? "#e90" : "#bbb";
}

static double drawn(const dkb_html_bar *b) {
    return isfinite(b->speedup) && b->speedup > 0 ? b->speedup : 1.0;
}

void dkb__html_speedup_chart(FILE *f, const dkb_html_bar *bars, int n) {
    /* the log2 range: 1/8x .. 64x, widened to whole powers covering every value */
    double lo = -3, hi = 6;
    for (int i = 0; i < n; i++) {
        double l = log2(drawn(&bars[i]));
        if (l < lo) lo = floor(l);
        if (l > hi) hi = ceil(l);
    }
    if (lo < -10) lo = -10;
    if (hi > 12) hi = 12;
    const int bar_h = 18, left = 140, width = 600, top = 10;
    const int height = top + (n > 0 ? n : 1) * bar_h + 40;
    fprintf(f, "<svg width=\"%d\" height=\"%d\" font-size=\"12\" font-family=\"sans-serif\" role=\"img\">\n",
            left + width + 120, height);
    const int axis_y = top + (n > 0 ? n : 1) * bar_h + 4;
    /* grid and axis labels at the powers of two */
    for (int p = (int)lo; p <= (int)hi; p++) {
        double x = left + (p - lo) / (hi - lo) * width;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e4e4e4\"/>\n", x, top - 4, x, axis_y);
        if (p >= 0) fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">%gx</text>\n", x,
                            axis_y + 14, ldexp(1.0, p));
        else fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">1/%gx</text>\n", x,
                     axis_y + 14, ldexp(1.0, -p));
    }
    const double x1 = left + (0 - lo) / (hi - lo) * width;
    int y = top;
    for (int i = 0; i < n; i++, y += bar_h) {
        const dkb_html_bar *b = &bars[i];
        double sp = drawn(b), l = log2(sp);
        if (l < lo) l = lo;
        if (l > hi) l = hi;
        double x = left + (l - lo) / (hi - lo) * width;
        double xa = x < x1 ? x : x1, wd = fabs(x - x1);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + 13);
        dkb__html_escape(f, b->label);
        fprintf(f, "</text>\n<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", xa, y + 2,
                wd < 2 ? 2 : wd, bar_h - 4, fill_of(b->kind));
        if (b->title) dkb__html_escape(f, b->title);
        else {
            dkb__html_escape(f, b->label);
            fprintf(f, ": %.2fx", sp);
        }
        fprintf(f, "</title></rect>\n<text x=\"%.1f\" y=\"%d\">", (x > x1 ? x : x1) + 4, y + 13);
        if (b->text) dkb__html_escape(f, b->text);
        else fprintf(f, "%.2fx", sp);
        fputs("</text>\n", f);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\" stroke-width=\"1.5\"/>\n", x1,
            top - 4, x1, axis_y);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">speedup (log scale; 1x = baseline)</text>\n</svg>\n",
            left + width / 2.0, axis_y + 32);
}
