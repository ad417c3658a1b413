/* countof.h: DKB_COUNTOF, the number of elements of an array (internal),
 * so that a table and the count passed with it cannot disagree. */
#ifndef DKB_COMMON_COUNTOF_H
#define DKB_COMMON_COUNTOF_H

#include <stddef.h>

/* Elements of the array a (a size_t constant). a must be an array, not a
 * pointer: for a pointer this is sizeof(pointer) / sizeof(element). */
#define DKB_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

#endif
