/* cli_summary.h: per-table work summary printed by gen, import and export. */
#ifndef DKB_CLI_SUMMARY_H
#define DKB_CLI_SUMMARY_H

#include <stdint.h>

#include "cli.h"
#include "dkb/schema.h"

typedef struct cli_summary {
    const char *command;      /* "gen", "import", "export" */
    const char *out;          /* output directory */
    const char *format;       /* "store" or "tbl" */
    const char *bytes_label;  /* column heading: "tbl bytes", "bytes" */
    double sf;
    int threads;
    unsigned tables;          /* bit per table to print */
    int64_t rows[DKB_TABLE_COUNT];
    uint64_t bytes[DKB_TABLE_COUNT];
    double seconds[DKB_TABLE_COUNT];
    double total_seconds;
} cli_summary;

/* Copy the per-table rows, bytes and seconds (DKB_TABLE_COUNT each) of a
 * gen, import or export summary into s. */
void cli_summary_fill(cli_summary *s, const int64_t *rows, const uint64_t *bytes, const double *seconds);
void cli_print_summary(const cli_summary *s, cli_format fmt);

#endif
