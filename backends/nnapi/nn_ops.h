/*
 * nn_ops.h - the nnapi converter's lowering functions, each appending the NNAPI operations of one parity op to an
 * nn_model (nn_ops.c: the ops without weights; nn_ops_conv.c: convolution, fully connected, pooling, resampling;
 * nn_ops_seq.c: the ops of sequence models as graphs of NNAPI operations);
 * nn_walk.c's table names them. A lowering either succeeds, or returns PAR_UNSUPPORTED with the reason (an op, parameter, dtype or
 * feature level NNAPI cannot express exactly); it must not call the NNAPI library.
 */
#ifndef PAR_NN_OPS_H
#define PAR_NN_OPS_H

#include "nn_model.h"

/* code: the row's NNAPI operation (ANEURALNETWORKS_ADD, ...), or for a family that the NNAPI code alone does not
 * tell apart, its member (NN_POOL_*, NN_CLAMP_BY_BOUNDS); 0 where the function lowers one op. */
typedef par_status (*nn_lower_fn)(nn_model *m, int32_t node, int32_t code, par_msg *msg);

typedef struct nn_lower_entry {
    const char *op;
    nn_lower_fn lower;
    int32_t code;
} nn_lower_entry;

/* Members of families whose NNAPI operation is not the row's whole story. */
enum { NN_CLAMP_BY_BOUNDS = -1 };                                   /* relu, relu6, hardtanh, clamp: RELU/RELU1/RELU6 */
enum { NN_POOL_MAX = 1, NN_POOL_AVG, NN_POOL_GLOBAL, NN_POOL_ADAPTIVE }; /* par_nn_lower_pool */

/* nn_ops.c */
/* One NNAPI operation of the operands in[] whose output is node `node`'s output value, in layout nhwc (nn_ops.c). */
par_status par_nn_emit(nn_model *m, int32_t node, int32_t type, uint32_t n_in, const int32_t *in, int nhwc,
                       par_msg *msg);
par_status par_nn_lower_batch_norm(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_binary(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_concat(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_hardsigmoid(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_leaky_relu(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_mean(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_pad(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_permute(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_prelu(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_quantize(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_reshape(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_slice(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_softmax(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_unary(nn_model *m, int32_t node, int32_t code, par_msg *msg);


/* nn_ops_conv.c */
par_status par_nn_lower_conv2d(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_conv_transpose2d(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_linear(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_matmul(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_pool(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_resize(nn_model *m, int32_t node, int32_t code, par_msg *msg);

/* nn_ops_seq.c */
par_status par_nn_lower_embedding(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_masked_fill(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_layer_norm(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_matmul_computed(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_rms_norm(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_rope(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_sdpa(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_silu(nn_model *m, int32_t node, int32_t code, par_msg *msg);
par_status par_nn_lower_slice_scatter(nn_model *m, int32_t node, int32_t code, par_msg *msg);

#endif /* PAR_NN_OPS_H */
