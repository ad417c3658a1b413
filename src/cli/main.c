/* main.c: the `dkb` command: dispatches to one subcommand per source file. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/countof.h"  // defines: DKB_COUNTOF
#include "dist/comm.h"       // defines: dkb__comm_launched_size

int cmd_gen(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_prompt(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);

static const cli_command commands[] = {
    {"gen", cmd_gen, "generate TPC-H data (dbgen-identical) as a store or .tbl files"},
    {"import", cmd_import, "load dbgen .tbl files into a store"},
    {"export", cmd_export, "write a store back as .tbl files"},
    {"info", cmd_info, "show a store's schema, row counts and sizes; verify checksums"},
    {"run", cmd_run, "run TPC-H queries (q01..q22) on a store; time them; check answers"},
    {"sql", cmd_sql, "print a query's SQL (DuckDB) with parameters from a seed; DuckDB's plan of any SQL"},
    {"__worker", cmd_worker, NULL}, /* hidden: the harness's sandboxed worker */
    {"eval", cmd_eval, "evaluate candidate query implementations against the baseline; score them"},
    {"optimize", cmd_optimize, "let a model write and repair candidates with harness feedback (trajectories)"},
    {"prompt", cmd_prompt, "print the exact prompt dkb optimize sends for a query"},
    {"report", cmd_report, "tables and an HTML report of dkb optimize runs"},
    {"bench", cmd_bench, "the benchmark: baselines vs expert kernels on the best backend; table, JSON, HTML"},
};

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb <command> [options]\n"
            "\n"
            "DataKernelBench: TPC-H data, baselines and kernels for GPUs and CPUs.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < DKB_COUNTOF(commands); i++)
        if (commands[i].summary) fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n"
            "Run `dkb <command> --help` for a command's options.\n"
            "Exit status: 0 success, 1 failure, 2 bad command line.\n");
}

int main(int argc, char **argv) {
    /* Past a file-size limit, let write() fail with EFBIG (reported like a
     * full disk) instead of killing the process with SIGXFSZ. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return DKB_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return DKB_EXIT_OK;
    }
    if (!strcmp(name, "--version")) {
        printf("dkb %s\n", DKB_VERSION);
        return DKB_EXIT_OK;
    }
    /* under mpirun only dkb run, dkb eval and dkb bench divide their work
     * (docs/distributed.md); any other command would run whole on every
     * rank, writing the same files. (The worker inherits mpirun's
     * environment from its dkb eval: it is one of a rank's processes.) */
    int ranks = dkb__comm_launched_size();
    int spread = !strcmp(name, "run") || !strcmp(name, "eval") || !strcmp(name, "bench") || !strcmp(name, "__worker");
    if (ranks != 1 && !spread && dkb__comm_launched_rank())
        return DKB_EXIT_USAGE; /* rank 0 says why */
    if (ranks != 1 && !spread)
        return cli_usage_error("dkb %s was started by mpirun (%d ranks): only dkb run, dkb eval and dkb bench run across ranks; "
                               "start it without mpirun (docs/distributed.md)", name, ranks);
    for (size_t i = 0; i < DKB_COUNTOF(commands); i++)
        if (!strcmp(name, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s'", name);
}
