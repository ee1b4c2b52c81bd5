/* underrun.c - a test plugin that writes one f32 element before the start of its output: FAIL, out-of-bounds. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n);
    p->out[-1] = 0.0f;
    return PAR_OK;
}

TP_BACKEND("tp_underrun", PAR_BACKEND_API_VERSION, run, NULL)
