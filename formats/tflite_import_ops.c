/*
 * tflite_import_ops.c - the TFLite importer's op families, one function each (convolutions, fully connected,
 * binary, pools, reductions, reshapes, softmax, concatenation, pads, unary, PReLU, (de)quantize, resizes, TRANSPOSE,
 * slices, batch matmul), and map_op, which checks an operator's inputs and options against its row of tflite.c's
 * op table and sends it to its family. Built on tflite_import_util.c; called by the driver, tflite_import.c.
 */
#include <string.h>

#include "formats/layout.h"
#include "formats/tflite_import_int.h"

/* ---- the op families ------------------------------------------------------------------------------------------- */

static int32_t in(const par_tfl_op *op, int32_t i) { return i < op->n_inputs ? op->inputs[i] : -1; }

/* A constant of all-zero bytes that nothing else reads. */
static int zero_const(const imp *im, int32_t ti)
{
    const par_tfl_buffer *b = tbuf(im, ti);
    if (!b || im->t[ti].fold || im->t[ti].n_uses != 1 || im->t[ti].v >= 0) return 0;
    for (uint64_t i = 0; i < b->size; i++)
        if (b->data[i]) return 0;
    return 1;
}

static int conv(imp *im, const par_tfl_op *op, int dw)
{
    int32_t x = in(op, 0), w = in(op, 1), b = in(op, 2), y = op->outputs[0];
    const par_tfl_tensor *tx = T(im, x), *tw = T(im, w);
    if (tx->rank != 4 || tw->rank != 4) return unmapped(im, "input or filter not of rank 4");
    const par_tfl_options *o = &im->g->ops[im->op].opt;
    if (o->stride_h < 1 || o->stride_w < 1 || o->dilation_h < 1 || o->dilation_w < 1)
        return fail(im, "stride %dx%d, dilation %dx%d: must be at least 1", (int)o->stride_h, (int)o->stride_w,
                    (int)o->dilation_h, (int)o->dilation_w);
    int64_t kh = tw->shape[1], kw = tw->shape[2], cin = tx->shape[3], groups;
    int32_t wv;
    if (dw) {
        /* [1, kh, kw, C*m] -> [C*m, 1, kh, kw], groups = C */
        static const int32_t p[4] = {3, 0, 1, 2};
        if (tw->shape[0] != 1 || tw->shape[3] % cin) return unmapped(im, "depthwise filter of shape [%d,..,%d]",
                                                                        (int)tw->shape[0], (int)tw->shape[3]);
        wv = get(im, w, p);
        groups = cin;
    } else {
        if (cin % tw->shape[3]) return fail(im, "filter of %d input channels for an input of %d", (int)tw->shape[3],
                                            (int)cin);
        wv = get_stored(im, w);
        groups = cin / tw->shape[3];
    }
    int64_t pad[4] = {0, 0, 0, 0};
    if (im->t[x].pad_of >= 0) {
        memcpy(pad, im->t[x].pad, sizeof pad);
        x = im->t[x].pad_of;
    }
    if (b >= 0 && zero_const(im, b)) b = -1; /* a zero bias is no bias (the exporter writes one: LiteRT wants it) */
    int32_t xv = get_stored(im, x);
    int32_t bv = b >= 0 ? get_logical(im, b) : -1;
    if (xv < 0 || wv < 0 || (b >= 0 && bv < 0)) return 0;
    if (o->padding == PAR_TFL_PAD_SAME) {
        same_pad(tx->shape[1], kh, o->stride_h, o->dilation_h, &pad[0], &pad[2]);
        same_pad(tx->shape[2], kw, o->stride_w, o->dilation_w, &pad[1], &pad[3]);
    }
    int64_t stride[2] = {o->stride_h, o->stride_w}, dil[2] = {o->dilation_h, o->dilation_w};
    for (int32_t i = 0; i < 2; i++) {
        int64_t padded = T(im, x)->shape[1 + i] + pad[i] + pad[i + 2], ext = (tw->shape[1 + i] - 1) * dil[i] + 1;
        if (ext > padded || (padded - ext) / stride[i] + 1 != T(im, y)->shape[1 + i])
            return fail(im, "a %lld filter extent with stride %lld over %lld (padded) does not give the output's %d",
                        (long long)ext, (long long)stride[i], (long long)padded, (int)T(im, y)->shape[1 + i]);
    }
    par_attr a[4] = {par_a_ints("stride", 2, stride), par_a_ints("padding", 4, pad), par_a_ints("dilation", 2, dil),
                     par_a_int("groups", groups)};
    int32_t ins[3] = {xv, wv, bv}, pv[4];
    int32_t v = emit(im, "conv2d", b >= 0 ? 3 : 2, ins, 4, a, y, o->activation);
    stored(4, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

static int fc(imp *im, const par_tfl_op *op)
{
    const par_tfl_options *o = &op->opt;
    int32_t x = in(op, 0), w = in(op, 1), b = in(op, 2), y = op->outputs[0];
    const par_tfl_tensor *tx = T(im, x), *tw = T(im, w);
    if (o->weights_format != 0) return unmapped(im, "shuffled weights format %d", (int)o->weights_format);
    if (tw->rank != 2) return unmapped(im, "weights of rank %d", (int)tw->rank);
    int32_t xv = get_logical(im, x), wv = get_logical(im, w), bv = b >= 0 ? get_logical(im, b) : -1;
    if (xv < 0 || wv < 0 || (b >= 0 && bv < 0)) return 0;
    int64_t k = tw->shape[1];
    if (!o->keep_num_dims && tx->rank != 2) {
        if (numel(tx) % k) return fail(im, "input of %lld elements is not a multiple of %lld", (long long)numel(tx),
                                       (long long)k);
        int64_t d[2] = {numel(tx) / k, k};
        par_attr a = par_a_ints("shape", 2, d);
        par_out_spec s = spec(im, x, uname(im, x, "flat"));
        xv = par_case_node(im->c, "reshape", 1, &xv, 1, &a, &s);
        if (xv < 0) return builder(im);
    }
    int32_t ins[3] = {xv, wv, bv}, pv[MAXR];
    int32_t v = emit(im, "linear", b >= 0 ? 3 : 2, ins, 0, NULL, y, o->activation);
    ident(T(im, y)->rank, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

/* An operand of a rank-4 elementwise op in the stored form, lifted from a lower rank by leading 1s (NHWC's
 * broadcasting aligns the last axes). */
static int32_t lifted(imp *im, int32_t ti, int32_t ro)
{
    const par_tfl_tensor *t = T(im, ti);
    int32_t p[MAXR];
    stored(ro, p);
    if (t->rank > ro) return fail(im, "operand '%s' of rank %d, the output's is %d", t->name, (int)t->rank, (int)ro), -1;
    if (t->rank == ro) return get(im, ti, p);
    if (ro != 4 || numel(t) == 1) return get_logical(im, ti); /* a single element broadcasts the same anywhere */
    if (is_const(im, ti) && im->t[ti].v < 0) {
        if (!check_dims(im, ti)) return -1;
        return make_const(im, ti, 4, p, -1, NULL, "nchw");
    }
    int32_t v = get_logical(im, ti);
    if (v < 0) return -1;
    int64_t d[4] = {1, 1, 1, 1}, pd[4];
    for (int32_t i = 0; i < t->rank; i++) d[4 - t->rank + i] = t->shape[i];
    par_attr a = par_a_ints("shape", 4, d);
    par_out_spec s = spec(im, ti, uname(im, ti, "4d"));
    v = par_case_node(im->c, "reshape", 1, &v, 1, &a, &s);
    if (v < 0) return builder(im), -1;
    for (int32_t j = 0; j < 4; j++) pd[j] = p[j];
    a = par_a_ints("perm", 4, pd);
    s = spec(im, ti, uname(im, ti, "nchw"));
    v = par_case_node(im->c, "permute", 1, &v, 1, &a, &s);
    return v < 0 ? (builder(im), -1) : v;
}

static int binary(imp *im, const par_tfl_op *op, const char *pop)
{
    int32_t y = op->outputs[0], ro = T(im, y)->rank, pv[MAXR];
    if (op->n_inputs != 2) return fail(im, "%d inputs, expected 2", (int)op->n_inputs);
    int32_t ins[2] = {lifted(im, op->inputs[0], ro), lifted(im, op->inputs[1], ro)};
    if (ins[0] < 0 || ins[1] < 0) return 0;
    int32_t v = emit(im, pop, 2, ins, 0, NULL, y, op->opt.activation);
    stored(ro, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

static int pool(imp *im, const par_tfl_op *op, int avg)
{
    const par_tfl_options *o = &op->opt;
    int32_t x = in(op, 0), y = op->outputs[0], pv[4];
    const par_tfl_tensor *tx = T(im, x);
    if (tx->rank != 4) return unmapped(im, "input of rank %d", (int)tx->rank);
    if (o->stride_h < 1 || o->stride_w < 1 || o->filter_h < 1 || o->filter_w < 1)
        return fail(im, "filter %dx%d, stride %dx%d: must be at least 1", (int)o->filter_h, (int)o->filter_w,
                    (int)o->stride_h, (int)o->stride_w);
    int32_t xv = get_stored(im, x);
    if (xv < 0) return 0;
    int64_t pad[4] = {0, 0, 0, 0}, k[2] = {o->filter_h, o->filter_w}, s[2] = {o->stride_h, o->stride_w};
    if (o->padding == PAR_TFL_PAD_SAME) {
        same_pad(tx->shape[1], k[0], s[0], 1, &pad[0], &pad[2]);
        same_pad(tx->shape[2], k[1], s[1], 1, &pad[1], &pad[3]);
    }
    /* the window must fit the padded input and give the model's output size; a padded window beyond 4096 is
     * refused (parity's check that no padded window is empty walks the padding window by window) */
    for (int32_t i = 0; i < 2; i++) {
        int64_t padded = tx->shape[1 + i] + pad[i] + pad[i + 2];
        if (k[i] > padded || (padded - k[i]) / s[i] + 1 != T(im, y)->shape[1 + i])
            return fail(im, "a %lld window with stride %lld over %lld (padded) does not give the output's %d",
                        (long long)k[i], (long long)s[i], (long long)padded, (int)T(im, y)->shape[1 + i]);
        if ((pad[i] || pad[i + 2]) && k[i] > 4096) return unmapped(im, "a padded window of %lld", (long long)k[i]);
    }
    /* TFLite averages over the window's real elements; without padding the flag changes nothing, and is left at
     * parity's default */
    int unpadded = !pad[0] && !pad[1] && !pad[2] && !pad[3];
    par_attr a[4] = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, s), par_a_ints("padding", 4, pad),
                     par_a_int("count_include_pad", unpadded)};
    int32_t v = emit(im, avg ? "avg_pool2d" : "max_pool2d", 1, &xv, avg ? 4 : 3, a, y, o->activation);
    stored(4, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

static int reduce(imp *im, const par_tfl_op *op, const char *pop)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], inv[MAXR], pvo[MAXR];
    int64_t ax[MAXR], n, axes[MAXR];
    if (!const_ints(im, in(op, 1), ax, MAXR, &n)) return 0;
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    invert(r, pv, inv);
    int red[MAXR] = {0}, k = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
        if (a < 0 || a >= r) return fail(im, "axis %lld out of range for rank %d", (long long)ax[i], (int)r);
        if (!red[inv[a]]) red[inv[a]] = 1, axes[k++] = inv[a];
    }
    par_attr at[2] = {par_a_ints("axes", k, axes), par_a_int("keepdims", op->opt.keep_dims != 0)};
    int32_t w = emit(im, pop, 1, &v, 2, at, y, 0);
    if (w < 0) return 0;
    if (op->opt.keep_dims) return set_out(im, y, w, pv);
    int32_t m = 0, logical[MAXR];
    for (int32_t i = 0; i < r; i++)
        if (!red[i]) logical[m++] = pv[i];
    for (int32_t i = 0; i < m; i++) {
        pvo[i] = 0;
        for (int32_t j = 0; j < m; j++) pvo[i] += logical[j] < logical[i];
    }
    return set_out(im, y, w, pvo);
}

static int reshape(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR];
    const par_tfl_tensor *ty = T(im, y);
    int64_t d[MAXR];
    for (int32_t i = 0; i < ty->rank; i++) d[i] = ty->shape[i];
    int32_t v = get_logical(im, x);
    if (v < 0) return 0;
    par_attr a = par_a_ints("shape", ty->rank, d);
    int32_t w = emit(im, "reshape", 1, &v, 1, &a, y, 0);
    ident(ty->rank, pv);
    return w >= 0 && set_out(im, y, w, pv);
}

static int squeeze(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], pvo[MAXR];
    int sq[MAXR] = {0}, drop[MAXR] = {0};
    for (int32_t i = 0; i < op->opt.n_ints; i++) {
        int32_t a = op->opt.ints[i] < 0 ? op->opt.ints[i] + r : op->opt.ints[i];
        if (a < 0 || a >= r || T(im, x)->shape[a] != 1) return fail(im, "squeeze axis %d", (int)op->opt.ints[i]);
        sq[a] = 1;
    }
    for (int32_t a = 0; a < r && !op->opt.n_ints; a++) sq[a] = T(im, x)->shape[a] == 1;
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    for (int32_t i = 0; i < r; i++) drop[i] = sq[pv[i]];
    int32_t w = drop_axes(im, v, r, pv, drop, y, pvo);
    return w >= 0 && set_out(im, y, w, pvo);
}

static int softmax(imp *im, const par_tfl_op *op, const char *pop)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], inv[MAXR];
    if (r < 1) return unmapped(im, "input of rank 0");
    if (!strcmp(pop, "softmax") && op->opt.beta != 1.0f)
        return unmapped(im, "beta %g (parity's softmax has no temperature: beta 1 only)", (double)op->opt.beta);
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    invert(r, pv, inv);
    /* the last axis is written -1, as parity's default */
    par_attr a = par_a_int("axis", inv[r - 1] == r - 1 ? -1 : inv[r - 1]);
    int32_t w = emit(im, pop, 1, &v, 1, &a, y, 0);
    return w >= 0 && set_out(im, y, w, pv);
}

static int concat(imp *im, const par_tfl_op *op)
{
    int32_t y = op->outputs[0], r = T(im, y)->rank, p[MAXR], inv[MAXR], ins[64];
    if (op->n_inputs < 1 || op->n_inputs > 64) return unmapped(im, "%d inputs (parity: 1 to 64)", (int)op->n_inputs);
    int32_t axis = op->opt.axis < 0 ? op->opt.axis + r : op->opt.axis;
    if (axis < 0 || axis >= r) return fail(im, "axis %d out of range for rank %d", (int)op->opt.axis, (int)r);
    stored(r, p);
    invert(r, p, inv);
    for (int32_t i = 0; i < op->n_inputs; i++) {
        if (op->inputs[i] < 0 || T(im, op->inputs[i])->rank != r) return fail(im, "input %d: absent or not of rank %d", (int)i, (int)r);
        if ((ins[i] = get(im, op->inputs[i], p)) < 0) return 0;
    }
    par_attr a = par_a_int("axis", inv[axis]);
    int32_t w = emit(im, "concat", op->n_inputs, ins, 1, &a, y, op->opt.activation);
    return w >= 0 && set_out(im, y, w, p);
}

/* A zero PAD of H and W only, read by one VALID CONV_2D / DEPTHWISE_CONV_2D and nothing else, becomes that
 * convolution's padding (the exporter writes explicit padding TFLite has no mode for this way). */
static int pad_into_conv(imp *im, const par_tfl_op *op, const int64_t *pd, int v2)
{
    int32_t x = in(op, 0), y = op->outputs[0];
    if (v2 || T(im, x)->rank != 4 || im->t[y].n_uses != 1 || pd[0] || pd[1] || pd[6] || pd[7]) return 0;
    for (int32_t k = im->op + 1; k < im->g->n_ops; k++) {
        const par_tfl_op *c = &im->g->ops[k];
        if (c->n_inputs < 2 || c->inputs[0] != y) continue;
        int32_t code = im->m->opcodes[c->opcode_index].builtin;
        if ((code != PAR_TFL_OP_CONV_2D && code != PAR_TFL_OP_DEPTHWISE_CONV_2D) || c->opt.padding != PAR_TFL_PAD_VALID)
            return 0;
        im->t[y].pad_of = x;
        im->t[y].pad[0] = pd[2], im->t[y].pad[1] = pd[4], im->t[y].pad[2] = pd[3], im->t[y].pad[3] = pd[5];
        return 1;
    }
    return 0;
}

static int pad(imp *im, const par_tfl_op *op, int v2)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, p[MAXR];
    int64_t pd[2 * MAXR], n, pads[2 * MAXR];
    if (!const_ints(im, in(op, 1), pd, 2 * MAXR, &n)) return 0;
    if (n != 2 * r) return fail(im, "paddings of %lld elements for rank %d", (long long)n, (int)r);
    double value = 0;
    if (v2 && in(op, 2) >= 0) {
        int32_t ci = in(op, 2);
        const par_tfl_tensor *tc = T(im, ci);
        if (!tbuf(im, ci) || numel(tc) != 1) return unmapped(im, "pad value not a constant scalar");
        const uint8_t *b = const_bytes(im, ci, par_tfl_type_size(tc->type));
        if (!b) return 0;
        if (tc->type == PAR_TFL_FLOAT32) {
            float f;
            memcpy(&f, b, 4);
            value = f;
        } else if (quantized(tc) && tc->quant && tc->quant->n_scale) {
            int32_t q = tc->type == PAR_TFL_INT8 ? (int8_t)b[0] : b[0];
            value = tc->quant->scale[0] * (double)(q - (tc->quant->n_zero_point ? tc->quant->zero_point[0] : 0));
        } else {
            return unmapped(im, "pad value of type %s", par_tfl_type_name(tc->type));
        }
    }
    for (int32_t a = 0; a < r; a++)
        if (pd[2 * a] < 0 || pd[2 * a + 1] < 0 ||
            T(im, x)->shape[a] + pd[2 * a] + pd[2 * a + 1] != T(im, y)->shape[a])
            return fail(im, "paddings [%lld, %lld] of axis %d do not give the output's %d", (long long)pd[2 * a],
                        (long long)pd[2 * a + 1], (int)a, (int)T(im, y)->shape[a]);
    if (pad_into_conv(im, op, pd, v2)) return 1;
    stored(r, p);
    for (int32_t j = 0; j < r; j++) pads[2 * j] = pd[2 * p[j]], pads[2 * j + 1] = pd[2 * p[j] + 1];
    int32_t xv = get(im, x, p);
    if (xv < 0) return 0;
    par_attr a[2] = {par_a_ints("pads", 2 * r, pads), par_a_float("value", value)};
    int32_t w = emit(im, "pad", 1, &xv, 2, a, y, 0);
    return w >= 0 && set_out(im, y, w, p);
}

static int unary(imp *im, const par_tfl_op *op, const par_tfl_opmap *mp)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR], na = 0;
    par_attr a[2];
    switch (mp->code) {
    case PAR_TFL_OP_RELU_N1_TO_1: a[0] = par_a_float("min_val", -1), a[1] = par_a_float("max_val", 1), na = 2; break;
    case PAR_TFL_OP_LEAKY_RELU: a[0] = par_a_float("negative_slope", op->opt.alpha), na = 1; break;
    case PAR_TFL_OP_GELU: a[0] = par_a_str("approximate", op->opt.approximate ? "tanh" : "none"), na = 1; break;
    default: break;
    }
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    int32_t w = emit(im, mp->par_op, 1, &v, na, a, y, 0);
    return w >= 0 && set_out(im, y, w, pv);
}

static int prelu(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), s = in(op, 1), y = op->outputs[0], r = T(im, x)->rank, p[MAXR];
    const par_tfl_tensor *ts = T(im, s);
    if (r != 4 && r != 2) return unmapped(im, "input of rank %d (parity's slope is per channel: rank 2 or 4)", (int)r);
    if (!is_const(im, s)) return unmapped(im, "slope not a constant");
    int64_t c = ts->rank ? ts->shape[ts->rank - 1] : 1;
    if (numel(ts) != c || (c != 1 && c != T(im, x)->shape[r - 1]))
        return unmapped(im, "slope of shape other than [..., 1, C] (parity's slope is one per channel)");
    stored(ts->rank, p);
    ident(ts->rank, p);
    int32_t sv = im->t[s].v >= 0 ? get_logical(im, s) : make_const(im, s, 0, p, 1, &c, "");
    stored(r, p);
    int32_t xv = get(im, x, p);
    if (sv < 0 || xv < 0) return 0;
    if (par_graph_desc_of(im->c->graph)->values[sv].rank != 1)
        return unmapped(im, "slope already used at another shape");
    int32_t ins[2] = {xv, sv};
    int32_t w = emit(im, "prelu", 2, ins, 0, NULL, y, 0);
    return w >= 0 && set_out(im, y, w, p);
}

static int quantize(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR];
    if (!quantized(T(im, y))) return unmapped(im, "output of type %s", par_tfl_type_name(T(im, y)->type));
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    if (quantized(T(im, x))) {
        /* a requantization: parity's quantize takes f32 */
        par_out_spec s = {uname(im, x, "deq"), PAR_DTYPE_F32, 0, 0};
        v = par_case_node(im->c, "dequantize", 1, &v, 0, NULL, &s);
        if (v < 0) return builder(im);
    } else if (T(im, x)->type != PAR_TFL_FLOAT32) {
        return unmapped(im, "input of type %s", par_tfl_type_name(T(im, x)->type));
    }
    int32_t w = emit(im, "quantize", 1, &v, 0, NULL, y, 0);
    return w >= 0 && set_out(im, y, w, pv);
}

static int dequantize(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR];
    if (im->t[y].fold) return 1; /* folded at import */
    if (!quantized(T(im, x))) return unmapped(im, "input of type %s", par_tfl_type_name(T(im, x)->type));
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    par_out_spec s = {uname(im, y, ""), PAR_DTYPE_F32, 0, 0};
    int32_t w = par_case_node(im->c, "dequantize", 1, &v, 0, NULL, &s);
    if (w < 0) return builder(im);
    return set_out(im, y, w, pv);
}

static int resize(imp *im, const par_tfl_op *op, const par_tfl_opmap *mp)
{
    int32_t x = in(op, 0), y = op->outputs[0], p[4];
    const par_tfl_tensor *tx = T(im, x), *ty = T(im, y);
    const par_tfl_options *o = &op->opt;
    if (tx->rank != 4) return unmapped(im, "input of rank %d", (int)tx->rank);
    const char *pop;
    int32_t na = 1;
    int64_t size[2] = {ty->shape[1], ty->shape[2]};
    par_attr a[2] = {par_a_ints("size", 2, size), par_a_int("align_corners", 0)};
    if (mp->code == PAR_TFL_OP_RESIZE_BILINEAR) {
        pop = "upsample_bilinear2d";
        na = 2;
        if (o->align_corners && o->half_pixel_centers)
            return unmapped(im, "align_corners and half_pixel_centers both set");
        if (o->align_corners) a[1].i = 1;
        else if (!o->half_pixel_centers && (size[0] != tx->shape[1] || size[1] != tx->shape[2]))
            return unmapped(im, "TF1 coordinates (half_pixel_centers=false, align_corners=false: source = dst * "
                                "in/out); parity's upsample_bilinear2d has align_corners and half-pixel only");
    } else {
        if (o->align_corners) return unmapped(im, "align_corners (rounds to the nearest source; parity's nearest "
                                                  "upsamplings floor)");
        pop = o->half_pixel_centers ? "upsample_nearest_exact2d" : "upsample_nearest2d";
    }
    int32_t xv = get_stored(im, x);
    if (xv < 0) return 0;
    int32_t w = emit(im, pop, 1, &xv, na, a, y, 0);
    stored(4, p);
    return w >= 0 && set_out(im, y, w, p);
}

static int transpose(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], pvo[MAXR], inv[MAXR];
    int64_t perm[MAXR], n;
    if (!const_ints(im, in(op, 1), perm, MAXR, &n)) return 0;
    int seen[MAXR] = {0};
    if (n != r) return fail(im, "perm of %lld elements for rank %d", (long long)n, (int)r);
    for (int32_t i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r || seen[perm[i]]) return fail(im, "perm is not a permutation");
        seen[perm[i]] = 1;
        inv[perm[i]] = i;
    }
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    /* no node: only the form changes. O.dims[i] = L.dims[perm[i]], V.dims[k] = L.dims[pv[k]] = O.dims[inv[pv[k]]] */
    for (int32_t k = 0; k < r; k++) pvo[k] = inv[pv[k]];
    /* ... unless the output is a graph output that would then be no node's value */
    int32_t p[MAXR], ip[MAXR], id = 1;
    stored(r, p);
    invert(r, pvo, ip);
    for (int32_t j = 0; j < r; j++) id &= ip[p[j]] == j;
    const par_value *val = &par_graph_desc_of(im->c->graph)->values[v];
    if (id && val->kind != PAR_VALUE_NODE)
        for (int32_t i = 0; i < im->g->n_outputs; i++)
            if (im->g->outputs[i] == y) {
                int64_t q[MAXR];
                for (int32_t j = 0; j < r; j++) q[j] = j;
                par_attr a = par_a_ints("perm", r, q);
                if ((v = emit(im, "permute", 1, &v, 1, &a, y, 0)) < 0) return 0;
                break;
            }
    return set_out(im, y, v, pvo);
}

static int slice(imp *im, const par_tfl_op *op)
{
    const par_tfl_options *o = &op->opt;
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], inv[MAXR], pvo[MAXR];
    int64_t b[MAXR], e[MAXR], s[MAXR], nb, ne, ns;
    if (o->ellipsis_mask || o->new_axis_mask || o->offset)
        return unmapped(im, "ellipsis_mask, new_axis_mask or offset set");
    if (!const_ints(im, in(op, 1), b, MAXR, &nb) || !const_ints(im, in(op, 2), e, MAXR, &ne) ||
        !const_ints(im, in(op, 3), s, MAXR, &ns))
        return 0;
    if (nb != r || ne != r || ns != r) return unmapped(im, "begin/end/strides of other than %d elements", (int)r);
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    invert(r, pv, inv);
    int drop[MAXR] = {0}, any = 0, sliced = 0;
    for (int32_t d = 0; d < r; d++) {
        int64_t dim = T(im, x)->shape[d], st = s[d], lo = b[d], hi = e[d];
        int shrink = (o->shrink_axis_mask >> d) & 1;
        if (st < 1) return unmapped(im, "stride %lld on axis %d (parity's slice steps forward)", (long long)st, (int)d);
        if ((o->begin_mask >> d) & 1) lo = 0;
        if ((o->end_mask >> d) & 1) hi = dim;
        if (lo < 0) lo += dim;
        if (hi < 0) hi += dim;
        lo = lo < 0 ? 0 : lo > dim ? dim : lo;
        if (shrink) hi = lo + 1, st = 1;
        hi = hi < lo ? lo : hi > dim ? dim : hi;
        if (shrink) drop[inv[d]] = 1, any = 1;
        if (lo == 0 && hi == dim && st == 1 && !(d == r - 1 && !any && !sliced)) continue;
        /* to the end is written as parity's default end; a slice of nothing but the whole is still one node */
        par_attr a[4] = {par_a_int("dim", inv[d]), par_a_int("start", lo), par_a_int("end", hi == dim ? INT64_MAX : hi),
                         par_a_int("step", st)};
        sliced = 1;
        int32_t last = 1;
        for (int32_t d2 = d + 1; d2 < r; d2++) {
            int64_t lo2 = ((o->begin_mask >> d2) & 1) ? 0 : b[d2], hi2 = ((o->end_mask >> d2) & 1) ? T(im, x)->shape[d2] : e[d2];
            if (lo2 < 0) lo2 += T(im, x)->shape[d2];
            if (hi2 < 0) hi2 += T(im, x)->shape[d2];
            if (((o->shrink_axis_mask >> d2) & 1) || lo2 > 0 || hi2 < T(im, x)->shape[d2] || s[d2] != 1) last = 0;
        }
        par_out_spec sp = spec(im, y, uname(im, y, last && !any ? "" : "slice"));
        v = par_case_node(im->c, "slice", 1, &v, 4, a, &sp);
        if (v < 0) return builder(im);
    }
    if (any) {
        v = drop_axes(im, v, r, pv, drop, y, pvo);
        return v >= 0 && set_out(im, y, v, pvo);
    }
    return set_out(im, y, v, pv);
}

static int bmm(imp *im, const par_tfl_op *op)
{
    int32_t y = op->outputs[0], pv[MAXR], ins[2];
    for (int32_t i = 0; i < 2; i++) {
        int32_t ti = in(op, i), r = T(im, ti)->rank, p[MAXR];
        if (r < 2) return fail(im, "input %d of rank %d", (int)i, (int)r);
        ident(r, p);
        if (i == 0 ? op->opt.adj_x : op->opt.adj_y) p[r - 2] = r - 1, p[r - 1] = r - 2;
        if ((ins[i] = get(im, ti, p)) < 0) return 0;
    }
    int32_t w = emit(im, "matmul", 2, ins, 0, NULL, y, 0);
    ident(T(im, y)->rank, pv);
    return w >= 0 && set_out(im, y, w, pv);
}

int map_op(imp *im, const par_tfl_op *op)
{
    const par_tfl_opcode *oc = &im->m->opcodes[op->opcode_index];
    const par_tfl_opmap *mp = oc->builtin == PAR_TFL_OP_CUSTOM ? NULL : par_tfl_opmap_code(oc->builtin);
    if (!mp) return unmapped(im, "%s", "");
    if (op->n_outputs != 1) return unmapped(im, "%d outputs", (int)op->n_outputs);
    /* the inputs each family reads unconditionally */
    int32_t need = 1;
    switch (mp->family) {
    case PAR_TFL_K_CONV: case PAR_TFL_K_DWCONV: case PAR_TFL_K_FC: case PAR_TFL_K_BINARY: case PAR_TFL_K_PRELU:
    case PAR_TFL_K_REDUCE: case PAR_TFL_K_PAD: case PAR_TFL_K_TRANSPOSE: case PAR_TFL_K_BMM: need = 2; break;
    case PAR_TFL_K_SLICE: need = 4; break;
    default: break;
    }
    for (int32_t i = 0; i < need; i++)
        if (i >= op->n_inputs || op->inputs[i] < 0) return fail(im, "input %d is missing (%d needed)", (int)i, (int)need);
    if (op->options_type != mp->options_type && op->options_type != PAR_TFL_OPT_NONE)
        return fail(im, "builtin_options of type %d, expected %d", (int)op->options_type, (int)mp->options_type);
    if (op->opt.activation && !act_op(op->opt.activation))
        return unmapped(im, "fused activation %d", (int)op->opt.activation);
    for (int32_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i] >= 0 && !check_dims(im, op->inputs[i])) return 0;
    if (!check_dims(im, op->outputs[0])) return 0;
    switch (mp->family) {
    case PAR_TFL_K_CONV: return conv(im, op, 0);
    case PAR_TFL_K_DWCONV: return conv(im, op, 1);
    case PAR_TFL_K_FC: return fc(im, op);
    case PAR_TFL_K_BINARY: return binary(im, op, mp->par_op);
    case PAR_TFL_K_POOL: return pool(im, op, mp->code == PAR_TFL_OP_AVERAGE_POOL_2D);
    case PAR_TFL_K_REDUCE: return reduce(im, op, mp->par_op);
    case PAR_TFL_K_RESHAPE: return reshape(im, op);
    case PAR_TFL_K_SQUEEZE: return squeeze(im, op);
    case PAR_TFL_K_SOFTMAX: return softmax(im, op, mp->par_op);
    case PAR_TFL_K_CONCAT: return concat(im, op);
    case PAR_TFL_K_PAD: return pad(im, op, mp->code == PAR_TFL_OP_PADV2);
    case PAR_TFL_K_UNARY: return unary(im, op, mp);
    case PAR_TFL_K_PRELU: return prelu(im, op);
    case PAR_TFL_K_QUANTIZE: return quantize(im, op);
    case PAR_TFL_K_DEQUANTIZE: return dequantize(im, op);
    case PAR_TFL_K_RESIZE: return resize(im, op, mp);
    case PAR_TFL_K_TRANSPOSE: return transpose(im, op);
    case PAR_TFL_K_SLICE: return slice(im, op);
    case PAR_TFL_K_BMM: return bmm(im, op);
    }
    return unmapped(im, "%s", "");
}
