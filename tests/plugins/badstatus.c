/* badstatus.c - a test plugin whose run returns 77, which is no par_status: ERROR naming the value. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)prepared;
    (void)msg;
    return (par_status)77;
}

TP_BACKEND("tp_badstatus", PAR_BACKEND_API_VERSION, run, NULL)
