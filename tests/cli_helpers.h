/*
 * cli_helpers.h - shared by the tests that drive build/parity as a program (test_cli, test_ties, test_winograd):
 * where the executable is (found from the test's own path, build/tests/<test>), a scratch folder per test program,
 * and a shell runner that captures the output (left out with PAR_CLI_NO_SH). Everything is static, so each test program has its own copy.
 *
 * It must not hold test logic or expectations of its own.
 */
#ifndef PAR_TESTS_CLI_HELPERS_H
#define PAR_TESTS_CLI_HELPERS_H

#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char exe[PATH_MAX], build_dir[PATH_MAX], tmp_dir[PATH_MAX];

#ifndef PAR_CLI_NO_SH /* a test that runs commands its own way defines this */
static char out[1 << 16]; /* the output of the last sh() */

/* Run a shell command line; captures stdout and stderr into out; returns the exit code (-1 when it did not exit). */
__attribute__((format(printf, 1, 2), unused)) static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[8400];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
#endif

/* Set exe (build/parity beside build/tests/) and make tmp_dir, /tmp/parity_<tag>.XXXXXX (/tmp when that fails). */
static void cli_locate(const char *tag)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    snprintf(build_dir, sizeof build_dir, "%s", dirname(dirname(self)));
    snprintf(exe, sizeof exe, "%s/parity", build_dir);
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/parity_%s.XXXXXX", tag);
    if (!mkdtemp(tmp_dir)) snprintf(tmp_dir, sizeof tmp_dir, "/tmp");
}

/* One line in a test file: locate everything before main runs. */
#define PAR_CLI_LOCATE(tag) \
    __attribute__((constructor)) static void locate(void) { cli_locate(tag); }

#endif
