/* cand_cuda.cuh: the optional CUDA candidate toolkit, header-only, shipped
 * beside candidate.h and cand_util.h (which it includes): the device-side
 * plumbing TPC-H CUDA candidates keep writing again. A candidate needs
 * nothing but candidate.h; one that includes "dkb/cand_cuda.cuh" gets:
 *
 *   errors   DKB_CUDA_TRY(what, call): a failed CUDA call reported on stderr
 *            with file and line, rc = DKB_CAND_ECUDA, goto done;
 *   memory   dkb_dev_carve: a call's device buffers carved out of one
 *            allocation (freed once), fills done by one memset per value;
 *            dkb_dev_release: that allocation freed and the stream
 *            synchronized, the end of a call;
 *   sizing   dkb_sm_count, dkb_resident_grid (one resident wave of a kernel);
 *   copies   dkb_copy_col_to_host (a small device column into host memory);
 *   pieces   dkb_sum_partials (per-block int64 partials to __int128 sums,
 *            deterministic), dkb_warp_exclusive (a warp's exclusive prefix),
 *            dkb_copy_text_to_shared (global text to aligned shared memory);
 *   chunks   dkb_chunk_bounds / dkb_launch_chunk_bounds: where each chunk of
 *            orders starts in lineitem (lineitem grouped by orderkey in
 *            orders' order); dkb_chunk_tile_runs: the run starts that give
 *            a line item's order in its chunk, inside a chunk join;
 *   queues   dkb_queue_push: a warp appends its lanes' rows to a shared queue;
 *   top-k    dkb_list_offer, dkb_block_merge, dkb_warp_merge, dkb_warp_sort:
 *            a warp's sorted list of 32 in registers (bitonic);
 *   text     dkb_text_lengths, dkb_text_copy, dkb_byte_gather (kernels) and
 *            dkb_fetch_text (host): rows of a text or dictionary column into
 *            host memory.
 *   host     DKB_FAIL / DKB_FAIL_IF / DKB_TRY (rc and goto done),
 *            dkb_copy_back (a table of copies, one synchronize),
 *            dkb_grid_cap / dkb_scan_grid (grid sizes), dkb_partials_to_host
 *            (per-block int64 partials summed on the host in __int128);
 *   joins    dkb_chunk_at / dkb_chunk_items: a chunk join's rows and its
 *            line items with their order in the chunk (device lambdas);
 *   scans    dkb_queued_scan: a warp streams a 4-byte column, queues the
 *            rows that pass a test and works them off 32 at a time;
 *            dkb_block_sums: a block's int64 sums into per-block partials.
 * (Result writers, dates and decimals are cand_util.h's.)
 *
 * Block and warp reductions, scans and sorts: use CUB (cub/cub.cuh), which
 * candidates may include. Everything here is static inline or a template:
 * a candidate still links nothing of ours. */
#ifndef DKB_CAND_CUDA_CUH
#define DKB_CAND_CUDA_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/cand_util.h" // defines: dkb_res_col, dkb_put_str, dkb_add_months, ...

/* All 32 lanes of a warp (the mask of the *_sync intrinsics). */
#define DKB_FULL_MASK 0xffffffffu

/* ---- errors ---- */

/* The file name of a path (what follows its last '/'). */
static inline const char *dkb_cuda_file_base(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Run call (a cudaError_t expression); on failure print
 * "<file>:<line>: <what>: <CUDA's message>" to stderr, set rc =
 * DKB_CAND_ECUDA and goto done. The caller declares int rc and a done:
 * label that releases what it holds. */
#define DKB_CUDA_TRY(what, call)                                                                                     \
    do {                                                                                                             \
        cudaError_t dkb_e_ = (call);                                                                                 \
        if (dkb_e_ != cudaSuccess) {                                                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", dkb_cuda_file_base(__FILE__), __LINE__, (what),                      \
                    cudaGetErrorString(dkb_e_));                                                                     \
            rc = DKB_CAND_ECUDA;                                                                                     \
            goto done;                                                                                               \
        }                                                                                                            \
    } while (0)

/* ---- device memory: one allocation per call, carved up ---- */

/* No fill for a dkb_dev_part. */
#define DKB_NO_FILL (-1)

/* One piece of a call's device memory: *ptr := bytes of it, 256-byte
 * aligned; fill: a byte value every byte is set to before the kernels run,
 * or DKB_NO_FILL. */
typedef struct dkb_dev_part {
    void **ptr;
    size_t bytes;
    int fill;
} dkb_dev_part;

/* Carve n parts out of one cudaMallocAsync on stream (*block: free it once
 * with cudaFreeAsync). Parts with the same fill lie side by side, so each
 * fill value costs one cudaMemsetAsync. Returns cudaSuccess or the failing
 * call's error (*block then NULL, nothing held). */
static inline cudaError_t dkb_dev_carve(const dkb_dev_part *parts, int n, void **block, cudaStream_t stream) {
    enum { ALIGN = 256 };
    size_t total = 0;
    *block = NULL;
    /* pass 0 lays out, pass 1 points; fills in order of first appearance, then unfilled parts */
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (int i = 0; i <= n; i++) {
            const int fill = i < n ? parts[i].fill : DKB_NO_FILL;
            if (i < n && fill == DKB_NO_FILL) continue;
            int first = 1;
            for (int j = 0; j < i && first; j++) first = parts[j].fill != fill;
            if (i < n && !first) continue;
            const size_t start = at;
            for (int j = 0; j < n; j++) {
                if (parts[j].fill != fill) continue;
                if (pass) *parts[j].ptr = (char *)*block + at;
                at += (parts[j].bytes + ALIGN - 1) / ALIGN * ALIGN;
            }
            if (pass && fill != DKB_NO_FILL && at > start) {
                const cudaError_t e = cudaMemsetAsync((char *)*block + start, fill, at - start, stream);
                if (e != cudaSuccess) {
                    cudaFreeAsync(*block, stream);
                    *block = NULL;
                    return e;
                }
            }
        }
        if (!pass) {
            total = at ? at : (size_t)ALIGN;
            const cudaError_t e = cudaMallocAsync(block, total, stream);
            if (e != cudaSuccess) {
                *block = NULL;
                return e;
            }
        }
    }
    return cudaSuccess;
}

/* The end of a call (its done: label): block (from dkb_dev_carve; NULL:
 * none) freed on stream, then stream synchronized, so that none of the
 * call's work is left running, after a failure too. Errors are ignored:
 * nothing is left to report them to. */
static inline void dkb_dev_release(void *block, cudaStream_t stream) {
    if (block) cudaFreeAsync(block, stream);
    cudaStreamSynchronize(stream);
}

/* ---- sizing ---- */

/* *sms := the number of SMs of the current device. Returns cudaSuccess or
 * the first failing call's error (*sms then unset). */
static inline cudaError_t dkb_sm_count(int *sms) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
}

/* One resident wave of kernel at tpb threads and smem bytes of dynamic
 * shared memory per block: *sms := the SM count, *grid := sms times the
 * blocks per SM the occupancy calculator allows (at least 1 per SM). The
 * caller clamps grid to the useful work. Returns cudaSuccess or the first
 * failing call's error. */
template <typename Kernel>
static inline cudaError_t dkb_resident_grid(Kernel kernel, int tpb, size_t smem, int *sms, int64_t *grid) {
    int per_sm = 0;
    cudaError_t e = dkb_sm_count(sms);
    if (e != cudaSuccess) return e;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, tpb, smem);
    if (e != cudaSuccess) return e;
    *grid = (int64_t)*sms * (per_sm > 0 ? per_sm : 1);
    return cudaSuccess;
}

/* ---- host copies ---- */

/* The v->n elements of elem bytes of device column v into host memory h
 * (caller-allocated), synchronously on stream (nothing for an empty
 * column). Returns cudaSuccess or the failing call's error. */
static inline cudaError_t dkb_copy_col_to_host(void *h, const dkb_cand_vec *v, size_t elem, cudaStream_t stream) {
    if (v->n <= 0) return cudaSuccess;
    cudaError_t e = cudaMemcpyAsync(h, v->data, elem * (size_t)v->n, cudaMemcpyDeviceToHost, stream);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
}

/* ---- block and warp pieces ---- */

/* out[k] := the sum over blocks b < nblocks of partial[b * K + k] (int64
 * partials of a grid, K per block), in __int128, in a fixed order
 * (deterministic). Launch K blocks of RED_TPB threads (a power of two). */
template <int RED_TPB>
__global__ void __launch_bounds__(RED_TPB)
    dkb_sum_partials(const int64_t *__restrict__ partial, int64_t nblocks, int K, __int128 *__restrict__ out) {
    __shared__ __int128 sh[RED_TPB];
    const int k = blockIdx.x;
    __int128 s = 0;
    for (int64_t b = threadIdx.x; b < nblocks; b += RED_TPB) s += partial[b * K + k];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = RED_TPB / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[k] = sh[0];
}

/* The exclusive prefix of cnt over the warp's lanes (all 32 call it, lane
 * = threadIdx.x & 31); *total := the warp's sum. */
__device__ __forceinline__ int dkb_warp_exclusive(int cnt, int lane, int *total) {
    int at = cnt;
    for (int off = 1; off < 32; off <<= 1) {
        const int y = __shfl_up_sync(DKB_FULL_MASK, at, off);
        if (lane >= off) at += y;
    }
    *total = __shfl_sync(DKB_FULL_MASK, at, 31);
    return at - cnt;
}

/* Copies src[0..n) (global) into buf[mis .. mis + n) (shared), mis = src's
 * address mod 16, so that 16-byte aligned global vectors land on 16-byte
 * aligned shared addresses: byte loads for the unaligned head and tail,
 * 16-byte loads (four in flight per thread) between. All TPB threads of the
 * block call it (blockDim.x == TPB); buf is 16-byte aligned with room for
 * mis + n <= n + 15 bytes. Returns mis; the caller syncs before reading. */
template <int TPB>
__device__ static int dkb_copy_text_to_shared(char *buf, const char *__restrict__ src, int64_t n) {
    const int mis = (int)((uintptr_t)src & 15);
    const int64_t head = n < (16 - mis) % 16 ? n : (16 - mis) % 16; /* bytes before the first aligned vector */
    const int64_t nvec = (n - head) / 16, tail = head + 16 * nvec;   /* [tail, n): bytes after the last vector */
    for (int64_t j = threadIdx.x; j < head; j += TPB) buf[mis + j] = __ldg(src + j);
    for (int64_t j = tail + threadIdx.x; j < n; j += TPB) buf[mis + j] = __ldg(src + j);
    const uint4 *src4 = reinterpret_cast<const uint4 *>(src + head);
    uint4 *dst4 = reinterpret_cast<uint4 *>(buf + mis + head); /* mis + head is 0 or 16 */
    for (int64_t v0 = threadIdx.x; v0 < nvec; v0 += 4 * TPB) {
        uint4 r[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (v0 + u * TPB < nvec) r[u] = __ldg(src4 + v0 + u * TPB);
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (v0 + u * TPB < nvec) dst4[v0 + u * TPB] = r[u];
    }
    return mis;
}

/* ---- orders-lineitem chunks ---- */

enum { DKB_BOUNDS_WARPS = 8, DKB_BOUNDS_PROBES = 64, DKB_BOUNDS_SCAN = 256 };

/* okey: o_orderkey (no rows), cut into chunks of CHUNK rows (nchunks =
 * ceil(no / CHUNK)); lkey: l_orderkey (nl rows, ascending: lineitem is
 * grouped by orderkey in orders' order). Writes bound[0..nchunks]:
 * bound[c] = the first lineitem row whose l_orderkey >= o_orderkey[c *
 * CHUNK], i.e. the first row of orders chunk c; bound[nchunks] = nl. The
 * same result as a lower-bound binary search. One warp per chunk (launch
 * with dkb_launch_chunk_bounds): each round the 32 lanes probe 64 evenly
 * spaced rows of the range and a ballot keeps the rows between the last
 * probe below the key and the first probe at or above it (~65x fewer); a
 * range of <= DKB_BOUNDS_SCAN rows is then counted in one coalesced pass.
 * 60M rows take 4 dependent rounds instead of 26 dependent loads, and the
 * first two rounds hit L2 (every chunk probes the same rows). */
template <int CHUNK>
__global__ void __launch_bounds__(DKB_BOUNDS_WARPS * 32)
    dkb_chunk_bounds(const int32_t *__restrict__ okey, const int32_t *__restrict__ lkey, int64_t nl, int64_t nchunks,
                     int64_t *__restrict__ bound) {
    const int lane = threadIdx.x & 31;
    const int64_t c = (int64_t)blockIdx.x * DKB_BOUNDS_WARPS + (threadIdx.x >> 5);
    if (c > nchunks) return; /* whole warps */
    if (c == nchunks) {
        if (lane == 0) bound[c] = nl;
        return;
    }
    const int32_t key = okey[c * CHUNK];
    /* the answer is in lo .. lo + n: rows below lo hold keys < key, rows from lo + n keys >= key */
    int64_t lo = 0, n = nl;
    while (n > DKB_BOUNDS_SCAN) { /* n is the same in every lane */
        /* probe k = 0..63 at row lo + (k + 1) * n / 65 (< lo + n); this lane probes k = lane and lane + 32 */
        const int64_t p0 = lo + (int64_t)(lane + 1) * n / (DKB_BOUNDS_PROBES + 1);
        const int64_t p1 = lo + (int64_t)(lane + 33) * n / (DKB_BOUNDS_PROBES + 1);
        const int32_t k0 = lkey[p0], k1 = lkey[p1];
        const unsigned ge0 = __ballot_sync(DKB_FULL_MASK, k0 >= key), ge1 = __ballot_sync(DKB_FULL_MASK, k1 >= key);
        /* f = the first probe at or above the key (64: none) */
        const int f = ge0 ? __ffs(ge0) - 1 : ge1 ? 31 + __ffs(ge1) : DKB_BOUNDS_PROBES;
        const int64_t new_lo = f == 0 ? lo : lo + (int64_t)f * n / (DKB_BOUNDS_PROBES + 1) + 1;
        const int64_t new_hi = f == DKB_BOUNDS_PROBES ? lo + n : lo + (int64_t)(f + 1) * n / (DKB_BOUNDS_PROBES + 1);
        lo = new_lo;
        n = new_hi - new_lo;
    }
    int below = 0; /* rows lo .. lo + n - 1 with keys below the key */
#pragma unroll
    for (int t = 0; t < DKB_BOUNDS_SCAN / 32; t++) {
        const int i = t * 32 + lane;
        if (i < n && lkey[lo + i] < key) below++;
    }
    below = __reduce_add_sync(DKB_FULL_MASK, below);
    if (lane == 0) bound[c] = lo + below;
}

/* dkb_chunk_bounds<CHUNK> on stream for the nchunks + 1 bounds (device
 * array bound, caller-allocated), DKB_BOUNDS_WARPS chunks per block.
 * Returns the launch's error (cudaGetLastError). */
template <int CHUNK>
static inline cudaError_t dkb_launch_chunk_bounds(const int32_t *okey, const int32_t *lkey, int64_t nl, int64_t nchunks,
                                                  int64_t *bound, cudaStream_t stream) {
    dkb_chunk_bounds<CHUNK><<<(unsigned)((nchunks + DKB_BOUNDS_WARPS) / DKB_BOUNDS_WARPS), DKB_BOUNDS_WARPS * 32, 0,
                              stream>>>(okey, lkey, nl, nchunks, bound);
    return cudaGetLastError();
}

/* Inside a chunk join (a block per orders chunk at a time; the chunk's line
 * items j0..j1 read in tiles of NWARP * 32 rows, `for (base = j0; base <
 * j1; base += NWARP * 32, parity ^= 1)`), this thread's row j = base +
 * threadIdx.x is in the chunk's order number before + incl - 1: the run
 * starts of l_orderkey in j0..j. start: j < j1 and j begins a run (j == j0,
 * or its key differs from row j - 1's). Every thread of the block calls it
 * once per tile (it holds a __syncthreads); wtot is a shared int[NWARP] for
 * this tile's parity (two alternate, so one barrier per tile is enough).
 * Sets incl (the warp's run starts up to this lane) and before (carry plus
 * the earlier warps' run starts), and adds the tile's run count to carry.
 * The caller checks the order number against the chunk's order count, and
 * o_orderkey at run starts (its sum is left to the caller after its test
 * of j < j1, which keeps the join kernels' code as it was). */
template <int NWARP>
__device__ __forceinline__ void dkb_chunk_tile_runs(bool start, int lane, int warp, int *wtot, int &carry, int &before,
                                                    int &incl) {
    const unsigned ballot = __ballot_sync(DKB_FULL_MASK, start);
    incl = __popc(ballot & (DKB_FULL_MASK >> (31 - lane)));
    if (lane == 0) wtot[warp] = __popc(ballot);
    __syncthreads();
    int before_me = carry, total = 0;
    for (int w = 0; w < NWARP; w++) {
        const int t = wtot[w];
        if (w < warp) before_me += t;
        total += t;
    }
    carry += total;
    before = before_me;
}

/* ---- warp row queue ---- */

/* Every lane of the warp calls this. Appends this lane's rows (bit b of
 * `bits` set: row row0 + 4 * 32 * (b / 4) + b % 4, i.e. lane-interleaved
 * groups of 4 from 16-byte loads; pass bits 0/1 and row0 = the row for one
 * row per lane) to the warp's queue (shared memory, room for pending + 32 *
 * popc) after its `pending` entries, lanes in order; returns the new
 * (warp-uniform) length. */
__device__ __forceinline__ int dkb_queue_push(int64_t *queue, int pending, uint32_t bits, int64_t row0, int lane) {
    const int cnt = __popc(bits);
    int at = cnt;
    for (int off = 1; off < 32; off <<= 1) {
        const int y = __shfl_up_sync(DKB_FULL_MASK, at, off);
        if (lane >= off) at += y;
    }
    const int total = __shfl_sync(DKB_FULL_MASK, at, 31);
    at += pending - cnt;
    while (bits) {
        const int b = __ffs(bits) - 1;
        bits &= bits - 1;
        queue[at++] = row0 + 4 * 32 * (b >> 2) + (b & 3);
    }
    __syncwarp();
    return pending + total;
}

/* ---- warp top-k lists (bitonic, in registers) ----
 *
 * A warp's list: lane i holds entry i (x, v) of up to 32 entries of type T
 * sorted in the result order; v = false marks an empty entry (after all
 * others). T's file defines, before the first use (found by argument-
 * dependent lookup):
 *   __device__ T cand_shfl(const T &x, int src)   every field __shfl_sync'ed
 *                                                  from lane src (all lanes);
 *   __device__ bool first_of(const T &a, bool av, const T &b, bool bv)
 *                                                  (a, av) comes before (b, bv).
 * Every lane of the warp calls each of these. */

/* One compare-exchange of a bitonic network between this lane and lane ^ j:
 * the lower lane keeps the first of the two when up, the second otherwise. */
template <typename T>
__device__ static inline void dkb_bitonic_step(T &x, bool &v, int j, bool up) {
    const int lane = threadIdx.x & 31;
    const T o = cand_shfl(x, lane ^ j);
    const bool ov = __shfl_sync(DKB_FULL_MASK, (int)v, lane ^ j) != 0;
    const bool want_first = ((lane & j) == 0) == up;
    if (want_first ? first_of(o, ov, x, v) : first_of(x, v, o, ov)) {
        x = o;
        v = ov;
    }
}

/* Sorts the warp's 32 (x, v) in the result order (bitonic sort). */
template <typename T>
__device__ static void dkb_warp_sort(T &x, bool &v) {
    const int lane = threadIdx.x & 31;
    for (int k = 2; k <= 32; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) dkb_bitonic_step(x, v, j, (lane & k) == 0);
}

/* (x, v) and (y, w) sorted lists -> (x, v) = the first 32 of both, sorted:
 * entry i against entry 31 - i of the other list gives a bitonic sequence
 * holding the first 32, then a bitonic merge. */
template <typename T>
__device__ static void dkb_warp_merge(T &x, bool &v, const T &y, bool w) {
    const int lane = threadIdx.x & 31;
    const T r = cand_shfl(y, 31 - lane);
    const bool rv = __shfl_sync(DKB_FULL_MASK, (int)w, 31 - lane) != 0;
    if (first_of(r, rv, x, v)) {
        x = r;
        v = rv;
    }
    for (int j = 16; j > 0; j >>= 1) dkb_bitonic_step(x, v, j, true);
}

/* Lanes with has offer c to the warp's list (x, v) of which the first TOPK
 * (<= 32) entries count. Candidates that do not beat entry TOPK - 1 are
 * dropped (they cannot be in the top TOPK); when any remain they are sorted
 * and merged in. */
template <int TOPK, typename T>
__device__ static void dkb_list_offer(T &x, bool &v, bool has, const T &c) {
    const T last = cand_shfl(x, TOPK - 1);
    const bool lastv = __shfl_sync(DKB_FULL_MASK, (int)v, TOPK - 1) != 0;
    bool w = has && first_of(c, true, last, lastv);
    if (!__ballot_sync(DKB_FULL_MASK, w)) return;
    T y = c;
    dkb_warp_sort(y, w);
    dkb_warp_merge(x, v, y, w);
}

/* The block's NW warps' lists -> warp 0's (x, v), by a tree of merges
 * through shared memory (sl, slv: [NW][32]). Every thread calls this. */
template <int NW, typename T>
__device__ static void dkb_block_merge(T &x, bool &v, T (*sl)[32], bool (*slv)[32]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    sl[warp][lane] = x;
    slv[warp][lane] = v;
    for (int s = 1; s < NW; s <<= 1) {
        __syncthreads();
        if ((warp & (2 * s - 1)) == 0 && warp + s < NW) {
            dkb_warp_merge(x, v, sl[warp + s][lane], slv[warp + s][lane]);
            sl[warp][lane] = x;
            slv[warp][lane] = v;
        }
    }
}

/* ---- text gather: rows of a STR or dictionary column into host memory ---- */

/* off: a STR column's n + 1 offsets; rows[0..m): row numbers. len[k] := the
 * length of text row rows[k]; a row outside 0..n-1 sets *bad (and len 0).
 * Any grid (grid-stride). (The text kernels are templates on the offset or
 * column type, deduced at the launch, only so that a file that does not
 * launch them does not carry them.) */
template <typename Off>
__global__ void dkb_text_lengths(const Off *__restrict__ off, int64_t n, const int64_t *__restrict__ rows,
                                 int64_t m, int64_t *__restrict__ len, int *__restrict__ bad) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = rows[k];
        if (r < 0 || r >= n) {
            *bad = 1;
            len[k] = 0;
            continue;
        }
        len[k] = off[r + 1] - off[r];
    }
}

/* One warp per listed row (m * 32 threads): the bytes of text row rows[k]
 * (off, bytes: a STR column; rows checked before) to out + at[k]. */
template <typename Off>
__global__ void dkb_text_copy(const Off *__restrict__ off, const char *__restrict__ bytes,
                              const int64_t *__restrict__ rows, int64_t m, const int64_t *__restrict__ at,
                              char *__restrict__ out) {
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= m) return;
    const int64_t r = rows[warp], a = off[r], l = off[r + 1] - a;
    for (int64_t i = lane; i < l; i += 32) out[at[warp] + i] = bytes[a + i];
}

/* code[k] := byte column col (n rows) at row rows[k]; a row outside 0..n-1
 * sets *bad (code[k] left). Any grid (grid-stride). */
template <typename Code>
__global__ void dkb_byte_gather(const Code *__restrict__ col, int64_t n, const int64_t *__restrict__ rows,
                                int64_t m, Code *__restrict__ code, int *__restrict__ bad) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = rows[k];
        if (r < 0 || r >= n) {
            *bad = 1;
            continue;
        }
        code[k] = col[r];
    }
}

/* The text of rows d_rows[0..m) (device array) of column v (device memory:
 * a STR column, or a U8 column with a dictionary) into host memory: *h_off
 * (m + 1 offsets, (*h_off)[0] = 0) into *h_bytes; both malloc'ed here and
 * owned by the caller, who frees them also on failure (either may be NULL
 * then). STR rows are gathered on the device (lengths, one round trip, then
 * the bytes); U8 codes come back and are looked up in the dictionary.
 * Synchronizes stream. Returns DKB_CAND_OK; DKB_CAND_ENOMEM,
 * DKB_CAND_ECUDA, DKB_CAND_EINVAL (v neither text nor dictionary) or
 * DKB_CAND_EINTERNAL (a row or code out of range), with a line on stderr. */
template <typename Vec> /* dkb_cand_vec (a template only so that unused, nothing is emitted) */
static inline int dkb_fetch_text(const Vec *v, const int64_t *d_rows, int64_t m, cudaStream_t stream,
                                 int64_t **h_off, char **h_bytes) {
    int rc = 0, h_bad = 0;
    int *d_bad = NULL;
    int64_t *d_len = NULL, *d_at = NULL, *len = NULL;
    uint8_t *d_code = NULL, *code = NULL;
    char *d_out = NULL;
    const unsigned blocks = (unsigned)((m + 255) / 256 > 0 ? (m + 255) / 256 : 1);
    *h_off = (int64_t *)malloc(sizeof(int64_t) * (size_t)(m + 1));
    *h_bytes = NULL;
    len = (int64_t *)malloc(sizeof(int64_t) * (size_t)(m + 1));
    code = (uint8_t *)malloc((size_t)m + 1);
    if (!*h_off || !len || !code) {
        fprintf(stderr, "dkb_fetch_text: out of host memory gathering %s\n", v->name);
        rc = DKB_CAND_ENOMEM;
        goto done;
    }
    (*h_off)[0] = 0;
    DKB_CUDA_TRY("cudaMallocAsync gather flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
    DKB_CUDA_TRY("cudaMemsetAsync gather flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
    if (v->type == DKB_CAND_U8 && v->dict) {
        DKB_CUDA_TRY("cudaMallocAsync codes", cudaMallocAsync((void **)&d_code, (size_t)m + 1, stream));
        if (m > 0)
            dkb_byte_gather<<<blocks, 256, 0, stream>>>((const uint8_t *)v->data, v->n, d_rows, m, d_code, d_bad);
        DKB_CUDA_TRY("byte_gather launch", cudaGetLastError());
        DKB_CUDA_TRY("cudaMemcpyAsync codes", cudaMemcpyAsync(code, d_code, (size_t)m, cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaMemcpyAsync gather flag",
                     cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        int64_t total = 0;
        for (int64_t k = 0; k < m && !h_bad; k++) {
            if (code[k] >= v->dict->size) h_bad = 1;
            else total += (int64_t)v->dict->len[code[k]];
        }
        if (h_bad) {
            fprintf(stderr, "dkb_fetch_text: %s: a row or code out of range\n", v->name);
            rc = DKB_CAND_EINTERNAL;
            goto done;
        }
        *h_bytes = (char *)malloc((size_t)total + 1);
        if (!*h_bytes) {
            rc = DKB_CAND_ENOMEM;
            goto done;
        }
        for (int64_t k = 0; k < m; k++) {
            const size_t l = v->dict->len[code[k]];
            memcpy(*h_bytes + (*h_off)[k], v->dict->str[code[k]], l);
            (*h_off)[k + 1] = (*h_off)[k] + (int64_t)l;
        }
        goto done;
    }
    if (v->type != DKB_CAND_STR) {
        fprintf(stderr, "dkb_fetch_text: %s is neither text nor a dictionary column\n", v->name);
        rc = DKB_CAND_EINVAL;
        goto done;
    }
    DKB_CUDA_TRY("cudaMallocAsync lengths", cudaMallocAsync((void **)&d_len, sizeof(int64_t) * (size_t)(m + 1), stream));
    DKB_CUDA_TRY("cudaMallocAsync starts", cudaMallocAsync((void **)&d_at, sizeof(int64_t) * (size_t)(m + 1), stream));
    if (m > 0) dkb_text_lengths<<<blocks, 256, 0, stream>>>((const int64_t *)v->data, v->n, d_rows, m, d_len, d_bad);
    DKB_CUDA_TRY("text_lengths launch", cudaGetLastError());
    DKB_CUDA_TRY("cudaMemcpyAsync lengths",
                 cudaMemcpyAsync(len, d_len, sizeof(int64_t) * (size_t)m, cudaMemcpyDeviceToHost, stream));
    DKB_CUDA_TRY("cudaMemcpyAsync gather flag",
                 cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
    DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
    for (int64_t k = 0; k < m && !h_bad; k++) {
        if (len[k] < 0) h_bad = 1;
        (*h_off)[k + 1] = (*h_off)[k] + len[k];
    }
    if (h_bad) {
        fprintf(stderr, "dkb_fetch_text: %s: a row out of range or a negative length\n", v->name);
        rc = DKB_CAND_EINTERNAL;
        goto done;
    }
    *h_bytes = (char *)malloc((size_t)(*h_off)[m] + 1);
    if (!*h_bytes) {
        rc = DKB_CAND_ENOMEM;
        goto done;
    }
    DKB_CUDA_TRY("cudaMallocAsync text", cudaMallocAsync((void **)&d_out, (size_t)(*h_off)[m] + 1, stream));
    DKB_CUDA_TRY("cudaMemcpyAsync starts",
                 cudaMemcpyAsync(d_at, *h_off, sizeof(int64_t) * (size_t)m, cudaMemcpyHostToDevice, stream));
    if (m > 0)
        dkb_text_copy<<<(unsigned)((m * 32 + 255) / 256), 256, 0, stream>>>((const int64_t *)v->data, v->bytes, d_rows,
                                                                            m, d_at, d_out);
    DKB_CUDA_TRY("text_copy launch", cudaGetLastError());
    DKB_CUDA_TRY("cudaMemcpyAsync text",
                 cudaMemcpyAsync(*h_bytes, d_out, (size_t)(*h_off)[m], cudaMemcpyDeviceToHost, stream));
    DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
done:
    if (d_bad) cudaFreeAsync(d_bad, stream);
    if (d_len) cudaFreeAsync(d_len, stream);
    if (d_at) cudaFreeAsync(d_at, stream);
    if (d_code) cudaFreeAsync(d_code, stream);
    if (d_out) cudaFreeAsync(d_out, stream);
    cudaStreamSynchronize(stream);
    free(len);
    free(code);
    return rc;
}

/* ---- host plumbing: failures, copies back, grids, partial sums ---- */

/* rc = code and goto done (the caller's int rc and done: label, as for
 * DKB_CUDA_TRY). */
#define DKB_FAIL(code)                                                                                               \
    do {                                                                                                             \
        rc = (code);                                                                                                 \
        goto done;                                                                                                   \
    } while (0)

/* When cond holds: the message (a printf format and its arguments) on
 * stderr, then DKB_FAIL(code). */
#define DKB_FAIL_IF(cond, code, ...)                                                                                 \
    do {                                                                                                             \
        if (cond) {                                                                                                  \
            fprintf(stderr, __VA_ARGS__);                                                                            \
            DKB_FAIL(code);                                                                                          \
        }                                                                                                            \
    } while (0)

/* Run call (an expression giving a DKB_CAND_* code: a toolkit function
 * that reports its own failure); anything but DKB_CAND_OK: DKB_FAIL with
 * that code. */
#define DKB_TRY(call)                                                                                                \
    do {                                                                                                             \
        const int dkb_rc_ = (call);                                                                                  \
        if (dkb_rc_ != DKB_CAND_OK) DKB_FAIL(dkb_rc_);                                                               \
    } while (0)

/* One copy of a call's round trip: bytes from device address d to host
 * address h. */
typedef struct dkb_host_copy {
    void *h;
    const void *d;
    size_t bytes;
} dkb_host_copy;

/* The n copies (cudaMemcpyAsync, in order) on stream, then one
 * cudaStreamSynchronize. Returns cudaSuccess or the first failing call's
 * error (the later ones then not issued). */
static inline cudaError_t dkb_copy_back(const dkb_host_copy *c, int n, cudaStream_t stream) {
    for (int i = 0; i < n; i++) {
        const cudaError_t e = cudaMemcpyAsync(c[i].h, c[i].d, c[i].bytes, cudaMemcpyDeviceToHost, stream);
        if (e != cudaSuccess) return e;
    }
    return cudaStreamSynchronize(stream);
}

/* grid, clamped to at most ceil(n / per_block) blocks (the blocks with
 * work: n units, per_block a block). */
static inline int64_t dkb_grid_cap(int64_t grid, int64_t n, int64_t per_block) {
    const int64_t useful = (n + per_block - 1) / per_block;
    return grid > useful ? useful : grid;
}

/* The grid of a scan over n rows at tpb threads a block whose blocks each
 * read at most max_rows rows (so that a block's int64 sums cannot
 * overflow): grid raised to ceil(n / max_rows), then clamped to
 * ceil(n / tpb). */
static inline int64_t dkb_scan_grid(int64_t grid, int64_t n, int tpb, int64_t max_rows) {
    const int64_t need = (n + max_rows - 1) / max_rows;
    if (grid < need) grid = need;
    return dkb_grid_cap(grid, n, tpb);
}

/* The round trip of a scan that leaves K int64 partials per block
 * (d_part[b * K + k], nblocks blocks, device memory): they come back
 * (with the error flag *d_bad into *h_bad, unless d_bad is NULL) in one
 * synchronize, and sums[k] := the sum over the blocks of partial k, in
 * __int128. Returns DKB_CAND_OK, DKB_CAND_ENOMEM or DKB_CAND_ECUDA (a line
 * on stderr; sums then unset). */
static inline int dkb_partials_to_host(const int64_t *d_part, int64_t nblocks, int K, __int128 *sums, const int *d_bad,
                                       int *h_bad, cudaStream_t stream) {
    int64_t *h = (int64_t *)malloc(sizeof(int64_t) * (size_t)K * (size_t)nblocks);
    if (!h) {
        fprintf(stderr, "dkb_partials_to_host: out of host memory for %lld partial sums\n", (long long)nblocks);
        return DKB_CAND_ENOMEM;
    }
    const dkb_host_copy back[] = {{h, d_part, sizeof(int64_t) * (size_t)K * (size_t)nblocks},
                                  {h_bad, d_bad, sizeof(int)}};
    const cudaError_t e = dkb_copy_back(back, d_bad ? 2 : 1, stream);
    if (e != cudaSuccess) {
        fprintf(stderr, "dkb_partials_to_host: copying the partial sums back: %s\n", cudaGetErrorString(e));
        free(h);
        return DKB_CAND_ECUDA;
    }
    for (int k = 0; k < K; k++) sums[k] = 0;
    for (int64_t b = 0; b < nblocks; b++)
        for (int k = 0; k < K; k++) sums[k] += h[b * K + k];
    free(h);
    return DKB_CAND_OK;
}

/* ---- chunk joins: a block per orders chunk, its line items in tiles ----
 *
 * The device side of a join of orders (cut into chunks of CHUNK rows) with
 * lineitem (grouped by orderkey in orders' order), the bounds from
 * dkb_launch_chunk_bounds: persistent blocks take chunks c = blockIdx.x,
 * += gridDim.x; dkb_chunk_at gives a chunk's rows, dkb_chunk_items walks its
 * line items with each one's order in the chunk. */

/* Chunk c: orders o0 .. o0 + nord - 1, line items j0 .. j1 - 1. */
typedef struct dkb_chunk {
    int64_t o0, j0, j1;
    int nord;
} dkb_chunk;

/* Chunk c of no orders (bound: the nchunks + 1 line item bounds). */
template <int CHUNK>
__device__ __forceinline__ dkb_chunk dkb_chunk_at(int64_t c, int64_t no, const int64_t *__restrict__ bound) {
    dkb_chunk ch;
    ch.o0 = c * CHUNK;
    ch.nord = (int)(no - ch.o0 < CHUNK ? no - ch.o0 : CHUNK);
    ch.j0 = bound[c];
    ch.j1 = bound[c + 1];
    return ch;
}

/* The line items of chunk ch, read in tiles of NWARP * 32 rows (the block's
 * threads, blockDim.x == NWARP * 32, all call it): for row j = tile base +
 * threadIdx.x, its key (l_orderkey, from lkey) and whether it starts a run
 * (dkb_chunk_tile_runs) give idx, its order's number in the chunk; a row
 * with idx outside 0..nord-1 sets oops (lineitem not grouped as orders),
 * every other calls item(j, idx, start, key) (a device lambda; it returns
 * where a loop body would continue; it may not sync). It is the caller's
 * to check o_orderkey at run starts (start: okey[o0 + idx] == key). wtot:
 * shared int[2][NWARP]. */
template <int NWARP, typename Item>
__device__ __forceinline__ void dkb_chunk_items(const int32_t *__restrict__ lkey, const dkb_chunk &ch, int (*wtot)[NWARP],
                                                int &oops, Item item) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int carry = 0, parity = 0;
    for (int64_t base = ch.j0; base < ch.j1; base += NWARP * 32, parity ^= 1) {
        const int64_t j = base + tid;
        const bool active = j < ch.j1;
        const int32_t key = active ? lkey[j] : 0;
        int32_t prev = __shfl_up_sync(DKB_FULL_MASK, key, 1);
        if (lane == 0 && active && j > ch.j0) prev = lkey[j - 1];
        const bool start = active && (j == ch.j0 || key != prev);
        int before_me, incl;
        dkb_chunk_tile_runs<NWARP>(start, lane, warp, wtot[parity], carry, before_me, incl);
        if (!active) continue;
        const int idx = before_me + incl - 1;
        if (idx < 0 || idx >= ch.nord) {
            oops = 1;
            continue;
        }
        item(j, idx, start, key);
    }
}

/* ---- block sums ---- */

/* The block's sums of each thread's K int64 values v[0..K) into
 * out[K * blockIdx.x + k] (exact; a block of TPB threads, a multiple of 32,
 * every thread calls it once): a shuffle reduction per warp, then thread k
 * adds the warps' sums of value k in warp order (deterministic). v is
 * consumed. With add != 0 the sums are added to what out holds (a later
 * pass of a streamed walk, dkb/cand_stream.h) instead of replacing it. */
template <int TPB, int K>
__device__ __forceinline__ void dkb_block_sums_add(int64_t (&v)[K], int64_t *__restrict__ out, int add) {
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int k = 0; k < K; k++) v[k] += __shfl_down_sync(DKB_FULL_MASK, v[k], off);
    __shared__ int64_t w[K][TPB / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < K; k++) w[k][warp] = v[k];
    __syncthreads();
    if (threadIdx.x < K) {
        int64_t s = 0;
        for (int k = 0; k < TPB / 32; k++) s += w[threadIdx.x][k];
        int64_t *o = &out[K * blockIdx.x + threadIdx.x];
        *o = add ? *o + s : s;
    }
}

template <int TPB, int K>
__device__ __forceinline__ void dkb_block_sums(int64_t (&v)[K], int64_t *__restrict__ out) {
    dkb_block_sums_add<TPB, K>(v, out, 0);
}

/* ---- queued scans: a warp streams a 4-byte column, queues the rows that
 * pass a test and works them off 32 at a time ---- */

/* Every lane of the warp calls it. Rows 0..n-1 of col (4-byte values): the
 * first ntiles tiles of 32 * 4 * VEC rows with VEC 16-byte loads per lane
 * (the caller passes 0 when col is not 16-byte aligned), tiles t = gwarp,
 * += nwarps; then the rest one row per lane (bases from ntiles * 32 * 4 *
 * VEC + gwarp * 32, += nwarps * 32). test(x) (x: a row's value as int32_t)
 * gives 1 for a row to queue, else 0. The queued rows go to the warp's
 * queue (shared memory, room for 32 * 4 * VEC + 32) with dkb_queue_push;
 * each time it holds 32, every lane takes one row i and calls batch(i)
 * (which may sync the warp). Returns the rows left in the queue (< 32,
 * queue[0..]) for the caller's last batch. */
template <int VEC, typename Test, typename Batch>
__device__ __forceinline__ int dkb_queued_scan(const int32_t *__restrict__ col, int64_t n, int64_t ntiles,
                                               int64_t gwarp, int64_t nwarps, int64_t *queue, int lane, Test test,
                                               Batch batch) {
    int pending = 0;
    for (int64_t t = gwarp; t < ntiles; t += nwarps) {
        const int64_t v0 = t * (32 * VEC) + lane; /* this lane's first int4 */
        int4 x4[VEC];
#pragma unroll
        for (int v = 0; v < VEC; v++) x4[v] = __ldg((const int4 *)col + v0 + 32 * v);
        uint32_t bits = 0;
#pragma unroll
        for (int v = 0; v < VEC; v++) {
            bits |= test(x4[v].x) << (4 * v);
            bits |= test(x4[v].y) << (4 * v + 1);
            bits |= test(x4[v].z) << (4 * v + 2);
            bits |= test(x4[v].w) << (4 * v + 3);
        }
        pending = dkb_queue_push(queue, pending, bits, 4 * v0, lane);
        while (pending >= 32) {
            pending -= 32;
            const int64_t i = queue[pending + lane];
            __syncwarp();
            batch(i);
        }
    }
    for (int64_t base = ntiles * (32 * 4 * VEC) + gwarp * 32; base < n; base += nwarps * 32) {
        const int64_t i = base + lane;
        const uint32_t in = i < n ? test(__ldg(col + i)) : 0u;
        pending = dkb_queue_push(queue, pending, in, i, lane);
        while (pending >= 32) {
            pending -= 32;
            const int64_t r = queue[pending + lane];
            __syncwarp();
            batch(r);
        }
    }
    return pending;
}

#endif
