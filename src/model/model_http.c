/* model_http.c: one request to an OpenAI-compatible chat completions
 * endpoint with libcurl: the JSON body built with cJSON, the key sent as
 * "Authorization: Bearer" only when the variable is set (and wiped from
 * memory after), the reply body read up to a cap, the reply parsed
 * (choices[0].message.content, finish_reason, usage) and every failure
 * classified as retryable (429, 408, 409, 5xx, connection errors, a reply
 * cut mid-body) or not (timeouts, other statuses, malformed replies), with
 * a one-line message that quotes at most the server's error message.
 * Built without libcurl (DKB_HAVE_CURL unset), a request fails with one
 * line saying so; the command backend still works. */
#ifndef DKB_HAVE_CURL
#include "model/model_internal.h"

int dkb__model_http_once(const dkb_model *m, const dkb_model_msg *msgs, int n, dkb__model_attempt *a,
                         dkb_error *err) {
    (void)m, (void)msgs, (void)n, (void)a;
    return dkb_fail(err, DKB_EINVAL,
                    "this dkb was built without libcurl: use --model-cmd, or install libcurl4-openssl-dev and rebuild");
}
#else
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "model/model_internal.h"

#define CONNECT_TIMEOUT_CAP_S 30.0
#define BODY_SLACK_BYTES ((size_t)1 << 20)   /* room for the JSON around the content */
#define SUMMARY_CHARS 200

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

/* The reply body, kept up to limit bytes; over is set when more came. */
typedef struct body_buf {
    char *p;
    size_t len, cap, limit;
    int over, oom;
} body_buf;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud) {
    body_buf *b = ud;
    size_t n = size * nmemb;
    if (n > b->limit - b->len) {
        n = b->limit - b->len;
        b->over = 1;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return 0;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return b->over ? 0 : size * nmemb; /* 0 stops the transfer */
}

/* Retry-After of the last response (a new status line resets it). */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ud) {
    double *retry_after = ud;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) *retry_after = -1;
    if (n > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0) {
        char v[32];
        size_t vl = n - (sizeof name - 1);
        if (vl >= sizeof v) vl = sizeof v - 1;
        memcpy(v, data + sizeof name - 1, vl);
        v[vl] = '\0';
        char *end;
        double s = strtod(v, &end);
        while (*end == ' ' || *end == '\r' || *end == '\n' || *end == '\t') end++;
        if (end != v && *end == '\0' && s >= 0) *retry_after = s; /* an HTTP date is ignored */
    }
    return n;
}

/* The request body: model, messages, and max_tokens / temperature when set. */
static char *build_body(const dkb_model *m, const dkb_model_msg *msgs, int n) {
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "messages") : NULL;
    int ok = root && arr && cJSON_AddStringToObject(root, "model", m->o.model) &&
             cJSON_AddFalseToObject(root, "stream");
    for (int i = 0; ok && i < n; i++) {
        cJSON *msg = cJSON_CreateObject();
        ok = msg && cJSON_AddItemToArray(arr, msg) && cJSON_AddStringToObject(msg, "role", msgs[i].role) &&
             cJSON_AddStringToObject(msg, "content", msgs[i].content);
    }
    if (ok && m->o.max_tokens > 0) ok = cJSON_AddNumberToObject(root, "max_tokens", (double)m->o.max_tokens) != NULL;
    if (ok && m->o.temperature >= 0) ok = cJSON_AddNumberToObject(root, "temperature", m->o.temperature) != NULL;
    char *s = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return s;
}

/* At most SUMMARY_CHARS of s on one line (control characters as spaces). */
static void one_line(const char *s, size_t len, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < len && o + 4 < cap && o < SUMMARY_CHARS; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) c = ' ';
        if (c == ' ' && o > 0 && out[o - 1] == ' ') continue;
        out[o++] = (char)c;
    }
    if (o + 4 < cap && (o >= SUMMARY_CHARS)) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* The server's error message from an error body (error.message, error,
 * message), else the body's start, on one line. */
static void summarise_error(const body_buf *b, char *out, size_t cap) {
    cJSON *root = b->len ? cJSON_ParseWithLength(b->p, b->len) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *msg = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
    if (!cJSON_IsString(msg)) msg = cJSON_GetObjectItemCaseSensitive(root, "message");
    if (cJSON_IsString(msg) && msg->valuestring)
        one_line(msg->valuestring, strlen(msg->valuestring), out, cap);
    else if (b->len)
        one_line(b->p, b->len, out, cap);
    else
        snprintf(out, cap, "(empty body)");
    cJSON_Delete(root);
}

/* Copy a cut text into a->text, flagged "truncated" when cut. */
static int set_text(dkb__model_attempt *a, const char *s, size_t len, size_t max, dkb_error *err) {
    size_t keep = dkb__model_utf8_cut(s, len, max);
    a->text = malloc(keep + 1);
    if (!a->text) return dkb_fail(err, DKB_ENOMEM, "model: out of memory for a %zu-byte reply", keep);
    memcpy(a->text, s, keep);
    a->text[keep] = '\0';
    if (keep < len) snprintf(a->finish_reason, sizeof a->finish_reason, "truncated");
    return 0;
}

/* A reply body cut at the body cap: decode the start of the first
 * "content" string, up to max bytes. 0 with a->text, or -1 when none. */
static int salvage_content(const body_buf *b, size_t max, dkb__model_attempt *a) {
    const char *p = strstr(b->p, "\"content\"");
    if (!p) return -1;
    p += 9;
    const char *end = b->p + b->len;
    while (p < end && (*p == ' ' || *p == ':' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    if (p >= end || *p != '"') return -1;
    p++;
    char *out = malloc(max + 8);
    if (!out) return -1;
    size_t o = 0;
    while (p < end && *p != '"' && o < max) {
        if (*p != '\\') {
            out[o++] = *p++;
            continue;
        }
        if (p + 1 >= end) break;
        char c = p[1];
        p += 2;
        switch (c) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'r': out[o++] = '\r'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'u': { /* BMP only; anything else becomes '?' */
            unsigned v = 0;
            int ok = p + 4 <= end;
            for (int i = 0; ok && i < 4; i++) ok = isxdigit((unsigned char)p[i]) != 0;
            if (ok) {
                char hex[5] = {p[0], p[1], p[2], p[3], 0};
                v = (unsigned)strtoul(hex, NULL, 16);
                p += 4;
            }
            if (!ok || (v >= 0xD800 && v < 0xE000)) out[o++] = '?';
            else if (v < 0x80) out[o++] = (char)v;
            else if (v < 0x800) {
                out[o++] = (char)(0xC0 | (v >> 6));
                out[o++] = (char)(0x80 | (v & 0x3F));
            } else {
                out[o++] = (char)(0xE0 | (v >> 12));
                out[o++] = (char)(0x80 | ((v >> 6) & 0x3F));
                out[o++] = (char)(0x80 | (v & 0x3F));
            }
            break;
        }
        default: out[o++] = c; break; /* \" \\ \/ */
        }
    }
    size_t keep = dkb__model_utf8_cut(out, o, max);
    out[keep] = '\0';
    a->text = out;
    snprintf(a->finish_reason, sizeof a->finish_reason, "truncated");
    return 0;
}

/* Parse a 200 reply into a. */
static int parse_reply(const dkb_model *m, const body_buf *b, dkb__model_attempt *a, dkb_error *err) {
    char line[SUMMARY_CHARS + 8];
    cJSON *root = cJSON_ParseWithLength(b->p ? b->p : "", b->len);
    if (!root) {
        one_line(b->p ? b->p : "", b->len, line, sizeof line);
        return dkb_fail(err, DKB_EPARSE, "model reply from %s is not JSON (%zu bytes): %s", m->url, b->len, line);
    }
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    if (!cJSON_IsObject(msg) || !(cJSON_IsString(content) || cJSON_IsNull(content) || !content)) {
        int rc;
        if (cJSON_GetObjectItemCaseSensitive(root, "error")) {
            summarise_error(b, line, sizeof line);
            rc = dkb_fail(err, DKB_EIO, "model server %s answered HTTP 200 with an error: %s", m->url, line);
        } else {
            rc = dkb_fail(err, DKB_EPARSE, "model reply from %s has no choices[0].message.content", m->url);
        }
        cJSON_Delete(root);
        return rc;
    }
    const char *text = cJSON_IsString(content) && content->valuestring ? content->valuestring : "";
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
    snprintf(a->finish_reason, sizeof a->finish_reason, "%s",
             cJSON_IsString(fr) && fr->valuestring ? fr->valuestring : "stop");
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    const cJSON *pt = cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens");
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens");
    if (cJSON_IsNumber(pt) && pt->valuedouble >= 0) a->tokens_in = (int64_t)pt->valuedouble;
    if (cJSON_IsNumber(ct) && ct->valuedouble >= 0) a->tokens_out = (int64_t)ct->valuedouble;
    int rc = set_text(a, text, strlen(text), (size_t)m->o.max_reply_bytes, err);
    cJSON_Delete(root);
    return rc;
}

static int retryable_curl(CURLcode c) {
    switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

/* Classify a finished transfer into a (and err). */
static int classify(const dkb_model *m, CURLcode c, const char *curl_msg, long status, body_buf *b,
                    dkb__model_attempt *a, dkb_error *err) {
    char line[SUMMARY_CHARS + 8];
    a->http_status = (int)status;
    if (c == CURLE_WRITE_ERROR && b->over) {
        if (status == 200 && salvage_content(b, (size_t)m->o.max_reply_bytes, a) == 0) return 0;
        return dkb_fail(err, DKB_EIO, "model reply from %s is over %zu bytes (HTTP %ld); no content found in it",
                        m->url, b->limit, status);
    }
    if (b->oom) return dkb_fail(err, DKB_ENOMEM, "model: out of memory reading the reply from %s", m->url);
    if (c == CURLE_OPERATION_TIMEDOUT) {
        snprintf(a->finish_reason, sizeof a->finish_reason, "timeout");
        return dkb_fail(err, DKB_EIO, "model request to %s timed out after %g s (%zu reply bytes): %s", m->url,
                        m->o.timeout_s, b->len, curl_msg);
    }
    if (c != CURLE_OK) {
        a->retryable = retryable_curl(c);
        return dkb_fail(err, DKB_EIO, "model request to %s failed: %s", m->url, curl_msg);
    }
    if (status == 200) return parse_reply(m, b, a, err);
    a->retryable = status == 408 || status == 409 || status == 429 || status >= 500;
    summarise_error(b, line, sizeof line);
    return dkb_fail(err, DKB_EIO, "model server %s answered HTTP %ld: %s", m->url, status, line);
}

/* Wipe and free a header list (one item holds the key). */
static void free_headers(struct curl_slist *h) {
    for (struct curl_slist *i = h; i; i = i->next)
        if (i->data) explicit_bzero(i->data, strlen(i->data));
    curl_slist_free_all(h);
}

/* Headers: JSON both ways, no "Expect: 100-continue" wait, the key when set. */
static struct curl_slist *build_headers(const dkb_model *m) {
    struct curl_slist *h = NULL, *t;
    static const char *const fixed[] = {"Content-Type: application/json", "Accept: application/json", "Expect:"};
    for (size_t i = 0; i < DKB_COUNTOF(fixed); i++) {
        if (!(t = curl_slist_append(h, fixed[i]))) goto fail;
        h = t;
    }
    const char *key = getenv(m->o.api_key_env);
    if (key && *key) {
        static const char prefix[] = "Authorization: Bearer ";
        size_t kl = strlen(key);
        char *line = malloc(sizeof prefix + kl);
        if (!line) goto fail;
        memcpy(line, prefix, sizeof prefix - 1);
        memcpy(line + sizeof prefix - 1, key, kl + 1);
        t = curl_slist_append(h, line);
        explicit_bzero(line, sizeof prefix + kl);
        free(line);
        if (!t) goto fail;
        h = t;
    }
    return h;
fail:
    free_headers(h);
    return NULL;
}

int dkb__model_http_once(const dkb_model *m, const dkb_model_msg *msgs, int n, dkb__model_attempt *a,
                         dkb_error *err) {
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return dkb_fail(err, DKB_EINTERNAL, "model: curl_global_init failed: %s", curl_easy_strerror(curl_init_rc));
    char *body = build_body(m, msgs, n);
    struct curl_slist *headers = body ? build_headers(m) : NULL;
    CURL *h = headers ? curl_easy_init() : NULL;
    if (!h) {
        free(body);
        free_headers(headers);
        return dkb_fail(err, DKB_ENOMEM, "model: out of memory building the request to %s", m->url);
    }
    size_t max_reply = (size_t)m->o.max_reply_bytes;
    body_buf b = {.limit = max_reply > (SIZE_MAX - BODY_SLACK_BYTES) / 4 ? SIZE_MAX / 2 : 4 * max_reply + BODY_SLACK_BYTES};
    double retry_after = -1;
    char curl_msg[CURL_ERROR_SIZE] = "";
    double timeout = m->o.timeout_s;
    double connect = timeout < CONNECT_TIMEOUT_CAP_S ? timeout : CONNECT_TIMEOUT_CAP_S;
    curl_easy_setopt(h, CURLOPT_URL, m->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "dkb-optimize/" DKB_VERSION);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &retry_after);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_msg);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect * 1000) > 0 ? (long)(connect * 1000) : 1L);
    CURLcode c = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (!curl_msg[0]) snprintf(curl_msg, sizeof curl_msg, "%s", curl_easy_strerror(c));
    a->retry_after_s = retry_after;
    int rc = classify(m, c, curl_msg, status, &b, a, err);
    curl_easy_cleanup(h);
    free_headers(headers);
    free(body);
    free(b.p);
    return rc;
}
#endif /* DKB_HAVE_CURL */
