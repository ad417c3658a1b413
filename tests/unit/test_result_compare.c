/* test_result_compare.c: the comparator: shapes, row counts, ORDER BY with
 * ties compared as sets, whole-set comparison, FLOAT tolerance (including
 * values within tolerance that sort apart), DECIMAL exact versus rounded,
 * INT against DECIMAL, trailing spaces, and the first-difference message;
 * the official answer reader on excerpts of dbgen's answers/ files. */
#include <math.h>

#include "common/date.h"
#include "test_result_util.h"

/* A result from a row-major text table: "a|1|2.5;b|2|3.5" with the given
 * column spec "name:T[:scale],..." (T = I, D, F, T (date), S). */
static void make(dkb_result *r, const char *spec, const char *rows) {
    const char *names[16];
    dkb_res_type types[16];
    int scales[16], n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
        char *t = strchr(tok, ':');
        *t++ = 0;
        names[n] = tok;
        types[n] = *t == 'I' ? DKB_RES_INT : *t == 'D' ? DKB_RES_DECIMAL : *t == 'F' ? DKB_RES_FLOAT
                 : *t == 'T' ? DKB_RES_DATE : DKB_RES_STRING;
        scales[n] = t[1] == ':' ? atoi(t + 2) : 0;
    }
    if (dkb_result_init(r, n, names, types, scales)) abort();
    char *copy = strdup(rows), *rs = NULL;
    for (char *row = strtok_r(copy, ";", &rs); row; row = strtok_r(NULL, ";", &rs)) {
        int64_t i = dkb_result_add_row(r);
        char *cs = NULL;
        int c = 0;
        for (char *cell = strtok_r(row, "|", &cs); cell && c < n; cell = strtok_r(NULL, "|", &cs), c++) {
            switch (types[c]) {
            case DKB_RES_INT: dkb_result_set_int(r, i, c, atoll(cell)); break;
            case DKB_RES_DECIMAL: {
                /* digits without the point, at the column's scale */
                __int128 v = 0;
                int neg = *cell == '-', frac = -1;
                for (char *p = cell + neg; *p; p++) {
                    if (*p == '.') frac = 0;
                    else v = v * 10 + (*p - '0'), frac += frac >= 0;
                }
                for (int k = frac < 0 ? 0 : frac; k < scales[c]; k++) v *= 10;
                dkb_result_set_dec(r, i, c, neg ? -v : v);
                break;
            }
            case DKB_RES_FLOAT: dkb_result_set_float(r, i, c, strtod(cell, NULL)); break;
            case DKB_RES_DATE: {
                int y, m, d;
                sscanf(cell, "%d-%d-%d", &y, &m, &d);
                dkb_result_set_date(r, i, c, dkb__days_from_civil(y, m, d));
                break;
            }
            case DKB_RES_STRING: dkb_result_set_str(r, i, c, cell, strlen(cell)); break;
            }
        }
    }
    free(copy);
    if (r->nbad) abort();
}

static void order(dkb_result *r, int col, bool desc) {
    dkb_sort_spec keys[8];
    int n = r->norder;
    memcpy(keys, r->order, sizeof keys);
    keys[n].column = col;
    keys[n].desc = desc;
    dkb_result_set_order(r, n + 1, keys);
}

/* compare(got, expected) must give want ("" = equal) */
static void expect(const char *line, dkb_result *g, dkb_result *e, const dkb_compare_opts *o, const char *want) {
    dkb_error err = {0};
    int rc = dkb_result_compare(g, e, o, &err);
    if (!*want ? rc != 0 : (rc != DKB_EINVAL || strcmp(err.msg, want))) {
        fprintf(stderr, "%s: expected \"%s\", got rc %d \"%s\"\n", line, want, rc, err.msg);
        failures++;
    }
    dkb_result_free(g);
    dkb_result_free(e);
}
#define S_(x) #x
#define S(x) S_(x)
#define EXPECT(g, e, o, want) expect(__FILE__ ":" S(__LINE__), g, e, o, want)

static void test_shape(void) {
    dkb_result g = {0}, e = {0};
    make(&g, "a:I,b:S", "1|x");
    make(&e, "a:I", "1");
    EXPECT(&g, &e, NULL, "got 2 columns, expected 1");
    make(&g, "a:I,b:S", "1|x");
    make(&e, "a:I,c:S", "1|x");
    EXPECT(&g, &e, NULL, "column 2 is named 'b', expected 'c'");
    make(&g, "a:I,b:S", "1|x");
    make(&e, "a:I,b:T", "1|1995-01-01");
    EXPECT(&g, &e, NULL, "column b is STRING, expected DATE");
    make(&g, "a:I", "1;2");
    make(&e, "a:I", "1;2;3");
    EXPECT(&g, &e, NULL, "got 2 rows, expected 3");
    make(&g, "a:I", "1");
    make(&e, "a:I", "1;2");
    EXPECT(&g, &e, NULL, "got 1 row, expected 2");
    make(&g, "a:I", "");
    make(&e, "a:I", "");
    EXPECT(&g, &e, NULL, "");
}

static void test_ordered(void) {
    dkb_result g = {0}, e = {0};
    const char *spec = "k:S,v:I,w:D:2";
    /* identical */
    make(&g, spec, "a|1|1.00;b|2|2.00;c|3|3.00");
    make(&e, spec, "a|1|1.00;b|2|2.00;c|3|3.00");
    order(&g, 0, false);
    EXPECT(&g, &e, NULL, "");
    /* rows out of order */
    make(&g, spec, "a|1|1.00;c|3|3.00;b|2|2.00");
    make(&e, spec, "a|1|1.00;b|2|2.00;c|3|3.00");
    order(&g, 0, false);
    EXPECT(&g, &e, NULL, "row 2, column k: got 'c', expected 'b'");
    /* ties on the key compare as a set */
    make(&g, spec, "a|1|1.00;b|5|2.00;b|4|2.50;b|6|1.00;c|3|3.00");
    make(&e, spec, "a|1|1.00;b|4|2.50;b|6|1.00;b|5|2.00;c|3|3.00");
    order(&g, 0, false);
    EXPECT(&g, &e, NULL, "");
    /* ...but a tie group must hold the same rows */
    make(&g, spec, "a|1|1.00;b|5|2.00;b|4|2.50;b|6|1.00;c|3|3.00");
    make(&e, spec, "a|1|1.00;b|4|2.50;b|6|1.00;b|7|2.00;c|3|3.00");
    order(&g, 0, false);
    EXPECT(&g, &e, NULL, "row 4, column v: got 5, expected 7");
    /* two keys: ties only where both tie */
    make(&g, spec, "a|1|1.00;a|2|9.00;a|2|8.00;b|1|0.00");
    make(&e, spec, "a|1|1.00;a|2|8.00;a|2|9.00;b|1|0.00");
    order(&g, 0, false);
    order(&g, 1, true);
    EXPECT(&g, &e, NULL, "");
    make(&g, spec, "a|2|9.00;a|1|1.00;a|2|8.00;b|1|0.00");
    make(&e, spec, "a|1|1.00;a|2|8.00;a|2|9.00;b|1|0.00");
    order(&g, 0, false);
    order(&g, 1, false);
    EXPECT(&g, &e, NULL, "row 1, column v: got 2, expected 1");
    /* expected's ORDER BY is used when got has none */
    make(&g, spec, "b|2|2.00;a|1|1.00");
    make(&e, spec, "a|1|1.00;b|2|2.00");
    order(&e, 0, false);
    EXPECT(&g, &e, NULL, "row 1, column k: got 'b', expected 'a'");
}

static void test_unordered(void) {
    dkb_result g = {0}, e = {0};
    const char *spec = "k:S,v:I,f:F:2,d:T";
    make(&g, spec, "c|3|0.5|1995-01-03;a|1|1.5|1995-01-01;b|2|2.5|1995-01-02;a|1|1.5|1995-01-01");
    make(&e, spec, "a|1|1.5|1995-01-01;a|1|1.5|1995-01-01;b|2|2.5|1995-01-02;c|3|0.5|1995-01-03");
    EXPECT(&g, &e, NULL, "");
    /* one value differs: reported at the expected row with its closest match */
    make(&g, spec, "c|3|0.5|1995-01-03;a|1|1.5|1995-01-01;b|2|2.5|1995-01-09");
    make(&e, spec, "a|1|1.5|1995-01-01;b|2|2.5|1995-01-02;c|3|0.5|1995-01-03");
    EXPECT(&g, &e, NULL, "row 2, column d: got 1995-01-09, expected 1995-01-02");
    /* duplicates count */
    make(&g, spec, "a|1|1.5|1995-01-01;a|1|1.5|1995-01-01;b|2|2.5|1995-01-02");
    make(&e, spec, "a|1|1.5|1995-01-01;b|2|2.5|1995-01-02;b|2|2.5|1995-01-02");
    EXPECT(&g, &e, NULL, "row 3, column k: got 'a', expected 'b'");
}

static void test_float(void) {
    dkb_result g = {0}, e = {0};
    dkb_compare_opts o = {1e-9, 1e-9, 0, false};
    make(&g, "x:F", "1.0000000005;-3e12");
    make(&e, "x:F", "1;-3.000000001e12");
    EXPECT(&g, &e, &o, "");
    make(&g, "x:F", "1.0000001");
    make(&e, "x:F", "1");
    EXPECT(&g, &e, &o, "row 1, column x: got 1.0000001, expected 1");
    make(&g, "x:F", "nan;inf");
    make(&e, "x:F", "nan;inf");
    EXPECT(&g, &e, &o, "");
    make(&g, "x:F", "inf");
    make(&e, "x:F", "1e308");
    EXPECT(&g, &e, &o, "row 1, column x: got inf, expected 1e+308");
    /* within tolerance but sorting apart on the first FLOAT column */
    make(&g, "a:F,b:F", "1.0000000003|5;1|3");
    make(&e, "a:F,b:F", "1|5;1.0000000002|3");
    EXPECT(&g, &e, &o, "");
    /* FLOAT against DECIMAL and INT: numbers */
    make(&g, "x:F,y:F", "0.05|7");
    make(&e, "x:D:2,y:I", "0.05|7");
    EXPECT(&g, &e, &o, "");
    make(&g, "x:F", "0.0500001");
    make(&e, "x:D:2", "0.05");
    EXPECT(&g, &e, &o, "row 1, column x: got 0.0500001, expected 0.05");
}

static void test_decimal(void) {
    dkb_result g = {0}, e = {0};
    dkb_compare_opts exact = {1e-9, 1e-9, 0, false}, rounded = {0.01, 1e-6, 1e-6, true};
    /* the same value at different scales is equal */
    make(&g, "x:D:4", "1.2300");
    make(&e, "x:D:2", "1.23");
    EXPECT(&g, &e, &exact, "");
    make(&g, "x:D:4", "1.2345");
    make(&e, "x:D:2", "1.23");
    EXPECT(&g, &e, &exact, "row 1, column x: got 1.2345, expected 1.23");
    /* rounded: half a unit of the coarser scale */
    make(&g, "x:D:4", "1.2345;-0.0050");
    make(&e, "x:D:2", "1.23;-0.01");
    EXPECT(&g, &e, &rounded, "");
    make(&g, "x:D:4", "0.0351");
    make(&e, "x:D:2", "0.03");
    EXPECT(&g, &e, &rounded, "row 1, column x: got 0.0351, expected 0.03");
    /* ...or the relative tolerance (Q17's official answer is 1e-7 off) */
    make(&g, "x:D:7", "348406.0542857");
    make(&e, "x:D:2", "348406.02");
    EXPECT(&g, &e, &rounded, "");
    make(&g, "x:D:2", "348406.02");
    make(&e, "x:D:2", "348407.02");
    EXPECT(&g, &e, &rounded, "row 1, column x: got 348406.02, expected 348407.02");
    /* INT against DECIMAL */
    make(&g, "x:I", "3");
    make(&e, "x:D:2", "3.00");
    EXPECT(&g, &e, &exact, "");
    make(&g, "x:I", "3");
    make(&e, "x:D:2", "3.01");
    EXPECT(&g, &e, &exact, "row 1, column x: got 3, expected 3.01");
    /* huge values that cannot share a scale still compare */
    make(&g, "x:D:30", "12345678.123456789012345678901234567890");
    make(&e, "x:D:0", "99999999999999999999999999999999999999");
    EXPECT(&g, &e, &exact, "row 1, column x: got 12345678.123456789012345678901234567890, "
                           "expected 99999999999999999999999999999999999999");
}

static void test_strings(void) {
    dkb_result g = {0}, e = {0};
    dkb_compare_opts trim = {1e-9, 1e-9, 0, true};
    make(&g, "s:S", "abc  ");
    make(&e, "s:S", "abc");
    EXPECT(&g, &e, NULL, "row 1, column s: got 'abc  ', expected 'abc'");
    make(&g, "s:S", "abc  ;b");
    make(&e, "s:S", "b;abc");
    EXPECT(&g, &e, &trim, "");
    make(&g, "s:S", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
    make(&e, "s:S", "x");
    EXPECT(&g, &e, NULL,
           "row 1, column s: got 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh...', expected 'x'");
}

/* Excerpts of dbgen's answers/q1.out, q3.out, q18.out and q2.out, byte for byte. */
static void test_official(void) {
    dkb_error err = {0};
    dkb_result like = {0}, got = {0}, off = {0};
    dkb_compare_opts o = {0.01, 1e-6, 1e-6, true};
    make(&like, "l_returnflag:S,l_linestatus:S,sum_qty:D:2,sum_base_price:D:2,sum_disc_price:D:4,sum_charge:D:6,"
                "avg_qty:F:2,avg_price:F:2,avg_disc:F:2,count_order:I",
         "");
    char *p = write_tmp(
        "l|l|sum_qty                                  |sum_base_price                           |sum_disc_price      "
        "                     |sum_charge                               |avg_qty                                  "
        "|avg_price                                |avg_disc                                 |count_order         "
        "  \n"
        "A|F|37734107.00|56586554400.73|53758257134.87|55909065222.83|25.52|38273.13|0.05|               1478493\n"
        "N|F|991417.00|1487504710.38|1413082168.05|1469649223.19|25.52|38284.47|0.05|                 38854\n",
        ".out");
    CHECK(dkb_result_read_official(p, &like, &off, &err) == 0);
    if (err.code) fprintf(stderr, "official: %s\n", err.msg);
    CHECK(off.nrows == 2 && !strcmp(off.cols[0].name, "l_returnflag") && off.cols[9].i64[1] == 38854);
    /* what a plan computes (exact sums at their scales, float averages) */
    make(&got, "l_returnflag:S,l_linestatus:S,sum_qty:D:2,sum_base_price:D:2,sum_disc_price:D:4,sum_charge:D:6,"
               "avg_qty:F:2,avg_price:F:2,avg_disc:F:2,count_order:I",
         "A|F|37734107.00|56586554400.73|53758257134.8700|55909065222.827692|25.522006|38273.129735|0.049985|1478493;"
         "N|F|991417.00|1487504710.38|1413082168.0541|1469649223.194375|25.516472|38284.467761|0.050093|38854");
    order(&got, 0, false);
    order(&got, 1, false);
    CHECK(dkb_result_compare(&got, &off, &o, &err) == 0);
    if (err.code) fprintf(stderr, "compare q1: %s\n", err.msg);
    got.cols[9].i64[1]++;
    CHECK_ERR(dkb_result_compare(&got, &off, &o, &err), DKB_EINVAL, err,
              "row 2, column count_order: got 38855, expected 38854");
    dkb_result_free(&got);
    dkb_result_free(&off);
    unlink(p);
    free(p);

    /* wrong field counts */
    p = write_tmp("l|l|x\nA|F|1|2|3|4|5|6|7|8\n", ".out");
    CHECK_ERR(dkb_result_read_official(p, &like, &off, &err), DKB_EPARSE, err, ":1: header has 3 fields, expected 10");
    unlink(p);
    free(p);
    p = write_tmp("a|b|c|d|e|f|g|h|i|j\nA|F|1|2|3|4|5|6|7|8|9\n", ".out");
    CHECK_ERR(dkb_result_read_official(p, &like, &off, &err), DKB_EPARSE, err, ":2: more than 10 fields");
    unlink(p);
    free(p);
    p = write_tmp("a|b|c|d|e|f|g|h|i|j\nA|F|x|2|3|4|5|6|7|8\n", ".out");
    CHECK_ERR(dkb_result_read_official(p, &like, &off, &err), DKB_EPARSE, err, ":2: column sum_qty: 'x' is not");
    unlink(p);
    free(p);
    p = write_tmp("", ".out");
    CHECK_ERR(dkb_result_read_official(p, &like, &off, &err), DKB_EPARSE, err, "empty file");
    unlink(p);
    free(p);
    dkb_result_free(&like);

    /* dates, truncated names, padded strings (q3, q18) */
    make(&like, "l_orderkey:I,revenue:D:4,o_orderdate:T,o_shippriority:I", "");
    p = write_tmp("l_orderkey            |revenue                                  |o_orderdat|o_shippriority      \n"
                  "               2456423|406181.01|1995-03-05|                   0\n",
                  ".out");
    CHECK(dkb_result_read_official(p, &like, &off, &err) == 0);
    CHECK(off.nrows == 1 && off.cols[0].i64[0] == 2456423 && off.cols[1].dec[0] == 40618101 && off.cols[1].scale == 2 &&
          off.cols[2].date[0] == dkb__days_from_civil(1995, 3, 5));
    dkb_result_free(&off);
    dkb_result_free(&like);
    unlink(p);
    free(p);

    make(&like, "s_acctbal:D:2,s_name:S,s_address:S,s_comment:S", "");
    p = write_tmp("s_acctbal     |s_name                   |s_address                               |s_comment   \n"
                  "9936.22|Supplier#000005250       |B3rqp0xbSEim4Mpy2RH J                   |etect about the  \n",
                  ".out");
    CHECK(dkb_result_read_official(p, &like, &off, &err) == 0);
    CHECK(off.nrows == 1 && !strcmp(off.cols[1].str[0], "Supplier#000005250") &&
          !strcmp(off.cols[2].str[0], "B3rqp0xbSEim4Mpy2RH J") && !strcmp(off.cols[3].str[0], "etect about the"));
    /* a result whose comment ends in a space matches with str_rtrim */
    make(&got, "s_acctbal:D:2,s_name:S,s_address:S,s_comment:S",
         "9936.22|Supplier#000005250|B3rqp0xbSEim4Mpy2RH J|etect about the ");
    CHECK(dkb_result_compare(&got, &off, &o, &err) == 0);
    dkb_result_free(&got);
    dkb_result_free(&off);
    dkb_result_free(&like);
    unlink(p);
    free(p);
}

/* Every official answer file reads with an all-STRING shape of its width
 * (DKB_TPCH_ANSWERS: the answers/ folder; skipped when absent). */
static void test_official_files(void) {
    const char *dir = getenv("DKB_TPCH_ANSWERS");
    if (!dir) dir = "/work/shared/tpch/answers";
    char path[4096];
    snprintf(path, sizeof path, "%s/q1.out", dir);
    if (access(path, R_OK)) {
        printf("official answer files: skipped (no %s)\n", path);
        return;
    }
    for (int q = 1; q <= 22; q++) {
        snprintf(path, sizeof path, "%s/q%d.out", dir, q);
        FILE *f = fopen(path, "r");
        CHECK(f != NULL);
        if (!f) continue;
        int ncols = 1, lines = 0, ch, first = 1;
        while ((ch = fgetc(f)) != EOF) {
            if (ch == '\n') lines++, first = 0;
            else if (ch == '|' && first) ncols++;
        }
        fclose(f);
        const char *names[64];
        dkb_res_type types[64];
        char namebuf[64][16];
        CHECK(ncols > 0 && ncols <= 64);
        for (int c = 0; c < ncols && c < 64; c++) {
            snprintf(namebuf[c], sizeof namebuf[c], "c%d", c);
            names[c] = namebuf[c];
            types[c] = DKB_RES_STRING;
        }
        dkb_result like = {0}, off = {0};
        dkb_error err = {0};
        CHECK(dkb_result_init(&like, ncols, names, types, NULL) == 0);
        CHECK(dkb_result_read_official(path, &like, &off, &err) == 0);
        if (err.code) fprintf(stderr, "%s\n", err.msg);
        CHECK(off.nrows == lines - 1);
        for (int64_t i = 0; i < off.nrows; i++)
            for (int c = 0; c < ncols; c++) {
                size_t len = strlen(off.cols[c].str[i]);
                CHECK(len == 0 || off.cols[c].str[i][len - 1] != ' ');
            }
        dkb_result_free(&off);
        dkb_result_free(&like);
    }
}

int main(void) {
    test_shape();
    test_ordered();
    test_unordered();
    test_float();
    test_decimal();
    test_strings();
    test_official();
    test_official_files();
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("test_result_compare: ok\n");
    return failures != 0;
}
