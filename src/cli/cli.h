/* cli.h: what the `dkb` subcommands share: the command table, exit codes,
 * error printing, option parsing helpers and the progress bar. */
#ifndef DKB_CLI_H
#define DKB_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "common/progress.h"
#include "dkb/error.h"
#include "dkb/schema.h"   // defines: DKB_TABLE_COUNT

/* Exit codes (stable; documented in the README). */
enum {
    DKB_EXIT_OK = 0,
    DKB_EXIT_FAIL = 1,   /* the work failed: I/O, corrupt or malformed data */
    DKB_EXIT_USAGE = 2,  /* bad command line */
};

/* Output formats for summaries and listings. */
typedef enum { CLI_FMT_TABLE = 0, CLI_FMT_JSON, CLI_FMT_CSV } cli_format;

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
    const char *summary;
} cli_command;

/* Print "dkb: <message>" to stderr; return DKB_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "dkb <cmd>: <err->msg or strerror>" to stderr; return DKB_EXIT_FAIL. */
int cli_fail(const char *cmd, int rc, const dkb_error *err);

/* Parse helpers: 0 on success, else print a usage error and return
 * DKB_EXIT_USAGE. `opt` names the option in the message. */
int cli_parse_int(const char *opt, const char *s, long min, long max, long *out);
int cli_parse_double(const char *opt, const char *s, double *out);
int cli_parse_format(const char *opt, const char *s, cli_format *out);
/* A byte count: a whole number with an optional suffix K, M, G or T
 * (powers of 1024; "64M", "16G", "1500000"), above 0 (--mem-budget). */
int cli_parse_size(const char *opt, const char *s, int64_t *out);
/* Tables from a comma-separated list ("lineitem,orders") as a bit mask. */
int cli_parse_tables(const char *opt, const char *s, unsigned *mask);
/* A column list for option opt: "queries" (the columns the 22 TPC-H
 * queries read) or column names ("l_shipdate,l_discount", case and blanks
 * ignored); keep[t] |= bit c per column c of table t, *tables |= bit t per
 * table with a column. 0, or a usage error naming the unknown column. */
int cli_parse_columns(const char *opt, const char *s, uint32_t keep[DKB_TABLE_COUNT], unsigned *tables);
/* Number of threads to use by default (online processors). */
int cli_default_threads(void);
/* "dkb ARGS..." as typed (for reports; call before getopt permutes argv);
 * malloc'ed, NULL when out of memory. */
char *cli_command_line(int argc, char **argv);
/* The one operand after the options, argv[optind]: 0, or print "CMD: missing
 * WHAT" (none) or "CMD: unexpected argument '...'" (more) and return
 * DKB_EXIT_USAGE. */
int cli_one_operand(const char *cmd, const char *what, int argc, char **argv);

/* Options that gen, import and export share: -j/--threads N, --force,
 * --summary FMT and -q/--quiet. Their getopt_long values: 'j', 'q' and these
 * (a command's own long-only options start at 256). */
enum { CLI_OPT_FORCE = 200, CLI_OPT_SUMMARY };
typedef struct cli_work_opts {
    int threads;         /* default cli_default_threads() */
    int force, quiet;
    cli_format summary;  /* default CLI_FMT_TABLE */
} cli_work_opts;
void cli_work_opts_init(cli_work_opts *w);
/* Take option c (argument arg), which a command's own options did not: 0
 * when it is one of the shared ones, else print the usage error (a bad
 * value, or "CMD: bad option") and return DKB_EXIT_USAGE. */
int cli_work_opt(cli_work_opts *w, const char *cmd, int c, const char *arg);

/* Progress bar on stderr, drawn only when stderr is a terminal and not quiet. */
typedef struct cli_bar {
    int enabled;
    double start, last_draw;
    char label[32];
} cli_bar;
void cli_bar_init(cli_bar *bar, int quiet);
/* The dkb_progress that draws into bar. */
dkb_progress cli_bar_progress(cli_bar *bar);
/* Erase the bar line (call before printing results). */
void cli_bar_done(cli_bar *bar);

/* JSON string output with escaping. */
void cli_json_string(FILE *f, const char *s);

struct cJSON;
/* item as JSON on f, on one line, spaced as the CLI's JSON always was:
 * ", " between elements and members, ": " after a key (so `"seed": 2`
 * reads the same with grep). Keys and leaves as cJSON prints them
 * (strings escaped; a Raw item as is, e.g. a number formatted "%.3f"). A
 * Raw item without a key inside an object (added with cJSON_AddItemToArray)
 * stands for members written by another printer: its text, which must read
 * `"k": v, ...`, goes in as is (dkb_result_print_json_fields). No newline
 * is added. 0, DKB_ENOMEM, or DKB_EIO when writing to f failed. */
int cli_json_print(FILE *f, const struct cJSON *item);

#endif
