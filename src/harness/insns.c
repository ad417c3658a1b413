/* insns.c: instructions a candidate's machine code may not hold. The x86
 * time-stamp and performance counters (rdtsc, rdtscp, rdpmc) and AArch64's
 * counter registers (mrs of cntvct_el0, cntpct_el0, pmccntr_el0) read a
 * clock with no system call and no import: neither the allow-list of
 * symbols (symbols.c) nor the worker's system-call filter sees them, and a
 * compiler builtin such as __builtin_ia32_rdtsc needs no inline assembly.
 * So the built shared object is disassembled (`objdump -d`, or
 * $DKB_OBJDUMP) and every instruction of its code read as it streams: no
 * size cap for padding to hide behind. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/countof.h"
#include "harness/harness.h"

/* The clock-reading instruction on one line of objdump -d output
 * ("    1139:\trdtsc" or "  40:\td53be040 \tmrs\tx0, cntvct_el0"), or
 * NULL. */
static const char *clock_insn(const char *line) {
    static const char *const X86[] = {"rdtsc", "rdtscp", "rdpmc"};
    static const char *const ARM_REGS[] = {"cntvct_el0", "cntpct_el0", "cntvctss_el0", "cntpctss_el0",
                                           "pmccntr_el0"};
    const char *p = strchr(line, ':');
    if (!p || p == line) return NULL;
    for (const char *a = line; a < p; a++) /* an address: hex digits after blanks */
        if (!strchr(" 0123456789abcdef", *a)) return NULL;
    /* the mnemonic: the first word after the address that is not a prefix
     * (with --no-show-raw-insn the bytes are not shown) */
    static const char *const PREFIX[] = {"rep", "repz", "repnz", "repe", "repne", "lock", "notrack", "bnd",
                                         "data16", "addr32", "cs", "ds", "es", "ss", "fs", "gs", "rex", "rex.W"};
    p++;
    for (;;) {
        p += strspn(p, " \t");
        size_t len = strcspn(p, " \t\n");
        if (!len) return NULL;
        int prefix = 0;
        for (size_t i = 0; i < DKB_COUNTOF(PREFIX) && !prefix; i++)
            prefix = strlen(PREFIX[i]) == len && !strncmp(p, PREFIX[i], len);
        if (!prefix) {
            for (size_t i = 0; i < DKB_COUNTOF(X86); i++)
                if (strlen(X86[i]) == len && !strncmp(p, X86[i], len)) return X86[i];
            if (len == 3 && !strncmp(p, "mrs", 3))
                for (size_t i = 0; i < DKB_COUNTOF(ARM_REGS); i++)
                    if (strstr(p + 3, ARM_REGS[i])) return ARM_REGS[i];
            return NULL;
        }
        p += len;
    }
}

int dkb__insns_check(const char *so, dkb_verdict *v, char *detail, size_t n, dkb_error *err) {
    const char *od = getenv("DKB_OBJDUMP");
    if (!od || !*od) od = "objdump";
    char *argv[] = {(char *)od, (char *)"-d", (char *)"--no-show-raw-insn", (char *)so, NULL};
    pid_t pid;
    int fd;
    int rc = dkb__spawn_reading(argv, 0, &pid, &fd, err);
    if (rc) return rc; /* "cannot run objdump: ..." (binutils; or set DKB_OBJDUMP) */
    /* line by line as it comes; a line longer than the buffer is read in
     * pieces, each starting a "line" that has no address and so matches
     * nothing (instruction lines are short) */
    char buf[65536];
    size_t have = 0;
    const char *found = NULL;
    long lines = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have += (size_t)got;
        buf[have] = 0;
        char *line = buf, *end;
        while ((end = strchr(line, '\n'))) {
            *end = 0;
            lines++;
            if (!found) found = clock_insn(line);
            line = end + 1;
        }
        have = (size_t)(buf + have - line);
        if (have == sizeof buf - 1) have = 0; /* a piece of an overlong line */
        else memmove(buf, line, have);
    }
    if (have) {
        buf[have] = 0;
        if (!found) found = clock_insn(buf);
    }
    close(fd);
    int st;
    if ((rc = dkb__spawn_wait(pid, od, &st, err))) return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || lines == 0)
        return dkb_fail(err, DKB_EIO, "%s -d %s failed (status %d)", od, so, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (found) {
        *v = DKB_VERDICT_COMPILE_ERROR;
        snprintf(detail, n, "its machine code reads a clock (%s: the processor's time-stamp or performance "
                            "counter), which is not allowed",
                 found);
    }
    return 0;
}
