/* test_cand_util.c: the optional candidate toolkit (include/dkb/cand_util.h)
 * against plain references: every day from 1899-12-01 to 2101-01-31
 * converted both ways and checked against a day-by-day calendar walk; month
 * and year arithmetic (the day clamped to the month's end, leap years,
 * negative intervals) against a reference built from the same walk; exact
 * rescaling at its edges; lower bounds over arrays of awkward lengths with
 * duplicates; the result writers' caps; the bindings by spec string; the
 * stream walk (dkb/cand_stream.h) over a fake loader. */
#include <stdlib.h>

#include "dkb/cand_stream.h"
#include "dkb/cand_util.h"
#include "test_check.h"

static int month_len(int64_t y, int m) {
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return len[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

/* A calendar walked day by day from 1899-12-01 (day -25598). */
typedef struct {
    int64_t y;
    int m, d;
} ymd;

static void test_dates(void) {
    ymd c = {1899, 12, 1};
    int64_t day = -25598;
    CHECK(dkb_days_from_civil(1970, 1, 1) == 0, "1970-01-01 is day 0");
    CHECK(dkb_days_from_civil(1899, 12, 1) == day, "1899-12-01 is day %lld", (long long)day);
    int bad = 0;
    while (c.y < 2101 || (c.y == 2101 && c.m == 1)) {
        int64_t y;
        int m, d;
        dkb_civil_from_days(day, &y, &m, &d);
        if (dkb_days_from_civil(c.y, c.m, c.d) != day || y != c.y || m != c.m || d != c.d || dkb_year_of(day) != c.y)
            bad++;
        /* + k months: the reference clamps the day to the new month's end */
        for (int k = -14; k <= 14 && bad < 10; k += 7) {
            int64_t months = c.y * 12 + (c.m - 1) + k, ry = months / 12 - (months % 12 < 0);
            int rm = (int)(months - ry * 12 + 1), last = month_len(ry, rm);
            int64_t want = dkb_days_from_civil(ry, rm, c.d < last ? c.d : last);
            if (dkb_add_months(day, k) != want) {
                CHECK(0, "%lld-%02d-%02d + %d months: got day %lld, want %lld", (long long)c.y, c.m, c.d, k,
                      (long long)dkb_add_months(day, k), (long long)want);
                bad++;
            }
        }
        if (++c.d > month_len(c.y, c.m)) c.d = 1, c.m++;
        if (c.m > 12) c.m = 1, c.y++;
        day++;
    }
    CHECK(bad == 0, "%d days wrong", bad);
    /* the cases SQL users meet */
    CHECK(dkb_add_months(dkb_days_from_civil(1996, 1, 31), 1) == dkb_days_from_civil(1996, 2, 29), "Jan 31 + 1 month, leap");
    CHECK(dkb_add_months(dkb_days_from_civil(1995, 1, 31), 1) == dkb_days_from_civil(1995, 2, 28), "Jan 31 + 1 month");
    CHECK(dkb_add_years(dkb_days_from_civil(1996, 2, 29), 1) == dkb_days_from_civil(1997, 2, 28), "Feb 29 + 1 year");
    CHECK(dkb_add_years(dkb_days_from_civil(1994, 1, 1), 1) == dkb_days_from_civil(1995, 1, 1), "Q6's window");
    CHECK(dkb_add_months(dkb_days_from_civil(1993, 10, 1), 3) == dkb_days_from_civil(1994, 1, 1), "Q10's quarter");
    CHECK(dkb_add_months(dkb_days_from_civil(2000, 3, 31), -1) == dkb_days_from_civil(2000, 2, 29), "a month back");
}

static void test_decimals(void) {
    int64_t v = 0;
    CHECK(dkb_pow10(0) == 1 && dkb_pow10(18) == 1000000000000000000LL && dkb_pow10(19) == 0 && dkb_pow10(-1) == 0,
          "pow10");
    CHECK(dkb_rescale(6, 2, 4, &v) && v == 600, "0.06 at scale 4");
    CHECK(dkb_rescale(-600, 4, 2, &v) && v == -6, "down, exact");
    CHECK(!dkb_rescale(605, 4, 2, &v), "down, digits lost");
    CHECK(dkb_rescale(7, 3, 3, &v) && v == 7, "same scale");
    CHECK(!dkb_rescale(INT64_MAX / 10 + 1, 0, 1, &v), "overflow");
    CHECK(!dkb_rescale(INT64_MIN / 10 - 1, 0, 1, &v), "negative overflow");
}

static void test_lower_bound(void) {
    static const int lens[] = {0, 1, 2, 7, 32, 65, 128};
    for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        int n = lens[t];
        int32_t a32[128];
        int64_t a64[128];
        for (int i = 0; i < n; i++) a32[i] = (int32_t)(i / 3 * 2), a64[i] = a32[i];
        for (int64_t key = -2; key <= (n ? a32[n - 1] : 0) + 2; key++) {
            int64_t want = 0;
            while (want < n && a32[want] < key) want++;
            CHECK(dkb_lower_bound_i32(a32, n, key) == want && dkb_lower_bound_i64(a64, n, key) == want,
                  "n %d key %lld: got %lld / %lld, want %lld", n, (long long)key,
                  (long long)dkb_lower_bound_i32(a32, n, key), (long long)dkb_lower_bound_i64(a64, n, key),
                  (long long)want);
        }
    }
}

static void test_results(void) {
    int64_t off[4];
    char bytes[8];
    uint8_t nulls[3] = {1, 1, 1};
    dkb_cand_res_col cols[2];
    memset(cols, 0, sizeof cols);
    cols[0].name = "s_name", cols[0].type = DKB_CAND_RES_STRING, cols[0].str_off = off, cols[0].str_bytes = bytes;
    cols[0].bytes_cap = sizeof bytes, cols[0].is_null = nulls;
    cols[1].name = "revenue", cols[1].type = DKB_CAND_RES_DECIMAL;
    dkb_cand_result res = {2, cols, 3, -1};
    CHECK(dkb_res_col(&res, "s_name", DKB_CAND_RES_STRING) == &cols[0], "by name and type");
    CHECK(dkb_res_col(&res, "s_name", DKB_CAND_RES_INT) == NULL, "wrong type");
    CHECK(dkb_res_col(&res, "nope", DKB_CAND_RES_STRING) == NULL, "no such column");
    CHECK(dkb_put_str(&cols[0], 0, "abc", 3) == DKB_CAND_OK && off[0] == 0 && off[1] == 3 && nulls[0] == 0, "row 0");
    const char *d[2] = {"x", "yyyy"};
    const size_t dl[2] = {1, 4};
    dkb_cand_dict dict = {2, d, dl};
    CHECK(dkb_put_dict(&cols[0], 1, &dict, 1) == DKB_CAND_OK && off[2] == 7 && !memcmp(bytes, "abcyyyy", 7), "row 1");
    CHECK(dkb_put_dict(&cols[0], 2, &dict, 2) == DKB_CAND_EINVAL, "no such code");
    CHECK(dkb_put_str(&cols[0], 2, "zz", 2) == DKB_CAND_ECAP, "over bytes_cap");
    int64_t toff[3] = {0, 1, 1};
    dkb_cand_vec text = {"c_name", DKB_CAND_STR, 0, 2, toff, (char *)"q", 1, NULL, 0, 0};
    CHECK(dkb_put_text(&cols[0], 2, &text, 0) == DKB_CAND_OK && off[3] == 8 && bytes[7] == 'q', "free text");
    CHECK(dkb_res_rows(&res, 3) == DKB_CAND_OK && res.nrows == 3, "rows");
    CHECK(dkb_res_rows(&res, 4) == DKB_CAND_ECAP && res.nrows == 3, "over the cap");
}

/* dkb_gallop_i32 from every start against a linear scan; dkb_max_i32;
 * dkb_chunk_runs over parents with 0..3 children each, every chunk count
 * from 1 to parents + 2 (empty chunks). */
static void test_search_more(void) {
    static const int lens[] = {0, 1, 2, 7, 32, 65, 128};
    for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        int n = lens[t];
        int32_t a[128];
        for (int i = 0; i < n; i++) a[i] = (int32_t)(i / 3 * 2);
        for (int lo = 0; lo <= n; lo++)
            for (int64_t key = -1; key <= (n ? a[n - 1] : 0) + 1; key++) {
                int64_t want = lo;
                while (want < n && a[want] < key) want++;
                if (dkb_gallop_i32(a, lo, n, key) != want) {
                    CHECK(0, "gallop n %d lo %d key %lld: got %lld, want %lld", n, lo, (long long)key,
                          (long long)dkb_gallop_i32(a, lo, n, key), (long long)want);
                    return;
                }
            }
        CHECK(dkb_max_i32(a, n) == (n ? a[n - 1] : 0), "max of %d", n);
    }
    const int32_t neg[3] = {-5, -1, -7};
    CHECK(dkb_max_i32(neg, 3) == 0, "max of negatives is 0");
    int32_t pk[40], ck[160];
    int64_t nc = 0;
    for (int i = 0; i < 40; i++) {
        pk[i] = 3 * i + 1; /* keys with gaps */
        for (int k = 0; k < i % 4; k++) ck[nc++] = pk[i];
    }
    for (int np = 0; np <= 40; np += 13)
        for (int64_t nch = 1; nch <= np + 2; nch++) {
            int64_t covered = 0, items = 0, bad = 0;
            const int64_t nci = np < 40 ? dkb_lower_bound_i32(ck, nc, pk[np]) : nc; /* children of [0, np) */
            for (int64_t c = 0; c < nch; c++) {
                int64_t p0 = -1, p1 = -1, c0 = -1, c1 = -1;
                if (!dkb_chunk_runs(pk, np, ck, nci, c, nch, &p0, &p1, &c0, &c1)) {
                    bad += p0 != p1 || p0 != c * np / nch;
                    continue;
                }
                bad += p0 != covered || c0 != items || c1 < c0;
                for (int64_t j = c0; j < c1; j++) bad += ck[j] < pk[p0] || (p1 < np && ck[j] >= pk[p1]);
                covered = p1, items = c1;
            }
            CHECK(!bad && covered == np && items == nci, "chunk_runs np %d chunks %lld: %lld wrong", np,
                  (long long)nch, (long long)bad);
        }
}

/* dkb_like and dkb_find: TPC-H's patterns, empty strings, '_', and matches
 * at every offset of a text longer than the 32-byte SIMD step. */
static void test_strings(void) {
    CHECK(dkb_like("forest green", 12, "forest%"), "prefix");
    CHECK(dkb_like("PROMO BRUSHED TIN", 17, "%BRUSHED%") && !dkb_like("PROMO TIN", 9, "%BRUSHED%"), "infix");
    CHECK(dkb_like("", 0, "%") && dkb_like("", 0, "") && !dkb_like("a", 1, ""), "empty");
    CHECK(dkb_like("abc", 3, "a_c") && !dkb_like("ac", 2, "a_c") && dkb_like("abc", 3, "%%c"), "_ and %%%%");
    CHECK(!dkb_like("abcd", 4, "%c") && dkb_like("abcbc", 5, "%bc"), "suffix, retried");
    char text[100];
    for (int i = 0; i < 100; i++) text[i] = (char)('a' + i % 7);
    CHECK(dkb_find(text, text + 100, "zz", 0) == text, "empty word");
    CHECK(dkb_find(text, text + 1, "ab", 2) == NULL, "longer than the text");
    for (int at = 0; at + 3 <= 100; at++) {
        char t[100];
        memcpy(t, text, sizeof t);
        memcpy(t + at, "XYZ", 3);
        if (dkb_find(t, t + 100, "XYZ", 3) != t + at || dkb_find(t, t + 100, "X", 1) != t + at ||
            dkb_find(t, t + at + 2, "XYZ", 3) != NULL) {
            CHECK(0, "find at %d", at);
            break;
        }
    }
    CHECK(dkb_find(text, text + 100, "aca", 3) == NULL, "absent");
}

/* dkb_put_strcol from free text and from dictionary codes; dkb_put_dec. */
static void test_results_more(void) {
    int64_t off[4];
    char bytes[16];
    uint8_t nulls[3] = {1, 1, 1};
    dkb_cand_res_col col;
    memset(&col, 0, sizeof col);
    col.name = "s_name", col.type = DKB_CAND_RES_STRING, col.str_off = off, col.str_bytes = bytes;
    col.bytes_cap = sizeof bytes, col.is_null = nulls;
    int64_t toff[3] = {0, 2, 5};
    dkb_cand_vec text = {"t", DKB_CAND_STR, 0, 2, toff, (char *)"abcde", 5, NULL, 0, 0};
    const char *d[2] = {"x", "yy"};
    const size_t dl[2] = {1, 2};
    dkb_cand_dict dict = {2, d, dl};
    uint8_t codes[2] = {1, 7};
    dkb_cand_vec coded = {"c", DKB_CAND_U8, 0, 2, codes, NULL, 0, &dict, 0, 0};
    int32_t ints[1] = {1};
    dkb_cand_vec other = {"i", DKB_CAND_I32, 0, 1, ints, NULL, 0, NULL, 0, 0};
    CHECK(dkb_put_strcol(&col, 0, &text, 1) == DKB_CAND_OK && off[1] == 3 && !memcmp(bytes, "cde", 3), "text");
    CHECK(dkb_put_strcol(&col, 1, &coded, 0) == DKB_CAND_OK && off[2] == 5 && !memcmp(bytes + 3, "yy", 2) &&
              nulls[0] == 0 && nulls[1] == 0,
          "dictionary");
    CHECK(dkb_put_strcol(&col, 2, &coded, 1) == DKB_CAND_EINVAL, "code outside the dictionary");
    CHECK(dkb_put_strcol(&col, 2, &other, 0) == DKB_CAND_EINVAL, "not a string column");
    __int128 dec[2] = {0, 0};
    uint8_t dnull[2] = {1, 1};
    dkb_cand_res_col dc;
    memset(&dc, 0, sizeof dc);
    dc.name = "revenue", dc.type = DKB_CAND_RES_DECIMAL, dc.scale = 4, dc.dec = dec, dc.is_null = dnull;
    CHECK(dkb_put_dec(&dc, 0, -123, 2) == DKB_CAND_OK && dec[0] == -12300 && dnull[0] == 0, "scale 2 to 4");
    CHECK(dkb_put_dec(&dc, 1, 5, 4) == DKB_CAND_OK && dec[1] == 5, "same scale");
    dnull[1] = 1;
    CHECK(dkb_put_dec(&dc, 1, 5, 6) == DKB_CAND_EINVAL && dec[1] == 5 && dnull[1] == 1, "down: refused, untouched");
}

/* The first row in [row, end) whose text holds w, by a plain search of
 * each row; *at := the occurrence's offset. */
static int64_t find_row_ref(const int64_t *off, const char *bytes, int64_t row, int64_t end, const char *w,
                            size_t L, int64_t *at) {
    for (; row < end; row++)
        for (int64_t i = off[row]; i + (int64_t)L <= off[row + 1]; i++)
            if (memcmp(bytes + i, w, L) == 0) {
                *at = i;
                return row;
            }
    return end;
}

/* dkb_find_row against the reference: rows of lengths 0..40 (so rows
 * shorter and longer than the 32-byte SIMD step, and empty ones), the
 * word placed in some rows at every offset, and across row boundaries
 * (never a hit); every start row and every end row. */
static void test_find_row(void) {
    enum { NR = 40 };
    int64_t off[NR + 1];
    char bytes[NR * 40 + 8];
    off[0] = 0;
    for (int r = 0; r < NR; r++) {
        const int len = (r * 7) % 41;
        for (int i = 0; i < len; i++) bytes[off[r] + i] = (char)('a' + (r + i) % 5);
        off[r + 1] = off[r] + len;
    }
    /* "xyz" inside rows 3, 11 and 30 at different offsets; "xy" ending row 5
     * and "z" starting row 6 (spans the boundary) */
    const int in_row[3] = {3, 11, 30};
    for (int k = 0; k < 3; k++) {
        const int64_t r = in_row[k], len = off[r + 1] - off[r];
        memcpy(bytes + off[r] + (k * 13) % (len - 2), "xyz", 3);
    }
    memcpy(bytes + off[6] - 2, "xy", 2);
    bytes[off[6]] = 'z';
    dkb_cand_vec text = {"t", DKB_CAND_STR, 0, NR, off, bytes, off[NR], NULL, 0, 0};
    const char *words[] = {"xyz", "z", "ab", "abcd", "q", ""};
    int bad = 0;
    for (int w = 0; w < DKB_COUNT(words); w++)
        for (int64_t row = 0; row <= NR; row++)
            for (int64_t end = row; end <= NR; end++) {
                const size_t L = strlen(words[w]);
                int64_t at = -1, want_at = -1;
                const int64_t got = dkb_find_row(&text, row, end, words[w], L, &at);
                const int64_t want = find_row_ref(off, bytes, row, end, words[w], L, &want_at);
                if (got != want || (want < end && at != want_at)) {
                    if (bad++ < 5)
                        CHECK(0, "find_row('%s', %lld, %lld): row %lld at %lld, want row %lld at %lld", words[w],
                              (long long)row, (long long)end, (long long)got, (long long)at, (long long)want,
                              (long long)want_at);
                }
            }
    CHECK(bad == 0, "%d find_row cases wrong", bad);
    int64_t at = -1;
    CHECK(dkb_find_row(&text, 4, 9, "xyz", 3, &at) == 9 && at == -1, "the boundary-spanning word is no hit");
    CHECK(dkb_find_row(&text, 0, NR, "xyz", 3, NULL) == 3, "at may be NULL");
}

/* dkb_select_bits against a plain loop: key counts 0, 1, 15, 16, 17, 33,
 * 100 and 1000 (around the 16-key vector step), keys below 0, inside and
 * past the bitmap, bitmaps of 1, 64, 65 and 1000 bits, dense and sparse;
 * the selection must be the hits in ascending order. (With -march=native on
 * an AVX-512 machine this checks the vector path; otherwise the scalar one.) */
static void test_select_bits(void) {
    static int32_t key[1000], sel[1000 + 16];
    static uint64_t bits[1000 / 64 + 2];
    const int counts[] = {0, 1, 15, 16, 17, 33, 100, 1000};
    const int64_t nbits_list[] = {1, 64, 65, 1000};
    uint32_t x = 12345;
    int bad = 0;
    for (int b = 0; b < DKB_COUNT(nbits_list); b++)
        for (int dense = 0; dense < 2; dense++) {
            const int64_t nbits = nbits_list[b];
            memset(bits, 0, sizeof bits);
            for (int64_t k = 0; k < nbits; k++) {
                x = x * 1103515245u + 12345u;
                if ((x >> 16) % (dense ? 2 : 9) == 0) bits[k >> 6] |= 1ull << (k & 63);
            }
            bits[nbits >> 6] |= ~0ull << (nbits & 63); /* bits past nbits set: must not count */
            for (int c = 0; c < DKB_COUNT(counts); c++) {
                const int n = counts[c];
                for (int i = 0; i < n; i++) {
                    x = x * 1103515245u + 12345u;
                    key[i] = (int32_t)((x >> 8) % (uint32_t)(nbits + 10)) - 5; /* -5 .. nbits + 4 */
                }
                const int m = dkb_select_bits(key, n, bits, nbits, sel);
                int want = 0, ok = 1;
                for (int i = 0; i < n; i++)
                    if (key[i] >= 0 && key[i] < nbits && ((bits[key[i] >> 6] >> (key[i] & 63)) & 1))
                        ok &= want < m && sel[want++] == i;
                if (!ok || m != want) {
                    if (bad++ < 5)
                        CHECK(0, "select_bits n %d, nbits %lld: %d selected, want %d", n, (long long)nbits, m, want);
                }
            }
        }
    CHECK(bad == 0, "%d select_bits cases wrong", bad);
}

/* dkb_select_range_i32 against a plain loop: lengths around its 256-row
 * step and the 8-byte mask words, values at the ends of int32, ranges
 * empty, one wide, the whole of int32 and past it. */
static void test_select_range(void) {
    static int32_t v[600], sel[600 + 16];
    const int counts[] = {0, 1, 7, 8, 9, 255, 256, 257, 600};
    const int64_t lo_hi[][2] = {{10, 10}, {10, 9}, {10, 11}, {-3, 40}, {INT32_MIN, INT32_MIN + 2},
                                {INT32_MAX - 1, (int64_t)INT32_MAX + 1}, {INT64_MIN / 2, INT64_MAX / 2},
                                {(int64_t)INT32_MIN, (int64_t)INT32_MAX + 1}};
    uint32_t x = 777;
    int bad = 0;
    for (int c = 0; c < DKB_COUNT(counts); c++)
        for (int r = 0; r < DKB_COUNT(lo_hi); r++) {
            const int n = counts[c];
            for (int i = 0; i < n; i++) {
                x = x * 1103515245u + 12345u;
                const int pick = (int)((x >> 16) % 4);
                v[i] = pick == 0 ? (int32_t)((x >> 8) % 50) - 5 : pick == 1 ? INT32_MIN + (int32_t)(x % 3)
                     : pick == 2 ? INT32_MAX - (int32_t)(x % 3) : (int32_t)x;
            }
            const int m = dkb_select_range_i32(v, n, lo_hi[r][0], lo_hi[r][1], sel);
            int want = 0, ok = 1;
            for (int i = 0; i < n; i++)
                if (v[i] >= lo_hi[r][0] && v[i] < lo_hi[r][1]) ok &= want < m && sel[want++] == i;
            if ((!ok || m != want) && bad++ < 5)
                CHECK(0, "select_range n %d, [%lld, %lld): %d selected, want %d", n, (long long)lo_hi[r][0],
                      (long long)lo_hi[r][1], m, want);
        }
    CHECK(bad == 0, "%d select_range cases wrong", bad);
    /* dkb_select_mask: every length 0..40 (around the 8-byte words), masks
     * with garbage past n that must be cleared, not read as set */
    int mbad = 0;
    for (int n = 0; n <= 40; n++) {
        uint8_t mask[48];
        int32_t msel[48];
        memset(mask, 1, sizeof mask);
        for (int i = 0; i < n; i++) mask[i] = (uint8_t)((i * 7 + n) % 3 == 0);
        const int m = dkb_select_mask(mask, n, msel);
        int want = 0, ok = 1;
        for (int i = 0; i < n; i++)
            if ((i * 7 + n) % 3 == 0) ok &= want < m && msel[want++] == i;
        mbad += !ok || m != want;
    }
    CHECK(mbad == 0, "%d select_mask lengths wrong", mbad);
}

/* dkb_walk_*: parents 1..P with runs of 0..7 children (keys not asked for
 * among them too), cut into 1..9 chunks; every parent's run from
 * dkb_walk_to must be exactly the rows of its key, and a guess is a row of
 * the chunk or -1. */
static void test_walk(void) {
    enum { P = 300 };
    static int32_t pk[P], ck[P * 8];
    int64_t nc = 0;
    uint32_t x = 4242;
    for (int p = 0; p < P; p++) {
        pk[p] = 2 * p + 2; /* even parent keys; odd child keys have no parent */
        x = x * 1103515245u + 12345u;
        if ((x >> 20) % 5 == 0) ck[nc++] = 2 * p + 1;
        for (int k = 0; k < (int)((x >> 8) % 8); k++) ck[nc++] = pk[p];
    }
    int bad = 0;
    for (int64_t nchunks = 1; nchunks <= 9; nchunks++)
        for (int64_t c = 0; c < nchunks; c++) {
            dkb_walk w;
            int64_t p0, p1;
            if (!dkb_walk_init(&w, pk, P, ck, nc, c, nchunks, &p0, &p1)) {
                bad += c * P / nchunks < (c + 1) * P / nchunks;
                continue;
            }
            for (int64_t p = p0; p < p1; p++) {
                if (p % 3 == 1) continue; /* parents skipped, as a filter does */
                const int32_t sel[2] = {0, 2};
                const int64_t g = dkb_walk_guess(&w, sel, 2, 0, 1), none = dkb_walk_guess(&w, sel, 2, 1, 1);
                bad += (g != -1 && (g < w.j || g >= w.end)) || none != -1;
                int64_t first, want = 0, cnt = 0;
                const int64_t end = dkb_walk_to(&w, pk[p], &first);
                for (int64_t i = 0; i < nc; i++)
                    if (ck[i] == pk[p]) want = cnt++ ? want : i;
                if (cnt ? (first != want || end != want + cnt) : end != first) {
                    if (bad++ < 5)
                        CHECK(0, "walk chunk %lld/%lld parent %lld", (long long)c, (long long)nchunks, (long long)p);
                }
            }
        }
    CHECK(bad == 0, "%d walk cases wrong", bad);
}

static int int_desc(const void *a, const void *b) { return *(const int *)a > *(const int *)b; }

/* dkb_topk_insert against a full sort: streams of 0..60 values with many
 * ties into k = 1, 3, 10 and 64 (more than the stream); the array must be
 * the k largest in descending order, ties in order of arrival (checked by
 * a payload in the low bits that the comparison ignores). */
static int pair_desc(const void *a, const void *b) { return (*(const int *)a >> 8) > (*(const int *)b >> 8); }

static void test_topk(void) {
    const int ks[] = {1, 3, 10, 64};
    uint32_t x = 99;
    int bad = 0;
    for (int t = 0; t < DKB_COUNT(ks); t++)
        for (int len = 0; len <= 60; len += 7) {
            int top[64], n = 0, all[64];
            for (int i = 0; i < len; i++) {
                x = x * 1103515245u + 12345u;
                all[i] = (int)((x >> 16) % 9) << 8 | i; /* value, then arrival */
                dkb_topk_insert(top, &n, ks[t], &all[i], sizeof(int), pair_desc);
            }
            /* reference: stable selection of the largest values */
            int want = len < ks[t] ? len : ks[t], ok = n == want, used[64] = {0};
            for (int r = 0; r < want && ok; r++) {
                int best = -1;
                for (int i = 0; i < len; i++)
                    if (!used[i] && (best < 0 || (all[i] >> 8) > (all[best] >> 8))) best = i;
                used[best] = 1;
                ok = top[r] == all[best];
            }
            if (!ok && bad++ < 5) CHECK(0, "topk k %d, %d values: %d kept", ks[t], len, n);
        }
    int v[3] = {5, 9, 7}, top[2], n = 0;
    for (int i = 0; i < 3; i++) dkb_topk_insert(top, &n, 2, &v[i], sizeof(int), int_desc);
    CHECK(n == 2 && top[0] == 9 && top[1] == 7, "top 2 of 5, 9, 7");
    CHECK(bad == 0, "%d topk cases wrong", bad);
}

/* The spec forms: DKB_BIND_COLS (each kind, found and refused: a missing
 * column, another type, another scale, no dictionary; a malformed spec, too
 * few or too many pointers), DKB_BIND_PARAMS (any, str; missing) and
 * DKB_BIND_RES (int, dec, decN against the column's scale; another type);
 * dkb_spec_word's words (no kind, a name too long, the end). */
static void test_bind_spec(void) {
    const char *ds[1] = {"A"};
    const size_t dl[1] = {1};
    const dkb_cand_dict dict = {1, ds, dl};
    int32_t k[2] = {1, 2};
    int64_t price[2] = {100, 200}, offs[3] = {0, 1, 2};
    uint8_t code[2] = {0, 0};
    double f[2] = {0.5, 1.5};
    char text[2] = {'a', 'b'};
    const dkb_cand_vec cols[6] = {{"l_orderkey", DKB_CAND_I32, 0, 2, k, NULL, 0, NULL, 0, 0},
                                  {"l_extendedprice", DKB_CAND_I64, 2, 2, price, NULL, 0, NULL, 0, 0},
                                  {"l_returnflag", DKB_CAND_U8, 0, 2, code, NULL, 0, &dict, 0, 0},
                                  {"l_codes", DKB_CAND_U8, 0, 2, code, NULL, 0, NULL, 0, 0},
                                  {"l_ratio", DKB_CAND_F64, 0, 2, f, NULL, 0, NULL, 0, 0},
                                  {"l_comment", DKB_CAND_STR, 0, 2, offs, text, 2, NULL, 0, 0}};
    const dkb_cand_table tables[1] = {{"lineitem", 2, 6, cols}};
    const dkb_cand_db db = {1.0, 1, tables};
    const dkb_cand_vec *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *g = NULL;
    CHECK(DKB_BIND_COLS(&db, "lineitem",
                        "l_orderkey:i32 l_extendedprice:dec2 l_returnflag:dict l_codes:u8 l_ratio:f64 l_comment:str",
                        &a, &b, &c, &d, &e, &g) == DKB_CAND_OK &&
              a == &cols[0] && b == &cols[1] && c == &cols[2] && d == &cols[3] && e == &cols[4] && g == &cols[5],
          "bind spec: every kind found");
    a = b = c = NULL;
    CHECK(DKB_BIND_COLS(&db, "lineitem", "  l_orderkey  l_extendedprice:i64 l_returnflag:any ", &a, &b, &c) ==
                  DKB_CAND_OK && a == &cols[0] && b == &cols[1] && c == &cols[2],
          "bind spec: no kind, i64 at any scale, any; spaces around");
    static const char *const refused[] = {"l_orderkey:i64", "l_extendedprice:dec4", "l_codes:dict",
                                          "l_shipdate:i32", "l_comment:u8", "l_ratio:dec2"};
    for (int i = 0; i < DKB_COUNT(refused); i++) {
        a = &cols[0];
        const int rc = DKB_BIND_COLS(&db, "lineitem", refused[i], &a);
        CHECK(rc == DKB_CAND_EINVAL && (i == 3 ? a == NULL : a != NULL), "bind spec: %s refused (%d)", refused[i], rc);
    }
    CHECK(DKB_BIND_COLS(&db, "orders", "o_orderkey:i32", &a) == DKB_CAND_EINVAL && a == NULL, "bind spec: no table");
    static const char *const malformed[] = {"l_orderkey:int", "l_orderkey:dec", "l_orderkey:dec123", ":i32",
                                            "l_orderkey:i32x"};
    for (int i = 0; i < DKB_COUNT(malformed); i++)
        CHECK(DKB_BIND_COLS(&db, "lineitem", malformed[i], &a) == DKB_CAND_EINTERNAL, "bind spec: \"%s\" malformed",
              malformed[i]);
    CHECK(DKB_BIND_COLS(&db, "lineitem", "l_orderkey l_codes", &a) == DKB_CAND_EINTERNAL, "bind spec: too few pointers");
    CHECK(DKB_BIND_COLS(&db, "lineitem", "l_orderkey", &a, &b) == DKB_CAND_EINTERNAL, "bind spec: too many pointers");
    CHECK(DKB_BIND_COLS(&db, "lineitem", "", &a) == DKB_CAND_EINTERNAL, "bind spec: an empty spec, a pointer");

    char name[8];
    const char *s = " ab:cd e", *kind = NULL;
    size_t kl = 0;
    CHECK(dkb_spec_word(&s, name, sizeof name, &kind, &kl) == 1 && !strcmp(name, "ab") && kl == 2 &&
              !memcmp(kind, "cd", 2),
          "spec word: name and kind");
    CHECK(dkb_spec_word(&s, name, sizeof name, &kind, &kl) == 1 && !strcmp(name, "e") && kl == 0, "spec word: no kind");
    CHECK(dkb_spec_word(&s, name, sizeof name, &kind, &kl) == 0, "spec word: the end");
    s = "abcdefgh:i32";
    CHECK(dkb_spec_word(&s, name, sizeof name, &kind, &kl) == -1, "spec word: a name over its buffer");

    const dkb_cand_param ps[2] = {{"date", DKB_CAND_PARAM_DATE, 0, 9000, NULL},
                                  {"segment", DKB_CAND_PARAM_STRING, 0, 0, "BUILDING"}};
    const dkb_cand_params params = {2, ps};
    const dkb_cand_param *p1 = NULL, *p2 = NULL;
    CHECK(DKB_BIND_PARAMS(&params, "date segment:str", &p1, &p2) == DKB_CAND_OK && p1 == &ps[0] && p2 == &ps[1],
          "bind params: found");
    CHECK(DKB_BIND_PARAMS(&params, "date:str", &p1) == DKB_CAND_EINVAL && p1 == &ps[0], "bind params: not a string");
    CHECK(DKB_BIND_PARAMS(&params, "segment:any dat", &p1, &p2) == DKB_CAND_EINVAL && p1 == &ps[1] && p2 == NULL,
          "bind params: missing");
    CHECK(DKB_BIND_PARAMS(&params, "date:int", &p1) == DKB_CAND_EINTERNAL, "bind params: a bad kind");
    CHECK(DKB_BIND_PARAMS(&params, "date", &p1, &p2) == DKB_CAND_EINTERNAL, "bind params: too many pointers");

    dkb_cand_res_col rc[5];
    memset(rc, 0, sizeof rc);
    rc[0].name = "revenue", rc[0].type = DKB_CAND_RES_DECIMAL, rc[0].scale = 4;
    rc[1].name = "n", rc[1].type = DKB_CAND_RES_INT;
    rc[2].name = "avg", rc[2].type = DKB_CAND_RES_FLOAT;
    rc[3].name = "day", rc[3].type = DKB_CAND_RES_DATE;
    rc[4].name = "s", rc[4].type = DKB_CAND_RES_STRING;
    dkb_cand_result res = {5, rc, 10, 0};
    dkb_cand_res_col *r0 = NULL, *r1 = NULL, *r2 = NULL, *r3 = NULL, *r4 = NULL;
    CHECK(DKB_BIND_RES(&res, "revenue:dec4 n:int avg:float day:date s:str", &r0, &r1, &r2, &r3, &r4) == DKB_CAND_OK &&
              r0 == &rc[0] && r1 == &rc[1] && r2 == &rc[2] && r3 == &rc[3] && r4 == &rc[4],
          "bind res: every kind found");
    CHECK(DKB_BIND_RES(&res, "revenue:dec revenue:dec2", &r0, &r1) == DKB_CAND_OK && r0 == &rc[0] && r1 == &rc[0],
          "bind res: dec at any scale, at least 2");
    CHECK(DKB_BIND_RES(&res, "revenue:dec6", &r0) == DKB_CAND_EINVAL && r0 == &rc[0], "bind res: scale 4 below 6");
    CHECK(DKB_BIND_RES(&res, "n:dec", &r0) == DKB_CAND_EINVAL && r0 == NULL, "bind res: another type");
    CHECK(DKB_BIND_RES(&res, "x:int", &r0) == DKB_CAND_EINVAL && r0 == NULL, "bind res: missing");
    CHECK(DKB_BIND_RES(&res, "n", &r0) == DKB_CAND_EINTERNAL, "bind res: no kind");
    CHECK(DKB_BIND_RES(&res, "n:int s:str", &r0) == DKB_CAND_EINTERNAL, "bind res: too few pointers");
}

/* A fake loader for the stream walk: 5 partitions of 10 rows of "k" (its
 * rows numbered 0..49), load_limit room for `fit` of them at once; loads
 * counted, a release checked against the load held. */
typedef struct fake_loader {
    dkb_cand_budget b;
    int fit, loads, releases, held, fail_at; /* fail_at: the load that fails (ENOMEM), or -1 */
    int32_t rows[50];
    dkb_cand_vec col;
} fake_loader;

static fake_loader g_fake;

static int64_t fake_size(const dkb_cand_env *env, int first, int count, int ncols, const char *const *cols) {
    (void)env, (void)cols;
    return first < 0 || count < 1 || ncols != 1 ? -1 : (int64_t)count * 40;
}

static int fake_load(const dkb_cand_env *env, int first, int count, int ncols, const char *const *cols,
                     dkb_cand_load *out) {
    (void)env, (void)cols;
    if (ncols != 1 || first < 0 || first + count > 5 || g_fake.held) return DKB_CAND_EINVAL;
    if (g_fake.loads++ == g_fake.fail_at || count * 40 > g_fake.b.load_limit) return DKB_CAND_ENOMEM;
    g_fake.col =
        (dkb_cand_vec){"k", DKB_CAND_I32, 0, (int64_t)count * 10, g_fake.rows + first * 10, NULL, 0, NULL, 0, 0};
    memset(out, 0, sizeof *out);
    out->first = first, out->count = count, out->row_start[0] = (int64_t)first * 10, out->ncols = 1;
    out->cols = &g_fake.col, out->id = (uint64_t)g_fake.loads;
    g_fake.held = 1;
    return DKB_CAND_OK;
}

static int fake_release(const dkb_cand_env *env, const dkb_cand_load *l) {
    (void)env;
    if (!g_fake.held || l->id != (uint64_t)g_fake.loads) return DKB_CAND_EINVAL;
    g_fake.held = 0, g_fake.releases++;
    return DKB_CAND_OK;
}

static int sum_visit(void *ctx, const dkb_cand_vec *cols, int64_t row_start) {
    int64_t *acc = ctx;
    const int32_t *k = cols[0].data;
    for (int64_t i = 0; i < cols[0].n; i++) acc[0] += k[i] == row_start + i; /* rows where they should be */
    acc[1]++;
    return acc[1] == acc[2] ? 7 : 0; /* acc[2]: the pass that stops the walk */
}

/* The stream walk whole (no budget; a budget that streams another table)
 * and load by load (as many partitions as load_limit allows; row_start;
 * every load released, also after a break and a failed load), and
 * dkb_stream_rows on top of it. */
static void test_stream(void) {
    for (int i = 0; i < 50; i++) g_fake.rows[i] = i;
    dkb_cand_vec kcol = {"k", DKB_CAND_I32, 0, 50, g_fake.rows, NULL, 0, NULL, 0, 0};
    const dkb_cand_table tables[1] = {{"t", 50, 1, &kcol}};
    const dkb_cand_db db = {1.0, 1, tables};
    static const char *const COLS[] = {"k"}, *const BAD[] = {"nope"};
    dkb_cand_env env = {DKB_CANDIDATE_ABI_VERSION, 1, NULL, NULL, 0, 1, NULL};
    dkb_stream st;
    int passes = 0, ok_rows = 0;
    for (dkb_stream_begin(&st, &db, &env, 1, COLS); dkb_stream_next(&st);) {
        passes++;
        ok_rows += st.cols[0].n == 50 && st.cols[0].data == g_fake.rows && st.row_start == 0;
    }
    CHECK(passes == 1 && ok_rows == 1 && dkb_stream_end(&st) == 0, "stream: no budget, one whole pass");
    CHECK(dkb_stream_begin(&st, &db, &env, 1, BAD) == DKB_CAND_EINVAL && !dkb_stream_next(&st) &&
              dkb_stream_end(&st) == DKB_CAND_EINVAL,
          "stream: a missing column, no pass");

    g_fake.b = (dkb_cand_budget){1 << 20, 0, 1, {"other", NULL}, 5, {NULL, NULL}, fake_load, fake_release, fake_size};
    env.budget = &g_fake.b;
    passes = 0;
    for (dkb_stream_begin(&st, &db, &env, 1, COLS); dkb_stream_next(&st);) passes++;
    CHECK(passes == 1 && dkb_stream_end(&st) == 0 && g_fake.loads == 0, "stream: another table streams: whole");

    g_fake.b.streamed[0] = "t";
    static const int fits[3] = {1, 2, 5}, want_passes[3] = {5, 3, 1};
    for (int f = 0; f < 3; f++) {
        g_fake.b.load_limit = fits[f] * 40, g_fake.loads = g_fake.releases = g_fake.held = 0, g_fake.fail_at = -1;
        int64_t seen = 0;
        passes = 0;
        for (dkb_stream_begin(&st, &db, &env, 1, COLS); dkb_stream_next(&st);) {
            const int32_t *k = st.cols[0].data;
            for (int64_t i = 0; i < st.cols[0].n; i++) seen += k[i] == st.row_start + i;
            passes++;
        }
        CHECK(dkb_stream_end(&st) == 0 && passes == want_passes[f] && seen == 50 && g_fake.loads == passes &&
                  g_fake.releases == passes && !g_fake.held,
              "stream: %d partitions a load: %d passes, rows in place, all released", fits[f], passes);
    }
    g_fake.b.load_limit = 80, g_fake.loads = g_fake.releases = g_fake.held = 0;
    for (dkb_stream_begin(&st, &db, &env, 1, COLS); dkb_stream_next(&st);) break;
    CHECK(g_fake.held && dkb_stream_end(&st) == 0 && !g_fake.held && g_fake.releases == 1, "stream: a break, released");
    g_fake.loads = g_fake.releases = g_fake.held = 0, g_fake.fail_at = 1;
    passes = 0;
    for (dkb_stream_begin(&st, &db, &env, 1, COLS); dkb_stream_next(&st);) passes++;
    CHECK(passes == 1 && dkb_stream_end(&st) == DKB_CAND_ENOMEM && !g_fake.held && g_fake.releases == 1,
          "stream: a failed load ends the walk with its error");

    g_fake.loads = g_fake.releases = g_fake.held = 0, g_fake.fail_at = -1;
    int64_t acc[3] = {0, 0, -1};
    CHECK(dkb_stream_rows(&db, &env, 1, COLS, sum_visit, acc) == 0 && acc[0] == 50 && acc[1] == 3 &&
              g_fake.releases == 3,
          "stream rows: every pass visited");
    g_fake.loads = g_fake.releases = g_fake.held = 0;
    int64_t stop[3] = {0, 0, 2};
    CHECK(dkb_stream_rows(&db, &env, 1, COLS, sum_visit, stop) == 7 && stop[1] == 2 && !g_fake.held &&
              g_fake.releases == 2,
          "stream rows: a visit's error stops the walk, its load released");
}

/* A fake loader that may hold several loads at once, for the overlap walk
 * (DKB_STREAM_OVERLAP): partitions of given row counts of "k" (rows
 * numbered 0..), 4 bytes a row; a load past load_limit (with what is held)
 * fails with ENOMEM as the harness's does. It keeps what the walk did:
 * per load the partitions, how many loads were held when it was asked
 * for, and the most bytes held at once. */
enum { OV_MAXPARTS = 8, OV_MAXROWS = 400, OV_MAXLOADS = 16, OV_SLOTS = 4 };

typedef struct overlap_loader {
    dkb_cand_budget b;
    int64_t start[OV_MAXPARTS + 1];
    int32_t rows[OV_MAXROWS];
    int loads, releases, fail_at, bad_release;
    int held, max_held;
    int64_t held_bytes, max_bytes;
    int first[OV_MAXLOADS], count[OV_MAXLOADS], held_before[OV_MAXLOADS];
    struct {
        int live;
        uint64_t id;
        int64_t bytes;
        dkb_cand_vec col;
    } slot[OV_SLOTS];
} overlap_loader;

static overlap_loader g_ov;

static int64_t ov_size(const dkb_cand_env *env, int first, int count, int ncols, const char *const *cols) {
    (void)env, (void)cols;
    if (ncols != 1 || first < 0 || count < 1 || first + count > g_ov.b.nparts) return -1;
    return (g_ov.start[first + count] - g_ov.start[first]) * 4;
}

static int ov_load(const dkb_cand_env *env, int first, int count, int ncols, const char *const *cols,
                   dkb_cand_load *out) {
    const int64_t bytes = ov_size(env, first, count, ncols, cols);
    if (bytes < 0 || g_ov.loads >= OV_MAXLOADS) return DKB_CAND_EINVAL;
    const int k = g_ov.loads++;
    g_ov.first[k] = first, g_ov.count[k] = count, g_ov.held_before[k] = g_ov.held;
    if (k == g_ov.fail_at || g_ov.held_bytes + bytes > g_ov.b.load_limit) return DKB_CAND_ENOMEM;
    int s = 0;
    while (s < OV_SLOTS && g_ov.slot[s].live) s++;
    if (s == OV_SLOTS) return DKB_CAND_EINVAL;
    g_ov.slot[s].live = 1, g_ov.slot[s].id = (uint64_t)k + 1, g_ov.slot[s].bytes = bytes;
    g_ov.slot[s].col = (dkb_cand_vec){"k", DKB_CAND_I32, 0, g_ov.start[first + count] - g_ov.start[first],
                                      g_ov.rows + g_ov.start[first], NULL, 0, NULL, 0, 0};
    memset(out, 0, sizeof *out);
    out->first = first, out->count = count, out->row_start[0] = g_ov.start[first];
    out->rows[0] = g_ov.slot[s].col.n, out->bytes = bytes, out->ncols = 1;
    out->cols = &g_ov.slot[s].col, out->id = g_ov.slot[s].id;
    g_ov.held++, g_ov.held_bytes += bytes;
    if (g_ov.held > g_ov.max_held) g_ov.max_held = g_ov.held;
    if (g_ov.held_bytes > g_ov.max_bytes) g_ov.max_bytes = g_ov.held_bytes;
    return DKB_CAND_OK;
}

static int ov_release(const dkb_cand_env *env, const dkb_cand_load *l) {
    (void)env;
    for (int s = 0; s < OV_SLOTS; s++)
        if (g_ov.slot[s].live && g_ov.slot[s].id == l->id) {
            g_ov.slot[s].live = 0;
            g_ov.held--, g_ov.held_bytes -= g_ov.slot[s].bytes, g_ov.releases++;
            return DKB_CAND_OK;
        }
    g_ov.bad_release = 1;
    return DKB_CAND_EINVAL;
}

/* g_ov reset to partitions of sizes[0..np) rows and load_limit limit_rows * 4 bytes. */
static void ov_reset(const int *sizes, int np, int64_t limit_rows, int fail_at) {
    memset(&g_ov, 0, sizeof g_ov);
    g_ov.b = (dkb_cand_budget){1 << 20, limit_rows * 4, 1, {"t", NULL}, np, {g_ov.start, NULL}, ov_load, ov_release,
                               ov_size};
    for (int p = 0; p < np; p++) g_ov.start[p + 1] = g_ov.start[p] + sizes[p];
    for (int64_t i = 0; i < g_ov.start[np]; i++) g_ov.rows[i] = (int32_t)i;
    g_ov.fail_at = fail_at;
}

/* One overlap walk over g_ov: *passes, and whether every row was visited
 * once, in order (each pass starting where the last ended, its rows in
 * place); returns dkb_stream_end's code. Each pass also checks that the
 * loads held then fit load_limit. */
static int ov_walk(const dkb_cand_db *db, const dkb_cand_env *env, int *passes, int *in_order) {
    static const char *const COLS[] = {"k"};
    dkb_stream st;
    int64_t next = 0;
    *passes = 0, *in_order = 1;
    for (dkb_stream_begin_ex(&st, db, env, 1, COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);) {
        const int32_t *k = st.cols[0].data;
        if (st.row_start != next) *in_order = 0;
        for (int64_t i = 0; i < st.cols[0].n; i++)
            if (k[i] != next + i) *in_order = 0;
        next += st.cols[0].n;
        (*passes)++;
    }
    const int rc = dkb_stream_end(&st);
    if (next != g_ov.start[g_ov.b.nparts]) *in_order = 0;
    return rc;
}

/* The overlap walk (DKB_STREAM_OVERLAP) over a loader that holds several
 * loads: every row visited once in order; never more than load_limit held;
 * when two loads fit, the next is taken before the current is released
 * (two held at once); a partition over half the limit is loaded with
 * nothing else held; a loader error ends the walk with its error, nothing
 * left held; without a budget one whole pass. */
static void test_stream_overlap(void) {
    dkb_cand_vec kcol = {"k", DKB_CAND_I32, 0, 0, g_ov.rows, NULL, 0, NULL, 0, 0};
    const dkb_cand_table tables[1] = {{"t", 0, 1, &kcol}};
    const dkb_cand_db db = {1.0, 1, tables};
    dkb_cand_env env = {DKB_CANDIDATE_ABI_VERSION, 1, NULL, NULL, 0, 1, NULL};
    int passes = 0, in_order = 0, rc;

    /* no budget: one pass over the whole column, no load */
    static const int six[6] = {10, 10, 10, 10, 10, 10};
    ov_reset(six, 6, 40, -1);
    kcol.n = 60;
    {
        static const char *const COLS[] = {"k"};
        dkb_stream st;
        int whole = 0;
        passes = 0;
        for (dkb_stream_begin_ex(&st, &db, &env, 1, COLS, DKB_STREAM_OVERLAP); dkb_stream_next(&st);)
            passes++, whole += st.cols[0].n == 60 && st.cols[0].data == g_ov.rows && st.row_start == 0;
        CHECK(dkb_stream_end(&st) == 0 && passes == 1 && whole == 1 && g_ov.loads == 0,
              "overlap: no budget, one whole pass, no load");
    }
    env.budget = &g_ov.b;

    /* equal partitions, two loads fit: (limit rows, partitions a load, passes) */
    static const int equal[3][3] = {{40, 2, 3}, {20, 1, 6}, {60, 3, 2}};
    for (int c = 0; c < 3; c++) {
        ov_reset(six, 6, equal[c][0], -1);
        rc = ov_walk(&db, &env, &passes, &in_order);
        int overlapped = 1, sized = 1;
        for (int k = 0; k < g_ov.loads; k++) {
            if (k > 0 && g_ov.held_before[k] != 1) overlapped = 0; /* the current one still held */
            if (g_ov.count[k] != equal[c][1]) sized = 0;
        }
        CHECK(rc == 0 && in_order && passes == equal[c][2] && g_ov.loads == passes && g_ov.releases == passes &&
                  !g_ov.held && !g_ov.bad_release,
              "overlap: limit %d rows: %d passes, every row once in order, all released", equal[c][0], passes);
        CHECK(g_ov.max_bytes <= g_ov.b.load_limit && sized, "overlap: limit %d rows: loads of half the limit, %lld <= %lld held",
              equal[c][0], (long long)g_ov.max_bytes, (long long)g_ov.b.load_limit);
        CHECK(overlapped && g_ov.max_held == (passes > 1 ? 2 : 1),
              "overlap: limit %d rows: each next load taken before the current one is released", equal[c][0]);
    }

    /* every partition over half the limit (10 rows, limit 15): each loaded alone, nothing else held */
    ov_reset(six, 6, 15, -1);
    rc = ov_walk(&db, &env, &passes, &in_order);
    {
        int alone = 1;
        for (int k = 0; k < g_ov.loads; k++) alone &= g_ov.held_before[k] == 0 && g_ov.count[k] == 1;
        CHECK(rc == 0 && in_order && passes == 6 && alone && g_ov.max_held == 1 && g_ov.max_bytes <= 60 &&
                  g_ov.releases == 6 && !g_ov.held,
              "overlap: partitions over half the limit: each loaded alone after the current is released");
    }

    /* one partition over half the limit among small ones, last or before another large one:
     * it is loaded with nothing else held, the small ones two at a time */
    static const int big_last[3] = {10, 10, 30}, big_pair[4] = {10, 30, 30, 10};
    ov_reset(big_last, 3, 40, -1);
    rc = ov_walk(&db, &env, &passes, &in_order);
    CHECK(rc == 0 && in_order && passes == 2 && g_ov.held_before[1] == 0 && g_ov.first[1] == 2 &&
              g_ov.max_bytes <= g_ov.b.load_limit && !g_ov.held,
          "overlap: a large last partition loaded alone (%d passes, rc %d)", passes, rc);
    ov_reset(big_pair, 4, 40, -1);
    rc = ov_walk(&db, &env, &passes, &in_order);
    CHECK(rc == 0 && in_order && passes == 3 && g_ov.held_before[1] == 0 && g_ov.held_before[2] == 0 &&
              g_ov.max_bytes <= g_ov.b.load_limit && !g_ov.held,
          "overlap: large partitions loaded alone (%d passes, rc %d)", passes, rc);

    /* a small partition right after a large one (over half the limit): the walk
     * must not hold both past load_limit (the overlapped load is capped at
     * load_limit less the held load's bytes; before that cap, 35 + 10 rows
     * were held against 40 and the loader's ENOMEM ended the walk) */
    static const int big_small[4] = {10, 30, 5, 10};
    ov_reset(big_small, 4, 40, -1);
    rc = ov_walk(&db, &env, &passes, &in_order);
    CHECK(rc == 0 && in_order && g_ov.max_bytes <= g_ov.b.load_limit && !g_ov.held,
          "overlap: a small partition after a large one: rc %d, %lld of %lld bytes held at most", rc,
          (long long)g_ov.max_bytes, (long long)g_ov.b.load_limit);

    /* a loader error ends the walk with its error, nothing left held: the first load,
     * the second and the third (each asked for while the current one is held) */
    static const int fail[3] = {0, 1, 2};
    for (int f = 0; f < 3; f++) {
        ov_reset(six, 6, 20, fail[f]);
        rc = ov_walk(&db, &env, &passes, &in_order);
        CHECK(rc == DKB_CAND_ENOMEM && passes == fail[f] && g_ov.loads == fail[f] + 1 &&
                  g_ov.releases == fail[f] && !g_ov.held && !g_ov.bad_release,
              "overlap: load %d fails: the walk ends after %d passes with ENOMEM, all released", fail[f], passes);
    }
}

int main(void) {
    test_dates();
    test_decimals();
    test_lower_bound();
    test_results();
    test_search_more();
    test_strings();
    test_results_more();
    test_find_row();
    test_select_bits();
    test_select_range();
    test_walk();
    test_topk();
    test_bind_spec();
    test_stream();
    test_stream_overlap();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_cand_util: ok\n");
    return failures != 0;
}
