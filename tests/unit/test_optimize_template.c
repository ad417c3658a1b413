/* test_optimize_template.c: the prompt template filler (placeholders,
 * unknown and unset names, braces that are not placeholders), the trimming
 * of long diagnostics, and the plan source shown in core mode. */
#include <stdlib.h>
#include <string.h>

#include "optimize/prompt.h"
#include "optimize/template.h"
#include "test_check.h"

int main(void) {
    dkb_error err = {0};
    char *out = NULL;
    const dkb_opt_var vars[] = {{"a", "1"}, {"bb", "two"}, {"unset", NULL}};
    CHECK(!dkb__opt_render("t", "x{{a}}y{{bb}}z{{a}}", vars, 3, &out, &err) && !strcmp(out, "x1ytwoz1"), "render: %s", out);
    free(out);
    CHECK(!dkb__opt_render("t", "{ {{ {{a b}} }}{{a}}", vars, 3, &out, &err) && !strcmp(out, "{ {{ {{a b}} }}1"),
          "non-placeholders kept: %s", out);
    free(out);
    CHECK(dkb__opt_render("t", "{{nope}}", vars, 3, &out, &err) == DKB_EINVAL && strstr(err.msg, "{{nope}}") && !out,
          "unknown: %s", err.msg);
    CHECK(dkb__opt_render("t", "{{unset}}", vars, 3, &out, &err) == DKB_EINVAL && strstr(err.msg, "{{unset}}"),
          "unset: %s", err.msg);

    char big[10000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    big[0] = 'H';
    big[sizeof big - 2] = 'T';
    char *t = dkb__opt_trim(big, 500);
    CHECK(t && strlen(t) <= 500 && t[0] == 'H' && t[strlen(t) - 1] == 'T' && strstr(t, "trimmed"), "trim");
    free(t);
    t = dkb__opt_trim("short", 500);
    CHECK(t && !strcmp(t, "short"), "trim short");
    free(t);

    char *src = NULL;
    CHECK(!dkb__opt_plan_source(6, DKB_MODE_CORE, &src, &err), "plan source: %s", err.msg);
    CHECK(src && strstr(src, "static int prepare(") && strstr(src, "static int core(") && !strstr(src, "static void draw("),
          "core mode shows prepare and core only");
    free(src);
    char file[32];
    dkb__opt_file_name(6, DKB_MODE_FULL, "cuda", file, sizeof file);
    CHECK(!strcmp(file, "q06.full.cu"), "file name %s", file);
    return failures ? 1 : 0;
}
