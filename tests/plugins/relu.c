/* relu.c - a correct test plugin: f32 relu, with one knob (mode=exact|fast, only reported) and a description. */
#include "tp_common.h"

static char mode[16] = "exact";

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    (void)ctx;
    if (strcmp(key, "mode") != 0) return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (known: mode)", key);
    if (strcmp(value, "exact") != 0 && strcmp(value, "fast") != 0)
        return par_msgf(msg, PAR_ERROR, "mode must be exact or fast, not '%s'", value);
    strcpy(mode, value);
    return PAR_OK;
}

static size_t describe(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    return (size_t)snprintf(buf, len, "mode=%s", mode);
}

static void *get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)describe;
    return NULL;
}

TP_BACKEND("tp_relu", PAR_BACKEND_API_VERSION, tp_run_ok, get_proc)
