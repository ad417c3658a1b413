/* dist_nccl.c: `dkb run --comm nccl`: the ranks' GPUs told apart, the NCCL
 * communicator opened through the boot communicator and wrapped for host
 * buffers, then checked and timed once (dist_nccl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/timing.h"  // defines: dkb__now_ms, dkb__timing_summary
#include "dist/dist_nccl.h"

#ifdef DKB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

enum { GPU_ID = 256, REPS = 20 };

/* This rank's GPU as "host bus-id" in id[GPU_ID]. */
static int gpu_id(int device, char *id, char *bus, size_t nbus, dkb_error *err) {
#ifndef DKB_HAVE_CUDA
    (void)device, (void)id, (void)bus, (void)nbus;
    return dkb_fail(err, DKB_ENOENT, "this dkb was built without CUDA");
#else
    cudaError_t e = cudaDeviceGetPCIBusId(bus, (int)nbus, device);
    if (e != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "cudaDeviceGetPCIBusId(%d): %s", device, cudaGetErrorString(e));
    char host[128] = "";
    const char *h = getenv("NCCL_HOSTID");
    if (!h || !*h) {
        if (gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "?");
        h = host;
    }
    snprintf(id, GPU_ID, "%s %s", h, bus);
    return 0;
#endif
}

/* No two ranks on one GPU: every rank's id gathered through boot. */
static int distinct_gpus(dkb__comm *boot, const char *id, dkb_error *err) {
    int n = dkb__comm_size(boot);
    char *all = calloc((size_t)n, GPU_ID);
    int64_t *lens = calloc((size_t)n, sizeof *lens);
    int rc = !all || !lens ? dkb_fail(err, DKB_ENOMEM, "out of memory") : 0;
    rc = dkb__comm_agree(boot, rc, err);
    for (int r = 0; !rc && r < n; r++) lens[r] = GPU_ID;
    if (!rc) rc = dkb__comm_allgatherv(boot, id, GPU_ID, all, lens, err);
    for (int i = 0; !rc && i < n; i++) {
        char *a = all + (size_t)i * GPU_ID;
        a[GPU_ID - 1] = 0;
        for (int j = i + 1; !rc && j < n; j++)
            if (!strncmp(a, all + (size_t)j * GPU_ID, GPU_ID)) {
                const char *bus = strrchr(a, ' ');
                rc = dkb_fail(err, DKB_EINVAL,
                              "ranks %d and %d would share GPU %s (host %.*s): NCCL takes one GPU per rank; start at "
                              "most as many ranks on a node as it has GPUs, or use --comm mpi",
                              i, j, bus ? bus + 1 : a, bus ? (int)(bus - a) : 0, a);
            }
    }
    free(all);
    free(lens);
    return rc;
}

/* The median of REPS times (us). */
static double median_us(double *us) { return dkb__timing_summary(us, REPS).median; }

/* An all-reduce and an all-gather whose answers every rank knows, each
 * once untimed, then REPS times timed. A wrong answer on this rank does not
 * stop its loop (the others would be left in the next collective): it is
 * kept in bad and reported after the last one. */
static int self_check(dkb__comm *c, dkb__nccl_info *info, dkb_error *err) {
    int n = dkb__comm_size(c), me = dkb__comm_rank(c);
    double ar[REPS], ag[REPS];
    unsigned char mine[1024];
    int64_t *lens = calloc((size_t)n, sizeof *lens);
    if (!lens) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int64_t len = me % 1024 + 1;
    memset(mine, (me * 7 + 1) & 0xff, (size_t)len);
    int rc = 0, bad = 0;
    int64_t gathered = 0; /* every rank's len, as checked below */
    for (int r = 0; r < n; r++) gathered += r % 1024 + 1;
    dkb_error berr = {0};
    for (int k = 0; k <= REPS && !rc; k++) {
        int64_t v = me + 1;
        double t0 = dkb__now_ms();
        rc = dkb__comm_allreduce(c, &v, 1, DKB__COMM_I64, DKB__COMM_SUM, err);
        double t1 = dkb__now_ms();
        if (!rc && !bad && v != (int64_t)n * (n + 1) / 2)
            bad = dkb_fail(&berr, DKB_EIO, "NCCL self-check: all-reduce gave %lld, not %lld", (long long)v,
                           (long long)n * (n + 1) / 2);
        unsigned char *all = NULL;
        if (!rc) rc = dkb__comm_allgather_bytes(c, mine, len, &all, lens, err);
        double t2 = dkb__now_ms();
        for (int r = 0, at = 0; !rc && !bad && r < n; r++) {
            int64_t want = r % 1024 + 1;
            if (lens[r] != want) {
                bad = dkb_fail(&berr, DKB_EIO, "NCCL self-check: all-gather: rank %d sent %lld bytes, not %lld", r,
                               (long long)lens[r], (long long)want);
                break;
            }
            for (int64_t b = 0; b < want && !bad; b++)
                if (all[at + b] != ((r * 7 + 1) & 0xff))
                    bad = dkb_fail(&berr, DKB_EIO, "NCCL self-check: all-gather: byte %lld of rank %d differs",
                                   (long long)b, r);
            at += (int)want;
        }
        free(all);
        if (k) ar[k - 1] = (t1 - t0) * 1e3, ag[k - 1] = (t2 - t1) * 1e3;
    }
    if (!rc && bad) rc = dkb_fail(err, bad, "%s", berr.msg);
    free(lens);
    if (!rc && info) {
        info->allreduce_us = median_us(ar);
        info->allgather_us = median_us(ag);
        info->allgather_bytes = gathered;
        info->reps = REPS;
    }
    return rc;
}

int dkb__dist_open_nccl(dkb__comm *boot, int device, dkb__comm **out, dkb__nccl_info *info, dkb_error *err) {
    *out = NULL;
    dkb__nccl_info mine;
    memset(&mine, 0, sizeof mine);
    mine.device = device;
    char id[GPU_ID] = "";
    int rc = gpu_id(device, id, mine.bus_id, sizeof mine.bus_id, err);
    if ((rc = dkb__comm_agree(boot, rc, err))) return rc;
    if ((rc = distinct_gpus(boot, id, err))) return rc;
    dkb__comm *dev = NULL, *c = NULL;
    double t0 = dkb__now_ms();
    rc = dkb__comm_open_nccl(boot, device, &dev, err);
    mine.init_ms = dkb__now_ms() - t0;
    if (!rc) rc = dkb__comm_open_staged(dev, &c, err);
    if ((rc = dkb__comm_agree(boot, rc, err))) {
        if (c) dkb__comm_close(c);
        else dkb__comm_close(dev);
        return rc;
    }
    /* every rank has a communicator: the check's collectives fail alike */
    rc = dkb__comm_agree(boot, self_check(c, &mine, err), err);
    if (rc) {
        dkb__comm_close(c);
        return rc;
    }
    if (info) *info = mine;
    *out = c;
    return 0;
}
