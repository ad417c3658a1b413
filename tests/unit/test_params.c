/* test_params.c: query parameters on a fake query: drawing, every override
 * form and rejection message, malformed draws, the text forms, SQL
 * substitution (longest names, casts, quotes); the registry's name
 * parsing; tensor sets; and dkb_query_run's step and error handling on a
 * tiny generated store (nation and region). */
#include <ftw.h>

#include "common/date.h"
#include "driver/gen_driver.h"
#include "dkb/query.h"
#include "queries/qgen.h"
#include "test_result_util.h"

/* ---- a fake query ---- */

static const dkb_param_def fake_params[] = {
    {"date", DKB_PARAM_DATE, 0, "a date"},       {"discount", DKB_PARAM_DECIMAL, 2, "a decimal"},
    {"quantity", DKB_PARAM_INT, 0, "an integer"}, {"size", DKB_PARAM_INT, 0, "a size"},
    {"size1", DKB_PARAM_INT, 0, "another size"}, {"type", DKB_PARAM_STRING, 0, "a string"},
};

static void fake_draw(uint64_t seed, double sf, dkb_params *out) {
    if (seed == 0) {
        dkb__qgen_put_date(out, "date", 1994, 1, 1);
        dkb__qgen_put_dec(out, "discount", 2, 6);
        dkb__qgen_put_int(out, "quantity", (int64_t)(24 / sf));
        dkb__qgen_put_int(out, "size", 15);
        dkb__qgen_put_int(out, "size1", 3);
        dkb__qgen_put_str(out, "type", "BRASS");
        return;
    }
    dkb__qgen g;
    dkb__qgen_init(&g, seed, 99);
    dkb__qgen_put_days(out, "date", dkb__qgen_year(&g, 1993, 1997));
    dkb__qgen_put_dec(out, "discount", 2, dkb__qgen_int(&g, 2, 9));
    dkb__qgen_put_int(out, "quantity", dkb__qgen_int(&g, 24, 25));
    dkb__qgen_put_int(out, "size", dkb__qgen_int(&g, 1, 50));
    dkb__qgen_put_int(out, "size1", dkb__qgen_int(&g, 1, 50));
    dkb__qgen_put_str(out, "type", dkb__qgen_pick(&g, dkb__qgen_type_syl3, 5));
}

static int fake_check(const dkb_params *p, dkb_error *err) {
    if (dkb_params_get(p, "quantity")->i < 0)
        return dkb_fail(err, DKB_EINVAL, "q99: quantity %lld is negative", (long long)dkb_params_get(p, "quantity")->i);
    return 0;
}

static const dkb_query fake = {
    .number = 99,
    .name = "q99",
    .title = "Fake",
    .sql = "select :date, date ':date', :discount - 0.01, :quantity, :size, :size1, :size10, :sizes, "
           "':type', x::date, '10:30', :unknown, :type_x, p_type like '%:type' :;",
    .nparams = 6,
    .params = fake_params,
    .draw = fake_draw,
    .check = fake_check,
};

/* params(overrides...) must fail with code and a message containing want */
static void reject(const char *const *ov, int n, int code, const char *want) {
    dkb_params p;
    dkb_error err = {0};
    CHECK_ERR(dkb_query_params(&fake, 0, 1, ov, n, &p, &err), code, err, want);
}
#define REJECT1(o, want) reject((const char *const[]){o}, 1, DKB_EINVAL, want)

static void text_of(const dkb_params *p, const char *name, char *buf) {
    dkb_param_text(dkb_params_get(p, name), buf, 64);
}

static void test_overrides(void) {
    dkb_params p;
    dkb_error err = {0};
    char buf[64];
    CHECK(dkb_query_params(&fake, 0, 1, NULL, 0, &p, &err) == 0);
    CHECK(p.n == 6);
    text_of(&p, "date", buf);
    CHECK_STR(buf, "1994-01-01");
    text_of(&p, "discount", buf);
    CHECK_STR(buf, "0.06");
    text_of(&p, "quantity", buf);
    CHECK_STR(buf, "24");
    text_of(&p, "type", buf);
    CHECK_STR(buf, "BRASS");
    CHECK(dkb_params_get(&p, "nope") == NULL && dkb_params_get(NULL, "date") == NULL);
    /* sf reaches the draw */
    CHECK(dkb_query_params(&fake, 0, 0.5, NULL, 0, &p, &err) == 0 && dkb_params_get(&p, "quantity")->i == 48);

    /* accepted forms */
    const char *ok[] = {"date=1996-02-29", "discount=.07", "quantity=-0", "size=+7", "type=ECONOMY ANODIZED STEEL",
                        "size1=0"};
    CHECK(dkb_query_params(&fake, 0, 1, ok, 6, &p, &err) == 0);
    if (err.code) fprintf(stderr, "%s\n", err.msg);
    CHECK(dkb_params_get(&p, "date")->i == dkb__days_from_civil(1996, 2, 29));
    CHECK(dkb_params_get(&p, "discount")->i == 7 && dkb_params_get(&p, "size")->i == 7);
    CHECK_STR(dkb_params_get(&p, "type")->s, "ECONOMY ANODIZED STEEL");
    struct {
        const char *text;
        int64_t v;
    } decs[] = {{"0.06", 6}, {"1", 100}, {"1.", 100}, {"-0.5", -50}, {"0.060", 6}, {"+2.10", 210}, {"00.01", 1}};
    for (size_t i = 0; i < sizeof decs / sizeof decs[0]; i++) {
        char o[32];
        snprintf(o, sizeof o, "discount=%s", decs[i].text);
        const char *ov[] = {o};
        CHECK(dkb_query_params(&fake, 0, 1, ov, 1, &p, &err) == 0 && dkb_params_get(&p, "discount")->i == decs[i].v);
    }
    /* a string of exactly DKB_PARAM_STRLEN - 1 bytes is fine, one more is not */
    char longs[80] = "type=";
    memset(longs + 5, 'x', DKB_PARAM_STRLEN - 1);
    const char *ov[] = {longs};
    CHECK(dkb_query_params(&fake, 0, 1, ov, 1, &p, &err) == 0);
    strcat(longs, "x");
    REJECT1(longs, "q99: parameter type: value longer than 47 bytes");
    const char *empty_type[] = {"type="};
    CHECK(dkb_query_params(&fake, 0, 1, empty_type, 1, &p, &err) == 0 && !p.v[5].s[0]);

    /* rejections, one line each */
    REJECT1("foo=1", "q99: unknown parameter 'foo' (parameters: date, discount, quantity, size, size1, type)");
    REJECT1("Date=1994-01-01", "unknown parameter 'Date'");
    REJECT1("size2=1", "unknown parameter 'size2'");
    REJECT1("siz=1", "unknown parameter 'siz'");
    REJECT1("foo", "q99: parameter override 'foo' is not NAME=VALUE");
    REJECT1("=5", "q99: parameter override '=5' is not NAME=VALUE");
    REJECT1("date=1994-13-01", "q99: parameter date: '1994-13-01' is not a date (YYYY-MM-DD)");
    REJECT1("date=1995-02-29", "q99: parameter date: '1995-02-29' is not a date");
    REJECT1("date=94-01-01", "'94-01-01' is not a date");
    REJECT1("date=1994-01-01x", "'1994-01-01x' is not a date");
    REJECT1("date=0994-01-01", "'0994-01-01' is not a date");
    REJECT1("date=", "q99: parameter date: '' is not a date");
    REJECT1("discount=0.065", "q99: parameter discount: '0.065' has more than 2 digits after the point");
    REJECT1("discount=abc", "q99: parameter discount: 'abc' is not a decimal number (e.g. 0.06)");
    REJECT1("discount=1e-2", "'1e-2' is not a decimal number");
    REJECT1("discount=0.0.6", "'0.0.6' is not a decimal number");
    REJECT1("discount=.", "'.' is not a decimal number");
    REJECT1("discount=-", "'-' is not a decimal number");
    REJECT1("discount=1-2", "'1-2' is not a decimal number");
    REJECT1("discount=", "'' is not a decimal number");
    REJECT1("discount=99999999999999999999", "q99: parameter discount: '99999999999999999999' is too large");
    REJECT1("quantity=x", "q99: parameter quantity: 'x' is not an integer");
    REJECT1("quantity=1.5", "'1.5' is not an integer");
    REJECT1("quantity=", "'' is not an integer");
    REJECT1("quantity=99999999999999999999", "'99999999999999999999' is not an integer");
    REJECT1("type=a\tb", "q99: parameter type: control character in the value");
    REJECT1("quantity=-1", "q99: quantity -1 is negative"); /* the query's check */
    reject((const char *const[]){"date=1994-01-01", "size=3", "date=1995-01-01"}, 3, DKB_EINVAL,
           "q99: parameter date given twice");
    reject(NULL, 1, DKB_EINVAL, "missing query");
    dkb_params p2;
    CHECK_ERR(dkb_query_params(&fake, 0, 0, NULL, 0, &p2, &err), DKB_EINVAL, err, "q99: scale factor must be positive");
    CHECK_ERR(dkb_query_params(&fake, 0, -1, NULL, 0, &p2, &err), DKB_EINVAL, err, "scale factor must be positive");
    CHECK_ERR(dkb_query_params(&fake, 0, 0.0 / 0.0, NULL, 0, &p2, &err), DKB_EINVAL, err, "scale factor");
    CHECK_ERR(dkb_query_params(NULL, 0, 1, NULL, 0, &p2, &err), DKB_EINVAL, err, "missing query");
}

/* ---- malformed draws are internal errors ---- */

static void draw_short(uint64_t seed, double sf, dkb_params *out) {
    (void)seed, (void)sf;
    dkb__qgen_put_date(out, "date", 1994, 1, 1);
}
static void draw_kind(uint64_t seed, double sf, dkb_params *out) {
    fake_draw(seed, sf, out);
    out->v[2].kind = DKB_PARAM_STRING;
}
static void draw_scale(uint64_t seed, double sf, dkb_params *out) {
    fake_draw(seed, sf, out);
    out->v[1].scale = 3;
}
static void draw_order(uint64_t seed, double sf, dkb_params *out) {
    fake_draw(seed, sf, out);
    dkb_param_value t = out->v[3];
    out->v[3] = out->v[4];
    out->v[4] = t;
}

static void test_bad_draws(void) {
    dkb_query q = fake;
    dkb_params p;
    dkb_error err = {0};
    q.draw = draw_short;
    CHECK_ERR(dkb_query_params(&q, 0, 1, NULL, 0, &p, &err), DKB_EINTERNAL, err,
              "q99: the parameter draw put 1 values, the query has 6 parameters");
    q.draw = draw_kind;
    CHECK_ERR(dkb_query_params(&q, 0, 1, NULL, 0, &p, &err), DKB_EINTERNAL, err,
              "put STRING 'quantity' (scale 0) where parameter 3 is INT 'quantity'");
    q.draw = draw_scale;
    CHECK_ERR(dkb_query_params(&q, 7, 1, NULL, 0, &p, &err), DKB_EINTERNAL, err,
              "put DECIMAL 'discount' (scale 3) where parameter 2 is DECIMAL 'discount' (scale 2)");
    q.draw = draw_order;
    CHECK_ERR(dkb_query_params(&q, 0, 1, NULL, 0, &p, &err), DKB_EINTERNAL, err, "put INT 'size1'");
    q.draw = NULL;
    CHECK_ERR(dkb_query_params(&q, 0, 1, NULL, 0, &p, &err), DKB_EINTERNAL, err, "q99: malformed parameter table");
}

static void test_seeds(void) {
    dkb_params a, b;
    dkb_error err = {0};
    int differ = 0, years[5] = {0};
    for (uint64_t seed = 1; seed <= 500; seed++) {
        CHECK(dkb_query_params(&fake, seed, 1, NULL, 0, &a, &err) == 0);
        CHECK(dkb_query_params(&fake, seed, 1, NULL, 0, &b, &err) == 0);
        CHECK(!memcmp(&a, &b, sizeof a)); /* reproducible */
        int y, m, d;
        dkb__civil_from_days((int32_t)a.v[0].i, &y, &m, &d);
        CHECK(y >= 1993 && y <= 1997 && m == 1 && d == 1);
        if (y >= 1993 && y <= 1997) years[y - 1993]++;
        CHECK(a.v[1].i >= 2 && a.v[1].i <= 9 && a.v[2].i >= 24 && a.v[2].i <= 25);
        differ += a.v[3].i != 15;
    }
    for (int i = 0; i < 5; i++) CHECK(years[i] > 50); /* every year drawn, roughly uniformly */
    CHECK(differ > 400);
}

static void test_text_and_sql(void) {
    dkb_params p;
    dkb_error err = {0};
    const char *ov[] = {"type=O'Brien", "discount=-0.05", "size=7"};
    CHECK(dkb_query_params(&fake, 0, 1, ov, 3, &p, &err) == 0);
    char *sql = dkb_query_sql(&fake, &p);
    CHECK_STR(sql, "select 1994-01-01, date '1994-01-01', -0.05 - 0.01, 24, 7, 3, :size10, :sizes, 'O''Brien', "
                   "x::date, '10:30', :unknown, :type_x, p_type like '%O''Brien' :;");
    free(sql);
    CHECK(dkb_query_sql(NULL, &p) == NULL);
    dkb_query nosql = fake;
    nosql.sql = NULL;
    CHECK(dkb_query_sql(&nosql, &p) == NULL);
    /* text forms */
    char buf[64];
    dkb_param_value v = {.name = "f", .kind = DKB_PARAM_DECIMAL, .scale = 10, .i = 1000000};
    dkb_param_text(&v, buf, sizeof buf);
    CHECK_STR(buf, "0.0001000000");
    v.scale = 0, v.i = -42;
    dkb_param_text(&v, buf, sizeof buf);
    CHECK_STR(buf, "-42");
    v.kind = DKB_PARAM_DATE, v.i = 0;
    dkb_param_text(&v, buf, sizeof buf);
    CHECK_STR(buf, "1970-01-01");
    dkb_param_text(NULL, buf, sizeof buf);
    CHECK_STR(buf, "");
    CHECK(!strcmp(dkb_param_kind_name(DKB_PARAM_DECIMAL), "DECIMAL") && !strcmp(dkb_param_kind_name(9), "?"));
}

static void test_registry(void) {
    struct {
        const char *name;
        int n;
    } cases[] = {{"q06", 6}, {"Q6", 6}, {"6", 6}, {"06", 6}, {"q22", 22}, {"1", 1}, {"q1", 1},
                 {"q23", 0}, {"q0", 0}, {"0", 0}, {"q", 0}, {"", 0}, {"q006", 0}, {"x6", 0},
                 {"6a", 0},  {"-6", 0}, {" 6", 0}, {"all", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (dkb_query_number(cases[i].name) != cases[i].n) {
            fprintf(stderr, "dkb_query_number(\"%s\") = %d, expected %d\n", cases[i].name,
                    dkb_query_number(cases[i].name), cases[i].n);
            failures++;
        }
    }
    CHECK(dkb_query_number(NULL) == 0 && dkb_query_get(0) == NULL && dkb_query_get(23) == NULL);
    CHECK(dkb_query_find("q23") == NULL && dkb_query_find(NULL) == NULL);
    for (int n = 1; n <= 22; n++) {
        const dkb_query *q = dkb_query_get(n);
        if (!q) continue; /* not linked: test_params_queries reports it */
        char name[8];
        snprintf(name, sizeof name, "q%02d", n);
        CHECK(q->number == n && !strcmp(q->name, name) && dkb_query_find(name) == q);
    }
}

/* ---- tensor sets and dkb_query_run on a generated nation/region store ---- */

static void test_sets(dkb_tp *tp, const dkb_store *db) {
    dkb_tensor_set s;
    memset(&s, 0, sizeof s);
    dkb_error err = {0};
    int64_t v3[] = {1, 2, 3};
    dkb_tensor *a = dkb_tp_from_host(tp, DKB_TP_I64, 3, v3), *b = dkb_tp_arange(tp, 5);
    dkb_set_put(tp, &s, "a", a);
    dkb_set_put(tp, &s, "b", b);
    dkb_set_put(tp, &s, "a", b); /* replaces */
    CHECK(s.n == 2 && dkb_set_get(tp, &s, "a") == b);
    dkb_set_put(tp, &s, "failed", NULL);
    CHECK(dkb_set_get(tp, &s, "failed") == NULL && dkb_tp_status(tp, NULL) == 0);
    dkb_set_put_i64(tp, &s, "lo", -7);
    dkb_set_put_f64(tp, &s, "frac", 0.25);
    char pattern[] = "%BRASS";
    dkb_set_put_str(tp, &s, "like", pattern);
    pattern[0] = 'X'; /* the set holds a copy */
    CHECK(dkb_set_get_i64(tp, &s, "lo") == -7 && dkb_set_get_f64(tp, &s, "lo") == -7.0);
    CHECK(dkb_set_get_f64(tp, &s, "frac") == 0.25);
    CHECK_STR(dkb_set_get_str(tp, &s, "like"), "%BRASS");
    dkb_set_put_i64(tp, &s, "lo", 9);
    CHECK(s.nscalar == 3 && dkb_set_get_i64(tp, &s, "lo") == 9);
    CHECK(dkb_tp_status(tp, NULL) == 0);
    /* errors are sticky in tp */
    CHECK(dkb_set_get(tp, &s, "nope") == NULL);
    CHECK_ERR(dkb_tp_status(tp, &err), DKB_EINVAL, err, "tensor set has no tensor 'nope'");
    dkb_tp_reset(tp);
    CHECK(dkb_set_get_i64(tp, &s, "nope") == 0);
    CHECK_ERR(dkb_tp_status(tp, &err), DKB_EINVAL, err, "tensor set has no scalar 'nope'");
    dkb_tp_reset(tp);
    CHECK(dkb_set_get_str(tp, &s, "frac") == NULL);
    CHECK_ERR(dkb_tp_status(tp, &err), DKB_EINVAL, err, "tensor set scalar 'frac' is not a string");
    dkb_tp_reset(tp);
    memset(&s, 0, sizeof s);
    static const char *const names[] = {"t0",  "t1",  "t2",  "t3",  "t4",  "t5",  "t6",  "t7",  "t8",
                                        "t9",  "t10", "t11", "t12", "t13", "t14", "t15", "t16", "t17",
                                        "t18", "t19", "t20", "t21", "t22", "t23", "t24", "t25", "t26",
                                        "t27", "t28", "t29", "t30", "t31", "t32"};
    for (int i = 0; i < DKB_SET_MAX; i++) dkb_set_put(tp, &s, names[i], NULL);
    CHECK(dkb_tp_status(tp, NULL) == 0);
    dkb_set_put(tp, &s, names[DKB_SET_MAX], NULL);
    CHECK_ERR(dkb_tp_status(tp, &err), DKB_EINVAL, err, "tensor set full (32 tensors) putting 't32'");
    dkb_tp_reset(tp);
    /* store columns */
    memset(&s, 0, sizeof s);
    dkb_tensor *t = dkb_set_put_column(tp, &s, db, "nation", "n_name");
    CHECK(t && t->n == 25 && s.n == 1 && !strcmp(s.name[0], "n_name") && dkb_tp_status(tp, NULL) == 0);
    CHECK(dkb_set_put_column(tp, &s, db, "lineitem", "l_tax") == NULL);
    CHECK_ERR(dkb_tp_status(tp, &err), DKB_ENOENT, err, "has no table lineitem");
    dkb_tp_reset(tp);
    CHECK(dkb_set_put_column(tp, &s, db, "nation", "n_nope") == NULL);
    CHECK_ERR(dkb_tp_status(tp, &err), DKB_ENOENT, err, "has no column nation.n_nope");
    dkb_tp_reset(tp);
}

/* A fake plan: nations per region (in order of first appearance); `mode` breaks
 * one step to test the error paths. */
static int mode;
static int count_prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    (void)p;
    dkb_set_put_column(tp, in, db, "nation", "n_regionkey");
    dkb_set_put_column(tp, in, db, mode == 1 ? "lineitem" : "region", "r_name");
    return mode == 2 ? DKB_ERANGE : 0;
}
static int count_core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    const dkb_tensor *key = dkb_set_get(tp, in, "n_regionkey");
    dkb_groups g = dkb_tp_group(tp, &key, 1);
    dkb_set_put(tp, out, "region", dkb_tp_gather(tp, key, g.first_row, 0));
    dkb_set_put(tp, out, "count", dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, key));
    dkb_set_put(tp, out, "names", dkb_set_get(tp, in, "r_name"));
    if (mode == 3) dkb_tp_fail(tp, DKB_EINVAL, "core failed on purpose");
    return dkb_tp_status(tp, NULL);
}
static int count_finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    static const char *const names[] = {"region", "nations"};
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT};
    if (dkb_result_init(res, 2, names, types, NULL)) return DKB_ENOMEM;
    const dkb_tensor *region = dkb_set_get(tp, out, "region"), *count = dkb_set_get(tp, out, "count");
    const dkb_tensor *rname = dkb_set_get(tp, out, "names");
    for (int64_t i = 0; region && count && rname && i < region->n; i++) {
        int64_t row = dkb_result_add_row(res);
        int code = (int)dkb_tp_get_i64(tp, rname, dkb_tp_get_i64(tp, region, i));
        dkb_result_set_str(res, row, 0, rname->dict->str[code], rname->dict->len[code]);
        dkb_result_set_int(res, row, mode == 4 ? 0 : 1, dkb_tp_get_i64(tp, count, i));
    }
    return dkb_tp_status(tp, NULL);
}

static void test_run(dkb_tp *tp, const dkb_store *db) {
    dkb_query q = fake;
    q.prepare = count_prepare;
    q.core = count_core;
    q.finish = count_finish;
    dkb_params p;
    dkb_error err = {0};
    dkb_result res = {0};
    CHECK(dkb_query_params(&q, 0, 1, NULL, 0, &p, &err) == 0);
    mode = 0;
    CHECK(dkb_query_run(&q, tp, db, &p, &res, &err) == 0);
    if (err.code) fprintf(stderr, "run: %s\n", err.msg);
    char *csv = print_to_string(&res, DKB_RES_FMT_CSV);
    CHECK_STR(csv, "region,nations\nAFRICA,5\nAMERICA,5\nMIDDLE EAST,5\nEUROPE,5\nASIA,5\n");
    free(csv);
    dkb_result_free(&res);
    dkb_tp_reset(tp);
    struct {
        int mode, code;
        const char *want;
    } bad[] = {
        {1, DKB_ENOENT, "q99 prepare: store "},
        {2, DKB_ERANGE, "q99 prepare: failed (DKB_ERANGE)"},
        {3, DKB_EINVAL, "q99 core: core failed on purpose"},
        {4, DKB_EINTERNAL, "q99 finish: 5 bad result cell writes (first: set_int on STRING column region)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mode = bad[i].mode;
        memset(&err, 0, sizeof err);
        CHECK_ERR(dkb_query_run(&q, tp, db, &p, &res, &err), bad[i].code, err, bad[i].want);
        CHECK(res.ncols == 0 && res.cols == NULL); /* freed on failure */
        dkb_tp_reset(tp);
    }
    /* the check runs first */
    p.v[2].i = -3;
    CHECK_ERR(dkb_query_run(&q, tp, db, &p, &res, &err), DKB_EINVAL, err, "q99: quantity -3 is negative");
    CHECK_ERR(dkb_query_run(NULL, tp, db, &p, &res, &err), DKB_EINVAL, err, "missing argument");
    q.core = NULL;
    CHECK_ERR(dkb_query_run(&q, tp, db, &p, &res, &err), DKB_EINTERNAL, err, "q99: the plan lacks a step");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(path);
}

int main(void) {
    test_overrides();
    test_bad_draws();
    test_seeds();
    test_text_and_sql();
    test_registry();

    const char *base = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/dkb-params-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) return 2;
    char out[4200];
    snprintf(out, sizeof out, "%s/store", dir);
    dkb_gen_opts opts = {.sf = 0.01, .threads = 2, .tables = (1u << DKB_TABLE_NATION) | (1u << DKB_TABLE_REGION),
                         .part = 1, .parts = 1, .partitions = 1, .format = DKB_OUT_STORE, .out = out};
    dkb_gen_summary sum;
    dkb_error err = {0};
    dkb_store *db = NULL;
    dkb_tp *tp = NULL;
    if (dkb__gen_run(&opts, &sum, &err) || dkb_store_open(out, 0, &db, &err) ||
        dkb_tp_create(DKB_TP_CPU, 2, &tp, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 1;
    }
    test_sets(tp, db);
    test_run(tp, db);
    dkb_tp_destroy(tp);
    dkb_store_close(db);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("test_params: ok\n");
    return failures != 0;
}
