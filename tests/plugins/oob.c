/* oob.c - a test plugin that writes one f32 element past the end of its output: FAIL, out-of-bounds write. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n);
    p->out[p->n] = 0.0f;
    return PAR_OK;
}

TP_BACKEND("tp_oob", PAR_BACKEND_API_VERSION, run, NULL)
