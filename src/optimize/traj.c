/* traj.c: append and load the JSONL trajectory of a `dkb optimize` run
 * (traj.h). */
#include "optimize/traj.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"   // defines: dkb__path_join, dkb__read_file, dkb__io_fail

int dkb__traj_open(dkb_traj *t, const char *rundir, dkb_error *err) {
    memset(t, 0, sizeof *t);
    t->path = dkb__path_join(rundir, "trajectory.jsonl");
    if (!t->path) return dkb_fail(err, DKB_ENOMEM, "trajectory: out of memory");
    t->f = fopen(t->path, "a+");
    if (!t->f) {
        int rc = dkb__io_fail(err, t->path, "cannot open the trajectory");
        free(t->path);
        t->path = NULL;
        return rc;
    }
    /* a line cut by a kill: end it, so the next record is a line of its own */
    if (fseek(t->f, 0, SEEK_END) == 0 && ftell(t->f) > 0 && fseek(t->f, -1, SEEK_END) == 0) {
        int last = fgetc(t->f);
        fseek(t->f, 0, SEEK_END);
        if (last != '\n') fputc('\n', t->f);
    }
    pthread_mutex_init(&t->lock, NULL);
    return 0;
}

int dkb__traj_append(dkb_traj *t, const cJSON *record, dkb_error *err) {
    char *line = cJSON_PrintUnformatted(record);
    if (!line) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory formatting a record", t->path);
    pthread_mutex_lock(&t->lock);
    int bad = fputs(line, t->f) < 0 || fputc('\n', t->f) == EOF || fflush(t->f) != 0 || fsync(fileno(t->f)) != 0;
    int e = errno;
    pthread_mutex_unlock(&t->lock);
    free(line);
    if (bad) {
        errno = e;
        return dkb__io_fail(err, t->path, "cannot append to the trajectory");
    }
    return 0;
}

void dkb__traj_close(dkb_traj *t) {
    if (t->f) {
        fclose(t->f);
        pthread_mutex_destroy(&t->lock);
    }
    free(t->path);
    memset(t, 0, sizeof *t);
}

int dkb__traj_load(const char *rundir, cJSON **records, int *skipped, dkb_error *err) {
    *records = NULL;
    if (skipped) *skipped = 0;
    char *path = dkb__path_join(rundir, "trajectory.jsonl");
    if (!path) return dkb_fail(err, DKB_ENOMEM, "trajectory: out of memory");
    cJSON *arr = cJSON_CreateArray();
    char *text = NULL;
    size_t len = 0;
    int rc = 0;
    if (access(path, F_OK) == 0) rc = dkb__read_file(path, (size_t)1 << 34, &text, &len, err);
    if (rc || !arr) {
        free(path);
        cJSON_Delete(arr);
        return rc ? rc : dkb_fail(err, DKB_ENOMEM, "trajectory: out of memory");
    }
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (*line) {
            cJSON *rec = cJSON_Parse(line);
            if (rec && cJSON_IsObject(rec)) cJSON_AddItemToArray(arr, rec);
            else {
                cJSON_Delete(rec);
                if (skipped) (*skipped)++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    free(path);
    *records = arr;
    return 0;
}
