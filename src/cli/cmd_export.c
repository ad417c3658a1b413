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
    enum { O_OUT = 256, O_FORMAT, O_TABLE, O_FORCE, O_VERIFY, O_SUMMARY };
    static const struct option longopts[] = {
        {"out", required_argument, 0, O_OUT},       {"format", required_argument, 0, O_FORMAT},
        {"table", required_argument, 0, O_TABLE},   {"threads", required_argument, 0, 'j'},
        {"force", no_argument, 0, O_FORCE},         {"verify", no_argument, 0, O_VERIFY},
        {"summary", required_argument, 0, O_SUMMARY}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    dkb_export_opts o = {.threads = cli_default_threads()};
    const char *out = NULL;
    cli_format summary = CLI_FMT_TABLE;
    int quiet = 0, verify = 0, c;
    long v;
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
        case 'j':
            if (cli_parse_int("--threads", optarg, 1, 1024, &v)) return DKB_EXIT_USAGE;
            o.threads = (int)v;
            break;
        case O_FORCE: o.force = 1; break;
        case O_VERIFY: verify = 1; break;
        case O_SUMMARY:
            if (cli_parse_format("--summary", optarg, &summary)) return DKB_EXIT_USAGE;
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default: return cli_usage_error("export: bad option");
        }
    }
    if (optind >= argc) return cli_usage_error("export: missing STORE");
    if (optind + 1 < argc) return cli_usage_error("export: unexpected argument '%s'", argv[optind + 1]);
    if (!out) return cli_usage_error("export: missing --out DIR");
    dkb_store *s = NULL;
    dkb_error err = {0};
    int rc = dkb_store_open(argv[optind], verify ? DKB_STORE_VERIFY : 0, &s, &err);
    if (rc) return cli_fail("export", rc, &err);
    cli_bar bar;
    cli_bar_init(&bar, quiet);
    dkb_progress progress = cli_bar_progress(&bar);
    dkb_export_summary sum;
    rc = dkb__store_export(s, out, &o, &progress, &sum, &err);
    cli_bar_done(&bar);
    if (rc) {
        dkb_store_close(s);
        return cli_fail("export", rc, &err);
    }
    if (!quiet) {
        cli_summary cs = {.command = "export", .out = out, .format = "tbl", .bytes_label = "tbl bytes",
                          .sf = dkb_store_scale_factor(s), .threads = o.threads,
                          .total_seconds = sum.total_seconds};
        for (int i = 0; i < dkb_store_ntables(s); i++) {
            const dkb_table_def *td = dkb_store_table_def(dkb_store_table_at(s, i));
            if (o.tables && !(o.tables & (1u << td->id))) continue;
            cs.tables |= 1u << td->id;
        }
        for (int t = 0; t < DKB_TABLE_COUNT; t++) {
            cs.rows[t] = sum.rows[t];
            cs.bytes[t] = sum.bytes[t];
            cs.seconds[t] = sum.seconds[t];
        }
        cli_print_summary(&cs, summary);
    }
    dkb_store_close(s);
    return DKB_EXIT_OK;
}
