/*
 * tflite_export_ops.c - the TFLite exporter's op writers: one function per op family of the op table (tflite.c),
 * and the decompositions of ops TFLite has no builtin for (batch_norm, global_avg_pool2d; the decoder-block ops in
 * tflite_export_attn.c); par_tfx_node picks one.
 * The driver, the layouts and what cannot be expressed: tflite_export.c.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/layout.h"
#include "formats/tflite_export_int.h"
static const par_value *V(const ex *e, const par_node *n, int32_t i) { return par_node_input(e->g, n, i); }

static int same_pad(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi)
{
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + (k - 1) * d + 1 - in;
    if (total < 0) total = 0;
    return lo == total / 2 && hi == total - total / 2;
}

/* SAME, VALID, or -1 for explicit padding TFLite has no mode for. */
static int32_t pad_mode(const par_node *n, const par_value *x, int64_t kh, int64_t kw, int64_t dh, int64_t dw)
{
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (!strcmp(mode, "same")) return PAR_TFL_PAD_SAME;
    if (!strcmp(mode, "valid")) return PAR_TFL_PAD_VALID;
    int64_t p[4], sh = par_attr_ints_at(n, "stride", 0, 1), sw = par_attr_ints_at(n, "stride", 1, 1);
    for (int32_t i = 0; i < 4; i++) p[i] = par_attr_ints_at(n, "padding", i, 0);
    if (!p[0] && !p[1] && !p[2] && !p[3]) return PAR_TFL_PAD_VALID;
    if (same_pad(x->dims[2], kh, sh, dh, p[0], p[2]) && same_pad(x->dims[3], kw, sw, dw, p[1], p[3]))
        return PAR_TFL_PAD_SAME;
    return -1;
}

static int ex_conv(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0), *w = V(e, n, 1), *b = V(e, n, 2);
    int64_t groups = par_attr_int(n, "groups", 1), dh = par_attr_ints_at(n, "dilation", 0, 1),
            dw = par_attr_ints_at(n, "dilation", 1, 1);
    if (x->rank != 4) return UNSUP("input of rank %d", (int)x->rank);
    int dwise = groups > 1 && groups == x->dims[1] && w->dims[1] == 1;
    if ((x->dtype == PAR_DTYPE_QU8) != (w->dtype == PAR_DTYPE_QU8))
        return UNSUP("%s input with %s weights (TFLite's kernels take both of one type)", par_dtype_name(x->dtype),
                     par_dtype_name(w->dtype));
    int32_t xt = tv(e, n->inputs[0]);
    int32_t padm = pad_mode(n, x, w->dims[2], w->dims[3], dh, dw);
    if (padm < 0) {
        /* explicit padding: a PAD (zeros) in front of a VALID convolution */
        int64_t pads[8] = {0, 0, par_attr_ints_at(n, "padding", 0, 0), par_attr_ints_at(n, "padding", 2, 0),
                           par_attr_ints_at(n, "padding", 1, 0), par_attr_ints_at(n, "padding", 3, 0), 0, 0};
        char nm[300];
        snprintf(nm, sizeof nm, "%s:paddings", n->name);
        int32_t pt = const_i32(e, nm, 8, pads, 1);
        if (xt < 0 || pt < 0) return 0;
        int64_t shape[4] = {x->dims[0], x->dims[2] + pads[2] + pads[3], x->dims[3] + pads[4] + pads[5], x->dims[1]};
        snprintf(nm, sizeof nm, "%s:padded", n->name);
        int32_t y = tensor(e, nm, e->t[xt].type, 4, shape, 0);
        if (y < 0) return 0;
        e->t[y].quant = e->t[xt].quant;
        int32_t ins[2] = {xt, pt};
        if (!op(e, PAR_TFL_OP_PAD, 2, ins, y)) return 0;
        xt = y;
        padm = PAR_TFL_PAD_VALID;
    }
    int32_t wt;
    if (dwise) {
        static const int32_t p[4] = {1, 2, 3, 0}; /* [C*m,1,kh,kw] -> [1,kh,kw,C*m] */
        if (w->kind != PAR_VALUE_CONST) return UNSUP("depthwise weights that are not a constant");
        wt = make_tensor(e, n->inputs[1], p, "");
    } else {
        wt = tv(e, n->inputs[1]);
    }
    int32_t bt = b ? tv(e, n->inputs[2]) : -1;
    if (!b && e->st == PAR_OK) {
        /* LiteRT's convolutions want a bias: zeros (which the importer drops again) */
        int32_t nc = (int32_t)w->dims[0], quantized = x->dtype == PAR_DTYPE_QS8 || x->dtype == PAR_DTYPE_QU8;
        if (x->dtype != PAR_DTYPE_F32 && !quantized) return UNSUP("no bias, and a %s input", par_dtype_name(x->dtype));
        void *z = calloc((size_t)nc, 4);
        int32_t buf = z ? buffer(e, z, (size_t)nc * 4) : -1;
        free(z);
        char nm[300];
        snprintf(nm, sizeof nm, "%s:zero_bias", n->name);
        int64_t shape[1] = {nc};
        bt = buf < 0 ? -1 : tensor(e, nm, quantized ? PAR_TFL_INT32 : PAR_TFL_FLOAT32, 1, shape, buf);
        if (bt < 0) return 0;
        if (quantized) {
            par_tfl_quant *q = par_tfl_alloc(e->m, sizeof *q);
            int32_t ns = w->quant_axis >= 0 ? nc : 1;
            if (!q || !(q->scale = par_tfl_alloc(e->m, (size_t)ns * 4)) ||
                !(q->zero_point = par_tfl_alloc(e->m, (size_t)ns * 8)))
                return fail(e, PAR_ERROR, "out of memory");
            q->n_scale = q->n_zero_point = ns;
            for (int32_t i = 0; i < ns; i++) q->scale[i] = x->scale * (w->quant_axis >= 0 ? w->channel_scales[i] : w->scale);
            e->t[bt].quant = q;
        }
    }
    if (b && bt >= 0 && b->dtype == PAR_DTYPE_I32 && w->quant_axis >= 0 && x->scale > 0) {
        /* TFLite's bias scales are the products s_x * s_w[c], one per channel */
        par_tfl_quant *q = e->t[bt].quant;
        int32_t nc = (int32_t)w->dims[0];
        if (q && q->n_scale == 1 && nc > 1) {
            float *s = par_tfl_alloc(e->m, (size_t)nc * 4);
            int64_t *z = par_tfl_alloc(e->m, (size_t)nc * 8);
            if (!s || !z) return fail(e, PAR_ERROR, "out of memory");
            for (int32_t i = 0; i < nc; i++) s[i] = x->scale * w->channel_scales[i];
            q->scale = s, q->zero_point = z, q->n_scale = q->n_zero_point = nc;
        }
    }
    int32_t y = tv(e, n->outputs[0]);
    int32_t ins[3] = {xt, wt, bt}; /* an absent bias is index -1: LiteRT's convolutions want three inputs */
    par_tfl_op *o = op(e, dwise ? PAR_TFL_OP_DEPTHWISE_CONV_2D : PAR_TFL_OP_CONV_2D, 3, ins, y);
    if (!o) return 0;
    o->opt.padding = padm;
    o->opt.stride_h = (int32_t)par_attr_ints_at(n, "stride", 0, 1);
    o->opt.stride_w = (int32_t)par_attr_ints_at(n, "stride", 1, 1);
    o->opt.dilation_h = (int32_t)dh;
    o->opt.dilation_w = (int32_t)dw;
    if (dwise) o->opt.depth_multiplier = (int32_t)(w->dims[0] / x->dims[1]);
    return 1;
}

static int ex_fc(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0), *w = V(e, n, 1);
    if (w->rank != 2) return UNSUP("weights of rank %d", (int)w->rank);
    if ((x->dtype == PAR_DTYPE_QU8) != (w->dtype == PAR_DTYPE_QU8))
        return UNSUP("%s input with %s weights (TFLite's kernels take both of one type)", par_dtype_name(x->dtype),
                     par_dtype_name(w->dtype));
    int32_t ins[3] = {raw_in(e, n->inputs[0]), tv(e, n->inputs[1]), n->inputs[2] >= 0 ? tv(e, n->inputs[2]) : -1};
    int32_t r = raw_out(e, n->outputs[0]);
    par_tfl_op *o = op(e, PAR_TFL_OP_FULLY_CONNECTED, n->n_inputs > 2 && n->inputs[2] >= 0 ? 3 : 2, ins, r);
    if (!o) return 0;
    o->opt.keep_num_dims = x->rank != 2;
    return finish_raw(e, n->outputs[0], r);
}

static int ex_bmm(ex *e, const par_node *n)
{
    if (V(e, n, 0)->dtype == PAR_DTYPE_QU8) return UNSUP("qu8 (TFLite's BATCH_MATMUL takes f32, int8 and int16)");
    int32_t ins[2] = {raw_in(e, n->inputs[0]), raw_in(e, n->inputs[1])};
    int32_t r = raw_out(e, n->outputs[0]);
    return op(e, PAR_TFL_OP_BATCH_MATMUL, 2, ins, r) && finish_raw(e, n->outputs[0], r);
}

/* An operand of a rank-4 elementwise op given at a lower rank: lifted to rank 4 (leading 1s, as parity's
 * broadcasting aligns the last axes of NCHW), then NHWC. A rank-4 operand of a rank-5+ result goes in parity's order
 * (raw_in) instead. */
static int32_t lift(ex *e, int32_t vi)
{
    const par_value *v = &e->g->values[vi];
    int64_t d[4] = {1, 1, 1, 1}, shape[4];
    for (int32_t i = 0; i < v->rank; i++) d[4 - v->rank + i] = v->dims[i];
    for (int32_t j = 0; j < 4; j++) shape[j] = d[TO_NHWC[j]];
    char name[300];
    snprintf(name, sizeof name, "%s:4d", v->name);
    int32_t type = tfl_type(v->dtype);
    if (type < 0) return UNSUP("value '%s' of dtype %s", v->name, par_dtype_name(v->dtype)), -1;
    int32_t y;
    if (v->kind == PAR_VALUE_CONST) {
        size_t esz = par_dtype_size(v->dtype), size = (size_t)v->numel * esz;
        void *data = malloc(size + 1);
        if (!data) return fail(e, PAR_ERROR, "out of memory"), -1;
        par_fmt_permute(v->data, data, esz, 4, d, TO_NHWC);
        int32_t buf = buffer(e, data, size);
        free(data);
        y = buf < 0 ? -1 : tensor(e, name, type, 4, shape, buf);
        if (y >= 0 && !quant(e, y, v, 0)) return -1;
        return y;
    }
    int32_t x = tv(e, vi);
    if (x < 0) return -1;
    char rn[300];
    snprintf(rn, sizeof rn, "%s:4d:raw", v->name);
    int32_t r = tensor(e, rn, type, 4, d, 0), st = const_i32(e, strcat(rn, ":shape"), 4, d, 0);
    if (r < 0 || st < 0) return -1;
    e->t[r].quant = e->t[x].quant;
    int32_t ins[2] = {x, st};
    par_tfl_op *o = op(e, PAR_TFL_OP_RESHAPE, 2, ins, r);
    if (!o) return -1;
    o->opt.has_ints = 1;
    o->opt.n_ints = 4;
    o->opt.ints = par_tfl_alloc(e->m, 16);
    if (!o->opt.ints) return fail(e, PAR_ERROR, "out of memory"), -1;
    for (int32_t i = 0; i < 4; i++) o->opt.ints[i] = (int32_t)d[i];
    return transpose(e, r, 4, TO_NHWC, name);
}

static int ex_binary(ex *e, const par_node *n, const par_tfl_opmap *mp)
{
    const par_value *y = &e->g->values[n->outputs[0]];
    int32_t ins[2];
    for (int32_t i = 0; i < 2; i++) {
        const par_value *v = V(e, n, i);
        /* an NHWC operand of a rank-5+ result: TFLite aligns its last axes, parity those of its NCHW order */
        ins[i] = y->rank == 4 && v->rank < 4 && v->numel != 1 ? lift(e, n->inputs[i])
                 : y->rank > 4 && v->rank == 4                ? raw_in(e, n->inputs[i])
                                                              : tv(e, n->inputs[i]);
    }
    return op(e, mp->code, 2, ins, tv(e, n->outputs[0])) != NULL;
}

static int ex_pool(ex *e, const par_node *n, const par_tfl_opmap *mp)
{
    const par_value *x = V(e, n, 0), *y = &e->g->values[n->outputs[0]];
    int64_t kh = par_attr_ints_at(n, "kernel", 0, 1), kw = par_attr_ints_at(n, "kernel", 1, 1);
    if (par_attr_int(n, "ceil_mode", 0)) return UNSUP("ceil_mode (TFLite's pools floor)");
    /* TFLite's quantization specification: a pool's output has its input's scale and zero point (the kernels
     * average or pick the stored integers and requantize nothing) */
    if ((y->dtype == PAR_DTYPE_QU8 || y->dtype == PAR_DTYPE_QS8) &&
        (y->scale != x->scale || y->zero_point != x->zero_point))
        return UNSUP("quantized pooling with another output scale or zero point than the input's (TFLite's pools "
                     "requantize nothing)");
    if (par_attr_ints_at(n, "dilation", 0, 1) != 1 || par_attr_ints_at(n, "dilation", 1, 1) != 1)
        return UNSUP("dilation (TFLite's pools have none)");
    int32_t pm = pad_mode(n, x, kh, kw, 1, 1);
    if (pm < 0) return UNSUP("explicit padding other than SAME's (TFLite pools pad SAME or not at all)");
    if (pm == PAR_TFL_PAD_SAME && !strcmp(n->op, "avg_pool2d") && par_attr_int(n, "count_include_pad", 1)) {
        int zero = 1;
        for (int32_t i = 0; i < 4; i++) zero &= par_attr_ints_at(n, "padding", i, 0) == 0;
        if (!zero) return UNSUP("count_include_pad with padding (TFLite averages over the real elements only)");
    }
    int32_t in0 = tv(e, n->inputs[0]);
    par_tfl_op *o = op(e, mp->code, 1, &in0, tv(e, n->outputs[0]));
    if (!o) return 0;
    o->opt.padding = pm;
    o->opt.filter_h = (int32_t)kh, o->opt.filter_w = (int32_t)kw;
    o->opt.stride_h = (int32_t)par_attr_ints_at(n, "stride", 0, 1);
    o->opt.stride_w = (int32_t)par_attr_ints_at(n, "stride", 1, 1);
    return 1;
}

static int ex_reduce(ex *e, const par_node *n, const par_tfl_opmap *mp)
{
    const par_value *x = V(e, n, 0);
    int32_t r = x->rank, p[MAXR], keep = (int32_t)par_attr_int(n, "keepdims", 0);
    fwd(r, p);
    int32_t inv[MAXR];
    for (int32_t j = 0; j < r; j++) inv[p[j]] = j; /* stored axis i is TFLite axis inv[i] */
    int64_t axes[MAXR];
    int red[MAXR] = {0};
    int32_t na = par_attr_count(n, "axes");
    for (int32_t i = 0; i < na; i++) {
        int64_t a = par_attr_ints_at(n, "axes", i, 0);
        if (a < 0) a += r;
        if (a < 0 || a >= r) return fail(e, PAR_ERROR, "axis out of range");
        axes[i] = inv[a];
        red[a] = 1;
    }
    char nm[300];
    snprintf(nm, sizeof nm, "%s:axes", n->name);
    int32_t ins[2] = {tv(e, n->inputs[0]), const_i32(e, nm, na, axes, 0)};
    const par_value *y = &e->g->values[n->outputs[0]];
    int32_t out, perm[MAXR], m = 0, id = 1;
    int to_nhwc = !keep && r != 4 && y->rank == 4; /* rank 5+ to 4: the result is in parity's order */
    if (keep || r != 4) {
        out = to_nhwc ? raw_out(e, n->outputs[0]) : tv(e, n->outputs[0]);
    } else {
        /* TFLite keeps the remaining axes in NHWC order, parity in NCHW order: a TRANSPOSE puts them back */
        int32_t logical[MAXR];
        for (int32_t i = 0; i < r; i++)
            if (!red[i]) logical[m++] = inv[i];
        for (int32_t i = 0; i < m; i++) {
            perm[i] = 0;
            for (int32_t j = 0; j < m; j++) perm[i] += logical[j] < logical[i];
            id &= perm[i] == i;
        }
        int64_t shape[MAXR];
        for (int32_t i = 0; i < m; i++) shape[perm[i]] = y->dims[i];
        snprintf(nm, sizeof nm, "%s:nhwc", y->name);
        out = id ? tv(e, n->outputs[0]) : tensor(e, nm, tfl_type(y->dtype), m, shape, 0);
        if (!id && out >= 0 && !quant(e, out, y, 0)) return 0;
    }
    par_tfl_op *o = op(e, mp->code, 2, ins, out);
    if (!o) return 0;
    o->opt.keep_dims = keep;
    if (to_nhwc) return finish_raw(e, n->outputs[0], out);
    if (!keep && r == 4 && !id) {
        int32_t t = transpose(e, out, m, perm, y->name);
        e->tv[n->outputs[0]] = t;
        return t >= 0;
    }
    return 1;
}

static int ex_reshape(ex *e, const par_node *n)
{
    const par_value *y = &e->g->values[n->outputs[0]];
    char nm[300];
    snprintf(nm, sizeof nm, "%s:shape", n->name);
    int32_t ins[2] = {raw_in(e, n->inputs[0]), const_i32(e, nm, y->rank, y->dims, 0)};
    int32_t r = raw_out(e, n->outputs[0]);
    par_tfl_op *o = op(e, PAR_TFL_OP_RESHAPE, 2, ins, r);
    if (!o) return 0;
    o->opt.has_ints = 1;
    o->opt.n_ints = y->rank;
    o->opt.ints = par_tfl_alloc(e->m, (size_t)y->rank * 4 + 1);
    if (!o->opt.ints) return fail(e, PAR_ERROR, "out of memory");
    for (int32_t i = 0; i < y->rank; i++) o->opt.ints[i] = (int32_t)y->dims[i];
    return finish_raw(e, n->outputs[0], r);
}

static int ex_softmax(ex *e, const par_node *n, const par_tfl_opmap *mp)
{
    const par_value *x = V(e, n, 0), *yv = &e->g->values[n->outputs[0]];
    int32_t r = x->rank, p[MAXR], axis = (int32_t)par_attr_int(n, "axis", -1);
    if (!strcmp(n->op, "softmax") && (yv->dtype == PAR_DTYPE_QS8 || yv->dtype == PAR_DTYPE_QU8) &&
        (yv->scale != 1.0f / 256 || yv->zero_point != (yv->dtype == PAR_DTYPE_QS8 ? -128 : 0)))
        return UNSUP("quantized output scale %g, zero point %d (TFLite's quantized softmax outputs 1/256 from the "
                     "dtype's lowest integer)", (double)yv->scale, (int)yv->zero_point);
    if (axis < 0) axis += r;
    fwd(r, p);
    int32_t la = 0; /* the TFLite axis of parity's axis */
    for (int32_t j = 0; j < r; j++)
        if (p[j] == axis) la = j;
    int32_t xt = tv(e, n->inputs[0]);
    if (la == r - 1) {
        par_tfl_op *o = op(e, mp->code, 1, &xt, tv(e, n->outputs[0]));
        if (o && mp->code == PAR_TFL_OP_SOFTMAX) o->opt.beta = 1.0f;
        return o != NULL;
    }
    /* move the axis last, and back */
    int32_t perm[MAXR], back[MAXR], k = 0;
    for (int32_t j = 0; j < r; j++)
        if (j != la) perm[k++] = j;
    perm[r - 1] = la;
    for (int32_t j = 0; j < r; j++) back[perm[j]] = j;
    const par_value *y = &e->g->values[n->outputs[0]];
    char nm[300];
    snprintf(nm, sizeof nm, "%s:last", x->name);
    int32_t a = transpose(e, xt, r, perm, nm);
    if (a < 0) return 0;
    snprintf(nm, sizeof nm, "%s:last", y->name);
    int64_t shape[MAXR];
    for (int32_t j = 0; j < r; j++) shape[j] = e->t[a].shape[j];
    int32_t b = tensor(e, nm, tfl_type(y->dtype), r, shape, 0);
    if (b < 0) return 0;
    if (!quant(e, b, y, 0)) return 0;
    par_tfl_op *o = op(e, mp->code, 1, &a, b);
    if (!o) return 0;
    if (mp->code == PAR_TFL_OP_SOFTMAX) o->opt.beta = 1.0f;
    int32_t t = transpose(e, b, r, back, y->name);
    e->tv[n->outputs[0]] = t;
    return t >= 0;
}

static int ex_concat(ex *e, const par_node *n)
{
    const par_value *y = &e->g->values[n->outputs[0]];
    int32_t r = y->rank, p[MAXR], ins[64], axis = (int32_t)par_attr_int(n, "axis", 1);
    if (axis < 0) axis += r;
    fwd(r, p);
    for (int32_t i = 0; i < n->n_inputs && i < 64; i++) {
        const par_value *x = V(e, n, i);
        /* TFLite's int8 specification: every input of CONCATENATION has the output's scale and zero point */
        if (y->dtype == PAR_DTYPE_QS8 && (x->scale != y->scale || x->zero_point != y->zero_point))
            return UNSUP("qs8 input %d with another scale or zero point than the output (TFLite's int8 "
                         "CONCATENATION requantizes nothing)", (int)i);
        ins[i] = tv(e, n->inputs[i]);
    }
    par_tfl_op *o = op(e, PAR_TFL_OP_CONCATENATION, n->n_inputs, ins, tv(e, n->outputs[0]));
    if (!o) return 0;
    for (int32_t j = 0; j < r; j++)
        if (p[j] == axis) o->opt.axis = j;
    return 1;
}

static int ex_pad(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0);
    if (strcmp(par_attr_str(n, "mode", "constant"), "constant") != 0)
        return UNSUP("mode '%s' (MIRROR_PAD is not in the op table)", par_attr_str(n, "mode", ""));
    int32_t r = x->rank, p[MAXR];
    fwd(r, p);
    int64_t pads[2 * MAXR];
    for (int32_t j = 0; j < r; j++) {
        pads[2 * j] = par_attr_ints_at(n, "pads", 2 * p[j], 0);
        pads[2 * j + 1] = par_attr_ints_at(n, "pads", 2 * p[j] + 1, 0);
        if (pads[2 * j] < 0 || pads[2 * j + 1] < 0) return UNSUP("negative pads");
    }
    double value = par_attr_float(n, "value", 0);
    char nm[300];
    snprintf(nm, sizeof nm, "%s:paddings", n->name);
    int32_t ins[3] = {tv(e, n->inputs[0]), const_i32(e, nm, 2 * r, pads, 1), -1};
    if (value != 0) {
        if (x->dtype != PAR_DTYPE_F32) return UNSUP("a non-zero value on a %s tensor", par_dtype_name(x->dtype));
        float f = (float)value;
        int32_t buf = buffer(e, &f, 4);
        snprintf(nm, sizeof nm, "%s:value", n->name);
        ins[2] = buf < 0 ? -1 : tensor(e, nm, PAR_TFL_FLOAT32, 0, NULL, buf);
        if (ins[2] < 0) return 0;
    }
    return op(e, value != 0 ? PAR_TFL_OP_PADV2 : PAR_TFL_OP_PAD, value != 0 ? 3 : 2, ins, tv(e, n->outputs[0])) != NULL;
}

static int ex_unary(ex *e, const par_node *n, const par_tfl_opmap *mp)
{
    if (mp->code == PAR_TFL_OP_RELU_N1_TO_1 &&
        (par_attr_float(n, "min_val", -1) != -1 || par_attr_float(n, "max_val", 1) != 1))
        return UNSUP("bounds other than [-1, 1] (RELU_N1_TO_1)");
    if (mp->code == PAR_TFL_OP_ELU && par_attr_float(n, "alpha", 1) != 1) return UNSUP("alpha != 1 (TFLite's ELU)");
    const par_value *y = &e->g->values[n->outputs[0]];
    if ((mp->code == PAR_TFL_OP_LOGISTIC || mp->code == PAR_TFL_OP_TANH) &&
        (y->dtype == PAR_DTYPE_QU8 || y->dtype == PAR_DTYPE_QS8)) {
        /* TFLite's quantized LOGISTIC and TANH take one output quantization only (its kernels check it) */
        const int logistic = mp->code == PAR_TFL_OP_LOGISTIC, u8 = y->dtype == PAR_DTYPE_QU8;
        const float scale = logistic ? 1.0f / 256 : 1.0f / 128;
        const int32_t zp = logistic ? (u8 ? 0 : -128) : (u8 ? 128 : 0);
        if (y->scale != scale || y->zero_point != zp)
            return UNSUP("quantized %s with output scale %g and zero point %d (TFLite takes only %g and %d)",
                         logistic ? "LOGISTIC" : "TANH", (double)y->scale, (int)y->zero_point, (double)scale,
                         (int)zp);
    }
    int32_t x = tv(e, n->inputs[0]);
    par_tfl_op *o = op(e, mp->code, 1, &x, tv(e, n->outputs[0]));
    if (!o) return 0;
    if (mp->code == PAR_TFL_OP_LEAKY_RELU) o->opt.alpha = (float)par_attr_float(n, "negative_slope", 0.01);
    if (mp->code == PAR_TFL_OP_GELU) o->opt.approximate = !strcmp(par_attr_str(n, "approximate", "none"), "tanh");
    return 1;
}

static int ex_prelu(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0), *s = V(e, n, 1);
    if (x->rank != 4 && x->rank != 2) return UNSUP("input of rank %d (TFLite's slope broadcasts on the last axis)",
                                                   (int)x->rank);
    if (s->kind != PAR_VALUE_CONST) return UNSUP("slope not a constant");
    /* [C] -> [1, 1, C] against NHWC (or [C] against [N, C]) */
    int64_t shape[3] = {1, 1, s->dims[0]};
    int32_t buf = buffer(e, s->data, (size_t)s->numel * par_dtype_size(s->dtype));
    int32_t st = buf < 0 ? -1 : tensor(e, s->name, tfl_type(s->dtype), x->rank == 4 ? 3 : 1,
                                       x->rank == 4 ? shape : shape + 2, buf);
    int32_t ins[2] = {tv(e, n->inputs[0]), st};
    return st >= 0 && op(e, PAR_TFL_OP_PRELU, 2, ins, tv(e, n->outputs[0])) != NULL;
}

static int ex_resize(ex *e, const par_node *n, const par_tfl_opmap *mp)
{
    const par_value *y = &e->g->values[n->outputs[0]], *x = V(e, n, 0);
    /* parity with a scale maps coordinates by 1/scale, TFLite by in/out: the same only when scale is out/in */
    for (int32_t i = 0; i < par_attr_count(n, "scale") && i < 2; i++)
        if (par_attr_floats_at(n, "scale", i, 0) != (double)y->dims[2 + i] / (double)x->dims[2 + i])
            return UNSUP("scale %g is not output/input size %lld/%lld (TFLite maps coordinates by the sizes)",
                         par_attr_floats_at(n, "scale", i, 0), (long long)y->dims[2 + i], (long long)x->dims[2 + i]);
    /* TFLite's quantization specification: RESIZE_BILINEAR's and RESIZE_NEAREST_NEIGHBOR's output has the input's
     * scale and zero point (the built-in kernels requantize nothing, the XNNPACK delegate refuses to prepare) */
    if ((y->dtype == PAR_DTYPE_QU8 || y->dtype == PAR_DTYPE_QS8) &&
        (y->scale != x->scale || y->zero_point != x->zero_point))
        return UNSUP("quantized resize with another output scale or zero point than the input's (TFLite's resizes "
                     "requantize nothing)");
    char nm[300];
    snprintf(nm, sizeof nm, "%s:size", n->name);
    int32_t ins[2] = {tv(e, n->inputs[0]), const_i32(e, nm, 2, y->dims + 2, 0)};
    int32_t code = !strcmp(n->op, "upsample_bilinear2d") ? PAR_TFL_OP_RESIZE_BILINEAR : PAR_TFL_OP_RESIZE_NEAREST_NEIGHBOR;
    (void)mp;
    par_tfl_op *o = op(e, code, 2, ins, tv(e, n->outputs[0]));
    if (!o) return 0;
    if (code == PAR_TFL_OP_RESIZE_BILINEAR) {
        o->opt.align_corners = par_attr_int(n, "align_corners", 0) != 0;
        o->opt.half_pixel_centers = !o->opt.align_corners;
    } else {
        o->opt.half_pixel_centers = !strcmp(n->op, "upsample_nearest_exact2d");
    }
    return 1;
}

static int ex_permute(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0);
    int32_t r = x->rank, pin[MAXR], pout[MAXR], inv_out[MAXR], q[MAXR], perm[MAXR];
    /* parity: V_out = permute(V_in, q). TFLite tensors are L = V by fwd: L.dims[j] = V.dims[fwd[j]]. The TFLite
     * perm: L_out.dims[i] = L_in.dims[perm[i]]; V_out.dims[k] = V_in.dims[q[k]]. */
    fwd(r, pin);
    fwd(r, pout);
    for (int32_t j = 0; j < r; j++) inv_out[pout[j]] = j, q[j] = (int32_t)par_attr_ints_at(n, "perm", j, j);
    int32_t inv_in[MAXR];
    for (int32_t j = 0; j < r; j++) inv_in[pin[j]] = j;
    /* L_out.dims[i] = V_out.dims[pout[i]] = V_in.dims[q[pout[i]]] = L_in.dims[inv_in[q[pout[i]]]] */
    for (int32_t i = 0; i < r; i++) perm[i] = inv_in[q[pout[i]]];
    (void)inv_out;
    int64_t pp[MAXR];
    for (int32_t i = 0; i < r; i++) pp[i] = perm[i];
    char nm[300];
    snprintf(nm, sizeof nm, "%s:perm", n->name);
    int32_t ins[2] = {tv(e, n->inputs[0]), const_i32(e, nm, r, pp, 0)};
    return op(e, PAR_TFL_OP_TRANSPOSE, 2, ins, tv(e, n->outputs[0])) != NULL;
}

static int ex_slice(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0);
    int32_t r = x->rank, p[MAXR], dim = (int32_t)par_attr_int(n, "dim", 0);
    if (dim < 0) dim += r;
    fwd(r, p);
    int64_t b[MAXR], en[MAXR], s[MAXR];
    for (int32_t j = 0; j < r; j++) {
        int64_t d = x->dims[p[j]];
        b[j] = 0, en[j] = d, s[j] = 1;
        if (p[j] != dim) continue;
        int64_t st = par_attr_int(n, "start", 0), end = par_attr_int(n, "end", INT64_MAX);
        if (st < 0) st += d;
        if (end < 0) end += d;
        st = st < 0 ? 0 : st > d ? d : st;
        end = end < st ? st : end > d ? d : end;
        b[j] = st, en[j] = end, s[j] = par_attr_int(n, "step", 1);
    }
    char nm[300], nm2[300], nm3[300];
    snprintf(nm, sizeof nm, "%s:begin", n->name);
    snprintf(nm2, sizeof nm2, "%s:end", n->name);
    snprintf(nm3, sizeof nm3, "%s:strides", n->name);
    int32_t ins[4] = {tv(e, n->inputs[0]), const_i32(e, nm, r, b, 0), const_i32(e, nm2, r, en, 0),
                      const_i32(e, nm3, r, s, 0)};
    return op(e, PAR_TFL_OP_STRIDED_SLICE, 4, ins, tv(e, n->outputs[0])) != NULL;
}

/* batch_norm, which TFLite has no builtin for (converters fold it into the convolution before it): MUL by
 * s = w / sqrt(var + eps) and ADD of t = b - mean s, per channel on the last axis (NHWC's C, or [N, C]); s and t
 * computed in double and stored as f32, the folded form the reference's budget covers (reference/norm.c). */
static int ex_batch_norm(ex *e, const par_node *n)
{
    const par_value *x = V(e, n, 0), *y = &e->g->values[n->outputs[0]];
    if (x->dtype != PAR_DTYPE_F32) return UNSUP("batch_norm on %s (f32 only)", par_dtype_name(x->dtype));
    if (x->rank != 4 && x->rank != 2) return UNSUP("batch_norm of rank %d (the channel must be TFLite's last axis)",
                                                   (int)x->rank);
    const par_value *p[4];
    for (int32_t i = 0; i < 4; i++) {
        p[i] = V(e, n, i + 1);
        if (p[i]->kind != PAR_VALUE_CONST || p[i]->dtype != PAR_DTYPE_F32)
            return UNSUP("batch_norm with a parameter that is not an f32 constant");
    }
    const int64_t ch = x->dims[1];
    double eps = par_attr_float(n, "eps", 1e-5);
    float *st = malloc(sizeof *st * (size_t)(2 * ch));
    if (!st) return fail(e, PAR_ERROR, "out of memory");
    const float *w = p[0]->data, *b = p[1]->data, *mean = p[2]->data, *var = p[3]->data;
    for (int64_t k = 0; k < ch; k++) {
        double sk = (double)w[k] / sqrt((double)var[k] + eps);
        st[k] = (float)sk;
        st[ch + k] = (float)((double)b[k] - (double)mean[k] * sk);
    }
    char nm[300];
    int32_t tens[2];
    for (int32_t i = 0; i < 2; i++) {
        snprintf(nm, sizeof nm, "%s:%s", n->name, i ? "shift" : "scale");
        int32_t buf = buffer(e, st + i * ch, sizeof *st * (size_t)ch);
        tens[i] = buf < 0 ? -1 : tensor(e, nm, PAR_TFL_FLOAT32, 1, &ch, buf);
    }
    free(st);
    int32_t out = tv(e, n->outputs[0]);
    if (tens[0] < 0 || tens[1] < 0 || out < 0) return 0;
    snprintf(nm, sizeof nm, "%s:scaled", y->name);
    int64_t shape[MAXR];
    for (int32_t i = 0; i < e->t[out].rank; i++) shape[i] = e->t[out].shape[i];
    int32_t mid = tensor(e, nm, PAR_TFL_FLOAT32, e->t[out].rank, shape, 0);
    int32_t in1[2] = {tv(e, n->inputs[0]), tens[0]}, in2[2] = {mid, tens[1]};
    return mid >= 0 && op(e, PAR_TFL_OP_MUL, 2, in1, mid) && op(e, PAR_TFL_OP_ADD, 2, in2, out);
}

/* global_avg_pool2d: TFLite's MEAN over H and W of the NHWC tensor, dimensions kept ([N, 1, 1, C]). */
static int ex_global_avg_pool(ex *e, const par_node *n)
{
    char nm[300];
    snprintf(nm, sizeof nm, "%s:axes", n->name);
    const int64_t axes[2] = {1, 2};
    int32_t ins[2] = {tv(e, n->inputs[0]), const_i32(e, nm, 2, axes, 0)};
    par_tfl_op *o = op(e, PAR_TFL_OP_MEAN, 2, ins, tv(e, n->outputs[0]));
    if (o) o->opt.keep_dims = 1;
    return o != NULL;
}

int par_tfx_node(ex *e, const par_node *n)
{
    const int attn = par_tfx_attn(e, n);
    if (attn >= 0) return attn;
    if (!strcmp(n->op, "batch_norm")) return ex_batch_norm(e, n);
    if (!strcmp(n->op, "global_avg_pool2d") && V(e, n, 0)->rank == 4) return ex_global_avg_pool(e, n);
    const par_tfl_opmap *mp = par_tfl_opmap_par(n->op);
    if (!mp) return UNSUP("no TFLite builtin in the op table");
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_value *y = &e->g->values[n->outputs[i]];
        if (y->rank > MAXR) return UNSUP("rank %d", (int)y->rank);
    }
    if (!strcmp(n->op, "flatten")) return ex_reshape(e, n);
    switch (mp->family) {
    case PAR_TFL_K_CONV:
    case PAR_TFL_K_DWCONV: return ex_conv(e, n);
    case PAR_TFL_K_FC: return ex_fc(e, n);
    case PAR_TFL_K_BINARY: return ex_binary(e, n, mp);
    case PAR_TFL_K_POOL: return ex_pool(e, n, mp);
    case PAR_TFL_K_REDUCE: return ex_reduce(e, n, mp);
    case PAR_TFL_K_RESHAPE:
    case PAR_TFL_K_SQUEEZE: return ex_reshape(e, n);
    case PAR_TFL_K_SOFTMAX: return ex_softmax(e, n, mp);
    case PAR_TFL_K_CONCAT: return ex_concat(e, n);
    case PAR_TFL_K_PAD: return ex_pad(e, n);
    case PAR_TFL_K_UNARY: return ex_unary(e, n, mp);
    case PAR_TFL_K_PRELU: return ex_prelu(e, n);
    case PAR_TFL_K_QUANTIZE:
    case PAR_TFL_K_DEQUANTIZE: {
        int32_t x = tv(e, n->inputs[0]);
        return op(e, mp->code, 1, &x, tv(e, n->outputs[0])) != NULL;
    }
    case PAR_TFL_K_RESIZE: return ex_resize(e, n, mp);
    case PAR_TFL_K_TRANSPOSE: return ex_permute(e, n);
    case PAR_TFL_K_SLICE: return ex_slice(e, n);
    case PAR_TFL_K_BMM: return ex_bmm(e, n);
    }
    return UNSUP("no TFLite builtin in the op table");
}

