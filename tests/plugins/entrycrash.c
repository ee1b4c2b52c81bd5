/* entrycrash.c - a test plugin whose entry function crashes (SIGSEGV): refused with the signal. (raise, not a null
 * pointer write, so that the undefined-behaviour sanitizer does not turn it into an abort.) */
#include "tp_common.h"

#include <signal.h>

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    raise(SIGSEGV);
    return NULL;
}
