/*
 * repro.c - the standalone C program that reproduces a finding (reduce.h, par_repro_write_c).
 */
#include "reduce.h"

par_status par_repro_write_c(const par_case *c, const par_backend_inst *inst, const double *const *ref_values,
                             const char *path, par_msg *msg)
{
    (void)c;
    (void)inst;
    (void)ref_values;
    return par_msgf(msg, PAR_ERROR, "%s: the C repro is not written yet", path);
}
