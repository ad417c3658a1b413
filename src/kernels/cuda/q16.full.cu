/* q16.full.cu: expert CUDA full-mode candidate for TPC-H Q16 (Parts/Supplier
 * Relationship).
 *
 *   select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
 *   from partsupp, part
 *   where p_partkey = ps_partkey and p_brand <> ':brand' and p_type not like ':type%'
 *     and p_size in (:size1, ..., :size8)
 *     and ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
 *   group by p_brand, p_type, p_size
 *   order by supplier_cnt desc, p_brand, p_type, p_size;
 *
 * Plan (all on env->stream; the CPU expert's logic):
 *  1. Host: the brand and type-prefix tests become byte tables over the
 *     dictionary codes, the sizes a 64-bit mask and a rank per size (the
 *     group's size index, ascending); passed to the kernel by value.
 *  2. complaints: one thread per supplier row tests s_comment like
 *     '%Customer%Complaints%' (the leftmost "Customer", then "Complaints"
 *     after it: exact) into a byte per suppkey - 1 (supplier keys dense).
 *  3. q16_keep: warp w owns a contiguous range of partsupp rows, reads each
 *     row's part columns at ps_partkey - 1 (part keys dense 1..N) and
 *     appends each kept row's pair key (group << 32 | suppkey) to its own
 *     region of a list (ballot prefix, no atomics but one per warp for the
 *     total kept). The group is the dense index (brand code, type code,
 *     size rank).
 *  4. set_clear zeroes only as many pair-set slots as the kept count needs
 *     (power of two >= 2 * kept + 2, read on the device: no round trip);
 *     q16_insert inserts the listed keys (atomicCAS, load <= 1/2); the
 *     thread whose insert created the pair adds 1 to its group's count:
 *     count(distinct) exactly, in any order of the threads, repeated pairs
 *     included. At SF10 ~1M of 8M rows are kept: a 32 MB set (L2-resident)
 *     cleared instead of a 256 MB one sized for every row.
 *  5. The counts per group come back (one round trip). The host lists the
 *     non-empty groups in index order as (~count << 32 | group) and sorts
 *     them stably by the high half (LSD radix, 11-bit digits, only the
 *     digits in which counts differ: one pass at SF10): count desc, then
 *     group index asc (codes sort as strings and ranks as sizes, so that is
 *     p_brand, p_type, p_size). The text columns are written with one fixed
 *     32-byte copy per string from padded dictionary copies (exact copies
 *     for longer strings or near the byte cap).
 *
 * Under a memory budget (env->budget streams part and partsupp, co-
 * partitioned by partkey) step 3 runs once per load of both tables'
 * columns (one dkb_stream walk with DKB_STREAM_OVERLAP: the next load's
 * copy overlaps this one's kernel): a load's partsupp rows find their part
 * in the same load, at ps_partkey - 1 - the load's first part row (a key
 * outside the load's parts sets the bad flag). Each load's warps write
 * their keys into the list from the load's first partsupp row on (the
 * load's rows are after the earlier loads' in the list) and their (start,
 * count) at the next free warp entries; steps 4 and 5 run once after the
 * walk over all the loads' warps (the same set, the same counts: distinct
 * pairs do not depend on how the rows were split). The chunk (rows per
 * warp) is the whole table's, so a load needs at most one warp more than
 * its share. Without a budget the walk is one pass over the whole columns
 * (the same launches as before).
 *
 * Host cost (SF10, ~27k groups; measured on a 2-core x86 host): sort ~30 us
 * (glibc qsort before: ~3 ms), result rows ~45 us (~150 us with exact
 * memcpy per string).
 *
 * Bytes read (floor, SF10): ps_partkey, ps_suppkey 8 B x 8M, p_brand,
 * p_type, p_size 6 B x 2M, s_comment ~0.7 MB offsets + ~6 MB text.
 *
 * Across ranks (DKB_CANDIDATE_RANKS, env->nranks > 1): part and partsupp
 * are split together by partkey (supplier whole on every rank). A share's
 * part rows start at whole-table row (its first p_partkey - 1: read once
 * from the device), so q16_keep's part row is ps_partkey - 1 less that
 * row (and the pass's row_start). A group (brand, type, size) holds parts
 * of every rank and a supplier may supply parts of several, so the counts
 * per group cannot be summed: after step 4 each rank copies its pair set's
 * slots back (ranks_merge) and its distinct (group << 32 | suppkey) keys
 * are gathered in rank order (dkb_ranks_gather, as the CPU expert gathers
 * its pairs); rank 0 counts the distinct keys of their union per group
 * into the counts (a host hash set) and goes on with step 5 as on one
 * rank; the other ranks return no rows. A rank whose share is empty still
 * takes part (its walk is empty). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh" // defines: DKB_CUDA_TRY and the CUDA toolkit
#include "dkb/cand_stream.h" // defines: dkb_stream_begin_ex/next/end (whole columns, or loads under a budget)
#include "dkb/cand_ranks.h"  // defines: dkb_ranks_gather, dkb_ranks_writes (the ranks' partials merged)

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: part and partsupp load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its distinct pairs merged through env->comm */

enum { TPB = 256 };

/* The part-side tests, passed by value to the scan. */
typedef struct {
    uint8_t brand_ok[256], type_ok[256];
    int8_t size_rank[64]; /* rank of a wanted size among the wanted sizes, else -1 */
    unsigned long long size_mask;
    int ntype, nsizes;
} part_tests;

/* The first occurrence of w (length L >= 1) starting in [p, end - L], or
 * -1 (as an offset from p). */
__device__ static int64_t find_word(const char *__restrict__ p, int64_t n, const char *w, int64_t L) {
    for (int64_t i = 0; i + L <= n; i++) {
        int64_t k = 0;
        while (k < L && p[i + k] == w[k]) k++;
        if (k == L) return i;
    }
    return -1;
}

/* bad_supp[s] = 1 when supplier row s's comment is like
 * '%Customer%Complaints%'. */
__global__ void complaints(const int64_t *__restrict__ off, const char *__restrict__ text, int64_t ns,
                           uint8_t *__restrict__ bad_supp) {
    const char cust[8] = {'C', 'u', 's', 't', 'o', 'm', 'e', 'r'};
    const char comp[10] = {'C', 'o', 'm', 'p', 'l', 'a', 'i', 'n', 't', 's'};
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < ns; s += (int64_t)gridDim.x * blockDim.x) {
        const int64_t a = off[s], n = off[s + 1] - a;
        const char *p = text + a;
        const int64_t x = find_word(p, n, cust, 8);
        bad_supp[s] = x >= 0 && find_word(p + x + 8, n - x - 8, comp, 10) >= 0;
    }
}

static __device__ inline uint64_t slot_of(uint64_t key, int shift) { return (key * 0x9E3779B97F4A7C15ull) >> shift; }

/* The pair set's slots for nkept keys: the least power of two >= 2 * nkept
 * + 2 (load <= 1/2), at most cap (cap is that size for every row kept). */
static __device__ inline int64_t set_slots(unsigned long long nkept, int64_t cap) {
    int64_t s = 2;
    while (s < cap && (unsigned long long)s < 2ull * nkept + 2ull) s <<= 1;
    return s;
}

/* Over this pass's nps partsupp rows and nparts part rows (part rows
 * pfirst .. pfirst + nparts - 1 of the whole table; part keys dense 1..N:
 * key k is row k - 1): warp w of the grid owns partsupp rows [w * chunk,
 * (w + 1) * chunk): it reads them 32 at a time and appends each kept row's
 * pair key (group << 32 | suppkey, never 0 as suppkey >= 1) to list[lbase
 * + w * chunk ...] in row order (a ballot per 32 rows, no atomics);
 * wstart[w] = lbase + w * chunk, wcount[w] = keys appended, *nkept += them
 * (one atomic per warp). A supplier key outside 1..N or a part key outside
 * the pass's parts sets *bad. */
__global__ void __launch_bounds__(TPB) q16_keep(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                                                int64_t nps, int64_t chunk, const uint8_t *__restrict__ pbrand,
                                                const uint8_t *__restrict__ ptype, const int32_t *__restrict__ psize,
                                                int64_t nparts, int64_t pfirst, const uint8_t *__restrict__ bad_supp,
                                                int64_t nsupp, const part_tests t, unsigned long long *__restrict__ list,
                                                int64_t lbase, int64_t *__restrict__ wstart,
                                                unsigned int *__restrict__ wcount,
                                                unsigned long long *__restrict__ nkept, int *__restrict__ bad) {
    const int lane = threadIdx.x & 31;
    const int64_t w = ((int64_t)blockIdx.x * TPB + threadIdx.x) >> 5;
    const int64_t begin = w * chunk, end = begin + chunk < nps ? begin + chunk : nps;
    unsigned int n = 0;
    int oops = 0;
    /* every lane runs the same rounds (the ballot needs all lanes) */
    for (int64_t base = begin; base < end; base += 32) {
        const int64_t i = base + lane;
        bool keep = false;
        unsigned long long key = 0;
        if (i < end) {
            const int64_t p = (int64_t)__ldg(pspart + i) - 1 - pfirst;
            const uint32_t s = (uint32_t)__ldg(pssupp + i) - 1u;
            if ((uint64_t)p >= (uint64_t)nparts || (uint64_t)s >= (uint64_t)nsupp) {
                oops = 1;
            } else {
                const int32_t size = __ldg(psize + p);
                if ((uint32_t)size < 64u && ((t.size_mask >> size) & 1ull)) {
                    const uint8_t b = __ldg(pbrand + p), ty = __ldg(ptype + p);
                    if (t.brand_ok[b] && t.type_ok[ty] && !__ldg(bad_supp + s)) {
                        const uint64_t g = ((uint64_t)b * (uint64_t)t.ntype + ty) * (uint64_t)t.nsizes +
                                           (uint64_t)t.size_rank[size];
                        key = (unsigned long long)(g << 32 | (uint64_t)(s + 1u));
                        keep = true;
                    }
                }
            }
        }
        const unsigned int m = __ballot_sync(DKB_FULL_MASK, keep);
        if (keep) list[lbase + begin + n + __popc(m & ((1u << lane) - 1u))] = key;
        n += (unsigned int)__popc(m);
    }
    if (lane == 0 && begin < nps) {
        wstart[w] = lbase + begin;
        wcount[w] = n;
        if (n) atomicAdd(nkept, (unsigned long long)n);
    }
    if (oops) *bad = 1;
}

/* Zeroes the first set_slots(*nkept) slots of the pair set. */
__global__ void __launch_bounds__(TPB) set_clear(const unsigned long long *__restrict__ nkept, int64_t cap,
                                                 ulonglong2 *__restrict__ tkey) {
    const int64_t half = set_slots(*nkept, cap) / 2;
    const ulonglong2 zero = make_ulonglong2(0ull, 0ull);
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < half; i += (int64_t)gridDim.x * TPB) tkey[i] = zero;
}

/* Inserts warp w's listed keys (wcount[w] of them at list[wstart[w]]) into
 * the open-addressing set tkey (0: empty; set_slots(*nkept) slots); the
 * thread whose atomicCAS creates a pair adds 1 to its group's count:
 * count(distinct suppkey) exactly, in any order of the threads. */
__global__ void __launch_bounds__(TPB) q16_insert(const unsigned long long *__restrict__ list,
                                                  const int64_t *__restrict__ wstart,
                                                  const unsigned int *__restrict__ wcount, int64_t nwarps,
                                                  const unsigned long long *__restrict__ nkept,
                                                  int64_t cap, unsigned long long *__restrict__ tkey,
                                                  unsigned int *__restrict__ gcnt) {
    const int64_t slots = set_slots(*nkept, cap);
    const int shift = 1 + __clzll((long long)slots); /* 64 - log2(slots) */
    const uint64_t mask = (uint64_t)slots - 1;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (TPB / 32);
    for (int64_t w = ((int64_t)blockIdx.x * TPB + threadIdx.x) >> 5; w < nwarps; w += warps) {
        const unsigned int n = wcount[w];
        const int64_t at = wstart[w];
        for (unsigned int j = lane; j < n; j += 32) {
            const unsigned long long key = list[at + j];
            uint64_t h = slot_of(key, shift);
            for (;;) {
                const unsigned long long old = atomicCAS(tkey + h, 0ull, key);
                if (old == 0ull) {
                    atomicAdd(gcnt + (key >> 32), 1u);
                    break;
                }
                if (old == key) break;
                h = (h + 1) & mask;
            }
        }
    }
}

/* Sorts the words a[0..n) stably by their high 32 bits, ascending (tmp:
 * room for n words): LSD radix over 11-bit digits, skipping the digits in
 * which all words agree (a stable pass over such a digit changes nothing).
 * Returns the array that holds the result (a or tmp). */
static uint64_t *sort_by_high_half(uint64_t *a, uint64_t *tmp, int64_t n) {
    enum { BITS = 11, RADIX = 1 << BITS };
    uint64_t any = 0, all = ~0ull;
    for (int64_t i = 0; i < n; i++) any |= a[i], all &= a[i];
    const uint64_t varies = (any ^ all) >> 32;
    int64_t start[RADIX];
    for (int lo = 0; lo < 32; lo += BITS) {
        if (!((varies >> lo) & (RADIX - 1))) continue;
        memset(start, 0, sizeof start);
        for (int64_t i = 0; i < n; i++) start[(a[i] >> (32 + lo)) & (RADIX - 1)]++;
        int64_t at = 0;
        for (int d = 0; d < RADIX; d++) {
            const int64_t c = start[d];
            start[d] = at;
            at += c;
        }
        for (int64_t i = 0; i < n; i++) tmp[start[(a[i] >> (32 + lo)) & (RADIX - 1)]++] = a[i];
        uint64_t *x = a;
        a = tmp;
        tmp = x;
    }
    return a;
}

/* A dictionary's strings, each padded to PAD bytes where it fits, so that a
 * row's text is one fixed-size copy. */
enum { PAD = 32 };
typedef struct {
    char (*pad)[PAD];
    const dkb_cand_dict *dict;
} padded_dict;

static int padded_dict_init(padded_dict *p, const dkb_cand_dict *d) {
    p->dict = d;
    p->pad = (char(*)[PAD])calloc((size_t)(d->size > 0 ? d->size : 1), PAD);
    if (!p->pad) return 0;
    for (int c = 0; c < d->size; c++)
        if (d->len[c] <= PAD) memcpy(p->pad[c], d->str[c], d->len[c]);
    return 1;
}

/* Appends code c's string as row r's text of col; 0 when over bytes_cap.
 * Bytes past the string (up to PAD) may be written: the next row or
 * nothing (they are outside every row) covers them. */
static inline int put_code(dkb_cand_res_col *col, int64_t r, const padded_dict *p, int c) {
    const int64_t at = col->str_off[r], len = (int64_t)p->dict->len[c];
    if (len <= PAD && at + PAD <= col->bytes_cap) {
        memcpy(col->str_bytes + at, p->pad[c], PAD);
    } else {
        if (at + len > col->bytes_cap) return 0;
        memcpy(col->str_bytes + at, p->dict->str[c], (size_t)len);
    }
    col->str_off[r + 1] = at + len;
    return 1;
}

/* Across ranks (nranks > 1), after q16_insert and the copy back: this
 * rank's distinct pair keys (the non-empty slots of its set d_tkey:
 * set_slots(*d_nkept) of them) gathered in rank order; on rank 0 (*writes =
 * 1) gcnt[0, ngroups) is replaced by the distinct keys of the union per
 * group (a host open-addressing set); other ranks: *writes = 0 and
 * res->nrows = 0. */
static int ranks_merge(const dkb_cand_env *env, dkb_cand_result *res, const unsigned long long *d_tkey,
                       const unsigned long long *d_nkept, int64_t cap, unsigned int *gcnt, int64_t ngroups,
                       cudaStream_t stream, int *writes) {
    *writes = 1;
    unsigned long long nkept = 0;
    if (cudaMemcpyAsync(&nkept, d_nkept, sizeof nkept, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
        return DKB_CAND_ECUDA; /* a rank failing before the gather: the others' gather fails */
    int64_t slots = 2; /* set_slots(nkept, cap), as on the device */
    while (slots < cap && (unsigned long long)slots < 2ull * nkept + 2ull) slots <<= 1;
    uint64_t *keys = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)slots);
    if (!keys) return DKB_CAND_ENOMEM;
    if (cudaMemcpyAsync(keys, d_tkey, sizeof(uint64_t) * (size_t)slots, cudaMemcpyDeviceToHost, stream) !=
            cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
        free(keys);
        return DKB_CAND_ECUDA;
    }
    int64_t n = 0;
    for (int64_t i = 0; i < slots; i++)
        if (keys[i]) keys[n++] = keys[i];
    void *every = NULL;
    int64_t ne = 0;
    int rc = dkb_ranks_gather(env, keys, n, sizeof(uint64_t), &every, &ne);
    free(keys);
    if (rc) return rc;
    if (!dkb_ranks_writes(env, res)) {
        *writes = 0;
        dkb_ranks_gather_free(every, NULL);
        return DKB_CAND_OK;
    }
    int bits = 1;
    while (((int64_t)1 << bits) < 2 * ne + 2) bits++;
    const uint64_t hmask = ((uint64_t)1 << bits) - 1;
    uint64_t *set = (uint64_t *)calloc((size_t)1 << bits, sizeof(uint64_t));
    if (!set) rc = DKB_CAND_ENOMEM;
    if (!rc) {
        memset(gcnt, 0, sizeof(unsigned int) * (size_t)ngroups);
        const uint64_t *all = (const uint64_t *)every;
        for (int64_t i = 0; !rc && i < ne; i++) {
            const uint64_t key = all[i];
            uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> (64 - bits);
            while (set[h] && set[h] != key) h = (h + 1) & hmask;
            if (set[h]) continue; /* a pair another rank has too */
            set[h] = key;
            if ((int64_t)(key >> 32) >= ngroups) rc = DKB_CAND_EINTERNAL;
            else gcnt[key >> 32]++;
        }
    }
    free(set);
    dkb_ranks_gather_free(every, NULL);
    return rc;
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *pbrand, *ptype, *psize, *pspart, *pssupp, *scomment;
    const dkb_cand_param *pb, *pt, *ps[8];
    dkb_cand_res_col *c_brand, *c_type, *c_size, *c_cnt;
    if (DKB_BIND_COLS(db, "part", "p_brand:dict p_type:dict p_size:i32", &pbrand, &ptype, &psize) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32", &pspart, &pssupp) ||
        DKB_BIND_COLS(db, "supplier", "s_comment:str", &scomment) ||
        DKB_BIND_PARAMS(params, "brand:str type:str size1 size2 size3 size4 size5 size6 size7 size8", &pb, &pt, &ps[0],
                        &ps[1], &ps[2], &ps[3], &ps[4], &ps[5], &ps[6], &ps[7]) ||
        DKB_BIND_RES(res, "p_brand:str p_type:str p_size:int supplier_cnt:int", &c_brand, &c_type, &c_size, &c_cnt) ||
        pbrand->dict->size > 256 || ptype->dict->size > 256)
        return DKB_CAND_EINVAL;

    part_tests t;
    memset(&t, 0, sizeof t);
    for (int k = 0; k < 8; k++)
        if (ps[k]->i >= 0 && ps[k]->i < 64) t.size_mask |= 1ull << ps[k]->i;
    const int nbrand = pbrand->dict->size, ntype = ptype->dict->size;
    const int bad_brand = dkb_cand_dict_code(pbrand->dict, pb->s);
    const size_t tl = strlen(pt->s);
    for (int c = 0; c < 256; c++) {
        t.brand_ok[c] = c < nbrand && c != bad_brand;
        t.type_ok[c] = c < ntype && !(ptype->dict->len[c] >= tl && memcmp(ptype->dict->str[c], pt->s, tl) == 0);
    }
    int size_value[8];
    t.nsizes = 0;
    for (int v = 0; v < 64; v++) {
        t.size_rank[v] = (int8_t)((t.size_mask >> v) & 1 ? t.nsizes : -1);
        if ((t.size_mask >> v) & 1) size_value[t.nsizes++] = v;
    }
    t.ntype = ntype;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t nsupp = scomment->n, nps = pspart->n, nparts = pbrand->n;
    const int64_t ngroups = (int64_t)nbrand * ntype * (t.nsizes > 0 ? t.nsizes : 1);
    int rc = 0, sms = 0, h_bad = 0;
    int64_t cap = 1, m = 0, grid = 0, chunk = 0, nwarps = 0, wcap = 0, kw = 0, lbase = 0;
    int64_t prow0 = 0; /* across ranks: the share's first part row in the whole table (below) */
    int64_t *d_wstart = NULL;
    uint8_t *d_bad_supp = NULL;
    unsigned long long *d_tkey = NULL, *d_list = NULL, *d_nkept = NULL;
    unsigned int *d_gcnt = NULL, *d_wcount = NULL, *h_gcnt = NULL;
    int *d_bad = NULL;
    void *d_block = NULL;
    uint64_t *order = NULL, *order_tmp = NULL, *sorted = NULL;
    padded_dict brands = {NULL, NULL}, types = {NULL, NULL};
    /* the streamed tables' columns: part's first (st.row_start is then the
     * pass's first part row), then partsupp's */
    static const char *const SCOLS[] = {"p_brand", "p_type", "p_size", "ps_partkey", "ps_suppkey"};
    const dkb_cand_budget *budget = env->budget;
    dkb_stream st;
    memset(&st, 0, sizeof st); /* nothing held until the walk begins (done: ends it) */

    res->nrows = 0;
    c_brand->str_off[0] = c_type->str_off[0] = 0;
    if ((nps == 0 && env->nranks <= 1) || t.nsizes == 0) return 0; /* ranks: an empty share takes part */
    if (nps >= INT32_MAX || nsupp == 0 || (nparts == 0 && env->nranks <= 1)) {
        fprintf(stderr, "q16.full.cu: partsupp of %lld rows with %lld parts and %lld suppliers\n", (long long)nps,
                (long long)nparts, (long long)nsupp);
        return DKB_CAND_EINTERNAL;
    }
    while (cap < 2 * nps + 2) cap <<= 1; /* the pair set's slots were every row kept */
    DKB_CUDA_TRY("SM count", dkb_sm_count(&sms));
    grid = dkb_grid_cap((int64_t)sms * 16, nps, TPB);
    if (env->nranks > 1 && grid < 1) grid = 1; /* an empty share */
    chunk = (nps + grid * (TPB / 32) - 1) / (grid * (TPB / 32)); /* rows per warp, a multiple of 32 */
    chunk = (chunk + 31) / 32 * 32;
    if (env->nranks > 1 && chunk < 32) chunk = 32; /* an empty share */
    nwarps = (nps + chunk - 1) / chunk; /* warps that own rows */
    /* warp entries of all passes: a pass of n rows takes ceil(n / chunk) <= n / chunk + 1 */
    wcap = nwarps + (budget && budget->nstreamed && budget->nparts > 0 ? budget->nparts : 1);
    {
        const dkb_dev_part parts[] = {
            {(void **)&d_gcnt, sizeof(unsigned int) * (size_t)ngroups, 0},
            {(void **)&d_nkept, sizeof(unsigned long long), 0},
            {(void **)&d_bad, sizeof(int), 0},
            {(void **)&d_bad_supp, (size_t)nsupp, DKB_NO_FILL},
            {(void **)&d_list, sizeof(unsigned long long) * (size_t)nps, DKB_NO_FILL},
            {(void **)&d_wcount, sizeof(unsigned int) * (size_t)wcap, DKB_NO_FILL},
            {(void **)&d_wstart, sizeof(int64_t) * (size_t)wcap, DKB_NO_FILL},
            {(void **)&d_tkey, sizeof(unsigned long long) * (size_t)cap, DKB_NO_FILL},
        };
        DKB_CUDA_TRY("device buffers", dkb_dev_carve(parts, DKB_COUNT(parts), &d_block, stream));
    }
    if (env->nranks > 1 && nparts > 0) { /* the share's first part row in the whole table: its first key - 1 */
        const dkb_cand_vec *pkey = dkb_cand_column(db, "part", "p_partkey");
        int32_t first = 0;
        DKB_FAIL_IF(!pkey || pkey->type != DKB_CAND_I32 || pkey->n != nparts, DKB_CAND_EINVAL,
                    "q16.full.cu: part.p_partkey (i32) missing across ranks\n");
        DKB_CUDA_TRY("copy the first p_partkey",
                     cudaMemcpyAsync(&first, pkey->data, sizeof first, cudaMemcpyDeviceToHost, stream));
        DKB_CUDA_TRY("cudaStreamSynchronize first p_partkey", cudaStreamSynchronize(stream));
        prow0 = (int64_t)first - 1;
    }
    complaints<<<(unsigned)((nsupp + 127) / 128), 128, 0, stream>>>((const int64_t *)scomment->data, scomment->bytes,
                                                                    nsupp, d_bad_supp);
    DKB_CUDA_TRY("complaints launch", cudaGetLastError());
    /* part and partsupp: the whole columns in one pass, or under a budget load
     * by load (a load's partsupp rows have their parts in the same load); pass
     * after pass the keys go on in the list and the warps' entries in
     * d_wstart/d_wcount */
    for (dkb_stream_begin_ex(&st, db, env, DKB_COUNT(SCOLS), SCOLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
        const dkb_cand_vec *c = st.cols; /* [0, 3): part's (n: its rows), [3, 5): partsupp's */
        const int64_t lnp = c[0].n, lnps = c[3].n;
        if (lnps <= 0) continue;
        const int64_t lw = (lnps + chunk - 1) / chunk; /* warps that own this pass's rows */
        DKB_FAIL_IF(kw + lw > wcap || lbase + lnps > nps, DKB_CAND_EINTERNAL,
                    "q16.full.cu: the loads hold more partsupp rows than the table\n");
        q16_keep<<<(unsigned)((lw + TPB / 32 - 1) / (TPB / 32)), TPB, 0, stream>>>(
            (const int32_t *)c[3].data, (const int32_t *)c[4].data, lnps, chunk, (const uint8_t *)c[0].data,
            (const uint8_t *)c[1].data, (const int32_t *)c[2].data, lnp, st.row_start + prow0, d_bad_supp, nsupp, t, d_list,
            lbase, d_wstart + kw, d_wcount + kw, d_nkept, d_bad);
        DKB_CUDA_TRY("q16_keep launch", cudaGetLastError());
        kw += lw;
        lbase += lnps;
    }
    rc = dkb_stream_end(&st);
    if (rc) goto done;
    set_clear<<<(unsigned)(sms * 4), TPB, 0, stream>>>(d_nkept, cap, (ulonglong2 *)d_tkey);
    DKB_CUDA_TRY("set_clear launch", cudaGetLastError());
    q16_insert<<<(unsigned)grid, TPB, 0, stream>>>(d_list, d_wstart, d_wcount, kw, d_nkept, cap, d_tkey, d_gcnt);
    DKB_CUDA_TRY("q16_insert launch", cudaGetLastError());
    h_gcnt = (unsigned int *)malloc(sizeof(unsigned int) * (size_t)ngroups);
    order = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)ngroups);
    order_tmp = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)ngroups);
    DKB_FAIL_IF(!h_gcnt || !order || !order_tmp || !padded_dict_init(&brands, pbrand->dict) ||
                    !padded_dict_init(&types, ptype->dict),
                DKB_CAND_ENOMEM, "q16.full.cu: out of host memory for %lld groups\n", (long long)ngroups);
    {
        const dkb_host_copy back[] = {{h_gcnt, d_gcnt, sizeof(unsigned int) * (size_t)ngroups},
                                      {&h_bad, d_bad, sizeof(int)}};
        DKB_CUDA_TRY("copy back", dkb_copy_back(back, DKB_COUNT(back), stream));
    }
    DKB_FAIL_IF(h_bad, DKB_CAND_EINTERNAL, "q16.full.cu: a partsupp part or supplier key outside 1..N\n");
    if (env->nranks > 1) { /* the ranks' distinct pairs, counted distinct over their union on rank 0 */
        int writes = 1;
        DKB_TRY(ranks_merge(env, res, d_tkey, d_nkept, cap, h_gcnt, ngroups, stream, &writes));
        if (!writes) goto done;
    }
    /* the non-empty groups in index order as (~count << 32 | group); a
     * stable sort by the high half: count desc, then group index asc */
    for (int64_t g = 0; g < ngroups; g++)
        if (h_gcnt[g]) order[m++] = (uint64_t)(uint32_t)~h_gcnt[g] << 32 | (uint64_t)g;
    DKB_FAIL_IF(m > res->cap, DKB_CAND_ECAP, "q16.full.cu: %lld result rows over the cap %lld\n", (long long)m,
                (long long)res->cap);
    sorted = sort_by_high_half(order, order_tmp, m);
    for (int64_t r = 0; r < m; r++) {
        const int64_t g = (int64_t)(sorted[r] & 0xffffffffull);
        const int sz = size_value[g % t.nsizes], ty = (int)(g / t.nsizes % ntype), b = (int)(g / t.nsizes / ntype);
        DKB_FAIL_IF(!put_code(c_brand, r, &brands, b) || !put_code(c_type, r, &types, ty), DKB_CAND_ECAP,
                    "q16.full.cu: result text over its byte cap\n");
        c_size->i64[r] = sz;
        c_cnt->i64[r] = (int64_t)(uint32_t)~(uint32_t)(sorted[r] >> 32); /* is_null starts zeroed */
    }
    res->nrows = m;
done:
    dkb_stream_end(&st); /* a load still held after a failure inside the walk (none otherwise) */
    dkb_dev_release(d_block, stream);
    free(h_gcnt);
    free(order);
    free(order_tmp);
    free(brands.pad);
    free(types.pad);
    return rc;
}
