/* cli_verify.h: the one line `--verbose` prints about the store's
 * verification (verify_cache.h), the same for eval, bench, optimize, run. */
#ifndef DKB_CLI_VERIFY_H
#define DKB_CLI_VERIFY_H

#include <stdbool.h>
#include <stdio.h>

#include "store/verify_cache.h"   // defines: dkb__verify_info

/* To f: "dkb CMD: store STORE: verified (crc32 and structure of 61 files)
 * in 0.021 s; recorded in STORE/.dkb-verified" (or "...; not recorded
 * (...)" with vi->note), "...: unchanged since verified (crc32 and
 * structure of 61 files; record STORE/.dkb-verified)", or "...: not
 * verified (--no-verify)" when skipped. */
void cli_verify_note(FILE *f, const char *cmd, const char *store, bool skipped, const dkb__verify_info *vi);

#endif
