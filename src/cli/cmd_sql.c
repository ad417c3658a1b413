/* cmd_sql.c: `dkb sql`: a query's SQL (DuckDB dialect) with its parameters
 * drawn from a seed and overridden, or the parameter set as JSON; what the
 * DuckDB oracle runs to make golden answers. With --data STORE and -e SQL
 * or -f FILE: DuckDB's optimized logical plan of any SQL over the store
 * (--explain; src/sql/plan.h), the input of the translator to TensorPlan
 * (issue 18), which is not built yet. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_query.h"
#include "common/fsutil.h"  // defines: dkb__read_file
#include "dkb/store.h"      // defines: dkb_store_open
#include "sql/plan.h"       // defines: dkb__sql_planner, dkb__sql_plan

#define MAX_OVERRIDES 64
#define MAX_SQL_BYTES (16u << 20)

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb sql QUERY [--seed S] [--param NAME=VALUE ...] [--sf SF] [--params-json]\n"
            "       dkb sql --data STORE (-e SQL | -f FILE) --explain[=tree|json]\n"
            "\n"
            "Print the SQL of TPC-H query QUERY (q01..q22 or 1..22) in DuckDB's dialect,\n"
            "with its substitution parameters drawn from seed S as qgen draws them\n"
            "(seed 0, the default: the qualification values), then NAME=VALUE overrides.\n"
            "`dkb sql QUERY --params-json` lists a query's parameters with their values;\n"
            "an unknown --param name lists the names.\n"
            "\n"
            "With --data: plan any SQL over the store with DuckDB (libduckdb, loaded at\n"
            "run time: $DKB_LIBDUCKDB, else tools/oracle's npm package from\n"
            "tools/install-deps.sh, else the system's). The store's tables are loaded\n"
            "into an in-memory DuckDB (all rows, the oracle's types) and --explain\n"
            "prints DuckDB's optimized logical plan: a compact tree, one line per\n"
            "operator, then the plan JSON of json_serialize_plan, indented (=tree or\n"
            "=json: only that one). Running the SQL needs the translator to TensorPlan\n"
            "(issue 18), not built yet. An error in the SQL is DuckDB's message with\n"
            "its line and column (a syntax error also shows the line and a caret).\n"
            "\n"
            "options:\n"
            "  --seed S             seed of the parameter draw (default 0)\n"
            "  --param NAME=VALUE   set one parameter (repeatable); dates YYYY-MM-DD,\n"
            "                       decimals 0.06, strings as in the data\n"
            "  --sf SF              scale factor the SQL is for (default 1; only Q11's\n"
            "                       fraction, 0.0001/SF, depends on it)\n"
            "  --params-json        print the parameters as JSON instead of the SQL\n"
            "  --data STORE         plan SQL over this store (dkb gen/import output)\n"
            "  -e SQL               the SQL text (one statement)\n"
            "  -f FILE              read the SQL from FILE ('-': standard input)\n"
            "  --explain[=WHAT]     print DuckDB's plan: tree and json (default), tree, json\n"
            "  -h, --help           this help\n"
            "\n"
            "examples: dkb sql q06 --seed 3 --param discount=0.05\n"
            "          dkb sql --data data/sf0.01 --explain=tree \\\n"
            "              -e \"SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1\"\n"
            "          dkb sql q03 | dkb sql --data data/sf0.01 -f - --explain\n");
}

enum { EXPLAIN_NONE = 0, EXPLAIN_TREE = 1, EXPLAIN_JSON = 2, EXPLAIN_BOTH = 3 };

/* The whole of standard input, malloc'ed and NUL-terminated; NULL on error. */
static char *read_stdin(void) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 == cap) {
            char *b = cap < MAX_SQL_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!b) break;
            buf = b, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, stdin);
        n += got;
        if (got == 0) {
            if (ferror(stdin)) break;
            buf[n] = 0;
            return buf;
        }
    }
    free(buf);
    return NULL;
}

/* DuckDB's error in the SQL: the one-line message, and for a syntax error
 * (a parser error with a position) the line of the SQL and a caret. */
static int print_sql_error(const char *sql, const dkb__sql_diag *d, const dkb_error *err) {
    fprintf(stderr, "dkb sql: error: %s\n", err->msg);
    if (strcmp(d->type, "parser") || d->position < 0) return DKB_EXIT_FAIL;
    const char *ls;
    size_t ll;
    int line, col;
    dkb__sql_locate(sql, (size_t)d->position, &line, &col, &ls, &ll);
    fprintf(stderr, "  %.*s\n  ", (int)ll, ls);
    for (int i = 0; i + 1 < col; i++) fputc(ls[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
    return DKB_EXIT_FAIL;
}

/* dkb sql --data STORE (-e SQL | -f FILE) --explain. */
static int explain(const char *data, const char *text, const char *file, int what) {
    char *owned = NULL;
    dkb_error err = {0};
    if (file) {
        if (!strcmp(file, "-")) {
            if (!(owned = read_stdin())) {
                fprintf(stderr, "dkb sql: error: reading the SQL from standard input failed\n");
                return DKB_EXIT_FAIL;
            }
        } else {
            size_t len;
            int rc = dkb__read_file(file, MAX_SQL_BYTES, &owned, &len, &err);
            if (rc) return cli_fail("sql", rc, &err);
        }
        text = owned;
    }
    dkb_store *s = NULL;
    dkb__sql_planner *p = NULL;
    char *json = NULL, *tree = NULL, *pretty = NULL;
    dkb__sql_diag diag;
    int rc = dkb_store_open(data, 0, &s, &err);
    if (!rc) rc = dkb__sql_planner_open(s, NULL, &p, &err);
    int exit_code = DKB_EXIT_OK;
    if (!rc) {
        rc = dkb__sql_plan(p, text, &json, &diag, &err);
        if (rc == DKB_EPARSE) {
            exit_code = print_sql_error(text, &diag, &err);
            goto done;
        }
    }
    if (!rc && (what & EXPLAIN_TREE)) rc = dkb__sql_plan_tree(json, &tree, &err);
    if (!rc && (what & EXPLAIN_JSON)) rc = dkb__sql_json_pretty(json, &pretty, &err);
    if (rc) {
        exit_code = cli_fail("sql", rc, &err);
        goto done;
    }
    if (what == EXPLAIN_BOTH) printf("-- DuckDB %s, optimized logical plan\n", dkb__sql_duckdb_version(p));
    if (tree) fputs(tree, stdout);
    if (what == EXPLAIN_BOTH) printf("-- the plan as JSON (json_serialize_plan)\n");
    if (pretty) fputs(pretty, stdout);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb sql: error: writing the output failed\n");
        exit_code = DKB_EXIT_FAIL;
    }
done:
    free(pretty);
    free(tree);
    free(json);
    dkb__sql_planner_close(p);
    dkb_store_close(s);
    free(owned);
    return exit_code;
}

int cmd_sql(int argc, char **argv) {
    enum { O_SEED = 256, O_PARAM, O_SF, O_PARAMS_JSON, O_DATA, O_EXPLAIN };
    static const struct option longopts[] = {{"seed", required_argument, 0, O_SEED},
                                              {"param", required_argument, 0, O_PARAM},
                                              {"sf", required_argument, 0, O_SF},
                                              {"params-json", no_argument, 0, O_PARAMS_JSON},
                                              {"data", required_argument, 0, O_DATA},
                                              {"explain", optional_argument, 0, O_EXPLAIN},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    uint64_t seed = 0;
    double sf = 1;
    int json = 0, nov = 0, c, query_opts = 0, what = EXPLAIN_NONE;
    const char *data = NULL, *text = NULL, *file = NULL;
    char *ov[MAX_OVERRIDES];
    optind = 1;
    while ((c = getopt_long(argc, argv, "he:f:", longopts, NULL)) != -1) {
        switch (c) {
        case O_SEED:
            if (cli_parse_seed("--seed", optarg, &seed)) return DKB_EXIT_USAGE;
            query_opts = 1;
            break;
        case O_PARAM:
            if (nov == MAX_OVERRIDES) return cli_usage_error("sql: more than %d --param options", MAX_OVERRIDES);
            ov[nov++] = optarg;
            query_opts = 1;
            break;
        case O_SF:
            if (strpbrk(optarg, "xXpP")) /* strtod's hexadecimal form: not a scale factor */
                return cli_usage_error("--sf %s: not a number", optarg);
            if (cli_parse_double("--sf", optarg, &sf)) return DKB_EXIT_USAGE;
            if (sf <= 0) return cli_usage_error("--sf %s: scale factor must be positive", optarg);
            query_opts = 1;
            break;
        case O_PARAMS_JSON: json = 1, query_opts = 1; break;
        case O_DATA: data = optarg; break;
        case 'e':
            if (text || file) return cli_usage_error("sql: give the SQL once (-e or -f)");
            text = optarg;
            break;
        case 'f':
            if (text || file) return cli_usage_error("sql: give the SQL once (-e or -f)");
            file = optarg;
            break;
        case O_EXPLAIN:
            if (!optarg || !strcmp(optarg, "both")) what = EXPLAIN_BOTH;
            else if (!strcmp(optarg, "tree")) what = EXPLAIN_TREE;
            else if (!strcmp(optarg, "json")) what = EXPLAIN_JSON;
            else return cli_usage_error("--explain=%s: expected tree, json or both", optarg);
            break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default: return cli_usage_error("sql: bad option");
        }
    }
    if (data || text || file || what) {
        if (query_opts) return cli_usage_error("sql: --seed, --param, --sf and --params-json go with QUERY, not --data");
        if (optind < argc) return cli_usage_error("sql: unexpected argument '%s' (the SQL goes after -e)", argv[optind]);
        if (!data) return cli_usage_error("sql: -e/-f/--explain need --data STORE");
        if (!text && !file) return cli_usage_error("sql: --data needs the SQL: -e SQL or -f FILE");
        if (!what)
            return cli_usage_error("sql: running SQL needs the translator (issue 18), not built yet; use --explain");
        return explain(data, text, file, what);
    }
    if (cli_one_operand("sql", "QUERY", argc, argv)) return DKB_EXIT_USAGE;
    const dkb_query *q;
    int rc = cli_query_arg("sql", argv[optind], &q);
    if (rc) return rc;
    dkb_params p;
    if ((rc = cli_query_params("sql", q, seed, sf, ov, nov, &p))) return rc;
    if (json) {
        printf("{\"query\": \"%s\", \"seed\": %llu, \"sf\": %.15g, \"params\": ", q->name, (unsigned long long)seed, sf);
        cli_params_json(stdout, &p);
        printf("}\n");
    } else {
        char *sql = dkb_query_sql(q, &p);
        if (!sql) return cli_fail("sql", DKB_ENOMEM, NULL);
        size_t len = strlen(sql);
        fputs(sql, stdout);
        if (!len || sql[len - 1] != '\n') fputc('\n', stdout);
        free(sql);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb sql: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return DKB_EXIT_OK;
}
