/* verify.c: dkb_store_verify (crc32 of every file plus the structure) and
 * dkb_store_check_structure (the structure alone: dictionary codes in
 * range, text offsets non-decreasing), computed in parallel over
 * fixed-size pieces of all files at once (OpenMP), then reported in
 * manifest order so the first bad file is always the same. */
#include <stdio.h>
#include <stdlib.h>

#include "store/crc.h"
#include "store/reader_internal.h"

#define PIECE ((uint64_t)8 << 20)

typedef struct piece {
    const dkb_store_column *col;
    int file;
    uint64_t at, len;
    uint32_t crc;
    int64_t bad_row;   /* first row failing the content check, or -1 */
} piece;

/* Content check of a piece of a codes or offsets file. */
static int64_t check_piece(const piece *p) {
    const dkb_store_column *c = p->col;
    if (p->file != 0) return -1;
    if (c->def->type == DKB_TYPE_DICT) {
        const uint8_t *u = (const uint8_t *)c->files[0].map + p->at;
        for (uint64_t i = 0; i < p->len; i++)
            if (u[i] >= c->dict_size) return (int64_t)(p->at + i);
    } else if (c->def->type == DKB_TYPE_TEXT) {
        /* Entry i compared with i + 1; pieces are whole entries. */
        const int64_t *o = c->files[0].map;
        uint64_t first = p->at / 8, last = (p->at + p->len) / 8;
        for (uint64_t i = first; i < last && (int64_t)i < c->rows; i++)
            if (o[i] > o[i + 1]) return (int64_t)i;
    }
    return -1;
}

/* Whether file f of col is scanned: every file for the crc32, else only
 * the codes of DICT and the offsets of TEXT columns. */
static bool scanned(const dkb_store_column *col, int f, bool crc) {
    return crc || (f == 0 && (col->def->type == DKB_TYPE_DICT || col->def->type == DKB_TYPE_TEXT));
}

static size_t count_pieces(const dkb_store *s, bool crc) {
    size_t n = 0;
    for (int t = 0; t < s->ntables; t++)
        for (int c = 0; c < s->tables[t].ncols; c++)
            for (int f = 0; f < s->tables[t].cols[c].nfiles; f++)
                if (scanned(&s->tables[t].cols[c], f, crc))
                    n += (size_t)((s->tables[t].cols[c].files[f].bytes + PIECE - 1) / PIECE) + 1;
    return n;
}

static size_t make_pieces(const dkb_store *s, bool crc, piece *ps) {
    size_t n = 0;
    for (int t = 0; t < s->ntables; t++)
        for (int c = 0; c < s->tables[t].ncols; c++) {
            const dkb_store_column *col = &s->tables[t].cols[c];
            for (int f = 0; f < col->nfiles; f++) {
                if (!scanned(col, f, crc)) continue;
                uint64_t size = col->files[f].bytes, at = 0;
                do {
                    uint64_t len = size - at < PIECE ? size - at : PIECE;
                    ps[n++] = (piece){col, f, at, len, 0, -1};
                    at += len;
                } while (at < size);
            }
        }
    return n;
}

/* The first bad file in manifest order; within a file the structure
 * problem (the more precise message) before a crc32 mismatch. */
static int report(const dkb_store *s, const piece *ps, size_t n, bool check_crc, dkb_error *err) {
    for (size_t i = 0; i < n;) {
        const dkb_store_file *f = &ps[i].col->files[ps[i].file];
        uint32_t crc = 0;
        int64_t bad_row = -1;
        size_t j = i;
        for (; j < n && ps[j].col == ps[i].col && ps[j].file == ps[i].file; j++) {
            crc = j == i ? ps[j].crc : dkb__crc32_combine(crc, ps[j].crc, ps[j].len);
            if (bad_row < 0) bad_row = ps[j].bad_row;
        }
        if (bad_row >= 0) {
            const dkb_store_column *c = ps[i].col;
            if (c->def->type == DKB_TYPE_DICT)
                return dkb_fail(err, DKB_ECORRUPT, "%s/%s: row %lld: code %d is not below the dictionary size %d",
                                s->dir, f->path, (long long)bad_row,
                                ((const uint8_t *)f->map)[bad_row], c->dict_size);
            const int64_t *o = f->map;
            return dkb_fail(err, DKB_ECORRUPT, "%s/%s: row %lld: text offset %lld decreases to %lld", s->dir,
                            f->path, (long long)bad_row, (long long)o[bad_row], (long long)o[bad_row + 1]);
        }
        if (check_crc && crc != f->crc32)
            return dkb_fail(err, DKB_ECORRUPT, "%s/%s: crc32 mismatch (file 0x%08x, manifest 0x%08x)",
                            s->dir, f->path, crc, f->crc32);
        i = j;
    }
    return 0;
}

static int scan(const dkb_store *s, bool crc, dkb_error *err) {
    piece *ps = malloc(count_pieces(s, crc) * sizeof *ps + 1);
    if (!ps) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", s->dir);
    size_t n = make_pieces(s, crc, ps);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < n; i++) {
        piece *p = &ps[i];
        const unsigned char *base = p->col->files[p->file].map;
        if (crc) p->crc = dkb__crc32(0, base + p->at, (size_t)p->len);
        p->bad_row = check_piece(p);
    }
    int rc = report(s, ps, n, crc, err);
    free(ps);
    return rc;
}

int dkb_store_verify(const dkb_store *s, dkb_error *err) {
    if (!s) return dkb_fail(err, DKB_EINVAL, "dkb_store_verify: no store");
    return scan(s, true, err);
}

int dkb_store_check_structure(const dkb_store *s, dkb_error *err) {
    if (!s) return dkb_fail(err, DKB_EINVAL, "dkb_store_check_structure: no store");
    return scan(s, false, err);
}
