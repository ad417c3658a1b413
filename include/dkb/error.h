/* error.h: status codes shared by every DataKernelBench library call.
 *
 * Every public function returns an int: 0 on success, a negative DKB_E*
 * code on failure. Functions that can fail for a reason worth explaining
 * also take a `dkb_error *` (may be NULL) that receives a one-line message
 * naming what went wrong and where (file, row, field). Library code never
 * prints and never exits; only the CLI does. */
#ifndef DKB_ERROR_H
#define DKB_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One table: code name, value, generic message. */
#define DKB_ERRNO_MAP(X)                                                   \
    X(OK, 0, "success")                                                    \
    X(EINVAL, -1, "invalid argument")                                      \
    X(ENOMEM, -2, "out of memory")                                         \
    X(EIO, -3, "input/output error")                                       \
    X(ENOENT, -4, "not found")                                             \
    X(EEXIST, -5, "already exists")                                        \
    X(ECORRUPT, -6, "corrupt or truncated data")                           \
    X(EPARSE, -7, "malformed input")                                       \
    X(ENOSPC, -8, "no space left on device")                               \
    X(ERANGE, -9, "value out of range")                                    \
    X(EVERSION, -10, "unsupported format version")                         \
    X(EINTERNAL, -11, "internal error")

typedef enum {
#define DKB__ERR_ENUM(name, value, msg) DKB_##name = (value),
    DKB_ERRNO_MAP(DKB__ERR_ENUM)
#undef DKB__ERR_ENUM
} dkb_status_t;

/* Detail for a failed call: the code and a human-readable line. */
typedef struct dkb_error {
    int code;       /* a DKB_E* code, 0 when no error was recorded */
    char msg[512];  /* "lineitem.tbl:17: field 5 (l_quantity): not a number" */
} dkb_error;

/* The generic message of a code ("corrupt or truncated data"). Never NULL. */
const char *dkb_strerror(int code);
/* The symbolic name of a code ("DKB_ECORRUPT"). Never NULL. */
const char *dkb_err_name(int code);
/* Record code and a printf-style message in err (if non-NULL); returns code,
 * so callers write `return dkb_fail(err, DKB_EIO, "...", ...);`. */
int dkb_fail(dkb_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same with a va_list. */
int dkb_vfail(dkb_error *err, int code, const char *fmt, va_list ap);
/* Map an errno value from a failed system call to a DKB_E* code. */
int dkb_errno_code(int sys_errno);

#ifdef __cplusplus
}
#endif

#endif
