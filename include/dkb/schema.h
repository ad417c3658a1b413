/* schema.h: the TPC-H schema as data: the 8 tables, their columns, each
 * column's logical type and how it is stored and printed.
 *
 * Logical types and their store encodings (docs/store.md has the details):
 *   INT      integer (keys, counts)    int32, or int64 where the scale factor
 *                                       can exceed INT32_MAX (dkb_column_is_wide)
 *   DECIMAL  DECIMAL(15,2)             int64 hundredths (1.05 -> 105)
 *   DATE     date                       int32 days since 1970-01-01
 *   DICT     low-cardinality string     uint8 codes + sorted dictionary
 *   TEXT     free text                  int64 offsets (rows+1) + bytes */
#ifndef DKB_SCHEMA_H
#define DKB_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DKB_TYPE_INT = 0,
    DKB_TYPE_DECIMAL,
    DKB_TYPE_DATE,
    DKB_TYPE_DICT,
    DKB_TYPE_TEXT,
} dkb_type_t;

/* Tables in dbgen's order. */
typedef enum {
    DKB_TABLE_PART = 0,
    DKB_TABLE_PARTSUPP,
    DKB_TABLE_SUPPLIER,
    DKB_TABLE_CUSTOMER,
    DKB_TABLE_ORDERS,
    DKB_TABLE_LINEITEM,
    DKB_TABLE_NATION,
    DKB_TABLE_REGION,
    DKB_TABLE_COUNT
} dkb_table_id;

#define DKB_MAX_COLUMNS 16

/* Column flags. */
#define DKB_COL_WHOLE 0x1u /* DECIMAL whose .tbl text has no fraction ("17", l_quantity) */

typedef struct dkb_column_def {
    const char *name;     /* "l_orderkey" */
    dkb_type_t type;
    unsigned flags;       /* DKB_COL_* */
    /* INT only: the largest value at scale factor sf is at most
     * max_per_sf * sf + max_const; decides int32 versus int64. */
    double max_per_sf;
    int64_t max_const;
} dkb_column_def;

typedef struct dkb_table_def {
    dkb_table_id id;
    const char *name;     /* "lineitem" */
    int ncols;
    const dkb_column_def *cols;
} dkb_table_def;

/* The definition of table id (0 <= id < DKB_TABLE_COUNT). */
const dkb_table_def *dkb_table_def_get(dkb_table_id id);
/* Look a table up by name ("lineitem"); NULL if there is none. */
const dkb_table_def *dkb_table_def_find(const char *name);
/* Index of column `name` in table t, or -1. */
int dkb_table_def_column(const dkb_table_def *t, const char *name);
/* True if INT column c needs int64 at scale factor sf. */
bool dkb_column_is_wide(const dkb_column_def *c, double sf);
/* "int", "decimal", "date", "dict", "text". */
const char *dkb_type_name(dkb_type_t type);

#ifdef __cplusplus
}
#endif

#endif
