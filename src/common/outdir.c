/* outdir.c: all-or-nothing output directories (see outdir.h). */
#include "common/outdir.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"

static void outdir_free(dkb_outdir *o) {
    free(o->dir);
    free(o->tmp);
    o->dir = o->tmp = NULL;
}

/* May dir be replaced now? */
static int check_target(const char *dir, int force, dkb_error *err) {
    int kind = dkb__path_kind(dir);
    if (kind == DKB__PATH_OTHER) return dkb_fail(err, DKB_EEXIST, "%s: exists and is not a directory", dir);
    if (kind == DKB__PATH_DIR && !force)
        return dkb_fail(err, DKB_EEXIST, "%s: directory exists and is not empty (use --force to replace it)", dir);
    return 0;
}

int dkb__outdir_begin(dkb_outdir *o, const char *dir, int force, dkb_error *err) {
    memset(o, 0, sizeof *o);
    if (!dir || !*dir) return dkb_fail(err, DKB_EINVAL, "no output directory given");
    int rc = check_target(dir, force, err);
    if (rc) return rc;
    size_t n = strlen(dir);
    o->dir = malloc(n + 1);
    o->tmp = malloc(n + 32);
    if (!o->dir || !o->tmp) {
        outdir_free(o);
        return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", dir);
    }
    memcpy(o->dir, dir, n + 1);
    while (n > 1 && o->dir[n - 1] == '/') o->dir[--n] = '\0';
    snprintf(o->tmp, n + 32, "%s.tmp.%ld", o->dir, (long)getpid());
    o->force = force;
    dkb__rm_rf(o->tmp);
    rc = dkb__mkdir_p(o->tmp, err);
    if (rc) outdir_free(o);
    return rc;
}

/* Put tmp in place of dir. */
static int swap_into_place(dkb_outdir *o, dkb_error *err) {
    int rc = check_target(o->dir, o->force, err);
    if (rc) return rc;
    if (dkb__path_kind(o->dir) != DKB__PATH_DIR) {
        /* Missing, or an empty directory: rename replaces it. */
        if (rename(o->tmp, o->dir) != 0) return dkb__io_fail(err, o->dir, "cannot rename into place");
        return 0;
    }
    /* Atomic swap; the old directory ends up at tmp and is removed. */
    if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->dir, RENAME_EXCHANGE) == 0) {
        dkb__rm_rf(o->tmp);
        return 0;
    }
    /* File systems without RENAME_EXCHANGE: move the old one aside first. */
    size_t n = strlen(o->dir) + 32;
    char *old = malloc(n);
    if (!old) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", o->dir);
    snprintf(old, n, "%s.old.%ld", o->dir, (long)getpid());
    if (rename(o->dir, old) != 0) {
        rc = dkb__io_fail(err, o->dir, "cannot move the old directory aside");
    } else if (rename(o->tmp, o->dir) != 0) {
        rc = dkb__io_fail(err, o->dir, "cannot rename into place");
        rename(old, o->dir);
    } else {
        dkb__rm_rf(old);
    }
    free(old);
    return rc;
}

/* fsync the directory holding path (best effort). */
static void fsync_parent(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        dkb__fsync_dir(".", NULL);
        return;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *parent = malloc(n + 1);
    if (!parent) return;
    memcpy(parent, path, n);
    parent[n] = '\0';
    dkb__fsync_dir(parent, NULL);
    free(parent);
}

int dkb__outdir_commit(dkb_outdir *o, dkb_error *err) {
    int rc = dkb__fsync_dir(o->tmp, err);
    if (!rc) rc = swap_into_place(o, err);
    if (rc) {
        dkb__outdir_abort(o);
        return rc;
    }
    fsync_parent(o->dir);
    outdir_free(o);
    return 0;
}

void dkb__outdir_abort(dkb_outdir *o) {
    if (o->tmp) dkb__rm_rf(o->tmp);
    outdir_free(o);
}
