/* candidate.h: the ABI between the DataKernelBench harness and a candidate
 * implementation of one TPC-H query. This is the only header a candidate
 * includes; a candidate links against nothing of DataKernelBench (the
 * harness rejects a candidate that imports any symbol outside an allow-list
 * of libc, libm and OpenMP), so it cannot pass by calling the baseline.
 *
 * A candidate is one C file (qNN.MODE.c, target C/OpenMP) or one CUDA file
 * (qNN.MODE.cu, target CUDA, built by nvcc for sm_90; see "CUDA" below)
 * defining exactly one of:
 *
 *   core mode (file qNN.core.c): replaces the query's core function. It gets
 *   the vectors and scalars the baseline plan's prepare step makes, and
 *   fills the output vectors the baseline's finish step consumes (same
 *   names, types and scales as the baseline's core outputs):
 *
 *     int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out,
 *                            const dkb_cand_env *env);
 *
 *   full mode (file qNN.full.c): replaces the whole query. It gets a
 *   read-only view of the database and the parameters, and fills the result
 *   table, whose columns the harness declares (names, types and scales of
 *   the baseline's result):
 *
 *     int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p,
 *                            dkb_cand_result *res, const dkb_cand_env *env);
 *
 *   Under a memory budget the largest tables may reach a full-mode
 *   candidate only partition by partition, through a loader in env: see
 *   "full mode under a memory budget" below.
 *
 * Both return 0 (DKB_CAND_OK) on success; any other value reports a
 * failure (verdict returned_error). Return one of the DKB_CAND_E* codes
 * below, so the report can say what went wrong ("returned 4
 * (DKB_CAND_ECAP: an output is over its cap)"); any other nonzero value is
 * a plain failure ("returned 17").
 *
 * Rules the harness enforces: inputs are read-only (a write is a fault);
 * output buffers hold garbage on entry (write every element you report;
 * only a result column's is_null flags start zeroed); at most `cap`
 * elements per output (`bytes_cap` bytes for strings); no state survives
 * between calls: every call starts from the same state (static memory and
 * what constructors allocated restored, blocks a call leaves allocated
 * freed after it, freed memory overwritten, every thread's stack below the
 * call zeroed, errno, stdio, ctype and floating-point settings and OpenMP
 * settings put back; docs/harness.md "No state survives a call"); malloc,
 * free and friends work as usual (the harness links them to wraps that
 * keep that record); the result must be right for every parameter set, not only the
 * qualification values; no threads may outlive the call (OpenMP regions
 * are fine, with at most env->threads threads). The harness, not the
 * candidate, times the calls.
 *
 * What a candidate may use: this header and the system's headers; imports
 * from libc's memory, string, conversion, sorting, malloc and printing
 * (stdout/stderr) functions, libm, and OpenMP (what the compiler emits,
 * omp_get_*, omp_set_num_threads, locks). Nothing that reaches the system
 * (files, processes, threads, signals, clocks, dynamic loading, thread-local
 * storage) and nothing of DataKernelBench.
 *
 * CUDA (`dkb eval --backend cuda`, docs/harness.md "CUDA candidates"): the
 * same structs, with the data on the GPU. Core mode: input and output
 * vectors' data/bytes are device pointers (outputs allocated by the harness
 * and filled with garbage before every call; set n/nbytes in the host
 * descriptor). Full mode: every table column's data/bytes are device
 * pointers (resident, shared with the baseline; read-only: a write is
 * caught by checksums), dictionaries and all descriptors are host memory,
 * and the result table is host memory, filled after copying the small
 * result back. Launch on env->stream (dkb_cand_stream(env)); the harness
 * times until the whole device is idle, so work on other streams counts.
 * Temporaries: cudaMallocAsync/cudaFreeAsync on env->stream draw on the
 * device's default pool, which the harness keeps across calls (as the
 * baseline keeps its arena), so they cost microseconds, not a fresh mapping.
 * Allocate during the call (an allocation in a constructor fails). No
 * device state survives a call: frees (cudaFree, cudaFreeAsync,
 * cudaFreeHost) are deferred until the call has returned, then every block
 * the call allocated, freed or not, is poisoned and freed, so contents on
 * allocation are unspecified (frees past 1/8 of device memory in one call
 * are done in the call, at the cost of a device synchronisation); before
 * every call __device__ and __constant__ variables are put back to their
 * contents at load, env->stream's attributes to a new stream's, and kernel
 * attributes a call changed (cudaFuncSetAttribute) to what they were.
 * Imports: the C list plus the CUDA runtime, CUB and Thrust (their headers;
 * NVTX is compiled out), except device selection, reset, limits, IPC, the
 * driver API, managed memory (__managed__ too), CUDA arrays, memory pools
 * of one's own, run-time module loading and host callbacks
 * (cudaLaunchHostFunc, cudaStreamAddCallback, graph host nodes).
 *
 * Data encodings (docs/store.md): dates are int32 days since 1970-01-01;
 * DECIMAL(15,2) values are int64 hundredths (scale 2); a product of two
 * such values has scale 4, and so on; low-cardinality strings are uint8
 * codes into a sorted dictionary (code order is string order); free text is
 * int64 offsets (n + 1) into bytes.
 *
 * Words used here (core and full mode, prepare, core, finish, baseline,
 * candidate, expert, seed, floor, must-read bound): docs/README.md,
 * "Glossary". */
#ifndef DKB_CANDIDATE_H
#define DKB_CANDIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" { /* CUDA candidates are compiled as C++ (nvcc): the ABI stays C */
#endif

#define DKB_CANDIDATE_ABI_VERSION 1

/* Return codes of the entry points: (name, value, meaning), one table that
 * makes the enum here and the harness's report text ("returned 4
 * (DKB_CAND_ECAP: an output is over its cap)"). The values are fixed. */
#define DKB_CAND_STATUS_MAP(X)                                                          \
    X(DKB_CAND_OK, 0, "success")                                                        \
    X(DKB_CAND_EINVAL, 1, "bad input: a column, parameter or output is missing or of an unexpected type") \
    X(DKB_CAND_ENOMEM, 2, "out of memory (host or device)")                             \
    X(DKB_CAND_ECUDA, 3, "a CUDA call failed")                                          \
    X(DKB_CAND_ECAP, 4, "an output is over its cap")                                    \
    X(DKB_CAND_EINTERNAL, 5, "an internal check failed (data it does not handle)")            \
    X(DKB_CAND_ERANKS, 6, "a collective failed: another rank crashed, timed out or returned without it")

typedef enum {
#define DKB__CAND_STATUS_ENUM(name, value, text) name = value,
    DKB_CAND_STATUS_MAP(DKB__CAND_STATUS_ENUM)
#undef DKB__CAND_STATUS_ENUM
} dkb_cand_status;

/* Element types (same numbering as TensorPlan's dkb_tp_dtype). */
typedef enum {
    DKB_CAND_BOOL = 0, /* uint8 0/1 */
    DKB_CAND_U8,       /* uint8 dictionary codes (see dict) */
    DKB_CAND_I8,
    DKB_CAND_I16,
    DKB_CAND_I32,
    DKB_CAND_I64,
    DKB_CAND_I128,     /* __int128: exact sums of scaled decimals */
    DKB_CAND_F64,
    DKB_CAND_STR,      /* n + 1 int64 offsets in data, characters in bytes */
} dkb_cand_type;

/* A sorted dictionary of strings (not NUL-terminated). */
typedef struct dkb_cand_dict {
    int size;
    const char *const *str;
    const size_t *len;
} dkb_cand_dict;

/* A vector: a column, a prepared input, or an output to fill. */
typedef struct dkb_cand_vec {
    const char *name;          /* "l_shipdate" */
    dkb_cand_type type;
    int scale;                 /* decimal digits of integer values (2: hundredths) */
    int64_t n;                 /* elements; outputs: set it (n <= cap) */
    void *data;                /* n elements (STR: n + 1 int64 offsets) */
    char *bytes;               /* STR: characters */
    int64_t nbytes;            /* STR: characters used; outputs: set it */
    const dkb_cand_dict *dict; /* U8 inputs: the dictionary its codes index, else NULL
                                * (NULL for outputs: U8 output codes index the
                                * dictionary of the input they come from) */
    int64_t cap;               /* outputs: elements data can hold */
    int64_t bytes_cap;         /* outputs, STR: characters bytes can hold */
} dkb_cand_vec;

/* A named scalar: an integer (in the units the baseline's prepare uses, e.g.
 * days or hundredths), a float, or a string (e.g. a LIKE pattern). */
typedef struct dkb_cand_scalar {
    const char *name;
    int64_t i;
    double f;
    const char *s;             /* NULL unless a string */
} dkb_cand_scalar;

/* Core mode's inputs and outputs. */
typedef struct dkb_cand_set {
    int nvec;
    dkb_cand_vec *vec;         /* inputs: read-only */
    int nscalar;
    const dkb_cand_scalar *scalar;
} dkb_cand_set;

/* Full mode's database: every table of the store, every column. */
typedef struct dkb_cand_table {
    const char *name;          /* "lineitem" */
    int64_t rows;
    int ncols;
    const dkb_cand_vec *cols;  /* read-only */
} dkb_cand_table;

typedef struct dkb_cand_db {
    double scale_factor;
    int ntables;
    const dkb_cand_table *tables;
} dkb_cand_db;

/* Full mode's parameters (names as `dkb sql QUERY --params-json` lists). */
typedef enum {
    DKB_CAND_PARAM_INT = 0,    /* i */
    DKB_CAND_PARAM_DATE,       /* i: days since 1970-01-01 */
    DKB_CAND_PARAM_DECIMAL,    /* i at `scale` digits: 0.06 is 6 at scale 2 */
    DKB_CAND_PARAM_STRING,     /* s */
} dkb_cand_param_kind;

typedef struct dkb_cand_param {
    const char *name;
    dkb_cand_param_kind kind;
    int scale;
    int64_t i;
    const char *s;
} dkb_cand_param;

typedef struct dkb_cand_params {
    int n;
    const dkb_cand_param *p;
} dkb_cand_params;

/* Full mode's result: columns declared by the harness; fill rows
 * [0, nrows) of every column and set nrows (<= cap). */
typedef enum {
    DKB_CAND_RES_INT = 0,      /* i64 */
    DKB_CAND_RES_DECIMAL,      /* dec, exact at `scale` digits */
    DKB_CAND_RES_FLOAT,        /* f64 */
    DKB_CAND_RES_DATE,         /* date: days since 1970-01-01 */
    DKB_CAND_RES_STRING,       /* str_off (cap + 1 offsets) into str_bytes */
} dkb_cand_res_type;

typedef struct dkb_cand_res_col {
    const char *name;
    dkb_cand_res_type type;
    int scale;
    int64_t *i64;
    __int128 *dec;
    double *f64;
    int32_t *date;
    int64_t *str_off;          /* str_off[0] = 0; row r is [str_off[r], str_off[r+1]) */
    char *str_bytes;
    int64_t bytes_cap;
    uint8_t *is_null;          /* zeroed on entry; set 1 for SQL NULL (e.g. a sum over no rows) */
} dkb_cand_res_col;

typedef struct dkb_cand_result {
    int ncols;
    dkb_cand_res_col *cols;
    int64_t cap;               /* rows each column can hold */
    int64_t nrows;             /* set it */
} dkb_cand_result;

/* ---- full mode under a memory budget (`dkb eval --mem-budget SIZE`) ----
 *
 * When the query's columns do not fit the budget, the harness streams the
 * query's large tables by partition (docs/partitions.md: lineitem and
 * orders co-partitioned by orderkey, or partsupp and part by partkey; the
 * same tables the baseline streams) and env->budget describes it:
 *
 *   - db still lists every table and column (names, types, scales,
 *     dictionaries, rows), but the columns of the streamed tables have
 *     data == NULL and bytes == NULL: the only way to their values is
 *     budget->load, which copies rows of whole partitions into harness
 *     memory, read-only, and hands out their descriptors. The other tables
 *     are in db whole, as without a budget.
 *   - The loads a candidate holds at once (loaded, not yet released) may
 *     total at most budget->load_limit bytes (the budget minus the
 *     baseline's resident columns: the same room the baseline's runs of
 *     partitions get); a load past it fails with DKB_CAND_ENOMEM. Release
 *     each load when done with it: its memory is then inaccessible for
 *     the rest of the call, so a pointer kept past the release faults (crash,
 *     "read a partition it had released"), as a write into a load does
 *     (wrote_input). A call may load at most 4 x the streamed tables'
 *     bytes in all.
 *   - The candidate chooses what to load (which columns, which
 *     partitions, how many at once) and in which order: to overlap, hold
 *     the next load while working on the current one (within load_limit).
 *     load and release may be called from any thread (they lock); the
 *     harness times the whole call, loads included.
 *   - A candidate that can run this way says so by defining, once at file
 *     scope, DKB_CANDIDATE_STREAMS (below). One that does not is not run
 *     when the query streams (verdict bad_entry, "does not stream"); with
 *     no budget, or when the query fits it, env->budget is NULL or has
 *     nstreamed == 0, db is whole, and nothing changes.
 *
 * Bytes a load counts: per column, rows x element size (text: rows x 8 for
 * the offsets plus the characters), the rows being those of its table in
 * the partitions loaded. load_size tells the count before loading.
 *
 * A complete full-mode Q6 that streams lineitem (and runs whole without a
 * budget), in C:
 *
 *   #include <dkb/candidate.h>
 *   DKB_CANDIDATE_STREAMS;
 *
 *   static __int128 q6_rows(const int32_t *ship, const int64_t *disc, const int64_t *qty,
 *                           const int64_t *price, int64_t n, const dkb_cand_params *p) {
 *       int64_t lo = dkb_cand_param_find(p, "date")->i, hi = ...; // DATE + 1 year
 *       ... the sum of price * disc over qualifying rows ...
 *   }
 *
 *   int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p,
 *                          dkb_cand_result *res, const dkb_cand_env *env) {
 *       static const char *const cols[] = {"l_shipdate", "l_discount", "l_quantity",
 *                                          "l_extendedprice"};
 *       const dkb_cand_budget *b = env->budget;
 *       __int128 sum = 0;
 *       if (!b || !b->nstreamed) {                   // whole tables in db
 *           const dkb_cand_vec *c[4];
 *           for (int i = 0; i < 4; i++) c[i] = dkb_cand_column(db, "lineitem", cols[i]);
 *           sum = q6_rows(c[0]->data, c[1]->data, c[2]->data, c[3]->data, c[0]->n, p);
 *       } else {                                     // one partition at a time
 *           for (int part = 0; part < b->nparts; part++) {
 *               dkb_cand_load l;
 *               int rc = b->load(env, part, 1, 4, cols, &l);
 *               if (rc) return rc;                   // DKB_CAND_ENOMEM: over load_limit
 *               sum += q6_rows(l.cols[0].data, l.cols[1].data, l.cols[2].data,
 *                              l.cols[3].data, l.cols[0].n, p);
 *               if ((rc = b->release(env, &l))) return rc;
 *           }
 *       }
 *       res->cols[0].dec[0] = sum;
 *       res->nrows = 1;
 *       return DKB_CAND_OK;
 *   }
 *
 * (src/kernels/cpu/q06.full.c is the same, whole; the experts that stream
 * are listed in docs/partitions.md.)
 *
 * On CUDA (`dkb eval --backend cuda --mem-budget SIZE`) the same loader
 * brings partitions from the host store into device memory the harness
 * owns, and load_limit counts that device memory:
 *   - load returns device addresses (cols[i].data, and .bytes for text;
 *     dict as in db). It issues the copies (host store -> pinned staging ->
 *     device, on a copy stream of the harness's) and makes env->stream wait
 *     for them, so work enqueued on env->stream after load returns sees the
 *     rows (work on another stream must first wait for env->stream). It may
 *     return before the copies are done: the host is held only while the
 *     rows are staged.
 *   - release: call it after enqueuing the work that reads the load. The
 *     memory is reused (and first overwritten) only after the work enqueued
 *     on env->stream before the release has finished, so a pointer kept past
 *     the release reads other data (a wrong answer), never the rows again.
 *   - To overlap copies with compute, hold two loads: load run i + 1 before
 *     releasing run i, so its copy runs while run i's kernels do (both must
 *     fit load_limit; dkb/cand_stream.h's DKB_STREAM_OVERLAP does this).
 *   - Writing into a load is not allowed (the rows are the store's) and is
 *     not needed: keep accumulators in your own memory.
 *   - db's device columns under a budget are the ones the query reads
 *     (the harness uploads them for this query; when it streams, only the
 *     tables it keeps whole); every other column of db has data and bytes
 *     NULL and nbytes 0, as the streamed tables' columns have. Columns of
 *     lineitem, orders, part and partsupp reach the candidate only so:
 *     the harness holds no copy of them on the device, and the baseline's
 *     streaming buffers are zeroed after each of its runs.
 *   The Q6 above is a CUDA candidate once q6_rows launches a kernel on
 *   env->stream that adds into device accumulators (src/kernels/cuda/q06.full.cu). */

struct dkb_cand_env;

/* One load: rows of partitions first .. first + count - 1 of the streamed
 * tables, for the columns asked for (filled by budget->load). */
typedef struct dkb_cand_load {
    int first, count;          /* the partitions */
    int64_t row_start[2];      /* per streamed table (budget->streamed order): the
                                * first row loaded, in the whole table */
    int64_t rows[2];           /* and how many rows of it */
    int64_t bytes;             /* what it counts against load_limit */
    int ncols;
    const dkb_cand_vec *cols;  /* the columns, in the order asked for: read-only;
                                * n = the rows of its table in this load; STR
                                * offsets start at 0; dict as in db */
    uint64_t id;               /* the loader's (for release) */
} dkb_cand_load;

typedef struct dkb_cand_budget {
    int64_t budget;            /* --mem-budget, bytes */
    int64_t load_limit;        /* loads held at once: at most this many bytes */
    int nstreamed;             /* streamed tables: 0 (the query fits: db is whole), 1 or 2 */
    const char *streamed[2];   /* their names, e.g. "lineitem", "orders" */
    int nparts;                /* partitions of the streamed tables (co-partitioned) */
    const int64_t *part_start[2]; /* per streamed table, nparts + 1 row offsets:
                                * partition i is rows [part_start[s][i], part_start[s][i + 1]) */
    /* Load partitions first .. first + count - 1 (1 <= count, first + count
     * <= nparts) of the ncols named columns (each a column of a streamed
     * table; from both tables at once when two stream) into *out (the
     * candidate's memory, written only on success). DKB_CAND_OK;
     * DKB_CAND_EINVAL (a bad range, name or argument, an out inside a
     * load's memory: *out untouched); DKB_CAND_ENOMEM (it would hold more
     * than load_limit, or the call's loads passed 4 x the streamed
     * tables' bytes; *out untouched). Nothing of an earlier call is found
     * in a load: ids count from 1 in every call, and what a load makes
     * readable past its data is zero. */
    int (*load)(const struct dkb_cand_env *env, int first, int count, int ncols, const char *const *cols,
                dkb_cand_load *out);
    /* Give a load back (its memory made inaccessible). DKB_CAND_OK, DKB_CAND_EINVAL
     * (not a load of this call, or released already). */
    int (*release)(const struct dkb_cand_env *env, const dkb_cand_load *load);
    /* The bytes the same load would count, or -1 for bad arguments. */
    int64_t (*load_size)(const struct dkb_cand_env *env, int first, int count, int ncols, const char *const *cols);
} dkb_cand_budget;

/* Define once at file scope in a full-mode candidate that handles
 * env->budget with nstreamed > 0 (an exported marker the harness looks for). */
#ifdef __cplusplus
#define DKB_CANDIDATE_STREAMS extern "C" const int dkb_candidate_streams = 1
#else
#define DKB_CANDIDATE_STREAMS const int dkb_candidate_streams = 1
#endif

/* ---- ranks: collectives over the processes a call runs on ----
 *
 * env->rank and env->nranks say which of how many processes (ranks) this
 * call runs on, and env->comm has the collectives a candidate merges its
 * ranks' partial answers with. Every rank is a call of the same candidate
 * on its own share of the data; the harness counts the result of rank 0
 * only (other ranks' result tables are ignored), so rank 0 must hold the
 * merged answer when it returns.
 *
 * `dkb eval` alone runs every call on one rank (rank 0 of 1): the
 * collectives then return the caller's own values, so a candidate written
 * for K ranks runs as it is on one. `mpirun -np K dkb eval` (CPU backend,
 * full mode; docs/distributed.md, "The harness across ranks") calls a
 * candidate that defines DKB_CANDIDATE_RANKS on every rank at once, with
 * rank r's share of the data: the tables the query streams by partition
 * (lineitem and orders, or part and partsupp, as the baseline's partition
 * plan does) cut to partitions [P r / K, P (r + 1) / K) of the store's P,
 * every other table whole. A share's vectors point into the store at its
 * first row; a text column's offsets are the whole column's from that row
 * (offsets[0] need not be 0), into the whole column's characters. A
 * candidate without the marker runs on rank 0 alone, over the whole
 * store, as rank 0 of 1.
 *
 * Every collective is called by every rank in the same order with the
 * same counts (as MPI's); DKB_CAND_OK, DKB_CAND_EINVAL (a bad count, op
 * or pointer; nothing exchanged) or DKB_CAND_ERANKS (another rank crashed,
 * timed out or returned before reaching it: the row fails on every rank;
 * return the code). Results are the same on every rank, bit for bit:
 * reductions run in rank order (so double sums are deterministic), __int128
 * sums are exact. Buffers are the candidate's memory; they may be called
 * from one thread at a time. A candidate meant for several ranks defines
 * DKB_CANDIDATE_RANKS (below).
 *
 * A complete full-mode Q6 over ranks: tests/candidates/ranks/q06.full.c
 * (each rank sums its rows, one all-reduce of the __int128 sum, rank 0
 * writes the row). The optional header dkb/cand_ranks.h has helpers that
 * merge partials in one call each (dense sums, minima and maxima, gathers
 * of records in rank order, top-k; no-ops on one rank); the 22 CPU experts
 * (src/kernels/cpu) use it. */

typedef enum { DKB_CAND_SUM = 0, DKB_CAND_MIN, DKB_CAND_MAX } dkb_cand_op;

typedef struct dkb_cand_comm {
    /* buf[0, n) replaced, elementwise, by the op over the ranks' buffers. */
    int (*allreduce_i64)(const struct dkb_cand_env *env, int64_t *buf, int64_t n, dkb_cand_op op);
    int (*allreduce_f64)(const struct dkb_cand_env *env, double *buf, int64_t n, dkb_cand_op op);
    int (*allreduce_i128)(const struct dkb_cand_env *env, __int128 *buf, int64_t n, dkb_cand_op op);
    /* all[r] := rank r's `mine` (env->nranks entries). */
    int (*allgather_sizes)(const struct dkb_cand_env *env, int64_t mine, int64_t *all);
    /* recv := rank 0's bytes, then rank 1's, ...: counts[r] bytes of rank r
     * (as allgather_sizes gave them; counts[rank] == bytes), recv holding
     * their sum. */
    int (*allgatherv)(const struct dkb_cand_env *env, const void *send, int64_t bytes, void *recv,
                      const int64_t *counts);
    /* Every rank has reached it. */
    int (*barrier)(const struct dkb_cand_env *env);
} dkb_cand_comm;

/* Define once at file scope in a full-mode candidate that merges its
 * ranks' answers through env->comm (an exported marker, as
 * DKB_CANDIDATE_STREAMS). On one rank it changes nothing. */
#ifdef __cplusplus
#define DKB_CANDIDATE_RANKS extern "C" const int dkb_candidate_ranks = 1
#else
#define DKB_CANDIDATE_RANKS const int dkb_candidate_ranks = 1
#endif

/* What the candidate may use. The members after budget were appended
 * without an ABI version change: a candidate built before them reads only
 * the first four. */
typedef struct dkb_cand_env {
    int abi_version;           /* DKB_CANDIDATE_ABI_VERSION */
    int threads;               /* OpenMP threads to use */
    void *stream;              /* CUDA targets: the cudaStream_t to launch on */
    const dkb_cand_budget *budget; /* full mode under --mem-budget, else NULL (above) */
    int rank;                  /* this call's rank, 0 <= rank < nranks (above: "ranks") */
    int nranks;                /* ranks the call runs on (1 without mpirun) */
    const dkb_cand_comm *comm; /* the collectives (never NULL) */
} dkb_cand_env;

/* Entry points (define exactly one). */
int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env);
int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *p, dkb_cand_result *res,
                       const dkb_cand_env *env);

/* ---- lookups (inline; candidates link nothing) ---- */

static inline dkb_cand_vec *dkb_cand_vec_find(const dkb_cand_set *s, const char *name) {
    for (int i = 0; i < s->nvec; i++)
        if (strcmp(s->vec[i].name, name) == 0) return &s->vec[i];
    return NULL;
}

static inline const dkb_cand_scalar *dkb_cand_scalar_find(const dkb_cand_set *s, const char *name) {
    for (int i = 0; i < s->nscalar; i++)
        if (strcmp(s->scalar[i].name, name) == 0) return &s->scalar[i];
    return NULL;
}

static inline const dkb_cand_table *dkb_cand_table_find(const dkb_cand_db *db, const char *name) {
    for (int i = 0; i < db->ntables; i++)
        if (strcmp(db->tables[i].name, name) == 0) return &db->tables[i];
    return NULL;
}

static inline const dkb_cand_vec *dkb_cand_column(const dkb_cand_db *db, const char *table,
                                                  const char *column) {
    const dkb_cand_table *t = dkb_cand_table_find(db, table);
    for (int i = 0; t && i < t->ncols; i++)
        if (strcmp(t->cols[i].name, column) == 0) return &t->cols[i];
    return NULL;
}

static inline const dkb_cand_param *dkb_cand_param_find(const dkb_cand_params *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->p[i].name, name) == 0) return &p->p[i];
    return NULL;
}

/* Column `name` of a load, or NULL. */
static inline const dkb_cand_vec *dkb_cand_load_column(const dkb_cand_load *l, const char *name) {
    for (int i = 0; l && i < l->ncols; i++)
        if (strcmp(l->cols[i].name, name) == 0) return &l->cols[i];
    return NULL;
}

/* The code of dictionary entry s, or -1. */
static inline int dkb_cand_dict_code(const dkb_cand_dict *d, const char *s) {
    size_t n = strlen(s);
    for (int i = 0; d && i < d->size; i++)
        if (d->len[i] == n && memcmp(d->str[i], s, n) == 0) return i;
    return -1;
}

#ifdef __CUDACC__
/* CUDA candidates: the stream to launch on, typed. */
static inline cudaStream_t dkb_cand_stream(const dkb_cand_env *env) { return (cudaStream_t)env->stream; }
#endif

#ifdef __cplusplus
}
#endif

#endif
