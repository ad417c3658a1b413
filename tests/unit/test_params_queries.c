/* test_params_queries.c: the 22 registered queries' parameters against
 * params.md: the qualification values at seed 0; the SQL at seed 0 against
 * the qualification SQL files (DKB_TPCH_QUERIES, default
 * /work/shared/tpch/queries; skipped when absent); and for seeds 1..300
 * every value within qgen's range or list, the cross-parameter rules
 * (different nations / ship modes, Q8's region, distinct sizes and codes),
 * reproducibility, text -> override round trips and complete SQL
 * substitution. */
#include <ctype.h>

#include "common/date.h"
#include "dkb/query.h"
#include "queries/qgen.h"
#include "test_result_util.h"

/* One parameter: its qualification text and qgen's range:
 *   i:LO:HI      integer in [LO, HI]
 *   d:LO:HI      decimal, scaled value in [LO, HI]
 *   y:Y0:Y1      January 1 of a year in [Y0, Y1]
 *   m:Y0M0:Y1M1  first day of a month in [Y0-M0, Y1-M1] (e.g. m:199302:199711)
 *   day:A:B      a day in [A, B] (YYYYMMDD)
 *   s:LIST       one of a list: nation region segment shipmode color type
 *                prefix suffix container brand w1 w2 code
 *   f            Q11's fraction: 0.0001 / SF at scale 10 (not random) */
typedef struct spec {
    const char *query, *name, *qual, *range;
} spec;

static const spec SPECS[] = {
    {"q01", "delta", "90", "i:60:120"},
    {"q02", "size", "15", "i:1:50"},
    {"q02", "type", "BRASS", "s:suffix"},
    {"q02", "region", "EUROPE", "s:region"},
    {"q03", "segment", "BUILDING", "s:segment"},
    {"q03", "date", "1995-03-15", "day:19950301:19950331"},
    {"q04", "date", "1993-07-01", "m:199302:199711"},
    {"q05", "region", "ASIA", "s:region"},
    {"q05", "date", "1994-01-01", "y:1993:1997"},
    {"q06", "date", "1994-01-01", "y:1993:1997"},
    {"q06", "discount", "0.06", "d:2:9"},
    {"q06", "quantity", "24", "i:24:25"},
    {"q07", "nation1", "FRANCE", "s:nation"},
    {"q07", "nation2", "GERMANY", "s:nation"},
    {"q08", "nation", "BRAZIL", "s:nation"},
    {"q08", "region", "AMERICA", "s:region"},
    {"q08", "type", "ECONOMY ANODIZED STEEL", "s:type"},
    {"q09", "color", "green", "s:color"},
    {"q10", "date", "1993-10-01", "m:199302:199501"},
    {"q11", "nation", "GERMANY", "s:nation"},
    {"q11", "fraction", "0.0001000000", "f"},
    {"q12", "shipmode1", "MAIL", "s:shipmode"},
    {"q12", "shipmode2", "SHIP", "s:shipmode"},
    {"q12", "date", "1994-01-01", "y:1993:1997"},
    {"q13", "word1", "special", "s:w1"},
    {"q13", "word2", "requests", "s:w2"},
    {"q14", "date", "1995-09-01", "m:199301:199712"},
    {"q15", "date", "1996-01-01", "m:199301:199710"},
    {"q16", "brand", "Brand#45", "s:brand"},
    {"q16", "type", "MEDIUM POLISHED", "s:prefix"},
    {"q16", "size1", "49", "i:1:50"},
    {"q16", "size2", "14", "i:1:50"},
    {"q16", "size3", "23", "i:1:50"},
    {"q16", "size4", "45", "i:1:50"},
    {"q16", "size5", "19", "i:1:50"},
    {"q16", "size6", "3", "i:1:50"},
    {"q16", "size7", "36", "i:1:50"},
    {"q16", "size8", "9", "i:1:50"},
    {"q17", "brand", "Brand#23", "s:brand"},
    {"q17", "container", "MED BOX", "s:container"},
    {"q18", "quantity", "300", "i:312:315"},
    {"q19", "brand1", "Brand#12", "s:brand"},
    {"q19", "brand2", "Brand#23", "s:brand"},
    {"q19", "brand3", "Brand#34", "s:brand"},
    {"q19", "quantity1", "1", "i:1:10"},
    {"q19", "quantity2", "10", "i:10:20"},
    {"q19", "quantity3", "20", "i:20:30"},
    {"q20", "color", "forest", "s:color"},
    {"q20", "date", "1994-01-01", "y:1993:1997"},
    {"q20", "nation", "CANADA", "s:nation"},
    {"q21", "nation", "SAUDI ARABIA", "s:nation"},
    {"q22", "code1", "13", "s:code"},
    {"q22", "code2", "31", "s:code"},
    {"q22", "code3", "23", "s:code"},
    {"q22", "code4", "29", "s:code"},
    {"q22", "code5", "30", "s:code"},
    {"q22", "code6", "18", "s:code"},
    {"q22", "code7", "17", "s:code"},
};
#define NSPECS ((int)(sizeof SPECS / sizeof SPECS[0]))

static int in_list(const char *list, const char *s) {
    if (!strcmp(list, "nation")) return dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, s) >= 0;
    if (!strcmp(list, "region")) return dkb__qgen_find(dkb__qgen_region, DKB__QGEN_NREGION, s) >= 0;
    if (!strcmp(list, "segment")) return dkb__qgen_find(dkb__qgen_segment, DKB__QGEN_NSEGMENT, s) >= 0;
    if (!strcmp(list, "shipmode")) return dkb__qgen_find(dkb__qgen_shipmode, DKB__QGEN_NSHIPMODE, s) >= 0;
    if (!strcmp(list, "color")) return dkb__qgen_find(dkb__qgen_color, DKB__QGEN_NCOLOR, s) >= 0;
    if (!strcmp(list, "type")) return dkb__qgen_is_type(s);
    if (!strcmp(list, "prefix")) return dkb__qgen_is_type_prefix(s);
    if (!strcmp(list, "suffix")) return dkb__qgen_find(dkb__qgen_type_syl3, 5, s) >= 0;
    if (!strcmp(list, "container")) return dkb__qgen_is_container(s);
    if (!strcmp(list, "brand")) return dkb__qgen_is_brand(s);
    if (!strcmp(list, "w1")) return dkb__qgen_find(dkb__qgen_q13_word1, DKB__QGEN_NQ13, s) >= 0;
    if (!strcmp(list, "w2")) return dkb__qgen_find(dkb__qgen_q13_word2, DKB__QGEN_NQ13, s) >= 0;
    if (!strcmp(list, "code")) /* qgen 2.14.0 draws 10..34 and prints +10 */
        return isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && !s[2] && atoi(s) >= 20 && atoi(s) <= 44;
    return 0;
}

/* v drawn at sf 1 lies in the spec's range. */
static int in_range(const spec *sp, const dkb_param_value *v) {
    const char *r = sp->range;
    long a, b;
    int y, m, d;
    if (!strncmp(r, "day:", 4)) {
        dkb__civil_from_days((int32_t)v->i, &y, &m, &d);
        return sscanf(r + 4, "%ld:%ld", &a, &b) == 2 && y * 10000 + m * 100 + d >= a && y * 10000 + m * 100 + d <= b;
    }
    switch (r[0]) {
    case 'i':
    case 'd':
        return sscanf(r + 2, "%ld:%ld", &a, &b) == 2 && v->i >= a && v->i <= b;
    case 'y':
        dkb__civil_from_days((int32_t)v->i, &y, &m, &d);
        return sscanf(r + 2, "%ld:%ld", &a, &b) == 2 && y >= a && y <= b && m == 1 && d == 1;
    case 'm':
        dkb__civil_from_days((int32_t)v->i, &y, &m, &d);
        return sscanf(r + 2, "%ld:%ld", &a, &b) == 2 && y * 100 + m >= a && y * 100 + m <= b && d == 1;
    case 'f':
        return v->i == 1000000 && v->scale == 10;
    case 's':
        return in_list(r + 2, v->s);
    }
    return 0;
}

/* Remove comment lines and all white space; write ".06" as "0.06". */
static char *normalize(const char *s) {
    char *out = malloc(strlen(s) * 2 + 1), *o = out;
    int line_start = 1;
    for (const char *p = s; *p; p++) {
        if (line_start && p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n') p++;
            if (!*p) break;
        }
        line_start = *p == '\n';
        if (isspace((unsigned char)*p)) continue;
        if (*p == '.' && isdigit((unsigned char)p[1]) && (o == out || !isdigit((unsigned char)o[-1]))) *o++ = '0';
        *o++ = *p;
    }
    *o = 0;
    return out;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF) fputc(c, m);
    fclose(m);
    fclose(f);
    return buf;
}

static void test_qualification(const dkb_query *q) {
    dkb_params p;
    dkb_error err = {0};
    if (dkb_query_params(q, 0, 1, NULL, 0, &p, &err)) {
        fprintf(stderr, "%s seed 0: %s\n", q->name, err.msg);
        failures++;
        return;
    }
    int nspec = 0;
    for (int i = 0; i < NSPECS; i++) {
        if (strcmp(SPECS[i].query, q->name)) continue;
        const dkb_param_value *v = dkb_params_get(&p, SPECS[i].name);
        char text[64];
        dkb_param_text(v, text, sizeof text);
        if (!v || strcmp(text, SPECS[i].qual)) {
            fprintf(stderr, "%s %s at seed 0: '%s', qualification value '%s'\n", q->name, SPECS[i].name,
                    v ? text : "(missing)", SPECS[i].qual);
            failures++;
        }
        CHECK(v == &p.v[nspec]); /* params.md's slot order */
        nspec++;
    }
    CHECK(nspec == p.n && nspec == q->nparams);

    /* The SQL equals the qualification file, up to white space and ".06". */
    const char *dir = getenv("DKB_TPCH_QUERIES");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.sql", dir ? dir : "/work/shared/tpch/queries", q->name);
    char *want = slurp(path);
    if (!want) return;
    char *sql = dkb_query_sql(q, &p);
    char *a = normalize(sql), *b = normalize(want);
    if (strcmp(a, b)) {
        fprintf(stderr, "%s: SQL at seed 0 differs from %s:\n%s\n", q->name, path, sql);
        failures++;
    }
    free(a);
    free(b);
    free(sql);
    free(want);
}

static void test_seeds(const dkb_query *q) {
    dkb_params p, again;
    dkb_error err = {0};
    int varied[DKB_MAX_PARAMS] = {0};
    dkb_params first;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        if (dkb_query_params(q, seed, 1, NULL, 0, &p, &err)) {
            fprintf(stderr, "%s seed %llu: %s\n", q->name, (unsigned long long)seed, err.msg);
            failures++;
            return;
        }
        CHECK(dkb_query_params(q, seed, 1, NULL, 0, &again, &err) == 0 && !memcmp(&p, &again, sizeof p));
        if (seed == 1) first = p;
        /* ranges */
        for (int i = 0; i < NSPECS; i++) {
            if (strcmp(SPECS[i].query, q->name)) continue;
            const dkb_param_value *v = dkb_params_get(&p, SPECS[i].name);
            char text[64];
            dkb_param_text(v, text, sizeof text);
            if (!v || !in_range(&SPECS[i], v)) {
                fprintf(stderr, "%s seed %llu: %s = '%s' outside %s\n", q->name, (unsigned long long)seed,
                        SPECS[i].name, text, SPECS[i].range);
                failures++;
            }
        }
        for (int i = 0; i < p.n; i++) varied[i] |= memcmp(&p.v[i], &first.v[i], sizeof p.v[i]) != 0;
        /* every value's text, fed back as overrides, gives the same set */
        char texts[DKB_MAX_PARAMS][96];
        const char *ov[DKB_MAX_PARAMS];
        for (int i = 0; i < p.n; i++) {
            int k = snprintf(texts[i], sizeof texts[i], "%s=", p.v[i].name);
            dkb_param_text(&p.v[i], texts[i] + k, sizeof texts[i] - (size_t)k);
            ov[i] = texts[i];
        }
        CHECK(dkb_query_params(q, 0, 1, ov, p.n, &again, &err) == 0);
        CHECK(!memcmp(&p, &again, sizeof p));
        /* no placeholder of ours is left in the SQL */
        char *sql = dkb_query_sql(q, &p);
        CHECK(sql != NULL);
        for (int i = 0; sql && i < p.n; i++) {
            char ph[64];
            snprintf(ph, sizeof ph, ":%s", p.v[i].name);
            for (const char *s = strstr(sql, ph); s; s = strstr(s + 1, ph))
                if (!isalnum((unsigned char)s[strlen(ph)]) && s[strlen(ph)] != '_') {
                    fprintf(stderr, "%s seed %llu: %s left in the SQL\n", q->name, (unsigned long long)seed, ph);
                    failures++;
                    break;
                }
        }
        free(sql);
        /* cross-parameter rules */
        const dkb_param_value *a, *b;
        if ((a = dkb_params_get(&p, "nation1")) && (b = dkb_params_get(&p, "nation2"))) CHECK(strcmp(a->s, b->s));
        if ((a = dkb_params_get(&p, "shipmode1")) && (b = dkb_params_get(&p, "shipmode2"))) CHECK(strcmp(a->s, b->s));
        if (q->number == 8) {
            const char *r = dkb__qgen_region_of(dkb_params_get(&p, "nation")->s);
            CHECK(r && !strcmp(r, dkb_params_get(&p, "region")->s));
        }
        if (q->number == 16 || q->number == 22) { /* sizes, codes: distinct */
            for (int i = 0; i < p.n; i++)
                for (int j = i + 1; j < p.n; j++) {
                    if (p.v[i].kind == DKB_PARAM_INT && p.v[j].kind == DKB_PARAM_INT) CHECK(p.v[i].i != p.v[j].i);
                    else if (q->number == 22) CHECK(strcmp(p.v[i].s, p.v[j].s));
                }
        }
    }
    /* every random parameter takes more than one value over 300 seeds */
    for (int i = 0; i < p.n; i++) {
        int fixed = 0;
        for (int k = 0; k < NSPECS; k++)
            if (!strcmp(SPECS[k].query, q->name) && !strcmp(SPECS[k].name, p.v[i].name) && SPECS[k].range[0] == 'f')
                fixed = 1;
        if (q->number == 8 && !strcmp(p.v[i].name, "region")) fixed = 0; /* follows the nation: varies */
        if (!fixed && !varied[i]) {
            fprintf(stderr, "%s: %s never varies over 300 seeds\n", q->name, p.v[i].name);
            failures++;
        }
    }
}

/* Q11's fraction follows the scale factor. */
static void test_q11_sf(const dkb_query *q) {
    static const struct {
        double sf;
        const char *text;
    } cases[] = {{1, "0.0001000000"}, {0.1, "0.0010000000"}, {0.01, "0.0100000000"}, {10, "0.0000100000"},
                 {3000, "0.0000000333"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dkb_params p;
        dkb_error err = {0};
        char text[64];
        CHECK(dkb_query_params(q, 0, cases[i].sf, NULL, 0, &p, &err) == 0);
        dkb_param_text(dkb_params_get(&p, "fraction"), text, sizeof text);
        CHECK_STR(text, cases[i].text);
        CHECK(dkb_query_params(q, 5, cases[i].sf, NULL, 0, &p, &err) == 0);
        dkb_param_text(dkb_params_get(&p, "fraction"), text, sizeof text);
        CHECK_STR(text, cases[i].text);
    }
}

int main(void) {
    int linked = 0;
    for (int n = 1; n <= 22; n++) {
        const dkb_query *q = dkb_query_get(n);
        if (!q) {
            printf("q%02d: not linked, skipped\n", n);
            continue;
        }
        linked++;
        test_qualification(q);
        test_seeds(q);
        if (n == 11) test_q11_sf(q);
    }
    printf("%d of 22 queries linked\n", linked);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("test_params_queries: ok\n");
    return failures != 0;
}
