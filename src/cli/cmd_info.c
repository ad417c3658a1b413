/* cmd_info.c: `dkb info`: a store's schema, row counts, partitions and sizes;
 * with --verify also every file's checksum. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dkb/store.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb info STORE [--verify] [--format table|json|csv]\n"
            "\n"
            "Print a store's scale factor, tables, row counts, partitions, and each\n"
            "column's logical type, on-disk type and size. Opening checks every file's\n"
            "size; --verify also checks every file's crc32 and contents.\n"
            "\n"
            "options:\n"
            "  --verify            check checksums (reads every byte)\n"
            "  --format FMT        table (default), json, or csv (one line per column)\n"
            "  -h, --help          this help\n"
            "\n"
            "example: dkb info data/sf1 --verify\n");
}

static void print_json(const dkb_store *s, int verified) {
    int part, parts;
    dkb_store_slice(s, &part, &parts);
    printf("{\"store\": ");
    cli_json_string(stdout, dkb_store_dir(s));
    printf(", \"format\": \"%s\", \"format_version\": %d, \"scale_factor\": %g, "
           "\"slice\": {\"part\": %d, \"parts\": %d}, \"source\": ",
           DKB_STORE_FORMAT, DKB_STORE_FORMAT_VERSION, dkb_store_scale_factor(s), part, parts);
    cli_json_string(stdout, dkb_store_source(s));
    printf(", \"created\": ");
    cli_json_string(stdout, dkb_store_created(s));
    printf(", \"verified\": %s, \"tables\": [", verified ? "true" : "false");
    for (int i = 0; i < dkb_store_ntables(s); i++) {
        const dkb_store_table *t = dkb_store_table_at(s, i);
        printf("%s{\"name\": \"%s\", \"rows\": %lld, \"bytes\": %llu, \"column_subset\": %s, \"partitions\": [",
               i ? ", " : "", dkb_store_table_name(t), (long long)dkb_store_table_rows(t),
               (unsigned long long)dkb_store_table_disk_bytes(t), dkb_store_table_is_subset(t) ? "true" : "false");
        for (int p = 0; p < dkb_store_table_npartitions(t); p++) {
            const dkb_store_partition *pp = dkb_store_table_partition(t, p);
            printf("%s{\"row_start\": %lld, \"rows\": %lld", p ? ", " : "", (long long)pp->row_start,
                   (long long)pp->rows);
            if (pp->has_key)
                printf(", \"key_min\": %lld, \"key_max\": %lld", (long long)pp->key_min, (long long)pp->key_max);
            printf("}");
        }
        printf("], \"columns\": [");
        for (int c = 0; c < dkb_store_table_ncolumns(t); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(t, c);
            printf("%s{\"name\": \"%s\", \"type\": \"%s\", \"dtype\": \"%s\", \"bytes\": %llu", c ? ", " : "",
                   dkb_column_name(col), dkb_type_name(dkb_column_type(col)),
                   dkb_dtype_name(dkb_column_dtype(col)), (unsigned long long)dkb_column_disk_bytes(col));
            if (dkb_column_type(col) == DKB_TYPE_DICT) printf(", \"dict_size\": %d", dkb_column_dict_size(col));
            printf("}");
        }
        printf("]}");
    }
    printf("]}\n");
}

static void print_csv(const dkb_store *s) {
    printf("table,column,type,dtype,rows,bytes,dict_size\n");
    for (int i = 0; i < dkb_store_ntables(s); i++) {
        const dkb_store_table *t = dkb_store_table_at(s, i);
        for (int c = 0; c < dkb_store_table_ncolumns(t); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(t, c);
            printf("%s,%s,%s,%s,%lld,%llu,", dkb_store_table_name(t), dkb_column_name(col),
                   dkb_type_name(dkb_column_type(col)), dkb_dtype_name(dkb_column_dtype(col)),
                   (long long)dkb_column_rows(col), (unsigned long long)dkb_column_disk_bytes(col));
            if (dkb_column_type(col) == DKB_TYPE_DICT) printf("%d", dkb_column_dict_size(col));
            printf("\n");
        }
    }
}

static void print_table(const dkb_store *s, int verified) {
    int part, parts;
    dkb_store_slice(s, &part, &parts);
    printf("%s: %s v%d, scale factor %g", dkb_store_dir(s), DKB_STORE_FORMAT, DKB_STORE_FORMAT_VERSION,
           dkb_store_scale_factor(s));
    if (parts > 1) printf(", slice %d of %d", part, parts);
    printf("\nsource: %s, created %s\n", dkb_store_source(s), dkb_store_created(s));
    uint64_t total = 0;
    for (int i = 0; i < dkb_store_ntables(s); i++) {
        const dkb_store_table *t = dkb_store_table_at(s, i);
        total += dkb_store_table_disk_bytes(t);
        printf("\n%-16s %12lld rows  %3d partition%s %12.1f MB", dkb_store_table_name(t),
               (long long)dkb_store_table_rows(t), dkb_store_table_npartitions(t),
               dkb_store_table_npartitions(t) == 1 ? " " : "s", dkb_store_table_disk_bytes(t) / 1e6);
        if (dkb_store_table_is_subset(t))
            printf("  (%d of %d columns)", dkb_store_table_ncolumns(t), dkb_store_table_def(t)->ncols);
        printf("\n");
        for (int c = 0; c < dkb_store_table_ncolumns(t); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(t, c);
            printf("  %-16s %-8s %-6s %12.1f MB", dkb_column_name(col), dkb_type_name(dkb_column_type(col)),
                   dkb_dtype_name(dkb_column_dtype(col)), dkb_column_disk_bytes(col) / 1e6);
            if (dkb_column_type(col) == DKB_TYPE_DICT) printf("  (%d value%s)", dkb_column_dict_size(col), dkb_column_dict_size(col) == 1 ? "" : "s");
            printf("\n");
        }
    }
    printf("\ntotal %.1f MB%s\n", total / 1e6, verified ? "; every file matches its crc32" : "");
}

int cmd_info(int argc, char **argv) {
    enum { O_VERIFY = 256, O_FORMAT };
    static const struct option longopts[] = {{"verify", no_argument, 0, O_VERIFY},
                                              {"format", required_argument, 0, O_FORMAT},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    int verify = 0, c;
    cli_format fmt = CLI_FMT_TABLE;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_VERIFY: verify = 1; break;
        case O_FORMAT:
            if (cli_parse_format("--format", optarg, &fmt)) return DKB_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default: return cli_usage_error("info: bad option");
        }
    }
    if (cli_one_operand("info", "STORE", argc, argv)) return DKB_EXIT_USAGE;
    dkb_store *s = NULL;
    dkb_error err = {0};
    int rc = dkb_store_open(argv[optind], verify ? DKB_STORE_VERIFY : 0, &s, &err);
    if (rc) return cli_fail("info", rc, &err);
    if (fmt == CLI_FMT_JSON) print_json(s, verify);
    else if (fmt == CLI_FMT_CSV) print_csv(s);
    else print_table(s, verify);
    dkb_store_close(s);
    return DKB_EXIT_OK;
}
