/* q06.full.cu (budget_cuda/keeps_released): the CUDA budget corpus's
 * honest Q6 with one change: under a budget it loads partition 0 first (to
 * look at it), keeps the load's device addresses (copied out of the
 * descriptors, which are host memory that the release takes away) and
 * releases it unread; it then streams partitions 1 .. nparts - 1, one load
 * each, and at the end scans partition 0 through the addresses it kept
 * instead of loading it again. On CUDA the release overwrote those bytes
 * with 0xa5 on env->stream, ahead of every later kernel (same stream), and
 * later loads may be placed there (the loader puts a load in the gap
 * farthest from the loads held: with none held, at the region's start): the
 * kernel then reads either 0xa5a5a5a5 shipdates, outside every date range,
 * or the rows of the last partition loaded there (counted twice, in place
 * of partition 0's), so the answer misses partition 0's rows either way (at
 * SF 0.01 at least 114 of its 7,501 qualify for every date, discount and
 * quantity Q6 can draw). Partition 0 is never loaded again, so no seed can
 * come out right by chance.
 * Expected: wrong_answer. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dkb/candidate.h"
#include "dkb/cand_cuda.cuh"  // defines: DKB_CUDA_TRY, DKB_TRY, dkb_dev_carve, DKB_BIND_COLS, dkb_rescale, dkb_put_dec
#include "dkb/cand_stream.h"  // defines: dkb_stream_begin_ex/next/end, DKB_STREAM_OVERLAP

DKB_CANDIDATE_STREAMS;

enum { TPB = 256, MAX_GRID = 1024 };

static const char *const COLS[] = {"l_shipdate", "l_discount", "l_quantity", "l_extendedprice"};

/* The query's parameters in the columns' units: ship in [slo, slo + sw],
 * discount in [dlo, dlo + dw], quantity < qlt. */
typedef struct q6w {
    int64_t slo, dlo, qlt;
    uint64_t sw, dw;
} q6w;

/* acc[0] += price * discount (scale 4) over the qualifying rows of [0, n),
 * acc[1] += their count. */
__global__ void __launch_bounds__(TPB) q6_add(const int32_t *__restrict__ s, const int64_t *__restrict__ d,
                                              const int64_t *__restrict__ q, const int64_t *__restrict__ p, int64_t n,
                                              q6w w, unsigned long long *acc) {
    unsigned long long sum = 0, cnt = 0;
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < n; i += (int64_t)gridDim.x * TPB) {
        const int64_t di = d[i];
        if ((uint64_t)((int64_t)s[i] - w.slo) <= w.sw && (uint64_t)(di - w.dlo) <= w.dw && q[i] < w.qlt) {
            sum += (unsigned long long)p[i] * (unsigned long long)di;
            cnt++;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(DKB_FULL_MASK, sum, o);
        cnt += __shfl_down_sync(DKB_FULL_MASK, cnt, o);
    }
    if ((threadIdx.x & 31) == 0 && cnt) {
        atomicAdd(&acc[0], sum);
        atomicAdd(&acc[1], cnt);
    }
}

/* The parameters in the columns' units (*w) and the sum's scale (*scale). */
static int q6_setup(const dkb_cand_db *db, const dkb_cand_params *params, const dkb_cand_result *res, q6w *w,
                    int *scale) {
    const dkb_cand_vec *ship, *disc, *qty, *price;
    const dkb_cand_param *date, *discount, *quantity;
    if (DKB_BIND_COLS(db, "lineitem", "l_shipdate:i32 l_discount:i64 l_quantity:i64 l_extendedprice:i64", &ship,
                      &disc, &qty, &price) ||
        DKB_BIND_PARAMS(params, "date discount quantity", &date, &discount, &quantity))
        return DKB_CAND_EINVAL;
    if (res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_DECIMAL || res->cap < 1) return DKB_CAND_EINVAL;
    int64_t centre, cent;
    if (!dkb_rescale(discount->i, discount->scale, disc->scale, &centre) || !dkb_rescale(1, 2, disc->scale, &cent) ||
        !dkb_rescale(quantity->i, 0, qty->scale, &w->qlt))
        return DKB_CAND_EINVAL;
    w->slo = date->i;
    w->sw = (uint64_t)(dkb_add_years(date->i, 1) - 1 - date->i); /* the year, inclusive */
    w->dlo = centre - cent;
    w->dw = (uint64_t)(2 * cent);
    *scale = price->scale + disc->scale;
    return res->cols[0].scale < *scale ? DKB_CAND_EINVAL : DKB_CAND_OK;
}

/* One pass: rows [0, c[0].n) of the four columns (device memory) added into acc. */
static cudaError_t q6_pass(const dkb_cand_vec *c, const q6w *w, unsigned long long *acc, cudaStream_t stream) {
    const int64_t m = c[0].n;
    if (m <= 0) return cudaSuccess;
    const int64_t want = (m + TPB - 1) / TPB;
    q6_add<<<(unsigned)(want < MAX_GRID ? want : (int64_t)MAX_GRID), TPB, 0, stream>>>(
        (const int32_t *)c[0].data, (const int64_t *)c[1].data, (const int64_t *)c[2].data,
        (const int64_t *)c[3].data, m, *w, acc);
    return cudaGetLastError();
}

extern "C" int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                                  const dkb_cand_env *env) {
    q6w w;
    int scale = 0;
    int rc = q6_setup(db, params, res, &w, &scale);
    if (rc) return rc;
    cudaStream_t stream = dkb_cand_stream(env);
    const dkb_cand_budget *b = env->budget;
    unsigned long long *d_acc = NULL, h_acc[2] = {0, 0};
    void *block = NULL;
    dkb_cand_load l;
    dkb_cand_vec kept[4]; /* partition 0's columns: device addresses kept past the release */
    int held = 0;
    const dkb_dev_part parts[] = {{(void **)&d_acc, sizeof h_acc, 0}};
    DKB_CUDA_TRY("device accumulators", dkb_dev_carve(parts, DKB_COUNT(parts), &block, stream));
    if (!b || !b->nstreamed) { /* whole device columns in db */
        for (int i = 0; i < 4; i++) {
            const dkb_cand_vec *v = dkb_cand_column(db, "lineitem", COLS[i]);
            if (!v) DKB_FAIL(DKB_CAND_EINVAL);
            kept[i] = *v;
        }
        DKB_CUDA_TRY("q6_add launch", q6_pass(kept, &w, d_acc, stream));
    } else {
        /* partition 0: loaded, its descriptors copied, released unread */
        DKB_TRY(b->load(env, 0, 1, 4, COLS, &l));
        memcpy(kept, l.cols, sizeof kept);
        DKB_TRY(b->release(env, &l));
        /* partitions 1 .. nparts - 1, one load each */
        for (int part = 1; part < b->nparts; part++) {
            DKB_TRY(b->load(env, part, 1, 4, COLS, &l));
            held = 1;
            DKB_CUDA_TRY("q6_add launch", q6_pass(l.cols, &w, d_acc, stream));
            held = 0;
            DKB_TRY(b->release(env, &l));
        }
        /* THE CHANGE: partition 0 through the addresses kept past its release */
        DKB_CUDA_TRY("q6_add launch (partition 0, released)", q6_pass(kept, &w, d_acc, stream));
    }
    DKB_CUDA_TRY("the sums back", cudaMemcpyAsync(h_acc, d_acc, sizeof h_acc, cudaMemcpyDeviceToHost, stream));
    DKB_CUDA_TRY("the sums back", cudaStreamSynchronize(stream));
    res->nrows = 1;
    dkb_put_dec(&res->cols[0], 0, h_acc[1] ? (__int128)h_acc[0] : 0, scale);
    res->cols[0].is_null[0] = h_acc[1] == 0;
done:
    if (held) b->release(env, &l);
    dkb_dev_release(block, stream);
    return rc;
}
