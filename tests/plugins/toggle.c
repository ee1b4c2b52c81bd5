/* toggle.c - a test plugin that, after a correct relu, flips the bits of the byte just past its output on every
 * run: over an even number of runs the flips cancel out, so only a check after every run sees them. FAIL. */
#include "tp_common.h"

#include <stdint.h>

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n);
    ((uint8_t *)p->out)[p->n * (int64_t)sizeof(float)] ^= 0x5A;
    return PAR_OK;
}

TP_BACKEND("tp_toggle", PAR_BACKEND_API_VERSION, run, NULL)
