/* q09.full.cu: expert CUDA full-mode candidate for TPC-H Q9 (Product Type
 * Profit Measure).
 *
 *   select nation, o_year, sum(amount) as sum_profit
 *   from (select n_name as nation, extract(year from o_orderdate) as o_year,
 *                l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
 *         from part, supplier, lineitem, partsupp, orders, nation
 *         where s_suppkey = l_suppkey and ps_suppkey = l_suppkey
 *           and ps_partkey = l_partkey and p_partkey = l_partkey
 *           and o_orderkey = l_orderkey and s_nationkey = n_nationkey
 *           and p_name like '%:color%') as profit
 *   group by nation, o_year order by nation, o_year desc;
 *
 * Plan (all on env->stream):
 *  1. part_match: blocks take tiles of TPB consecutive parts; the tile's
 *     p_name text (one contiguous range) is copied coalesced into shared
 *     memory (16-byte loads), then a thread per name runs SQL LIKE
 *     ('%color%': % any run, _ one byte) there: a substring test when the
 *     color has no % or _, else an iterative matcher that backtracks to the
 *     last %. A name outside the staged text (tile over 16 KB) is matched
 *     in global memory. The result is a byte per dense partkey (2 MB at
 *     SF10, L2-resident).
 *  2. ps_count, then ps_build (4 partsupp rows a thread at a time, their
 *     part bytes read together): the matching parts' partsupp rows go into
 *     an open-addressing table sized from their count (a power of two >=
 *     2x), key (partkey << 32 | suppkey) claimed by atomicCAS, cost sum and
 *     copy count beside it (24-byte slots). supp_nat: the supplier's nation
 *     per dense suppkey (255: none).
 *  3. chunk_bounds: orders cut into chunks of OCHUNK rows; lineitem is
 *     grouped by orderkey in orders' order, so a chunk's items are one
 *     range (a warp per chunk, a 65-ary search: 4 dependent rounds at SF10).
 *  4. q09_join (partition-local, persistent blocks over chunks): each order
 *     of the chunk gets its year index 0..7 from 1992 (shared memory; a
 *     date outside 1992..1999 is refused, as the CPU expert); the chunk's
 *     items are read in tiles of 4 rows a thread (l_orderkey and l_partkey
 *     as 16-byte loads), each row's order found by counting run starts (a
 *     warp prefix and per-warp totals, checked against o_orderkey at run
 *     starts), the four rows' part bytes read together. The matching rows
 *     (1 in 17) are queued per warp in shared memory with their year;
 *     whenever 32 are queued every lane joins one: l_suppkey, quantity,
 *     price, discount read together, then the supplier's nation and the
 *     table probe (32 dependent chains in flight per warp; the first
 *     version ran each row's chain inside the tile loop, 1.4 ms at SF10).
 *     The exact scale-4 amount is added to per-block sums per (nation,
 *     year) in shared memory (2048 x int64 two's-complement), then to
 *     global sums (integer atomics: exact and deterministic).
 *  5. 2048 sums and marks come back; groups by nation name code (string
 *     order), year desc.
 *
 * Under a memory budget (env->budget streaming lineitem and orders,
 * co-partitioned by orderkey; part, partsupp, supplier, nation whole)
 * steps 3 and 4 run once per load of partitions (dkb_stream with
 * DKB_STREAM_OVERLAP: the next load's copy overlaps this one's kernels):
 * the chunk bounds are those of the load's own orders and items (every
 * item's order is in its load), d_bound is reused (same stream: the next
 * load's bounds are written after this load's join read them), and every
 * load adds into the same 2048 sums (integers mod 2^64: the same result
 * for any partitioning). The first load is taken (and its bounds
 * enqueued) before the count's round trip, as the whole run does. No
 * synchronize per load.
 *
 * Bytes read (floor, SF10): l_orderkey, l_partkey 8 B per item (0.48 GB)
 * + l_suppkey, quantity, price, discount for the matching ~1/17 (their
 * sectors: ~40% of l_suppkey's, ~1/5 of the 8-byte columns'); o_orderkey,
 * o_orderdate 8 B per order (0.12 GB); p_name (~66 MB), partsupp keys and
 * cost (8M x 16 B = 0.13 GB), supplier keys and nations. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh"   // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h"   // defines: dkb_ranks_sum_i64, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h"   // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

/* TPB threads a block; q09_join reads RPT consecutive line items per thread
 * per tile (TILE a block), each warp queues its matching rows (QCAP: a
 * tile's 32 * RPT plus the < 32 left over); part_match stages the text of
 * TPB consecutive names in TEXT_CAP bytes of shared memory. */
enum { TPB = 256, NWARP = TPB / 32, RPT = 4, TILE = TPB * RPT, QCAP = 32 * RPT + 32, TEXT_CAP = 16384 };
enum { OCHUNK = 2048, YEAR0 = 1992, NYEAR = 8, NAT = 256, MAXPAT = 128 };
enum { NGROUP = NAT * NYEAR, NO_NATION = 255 };
static_assert(TEXT_CAP % 16 == 0, "the name text buffer is copied in 16-byte vectors");
/* A slot's key: KEY_TAG | partkey << 32 | suppkey (partkey 0..maxp, so the
 * tag bit is free and no key is 0), or EMPTY_KEY: a table zeroed by one
 * memset is empty. */
#define EMPTY_KEY 0ull
#define KEY_TAG (1ull << 63)

/* The LIKE pattern (kernel argument). */
typedef struct {
    char p[MAXPAT];
    int len;
    int plain; /* 1: p is '%' + a literal without % or _ + '%' (a substring test) */
} like_pattern;

/* January 1st of YEAR0 .. YEAR0 + NYEAR (kernel argument). */
typedef struct {
    int32_t jan1[NYEAR + 1];
} year_bounds;

/* One (partkey, suppkey) of the matching parts' partsupp rows. The pair is
 * partsupp's key by the spec, but dbgen repeats pairs below SF 0.01; the
 * join yields one row per copy, so a slot holds the copies' count and cost
 * sum: their amounts add up to n * price * (1 - discount) - cost * qty. */
typedef struct {
    unsigned long long key; /* KEY_TAG | partkey << 32 | suppkey, or EMPTY_KEY */
    long long cost;         /* sum of the copies' ps_supplycost (preset 0) */
    long long n;            /* copies (preset 0) */
} slot;

__host__ __device__ static inline unsigned long long hash_key(unsigned long long k) {
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 29);
}

/* SQL LIKE of s[0..n) against p[0..m) (% any run, _ one byte): greedy, and
 * on a mismatch back to the last % with one more byte consumed by it. */
__device__ static bool like_match(const char *__restrict__ s, int64_t n, const char *p, int m) {
    int64_t i = 0, mark = 0;
    int j = 0, star = -1;
    while (i < n) {
        if (j < m && p[j] == '%') {
            star = j++;
            mark = i;
        } else if (j < m && (p[j] == '_' || p[j] == s[i])) {
            i++;
            j++;
        } else if (star >= 0) {
            j = star + 1;
            i = ++mark;
        } else {
            return false;
        }
    }
    while (j < m && p[j] == '%') j++;
    return j == m;
}

/* Whether s[0..n) contains lit[0..m) (m >= 0): LIKE '%lit%' when lit has
 * no % or _, as like_match decides it. */
__device__ static bool contains(const char *__restrict__ s, int64_t n, const char *lit, int m) {
    if (m == 0) return true;
    const char c0 = lit[0];
    for (int64_t i = 0; i + m <= n; i++) {
        if (s[i] != c0) continue;
        int k = 1;
        while (k < m && s[i + k] == lit[k]) k++;
        if (k == m) return true;
    }
    return false;
}

/* s[0..n) LIKE the pattern p_s (the substring test when plain). */
__device__ __forceinline__ static bool name_match(const char *__restrict__ s, int64_t n, const char *p_s, int len,
                                                  int plain) {
    return plain ? contains(s, n, p_s + 1, len - 2) : like_match(s, n, p_s, len);
}

/* match[key] = 1 for every part whose p_name is LIKE the pattern (match
 * preset to 0); a key outside 0..maxkey sets *bad. Blocks take tiles of
 * TPB consecutive parts (grid-stride): the tile's offsets, then its text
 * (one contiguous range) copied coalesced into shared memory when it fits
 * (dbgen names are at most 55 bytes: 256 x 55 < 16 KB), then a thread per
 * name matches it there; a name outside the staged range (a tile too big,
 * offsets not ascending) is matched in global memory. */
__global__ void __launch_bounds__(TPB) part_match(const int32_t *__restrict__ pkey, const int64_t *__restrict__ off,
                                                  const char *__restrict__ bytes, int64_t np, int64_t maxkey,
                                                  like_pattern pat, uint8_t *__restrict__ match,
                                                  int *__restrict__ bad) {
    __shared__ char p_s[MAXPAT];
    __shared__ int64_t off_s[TPB + 1];
    __shared__ __align__(16) char text_s[TEXT_CAP];
    for (int i = threadIdx.x; i < MAXPAT; i += TPB) p_s[i] = pat.p[i];
    /* (visible after the first barrier below) */
    int oops = 0;
    for (int64_t first = (int64_t)blockIdx.x * TPB; first < np; first += (int64_t)gridDim.x * TPB) {
        const int rows = np - first < TPB ? (int)(np - first) : TPB;
        const int64_t k = threadIdx.x < rows ? (int64_t)__ldg(pkey + first + threadIdx.x) : 0;
        __syncthreads(); /* the previous tile's readers are done with off_s and text_s */
        for (int i = threadIdx.x; i <= rows; i += TPB) off_s[i] = __ldg(off + first + i);
        __syncthreads();
        const int64_t a = off_s[0], n = off_s[rows] - a;
        const bool staged = n >= 0 && n <= TEXT_CAP - 16;
        const int mis = staged ? dkb_copy_text_to_shared<TPB>(text_s, bytes + a, n) : 0;
        __syncthreads();
        if (threadIdx.x >= rows) continue;
        if (k < 0 || k > maxkey) {
            oops = 1;
            continue;
        }
        const int64_t from = off_s[threadIdx.x], len = off_s[threadIdx.x + 1] - from, at = from - a;
        const bool here = staged && at >= 0 && len >= 0 && at + len <= n;
        if (here ? name_match(text_s + mis + at, len, p_s, pat.len, pat.plain)
                 : name_match(bytes + from, len, p_s, pat.len, pat.plain))
            match[k] = 1;
    }
    if (oops) *bad = 1;
}

/* p[g..g+3] (0 past n); g a multiple of 4; vec: p is 16-byte aligned. */
__device__ __forceinline__ int4 load4(const int32_t *__restrict__ p, int64_t g, int64_t n, bool vec) {
    if (vec && g + 4 <= n) return __ldg(reinterpret_cast<const int4 *>(p + g));
    int4 r;
    r.x = g < n ? __ldg(p + g) : 0;
    r.y = g + 1 < n ? __ldg(p + g + 1) : 0;
    r.z = g + 2 < n ? __ldg(p + g + 2) : 0;
    r.w = g + 3 < n ? __ldg(p + g + 3) : 0;
    return r;
}

/* *count += partsupp rows whose part matches (4 rows a thread at a time:
 * their part bytes are read together). */
__global__ void ps_count(const int32_t *__restrict__ pspart, int64_t nps, bool vec, const uint8_t *__restrict__ match,
                         int64_t maxp, unsigned long long *__restrict__ count) {
    unsigned long long c = 0;
    for (int64_t g = 4 * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); g < nps;
         g += 4 * (int64_t)gridDim.x * blockDim.x) {
        const int4 p4 = load4(pspart, g, nps, vec);
        const int64_t p[4] = {p4.x, p4.y, p4.z, p4.w};
        uint8_t m[4];
#pragma unroll
        for (int k = 0; k < 4; k++) m[k] = g + k < nps && p[k] >= 0 && p[k] <= maxp ? __ldg(match + p[k]) : 0;
#pragma unroll
        for (int k = 0; k < 4; k++) c += m[k] != 0;
    }
    for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(DKB_FULL_MASK, c, off);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, c);
}

/* The matching parts' partsupp rows into table[0..mask] (keys preset to
 * EMPTY_KEY; at most half full by its size); 4 rows a thread at a time. */
__global__ void ps_build(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                         const int64_t *__restrict__ pscost, int64_t nps, bool vec, const uint8_t *__restrict__ match,
                         int64_t maxp, slot *__restrict__ table, unsigned long long mask) {
    for (int64_t g = 4 * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); g < nps;
         g += 4 * (int64_t)gridDim.x * blockDim.x) {
        const int4 p4 = load4(pspart, g, nps, vec);
        const int64_t p[4] = {p4.x, p4.y, p4.z, p4.w};
        uint8_t m[4];
#pragma unroll
        for (int k = 0; k < 4; k++) m[k] = g + k < nps && p[k] >= 0 && p[k] <= maxp ? __ldg(match + p[k]) : 0;
        int32_t su[4];
        int64_t cost[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            su[k] = m[k] ? __ldg(pssupp + g + k) : 0;
            cost[k] = m[k] ? __ldg(pscost + g + k) : 0;
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (!m[k]) continue;
            const unsigned long long key = KEY_TAG | (unsigned long long)(uint32_t)p[k] << 32 | (uint32_t)su[k];
            unsigned long long h = hash_key(key) & mask;
            for (;;) {
                const unsigned long long prev = atomicCAS(&table[h].key, EMPTY_KEY, key);
                if (prev == EMPTY_KEY || prev == key) {
                    atomicAdd((unsigned long long *)&table[h].cost, (unsigned long long)cost[k]);
                    atomicAdd((unsigned long long *)&table[h].n, 1ull);
                    break;
                }
                h = (h + 1) & mask;
            }
        }
    }
}

/* nat[key] = s_nationkey (nat preset to NO_NATION); a key outside
 * 0..maxkey or a nation outside 0..NO_NATION-1 sets *bad. */
__global__ void supp_nat(const int32_t *__restrict__ skey, const int32_t *__restrict__ snat, int64_t ns,
                         int64_t maxkey, uint8_t *__restrict__ nat, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ns; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = skey[i];
        const int32_t v = snat[i];
        if (k < 0 || k > maxkey || v < 0 || v >= NO_NATION) {
            *bad = 1;
            continue;
        }
        nat[k] = (uint8_t)v;
    }
}

/* One queued line item (entry = row << 4 | (year index + 1)) whose part
 * matches: supplier, part (again, a cache hit), quantity, price and
 * discount are read together, then the supplier's nation and the cost
 * table's probe; the exact scale-4 amount goes to sum_s[nation * NYEAR +
 * year]. A supplier key outside 0..maxs or without a nation, or a pair
 * not in the table, is no row of the join; a joined row whose order date
 * is outside the years sets oops bit 2. */
__device__ __forceinline__ void join_row(long long e, const int32_t *__restrict__ lpart,
                                         const int32_t *__restrict__ lsupp, const int64_t *__restrict__ lqty,
                                         const int64_t *__restrict__ lprice, const int64_t *__restrict__ ldisc,
                                         const slot *__restrict__ table, unsigned long long mask,
                                         const uint8_t *__restrict__ s_nat, int64_t maxs, unsigned long long *sum_s,
                                         uint8_t *seen_s, int *oops) {
    const int64_t j = e >> 4;
    const int y = (int)(e & 15) - 1;
    const int64_t su = __ldg(lsupp + j), pa = __ldg(lpart + j);
    const int64_t qty = __ldg(lqty + j), price = __ldg(lprice + j), disc = __ldg(ldisc + j);
    if (su < 0 || su > maxs) return; /* pa: 0..maxp, checked before the row was queued */
    const unsigned long long k = KEY_TAG | (unsigned long long)(uint32_t)pa << 32 | (uint32_t)su;
    unsigned long long h = hash_key(k) & mask;
    const int nat = __ldg(s_nat + su);
    unsigned long long key = __ldg(&table[h].key);
    while (key != k && key != EMPTY_KEY) {
        h = (h + 1) & mask;
        key = __ldg(&table[h].key);
    }
    if (nat == NO_NATION || key == EMPTY_KEY) return;
    if (y < 0) {
        *oops |= 2;
        return;
    }
    const long long cost = __ldg(&table[h].cost), n = __ldg(&table[h].n);
    const int64_t amount = (int64_t)n * (price * (100 - disc)) - (int64_t)cost * qty;
    const int g = nat * NYEAR + y;
    atomicAdd(&sum_s[g], (unsigned long long)amount);
    seen_s[g] = 1;
}

/* sums[nation * NYEAR + year] += amounts (scale 4, two's complement),
 * seen[...] = 1 for groups with a row. *bad: 1 for bad keys or layout, 2
 * for an order date outside YEAR0 .. YEAR0 + NYEAR - 1.
 *
 * Persistent blocks over orders chunks. A chunk's line items [j0, j1) are
 * read in tiles of TILE rows from j0 rounded down to a multiple of 4: each
 * thread takes 4 consecutive rows, l_orderkey and l_partkey as one 16-byte
 * load each (vec: both columns 16-byte aligned; else 4 scalar loads), rows
 * outside [j0, j1) inactive. A row's order index within the chunk is the
 * count of run starts up to it (per thread, a warp prefix, per-warp totals
 * in shared memory: one barrier per tile), checked against o_orderkey at
 * run starts; the four rows' part bytes are read together. Rows of a
 * matching part are appended with their year index (from shared memory)
 * to the warp's queue; whenever it holds 32, every lane joins one row
 * (join_row: 32 dependent chains in flight per warp). The entries carry
 * their year, so the queue runs on across chunks; the < 32 left at the
 * end are joined by the first lanes. */
__global__ void __launch_bounds__(TPB, 6) q09_join(const int32_t *__restrict__ okey, const int32_t *__restrict__ odate,
                                                int64_t no, const int32_t *__restrict__ lkey,
                                                const int32_t *__restrict__ lpart, const int32_t *__restrict__ lsupp,
                                                const int64_t *__restrict__ lqty, const int64_t *__restrict__ lprice,
                                                const int64_t *__restrict__ ldisc, int64_t nl, bool vec,
                                                const int64_t *__restrict__ bound, int64_t nchunks,
                                                const uint8_t *__restrict__ match, int64_t maxp,
                                                const slot *__restrict__ table, unsigned long long mask,
                                                const uint8_t *__restrict__ s_nat, int64_t maxs, year_bounds yb,
                                                unsigned long long *__restrict__ sums, int *__restrict__ seen,
                                                int *__restrict__ bad) {
    __shared__ int8_t year_s[OCHUNK];
    __shared__ int wtot[2][NWARP];
    __shared__ unsigned long long sum_s[NGROUP];
    __shared__ uint8_t seen_s[NGROUP];
    __shared__ long long queue_s[NWARP][QCAP];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    long long *queue = queue_s[warp];
    for (int i = tid; i < NGROUP; i += TPB) sum_s[i] = 0, seen_s[i] = 0;
    int oops = 0, pending = 0;

    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        const int64_t o0 = c * OCHUNK;
        const int nord = (int)(no - o0 < OCHUNK ? no - o0 : OCHUNK);
        const int64_t j0 = bound[c], j1 = bound[c + 1];
        /* 1. the chunk's orders: the year index */
        for (int o = tid; o < OCHUNK; o += TPB) {
            int8_t y = -1;
            if (o < nord) {
                const int32_t d = odate[o0 + o];
                if (d >= yb.jan1[0] && d < yb.jan1[NYEAR]) {
                    y = 0;
                    while (d >= yb.jan1[y + 1]) y++;
                }
            }
            year_s[o] = y;
        }
        __syncthreads();
        /* 2. the chunk's line items, tile by tile */
        int carry = 0, parity = 0;
        for (int64_t base = j0 & ~(int64_t)3; base < j1; base += TILE, parity ^= 1) {
            const int64_t g = base + 4 * tid; /* this thread's rows g .. g + 3 */
            const int4 k4 = load4(lkey, g, nl, vec), p4 = load4(lpart, g, nl, vec);
            const int32_t before = lane == 0 && g > j0 && g < j1 ? __ldg(lkey + g - 1) : 0;
            const int32_t key[4] = {k4.x, k4.y, k4.z, k4.w};
            const int64_t pa[4] = {p4.x, p4.y, p4.z, p4.w};
            int32_t prev = __shfl_up_sync(DKB_FULL_MASK, k4.w, 1);
            if (lane == 0) prev = before;
            bool act[4], start[4];
            int nstart = 0;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                act[k] = g + k >= j0 && g + k < j1;
                start[k] = act[k] && (g + k == j0 || key[k] != (k == 0 ? prev : key[k - 1]));
                nstart += start[k];
            }
            int wsum;
            const int excl = dkb_warp_exclusive(nstart, lane, &wsum);
            if (lane == 0) wtot[parity][warp] = wsum;
            __syncthreads();
            int before_me = carry + excl, total = 0;
            for (int w = 0; w < NWARP; w++) {
                const int t = wtot[parity][w];
                if (w < warp) before_me += t;
                total += t;
            }
            carry += total;
            /* the rows' order indexes, checks, part bytes (loads issued together) */
            int idx[4];
            bool ok[4];
            int32_t ok_key[4];
            uint8_t m[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                before_me += start[k];
                idx[k] = before_me - 1;
                const bool in = act[k] && idx[k] >= 0 && idx[k] < nord;
                if (act[k] && !in) oops |= 1;
                ok_key[k] = in && start[k] ? __ldg(okey + o0 + idx[k]) : key[k];
                const bool part_ok = pa[k] >= 0 && pa[k] <= maxp;
                if (in && !part_ok) oops |= 1;
                ok[k] = in && part_ok;
                m[k] = ok[k] ? __ldg(match + pa[k]) : 0;
            }
            uint32_t bits = 0;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (ok_key[k] != key[k]) oops |= 1;
                bits |= (uint32_t)(m[k] != 0) << k;
            }
            /* matching rows into the warp's queue, with their year index */
            int qtotal;
            int at = pending + dkb_warp_exclusive(__popc(bits), lane, &qtotal);
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (bits >> k & 1) queue[at++] = (long long)(g + k) << 4 | (long long)(year_s[idx[k]] + 1);
            __syncwarp();
            pending += qtotal;
            while (pending >= 32) {
                pending -= 32;
                const long long e = queue[pending + lane];
                __syncwarp();
                join_row(e, lpart, lsupp, lqty, lprice, ldisc, table, mask, s_nat, maxs, sum_s, seen_s, &oops);
            }
        }
        __syncthreads(); /* year_s and wtot are rewritten by the next chunk */
    }
    if (lane < pending)
        join_row(queue[lane], lpart, lsupp, lqty, lprice, ldisc, table, mask, s_nat, maxs, sum_s, seen_s, &oops);
    if (oops) atomicOr(bad, oops);
    __syncthreads();
    for (int g = tid; g < NGROUP; g += TPB)
        if (seen_s[g]) {
            atomicAdd(&sums[g], sum_s[g]);
            seen[g] = 1;
        }
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *pkey, *pname, *skey, *snat, *pspart, *pssupp, *pscost, *okey, *odate, *lkey,
        *lpart, *lsupp, *lqty, *lprice, *ldisc;
    const dkb_cand_param *color;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_name:str", &pkey, &pname) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_supplycost:dec2", &pspart, &pssupp, &pscost) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderdate:i32", &okey, &odate) ||
        DKB_BIND_COLS(db, "lineitem",
                      "l_orderkey:i32 l_partkey:i32 l_suppkey:i32 l_quantity:dec2 l_extendedprice:dec2 l_discount:dec2",
                      &lkey, &lpart, &lsupp, &lqty, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "color:str", &color))
        return DKB_CAND_EINVAL;
    if (nkey->n > NAT || res->ncols != 3 || res->cols[0].type != DKB_CAND_RES_STRING ||
        res->cols[1].type != DKB_CAND_RES_INT || res->cols[2].type != DKB_CAND_RES_DECIMAL || res->cols[2].scale < 4)
        return DKB_CAND_EINVAL;
    const size_t clen = strlen(color->s);
    if (clen + 2 > MAXPAT) {
        fprintf(stderr, "q09.full.cu: color of %zu bytes over the %d-byte pattern buffer\n", clen, MAXPAT - 2);
        return DKB_CAND_EINVAL;
    }

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t np = pkey->n, ns = skey->n, nps = pspart->n, no = okey->n, nl = lkey->n;
    const int64_t maxp = np, maxs = ns; /* dense keys 1..N */
    const int64_t nchunks = (no + OCHUNK - 1) / OCHUNK;
    int rc = 0, sms = 0, h_bad = 0;
    int64_t grid = 0, r = 0;
    unsigned long long h_count = 0, cap = 16;
    /* the whole columns in one pass, or the loads of lineitem and orders */
    static const char *const COLS[] = {"l_orderkey", "l_partkey",       "l_suppkey",  "l_quantity",
                                       "l_extendedprice", "l_discount", "o_orderkey", "o_orderdate"};
    dkb_stream st;
    int have = 0; /* st.cols holds a pass */
    memset(&st, 0, sizeof st);
    like_pattern pat;
    year_bounds yb;
    uint8_t *d_match = NULL, *d_snat = NULL;
    unsigned long long *d_count = NULL, *d_sums = NULL;
    slot *d_table = NULL;
    int64_t *d_bound = NULL;
    int *d_seen = NULL, *d_bad = NULL;
    void *d_block = NULL, *d_block2 = NULL; /* the buffers; the cost table (sized by the first round trip) */
    unsigned long long h_sums[NGROUP];
    int h_seen[NGROUP];
    int32_t h_nk[NAT];
    uint8_t h_nn[NAT];
    int code_of[NAT];
    dkb_cand_res_col *c_nat = &res->cols[0], *c_year = &res->cols[1], *c_sum = &res->cols[2];
    memset(&pat, 0, sizeof pat);
    pat.p[0] = '%';
    memcpy(pat.p + 1, color->s, clen);
    pat.p[clen + 1] = '%';
    pat.len = (int)clen + 2;
    pat.plain = strchr(color->s, '%') == NULL && strchr(color->s, '_') == NULL;
    for (int y = 0; y <= NYEAR; y++) yb.jan1[y] = (int32_t)dkb_days_from_civil(YEAR0 + y, 1, 1);
    memset(h_sums, 0, sizeof h_sums);
    memset(h_seen, 0, sizeof h_seen);

    if (np > 0 && ns > 0 && nps > 0 && no > 0 && nl > 0) {
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q09_join, TPB, 0, &sms, &grid)); /* capped per pass */
        /* 1. parts of the color; 2. their partsupp rows' count */
        const dkb_dev_part parts[] = {
            {(void **)&d_match, (size_t)maxp + 1, 0},
            {(void **)&d_count, sizeof(unsigned long long), 0},
            {(void **)&d_sums, sizeof h_sums, 0},
            {(void **)&d_seen, sizeof h_seen, 0},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_snat, (size_t)maxs + 1, NO_NATION},
            {(void **)&d_bound, sizeof(int64_t) * (nchunks + 1), DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
        part_match<<<(unsigned)(np / TPB + 1 < sms * 8 ? np / TPB + 1 : sms * 8), TPB, 0, stream>>>((const int32_t *)pkey->data,
                                                            (const int64_t *)pname->data, pname->bytes, np, maxp, pat,
                                                            d_match, d_bad);
        DKB_CUDA_TRY("part_match launch", cudaGetLastError());
        supp_nat<<<(unsigned)(sms * 4), 256, 0, stream>>>((const int32_t *)skey->data, (const int32_t *)snat->data,
                                                          ns, maxs, d_snat, d_bad);
        DKB_CUDA_TRY("supp_nat launch", cudaGetLastError());
        ps_count<<<(unsigned)(sms * 8), 256, 0, stream>>>((const int32_t *)pspart->data, nps,
                                                          (uintptr_t)pspart->data % 16 == 0, d_match, maxp, d_count);
        DKB_CUDA_TRY("ps_count launch", cudaGetLastError());
        /* 3. the first pass's chunk bounds (overlapping the count's round trip) */
        DKB_TRY(dkb_stream_begin_ex(&st, db, env, 8, COLS, DKB_STREAM_OVERLAP));
        have = dkb_stream_next(&st);
        if (have && st.cols[6].n > 0) /* st.cols[0..5]: lineitem (st.cols[0].n rows), [6..7]: orders ([6].n rows) */
            DKB_CUDA_TRY("chunk_bounds launch",
                         dkb_launch_chunk_bounds<OCHUNK>((const int32_t *)st.cols[6].data,
                                                         (const int32_t *)st.cols[0].data, st.cols[0].n,
                                                         (st.cols[6].n + OCHUNK - 1) / OCHUNK, d_bound, stream));
        {
            const dkb_host_copy back[] = {{&h_count, d_count, sizeof h_count}};
            DKB_CUDA_TRY("copy back count", dkb_copy_back(back, DKB_COUNT(back), stream));
        }
        /* 2. the cost table, at most half full */
        while (cap < 2 * h_count) cap <<= 1;
        {
            const dkb_dev_part table[] = {{(void **)&d_table, sizeof(slot) * cap, 0}}; /* keys EMPTY_KEY, sums 0 */
            DKB_CUDA_TRY("device cost table", dkb_dev_carve(table, DKB_COUNT(table), &d_block2, stream));
        }
        ps_build<<<(unsigned)(sms * 8), 256, 0, stream>>>((const int32_t *)pspart->data,
                                                          (const int32_t *)pssupp->data,
                                                          (const int64_t *)pscost->data, nps,
                                                          (uintptr_t)pspart->data % 16 == 0, d_match, maxp, d_table,
                                                          cap - 1);
        DKB_CUDA_TRY("ps_build launch", cudaGetLastError());
        /* 4. the join, pass by pass (each pass's bounds enqueued before it) */
        while (have) {
            const dkb_cand_vec *c = st.cols;
            const int64_t pnl = c[0].n, pno = c[6].n, pch = (pno + OCHUNK - 1) / OCHUNK; /* pch <= nchunks */
            if (pno > 0) {
                q09_join<<<(unsigned)(grid < pch ? grid : pch), TPB, 0, stream>>>(
                    (const int32_t *)c[6].data, (const int32_t *)c[7].data, pno, (const int32_t *)c[0].data,
                    (const int32_t *)c[1].data, (const int32_t *)c[2].data, (const int64_t *)c[3].data,
                    (const int64_t *)c[4].data, (const int64_t *)c[5].data, pnl,
                    (uintptr_t)c[0].data % 16 == 0 && (uintptr_t)c[1].data % 16 == 0, d_bound, pch, d_match, maxp,
                    d_table, cap - 1, d_snat, maxs, yb, d_sums, d_seen, d_bad);
                DKB_CUDA_TRY("q09_join launch", cudaGetLastError());
            }
            have = dkb_stream_next(&st); /* the next load (its copy overlaps this join), this one released */
            if (have && st.cols[6].n > 0)
                DKB_CUDA_TRY("chunk_bounds launch",
                             dkb_launch_chunk_bounds<OCHUNK>((const int32_t *)st.cols[6].data,
                                                             (const int32_t *)st.cols[0].data, st.cols[0].n,
                                                             (st.cols[6].n + OCHUNK - 1) / OCHUNK, d_bound, stream));
        }
        DKB_TRY(dkb_stream_end(&st));
        const dkb_host_copy back[] = {
            {h_sums, d_sums, sizeof h_sums}, {h_seen, d_seen, sizeof h_seen}, {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
        DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q09.full.cu: %s\n",
                    h_bad & 1 ? "a part/supplier key outside 1..N or lineitem not grouped in orders' order"
                              : "an order date outside 1992..1999");
    }
    /* across ranks (lineitem and orders co-partitioned by orderkey; part,
     * partsupp, supplier, nation whole): every rank's 2048 (nation, year)
     * sums (two's complement, as the device adds them) and seen marks
     * summed in one all-reduce of int64 (a rank with an empty share adds
     * its zeros); rank 0 writes */
    if (env->nranks > 1) {
        int64_t *m = (int64_t *)malloc(sizeof(int64_t) * 2 * NGROUP);
        DKB_FAIL_IF(!m, DKB_CAND_ENOMEM, "q09.full.cu: no memory for the ranks' merge\n");
        for (int g = 0; g < NGROUP; g++) m[g] = (int64_t)h_sums[g], m[NGROUP + g] = h_seen[g] != 0;
        const int mrc = dkb_ranks_sum_i64(env, m, 2 * NGROUP);
        for (int g = 0; g < NGROUP && !mrc; g++) h_sums[g] = (unsigned long long)m[g], h_seen[g] = m[NGROUP + g] != 0;
        free(m);
        DKB_TRY(mrc);
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    /* groups by nation name code, year desc */
    DKB_CUDA_TRY("fetch nation keys", dkb_copy_col_to_host(h_nk, nkey, sizeof(int32_t), stream));
    DKB_CUDA_TRY("fetch nation names", dkb_copy_col_to_host(h_nn, nname, sizeof(uint8_t), stream));
    for (int n = 0; n < NAT; n++) code_of[n] = -1;
    for (int64_t i = 0; i < nkey->n; i++)
        if (h_nk[i] >= 0 && h_nk[i] < NAT) code_of[h_nk[i]] = h_nn[i];
    c_nat->str_off[0] = 0;
    for (int code = 0; code < nname->dict->size; code++)
        for (int n = 0; n < NAT; n++) {
            if (code_of[n] != code) continue;
            for (int y = NYEAR - 1; y >= 0; y--) {
                if (!h_seen[n * NYEAR + y]) continue;
                const int64_t at = c_nat->str_off[r], len = (int64_t)nname->dict->len[code];
                DKB_FAIL_IF(r >= res->cap || at + len > c_nat->bytes_cap, DKB_CAND_ECAP,
                            "q09.full.cu: result larger than its capacity\n");
                memcpy(c_nat->str_bytes + at, nname->dict->str[code], (size_t)len);
                c_nat->str_off[r + 1] = at + len;
                __int128 s = (int64_t)h_sums[n * NYEAR + y];
                for (int sc = 4; sc < c_sum->scale; sc++) s *= 10;
                c_year->i64[r] = YEAR0 + y;
                c_sum->dec[r] = s;
                c_nat->is_null[r] = c_year->is_null[r] = c_sum->is_null[r] = 0;
                r++;
            }
        }
    res->nrows = r;
done:
    dkb_stream_end(&st); /* a load still held after a failure (after its kernels were enqueued) */
    if (d_block2) cudaFreeAsync(d_block2, stream);
    dkb_dev_release(d_block, stream);
    return rc;
}
