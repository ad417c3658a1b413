/* rng.h: dbgen's random number streams.
 *
 * dbgen draws every column from its own stream of the Park-Miller "minimum
 * standard" generator, x' = 16807 * x mod (2^31 - 1), and maps a draw onto
 * [lo, hi] with double arithmetic. Each table row advances each of its
 * streams by a fixed number of draws (the stream's boundary), so the state
 * of a stream at row n is seed * 16807^(n * boundary): any row can be reached
 * in O(log n). At scale factors of 30000 and above dbgen draws two columns
 * from a 64-bit LCG instead (see dkb__lcg64_*). */
#ifndef DKB_GEN_RNG_H
#define DKB_GEN_RNG_H

#include <stdint.h>

#define DKB_PM_M 2147483647u /* 2^31 - 1 */
#define DKB_PM_A 16807u

/* The streams, numbered as in dbgen (the number picks the initial seed). */
enum {
    DKB_S_P_MFG = 0, DKB_S_P_BRND = 1, DKB_S_P_TYPE = 2, DKB_S_P_SIZE = 3, DKB_S_P_CNTR = 4,
    DKB_S_TEXT = 5, DKB_S_P_CMNT = 6, DKB_S_PS_QTY = 7, DKB_S_PS_SCST = 8, DKB_S_PS_CMNT = 9,
    DKB_S_O_CLRK = 11, DKB_S_O_CMNT = 12, DKB_S_O_ODATE = 13,
    DKB_S_L_QTY = 14, DKB_S_L_DCNT = 15, DKB_S_L_TAX = 16, DKB_S_L_SHIP = 17, DKB_S_L_SMODE = 18,
    DKB_S_L_PKEY = 19, DKB_S_L_SKEY = 20, DKB_S_L_SDTE = 21, DKB_S_L_CDTE = 22, DKB_S_L_RDTE = 23,
    DKB_S_L_RFLG = 24, DKB_S_L_CMNT = 25,
    DKB_S_C_ADDR = 26, DKB_S_C_NTRG = 27, DKB_S_C_PHNE = 28, DKB_S_C_ABAL = 29, DKB_S_C_MSEG = 30,
    DKB_S_C_CMNT = 31,
    DKB_S_S_ADDR = 32, DKB_S_S_NTRG = 33, DKB_S_S_PHNE = 34, DKB_S_S_ABAL = 35, DKB_S_S_CMNT = 36,
    DKB_S_P_NAME = 37, DKB_S_O_PRIO = 38, DKB_S_O_CKEY = 40, DKB_S_N_CMNT = 41, DKB_S_R_CMNT = 42,
    DKB_S_O_LCNT = 43, DKB_S_BBB_JNK = 44, DKB_S_BBB_TYPE = 45, DKB_S_BBB_CMNT = 46,
    DKB_S_BBB_OFFSET = 47,
    DKB_S_COUNT = 48
};

/* Initial seed and per-row draw count of stream s. */
uint32_t dkb__stream_seed(int s);
uint32_t dkb__stream_boundary(int s);

/* a * b mod M, for a, b < 2^31. */
static inline uint32_t dkb__pm_mul(uint32_t a, uint32_t b) {
    uint64_t p = (uint64_t)a * b;                       /* < 2^62 */
    uint64_t r = (p & DKB_PM_M) + (p >> 31);            /* < 2^32 */
    r = (r & DKB_PM_M) + (r >> 31);                     /* <= M + 1 */
    return (uint32_t)(r >= DKB_PM_M ? r - DKB_PM_M : r);
}

/* The next value of a stream. */
static inline uint32_t dkb__pm_next(uint32_t x) {
    uint64_t p = (uint64_t)x * DKB_PM_A;                /* < 2^46 */
    uint32_t r = (uint32_t)(p & DKB_PM_M) + (uint32_t)(p >> 31);
    return r >= DKB_PM_M ? r - DKB_PM_M : r;
}

/* 16807^n mod M. */
uint32_t dkb__pm_pow(uint64_t n);

/* Map draw x (1 <= x < M) onto [lo, lo + range) exactly as dbgen's UnifInt
 * does: lo + (int64)((double)x / M * range). For range <= 2^21 the integer
 * quotient floor(x * range / M) is provably the same (the double error stays
 * below the 1/M distance of x * range / M to the nearest integer). */
static inline int64_t dkb__pm_unif(uint32_t x, int64_t lo, int64_t range) {
    if (range > 0 && range <= (int64_t)1 << 21)
        return lo + (int64_t)(((uint64_t)x * (uint64_t)range) / DKB_PM_M);
    return lo + (int64_t)((double)x / 2147483647.0 * (double)range);
}

/* Advance *x and map the draw onto [lo, hi]. */
static inline int64_t dkb__pm_draw(uint32_t *x, int64_t lo, int64_t hi) {
    *x = dkb__pm_next(*x);
    return dkb__pm_unif(*x, lo, hi - lo + 1);
}

/* dbgen's RANDOM(v, 0, 0x7fffffff): its range computation overflows int32,
 * giving range -2^31, so the result is negative: -x, except -(x + 1) for the
 * 255 largest x, where the double quotient rounds up. Computed here the way
 * dbgen does. The low 30 bits then feed five 6-bit characters. */
static inline uint32_t dkb__pm_draw_bits(uint32_t *x) {
    *x = dkb__pm_next(*x);
    return (uint32_t)(int64_t)((double)*x / 2147483647.0 * -2147483648.0);
}

/* A stream positioned at the start of a row: `row` is its value before the
 * row's first draw, `jump` = 16807^boundary moves it to the next row. */
typedef struct dkb_stream {
    uint32_t row;
    uint32_t jump;
} dkb_stream;

/* Position stream s at the start of row `row` (0-based). */
void dkb__stream_at(dkb_stream *st, int s, int64_t row);
static inline void dkb__stream_next_row(dkb_stream *st) {
    st->row = dkb__pm_mul(st->row, st->jump);
}

/* ---- the 64-bit generator, x' = a * x + 1 mod 2^64 ---- */
#define DKB_LCG64_A 6364136223846793005ull

/* x advanced n steps. */
uint64_t dkb__lcg64_skip(uint64_t x, uint64_t n);

/* Advance *x and map onto [lo, hi] as dbgen's dss_random64 does. */
static inline int64_t dkb__lcg64_draw(uint64_t *x, int64_t lo, int64_t hi) {
    *x = *x * DKB_LCG64_A + 1u;
    uint64_t t = *x;
    if ((int64_t)t < 0) t = 0u - t;
    return lo + (int64_t)t % (hi - lo + 1);
}

#endif
