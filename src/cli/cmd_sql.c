/* cmd_sql.c: `dkb sql`: a query's SQL (DuckDB dialect) with its parameters
 * drawn from a seed and overridden, or the parameter set as JSON; what the
 * DuckDB oracle runs to make golden answers. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_query.h"

#define MAX_OVERRIDES 64

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb sql QUERY [--seed S] [--param NAME=VALUE ...] [--sf SF] [--params-json]\n"
            "\n"
            "Print the SQL of TPC-H query QUERY (q01..q22 or 1..22) in DuckDB's dialect,\n"
            "with its substitution parameters drawn from seed S as qgen draws them\n"
            "(seed 0, the default: the qualification values), then NAME=VALUE overrides.\n"
            "`dkb sql QUERY --params-json` lists a query's parameters with their values;\n"
            "an unknown --param name lists the names.\n"
            "\n"
            "options:\n"
            "  --seed S             seed of the parameter draw (default 0)\n"
            "  --param NAME=VALUE   set one parameter (repeatable); dates YYYY-MM-DD,\n"
            "                       decimals 0.06, strings as in the data\n"
            "  --sf SF              scale factor the SQL is for (default 1; only Q11's\n"
            "                       fraction, 0.0001/SF, depends on it)\n"
            "  --params-json        print the parameters as JSON instead of the SQL\n"
            "  -h, --help           this help\n"
            "\n"
            "example: dkb sql q06 --seed 3 --param discount=0.05\n");
}

int cmd_sql(int argc, char **argv) {
    enum { O_SEED = 256, O_PARAM, O_SF, O_PARAMS_JSON };
    static const struct option longopts[] = {{"seed", required_argument, 0, O_SEED},
                                              {"param", required_argument, 0, O_PARAM},
                                              {"sf", required_argument, 0, O_SF},
                                              {"params-json", no_argument, 0, O_PARAMS_JSON},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    uint64_t seed = 0;
    double sf = 1;
    int json = 0, nov = 0, c;
    char *ov[MAX_OVERRIDES];
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_SEED:
            if (cli_parse_seed("--seed", optarg, &seed)) return DKB_EXIT_USAGE;
            break;
        case O_PARAM:
            if (nov == MAX_OVERRIDES) return cli_usage_error("sql: more than %d --param options", MAX_OVERRIDES);
            ov[nov++] = optarg;
            break;
        case O_SF:
            if (strpbrk(optarg, "xXpP")) /* strtod's hexadecimal form: not a scale factor */
                return cli_usage_error("--sf %s: not a number", optarg);
            if (cli_parse_double("--sf", optarg, &sf)) return DKB_EXIT_USAGE;
            if (sf <= 0) return cli_usage_error("--sf %s: scale factor must be positive", optarg);
            break;
        case O_PARAMS_JSON: json = 1; break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default: return cli_usage_error("sql: bad option");
        }
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
