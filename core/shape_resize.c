/*
 * shape_resize.c - output sizes and shape inference of upsample_nearest2d and upsample_bilinear2d (docs/ops.md,
 * "Resampling"): exactly one of size and scale, each output size in [1, 2^28]. The reference kernels
 * (reference/resize.c) take their sizes from the same function. It must not compute any value.
 */
#include "shape_util.h"

#include <math.h>

/* The output size of one spatial axis and whether size or scale defines it. */
par_status par_resize_sizes(const par_node *n, const int64_t *in_hw, int64_t *out_hw, double *scale, par_msg *msg)
{
    int32_t ns = par_attr_count(n, "size"), nf = par_attr_count(n, "scale");
    if ((ns > 0) == (nf > 0))
        return par_msgf(msg, PAR_ERROR, "attributes 'size' and 'scale': exactly one must be given (got %s)",
                        ns > 0 ? "both" : "neither");
    if (ns > 0) {
        if (ns != 2) return par_msgf(msg, PAR_ERROR, "attribute 'size': %d elements, expected 2 ([OH, OW])", (int)ns);
        for (int32_t i = 0; i < 2; i++) {
            out_hw[i] = par_attr_ints_at(n, "size", i, 0);
            if (out_hw[i] < 1 || out_hw[i] > PAR_SHAPE_DIM_MAX)
                return par_msgf(msg, PAR_ERROR, "attribute 'size': element %d is %lld, must be in [1, 2^28]", (int)i,
                                (long long)out_hw[i]);
            scale[i] = 0;
        }
        return PAR_OK;
    }
    if (nf != 2) return par_msgf(msg, PAR_ERROR, "attribute 'scale': %d elements, expected 2 ([sh, sw])", (int)nf);
    for (int32_t i = 0; i < 2; i++) {
        scale[i] = par_attr_floats_at(n, "scale", i, 0);
        if (!(scale[i] > 0) || !isfinite(scale[i]))
            return par_msgf(msg, PAR_ERROR, "attribute 'scale': element %d is %g, must be finite and > 0", (int)i,
                            scale[i]);
        double o = floor((double)in_hw[i] * scale[i]);
        if (o < 1 || o > (double)PAR_SHAPE_DIM_MAX)
            return par_msgf(msg, PAR_ERROR, "attribute 'scale': element %d (%g) gives output size %.0f from %lld, "
                            "must be in [1, 2^28]", (int)i, scale[i], o, (long long)in_hw[i]);
        out_hw[i] = (int64_t)o;
    }
    return PAR_OK;
}

par_status par_infer_upsample2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0);
    if (!x) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    if (x->rank != 4) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected 4 ([N,C,H,W])", (int)x->rank);
    if (par_node_attr(n, "align_corners")) {
        int64_t ac = par_attr_int(n, "align_corners", 0);
        if (ac != 0 && ac != 1)
            return par_msgf(msg, PAR_ERROR, "attribute 'align_corners': %lld, must be 0 or 1", (long long)ac);
    }
    int64_t ohw[2];
    double sc[2];
    par_status st = par_resize_sizes(n, x->dims + 2, ohw, sc, msg);
    if (st != PAR_OK) return st;
    outs[0].rank = 4;
    outs[0].dims[0] = x->dims[0];
    outs[0].dims[1] = x->dims[1];
    outs[0].dims[2] = ohw[0];
    outs[0].dims[3] = ohw[1];
    outs[0].numel = par_shape_numel(4, outs[0].dims);
    return PAR_OK;
}
