/* eval_cuda.c: the evaluating process's side of `dkb eval --backend cuda`
 * (harness_cuda.h): the store's columns are loaded onto the GPU once (a
 * CUDA TensorPlan context: dkb_tp_column makes each resident, one
 * cudaMalloc per column, TEXT characters in a second), exported to every
 * worker as CUDA IPC handles, checksummed on the device, and after every
 * worker run checked again: a column a candidate changed is re-uploaded
 * from the store's mapped files before the next candidate runs. Under
 * --mem-budget the tables a partitioned plan can stream are left out (see
 * dkb__eval_cuda_open). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness_cuda.h"

#ifdef DKB_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <cjson/cJSON.h>

#include "queries/partition.h"  // defines: dkb__part_streamable

typedef struct eval_col {
    const dkb_store_column *col;
    char label[160];           /* "lineitem.l_shipdate" */
    void *data;                /* device (values or TEXT offsets) */
    size_t data_size;
    char *bytes;               /* device TEXT characters, else NULL */
    int64_t nbytes;
    const void *host_data;     /* the mapped file: what data holds */
    const char *host_bytes;
    uint64_t sum_data, sum_bytes;
} eval_col;

struct dkb__eval_cuda {
    int device;
    dkb_store *db;
    dkb_tp *tp;
    int n;
    eval_col *cols;
    char *json;
};

static int cu_fail(dkb_error *err, const char *what, const char *where, cudaError_t e) {
    return dkb_fail(err, DKB_EIO, "eval --backend cuda: %s %s: %s (%s)", what, where, cudaGetErrorString(e),
                    cudaGetErrorName(e));
}

static void hex_handle(const cudaIpcMemHandle_t *h, char out[2 * CUDA_IPC_HANDLE_SIZE + 1]) {
    const unsigned char *b = (const unsigned char *)h->reserved;
    for (int i = 0; i < CUDA_IPC_HANDLE_SIZE; i++) {
        out[2 * i] = "0123456789abcdef"[b[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
    }
    out[2 * CUDA_IPC_HANDLE_SIZE] = 0;
}

/* Export one column: handles into the JSON array, checksums into col. */
static int export_col(eval_col *ec, const char *table, const char *name, cJSON *arr, dkb_error *err) {
    cudaIpcMemHandle_t h;
    char hex[2 * CUDA_IPC_HANDLE_SIZE + 1];
    cudaError_t e = cudaIpcGetMemHandle(&h, ec->data);
    if (e != cudaSuccess) return cu_fail(err, "cudaIpcGetMemHandle", ec->label, e);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    hex_handle(&h, hex);
    int bad = !cJSON_AddStringToObject(o, "table", table) || !cJSON_AddStringToObject(o, "column", name) ||
              !cJSON_AddStringToObject(o, "data", hex) ||
              !cJSON_AddNumberToObject(o, "data_size", (double)ec->data_size);
    if (ec->bytes) {
        e = cudaIpcGetMemHandle(&h, ec->bytes);
        if (e != cudaSuccess) return cu_fail(err, "cudaIpcGetMemHandle (characters)", ec->label, e);
        hex_handle(&h, hex);
        bad |= !cJSON_AddStringToObject(o, "bytes", hex);
    } else {
        bad |= !cJSON_AddNullToObject(o, "bytes");
    }
    bad |= !cJSON_AddNumberToObject(o, "nbytes", (double)ec->nbytes);
    if (bad) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int rc = dkb__cuda_checksum(ec->data, ec->data_size, NULL, &ec->sum_data, err);
    if (!rc && ec->bytes) rc = dkb__cuda_checksum(ec->bytes, (size_t)ec->nbytes, NULL, &ec->sum_bytes, err);
    return rc;
}

int dkb__eval_cuda_devices(void) {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? n : 0;
}

int dkb__eval_cuda_open(const char *store_dir, int device, int budgeted, dkb__eval_cuda **out, dkb_error *err) {
    *out = NULL;
    dkb__eval_cuda *c = calloc(1, sizeof *c);
    if (!c) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    *out = c;
    c->device = device;
    cudaError_t de = cudaSetDevice(device);
    if (de != cudaSuccess) {
        char where[32];
        snprintf(where, sizeof where, "%d", device);
        return cu_fail(err, "cudaSetDevice", where, de);
    }
    int rc = dkb_store_open(store_dir, 0, &c->db, err);
    if (!rc) rc = dkb_tp_create(DKB_TP_CUDA, 1, &c->tp, err);
    if (rc) return rc;
    int total = 0;
    for (int t = 0; t < dkb_store_ntables(c->db); t++) total += dkb_store_table_ncolumns(dkb_store_table_at(c->db, t));
    c->cols = calloc((size_t)(total ? total : 1), sizeof *c->cols);
    cJSON *arr = cJSON_CreateArray();
    if (!c->cols || !arr) {
        cJSON_Delete(arr);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    for (int t = 0; !rc && t < dkb_store_ntables(c->db); t++) {
        const dkb_store_table *tab = dkb_store_table_at(c->db, t);
        if (budgeted && dkb__part_streamable(dkb_store_table_name(tab))) continue;
        for (int k = 0; !rc && k < dkb_store_table_ncolumns(tab); k++) {
            const dkb_store_column *col = dkb_store_table_column_at(tab, k);
            eval_col *ec = &c->cols[c->n++];
            ec->col = col;
            snprintf(ec->label, sizeof ec->label, "%s.%s", dkb_store_table_name(tab), dkb_column_name(col));
            const dkb_tensor *x = dkb_tp_column(c->tp, col);
            if (!x || dkb_tp_status(c->tp, err)) {
                rc = err && err->code ? err->code : dkb_fail(err, DKB_EIO, "cannot load %s onto the GPU", ec->label);
                break;
            }
            int str = x->dtype == DKB_TP_STR;
            ec->data = x->data;
            ec->data_size = (size_t)(str ? x->n + 1 : x->n) * dkb_tp_dtype_size(x->dtype);
            ec->host_data = str ? (const void *)dkb_column_text_offsets(col) : dkb_column_data(col);
            if (str) {
                uint64_t nb = 0;
                ec->host_bytes = dkb_column_text_bytes(col, &nb);
                ec->bytes = x->bytes;
                ec->nbytes = (int64_t)nb;
            }
            rc = export_col(ec, dkb_store_table_name(tab), dkb_column_name(col), arr, err);
        }
    }
    if (!rc && !(c->json = cJSON_PrintUnformatted(arr))) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    cJSON_Delete(arr);
    return rc;
}

const char *dkb__eval_cuda_columns(const dkb__eval_cuda *c) { return c ? c->json : NULL; }

static void add_name(char *list, size_t n, const char *name) {
    size_t used = strlen(list);
    if (used + strlen(name) + 8 >= n) {
        if (used + 5 < n && !strstr(list, ", ...")) strcat(list, ", ...");
        return;
    }
    if (used) strcat(list, ", ");
    strcat(list, name);
}

int dkb__eval_cuda_restore(dkb__eval_cuda *c, char *changed, size_t n, int *nchanged, dkb_error *err) {
    if (n) changed[0] = 0;
    *nchanged = 0;
    cudaError_t de = cudaSetDevice(c->device);
    if (de != cudaSuccess) return cu_fail(err, "cudaSetDevice", "(restore)", de);
    /* a worker that died leaves no error here: its context was its own */
    for (int i = 0; i < c->n; i++) {
        eval_col *ec = &c->cols[i];
        uint64_t sd = 0, sb = 0;
        int rc = dkb__cuda_checksum(ec->data, ec->data_size, NULL, &sd, err);
        if (!rc && ec->bytes) rc = dkb__cuda_checksum(ec->bytes, (size_t)ec->nbytes, NULL, &sb, err);
        if (rc) return rc;
        if (sd == ec->sum_data && sb == ec->sum_bytes) continue;
        (*nchanged)++;
        add_name(changed, n, ec->label);
        cudaError_t e = cudaMemcpy(ec->data, ec->host_data, ec->data_size, cudaMemcpyHostToDevice);
        if (e == cudaSuccess && ec->bytes && ec->nbytes)
            e = cudaMemcpy(ec->bytes, ec->host_bytes, (size_t)ec->nbytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) return cu_fail(err, "restoring", ec->label, e);
        rc = dkb__cuda_checksum(ec->data, ec->data_size, NULL, &sd, err);
        if (!rc && ec->bytes) rc = dkb__cuda_checksum(ec->bytes, (size_t)ec->nbytes, NULL, &sb, err);
        if (rc) return rc;
        if (sd != ec->sum_data || sb != ec->sum_bytes)
            return dkb_fail(err, DKB_EIO, "eval --backend cuda: %s differs from the store after restoring it", ec->label);
    }
    return 0;
}

void dkb__eval_cuda_close(dkb__eval_cuda *c) {
    if (!c) return;
    if (c->tp) cudaSetDevice(c->device);
    dkb_tp_destroy(c->tp);
    dkb_store_close(c->db);
    free(c->cols);
    free(c->json);
    free(c);
}

#else /* no CUDA in this build */

struct dkb__eval_cuda {
    int unused;
};

int dkb__eval_cuda_devices(void) { return 0; }

int dkb__eval_cuda_open(const char *store_dir, int device, int budgeted, dkb__eval_cuda **out, dkb_error *err) {
    (void)store_dir, (void)device, (void)budgeted;
    *out = NULL;
    return dkb_fail(err, DKB_EINVAL, "--backend cuda: this dkb was built without CUDA");
}
const char *dkb__eval_cuda_columns(const dkb__eval_cuda *c) {
    (void)c;
    return NULL;
}
int dkb__eval_cuda_restore(dkb__eval_cuda *c, char *changed, size_t n, int *nchanged, dkb_error *err) {
    (void)c;
    if (n) changed[0] = 0;
    *nchanged = 0;
    return dkb_fail(err, DKB_EINVAL, "--backend cuda: this dkb was built without CUDA");
}
void dkb__eval_cuda_close(dkb__eval_cuda *c) { (void)c; }

#endif
