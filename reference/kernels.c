/*
 * kernels.c - the table of reference kernels, expanded from the ref column of core/ops.def (par_ref_kernel). It
 * names every kernel and must not hold any op's arithmetic.
 */
#include "reference.h"

static const par_ref_fn kernels[PAR_OP_COUNT] = {
#define PAR_OP(id, name, in_min, in_max, n_out, flags, qform, schema, infer, ref, sweep) [PAR_OP_##id] = ref,
#include "core/ops.def"
#undef PAR_OP
};

par_ref_fn par_ref_kernel(par_op_id id)
{
    return ((int)id >= 0 && id < PAR_OP_COUNT) ? kernels[id] : NULL;
}
