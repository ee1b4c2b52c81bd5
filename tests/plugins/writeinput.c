/* writeinput.c - a test plugin that negates element 0 of its input after computing: FAIL, wrote into input 0. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n);
    float *in = (float *)(uintptr_t)p->in;
    in[0] = -in[0];
    return PAR_OK;
}

TP_BACKEND("tp_writeinput", PAR_BACKEND_API_VERSION, run, NULL)
