/* error.c: names and messages of status codes, and the error-recording helper. */
#include "dkb/error.h"

#include <errno.h>
#include <stdio.h>

const char *dkb_strerror(int code) {
    switch (code) {
#define DKB__ERR_MSG(name, value, msg) \
    case (value):                      \
        return (msg);
        DKB_ERRNO_MAP(DKB__ERR_MSG)
#undef DKB__ERR_MSG
    }
    return "unknown error";
}

const char *dkb_err_name(int code) {
    switch (code) {
#define DKB__ERR_NAME(name, value, msg) \
    case (value):                       \
        return "DKB_" #name;
        DKB_ERRNO_MAP(DKB__ERR_NAME)
#undef DKB__ERR_NAME
    }
    return "DKB_UNKNOWN";
}

int dkb_vfail(dkb_error *err, int code, const char *fmt, va_list ap) {
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

int dkb_fail(dkb_error *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    dkb_vfail(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int dkb_errno_code(int sys_errno) {
    switch (sys_errno) {
    case ENOMEM: return DKB_ENOMEM;
    case ENOENT: return DKB_ENOENT;
    case EEXIST: case ENOTEMPTY: return DKB_EEXIST;
    case ENOSPC: case EDQUOT: case EFBIG: return DKB_ENOSPC;
    case EINVAL: return DKB_EINVAL;
    default: return DKB_EIO;
    }
}
