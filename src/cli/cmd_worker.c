/* cmd_worker.c: `dkb __worker JOB` (hidden): the sandboxed worker process
 * that runs one candidate against the baseline (src/harness/worker.c). Only
 * the harness starts it, in a child process under limits; its result is a
 * JSON report on the fd named in env DKB_REPORT_FD. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "harness/protocol.h"

int cmd_worker(int argc, char **argv) {
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc == 2 ? stdout : stderr,
                "usage: dkb __worker JOB.json\n"
                "\n"
                "Internal: run one evaluation job (written by `dkb eval`) and write its\n"
                "report as one line of JSON to the fd in $DKB_REPORT_FD (stdout if unset).\n"
                "Runs candidate code in this process: the harness starts it sandboxed.\n");
        return argc == 2 ? DKB_EXIT_OK : DKB_EXIT_USAGE;
    }
    return dkb__worker_run(argv[1]);
}
