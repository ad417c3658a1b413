/* test_model_server.h: start and stop tests/tools/fake_model_server.py
 * (python3, loopback) from a C unit test, in a fresh temporary directory
 * that holds its script, port file and request log. The server's path is
 * $DKB_FAKE_MODEL_SERVER, else ../tools/fake_model_server.py next to this
 * header. The server also exits by itself when the test process dies. */
#ifndef DKB_TEST_MODEL_SERVER_H
#define DKB_TEST_MODEL_SERVER_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct fake_server {
    pid_t pid;
    int port;
    char dir[64];          /* the temporary directory */
    char script[128], port_file[128], log[128];
    char url[64];          /* "http://127.0.0.1:PORT/v1" */
} fake_server;

/* Write s to path; 0 or -1. */
static inline int fake_write_file(const char *path, const char *s) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs(s, f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* The whole file, malloc'd (NULL when unreadable). */
static inline char *fake_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    size_t k;
    while (s && (k = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (cap - len < 2) {
            char *t = realloc(s, cap *= 2);
            if (!t) free(s);
            s = t;
        }
    }
    fclose(f);
    if (s) s[len] = '\0';
    return s;
}

static inline const char *fake_server_path(void) {
    static char path[1024];
    const char *env = getenv("DKB_FAKE_MODEL_SERVER");
    if (env && *env) return env;
    snprintf(path, sizeof path, "%s", __FILE__);
    char *slash = strrchr(path, '/');
    size_t at = slash ? (size_t)(slash - path + 1) : 0;
    snprintf(path + at, sizeof path - at, "../tools/fake_model_server.py");
    return path;
}

/* Start a server that plays script_json (a JSON list of steps, or the
 * object form; see the server's header). 0, or -1 with a message on stderr. */
static inline int fake_server_start(fake_server *s, const char *script_json) {
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/dkb-model-test-XXXXXX");
    if (!mkdtemp(s->dir)) {
        perror("fake_server_start: mkdtemp");
        return -1;
    }
    snprintf(s->script, sizeof s->script, "%s/script.json", s->dir);
    snprintf(s->port_file, sizeof s->port_file, "%s/port", s->dir);
    snprintf(s->log, sizeof s->log, "%s/requests.log", s->dir);
    if (fake_write_file(s->script, script_json)) {
        fprintf(stderr, "fake_server_start: cannot write %s\n", s->script);
        return -1;
    }
    const char *server = fake_server_path();
    pid_t pid = fork();
    if (pid == 0) {
        execlp("python3", "python3", server, "--script", s->script, "--port-file", s->port_file, "--log", s->log,
               (char *)NULL);
        perror("fake_server_start: exec python3");
        _exit(127);
    }
    if (pid < 0) {
        perror("fake_server_start: fork");
        return -1;
    }
    s->pid = pid;
    for (int i = 0; i < 1000; i++) { /* up to 10 s */
        char *p = fake_read_file(s->port_file);
        if (p) {
            s->port = atoi(p);
            free(p);
            if (s->port > 0) break;
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "fake_server_start: %s exited before it wrote its port\n", server);
            s->pid = 0;
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (s->port <= 0) {
        fprintf(stderr, "fake_server_start: no port from %s after 10 s\n", server);
        return -1;
    }
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", s->port);
    return 0;
}

/* Stop the server and remove its directory (script, port file, log). */
static inline void fake_server_stop(fake_server *s) {
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    if (s->dir[0]) {
        unlink(s->script);
        unlink(s->port_file);
        unlink(s->log);
        rmdir(s->dir);
        s->dir[0] = '\0';
    }
}

#endif
