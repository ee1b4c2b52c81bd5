/* segv.c - a test plugin whose run() dereferences an invalid pointer: the case must end as CRASH (signal 11). */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)prepared;
    (void)msg;
    volatile float *volatile bad = NULL; /* volatile twice: the compiler can neither see NULL nor drop the store */
    *bad = 1.0f;
    return PAR_OK;
}

TP_BACKEND("tp_segv", PAR_BACKEND_API_VERSION, run, NULL)
