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
 *  3. q16_scan: one pass over partsupp reads each row's part columns at
 *     ps_partkey - 1 (part keys dense 1..N) and, for kept rows, inserts the
 *     pair (group, suppkey) into an open-addressing set (atomicCAS, load
 *     <= 1/2); the thread whose insert created the pair adds 1 to its
 *     group's count: count(distinct) exactly, in any order of the threads.
 *     The group is the dense index (brand code, type code, size rank).
 *  4. The counts come back; the host sorts the non-empty groups by count
 *     desc, then group index (codes sort as strings and ranks as sizes, so
 *     that is p_brand, p_type, p_size).
 *
 * Bytes read (floor, SF10): ps_partkey, ps_suppkey 8 B x 8M, p_brand,
 * p_type, p_size 6 B x 2M, s_comment ~0.7 MB offsets + ~6 MB text. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

enum { TPB = 256 };

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q16.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = 10;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

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

/* Kept partsupp rows insert (group << 32 | suppkey) into the set tkey
 * (0: empty; suppkey >= 1 so a real key is never 0); a new pair adds 1 to
 * gcnt[group]. A key outside 1..N sets *bad. */
__global__ void __launch_bounds__(TPB) q16_scan(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                                                int64_t nps, const uint8_t *__restrict__ pbrand,
                                                const uint8_t *__restrict__ ptype, const int32_t *__restrict__ psize,
                                                int64_t nparts, const uint8_t *__restrict__ bad_supp, int64_t nsupp,
                                                const part_tests t, unsigned long long *__restrict__ tkey, int shift,
                                                uint64_t mask, unsigned int *__restrict__ gcnt, int *__restrict__ bad) {
    int oops = 0;
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < nps; i += (int64_t)gridDim.x * TPB) {
        const uint32_t p = (uint32_t)__ldg(pspart + i) - 1u, s = (uint32_t)__ldg(pssupp + i) - 1u;
        if ((uint64_t)p >= (uint64_t)nparts || (uint64_t)s >= (uint64_t)nsupp) {
            oops = 1;
            continue;
        }
        const int32_t size = __ldg(psize + p);
        if ((uint32_t)size >= 64u || !((t.size_mask >> size) & 1ull)) continue;
        const uint8_t b = __ldg(pbrand + p), ty = __ldg(ptype + p);
        if (!t.brand_ok[b] || !t.type_ok[ty] || __ldg(bad_supp + s)) continue;
        const uint64_t g = ((uint64_t)b * (uint64_t)t.ntype + ty) * (uint64_t)t.nsizes + (uint64_t)t.size_rank[size];
        const unsigned long long key = (unsigned long long)(g << 32 | (uint64_t)(s + 1u));
        uint64_t h = slot_of(key, shift);
        for (;;) {
            const unsigned long long old = atomicCAS(tkey + h, 0ull, key);
            if (old == 0ull) {
                atomicAdd(gcnt + g, 1u);
                break;
            }
            if (old == key) break;
            h = (h + 1) & mask;
        }
    }
    if (oops) *bad = 1;
}

static dkb_cand_res_col *res_col(dkb_cand_result *res, const char *name, dkb_cand_res_type type) {
    for (int c = 0; c < res->ncols; c++)
        if (strcmp(res->cols[c].name, name) == 0) return res->cols[c].type == type ? &res->cols[c] : NULL;
    return NULL;
}

static int put_str(dkb_cand_res_col *col, int64_t r, const char *s, int64_t len) {
    const int64_t at = col->str_off[r];
    if (at + len > col->bytes_cap) return 0;
    memcpy(col->str_bytes + at, s, (size_t)len);
    col->str_off[r + 1] = at + len;
    col->is_null[r] = 0;
    return 1;
}

typedef struct {
    unsigned int count;
    int64_t g;
} group_row;

/* count desc, then group index asc (p_brand, p_type, p_size) */
static int by_count_then_group(const void *a, const void *b) {
    const group_row *x = (const group_row *)a, *y = (const group_row *)b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->g > y->g) - (x->g < y->g);
}

static const char *const SIZE_NAME[8] = {"size1", "size2", "size3", "size4", "size5", "size6", "size7", "size8"};

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *pbrand = dkb_cand_column(db, "part", "p_brand");
    const dkb_cand_vec *ptype = dkb_cand_column(db, "part", "p_type");
    const dkb_cand_vec *psize = dkb_cand_column(db, "part", "p_size");
    const dkb_cand_vec *pspart = dkb_cand_column(db, "partsupp", "ps_partkey");
    const dkb_cand_vec *pssupp = dkb_cand_column(db, "partsupp", "ps_suppkey");
    const dkb_cand_vec *scomment = dkb_cand_column(db, "supplier", "s_comment");
    const dkb_cand_param *pb = dkb_cand_param_find(params, "brand");
    const dkb_cand_param *pt = dkb_cand_param_find(params, "type");
    if (!pbrand || !ptype || !psize || !pspart || !pssupp || !scomment || !pb || !pt || !pb->s || !pt->s) return 1;
    if (pbrand->type != DKB_CAND_U8 || ptype->type != DKB_CAND_U8 || !pbrand->dict || !ptype->dict ||
        psize->type != DKB_CAND_I32 || pspart->type != DKB_CAND_I32 || pssupp->type != DKB_CAND_I32 ||
        scomment->type != DKB_CAND_STR || pbrand->dict->size > 256 || ptype->dict->size > 256)
        return 2;
    dkb_cand_res_col *c_brand = res_col(res, "p_brand", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_type = res_col(res, "p_type", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_size = res_col(res, "p_size", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_cnt = res_col(res, "supplier_cnt", DKB_CAND_RES_INT);
    if (!c_brand || !c_type || !c_size || !c_cnt) return 3;

    part_tests t;
    memset(&t, 0, sizeof t);
    for (int k = 0; k < 8; k++) {
        const dkb_cand_param *ps = dkb_cand_param_find(params, SIZE_NAME[k]);
        if (!ps) return 1;
        if (ps->i >= 0 && ps->i < 64) t.size_mask |= 1ull << ps->i;
    }
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
    int rc = 0, dev = 0, sms = 0, h_bad = 0, shift = 64;
    int64_t size = 1, m = 0;
    uint8_t *d_bad_supp = NULL;
    unsigned long long *d_tkey = NULL;
    unsigned int *d_gcnt = NULL, *h_gcnt = NULL;
    int *d_bad = NULL;
    group_row *rows = NULL;

    res->nrows = 0;
    c_brand->str_off[0] = c_type->str_off[0] = 0;
    if (nps == 0 || t.nsizes == 0) return 0;
    if (nps >= INT32_MAX || nsupp == 0 || nparts == 0) {
        fprintf(stderr, "q16.full.cu: partsupp of %lld rows with %lld parts and %lld suppliers\n", (long long)nps,
                (long long)nparts, (long long)nsupp);
        return 4;
    }
    while (size < 2 * nps + 2) size <<= 1, shift--;
    CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
    CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_TRY("cudaMallocAsync complaint marks", cudaMallocAsync((void **)&d_bad_supp, (size_t)nsupp, stream));
    CUDA_TRY("cudaMallocAsync pair set",
             cudaMallocAsync((void **)&d_tkey, sizeof(unsigned long long) * (size_t)size, stream));
    CUDA_TRY("cudaMallocAsync group counts",
             cudaMallocAsync((void **)&d_gcnt, sizeof(unsigned int) * (size_t)ngroups, stream));
    CUDA_TRY("cudaMallocAsync flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
    CUDA_TRY("cudaMemsetAsync pair set", cudaMemsetAsync(d_tkey, 0, sizeof(unsigned long long) * (size_t)size, stream));
    CUDA_TRY("cudaMemsetAsync group counts", cudaMemsetAsync(d_gcnt, 0, sizeof(unsigned int) * (size_t)ngroups, stream));
    CUDA_TRY("cudaMemsetAsync flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
    complaints<<<(unsigned)((nsupp + 127) / 128), 128, 0, stream>>>((const int64_t *)scomment->data, scomment->bytes,
                                                                    nsupp, d_bad_supp);
    CUDA_TRY("complaints launch", cudaGetLastError());
    {
        int64_t grid = (nps + TPB - 1) / TPB;
        if (grid > (int64_t)sms * 16) grid = (int64_t)sms * 16;
        q16_scan<<<(unsigned)grid, TPB, 0, stream>>>(
            (const int32_t *)pspart->data, (const int32_t *)pssupp->data, nps, (const uint8_t *)pbrand->data,
            (const uint8_t *)ptype->data, (const int32_t *)psize->data, nparts, d_bad_supp, nsupp, t, d_tkey, shift,
            (uint64_t)(size - 1), d_gcnt, d_bad);
        CUDA_TRY("q16_scan launch", cudaGetLastError());
    }
    h_gcnt = (unsigned int *)malloc(sizeof(unsigned int) * (size_t)ngroups);
    rows = (group_row *)malloc(sizeof(group_row) * (size_t)ngroups);
    if (!h_gcnt || !rows) {
        fprintf(stderr, "q16.full.cu: out of host memory for %lld groups\n", (long long)ngroups);
        rc = 4;
        goto done;
    }
    CUDA_TRY("cudaMemcpyAsync group counts", cudaMemcpyAsync(h_gcnt, d_gcnt, sizeof(unsigned int) * (size_t)ngroups,
                                                             cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
    if (h_bad) {
        fprintf(stderr, "q16.full.cu: a partsupp part or supplier key outside 1..N\n");
        rc = 5;
        goto done;
    }
    for (int64_t g = 0; g < ngroups; g++)
        if (h_gcnt[g]) {
            rows[m].count = h_gcnt[g];
            rows[m].g = g;
            m++;
        }
    qsort(rows, (size_t)m, sizeof(group_row), by_count_then_group);
    if (m > res->cap) {
        fprintf(stderr, "q16.full.cu: %lld result rows over the cap %lld\n", (long long)m, (long long)res->cap);
        rc = 6;
        goto done;
    }
    for (int64_t r = 0; r < m; r++) {
        const int64_t g = rows[r].g;
        const int sz = size_value[g % t.nsizes], ty = (int)(g / t.nsizes % ntype), b = (int)(g / t.nsizes / ntype);
        if (!put_str(c_brand, r, pbrand->dict->str[b], (int64_t)pbrand->dict->len[b]) ||
            !put_str(c_type, r, ptype->dict->str[ty], (int64_t)ptype->dict->len[ty])) {
            fprintf(stderr, "q16.full.cu: result text over its byte cap\n");
            rc = 7;
            goto done;
        }
        c_size->i64[r] = sz;
        c_cnt->i64[r] = rows[r].count;
        c_size->is_null[r] = c_cnt->is_null[r] = 0;
    }
    res->nrows = m;
done:
    if (d_bad_supp) cudaFreeAsync(d_bad_supp, stream);
    if (d_tkey) cudaFreeAsync(d_tkey, stream);
    if (d_gcnt) cudaFreeAsync(d_gcnt, stream);
    if (d_bad) cudaFreeAsync(d_bad, stream);
    cudaStreamSynchronize(stream);
    free(h_gcnt);
    free(rows);
    return rc;
}
