/* test_eval_slots.c: the slot runner of eval_slots.h: every row exactly
 * once, never two rows on one slot at once, at most nslots at once and
 * more than one when rows take a while, the lowest failing row's error,
 * no new row after a failure, progress up to nrows; and the
 * CUDA_VISIBLE_DEVICES entry of each slot. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness/eval_slots.h"

static int failures;
#define CHECK(c, ...)                                                     \
    do {                                                                  \
        if (!(c)) {                                                       \
            failures++;                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
        }                                                                 \
    } while (0)

enum { MAXROWS = 64 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int runs[MAXROWS], busy[8], running, peak, fail_from, started_after_fail;
static uint64_t last_done;

typedef struct slot_ctx {
    int slot;
} slot_ctx;

static int row(void *ctx, int i, dkb_error *err) {
    slot_ctx *c = ctx;
    pthread_mutex_lock(&lock);
    runs[i]++;
    if (busy[c->slot]++) failures++, fprintf(stderr, "FAIL: slot %d runs two rows\n", c->slot);
    if (++running > peak) peak = running;
    if (fail_from >= 0 && i > fail_from + 8) started_after_fail++;
    pthread_mutex_unlock(&lock);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&lock);
    busy[c->slot]--, running--;
    pthread_mutex_unlock(&lock);
    if (fail_from >= 0 && i >= fail_from) return dkb_fail(err, DKB_EIO, "row %d failed", i);
    return 0;
}

static void on_progress(void *ctx, const char *what, uint64_t done, uint64_t total) {
    (void)ctx, (void)what, (void)total;
    CHECK(done >= last_done, "progress went back: %llu after %llu", (unsigned long long)done,
          (unsigned long long)last_done);
    last_done = done;
}

static void reset(int fail) {
    memset(runs, 0, sizeof runs);
    memset(busy, 0, sizeof busy);
    running = peak = started_after_fail = 0;
    fail_from = fail;
    last_done = 0;
}

int main(void) {
    slot_ctx cs[4] = {{0}, {1}, {2}, {3}};
    void *ctx[4] = {&cs[0], &cs[1], &cs[2], &cs[3]};
    dkb_progress prog = {on_progress, NULL};
    for (int nslots = 1; nslots <= 4; nslots++) {
        reset(-1);
        dkb_error err = {0};
        int rc = dkb__eval_slots_run(nslots, ctx, 40, row, &prog, &err);
        CHECK(rc == 0, "%d slots: rc %d (%s)", nslots, rc, err.msg);
        for (int i = 0; i < 40; i++) CHECK(runs[i] == 1, "%d slots: row %d ran %d times", nslots, i, runs[i]);
        CHECK(peak <= nslots, "%d slots: %d rows at once", nslots, peak);
        if (nslots > 1) CHECK(peak > 1, "%d slots: never more than one row at once", nslots);
        if (nslots > 1) CHECK(last_done == 40, "%d slots: progress ended at %llu", nslots, (unsigned long long)last_done);
    }
    /* a failure: the lowest failing row's error, and the rows stop soon after */
    reset(10);
    dkb_error err = {0};
    int rc = dkb__eval_slots_run(3, ctx, 60, row, &prog, &err);
    CHECK(rc == DKB_EIO && strstr(err.msg, "row 10 failed"), "failure: rc %d (%s)", rc, err.msg);
    for (int i = 0; i < 10; i++) CHECK(runs[i] == 1, "failure: row %d before it ran %d times", i, runs[i]);
    CHECK(started_after_fail == 0, "failure: %d rows started well after it", started_after_fail);
    reset(-1);
    CHECK(dkb__eval_slots_run(0, ctx, 3, row, NULL, &err) == DKB_EINVAL, "0 slots refused");
    CHECK(dkb__eval_slots_run(2, ctx, 0, row, NULL, &err) == 0, "no rows");

    /* each slot's CUDA_VISIBLE_DEVICES */
    char d[16];
    CHECK(dkb__eval_slot_devices(NULL, 2, d, sizeof d) == 0 && !strcmp(d, "2"), "unset: %s", d);
    CHECK(dkb__eval_slot_devices("", 0, d, sizeof d) == 0 && !strcmp(d, "0"), "empty: %s", d);
    CHECK(dkb__eval_slot_devices("2,3", 1, d, sizeof d) == 0 && !strcmp(d, "3"), "2,3 slot 1: %s", d);
    CHECK(dkb__eval_slot_devices("GPU-ab, GPU-cd", 1, d, sizeof d) == 0 && !strcmp(d, "GPU-cd"), "uuids: %s", d);
    CHECK(dkb__eval_slot_devices("2,3", 2, d, sizeof d) == -1, "2,3 slot 2 is not there");
    CHECK(dkb__eval_slot_devices("5", 0, d, 1) == -1, "too small");
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_eval_slots: ok\n");
    return failures ? 1 : 0;
}
