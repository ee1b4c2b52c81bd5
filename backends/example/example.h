/*
 * example.h - private to the example backend: the prepared graph (the "plan") and the kernels, one per op.
 *
 * The plan maps every graph value to a buffer. Kernels read their inputs through ex_in() and write their one output
 * through ex_out(); they never see the bound buffers any other way, so a kernel cannot write into an input or a
 * constant. Kernels must not allocate: all memory is taken at prepare.
 *
 * Only parity_backend.h is included from the parity tree: this backend is built the way a plugin outside the tree is.
 */
#ifndef EXAMPLE_H
#define EXAMPLE_H

#include "parity_backend.h"

/* Only the entry point leaves the shared object; everything shared between the backend's own files is hidden. */
#if defined(__GNUC__)
#define EX_HIDDEN __attribute__((visibility("hidden")))
#else
#define EX_HIDDEN
#endif

typedef struct ex_plan ex_plan;

/* A kernel computes one node. The graph was validated and shape-inferred by the harness, and supports() accepted
 * the node, so a kernel may rely on the shapes in the graph view. */
typedef void (*ex_kernel_fn)(const ex_plan *p, const par_node *n);

struct ex_plan {
    const par_graph_desc *g;   /* the graph handed to prepare; valid until release */
    const void **src;          /* per value: where to read it (bound input, constant data, or dst) */
    void **dst;                /* per value: where to write it (node values only; NULL for inputs and constants) */
    void **owned;              /* per value: the buffer the plan allocated for an intermediate, or NULL */
    ex_kernel_fn *kernels;     /* per node */
    int32_t *out_copy;         /* per graph output: 1 when run() copies the value into the output buffer at the end */
    void **out_buf;            /* per graph output: the bound output buffer */
    int bound;                 /* bind() succeeded since prepare */
    void **tap;                /* per value: the harness's buffer for it (PAR_PROC_NODE_OUTPUTS), or NULL; NULL when
                                * nothing is tapped */
};

/* The value behind input i / output 0 of node n, and its data. ex_in returns NULL for an absent optional input. */
static inline const par_value *ex_in_value(const ex_plan *p, const par_node *n, int32_t i)
{
    return par_node_input(p->g, n, i);
}

static inline const par_value *ex_out_value(const ex_plan *p, const par_node *n)
{
    return &p->g->values[n->outputs[0]];
}

static inline const float *ex_in(const ex_plan *p, const par_node *n, int32_t i)
{
    return (i < n->n_inputs && n->inputs[i] >= 0) ? (const float *)p->src[n->inputs[i]] : NULL;
}

/* Input i's bytes, for the inputs that are not f32 (bool conditions and masks, i32 indices). */
static inline const void *ex_in_raw(const ex_plan *p, const par_node *n, int32_t i)
{
    return (i < n->n_inputs && n->inputs[i] >= 0) ? p->src[n->inputs[i]] : NULL;
}

static inline float *ex_out(const ex_plan *p, const par_node *n)
{
    return (float *)p->dst[n->outputs[0]];
}

/* Shape helpers. Dims are logical NCHW, row-major. */

/* Product of dims[from..to). */
static inline int64_t ex_prod(const int64_t *dims, int32_t from, int32_t to)
{
    int64_t p = 1;
    for (int32_t d = from; d < to; d++) p *= dims[d];
    return p;
}

/* Strides (in elements) of a tensor of the given dims and rank when it is read through an index of out_rank dims
 * under numpy broadcasting: its dims align to the right, a missing or size-1 dim gets stride 0. */
static inline void ex_broadcast_strides(const int64_t *dims, int32_t rank, int32_t out_rank, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = out_rank - 1; d >= 0; d--) {
        int32_t k = d - (out_rank - rank);
        if (k < 0) {
            strides[d] = 0;
            continue;
        }
        strides[d] = dims[k] == 1 ? 0 : s;
        s *= dims[k];
    }
}

/* The offset, under `strides`, of the element at row-major linear index i of a tensor of the given dims. */
static inline int64_t ex_offset(int64_t i, const int64_t *dims, int32_t rank, const int64_t *strides)
{
    int64_t off = 0;
    for (int32_t d = rank - 1; d >= 0; d--) {
        off += (i % dims[d]) * strides[d];
        i /= dims[d];
    }
    return off;
}

/* Kernels (example_conv.c: convolution and matrix ops, pooling and reductions). */
EX_HIDDEN void ex_conv2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_conv_transpose2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_linear(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_matmul(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_max_pool2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_avg_pool2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_adaptive_avg_pool2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_global_avg_pool2d(const ex_plan *p, const par_node *n);

/* Kernels (example_eltwise.c: elementwise, activations, softmax, batch norm, quantization). */
EX_HIDDEN void ex_add(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_sub(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_mul(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_div(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_minimum(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_maximum(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_pow(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_relu(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_clamp(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_leaky_relu(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_prelu(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_sigmoid(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_tanh(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_hardsigmoid(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_hardswish(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_elu(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_silu(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_gelu(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_abs(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_neg(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_exp(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_log(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_floor(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_ceil(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_round(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_reciprocal(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_sign(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_softplus(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_mish(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_softsign(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_erf(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_sin(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_cos(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_softmax(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_log_softmax(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_batch_norm(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_quantize(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_dequantize(const ex_plan *p, const par_node *n);

/* Kernels (example_norm.c: sqrt, rsqrt, the reductions sum, mean and amax, the norms over their own statistics). */
EX_HIDDEN void ex_sqrt(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_rsqrt(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_sum(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_mean(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_amax(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_prod_reduce(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_argmax(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_argmin(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_amin(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_layer_norm(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_group_norm(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_instance_norm(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_rms_norm(const ex_plan *p, const par_node *n);

/* Kernels (example_attention.c: rope, sdpa, slice_scatter). */
EX_HIDDEN void ex_rope(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_sdpa(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_slice_scatter(const ex_plan *p, const par_node *n);

/* Kernels (example_shape.c: resampling and data movement). */
EX_HIDDEN void ex_upsample_nearest2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_upsample_bilinear2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_upsample_nearest_exact2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_upsample_bicubic2d(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_concat(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_copy(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_permute(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_pad(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_slice(const ex_plan *p, const par_node *n);

/* Kernels (example_select.c: selection by condition, mask and index). */
EX_HIDDEN void ex_where(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_compare(const ex_plan *p, const par_node *n); /* eq, gt, lt, ge, le: bool bytes out */
EX_HIDDEN void ex_logical(const ex_plan *p, const par_node *n); /* logical_and, _or, _xor, _not */
EX_HIDDEN void ex_masked_fill(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_gather(const ex_plan *p, const par_node *n);
EX_HIDDEN void ex_embedding(const ex_plan *p, const par_node *n);

#endif
