/* outdir.h: all-or-nothing output directories: build under DIR.tmp.<pid>,
 * then replace DIR in one rename. */
#ifndef DKB_OUTDIR_H
#define DKB_OUTDIR_H

#include <stddef.h>

#include "dkb/error.h"

typedef struct dkb_outdir {
    char final_path[4096];
    char tmp_path[4096];
} dkb_outdir;

/* Check that `dir` does not exist or is empty (else DKB_EEXIST, unless
 * force) and create the temporary directory beside it. */
int dkb__outdir_begin(dkb_outdir *o, const char *dir, int force, dkb_error *err);
/* Path of `name` inside the temporary directory (into buf of size n). */
int dkb__outdir_path(const dkb_outdir *o, const char *name, char *buf, size_t n, dkb_error *err);
/* fsync the directory, move any old DIR aside, rename, remove the old. */
int dkb__outdir_commit(dkb_outdir *o, dkb_error *err);
/* Remove the temporary directory and everything in it. */
void dkb__outdir_abort(dkb_outdir *o);
/* Remove a directory tree (used for cleanup); returns 0 or an errno code. */
int dkb__rmtree(const char *path);

#endif
