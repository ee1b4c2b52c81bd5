/*
 * winograd.c - a test plugin of tests/test_winograd.c: f32 conv2d computed with Winograd F(2x2,3x3), F(4x4,3x3) or
 * F(6x6,3x3) (the matrices of core/parity_backend.h, par_algo), transforms in float32, output tiles aligned at (0, 0).
 * Graphs of one conv2d node with a 3x3 kernel, stride 1, dilation 1, any padding and groups; everything else is
 * UNSUPPORTED with the reason.
 *
 * Knobs: variant=f23|f43|f63 (default f43); declare=1|0|N (default 1): whether PAR_PROC_NODE_ALGO declares the
 * algorithm, or (any other integer N) declares the value N, right or wrong, to test the harness's validation;
 * bug=none|transform (default none): one wrong transform entry (F(2,3): B^T[0][2] = +1 instead of -1;
 * F(4,3): G[0][0] = 1/5 instead of 1/4; F(6,3): G[1][1] = +2/9 instead of -2/9), the kind of slip a hand-written
 * transform makes.
 *
 * Each stage is what a production kernel does in float: U = G g G^T (two 3-term passes, constants rounded to float),
 * V = B^T d B (two t-term passes), M = sum_c U (.) V in channel order, Y = A^T M A (two passes), then the bias.
 * Like every plugin it sees only the public header.
 */
#include "parity_backend.h"

#include <stdlib.h>
#include <string.h>

const par_backend *parity_backend_entry(uint32_t harness_api_version);

#define MAX_T 8

typedef struct wg_mats {
    int m, t;
    float bt[MAX_T][MAX_T], g[MAX_T][3], at[6][MAX_T];
} wg_mats;

static const wg_mats F23 = {
    2, 4,
    {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
    {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}},
    {{1, 1, 1, 0}, {0, 1, -1, -1}}};

static const wg_mats F43 = {
    4, 6,
    {{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0},
     {0, 4, 0, -5, 0, 1}},
    {{1.0f / 4, 0, 0}, {-1.0f / 6, -1.0f / 6, -1.0f / 6}, {-1.0f / 6, 1.0f / 6, -1.0f / 6},
     {1.0f / 24, 1.0f / 12, 1.0f / 6}, {1.0f / 24, -1.0f / 12, 1.0f / 6}, {0, 0, 1}},
    {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};

static const wg_mats F63 = {
    6, 8,
    {{1, 0, -5.25f, 0, 5.25f, 0, -1, 0},
     {0, 1, 1, -4.25f, -4.25f, 1, 1, 0},
     {0, -1, 1, 4.25f, -4.25f, -1, 1, 0},
     {0, 0.5f, 0.25f, -2.5f, -1.25f, 2, 1, 0},
     {0, -0.5f, 0.25f, 2.5f, -1.25f, -2, 1, 0},
     {0, 2, 4, -2.5f, -5, 0.5f, 1, 0},
     {0, -2, 4, 2.5f, -5, -0.5f, 1, 0},
     {0, -1, 0, 5.25f, 0, -5.25f, 0, 1}},
    {{1, 0, 0},
     {-2.0f / 9, -2.0f / 9, -2.0f / 9},
     {-2.0f / 9, 2.0f / 9, -2.0f / 9},
     {1.0f / 90, 1.0f / 45, 2.0f / 45},
     {1.0f / 90, -1.0f / 45, 2.0f / 45},
     {32.0f / 45, 16.0f / 45, 8.0f / 45},
     {32.0f / 45, -16.0f / 45, 8.0f / 45},
     {0, 0, 1}},
    {{1, 1, 1, 1, 1, 1, 1, 0},
     {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},
     {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},
     {0, 1, -1, 8, -8, 0.125f, -0.125f, 0},
     {0, 1, 1, 16, 16, 0.0625f, 0.0625f, 0},
     {0, 1, -1, 32, -32, 0.03125f, -0.03125f, 1}}};

typedef struct wg_ctx {
    int variant;  /* 2, 4 or 6: the output tile */
    int declare;  /* 0: no PAR_PROC_NODE_ALGO; 1: the variant's algorithm; else: this raw value */
    int bug;
} wg_ctx;

typedef struct wg_prep {
    wg_mats mt;
    int64_t n, c, h, w, o, cg, oh, ow, pt, pl;
    int32_t x_vi, w_vi, b_vi, y_vi;
    const par_graph_desc *g;
    const float *x, *wt, *b;
    float *y;
    float *u; /* U of every (o, ci): o * cg * t * t */
} wg_prep;

static par_status wg_init(void **ctx, par_msg *msg)
{
    wg_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "out of memory");
    c->variant = 4;
    c->declare = 1;
    *ctx = c;
    return PAR_OK;
}

static void wg_destroy(void *ctx) { free(ctx); }

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    wg_ctx *c = ctx;
    if (strcmp(key, "variant") == 0) {
        if (strcmp(value, "f23") == 0) c->variant = 2;
        else if (strcmp(value, "f43") == 0) c->variant = 4;
        else if (strcmp(value, "f63") == 0) c->variant = 6;
        else return par_msgf(msg, PAR_ERROR, "variant must be f23, f43 or f63, not '%s'", value);
    } else if (strcmp(key, "declare") == 0) {
        char *end = NULL;
        long v = strtol(value, &end, 10);
        if (!value[0] || *end || v < -1000000 || v > 1000000)
            return par_msgf(msg, PAR_ERROR, "declare must be 0, 1 or an integer to declare as is, not '%s'", value);
        c->declare = (int)v;
    } else if (strcmp(key, "bug") == 0) {
        if (strcmp(value, "none") != 0 && strcmp(value, "transform") != 0)
            return par_msgf(msg, PAR_ERROR, "bug must be none or transform, not '%s'", value);
        c->bug = strcmp(value, "transform") == 0;
    } else {
        return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (known: variant, declare, bug)", key);
    }
    return PAR_OK;
}

static size_t describe(void *ctx, char *buf, size_t len)
{
    const wg_ctx *c = ctx;
    return (size_t)snprintf(buf, len, "variant=f%d3;declare=%d;bug=%s", c->variant, c->declare,
                            c->bug ? "transform" : "none");
}

static int is_f32(const par_value *v) { return !v || v->dtype == PAR_DTYPE_F32; }

static par_status wg_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *n = &g->nodes[node];
    (void)ctx;
    if (strcmp(n->op, "conv2d") != 0) return par_msgf(msg, PAR_UNSUPPORTED, "only conv2d (Winograd)");
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!is_f32(x) || !is_f32(w) || !is_f32(b) || !is_f32(par_node_output(g, n, 0)))
        return par_msgf(msg, PAR_UNSUPPORTED, "only f32");
    if (w->dims[2] != 3 || w->dims[3] != 3) return par_msgf(msg, PAR_UNSUPPORTED, "only 3x3 kernels (Winograd F(m,3))");
    if (par_attr_ints_at(n, "stride", 0, 1) != 1 || par_attr_ints_at(n, "stride", 1, 1) != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "only stride 1");
    if (par_attr_ints_at(n, "dilation", 0, 1) != 1 || par_attr_ints_at(n, "dilation", 1, 1) != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "only dilation 1");
    return PAR_OK;
}

/* pad_mode same: out = in at stride 1, total = 2, begin = 1; valid: 0; explicit: the attribute. */
static int64_t pad_begin(const par_node *n, int axis)
{
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(mode, "same") == 0) return 1;
    if (strcmp(mode, "valid") == 0) return 0;
    return par_attr_ints_at(n, "padding", axis, 0);
}

static par_status wg_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    const wg_ctx *c = ctx;
    if (g->n_nodes != 1 || g->n_outputs != 1) return par_msgf(msg, PAR_UNSUPPORTED, "one conv2d node only");
    const par_node *n = &g->nodes[0];
    wg_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    p->mt = c->variant == 2 ? F23 : c->variant == 4 ? F43 : F63;
    if (c->bug) {
        if (c->variant == 2) p->mt.bt[0][2] = 1.0f;
        else if (c->variant == 4) p->mt.g[0][0] = 1.0f / 5;
        else p->mt.g[1][1] = 2.0f / 9;
    }
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *y = par_node_output(g, n, 0);
    p->g = g;
    p->n = x->dims[0], p->c = x->dims[1], p->h = x->dims[2], p->w = x->dims[3];
    p->o = w->dims[0], p->cg = w->dims[1], p->oh = y->dims[2], p->ow = y->dims[3];
    p->pt = pad_begin(n, 0), p->pl = pad_begin(n, 1);
    p->x_vi = n->inputs[0], p->w_vi = n->inputs[1], p->b_vi = n->n_inputs > 2 ? n->inputs[2] : -1;
    p->y_vi = n->outputs[0];
    if (g->outputs[0] != p->y_vi) {
        free(p);
        return par_msgf(msg, PAR_UNSUPPORTED, "the conv2d output must be the graph output");
    }
    size_t tt = (size_t)(p->mt.t * p->mt.t);
    p->u = malloc(sizeof *p->u * ((size_t)p->o * (size_t)p->cg * tt + 1));
    if (!p->u) {
        free(p);
        return par_msgf(msg, PAR_ERROR, "out of memory for the transformed kernels");
    }
    *prepared = p;
    return PAR_OK;
}

/* Value vi's data: a constant's own, or the bound graph input. */
static const float *value_data(const par_graph_desc *g, int32_t vi, const void *const *inputs)
{
    if (vi < 0) return NULL;
    if (g->values[vi].kind == PAR_VALUE_CONST) return g->values[vi].data;
    for (int32_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == vi) return inputs[i];
    return NULL;
}

static par_status wg_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    wg_prep *p = prepared;
    (void)ctx;
    p->x = value_data(p->g, p->x_vi, inputs);
    p->wt = value_data(p->g, p->w_vi, inputs);
    p->b = value_data(p->g, p->b_vi, inputs);
    p->y = outputs[0];
    if (!p->x || !p->wt || (p->b_vi >= 0 && !p->b)) return par_msgf(msg, PAR_ERROR, "an input has no data");
    return PAR_OK;
}

static par_status wg_run(void *ctx, void *prepared, par_msg *msg)
{
    wg_prep *p = prepared;
    const wg_mats *mt = &p->mt;
    const int m = mt->m, t = mt->t, tt = t * t;
    (void)ctx;
    (void)msg;
    /* U = G g G^T for every (o, ci) */
    for (int64_t k = 0; k < p->o * p->cg; k++) {
        const float *g = p->wt + k * 9;
        float tmp[MAX_T][3];
        for (int i = 0; i < t; i++)
            for (int q = 0; q < 3; q++) {
                float s = 0;
                for (int r = 0; r < 3; r++) s += mt->g[i][r] * g[r * 3 + q];
                tmp[i][q] = s;
            }
        for (int i = 0; i < t; i++)
            for (int j = 0; j < t; j++) {
                float s = 0;
                for (int q = 0; q < 3; q++) s += tmp[i][q] * mt->g[j][q];
                p->u[k * tt + i * t + j] = s;
            }
    }
    const int64_t og = p->o / (p->c / p->cg);
    float *v = malloc(sizeof *v * (size_t)(p->c * tt));
    if (!v) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t th = 0; th < p->oh; th += m)
            for (int64_t tw = 0; tw < p->ow; tw += m) {
                /* V = B^T d B for every channel of this tile */
                for (int64_t ch = 0; ch < p->c; ch++) {
                    float d[MAX_T][MAX_T], tmp[MAX_T][MAX_T];
                    for (int r = 0; r < t; r++)
                        for (int s = 0; s < t; s++) {
                            int64_t ih = th - p->pt + r, iw = tw - p->pl + s;
                            d[r][s] = (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w)
                                          ? 0.0f
                                          : p->x[((n * p->c + ch) * p->h + ih) * p->w + iw];
                        }
                    for (int i = 0; i < t; i++)
                        for (int s = 0; s < t; s++) {
                            float acc = 0;
                            for (int r = 0; r < t; r++) acc += mt->bt[i][r] * d[r][s];
                            tmp[i][s] = acc;
                        }
                    for (int i = 0; i < t; i++)
                        for (int j = 0; j < t; j++) {
                            float acc = 0;
                            for (int s = 0; s < t; s++) acc += tmp[i][s] * mt->bt[j][s];
                            v[ch * tt + i * t + j] = acc;
                        }
                }
                for (int64_t o = 0; o < p->o; o++) {
                    const int64_t g0 = (o / og) * p->cg;
                    float M[MAX_T * MAX_T] = {0}, tmp[6][MAX_T];
                    for (int64_t ci = 0; ci < p->cg; ci++)
                        for (int k = 0; k < tt; k++) M[k] += p->u[(o * p->cg + ci) * tt + k] * v[(g0 + ci) * tt + k];
                    for (int a = 0; a < m; a++)
                        for (int j = 0; j < t; j++) {
                            float acc = 0;
                            for (int i = 0; i < t; i++) acc += mt->at[a][i] * M[i * t + j];
                            tmp[a][j] = acc;
                        }
                    for (int a = 0; a < m && th + a < p->oh; a++)
                        for (int bb = 0; bb < m && tw + bb < p->ow; bb++) {
                            float acc = 0;
                            for (int j = 0; j < t; j++) acc += tmp[a][j] * mt->at[bb][j];
                            if (p->b) acc += p->b[o];
                            p->y[((n * p->o + o) * p->oh + th + a) * p->ow + tw + bb] = acc;
                        }
                }
            }
    free(v);
    return PAR_OK;
}

static void wg_release(void *ctx, void *prepared)
{
    wg_prep *p = prepared;
    (void)ctx;
    if (!p) return;
    free(p->u);
    free(p);
}

static par_algo node_algo(void *ctx, void *prepared, int32_t node)
{
    const wg_ctx *c = ctx;
    (void)prepared;
    (void)node;
    if (c->declare != 1) return (par_algo)c->declare;
    return c->variant == 2 ? PAR_ALGO_WINOGRAD_2X2_3X3
                           : c->variant == 4 ? PAR_ALGO_WINOGRAD_4X4_3X3 : PAR_ALGO_WINOGRAD_6X6_3X3;
}

static void *get_proc(void *ctx, const char *name)
{
    const wg_ctx *c = ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)describe;
    if (strcmp(name, PAR_PROC_NODE_ALGO) == 0) return c && c->declare ? (void *)node_algo : NULL;
    return NULL;
}

static const par_backend wg_backend = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "winograd",
    .description = "test plugin: f32 conv2d by Winograd F(2x2,3x3), F(4x4,3x3) or F(6x6,3x3)", .version = "1.0",
    .arith = PAR_ARITH_F32, .init = wg_init, .destroy = wg_destroy, .supports = wg_supports,
    .prepare = wg_prepare, .bind = wg_bind, .run = wg_run, .release = wg_release, .get_proc = get_proc};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &wg_backend;
}
