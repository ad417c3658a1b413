/* referenced.c: the columns the 22 TPC-H queries read (referenced.h). The
 * list is checked by tests/cli/gen_columns.sh: on a store of only these
 * columns every baseline plan, partitioned plan and C expert gives the
 * goldens. Left out: l_linenumber, l_comment, o_clerk, p_retailprice,
 * p_comment, ps_comment, n_comment, r_comment. */
#include "queries/referenced.h"

#include <stddef.h>

#include "common/countof.h"   // defines: DKB_COUNTOF

static const char *const referenced[] = {
    "p_partkey", "p_name", "p_mfgr", "p_brand", "p_type", "p_size", "p_container",
    "ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost",
    "s_suppkey", "s_name", "s_address", "s_nationkey", "s_phone", "s_acctbal", "s_comment",
    "c_custkey", "c_name", "c_address", "c_nationkey", "c_phone", "c_acctbal", "c_mktsegment", "c_comment",
    "o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate", "o_orderpriority",
    "o_shippriority", "o_comment",
    "l_orderkey", "l_partkey", "l_suppkey", "l_quantity", "l_extendedprice", "l_discount", "l_tax",
    "l_returnflag", "l_linestatus", "l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct",
    "l_shipmode",
    "n_nationkey", "n_name", "n_regionkey",
    "r_regionkey", "r_name",
};

int dkb__keep_column(uint32_t keep[DKB_TABLE_COUNT], const char *name) {
    for (int t = 0; t < DKB_TABLE_COUNT; t++) {
        int c = dkb_table_def_column(dkb_table_def_get((dkb_table_id)t), name);
        if (c >= 0) {
            keep[t] |= 1u << c;
            return 1;
        }
    }
    return 0;
}

void dkb__referenced_columns(uint32_t keep[DKB_TABLE_COUNT]) {
    for (size_t i = 0; i < DKB_COUNTOF(referenced); i++) dkb__keep_column(keep, referenced[i]);
}
