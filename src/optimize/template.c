/* template.c: find, load and fill the prompt templates of `dkb optimize`
 * (template.h), and the growable string the optimize files share. */
#include "optimize/template.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"  // defines: dkb__read_file, dkb__path_join, dkb__source_root

const char *dkb__opt_templates_dir(const char *explicit_dir) {
    static char dir[4200];
    if (explicit_dir && *explicit_dir) return explicit_dir;
    const char *env = getenv("DKB_PROMPTS");
    if (env && *env) return env;
    snprintf(dir, sizeof dir, "%s/prompts", dkb__source_root());
    return dir;
}

int dkb__opt_template_load(const char *dir, const char *name, char **out, dkb_error *err) {
    *out = NULL;
    char *path = dkb__path_join(dir, name);
    if (!path) return dkb_fail(err, DKB_ENOMEM, "template %s: out of memory", name);
    size_t len;
    int rc = dkb__read_file(path, 1u << 20, out, &len, err);
    if (rc) dkb_fail(err, rc, "template %s: cannot read it (set --templates DIR or $DKB_PROMPTS)", path);
    free(path);
    return rc;
}

int dkb__opt_render(const char *what, const char *text, const dkb_opt_var *vars, int nvars, char **out,
                    dkb_error *err) {
    dkb_opt_buf b = {0};
    *out = NULL;
    const char *p = text;
    for (;;) {
        const char *open = strstr(p, "{{");
        if (!open) {
            dkb__opt_buf_puts(&b, p);
            break;
        }
        const char *name = open + 2, *e = name;
        while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') || *e == '_') e++;
        if (e == name || strncmp(e, "}}", 2)) {   /* not a placeholder: keep the braces */
            dkb__opt_buf_add(&b, p, (size_t)(name - p));
            p = name;
            continue;
        }
        const char *value = NULL;
        int known = 0;
        for (int i = 0; i < nvars; i++)
            if (strlen(vars[i].name) == (size_t)(e - name) && !strncmp(vars[i].name, name, (size_t)(e - name))) {
                value = vars[i].value;
                known = 1;
            }
        if (!known || !value) {
            free(dkb__opt_buf_take(&b));
            return dkb_fail(err, DKB_EINVAL, "template %s: no value for {{%.*s}}", what, (int)(e - name), name);
        }
        dkb__opt_buf_add(&b, p, (size_t)(open - p));
        dkb__opt_buf_puts(&b, value);
        p = e + 2;
    }
    *out = dkb__opt_buf_take(&b);
    return *out ? 0 : dkb_fail(err, DKB_ENOMEM, "template %s: out of memory", what);
}

void dkb__opt_buf_add(dkb_opt_buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            b->oom = 1;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

void dkb__opt_buf_puts(dkb_opt_buf *b, const char *s) { dkb__opt_buf_add(b, s, strlen(s)); }

void dkb__opt_buf_printf(dkb_opt_buf *b, const char *fmt, ...) {
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        dkb__opt_buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    dkb__opt_buf_add(b, big, (size_t)n);
    free(big);
}

char *dkb__opt_buf_take(dkb_opt_buf *b) {
    if (b->oom) {
        free(b->s);
        *b = (dkb_opt_buf){0};
        return NULL;
    }
    char *s = b->s ? b->s : strdup("");
    *b = (dkb_opt_buf){0};
    return s;
}
