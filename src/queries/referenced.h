/* referenced.h: the store columns the 22 TPC-H queries read (their baseline
 * plans and the expert implementations alike): what `dkb gen --columns
 * queries` writes, so a large scale factor fits where the whole data set
 * does not (SF 100: 53 of the 61 columns, about 54 of 87 GB). */
#ifndef DKB_QUERIES_REFERENCED_H
#define DKB_QUERIES_REFERENCED_H

#include <stdint.h>

#include "dkb/schema.h"   // defines: DKB_TABLE_COUNT

/* keep[t] |= bit c for every referenced column c of table t. */
void dkb__referenced_columns(uint32_t keep[DKB_TABLE_COUNT]);

/* keep[t] |= bit c for the column called name (TPC-H column names are
 * unique across tables): 1, or 0 when no table has it. */
int dkb__keep_column(uint32_t keep[DKB_TABLE_COUNT], const char *name);

#endif
