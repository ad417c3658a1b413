/* test_result.c: result tables: building (growth, setter misuse), cell
 * text, the exact TABLE/CSV/JSON forms, and CSV/JSON round trips with
 * awkward strings and extreme numbers; CSV reader errors. */
#include <cjson/cJSON.h>
#include <math.h>

#include "common/date.h"
#include "test_result_util.h"

static const char *const AWKWARD[] = {
    "plain", "with, comma", "with \"quotes\"", "line\nbreak", "crlf\r\nend", "", " padded ",
    "\"", ",", "tab\there", "caf\xc3\xa9 \xe2\x82\xac", "trailing,", "\"\"", "a\\b", "\x01 ctl",
};
#define NAWK ((int)(sizeof AWKWARD / sizeof AWKWARD[0]))

/* Columns of every type, one row per awkward string. */
static void build_all(dkb_result *r) {
    static const char *const names[] = {"s", "i", "d", "f", "dt", "f2"};
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT, DKB_RES_DECIMAL,
                                         DKB_RES_FLOAT,  DKB_RES_DATE, DKB_RES_FLOAT};
    static const int scales[] = {0, 0, 4, 0, 0, 2};
    CHECK(dkb_result_init(r, 6, names, types, scales) == 0);
    static const int64_t ints[] = {0, -1, INT64_MIN, INT64_MAX, 42};
    static const double floats[] = {0.5, -0.0000001, 1e15, -123.456789, 3.0};
    static const double floats2[] = {1.5, -0.25, 1e6, -370.37, 9.99}; /* exact at scale 2 */
    static const int32_t dates[][3] = {{1970, 1, 1}, {1992, 1, 2}, {2000, 2, 29}, {9999, 12, 31}, {1998, 12, 1}};
    for (int i = 0; i < NAWK; i++) {
        int64_t row = dkb_result_add_row(r);
        CHECK(row == i);
        CHECK(dkb_result_set_str(r, row, 0, AWKWARD[i], strlen(AWKWARD[i])) == 0);
        dkb_result_set_int(r, row, 1, ints[i % 5]);
        __int128 big = (__int128)INT64_MAX * 1000000 + i;
        dkb_result_set_dec(r, row, 2, i % 3 == 0 ? -(__int128)i * 5 : i % 3 == 1 ? big : (__int128)i);
        dkb_result_set_float(r, row, 3, floats[i % 5]);
        dkb_result_set_date(r, row, 4, dkb__days_from_civil(dates[i % 5][0], dates[i % 5][1], dates[i % 5][2]));
        dkb_result_set_float(r, row, 5, floats2[i % 5]);
    }
    CHECK(r->nbad == 0);
}

static void test_build(void) {
    dkb_result r = {0};
    static const char *const names[] = {"a", "b"};
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_STRING};
    CHECK(dkb_result_init(&r, 0, names, types, NULL) == DKB_EINVAL);
    CHECK(dkb_result_init(&r, 2, NULL, types, NULL) == DKB_EINVAL);
    static const int bad_scale[] = {0, 31};
    CHECK(dkb_result_init(&r, 2, names, types, bad_scale) == DKB_EINVAL);
    dkb_result_free(&r); /* zeroed: fine */
    CHECK(dkb_result_init(&r, 2, names, types, NULL) == 0);
    for (int i = 0; i < 100000; i++) {
        int64_t row = dkb_result_add_row(&r);
        dkb_result_set_int(&r, row, 0, i);
        if (i % 1000 == 0) dkb_result_set_str(&r, row, 1, "x", 1);
    }
    CHECK(r.nrows == 100000 && r.cols[0].i64[99999] == 99999);
    CHECK(!strcmp(r.cols[1].str[1], "") && !strcmp(r.cols[1].str[1000], "x"));
    /* replacing a string frees the old one (ASan would see a leak) */
    CHECK(dkb_result_set_str(&r, 1000, 1, "yy", 2) == 0 && !strcmp(r.cols[1].str[1000], "yy"));
    CHECK(dkb_result_set_str(&r, 1000, 1, NULL, 0) == 0 && !strcmp(r.cols[1].str[1000], ""));
    /* misuse is ignored and counted, the first described */
    dkb_result_set_dec(&r, 0, 0, 5);
    dkb_result_set_int(&r, 100000, 0, 5);
    dkb_result_set_int(&r, 0, 7, 5);
    CHECK(dkb_result_set_str(&r, 0, 0, "x", 1) == DKB_EINVAL);
    dkb_sort_spec bad_key = {9, false};
    dkb_result_set_order(&r, 1, &bad_key);
    CHECK(r.nbad == 5 && r.norder == 0);
    CHECK(strstr(r.bad, "set_dec on INT column a") != NULL);
    dkb_result_free(&r);
    CHECK(r.ncols == 0 && r.cols == NULL && r.nbad == 0);
    dkb_result_free(NULL);
    CHECK(!strcmp(dkb_res_type_name(DKB_RES_DECIMAL), "DECIMAL") && !strcmp(dkb_res_type_name((dkb_res_type)9), "?"));
}

static void test_cell_text(void) {
    dkb_result r = {0};
    static const char *const names[] = {"d", "f", "g", "dt", "s"};
    static const dkb_res_type types[] = {DKB_RES_DECIMAL, DKB_RES_FLOAT, DKB_RES_FLOAT, DKB_RES_DATE, DKB_RES_STRING};
    static const int scales[] = {2, 2, 0, 0, 0};
    CHECK(dkb_result_init(&r, 5, names, types, scales) == 0);
    struct {
        __int128 d;
        double f;
        const char *dt, *f_text, *g_text, *d_text;
    } cases[] = {
        {-5, -0.001, "1992-01-01", "0.00", "-0.001000", "-0.05"},
        {0, 25.515, "1998-12-01", "25.52", "25.515000", "0.00"},
        {12345, NAN, "2000-02-29", "nan", "nan", "123.45"},
        {-100, -INFINITY, "1970-01-01", "-inf", "-inf", "-1.00"},
        {(__int128)1 << 100, 1e20, "1969-12-31", "100000000000000000000.00", "100000000000000000000.000000",
         "12676506002282294014967032053.76"},
    };
    char buf[128];
    for (int i = 0; i < 5; i++) {
        int64_t row = dkb_result_add_row(&r);
        dkb_result_set_dec(&r, row, 0, cases[i].d);
        dkb_result_set_float(&r, row, 1, cases[i].f);
        dkb_result_set_float(&r, row, 2, cases[i].f);
        int y, m, d;
        sscanf(cases[i].dt, "%d-%d-%d", &y, &m, &d);
        dkb_result_set_date(&r, row, 3, dkb__days_from_civil(y, m, d));
        dkb_result_cell_text(&r, row, 0, buf, sizeof buf);
        CHECK_STR(buf, cases[i].d_text);
        dkb_result_cell_text(&r, row, 1, buf, sizeof buf);
        CHECK_STR(buf, cases[i].f_text);
        dkb_result_cell_text(&r, row, 2, buf, sizeof buf);
        CHECK_STR(buf, cases[i].g_text);
        dkb_result_cell_text(&r, row, 3, buf, sizeof buf);
        CHECK_STR(buf, cases[i].dt);
    }
    dkb_result_set_str(&r, 0, 4, "abcdef", 6);
    dkb_result_cell_text(&r, 0, 4, buf, 4);
    CHECK_STR(buf, "abc");
    dkb_result_cell_text(&r, 9, 4, buf, sizeof buf);
    CHECK_STR(buf, "");
    dkb_result_free(&r);
}

/* The exact TABLE, CSV and JSON forms of a small result. */
static void test_formats(void) {
    dkb_result r = {0};
    static const char *const names[] = {"nation", "o_year", "sum_profit", "avg"};
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT, DKB_RES_DECIMAL, DKB_RES_FLOAT};
    static const int scales[] = {0, 0, 4, 2};
    CHECK(dkb_result_init(&r, 4, names, types, scales) == 0);
    const char *nat[] = {"ALGERIA", "UNITED, \"KINGDOM\""};
    for (int i = 0; i < 2; i++) {
        int64_t row = dkb_result_add_row(&r);
        dkb_result_set_str(&r, row, 0, nat[i], strlen(nat[i]));
        dkb_result_set_int(&r, row, 1, 1998 - i);
        dkb_result_set_dec(&r, row, 2, i ? -271369001800 : 5);
        dkb_result_set_float(&r, row, 3, i ? 25.5 : 0.125);
    }
    char *csv = print_to_string(&r, DKB_RES_FMT_CSV);
    CHECK_STR(csv, "nation,o_year,sum_profit,avg\n"
                   "ALGERIA,1998,0.0005,0.125\n" /* FLOATs with every digit, as DuckDB */
                   "\"UNITED, \"\"KINGDOM\"\"\",1997,-27136900.1800,25.5\n");
    char *table = print_to_string(&r, DKB_RES_FMT_TABLE);
    CHECK_STR(table, "nation            | o_year |     sum_profit |   avg\n"
                     "------------------+--------+----------------+------\n"
                     "ALGERIA           |   1998 |         0.0005 |  0.12\n"
                     "UNITED, \"KINGDOM\" |   1997 | -27136900.1800 | 25.50\n"
                     "(2 rows)\n");
    char *json = print_to_string(&r, DKB_RES_FMT_JSON);
    CHECK_STR(json, "{\"columns\": [{\"name\": \"nation\", \"type\": \"STRING\"}, {\"name\": \"o_year\", \"type\": "
                    "\"INT\"}, {\"name\": \"sum_profit\", \"type\": \"DECIMAL\", \"scale\": 4}, {\"name\": \"avg\", "
                    "\"type\": \"FLOAT\", \"scale\": 2}], \"rows\": [\n"
                    "  [\"ALGERIA\", 1998, 0.0005, 0.125],\n"
                    "  [\"UNITED, \\\"KINGDOM\\\"\", 1997, -27136900.1800, 25.5]\n"
                    "]}\n");
    free(csv);
    free(table);
    free(json);
    /* empty result */
    dkb_result e = {0};
    CHECK(dkb_result_init(&e, 4, names, types, scales) == 0);
    json = print_to_string(&e, DKB_RES_FMT_JSON);
    CHECK(strstr(json, "\"rows\": []}") != NULL);
    table = print_to_string(&e, DKB_RES_FMT_TABLE);
    CHECK(strstr(table, "(0 rows)") != NULL);
    free(json);
    free(table);
    CHECK(dkb_result_print(&e, (dkb_res_format)7, stdout) == DKB_EINVAL);
    dkb_result_free(&e);
    dkb_result_free(&r);
}

static void test_csv_roundtrip(void) {
    dkb_result r = {0}, back = {0};
    build_all(&r);
    char *csv = print_to_string(&r, DKB_RES_FMT_CSV);
    char *path = write_tmp(csv, ".csv");
    dkb_error err = {0};
    CHECK(dkb_result_read_csv(path, &r, &back, &err) == 0);
    if (err.code) fprintf(stderr, "read: %s\n", err.msg);
    CHECK(back.nrows == NAWK && back.cols[2].scale == 4 && back.cols[5].scale == 2);
    for (int i = 0; i < back.nrows && i < NAWK; i++) CHECK_STR(back.cols[0].str[i], AWKWARD[i]);
    for (int i = 0; i < back.nrows; i++) {
        CHECK(back.cols[1].i64[i] == r.cols[1].i64[i]);
        CHECK(back.cols[2].dec[i] == r.cols[2].dec[i]);
        CHECK(back.cols[4].date[i] == r.cols[4].date[i]);
    }
    dkb_compare_opts opts = {0, 0, 0, false}; /* FLOATs printed with every digit: exact */
    CHECK(dkb_result_compare(&back, &r, &opts, &err) == 0);
    if (err.code) fprintf(stderr, "compare: %s\n", err.msg);
    /* printing the read result gives the same bytes */
    char *again = print_to_string(&back, DKB_RES_FMT_CSV);
    CHECK_STR(again, csv);
    free(again);
    dkb_result_free(&back);
    unlink(path);
    free(path);

    /* CRLF line ends, a byte order mark, no final newline */
    char *crlf = malloc(strlen(csv) * 2 + 8);
    size_t k = 0;
    memcpy(crlf, "\xef\xbb\xbf", 3), k = 3;
    int inq = 0;
    for (const char *p = csv; *p; p++) {
        if (*p == '"') inq = !inq;
        if (*p == '\n' && !inq) crlf[k++] = '\r';
        crlf[k++] = *p;
    }
    crlf[k - 2] = 0; /* drop the last \r\n */
    path = write_tmp(crlf, ".csv");
    CHECK(dkb_result_read_csv(path, &r, &back, &err) == 0);
    if (err.code) fprintf(stderr, "read crlf: %s\n", err.msg);
    CHECK(back.nrows == NAWK);
    for (int i = 0; i < back.nrows && i < NAWK; i++) CHECK_STR(back.cols[0].str[i], AWKWARD[i]);
    dkb_result_free(&back);
    unlink(path);
    free(path);
    free(crlf);
    free(csv);
    dkb_result_free(&r);
}

static void test_json_roundtrip(void) {
    dkb_result r = {0};
    build_all(&r);
    dkb_result_set_float(&r, 1, 3, NAN);
    char *json = print_to_string(&r, DKB_RES_FMT_JSON);
    cJSON *doc = cJSON_Parse(json);
    CHECK(doc != NULL);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows"), *cols = cJSON_GetObjectItem(doc, "columns");
    CHECK(cJSON_GetArraySize(rows) == NAWK && cJSON_GetArraySize(cols) == 6);
    CHECK(!strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 2), "type")->valuestring, "DECIMAL"));
    for (int i = 0; i < NAWK && rows; i++) {
        cJSON *row = cJSON_GetArrayItem(rows, i);
        CHECK_STR(cJSON_GetArrayItem(row, 0)->valuestring, AWKWARD[i]);
        CHECK(cJSON_IsNumber(cJSON_GetArrayItem(row, 1)));
        char buf[64];
        dkb_result_cell_text(&r, i, 4, buf, sizeof buf);
        CHECK_STR(cJSON_GetArrayItem(row, 4)->valuestring, buf);
        if (i == 1) CHECK(cJSON_IsNull(cJSON_GetArrayItem(row, 3)));
        else CHECK(fabs(cJSON_GetArrayItem(row, 3)->valuedouble - r.cols[3].f64[i]) <= 1e-6 + 1e-12 * fabs(r.cols[3].f64[i]));
    }
    /* DECIMAL cells are exact in the text */
    CHECK(strstr(json, "922337203685477580700.0001") != NULL);
    cJSON_Delete(doc);
    free(json);
    dkb_result_free(&r);
}

/* A CSV with column types (like) and DuckDB-style numbers. */
static void test_csv_read(void) {
    dkb_result like = {0}, out = {0};
    static const char *const names[] = {"k", "amount", "ratio", "day", "name"};
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_DECIMAL, DKB_RES_FLOAT, DKB_RES_DATE, DKB_RES_STRING};
    static const int scales[] = {0, 2, 2, 0, 0};
    CHECK(dkb_result_init(&like, 5, names, types, scales) == 0);
    dkb_sort_spec key = {1, true};
    dkb_result_set_order(&like, 1, &key);
    dkb_error err = {0};
    char *p = write_tmp("k,amount,ratio,day,name\n"
                        "1,1.5,3.4435893964335e-02,1995-03-15,a\n"
                        "-2,2.25,1E3,1992-01-01,\"\"\n"
                        "3,-3,inf,1998-08-02,x\n"
                        "4,1.5e-3,0,2000-01-01,y\n",
                        ".csv");
    CHECK(dkb_result_read_csv(p, &like, &out, &err) == 0);
    if (err.code) fprintf(stderr, "read: %s\n", err.msg);
    CHECK(out.nrows == 4 && out.cols[1].scale == 4 && out.norder == 1 && out.order[0].desc);
    if (out.nrows == 4) {
        CHECK(out.cols[1].dec[0] == 15000 && out.cols[1].dec[1] == 22500 && out.cols[1].dec[2] == -30000 &&
              out.cols[1].dec[3] == 15);
        CHECK(out.cols[0].i64[1] == -2 && fabs(out.cols[2].f64[0] - 0.034435893964335) < 1e-15);
        CHECK(out.cols[2].f64[1] == 1000 && isinf(out.cols[2].f64[2]) && out.cols[2].f64[3] == 0);
        CHECK(!strcmp(out.cols[4].str[1], "") && out.cols[3].date[0] == dkb__days_from_civil(1995, 3, 15));
    }
    dkb_result_free(&out);
    unlink(p);
    free(p);

    struct {
        const char *text, *want;
        int code;
    } bad[] = {
        {"", "empty file", DKB_EPARSE},
        {"\n\n", ":1: header has 1 column, expected 5", DKB_EPARSE},
        {"\n", "empty file", DKB_EPARSE},
        {"k,amount,ratio,day\n", "header has 4 columns, expected 5", DKB_EPARSE},
        {"k,amount,ratio,day,nam\n", ":1: column 5 is named 'nam', expected 'name'", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-01-01\n", ":2: 4 fields, expected 5", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-01-01,a,b\n", ":2: 6 fields, expected 5", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-01-01,a\nx,2,3,1995-01-01,a\n",
         ":3: column k: 'x' is not an integer", DKB_EPARSE},
        {"k,amount,ratio,day,name\n99999999999999999999,2,3,1995-01-01,a\n", "column k: '99999999999999999999' is not an integer",
         DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,1.2.3,3,1995-01-01,a\n", "column amount: '1.2.3' is not an exact decimal",
         DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,\"\",3,1995-01-01,a\n", "column amount: '' is not an exact decimal", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,abc,1995-01-01,a\n", "column ratio: 'abc' is not a number", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-02-29,a\n", "column day: '1995-02-29' is not a date (YYYY-MM-DD)",
         DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-1-01,a\n", "column day: '1995-1-01' is not a date", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-01-01,\"abc\n", ":2: unterminated quoted field", DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-01-01,\"abc\"x\n", ":2: unexpected character after a closing quote",
         DKB_EPARSE},
        {"k,amount,ratio,day,name\n1,2,3,1995-01-01,\"multi\nline\"\n1,2,3,1995-01-01\n", ":4: 4 fields", DKB_EPARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = write_tmp(bad[i].text, ".csv");
        memset(&err, 0, sizeof err);
        out.nbad = 77;
        CHECK_ERR(dkb_result_read_csv(p, &like, &out, &err), bad[i].code, err, bad[i].want);
        CHECK(strstr(err.msg, p) == err.msg); /* names the file first */
        CHECK(out.ncols == 0 && out.cols == NULL && out.nbad == 0);
        unlink(p);
        free(p);
    }
    CHECK_ERR(dkb_result_read_csv("/nonexistent/x.csv", &like, &out, &err), DKB_ENOENT, err,
              "/nonexistent/x.csv: No such file");
    dkb_result_free(&like);
}

/* NULL cells: setting, clearing, growth, printing, reading back, comparing. */
static void test_nulls(void) {
    dkb_result r = {0}, back = {0};
    static const char *const names[] = {"s", "i", "d", "f", "dt"};
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT, DKB_RES_DECIMAL, DKB_RES_FLOAT, DKB_RES_DATE};
    static const int scales[] = {0, 0, 2, 2, 0};
    CHECK(dkb_result_init(&r, 5, names, types, scales) == 0);
    for (int i = 0; i < 3; i++) {
        int64_t row = dkb_result_add_row(&r);
        dkb_result_set_str(&r, row, 0, "", 0); /* empty string, not NULL */
        dkb_result_set_int(&r, row, 1, i);
        dkb_result_set_dec(&r, row, 2, i * 100);
        dkb_result_set_float(&r, row, 3, i / 4.0);
        dkb_result_set_date(&r, row, 4, i);
    }
    for (int c = 0; c < 5; c++) CHECK(dkb_result_set_null(&r, 1, c) == 0 && dkb_result_is_null(&r, 1, c));
    CHECK(dkb_result_set_null(&r, 3, 0) == DKB_EINVAL && r.nbad == 1);
    r.nbad = 0;
    CHECK(!dkb_result_is_null(&r, 0, 0) && !dkb_result_is_null(&r, 9, 0) && !dkb_result_is_null(NULL, 0, 0));
    for (int i = 0; i < 40; i++) dkb_result_add_row(&r); /* the NULL flags grow, new rows not NULL */
    CHECK(!dkb_result_is_null(&r, 42, 3) && dkb_result_is_null(&r, 1, 3));
    dkb_result_set_null(&r, 2, 1);
    dkb_result_set_int(&r, 2, 1, 7); /* a value clears NULL */
    CHECK(!dkb_result_is_null(&r, 2, 1));
    r.nrows = 3;
    char *csv = print_to_string(&r, DKB_RES_FMT_CSV);
    CHECK_STR(csv, "s,i,d,f,dt\n\"\",0,0.00,0,1970-01-01\n,,,,\n\"\",7,2.00,0.5,1970-01-03\n");
    char *json = print_to_string(&r, DKB_RES_FMT_JSON);
    CHECK(strstr(json, "[null, null, null, null, null]") != NULL);
    char *table = print_to_string(&r, DKB_RES_FMT_TABLE);
    CHECK(strstr(table, "\nNULL | NULL | NULL | NULL | NULL\n") != NULL);
    char *p = write_tmp(csv, ".csv");
    dkb_error err = {0};
    CHECK(dkb_result_read_csv(p, &r, &back, &err) == 0);
    for (int c = 0; c < 5; c++) CHECK(dkb_result_is_null(&back, 1, c) && !dkb_result_is_null(&back, 0, c));
    CHECK(!strcmp(back.cols[0].str[0], ""));
    CHECK(dkb_result_compare(&back, &r, NULL, &err) == 0);
    /* NULL against a value; a FLOAT NaN counts as NULL */
    dkb_result_set_int(&back, 1, 1, 0);
    CHECK_ERR(dkb_result_compare(&back, &r, NULL, &err), DKB_EINVAL, err, "row 2, column i: got 0, expected NULL");
    dkb_result_set_null(&back, 1, 1);
    dkb_result_set_float(&back, 1, 3, NAN);
    CHECK(dkb_result_compare(&back, &r, NULL, &err) == 0);
    dkb_result_set_float(&back, 0, 3, NAN);
    CHECK_ERR(dkb_result_compare(&back, &r, NULL, &err), DKB_EINVAL, err, "row 1, column f: got nan, expected 0");
    unlink(p);
    free(p);
    free(csv);
    free(json);
    free(table);
    dkb_result_free(&back);
    dkb_result_free(&r);

    /* one column: the empty line before the final newline is a NULL row */
    static const char *const one[] = {"revenue"};
    static const dkb_res_type dec[] = {DKB_RES_DECIMAL};
    CHECK(dkb_result_init(&r, 1, one, dec, NULL) == 0);
    struct {
        const char *text;
        int64_t rows, nulls;
    } cases[] = {{"revenue", 0, 0},          {"revenue\n", 0, 0},       {"revenue\n\n", 1, 1},
                 {"revenue\r\n\r\n", 1, 1}, {"revenue\n\n\n", 2, 2}, {"revenue\n1.5\n\n2\n", 3, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p = write_tmp(cases[i].text, ".csv");
        CHECK(dkb_result_read_csv(p, &r, &back, &err) == 0);
        int64_t nulls = 0;
        for (int64_t k = 0; k < back.nrows; k++) nulls += dkb_result_is_null(&back, k, 0);
        if (back.nrows != cases[i].rows || nulls != cases[i].nulls) {
            fprintf(stderr, "case %zu: %lld rows, %lld NULL\n", i, (long long)back.nrows, (long long)nulls);
            failures++;
        }
        dkb_result_free(&back);
        unlink(p);
        free(p);
    }
    /* what dkb writes for a NULL row reads back as one */
    dkb_result_add_row(&r);
    dkb_result_set_null(&r, 0, 0);
    csv = print_to_string(&r, DKB_RES_FMT_CSV);
    CHECK_STR(csv, "revenue\n\n");
    free(csv);
    dkb_result_free(&r);
}

/* CSV and JSON print a FLOAT in plain decimal with the shortest digits that
 * read back as the same double (DuckDB's text, tools/oracle/lib.mjs
 * doubleText): no exponent, no rounding to the column's scale. */
static void test_float_plain(void) {
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {25.575154611454693, "25.575154611454693"}, {0.1 + 0.2, "0.30000000000000004"},
        {1e21, "1000000000000000000000"},             {1e-7, "0.0000001"},
        {-1.5e-10, "-0.00000000015"},                 {3.0, "3"},
        {-0.0, "0"},                                  {0.0, "0"},
        {348406.0542857143, "348406.0542857143"},     {1e23, "100000000000000000000000"},
        {123456789012345680.0, "123456789012345680"}, {5e-324, NULL}, {-1.7976931348623157e308, NULL},
    };
    static const char *const names[] = {"f"};
    static const dkb_res_type types[] = {DKB_RES_FLOAT};
    static const int scales[] = {6};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dkb_result r = {0};
        CHECK(dkb_result_init(&r, 1, names, types, scales) == 0);
        int64_t row = dkb_result_add_row(&r);
        dkb_result_set_float(&r, row, 0, cases[k].v);
        char *csv = print_to_string(&r, DKB_RES_FMT_CSV);
        const char *cell = csv + 2; /* after "f\n" */
        CHECK(!strchr(cell, 'e') && !strchr(cell, 'E'));
        CHECK(strtod(cell, NULL) == cases[k].v);
        if (cases[k].text) {
            char want[64];
            snprintf(want, sizeof want, "f\n%s\n", cases[k].text);
            CHECK_STR(csv, want);
        }
        free(csv);
        dkb_result_free(&r);
    }
}

int main(void) {
    test_build();
    test_cell_text();
    test_formats();
    test_float_plain();
    test_csv_roundtrip();
    test_json_roundtrip();
    test_csv_read();
    test_nulls();
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("test_result: ok\n");
    return failures != 0;
}
