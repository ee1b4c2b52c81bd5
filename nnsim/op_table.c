/*
 * op_table.c - the operation table of the simulated NNAPI driver: code -> name, the Android API level that introduced
 * it, and its check and eval functions (ops_*.c). The one place that names the kernels; model.c, compile.c and exec.c
 * find an operation here.
 * Must not hold an operation's semantics (ops_*.c) nor the helpers the kernels share (ops.c).
 */
#include <stddef.h>

#include "nnsim.h"

/* One line per simulated operation; its level is the Android API level that introduced it (NDK reference). */
static const nn_op_def op_table[] = {
    {ANEURALNETWORKS_ADD, "ADD", 27, nn_check_binary, nn_eval_binary},
    {ANEURALNETWORKS_AVERAGE_POOL_2D, "AVERAGE_POOL_2D", 27, nn_check_pool, nn_eval_pool},
    {ANEURALNETWORKS_CONCATENATION, "CONCATENATION", 27, nn_check_concat, nn_eval_concat},
    {ANEURALNETWORKS_CONV_2D, "CONV_2D", 27, nn_check_conv, nn_eval_conv},
    {ANEURALNETWORKS_DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", 27, nn_check_dwconv, nn_eval_dwconv},
    {ANEURALNETWORKS_DEQUANTIZE, "DEQUANTIZE", 27, nn_check_dequantize, nn_eval_dequantize},
    {ANEURALNETWORKS_FULLY_CONNECTED, "FULLY_CONNECTED", 27, nn_check_fc, nn_eval_fc},
    {ANEURALNETWORKS_L2_POOL_2D, "L2_POOL_2D", 27, nn_check_pool, nn_eval_pool},
    {ANEURALNETWORKS_LOGISTIC, "LOGISTIC", 27, nn_check_unary, nn_eval_unary},
    {ANEURALNETWORKS_MAX_POOL_2D, "MAX_POOL_2D", 27, nn_check_pool, nn_eval_pool},
    {ANEURALNETWORKS_MUL, "MUL", 27, nn_check_binary, nn_eval_binary},
    {ANEURALNETWORKS_RELU, "RELU", 27, nn_check_unary, nn_eval_unary},
    {ANEURALNETWORKS_RELU1, "RELU1", 27, nn_check_unary, nn_eval_unary},
    {ANEURALNETWORKS_RELU6, "RELU6", 27, nn_check_unary, nn_eval_unary},
    {ANEURALNETWORKS_RESHAPE, "RESHAPE", 27, nn_check_reshape, nn_eval_reshape},
    {ANEURALNETWORKS_RESIZE_BILINEAR, "RESIZE_BILINEAR", 27, nn_check_resize, nn_eval_resize},
    {ANEURALNETWORKS_SOFTMAX, "SOFTMAX", 27, nn_check_softmax, nn_eval_softmax},
    {ANEURALNETWORKS_TANH, "TANH", 27, nn_check_unary, nn_eval_unary},
    {ANEURALNETWORKS_DIV, "DIV", 28, nn_check_binary, nn_eval_binary},
    {ANEURALNETWORKS_MEAN, "MEAN", 28, nn_check_mean, nn_eval_mean},
    {ANEURALNETWORKS_PAD, "PAD", 28, nn_check_pad, nn_eval_pad},
    {ANEURALNETWORKS_STRIDED_SLICE, "STRIDED_SLICE", 28, nn_check_strided_slice, nn_eval_strided_slice},
    {ANEURALNETWORKS_SUB, "SUB", 28, nn_check_binary, nn_eval_binary},
    {ANEURALNETWORKS_TRANSPOSE, "TRANSPOSE", 28, nn_check_transpose, nn_eval_transpose},
    {ANEURALNETWORKS_GROUPED_CONV_2D, "GROUPED_CONV_2D", 29, nn_check_gconv, nn_eval_gconv},
    {ANEURALNETWORKS_LOG_SOFTMAX, "LOG_SOFTMAX", 29, nn_check_softmax, nn_eval_softmax},
    {ANEURALNETWORKS_PAD_V2, "PAD_V2", 29, nn_check_pad, nn_eval_pad},
    {ANEURALNETWORKS_PRELU, "PRELU", 29, nn_check_prelu, nn_eval_prelu},
    {ANEURALNETWORKS_QUANTIZE, "QUANTIZE", 29, nn_check_quantize, nn_eval_quantize},
    {ANEURALNETWORKS_SLICE, "SLICE", 29, nn_check_slice, nn_eval_slice},
    {ANEURALNETWORKS_TRANSPOSE_CONV_2D, "TRANSPOSE_CONV_2D", 29, nn_check_tconv, nn_eval_tconv},
    {ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR, "RESIZE_NEAREST_NEIGHBOR", 29, nn_check_resize, nn_eval_resize},
    {ANEURALNETWORKS_GATHER, "GATHER", 29, nn_check_gather, nn_eval_gather},
    {ANEURALNETWORKS_MAXIMUM, "MAXIMUM", 29, nn_check_minmax, nn_eval_minmax},
    {ANEURALNETWORKS_MINIMUM, "MINIMUM", 29, nn_check_minmax, nn_eval_minmax},
    {ANEURALNETWORKS_RSQRT, "RSQRT", 29, nn_check_unary, nn_eval_unary},
    {ANEURALNETWORKS_HARD_SWISH, "HARD_SWISH", 30, nn_check_unary, nn_eval_unary},
};

const nn_op_def *nn_op_find(int32_t code)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (op_table[i].code == code) return &op_table[i];
    return NULL;
}

const char *nn_op_name(int32_t code)
{
    const nn_op_def *d = nn_op_find(code);
    return d ? d->name : "(unsupported operation)";
}
