/* cmd_sql.c: `dkb sql`: a query's SQL (DuckDB dialect) with its parameters
 * drawn from a seed and overridden, or the parameter set as JSON; what the
 * DuckDB oracle runs to make golden answers. With --data STORE and -e SQL
 * or -f FILE: any SQL over the store, planned by DuckDB and run as a
 * TensorPlan program by the translator (src/sql/translate.h) on the CPU or
 * CUDA backend, its result printed like `dkb run` prints one (table, csv,
 * json) and optionally checked against a CSV (--expect) or DuckDB's own
 * answer (--check); or DuckDB's optimized logical plan (--explain;
 * src/sql/plan.h) and the TensorPlan program as it ran (--explain=tensorplan);
 * or that program written as C source in the shape of src/queries/qNN.c
 * (--emit c [-o OUT.c]; src/sql/emit_c.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_query.h"
#include "common/fsutil.h"  // defines: dkb__read_file
#include "common/timing.h"  // defines: dkb__now_ms, dkb__timing_summary
#include "dkb/query.h"      // defines: dkb_query_find, dkb_query_params, dkb_query_run
#include "dkb/store.h"      // defines: dkb_store_open, dkb_store_scale_factor
#include "sql/emit_c.h"     // defines: dkb__sql_emit_c
#include "sql/plan.h"       // defines: dkb__sql_planner, dkb__sql_plan
#include "sql/task_params.h" // defines: dkb__sql_params_parse, dkb__sql_params_draw
#include "sql/translate.h"  // defines: dkb__sql_translate

#define MAX_OVERRIDES 64
#define MAX_SQL_BYTES (16u << 20)

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb sql QUERY [--seed S] [--param NAME=VALUE ...] [--sf SF] [--params-json]\n"
            "       dkb sql --data STORE (-e SQL | -f FILE) [--backend cpu|cuda] [--threads N]\n"
            "               [--format table|csv|json] [--expect FILE.csv] [--expect-dir DIR] [--check]\n"
            "               [--time N [--hand]] [--profile] [--seed S] [--param NAME=VALUE ...]\n"
            "       dkb sql --data STORE (-e SQL | -f FILE) --explain[=tree|json|tensorplan]\n"
            "       dkb sql --data STORE (-e SQL | -f FILE) --emit c [-o OUT.c]\n"
            "\n"
            "Print the SQL of TPC-H query QUERY (q01..q22 or 1..22) in DuckDB's dialect,\n"
            "with its substitution parameters drawn from seed S as qgen draws them\n"
            "(seed 0, the default: the qualification values), then NAME=VALUE overrides.\n"
            "`dkb sql QUERY --params-json` lists a query's parameters with their values;\n"
            "an unknown --param name lists the names.\n"
            "\n"
            "With --data: run any SQL over the store. DuckDB (libduckdb, loaded at run\n"
            "time: $DKB_LIBDUCKDB, else tools/oracle's npm package from\n"
            "tools/install-deps.sh, else the system's) parses, binds and optimizes it\n"
            "over an in-memory copy of the store (all rows, the oracle's types); the\n"
            "translator turns DuckDB's optimized logical plan into a TensorPlan program\n"
            "and runs it on --backend, and the result prints like `dkb run` prints one.\n"
            "A construct the translator does not handle is one line naming the operator\n"
            "or function (exit 1), never a partial answer. --expect compares the result\n"
            "with a CSV (e.g. `dkb run qNN --format csv` or a golden answer), --check\n"
            "with DuckDB's own answer to the same SQL; each prints 'ok' or the first\n"
            "difference on stderr (exit 1). Several -f FILEs run in turn over one load\n"
            "of the store, each reported on its own line. SQL that declares parameters\n"
            "(\"-- dkb:param NAME ...\" lines, :NAME in the text; docs/sql.md) runs with\n"
            "them substituted: seed 0's defaults, or --seed S's draw, then --param\n"
            "overrides (with every --data form: --explain and --emit c too).\n"
            "--explain prints DuckDB's plan instead: a compact tree, one line per\n"
            "operator, then the plan JSON of json_serialize_plan, indented (=tree or\n"
            "=json: only that one);\n"
            "--explain=tensorplan runs the translator and prints the TensorPlan\n"
            "program as it ran, one line per operator. An error in the SQL is DuckDB's\n"
            "message with its line and column (a syntax error also shows a caret).\n"
            "--emit c runs the translator and writes the program as C source in the\n"
            "shape of src/queries/qNN.c (the SQL in a comment; prepare: the store\n"
            "columns read; core: the TensorPlan operations, straight-line; finish: the\n"
            "result table), to standard output or to -o OUT.c (written under a\n"
            "temporary name, then renamed). Values computed on the host from the\n"
            "data (row counts, key ranges, lookup tables) are literals: the program\n"
            "is specialised to STORE.\n"
            "\n"
            "options:\n"
            "  --seed S             seed of the parameter draw (default 0); with --data,\n"
            "                       of the SQL's declared parameters\n"
            "  --param NAME=VALUE   set one parameter (repeatable); dates YYYY-MM-DD,\n"
            "                       decimals 0.06, strings as in the data\n"
            "  --sf SF              scale factor the SQL is for (default 1; only Q11's\n"
            "                       fraction, 0.0001/SF, depends on it)\n"
            "  --params-json        print the parameters as JSON instead of the SQL\n"
            "  --data STORE         run or plan SQL over this store (dkb gen/import output)\n"
            "  -e SQL               the SQL text (one statement)\n"
            "  -f FILE              read the SQL from FILE ('-': standard input)\n"
            "  --backend B          cpu (default) or cuda (where built)\n"
            "  --threads N          worker threads (default 0: all cores)\n"
            "  --format FMT         table (default), csv or json\n"
            "  --expect FILE.csv    compare the result with this CSV (header, then rows)\n"
            "  --expect-dir DIR     compare the result of -f .../NAME.sql with DIR/NAME.csv\n"
            "  --check              compare the result with DuckDB's answer to the SQL\n"
            "  --time N             time the translated program: 1 warm-up, then the\n"
            "                       median of N runs (DuckDB's load and planning apart)\n"
            "  --hand               with --time and -f .../qNN.sql: also time the hand-written\n"
            "                       plan qNN (seed 0), each run after a translated one\n"
            "  --profile            after any timing, one more run of the translated program\n"
            "                       (and with --hand, of the hand plan) counting every\n"
            "                       TensorPlan operation by kind (to_host: copies to the host)\n"
            "  --explain[=WHAT]     print DuckDB's plan: tree and json (default), tree,\n"
            "                       json; or tensorplan: the translated program\n"
            "  --emit c             write the translated program as C source\n"
            "  -o OUT.c             with --emit: write to OUT.c instead of standard output\n"
            "  -h, --help           this help\n"
            "\n"
            "examples: dkb sql q06 --seed 3 --param discount=0.05\n"
            "          dkb sql --data data/sf0.01 \\\n"
            "              -e \"SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1 ORDER BY 1\"\n"
            "          dkb sql q03 | dkb sql --data data/sf0.01 -f - --check\n"
            "          dkb sql q03 | dkb sql --data data/sf0.01 -f - --explain=tree\n");
}

enum { EXPLAIN_NONE = 0, EXPLAIN_TREE = 1, EXPLAIN_JSON = 2, EXPLAIN_BOTH = 3, EXPLAIN_TP = 4 };

/* The whole of standard input, malloc'ed and NUL-terminated; NULL on error. */
static char *read_stdin(void) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 == cap) {
            char *b = cap < MAX_SQL_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!b) break;
            buf = b, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, stdin);
        n += got;
        if (got == 0) {
            if (ferror(stdin)) break;
            buf[n] = 0;
            return buf;
        }
    }
    free(buf);
    return NULL;
}

/* DuckDB's error in the SQL: the one-line message, and for a syntax error
 * (a parser error with a position) the line of the SQL and a caret. */
static int print_sql_error(const char *sql, const dkb__sql_diag *d, const dkb_error *err) {
    fprintf(stderr, "dkb sql: error: %s\n", err->msg);
    if (strcmp(d->type, "parser") || d->position < 0) return DKB_EXIT_FAIL;
    const char *ls;
    size_t ll;
    int line, col;
    dkb__sql_locate(sql, (size_t)d->position, &line, &col, &ls, &ll);
    fprintf(stderr, "  %.*s\n  ", (int)ll, ls);
    for (int i = 0; i + 1 < col; i++) fputc(ls[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
    return DKB_EXIT_FAIL;
}

#define MAX_FILES 4096
#define MAX_EXPECT 8

/* What `dkb sql --data` was asked to do. */
typedef struct sql_opts {
    const char *data, *text;
    const char **files;       /* -f FILE ... (several: each run in turn, one store load) */
    int nfiles;
    int what;                 /* EXPLAIN_*: NONE runs the SQL */
    dkb_tp_backend backend;
    const char *backend_name;
    int threads;
    cli_format fmt;
    int fmt_given;
    const char *expect[MAX_EXPECT]; /* --expect FILE.csv */
    int nexpect;
    const char *expect_dir[MAX_EXPECT]; /* --expect-dir DIR: DIR/NAME.csv for -f .../NAME.sql */
    int nexpect_dir;
    int check;                /* --check: against DuckDB's answer */
    int time_runs;            /* --time N: time the translated program (one warm-up, N runs) */
    int hand;                 /* --hand: with --time, also the hand plan of -f .../qNN.sql, interleaved */
    int profile;              /* --profile: one more run (each), counting the operations */
    int emit;                 /* --emit c: write the program as C source */
    const char *out;          /* -o OUT.c (NULL: standard output) */
    uint64_t seed;            /* --seed S: the draw of the SQL's declared parameters */
    int seed_given;
    char **ov;                /* --param NAME=VALUE: overrides of them */
    int nov;
} sql_opts;

/* The declared parameters of the SQL being substituted (dkb_query's draw
 * takes no context). */
static const dkb__sql_params *g_declared;

static void draw_declared(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    dkb__sql_params_draw(g_declared, seed, out);
}

/* --param overrides off a declared grid are refused, as dkb eval's task_check does */
static int check_declared(const dkb_params *p, dkb_error *err) { return dkb__sql_params_check(g_declared, "sql", p, err); }

/* The SQL with its "-- dkb:param" declarations (docs/sql.md, "Parameters")
 * substituted: seed --seed (default 0: every default), then --param
 * overrides; text itself when it declares none (and then --seed and
 * --param are an error: nothing to set). NULL with the error printed and
 * *code set. */
static char *with_declared(const sql_opts *o, const char *who, const char *path, char *text, int *code) {
    static dkb__sql_params ps;
    dkb_error err = {0};
    char where[1100];
    snprintf(where, sizeof where, "%s", path ? path : "-e");
    *code = DKB_EXIT_FAIL;
    if (dkb__sql_params_parse(where, text, &ps, &err)) {
        fprintf(stderr, "dkb sql: %serror: %s\n", who, err.msg);
        return NULL;
    }
    if (!ps.n) {
        if (o->seed_given || o->nov) {
            fprintf(stderr, "dkb sql: %serror: --seed/--param: %s declares no parameters (-- dkb:param lines)\n", who,
                    where);
            *code = DKB_EXIT_USAGE;
            return NULL;
        }
        return text;
    }
    g_declared = &ps;
    dkb_query q = {.name = "sql", .sql = text, .nparams = ps.n, .params = ps.defs, .draw = draw_declared,
                   .check = check_declared};
    dkb_params p;
    int rc = cli_query_params("sql", &q, o->seed, 1, o->ov, o->nov, &p);
    char *sql = rc ? NULL : dkb_query_sql(&q, &p);
    g_declared = NULL;
    if (rc) {
        *code = rc;
        return NULL;
    }
    if (!sql) fprintf(stderr, "dkb sql: %serror: out of memory substituting the parameters\n", who);
    return sql;
}

static const dkb_compare_opts COMPARE = {1e-9, 1e-9, 0, false};

/* Compare res with the CSV at path (read with res's column types): 0, or
 * DKB_EXIT_FAIL with the first difference on stderr; each line starts
 * with `who`. */
static int compare_csv(const char *who, const dkb_result *res, const char *path, const char *what) {
    dkb_result want = {0};
    dkb_error err = {0};
    int rc = dkb_result_read_csv(path, res, &want, &err);
    if (!rc) rc = dkb_result_compare(res, &want, &COMPARE, &err);
    dkb_result_free(&want);
    if (rc) {
        fprintf(stderr, "dkb sql: %s%s: mismatch: %s\n", who, what, err.msg);
        return DKB_EXIT_FAIL;
    }
    fprintf(stderr, "dkb sql: %s%s: ok, %lld row%s match\n", who, what, (long long)res->nrows,
            res->nrows == 1 ? "" : "s");
    return DKB_EXIT_OK;
}

/* DuckDB's own answer to sql, as CSV in a temporary file, compared with res. */
static int check_duckdb(const char *who, dkb__sql_planner *p, const char *sql, const dkb_result *res) {
    char path[] = "/tmp/dkb-sql-check-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "dkb sql: %serror: --check: cannot make a temporary file\n", who);
        return DKB_EXIT_FAIL;
    }
    close(fd);
    dkb_error err = {0};
    int rc = dkb__sql_copy_csv(p, sql, path, &err);
    int code = rc ? (fprintf(stderr, "dkb sql: %serror: --check: %s\n", who, err.msg), DKB_EXIT_FAIL)
                  : compare_csv(who, res, path, "check against DuckDB");
    unlink(path);
    return code;
}

/* The result as `dkb run` prints one; JSON: {"sql", "backend", "columns", "rows"}. */
static int print_result(const sql_opts *o, const char *sql, const dkb_result *res) {
    int rc = 0;
    if (o->fmt == CLI_FMT_JSON) {
        cJSON *text = cJSON_CreateString(sql);
        char *q = text ? cJSON_PrintUnformatted(text) : NULL;
        cJSON_Delete(text);
        if (!q) return DKB_ENOMEM;
        printf("{\"sql\": %s, \"backend\": \"%s\", ", q, o->backend_name);
        free(q);
        rc = dkb_result_print_json_fields(res, stdout);
        printf("}\n");
    } else {
        rc = dkb_result_print(res, o->fmt == CLI_FMT_CSV ? DKB_RES_FMT_CSV : DKB_RES_FMT_TABLE, stdout);
    }
    return rc;
}

/* The SQL of -f FILE ('-': standard input), malloc'ed; NULL with the error printed. */
static char *read_sql(const char *who, const char *file) {
    char *text = NULL;
    if (!strcmp(file, "-")) {
        if (!(text = read_stdin())) fprintf(stderr, "dkb sql: %serror: reading the SQL from standard input failed\n", who);
        return text;
    }
    size_t len;
    dkb_error err = {0};
    int rc = dkb__read_file(file, MAX_SQL_BYTES, &text, &len, &err);
    if (rc) {
        fprintf(stderr, "dkb sql: %serror: %s\n", who, err.msg[0] ? err.msg : dkb_strerror(rc));
        return NULL;
    }
    return text;
}

/* The query's name in emitted C: the stem of path ([a-z0-9_], at most 40
 * characters), or "sql". */
static void emit_name(const char *path, char *name, size_t cap) {
    snprintf(name, cap, "sql");
    if (!path || !strcmp(path, "-")) return;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = 0;
    for (; b[n] && b[n] != '.' && n < 40 && n + 1 < cap; n++) {
        char c = b[n];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        name[n] = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) ? c : '_';
    }
    if (n) name[n] = 0;
}

/* --emit c: the translated program as C, to standard output or to -o OUT
 * (written as OUT.tmp.PID, renamed when complete). */
static int emit_c(const sql_opts *o, const char *who, const char *file, const char *text, const char *json,
                  dkb_store *s, dkb__sql_planner *p, dkb_tp *tp) {
    char name[48], tmp[4200];
    emit_name(o->out ? o->out : file, name, sizeof name);
    FILE *f = stdout;
    if (o->out) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->out, (long)getpid());
        if (!(f = fopen(tmp, "w"))) {
            fprintf(stderr, "dkb sql: %serror: -o %s: cannot write %s: %s\n", who, o->out, tmp, strerror(errno));
            return DKB_EXIT_FAIL;
        }
    }
    dkb_error err = {0};
    int rc = dkb__sql_emit_c(p, s, tp, text, json, name, f, &err);
    if (o->out) {
        int bad = ferror(f);
        if (fclose(f) || bad) {
            if (!rc) fprintf(stderr, "dkb sql: %serror: -o %s: writing %s failed\n", who, o->out, tmp);
            rc = rc ? rc : DKB_EIO;
            err.msg[0] = 0;
        }
        if (!rc && rename(tmp, o->out)) {
            fprintf(stderr, "dkb sql: %serror: -o %s: cannot rename %s to it: %s\n", who, o->out, tmp, strerror(errno));
            rc = DKB_EIO;
        }
        if (rc) unlink(tmp);
    }
    if (rc && err.msg[0]) {
        if (who[0]) fprintf(stderr, "dkb sql: %serror: %s\n", who, err.msg);
        return who[0] ? DKB_EXIT_FAIL : cli_fail("sql", rc, &err);
    }
    return rc ? DKB_EXIT_FAIL : DKB_EXIT_OK;
}

/* One statement: plan, then explain or translate, run, print and check. */
static int one_sql(const sql_opts *o, const char *who, const char *file, const char *text, dkb_store *s,
                   dkb__sql_planner *p, dkb_tp *tp) {
    dkb_result res = {0};
    char *json = NULL, *tree = NULL, *pretty = NULL;
    dkb__sql_diag diag;
    dkb_error err = {0};
    int exit_code = DKB_EXIT_OK;
    int rc = dkb__sql_plan(p, text, &json, &diag, &err);
    if (rc == DKB_EPARSE) {
        if (who[0]) fprintf(stderr, "dkb sql: %serror: %s\n", who, err.msg);
        return who[0] ? DKB_EXIT_FAIL : print_sql_error(text, &diag, &err);
    }
    if (!rc && o->emit) {
        exit_code = emit_c(o, who, file, text, json, s, p, tp);
        free(json);
        return exit_code;
    }
    if (!rc && (o->what & EXPLAIN_TREE)) rc = dkb__sql_plan_tree(json, &tree, &err);
    if (!rc && (o->what & EXPLAIN_JSON)) rc = dkb__sql_json_pretty(json, &pretty, &err);
    if (!rc && (o->what == EXPLAIN_NONE || o->what == EXPLAIN_TP)) {
        if (o->what == EXPLAIN_TP) printf("-- TensorPlan program (%s backend), as it ran:\n", o->backend_name);
        rc = dkb__sql_translate(p, s, tp, text, json, o->what == EXPLAIN_TP ? stdout : NULL, &res, &err);
    }
    if (rc) {
        if (who[0]) fprintf(stderr, "dkb sql: %serror: %s\n", who, err.msg[0] ? err.msg : dkb_strerror(rc));
        exit_code = who[0] ? DKB_EXIT_FAIL : cli_fail("sql", rc, &err);
        goto done;
    }
    if (o->what == EXPLAIN_BOTH) printf("-- DuckDB %s, optimized logical plan\n", dkb__sql_duckdb_version(p));
    if (tree) fputs(tree, stdout);
    if (o->what == EXPLAIN_BOTH) printf("-- the plan as JSON (json_serialize_plan)\n");
    if (pretty) fputs(pretty, stdout);
    if (o->what == EXPLAIN_TP) printf("-- %lld row%s\n", (long long)res.nrows, res.nrows == 1 ? "" : "s");
    if (o->what == EXPLAIN_NONE && (o->time_runs > 0 || o->profile)) {
        /* the translated program alone, as the SQL task's baseline is
         * timed: DuckDB planned once (above), the plan parsed and the
         * column names taken once, here */
        double ms[64];
        int n = o->time_runs < 64 ? o->time_runs : 64;
        cJSON *doc = cJSON_Parse(json);
        char **names = NULL;
        int nnames = 0;
        rc = doc ? dkb__sql_column_names(p, text, &names, &nnames, &err) : dkb_fail(&err, DKB_EPARSE, "the plan JSON does not parse");
        /* --hand: the hand-written plan of the file's query at seed 0,
         * run after each translated run, so both see the same machine */
        const dkb_query *hq = NULL;
        dkb_params hp;
        double hms[64];
        if (!rc && o->hand) {
            const char *base = file ? strrchr(file, '/') : NULL;
            base = base ? base + 1 : file;
            char stem[16] = "";
            size_t bl = base ? strlen(base) : 0;
            if (bl > 4 && bl < sizeof stem + 4 && !strcmp(base + bl - 4, ".sql")) snprintf(stem, sizeof stem, "%.*s", (int)(bl - 4), base);
            hq = stem[0] && stem[0] == 'q' ? dkb_query_find(stem) : NULL;
            if (!hq)
                rc = dkb_fail(&err, DKB_EINVAL, "--hand: %s: the file's name is no TPC-H query's (q01.sql .. q22.sql)",
                              file ? file : "-e");
            else
                rc = dkb_query_params(hq, 0, dkb_store_scale_factor(s), NULL, 0, &hp, &err);
        }
        for (int i = -1; i < n && !rc; i++) {
            dkb_result again = {0};
            double t0 = dkb__now_ms();
            rc = dkb__sql_translate_named(s, tp, text, doc, names, nnames, NULL, &again, &err);
            if (i >= 0) ms[i] = dkb__now_ms() - t0;
            dkb_result_free(&again);
            if (rc || !hq) continue;
            dkb_tp_reset(tp);
            t0 = dkb__now_ms();
            rc = dkb_query_run(hq, tp, s, &hp, &again, &err);
            if (i >= 0) hms[i] = dkb__now_ms() - t0;
            dkb_result_free(&again);
            dkb_tp_reset(tp);
        }
        if (!rc && o->profile) {
            /* one more run of each, every operation counted */
            char line[2][1024], tline[2][1024];
            int64_t total[2] = {0, 0};
            double tms[2] = {0, 0};
            for (int k = 0; k < 2 && !rc; k++) {
                if (k == 1 && !hq) break;
                dkb_result again = {0};
                dkb_tp_reset(tp);
                rc = dkb_tp_profile_start(tp);
                if (rc) break;
                dkb_tp_profile_clear(tp);
                rc = k == 0 ? dkb__sql_translate_named(s, tp, text, doc, names, nnames, NULL, &again, &err)
                            : dkb_query_run(hq, tp, s, &hp, &again, &err);
                dkb_tp_profile_stop(tp);
                dkb_result_free(&again);
                dkb_tp_reset(tp);
                dkb_tp_profile_entry pe[64];
                int np = rc ? 0 : dkb_tp_profile_read(tp, pe, 64);
                /* by name, for a stable line */
                for (int a = 1; a < np; a++)
                    for (int b = a; b > 0 && strcmp(pe[b - 1].op, pe[b].op) > 0; b--) {
                        dkb_tp_profile_entry x = pe[b];
                        pe[b] = pe[b - 1], pe[b - 1] = x;
                    }
                size_t used = 0, tused = 0;
                line[k][0] = tline[k][0] = 0;
                for (int a = 0; a < np; a++) {
                    total[k] += pe[a].calls;
                    tms[k] += pe[a].seconds * 1e3;
                    if (used < sizeof line[k])
                        used += (size_t)snprintf(line[k] + used, sizeof line[k] - used, "%s%s %lld", a ? ", " : "", pe[a].op,
                                                 (long long)pe[a].calls);
                    if (tused < sizeof tline[k])
                        tused += (size_t)snprintf(tline[k] + tused, sizeof tline[k] - tused, "%s%s %.2f", a ? ", " : "",
                                                  pe[a].op, pe[a].seconds * 1e3);
                }
            }
            if (!rc) {
                fprintf(stderr, "dkb sql: %sprofile: translated program %lld operations: %s\n", who, (long long)total[0], line[0]);
                if (hq)
                    fprintf(stderr, "dkb sql: %sprofile: hand plan %s %lld operations: %s\n", who, hq->name, (long long)total[1],
                            line[1]);
                /* the profiled run's wall time per kind (each operation waits for the backend) */
                fprintf(stderr, "dkb sql: %sprofile: translated program ms %.2f: %s\n", who, tms[0], tline[0]);
                if (hq) fprintf(stderr, "dkb sql: %sprofile: hand plan %s ms %.2f: %s\n", who, hq->name, tms[1], tline[1]);
            }
        }
        for (int i = 0; i < nnames; i++) free(names[i]);
        free(names);
        cJSON_Delete(doc);
        if (rc) {
            exit_code = who[0] ? DKB_EXIT_FAIL : cli_fail("sql", rc, &err);
            goto done;
        }
        if (o->time_runs > 0) {
        dkb_timing t = dkb__timing_summary(ms, n);
        fprintf(stderr, "dkb sql: %stime: translated program median %.3f ms, min %.3f, max %.3f (%d run%s after 1 warm-up; %s)\n",
                who, t.median, t.min, t.max, n, n == 1 ? "" : "s", o->backend_name);
        if (hq) {
            dkb_timing h = dkb__timing_summary(hms, n);
            fprintf(stderr, "dkb sql: %stime: hand plan %s median %.3f ms, min %.3f, max %.3f; translated/hand %.2fx\n",
                    who, hq->name, h.median, h.min, h.max, h.median > 0 ? t.median / h.median : 0.0);
        }
        }
    }
    if (o->what == EXPLAIN_NONE) {
        bool show = !(o->nexpect || o->nexpect_dir || o->check) || o->fmt_given;
        if (show && print_result(o, text, &res)) exit_code = DKB_EXIT_FAIL;
        for (int i = 0; i < o->nexpect; i++)
            if (compare_csv(who, &res, o->expect[i], o->expect[i])) exit_code = DKB_EXIT_FAIL;
        for (int i = 0; i < o->nexpect_dir && file; i++) {
            const char *base = strrchr(file, '/');
            base = base ? base + 1 : file;
            size_t bl = strlen(base);
            if (bl > 4 && !strcmp(base + bl - 4, ".sql")) bl -= 4;
            char path[4096];
            snprintf(path, sizeof path, "%s/%.*s.csv", o->expect_dir[i], (int)bl, base);
            if (compare_csv(who, &res, path, path)) exit_code = DKB_EXIT_FAIL;
        }
        if (o->check && check_duckdb(who, p, text, &res)) exit_code = DKB_EXIT_FAIL;
        if (who[0] && !o->nexpect && !o->nexpect_dir && !o->check)
            fprintf(stderr, "dkb sql: %sok, %lld row%s\n", who, (long long)res.nrows, res.nrows == 1 ? "" : "s");
    }
done:
    dkb_result_free(&res);
    free(pretty);
    free(tree);
    free(json);
    return exit_code;
}

/* dkb sql --data STORE (-e SQL | -f FILE ...) [--explain]. */
static int run_sql(const sql_opts *o) {
    dkb_store *s = NULL;
    dkb__sql_planner *p = NULL;
    dkb_tp *tp = NULL;
    dkb_error err = {0};
    int exit_code = DKB_EXIT_OK;
    int rc = dkb_store_open(o->data, 0, &s, &err);
    if (!rc) rc = dkb__sql_planner_open(s, NULL, &p, &err);
    if (rc) {
        exit_code = cli_fail("sql", rc, &err);
        goto done;
    }
    if ((o->what == EXPLAIN_NONE || o->what == EXPLAIN_TP || o->emit) && (rc = dkb_tp_create(o->backend, o->threads, &tp, &err))) {
        fprintf(stderr, "dkb sql: error: --backend %s: %s\n", o->backend_name, err.msg[0] ? err.msg : dkb_strerror(rc));
        exit_code = DKB_EXIT_FAIL;
        goto done;
    }
    if (o->text) {
        char *given = strdup(o->text);
        char *sql = given ? with_declared(o, "", NULL, given, &exit_code) : NULL;
        if (!given) fprintf(stderr, "dkb sql: error: out of memory\n"), exit_code = DKB_EXIT_FAIL;
        if (sql) exit_code = one_sql(o, "", NULL, sql, s, p, tp);
        if (sql != given) free(sql);
        free(given);
    } else {
        int nok = 0;
        for (int i = 0; i < o->nfiles; i++) {
            char who[1200] = "";
            if (o->nfiles > 1) snprintf(who, sizeof who, "%s: ", o->files[i]);
            char *text = read_sql(who, o->files[i]);
            int code = DKB_EXIT_FAIL;
            char *sql = text ? with_declared(o, who, o->files[i], text, &code) : NULL;
            if (sql) code = one_sql(o, who, o->files[i], sql, s, p, tp);
            if (sql != text) free(sql);
            free(text);
            if (code) exit_code = code;
            else nok++;
        }
        if (o->nfiles > 1)
            fprintf(stderr, "dkb sql: %d of %d files ok\n", nok, o->nfiles);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb sql: error: writing the output failed\n");
        exit_code = DKB_EXIT_FAIL;
    }
done:
    dkb_tp_destroy(tp);
    dkb__sql_planner_close(p);
    dkb_store_close(s);
    return exit_code;
}

int cmd_sql(int argc, char **argv) {
    enum { O_SEED = 256, O_PARAM, O_SF, O_PARAMS_JSON, O_DATA, O_EXPLAIN, O_BACKEND, O_THREADS, O_FORMAT, O_EXPECT,
           O_EXPECT_DIR, O_CHECK, O_TIME, O_EMIT, O_HAND, O_PROFILE };
    static const struct option longopts[] = {{"seed", required_argument, 0, O_SEED},
                                              {"param", required_argument, 0, O_PARAM},
                                              {"sf", required_argument, 0, O_SF},
                                              {"params-json", no_argument, 0, O_PARAMS_JSON},
                                              {"data", required_argument, 0, O_DATA},
                                              {"explain", optional_argument, 0, O_EXPLAIN},
                                              {"backend", required_argument, 0, O_BACKEND},
                                              {"threads", required_argument, 0, O_THREADS},
                                              {"format", required_argument, 0, O_FORMAT},
                                              {"expect", required_argument, 0, O_EXPECT},
                                              {"expect-dir", required_argument, 0, O_EXPECT_DIR},
                                              {"check", no_argument, 0, O_CHECK},
                                              {"time", required_argument, 0, O_TIME},
                                              {"hand", no_argument, 0, O_HAND},
                                              {"profile", no_argument, 0, O_PROFILE},
                                              {"emit", required_argument, 0, O_EMIT},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    uint64_t seed = 0;
    double sf = 1;
    int json = 0, nov = 0, c, seed_given = 0, sf_given = 0, what = EXPLAIN_NONE, run_opts = 0;
    const char *data = NULL, *text = NULL, *file = NULL;
    static const char *files[MAX_FILES];
    sql_opts so = {.backend = DKB_TP_CPU, .backend_name = "cpu", .files = files};
    long v;
    char *ov[MAX_OVERRIDES];
    optind = 1;
    while ((c = getopt_long(argc, argv, "he:f:o:", longopts, NULL)) != -1) {
        switch (c) {
        case O_SEED:
            if (cli_parse_seed("--seed", optarg, &seed)) return DKB_EXIT_USAGE;
            seed_given = 1;
            break;
        case O_PARAM:
            if (nov == MAX_OVERRIDES) return cli_usage_error("sql: more than %d --param options", MAX_OVERRIDES);
            ov[nov++] = optarg;
            break;
        case O_SF:
            if (strpbrk(optarg, "xXpP")) /* strtod's hexadecimal form: not a scale factor */
                return cli_usage_error("--sf %s: not a number", optarg);
            if (cli_parse_double("--sf", optarg, &sf)) return DKB_EXIT_USAGE;
            if (sf <= 0) return cli_usage_error("--sf %s: scale factor must be positive", optarg);
            sf_given = 1;
            break;
        case O_PARAMS_JSON: json = 1; break;
        case O_DATA: data = optarg; break;
        case 'e':
            if (text || file) return cli_usage_error("sql: give the SQL once (-e or -f)");
            text = optarg;
            break;
        case 'f':
            if (text) return cli_usage_error("sql: give the SQL once (-e or -f)");
            if (so.nfiles == MAX_FILES) return cli_usage_error("sql: more than %d -f files", MAX_FILES);
            file = files[so.nfiles++] = optarg;
            break;
        case O_EXPLAIN:
            if (!optarg || !strcmp(optarg, "both")) what = EXPLAIN_BOTH;
            else if (!strcmp(optarg, "tree")) what = EXPLAIN_TREE;
            else if (!strcmp(optarg, "json")) what = EXPLAIN_JSON;
            else if (!strcmp(optarg, "tensorplan")) what = EXPLAIN_TP;
            else return cli_usage_error("--explain=%s: expected tree, json or both (or tensorplan)", optarg);
            break;
        case O_BACKEND:
            if (!strcmp(optarg, "cpu")) so.backend = DKB_TP_CPU;
            else if (!strcmp(optarg, "cuda")) so.backend = DKB_TP_CUDA;
            else return cli_usage_error("--backend %s: expected cpu or cuda", optarg);
            so.backend_name = optarg;
            break;
        case O_THREADS:
            if (cli_parse_int("--threads", optarg, 0, 4096, &v)) return DKB_EXIT_USAGE;
            so.threads = (int)v;
            break;
        case O_FORMAT:
            if (cli_parse_format("--format", optarg, &so.fmt)) return DKB_EXIT_USAGE;
            so.fmt_given = 1, run_opts = 1;
            break;
        case O_EXPECT:
            if (so.nexpect == MAX_EXPECT) return cli_usage_error("sql: more than %d --expect files", MAX_EXPECT);
            so.expect[so.nexpect++] = optarg, run_opts = 1;
            break;
        case O_EXPECT_DIR:
            if (so.nexpect_dir == MAX_EXPECT) return cli_usage_error("sql: more than %d --expect-dir", MAX_EXPECT);
            so.expect_dir[so.nexpect_dir++] = optarg, run_opts = 1;
            break;
        case O_CHECK: so.check = 1, run_opts = 1; break;
        case O_TIME:
            if (cli_parse_int("--time", optarg, 1, 64, &v)) return DKB_EXIT_USAGE;
            so.time_runs = (int)v, run_opts = 1;
            break;
        case O_HAND: so.hand = 1, run_opts = 1; break;
        case O_PROFILE: so.profile = 1, run_opts = 1; break;
        case O_EMIT:
            if (strcmp(optarg, "c")) return cli_usage_error("--emit %s: expected c (the only language)", optarg);
            so.emit = 1;
            break;
        case 'o': so.out = optarg; break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        default: return cli_usage_error("sql: bad option");
        }
    }
    if (so.out && !so.emit) return cli_usage_error("sql: -o goes with --emit c");
    if (so.hand && !so.time_runs && !so.profile) return cli_usage_error("sql: --hand goes with --time N or --profile");
    if (data || text || file || what || so.emit) {
        if (sf_given || json) return cli_usage_error("sql: --sf and --params-json go with QUERY, not --data");
        so.seed = seed, so.seed_given = seed_given, so.ov = ov, so.nov = nov;
        if (optind < argc) return cli_usage_error("sql: unexpected argument '%s' (the SQL goes after -e)", argv[optind]);
        if (!data) return cli_usage_error("sql: -e/-f/--explain need --data STORE");
        if (!text && !file) return cli_usage_error("sql: --data needs the SQL: -e SQL or -f FILE");
        if (what && what != EXPLAIN_TP && run_opts)
            return cli_usage_error("sql: --format, --expect and --check run the SQL; not with --explain=%s",
                                   what == EXPLAIN_TREE ? "tree" : what == EXPLAIN_JSON ? "json" : "both");
        if (so.emit && (what || run_opts))
            return cli_usage_error("sql: --emit c writes the program; not with --explain, --format, --expect, --check or --time");
        if (so.emit && so.nfiles > 1) return cli_usage_error("sql: --emit c takes one SQL (one -e or -f)");
        so.data = data, so.text = text, so.what = what;
        return run_sql(&so);
    }
    if (cli_one_operand("sql", "QUERY", argc, argv)) return DKB_EXIT_USAGE;
    const dkb_query *q;
    int rc = cli_query_arg("sql", argv[optind], &q);
    if (rc) return rc;
    dkb_params p;
    if ((rc = cli_query_params("sql", q, seed, sf, ov, nov, &p))) return rc;
    if (json) {
        printf("{\"query\": \"%s\", \"seed\": %llu, \"sf\": %.15g, \"params\": ", q->name, (unsigned long long)seed, sf);
        cli_params_json(stdout, &p);
        printf("}\n");
    } else {
        char *sql = dkb_query_sql(q, &p);
        if (!sql) return cli_fail("sql", DKB_ENOMEM, NULL);
        size_t len = strlen(sql);
        fputs(sql, stdout);
        if (!len || sql[len - 1] != '\n') fputc('\n', stdout);
        free(sql);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb sql: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return DKB_EXIT_OK;
}
