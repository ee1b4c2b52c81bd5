/* segv.c - a test plugin whose run() dereferences an invalid pointer: the case must end as CRASH (signal 11). */
#include "tp_common.h"

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)prepared;
    (void)msg;
    /* An unmapped address that is not NULL (so that a sanitizer's null check does not end the process first);
     * volatile twice: the compiler can neither see the address nor drop the store. */
    volatile float *volatile bad = (volatile float *)(uintptr_t)64;
    *bad = 1.0f;
    return PAR_OK;
}

TP_BACKEND("tp_segv", PAR_BACKEND_API_VERSION, run, NULL)
