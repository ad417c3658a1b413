/* fsutil.c: file-system helpers for the store writer and reader. */
#include "common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dkb__io_fail(dkb_error *err, const char *path, const char *what) {
    int e = errno;
    return dkb_fail(err, dkb_errno_code(e), "%s: %s: %s", path, what, strerror(e));
}

int dkb__write_all(int fd, const void *buf, size_t len, const char *path, dkb_error *err) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return dkb__io_fail(err, path, "write failed");
        }
        if (n == 0) {
            errno = ENOSPC;
            return dkb__io_fail(err, path, "write failed");
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int dkb__pwrite_all(int fd, const void *buf, size_t len, off_t at, const char *path,
                    dkb_error *err) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, at);
        if (n < 0) {
            if (errno == EINTR) continue;
            return dkb__io_fail(err, path, "write failed");
        }
        if (n == 0) {
            errno = ENOSPC;
            return dkb__io_fail(err, path, "write failed");
        }
        p += n;
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

int dkb__pread_all(int fd, void *buf, size_t len, off_t at, const char *path, dkb_error *err) {
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, at);
        if (n < 0) {
            if (errno == EINTR) continue;
            return dkb__io_fail(err, path, "read failed");
        }
        if (n == 0) return dkb_fail(err, DKB_ECORRUPT, "%s: unexpected end of file", path);
        p += n;
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

int dkb__fsync_dir(const char *path, dkb_error *err) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return dkb__io_fail(err, path, "open failed");
    int rc = 0;
    if (fsync(fd) != 0 && errno != EINVAL) rc = dkb__io_fail(err, path, "fsync failed");
    close(fd);
    return rc;
}

int dkb__write_file_atomic(const char *dir, const char *name, const char *buf, size_t len, dkb_error *err) {
    char path[4096], tmp[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid()) >= sizeof tmp)
        return dkb_fail(err, DKB_EINVAL, "%s: path too long", dir);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return dkb__io_fail(err, tmp, "cannot create");
    int rc = dkb__write_all(fd, buf, len, tmp, err);
    if (!rc && fsync(fd) != 0) rc = dkb__io_fail(err, tmp, "fsync failed");
    if (close(fd) != 0 && !rc) rc = dkb__io_fail(err, tmp, "close failed");
    if (!rc && rename(tmp, path) != 0) rc = dkb__io_fail(err, path, "rename failed");
    if (rc) unlink(tmp);
    else dkb__fsync_dir(dir, NULL);
    return rc;
}

int dkb__mkdir_p(const char *path, dkb_error *err) {
    size_t n = strlen(path);
    char *p = malloc(n + 1);
    if (!p) return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", path);
    memcpy(p, path, n + 1);
    int rc = 0;
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char save = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) rc = dkb__io_fail(err, p, "mkdir failed");
        p[i] = save;
    }
    free(p);
    return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    int rc = (flag == FTW_DP) ? rmdir(path) : unlink(path);
    return rc != 0 && errno != ENOENT ? -1 : 0;
}

int dkb__rm_rf(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int dkb__path_kind(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT ? DKB__PATH_MISSING : DKB__PATH_OTHER;
    if (!S_ISDIR(st.st_mode)) return DKB__PATH_OTHER;
    DIR *d = opendir(path);
    if (!d) return DKB__PATH_DIR;
    int kind = DKB__PATH_EMPTY_DIR;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            kind = DKB__PATH_DIR;
            break;
        }
    closedir(d);
    return kind;
}

char *dkb__path_join(const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    char *p = malloc(na + nb + 2);
    if (!p) return NULL;
    if (na == 0) {
        memcpy(p, b, nb + 1);
        return p;
    }
    memcpy(p, a, na);
    size_t at = na;
    if (a[na - 1] != '/') p[at++] = '/';
    memcpy(p + at, b, nb + 1);
    return p;
}

int dkb__read_file(const char *path, size_t max, char **out, size_t *len, dkb_error *err) {
    return dkb__read_file_st(path, max, out, len, NULL, err);
}

int dkb__read_file_st(const char *path, size_t max, char **out, size_t *len, struct stat *st_out, dkb_error *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return dkb__io_fail(err, path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = dkb__io_fail(err, path, "stat failed");
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
        close(fd);
        return dkb_fail(err, DKB_ECORRUPT, "%s: not a regular file of at most %zu bytes", path, max);
    }
    if (st_out) *st_out = st;
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return dkb_fail(err, DKB_ENOMEM, "%s: out of memory", path);
    }
    int rc = dkb__pread_all(fd, buf, n, 0, path, err);
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int dkb__copy_file(const char *from, const char *to, dkb_error *err) {
    FILE *in = fopen(from, "rb");
    if (!in) return dkb_fail(err, dkb_errno_code(errno), "cannot open %s: %s", from, strerror(errno));
    FILE *out = fopen(to, "wb");
    if (!out) {
        fclose(in);
        return dkb_fail(err, dkb_errno_code(errno), "cannot create %s: %s", to, strerror(errno));
    }
    char buf[65536];
    size_t got;
    int bad = 0;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, got, out) != got) bad = 1;
    if (ferror(in)) bad = 1;
    fclose(in);
    if (fclose(out) != 0) bad = 1;
    return bad ? dkb_fail(err, DKB_EIO, "cannot copy %s to %s", from, to) : 0;
}

int dkb__self_exe(char *buf, size_t cap) {
    if (cap < 2) return -1;
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0 || (size_t)n >= cap - 1) return -1;
    buf[n] = 0;
    return 0;
}
