/* cli_util.c: error printing, option parsing and JSON output shared by the
 * subcommands. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "dkb/schema.h"
#include "queries/referenced.h"   // defines: dkb__referenced_columns, dkb__keep_column

int cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("dkb: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return DKB_EXIT_USAGE;
}

int cli_fail(const char *cmd, int rc, const dkb_error *err) {
    const char *msg = err && err->code && err->msg[0] ? err->msg : dkb_strerror(rc);
    fprintf(stderr, "dkb %s: error: %s\n", cmd, msg);
    return DKB_EXIT_FAIL;
}

int cli_parse_int(const char *opt, const char *s, long min, long max, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return cli_usage_error("%s %s: expected an integer from %ld to %ld", opt, s, min, max);
    *out = v;
    return 0;
}

int cli_parse_double(const char *opt, const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return cli_usage_error("%s %s: not a number", opt, s);
    *out = v;
    return 0;
}

int cli_parse_size(const char *opt, const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int shift = 0;
    if (*end && !end[1]) {
        const char *units = "KMGT", *u = strchr(units, *end == 'k' ? 'K' : *end);
        if (u && *u) shift = 10 * (int)(u - units + 1), end++;
    }
    if (!*s || !isdigit((unsigned char)*s) || *end || errno || v <= 0 || (shift && v > (INT64_MAX >> shift)))
        return cli_usage_error("%s %s: expected a size above 0, bytes or with K, M, G or T (e.g. 64M, 16G)", opt, s);
    *out = (int64_t)v << shift;
    return 0;
}

int cli_parse_format(const char *opt, const char *s, cli_format *out) {
    if (!strcmp(s, "table")) *out = CLI_FMT_TABLE;
    else if (!strcmp(s, "json")) *out = CLI_FMT_JSON;
    else if (!strcmp(s, "csv")) *out = CLI_FMT_CSV;
    else return cli_usage_error("%s %s: expected table, json or csv", opt, s);
    return 0;
}

/* A name of a comma-separated list, matched ignoring case and surrounding
 * blanks ("LINEITEM, orders"): tok trimmed and lower-cased in place. */
static char *name_token(char *tok) {
    while (isspace((unsigned char)*tok)) tok++;
    size_t n = strlen(tok);
    while (n > 0 && isspace((unsigned char)tok[n - 1])) tok[--n] = '\0';
    for (char *c = tok; *c; c++) *c = (char)tolower((unsigned char)*c);
    return tok;
}

int cli_parse_tables(const char *opt, const char *s, unsigned *mask) {
    char buf[256];
    if (strlen(s) >= sizeof buf) return cli_usage_error("%s: list too long", opt);
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!*(tok = name_token(tok))) continue;
        const dkb_table_def *t = dkb_table_def_find(tok);
        if (!t)
            return cli_usage_error("%s %s: unknown table '%s' (tables: part, partsupp, supplier, "
                                   "customer, orders, lineitem, nation, region)", opt, s, tok);
        *mask |= 1u << t->id;
    }
    if (!*mask) return cli_usage_error("%s: no table named", opt);
    return 0;
}

int cli_parse_columns(const char *opt, const char *s, uint32_t keep[DKB_TABLE_COUNT], unsigned *tables) {
    char buf[2048];
    if (strlen(s) >= sizeof buf) return cli_usage_error("%s: list too long", opt);
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!*(tok = name_token(tok))) continue;
        if (!strcmp(tok, "queries")) {
            dkb__referenced_columns(keep);
            continue;
        }
        if (!dkb__keep_column(keep, tok))
            return cli_usage_error("%s %s: unknown column '%s' (TPC-H column names such as l_shipdate, or "
                                   "'queries')", opt, s, tok);
    }
    for (int t = 0; t < DKB_TABLE_COUNT; t++)
        if (keep[t]) *tables |= 1u << t;
    if (!*tables) return cli_usage_error("%s: no column named", opt);
    return 0;
}

int cli_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int cli_one_operand(const char *cmd, const char *what, int argc, char **argv) {
    if (optind >= argc) return cli_usage_error("%s: missing %s", cmd, what);
    if (optind + 1 < argc) return cli_usage_error("%s: unexpected argument '%s'", cmd, argv[optind + 1]);
    return 0;
}

void cli_work_opts_init(cli_work_opts *w) {
    *w = (cli_work_opts){.threads = cli_default_threads(), .summary = CLI_FMT_TABLE};
}

int cli_work_opt(cli_work_opts *w, const char *cmd, int c, const char *arg) {
    long v;
    switch (c) {
    case 'j':
        if (cli_parse_int("--threads", arg, 1, 1024, &v)) return DKB_EXIT_USAGE;
        w->threads = (int)v;
        return 0;
    case CLI_OPT_FORCE: w->force = 1; return 0;
    case CLI_OPT_SUMMARY: return cli_parse_format("--summary", arg, &w->summary);
    case 'q': w->quiet = 1; return 0;
    default: return cli_usage_error("%s: bad option", cmd);
    }
}

void cli_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* A key or leaf as cJSON prints it. */
static int json_leaf(FILE *f, const cJSON *it) {
    char *text = cJSON_PrintUnformatted(it);
    if (!text) return DKB_ENOMEM;
    fputs(text, f);
    free(text);
    return 0;
}

static int json_key(FILE *f, const char *key) {
    cJSON *k = cJSON_CreateString(key);
    int rc = k ? json_leaf(f, k) : DKB_ENOMEM;
    cJSON_Delete(k);
    if (!rc) fputs(": ", f);
    return rc;
}

static int json_item(FILE *f, const cJSON *it) {
    if (!cJSON_IsObject(it) && !cJSON_IsArray(it)) return json_leaf(f, it);
    int obj = cJSON_IsObject(it), rc = 0;
    fputc(obj ? '{' : '[', f);
    for (const cJSON *c = it->child; c && !rc; c = c->next) {
        if (c != it->child) fputs(", ", f);
        if (obj && !c->string && cJSON_IsRaw(c)) fputs(c->valuestring, f);   /* members as they are */
        else if (!(rc = obj ? json_key(f, c->string ? c->string : "") : 0)) rc = json_item(f, c);
    }
    fputc(obj ? '}' : ']', f);
    return rc;
}

int cli_json_print(FILE *f, const cJSON *item) {
    if (!item) return DKB_ENOMEM;
    int rc = json_item(f, item);
    return rc ? rc : ferror(f) ? DKB_EIO : 0;
}

char *cli_command_line(int argc, char **argv) {
    size_t n = 4;
    for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    strcpy(s, "dkb");
    for (int i = 0; i < argc; i++) strcat(strcat(s, " "), argv[i]);
    return s;
}
