/*
 * paths.c - the folders of paths.h, found once (the first call; thread-safe after it) from /proc/self/exe.
 */
#include "paths.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PAR_PREFIX_DIR
#define PAR_PREFIX_DIR "/usr/local"
#endif

static char exe_dir[PATH_MAX], build_dir[PATH_MAX], tree_dir[PATH_MAX], prefix_dir[PATH_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int exists(const char *dir, const char *rel)
{
    char p[PATH_MAX + 64];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

/* dir's parent, resolved (no ".."), into out. */
static void parent(const char *dir, char *out, size_t len)
{
    char p[PATH_MAX + 4], real[PATH_MAX];
    snprintf(p, sizeof p, "%s/..", dir);
    snprintf(out, len, "%s", realpath(p, real) ? real : "");
}

static void find(void)
{
    ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
    exe_dir[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe_dir, '/');
    if (slash) *slash = 0;
    else exe_dir[0] = 0;
    char up[PATH_MAX];
    parent(exe_dir, up, sizeof up);
    if (exe_dir[0] && exists(exe_dir, "libparity.a")) snprintf(build_dir, sizeof build_dir, "%s", exe_dir);
    else if (up[0] && exists(up, "libparity.a")) snprintf(build_dir, sizeof build_dir, "%s", up);
    if (build_dir[0]) {
        /* the tree holds the build folder: build/, or a variant below it (build/san, build/aarch64, ...) */
        char t[PATH_MAX], u[PATH_MAX];
        snprintf(t, sizeof t, "%s", build_dir);
        for (int level = 0; level < 3 && !tree_dir[0]; level++) {
            parent(t, u, sizeof u);
            if (!u[0] || strcmp(u, t) == 0) break;
            if (exists(u, "core/parity_backend.h")) snprintf(tree_dir, sizeof tree_dir, "%s", u);
            snprintf(t, sizeof t, "%s", u);
        }
    }
    if (!build_dir[0] && up[0] && (exists(up, "share/parity") || exists(up, "include/parity")))
        snprintf(prefix_dir, sizeof prefix_dir, "%s", up);
    else snprintf(prefix_dir, sizeof prefix_dir, "%s", PAR_PREFIX_DIR);
}

const char *par_exe_dir(void)
{
    pthread_once(&once, find);
    return exe_dir;
}

const char *par_build_dir(void)
{
    pthread_once(&once, find);
    return build_dir;
}

const char *par_tree_dir(void)
{
    pthread_once(&once, find);
    return tree_dir;
}

const char *par_prefix_dir(void)
{
    pthread_once(&once, find);
    return prefix_dir;
}
