/* outdir.h: all-or-nothing output directories. Everything is written under
 * DIR.tmp.<pid> beside the target; commit puts it in place of DIR in one
 * rename (an atomic exchange when DIR exists and --force was given), so a
 * failure or crash never leaves something at DIR that looks complete. */
#ifndef DKB_OUTDIR_H
#define DKB_OUTDIR_H

#include "dkb/error.h"

typedef struct dkb_outdir {
    char *dir;    /* the target, without trailing slashes */
    char *tmp;    /* where everything is written until commit */
    int force;    /* replace a non-empty dir at commit */
} dkb_outdir;

/* Check that dir is missing or empty (else DKB_EEXIST unless force; a
 * non-directory is always DKB_EEXIST) and create the temporary directory
 * (and the parents of dir). On failure o is left freed. */
int dkb__outdir_begin(dkb_outdir *o, const char *dir, int force, dkb_error *err);
/* fsync the temporary directory, check dir again, put the temporary
 * directory in its place, fsync the parent, free o. On failure the
 * temporary directory is removed and o freed; dir is untouched. */
int dkb__outdir_commit(dkb_outdir *o, dkb_error *err);
/* Remove the temporary directory and free o. Accepts a zeroed o. */
void dkb__outdir_abort(dkb_outdir *o);

#endif
