/*
 * onednn_ops.c - the onednn backend's op table: one row per op it lowers, naming the lowering family (which
 * function of onednn_lower_mat.c, onednn_lower_elt.c or onednn_lower_move.c builds its primitives), the oneDNN
 * algorithm and its constants or the attributes they come from, and what the op allows when quantized. The
 * driver, the supports checks, the fusions and the post-ops read these rows; none of them compares op names.
 *
 * Adding an op that maps to an existing family (an eltwise activation, a binary, a reduction) is one row here.
 * It is data only: it must not call anything but strcmp.
 */
#include <math.h>

#include "onednn_internal.h"

#define CLIP (DN_F_CLIP | DN_F_Q_ANY_LAYOUT)
#define VIA_F32 (DN_F_Q_VIA_F32 | DN_F_Q_ANY_LAYOUT)

static const dn_op OPS[] = {
    /* op                    family       flags                       alg / variant                       alpha, beta */
    {"conv2d",               DN_CONV,     DN_F_FIRST_ANY_LAYOUT,      0, 0, 0, 0, NULL, NULL, NULL},
    {"conv_transpose2d",     DN_DECONV,   0,                          0, 0, 0, 0, NULL, NULL, NULL},
    {"linear",               DN_LINEAR,   0,                          0, 0, 0, 0, NULL, NULL, NULL},
    {"matmul",               DN_MATMUL,   0,                          0, 0, 0, 0, NULL, NULL, NULL},
    /* eltwise activations: alpha and beta are the constants, or the attribute named with its default */
    {"relu",                 DN_ELTWISE,  CLIP, dnnl_eltwise_relu,       0, 0, 0, NULL, NULL, NULL},
    {"relu6",                DN_ELTWISE,  CLIP, dnnl_eltwise_clip_v2,    0, 0, 6, NULL, NULL, NULL},
    {"hardtanh",             DN_ELTWISE,  CLIP, dnnl_eltwise_clip_v2,    0, -1, 1, "min_val", "max_val", NULL},
    {"clamp",                DN_ELTWISE,  CLIP, dnnl_eltwise_clip_v2,    0, -INFINITY, INFINITY, "min", "max", NULL},
    {"leaky_relu",           DN_ELTWISE,  0, dnnl_eltwise_relu,          0, 0.01f, 0, "negative_slope", NULL, NULL},
    {"sigmoid",              DN_ELTWISE,  0, dnnl_eltwise_logistic,      0, 0, 0, NULL, NULL, NULL},
    {"tanh",                 DN_ELTWISE,  0, dnnl_eltwise_tanh,          0, 0, 0, NULL, NULL, NULL},
    {"elu",                  DN_ELTWISE,  0, dnnl_eltwise_elu,           0, 1, 0, "alpha", NULL, NULL},
    {"gelu",                 DN_ELTWISE,  0, dnnl_eltwise_gelu_erf,      DN_GELU_BY_ATTR, 0, 0, NULL, NULL, NULL},
    {"silu",                 DN_ELTWISE,  0, dnnl_eltwise_swish,         0, 1, 0, NULL, NULL, NULL},
    {"hardswish",            DN_ELTWISE,  0, dnnl_eltwise_hardswish,     0, 0, 0, NULL, NULL, NULL},
    {"sqrt",                 DN_ELTWISE,  0, dnnl_eltwise_sqrt,          0, 0, 0, NULL, NULL, NULL},
    {"rsqrt",                DN_ELTWISE,  0, dnnl_eltwise_pow,           0, 1, -0.5f, NULL, NULL, NULL},
    {"hardsigmoid",          DN_NONE,     0, 0, 0, 0, 0, NULL, NULL, "oneDNN 2.6 has no hardsigmoid eltwise (added in 3.0)"},
    /* binary with broadcast (the second source only); add is also the sum post-op of a fusion */
    {"add",                  DN_BINARY,   VIA_F32, dnnl_binary_add,      0, 0, 0, NULL, NULL, NULL},
    {"sub",                  DN_BINARY,   0, dnnl_binary_sub,            0, 0, 0, NULL, NULL, NULL},
    {"mul",                  DN_BINARY,   VIA_F32, dnnl_binary_mul,      0, 0, 0, NULL, NULL, NULL},
    {"div",                  DN_BINARY,   0, dnnl_binary_div,            0, 0, 0, NULL, NULL, NULL},
    {"prelu",                DN_PRELU,    0,                          0, 0, 0, 0, NULL, NULL, NULL},
    /* pooling: the variant says where the window comes from */
    {"max_pool2d",           DN_POOL,     DN_F_Q_OK, dnnl_pooling_max,   DN_POOL_WINDOW, 0, 0, NULL, NULL, NULL},
    {"avg_pool2d",           DN_POOL,     VIA_F32, dnnl_pooling_avg_exclude_padding, DN_POOL_WINDOW, 0, 0, NULL, NULL, NULL},
    {"global_avg_pool2d",    DN_POOL,     VIA_F32, dnnl_pooling_avg_exclude_padding, DN_POOL_GLOBAL, 0, 0, NULL, NULL, NULL},
    {"adaptive_avg_pool2d",  DN_POOL,     VIA_F32, dnnl_pooling_avg_exclude_padding, DN_POOL_ADAPTIVE, 0, 0, NULL, NULL, NULL},
    {"softmax",              DN_SOFTMAX,  VIA_F32, dnnl_softmax_accurate, 0, 0, 0, NULL, NULL, NULL},
    {"log_softmax",          DN_SOFTMAX,  0, dnnl_softmax_log,           0, 0, 0, NULL, NULL, NULL},
    {"upsample_nearest2d",   DN_RESAMPLE, DN_F_Q_SAME, dnnl_resampling_nearest, DN_UP_NEAREST, 0, 0, NULL, NULL, NULL},
    {"upsample_nearest_exact2d", DN_RESAMPLE, DN_F_Q_SAME, dnnl_resampling_nearest, DN_UP_NEAREST_EXACT, 0, 0, NULL, NULL, NULL},
    {"upsample_bilinear2d",  DN_RESAMPLE, DN_F_Q_VIA_F32, dnnl_resampling_linear, DN_UP_LINEAR, 0, 0, NULL, NULL, NULL},
    {"batch_norm",           DN_BNORM,    DN_F_FIRST_ANY_LAYOUT | DN_F_ANY_PARAM_DTYPE, 0, 0, 0, 0, NULL, NULL, NULL},
    {"layer_norm",           DN_LNORM,    0,                          0, 0, 0, 0, NULL, NULL, NULL},
    {"mean",                 DN_REDUCE,   VIA_F32, dnnl_reduction_mean,  0, 0, 0, NULL, NULL, NULL},
    {"sum",                  DN_REDUCE,   0, dnnl_reduction_sum,         0, 0, 0, NULL, NULL, NULL},
    {"amax",                 DN_REDUCE,   DN_F_Q_SAME, dnnl_reduction_max, 0, 0, 0, NULL, NULL, NULL},
    /* data movement and conversions (onednn_lower_move.c) */
    {"quantize",             DN_QCONVERT, DN_F_Q_OK,                  0, DN_QUANTIZE, 0, 0, NULL, NULL, NULL},
    {"dequantize",           DN_QCONVERT, DN_F_Q_OK | DN_F_F32_ANY_LAYOUT, 0, DN_DEQUANTIZE, 0, 0, NULL, NULL, NULL},
    {"concat",               DN_CONCAT,   0,                          0, 0, 0, 0, NULL, NULL, NULL},
    {"permute",              DN_STRIDED,  DN_F_Q_SAME,                0, DN_PERMUTE, 0, 0, NULL, NULL, NULL},
    {"slice",                DN_STRIDED,  DN_F_Q_SAME,                0, DN_SLICE, 0, 0, NULL, NULL, NULL},
    {"reshape",              DN_COPY,     DN_F_Q_SAME,                0, 0, 0, 0, NULL, NULL, NULL},
    {"flatten",              DN_COPY,     DN_F_Q_SAME,                0, 0, 0, 0, NULL, NULL, NULL},
};

const dn_op *par_dn_op(const char *op)
{
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (strcmp(OPS[i].op, op) == 0) return &OPS[i];
    return NULL;
}
