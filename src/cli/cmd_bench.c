/* cmd_bench.c: `dkb bench`: on the best backend available (CUDA with a GPU,
 * else the CPU), generate the store if it is missing, run the 22 baseline
 * plans and the expert implementations (src/kernels/<backend>/qNN.full.*)
 * through the harness in full mode, print the per-query table and totals,
 * and write results.json and a self-contained report.html. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bench/bench.h"
#include "cli.h"
#include "cli_verify.h"
#include "common/fsutil.h"     // defines: dkb__mkdir_p, dkb__source_root
#include "dist/comm.h"           // defines: dkb__comm (mpirun -np K dkb bench)
#include "dkb/tensor.h"          // defines: dkb_tp_cuda_available, dkb_tp_device_query
#include "harness/eval.h"
#include "queries/stream.h"      // defines: dkb__cuda_h2d_gbs (the transfer floor)

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb bench [--sf SF] [--data DIR] [--backend auto|cpu|cuda] [options]\n"
            "\n"
            "The benchmark: run the 22 TPC-H baseline plans and the expert implementations\n"
            "(qNN.full.c on the CPU, qNN.full.cu on CUDA, qNN.full.py with --target triton)\n"
            "through the harness, as dkb eval\n"
            "--mode full does: each expert checked on seed 0 plus N random parameter sets,\n"
            "then timed interleaved with the baseline. Prints per query the baseline and\n"
            "expert medians, the speedup, the bandwidth floor and time/floor, and whether\n"
            "the expert passed; then the pass rate, overall speedup and geometric mean.\n"
            "A query without an expert file is 'missing': the baseline stands (1.0x).\n"
            "The store is generated first (as dkb gen) when DIR holds none.\n"
            "\n"
            "options:\n"
            "  --backend B         auto (default: cuda when a GPU is usable, else cpu), cpu, cuda\n"
            "  --sf SF             scale factor (default 1 on cpu, 10 on cuda)\n"
            "  --data DIR          the store (default data/sf<SF>); generated if missing\n"
            "  --experts DIR       expert files (default src/kernels/<backend> of the source tree;\n"
            "                      src/kernels/triton with --target triton)\n"
            "  --target T          triton: the Triton experts (qNN.full.py, dkb eval --target\n"
            "                      triton) against the CUDA baseline; implies --backend cuda\n"
            "  --gpus N            CUDA: queries spread over N GPUs at once, one timed worker\n"
            "                      per GPU (dkb eval --gpus; default every GPU seen)\n"
            "  --queries LIST      q01,q06,... or all (default all; blanks ignored)\n"
            "  --seeds N           random parameter seeds besides seed 0 (default 5)\n"
            "  --threads N         threads for generation, baseline and experts (default: all cores)\n"
            "  --quick             short timing (1 warm-up, at least 3 runs and 0.2 s per query;\n"
            "                      default 2 warm-ups, at least 10 runs and 1 s)\n"
            "  --timeout S         wall-clock limit per worker run (default 300)\n"
            "  --mem-budget SIZE   memory a query's columns may take at once (64M, 16G): the\n"
            "                      baseline runs partitioned where they do not fit, the experts\n"
            "                      get the budget and a loader (dkb eval --mem-budget; the\n"
            "                      store needs dkb gen --partitions P); the table adds per\n"
            "                      query the bytes each side streamed (on cuda also the\n"
            "                      transfer floor: those bytes over the pinned host-to-device\n"
            "                      bandwidth measured in the same run, and time over it)\n"
            "  --out DIR           results (default bench-results): results.json, report.html,\n"
            "                      summary.md, work/\n"
            "  --format FMT        table (default), json (results.json) or csv on stdout\n"
            "  --no-verify         trust the store: skip the check of its crc32s and structure\n"
            "                      (by default done once per version of its files, recorded\n"
            "                      in DIR/.dkb-verified or ~/.cache/dkb; docs/store.md)\n"
            "  -v, --verbose       say how the store was verified (or that a record stood)\n"
            "  -q, --quiet         no progress bar or notes\n"
            "  -h, --help          this help\n"
            "\n"
            "Exit status: 0 when the bench ran (experts that fail are results, not errors),\n"
            "1 for an error (store corrupt or unusable, results directory unusable, no GPU for\n"
            "--backend cuda, a baseline or worker that failed on the harness's side), 2 for a\n"
            "bad command line.\n"
            "\n"
            "examples:\n"
            "  dkb bench                          # SF 1 on a CPU machine, SF 10 with a GPU\n"
            "  dkb bench --sf 0.1 --queries q01,q06 --quick\n"
            "  dkb bench --target triton --sf 10  # the Triton experts on a GPU\n"
            "  dkb bench --backend cpu --data data/sf0.1-p8 --mem-budget 4M --quick\n"
            "  mpirun -np 2 dkb bench --backend cpu --data data/sf0.1-p8 --quick   # across ranks:\n"
            "                      each expert timed on the 2 ranks and on rank 0 alone, with the\n"
            "                      scaling efficiency t1 / (K tK); CPU backend, an existing store of\n"
            "                      partitions, no --mem-budget (docs/distributed.md)\n");
}

typedef struct bench_cli {
    dkb_eval_opts o;
    const char *backend;   /* "auto", "cpu", "cuda" */
    int backend_given;     /* --backend on the command line */
    double sf;             /* 0: the backend's default */
    const char *data, *experts;
    cli_format fmt;
    int quick, quiet, verbose;
    char queries[512];     /* --queries without blanks ("q01, q06" as typed in a shell) */
} bench_cli;

static int parse_sf(const char *s, double *sf) {
    if (cli_parse_double("--sf", s, sf)) return DKB_EXIT_USAGE;
    if (*sf <= 0) return cli_usage_error("--sf %s: scale factor must be positive", s);
    if (*sf < 1 && (int)(1000 * *sf) < 1) return cli_usage_error("--sf %s: below the smallest scale factor, 0.001", s);
    if (*sf > 100000) return cli_usage_error("--sf %s: above the largest scale factor, 100000", s);
    return 0;
}

static int parse(int argc, char **argv, bench_cli *c) {
    enum { O_SF = 256, O_DATA, O_BACKEND, O_EXPERTS, O_QUERIES, O_SEEDS, O_OUT, O_FORMAT, O_THREADS, O_QUICK,
           O_TIMEOUT, O_NO_VERIFY, O_MEM_BUDGET, O_TARGET, O_GPUS };
    static const struct option longopts[] = {
        {"sf", required_argument, 0, O_SF},           {"data", required_argument, 0, O_DATA},
        {"backend", required_argument, 0, O_BACKEND}, {"experts", required_argument, 0, O_EXPERTS},
        {"queries", required_argument, 0, O_QUERIES}, {"seeds", required_argument, 0, O_SEEDS},
        {"out", required_argument, 0, O_OUT},         {"format", required_argument, 0, O_FORMAT},
        {"threads", required_argument, 0, O_THREADS}, {"quick", no_argument, 0, O_QUICK},
        {"timeout", required_argument, 0, O_TIMEOUT}, {"quiet", no_argument, 0, 'q'},
        {"no-verify", no_argument, 0, O_NO_VERIFY},   {"verbose", no_argument, 0, 'v'},
        {"mem-budget", required_argument, 0, O_MEM_BUDGET}, {"target", required_argument, 0, O_TARGET},
        {"gpus", required_argument, 0, O_GPUS},
        {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
    dkb_eval_opts *o = &c->o;
    long v;
    double d;
    int ch;
    optind = 1;
    opterr = 0;   /* one error line, ours */
    while ((ch = getopt_long(argc, argv, ":qvh", longopts, NULL)) != -1) {
        switch (ch) {
        case O_SF:
            if (parse_sf(optarg, &c->sf)) return DKB_EXIT_USAGE;
            break;
        case O_DATA: c->data = optarg; break;
        case O_BACKEND:
            if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                return cli_usage_error("--backend %s: expected auto, cpu or cuda", optarg);
            c->backend = optarg;
            c->backend_given = 1;
            break;
        case O_GPUS:
            if (cli_parse_int("--gpus", optarg, 1, 1024, &v)) return DKB_EXIT_USAGE;
            o->gpus = (int)v;
            break;
        case O_TARGET:
            if (strcmp(optarg, "triton")) return cli_usage_error("--target %s: expected triton", optarg);
            o->target = optarg;
            break;
        case O_EXPERTS: c->experts = optarg; break;
        case O_QUERIES: {
            size_t n = 0;
            for (const char *p = optarg; *p; p++) {
                if (*p == ' ' || *p == '\t') continue;
                if (n + 1 >= sizeof c->queries) return cli_usage_error("--queries: list too long");
                c->queries[n++] = *p;
            }
            c->queries[n] = '\0';
            uint32_t mask;
            dkb_error err = {0};
            if (dkb__eval_parse_queries(c->queries, &mask, &err)) return cli_usage_error("%s", err.msg);
            o->queries = c->queries;
            break;
        }
        case O_SEEDS:
            if (cli_parse_int("--seeds", optarg, 0, DKB_EVAL_MAX_SEEDS, &v)) return DKB_EXIT_USAGE;
            o->nseeds = (int)v;
            break;
        case O_OUT: o->out = optarg; break;
        case O_FORMAT:
            if (cli_parse_format("--format", optarg, &c->fmt)) return DKB_EXIT_USAGE;
            break;
        case O_THREADS:
            if (cli_parse_int("--threads", optarg, 0, 4096, &v)) return DKB_EXIT_USAGE;
            o->threads = (int)v;
            break;
        case O_QUICK: c->quick = 1; break;
        case O_TIMEOUT:
            if (cli_parse_double("--timeout", optarg, &d)) return DKB_EXIT_USAGE;
            if (d <= 0 || d > 86400) return cli_usage_error("--timeout %s: expected seconds in (0, 86400]", optarg);
            o->timeout_s = d;
            break;
        case O_NO_VERIFY: o->no_verify = true; break;
        case O_MEM_BUDGET:
            if (cli_parse_size("--mem-budget", optarg, &o->mem_budget)) return DKB_EXIT_USAGE;
            break;
        case 'v': c->verbose = 1; break;
        case 'q': c->quiet = 1; break;
        case 'h': usage(stdout); return -1;
        case ':': return cli_usage_error("bench: option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("bench: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error("bench: unexpected argument '%s'", argv[optind]);
    if (dkb__comm_launched_size() != 1) {
        /* mpirun -np K dkb bench: the CPU experts across ranks, or the CUDA
         * ones with --backend cuda (docs/distributed.md) */
        const char *no = o->target ? "--target triton" : o->mem_budget ? "--mem-budget" : NULL;
        if (no) {
            if (dkb__comm_launched_rank()) return DKB_EXIT_USAGE; /* rank 0 says why */
            return cli_usage_error("bench: %s: not across ranks yet (under mpirun: no --mem-budget, no --target; "
                                   "docs/distributed.md)", no);
        }
        if (strcmp(c->backend, "cuda")) c->backend = "cpu"; /* auto is the CPU across ranks: cuda is asked for */
    }
    if (o->gpus && c->backend_given && !strcmp(c->backend, "cpu"))
        return cli_usage_error("bench: --gpus: the CUDA backend's; the CPU times one query at a time");
    if (o->target) {
        if (c->backend_given && strcmp(c->backend, "cuda"))
            return cli_usage_error("bench: --target triton: the CUDA backend's (not --backend %s)", c->backend);
        if (o->mem_budget) return cli_usage_error("bench: --mem-budget: not with --target triton yet");
        c->backend = "cuda";
    }
    return 0;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The progress bar says "bench" (the harness reports "eval"). */
static void relabel(void *ctx, const char *what, uint64_t done, uint64_t total) {
    const dkb_progress *inner = ctx;
    (void)what;
    dkb__progress(inner, "bench", done, total);
}

static int run_bench(bench_cli *c, const char *cmd) {
    dkb_error err = {0};
    /* backend */
    const char *backend = c->backend;
    char device[256] = "";
    if (!strcmp(backend, "auto")) backend = dkb_tp_cuda_available() ? "cuda" : "cpu";
    else if (!strcmp(backend, "cuda") && !dkb_tp_cuda_available()) {
        fprintf(stderr, "dkb bench: error: --backend cuda: no usable GPU (or a build without CUDA); use --backend cpu\n");
        return DKB_EXIT_FAIL;
    }
    if (!strcmp(backend, "cuda")) {
        dkb_tp_device_info dev;
        if (!dkb_tp_device_query(&dev, &err)) snprintf(device, sizeof device, "%s", dev.name);
    }
    double sf = c->sf > 0 ? c->sf : !strcmp(backend, "cuda") ? 10 : 1;
    char databuf[64];
    const char *data = c->data;
    if (!data) {
        snprintf(databuf, sizeof databuf, "data/sf%g", sf);
        data = databuf;
    }
    /* the experts of the source tree this binary was built from */
    const char *root = dkb__source_root();
    char experts[4200];
    const char *expert_dir = c->experts;
    if (!expert_dir) {
        const char *sub = c->o.target ? c->o.target : backend;
        snprintf(experts, sizeof experts, "%s/src/kernels/%s", root, sub);
        if (!is_dir(experts)) snprintf(experts, sizeof experts, "src/kernels/%s", sub);
        expert_dir = experts;
    } else if (!is_dir(expert_dir)) {
        fprintf(stderr, "dkb bench: error: --experts %s: not a directory\n", expert_dir);
        return DKB_EXIT_FAIL;
    }
    char exe[PATH_MAX];
    if (dkb__self_exe(exe, sizeof exe)) {
        fprintf(stderr, "dkb bench: error: /proc/self/exe: cannot find the dkb binary for the harness workers\n");
        return DKB_EXIT_FAIL;
    }

    /* the store */
    cli_bar bar;
    cli_bar_init(&bar, c->quiet);
    int generated = 0;
    double gen_s = 0;
    int rc = 0;
    if (!c->o.comm) {
        int gen_threads = c->o.threads > 0 ? c->o.threads : cli_default_threads();
        if (!c->quiet && access(data, F_OK) != 0)
            fprintf(stderr, "dkb bench: generating SF %g into %s (%d threads)\n", sf, data, gen_threads);
        rc = dkb__bench_ensure_store(data, sf, gen_threads, cli_bar_progress(&bar), &generated, &gen_s, &err);
        cli_bar_done(&bar);
        if (rc) return cli_fail("bench", rc, &err);
        if (generated && !c->quiet) fprintf(stderr, "dkb bench: generated %s in %.1f s\n", data, gen_s);
        /* verified here, before anything is written; the evaluation then trusts it */
        dkb__verify_info vi = {0};
        if (!c->o.no_verify && (rc = dkb__store_verify_dir(data, DKB__VERIFY_FULL, &vi, &err)))
            return cli_fail("bench", rc, &err);
        if (c->verbose) cli_verify_note(stderr, "bench", data, c->o.no_verify, &vi);
        c->o.no_verify = true;
    }
    /* across ranks the store is not generated (every rank would write it):
     * the evaluation opens and verifies it on every rank and checks that it
     * is rank 0's, failing every rank in one line otherwise */

    /* an empty experts directory stands in for a missing default one: every row is "missing" */
    char empty[4200];
    const char *ext = c->o.target ? "py" : !strcmp(backend, "cuda") ? "cu" : "c";
    int found = is_dir(expert_dir) ? dkb__bench_count_experts(expert_dir, ext) : 0;
    if (!is_dir(expert_dir)) {
        snprintf(empty, sizeof empty, "%s/no-experts", c->o.out);
        if ((rc = dkb__mkdir_p(empty, &err))) return cli_fail("bench", rc, &err);
        if (!c->quiet) fprintf(stderr, "dkb bench: note: no experts directory %s: every query runs the baseline\n", expert_dir);
        expert_dir = empty;
    }

    c->o.dir = expert_dir;
    c->o.store = data;
    c->o.exe = exe;
    c->o.backend = backend;
    c->o.modes = DKB_EVAL_FULL;
    if (!c->o.queries) c->o.queries = "all";
    if (c->quick) {
        c->o.warmup = 1;
        c->o.min_runs = 3;
        c->o.min_seconds = 0.2;
    }
    c->o.command_line = cmd;
    if (!c->quiet)
        fprintf(stderr, "dkb bench: backend %s%s%s%s, store %s, experts %s (%d file%s), results %s\n", backend,
                *device ? " " : "", device, c->o.target ? ", target triton" : "", data, expert_dir, found,
                found == 1 ? "" : "s", c->o.out);

    dkb_progress inner = cli_bar_progress(&bar);
    dkb_progress prog = {inner.fn ? relabel : NULL, &inner};
    dkb_eval_results res;
    rc = dkb__eval_run(&c->o, &prog, &res, &err);
    cli_bar_done(&bar);
    const int rank = c->o.comm ? dkb__comm_rank(c->o.comm) : 0;
    if (rc) {
        dkb__eval_results_free(&res);
        return rank ? DKB_EXIT_FAIL : cli_fail("bench", rc, &err); /* ranks: failed alike; rank 0 says it */
    }
    if (rank) {
        /* the other ranks write nothing: rank 0 reports */
        int code = res.harness_errors ? DKB_EXIT_FAIL : DKB_EXIT_OK;
        dkb__eval_results_free(&res);
        return code;
    }
    dkb_bench_info info = {.backend = backend, .target = c->o.target, .device = device, .sf = sf, .store = data, .experts = expert_dir,
                           .experts_found = found, .generated = generated, .gen_seconds = gen_s, .quick = c->quick,
                           .command_line = cmd};
    /* the transfer floor's bandwidth, measured in this run (queries/stream.h) */
    if (c->o.mem_budget && !strcmp(backend, "cuda")) info.h2d_gbs = dkb__cuda_h2d_gbs();
    int exit_code = DKB_EXIT_OK;
    if ((rc = dkb__bench_write(&res, &info, &err))) exit_code = cli_fail("bench", rc, &err);
    if (!c->quiet)
        for (int i = 0; i < res.nignored; i++)
            fprintf(stderr, "dkb bench: note: ignored %s/%s (experts are named qNN.full.%s)\n", expert_dir,
                    res.ignored[i], ext);
    dkb_error perr = {0};
    if (c->fmt == CLI_FMT_JSON) {
        cJSON *doc = dkb__bench_json(&res, &info);
        char *text = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        if (text) printf("%s\n", text);
        else rc = dkb_fail(&perr, DKB_ENOMEM, "out of memory");
        free(text);
    } else if (c->fmt == CLI_FMT_CSV) {
        rc = dkb__bench_print_csv(&res, stdout, &perr);
    } else {
        rc = dkb__bench_print_table(&res, &info, stdout, &perr);
    }
    if (rc) exit_code = cli_fail("bench", rc, &perr);
    if (!exit_code && !c->quiet) {
        FILE *f = c->fmt == CLI_FMT_TABLE ? stdout : stderr;
        fprintf(f, "%sresults: %s/results.json, report: %s/report.html\n", c->fmt == CLI_FMT_TABLE ? "" : "dkb bench: ",
                c->o.out, c->o.out);
    }
    if (res.harness_errors) {
        fprintf(stderr, "dkb bench: error: %d row%s met a harness error (see %s/results.json)\n", res.harness_errors,
                res.harness_errors == 1 ? "" : "s", c->o.out);
        exit_code = DKB_EXIT_FAIL;
    }
    dkb__eval_results_free(&res);
    return exit_code;
}

int cmd_bench(int argc, char **argv) {
    bench_cli c = {.backend = "auto",
                   .o = {.out = "bench-results", .nseeds = 5, .threshold = 1.0, .timeout_s = 300, .warmup = 2,
                         .min_runs = 10, .min_seconds = 1.0}};
    char *cmd = cli_command_line(argc, argv);   /* before getopt permutes argv */
    int rc = parse(argc, argv, &c);
    if (rc) {
        free(cmd);
        return rc < 0 ? DKB_EXIT_OK : rc;
    }
    /* mpirun -np K: every rank runs the bench, rank 0 reports (docs/distributed.md) */
    dkb__comm *comm = NULL;
    if (dkb__comm_launched_size() != 1) {
        dkb_error err = {0};
        if ((rc = dkb__comm_open(&comm, &err))) {
            free(cmd);
            return cli_fail("bench", rc, &err);
        }
        if (dkb__comm_rank(comm)) {
            c.quiet = 1;
            c.verbose = 0;
            if (!freopen("/dev/null", "w", stdout)) {
                fprintf(stderr, "dkb bench: error: rank %d: /dev/null: cannot open for stdout\n", dkb__comm_rank(comm));
                dkb__comm_abort(comm, DKB_EXIT_FAIL);
            }
        }
        c.o.comm = comm;
        c.o.ranks_solo = dkb__comm_size(comm) > 1; /* each expert also on rank 0 alone: the efficiency */
    }
    rc = run_bench(&c, cmd);
    dkb__comm_close(comm);
    free(cmd);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb bench: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return rc;
}
