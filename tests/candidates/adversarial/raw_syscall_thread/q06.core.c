/* raw_syscall_thread (core mode): the thread_after_return trick without
 * pthread_create: a thread made with the clone system call in inline
 * assembly, which imports no symbol at all, so the allow-list cannot see it
 * (x86-64 Linux). The call returns at once; the thread computes the answer,
 * writes it into the output later and lingers. Expected: compile_error,
 * because the build refuses inline assembly (it could make any system call
 * unseen); were it built, the worker's thread count before and after each
 * call would report left_threads, and its system-call filter forbids clone. */
#include <stdlib.h>

#include "dkb/candidate.h"

/* Plain, correct Q6 core: the sum of l_extendedprice * l_discount (scale 4)
 * over the rows that qualify, and how many qualify. 0, or 1 when an input
 * is missing. */
static int q6_sum(const dkb_cand_set *in, __int128 *sum, int64_t *hits) {
    const dkb_cand_vec *ship = dkb_cand_vec_find(in, "l_shipdate");
    const dkb_cand_vec *disc = dkb_cand_vec_find(in, "l_discount");
    const dkb_cand_vec *qty = dkb_cand_vec_find(in, "l_quantity");
    const dkb_cand_vec *price = dkb_cand_vec_find(in, "l_extendedprice");
    const dkb_cand_scalar *slo = dkb_cand_scalar_find(in, "ship_lo"), *shi = dkb_cand_scalar_find(in, "ship_hi");
    const dkb_cand_scalar *dlo = dkb_cand_scalar_find(in, "disc_lo"), *dhi = dkb_cand_scalar_find(in, "disc_hi");
    const dkb_cand_scalar *qlt = dkb_cand_scalar_find(in, "qty_lt");
    if (!ship || !disc || !qty || !price || !slo || !shi || !dlo || !dhi || !qlt) return 1;
    const int32_t *s = ship->data;
    const int64_t *d = disc->data, *q = qty->data, *p = price->data;
    __int128 t = 0;
    int64_t h = 0;
    for (int64_t i = 0; i < ship->n; i++)
        if (s[i] >= slo->i && s[i] <= shi->i && d[i] >= dlo->i && d[i] <= dhi->i && q[i] < qlt->i) {
            t += (__int128)p[i] * d[i];
            h++;
        }
    *sum = t;
    *hits = h;
    return 0;
}

#if !defined(__x86_64__) || !defined(__linux__)
#error "raw_syscall_thread is written for x86-64 Linux"
#endif

struct job {
    const dkb_cand_set *in;
    dkb_cand_vec *revenue;
};

/* Runs on the new thread, which the C library does not know about: only
 * reentrant library functions (strcmp); then the exit system call. */
static void finish_later(void *arg) {
    struct job *j = arg;
    __int128 sum;
    int64_t hits;
    if (q6_sum(j->in, &sum, &hits) == 0 && hits) ((__int128 *)j->revenue->data)[0] = sum;
    for (volatile uint64_t spin = 0; spin < ((uint64_t)1 << 32); spin++) {   /* linger */
    }
}

/* clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
 * CLONE_SYSVSEM, stack): the child pops fn and arg from its new stack, calls
 * fn(arg) and exits. Returns the child's id, or a negative errno. */
static long raw_thread(void (*fn)(void *), void *arg, void **stack_top) {
    stack_top[-1] = (void *)fn;
    stack_top[-2] = arg;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "pop %%rdi\n\t"
                     "pop %%rax\n\t"
                     "call *%%rax\n\t"
                     "mov $60, %%eax\n\t"   /* exit(0): this thread only */
                     "xor %%edi, %%edi\n\t"
                     "syscall\n\t"
                     "hlt\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(56L), "D"(0x50f00L), "S"(stack_top - 2), "d"(0L)
                     : "rcx", "r8", "r10", "r11", "memory");
    return ret;
}

enum { STACK = 1 << 20 };

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)env;
    dkb_cand_vec *revenue = dkb_cand_vec_find(out, "revenue");
    struct job *j = malloc(sizeof *j);
    char *stack = malloc(STACK);
    if (!revenue || !j || !stack) return 1;
    *j = (struct job){in, revenue};
    revenue->n = 1;                                  /* the value comes later */
    void **top = (void **)(((uintptr_t)(stack + STACK)) & ~(uintptr_t)15);
    return raw_thread(finish_later, j, top) > 0 ? 0 : 1;
}
