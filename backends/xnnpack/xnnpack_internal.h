/*
 * xnnpack_internal.h - the xnnpack backend's private interface: the execution plan that xnnpack.c builds at
 * prepare and walks at run, and the lowering of each parity op to operators of the system XNNPACK library
 * (xnnpack_lower.c, the driver with the op table, and its parts xnnpack_lower_{conv,eltwise,pool,move,q8}.c, which
 * share xnnpack_lower_util.c) with the layout helpers (xnnpack_layout.c).
 *
 * The plan keeps every 4-D value in NHWC (XNNPACK's layout) and every other value in its logical row-major order.
 * Graph inputs are converted NCHW -> NHWC into the plan's own buffers at the start of run, graph outputs back at
 * the end; a value needed in the other layout inside the graph gets a converted copy (a conversion step). Every
 * buffer an XNNPACK operator reads is the plan's own, with XNN_EXTRA_BYTES of readable padding after it.
 *
 * Nothing here may read a graph through anything but the public ABI (parity_backend.h), and nothing may allocate
 * at run time.
 */
#ifndef PAR_XNNPACK_INTERNAL_H
#define PAR_XNNPACK_INTERNAL_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include "core/parity_backend.h"

typedef enum xa_layout {
    XA_LOGICAL = 0, /* the logical row-major order (NCHW for 4-D values) */
    XA_NHWC = 1,    /* 4-D values only: channels innermost */
} xa_layout;

typedef enum xa_step_kind {
    XA_STEP_OP = 0,       /* run an XNNPACK operator (already set up) */
    XA_STEP_TO_NHWC = 1,  /* src [n][c][hw] -> dst [n][hw][c] */
    XA_STEP_TO_NCHW = 2,  /* src [n][hw][c] -> dst [n][c][hw] */
} xa_step_kind;

typedef struct xa_step {
    xa_step_kind kind;
    xnn_operator_t op;
    const void *src;
    void *dst;
    int64_t n, c, hw;
    size_t esize; /* conversion steps: bytes per element (4 for f32, 1 for qu8/qs8) */
    int32_t node; /* the node whose lowering made this step (-1: a graph input's conversion) */
} xa_step;

typedef struct xa_plan {
    const par_graph_desc *g;
    pthreadpool_t pool;       /* NULL: single-threaded */
    void **buf;               /* per value: its buffer in lay[v], or NULL */
    xa_layout *lay;
    void **alt;               /* per value: a converted copy in the other layout, made on demand */
    int32_t *n_uses;          /* per value: how many node inputs read it */
    unsigned char *is_output; /* per value: a graph output */
    unsigned char *skip;      /* per node: folded into an earlier node (batch norm, clamp) */
    int32_t *final_out;       /* per node: the value its (fused) result lands in */
    int32_t *bn_of;           /* per node: the batch_norm node folded into this conv2d, or -1 */
    float *out_min, *out_max; /* per node: fused clamp (quantized nodes: the integer bounds, exact in float) */
    int64_t *cap, *alt_cap;   /* per value: capacity (bytes) of buf[v] and alt[v] */
    int32_t *last_use;        /* per value: the last node that reads it */
    void **free_buf;          /* activation buffers free for reuse (liveness at prepare), with their capacities */
    int64_t *free_cap;
    int32_t n_free;
    xa_step *steps;
    int32_t n_steps, cap_steps;
    int32_t cur_node;         /* the node being lowered at prepare (-1: none), recorded in each step added */
    double *step_ms;          /* knob profile=1: each step's time in the last run; in_ms / out_ms the boundary */
    double in_ms, out_ms;     /* conversions of graph inputs and outputs */
    void **mem;
    int32_t n_mem, cap_mem;
    const void *const *inputs; /* bound */
    void *const *outputs;
} xa_plan;

/* xnnpack_layout.c */
void *par_xnn_alloc_bytes(xa_plan *p, int64_t nbytes);
float *par_xnn_alloc(xa_plan *p, int64_t numel);
int64_t par_xnn_value_bytes(const par_value *v);
par_status par_xnn_add_step(xa_plan *p, const xa_step *s, par_msg *msg);
/* [n][c][hw] <-> [n][hw][c] for elements of esize bytes (1, 2 or 4). */
void par_xnn_transpose(const void *src, void *dst, int64_t n, int64_t c, int64_t hw, size_t esize, int to_nhwc);
void par_xnn_to_nhwc(const float *src, float *dst, int64_t n, int64_t c, int64_t hw);
void par_xnn_to_nchw(const float *src, float *dst, int64_t n, int64_t c, int64_t hw);
/* The buffer of value v in layout `want` (4-D values; others have one layout), converting when needed: a constant
 * is converted now, a computed value by a step placed before the consumer. NULL with msg on failure. Elements are
 * of the value's dtype. */
const void *par_xnn_input(xa_plan *p, int32_t v, xa_layout want, par_msg *msg);
/* Value v (rank <= 4) viewed as 4-D with leading ones, in NHWC memory order: a broadcasting operand of an NHWC
 * elementwise op. */
const void *par_xnn_input_nhwc4(xa_plan *p, int32_t v, par_msg *msg);
/* Allocate the buffer of value v in layout lay. */
void *par_xnn_output(xa_plan *p, int32_t v, xa_layout lay, par_msg *msg);
/* After node ni is lowered: its inputs read for the last time give their buffers back for reuse. */
void par_xnn_release_inputs(xa_plan *p, int32_t ni);
/* Physical dims of a value in a layout: NHWC permutes a 4-D shape to [N, H, W, C]. */
void par_xnn_phys_dims(const par_value *v, xa_layout lay, size_t *dims);
/* The physical axis of logical axis a in layout lay. */
int32_t par_xnn_phys_axis(const par_value *v, xa_layout lay, int32_t a);
const char *par_xnn_status_name(enum xnn_status s);

/* xnnpack_lower.c: the driver (the op table) */
/* Can XNNPACK (through this adapter) run node n? PAR_OK or PAR_UNSUPPORTED with the precise reason. */
par_status par_xnn_check(const par_graph_desc *g, const par_node *n, par_msg *msg);
/* Plan the fusions (conv2d + batch_norm, producer + clamp) into p->skip, final_out, bn_of, out_min/out_max. */
void par_xnn_plan_fusions(xa_plan *p);
/* Create and set up the operators of node index ni, appending their steps. */
par_status par_xnn_lower(xa_plan *p, int32_t ni, par_msg *msg);

/* Shared by the lowering files. */
static inline int is_op(const par_node *n, const char *op)
{
    return strcmp(n->op, op) == 0;
}

static inline int norm_axis(int64_t a, int32_t rank)
{
    return (int)(a < 0 ? a + rank : a);
}

static inline int is_const(const par_value *v)
{
    return v && v->kind == PAR_VALUE_CONST && v->data;
}

/* xnnpack_lower_util.c: what the driver and the lowering parts share */
/* The parameter rules of an op that hold for XNNPACK's operator of every type (pooling windows and padding, softmax
 * axis, resize scale, slice step, constant weights...), once the types are checked. */
par_status par_xnn_check_params(const par_graph_desc *g, const par_node *n, par_msg *msg);
/* Padding of a conv2d (top, left, bottom, right): explicit, or NNAPI-style same/valid (docs/ops.md). */
void par_xnn_conv_pads(const par_node *n, const par_value *x, const par_value *w, int64_t pad[4]);
/* Pooling extents with ceil_mode turned into extra bottom/right padding; checks XNNPACK's output size. */
par_status par_xnn_pool_pads(const par_node *n, const par_value *x, const par_value *y, int64_t kh, int64_t kw,
                             int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pad[4], par_msg *msg);
/* The node reading v as its input 0 when v has exactly that one reader and is no graph output; else -1. */
int32_t par_xnn_sole_consumer(const xa_plan *p, int32_t from, int32_t v);
/* A create status as a parity status: invalid/unsupported parameters are UNSUPPORTED with the function's name. */
par_status par_xnn_created(enum xnn_status st, const char *fn, par_msg *msg);
/* Append a created operator as a step once its setup succeeded; the operator is deleted on any failure. */
par_status par_xnn_push_op(xa_plan *p, xnn_operator_t op, enum xnn_status setup, const char *fn, par_msg *msg);
/* The layout a unary op keeps: its input's. */
xa_layout par_xnn_current_layout(const xa_plan *p, int32_t v);
/* The buffers of node ni's input 0 and (fused) output, both in layout lay. On failure the operator op (when not
 * NULL) is deleted and PAR_ERROR returned with msg set. */
par_status par_xnn_io(xa_plan *p, int32_t ni, xa_layout lay, xnn_operator_t op, const void **in, void **out,
                      par_msg *msg);
/* A strided copy of `batch` rows of `channels` elements of esize bytes (copy_nc_x32 or copy_nc_x8). */
par_status par_xnn_copy_rows(xa_plan *p, size_t esize, size_t batch, size_t channels, size_t in_stride,
                             size_t out_stride, const void *in, void *out, par_msg *msg);

/* The lowerings the op table names: create and set up the operators of node ni, append their steps. */
/* xnnpack_lower_conv.c (f32) */
par_status par_xnn_lower_conv2d(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_deconv(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_fc(xa_plan *p, int32_t ni, par_msg *msg); /* linear, matmul */
/* xnnpack_lower_eltwise.c (f32) */
par_status par_xnn_lower_add(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_sub(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_mul(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_div(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_clamp(xa_plan *p, int32_t ni, par_msg *msg); /* relu, relu6, hardtanh, clamp */
par_status par_xnn_lower_leaky_relu(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_elu(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_sigmoid(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_hardswish(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_prelu(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_hardsigmoid(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_batch_norm(xa_plan *p, int32_t ni, par_msg *msg);
/* xnnpack_lower_pool.c (f32) */
par_status par_xnn_lower_pool2d(xa_plan *p, int32_t ni, par_msg *msg); /* max_pool2d, avg_pool2d */
par_status par_xnn_lower_global_avg(xa_plan *p, int32_t ni, par_msg *msg); /* global_avg_pool2d, mean */
par_status par_xnn_lower_adaptive(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_softmax(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_resize(xa_plan *p, int32_t ni, par_msg *msg);
/* xnnpack_lower_move.c (any element size: f32, and qu8/qs8 where the input's parameters are the output's) */
par_status par_xnn_lower_concat(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_reshape(xa_plan *p, int32_t ni, par_msg *msg); /* reshape, flatten */
par_status par_xnn_lower_slice(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_pad(xa_plan *p, int32_t ni, par_msg *msg);
/* xnnpack_lower_q8.c: quantized (qu8/qs8) graphs */
/* Is node n quantized (an integer input or output, or quantize / dequantize)? */
int par_xnn_is_q8_node(const par_graph_desc *g, const par_node *n);
/* par_xnn_check for quantized nodes whose op has a quantized lowering. */
par_status par_xnn_check_q8(const par_graph_desc *g, const par_node *n, par_msg *msg);
/* The requantization scheme of the XNNPACK operator node n is lowered to (PAR_PROC_NODE_REQUANT), as measured
 * (docs/findings.md, finding 5). */
par_requant par_xnn_requant_q8(const par_graph_desc *g, const par_node *n);
/* The clamps that fold into a quantized producer's output_min/output_max (same scale and zero point). */
void par_xnn_plan_fusions_q8(xa_plan *p);
par_status par_xnn_lower_conv_q8(xa_plan *p, int32_t ni, par_msg *msg); /* conv2d, linear */
par_status par_xnn_lower_add_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_mul_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_quantize_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_dequantize_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_clamp_q8(xa_plan *p, int32_t ni, par_msg *msg); /* relu, relu6, hardtanh, clamp */
par_status par_xnn_lower_sigmoid_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_tanh_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_pool_q8(xa_plan *p, int32_t ni, par_msg *msg); /* max_pool2d, avg_pool2d */
par_status par_xnn_lower_gap_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_softmax_q8(xa_plan *p, int32_t ni, par_msg *msg);
par_status par_xnn_lower_resize_q8(xa_plan *p, int32_t ni, par_msg *msg);

#endif
