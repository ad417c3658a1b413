/* test_cuda_util.h: shared helpers of the CUDA backend tests
 * (test_cuda_*.c): dtype names for failure lines and one printed element
 * of a host copy, so that a difference shows both values. */
#ifndef DKB_TEST_CUDA_UTIL_H
#define DKB_TEST_CUDA_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dkb/tensor.h"

/* Names of dkb_tp_dtype values, indexed by the dtype. */
static const char *const DT[] = {"BOOL", "U8", "I8", "I16", "I32", "I64", "I128", "F64", "STR"};

/* The element of dtype t at p (host memory), printed into buf: integers in
 * decimal, I128 as 32 hex digits, F64 as %.17g and %a. */
static inline void print_elem(char *buf, size_t cap, dkb_tp_dtype t, const uint8_t *p) {
    switch (t) {
    case DKB_TP_F64: {
        double d;
        memcpy(&d, p, sizeof d);
        snprintf(buf, cap, "%.17g (%a)", d, d);
        return;
    }
    case DKB_TP_I128: {
        uint64_t w[2];
        memcpy(w, p, sizeof w);
        snprintf(buf, cap, "0x%016" PRIx64 "%016" PRIx64, w[1], w[0]);
        return;
    }
    case DKB_TP_BOOL: case DKB_TP_U8: snprintf(buf, cap, "%u", (unsigned)p[0]); return;
    case DKB_TP_I8: snprintf(buf, cap, "%d", (int)(int8_t)p[0]); return;
    case DKB_TP_I16: {
        int16_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "%d", (int)v);
        return;
    }
    case DKB_TP_I32: {
        int32_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "%d", (int)v);
        return;
    }
    default: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, cap, "%" PRId64, v);
        return;
    }
    }
}

#endif
