/*
 * ops_conv.c - CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D, TRANSPOSE_CONV_2D and FULLY_CONNECTED with NNAPI's
 *   semantics.
 *   Filters: CONV_2D [out, h, w, in]; DEPTHWISE_CONV_2D [1, h, w, in * multiplier] (output channel
 *   ic * multiplier + m reads input channel ic); GROUPED_CONV_2D [out, h, w, in / groups] (output channel o, of
 *   group g = o / (out / groups), reads input channels g * in / groups onwards; the layout flag required, no
 *   dilation); TRANSPOSE_CONV_2D [out, h, w, in]; FULLY_CONNECTED [units, in].
 *   Padding explicit (left, right, top, bottom) or implicit (SAME / VALID, nn_implicit_pad); strides; dilation and
 *   the NCHW flag from level 29; fused NONE / RELU / RELU1 / RELU6.
 *   Quantized: integer accumulation of (x - x_zp) * (w - w_zp) plus the TENSOR_INT32 bias (scale input_scale *
 *   filter_scale, zero point 0), requantized by gemmlowp (core/requant.c, bit-exact: SRDHM then a rounding divide)
 *   with the multiplier of Android's GetQuantizedConvolutionMultipler (float product of the scales, then a double
 *   division; all float on Android 8.1, the old-android device);
 *   per-channel filters (TENSOR_QUANT8_SYMM_PER_CHANNEL, level 29) requantize each output channel with its own scale.
 *   Float: float32 accumulation in the loop order below, bias added last, then the activation clamp.
 * Must not allocate beyond one operation's scratch, nor know where the operation runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnsim.h"
#include "core/requant.h"

#define OK ANEURALNETWORKS_NO_ERROR

typedef struct conv_params {
    int32_t pl, pr, pt, pb, sw, sh, dw, dh, fuse, mult, groups, scheme;
    int nchw, implicit;
} conv_params;

/* The three families that share the parameter layout and the kernel. */
enum { CONV_PLAIN = 0, CONV_DEPTHWISE, CONV_GROUPED };

/* Where each scalar parameter sits: explicit padding has 4 pads where implicit has one scheme. Depthwise has the
 * multiplier, GROUPED_CONV_2D the number of groups, before the activation. GROUPED_CONV_2D (level 29) always has
 * the layout flag and never dilation: 12 inputs explicit, 9 implicit. */
static int conv_layout(nn_ctx *c, int kind, conv_params *p, uint32_t *first_opt)
{
    uint32_t n = c->n_in, extra = kind != CONV_PLAIN ? 1 : 0;
    NN_CHECK(c, c->n_out == 1, "%u outputs (takes 1)", c->n_out);
    if (kind == CONV_GROUPED) {
        NN_CHECK(c, n == 12 || n == 9, "%u inputs (takes 12 explicit or 9 implicit)", n);
        p->implicit = n == 9;
        *first_opt = n - 1;
        return OK;
    }
    p->implicit = !(n >= 10 + extra && nn_is_type(c, 7 + extra, ANEURALNETWORKS_INT32));
    uint32_t base = p->implicit ? 7 + extra : 10 + extra; /* inputs without layout and dilation */
    NN_CHECK(c, n == base || n == base + 1 || n == base + 3, "%u inputs (takes %u, %u or %u)", n, base, base + 1,
             base + 3);
    *first_opt = base;
    if (n > base) c->level = c->level < 29 ? 29 : c->level;
    return OK;
}

/* Reads the parameters (all known at run time; at validation the unknown ones keep their defaults). */
static int conv_params_read(nn_ctx *c, int kind, conv_params *p)
{
    uint32_t opt = 0;
    memset(p, 0, sizeof *p);
    p->sw = p->sh = p->dw = p->dh = p->mult = p->groups = 1;
    int rc = conv_layout(c, kind, p, &opt);
    if (rc) return rc;
    uint32_t k = 3;
    for (uint32_t i = 3; i < opt; i++)
        NN_CHECK(c, nn_is_type(c, i, ANEURALNETWORKS_INT32), "input %u must be INT32", i);
    if (p->implicit) {
        nn_param_i32(c, k++, &p->scheme);
    } else {
        nn_param_i32(c, k++, &p->pl), nn_param_i32(c, k++, &p->pr);
        nn_param_i32(c, k++, &p->pt), nn_param_i32(c, k++, &p->pb);
    }
    nn_param_i32(c, k++, &p->sw), nn_param_i32(c, k++, &p->sh);
    if (kind == CONV_DEPTHWISE) nn_param_i32(c, k++, &p->mult);
    if (kind == CONV_GROUPED) nn_param_i32(c, k++, &p->groups);
    if ((rc = nn_check_fuse(c, k))) return rc;
    nn_param_i32(c, k++, &p->fuse);
    if (opt < c->n_in) {
        NN_CHECK(c, nn_is_type(c, opt, ANEURALNETWORKS_BOOL), "input %u (layout) must be BOOL", opt);
        nn_param_bool(c, opt, &p->nchw);
    }
    if (opt + 1 < c->n_in) {
        NN_CHECK(c, nn_is_type(c, opt + 1, ANEURALNETWORKS_INT32) && nn_is_type(c, opt + 2, ANEURALNETWORKS_INT32),
                 "inputs %u, %u (dilation) must be INT32", opt + 1, opt + 2);
        nn_param_i32(c, opt + 1, &p->dw), nn_param_i32(c, opt + 2, &p->dh);
    }
    if (p->implicit)
        NN_CHECK(c,
                 !c->in[3]->data || p->scheme == ANEURALNETWORKS_PADDING_SAME ||
                     p->scheme == ANEURALNETWORKS_PADDING_VALID,
                 "padding scheme %d is not SAME (1) or VALID (2)", (int)p->scheme);
    NN_CHECK(c, p->pl >= 0 && p->pr >= 0 && p->pt >= 0 && p->pb >= 0, "negative padding");
    NN_CHECK(c, p->sw > 0 && p->sh > 0, "stride %d x %d must be positive", (int)p->sw, (int)p->sh);
    NN_CHECK(c, p->dw > 0 && p->dh > 0, "dilation %d x %d must be positive", (int)p->dw, (int)p->dh);
    NN_CHECK(c, p->mult > 0, "depth multiplier %d must be positive", (int)p->mult);
    NN_CHECK(c, p->groups > 0, "number of groups %d must be positive", (int)p->groups);
    return OK;
}

/* The tensor types of input, filter, bias and output. */
static int check_conv_types(nn_ctx *c, int allow_per_channel, uint32_t ch_dim)
{
    const nn_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2], *y = c->out[0];
    int32_t t = x->type;
    NN_CHECK(c,
             t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 ||
                 t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED,
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, y->type == t, "output type %s differs from the input's %s", nn_type_name(y->type), nn_type_name(t));
    if (nn_type_is_float(t)) {
        NN_CHECK(c, w->type == t && b->type == t, "filter and bias must be %s", nn_type_name(t));
        return OK;
    }
    int per_channel = w->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL;
    NN_CHECK(c, w->type == t || (per_channel && allow_per_channel), "filter type %s with a %s input",
             nn_type_name(w->type), nn_type_name(t));
    NN_CHECK(c, b->type == ANEURALNETWORKS_TENSOR_INT32, "a quantized operation's bias must be TENSOR_INT32, not %s",
             nn_type_name(b->type));
    NN_CHECK(c, b->zp == 0, "bias zeroPoint %d must be 0", (int)b->zp);
    if (per_channel) {
        NN_CHECK(c, !w->ch_scales || w->ch_dim == ch_dim, "per-channel filter: channelDim %u must be %u", w->ch_dim,
                 ch_dim);
    } else {
        /* TFLite's GetQuantizedConvolutionMultipler tolerance, which Android's validation uses. */
        double prod = (double)x->scale * w->scale;
        NN_CHECK(c, fabs(prod - b->scale) <= 1e-6 * fmin(prod, b->scale),
                 "bias scale %g must be input_scale * filter_scale = %g", (double)b->scale, prod);
    }
    return OK;
}

/* Per output channel requantization of a quantized operation: the gemmlowp params of in_scale * w_scale[c] /
 * out_scale, computed in Android's precisions. */
static int requant_setup(nn_ctx *c, uint32_t out_c, int32_t fuse, par_requant_params **out)
{
    const nn_tensor *x = c->in[0], *w = c->in[1], *y = c->out[0];
    int32_t qmin, qmax;
    nn_fuse_qrange(fuse, y, &qmin, &qmax);
    par_requant_params *p = malloc((out_c ? out_c : 1) * sizeof *p);
    if (!p) return nn_fail(c, ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    for (uint32_t k = 0; k < out_c; k++) {
        float ws = w->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL ? w->ch_scales[k] : w->scale;
        /* Android's GetQuantizedConvolutionMultipler: the product of the two float scales in float, divided by the
         * output scale in double (levels 28-30) or in float (Android 8.1). */
        float prod = x->scale * ws;
        double real = c->android27 ? (double)(prod / y->scale) : (double)prod / (double)y->scale;
        par_msg msg;
        if (par_requant_params_init(&p[k], PAR_REQUANT_GEMMLOWP, real, y->zp, qmin, qmax, &msg) != PAR_OK) {
            free(p);
            return nn_fail(c, ANEURALNETWORKS_OP_FAILED, "channel %u: %s", k, msg.text);
        }
    }
    *out = p;
    return OK;
}

static int32_t w_zero(const nn_tensor *w)
{
    return w->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL ? 0 : w->zp;
}

static int check_conv_common(nn_ctx *c, int kind)
{
    int depthwise = kind == CONV_DEPTHWISE;
    conv_params p;
    int rc = conv_params_read(c, kind, &p);
    if (rc) return rc;
    if ((rc = check_conv_types(c, 1, depthwise ? 3 : 0))) return rc;
    const nn_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
    NN_CHECK(c, !x->rank || x->rank == 4, "input rank %u (takes 4)", x->rank);
    NN_CHECK(c, w->rank == 4 && b->rank == 1, "filter rank %u (takes 4), bias rank %u (takes 1)", w->rank, b->rank);
    NN_CHECK(c, !w->dims[0] || !b->dims[0] || b->dims[0] == (depthwise ? w->dims[3] : w->dims[0]),
             "bias has %u values for %u output channels", b->dims[0], depthwise ? w->dims[3] : w->dims[0]);
    if (depthwise)
        NN_CHECK(c, w->dims[0] == 1 || !w->dims[0], "depthwise filter dimension 0 is %u (takes 1)", w->dims[0]);
    if (nn_shape_known(x) && w->dims[3]) {
        uint32_t in_c = p.nchw ? x->dims[1] : x->dims[3];
        if (depthwise)
            NN_CHECK(c, !c->in[9 - (p.implicit ? 3 : 0)]->data || w->dims[3] == in_c * (uint32_t)p.mult,
                     "filter has %u channels, input %u x multiplier %d", w->dims[3], in_c, (int)p.mult);
        else
            NN_CHECK(c,
                     (kind == CONV_GROUPED && !c->in[p.implicit ? 6 : 9]->data) ||
                         w->dims[3] * (uint32_t)p.groups == in_c,
                     "filter has %u input channels per group, the input %u in %d groups", w->dims[3], in_c,
                     (int)p.groups);
    }
    if (kind == CONV_GROUPED && w->dims[0])
        NN_CHECK(c, w->dims[0] % (uint32_t)p.groups == 0, "%u output channels do not divide into %d groups",
                 w->dims[0], (int)p.groups);
    return OK;
}

int nn_check_conv(nn_ctx *c)
{
    return check_conv_common(c, CONV_PLAIN);
}

int nn_check_dwconv(nn_ctx *c)
{
    return check_conv_common(c, CONV_DEPTHWISE);
}

int nn_check_gconv(nn_ctx *c)
{
    return check_conv_common(c, CONV_GROUPED);
}

static uint32_t conv_out_size(uint32_t in, int32_t f, int32_t s, int32_t d, int32_t before, int32_t after)
{
    int64_t eff = ((int64_t)f - 1) * d + 1, span = (int64_t)in + before + after - eff;
    return span < 0 ? 0 : (uint32_t)(span / s + 1);
}

static int eval_conv_common(nn_ctx *c, int kind)
{
    int depthwise = kind == CONV_DEPTHWISE;
    conv_params p;
    int rc = conv_params_read(c, kind, &p);
    if (rc) return rc;
    const nn_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
    NN_CHECK(c, x->rank == 4, "input rank %u (takes 4)", x->rank);
    nn_img gi = nn_img_of(x, p.nchw);
    uint32_t fh = w->dims[1], fw = w->dims[2], oc = depthwise ? w->dims[3] : w->dims[0];
    NN_CHECK(c, depthwise ? w->dims[3] == gi.c * (uint32_t)p.mult : w->dims[3] * (uint32_t)p.groups == gi.c,
             "filter %u x %u x %u x %u does not fit %u input channels", w->dims[0], w->dims[1], w->dims[2], w->dims[3],
             gi.c);
    NN_CHECK(c, b->rank == 1 && b->dims[0] == oc, "bias has %u values for %u output channels", b->dims[0], oc);
    NN_CHECK(c, oc % (uint32_t)p.groups == 0, "%u output channels do not divide into %d groups", oc, (int)p.groups);
    if (p.implicit) {
        nn_implicit_pad(p.scheme, gi.w, (uint32_t)p.sw, fw, (uint32_t)p.dw, &p.pl, &p.pr);
        nn_implicit_pad(p.scheme, gi.h, (uint32_t)p.sh, fh, (uint32_t)p.dh, &p.pt, &p.pb);
    }
    uint32_t oh = conv_out_size(gi.h, (int32_t)fh, p.sh, p.dh, p.pt, p.pb);
    uint32_t ow = conv_out_size(gi.w, (int32_t)fw, p.sw, p.dw, p.pl, p.pr);
    NN_CHECK(c, oh && ow, "the filter does not fit the padded input");
    uint32_t dims[4];
    nn_img_dims(gi.n, oh, ow, oc, p.nchw, dims);
    if ((rc = c->alloc(c, 0, 4, dims))) return rc;
    nn_img go = nn_img_of(c->out[0], p.nchw);
    int quant = nn_type_is_quant8(x->type);
    par_requant_params *rq = NULL;
    if (quant && (rc = requant_setup(c, oc, p.fuse, &rq))) return rc;
    float lo, hi;
    nn_fuse_range(p.fuse, &lo, &hi);
    int32_t xz = x->zp, wz = w_zero(w);
    const float *xf = x->data, *wf = w->data, *bf = b->data;
    const int32_t *bq = b->data;
    /* Input channels per output channel; output channel o of group o / (oc / groups) reads that group's kin. */
    uint32_t kin = depthwise ? 1 : w->dims[3], og = oc / (uint32_t)p.groups;
    for (uint32_t n = 0; n < gi.n; n++)
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++)
                for (uint32_t o = 0; o < oc; o++) {
                    float accf = 0;
                    int64_t acc = 0;
                    for (uint32_t ky = 0; ky < fh; ky++) {
                        int64_t iy = (int64_t)oy * p.sh - p.pt + (int64_t)ky * p.dh;
                        if (iy < 0 || iy >= gi.h) continue;
                        for (uint32_t kx = 0; kx < fw; kx++) {
                            int64_t ix = (int64_t)ox * p.sw - p.pl + (int64_t)kx * p.dw;
                            if (ix < 0 || ix >= gi.w) continue;
                            for (uint32_t k = 0; k < kin; k++) {
                                uint32_t ic = depthwise ? o / (uint32_t)p.mult : o / og * kin + k;
                                size_t xi = nn_img_at(&gi, n, (uint32_t)iy, (uint32_t)ix, ic);
                                size_t wi = depthwise ? ((size_t)ky * fw + kx) * oc + o
                                                      : (((size_t)o * fh + ky) * fw + kx) * kin + k;
                                if (quant)
                                    acc += (int64_t)(nn_q_get(x, xi) - xz) * (nn_q_get(w, wi) - wz);
                                else
                                    accf += xf[xi] * wf[wi];
                            }
                        }
                    }
                    size_t yi = nn_img_at(&go, n, oy, ox, o);
                    if (quant) {
                        nn_q_set(c->out[0], yi, par_requant_gemmlowp(acc + bq[o], &rq[o]));
                    } else {
                        float v = accf + bf[o];
                        ((float *)c->out[0]->data)[yi] = v < lo ? lo : v > hi ? hi : v;
                    }
                }
    free(rq);
    return OK;
}

int nn_eval_conv(nn_ctx *c)
{
    return eval_conv_common(c, CONV_PLAIN);
}

int nn_eval_dwconv(nn_ctx *c)
{
    return eval_conv_common(c, CONV_DEPTHWISE);
}

int nn_eval_gconv(nn_ctx *c)
{
    return eval_conv_common(c, CONV_GROUPED);
}

/* TRANSPOSE_CONV_2D: explicit (11 inputs: pads l r t b, strides, fuse, layout) or implicit (9: output shape,
 * scheme, strides, fuse, layout). Output position oy = iy * stride - pad_top + ky. */
typedef struct tconv_params {
    int32_t pl, pr, pt, pb, sw, sh, fuse, scheme;
    int nchw, implicit;
} tconv_params;

static int tconv_params_read(nn_ctx *c, tconv_params *p)
{
    memset(p, 0, sizeof *p);
    p->sw = p->sh = 1;
    NN_CHECK(c, c->n_in == 11 || c->n_in == 9, "%u inputs (takes 11 explicit or 9 implicit)", c->n_in);
    NN_CHECK(c, c->n_out == 1, "%u outputs (takes 1)", c->n_out);
    p->implicit = c->n_in == 9;
    uint32_t k = 3;
    if (p->implicit) {
        NN_CHECK(c, nn_is_type(c, 3, ANEURALNETWORKS_TENSOR_INT32), "input 3 (output shape) must be TENSOR_INT32");
        k = 4;
        NN_CHECK(c, nn_is_type(c, 4, ANEURALNETWORKS_INT32), "input 4 (padding scheme) must be INT32");
        nn_param_i32(c, k++, &p->scheme);
    } else {
        for (uint32_t i = 3; i < 7; i++)
            NN_CHECK(c, nn_is_type(c, i, ANEURALNETWORKS_INT32), "input %u must be INT32", i);
        nn_param_i32(c, k++, &p->pl), nn_param_i32(c, k++, &p->pr);
        nn_param_i32(c, k++, &p->pt), nn_param_i32(c, k++, &p->pb);
    }
    NN_CHECK(c, nn_is_type(c, k, ANEURALNETWORKS_INT32) && nn_is_type(c, k + 1, ANEURALNETWORKS_INT32),
             "strides must be INT32");
    nn_param_i32(c, k++, &p->sw), nn_param_i32(c, k++, &p->sh);
    int rc = nn_check_fuse(c, k);
    if (rc) return rc;
    nn_param_i32(c, k++, &p->fuse);
    NN_CHECK(c, nn_is_type(c, k, ANEURALNETWORKS_BOOL), "input %u (layout) must be BOOL", k);
    nn_param_bool(c, k, &p->nchw);
    NN_CHECK(c, p->sw > 0 && p->sh > 0, "stride %d x %d must be positive", (int)p->sw, (int)p->sh);
    NN_CHECK(c, p->pl >= 0 && p->pr >= 0 && p->pt >= 0 && p->pb >= 0, "negative padding");
    return OK;
}

int nn_check_tconv(nn_ctx *c)
{
    tconv_params p;
    int rc = tconv_params_read(c, &p);
    if (rc || (rc = check_conv_types(c, 1, 0))) return rc;
    NN_CHECK(c, c->in[1]->rank == 4 && c->in[2]->rank == 1, "filter rank %u (takes 4), bias rank %u (takes 1)",
             c->in[1]->rank, c->in[2]->rank);
    return OK;
}

int nn_eval_tconv(nn_ctx *c)
{
    tconv_params p;
    int rc = tconv_params_read(c, &p);
    if (rc) return rc;
    const nn_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
    NN_CHECK(c, x->rank == 4, "input rank %u (takes 4)", x->rank);
    nn_img gi = nn_img_of(x, p.nchw);
    uint32_t oc = w->dims[0], fh = w->dims[1], fw = w->dims[2];
    NN_CHECK(c, w->dims[3] == gi.c, "filter has %u input channels, the input %u", w->dims[3], gi.c);
    NN_CHECK(c, b->rank == 1 && b->dims[0] == oc, "bias has %u values for %u output channels", b->dims[0], oc);
    uint32_t oh, ow, dims[4];
    if (p.implicit) {
        const nn_tensor *s = c->in[3];
        NN_CHECK(c, s->rank == 1 && s->dims[0] == 4 && s->data, "output shape must be a 4-value TENSOR_INT32");
        const int32_t *sv = s->data;
        for (int i = 0; i < 4; i++) NN_CHECK(c, sv[i] > 0, "output shape value %d is %d", i, (int)sv[i]);
        oh = (uint32_t)(p.nchw ? sv[2] : sv[1]);
        ow = (uint32_t)(p.nchw ? sv[3] : sv[2]);
        int32_t th = (int32_t)((gi.h - 1) * p.sh + fh) - (int32_t)oh,
                tw = (int32_t)((gi.w - 1) * p.sw + fw) - (int32_t)ow;
        if (p.scheme == ANEURALNETWORKS_PADDING_SAME) {
            th = th < 0 ? 0 : th, tw = tw < 0 ? 0 : tw;
            p.pt = th / 2, p.pb = th - th / 2, p.pl = tw / 2, p.pr = tw - tw / 2;
        }
    } else {
        int64_t h = (int64_t)(gi.h - 1) * p.sh + fh - p.pt - p.pb, wd = (int64_t)(gi.w - 1) * p.sw + fw - p.pl - p.pr;
        NN_CHECK(c, h > 0 && wd > 0, "the padding leaves no output");
        oh = (uint32_t)h, ow = (uint32_t)wd;
    }
    nn_img_dims(gi.n, oh, ow, oc, p.nchw, dims);
    if ((rc = c->alloc(c, 0, 4, dims))) return rc;
    nn_img go = nn_img_of(c->out[0], p.nchw);
    size_t total = nn_numel(c->out[0]);
    int quant = nn_type_is_quant8(x->type);
    int64_t *acc = calloc(total ? total : 1, sizeof *acc);
    float *accf = calloc(total ? total : 1, sizeof *accf);
    par_requant_params *rq = NULL;
    if (!acc || !accf) {
        free(acc), free(accf);
        return nn_fail(c, ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    if (quant && (rc = requant_setup(c, oc, p.fuse, &rq))) {
        free(acc), free(accf);
        return rc;
    }
    int32_t xz = x->zp, wz = w_zero(w);
    for (uint32_t n = 0; n < gi.n; n++)
        for (uint32_t iy = 0; iy < gi.h; iy++)
            for (uint32_t ix = 0; ix < gi.w; ix++)
                for (uint32_t ky = 0; ky < fh; ky++) {
                    int64_t oy = (int64_t)iy * p.sh - p.pt + ky;
                    if (oy < 0 || oy >= oh) continue;
                    for (uint32_t kx = 0; kx < fw; kx++) {
                        int64_t ox = (int64_t)ix * p.sw - p.pl + kx;
                        if (ox < 0 || ox >= ow) continue;
                        for (uint32_t o = 0; o < oc; o++) {
                            size_t yi = nn_img_at(&go, n, (uint32_t)oy, (uint32_t)ox, o);
                            for (uint32_t ic = 0; ic < gi.c; ic++) {
                                size_t xi = nn_img_at(&gi, n, iy, ix, ic);
                                size_t wi = (((size_t)o * fh + ky) * fw + kx) * gi.c + ic;
                                if (quant)
                                    acc[yi] += (int64_t)(nn_q_get(x, xi) - xz) * (nn_q_get(w, wi) - wz);
                                else
                                    accf[yi] += ((const float *)x->data)[xi] * ((const float *)w->data)[wi];
                            }
                        }
                    }
                }
    float lo, hi;
    nn_fuse_range(p.fuse, &lo, &hi);
    for (uint32_t n = 0; n < gi.n; n++)
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++)
                for (uint32_t o = 0; o < oc; o++) {
                    size_t yi = nn_img_at(&go, n, oy, ox, o);
                    if (quant) {
                        nn_q_set(c->out[0], yi, par_requant_gemmlowp(acc[yi] + ((const int32_t *)b->data)[o], &rq[o]));
                    } else {
                        float v = accf[yi] + ((const float *)b->data)[o];
                        ((float *)c->out[0]->data)[yi] = v < lo ? lo : v > hi ? hi : v;
                    }
                }
    free(acc), free(accf), free(rq);
    return OK;
}

/* FULLY_CONNECTED: input flattened to [numel / input_size, input_size], weights [units, input_size]. */
int nn_check_fc(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 4 && c->n_out == 1, "%u inputs, %u outputs (takes 4 and 1)", c->n_in, c->n_out);
    int rc = check_conv_types(c, 0, 0);
    if (rc || (rc = nn_check_fuse(c, 3))) return rc;
    const nn_tensor *w = c->in[1], *b = c->in[2];
    NN_CHECK(c, w->rank == 2 && b->rank == 1, "weights rank %u (takes 2), bias rank %u (takes 1)", w->rank, b->rank);
    NN_CHECK(c, !w->dims[0] || !b->dims[0] || w->dims[0] == b->dims[0], "bias has %u values for %u units", b->dims[0],
             w->dims[0]);
    return OK;
}

int nn_eval_fc(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
    int32_t fuse = 0;
    nn_param_i32(c, 3, &fuse);
    uint32_t units = w->dims[0], isz = w->dims[1];
    size_t total = nn_numel(x);
    NN_CHECK(c, b->rank == 1 && b->dims[0] == units, "bias has %u values for %u units", b->dims[0], units);
    NN_CHECK(c, isz && total % isz == 0, "input of %zu values is not a multiple of the input size %u", total, isz);
    uint32_t batch = (uint32_t)(total / isz), dims[2] = {batch, units};
    int rc = c->alloc(c, 0, 2, dims);
    if (rc) return rc;
    int quant = nn_type_is_quant8(x->type);
    par_requant_params *rq = NULL;
    if (quant && (rc = requant_setup(c, 1, fuse, &rq))) return rc;
    float lo, hi;
    nn_fuse_range(fuse, &lo, &hi);
    for (uint32_t n = 0; n < batch; n++)
        for (uint32_t u = 0; u < units; u++) {
            size_t yi = (size_t)n * units + u;
            if (quant) {
                int64_t acc = ((const int32_t *)b->data)[u];
                for (uint32_t k = 0; k < isz; k++)
                    acc += (int64_t)(nn_q_get(x, (size_t)n * isz + k) - x->zp) *
                           (nn_q_get(w, (size_t)u * isz + k) - w->zp);
                nn_q_set(c->out[0], yi, par_requant_gemmlowp(acc, rq));
            } else {
                float acc = 0;
                for (uint32_t k = 0; k < isz; k++)
                    acc +=
                        ((const float *)x->data)[(size_t)n * isz + k] * ((const float *)w->data)[(size_t)u * isz + k];
                float v = acc + ((const float *)b->data)[u];
                ((float *)c->out[0]->data)[yi] = v < lo ? lo : v > hi ? hi : v;
            }
        }
    free(rq);
    return OK;
}
