/* cmd_report.c: `dkb report RUNDIR...`: the paper's tables (per model x
 * target x mode: overall speedup, pass rate, fast_p, rounds used) from
 * `dkb optimize` runs, and a self-contained HTML report with a chart. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/fsutil.h"   // defines: dkb__write_all, dkb__io_fail, dkb__path_kind
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

/* The HTML report's temporary file next to path (created up front, so that
 * an unwritable --html fails before any output). */
static int open_temp(const char *path, char *tmp, size_t n, int *fd, dkb_error *err) {
    if ((size_t)snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid()) >= n)
        return dkb_fail(err, DKB_EINVAL, "--html %s: path too long", path);
    *fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return *fd < 0 ? dkb__io_fail(err, path, "cannot create the HTML report") : 0;
}

/* Write buf to the temporary file and rename it to path; the temporary is
 * removed on any failure. */
static int finish_temp(int fd, const char *tmp, const char *path, const char *buf, size_t len, dkb_error *err) {
    int rc = dkb__write_all(fd, buf, len, tmp, err);
    if (close(fd) != 0 && !rc) rc = dkb__io_fail(err, tmp, "close failed");
    if (!rc && rename(tmp, path) != 0) rc = dkb__io_fail(err, path, "cannot replace the HTML report");
    if (rc) unlink(tmp);
    return rc;
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
    if (html && (dkb__path_kind(html) == DKB__PATH_DIR || dkb__path_kind(html) == DKB__PATH_EMPTY_DIR)) {
        fprintf(stderr, "dkb report: error: --html %s: is a directory, expected a file name\n", html);
        return DKB_EXIT_FAIL;
    }
    /* the HTML is built in memory and lands under its name only when the
     * whole report succeeded: a failed run leaves no half-written file and
     * keeps an older report in place */
    dkb_error err = {0};
    char tmp[4200];
    int fd = -1, rc = 0;
    if (html && (rc = open_temp(html, tmp, sizeof tmp, &fd, &err))) return cli_fail("report", rc, &err);
    char *page = NULL;
    size_t page_len = 0;
    FILE *h = NULL;
    if (html && !(h = open_memstream(&page, &page_len))) {
        close(fd);
        unlink(tmp);
        fprintf(stderr, "dkb report: error: %s: out of memory building the HTML report\n", html);
        return DKB_EXIT_FAIL;
    }
    rc = dkb__opt_report((const char *const *)argv + optind, argc - optind, stdout, h, &err);
    int html_bad = h && (ferror(h) | (fclose(h) != 0));
    if (html) {
        if (!rc && html_bad) rc = dkb_fail(&err, DKB_ENOMEM, "%s: out of memory building the HTML report", html);
        if (!rc) rc = finish_temp(fd, tmp, html, page, page_len, &err);
        else {
            close(fd);
            unlink(tmp);
        }
    }
    free(page);
    if (rc) return cli_fail("report", rc, &err);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb report: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return DKB_EXIT_OK;
}
