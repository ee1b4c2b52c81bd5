/*
 * vk_codes.h - the operation codes of the compute shaders: the value of each shader's OP specialization constant
 * (shaders/common.glsl, constant_id 1), one list read by both sides, the C lowering (vk_ops.c, vk_ops_tiled.c) and
 * the GLSL shaders (#include "../vk_codes.h" in common.glsl). Plain #defines of integer literals only, so that the
 * file is valid C and valid GLSL; a shader compares OP against these names, never against a bare number.
 */
#ifndef VK_CODES_H
#define VK_CODES_H

/* unary.comp: the elementwise unary ops; COPY is also the layout conversion at the graph's edges and reshape /
 * flatten, PLACE writes its input into a slice of a larger output (concat). */
#define VK_UNARY_COPY 0
#define VK_UNARY_RELU 1
#define VK_UNARY_RELU6 2
#define VK_UNARY_SIGMOID 3
#define VK_UNARY_TANH 4
#define VK_UNARY_HARDSWISH 5
#define VK_UNARY_HARDSIGMOID 6
#define VK_UNARY_GELU_TANH 7
#define VK_UNARY_SILU 8
#define VK_UNARY_ELU 9
#define VK_UNARY_LEAKY_RELU 10
#define VK_UNARY_CLAMP 11
#define VK_UNARY_SQRT 12
#define VK_UNARY_RSQRT 13
#define VK_UNARY_PLACE 14
#define VK_UNARY_GELU_ERF 15

/* binary.comp: the broadcast arithmetic, prelu, and batch_norm folded at prepare into x * b[ch] + c[ch]. */
#define VK_BINARY_ADD 0
#define VK_BINARY_SUB 1
#define VK_BINARY_MUL 2
#define VK_BINARY_DIV 3
#define VK_BINARY_PRELU 4
#define VK_BINARY_AFFINE 5

/* resize.comp */
#define VK_RESIZE_BILINEAR 0
#define VK_RESIZE_NEAREST 1
#define VK_RESIZE_NEAREST_EXACT 2
#define VK_RESIZE_BICUBIC 3

/* pool.comp: max and average windows (global average pooling is the average over the whole image), adaptive
 * average pooling. */
#define VK_POOL_MAX 0
#define VK_POOL_AVG 1
#define VK_POOL_ADAPTIVE_AVG 2

/* reduce.comp */
#define VK_REDUCE_SUM 0
#define VK_REDUCE_MEAN 1
#define VK_REDUCE_AMAX 2

/* move.comp: values moved bit for bit. */
#define VK_MOVE_SLICE 0
#define VK_MOVE_PERMUTE 1
#define VK_MOVE_PAD 2
#define VK_MOVE_SCATTER 3

/* rope.comp and sdpa.comp: one operation each. */
#define VK_ATTN_ONLY 0

/* norm.comp: layer_norm (weight and bias per position in the slice), group_norm and instance_norm (per channel),
 * rms_norm (layer_norm's slices, no mean, weight only). */
#define VK_NORM_LAYER 0
#define VK_NORM_GROUP 1
#define VK_NORM_RMS 2

/* select.comp */
#define VK_SELECT_WHERE 0
#define VK_SELECT_MASKED_FILL 1
#define VK_SELECT_GATHER 2

/* softmax.comp */
#define VK_SOFTMAX_SOFTMAX 0
#define VK_SOFTMAX_LOG 1

/* matmul.comp and gemm.comp (the tiled path): matmul with broadcast batch dims, and linear (x [..., K], w [N, K]). */
#define VK_MATMUL_MATMUL 0
#define VK_MATMUL_LINEAR 1

/* conv_gemm.comp: the general gather, or a 1x1, stride-1, unpadded conv read as a plain GEMM. */
#define VK_CONV_GATHER 0
#define VK_CONV_POINTWISE 1

/* conv2d.comp, conv_dw.comp, deconv2d.comp: one operation each. */
#define VK_CONV_ONLY 0

#endif
