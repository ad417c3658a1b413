/* q02.full.cu: expert CUDA full-mode candidate for TPC-H Q2 (Minimum Cost
 * Supplier).
 *
 *   select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
 *   from part, supplier, partsupp, nation, region
 *   where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *     and p_size = :size and p_type like '%:type'
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = ':region'
 *     and ps_supplycost = (select min(ps_supplycost)
 *         from partsupp, supplier, nation, region
 *         where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *           and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *           and r_name = ':region')
 *   order by s_acctbal desc, n_name, s_name, p_partkey limit 100;
 *
 * Plan (all on env->stream; the CPU expert's logic):
 *  1. Host: nation and region (a few rows) come back; the region's nations
 *     and each nation's name code; p_type like '%:type' once per dictionary
 *     entry. Both tables go to the kernels by value.
 *  2. part_mark: the parts of the size and type get their row in an array
 *     over the dense partkeys (-1 otherwise); supp_mark: the region's
 *     suppliers their row in an array over the dense suppkeys.
 *  3. ps_hits: one pass over partsupp lists the (few) rows of a marked part
 *     and a marked supplier, with their cost, partkey, part and supplier
 *     rows, s_acctbal and s_nationkey (warp-aggregated appends).
 *  4. Host: the list comes back; the decorrelated subquery is the minimum
 *     cost per part over the list (sorted by partkey, cost); rows at their
 *     part's minimum get s_name gathered on the device and are sorted on
 *     the ORDER BY keys (acctbal desc, name code = string order, s_name
 *     bytes, partkey); the first 100 get p_mfgr, s_address, s_phone and
 *     s_comment gathered (late materialization).
 *
 * Bytes read (floor, SF10): ps_partkey, ps_suppkey 8 B x 8M (+ the hits'
 * cost), p_size, p_type, p_partkey 9 B x 2M, supplier 8 B x 100K. */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dkb/candidate.h"

namespace cg = cooperative_groups;

enum { LIMIT = 100, MAXNAT = 256 };

#define CUDA_TRY(what, call)                                                                    \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "q02.full.cu:%d: %s: %s\n", __LINE__, (what), cudaGetErrorString(e_)); \
            rc = 10;                                                                            \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

typedef struct {
    uint8_t ok[256];
} byte_table;

/* One listed partsupp row. */
typedef struct {
    long long cost, acctbal;
    int32_t partkey, srow, prow, nation;
} hit;

/* prow_of[p_partkey] = part row for parts of the size with an accepted
 * type code (prow_of preset to -1); a key outside 0..maxp sets *bad. */
__global__ void part_mark(const int32_t *__restrict__ pkey, const int32_t *__restrict__ psize,
                          const uint8_t *__restrict__ ptype, int64_t np, int64_t size, const byte_table type_ok,
                          int64_t maxp, int32_t *__restrict__ prow_of, int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = pkey[i];
        if (k < 0 || k > maxp) {
            *bad = 1;
            continue;
        }
        if (psize[i] == size && type_ok.ok[ptype[i]]) prow_of[k] = (int32_t)i;
    }
}

/* srow_of[s_suppkey] = supplier row for suppliers of the region's nations
 * (srow_of preset to -1); a key outside 0..maxs sets *bad. */
__global__ void supp_mark(const int32_t *__restrict__ skey, const int32_t *__restrict__ snat, int64_t ns,
                          const byte_table nat_ok, int64_t maxs, int32_t *__restrict__ srow_of,
                          int *__restrict__ bad) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ns; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = skey[i];
        if (k < 0 || k > maxs) {
            *bad = 1;
            continue;
        }
        const int32_t n = snat[i];
        if (n >= 0 && n < 256 && nat_ok.ok[n]) srow_of[k] = (int32_t)i;
    }
}

/* Lists the partsupp rows of a marked part and a marked supplier. */
__global__ void ps_hits(const int32_t *__restrict__ pspart, const int32_t *__restrict__ pssupp,
                        const int64_t *__restrict__ pscost, int64_t nps, const int32_t *__restrict__ prow_of,
                        int64_t maxp, const int32_t *__restrict__ srow_of, int64_t maxs,
                        const int64_t *__restrict__ sbal, const int32_t *__restrict__ snat, hit *__restrict__ list,
                        unsigned long long *__restrict__ count) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nps; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t p = __ldg(pspart + i);
        if (p < 0 || p > maxp) continue;
        const int32_t pr = __ldg(prow_of + p);
        if (pr < 0) continue;
        const int64_t s = __ldg(pssupp + i);
        if (s < 0 || s > maxs) continue;
        const int32_t sr = __ldg(srow_of + s);
        if (sr < 0) continue;
        hit h;
        h.cost = __ldg(pscost + i);
        h.acctbal = __ldg(sbal + sr);
        h.partkey = (int32_t)p;
        h.srow = sr;
        h.prow = pr;
        h.nation = __ldg(snat + sr);
        cg::coalesced_group g = cg::coalesced_threads();
        unsigned long long base = 0;
        if (g.thread_rank() == 0) base = atomicAdd(count, (unsigned long long)g.size());
        base = g.shfl(base, 0);
        list[base + g.thread_rank()] = h;
    }
}

/* ---- text gather: rows of a STR or dictionary column into host memory ---- */

/* len[k] = length of text row rows[k]; a row outside 0..n-1 sets *bad. */
__global__ void text_lengths(const int64_t *__restrict__ off, int64_t n, const int64_t *__restrict__ rows, int64_t m,
                             int64_t *__restrict__ len, int *__restrict__ bad) {
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

/* One warp per listed row: its bytes to out + at[k]. */
__global__ void text_copy(const int64_t *__restrict__ off, const char *__restrict__ bytes,
                          const int64_t *__restrict__ rows, int64_t m, const int64_t *__restrict__ at,
                          char *__restrict__ out) {
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= m) return;
    const int64_t r = rows[warp], a = off[r], l = off[r + 1] - a;
    for (int64_t i = lane; i < l; i += 32) out[at[warp] + i] = bytes[a + i];
}

/* code[k] = byte column value at row rows[k]; a row outside 0..n-1 sets *bad. */
__global__ void byte_gather(const uint8_t *__restrict__ col, int64_t n, const int64_t *__restrict__ rows, int64_t m,
                            uint8_t *__restrict__ code, int *__restrict__ bad) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = rows[k];
        if (r < 0 || r >= n) {
            *bad = 1;
            continue;
        }
        code[k] = col[r];
    }
}


/* The text of rows d_rows[0..m) (device array) of column v into host
 * memory: *h_off (m + 1 offsets) into *h_bytes (caller frees both).
 * STR columns are gathered on the device; U8 columns through the
 * dictionary. Returns 0, or nonzero with a message on stderr. */
static int fetch_text(const dkb_cand_vec *v, const int64_t *d_rows, int64_t m, cudaStream_t stream, int64_t **h_off,
                      char **h_bytes) {
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
        fprintf(stderr, "q02.full.cu: out of host memory gathering %s\n", v->name);
        rc = 4;
        goto done;
    }
    (*h_off)[0] = 0;
    CUDA_TRY("cudaMallocAsync gather flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
    CUDA_TRY("cudaMemsetAsync gather flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
    if (v->type == DKB_CAND_U8 && v->dict) {
        CUDA_TRY("cudaMallocAsync codes", cudaMallocAsync((void **)&d_code, (size_t)m + 1, stream));
        if (m > 0) byte_gather<<<blocks, 256, 0, stream>>>((const uint8_t *)v->data, v->n, d_rows, m, d_code, d_bad);
        CUDA_TRY("byte_gather launch", cudaGetLastError());
        CUDA_TRY("cudaMemcpyAsync codes", cudaMemcpyAsync(code, d_code, (size_t)m, cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaMemcpyAsync gather flag",
                 cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
        CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        int64_t total = 0;
        for (int64_t k = 0; k < m && !h_bad; k++) {
            if (code[k] >= v->dict->size) h_bad = 1;
            else total += (int64_t)v->dict->len[code[k]];
        }
        if (h_bad) {
            fprintf(stderr, "q02.full.cu: %s: a row or code out of range\n", v->name);
            rc = 6;
            goto done;
        }
        *h_bytes = (char *)malloc((size_t)total + 1);
        if (!*h_bytes) {
            rc = 4;
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
        fprintf(stderr, "q02.full.cu: %s is neither text nor a dictionary column\n", v->name);
        rc = 2;
        goto done;
    }
    CUDA_TRY("cudaMallocAsync lengths", cudaMallocAsync((void **)&d_len, sizeof(int64_t) * (size_t)(m + 1), stream));
    CUDA_TRY("cudaMallocAsync starts", cudaMallocAsync((void **)&d_at, sizeof(int64_t) * (size_t)(m + 1), stream));
    if (m > 0)
        text_lengths<<<blocks, 256, 0, stream>>>((const int64_t *)v->data, v->n, d_rows, m, d_len, d_bad);
    CUDA_TRY("text_lengths launch", cudaGetLastError());
    CUDA_TRY("cudaMemcpyAsync lengths",
             cudaMemcpyAsync(len, d_len, sizeof(int64_t) * (size_t)m, cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync gather flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
    for (int64_t k = 0; k < m && !h_bad; k++) {
        if (len[k] < 0) h_bad = 1;
        (*h_off)[k + 1] = (*h_off)[k] + len[k];
    }
    if (h_bad) {
        fprintf(stderr, "q02.full.cu: %s: a row out of range or a negative length\n", v->name);
        rc = 6;
        goto done;
    }
    *h_bytes = (char *)malloc((size_t)(*h_off)[m] + 1);
    if (!*h_bytes) {
        rc = 4;
        goto done;
    }
    CUDA_TRY("cudaMallocAsync text", cudaMallocAsync((void **)&d_out, (size_t)(*h_off)[m] + 1, stream));
    CUDA_TRY("cudaMemcpyAsync starts",
             cudaMemcpyAsync(d_at, *h_off, sizeof(int64_t) * (size_t)m, cudaMemcpyHostToDevice, stream));
    if (m > 0)
        text_copy<<<(unsigned)((m * 32 + 255) / 256), 256, 0, stream>>>((const int64_t *)v->data, v->bytes, d_rows, m,
                                                                        d_at, d_out);
    CUDA_TRY("text_copy launch", cudaGetLastError());
    CUDA_TRY("cudaMemcpyAsync text",
             cudaMemcpyAsync(*h_bytes, d_out, (size_t)(*h_off)[m], cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(stream));
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

static int like(const char *s, int64_t n, const char *p) {
    while (*p) {
        if (*p == '%') {
            while (*p == '%') p++;
            if (!*p) return 1;
            for (int64_t i = 0; i <= n; i++)
                if (like(s + i, n - i, p)) return 1;
            return 0;
        }
        if (n == 0 || (*p != '_' && *p != *s)) return 0;
        p++, s++, n--;
    }
    return n == 0;
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

/* Row k of gathered text. */
static int put_gathered(dkb_cand_res_col *col, int64_t r, const int64_t *off, const char *bytes, int64_t k) {
    return put_str(col, r, bytes + off[k], off[k + 1] - off[k]);
}

static int by_part_then_cost(const void *a, const void *b) {
    const hit *x = (const hit *)a, *y = (const hit *)b;
    if (x->partkey != y->partkey) return x->partkey < y->partkey ? -1 : 1;
    return (x->cost > y->cost) - (x->cost < y->cost);
}

typedef struct {
    hit h;
    int ncode;
    const char *sname;
    int64_t sname_len;
} cand;

static int order(const void *a, const void *b) {
    const cand *x = (const cand *)a, *y = (const cand *)b;
    if (x->h.acctbal != y->h.acctbal) return x->h.acctbal > y->h.acctbal ? -1 : 1;
    if (x->ncode != y->ncode) return x->ncode < y->ncode ? -1 : 1;
    const int64_t m = x->sname_len < y->sname_len ? x->sname_len : y->sname_len;
    const int c = memcmp(x->sname, y->sname, (size_t)m);
    if (c) return c;
    if (x->sname_len != y->sname_len) return x->sname_len < y->sname_len ? -1 : 1;
    return (x->h.partkey > y->h.partkey) - (x->h.partkey < y->h.partkey);
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    const dkb_cand_vec *rkey = dkb_cand_column(db, "region", "r_regionkey");
    const dkb_cand_vec *rname = dkb_cand_column(db, "region", "r_name");
    const dkb_cand_vec *nkey = dkb_cand_column(db, "nation", "n_nationkey");
    const dkb_cand_vec *nname = dkb_cand_column(db, "nation", "n_name");
    const dkb_cand_vec *nreg = dkb_cand_column(db, "nation", "n_regionkey");
    const dkb_cand_vec *pkey = dkb_cand_column(db, "part", "p_partkey");
    const dkb_cand_vec *pmfgr = dkb_cand_column(db, "part", "p_mfgr");
    const dkb_cand_vec *psize = dkb_cand_column(db, "part", "p_size");
    const dkb_cand_vec *ptype = dkb_cand_column(db, "part", "p_type");
    const dkb_cand_vec *skey = dkb_cand_column(db, "supplier", "s_suppkey");
    const dkb_cand_vec *sname = dkb_cand_column(db, "supplier", "s_name");
    const dkb_cand_vec *saddr = dkb_cand_column(db, "supplier", "s_address");
    const dkb_cand_vec *snat = dkb_cand_column(db, "supplier", "s_nationkey");
    const dkb_cand_vec *sphone = dkb_cand_column(db, "supplier", "s_phone");
    const dkb_cand_vec *sbal = dkb_cand_column(db, "supplier", "s_acctbal");
    const dkb_cand_vec *scomment = dkb_cand_column(db, "supplier", "s_comment");
    const dkb_cand_vec *pspart = dkb_cand_column(db, "partsupp", "ps_partkey");
    const dkb_cand_vec *pssupp = dkb_cand_column(db, "partsupp", "ps_suppkey");
    const dkb_cand_vec *pscost = dkb_cand_column(db, "partsupp", "ps_supplycost");
    const dkb_cand_param *size = dkb_cand_param_find(params, "size");
    const dkb_cand_param *type = dkb_cand_param_find(params, "type");
    const dkb_cand_param *region = dkb_cand_param_find(params, "region");
    if (!rkey || !rname || !nkey || !nname || !nreg || !pkey || !pmfgr || !psize || !ptype || !skey || !sname ||
        !saddr || !snat || !sphone || !sbal || !scomment || !pspart || !pssupp || !pscost || !size || !type ||
        !type->s || !region || !region->s)
        return 1;
    if (rkey->type != DKB_CAND_I32 || rname->type != DKB_CAND_U8 || !rname->dict || nkey->type != DKB_CAND_I32 ||
        nname->type != DKB_CAND_U8 || !nname->dict || nreg->type != DKB_CAND_I32 || pkey->type != DKB_CAND_I32 ||
        psize->type != DKB_CAND_I32 || ptype->type != DKB_CAND_U8 || !ptype->dict || ptype->dict->size > 256 ||
        skey->type != DKB_CAND_I32 || snat->type != DKB_CAND_I32 || sbal->type != DKB_CAND_I64 ||
        sname->type != DKB_CAND_STR || pspart->type != DKB_CAND_I32 || pssupp->type != DKB_CAND_I32 ||
        pscost->type != DKB_CAND_I64 || nkey->n > MAXNAT || rkey->n > MAXNAT)
        return 2;
    dkb_cand_res_col *r_bal = res_col(res, "s_acctbal", DKB_CAND_RES_DECIMAL);
    dkb_cand_res_col *r_sname = res_col(res, "s_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_nname = res_col(res, "n_name", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_pkey = res_col(res, "p_partkey", DKB_CAND_RES_INT);
    dkb_cand_res_col *r_mfgr = res_col(res, "p_mfgr", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_addr = res_col(res, "s_address", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_phone = res_col(res, "s_phone", DKB_CAND_RES_STRING);
    dkb_cand_res_col *r_comment = res_col(res, "s_comment", DKB_CAND_RES_STRING);
    if (!r_bal || !r_sname || !r_nname || !r_pkey || !r_mfgr || !r_addr || !r_phone || !r_comment ||
        r_bal->scale < sbal->scale)
        return 2;
    res->nrows = 0;
    r_sname->str_off[0] = r_nname->str_off[0] = r_mfgr->str_off[0] = r_addr->str_off[0] = 0;
    r_phone->str_off[0] = r_comment->str_off[0] = 0;

    cudaStream_t stream = dkb_cand_stream(env);
    const int64_t np = pkey->n, ns = skey->n, nps = pspart->n, maxp = np, maxs = ns; /* dense keys 1..N */
    int rc = 0, dev = 0, sms = 0, h_bad = 0;
    int32_t h_rk[MAXNAT], h_nk[MAXNAT], h_nr[MAXNAT];
    uint8_t h_rn[MAXNAT], h_nn[MAXNAT];
    int ncode_of[256];
    byte_table nat_ok, type_ok;
    int32_t *d_prow = NULL, *d_srow = NULL;
    int *d_bad = NULL;
    hit *d_list = NULL, *h_list = NULL;
    unsigned long long *d_count = NULL, h_count = 0;
    int64_t n = 0, nbest = 0, nout = 0;
    int64_t *h_rows = NULL, *d_rows = NULL;
    int64_t *t_off[5] = {NULL, NULL, NULL, NULL, NULL};
    char *t_bytes[5] = {NULL, NULL, NULL, NULL, NULL};
    cand *cs = NULL;

    memset(&nat_ok, 0, sizeof nat_ok);
    memset(&type_ok, 0, sizeof type_ok);
    for (int k = 0; k < 256; k++) ncode_of[k] = 0;
    if (nkey->n == 0 || rkey->n == 0 || np == 0 || ns == 0 || nps == 0) return 0;
    /* the region's nations (name code per nation key) */
    CUDA_TRY("cudaMemcpyAsync r_regionkey", cudaMemcpyAsync(h_rk, rkey->data, sizeof(int32_t) * (size_t)rkey->n,
                                                            cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync r_name", cudaMemcpyAsync(h_rn, rname->data, (size_t)rkey->n, cudaMemcpyDeviceToHost,
                                                       stream));
    CUDA_TRY("cudaMemcpyAsync n_nationkey", cudaMemcpyAsync(h_nk, nkey->data, sizeof(int32_t) * (size_t)nkey->n,
                                                            cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync n_regionkey", cudaMemcpyAsync(h_nr, nreg->data, sizeof(int32_t) * (size_t)nkey->n,
                                                            cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync n_name", cudaMemcpyAsync(h_nn, nname->data, (size_t)nkey->n, cudaMemcpyDeviceToHost,
                                                       stream));
    CUDA_TRY("cudaStreamSynchronize nation", cudaStreamSynchronize(stream));
    {
        const int rc_code = dkb_cand_dict_code(rname->dict, region->s);
        for (int64_t i = 0; i < nkey->n; i++) {
            if (h_nk[i] < 0 || h_nk[i] > 255) {
                fprintf(stderr, "q02.full.cu: nation key %d outside 0..255\n", (int)h_nk[i]);
                rc = 2;
                goto done;
            }
            ncode_of[h_nk[i]] = h_nn[i];
            for (int64_t j = 0; j < rkey->n; j++)
                if (h_rn[j] == rc_code && h_rk[j] == h_nr[i]) nat_ok.ok[h_nk[i]] = 1;
        }
    }
    /* p_type like '%:type', once per dictionary entry */
    {
        const size_t tl = strlen(type->s);
        char *pattern = (char *)malloc(tl + 2);
        if (!pattern) {
            rc = 3;
            goto done;
        }
        pattern[0] = '%';
        memcpy(pattern + 1, type->s, tl + 1);
        for (int c = 0; c < ptype->dict->size; c++)
            type_ok.ok[c] = (uint8_t)like(ptype->dict->str[c], (int64_t)ptype->dict->len[c], pattern);
        free(pattern);
    }

    CUDA_TRY("cudaGetDevice", cudaGetDevice(&dev));
    CUDA_TRY("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_TRY("cudaMallocAsync part rows", cudaMallocAsync((void **)&d_prow, sizeof(int32_t) * (size_t)(maxp + 1), stream));
    CUDA_TRY("cudaMallocAsync supplier rows",
             cudaMallocAsync((void **)&d_srow, sizeof(int32_t) * (size_t)(maxs + 1), stream));
    CUDA_TRY("cudaMallocAsync flag", cudaMallocAsync((void **)&d_bad, sizeof(int), stream));
    CUDA_TRY("cudaMallocAsync count", cudaMallocAsync((void **)&d_count, sizeof(unsigned long long), stream));
    CUDA_TRY("cudaMallocAsync list", cudaMallocAsync((void **)&d_list, sizeof(hit) * (size_t)nps, stream));
    CUDA_TRY("cudaMemsetAsync part rows", cudaMemsetAsync(d_prow, 0xff, sizeof(int32_t) * (size_t)(maxp + 1), stream));
    CUDA_TRY("cudaMemsetAsync supplier rows",
             cudaMemsetAsync(d_srow, 0xff, sizeof(int32_t) * (size_t)(maxs + 1), stream));
    CUDA_TRY("cudaMemsetAsync flag", cudaMemsetAsync(d_bad, 0, sizeof(int), stream));
    CUDA_TRY("cudaMemsetAsync count", cudaMemsetAsync(d_count, 0, sizeof(unsigned long long), stream));
    part_mark<<<(unsigned)((np + 255) / 256), 256, 0, stream>>>((const int32_t *)pkey->data,
                                                                (const int32_t *)psize->data,
                                                                (const uint8_t *)ptype->data, np, size->i, type_ok,
                                                                maxp, d_prow, d_bad);
    CUDA_TRY("part_mark launch", cudaGetLastError());
    supp_mark<<<(unsigned)((ns + 255) / 256), 256, 0, stream>>>((const int32_t *)skey->data,
                                                                (const int32_t *)snat->data, ns, nat_ok, maxs, d_srow,
                                                                d_bad);
    CUDA_TRY("supp_mark launch", cudaGetLastError());
    {
        int64_t grid = (nps + 255) / 256;
        if (grid > (int64_t)sms * 16) grid = (int64_t)sms * 16;
        ps_hits<<<(unsigned)grid, 256, 0, stream>>>((const int32_t *)pspart->data, (const int32_t *)pssupp->data,
                                                    (const int64_t *)pscost->data, nps, d_prow, maxp, d_srow, maxs,
                                                    (const int64_t *)sbal->data, (const int32_t *)snat->data, d_list,
                                                    d_count);
        CUDA_TRY("ps_hits launch", cudaGetLastError());
    }
    CUDA_TRY("cudaMemcpyAsync count", cudaMemcpyAsync(&h_count, d_count, sizeof h_count, cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaMemcpyAsync flag", cudaMemcpyAsync(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaStreamSynchronize count", cudaStreamSynchronize(stream));
    if (h_bad) {
        fprintf(stderr, "q02.full.cu: a part or supplier key outside 0..N\n");
        rc = 5;
        goto done;
    }
    n = (int64_t)h_count;
    if (n == 0) goto done;
    h_list = (hit *)malloc(sizeof(hit) * (size_t)n);
    cs = (cand *)malloc(sizeof(cand) * (size_t)n);
    h_rows = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    if (!h_list || !cs || !h_rows) {
        fprintf(stderr, "q02.full.cu: out of host memory for %lld partsupp rows\n", (long long)n);
        rc = 3;
        goto done;
    }
    CUDA_TRY("cudaMemcpyAsync list",
             cudaMemcpyAsync(h_list, d_list, sizeof(hit) * (size_t)n, cudaMemcpyDeviceToHost, stream));
    CUDA_TRY("cudaStreamSynchronize list", cudaStreamSynchronize(stream));
    /* the subquery: rows at their part's minimum cost */
    qsort(h_list, (size_t)n, sizeof(hit), by_part_then_cost);
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j < n && h_list[j].partkey == h_list[i].partkey) {
            if (h_list[j].cost == h_list[i].cost) {
                if (h_list[j].nation < 0 || h_list[j].nation > 255) {
                    fprintf(stderr, "q02.full.cu: supplier nation key %d outside 0..255\n", (int)h_list[j].nation);
                    rc = 5;
                    goto done;
                }
                cs[nbest].h = h_list[j];
                cs[nbest].ncode = ncode_of[h_list[j].nation];
                h_rows[nbest] = h_list[j].srow;
                nbest++;
            }
            j++;
        }
        i = j;
    }
    /* s_name of those rows, then the ORDER BY */
    CUDA_TRY("cudaMallocAsync rows", cudaMallocAsync((void **)&d_rows, sizeof(int64_t) * (size_t)n, stream));
    CUDA_TRY("cudaMemcpyAsync rows",
             cudaMemcpyAsync(d_rows, h_rows, sizeof(int64_t) * (size_t)nbest, cudaMemcpyHostToDevice, stream));
    rc = fetch_text(sname, d_rows, nbest, stream, &t_off[0], &t_bytes[0]);
    if (rc) goto done;
    for (int64_t k = 0; k < nbest; k++) {
        cs[k].sname = t_bytes[0] + t_off[0][k];
        cs[k].sname_len = t_off[0][k + 1] - t_off[0][k];
    }
    qsort(cs, (size_t)nbest, sizeof(cand), order);
    nout = nbest < LIMIT ? nbest : LIMIT;
    if (nout > res->cap) {
        fprintf(stderr, "q02.full.cu: %lld result rows over the cap %lld\n", (long long)nout, (long long)res->cap);
        rc = 4;
        goto done;
    }
    /* the winners' other text: supplier rows, then part rows for p_mfgr */
    for (int64_t r = 0; r < nout; r++) h_rows[r] = cs[r].h.srow;
    CUDA_TRY("cudaMemcpyAsync winner rows",
             cudaMemcpyAsync(d_rows, h_rows, sizeof(int64_t) * (size_t)nout, cudaMemcpyHostToDevice, stream));
    rc = fetch_text(saddr, d_rows, nout, stream, &t_off[1], &t_bytes[1]);
    if (!rc) rc = fetch_text(sphone, d_rows, nout, stream, &t_off[2], &t_bytes[2]);
    if (!rc) rc = fetch_text(scomment, d_rows, nout, stream, &t_off[3], &t_bytes[3]);
    if (rc) goto done;
    for (int64_t r = 0; r < nout; r++) h_rows[r] = cs[r].h.prow;
    CUDA_TRY("cudaMemcpyAsync winner part rows",
             cudaMemcpyAsync(d_rows, h_rows, sizeof(int64_t) * (size_t)nout, cudaMemcpyHostToDevice, stream));
    rc = fetch_text(pmfgr, d_rows, nout, stream, &t_off[4], &t_bytes[4]);
    if (rc) goto done;
    for (int64_t r = 0; r < nout; r++) {
        const cand *x = &cs[r];
        __int128 b = x->h.acctbal;
        for (int s = sbal->scale; s < r_bal->scale; s++) b *= 10;
        r_bal->dec[r] = b;
        r_pkey->i64[r] = x->h.partkey;
        r_bal->is_null[r] = r_pkey->is_null[r] = 0;
        if (x->ncode >= nname->dict->size ||
            !put_str(r_sname, r, x->sname, x->sname_len) ||
            !put_str(r_nname, r, nname->dict->str[x->ncode], (int64_t)nname->dict->len[x->ncode]) ||
            !put_gathered(r_mfgr, r, t_off[4], t_bytes[4], r) || !put_gathered(r_addr, r, t_off[1], t_bytes[1], r) ||
            !put_gathered(r_phone, r, t_off[2], t_bytes[2], r) ||
            !put_gathered(r_comment, r, t_off[3], t_bytes[3], r)) {
            fprintf(stderr, "q02.full.cu: result text over its byte cap (or a bad n_name code)\n");
            rc = 4;
            goto done;
        }
    }
    res->nrows = nout;
done:
    if (d_prow) cudaFreeAsync(d_prow, stream);
    if (d_srow) cudaFreeAsync(d_srow, stream);
    if (d_bad) cudaFreeAsync(d_bad, stream);
    if (d_count) cudaFreeAsync(d_count, stream);
    if (d_list) cudaFreeAsync(d_list, stream);
    if (d_rows) cudaFreeAsync(d_rows, stream);
    cudaStreamSynchronize(stream);
    for (int k = 0; k < 5; k++) free(t_off[k]), free(t_bytes[k]);
    free(h_list);
    free(cs);
    free(h_rows);
    return rc;
}
