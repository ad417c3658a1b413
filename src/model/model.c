/* model.c: the model client's options, lifetime and one chat request:
 * validate the arguments, run the backend (HTTP or command) with retries,
 * exponential backoff and jitter, then fill the reply's accounting (tokens,
 * latency, cost). The backends are in model_http.c and model_cmd.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/timing.h"  // defines: dkb__now_s
#include "model/model_internal.h"

#define DEFAULT_BASE_URL "https://api.openai.com/v1"
#define DEFAULT_KEY_ENV "OPENAI_API_KEY"
#define DEFAULT_TIMEOUT_S 600.0
#define DEFAULT_MAX_RETRIES 5
#define DEFAULT_MAX_REPLY_BYTES ((int64_t)1 << 20)
#define DEFAULT_RETRY_BASE_S 1.0
#define DEFAULT_RETRY_MAX_WAIT_S 120.0
#define BACKOFF_CAP_S 60.0
#define RETRY_AFTER_CAP_S 300.0

void dkb_model_opts_init(dkb_model_opts *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->base_url = DEFAULT_BASE_URL;
    o->api_key_env = DEFAULT_KEY_ENV;
    o->timeout_s = DEFAULT_TIMEOUT_S;
    o->max_retries = DEFAULT_MAX_RETRIES;
    o->temperature = -1.0;
    o->max_reply_bytes = DEFAULT_MAX_REPLY_BYTES;
    o->retry_base_s = DEFAULT_RETRY_BASE_S;
    o->retry_max_wait_s = DEFAULT_RETRY_MAX_WAIT_S;
}

/* A copy of s into *dst (NULL stays NULL); 0 or -1 when out of memory. */
static int copy_opt(const char *s, char **dst) {
    *dst = NULL;
    if (!s) return 0;
    *dst = strdup(s);
    return *dst ? 0 : -1;
}

void dkb_model_close(dkb_model *m) {
    if (!m) return;
    free(m->model);
    free(m->base_url);
    free(m->api_key_env);
    free(m->cmd);
    free(m->url);
    free(m);
}

int dkb_model_open(const dkb_model_opts *o, dkb_model **out, dkb_error *err) {
    if (out) *out = NULL;
    if (!o || !out) return dkb_fail(err, DKB_EINVAL, "dkb_model_open: NULL options or output");
    if (!o->cmd && (!o->model || !*o->model))
        return dkb_fail(err, DKB_EINVAL, "model: no model name given for the HTTP backend (and no command)");
    if (o->cmd && !*o->cmd) return dkb_fail(err, DKB_EINVAL, "model: the model command is empty");
    if (o->timeout_s < 0 || o->max_retries < 0 || o->max_reply_bytes < 0 || o->max_tokens < 0 ||
        o->retry_base_s < 0 || o->retry_max_wait_s < 0 || o->price_in_per_mtok < 0 || o->price_out_per_mtok < 0)
        return dkb_fail(err, DKB_EINVAL,
                        "model: negative option (timeout %g s, max_retries %d, max_reply_bytes %lld, max_tokens %lld, "
                        "retry waits %g/%g s, prices %g/%g)",
                        o->timeout_s, o->max_retries, (long long)o->max_reply_bytes, (long long)o->max_tokens,
                        o->retry_base_s, o->retry_max_wait_s, o->price_in_per_mtok, o->price_out_per_mtok);
    dkb_model *m = calloc(1, sizeof *m);
    if (!m) return dkb_fail(err, DKB_ENOMEM, "model: out of memory opening the client");
    m->o = *o;
    const char *base = o->base_url && *o->base_url ? o->base_url : DEFAULT_BASE_URL;
    const char *key_env = o->api_key_env && *o->api_key_env ? o->api_key_env : DEFAULT_KEY_ENV;
    if (copy_opt(o->model, &m->model) || copy_opt(base, &m->base_url) || copy_opt(key_env, &m->api_key_env) ||
        copy_opt(o->cmd, &m->cmd)) {
        dkb_model_close(m);
        return dkb_fail(err, DKB_ENOMEM, "model: out of memory copying the options");
    }
    size_t blen = strlen(m->base_url);
    while (blen > 0 && m->base_url[blen - 1] == '/') m->base_url[--blen] = '\0';
    static const char suffix[] = "/chat/completions";
    m->url = malloc(blen + sizeof suffix);
    if (!m->url) {
        dkb_model_close(m);
        return dkb_fail(err, DKB_ENOMEM, "model: out of memory building the URL");
    }
    memcpy(m->url, m->base_url, blen);
    memcpy(m->url + blen, suffix, sizeof suffix);
    m->o.model = m->model;
    m->o.base_url = m->base_url;
    m->o.api_key_env = m->api_key_env;
    m->o.cmd = m->cmd;
    if (m->o.timeout_s == 0) m->o.timeout_s = DEFAULT_TIMEOUT_S;
    if (m->o.max_reply_bytes == 0) m->o.max_reply_bytes = DEFAULT_MAX_REPLY_BYTES;
    if (m->o.retry_base_s == 0) m->o.retry_base_s = DEFAULT_RETRY_BASE_S;
    if (m->o.retry_max_wait_s == 0) m->o.retry_max_wait_s = DEFAULT_RETRY_MAX_WAIT_S;
    *out = m;
    return 0;
}

void dkb_model_reply_free(dkb_model_reply *r) {
    if (!r) return;
    free(r->text);
    memset(r, 0, sizeof *r);
}

static uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

double dkb__model_backoff_s(double base_s, int retry, double retry_after_s, uint64_t *rng) {
    double d = base_s;
    for (int i = 1; i < retry && d < BACKOFF_CAP_S; i++) d *= 2;
    if (d > BACKOFF_CAP_S) d = BACKOFF_CAP_S;
    double jitter = 0.5 + 0.5 * (double)(xorshift(rng) >> 11) / (double)(UINT64_C(1) << 53);
    d *= jitter;
    if (retry_after_s >= 0) {
        double ra = retry_after_s < RETRY_AFTER_CAP_S ? retry_after_s : RETRY_AFTER_CAP_S;
        if (d < ra) d = ra;
    }
    return d;
}

void dkb__model_scrub(char *msg, size_t cap, const char *secret) {
    static const char mark[] = "[REDACTED]";
    if (!msg || !secret || !*secret) return;
    size_t slen = strlen(secret), mlen = sizeof mark - 1;
    char *p = msg;
    while ((p = strstr(p, secret)) != NULL) {
        size_t tail = strlen(p + slen);
        size_t pos = (size_t)(p - msg);
        /* Keep the result within cap: the tail may lose its end. */
        if (pos + mlen + tail + 1 > cap) tail = cap > pos + mlen + 1 ? cap - pos - mlen - 1 : 0;
        if (pos + mlen + 1 > cap) { /* no room for the mark: cut here */
            *p = '\0';
            return;
        }
        memmove(p + mlen, p + slen, tail);
        memcpy(p, mark, mlen);
        p[mlen + tail] = '\0';
        p += mlen;
    }
}

size_t dkb__model_utf8_cut(const char *s, size_t len, size_t max) {
    if (len <= max) return len;
    size_t cut = max;
    /* Step back over continuation bytes to the start of a sequence. */
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    return cut;
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int64_t estimate_tokens(size_t bytes) { return (int64_t)((bytes + 3) / 4); }

/* Validate the request; 0 or DKB_EINVAL naming the bad argument. */
static int check_request(const dkb_model *m, const dkb_model_msg *msgs, int n, dkb_error *err) {
    if (!m || !msgs || n < 1)
        return dkb_fail(err, DKB_EINVAL, "dkb_model_chat: NULL client or messages, or %d messages", n);
    for (int i = 0; i < n; i++)
        if (!msgs[i].role || !msgs[i].content || !*msgs[i].role)
            return dkb_fail(err, DKB_EINVAL, "dkb_model_chat: message %d has no role or no content", i);
    return 0;
}

int dkb_model_chat(dkb_model *m, const dkb_model_msg *msgs, int n, dkb_model_reply *r, dkb_error *err) {
    if (!r) return dkb_fail(err, DKB_EINVAL, "dkb_model_chat: NULL reply");
    memset(r, 0, sizeof *r);
    r->text = strdup("");
    if (!r->text) return dkb_fail(err, DKB_ENOMEM, "model: out of memory");
    snprintf(r->finish_reason, sizeof r->finish_reason, "error");
    int rc = check_request(m, msgs, n, err);
    if (rc) return rc;

    double t0 = dkb__now_s(), waited = 0;
    uint64_t rng = (uint64_t)(t0 * 1e9) ^ (uint64_t)(uintptr_t)r ^ UINT64_C(0x9E3779B97F4A7C15);
    if (!rng) rng = 1;
    dkb_error e = {0};
    dkb__model_attempt a;
    for (;;) {
        memset(&a, 0, sizeof a);
        a.tokens_in = a.tokens_out = -1;
        a.retry_after_s = -1;
        e.code = 0;
        e.msg[0] = '\0';
        r->attempts++;
        rc = m->o.cmd ? dkb__model_cmd_run(m, msgs, n, &a, &e) : dkb__model_http_once(m, msgs, n, &a, &e);
        r->http_status = a.http_status;
        if (rc == 0) break;
        free(a.text);
        a.text = NULL;
        snprintf(r->finish_reason, sizeof r->finish_reason, "%s", a.finish_reason[0] ? a.finish_reason : "error");
        if (!a.retryable || r->attempts > m->o.max_retries) break;
        double wait = dkb__model_backoff_s(m->o.retry_base_s, r->attempts, a.retry_after_s, &rng);
        if (waited + wait > m->o.retry_max_wait_s) {
            char last[sizeof e.msg];
            memcpy(last, e.msg, sizeof last);
            dkb_fail(&e, rc, "%.300s; gave up: the next wait (%.1f s) would pass the retry wait cap (%.0f s)", last,
                     wait, m->o.retry_max_wait_s);
            break;
        }
        sleep_s(wait);
        waited += wait;
    }
    r->latency_s = dkb__now_s() - t0;
    if (rc) {
        if (r->attempts > 1) {
            char last[sizeof e.msg];
            memcpy(last, e.msg, sizeof last);
            dkb_fail(&e, rc, "%.440s (%d attempts)", last, r->attempts);
        }
        dkb__model_scrub(e.msg, sizeof e.msg, getenv(m->o.api_key_env));
        if (err) *err = e;
        return rc;
    }
    free(r->text);
    r->text = a.text;
    snprintf(r->finish_reason, sizeof r->finish_reason, "%s", a.finish_reason[0] ? a.finish_reason : "stop");
    size_t in_bytes = 0;
    for (int i = 0; i < n; i++) in_bytes += strlen(msgs[i].content) + strlen(msgs[i].role);
    r->tokens_in = a.tokens_in >= 0 ? a.tokens_in : estimate_tokens(in_bytes);
    r->tokens_out = a.tokens_out >= 0 ? a.tokens_out : estimate_tokens(strlen(r->text));
    r->cost_usd = ((double)r->tokens_in * m->o.price_in_per_mtok + (double)r->tokens_out * m->o.price_out_per_mtok) / 1e6;
    return 0;
}
