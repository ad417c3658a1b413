/* cmd_run.c: `dkb run`: run TPC-H baseline plans on a store: parameters
 * from a seed and overrides, the result as a table, CSV or JSON, timing
 * (load apart from query; warm-ups, runs, median/min/max), and checks
 * against golden CSVs or the official answers.
 *
 * With --time each query's prepare runs once before timing, so that the
 * columns it reads are resident (CUDA: copied to the device) before the
 * first warm-up; the copy is reported apart from the query time (columns,
 * bytes, seconds, GB/s from dkb_tp_resident), with the query's "floor":
 * the bytes of the distinct store columns its prepare reads
 * (dkb_tp_touched), and, given --bandwidth, the time reading them once
 * would take at that bandwidth. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_query.h"
#include "common/timing.h"  // defines: dkb__now_ms, dkb__timing_summary
#include "dkb/schema.h" // defines: dkb_table_def_get, DKB_TABLE_COUNT
#include "dist/comm.h"         // defines: dkb__comm (mpirun ranks)
#include "dist/dist_store.h"   // defines: dkb__dist_store_check
#include "dist/dist_device.h"  // defines: dkb__dist_use_device (a GPU per rank)
#include "dist/dist_nccl.h"    // defines: dkb__dist_open_nccl (--comm nccl)
#include "queries/partition.h" // defines: dkb__query_run_ranks, dkb__part_info
#include "queries/stream.h"    // defines: dkb__cuda_free_bytes (--mem-budget auto)
#include "store/verify_cache.h" // defines: dkb__store_verify_cached

#define MAX_OVERRIDES 64

/* Tolerances: goldens hold DuckDB's unrounded values (FLOAT to the last
 * bits, DECIMAL exact); official answers are rounded to 2 decimals (0.01
 * absolute allowance, 1e-6 relative for Q17's slightly-off official value). */
static const dkb_compare_opts GOLDEN_OPTS = {1e-9, 1e-9, 0, false};
static const dkb_compare_opts OFFICIAL_OPTS = {0.01, 1e-6, 1e-6, true};

typedef enum { EXPECT_NONE = 0, EXPECT_FILE, EXPECT_DIR, EXPECT_OFFICIAL, EXPECT_OFFICIAL_DIR } expect_kind;

typedef struct run_opts {
    const char *data;
    dkb_tp_backend backend;
    const char *backend_name;
    uint64_t seed;
    char *ov[MAX_OVERRIDES];
    int nov;
    cli_format fmt;
    int fmt_given, time, runs, warmup, threads;
    double bandwidth_gbps; /* --bandwidth: for floor ms (0: not given) */
    int profile;           /* --profile: one more run with per-operation timing */
    expect_kind expect;
    const char *expect_path;
    int verify;              /* 0: structure (default), 1: --verify (crc32s too), -1: --no-verify */
    int64_t mem_budget;      /* --mem-budget: bytes a query's columns may take at once (0: none) */
    int comm_nccl;           /* --comm nccl: the ranks' collectives through NCCL (cuda), else MPI */
} run_opts;

typedef struct run_env {
    dkb_store *db;
    dkb_tp *tp;
    double sf, load_ms;
    int nprinted;     /* results printed so far (separators in `all`) */
    int ntimed;       /* queries timed, and the sum of their medians */
    double median_sum;
    double floor_ms_sum;     /* sum of the timed queries' floor ms (--bandwidth) */
    int64_t floor_bytes_sum; /* and of their floor bytes */
    int noted;               /* the query whose partitioned run was last described */
    dkb__comm *comm;         /* the ranks (mpirun), or this process alone; --comm nccl: the NCCL one over them */
} run_env;

/* One query's load before timing: what its prepare made resident, and its
 * floor (the distinct store columns that prepare reads). */
typedef struct load_stats {
    int64_t columns, bytes;  /* newly resident (dkb_tp_resident's growth) */
    double seconds;          /* copying them (dkb_tp_resident's growth) */
    double prepare_ms;       /* wall time of that prepare, copies included */
    int64_t floor_columns, floor_bytes;
} load_stats;

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb run QUERY --data STORE [options]\n"
            "\n"
            "Run the TensorPlan baseline of TPC-H query QUERY (q01..q22, 1..22, or all:\n"
            "the 22 in order) on a store (dkb gen / dkb import) and print its result\n"
            "with the parameters used. Parameters are drawn from --seed as qgen draws\n"
            "them (seed 0: the qualification values), then --param overrides apply.\n"
            "\n"
            "options:\n"
            "  --data STORE          the store directory (required)\n"
            "  --backend B           cpu (default) or cuda (where built)\n"
            "  --seed S              parameter seed (default 0)\n"
            "  --param NAME=VALUE    set one parameter (repeatable; not with all); see\n"
            "                        `dkb sql QUERY --params-json` for the names\n"
            "  --format FMT          table (default), csv (header and rows only; one\n"
            "                        query) or json\n"
            "  --time                time it: W warm-ups, then N runs; print the load time\n"
            "                        (store open + backend context) and the query time\n"
            "                        (median, min, max in ms); csv: on stderr. Before\n"
            "                        timing, the query's prepare runs once so its columns\n"
            "                        are resident (cuda: on the GPU); that load and the\n"
            "                        floor (bytes of the distinct store columns the query\n"
            "                        reads) are printed apart from the query time\n"
            "  --runs N              timed runs (default 5; implies --time)\n"
            "  --warmup W            warm-up runs (default 1; implies --time)\n"
            "  --threads N           worker threads (default 0: all cores)\n"
            "  --mem-budget SIZE     memory a query's columns may take at once (64M, 16G;\n"
            "                        K M G T are powers of 1024): a query whose columns\n"
            "                        do not fit runs partition by partition (a store made\n"
            "                        with dkb gen --partitions P), with the same result;\n"
            "                        one line on stderr says how (docs/partitions.md);\n"
            "                        on cuda the device memory the data may take, the\n"
            "                        runs streamed through pinned double-buffered\n"
            "                        staging (a second line: bytes, copy and compute\n"
            "                        times, the transfer floor); auto: the free device\n"
            "                        memory when the run starts (cuda only)\n"
            "  --profile             after the runs, run once more timing every TensorPlan\n"
            "                        operation (each waits for the backend) and print\n"
            "                        where the time goes, longest first\n"
            "  --bandwidth GBPS      with --time: also print each query's floor in ms,\n"
            "                        its floor bytes read once at GBPS GB/s (10^9 B/s;\n"
            "                        e.g. the copy bandwidth bench/gpu/bw.cu measures),\n"
            "                        and median/floor (implies --time)\n"
            "  --expect FILE         compare with a golden CSV (exact decimals; floats\n"
            "                        within 1e-9 abs + 1e-9 rel); exit 1 on a difference\n"
            "  --expect-dir DIR      the same with DIR/qNN-sS.csv (S the seed), e.g.\n"
            "                        tests/answers/sf0.01; works with all\n"
            "  --expect-official FILE  compare with an official answer (answers/qN.out;\n"
            "                        SF 1, seed 0, no --param): numbers within 0.01 abs\n"
            "                        + 1e-6 rel, trailing spaces of strings ignored\n"
            "  --expect-official-dir DIR  the same with DIR/qN.out; works with all\n"
            "  --verify              check every file's crc32 too, not only the structure\n"
            "                        (dictionary codes, text offsets; the default), once per\n"
            "                        version of the files (a record as dkb eval keeps)\n"
            "  --no-verify           trust the store: no check beyond dkb_store_open's\n"
            "  --comm C              how the ranks' collectives travel: mpi (default: host\n"
            "                        memory, over MPI under mpirun) or nccl (--backend cuda\n"
            "                        only: through NCCL on the ranks' GPUs, one GPU per rank;\n"
            "                        bootstrapped through MPI, or alone without mpirun);\n"
            "                        the result is the same\n"
            "  -h, --help            this help\n"
            "\n"
            "With an --expect option the result is printed only if --format is given;\n"
            "each query prints 'ok' or one error line with the first difference.\n"
            "\n"
            "Under mpirun (mpirun -np K dkb run ...) every rank runs the query on its\n"
            "share of the partitions of a store made with dkb gen --partitions P (the\n"
            "same store on every rank), the partials are gathered and merged, and rank 0\n"
            "prints the result, the same as one process's (docs/distributed.md). With\n"
            "--comm nccl the partials go through NCCL (copied to the GPU and back).\n"
            "\n"
            "examples:\n"
            "  dkb run q06 --data data/sf1\n"
            "  dkb run 6 --data data/sf1 --seed 7 --param discount=0.05 --time\n"
            "  dkb run all --data data/sf0.01 --expect-dir tests/answers/sf0.01\n"
            "  mpirun -np 3 dkb run all --data data/sf0.1-p8 --expect-dir tests/answers/sf0.1\n"
            "  mpirun -np 2 dkb run all --data data/sf1-p8 --backend cuda --comm nccl\n");
}

/* The timed runs of one query: their times in run order, and their
 * summary (median, min, max). */
typedef struct timing {
    int n;
    double *ms; /* n run times, in run order */
    dkb_timing sum;
} timing;

/* t->sum from t->ms (sorted in a copy: t->ms keeps the run order). */
static int timing_summary(timing *t, dkb_error *err) {
    double *s = malloc((size_t)t->n * sizeof *s);
    if (!s) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    memcpy(s, t->ms, (size_t)t->n * sizeof *s);
    t->sum = dkb__timing_summary(s, t->n);
    free(s);
    return 0;
}

/* --profile: one more run of q with every TensorPlan operation timed
 * (each waits for the backend), its operations longest first in *n. */
enum { PROFILE_MAX = 40 };
typedef struct profile_run {
    int n;
    double ms;  /* the whole run */
    dkb_tp_profile_entry e[PROFILE_MAX];
} profile_run;

/* One run of q under --mem-budget (dkb_query_run without one); says on
 * stderr how a partitioned run went, once per query. */
static int run_budget(const run_opts *o, run_env *env, const dkb_query *q, const dkb_params *p, dkb_result *res,
                      dkb_error *err) {
    dkb__part_info info;
    int rc = dkb__query_run_ranks(q, env->tp, env->db, p, o->mem_budget, o->threads, env->comm, res, &info, err);
    int ranks = dkb__comm_size(env->comm);
    if (!rc && ranks > 1 && env->noted != q->number) {
        env->noted = q->number; /* described once, by rank 0 */
        if (!dkb__comm_rank(env->comm)) {
            fprintf(stderr, "dkb run: %s on %d ranks: %d partition%s split over the ranks, rank 0 runs ", q->name, ranks,
                    info.partitions, info.partitions == 1 ? "" : "s");
            if (info.part_hi > info.part_lo)
                fprintf(stderr, "%d-%d in %d run%s per pass", info.part_lo, info.part_hi - 1, info.chunks,
                        info.chunks == 1 ? "" : "s");
            else
                fprintf(stderr, "none");
            fprintf(stderr, ", %d pass%s, %lld bytes of partials gathered%s", info.passes,
                    info.passes == 1 ? "" : "es", (long long)info.gathered_bytes, o->comm_nccl ? " through NCCL" : "");
            if (o->mem_budget > 0)
                fprintf(stderr, "; resident %lld bytes, at most %lld bytes at once (--mem-budget %lld)",
                        (long long)info.resident_bytes, (long long)info.peak_bytes, (long long)o->mem_budget);
            fprintf(stderr, "\n");
        }
    }
    if (!rc && info.partitioned && env->noted != q->number) {
        env->noted = q->number;
        fprintf(stderr,
                "dkb run: %s partitioned: %d partition%s in %d run%s per pass, %d pass%s; resident %lld bytes, "
                "streamed %lld bytes, at most %lld bytes at once (--mem-budget %lld)\n",
                q->name, info.partitions, info.partitions == 1 ? "" : "s", info.chunks, info.chunks == 1 ? "" : "s",
                info.passes, info.passes == 1 ? "" : "es", (long long)info.resident_bytes,
                (long long)info.streamed_bytes, (long long)info.peak_bytes, (long long)o->mem_budget);
        if (info.slots) {
            /* streamed (CUDA): what the copies cost against the transfer floor */
            double floor_ms = info.h2d_gbs > 0 ? (double)info.copied_bytes / (info.h2d_gbs * 1e9) * 1e3 : NAN;
            fprintf(stderr,
                    "dkb run: %s streamed: %lld bytes in %d load%s through %d device buffer%s of %lld bytes; "
                    "copies %.3f ms on the device (stager %.3f ms), compute %.3f ms, waited %.3f ms, passes %.3f ms; "
                    "pinned H2D %.1f GB/s, transfer floor %.3f ms\n",
                    q->name, (long long)info.copied_bytes, info.loads, info.loads == 1 ? "" : "s", info.slots,
                    info.slots == 1 ? "" : "s", (long long)info.slot_bytes, info.copy_ms, info.fill_ms,
                    info.compute_ms, info.stall_ms, info.wall_ms, info.h2d_gbs, floor_ms);
        }
    }
    return rc;
}

static int run_profiled(const run_opts *o, run_env *env, const dkb_query *q, const dkb_params *p, profile_run *pr, dkb_error *err) {
    dkb_result res = {0};
    dkb_tp_reset(env->tp);
    int rc = dkb_tp_profile_start(env->tp);
    if (rc) return dkb_fail(err, rc, "profile: out of memory");
    dkb_tp_profile_clear(env->tp);
    double t0 = dkb__now_ms();
    rc = run_budget(o, env, q, p, &res, err);
    pr->ms = dkb__now_ms() - t0;
    dkb_tp_profile_stop(env->tp);
    pr->n = dkb_tp_profile_read(env->tp, pr->e, PROFILE_MAX);
    dkb_result_free(&res);
    dkb_tp_reset(env->tp);
    return rc;
}

static void print_profile_line(FILE *f, const dkb_query *q, const profile_run *pr) {
    fprintf(f, "%s profile: %.3f ms (one run, each operation waited for):", q->name, pr->ms);
    for (int i = 0; i < pr->n; i++)
        fprintf(f, "%s %s %.3f ms x%lld (%.0f%%)", i ? "," : "", pr->e[i].op, pr->e[i].seconds * 1e3,
                (long long)pr->e[i].calls, pr->ms > 0 ? 100.0 * pr->e[i].seconds * 1e3 / pr->ms : 0.0);
    fprintf(f, "\n");
}

/* Run q W + N times (1 when not timing), keeping the last result. */
static int run_timed(const run_opts *o, run_env *env, const dkb_query *q, const dkb_params *p, dkb_result *res,
                     timing *t, dkb_error *err) {
    int warmup = o->time ? o->warmup : 0, runs = o->time ? o->runs : 1, rc = 0;
    t->n = runs;
    t->ms = calloc((size_t)runs, sizeof *t->ms);
    if (!t->ms) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int k = 0; k < warmup + runs && !rc; k++) {
        dkb_tp_reset(env->tp);
        dkb_result_free(res);
        double t0 = dkb__now_ms();
        rc = run_budget(o, env, q, p, res, err);
        double t1 = dkb__now_ms();
        if (k >= warmup) t->ms[k - warmup] = t1 - t0;
    }
    dkb_tp_reset(env->tp);
    if (!rc) rc = timing_summary(t, err);
    return rc;
}

static double gbps(int64_t bytes, double seconds) { return seconds > 0 ? (double)bytes / seconds / 1e9 : 0; }

/* Floor ms of l at the --bandwidth (0 when not given). */
static double floor_ms(const run_opts *o, const load_stats *l) {
    return o->bandwidth_gbps > 0 ? (double)l->floor_bytes / (o->bandwidth_gbps * 1e9) * 1e3 : 0;
}

/* Run q's prepare once (then reset), so that its columns are resident
 * before timing (under --mem-budget on CUDA not those of the tables its
 * runs stream); fill l. 0, or an error "qNN prepare: ..." in err. */
static int preload(const run_opts *o, run_env *env, const dkb_query *q, const dkb_params *p, load_stats *l,
                   dkb_error *err) {
    dkb_tp_resident_stats before, after;
    dkb_tensor_set in;
    memset(&in, 0, sizeof in);
    memset(l, 0, sizeof *l);
    dkb_tp_reset(env->tp);
    dkb_tp_resident(env->tp, &before);
    double t0 = dkb__now_ms();
    /* under a budget the tables the runs stream stay on the host (CUDA) */
    if (o->mem_budget) dkb__part_host_views(env->tp, q, env->db, 1);
    int rc = q->prepare(env->tp, env->db, p, &in);
    dkb__part_host_views(env->tp, q, env->db, 0);
    dkb_error tperr = {0};
    int st = dkb_tp_status(env->tp, &tperr);
    l->prepare_ms = dkb__now_ms() - t0;
    dkb_tp_resident(env->tp, &after);
    dkb_tp_touched(env->tp, &l->floor_columns, &l->floor_bytes);
    dkb_tp_reset(env->tp);
    l->columns = after.columns - before.columns;
    l->bytes = after.bytes - before.bytes;
    l->seconds = after.seconds - before.seconds;
    if (st) return dkb_fail(err, st, "%s prepare: %s", q->name, tperr.msg[0] ? tperr.msg : dkb_strerror(st));
    if (rc) return dkb_fail(err, rc, "%s prepare: failed (%s)", q->name, dkb_err_name(rc));
    return 0;
}

/* "qNN floor: ..." and, on a backend with resident columns, "qNN load: ...". */
static void print_load_lines(FILE *f, const run_opts *o, const dkb_query *q, const load_stats *l, const timing *t) {
    fprintf(f, "%s floor: %lld column%s, %lld bytes (%.1f MB)", q->name, (long long)l->floor_columns,
            l->floor_columns == 1 ? "" : "s", (long long)l->floor_bytes, (double)l->floor_bytes / 1e6);
    double fm = floor_ms(o, l);
    if (o->bandwidth_gbps > 0)
        fprintf(f, "; %.4f ms at %.1f GB/s; median/floor %.2f", fm, o->bandwidth_gbps, fm > 0 ? t->sum.median / fm : 0);
    fprintf(f, "\n");
    if (o->backend != DKB_TP_CPU)
        fprintf(f, "%s load: %lld column%s, %lld bytes made resident in %.3f ms (%.2f GB/s; prepare %.3f ms)\n", q->name,
                (long long)l->columns, l->columns == 1 ? "" : "s", (long long)l->bytes, l->seconds * 1e3,
                gbps(l->bytes, l->seconds), l->prepare_ms);
}

static void print_time_line(FILE *f, const run_opts *o, const run_env *env, const dkb_query *q, const timing *t) {
    int threads = o->threads ? o->threads : cli_default_threads();
    fprintf(f, "%s time: load %.1f ms; query median %.3f ms, min %.3f, max %.3f (%d run%s after %d warm-up%s; %s, %d thread%s)\n",
            q->name, env->load_ms, t->sum.median, t->sum.min, t->sum.max, t->n, t->n == 1 ? "" : "s", o->warmup,
            o->warmup == 1 ? "" : "s", o->backend_name, threads, threads == 1 ? "" : "s");
}

/* The expectation file for q, or NULL when none (path in buf). */
static const char *expect_file(const run_opts *o, const dkb_query *q, char *buf, size_t n) {
    switch (o->expect) {
    case EXPECT_FILE:
    case EXPECT_OFFICIAL: return o->expect_path;
    case EXPECT_DIR:
        snprintf(buf, n, "%s/%s-s%llu.csv", o->expect_path, q->name, (unsigned long long)o->seed);
        return buf;
    case EXPECT_OFFICIAL_DIR: snprintf(buf, n, "%s/q%d.out", o->expect_path, q->number); return buf;
    default: return NULL;
    }
}

/* Compare res with the expected file: 0, or an error in err. */
static int check_result(const run_opts *o, const char *file, const dkb_result *res, dkb_error *err) {
    dkb_result want = {0};
    int official = o->expect == EXPECT_OFFICIAL || o->expect == EXPECT_OFFICIAL_DIR;
    int rc = official ? dkb_result_read_official(file, res, &want, err) : dkb_result_read_csv(file, res, &want, err);
    if (!rc) {
        dkb_error cmp = {0};
        rc = dkb_result_compare(res, &want, official ? &OFFICIAL_OPTS : &GOLDEN_OPTS, &cmp);
        if (rc) dkb_fail(err, rc, "%s: %s", file, cmp.msg);
    }
    dkb_result_free(&want);
    return rc;
}

/* ---- one query: run and check it, then print what it gave ---- */

/* What one query's run produced, filled before anything is printed. */
typedef struct outcome {
    const dkb_query *q;
    dkb_params p;          /* the parameters used */
    dkb_result res;        /* the last run's result (res.cols NULL: none) */
    timing t;              /* the runs (one when not timing) */
    load_stats load;       /* --time: the preload */
    profile_run prof;      /* --profile: the profiled run */
    const char *file;      /* the expectation (NULL: none) */
    char fbuf[4096];       /* file, when formatted from a directory */
    int checked;           /* res was compared with file */
    int rc;                /* 0, or the first failure, described in err */
    dkb_error err;
} outcome;

/* Run oc->q with oc->p: preload, runs, profile, check (each step only when
 * the ones before succeeded); add a timed query to env's sums. */
static void run_outcome(const run_opts *o, run_env *env, outcome *oc) {
    oc->file = expect_file(o, oc->q, oc->fbuf, sizeof oc->fbuf);
    int rc = 0;
    if (o->time) rc = preload(o, env, oc->q, &oc->p, &oc->load, &oc->err);
    if (!rc) rc = run_timed(o, env, oc->q, &oc->p, &oc->res, &oc->t, &oc->err);
    if (!rc && o->profile) rc = run_profiled(o, env, oc->q, &oc->p, &oc->prof, &oc->err);
    if (!rc && o->time) {
        env->ntimed++, env->median_sum += oc->t.sum.median;
        env->floor_ms_sum += floor_ms(o, &oc->load);
        env->floor_bytes_sum += oc->load.floor_bytes;
    }
    if (!rc && oc->file) {
        rc = check_result(o, oc->file, &oc->res, &oc->err);
        oc->checked = 1;
    }
    oc->rc = dkb__comm_agree(env->comm, rc, &oc->err);  /* a failure on any rank is the query's */
}

/* The result itself is printed unless an --expect option was given
 * without --format. */
static int shows_result(const run_opts *o, const outcome *oc) {
    return oc->res.cols && (!oc->file || o->fmt_given);
}

/* The lines besides the result, on f: time, floor and load (--time),
 * profile (--profile), and the check's "ok" line. */
static void print_notes(FILE *f, const run_opts *o, const run_env *env, const outcome *oc) {
    if (oc->res.cols && o->time) {
        print_time_line(f, o, env, oc->q, &oc->t);
        print_load_lines(f, o, oc->q, &oc->load, &oc->t);
    }
    if (oc->res.cols && o->profile) print_profile_line(f, oc->q, &oc->prof);
    if (oc->checked && !oc->rc) {
        cli_params_line(f, oc->q, o->seed, &oc->p);
        fprintf(f, ": ok, %lld row%s match%s %s\n", (long long)oc->res.nrows, oc->res.nrows == 1 ? "" : "s",
                oc->res.nrows == 1 ? "es" : "", oc->file);
    }
}

/* --format table: the parameter line and the table, then the notes, all on
 * stdout (a blank line between queries). */
static void print_table(const run_opts *o, run_env *env, const outcome *oc) {
    if (shows_result(o, oc)) {
        if (env->nprinted++) printf("\n");
        cli_params_line(stdout, oc->q, o->seed, &oc->p);
        printf("\n");
        dkb_result_print(&oc->res, DKB_RES_FMT_TABLE, stdout);
    }
    print_notes(stdout, o, env, oc);
}

/* --format csv: the header and rows alone on stdout, the notes on stderr. */
static void print_csv(const run_opts *o, const run_env *env, const outcome *oc) {
    if (shows_result(o, oc)) dkb_result_print(&oc->res, DKB_RES_FMT_CSV, stdout);
    print_notes(stderr, o, env, oc);
}

/* JSON numbers as dkb run has always written them: a Raw item of
 * printf's text (non-finite: null). */
static cJSON *fixed(double v, int decimals) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return isfinite(v) ? cJSON_CreateRaw(buf) : cJSON_CreateNull();
}

static cJSON *integer(long long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    return cJSON_CreateRaw(buf);
}

/* Add item to obj as key; 0 (and item freed) when either is NULL. */
static int put(cJSON *obj, const char *key, cJSON *item) {
    if (obj && item && cJSON_AddItemToObject(obj, key, item)) return 1;
    cJSON_Delete(item);
    return 0;
}

/* "timing": the load, the runs, the floor and the resident load. */
static cJSON *timing_json(const run_opts *o, const run_env *env, const outcome *oc) {
    const timing *t = &oc->t;
    const load_stats *l = &oc->load;
    cJSON *j = cJSON_CreateObject(), *ms = cJSON_CreateArray(), *rl = cJSON_CreateObject();
    int ok = ms && rl && put(j, "load_ms", fixed(env->load_ms, 3)) && put(j, "warmup", integer(o->warmup)) &&
             put(j, "runs", integer(t->n)) && put(j, "median_ms", fixed(t->sum.median, 3)) &&
             put(j, "min_ms", fixed(t->sum.min, 3)) && put(j, "max_ms", fixed(t->sum.max, 3));
    for (int i = 0; ok && i < t->n; i++) {
        cJSON *v = fixed(t->ms[i], 3);
        ok = v && cJSON_AddItemToArray(ms, v);
        if (!ok) cJSON_Delete(v);
    }
    if (ok) {
        ok = put(j, "ms", ms);
        ms = NULL;   /* j's now, or freed by put */
    }
    ok = ok && put(j, "backend", cJSON_CreateString(o->backend_name)) &&
         put(j, "threads", integer(o->threads ? o->threads : cli_default_threads())) &&
         put(j, "floor_columns", integer(l->floor_columns)) && put(j, "floor_bytes", integer(l->floor_bytes));
    if (ok && o->bandwidth_gbps > 0) {
        double fm = floor_ms(o, l);
        ok = put(j, "bandwidth_gbps", fixed(o->bandwidth_gbps, 3)) && put(j, "floor_ms", fixed(fm, 6)) &&
             put(j, "median_over_floor", fixed(fm > 0 ? t->sum.median / fm : 0, 3));
    }
    ok = ok && put(rl, "columns", integer(l->columns)) && put(rl, "bytes", integer(l->bytes)) &&
         put(rl, "seconds", fixed(l->seconds, 6)) && put(rl, "gbps", fixed(gbps(l->bytes, l->seconds), 3)) &&
         put(rl, "prepare_ms", fixed(l->prepare_ms, 3));
    if (ok) {
        ok = put(j, "resident_load", rl);
        rl = NULL;   /* j's now, or freed by put */
    }
    cJSON_Delete(ms);
    cJSON_Delete(rl);
    if (ok) return j;
    cJSON_Delete(j);
    return NULL;
}

/* "profile": the profiled run's time and its operations, longest first. */
static cJSON *profile_json(const profile_run *pr) {
    cJSON *j = cJSON_CreateObject(), *ops = cJSON_CreateArray();
    int ok = put(j, "ms", fixed(pr->ms, 6));
    for (int i = 0; ok && i < pr->n; i++) {
        cJSON *op = cJSON_CreateObject();
        ok = put(op, "op", cJSON_CreateString(pr->e[i].op)) && put(op, "calls", integer(pr->e[i].calls)) &&
             put(op, "ms", fixed(pr->e[i].seconds * 1e3, 6)) && ops && cJSON_AddItemToArray(ops, op);
        if (!ok) cJSON_Delete(op);
    }
    if (ok && put(j, "ops", ops)) return j;
    if (!ok) cJSON_Delete(ops);
    cJSON_Delete(j);
    return NULL;
}

/* The result's "columns" and "rows" members, as the result library writes
 * them (DECIMAL exact, FLOAT with every digit), as one keyless Raw item
 * (cli_json_print). */
static cJSON *result_members(const dkb_result *res) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return NULL;
    int rc = dkb_result_print_json_fields(res, m);
    if (fclose(m) || rc) {
        free(text);
        return NULL;
    }
    cJSON *raw = cJSON_CreateRaw(text);
    free(text);
    return raw;
}

/* The JSON object of one query: query, title, seed, sf, params, the result
 * (shows_result), timing (--time), profile (--profile), and "check" (an
 * expectation: its file, ok, message) or "error". NULL when out of memory. */
static cJSON *outcome_json(const run_opts *o, const run_env *env, const outcome *oc) {
    const dkb_query *q = oc->q;
    char num[64];
    cJSON *j = cJSON_CreateObject();
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->seed);
    int ok = put(j, "query", cJSON_CreateString(q->name)) &&
             put(j, "title", cJSON_CreateString(q->title ? q->title : "")) && put(j, "seed", cJSON_CreateRaw(num));
    snprintf(num, sizeof num, "%.15g", env->sf);
    ok = ok && put(j, "sf", cJSON_CreateRaw(num)) && put(j, "params", cli_params_cjson(&oc->p));
    if (ok && shows_result(o, oc)) {
        cJSON *members = result_members(&oc->res);
        ok = members && cJSON_AddItemToArray(j, members);
        if (!ok) cJSON_Delete(members);
    }
    if (ok && oc->res.cols && o->time) ok = put(j, "timing", timing_json(o, env, oc));
    if (ok && oc->res.cols && o->profile) ok = put(j, "profile", profile_json(&oc->prof));
    if (ok && oc->file) {
        cJSON *c = cJSON_CreateObject();
        ok = put(c, "file", cJSON_CreateString(oc->file)) && put(c, "ok", cJSON_CreateBool(!oc->rc)) &&
             (!oc->rc || put(c, "message", cJSON_CreateString(oc->err.msg)));
        ok = ok ? put(j, "check", c) : (cJSON_Delete(c), 0);
    } else if (ok && oc->rc) {
        ok = put(j, "error", cJSON_CreateString(oc->err.msg));
    }
    if (ok) return j;
    cJSON_Delete(j);
    return NULL;
}

/* --format json: one object per query (one line, or the elements of one
 * array with `all`: "[" and "]" are written by cmd_run). 0 or DKB_ENOMEM. */
static int print_json(const run_opts *o, run_env *env, const outcome *oc, int all) {
    cJSON *doc = outcome_json(o, env, oc);
    if (!doc) return DKB_ENOMEM;
    printf("%s", env->nprinted++ ? ",\n" : (all ? "[\n" : ""));
    int rc = cli_json_print(stdout, doc);
    cJSON_Delete(doc);
    if (!all) printf("\n");
    return rc == DKB_ENOMEM ? rc : 0;   /* write errors: cmd_run checks stdout at the end */
}

/* A failed query's one line on stderr: the query, its seed, what failed. */
static void print_error(const run_opts *o, const outcome *oc) {
    const char *msg = oc->err.msg[0] ? oc->err.msg : dkb_strerror(oc->rc);
    if (!strncmp(msg, oc->q->name, 3))
        fprintf(stderr, "dkb run: error: %s (seed %llu)\n", msg, (unsigned long long)o->seed);
    else
        fprintf(stderr, "dkb run: error: %s seed %llu: %s\n", oc->q->name, (unsigned long long)o->seed, msg);
}

/* One query: its parameters, the outcome, then its printer. 0 ok, else
 * the exit code (its error line printed). */
static int run_query(const run_opts *o, run_env *env, const dkb_query *q, int all) {
    outcome oc;
    memset(&oc, 0, sizeof oc);
    oc.q = q;
    int rc = cli_query_params("run", q, o->seed, env->sf, o->ov, o->nov, &oc.p);
    if (rc) return rc;
    run_outcome(o, env, &oc);
    switch (o->fmt) {
    case CLI_FMT_JSON:
        if (print_json(o, env, &oc, all) && !oc.rc)
            oc.rc = dkb_fail(&oc.err, DKB_ENOMEM, "out of memory writing the JSON");
        break;
    case CLI_FMT_CSV: print_csv(o, env, &oc); break;
    case CLI_FMT_TABLE: print_table(o, env, &oc); break;
    }
    fflush(stdout);
    if (oc.rc && !dkb__comm_rank(env->comm)) print_error(o, &oc);  /* rank 0 speaks for all */
    dkb_result_free(&oc.res);
    free(oc.t.ms);
    return oc.rc ? DKB_EXIT_FAIL : 0;
}

static int set_expect(run_opts *o, expect_kind kind, const char *path) {
    if (o->expect) return cli_usage_error("run: choose one of --expect, --expect-dir, --expect-official, --expect-official-dir");
    o->expect = kind;
    o->expect_path = path;
    return 0;
}

/* Parse the options into o; the query argument into *query. */
static int parse(int argc, char **argv, run_opts *o, const char **query) {
    enum { O_DATA = 256, O_BACKEND, O_SEED, O_PARAM, O_FORMAT, O_TIME, O_RUNS, O_WARMUP, O_THREADS, O_BANDWIDTH, O_PROFILE,
           O_EXPECT, O_EXPECT_DIR, O_OFFICIAL, O_OFFICIAL_DIR, O_VERIFY, O_NO_VERIFY, O_MEM_BUDGET, O_COMM };
    static const struct option longopts[] = {{"data", required_argument, 0, O_DATA},
                                              {"backend", required_argument, 0, O_BACKEND},
                                              {"seed", required_argument, 0, O_SEED},
                                              {"param", required_argument, 0, O_PARAM},
                                              {"format", required_argument, 0, O_FORMAT},
                                              {"time", no_argument, 0, O_TIME},
                                              {"runs", required_argument, 0, O_RUNS},
                                              {"warmup", required_argument, 0, O_WARMUP},
                                              {"threads", required_argument, 0, O_THREADS},
                                              {"bandwidth", required_argument, 0, O_BANDWIDTH},
                                              {"profile", no_argument, 0, O_PROFILE},
                                              {"expect", required_argument, 0, O_EXPECT},
                                              {"expect-dir", required_argument, 0, O_EXPECT_DIR},
                                              {"expect-official", required_argument, 0, O_OFFICIAL},
                                              {"expect-official-dir", required_argument, 0, O_OFFICIAL_DIR},
                                              {"verify", no_argument, 0, O_VERIFY},
                                              {"no-verify", no_argument, 0, O_NO_VERIFY},
                                              {"mem-budget", required_argument, 0, O_MEM_BUDGET},
                                              {"comm", required_argument, 0, O_COMM},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    long v;
    int c;
    optind = 1;
    opterr = 0;   /* one error line, ours */
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case O_DATA: o->data = optarg; break;
        case O_BACKEND:
            if (!strcmp(optarg, "cpu")) o->backend = DKB_TP_CPU;
            else if (!strcmp(optarg, "cuda")) o->backend = DKB_TP_CUDA;
            else return cli_usage_error("--backend %s: expected cpu or cuda", optarg);
            o->backend_name = optarg;
            break;
        case O_SEED:
            if (cli_parse_seed("--seed", optarg, &o->seed)) return DKB_EXIT_USAGE;
            break;
        case O_PARAM:
            if (o->nov == MAX_OVERRIDES) return cli_usage_error("run: more than %d --param options", MAX_OVERRIDES);
            o->ov[o->nov++] = optarg;
            break;
        case O_FORMAT:
            if (cli_parse_format("--format", optarg, &o->fmt)) return DKB_EXIT_USAGE;
            o->fmt_given = 1;
            break;
        case O_TIME: o->time = 1; break;
        case O_RUNS:
            if (cli_parse_int("--runs", optarg, 1, 1000000, &v)) return DKB_EXIT_USAGE;
            o->runs = (int)v, o->time = 1;
            break;
        case O_WARMUP:
            if (cli_parse_int("--warmup", optarg, 0, 1000000, &v)) return DKB_EXIT_USAGE;
            o->warmup = (int)v, o->time = 1;
            break;
        case O_THREADS:
            if (cli_parse_int("--threads", optarg, 0, 4096, &v)) return DKB_EXIT_USAGE;
            o->threads = (int)v;
            break;
        case O_PROFILE: o->profile = 1; break;
        case O_BANDWIDTH:
            if (cli_parse_double("--bandwidth", optarg, &o->bandwidth_gbps)) return DKB_EXIT_USAGE;
            if (!(o->bandwidth_gbps > 0))
                return cli_usage_error("--bandwidth %s: expected GB/s above 0 (e.g. 3900)", optarg);
            o->time = 1;
            break;
        case O_EXPECT:
            if (set_expect(o, EXPECT_FILE, optarg)) return DKB_EXIT_USAGE;
            break;
        case O_EXPECT_DIR:
            if (set_expect(o, EXPECT_DIR, optarg)) return DKB_EXIT_USAGE;
            break;
        case O_OFFICIAL:
            if (set_expect(o, EXPECT_OFFICIAL, optarg)) return DKB_EXIT_USAGE;
            break;
        case O_OFFICIAL_DIR:
            if (set_expect(o, EXPECT_OFFICIAL_DIR, optarg)) return DKB_EXIT_USAGE;
            break;
        case O_VERIFY: o->verify = 1; break;
        case O_NO_VERIFY: o->verify = -1; break;
        case O_MEM_BUDGET:
            if (!strcmp(optarg, "auto")) o->mem_budget = -1; /* free device memory, once the context exists */
            else if (cli_parse_size("--mem-budget", optarg, &o->mem_budget)) return DKB_EXIT_USAGE;
            break;
        case O_COMM:
            if (!strcmp(optarg, "mpi")) o->comm_nccl = 0;
            else if (!strcmp(optarg, "nccl")) o->comm_nccl = 1;
            else return cli_usage_error("--comm %s: expected mpi or nccl", optarg);
            break;
        case 'h': usage(stdout); return -1;
        case ':': return cli_usage_error("run: option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("run: unknown option %s", argv[optind - 1]);
        }
    }
    if (cli_one_operand("run", "QUERY", argc, argv)) return DKB_EXIT_USAGE;
    *query = argv[optind];
    int all = !strcmp(*query, "all");
    if (!o->data) return cli_usage_error("run: missing --data STORE");
    if (all && o->nov) return cli_usage_error("run: --param needs a single query (parameter names differ per query)");
    if (all && o->fmt == CLI_FMT_CSV) return cli_usage_error("run: --format csv prints one query; use table or json with all");
    if (all && o->expect == EXPECT_FILE) return cli_usage_error("run: --expect FILE needs a single query; use --expect-dir with all");
    if (all && o->expect == EXPECT_OFFICIAL)
        return cli_usage_error("run: --expect-official FILE needs a single query; use --expect-official-dir with all");
    if (o->mem_budget < 0 && o->backend != DKB_TP_CUDA)
        return cli_usage_error("run: --mem-budget auto is the free device memory: --backend cuda only");
    if (o->comm_nccl && o->backend != DKB_TP_CUDA)
        return cli_usage_error("run: --comm nccl needs --backend cuda (NCCL exchanges GPU memory; the CPU backend's "
                               "ranks exchange through MPI)");
    if ((o->expect == EXPECT_OFFICIAL || o->expect == EXPECT_OFFICIAL_DIR) && (o->seed || o->nov))
        return cli_usage_error("run: the official answers are for the qualification parameters (seed 0, no --param)");
    return 0;
}

/* dir has dbgen .tbl files (TABLE.tbl or a slice TABLE.tbl.K) but no store. */
static int holds_tbl(const char *dir) {
    char path[4096];
    for (int i = 0; i < DKB_TABLE_COUNT; i++) {
        const char *table = dkb_table_def_get((dkb_table_id)i)->name;
        snprintf(path, sizeof path, "%s/%s.tbl", dir, table);
        FILE *f = fopen(path, "r");
        if (!f) {
            snprintf(path, sizeof path, "%s/%s.tbl.1", dir, table);
            f = fopen(path, "r");
        }
        if (f) {
            fclose(f);
            return 1;
        }
    }
    return 0;
}

static int run_main(run_opts o, const char *qarg, const dkb_query *single, dkb__comm *comm);

/* --comm nccl: env->comm := the NCCL communicator over env->comm's ranks
 * on `device` (which stays open beneath it); rank 0 says on stderr what it
 * is and what its collectives cost. 0, or the exit code (rank 0 printed
 * the error line). */
static int open_nccl(run_env *env, int device, dkb_error *err) {
    dkb__nccl_info ni;
    dkb__comm *nc = NULL;
    int rc = dkb__dist_open_nccl(env->comm, device, &nc, &ni, err);
    int rank = dkb__comm_rank(env->comm), ranks = dkb__comm_size(env->comm);
    if (rc) {
        if (!rank) fprintf(stderr, "dkb run: error: --comm nccl: %s\n", err->msg[0] ? err->msg : dkb_strerror(rc));
        return DKB_EXIT_FAIL;
    }
    if (!rank)
        fprintf(stderr,
                "dkb run: --comm nccl: %d rank%s, rank 0 on GPU %d (%s), NCCL set up in %.1f ms; %s; self-check ok: "
                "all-reduce of 8 bytes %.1f us, all-gather of %lld bytes %.1f us (median of %d, host copies included)\n",
                ranks, ranks == 1 ? "" : "s", ni.device, ni.bus_id, ni.init_ms,
                ranks == 1 ? "one rank exchanges no partials (queries run whole)" : "partials through NCCL",
                ni.allreduce_us, (long long)ni.allgather_bytes, ni.allgather_us, ni.reps);
    env->comm = nc;
    return 0;
}

/* Under mpirun every rank runs this: the ranks agree on the store (the same
 * one, checked on every rank) before any query, rank 0 prints, the others
 * write nothing on stdout (docs/distributed.md). */
int cmd_run(int argc, char **argv) {
    run_opts o = {.backend = DKB_TP_CPU, .backend_name = "cpu", .runs = 5, .warmup = 1};
    const char *qarg = NULL;
    int rc = parse(argc, argv, &o, &qarg);
    if (rc) return rc < 0 ? DKB_EXIT_OK : rc;
    const dkb_query *single = NULL;
    if (strcmp(qarg, "all")) {
        if ((rc = cli_query_arg("run", qarg, &single))) return rc;
        dkb_params p; /* bad parameters are usage errors: report them before loading */
        if ((rc = cli_query_params("run", single, o.seed, 1, o.ov, o.nov, &p))) return rc;
    }
    dkb__comm *comm = NULL;
    dkb_error err = {0};
    if ((rc = dkb__comm_open(&comm, &err))) return cli_fail("run", rc, &err);
    if (o.comm_nccl && (rc = dkb__comm_agree(comm, dkb__comm_nccl_load(&err), &err))) {
        if (!dkb__comm_rank(comm)) fprintf(stderr, "dkb run: error: --comm nccl: %s\n", err.msg);
        dkb__comm_close(comm);
        return DKB_EXIT_FAIL;
    }
    if (dkb__comm_size(comm) > 1) {
        if (dkb__comm_rank(comm) && !freopen("/dev/null", "w", stdout)) {
            fprintf(stderr, "dkb run: error: rank %d: /dev/null: cannot open for stdout\n", dkb__comm_rank(comm));
            dkb__comm_abort(comm, DKB_EXIT_FAIL);
        }
        rc = dkb__dist_store_check(comm, o.data, o.verify < 0 ? 0 : o.verify ? 2 : 1, &err);
        if (rc) {
            if (!dkb__comm_rank(comm)) fprintf(stderr, "dkb run: error: %s\n", err.msg);
            dkb__comm_close(comm);
            return DKB_EXIT_FAIL;
        }
    }
    rc = run_main(o, qarg, single, comm);
    dkb__comm_close(comm);
    return rc;
}

/* dkb run after parsing (single: the query, NULL for all), on this rank of
 * comm. */
static int run_main(run_opts o, const char *qarg, const dkb_query *single, dkb__comm *comm) {
    int rc;
    int all = !strcmp(qarg, "all");

    run_env env = {.comm = comm};
    dkb_error err = {0};
    double t0 = dkb__now_ms();
    if ((rc = dkb_store_open(o.data, 0, &env.db, &err))) {
        if (holds_tbl(o.data)) {
            fprintf(stderr, "dkb run: error: %s holds .tbl files, not a store; make one with `dkb import %s --out STORE`\n",
                    o.data, o.data);
            return DKB_EXIT_FAIL;
        }
        return cli_fail("run", rc, &err);
    }
    if (o.verify >= 0 && (rc = dkb__store_verify_cached(env.db, o.verify ? DKB__VERIFY_FULL : DKB__VERIFY_STRUCTURE,
                                                         NULL, &err))) {
        dkb_store_close(env.db);
        return cli_fail("run", rc, &err);
    }
    int part, parts;
    dkb_store_slice(env.db, &part, &parts);
    env.sf = dkb_store_scale_factor(env.db);
    if (parts > 1) {
        fprintf(stderr, "dkb run: error: store %s holds slice %d of %d; queries need a whole data set\n", o.data, part,
                parts);
        dkb_store_close(env.db);
        return DKB_EXIT_FAIL;
    }
    if ((o.expect == EXPECT_OFFICIAL || o.expect == EXPECT_OFFICIAL_DIR) && (env.sf < 0.999999 || env.sf > 1.000001)) {
        dkb_store_close(env.db);
        return cli_usage_error("run: the official answers are for SF 1; store %s is SF %g", o.data, env.sf);
    }
    rc = 0;
    int device = 0;
    if (o.backend == DKB_TP_CUDA && (dkb__comm_size(comm) > 1 || o.comm_nccl))
        rc = dkb__dist_use_device(comm, &device, &err);
    if (!rc) rc = dkb_tp_create(o.backend, o.threads, &env.tp, &err);
    if ((rc = dkb__comm_agree(comm, rc, &err))) { /* ranks: one rank without a GPU stops all */
        dkb_tp_destroy(env.tp);
        dkb_store_close(env.db);
        if (!dkb__comm_rank(comm))
            fprintf(stderr, "dkb run: error: --backend %s: %s\n", o.backend_name, err.msg[0] ? err.msg : dkb_strerror(rc));
        return DKB_EXIT_FAIL;
    }
    if (o.mem_budget < 0 && (o.mem_budget = dkb__cuda_free_bytes()) <= 0) {
        dkb_tp_destroy(env.tp);
        dkb_store_close(env.db);
        fprintf(stderr, "dkb run: error: --mem-budget auto: the free device memory is unknown\n");
        return DKB_EXIT_FAIL;
    }
    env.load_ms = dkb__now_ms() - t0;
    if (o.comm_nccl && (rc = open_nccl(&env, device, &err))) {
        dkb_tp_destroy(env.tp);
        dkb_store_close(env.db);
        return rc;
    }

    int failed = 0, exit_code = DKB_EXIT_OK;
    for (int n = all ? 1 : single->number; n <= (all ? DKB_NQUERIES : single->number); n++) {
        const dkb_query *q = all ? dkb_query_get(n) : single;
        if (!q) {
            fprintf(stderr, "dkb run: error: q%02d: plan not available in this build\n", n);
            failed++;
            continue;
        }
        rc = run_query(&o, &env, q, all);
        if (rc) {
            failed++;
            if (!all || rc == DKB_EXIT_USAGE) exit_code = rc;
        }
    }
    if (all && o.fmt == CLI_FMT_JSON) printf("%s]\n", env.nprinted ? "\n" : "[");
    if (all && o.fmt == CLI_FMT_TABLE && (o.expect || failed))
        printf("%s%d of %d queries ok\n", env.nprinted ? "\n" : "", DKB_NQUERIES - failed, DKB_NQUERIES);
    if (all && o.fmt == CLI_FMT_TABLE && o.time) {
        printf("all time: load %.1f ms; the %d query medians sum to %.3f ms\n", env.load_ms, env.ntimed, env.median_sum);
        printf("all floor: %lld bytes (%.1f MB) summed over the %d queries", (long long)env.floor_bytes_sum,
               (double)env.floor_bytes_sum / 1e6, env.ntimed);
        if (o.bandwidth_gbps > 0)
            printf("; %.4f ms at %.1f GB/s; medians/floors %.2f", env.floor_ms_sum, o.bandwidth_gbps,
                   env.floor_ms_sum > 0 ? env.median_sum / env.floor_ms_sum : 0);
        printf("\n");
        if (o.backend != DKB_TP_CPU) {
            dkb_tp_resident_stats st;
            dkb_tp_resident(env.tp, &st);
            printf("all load: %lld columns, %lld bytes resident, copied in %.3f ms (%.2f GB/s)\n", (long long)st.columns,
                   (long long)st.bytes, st.seconds * 1e3, gbps(st.bytes, st.seconds));
        }
    }
    if (failed && exit_code == DKB_EXIT_OK) exit_code = DKB_EXIT_FAIL;
    if (env.comm != comm) dkb__comm_close(env.comm);  /* --comm nccl: before the backend's context goes */
    dkb_tp_destroy(env.tp);
    dkb_store_close(env.db);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb run: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return exit_code;
}
