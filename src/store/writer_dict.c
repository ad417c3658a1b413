/* writer_dict.c: dictionaries of DICT columns while a table is written.
 *
 * Encoding threads intern strings under a mutex, getting codes in
 * first-appearance order (threads keep their own caches, so the lock is
 * taken only for values a thread has not seen). At end_table the
 * dictionary is sorted byte-wise, the codes file is rewritten through the
 * old-to-new code map, and the dictionary file is written in code order. */
#include <stdlib.h>
#include <string.h>

#include "store/crc.h"
#include "common/fsutil.h"
#include "store/writer_internal.h"

uint64_t dkb__dict_hash(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

wdict *dkb__dict_create(void) {
    wdict *d = calloc(1, sizeof *d);
    if (d && pthread_mutex_init(&d->mu, NULL) != 0) {
        free(d);
        d = NULL;
    }
    return d;
}

void dkb__dict_free(wdict *d) {
    if (!d) return;
    for (int i = 0; i < d->n; i++) free((char *)d->s[i]);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

int dkb__dict_intern(wdict *d, const char *s, size_t len, uint64_t hash) {
    pthread_mutex_lock(&d->mu);
    int code = -1;
    for (int i = 0; i < d->n; i++)
        if (d->hash[i] == hash && d->len[i] == len && memcmp(d->s[i], s, len) == 0) {
            code = i;
            break;
        }
    if (code < 0 && d->n < DKB__DICT_MAX) {
        char *copy = malloc(len + 1);
        if (!copy) {
            code = -2;
        } else {
            memcpy(copy, s, len);
            copy[len] = '\0';
            code = d->n;
            d->s[code] = copy;
            d->len[code] = (uint32_t)len;
            d->hash[code] = hash;
            d->n++;
        }
    }
    pthread_mutex_unlock(&d->mu);
    return code;
}

static int cmp_entry(const char *a, size_t na, const char *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* Sort codes by their strings (insertion sort: at most 256 entries). */
static void sort_codes(const wdict *d, uint8_t *order) {
    for (int i = 0; i < d->n; i++) {
        int j = i;
        for (; j > 0 && cmp_entry(d->s[order[j - 1]], d->len[order[j - 1]], d->s[i], d->len[i]) > 0; j--)
            order[j] = order[j - 1];
        order[j] = (uint8_t)i;
    }
}

/* Map every code in the codes file through remap (unless identity) and
 * compute its crc. */
static int remap_codes(wfile *f, const uint8_t *remap, bool identity, dkb_error *err) {
    enum { BUF = 1 << 20 };
    uint8_t *buf = malloc(BUF);
    if (!buf) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", f->path);
    uint32_t crc = 0;
    int rc = 0;
    for (uint64_t at = 0; at < f->bytes && !rc; at += BUF) {
        size_t n = f->bytes - at < BUF ? (size_t)(f->bytes - at) : BUF;
        rc = dkb__pread_all(f->fd, buf, n, (off_t)at, f->path, err);
        if (rc) break;
        if (!identity) {
            for (size_t i = 0; i < n; i++) buf[i] = remap[buf[i]];
            rc = dkb__pwrite_all(f->fd, buf, n, (off_t)at, f->path, err);
        }
        crc = dkb__crc32(crc, buf, n);
    }
    free(buf);
    f->crc = crc;
    return rc;
}

int dkb__dict_finish(wcol *col, dkb_error *err) {
    const wdict *d = col->dict;
    uint8_t order[DKB__DICT_MAX], remap[DKB__DICT_MAX] = {0};
    sort_codes(d, order);
    bool identity = true;
    size_t total = 0;
    for (int i = 0; i < d->n; i++) {
        remap[order[i]] = (uint8_t)i;
        identity = identity && order[i] == i;
        total += d->len[i] + 1;
    }
    int rc = remap_codes(&col->f[0], remap, identity, err);
    if (rc) return rc;
    char *text = malloc(total + 1);
    if (!text) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", col->f[1].path);
    size_t at = 0;
    for (int i = 0; i < d->n; i++) {
        memcpy(text + at, d->s[order[i]], d->len[order[i]]);
        at += d->len[order[i]];
        text[at++] = '\n';
    }
    wfile *df = &col->f[1];
    rc = dkb__write_all(df->fd, text, total, df->path, err);
    df->bytes = total;
    df->crc = dkb__crc32(0, text, total);
    free(text);
    col->dict_size = d->n;
    return rc;
}
