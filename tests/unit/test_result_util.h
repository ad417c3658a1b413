/* test_result_util.h: shared by the result and parameter tests:
 * test_check.h, CHECK_STR, temporary files, and building small results
 * from text rows. */
#ifndef DKB_TEST_RESULT_UTIL_H
#define DKB_TEST_RESULT_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkb/result.h"
#include "test_check.h"

/* Strings must be equal. */
#define CHECK_STR(got, want)                                                                        \
    do {                                                                                            \
        const char *g_ = (got), *w_ = (want);                                                       \
        if (!g_ || strcmp(g_, w_)) {                                                                \
            fprintf(stderr, "%s:%d: got\n%s\nexpected\n%s\n", __FILE__, __LINE__, g_ ? g_ : "(null)", w_); \
            failures++;                                                                             \
        }                                                                                           \
    } while (0)

/* A temporary file path (the file is created empty); caller frees. */
static inline char *tmp_path(const char *suffix) {
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/dkb-result-XXXXXX%s", base && *base ? base : "/tmp", suffix);
    int fd = mkstemps(tmpl, (int)strlen(suffix));
    if (fd < 0) {
        perror("mkstemps");
        exit(2);
    }
    close(fd);
    return strdup(tmpl);
}

/* Write text to a new temporary file; caller unlinks and frees. */
static inline char *write_tmp(const char *text, const char *suffix) {
    char *p = tmp_path(suffix);
    FILE *f = fopen(p, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        perror(p);
        exit(2);
    }
    return p;
}

/* What dkb_result_print writes in format fmt, malloc'ed. */
static inline char *print_to_string(const dkb_result *r, dkb_res_format fmt) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) exit(2);
    if (dkb_result_print(r, fmt, f)) fprintf(stderr, "print failed\n");
    fclose(f);
    return buf;
}

#endif
