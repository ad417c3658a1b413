/* result_text.c: exact text forms of result values: decimal and float
 * formatting, and strict parsers for decimals, integers and dates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/date.h"
#include "result/result_internal.h"

void dkb__res_dec_text(__int128 v, int scale, char *buf, size_t n) {
    char tmp[64];
    int len = 0;
    unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    if (scale < 0) scale = 0;
    if (scale > DKB__RES_MAX_SCALE) scale = DKB__RES_MAX_SCALE;
    /* digits, least significant first, at least scale + 1 of them */
    do {
        tmp[len++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u || len <= scale);
    char out[72];
    int k = 0;
    if (v < 0) out[k++] = '-';
    for (int i = len - 1; i >= 0; i--) {
        out[k++] = tmp[i];
        if (i == scale && scale > 0) out[k++] = '.';
    }
    out[k] = 0;
    snprintf(buf, n, "%s", out);
}

void dkb__res_float_text(double v, int digits, char *buf, size_t n) {
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v < 0 ? "-inf" : "inf");
        return;
    }
    if (digits < 0) digits = 0;
    if (digits > DKB__RES_MAX_SCALE) digits = DKB__RES_MAX_SCALE;
    snprintf(buf, n, "%.*f", digits, v);
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)) memmove(buf, buf + 1, strlen(buf));
}

void dkb__res_float_plain(double v, char *buf, size_t n) {
    if (!isfinite(v) || v == 0) {
        dkb__res_float_text(v, 0, buf, n);
        return;
    }
    /* the fewest significant digits that read back as v ("d.ddde+X"), then
     * placed around the point, zeros added; never an exponent */
    char e[64];
    int p = 1;
    for (; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (strtod(e, NULL) == v) break;
    }
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    char digits[24], out[DKB__RES_CELL_BUF];
    int nd = 0, k = 0;
    const char *x = e + (e[0] == '-');
    for (; *x && *x != 'e'; x++)
        if (*x >= '0' && *x <= '9' && nd < (int)sizeof digits - 1) digits[nd++] = *x;
    digits[nd] = 0;
    int point = (*x == 'e' ? atoi(x + 1) : 0) + 1; /* digits before the point */
    if (v < 0) out[k++] = '-';
    if (point <= 0) {
        out[k++] = '0', out[k++] = '.';
        for (int i = 0; i < -point; i++) out[k++] = '0';
        for (int i = 0; i < nd; i++) out[k++] = digits[i];
    } else {
        for (int i = 0; i < nd || i < point; i++) {
            if (i == point) out[k++] = '.';
            out[k++] = i < nd ? digits[i] : '0';
        }
    }
    out[k] = 0;
    snprintf(buf, n, "%s", out);
}

int dkb__res_parse_int(const char *s, size_t len, int64_t *v) {
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == len) return -1;
    uint64_t u = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (u > (UINT64_MAX - d) / 10) return -1;
        u = u * 10 + d;
    }
    if (u > (uint64_t)INT64_MAX + (uint64_t)neg) return -1;
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

int dkb__res_rescale(__int128 v, int from, int to, __int128 *out) {
    static const __int128 lim = (__int128)(((unsigned __int128)1 << 127) - 1) / 10;
    for (int k = from; k < to; k++) {
        if (v > lim || v < -lim) return -1;
        v *= 10;
    }
    *out = v;
    return 0;
}

int dkb__res_parse_dec(const char *s, size_t len, int max_scale, __int128 *v, int *scale) {
    size_t i = 0;
    int neg = 0, ndigits = 0, frac = 0, seen_point = 0, any = 0;
    unsigned __int128 u = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.' && !seen_point) {
            seen_point = 1;
            continue;
        }
        if (c < '0' || c > '9') break;
        any = 1;
        if (u == 0 && c == '0' && !seen_point) continue; /* leading zeros */
        if (++ndigits > 38) return -1;
        u = u * 10 + (unsigned)(c - '0');
        frac += seen_point;
    }
    if (!any) return -1;
    long exp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int64_t e;
        if (++i == len || dkb__res_parse_int(s + i, len - i, &e) || e > 1000 || e < -1000) return -1;
        exp = (long)e;
        i = len;
    }
    if (i != len) return -1;
    long sc = frac - exp;
    __int128 x = (__int128)u;
    if (sc < 0) {
        if (dkb__res_rescale(x, 0, (int)-sc, &x)) return -1;
        sc = 0;
    }
    if (sc > max_scale) return -1;
    *v = neg ? -x : x;
    *scale = (int)sc;
    return 0;
}

int dkb__res_parse_date(const char *s, size_t len, int32_t *days) {
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (len != 10 || s[4] != '-' || s[7] != '-') return -1;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return -1;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    if (y < 1000 || m < 1 || m > 12 || d < 1) return -1;
    int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (d > mdays[m - 1] + (m == 2 && leap)) return -1;
    *days = dkb__days_from_civil(y, m, d);
    return 0;
}
