/* model_extract.c: the code of a model's reply: scan it line by line for
 * fenced code blocks (``` or ~~~, as in CommonMark: up to 3 spaces before
 * the fence, a closing fence of the same character at least as long and
 * with nothing after it), keep those in the languages asked for (C, C++
 * or CUDA; or Python) or with no language, and return the longest, with
 * CRLF line ends made LF. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "model/model.h"

#define LANG_MAX 16

static const char *const c_langs[] = {"", "c", "cu", "cuda", "cpp", "c++", "cuh", "h", "hpp", "cc", "cxx"};
static const char *const python_langs[] = {"", "python", "py", "python3"};

static int lang_accepted(dkb_code_lang want, const char *lang) {
    const char *const *langs = want == DKB_CODE_PYTHON ? python_langs : c_langs;
    size_t n = want == DKB_CODE_PYTHON ? DKB_COUNTOF(python_langs) : DKB_COUNTOF(c_langs);
    for (size_t i = 0; i < n; i++)
        if (strcmp(lang, langs[i]) == 0) return 1;
    return 0;
}

/* A fence at line[0..len): its character and run length, 0 when none;
 * *info and *info_len the text after the run. */
static size_t fence_at(const char *line, size_t len, char *ch, const char **info, size_t *info_len) {
    size_t i = 0;
    while (i < len && i < 3 && line[i] == ' ') i++;
    if (i >= len || (line[i] != '`' && line[i] != '~')) return 0;
    char c = line[i];
    size_t run = 0;
    while (i + run < len && line[i + run] == c) run++;
    if (run < 3) return 0;
    *ch = c;
    *info = line + i + run;
    *info_len = len - i - run;
    if (c == '`' && memchr(*info, '`', *info_len)) return 0; /* inline code, not a fence */
    return run;
}

/* The first word of info, lower-case, in lang (LANG_MAX bytes). */
static void info_lang(const char *info, size_t len, char *lang) {
    size_t i = 0, o = 0;
    while (i < len && isspace((unsigned char)info[i])) i++;
    while (i < len && !isspace((unsigned char)info[i]) && info[i] != '{' && o + 1 < LANG_MAX)
        lang[o++] = (char)tolower((unsigned char)info[i++]);
    lang[o] = '\0';
}

static int only_spaces(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

/* s[0..len) with CRLF made LF, malloc'd. */
static char *copy_lf(const char *s, size_t len) {
    char *out = malloc(len + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++)
        if (!(s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')) out[o++] = s[i];
    out[o] = '\0';
    return out;
}

int dkb_model_extract_code(const char *reply, dkb_code_lang want, char **code, dkb_error *err) {
    if (code) *code = NULL;
    if (!reply || !code) return dkb_fail(err, DKB_EINVAL, "dkb_model_extract_code: NULL reply or output");
    const char *best = NULL;
    size_t best_len = 0, fence_len = 0, other_blocks = 0, empty_blocks = 0, line_no = 0, open_line_no = 0;
    char fence_ch = 0, other_lang[LANG_MAX] = "";
    int inside = 0, accepted = 0;
    const char *content = NULL;
    for (const char *p = reply; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *next = nl ? nl + 1 : p + len;
        size_t tl = len;
        if (tl > 0 && p[tl - 1] == '\r') tl--;
        line_no++;
        char ch;
        const char *info;
        size_t info_len, run = fence_at(p, tl, &ch, &info, &info_len);
        if (!inside && run) {
            char lang[LANG_MAX];
            info_lang(info, info_len, lang);
            inside = 1;
            accepted = lang_accepted(want, lang);
            if (!accepted && !other_lang[0]) memcpy(other_lang, lang, LANG_MAX);
            fence_ch = ch;
            fence_len = run;
            content = next;
            open_line_no = line_no;
        } else if (inside && run && ch == fence_ch && run >= fence_len && only_spaces(info, info_len)) {
            size_t clen = (size_t)(p - content);
            if (!accepted) other_blocks++;
            else if (only_spaces(content, clen)) empty_blocks++;
            else if (!best || clen > best_len) best = content, best_len = clen;
            inside = 0;
        }
        p = next;
    }
    if (inside && accepted)
        return dkb_fail(err, DKB_EPARSE, "unterminated code block (opened at line %zu of the reply, never closed)",
                        open_line_no);
    if (!best) {
        if (other_blocks)
            return dkb_fail(err, DKB_ENOENT,
                            "no fenced code block in %s (%zu in other languages, e.g. '%s')",
                            want == DKB_CODE_PYTHON ? "Python" : "C, C++ or CUDA", other_blocks, other_lang);
        if (empty_blocks) return dkb_fail(err, DKB_ENOENT, "no fenced code block with code (%zu empty)", empty_blocks);
        return dkb_fail(err, DKB_ENOENT, "no fenced code block in the reply");
    }
    *code = copy_lf(best, best_len);
    if (!*code) return dkb_fail(err, DKB_ENOMEM, "out of memory copying a %zu-byte code block", best_len);
    return 0;
}
