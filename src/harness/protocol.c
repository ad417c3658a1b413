/* protocol.c: the job file and the report the harness and its worker
 * exchange (formats in protocol.h), the verdict names, and the round trip
 * dkb__run_job (job file -> sandboxed worker -> report). */
#include "harness/protocol.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- verdicts ---- */

static const char *const VERDICT_NAME[] = {
#define DKB__VERDICT_NAME(id, name, text) name,
    DKB_VERDICT_MAP(DKB__VERDICT_NAME)
#undef DKB__VERDICT_NAME
};
static const char *const VERDICT_TEXT[] = {
#define DKB__VERDICT_TEXT(id, name, text) text,
    DKB_VERDICT_MAP(DKB__VERDICT_TEXT)
#undef DKB__VERDICT_TEXT
};
_Static_assert(sizeof VERDICT_NAME / sizeof VERDICT_NAME[0] == DKB_VERDICT_COUNT, "one name per verdict");

const char *dkb__verdict_name(dkb_verdict v) { return (unsigned)v < DKB_VERDICT_COUNT ? VERDICT_NAME[v] : "unknown"; }
const char *dkb__verdict_text(dkb_verdict v) { return (unsigned)v < DKB_VERDICT_COUNT ? VERDICT_TEXT[v] : "unknown"; }

static int verdict_from_name(const char *s) {
    for (int v = 0; s && v < DKB_VERDICT_COUNT; v++)
        if (!strcmp(VERDICT_NAME[v], s)) return v;
    return -1;
}

/* ---- jobs ---- */

static const char *const MODE_NAME[] = {"full", "core", "baseline"};

const char *dkb__job_mode_name(dkb_job_mode m) { return (unsigned)m <= DKB_JOB_BASELINE ? MODE_NAME[m] : "?"; }

int dkb__job_mode_from_name(const char *s) {
    for (int m = 0; s && m <= DKB_JOB_BASELINE; m++)
        if (!strcmp(MODE_NAME[m], s)) return m;
    return -1;
}

void dkb__job_init(dkb_job *j) {
    memset(j, 0, sizeof *j);
    j->mode = DKB_JOB_FULL;
    j->nseeds = 1;
    j->warmup = 2;
    j->min_runs = 10;
    j->min_seconds = 1.0;
    j->floor_slack = 0.5;
    j->nranks = 1;
}

void dkb__job_free(dkb_job *j) {
    if (!j) return;
    free(j->store);
    free(j->query);
    free(j->so);
    free(j->cuda_columns);
    free(j->sql);
    free(j->sql_plan);
    free(j->sql_columns);
    j->store = j->query = j->so = j->cuda_columns = j->sql = j->sql_plan = j->sql_columns = NULL;
}

#define EXACT_LIMIT 9007199254740992.0 /* 2^53: integers exact in a double */

/* A seed as a JSON number when exact, else as a decimal string. */
static cJSON *seed_json(uint64_t s) {
    if ((double)s < EXACT_LIMIT) return cJSON_CreateNumber((double)s);
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s);
    return cJSON_CreateString(buf);
}

static int seed_from_json(const cJSON *it, uint64_t *out) {
    if (cJSON_IsNumber(it)) {
        double d = it->valuedouble;
        if (!(d >= 0 && d < EXACT_LIMIT) || d != floor(d)) return -1;
        *out = (uint64_t)d;
        return 0;
    }
    if (cJSON_IsString(it) && it->valuestring[0]) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(it->valuestring, &end, 10);
        if (errno || *end || it->valuestring[0] == '-') return -1;
        *out = v;
        return 0;
    }
    return -1;
}

/* Write the whole string s to path. */
static int write_file(const char *path, const char *s, dkb_error *err) {
    FILE *f = fopen(path, "w");
    if (!f) return dkb_fail(err, dkb_errno_code(errno), "cannot create %s: %s", path, strerror(errno));
    size_t len = strlen(s);
    int bad = fwrite(s, 1, len, f) != len;
    if (fclose(f) != 0) bad = 1;
    return bad ? dkb_fail(err, DKB_EIO, "cannot write %s", path) : 0;
}

int dkb__job_write(const dkb_job *j, const char *path, dkb_error *err) {
    if (!j || !path || !j->store || !j->query) return dkb_fail(err, DKB_EINVAL, "job: missing store or query");
    cJSON *o = cJSON_CreateObject(), *seeds = cJSON_CreateArray();
    int bad = !o || !seeds;
    if (!bad) {
        cJSON_AddItemToObject(o, "seeds", seeds);
        bad |= !cJSON_AddStringToObject(o, "store", j->store);
        bad |= !cJSON_AddStringToObject(o, "query", j->query);
        bad |= !cJSON_AddStringToObject(o, "mode", dkb__job_mode_name(j->mode));
        bad |= !(j->so ? cJSON_AddStringToObject(o, "so", j->so) : cJSON_AddNullToObject(o, "so"));
        for (int i = 0; i < j->nseeds && !bad; i++) {
            cJSON *s = seed_json(j->seeds[i]);
            bad |= !s || !cJSON_AddItemToArray(seeds, s);
        }
        bad |= !cJSON_AddNumberToObject(o, "threads", j->threads);
        bad |= !cJSON_AddNumberToObject(o, "warmup", j->warmup);
        bad |= !cJSON_AddNumberToObject(o, "min_runs", j->min_runs);
        bad |= !cJSON_AddNumberToObject(o, "min_seconds", j->min_seconds);
        bad |= !cJSON_AddNumberToObject(o, "floor_slack", j->floor_slack);
        bad |= !cJSON_AddStringToObject(o, "backend", j->cuda ? "cuda" : "cpu");
        if (j->mem_budget > 0) bad |= !cJSON_AddNumberToObject(o, "mem_budget", (double)j->mem_budget);
        if (j->nranks > 1) {
            cJSON *rk = cJSON_AddObjectToObject(o, "ranks");
            bad |= !rk || !cJSON_AddNumberToObject(rk, "rank", j->rank) || !cJSON_AddNumberToObject(rk, "nranks", j->nranks);
            if (rk && j->solo) bad |= !cJSON_AddBoolToObject(rk, "solo", 1);
        }
        if (j->cuda && !bad) {
            cJSON *cols = cJSON_Parse(j->cuda_columns ? j->cuda_columns : "");
            bad |= !cJSON_IsArray(cols) || !cJSON_AddItemToObject(o, "cuda_columns", cols);
            if (!cJSON_IsArray(cols)) cJSON_Delete(cols);
        }
        if (j->sql && !bad) {
            cJSON *cols = cJSON_Parse(j->sql_columns ? j->sql_columns : "");
            bad |= !j->sql_plan || !cJSON_AddStringToObject(o, "sql", j->sql) ||
                   !cJSON_AddStringToObject(o, "sql_plan", j->sql_plan);
            bad |= !cJSON_IsArray(cols) || !cJSON_AddItemToObject(o, "sql_columns", cols);
            if (!cJSON_IsArray(cols)) cJSON_Delete(cols);
        }
    } else {
        cJSON_Delete(seeds);
    }
    char *text = bad ? NULL : cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return dkb_fail(err, DKB_ENOMEM, "job: out of memory");
    int rc = write_file(path, text, err);
    free(text);
    return rc;
}

/* Read a whole file (NUL-terminated, malloc'd). */
static int read_file(const char *path, size_t max, char **out, dkb_error *err) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return dkb_fail(err, dkb_errno_code(errno), "cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
    while (!rc) {
        if (len + 1 == cap) {
            char *nb = cap < max ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                rc = dkb_fail(err, cap < max ? DKB_ENOMEM : DKB_EPARSE, "%s: too large", path);
                break;
            }
            buf = nb, cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = dkb_fail(err, DKB_EIO, "cannot read %s", path);
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[len] = 0;
    *out = buf;
    return 0;
}

/* Integer member `key` in [lo, hi] into *v (absent: unchanged). */
static int get_int(const cJSON *o, const char *key, int lo, int hi, int *v, const char *path, dkb_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return 0;
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < lo ||
        it->valuedouble > hi)
        return dkb_fail(err, DKB_EPARSE, "%s: \"%s\" must be an integer in %d..%d", path, key, lo, hi);
    *v = (int)it->valuedouble;
    return 0;
}

static int get_double(const cJSON *o, const char *key, double lo, double hi, double *v, const char *path,
                      dkb_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) return 0;
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= lo && it->valuedouble <= hi))
        return dkb_fail(err, DKB_EPARSE, "%s: \"%s\" must be a number in %g..%g", path, key, lo, hi);
    *v = it->valuedouble;
    return 0;
}

/* String member into *v (malloc'd); null allowed when nullable. */
static int get_str(const cJSON *o, const char *key, int required, int nullable, char **v, const char *path,
                   dkb_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it || (nullable && cJSON_IsNull(it))) {
        if (required) return dkb_fail(err, DKB_EPARSE, "%s: missing \"%s\"", path, key);
        return 0;
    }
    if (!cJSON_IsString(it)) return dkb_fail(err, DKB_EPARSE, "%s: \"%s\" must be a string", path, key);
    *v = strdup(it->valuestring);
    return *v ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
}

int dkb__job_read(const char *path, dkb_job *j, dkb_error *err) {
    dkb__job_init(j);
    char *text;
    int rc = read_file(path, 1 << 24, &text, err);
    if (rc) return rc;
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return dkb_fail(err, DKB_EPARSE, "%s: not a JSON object", path);
    }
    char *mode = NULL;
    rc = get_str(o, "store", 1, 0, &j->store, path, err);
    if (!rc) rc = get_str(o, "query", 1, 0, &j->query, path, err);
    if (!rc) rc = get_str(o, "so", 0, 1, &j->so, path, err);
    if (!rc) rc = get_str(o, "mode", 0, 0, &mode, path, err);
    if (!rc && mode) {
        int m = dkb__job_mode_from_name(mode);
        if (m < 0) rc = dkb_fail(err, DKB_EPARSE, "%s: \"mode\" must be full, core or baseline", path);
        else j->mode = (dkb_job_mode)m;
    }
    free(mode);
    char *backend = NULL;
    if (!rc) rc = get_str(o, "backend", 0, 0, &backend, path, err);
    if (!rc && backend && strcmp(backend, "cpu") && strcmp(backend, "cuda"))
        rc = dkb_fail(err, DKB_EPARSE, "%s: \"backend\" must be cpu or cuda", path);
    j->cuda = backend && !strcmp(backend, "cuda");
    free(backend);
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(o, "cuda_columns");
    if (!rc && j->cuda) {
        if (!cJSON_IsArray(cols)) rc = dkb_fail(err, DKB_EPARSE, "%s: backend cuda needs a \"cuda_columns\" array", path);
        else if (!(j->cuda_columns = cJSON_PrintUnformatted(cols))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    if (!rc) rc = get_str(o, "sql", 0, 0, &j->sql, path, err);
    if (!rc && j->sql) rc = get_str(o, "sql_plan", 1, 0, &j->sql_plan, path, err);
    const cJSON *scols = cJSON_GetObjectItemCaseSensitive(o, "sql_columns");
    if (!rc && j->sql) {
        if (!cJSON_IsArray(scols)) rc = dkb_fail(err, DKB_EPARSE, "%s: a SQL task needs a \"sql_columns\" array", path);
        else if (!(j->sql_columns = cJSON_PrintUnformatted(scols))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    if (!rc) rc = get_int(o, "threads", 0, 4096, &j->threads, path, err);
    if (!rc) rc = get_int(o, "warmup", 0, 1000000, &j->warmup, path, err);
    if (!rc) rc = get_int(o, "min_runs", 1, 100000000, &j->min_runs, path, err);
    if (!rc) rc = get_double(o, "min_seconds", 0, 1e6, &j->min_seconds, path, err);
    if (!rc) rc = get_double(o, "floor_slack", 0, 1e6, &j->floor_slack, path, err);
    double budget = 0;
    if (!rc) rc = get_double(o, "mem_budget", 0, EXACT_LIMIT, &budget, path, err);
    if (!rc && budget != floor(budget)) rc = dkb_fail(err, DKB_EPARSE, "%s: \"mem_budget\" must be whole bytes", path);
    j->mem_budget = (int64_t)budget;
    if (!rc && j->mem_budget && j->mode == DKB_JOB_CORE)
        rc = dkb_fail(err, DKB_EPARSE, "%s: \"mem_budget\" is for full mode (and the baseline) only", path);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(o, "ranks");
    if (!rc && ranks) {
        if (!cJSON_IsObject(ranks)) rc = dkb_fail(err, DKB_EPARSE, "%s: \"ranks\" must be an object", path);
        if (!rc) rc = get_int(ranks, "nranks", 1, 1 << 20, &j->nranks, path, err);
        if (!rc) rc = get_int(ranks, "rank", 0, j->nranks - 1, &j->rank, path, err);
        const cJSON *solo = cJSON_GetObjectItemCaseSensitive(ranks, "solo");
        if (!rc && solo && !cJSON_IsBool(solo)) rc = dkb_fail(err, DKB_EPARSE, "%s: \"ranks\": \"solo\" must be a boolean", path);
        if (!rc) j->solo = solo && cJSON_IsTrue(solo);
        if (!rc && j->nranks > 1 && (j->mode == DKB_JOB_CORE || j->mem_budget || j->sql))
            rc = dkb_fail(err, DKB_EPARSE, "%s: \"ranks\": full mode or the baseline, no budget, no SQL", path);
    }
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(o, "seeds");
    if (!rc && seeds) {
        int n = cJSON_GetArraySize(seeds);
        if (!cJSON_IsArray(seeds) || n < 1 || n > DKB_JOB_MAX_SEEDS)
            rc = dkb_fail(err, DKB_EPARSE, "%s: \"seeds\" must be an array of 1..%d seeds", path, DKB_JOB_MAX_SEEDS);
        j->nseeds = 0;
        const cJSON *s;
        cJSON_ArrayForEach(s, seeds) {
            if (rc) break;
            if (seed_from_json(s, &j->seeds[j->nseeds++]))
                rc = dkb_fail(err, DKB_EPARSE, "%s: seed %d is not an integer 0..2^64-1", path, j->nseeds);
        }
    }
    if (!rc && j->mode == DKB_JOB_BASELINE && j->so)
        rc = dkb_fail(err, DKB_EPARSE, "%s: mode baseline takes no \"so\"", path);
    cJSON_Delete(o);
    return rc;
}

/* ---- reports ---- */

void dkb__report_init(dkb_report *r) {
    memset(r, 0, sizeof *r);
    r->verdict = DKB_VERDICT_HARNESS_ERROR;
    r->baseline = r->candidate = dkb__timing_none();
    r->bytes_read = r->bandwidth_gbs = r->floor_ms = NAN;
    r->floor_slack = NAN;
    r->streamed_baseline = r->streamed_candidate = r->load_limit = NAN;
}

void dkb__report_free(dkb_report *r) {
    if (!r) return;
    free(r->checks);
    r->checks = NULL;
    r->nchecks = 0;
}

int dkb__report_add_check(dkb_report *r, uint64_t seed, bool ok, const char *message) {
    dkb_check *c = realloc(r->checks, (size_t)(r->nchecks + 1) * sizeof *c);
    if (!c) return DKB_ENOMEM;
    r->checks = c;
    c = &r->checks[r->nchecks++];
    c->seed = seed;
    c->ok = ok;
    snprintf(c->message, sizeof c->message, "%s", message ? message : "");
    return 0;
}

static int add_num(cJSON *o, const char *key, double v) {
    return isfinite(v) ? cJSON_AddNumberToObject(o, key, v) != NULL : cJSON_AddNullToObject(o, key) != NULL;
}

static int add_timing(cJSON *o, const char *key, const dkb_timing *t) {
    if (t->runs <= 0) return cJSON_AddNullToObject(o, key) != NULL;
    cJSON *x = cJSON_AddObjectToObject(o, key);
    return x && add_num(x, "median", t->median) && add_num(x, "min", t->min) && add_num(x, "max", t->max) &&
           cJSON_AddNumberToObject(x, "runs", t->runs);
}

char *dkb__report_json(const dkb_report *r) {
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "verdict", dkb__verdict_name(r->verdict)) &&
             cJSON_AddStringToObject(o, "detail", r->detail);
    cJSON *checks = ok ? cJSON_AddArrayToObject(o, "checks") : NULL;
    ok = ok && checks;
    for (int i = 0; ok && i < r->nchecks; i++) {
        cJSON *c = cJSON_CreateObject(), *s = seed_json(r->checks[i].seed);
        ok = c && s && cJSON_AddItemToArray(checks, c);
        if (ok) {
            cJSON_AddItemToObject(c, "seed", s);
            ok = cJSON_AddBoolToObject(c, "ok", r->checks[i].ok) &&
                 cJSON_AddStringToObject(c, "message", r->checks[i].message);
        } else {
            cJSON_Delete(c);
            cJSON_Delete(s);
        }
    }
    ok = ok && add_timing(o, "baseline_ms", &r->baseline) && add_timing(o, "candidate_ms", &r->candidate) &&
         add_num(o, "bytes_read", r->bytes_read) && add_num(o, "bandwidth_gbs", r->bandwidth_gbs) &&
         add_num(o, "floor_ms", r->floor_ms) && add_num(o, "floor_slack", r->floor_slack) &&
         cJSON_AddNumberToObject(o, "threads", r->threads) && !dkb__attrib_add_json(o, "attribution", &r->attribution) &&
         (!r->nonce[0] || cJSON_AddStringToObject(o, "nonce", r->nonce));
    if (ok && r->budgeted) {
        cJSON *st = cJSON_AddObjectToObject(o, "streamed");
        ok = st && cJSON_AddBoolToObject(st, "partitioned", r->partitioned) &&
             cJSON_AddNumberToObject(st, "chunks", r->chunks) && add_num(st, "baseline_bytes", r->streamed_baseline) &&
             add_num(st, "candidate_bytes", r->streamed_candidate) && add_num(st, "load_limit", r->load_limit);
    }
    if (ok && r->budget_error[0]) ok = cJSON_AddStringToObject(o, "budget_error", r->budget_error) != NULL;
    if (ok && r->agreed) ok = cJSON_AddBoolToObject(o, "agreed", 1) != NULL;
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    line[n] = '\n', line[n + 1] = 0;
    return line;
}

static double num_or_nan(const cJSON *o, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

static int parse_timing(const cJSON *o, const char *key, dkb_timing *t, dkb_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    *t = dkb__timing_none();
    if (!it || cJSON_IsNull(it)) return 0;
    if (!cJSON_IsObject(it)) return dkb_fail(err, DKB_EPARSE, "report: \"%s\" must be an object or null", key);
    double runs = num_or_nan(it, "runs");
    if (!(runs >= 1 && runs < 2e9)) return 0;   /* no runs: not timed */
    t->runs = (int)runs;
    t->median = num_or_nan(it, "median");
    t->min = num_or_nan(it, "min");
    t->max = num_or_nan(it, "max");
    return 0;
}

int dkb__report_parse(const char *json, dkb_report *r, dkb_error *err) {
    dkb__report_init(r);
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return dkb_fail(err, DKB_EPARSE, "report: not a JSON object");
    }
    int rc = 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "verdict");
    int verdict = cJSON_IsString(v) ? verdict_from_name(v->valuestring) : -1;
    if (verdict < 0) rc = dkb_fail(err, DKB_EPARSE, "report: missing or unknown \"verdict\"");
    else r->verdict = (dkb_verdict)verdict;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "detail");
    if (cJSON_IsString(d)) snprintf(r->detail, sizeof r->detail, "%s", d->valuestring);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(o, "checks"), *c;
    if (!rc && checks && !cJSON_IsArray(checks)) rc = dkb_fail(err, DKB_EPARSE, "report: \"checks\" must be an array");
    if (!rc && checks) {
        cJSON_ArrayForEach(c, checks) {
            uint64_t seed = 0;
            const cJSON *ok = cJSON_GetObjectItemCaseSensitive(c, "ok");
            const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");
            if (seed_from_json(cJSON_GetObjectItemCaseSensitive(c, "seed"), &seed) || !cJSON_IsBool(ok)) {
                rc = dkb_fail(err, DKB_EPARSE, "report: check %d lacks a seed or ok", r->nchecks + 1);
                break;
            }
            if (dkb__report_add_check(r, seed, cJSON_IsTrue(ok), cJSON_IsString(msg) ? msg->valuestring : "")) {
                rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
                break;
            }
        }
    }
    if (!rc) rc = parse_timing(o, "baseline_ms", &r->baseline, err);
    if (!rc) rc = parse_timing(o, "candidate_ms", &r->candidate, err);
    r->bytes_read = num_or_nan(o, "bytes_read");
    r->bandwidth_gbs = num_or_nan(o, "bandwidth_gbs");
    r->floor_ms = num_or_nan(o, "floor_ms");
    r->floor_slack = num_or_nan(o, "floor_slack");
    double th = num_or_nan(o, "threads");
    r->threads = th >= 0 && th < 1e6 ? (int)th : 0;
    dkb__attrib_from_json(o, "attribution", &r->attribution);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "streamed");
    if (cJSON_IsObject(st)) {
        r->budgeted = true;
        r->partitioned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "partitioned"));
        double ch = num_or_nan(st, "chunks");
        r->chunks = ch >= 0 && ch < 1e6 ? (int)ch : 0;
        r->streamed_baseline = num_or_nan(st, "baseline_bytes");
        r->streamed_candidate = num_or_nan(st, "candidate_bytes");
        r->load_limit = num_or_nan(st, "load_limit");
    }
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(o, "budget_error");
    if (cJSON_IsString(be)) snprintf(r->budget_error, sizeof r->budget_error, "%s", be->valuestring);
    r->agreed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "agreed"));
    const cJSON *nonce = cJSON_GetObjectItemCaseSensitive(o, "nonce");
    if (cJSON_IsString(nonce)) snprintf(r->nonce, sizeof r->nonce, "%s", nonce->valuestring);
    cJSON_Delete(o);
    return rc;
}

/* ---- the round trip ---- */

int dkb__run_job(const dkb_job *job, const char *exe, const char *dir, const dkb_limits *lim, dkb_report *rep,
                 dkb_sandbox_result *sr, dkb_error *err) {
    dkb__report_init(rep);
    memset(sr, 0, sizeof *sr);
    char jobpath[4096], outpath[4096];
    if ((size_t)snprintf(jobpath, sizeof jobpath, "%s/job.json", dir) >= sizeof jobpath ||
        (size_t)snprintf(outpath, sizeof outpath, "%s/worker.out", dir) >= sizeof outpath)
        return dkb_fail(err, DKB_EINVAL, "run job: directory name too long");
    int rc = dkb__job_write(job, jobpath, err);
    if (rc) return rc;
    dkb_limits l = *lim;
    if (!l.output_path) l.output_path = outpath;
    char *argv[] = {(char *)(exe ? exe : "/proc/self/exe"), (char *)"__worker", jobpath, NULL};
    rc = dkb__sandbox_run(argv, &l, sr, err);
    if (rc) return rc;
    if (sr->verdict == DKB_VERDICT_OK) {
        dkb_error perr = {0};
        if (dkb__report_parse(sr->report, rep, &perr)) {
            dkb__report_free(rep);
            dkb__report_init(rep);
            snprintf(rep->detail, sizeof rep->detail, "worker report unreadable: %s", perr.msg);
        }
        return 0;
    }
    /* no usable report: the sandbox says how the worker ended */
    rep->verdict = sr->verdict;
    snprintf(rep->detail, sizeof rep->detail, "%s", sr->detail);
    return 0;
}
