/* context.c: the workload and hardware context of `dkb optimize` prompts
 * (context.h): measured from the store at the drawn parameters, and read
 * from the GPU or /proc and sysfs. */
#include "optimize/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/date.h"           // defines: dkb__civil_from_days
#include "dkb/tensor.h"
#include "optimize/target.h"       // defines: dkb__opt_target_find
#include "optimize/template.h"     // defines: dkb_opt_buf

/* A main predicate of a query, in terms of the baseline's prepared inputs:
 * vector `vec` compared with the scalar(s) the prepare step made from the
 * parameters. */
typedef enum { PRED_BETWEEN, PRED_LT, PRED_LE, PRED_GT, PRED_EQ } pred_op;
typedef struct pred {
    int qnum;
    const char *vec;
    pred_op op;
    const char *lo, *hi;   /* scalar names: lo (the bound of LT/LE/GT/EQ), hi for BETWEEN */
} pred;

static const pred PREDICATES[] = {
    {1, "l_shipdate", PRED_LE, "ship_hi", NULL},
    {3, "c_mktsegment", PRED_EQ, "segment", NULL},
    {3, "o_orderdate", PRED_LT, "date", NULL},
    {3, "l_shipdate", PRED_GT, "date", NULL},
    {4, "o_orderdate", PRED_BETWEEN, "date_lo", "date_hi"},
    {5, "o_orderdate", PRED_BETWEEN, "date_lo", "date_hi"},
    {5, "r_name", PRED_EQ, "region", NULL},
    {6, "l_shipdate", PRED_BETWEEN, "ship_lo", "ship_hi"},
    {6, "l_discount", PRED_BETWEEN, "disc_lo", "disc_hi"},
    {6, "l_quantity", PRED_LT, "qty_lt", NULL},
    {7, "l_shipdate", PRED_BETWEEN, "ship_lo", "ship_hi"},
    {10, "o_orderdate", PRED_BETWEEN, "date_lo", "date_hi"},
    {10, "l_returnflag", PRED_EQ, "flag", NULL},
    {12, "l_receiptdate", PRED_BETWEEN, "receipt_lo", "receipt_hi"},
    {14, "l_shipdate", PRED_BETWEEN, "ship_lo", "ship_hi"},
    {15, "l_shipdate", PRED_BETWEEN, "ship_lo", "ship_hi"},
    {20, "l_shipdate", PRED_BETWEEN, "ship_lo", "ship_hi"},
};

int dkb__opt_npredicates(int qnum) {
    int n = 0;
    for (size_t i = 0; i < sizeof PREDICATES / sizeof PREDICATES[0]; i++) n += PREDICATES[i].qnum == qnum;
    return n;
}

/* The store column called name in any table (prepared inputs keep the
 * column's name), or NULL. */
static const dkb_store_column *find_column(const dkb_store *db, const char *name, const char **table) {
    for (int t = 0; t < dkb_store_ntables(db); t++) {
        const dkb_store_table *tab = dkb_store_table_at(db, t);
        const dkb_store_column *c = dkb_store_table_column(tab, name);
        if (c) {
            *table = dkb_store_table_name(tab);
            return c;
        }
    }
    return NULL;
}

static int is_integer(dkb_tp_dtype t) { return t >= DKB_TP_BOOL && t <= DKB_TP_I64; }

static int64_t value_at(const dkb_tensor *t, int64_t i) {
    switch (t->dtype) {
    case DKB_TP_BOOL:
    case DKB_TP_U8: return ((const uint8_t *)t->data)[i];
    case DKB_TP_I8: return ((const int8_t *)t->data)[i];
    case DKB_TP_I16: return ((const int16_t *)t->data)[i];
    case DKB_TP_I32: return ((const int32_t *)t->data)[i];
    default: return ((const int64_t *)t->data)[i];
    }
}

static void format_value(char *buf, size_t n, int64_t v, dkb_type_t type, int scale) {
    if (type == DKB_TYPE_DATE) {
        int y, m, d;
        dkb__civil_from_days((int32_t)v, &y, &m, &d);
        snprintf(buf, n, "%04d-%02d-%02d", y, m, d);
    } else if (scale > 0) {
        int64_t p = 1;
        for (int i = 0; i < scale && i < 18; i++) p *= 10;
        char frac[24];
        snprintf(frac, sizeof frac, "%0*lld", scale > 18 ? 18 : scale, (long long)(v < 0 ? -v : v) % (long long)p);
        snprintf(buf, n, "%s%lld.%s", v < 0 ? "-" : "", (long long)(v < 0 ? -v : v) / (long long)p, frac);
    } else {
        snprintf(buf, n, "%lld", (long long)v);
    }
}

static int scalar_of(const dkb_tensor_set *s, const char *name, int64_t *v) {
    for (int i = 0; i < s->nscalar; i++)
        if (!strcmp(s->sname[i], name) && !s->sval[i]) {
            *v = s->ival[i];
            return 1;
        }
    return 0;
}

static const dkb_tensor *vector_of(const dkb_tensor_set *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], name)) return s->t[i];
    return NULL;
}

static void selectivities(const dkb_query *q, const dkb_tensor_set *in, dkb_opt_buf *b) {
    int any = 0;
    for (size_t k = 0; k < sizeof PREDICATES / sizeof PREDICATES[0]; k++) {
        const pred *pr = &PREDICATES[k];
        if (pr->qnum != q->number) continue;
        const dkb_tensor *t = vector_of(in, pr->vec);
        int64_t lo = 0, hi = 0;
        if (!t || !is_integer(t->dtype) || !scalar_of(in, pr->lo, &lo) || (pr->hi && !scalar_of(in, pr->hi, &hi)))
            continue;
        int64_t pass = 0;
        for (int64_t i = 0; i < t->n; i++) {
            int64_t v = value_at(t, i);
            switch (pr->op) {
            case PRED_BETWEEN: pass += v >= lo && v <= hi; break;
            case PRED_LT: pass += v < lo; break;
            case PRED_LE: pass += v <= lo; break;
            case PRED_GT: pass += v > lo; break;
            case PRED_EQ: pass += v == lo; break;
            }
        }
        static const char *const OPS[] = {"between %s and %s", "< %s", "<= %s", "> %s", "= %s"};
        char cond[96];
        snprintf(cond, sizeof cond, OPS[pr->op], pr->lo, pr->hi ? pr->hi : "");
        if (!any) dkb__opt_buf_puts(b, "\nPredicate selectivities at these parameters (fraction of rows that pass):\n");
        any = 1;
        dkb__opt_buf_printf(b, "- %s %s: %.4f (%lld of %lld rows)\n", pr->vec, cond,
                            t->n ? (double)pass / (double)t->n : 0.0, (long long)pass, (long long)t->n);
    }
    if (!any) dkb__opt_buf_puts(b, "\nPredicate selectivities: not measured for this query.\n");
}

int dkb__opt_workload_context(const dkb_query *q, const dkb_store *db, const dkb_params *p, char **out,
                              dkb_error *err) {
    *out = NULL;
    dkb_tp *tp = NULL;
    int rc = dkb_tp_create(DKB_TP_CPU, 0, &tp, err);
    if (rc) return rc;
    dkb_tensor_set in = {0};
    rc = q->prepare(tp, db, p, &in);
    if (rc || (rc = dkb_tp_status(tp, err))) {
        dkb_tp_status(tp, err);
        rc = dkb_fail(err, rc ? rc : DKB_EINTERNAL, "%s prepare (workload context): %s", q->name, err->msg);
        dkb_tp_destroy(tp);
        return rc;
    }

    dkb_opt_buf b = {0};
    dkb__opt_buf_printf(&b, "Scale factor %g. Tables read:", dkb_store_scale_factor(db));
    const char *listed[DKB_SET_MAX];
    int nlisted = 0;
    for (int i = 0; i < in.n; i++) {
        const char *table = NULL;
        if (!find_column(db, in.name[i], &table)) continue;
        int seen = 0;
        for (int j = 0; j < nlisted; j++) seen |= !strcmp(listed[j], table);
        if (seen) continue;
        listed[nlisted++] = table;
        dkb__opt_buf_printf(&b, "%s %s (%lld rows)", nlisted > 1 ? "," : "", table,
                            (long long)dkb_store_table_rows(dkb_store_table_find(db, table)));
    }
    dkb__opt_buf_puts(&b, ".\n\nInputs of the baseline's prepare step (the columns the query reads):\n");
    for (int i = 0; i < in.n; i++) {
        const dkb_tensor *t = in.t[i];
        const char *table = NULL;
        const dkb_store_column *col = find_column(db, in.name[i], &table);
        dkb_type_t type = col ? dkb_column_type(col) : DKB_TYPE_INT;
        dkb__opt_buf_printf(&b, "- %s%s%s: %lld rows", table ? table : "", table ? "." : "", in.name[i],
                            (long long)t->n);
        if (t->dict) {
            dkb__opt_buf_printf(&b, ", dictionary of %d strings", t->dict->size);
            if (t->dict->size <= 8) {
                dkb__opt_buf_puts(&b, " (");
                for (int k = 0; k < t->dict->size; k++)
                    dkb__opt_buf_printf(&b, "%s%d='%.*s'", k ? ", " : "", k, (int)t->dict->len[k], t->dict->str[k]);
                dkb__opt_buf_puts(&b, ")");
            }
        } else if (is_integer(t->dtype) && t->n > 0) {
            int64_t lo = value_at(t, 0), hi = lo;
            for (int64_t r = 1; r < t->n; r++) {
                int64_t v = value_at(t, r);
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
            char a[48], z[48];
            format_value(a, sizeof a, lo, type, t->scale);
            format_value(z, sizeof z, hi, type, t->scale);
            dkb__opt_buf_printf(&b, ", values %s .. %s", a, z);
            size_t len = strlen(in.name[i]);
            if (len > 3 && !strcmp(in.name[i] + len - 3, "key"))
                dkb__opt_buf_printf(&b, ", key density (max key / rows) %.2f", (double)hi / (double)t->n);
        }
        dkb__opt_buf_puts(&b, "\n");
    }
    if (in.nscalar) {
        dkb__opt_buf_puts(&b, "\nScalars the prepare step makes from the parameters (in the columns' units):\n");
        for (int i = 0; i < in.nscalar; i++) {
            if (in.sval[i]) dkb__opt_buf_printf(&b, "- %s = '%s'\n", in.sname[i], in.sval[i]);
            else dkb__opt_buf_printf(&b, "- %s = %lld\n", in.sname[i], (long long)in.ival[i]);
        }
    }
    selectivities(q, &in, &b);
    dkb_tp_destroy(tp);
    *out = dkb__opt_buf_take(&b);
    return *out ? 0 : dkb_fail(err, DKB_ENOMEM, "%s: workload context: out of memory", q->name);
}

/* The first line of a small sysfs/proc file, trimmed; "" when absent. */
static void read_line(const char *path, char *buf, size_t n) {
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fgets(buf, (int)n, f)) buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void cpu_context(dkb_opt_buf *b) {
    char model[256] = "unknown", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10)) continue;
            char *v = strchr(line, ':');
            if (!v) continue;
            v++;
            while (*v == ' ' || *v == '\t') v++;
            v[strcspn(v, "\n")] = '\0';
            snprintf(model, sizeof model, "%s", v);
            break;
        }
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    dkb__opt_buf_printf(b, "- CPU: %s, %ld cores online\n", model, cores);
    for (int idx = 0; idx < 8; idx++) {
        char path[128], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        read_line(path, level, sizeof level);
        if (!level[0]) break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        read_line(path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        read_line(path, size, sizeof size);
        dkb__opt_buf_printf(b, "- L%s %s cache: %s\n", level, type, size);
    }
    char mem[256] = "";
    f = fopen("/proc/meminfo", "r");
    if (f) {
        if (fgets(mem, sizeof mem, f)) mem[strcspn(mem, "\n")] = '\0';
        fclose(f);
    }
    if (mem[0]) dkb__opt_buf_printf(b, "- %s\n", mem);
}

int dkb__opt_hardware_context(const char *target, char **out, dkb_error *err) {
    *out = NULL;
    dkb_opt_buf b = {0};
    const dkb_opt_target *t = dkb__opt_target_find(target);
    if (!t) return dkb_fail(err, DKB_EINVAL, "hardware context: unknown target '%s'", target ? target : "(null)");
    if (t->gpu) {
        dkb_tp_device_info d;
        int rc = dkb_tp_device_query(&d, err);
        if (rc) return rc;
        double bw = d.mem_bus_bits > 0 && d.mem_clock_khz > 0 ? 2.0 * d.mem_clock_khz * 1e3 * (d.mem_bus_bits / 8.0) / 1e9
                                                            : 0;
        dkb__opt_buf_printf(&b, "- GPU: %s, compute capability %d.%d, %d SMs\n", d.name, d.cc_major, d.cc_minor, d.sms);
        dkb__opt_buf_printf(&b, "- Global memory: %.1f GiB", (double)d.mem_bytes / (1 << 30));
        if (bw > 0) dkb__opt_buf_printf(&b, ", peak bandwidth about %.0f GB/s", bw);
        dkb__opt_buf_printf(&b, "\n- L2 cache: %.1f MiB\n", (double)d.l2_bytes / (1 << 20));
    } else {
        cpu_context(&b);
    }
    dkb__opt_buf_puts(&b, t->toolchain);
    *out = dkb__opt_buf_take(&b);
    return *out ? 0 : dkb_fail(err, DKB_ENOMEM, "hardware context: out of memory");
}
