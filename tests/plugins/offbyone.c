/*
 * offbyone.c - a test plugin with one planted bug, for the localizer and the reducer (tests/test_reduce.c): an f32
 * backend for graphs of add, mul, relu, sigmoid, conv2d, linear and softmax, correct except for the bug its knob
 * `bug` chooses:
 *   conv (the default)  conv2d leaves out the last input channel of each group when a group has more than one
 *   add                 add ignores an operand broadcast along the last axis except at the first element of a row
 *   pair                a graph with more than one output gets its last output's first element off by one: every
 *                       single-output prefix passes, so no one node is to blame
 *   stride2             conv2d with a horizontal stride of 2 leaves out the input's last column at the right edge
 *                       (only where a window reaches it: some stride-2 cases fail, no other case does)
 *   c8                  conv2d leaves out the input's last channel when the channel count is not a multiple of 8
 *                       (a vector kernel's remainder loop one short)
 *   off                 no bug (so the C repro's knob handling shows in its result)
 * stride2.c and chan8.c build this file as the plugins tp_stride2 and tp_chan8, whose default bug is theirs (the
 * planted bugs the failure groups of reports/groups.c must name).
 * Sums are accumulated in double and rounded once, so every correct op is well inside the f32 budgets.
 */
#include "parity_backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const par_backend *parity_backend_entry(uint32_t harness_api_version);

enum { BUG_OFF, BUG_CONV, BUG_ADD, BUG_PAIR, BUG_STRIDE2, BUG_C8 };
#ifndef OB_BUG
#define OB_BUG BUG_CONV
#define OB_NAME "tp_offbyone"
#define OB_DESCRIPTION "test plugin: conv2d leaves out the last input channel"
#endif
static int bug = OB_BUG;

typedef struct ob_prep {
    const par_graph_desc *g;
    float **buf;             /* per value: its data (inputs and outputs: the bound buffers) */
    float **own;             /* per value: what this plugin allocated */
} ob_prep;

static par_status ob_init(void **ctx, par_msg *msg)
{
    static int ob_ctx;
    (void)msg;
    *ctx = &ob_ctx;
    return PAR_OK;
}

static void ob_destroy(void *ctx)
{
    (void)ctx;
}

static const char *const ob_ops[] = {"add", "mul", "relu", "sigmoid", "conv2d", "linear", "softmax"};

static par_status ob_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *n = &g->nodes[node];
    (void)ctx;
    int known = 0;
    for (size_t i = 0; i < sizeof ob_ops / sizeof ob_ops[0]; i++) known |= strcmp(n->op, ob_ops[i]) == 0;
    if (!known) return par_msgf(msg, PAR_UNSUPPORTED, "op %s", n->op);
    for (int32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && g->values[n->inputs[i]].dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "only f32");
    if (strcmp(n->op, "conv2d") == 0 && strcmp(par_attr_str(n, "pad_mode", "explicit"), "explicit") != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "explicit padding only");
    return PAR_OK;
}

static void ob_release(void *ctx, void *prepared)
{
    ob_prep *p = prepared;
    (void)ctx;
    if (!p) return;
    for (int32_t v = 0; p->own && v < p->g->n_values; v++) free(p->own[v]);
    free(p->own);
    free(p->buf);
    free(p);
}

static par_status ob_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    for (int32_t k = 0; k < g->n_nodes; k++) {
        par_status st = ob_supports(ctx, g, k, msg);
        if (st != PAR_OK) return st;
    }
    ob_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    p->g = g;
    p->buf = calloc((size_t)g->n_values, sizeof *p->buf);
    p->own = calloc((size_t)g->n_values, sizeof *p->own);
    if (!p->buf || !p->own) return ob_release(ctx, p), par_msgf(msg, PAR_ERROR, "out of memory");
    for (int32_t v = 0; v < g->n_values; v++) {
        if (g->values[v].kind == PAR_VALUE_CONST) p->buf[v] = (float *)g->values[v].data;
        if (g->values[v].kind != PAR_VALUE_NODE) continue;
        p->own[v] = malloc(sizeof(float) * (size_t)g->values[v].numel);
        if (!p->own[v]) return ob_release(ctx, p), par_msgf(msg, PAR_ERROR, "out of memory");
        p->buf[v] = p->own[v];
    }
    *prepared = p;
    return PAR_OK;
}

static par_status ob_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    ob_prep *p = prepared;
    (void)ctx;
    (void)msg;
    for (int32_t i = 0; i < p->g->n_inputs; i++) p->buf[p->g->inputs[i]] = (float *)inputs[i];
    /* outputs are computed in place in the caller's buffers */
    for (int32_t i = 0; i < p->g->n_outputs; i++) p->buf[p->g->outputs[i]] = outputs[i];
    return PAR_OK;
}

/* The flat index into a of the broadcast position of output element o (shapes right-aligned). */
static int64_t bcast_index(const par_value *a, const par_value *out, int64_t o)
{
    int64_t idx = 0, stride = 1;
    for (int32_t i = out->rank - 1, j = a->rank - 1; i >= 0; i--, j--) {
        int64_t c = o % out->dims[i];
        o /= out->dims[i];
        if (j < 0) continue;
        if (a->dims[j] > 1) idx += c * stride;
        stride *= a->dims[j];
    }
    return idx;
}

static void run_binary(const ob_prep *p, const par_node *n, int mul)
{
    const par_value *a = &p->g->values[n->inputs[0]], *b = &p->g->values[n->inputs[1]];
    const par_value *o = &p->g->values[n->outputs[0]];
    const float *x = p->buf[n->inputs[0]], *y = p->buf[n->inputs[1]];
    float *z = p->buf[n->outputs[0]];
    int64_t last = o->rank ? o->dims[o->rank - 1] : 1;
    /* the planted add bug: an operand broadcast along the last axis counts only at a row's first element */
    int a_row = a->rank == 0 || a->dims[a->rank - 1] == 1, b_row = b->rank == 0 || b->dims[b->rank - 1] == 1;
    int buggy = bug == BUG_ADD && !mul && last > 1;
    for (int64_t i = 0; i < o->numel; i++) {
        float u = x[bcast_index(a, o, i)], w = y[bcast_index(b, o, i)];
        if (buggy && i % last > 0) {
            if (a_row) u = 0.0f;
            if (b_row) w = 0.0f;
        }
        z[i] = mul ? u * w : u + w;
    }
}

static void run_conv(const ob_prep *p, const par_node *n)
{
    const par_graph_desc *g = p->g;
    const par_value *xv = &g->values[n->inputs[0]], *wv = &g->values[n->inputs[1]];
    const par_value *ov = &g->values[n->outputs[0]];
    const float *x = p->buf[n->inputs[0]], *w = p->buf[n->inputs[1]];
    const float *b = n->n_inputs > 2 && n->inputs[2] >= 0 ? p->buf[n->inputs[2]] : NULL;
    float *y = p->buf[n->outputs[0]];
    int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    int64_t K = ov->dims[1], OH = ov->dims[2], OW = ov->dims[3], KH = wv->dims[2], KW = wv->dims[3];
    int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    int64_t pt = par_attr_ints_at(n, "padding", 0, 0), pl = par_attr_ints_at(n, "padding", 1, 0);
    int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    int64_t groups = par_attr_int(n, "groups", 1), cg = C / groups, kg = K / groups;
    /* the planted bug: the last input channel of each group is left out of the sum */
    int64_t cused = bug == BUG_CONV && cg > 1 ? cg - 1 : cg;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = b ? b[k] : 0.0;
                    int64_t c0 = (k / kg) * cg;
                    for (int64_t c = 0; c < cused; c++)
                        for (int64_t i = 0; i < KH; i++)
                            for (int64_t j = 0; j < KW; j++) {
                                int64_t ih = oh * sh - pt + i * dh, iw = ow * sw - pl + j * dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                if (bug == BUG_STRIDE2 && sw == 2 && iw == W - 1) continue;
                                if (bug == BUG_C8 && C % 8 != 0 && c0 + c == C - 1) continue;
                                s += (double)x[((nn * C + c0 + c) * H + ih) * W + iw] *
                                     w[((k * cg + c) * KH + i) * KW + j];
                            }
                    y[((nn * K + k) * OH + oh) * OW + ow] = (float)s;
                }
}

static void run_linear(const ob_prep *p, const par_node *n)
{
    const par_graph_desc *g = p->g;
    const par_value *wv = &g->values[n->inputs[1]], *ov = &g->values[n->outputs[0]];
    const float *x = p->buf[n->inputs[0]], *w = p->buf[n->inputs[1]];
    const float *b = n->n_inputs > 2 && n->inputs[2] >= 0 ? p->buf[n->inputs[2]] : NULL;
    float *y = p->buf[n->outputs[0]];
    int64_t O = wv->dims[0], K = wv->dims[1], rows = ov->numel / O;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < O; o++) {
            double s = b ? b[o] : 0.0;
            for (int64_t k = 0; k < K; k++) s += (double)x[r * K + k] * w[o * K + k];
            y[r * O + o] = (float)s;
        }
}

static void run_softmax(const ob_prep *p, const par_node *n)
{
    const par_value *v = &p->g->values[n->inputs[0]];
    const float *x = p->buf[n->inputs[0]];
    float *y = p->buf[n->outputs[0]];
    int64_t axis = par_attr_int(n, "axis", -1);
    if (axis < 0) axis += v->rank;
    int64_t len = v->dims[axis], inner = 1;
    for (int32_t i = (int32_t)axis + 1; i < v->rank; i++) inner *= v->dims[i];
    int64_t outer = v->numel / (len * inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const float *xs = x + o * len * inner + in;
            float *ys = y + o * len * inner + in;
            double m = xs[0], s = 0;
            for (int64_t i = 1; i < len; i++) m = xs[i * inner] > m ? xs[i * inner] : m;
            for (int64_t i = 0; i < len; i++) s += exp((double)xs[i * inner] - m);
            for (int64_t i = 0; i < len; i++) ys[i * inner] = (float)(exp((double)xs[i * inner] - m) / s);
        }
}

static par_status ob_run(void *ctx, void *prepared, par_msg *msg)
{
    ob_prep *p = prepared;
    const par_graph_desc *g = p->g;
    (void)ctx;
    (void)msg;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const par_node *n = &g->nodes[k];
        const float *x = p->buf[n->inputs[0]];
        float *y = p->buf[n->outputs[0]];
        int64_t cnt = g->values[n->outputs[0]].numel;
        if (strcmp(n->op, "add") == 0) run_binary(p, n, 0);
        else if (strcmp(n->op, "mul") == 0) run_binary(p, n, 1);
        else if (strcmp(n->op, "relu") == 0)
            for (int64_t i = 0; i < cnt; i++) y[i] = x[i] > 0.0f ? x[i] : (x[i] != x[i] ? x[i] : 0.0f);
        else if (strcmp(n->op, "sigmoid") == 0)
            for (int64_t i = 0; i < cnt; i++) y[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
        else if (strcmp(n->op, "conv2d") == 0) run_conv(p, n);
        else if (strcmp(n->op, "linear") == 0) run_linear(p, n);
        else if (strcmp(n->op, "softmax") == 0) run_softmax(p, n);
    }
    if (bug == BUG_PAIR && g->n_outputs > 1) p->buf[g->outputs[g->n_outputs - 1]][0] += 1.0f;
    return PAR_OK;
}

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    (void)ctx;
    if (strcmp(key, "bug") != 0) return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (known: bug)", key);
    static const char *const names[] = {"off", "conv", "add", "pair", "stride2", "c8"};
    for (int i = 0; i < 6; i++)
        if (strcmp(value, names[i]) == 0) {
            bug = i;
            return PAR_OK;
        }
    return par_msgf(msg, PAR_ERROR, "bug must be conv, add, pair, stride2, c8 or off, not '%s'", value);
}

static void *ob_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)set_knob;
    return NULL;
}

static const par_backend ob_backend = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = OB_NAME,
    .description = OB_DESCRIPTION, .version = "1.0",
    .arith = PAR_ARITH_F32, .init = ob_init, .destroy = ob_destroy, .supports = ob_supports,
    .prepare = ob_prepare, .bind = ob_bind, .run = ob_run, .release = ob_release, .get_proc = ob_get_proc};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &ob_backend;
}
