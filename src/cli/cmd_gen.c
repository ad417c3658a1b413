/* cmd_gen.c: `dkb gen`: generate TPC-H data as a store (default) or .tbl files. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_summary.h"
#include "driver/gen_driver.h"
#include "dkb/store.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb gen [--sf SF] [--out DIR] [--format store|tbl] [options]\n"
            "\n"
            "Generate the 8 TPC-H tables, byte-identical to dbgen 2.14 at the same scale\n"
            "factor. Writes a columnar store (default) or dbgen's .tbl text files.\n"
            "The output appears only when complete (built in DIR.tmp.PID, then renamed).\n"
            "\n"
            "options:\n"
            "  --sf SF             scale factor, 0.001 to 100000 (default 1); below 1 in\n"
            "                      steps of 0.001, from 1 up whole numbers (as dbgen:\n"
            "                      2.5 means 2, 0.0125 means 0.012)\n"
            "  --out DIR           output directory (default data/sf<SF>, or data/sf<SF>-tbl)\n"
            "  --format FMT        store (default) or tbl\n"
            "  --table LIST        only these tables, comma-separated (default: all 8)\n"
            "  --columns LIST      store: only these columns (comma-separated names, e.g.\n"
            "                      l_shipdate,l_discount), or 'queries': the 53 columns the\n"
            "                      22 queries read (SF 100: about 54 of 87 GB); the tables\n"
            "                      written are those with a column listed (not with --table)\n"
            "  -j, --threads N     worker threads (default: all cores)\n"
            "  --part K --parts N  only slice K of N of each table (as dbgen -S K -C N;\n"
            "                      .tbl files are named TABLE.tbl.K; nation and region whole)\n"
            "  --partitions P      store: split each table into P partitions (lineitem and\n"
            "                      orders co-partitioned by orderkey; default 1)\n"
            "  --force             replace DIR if it exists and is not empty\n"
            "  --summary FMT       summary as table (default), json or csv on stdout\n"
            "  -q, --quiet         no progress bar and no summary\n"
            "  -h, --help          this help\n"
            "\n"
            "examples: dkb gen --sf 1 --format tbl --out /tmp/sf1-tbl -j 2\n"
            "          dkb gen --sf 100 --columns queries --partitions 64 --out /dev/shm/sf100\n");
}

int cmd_gen(int argc, char **argv) {
    enum { O_SF = 256, O_OUT, O_FORMAT, O_TABLE, O_PART, O_PARTS, O_PARTITIONS, O_COLUMNS };
    static const struct option longopts[] = {
        {"sf", required_argument, 0, O_SF},         {"out", required_argument, 0, O_OUT},
        {"format", required_argument, 0, O_FORMAT}, {"table", required_argument, 0, O_TABLE},
        {"threads", required_argument, 0, 'j'},     {"part", required_argument, 0, O_PART},
        {"parts", required_argument, 0, O_PARTS},   {"partitions", required_argument, 0, O_PARTITIONS},
        {"columns", required_argument, 0, O_COLUMNS},
        {"force", no_argument, 0, CLI_OPT_FORCE},   {"summary", required_argument, 0, CLI_OPT_SUMMARY},
        {"quiet", no_argument, 0, 'q'},             {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    dkb_gen_opts o = {.sf = 1, .part = 1, .parts = 1, .partitions = 1, .format = DKB_OUT_STORE};
    cli_work_opts w;
    cli_work_opts_init(&w);
    uint32_t keep[DKB_TABLE_COUNT] = {0};
    unsigned col_tables = 0, table_given = 0;
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_SF:
            if (cli_parse_double("--sf", optarg, &o.sf)) return DKB_EXIT_USAGE;
            if (o.sf <= 0) return cli_usage_error("--sf %s: scale factor must be positive", optarg);
            /* dbgen's steps below 1 are 0.001: anything smaller is scale 0. */
            if (o.sf < 1 && (int)(1000 * o.sf) < 1)
                return cli_usage_error("--sf %s: below the smallest scale factor, 0.001", optarg);
            if (o.sf > 100000) return cli_usage_error("--sf %s: above the largest scale factor, 100000", optarg);
            break;
        case O_OUT: o.out = optarg; break;
        case O_FORMAT:
            if (!strcmp(optarg, "tbl")) o.format = DKB_OUT_TBL;
            else if (!strcmp(optarg, "store")) o.format = DKB_OUT_STORE;
            else return cli_usage_error("--format %s: expected store or tbl", optarg);
            break;
        case O_TABLE:
            if (cli_parse_tables("--table", optarg, &o.tables)) return DKB_EXIT_USAGE;
            table_given = 1;
            break;
        case O_COLUMNS:
            if (cli_parse_columns("--columns", optarg, keep, &col_tables)) return DKB_EXIT_USAGE;
            break;
        case O_PART:
            if (cli_parse_int("--part", optarg, 1, 1000000, &v)) return DKB_EXIT_USAGE;
            o.part = (int)v;
            break;
        case O_PARTS:
            if (cli_parse_int("--parts", optarg, 1, 1000000, &v)) return DKB_EXIT_USAGE;
            o.parts = (int)v;
            break;
        case O_PARTITIONS:
            if (cli_parse_int("--partitions", optarg, 1, 65536, &v)) return DKB_EXIT_USAGE;
            o.partitions = (int)v;
            break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default:
            if (cli_work_opt(&w, "gen", c, optarg)) return DKB_EXIT_USAGE;
        }
    }
    o.threads = w.threads;
    o.force = w.force;
    if (optind < argc) return cli_usage_error("gen: unexpected argument '%s'", argv[optind]);
    if (o.part > o.parts) return cli_usage_error("--part %d is larger than --parts %d", o.part, o.parts);
    if (o.partitions > 1 && o.format == DKB_OUT_TBL)
        return cli_usage_error("--partitions applies to the store format only");
    if (col_tables) {
        if (table_given) return cli_usage_error("--columns and --table exclude each other (--columns picks the tables)");
        if (o.format == DKB_OUT_TBL)
            return cli_usage_error("--columns applies to the store format only (a .tbl file has every column)");
        o.tables = col_tables;
        o.keep_cols = keep;
    }
    if (!o.tables) o.tables = (1u << DKB_TABLE_COUNT) - 1;
    char outbuf[64];
    if (!o.out) {
        snprintf(outbuf, sizeof outbuf, "data/sf%g%s", o.sf, o.format == DKB_OUT_TBL ? "-tbl" : "");
        o.out = outbuf;
    }
    cli_bar bar;
    cli_bar_init(&bar, w.quiet);
    o.progress = cli_bar_progress(&bar);
    dkb_gen_summary sum;
    dkb_error err = {0};
    int rc = dkb__gen_run(&o, &sum, &err);
    cli_bar_done(&bar);
    if (rc) return cli_fail("gen", rc, &err);
    if (w.quiet) return DKB_EXIT_OK;
    cli_summary cs = {.command = "gen", .out = o.out, .format = o.format == DKB_OUT_TBL ? "tbl" : "store",
                      .bytes_label = o.format == DKB_OUT_TBL ? "tbl bytes" : "store bytes", .sf = sum.sf,
                      .threads = o.threads, .tables = o.tables, .total_seconds = sum.total_seconds};
    cli_summary_fill(&cs, sum.rows, sum.bytes, sum.seconds);
    if (o.format == DKB_OUT_STORE) {
        /* Report the store's own sizes, and prove it reopens. */
        dkb_store *st = NULL;
        rc = dkb_store_open(o.out, 0, &st, &err);
        if (rc) return cli_fail("gen", rc, &err);
        for (int t = 0; t < DKB_TABLE_COUNT; t++) {
            const dkb_store_table *tab = dkb_store_table_get(st, (dkb_table_id)t);
            cs.bytes[t] = tab ? dkb_store_table_disk_bytes(tab) : 0;
        }
        dkb_store_close(st);
    }
    cli_print_summary(&cs, w.summary);
    return DKB_EXIT_OK;
}
