/* attrib.h: kernel attribution of a CUDA candidate: how the device time of
 * one of its calls splits between its own kernels and library kernels
 * (CUB, Thrust, libcu++; cuBLAS, cuDNN, CUTLASS, torch if ever allowed),
 * plus the time of its memory copies and memsets. The worker records it
 * with CUPTI in one extra, untimed call (worker_attrib.c); the report
 * (protocol.c), results.json and summary.md (report.c, report_text.c)
 * carry it. This file holds what needs no GPU: the classification of a
 * kernel name, the tally of activity records, the JSON and the text.
 *
 * Classification is by the kernel's (mangled) name: a kernel whose
 * outermost namespace is a library's (cub::, thrust::, cuda:: for
 * libcu++, cutlass::, at::/c10:: for torch) or whose plain name starts with
 * a library's prefix (cublas, cudnn, nvjet) is a library kernel; anything
 * else is the candidate's own. CUB and Thrust are header-only, so their
 * kernels are compiled into the candidate's module: only the name tells
 * them apart (a candidate that copied CUB's source into its own namespace
 * has it counted as its own). */
#ifndef DKB_HARNESS_ATTRIB_H
#define DKB_HARNESS_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"

struct cJSON;

#define DKB_ATTRIB_TOP 5        /* kernels named in the report */
#define DKB_ATTRIB_NAME 128     /* a kernel's shortened name, with its NUL */

typedef struct dkb_attrib_kernel {
    char name[DKB_ATTRIB_NAME];   /* demangled, template arguments as <...>, no
                                   * parameters ("cub::detail::reduce::DeviceReduceKernel<...>") */
    char library[16];             /* "" for the candidate's own, else "cub", "thrust", ... */
    double ms;                    /* device time of all its launches */
    int launches;
} dkb_attrib_kernel;

typedef struct dkb_attribution {
    bool recorded;                /* false: nothing recorded; note says why ("" when not attempted) */
    char note[256];
    double own_ms, library_ms;    /* kernel time: sums of each launch's duration (overlapping
                                   * kernels on several streams count each) */
    double copy_ms, memset_ms;    /* cudaMemcpy*, cudaMemset* the call made */
    int kernels;                  /* launches */
    int own_kernels, library_kernels;
    int copies, memsets;
    int64_t dropped;              /* records CUPTI lost (buffers full); 0 normally */
    double window_ms;             /* the call's window (its marks; NaN: not marked) */
    double busy_ms;               /* of it, time with some activity on the device (the union
                                   * of the records' intervals); window - busy: the device idle
                                   * (host work, round trips, launch gaps); NaN: not marked */
    double lead_ms;               /* from the window's opening to the first activity (the
                                   * call's host prelude; NaN: not marked or no activity) */
    double wall_s;                /* the whole step in the worker: loading CUPTI, the call,
                                   * the flush and the tally (what attribution costs) */
    char libraries[64];           /* the libraries seen, "cub, thrust" ("" when none) */
    int ntop;
    dkb_attrib_kernel top[DKB_ATTRIB_TOP];   /* by ms, descending; the last is the largest
                                             * own kernel when none of the first is own */
} dkb_attribution;

/* Nothing recorded, no note. */
void dkb__attrib_init(dkb_attribution *a);
/* own_ms / (own_ms + library_ms); NaN when not recorded or no kernel ran. */
double dkb__attrib_own_share(const dkb_attribution *a);

/* The library a kernel belongs to ("cub", "thrust", "libcu++", "cublas",
 * "cudnn", "cutlass", "torch"), or NULL for the candidate's own, from its
 * name as CUPTI gives it (mangled, or plain for extern "C" kernels). */
const char *dkb__attrib_library(const char *name);

/* A demangler with __cxa_demangle's contract (malloc'd result or NULL). */
typedef char *(*dkb_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
/* __cxa_demangle of the C++ runtime, looked up at run time (this program
 * or libstdc++.so.6); NULL when there is none. */
dkb_demangle_fn dkb__attrib_demangler(void);
/* The name shown for a kernel: demangled (when dm is non-NULL and the name
 * is mangled), "void " dropped, template argument lists as "<...>", the
 * parameter list dropped, versioned inline namespaces of CUB/Thrust/libcu++
 * (CUB_300000_SM_900, __4, ...) dropped; truncated to n - 1 bytes. */
void dkb__attrib_short_name(const char *name, dkb_demangle_fn dm, char *out, size_t n);

/* Tallying a call's activity records into an attribution. */
typedef struct dkb_attrib_tally {
    dkb_attribution a;
    dkb_demangle_fn dm;
    int n, cap;
    dkb_attrib_kernel *k;         /* one per shortened name */
    int failed;                   /* out of memory: kernels still counted, names lost */
    int python;                   /* a Python candidate's call: it can launch only Triton's
                                   * kernels (plain names) and torch's, so a mangled name
                                   * no namespace places ("(anonymous namespace)::
                                   * elementwise_kernel_with_index", torch's arange) is torch's */
} dkb_attrib_tally;

/* An empty tally (dm may be NULL: names stay mangled). */
void dkb__attrib_tally_init(dkb_attrib_tally *t, dkb_demangle_fn dm);
void dkb__attrib_tally_kernel(dkb_attrib_tally *t, const char *name, double ms);
void dkb__attrib_tally_copy(dkb_attrib_tally *t, double ms);
void dkb__attrib_tally_memset(dkb_attrib_tally *t, double ms);
/* The attribution (recorded, the top kernels chosen) into *out; frees the
 * tally's memory (the tally may be initialised again). */
void dkb__attrib_tally_finish(dkb_attrib_tally *t, dkb_attribution *out);

/* The device's busy time in the window [lo, hi] (ns): the union of the n
 * intervals start[i]..end[i] clipped to it, into a->busy_ms, with
 * a->window_ms and a->lead_ms (first start - lo; NaN when none lies in the
 * window). Sorts start/end together (n pairs). */
void dkb__attrib_busy(uint64_t (*iv)[2], int n, uint64_t lo, uint64_t hi, dkb_attribution *a);

/* ---- JSON (the worker's report and results.json) ----
 * obj[key] = {"own_ms", "library_ms", "copy_ms", "memset_ms", "kernels",
 *             "own_kernels", "library_kernels", "copies", "memsets",
 *             "own_share" (null when no kernel ran), "dropped",
 *             "window_ms", "busy_ms", "lead_ms" (null: not marked), "wall_s",
 *             "libraries": ["cub", ...],
 *             "top": [{"name", "library" (null: own), "ms", "launches"}, ...]}
 * or null when not recorded; obj[key + "_note"] = the note, or null when
 * there is none. 0, or DKB_ENOMEM. */
int dkb__attrib_add_json(struct cJSON *obj, const char *key, const dkb_attribution *a);
/* The same back (absent or null: not recorded; numbers that are missing
 * read as 0). Never fails: a malformed member reads as not recorded. */
void dkb__attrib_from_json(const struct cJSON *obj, const char *key, dkb_attribution *a);

/* One line: "own 0.812 ms, library 0.120 ms (cub), copies 0.010 ms,
 * memsets 0.000 ms; 5 kernels; own share 87.1%", or the note; "" when
 * neither. */
void dkb__attrib_line(const dkb_attribution *a, char *buf, size_t n);
/* The top kernels: "DeviceReduceKernel<...> [cub] 0.120 ms x2, q06_scan
 * 0.812 ms", at most `max` of them. */
void dkb__attrib_top_line(const dkb_attribution *a, int max, char *buf, size_t n);

#endif
