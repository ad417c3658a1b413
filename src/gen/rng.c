/* rng.c: dbgen's stream table (initial seeds and per-row draw counts) and
 * skip-ahead for the Park-Miller and 64-bit generators. */
#include "gen/rng.h"

/* dbgen 2.14's seed table, indexed by stream number. */
static const struct {
    uint32_t seed, boundary;
} streams[DKB_S_COUNT] = {
    {1, 1},            {46831694, 1},   {1841581359, 1}, {1193163244, 1}, /* part 0..3 */
    {727633698, 1},    {933588178, 1},  {804159733, 2},                   /* 4, text, 6 */
    {1671059989, 4},   {1051288424, 4}, {1961692154, 8},                  /* partsupp */
    {1227283347, 1},   {1171034773, 1}, {276090261, 2},  {1066728069, 1}, /* orders */
    {209208115, 7},    {554590007, 7},  {721958466, 7},  {1371272478, 7}, /* lineitem */
    {675466456, 7},    {1808217256, 7}, {2095021727, 7}, {1769349045, 7},
    {904914315, 7},    {373135028, 7},  {717419739, 7},  {1095462486, 14},
    {881155353, 9},    {1489529863, 1}, {1521138112, 3}, {298370230, 1},  /* customer */
    {1140279430, 1},   {1335826707, 2},
    {706178559, 9},    {110356601, 1},  {884434366, 3},  {962338209, 1},  /* supplier */
    {1341315363, 2},
    {709314158, 92},   {591449447, 1},  {431918286, 1},  {851767375, 1},  /* 37..40 */
    {606179079, 2},    {1500869201, 2}, {1434868289, 1},                  /* 41..43 */
    {263032577, 1},    {753643799, 1},  {202794285, 1},  {715851524, 1},  /* supplier BBB */
};

uint32_t dkb__stream_seed(int s) { return streams[s].seed; }
uint32_t dkb__stream_boundary(int s) { return streams[s].boundary; }

uint32_t dkb__pm_pow(uint64_t n) {
    /* 16807 generates the multiplicative group mod the prime M: reduce n
     * modulo its order M - 1 first. */
    n %= DKB_PM_M - 1u;
    uint32_t result = 1, base = DKB_PM_A;
    while (n) {
        if (n & 1u) result = dkb__pm_mul(result, base);
        base = dkb__pm_mul(base, base);
        n >>= 1;
    }
    return result;
}

void dkb__stream_at(dkb_stream *st, int s, int64_t row) {
    uint64_t b = streams[s].boundary;
    st->jump = dkb__pm_pow(b);
    /* row * b can exceed 2^64 only far beyond any supported scale factor;
     * reduce each factor modulo the group order first anyway. */
    uint64_t n = ((uint64_t)row % (DKB_PM_M - 1u)) * b % (DKB_PM_M - 1u);
    st->row = dkb__pm_mul(streams[s].seed, dkb__pm_pow(n));
}

uint64_t dkb__lcg64_skip(uint64_t x, uint64_t n) {
    /* x_n = a^n x + (a^(n-1) + ... + 1) c, by squaring (c = 1). */
    uint64_t mul = 1, add = 0;      /* accumulated map x -> mul * x + add */
    uint64_t a = DKB_LCG64_A, c = 1; /* map for 2^k steps */
    while (n) {
        if (n & 1u) {
            mul *= a;
            add = add * a + c;
        }
        c = c * (a + 1);
        a *= a;
        n >>= 1;
    }
    return mul * x + add;
}
