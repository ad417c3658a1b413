/* cuda_select.cuh: what the CUDA selection (cuda_select.cu) shares with the
 * CUDA joins (cuda_join.cu): an int64 exclusive prefix sum on the device and
 * the positions of a byte mask's nonzero bytes, both into scratch memory the
 * caller took (between its CU_SCRATCH_BEGIN and CU_SCRATCH_END), plus the
 * warp-level constants their kernels use. */
#ifndef DKB_TENSOR_CUDA_SELECT_CUH
#define DKB_TENSOR_CUDA_SELECT_CUH

#include "tensor/cuda_internal.cuh"

/* Every lane of a warp (for __ballot_sync / __shfl_sync). */
#define DKB_CU_FULL_MASK 0xffffffffu

/* out[i] = in[0] + ... + in[i - 1] for i in [0, n) (device arrays, int64,
 * distinct; n may exceed 2^31). Takes CUB temp storage from scratch.
 * False (error recorded, naming op) on failure. */
bool dkb__cu_exclusive_sum(dkb_tp *tp, const char *op, const int64_t *in, int64_t *out, int64_t n);

/* The positions i of nonzero m[i], i in [0, n), in ascending order into
 * out (device, room for n entries); their number in *total (host: waits for
 * the stream). Scratch for the per-segment counts. False (error recorded)
 * on failure. */
bool dkb__cu_nonzero_into(dkb_tp *tp, const char *op, const uint8_t *m, int64_t n, int64_t *out, int64_t *total);

#endif
