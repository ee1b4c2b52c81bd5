/*
 * qnn_dynamic.c - linear_dynamic of the qnnpack backend (PyTorch's quantized::linear_dynamic on its QNNPACK
 * engine): the f32 input is quantized per tensor to qu8 at run time from its own range with PyTorch's
 * ChooseQuantizationParams (the full range 0..255, or 0..127 with reduce_range), the int8 GEMM accumulates
 * sum_k (qx_k - zx)(qw_k - zw) exactly in int32, and the f32 epilogue is (float)acc * (sx * sw[o]) + b[o].
 *
 * Numerics (docs/budgets/linear-dynamic.md): the qparams are computed as PyTorch does (double scale, rounded to
 * float; the zero point from the double scale); x / sx is computed in float, so an x within 2^-22 of a rounding
 * tie may take the other neighbour than the reference's double quotient (budgeted); the epilogue rounds three
 * times in f32 (budgeted). A scalar GEMM (the micro-kernels' epilogue requantizes to uint8). Memory is taken at
 * prepare; run allocates nothing.
 */
#include <math.h>
#include <stdlib.h>

#include "core/requant.h"
#include "qnn_common.h"

typedef struct dyn_op {
    int32_t input_index; /* x is a graph input: read the bound buffer; else xf */
    const float *xf, *bias;
    float *y;
    size_t rows, k, o;
    int reduce_range;
    const int8_t *w;    /* [o][k] */
    int32_t wz;
    const float *wscale; /* [o] */
    uint8_t *qx;        /* [rows * k] scratch */
} dyn_op;

par_status par_qnn_check_dynamic(const par_graph_desc *g, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    const par_value *y = par_node_output(g, n, 0);
    if (!x || !w || !y) return par_msgf(msg, PAR_ERROR, "%s: missing input or output", n->op);
    if (x->dtype != PAR_DTYPE_F32 || y->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input '%s' and output '%s' must be f32", n->op, x->name, y->name);
    if (w->dtype != PAR_DTYPE_QS8 || w->kind != PAR_VALUE_CONST || w->rank != 2)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weights '%s' must be a qs8 constant [out, in]", n->op, w->name);
    if (w->quant_axis > 0 || (w->quant_axis == 0 && !w->channel_scales))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: weights '%s' quantized per channel along axis %d (only 0)", n->op,
                        w->name, (int)w->quant_axis);
    if (b && (b->dtype != PAR_DTYPE_F32 || b->kind != PAR_VALUE_CONST))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: bias '%s' must be an f32 constant", n->op, b->name);
    if (w->dims[1] > 16000)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: K = %lld could overflow the int32 accumulator", n->op,
                        (long long)w->dims[1]);
    return PAR_OK;
}

static void dyn_run(const void *opv, qnn_plan *p)
{
    const dyn_op *o = opv;
    const float *x = o->input_index >= 0 ? p->inputs[o->input_index] : o->xf;
    size_t n = o->rows * o->k;
    float mn = 0.0f, mx = 0.0f;
    for (size_t i = 0; i < n; i++) mn = x[i] < mn ? x[i] : mn, mx = x[i] > mx ? x[i] : mx;
    float sx;
    int32_t zx;
    par_requant_dynamic_qparams(mn, mx, o->reduce_range, &sx, &zx, NULL, NULL);
    const float qmax = o->reduce_range ? 127.0f : 255.0f;
    for (size_t i = 0; i < n; i++) { /* ATen's quantize_val: zp + nearbyint(x / scale), clamped */
        float t = nearbyintf(x[i] / sx) + (float)zx;
        o->qx[i] = (uint8_t)(!(t >= 0.0f) ? 0.0f : t > qmax ? qmax : t); /* NaN -> 0 */
    }
    for (size_t r = 0; r < o->rows; r++)
        for (size_t j = 0; j < o->o; j++) {
            const uint8_t *a = o->qx + r * o->k;
            const int8_t *w = o->w + j * o->k;
            int32_t acc = 0;
            for (size_t kk = 0; kk < o->k; kk++) acc += ((int32_t)a[kk] - zx) * ((int32_t)w[kk] - o->wz);
            float v = (float)acc * (sx * o->wscale[j]);
            o->y[r * o->o + j] = o->bias ? v + o->bias[j] : v;
        }
}

par_status par_qnn_lower_dynamic(qnn_plan *p, int32_t node, int variant, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = &g->nodes[node];
    const par_value *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    qnn_tensor *xt = &p->t[n->inputs[0]], *yt = &p->t[n->outputs[0]];
    dyn_op *o = par_qnn_alloc(p, sizeof *o);
    if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
    o->input_index = xt->input_index;
    o->xf = xt->fbuf;
    if (o->input_index < 0 && !o->xf)
        return par_msgf(msg, PAR_UNSUPPORTED, "linear_dynamic of an f32 value qnnpack does not produce");
    o->k = (size_t)wv->dims[1], o->o = (size_t)wv->dims[0];
    o->rows = o->k ? (size_t)xt->numel / o->k : 0;
    o->reduce_range = par_attr_int(n, "reduce_range", 0) != 0;
    o->w = wv->data;
    o->wz = wv->quant_axis == 0 ? 0 : wv->zero_point;
    o->bias = bv ? bv->data : NULL;
    float *ws = par_qnn_alloc(p, sizeof(float) * (o->o + 1));
    o->qx = par_qnn_alloc(p, o->rows * o->k + 1);
    o->y = yt->fbuf = par_qnn_alloc(p, sizeof(float) * ((size_t)yt->numel + 1));
    if (!ws || !o->qx || !o->y) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (size_t j = 0; j < o->o; j++) ws[j] = wv->quant_axis == 0 ? wv->channel_scales[j] : wv->scale;
    o->wscale = ws;
    return par_qnn_add_step(p, dyn_run, o, msg);
}
