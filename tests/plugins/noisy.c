/* noisy.c - a correct relu that writes 1 MiB of text to stdout and a line to stderr on every run: the harness must
 * capture a backend's output (keeping a bounded tail), never pass it to its own terminal. PASS. */
#include "tp_common.h"

#include <stdio.h>

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    static char block[1024];
    if (!block[0]) {
        memset(block, 'x', sizeof block - 1);
        block[sizeof block - 1] = '\n';
    }
    for (int i = 0; i < 1024; i++) fwrite(block, 1, sizeof block, stdout);
    fflush(stdout);
    fputs("noisy: run done\n", stderr);
    return tp_run_ok(ctx, prepared, msg);
}

TP_BACKEND("tp_noisy", PAR_BACKEND_API_VERSION, run, NULL)
