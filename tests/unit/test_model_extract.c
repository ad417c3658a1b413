/* test_model_extract.c: code-block extraction from model replies: fenced
 * blocks with and without a language, several blocks (the longest wins,
 * other languages are skipped), an unterminated block, no block, CRLF line
 * ends, ~~~ fences, longer fences around ``` lines, indented fences, and
 * inline triple backticks that are not fences; the Python target's blocks
 * (python, py, python3; C blocks skipped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/error.h"
#include "model/model.h"
#include "test_check.h"

/* Extract lang's code from reply and expect code want (NULL: expect an
 * error code). */
static void expect_lang(dkb_code_lang lang, const char *name, const char *reply, const char *want, int want_rc,
                        const char *want_msg) {
    char *code = (char *)"unset";
    dkb_error e = {0};
    int rc = dkb_model_extract_code(reply, lang, &code, &e);
    if (want) {
        CHECK(rc == 0, "%s: rc %s: %s", name, dkb_err_name(rc), e.msg);
        CHECK(rc != 0 || (code && strcmp(code, want) == 0), "%s: got '%s' want '%s'", name, code ? code : "(null)",
              want);
    } else {
        CHECK(rc == want_rc && strstr(e.msg, want_msg), "%s: rc %s '%s', want %s '%s'", name, dkb_err_name(rc), e.msg,
              dkb_err_name(want_rc), want_msg);
        CHECK(code == NULL, "%s: code not NULL on failure", name);
    }
    free(code);
}

static void expect(const char *name, const char *reply, const char *want, int want_rc, const char *want_msg) {
    expect_lang(DKB_CODE_C, name, reply, want, want_rc, want_msg);
}

int main(void) {
    expect("cuda", "Here is the kernel:\n```cuda\n__global__ void k() {}\n```\nDone.", "__global__ void k() {}\n", 0,
           NULL);
    expect("no language", "```\nint main(void) { return 0; }\n```\n", "int main(void) { return 0; }\n", 0, NULL);
    expect("C upper case, info after", "```C title=q06.core.c\nint a;\n```", "int a;\n", 0, NULL);
    expect("c++ and cpp", "```c++\nint b;\n```\n```cpp\nint cc;\n```\n", "int cc;\n", 0, NULL);
    expect("longest of several", "```c\nshort;\n```\ntext\n```cu\nthe longer one;\n```\n```c\nmid one;\n```\n",
           "the longer one;\n", 0, NULL);
    expect("first of equal", "```c\naaa;\n```\n```c\nbbb;\n```\n", "aaa;\n", 0, NULL);
    expect("other languages skipped", "```bash\nnvcc -O3 q06.cu -o q06 --a-long-command-line\n```\n```c\nint d;\n```",
           "int d;\n", 0, NULL);
    expect("only python", "```python\nprint(1)\n```\n", NULL, DKB_ENOENT, "no fenced code block");
    expect("none", "I cannot help with that.", NULL, DKB_ENOENT, "no fenced code block");
    expect("empty reply", "", NULL, DKB_ENOENT, "no fenced code block");
    expect("empty block", "```c\n```\n", NULL, DKB_ENOENT, "no fenced code block");
    expect("unterminated", "```cuda\n__global__ void k() {\n  int i =", NULL, DKB_EPARSE, "unterminated code block");
    expect("complete then cut", "```c\nint e;\n```\n```c\nint f(", NULL, DKB_EPARSE, "unterminated code block");
    expect("cut python ignored", "```c\nint g;\n```\n```python\nx = (", "int g;\n", 0, NULL);
    expect("CRLF", "Text\r\n```c\r\nint h;\r\nint i;\r\n```\r\n", "int h;\nint i;\n", 0, NULL);
    expect("tilde fence", "~~~cuda\nint j;\n~~~\n", "int j;\n", 0, NULL);
    expect("tilde holds backticks", "~~~c\n/* ``` */\n```\nint k;\n~~~\n", "/* ``` */\n```\nint k;\n", 0, NULL);
    expect("longer fence", "````c\n```\ninner\n```\n````\n", "```\ninner\n```\n", 0, NULL);
    expect("indented fence", "  ```c\nint l;\n  ```\n", "int l;\n", 0, NULL);
    expect("four spaces are not a fence", "    ```c\nint m;\n    ```\n", NULL, DKB_ENOENT, "no fenced code block");
    expect("inline backticks", "Use ```c``` blocks.\n```c\nint n;\n```", "int n;\n", 0, NULL);
    expect("fence with trailing spaces", "```c  \nint o;\n```   \n", "int o;\n", 0, NULL);
    expect("closing with info is content", "```c\nint p;\n```c\nint q;\n```\n", "int p;\n```c\nint q;\n", 0, NULL);
    expect("last line without newline", "```c\nint r;\n```", "int r;\n", 0, NULL);

    expect_lang(DKB_CODE_PYTHON, "python", "Here:\n```python\ndef full(db, params, env):\n    pass\n```\n",
                "def full(db, params, env):\n    pass\n", 0, NULL);
    expect_lang(DKB_CODE_PYTHON, "py and python3", "```py\na = 1\n```\n```Python3\nbb = 22\n```\n", "bb = 22\n", 0,
                NULL);
    expect_lang(DKB_CODE_PYTHON, "python: C skipped", "```c\nint a_much_longer_c_block;\n```\n```python\nx = 1\n```\n",
                "x = 1\n", 0, NULL);
    expect_lang(DKB_CODE_PYTHON, "python: no language", "```\nimport torch\n```\n", "import torch\n", 0, NULL);
    expect_lang(DKB_CODE_PYTHON, "python: only C", "```cuda\n__global__ void k() {}\n```\n", NULL, DKB_ENOENT,
                "no fenced code block in Python (1 in other languages, e.g. 'cuda')");
    expect_lang(DKB_CODE_PYTHON, "python: cut", "```python\ndef full(db,", NULL, DKB_EPARSE, "unterminated code block");

    char *code = NULL;
    dkb_error e = {0};
    CHECK_ERR(dkb_model_extract_code(NULL, DKB_CODE_C, &code, &e), DKB_EINVAL, e, "NULL");
    CHECK_ERR(dkb_model_extract_code("x", DKB_CODE_C, NULL, &e), DKB_EINVAL, e, "NULL");
    if (failures) fprintf(stderr, "test_model_extract: %d failures\n", failures);
    return failures != 0;
}
