/* unwritten.c - a test plugin that never writes the last element of its output: FAIL, element never written. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n - 1);
    return PAR_OK;
}

TP_BACKEND("tp_unwritten", PAR_BACKEND_API_VERSION, run, NULL)
