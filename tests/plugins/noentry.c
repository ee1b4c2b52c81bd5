/* noentry.c - a test plugin that exports a table under a wrong symbol name: the loader must refuse it. */
#include "tp_common.h"

const par_backend *parity_backend_entry_v1(uint32_t harness_api_version);

static const par_backend table = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tp_noentry",
    .init = tp_init, .destroy = tp_destroy, .prepare = tp_prepare, .bind = tp_bind, .run = tp_run_ok,
    .release = tp_release};

const par_backend *parity_backend_entry_v1(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &table;
}
