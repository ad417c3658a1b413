/* task_params.c: "-- dkb:param" declarations of a SQL task file: parsing
 * (one line per problem, with the file and line), the seed's draw and the
 * check of given values (contract in task_params.h). */
#include "sql/task_params.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/date.h"
#include "result/result_internal.h"  // defines: dkb__res_parse_dec, dkb__res_parse_date, dkb__res_parse_int

/* A line being parsed. */
typedef struct cur {
    const char *p, *end;
    const char *path;
    int line;
    dkb_error *err;
} cur;

static int bad(cur *c, const char *fmt, const char *arg) {
    char what[400];
    snprintf(what, sizeof what, fmt, arg);
    return dkb_fail(c->err, DKB_EINVAL, "%.200s:%d: dkb:param: %s", c->path, c->line, what);
}

static void skip_space(cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')) c->p++;
}

/* The next word (up to a blank or a comma) into w; its length. */
static size_t word(cur *c, char *w, size_t n) {
    skip_space(c);
    const char *s = c->p;
    while (c->p < c->end && !isspace((unsigned char)*c->p) && *c->p != ',') c->p++;
    size_t len = (size_t)(c->p - s);
    snprintf(w, n, "%.*s", (int)(len < n ? len : n - 1), s);
    return len;
}

static bool is_name(const char *s) {
    if (!(islower((unsigned char)s[0]) || s[0] == '_')) return false;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_')) return false;
    return true;
}

/* A value of d's kind from text t: INT, DECIMAL (at most 9 digits after
 * the point; *scale its digits), DATE. */
static int parse_num(cur *c, const dkb__sql_pdecl *d, const char *t, int64_t *v, int *scale) {
    size_t n = strlen(t);
    *scale = 0;
    if (d->kind == DKB_PARAM_DATE) {
        int32_t days;
        if (dkb__res_parse_date(t, n, &days)) return bad(c, "'%s' is not a date YYYY-MM-DD", t);
        *v = days;
        return 0;
    }
    if (d->kind == DKB_PARAM_INT) {
        if (dkb__res_parse_int(t, n, v)) return bad(c, "'%s' is not an integer", t);
        if (*v > (INT64_C(1) << 60) || *v < -(INT64_C(1) << 60)) return bad(c, "'%s' is out of range", t);
        return 0;
    }
    __int128 x;
    if (strpbrk(t, "eE") || dkb__res_parse_dec(t, n, 9, &x, scale)) return bad(c, "'%s' is not a decimal number such as 0.05", t);
    if (x > ((__int128)1 << 50) || x < -((__int128)1 << 50)) return bad(c, "'%s' is out of range", t);
    *v = (int64_t)x;
    return 0;
}

static int64_t pow10i(int k) {
    int64_t p = 1;
    while (k-- > 0) p *= 10;
    return p;
}

/* Months from y-m to the month of the later date. */
static int64_t month_index(int32_t days) {
    int y, m, d;
    dkb__civil_from_days(days, &y, &m, &d);
    return (int64_t)y * 12 + (m - 1);
}

/* Grid point k of a DATE with a month or year step. */
static int64_t date_at(const dkb__sql_pdecl *d, int64_t k) {
    int y, m, day;
    dkb__civil_from_days((int32_t)d->lo, &y, &m, &day);
    int64_t months = (int64_t)y * 12 + (m - 1) + k * d->step * (d->unit == DKB_SQL_STEP_YEAR ? 12 : 1);
    return dkb__days_from_civil((int)(months / 12), (int)(months % 12) + 1, day);
}

static int64_t value_at(const dkb__sql_pdecl *d, int64_t k) {
    if (d->kind == DKB_PARAM_DATE && d->unit != DKB_SQL_STEP_UNIT) return date_at(d, k);
    return d->lo + k * d->step;
}

/* The grid index of value v, or -1 when v is off the grid. */
static int64_t index_of(const dkb__sql_pdecl *d, int64_t v) {
    if (d->kind == DKB_PARAM_DATE && d->unit != DKB_SQL_STEP_UNIT) {
        int64_t per = d->step * (d->unit == DKB_SQL_STEP_YEAR ? 12 : 1);
        int64_t k = (month_index((int32_t)v) - month_index((int32_t)d->lo)) / per;
        return k >= 0 && k < d->count && date_at(d, k) == v ? k : -1;
    }
    if (v < d->lo || v > d->hi || (v - d->lo) % d->step) return -1;
    return (v - d->lo) / d->step;
}

/* A choice: 'text' ('' for a quote) or a bare word; into out. */
static int choice_value(cur *c, char *out) {
    skip_space(c);
    size_t n = 0;
    if (c->p < c->end && *c->p == '\'') {
        c->p++;
        for (;;) {
            if (c->p >= c->end) return bad(c, "%sa quoted choice is not closed", "");
            if (*c->p == '\'') {
                if (c->p + 1 < c->end && c->p[1] == '\'') c->p++;
                else break;
            }
            if ((unsigned char)*c->p < 0x20) return bad(c, "%sa choice holds a control character", "");
            if (n + 1 >= DKB_PARAM_STRLEN) return bad(c, "a choice is longer than %s bytes", "47");
            out[n++] = *c->p++;
        }
        c->p++;
    } else {
        while (c->p < c->end && !isspace((unsigned char)*c->p) && *c->p != ',') {
            if (*c->p == '\'') return bad(c, "%sa choice has a quote inside a bare word", "");
            if (n + 1 >= DKB_PARAM_STRLEN) return bad(c, "a choice is longer than %s bytes", "47");
            out[n++] = *c->p++;
        }
        if (!n) return bad(c, "%sa choice is empty (quote it: '')", "");
    }
    out[n] = 0;
    return 0;
}

/* "step [N] day|month|year" of a DATE (after "step"). */
static int date_step(cur *c, dkb__sql_pdecl *d) {
    char w[64];
    word(c, w, sizeof w);
    int64_t n = 1;
    if (isdigit((unsigned char)w[0])) {
        if (dkb__res_parse_int(w, strlen(w), &n) || n < 1 || n > 100000) return bad(c, "step '%s' is not a count from 1", w);
        word(c, w, sizeof w);
    }
    size_t len = strlen(w);
    if (len > 1 && w[len - 1] == 's') w[len - 1] = 0;
    d->step = n;
    if (!strcmp(w, "day")) d->unit = DKB_SQL_STEP_UNIT;
    else if (!strcmp(w, "month")) d->unit = DKB_SQL_STEP_MONTH;
    else if (!strcmp(w, "year")) d->unit = DKB_SQL_STEP_YEAR;
    else return bad(c, "date step '%s': expected day, month or year", w);
    return 0;
}

/* One declaration, the text after "dkb:param". */
static int parse_decl(cur *c, dkb__sql_pdecl *d) {
    memset(d, 0, sizeof *d);
    char w[128], range_t[128] = "", lo_t[64] = "", hi_t[64] = "", step_t[64] = "", def_t[DKB_PARAM_STRLEN + 8] = "";
    if (!word(c, w, sizeof w)) return bad(c, "%sexpected NAME TYPE ...", "");
    if (strlen(w) >= DKB_SQL_PARAM_NAME_MAX || !is_name(w))
        return bad(c, "name '%s': expected [a-z_][a-z0-9_]*, at most 31 characters", w);
    memcpy(d->name, w, strlen(w) + 1); /* shorter than DKB_SQL_PARAM_NAME_MAX: checked above */
    char type[32];
    word(c, type, sizeof type);
    if (!strcmp(type, "int")) d->kind = DKB_PARAM_INT;
    else if (!strcmp(type, "decimal")) d->kind = DKB_PARAM_DECIMAL;
    else if (!strcmp(type, "date")) d->kind = DKB_PARAM_DATE;
    else if (!strcmp(type, "choice")) d->kind = DKB_PARAM_STRING;
    else return bad(c, "type '%s': expected int, decimal, date or choice", type);
    bool has_def = false;
    char def_choice[DKB_PARAM_STRLEN] = "";
    if (d->kind == DKB_PARAM_STRING) {
        for (;;) {
            if (d->nchoice == DKB_SQL_PARAM_CHOICES) return bad(c, "more than %s choices", "64");
            int rc = choice_value(c, d->choice[d->nchoice]);
            if (rc) return rc;
            for (int i = 0; i < d->nchoice; i++)
                if (!strcmp(d->choice[i], d->choice[d->nchoice])) return bad(c, "choice '%s' is listed twice", d->choice[i]);
            d->nchoice++;
            skip_space(c);
            if (c->p < c->end && *c->p == ',') {
                c->p++;
                continue;
            }
            break;
        }
        d->count = d->nchoice;
    } else {
        word(c, w, sizeof w);
        const char *dots = strstr(w, "..");
        if (!dots || dots == w || !dots[2]) return bad(c, "range '%s': expected LO..HI", w);
        snprintf(range_t, sizeof range_t, "%s", w);
        snprintf(lo_t, sizeof lo_t, "%.*s", (int)(dots - w), w);
        snprintf(hi_t, sizeof hi_t, "%s", dots + 2);
    }
    /* options: step, default */
    for (;;) {
        size_t n = word(c, w, sizeof w);
        if (!n) break;
        if (!strcmp(w, "step") && d->kind != DKB_PARAM_STRING && !step_t[0]) {
            if (d->kind == DKB_PARAM_DATE) {
                int rc = date_step(c, d);
                if (rc) return rc;
                snprintf(step_t, sizeof step_t, "date");
            } else if (!word(c, step_t, sizeof step_t)) {
                return bad(c, "%sstep without a value", "");
            }
        } else if (!strcmp(w, "default") && !has_def) {
            has_def = true;
            if (d->kind == DKB_PARAM_STRING) {
                int rc = choice_value(c, def_choice);
                if (rc) return rc;
            } else if (!word(c, def_t, sizeof def_t)) {
                return bad(c, "%sdefault without a value", "");
            }
        } else {
            return bad(c, "unexpected '%s' (options: step, default, each once)", w);
        }
    }
    if (d->kind == DKB_PARAM_STRING) {
        d->def = 0;
        if (has_def) {
            d->def = -1;
            for (int i = 0; i < d->nchoice; i++)
                if (!strcmp(d->choice[i], def_choice)) d->def = i;
            if (d->def < 0) return bad(c, "default '%s' is not one of the choices", def_choice);
        }
        snprintf(d->help, sizeof d->help, "one of %d choices", d->nchoice);
        return 0;
    }
    /* numbers: the scale of a DECIMAL is the most digits any of them has */
    int64_t lo, hi, step = 1, def = 0;
    int s1, s2, s3 = 0, s4 = 0, rc;
    if ((rc = parse_num(c, d, lo_t, &lo, &s1)) || (rc = parse_num(c, d, hi_t, &hi, &s2))) return rc;
    if (d->kind != DKB_PARAM_DATE && step_t[0] && (rc = parse_num(c, d, step_t, &step, &s3))) return rc;
    if (has_def && (rc = parse_num(c, d, def_t, &def, &s4))) return rc;
    if (d->kind == DKB_PARAM_DECIMAL) {
        int sc = s1 > s2 ? s1 : s2;
        sc = sc > s3 ? sc : s3;
        if (s4 > sc) return bad(c, "default %s has more digits after the point than LO, HI and the step", def_t);
        d->scale = sc;
        /* each at most 2^50 before scaling, by up to 10^9: kept within 2^60 */
        const int64_t lim = INT64_C(1) << 60;
        if ((lo < 0 ? -lo : lo) > lim / pow10i(sc - s1) || (hi < 0 ? -hi : hi) > lim / pow10i(sc - s2) ||
            (step < 0 ? -step : step) > lim / pow10i(sc - s3) || (def < 0 ? -def : def) > lim / pow10i(sc - s4))
            return bad(c, "range %s is out of range at its scale", range_t);
        lo *= pow10i(sc - s1), hi *= pow10i(sc - s2);
        if (step_t[0]) step *= pow10i(sc - s3);
        else step = 1;
        def *= pow10i(sc - s4);
    }
    if (lo > hi) return bad(c, "range %s: LO is above HI", range_t);
    d->lo = lo, d->hi = hi;
    if (d->kind != DKB_PARAM_DATE) {
        if (step < 1) return bad(c, "step '%s' must be positive", step_t);
        d->step = step;
    } else if (!step_t[0]) {
        d->step = 1, d->unit = DKB_SQL_STEP_UNIT;
    }
    if (d->kind == DKB_PARAM_DATE && d->unit != DKB_SQL_STEP_UNIT) {
        int y, m, day;
        dkb__civil_from_days((int32_t)lo, &y, &m, &day);
        if (day > 28) return bad(c, "%s: a month or year step needs LO on day 1..28 of its month", lo_t);
        int64_t per = d->step * (d->unit == DKB_SQL_STEP_YEAR ? 12 : 1);
        int64_t k = (month_index((int32_t)hi) - month_index((int32_t)lo)) / per;
        while (k > 0 && date_at(d, k) > hi) k--;
        d->count = k + 1;
    } else {
        d->count = (hi - lo) / d->step + 1;
    }
    d->def = 0;
    if (has_def && (d->def = index_of(d, def)) < 0) return bad(c, "default %s is not on the declared range and step", def_t);
    snprintf(d->help, sizeof d->help, "%.8s %.30s..%.30s (%lld values)", type, lo_t, hi_t, (long long)d->count);
    return 0;
}

/* Does :name occur in sql (not followed by a name character; the ':' of
 * a "dkb:param" directive is none, else a parameter named param would be
 * used by its own declaration)? */
static bool used(const char *sql, const char *name) {
    size_t n = strlen(name);
    for (const char *s = strchr(sql, ':'); s; s = strchr(s + 1, ':'))
        if (!(s - sql >= 3 && !strncmp(s - 3, "dkb", 3)) && !strncmp(s + 1, name, n) && !(isalnum((unsigned char)s[1 + n]) || s[1 + n] == '_') && (s == sql || s[-1] != ':'))
            return true;
    return false;
}

int dkb__sql_params_parse(const char *path, const char *sql, dkb__sql_params *out, dkb_error *err) {
    memset(out, 0, sizeof *out);
    int line = 1;
    for (const char *s = sql; *s; line++) {
        const char *e = strchr(s, '\n');
        if (!e) e = s + strlen(s);
        cur c = {s, e, path, line, err};
        skip_space(&c);
        if (c.end - c.p >= 2 && !strncmp(c.p, "--", 2)) {
            c.p += 2;
            skip_space(&c);
            if (c.end - c.p >= 4 && !strncmp(c.p, "dkb:", 4)) {
                if (c.end - c.p < 10 || strncmp(c.p, "dkb:param", 9) || !isspace((unsigned char)c.p[9]))
                    return bad(&c, "%sexpected '-- dkb:param NAME TYPE ...' (the only dkb: directive)", "");
                c.p += 9;
                if (out->n == DKB_MAX_PARAMS) return bad(&c, "more than %s parameters", "12");
                dkb__sql_pdecl *d = &out->d[out->n];
                int rc = parse_decl(&c, d);
                if (rc) return rc;
                for (int i = 0; i < out->n; i++)
                    if (!strcmp(out->d[i].name, d->name)) return bad(&c, "parameter %s is declared twice", d->name);
                if (!used(sql, d->name)) return bad(&c, "parameter %s is declared but the SQL never uses it", d->name);
                out->defs[out->n] = (dkb_param_def){d->name, d->kind, d->scale, d->help};
                out->n++;
            }
        }
        s = *e ? e + 1 : e;
    }
    return 0;
}

/* A 64-bit mix of the seed and the parameter's position (splitmix64). */
static uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void dkb__sql_params_draw(const dkb__sql_params *ps, uint64_t seed, dkb_params *out) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < ps->n; i++) {
        const dkb__sql_pdecl *d = &ps->d[i];
        int64_t k = seed == 0 ? d->def : (int64_t)(mix(mix(seed) ^ (uint64_t)(i + 1) * 0xD1B54A32D192ED03ull) % (uint64_t)d->count);
        dkb_param_value *v = &out->v[i];
        v->name = d->name;
        v->kind = d->kind;
        v->scale = d->scale;
        if (d->kind == DKB_PARAM_STRING) snprintf(v->s, sizeof v->s, "%s", d->choice[k]);
        else v->i = value_at(d, k);
    }
    out->n = ps->n;
}

int dkb__sql_params_check(const dkb__sql_params *ps, const char *task, const dkb_params *p, dkb_error *err) {
    for (int i = 0; i < ps->n && i < p->n; i++) {
        const dkb__sql_pdecl *d = &ps->d[i];
        const dkb_param_value *v = &p->v[i];
        bool ok = false;
        if (d->kind == DKB_PARAM_STRING) {
            for (int k = 0; k < d->nchoice; k++) ok |= !strcmp(d->choice[k], v->s);
        } else {
            int64_t x = v->i;
            if (d->kind == DKB_PARAM_DECIMAL && v->scale != d->scale) ok = false;
            else ok = index_of(d, x) >= 0;
        }
        if (!ok) {
            char t[64];
            dkb_param_text(v, t, sizeof t);
            return dkb_fail(err, DKB_EINVAL, "%s: parameter %s: %s is not declared (%s)", task, d->name, t, d->help);
        }
    }
    return 0;
}
