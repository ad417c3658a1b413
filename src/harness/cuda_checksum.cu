/* cuda_checksum.cu: the harness's device kernels: a 64-bit hash of device
 * bytes, with which the evaluating process and the worker see whether a
 * candidate wrote to an input column (harness_cuda.h); and the scrub of
 * every SM's shared memory before a candidate call (nothing clears shared
 * memory between kernels, so a kernel could read what an earlier call's
 * kernel left there). The hash is a sum
 * of mixed (value, position) words, so it does not depend on the order the
 * threads add them and changes when any byte changes (but for collisions
 * of a 64-bit hash). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "dkb/error.h"

/* Declared in harness_cuda.h (not included: its C headers are not C++). */
extern "C" int dkb__cuda_checksum(const void *dev, size_t bytes, void *stream, uint64_t *out, dkb_error *err);
extern "C" int dkb__cuda_scrub_shared(void *stream, dkb_error *err);

/* splitmix64's finaliser */
__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Words of 8 bytes (p 8-byte aligned), then the tail bytes one by one. */
__global__ void checksum_kernel(const unsigned char *p, unsigned long long words, unsigned long long tail,
                                unsigned long long *out) {
    unsigned long long acc = 0;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long *w = (const unsigned long long *)p;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
        acc += mix64(w[i] ^ mix64(i + 0x9e3779b97f4a7c15ull));
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < tail; i += stride) {
        unsigned long long at = words * 8 + i;
        acc += mix64(((unsigned long long)p[at] << 56) ^ mix64(at + 0x632be59bd9b4e019ull));
    }
    if (acc) atomicAdd(out, acc);
}

static int cuda_fail(dkb_error *err, const char *what, cudaError_t e) {
    return dkb_fail(err, DKB_EIO, "checksum: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" int dkb__cuda_checksum(const void *dev, size_t bytes, void *stream, uint64_t *out, dkb_error *err) {
    *out = 0;
    if (!bytes) return 0;
    if (!dev) return dkb_fail(err, DKB_EINVAL, "checksum: no device memory");
    cudaStream_t s = (cudaStream_t)stream;
    unsigned long long *acc = NULL, host = 0;
    /* from the stream-ordered pool, which the worker keeps: no device-wide
     * synchronisation as cudaFree would make */
    cudaError_t e = cudaMallocAsync((void **)&acc, sizeof *acc, s);
    if (e != cudaSuccess) return cuda_fail(err, "cudaMallocAsync", e);
    bool aligned = ((uintptr_t)dev & 7) == 0;
    unsigned long long words = aligned ? bytes / 8 : 0, tail = aligned ? bytes % 8 : bytes;
    unsigned long long work = words > tail ? words : tail;
    unsigned blocks = (unsigned)((work + 255) / 256 < 4096 ? (work + 255) / 256 : 4096);
    e = cudaMemsetAsync(acc, 0, sizeof *acc, s);
    if (e == cudaSuccess) {
        checksum_kernel<<<blocks ? blocks : 1, 256, 0, s>>>((const unsigned char *)dev, words, tail, acc);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&host, acc, sizeof host, cudaMemcpyDeviceToHost, s);
    /* zeroed before it goes back to the pool a candidate allocates from */
    if (e == cudaSuccess) e = cudaMemsetAsync(acc, 0, sizeof *acc, s);
    cudaError_t f = cudaFreeAsync(acc, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return cuda_fail(err, "kernel", e);
    if (f != cudaSuccess) return cuda_fail(err, "cudaFreeAsync", f);
    *out = host ^ (uint64_t)bytes;
    return 0;
}

/* ---- shared memory scrub ---- */

/* Zero the block's whole dynamic shared memory (words 4-byte words). */
__global__ void smem_scrub_kernel(unsigned words) {
    extern __shared__ unsigned int smem_words[];
    volatile unsigned int *w = smem_words;
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = 0;
}

static int scrub_fail(dkb_error *err, cudaError_t e) {
    return dkb_fail(err, DKB_EIO, "shared memory scrub: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" int dkb__cuda_scrub_shared(void *stream, dkb_error *err) {
    static int bytes = -1;
    static unsigned blocks = 0;
    cudaError_t e;
    if (bytes < 0) {
        int dev = 0, optin = 0, sms = 0;
        if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
            (e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
            (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
            (e = cudaFuncSetAttribute(smem_scrub_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin)) !=
                cudaSuccess)
            return scrub_fail(err, e);
        bytes = optin;
        /* one such block fills an SM's shared memory; 4 waves of them, so
         * every SM runs at least one */
        blocks = 4u * (unsigned)(sms > 0 ? sms : 1);
    }
    smem_scrub_kernel<<<blocks, 1024, (size_t)bytes, (cudaStream_t)stream>>>((unsigned)bytes / 4u);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return scrub_fail(err, e);
    return 0;
}
