/*
 * log.c - the simulated NNAPI library's one-line diagnostics: every refused call logs "nnapi-sim: FUNC: reason" to
 * stderr (as Android logs to logcat) unless PARITY_NNAPI_LOG=0, and keeps the line as this thread's last error for
 * parity_nnapi_sim_last_error(). Informational lines (the partition) only when their variable is set.
 * Must not decide anything: callers pick the result code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnsim.h"
#include "parity_nnapi_sim.h"

static _Thread_local char last_error[256];

static int env_on(const char *var, int dflt)
{
    const char *v = getenv(var);
    if (!v || !*v) return dflt;
    return strcmp(v, "0") != 0;
}

int nn_err(int code, const char *func, const char *fmt, ...)
{
    char reason[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    snprintf(last_error, sizeof last_error, "%s: %s", func, reason);
    if (env_on("PARITY_NNAPI_LOG", 1)) fprintf(stderr, "nnapi-sim: %s\n", last_error);
    return code;
}

void nn_info(const char *var, const char *fmt, ...)
{
    if (!env_on(var, 0)) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("nnapi-sim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *parity_nnapi_sim_last_error(void)
{
    return last_error;
}

void parity_nnapi_sim_clear_error(void)
{
    last_error[0] = 0;
}
