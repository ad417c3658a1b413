/* schema.c: the TPC-H tables and columns (TPC-H spec 2.14, clause 1.4). */
#include "dkb/schema.h"

#include <stdint.h>
#include <string.h>

#include "common/countof.h"  // defines: DKB_COUNTOF

#define INT_(n, per_sf, c) {n, DKB_TYPE_INT, 0, (per_sf), (c)}
#define DEC_(n) {n, DKB_TYPE_DECIMAL, 0, 0, 0}
#define DATE_(n) {n, DKB_TYPE_DATE, 0, 0, 0}
#define DICT_(n) {n, DKB_TYPE_DICT, 0, 0, 0}
#define TEXT_(n) {n, DKB_TYPE_TEXT, 0, 0, 0}

/* Key maxima: partkey 200000*SF, suppkey 10000*SF, custkey 150000*SF,
 * orderkey is sparse: at most 4 * (1500000*SF) plus a block of 32. */
#define PARTKEY_(n) INT_(n, 200000.0, 0)
#define SUPPKEY_(n) INT_(n, 10000.0, 0)
#define CUSTKEY_(n) INT_(n, 150000.0, 0)
#define ORDERKEY_(n) INT_(n, 6000000.0, 32)

static const dkb_column_def part_cols[] = {
    PARTKEY_("p_partkey"), TEXT_("p_name"), DICT_("p_mfgr"), DICT_("p_brand"),
    DICT_("p_type"), INT_("p_size", 0, 50), DICT_("p_container"), DEC_("p_retailprice"),
    TEXT_("p_comment"),
};
static const dkb_column_def partsupp_cols[] = {
    PARTKEY_("ps_partkey"), SUPPKEY_("ps_suppkey"),
    INT_("ps_availqty", 0, 9999), DEC_("ps_supplycost"), TEXT_("ps_comment"),
};
static const dkb_column_def supplier_cols[] = {
    SUPPKEY_("s_suppkey"), TEXT_("s_name"), TEXT_("s_address"),
    INT_("s_nationkey", 0, 24), TEXT_("s_phone"), DEC_("s_acctbal"), TEXT_("s_comment"),
};
static const dkb_column_def customer_cols[] = {
    CUSTKEY_("c_custkey"), TEXT_("c_name"), TEXT_("c_address"),
    INT_("c_nationkey", 0, 24), TEXT_("c_phone"), DEC_("c_acctbal"),
    DICT_("c_mktsegment"), TEXT_("c_comment"),
};
static const dkb_column_def orders_cols[] = {
    ORDERKEY_("o_orderkey"), CUSTKEY_("o_custkey"), DICT_("o_orderstatus"),
    DEC_("o_totalprice"), DATE_("o_orderdate"), DICT_("o_orderpriority"),
    TEXT_("o_clerk"), INT_("o_shippriority", 0, 0), TEXT_("o_comment"),
};
static const dkb_column_def lineitem_cols[] = {
    ORDERKEY_("l_orderkey"), PARTKEY_("l_partkey"), SUPPKEY_("l_suppkey"),
    INT_("l_linenumber", 0, 7),
    {"l_quantity", DKB_TYPE_DECIMAL, DKB_COL_WHOLE, 0, 0},
    DEC_("l_extendedprice"), DEC_("l_discount"), DEC_("l_tax"),
    DICT_("l_returnflag"), DICT_("l_linestatus"), DATE_("l_shipdate"),
    DATE_("l_commitdate"), DATE_("l_receiptdate"), DICT_("l_shipinstruct"),
    DICT_("l_shipmode"), TEXT_("l_comment"),
};
static const dkb_column_def nation_cols[] = {
    INT_("n_nationkey", 0, 24), DICT_("n_name"), INT_("n_regionkey", 0, 4), TEXT_("n_comment"),
};
static const dkb_column_def region_cols[] = {
    INT_("r_regionkey", 0, 4), DICT_("r_name"), TEXT_("r_comment"),
};

#define TABLE_(id, name, cols) {id, name, (int)DKB_COUNTOF(cols), cols}
static const dkb_table_def tables[DKB_TABLE_COUNT] = {
    TABLE_(DKB_TABLE_PART, "part", part_cols),
    TABLE_(DKB_TABLE_PARTSUPP, "partsupp", partsupp_cols),
    TABLE_(DKB_TABLE_SUPPLIER, "supplier", supplier_cols),
    TABLE_(DKB_TABLE_CUSTOMER, "customer", customer_cols),
    TABLE_(DKB_TABLE_ORDERS, "orders", orders_cols),
    TABLE_(DKB_TABLE_LINEITEM, "lineitem", lineitem_cols),
    TABLE_(DKB_TABLE_NATION, "nation", nation_cols),
    TABLE_(DKB_TABLE_REGION, "region", region_cols),
};

const dkb_table_def *dkb_table_def_get(dkb_table_id id) {
    if ((int)id < 0 || id >= DKB_TABLE_COUNT) return NULL;
    return &tables[id];
}

const dkb_table_def *dkb_table_def_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < DKB_TABLE_COUNT; i++)
        if (strcmp(tables[i].name, name) == 0) return &tables[i];
    return NULL;
}

int dkb_table_def_column(const dkb_table_def *t, const char *name) {
    if (!t || !name) return -1;
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) return i;
    return -1;
}

bool dkb_column_is_wide(const dkb_column_def *c, double sf) {
    if (c->type != DKB_TYPE_INT) return false;
    double max = c->max_per_sf * (sf < 1 ? 1 : sf) + (double)c->max_const;
    return max > (double)INT32_MAX;
}

const char *dkb_type_name(dkb_type_t type) {
    static const char *names[] = {"int", "decimal", "date", "dict", "text"};
    return (unsigned)type < DKB_COUNTOF(names) ? names[type] : "?";
}
