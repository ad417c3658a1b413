/* eval_setup.c: what an evaluation needs before it runs anything: the
 * candidate files of a directory, the --queries list, the random seeds
 * (from /dev/urandom), the machine's CPU model and cores. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "dkb/query.h"
#include "harness/eval.h"

/* Query sets are bit masks: bit q for query q. */
_Static_assert(DKB_NQUERIES < 32, "bit q of a uint32_t for every query q");

/* "qNN.full.EXT" / "qNN.core.EXT" with NN in 01..22: the query number and
 * the mode; 0 for any other name. */
static int candidate_name(const char *name, const char *ext, dkb_mode *mode) {
    if (strlen(name) != 9u + strlen(ext) || name[0] != 'q' || !isdigit((unsigned char)name[1]) ||
        !isdigit((unsigned char)name[2]))
        return 0;
    int q = (name[1] - '0') * 10 + (name[2] - '0');
    if (q < 1 || q > DKB_NQUERIES) return 0;
    if (!strncmp(name + 3, ".full.", 6) && !strcmp(name + 9, ext)) *mode = DKB_MODE_FULL;
    else if (!strncmp(name + 3, ".core.", 6) && !strcmp(name + 9, ext)) *mode = DKB_MODE_CORE;
    else return 0;
    return q;
}

static int ends_with(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && !strcmp(name + n - k, suffix);
}

/* Names that look meant as candidates but are not: *.c, *.cu files (*.py
 * files when the candidates are Python). */
static int looks_like_candidate(const char *name, const char *ext) {
    if (name[0] == '.') return 0;
    if (!strcmp(ext, "py")) return ends_with(name, ".py");
    return ends_with(name, ".c") || ends_with(name, ".cu");
}

static int push_ignored(dkb_eval_results *res, const char *name, dkb_error *err) {
    char **grown = realloc(res->ignored, (size_t)(res->nignored + 1) * sizeof *grown);
    if (!grown) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    res->ignored = grown;
    if (!(res->ignored[res->nignored] = strdup(name))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    res->nignored++;
    return 0;
}

int dkb__eval_scan(const char *dir, uint32_t found[2], dkb_eval_results *res, dkb_error *err) {
    return dkb__eval_scan_ext(dir, false, found, res, err);
}

int dkb__eval_scan_ext(const char *dir, bool cuda, uint32_t found[2], dkb_eval_results *res, dkb_error *err) {
    return dkb__eval_scan_files(dir, cuda ? "cu" : "c", found, res, err);
}

int dkb__eval_scan_files(const char *dir, const char *ext, uint32_t found[2], dkb_eval_results *res,
                         dkb_error *err) {
    found[0] = found[1] = 0;
    DIR *d = opendir(dir);
    if (!d) return dkb__io_fail(err, dir, "cannot open the candidate directory");
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        dkb_mode mode;
        int q = candidate_name(e->d_name, ext, &mode);
        if (!q && !looks_like_candidate(e->d_name, ext)) continue;
        char *path = dkb__path_join(dir, e->d_name);
        if (!path) {
            rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
            break;
        }
        struct stat st;
        int regular = stat(path, &st) == 0 && S_ISREG(st.st_mode);
        free(path);
        if (q && regular) found[mode] |= 1u << q;
        else rc = push_ignored(res, e->d_name, err);
    }
    closedir(d);
    /* readdir order is arbitrary: list the ignored names sorted */
    for (int i = 1; i < res->nignored; i++)
        for (int j = i; j > 0 && strcmp(res->ignored[j - 1], res->ignored[j]) > 0; j--) {
            char *t = res->ignored[j];
            res->ignored[j] = res->ignored[j - 1];
            res->ignored[j - 1] = t;
        }
    return rc;
}

int dkb__eval_parse_queries(const char *list, uint32_t *mask, dkb_error *err) {
    *mask = 0;
    if (!strcmp(list, "all")) {
        for (int q = 1; q <= DKB_NQUERIES; q++) *mask |= 1u << q;
        return 0;
    }
    char buf[512];
    if (strlen(list) >= sizeof buf) return dkb_fail(err, DKB_EINVAL, "--queries: list too long");
    strcpy(buf, list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int q = dkb_query_number(tok);
        if (!q) return dkb_fail(err, DKB_EINVAL, "--queries: unknown query '%s' (expected q01..q22 or all)", tok);
        *mask |= 1u << q;
    }
    if (!*mask) return dkb_fail(err, DKB_EINVAL, "--queries: no query named");
    return 0;
}

int dkb__eval_draw_seeds(uint64_t *seeds, int n, dkb_error *err) {
    seeds[0] = 0;
    if (n <= 0) return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return dkb__io_fail(err, "/dev/urandom", "cannot open");
    int rc = 0;
    for (int i = 1; i <= n && !rc;) {
        uint32_t v;
        ssize_t got = read(fd, &v, sizeof v);
        if (got < 0 && errno == EINTR) continue;
        if (got != (ssize_t)sizeof v) {
            rc = dkb__io_fail(err, "/dev/urandom", "read failed");
            break;
        }
        /* 31 bits, nonzero, not drawn before: exact in every JSON reader */
        uint64_t s = v & 0x7fffffffu;
        int dup = s == 0;
        for (int k = 1; k < i && !dup; k++) dup = seeds[k] == s;
        if (!dup) seeds[i++] = s;
    }
    close(fd);
    return rc;
}

void dkb__eval_machine(char *cpu, size_t n, int *cores) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    *cores = c > 0 ? (int)c : 1;
    snprintf(cpu, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* x86: "model name"; some ARM kernels: "Model" */
        if (strncmp(line, "model name", 10) && strncmp(line, "Model", 5)) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        v[strcspn(v, "\n")] = '\0';
        if (*v) {
            snprintf(cpu, n, "%s", v);
            break;
        }
    }
    fclose(f);
}
