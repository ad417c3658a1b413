/* cmd_prompt.c: `dkb prompt QUERY`: print the exact first prompt `dkb
 * optimize` sends a model for one query, target and mode (system and user
 * message), so it can be read and the templates tuned. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dkb/query.h"
#include "dkb/store.h"
#include "optimize/prompt.h"
#include "optimize/target.h"     // defines: dkb__opt_target_find, dkb__opt_target_names
#include "optimize/template.h"
#include "sql/task.h"   // defines: dkb__sql_task_plan, dkb__sql_task_program

static void usage(FILE *f) {
    fprintf(f,
            "usage: dkb prompt QUERY --data STORE [options]\n"
            "       dkb prompt --sql FILE.sql --data STORE [options]\n"
            "\n"
            "Print the prompt `dkb optimize` sends for QUERY (q01..q22): the system\n"
            "message, then the user message (task, SQL at the qualification parameters,\n"
            "baseline plan source, candidate.h, workload and hardware context, reply\n"
            "format), each after a line '### system' / '### user'.\n"
            "\n"
            "options:\n"
            "  --data STORE        the store the workload context is measured on (required)\n"
            "  --sql FILE.sql      a SQL task instead of QUERY: the prompt shows the SQL and,\n"
            "                      as the baseline, its translated TensorPlan program (as\n"
            "                      dkb sql --explain=tensorplan prints it); full mode only;\n"
            "                      libduckdb needed (it plans the SQL)\n"
            "  --target T          c (default), cuda, python (PyTorch, dkb eval --target\n"
            "                      python) or triton (PyTorch and Triton on the GPU)\n"
            "  --mode M            core (default) or full\n"
            "  --context LIST      workload,hardware (default), workload, hardware or none\n"
            "  --mem-budget SIZE   full mode under a memory budget (64M, 16G): the prompt says\n"
            "                      whether the query fits, what streams in how many partitions\n"
            "                      and the load limit (measured by running the baseline under\n"
            "                      it), and shows dkb/cand_stream.h; --target c or cuda\n"
            "  --templates DIR     template directory (default $DKB_PROMPTS, else prompts/\n"
            "                      of the source tree)\n"
            "  -h, --help          this help\n"
            "\n"
            "example:\n"
            "  dkb prompt q06 --data data/sf1 --target cuda --mode core\n"
            "  dkb prompt q06 --data data/sf1 --target triton --mode full\n"
            "  dkb prompt q06 --data data/sf0.1-p8 --mode full --mem-budget 4M\n");
}

/* "workload,hardware" / "none" -> flags; 0 or a usage error. */
int cli_parse_context(const char *s, int *workload, int *hardware);
int cli_parse_context(const char *s, int *workload, int *hardware) {
    *workload = *hardware = 0;
    if (!strcmp(s, "none")) return 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "workload")) *workload = 1;
        else if (!strcmp(tok, "hardware")) *hardware = 1;
        else return cli_usage_error("--context %s: expected workload, hardware (comma-separated) or none", s);
    }
    if (!*workload && !*hardware) return cli_usage_error("--context %s: expected workload, hardware or none", s);
    return 0;
}

/* Open store, which must hold a whole data set (slices refused); 0 or an exit code. */
static int open_whole(const char *store, dkb_store **db, dkb_error *err) {
    int rc = dkb_store_open(store, 0, db, err);
    if (rc) return cli_fail("prompt", rc, err);
    int part, parts;
    dkb_store_slice(*db, &part, &parts);
    if (parts > 1) {   /* its row counts and selectivities would describe a fraction of the data */
        dkb_store_close(*db);
        *db = NULL;
        fprintf(stderr, "dkb prompt: error: store %s holds slice %d of %d; the workload context needs a whole data set\n",
                store, part, parts);
        return DKB_EXIT_FAIL;
    }
    return 0;
}

static int print_prompt(const char *system, const char *user) {
    printf("### system\n%s\n### user\n%s", system, user);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb prompt: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return DKB_EXIT_OK;
}

/* dkb prompt --sql FILE.sql: the task planned here, its program as the baseline. */
static int prompt_sql(dkb_opt_prompt_opts *po, const char *sql, const char *store, const char *templates,
                      int mode_core, int argc, char **argv) {
    if (mode_core) return cli_usage_error("prompt: --mode core: a SQL task (--sql) is full mode only");
    if (optind < argc) return cli_usage_error("prompt: --sql FILE.sql takes no QUERY (got '%s')", argv[optind]);
    if (!store) return cli_usage_error("prompt: missing --data STORE");
    po->mode = DKB_MODE_FULL;
    po->templates = dkb__opt_templates_dir(templates);
    dkb_error err = {0};
    dkb_store *db = NULL;
    int code = open_whole(store, &db, &err);
    if (code) return code;
    dkb__sql_task *t = NULL;
    char *program = NULL, *system = NULL, *user = NULL;
    dkb_params p;
    int rc = dkb__sql_task_plan(sql, db, &t, &err);
    const dkb_query *q = rc ? NULL : dkb__sql_task_query(t);
    if (!rc) rc = dkb__sql_task_program(t, db, &program, &err);
    if (!rc) {
        po->sql_task = q->name;
        po->plan_source = program;
        rc = dkb_query_params(q, 0, dkb_store_scale_factor(db), NULL, 0, &p, &err);
    }
    if (!rc) rc = dkb__opt_build_prompt(po, q, db, &p, &system, &user, &err);
    code = rc ? cli_fail("prompt", rc, &err) : print_prompt(system, user);
    free(program);
    free(system);
    free(user);
    dkb__sql_task_free(t);
    dkb_store_close(db);
    return code;
}

int cmd_prompt(int argc, char **argv) {
    enum { O_DATA = 256, O_TARGET, O_MODE, O_CONTEXT, O_TEMPLATES, O_SQL, O_MEM_BUDGET };
    static const struct option longopts[] = {{"data", required_argument, 0, O_DATA},
                                              {"target", required_argument, 0, O_TARGET},
                                              {"mode", required_argument, 0, O_MODE},
                                              {"context", required_argument, 0, O_CONTEXT},
                                              {"templates", required_argument, 0, O_TEMPLATES},
                                              {"sql", required_argument, 0, O_SQL},
                                              {"mem-budget", required_argument, 0, O_MEM_BUDGET},
                                              {"help", no_argument, 0, 'h'},
                                              {0, 0, 0, 0}};
    const char *store = NULL, *templates = NULL, *sql = NULL;
    int mode_given = 0;
    dkb_opt_prompt_opts po = {.target = "c", .mode = DKB_MODE_CORE, .workload = 1, .hardware = 1};
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_DATA: store = optarg; break;
        case O_TARGET:
            if (!dkb__opt_target_find(optarg))
                return cli_usage_error("--target %s: expected %s", optarg, dkb__opt_target_names());
            po.target = optarg;
            break;
        case O_SQL: sql = optarg; break;
        case O_MODE:
            mode_given = !strcmp(optarg, "core");
            if (!strcmp(optarg, "core")) po.mode = DKB_MODE_CORE;
            else if (!strcmp(optarg, "full")) po.mode = DKB_MODE_FULL;
            else return cli_usage_error("--mode %s: expected core or full", optarg);
            break;
        case O_CONTEXT:
            if (cli_parse_context(optarg, &po.workload, &po.hardware)) return DKB_EXIT_USAGE;
            break;
        case O_TEMPLATES: templates = optarg; break;
        case O_MEM_BUDGET:
            if (cli_parse_size("--mem-budget", optarg, &po.mem_budget)) return DKB_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return DKB_EXIT_OK;
        case ':': return cli_usage_error("prompt: option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("prompt: unknown option %s", argv[optind - 1]);
        }
    }
    if (po.mem_budget && (po.mode != DKB_MODE_FULL || (strcmp(po.target, "c") && strcmp(po.target, "cuda")) || sql))
        return cli_usage_error("prompt: --mem-budget: --mode full, --target c or cuda, no --sql (candidates stream "
                               "in full mode, C or CUDA, so far)");
    if (sql) return prompt_sql(&po, sql, store, templates, mode_given, argc, argv);
    if (cli_one_operand("prompt", "QUERY (q01..q22)", argc, argv)) return DKB_EXIT_USAGE;
    const char *name = argv[optind];
    if (!dkb_query_number(name)) return cli_usage_error("prompt: unknown query '%s' (expected q01..q22)", name);
    const dkb_query *q = dkb_query_find(name);
    if (!store) return cli_usage_error("prompt: missing --data STORE");
    dkb_error err = {0};
    if (!q) return cli_fail("prompt", dkb_fail(&err, DKB_ENOENT, "%s: no baseline plan in this build", name), &err);
    po.templates = dkb__opt_templates_dir(templates);
    dkb_store *db = NULL;
    int rc = dkb_store_open(store, 0, &db, &err);
    if (rc) return cli_fail("prompt", rc, &err);
    int part, parts;
    dkb_store_slice(db, &part, &parts);
    if (parts > 1) {   /* its row counts and selectivities would describe a fraction of the data */
        dkb_store_close(db);
        fprintf(stderr, "dkb prompt: error: store %s holds slice %d of %d; the workload context needs a whole data set\n",
                store, part, parts);
        return DKB_EXIT_FAIL;
    }
    dkb_params p;
    char *system = NULL, *user = NULL;
    rc = dkb_query_params(q, 0, dkb_store_scale_factor(db), NULL, 0, &p, &err);
    if (!rc) rc = dkb__opt_build_prompt(&po, q, db, &p, &system, &user, &err);
    dkb_store_close(db);
    if (rc) return cli_fail("prompt", rc, &err);
    printf("### system\n%s\n### user\n%s", system, user);
    free(system);
    free(user);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "dkb prompt: error: writing the output failed\n");
        return DKB_EXIT_FAIL;
    }
    return DKB_EXIT_OK;
}
