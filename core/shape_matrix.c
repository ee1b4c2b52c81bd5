/*
 * shape_matrix.c - shape inference of linear and matmul (docs/ops.md): contraction dimensions and the numpy
 * broadcasting of matmul's batch dimensions. The reference kernels (reference/matrix.c) check their output against
 * the same functions. It must not compute any value.
 */
#include "shape_util.h"

/* ---- linear: x [..., K], w [O, K], b [O] -> [..., O] ---------------------------------------------------------- */

par_status par_linear_shape(int32_t xr, const int64_t *xd, int32_t wr, const int64_t *wd, const int64_t *bd,
                               int32_t br, int32_t *yr, int64_t *yd, par_msg *msg)
{
    if (xr < 1) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected at least 1", (int)xr);
    if (wr != 2) return par_msgf(msg, PAR_ERROR, "input 1 (weight): rank %d, expected 2 ([O, K])", (int)wr);
    if (wd[1] != xd[xr - 1])
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): dims[1] is %lld, expected %lld (the last dim of x)",
                        (long long)wd[1], (long long)xd[xr - 1]);
    if (bd && (br != 1 || bd[0] != wd[0]))
        return par_msgf(msg, PAR_ERROR, "input 2 (bias): shape must be [%lld] (weight dims[0])", (long long)wd[0]);
    *yr = xr;
    for (int32_t i = 0; i < xr - 1; i++) yd[i] = xd[i];
    yd[xr - 1] = wd[0];
    return PAR_OK;
}

par_status par_infer_linear(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!x || !w) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    return par_linear_shape(x->rank, x->dims, w->rank, w->dims, b ? b->dims : NULL, b ? b->rank : 0, &outs[0].rank,
                        outs[0].dims, msg);
}

/* ---- linear_8da4w: x [..., K], packed int4 weight [O, K / 2] (qu8 bytes, read as the attributes w4, w4_zp and
 * nibbles declare: par_int4_form), block scales [O, K / block] ------------------------------------------------- */

par_status par_8da4w_shape(const par_graph_desc *g, const par_node *n, int32_t *yr, int64_t *yd, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *s = par_node_input(g, n, 2),
                    *b = par_node_input(g, n, 3);
    if (!x || !w || !s) return par_msgf(msg, PAR_ERROR, "inputs 0 (x), 1 (weight) and 2 (scales) are required");
    if (x->rank < 1) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected at least 1", (int)x->rank);
    const int64_t k = x->dims[x->rank - 1], blk = par_attr_int(n, "block", 32);
    if (k % 2) return par_msgf(msg, PAR_ERROR, "input 0 (x): K = %lld is odd (two int4 weights per byte)", (long long)k);
    if (blk < 2 || blk % 2 || k % blk)
        return par_msgf(msg, PAR_ERROR, "attribute block: %lld must be even, at least 2 and divide K = %lld",
                        (long long)blk, (long long)k);
    par_int4 f;
    if (!par_int4_form(n, &f))
        return par_msgf(msg, PAR_ERROR, "attribute w4_zp: %lld is outside the codes of w4 = %s ([%d, %d])",
                        (long long)par_attr_int(n, "w4_zp", 0), par_attr_str(n, "w4", "s4"), f.code_lo,
                        f.code_lo + 15);
    if (w->rank != 2 || w->dims[1] != k / 2)
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): shape must be [O, %lld] (K / 2 bytes per output channel)",
                        (long long)(k / 2));
    if (s->rank != 2 || s->dims[0] != w->dims[0] || s->dims[1] != k / blk)
        return par_msgf(msg, PAR_ERROR, "input 2 (scales): shape must be [%lld, %lld] (one per output channel and "
                        "block)", (long long)w->dims[0], (long long)(k / blk));
    if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
        return par_msgf(msg, PAR_ERROR, "input 3 (bias): shape must be [%lld] (weight dims[0])", (long long)w->dims[0]);
    *yr = x->rank;
    for (int32_t i = 0; i < x->rank - 1; i++) yd[i] = x->dims[i];
    yd[x->rank - 1] = w->dims[0];
    return PAR_OK;
}

par_status par_infer_linear_8da4w(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return par_8da4w_shape(g, n, &outs[0].rank, outs[0].dims, msg);
}

/* linear_16a4w: linear_8da4w's operands (its scales are the block multipliers with per-channel scales), qs16 x and
 * y; a shape function of its own so that the fuzz generator, which picks an op's builder by it, does not take it
 * for linear_8da4w. */
par_status par_infer_linear_16a4w(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return par_8da4w_shape(g, n, &outs[0].rank, outs[0].dims, msg);
}

/* ---- linear_qd8: x [..., K], w qs8 [O, K] per channel on axis 0, b f32 [O]? -> [..., O]; matmul_qd8: a [..., M, K],
 * b qs8 [K, N] per channel on axis 1 -> [..., M, N]. Either weight may be per tensor with zero point 0 (symmetric:
 * XNNPACK's qc8w). --------------------------------------------------------------------------------------------- */

par_status par_qd8_shape(const par_graph_desc *g, const par_node *n, int matmul, int32_t *yr, int64_t *yd,
                         par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!x || !w) return par_msgf(msg, PAR_ERROR, "inputs 0 and 1 are required");
    if (w->dtype != PAR_DTYPE_QS8)
        return par_msgf(msg, PAR_ERROR, "input 1 (%s): dtype %s, expected qs8", w->name, par_dtype_name(w->dtype));
    const int32_t axis = matmul ? 1 : 0;
    if (w->quant_axis >= 0 ? w->quant_axis != axis || !w->channel_scales : w->zero_point != 0)
        return par_msgf(msg, PAR_ERROR, "input 1 (%s): quantized %s; expected per channel on axis %d (the output "
                        "channels) or per tensor with zero point 0", w->name,
                        w->quant_axis >= 0 ? "per channel on another axis" : "with a non-zero zero point", (int)axis);
    par_status st;
    if (matmul) {
        if (w->rank != 2) return par_msgf(msg, PAR_ERROR, "input 1 (%s): rank %d, expected 2 ([K, N])", w->name,
                                          (int)w->rank);
        st = par_matmul_shape(x->rank, x->dims, w->rank, w->dims, yr, yd, msg);
    } else {
        st = par_linear_shape(x->rank, x->dims, w->rank, w->dims, b ? b->dims : NULL, b ? b->rank : 0, yr, yd, msg);
    }
    if (st != PAR_OK) return st;
    const int64_t k = x->dims[x->rank - 1];
    if (k > 65793) /* |q - zp| <= 255 times |w| <= 128, summed K times, must stay below 2^31 */
        return par_msgf(msg, PAR_ERROR, "input 0 (%s): K = %lld could overflow the int32 accumulator (at most 65793)",
                        x->name, (long long)k);
    return PAR_OK;
}

par_status par_infer_linear_qd8(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return par_qd8_shape(g, n, 0, &outs[0].rank, outs[0].dims, msg);
}

par_status par_infer_matmul_qd8(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return par_qd8_shape(g, n, 1, &outs[0].rank, outs[0].dims, msg);
}

/* ---- matmul: a [..., M, K], b [..., K, N] -> [broadcast(...), M, N] ------------------------------------------- */

par_status par_matmul_shape(int32_t ar, const int64_t *ad, int32_t br, const int64_t *bd, int32_t *yr, int64_t *yd,
                               par_msg *msg)
{
    if (ar < 2) return par_msgf(msg, PAR_ERROR, "input 0 (a): rank %d, expected at least 2", (int)ar);
    if (br < 2) return par_msgf(msg, PAR_ERROR, "input 1 (b): rank %d, expected at least 2", (int)br);
    if (ad[ar - 1] != bd[br - 2])
        return par_msgf(msg, PAR_ERROR, "input 1 (b): dims[%d] is %lld, expected %lld (the last dim of a)",
                        (int)(br - 2), (long long)bd[br - 2], (long long)ad[ar - 1]);
    int32_t r = ar > br ? ar : br;
    /* Batch dims aligned from the right, numpy broadcasting: equal, or one of them 1. */
    for (int32_t i = 0; i < r - 2; i++) {
        int32_t ia = i - (r - ar), ib = i - (r - br);
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b): batch dims %lld and %lld do not broadcast "
                            "(output dim %d)", (long long)da, (long long)db, (int)i);
        yd[i] = da == 1 ? db : da;
    }
    yd[r - 2] = ad[ar - 2];
    yd[r - 1] = bd[br - 1];
    *yr = r;
    return PAR_OK;
}

par_status par_infer_matmul(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *a = par_node_input(g, n, 0), *b = par_node_input(g, n, 1);
    if (!a || !b) return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b) are required");
    return par_matmul_shape(a->rank, a->dims, b->rank, b->dims, &outs[0].rank, outs[0].dims, msg);
}
