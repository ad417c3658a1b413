/* q06.core.cu (adversarial, timeout): a kernel that never ends (the
 * worker is killed at --timeout; the next candidate runs normally). */
#include "dkb/candidate.h"

__global__ void q06_sum(const int32_t *s, const int64_t *d, const int64_t *q, const int64_t *p, int64_t n,
                        int64_t slo, uint64_t sw, int64_t dlo, uint64_t dw, int64_t qlt, unsigned long long *acc) {
    unsigned long long sum = 0, cnt = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        bool keep = ((uint64_t)s[i] - (uint64_t)slo <= sw) && ((uint64_t)d[i] - (uint64_t)dlo <= dw) && q[i] < qlt;
        if (keep) sum += (unsigned long long)(p[i] * d[i]), cnt++;
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, o);
        cnt += __shfl_down_sync(0xffffffffu, cnt, o);
    }
    if ((threadIdx.x & 31) == 0 && cnt) {
        atomicAdd(&acc[0], sum);
        atomicAdd(&acc[1], cnt);
    }
}

__global__ void q06_store(const unsigned long long *acc, __int128 *revenue) {
    revenue[0] = (__int128)(long long)acc[0];
    while (*(volatile unsigned long long *)&acc[1] != 12345678901ull) { } /* adversarial: never ends */
}

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate"), *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity"), *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_scalar *ship_lo = dkb_cand_scalar_find(in, "ship_lo"), *ship_hi = dkb_cand_scalar_find(in, "ship_hi");
    const dkb_cand_scalar *disc_lo = dkb_cand_scalar_find(in, "disc_lo"), *disc_hi = dkb_cand_scalar_find(in, "disc_hi");
    const dkb_cand_scalar *qty_lt = dkb_cand_scalar_find(in, "qty_lt");
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    if (!ship || !disc || !qty || !price || !ship_lo || !ship_hi || !disc_lo || !disc_hi || !qty_lt || !revenue)
        return 1;
    if (ship->type != DKB_CAND_I32 || disc->type != DKB_CAND_I64 || revenue->type != DKB_CAND_I128 || revenue->cap < 1)
        return 2;
    if (ship_hi->i < ship_lo->i || disc_hi->i < disc_lo->i) {
        revenue->n = 0;
        return 0;
    }
    cudaStream_t st = dkb_cand_stream(env);
    unsigned long long *acc = NULL, host[2] = {0, 0};
    if (cudaMallocAsync((void **)&acc, sizeof host, st) != cudaSuccess) return 3;
    cudaMemsetAsync(acc, 0, sizeof host, st);
    int64_t n = ship->n;
    int blocks = (int)((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024);
    q06_sum<<<blocks > 0 ? blocks : 1, 256, 0, st>>>(
        (const int32_t *)ship->data, (const int64_t *)disc->data, (const int64_t *)qty->data,
        (const int64_t *)price->data, n, ship_lo->i, (uint64_t)ship_hi->i - (uint64_t)ship_lo->i, disc_lo->i,
        (uint64_t)disc_hi->i - (uint64_t)disc_lo->i, qty_lt->i, acc);
    q06_store<<<1, 1, 0, st>>>(acc, (__int128 *)revenue->data);
    cudaMemcpyAsync(host, acc, sizeof host, cudaMemcpyDeviceToHost, st);
    cudaFreeAsync(acc, st);
    if (cudaStreamSynchronize(st) != cudaSuccess || cudaGetLastError() != cudaSuccess) return 4;
    revenue->n = host[1] > 0;
    return 0;
}
