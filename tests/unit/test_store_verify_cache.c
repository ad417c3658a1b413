/* test_store_verify_cache.c: dkb__store_verify_cached and
 * dkb_store_check_structure: a pass is recorded and a second open reads
 * nothing; touching, rewriting, replacing a file or the manifest makes the
 * record stale; a structure record does not stand for a full one; a
 * corrupt store is never recorded; the structure errors name file, row
 * and values; a read-only store records in $XDG_CACHE_HOME/dkb, and with
 * no writable place at all is verified at every open; a file changed in
 * the clock tick of the open is not recorded. */
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#include "store/verify_cache.h"
#include "test_store_util.h"

static const size_t sizes[] = {10, 20};
static const int ends[] = {1, 0};

static char *make_store(const char *root, const char *name) {
    char *dir = join(root, name);
    dkb_error err = {0};
    if (write_li_store(dir, 0.01, sizes, ends, 2, 1, &err) != 0) {
        fprintf(stderr, "cannot write test store: %s\n", err.msg);
        exit(2);
    }
    return dir;
}

/* ---- waiting out the clock tick of the last change ---- */

static struct timespec newest;

static int newest_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)p, (void)flag, (void)f;
    if (st->st_ctim.tv_sec > newest.tv_sec ||
        (st->st_ctim.tv_sec == newest.tv_sec && st->st_ctim.tv_nsec > newest.tv_nsec))
        newest = st->st_ctim;
    return 0;
}

/* Until the coarse clock is past every ctime under dir: an open from now
 * on may record its pass (verify_cache.h). */
static void settle(const char *dir) {
    newest = (struct timespec){0, 0};
    nftw(dir, newest_entry, 16, FTW_PHYS);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (now.tv_sec > newest.tv_sec || (now.tv_sec == newest.tv_sec && now.tv_nsec > newest.tv_nsec)) break;
        usleep(500);
    }
}

/* Open dir, verify at level, close. */
static int vc(const char *dir, dkb__verify_level level, dkb__verify_info *info, dkb_error *err) {
    memset(err, 0, sizeof *err);
    return dkb__store_verify_dir(dir, level, info, err);
}

static void poke(const char *path, long at, unsigned char v, unsigned char *old) {
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0, "%s", path);
    if (fd < 0) return;
    if (old) CHECK(pread(fd, old, 1, at) == 1);
    CHECK(pwrite(fd, &v, 1, at) == 1);
    close(fd);
}

static void spit(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(text, 1, len, f) == len);
    fclose(f);
}

/* ---- tests ---- */

static void test_record(const char *root) {
    dkb_error err;
    dkb__verify_info vi;
    char *dir = make_store(root, "rec"), *rec = join(dir, DKB__VERIFY_RECORD);
    settle(dir);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0, "%s", err.msg);
    CHECK(!vi.cached && vi.recorded && vi.level == DKB__VERIFY_FULL, "cached %d recorded %d note %s", vi.cached,
          vi.recorded, vi.note);
    CHECK(!strcmp(vi.path, rec), "path %s", vi.path);
    CHECK(vi.nfiles == 21, "%d files", vi.nfiles);   /* 16 columns, 4 dictionaries, 1 text */
    size_t len;
    char *text = slurp(rec, &len);
    CHECK(text && !strncmp(text, "dkb-store-verified 1\nlevel full\nstore /", 39), "record: %.60s", text ? text : "");
    CHECK(text && strstr(text, "\nfile lineitem/l_shipdate.i32 dev "), "record lacks l_shipdate");
    free(text);

    /* a second open reads nothing; the record stands for the structure too */
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && vi.cached && !vi.recorded && vi.seconds == 0);
    CHECK(!strcmp(vi.path, rec));
    CHECK(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err) == 0 && vi.cached);

    /* a touch (same contents) makes it stale; the new pass is recorded again */
    char *ship = join(dir, "lineitem/l_shipdate.i32");
    CHECK(utimensat(AT_FDCWD, ship, NULL, 0) == 0);
    settle(dir);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && !vi.cached && vi.recorded);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && vi.cached);

    /* a changed byte: refused, and refused again (nothing recorded); the
     * structure alone passes and its record does not stand for full */
    unsigned char old;
    poke(ship, 5, 0x5a, &old);
    settle(dir);
    CHECK_ERR(vc(dir, DKB__VERIFY_FULL, &vi, &err), DKB_ECORRUPT, err, "/lineitem/l_shipdate.i32: crc32 mismatch (file 0x");
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK_ERR(vc(dir, DKB__VERIFY_FULL, &vi, &err), DKB_ECORRUPT, err, "l_shipdate.i32: crc32 mismatch");
    CHECK(!vi.cached && !vi.recorded);
    CHECK(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err) == 0 && !vi.cached && vi.recorded);
    CHECK(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err) == 0 && vi.cached);
    CHECK_ERR(vc(dir, DKB__VERIFY_FULL, &vi, &err), DKB_ECORRUPT, err, "l_shipdate.i32: crc32 mismatch");
    poke(ship, 5, old, NULL);
    settle(dir);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && !vi.cached && vi.recorded, "%s", err.msg);

    /* a file replaced by a copy (new inode) */
    char *tmp = join(dir, "lineitem/l_tax.i64.new"), *tax = join(dir, "lineitem/l_tax.i64");
    text = slurp(tax, &len);
    spit(tmp, text, len);
    free(text);
    CHECK(rename(tmp, tax) == 0);
    settle(dir);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && !vi.cached && vi.recorded);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && vi.cached);

    /* the manifest rewritten with the same text */
    char *man = join(dir, "manifest.json");
    text = slurp(man, &len);
    spit(man, text, len);
    free(text);
    settle(dir);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && !vi.cached && vi.recorded);

    /* a record that is not one (garbage, wrong level word) is ignored and replaced */
    const char *junk = "dkb-store-verified 1\nlevel everything\n";
    spit(rec, junk, strlen(junk));
    CHECK(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err) == 0 && !vi.cached && vi.recorded);
    CHECK(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err) == 0 && vi.cached);
    free(man);
    free(tmp);
    free(tax);
    free(ship);
    free(rec);
    free(dir);
}

static void test_structure(const char *root) {
    dkb_error err;
    dkb__verify_info vi;
    char *dir = make_store(root, "structure"), *rec = join(dir, DKB__VERIFY_RECORD);
    dkb_store *s;
    CHECK(dkb_store_open(dir, 0, &s, &err) == 0);
    CHECK(dkb_store_check_structure(s, &err) == 0, "%s", err.msg);
    dkb_store_close(s);
    CHECK(dkb_store_check_structure(NULL, &err) == DKB_EINVAL);

    /* offset 5 past offset 6: the structure check names row and values, before the crc */
    char *off = join(dir, "lineitem/l_comment.off");
    int fd = open(off, O_RDWR);
    int64_t o[7];
    CHECK(fd >= 0 && pread(fd, o, sizeof o, 0) == (ssize_t)sizeof o);
    int64_t bad = o[6] + 3;
    CHECK(pwrite(fd, &bad, sizeof bad, 5 * 8) == (ssize_t)sizeof bad);
    close(fd);
    char want[128];
    snprintf(want, sizeof want, "/lineitem/l_comment.off: row 5: text offset %lld decreases to %lld", (long long)bad,
             (long long)o[6]);
    CHECK_ERR(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err), DKB_ECORRUPT, err, want);
    CHECK_ERR(vc(dir, DKB__VERIFY_FULL, &vi, &err), DKB_ECORRUPT, err, want);
    CHECK(!exists(rec), "a corrupt store was recorded");
    free(off);
    free(dir);
    free(rec);

    /* a code past the dictionary */
    dir = make_store(root, "codes");
    rec = join(dir, DKB__VERIFY_RECORD);
    char *codes = join(dir, "lineitem/l_shipmode.u8");
    poke(codes, 7, 0xee, NULL);
    CHECK_ERR(vc(dir, DKB__VERIFY_STRUCTURE, &vi, &err), DKB_ECORRUPT, err,
              "/lineitem/l_shipmode.u8: row 7: code 238 is not below the dictionary size 7");
    CHECK(!exists(rec), "a corrupt store was recorded");
    free(codes);
    free(rec);
    free(dir);
}

/* A file changed in the clock tick of the open: verified, not recorded. */
static void test_too_young(const char *root) {
    dkb_error err;
    dkb__verify_info vi;
    char *dir = make_store(root, "young"), *rec = join(dir, DKB__VERIFY_RECORD);
    char *tax = join(dir, "lineitem/l_tax.i64");
    int young = 0;
    for (int i = 0; i < 100 && !young; i++) {
        unlink(rec);
        CHECK(utimensat(AT_FDCWD, tax, NULL, 0) == 0);
        CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && !vi.cached);
        if (!vi.recorded) {
            young = 1;
            CHECK(strstr(vi.note, "clock tick") != NULL, "note: %s", vi.note);
            CHECK(!exists(rec));
        }
    }
    CHECK(young, "100 opens right after a touch were all recorded");
    free(tax);
    free(rec);
    free(dir);
}

/* In a child process: make dir read-only (a read-only bind mount in a private
 * mount namespace, or without privileges chmod), then check where the
 * records go. Exit 77 when neither is possible (root without the right
 * to mount: chmod does not stop root). */
static int read_only_child(const char *root, const char *dir) {
    int ro = unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
             mount(dir, dir, NULL, MS_BIND, NULL) == 0 &&
             mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0;
    if (!ro && geteuid() != 0) ro = chmod(dir, 0555) == 0;
    if (!ro) return 77;
    dkb_error err;
    dkb__verify_info vi;
    char *xdg = join(root, "xdg"), *rec = join(dir, DKB__VERIFY_RECORD), *want = join(xdg, "dkb/verified-");
    setenv("XDG_CACHE_HOME", xdg, 1);
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0, "%s", err.msg);
    CHECK(!vi.cached && vi.recorded && !strncmp(vi.path, want, strlen(want)), "path %s note %s", vi.path, vi.note);
    CHECK(!exists(rec));
    CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0 && vi.cached && !strncmp(vi.path, want, strlen(want)));
    /* nowhere to write: verified every time, and said so */
    char *inside = join(dir, "xdg");
    setenv("XDG_CACHE_HOME", inside, 1);
    unsetenv("HOME");
    for (int i = 0; i < 2; i++) {
        CHECK(vc(dir, DKB__VERIFY_FULL, &vi, &err) == 0, "%s", err.msg);
        CHECK(!vi.cached && !vi.recorded && strstr(vi.note, "not recorded") && strstr(vi.note, "every open"),
              "note %s", vi.note);
    }
    chmod(dir, 0755);
    free(inside);
    free(want);
    free(rec);
    free(xdg);
    return failures ? 1 : 0;
}

/* Whether the read-only part was skipped (main then exits 77, which CTest
 * reports as skipped, never as passed). */
static bool test_read_only(const char *root) {
    char *dir = make_store(root, "ro");
    settle(dir);
    fflush(stdout);
    fflush(stderr);
    /* a fresh process: OpenMP's threads do not survive a fork */
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_store_verify_cache", "--read-only-child", root, dir, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    bool skipped = WIFEXITED(st) && WEXITSTATUS(st) == 77;
    if (skipped) printf("skipped the read-only store (root without the right to mount)\n");
    else CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "read-only child: status %d", st);
    free(dir);
    return skipped;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--read-only-child")) return read_only_child(argv[2], argv[3]);
    char *root = make_tmpdir();
    test_record(root);
    test_structure(root);
    test_too_young(root);
    bool skipped = test_read_only(root);
    rm_tree(root);
    free(root);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("ok\n");
    return failures ? 1 : skipped ? 77 : 0;
}
