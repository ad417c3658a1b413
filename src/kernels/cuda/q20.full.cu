/* q20.full.cu: expert CUDA full-mode candidate for TPC-H Q20 (Potential Part
 * Promotion).
 *
 *   select s_name, s_address from supplier, nation
 *   where s_suppkey in (select ps_suppkey from partsupp
 *           where ps_partkey in (select p_partkey from part where p_name like ':color%')
 *             and ps_availqty > (select 0.5 * sum(l_quantity) from lineitem
 *                                where l_partkey = ps_partkey and l_suppkey = ps_suppkey
 *                                  and l_shipdate >= date ':date'
 *                                  and l_shipdate < date ':date' + interval '1' year))
 *     and s_nationkey = n_nationkey and n_name = ':nation'
 *   order by s_name;
 *
 * Plan (all on env->stream):
 *  1. The nation's key from the 25-row nation table (copied to the host).
 *  2. part_prefix: a warp per 32 parts, a lane per part, compares the
 *     start of p_name with the color (a prefix test on the free text, the
 *     color in device memory); a ballot gives the word of a bitmap over
 *     partkey - 1 (part keys dense 1..N).
 *  3. ps_count: partsupp rows whose part bit is set (~1%) are counted (keys
 *     four at a time, their bit gathers in flight together; one atomic per
 *     warp); the count sizes a compact open-addressing table keyed by
 *     (partkey, suppkey) (load <= 1/2), filled by ps_insert (a second pass
 *     over ps_partkey, atomicCAS) with ps_availqty.
 *  4. q20_scan, built for memory-level parallelism: each warp streams
 *     l_shipdate in tiles of 256 dates (two 16-byte loads per lane); a lane
 *     with a date of the year (~1/7) in a group of four loads those four
 *     l_partkey (16 bytes) and tests the part bit of each line of the year
 *     (gathers in flight together). Lines that pass both (~0.15%) go to a
 *     per-warp queue in shared memory; each time it holds 32, every lane
 *     takes one, reads l_suppkey and l_quantity together and probes the
 *     table, adding the quantity into the slot's sum (global atomics over
 *     ~80K slots, ~90K lines at SF10: rare enough that no pre-aggregation
 *     pays) and marking it seen. The first version tested every line row by
 *     row with dependent loads in a branch (465 us at SF10).
 *  5. qualify: a slot with lines and 200 * availqty > sum (hundredths; exact;
 *     a slot without lines drops out as SQL's comparison with NULL) marks
 *     its supplier (suppkey - 1); supp_select lists the marked suppliers of
 *     the nation (rows; supplier keys dense 1..N in row order).
 *  6. The listed suppliers' s_name and s_address are gathered on the device
 *     (lengths, host prefix sum, copy), sorted by name on the host.
 *
 * Bytes read (floor, SF10): lineitem l_shipdate + l_partkey 8 B x 60M =
 * 0.48 GB (l_suppkey, l_quantity only for ~0.15% of lines; counted whole:
 * + 0.72 GB); part p_name offsets 8 B x 2M + the first bytes (~32 MB);
 * partsupp ps_partkey 4 B x 8M = 32 MB, read twice (+ the chosen rows'
 * suppkey, availqty); supplier s_nationkey 0.4 MB. About 0.55 GB, ~0.13 ms.
 *
 * Under a memory budget (env->budget streams lineitem; part, partsupp,
 * supplier and nation are whole) step 4 runs once per load of l_shipdate,
 * l_partkey, l_suppkey and l_quantity, through a dkb_stream walk with
 * DKB_STREAM_OVERLAP (the next load's copy overlaps this load's scan);
 * without one the walk is one pass over the whole columns, as before.
 * Every pass adds into the same table slots (integer atomics: exact and
 * order-free, so the sums are the whole table's whatever the loads); steps
 * 5 and 6 run once after the walk. No sync per pass. */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_ranks.h" // defines: dkb_ranks_gather, dkb_ranks_writes (the ranks' partials merged)
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)

namespace cg = cooperative_groups;

/* TPB threads a block; a warp reads tiles of TILE_ROWS dates (VEC int4 per
 * lane); its queue holds a tile's rows plus the < 32 left over. */
enum { TPB = 256, WARPS = TPB / 32, VEC = 2, TILE_ROWS = 32 * 4 * VEC, QCAP = TILE_ROWS + 32 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

/* the streamed columns, in the order the walk hands them out */
static const char *const Q20_COLS[] = {"l_shipdate", "l_partkey", "l_suppkey", "l_quantity"};

__device__ static inline uint64_t slot_of(uint64_t key, int shift) { return (key * 0x9E3779B97F4A7C15ull) >> shift; }

/* Append v to list (warp-aggregated: one atomic per group of lanes). */
__device__ static inline void list_push(int64_t *__restrict__ list, unsigned long long *__restrict__ count, int64_t v) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned long long base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(count, (unsigned long long)g.size());
    base = g.shfl(base, 0);
    list[base + g.thread_rank()] = v;
}

/* bits[w] bit j: part row 32w + j has a name that starts with color. One
 * warp per 32-part word, a lane per part (offsets and first bytes of 32
 * names read together), the word from a ballot. */
__global__ void part_prefix(const int64_t *__restrict__ off, const char *__restrict__ text, int64_t np,
                            const char *__restrict__ color, int64_t clen, uint32_t *__restrict__ bits) {
    const int64_t nwords = (np + 31) / 32, nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    for (int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < nwords; w += nwarps) {
        const int64_t r = w * 32 + lane;
        bool same = false;
        if (r < np) {
            const int64_t a = __ldg(off + r);
            same = __ldg(off + r + 1) - a >= clen;
            for (int64_t k = 0; k < clen && same; k++) same = __ldg(text + a + k) == __ldg(color + k);
        }
        const uint32_t m = __ballot_sync(0xffffffffu, same);
        if (lane == 0) bits[w] = m;
    }
}

/* 1 when part key - 1 is a row of part with its bit set. */
__device__ __forceinline__ uint32_t part_bit(int32_t key, int64_t np, const uint32_t *__restrict__ bits) {
    const uint32_t p = (uint32_t)key - 1u;
    if ((uint64_t)p >= (uint64_t)np) return 0;
    return (__ldg(bits + (p >> 5)) >> (p & 31)) & 1u;
}

/* *count += the partsupp rows whose part has its bit (one atomic per warp).
 * The first 4 * n4 keys four at a time (16-byte loads, their four bit
 * gathers in flight together), the rest one by one. */
__global__ void ps_count(const int32_t *__restrict__ pspart, int64_t nps, int64_t n4, int64_t np,
                         const uint32_t *__restrict__ bits, unsigned long long *__restrict__ count) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    unsigned c = 0;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n4; v += stride) {
        const int4 k = __ldg((const int4 *)pspart + v);
        c += part_bit(k.x, np, bits) + part_bit(k.y, np, bits) + part_bit(k.z, np, bits) + part_bit(k.w, np, bits);
    }
    for (int64_t i = 4 * n4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nps; i += stride)
        c += part_bit(__ldg(pspart + i), np, bits);
    for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, (unsigned long long)c);
}

/* Partsupp row i (its part chosen) into the table. */
__device__ __forceinline__ void ps_put(int64_t i, int32_t pk, const int32_t *__restrict__ pssupp,
                                       const int32_t *__restrict__ psavail, unsigned long long *__restrict__ tkey,
                                       int32_t *__restrict__ tavail, int shift, uint64_t mask) {
    const unsigned long long key = (unsigned long long)(uint32_t)pk << 32 | (uint32_t)__ldg(pssupp + i);
    const int32_t avail = __ldg(psavail + i);
    uint64_t s = slot_of(key, shift);
    for (;;) {
        const unsigned long long old = atomicCAS(tkey + s, 0ull, key);
        if (old == 0ull || old == key) break;
        s = (s + 1) & mask;
    }
    atomicMax(tavail + s, avail);
}

/* The partsupp rows whose part has its bit into the table (key 0: empty;
 * part keys are >= 1, so a real key is never 0). (partkey, suppkey) is
 * partsupp's key by the spec, but dbgen repeats pairs below SF 0.01; the
 * copies share the pair's lineitem sum, and the supplier qualifies when any
 * copy does, so a slot keeps the largest availqty (tavail preset to a
 * value below any int32 availqty the data holds: 0x80808080). Keys read
 * as in ps_count. */
__global__ void ps_insert(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                          const int32_t *__restrict__ psavail, int64_t nps, int64_t n4, int64_t np,
                          const uint32_t *__restrict__ bits, unsigned long long *__restrict__ tkey,
                          int32_t *__restrict__ tavail, int shift, uint64_t mask) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < n4; v += stride) {
        const int4 k = __ldg((const int4 *)pspart + v);
        const int32_t key[4] = {k.x, k.y, k.z, k.w};
        uint32_t in[4];
#pragma unroll
        for (int u = 0; u < 4; u++) in[u] = part_bit(key[u], np, bits);
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (in[u]) ps_put(4 * v + u, key[u], pssupp, psavail, tkey, tavail, shift, mask);
    }
    for (int64_t i = 4 * n4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nps; i += stride) {
        const int32_t pk = __ldg(pspart + i);
        if (part_bit(pk, np, bits)) ps_put(i, pk, pssupp, psavail, tkey, tavail, shift, mask);
    }
}

/* One batch of up to 32 lines (year and part bit passed), one per lane
 * (valid lanes; every lane of the warp calls it): l_suppkey and l_quantity
 * read together, the (partkey, suppkey) slot probed, the quantity added
 * (global atomics over the ~80K slots; ~0.15% of the lines get here) and
 * the slot marked seen. A pair without a partsupp row matches nothing. */
__device__ __forceinline__ void q20_batch(bool valid, int64_t i, const int32_t *__restrict__ lpart,
                                          const int32_t *__restrict__ lsupp, const int64_t *__restrict__ lqty,
                                          const unsigned long long *__restrict__ tkey, int shift, uint64_t mask,
                                          unsigned long long *__restrict__ tsum, int32_t *__restrict__ tseen) {
    if (!valid) return;
    const int32_t pk = __ldg(lpart + i), sk = __ldg(lsupp + i);
    const int64_t q = __ldg(lqty + i);
    const unsigned long long key = (unsigned long long)(uint32_t)pk << 32 | (uint32_t)sk;
    uint64_t s = slot_of(key, shift);
    unsigned long long t;
    while ((t = __ldg(tkey + s)) != 0ull && t != key) s = (s + 1) & mask;
    if (t == 0ull) return; /* no partsupp row: no subquery row matches */
    atomicAdd(tsum + s, (unsigned long long)q);
    tseen[s] = 1;
}

/* The year's lines of the chosen parts: quantity sums per table slot.
 *
 * Each warp streams tiles of TILE_ROWS dates (VEC 16-byte loads per lane;
 * the first ntiles tiles, 0 when l_shipdate or l_partkey is not 16-byte
 * aligned). A lane with a date of the year in one of its int4 groups loads
 * the matching four part keys (16 bytes), then tests the part bit of every
 * line of the year (the gathers from the bitmap in flight together). Lines
 * that pass go to the warp's queue, processed 32 at a time (q20_batch); the
 * rest (< 32) at the end. Rows ntiles * TILE_ROWS..n-1 one per lane. */
__global__ void __launch_bounds__(TPB) q20_scan(const int32_t *__restrict__ ship, const int32_t *__restrict__ lpart,
                                                const int32_t *__restrict__ lsupp, const int64_t *__restrict__ lqty,
                                                int64_t n, int64_t ntiles, int32_t lo, uint32_t span, int64_t np,
                                                const uint32_t *__restrict__ bits,
                                                const unsigned long long *__restrict__ tkey, int shift, uint64_t mask,
                                                unsigned long long *__restrict__ tsum, int32_t *__restrict__ tseen) {
    __shared__ int64_t queue_s[WARPS][QCAP];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t *queue = queue_s[warp];
    const int64_t gwarp = (int64_t)blockIdx.x * WARPS + warp, nwarps = (int64_t)gridDim.x * WARPS;
    int pending = 0;
    for (int64_t t = gwarp; t < ntiles; t += nwarps) {
        const int64_t v0 = t * (32 * VEC) + lane; /* this lane's first int4 */
        int4 d4[VEC];
#pragma unroll
        for (int v = 0; v < VEC; v++) d4[v] = __ldg((const int4 *)ship + v0 + 32 * v);
        uint32_t year = 0;
#pragma unroll
        for (int v = 0; v < VEC; v++) {
            year |= (uint32_t)((uint32_t)d4[v].x - (uint32_t)lo <= span) << (4 * v);
            year |= (uint32_t)((uint32_t)d4[v].y - (uint32_t)lo <= span) << (4 * v + 1);
            year |= (uint32_t)((uint32_t)d4[v].z - (uint32_t)lo <= span) << (4 * v + 2);
            year |= (uint32_t)((uint32_t)d4[v].w - (uint32_t)lo <= span) << (4 * v + 3);
        }
        int4 k4[VEC];
#pragma unroll
        for (int v = 0; v < VEC; v++)
            k4[v] = (year >> (4 * v)) & 15u ? __ldg((const int4 *)lpart + v0 + 32 * v) : make_int4(0, 0, 0, 0);
        uint32_t keep = 0;
#pragma unroll
        for (int v = 0; v < VEC; v++) {
            const int32_t key[4] = {k4[v].x, k4[v].y, k4[v].z, k4[v].w};
#pragma unroll
            for (int c = 0; c < 4; c++)
                if ((year >> (4 * v + c)) & 1u) keep |= part_bit(key[c], np, bits) << (4 * v + c);
        }
        pending = dkb_queue_push(queue, pending, keep, 4 * v0, lane);
        while (pending >= 32) {
            pending -= 32;
            const int64_t i = queue[pending + lane];
            __syncwarp();
            q20_batch(true, i, lpart, lsupp, lqty, tkey, shift, mask, tsum, tseen);
        }
    }
    for (int64_t base = ntiles * TILE_ROWS + gwarp * 32; base < n; base += nwarps * 32) {
        const int64_t i = base + lane;
        const bool in = i < n && (uint32_t)__ldg(ship + i) - (uint32_t)lo <= span && part_bit(__ldg(lpart + i), np, bits);
        pending = dkb_queue_push(queue, pending, in ? 1u : 0u, i, lane);
        while (pending >= 32) {
            pending -= 32;
            const int64_t r = queue[pending + lane];
            __syncwarp();
            q20_batch(true, r, lpart, lsupp, lqty, tkey, shift, mask, tsum, tseen);
        }
    }
    if (pending > 0) q20_batch(lane < pending, lane < pending ? queue[lane] : 0, lpart, lsupp, lqty, tkey, shift, mask,
                               tsum, tseen);
}

/* Slots with lines and 200 * availqty > sum mark their supplier. */
__global__ void qualify(const unsigned long long *__restrict__ tkey, const int32_t *__restrict__ tavail,
                        const unsigned long long *__restrict__ tsum, const int32_t *__restrict__ tseen, int64_t size,
                        int64_t ns, uint8_t *__restrict__ supp_ok) {
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < size; s += (int64_t)gridDim.x * blockDim.x) {
        if (!tkey[s] || !tseen[s]) continue;
        const uint32_t supp = (uint32_t)(tkey[s] & 0xffffffffu) - 1u;
        if ((int64_t)tavail[s] * 200 > (int64_t)tsum[s] && (uint64_t)supp < (uint64_t)ns) supp_ok[supp] = 1;
    }
}

/* Rows of the marked suppliers of the nation: list[0..*count). */
__global__ void supp_select(const uint8_t *__restrict__ supp_ok, const int32_t *__restrict__ snation, int64_t ns,
                            int32_t nation, int64_t *__restrict__ list, unsigned long long *__restrict__ count) {
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < ns; s += (int64_t)gridDim.x * blockDim.x)
        if (supp_ok[s] && snation[s] == nation) list_push(list, count, s);
}

/* ---- text gather: rows of a STR or dictionary column into host memory ---- */



/* A listed row as the sort by name sees it: the name's first 16 bytes as
 * two big-endian words (zero-padded), then the whole name. */
typedef struct {
    uint64_t k0, k1;
    const char *name;
    int64_t len, k; /* k: index into the listed rows */
} by_name_item;

/* The big-endian word of s[at..at + 8), zero past len. */
static uint64_t be_word(const char *s, int64_t len, int64_t at) {
    uint64_t w = 0;
    for (int64_t i = at; i < at + 8; i++) w = w << 8 | (i < len ? (uint8_t)s[i] : 0u);
    return w;
}

/* Byte order of the names (a shorter name first when it is a prefix):
 * the prefix words decide unless equal, then the whole names. */
static bool name_before(const by_name_item &x, const by_name_item &y) {
    if (x.k0 != y.k0) return x.k0 < y.k0;
    if (x.k1 != y.k1) return x.k1 < y.k1;
    const int c = memcmp(x.name, y.name, (size_t)(x.len < y.len ? x.len : y.len));
    return c ? c < 0 : x.len < y.len;
}

/* ---- across ranks (env->nranks > 1) ----
 *
 * lineitem is split, part and partsupp whole on every rank: the lines of a
 * (part, supplier) are on every rank, and every rank's table holds the
 * same keys, but not in the same slots (ps_insert claims slots by
 * atomicCAS, so collisions land by arrival). So, as the CPU expert, the
 * sums are merged by key: the table comes to the host, this rank's (key,
 * sum) of the slots it saw are gathered in rank order (dkb_ranks_gather),
 * and every rank's entries are added into this rank's table by lookup (the
 * same hash and linear probing as on the device), whose sums and seen
 * marks go back to the device for qualify. */

/* slot_of on the host. */
static inline uint64_t q20_slot_of_host(uint64_t key, int shift) { return (key * 0x9E3779B97F4A7C15ull) >> shift; }

typedef struct {
    uint64_t key;
    int64_t total;
} q20_key_sum;

/* d_tsum[0, size) and d_tseen[0, size) replaced by the sums over the ranks,
 * by key (d_tkey: this rank's layout). */
static int q20_ranks_merge(const dkb_cand_env *env, const unsigned long long *d_tkey, unsigned long long *d_tsum,
                           int32_t *d_tseen, int64_t size, int shift, cudaStream_t stream) {
    int rc = 0;
    const uint64_t mask = (uint64_t)(size - 1);
    uint64_t *tkey = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)size);
    int64_t *tsum = (int64_t *)malloc(sizeof(int64_t) * (size_t)size);
    int32_t *tseen = (int32_t *)malloc(sizeof(int32_t) * (size_t)size);
    q20_key_sum *mine = (q20_key_sum *)malloc(sizeof(q20_key_sum) * (size_t)(size + 1));
    void *every = NULL;
    int64_t nm = 0, ne = 0;
    DKB_FAIL_IF(!tkey || !tsum || !tseen || !mine, DKB_CAND_ENOMEM,
                "q20.full.cu: out of host memory for the ranks' merge\n");
    {
        const dkb_host_copy back[] = {{tkey, d_tkey, sizeof(uint64_t) * (size_t)size},
                                      {tsum, d_tsum, sizeof(int64_t) * (size_t)size},
                                      {tseen, d_tseen, sizeof(int32_t) * (size_t)size}};
        DKB_CUDA_TRY("copy back the table for the ranks' merge", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int64_t s = 0; s < size; s++)
        if (tkey[s] && tseen[s]) mine[nm].key = tkey[s], mine[nm].total = tsum[s], nm++;
    DKB_TRY(dkb_ranks_gather(env, mine, nm, sizeof *mine, &every, &ne));
    memset(tsum, 0, sizeof(int64_t) * (size_t)size);
    memset(tseen, 0, sizeof(int32_t) * (size_t)size);
    for (int64_t i = 0; i < ne; i++) {
        const q20_key_sum *e = (const q20_key_sum *)every + i;
        uint64_t s = q20_slot_of_host(e->key, shift) & mask;
        while (tkey[s] && tkey[s] != e->key) s = (s + 1) & mask;
        if (!tkey[s]) continue; /* not in this rank's table: cannot be (the same partsupp on every rank) */
        tsum[s] = (int64_t)((uint64_t)tsum[s] + (uint64_t)e->total), tseen[s] = 1;
    }
    DKB_CUDA_TRY("merged sums to the device",
                 cudaMemcpyAsync(d_tsum, tsum, sizeof(int64_t) * (size_t)size, cudaMemcpyHostToDevice, stream));
    DKB_CUDA_TRY("merged marks to the device",
                 cudaMemcpyAsync(d_tseen, tseen, sizeof(int32_t) * (size_t)size, cudaMemcpyHostToDevice, stream));
    DKB_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream)); /* before tsum and tseen go */
done:
    dkb_ranks_gather_free(every, mine);
    free(tkey);
    free(tsum);
    free(tseen);
    free(mine);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *pname, *pspart, *pssupp, *psavail, *lpart, *lsupp, *lqty, *lship, *sname, *saddr, *snation,
        *nkey, *nname;
    const dkb_cand_param *pcolor, *pdate, *pnation;
    dkb_cand_res_col *c_name, *c_addr;
    if (DKB_BIND_COLS(db, "part", "p_name:str", &pname) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_availqty:i32", &pspart, &pssupp, &psavail) ||
        DKB_BIND_COLS(db, "lineitem", "l_partkey:i32 l_suppkey:i32 l_quantity:dec2 l_shipdate:i32", &lpart, &lsupp,
                      &lqty, &lship) ||
        DKB_BIND_COLS(db, "supplier", "s_name:str s_address s_nationkey:i32", &sname, &saddr, &snation) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_PARAMS(params, "color:str date nation:str", &pcolor, &pdate, &pnation) ||
        DKB_BIND_RES(res, "s_name:str s_address:str", &c_name, &c_addr))
        return DKB_CAND_EINVAL;
    const int64_t hi = dkb_add_months(pdate->i, 12) - 1;
    if (pdate->i < INT32_MIN || hi > INT32_MAX) return DKB_CAND_EINVAL;
    res->nrows = 0;
    c_name->str_off[0] = c_addr->str_off[0] = 0;

    cudaStream_t stream = dkb_cand_stream(env);
    const int ncode = dkb_cand_dict_code(nname->dict, pnation->s);
    const int64_t np = pname->n, nwords = (np + 31) / 32, nps = pspart->n, nl = lpart->n, ns = sname->n;
    const int64_t nn = nname->n, ps_n4 = (uintptr_t)pspart->data % 16 == 0 ? nps / 4 : 0;
    const size_t clen = strlen(pcolor->s);
    int rc = 0, sms = 0, shift = 64;
    int64_t nation = -1, nsel = 0, size = 1, m = 0;
    uint8_t *h_ncode = NULL;
    int32_t *h_nkey = NULL;
    unsigned long long *d_count = NULL, h_count[2] = {0, 0}; /* [0]: partsupp rows, [1]: suppliers */
    uint32_t *d_bits = NULL;
    char *d_color = NULL;
    int64_t *d_rows = NULL;
    unsigned long long *d_tkey = NULL, *d_tsum = NULL;
    int32_t *d_tavail = NULL, *d_tseen = NULL;
    uint8_t *d_ok = NULL;
    int64_t *t_off[2] = {NULL, NULL};
    char *t_bytes[2] = {NULL, NULL};
    by_name_item *order = NULL;
    void *d_block = NULL, *d_block2 = NULL; /* the first buffers; the table sized by the first count */
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */

    /* the nation's key (the nation table is on the device: 25 rows) */
    if (ncode < 0 || nn == 0 || np == 0 || nps == 0 || (nl == 0 && env->nranks <= 1) || ns == 0)
        return 0; /* across ranks an empty lineitem share still merges (below) */
    h_ncode = (uint8_t *)malloc((size_t)nn);
    h_nkey = (int32_t *)malloc(sizeof(int32_t) * (size_t)nn);
    DKB_FAIL_IF(!h_ncode || !h_nkey, DKB_CAND_ENOMEM, "q20.full.cu: out of host memory for the nation table\n");
    {
        const dkb_host_copy back[] = {{h_ncode, nname->data, (size_t)nn},
                                      {h_nkey, nkey->data, sizeof(int32_t) * (size_t)nn}};
        DKB_CUDA_TRY("copy back the nation table", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    for (int64_t r = 0; r < nn; r++)
        if (h_ncode[r] == ncode) nation = h_nkey[r];
    if (nation < 0) goto done;

    DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
    /* part bitmap, the chosen parts' partsupp rows */
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_count, sizeof(unsigned long long) * 2, 0},
            {(void **)&d_bits, sizeof(uint32_t) * (size_t)nwords, DKB_NO_FILL},
            {(void **)&d_color, clen + 1, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    DKB_CUDA_TRY("cudaMemcpyAsync color", cudaMemcpyAsync(d_color, pcolor->s, clen + 1, cudaMemcpyHostToDevice, stream));
    part_prefix<<<(unsigned)((nwords + 7) / 8 < sms * 16 ? (nwords + 7) / 8 : sms * 16), 256, 0, stream>>>(
        (const int64_t *)pname->data, pname->bytes, np, d_color, (int64_t)clen, d_bits); /* a warp per word */
    DKB_CUDA_TRY("part_prefix launch", cudaGetLastError());
    ps_count<<<(unsigned)(sms * 8), 256, 0, stream>>>((const int32_t *)pspart->data, nps, ps_n4, np, d_bits, d_count);
    DKB_CUDA_TRY("ps_count launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{h_count, d_count, sizeof(unsigned long long)}};
        DKB_CUDA_TRY("copy back the partsupp count", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    nsel = (int64_t)h_count[0];
    if (nsel == 0) goto done;

    /* the (partkey, suppkey) table, load <= 1/2 */
    while (size < 2 * nsel + 2) size <<= 1, shift--;
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_tkey, sizeof(unsigned long long) * size, 0},
            {(void **)&d_tsum, sizeof(unsigned long long) * size, 0},
            {(void **)&d_tseen, sizeof(int32_t) * size, 0},
            {(void **)&d_ok, (size_t)ns, 0},
            {(void **)&d_tavail, sizeof(int32_t) * size, 0x80},
            {(void **)&d_rows, sizeof(int64_t) * (size_t)ns, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device table", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block2, stream));
    }
    ps_insert<<<(unsigned)(sms * 8), 256, 0, stream>>>((const int32_t *)pspart->data, (const int32_t *)pssupp->data,
                                                       (const int32_t *)psavail->data, nps, ps_n4, np, d_bits, d_tkey,
                                                       d_tavail, shift, (uint64_t)(size - 1));
    DKB_CUDA_TRY("ps_insert launch", cudaGetLastError());
    {
        int64_t grid = 0;
        DKB_CUDA_TRY("resident grid", dkb_resident_grid(q20_scan, TPB, 0, &sms, &grid)); /* one resident wave */
        /* the whole columns in one pass, or under a budget load by load (each pass
         * adds into the table's sums) */
        for (dkb_stream_begin_ex(&st, db, env, 4, Q20_COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
            const dkb_cand_vec *c = st.cols;
            const int64_t m_rows = c[0].n;
            if (m_rows <= 0) continue;
            const int64_t g = grid < (m_rows + TPB - 1) / TPB ? grid : (m_rows + TPB - 1) / TPB;
            const bool aligned = (uintptr_t)c[0].data % 16 == 0 && (uintptr_t)c[1].data % 16 == 0;
            q20_scan<<<(unsigned)g, TPB, 0, stream>>>(
                (const int32_t *)c[0].data, (const int32_t *)c[1].data, (const int32_t *)c[2].data,
                (const int64_t *)c[3].data, m_rows, aligned ? m_rows / 4 / (32 * VEC) : 0, (int32_t)pdate->i,
                (uint32_t)(hi - pdate->i), np, d_bits, d_tkey, shift, (uint64_t)(size - 1), d_tsum, d_tseen);
            DKB_CUDA_TRY("q20_scan launch", cudaGetLastError());
        }
        DKB_TRY(dkb_stream_end(&st));
    }
    /* across ranks: every rank's sums by (part, supplier) key added up into
     * d_tsum / d_tseen; rank 0 qualifies and writes */
    if (env->nranks > 1) {
        DKB_TRY(q20_ranks_merge(env, d_tkey, d_tsum, d_tseen, size, shift, stream));
        if (!dkb_ranks_writes(env, res)) goto done;
    }
    qualify<<<(unsigned)((size + 255) / 256), 256, 0, stream>>>(d_tkey, d_tavail, d_tsum, d_tseen, size, ns, d_ok);
    DKB_CUDA_TRY("qualify launch", cudaGetLastError());
    /* the nation's marked suppliers (rows) */
    supp_select<<<(unsigned)((ns + 255) / 256), 256, 0, stream>>>(d_ok, (const int32_t *)snation->data, ns,
                                                                  (int32_t)nation, d_rows, d_count + 1);
    DKB_CUDA_TRY("supp_select launch", cudaGetLastError());
    {
        const dkb_host_copy back[] = {{h_count, d_count, sizeof(unsigned long long) * 2}};
        DKB_CUDA_TRY("copy back the counts", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    m = (int64_t)h_count[1];
    if (m == 0) goto done;
    DKB_FAIL_IF(m > res->cap, DKB_CAND_ECAP, "q20.full.cu: %lld result rows over the cap %lld\n", (long long)m,
                (long long)res->cap);
    rc = dkb_fetch_text(sname, d_rows, m, stream, &t_off[0], &t_bytes[0]);
    if (!rc) rc = dkb_fetch_text(saddr, d_rows, m, stream, &t_off[1], &t_bytes[1]);
    if (rc) goto done;
    order = (by_name_item *)malloc(sizeof(by_name_item) * (size_t)m);
    if (!order)
        DKB_FAIL(DKB_CAND_ENOMEM);
    for (int64_t k = 0; k < m; k++) {
        by_name_item *it = &order[k];
        it->name = t_bytes[0] + t_off[0][k];
        it->len = t_off[0][k + 1] - t_off[0][k];
        it->k = k;
        it->k0 = be_word(it->name, it->len, 0);
        it->k1 = be_word(it->name, it->len, 8);
    }
    std::sort(order, order + m, name_before); /* inline compares: ~10x glibc qsort's */
    for (int64_t r = 0; r < m; r++) {
        const int64_t k = order[r].k;
        DKB_FAIL_IF(
            (dkb_put_str(c_name, r, order[r].name, order[r].len) != DKB_CAND_OK) ||
                (dkb_put_str(c_addr, r, t_bytes[1] + t_off[1][k], t_off[1][k + 1] - t_off[1][k]) != DKB_CAND_OK),
            DKB_CAND_ECAP, "q20.full.cu: result text over its byte cap\n");
    }
    res->nrows = m;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    if (d_block2) cudaFreeAsync(d_block2, stream);
    dkb_dev_release(d_block, stream);
    for (int t = 0; t < 2; t++) free(t_off[t]), free(t_bytes[t]);
    free(h_ncode);
    free(h_nkey);
    free(order);
    return rc;
}
