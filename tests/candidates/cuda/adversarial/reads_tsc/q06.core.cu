/* q06.core.cu (adversarial, compile_error): host code that reads the
 * processor's time-stamp counter (__builtin_ia32_rdtscp: no inline
 * assembly, no import), a clock candidates may not read; the build finds
 * the instruction in the built object (insns.c). */
#include "dkb/candidate.h"

static volatile unsigned long long g_tsc;

extern "C" int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)in, (void)out, (void)env;
    unsigned aux = 0;
    g_tsc = __builtin_ia32_rdtscp(&aux);
    return DKB_CAND_EINTERNAL;
}
