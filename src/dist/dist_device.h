/* dist_device.h: the GPU of a rank (internal; docs/distributed.md). */
#ifndef DKB_DIST_DEVICE_H
#define DKB_DIST_DEVICE_H

#include "dist/comm.h"  // defines: dkb__comm

/* Make CUDA device (local rank mod the node's GPU count) current on the
 * calling thread, before its CUDA backend context is created (the context
 * takes the current device). OUT *device (may be NULL). DKB_ENOENT when
 * there is no GPU or the build has no CUDA; CUDA's error as DKB_EIO. */
int dkb__dist_use_device(const dkb__comm *c, int *device, dkb_error *err);

#endif
