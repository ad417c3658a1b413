/* bw.cu: device memory bandwidth probe for the floor of `dkb run --bandwidth`.
 *
 * Measures, on device 0 (or $CUDA_VISIBLE_DEVICES' first):
 *   copy  cudaMemcpyAsync device-to-device of an N-byte buffer; GB/s counts
 *         the bytes moved through memory, read + written: 2 N / t;
 *   read  a read-only kernel (16-byte vector loads, grid-stride, 4 loads in
 *         flight per thread, a sum the compiler cannot drop): N / t.
 * Each: 3 warm-ups, then 20 timed repetitions (CUDA events around each),
 * median (min and max printed too). N defaults to 2 GiB (4 GiB with
 * --gib 4); buffers far exceed L2, so every repetition reads DRAM.
 *
 * Build and run (bench/gpu_bench.sh does this):
 *   nvcc -O3 -arch=sm_90 -o bw bench/gpu/bw.cu && ./bw [--gib G] [--reps R]
 * Output: two human lines, then one JSON line
 *   {"device": "...", "bytes": N, "reps": R, "copy_gbps": X, "read_gbps": Y, ...}
 * (GB = 10^9 bytes). Exit 1 with one line on any CUDA error. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                         \
    do {                                                                                                    \
        cudaError_t e_ = (call);                                                                            \
        if (e_ != cudaSuccess) {                                                                            \
            fprintf(stderr, "bw: %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_),     \
                    cudaGetErrorString(e_));                                                                \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

#define WARMUP 3
#define MAX_REPS 1000

/* Sum every 16-byte word of src (n4 of them); the sum goes to *out only when
 * never_true is set (a runtime 0), so the loads cannot be removed. */
__global__ void read_kernel(const int4 *__restrict__ src, size_t n4, int never_true, unsigned long long *out) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        int4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        acc += (unsigned)(a.x ^ a.y ^ a.z ^ a.w) + (unsigned)(b.x ^ b.y ^ b.z ^ b.w) + (unsigned)(c.x ^ c.y ^ c.z ^ c.w) +
               (unsigned)(d.x ^ d.y ^ d.z ^ d.w);
    }
    for (; i < n4; i += stride) {
        int4 a = src[i];
        acc += (unsigned)(a.x ^ a.y ^ a.z ^ a.w);
    }
    if (never_true) atomicAdd(out, (unsigned long long)acc);
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    float median, min, max; /* ms */
} stats;

static stats summarize(float *ms, int n) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    stats s;
    s.min = ms[0];
    s.max = ms[n - 1];
    s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    return s;
}

int main(int argc, char **argv) {
    double gib = 2;
    int reps = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gib") && i + 1 < argc) gib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bw [--gib G (0.25..64, default 2)] [--reps R (1..%d, default 20)]\n", MAX_REPS);
            return 2;
        }
    }
    if (!(gib >= 0.25 && gib <= 64) || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bw: --gib must lie in 0.25..64 and --reps in 1..%d\n", MAX_REPS);
        return 2;
    }
    size_t bytes = (size_t)(gib * (double)(1ull << 30)) & ~(size_t)4095;

    int dev = 0;
    cudaDeviceProp prop;
    CHECK(cudaSetDevice(dev));
    CHECK(cudaGetDeviceProperties(&prop, dev));
    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (2 * bytes + ((size_t)256 << 20) > free_b) {
        fprintf(stderr, "bw: two %.2f GiB buffers do not fit in %.2f GiB free on %s; try a smaller --gib\n",
                (double)bytes / (1ull << 30), (double)free_b / (1ull << 30), prop.name);
        return 1;
    }

    char *src = NULL, *dst = NULL;
    unsigned long long *sink = NULL;
    CHECK(cudaMalloc((void **)&src, bytes));
    CHECK(cudaMalloc((void **)&dst, bytes));
    CHECK(cudaMalloc((void **)&sink, sizeof *sink));
    CHECK(cudaMemset(src, 0x5a, bytes));
    CHECK(cudaMemset(dst, 0, bytes));
    CHECK(cudaMemset(sink, 0, sizeof *sink));

    cudaStream_t stream;
    cudaEvent_t t0, t1;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    float *ms = (float *)malloc((size_t)reps * sizeof *ms);
    if (!ms) {
        fprintf(stderr, "bw: out of host memory\n");
        return 1;
    }

    /* copy */
    for (int k = 0; k < WARMUP + reps; k++) {
        CHECK(cudaEventRecord(t0, stream));
        CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
        CHECK(cudaEventRecord(t1, stream));
        CHECK(cudaEventSynchronize(t1));
        if (k >= WARMUP) CHECK(cudaEventElapsedTime(&ms[k - WARMUP], t0, t1));
    }
    stats copy = summarize(ms, reps);

    /* read-only kernel */
    int threads = 512, blocks = prop.multiProcessorCount * 4;
    size_t n4 = bytes / sizeof(int4);
    for (int k = 0; k < WARMUP + reps; k++) {
        CHECK(cudaEventRecord(t0, stream));
        read_kernel<<<blocks, threads, 0, stream>>>((const int4 *)src, n4, 0, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(t1, stream));
        CHECK(cudaEventSynchronize(t1));
        if (k >= WARMUP) CHECK(cudaEventElapsedTime(&ms[k - WARMUP], t0, t1));
    }
    stats rd = summarize(ms, reps);

    double copy_gbps = 2.0 * (double)bytes / (copy.median * 1e-3) / 1e9;
    double read_gbps = (double)bytes / (rd.median * 1e-3) / 1e9;
    int clock_khz = 0, bus_bits = 0; /* 0 where the runtime no longer reports them */
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) clock_khz = 0;
    if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) bus_bits = 0;
    (void)cudaGetLastError();
    /* DDR: 2 transfers per clock */
    double peak_gbps = clock_khz > 0 && bus_bits > 0 ? 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9 : 0;
    printf("bw: %s, %.2f GiB buffers, median of %d after %d warm-ups\n", prop.name, (double)bytes / (1ull << 30), reps,
           WARMUP);
    printf("bw: copy (D2D cudaMemcpyAsync, read + write) %.1f GB/s (median %.3f ms, min %.3f, max %.3f); "
           "read-only kernel %.1f GB/s (median %.3f ms, min %.3f, max %.3f)\n",
           copy_gbps, copy.median, copy.min, copy.max, read_gbps, rd.median, rd.min, rd.max);
    printf("{\"device\": \"%s\", \"bytes\": %zu, \"reps\": %d, \"copy_gbps\": %.1f, \"copy_ms\": %.4f, "
           "\"read_gbps\": %.1f, \"read_ms\": %.4f, \"theoretical_gbps\": %.1f}\n",
           prop.name, bytes, reps, copy_gbps, copy.median, read_gbps, rd.median, peak_gbps);

    free(ms);
    CHECK(cudaEventDestroy(t0));
    CHECK(cudaEventDestroy(t1));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    CHECK(cudaFree(sink));
    return 0;
}
