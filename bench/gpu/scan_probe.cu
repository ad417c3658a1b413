/* scan_probe.cu: two measurements behind the CUDA experts' design
 * (docs/gpu.md "Expert CUDA kernels"):
 *
 *  pool  the cost of a call's temporaries: cudaMallocAsync + a 1-byte
 *        memset + cudaFreeAsync + stream synchronise, for sizes 16 KiB to
 *        256 MiB, with the default pool's release threshold at 0 (the
 *        driver default: freed memory is unmapped at each synchronise) and
 *        at UINT64_MAX (what the harness worker sets);
 *  scan  a Q6-shaped fused filter-sum over four columns of N rows (int32
 *        date, three int64 decimals: 28 B a row), in three loop shapes,
 *        against a plain 16-byte-vector read of the same bytes: bytes / time;
 *  ipc   (--ipc) the scans again in a child process over the same columns
 *        imported by CUDA IPC (as the harness's worker sees them), and over
 *        the child's own copies of them.
 *
 * Each: 3 warm-ups, R timed repetitions with CUDA events, L2 flushed (a
 * 2 x L2 memset) before each, median. Build and run:
 *   nvcc -O3 -arch=sm_90 -o scan_probe bench/gpu/scan_probe.cu && ./scan_probe [--rows N] [--reps R]
 * Prints one line per measurement. Exit 1 with one line on a CUDA error. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "scan_probe: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

enum { TPB = 256, WARMUP = 3 };

/* shape A: the experts' grid-stride loop, UNROLL rows a thread in flight */
template <int UNROLL>
__global__ void __launch_bounds__(TPB) scan_strided(const int32_t *__restrict__ ship, const int64_t *__restrict__ disc,
                                                    const int64_t *__restrict__ qty, const int64_t *__restrict__ price,
                                                    int64_t n, int32_t slo, uint32_t sw, int64_t dlo, uint64_t dw,
                                                    int64_t qlt, unsigned long long *out) {
    const int64_t stride = (int64_t)gridDim.x * TPB;
    int64_t sum = 0;
    for (int64_t base = (int64_t)blockIdx.x * TPB + threadIdx.x; base < n; base += stride * UNROLL) {
        int32_t s[UNROLL];
        int64_t d[UNROLL], q[UNROLL], p[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int64_t i = base + u * stride;
            const bool in = i < n;
            s[u] = in ? __ldg(ship + i) : slo - 1;
            d[u] = in ? __ldg(disc + i) : 0;
            q[u] = in ? __ldg(qty + i) : 0;
            p[u] = in ? __ldg(price + i) : 0;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const bool keep = ((uint32_t)(s[u] - slo) <= sw) & ((uint64_t)(d[u] - dlo) <= dw) & (q[u] < qlt);
            sum += keep ? p[u] * d[u] : 0;
        }
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)sum);
}

/* shape B: late reads: the date first, the other three columns only for rows
 * whose date qualifies (the sectors of a warp's rows that all fail are not
 * read); four rows a thread as one int4 of dates */
__global__ void __launch_bounds__(TPB) scan_late(const int32_t *__restrict__ ship, const int64_t *__restrict__ disc,
                                                 const int64_t *__restrict__ qty, const int64_t *__restrict__ price,
                                                 int64_t n, int32_t slo, uint32_t sw, int64_t dlo, uint64_t dw,
                                                 int64_t qlt, unsigned long long *out) {
    const int64_t n4 = n / 4;
    int64_t sum = 0;
    for (int64_t v = (int64_t)blockIdx.x * TPB + threadIdx.x; v < n4; v += (int64_t)gridDim.x * TPB) {
        const int4 s4 = __ldg((const int4 *)ship + v);
        const int32_t s[4] = {s4.x, s4.y, s4.z, s4.w};
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int64_t i = 4 * v + u;
            if ((uint32_t)(s[u] - slo) <= sw) {
                const int64_t d = __ldg(disc + i), q = __ldg(qty + i);
                if (((uint64_t)(d - dlo) <= dw) & (q < qlt)) sum += __ldg(price + i) * d;
            }
        }
    }
    for (int64_t i = 4 * n4 + (int64_t)blockIdx.x * TPB + threadIdx.x; i < n; i += (int64_t)gridDim.x * TPB)
        if ((uint32_t)(ship[i] - slo) <= sw && (uint64_t)(disc[i] - dlo) <= dw && qty[i] < qlt) sum += price[i] * disc[i];
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)sum);
}

/* shape C: two consecutive rows a thread, 16-byte loads of the int64 columns */
__global__ void __launch_bounds__(TPB) scan_vec2(const int32_t *__restrict__ ship, const int64_t *__restrict__ disc,
                                                 const int64_t *__restrict__ qty, const int64_t *__restrict__ price,
                                                 int64_t n, int32_t slo, uint32_t sw, int64_t dlo, uint64_t dw,
                                                 int64_t qlt, unsigned long long *out) {
    const int64_t n2 = n / 2;
    int64_t sum = 0;
    for (int64_t v = (int64_t)blockIdx.x * TPB + threadIdx.x; v < n2; v += (int64_t)gridDim.x * TPB) {
        const int2 s = __ldg((const int2 *)ship + v);
        const longlong2 d = __ldg((const longlong2 *)disc + v), q = __ldg((const longlong2 *)qty + v),
                        p = __ldg((const longlong2 *)price + v);
        sum += (((uint32_t)(s.x - slo) <= sw) & ((uint64_t)(d.x - dlo) <= dw) & (q.x < qlt)) ? p.x * d.x : 0;
        sum += (((uint32_t)(s.y - slo) <= sw) & ((uint64_t)(d.y - dlo) <= dw) & (q.y < qlt)) ? p.y * d.y : 0;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && (n & 1)) {
        const int64_t i = n - 1;
        if ((uint32_t)(ship[i] - slo) <= sw && (uint64_t)(disc[i] - dlo) <= dw && qty[i] < qlt) sum += price[i] * disc[i];
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)sum);
}

__global__ void read16(const int4 *__restrict__ src, size_t n4, int never, unsigned long long *out) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        int4 a = __ldg(src + i);
        acc += (unsigned)(a.x ^ a.y ^ a.z ^ a.w);
    }
    if (never) atomicAdd(out, (unsigned long long)acc);
}

__global__ void fill_cols(int32_t *ship, int64_t *disc, int64_t *qty, int64_t *price, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        ship[i] = 8035 + (int32_t)(h % 2526);    /* 1992-01-02 .. 1998-12-01 */
        disc[i] = (int64_t)((h >> 12) % 11);     /* 0.00 .. 0.10 */
        qty[i] = 100 * (1 + (int64_t)((h >> 20) % 50));
        price[i] = 90000 + (int64_t)((h >> 28) % 10000000);
    }
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *ms, int n) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

static cudaStream_t stream;
static cudaEvent_t t0, t1;
static void *flush;
static size_t flush_size;

/* launch() timed R times after warm-ups, L2 flushed before each */
template <typename F>
static float timed(F launch, int reps, float *ms) {
    for (int k = 0; k < WARMUP + reps; k++) {
        CHECK(cudaMemsetAsync(flush, k & 0x7f, flush_size, stream));
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaEventRecord(t0, stream));
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(t1, stream));
        CHECK(cudaEventSynchronize(t1));
        if (k >= WARMUP) CHECK(cudaEventElapsedTime(&ms[k - WARMUP], t0, t1));
    }
    return median(ms, reps);
}

/* the scan variants over the given columns, one line each */
static void scan_all(const char *where, int32_t *ship, int64_t *disc, int64_t *qty, int64_t *price, int64_t n, int sms,
                     int reps, float *ms, unsigned long long *out) {
    const double bytes = 28.0 * (double)n;
    const int32_t slo = 8766; /* 1994-01-01 */
    const uint32_t sw = 364;
    const int64_t dlo = 5, qlt = 2400;
    const uint64_t dw = 2;
    unsigned long long ref = 0, got = 0;
    struct {
        const char *name;
        int grid_per_sm;
        int shape;
    } v[] = {{"strided u4 x8", 8, 0}, {"strided u4 x4", 4, 0}, {"strided u8 x4", 4, 1}, {"strided u2 x16", 16, 2},
             {"late x8", 8, 3},       {"late x32", 32, 3},     {"vec2 x8", 8, 4},        {"vec2 x32", 32, 4}};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        const unsigned grid = (unsigned)(sms * v[k].grid_per_sm);
        float t = timed(
            [&] {
                cudaMemsetAsync(out, 0, sizeof *out, stream);
                switch (v[k].shape) {
                case 0: scan_strided<4><<<grid, TPB, 0, stream>>>(ship, disc, qty, price, n, slo, sw, dlo, dw, qlt, out); break;
                case 1: scan_strided<8><<<grid, TPB, 0, stream>>>(ship, disc, qty, price, n, slo, sw, dlo, dw, qlt, out); break;
                case 2: scan_strided<2><<<grid, TPB, 0, stream>>>(ship, disc, qty, price, n, slo, sw, dlo, dw, qlt, out); break;
                case 3: scan_late<<<grid, TPB, 0, stream>>>(ship, disc, qty, price, n, slo, sw, dlo, dw, qlt, out); break;
                default: scan_vec2<<<grid, TPB, 0, stream>>>(ship, disc, qty, price, n, slo, sw, dlo, dw, qlt, out); break;
                }
            },
            reps, ms);
        CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        if (k == 0) ref = got;
        printf("scan %-6s %-16s %8.3f ms %7.1f GB/s%s\n", where, v[k].name, t, bytes / t / 1e6, got == ref ? "" : "  WRONG SUM");
    }
}

static void setup_timing(int *sms) {
    int dev = 0, l2 = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    flush_size = 2 * (size_t)l2;
    CHECK(cudaMalloc(&flush, flush_size));
}

/* the child of --ipc: open the four handles from fd, scan them, then its own
 * copies */
static int ipc_child(int fd, int64_t n, int reps) {
    cudaIpcMemHandle_t h[4];
    if (read(fd, h, sizeof h) != (ssize_t)sizeof h) {
        fprintf(stderr, "scan_probe: child: no handles\n");
        return 1;
    }
    int sms = 0;
    setup_timing(&sms);
    float *ms = (float *)malloc(sizeof(float) * (size_t)reps);
    void *col[4];
    const size_t size[4] = {4 * (size_t)n, 8 * (size_t)n, 8 * (size_t)n, 8 * (size_t)n};
    for (int i = 0; i < 4; i++) CHECK(cudaIpcOpenMemHandle(&col[i], h[i], cudaIpcMemLazyEnablePeerAccess));
    unsigned long long *out;
    CHECK(cudaMalloc((void **)&out, sizeof *out));
    scan_all("ipc", (int32_t *)col[0], (int64_t *)col[1], (int64_t *)col[2], (int64_t *)col[3], n, sms, reps, ms, out);
    void *own[4];
    for (int i = 0; i < 4; i++) {
        CHECK(cudaMalloc(&own[i], size[i]));
        CHECK(cudaMemcpy(own[i], col[i], size[i], cudaMemcpyDeviceToDevice));
    }
    scan_all("copy", (int32_t *)own[0], (int64_t *)own[1], (int64_t *)own[2], (int64_t *)own[3], n, sms, reps, ms, out);
    return 0;
}

int main(int argc, char **argv) {
    int64_t n = 59986052; /* lineitem rows at SF 10 */
    int reps = 20, ipc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ipc")) ipc = 1;
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: scan_probe [--rows N] [--reps R] [--ipc]\n");
            return 2;
        }
    }
    if (n < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "scan_probe: --rows must be >= 1 and --reps in 1..1000\n");
        return 2;
    }
    /* --ipc: fork before CUDA starts; the child waits for the handles */
    int ipc_fd = -1;
    pid_t child = 0;
    if (ipc) {
        int fds[2];
        if (pipe(fds)) return 1;
        child = fork();
        if (child < 0) return 1;
        if (child == 0) {
            close(fds[1]);
            return ipc_child(fds[0], n, reps);
        }
        close(fds[0]);
        ipc_fd = fds[1];
    }
    float *ms = (float *)malloc(sizeof(float) * (size_t)reps);
    int dev = 0, sms = 0;
    setup_timing(&sms);
    CHECK(cudaGetDevice(&dev));

    /* pool */
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    for (int keep = 0; keep < 2; keep++) {
        uint64_t thr = keep ? UINT64_MAX : 0;
        CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
        CHECK(cudaMemPoolTrimTo(pool, 0));
        for (size_t sz = (size_t)16 << 10; sz <= ((size_t)256 << 20); sz *= 16) {
            float t = timed(
                [&] {
                    void *p = NULL;
                    CHECK(cudaMallocAsync(&p, sz, stream));
                    CHECK(cudaMemsetAsync(p, 1, 1, stream));
                    CHECK(cudaFreeAsync(p, stream));
                    CHECK(cudaStreamSynchronize(stream));
                },
                reps, ms);
            printf("pool threshold=%s alloc+free+sync %9zu KiB: %8.1f us\n", keep ? "max" : "0  ", sz >> 10, 1000 * t);
        }
    }

    int32_t *ship;
    int64_t *disc, *qty, *price;
    unsigned long long *out;
    CHECK(cudaMalloc((void **)&ship, sizeof(int32_t) * (size_t)n));
    CHECK(cudaMalloc((void **)&disc, sizeof(int64_t) * (size_t)n));
    CHECK(cudaMalloc((void **)&qty, sizeof(int64_t) * (size_t)n));
    CHECK(cudaMalloc((void **)&price, sizeof(int64_t) * (size_t)n));
    CHECK(cudaMalloc((void **)&out, sizeof *out));
    fill_cols<<<sms * 8, 256, 0, stream>>>(ship, disc, qty, price, n);
    CHECK(cudaStreamSynchronize(stream));
    scan_all("local", ship, disc, qty, price, n, sms, reps, ms, out);
    const double bytes = 28.0 * (double)n;
    if (ipc_fd >= 0) {
        cudaIpcMemHandle_t h[4];
        CHECK(cudaIpcGetMemHandle(&h[0], ship));
        CHECK(cudaIpcGetMemHandle(&h[1], disc));
        CHECK(cudaIpcGetMemHandle(&h[2], qty));
        CHECK(cudaIpcGetMemHandle(&h[3], price));
        fflush(stdout);
        if (write(ipc_fd, h, sizeof h) != (ssize_t)sizeof h) {
            fprintf(stderr, "scan_probe: cannot pass the handles\n");
            return 1;
        }
        int st = 0;
        waitpid(child, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) return 1;
    }
    const size_t n4 = (size_t)(bytes / 16);
    int4 *blob = NULL;
    CHECK(cudaMalloc((void **)&blob, n4 * 16));
    CHECK(cudaMemset(blob, 0x5a, n4 * 16));
    for (int g = 4; g <= 32; g *= 2) {
        float t = timed([&] { read16<<<sms * g, TPB, 0, stream>>>(blob, n4, 0, out); }, reps, ms);
        printf("read16 x%-2d %8.3f ms %7.1f GB/s (same bytes, one buffer)\n", g, t, bytes / t / 1e6);
    }
    return 0;
}
