/* q04.full.c: expert CPU candidate for TPC-H Q4 (Order Priority Checking).
 *
 *   select o_orderpriority, count(*) as order_count from orders
 *   where o_orderdate >= date ':date' and o_orderdate < date ':date' + interval '3' month
 *     and exists (select * from lineitem
 *                 where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
 *   group by o_orderpriority order by o_orderpriority;
 *
 * Plan: a partition-local merge of orders and lineitem. dbgen (and the
 * store) keeps lineitem grouped by orderkey in the same ascending order as
 * orders, so the orders are cut into chunks, each chunk's first lineitem is
 * found by binary search on l_orderkey, and each chunk reads its
 * orders once. The EXISTS is decided per order on its own run of line items
 * (stopping at the first late one); the run is only skipped, never read,
 * when the order is outside the window. Counts per priority code are kept
 * per chunk and added at the end (exact, deterministic); codes are in
 * string order, so the groups come out sorted.
 *
 * Join mechanics: each chunk of orders first selects its qualifying orders
 * branch-free (blocks of 512), then gallops forward in l_orderkey to each
 * selected order's run of items, prefetching the probable run start of
 * the order 6 selections ahead; the runs of other orders are never read.
 * Orderkeys are int32 (the store widens them only above SF ~357). */
#include <stdlib.h>

#include "dkb/candidate.h"

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { SUB = 512, AHEAD = 6 }; /* orders per selection block; prefetch distance */

static inline int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* date + interval 'k' month (day clamped to the month's length, as SQL). */
static inline int64_t plus_months(int64_t days, int k) {
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int64_t mm = (int64_t)m - 1 + k;
    y += mm >= 0 ? mm / 12 : (mm - 11) / 12;
    m = (int)(((mm % 12) + 12) % 12) + 1;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int len = mdays[m - 1];
    if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) len = 29;
    if (d > len) d = len;
    return days_from_civil(y, m, d);
}

static inline int64_t lower_bound_i32(const int32_t *a, int64_t n, int64_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The first index in [lo, hi) whose key is >= key (a sorted run): gallop
 * forward from lo, then binary search; cheap when the answer is near lo. */
static inline int64_t gallop_i32(const int32_t *a, int64_t lo, int64_t hi, int64_t key) {
    if (lo >= hi || a[lo] >= key) return lo;
    int64_t step = 1, base = lo;
    while (base + step < hi && a[base + step] < key) {
        base += step;
        step <<= 1;
    }
    int64_t l = base + 1, h = base + step < hi ? base + step : hi;
    while (l < h) {
        const int64_t mid = l + (h - l) / 2;
        if (a[mid] < key) l = mid + 1;
        else h = mid;
    }
    return l;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *okey = dkb_cand_column(db, "orders", "o_orderkey");
    const dkb_cand_vec *odate = dkb_cand_column(db, "orders", "o_orderdate");
    const dkb_cand_vec *oprio = dkb_cand_column(db, "orders", "o_orderpriority");
    const dkb_cand_vec *lkey = dkb_cand_column(db, "lineitem", "l_orderkey");
    const dkb_cand_vec *lcommit = dkb_cand_column(db, "lineitem", "l_commitdate");
    const dkb_cand_vec *lreceipt = dkb_cand_column(db, "lineitem", "l_receiptdate");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    if (!okey || !odate || !oprio || !lkey || !lcommit || !lreceipt || !date) return DKB_CAND_EINVAL;
    if (okey->type != DKB_CAND_I32 || lkey->type != DKB_CAND_I32 || odate->type != DKB_CAND_I32 ||
        oprio->type != DKB_CAND_U8 || !oprio->dict || res->ncols != 2 ||
        res->cols[0].type != DKB_CAND_RES_STRING || res->cols[1].type != DKB_CAND_RES_INT)
        return DKB_CAND_EINVAL;

    const int32_t lo_day = (int32_t)date->i, hi_day = (int32_t)plus_months(date->i, 3); /* [lo, hi) */
    const uint32_t width = (uint32_t)(hi_day - lo_day);
    const int32_t *ok = okey->data, *od = odate->data, *lk = lkey->data;
    const int32_t *cd = lcommit->data, *rd = lreceipt->data;
    const uint8_t *pr = oprio->data;
    const int64_t no = okey->n, nl = lkey->n;
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t nchunks = no < 64 ? 1 : (int64_t)nt * 16;
    int64_t *counts = calloc((size_t)nchunks * 256, sizeof(int64_t));
    if (!counts) return DKB_CAND_ENOMEM;

#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(no >= PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t o0 = c * no / nchunks, o1 = (c + 1) * no / nchunks;
        if (o0 >= o1) continue;
        int64_t j = lower_bound_i32(lk, nl, ok[o0]);
        const int64_t jend = o1 < no ? lower_bound_i32(lk, nl, ok[o1]) : nl;
        int64_t *cnt = counts + c * 256;
        /* items per order in this chunk (about 4): where an order's run
         * probably starts, to prefetch it a few orders ahead */
        const int64_t j0 = j, per = o1 > o0 ? ((jend - j0) << 8) / (o1 - o0) : 0;
        int32_t sel[SUB];
        for (int64_t b = o0; b < o1; b += SUB) {
            const int64_t be = b + SUB < o1 ? b + SUB : o1;
            int ns = 0;
            for (int64_t o = b; o < be; o++) {
                sel[ns] = (int32_t)(o - b);
                ns += (uint32_t)(od[o] - lo_day) < width;
            }
            for (int x = 0; x < ns; x++) {
                if (x + AHEAD < ns) {
                    const int64_t est = j + (((b + sel[x + AHEAD]) - (b + sel[x])) * per >> 8);
                    if (est < jend) {
                        __builtin_prefetch(&lk[est]);
                        __builtin_prefetch(&cd[est]);
                        __builtin_prefetch(&rd[est]);
                    }
                }
                const int64_t o = b + sel[x];
                const int32_t k = ok[o];
                j = gallop_i32(lk, j, jend, k);
                int late = 0;
                for (; j < jend && lk[j] == k; j++)
                    if (cd[j] < rd[j]) { late = 1; break; }
                cnt[pr[o]] += late;
            }
        }
    }

    dkb_cand_res_col *c_prio = &res->cols[0], *c_count = &res->cols[1];
    c_prio->str_off[0] = 0;
    int64_t r = 0;
    for (int code = 0; code < oprio->dict->size; code++) {
        int64_t total = 0;
        for (int64_t c = 0; c < nchunks; c++) total += counts[c * 256 + code];
        if (!total) continue;
        const int64_t at = c_prio->str_off[r], len = (int64_t)oprio->dict->len[code];
        if (r >= res->cap || at + len > c_prio->bytes_cap) {
            free(counts);
            return DKB_CAND_ECAP;
        }
        memcpy(c_prio->str_bytes + at, oprio->dict->str[code], (size_t)len);
        c_prio->str_off[r + 1] = at + len;
        c_prio->is_null[r] = 0;
        c_count->i64[r] = total;
        c_count->is_null[r] = 0;
        r++;
    }
    free(counts);
    res->nrows = r;
    return 0;
}
