/*
 * shape.h - the geometry of the ops: output shapes and the resolved attributes behind them (convolution padding
 * and output size, pooling windows, reduced axes, resize sizes, slices, permutations, pads), computed from a node's
 * attributes and its inputs' shapes. Shape inference (the infer column of core/ops.def, declared in core/ops.h) is
 * built on it in core/shape_<family>.c, and the reference kernels call the same functions to walk their loops, so
 * a kernel cannot disagree with the shape the graph allocated.
 *
 * It must not compute any tensor's values nor know about error budgets: those belong to reference/. Errors name
 * the attribute or input and the reason; the caller prefixes the node's name and op.
 */
#ifndef PAR_SHAPE_H
#define PAR_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"

/* The largest dimension (and element count) a graph may hold: 2^28. */
#define PAR_SHAPE_DIM_MAX 268435456LL
/* The largest value of a geometry attribute (stride, dilation, padding, groups, kernel): beyond it the int64 index
 * arithmetic of the kernels could overflow. */
#define PAR_SHAPE_ATTR_MAX 2147483647LL

/* The element count of a shape (1 for rank 0). (shape_dims.c) */
int64_t par_shape_numel(int32_t rank, const int64_t *dims);
/* Normalize a possibly negative axis against rank; -1 when out of range. */
int32_t par_axis_norm(int64_t axis, int32_t rank);
/* "[1,3,224,224]" ("[]" for rank 0), truncated to len. */
void par_shape_format(int32_t rank, const int64_t *dims, char *buf, size_t len);

/* floor(a / b) and ceil(a / b) for b > 0, whatever the sign of a (C's division truncates toward zero). */
static inline int64_t par_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t par_ceil_div(int64_t a, int64_t b) { return -par_floor_div(-a, b); }

/* Whether two shapes are equal (rank and every dimension). */
static inline int par_shape_equal(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db)
{
    if (ra != rb) return 0;
    for (int32_t i = 0; i < ra; i++)
        if (da[i] != db[i]) return 0;
    return 1;
}

/* The stored integer range of a quantized dtype (par_dtype_qrange), as doubles. */
static inline void par_quant_range(par_dtype t, double *lo, double *hi)
{
    int32_t l, h;
    par_dtype_qrange(t, &l, &h);
    *lo = l;
    *hi = h;
}

/* ---- convolutions (shape_conv.c) ---------------------------------------------------------------------------- */

/* Geometry of one convolution, attributes resolved (pad_mode applied). */
typedef struct par_conv_geom {
    int64_t n, c, h, w;       /* input */
    int64_t o, kh, kw;        /* output channels, kernel */
    int64_t oh, ow;           /* output spatial size */
    int64_t groups;
    int64_t sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;
    int64_t oph, opw;         /* conv_transpose2d only */
} par_conv_geom;

/* conv2d: x [N,C,H,W], weight [O, C/groups, KH, KW], optional bias [O] (bd NULL when absent). */
par_status par_conv2d_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                           const int64_t *bd, int32_t br, par_conv_geom *q, par_msg *msg);
/* conv_transpose2d: x [N,C,H,W], weight [C, O/groups, KH, KW], optional bias [O]. */
par_status par_conv_transpose2d_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                                     const int64_t *bd, int32_t br, par_conv_geom *q, par_msg *msg);

/* ---- pooling and reductions (shape_pool.c) ------------------------------------------------------------------ */

typedef struct par_pool_geom {
    int64_t n, c, h, w;
    int64_t kh, kw, sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;
    int64_t oh, ow;
    int ceil_mode, count_include_pad;
} par_pool_geom;

/* max_pool2d (dilated = 1) and avg_pool2d (avg = 1: count_include_pad is read) windows on x [N,C,H,W]. */
par_status par_pool2d_geom(const par_node *n, int32_t xr, const int64_t *xd, int dilated, int avg, par_pool_geom *q,
                           par_msg *msg);
/* The output shape [N, C, OH, OW] of a pooling geometry. */
void par_pool2d_shape(const par_pool_geom *q, int32_t *rank, int64_t *dims);
/* adaptive_avg_pool2d (output_size) or, with global = 1, global_avg_pool2d ([N, C, 1, 1]). */
par_status par_adaptive_pool_shape(const par_node *n, int32_t xr, const int64_t *xd, int global, int32_t *yr,
                                   int64_t *yd, par_msg *msg);
/* mean: reduced[d] = 1 for each reduced dimension d of x; the output shape with or without the kept 1s. */
par_status par_mean_shape(const par_node *n, int32_t xr, const int64_t *xd, int *reduced, int32_t *yr, int64_t *yd,
                          par_msg *msg);

/* argmax / argmin: the one reduced dimension (*axis, normalized), the output shape with or without the kept 1. */
par_status par_arg_shape(const par_node *n, int32_t xr, const int64_t *xd, int32_t *axis, int32_t *yr, int64_t *yd,
                         par_msg *msg);

/* ---- linear and matmul (shape_matrix.c) --------------------------------------------------------------------- */

/* linear: x [..., K], weight [O, K], optional bias [O] -> [..., O]. */
par_status par_linear_shape(int32_t xr, const int64_t *xd, int32_t wr, const int64_t *wd, const int64_t *bd,
                            int32_t br, int32_t *yr, int64_t *yd, par_msg *msg);
/* linear_qd8 (matmul 0: w qs8 [O, K]) and matmul_qd8 (matmul 1: b qs8 [K, N], rank 2): the output's shape, the
 * weight's dtype and quantization (per channel on the output channels' axis, or per tensor with zero point 0) and
 * K's int32 bound checked; the errors name the input. */
par_status par_qd8_shape(const par_graph_desc *g, const par_node *n, int matmul, int32_t *yr, int64_t *yd,
                         par_msg *msg);
/* linear_8da4w and linear_16a4w: x [..., K] (K even), weight [O, K / 2] (packed int4), scales [O, K / block],
 * optional bias [O] -> [..., O]; attribute block even and dividing K. */
par_status par_8da4w_shape(const par_graph_desc *g, const par_node *n, int32_t *yr, int64_t *yd, par_msg *msg);
/* matmul: a [..., M, K], b [..., K, N] -> [broadcast(...), M, N]. */
par_status par_matmul_shape(int32_t ar, const int64_t *ad, int32_t br, const int64_t *bd, int32_t *yr, int64_t *yd,
                            par_msg *msg);

/* ---- resampling (shape_resize.c) ---------------------------------------------------------------------------- */

/* The output size of both spatial axes from in_hw = [H, W]; scale[i] > 0 when the scale attribute defines axis i,
 * else 0 (the size attribute does). */
par_status par_resize_sizes(const par_node *n, const int64_t *in_hw, int64_t *out_hw, double *scale, par_msg *msg);

/* ---- data movement (shape_data.c) --------------------------------------------------------------------------- */

/* permute: the normalized permutation of a rank-`rank` input. */
par_status par_permute_read(const par_node *n, int32_t rank, int32_t *perm, par_msg *msg);
/* pad: the 2 * rank pads [begin0, end0, begin1, end1, ...]. */
par_status par_pad_read(const par_node *n, int32_t rank, int64_t *pads, par_msg *msg);

typedef struct par_slice_geom {
    int32_t dim;
    int64_t start, step, count;
} par_slice_geom;

/* slice: the dimension, first index, step and element count selected on an input of shape dims. */
par_status par_slice_resolve(const par_node *n, int32_t rank, const int64_t *dims, par_slice_geom *s, par_msg *msg);

/* ---- selection (shape_select.c) ----------------------------------------------------------------------------- */

/* gather: x [outer..., n, inner...] indexed on `axis` by an index tensor of `count` elements; the output shape is
 * x.shape[:axis] + indices.shape + x.shape[axis+1:]. */
typedef struct par_gather_geom_t {
    int32_t axis;
    int64_t outer, n, inner, count;
    int32_t rank;
    int64_t dims[PAR_MAX_RANK];
} par_gather_geom_t;

par_status par_gather_geom(const par_node *n, int32_t xr, const int64_t *xd, int32_t ir, const int64_t *id,
                           par_gather_geom_t *q, par_msg *msg);

/* pad: the mode attribute (PAR_PAD_CONSTANT when absent). */
enum { PAR_PAD_CONSTANT = 0, PAR_PAD_REFLECT = 1, PAR_PAD_REPLICATE = 2 };
int par_pad_mode(const par_node *n);

/* ---- elementwise and normalization (shape_elementwise.c) ---------------------------------------------------- */

/* The names of batch_norm's five inputs, for messages: x, weight, bias, running_mean, running_var. */
extern const char *const par_batch_norm_inputs[5];

/* ---- normalization over the input's own statistics (shape_norm.c) ------------------------------------------- */

/* layer_norm, group_norm, instance_norm and rms_norm normalize `groups` row-major contiguous groups of x, of n
 * elements each. Element j of group g takes its weight and bias at index (g % per_sample) * cpg + j / inner:
 *   layer_norm     per_sample 1, cpg n, inner 1 (index j; weight and bias have shape normalized_shape)
 *   rms_norm       as layer_norm (weight only)
 *   group_norm     per_sample num_groups, cpg C / num_groups, inner the spatial size (weight and bias [C])
 *   instance_norm  per_sample C, cpg 1, inner the spatial size (weight and bias [C]) */
typedef struct par_norm_geom {
    int64_t groups, n, per_sample, cpg, inner;
    int32_t w_rank;                  /* the shape weight and bias must have */
    int64_t w_dims[PAR_MAX_RANK];
    double eps;
} par_norm_geom;

/* The geometry of node n (op layer_norm, group_norm, instance_norm or rms_norm) on x of shape xd, with its attributes
 * checked. */
par_status par_norm_geom_of(const par_node *n, int32_t xr, const int64_t *xd, par_norm_geom *q, par_msg *msg);
/* The names of the norms' three inputs, for messages: x, weight, bias. */
extern const char *const par_norm_inputs[3];

/* ---- decoder-block ops (shape_attention.c) ------------------------------------------------------------------ */

/* rope: x [..., S, D] in rows of D elements (rows = numel / D; row r is position r % S), cos and sin [S, D/2];
 * pair i of a row is (2i, 2i + 1) when interleaved, else (i, i + D/2). */
typedef struct par_rope_geom {
    int64_t rows, S, D;
    int interleaved;
} par_rope_geom;
par_status par_rope_geom_of(const par_graph_desc *g, const par_node *n, par_rope_geom *q, par_msg *msg);

/* sdpa: q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], output [B, Hq, Sq, Dv]; query head h reads
 * key/value head h / (Hq / Hkv); scale the attribute or 1/sqrt(D); the mask (has_mask) read at [b, h, i, j] with
 * mask_stride (0 along a broadcast dimension). */
typedef struct par_sdpa_geom {
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    double scale;
    int causal, has_mask;
    int64_t mask_stride[4];
} par_sdpa_geom;
par_status par_sdpa_geom_of(const par_graph_desc *g, const par_node *n, par_sdpa_geom *q, par_msg *msg);

/* slice_scatter: x viewed as [outer, extent, inner] around dimension dim; src [outer, len, inner] goes to rows
 * [start, start + len). */
typedef struct par_scatter_geom {
    int32_t dim;
    int64_t start, len, outer, inner, extent;
} par_scatter_geom;
par_status par_slice_scatter_geom_of(const par_graph_desc *g, const par_node *n, par_scatter_geom *q, par_msg *msg);

#endif
