/* eval_slots.c: rows spread over slots that run at once (eval_slots.h). */
#include "harness/eval_slots.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slots {
    pthread_mutex_t lock;
    int next, done, nrows;
    int failed_row;          /* lowest failing row (nrows: none) */
    dkb_error err;           /* its error */
    dkb__slot_row_fn fn;
    const dkb_progress *progress;
} slots;

typedef struct slot_arg {
    slots *s;
    void *ctx;
} slot_arg;

static void *slot_main(void *p) {
    slot_arg *a = p;
    slots *s = a->s;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int row = s->failed_row < s->nrows ? s->nrows : s->next;
        if (row < s->nrows) s->next++;
        pthread_mutex_unlock(&s->lock);
        if (row >= s->nrows) break;
        dkb_error e = {0};
        int rc = s->fn(a->ctx, row, &e);
        pthread_mutex_lock(&s->lock);
        s->done++;
        if (rc && row < s->failed_row) {
            s->failed_row = row;
            s->err = e;
            if (!s->err.code) s->err.code = rc;
        }
        dkb__progress(s->progress, "eval", (uint64_t)s->done, (uint64_t)s->nrows);
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

int dkb__eval_slots_run(int nslots, void *const *ctx, int nrows, dkb__slot_row_fn fn, const dkb_progress *progress,
                        dkb_error *err) {
    if (nslots < 1 || !fn || nrows < 0) return dkb_fail(err, DKB_EINVAL, "eval slots: bad arguments");
    if (nslots == 1 || nrows <= 1) {
        for (int i = 0; i < nrows; i++) {
            dkb__progress(progress, "eval", (uint64_t)i, (uint64_t)nrows);
            int rc = fn(ctx[0], i, err);
            if (rc) return rc;
        }
        return 0;
    }
    slots s = {.next = 0, .nrows = nrows, .failed_row = nrows, .fn = fn, .progress = progress};
    pthread_mutex_init(&s.lock, NULL);
    pthread_t *t = calloc((size_t)nslots, sizeof *t);
    slot_arg *args = calloc((size_t)nslots, sizeof *args);
    int started = 0, rc = 0;
    if (!t || !args) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < nslots; i++) {
        args[i] = (slot_arg){&s, ctx[i]};
        if (pthread_create(&t[i], NULL, slot_main, &args[i]) != 0) {
            if (!started) rc = dkb_fail(err, DKB_ENOMEM, "eval slots: cannot start a thread");
            break;   /* the slots started take every row */
        }
        started++;
    }
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    pthread_mutex_destroy(&s.lock);
    free(t);
    free(args);
    if (rc) return rc;
    if (s.failed_row < nrows) {
        if (err) *err = s.err;
        return s.err.code;
    }
    return 0;
}

int dkb__eval_slot_devices(const char *visible, int s, char *out, size_t n) {
    if (s < 0 || !out || !n) return -1;
    if (!visible || !*visible) {
        int w = snprintf(out, n, "%d", s);
        return w > 0 && (size_t)w < n ? 0 : -1;
    }
    const char *p = visible;
    for (int i = 0; i < s; i++) {
        p = strchr(p, ',');
        if (!p) return -1;
        p++;
    }
    size_t len = strcspn(p, ",");
    while (len && (p[len - 1] == ' ')) len--;
    while (len && *p == ' ') p++, len--;
    if (!len || len >= n) return -1;
    memcpy(out, p, len);
    out[len] = 0;
    return 0;
}
