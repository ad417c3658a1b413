/* cmd_optimize.c: `dkb optimize`: the repair loop: a model writes candidate
 * files for TPC-H queries, the harness judges each, the verdict goes back to
 * the model, up to R rounds of K replies; trajectories in RUNDIR, resumable;
 * the tables at the end (as `dkb report RUNDIR`). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h" // defines: dkb__self_exe
#include "cli.h"
#include "cli_verify.h"
#include "harness/eval.h"
#include "optimize/loop.h"
#include "optimize/summary.h"
#include "optimize/target.h"   // defines: dkb__opt_target_find, dkb__opt_target_names

int cli_parse_context(const char *s, int *workload, int *hardware);   /* cmd_prompt.c */

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb optimize --model NAME --data STORE [options]\n"
            "\n"
            "For each query x mode, ask a model for a complete candidate file, evaluate it\n"
            "with the harness (as dkb eval), send the verdict back (diagnostics, failing\n"
            "parameters and the first differing row, timings against baseline and\n"
            "bandwidth floor), up to R rounds of K replies; keep the best valid candidate.\n"
            "Every request and verdict goes to RUNDIR/trajectory.jsonl; running the same\n"
            "command again resumes where it stopped. See docs/optimize.md.\n"
            "\n"
            "model:\n"
            "  --model NAME        model name sent to the API (required)\n"
            "  --base-url URL      OpenAI-compatible endpoint (default https://api.openai.com/v1)\n"
            "  --api-key-env VAR   environment variable holding the key (default OPENAI_API_KEY)\n"
            "  --model-cmd CMD     instead of HTTP: run CMD (sh -c), conversation on stdin\n"
            "  --temperature T     sampling temperature (default: the server's)\n"
            "  --reply-tokens N    max tokens per reply (default: the server's)\n"
            "  --request-timeout S per request (default 600)\n"
            "  --price-in USD, --price-out USD   per million tokens, for the cost limit\n"
            "limits (the loop stops asking once one is passed, and says so):\n"
            "  --max-tokens N      tokens in + out over the run\n"
            "  --max-cost USD      cost over the run (needs --price-in/--price-out)\n"
            "  --max-wall S        wall seconds of this invocation\n"
            "loop:\n"
            "  --data STORE        the store (required)\n"
            "  --queries LIST      q01,q06,... or all (default all)\n"
            "  --sql FILE.sql      a SQL task instead of --queries: the model writes\n"
            "                      NAME.full.c (NAME the file's stem), evaluated as dkb eval\n"
            "                      --sql does (full mode only; libduckdb needed)\n"
            "  --target T          c (default); cuda: qNN.MODE.cu files evaluated as\n"
            "                      dkb eval --backend cuda (needs a GPU: without one the\n"
            "                      command fails before it asks anything); python:\n"
            "                      qNN.MODE.py (PyTorch) evaluated as dkb eval --target\n"
            "                      python on the CPU; triton: the same files with Triton\n"
            "                      kernels, evaluated as dkb eval --target triton (a GPU)\n"
            "  --mode M            core, full or all (default core; full with --mem-budget)\n"
            "  --mem-budget SIZE   full mode under a memory budget (64M, 16G): candidates are\n"
            "                      evaluated as dkb eval --mem-budget does and the prompt\n"
            "                      describes the partitioned ABI (--target c or cuda)\n"
            "  --rounds R          rounds per query (default 5)\n"
            "  --samples K         independent replies per round (default 1)\n"
            "  --context LIST      workload,hardware (default), workload, hardware or none\n"
            "  --templates DIR     prompt templates (default $DKB_PROMPTS, else prompts/)\n"
            "  --jobs N            model requests at once (default 4); evaluations run one\n"
            "                      at a time per device\n"
            "  --gpus N            GPU targets: evaluations at once, one per GPU (default:\n"
            "                      every GPU seen; dkb eval --gpus)\n"
            "  --out RUNDIR        run directory (default optimize-run)\n"
            "harness (as dkb eval):\n"
            "  --seeds N, --threshold X, --threads N, --timeout S, --warmup N,\n"
            "  --min-runs N, --min-seconds S\n"
            "  --no-verify         trust the store: skip the check of its crc32s and structure\n"
            "                      (by default done once at the start, per version of its\n"
            "                      files, recorded in STORE/.dkb-verified or ~/.cache/dkb)\n"
            "  -v, --verbose       say how the store was verified (or that a record stood)\n"
            "  -q, --quiet         no progress lines or table\n"
            "  -h, --help          this help\n"
            "\n"
            "Exit status: 0 when the loop ran (whatever the model did), 1 when the run\n"
            "directory, store (missing or corrupt), templates or model backend are\n"
            "unusable (the endpoint answers 401, 403 or 404 or cannot be reached: the loop\n"
            "stops asking and the run resumes once it is fixed), --target cuda or triton\n"
            "finds no GPU or the target cannot be evaluated (python or triton with --sql),\n"
            "2 for a bad command line.\n"
            "\n"
            "example:\n"
            "  dkb optimize --model gpt-4.1 --data data/sf1 --queries q01,q06 --out runs/gpt41\n"
            "  dkb optimize --model gpt-4.1 --data data/sf1 --target cuda --out runs/gpt41-cuda\n"
            "  dkb optimize --model gpt-4.1 --data data/sf1 --target python --mode full --out runs/gpt41-py\n");
}

/* The loop's events on stderr: warnings unless --quiet, one line per
 * attempt when stderr is also a terminal. ctx: the int quiet. */
static void print_event(void *ctx, const dkb_opt_event *ev) {
    if (*(const int *)ctx) return;
    if (ev->kind == DKB_OPT_EV_WARNING) {
        fprintf(stderr, "dkb optimize: warning: %s\n", ev->message);
    } else if (isatty(2)) {
        fprintf(stderr, "dkb optimize: %s %s round %d/%d sample %d/%d: %s (raw speedup %.2fx; best so far %.2fx)\n",
                ev->query, ev->mode, ev->round, ev->rounds, ev->sample, ev->samples, ev->cls, ev->raw_speedup,
                ev->best_speedup);
    }
}

int cmd_optimize(int argc, char **argv) {
    enum { O_MODEL = 256, O_BASE_URL, O_KEY_ENV, O_MODEL_CMD, O_TEMP, O_REPLY_TOKENS, O_REQ_TIMEOUT, O_PRICE_IN,
           O_PRICE_OUT, O_MAX_TOKENS, O_MAX_COST, O_MAX_WALL, O_DATA, O_QUERIES, O_TARGET, O_MODE, O_ROUNDS,
           O_SAMPLES, O_CONTEXT, O_TEMPLATES, O_JOBS, O_GPUS, O_OUT, O_SEEDS, O_THRESHOLD, O_THREADS, O_TIMEOUT,
           O_WARMUP, O_MIN_RUNS, O_MIN_SECONDS, O_NO_VERIFY, O_SQL, O_MEM_BUDGET };
    static const struct option longopts[] = {
        {"model", required_argument, 0, O_MODEL},           {"base-url", required_argument, 0, O_BASE_URL},
        {"api-key-env", required_argument, 0, O_KEY_ENV},   {"model-cmd", required_argument, 0, O_MODEL_CMD},
        {"temperature", required_argument, 0, O_TEMP},      {"reply-tokens", required_argument, 0, O_REPLY_TOKENS},
        {"request-timeout", required_argument, 0, O_REQ_TIMEOUT},
        {"price-in", required_argument, 0, O_PRICE_IN},     {"price-out", required_argument, 0, O_PRICE_OUT},
        {"max-tokens", required_argument, 0, O_MAX_TOKENS}, {"max-cost", required_argument, 0, O_MAX_COST},
        {"max-wall", required_argument, 0, O_MAX_WALL},     {"data", required_argument, 0, O_DATA},
        {"queries", required_argument, 0, O_QUERIES},       {"target", required_argument, 0, O_TARGET},
        {"mode", required_argument, 0, O_MODE},             {"rounds", required_argument, 0, O_ROUNDS},
        {"samples", required_argument, 0, O_SAMPLES},       {"context", required_argument, 0, O_CONTEXT},
        {"templates", required_argument, 0, O_TEMPLATES},   {"jobs", required_argument, 0, O_JOBS},
        {"gpus", required_argument, 0, O_GPUS},
        {"out", required_argument, 0, O_OUT},               {"seeds", required_argument, 0, O_SEEDS},
        {"threshold", required_argument, 0, O_THRESHOLD},   {"threads", required_argument, 0, O_THREADS},
        {"timeout", required_argument, 0, O_TIMEOUT},       {"warmup", required_argument, 0, O_WARMUP},
        {"min-runs", required_argument, 0, O_MIN_RUNS},     {"min-seconds", required_argument, 0, O_MIN_SECONDS},
        {"sql", required_argument, 0, O_SQL},               {"no-verify", no_argument, 0, O_NO_VERIFY},         {"verbose", no_argument, 0, 'v'},
        {"quiet", no_argument, 0, 'q'},                     {"help", no_argument, 0, 'h'},
        {"mem-budget", required_argument, 0, O_MEM_BUDGET},
        {0, 0, 0, 0}};
    dkb_opt_opts o = {.target = "c", .modes = DKB_EVAL_CORE, .rounds = 5, .samples = 1, .jobs = 4, .workload = 1,
                      .hardware = 1, .out = "optimize-run", .nseeds = 5, .threshold = 1.0, .timeout_s = 120,
                      .warmup = 2, .min_runs = 10, .min_seconds = 1.0};
    dkb_model_opts_init(&o.model);
    const char *queries = "all";
    int queries_given = 0, mode_given = 0;
    int base_url_given = 0, verbose = 0, quiet = 0;
    o.progress = print_event;
    o.progress_ctx = &quiet;
    /* recorded in run.json: nothing secret in it (keys never travel on the
     * command line, only the name of their environment variable) */
    char *cmd = cli_command_line(argc, argv);
    o.command_line = cmd;
    long v;
    double d;
    int ch, rc = 0;
    optind = 1;
    opterr = 0;
    while (!rc && (ch = getopt_long(argc, argv, ":qvh", longopts, NULL)) != -1) {
        switch (ch) {
        case O_MODEL: o.model.model = optarg; break;
        case O_BASE_URL:
            o.model.base_url = optarg;
            base_url_given = 1;
            break;
        case O_KEY_ENV: o.model.api_key_env = optarg; break;
        case O_MODEL_CMD: o.model.cmd = optarg; break;
        case O_TEMP:
            if ((rc = cli_parse_double("--temperature", optarg, &d))) break;
            if (d < 0 || d > 2) rc = cli_usage_error("--temperature %s: expected 0..2", optarg);
            o.model.temperature = d;
            break;
        case O_REPLY_TOKENS:
            if (!(rc = cli_parse_int("--reply-tokens", optarg, 1, 10000000, &v))) o.model.max_tokens = v;
            break;
        case O_REQ_TIMEOUT:
            if ((rc = cli_parse_double("--request-timeout", optarg, &d))) break;
            if (d <= 0) rc = cli_usage_error("--request-timeout %s: expected seconds > 0", optarg);
            o.model.timeout_s = d;
            break;
        case O_PRICE_IN:
        case O_PRICE_OUT:
            if ((rc = cli_parse_double(ch == O_PRICE_IN ? "--price-in" : "--price-out", optarg, &d))) break;
            if (d < 0) rc = cli_usage_error("%s %s: expected USD >= 0", ch == O_PRICE_IN ? "--price-in" : "--price-out", optarg);
            *(ch == O_PRICE_IN ? &o.model.price_in_per_mtok : &o.model.price_out_per_mtok) = d;
            break;
        case O_MAX_TOKENS:
            if (!(rc = cli_parse_int("--max-tokens", optarg, 1, LONG_MAX, &v))) o.max_tokens = v;
            break;
        case O_MAX_COST:
            if ((rc = cli_parse_double("--max-cost", optarg, &d))) break;
            if (d <= 0) rc = cli_usage_error("--max-cost %s: expected USD > 0", optarg);
            o.max_cost = d;
            break;
        case O_MAX_WALL:
            if ((rc = cli_parse_double("--max-wall", optarg, &d))) break;
            if (d <= 0) rc = cli_usage_error("--max-wall %s: expected seconds > 0", optarg);
            o.max_wall = d;
            break;
        case O_DATA: o.store = optarg; break;
        case O_QUERIES: queries = optarg, queries_given = 1; break;
        case O_SQL: o.sql = optarg; break;
        case O_TARGET:
            if (!dkb__opt_target_find(optarg))
                rc = cli_usage_error("--target %s: expected %s", optarg, dkb__opt_target_names());
            o.target = optarg;
            break;
        case O_MODE:
            mode_given = 1;
            if (!strcmp(optarg, "core")) o.modes = DKB_EVAL_CORE;
            else if (!strcmp(optarg, "full")) o.modes = DKB_EVAL_FULL;
            else if (!strcmp(optarg, "all")) o.modes = DKB_EVAL_CORE | DKB_EVAL_FULL;
            else rc = cli_usage_error("--mode %s: expected core, full or all", optarg);
            break;
        case O_ROUNDS:
            if (!(rc = cli_parse_int("--rounds", optarg, 1, 1000, &v))) o.rounds = (int)v;
            break;
        case O_SAMPLES:
            if (!(rc = cli_parse_int("--samples", optarg, 1, 100, &v))) o.samples = (int)v;
            break;
        case O_CONTEXT: rc = cli_parse_context(optarg, &o.workload, &o.hardware); break;
        case O_TEMPLATES: o.templates = optarg; break;
        case O_JOBS:
            if (!(rc = cli_parse_int("--jobs", optarg, 1, 64, &v))) o.jobs = (int)v;
            break;
        case O_GPUS:
            if (!(rc = cli_parse_int("--gpus", optarg, 1, 64, &v))) o.gpus = (int)v;
            break;
        case O_OUT: o.out = optarg; break;
        case O_SEEDS:
            if (!(rc = cli_parse_int("--seeds", optarg, 0, DKB_EVAL_MAX_SEEDS, &v))) o.nseeds = (int)v;
            break;
        case O_THRESHOLD:
            if ((rc = cli_parse_double("--threshold", optarg, &d))) break;
            if (d <= 0) rc = cli_usage_error("--threshold %s: expected a positive number", optarg);
            o.threshold = d;
            break;
        case O_THREADS:
            if (!(rc = cli_parse_int("--threads", optarg, 0, 4096, &v))) o.threads = (int)v;
            break;
        case O_TIMEOUT:
            if ((rc = cli_parse_double("--timeout", optarg, &d))) break;
            if (d <= 0 || d > 86400) rc = cli_usage_error("--timeout %s: expected seconds in (0, 86400]", optarg);
            o.timeout_s = d;
            break;
        case O_WARMUP:
            if (!(rc = cli_parse_int("--warmup", optarg, 0, 1000000, &v))) o.warmup = (int)v;
            break;
        case O_MIN_RUNS:
            if (!(rc = cli_parse_int("--min-runs", optarg, 1, 1000000, &v))) o.min_runs = (int)v;
            break;
        case O_MIN_SECONDS:
            if ((rc = cli_parse_double("--min-seconds", optarg, &d))) break;
            if (d < 0 || d > 3600) rc = cli_usage_error("--min-seconds %s: expected seconds in [0, 3600]", optarg);
            o.min_seconds = d;
            break;
        case O_NO_VERIFY: o.no_verify = true; break;
        case O_MEM_BUDGET: rc = cli_parse_size("--mem-budget", optarg, &o.mem_budget); break;
        case 'v': verbose = 1; break;
        case 'q': quiet = 1; break;
        case 'h':
            usage(stdout);
            free(cmd);
            return DKB_EXIT_OK;
        case ':': rc = cli_usage_error("optimize: option %s needs a value", argv[optind - 1]); break;
        default: rc = cli_usage_error("optimize: unknown option %s", argv[optind - 1]); break;
        }
    }
    if (!rc && optind < argc) rc = cli_usage_error("optimize: unexpected argument '%s'", argv[optind]);
    if (!rc && (!o.model.model || !*o.model.model)) rc = cli_usage_error("optimize: missing --model NAME");
    if (!rc && o.model.cmd && base_url_given)
        rc = cli_usage_error("optimize: --model-cmd and --base-url exclude each other (a command or an HTTP endpoint)");
    if (!rc && o.model.cmd && !*o.model.cmd) rc = cli_usage_error("optimize: --model-cmd: empty command");
    if (!rc && o.max_cost > 0 && o.model.price_in_per_mtok <= 0 && o.model.price_out_per_mtok <= 0)
        rc = cli_usage_error("optimize: --max-cost needs --price-in and/or --price-out (USD per million tokens)");
    if (!rc && !o.store) rc = cli_usage_error("optimize: missing --data STORE");
    if (!rc && o.sql) {
        /* a SQL task: one task, full mode (the default here, and the only mode) */
        if (queries_given) rc = cli_usage_error("optimize: --queries: not with --sql (the SQL file is the one query)");
        else if (mode_given && o.modes != DKB_EVAL_FULL)
            rc = cli_usage_error("optimize: --mode %s: a SQL task (--sql) is full mode only",
                                 o.modes == DKB_EVAL_CORE ? "core" : "all");
        o.modes = DKB_EVAL_FULL;
    } else if (!rc) {
        dkb_error qe = {0};
        if (dkb__eval_parse_queries(queries, &o.queries, &qe)) rc = cli_usage_error("%s", qe.msg);
    }
    if (!rc && o.mem_budget) {
        /* candidates stream in full mode, C or CUDA: the default mode becomes full */
        if (mode_given && o.modes != DKB_EVAL_FULL)
            rc = cli_usage_error("optimize: --mem-budget: full mode only (core mode's inputs are whole columns)");
        else if (strcmp(o.target, "c") && strcmp(o.target, "cuda"))
            rc = cli_usage_error("optimize: --mem-budget: --target c or cuda only so far");
        else if (o.sql) rc = cli_usage_error("optimize: --mem-budget: not with --sql");
        o.modes = DKB_EVAL_FULL;
    }
    if (rc) {
        free(cmd);
        return rc;
    }
    char exe[PATH_MAX];
    if (dkb__self_exe(exe, sizeof exe)) {
        free(cmd);
        fprintf(stderr, "dkb optimize: error: /proc/self/exe: cannot find the dkb binary for the harness workers\n");
        return DKB_EXIT_FAIL;
    }
    o.exe = exe;

    dkb_opt_outcome out;
    dkb_error err = {0};
    rc = dkb__opt_run(&o, &out, &err);
    free(cmd);
    if (rc) return cli_fail("optimize", rc, &err);
    if (verbose) cli_verify_note(stderr, "optimize", o.store, o.no_verify, &out.verify);
    if (out.model_failed)
        fprintf(stderr, "dkb optimize: error: stopped asking: %s; fix the endpoint, key or model name and run the same command again to resume\n",
                out.stopped);
    else if (out.stopped[0])
        fprintf(stderr, "dkb optimize: stopped asking: %s; run again with a larger limit to resume\n", out.stopped);
    if (!quiet) {
        fprintf(stderr, "dkb optimize: %d of %d query x mode pairs done; %d requests, %d evaluations, %lld tokens in, %lld out, %.4f USD\n",
                out.finished, out.tasks, out.requests, out.evaluations, (long long)out.tokens_in,
                (long long)out.tokens_out, out.cost_usd);
        const char *dirs[1] = {o.out};
        if (dkb__opt_report(dirs, 1, stdout, NULL, &err)) return cli_fail("optimize", err.code, &err);
        printf("\ntrajectory: %s/trajectory.jsonl (dkb report %s --html report.html)\n", o.out, o.out);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb optimize: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return out.model_failed ? DKB_EXIT_FAIL : DKB_EXIT_OK;
}
