/* import_plan.c: cuts a .tbl text into segments of about chunk_bytes at
 * line starts, counts their lines in parallel, places partition boundaries
 * (equal line ranges, or by leading key), and emits the spans that import
 * parses, each with its first line number. */
#include "store/import_plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct seg {
    size_t begin, end;
    int64_t lines;
} seg;

int64_t dkb__count_lines(const char *p, size_t n) {
    int64_t c = 0;
    for (const char *q = p, *end = p + n; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++) c++;
    return c + (n > 0 && p[n - 1] != '\n');
}

static size_t next_line(const char *text, size_t len, size_t pos) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    return nl ? (size_t)(nl - text) + 1 : len;
}

/* The leading "[-]digits|" of the line at pos. */
static bool line_key(const char *text, size_t len, size_t pos, int64_t *key) {
    bool neg = pos < len && text[pos] == '-';
    size_t i = pos + neg, start = i;
    uint64_t u = 0;
    while (i < len && i - start < 19 && (unsigned char)(text[i] - '0') < 10) u = u * 10 + (uint64_t)(text[i++] - '0');
    if (i == start || i >= len || text[i] != '|' || u > (uint64_t)INT64_MAX) return false;
    *key = neg ? -(int64_t)u : (int64_t)u;
    return true;
}

static int key_fail(dkb_error *err, const char *file, int64_t line) {
    return dkb_fail(err, DKB_EPARSE, "%s:%lld: field 1: not an integer key (needed to split into partitions)",
                    file, (long long)line);
}

static int cut_segments(const char *text, size_t len, size_t chunk_bytes, seg **out, size_t *n) {
    size_t cap = len / chunk_bytes + 2, k = 0;
    seg *s = malloc(cap * sizeof *s);
    if (!s) return DKB_ENOMEM;
    for (size_t pos = 0; pos < len;) {
        size_t t = pos + chunk_bytes, end = t >= len ? len : next_line(text, len, t - 1);
        s[k++] = (seg){pos, end, 0};
        pos = end;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < k; i++) s[i].lines = dkb__count_lines(text + s[i].begin, s[i].end - s[i].begin);
    *out = s;
    *n = k;
    return 0;
}

/* Partition boundaries at equal line counts; keys of their first lines. */
static int bounds_by_rows(const char *text, size_t len, const seg *s, size_t nseg, const int64_t *cum,
                          int parts, size_t *pb, int64_t *keys, const char *file, dkb_error *err) {
    int64_t total = cum[nseg];
    size_t k = 0;
    for (int p = 1; p < parts; p++) {
        int64_t r = total * p / parts;
        while (k < nseg && cum[k + 1] <= r) k++;
        size_t pos = len;
        if (k < nseg) {
            pos = s[k].begin;
            for (int64_t i = cum[k]; i < r; i++) pos = next_line(text, len, pos);
        }
        pb[p] = pos;
        if (keys) {
            keys[p] = INT64_MAX;
            if (pos < len && !line_key(text, len, pos, &keys[p])) return key_fail(err, file, r + 1);
        }
    }
    if (keys) {
        keys[0] = INT64_MIN;
        keys[parts] = INT64_MAX;
    }
    return 0;
}

/* Partition boundaries at the first line whose key is >= keys[p]. */
static int bounds_by_keys(const char *text, size_t len, const seg *s, size_t nseg, const int64_t *cum,
                          int parts, size_t *pb, const int64_t *keys, const char *file, dkb_error *err) {
    for (int p = 1; p < parts; p++) {
        int64_t want = keys[p], key;
        size_t pos = len;
        if (want != INT64_MAX) {
            /* t = number of segments whose first key is below want. */
            size_t lo = 0, hi = nseg;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (!line_key(text, len, s[mid].begin, &key)) return key_fail(err, file, cum[mid] + 1);
                if (key < want)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            pos = lo == 0 ? 0 : s[lo - 1].begin;
            int64_t line = lo == 0 ? 1 : cum[lo - 1] + 1;
            for (; pos < len; pos = next_line(text, len, pos), line++) {
                if (!line_key(text, len, pos, &key)) return key_fail(err, file, line);
                if (key >= want) break;
            }
        }
        pb[p] = pos < pb[p - 1] ? pb[p - 1] : pos;
    }
    return 0;
}

static int make_spans(const char *text, const seg *s, size_t nseg, const size_t *pb, int parts,
                      dkb_import_plan *plan) {
    dkb_import_span *sp = malloc((nseg + 2 * (size_t)parts + 1) * sizeof *sp);
    if (!sp) return DKB_ENOMEM;
    size_t n = 0, k = 0;
    int64_t line = 1;
    for (int p = 0; p < parts; p++) {
        size_t lo = pb[p], hi = pb[p + 1] < lo ? lo : pb[p + 1], first = n;
        for (size_t pos = lo; pos < hi;) {
            while (s[k].end <= pos) k++;
            size_t end = s[k].end < hi ? s[k].end : hi;
            bool whole = pos == s[k].begin && end == s[k].end;
            int64_t lines = whole ? s[k].lines : dkb__count_lines(text + pos, end - pos);
            sp[n++] = (dkb_import_span){pos, end, line, lines, p, false};
            line += lines;
            pos = end;
        }
        if (n == first) sp[n++] = (dkb_import_span){lo, lo, line, 0, p, false};
        if (p + 1 < parts) sp[n - 1].ends_partition = true;
    }
    plan->spans = sp;
    plan->nspans = n;
    return 0;
}

int dkb__import_plan(const char *text, size_t len, size_t chunk_bytes, int parts, int64_t *keys,
                     bool split_by_keys, const char *file, dkb_import_plan *plan, dkb_error *err) {
    memset(plan, 0, sizeof *plan);
    if (parts < 1) parts = 1;
    if (chunk_bytes == 0) chunk_bytes = 1;
    seg *s = NULL;
    size_t nseg = 0;
    int64_t *cum = NULL;
    size_t *pb = malloc(((size_t)parts + 1) * sizeof *pb);
    int rc = pb ? cut_segments(text, len, chunk_bytes, &s, &nseg) : DKB_ENOMEM;
    if (!rc) {
        cum = malloc((nseg + 1) * sizeof *cum);
        if (!cum) rc = DKB_ENOMEM;
    }
    if (rc) {
        free(pb);
        free(s);
        return dkb_fail(err, rc, "%s: out of memory", file);
    }
    cum[0] = 0;
    for (size_t i = 0; i < nseg; i++) cum[i + 1] = cum[i] + s[i].lines;
    plan->lines = cum[nseg];
    pb[0] = 0;
    pb[parts] = len;
    if (split_by_keys)
        rc = bounds_by_keys(text, len, s, nseg, cum, parts, pb, keys, file, err);
    else
        rc = bounds_by_rows(text, len, s, nseg, cum, parts, pb, keys, file, err);
    if (!rc && make_spans(text, s, nseg, pb, parts, plan)) rc = dkb_fail(err, DKB_ENOMEM, "%s: out of memory", file);
    free(pb);
    free(s);
    free(cum);
    return rc;
}

void dkb__import_plan_free(dkb_import_plan *plan) {
    if (!plan) return;
    free(plan->spans);
    memset(plan, 0, sizeof *plan);
}
