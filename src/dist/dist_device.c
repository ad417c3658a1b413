/* dist_device.c: one GPU per rank: rank r of a node uses device
 * local_rank mod the node's GPU count (dist_device.h). */
#include "dist/dist_device.h"

#ifdef DKB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int dkb__dist_use_device(const dkb__comm *c, int *device, dkb_error *err) {
#ifndef DKB_HAVE_CUDA
    (void)c, (void)device;
    return dkb_fail(err, DKB_ENOENT, "this dkb was built without CUDA");
#else
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        (void)cudaGetLastError();
        return dkb_fail(err, DKB_ENOENT, "no GPU for the CUDA backend: %s",
                        e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    int d = c->local_rank % n;
    if ((e = cudaSetDevice(d)) != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "cudaSetDevice(%d) (local rank %d of a node with %d GPUs): %s", d, c->local_rank,
                        n, cudaGetErrorString(e));
    if (device) *device = d;
    return 0;
#endif
}
