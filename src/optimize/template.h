/* template.h: the prompt templates of `dkb optimize` (the prompts directory): where
 * they are found and how their {{placeholders}} are filled.
 *
 * The directory is, in order: an explicit one (--templates DIR), then
 * $DKB_PROMPTS, then prompts/ of the source tree this binary was built from.
 * A placeholder is {{name}} (letters, digits, '_'); one without a value is
 * an error naming it and the template, so a typo never reaches a model. */
#ifndef DKB_OPTIMIZE_TEMPLATE_H
#define DKB_OPTIMIZE_TEMPLATE_H

#include <stddef.h>

#include "dkb/error.h"


/* The template directory: explicit (may be NULL), else $DKB_PROMPTS, else
 * <source root>/prompts. Never NULL; the directory may not exist. */
const char *dkb__opt_templates_dir(const char *explicit_dir);

/* Read template dir/name into *out (malloc'd). DKB_ENOENT naming the file. */
int dkb__opt_template_load(const char *dir, const char *name, char **out, dkb_error *err);

/* A placeholder's value. */
typedef struct dkb_opt_var {
    const char *name;
    const char *value;   /* NULL: unset (an error if the template uses it) */
} dkb_opt_var;

/* text with every {{name}} replaced by its value, malloc'd into *out.
 * DKB_EINVAL "TEMPLATE: no value for {{name}}" for an unknown or unset
 * placeholder (what names the template in the message). */
int dkb__opt_render(const char *what, const char *text, const dkb_opt_var *vars, int nvars, char **out,
                    dkb_error *err);

/* A growable string (internal helper shared by the optimize files). */
typedef struct dkb_opt_buf {
    char *s;
    size_t n, cap;
    int oom;   /* sticky: an append failed */
} dkb_opt_buf;
void dkb__opt_buf_add(dkb_opt_buf *b, const char *s, size_t n);
void dkb__opt_buf_puts(dkb_opt_buf *b, const char *s);
void dkb__opt_buf_printf(dkb_opt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string (never NULL: "" when empty), ownership to the caller; NULL
 * when an append ran out of memory (the buffer is freed then). */
char *dkb__opt_buf_take(dkb_opt_buf *b);

#endif
