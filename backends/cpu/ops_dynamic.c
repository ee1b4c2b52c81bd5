/*
 * ops_dynamic.c - linear_dynamic, PyTorch's dynamically quantized linear (docs/ops.md): x (f32) is quantized per
 * tensor at run time to qu8 from its own range, the weights are a qs8 constant [O, K] (per tensor, or per channel on
 * axis 0), the int32 accumulator sum_k (qx_k - zx)(qw_ok - zw) is exact, and y = (float)acc * (sx * sw[o]) + b[o] in
 * f32.
 *
 * The run-time qparams are PyTorch's ChooseQuantizationParams, whose one definition is in core/requant.h. Each
 * element is then clamp(zx + rne(x / sx)) with the division in double. The integer work runs in rows over the plan's pool; nothing
 * allocates at run time.
 *
 * linear_8da4w, ExecuTorch's 8da4w linear as XNNPACK's qd8-f32-qb4w GEMM computes it (docs/quantization.md): each
 * row of x quantized to int8 by XNNPACK's qd8 rule (par_requant_qd8_qparams and par_requant_qd8, core/requant.h),
 * the packed signed int4 weights unpacked to int8 at prepare, per output and block the exact int32 sum of (q - zp) w,
 * then y = (sum_b (float)acc_b * s[o, b]) * s_x + bias[o] in f32. A row without quantization parameters (a NaN or an
 * infinity in it) gives NaN outputs, which the reference calls anything.
 */
#include <math.h>
#include <stdlib.h>

#include "core/requant.h"
#include "plan_util.h"

/* The weights, their scales and the bias of both ops, copied at prepare: the first member of each op's state, so
 * that one destroy frees either. */
typedef struct lin_consts {
    int8_t *w;          /* [O, K] (linear_8da4w: the int4 weights unpacked) */
    float *scale;       /* linear_dynamic: [O] (per tensor: the same value O times); linear_8da4w: [O, nb] */
    float *bias;        /* [O] or NULL */
} lin_consts;

static void lin_destroy(void *p)
{
    lin_consts *c = p; /* the state's first member */
    if (!c) return;
    free(c->w);
    free(c->scale);
    free(c->bias);
    free(p);
}

typedef struct dyn_state {
    lin_consts c;
    int64_t O, K, rows;
    int32_t w_zp;       /* per-tensor zero point (0 per channel) */
    int reduce_range;
    int x_direct, y_direct;
    /* run-time state shared with the row tasks */
    const float *x;
    float *y;
    uint8_t *qx;
    int32_t zx;
    float sx;
} dyn_state;

/* One row: quantize it, then its O dot products. */
static void dyn_row(void *ctx, size_t r)
{
    dyn_state *st = ctx;
    const int64_t K = st->K, O = st->O;
    const float *x = st->x + (int64_t)r * K;
    uint8_t *q = st->qx + (int64_t)r * K;
    const int32_t qmax = st->reduce_range ? 127 : 255;
    for (int64_t k = 0; k < K; k++) {
        const double v = nearbyint((double)x[k] / (double)st->sx) + st->zx;
        q[k] = (uint8_t)(!(v >= 0) ? 0 : v > qmax ? qmax : v); /* NaN -> 0: converting it is undefined behaviour */
    }
    float *y = st->y + (int64_t)r * O;
    for (int64_t o = 0; o < O; o++) {
        const int8_t *w = st->c.w + o * K;
        int32_t acc = 0;
        for (int64_t k = 0; k < K; k++) acc += ((int32_t)q[k] - st->zx) * ((int32_t)w[k] - st->w_zp);
        const float scale = st->sx * st->c.scale[o];
        y[o] = (float)acc * scale + (st->c.bias ? st->c.bias[o] : 0.0f);
    }
}

/* The step's x in row-major order (x_direct: the tensor itself, else copied into the scratch) and where y is written
 * in row-major order (y_direct: the tensor, else the scratch after x's copy); returns the scratch left after them. */
static void *rows_begin(const cpu_plan *p, const cpu_step *s, int x_direct, int y_direct, const float **x, float **y)
{
    const cpu_tensor *xt = &p->t[s->in[0]], *yt = &p->t[s->out];
    float *scr = s->scratch;
    *x = xt->data;
    if (!x_direct) {
        int64_t rm[PAR_MAX_RANK];
        cpu_rowmajor_strides(xt->rank, xt->dims, rm);
        cpu_nd_copy(xt->rank, xt->dims, scr, rm, xt->data, xt->strides);
        *x = scr;
        scr += xt->numel;
    }
    *y = yt->data;
    if (!y_direct) {
        *y = scr;
        scr += yt->numel;
    }
    return scr;
}

/* y written in row-major order into the output tensor, where it is not the tensor itself. */
static void rows_end(const cpu_plan *p, const cpu_step *s, int y_direct, const float *y)
{
    const cpu_tensor *yt = &p->t[s->out];
    if (y_direct) return;
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(yt->rank, yt->dims, rm);
    cpu_nd_copy(yt->rank, yt->dims, yt->data, yt->strides, y, rm);
}

static void run_linear_dynamic(const cpu_plan *p, const cpu_step *s)
{
    dyn_state *st = s->state;
    const float *x;
    float *y;
    uint8_t *qx = rows_begin(p, s, st->x_direct, st->y_direct, &x, &y);
    const int64_t nx = p->t[s->in[0]].numel;
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < nx; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    par_requant_dynamic_qparams(mn, mx, st->reduce_range, &st->sx, &st->zx, NULL, NULL);
    st->x = x;
    st->y = y;
    st->qx = qx;
    cpu_parallel(p, dyn_row, st, (size_t)st->rows);
    rows_end(p, s, st->y_direct, y);
}

/* What both lowerings share: c's arrays (nw weight bytes, ns scales, the bias copied from bv when there is one),
 * whether x and y are row-major already, and the scratch: x and y in logical order where they are not, then the
 * quantized x (bytes). */
static par_status lin_prepare(const cpu_plan *p, cpu_step *s, lin_consts *c, int64_t nw, int64_t ns, int64_t O,
                              const par_value *bv, int *x_direct, int *y_direct, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    c->w = malloc((size_t)nw);
    c->scale = malloc((size_t)ns * sizeof(float));
    c->bias = bv ? malloc((size_t)O * sizeof(float)) : NULL;
    if (!c->w || !c->scale || (bv && !c->bias)) return par_msgf(msg, PAR_ERROR, "out of memory");
    if (bv) memcpy(c->bias, bv->data, (size_t)O * sizeof(float));
    *x_direct = cpu_tensor_rowmajor(x);
    *y_direct = cpu_tensor_rowmajor(y);
    const size_t need = (size_t)((*x_direct ? 0 : x->numel) + (*y_direct ? 0 : y->numel)) + (size_t)(x->numel + 3) / 4;
    return cpu_step_scratch(s, need, msg);
}

par_status cpu_lower_linear_dynamic(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]];
    const par_value *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    if (wv->rank != 2) return par_msgf(msg, PAR_ERROR, "linear_dynamic: weight rank %d, not 2", wv->rank);
    if (wv->quant_axis >= 0 && (wv->quant_axis != 0 || !wv->channel_scales))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic: per-channel weight scales on axis %d (only axis 0)",
                        wv->quant_axis);
    dyn_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = lin_destroy;
    st->O = wv->dims[0], st->K = wv->dims[1];
    st->rows = x->numel / st->K;
    st->reduce_range = par_attr_int(n, "reduce_range", 0) != 0;
    st->w_zp = wv->quant_axis >= 0 ? 0 : wv->zero_point;
    par_status r = lin_prepare(p, s, &st->c, wv->numel, st->O, st->O, bv, &st->x_direct, &st->y_direct, msg);
    if (r != PAR_OK) return r;
    memcpy(st->c.w, wv->data, (size_t)wv->numel);
    for (int64_t o = 0; o < st->O; o++) st->c.scale[o] = wv->quant_axis >= 0 ? wv->channel_scales[o] : wv->scale;
    s->run = run_linear_dynamic;
    return PAR_OK;
}

typedef struct q4_state {
    lin_consts c;
    int64_t O, K, rows, block, nb;
    int x_direct, y_direct;
    const float *x;     /* run-time state shared with the row tasks */
    float *y;
    int8_t *qx;         /* [rows, K] */
} q4_state;

/* One row: its qd8 parameters and integers, then its O outputs block by block. */
static void q4_row(void *ctx, size_t r)
{
    q4_state *st = ctx;
    const int64_t K = st->K, O = st->O, B = st->block;
    const float *x = st->x + (int64_t)r * K;
    int8_t *q = st->qx + (int64_t)r * K;
    float *y = st->y + (int64_t)r * O, inv, sx;
    int32_t zp;
    if (!par_requant_qd8_qparams(x, K, &inv, &sx, &zp)) {
        for (int64_t o = 0; o < O; o++) y[o] = NAN;
        return;
    }
    for (int64_t k = 0; k < K; k++) q[k] = (int8_t)par_requant_qd8(x[k], inv, zp);
    for (int64_t o = 0; o < O; o++) {
        const int8_t *w = st->c.w + o * K;
        float sum = 0.0f;
        for (int64_t b = 0; b < st->nb; b++) {
            int32_t acc = 0; /* |acc| <= 255 * 15 * block: exact */
            for (int64_t k = b * B; k < (b + 1) * B; k++) acc += ((int32_t)q[k] - zp) * (int32_t)w[k];
            sum += (float)acc * st->c.scale[o * st->nb + b];
        }
        y[o] = sum * sx + (st->c.bias ? st->c.bias[o] : 0.0f);
    }
}

static void run_linear_8da4w(const cpu_plan *p, const cpu_step *s)
{
    q4_state *st = s->state;
    const float *x;
    float *y;
    st->qx = rows_begin(p, s, st->x_direct, st->y_direct, &x, &y);
    st->x = x;
    st->y = y;
    cpu_parallel(p, q4_row, st, (size_t)st->rows);
    rows_end(p, s, st->y_direct, y);
}

par_status cpu_lower_linear_8da4w(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]];
    const par_value *wv = par_node_input(g, n, 1), *sv = par_node_input(g, n, 2), *bv = par_node_input(g, n, 3);
    q4_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = lin_destroy;
    st->O = wv->dims[0], st->K = 2 * wv->dims[1];
    st->block = par_attr_int(n, "block", 32);
    st->nb = st->K / st->block;
    st->rows = x->numel / st->K;
    par_status r = lin_prepare(p, s, &st->c, st->O * st->K, sv->numel, st->O, bv, &st->x_direct, &st->y_direct, msg);
    if (r != PAR_OK) return r;
    /* the weights as the node declares them (par_int4_form: s4 or u4, a zero point, the nibble order), in [-15, 15] */
    const uint8_t *packed = wv->data;
    par_int4 f;
    if (!par_int4_form(n, &f)) return par_msgf(msg, PAR_ERROR, "linear_8da4w: attribute w4_zp out of range");
    for (int64_t i = 0; i < st->O * st->K; i++) st->c.w[i] = (int8_t)par_int4_of(&f, packed[i / 2], i);
    memcpy(st->c.scale, sv->data, (size_t)sv->numel * sizeof(float));
    s->run = run_linear_8da4w;
    return PAR_OK;
}
