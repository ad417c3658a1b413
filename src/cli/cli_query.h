/* cli_query.h: what `dkb run` and `dkb sql` share: resolving a query
 * argument, parsing seeds, drawing parameters with overrides (errors
 * printed with the right exit code), and printing a parameter set as a
 * line or as JSON. */
#ifndef DKB_CLI_QUERY_H
#define DKB_CLI_QUERY_H

#include <stdint.h>
#include <stdio.h>

#include "dkb/query.h"

/* The query `arg` names (q01..q22, Q6, 6, 06): 0 with *q set; a usage
 * error (DKB_EXIT_USAGE) for a name that is no query; DKB_EXIT_FAIL for
 * a query whose plan is not linked into this build. */
int cli_query_arg(const char *cmd, const char *arg, const dkb_query **q);
/* A seed: a decimal integer 0 .. 2^64 - 1. 0 or a usage error. */
int cli_parse_seed(const char *opt, const char *s, uint64_t *out);
/* dkb_query_params with messages: a bad override or value is a usage
 * error (exit 2), a malformed draw a failure (exit 1). 0 on success. */
int cli_query_params(const char *cmd, const dkb_query *q, uint64_t seed, double sf, char *const *overrides,
                     int noverrides, dkb_params *p);
/* "q06 seed=0 date=1994-01-01 discount=0.06 quantity=24" (values with
 * spaces or quotes in single quotes), no newline. */
void cli_params_line(FILE *f, const dkb_query *q, uint64_t seed, const dkb_params *p);
/* {"date": "1994-01-01", "discount": 0.06, "quantity": 24}: DATE and
 * STRING as JSON strings, INT and DECIMAL as JSON numbers written as
 * their command-line text (0.06 exactly). cli_params_cjson returns it as a
 * cJSON object (NULL when out of memory); cli_params_json prints it
 * (cli_json_print, no newline). */
struct cJSON *cli_params_cjson(const dkb_params *p);
void cli_params_json(FILE *f, const dkb_params *p);

#endif
