/* cmd_import.c: `dkb import`: load a directory of dbgen .tbl files into a store. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_summary.h"
#include "store/import.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb import TBL_DIR --out STORE [options]\n"
            "\n"
            "Load TBL_DIR/{part,partsupp,supplier,customer,orders,lineitem,nation,region}.tbl\n"
            "(dbgen's pipe-delimited text, from any dbgen-compatible generator; or just\n"
            "the tables --table names) into a columnar store. Every field is checked; a malformed row stops the import with\n"
            "one line naming file, line and field, and nothing is left at STORE.\n"
            "\n"
            "options:\n"
            "  --out STORE         store directory to create (required)\n"
            "  --table LIST        only these tables, comma-separated (default: all 8)\n"
            "  --sf SF             scale factor to record (default: inferred from the rows\n"
            "                      of customer, supplier, part, partsupp or orders)\n"
            "  --partitions P      partitions per table (lineitem and orders co-partitioned\n"
            "                      by orderkey; default 1)\n"
            "  -j, --threads N     worker threads (default: all cores)\n"
            "  --force             replace STORE if it exists and is not empty\n"
            "  --summary FMT       summary as table (default), json or csv on stdout\n"
            "  -q, --quiet         no progress bar and no summary\n"
            "  -h, --help          this help\n"
            "\n"
            "example: dkb import data/sf1-tbl --out data/sf1\n");
}

int cmd_import(int argc, char **argv) {
    enum { O_OUT = 256, O_SF, O_PARTITIONS, O_TABLE };
    static const struct option longopts[] = {
        {"out", required_argument, 0, O_OUT},       {"sf", required_argument, 0, O_SF},
        {"table", required_argument, 0, O_TABLE},
        {"partitions", required_argument, 0, O_PARTITIONS},
        {"threads", required_argument, 0, 'j'},     {"force", no_argument, 0, CLI_OPT_FORCE},
        {"summary", required_argument, 0, CLI_OPT_SUMMARY}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    dkb_import_opts o = {.partitions = 1};
    cli_work_opts w;
    cli_work_opts_init(&w);
    const char *out = NULL;
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_OUT: out = optarg; break;
        case O_TABLE:
            if (cli_parse_tables("--table", optarg, &o.tables)) return DKB_EXIT_USAGE;
            break;
        case O_SF:
            if (cli_parse_double("--sf", optarg, &o.scale_factor)) return DKB_EXIT_USAGE;
            if (o.scale_factor <= 0) return cli_usage_error("--sf %s: scale factor must be positive", optarg);
            break;
        case O_PARTITIONS:
            if (cli_parse_int("--partitions", optarg, 1, 65536, &v)) return DKB_EXIT_USAGE;
            o.partitions = (int)v;
            break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default:
            if (cli_work_opt(&w, "import", c, optarg)) return DKB_EXIT_USAGE;
        }
    }
    if (cli_one_operand("import", "TBL_DIR", argc, argv)) return DKB_EXIT_USAGE;
    o.threads = w.threads;
    o.force = w.force;
    if (!out) return cli_usage_error("import: missing --out STORE");
    const char *in = argv[optind];
    cli_bar bar;
    cli_bar_init(&bar, w.quiet);
    dkb_progress progress = cli_bar_progress(&bar);
    dkb_import_summary sum;
    dkb_error err = {0};
    int rc = dkb__store_import(in, out, &o, &progress, &sum, &err);
    cli_bar_done(&bar);
    if (rc) return cli_fail("import", rc, &err);
    if (w.quiet) return DKB_EXIT_OK;
    cli_summary cs = {.command = "import", .out = out, .format = "store", .bytes_label = "tbl bytes",
                      .sf = sum.sf, .threads = o.threads,
                      .tables = o.tables ? o.tables : (1u << DKB_TABLE_COUNT) - 1,
                      .total_seconds = sum.total_seconds};
    cli_summary_fill(&cs, sum.rows, sum.bytes, sum.seconds);
    cli_print_summary(&cs, w.summary);
    return DKB_EXIT_OK;
}
