/* test_check.h: the failure counter and check macros every unit test
 * shares. A failed check prints "file:line: FAIL: <condition>[: message]"
 * to stderr and counts one failure in `failures`; it never returns or
 * aborts, so a test runs to the end and reports every failure. Each test's
 * main must return non-zero when `failures` is non-zero.
 *
 *   CHECK(cond)                  condition only
 *   CHECK(cond, fmt, ...)        with a printf-style message (same as
 *   CHECK_MSG(cond, fmt, ...)    CHECK_MSG)
 *   CHECK_ERR(rc, code, err, want)  rc == code and err.msg contains want
 *                                   (needs dkb_err_name, dkb/error.h)
 *
 * A test that may fail in bulk (checks in loops) can define
 * CHECK_PRINT_LIMIT to N before including this header: every failure is
 * still counted, only the first N are printed. */
#ifndef DKB_TEST_CHECK_H
#define DKB_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef CHECK_PRINT_LIMIT
#define CHECK_PRINT_LIMIT 0 /* 0: print every failure */
#endif

#if defined(__GNUC__)
#define CHECK_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define CHECK_PRINTF_(f, a)
#endif

static int failures;

/* Count a failure; 1 when it is to be printed. */
static inline int check_count_(void) {
    failures++;
    return CHECK_PRINT_LIMIT <= 0 || failures <= CHECK_PRINT_LIMIT;
}

static inline void check_fail_(const char *file, int line, const char *cond) {
    if (check_count_()) fprintf(stderr, "%s:%d: FAIL: %s\n", file, line, cond);
}

static inline CHECK_PRINTF_(4, 5) void check_failf_(const char *file, int line, const char *cond,
                                                    const char *fmt, ...) {
    if (!check_count_()) return;
    fprintf(stderr, "%s:%d: FAIL: %s: ", file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define CHECK_MSG(cond, ...)                                                  \
    do {                                                                      \
        if (!(cond)) check_failf_(__FILE__, __LINE__, #cond, __VA_ARGS__);   \
    } while (0)

/* CHECK(cond) or CHECK(cond, fmt, ...): picks CHECK_1_ for one argument and
 * CHECK_N_ for 2 to 16, in plain C11 (the trailing ~ keeps CHECK_PICK_'s
 * ... non-empty). The condition alone is printed exactly as written; with a
 * message, after macro expansion. */
#define CHECK(...)                                                                                  \
    CHECK_PICK_(__VA_ARGS__, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_,   \
                CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_, CHECK_N_,       \
                CHECK_1_, ~)(#__VA_ARGS__, __VA_ARGS__)
#define CHECK_PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, name, ...) name
#define CHECK_1_(text, cond)                                     \
    do {                                                         \
        if (!(cond)) check_fail_(__FILE__, __LINE__, text);      \
    } while (0)
#define CHECK_N_(text, cond, ...) CHECK_MSG(cond, __VA_ARGS__)

/* rc must be code and err.msg must contain want. */
#define CHECK_ERR(rc, code, err, want)                                                          \
    do {                                                                                        \
        int rc_ = (rc);                                                                         \
        if (rc_ != (code) || !strstr((err).msg, (want))) {                                      \
            fprintf(stderr, "%s:%d: expected %s containing \"%s\"\n    got %s \"%s\"\n", __FILE__, \
                    __LINE__, dkb_err_name(code), (want), dkb_err_name(rc_), (err).msg);        \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

#endif
