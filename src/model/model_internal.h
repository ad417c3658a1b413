/* model_internal.h: what the files of src/model share: the client object,
 * one attempt's outcome, the two backends (one attempt each), the backoff
 * rule and helpers that keep secrets out of messages. Not for callers
 * outside src/model. */
#ifndef DKB_MODEL_INTERNAL_H
#define DKB_MODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"  // defines: dkb_model_opts, dkb_model_msg

/* The client: the options with private copies of their strings. */
struct dkb_model {
    dkb_model_opts o;   /* strings point into the copies below */
    char *model, *base_url, *api_key_env, *cmd;
    char *url;          /* base_url + "/chat/completions" */
};

/* The outcome of one request (one HTTP attempt or one command run). */
typedef struct dkb__model_attempt {
    char *text;             /* malloc'd reply text, NULL when none */
    int64_t tokens_in;      /* from usage, -1 when unknown */
    int64_t tokens_out;     /* from usage, -1 when unknown */
    int http_status;        /* 0 when no status line arrived (or command) */
    char finish_reason[32]; /* as dkb_model_reply */
    int retryable;          /* on failure: 1 when another attempt may succeed */
    double retry_after_s;   /* Retry-After in seconds, < 0 when absent */
} dkb__model_attempt;

/* One HTTP request (model_http.c). 0 with a->text set, or a DKB_E* code with
 * err set, a->retryable and a->finish_reason ("timeout" or "error"). */
int dkb__model_http_once(const dkb_model *m, const dkb_model_msg *msgs, int n,
                         dkb__model_attempt *a, dkb_error *err);
/* One run of the command (model_cmd.c); the same contract, never retryable. */
int dkb__model_cmd_run(const dkb_model *m, const dkb_model_msg *msgs, int n,
                       dkb__model_attempt *a, dkb_error *err);

/* The wait before retry number `retry` (1 for the first retry):
 * base * 2^(retry-1) capped at 60 s, times a jitter factor in [0.5, 1)
 * drawn from *rng (xorshift state, non-zero); at least retry_after_s when
 * that is >= 0 (itself capped at 300 s). */
double dkb__model_backoff_s(double base_s, int retry, double retry_after_s, uint64_t *rng);

/* Replace every occurrence of secret (when non-NULL and non-empty) in the
 * NUL-terminated msg with "[REDACTED]", in place within cap bytes. */
void dkb__model_scrub(char *msg, size_t cap, const char *secret);

/* The length of the longest prefix of s[0..len) of at most max bytes that
 * does not end inside a UTF-8 sequence. */
size_t dkb__model_utf8_cut(const char *s, size_t len, size_t max);

#endif
