/* model.h: ask a code-writing model for a reply: an OpenAI-compatible chat
 * completions endpoint over HTTP(S) (libcurl + cJSON), or a local command
 * (conversation on stdin, reply on stdout). Thread-safe: several requests
 * may run at once on one dkb_model from different threads.
 *
 * The command backend: the conversation on stdin as plain text, each
 * message introduced by a line `### system`, `### user` or `### assistant`
 * followed by its content; the reply is everything the command prints on
 * stdout; a non-zero exit or the timeout is an error (the command is
 * killed, its process group too). It is not retried.
 *
 * The HTTP backend retries 429, 408, 409, 5xx and connection errors
 * (including a reply cut mid-body) up to max_retries times, waiting
 * retry_base_s * 2^k with jitter (at most 60 s each; a Retry-After header
 * in seconds is honoured), and gives up early when the next wait would
 * take the total wait past retry_max_wait_s. A timeout is not retried.
 * The API key is read from getenv(api_key_env) at each request and sent
 * only in the Authorization header; it is never written anywhere (error
 * messages are scrubbed of it). */
#ifndef DKB_MODEL_H
#define DKB_MODEL_H

#include <stdint.h>

#include "dkb/error.h"  // defines: dkb_error, DKB_E*

#ifdef __cplusplus
extern "C" {
#endif

/* Options. Zero means "the default" for timeout_s, max_reply_bytes,
 * retry_base_s and retry_max_wait_s; NULL for base_url and api_key_env.
 * dkb_model_opts_init gives every default (max_retries 5, temperature -1). */
typedef struct dkb_model_opts {
    const char *model;          /* model name sent to the API ("gpt-4.1", "qwen2.5-coder") */
    const char *base_url;       /* "https://api.openai.com/v1" (chat completions at base_url + "/chat/completions") */
    const char *api_key_env;    /* name of the environment variable holding the key (default "OPENAI_API_KEY"; may be unset for local servers) */
    const char *cmd;            /* non-NULL: the command backend instead of HTTP (run with /bin/sh -c) */
    double timeout_s;           /* per request, whole reply (default 600) */
    int max_retries;            /* on 429, 5xx, connection errors (default 5), exponential backoff with jitter, Retry-After honoured */
    int64_t max_tokens;         /* per reply (0: the server's default) */
    double temperature;         /* < 0: not sent */
    int64_t max_reply_bytes;    /* a larger reply is cut and flagged (default 1 MiB) */
    double price_in_per_mtok, price_out_per_mtok;  /* USD per million tokens, for cost (0: unknown) */
    /* Added after the first version of this interface: */
    double retry_base_s;        /* first backoff wait (default 1 s; doubles per retry, jitter 50-100%) */
    double retry_max_wait_s;    /* cap on the total time spent waiting between retries (default 120 s) */
} dkb_model_opts;

typedef struct dkb_model_msg { const char *role; const char *content; } dkb_model_msg; /* "system" | "user" | "assistant" */

typedef struct dkb_model_reply {
    char *text;                 /* malloc'd reply text ("" on failure) */
    int64_t tokens_in, tokens_out;  /* from the API's usage, else estimated as bytes/4 */
    double latency_s;           /* wall time of the whole request, retries included */
    double cost_usd;            /* from the prices, 0 when unknown */
    int attempts;               /* requests made (1 + retries) */
    int http_status;            /* last HTTP status (0 for the command backend) */
    char finish_reason[32];     /* "stop", "length", "truncated" (cut at max_reply_bytes), "timeout", "error" */
} dkb_model_reply;

typedef struct dkb_model dkb_model;

/* Fill o with every default: base_url "https://api.openai.com/v1",
 * api_key_env "OPENAI_API_KEY", timeout_s 600, max_retries 5,
 * temperature -1 (not sent), max_reply_bytes 1 MiB, retry_base_s 1,
 * retry_max_wait_s 120; model and cmd NULL, prices 0. */
void dkb_model_opts_init(dkb_model_opts *o);

/* Open a model client (copies every string of o). DKB_EINVAL when o or out
 * is NULL, when neither model nor cmd is given for HTTP, or when a number
 * is out of range (negative timeout, max_retries or max_reply_bytes);
 * DKB_ENOMEM. *out is NULL on failure. */
int dkb_model_open(const dkb_model_opts *o, dkb_model **out, dkb_error *err);

/* One chat request. 0 with r filled, or an error code with err set (after retries) and r->text "".
 * Never writes the API key anywhere (not in err, logs, or files).
 * On failure r is still filled as far as known: attempts, http_status,
 * latency_s, and finish_reason "timeout" (the request or command ran past
 * timeout_s) or "error". Codes: DKB_EIO (connection, HTTP status, timeout,
 * command exit), DKB_EPARSE (a 200 reply that is not chat-completions
 * JSON), DKB_EINVAL (bad arguments: NULL m/msgs/r, n < 1, NULL role or
 * content), DKB_ENOMEM. A success may still be flagged: finish_reason
 * "length" (the model hit max_tokens) or "truncated" (cut at
 * max_reply_bytes). Free r with dkb_model_reply_free in either case. */
int dkb_model_chat(dkb_model *m, const dkb_model_msg *msgs, int n, dkb_model_reply *r, dkb_error *err);
/* Free r->text and zero r. Accepts NULL. */
void dkb_model_reply_free(dkb_model_reply *r);
/* Free m. Accepts NULL. No request may be running on m. */
void dkb_model_close(dkb_model *m);

/* Which code blocks of a reply count: C, C++ or CUDA (cuda/cu/c/cpp/c++ and
 * the header names below), or Python (python/py/python3); a block with no
 * language counts for both. */
typedef enum { DKB_CODE_C = 0, DKB_CODE_PYTHON } dkb_code_lang;

/* The code of a reply: the fenced code block (```lang ... ```) whose
 * language is one of `want`'s or none; the longest one if several. DKB_ENOENT with err
 * "no fenced code block" when none; DKB_EPARSE "unterminated code block" for a cut reply. malloc'd.
 *
 * Details: a fence is a line starting (after at most 3 spaces) with 3 or
 * more backticks or tildes; it closes at a line of at least as many of the
 * same character and nothing else but spaces. The language is the first
 * word of the opening line, case-insensitive; cuh, h, hpp, cc, cxx also
 * count. Of several blocks the longest wins (the first of equal lengths).
 * An accepted block that is never closed gives DKB_EPARSE even when a
 * complete one exists (the reply was cut; its code cannot be trusted).
 * CRLF line ends become LF in the code. *code is NULL on failure. */
int dkb_model_extract_code(const char *reply, dkb_code_lang want, char **code, dkb_error *err);

#ifdef __cplusplus
}
#endif

#endif
