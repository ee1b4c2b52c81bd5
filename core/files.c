/*
 * files.c - folders made with their parents, files written atomically (files.h).
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int par_mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *q = buf + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *q = '/';
    }
    return (mkdir(buf, 0777) == 0 || errno == EEXIST) && is_dir(buf) ? 0 : -1;
}

int par_write_bytes_atomic(const char *path, const void *data, size_t len, par_msg *msg)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        return -1;
    }
    const char *bytes = data;
    size_t n = len, off = 0;
    int err = 0;
    while (off < n && !err) {
        ssize_t w = write(fd, bytes + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) err = errno ? errno : EIO;
        else off += (size_t)w;
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) {
        unlink(tmp);
        par_msgf(msg, PAR_ERROR, "%s: cannot write: %s", path, strerror(err));
        return -1;
    }
    return 0;
}

int par_write_file_atomic(const char *path, const char *text, par_msg *msg)
{
    return par_write_bytes_atomic(path, text, strlen(text), msg);
}

