/*
 * ops_dynamic.c - linear_dynamic, PyTorch's dynamically quantized linear (docs/ops.md): x (f32) is quantized per
 * tensor at run time to qu8 from its own range, the weights are a qs8 constant [O, K] (per tensor, or per channel on
 * axis 0), the int32 accumulator sum_k (qx_k - zx)(qw_ok - zw) is exact, and y = (float)acc * (sx * sw[o]) + b[o] in
 * f32.
 *
 * The run-time qparams are PyTorch's ChooseQuantizationParams, whose one definition is in core/requant.h. Each
 * element is then clamp(zx + rne(x / sx)) with the division in double. The integer work runs in rows over the plan's pool; nothing
 * allocates at run time.
 */
#include <math.h>
#include <stdlib.h>

#include "core/requant.h"
#include "plan_util.h"

typedef struct dyn_state {
    int64_t O, K, rows;
    int8_t *w;          /* [O, K] */
    int32_t w_zp;       /* per-tensor zero point (0 per channel) */
    float *w_scale;     /* [O] (per tensor: the same value O times) */
    float *bias;        /* [O] or NULL */
    int reduce_range;
    int x_direct, y_direct;
    /* run-time state shared with the row tasks */
    const float *x;
    float *y;
    uint8_t *qx;
    int32_t zx;
    float sx;
} dyn_state;

static void dyn_destroy(void *p)
{
    dyn_state *st = p;
    if (!st) return;
    free(st->w);
    free(st->w_scale);
    free(st->bias);
    free(st);
}

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
        const int8_t *w = st->w + o * K;
        int32_t acc = 0;
        for (int64_t k = 0; k < K; k++) acc += ((int32_t)q[k] - st->zx) * ((int32_t)w[k] - st->w_zp);
        const float scale = st->sx * st->w_scale[o];
        y[o] = (float)acc * scale + (st->bias ? st->bias[o] : 0.0f);
    }
}

static void run_linear_dynamic(const cpu_plan *p, const cpu_step *s)
{
    dyn_state *st = s->state;
    const cpu_tensor *xt = &p->t[s->in[0]], *yt = &p->t[s->out];
    const int64_t nx = xt->numel, ny = yt->numel;
    float *scr = s->scratch;
    int64_t rm[PAR_MAX_RANK];
    const float *x = xt->data;
    if (!st->x_direct) {
        cpu_rowmajor_strides(xt->rank, xt->dims, rm);
        cpu_nd_copy(xt->rank, xt->dims, scr, rm, xt->data, xt->strides);
        x = scr;
        scr += nx;
    }
    float *y = yt->data;
    if (!st->y_direct) {
        y = scr;
        scr += ny;
    }
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < nx; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    par_requant_dynamic_qparams(mn, mx, st->reduce_range, &st->sx, &st->zx, NULL, NULL);
    st->x = x;
    st->y = y;
    st->qx = (uint8_t *)scr;
    cpu_parallel(p, dyn_row, st, (size_t)st->rows);
    if (!st->y_direct) {
        cpu_rowmajor_strides(yt->rank, yt->dims, rm);
        cpu_nd_copy(yt->rank, yt->dims, yt->data, yt->strides, y, rm);
    }
}

par_status cpu_lower_linear_dynamic(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    const par_value *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    if (wv->rank != 2) return par_msgf(msg, PAR_ERROR, "linear_dynamic: weight rank %d, not 2", wv->rank);
    if (wv->quant_axis >= 0 && (wv->quant_axis != 0 || !wv->channel_scales))
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic: per-channel weight scales on axis %d (only axis 0)",
                        wv->quant_axis);
    dyn_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = dyn_destroy;
    st->O = wv->dims[0], st->K = wv->dims[1];
    st->rows = x->numel / st->K;
    st->reduce_range = par_attr_int(n, "reduce_range", 0) != 0;
    st->w_zp = wv->quant_axis >= 0 ? 0 : wv->zero_point;
    st->w = malloc((size_t)wv->numel);
    st->w_scale = malloc((size_t)st->O * sizeof(float));
    st->bias = bv ? malloc((size_t)st->O * sizeof(float)) : NULL;
    if (!st->w || !st->w_scale || (bv && !st->bias)) return par_msgf(msg, PAR_ERROR, "out of memory");
    memcpy(st->w, wv->data, (size_t)wv->numel);
    for (int64_t o = 0; o < st->O; o++) st->w_scale[o] = wv->quant_axis >= 0 ? wv->channel_scales[o] : wv->scale;
    if (bv) memcpy(st->bias, bv->data, (size_t)st->O * sizeof(float));
    st->x_direct = cpu_tensor_rowmajor(x);
    st->y_direct = cpu_tensor_rowmajor(y);
    /* scratch: x in logical order, y in logical order (each when needed), then the quantized x (bytes) */
    const size_t need = (size_t)((st->x_direct ? 0 : x->numel) + (st->y_direct ? 0 : y->numel)) +
                        (size_t)(x->numel + 3) / 4;
    par_status r = cpu_step_scratch(s, need, msg);
    if (r != PAR_OK) return r;
    s->run = run_linear_dynamic;
    return PAR_OK;
}
