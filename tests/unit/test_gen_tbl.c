/* test_gen_tbl.c: generator + .tbl formatter against dbgen 2.14's output.
 *
 * - SF 0.01: every table, generated in chunks, hashes (sha256), row count and
 *   size equal to the SF 0.01 entries of $DKB_TESTDATA/dbgen-hashes.txt.
 * - Any split of a table into unit ranges concatenates to the same bytes.
 * - SF 1 without generating everything: unit counts, the total lineitem rows
 *   (from the line count stream alone), full hashes of the small tables and
 *   known rows at the end and in the middle of orders and lineitem.
 *   DKB_TEST_SF1_FULL=1 also hashes orders, lineitem and partsupp in full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "gen/rng.h"
#include "tbl/tbl.h"
#include "test_check.h"

/* ---- sha256 (FIPS 180-4), test-only ---- */
typedef struct sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t n;
} sha256;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(sha256 *s, const unsigned char *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ch + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void sha_init(sha256 *s) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->n = 0;
}

static void sha_update(sha256 *s, const void *data, size_t len) {
    const unsigned char *p = data;
    s->len += len;
    if (s->n) {
        while (len && s->n < 64) s->buf[s->n++] = *p++, len--;
        if (s->n < 64) return;
        sha_block(s, s->buf);
        s->n = 0;
    }
    for (; len >= 64; p += 64, len -= 64) sha_block(s, p);
    memcpy(s->buf, p, len);
    s->n = len;
}

static void sha_hex(sha256 *s, char out[65]) {
    uint64_t bits = s->len * 8;
    unsigned char pad = 0x80, zero = 0, lenb[8];
    sha_update(s, &pad, 1);
    while (s->n != 56) sha_update(s, &zero, 1);
    for (int i = 0; i < 8; i++) lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha_update(s, lenb, 8);
    for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", (unsigned)s->h[i]);
}

/* ---- expected values from dbgen-hashes.txt ---- */
typedef struct expect {
    char sha[65];
    long long rows, bytes;
    int found;
} expect;

/* Read the entries of section "## SF <sf>" into e[table]. */
static void read_hashes(const char *sf, expect e[DKB_TABLE_COUNT]) {
    memset(e, 0, sizeof(expect) * DKB_TABLE_COUNT);
    const char *dir = getenv("DKB_TESTDATA");
    char path[1024], line[512], want[64];
    snprintf(path, sizeof path, "%s/dbgen-hashes.txt", dir ? dir : "tests/data");
    snprintf(want, sizeof want, "## SF %s", sf);
    FILE *f = fopen(path, "r");
    if (!f) {
        CHECK(0, "cannot open %s", path);
        return;
    }
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (strncmp(line, "## ", 3) == 0) {
            in = strcmp(line, want) == 0;
            continue;
        }
        char sha[65], file[64];
        long long rows, bytes;
        if (!in || sscanf(line, "%64s %lld %lld %63s", sha, &rows, &bytes, file) != 4) continue;
        char *dot = strstr(file, ".tbl");
        if (!dot) continue;
        *dot = 0;
        const dkb_table_def *t = dkb_table_def_find(file);
        if (!t) continue;
        memcpy(e[t->id].sha, sha, 65);
        e[t->id].rows = rows;
        e[t->id].bytes = bytes;
        e[t->id].found = 1;
    }
    fclose(f);
    for (int t = 0; t < DKB_TABLE_COUNT; t++)
        CHECK(e[t].found, "no SF %s entry for %s in %s", sf, dkb_table_def_get(t)->name, path);
}

/* ---- generation helpers ---- */
typedef struct result {
    sha256 sha;
    long long rows, bytes;
} result;

static void result_init(result *r) {
    sha_init(&r->sha);
    r->rows = r->bytes = 0;
}

/* Generate units [first, first + count) of t in chunks of `chunk` units, feed
 * the text to r and (if text != NULL) append it to *text. */
static int gen_range(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count,
                     int64_t chunk, result *r, dkb_buf *text) {
    dkb_batch b;
    size_t cap = (size_t)(chunk * dkb__gen_max_rows_per_unit(t));
    if (dkb__batch_init(&b, dkb_table_def_get(t), cap)) return -1;
    dkb_buf out = {0};
    int rc = 0;
    for (int64_t u = first; u < first + count && !rc; u += chunk) {
        int64_t n = first + count - u < chunk ? first + count - u : chunk;
        dkb__batch_clear(&b);
        out.len = 0;
        rc = dkb__gen_fill(g, t, u, n, &b);
        if (!rc) rc = dkb__tbl_format(&b, &out);
        if (rc) break;
        sha_update(&r->sha, out.data, out.len);
        r->rows += (long long)b.nrows;
        r->bytes += (long long)out.len;
        if (text) {
            if (dkb__buf_reserve(text, out.len)) { rc = -1; break; }
            memcpy(text->data + text->len, out.data, out.len);
            text->len += out.len;
        }
    }
    dkb__buf_free(&out);
    dkb__batch_free(&b);
    return rc;
}

static void check_table(const dkb_gen *g, dkb_table_id t, const expect *e, const char *sf,
                        int64_t chunk) {
    const char *name = dkb_table_def_get(t)->name;
    result r;
    result_init(&r);
    int rc = gen_range(g, t, 0, dkb__gen_units(g, t), chunk, &r, NULL);
    CHECK(rc == 0, "SF %s %s: generation failed (%d)", sf, name, rc);
    char hex[65];
    sha_hex(&r.sha, hex);
    CHECK(strcmp(hex, e->sha) == 0, "SF %s %s: sha256 %s, dbgen %s", sf, name, hex, e->sha);
    CHECK(r.rows == e->rows, "SF %s %s: %lld rows, dbgen %lld", sf, name, r.rows, e->rows);
    CHECK(r.bytes == e->bytes, "SF %s %s: %lld bytes, dbgen %lld", sf, name, r.bytes, e->bytes);
}

/* Generating t as ranges split at awkward points gives the same bytes. */
static void check_splits(const dkb_gen *g, dkb_table_id t, const expect *e) {
    const char *name = dkb_table_def_get(t)->name;
    int64_t units = dkb__gen_units(g, t);
    int64_t cuts[] = {0, 1, 7, 1000, units - 1, units};
    result r;
    result_init(&r);
    int64_t prev = 0;
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        int64_t c = cuts[i] < 0 ? 0 : cuts[i] > units ? units : cuts[i];
        if (c < prev) continue;
        /* Odd chunk sizes too, so batch boundaries fall elsewhere. */
        int rc = gen_range(g, t, prev, c - prev, 333, &r, NULL);
        CHECK(rc == 0, "%s split at %lld failed (%d)", name, (long long)c, rc);
        prev = c;
    }
    char hex[65];
    sha_hex(&r.sha, hex);
    CHECK(strcmp(hex, e->sha) == 0, "%s: split generation differs (sha256 %s)", name, hex);
    CHECK(r.rows == e->rows, "%s: split generation gives %lld rows", name, r.rows);
}

/* The text of units [first, first + count) of t equals want. */
static void check_rows(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count,
                       const char *want) {
    result r;
    result_init(&r);
    dkb_buf text = {0};
    int rc = gen_range(g, t, first, count, count, &r, &text);
    CHECK(rc == 0 && text.len == strlen(want) && memcmp(text.data, want, text.len) == 0,
          "SF 1 %s units %lld..%lld:\n got: %.*s\nwant: %s", dkb_table_def_get(t)->name,
          (long long)first, (long long)(first + count - 1), (int)text.len,
          text.data ? text.data : "", want);
    dkb__buf_free(&text);
}

static void test_sf001(void) {
    expect e[DKB_TABLE_COUNT];
    read_hashes("0.01", e);
    dkb_gen *g;
    dkb_error err;
    int rc = dkb__gen_create(0.01, &g, &err);
    CHECK(rc == 0, "create SF 0.01: %s", err.msg);
    if (rc) return;
    for (int t = 0; t < DKB_TABLE_COUNT; t++) {
        if (!e[t].found) continue;
        check_table(g, (dkb_table_id)t, &e[t], "0.01", 1000);
        check_splits(g, (dkb_table_id)t, &e[t]);
    }
    dkb__gen_destroy(g);
}

static const char orders_last[] =
    "5999975|113398|F|63216.65|1993-07-25|1-URGENT|Clerk#000000813|0|oost! ironic instructions h|\n"
    "6000000|110063|O|37625.29|1996-08-31|2-HIGH|Clerk#000000411|0|ess pinto beans boost slyly "
    "regular accounts! furiously even|\n";
static const char orders_mid[] =
    "4000000|131723|F|96769.29|1994-10-10|2-HIGH|Clerk#000000976|0|even instructions snooze "
    "carefully acr|\n";
static const char lineitem_last[] =
    "5999974|25360|5361|1|24|30848.64|0.02|0.03|R|F|1993-08-15|1993-10-07|1993-09-01|COLLECT "
    "COD|MAIL|express dependencies. express, pendi|\n"
    "5999974|10463|5466|2|46|63179.16|0.08|0.06|R|F|1993-09-16|1993-09-21|1993-10-02|COLLECT "
    "COD|RAIL|dolites wake|\n"
    "5999975|7272|2273|1|32|37736.64|0.07|0.01|R|F|1993-10-07|1993-09-30|1993-10-21|COLLECT "
    "COD|REG AIR|tructions. excu|\n"
    "5999975|6452|1453|2|7|9509.15|0.04|0.00|A|F|1993-11-02|1993-09-23|1993-11-19|DELIVER IN "
    "PERSON|SHIP|lar pinto beans aft|\n"
    "5999975|37131|2138|3|18|19226.34|0.04|0.01|A|F|1993-11-17|1993-08-28|1993-12-08|DELIVER "
    "IN PERSON|FOB|, quick deposits. ironic, unusual deposi|\n"
    "6000000|32255|2256|1|5|5936.25|0.04|0.03|N|O|1996-11-02|1996-11-19|1996-12-01|TAKE BACK "
    "RETURN|MAIL|carefully |\n"
    "6000000|96127|6128|2|28|31447.36|0.01|0.02|N|O|1996-09-22|1996-10-01|1996-10-21|NONE|AIR|"
    "ooze furiously about the pe|\n";

static void test_sf1(void) {
    expect e[DKB_TABLE_COUNT];
    read_hashes("1", e);
    dkb_gen *g;
    dkb_error err;
    int rc = dkb__gen_create(1, &g, &err);
    CHECK(rc == 0, "create SF 1: %s", err.msg);
    if (rc) return;
    CHECK(dkb__gen_scale(g) == 1.0, "SF 1 scale %g", dkb__gen_scale(g));

    /* Units: one row each, 4 partsupp rows per part. */
    for (int t = 0; t < DKB_TABLE_COUNT; t++) {
        int64_t rows = t == DKB_TABLE_PARTSUPP ? dkb__gen_units(g, t) * 4 : dkb__gen_units(g, t);
        if (t == DKB_TABLE_LINEITEM) continue;
        CHECK(rows == e[t].rows, "SF 1 %s: %lld units, dbgen has %lld rows",
              dkb_table_def_get(t)->name, (long long)dkb__gen_units(g, t), e[t].rows);
    }
    /* Lineitem rows: the sum of the orders' line counts (dbgen's stream 43). */
    int64_t orders = dkb__gen_units(g, DKB_TABLE_LINEITEM), lines = 0;
    CHECK(orders == e[DKB_TABLE_ORDERS].rows, "SF 1 lineitem: %lld units", (long long)orders);
    dkb_stream st;
    dkb__stream_at(&st, DKB_S_O_LCNT, 0);
    for (int64_t i = 0; i < orders; i++, dkb__stream_next_row(&st)) {
        uint32_t x = st.row;
        lines += dkb__pm_draw(&x, 1, 7);
    }
    CHECK(lines == e[DKB_TABLE_LINEITEM].rows, "SF 1 lineitem: %lld rows, dbgen %lld",
          (long long)lines, e[DKB_TABLE_LINEITEM].rows);

    /* Whole small tables. */
    const dkb_table_id small[] = {DKB_TABLE_PART, DKB_TABLE_SUPPLIER, DKB_TABLE_CUSTOMER,
                                  DKB_TABLE_NATION, DKB_TABLE_REGION};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        check_table(g, small[i], &e[small[i]], "1", 5000);

    /* Rows at the end and in the middle of the big tables. */
    check_rows(g, DKB_TABLE_ORDERS, orders - 2, 2, orders_last);
    check_rows(g, DKB_TABLE_ORDERS, 999999, 1, orders_mid);
    check_rows(g, DKB_TABLE_LINEITEM, orders - 3, 3, lineitem_last);

    const char *full = getenv("DKB_TEST_SF1_FULL");
    if (full && *full == '1') {
        const dkb_table_id big[] = {DKB_TABLE_PARTSUPP, DKB_TABLE_ORDERS, DKB_TABLE_LINEITEM};
        for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
            check_table(g, big[i], &e[big[i]], "1", 10000);
    }
    dkb__gen_destroy(g);
}

int main(void) {
    test_sf001();
    test_sf1();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_gen_tbl: all checks passed\n");
    return 0;
}
