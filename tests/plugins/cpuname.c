/* cpuname.c - a correct relu plugin that calls itself "cpu", the name of a built-in backend: a usage error. */
#include "tp_common.h"

TP_BACKEND("cpu", PAR_BACKEND_API_VERSION, tp_run_ok, NULL)
