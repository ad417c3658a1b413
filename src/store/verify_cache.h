/* verify_cache.h: verify a store once per version of its files (internal).
 *
 * dkb__store_verify_cached runs dkb_store_verify (crc32 and structure) or
 * dkb_store_check_structure on an open store, unless a record says that
 * these very files already passed; after a pass it writes such a record.
 * A record names every column file by its path and stamp (device, inode,
 * size, mtime and ctime to the nanosecond, from the fstat of the mapped
 * descriptor) and the manifest by its stamp, size and crc32, so any write,
 * touch, truncate or replaced file makes it stale.
 *
 * Where records live: DIR/.dkb-verified when the store directory is
 * writable, else the per-user cache ($XDG_CACHE_HOME/dkb, or ~/.cache/dkb)
 * as verified-<hash of the store's absolute path>; written atomically
 * (temporary name, then rename). When neither can be written the store is
 * simply verified at every open. docs/store.md describes the format. */
#ifndef DKB_STORE_VERIFY_CACHE_H
#define DKB_STORE_VERIFY_CACHE_H

#include <stdbool.h>

#include "dkb/error.h"
#include "dkb/store.h"

/* How much to check; a record of a level satisfies it and every lower one. */
typedef enum {
    DKB__VERIFY_STRUCTURE = 1,   /* dkb_store_check_structure: codes and offsets */
    DKB__VERIFY_FULL = 2,        /* dkb_store_verify: every crc32, and the structure */
} dkb__verify_level;

/* The record file's name inside a store directory. */
#define DKB__VERIFY_RECORD ".dkb-verified"

/* What a call did (for a --verbose line and for tests). */
typedef struct dkb__verify_info {
    dkb__verify_level level;   /* OUT: the level asked for */
    bool cached;               /* OUT: a record for these files said they passed; nothing was read */
    bool recorded;             /* OUT: the pass was recorded at path */
    int nfiles;                /* OUT: column files covered */
    double seconds;            /* OUT: wall time of the check (0 when cached) */
    char path[4096];           /* OUT: the record that held, or the one written ("" when neither) */
    char note[1200];           /* OUT: why a pass was not recorded ("" otherwise) */
} dkb__verify_info;

/* Verify s at level unless a record for its files (at level or above)
 * exists; record a pass. info (may be NULL) receives what happened. A
 * record that cannot be read or written never fails the call: the only
 * errors are those of the check itself (DKB_ECORRUPT naming the file and
 * what is wrong, DKB_ENOMEM), and DKB_EINVAL for a NULL s or a bad level.
 * Records are written only for files whose ctime is older than the clock
 * tick at which s was opened (a change in that same tick could leave the
 * stamp as it was); a younger store is verified but not recorded. */
int dkb__store_verify_cached(const dkb_store *s, dkb__verify_level level, dkb__verify_info *info,
                             dkb_error *err);

/* Open the store in dir, dkb__store_verify_cached it, close it. Errors are
 * those of dkb_store_open and of the check. */
int dkb__store_verify_dir(const char *dir, dkb__verify_level level, dkb__verify_info *info, dkb_error *err);

#endif
