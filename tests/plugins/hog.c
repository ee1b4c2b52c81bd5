/* hog.c - a test plugin whose run allocates and touches memory in 16 MiB steps, up to 2 GiB, and keeps it: the
 * harness's memory limit must stop it (CRASH: out of memory). */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    for (int i = 0; i < 128; i++) {
        char *p = malloc((size_t)16 << 20);
        if (!p) break;
        memset(p, i + 1, (size_t)16 << 20);
    }
    return tp_run_ok(ctx, prepared, msg);
}

TP_BACKEND("tp_hog", PAR_BACKEND_API_VERSION, run, NULL)
