/* forks.c - a correct relu plugin whose run() leaves a forked process behind that never exits: the case must still
 * PASS at once (the harness must not wait for the straggler) and the straggler must be killed with the case. */
#define _POSIX_C_SOURCE 200809L /* fork, pause under -std=c11 */
#include "tp_common.h"

#include <unistd.h>

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    if (p->runs++ == 0) {
        pid_t pid = fork();
        if (pid < 0) return par_msgf(msg, PAR_ERROR, "fork failed");
        if (pid == 0)
            for (;;) pause();
    }
    tp_relu(p, p->n);
    return PAR_OK;
}

TP_BACKEND("tp_forks", PAR_BACKEND_API_VERSION, run, NULL)
