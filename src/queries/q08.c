/* q08.c: TPC-H Q8, National Market Share, as a TensorPlan baseline.
 *
 * The share of one nation's suppliers in the revenue from one part type
 * sold to customers of one region, per year of 1995 and 1996:
 *
 *   select o_year,
 *          sum(case when nation = 'BRAZIL' then volume else 0 end) / sum(volume)
 *            as mkt_share
 *   from (select extract(year from o_orderdate) as o_year,
 *                l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation
 *         from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
 *         where p_partkey = l_partkey and s_suppkey = l_suppkey
 *           and l_orderkey = o_orderkey and o_custkey = c_custkey
 *           and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey
 *           and r_name = 'AMERICA' and s_nationkey = n2.n_nationkey
 *           and o_orderdate between date '1995-01-01' and date '1996-12-31'
 *           and p_type = 'ECONOMY ANODIZED STEEL'
 *        ) as all_nations
 *   group by o_year
 *   order by o_year;
 *
 * Plan: the parts of the type and their line items (the parts are the
 * build side); the region's nations, their customers, and those
 * customers' orders of 1995..1996; the items of those orders; each item's
 * supplier nation name (joins with supplier and nation). The CASE is the
 * volume times the 0/1 mask of the nation test, so both sums stay exact
 * (scale 4); the share is their quotient (a double, as in DuckDB). */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"nation", DKB_PARAM_STRING, 0, "nation whose share is measured (any of the 25)"},
    {"region", DKB_PARAM_STRING, 0, "region of the customers (qgen: the nation's region)"},
    {"type", DKB_PARAM_STRING, 0, "part type (one of the 150, e.g. ECONOMY ANODIZED STEEL)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "nation", "BRAZIL");
        dkb__qgen_put_str(out, "region", "AMERICA");
        dkb__qgen_put_str(out, "type", "ECONOMY ANODIZED STEEL");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 8);
    const char *nation = dkb__qgen_pick(&q, dkb__qgen_nation, DKB__QGEN_NNATION);
    char type[DKB_PARAM_STRLEN];
    dkb__qgen_type(&q, type, sizeof type);
    dkb__qgen_put_str(out, "nation", nation);
    dkb__qgen_put_str(out, "region", dkb__qgen_region_of(nation));
    dkb__qgen_put_str(out, "type", type);
}

/* A nation, a region and a part type from TPC-H's lists (the region need
 * not be the nation's: that is valid SQL too). */
static int check(const dkb_params *p, dkb_error *err) {
    const char *nation = dkb_params_get(p, "nation")->s;
    const char *region = dkb_params_get(p, "region")->s;
    const char *type = dkb_params_get(p, "type")->s;
    if (dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, nation) < 0)
        return dkb_fail(err, DKB_EINVAL, "q08: nation '%s' is not a nation name", nation);
    if (dkb__qgen_find(dkb__qgen_region, DKB__QGEN_NREGION, region) < 0)
        return dkb_fail(err, DKB_EINVAL, "q08: unknown region '%s' (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)",
                        region);
    if (!dkb__qgen_is_type(type))
        return dkb_fail(err, DKB_EINVAL, "q08: type '%s' is not a part type (e.g. ECONOMY ANODIZED STEEL)", type);
    return 0;
}

/* ---- plan ---- */

static const char *const PART[] = {"p_partkey", "p_type"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_nationkey"};
static const char *const LINEITEM[] = {"l_orderkey", "l_partkey", "l_suppkey", "l_extendedprice", "l_discount"};
static const char *const ORDERS[] = {"o_orderkey", "o_custkey", "o_orderdate"};
static const char *const CUSTOMER[] = {"c_custkey", "c_nationkey"};
static const char *const NATION[] = {"n_nationkey", "n_name", "n_regionkey"};
static const char *const REGION[] = {"r_regionkey", "r_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 2 };
static const char *const OUT[NOUT] = {"o_year", "mkt_share"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    dkb__plan_put_columns(tp, db, in, "region", REGION, DKB_COUNTOF(REGION));
    dkb_set_put_i64(tp, in, "nation", dkb__plan_code_required(tp, "q08", in, "n_name", dkb_params_get(p, "nation")->s));
    dkb_set_put_i64(tp, in, "region", dkb__plan_code_required(tp, "q08", in, "r_name", dkb_params_get(p, "region")->s));
    /* a type that no part has is no error: the answer is empty */
    dkb_tensor *p_type = dkb_set_get(tp, in, "p_type");
    int type = p_type && p_type->dict ? dkb_tp_dict_code(p_type->dict, dkb_params_get(p, "type")->s) : -1;
    dkb_set_put_i64(tp, in, "type", type);
    dkb_set_put_i64(tp, in, "date_lo", dkb__qgen_date(1995, 1, 1));
    dkb_set_put_i64(tp, in, "date_hi", dkb__qgen_date(1996, 12, 31));
    return dkb_tp_status(tp, NULL);
}

/* Per o_year (groups in order of first appearance): the year, the exact
 * sum of the nation's volume and of all volume. */
static void sums_by_year(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **year_out, dkb_tensor **nation_sum,
                         dkb_tensor **total) {
    /* parts of the type, their line items */
    dkb_tensor *p_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "p_partkey"),
                                        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "p_type"), DKB_CMP_EQ,
                                                       dkb_set_get_i64(tp, in, "type")));
    dkb_join_result lp = dkb_tp_join(tp, p_key, dkb_set_get(tp, in, "l_partkey"), DKB_JOIN_INNER);
    dkb_tensor *l_row = lp.probe_idx;
    /* the region's nations, their customers, those customers' orders of 1995..1996 */
    dkb_tensor *r_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "r_regionkey"),
                                        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "r_name"), DKB_CMP_EQ,
                                                       dkb_set_get_i64(tp, in, "region")));
    dkb_tensor *n_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"),
                                        dkb_tp_semi_join(tp, r_key, dkb_set_get(tp, in, "n_regionkey")));
    dkb_tensor *c_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "c_custkey"),
                                        dkb_tp_semi_join(tp, n_key, dkb_set_get(tp, in, "c_nationkey")));
    dkb_tensor *o_keep = dkb_tp_between(tp, dkb_set_get(tp, in, "o_orderdate"), dkb_set_get_i64(tp, in, "date_lo"),
                                        dkb_set_get_i64(tp, in, "date_hi"));
    o_keep = dkb_tp_and(tp, o_keep, dkb_tp_semi_join(tp, c_key, dkb_set_get(tp, in, "o_custkey")));
    dkb_tensor *o_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderkey"), o_keep);
    dkb_tensor *o_date = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderdate"), o_keep);
    /* the items of those orders (the fewer items are the build side) */
    dkb_join_result lo = dkb_tp_join(tp, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_orderkey"), l_row, 0), o_key,
                                     DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, lo.build_idx, 0);
    dkb_tensor *year = dkb_tp_year(tp, dkb_tp_gather(tp, o_date, lo.probe_idx, 0));
    /* each item's supplier nation (n2) */
    dkb_join_result ls = dkb_tp_join(tp, dkb_set_get(tp, in, "s_suppkey"),
                                     dkb_tp_gather(tp, dkb_set_get(tp, in, "l_suppkey"), l_row, 0), DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, ls.probe_idx, 0);
    year = dkb_tp_gather(tp, year, ls.probe_idx, 0);
    dkb_tensor *s_nation = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_nationkey"), ls.build_idx, 0);
    dkb_join_result sn = dkb_tp_join(tp, dkb_set_get(tp, in, "n_nationkey"), s_nation, DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, sn.probe_idx, 0);
    year = dkb_tp_gather(tp, year, sn.probe_idx, 0);
    dkb_tensor *nation = dkb_tp_gather(tp, dkb_set_get(tp, in, "n_name"), sn.build_idx, 0);
    /* volume, and case when nation = :nation then volume else 0 end */
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), l_row, 0);
    dkb_tensor *disc = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_discount"), l_row, 0);
    dkb_tensor *volume = dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
    dkb_tensor *is_nation = dkb_tp_cmp_i64(tp, nation, DKB_CMP_EQ, dkb_set_get_i64(tp, in, "nation"));
    dkb_tensor *nation_volume = dkb_tp_arith(tp, volume, DKB_OP_MUL, dkb_tp_cast(tp, is_nation, DKB_TP_I64));
    /* group by o_year, order by o_year */
    const dkb_tensor *keys[] = {year};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    *year_out = dkb_tp_gather(tp, year, g.first_row, 0);
    *nation_sum = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, nation_volume);
    *total = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, volume);
}

/* The market share per year, ordered by year, into out. */
static void put_share(dkb_tp *tp, dkb_tensor_set *out, dkb_tensor *year, dkb_tensor *nation_sum, dkb_tensor *total) {
    dkb_tensor *cols[NOUT] = {year, dkb_tp_arith(tp, nation_sum, DKB_OP_DIV, total)};
    dkb_sort_key by[] = {{cols[0], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *year, *nation_sum, *total;
    sums_by_year(tp, in, &year, &nation_sum, &total);
    put_share(tp, out, year, nation_sum, total);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions and year: the two exact sums; they add up, and the
 * share is their quotient, as in the core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *year, *nation_sum, *total;
    sums_by_year(tp, in, &year, &nation_sum, &total);
    dkb_set_put(tp, out, "o_year", year);
    dkb_set_put(tp, out, "nation_sum", nation_sum);
    dkb_set_put(tp, out, "total", total);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_share(tp, out, dkb_set_get(tp, in, "o_year"), dkb_set_get(tp, in, "nation_sum"),
              dkb_set_get(tp, in, "total"));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q08_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{partial, 3, {{"o_year", DKB__MERGE_KEY}, {"nation_sum", DKB__MERGE_SUM}, {"total", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_FLOAT};
    static const int scales[] = {0, 6};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, r, 0, dkb_tp_get_i64(tp, t[0], i));
        dkb_result_set_float(res, r, 1, dkb_tp_get_f64(tp, t[1], i));
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q08 = {
    .number = 8,
    .name = "q08",
    .title = "National Market Share",
    .sql = "select\n"
           "\to_year,\n"
           "\tsum(case\n"
           "\t\twhen nation = ':nation' then volume\n"
           "\t\telse 0\n"
           "\tend) / sum(volume) as mkt_share\n"
           "from\n"
           "\t(\n"
           "\t\tselect\n"
           "\t\t\textract(year from o_orderdate) as o_year,\n"
           "\t\t\tl_extendedprice * (1 - l_discount) as volume,\n"
           "\t\t\tn2.n_name as nation\n"
           "\t\tfrom\n"
           "\t\t\tpart,\n"
           "\t\t\tsupplier,\n"
           "\t\t\tlineitem,\n"
           "\t\t\torders,\n"
           "\t\t\tcustomer,\n"
           "\t\t\tnation n1,\n"
           "\t\t\tnation n2,\n"
           "\t\t\tregion\n"
           "\t\twhere\n"
           "\t\t\tp_partkey = l_partkey\n"
           "\t\t\tand s_suppkey = l_suppkey\n"
           "\t\t\tand l_orderkey = o_orderkey\n"
           "\t\t\tand o_custkey = c_custkey\n"
           "\t\t\tand c_nationkey = n1.n_nationkey\n"
           "\t\t\tand n1.n_regionkey = r_regionkey\n"
           "\t\t\tand r_name = ':region'\n"
           "\t\t\tand s_nationkey = n2.n_nationkey\n"
           "\t\t\tand o_orderdate between date '1995-01-01' and date '1996-12-31'\n"
           "\t\t\tand p_type = ':type'\n"
           "\t) as all_nations\n"
           "group by\n"
           "\to_year\n"
           "order by\n"
           "\to_year;\n",
    .nparams = 3,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
