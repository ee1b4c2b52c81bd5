/* badversion.c - a test plugin built against a future backend API version (3): the loader must refuse it. */
#include "tp_common.h"

TP_BACKEND("tp_badversion", PAR_BACKEND_API_VERSION + 1, tp_run_ok, NULL)
