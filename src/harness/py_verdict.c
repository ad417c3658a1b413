/* py_verdict.c: a Python row's verdict made specific. The worker sees a
 * Python candidate through the shim (python/py_shim.c) as a C candidate
 * that returned a status; the bridge's statuses (100..103) say what
 * happened, and the bridge's last line on stderr ("dkb-python: CLASS:
 * message") says it in words. The status decides the verdict (the
 * candidate cannot choose it: the bridge computes it); the line, which a
 * candidate could imitate, only words the detail. */
#include <stdio.h>
#include <string.h>

#include "harness/eval.h"

/* The message of the last "dkb-python: " line of tail, into out. */
static void bridge_line(const char *tail, char *out, size_t n) {
    out[0] = 0;
    const char *last = NULL;
    for (const char *p = tail ? strstr(tail, "dkb-python: ") : NULL; p; p = strstr(p + 1, "dkb-python: "))
        if (p == tail || p[-1] == '\n') last = p;
    if (!last) return;
    last += strlen("dkb-python: ");
    const char *colon = strstr(last, ": "), *end = strchr(last, '\n');
    if (colon && (!end || colon < end)) last = colon + 2;
    size_t len = end ? (size_t)(end - last) : strlen(last);
    snprintf(out, n, "%.*s", (int)(len < 700 ? len : 700), last);
}

void dkb__py_refine_verdict(dkb_verdict *v, char *detail, size_t n, const char *output_tail) {
    if (*v != DKB_VERDICT_RETURNED_ERROR) return;
    static const struct {
        const char *token;
        dkb_verdict v;
        const char *what;
    } map[] = {
        {"returned 100", DKB_VERDICT_RETURNED_ERROR, "raised"},
        {"returned 101", DKB_VERDICT_FORBIDDEN_SYMBOL, "not allowed in a candidate:"},
        {"returned 102", DKB_VERDICT_RETURNED_ERROR, "its answer is not what the ABI asks for:"},
        {"returned 103", DKB_VERDICT_HARNESS_ERROR, "the Python bridge failed:"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        char *at = strstr(detail, map[i].token);
        if (!at) continue;
        const char *after = at + strlen(map[i].token);
        if (*after >= '0' && *after <= '9') continue;
        char line[720], rest[1024], msg[1024];
        bridge_line(output_tail, line, sizeof line);
        snprintf(rest, sizeof rest, "%s", after);
        snprintf(msg, sizeof msg, "%s %s", map[i].what, line[0] ? line : "(no message)");
        size_t head = (size_t)(at - detail);
        snprintf(at, n - head, "%s%s", msg, rest);
        *v = map[i].v;
        return;
    }
}
