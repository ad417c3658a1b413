/* adapter.c: TensorPlan sets, the store, parameters and results <->
 * candidate ABI structs (contracts in adapter.h): a read-only arena for
 * everything a candidate reads, harness-owned poisoned outputs, and
 * validation of what the candidate reports before anything reads it. */
#include "harness/adapter.h"

#include <errno.h>
#include <malloc.h>  // defines: malloc_usable_size
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert((int)DKB_CAND_BOOL == (int)DKB_TP_BOOL && (int)DKB_CAND_U8 == (int)DKB_TP_U8 &&
                   (int)DKB_CAND_I8 == (int)DKB_TP_I8 && (int)DKB_CAND_I16 == (int)DKB_TP_I16 &&
                   (int)DKB_CAND_I32 == (int)DKB_TP_I32 && (int)DKB_CAND_I64 == (int)DKB_TP_I64 &&
                   (int)DKB_CAND_I128 == (int)DKB_TP_I128 && (int)DKB_CAND_F64 == (int)DKB_TP_F64 &&
                   (int)DKB_CAND_STR == (int)DKB_TP_STR,
               "candidate element types number as TensorPlan's");
_Static_assert((int)DKB_CAND_RES_INT == (int)DKB_RES_INT && (int)DKB_CAND_RES_DECIMAL == (int)DKB_RES_DECIMAL &&
                   (int)DKB_CAND_RES_FLOAT == (int)DKB_RES_FLOAT && (int)DKB_CAND_RES_DATE == (int)DKB_RES_DATE &&
                   (int)DKB_CAND_RES_STRING == (int)DKB_RES_STRING,
               "candidate result types number as the result's");
_Static_assert((int)DKB_CAND_PARAM_INT == (int)DKB_PARAM_INT && (int)DKB_CAND_PARAM_DATE == (int)DKB_PARAM_DATE &&
                   (int)DKB_CAND_PARAM_DECIMAL == (int)DKB_PARAM_DECIMAL &&
                   (int)DKB_CAND_PARAM_STRING == (int)DKB_PARAM_STRING,
               "candidate parameter kinds number as the queries'");

#define RO_CHUNK ((size_t)1 << 20)

/* ---- read-only arena ---- */

static size_t page_round(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

void *dkb__ro_alloc(dkb_ro_arena *a, size_t bytes) {
    if (a->sealed || bytes > ((size_t)1 << 46)) return NULL;
    size_t need = (bytes + 63) & ~(size_t)63;
    if (need == 0) need = 64;
    dkb_ro_chunk *c = a->n ? &a->chunks[a->n - 1] : NULL;
    if (!c || c->size - c->used < need) {
        if (a->n == a->cap) {
            int ncap = a->cap ? a->cap * 2 : 16;
            dkb_ro_chunk *nc = realloc(a->chunks, (size_t)ncap * sizeof *nc);
            if (!nc) return NULL;
            a->chunks = nc, a->cap = ncap;
        }
        size_t size = page_round(need > RO_CHUNK ? need : RO_CHUNK);
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        c = &a->chunks[a->n++];
        c->base = p, c->size = size, c->used = 0;
    }
    void *r = c->base + c->used;
    c->used += need;
    return r;
}

char *dkb__ro_strdup(dkb_ro_arena *a, const char *s) {
    if (!s) return NULL;
    return dkb__ro_memdup(a, s, strlen(s) + 1);
}

void *dkb__ro_memdup(dkb_ro_arena *a, const void *p, size_t n) {
    void *r = dkb__ro_alloc(a, n);
    if (r && n) memcpy(r, p, n);
    return r;
}

int dkb__ro_seal(dkb_ro_arena *a, dkb_error *err) {
    for (int i = 0; i < a->n; i++)
        if (mprotect(a->chunks[i].base, a->chunks[i].size, PROT_READ) != 0)
            return dkb_fail(err, DKB_EINTERNAL, "mprotect: %s", strerror(errno));
    a->sealed = 1;
    return 0;
}

void dkb__ro_free(dkb_ro_arena *a) {
    if (!a) return;
    for (int i = 0; i < a->n; i++) munmap(a->chunks[i].base, a->chunks[i].size);
    free(a->chunks);
    memset(a, 0, sizeof *a);
}

int dkb__ro_ranges(const dkb_ro_arena *a, dkb_range *r, int n, int max) {
    for (int i = 0; i < a->n && n < max; i++, n++) {
        r[n].lo = (uintptr_t)a->chunks[i].base;
        r[n].hi = r[n].lo + a->chunks[i].size;
    }
    return n;
}

int dkb__store_ranges(const dkb_store *s, dkb_range *r, int n, int max) {
    for (int t = 0; t < dkb_store_ntables(s); t++) {
        const dkb_store_table *tab = dkb_store_table_at(s, t);
        for (int c = 0; c < dkb_store_table_ncolumns(tab); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(tab, c);
            for (int f = 0; f < dkb_column_nfiles(col) && n < max; f++) {
                const dkb_store_file *file = dkb_column_file(col, f);
                if (!file->bytes) continue;
                r[n].lo = (uintptr_t)file->map;
                r[n].hi = r[n].lo + file->bytes;
                n++;
            }
        }
    }
    return n;
}

/* Does [p, p + bytes) lie inside one of the store's mapped files? */
static int in_store(const dkb_store *s, const void *p, size_t bytes) {
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    for (int t = 0; t < dkb_store_ntables(s); t++) {
        const dkb_store_table *tab = dkb_store_table_at(s, t);
        for (int c = 0; c < dkb_store_table_ncolumns(tab); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(tab, c);
            for (int f = 0; f < dkb_column_nfiles(col); f++) {
                const dkb_store_file *file = dkb_column_file(col, f);
                uintptr_t flo = (uintptr_t)file->map, fhi = flo + file->bytes;
                if (file->bytes && lo >= flo && hi <= fhi) return 1;
            }
        }
    }
    return 0;
}

/* Store bytes of one column's files (dictionaries not counted). */
static uint64_t column_bytes(const dkb_store_column *col) {
    uint64_t total = 0;
    for (int f = 0; f < dkb_column_nfiles(col); f++) {
        const dkb_store_file *file = dkb_column_file(col, f);
        if (strcmp(file->role, "dictionary") != 0) total += file->bytes;
    }
    return total;
}

uint64_t dkb__set_store_bytes(const dkb_tensor_set *in, const dkb_store *s) {
    uint64_t total = 0;
    for (int t = 0; t < dkb_store_ntables(s); t++) {
        const dkb_store_table *tab = dkb_store_table_at(s, t);
        for (int c = 0; c < dkb_store_table_ncolumns(tab); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(tab, c);
            const void *data = dkb_column_data(col);
            int used = 0;
            for (int i = 0; i < in->n && !used; i++) used = in->t[i] && in->t[i]->data == data;
            if (used) total += column_bytes(col);
        }
    }
    return total;
}

uint64_t dkb__set_store_must_read(const dkb_tensor_set *in, const dkb_store *s) {
    uint64_t best = 0;
    int64_t best_rows = -1;
    for (int t = 0; t < dkb_store_ntables(s); t++) {
        const dkb_store_table *tab = dkb_store_table_at(s, t);
        uint64_t narrowest = UINT64_MAX;
        for (int c = 0; c < dkb_store_table_ncolumns(tab); c++) {
            const dkb_store_column *col = dkb_store_table_column_at(tab, c);
            int used = 0;
            for (int i = 0; i < in->n && !used; i++)
                used = in->t[i] && in->name[i] && strcmp(in->name[i], dkb_column_name(col)) == 0;
            uint64_t b = used ? column_bytes(col) : UINT64_MAX;
            if (b < narrowest) narrowest = b;
        }
        int64_t rows = dkb_store_table_rows(tab);
        if (narrowest != UINT64_MAX && rows > best_rows) best = narrowest, best_rows = rows;
    }
    return best;
}

/* ---- full mode ---- */

/* A candidate dictionary copied from n entries (str/len) into ro. */
static const dkb_cand_dict *ro_dict(dkb_ro_arena *ro, int n, const char *const *str, const size_t *len) {
    dkb_cand_dict *d = dkb__ro_alloc(ro, sizeof *d);
    const char **s = dkb__ro_alloc(ro, (size_t)(n ? n : 1) * sizeof *s);
    size_t *l = dkb__ro_alloc(ro, (size_t)(n ? n : 1) * sizeof *l);
    if (!d || !s || !l) return NULL;
    for (int i = 0; i < n; i++) {
        char *c = dkb__ro_alloc(ro, len[i] + 1);
        if (!c) return NULL;
        memcpy(c, str[i], len[i]);
        s[i] = c, l[i] = len[i];
    }
    d->size = n, d->str = s, d->len = l;
    return d;
}

/* One store column as a candidate vector. */
static int column_vec(const dkb_store_column *col, dkb_ro_arena *ro, dkb_cand_vec *v, dkb_error *err) {
    memset(v, 0, sizeof *v);
    v->name = dkb__ro_strdup(ro, dkb_column_name(col));
    if (!v->name) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    v->n = dkb_column_rows(col);
    v->data = (void *)dkb_column_data(col);
    switch (dkb_column_type(col)) {
    case DKB_TYPE_INT: v->type = dkb_column_dtype(col) == DKB_DTYPE_INT32 ? DKB_CAND_I32 : DKB_CAND_I64; break;
    case DKB_TYPE_DECIMAL: v->type = DKB_CAND_I64, v->scale = 2; break;
    case DKB_TYPE_DATE: v->type = DKB_CAND_I32; break;
    case DKB_TYPE_DICT: {
        v->type = DKB_CAND_U8;
        int n = dkb_column_dict_size(col);
        const char **str = calloc((size_t)(n ? n : 1), sizeof *str);
        size_t *len = calloc((size_t)(n ? n : 1), sizeof *len);
        for (int i = 0; str && len && i < n; i++) str[i] = dkb_column_dict_entry(col, i, &len[i]);
        v->dict = str && len ? ro_dict(ro, n, str, len) : NULL;
        free(str);
        free(len);
        if (!v->dict) return dkb_fail(err, DKB_ENOMEM, "out of memory");
        break;
    }
    case DKB_TYPE_TEXT: {
        uint64_t nb = 0;
        v->type = DKB_CAND_STR;
        v->data = (void *)dkb_column_text_offsets(col);
        v->bytes = (char *)dkb_column_text_bytes(col, &nb);
        v->nbytes = (int64_t)nb;
        break;
    }
    default: return dkb_fail(err, DKB_EINVAL, "column %s: unknown type", dkb_column_name(col));
    }
    return 0;
}

int dkb__adapt_db(const dkb_store *s, dkb_ro_arena *ro, const dkb_cand_db **out, dkb_error *err) {
    *out = NULL;
    int nt = dkb_store_ntables(s);
    dkb_cand_db *db = dkb__ro_alloc(ro, sizeof *db);
    dkb_cand_table *tabs = dkb__ro_alloc(ro, (size_t)(nt ? nt : 1) * sizeof *tabs);
    if (!db || !tabs) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int t = 0; t < nt; t++) {
        const dkb_store_table *tab = dkb_store_table_at(s, t);
        int nc = dkb_store_table_ncolumns(tab);
        dkb_cand_vec *cols = dkb__ro_alloc(ro, (size_t)(nc ? nc : 1) * sizeof *cols);
        tabs[t].name = dkb__ro_strdup(ro, dkb_store_table_name(tab));
        if (!cols || !tabs[t].name) return dkb_fail(err, DKB_ENOMEM, "out of memory");
        tabs[t].rows = dkb_store_table_rows(tab);
        tabs[t].ncols = nc;
        tabs[t].cols = cols;
        for (int c = 0; c < nc; c++) {
            int rc = column_vec(dkb_store_table_column_at(tab, c), ro, &cols[c], err);
            if (rc) return rc;
        }
    }
    db->scale_factor = dkb_store_scale_factor(s);
    db->ntables = nt;
    db->tables = tabs;
    *out = db;
    return 0;
}

int dkb__adapt_params(const dkb_params *p, dkb_ro_arena *ro, const dkb_cand_params **out, dkb_error *err) {
    *out = NULL;
    dkb_cand_params *cp = dkb__ro_alloc(ro, sizeof *cp);
    dkb_cand_param *v = dkb__ro_alloc(ro, (size_t)(p->n ? p->n : 1) * sizeof *v);
    if (!cp || !v) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int i = 0; i < p->n; i++) {
        v[i].name = dkb__ro_strdup(ro, p->v[i].name);
        v[i].kind = (dkb_cand_param_kind)p->v[i].kind;
        v[i].scale = p->v[i].scale;
        v[i].i = p->v[i].i;
        v[i].s = p->v[i].kind == DKB_PARAM_STRING ? dkb__ro_strdup(ro, p->v[i].s) : NULL;
        if (!v[i].name || (p->v[i].kind == DKB_PARAM_STRING && !v[i].s))
            return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    cp->n = p->n;
    cp->p = v;
    *out = cp;
    return 0;
}

void dkb__out_result_free(dkb_cand_out_result *o) {
    if (!o) return;
    for (int c = 0; o->saved && c < o->ncols; c++) {
        dkb_cand_res_col *s = &o->saved[c];
        free((char *)s->name);
        free(s->i64);
        free(s->dec);
        free(s->f64);
        free(s->date);
        free(s->str_off);
        free(s->str_bytes);
        free(s->is_null);
        if (o->names) free(o->names[c]);
    }
    free(o->saved);
    free(o->names);
    free(o->cols);
    memset(o, 0, sizeof *o);
}

int dkb__out_result_init(dkb_cand_out_result *o, const dkb_result *like, int64_t cap, int64_t bytes_cap,
                         dkb_error *err) {
    memset(o, 0, sizeof *o);
    if (!like || like->ncols < 1 || cap < 1 || cap > ((int64_t)1 << 40) || bytes_cap < 0)
        return dkb_fail(err, DKB_EINVAL, "result outputs: bad declaration");
    o->ncols = like->ncols;
    o->cap = cap;
    o->saved = calloc((size_t)like->ncols, sizeof *o->saved);
    o->names = calloc((size_t)like->ncols, sizeof *o->names);
    o->cols = calloc((size_t)like->ncols, sizeof *o->cols);
    if (!o->saved || !o->names || !o->cols) goto nomem;
    for (int c = 0; c < like->ncols; c++) {
        dkb_cand_res_col *s = &o->saved[c];
        const dkb_res_column *lc = &like->cols[c];
        s->name = strdup(lc->name);
        o->names[c] = strdup(lc->name);
        if (!o->names[c]) goto nomem;
        s->type = (dkb_cand_res_type)lc->type;
        s->scale = lc->scale;
        s->is_null = malloc((size_t)cap);
        if (!s->name || !s->is_null) goto nomem;
        size_t n = (size_t)cap;
        switch (lc->type) {
        case DKB_RES_INT: s->i64 = malloc(n * sizeof *s->i64); break;
        case DKB_RES_DECIMAL: s->dec = malloc(n * sizeof *s->dec); break;
        case DKB_RES_FLOAT: s->f64 = malloc(n * sizeof *s->f64); break;
        case DKB_RES_DATE: s->date = malloc(n * sizeof *s->date); break;
        case DKB_RES_STRING:
            s->str_off = malloc((n + 1) * sizeof *s->str_off);
            s->str_bytes = malloc((size_t)(bytes_cap ? bytes_cap : 1));
            s->bytes_cap = bytes_cap;
            break;
        default: return dkb_fail(err, DKB_EINVAL, "result outputs: column %s has an unknown type", lc->name);
        }
        if (!s->i64 && !s->dec && !s->f64 && !s->date && !(s->str_off && s->str_bytes)) goto nomem;
    }
    dkb__out_result_reset(o, 0xA5);
    return 0;
nomem:
    dkb__out_result_free(o);
    return dkb_fail(err, DKB_ENOMEM, "result outputs: out of memory (%lld rows)", (long long)cap);
}

/* Fill the whole heap block p (malloc_usable_size: the slack past what
 * was asked for too) with byte `fill`, from byte `from` on: a candidate gets
 * no bytes of a buffer that the harness did not write before the call. */
static void fill_block(void *p, size_t from, int fill) {
    size_t n = p ? malloc_usable_size(p) : 0;
    if (n > from) memset((char *)p + from, fill, n - from);
}

/* A name the candidate gets (a heap copy it could write to) put back from
 * the declared one, its slack zeroed. */
static void restore_name(const char *handed, const char *declared) {
    size_t n = strlen(declared) + 1;
    memcpy((char *)handed, declared, n);
    fill_block((void *)handed, n, 0);
}

void dkb__out_result_reset(dkb_cand_out_result *o, uint8_t poison) {
    size_t n = (size_t)o->cap;
    for (int c = 0; c < o->ncols; c++) {
        dkb_cand_res_col *s = &o->saved[c];
        restore_name(s->name, o->names[c]);
        memcpy(&o->cols[c], s, sizeof *s); /* padding too: saved was zeroed */
        fill_block(s->i64, 0, poison);
        fill_block(s->dec, 0, poison);
        fill_block(s->f64, 0, poison);
        fill_block(s->date, 0, poison);
        fill_block(s->str_off, 0, poison);
        fill_block(s->str_bytes, 0, poison);
        memset(s->is_null, 0, n);
        fill_block(s->is_null, n, poison);
    }
    fill_block(o->cols, (size_t)o->ncols * sizeof *o->cols, poison);
    memset(&o->res, 0, sizeof o->res); /* its padding (after ncols) too */
    o->res.ncols = o->ncols;
    o->res.cols = o->cols;
    o->res.cap = o->cap;
    o->res.nrows = -1;
}

int dkb__out_result_collect(const dkb_cand_out_result *o, const dkb_result *like, dkb_result *got, dkb_verdict *v,
                            char *msg, size_t n) {
    *v = DKB_VERDICT_OK;
    int64_t rows = o->res.nrows;
    if (rows > o->cap) {
        *v = DKB_VERDICT_OUTPUT_LIMIT;
        snprintf(msg, n, "nrows = %lld exceeds cap = %lld", (long long)rows, (long long)o->cap);
        return DKB_ERANGE;
    }
    if (rows < 0) {
        *v = DKB_VERDICT_WRONG_ANSWER;
        snprintf(msg, n, "nrows = %lld (not set?)", (long long)rows);
        return DKB_EINVAL;
    }
    /* string offsets first: nothing reads characters through bad ones */
    for (int c = 0; c < o->ncols; c++) {
        const dkb_cand_res_col *s = &o->saved[c];
        if (s->type != DKB_CAND_RES_STRING) continue;
        const int64_t *off = s->str_off;
        if (rows > 0 && off[0] != 0) {
            *v = DKB_VERDICT_WRONG_ANSWER;
            snprintf(msg, n, "column %s: str_off[0] = %lld, not 0", s->name, (long long)off[0]);
            return DKB_EINVAL;
        }
        for (int64_t r = 0; r < rows; r++) {
            if (off[r + 1] < off[r]) {
                *v = DKB_VERDICT_WRONG_ANSWER;
                snprintf(msg, n, "column %s: str_off decreases at row %lld", s->name, (long long)r + 1);
                return DKB_EINVAL;
            }
            if (off[r + 1] > s->bytes_cap) {
                *v = DKB_VERDICT_OUTPUT_LIMIT;
                snprintf(msg, n, "column %s: strings exceed bytes_cap = %lld", s->name, (long long)s->bytes_cap);
                return DKB_ERANGE;
            }
        }
    }
    size_t nc = o->ncols > 0 ? (size_t)o->ncols : 1;
    const char **names = calloc(nc, sizeof *names);
    dkb_res_type *types = calloc(nc, sizeof *types);
    int *scales = calloc(nc, sizeof *scales);
    int rc = names && types && scales ? 0 : DKB_ENOMEM;
    for (int c = 0; !rc && c < o->ncols; c++)
        names[c] = like->cols[c].name, types[c] = like->cols[c].type, scales[c] = like->cols[c].scale;
    if (!rc) rc = dkb_result_init(got, o->ncols, names, types, scales);
    free(names);
    free(types);
    free(scales);
    if (!rc && like->norder) dkb_result_set_order(got, like->norder, like->order);
    for (int64_t r = 0; !rc && r < rows; r++) {
        if (dkb_result_add_row(got) < 0) {
            rc = DKB_ENOMEM;
            break;
        }
        for (int c = 0; !rc && c < o->ncols; c++) {
            const dkb_cand_res_col *s = &o->saved[c];
            if (s->is_null[r]) {
                rc = dkb_result_set_null(got, r, c);
                continue;
            }
            switch (s->type) {
            case DKB_CAND_RES_INT: dkb_result_set_int(got, r, c, s->i64[r]); break;
            case DKB_CAND_RES_DECIMAL: dkb_result_set_dec(got, r, c, s->dec[r]); break;
            case DKB_CAND_RES_FLOAT: dkb_result_set_float(got, r, c, s->f64[r]); break;
            case DKB_CAND_RES_DATE: dkb_result_set_date(got, r, c, s->date[r]); break;
            case DKB_CAND_RES_STRING: {
                const char *p = s->str_bytes + s->str_off[r];
                size_t len = (size_t)(s->str_off[r + 1] - s->str_off[r]);
                if (memchr(p, 0, len)) {
                    *v = DKB_VERDICT_WRONG_ANSWER;
                    snprintf(msg, n, "row %lld, column %s: a NUL byte inside the string", (long long)r + 1, s->name);
                    dkb_result_free(got);
                    return DKB_EINVAL;
                }
                rc = dkb_result_set_str(got, r, c, p, len);
                break;
            }
            }
        }
    }
    if (rc) {
        *v = DKB_VERDICT_HARNESS_ERROR;
        snprintf(msg, n, "collecting the result: %s", dkb_strerror(rc));
        dkb_result_free(got);
    }
    return rc;
}

/* ---- core mode ---- */

/* A tensor's element bytes (STR: offsets). */
static size_t tensor_bytes(const dkb_tensor *t) {
    size_t es = dkb_tp_dtype_size(t->dtype);
    return (size_t)(t->dtype == DKB_TP_STR ? t->n + 1 : t->n) * es;
}

/* p, bytes long, as the candidate sees it: shared when it is a store view,
 * else copied into ro. */
static void *ro_share(const dkb_store *s, dkb_ro_arena *ro, const void *p, size_t bytes) {
    if (p && bytes && in_store(s, p, bytes)) return (void *)p;
    return dkb__ro_memdup(ro, p, bytes);
}

/* The prepared set as a candidate set; with device, every vector's data
 * is shared as it is (device memory), else store views are shared and the
 * rest copied into ro. */
static int adapt_inputs(const dkb_tensor_set *in, const dkb_store *s, bool device, dkb_ro_arena *ro,
                        const dkb_cand_set **out, dkb_error *err) {
    *out = NULL;
    dkb_cand_set *set = dkb__ro_alloc(ro, sizeof *set);
    dkb_cand_vec *vec = dkb__ro_alloc(ro, (size_t)(in->n ? in->n : 1) * sizeof *vec);
    dkb_cand_scalar *sc = dkb__ro_alloc(ro, (size_t)(in->nscalar ? in->nscalar : 1) * sizeof *sc);
    if (!set || !vec || !sc) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    for (int i = 0; i < in->n; i++) {
        const dkb_tensor *t = in->t[i];
        if (!t) return dkb_fail(err, DKB_EINVAL, "prepared input '%s' is NULL", in->name[i]);
        dkb_cand_vec *v = &vec[i];
        v->name = dkb__ro_strdup(ro, in->name[i]);
        v->type = (dkb_cand_type)t->dtype;
        v->scale = t->scale;
        v->n = t->n;
        v->data = device ? t->data : ro_share(s, ro, t->data, tensor_bytes(t));
        if (device && !v->data) v->data = (void *)""; /* no elements: any non-NULL pointer */
        if (!v->name || !v->data) return dkb_fail(err, DKB_ENOMEM, "out of memory copying input '%s'", in->name[i]);
        if (t->dtype == DKB_TP_STR) {
            v->nbytes = t->nbytes;
            v->bytes = device ? (t->bytes ? t->bytes : (char *)"") : ro_share(s, ro, t->bytes, (size_t)t->nbytes);
            if (!v->bytes) return dkb_fail(err, DKB_ENOMEM, "out of memory copying input '%s'", in->name[i]);
        }
        if (t->dict) {
            v->dict = ro_dict(ro, t->dict->size, t->dict->str, t->dict->len);
            if (!v->dict) return dkb_fail(err, DKB_ENOMEM, "out of memory");
        }
    }
    for (int i = 0; i < in->nscalar; i++) {
        sc[i].name = dkb__ro_strdup(ro, in->sname[i]);
        sc[i].i = in->ival[i];
        sc[i].f = in->fval[i];
        sc[i].s = in->sval[i] ? dkb__ro_strdup(ro, in->sval[i]) : NULL;
        if (!sc[i].name || (in->sval[i] && !sc[i].s)) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    set->nvec = in->n;
    set->vec = vec;
    set->nscalar = in->nscalar;
    set->scalar = sc;
    *out = set;
    return 0;
}

int dkb__adapt_inputs(const dkb_tensor_set *in, const dkb_store *s, dkb_ro_arena *ro, const dkb_cand_set **out,
                      dkb_error *err) {
    return adapt_inputs(in, s, false, ro, out, err);
}

int dkb__adapt_inputs_device(const dkb_tensor_set *in, dkb_ro_arena *ro, const dkb_cand_set **out, dkb_error *err) {
    return adapt_inputs(in, NULL, true, ro, out, err);
}

int dkb__out_likes_add(dkb_out_like *likes, int *n, const dkb_tensor_set *out, dkb_error *err) {
    if (out->nscalar)
        return dkb_fail(err, DKB_EINVAL, "the core outputs scalar '%s': core mode supports vectors only", out->sname[0]);
    if (*n && *n != out->n)
        return dkb_fail(err, DKB_EINVAL, "the core's outputs differ between parameter sets (%d vs %d)", *n, out->n);
    for (int i = 0; i < out->n; i++) {
        const dkb_tensor *t = out->t[i];
        if (!t) return dkb_fail(err, DKB_EINVAL, "core output '%s' is NULL", out->name[i]);
        int64_t nbytes = t->dtype == DKB_TP_STR ? t->nbytes : 0;
        if (!*n) {
            likes[i] = (dkb_out_like){out->name[i], t->dtype, t->scale, t->dict, t->n, nbytes};
            continue;
        }
        dkb_out_like *l = &likes[i];
        if (strcmp(l->name, out->name[i]) || l->dtype != t->dtype || l->scale != t->scale)
            return dkb_fail(err, DKB_EINVAL, "core output '%s' differs between parameter sets", out->name[i]);
        if (!l->dict) l->dict = t->dict;
        if (t->n > l->max_n) l->max_n = t->n;
        if (nbytes > l->max_bytes) l->max_bytes = nbytes;
    }
    *n = out->n;
    return 0;
}

void dkb__out_set_free(dkb_cand_out_set *o) {
    if (!o) return;
    for (int i = 0; o->saved && i < o->n; i++) {
        free(o->saved[i].data);
        free(o->saved[i].bytes);
        free((char *)o->saved[i].name);
        if (o->names) free(o->names[i]);
    }
    free(o->saved);
    free(o->names);
    free(o->vec);
    free(o->likes);
    free(o->t);
    memset(o, 0, sizeof *o);
}

int dkb__out_set_init(dkb_cand_out_set *o, const dkb_out_like *likes, int n, dkb_error *err) {
    memset(o, 0, sizeof *o);
    o->n = n;
    o->saved = calloc((size_t)(n ? n : 1), sizeof *o->saved);
    o->names = calloc((size_t)(n ? n : 1), sizeof *o->names);
    o->vec = calloc((size_t)(n ? n : 1), sizeof *o->vec);
    o->likes = calloc((size_t)(n ? n : 1), sizeof *o->likes);
    o->t = calloc((size_t)(n ? n : 1), sizeof *o->t);
    if (!o->saved || !o->names || !o->vec || !o->likes || !o->t) goto nomem;
    for (int i = 0; i < n; i++) {
        const dkb_out_like *l = &likes[i];
        o->likes[i] = *l;
        dkb_cand_vec *s = &o->saved[i];
        s->name = strdup(l->name);
        o->names[i] = strdup(l->name);
        if (!o->names[i]) goto nomem;
        s->type = (dkb_cand_type)l->dtype;
        s->scale = l->scale;
        s->cap = 2 * l->max_n + 64;
        size_t es = dkb_tp_dtype_size(l->dtype);
        s->data = malloc((size_t)(l->dtype == DKB_TP_STR ? s->cap + 1 : s->cap) * es);
        if (!s->name || !s->data) goto nomem;
        if (l->dtype == DKB_TP_STR) {
            s->bytes_cap = 2 * l->max_bytes + 64;
            s->bytes = malloc((size_t)s->bytes_cap);
            if (!s->bytes) goto nomem;
        }
    }
    dkb__out_set_reset(o, 0xA5);
    return 0;
nomem:
    dkb__out_set_free(o);
    return dkb_fail(err, DKB_ENOMEM, "core outputs: out of memory");
}

void dkb__out_set_reset(dkb_cand_out_set *o, uint8_t poison) {
    for (int i = 0; i < o->n; i++) {
        dkb_cand_vec *s = &o->saved[i];
        fill_block(s->data, 0, poison);
        fill_block(s->bytes, 0, poison);
        restore_name(s->name, o->names[i]);
        memcpy(&o->vec[i], s, sizeof *s);
        o->vec[i].n = -1;
        o->vec[i].nbytes = -1;
        o->vec[i].dict = NULL; /* outputs carry no dictionary; codes index the input's */
    }
    fill_block(o->vec, (size_t)o->n * sizeof *o->vec, poison);
    memset(&o->set, 0, sizeof o->set); /* its padding too */
    o->set.nvec = o->n;
    o->set.vec = o->vec;
    o->set.nscalar = 0;
    o->set.scalar = NULL;
}

int dkb__out_set_collect(dkb_cand_out_set *o, dkb_tensor_set *out, dkb_verdict *v, char *msg, size_t n) {
    *v = DKB_VERDICT_OK;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < o->n; i++) {
        const dkb_cand_vec *s = &o->saved[i];
        const dkb_out_like *l = &o->likes[i];
        int64_t cnt = o->vec[i].n;
        if (cnt > s->cap) {
            *v = DKB_VERDICT_OUTPUT_LIMIT;
            snprintf(msg, n, "output %s: n = %lld exceeds cap = %lld", s->name, (long long)cnt, (long long)s->cap);
            return DKB_ERANGE;
        }
        if (cnt < 0) {
            *v = DKB_VERDICT_WRONG_ANSWER;
            snprintf(msg, n, "output %s: n = %lld (not set?)", s->name, (long long)cnt);
            return DKB_EINVAL;
        }
        dkb_tensor *t = &o->t[i];
        memset(t, 0, sizeof *t);
        t->dtype = l->dtype;
        t->n = cnt;
        t->data = s->data;
        t->scale = l->scale;
        t->dict = l->dict;
        if (l->dtype == DKB_TP_STR) {
            int64_t *off = s->data;
            if (cnt == 0) off[0] = 0; /* no strings: the offsets TensorPlan expects */
            if (cnt > 0 && off[0] != 0) {
                *v = DKB_VERDICT_WRONG_ANSWER;
                snprintf(msg, n, "output %s: offsets[0] = %lld, not 0", s->name, (long long)off[0]);
                return DKB_EINVAL;
            }
            for (int64_t r = 0; r < cnt; r++) {
                if (off[r + 1] < off[r]) {
                    *v = DKB_VERDICT_WRONG_ANSWER;
                    snprintf(msg, n, "output %s: offsets decrease at %lld", s->name, (long long)r + 1);
                    return DKB_EINVAL;
                }
                if (off[r + 1] > s->bytes_cap) {
                    *v = DKB_VERDICT_OUTPUT_LIMIT;
                    snprintf(msg, n, "output %s: strings exceed bytes_cap = %lld", s->name, (long long)s->bytes_cap);
                    return DKB_ERANGE;
                }
            }
            t->bytes = s->bytes;
            t->nbytes = off[cnt];
        }
        if (l->dtype == DKB_TP_BOOL || (l->dtype == DKB_TP_U8 && l->dict)) {
            const uint8_t *b = s->data;
            int lim = l->dtype == DKB_TP_BOOL ? 2 : l->dict->size;
            for (int64_t r = 0; r < cnt; r++)
                if (b[r] >= lim) {
                    *v = DKB_VERDICT_WRONG_ANSWER;
                    snprintf(msg, n, "output %s[%lld] = %d: %s", s->name, (long long)r, b[r],
                             l->dtype == DKB_TP_BOOL ? "a BOOL must be 0 or 1" : "beyond the dictionary");
                    return DKB_EINVAL;
                }
        }
        out->name[out->n] = l->name;
        out->t[out->n++] = t;
    }
    return 0;
}
