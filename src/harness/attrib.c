/* attrib.c: kernel attribution without a GPU (attrib.h): which library a
 * kernel name belongs to, the shortened name a report shows, the tally of
 * one call's activity records, its JSON and its one-line text. The CUPTI
 * side is worker_attrib.c. */
#include "harness/attrib.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void dkb__attrib_init(dkb_attribution *a) {
    memset(a, 0, sizeof *a);
    a->window_ms = a->busy_ms = a->lead_ms = NAN;
}

double dkb__attrib_own_share(const dkb_attribution *a) {
    double all = a->own_ms + a->library_ms;
    return a->recorded && a->kernels > 0 && all > 0 ? a->own_ms / all : NAN;
}

/* ---- classification ---- */

/* Outermost namespaces of library kernels (the first component of a
 * mangled nested name), and prefixes of library kernels' plain names (or
 * of that first component). */
static const struct {
    const char *ns, *lib;
} NAMESPACES[] = {
    {"cub", "cub"},    {"thrust", "thrust"}, {"cuda", "libcu++"}, {"cutlass", "cutlass"},
    {"cute", "cutlass"}, {"at", "torch"},    {"c10", "torch"}, {"at_cuda_detail", "torch"},
};
static const struct {
    const char *prefix, *lib;
} PREFIXES[] = {
    {"cublas", "cublas"}, {"cudnn", "cudnn"}, {"nvjet", "cublas"},
};

/* The first component of a mangled name ("_ZN3cub...": "cub", 3), or NULL
 * when the name is not mangled or starts otherwise. */
static const char *first_component(const char *m, size_t *len) {
    if (m[0] != '_' || m[1] != 'Z') return NULL;
    const char *p = m + 2;
    if (*p == 'L') p++;   /* internal linkage */
    if (*p == 'N') {
        p++;
        while (*p == 'r' || *p == 'V' || *p == 'K') p++;
        if (*p == 'R' || *p == 'O') p++;
    }
    if (p[0] == 'S' && p[1] == 't') {
        *len = 3;
        return "std";
    }
    if (!isdigit((unsigned char)*p)) return NULL;
    size_t n = 0;
    while (isdigit((unsigned char)*p) && n < 100000) n = n * 10 + (size_t)(*p++ - '0');
    if (n == 0 || strnlen(p, n) < n) return NULL;
    *len = n;
    return p;
}

static const char *by_prefix(const char *s, size_t len) {
    for (size_t i = 0; i < sizeof PREFIXES / sizeof PREFIXES[0]; i++) {
        size_t pl = strlen(PREFIXES[i].prefix);
        if (len >= pl && !strncmp(s, PREFIXES[i].prefix, pl)) return PREFIXES[i].lib;
    }
    return NULL;
}

const char *dkb__attrib_library(const char *name) {
    if (!name || !*name) return NULL;
    size_t len = 0;
    const char *c = first_component(name, &len);
    if (!c) return by_prefix(name, strlen(name));   /* extern "C" or not mangled */
    for (size_t i = 0; i < sizeof NAMESPACES / sizeof NAMESPACES[0]; i++)
        if (strlen(NAMESPACES[i].ns) == len && !strncmp(c, NAMESPACES[i].ns, len)) return NAMESPACES[i].lib;
    return by_prefix(c, len);
}

/* ---- names ---- */

dkb_demangle_fn dkb__attrib_demangler(void) {
    static int looked;
    static dkb_demangle_fn fn;
    if (looked) return fn;
    looked = 1;
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!sym) {
        void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h) sym = dlsym(h, "__cxa_demangle");
    }
    /* a data pointer to a function pointer: POSIX guarantees dlsym's works */
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

/* Is s[0..len) a versioned inline namespace of CCCL ("CUB_300000_SM_900",
 * "THRUST_300000_SM_900_NS", "_V_300000_SM_900", "__4")? */
static int versioned_ns(const char *s, size_t len) {
    if (len > 4 && !strncmp(s, "CUB_", 4) && isdigit((unsigned char)s[4])) return 1;
    if (len > 7 && !strncmp(s, "THRUST_", 7) && isdigit((unsigned char)s[7])) return 1;
    if (len > 3 && !strncmp(s, "_V_", 3) && isdigit((unsigned char)s[3])) return 1;
    if (len > 2 && s[0] == '_' && s[1] == '_') {
        for (size_t i = 2; i < len; i++)
            if (!isdigit((unsigned char)s[i])) return 0;
        return 1;
    }
    return 0;
}

/* Shorten a demangled name into out (n >= 1): see attrib.h. */
static void shorten(const char *d, char *out, size_t n) {
    static const char ANON[] = "(anonymous namespace)";
    if (!strncmp(d, "void ", 5)) d += 5;
    size_t at = 0, comp = 0;   /* comp: where the current component starts in out */
    int depth = 0;
    for (const char *p = d; *p && at + 1 < n; p++) {
        if (depth == 0 && !strncmp(p, ANON, sizeof ANON - 1)) {
            for (size_t i = 0; i < sizeof ANON - 1 && at + 1 < n; i++) out[at++] = ANON[i];
            p += sizeof ANON - 2;
            continue;
        }
        if (*p == '<') {
            if (depth++ == 0)
                for (const char *e = "<...>"; *e && at + 1 < n; e++) out[at++] = *e;
            continue;
        }
        if (*p == '>' && depth > 0) {
            depth--;
            continue;
        }
        if (depth > 0) continue;
        if (*p == '(') break;   /* the parameter list */
        if (*p == ':' && p[1] == ':') {
            if (versioned_ns(out + comp, at - comp)) {
                at = comp;   /* drop "CUB_300000_SM_900::" */
            } else {
                if (at + 2 >= n) break;
                out[at++] = ':', out[at++] = ':';
                comp = at;
            }
            p++;
            continue;
        }
        out[at++] = *p;
    }
    out[at] = 0;
}

void dkb__attrib_short_name(const char *name, dkb_demangle_fn dm, char *out, size_t n) {
    if (!out || !n) return;
    out[0] = 0;
    if (!name) return;
    char *d = NULL;
    if (dm && name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        d = dm(name, NULL, NULL, &status);
        if (status != 0) {
            free(d);
            d = NULL;
        }
    }
    if (d) shorten(d, out, n);
    else snprintf(out, n, "%s", name);
    free(d);
}

/* ---- the tally ---- */

void dkb__attrib_tally_init(dkb_attrib_tally *t, dkb_demangle_fn dm) {
    memset(t, 0, sizeof *t);
    dkb__attrib_init(&t->a);
    t->dm = dm;
}

static void add_library(dkb_attribution *a, const char *lib) {
    size_t used = strlen(a->libraries), ll = strlen(lib);
    for (const char *p = a->libraries; (p = strstr(p, lib)); p += ll)
        if ((p == a->libraries || p[-1] == ' ') && (p[ll] == ',' || p[ll] == 0)) return;
    if (used + ll + 3 > sizeof a->libraries) return;
    snprintf(a->libraries + used, sizeof a->libraries - used, "%s%s", used ? ", " : "", lib);
}

void dkb__attrib_tally_kernel(dkb_attrib_tally *t, const char *name, double ms) {
    if (!(ms >= 0) || !isfinite(ms)) ms = 0;
    const char *lib = dkb__attrib_library(name);
    if (!lib && t->python && name && name[0] == '_' && name[1] == 'Z') lib = "torch";
    dkb_attribution *a = &t->a;
    a->kernels++;
    if (lib) {
        a->library_kernels++;
        a->library_ms += ms;
        add_library(a, lib);
    } else {
        a->own_kernels++;
        a->own_ms += ms;
    }
    if (t->failed) return;
    char shown[DKB_ATTRIB_NAME];
    dkb__attrib_short_name(name ? name : "", t->dm, shown, sizeof shown);
    const char *l = lib ? lib : "";
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->k[i].name, shown) && !strcmp(t->k[i].library, l)) {
            t->k[i].ms += ms;
            t->k[i].launches++;
            return;
        }
    if (t->n == t->cap) {
        int ncap = t->cap ? 2 * t->cap : 64;
        dkb_attrib_kernel *nk = realloc(t->k, (size_t)ncap * sizeof *nk);
        if (!nk) {
            t->failed = 1;
            return;
        }
        t->k = nk, t->cap = ncap;
    }
    dkb_attrib_kernel *k = &t->k[t->n++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", shown);
    snprintf(k->library, sizeof k->library, "%s", l);
    k->ms = ms;
    k->launches = 1;
}

void dkb__attrib_tally_copy(dkb_attrib_tally *t, double ms) {
    t->a.copies++;
    t->a.copy_ms += ms >= 0 && isfinite(ms) ? ms : 0;
}

void dkb__attrib_tally_memset(dkb_attrib_tally *t, double ms) {
    t->a.memsets++;
    t->a.memset_ms += ms >= 0 && isfinite(ms) ? ms : 0;
}

static int by_ms_desc(const void *x, const void *y) {
    const dkb_attrib_kernel *a = x, *b = y;
    if (a->ms != b->ms) return a->ms < b->ms ? 1 : -1;
    return strcmp(a->name, b->name);
}

void dkb__attrib_tally_finish(dkb_attrib_tally *t, dkb_attribution *out) {
    if (t->n > 1) qsort(t->k, (size_t)t->n, sizeof *t->k, by_ms_desc);
    *out = t->a;
    out->recorded = true;
    out->ntop = t->n < DKB_ATTRIB_TOP ? t->n : DKB_ATTRIB_TOP;
    for (int i = 0; i < out->ntop; i++) out->top[i] = t->k[i];
    /* the largest own kernel is always named, so a reader sees what counted
     * as the candidate's own even when library kernels fill the list */
    int own_shown = 0;
    for (int i = 0; i < out->ntop; i++) own_shown |= !out->top[i].library[0];
    for (int i = out->ntop; !own_shown && i < t->n; i++)
        if (!t->k[i].library[0]) {
            out->top[out->ntop - 1] = t->k[i];
            own_shown = 1;
        }
    if (t->failed && !out->note[0]) snprintf(out->note, sizeof out->note, "out of memory: kernel names left out");
    free(t->k);
    dkb__attrib_tally_init(t, t->dm);
}

/* ---- JSON ---- */

static int add_num(cJSON *o, const char *key, double v) {
    return (isfinite(v) ? cJSON_AddNumberToObject(o, key, v) : cJSON_AddNullToObject(o, key)) != NULL;
}

static int by_start(const void *x, const void *y) {
    const uint64_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

void dkb__attrib_busy(uint64_t (*iv)[2], int n, uint64_t lo, uint64_t hi, dkb_attribution *a) {
    a->window_ms = hi >= lo ? (double)(hi - lo) / 1e6 : NAN;
    a->busy_ms = a->lead_ms = NAN;
    if (hi < lo) return;
    if (n > 1) qsort(iv, (size_t)n, sizeof *iv, by_start);
    uint64_t busy = 0, run_lo = 0, run_hi = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        uint64_t s = iv[i][0] < lo ? lo : iv[i][0], e = iv[i][1] > hi ? hi : iv[i][1];
        if (e <= s) continue;
        if (!any) a->lead_ms = (double)(s - lo) / 1e6;
        if (any && s <= run_hi) {
            if (e > run_hi) run_hi = e;
            continue;
        }
        if (any) busy += run_hi - run_lo;
        run_lo = s, run_hi = e, any = 1;
    }
    if (any) busy += run_hi - run_lo;
    a->busy_ms = (double)busy / 1e6;
}

int dkb__attrib_add_json(cJSON *obj, const char *key, const dkb_attribution *a) {
    char note_key[64];
    snprintf(note_key, sizeof note_key, "%s_note", key);
    int ok = a->note[0] ? cJSON_AddStringToObject(obj, note_key, a->note) != NULL
                        : cJSON_AddNullToObject(obj, note_key) != NULL;
    if (!a->recorded) return ok && cJSON_AddNullToObject(obj, key) ? 0 : DKB_ENOMEM;
    cJSON *j = cJSON_AddObjectToObject(obj, key);
    ok = ok && j && add_num(j, "own_ms", a->own_ms) && add_num(j, "library_ms", a->library_ms) &&
         add_num(j, "copy_ms", a->copy_ms) && add_num(j, "memset_ms", a->memset_ms) &&
         cJSON_AddNumberToObject(j, "kernels", a->kernels) && cJSON_AddNumberToObject(j, "own_kernels", a->own_kernels) &&
         cJSON_AddNumberToObject(j, "library_kernels", a->library_kernels) &&
         cJSON_AddNumberToObject(j, "copies", a->copies) && cJSON_AddNumberToObject(j, "memsets", a->memsets) &&
         add_num(j, "own_share", dkb__attrib_own_share(a)) && cJSON_AddNumberToObject(j, "dropped", (double)a->dropped) &&
         add_num(j, "window_ms", a->window_ms) && add_num(j, "busy_ms", a->busy_ms) &&
         add_num(j, "lead_ms", a->lead_ms) && add_num(j, "wall_s", a->wall_s);
    cJSON *libs = ok ? cJSON_AddArrayToObject(j, "libraries") : NULL;
    ok = ok && libs;
    for (const char *p = a->libraries; ok && *p;) {
        size_t l = strcspn(p, ",");
        char lib[sizeof a->libraries];
        snprintf(lib, sizeof lib, "%.*s", (int)l, p);
        cJSON *s = cJSON_CreateString(lib);
        ok = s && cJSON_AddItemToArray(libs, s);
        p += l;
        while (*p == ',' || *p == ' ') p++;
    }
    cJSON *top = ok ? cJSON_AddArrayToObject(j, "top") : NULL;
    ok = ok && top;
    for (int i = 0; ok && i < a->ntop; i++) {
        const dkb_attrib_kernel *k = &a->top[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(top, e);
        if (!ok) {
            cJSON_Delete(e);
            break;
        }
        ok = cJSON_AddStringToObject(e, "name", k->name) &&
             (k->library[0] ? cJSON_AddStringToObject(e, "library", k->library) != NULL
                            : cJSON_AddNullToObject(e, "library") != NULL) &&
             add_num(e, "ms", k->ms) && cJSON_AddNumberToObject(e, "launches", k->launches);
    }
    return ok ? 0 : DKB_ENOMEM;
}

static double num0(const cJSON *o, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble : 0;
}

static double num_or_nan(const cJSON *o, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) && it->valuedouble >= 0 ? it->valuedouble : NAN;
}

static int int0(const cJSON *o, const char *key) {
    double v = num0(o, key);
    return v >= 0 && v < 2e9 ? (int)v : 0;
}

void dkb__attrib_from_json(const cJSON *obj, const char *key, dkb_attribution *a) {
    dkb__attrib_init(a);
    char note_key[64];
    snprintf(note_key, sizeof note_key, "%s_note", key);
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(obj, note_key);
    if (cJSON_IsString(note)) snprintf(a->note, sizeof a->note, "%s", note->valuestring);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(j)) return;
    a->recorded = true;
    a->own_ms = num0(j, "own_ms");
    a->library_ms = num0(j, "library_ms");
    a->copy_ms = num0(j, "copy_ms");
    a->memset_ms = num0(j, "memset_ms");
    a->kernels = int0(j, "kernels");
    a->own_kernels = int0(j, "own_kernels");
    a->library_kernels = int0(j, "library_kernels");
    a->copies = int0(j, "copies");
    a->memsets = int0(j, "memsets");
    double d = num0(j, "dropped");
    a->dropped = d >= 0 && d < 9e18 ? (int64_t)d : 0;
    a->window_ms = num_or_nan(j, "window_ms");
    a->busy_ms = num_or_nan(j, "busy_ms");
    a->lead_ms = num_or_nan(j, "lead_ms");
    a->wall_s = num0(j, "wall_s");
    const cJSON *libs = cJSON_GetObjectItemCaseSensitive(j, "libraries"), *it;
    if (!cJSON_IsArray(libs)) libs = NULL;
    cJSON_ArrayForEach(it, libs) {
        if (cJSON_IsString(it)) add_library(a, it->valuestring);
    }
    const cJSON *top = cJSON_GetObjectItemCaseSensitive(j, "top");
    if (!cJSON_IsArray(top)) top = NULL;
    cJSON_ArrayForEach(it, top) {
        if (a->ntop == DKB_ATTRIB_TOP) break;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *lib = cJSON_GetObjectItemCaseSensitive(it, "library");
        if (!cJSON_IsString(name)) continue;
        dkb_attrib_kernel *k = &a->top[a->ntop++];
        snprintf(k->name, sizeof k->name, "%s", name->valuestring);
        snprintf(k->library, sizeof k->library, "%s", cJSON_IsString(lib) ? lib->valuestring : "");
        k->ms = num0(it, "ms");
        k->launches = int0(it, "launches");
    }
}

/* ---- text ---- */

void dkb__attrib_line(const dkb_attribution *a, char *buf, size_t n) {
    if (!n) return;
    if (!a->recorded) {
        snprintf(buf, n, "%s", a->note);
        return;
    }
    double share = dkb__attrib_own_share(a);
    char sh[32] = "-";
    if (isfinite(share)) snprintf(sh, sizeof sh, "%.1f%%", 100 * share);
    snprintf(buf, n, "own %.3f ms, library %.3f ms%s%s%s, copies %.3f ms, memsets %.3f ms; %d kernel%s; own share %s%s%s",
             a->own_ms, a->library_ms, a->libraries[0] ? " (" : "", a->libraries, a->libraries[0] ? ")" : "",
             a->copy_ms, a->memset_ms, a->kernels, a->kernels == 1 ? "" : "s", sh, a->note[0] ? "; " : "", a->note);
}

void dkb__attrib_top_line(const dkb_attribution *a, int max, char *buf, size_t n) {
    if (!n) return;
    buf[0] = 0;
    size_t at = 0;
    for (int i = 0; a->recorded && i < a->ntop && i < max && at + 1 < n; i++) {
        const dkb_attrib_kernel *k = &a->top[i];
        char x[24] = "";
        if (k->launches > 1) snprintf(x, sizeof x, " x%d", k->launches);
        int w = snprintf(buf + at, n - at, "%s%s%s%s%s %.3f ms%s", i ? ", " : "", k->name, k->library[0] ? " [" : "",
                         k->library, k->library[0] ? "]" : "", k->ms, x);
        if (w < 0) break;
        at += (size_t)w < n - at ? (size_t)w : n - at - 1;
    }
}
