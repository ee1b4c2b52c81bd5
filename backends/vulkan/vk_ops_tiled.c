/*
 * vk_ops_tiled.c - the vulkan backend's fast lowerings of conv2d, linear and matmul: the tiled shaders
 * (shaders/conv_gemm.comp, conv_dw.comp, gemm.comp) when their conditions hold, with the weights repacked at
 * prepare into the layout each shader reads (as XNNPACK packs its weights). vk_ops.c asks here first and falls back
 * to the general one-work-item-per-output shaders (conv2d.comp, matmul.comp) when a function answers 0.
 *
 * Conditions: the weights of conv2d are a constant (they are packed); depthwise (groups == C == O) needs an
 * NC4HW4 input (a node output or graph input, not a constant); a grouped conv that is not depthwise takes the GEMM
 * when each group has at least 8 output channels (fewer would waste most of a 32-channel tile); the workgroup
 * grid must fit maxComputeWorkGroupCount.
 *
 * It must not touch Vulkan objects: it only fills vk_dispatch records and adds packed constant tensors.
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

/* Must equal the shaders' tile constants: conv_gemm.comp and gemm.comp (TO = TP = TM = TN = 32, TK the default
 * of specialization constant 2). */
#define TILE_MN 32
#define TILE_K 16
#define DW_RW 4 /* conv_dw.comp's RW: output pixels per work item */

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

static int grid_fits(const vk_graph *vg, int64_t gx, int64_t gy)
{
    const uint32_t *max = vg->ctx->props.limits.maxComputeWorkGroupCount;
    return gx >= 1 && gy >= 1 && gx <= (int64_t)max[0] && gy <= (int64_t)max[1];
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
    return d;
}

static void conv_params(vk_dispatch *d, const par_node *n, const int64_t pad[4], int64_t KH, int64_t KW,
                        int has_bias)
{
    int32_t p0[4] = {(int32_t)KH, (int32_t)KW, (int32_t)par_attr_ints_at(n, "stride", 0, 1),
                     (int32_t)par_attr_ints_at(n, "stride", 1, 1)};
    int32_t p1[4] = {(int32_t)pad[0], (int32_t)pad[1], (int32_t)par_attr_ints_at(n, "dilation", 0, 1),
                     (int32_t)par_attr_ints_at(n, "dilation", 1, 1)};
    memcpy(d->pc.p0, p0, sizeof p0);
    memcpy(d->pc.p1, p1, sizeof p1);
    d->pc.p2[0] = (int32_t)par_attr_int(n, "groups", 1);
    d->pc.p2[1] = has_bias;
}

/* Depthwise: weights [C, 1, KH, KW] packed as [ceil(C/4)][KH*KW][4], zeros beyond C. */
static par_status lower_dw(vk_graph *vg, const par_node *n, const int64_t pad[4], par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1], c = n->n_inputs > 2 ? n->inputs[2] : -1;
    const par_value *w = &g->values[b];
    int64_t C = w->dims[0], KH = w->dims[2], KW = w->dims[3], taps = KH * KW, C4 = (C + 3) / 4;
    float *pk = calloc((size_t)(C4 * taps * 4), sizeof *pk);
    if (!pk) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    const float *src = w->data;
    for (int64_t ch = 0; ch < C; ch++)
        for (int64_t t = 0; t < taps; t++) pk[((ch / 4) * taps + t) * 4 + ch % 4] = src[ch * taps + t];
    int tw = vk_add_tensor(vg, pk, C4 * taps * 4, msg);
    if (tw < 0) return PAR_ERROR;
    const int64_t *od = vg->tensors[o].d4;
    int64_t items = od[0] * C4 * od[2] * ((od[3] + DW_RW - 1) / DW_RW);
    vk_dispatch *d = vk_emit(vg, "conv_dw", 0, o, a, tw, c >= 0 ? c : a, items, msg);
    if (!d) return PAR_ERROR;
    conv_params(d, n, pad, KH, KW, c >= 0);
    return PAR_OK;
}

/* GEMM: weights [O, C/groups, KH, KW] packed as [groups][KP][OP4], KP = K rounded up to TILE_K, OP4 = O/groups
 * rounded up to TILE_MN, zeros beyond. */
static par_status lower_gemm(vk_graph *vg, const par_node *n, const int64_t pad[4], int64_t gx, int64_t gy,
                             par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1], c = n->n_inputs > 2 ? n->inputs[2] : -1;
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
    const vk_tensor *T = vg->tensors;
    int pointwise = KH == 1 && KW == 1 && pad[0] == 0 && pad[1] == 0 && par_attr_ints_at(n, "stride", 0, 1) == 1 &&
                    par_attr_ints_at(n, "stride", 1, 1) == 1 && T[a].d4[2] == T[o].d4[2] &&
                    T[a].d4[3] == T[o].d4[3];
    int64_t P = T[o].d4[0] * T[o].d4[2] * T[o].d4[3];
    vk_dispatch *d = tiled_dispatch(vg, "conv_gemm", pointwise, o, a, tw, c >= 0 ? c : a, P, (uint32_t)gx,
                                    (uint32_t)gy, msg);
    if (!d) return PAR_ERROR;
    conv_params(d, n, pad, KH, KW, c >= 0);
    d->pc.p2[2] = (int32_t)K;
    d->pc.p2[3] = (int32_t)OP4;
    d->pc.bd[0] = (int32_t)KP;
    return PAR_OK;
}

int vk_lower_conv_tiled(vk_graph *vg, int32_t node, const int64_t pad[4], par_status *st, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    const par_node *n = &g->nodes[node];
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1];
    const par_value *w = &g->values[b];
    if (w->kind != PAR_VALUE_CONST || w->dtype != PAR_DTYPE_F32 || w->rank != 4 || !w->data) return 0;
    int64_t groups = par_attr_int(n, "groups", 1);
    const int64_t *xd = vg->tensors[a].d4, *od = vg->tensors[o].d4;
    int64_t C = xd[1], O = od[1];
    if (groups < 1 || C % groups != 0 || O % groups != 0) return 0;
    if (groups == C && O == C && vg->tensors[a].nc4 && vg->tensors[o].nc4) {
        int64_t items = od[0] * ((C + 3) / 4) * od[2] * ((od[3] + DW_RW - 1) / DW_RW);
        if (items > INT32_MAX) return 0;
        *st = lower_dw(vg, n, pad, msg);
        return 1;
    }
    int64_t og = O / groups;
    if (groups > 1 && og < 8) return 0;
    int64_t gx = (od[0] * od[2] * od[3] + TILE_MN - 1) / TILE_MN, gy = groups * (round_up(og, TILE_MN) / TILE_MN);
    if (!grid_fits(vg, gx, gy)) return 0;
    *st = lower_gemm(vg, n, pad, gx, gy, msg);
    return 1;
}

int vk_lower_gemm_tiled(vk_graph *vg, int32_t node, int is_linear, par_status *st, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    const par_node *n = &g->nodes[node];
    int o = n->outputs[0], a = n->inputs[0], b = n->inputs[1], c = n->n_inputs > 2 ? n->inputs[2] : -1;
    if (!is_linear && (g->values[a].rank < 2 || g->values[b].rank < 2)) return 0;
    if (is_linear && g->values[b].rank != 2) return 0;
    const int64_t *od = vg->tensors[o].d4, *ad = vg->tensors[a].d4;
    int64_t N = od[3], K = ad[3];
    int64_t rows = is_linear ? od[0] * od[1] * od[2] : od[2], batches = is_linear ? 1 : od[0] * od[1];
    int64_t gx = (rows + TILE_MN - 1) / TILE_MN, gy = batches * ((N + TILE_MN - 1) / TILE_MN);
    if (K < 1 || !grid_fits(vg, gx, gy)) return 0;
    vk_dispatch *d = tiled_dispatch(vg, "gemm", is_linear, o, a, b, c >= 0 ? c : a, rows * N, (uint32_t)gx,
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
