/* cli_query.c: query arguments, seeds and parameter sets for `dkb run`
 * and `dkb sql` (see cli_query.h). */
#include "cli_query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

int cli_query_arg(const char *cmd, const char *arg, const dkb_query **q) {
    int n = dkb_query_number(arg);
    if (!n) return cli_usage_error("%s: unknown query '%s' (expected q01..q22 or 1..22)", cmd, arg);
    *q = dkb_query_get(n);
    if (!*q) {
        fprintf(stderr, "dkb %s: error: q%02d: plan not available in this build (src/queries/q%02d.c not linked)\n",
                cmd, n, n);
        return DKB_EXIT_FAIL;
    }
    return 0;
}

int cli_parse_seed(const char *opt, const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] < '0' || s[0] > '9') /* digits only: no sign, space or 0x */
        return cli_usage_error("%s %s: expected an integer from 0 to 18446744073709551615", opt, s);
    *out = v;
    return 0;
}

int cli_query_params(const char *cmd, const dkb_query *q, uint64_t seed, double sf, char *const *overrides,
                     int noverrides, dkb_params *p) {
    dkb_error err = {0};
    int rc = dkb_query_params(q, seed, sf, (const char *const *)overrides, noverrides, p, &err);
    if (!rc) return 0;
    if (rc == DKB_EINVAL) return cli_usage_error("%s", err.msg);
    return cli_fail(cmd, rc, &err);
}

#define SHELL_SAFE "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_#%+,-./:=@"

void cli_params_line(FILE *f, const dkb_query *q, uint64_t seed, const dkb_params *p) {
    fprintf(f, "%s seed=%llu", q->name, (unsigned long long)seed);
    for (int i = 0; i < p->n; i++) {
        char text[DKB_PARAM_STRLEN + 64];
        dkb_param_text(&p->v[i], text, sizeof text);
        /* quoted for a POSIX shell unless every byte is plainly safe there */
        if (p->v[i].kind == DKB_PARAM_STRING && (!*text || *text == '#' || text[strspn(text, SHELL_SAFE)])) {
            fprintf(f, " %s='", p->v[i].name);
            for (const char *s = text; *s; s++) fputs(*s == '\'' ? "'\\''" : (char[2]){*s, 0}, f);
            fputc('\'', f);
        } else {
            fprintf(f, " %s=%s", p->v[i].name, text);
        }
    }
}

cJSON *cli_params_cjson(const dkb_params *p) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < p->n; i++) {
        char text[DKB_PARAM_STRLEN + 64];
        dkb_param_text(&p->v[i], text, sizeof text);
        int number = p->v[i].kind == DKB_PARAM_INT || p->v[i].kind == DKB_PARAM_DECIMAL;
        if (!(number ? cJSON_AddRawToObject(o, p->v[i].name, text) : cJSON_AddStringToObject(o, p->v[i].name, text))) {
            cJSON_Delete(o);
            o = NULL;
        }
    }
    return o;
}

void cli_params_json(FILE *f, const dkb_params *p) {
    cJSON *o = cli_params_cjson(p);
    cli_json_print(f, o);
    cJSON_Delete(o);
}
