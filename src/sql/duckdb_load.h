/* duckdb_load.h: libduckdb loaded at run time (dlopen), so that nothing
 * else in the build needs DuckDB: the few C API functions `dkb sql` uses,
 * resolved once per process into one table of function pointers.
 *
 * No DuckDB header is needed: the opaque handle types and the two structs
 * the caller allocates (duckdb_result, duckdb_date) are declared here as
 * DuckDB's C API (duckdb.h, stable since v1.0) declares them; checked
 * against DuckDB v1.5.6 (tools/oracle pins @duckdb/node-api 1.5.6-r.1, whose
 * package @duckdb/node-bindings-linux-x64 ships libduckdb.so).
 *
 * Where libduckdb is looked for, first found wins:
 *   1. $DKB_LIBDUCKDB (a path; when set, nothing else is tried);
 *   2. the path the build recorded (cmake -DDKB_LIBDUCKDB=/path/libduckdb.so);
 *   3. tools/oracle/node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so
 *      of the source tree the binary was built from (dkb__source_root;
 *      `cd tools/oracle && npm ci`, or tools/install-deps.sh), then the same
 *      under the directory above the running binary's (a build directory
 *      inside a copied tree);
 *   4. the system's libduckdb.so (dlopen's own search: LD_LIBRARY_PATH,
 *      ld.so.cache).
 * The library stays loaded until the process exits. */
#ifndef DKB_SQL_DUCKDB_LOAD_H
#define DKB_SQL_DUCKDB_LOAD_H

#include <stdint.h>

#include "dkb/error.h"  // defines: dkb_error

/* ---- the DuckDB C API types used (duckdb.h, v1.0 .. v1.5) ---- */
typedef uint64_t dkb__ddb_idx;
typedef enum { DKB__DDB_SUCCESS = 0, DKB__DDB_ERROR = 1 } dkb__ddb_state;
/* duckdb_type values (DUCKDB_TYPE_*) of the columns we create. */
enum {
    DKB__DDB_TYPE_INTEGER = 4,
    DKB__DDB_TYPE_BIGINT = 5,
    DKB__DDB_TYPE_DATE = 13,
    DKB__DDB_TYPE_VARCHAR = 17,
};
typedef struct { void *internal_ptr; } *dkb__ddb_database;
typedef struct { void *internal_ptr; } *dkb__ddb_connection;
typedef struct { void *internal_ptr; } *dkb__ddb_prepared;
typedef struct { void *internal_ptr; } *dkb__ddb_appender;
typedef struct { void *internal_ptr; } *dkb__ddb_logical_type;
typedef struct { void *internal_ptr; } *dkb__ddb_data_chunk;
typedef struct { void *internal_ptr; } *dkb__ddb_vector;
/* duckdb_result: caller-allocated; only DuckDB's functions read it. */
typedef struct {
    dkb__ddb_idx deprecated_column_count;
    dkb__ddb_idx deprecated_row_count;
    dkb__ddb_idx deprecated_rows_changed;
    void *deprecated_columns;
    char *deprecated_error_message;
    void *internal_data;
} dkb__ddb_result;

/* The resolved functions, named as in duckdb.h without the "duckdb_". */
typedef struct dkb__duckdb_api {
    const char *path;  /* the file that was loaded */
    const char *(*library_version)(void);
    dkb__ddb_state (*open)(const char *path, dkb__ddb_database *out);
    void (*close)(dkb__ddb_database *db);
    dkb__ddb_state (*connect)(dkb__ddb_database db, dkb__ddb_connection *out);
    void (*disconnect)(dkb__ddb_connection *con);
    dkb__ddb_state (*query)(dkb__ddb_connection con, const char *sql, dkb__ddb_result *out);
    const char *(*result_error)(dkb__ddb_result *r);
    void (*destroy_result)(dkb__ddb_result *r);
    dkb__ddb_idx (*row_count)(dkb__ddb_result *r);
    char *(*value_varchar)(dkb__ddb_result *r, dkb__ddb_idx col, dkb__ddb_idx row);
    void (*free)(void *p);
    dkb__ddb_state (*prepare)(dkb__ddb_connection con, const char *sql, dkb__ddb_prepared *out);
    const char *(*prepare_error)(dkb__ddb_prepared p);
    dkb__ddb_state (*bind_varchar)(dkb__ddb_prepared p, dkb__ddb_idx param, const char *val);
    dkb__ddb_state (*execute_prepared)(dkb__ddb_prepared p, dkb__ddb_result *out);
    void (*destroy_prepare)(dkb__ddb_prepared *p);
    dkb__ddb_state (*appender_create)(dkb__ddb_connection con, const char *schema, const char *table,
                                      dkb__ddb_appender *out);
    const char *(*appender_error)(dkb__ddb_appender a);
    dkb__ddb_state (*append_data_chunk)(dkb__ddb_appender a, dkb__ddb_data_chunk chunk);
    dkb__ddb_state (*appender_close)(dkb__ddb_appender a);
    dkb__ddb_state (*appender_destroy)(dkb__ddb_appender *a);
    dkb__ddb_logical_type (*create_logical_type)(int type);
    dkb__ddb_logical_type (*create_decimal_type)(uint8_t width, uint8_t scale);
    void (*destroy_logical_type)(dkb__ddb_logical_type *t);
    dkb__ddb_data_chunk (*create_data_chunk)(dkb__ddb_logical_type *types, dkb__ddb_idx ncols);
    void (*destroy_data_chunk)(dkb__ddb_data_chunk *chunk);
    void (*data_chunk_reset)(dkb__ddb_data_chunk chunk);
    dkb__ddb_vector (*data_chunk_get_vector)(dkb__ddb_data_chunk chunk, dkb__ddb_idx col);
    void (*data_chunk_set_size)(dkb__ddb_data_chunk chunk, dkb__ddb_idx n);
    void *(*vector_get_data)(dkb__ddb_vector v);
    void (*vector_assign_string_element_len)(dkb__ddb_vector v, dkb__ddb_idx i, const char *s, dkb__ddb_idx len);
    dkb__ddb_idx (*vector_size)(void);
    dkb__ddb_idx (*column_count)(dkb__ddb_result *r);
    const char *(*column_name)(dkb__ddb_result *r, dkb__ddb_idx col);
} dkb__duckdb_api;

/* Load libduckdb (once per process; later calls return the same table) and
 * set *out to its functions. Thread-safe. Errors, each one line in err:
 * DKB_ENOENT "libduckdb not found: set DKB_LIBDUCKDB or run
 * tools/install-deps.sh" (nothing loadable on the search path above),
 * DKB_EIO (a file that exists but does not load: dlerror's text),
 * DKB_EVERSION (a library without one of the functions: it names it).
 * A failure is remembered: later calls fail the same way. */
int dkb__duckdb_load(const dkb__duckdb_api **out, dkb_error *err);

#endif
