/* fsutil.h: small file-system helpers (internal): whole
 * writes and reads with errors that name the file, file copies, directory
 * creation, recursive removal, directory fsync. */
#ifndef DKB_STORE_FSUTIL_H
#define DKB_STORE_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dkb/error.h"

/* Record errno of a failed system call on path: "PATH: WHAT: strerror".
 * Returns the DKB code (dkb_errno_code). */
int dkb__io_fail(dkb_error *err, const char *path, const char *what);

/* write()/pwrite()/pread() the whole buffer, retrying short transfers and
 * EINTR; failures name path. pread_all treats end of file as DKB_ECORRUPT. */
int dkb__write_all(int fd, const void *buf, size_t len, const char *path, dkb_error *err);
int dkb__pwrite_all(int fd, const void *buf, size_t len, off_t at, const char *path,
                    dkb_error *err);
int dkb__pread_all(int fd, void *buf, size_t len, off_t at, const char *path, dkb_error *err);

/* Write buf to dir/name through a temporary file in dir, fsync'ed, then
 * renamed over name (readers see the old file or the whole new one; the
 * temporary is removed on failure). */
int dkb__write_file_atomic(const char *dir, const char *name, const char *buf, size_t len, dkb_error *err);

/* fsync the directory at path. */
int dkb__fsync_dir(const char *path, dkb_error *err);
/* mkdir -p (mode 0777 before umask). */
int dkb__mkdir_p(const char *path, dkb_error *err);
/* rm -rf path without following symbolic links; 0 or -1. Missing is fine. */
int dkb__rm_rf(const char *path);

/* What is at path. */
enum { DKB__PATH_MISSING, DKB__PATH_EMPTY_DIR, DKB__PATH_DIR, DKB__PATH_OTHER };
int dkb__path_kind(const char *path);

/* malloc'd "a/b" (or a copy of b when a is empty); NULL when out of memory. */
char *dkb__path_join(const char *a, const char *b);

/* Copy the file at from to a new file to (created or truncated); errors
 * name the file. */
int dkb__copy_file(const char *from, const char *to, dkb_error *err);

/* Read a whole (small) file into a malloc'd, NUL-terminated buffer. */
int dkb__read_file(const char *path, size_t max, char **out, size_t *len, dkb_error *err);
/* The same, and *st (may be NULL) the fstat of the descriptor read, taken
 * before the read. */
struct stat;
int dkb__read_file_st(const char *path, size_t max, char **out, size_t *len, struct stat *st, dkb_error *err);

/* The path of the running executable (/proc/self/exe), NUL-terminated in
 * buf: 0, or -1 when it cannot be read or does not fit. */
int dkb__self_exe(char *buf, size_t cap);

/* The source tree this binary was built from (srcroot.c; "." if unknown). */
const char *dkb__source_root(void);

#endif
