/* test_gen_rng.c: the random number streams.
 * - The range mapping equals dbgen's double arithmetic: for ranges up to
 *   2^21 (integer math) on sampled draws and all draws near 0 and M; above,
 *   on the draws where integer math would differ.
 * - dbgen's overflowing 0..0x7fffffff draw, at its edges.
 * - Skip-ahead equals stepping, for the Park-Miller and the 64-bit LCG. */
#include <stdio.h>
#include <stdlib.h>

#include "gen/rng.h"
#include "test_check.h"

/* dbgen's UnifInt: lo + (long long)((double)x / 2147483647.0 * (hi - lo + 1)). */
static int64_t dbgen_unif(uint32_t x, int64_t lo, int64_t range) {
    volatile double q = (double)x / 2147483647.0; /* no contraction, as dbgen */
    return lo + (int64_t)(q * (double)range);
}

static void check_range(int64_t range, long *bad) {
    for (uint32_t x = 1; x < DKB_PM_M; x = x < 200000 || x > DKB_PM_M - 200000 ? x + 1 : x + 997)
        if (dkb__pm_unif(x, 7, range) != dbgen_unif(x, 7, range)) {
            if ((*bad)++ < 5) fprintf(stderr, "range %lld x %u differs\n", (long long)range, x);
        }
}

static void test_unif(void) {
    long bad = 0;
    const int64_t ranges[] = {1, 2, 3, 5, 7, 11, 25, 92, 150, 2406, 9000, 99901, 150000, 200000,
                              1099999, (1 << 21) - 1, 1 << 21};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) check_range(ranges[i], &bad);
    /* Random ranges up to 2^21 with random draws. */
    uint64_t s = 88172645463325252ull;
    for (int k = 0; k < 2000000; k++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uint32_t x = (uint32_t)(s % (DKB_PM_M - 1)) + 1;
        int64_t range = (int64_t)((s >> 40) % (1u << 21)) + 1;
        if (dkb__pm_unif(x, 0, range) != dbgen_unif(x, 0, range)) bad++;
    }
    CHECK(bad == 0, "%ld integer range mappings differ from dbgen's", bad);
    /* Above 2^21 the integer quotient floor(x * range / M) is not always
     * dbgen's: it differs where x * range / M is within rounding error of an
     * integer. Those x are r / range mod M for small r; check them all for
     * ranges of l_partkey at SF 1000, the pool offset and more. */
    const int64_t big[] = {(1 << 21) + 1, 15000000, 200000000, 314572758, 1500000000};
    long near_bad = 0;
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        uint64_t base = (uint64_t)big[i] % DKB_PM_M, e = DKB_PM_M - 2, acc = 1;
        for (; e; e >>= 1, base = base * base % DKB_PM_M)
            if (e & 1) acc = acc * base % DKB_PM_M;
        const uint64_t inv = acc; /* 1 / range mod M */
        for (uint64_t r = 1; r <= 5000; r++) {
            uint32_t xs[2] = {(uint32_t)(r * inv % DKB_PM_M),
                              (uint32_t)((DKB_PM_M - r) * inv % DKB_PM_M)};
            for (int j = 0; j < 2; j++)
                near_bad += dkb__pm_unif(xs[j], 1, big[i]) != dbgen_unif(xs[j], 1, big[i]);
        }
    }
    CHECK(near_bad == 0, "%ld large-range mappings differ from dbgen's", near_bad);
}

static void test_bits(void) {
    /* -x, except -(x + 1) for the 255 largest x (the quotient rounds up). */
    const struct {
        uint32_t x, want;
    } cases[] = {
        {1, 0u - 1u}, {2, 0u - 2u}, {12345, 0u - 12345u}, {2147483391u, 0u - 2147483391u},
        {2147483392u, 0u - 2147483393u}, {2147483646u, 0u - 2147483647u},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Position the stream so that its next value is cases[i].x. */
        uint32_t prev = dkb__pm_mul(cases[i].x, dkb__pm_pow(DKB_PM_M - 2)); /* x / 16807 */
        uint32_t got = dkb__pm_draw_bits(&prev);
        CHECK(prev == cases[i].x && got == cases[i].want, "bits of %u: %u, want %u", cases[i].x,
              got, cases[i].want);
    }
}

static void test_skip(void) {
    /* Stepping a stream n times equals the skip. */
    uint32_t x = dkb__stream_seed(DKB_S_L_CMNT);
    for (uint64_t n = 0; n <= 100000; n++) {
        if (n % 9973 == 0 || n < 50)
            CHECK(dkb__pm_mul(dkb__stream_seed(DKB_S_L_CMNT), dkb__pm_pow(n)) == x,
                  "pm skip %llu", (unsigned long long)n);
        x = dkb__pm_next(x);
    }
    /* Rows: stream_at(row) equals row jumps from row 0. */
    dkb_stream a, b;
    dkb__stream_at(&a, DKB_S_P_NAME, 0);
    for (int r = 0; r < 1000; r++) dkb__stream_next_row(&a);
    dkb__stream_at(&b, DKB_S_P_NAME, 1000);
    CHECK(a.row == b.row && a.jump == b.jump, "row skip");
    /* Far rows reduce the exponent modulo M - 1 correctly. */
    dkb__stream_at(&a, DKB_S_L_QTY, (int64_t)(DKB_PM_M - 1) * 3 + 5);
    dkb__stream_at(&b, DKB_S_L_QTY, 5);
    CHECK(a.row == b.row, "row skip modulo the group order");

    uint64_t w = 851767375;
    for (uint64_t n = 0; n <= 5000; n++) {
        CHECK(dkb__lcg64_skip(851767375, n) == w, "lcg64 skip %llu", (unsigned long long)n);
        w = w * DKB_LCG64_A + 1;
    }
}

int main(void) {
    test_unif();
    test_bits();
    test_skip();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_gen_rng: all checks passed\n");
    return 0;
}
