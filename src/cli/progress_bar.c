/* progress_bar.c: a one-line progress bar on stderr for long commands. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/timing.h"  // defines: dkb__now_s

void cli_bar_init(cli_bar *bar, int quiet) {
    memset(bar, 0, sizeof *bar);
    bar->enabled = !quiet && isatty(STDERR_FILENO);
}

static void draw(void *ctx, const char *what, uint64_t done, uint64_t total) {
    cli_bar *bar = ctx;
    double t = dkb__now_s();
    if (strncmp(bar->label, what, sizeof bar->label - 1) != 0) {
        snprintf(bar->label, sizeof bar->label, "%s", what);
        bar->start = t;
        bar->last_draw = 0;
    }
    if (done < total && t - bar->last_draw < 0.1) return;
    bar->last_draw = t;
    double frac = total ? (double)done / (double)total : 1.0;
    enum { WIDTH = 30 };
    char cells[WIDTH + 1];
    int full = (int)(frac * WIDTH);
    for (int i = 0; i < WIDTH; i++) cells[i] = i < full ? '#' : '.';
    cells[WIDTH] = '\0';
    double el = t - bar->start, eta = frac > 0 ? el / frac - el : 0;
    fprintf(stderr, "\r\033[K%-10s [%s] %5.1f%%  %llu/%llu  %.1fs elapsed, ~%.0fs left", what,
            cells, 100 * frac, (unsigned long long)done, (unsigned long long)total, el, eta);
    fflush(stderr);
}

dkb_progress cli_bar_progress(cli_bar *bar) {
    dkb_progress p = {bar->enabled ? draw : NULL, bar};
    return p;
}

void cli_bar_done(cli_bar *bar) {
    if (bar->enabled) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}
