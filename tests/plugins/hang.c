/* hang.c - a test plugin whose run() never returns (a busy loop): the case must end as TIMEOUT. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)prepared;
    (void)msg;
    volatile unsigned long spin = 0;
    for (;;) spin++;
    return PAR_OK;
}

TP_BACKEND("tp_hang", PAR_BACKEND_API_VERSION, run, NULL)
