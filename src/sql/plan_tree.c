/* plan_tree.c: DuckDB's plan JSON for people: a compact operator tree (one
 * line per operator with its main expressions) and the JSON indented
 * without re-parsing (contracts in plan.h). What each operator and
 * expression holds is read as DuckDB v1.5 serializes it; a field or class
 * not known here prints by its name, never fails. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "common/date.h"     // defines: dkb__civil_from_days
#include "sql/plan.h"

/* The unset-index sentinel (uint64 max); cJSON reads it as a double. */
#define INVALID_INDEX 1.8e19

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
/* The number o.k, or def when absent or the unset sentinel. */
static double num(const cJSON *o, const char *k, double def) {
    const cJSON *v = get(o, k);
    return cJSON_IsNumber(v) && v->valuedouble < INVALID_INDEX ? v->valuedouble : def;
}
/* s without prefix p, when it has it. */
static const char *strip(const char *s, const char *p) {
    size_t n = strlen(p);
    return s && !strncmp(s, p, n) ? s + n : s;
}

static void expr(FILE *f, const cJSON *e);

static void expr_list(FILE *f, const cJSON *a, const char *sep) {
    const cJSON *x;
    int i = 0;
    cJSON_ArrayForEach(x, a) {
        if (i++) fputs(sep, f);
        expr(f, x);
    }
}

/* A type as DuckDB names it in SQL: INTEGER, DECIMAL(15,2), VARCHAR. */
static void type_name(FILE *f, const cJSON *t) {
    const char *id = str(t, "id");
    fputs(id ? id : "?", f);
    const cJSON *info = get(t, "type_info");
    if (id && !strcmp(id, "DECIMAL") && cJSON_IsObject(info))
        fprintf(f, "(%g,%g)", num(info, "width", 0), num(info, "scale", 0));
}

/* Days since 1970-01-01 as YYYY-MM-DD (dkb__civil_from_days). */
static void civil(FILE *f, int32_t days) {
    int y, m, d;
    dkb__civil_from_days(days, &y, &m, &d);
    fprintf(f, "%04d-%02d-%02d", y, m, d);
}

/* A Value: {"type": T, "is_null": B, "value": V}. Strings and dates quoted
 * as SQL literals, DECIMAL (an unscaled integer in the JSON) at its scale. */
static void value(FILE *f, const cJSON *v) {
    if (cJSON_IsTrue(get(v, "is_null"))) {
        fputs("NULL", f);
        return;
    }
    const cJSON *t = get(v, "type"), *x = get(v, "value");
    const char *id = str(t, "id");
    if (cJSON_IsString(x)) {
        fputc('\'', f);
        for (const char *c = x->valuestring; *c; c++) {
            if (*c == '\n') { /* one line per operator */
                fputs("\\n", f);
                continue;
            }
            if (*c == '\'') fputc('\'', f);
            fputc(*c, f);
        }
        fputc('\'', f);
        return;
    }
    /* an integer that a double holds exactly, or a HUGEINT {"upper", "lower"} of one */
    long long u = 0;
    int exact = cJSON_IsNumber(x) && x->valuedouble > -9e15 && x->valuedouble < 9e15;
    if (exact) u = (long long)x->valuedouble;
    const cJSON *hi = get(x, "upper"), *lo = get(x, "lower");
    if (cJSON_IsNumber(hi) && cJSON_IsNumber(lo) && lo->valuedouble < 9e15 &&
        (hi->valuedouble == 0 || (hi->valuedouble == -1 && lo->valuedouble > 1.8e19 - 9e15))) {
        exact = 1;
        u = hi->valuedouble == 0 ? (long long)lo->valuedouble : -(long long)(18446744073709551616.0 - lo->valuedouble);
    }
    if (id && !strcmp(id, "DECIMAL") && exact) {
        int scale = (int)num(get(t, "type_info"), "scale", 0);
        long long a = u < 0 ? -u : u, p = 1;
        for (int i = 0; i < scale && i < 18; i++) p *= 10;
        if (scale > 0 && scale < 18)
            fprintf(f, "%s%lld.%0*lld", u < 0 ? "-" : "", a / p, scale, a % p);
        else
            fprintf(f, "%lld", u);
        return;
    }
    if (exact && cJSON_IsObject(x)) {
        fprintf(f, "%lld", u);
        return;
    }
    /* DuckDB's DATE is int32 days; the bound keeps the conversion's
     * day + 719468 inside int32 (DuckDB's +infinity date prints raw) */
    if (id && !strcmp(id, "DATE") && exact && u >= INT32_MIN && u <= INT32_MAX - 719468) {
        fputs("DATE '", f);
        civil(f, (int32_t)u);
        fputc('\'', f);
        return;
    }
    char *raw = x ? cJSON_PrintUnformatted(x) : NULL;
    fputs(raw ? raw : "?", f);
    free(raw);
}

static const char *cmp_op(const char *t) {
    static const struct {
        const char *type, *op;
    } ops[] = {{"COMPARE_EQUAL", "="},
               {"COMPARE_NOTEQUAL", "<>"},
               {"COMPARE_LESSTHAN", "<"},
               {"COMPARE_GREATERTHAN", ">"},
               {"COMPARE_LESSTHANOREQUALTO", "<="},
               {"COMPARE_GREATERTHANOREQUALTO", ">="},
               {"COMPARE_DISTINCT_FROM", " IS DISTINCT FROM "},
               {"COMPARE_NOT_DISTINCT_FROM", " IS NOT DISTINCT FROM "}};
    for (size_t i = 0; t && i < DKB_COUNTOF(ops); i++)
        if (!strcmp(t, ops[i].type)) return ops[i].op;
    return t ? t : "?";
}

static void expr(FILE *f, const cJSON *e) {
    const char *cls = str(e, "expression_class"), *type = str(e, "type");
    if (!cls) {
        fputs("?", f);
        return;
    }
    if (!strcmp(cls, "BOUND_REF")) {
        fprintf(f, "#%g", num(e, "index", -1));
    } else if (!strcmp(cls, "BOUND_COLUMN_REF")) {
        const cJSON *b = get(e, "binding");
        fprintf(f, "#%g.%g", num(b, "table_index", -1), num(b, "column_index", -1));
    } else if (!strcmp(cls, "BOUND_CONSTANT")) {
        value(f, get(e, "value"));
    } else if (!strcmp(cls, "BOUND_COMPARISON")) {
        fputc('(', f);
        expr(f, get(e, "left"));
        fputs(cmp_op(type), f);
        expr(f, get(e, "right"));
        fputc(')', f);
    } else if (!strcmp(cls, "BOUND_CONJUNCTION")) {
        fputc('(', f);
        expr_list(f, get(e, "children"), type && !strcmp(type, "CONJUNCTION_OR") ? " OR " : " AND ");
        fputc(')', f);
    } else if (!strcmp(cls, "BOUND_BETWEEN")) {
        expr(f, get(e, "input"));
        fputs(" BETWEEN ", f);
        expr(f, get(e, "lower"));
        fputs(" AND ", f);
        expr(f, get(e, "upper"));
    } else if (!strcmp(cls, "BOUND_CAST")) {
        fputs(cJSON_IsTrue(get(e, "try_cast")) ? "TRY_CAST(" : "CAST(", f);
        expr(f, get(e, "child"));
        fputs(" AS ", f);
        type_name(f, get(e, "return_type"));
        fputc(')', f);
    } else if (!strcmp(cls, "BOUND_CASE")) {
        const cJSON *c;
        fputs("CASE", f);
        cJSON_ArrayForEach(c, get(e, "case_checks")) {
            fputs(" WHEN ", f);
            expr(f, get(c, "when_expr"));
            fputs(" THEN ", f);
            expr(f, get(c, "then_expr"));
        }
        fputs(" ELSE ", f);
        expr(f, get(e, "else_expr"));
        fputs(" END", f);
    } else if (!strcmp(cls, "BOUND_FUNCTION") || !strcmp(cls, "BOUND_AGGREGATE")) {
        const char *name = str(e, "name");
        const cJSON *ch = get(e, "children");
        if (cJSON_IsTrue(get(e, "is_operator")) && cJSON_GetArraySize(ch) == 2 && name) {
            fputc('(', f);
            expr(f, cJSON_GetArrayItem(ch, 0));
            fprintf(f, "%s", name);
            expr(f, cJSON_GetArrayItem(ch, 1));
            fputc(')', f);
        } else {
            fprintf(f, "%s(", name ? name : "?");
            const char *agg = str(e, "aggregate_type");
            if (agg && !strcmp(agg, "DISTINCT")) fputs("DISTINCT ", f);
            expr_list(f, ch, ", ");
            fputc(')', f);
            const cJSON *filter = get(e, "filter");
            if (cJSON_IsObject(filter)) {
                fputs(" FILTER (", f);
                expr(f, filter);
                fputc(')', f);
            }
        }
    } else if (!strcmp(cls, "BOUND_OPERATOR")) {
        const cJSON *ch = get(e, "children");
        if (type && (!strcmp(type, "COMPARE_IN") || !strcmp(type, "COMPARE_NOT_IN")) && cJSON_GetArraySize(ch) >= 1) {
            expr(f, cJSON_GetArrayItem(ch, 0));
            fputs(strcmp(type, "COMPARE_IN") ? " NOT IN (" : " IN (", f);
            int i = 0;
            const cJSON *x;
            cJSON_ArrayForEach(x, ch) {
                if (i++ == 0) continue;
                if (i > 2) fputs(", ", f);
                expr(f, x);
            }
            fputc(')', f);
        } else {
            fprintf(f, "%s(", strip(type, "OPERATOR_"));
            expr_list(f, ch, ", ");
            fputc(')', f);
        }
    } else {
        /* BOUND_WINDOW, BOUND_SUBQUERY, ...: the class and the children */
        fprintf(f, "%s(", strip(cls, "BOUND_"));
        expr_list(f, get(e, "children"), ", ");
        fputc(')', f);
    }
}

/* The table filter f (of LOGICAL_GET) on column col. */
static void table_filter(FILE *f, const char *col, const cJSON *flt) {
    const char *t = str(flt, "filter_type");
    if (!t) {
        fputs("?", f);
    } else if (!strcmp(t, "CONSTANT_COMPARISON")) {
        fprintf(f, "%s%s", col, cmp_op(str(flt, "comparison_type")));
        value(f, get(flt, "constant"));
    } else if (!strcmp(t, "CONJUNCTION_AND") || !strcmp(t, "CONJUNCTION_OR")) {
        const cJSON *c;
        int i = 0;
        fputc('(', f);
        cJSON_ArrayForEach(c, get(flt, "child_filters")) {
            if (i++) fputs(strcmp(t, "CONJUNCTION_OR") ? " AND " : " OR ", f);
            table_filter(f, col, c);
        }
        fputc(')', f);
    } else if (!strcmp(t, "IS_NULL") || !strcmp(t, "IS_NOT_NULL")) {
        fprintf(f, "%s %s", col, strcmp(t, "IS_NULL") ? "IS NOT NULL" : "IS NULL");
    } else if (!strcmp(t, "OPTIONAL_FILTER")) {
        fputs("optional ", f);
        table_filter(f, col, get(flt, "child_filter"));
    } else if (!strcmp(t, "IN_FILTER")) {
        const cJSON *v;
        int i = 0;
        fprintf(f, "%s IN (", col);
        cJSON_ArrayForEach(v, get(flt, "values")) {
            if (i++) fputs(", ", f);
            value(f, v);
        }
        fputc(')', f);
    } else if (!strcmp(t, "EXPRESSION_FILTER")) {
        fprintf(f, "%s: ", col);
        expr(f, get(flt, "expr"));
    } else {
        fprintf(f, "%s %s", col, t);
    }
}

static void get_op(FILE *f, const cJSON *op) {
    const cJSON *fd = get(op, "function_data"), *names = get(op, "names");
    const char *table = str(fd, "table");
    fprintf(f, " %s", table ? table : str(op, "name") ? str(op, "name") : "?");
    fprintf(f, " #%g [", num(op, "table_index", -1));
    const cJSON *ci;
    int i = 0;
    cJSON_ArrayForEach(ci, get(op, "column_indexes")) {
        double idx = num(ci, "index", -1); /* the unset sentinel: the row id (count_star) */
        const cJSON *nm = idx < 0 ? NULL : cJSON_GetArrayItem(names, (int)idx);
        fprintf(f, "%s%s", i++ ? ", " : "", cJSON_IsString(nm) ? nm->valuestring : idx < 0 ? "rowid" : "?");
    }
    fputc(']', f);
    const cJSON *pids = get(op, "projection_ids");
    if (cJSON_GetArraySize(pids) > 0) {
        char *p = cJSON_PrintUnformatted(pids);
        fprintf(f, " projection_ids: %s", p ? p : "?");
        free(p);
    }
    const cJSON *flt;
    i = 0;
    cJSON_ArrayForEach(flt, get(get(op, "table_filters"), "filters")) {
        /* key: the filtered column's index in the table (into names) */
        const cJSON *nm = cJSON_GetArrayItem(names, (int)num(flt, "key", -1));
        fputs(i++ ? ", " : " filters: ", f);
        table_filter(f, cJSON_IsString(nm) ? nm->valuestring : "?", get(flt, "value"));
    }
}

static void orders(FILE *f, const cJSON *os) {
    const cJSON *o;
    int i = 0;
    cJSON_ArrayForEach(o, os) {
        if (i++) fputs(", ", f);
        expr(f, get(o, "expression"));
        const char *t = str(o, "type");
        fprintf(f, " %s", t && strstr(t, "DESC") ? "DESC" : "ASC");
    }
}

static void operator_line(FILE *f, const cJSON *op, int depth) {
    const char *type = strip(str(op, "type"), "LOGICAL_");
    fprintf(f, "%*s%s", 2 * depth, "", type ? type : "?");
    if (!type) {
        fputc('\n', f);
        return;
    }
    double ti = num(op, "table_index", -1);
    if (!strcmp(type, "GET")) {
        get_op(f, op);
    } else if (!strcmp(type, "PROJECTION")) {
        fprintf(f, " #%g ", ti);
        expr_list(f, get(op, "expressions"), ", ");
    } else if (!strcmp(type, "FILTER")) {
        fputc(' ', f);
        if (cJSON_GetArraySize(get(op, "expressions")) == 0)
            fputs("(no condition: every row passes)", f); /* left behind by filter pushdown */
        else
            expr_list(f, get(op, "expressions"), " AND ");
        const cJSON *pm = get(op, "projection_map");
        if (cJSON_GetArraySize(pm) > 0) {
            char *t = cJSON_PrintUnformatted(pm);
            fprintf(f, " projection_map: %s", t ? t : "?");
            free(t);
        }
    } else if (!strcmp(type, "AGGREGATE_AND_GROUP_BY")) {
        fprintf(f, " #%g", num(op, "aggregate_index", -1));
        if (cJSON_GetArraySize(get(op, "groups")) > 0) {
            fprintf(f, " groups #%g: ", num(op, "group_index", -1));
            expr_list(f, get(op, "groups"), ", ");
        }
        fputs(" aggregates: ", f);
        expr_list(f, get(op, "expressions"), ", ");
    } else if (!strcmp(type, "COMPARISON_JOIN") || !strcmp(type, "DELIM_JOIN") || !strcmp(type, "ANY_JOIN") ||
               !strcmp(type, "ASOF_JOIN") || !strcmp(type, "DEPENDENT_JOIN")) {
        const char *jt = str(op, "join_type");
        fprintf(f, " %s", jt ? jt : "?");
        if (jt && !strcmp(jt, "MARK")) fprintf(f, " mark #%g", num(op, "mark_index", -1));
        const cJSON *c;
        int i = 0;
        cJSON_ArrayForEach(c, get(op, "conditions")) {
            fputs(i++ ? " AND " : " on ", f);
            expr(f, get(c, "left"));
            fputs(cmp_op(str(c, "comparison")), f);
            expr(f, get(c, "right"));
        }
        if (cJSON_GetArraySize(get(op, "duplicate_eliminated_columns")) > 0) {
            fputs(" delim: ", f);
            expr_list(f, get(op, "duplicate_eliminated_columns"), ", ");
        }
    } else if (!strcmp(type, "CROSS_PRODUCT")) {
    } else if (!strcmp(type, "ORDER_BY")) {
        fputc(' ', f);
        orders(f, get(op, "orders"));
    } else if (!strcmp(type, "TOP_N")) {
        fputc(' ', f);
        orders(f, get(op, "orders"));
        fprintf(f, " limit %g", num(op, "limit", -1));
        if (num(op, "offset", 0) > 0) fprintf(f, " offset %g", num(op, "offset", 0));
    } else if (!strcmp(type, "LIMIT")) {
        const cJSON *l = get(op, "limit_val"), *o = get(op, "offset_val");
        if (cJSON_IsObject(get(l, "expression"))) {
            fputs(" limit ", f);
            expr(f, get(l, "expression"));
        } else if (num(l, "constant_integer", -1) >= 0) {
            fprintf(f, " limit %g", num(l, "constant_integer", -1));
        }
        if (num(o, "constant_integer", 0) > 0) fprintf(f, " offset %g", num(o, "constant_integer", 0));
    } else if (!strcmp(type, "MATERIALIZED_CTE")) {
        const char *name = str(op, "ctename");
        fprintf(f, " %s #%g", name ? name : "?", ti);
    } else if (!strcmp(type, "CTE_REF")) {
        fprintf(f, " #%g of cte #%g", ti, num(op, "cte_index", -1));
    } else if (ti >= 0) {
        fprintf(f, " #%g", ti); /* DELIM_GET, CHUNK_GET, DUMMY_SCAN, ... */
    }
    fputc('\n', f);
}

static void tree(FILE *f, const cJSON *op, int depth) {
    operator_line(f, op, depth);
    const cJSON *c;
    cJSON_ArrayForEach(c, get(op, "children")) tree(f, c, depth + 1);
}

int dkb__sql_plan_tree(const char *json, char **out, dkb_error *err) {
    if (!out) return dkb_fail(err, DKB_EINVAL, "dkb__sql_plan_tree: NULL out");
    *out = NULL;
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    const cJSON *plans = get(doc, "plans");
    if (!cJSON_IsArray(plans)) {
        cJSON_Delete(doc);
        return dkb_fail(err, DKB_EPARSE, "not a DuckDB plan document (no \"plans\" array)");
    }
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f) {
        cJSON_Delete(doc);
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, plans) tree(f, p, 0);
    int bad = ferror(f);
    fclose(f);
    cJSON_Delete(doc);
    if (bad || !*out) {
        free(*out);
        *out = NULL;
        return dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    return 0;
}

int dkb__sql_json_pretty(const char *json, char **out, dkb_error *err) {
    if (!out) return dkb_fail(err, DKB_EINVAL, "dkb__sql_json_pretty: NULL out");
    *out = NULL;
    if (!json) return dkb_fail(err, DKB_EINVAL, "dkb__sql_json_pretty: NULL json");
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    int depth = 0, bad = 0;
    for (const char *c = json; *c && !bad; c++) {
        switch (*c) {
        case '"': {
            const char *s = c++;
            while (*c && *c != '"') c += (*c == '\\' && c[1]) ? 2 : 1;
            if (!*c) {
                bad = 1;
                break;
            }
            fwrite(s, 1, (size_t)(c - s + 1), f);
            break;
        }
        case '{':
        case '[': {
            const char *n = c + 1;
            while (*n == ' ' || *n == '\n' || *n == '\t' || *n == '\r') n++;
            if (*n == (*c == '{' ? '}' : ']')) { /* empty: {} or [] */
                fputc(*c, f);
                fputc(*n, f);
                c = n;
                break;
            }
            fputc(*c, f);
            depth++;
            fprintf(f, "\n%*s", 2 * depth, "");
            break;
        }
        case '}':
        case ']':
            if (--depth < 0) bad = 1;
            fprintf(f, "\n%*s%c", 2 * (depth > 0 ? depth : 0), "", *c);
            break;
        case ',': fprintf(f, ",\n%*s", 2 * depth, ""); break;
        case ':': fputs(": ", f); break;
        case ' ':
        case '\n':
        case '\t':
        case '\r': break;
        default: fputc(*c, f);
        }
    }
    if (depth) bad = 1;
    fputc('\n', f);
    int ioerr = ferror(f);
    fclose(f);
    if (bad || ioerr || !*out) {
        free(*out);
        *out = NULL;
        return bad ? dkb_fail(err, DKB_EPARSE, "not JSON: brackets unbalanced or a string unterminated")
                   : dkb_fail(err, DKB_ENOMEM, "out of memory");
    }
    return 0;
}
