/*
 * vk_ops.c - the vulkan backend's op table: which nodes it runs (supports: f32 only, ranks up to 4) and the
 * dispatches each one lowers to (a shader of shaders/, its OP specialization constant and push constants). Ops are
 * per docs/ops.md; everything not in the table is UNSUPPORTED with a reason naming the op.
 *
 * It must not touch Vulkan objects: it only fills vk_dispatch records (vk_graph.c creates pipelines and records).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

typedef enum vk_kind { K_UNARY, K_BINARY, K_CONV, K_LINEAR, K_MATMUL, K_MAXPOOL, K_AVGPOOL, K_GAP, K_SOFTMAX, K_PRELU, K_BATCHNORM, K_CONCAT, K_BILINEAR, K_REDUCE, K_SLICE, K_PERMUTE, K_PAD, K_ADAPTIVE, K_DECONV, K_NORM, K_WHERE, K_MASKED_FILL, K_GATHER, K_EMBEDDING, K_ROPE, K_SDPA, K_SCATTER } vk_kind;

/* What a lowering reads: the node, its output and first three inputs (-1 absent), the output's element count, and
 * its row of the op table. */
typedef struct vk_at {
    vk_graph *vg;
    const par_graph_desc *g;
    const par_node *n;
    vk_kind kind;
    int32_t code;
    int o, a, b, c;
    int64_t total;
} vk_at;

#define VK_LOWERINGS(X)                                                                                               \
    X(unary) X(binary) X(prelu) X(batch_norm) X(concat) X(resize) X(reduce) X(slice) X(permute) X(pad) X(deconv)      \
    X(conv) X(norm) X(select) X(gather) X(matmul) X(adaptive) X(pool) X(softmax) X(rope) X(sdpa) X(slice_scatter)
#define X(name) static par_status lower_##name(const vk_at *L, par_msg *msg);
VK_LOWERINGS(X)
#undef X

/* The op table, one row per op: the kind (what vk_op_supports checks of its operands), the shader's operation code
 * (vk_codes.h) and the function that lowers it. Adding an op is a row here, its code and its case in the shader. */
static const struct {
    const char *op;
    vk_kind kind;
    int32_t code;
    par_status (*lower)(const vk_at *L, par_msg *msg);
} OPS[] = {
    {"relu", K_UNARY, VK_UNARY_RELU, lower_unary},
    {"relu6", K_UNARY, VK_UNARY_RELU6, lower_unary},
    {"sigmoid", K_UNARY, VK_UNARY_SIGMOID, lower_unary},
    {"tanh", K_UNARY, VK_UNARY_TANH, lower_unary},
    {"hardswish", K_UNARY, VK_UNARY_HARDSWISH, lower_unary},
    {"hardsigmoid", K_UNARY, VK_UNARY_HARDSIGMOID, lower_unary},
    {"gelu", K_UNARY, VK_UNARY_GELU_TANH, lower_unary},
    {"silu", K_UNARY, VK_UNARY_SILU, lower_unary},
    {"elu", K_UNARY, VK_UNARY_ELU, lower_unary},
    {"leaky_relu", K_UNARY, VK_UNARY_LEAKY_RELU, lower_unary},
    {"clamp", K_UNARY, VK_UNARY_CLAMP, lower_unary},
    {"hardtanh", K_UNARY, VK_UNARY_CLAMP, lower_unary},
    {"sqrt", K_UNARY, VK_UNARY_SQRT, lower_unary},
    {"rsqrt", K_UNARY, VK_UNARY_RSQRT, lower_unary},
    {"reshape", K_UNARY, VK_UNARY_COPY, lower_unary},
    {"flatten", K_UNARY, VK_UNARY_COPY, lower_unary},
    {"prelu", K_PRELU, VK_BINARY_PRELU, lower_prelu},
    {"batch_norm", K_BATCHNORM, VK_BINARY_AFFINE, lower_batch_norm},
    {"concat", K_CONCAT, VK_UNARY_PLACE, lower_concat},
    {"upsample_bilinear2d", K_BILINEAR, VK_RESIZE_BILINEAR, lower_resize},
    {"upsample_nearest2d", K_BILINEAR, VK_RESIZE_NEAREST, lower_resize},
    {"upsample_nearest_exact2d", K_BILINEAR, VK_RESIZE_NEAREST_EXACT, lower_resize},
    {"upsample_bicubic2d", K_BILINEAR, VK_RESIZE_BICUBIC, lower_resize},
    {"adaptive_avg_pool2d", K_ADAPTIVE, VK_POOL_ADAPTIVE_AVG, lower_adaptive},
    {"conv_transpose2d", K_DECONV, VK_CONV_ONLY, lower_deconv},
    {"layer_norm", K_NORM, VK_NORM_LAYER, lower_norm},
    {"where", K_WHERE, VK_SELECT_WHERE, lower_select},
    {"masked_fill", K_MASKED_FILL, VK_SELECT_MASKED_FILL, lower_select},
    {"gather", K_GATHER, VK_SELECT_GATHER, lower_gather},
    {"embedding", K_EMBEDDING, VK_SELECT_GATHER, lower_gather},
    {"group_norm", K_NORM, VK_NORM_GROUP, lower_norm},
    {"instance_norm", K_NORM, VK_NORM_GROUP, lower_norm},
    {"rms_norm", K_NORM, VK_NORM_RMS, lower_norm},
    {"sum", K_REDUCE, VK_REDUCE_SUM, lower_reduce},
    {"mean", K_REDUCE, VK_REDUCE_MEAN, lower_reduce},
    {"amax", K_REDUCE, VK_REDUCE_AMAX, lower_reduce},
    {"slice", K_SLICE, VK_MOVE_SLICE, lower_slice},
    {"permute", K_PERMUTE, VK_MOVE_PERMUTE, lower_permute},
    {"pad", K_PAD, VK_MOVE_PAD, lower_pad},
    {"add", K_BINARY, VK_BINARY_ADD, lower_binary},
    {"sub", K_BINARY, VK_BINARY_SUB, lower_binary},
    {"mul", K_BINARY, VK_BINARY_MUL, lower_binary},
    {"div", K_BINARY, VK_BINARY_DIV, lower_binary},
    {"conv2d", K_CONV, VK_CONV_ONLY, lower_conv},
    {"linear", K_LINEAR, VK_MATMUL_LINEAR, lower_matmul},
    {"matmul", K_MATMUL, VK_MATMUL_MATMUL, lower_matmul},
    {"max_pool2d", K_MAXPOOL, VK_POOL_MAX, lower_pool},
    {"avg_pool2d", K_AVGPOOL, VK_POOL_AVG, lower_pool},
    {"global_avg_pool2d", K_GAP, VK_POOL_AVG, lower_pool},
    {"softmax", K_SOFTMAX, VK_SOFTMAX_SOFTMAX, lower_softmax},
    {"log_softmax", K_SOFTMAX, VK_SOFTMAX_LOG, lower_softmax},
    {"rope", K_ROPE, VK_ATTN_ONLY, lower_rope},
    {"sdpa", K_SDPA, VK_ATTN_ONLY, lower_sdpa},
    {"slice_scatter", K_SCATTER, VK_MOVE_SCATTER, lower_slice_scatter},
};

static int find_op(const char *op)
{
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (strcmp(OPS[i].op, op) == 0) return (int)i;
    return -1;
}

vk_dispatch *vk_new_dispatch(vk_graph *vg, const char *shader, int32_t op, uint32_t total, par_msg *msg)
{
    if (vg->n_disp == vg->cap_disp) {
        int cap = vg->cap_disp ? 2 * vg->cap_disp : 16;
        vk_dispatch *d = realloc(vg->disp, (size_t)cap * sizeof *d);
        if (!d) {
            par_msgf(msg, PAR_ERROR, "prepare: out of memory");
            return NULL;
        }
        vg->disp = d;
        vg->cap_disp = cap;
    }
    vk_dispatch *d = &vg->disp[vg->n_disp++];
    memset(d, 0, sizeof *d);
    d->shader = shader;
    d->op = op;
    d->variant = vg->variant;
    for (int s = 0; s < VK_MAX_SLOTS; s++) d->slot[s] = -1;
    d->node = -1; /* an edge conversion unless vk_graph.c's prepare says which node it lowered it for */
    /* Work items beyond one row of workgroups go to a second dimension (maxComputeWorkGroupCount[0] is at least
     * 65535). */
    uint32_t groups = (total + VK_WG_SIZE - 1) / VK_WG_SIZE;
    uint32_t maxx = vg->ctx->props.limits.maxComputeWorkGroupCount[0];
    d->groups_x = groups < maxx ? groups : maxx;
    if (d->groups_x == 0) d->groups_x = 1;
    d->groups_y = (groups + d->groups_x - 1) / d->groups_x;
    if (d->groups_y == 0) d->groups_y = 1;
    return d;
}

int vk_dims4(const par_value *v, int64_t d4[4])
{
    if (v->rank > 4) return -1;
    int lead = 4 - v->rank;
    for (int k = 0; k < 4; k++) d4[k] = k < lead ? 1 : v->dims[k - lead];
    return 0;
}

par_status vk_op_supports(const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *n = &g->nodes[node];
    int k = find_op(n->op);
    if (k < 0) return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: op '%s' has no shader yet", n->op);
    for (int32_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
        const par_value *v = i < n->n_inputs ? par_node_input(g, n, i) : par_node_output(g, n, i - n->n_inputs);
        if (!v) continue;
        /* The one non-f32 operand each op may have: the i32 indices of gather (input 1) and embedding (input 0),
         * the bool condition of where (input 0) and mask of masked_fill (input 1). */
        par_dtype want = PAR_DTYPE_F32;
        if ((OPS[k].kind == K_GATHER && i == 1) || (OPS[k].kind == K_EMBEDDING && i == 0)) want = PAR_DTYPE_I32;
        if ((OPS[k].kind == K_WHERE && i == 0) || (OPS[k].kind == K_MASKED_FILL && i == 1)) want = PAR_DTYPE_BOOL;
        if (v->dtype != want)
            return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: %s on %s tensors (only f32 is implemented)", n->op,
                            par_dtype_name(v->dtype));
        if (v->rank > 4)
            return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: %s on a rank-%d tensor (ranks up to 4 are implemented)",
                            n->op, v->rank);
        if (v->numel > INT32_MAX / 4)
            return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: %s on a tensor of %lld elements (32-bit indexing)", n->op,
                            (long long)v->numel);
    }
    if (OPS[k].kind == K_BATCHNORM) {
        for (int32_t i = 1; i < 5; i++)
            if (!par_node_input(g, n, i) || par_node_input(g, n, i)->kind != PAR_VALUE_CONST)
                return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: batch_norm with a non-constant input %d (the "
                                "parameters are folded at prepare)", i);
        if (par_node_input(g, n, 0)->rank < 2)
            return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: batch_norm of a rank-%d tensor",
                            par_node_input(g, n, 0)->rank);
    }
    if (OPS[k].kind == K_BILINEAR && par_node_input(g, n, 0)->rank != 4) /* upsample_* */
        return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: %s of a rank-%d tensor", n->op,
                        par_node_input(g, n, 0)->rank);
    if (OPS[k].kind == K_PRELU && par_node_input(g, n, 0)->rank < 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: prelu of a rank-%d tensor", par_node_input(g, n, 0)->rank);
    if (OPS[k].kind == K_SOFTMAX && par_node_input(g, n, 0)->rank == 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: %s of a rank-0 tensor", n->op);
    return PAR_OK;
}

static void dims32(int32_t out[4], const int64_t d[4])
{
    for (int k = 0; k < 4; k++) out[k] = (int32_t)d[k];
}

/* A dispatch of `shader` with output tensor `o` and inputs a, b, c (-1 absent), `total` work items. */
static vk_dispatch *emit(vk_graph *vg, const char *shader, int32_t op, int o, int a, int b, int c, int64_t total,
                         par_msg *msg)
{
    vk_dispatch *d = vk_new_dispatch(vg, shader, op, (uint32_t)total, msg);
    if (!d) return NULL;
    int s[VK_MAX_SLOTS] = {o, a, b, c};
    memcpy(d->slot, s, sizeof s);
    const vk_tensor *T = vg->tensors;
    dims32(d->pc.od, T[o].d4);
    if (a >= 0) dims32(d->pc.ad, T[a].d4);
    if (b >= 0) dims32(d->pc.bd, T[b].d4);
    d->pc.lay = (T[o].nc4 ? 1 : 0) | (a >= 0 && T[a].nc4 ? 2 : 0) | (b >= 0 && T[b].nc4 ? 4 : 0) |
                (c >= 0 && T[c].nc4 ? 8 : 0);
    d->pc.total = (int32_t)total;
    return d;
}

par_status vk_emit_copy(vk_graph *vg, int dst, int src, par_msg *msg)
{
    const int64_t *d = vg->tensors[dst].d4;
    return emit(vg, "unary", VK_UNARY_COPY, dst, src, -1, -1, d[0] * d[1] * d[2] * d[3], msg) ? PAR_OK : PAR_ERROR;
}

/* Explicit padding [pt, pl, pb, pr] of a conv2d, from pad_mode (docs/ops.md: same and valid as NNAPI). */
static void conv_padding(const par_node *n, const int64_t in[4], const int64_t out[4], int64_t kh, int64_t kw,
                         int64_t pad[4])
{
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    for (int k = 0; k < 4; k++) pad[k] = par_attr_ints_at(n, "padding", k, 0);
    if (strcmp(mode, "valid") == 0) {
        for (int k = 0; k < 4; k++) pad[k] = 0;
    } else if (strcmp(mode, "same") == 0) {
        int64_t kk[2] = {kh, kw};
        for (int s = 0; s < 2; s++) {
            int64_t st = par_attr_ints_at(n, "stride", s, 1), dl = par_attr_ints_at(n, "dilation", s, 1);
            int64_t total = (out[2 + s] - 1) * st + (kk[s] - 1) * dl + 1 - in[2 + s];
            if (total < 0) total = 0;
            pad[s] = total / 2;
            pad[2 + s] = total - total / 2;
        }
    }
}

/* ---- the lowerings: one function per kind of dispatch, named by the op table's rows --------------------------- */

static par_status lower_unary(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    vk_dispatch *d = emit(L->vg, "unary", L->code, L->o, L->a, -1, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    if (L->code == VK_UNARY_GELU_TANH && strcmp(par_attr_str(n, "approximate", "none"), "tanh") != 0)
        d->op = VK_UNARY_GELU_ERF;
    if (L->code == VK_UNARY_ELU) d->pc.f0 = (float)par_attr_float(n, "alpha", 1.0);
    if (L->code == VK_UNARY_LEAKY_RELU) d->pc.f0 = (float)par_attr_float(n, "negative_slope", 0.01);
    if (L->code == VK_UNARY_CLAMP) par_clamp_bounds_f32(n, &d->pc.f0, &d->pc.f1);
    return PAR_OK;
}

static par_status lower_binary(const vk_at *L, par_msg *msg)
{
    return emit(L->vg, "binary", L->code, L->o, L->a, L->b, -1, L->total, msg) ? PAR_OK : PAR_ERROR;
}

static par_status lower_prelu(const vk_at *L, par_msg *msg)
{
    vk_dispatch *d = emit(L->vg, "binary", L->code, L->o, L->a, L->b, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = 4 - L->g->values[L->a].rank + 1; /* dims[1] of x in the 4-D view */
    return PAR_OK;
}

/* Folded at prepare, in double: scale = weight / sqrt(var + eps), shift = bias - mean * scale; the shader computes
 * x * scale + shift (binary.comp, VK_BINARY_AFFINE). */
static par_status lower_batch_norm(const vk_at *L, par_msg *msg)
{
    const par_graph_desc *g = L->g;
    const par_node *n = L->n;
    const par_value *x = &g->values[L->a];
    int64_t C = x->dims[1];
    double eps = par_attr_float(n, "eps", 1e-5);
    const float *w = g->values[n->inputs[1]].data, *bi = g->values[n->inputs[2]].data;
    const float *mu = g->values[n->inputs[3]].data, *var = g->values[n->inputs[4]].data;
    float *sc = malloc((size_t)C * sizeof *sc), *sh = malloc((size_t)C * sizeof *sh);
    if (!sc || !sh) {
        free(sc);
        free(sh);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    for (int64_t ch = 0; ch < C; ch++) {
        double s = (double)w[ch] / sqrt((double)var[ch] + eps);
        sc[ch] = (float)s;
        sh[ch] = (float)((double)bi[ch] - (double)mu[ch] * s);
    }
    int ts = vk_add_tensor(L->vg, sc, C, msg);
    if (ts < 0) {
        free(sh);
        return PAR_ERROR;
    }
    int th = vk_add_tensor(L->vg, sh, C, msg);
    if (th < 0) return PAR_ERROR;
    vk_dispatch *d = emit(L->vg, "binary", L->code, L->o, L->a, ts, th, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = 4 - x->rank + 1; /* the channel dim in the 4-D view */
    return PAR_OK;
}

/* One placing copy per input, each at its offset along the axis (unary.comp, VK_UNARY_PLACE). */
static par_status lower_concat(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    int rank = L->g->values[L->o].rank;
    int64_t axis = par_attr_int(n, "axis", 1);
    if (axis < 0) axis += rank;
    int ax4 = (int)axis + 4 - rank;
    int64_t at = 0;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        int in = n->inputs[i];
        const int64_t *id = L->vg->tensors[in].d4;
        vk_dispatch *d = emit(L->vg, "unary", L->code, L->o, in, -1, -1, id[0] * id[1] * id[2] * id[3], msg);
        if (!d) return PAR_ERROR;
        d->pc.p0[0] = ax4;
        d->pc.p0[1] = (int32_t)at;
        at += id[ax4];
    }
    return PAR_OK;
}

static par_status lower_resize(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    const vk_tensor *T = L->vg->tensors;
    vk_dispatch *d = emit(L->vg, "resize", L->code, L->o, L->a, -1, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = (int32_t)par_attr_int(n, "align_corners", 0);
    /* r = in / out with size, 1 / scale with scale; in f32 as PyTorch computes it for float tensors. */
    float r[2];
    for (int s = 0; s < 2; s++) {
        double sc = par_attr_floats_at(n, "scale", s, 0.0);
        r[s] = par_attr_count(n, "scale") == 2 && sc > 0 ? (float)(1.0 / sc)
                                                          : (float)T[L->a].d4[2 + s] / (float)T[L->o].d4[2 + s];
    }
    d->pc.f0 = r[0];
    d->pc.f1 = r[1];
    return PAR_OK;
}

static par_status lower_reduce(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    const par_value *x = &L->g->values[L->a];
    int64_t rows = 1;
    int32_t red[4] = {0, 0, 0, 0};
    for (int32_t j = 0; j < par_attr_count(n, "axes"); j++) {
        int64_t ax = par_attr_ints_at(n, "axes", j, 0);
        if (ax < 0) ax += x->rank;
        red[ax + 4 - x->rank] = 1;
    }
    for (int j = 0; j < 4; j++) rows *= red[j] ? 1 : L->vg->tensors[L->a].d4[j];
    vk_dispatch *d = emit(L->vg, "reduce", L->code, L->o, L->a, -1, -1, rows, msg);
    if (!d) return PAR_ERROR;
    memcpy(d->pc.p0, red, sizeof red);
    return PAR_OK;
}

static par_status lower_slice(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    const par_value *x = &L->g->values[L->a];
    int64_t dim = par_attr_int(n, "dim", 0);
    if (dim < 0) dim += x->rank;
    int64_t size = x->dims[dim], start = par_attr_int(n, "start", 0);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    vk_dispatch *d = emit(L->vg, "move", L->code, L->o, L->a, -1, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = (int32_t)dim + 4 - x->rank;
    d->pc.p0[1] = (int32_t)start;
    d->pc.p0[2] = (int32_t)par_attr_int(n, "step", 1);
    return PAR_OK;
}

static par_status lower_permute(const vk_at *L, par_msg *msg)
{
    int rank = L->g->values[L->a].rank, lead = 4 - rank;
    vk_dispatch *d = emit(L->vg, "move", L->code, L->o, L->a, -1, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    for (int j = 0; j < 4; j++)
        d->pc.p1[j] = j < lead ? j : (int32_t)par_attr_ints_at(L->n, "perm", j - lead, j - lead) + lead;
    return PAR_OK;
}

static par_status lower_pad(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    int rank = L->g->values[L->a].rank, lead = 4 - rank;
    const char *mode = par_attr_str(n, "mode", "constant");
    vk_dispatch *d = emit(L->vg, "move", L->code, L->o, L->a, -1, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = strcmp(mode, "reflect") == 0 ? 1 : strcmp(mode, "replicate") == 0 ? 2 : 0;
    for (int j = 0; j < 4; j++) d->pc.p1[j] = j < lead ? 0 : (int32_t)par_attr_ints_at(n, "pads", 2 * (j - lead), 0);
    d->pc.f0 = (float)par_attr_float(n, "value", 0.0);
    return PAR_OK;
}

/* The push constants of a 2-D convolution window: p0 = (KH, KW, stride h, stride w), p1 = (pad top, pad left,
 * dilation h, dilation w), p2 = (groups, has bias). */
static void conv_window(vk_dispatch *d, const par_node *n, const int64_t *wd, const int64_t pad[2], int has_bias)
{
    int32_t p0[4] = {(int32_t)wd[2], (int32_t)wd[3], (int32_t)par_attr_ints_at(n, "stride", 0, 1),
                     (int32_t)par_attr_ints_at(n, "stride", 1, 1)};
    int32_t p1[4] = {(int32_t)pad[0], (int32_t)pad[1], (int32_t)par_attr_ints_at(n, "dilation", 0, 1),
                     (int32_t)par_attr_ints_at(n, "dilation", 1, 1)};
    int32_t p2[4] = {(int32_t)par_attr_int(n, "groups", 1), has_bias, 0, 0};
    memcpy(d->pc.p0, p0, sizeof p0);
    memcpy(d->pc.p1, p1, sizeof p1);
    memcpy(d->pc.p2, p2, sizeof p2);
}

static par_status lower_deconv(const vk_at *L, par_msg *msg)
{
    vk_dispatch *d = emit(L->vg, "deconv2d", VK_CONV_ONLY, L->o, L->a, L->b, L->c >= 0 ? L->c : L->a, L->total, msg);
    if (!d) return PAR_ERROR;
    int64_t pad[2] = {par_attr_ints_at(L->n, "padding", 0, 0), par_attr_ints_at(L->n, "padding", 1, 0)};
    conv_window(d, L->n, L->vg->tensors[L->b].d4, pad, L->c >= 0);
    return PAR_OK;
}

static par_status lower_conv(const vk_at *L, par_msg *msg)
{
    const vk_tensor *T = L->vg->tensors;
    vk_dispatch *d = emit(L->vg, "conv2d", VK_CONV_ONLY, L->o, L->a, L->b, L->c >= 0 ? L->c : L->a, L->total, msg);
    if (!d) return PAR_ERROR;
    int64_t pad[4];
    const int64_t *wd = T[L->b].d4;
    conv_padding(L->n, T[L->a].d4, T[L->o].d4, wd[2], wd[3], pad);
    conv_window(d, L->n, wd, pad, L->c >= 0);
    return PAR_OK;
}

static par_status lower_norm(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    const par_value *x = &L->g->values[L->a];
    int64_t len;
    if (L->code != VK_NORM_GROUP) {
        len = 1;
        for (int32_t j = 0; j < par_attr_count(n, "normalized_shape"); j++)
            len *= par_attr_ints_at(n, "normalized_shape", j, 1);
    } else {
        int64_t groups = strcmp(n->op, "group_norm") == 0 ? par_attr_int(n, "num_groups", 1) : x->dims[1];
        len = x->numel / x->dims[0] / groups;
    }
    int b = L->b, c = L->c;
    vk_dispatch *d = emit(L->vg, "norm", L->code, L->o, L->a, b >= 0 ? b : L->a, c >= 0 ? c : L->a, x->numel / len, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = (int32_t)len;
    d->pc.p0[1] = 4 - x->rank + 1;
    d->pc.p0[2] = b >= 0;
    d->pc.p0[3] = c >= 0;
    d->pc.f0 = (float)par_attr_float(n, "eps", L->code == VK_NORM_RMS ? 1e-6 : 1e-5);
    return PAR_OK;
}

/* where(cond, x, y) and masked_fill(x, mask): the condition (bool bytes) in slot 3. */
static par_status lower_select(const vk_at *L, par_msg *msg)
{
    int is_where = L->kind == K_WHERE;
    int cond = is_where ? L->a : L->b, x = is_where ? L->b : L->a, y = is_where ? L->c : -1;
    vk_dispatch *d = emit(L->vg, "select", L->code, L->o, x, y, cond, L->total, msg);
    if (!d) return PAR_ERROR;
    for (int j = 0; j < 4; j++) d->pc.p0[j] = (int32_t)L->vg->tensors[cond].d4[j];
    d->pc.f0 = (float)par_attr_float(L->n, "value", 0.0);
    return PAR_OK;
}

/* gather(x, idx) along axis and embedding(idx, table): the i32 indices raw, in slot 3. */
static par_status lower_gather(const vk_at *L, par_msg *msg)
{
    const par_graph_desc *g = L->g;
    int is_gather = L->kind == K_GATHER;
    int x = is_gather ? L->a : L->b, idx = is_gather ? L->b : L->a;
    const par_value *X = &g->values[x];
    int64_t axis = is_gather ? par_attr_int(L->n, "axis", 0) : 0;
    if (axis < 0) axis += X->rank;
    int64_t Q = 1;
    for (int j = (int)axis + 1; j < X->rank; j++) Q *= X->dims[j];
    vk_dispatch *d = emit(L->vg, "select", L->code, L->o, x, -1, idx, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p1[0] = (int32_t)g->values[idx].numel;
    d->pc.p1[1] = (int32_t)X->dims[axis];
    d->pc.p1[2] = (int32_t)Q;
    return PAR_OK;
}

/* linear and matmul (matmul.comp; the tiled path, vk_ops_tiled.c, takes them first where it can). */
static par_status lower_matmul(const vk_at *L, par_msg *msg)
{
    vk_dispatch *d = emit(L->vg, "matmul", L->code, L->o, L->a, L->b, L->c >= 0 ? L->c : L->a, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = (int32_t)L->vg->tensors[L->a].d4[3];
    d->pc.p0[1] = L->c >= 0;
    return PAR_OK;
}

static par_status lower_adaptive(const vk_at *L, par_msg *msg)
{
    return emit(L->vg, "pool", L->code, L->o, L->a, -1, -1, L->total, msg) ? PAR_OK : PAR_ERROR;
}

/* max_pool2d, avg_pool2d, and global_avg_pool2d as the average over a window of the whole image. */
static par_status lower_pool(const vk_at *L, par_msg *msg)
{
    const par_node *n = L->n;
    const vk_tensor *T = L->vg->tensors;
    vk_dispatch *d = emit(L->vg, "pool", L->code, L->o, L->a, -1, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    if (L->kind == K_GAP) {
        int32_t p0[4] = {(int32_t)T[L->a].d4[2], (int32_t)T[L->a].d4[3], 1, 1}, p1[4] = {0, 0, 1, 1},
                p2[4] = {0, 0, 1, 0};
        memcpy(d->pc.p0, p0, sizeof p0);
        memcpy(d->pc.p1, p1, sizeof p1);
        memcpy(d->pc.p2, p2, sizeof p2);
        return PAR_OK;
    }
    int is_max = L->kind == K_MAXPOOL;
    int32_t p0[4] = {(int32_t)par_attr_ints_at(n, "kernel", 0, 1), (int32_t)par_attr_ints_at(n, "kernel", 1, 1),
                     (int32_t)par_attr_ints_at(n, "stride", 0, 1), (int32_t)par_attr_ints_at(n, "stride", 1, 1)};
    int32_t p1[4] = {(int32_t)par_attr_ints_at(n, "padding", 0, 0), (int32_t)par_attr_ints_at(n, "padding", 1, 0),
                     is_max ? (int32_t)par_attr_ints_at(n, "dilation", 0, 1) : 1,
                     is_max ? (int32_t)par_attr_ints_at(n, "dilation", 1, 1) : 1};
    int32_t p2[4] = {(int32_t)par_attr_ints_at(n, "padding", 2, 0), (int32_t)par_attr_ints_at(n, "padding", 3, 0),
                     is_max ? 0 : (int32_t)par_attr_int(n, "count_include_pad", 1), 0};
    memcpy(d->pc.p0, p0, sizeof p0);
    memcpy(d->pc.p1, p1, sizeof p1);
    memcpy(d->pc.p2, p2, sizeof p2);
    return PAR_OK;
}

static par_status lower_softmax(const vk_at *L, par_msg *msg)
{
    const par_value *x = &L->g->values[L->a];
    int64_t axis = par_attr_int(L->n, "axis", -1);
    if (axis < 0) axis += x->rank;
    int ax4 = (int)axis + 4 - x->rank;
    int64_t rows = L->total / L->vg->tensors[L->o].d4[ax4];
    vk_dispatch *d = emit(L->vg, "softmax", L->code, L->o, L->a, -1, -1, rows, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = ax4;
    return PAR_OK;
}

/* rope (rope.comp): one work item per pair; x in a, cos and sin (plain [S, D/2]) in b and c. */
static par_status lower_rope(const vk_at *L, par_msg *msg)
{
    vk_dispatch *d = emit(L->vg, "rope", L->code, L->o, L->a, L->b, L->c, L->total / 2, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = par_attr_int(L->n, "interleaved", 0) != 0;
    return PAR_OK;
}

/* sdpa (sdpa.comp): q, k, v in a, b, c, the mask (input 3) in slot 4; p0 = (is_causal, Hq / Hkv, has mask, -), p1
 * v's dims, p2 the mask's, f0 the scale. */
static par_status lower_sdpa(const vk_at *L, par_msg *msg)
{
    const vk_tensor *T = L->vg->tensors;
    const int m = L->n->n_inputs > 3 ? L->n->inputs[3] : -1;
    if (vk_slots(L->vg->ctx) < 5)
        return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: sdpa binds 5 storage buffers; the device allows %u",
                        L->vg->ctx->props.limits.maxPerStageDescriptorStorageBuffers);
    vk_dispatch *d = emit(L->vg, "sdpa", L->code, L->o, L->a, L->b, L->c, L->total, msg);
    if (!d) return PAR_ERROR;
    const double sa = par_attr_float(L->n, "scale", 0.0);
    d->pc.f0 = (float)(sa > 0 ? sa : 1.0 / sqrt((double)T[L->a].d4[3]));
    d->pc.p0[0] = par_attr_int(L->n, "is_causal", 0) != 0;
    d->pc.p0[1] = (int32_t)(T[L->a].d4[1] / T[L->b].d4[1]);
    d->pc.p0[2] = m >= 0;
    dims32(d->pc.p1, T[L->c].d4);
    if (m >= 0) {
        d->slot[4] = m;
        dims32(d->pc.p2, T[m].d4);
        d->pc.lay |= T[m].nc4 ? 16 : 0;
    }
    return PAR_OK;
}

/* slice_scatter (move.comp): x in a, src in b; p0 = (4-D dim, start). */
static par_status lower_slice_scatter(const vk_at *L, par_msg *msg)
{
    const int rank = L->g->values[L->a].rank;
    int64_t dim = par_attr_int(L->n, "dim", 0);
    if (dim < 0) dim += rank;
    vk_dispatch *d = emit(L->vg, "move", L->code, L->o, L->a, L->b, -1, L->total, msg);
    if (!d) return PAR_ERROR;
    d->pc.p0[0] = (int32_t)dim + 4 - rank;
    d->pc.p0[1] = (int32_t)par_attr_int(L->n, "start", 0);
    return PAR_OK;
}

par_status vk_op_lower(vk_graph *vg, int32_t node, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    const par_node *n = &g->nodes[node];
    int k = find_op(n->op);
    if (k < 0) return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: op '%s' has no shader yet", n->op);
    vk_at L = {.vg = vg, .g = g, .n = n, .kind = OPS[k].kind, .code = OPS[k].code, .o = n->outputs[0],
               .a = n->inputs[0], .b = n->n_inputs > 1 ? n->inputs[1] : -1, .c = n->n_inputs > 2 ? n->inputs[2] : -1};
    const int64_t *od = vg->tensors[L.o].d4;
    L.total = od[0] * od[1] * od[2] * od[3];
    return OPS[k].lower(&L, msg);
}

vk_dispatch *vk_emit(vk_graph *vg, const char *shader, int32_t op, int o, int a, int b, int c, int64_t total,
                     par_msg *msg)
{
    return emit(vg, shader, op, o, a, b, c, total, msg);
}

void vk_conv_padding(const par_node *n, const int64_t in[4], const int64_t out[4], int64_t kh, int64_t kw,
                     int64_t pad[4])
{
    conv_padding(n, in, out, kh, kw, pad);
}
