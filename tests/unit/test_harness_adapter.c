/* test_harness_adapter.c: the candidate ABI adapters on a generated store:
 * the database view (every column, read-only: a write faults), parameters,
 * and for all 22 queries two round trips that a perfect candidate would
 * make: full mode (the expected result copied into the declared result
 * buffers, collected, compared) and core mode (the prepared inputs adapted;
 * the baseline core's outputs copied into the declared output buffers,
 * collected, finished by the baseline, compared). Also poisoning,
 * descriptor rewriting and every validation failure of collect. */
#include <signal.h>
#include <sys/wait.h>

#include "dkb/query.h"
#include "harness/adapter.h"
#include "test_harness_util.h"

static const dkb_compare_opts EXACT = {1e-9, 1e-9, 0, false};

/* Does fn(arg) die by SIGSEGV in a child process? */
static int segfaults(void (*fn)(void *), void *arg) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        fn(arg);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static void write_table_name(void *p) { ((dkb_cand_table *)((const dkb_cand_db *)p)->tables)[0].rows = 1; }
static void write_column(void *p) {
    const dkb_cand_vec *v = dkb_cand_column(p, "lineitem", "l_discount");
    volatile int64_t *d = v->data;
    d[0] = d[0] + 1;
}
static void write_dict(void *p) {
    const dkb_cand_vec *v = dkb_cand_column(p, "lineitem", "l_returnflag");
    ((size_t *)v->dict->len)[0] = 7;
}
static void write_param(void *p) { ((dkb_cand_param *)((const dkb_cand_params *)p)->p)[0].i = 1; }
static void write_input(void *p) {
    const dkb_cand_set *s = p;
    for (int i = 0; i < s->nvec; i++)
        if (s->vec[i].n > 0) ((uint8_t *)s->vec[i].data)[0] ^= 1;
}

static void test_db(const dkb_store *db) {
    dkb_ro_arena ro = {0};
    const dkb_cand_db *cdb;
    dkb_error err = {0};
    CHECK(dkb__adapt_db(db, &ro, &cdb, &err) == 0, "adapt_db: %s", err.msg);
    CHECK(dkb__ro_seal(&ro, &err) == 0, "seal: %s", err.msg);
    CHECK(cdb->ntables == dkb_store_ntables(db) && cdb->ntables == 8, "%d tables", cdb->ntables);
    CHECK(cdb->scale_factor == dkb_store_scale_factor(db), "scale factor");
    for (int t = 0; t < cdb->ntables; t++) {
        const dkb_store_table *st = dkb_store_table_at(db, t);
        const dkb_cand_table *ct = &cdb->tables[t];
        CHECK(!strcmp(ct->name, dkb_store_table_name(st)) && ct->rows == dkb_store_table_rows(st) &&
                  ct->ncols == dkb_store_table_ncolumns(st),
              "table %s", ct->name);
        CHECK(dkb_cand_table_find(cdb, ct->name) == ct, "find %s", ct->name);
        for (int c = 0; c < ct->ncols; c++) {
            const dkb_store_column *sc = dkb_store_table_column_at(st, c);
            const dkb_cand_vec *v = &ct->cols[c];
            CHECK(!strcmp(v->name, dkb_column_name(sc)) && v->n == ct->rows, "column %s", v->name);
            CHECK(dkb_cand_column(cdb, ct->name, v->name) == v, "lookup %s", v->name);
            switch (dkb_column_type(sc)) {
            case DKB_TYPE_DECIMAL: CHECK(v->type == DKB_CAND_I64 && v->scale == 2, "%s decimal", v->name); break;
            case DKB_TYPE_DATE: CHECK(v->type == DKB_CAND_I32 && v->scale == 0, "%s date", v->name); break;
            case DKB_TYPE_INT:
                CHECK(v->type == (dkb_column_dtype(sc) == DKB_DTYPE_INT32 ? DKB_CAND_I32 : DKB_CAND_I64), "%s int",
                      v->name);
                break;
            case DKB_TYPE_DICT: {
                CHECK(v->type == DKB_CAND_U8 && v->dict && v->dict->size == dkb_column_dict_size(sc), "%s dict",
                      v->name);
                for (int k = 0; v->dict && k < v->dict->size; k++) {
                    size_t len;
                    const char *s = dkb_column_dict_entry(sc, k, &len);
                    CHECK(v->dict->len[k] == len && !memcmp(v->dict->str[k], s, len), "%s entry %d", v->name, k);
                }
                break;
            }
            case DKB_TYPE_TEXT: {
                uint64_t nb;
                const char *bytes = dkb_column_text_bytes(sc, &nb);
                CHECK(v->type == DKB_CAND_STR && v->data == dkb_column_text_offsets(sc) && v->bytes == bytes &&
                          v->nbytes == (int64_t)nb,
                      "%s text", v->name);
                continue;
            }
            default: CHECK(0, "%s: unknown type", v->name);
            }
            CHECK(v->data == dkb_column_data(sc), "%s shares the store's mapping", v->name);
        }
    }
    /* the dictionary helper of candidate.h finds codes */
    const dkb_cand_vec *flag = dkb_cand_column(cdb, "lineitem", "l_returnflag");
    CHECK(flag && dkb_cand_dict_code(flag->dict, "R") == 2 && dkb_cand_dict_code(flag->dict, "Z") == -1,
          "dict_code");
    /* read-only: descriptors, dictionaries and the store's columns */
    CHECK(segfaults(write_table_name, (void *)cdb), "writing a table descriptor did not fault");
    CHECK(segfaults(write_column, (void *)cdb), "writing a column did not fault");
    CHECK(segfaults(write_dict, (void *)cdb), "writing a dictionary did not fault");
    /* the arena's and the store's ranges cover what a candidate may touch */
    dkb_range r[4096];
    int n = dkb__ro_ranges(&ro, r, 0, 4096);
    int m = dkb__store_ranges(db, r, n, 4096);
    uintptr_t a = (uintptr_t)cdb, col = (uintptr_t)dkb_cand_column(cdb, "lineitem", "l_tax")->data;
    int in_ro = 0, in_store = 0;
    for (int i = 0; i < n; i++) in_ro |= a >= r[i].lo && a < r[i].hi;
    for (int i = n; i < m; i++) in_store |= col >= r[i].lo && col < r[i].hi;
    CHECK(in_ro && in_store && m > n, "ranges: ro %d store %d (%d, %d)", in_ro, in_store, n, m);
    CHECK(dkb__ro_alloc(&ro, 8) == NULL, "a sealed arena still allocates");
    dkb__ro_free(&ro);
}

static void test_params(void) {
    for (int qn = 1; qn <= 22; qn++) {
        const dkb_query *q = dkb_query_get(qn);
        if (!q) continue;
        dkb_params p;
        dkb_error err = {0};
        CHECK(dkb_query_params(q, 3, 1, NULL, 0, &p, &err) == 0, "%s params: %s", q->name, err.msg);
        dkb_ro_arena ro = {0};
        const dkb_cand_params *cp;
        CHECK(dkb__adapt_params(&p, &ro, &cp, &err) == 0, "%s adapt: %s", q->name, err.msg);
        CHECK(cp->n == p.n, "%s count", q->name);
        for (int i = 0; i < p.n; i++) {
            const dkb_cand_param *c = dkb_cand_param_find(cp, p.v[i].name);
            CHECK(c == &cp->p[i] && (int)c->kind == (int)p.v[i].kind && c->scale == p.v[i].scale, "%s %s", q->name,
                  p.v[i].name);
            if (p.v[i].kind == DKB_PARAM_STRING) CHECK(c->s && !strcmp(c->s, p.v[i].s), "%s %s string", q->name, c->name);
            else CHECK(c->i == p.v[i].i && c->s == NULL, "%s %s value", q->name, c->name);
        }
        dkb__ro_seal(&ro, &err);
        if (qn == 6) CHECK(segfaults(write_param, (void *)cp), "writing a parameter did not fault");
        dkb__ro_free(&ro);
    }
}

/* Copy a result into the candidate's declared result, as a perfect
 * candidate would. */
static void fill_result(dkb_cand_out_result *o, const dkb_result *x) {
    for (int c = 0; c < x->ncols; c++) {
        dkb_cand_res_col *col = &o->res.cols[c];
        int64_t off = 0;
        if (col->str_off) col->str_off[0] = 0;
        for (int64_t r = 0; r < x->nrows; r++) {
            int null = dkb_result_is_null(x, r, c);
            col->is_null[r] = (uint8_t)null;
            switch (x->cols[c].type) {
            case DKB_RES_INT: col->i64[r] = null ? 0 : x->cols[c].i64[r]; break;
            case DKB_RES_DECIMAL: col->dec[r] = null ? 0 : x->cols[c].dec[r]; break;
            case DKB_RES_FLOAT: col->f64[r] = null ? 0 : x->cols[c].f64[r]; break;
            case DKB_RES_DATE: col->date[r] = null ? 0 : x->cols[c].date[r]; break;
            case DKB_RES_STRING: {
                size_t len = null ? 0 : strlen(x->cols[c].str[r]);
                memcpy(col->str_bytes + off, x->cols[c].str[r], len);
                off += (int64_t)len;
                col->str_off[r + 1] = off;
                break;
            }
            }
        }
    }
    o->res.nrows = x->nrows;
}

static int64_t max_str_bytes(const dkb_result *x) {
    int64_t best = 0;
    for (int c = 0; c < x->ncols; c++) {
        if (x->cols[c].type != DKB_RES_STRING) continue;
        int64_t b = 0;
        for (int64_t r = 0; r < x->nrows; r++) b += (int64_t)strlen(x->cols[c].str[r]);
        if (b > best) best = b;
    }
    return best;
}

static void full_round_trip(const dkb_query *q, const dkb_result *expected) {
    dkb_cand_out_result o;
    dkb_error err = {0};
    if (dkb__out_result_init(&o, expected, 2 * expected->nrows + 64, 2 * max_str_bytes(expected) + 64, &err)) {
        CHECK(0, "%s out_result_init: %s", q->name, err.msg);
        return;
    }
    CHECK(o.res.nrows == -1 && o.res.cap == 2 * expected->nrows + 64 && o.res.ncols == expected->ncols, "%s declared",
          q->name);
    for (int c = 0; c < o.ncols; c++) {
        CHECK(!strcmp(o.res.cols[c].name, expected->cols[c].name) && (int)o.res.cols[c].type == (int)expected->cols[c].type &&
                  o.res.cols[c].scale == expected->cols[c].scale,
              "%s column %d declared", q->name, c);
        const uint8_t *poisoned = o.res.cols[c].i64 ? (const uint8_t *)o.res.cols[c].i64
                                  : o.res.cols[c].dec ? (const uint8_t *)o.res.cols[c].dec
                                  : o.res.cols[c].f64 ? (const uint8_t *)o.res.cols[c].f64
                                  : o.res.cols[c].date ? (const uint8_t *)o.res.cols[c].date
                                                       : (const uint8_t *)o.res.cols[c].str_off;
        CHECK(poisoned[0] == 0xA5 && o.res.cols[c].is_null[0] == 0, "%s column %d poisoned", q->name, c);
    }
    fill_result(&o, expected);
    dkb_result got = {0};
    dkb_verdict v;
    char msg[512] = "";
    CHECK(dkb__out_result_collect(&o, expected, &got, &v, msg, sizeof msg) == 0 && v == DKB_VERDICT_OK,
          "%s collect: %s", q->name, msg);
    dkb_error cmp = {0};
    CHECK(dkb_result_compare(&got, expected, &EXACT, &cmp) == 0, "%s full round trip: %s", q->name, cmp.msg);
    dkb_result_free(&got);

    /* a second call: descriptors rewritten even if the candidate changed them */
    o.res.cols[0].i64 = NULL, o.res.cols[0].dec = NULL, o.res.cols[0].f64 = NULL, o.res.cols[0].date = NULL;
    o.res.cols[0].str_off = NULL;
    o.res.cap = 0;
    dkb__out_result_reset(&o, 0x5A);
    CHECK(o.res.cap == o.cap && (o.res.cols[0].i64 || o.res.cols[0].dec || o.res.cols[0].f64 || o.res.cols[0].date ||
                                 o.res.cols[0].str_off),
          "%s descriptors rewritten", q->name);
    /* a candidate that writes nothing but nrows: the poison shows (unless empty) */
    o.res.nrows = expected->nrows;
    int has_str = 0;
    for (int c = 0; c < o.ncols; c++) has_str |= o.res.cols[c].type == DKB_CAND_RES_STRING;
    int rc = dkb__out_result_collect(&o, expected, &got, &v, msg, sizeof msg);
    if (has_str && expected->nrows > 0) {
        CHECK(rc != 0 && v == DKB_VERDICT_WRONG_ANSWER, "%s: poisoned offsets not caught", q->name);
    } else if (expected->nrows > 0 && rc == 0) {
        CHECK(dkb_result_compare(&got, expected, &EXACT, &cmp) != 0, "%s: poisoned cells compare equal", q->name);
    }
    dkb_result_free(&got);
    dkb__out_result_free(&o);
}

/* Copy a tensor's elements into a candidate output vector, as a perfect
 * candidate would. */
static void fill_vec(dkb_cand_vec *v, const dkb_tensor *t) {
    size_t es = dkb_tp_dtype_size(t->dtype);
    memcpy(v->data, t->data, (size_t)(t->dtype == DKB_TP_STR ? t->n + 1 : t->n) * es);
    if (t->dtype == DKB_TP_STR) {
        memcpy(v->bytes, t->bytes, (size_t)t->nbytes);
        v->nbytes = t->nbytes;
    }
    v->n = t->n;
}

static void core_round_trip(const dkb_query *q, const dkb_store *db, const dkb_params *p, const dkb_result *expected) {
    dkb_tp *prep = NULL, *tp = NULL, *fin = NULL;
    dkb_error err = {0};
    if (dkb_tp_create(DKB_TP_CPU, 2, &prep, &err) || dkb_tp_create(DKB_TP_CPU, 2, &tp, &err) ||
        dkb_tp_create(DKB_TP_CPU, 2, &fin, &err)) {
        CHECK(0, "tp_create: %s", err.msg);
        return;
    }
    dkb_tensor_set in, out, back;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    CHECK(q->prepare(prep, db, p, &in) == 0 && dkb_tp_status(prep, NULL) == 0, "%s prepare", q->name);
    dkb_ro_arena ro = {0};
    const dkb_cand_set *cin = NULL;
    CHECK(dkb__adapt_inputs(&in, db, &ro, &cin, &err) == 0, "%s adapt_inputs: %s", q->name, err.msg);
    CHECK(dkb__ro_seal(&ro, &err) == 0, "seal");
    for (int i = 0; cin && i < in.n; i++) {
        const dkb_cand_vec *v = dkb_cand_vec_find(cin, in.name[i]);
        const dkb_tensor *t = in.t[i];
        CHECK(v && (int)v->type == (int)t->dtype && v->scale == t->scale && v->n == t->n, "%s input %s", q->name,
              in.name[i]);
        if (!v) continue;
        size_t bytes = (size_t)(t->dtype == DKB_TP_STR ? t->n + 1 : t->n) * dkb_tp_dtype_size(t->dtype);
        CHECK(!memcmp(v->data, t->data, bytes), "%s input %s data", q->name, in.name[i]);
        if (t->dtype == DKB_TP_STR) CHECK(v->nbytes == t->nbytes && !memcmp(v->bytes, t->bytes, (size_t)t->nbytes),
                                          "%s input %s bytes", q->name, in.name[i]);
        CHECK((t->dict != NULL) == (v->dict != NULL), "%s input %s dict", q->name, in.name[i]);
    }
    for (int i = 0; cin && i < in.nscalar; i++) {
        const dkb_cand_scalar *s = dkb_cand_scalar_find(cin, in.sname[i]);
        CHECK(s && s->i == in.ival[i] && (s->f == in.fval[i] || (s->f != s->f && in.fval[i] != in.fval[i])) &&
                  ((s->s == NULL) == (in.sval[i] == NULL)) && (!s->s || !strcmp(s->s, in.sval[i])),
              "%s scalar %s", q->name, in.sname[i]);
    }
    if (q->number == 6 && cin) {
        /* store columns are shared, not copied; the whole input is read-only */
        const dkb_cand_vec *v = dkb_cand_vec_find(cin, "l_discount");
        CHECK(v && v->data == in.t[1]->data, "q06 l_discount is the store's mapping");
        CHECK(segfaults(write_input, (void *)cin), "writing a prepared input did not fault");
        CHECK(dkb__set_store_bytes(&in, db) == (uint64_t)v->n * (4 + 8 + 8 + 8), "q06 bytes read %llu",
              (unsigned long long)dkb__set_store_bytes(&in, db));
        /* must read: the narrowest of its lineitem columns, l_shipdate (int32) */
        CHECK(dkb__set_store_must_read(&in, db) == (uint64_t)v->n * 4, "q06 must read %llu",
              (unsigned long long)dkb__set_store_must_read(&in, db));
    }
    if (q->number == 3) {
        /* lineitem is the largest table it reads; its narrowest column there
         * is an int32 (l_orderkey or l_shipdate) */
        const dkb_store_table *li = dkb_store_table_find(db, "lineitem");
        CHECK(li && dkb__set_store_must_read(&in, db) == (uint64_t)dkb_store_table_rows(li) * 4, "q03 must read %llu",
              (unsigned long long)dkb__set_store_must_read(&in, db));
    }
    CHECK(q->core(tp, &in, &out) == 0 && dkb_tp_status(tp, NULL) == 0, "%s core", q->name);
    dkb_out_like likes[DKB_SET_MAX];
    int nl = 0;
    CHECK(dkb__out_likes_add(likes, &nl, &out, &err) == 0, "%s likes: %s", q->name, err.msg);
    CHECK(dkb__out_likes_add(likes, &nl, &out, &err) == 0 && nl == out.n, "%s likes twice", q->name);
    dkb_cand_out_set o;
    if (dkb__out_set_init(&o, likes, nl, &err)) {
        CHECK(0, "%s out_set_init: %s", q->name, err.msg);
    } else {
        for (int i = 0; i < out.n; i++) {
            dkb_cand_vec *v = dkb_cand_vec_find(&o.set, out.name[i]);
            CHECK(v && v->n == -1 && v->cap == 2 * out.t[i]->n + 64 && (int)v->type == (int)out.t[i]->dtype,
                  "%s output %s declared", q->name, out.name[i]);
            if (v) fill_vec(v, out.t[i]);
        }
        dkb_verdict vd;
        char msg[512] = "";
        CHECK(dkb__out_set_collect(&o, &back, &vd, msg, sizeof msg) == 0 && vd == DKB_VERDICT_OK, "%s collect: %s",
              q->name, msg);
        dkb_result res = {0};
        int rc = q->finish(fin, &back, p, &res);
        CHECK(rc == 0 && dkb_tp_status(fin, NULL) == 0, "%s finish over the copies", q->name);
        dkb_error cmp = {0};
        if (!rc) CHECK(dkb_result_compare(&res, expected, &EXACT, &cmp) == 0, "%s core round trip: %s", q->name, cmp.msg);
        dkb_result_free(&res);
        dkb__out_set_free(&o);
    }
    dkb__ro_free(&ro);
    dkb_tp_destroy(prep);
    dkb_tp_destroy(tp);
    dkb_tp_destroy(fin);
}

static void test_queries(const dkb_store *db) {
    dkb_tp *tp = NULL;
    dkb_error err = {0};
    if (dkb_tp_create(DKB_TP_CPU, 2, &tp, &err)) {
        CHECK(0, "tp_create: %s", err.msg);
        return;
    }
    int ran = 0;
    for (int qn = 1; qn <= 22; qn++) {
        const dkb_query *q = dkb_query_get(qn);
        if (!q) continue;
        for (uint64_t seed = 0; seed < 2; seed++) {
            dkb_params p;
            CHECK(dkb_query_params(q, seed, dkb_store_scale_factor(db), NULL, 0, &p, &err) == 0, "%s params", q->name);
            dkb_result expected = {0};
            dkb_tp_reset(tp);
            if (dkb_query_run(q, tp, db, &p, &expected, &err)) {
                CHECK(0, "%s run: %s", q->name, err.msg);
                continue;
            }
            full_round_trip(q, &expected);
            core_round_trip(q, db, &p, &expected);
            dkb_result_free(&expected);
            ran++;
        }
    }
    CHECK(ran == 44, "%d query runs", ran);
    dkb_tp_destroy(tp);
}

/* Every validation of collect. */
static void test_collect_errors(void) {
    /* a result with a STRING and an INT column */
    dkb_result like = {0};
    const char *names[] = {"s", "i"};
    const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT};
    dkb_result_init(&like, 2, names, types, NULL);
    dkb_cand_out_result o;
    dkb_error err = {0};
    CHECK(dkb__out_result_init(&o, &like, 4, 8, &err) == 0, "init: %s", err.msg);
    dkb_result got = {0};
    dkb_verdict v;
    char msg[512];
    o.res.nrows = 5;
    CHECK(dkb__out_result_collect(&o, &like, &got, &v, msg, sizeof msg) && v == DKB_VERDICT_OUTPUT_LIMIT, "nrows > cap");
    dkb__out_result_reset(&o, 0xA5);
    CHECK(dkb__out_result_collect(&o, &like, &got, &v, msg, sizeof msg) && v == DKB_VERDICT_WRONG_ANSWER &&
              strstr(msg, "not set"),
          "nrows unset: %s", msg);
    o.res.nrows = 2;
    o.res.cols[0].str_off[0] = 0, o.res.cols[0].str_off[1] = 3, o.res.cols[0].str_off[2] = 2;
    CHECK(dkb__out_result_collect(&o, &like, &got, &v, msg, sizeof msg) && v == DKB_VERDICT_WRONG_ANSWER,
          "decreasing offsets");
    o.res.cols[0].str_off[2] = 9;
    CHECK(dkb__out_result_collect(&o, &like, &got, &v, msg, sizeof msg) && v == DKB_VERDICT_OUTPUT_LIMIT,
          "offsets past bytes_cap");
    memcpy(o.res.cols[0].str_bytes, "ab\0cdefg", 8);
    o.res.cols[0].str_off[1] = 4, o.res.cols[0].str_off[2] = 8;
    CHECK(dkb__out_result_collect(&o, &like, &got, &v, msg, sizeof msg) && v == DKB_VERDICT_WRONG_ANSWER &&
              strstr(msg, "NUL"),
          "NUL in a string: %s", msg);
    memcpy(o.res.cols[0].str_bytes, "abxcdefg", 8);
    o.res.cols[1].i64[0] = 1, o.res.cols[1].i64[1] = 2;
    o.res.cols[1].is_null[1] = 1;
    CHECK(dkb__out_result_collect(&o, &like, &got, &v, msg, sizeof msg) == 0 && got.nrows == 2 &&
              !strcmp(got.cols[0].str[1], "defg") && got.cols[1].i64[0] == 1 && dkb_result_is_null(&got, 1, 1),
          "good collect: %s", msg);
    dkb_result_free(&got);
    dkb__out_result_free(&o);
    dkb_result_free(&like);

    /* core outputs: BOOL, U8 with a dictionary, STR */
    static const char *const dict_str[] = {"A", "B"};
    static const size_t dict_len[] = {1, 1};
    dkb_tp_dict dict = {2, dict_str, dict_len};
    dkb_out_like likes[3] = {{"b", DKB_TP_BOOL, 0, NULL, 2, 0},
                             {"u", DKB_TP_U8, 0, &dict, 2, 0},
                             {"s", DKB_TP_STR, 0, NULL, 2, 4}};
    dkb_cand_out_set os;
    CHECK(dkb__out_set_init(&os, likes, 3, &err) == 0, "out_set_init: %s", err.msg);
    dkb_tensor_set back;
    CHECK(dkb__out_set_collect(&os, &back, &v, msg, sizeof msg) && v == DKB_VERDICT_WRONG_ANSWER, "n unset");
    for (int i = 0; i < 3; i++) os.vec[i].n = 1;
    ((uint8_t *)os.vec[0].data)[0] = 2;
    ((uint8_t *)os.vec[1].data)[0] = 1;
    ((int64_t *)os.vec[2].data)[0] = 0, ((int64_t *)os.vec[2].data)[1] = 3;
    CHECK(dkb__out_set_collect(&os, &back, &v, msg, sizeof msg) && v == DKB_VERDICT_WRONG_ANSWER && strstr(msg, "BOOL"),
          "BOOL 2: %s", msg);
    ((uint8_t *)os.vec[0].data)[0] = 1;
    ((uint8_t *)os.vec[1].data)[0] = 2;
    CHECK(dkb__out_set_collect(&os, &back, &v, msg, sizeof msg) && v == DKB_VERDICT_WRONG_ANSWER &&
              strstr(msg, "dictionary"),
          "code 2: %s", msg);
    ((uint8_t *)os.vec[1].data)[0] = 1;
    ((int64_t *)os.vec[2].data)[1] = os.saved[2].bytes_cap + 1;
    CHECK(dkb__out_set_collect(&os, &back, &v, msg, sizeof msg) && v == DKB_VERDICT_OUTPUT_LIMIT, "strings past cap");
    ((int64_t *)os.vec[2].data)[1] = 3;
    os.vec[0].n = os.saved[0].cap + 1;
    CHECK(dkb__out_set_collect(&os, &back, &v, msg, sizeof msg) && v == DKB_VERDICT_OUTPUT_LIMIT, "n > cap");
    os.vec[0].n = 1;
    os.vec[0].data = NULL; /* a pointer the candidate changed is ignored */
    CHECK(dkb__out_set_collect(&os, &back, &v, msg, sizeof msg) == 0 && back.n == 3 && back.t[2]->nbytes == 3 &&
              back.t[1]->dict == &dict && back.t[0]->data == os.saved[0].data,
          "good collect: %s", msg);
    dkb__out_set_reset(&os, 0x5A);
    CHECK(os.vec[0].data == os.saved[0].data && ((uint8_t *)os.saved[2].bytes)[0] == 0x5A && os.vec[0].n == -1,
          "reset");
    dkb__out_set_free(&os);

    /* likes that disagree between runs */
    dkb_tensor t1 = {.dtype = DKB_TP_I64, .n = 1}, t2 = {.dtype = DKB_TP_F64, .n = 1};
    dkb_tensor_set a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.n = b.n = 1;
    a.name[0] = b.name[0] = "x";
    a.t[0] = &t1, b.t[0] = &t2;
    int nl = 0;
    CHECK(dkb__out_likes_add(likes, &nl, &a, &err) == 0, "likes a");
    CHECK(dkb__out_likes_add(likes, &nl, &b, &err) == DKB_EINVAL, "likes b differ");
    b.t[0] = &t1, b.nscalar = 1, b.sname[0] = "k";
    CHECK(dkb__out_likes_add(likes, &nl, &b, &err) == DKB_EINVAL && strstr(err.msg, "scalar"), "scalar outputs");
}

int main(void) {
    char *dir = make_tmpdir("adapter");
    char *path = make_store(dir, 0.01);
    dkb_store *db = NULL;
    dkb_error err = {0};
    if (dkb_store_open(path, 0, &db, &err)) {
        fprintf(stderr, "open %s: %s\n", path, err.msg);
        return 2;
    }
    test_db(db);
    test_params();
    test_collect_errors();
    test_queries(db);
    dkb_store_close(db);
    rm_tree(dir);
    free(path);
    free(dir);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_harness_adapter: ok\n");
    return failures != 0;
}
