/* test_tbl_parse.c: dkb__tbl_parse: good rows of every type, and every kind
 * of bad row with its exact message; numeric and date edge cases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbl/tbl.h"
#include "test_check.h"

/* Parse text as table t into a fresh batch of capacity cap. */
static int parse(dkb_table_id t, const char *text, size_t cap, dkb_batch *b, dkb_error *err) {
    if (dkb__batch_init(b, dkb_table_def_get(t), cap)) return DKB_ENOMEM;
    memset(err, 0, sizeof *err);
    return dkb__tbl_parse(text, strlen(text), b, "t.tbl", 1, err);
}

/* The text must fail with code and exactly msg. */
static void expect_fail(int line, dkb_table_id t, const char *text, int code, const char *msg) {
    dkb_batch b;
    dkb_error err;
    int rc = parse(t, text, 8, &b, &err);
    if (rc != code || strcmp(err.msg, msg) != 0) {
        fprintf(stderr, "%s:%d: expected %s \"%s\"\n    got %s \"%s\"\n", __FILE__, line,
                dkb_err_name(code), msg, dkb_err_name(rc), err.msg);
        failures++;
    }
    /* String columns stay consistent with nrows after a failure. */
    for (int c = 0; c < b.table->ncols; c++)
        if (b.col[c].off) CHECK(b.col[c].bytes_len == b.col[c].off[b.nrows]);
    dkb__batch_free(&b);
}
#define EXPECT_FAIL(t, text, code, msg) expect_fail(__LINE__, t, text, code, msg)

/* One value of a numeric column parsed from an orders line with `field`
 * (1-based: 1 orderkey, 4 totalprice, 5 orderdate) replaced. */
static int orders_value(int field, const char *value, int64_t *out, dkb_error *err) {
    const char *f[9] = {"1", "370", "O", "172799.49", "1996-01-02", "5-LOW", "Clerk#000000951", "0", "nstructions"};
    f[field - 1] = value;
    char line[512];
    snprintf(line, sizeof line, "%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", f[0], f[1], f[2], f[3], f[4], f[5],
             f[6], f[7], f[8]);
    dkb_batch b;
    int rc = parse(DKB_TABLE_ORDERS, line, 1, &b, err);
    if (!rc) *out = b.col[field - 1].v[0];
    dkb__batch_free(&b);
    return rc;
}

static void check_value(int line, int field, const char *value, int64_t want) {
    int64_t got = 0;
    dkb_error err;
    int rc = orders_value(field, value, &got, &err);
    if (rc || got != want) {
        fprintf(stderr, "%s:%d: '%s' parsed to %lld (rc %d: %s), expected %lld\n", __FILE__, line,
                value, (long long)got, rc, rc ? err.msg : "", (long long)want);
        failures++;
    }
}
#define CHECK_VALUE(field, value, want) check_value(__LINE__, field, value, want)

static void check_bad(int line, int field, const char *value, int code, const char *what) {
    int64_t got = 0;
    dkb_error err;
    int rc = orders_value(field, value, &got, &err);
    static const char *names[] = {"o_orderkey", "", "", "o_totalprice", "o_orderdate"};
    char want[256];
    snprintf(want, sizeof want, "t.tbl:1: field %d (%s): %s: '%s'", field, names[field - 1], what, value);
    if (rc != code || strcmp(err.msg, want) != 0) {
        fprintf(stderr, "%s:%d: '%s': expected %s \"%s\"\n    got %s \"%s\"\n", __FILE__, line, value,
                dkb_err_name(code), want, dkb_err_name(rc), rc ? err.msg : "");
        failures++;
    }
}
#define CHECK_BAD(field, value, code, what) check_bad(__LINE__, field, value, code, what)

static int str_eq(const dkb_batch *b, int c, size_t r, const char *s) {
    size_t len;
    const char *p = dkb__batch_str(b, c, r, &len);
    return len == strlen(s) && memcmp(p, s, len) == 0;
}

static void test_good_lineitem(void) {
    const char *text =
        "1|1552|93|1|17|24710.35|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the|\n"
        "6000000|32255|2256|1|5|5936.25|0.04|0.03|N|O|1996-11-02|1996-11-19|1996-12-01|TAKE BACK RETURN|MAIL|riously pe|\n"
        "7|1|2|3|4|-283.84|0.00|0.10|R|F|1992-01-01|1970-01-01|1969-12-31|NONE|AIR||\n";
    dkb_batch b;
    dkb_error err;
    CHECK(parse(DKB_TABLE_LINEITEM, text, 3, &b, &err) == 0);
    CHECK(b.nrows == 3);
    CHECK(b.col[0].v[0] == 1 && b.col[1].v[0] == 1552 && b.col[2].v[0] == 93 && b.col[3].v[0] == 1);
    CHECK(b.col[4].v[0] == 1700);            /* l_quantity "17": hundredths */
    CHECK(b.col[5].v[0] == 2471035);
    CHECK(b.col[6].v[0] == 4 && b.col[7].v[0] == 2);
    CHECK(str_eq(&b, 8, 0, "N") && str_eq(&b, 9, 0, "O"));
    CHECK(b.col[10].v[0] == 9568);           /* 1996-03-13 */
    CHECK(b.col[11].v[0] == 9538 && b.col[12].v[0] == 9577);
    CHECK(str_eq(&b, 13, 0, "DELIVER IN PERSON") && str_eq(&b, 14, 0, "TRUCK"));
    CHECK(str_eq(&b, 15, 0, "egular courts above the"));
    CHECK(b.col[0].v[1] == 6000000 && str_eq(&b, 15, 1, "riously pe"));
    CHECK(b.col[5].v[2] == -28384);
    CHECK(b.col[10].v[2] == 8035 && b.col[11].v[2] == 0 && b.col[12].v[2] == -1);
    CHECK(str_eq(&b, 15, 2, ""));            /* empty text field */
    dkb__batch_free(&b);
}

static void test_good_misc(void) {
    dkb_batch b;
    dkb_error err;
    /* Fields with spaces, commas and punctuation are verbatim. */
    CHECK(parse(DKB_TABLE_NATION, "0|ALGERIA|0| haggle. carefully final deposits detect slyly agai|\n"
                "24|UNITED STATES|1|y final packages. slow foxes cajole quickly, quickly silent|\n",
                2, &b, &err) == 0);
    CHECK(b.nrows == 2 && b.col[0].v[1] == 24 && str_eq(&b, 1, 1, "UNITED STATES"));
    CHECK(str_eq(&b, 3, 0, " haggle. carefully final deposits detect slyly agai"));
    dkb__batch_free(&b);
    /* No lines: nothing appended. */
    CHECK(parse(DKB_TABLE_REGION, "", 1, &b, &err) == 0 && b.nrows == 0);
    /* Appending continues after existing rows. */
    CHECK(dkb__tbl_parse("1|AMERICA|x|\n", 13, &b, "t.tbl", 1, &err) == 0);
    CHECK(dkb__tbl_parse("2|ASIA|yz|\n", 11, &b, "t.tbl", 2, &err) == DKB_EINVAL && b.nrows == 1);
    dkb__batch_free(&b);
    CHECK(parse(DKB_TABLE_REGION, "1|AMERICA|x|\n2|ASIA|yz|\n", 2, &b, &err) == 0);
    CHECK(b.nrows == 2 && str_eq(&b, 1, 1, "ASIA") && str_eq(&b, 2, 1, "yz") && str_eq(&b, 2, 0, "x"));
    dkb__batch_free(&b);
}

static void test_numbers(void) {
    CHECK_VALUE(1, "0", 0);
    CHECK_VALUE(1, "007", 7);
    CHECK_VALUE(1, "-5", -5);
    CHECK_VALUE(1, "9223372036854775807", INT64_MAX);
    CHECK_VALUE(1, "-9223372036854775808", INT64_MIN);
    CHECK_BAD(1, "9223372036854775808", DKB_ERANGE, "integer out of range");
    CHECK_BAD(1, "-9223372036854775809", DKB_ERANGE, "integer out of range");
    CHECK_BAD(1, "123456789012345678901234", DKB_ERANGE, "integer out of range");
    CHECK_BAD(1, "", DKB_EPARSE, "not an integer");
    CHECK_BAD(1, "-", DKB_EPARSE, "not an integer");
    CHECK_BAD(1, "+1", DKB_EPARSE, "not an integer");
    CHECK_BAD(1, "12a", DKB_EPARSE, "not an integer");
    CHECK_BAD(1, " 12", DKB_EPARSE, "not an integer");
    CHECK_BAD(1, "1.0", DKB_EPARSE, "not an integer");

    CHECK_VALUE(4, "17", 1700);
    CHECK_VALUE(4, "17.5", 1750);
    CHECK_VALUE(4, "17.50", 1750);
    CHECK_VALUE(4, "17.05", 1705);
    CHECK_VALUE(4, "-283.84", -28384);
    CHECK_VALUE(4, "-0.5", -50);
    CHECK_VALUE(4, "0.00", 0);
    CHECK_VALUE(4, "92233720368547758.07", INT64_MAX);
    CHECK_VALUE(4, "-92233720368547758.08", INT64_MIN);
    CHECK_BAD(4, "92233720368547758.08", DKB_ERANGE, "decimal out of range");
    CHECK_BAD(4, "100000000000000000", DKB_ERANGE, "decimal out of range");
    CHECK_BAD(4, "1.234", DKB_EPARSE, "more than 2 decimal places");
    CHECK_BAD(4, "17.", DKB_EPARSE, "not a decimal");
    CHECK_BAD(4, ".5", DKB_EPARSE, "not a decimal");
    CHECK_BAD(4, "", DKB_EPARSE, "not a decimal");
    CHECK_BAD(4, "-", DKB_EPARSE, "not a decimal");
    CHECK_BAD(4, "1e5", DKB_EPARSE, "not a decimal");
    CHECK_BAD(4, "1.2.3", DKB_EPARSE, "not a decimal");
    CHECK_BAD(4, "1,50", DKB_EPARSE, "not a decimal");
}

static void test_dates(void) {
    CHECK_VALUE(5, "1970-01-01", 0);
    CHECK_VALUE(5, "1969-12-31", -1);
    CHECK_VALUE(5, "1992-01-01", 8035);
    CHECK_VALUE(5, "1998-12-31", 10591);
    CHECK_VALUE(5, "1996-02-29", 9555);
    CHECK_VALUE(5, "2000-02-29", 11016);
    CHECK_BAD(5, "1995-02-29", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1900-02-29", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1995-13-01", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1995-00-10", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1995-04-31", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1995-01-00", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1995-01-32", DKB_EPARSE, "invalid date");
    CHECK_BAD(5, "1995-1-01", DKB_EPARSE, "not a date (YYYY-MM-DD)");
    CHECK_BAD(5, "1995/01/01", DKB_EPARSE, "not a date (YYYY-MM-DD)");
    CHECK_BAD(5, "1995-01-011", DKB_EPARSE, "not a date (YYYY-MM-DD)");
    CHECK_BAD(5, "95-01-01", DKB_EPARSE, "not a date (YYYY-MM-DD)");
    CHECK_BAD(5, "", DKB_EPARSE, "not a date (YYYY-MM-DD)");
}

static void test_structure(void) {
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|comment\n", DKB_EPARSE,
                "t.tbl:1: field 3 (r_comment): missing trailing '|'");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|\n", DKB_EPARSE,
                "t.tbl:1: field 3 (r_comment): missing (line has 2 fields, expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA\n", DKB_EPARSE,
                "t.tbl:1: field 3 (r_comment): missing (line has 2 fields, expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0\n", DKB_EPARSE,
                "t.tbl:1: field 2 (r_name): missing (line has 1 fields, expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "\n", DKB_EPARSE,
                "t.tbl:1: field 1 (r_regionkey): missing (line has 0 fields, expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|c|x|\n", DKB_EPARSE, "t.tbl:1: too many fields (expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|c|x\n", DKB_EPARSE, "t.tbl:1: too many fields (expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|c|\r\n", DKB_EPARSE,
                "t.tbl:1: line ends with CR (CRLF line endings; dbgen writes LF)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|c|x\r\n", DKB_EPARSE, "t.tbl:1: too many fields (expected 3)");
    EXPECT_FAIL(DKB_TABLE_REGION, "0|AFRICA|c|\n1|ASIA|d|", DKB_EPARSE,
                "t.tbl:2: last line does not end with a newline");
    EXPECT_FAIL(DKB_TABLE_REGION, "x|AFRICA|c|\n", DKB_EPARSE,
                "t.tbl:1: field 1 (r_regionkey): not an integer: 'x'");
    /* Integer field at the end of a short line: a count problem, not a number. */
    EXPECT_FAIL(DKB_TABLE_NATION, "0|ALGERIA|0\n", DKB_EPARSE,
                "t.tbl:1: field 4 (n_comment): missing (line has 3 fields, expected 4)");
    EXPECT_FAIL(DKB_TABLE_NATION, "0|ALGERIA|\n", DKB_EPARSE,
                "t.tbl:1: field 3 (n_regionkey): missing (line has 2 fields, expected 4)");
    /* Unprintable bytes are shown as '?', long fields cut short. */
    EXPECT_FAIL(DKB_TABLE_REGION, "1\x01\xff|A|c|\n", DKB_EPARSE,
                "t.tbl:1: field 1 (r_regionkey): not an integer: '1?" "?'");
    EXPECT_FAIL(DKB_TABLE_REGION,
                "1234567890123456789012345678901234567890123456789012345678901234567890x|A|c|\n",
                DKB_EPARSE,
                "t.tbl:1: field 1 (r_regionkey): not an integer: "
                "'12345678901234567890123456789012345678901234...'");
    /* A NUL byte inside a text field is data, not an end of line. */
    dkb_batch b;
    dkb_error err;
    CHECK(dkb__batch_init(&b, dkb_table_def_get(DKB_TABLE_REGION), 1) == 0);
    CHECK(dkb__tbl_parse("0|A\0B|c|\n", 9, &b, "t.tbl", 1, &err) == 0 && b.nrows == 1);
    size_t len;
    CHECK(dkb__batch_str(&b, 1, 0, &len) && len == 3);
    dkb__batch_free(&b);
}

static void test_line_numbers_and_capacity(void) {
    dkb_batch b;
    dkb_error err;
    CHECK(dkb__batch_init(&b, dkb_table_def_get(DKB_TABLE_REGION), 4) == 0);
    const char *text = "0|AFRICA|a|\n1|AMERICA|b|\n2|ASIA|c\n3|EUROPE|d|\n";
    CHECK(dkb__tbl_parse(text, strlen(text), &b, "region.tbl", 100, &err) == DKB_EPARSE);
    CHECK(strcmp(err.msg, "region.tbl:102: field 3 (r_comment): missing trailing '|'") == 0);
    CHECK(b.nrows == 2);
    CHECK(b.col[1].bytes_len == b.col[1].off[2] && b.col[2].bytes_len == b.col[2].off[2]);
    dkb__batch_free(&b);

    CHECK(dkb__batch_init(&b, dkb_table_def_get(DKB_TABLE_REGION), 1) == 0);
    CHECK(dkb__tbl_parse("0|A|a|\n1|B|b|\n", 14, &b, "r.tbl", 1, &err) == DKB_EINVAL);
    CHECK(strcmp(err.msg, "r.tbl:2: batch is full (1 rows)") == 0);
    CHECK(b.nrows == 1);
    dkb__batch_free(&b);

    /* Without a file name the messages say <input>; err may be NULL. */
    CHECK(dkb__batch_init(&b, dkb_table_def_get(DKB_TABLE_REGION), 1) == 0);
    CHECK(dkb__tbl_parse("x|A|a|\n", 7, &b, NULL, 1, &err) == DKB_EPARSE);
    CHECK(strncmp(err.msg, "<input>:1: ", 11) == 0);
    CHECK(dkb__tbl_parse("x|A|a|\n", 7, &b, NULL, 1, NULL) == DKB_EPARSE);
    dkb__batch_free(&b);
}

/* Text fields grow the batch's byte buffer as needed. */
static void test_long_text(void) {
    size_t n = 100000;
    char *line = malloc(n + 32);
    int k = snprintf(line, 32, "7|X|");
    memset(line + k, 'q', n);
    memcpy(line + k + n, "|\n", 3);
    dkb_batch b;
    dkb_error err;
    CHECK(parse(DKB_TABLE_REGION, line, 1, &b, &err) == 0);
    size_t len;
    const char *s = dkb__batch_str(&b, 2, 0, &len);
    CHECK(len == n && s[0] == 'q' && s[n - 1] == 'q');
    dkb__batch_free(&b);
    free(line);
}

int main(void) {
    test_good_lineitem();
    test_good_misc();
    test_numbers();
    test_dates();
    test_structure();
    test_line_numbers_and_capacity();
    test_long_text();
    if (failures) fprintf(stderr, "test_tbl_parse: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
