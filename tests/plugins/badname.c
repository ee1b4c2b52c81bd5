/* badname.c - a test plugin whose name has a space and a capital: the loader must refuse it. */
#include "tp_common.h"

TP_BACKEND("Tp Badname", PAR_BACKEND_API_VERSION, tp_run_ok, NULL)
