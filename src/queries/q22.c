/* q22.c: TPC-H Q22, Global Sales Opportunity, as a TensorPlan baseline.
 *
 * Per country code (the phone prefix), the number and total balance of
 * the customers of seven codes who never ordered and whose balance is
 * above the average positive balance of those codes:
 *
 *   select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
 *   from (select substring(c_phone from 1 for 2) as cntrycode, c_acctbal
 *         from customer
 *         where substring(c_phone from 1 for 2) in
 *                   ('13', '31', '23', '29', '30', '18', '17')
 *           and c_acctbal > (select avg(c_acctbal) from customer
 *                            where c_acctbal > 0.00
 *                              and substring(c_phone from 1 for 2) in
 *                                  ('13', '31', '23', '29', '30', '18', '17'))
 *           and not exists (select * from orders where o_custkey = c_custkey)
 *        ) as custsale
 *   group by cntrycode
 *   order by cntrycode;
 *
 * Plan: the two-character prefix of the phone (free text), parsed as an
 * integer for the IN list and the group key (codes are exactly two digits,
 * so integer and string equality and order agree); the average is a float
 * in SQL (DuckDB: DOUBLE), broadcast and compared; NOT EXISTS is an
 * anti-join against the order keys. */
#include <stdlib.h>

#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

enum { NCODE = 7 };
static const char *const CODE[NCODE] = {"code1", "code2", "code3", "code4", "code5", "code6", "code7"};

static const dkb_param_def params[] = {
    {"code1", DKB_PARAM_STRING, 0, "country code: two digits (drawn from 20..44; data prefixes are 10..34)"},
    {"code2", DKB_PARAM_STRING, 0, "country code (two digits)"},
    {"code3", DKB_PARAM_STRING, 0, "country code (two digits)"},
    {"code4", DKB_PARAM_STRING, 0, "country code (two digits)"},
    {"code5", DKB_PARAM_STRING, 0, "country code (two digits)"},
    {"code6", DKB_PARAM_STRING, 0, "country code (two digits)"},
    {"code7", DKB_PARAM_STRING, 0, "country code (two digits)"},
};

/* ---- parameters ---- */

/* qgen 2.14 draws a permutation of 10..34 and prints each value plus 10,
 * so random codes lie in 20..44 (params.md); seed 0 is the qualification
 * list. */
static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    static const int qualification[NCODE] = {13, 31, 23, 29, 30, 18, 17};
    int codes[NCODE];
    if (seed == 0) {
        for (int i = 0; i < NCODE; i++) codes[i] = qualification[i];
    } else {
        dkb__qgen q;
        dkb__qgen_init(&q, seed, 22);
        dkb__qgen_sample(&q, 10, 34, NCODE, codes);
        for (int i = 0; i < NCODE; i++) codes[i] += 10;
    }
    for (int i = 0; i < NCODE; i++) {
        char buf[4] = {(char)('0' + codes[i] / 10), (char)('0' + codes[i] % 10), '\0', '\0'};
        dkb__qgen_put_str(out, CODE[i], buf);
    }
}

static int check(const dkb_params *p, dkb_error *err) {
    for (int i = 0; i < NCODE; i++) {
        const char *s = dkb_params_get(p, CODE[i])->s;
        if (!(s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '\0'))
            return dkb_fail(err, DKB_EINVAL, "q22: %s '%s' is not a two-digit country code", CODE[i], s);
    }
    return 0;
}

/* ---- plan ---- */

static const char *const CUSTOMER[] = {"c_custkey", "c_phone", "c_acctbal"};
static const char *const ORDERS[] = {"o_custkey"};
/* Core outputs, named as the result columns. */
static const char *const OUT[] = {"cntrycode", "numcust", "totacctbal"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    for (int i = 0; i < NCODE; i++) dkb_set_put_i64(tp, in, CODE[i], atoi(dkb_params_get(p, CODE[i])->s));
    return dkb_tp_status(tp, NULL);
}

/* The customers of the country codes: code, its text, balance, custkey. */
static void candidates(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **code_out, dkb_tensor **cntry_out,
                       dkb_tensor **bal_out, dkb_tensor **cust_out) {
    int64_t codes[NCODE];
    for (int i = 0; i < NCODE; i++) codes[i] = dkb_set_get_i64(tp, in, CODE[i]);

    /* substring(c_phone from 1 for 2) in (...) */
    dkb_tensor *prefix = dkb_tp_substr(tp, dkb_set_get(tp, in, "c_phone"), 0, 2);
    dkb_tensor *code = dkb_tp_str_to_i64(tp, prefix);
    dkb_tensor *keep = dkb_tp_in_i64(tp, code, codes, NCODE);
    dkb_tensor *cntry = dkb_tp_compress(tp, prefix, keep);
    code = dkb_tp_compress(tp, code, keep);
    dkb_tensor *bal = dkb_tp_compress(tp, dkb_set_get(tp, in, "c_acctbal"), keep);
    dkb_tensor *cust = dkb_tp_compress(tp, dkb_set_get(tp, in, "c_custkey"), keep);
    *code_out = code, *cntry_out = cntry, *bal_out = bal, *cust_out = cust;
}

/* The candidates with a balance above the average positive balance, and
 * no orders (has_order: BOOL per candidate); grouped by code into out. */
static void put_groups(dkb_tp *tp, dkb_tensor_set *out, dkb_tensor *code, dkb_tensor *cntry, dkb_tensor *bal,
                       dkb_tensor *has_order) {
    dkb_tensor *keep;

    /* c_acctbal > (select avg(c_acctbal) ... where c_acctbal > 0.00 and
     * the same codes), the average gathered to every row */
    dkb_tensor *avg = dkb_tp_reduce(tp, DKB_AGG_AVG, dkb_tp_compress(tp, bal, dkb_tp_cmp_i64(tp, bal, DKB_CMP_GT, 0)));
    int64_t n = bal ? bal->n : 0;
    if (avg && avg->n == 0)  /* avg of no rows is NULL: no row compares true */
        keep = dkb_tp_full_i64(tp, DKB_TP_BOOL, n, 0);
    else
        keep = dkb_tp_cmp(tp, bal, DKB_CMP_GT, dkb_tp_gather(tp, avg, dkb_tp_full_i64(tp, DKB_TP_I64, n, 0), 0));

    /* and not exists (select * from orders where o_custkey = c_custkey) */
    keep = dkb_tp_and(tp, keep, dkb_tp_not(tp, has_order));
    code = dkb_tp_compress(tp, code, keep);
    cntry = dkb_tp_compress(tp, cntry, keep);
    bal = dkb_tp_compress(tp, bal, keep);

    /* group by cntrycode: count(*), sum(c_acctbal) */
    const dkb_tensor *keys[] = {code};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *gcode = dkb_tp_gather(tp, code, g.first_row, 0);
    dkb_tensor *cols[3] = {
        dkb_tp_gather(tp, cntry, g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, bal),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, bal),
    };

    /* order by cntrycode */
    dkb_sort_key by[] = {{gcode, false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, DKB_COUNTOF(OUT), perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *code, *cntry, *bal, *cust;
    candidates(tp, in, &code, &cntry, &bal, &cust);
    put_groups(tp, out, code, cntry, bal, dkb_tp_semi_join(tp, dkb_set_get(tp, in, "o_custkey"), cust));
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Orders stream; customer stays whole, so the average balance is the
 * core's. Per run of partitions: whether each candidate (by position) has
 * an order there; merged by max (any run), then the core's filter and
 * groups. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *code, *cntry, *bal, *cust;
    candidates(tp, in, &code, &cntry, &bal, &cust);
    dkb_tensor *has = dkb_tp_semi_join(tp, dkb_set_get(tp, in, "o_custkey"), cust);
    dkb_set_put(tp, out, "cand_pos", dkb_tp_arange(tp, cust ? cust->n : 0));
    dkb_set_put(tp, out, "has_order", dkb_tp_cast(tp, has, DKB_TP_I64));
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *code, *cntry, *bal, *cust;
    candidates(tp, in, &code, &cntry, &bal, &cust);
    put_groups(tp, out, code, cntry, bal, dkb_tp_cast(tp, dkb_set_get(tp, in, "has_order"), DKB_TP_BOOL));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q22_part = {
    .stream = {"orders"},
    .npasses = 1,
    .pass = {{partial, 2, {{"cand_pos", DKB__MERGE_KEY}, {"has_order", DKB__MERGE_MAX}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[3];
    int rc = dkb__plan_get_outputs(tp, out, OUT, DKB_COUNTOF(OUT), t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT, DKB_RES_DECIMAL};
    const int scales[] = {0, 0, t[2]->scale};
    rc = dkb_result_init(res, DKB_COUNTOF(OUT), OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        if (dkb_result_add_row(res) < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, i, 1, dkb_tp_get_i64(tp, t[1], i));
        dkb_result_set_dec(res, i, 2, dkb_tp_get_i128(tp, t[2], i));
    }
    rc = dkb__plan_set_texts(tp, res, 0, t[0]);
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q22 = {
    .number = 22,
    .name = "q22",
    .title = "Global Sales Opportunity",
    .sql = "select\n"
           "\tcntrycode,\n"
           "\tcount(*) as numcust,\n"
           "\tsum(c_acctbal) as totacctbal\n"
           "from\n"
           "\t(\n"
           "\t\tselect\n"
           "\t\t\tsubstring(c_phone from 1 for 2) as cntrycode,\n"
           "\t\t\tc_acctbal\n"
           "\t\tfrom\n"
           "\t\t\tcustomer\n"
           "\t\twhere\n"
           "\t\t\tsubstring(c_phone from 1 for 2) in\n"
           "\t\t\t\t(':code1', ':code2', ':code3', ':code4', ':code5', ':code6', ':code7')\n"
           "\t\t\tand c_acctbal > (\n"
           "\t\t\t\tselect\n"
           "\t\t\t\t\tavg(c_acctbal)\n"
           "\t\t\t\tfrom\n"
           "\t\t\t\t\tcustomer\n"
           "\t\t\t\twhere\n"
           "\t\t\t\t\tc_acctbal > 0.00\n"
           "\t\t\t\t\tand substring(c_phone from 1 for 2) in\n"
           "\t\t\t\t\t\t(':code1', ':code2', ':code3', ':code4', ':code5', ':code6', ':code7')\n"
           "\t\t\t)\n"
           "\t\t\tand not exists (\n"
           "\t\t\t\tselect\n"
           "\t\t\t\t\t*\n"
           "\t\t\t\tfrom\n"
           "\t\t\t\t\torders\n"
           "\t\t\t\twhere\n"
           "\t\t\t\t\to_custkey = c_custkey\n"
           "\t\t\t)\n"
           "\t) as custsale\n"
           "group by\n"
           "\tcntrycode\n"
           "order by\n"
           "\tcntrycode;\n",
    .nparams = 7,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
