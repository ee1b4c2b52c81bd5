/* ctorcrash.c - a test plugin that crashes in its constructor, when it is opened: the harness must open plugins in
 * a child first and refuse this one with the signal, not die of it. */
#include "tp_common.h"

#include <signal.h>

__attribute__((constructor)) static void boom(void)
{
    raise(SIGSEGV);
}

TP_BACKEND("tp_ctorcrash", PAR_BACKEND_API_VERSION, tp_run_ok, NULL)
