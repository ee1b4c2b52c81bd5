/*
 * planted.c - a test plugin of tests/report/test_planted.sh: the example backend (backends/example/, linked in whole,
 * its entry renamed by plugins.mk) with one chosen layer computed at a precision far below the one it declares, the
 * bug a whole-model case must catch although every element stays far within its worst-case budget: the node named
 * by the knob layer= (a conv2d, linear or matmul) runs its dot products
 *   mode=f16      with operands, products and every partial sum rounded to binary16 (round to nearest even:
 *                 an f16 unit's arithmetic), the bias the first term;
 *   mode=trunc12  in f32, but every partial sum with its 12 low significand bits cleared (truncated toward zero).
 * declare=f32|f16 (default f32): the arithmetic it declares through PAR_PROC_ARITH. Declaring f16, mode=f16 is a
 * correct backend of that arithmetic and must pass; declaring f32, both modes are bugs and must fail.
 * fused=1: the layer is planted only where its output is not a graph output, as a backend that fuses the layer into
 * its consumer computes it on a path of its own, and the plain path where the output must be kept: a graph with
 * every node's output made an output then passes, and only prefixes localize the bug (with node_outputs=0).
 * node_outputs=0|1 (default 1): whether it gives the values of the nodes of the graph it ran (PAR_PROC_NODE_OUTPUTS,
 * the example backend's), the planted layer's included; without, localization makes every node's output a graph
 * output, else runs prefixes.
 * A graph without a node of that name runs as the example backend; the record's note says where the layer was
 * planted (PAR_PROC_NOTE), so a test can tell a planted run from an unplanted one. Every other node, and every
 * other knob, is the example backend's. Like every plugin it sees only the public header.
 */
#include "ex_wrap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum pl_mode { PL_F16, PL_TRUNC12 } pl_mode;

typedef struct pl_ctx {
    void *inner;          /* the example backend's context */
    char layer[64];       /* the planted node's name, "" for none */
    pl_mode mode;
    par_arith declare;
    int fused;            /* 1: planted only where the layer's output is not a graph output */
    int no_node_outputs;  /* node_outputs=0: PAR_PROC_NODE_OUTPUTS withheld */
} pl_ctx;

/* binary16 round to nearest even of a float: 11 significant bits down to 2^-14, then the subnormal grid 2^-24;
 * 65520 and beyond round to Inf. */
static float r16(float x)
{
    if (x == 0 || !isfinite(x)) return x;
    int e;
    frexp(x, &e);                  /* |x| in [2^(e-1), 2^e) */
    int q = e - 11 < -24 ? -24 : e - 11; /* the spacing of binary16 at x */
    double y = ldexp(nearbyint(ldexp(x, -q)), q);
    return fabs(y) >= 65520.0 ? copysignf(INFINITY, x) : (float)y;
}

/* An f32 value with its 12 low significand bits cleared: truncation toward zero to 12 significant bits. */
static float trunc12(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    b &= ~UINT32_C(0xfff);
    memcpy(&x, &b, sizeof x);
    return x;
}

/* acc + a * b in the planted arithmetic */
static float pl_fma(pl_mode m, float acc, float a, float b)
{
    if (m == PL_F16) return r16(acc + r16(r16(a) * r16(b)));
    return trunc12(acc + a * b);
}

static float pl_first(pl_mode m, const float *bias, int64_t o)
{
    float b = bias ? bias[o] : 0.0f;
    return m == PL_F16 ? r16(b) : b;
}

static pl_mode the_mode; /* set at prepare: a kernel sees only the plan and the node */

static int64_t pad_begin(const char *mode, int64_t pad, int64_t in, int64_t k, int64_t s, int64_t d)
{
    if (strcmp(mode, "valid") == 0) return 0;
    if (strcmp(mode, "same") != 0) return pad;
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + (k - 1) * d + 1 - in;
    return total > 0 ? total / 2 : 0;
}

static void pl_conv2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t O = wv->dims[0], CG = wv->dims[1], KH = wv->dims[2], KW = wv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3], OG = O / par_attr_int(n, "groups", 1);
    const int64_t sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    const int64_t dh = par_attr_ints_at(n, "dilation", 0, 1), dw = par_attr_ints_at(n, "dilation", 1, 1);
    const char *pm = par_attr_str(n, "pad_mode", "explicit");
    const int64_t pt = pad_begin(pm, par_attr_ints_at(n, "padding", 0, 0), H, KH, sh, dh);
    const int64_t pl = pad_begin(pm, par_attr_ints_at(n, "padding", 1, 0), W, KW, sw, dw);
    for (int64_t in = 0; in < N; in++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = pl_first(the_mode, b, o);
                    for (int64_t c = 0; c < CG; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                acc = pl_fma(the_mode, acc, w[((o * CG + c) * KH + kh) * KW + kw],
                                             x[((in * C + (o / OG) * CG + c) * H + ih) * W + iw]);
                            }
                    y[((in * O + o) * OH + oh) * OW + ow] = acc;
                }
}

static void pl_linear(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t O = wv->dims[0], K = wv->dims[1], rows = xv->numel / K;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < O; o++) {
            float acc = pl_first(the_mode, b, o);
            for (int64_t k = 0; k < K; k++) acc = pl_fma(the_mode, acc, x[r * K + k], w[o * K + k]);
            y[r * O + o] = acc;
        }
}

static void pl_matmul(const ex_plan *p, const par_node *n)
{
    const par_value *av = ex_in_value(p, n, 0), *bv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *a = ex_in(p, n, 0), *b = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    const int64_t M = av->dims[av->rank - 2], K = av->dims[av->rank - 1], N = bv->dims[bv->rank - 1];
    const int32_t batch_rank = yv->rank - 2;
    int64_t as[PAR_MAX_RANK], bs[PAR_MAX_RANK], idx[PAR_MAX_RANK] = {0};
    ex_broadcast_strides(av->dims, av->rank - 2, batch_rank, as);
    ex_broadcast_strides(bv->dims, bv->rank - 2, batch_rank, bs);
    const int64_t batches = ex_prod(yv->dims, 0, batch_rank);
    for (int64_t bt = 0; bt < batches; bt++) {
        int64_t ao = 0, bo = 0, rem = bt;
        for (int32_t d = batch_rank - 1; d >= 0; d--) {
            idx[d] = rem % yv->dims[d];
            rem /= yv->dims[d];
            ao += idx[d] * as[d];
            bo += idx[d] * bs[d];
        }
        const float *A = a + ao * M * K, *B = b + bo * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float acc = pl_first(the_mode, NULL, 0);
                for (int64_t k = 0; k < K; k++) acc = pl_fma(the_mode, acc, A[i * K + k], B[k * N + j]);
                y[(bt * M + i) * N + j] = acc;
            }
    }
}

static const struct {
    const char *op;
    ex_kernel_fn fn;
} planted_ops[] = {{"conv2d", pl_conv2d}, {"linear", pl_linear}, {"matmul", pl_matmul}};

static par_status pl_init(void **ctx, par_msg *msg)
{
    par_status st = exw_init(sizeof(pl_ctx), ctx, msg);
    if (st == PAR_OK) ((pl_ctx *)*ctx)->declare = PAR_ARITH_F32;
    return st;
}

static par_status pl_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    pl_ctx *c = ctx;
    if (strcmp(key, "layer") == 0) {
        if (strlen(value) >= sizeof c->layer) return par_msgf(msg, PAR_ERROR, "knob 'layer': name too long");
        snprintf(c->layer, sizeof c->layer, "%s", value);
        return PAR_OK;
    }
    if (strcmp(key, "mode") == 0) {
        if (strcmp(value, "f16") == 0) c->mode = PL_F16;
        else if (strcmp(value, "trunc12") == 0) c->mode = PL_TRUNC12;
        else return par_msgf(msg, PAR_ERROR, "knob 'mode': '%s' is not f16 or trunc12", value);
        return PAR_OK;
    }
    if (strcmp(key, "declare") == 0) {
        if (strcmp(value, "f32") == 0) c->declare = PAR_ARITH_F32;
        else if (strcmp(value, "f16") == 0) c->declare = PAR_ARITH_F16;
        else return par_msgf(msg, PAR_ERROR, "knob 'declare': '%s' is not f32 or f16", value);
        return PAR_OK;
    }
    if (strcmp(key, "fused") == 0) {
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'fused': '%s' is not 0 or 1", value);
        c->fused = value[0] == '1';
        return PAR_OK;
    }
    if (strcmp(key, "node_outputs") == 0) {
        int on = 0;
        par_status st = par_knob_bool(key, value, &on, msg);
        c->no_node_outputs = !on;
        return st;
    }
    return exw_knob(ctx, key, value, msg);
}

static size_t pl_describe(void *ctx, char *buf, size_t len)
{
    const pl_ctx *c = ctx;
    int need = snprintf(buf, len, "layer=%s;mode=%s;declare=%s;fused=%d;node_outputs=%d", c->layer,
                        c->mode == PL_F16 ? "f16" : "trunc12", c->declare == PAR_ARITH_F16 ? "f16" : "f32", c->fused,
                        !c->no_node_outputs);
    return need < 0 ? 0 : (size_t)need;
}

static par_arith pl_arith(void *ctx)
{
    return ((const pl_ctx *)ctx)->declare;
}

/* Is a value of node k among the graph's outputs? */
static int is_graph_output(const par_graph_desc *g, int32_t k)
{
    for (int32_t i = 0; i < g->n_outputs; i++)
        for (int32_t j = 0; j < g->nodes[k].n_outputs; j++)
            if (g->outputs[i] == g->nodes[k].outputs[j]) return 1;
    return 0;
}

/* The planted node of a prepared graph, -1 when the graph has no node of that name (or, with fused=1, when its
 * output is a graph output). */
static int32_t planted_node(const pl_ctx *c, const par_graph_desc *g)
{
    for (int32_t i = 0; c->layer[0] && i < g->n_nodes; i++)
        if (g->nodes[i].name && strcmp(g->nodes[i].name, c->layer) == 0)
            return c->fused && is_graph_output(g, i) ? -1 : i;
    return -1;
}

static size_t pl_note(void *ctx, void *prepared, char *buf, size_t len)
{
    const ex_plan *p = prepared;
    int32_t k = p ? planted_node(ctx, p->g) : -1;
    if (k < 0) return 0;
    int need = snprintf(buf, len, "planted %s at node '%s' (%s)", ((const pl_ctx *)ctx)->mode == PL_F16 ? "f16" : "trunc12",
                        p->g->nodes[k].name, p->g->nodes[k].op);
    return need < 0 ? 0 : (size_t)need;
}

static void *pl_get_proc(void *ctx, const char *name)
{
    const pl_ctx *c = ctx;
    if (strcmp(name, PAR_PROC_NODE_OUTPUTS) == 0)
        return c && !c->no_node_outputs ? (void *)(par_node_outputs_fn)exw_node_outputs : NULL;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)pl_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)pl_describe;
    if (strcmp(name, PAR_PROC_ARITH) == 0) return (void *)(par_arith_fn)pl_arith;
    if (strcmp(name, PAR_PROC_NOTE) == 0) return (void *)(par_note_fn)pl_note;
    return NULL;
}

static par_status pl_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    pl_ctx *c = ctx;
    par_status st = inner_table->prepare(c->inner, g, prepared, msg);
    int32_t k = st == PAR_OK ? planted_node(c, g) : -1;
    if (k < 0) return st;
    ex_plan *p = *prepared;
    for (size_t i = 0; i < sizeof planted_ops / sizeof planted_ops[0]; i++)
        if (strcmp(g->nodes[k].op, planted_ops[i].op) == 0) {
            p->kernels[k] = planted_ops[i].fn;
            the_mode = c->mode;
            return PAR_OK;
        }
    inner_table->release(c->inner, p);
    *prepared = NULL;
    return par_msgf(msg, PAR_ERROR, "knob 'layer': node '%s' is a %s, not a conv2d, linear or matmul", c->layer,
                    g->nodes[k].op);
}

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    return exw_entry(harness_api_version, "planted",
                     "the example backend with one layer computed below its declared precision (a test)", pl_init, NULL,
                     pl_prepare, pl_get_proc);
}
