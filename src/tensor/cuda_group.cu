/* cuda_group.cu: CUDA group-by (mirrors cpu_group.c): rows with equal key
 * tuples get one group id, groups numbered in order of first appearance.
 *
 * Every row's key tuple goes into a table of slots holding, per group, its
 * smallest row (the first appearance):
 *   - direct: one or two 8/16-bit keys whose value domains multiply to at
 *     most 2^20 index the table by value (no probing); so does one key of
 *     any width whose values span at most max(2n, 2^20) (dense keys such as
 *     orderkeys, or packed small keys: one min/max pass and a host read);
 *   - hash: any other keys go into an open-addressing table of at least 2n
 *     slots; a slot is claimed with a CAS of the row, rows with the same
 *     tuple (compared as int64 columns against the slot's row) lower it with
 *     atomicMin (only when smaller, so hot keys cost a read, not an atomic).
 * The occupied slots are compacted (cub::DeviceSelect), their first rows
 * radix-sorted (ascending first row = first-appearance order, so the sorted
 * array is first_row), each group's slot is overwritten with its rank, and
 * every row reads its group id from its slot. One host synchronization: the
 * number of groups, to size first_row. */
#include <limits.h>
#include <string.h>

#include <cub/cub.cuh>

#include "tensor/cuda_internal.cuh"

#define EMPTY_SLOT (~0ull)
#define MAX_INLINE_KEYS 4
#define DIRECT_MAX_SLOTS ((int64_t)1 << 20)

/* The key columns, by value for up to MAX_INLINE_KEYS keys, else through a
 * device array (cols). */
typedef struct key_col {
    const void *data;
    dkb_tp_dtype dtype;
} key_col;

typedef struct key_set {
    key_col k[MAX_INLINE_KEYS];
    const key_col *cols; /* device copy of all nkeys (nkeys > MAX_INLINE_KEYS) */
    int nkeys;
    int64_t base[2];     /* direct: smallest value of each key's domain */
    int64_t mult[2];     /* direct: slot = sum (v_j - base_j) * mult_j */
} key_set;

__device__ __forceinline__ key_col key_of(const key_set &ks, int j) {
    return ks.cols ? ks.cols[j] : ks.k[j];
}

__device__ __forceinline__ uint64_t fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

__device__ __forceinline__ uint64_t tuple_hash(const key_set &ks, int64_t i) {
    uint64_t hv = 0;
    for (int j = 0; j < ks.nkeys; j++) {
        key_col c = key_of(ks, j);
        hv = (hv ^ (uint64_t)dkb__d_ld_i64(c.data, c.dtype, i)) * 0x9E3779B97F4A7C15ull + (uint64_t)j;
    }
    return fmix64(hv);
}

__device__ __forceinline__ bool tuple_equal(const key_set &ks, int64_t a, int64_t b) {
    for (int j = 0; j < ks.nkeys; j++) {
        key_col c = key_of(ks, j);
        if (dkb__d_ld_i64(c.data, c.dtype, a) != dkb__d_ld_i64(c.data, c.dtype, b)) return false;
    }
    return true;
}

/* Direct table slot of row i. */
__device__ __forceinline__ int64_t direct_slot(const key_set &ks, int64_t i) {
    int64_t s = 0;
    for (int j = 0; j < ks.nkeys; j++) s += (dkb__d_ld_i64(ks.k[j].data, ks.k[j].dtype, i) - ks.base[j]) * ks.mult[j];
    return s;
}

/* Lower slot s to row i (a row of the slot's group). */
__device__ __forceinline__ void lower_to(unsigned long long *slots, int64_t s, unsigned long long cur, int64_t i) {
    if ((unsigned long long)i < cur) atomicMin(&slots[s], (unsigned long long)i);
}

__global__ void direct_insert_kernel(key_set ks, int64_t n, unsigned long long *slots) {
    CU_FOR(i, n) {
        int64_t s = direct_slot(ks, i);
        lower_to(slots, s, slots[s], i);
    }
}

/* Insert every row; row_slot[i] receives its slot. */
__global__ void hash_insert_kernel(key_set ks, int64_t n, unsigned long long *slots, uint64_t mask, int64_t *row_slot) {
    CU_FOR(i, n) {
        uint64_t h = tuple_hash(ks, i) & mask;
        for (;;) {
            /* a stale read is harmless: a slot only goes from empty to a row
             * of its group, then to smaller rows of the same group */
            unsigned long long cur = slots[h];
            if (cur == EMPTY_SLOT) {
                cur = atomicCAS(&slots[h], EMPTY_SLOT, (unsigned long long)i);
                if (cur == EMPTY_SLOT) break;
            }
            if (tuple_equal(ks, (int64_t)cur, i)) {
                lower_to(slots, (int64_t)h, cur, i);
                break;
            }
            h = (h + 1) & mask;
        }
        row_slot[i] = (int64_t)h;
    }
}

struct slot_used {
    __device__ __forceinline__ bool operator()(const unsigned long long &v) const { return v != EMPTY_SLOT; }
};

/* slots[slot of group k's first row] = k. */
__global__ void rank_kernel(key_set ks, bool direct, const int64_t *first, int64_t ng, const int64_t *row_slot,
                            unsigned long long *slots) {
    CU_FOR(k, ng) {
        int64_t f = first[k];
        slots[direct ? direct_slot(ks, f) : row_slot[f]] = (unsigned long long)k;
    }
}

__global__ void gid_kernel(key_set ks, bool direct, int64_t n, const int64_t *row_slot, const unsigned long long *slots,
                           int64_t *gid) {
    CU_FOR(i, n) gid[i] = (int64_t)slots[direct ? direct_slot(ks, i) : row_slot[i]];
}

/* Domain of an 8/16-bit key dtype: its smallest value and size (0: not small). */
static int64_t small_domain(dkb_tp_dtype t, int64_t *base) {
    switch (t) {
    case DKB_TP_BOOL: case DKB_TP_U8: *base = 0; return 256;
    case DKB_TP_I8: *base = -128; return 256;
    case DKB_TP_I16: *base = -32768; return 65536;
    default: return 0;
    }
}

/* mm[0] = min, mm[1] = max of the key (mm preset to LLONG_MAX, LLONG_MIN). */
struct min_op {
    __device__ __forceinline__ long long operator()(long long a, long long b) const { return a < b ? a : b; }
};
struct max_op {
    __device__ __forceinline__ long long operator()(long long a, long long b) const { return a > b ? a : b; }
};

__global__ void key_range_kernel(const void *data, dkb_tp_dtype t, int64_t n, long long *mm) {
    typedef cub::BlockReduce<long long, DKB_CU_BLOCK> reduce;
    __shared__ typename reduce::TempStorage t_lo, t_hi;
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    CU_FOR(i, n) {
        long long v = dkb__d_ld_i64(data, t, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    lo = reduce(t_lo).Reduce(lo, min_op());
    hi = reduce(t_hi).Reduce(hi, max_op());
    if (threadIdx.x == 0) {
        atomicMin(&mm[0], lo);
        atomicMax(&mm[1], hi);
    }
}

/* One key whose values span at most max(2n, DIRECT_MAX_SLOTS) slots: true
 * with *base its minimum and *slots the span. */
static bool dense_key(dkb_tp *tp, const char *op, const dkb_tensor *k, int64_t n, int64_t *base, int64_t *slots) {
    long long init[2] = {LLONG_MAX, LLONG_MIN}, mm[2];
    long long *dev = (long long *)dkb__cu_scratch(tp, op, sizeof init);
    if (!dev || !dkb__cu_put(tp, op, dev, init, sizeof init)) return false;
    key_range_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, dkb__cu_stream(tp)>>>(k->data, k->dtype, n, dev);
    if (!CU_LAUNCHED(tp, op) || !dkb__cu_get(tp, op, mm, dev, sizeof mm)) return false;
    uint64_t span = (uint64_t)mm[1] - (uint64_t)mm[0] + 1;  /* 0: the whole int64 range */
    uint64_t limit = (uint64_t)(2 * n > DIRECT_MAX_SLOTS ? 2 * n : DIRECT_MAX_SLOTS);
    if (span == 0 || span > limit) return false;
    *base = mm[0];
    *slots = (int64_t)span;
    return true;
}

static int bits_for(uint64_t x) { /* bits to hold values 0..x */
    int b = 1;
    while (b < 64 && (x >> b)) b++;
    return b;
}

extern "C" dkb_groups dkb__cuda_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys) {
    static const char op[] = "group";
    dkb_groups g = {NULL, NULL, 0};
    int64_t n = keys[0]->n;
    cudaStream_t st = dkb__cu_stream(tp);
    dkb_tensor *gid = dkb__tp_new(tp, op, DKB_TP_I64, n);
    if (!gid) return g;
    if (n == 0) {
        g.first_row = dkb__tp_new(tp, op, DKB_TP_I64, 0);
        if (g.first_row) g.group_id = gid;
        return g;
    }
    CU_SCRATCH_BEGIN(tp);
    SCRATCH_BEGIN(tp); /* host scratch: the key descriptors of > 64 keys */
    key_set ks;
    memset(&ks, 0, sizeof ks);
    ks.nkeys = nkeys;
    for (int j = 0; j < nkeys && j < MAX_INLINE_KEYS; j++) ks.k[j].data = keys[j]->data, ks.k[j].dtype = keys[j]->dtype;

    /* direct when one or two keys have small domains multiplying to <= 2^20 */
    bool direct = nkeys <= 2;
    int64_t cap = 1;
    for (int j = nkeys - 1; direct && j >= 0; j--) {
        int64_t d = small_domain(keys[j]->dtype, &ks.base[j]);
        ks.mult[j] = cap;
        cap *= d;
        direct = d > 0 && cap <= DIRECT_MAX_SLOTS;
    }
    int64_t *row_slot = NULL;
    uint64_t mask = 0;
    if (!direct && nkeys == 1 && dense_key(tp, op, keys[0], n, &ks.base[0], &cap)) {
        direct = true;
        ks.mult[0] = 1;
    }
    if (!direct) {
        int bits = 10;
        while (((int64_t)1 << bits) < 2 * n) bits++;
        cap = (int64_t)1 << bits;
        mask = (uint64_t)cap - 1;
        if (nkeys > MAX_INLINE_KEYS) {
            key_col host[64], *dev;
            key_col *h = nkeys <= 64 ? host : (key_col *)dkb__tp_scratch(tp, op, sizeof *h * (size_t)nkeys);
            if (!h) goto out;
            for (int j = 0; j < nkeys; j++) h[j].data = keys[j]->data, h[j].dtype = keys[j]->dtype;
            dev = (key_col *)dkb__cu_scratch(tp, op, sizeof *dev * (size_t)nkeys);
            if (!dev || !dkb__cu_put(tp, op, dev, h, sizeof *dev * (size_t)nkeys)) goto out;
            ks.cols = dev;
        }
        row_slot = (int64_t *)dkb__cu_scratch(tp, op, sizeof *row_slot * (size_t)n);
        if (!row_slot) goto out;
    }
    {
        unsigned long long *slots = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *slots * (size_t)cap);
        unsigned long long *used = (unsigned long long *)dkb__cu_scratch(tp, op, sizeof *used * (size_t)cap);
        int64_t *nsel = (int64_t *)dkb__cu_scratch(tp, op, sizeof *nsel);
        if (!slots || !used || !nsel) goto out;
        if (!CU_OK(tp, op, cudaMemsetAsync(slots, 0xff, sizeof *slots * (size_t)cap, st))) goto out;
        if (direct) direct_insert_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, st>>>(ks, n, slots);
        else hash_insert_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, st>>>(ks, n, slots, mask, row_slot);
        if (!CU_LAUNCHED(tp, op)) goto out;

        size_t tb = 0;
        if (!CU_OK(tp, op, cub::DeviceSelect::If(NULL, tb, slots, used, nsel, cap, slot_used(), st))) goto out;
        void *tmp = dkb__cu_scratch(tp, op, tb ? tb : 1);
        if (!tmp || !CU_OK(tp, op, cub::DeviceSelect::If(tmp, tb, slots, used, nsel, cap, slot_used(), st))) goto out;
        int64_t ng = 0;
        if (!dkb__cu_get(tp, op, &ng, nsel, sizeof ng)) goto out;

        dkb_tensor *first = dkb__tp_new(tp, op, DKB_TP_I64, ng);
        if (!first) goto out;
        unsigned long long *sorted = (unsigned long long *)first->data;
        int end_bit = bits_for((uint64_t)n - 1);
        tb = 0;
        if (!CU_OK(tp, op, cub::DeviceRadixSort::SortKeys(NULL, tb, used, sorted, ng, 0, end_bit, st))) goto out;
        tmp = dkb__cu_scratch(tp, op, tb ? tb : 1);
        if (!tmp || !CU_OK(tp, op, cub::DeviceRadixSort::SortKeys(tmp, tb, used, sorted, ng, 0, end_bit, st))) goto out;
        rank_kernel<<<dkb__cu_grid(tp, ng), DKB_CU_BLOCK, 0, st>>>(ks, direct, (const int64_t *)first->data, ng, row_slot,
                                                                    slots);
        if (!CU_LAUNCHED(tp, op)) goto out;
        gid_kernel<<<dkb__cu_grid(tp, n), DKB_CU_BLOCK, 0, st>>>(ks, direct, n, row_slot, slots, (int64_t *)gid->data);
        if (!CU_LAUNCHED(tp, op)) goto out;
        g.group_id = gid;
        g.first_row = first;
        g.ngroups = ng;
    }
out:
    SCRATCH_END(tp);
    CU_SCRATCH_END(tp);
    return g;
}
