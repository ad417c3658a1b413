/* traj.h: the trajectory of a `dkb optimize` run: RUNDIR/trajectory.jsonl,
 * one JSON object per line, appended and flushed as each event happens, so
 * an interrupted run loses at most the line being written and resumes from
 * the rest. Records (loop.c writes an attempt in one place, attempt_record):
 *   {"type":"attempt", "query","mode","target","round","sample",
 *    "prompt_sha256","reply","tokens_in","tokens_out","latency_s","cost_usd",
 *    "attempts","http_status","finish_reason", "class","valid","detail",
 *    and when they apply: "fatal" (true), "code", "file", "verdict_text";
 *    "compile_log","checks","baseline_ms","candidate_ms","floor_ms",
 *    "raw_speedup","sha256" (the harness scored it), "attribution",
 *    "attribution_note" (CUDA: the kernel attribution, harness/attrib.h);
 *    "feedback",
 *    "feedback_error" (not after a model_error)}
 *   {"type":"baseline","query","mode","target","baseline_ms","floor_ms"}
 *   {"type":"done","query","mode","target","rounds"}
 * No API key is ever written (the model client never hands one out). */
#ifndef DKB_OPTIMIZE_TRAJ_H
#define DKB_OPTIMIZE_TRAJ_H

#include <pthread.h>
#include <stdio.h>

#include "dkb/error.h"

struct cJSON;

typedef struct dkb_traj {
    FILE *f;
    char *path;
    pthread_mutex_t lock;
} dkb_traj;

/* Open RUNDIR/trajectory.jsonl for appending (created if absent). A last
 * line cut by a kill is completed with a newline so the next record starts
 * on its own line. */
int dkb__traj_open(dkb_traj *t, const char *rundir, dkb_error *err);
/* Append one record (a line) and flush it to disk. Thread-safe. */
int dkb__traj_append(dkb_traj *t, const struct cJSON *record, dkb_error *err);
void dkb__traj_close(dkb_traj *t);

/* Every complete record of RUNDIR/trajectory.jsonl as a cJSON array in file
 * order (lines that do not parse, e.g. one cut by a kill, are skipped and
 * counted in *skipped when non-NULL). An absent file gives an empty array. */
int dkb__traj_load(const char *rundir, struct cJSON **records, int *skipped, dkb_error *err);

#endif
