/*
 * nn_ops.h - the nnapi backend's lowering table: parity op name -> the function that appends its NNAPI operations
 * to an nn_model (nn_ops.c: the table and the simple ops; nn_ops_conv.c: convolution, fully connected, pooling,
 * resampling). A lowering either succeeds, or returns PAR_UNSUPPORTED with the reason (an op, parameter, dtype or
 * feature level NNAPI cannot express exactly); it must not call the NNAPI library.
 */
#ifndef PAR_NN_OPS_H
#define PAR_NN_OPS_H

#include "nn_model.h"

typedef par_status (*nn_lower_fn)(nn_model *m, int32_t node, par_msg *msg);

typedef struct nn_lower_entry {
    const char *op;
    nn_lower_fn lower;
} nn_lower_entry;

const nn_lower_entry *par_nn_lower_find(const char *op);

/* nn_ops_conv.c */
par_status par_nn_lower_conv2d(nn_model *m, int32_t node, par_msg *msg);
par_status par_nn_lower_conv_transpose2d(nn_model *m, int32_t node, par_msg *msg);
par_status par_nn_lower_linear(nn_model *m, int32_t node, par_msg *msg);
par_status par_nn_lower_matmul(nn_model *m, int32_t node, par_msg *msg);
par_status par_nn_lower_pool(nn_model *m, int32_t node, par_msg *msg);
par_status par_nn_lower_resize(nn_model *m, int32_t node, par_msg *msg);

/* Helpers shared by the lowering files (nn_ops.c). */
int nn_is_q(par_dtype t);
/* The quantization parameters of a value as the model holds them (zero point shifted for qs8 below level 30). */
int32_t nn_zp(const nn_model *m, const par_value *v);
/* An input of node n as an operand (NN_ANY / NN_LOGICAL / NN_NHWC); -1 with *st, msg set. */
int32_t nn_in(nn_model *m, int32_t node, int32_t k, int want, par_status *st, par_msg *msg);
/* Same scale and zero point (NNAPI requires it of many quantized operations). */
int nn_same_q(const par_value *a, const par_value *b);

#endif /* PAR_NN_OPS_H */
