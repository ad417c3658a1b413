/* cmd_export.c: `dkb export`: write a store's tables back as dbgen .tbl files. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_summary.h"
#include "store/export.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb export STORE --format tbl --out DIR [options]\n"
            "\n"
            "Write the store's tables as DIR/TABLE.tbl in dbgen's pipe-delimited format;\n"
            "a generated store, or one imported from dbgen files, exports byte-identical\n"
            "to dbgen. Files appear only when all are complete.\n"
            "\n"
            "options:\n"
            "  --format tbl        output format (tbl is the only one)\n"
            "  --out DIR           output directory (created when missing; required)\n"
            "  --table LIST        only these tables, comma-separated (default: all)\n"
            "  -j, --threads N     worker threads (default: all cores)\n"
            "  --force             overwrite existing TABLE.tbl files in DIR\n"
            "  --verify            check the store's checksums before exporting\n"
            "  --summary FMT       summary as table (default), json or csv on stdout\n"
            "  -q, --quiet         no progress bar and no summary\n"
            "  -h, --help          this help\n"
            "\n"
            "example: dkb export data/sf1 --format tbl --out /tmp/sf1-tbl\n");
}

int cmd_export(int argc, char **argv) {
    enum { O_OUT = 256, O_FORMAT, O_TABLE, O_VERIFY };
    static const struct option longopts[] = {
        {"out", required_argument, 0, O_OUT},       {"format", required_argument, 0, O_FORMAT},
        {"table", required_argument, 0, O_TABLE},   {"threads", required_argument, 0, 'j'},
        {"force", no_argument, 0, CLI_OPT_FORCE},   {"verify", no_argument, 0, O_VERIFY},
        {"summary", required_argument, 0, CLI_OPT_SUMMARY}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    dkb_export_opts o = {0};
    cli_work_opts w;
    cli_work_opts_init(&w);
    const char *out = NULL;
    int verify = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_OUT: out = optarg; break;
        case O_FORMAT:
            if (strcmp(optarg, "tbl") != 0) return cli_usage_error("--format %s: only tbl is supported", optarg);
            break;
        case O_TABLE:
            if (cli_parse_tables("--table", optarg, &o.tables)) return DKB_EXIT_USAGE;
            break;
        case O_VERIFY: verify = 1; break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default:
            if (cli_work_opt(&w, "export", c, optarg)) return DKB_EXIT_USAGE;
        }
    }
    if (cli_one_operand("export", "STORE", argc, argv)) return DKB_EXIT_USAGE;
    o.threads = w.threads;
    o.force = w.force;
    if (!out) return cli_usage_error("export: missing --out DIR");
    dkb_store *s = NULL;
    dkb_error err = {0};
    int rc = dkb_store_open(argv[optind], verify ? DKB_STORE_VERIFY : 0, &s, &err);
    if (rc) return cli_fail("export", rc, &err);
    cli_bar bar;
    cli_bar_init(&bar, w.quiet);
    dkb_progress progress = cli_bar_progress(&bar);
    dkb_export_summary sum;
    rc = dkb__store_export(s, out, &o, &progress, &sum, &err);
    cli_bar_done(&bar);
    if (rc) {
        dkb_store_close(s);
        return cli_fail("export", rc, &err);
    }
    if (!w.quiet) {
        cli_summary cs = {.command = "export", .out = out, .format = "tbl", .bytes_label = "tbl bytes",
                          .sf = dkb_store_scale_factor(s), .threads = o.threads,
                          .total_seconds = sum.total_seconds};
        for (int i = 0; i < dkb_store_ntables(s); i++) {
            const dkb_table_def *td = dkb_store_table_def(dkb_store_table_at(s, i));
            if (o.tables && !(o.tables & (1u << td->id))) continue;
            cs.tables |= 1u << td->id;
        }
        cli_summary_fill(&cs, sum.rows, sum.bytes, sum.seconds);
        cli_print_summary(&cs, w.summary);
    }
    dkb_store_close(s);
    return DKB_EXIT_OK;
}
