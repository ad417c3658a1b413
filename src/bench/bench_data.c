/* bench_data.c: what `dkb bench` needs before it runs: the store
 * (generated as `dkb gen` does when it is not there yet) and the number of
 * expert files (bench.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "common/fsutil.h"     // defines: dkb__path_join, dkb__path_kind
#include "common/timing.h"     // defines: dkb__now_s
#include "driver/gen_driver.h" // defines: dkb__gen_run

int dkb__bench_ensure_store(const char *dir, double sf, int threads, dkb_progress progress, int *generated,
                            double *seconds, dkb_error *err) {
    *generated = 0;
    *seconds = 0;
    char *manifest = dkb__path_join(dir, "manifest.json");
    if (!manifest) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int have = access(manifest, F_OK) == 0;
    free(manifest);
    if (have) return 0;
    int kind = dkb__path_kind(dir);
    if (kind == DKB__PATH_DIR || kind == DKB__PATH_OTHER)
        return dkb_fail(err, DKB_EEXIST, "%s: exists but holds no store (no manifest.json); remove it or pass another --data DIR",
                        dir);
    dkb_gen_opts o = {.sf = sf, .threads = threads > 0 ? threads : 1, .tables = (1u << DKB_TABLE_COUNT) - 1,
                      .part = 1, .parts = 1, .partitions = 1, .format = DKB_OUT_STORE, .out = dir,
                      .progress = progress};
    dkb_gen_summary sum;
    double t0 = dkb__now_s();
    int rc = dkb__gen_run(&o, &sum, err);
    if (rc) return rc;
    *generated = 1;
    *seconds = dkb__now_s() - t0;
    return 0;
}

int dkb__bench_count_experts(const char *dir, const char *ext) {
    dkb_eval_results scratch;
    memset(&scratch, 0, sizeof scratch);
    uint32_t found[2] = {0, 0};
    dkb_error err = {0};
    int n = 0;
    if (!dkb__eval_scan_files(dir, ext, found, &scratch, &err))
        for (int q = 1; q <= DKB_NQUERIES; q++) n += (found[DKB_MODE_FULL] >> q) & 1u;
    dkb__eval_results_free(&scratch);
    return n;
}
