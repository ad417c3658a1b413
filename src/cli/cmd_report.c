/* cmd_report.c: `dkb report RUNDIR...`: the paper's tables (per model x
 * target x mode: overall speedup, pass rate, fast_p, rounds used) from
 * `dkb optimize` runs, and a self-contained HTML report with a chart. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "optimize/summary.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb report RUNDIR... [--html FILE]\n"
            "\n"
            "Tables of one or more `dkb optimize` runs (Markdown on stdout): per model x\n"
            "target x mode the pass rate, fast_p (p = 1, 1.5, 2, 5), overall speedup,\n"
            "geometric mean and rounds used, then one row per query. Each query counts\n"
            "with its best valid candidate, else the baseline, scored as `dkb eval`\n"
            "scores (docs/harness.md, \"Scoring\").\n"
            "\n"
            "options:\n"
            "  --html FILE         also write a self-contained HTML report (inline SVG\n"
            "                      chart of per-query speedups; no network needed)\n"
            "  -h, --help          this help\n"
            "\n"
            "example:\n"
            "  dkb report runs/gpt-4.1 runs/qwen --html report.html\n");
}

int cmd_report(int argc, char **argv) {
    enum { O_HTML = 256 };
    static const struct option longopts[] = {{"html", required_argument, 0, O_HTML}, {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    const char *html = NULL;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_HTML: html = optarg; break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        case ':': return cli_usage_error("report: option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("report: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error("report: missing RUNDIR");
    FILE *h = NULL;
    if (html && !(h = fopen(html, "w"))) {
        fprintf(stderr, "dkb report: error: %s: cannot create the HTML report\n", html);
        return DKB_EXIT_FAIL;
    }
    dkb_error err = {0};
    int rc = dkb__opt_report((const char *const *)argv + optind, argc - optind, stdout, h, &err);
    if (h && fclose(h) && !rc) {
        fprintf(stderr, "dkb report: error: %s: writing the HTML report failed\n", html);
        return DKB_EXIT_FAIL;
    }
    if (rc) return cli_fail("report", rc, &err);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb report: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return DKB_EXIT_OK;
}
