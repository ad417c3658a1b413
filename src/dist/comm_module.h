/* comm_module.h: what the communicator modules dkb_comm_mpi.so and
 * dkb_comm_nccl.so export, and dkb looks up after dlopen (internal).
 *
 * The modules are built from comm_mpi.c and comm_nccl.c and linked against
 * libmpi and libnccl; dkb links neither and loads a module only when a run
 * needs it (comm.c), so a single-rank run needs neither library. A module
 * links nothing of dkb_core: it fills dkb_error itself and allocates its
 * dkb__comm, which its ops->close frees. */
#ifndef DKB_DIST_COMM_MODULE_H
#define DKB_DIST_COMM_MODULE_H

#include <stdarg.h>
#include <stdio.h>

#include "dist/comm.h"

/* A module's own dkb_fail (it links nothing of dkb_core): err (may be NULL)
 * := code and the message; returns code. */
static inline int dkb__comm_module_fail(dkb_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int dkb__comm_module_fail(dkb_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Bumped when dkb__comm, dkb__comm_ops or the entry points change; a module
 * of another version is refused. */
#define DKB__COMM_MODULE_ABI 2

/* Both modules: `const int dkb__comm_module_abi = DKB__COMM_MODULE_ABI;` */
#define DKB__COMM_MODULE_ABI_SYMBOL "dkb__comm_module_abi"

/* dkb_comm_mpi.so: MPI_Init (when MPI is not initialised yet) and the
 * communicator of MPI_COMM_WORLD. */
#define DKB__COMM_MPI_OPEN_SYMBOL "dkb__comm_mpi_module_open"
typedef int (*dkb__comm_mpi_open_fn)(dkb__comm **out, dkb_error *err);

/* dkb_comm_nccl.so: ncclCommInitRank over boot's ranks on `device`
 * (rank 0's ncclGetUniqueId broadcast through boot). */
#define DKB__COMM_NCCL_OPEN_SYMBOL "dkb__comm_nccl_module_open"
typedef int (*dkb__comm_nccl_open_fn)(dkb__comm *boot, int device, dkb__comm **out, dkb_error *err);

#endif
