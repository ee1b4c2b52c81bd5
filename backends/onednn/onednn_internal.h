/*
 * onednn_internal.h - the onednn backend's private interface: the execution plan that onednn.c builds at prepare
 * and walks at run, and the lowering of each parity op to oneDNN 2.6 primitives through the C API (dnnl.h):
 * onednn_lower.c (the driver: fusion planning and the op table), onednn_lower_mat.c (convolution, deconvolution,
 * inner product, matmul), onednn_lower_elt.c (eltwise, binary, prelu, pooling, softmax, resampling, batch and
 * layer norm, reductions), onednn_lower_move.c (concat, permute, slice, reshape, flatten, quantize, dequantize),
 * sharing the helpers of onednn_util.c.
 *
 * Every value lives in a oneDNN memory object; graph inputs and outputs are memory objects in parity's plain
 * row-major layout (NCHW for 4-D values) whose handles bind points at the caller's buffers. Convolution,
 * deconvolution, inner product and matmul let oneDNN choose their layouts (dnnl_format_tag_any); their weights are
 * reordered once at prepare. A 4-D f32 activation whose every reader takes any layout (a convolution's source,
 * batch norm, an f32 eltwise, a same-shape add, a fused post-op) stays in the layout its producer chose, as
 * frameworks keep oneDNN's blocked tensors between layers; any other value is plain, reached by reorder primitives
 * run as steps like any primitive: oneDNN's reorders are under test with its compute primitives.
 *
 * Nothing here may read a graph through anything but the ABI (core/parity_backend.h), nor allocate at run time.
 */
#ifndef PAR_ONEDNN_INTERNAL_H
#define PAR_ONEDNN_INTERNAL_H

#include <dnnl.h>

#include "core/parity_backend.h"

#define DN_MAX_THREADS 64

typedef struct dn_ctx {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    int threads;      /* knob threads=N: omp_set_num_threads(N) at prepare (oneDNN 2.6 of Debian is built on OpenMP) */
    int bf16;         /* knob fpmath=bf16: dnnl_fpmath_mode_bf16 on every primitive */
    int strict;       /* knob strict=1: PAR_PROC_REQUANT_EXACT (a measurement: docs/backends/onednn.md) */
    int plain;        /* knob layout=plain: every value plain between primitives (reorders around each conv) */
    int prepared;
} dn_ctx;

typedef enum dn_step_kind {
    DN_STEP_PRIM = 0, /* execute a primitive with its arguments */
    DN_STEP_COPY = 1, /* memcpy between two memories' buffers (reshape, flatten: the same bytes) */
} dn_step_kind;

typedef struct dn_step {
    dn_step_kind kind;
    int32_t node;
    dnnl_primitive_t prim;
    int nargs;
    dnnl_exec_arg_t *args;
    dnnl_memory_t src, dst; /* DN_STEP_COPY */
    size_t bytes;
} dn_step;

typedef struct dn_plan {
    dn_ctx *c;
    const par_graph_desc *g;
    dnnl_memory_t *mem;       /* per value: its plain memory, or NULL until first needed */
    int32_t *n_uses;          /* per value: how many node inputs read it */
    unsigned char *is_output; /* per value: a graph output */
    int32_t *fused_into;      /* per node: the node whose primitive computes it as a post-op, or -1 */
    int32_t *post;            /* per node: the first node fused into it (post-op chain head), or -1 */
    int32_t *final_out;       /* per node: the value its (fused) result lands in */
    unsigned char *can_block; /* per value: may stay in the layout its producer chose (every reader takes any) */
    dn_step *steps;
    int n_steps, cap_steps;
    dnnl_memory_t *owned;     /* every memory object the plan created */
    int n_owned, cap_owned;
    void **bufs;              /* buffers the plan allocated (copies of constants) */
    int n_bufs, cap_bufs;
    const void *const *inputs;
    void *const *outputs;
    char note[320];           /* the implementations oneDNN chose, per primitive kind ("conv:brgconv:avx512_core") */
} dn_plan;

/* onednn_util.c */
dnnl_data_type_t par_dn_dt(par_dtype t);
const char *par_dn_status_name(dnnl_status_t s);
/* A dnnl status as a parity status: dnnl_unimplemented (no implementation for these parameters) is UNSUPPORTED,
 * anything else not success is ERROR; both name `what` (the primitive and the call) and the status. */
par_status par_dn_check(dnnl_status_t s, const char *what, par_msg *msg);
/* The plain (row-major) descriptor of rank/dims; rank 0 is a 1-element 1-D tensor. */
par_status par_dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_data_type_t dt, par_msg *msg);
par_status par_dn_md_tag(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_data_type_t dt,
                         dnnl_format_tag_t tag, par_msg *msg);
/* The value's plain memory, created on first use: graph inputs and outputs without a buffer (bind sets it),
 * constants with a copy of their data, other values allocated by oneDNN. */
par_status par_dn_value_mem(dn_plan *p, int32_t v, dnnl_memory_t *out, par_msg *msg);
/* The plan takes m (destroyed at release; destroyed here on failure). */
par_status par_dn_own(dn_plan *p, dnnl_memory_t m, par_msg *msg);
/* A memory of descriptor md owned by the plan, allocated by oneDNN. */
par_status par_dn_mem_new(dn_plan *p, const dnnl_memory_desc_t *md, dnnl_memory_t *out, par_msg *msg);
/* A memory of descriptor md over the plan's copy of n bytes at data (constants seen through another descriptor). */
par_status par_dn_mem_const(dn_plan *p, const dnnl_memory_desc_t *md, const void *data, size_t n, dnnl_memory_t *out,
                            par_msg *msg);
/* Create the primitive of pd (destroyed here), note its implementation under `kind`, append a step. */
par_status par_dn_add_prim(dn_plan *p, int32_t node, const char *kind, dnnl_primitive_desc_t pd, int nargs,
                           const dnnl_exec_arg_t *args, par_msg *msg);
par_status par_dn_add_copy(dn_plan *p, int32_t node, dnnl_memory_t src, dnnl_memory_t dst, size_t bytes,
                           par_msg *msg);
/* A reorder src -> dst (attr may be NULL): a step at run when `now` is 0, else executed once here. */
par_status par_dn_reorder(dn_plan *p, int32_t node, dnnl_memory_t src, dnnl_memory_t dst,
                          const_dnnl_primitive_attr_t attr, int now, par_msg *msg);
/* src in descriptor `want`: the memory itself when its descriptor equals want, else a new memory filled by a
 * reorder (once at prepare for constants, else a step before the primitive). */
par_status par_dn_input_as(dn_plan *p, int32_t node, int32_t v, const dnnl_memory_desc_t *want, dnnl_memory_t *out,
                           par_msg *msg);
/* The memory a primitive writes for value v in descriptor `have`: v's plain memory when equal, else a new memory;
 * *reorder_back is then set and the caller appends par_dn_reorder(new -> plain) after the primitive. */
par_status par_dn_output_as(dn_plan *p, int32_t v, const dnnl_memory_desc_t *have, dnnl_memory_t *out,
                            dnnl_memory_t *plain, par_msg *msg);
/* A new primitive attr with the context's fpmath mode (and scratchpad managed by the library). */
par_status par_dn_attr(dn_plan *p, dnnl_primitive_attr_t *attr, par_msg *msg);
/* Query a primitive descriptor's memory descriptor (src, weights, dst ...). */
const dnnl_memory_desc_t *par_dn_pd_md(dnnl_primitive_desc_t pd, dnnl_query_t what);
int par_dn_is_quant(par_dtype t);
/* The integer clamp of a quantized clip-like activation (relu, relu6, hardtanh, clamp) on output params. */
void par_dn_qclip_range(const par_node *n, const par_value *y, float *lo, float *hi);
/* An activation node as a oneDNN eltwise algorithm with alpha and beta: 1 when it maps exactly, else 0. */
int par_dn_eltwise_alg(const par_node *n, dnnl_alg_kind_t *alg, float *alpha, float *beta);
/* Append the post-op chain of node ni (plan->post) to attr: eltwise activations, sum for a fused add. */
par_status par_dn_post_ops(dn_plan *p, int32_t ni, dnnl_primitive_attr_t attr, int32_t *sum_value, par_msg *msg);

/* The destination of a layout-keeping op (eltwise, batch norm, add) whose source has descriptor smd: y's memory in
 * smd when y may stay blocked (or smd is y's plain layout), else a temporary in smd and *back = y's plain memory,
 * which the caller fills by a reorder after the primitive. */
par_status par_dn_like_dst(dn_plan *p, int32_t yv, const dnnl_memory_desc_t *smd, dnnl_memory_t *dst,
                           dnnl_memory_t *back, par_msg *msg);

/* a and b have the same dtype, scale and zero point */
int par_dn_same_q(const par_value *a, const par_value *b);
/* A reorder step src -> dst with out = scale * (in - zp_in) + zp_out (output scale and zero points as attributes):
 * dequantize, quantize, requantize. */
par_status par_dn_scaled_reorder(dn_plan *p, int32_t ni, dnnl_memory_t src, dnnl_memory_t dst, float scale,
                                 int32_t zp_in, int32_t zp_out, par_msg *msg);

/* onednn_ops.c: the op table */
typedef enum dn_family {
    DN_NONE,                                             /* no lowering: `why` says so */
    DN_CONV, DN_DECONV, DN_LINEAR, DN_MATMUL,             /* onednn_lower_mat.c; fusion heads */
    DN_ELTWISE, DN_BINARY, DN_PRELU, DN_POOL, DN_SOFTMAX, DN_RESAMPLE, DN_BNORM, DN_LNORM, DN_REDUCE, /* _elt.c */
    DN_QCONVERT, DN_CONCAT, DN_STRIDED, DN_COPY,          /* onednn_lower_move.c */
} dn_family;
enum {
    DN_F_CLIP = 1,              /* the clamp family: quantized, a clip of the stored integers (and a post-op) */
    DN_F_Q_VIA_F32 = 2,         /* quantized through f32: dequantizing reorders, the f32 primitive, a requantize */
    DN_F_Q_SAME = 4,            /* quantized when the output's params are the input's */
    DN_F_Q_OK = 8,              /* quantized as it is */
    DN_F_Q_ANY_LAYOUT = 16,     /* quantized: reads its inputs in any layout */
    DN_F_FIRST_ANY_LAYOUT = 32, /* reads its first input in any layout (conv2d, batch_norm) */
    DN_F_F32_ANY_LAYOUT = 64,   /* f32 output: reads its input in any layout (dequantize) */
    DN_F_ANY_PARAM_DTYPE = 128, /* f32: inputs after the first may be of any dtype (batch_norm's statistics) */
};
/* variants: the member of a family that the algorithm does not tell apart */
enum { DN_GELU_BY_ATTR = 1 };                                        /* approximate='tanh': gelu_tanh */
enum { DN_POOL_WINDOW = 0, DN_POOL_GLOBAL, DN_POOL_ADAPTIVE };
enum { DN_UP_NEAREST = 0, DN_UP_NEAREST_EXACT, DN_UP_LINEAR };
enum { DN_QUANTIZE = 0, DN_DEQUANTIZE };
enum { DN_PERMUTE = 0, DN_SLICE };

typedef struct dn_op {
    const char *op;
    dn_family family;
    unsigned flags;             /* DN_F_* */
    int alg;                    /* the oneDNN algorithm (dnnl_alg_kind_t), 0 where the family has one */
    int variant;
    float alpha, beta;          /* eltwise constants, or the defaults of the attributes below */
    const char *alpha_attr, *beta_attr;
    const char *why;            /* DN_NONE: why the op is not lowered */
} dn_op;

/* The row of `op`, or NULL when this backend does not know it. */
const dn_op *par_dn_op(const char *op);

/* onednn_lower.c */
void par_dn_plan_fusions(dn_plan *p);
/* which values may stay in a blocked layout between primitives (plan->can_block) */
void par_dn_plan_layouts(dn_plan *p);
par_status par_dn_check_node(const par_graph_desc *g, int32_t ni, par_msg *msg);
par_status par_dn_lower(dn_plan *p, int32_t ni, par_msg *msg);

/* onednn_lower_mat.c */
par_status par_dn_check_mat(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_dn_lower_conv(dn_plan *p, int32_t ni, par_msg *msg);
par_status par_dn_lower_deconv(dn_plan *p, int32_t ni, par_msg *msg);
par_status par_dn_lower_linear(dn_plan *p, int32_t ni, par_msg *msg);
par_status par_dn_lower_matmul(dn_plan *p, int32_t ni, par_msg *msg);

/* onednn_lower_move.c */
par_status par_dn_lower_move(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg);

/* onednn_lower_elt.c */
par_status par_dn_check_elt(const par_graph_desc *g, const par_node *n, par_msg *msg);
par_status par_dn_lower_elt(dn_plan *p, int32_t ni, const dn_op *r, par_msg *msg);

#endif
