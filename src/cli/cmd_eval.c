/* cmd_eval.c: `dkb eval`: evaluate candidate implementations (qNN.full.c,
 * qNN.core.c) against the TensorPlan baseline: each built and run in a
 * sandboxed worker, checked on seed 0 plus random seeds, timed; scored as
 * the paper (pass rate, fast_p, overall speedup, geometric mean); reports
 * RESULTS/results.json and RESULTS/summary.md; the table on stdout. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_verify.h"
#include "harness/eval.h"
#include "harness/report.h"
#include "dist/comm.h"   // defines: dkb__comm (mpirun -np K dkb eval)

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb eval DIR --data STORE [options]\n"
            "       dkb eval DIR --data STORE --sql FILE.sql [options]\n"
            "\n"
            "Evaluate the candidates in DIR (files qNN.full.c and qNN.core.c, as\n"
            "include/dkb/candidate.h describes) against the TensorPlan baseline. Each is\n"
            "compiled into a scratch directory, its imports checked, and run in a\n"
            "sandboxed worker process: checked on seed 0 plus N random parameter seeds\n"
            "(drawn now), then timed interleaved with the baseline. A query counts with\n"
            "the candidate's median when the candidate is valid and at least --threshold\n"
            "times faster; otherwise with the baseline's (speedup 1.0).\n"
            "\n"
            "options:\n"
            "  --data STORE        the store directory (required)\n"
            "  --backend B         cpu (default: qNN.<mode>.c candidates) or cuda (qNN.<mode>.cu\n"
            "                      candidates; the baseline on the GPU too; needs a GPU)\n"
            "  --target T          python: evaluate qNN.<mode>.py candidates instead (Python\n"
            "                      with torch, include/dkb/candidate.py; either backend);\n"
            "                      triton: the same on the GPU (implies --backend cuda), with\n"
            "                      @triton.jit kernels. Default: the backend's C or CUDA files\n"
            "  --sql FILE.sql      a SQL task instead of the TPC-H queries: the candidate is\n"
            "                      DIR/NAME.full.c (.cu on cuda), NAME the file's stem\n"
            "                      ([a-z0-9_]+); the baseline is the SQL translated to a\n"
            "                      TensorPlan program (planned once by DuckDB: libduckdb\n"
            "                      needed); full mode only; parameters declared in the\n"
            "                      file (-- dkb:param NAME int|decimal|date|choice ...,\n"
            "                      written :NAME) are checked at their defaults and at\n"
            "                      --seeds drawn values; none: seed 0 only\n"
            "                      (docs/sql.md, \"SQL files as benchmark tasks\")\n"
            "  --mode M            full, core or all (default; full with --mem-budget): which\n"
            "                      files to evaluate\n"
            "  --mem-budget SIZE   memory a query's columns may take at once (64M, 16G; K, M,\n"
            "                      G, T are powers of 1024): the baseline runs partitioned\n"
            "                      where they do not fit, and a full-mode candidate gets the\n"
            "                      budget and a loader of partitions (env->budget in\n"
            "                      dkb/candidate.h; docs/partitions.md; on cuda loads are device\n"
            "                      memory). Full mode, C or CUDA candidates (no --target\n"
            "                      python/triton); the store needs dkb gen --partitions P.\n"
            "                      A budget too small for a query stops the evaluation (exit 1)\n"
            "  --queries LIST      evaluate these queries (q01,q06,... or all); a query\n"
            "                      without a file is scored as the baseline ('missing').\n"
            "                      Default: the queries that have a file\n"
            "  --seeds N           random parameter seeds besides seed 0 (default 5)\n"
            "  --threshold X       speedup a valid candidate needs to count (default 1.0)\n"
            "  --out RESULTS       results directory (default eval-results): results.json,\n"
            "                      summary.md, work/ (builds, jobs, worker output)\n"
            "  --threads N         threads for baseline and candidates (default 0: all cores)\n"
            "  --timeout S         wall-clock limit per worker run (default 120)\n"
            "  --mem-limit GB      worker memory limit (default 2 x store size + 2)\n"
            "  --warmup N          untimed calls before timing (default 2)\n"
            "  --min-runs N        timed calls: at least N (default 10) ...\n"
            "  --min-seconds S     ... and at least S seconds (default 1)\n"
            "  --format FMT        table (default), json (results.json) or csv\n"
            "  --build-jobs N      candidates compiled at once (default: one per core); all\n"
            "                      are built before the first is run, and timed runs go\n"
            "                      one at a time per device\n"
            "  --gpus N            backend cuda: rows spread over N GPUs at once, one timed\n"
            "                      worker per GPU, the baseline timed on the same GPU\n"
            "                      (default: every GPU this process sees; CUDA_VISIBLE_DEVICES\n"
            "                      picks them)\n"
            "  --no-verify         trust the store: skip the check of its crc32s and structure\n"
            "                      (by default done once per version of its files, recorded\n"
            "                      in STORE/.dkb-verified or ~/.cache/dkb; docs/store.md)\n"
            "  -v, --verbose       say how the store was verified (or that a record stood)\n"
            "  -q, --quiet         no progress bar or notes\n"
            "  -h, --help          this help\n"
            "\n"
            "Exit status: 0 when the evaluation ran (even if every candidate failed),\n"
            "1 for harness errors (store missing or corrupt, results directory not writable, a\n"
            "worker or the compiler could not start, a baseline that failed), 2 for a\n"
            "bad command line. See docs/harness.md.\n"
            "\n"
            "examples:\n"
            "  dkb eval tests/candidates/honest --data data/sf1 --out results/honest\n"
            "  dkb eval src/kernels/cpu --data data/sf0.1-p8 --mem-budget 8M --queries q01,q06\n"
            "  mpirun -np 3 dkb eval tests/candidates/ranks --data data/sf0.1-p8   # across ranks:\n"
            "      full mode, --backend cpu, C candidates (docs/distributed.md)\n");
}

typedef struct eval_cli {
    dkb_eval_opts o;
    cli_format fmt;
    int quiet, verbose;
    int seeds_given;
    int mode_given, backend_given;
} eval_cli;

static int parse(int argc, char **argv, eval_cli *c) {
    enum { O_DATA = 256, O_BACKEND, O_MODE, O_QUERIES, O_SEEDS, O_THRESHOLD, O_OUT, O_THREADS, O_TIMEOUT, O_MEM,
           O_WARMUP, O_MIN_RUNS, O_MIN_SECONDS, O_FORMAT, O_NO_VERIFY, O_TARGET, O_SQL, O_MEM_BUDGET,
           O_BUILD_JOBS, O_GPUS };
    static const struct option longopts[] = {{"data", required_argument, 0, O_DATA},
                                              {"backend", required_argument, 0, O_BACKEND},
                                              {"target", required_argument, 0, O_TARGET},
                                              {"mode", required_argument, 0, O_MODE},
                                              {"queries", required_argument, 0, O_QUERIES},
                                              {"seeds", required_argument, 0, O_SEEDS},
                                              {"threshold", required_argument, 0, O_THRESHOLD},
                                              {"out", required_argument, 0, O_OUT},
                                              {"threads", required_argument, 0, O_THREADS},
                                              {"timeout", required_argument, 0, O_TIMEOUT},
                                              {"mem-limit", required_argument, 0, O_MEM},
                                              {"warmup", required_argument, 0, O_WARMUP},
                                              {"min-runs", required_argument, 0, O_MIN_RUNS},
                                              {"min-seconds", required_argument, 0, O_MIN_SECONDS},
                                              {"format", required_argument, 0, O_FORMAT},
                                              {"no-verify", no_argument, 0, O_NO_VERIFY},
                                              {"build-jobs", required_argument, 0, O_BUILD_JOBS},
                                              {"gpus", required_argument, 0, O_GPUS},
                                              {"sql", required_argument, 0, O_SQL},
                                              {"mem-budget", required_argument, 0, O_MEM_BUDGET},
                                              {"verbose", no_argument, 0, 'v'},
                                              {"quiet", no_argument, 0, 'q'},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    dkb_eval_opts *o = &c->o;
    long v;
    double d;
    int ch;
    int backend_given = 0;
    optind = 1;
    opterr = 0;   /* one error line, ours */
    while ((ch = getopt_long(argc, argv, ":qvh", longopts, NULL)) != -1) {
        switch (ch) {
        case O_DATA: o->store = optarg; break;
        case O_BACKEND:
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                return cli_usage_error("--backend %s: expected cpu or cuda", optarg);
            o->backend = optarg;
            backend_given = 1;
            c->backend_given = 1;
            break;
        case O_TARGET:
            if (strcmp(optarg, "python") && strcmp(optarg, "triton"))
                return cli_usage_error("--target %s: expected python or triton", optarg);
            o->target = optarg;
            break;
        case O_MODE:
            if (!strcmp(optarg, "full")) o->modes = DKB_EVAL_FULL;
            else if (!strcmp(optarg, "core")) o->modes = DKB_EVAL_CORE;
            else if (!strcmp(optarg, "all")) o->modes = DKB_EVAL_FULL | DKB_EVAL_CORE;
            else return cli_usage_error("--mode %s: expected full, core or all", optarg);
            c->mode_given = 1;
            break;
        case O_QUERIES: {
            uint32_t mask;
            dkb_error err = {0};
            if (dkb__eval_parse_queries(optarg, &mask, &err)) return cli_usage_error("%s", err.msg);
            o->queries = optarg;
            break;
        }
        case O_SEEDS:
            if (cli_parse_int("--seeds", optarg, 0, DKB_EVAL_MAX_SEEDS, &v)) return DKB_EXIT_USAGE;
            o->nseeds = (int)v;
            c->seeds_given = 1;
            break;
        case O_THRESHOLD:
            if (cli_parse_double("--threshold", optarg, &d)) return DKB_EXIT_USAGE;
            if (d <= 0) return cli_usage_error("--threshold %s: expected a positive number", optarg);
            o->threshold = d;
            break;
        case O_OUT: o->out = optarg; break;
        case O_THREADS:
            if (cli_parse_int("--threads", optarg, 0, 4096, &v)) return DKB_EXIT_USAGE;
            o->threads = (int)v;
            break;
        case O_TIMEOUT:
            if (cli_parse_double("--timeout", optarg, &d)) return DKB_EXIT_USAGE;
            if (d <= 0 || d > 86400) return cli_usage_error("--timeout %s: expected seconds in (0, 86400]", optarg);
            o->timeout_s = d;
            break;
        case O_MEM:
            if (cli_parse_double("--mem-limit", optarg, &d)) return DKB_EXIT_USAGE;
            if (d <= 0 || d > 1 << 20) return cli_usage_error("--mem-limit %s: expected GB in (0, 1048576]", optarg);
            o->mem_bytes = (uint64_t)llround(d * (double)(1ull << 30));
            break;
        case O_WARMUP:
            if (cli_parse_int("--warmup", optarg, 0, 1000000, &v)) return DKB_EXIT_USAGE;
            o->warmup = (int)v;
            break;
        case O_MIN_RUNS:
            if (cli_parse_int("--min-runs", optarg, 1, 1000000, &v)) return DKB_EXIT_USAGE;
            o->min_runs = (int)v;
            break;
        case O_MIN_SECONDS:
            if (cli_parse_double("--min-seconds", optarg, &d)) return DKB_EXIT_USAGE;
            if (d < 0 || d > 3600) return cli_usage_error("--min-seconds %s: expected seconds in [0, 3600]", optarg);
            o->min_seconds = d;
            break;
        case O_FORMAT:
            if (cli_parse_format("--format", optarg, &c->fmt)) return DKB_EXIT_USAGE;
            break;
        case O_NO_VERIFY: o->no_verify = true; break;
        case O_BUILD_JOBS:
            if (cli_parse_int("--build-jobs", optarg, 1, 64, &v)) return DKB_EXIT_USAGE;
            o->build_jobs = (int)v;
            break;
        case O_GPUS:
            if (cli_parse_int("--gpus", optarg, 1, 1024, &v)) return DKB_EXIT_USAGE;
            o->gpus = (int)v;
            break;
        case O_SQL: o->sql = optarg; break;
        case O_MEM_BUDGET:
            if (cli_parse_size("--mem-budget", optarg, &o->mem_budget)) return DKB_EXIT_USAGE;
            break;
        case 'v': c->verbose = 1; break;
        case 'q': c->quiet = 1; break;
        case 'h': usage(stdout); return -1;
        case ':': return cli_usage_error("eval: option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("eval: unknown option %s", argv[optind - 1]);
        }
    }
    if (cli_one_operand("eval", "DIR (the candidate directory)", argc, argv)) return DKB_EXIT_USAGE;
    o->dir = argv[optind];
    if (o->gpus && !(o->target && !strcmp(o->target, "triton")) && !(o->backend && !strcmp(o->backend, "cuda")))
        return cli_usage_error("eval: --gpus: the CUDA backend's (--backend cuda or --target triton); the CPU "
                               "times one row at a time");
    if (o->target && !strcmp(o->target, "triton")) {
        if (backend_given && strcmp(o->backend, "cuda"))
            return cli_usage_error("eval: --target triton: the CUDA backend's (not --backend %s)", o->backend);
        o->backend = "cuda";
    }
    if (!o->store) return cli_usage_error("eval: missing --data STORE");
    if (o->sql) {
        if (o->modes & DKB_EVAL_CORE)
            return cli_usage_error("eval: --mode core: a SQL task (--sql) is full mode only");
        if (o->queries) return cli_usage_error("eval: --queries: not with --sql (the SQL file is the one query)");
        if (o->target) return cli_usage_error("eval: --target python: not with --sql yet");
        o->modes = DKB_EVAL_FULL;
    }
    int ranks = dkb__comm_launched_size();
    if (ranks != 1) {
        /* mpirun -np K dkb eval: full mode of C or CUDA candidates
         * (docs/distributed.md, "The harness across ranks") */
        const char *no = o->target                 ? (!strcmp(o->target, "triton") ? "--target triton" : "--target python")
                         : o->sql                  ? "--sql"
                         : o->mem_budget           ? "--mem-budget"
                         : c->mode_given && (o->modes & DKB_EVAL_CORE) ? "--mode core"
                                                                       : NULL;
        if (no) {
            if (dkb__comm_launched_rank()) return DKB_EXIT_USAGE; /* rank 0 says why */
            return cli_usage_error("eval: %s: not across ranks yet (under mpirun: full mode, C or CUDA "
                                   "candidates; docs/distributed.md)", no);
        }
        o->modes = DKB_EVAL_FULL;
    }
    if (o->mem_budget) {
        if (o->modes & DKB_EVAL_CORE)
            return cli_usage_error("eval: --mem-budget: full mode only (core mode's inputs are the prepared whole "
                                   "columns); use --mode full");
        if (o->target) return cli_usage_error("eval: --mem-budget: not with --target python yet");
        if (o->sql) return cli_usage_error("eval: --mem-budget: not with --sql");
        o->modes = DKB_EVAL_FULL;
    }
    return 0;
}

int cmd_eval(int argc, char **argv) {
    eval_cli c = {.o = {.out = "eval-results", .backend = "cpu", .nseeds = 5, .threshold = 1.0, .timeout_s = 120,
                        .warmup = 2, .min_runs = 10, .min_seconds = 1.0}};
    char *cmd = cli_command_line(argc, argv);   /* before getopt permutes argv */
    c.o.command_line = cmd;
    int rc = parse(argc, argv, &c);
    if (rc) {
        free(cmd);
        return rc < 0 ? DKB_EXIT_OK : rc;
    }

    /* mpirun -np K: every rank evaluates, rank 0 reports (docs/distributed.md) */
    dkb__comm *comm = NULL;
    dkb_error err = {0};
    if (dkb__comm_launched_size() != 1) {
        if ((rc = dkb__comm_open(&comm, &err))) {
            free(cmd);
            return cli_fail("eval", rc, &err);
        }
        if (dkb__comm_rank(comm)) {
            c.quiet = 1;
            if (!freopen("/dev/null", "w", stdout)) {
                fprintf(stderr, "dkb eval: error: rank %d: /dev/null: cannot open for stdout\n", dkb__comm_rank(comm));
                dkb__comm_abort(comm, DKB_EXIT_FAIL);
            }
        }
        c.o.comm = comm;
    }
    int rank = comm ? dkb__comm_rank(comm) : 0;
    cli_bar bar;
    cli_bar_init(&bar, c.quiet);
    dkb_progress prog = cli_bar_progress(&bar);
    dkb_eval_results res;
    rc = dkb__eval_run(&c.o, &prog, &res, &err);
    cli_bar_done(&bar);
    if (rc) {
        dkb__eval_results_free(&res);
        free(cmd);
        /* ranks: every rank failed alike (agreed); rank 0 says it */
        int code = rank ? DKB_EXIT_FAIL : cli_fail("eval", rc, &err);
        dkb__comm_close(comm);
        return code;
    }
    if (rank) {
        /* the other ranks write nothing: rank 0 reports the rows */
        int code = res.harness_errors ? DKB_EXIT_FAIL : DKB_EXIT_OK;
        dkb__eval_results_free(&res);
        free(cmd);
        dkb__comm_close(comm);
        return code;
    }
    if (c.verbose) cli_verify_note(stderr, "eval", c.o.store, c.o.no_verify, &res.verify);
    if (c.o.sql && c.seeds_given && c.o.nseeds > 0 && res.nseeds == 1 && !c.quiet)
        fprintf(stderr, "dkb eval: note: a SQL task has no parameters: checked on seed 0 only (--seeds %d not used)\n",
                c.o.nseeds);
    int exit_code = DKB_EXIT_OK;
    if ((rc = dkb__results_write(&res, &err))) exit_code = cli_fail("eval", rc, &err);
    if (!c.quiet) {
        for (int i = 0; i < res.nignored; i++)
            fprintf(stderr, "dkb eval: note: ignored %s (candidates are named qNN.full.c or qNN.core.c; .cu with --backend cuda; .py with --target python)\n", res.ignored[i]);
        if (!res.n) fprintf(stderr, "dkb eval: note: no candidates to evaluate in %s\n", c.o.dir);
    }
    dkb_results_format fmt = c.fmt == CLI_FMT_JSON ? DKB_RESULTS_JSON : c.fmt == CLI_FMT_CSV ? DKB_RESULTS_CSV
                                                                                             : DKB_RESULTS_TABLE;
    dkb_error perr = {0};
    if (dkb__results_print(&res, fmt, stdout, &perr)) {
        fprintf(stderr, "dkb eval: error: writing the output failed\n");
        exit_code = DKB_EXIT_FAIL;
    }
    if (!exit_code && !c.quiet) {
        FILE *f = fmt == DKB_RESULTS_TABLE ? stdout : stderr;
        fprintf(f, "%sresults: %s/results.json, %s/summary.md\n", fmt == DKB_RESULTS_TABLE ? "" : "dkb eval: ", c.o.out,
                c.o.out);
    }
    if (res.harness_errors) {
        fprintf(stderr, "dkb eval: error: %d row%s met a harness error (see %s/results.json)\n", res.harness_errors,
                res.harness_errors == 1 ? "" : "s", c.o.out);
        exit_code = DKB_EXIT_FAIL;
    }
    dkb__eval_results_free(&res);
    free(cmd);
    dkb__comm_close(comm);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb eval: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return exit_code;
}
