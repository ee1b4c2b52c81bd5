/* badutf8.c - a test plugin whose describe text and run message are not valid UTF-8 (and hold a control character):
 * the harness must clean every string that comes from a backend before it reaches a report or a terminal. Its
 * run fails with PAR_ERROR. */
#include "tp_common.h"

static size_t describe(void *ctx, char *buf, size_t len)
{
    static const char text[] = "mode=\xff\xfe;bad=\xc3(";
    (void)ctx;
    if (len >= sizeof text) memcpy(buf, text, sizeof text);
    return sizeof text - 1;
}

static void *get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)describe;
    return NULL;
}

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)prepared;
    return par_msgf(msg, PAR_ERROR, "broken \xe2\x82 text\x1b[31m red");
}

TP_BACKEND("tp_badutf8", PAR_BACKEND_API_VERSION, run, get_proc)
