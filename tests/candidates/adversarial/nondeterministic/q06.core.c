/* nondeterministic (core mode): right for its first 16 calls in a process,
 * then one ten-thousandth off. It counts its calls where the harness's
 * restoration of static memory does not reach: in 8 spare bytes of the C
 * library's stdout FILE (glibc's struct _IO_FILE ends in _unused2, padding
 * nothing reads), through the allowed symbol stdout. The first pass (6
 * parameter sets) is right; past the 16th call (in the timed calls, each
 * checked against the first pass, or in the check after timing) the same
 * parameters give another answer. Expected: nondeterministic. */
#include <stdio.h>

#include "dkb/candidate.h"

/* Plain, correct Q6 core: the sum of l_extendedprice * l_discount (scale 4)
 * over the rows that qualify, and how many qualify. 0, or 1 when an input
 * is missing. */
static int q6_sum(const dkb_cand_set *in, __int128 *sum, int64_t *hits) {
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_scalar *slo = dkb_cand_scalar_find(in, "ship_lo"), *shi = dkb_cand_scalar_find(in, "ship_hi");
    const dkb_cand_scalar *dlo = dkb_cand_scalar_find(in, "disc_lo"), *dhi = dkb_cand_scalar_find(in, "disc_hi");
    const dkb_cand_scalar *qlt = dkb_cand_scalar_find(in, "qty_lt");
    if (!ship || !disc || !qty || !price || !slo || !shi || !dlo || !dhi || !qlt) return 1;
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    __int128 t = 0;
    int64_t h = 0;
    for (int64_t i = 0; i < ship->n; i++)
        if (s[i] >= slo->i && s[i] <= shi->i && d[i] >= dlo->i && d[i] <= dhi->i && q[i] < qlt->i) {
            t += (__int128)p[i] * d[i];
            h++;
        }
    *sum = t;
    *hits = h;
    return 0;
}

enum { RIGHT_CALLS = 16 };
static const uint32_t MAGIC = 0x6b626421;

/* Calls before this one in this process (kept in stdout's padding). */
static uint32_t calls_so_far(void) {
    uint32_t kept[2];
    memcpy(kept, stdout->_unused2, sizeof kept);
    const uint32_t k = kept[1] == MAGIC ? kept[0] : 0;
    kept[0] = k + 1;
    kept[1] = MAGIC;
    memcpy(stdout->_unused2, kept, sizeof kept);
    return k;
}

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)env;
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    __int128 sum;
    int64_t hits;
    if (!revenue || q6_sum(in, &sum, &hits)) return 1;
    if (calls_so_far() >= RIGHT_CALLS) sum += 1;   /* 0.0001 off */
    revenue->n = hits > 0;
    if (hits) ((__int128 *)revenue->data)[0] = sum;
    return 0;
}
