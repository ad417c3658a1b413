/* verify_cache.c: dkb__store_verify_cached (verify_cache.h): the record
 * of a passed verification, its two places, and the check it saves.
 *
 * A record is text: a magic line, the level that passed, then the key:
 *
 *     dkb-store-verified 1
 *     level full
 *     store /abs/path/data/sf1
 *     manifest crc32 0x1c6d9a2e dev 2049 ino 1311 size 23456 mtime 1764512861.123456789 ctime ...
 *     file lineitem/l_orderkey.i32 dev 2049 ino 1312 size 240700 mtime ... ctime ...
 *     ...
 *
 * It holds when everything after the level line equals the key built from
 * the open store, byte for byte; no parsing beyond that. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/timing.h"  // defines: dkb__now_s
#include "store/reader_internal.h"
#include "store/verify_cache.h"

#define MAGIC "dkb-store-verified 1\n"
#define RECORD_MAX (16u << 20)

static const char *level_name(dkb__verify_level level) {
    return level == DKB__VERIFY_FULL ? "full" : "structure";
}

static void put_stamp(FILE *f, const dkb__file_stamp *t) {
    fprintf(f, " dev %llu ino %llu size %llu mtime %lld.%09lld ctime %lld.%09lld\n", (unsigned long long)t->dev,
            (unsigned long long)t->ino, (unsigned long long)t->size, (long long)t->mtime_s, (long long)t->mtime_ns,
            (long long)t->ctime_s, (long long)t->ctime_ns);
}

/* The record of a pass of s at level (malloc'd, NUL-terminated; *len
 * bytes), its key from byte *key_at on; NULL when out of memory. */
static char *make_record(const dkb_store *s, const char *abs, dkb__verify_level level, size_t *len,
                         size_t *key_at) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    fprintf(f, "%slevel %s\n", MAGIC, level_name(level));
    fflush(f);   /* sets *len */
    *key_at = *len;
    fprintf(f, "store %s\nmanifest crc32 0x%08x", abs, (unsigned)s->manifest_crc);
    put_stamp(f, &s->manifest_stamp);
    for (int t = 0; t < s->ntables; t++)
        for (int c = 0; c < s->tables[t].ncols; c++) {
            const dkb_store_column *col = &s->tables[t].cols[c];
            for (int i = 0; i < col->nfiles; i++) {
                fprintf(f, "file %s", col->files[i].path);
                put_stamp(f, &col->stamp[i]);
            }
        }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int count_files(const dkb_store *s) {
    int n = 0;
    for (int t = 0; t < s->ntables; t++)
        for (int c = 0; c < s->tables[t].ncols; c++) n += s->tables[t].cols[c].nfiles;
    return n;
}

/* The level a record at path grants for key (0: none, unreadable or stale). */
static int record_level(const char *path, const char *key, size_t key_len) {
    char *text = NULL;
    size_t len = 0;
    if (dkb__read_file(path, RECORD_MAX, &text, &len, NULL)) return 0;
    int level = 0;
    size_t m = strlen(MAGIC);
    if (len > m && !memcmp(text, MAGIC, m)) {
        const char *p = text + m, *nl = memchr(p, '\n', len - m);
        if (nl && (size_t)(text + len - (nl + 1)) == key_len && !memcmp(nl + 1, key, key_len)) {
            size_t n = (size_t)(nl - p);
            if (n == 10 && !memcmp(p, "level full", 10)) level = DKB__VERIFY_FULL;
            else if (n == 15 && !memcmp(p, "level structure", 15)) level = DKB__VERIFY_STRUCTURE;
        }
    }
    free(text);
    return level;
}

/* The per-user cache directory ($XDG_CACHE_HOME/dkb, else ~/.cache/dkb)
 * into dir; false when neither variable gives an absolute path. */
static bool user_cache_dir(char *dir, size_t n) {
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    if (x && x[0] == '/') w = snprintf(dir, n, "%s/dkb", x);
    else if (home && home[0] == '/') w = snprintf(dir, n, "%s/.cache/dkb", home);
    else return false;
    return w > 0 && (size_t)w < n;
}

/* "verified-<FNV-1a 64 of the absolute path>": one record per store. */
static void user_record_name(const char *abs, char *name, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
    snprintf(name, n, "verified-%016llx", (unsigned long long)h);
}

/* Whether some file changed at or after the clock tick s was opened in:
 * its stamp could then survive one more change. Timestamps without a
 * nanosecond part anywhere suggest a file system of 1 or 2 s granularity:
 * then they must be 2 s older. */
static bool too_young(const dkb_store *s) {
    bool fine = false, any = false;
    int64_t new_s = 0, new_ns = 0;   /* the newest ctime */
    for (int t = 0; t < s->ntables; t++)
        for (int c = 0; c < s->tables[t].ncols; c++)
            for (int i = 0; i < s->tables[t].cols[c].nfiles; i++) {
                const dkb__file_stamp *st = &s->tables[t].cols[c].stamp[i];
                fine |= st->ctime_ns != 0 || st->mtime_ns != 0;
                if (!any || st->ctime_s > new_s || (st->ctime_s == new_s && st->ctime_ns > new_ns))
                    new_s = st->ctime_s, new_ns = st->ctime_ns;
                any = true;
            }
    int64_t lim_s = (int64_t)s->opened.tv_sec - (fine ? 0 : 2), lim_ns = s->opened.tv_nsec;
    return any && (new_s > lim_s || (new_s == lim_s && new_ns >= lim_ns));
}

static void set_path(dkb__verify_info *info, const char *dir, const char *name) {
    snprintf(info->path, sizeof info->path, "%s/%s", dir, name);
}

/* Write the record: in the store directory, else in the user cache. */
static void write_record(const dkb_store *s, const char *abs, const char *text, size_t len,
                         dkb__verify_info *info) {
    dkb_error e1 = {0}, e2 = {0};
    if (access(s->dir, W_OK | X_OK) != 0) {
        dkb__io_fail(&e1, s->dir, "not writable");
    } else if (!dkb__write_file_atomic(s->dir, DKB__VERIFY_RECORD, text, len, &e1)) {
        info->recorded = true;
        set_path(info, s->dir, DKB__VERIFY_RECORD);
        return;
    }
    char dir[3900], name[32];
    if (!abs) {
        dkb_fail(&e2, DKB_EINVAL, "no absolute path of the store to key a per-user record by");
    } else if (!user_cache_dir(dir, sizeof dir)) {
        dkb_fail(&e2, DKB_ENOENT, "no per-user cache directory (neither XDG_CACHE_HOME nor HOME is an absolute path)");
    } else {
        user_record_name(abs, name, sizeof name);
        if (!dkb__mkdir_p(dir, &e2) && !dkb__write_file_atomic(dir, name, text, len, &e2)) {
            info->recorded = true;
            set_path(info, dir, name);
            return;
        }
    }
    snprintf(info->note, sizeof info->note, "not recorded (%s; %s): verified again at every open", e1.msg, e2.msg);
}

int dkb__store_verify_cached(const dkb_store *s, dkb__verify_level level, dkb__verify_info *info,
                             dkb_error *err) {
    dkb__verify_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (!s) return dkb_fail(err, DKB_EINVAL, "dkb__store_verify_cached: no store");
    if (level != DKB__VERIFY_STRUCTURE && level != DKB__VERIFY_FULL)
        return dkb_fail(err, DKB_EINVAL, "dkb__store_verify_cached: bad level %d", (int)level);
    info->level = level;
    info->nfiles = count_files(s);
    char *abs = realpath(s->dir, NULL);
    size_t rec_len = 0, key_at = 0;
    char *rec = make_record(s, abs ? abs : s->dir, level, &rec_len, &key_at);
    if (!rec) {
        free(abs);
        return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", s->dir);
    }
    const char *key = rec + key_at;
    size_t key_len = rec_len - key_at;
    /* a record that holds: in the store directory, else the user cache */
    char dir[3900], name[32];
    for (int where = 0; where < 2 && !info->cached; where++) {
        char *p = NULL;
        if (where == 0) p = dkb__path_join(s->dir, DKB__VERIFY_RECORD);
        else if (abs && user_cache_dir(dir, sizeof dir)) {
            user_record_name(abs, name, sizeof name);
            p = dkb__path_join(dir, name);
        }
        if (p && record_level(p, key, key_len) >= (int)level) {
            info->cached = true;
            snprintf(info->path, sizeof info->path, "%s", p);
        }
        free(p);
    }
    int rc = 0;
    if (!info->cached) {
        double t0 = dkb__now_s();
        rc = level == DKB__VERIFY_FULL ? dkb_store_verify(s, err) : dkb_store_check_structure(s, err);
        info->seconds = dkb__now_s() - t0;
        if (!rc && too_young(s)) {
            snprintf(info->note, sizeof info->note,
                     "not recorded: a file changed in the clock tick the store was opened in");
        } else if (!rc) {
            write_record(s, abs, rec, rec_len, info);
        }
    }
    free(rec);
    free(abs);
    return rc;
}

int dkb__store_verify_dir(const char *dir, dkb__verify_level level, dkb__verify_info *info, dkb_error *err) {
    dkb_store *s = NULL;
    int rc = dkb_store_open(dir, 0, &s, err);
    if (!rc) rc = dkb__store_verify_cached(s, level, info, err);
    dkb_store_close(s);
    return rc;
}
