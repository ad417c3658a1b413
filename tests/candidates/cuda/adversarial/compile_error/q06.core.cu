/* q06.core.cu (adversarial, compile_error): does not compile. */
#include "dkb/candidate.h"

__global__ void k(int *x) { x[0] = undefined_name; }
