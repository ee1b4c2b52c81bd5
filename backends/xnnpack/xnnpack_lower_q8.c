/*
 * xnnpack_lower_q8.c - the quantized (qu8/qs8) half of the xnnpack adapter: the type and parameter rules of the
 * 2022-02 XNNPACK's integer operators (par_xnn_check_q8, for the ops the driver's table gives a quantized lowering),
 * the clamps that fold into an operator's integer output_min/output_max, and per op the create + setup of XNNPACK's
 * qs8 / qc8 / qu8 operators (docs/backends/xnnpack.md, "Quantized operators"); concat, reshape and slice use the
 * x8 copies of xnnpack_lower_move.c. It never calls back into the driver (xnnpack_lower.c).
 *
 * Every integer here is XNNPACK's: the adapter hands the graph's scales and zero points to the operators as they are
 * and reorders weights (OIHW -> OHWI, exact). Two encodings an integrator makes are exact by construction: qs8
 * weights of a qu8 convolution are stored as w + 128 with kernel zero point zp + 128 (XNNPACK's qu8 operators take
 * uint8 weights; (w + 128) - (zp + 128) = w - zp), and a linear layer with per-channel weights is XNNPACK's qc8
 * 1x1 convolution over rows x 1 pixels (the same GEMM). One lowering uses an XNNPACK operator for more than its
 * name: an activation whose output has its own scale or zero point (a calibrated relu6) needs a requantization,
 * which this snapshot has no operator for (convert_nc_qs8 came later); it runs as XNNPACK's add of the input and a
 * zero (one element holding the second operand's zero point), whose result is the requantized input with the
 * activation's bounds as the integer output clamp. Its integers are rndnu's requantization's (measured; such nodes
 * declare rndnu, par_xnn_requant_q8).
 *
 * Whatever XNNPACK lacks is UNSUPPORTED with the reason; nothing here computes an integer in C.
 */
#include <math.h>
#include <stdlib.h>

#include "core/requant.h"
#include "xnnpack_internal.h"

static int is_q8(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

static int32_t qmin_of(par_dtype t)
{
    return t == PAR_DTYPE_QU8 ? 0 : -128;
}

static int32_t qmax_of(par_dtype t)
{
    return t == PAR_DTYPE_QU8 ? 255 : 127;
}

static int same_q(const par_value *a, const par_value *b)
{
    return a->dtype == b->dtype && a->scale == b->scale && a->zero_point == b->zero_point && a->quant_axis < 0 &&
           b->quant_axis < 0;
}

int par_xnn_is_q8_node(const par_graph_desc *g, const par_node *n)
{
    if (is_op(n, "quantize") || is_op(n, "dequantize")) return 1;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (v && is_q8(v->dtype)) return 1;
    }
    const par_value *y = par_node_output(g, n, 0);
    return y && is_q8(y->dtype);
}

/* ---------------------------------------------------------------------------------------------------------------
 * What XNNPACK can run on integers
 * ------------------------------------------------------------------------------------------------------------- */
static int is_act_clamp(const par_node *n)
{
    return is_op(n, "relu") || is_op(n, "relu6") || is_op(n, "hardtanh") || is_op(n, "clamp");
}

/* The integer output clamp of an activation node producing y: the dtype's range intersected with the real range
 * quantized at y's params (docs/quantization.md, "relu6, hardtanh, clamp"). */
static void act_bounds(const par_node *n, const par_value *y, int32_t *lo, int32_t *hi)
{
    float flo, fhi;
    par_clamp_bounds_f32(n, &flo, &fhi);
    par_requant_clamp_range(y->dtype, y->scale, y->zero_point, flo, fhi, lo, hi);
}

static par_status check_weights(const par_graph_desc *g, const par_node *n, const par_value *x, const par_value *y,
                                par_msg *msg)
{
    const par_value *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!is_const(w) || (b && !is_const(b)))
        return par_msgf(msg, PAR_UNSUPPORTED, "weights and bias must be constants: XNNPACK packs them when the "
                                              "operator is created");
    if (b && b->dtype != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_UNSUPPORTED, "bias '%s' is %s; XNNPACK's quantized operators take an i32 bias",
                        b->name, par_dtype_name(b->dtype));
    if (w->dtype != PAR_DTYPE_QS8 && w->dtype != PAR_DTYPE_QU8)
        return par_msgf(msg, PAR_UNSUPPORTED, "weights '%s' are %s; XNNPACK's quantized operators take qs8 / qu8 "
                        "weights", w->name, par_dtype_name(w->dtype));
    if (w->quant_axis >= 0) {
        if (w->quant_axis != 0 || !w->channel_scales)
            return par_msgf(msg, PAR_UNSUPPORTED, "weights '%s' quantized along axis %d: XNNPACK's per-channel (qc8) "
                            "operators take scales per output channel (axis 0)", w->name, w->quant_axis);
        if (x->dtype != PAR_DTYPE_QS8)
            return par_msgf(msg, PAR_UNSUPPORTED, "qu8 activations with per-channel weights: XNNPACK 2022-02 has "
                            "per-channel weights (qc8) for qs8 activations only; its qu8 operators take one kernel "
                            "scale and zero point");
        if (is_op(n, "linear") && x->rank < 1)
            return par_msgf(msg, PAR_UNSUPPORTED, "linear on a rank-0 input");
        for (int64_t c = 0; c < w->dims[0]; c++) {
            double r = (double)x->scale * w->channel_scales[c] / y->scale;
            if (!(r < 256.0))
                return par_msgf(msg, PAR_UNSUPPORTED, "requantization scale s_x s_w[%lld] / s_y = %g: XNNPACK's "
                                "qc8 operators require it below 256", (long long)c, r);
        }
        return PAR_OK;
    }
    if (x->dtype == PAR_DTYPE_QS8 && (w->dtype != PAR_DTYPE_QS8 || w->zero_point != 0))
        return par_msgf(msg, PAR_UNSUPPORTED, "qs8 activations with %s weights of zero point %d: XNNPACK's qs8 "
                        "operators take symmetric qs8 weights (zero point 0)", par_dtype_name(w->dtype),
                        (int)w->zero_point);
    double r = (double)x->scale * w->scale / y->scale;
    if (!(r < 256.0))
        return par_msgf(msg, PAR_UNSUPPORTED, "requantization scale s_x s_w / s_y = %g: XNNPACK's quantized "
                        "convolution and fully connected operators require it below 256", r);
    return PAR_OK;
}

par_status par_xnn_check_q8(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (!x || !y) return par_msgf(msg, PAR_ERROR, "node has no input 0 or no output 0");
    if (x->rank > XNN_MAX_TENSOR_DIMS || y->rank > XNN_MAX_TENSOR_DIMS)
        return par_msgf(msg, PAR_UNSUPPORTED, "rank above XNN_MAX_TENSOR_DIMS (%d)", XNN_MAX_TENSOR_DIMS);
    if (is_op(n, "quantize")) {
        if (x->dtype != PAR_DTYPE_F32 || !is_q8(y->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "quantize %s -> %s: XNNPACK converts f32 -> qs8/qu8 only",
                            par_dtype_name(x->dtype), par_dtype_name(y->dtype));
        return PAR_OK;
    }
    if (is_op(n, "dequantize")) {
        if (!is_q8(x->dtype) || x->quant_axis >= 0 || y->dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "dequantize of a %s%s tensor: XNNPACK converts per-tensor "
                            "qs8/qu8 -> f32 only", x->quant_axis >= 0 ? "per-channel " : "",
                            par_dtype_name(x->dtype));
        return PAR_OK;
    }
    /* every other op: activations of one integer type, per tensor */
    int32_t n_act = is_op(n, "add") || is_op(n, "mul") ? 2 : is_op(n, "concat") ? n->n_inputs : 1;
    for (int32_t i = 0; i < n_act; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (!v) continue;
        if (!is_q8(v->dtype) || v->dtype != y->dtype)
            return par_msgf(msg, PAR_UNSUPPORTED, "input %d ('%s') is %s and the output %s: XNNPACK's quantized "
                            "operators take and produce one integer type", i, v->name, par_dtype_name(v->dtype),
                            par_dtype_name(y->dtype));
        if (v->quant_axis >= 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "input %d ('%s') is quantized per channel: XNNPACK's activations "
                            "are per tensor", i, v->name);
    }
    if (!is_q8(y->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "output '%s' is %s with quantized inputs: XNNPACK's quantized "
                        "operators produce the input's integer type", y->name, par_dtype_name(y->dtype));
    int s8 = y->dtype == PAR_DTYPE_QS8;

    if (is_op(n, "conv2d") || is_op(n, "linear")) return check_weights(g, n, x, y, msg);
    if (is_act_clamp(n)) {
        int32_t lo, hi;
        act_bounds(n, y, &lo, &hi);
        if (!(lo < hi))
            return par_msgf(msg, PAR_UNSUPPORTED, "integer clamp range [%d, %d] is empty or a point: XNNPACK's "
                            "clamp and output_min/output_max require min < max", (int)lo, (int)hi);
        if (!same_q(x, y)) {
            float r = x->scale / y->scale;
            if (!(r >= 0x1.0p-10f && r < 0x1.0p+8f))
                return par_msgf(msg, PAR_UNSUPPORTED, "%s requantizing by s_x / s_y = %g: the requantization runs as "
                                "XNNPACK's add, which takes ratios in [2^-10, 2^8)", n->op, (double)r);
        }
        return PAR_OK;
    }
    if (is_op(n, "sigmoid") || is_op(n, "tanh")) {
        int sig = is_op(n, "sigmoid");
        float want_s = sig ? 0x1.0p-8f : 0x1.0p-7f;
        int32_t want_zp = sig ? (s8 ? -128 : 0) : (s8 ? 0 : 128);
        if (y->scale != want_s || y->zero_point != want_zp)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s output scale %g, zero point %d: XNNPACK's %s_nc_%s requires "
                            "scale %g and zero point %d", n->op, (double)y->scale, (int)y->zero_point, n->op,
                            s8 ? "qs8" : "qu8", (double)want_s, (int)want_zp);
        return PAR_OK;
    }
    if (is_op(n, "max_pool2d") || is_op(n, "upsample_bilinear2d") || is_op(n, "concat") || is_op(n, "reshape") ||
        is_op(n, "flatten") || is_op(n, "slice")) {
        for (int32_t i = 0; i < n_act; i++)
            if (!same_q(par_node_input(g, n, i), y))
                return par_msgf(msg, PAR_UNSUPPORTED, "%s with input %d at other quantization parameters than the "
                                "output: XNNPACK's %s does not requantize", n->op, i,
                                is_op(n, "max_pool2d") ? "max pooling" :
                                is_op(n, "upsample_bilinear2d") ? "bilinear resize" : "copy");
    }
    if (is_op(n, "avg_pool2d")) {
        if (s8)
            return par_msgf(msg, PAR_UNSUPPORTED, "qs8 average pooling: XNNPACK 2022-02 has average_pooling2d for "
                                                  "f32, f16 and qu8 only");
        /* Unlike its f32 operator, XNNPACK's qu8 average pooling counts the padding in the divisor (kernel area
         * always): PyTorch's count_include_pad=1, and only where the padding is the declared one (a ceil_mode
         * window hanging past the padded extent is not counted by PyTorch). */
        int64_t kh = par_attr_ints_at(n, "kernel", 0, 1), kw = par_attr_ints_at(n, "kernel", 1, 1);
        int any_pad = 0;
        for (int i = 0; i < 4; i++) any_pad |= par_attr_ints_at(n, "padding", i, 0) > 0;
        if (any_pad && !par_attr_int(n, "count_include_pad", 1))
            return par_msgf(msg, PAR_UNSUPPORTED, "count_include_pad=0 with padding: XNNPACK's qu8 average pooling "
                                                  "divides by the kernel area, padding included");
        for (int d = 0; d < 2; d++) {
            int64_t k = d ? kw : kh, st = par_attr_ints_at(n, "stride", d, 1);
            int64_t over = (y->dims[2 + d] - 1) * st + k - x->dims[2 + d] - par_attr_ints_at(n, "padding", d, 0) -
                           par_attr_ints_at(n, "padding", d + 2, 0);
            if (over > 0)
                return par_msgf(msg, PAR_UNSUPPORTED, "ceil_mode window past the padded input: XNNPACK's qu8 "
                                                      "average pooling would count it in the divisor");
        }
        if (kh * kw == 1)
            return par_msgf(msg, PAR_UNSUPPORTED, "1x1 pooling window: XNNPACK's average_pooling2d refuses pooling "
                                                  "windows of one element (invalid_parameter)");
        return PAR_OK;
    }
    if (is_op(n, "softmax")) {
        if (s8)
            return par_msgf(msg, PAR_UNSUPPORTED, "qs8 softmax: XNNPACK 2022-02 has softmax_nc for f32 and qu8 only");
        if (y->scale != 0x1.0p-8f || y->zero_point != 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "softmax output scale %g, zero point %d: XNNPACK's softmax_nc_qu8 "
                            "requires scale 1/256 and zero point 0", (double)y->scale, (int)y->zero_point);
    }
    if (is_op(n, "global_avg_pool2d") && x->rank != 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "global_avg_pool2d of a rank-%d tensor", x->rank);
    /* the layout and parameter rules every XNNPACK operator shares with its f32 version */
    if (is_op(n, "max_pool2d") || is_op(n, "softmax") || is_op(n, "upsample_bilinear2d") || is_op(n, "slice"))
        return par_xnn_check_params(g, n, msg);
    return PAR_OK;
}

/* The scheme of each lowering, as measured against the library in strict mode (docs/findings.md, finding 5): the
 * snapshot's quantized convolution, fully connected, mul and global average pooling operators requantize with fp32
 * (the backend-wide scheme, round half to even); its add (vadd) is rndnu's add formula bit for bit (round half up),
 * and so the requantizing add of an activation with its own parameters gives rndnu's integers; its qu8 average
 * pooling gives rndna's (the float scale's 24-bit mantissa as multiplier, round half away from zero). */
par_requant par_xnn_requant_q8(const par_graph_desc *g, const par_node *n)
{
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    if (!y || !is_q8(y->dtype)) return PAR_REQUANT_FP32;
    if (is_op(n, "add")) return PAR_REQUANT_RNDNU;
    if (is_act_clamp(n) && x && !same_q(x, y)) return PAR_REQUANT_RNDNU;
    if (is_op(n, "avg_pool2d") && y->dtype == PAR_DTYPE_QU8) return PAR_REQUANT_RNDNA;
#if defined(__aarch64__)
    /* On aarch64 this XNNPACK's per-tensor qs8/qu8 convolution kernels (NEON) requantize with rndnu; the
     * per-channel (qc8) ones stay fp32; its qs8/qu8 global average pooling rounds ties half up as well (132 of 132
     * ties of cases/regressions/xnnpack-global-avg-pool2d-ties-*.json). Measured under qemu: docs/aarch64.md. */
    const par_value *w = par_node_input(g, n, 1);
    if (is_op(n, "conv2d") && w && w->quant_axis < 0) return PAR_REQUANT_RNDNU;
    if (is_op(n, "global_avg_pool2d")) return PAR_REQUANT_RNDNU;
#endif
    return PAR_REQUANT_FP32;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Fusions: a clamp at its producer's own scale and zero point becomes the producer's integer output clamp
 * ------------------------------------------------------------------------------------------------------------- */
static int takes_q8_clamp(const par_node *n)
{
    static const char *const ops[] = {"conv2d", "linear", "add", "mul", "max_pool2d", "avg_pool2d",
                                      "global_avg_pool2d"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (is_op(n, ops[i])) return 1;
    return 0;
}

void par_xnn_plan_fusions_q8(xa_plan *p)
{
    const par_graph_desc *g = p->g;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        if (p->skip[i] || !par_xnn_is_q8_node(g, n) || !takes_q8_clamp(n)) continue;
        const par_value *y = par_node_output(g, n, 0);
        int32_t j = par_xnn_sole_consumer(p, i, p->final_out[i]);
        if (j < 0 || !is_act_clamp(&g->nodes[j]) || par_xnn_check_q8(g, &g->nodes[j], NULL) != PAR_OK) continue;
        const par_value *cy = par_node_output(g, &g->nodes[j], 0);
        if (!same_q(y, cy)) continue;
        int32_t lo, hi;
        act_bounds(&g->nodes[j], cy, &lo, &hi);
        p->skip[j] = 1;
        p->final_out[i] = g->nodes[j].outputs[0];
        p->out_min[i] = (float)lo;
        p->out_max[i] = (float)hi;
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Lowering
 * ------------------------------------------------------------------------------------------------------------- */
/* The integer output clamp of node ni: a fused activation's bounds, or the dtype's range. */
static void out_bounds(const xa_plan *p, int32_t ni, par_dtype dt, int32_t *lo, int32_t *hi)
{
    *lo = isfinite(p->out_min[ni]) ? (int32_t)p->out_min[ni] : qmin_of(dt);
    *hi = isfinite(p->out_max[ni]) ? (int32_t)p->out_max[ni] : qmax_of(dt);
}

/* Weights [O][gi][kh][kw] -> XNNPACK's [O][kh][kw][gi] (linear: [O][K] as is), as int8 or, for a qu8 operator
 * with qs8 weights, as w + 128 (the kernel zero point moves by 128 too). */
static void *pack_weights(const par_value *w, int64_t O, int64_t gi, int64_t khw, int to_u8)
{
    uint8_t *k = malloc((size_t)(O * gi * khw));
    if (!k) return NULL;
    const uint8_t *wd = w->data;
    uint8_t flip = (to_u8 && w->dtype == PAR_DTYPE_QS8) ? 0x80 : 0; /* s + 128 == s ^ 0x80 on two's complement */
    for (int64_t o = 0; o < O; o++)
        for (int64_t c = 0; c < gi; c++)
            for (int64_t i = 0; i < khw; i++) k[(o * khw + i) * gi + c] = wd[(o * gi + c) * khw + i] ^ flip;
    return k;
}

/* conv2d and linear */
par_status par_xnn_lower_conv_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    const par_value *y = par_node_output(g, n, 0);
    int lin = is_op(n, "linear");
    /* linear: a 1x1 convolution over rows x 1 pixels when it needs XNNPACK's per-channel (qc8) operator */
    int64_t C = lin ? x->dims[x->rank - 1] : x->dims[1], O = w->dims[0];
    int64_t KH = lin ? 1 : w->dims[2], KW = lin ? 1 : w->dims[3], G = lin ? 1 : par_attr_int(n, "groups", 1);
    int64_t gi = C / G, go = O / G, pad[4] = {0, 0, 0, 0};
    int64_t sh = 1, sw = 1, dh = 1, dw = 1;
    if (!lin) {
        par_xnn_conv_pads(n, x, w, pad);
        sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
        dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
        int64_t oh = (x->dims[2] + pad[0] + pad[2] - (dh * (KH - 1) + 1)) / sh + 1;
        int64_t ow = (x->dims[3] + pad[1] + pad[3] - (dw * (KW - 1) + 1)) / sw + 1;
        if (oh != y->dims[2] || ow != y->dims[3])
            return par_msgf(msg, PAR_ERROR, "conv2d lowering: XNNPACK would produce %lldx%lld, the graph says "
                            "%lldx%lld", (long long)oh, (long long)ow, (long long)y->dims[2], (long long)y->dims[3]);
    }
    int u8 = x->dtype == PAR_DTYPE_QU8, qc8 = w->quant_axis >= 0;
    int32_t lo, hi;
    out_bounds(p, ni, y->dtype, &lo, &hi);
    void *k = pack_weights(w, O, gi, KH * KW, u8);
    if (!k) return par_msgf(msg, PAR_ERROR, "prepare: out of memory for %s weights", n->op);
    const int32_t *bias = b ? b->data : NULL;
    int32_t kzp = u8 ? w->zero_point + (w->dtype == PAR_DTYPE_QS8 ? 128 : 0) : 0;
    xnn_operator_t op = NULL;
    enum xnn_status st;
    const char *fn;
    size_t rows = lin ? (size_t)(x->numel / C) : 0;
    if (lin && !qc8) {
        if (u8)
            st = xnn_create_fully_connected_nc_qu8((size_t)C, (size_t)O, (size_t)C, (size_t)O,
                                                   (uint8_t)x->zero_point, x->scale, (uint8_t)kzp, w->scale, k, bias,
                                                   (uint8_t)y->zero_point, y->scale, (uint8_t)lo, (uint8_t)hi, 0, &op),
            fn = "fully_connected_nc_qu8";
        else
            st = xnn_create_fully_connected_nc_qs8((size_t)C, (size_t)O, (size_t)C, (size_t)O,
                                                   (int8_t)x->zero_point, x->scale, w->scale, k, bias,
                                                   (int8_t)y->zero_point, y->scale, (int8_t)lo, (int8_t)hi, 0, &op),
            fn = "fully_connected_nc_qs8";
    } else if (qc8) {
        st = xnn_create_convolution2d_nhwc_qc8(
            (uint32_t)pad[0], (uint32_t)pad[3], (uint32_t)pad[2], (uint32_t)pad[1], (uint32_t)KH, (uint32_t)KW,
            (uint32_t)sh, (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, (uint32_t)G, (size_t)gi, (size_t)go, (size_t)C,
            (size_t)O, (int8_t)x->zero_point, x->scale, w->channel_scales, k, bias, (int8_t)y->zero_point, y->scale,
            (int8_t)lo, (int8_t)hi, 0, &op);
        fn = "convolution2d_nhwc_qc8";
    } else if (u8) {
        st = xnn_create_convolution2d_nhwc_qu8(
            (uint32_t)pad[0], (uint32_t)pad[3], (uint32_t)pad[2], (uint32_t)pad[1], (uint32_t)KH, (uint32_t)KW,
            (uint32_t)sh, (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, (uint32_t)G, (size_t)gi, (size_t)go, (size_t)C,
            (size_t)O, (uint8_t)x->zero_point, x->scale, (uint8_t)kzp, w->scale, k, bias, (uint8_t)y->zero_point,
            y->scale, (uint8_t)lo, (uint8_t)hi, 0, &op);
        fn = "convolution2d_nhwc_qu8";
    } else {
        st = xnn_create_convolution2d_nhwc_qs8(
            (uint32_t)pad[0], (uint32_t)pad[3], (uint32_t)pad[2], (uint32_t)pad[1], (uint32_t)KH, (uint32_t)KW,
            (uint32_t)sh, (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, (uint32_t)G, (size_t)gi, (size_t)go, (size_t)C,
            (size_t)O, (int8_t)x->zero_point, x->scale, w->scale, k, bias, (int8_t)y->zero_point, y->scale,
            (int8_t)lo, (int8_t)hi, 0, &op);
        fn = "convolution2d_nhwc_qs8";
    }
    free(k);
    par_status cs = par_xnn_created(st, fn, msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, lin ? XA_LOGICAL : XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    size_t N = lin ? 1 : (size_t)x->dims[0], H = lin ? rows : (size_t)x->dims[2], W = lin ? 1 : (size_t)x->dims[3];
    if (lin && !qc8)
        st = u8 ? xnn_setup_fully_connected_nc_qu8(op, rows, in, out, p->pool)
                : xnn_setup_fully_connected_nc_qs8(op, rows, in, out, p->pool);
    else if (qc8) st = xnn_setup_convolution2d_nhwc_qc8(op, N, H, W, in, out, p->pool);
    else if (u8) st = xnn_setup_convolution2d_nhwc_qu8(op, N, H, W, in, out, p->pool);
    else st = xnn_setup_convolution2d_nhwc_qs8(op, N, H, W, in, out, p->pool);
    return par_xnn_push_op(p, op, st, fn, msg);
}

/* add / mul with numpy broadcasting (in NHWC when the output is 4-D), or the requantization of one tensor as its
 * add with a zero (b = NULL: a one-element operand holding its zero point, at a's scale). */
static par_status binary_q8(xa_plan *p, int32_t ni, int mul, const par_value *a, int32_t va, const par_value *b,
                            int32_t vb, const par_value *y, int32_t lo, int32_t hi, par_msg *msg)
{
    const par_value *v[2] = {a, b ? b : a};
    int nhwc = y->rank == 4;
    size_t shape[2][XNN_MAX_TENSOR_DIMS], rank[2];
    const void *in[2] = {NULL, NULL};
    xa_layout lay = nhwc ? XA_NHWC : XA_LOGICAL;
    if (!b) {
        /* requantization: a in its own layout, flat, plus one element holding the zero operand's zero point */
        lay = par_xnn_current_layout(p, va);
        uint8_t *z = par_xnn_alloc_bytes(p, 1);
        if (!z) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        *z = (uint8_t)a->zero_point;
        in[1] = z;
        rank[0] = 1, shape[0][0] = (size_t)a->numel;
        rank[1] = 1, shape[1][0] = 1;
        if (!(in[0] = par_xnn_input(p, va, lay, msg))) return PAR_ERROR;
    }
    for (int k = 0; k < 2 && b; k++) {
        const par_value *vk = v[k];
        int32_t vi = k ? vb : va;
        if (nhwc) {
            int64_t d[4] = {1, 1, 1, 1};
            for (int32_t i = 0; i < vk->rank; i++) d[4 - vk->rank + i] = vk->dims[i];
            shape[k][0] = (size_t)d[0], shape[k][1] = (size_t)d[2], shape[k][2] = (size_t)d[3];
            shape[k][3] = (size_t)d[1];
            rank[k] = 4;
            in[k] = par_xnn_input_nhwc4(p, vi, msg);
        } else {
            for (int32_t i = 0; i < vk->rank; i++) shape[k][i] = (size_t)vk->dims[i];
            rank[k] = (size_t)vk->rank;
            if (vk->rank == 0) shape[k][0] = 1, rank[k] = 1;
            in[k] = par_xnn_input(p, vi, XA_LOGICAL, msg);
        }
        if (!in[k]) return PAR_ERROR;
    }
    int32_t bzp = b ? b->zero_point : a->zero_point;
    float bs = b ? b->scale : a->scale;
    int u8 = y->dtype == PAR_DTYPE_QU8;
    xnn_operator_t op = NULL;
    const char *fn = mul ? (u8 ? "multiply_nd_qu8" : "multiply_nd_qs8") : (u8 ? "add_nd_qu8" : "add_nd_qs8");
    enum xnn_status created;
    if (mul)
        created = u8 ? xnn_create_multiply_nd_qu8((uint8_t)a->zero_point, a->scale, (uint8_t)bzp, bs,
                                                  (uint8_t)y->zero_point, y->scale, (uint8_t)lo, (uint8_t)hi, 0, &op)
                     : xnn_create_multiply_nd_qs8((int8_t)a->zero_point, a->scale, (int8_t)bzp, bs,
                                                  (int8_t)y->zero_point, y->scale, (int8_t)lo, (int8_t)hi, 0, &op);
    else
        created = u8 ? xnn_create_add_nd_qu8((uint8_t)a->zero_point, a->scale, (uint8_t)bzp, bs, (uint8_t)y->zero_point,
                                             y->scale, (uint8_t)lo, (uint8_t)hi, 0, &op)
                     : xnn_create_add_nd_qs8((int8_t)a->zero_point, a->scale, (int8_t)bzp, bs, (int8_t)y->zero_point,
                                             y->scale, (int8_t)lo, (int8_t)hi, 0, &op);
    par_status cs = par_xnn_created(created, fn, msg);
    if (cs != PAR_OK) return cs;
    void *out = par_xnn_output(p, p->final_out[ni], lay, msg);
    if (!out) {
        xnn_delete_operator(op);
        return PAR_ERROR;
    }
    enum xnn_status st;
    if (mul && u8) st = xnn_setup_multiply_nd_qu8(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    else if (mul) st = xnn_setup_multiply_nd_qs8(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    else if (u8) st = xnn_setup_add_nd_qu8(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    else st = xnn_setup_add_nd_qs8(op, rank[0], shape[0], rank[1], shape[1], in[0], in[1], out, p->pool);
    return par_xnn_push_op(p, op, st, fn, msg);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Elementwise ops over the flat tensor in its input's layout: convert, clamp, sigmoid, tanh. Each creates its
 * qu8 or qs8 operator; unary_io binds the buffers (the operator is deleted on failure).
 * ------------------------------------------------------------------------------------------------------------- */
static par_status unary_io(xa_plan *p, int32_t ni, xnn_operator_t *op, enum xnn_status created, const char *fn,
                           const void **in, void **out, par_msg *msg)
{
    par_status st = par_xnn_created(created, fn, msg);
    if (st != PAR_OK) return st;
    return par_xnn_io(p, ni, par_xnn_current_layout(p, p->g->nodes[ni].inputs[0]), *op, in, out, msg);
}

par_status par_xnn_lower_quantize_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    size_t c = (size_t)x->numel;
    int u8 = y->dtype == PAR_DTYPE_QU8;
    xnn_operator_t op = NULL;
    const void *in;
    void *out;
    const char *fn = u8 ? "convert_nc_f32_qu8" : "convert_nc_f32_qs8";
    par_status st = unary_io(p, ni, &op,
                             u8 ? xnn_create_convert_nc_f32_qu8(c, c, c, y->scale, (uint8_t)y->zero_point, 0, 255, 0,
                                                                &op)
                                : xnn_create_convert_nc_f32_qs8(c, c, c, y->scale, (int8_t)y->zero_point, -128, 127, 0,
                                                                &op),
                             fn, &in, &out, msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, op, u8 ? xnn_setup_convert_nc_f32_qu8(op, 1, in, out, p->pool)
                                     : xnn_setup_convert_nc_f32_qs8(op, 1, in, out, p->pool), fn, msg);
}

par_status par_xnn_lower_dequantize_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0);
    size_t c = (size_t)x->numel;
    int u8 = x->dtype == PAR_DTYPE_QU8;
    xnn_operator_t op = NULL;
    const void *in;
    void *out;
    const char *fn = u8 ? "convert_nc_qu8_f32" : "convert_nc_qs8_f32";
    par_status st = unary_io(p, ni, &op,
                             u8 ? xnn_create_convert_nc_qu8_f32(c, c, c, x->scale, (uint8_t)x->zero_point, 0, &op)
                                : xnn_create_convert_nc_qs8_f32(c, c, c, x->scale, (int8_t)x->zero_point, 0, &op),
                             fn, &in, &out, msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, op, u8 ? xnn_setup_convert_nc_qu8_f32(op, 1, in, out, p->pool)
                                     : xnn_setup_convert_nc_qs8_f32(op, 1, in, out, p->pool), fn, msg);
}

/* relu, relu6, hardtanh, clamp: XNNPACK's integer clamp at the output's parameters, or, when the output has other
 * parameters than the input, the requantizing add with a zero (see the top of this file). */
par_status par_xnn_lower_clamp_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    int32_t lo, hi;
    act_bounds(n, y, &lo, &hi);
    if (!same_q(x, y)) return binary_q8(p, ni, 0, x, n->inputs[0], NULL, -1, y, lo, hi, msg);
    size_t c = (size_t)x->numel;
    int u8 = y->dtype == PAR_DTYPE_QU8;
    xnn_operator_t op = NULL;
    const void *in;
    void *out;
    const char *fn = u8 ? "clamp_nc_u8" : "clamp_nc_s8";
    par_status st = unary_io(p, ni, &op,
                             u8 ? xnn_create_clamp_nc_u8(c, c, c, (uint8_t)lo, (uint8_t)hi, 0, &op)
                                : xnn_create_clamp_nc_s8(c, c, c, (int8_t)lo, (int8_t)hi, 0, &op),
                             fn, &in, &out, msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, op, u8 ? xnn_setup_clamp_nc_u8(op, 1, in, out, p->pool)
                                     : xnn_setup_clamp_nc_s8(op, 1, in, out, p->pool), fn, msg);
}

/* sigmoid and tanh: XNNPACK's qu8 and qs8 operators of both share one create and one setup signature. */
typedef struct lut_api {
    enum xnn_status (*create_u8)(size_t channels, size_t in_stride, size_t out_stride, uint8_t in_zp, float in_scale,
                                 uint8_t out_zp, float out_scale, uint8_t out_min, uint8_t out_max, uint32_t flags,
                                 xnn_operator_t *op);
    enum xnn_status (*create_s8)(size_t channels, size_t in_stride, size_t out_stride, int8_t in_zp, float in_scale,
                                 int8_t out_zp, float out_scale, int8_t out_min, int8_t out_max, uint32_t flags,
                                 xnn_operator_t *op);
    enum xnn_status (*setup_u8)(xnn_operator_t op, size_t batch, const uint8_t *x, uint8_t *y, pthreadpool_t pool);
    enum xnn_status (*setup_s8)(xnn_operator_t op, size_t batch, const int8_t *x, int8_t *y, pthreadpool_t pool);
    const char *name_u8, *name_s8;
} lut_api;

static const lut_api sigmoid_api = {xnn_create_sigmoid_nc_qu8, xnn_create_sigmoid_nc_qs8, xnn_setup_sigmoid_nc_qu8,
                                    xnn_setup_sigmoid_nc_qs8, "sigmoid_nc_qu8", "sigmoid_nc_qs8"};
static const lut_api tanh_api = {xnn_create_tanh_nc_qu8, xnn_create_tanh_nc_qs8, xnn_setup_tanh_nc_qu8,
                                 xnn_setup_tanh_nc_qs8, "tanh_nc_qu8", "tanh_nc_qs8"};

static par_status lower_lut_q8(xa_plan *p, int32_t ni, const lut_api *api, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    size_t c = (size_t)x->numel;
    int u8 = y->dtype == PAR_DTYPE_QU8;
    xnn_operator_t op = NULL;
    const void *in;
    void *out;
    const char *fn = u8 ? api->name_u8 : api->name_s8;
    par_status st = unary_io(p, ni, &op,
                             u8 ? api->create_u8(c, c, c, (uint8_t)x->zero_point, x->scale, (uint8_t)y->zero_point,
                                                 y->scale, 0, 255, 0, &op)
                                : api->create_s8(c, c, c, (int8_t)x->zero_point, x->scale, (int8_t)y->zero_point,
                                                 y->scale, -128, 127, 0, &op),
                             fn, &in, &out, msg);
    if (st != PAR_OK) return st;
    return par_xnn_push_op(p, op, u8 ? api->setup_u8(op, 1, in, out, p->pool) : api->setup_s8(op, 1, in, out, p->pool),
                           fn, msg);
}

par_status par_xnn_lower_sigmoid_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_lut_q8(p, ni, &sigmoid_api, msg);
}

par_status par_xnn_lower_tanh_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_lut_q8(p, ni, &tanh_api, msg);
}

/* max_pool2d (u8, s8), avg_pool2d (qu8) */
par_status par_xnn_lower_pool_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    int mx = is_op(n, "max_pool2d"), u8 = y->dtype == PAR_DTYPE_QU8;
    int64_t kh = par_attr_ints_at(n, "kernel", 0, 1), kw = par_attr_ints_at(n, "kernel", 1, 1);
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t dh = mx ? par_attr_ints_at(n, "dilation", 0, 1) : 1, dw = mx ? par_attr_ints_at(n, "dilation", 1, 1) : 1;
    int64_t pad[4];
    for (int i = 0; i < 4; i++) pad[i] = par_attr_ints_at(n, "padding", i, 0);
    if (par_xnn_pool_pads(n, x, y, kh, kw, sh, sw, dh, dw, pad, msg) != PAR_OK) return PAR_ERROR;
    int32_t lo, hi;
    out_bounds(p, ni, y->dtype, &lo, &hi);
    size_t C = (size_t)x->dims[1];
    uint32_t pt = (uint32_t)pad[0], pl = (uint32_t)pad[1], pb = (uint32_t)pad[2], pr = (uint32_t)pad[3];
    xnn_operator_t op = NULL;
    const char *fn = mx ? (u8 ? "max_pooling2d_nhwc_u8" : "max_pooling2d_nhwc_s8") : "average_pooling2d_nhwc_qu8";
    enum xnn_status created;
    if (mx)
        created = u8 ? xnn_create_max_pooling2d_nhwc_u8(pt, pr, pb, pl, (uint32_t)kh, (uint32_t)kw, (uint32_t)sh,
                                                        (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, C, C, C,
                                                        (uint8_t)lo, (uint8_t)hi, 0, &op)
                     : xnn_create_max_pooling2d_nhwc_s8(pt, pr, pb, pl, (uint32_t)kh, (uint32_t)kw, (uint32_t)sh,
                                                        (uint32_t)sw, (uint32_t)dh, (uint32_t)dw, C, C, C,
                                                        (int8_t)lo, (int8_t)hi, 0, &op);
    else
        created = xnn_create_average_pooling2d_nhwc_qu8(pt, pr, pb, pl, (uint32_t)kh, (uint32_t)kw, (uint32_t)sh,
                                                        (uint32_t)sw, C, C, C, (uint8_t)x->zero_point, x->scale,
                                                        (uint8_t)y->zero_point, y->scale, (uint8_t)lo, (uint8_t)hi,
                                                        0, &op);
    par_status cs = par_xnn_created(created, fn, msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    size_t N = (size_t)x->dims[0], H = (size_t)x->dims[2], W = (size_t)x->dims[3];
    enum xnn_status st;
    if (mx && u8) st = xnn_setup_max_pooling2d_nhwc_u8(op, N, H, W, in, out, p->pool);
    else if (mx) st = xnn_setup_max_pooling2d_nhwc_s8(op, N, H, W, in, out, p->pool);
    else st = xnn_setup_average_pooling2d_nhwc_qu8(op, N, H, W, in, out, p->pool);
    return par_xnn_push_op(p, op, st, fn, msg);
}

par_status par_xnn_lower_gap_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    int u8 = y->dtype == PAR_DTYPE_QU8;
    int32_t lo, hi;
    out_bounds(p, ni, y->dtype, &lo, &hi);
    size_t C = (size_t)x->dims[1];
    xnn_operator_t op = NULL;
    const char *fn = u8 ? "global_average_pooling_nwc_qu8" : "global_average_pooling_nwc_qs8";
    par_status cs = par_xnn_created(
        u8 ? xnn_create_global_average_pooling_nwc_qu8(C, C, C, (uint8_t)x->zero_point, x->scale,
                                                       (uint8_t)y->zero_point, y->scale, (uint8_t)lo, (uint8_t)hi, 0,
                                                       &op)
           : xnn_create_global_average_pooling_nwc_qs8(C, C, C, (int8_t)x->zero_point, x->scale,
                                                       (int8_t)y->zero_point, y->scale, (int8_t)lo, (int8_t)hi, 0,
                                                       &op),
        fn, msg);
    if (cs != PAR_OK) return cs;
    /* [N, 1, 1, C] in NHWC is the same memory as the logical [N, C, 1, 1] */
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    size_t N = (size_t)x->dims[0], HW = (size_t)(x->dims[2] * x->dims[3]);
    return par_xnn_push_op(p, op,
                           u8 ? xnn_setup_global_average_pooling_nwc_qu8(op, N, HW, in, out, p->pool)
                              : xnn_setup_global_average_pooling_nwc_qs8(op, N, HW, in, out, p->pool),
                           fn, msg);
}

par_status par_xnn_lower_softmax_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    int a = norm_axis(par_attr_int(n, "axis", -1), x->rank);
    xa_layout lay = (x->rank == 4 && a == 1) ? XA_NHWC : XA_LOGICAL;
    size_t C = (size_t)x->dims[a];
    xnn_operator_t op = NULL;
    par_status cs = par_xnn_created(
        xnn_create_softmax_nc_qu8(C, C, C, x->scale, (uint8_t)y->zero_point, y->scale, 0, &op), "softmax_nc_qu8", msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, lay, op, &in, &out, msg)) != PAR_OK) return cs;
    return par_xnn_push_op(p, op, xnn_setup_softmax_nc_qu8(op, (size_t)x->numel / C, in, out, p->pool),
                           "setup_softmax_nc_qu8", msg);
}

par_status par_xnn_lower_resize_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    const par_node *n = &p->g->nodes[ni];
    const par_value *x = par_node_input(p->g, n, 0), *y = par_node_output(p->g, n, 0);
    int u8 = y->dtype == PAR_DTYPE_QU8;
    size_t C = (size_t)x->dims[1];
    uint32_t flags = par_attr_int(n, "align_corners", 0) ? XNN_FLAG_ALIGN_CORNERS : 0;
    xnn_operator_t op = NULL;
    const char *fn = u8 ? "resize_bilinear2d_nhwc_u8" : "resize_bilinear2d_nhwc_s8";
    par_status cs = par_xnn_created(u8 ? xnn_create_resize_bilinear2d_nhwc_u8(C, C, C, flags, &op)
                                       : xnn_create_resize_bilinear2d_nhwc_s8(C, C, C, flags, &op),
                                    fn, msg);
    if (cs != PAR_OK) return cs;
    const void *in;
    void *out;
    if ((cs = par_xnn_io(p, ni, XA_NHWC, op, &in, &out, msg)) != PAR_OK) return cs;
    size_t N = (size_t)x->dims[0], H = (size_t)x->dims[2], W = (size_t)x->dims[3];
    size_t OH = (size_t)y->dims[2], OW = (size_t)y->dims[3];
    return par_xnn_push_op(p, op,
                           u8 ? xnn_setup_resize_bilinear2d_nhwc_u8(op, N, H, W, OH, OW, in, out, p->pool)
                              : xnn_setup_resize_bilinear2d_nhwc_s8(op, N, H, W, OH, OW, in, out, p->pool),
                           fn, msg);
}

/* add and mul: the fused activation's integer bounds, else the dtype's range. */
static par_status lower_binary_q8(xa_plan *p, int32_t ni, int mul, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[ni];
    const par_value *y = par_node_output(g, n, 0);
    int32_t lo, hi;
    out_bounds(p, ni, y->dtype, &lo, &hi);
    return binary_q8(p, ni, mul, par_node_input(g, n, 0), n->inputs[0], par_node_input(g, n, 1), n->inputs[1], y,
                     lo, hi, msg);
}

par_status par_xnn_lower_add_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_binary_q8(p, ni, 0, msg);
}

par_status par_xnn_lower_mul_q8(xa_plan *p, int32_t ni, par_msg *msg)
{
    return lower_binary_q8(p, ni, 1, msg);
}
