/* abiv1.c - a plugin as built against backend API version 1 (whose par_node still carried op_id): the loader must
 * refuse it with an error naming both versions, before any of its entry points is called. */
#include "tp_common.h"

TP_BACKEND("tp_abiv1", 1u, tp_run_ok, NULL)
