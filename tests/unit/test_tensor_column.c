/* test_tensor_column.c: store columns as TensorPlan tensors: a synthetic
 * lineitem store (every logical type) wrapped with dkb_tp_column gives the
 * documented dtypes and scales, zero-copy data, dictionaries usable with
 * like_dict / dict_code / lookup_mask, text usable with like and compress,
 * and dictionaries that stay valid across resets. */
#include "dkb/tensor.h"
#include "test_store_util.h"

int main(void) {
    char *dir = make_tmpdir();
    char *store = join(dir, "s");
    dkb_error err;
    size_t sizes[2] = {1000, 517};
    int ends[2] = {0, 1};
    if (write_li_store(store, 0.01, sizes, ends, 2, 1, &err)) {
        fprintf(stderr, "write store: %s\n", err.msg);
        return 2;
    }
    dkb_store *s;
    if (dkb_store_open(store, 0, &s, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 2;
    }
    const dkb_store_table *t = dkb_store_table_find(s, "lineitem");
    dkb_tp *tp;
    CHECK(dkb_tp_create(DKB_TP_CPU, 2, &tp, &err) == 0);
    int64_t n = dkb_store_table_rows(t);
    int seen[5] = {0};
    for (int run = 0; run < 2; run++) {
        const dkb_tp_dict *dicts[DKB_MAX_COLUMNS] = {0};
        for (int c = 0; c < dkb_store_table_ncolumns(t); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(t, c);
            dkb_tensor *x = dkb_tp_column(tp, col);
            CHECK(x && x->n == n);
            if (!x) continue;
            seen[dkb_column_type(col)]++;
            switch (dkb_column_type(col)) {
            case DKB_TYPE_INT:
                CHECK(x->dtype == (dkb_column_dtype(col) == DKB_DTYPE_INT32 ? DKB_TP_I32 : DKB_TP_I64));
                CHECK(x->data == dkb_column_data(col) && x->scale == 0);
                break;
            case DKB_TYPE_DECIMAL: CHECK(x->dtype == DKB_TP_I64 && x->scale == 2); break;
            case DKB_TYPE_DATE: CHECK(x->dtype == DKB_TP_I32 && x->scale == 0); break;
            case DKB_TYPE_DICT: {
                CHECK(x->dtype == DKB_TP_U8 && x->dict && x->dict->size == dkb_column_dict_size(col));
                dicts[c] = x->dict;
                /* every row's code names its string */
                for (int64_t r = 0; r < n; r++) {
                    size_t len;
                    const char *str = dkb_column_str(col, r, &len);
                    uint8_t code = ((const uint8_t *)x->data)[r];
                    CHECK(x->dict->len[code] == len && memcmp(x->dict->str[code], str, len) == 0);
                }
                /* LIKE on the dictionary, then a mask over the codes */
                bool *lut = dkb_tp_like_dict(tp, x->dict, "%A%");
                dkb_tensor *m = dkb_tp_lookup_mask(tp, x, lut);
                CHECK(m != NULL);
                for (int64_t r = 0; m && r < n; r++) {
                    size_t len;
                    const char *str = dkb_column_str(col, r, &len);
                    CHECK(((const uint8_t *)m->data)[r] == (memchr(str, 'A', len) != NULL));
                }
                char word[64];
                size_t len = x->dict->len[0] < 63 ? x->dict->len[0] : 63;
                memcpy(word, x->dict->str[0], len);
                word[len] = '\0';
                CHECK(dkb_tp_dict_code(x->dict, word) == 0);
                break;
            }
            case DKB_TYPE_TEXT: {
                CHECK(x->dtype == DKB_TP_STR && x->bytes);
                dkb_tensor *m = dkb_tp_like(tp, x, "%|x%");
                dkb_tensor *c2 = dkb_tp_compress(tp, x, m);
                int64_t k = 0;
                for (int64_t r = 0; m && c2 && r < n; r++) {
                    size_t len;
                    const char *str = dkb_column_str(col, r, &len);
                    bool hit = memmem(str, len, "|x", 2) != NULL;
                    CHECK(((const uint8_t *)m->data)[r] == hit);
                    if (hit) {
                        const int64_t *o = c2->data;
                        CHECK(o[k + 1] - o[k] == (int64_t)len && memcmp(c2->bytes + o[k], str, len) == 0);
                        k++;
                    }
                }
                CHECK(c2 && c2->n == k);
                break;
            }
            }
        }
        CHECK(dkb_tp_status(tp, &err) == 0);
        dkb_tp_reset(tp);
        /* the same column gives the same dictionary after a reset */
        for (int c = 0; c < DKB_MAX_COLUMNS; c++)
            if (dicts[c]) CHECK(dkb_tp_column(tp, dkb_store_table_column_at(t, c))->dict == dicts[c]);
    }
    CHECK(n == 1517 && seen[DKB_TYPE_INT] && seen[DKB_TYPE_DECIMAL] && seen[DKB_TYPE_DATE] && seen[DKB_TYPE_DICT] &&
          seen[DKB_TYPE_TEXT]);
    CHECK(dkb_tp_column(tp, NULL) == NULL && dkb_tp_status(tp, NULL) == DKB_EINVAL);
    dkb_tp_destroy(tp);
    dkb_store_close(s);
    rm_tree(dir);
    free(store);
    free(dir);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_tensor_column: ok\n");
    return failures ? 1 : 0;
}
