/* cli_verify.c: the --verbose line about the store's verification. */
#include "cli_verify.h"

void cli_verify_note(FILE *f, const char *cmd, const char *store, bool skipped, const dkb__verify_info *vi) {
    const char *what = vi->level == DKB__VERIFY_FULL ? "crc32 and structure" : "structure";
    if (skipped)
        fprintf(f, "dkb %s: store %s: not verified (--no-verify)\n", cmd, store);
    else if (vi->cached)
        fprintf(f, "dkb %s: store %s: unchanged since verified (%s of %d files; record %s)\n", cmd, store, what,
                vi->nfiles, vi->path);
    else if (vi->recorded)
        fprintf(f, "dkb %s: store %s: verified (%s of %d files) in %.3f s; recorded in %s\n", cmd, store, what,
                vi->nfiles, vi->seconds, vi->path);
    else
        fprintf(f, "dkb %s: store %s: verified (%s of %d files) in %.3f s; %s\n", cmd, store, what, vi->nfiles,
                vi->seconds, vi->note);
}
