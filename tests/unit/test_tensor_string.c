/* test_tensor_string.c: TensorPlan string operations against reference
 * code: LIKE on STR rows and on dictionaries (via a dynamic-programming
 * matcher) for the TPC-H patterns and edge cases ('%green%', 'forest%',
 * '%BRASS', '%special%requests%', '_', '', '%', '%%', '__%', 'gre_n', ...),
 * dict_code, substr with clipping, str_to_i64, str_pack. */
#include "test_tensor_util.h"

/* LIKE by dynamic programming over (pattern position, string position). */
static bool ref_like(const char *p, const char *s, int64_t n) {
    int64_t m = (int64_t)strlen(p);
    bool *cur = calloc((size_t)n + 1, 1), *nxt = calloc((size_t)n + 1, 1);
    cur[0] = true; /* cur[j]: p[0..i) matches s[0..j) */
    for (int64_t i = 0; i < m; i++) {
        memset(nxt, 0, (size_t)n + 1);
        if (p[i] == '%') {
            bool any = false;
            for (int64_t j = 0; j <= n; j++) any |= cur[j], nxt[j] = any;
        } else {
            for (int64_t j = 0; j < n; j++) nxt[j + 1] = cur[j] && (p[i] == '_' || p[i] == s[j]);
        }
        bool *t = cur;
        cur = nxt, nxt = t;
    }
    bool r = cur[n];
    free(cur), free(nxt);
    return r;
}

static const char *const PATTERNS[] = {"%green%", "forest%", "%BRASS", "%special%requests%", "_", "", "%", "%%",
                                       "__%", "gre_n%", "%en", "green", "%e%e%e%", "x%x", "%_x_%", "%gre%en%",
                                       "%requests", "special%", "%green forest%", "_%_"};
#define NPAT ((int)(sizeof PATTERNS / sizeof PATTERNS[0]))

static void test_like(int threads, int64_t n) {
    dkb_tp *tp = new_tp(threads);
    int64_t *off = xmalloc_i64(n);
    char *bytes = rand_strings(n, off);
    dkb_tensor *s = dkb_tp_from_host_str(tp, n, off, bytes);
    for (int q = 0; q < NPAT; q++) {
        dkb_tensor *m = dkb_tp_like(tp, s, PATTERNS[q]);
        expect_ok(tp, "like");
        if (!m) break;
        for (int64_t i = 0; i < n; i++) {
            bool e = ref_like(PATTERNS[q], bytes + off[i], off[i + 1] - off[i]);
            if (DATA(uint8_t, m)[i] != e) {
                CHECK(0, "like '%s' row %lld \"%.*s\": got %d", PATTERNS[q], (long long)i, (int)(off[i + 1] - off[i]),
                      bytes + off[i], DATA(uint8_t, m)[i]);
                break;
            }
        }
    }
    /* substr with clipping, str_to_i64 */
    static const int starts[] = {0, 0, 2, 5, -3, 100};
    static const int lens[] = {2, 0, 3, 100, 5, 4};
    for (int q = 0; q < 6; q++) {
        dkb_tensor *sub = dkb_tp_substr(tp, s, starts[q], lens[q]);
        expect_ok(tp, "substr");
        if (!sub) break;
        const int64_t *so = DATA(int64_t, sub);
        CHECK(so[0] == 0, "substr offsets start at 0");
        for (int64_t i = 0; i < n; i++) {
            int64_t sl = off[i + 1] - off[i], b = starts[q] < 0 ? 0 : starts[q], e = (int64_t)starts[q] + lens[q];
            if (e > sl) e = sl;
            int64_t len = e > b ? e - b : 0;
            CHECK(so[i + 1] - so[i] == len && memcmp(sub->bytes + so[i], bytes + off[i] + b, (size_t)len) == 0,
                  "substr(%d, %d) row %lld", starts[q], lens[q], (long long)i);
        }
    }
    dkb_tp_destroy(tp);
    free(off), free(bytes);
}

static void test_dict(void) {
    dkb_tp *tp = new_tp(2);
    static const char *const s[] = {"", "ECONOMY ANODIZED BRASS", "LARGE BRUSHED STEEL", "MEDIUM POLISHED BRASS",
                                    "PROMO BURNISHED COPPER", "STANDARD PLATED TIN", "forest green", "green"};
    size_t l[8];
    for (int i = 0; i < 8; i++) l[i] = strlen(s[i]);
    dkb_tp_dict d = {8, s, l};
    for (int q = 0; q < NPAT; q++) {
        bool *lut = dkb_tp_like_dict(tp, &d, PATTERNS[q]);
        CHECK(lut != NULL, "like_dict");
        for (int i = 0; lut && i < 8; i++)
            CHECK(lut[i] == ref_like(PATTERNS[q], s[i], (int64_t)l[i]), "like_dict '%s' entry %d", PATTERNS[q], i);
    }
    bool *lut = dkb_tp_like_dict(tp, &d, "%BRASS");
    CHECK(lut && lut[1] && !lut[2] && lut[3] && !lut[4], "%%BRASS by hand");
    for (int i = 0; i < 8; i++) CHECK(dkb_tp_dict_code(&d, s[i]) == i, "dict_code %d", i);
    CHECK(dkb_tp_dict_code(&d, "BRASS") == -1 && dkb_tp_dict_code(&d, "zzz") == -1 && dkb_tp_dict_code(NULL, "x") == -1,
          "dict_code misses");
    /* str_to_i64 */
    static const char txt[] = "13-555-1234|31|-7| 42x||+9|0009|9223372036854775807";
    int64_t off[9] = {0};
    int k = 0;
    for (int i = 0; txt[i]; i++)
        if (txt[i] == '|') off[++k] = i + 1;
    /* offsets: strings between bars (the bars excluded by using ends) */
    int64_t o2[9], e2[9];
    for (int i = 0; i < 8; i++) o2[i] = off[i], e2[i] = (i < 7 ? off[i + 1] - 1 : (int64_t)strlen(txt));
    char buf[128];
    int64_t so[9];
    size_t used = 0;
    so[0] = 0;
    for (int i = 0; i < 8; i++) {
        memcpy(buf + used, txt + o2[i], (size_t)(e2[i] - o2[i]));
        used += (size_t)(e2[i] - o2[i]);
        so[i + 1] = (int64_t)used;
    }
    dkb_tensor *str = dkb_tp_from_host_str(tp, 8, so, buf);
    dkb_tensor *v = dkb_tp_str_to_i64(tp, dkb_tp_substr(tp, str, 0, 100));
    int64_t want[8] = {13, 31, -7, 42, 0, 9, 9, INT64_MAX};
    expect_ok(tp, "str_to_i64");
    for (int i = 0; v && i < 8; i++) CHECK(DATA(int64_t, v)[i] == want[i], "str_to_i64 %d: %lld", i, (long long)DATA(int64_t, v)[i]);
    /* phone country codes as in Q22: substr(0, 2) then parse */
    dkb_tensor *cc = dkb_tp_str_to_i64(tp, dkb_tp_substr(tp, str, 0, 2));
    CHECK(cc && DATA(int64_t, cc)[0] == 13 && DATA(int64_t, cc)[2] == -7, "country code");
    int64_t o3[2] = {0, 20};
    dkb_tensor *big = dkb_tp_from_host_str(tp, 1, o3, "99999999999999999999");
    CHECK(dkb_tp_str_to_i64(tp, big) == NULL && dkb_tp_status(tp, NULL) == DKB_ERANGE, "str_to_i64 overflow");
    dkb_tp_destroy(tp);
}

/* str_pack: equal strings equal keys, order as memcmp then length (bytes
 * above 0x7f too), a longer string refused with fits or an error without */
static void test_pack(void) {
    dkb_tp *tp = new_tp(2);
    static const char *const s[] = {"", "a", "a\0", "ab", "b", "13", "13", "\xff", "\x80x", "abcdefg", "ab"};
    static const int64_t len[] = {0, 1, 2, 2, 1, 2, 2, 1, 2, 7, 2};
    enum { N = 11 };
    int64_t off[N + 1] = {0};
    char buf[64];
    for (int i = 0; i < N; i++) {
        memcpy(buf + off[i], s[i], (size_t)len[i]);
        off[i + 1] = off[i] + len[i];
    }
    dkb_tensor *str = dkb_tp_from_host_str(tp, N, off, buf);
    bool fits = false;
    dkb_tensor *k = dkb_tp_str_pack(tp, str, &fits);
    expect_ok(tp, "str_pack");
    CHECK(k && fits, "str_pack of short strings");
    for (int i = 0; k && i < N; i++)
        for (int j = 0; j < N; j++) {
            int64_t m = len[i] < len[j] ? len[i] : len[j];
            int c = memcmp(s[i], s[j], (size_t)m);
            if (!c) c = (len[i] > len[j]) - (len[i] < len[j]);
            int64_t a = DATA(int64_t, k)[i], b = DATA(int64_t, k)[j];
            CHECK((c < 0) == (a < b) && (c == 0) == (a == b), "str_pack order: rows %d, %d", i, j);
        }
    int64_t o2[2] = {0, 8};
    dkb_tensor *longer = dkb_tp_from_host_str(tp, 1, o2, "abcdefgh");
    fits = true;
    CHECK(dkb_tp_str_pack(tp, longer, &fits) == NULL && !fits && dkb_tp_status(tp, NULL) == 0, "str_pack: 8 bytes, fits");
    CHECK(dkb_tp_str_pack(tp, longer, NULL) == NULL && dkb_tp_status(tp, NULL) == DKB_ERANGE, "str_pack: 8 bytes, error");
    dkb_tp_destroy(tp);
}

int main(void) {
    for (int t = 0; t < NTHREADS; t++)
        for (int s = 0; s < NSIZES; s++) test_like(THREADS[t], SIZES[s]);
    test_dict();
    test_pack();
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_string: ok\n");
    return failures ? 1 : 0;
}
