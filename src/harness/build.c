/* build.c: compile a candidate file into a shared object with fixed flags,
 * in a scratch directory, with the compiler sandboxed (time and memory
 * limits) and its diagnostics kept (trimmed) as feedback; reject sources
 * that include anything but dkb/candidate.h and the system's headers; then
 * check the imported symbols (symbols.c). Also the small process helpers
 * the build uses: run a command capturing its output, sha256 of a file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/countof.h"
#include "common/fsutil.h"            // defines: dkb__source_root, dkb__copy_file
#include "harness/cuda_interpose.h"    // defines: dkb__cuda_wrapped_names
#include "harness/harness.h"
#include "harness/heap_interpose.h"
#include "harness/py_build.h"             // defines: dkb__py_build

extern char **environ;

#define SOURCE_MAX ((off_t)4 << 20)      /* larger sources are refused */
#define LOG_LINES 60
#define LOG_BYTES 8192
#define COMPILE_TIMEOUT_S 120.0
#define COMPILE_AS_BYTES ((uint64_t)16 << 30)

const char *dkb__entry_symbol(dkb_mode mode) {
    return mode == DKB_MODE_CORE ? "dkb_candidate_core" : "dkb_candidate_full";
}

void dkb__build_free(dkb_build *b) {
    if (!b) return;
    free(b->log);
    b->log = NULL;
}

/* ---- running commands ---- */

int dkb__spawn_reading(char *const argv[], int merge, pid_t *pid, int *fd, dkb_error *err) {
    *pid = -1;
    *fd = -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return dkb_fail(err, dkb_errno_code(errno), "pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc) {
        close(p[0]), close(p[1]);
        return dkb_fail(err, DKB_ENOMEM, "%s: cannot set up: %s", argv[0], strerror(rc));
    }
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    if (!rc) rc = merge ? posix_spawn_file_actions_adddup2(&fa, p[1], 2)
                        : posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (!rc) rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc) {
        close(p[0]);
        *pid = -1;
        return dkb_fail(err, DKB_EIO, "cannot run %s: %s", argv[0], strerror(rc));
    }
    *fd = p[0];
    return 0;
}

int dkb__spawn_wait(pid_t pid, const char *what, int *status, dkb_error *err) {
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) return dkb_fail(err, DKB_EINTERNAL, "waitpid %s: %s", what, strerror(errno));
    return 0;
}

int dkb__run_capture(char *const argv[], int merge, size_t max, char **out, int *status, dkb_error *err) {
    *out = NULL;
    *status = -1;
    pid_t pid;
    int fd;
    int rc = dkb__spawn_reading(argv, merge, &pid, &fd, err);
    if (rc) return rc;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int nomem = !buf;
    for (;;) {
        char chunk[65536];
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size_t keep = len < max ? ((size_t)got < max - len ? (size_t)got : max - len) : 0;
        if (keep && !nomem) {
            if (len + keep + 1 > cap) {
                size_t ncap = cap;
                while (len + keep + 1 > ncap) ncap *= 2;
                char *nb = realloc(buf, ncap);
                if (!nb) nomem = 1;
                else buf = nb, cap = ncap;
            }
            if (!nomem) memcpy(buf + len, chunk, keep), len += keep;
        }
    }
    close(fd);
    int st;
    if ((rc = dkb__spawn_wait(pid, argv[0], &st, err))) {
        free(buf);
        return rc;
    }
    *status = st;
    if (nomem) {
        free(buf);
        return dkb_fail(err, DKB_ENOMEM, "out of memory reading the output of %s", argv[0]);
    }
    buf[len] = 0;
    *out = buf;
    return 0;
}

int dkb__sha256_file(const char *path, char hex[65], dkb_error *err) {
    hex[0] = 0;
    char *argv[] = {(char *)"sha256sum", (char *)"--", (char *)path, NULL};
    char *out;
    int st, rc = dkb__run_capture(argv, 0, 4096, &out, &st, err);
    if (rc) return rc;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && strlen(out) >= 64;
    for (int i = 0; ok && i < 64; i++) ok = strchr("0123456789abcdef", out[i]) != NULL;
    if (ok) memcpy(hex, out, 64), hex[64] = 0;
    free(out);
    return ok ? 0 : dkb_fail(err, DKB_EIO, "sha256sum %s failed", path);
}

/* ---- helpers ---- */

/* The path of program `name` on PATH (or name itself when it has a '/'). */
static int find_program(const char *name, char *out, size_t n) {
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0) return -1;
        snprintf(out, n, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if ((size_t)snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", name) < n && access(out, X_OK) == 0)
            return 0;
        path += len + (end != NULL);
    }
    return -1;
}

/* The candidate toolkit: optional header-only helpers shipped beside
 * candidate.h (dates, decimals, result writers; device helpers for CUDA),
 * which a candidate may include as "dkb/<name>". */
static const char *const TOOLKIT[] = {"cand_util.h", "cand_cuda.cuh", "cand_stream.h", "cand_ranks.h"};

/* dkb/candidate.h of this build: $DKB_CANDIDATE_H, else include/dkb/
 * candidate.h in the directory of the running executable or up to four
 * levels above it (build directories live inside the source tree). */
static int find_candidate_header(char *out, size_t n) {
    const char *env = getenv("DKB_CANDIDATE_H");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, R_OK);
    }
    char exe[PATH_MAX];
    if (dkb__self_exe(exe, sizeof exe)) exe[0] = 0;
    for (int up = 0; up <= 4; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash) break;
        *slash = 0;
        if ((size_t)snprintf(out, n, "%s/include/dkb/candidate.h", exe[0] ? exe : "") < n &&
            access(out, R_OK) == 0)
            return 0;
    }
    /* a build directory outside the tree: the source tree it was built from */
    if ((size_t)snprintf(out, n, "%s/include/dkb/candidate.h", dkb__source_root()) < n && access(out, R_OK) == 0)
        return 0;
    return -1;
}

static int make_dir(const char *path, dkb_error *err) {
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return dkb_fail(err, dkb_errno_code(errno), "cannot create %s: %s", path, strerror(errno));
    return 0;
}

/* The first LOG_LINES lines / LOG_BYTES bytes of text, with a note of what
 * was cut (malloc'd). */
static char *trim_log(const char *text) {
    size_t len = strlen(text), cut = 0;
    int lines = 0;
    while (cut < len && cut < LOG_BYTES && lines < LOG_LINES)
        if (text[cut++] == '\n') lines++;
    int more = 0;
    for (size_t i = cut; i < len; i++) more += text[i] == '\n';
    if (cut < len && text[len - 1] != '\n') more++;
    char *out = malloc(cut + 64);
    if (!out) return NULL;
    memcpy(out, text, cut);
    out[cut] = 0;
    if (cut < len) snprintf(out + cut, 64, "%s[... %d more line%s]\n", out[cut - 1] == '\n' ? "" : "\n", more,
                            more == 1 ? "" : "s");
    return out;
}

/* Is a file the compiler read allowed: the source, our headers (candidate.h
 * and the optional toolkit, copied into the scratch directory's include/dkb,
 * which holds nothing else), or a system header? On a disallowed one, its
 * name into bad. */
static int dep_allowed(const char *dep, const char *src_real, const char *hdr_real) {
    char real[PATH_MAX];
    if (!realpath(dep, real)) return 0;
    if (!strcmp(real, src_real) || !strcmp(real, hdr_real)) return 1;
    const char *slash = strrchr(hdr_real, '/');
    size_t dir = slash ? (size_t)(slash - hdr_real) + 1 : 0;
    if (dir && !strncmp(real, hdr_real, dir) && !strchr(real + dir, '/')) return 1;
    return !strncmp(real, "/usr/", 5) || !strncmp(real, "/opt/", 5) || !strncmp(real, "/lib/", 5) ||
           !strncmp(real, "/lib64/", 7);
}

/* Check the make-style dependency file: 0 when every prerequisite is
 * allowed; else 1 with the first bad one in bad. -1 when unreadable. */
static int check_deps(const char *dfile, const char *src, const char *hdr, char *bad, size_t n) {
    FILE *f = fopen(dfile, "r");
    if (!f) return -1;
    char src_real[PATH_MAX], hdr_real[PATH_MAX];
    if (!realpath(src, src_real) || !realpath(hdr, hdr_real)) {
        fclose(f);
        return -1;
    }
    int c, result = 0, past_colon = 0;
    char tok[PATH_MAX];
    size_t tl = 0;
    for (;;) {
        c = fgetc(f);
        if (c == '\\') {
            int d = fgetc(f);
            if (d == '\n') c = ' ';           /* line continuation */
            else if (d == ' ' || d == '#' || d == '\\') {
                if (tl + 1 < sizeof tok) tok[tl++] = (char)d;
                continue;
            } else {
                if (tl + 1 < sizeof tok) tok[tl++] = '\\';
                if (d == EOF) break;
                c = d;
            }
        }
        if (c == '$') {
            int d = fgetc(f);                 /* $$ is a $ */
            if (d != '$' && d != EOF) ungetc(d, f);
        }
        if (c == EOF || c == ' ' || c == '\t' || c == '\n') {
            if (tl) {
                tok[tl] = 0;
                if (!past_colon) {
                    if (tok[tl - 1] == ':') past_colon = 1;
                } else if (tok[tl - 1] == ':') {
                    /* a phony target line (-MP): not a prerequisite */
                } else if (!dep_allowed(tok, src_real, hdr_real)) {
                    snprintf(bad, n, "%s", tok);
                    result = 1;
                    break;
                }
                tl = 0;
            }
            if (c == EOF) break;
            continue;
        }
        if (tl + 1 < sizeof tok) tok[tl++] = (char)c;
    }
    fclose(f);
    return result;
}

/* Run one compiler step in the sandbox, its diagnostics to logpath; *ok
 * when it exited 0. A step that fails sets b's verdict and detail. The
 * compile time accumulates in b->compile_s. 0, or an error when the
 * compiler could not be run at all. */
static int compile_step(char *const argv[], const char *logpath, dkb_build *b, int *ok, dkb_error *err) {
    *ok = 0;
    dkb_limits lim = {.timeout_s = COMPILE_TIMEOUT_S, .output_bytes = (uint64_t)4 << 20,
                      .as_bytes = COMPILE_AS_BYTES, .output_path = logpath};
    dkb_sandbox_result sr;
    int rc = dkb__sandbox_run(argv, &lim, &sr, err);
    b->compile_s += sr.seconds;
    if (rc) {
        dkb__sandbox_result_free(&sr);
        return rc;
    }
    /* the compiler writes no report: a clean exit shows up as EXITED, 0 */
    if (sr.verdict == DKB_VERDICT_EXITED && sr.exit_code == 0) {
        *ok = 1;
    } else {
        b->verdict = DKB_VERDICT_COMPILE_ERROR;
        if (sr.verdict == DKB_VERDICT_EXITED && sr.exit_code == 127 && sr.seconds < 1)
            rc = dkb_fail(err, DKB_EIO, "build: could not run %s", argv[0]);
        else if (sr.verdict == DKB_VERDICT_EXITED)
            snprintf(b->detail, sizeof b->detail, "compiler exited with status %d", sr.exit_code);
        else
            snprintf(b->detail, sizeof b->detail, "compiler %s: %.400s", dkb__verdict_name(sr.verdict), sr.detail);
    }
    dkb__sandbox_result_free(&sr);
    return rc;
}

/* b->log := the trimmed, sanitized text of logpath; with only_src, only the
 * lines that begin with "only_src:" (a diagnostic's message line about the
 * source itself, not the excerpts quoted under it). Out of memory leaves
 * the log as it was. */
static void replace_log(dkb_build *b, const char *logpath, const char *only_src) {
    FILE *f = fopen(logpath, "rb");
    size_t cap = LOG_BYTES * 2, len = 0;
    char *text = malloc(cap + 1);
    if (f && text) len = fread(text, 1, cap, f);
    if (f) fclose(f);
    if (!text) return;
    text[len] = 0;
    dkb__text_sanitize(text, len);
    if (only_src) {
        size_t pl = strlen(only_src), w = 0;
        for (char *line = text; *line;) {
            char *end = strchr(line, '\n');
            size_t ll = end ? (size_t)(end - line) + 1 : strlen(line);
            if (!strncmp(line, only_src, pl) && line[pl] == ':') memmove(text + w, line, ll), w += ll;
            line += ll;
        }
        text[w] = 0;
    }
    char *t = trim_log(text);
    free(text);
    if (t) {
        free(b->log);
        b->log = t;
    }
}

/* Does the assembly hold inline assembly with any instruction or directive
 * in it (between #APP and #NO_APP, anything but blank lines and comments)?
 * An empty asm statement, the usual compiler barrier, is fine. */
static int asm_has_inline(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[8192];
    int in = 0, found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " \t");
        if (!strncmp(p, "#APP", 4)) in = 1;
        else if (!strncmp(p, "#NO_APP", 7)) in = 0;
        else if (in && *p && *p != '\n' && *p != '#') found = 1;
    }
    fclose(f);
    return found;
}

/* After an asm keyword: is it an asm statement with an empty template
 * (asm volatile ("" ::: "memory")), on this line? */
static int asm_is_empty(const char *p) {
    static const char *const QUAL[] = {"volatile", "__volatile__", "__volatile", "inline", "__inline__", "goto"};
    for (;;) {
        p += strspn(p, " \t");
        size_t k, len = 0;
        for (k = 0; k < sizeof QUAL / sizeof QUAL[0]; k++) {
            len = strlen(QUAL[k]);
            if (!strncmp(p, QUAL[k], len) && !(p[len] == '_' || (p[len] >= 'a' && p[len] <= 'z'))) break;
        }
        if (k == sizeof QUAL / sizeof QUAL[0]) break;
        p += len;
    }
    if (*p != '(') return 0;
    p++;
    int strings = 0;
    for (;;) {
        p += strspn(p, " \t");
        if (p[0] == '"' && p[1] == '"') p += 2, strings++;
        else break;
    }
    p += strspn(p, " \t");
    return strings > 0 && (*p == ':' || *p == ')');
}

/* Does the preprocessed source (ifile) use an asm keyword (asm, __asm,
 * __asm__) other than as an empty asm statement, in lines that come from
 * src itself (not system headers, whose declarations use asm labels)? The
 * keyword found in what. */
static int source_has_asm(const char *ifile, const char *src, char *what, size_t n) {
    FILE *f = fopen(ifile, "r");
    if (!f) return 0;
    const char *sbase = strrchr(src, '/');
    sbase = sbase ? sbase + 1 : src;
    char line[16384];
    int ours = 1, found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (line[0] == '#') { /* a line marker: # 12 "file" flags */
            const char *q = strchr(line, '"'), *e = q ? strrchr(line, '"') : NULL;
            if (q && e > q) {
                size_t len = (size_t)(e - q - 1), bl = strlen(sbase);
                ours = len >= bl && !memcmp(q + 1 + len - bl, sbase, bl) && (len == bl || q[1 + len - bl - 1] == '/');
            }
            continue;
        }
        if (!ours) continue;
        /* identifiers outside string and character literals */
        for (const char *p = line; *p && !found;) {
            if (*p == '"' || *p == '\'') {
                char quote = *p++;
                while (*p && *p != quote) p += (*p == '\\' && p[1]) ? 2 : 1;
                if (*p) p++;
            } else if (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
                const char *s0 = p;
                while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) p++;
                size_t len = (size_t)(p - s0);
                if ((len == 3 && !memcmp(s0, "asm", 3)) || (len == 5 && !memcmp(s0, "__asm", 5)) ||
                    (len == 7 && !memcmp(s0, "__asm__", 7))) {
                    if (!asm_is_empty(p)) {
                        snprintf(what, n, "%.*s", (int)len, s0);
                        found = 1;
                    }
                }
            } else {
                p++;
            }
        }
    }
    fclose(f);
    return found;
}

/* ---- the build ---- */

bool dkb__is_cuda_source(const char *src) {
    size_t n = src ? strlen(src) : 0;
    return n > 3 && !strcmp(src + n - 3, ".cu");
}

#define NVCC_STD "-std=c++17"
#define NVCC_GENCODE "arch=compute_90,code=[sm_90,compute_90]"
/* CUB/Thrust (CCCL) emit NVTX ranges, whose runtime is loaded with dlopen:
 * compiled out */
#define NVCC_NO_NVTX1 "-DCCCL_DISABLE_NVTX"
#define NVCC_NO_NVTX2 "-DNVTX_DISABLE"

/* The linker option that sends a candidate's allocation calls to the
 * worker's wraps: prefix, then "--wrap=malloc,--wrap=calloc,..." for the
 * heap (heap_interpose.h) and, for CUDA candidates, the CUDA runtime's
 * allocation, free and registration calls (cuda_interpose.h). 0, or -1
 * when buf is too small. */
static int wrap_option(char *buf, size_t n, const char *prefix, bool cuda) {
    size_t nheap = 0, ncuda = 0, at = 0;
    const char *const *heap = dkb__heap_wrapped(&nheap);
    const char *const *cu = cuda ? dkb__cuda_wrapped_names(&ncuda) : NULL;
    int w = snprintf(buf, n, "%s", prefix);
    if (w < 0 || (size_t)w >= n) return -1;
    at = (size_t)w;
    for (size_t i = 0; i < nheap + ncuda; i++) {
        w = snprintf(buf + at, n - at, "%s--wrap=%s", i ? "," : "", i < nheap ? heap[i] : cu[i - nheap]);
        if (w < 0 || (size_t)w >= n - at) return -1;
        at += (size_t)w;
    }
    return 0;
}

/* Step 1 of both builds: run the preprocessor command pp (its log in
 * plog, its dependency list in dfile, its output in ifile), then refuse a
 * source that reads files other than dkb/candidate.h and the system's
 * headers, or uses inline assembly. 0 with *go set: carry on; 0 with *go
 * clear: b holds the verdict; else an error. */
static int preprocess_checks(char *const pp[], const char *plog, const char *dfile, const char *ifile,
                             const char *src, const char *hdr, dkb_build *b, bool *go, dkb_error *err) {
    *go = false;
    int ok = 0;
    int rc = compile_step(pp, plog, b, &ok, err);
    if (rc || !ok) {
        if (!rc) replace_log(b, plog, src);
        return rc;
    }
    char bad[PATH_MAX];
    int deps = check_deps(dfile, src, hdr, bad, sizeof bad);
    if (deps < 0) return dkb_fail(err, DKB_EIO, "build: cannot read the compiler's dependency file %s", dfile);
    if (deps > 0) {
        b->verdict = DKB_VERDICT_COMPILE_ERROR;
        snprintf(b->detail, sizeof b->detail, "includes %.400s (only dkb/candidate.h, the dkb/cand_* toolkit and system headers are allowed)",
                 bad);
        return 0;
    }
    if (source_has_asm(ifile, src, bad, sizeof bad)) {
        b->verdict = DKB_VERDICT_COMPILE_ERROR;
        snprintf(b->detail, sizeof b->detail, "uses inline assembly (%.100s), which is not allowed", bad);
        return 0;
    }
    *go = true;
    return 0;
}

/* The CUDA build of a .cu candidate (after the size check): preprocess
 * (include and asm checks), then compile and link in one nvcc step. */
static int build_cuda(const char *src, dkb_mode mode, const char *inc, const char *hdr, const char *dfile,
                      const char *ifile, const char *plog, const char *logfile, dkb_build *b, dkb_error *err) {
    const char *nv = getenv("DKB_NVCC");
    if (!nv || !*nv) nv = "nvcc";
    char nvpath[4096];
    if (find_program(nv, nvpath, sizeof nvpath) != 0)
        return dkb_fail(err, DKB_ENOENT, "build: CUDA compiler %s not found (set DKB_NVCC)", nv);
    /* 1. preprocess the host side: the files it reads, asm in its lines */
    char *pp[] = {nvpath, (char *)NVCC_STD, (char *)NVCC_NO_NVTX1, (char *)NVCC_NO_NVTX2, (char *)"-I",
                  (char *)inc, (char *)"-E", (char *)"-Xcompiler", (char *)"-MD", (char *)"-Xcompiler",
                  (char *)"-MF", (char *)"-Xcompiler", (char *)dfile, (char *)"-o", (char *)ifile, (char *)src, NULL};
    bool go;
    int rc = preprocess_checks(pp, plog, dfile, ifile, src, hdr, b, &go, err);
    if (rc || !go) return rc;
    int ok = 0;
    /* 2. compile and link (the diagnostics are the log), the CUDA runtime's
     * allocation, free and registration calls wrapped */
    char wraps[4096];
    if (wrap_option(wraps, sizeof wraps, "", true))
        return dkb_fail(err, DKB_EINTERNAL, "build: the --wrap list is too long");
    char *cc[] = {nvpath, (char *)NVCC_STD, (char *)"-O3", (char *)NVCC_NO_NVTX1, (char *)NVCC_NO_NVTX2,
                  (char *)"-gencode", (char *)NVCC_GENCODE, (char *)"-Xcompiler", (char *)"-fPIC", (char *)"-shared",
                  (char *)"-cudart", (char *)"shared", (char *)"-Xlinker", wraps, (char *)"-I", (char *)inc,
                  (char *)"-o", b->so_path, (char *)src, NULL};
    rc = compile_step(cc, logfile, b, &ok, err);
    if (!rc) replace_log(b, logfile, NULL);
    if (rc || !ok) return rc;
    rc = dkb__symbols_check_cuda(b->so_path, dkb__entry_symbol(mode), &b->verdict, b->detail, sizeof b->detail,
                                 err);
    if (!rc && b->verdict == DKB_VERDICT_OK) rc = dkb__insns_check(b->so_path, &b->verdict, b->detail, sizeof b->detail, err);
    return rc;
}

int dkb__build_candidate(const char *src, dkb_mode mode, const char *scratch_dir, dkb_build *b, dkb_error *err) {
    memset(b, 0, sizeof *b);
    b->verdict = DKB_VERDICT_HARNESS_ERROR;
    if (!src || !scratch_dir) return dkb_fail(err, DKB_EINVAL, "build: missing source or scratch directory");
    struct stat st;
    if (stat(src, &st) != 0) return dkb_fail(err, dkb_errno_code(errno), "cannot read %s: %s", src, strerror(errno));
    int rc = dkb__sha256_file(src, b->hash, err);
    if (rc) return rc;
    /* a Python candidate: checked, not compiled (py_build.c) */
    if (dkb__is_python_source(src)) return dkb__py_build(src, mode, scratch_dir, b, err);

    /* a directory holding only dkb/candidate.h */
    char inc[4096], incdkb[4096 + 8], hdr[4096 + 32], ours[4096];
    if ((size_t)snprintf(inc, sizeof inc, "%s/include", scratch_dir) >= sizeof inc)
        return dkb_fail(err, DKB_EINVAL, "build: scratch directory name too long");
    snprintf(incdkb, sizeof incdkb, "%s/dkb", inc);
    snprintf(hdr, sizeof hdr, "%s/candidate.h", incdkb);
    if (find_candidate_header(ours, sizeof ours) != 0)
        return dkb_fail(err, DKB_ENOENT, "build: cannot find dkb/candidate.h near the dkb binary or in its source tree; set DKB_CANDIDATE_H");
    if ((rc = make_dir(inc, err)) || (rc = make_dir(incdkb, err)) || (rc = dkb__copy_file(ours, hdr, err))) return rc;
    /* the optional candidate toolkit beside it (include/dkb/cand_*.h) */
    for (size_t i = 0; i < DKB_COUNTOF(TOOLKIT); i++) {
        char from[4096 + 64], to[4096 + 64];
        const char *slash = strrchr(ours, '/');
        snprintf(from, sizeof from, "%.*s/%s", (int)(slash ? slash - ours : 0), ours, TOOLKIT[i]);
        snprintf(to, sizeof to, "%s/%s", incdkb, TOOLKIT[i]);
        if (access(from, R_OK) == 0 && (rc = dkb__copy_file(from, to, err))) return rc;
    }

    /* names: SCRATCH/<base>.so, .d, .log (base: the file name less .c / .cu) */
    const char *base = strrchr(src, '/');
    base = base ? base + 1 : src;
    size_t blen = strlen(base);
    int cuda = dkb__is_cuda_source(src);
    if (cuda) blen -= 3;
    else if (blen > 2 && !strcmp(base + blen - 2, ".c")) blen -= 2;
    char dfile[4096], logfile[4096];
    if ((size_t)snprintf(b->so_path, sizeof b->so_path, "%s/%.*s.so", scratch_dir, (int)blen, base) >= sizeof b->so_path)
        return dkb_fail(err, DKB_EINVAL, "build: scratch path too long");
    snprintf(dfile, sizeof dfile, "%s/%.*s.d", scratch_dir, (int)blen, base);
    snprintf(logfile, sizeof logfile, "%s/%.*s.log", scratch_dir, (int)blen, base);
    unlink(b->so_path);
    unlink(dfile);

    if (st.st_size > SOURCE_MAX) {
        b->verdict = DKB_VERDICT_COMPILE_ERROR;
        snprintf(b->detail, sizeof b->detail, "source is %lld bytes (limit %lld)", (long long)st.st_size,
                 (long long)SOURCE_MAX);
        b->log = strdup("");
        return b->log ? 0 : dkb_fail(err, DKB_ENOMEM, "out of memory");
    }

    if (cuda) {
        char ifile[4096], plog[4096];
        snprintf(ifile, sizeof ifile, "%s/%.*s.ii", scratch_dir, (int)blen, base);
        snprintf(plog, sizeof plog, "%s/%.*s.pp.log", scratch_dir, (int)blen, base);
        unlink(ifile);
        b->log = strdup("");
        if (!b->log) return dkb_fail(err, DKB_ENOMEM, "out of memory");
        return build_cuda(src, mode, inc, hdr, dfile, ifile, plog, logfile, b, err);
    }
    const char *cc = getenv("DKB_CC");
    if (!cc || !*cc) cc = "cc";
    char ccpath[4096];
    if (find_program(cc, ccpath, sizeof ccpath) != 0)
        return dkb_fail(err, DKB_ENOENT, "build: compiler %s not found (set DKB_CC)", cc);
    char ifile[4096], sfile[4096], plog[4096];
    snprintf(ifile, sizeof ifile, "%s/%.*s.i", scratch_dir, (int)blen, base);
    snprintf(sfile, sizeof sfile, "%s/%.*s.s", scratch_dir, (int)blen, base);
    snprintf(plog, sizeof plog, "%s/%.*s.pp.log", scratch_dir, (int)blen, base);
    unlink(ifile);
    unlink(sfile);
    b->log = strdup("");
    if (!b->log) return dkb_fail(err, DKB_ENOMEM, "out of memory");

    /* 1. preprocess: which files does the source read? Its diagnostics are
     * withheld (they could quote a file it should not have included) but
     * for their message lines about the source itself. */
    char *pp[] = {ccpath, (char *)"-std=c11", (char *)"-march=native", (char *)"-fopenmp", (char *)"-I", inc,
                  (char *)"-E", (char *)"-MD", (char *)"-MF", dfile, (char *)"-o", ifile, (char *)src, NULL};
    bool go;
    rc = preprocess_checks(pp, plog, dfile, ifile, src, hdr, b, &go, err);
    if (rc || !go) return rc;
    int ok = 0;

    /* 2. compile to assembly (the diagnostics are the log), and refuse
     * inline assembly: it could make system calls the allow-list never sees */
    char *cc1[] = {ccpath, (char *)"-std=c11", (char *)"-O3", (char *)"-march=native", (char *)"-fopenmp",
                   (char *)"-fPIC", (char *)"-Wall", (char *)"-I", inc, (char *)"-S", (char *)"-o", sfile,
                   (char *)src, NULL};
    rc = compile_step(cc1, logfile, b, &ok, err);
    if (!rc) replace_log(b, logfile, NULL);
    if (rc || !ok) return rc;
    if (asm_has_inline(sfile)) {
        b->verdict = DKB_VERDICT_COMPILE_ERROR;
        snprintf(b->detail, sizeof b->detail, "uses inline assembly, which is not allowed");
        return 0;
    }

    /* 3. assemble and link */
    char alog[4096];
    snprintf(alog, sizeof alog, "%s/%.*s.ld.log", scratch_dir, (int)blen, base);
    char wraps[4096];
    if (wrap_option(wraps, sizeof wraps, "-Wl,", false))
        return dkb_fail(err, DKB_EINTERNAL, "build: the --wrap list is too long");
    char *ld[] = {ccpath, (char *)"-fopenmp", (char *)"-fPIC", (char *)"-shared", wraps, (char *)"-o", b->so_path,
                  sfile, NULL};
    rc = compile_step(ld, alog, b, &ok, err);
    if (rc || !ok) {
        if (!rc) replace_log(b, alog, NULL);
        return rc;
    }
    rc = dkb__symbols_check(b->so_path, dkb__entry_symbol(mode), &b->verdict, b->detail, sizeof b->detail, err);
    if (!rc && b->verdict == DKB_VERDICT_OK) rc = dkb__insns_check(b->so_path, &b->verdict, b->detail, sizeof b->detail, err);
    return rc;
}
