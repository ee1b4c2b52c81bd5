/* norun.c - a test plugin whose table has no run(): the loader must refuse it. */
#include "tp_common.h"

TP_BACKEND("tp_norun", PAR_BACKEND_API_VERSION, NULL, NULL)
