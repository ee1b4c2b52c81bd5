/* entrycrash.c - a test plugin whose entry function crashes (a null pointer write): refused with the signal. */
#include "tp_common.h"

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    volatile int *volatile nowhere = NULL;
    (void)harness_api_version;
    *nowhere = 1;
    return NULL;
}
