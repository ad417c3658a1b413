/* srcroot.c: the source tree this binary was built from (for the files a
 * build directory outside the tree still needs: candidate.h, the prompt
 * templates, the expert kernels). */
#include <stdio.h>
#include <string.h>

#include "common/fsutil.h"

const char *dkb__source_root(void) {
    static char root[4096];
    if (!root[0]) {
        /* __FILE__ is <root>/src/common/srcroot.c (CMake passes absolute paths) */
        snprintf(root, sizeof root, "%s", __FILE__);
        for (int up = 0; up < 3; up++) {
            char *slash = strrchr(root, '/');
            if (!slash) {
                snprintf(root, sizeof root, ".");
                break;
            }
            *slash = '\0';
        }
        if (!root[0]) snprintf(root, sizeof root, "/");
    }
    return root;
}
