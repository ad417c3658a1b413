/* eval.c: the evaluation loop (dkb eval): check the options, the store and
 * the results directory; find the rows; build every candidate in
 * RESULTS/work/qNN.<mode>/, on all cores at once, before anything is timed;
 * then row by row (one timed worker at a time) run the worker job in the
 * sandbox, and when no baseline median came back (build or worker failed
 * before timing, or no candidate) run a baseline-only job; then score every
 * row. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/fsutil.h"
#include "common/timing.h"  // defines: dkb__now_s
#include "dkb/query.h"
#include "dkb/store.h"
#include "harness/eval.h"
#include "harness/eval_slots.h"
#include "harness/harness_cuda.h"
#include "harness/protocol.h"
#include "harness/relay.h"
#include "dist/comm.h"
#include "dist/dist_store.h"   // defines: dkb__dist_store_check
#include "sql/task.h"   // defines: dkb__sql_task_plan

_Static_assert(DKB_EVAL_MAX_SEEDS + 1 <= DKB_JOB_MAX_SEEDS, "every seed fits in a job");

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

/* ---- setup ---- */

static int check_opts(const dkb_eval_opts *o, dkb_error *err) {
    if (!o->dir || !o->store || !o->out) return dkb_fail(err, DKB_EINVAL, "eval: candidate dir, store and results dir are required");
    if (o->backend && strcmp(o->backend, "cpu") && strcmp(o->backend, "cuda"))
        return dkb_fail(err, DKB_EINVAL, "--backend %s: expected cpu or cuda", o->backend);
    if (o->target && strcmp(o->target, "python") && strcmp(o->target, "triton"))
        return dkb_fail(err, DKB_EINVAL, "--target %s: expected python or triton (or none: the backend's C or CUDA files)", o->target);
    if (o->target && !strcmp(o->target, "triton") && !(o->backend && !strcmp(o->backend, "cuda")))
        return dkb_fail(err, DKB_EINVAL, "--target triton: the CUDA backend's (--backend cuda)");
    if (o->modes & ~(DKB_EVAL_FULL | DKB_EVAL_CORE)) return dkb_fail(err, DKB_EINVAL, "eval: bad mode set");
    if (o->nseeds < 0 || o->nseeds > DKB_EVAL_MAX_SEEDS)
        return dkb_fail(err, DKB_EINVAL, "--seeds %d: expected 0 to %d", o->nseeds, DKB_EVAL_MAX_SEEDS);
    if (!isfinite(o->threshold) || o->threshold <= 0)
        return dkb_fail(err, DKB_EINVAL, "--threshold %g: expected a positive number", o->threshold);
    if (!isfinite(o->timeout_s) || o->timeout_s <= 0)
        return dkb_fail(err, DKB_EINVAL, "--timeout %g: expected a positive number of seconds", o->timeout_s);
    if (o->sql && (o->modes & DKB_EVAL_CORE))
        return dkb_fail(err, DKB_EINVAL, "--mode core: a SQL task is full mode only (its baseline is one translated program)");
    if (o->sql && o->queries) return dkb_fail(err, DKB_EINVAL, "--queries: not with a SQL task (--sql)");
    if (o->sql && o->target) return dkb_fail(err, DKB_EINVAL, "--target python: not with a SQL task (--sql) yet");
    if (o->mem_budget < 0) return dkb_fail(err, DKB_EINVAL, "--mem-budget: expected a positive size");
    if (o->mem_budget && (o->modes & DKB_EVAL_CORE))
        return dkb_fail(err, DKB_EINVAL, "--mem-budget: full mode only (core mode's inputs are the prepared whole "
                                         "columns); use --mode full");
    if (o->mem_budget && o->target) return dkb_fail(err, DKB_EINVAL, "--mem-budget: not with --target python yet");
    if (o->mem_budget && o->sql) return dkb_fail(err, DKB_EINVAL, "--mem-budget: not with a SQL task (--sql)");
    if (o->threads < 0 || o->warmup < 0 || o->min_runs < 1 || !isfinite(o->min_seconds) || o->min_seconds < 0)
        return dkb_fail(err, DKB_EINVAL, "eval: bad timing options");
    if (o->comm && dkb__comm_size(o->comm) > 1) {
        if (o->target) return dkb_fail(err, DKB_EINVAL, "--target %s: not across ranks yet", o->target);
        if (o->sql) return dkb_fail(err, DKB_EINVAL, "--sql: not across ranks yet");
        if (o->mem_budget) return dkb_fail(err, DKB_EINVAL, "--mem-budget: not across ranks yet");
        if (o->modes != DKB_EVAL_FULL) return dkb_fail(err, DKB_EINVAL, "--mode core: not across ranks (full mode only)");
    }
    return 0;
}

/* Scale factor and total size of the store; it must open, be whole and
 * (unless no_verify) pass its verification, here in the evaluating
 * process, once, before any worker runs. */
static int probe_store(const char *dir, bool no_verify, dkb_eval_results *res, dkb_error *err) {
    dkb_store *db;
    int rc = dkb_store_open(dir, 0, &db, err);
    if (rc) return rc;
    int part, parts;
    dkb_store_slice(db, &part, &parts);
    if (parts > 1) rc = dkb_fail(err, DKB_EINVAL, "store %s holds slice %d of %d; queries need a whole data set", dir, part, parts);
    if (!rc && !no_verify) rc = dkb__store_verify_cached(db, DKB__VERIFY_FULL, &res->verify, err);
    res->scale_factor = dkb_store_scale_factor(db);
    for (int i = 0; i < dkb_store_ntables(db); i++) res->store_bytes += dkb_store_table_disk_bytes(dkb_store_table_at(db, i));
    dkb_store_close(db);
    return rc;
}

/* The results directory and its work/ exist and are writable. */
static int prepare_out(const char *out, dkb_error *err) {
    int rc = dkb__mkdir_p(out, err);
    if (rc) return rc;
    int kind = dkb__path_kind(out);
    if (kind != DKB__PATH_DIR && kind != DKB__PATH_EMPTY_DIR)
        return dkb_fail(err, DKB_EEXIST, "%s: the results path exists and is not a directory", out);
    if (access(out, W_OK | X_OK) != 0) return dkb__io_fail(err, out, "results directory not writable");
    char *work = dkb__path_join(out, "work");
    if (!work) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    rc = dkb__mkdir_p(work, err);
    if (!rc && access(work, W_OK | X_OK) != 0) rc = dkb__io_fail(err, work, "not writable");
    free(work);
    return rc;
}

static bool is_cuda(const dkb_eval_opts *o) { return o->backend && !strcmp(o->backend, "cuda"); }
/* Python candidates: --target python (torch, on either backend) or triton
 * (the same files on the CUDA backend, with Triton kernels) */
static bool is_python(const dkb_eval_opts *o) {
    return o->target && (!strcmp(o->target, "python") || !strcmp(o->target, "triton"));
}
/* The candidate files' extension: py (--target python/triton), cu (cuda), c. */
static const char *cand_ext(const dkb_eval_opts *o) { return is_python(o) ? "py" : is_cuda(o) ? "cu" : "c"; }

/* One row per (query, mode) as eval.h says, by query then mode. */
static int make_rows(const dkb_eval_opts *o, const uint32_t found[2], uint32_t listed, dkb_eval_results *res,
                     dkb_error *err) {
    unsigned modes = o->modes ? o->modes : o->mem_budget ? DKB_EVAL_FULL : DKB_EVAL_FULL | DKB_EVAL_CORE;
    res->items = calloc(DKB_NQUERIES * DKB_NMODES, sizeof *res->items);
    if (!res->items) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int q = 1; q <= DKB_NQUERIES; q++)
        for (int m = DKB_MODE_FULL; m <= DKB_MODE_CORE; m++) {
            if (!(modes & (1u << m))) continue;
            int has = (found[m] >> q) & 1;
            if (o->queries ? !((listed >> q) & 1) : !has) continue;
            dkb_eval_item *it = &res->items[res->n++];
            it->qnum = q;
            snprintf(it->query, sizeof it->query, "q%02d", q);
            it->mode = (dkb_mode)m;
            it->missing = !has;
            it->verdict = DKB_VERDICT_OK;
            it->baseline = it->candidate = it->candidate_solo = dkb__timing_none();
            it->nranks = o->comm ? dkb__comm_size(o->comm) : 1;
            it->floor_ms = it->bytes_read = it->bandwidth_gbs = NAN;
            it->streamed_baseline = it->streamed_candidate = NAN;
            if (has) {
                char name[80];
                snprintf(name, sizeof name, "%s.%s.%s", it->query, dkb__eval_mode_name(it->mode), cand_ext(o));
                if (!(it->file = dkb__path_join(o->dir, name))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
            }
        }
    return 0;
}

/* A SQL task's one row (full mode): DIR/NAME.full.<ext>, missing when absent. */
static int make_sql_row(const dkb_eval_opts *o, const char *name, dkb_eval_results *res, dkb_error *err) {
    res->items = calloc(1, sizeof *res->items);
    if (!res->items) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    dkb_eval_item *it = &res->items[res->n++];
    snprintf(it->query, sizeof it->query, "%s", name);
    it->mode = DKB_MODE_FULL;
    it->verdict = DKB_VERDICT_OK;
    it->baseline = it->candidate = it->candidate_solo = dkb__timing_none();
    it->nranks = 1;
    it->floor_ms = it->bytes_read = it->bandwidth_gbs = NAN;
    char file[80];
    snprintf(file, sizeof file, "%s.full.%s", name, cand_ext(o));
    if (!(it->file = dkb__path_join(o->dir, file))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    struct stat st;
    it->missing = !(stat(it->file, &st) == 0 && S_ISREG(st.st_mode));
    if (it->missing) {
        free(it->file);
        it->file = NULL;
    }
    return 0;
}

/* ---- one row ---- */

typedef struct eval_ctx {
    const dkb_eval_opts *o;
    dkb_eval_results *res;
    char *store_abs, *work_abs;   /* absolute paths handed to the workers */
    dkb__eval_cuda *cuda;         /* backend cuda: the resident columns */
    dkb__sql_task *sql;           /* a SQL task (opts.sql), planned here */
    char *sql_columns;            /* its column names as a JSON array */
    dkb_build *builds;            /* per row, built ahead (build_all) */
    int *built;                   /* per row: 1 when builds[i] was made */
    int *build_rc;                /* per row: the build's error code (0: it ran) */
    dkb_error *build_err;         /* per row: the build's error */
    dkb__comm *comm;              /* several ranks (else NULL) */
    dkb__relay *relay;            /* ... and their workers' relay */
    char cuda_visible[64];        /* rows on several GPUs: this slot's GPU for its workers
                                   * (CUDA_VISIBLE_DEVICES); "" otherwise */
} eval_ctx;

static cJSON *checks_json(const dkb_report *rep) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < rep->nchecks; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "seed", (double)rep->checks[i].seed);
        cJSON_AddBoolToObject(c, "ok", rep->checks[i].ok);
        cJSON_AddStringToObject(c, "message", rep->checks[i].message);
        cJSON_AddItemToArray(a, c);
    }
    return a;
}

static void job_base(const eval_ctx *c, const dkb_eval_item *it, dkb_job *job) {
    dkb__job_init(job);
    job->nseeds = c->res->nseeds;
    memcpy(job->seeds, c->res->seeds, (size_t)c->res->nseeds * sizeof job->seeds[0]);
    job->store = c->store_abs;   /* borrowed: cleared before dkb__job_free */
    job->query = (char *)it->query;
    job->mode = it->mode == DKB_MODE_CORE ? DKB_JOB_CORE : DKB_JOB_FULL;
    job->threads = c->o->threads;
    job->warmup = c->o->warmup;
    job->min_runs = c->o->min_runs;
    job->min_seconds = c->o->min_seconds;
    job->mem_budget = c->o->mem_budget;
    job->cuda = c->cuda != NULL;
    job->cuda_columns = c->cuda ? (char *)dkb__eval_cuda_columns(c->cuda) : NULL;  /* borrowed */
    if (c->sql) {   /* borrowed too */
        job->sql = (char *)dkb__sql_task_sql(c->sql);
        job->sql_plan = (char *)dkb__sql_task_plan_json(c->sql);
        job->sql_columns = c->sql_columns;
    }
}

static void job_release(dkb_job *job) {
    job->store = job->query = job->so = job->cuda_columns = job->sql = job->sql_plan = job->sql_columns = NULL;
    dkb__job_free(job);
}

/* What one rank's job came to, for the row's verdict across ranks. */
typedef struct rank_rec {
    int32_t v, follower, agreed, pad;
    char detail[1024];
} rank_rec;

/* Ranks: the row's verdict from every rank's: the lowest rank that failed
 * of its own accord (not a follower: its relayed exchange did not fail
 * because of another rank), else the lowest that failed; its detail
 * prefixed "rank R: " unless the ranks agreed on it in the worker (then it
 * is in that form already) or R is 0. The same on every rank. */
static int ranks_verdict(const eval_ctx *c, dkb_report *rep, dkb_error *err) {
    rank_rec mine;
    memset(&mine, 0, sizeof mine);
    mine.v = (int32_t)rep->verdict;
    mine.agreed = rep->agreed;
    snprintf(mine.detail, sizeof mine.detail, "%s", rep->detail);
    int follower = 0;
    dkb_verdict bv;
    char bd[512];
    if (dkb__relay_outcome(c->relay, &follower, &bv, bd, sizeof bd)) {
        mine.v = (int32_t)bv, mine.agreed = 0;
        snprintf(mine.detail, sizeof mine.detail, "%s", bd);
    }
    mine.follower = follower;
    int K = dkb__comm_size(c->comm);
    unsigned char *all = NULL;
    int64_t *lens = calloc((size_t)K, sizeof *lens);
    int rc = lens ? dkb__comm_allgather_bytes(c->comm, &mine, (int64_t)sizeof mine, &all, lens, err)
                  : dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int r = 0; !rc && r < K; r++)
        if (lens[r] != (int64_t)sizeof mine) rc = dkb_fail(err, DKB_EINTERNAL, "ranks: a verdict record of rank %d", r);
    int root = -1;
    for (int pass = 0; !rc && pass < 2 && root < 0; pass++)
        for (int r = 0; r < K && root < 0; r++) {
            const rank_rec *x = (const rank_rec *)(all + (size_t)r * sizeof mine);
            if (x->v != DKB_VERDICT_OK && (pass || !x->follower)) root = r;
        }
    if (root >= 0) {
        rank_rec x;
        memcpy(&x, all + (size_t)root * sizeof mine, sizeof x);
        x.detail[sizeof x.detail - 1] = 0;
        rep->verdict = x.v >= 0 && x.v < DKB_VERDICT_COUNT ? (dkb_verdict)x.v : DKB_VERDICT_HARNESS_ERROR;
        if (root > 0 && !x.agreed) snprintf(rep->detail, sizeof rep->detail, "rank %d: %.1000s", root, x.detail);
        else snprintf(rep->detail, sizeof rep->detail, "%s", x.detail);
    }
    free(all);
    free(lens);
    return rc;
}

/* Run one job in dir; its report in rep, the sandbox's result in sr. */
static int run_job(const eval_ctx *c, const dkb_job *job, const char *dir, dkb_report *rep, dkb_sandbox_result *sr,
                   dkb_eval_item *it, dkb_error *err) {
    int rc = dkb__mkdir_p(dir, err);
    if (c->relay) {
        /* every rank runs the job at once; each takes part in the relay's
         * rounds until every rank's worker has ended, even when its own
         * could not start */
        dkb_job j = *job;
        j.rank = dkb__comm_rank(c->comm), j.nranks = dkb__comm_size(c->comm);
        dkb_limits lim = c->res->limits;
        lim.relay = c->relay;
        dkb__relay_job_begin(c->relay);
        if (!rc) {
            rc = dkb__run_job(&j, c->o->exe, dir, &lim, rep, sr, err);
        } else {
            dkb__report_init(rep);
            memset(sr, 0, sizeof *sr);
        }
        dkb__relay_job_end(c->relay);
        it->run_s += sr->seconds;
        rc = dkb__comm_agree(c->comm, rc, err);
        return rc ? rc : ranks_verdict(c, rep, err);
    }
    if (rc) return rc;
    dkb_limits lim = c->res->limits;
    if (c->cuda_visible[0]) lim.cuda_visible = c->cuda_visible;
    rc = dkb__run_job(job, c->o->exe, dir, &lim, rep, sr, err);
    it->run_s += sr->seconds;
    if (!rc && c->cuda) {
        /* the columns are shared: put back any the worker changed, before
         * anything else runs on them, and say so */
        char changed[400];
        int n = 0;
        rc = dkb__eval_cuda_restore(c->cuda, changed, sizeof changed, &n, err);
        if (!rc && n) {
            dkb_verdict v = rep->verdict;
            if (!job->so) {
                rep->verdict = DKB_VERDICT_HARNESS_ERROR;
                snprintf(rep->detail, sizeof rep->detail, "the baseline changed device column(s) %s (restored)", changed);
            } else if (v == DKB_VERDICT_CRASH || v == DKB_VERDICT_TIMEOUT || v == DKB_VERDICT_WROTE_INPUT) {
                size_t used = strlen(rep->detail);
                snprintf(rep->detail + used, sizeof rep->detail - used, "%s(it changed device column(s) %s; restored)",
                         used ? " " : "", changed);
            } else {
                rep->verdict = DKB_VERDICT_WROTE_INPUT;
                snprintf(rep->detail, sizeof rep->detail, "wrote to read-only device column(s) %s (restored)", changed);
            }
        }
    }
    return rc;
}

/* The budget's findings of a report into the row; a budget the query
 * cannot run under (the worker's budget_error) stops the evaluation with
 * that one line. */
static int take_budget(const dkb_report *rep, dkb_eval_item *it, dkb_error *err) {
    if (rep->budget_error[0]) return dkb_fail(err, DKB_ENOMEM, "%s", rep->budget_error);
    if (!rep->budgeted) return 0;
    it->budgeted = 1;
    it->partitioned = rep->partitioned;
    it->chunks = rep->chunks;
    it->streamed_baseline = rep->streamed_baseline;
    if (!isnan(rep->streamed_candidate)) it->streamed_candidate = rep->streamed_candidate;
    return 0;
}

/* Time the baseline alone (mode of the row, no candidate). */
static int run_baseline(const eval_ctx *c, dkb_eval_item *it, const char *wdir, dkb_error *err) {
    dkb_job job;
    job_base(c, it, &job);
    char *dir = dkb__path_join(wdir, "baseline");
    if (!dir) {
        job_release(&job);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    dkb_report rep;
    dkb_sandbox_result sr;
    int rc = run_job(c, &job, dir, &rep, &sr, it, err);
    if (!rc) rc = take_budget(&rep, it, err);
    if (!rc) {
        it->baseline = rep.baseline;
        if (isnan(it->floor_ms)) it->floor_ms = rep.floor_ms;
        if (isnan(it->bytes_read)) it->bytes_read = rep.bytes_read;
        if (isnan(it->bandwidth_gbs)) it->bandwidth_gbs = rep.bandwidth_gbs;
        if (rep.verdict != DKB_VERDICT_OK || rep.baseline.runs <= 0) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: %s", dkb__verdict_name(rep.verdict),
                     rep.detail[0] ? rep.detail : "no baseline timing");
            if (!(it->baseline_error = strdup(msg))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        }
    }
    dkb__report_free(&rep);
    dkb__sandbox_result_free(&sr);
    free(dir);
    job_release(&job);
    return rc;
}

/* Ranks: every rank's build of a row has rank 0's source (sha256) and
 * verdict; else the build is a harness error on every rank, naming the
 * first rank that differs. */
static int same_build(const eval_ctx *c, dkb_build *b, dkb_error *err) {
    struct {
        int32_t v;
        char hash[68];
    } mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    mine.v = (int32_t)b->verdict;
    memcpy(mine.hash, b->hash, sizeof b->hash);
    int K = dkb__comm_size(c->comm);
    int64_t *lens = calloc((size_t)K, sizeof *lens);
    unsigned char *raw = NULL;
    int rc = lens ? dkb__comm_allgather_bytes(c->comm, &mine, (int64_t)sizeof mine, &raw, lens, err)
                  : dkb_fail(err, DKB_ENOMEM, "out of memory");
    all = (void *)raw;
    for (int r = 1; !rc && r < K; r++)
        if (all[r].v != all[0].v || memcmp(all[r].hash, all[0].hash, sizeof all[0].hash)) {
            all[r].hash[64] = all[0].hash[64] = 0;
            b->verdict = DKB_VERDICT_HARNESS_ERROR;
            snprintf(b->detail, sizeof b->detail,
                     "rank %d built a different candidate (sha256 %.16s..., %s; rank 0: %.16s..., %s): every rank "
                     "needs the same files", r, all[r].hash, dkb__verdict_name((dkb_verdict)all[r].v), all[0].hash,
                     dkb__verdict_name((dkb_verdict)all[0].v));
            break;
        }
    free(raw);
    free(lens);
    return rc;
}

/* Row i's candidate, built ahead into b (build_all); run the full job when
 * it built. */
static int run_candidate(const eval_ctx *c, int i, const char *wdir, dkb_error *err) {
    dkb_eval_item *it = &c->res->items[i];
    dkb_build b = c->builds[i];
    c->built[i] = 0;   /* ours to free now */
    int rc = c->build_rc[i];
    if (c->comm) {
        /* ranks: every rank built, the same file to the same verdict */
        if (rc && err) *err = c->build_err[i];
        rc = dkb__comm_agree(c->comm, rc, err);
        if (rc) {
            dkb__build_free(&b);
            return rc;
        }
        if ((rc = same_build(c, &b, err))) {
            dkb__build_free(&b);
            return rc;
        }
    }
    if (rc) {
        if (err) *err = c->build_err[i];
        dkb__build_free(&b);
        return rc;
    }
    memcpy(it->sha256, b.hash, sizeof it->sha256);
    it->sha256[64] = '\0';
    it->verdict = b.verdict;
    if (!(it->compile_log = dup_or_empty(b.log)) || !(it->detail = dup_or_empty(b.detail))) rc = DKB_ENOMEM;
    if (rc || b.verdict != DKB_VERDICT_OK) {
        dkb__build_free(&b);
        return rc ? dkb_fail(err, rc, "out of memory") : 0;
    }
    dkb_job job;
    job_base(c, it, &job);
    job.so = b.so_path;
    dkb_report rep;
    dkb_sandbox_result sr;
    char *dir = dkb__path_join(wdir, "run");
    rc = dir ? run_job(c, &job, dir, &rep, &sr, it, err) : dkb_fail(err, DKB_ENOMEM, "out of memory");
    if (dir && !rc) rc = take_budget(&rep, it, err);
    if (dir && !rc) {
        it->verdict = rep.verdict;
        if (is_python(c->o)) dkb__py_refine_verdict(&it->verdict, rep.detail, sizeof rep.detail, sr.output_tail);
        free(it->detail);
        it->detail = strdup(rep.detail);
        it->output_tail = dup_or_empty(sr.output_tail);
        it->checks = checks_json(&rep);
        it->baseline = rep.baseline;
        it->candidate = rep.candidate;
        it->floor_ms = rep.floor_ms;
        it->bytes_read = rep.bytes_read;
        it->bandwidth_gbs = rep.bandwidth_gbs;
        it->attribution = rep.attribution;
        if (!it->detail || !it->output_tail || !it->checks) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    if (dir) {
        dkb__report_free(&rep);
        dkb__sandbox_result_free(&sr);
    }
    free(dir);
    /* dkb bench across ranks: the same candidate on rank 0 alone over the
     * whole store (its DKB_CANDIDATE_RANKS ignored), seed 0 checked, timed
     * as the row was: the one-rank time the scaling efficiency compares
     * with. The same decision on every rank (the verdict is agreed). */
    if (!rc && c->o->ranks_solo && c->relay && it->verdict == DKB_VERDICT_OK) {
        job.solo = true;
        job.nseeds = 1;
        if (!(dir = dkb__path_join(wdir, "run-solo"))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        if (!rc) rc = run_job(c, &job, dir, &rep, &sr, it, err);
        if (dir) {
            if (!rc && rep.verdict == DKB_VERDICT_OK) it->candidate_solo = rep.candidate;
            else if (!rc) {
                char msg[1200];
                snprintf(msg, sizeof msg, "%s: %s", dkb__verdict_name(rep.verdict), rep.detail);
                if (!(it->solo_error = strdup(msg))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
            }
            dkb__report_free(&rep);
            dkb__sandbox_result_free(&sr);
        }
        free(dir);
    }
    job_release(&job);
    dkb__build_free(&b);
    return rc;
}

/* RESULTS/work/qNN.<mode> of a row (malloc'd), or NULL. */
static char *row_dir(const eval_ctx *c, const dkb_eval_item *it) {
    char name[80];
    snprintf(name, sizeof name, "%s.%s", it->query, dkb__eval_mode_name(it->mode));
    return dkb__path_join(c->work_abs, name);
}

/* Clear a row's scratch directory and build its candidate there. */
static void build_row(eval_ctx *c, int i) {
    dkb_eval_item *it = &c->res->items[i];
    dkb_error *err = &c->build_err[i];
    char *wdir = row_dir(c, it);
    int rc = wdir ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
    if (!rc && dkb__rm_rf(wdir) != 0) rc = dkb__io_fail(err, wdir, "cannot clear the scratch directory");
    if (!rc) rc = dkb__mkdir_p(wdir, err);
    if (!rc) {
        double t0 = dkb__now_s();
        rc = dkb__build_candidate(it->file, it->mode, wdir, &c->builds[i], err);
        it->compile_s = c->builds[i].compile_s > 0 ? c->builds[i].compile_s : dkb__now_s() - t0;
        c->built[i] = 1;
    }
    c->build_rc[i] = rc;
    free(wdir);
}

/* The rows with a candidate to build (and a baseline to judge it by). */
static int needs_build(const eval_ctx *c, int i) {
    const dkb_eval_item *it = &c->res->items[i];
    return !it->missing && (c->sql || dkb_query_get(it->qnum));
}

typedef struct build_pool {
    eval_ctx *c;
    atomic_int next;   /* the next row to take */
    atomic_int done;   /* rows built */
} build_pool;

static void *build_worker(void *arg) {
    build_pool *p = arg;
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->c->res->n;) {
        if (!needs_build(p->c, i)) continue;
        build_row(p->c, i);
        atomic_fetch_add(&p->done, 1);
    }
    return NULL;
}

/* Build every candidate before any is run: on `jobs` threads (each build
 * runs its compiler as a process of its own), so the compiles use every
 * core and never overlap a timed run; this thread reports the progress.
 * Per-row results in c->builds, c->build_rc, c->build_err. */
static int build_all(eval_ctx *c, int jobs, const dkb_progress *progress, dkb_error *err) {
    int n = c->res->n, todo = 0;
    size_t cap = (size_t)(n ? n : 1);
    c->builds = calloc(cap, sizeof *c->builds);
    c->built = calloc(cap, sizeof *c->built);
    c->build_rc = calloc(cap, sizeof *c->build_rc);
    c->build_err = calloc(cap, sizeof *c->build_err);
    if (!c->builds || !c->built || !c->build_rc || !c->build_err) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) todo += needs_build(c, i);
    if (!todo) return 0;
    pthread_t tid[64];
    if (jobs > todo) jobs = todo;
    if (jobs > (int)(sizeof tid / sizeof tid[0])) jobs = (int)(sizeof tid / sizeof tid[0]);
    build_pool p = {.c = c};
    int started = 0;
    while (started < jobs && pthread_create(&tid[started], NULL, build_worker, &p) == 0) started++;
    if (!started) build_worker(&p);   /* no thread could start: build here */
    for (int d; (d = atomic_load(&p.done)) < todo;) {
        dkb__progress(progress, "build", (uint64_t)d, (uint64_t)todo);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    dkb__progress(progress, "build", (uint64_t)todo, (uint64_t)todo);
    return 0;
}

static void builds_free(eval_ctx *c) {
    for (int i = 0; c->built && i < c->res->n; i++)
        if (c->built[i]) dkb__build_free(&c->builds[i]);
    free(c->builds);
    free(c->built);
    free(c->build_rc);
    free(c->build_err);
}

static int eval_row(const eval_ctx *c, int i, dkb_error *err) {
    dkb_eval_item *it = &c->res->items[i];
    char *wdir = row_dir(c, it);
    if (!wdir) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int rc = 0;
    if (!needs_build(c, i)) {
        /* no candidate built here: a fresh scratch directory for the baseline */
        if (dkb__rm_rf(wdir) != 0) rc = dkb__io_fail(err, wdir, "cannot clear the scratch directory");
        if (!rc) rc = dkb__mkdir_p(wdir, err);
    }
    if (!rc && !c->sql && !dkb_query_get(it->qnum)) {
        it->verdict = DKB_VERDICT_HARNESS_ERROR;
        free(it->detail);
        it->detail = NULL;
        if (asprintf(&it->detail, "no baseline plan for %s in this build", it->query) < 0) it->detail = NULL;
        free(wdir);
        return it->detail ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    /* ranks: every rank goes on together, or none */
    if (c->comm) rc = dkb__comm_agree(c->comm, rc, err);
    if (!rc && !it->missing) rc = run_candidate(c, i, wdir, err);
    if (!rc && !it->detail) it->detail = strdup("");
    int need = !rc && !(it->baseline.runs > 0);
    if (c->comm) {
        /* rank 0's baseline timing is the row's: rank 0 decides */
        rc = dkb__comm_agree(c->comm, rc, err);
        int32_t x = need;
        if (!rc) rc = dkb__comm_bcast(c->comm, &x, sizeof x, 0, err);
        need = !rc && x;
    }
    if (need) rc = run_baseline(c, it, wdir, err);
    if (rc && err && !strstr(err->msg, it->query)) {
        char msg[sizeof err->msg + 64];
        snprintf(msg, sizeof msg, "%s %s: %s", it->query, dkb__eval_mode_name(it->mode), err->msg);
        size_t n = strlen(msg) < sizeof err->msg ? strlen(msg) : sizeof err->msg - 1;
        memcpy(err->msg, msg, n);
        err->msg[n] = '\0';
    }
    free(wdir);
    return rc;
}

/* ---- the whole evaluation ---- */

static int slot_row(void *ctx, int i, dkb_error *err) { return eval_row(ctx, i, err); }

/* Rows on several GPUs: slot s (1 .. n-1) is c with the store's columns on
 * GPU s; every slot's workers see only its GPU. *out: n - 1 contexts (their
 * columns closed by the caller, also after a failure). */
static int open_slots(eval_ctx *c, int n, eval_ctx **out, dkb_error *err) {
    *out = calloc((size_t)n - 1, sizeof **out);
    if (!*out) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    for (int s = 0; s < n; s++) {
        eval_ctx *e = s ? &(*out)[s - 1] : c;
        if (s) {
            *e = *c;
            e->cuda = NULL;
        }
        if (dkb__eval_slot_devices(visible, s, e->cuda_visible, sizeof e->cuda_visible))
            return dkb_fail(err, DKB_EINVAL, "--gpus: no GPU %d in CUDA_VISIBLE_DEVICES=%s", s, visible ? visible : "");
        if (s) {
            int rc = dkb__eval_cuda_open(c->store_abs, s, c->o->mem_budget > 0, &e->cuda, err);
            if (rc) return rc;
        }
    }
    return 0;
}

static char *abs_path(const char *p, dkb_error *err) {
    char *r = realpath(p, NULL);
    if (!r) dkb__io_fail(err, p, "cannot resolve");
    return r;
}

int dkb__eval_run(const dkb_eval_opts *opts, const dkb_progress *progress, dkb_eval_results *res, dkb_error *err) {
    memset(res, 0, sizeof *res);
    if (!opts) return dkb_fail(err, DKB_EINVAL, "eval: no options");
    res->opts = *opts;
    double t0 = dkb__now_s();
    time_t wall = time(NULL);
    struct tm tm;
    strftime(res->started, sizeof res->started, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&wall, &tm));
    dkb__comm *comm = opts->comm && dkb__comm_size(opts->comm) > 1 ? opts->comm : NULL;
    int me = comm ? dkb__comm_rank(comm) : 0;
    int rc = check_opts(opts, err);
    uint32_t listed = 0, found[2] = {0, 0};
    if (!rc && opts->queries) rc = dkb__eval_parse_queries(opts->queries, &listed, err);
    char sql_name[DKB_SQL_TASK_NAME_MAX];
    if (!rc && opts->sql) rc = dkb__sql_task_name(opts->sql, sql_name, sizeof sql_name, err);
    if (!rc && !opts->sql) rc = dkb__eval_scan_files(opts->dir, cand_ext(opts), found, res, err);
    if (!rc && opts->sql && dkb__path_kind(opts->dir) != DKB__PATH_DIR && dkb__path_kind(opts->dir) != DKB__PATH_EMPTY_DIR)
        rc = dkb_fail(err, DKB_ENOENT, "%s: not a directory", opts->dir);
    if (comm) {
        /* ranks: every rank sees rank 0's candidate files */
        rc = dkb__comm_agree(comm, rc, err);
        int64_t lo[3] = {found[0], found[1], listed}, hi[3] = {found[0], found[1], listed};
        if (!rc) rc = dkb__comm_allreduce(comm, lo, 3, DKB__COMM_I64, DKB__COMM_MIN, err);
        if (!rc) rc = dkb__comm_allreduce(comm, hi, 3, DKB__COMM_I64, DKB__COMM_MAX, err);
        if (!rc && memcmp(lo, hi, sizeof lo))
            rc = dkb_fail(err, DKB_EINVAL, "the ranks see different candidate files in %s: every rank needs the same "
                                           "directory (shared or copied)", opts->dir);
    }
    if (!rc) rc = probe_store(opts->store, opts->no_verify, res, err);
    if (comm) {
        /* ranks: every rank has the store, and it is rank 0's */
        rc = dkb__comm_agree(comm, rc, err);
        if (!rc) rc = dkb__dist_store_check(comm, opts->store, 0, err);
    }
    if (!rc) {
        res->nseeds = opts->nseeds + 1;
        rc = dkb__eval_draw_seeds(res->seeds, opts->nseeds, err);
    }
    if (comm) {
        /* ranks: rank 0's seeds */
        rc = dkb__comm_agree(comm, rc, err);
        if (!rc) rc = dkb__comm_bcast(comm, res->seeds, sizeof res->seeds[0] * (size_t)res->nseeds, 0, err);
    }
    dkb__sql_task *task = NULL;
    char *task_cols = NULL;
    if (!rc && opts->sql) {
        /* plan here, once per distinct parameter set of the seeds: the
         * workers get the plans, not libduckdb */
        dkb_store *db = NULL;
        rc = dkb_store_open(opts->store, 0, &db, err);
        if (!rc) rc = dkb__sql_task_plan_seeds(opts->sql, db, res->seeds + 1, res->nseeds - 1, &task, err);
        dkb_store_close(db);
        if (!rc && !(task_cols = dkb__sql_task_columns_json(task))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        /* a SQL task without parameters has one parameter set: seed 0's */
        if (!rc && !dkb__sql_task_nparams(task)) res->nseeds = 1;
    }
    /* no GPU, or fewer than asked for: said before the results directory is made (nothing written) */
    const int seen = rc || !is_cuda(opts) ? 0 : dkb__eval_cuda_devices();
    if (!rc && is_cuda(opts) && !dkb_tp_cuda_available())
        rc = dkb_fail(err, DKB_EINVAL, "--backend cuda: no usable GPU (or this dkb was built without CUDA)");
    else if (!rc && is_cuda(opts) && (opts->gpus > seen || opts->on_gpu > seen))
        rc = dkb_fail(err, DKB_EINVAL, "--gpus %d: this machine has %d GPU%s (CUDA_VISIBLE_DEVICES counts)",
                      opts->gpus > seen ? opts->gpus : opts->on_gpu, seen, seen == 1 ? "" : "s");
    if (!rc && me == 0) rc = prepare_out(opts->out, err);
    if (comm) rc = dkb__comm_agree(comm, rc, err);
    if (!rc) rc = opts->sql ? make_sql_row(opts, sql_name, res, err) : make_rows(opts, found, listed, res, err);
    if (rc) {
        dkb__sql_task_free(task);
        free(task_cols);
        return rc;
    }
    dkb__eval_machine(res->cpu_model, sizeof res->cpu_model, &res->cores);
    res->threads = opts->threads ? opts->threads : res->cores;
    res->limits.timeout_s = opts->timeout_s;
    res->limits.mem_bytes = opts->mem_bytes ? opts->mem_bytes : 2 * res->store_bytes + (2ull << 30);
    res->limits.output_bytes = opts->output_bytes ? opts->output_bytes : 1u << 20;

    eval_ctx c = {.o = opts, .res = res, .store_abs = abs_path(opts->store, err), .sql = task, .sql_columns = task_cols};
    int nslots = 1;   /* rows at once: one per GPU on cuda (eval_slots.h) */
    if (c.store_abs && is_cuda(opts)) {
        /* the store's columns go onto the GPU once, for every worker (a GPU is
         * there: checked above) */
        nslots = comm || opts->on_gpu ? 1 : opts->gpus > 0 ? opts->gpus : seen > 0 ? seen : 1;
        if (nslots > res->n) nslots = res->n > 0 ? res->n : 1;
        /* a rank of mpirun: its node's GPU local_rank mod the GPUs seen (as dkb run) */
        const int ranked = comm && dkb__comm_size(comm) > 1;
        int dev = opts->on_gpu > 0 ? opts->on_gpu - 1 : ranked && seen > 0 ? comm->local_rank % seen : 0;
        if ((opts->on_gpu > 0 || ranked) &&
            dkb__eval_slot_devices(getenv("CUDA_VISIBLE_DEVICES"), dev, c.cuda_visible, sizeof c.cuda_visible))
            rc = dkb_fail(err, DKB_EINVAL, "GPU %d: not in CUDA_VISIBLE_DEVICES", dev);
        if (!rc) rc = dkb__eval_cuda_open(c.store_abs, dev, opts->mem_budget > 0, &c.cuda, err);
        if (rc) {
            dkb__eval_cuda_close(c.cuda);
            free(c.store_abs);
            dkb__sql_task_free(task);
            free(task_cols);
            return rc;
        }
    }
    char wname[32];
    snprintf(wname, sizeof wname, me ? "work/rank-%d" : "work", me);
    char *work = dkb__path_join(opts->out, wname);
    if (work && me && dkb__mkdir_p(work, err)) free(work), work = NULL;
    c.work_abs = work ? abs_path(work, err) : NULL;
    free(work);
    if (!c.store_abs || !c.work_abs) rc = err && err->code ? err->code : dkb_fail(err, DKB_ENOMEM, "out of memory");
    if (comm) {
        c.comm = comm;
        if (!rc) rc = dkb__relay_open(comm, &c.relay, err);
        rc = dkb__comm_agree(comm, rc, err);
    }
    if (!rc) rc = build_all(&c, opts->build_jobs > 0 ? opts->build_jobs : res->cores, progress, err);
    eval_ctx *slot = NULL;   /* slots 1 .. nslots-1 (slot 0 is c) */
    if (!rc && nslots > 1) rc = open_slots(&c, nslots, &slot, err);
    if (!rc && !comm) {
        void **ctx = calloc((size_t)nslots, sizeof *ctx);
        if (!ctx) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        for (int s = 0; ctx && s < nslots; s++) ctx[s] = s ? (void *)&slot[s - 1] : (void *)&c;
        if (!rc) rc = dkb__eval_slots_run(nslots, ctx, res->n, slot_row, progress, err);
        free(ctx);
        for (int i = 0; !rc && i < res->n; i++)
            res->harness_errors += res->items[i].verdict == DKB_VERDICT_HARNESS_ERROR || res->items[i].baseline_error;
    }
    for (int i = 0; comm && !rc && i < res->n; i++) {
        dkb__progress(progress, "eval", (uint64_t)i, (uint64_t)res->n);
        dkb_eval_item *it = &res->items[i];
        rc = eval_row(&c, i, err);
        rc = dkb__comm_agree(comm, rc, err);
        res->harness_errors += !rc && (it->verdict == DKB_VERDICT_HARNESS_ERROR || it->baseline_error);
    }
    for (int s = 1; slot && s < nslots; s++) dkb__eval_cuda_close(slot[s - 1].cuda);
    free(slot);
    dkb__relay_close(c.relay);
    builds_free(&c);
    free(c.store_abs);
    free(c.work_abs);
    dkb__eval_cuda_close(c.cuda);
    dkb__sql_task_free(task);
    free(task_cols);
    if (rc) return rc;
    dkb__progress(progress, "eval", (uint64_t)res->n, (uint64_t)res->n);
    res->wall_s = dkb__now_s() - t0;
    return dkb__eval_score(res, err);
}
