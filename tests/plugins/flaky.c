/* flaky.c - a test plugin whose output differs in the last bit of element 1 on every run: FLAKY. */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n);
    uint32_t bits;
    memcpy(&bits, &p->out[1], sizeof bits);
    bits += ++p->runs;
    memcpy(&p->out[1], &bits, sizeof bits);
    return PAR_OK;
}

TP_BACKEND("tp_flaky", PAR_BACKEND_API_VERSION, run, NULL)
