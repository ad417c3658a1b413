/* cli_summary.c: the per-table summary (rows, bytes, seconds) that gen,
 * import and export print, as a table, JSON or CSV. */
#include "cli_summary.h"

#include <stdio.h>

void cli_summary_fill(cli_summary *s, const int64_t *rows, const uint64_t *bytes, const double *seconds) {
    for (int t = 0; t < DKB_TABLE_COUNT; t++) {
        s->rows[t] = rows[t];
        s->bytes[t] = bytes[t];
        s->seconds[t] = seconds[t];
    }
}

void cli_print_summary(const cli_summary *s, cli_format fmt) {
    int64_t rows = 0;
    uint64_t bytes = 0;
    if (fmt == CLI_FMT_JSON) {
        printf("{\"command\": \"%s\", \"out\": ", s->command);
        cli_json_string(stdout, s->out);
        printf(", \"format\": \"%s\", \"scale_factor\": %g, \"threads\": %d, "
               "\"total_seconds\": %.3f, \"tables\": [",
               s->format, s->sf, s->threads, s->total_seconds);
        const char *sep = "";
        for (int t = 0; t < DKB_TABLE_COUNT; t++) {
            if (!(s->tables & (1u << t))) continue;
            printf("%s{\"name\": \"%s\", \"rows\": %lld, \"bytes\": %llu, \"seconds\": %.3f}", sep,
                   dkb_table_def_get((dkb_table_id)t)->name, (long long)s->rows[t],
                   (unsigned long long)s->bytes[t], s->seconds[t]);
            sep = ", ";
        }
        printf("]}\n");
        return;
    }
    if (fmt == CLI_FMT_CSV) printf("table,rows,bytes,seconds\n");
    else printf("%s: %s, scale factor %g, %d threads\n%-10s %12s %14s %9s\n", s->out, s->format,
                s->sf, s->threads, "table", "rows", s->bytes_label, "seconds");
    for (int t = 0; t < DKB_TABLE_COUNT; t++) {
        if (!(s->tables & (1u << t))) continue;
        const char *name = dkb_table_def_get((dkb_table_id)t)->name;
        rows += s->rows[t];
        bytes += s->bytes[t];
        if (fmt == CLI_FMT_CSV)
            printf("%s,%lld,%llu,%.3f\n", name, (long long)s->rows[t],
                   (unsigned long long)s->bytes[t], s->seconds[t]);
        else
            printf("%-10s %12lld %14llu %9.2f\n", name, (long long)s->rows[t],
                   (unsigned long long)s->bytes[t], s->seconds[t]);
    }
    if (fmt == CLI_FMT_TABLE)
        printf("%-10s %12lld %14llu %9.2f\n", "total", (long long)rows, (unsigned long long)bytes,
               s->total_seconds);
}
