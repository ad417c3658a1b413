/* reads_tsc_gadget (full mode): an honest Q6 that also reads the
 * processor's time-stamp counter with no rdtsc instruction in its machine
 * code: a function returning the constant 0xc3310f compiles to
 * `mov $0xc3310f, %eax` (b8 0f 31 c3 00), and a call one byte into it runs
 * the immediate's bytes 0f 31 (rdtsc) and c3 (ret), leaving the counter's
 * low half in eax. A disassembly check cannot see it (it reads whole
 * instructions from their starts). Expected: crash, because the worker
 * turns the counter off for itself and its threads (prctl PR_SET_TSC,
 * PR_TSC_SIGSEGV) before any candidate code runs, so any rdtsc, from any
 * byte, faults (docs/harness.md, "Known limits"). In a sanitizer build,
 * whose runtime reads the clock itself, the counter stays on and the case
 * is ok (EXPECTED_SANITIZED), as the system-call filter is off there. */
#include "dkb/candidate.h"

/* b8 0f 31 c3 00 (c3): at +1, rdtsc; ret */
__attribute__((noinline, used)) unsigned gadget_host(void) { return 0xc3310fu; }
static volatile unsigned g_low_tsc; /* what a cheat would act on */

enum { BLOCK = 1 << 14 };  /* rows summed in int64 before going to __int128 */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's
 * algorithms). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
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

/* date + interval '1' year, as SQL: Feb 29 becomes Feb 28 in a common year. */
static int64_t plus_one_year(int64_t days) {
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    y += 1;
    const int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (m == 2 && d == 29 && !leap) d = 28;
    return days_from_civil(y, m, d);
}

/* v (at scale `from`) at scale `to`, exactly; 0 when it cannot be (digits
 * would be lost or it would overflow). */
static int rescale(int64_t v, int from, int to, int64_t *out) {
    for (; from < to; from++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10) return 0;
        v *= 10;
    }
    for (; from > to; from--) {
        if (v % 10) return 0;
        v /= 10;
    }
    *out = v;
    return 1;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const unsigned char *code = (const unsigned char *)(void *)gadget_host;
    if (code[0] == 0xb8 && code[1] == 0x0f && code[2] == 0x31 && code[3] == 0xc3) {
        unsigned (*read_counter)(void) = (unsigned (*)(void))(void *)(code + 1);
        g_low_tsc = read_counter();
    }
    const dkb_cand_vec *ship = dkb_cand_column(db, "lineitem", "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_column(db, "lineitem", "l_discount");
    const dkb_cand_vec *qty = dkb_cand_column(db, "lineitem", "l_quantity");
    const dkb_cand_vec *price = dkb_cand_column(db, "lineitem", "l_extendedprice");
    const dkb_cand_param *date = dkb_cand_param_find(params, "date");
    const dkb_cand_param *discount = dkb_cand_param_find(params, "discount");
    const dkb_cand_param *quantity = dkb_cand_param_find(params, "quantity");
    if (!ship || !disc || !qty || !price || !date || !discount || !quantity) return 1;
    if (ship->type != DKB_CAND_I32 || disc->type != DKB_CAND_I64 || qty->type != DKB_CAND_I64 ||
        price->type != DKB_CAND_I64 || res->ncols != 1 || res->cols[0].type != DKB_CAND_RES_DECIMAL ||
        res->cap < 1)
        return 2;
    dkb_cand_res_col *revenue = &res->cols[0];

    /* the parameters in the columns' units: days, and hundredths for l_discount
     * and l_quantity (an integer quantity q is q * 100) */
    const int64_t slo = date->i, shi = plus_one_year(date->i) - 1;   /* inclusive */
    int64_t centre, one_cent, qlt;
    if (!rescale(discount->i, discount->scale, disc->scale, &centre) ||
        !rescale(1, 2, disc->scale, &one_cent) || !rescale(quantity->i, 0, qty->scale, &qlt))
        return 3;
    const int64_t dlo = centre - one_cent, dhi = centre + one_cent;
    const int out_scale = price->scale + disc->scale;
    if (revenue->scale < out_scale) return 4;  /* would lose digits */

    /* lo <= x <= hi as one unsigned compare: x - lo <= hi - lo */
    const uint64_t sw = (uint64_t)shi - (uint64_t)slo, dw = (uint64_t)dhi - (uint64_t)dlo;
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    const int64_t n = ship->n, nblocks = (n + BLOCK - 1) / BLOCK;

    __int128 total = 0;
    int64_t hits = 0;
#pragma omp parallel num_threads(env->threads > 0 ? env->threads : 1)
    {
        __int128 my_total = 0;
        int64_t my_hits = 0;
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nblocks; b++) {
            const int64_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
            int64_t sum = 0, cnt = 0;
            for (int64_t i = lo; i < hi; i++) {
                const int64_t keep = ((uint64_t)s[i] - (uint64_t)slo <= sw) &
                                     ((uint64_t)d[i] - (uint64_t)dlo <= dw) & (q[i] < qlt);
                sum += -keep & (p[i] * d[i]);
                cnt += keep;
            }
            my_total += sum;
            my_hits += cnt;
        }
#pragma omp critical
        {
            total += my_total;
            hits += my_hits;
        }
    }

    /* every cell reported must be written: the buffers hold garbage on entry */
    for (int sc = out_scale; sc < revenue->scale; sc++) total *= 10;
    res->nrows = 1;
    revenue->dec[0] = hits > 0 ? total : 0;
    revenue->is_null[0] = hits == 0;   /* sum over no rows: NULL */
    return 0;
}
