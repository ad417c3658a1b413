/* py_build.h: the build step of a Python candidate (qNN.full.py /
 * qNN.core.py; docs/harness.md "Python candidates"), called by
 * dkb__build_candidate (build.c) for a .py source. */
#ifndef DKB_HARNESS_PY_BUILD_H
#define DKB_HARNESS_PY_BUILD_H

#include <stdbool.h>

#include "dkb/error.h"
#include "harness/harness.h"   // defines: dkb_build, dkb_mode

/* True when src names a Python candidate (ends in ".py"). */
bool dkb__is_python_source(const char *src);

/* "Build" the Python candidate src for mode in scratch_dir (which must
 * exist): copy it to SCRATCH/<base>.py; run the bridge's static check in
 * the sandbox with the interpreter $DKB_PYTHON (default /usr/bin/python3,
 * else python3 on PATH): a syntax error is COMPILE_ERROR, an import or name
 * outside the allow-list FORBIDDEN_SYMBOL, no module-level full()/core()
 * BAD_ENTRY, each with the line in b->detail; then put the worker's shim
 * ($DKB_PYSHIM, default dkb_pyshim.so beside the dkb binary) at
 * SCRATCH/<base>.so (b->so_path) with its configuration SCRATCH/<base>.pycfg
 * (the interpreter's shared libpython and prefix, the source, the mode, the
 * cache directory SCRATCH/cache). An interpreter without a shared libpython,
 * or a missing shim, is a HARNESS_ERROR verdict for the row. b->hash is
 * left as the caller set it. Returns 0 when the step ran (whatever the
 * verdict); an error when scratch_dir cannot be written or the sandbox
 * cannot start. */
int dkb__py_build(const char *src, dkb_mode mode, const char *scratch_dir, dkb_build *b, dkb_error *err);

#endif
