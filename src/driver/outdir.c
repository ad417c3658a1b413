/* outdir.c: all-or-nothing output directories (see outdir.h). */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_empty_dir(const char *dir, int *empty) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    *empty = 1;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            *empty = 0;
            break;
        }
    }
    closedir(d);
    return 0;
}

/* mkdir -p of the directories above path. */
static int make_parents(const char *path, dkb_error *err) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return dkb_fail(err, dkb_errno_code(errno), "%s: cannot create: %s", buf, strerror(errno));
        *p = '/';
    }
    return 0;
}

int dkb__outdir_begin(dkb_outdir *o, const char *dir, int force, dkb_error *err) {
    memset(o, 0, sizeof *o);
    if (!dir || !*dir) return dkb_fail(err, DKB_EINVAL, "no output directory given");
    if (strlen(dir) + 32 >= sizeof o->final_path)
        return dkb_fail(err, DKB_EINVAL, "%s: path too long", dir);
    snprintf(o->final_path, sizeof o->final_path, "%s", dir);
    size_t n = strlen(o->final_path);
    while (n > 1 && o->final_path[n - 1] == '/') o->final_path[--n] = '\0';
    struct stat st;
    if (stat(o->final_path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return dkb_fail(err, DKB_EEXIST, "%s: exists and is not a directory", dir);
        int empty = 0;
        if (is_empty_dir(o->final_path, &empty) != 0)
            return dkb_fail(err, dkb_errno_code(errno), "%s: %s", dir, strerror(errno));
        if (!empty && !force)
            return dkb_fail(err, DKB_EEXIST,
                            "%s: directory exists and is not empty (use --force to replace it)", dir);
    } else if (errno != ENOENT) {
        return dkb_fail(err, dkb_errno_code(errno), "%s: %s", dir, strerror(errno));
    }
    int rc = make_parents(o->final_path, err);
    if (rc) return rc;
    snprintf(o->tmp_path, sizeof o->tmp_path, "%s.tmp.%ld", o->final_path, (long)getpid());
    dkb__rmtree(o->tmp_path);
    if (mkdir(o->tmp_path, 0777) != 0)
        return dkb_fail(err, dkb_errno_code(errno), "%s: cannot create: %s", o->tmp_path,
                        strerror(errno));
    return 0;
}

int dkb__outdir_path(const dkb_outdir *o, const char *name, char *buf, size_t n, dkb_error *err) {
    int k = snprintf(buf, n, "%s/%s", o->tmp_path, name);
    if (k < 0 || (size_t)k >= n) return dkb_fail(err, DKB_EINVAL, "%s/%s: path too long", o->tmp_path, name);
    return 0;
}

int dkb__outdir_commit(dkb_outdir *o, dkb_error *err) {
    int fd = open(o->tmp_path, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    char old[4200];
    snprintf(old, sizeof old, "%s.old.%ld", o->final_path, (long)getpid());
    int moved = 0;
    struct stat st;
    if (stat(o->final_path, &st) == 0) {
        /* An empty directory can be replaced directly; otherwise move it aside. */
        if (rmdir(o->final_path) != 0) {
            if (rename(o->final_path, old) != 0)
                return dkb_fail(err, dkb_errno_code(errno), "%s: cannot replace: %s",
                                o->final_path, strerror(errno));
            moved = 1;
        }
    }
    if (rename(o->tmp_path, o->final_path) != 0) {
        int e = errno;
        if (moved) rename(old, o->final_path);
        return dkb_fail(err, dkb_errno_code(e), "%s: cannot rename into place: %s",
                        o->final_path, strerror(e));
    }
    if (moved) dkb__rmtree(old);
    return 0;
}

void dkb__outdir_abort(dkb_outdir *o) {
    if (o->tmp_path[0]) dkb__rmtree(o->tmp_path);
    o->tmp_path[0] = '\0';
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int dkb__rmtree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : errno;
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : errno;
}
