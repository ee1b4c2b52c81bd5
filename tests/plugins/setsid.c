/* setsid.c - a correct relu that, on its first run, leaves a daemon behind: a child that calls setsid() (leaving
 * the process group) and forks a grandchild that waits forever, then exits. The grandchild's pid goes to the file
 * of the knob pidfile=PATH. The harness must kill it when the job ends. */
#define _GNU_SOURCE
#include "tp_common.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static char pidfile[256];

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    (void)ctx;
    if (strcmp(key, "pidfile") != 0) return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (known: pidfile)", key);
    snprintf(pidfile, sizeof pidfile, "%s", value);
    return PAR_OK;
}

static void *get_proc(void *ctx, const char *name)
{
    (void)ctx;
    return strcmp(name, PAR_PROC_SET_KNOB) == 0 ? (void *)set_knob : NULL;
}

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    static int started;
    if (!started++) {
        int fds[2];
        if (pipe(fds) != 0) return par_msgf(msg, PAR_ERROR, "pipe");
        pid_t mid = fork();
        if (mid == 0) {
            setsid();
            pid_t g = fork();
            if (g == 0) {
                for (;;) pause();
            }
            ssize_t w = write(fds[1], &g, sizeof g);
            (void)w;
            _exit(0);
        }
        pid_t g = -1;
        ssize_t r = read(fds[0], &g, sizeof g);
        (void)r;
        waitpid(mid, NULL, 0);
        close(fds[0]);
        close(fds[1]);
        FILE *f = pidfile[0] ? fopen(pidfile, "w") : NULL;
        if (f) {
            fprintf(f, "%d\n", (int)g);
            fclose(f);
        }
    }
    return tp_run_ok(ctx, prepared, msg);
}

TP_BACKEND("tp_setsid", PAR_BACKEND_API_VERSION, run, get_proc)
