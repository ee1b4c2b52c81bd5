/*
 * qnnpack.h - internals of the qnnpack backend (int8, NHWC, QNNPACK-style): the plan a prepared graph becomes, and
 * the lowering entry points of each op family. Only the backend's own files include it.
 *
 * A plan is a list of steps run in order. Every quantized value has up to two uint8 buffers, one per layout
 * (logical NCHW order and NHWC, the latter for rank-4 tensors); an op asks for its inputs in the layout it wants
 * (qnn_need, which schedules a conversion step the first time) and produces its outputs in one layout. Inside the
 * backend every activation is uint8 with a uint8-domain zero point: qs8 values are stored XOR 0x80 (q + 128), see
 * qnn_kernels.h. Memory is taken at prepare only; run allocates nothing.
 *
 * It includes parity_backend.h only; the lowering files also use core/requant.h, the shared definition of the
 * requantization arithmetic, so that the backend's integers are the reference's by construction.
 */
#ifndef QNNPACK_H
#define QNNPACK_H

#include <pthreadpool.h>

#include "core/parity_backend.h"
#include "qnn_kernels.h"
#include "qnn_s16.h"

enum { QNN_LOGICAL = 0, QNN_NHWC = 1 };

/* Bytes of readable slack after every activation buffer: kernels read whole groups of 4 or 16 channels. */
#define QNN_SLACK 64

typedef struct qnn_ctx {
    int threads;       /* knob threads=N (1 = the caller's thread only) */
    qnn_isa isa;       /* knob kernels=...: the forced set, or -1 for auto */
    int forced;        /* 1 when kernels= named a set */
    int prepared;      /* knobs are refused once a graph was prepared */
} qnn_ctx;

typedef struct qnn_tensor {
    int quant;               /* 1: qu8/qs8, stored uint8 */
    int xor80;               /* 1: qs8 (stored as q ^ 0x80) */
    int32_t rank;
    int64_t dims[PAR_MAX_RANK];
    int64_t numel;
    double scale;            /* per-tensor scale of an activation */
    int32_t zp;              /* zero point in the uint8 domain */
    uint8_t *buf[2];         /* QNN_LOGICAL, QNN_NHWC; NULL until produced or needed */
    float *fbuf;             /* f32 values (logical); NULL for a graph input (read from the bound buffer) */
    int16_t *sbuf;           /* qs16 values (logical, qnn_16a8w.c); NULL for a graph input, as fbuf */
    int32_t input_index;     /* index in g->inputs, or -1 */
    int32_t fused;           /* a fused activation writes this value from its producer: the producer's output */
} qnn_tensor;

typedef struct qnn_buf {
    uint8_t *ptr;
    size_t size;
    int busy;
} qnn_buf;

struct qnn_plan;
typedef void (*qnn_step_fn)(const void *op, struct qnn_plan *p);

typedef struct qnn_step {
    qnn_step_fn run;
    const void *op;
} qnn_step;

typedef struct qnn_plan {
    const par_graph_desc *g;
    const qnn_ctx *ctx;
    const qnn_ukernels *uk;
    pthreadpool_t pool;
    qnn_tensor *t;                  /* [g->n_values] */
    qnn_step *steps;
    int32_t n_steps, cap_steps;
    void **allocs;                  /* everything allocated for the plan, freed at release */
    int32_t n_allocs, cap_allocs;
    int32_t *skip;                  /* [g->n_nodes]: 1 for a node fused into its producer */
    int32_t *variant;               /* [g->n_nodes]: each node's variant, as its row of the op table says */
    int32_t *last_use;              /* [g->n_values]: the last node reading the value (INT32_MAX: kept) */
    struct qnn_buf *bufs;           /* activation buffers, reused once their value is dead (as XNNPACK's
                                     * runtime plans memory: the working set stays in cache) */
    int32_t n_bufs, cap_bufs;
    const void *const *inputs;      /* bound buffers */
    void *const *outputs;
} qnn_plan;

/* zp + round_half_even(x), saturated to [0, 255]: the requantization of the ops computed in double. The rounding
 * comes before the zero point is added (an odd zero point would flip the parity of a tie). Adding and subtracting
 * 1.5 * 2^52 rounds to an integer under the default rounding mode for |x| < 2^51; the clamp comes first, so NaN
 * (compares false: -512) and huge values are safe. */
static inline uint8_t qnn_sat_rne(double x, int32_t zp)
{
    double c = x > -512.0 ? (x < 512.0 ? x : 512.0) : -512.0;
    double r = (c + 6755399441055744.0) - 6755399441055744.0 + zp;
    return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

/* Round half to even of a float already clamped to |f| < 2^22 (1.5 * 2^23 trick, default rounding mode): what
 * cvtps2dq and XNNPACK's scalar fp32 "magic" requantization compute. */
static inline int32_t qnn_rne_f32(float f)
{
    return (int32_t)((f + 12582912.0f) - 12582912.0f);
}

/* Which member of a lowering function's family a row of the op table is (qnnpack.c): the lowering and the checks
 * are told by the table, never by the op's name again. */
typedef enum qnn_variant {
    QNN_V_NONE = 0,
    QNN_V_CONV, QNN_V_CONV_T, QNN_V_LINEAR,                 /* par_qnn_lower_conv */
    QNN_V_RELU, QNN_V_CLAMP, QNN_V_SIGMOID, QNN_V_TANH,     /* par_qnn_lower_unary (clamp: relu6, hardtanh, clamp, */
    QNN_V_HARDSWISH, QNN_V_HARDSIGMOID, QNN_V_LEAKY_RELU,   /* their bounds from par_clamp_bounds) */
    QNN_V_ADD, QNN_V_MUL,                                   /* par_qnn_lower_binary */
    QNN_V_MAX_POOL, QNN_V_AVG_POOL, QNN_V_GLOBAL_AVG_POOL,  /* par_qnn_lower_pool */
    QNN_V_ADAPTIVE_AVG, QNN_V_MEAN,                         /* par_qnn_lower_avg */
    QNN_V_NEAREST, QNN_V_BILINEAR,                          /* par_qnn_lower_resize */
    QNN_V_QD8_LINEAR, QNN_V_QD8_MATMUL,                     /* par_qnn_lower_qd8 */
} qnn_variant;

/* Lowering of one node into steps (qnn_conv.c, qnn_ops.c), named by the op table in qnnpack.c with the row's
 * variant: PAR_UNSUPPORTED with the reason, PAR_ERROR on failure. Adding an op is one row in that table plus its
 * lower function (or a variant of an existing one). */
typedef par_status (*qnn_lower_fn)(qnn_plan *p, int32_t node, int variant, par_msg *msg);

/* What the op table says of an op's tensors, for the checks that answer supports() without allocating. */
enum {
    QNN_OP_WEIGHTS = 1, /* conv2d, conv_transpose2d, linear: checked by par_qnn_check_conv (packed weights,
                         * per-channel scales) */
    QNN_OP_F32_IN = 2,  /* input 0 is f32 (quantize) */
    QNN_OP_F32_OUT = 4, /* output 0 is f32 (dequantize) */
    QNN_OP_RANK4 = 8,   /* input 0 must be rank 4 (pooling, resize) */
    QNN_OP_DYNAMIC = 16, /* linear_dynamic: checked by par_qnn_check_dynamic (f32 in and out, qs8 weights) */
    QNN_OP_Q4 = 32,      /* linear_8da4w: checked by par_qnn_check_8da4w (f32 in and out, packed int4 weights) */
    QNN_OP_QD8 = 64,     /* linear_qd8, matmul_qd8: checked by par_qnn_check_qd8 (f32 in and out, qs8 weights) */
};
par_status par_qnn_check_conv(const par_graph_desc *g, const par_node *n, int variant, par_msg *msg);
par_status par_qnn_check_op(const par_graph_desc *g, const par_node *n, unsigned flags, par_msg *msg);
/* qnn_conv.c */
par_status par_qnn_lower_conv(qnn_plan *p, int32_t node, int variant, par_msg *msg);
/* qnn_ops.c */
par_status par_qnn_lower_quantize(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_dequantize(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_unary(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_binary(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_pool(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_softmax(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_resize(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_copy(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_permute(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_slice(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_concat(qnn_plan *p, int32_t node, int variant, par_msg *msg);
/* qnn_reduce.c: mean and adaptive_avg_pool2d; matmul of two quantized activations */
par_status par_qnn_lower_avg(qnn_plan *p, int32_t node, int variant, par_msg *msg);
par_status par_qnn_lower_matmul(qnn_plan *p, int32_t node, int variant, par_msg *msg);
/* qnn_dynamic.c: linear_dynamic (f32 in and out, qs8 weights) */
par_status par_qnn_check_dynamic(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_qnn_lower_dynamic(qnn_plan *p, int32_t node, int variant, par_msg *msg);
/* qnn_8da4w.c: linear_8da4w (f32 in and out, signed int4 weights with block scales, int8 activations per row) */
par_status par_qnn_check_8da4w(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_qnn_lower_8da4w(qnn_plan *p, int32_t node, int variant, par_msg *msg);
/* qnn_8da4w.c: linear_qd8 and matmul_qd8 (f32 in and out, constant qs8 weights per channel, int8 activations per
 * row or per tensor) */
par_status par_qnn_check_qd8(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_qnn_lower_qd8(qnn_plan *p, int32_t node, int variant, par_msg *msg);
/* qnn_float.c: the f32 ops between the linear_8da4w of a decoder (add, mul, silu, masked_fill, embedding, rms_norm,
 * rope, sdpa, slice_scatter, reshape, flatten, permute): a node is one when its output is f32 and its op is in that
 * file's table; checked and lowered there instead of by the op table of qnnpack.c. */
int par_qnn_float_op(const par_graph_desc *g, const par_node *n);
par_status par_qnn_check_float(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_qnn_lower_float(qnn_plan *p, int32_t node, par_msg *msg);
/* qnn_16a8w.c: the nodes with a qs16 operand (linear 16a8w, quantize, dequantize), checked and lowered there
 * whatever their op */
int par_qnn_s16_node(const par_graph_desc *g, const par_node *n);
par_status par_qnn_check_s16(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_qnn_lower_s16(qnn_plan *p, int32_t node, par_msg *msg);
/* The 16a8w / 16a4w GEMM of a kernel set (qnn_s16.h): vnni, avx2, else scalar. */
qnn_s16_gemm_fn par_qnn_s16_kernel(qnn_isa isa);
/* The 256-entry table of a unary op (its variant: relu, clamp, sigmoid, tanh, hardswish, hardsigmoid, leaky_relu)
 * from the input's to the output's quantization; 0 when the variant is not unary or a tensor is not quantized. */
int par_qnn_unary_lut(const par_node *n, int variant, const qnn_tensor *x, const qnn_tensor *y, uint8_t lut[256]);

#endif /* QNNPACK_H */
