/* cuda_join.cu: CUDA hash joins on integer keys, as cpu_join.c: INNER and
 * LEFT joins (pairs grouped by probe row in probe order, build rows
 * ascending within a probe row; LEFT gives build row -1 to unmatched probe
 * rows) and semi-joins (BOOL per probe row).
 *
 * Keys of any width BOOL..I64 are compared as int64 values, through
 * d = key - min(build keys) as uint64 (so a probe key outside the build
 * keys' span misses at once).
 * Join build, after one wait for the build keys' min and max:
 *   - direct table when the span is at most about 4 slots per build row
 *     (PK-FK keys): each key claims its slot; when no key repeats (a
 *     second wait says), slot d holds its build row and nothing is sorted;
 *     else slots hold run starts from per-key counts and an exclusive
 *     scan, and a stable radix sort of (d, row) gives the build rows of
 *     each key in ascending order;
 *   - hash table otherwise: stable radix sort of (d, row), runs of equal d
 *     (their number read back to size the table), open addressing with
 *     linear probing in 2^bits >= 2 x runs slots {d, run}.
 * Probe: one pass records each probe row's first sorted position and its
 * number of output pairs, an exclusive scan places them, the host reads
 * the total to size the outputs, and a second pass writes the pairs (a
 * thread per probe row; warps share the rows with many matches). LEFT
 * joins on unique build keys write one row per probe row in a single pass.
 * Semi-joins need no order: a byte per direct slot, or a hash set of d. */
#include <cub/cub.cuh>

#include <limits.h>

#include "tensor/cuda_select.cuh"

#define STREAM(tp) dkb__cu_stream(tp)
#define LAUNCH(tp, n) <<<dkb__cu_grid((tp), (n)), DKB_CU_BLOCK, 0, STREAM(tp)>>>

/* Rows of matches a thread writes alone; probe rows with more are written
 * by their whole warp. */
#define SMALL_FANOUT 4
#define EMPTY_U64 (~0ull)

/* Direct tables: a span below 4 slots per build row (plus a floor), as on
 * the CPU. */
static inline bool use_direct(uint64_t span, int64_t nb) { return span < (uint64_t)nb * 4 + 4096; }

/* Smallest bits with 2^bits >= want (at least 4). */
static inline int table_bits(int64_t want) {
    int b = 4;
    while (b < 62 && ((int64_t)1 << b) < want) b++;
    return b;
}

static __device__ __forceinline__ uint64_t hash_slot(uint64_t d, int bits) {
    return (d * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

/* Build-key offset d = key - min (as uint64). */
static __device__ __forceinline__ uint64_t key_offset(const void *data, dkb_tp_dtype t, int64_t i, int64_t min) {
    return (uint64_t)dkb__d_ld_i64(data, t, i) - (uint64_t)min;
}

/* ---- min and max of the build keys ---- */

/* In an anonymous namespace: CUB templates see these types, and no other
 * file's type of the same name may merge with them at link time. */
namespace {
struct min_op {
    __device__ __forceinline__ long long operator()(long long a, long long b) const { return a < b ? a : b; }
};
struct max_op {
    __device__ __forceinline__ long long operator()(long long a, long long b) const { return a > b ? a : b; }
};
} // namespace

static __global__ void minmax_kernel(const void *data, dkb_tp_dtype t, int64_t n, long long *mm) {
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    CU_FOR(i, n) {
        long long k = (long long)dkb__d_ld_i64(data, t, i);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    typedef cub::BlockReduce<long long, DKB_CU_BLOCK> reduce;
    __shared__ typename reduce::TempStorage tmp;
    long long blo = reduce(tmp).Reduce(lo, min_op());
    __syncthreads();
    long long bhi = reduce(tmp).Reduce(hi, max_op());
    if (threadIdx.x == 0) {
        atomicMin(&mm[0], blo);
        atomicMax(&mm[1], bhi);
    }
}

static __global__ void set2_kernel(long long *p, long long a, long long b) {
    p[0] = a;
    p[1] = b;
}

/* Min and max of a's n > 0 keys on the host (waits for the stream). */
static bool key_range(dkb_tp *tp, const char *op, const dkb_tensor *a, int64_t *mn, int64_t *mx) {
    long long *mm = (long long *)dkb__cu_scratch(tp, op, 2 * sizeof(long long)), h[2];
    if (!mm) return false;
    set2_kernel<<<1, 1, 0, STREAM(tp)>>>(mm, LLONG_MAX, LLONG_MIN);
    if (!CU_LAUNCHED(tp, op)) return false;
    minmax_kernel LAUNCH(tp, a->n)(a->data, a->dtype, a->n, mm);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_get(tp, op, h, mm, sizeof h)) return false;
    *mn = h[0];
    *mx = h[1];
    return true;
}

/* ---- the join table ---- */

enum { TBL_EMPTY, TBL_DIRECT_ROW, TBL_DIRECT_RUN, TBL_HASH };

struct __align__(16) hslot {
    unsigned long long d; /* key offset */
    long long run;        /* -1: empty */
};

typedef struct jtable {
    int kind;
    int64_t min;
    uint64_t span;        /* max - min: d beyond it matches nothing */
    const int64_t *dir;   /* DIRECT_ROW: row of d or -1 (span + 1 slots);
                           * DIRECT_RUN: run of d is [dir[d], dir[d + 1]) */
    const hslot *slots;   /* HASH: 2^bits slots */
    int bits;
    const int64_t *rstart;/* HASH: run r is [rstart[r], rstart[r + 1]) */
    const int64_t *rows;  /* build rows in key order (NULL: DIRECT_ROW, the start is the row) */
    bool unique;          /* no build key repeats */
} jtable;

/* First position of key k's build rows and their number in *count (0 and
 * -1 when k matches nothing). */
static __device__ __forceinline__ int64_t jt_lookup(const jtable &t, int64_t k, int64_t *count) {
    uint64_t d = (uint64_t)k - (uint64_t)t.min;
    *count = 0;
    if (t.kind == TBL_EMPTY || d > t.span) return -1;
    if (t.kind == TBL_DIRECT_ROW) {
        int64_t s = t.dir[d];
        *count = s >= 0;
        return s;
    }
    if (t.kind == TBL_DIRECT_RUN) {
        int64_t s = t.dir[d], c = t.dir[d + 1] - s;
        *count = c;
        return c ? s : -1;
    }
    uint64_t mask = ((uint64_t)1 << t.bits) - 1;
    for (uint64_t h = hash_slot(d, t.bits);; h = (h + 1) & mask) {
        hslot sl = t.slots[h];
        if (sl.run < 0) return -1;
        if (sl.d == d) {
            int64_t s = t.rstart[sl.run];
            *count = t.rstart[sl.run + 1] - s;
            return s;
        }
    }
}

static __device__ __forceinline__ int64_t jt_row(const jtable &t, int64_t pos) { return t.rows ? t.rows[pos] : pos; }

/* dir[d] = a build row with offset d; *dup = 1 when some d comes twice. */
static __global__ void claim_kernel(const void *data, dkb_tp_dtype t, int64_t n, int64_t min, unsigned long long *dir,
                                    int *dup) {
    bool twice = false;
    CU_FOR(i, n) {
        uint64_t d = key_offset(data, t, i, min);
        twice |= atomicCAS(&dir[d], EMPTY_U64, (unsigned long long)i) != EMPTY_U64;
    }
    if (twice) *dup = 1;
}

static __global__ void key_count_kernel(const void *data, dkb_tp_dtype t, int64_t n, int64_t min,
                                        unsigned long long *cnt) {
    CU_FOR(i, n) atomicAdd(&cnt[key_offset(data, t, i, min)], 1ull);
}

/* The sort's input: d[i] and row i. */
static __global__ void sort_input_kernel(const void *data, dkb_tp_dtype t, int64_t n, int64_t min, uint64_t *d,
                                         int64_t *rows) {
    CU_FOR(i, n) {
        d[i] = key_offset(data, t, i, min);
        rows[i] = i;
    }
}

/* head[i]: sorted d[i] starts a run. */
static __global__ void run_heads_kernel(const uint64_t *d, int64_t n, uint8_t *head) {
    CU_FOR(i, n) head[i] = i == 0 || d[i] != d[i - 1];
}

static __global__ void hash_insert_kernel(const uint64_t *sorted_d, const int64_t *rstart, int64_t nruns, hslot *slots,
                                          int bits) {
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    CU_FOR(r, nruns) {
        uint64_t d = sorted_d[rstart[r]];
        for (uint64_t h = hash_slot(d, bits);; h = (h + 1) & mask) {
            if (atomicCAS((unsigned long long *)&slots[h].run, EMPTY_U64, (unsigned long long)r) == EMPTY_U64) {
                slots[h].d = d;
                break;
            }
        }
    }
}

/* Stable radix sort of (d, row) over the build keys: t->rows, and the
 * sorted d in *sorted_d. */
static bool sort_build(dkb_tp *tp, const char *op, const dkb_tensor *b, jtable *t, const uint64_t **sorted_d) {
    int64_t nb = b->n;
    size_t kb = sizeof(uint64_t) * (size_t)nb, vb = sizeof(int64_t) * (size_t)nb;
    uint64_t *k0 = (uint64_t *)dkb__cu_scratch(tp, op, kb), *k1 = (uint64_t *)dkb__cu_scratch(tp, op, kb);
    int64_t *v0 = (int64_t *)dkb__cu_scratch(tp, op, vb), *v1 = (int64_t *)dkb__cu_scratch(tp, op, vb);
    if (!k0 || !k1 || !v0 || !v1) return false;
    sort_input_kernel LAUNCH(tp, nb)(b->data, b->dtype, nb, t->min, k0, v0);
    if (!CU_LAUNCHED(tp, op)) return false;
    int end_bit = 1;
    while (end_bit < 64 && (t->span >> end_bit) != 0) end_bit++;
    cub::DoubleBuffer<uint64_t> keys(k0, k1);
    cub::DoubleBuffer<int64_t> vals(v0, v1);
    size_t bytes = 0;
    if (!CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(NULL, bytes, keys, vals, nb, 0, end_bit, STREAM(tp))))
        return false;
    void *tmp = dkb__cu_scratch(tp, op, bytes ? bytes : 1);
    if (!tmp || !CU_OK(tp, op, cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, vals, nb, 0, end_bit, STREAM(tp))))
        return false;
    t->rows = vals.Current();
    *sorted_d = keys.Current();
    return true;
}

/* Direct table over span + 1 slots. */
static bool build_direct(dkb_tp *tp, const char *op, const dkb_tensor *b, jtable *t) {
    int64_t nb = b->n, nslots = (int64_t)t->span + 1;
    size_t db = sizeof(int64_t) * (size_t)(nslots + 1);
    unsigned long long *dir = (unsigned long long *)dkb__cu_scratch(tp, op, db);
    int *dup = (int *)dkb__cu_scratch(tp, op, sizeof *dup), hdup = 0;
    if (!dir || !dup || !CU_OK(tp, op, cudaMemsetAsync(dir, 0xff, db, STREAM(tp))) ||
        !CU_OK(tp, op, cudaMemsetAsync(dup, 0, sizeof *dup, STREAM(tp))))
        return false;
    claim_kernel LAUNCH(tp, nb)(b->data, b->dtype, nb, t->min, dir, dup);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_get(tp, op, &hdup, dup, sizeof hdup)) return false;
    if (!hdup) {
        t->kind = TBL_DIRECT_ROW;
        t->dir = (const int64_t *)dir;
        t->rows = NULL;
        t->unique = true;
        return true;
    }
    /* repeated keys: runs from counts, rows from a stable sort */
    int64_t *start = (int64_t *)dkb__cu_scratch(tp, op, db);
    if (!start || !CU_OK(tp, op, cudaMemsetAsync(dir, 0, db, STREAM(tp)))) return false;
    key_count_kernel LAUNCH(tp, nb)(b->data, b->dtype, nb, t->min, dir);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_exclusive_sum(tp, op, (const int64_t *)dir, start, nslots + 1)) return false;
    const uint64_t *sorted_d = NULL;
    if (!sort_build(tp, op, b, t, &sorted_d)) return false;
    t->kind = TBL_DIRECT_RUN;
    t->dir = start;
    t->unique = false;
    return true;
}

static bool build_hash(dkb_tp *tp, const char *op, const dkb_tensor *b, jtable *t) {
    int64_t nb = b->n, nruns = 0;
    const uint64_t *sorted_d = NULL;
    if (!sort_build(tp, op, b, t, &sorted_d)) return false;
    uint8_t *head = (uint8_t *)dkb__cu_scratch(tp, op, (size_t)nb);
    int64_t *rstart = (int64_t *)dkb__cu_scratch(tp, op, sizeof(int64_t) * (size_t)(nb + 2));
    if (!head || !rstart) return false;
    run_heads_kernel LAUNCH(tp, nb)(sorted_d, nb, head);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_nonzero_into(tp, op, head, nb, rstart, &nruns)) return false;
    set2_kernel<<<1, 1, 0, STREAM(tp)>>>((long long *)rstart + nruns, nb, nb); /* rstart[nruns] = nb (room for 2) */
    if (!CU_LAUNCHED(tp, op)) return false;
    t->bits = table_bits(2 * nruns);
    size_t sb = sizeof(hslot) << t->bits;
    hslot *slots = (hslot *)dkb__cu_scratch(tp, op, sb);
    if (!slots || !CU_OK(tp, op, cudaMemsetAsync(slots, 0xff, sb, STREAM(tp)))) return false;
    hash_insert_kernel LAUNCH(tp, nruns)(sorted_d, rstart, nruns, slots, t->bits);
    if (!CU_LAUNCHED(tp, op)) return false;
    t->kind = TBL_HASH;
    t->slots = slots;
    t->rstart = rstart;
    t->unique = nruns == nb;
    return true;
}

/* The join table of build keys b (scratch memory). */
static bool build_table(dkb_tp *tp, const char *op, const dkb_tensor *b, jtable *t) {
    memset(t, 0, sizeof *t);
    t->kind = TBL_EMPTY;
    t->unique = true;
    if (b->n == 0) return true;
    int64_t mn, mx;
    if (!key_range(tp, op, b, &mn, &mx)) return false;
    t->min = mn;
    t->span = (uint64_t)mx - (uint64_t)mn;
    return use_direct(t->span, b->n) ? build_direct(tp, op, b, t) : build_hash(tp, op, b, t);
}

/* ---- probing ---- */

/* LEFT join on unique build keys: bo[i] = the build row of probe row i, or -1. */
static __global__ void probe_left_unique_kernel(jtable t, const void *pk, dkb_tp_dtype pt, int64_t np, int64_t *bo) {
    CU_FOR(i, np) {
        int64_t c, s = jt_lookup(t, dkb__d_ld_i64(pk, pt, i), &c);
        bo[i] = c ? jt_row(t, s) : -1;
    }
}

/* hd[i] = first sorted position of probe row i's matches (-1: none);
 * cnt[i] = its output pairs (LEFT: 1 for none). */
static __global__ void probe_count_kernel(jtable t, const void *pk, dkb_tp_dtype pt, int64_t np, bool left, int64_t *hd,
                                          int64_t *cnt) {
    CU_FOR(i, np) {
        int64_t c, s = jt_lookup(t, dkb__d_ld_i64(pk, pt, i), &c);
        hd[i] = c ? s : -1;
        cnt[i] = c ? c : (int64_t)left;
    }
}

/* Pairs of probe row i at pos[i] .. pos[i + 1]: (i, build row), or (i, -1)
 * for an unmatched LEFT row. A warp takes 32 probe rows; rows with more
 * than SMALL_FANOUT pairs are written by the whole warp, coalesced. */
static __global__ void probe_write_kernel(jtable t, const int64_t *hd, const int64_t *pos, int64_t np, int64_t *po,
                                          int64_t *bo) {
    int lane = (int)(threadIdx.x & 31);
    int64_t w0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5, nw = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t base = w0 * 32; base < np; base += nw * 32) {
        int64_t i = base + lane, s = -1, p = 0, c = 0;
        if (i < np) {
            s = hd[i];
            p = pos[i];
            c = pos[i + 1] - p;
        }
        bool big = s >= 0 && c > SMALL_FANOUT;
        if (!big)
            for (int64_t j = 0; j < c; j++) {
                po[p + j] = i;
                bo[p + j] = s < 0 ? -1 : jt_row(t, s + j);
            }
        for (unsigned q = __ballot_sync(DKB_CU_FULL_MASK, big); q; q &= q - 1) {
            int l = __ffs((int)q) - 1;
            int64_t ls = __shfl_sync(DKB_CU_FULL_MASK, s, l), lp = __shfl_sync(DKB_CU_FULL_MASK, p, l);
            int64_t lc = __shfl_sync(DKB_CU_FULL_MASK, c, l);
            for (int64_t j = lane; j < lc; j += 32) {
                po[lp + j] = base + l;
                bo[lp + j] = jt_row(t, ls + j);
            }
        }
    }
}

static dkb_join_result join_impl(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe, dkb_join_kind kind) {
    const char *op = "join";
    dkb_join_result none = {NULL, NULL}, res = {NULL, NULL};
    int64_t np = probe->n;
    bool left = kind == DKB_JOIN_LEFT;
    jtable t;
    if (!build_table(tp, op, build, &t)) return none;
    if (left && t.unique) { /* one output row per probe row */
        res.probe_idx = dkb__cuda_arange(tp, np);
        res.build_idx = dkb__tp_new(tp, op, DKB_TP_I64, np);
        if (!res.probe_idx || !res.build_idx) return none;
        if (np) {
            probe_left_unique_kernel LAUNCH(tp, np)(t, probe->data, probe->dtype, np, (int64_t *)res.build_idx->data);
            if (!CU_LAUNCHED(tp, op)) return none;
        }
        return res;
    }
    size_t sz = sizeof(int64_t) * (size_t)(np + 1);
    int64_t *hd = (int64_t *)dkb__cu_scratch(tp, op, sz), *cnt = (int64_t *)dkb__cu_scratch(tp, op, sz);
    int64_t *pos = (int64_t *)dkb__cu_scratch(tp, op, sz), total = 0;
    if (!hd || !cnt || !pos || !CU_OK(tp, op, cudaMemsetAsync(cnt + np, 0, sizeof(int64_t), STREAM(tp)))) return none;
    if (np) {
        probe_count_kernel LAUNCH(tp, np)(t, probe->data, probe->dtype, np, left, hd, cnt);
        if (!CU_LAUNCHED(tp, op)) return none;
    }
    if (!dkb__cu_exclusive_sum(tp, op, cnt, pos, np + 1) || !dkb__cu_get(tp, op, &total, pos + np, sizeof total))
        return none;
    res.probe_idx = dkb__tp_new(tp, op, DKB_TP_I64, total);
    res.build_idx = dkb__tp_new(tp, op, DKB_TP_I64, total);
    if (!res.probe_idx || !res.build_idx) return none;
    if (total) {
        probe_write_kernel<<<dkb__cu_grid(tp, np), DKB_CU_BLOCK, 0, STREAM(tp)>>>(
            t, hd, pos, np, (int64_t *)res.probe_idx->data, (int64_t *)res.build_idx->data);
        if (!CU_LAUNCHED(tp, op)) return none;
    }
    return res;
}

extern "C" dkb_join_result dkb__cuda_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe,
                                          dkb_join_kind kind) {
    CU_SCRATCH_BEGIN(tp);
    dkb_join_result r = join_impl(tp, build, probe, kind);
    CU_SCRATCH_END(tp);
    return r;
}

/* ---- semi-join ---- */

/* The build keys' set: present[d] (direct), or a hash set of d (EMPTY_U64
 * marks a free slot, so d == EMPTY_U64 itself is kept in *has_empty). */
typedef struct kset {
    bool empty, direct;
    int64_t min;
    uint64_t span;
    uint8_t *present;
    unsigned long long *keys;
    int bits;
    int *has_empty;
} kset;

static __device__ __forceinline__ bool kset_has(const kset &s, int64_t k) {
    uint64_t d = (uint64_t)k - (uint64_t)s.min;
    if (s.empty || d > s.span) return false;
    if (s.direct) return s.present[d] != 0;
    if (d == EMPTY_U64) return *s.has_empty != 0;
    uint64_t mask = ((uint64_t)1 << s.bits) - 1;
    for (uint64_t h = hash_slot(d, s.bits);; h = (h + 1) & mask) {
        unsigned long long v = s.keys[h];
        if (v == d) return true;
        if (v == EMPTY_U64) return false;
    }
}

static __global__ void kset_insert_kernel(kset s, const void *data, dkb_tp_dtype t, int64_t n) {
    uint64_t mask = ((uint64_t)1 << s.bits) - 1;
    CU_FOR(i, n) {
        uint64_t d = key_offset(data, t, i, s.min);
        if (s.direct) {
            s.present[d] = 1;
            continue;
        }
        if (d == EMPTY_U64) {
            *s.has_empty = 1;
            continue;
        }
        for (uint64_t h = hash_slot(d, s.bits);; h = (h + 1) & mask) {
            unsigned long long old = atomicCAS(&s.keys[h], EMPTY_U64, (unsigned long long)d);
            if (old == EMPTY_U64 || old == d) break;
        }
    }
}

static __global__ void semi_probe_kernel(kset s, const void *pk, dkb_tp_dtype pt, int64_t np, uint8_t *out) {
    CU_FOR(i, np) out[i] = kset_has(s, dkb__d_ld_i64(pk, pt, i));
}

static bool build_kset(dkb_tp *tp, const char *op, const dkb_tensor *b, kset *s) {
    memset(s, 0, sizeof *s);
    s->empty = b->n == 0;
    if (s->empty) return true;
    int64_t mn, mx;
    if (!key_range(tp, op, b, &mn, &mx)) return false;
    s->min = mn;
    s->span = (uint64_t)mx - (uint64_t)mn;
    s->direct = use_direct(s->span, b->n);
    if (s->direct) {
        size_t bytes = (size_t)s->span + 1;
        s->present = (uint8_t *)dkb__cu_scratch(tp, op, bytes);
        if (!s->present || !CU_OK(tp, op, cudaMemsetAsync(s->present, 0, bytes, STREAM(tp)))) return false;
    } else {
        s->bits = table_bits(2 * b->n);
        size_t bytes = sizeof(unsigned long long) << s->bits;
        s->keys = (unsigned long long *)dkb__cu_scratch(tp, op, bytes);
        s->has_empty = (int *)dkb__cu_scratch(tp, op, sizeof(int));
        if (!s->keys || !s->has_empty || !CU_OK(tp, op, cudaMemsetAsync(s->keys, 0xff, bytes, STREAM(tp))) ||
            !CU_OK(tp, op, cudaMemsetAsync(s->has_empty, 0, sizeof(int), STREAM(tp))))
            return false;
    }
    kset_insert_kernel LAUNCH(tp, b->n)(*s, b->data, b->dtype, b->n);
    return CU_LAUNCHED(tp, op);
}

static dkb_tensor *semi_impl(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe) {
    const char *op = "semi_join";
    int64_t np = probe->n;
    dkb_tensor *r = dkb__tp_new(tp, op, DKB_TP_BOOL, np);
    kset s;
    if (!r || !build_kset(tp, op, build, &s)) return NULL;
    if (np) {
        semi_probe_kernel LAUNCH(tp, np)(s, probe->data, probe->dtype, np, (uint8_t *)r->data);
        if (!CU_LAUNCHED(tp, op)) return NULL;
    }
    return r;
}

extern "C" dkb_tensor *dkb__cuda_semi_join(dkb_tp *tp, const dkb_tensor *build, const dkb_tensor *probe) {
    CU_SCRATCH_BEGIN(tp);
    dkb_tensor *r = semi_impl(tp, build, probe);
    CU_SCRATCH_END(tp);
    return r;
}
