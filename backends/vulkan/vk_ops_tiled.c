/*
 * vk_ops_tiled.c - the vulkan backend's fast lowerings of conv2d, linear and matmul: the tiled shaders
 * (shaders/conv_gemm.comp, conv_dw.comp, gemm.comp) when their conditions hold, with the weights repacked at
 * prepare into the layout each shader reads (as XNNPACK packs its weights). vk_graph.c asks here first for every
 * node (vk_lower_tiled); a node this file does not take is lowered by vk_ops.c's op table, with the general
 * one-work-item-per-output shaders (conv2d.comp, matmul.comp) for conv2d, linear and matmul.
 *
 * Conditions: the weights of conv2d are a constant (they are packed); depthwise (groups == C == O) needs an
 * NC4HW4 input (a node output or graph input, not a constant); a grouped conv that is not depthwise takes the GEMM
 * when each group has at least 8 output channels (fewer would waste most of a 32-channel tile); linear and matmul
 * take the GEMM from 16 rows (per batch) up; the workgroup grid must fit maxComputeWorkGroupCount.
 *
 * conv2d absorbs a following batch_norm and clamp-like activation (see "Epilogue fusion" below).
 *
 * It must not touch Vulkan objects: it only fills vk_dispatch records and adds packed constant tensors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

/* The tile sizes. TILE_MN must equal the shaders' constants (conv_gemm.comp TO, TP; gemm.comp TM, TN); the others
 * are set as specialization constant 2 of each dispatch: TILE_K (TK of conv_gemm.comp and gemm.comp; conv_gemm's
 * weights are packed to a multiple of it) and DW_RW (RW of conv_dw.comp). */
#define TILE_MN 32
#define TILE_K 16
#define DW_RW 4
#define GEMM_MIN_ROWS 16 /* linear / matmul with fewer rows (per batch) take the direct shader */

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

static int grid_fits(const vk_graph *vg, int64_t gx, int64_t gy)
{
    const uint32_t *max = vg->ctx->props.limits.maxComputeWorkGroupCount;
    return gx >= 1 && gy >= 1 && gx <= (int64_t)max[0] && gy <= (int64_t)max[1];
}

/* Whether packed weights of n floats (padding included) fit one storage buffer and 32-bit indexing; the general
 * shader reads the unpacked weights when they do not. */
static int packed_fits(const vk_graph *vg, int64_t n)
{
    return n <= INT32_MAX / 4 && (uint64_t)n * 4 <= vg->ctx->props.limits.maxStorageBufferRange;
}

/* A dispatch with explicit workgroup counts (vk_new_dispatch sizes it for `total` items; the tiled shaders count
 * workgroups, not items). */
static vk_dispatch *tiled_dispatch(vk_graph *vg, const char *shader, int32_t op, int o, int a, int b, int c,
                                   int64_t total, uint32_t gx, uint32_t gy, par_msg *msg)
{
    vk_dispatch *d = vk_emit(vg, shader, op, o, a, b, c, total, msg);
    if (!d) return NULL;
    d->groups_x = gx;
    d->groups_y = gy;
    d->spec[0] = TILE_K;
    return d;
}

static void conv_params(vk_dispatch *d, const par_node *n, const int64_t pad[4], int64_t KH, int64_t KW)
{
    int32_t p0[4] = {(int32_t)KH, (int32_t)KW, (int32_t)par_attr_ints_at(n, "stride", 0, 1),
                     (int32_t)par_attr_ints_at(n, "stride", 1, 1)};
    int32_t p1[4] = {(int32_t)pad[0], (int32_t)pad[1], (int32_t)par_attr_ints_at(n, "dilation", 0, 1),
                     (int32_t)par_attr_ints_at(n, "dilation", 1, 1)};
    memcpy(d->pc.p0, p0, sizeof p0);
    memcpy(d->pc.p1, p1, sizeof p1);
    d->pc.p2[0] = (int32_t)par_attr_int(n, "groups", 1);
}

/* ---- Epilogue fusion ----
 * A conv2d lowered here may absorb the nodes that follow it when nothing else sees the values between: a
 * batch_norm with constant statistics (folded, in double, into a per-channel scale and shift exactly as vk_ops.c
 * folds a batch_norm of its own), then an activation that is a clamp (relu, relu6, clamp, hardtanh). The shader
 * computes ((acc + bias) * scale + shift), then the clamp with NaN propagated: the same f32 operations, in the same
 * order, as the separate dispatches, without writing and re-reading the intermediates. The absorbed nodes are
 * marked in vg->skip and lower to nothing; the conv's dispatch writes the last absorbed node's output.
 *
 * Flags in p2.y (conv_gemm.comp, conv_dw.comp): bit 0 bias c[o]; bit 1 scale c[O + o] and shift c[2 O + o];
 * bit 2 clamp to [f0, f1]. */
enum { EPI_BIAS = 1, EPI_AFFINE = 2, EPI_CLAMP = 4 };

typedef struct epilogue {
    int out;        /* the value the dispatch writes */
    int c;          /* slot 3: the bias, or the [3][O] tensor of bias, scale, shift; -1 none */
    int32_t flags;
    float lo, hi;
} epilogue;

/* The one node reading value v, or -1 when none, several, or v is a graph output. */
static int32_t sole_consumer(const par_graph_desc *g, int v)
{
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return -1;
    int32_t who = -1;
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == v) {
                if (who >= 0 && who != n) return -1;
                if (who == n) return -1; /* read twice by one node */
                who = n;
            }
    return who;
}

static int fusable_bn(const par_graph_desc *g, const par_node *bn, int v)
{
    if (strcmp(bn->op, "batch_norm") != 0 || bn->n_inputs != 5 || bn->inputs[0] != v) return 0;
    for (int32_t i = 1; i < 5; i++) {
        const par_value *p = par_node_input(g, bn, i);
        if (!p || p->kind != PAR_VALUE_CONST || p->dtype != PAR_DTYPE_F32 || !p->data) return 0;
    }
    return g->values[bn->outputs[0]].dtype == PAR_DTYPE_F32;
}

static par_status plan_epilogue(vk_graph *vg, const par_node *n, epilogue *e, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    int o = n->outputs[0];
    int bias = n->n_inputs > 2 ? n->inputs[2] : -1;
    int64_t O = g->values[o].dims[1];
    e->out = o;
    e->c = bias;
    e->flags = bias >= 0 ? EPI_BIAS : 0;
    e->lo = -INFINITY;
    e->hi = INFINITY;
    if (!vg->skip) {
        vg->skip = calloc((size_t)g->n_nodes, 1);
        if (!vg->skip) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    int32_t next = sole_consumer(g, o);
    const par_node *bn = next >= 0 ? &g->nodes[next] : NULL;
    int bias_const = bias < 0 || (g->values[bias].kind == PAR_VALUE_CONST && g->values[bias].data);
    if (bn && bias_const && fusable_bn(g, bn, o)) {
        float *ep = calloc((size_t)(3 * O), sizeof *ep);
        if (!ep) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        const float *bi = bias >= 0 ? g->values[bias].data : NULL;
        const float *w = g->values[bn->inputs[1]].data, *b = g->values[bn->inputs[2]].data;
        const float *mu = g->values[bn->inputs[3]].data, *var = g->values[bn->inputs[4]].data;
        double eps = par_attr_float(bn, "eps", 1e-5);
        for (int64_t ch = 0; ch < O; ch++) {
            double sc = (double)w[ch] / sqrt((double)var[ch] + eps);
            ep[ch] = bi ? bi[ch] : 0.0f;
            ep[O + ch] = (float)sc;
            ep[2 * O + ch] = (float)((double)b[ch] - (double)mu[ch] * sc);
        }
        int t = vk_add_tensor(vg, ep, 3 * O, msg);
        if (t < 0) return PAR_ERROR;
        e->c = t;
        e->flags = EPI_BIAS | EPI_AFFINE;
        vg->skip[next] = 1;
        e->out = bn->outputs[0];
        next = sole_consumer(g, e->out);
    }
    const par_node *act = next >= 0 ? &g->nodes[next] : NULL;
    if (act && act->n_inputs == 1 && act->inputs[0] == e->out && g->values[act->outputs[0]].dtype == PAR_DTYPE_F32 &&
        g->values[act->outputs[0]].rank == 4 && par_clamp_bounds_f32(act, &e->lo, &e->hi)) {
        e->flags |= EPI_CLAMP;
        vg->skip[next] = 1;
        e->out = act->outputs[0];
    }
    return PAR_OK;
}

static void set_epilogue(vk_dispatch *d, const epilogue *e)
{
    d->pc.p2[1] = e->flags;
    d->pc.f0 = e->lo;
    d->pc.f1 = e->hi;
}

/* Depthwise: weights [C, 1, KH, KW] packed as [ceil(C/4)][KH*KW][4], zeros beyond C. */
static par_status lower_dw(vk_graph *vg, const par_node *n, const int64_t pad[4], par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1];
    const par_value *w = &g->values[b];
    int64_t C = w->dims[0], KH = w->dims[2], KW = w->dims[3], taps = KH * KW, C4 = (C + 3) / 4;
    float *pk = calloc((size_t)(C4 * taps * 4), sizeof *pk);
    if (!pk) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    const float *src = w->data;
    for (int64_t ch = 0; ch < C; ch++)
        for (int64_t t = 0; t < taps; t++) pk[((ch / 4) * taps + t) * 4 + ch % 4] = src[ch * taps + t];
    int tw = vk_add_tensor(vg, pk, C4 * taps * 4, msg);
    if (tw < 0) return PAR_ERROR;
    epilogue e;
    par_status st = plan_epilogue(vg, n, &e, msg);
    if (st != PAR_OK) return st;
    const int64_t *od = vg->tensors[o].d4;
    int64_t items = od[0] * C4 * od[2] * ((od[3] + DW_RW - 1) / DW_RW);
    vk_dispatch *d = vk_emit(vg, "conv_dw", VK_CONV_ONLY, e.out, a, tw, e.c >= 0 ? e.c : a, items, msg);
    if (!d) return PAR_ERROR;
    d->spec[0] = DW_RW;
    conv_params(d, n, pad, KH, KW);
    set_epilogue(d, &e);
    return PAR_OK;
}

/* GEMM: weights [O, C/groups, KH, KW] packed as [groups][KP][OP4], KP = K rounded up to TILE_K, OP4 = O/groups
 * rounded up to TILE_MN, zeros beyond. */
static par_status lower_gemm(vk_graph *vg, const par_node *n, const int64_t pad[4], int64_t gx, int64_t gy,
                             par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1];
    const par_value *w = &g->values[b];
    int64_t groups = par_attr_int(n, "groups", 1);
    int64_t O = w->dims[0], KH = w->dims[2], KW = w->dims[3], K = w->dims[1] * KH * KW, og = O / groups;
    int64_t KP = round_up(K, TILE_K), OP4 = round_up(og, TILE_MN);
    float *pk = calloc((size_t)(groups * KP * OP4), sizeof *pk);
    if (!pk) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    const float *src = w->data;
    for (int64_t gi = 0; gi < groups; gi++)
        for (int64_t oc = 0; oc < og; oc++)
            for (int64_t k = 0; k < K; k++) pk[(gi * KP + k) * OP4 + oc] = src[(gi * og + oc) * K + k];
    int tw = vk_add_tensor(vg, pk, groups * KP * OP4, msg);
    if (tw < 0) return PAR_ERROR;
    epilogue e;
    par_status st = plan_epilogue(vg, n, &e, msg);
    if (st != PAR_OK) return st;
    const vk_tensor *T = vg->tensors;
    int pointwise = KH == 1 && KW == 1 && pad[0] == 0 && pad[1] == 0 && par_attr_ints_at(n, "stride", 0, 1) == 1 &&
                    par_attr_ints_at(n, "stride", 1, 1) == 1 && T[a].d4[2] == T[o].d4[2] &&
                    T[a].d4[3] == T[o].d4[3];
    int64_t P = T[o].d4[0] * T[o].d4[2] * T[o].d4[3];
    vk_dispatch *d = tiled_dispatch(vg, "conv_gemm", pointwise ? VK_CONV_POINTWISE : VK_CONV_GATHER, e.out, a, tw, e.c >= 0 ? e.c : a, P, (uint32_t)gx,
                                    (uint32_t)gy, msg);
    if (!d) return PAR_ERROR;
    conv_params(d, n, pad, KH, KW);
    set_epilogue(d, &e);
    d->pc.p2[2] = (int32_t)K;
    d->pc.p2[3] = (int32_t)OP4;
    d->pc.bd[0] = (int32_t)KP;
    return PAR_OK;
}

static int conv_tiled(vk_graph *vg, int32_t node, par_status *st, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    const par_node *n = &g->nodes[node];
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1];
    const par_value *w = &g->values[b];
    if (vg->ctx->direct_kernels) return 0;
    if (w->kind != PAR_VALUE_CONST || w->dtype != PAR_DTYPE_F32 || w->rank != 4 || !w->data) return 0;
    int64_t groups = par_attr_int(n, "groups", 1);
    const int64_t *xd = vg->tensors[a].d4, *od = vg->tensors[o].d4;
    int64_t C = xd[1], O = od[1];
    if (groups < 1 || C % groups != 0 || O % groups != 0) return 0;
    int64_t pad[4];
    vk_conv_padding(n, xd, od, w->dims[2], w->dims[3], pad);
    int64_t taps = w->dims[2] * w->dims[3], K = w->dims[1] * taps;
    if (groups == C && O == C && vg->tensors[a].nc4 && vg->tensors[o].nc4) {
        int64_t items = od[0] * ((C + 3) / 4) * od[2] * ((od[3] + DW_RW - 1) / DW_RW);
        if (items > INT32_MAX || !packed_fits(vg, (C + 3) / 4 * 4 * taps)) return 0;
        *st = lower_dw(vg, n, pad, msg);
        return 1;
    }
    int64_t og = O / groups;
    if (groups > 1 && og < 8) return 0;
    int64_t gx = (od[0] * od[2] * od[3] + TILE_MN - 1) / TILE_MN, gy = groups * (round_up(og, TILE_MN) / TILE_MN);
    if (!grid_fits(vg, gx, gy) || !packed_fits(vg, groups * round_up(K, TILE_K) * round_up(og, TILE_MN))) return 0;
    *st = lower_gemm(vg, n, pad, gx, gy, msg);
    return 1;
}

static int gemm_tiled(vk_graph *vg, int32_t node, int is_linear, par_status *st, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    const par_node *n = &g->nodes[node];
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1], c = n->n_inputs > 2 ? n->inputs[2] : -1;
    if (vg->ctx->direct_kernels) return 0;
    if (!is_linear && (g->values[a].rank < 2 || g->values[b].rank < 2)) return 0;
    if (is_linear && g->values[b].rank != 2) return 0;
    const int64_t *od = vg->tensors[o].d4, *ad = vg->tensors[a].d4;
    int64_t N = od[3], K = ad[3];
    int64_t rows = is_linear ? od[0] * od[1] * od[2] : od[2], batches = is_linear ? 1 : od[0] * od[1];
    int64_t gx = (rows + TILE_MN - 1) / TILE_MN, gy = batches * ((N + TILE_MN - 1) / TILE_MN);
    /* Fewer than 16 rows would leave most of a 32-row tile padding: the direct shader is faster there (MobileNet's
     * classifier and mlp's 4-row linears measured 3x slower tiled on lavapipe; transformer_encoder's 16-row ones
     * the same either way). */
    if (rows < GEMM_MIN_ROWS || K < 1 || !grid_fits(vg, gx, gy)) return 0;
    vk_dispatch *d = tiled_dispatch(vg, "gemm", is_linear ? VK_MATMUL_LINEAR : VK_MATMUL_MATMUL, o, a, b, c >= 0 ? c : a, rows * N, (uint32_t)gx,
                                    (uint32_t)gy, msg);
    if (!d) {
        *st = PAR_ERROR;
        return 1;
    }
    d->pc.p0[0] = (int32_t)K;
    d->pc.p0[1] = c >= 0;
    d->pc.p0[2] = (int32_t)rows;
    *st = PAR_OK;
    return 1;
}

par_status vk_lower_tiled(vk_graph *vg, int32_t node, int *done, par_msg *msg)
{
    const par_node *n = &vg->g->nodes[node];
    par_status st = PAR_OK;
    *done = 1;
    if (vg->skip && vg->skip[node]) return PAR_OK; /* absorbed by an earlier conv's epilogue */
    if (strcmp(n->op, "conv2d") == 0 && conv_tiled(vg, node, &st, msg)) return st;
    if ((strcmp(n->op, "linear") == 0 || strcmp(n->op, "matmul") == 0) &&
        gemm_tiled(vg, node, strcmp(n->op, "linear") == 0, &st, msg))
        return st;
    *done = 0;
    return PAR_OK;
}
