/* q20.c: TPC-H Q20, Potential Part Promotion, as a TensorPlan baseline.
 *
 * The suppliers of one nation holding, for some part whose name starts
 * with COLOR, more than half of what they shipped of it in one year:
 *
 *   select s_name, s_address
 *   from supplier, nation
 *   where s_suppkey in (
 *           select ps_suppkey from partsupp
 *           where ps_partkey in (select p_partkey from part where p_name like 'forest%')
 *             and ps_availqty > (select 0.5 * sum(l_quantity) from lineitem
 *                                where l_partkey = ps_partkey
 *                                  and l_suppkey = ps_suppkey
 *                                  and l_shipdate >= date '1994-01-01'
 *                                  and l_shipdate < date '1994-01-01' + interval '1' year))
 *     and s_nationkey = n_nationkey
 *     and n_name = 'CANADA'
 *   order by s_name;
 *
 * Plan: LIKE on the part names (free text), semi-join partsupp with those
 * parts; the correlated sum is decorrelated as a join of the year's lines
 * (probe) with those partsupp rows (build) on the packed (partkey,
 * suppkey) key and a group-by per partsupp row. A partsupp row without
 * lines compares with NULL and drops out, as the inner join makes it.
 * 0.5 * sum is exact (scale 3) and compared exactly. */
#include <stdio.h>
#include <string.h>

#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"color", DKB_PARAM_STRING, 0, "first word of the part names (one of the 92 colors: almond .. yellow)"},
    {"date", DKB_PARAM_DATE, 0, "first day of the 1-year ship window (Jan 1 of 1993..1997)"},
    {"nation", DKB_PARAM_STRING, 0, "supplier nation (one of the 25)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "color", "forest");
        dkb__qgen_put_date(out, "date", 1994, 1, 1);
        dkb__qgen_put_str(out, "nation", "CANADA");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 20);
    dkb__qgen_put_str(out, "color", dkb__qgen_pick(&q, dkb__qgen_color, DKB__QGEN_NCOLOR));
    dkb__qgen_put_days(out, "date", dkb__qgen_year(&q, 1993, 1997));
    dkb__qgen_put_str(out, "nation", dkb__qgen_pick(&q, dkb__qgen_nation, DKB__QGEN_NNATION));
}

static int check(const dkb_params *p, dkb_error *err) {
    const char *color = dkb_params_get(p, "color")->s, *nation = dkb_params_get(p, "nation")->s;
    if (dkb__qgen_find(dkb__qgen_color, DKB__QGEN_NCOLOR, color) < 0)
        return dkb_fail(err, DKB_EINVAL, "q20: color '%s' is not one of the 92 part name words", color);
    if (dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, nation) < 0)
        return dkb_fail(err, DKB_EINVAL, "q20: nation '%s' is not one of the 25 nations", nation);
    return 0;
}

/* ---- plan ---- */

static const char *const PART[] = {"p_partkey", "p_name"};
static const char *const PARTSUPP[] = {"ps_partkey", "ps_suppkey", "ps_availqty"};
static const char *const LINEITEM[] = {"l_partkey", "l_suppkey", "l_quantity", "l_shipdate"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_name", "s_address", "s_nationkey"};
static const char *const NATION[] = {"n_nationkey", "n_name"};
/* Core outputs, named as the result columns. */
static const char *const OUT[] = {"s_name", "s_address"};

/* An upper bound of INT column table.name's values at the store's scale
 * factor (from the schema), for packing keys. */
static int64_t key_bound(dkb_tp *tp, const dkb_store *db, const char *table, const char *name) {
    const dkb_store_table *t = dkb_store_table_find(db, table);
    const dkb_store_column *c = t ? dkb_store_table_column(t, name) : NULL;
    if (!c) return 0;  /* dkb__plan_put_columns has failed already */
    const dkb_column_def *d = dkb_column_schema(c);
    double max = d->max_per_sf * dkb_store_scale_factor(db) + (double)d->max_const;
    if (!(max >= 0 && max < 4e18)) {
        dkb_tp_fail(tp, DKB_ERANGE, "q20: %s.%s has no usable upper bound", table, name);
        return 0;
    }
    return (int64_t)max + 1;
}

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb__plan_put_columns(tp, db, in, "partsupp", PARTSUPP, DKB_COUNTOF(PARTSUPP));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    char pattern[DKB_PARAM_STRLEN + 2];
    snprintf(pattern, sizeof pattern, "%s%%", dkb_params_get(p, "color")->s);
    dkb_set_put_str(tp, in, "name_like", pattern);
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "ship_lo", date);
    dkb_set_put_i64(tp, in, "ship_hi", dkb__qgen_add_months(date, 12) - 1);  /* inclusive */
    dkb_set_put_i64(tp, in, "nation", dkb__plan_code_or_none(tp, "q20", in, "n_name", dkb_params_get(p, "nation")->s));
    dkb_set_put_i64(tp, in, "suppkey_max", key_bound(tp, db, "supplier", "s_suppkey"));
    return dkb_tp_status(tp, NULL);
}

/* The partsupp rows of the named parts: partkey, suppkey, availqty. */
static void partsupp_rows(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **ps) {
    /* ps_partkey in (select p_partkey from part where p_name like ':1%') */
    dkb_tensor *named = dkb_tp_like(tp, dkb_set_get(tp, in, "p_name"), dkb_set_get_str(tp, in, "name_like"));
    dkb_tensor *pkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "p_partkey"), named);
    dkb_tensor *ps_keep = dkb_tp_semi_join(tp, pkey, dkb_set_get(tp, in, "ps_partkey"));
    ps[0] = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_partkey"), ps_keep);
    ps[1] = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_suppkey"), ps_keep);
    ps[2] = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_availqty"), ps_keep);
}

/* sum(l_quantity) of the year's lines per partsupp row (ps_row: the row
 * in ps[], groups in order of first appearance). */
static void year_qty(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *const *ps, dkb_tensor **ps_row_out,
                     dkb_tensor **qty_out) {
    int64_t suppkey_max = dkb_set_get_i64(tp, in, "suppkey_max");
    dkb_tensor *ps_part = ps[0], *ps_supp = ps[1];

    /* the year's lines: l_shipdate in the window */
    dkb_tensor *keep = dkb_tp_between(tp, dkb_set_get(tp, in, "l_shipdate"), dkb_set_get_i64(tp, in, "ship_lo"),
                                      dkb_set_get_i64(tp, in, "ship_hi"));
    dkb_tensor *l_part = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_partkey"), keep);
    dkb_tensor *l_supp = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_suppkey"), keep);
    dkb_tensor *l_qty = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_quantity"), keep);

    /* l_partkey = ps_partkey and l_suppkey = ps_suppkey: partsupp rows
     * build, lines probe; sum(l_quantity) per partsupp row */
    dkb_tensor *ps_key = dkb_tp_pack2(tp, ps_part, ps_supp, suppkey_max);
    dkb_tensor *l_key = dkb_tp_pack2(tp, l_part, l_supp, suppkey_max);
    dkb_join_result j = dkb_tp_join(tp, ps_key, l_key, DKB_JOIN_INNER);
    const dkb_tensor *keys[] = {j.build_idx};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    *qty_out = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, dkb_tp_gather(tp, l_qty, j.probe_idx, 0));
    *ps_row_out = dkb_tp_gather(tp, j.build_idx, g.first_row, 0);
}

/* The suppliers with an excess of some part, by name, into out. */
static void put_suppliers(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *const *ps, dkb_tensor *ps_row,
                          dkb_tensor *qty, dkb_tensor_set *out) {
    dkb_tensor *ps_supp = ps[1], *ps_avail = ps[2];

    /* ps_availqty > 0.5 * sum(l_quantity) */
    dkb_tensor *half = dkb_tp_arith_i64(tp, qty, DKB_OP_MUL, 5, 1);
    dkb_tensor *excess = dkb_tp_cmp(tp, dkb_tp_gather(tp, ps_avail, ps_row, 0), DKB_CMP_GT, half);
    dkb_tensor *supp = dkb_tp_compress(tp, dkb_tp_gather(tp, ps_supp, ps_row, 0), excess);

    /* supplier: s_suppkey in (...) and s_nationkey = n_nationkey and n_name = :3 */
    dkb_tensor *nation = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"),
                                         dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "n_name"), DKB_CMP_EQ,
                                                        dkb_set_get_i64(tp, in, "nation")));
    dkb_tensor *s_keep = dkb_tp_semi_join(tp, supp, dkb_set_get(tp, in, "s_suppkey"));
    s_keep = dkb_tp_and(tp, s_keep, dkb_tp_semi_join(tp, nation, dkb_set_get(tp, in, "s_nationkey")));
    dkb_tensor *cols[2] = {
        dkb_tp_compress(tp, dkb_set_get(tp, in, "s_name"), s_keep),
        dkb_tp_compress(tp, dkb_set_get(tp, in, "s_address"), s_keep),
    };

    /* order by s_name */
    dkb_sort_key by[] = {{cols[0], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, DKB_COUNTOF(OUT), perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *ps[3], *ps_row, *qty;
    partsupp_rows(tp, in, ps);
    year_qty(tp, in, ps, &ps_row, &qty);
    put_suppliers(tp, in, ps, ps_row, qty, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Lineitem streams; part and partsupp stay whole, so every run of
 * partitions numbers the named parts' partsupp rows alike. The year's
 * quantity per partsupp row adds up over the runs, then the comparison
 * with ps_availqty and the suppliers as in the core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *ps[3], *ps_row, *qty;
    partsupp_rows(tp, in, ps);
    year_qty(tp, in, ps, &ps_row, &qty);
    dkb_set_put(tp, out, "ps_row", ps_row);
    dkb_set_put(tp, out, "year_qty", qty);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *ps[3];
    partsupp_rows(tp, in, ps);
    put_suppliers(tp, in, ps, dkb_set_get(tp, in, "ps_row"), dkb_set_get(tp, in, "year_qty"), out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q20_part = {
    .stream = {"lineitem"},
    .npasses = 1,
    .pass = {{partial, 2, {{"ps_row", DKB__MERGE_KEY}, {"year_qty", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[2];
    int rc = dkb__plan_get_outputs(tp, out, OUT, DKB_COUNTOF(OUT), t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_STRING};
    static const int scales[] = {0, 0};
    rc = dkb_result_init(res, DKB_COUNTOF(OUT), OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++)
        if (dkb_result_add_row(res) < 0) return DKB_ENOMEM;
    for (int c = 0; c < 2; c++) {
        rc = dkb__plan_set_texts(tp, res, c, t[c]);
        if (rc) return rc;
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q20 = {
    .number = 20,
    .name = "q20",
    .title = "Potential Part Promotion",
    .sql = "select\n"
           "\ts_name,\n"
           "\ts_address\n"
           "from\n"
           "\tsupplier,\n"
           "\tnation\n"
           "where\n"
           "\ts_suppkey in (\n"
           "\t\tselect\n"
           "\t\t\tps_suppkey\n"
           "\t\tfrom\n"
           "\t\t\tpartsupp\n"
           "\t\twhere\n"
           "\t\t\tps_partkey in (\n"
           "\t\t\t\tselect\n"
           "\t\t\t\t\tp_partkey\n"
           "\t\t\t\tfrom\n"
           "\t\t\t\t\tpart\n"
           "\t\t\t\twhere\n"
           "\t\t\t\t\tp_name like ':color%'\n"
           "\t\t\t)\n"
           "\t\t\tand ps_availqty > (\n"
           "\t\t\t\tselect\n"
           "\t\t\t\t\t0.5 * sum(l_quantity)\n"
           "\t\t\t\tfrom\n"
           "\t\t\t\t\tlineitem\n"
           "\t\t\t\twhere\n"
           "\t\t\t\t\tl_partkey = ps_partkey\n"
           "\t\t\t\t\tand l_suppkey = ps_suppkey\n"
           "\t\t\t\t\tand l_shipdate >= date ':date'\n"
           "\t\t\t\t\tand l_shipdate < date ':date' + interval '1' year\n"
           "\t\t\t)\n"
           "\t)\n"
           "\tand s_nationkey = n_nationkey\n"
           "\tand n_name = ':nation'\n"
           "order by\n"
           "\ts_name;\n",
    .nparams = 3,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
