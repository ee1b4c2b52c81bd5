/*
 * ops_pool.c - AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D, MEAN, and the resizes RESIZE_BILINEAR and
 * RESIZE_NEAREST_NEIGHBOR, with NNAPI's semantics (NHWC, NCHW from level 29).
 *   Pools: explicit pads (left, right, top, bottom) or implicit SAME / VALID; windows count only the elements
 *   inside the input (padding excluded from the average, as TFLite and Android). Quantized average: the integer
 *   sum over n elements rounded half away from zero, (sum +- n/2) / n (TFLite's reference_integer_ops::AveragePool),
 *   then the activation clamp; quantized pools keep the input's scale and zero point.
 *   MEAN: float sum then divide; quantized (same scale and zero point as the input) sums the stored integers and
 *   divides truncating, as Android's meanGeneric<uint8_t, int32_t> (TFLite reference Mean).
 *   Resizes: TFLite's coordinate rules (align_corners, half_pixel_centers from level 30); quantized bilinear
 *   interpolates in float and truncates toward zero, as the TFLite reference ResizeBilinear<T> of Android 11's
 *   snapshot (static_cast<T>; later TFLite adds a rounding offset).
 * Must not know where the operation runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnsim.h"

#define OK ANEURALNETWORKS_NO_ERROR

typedef struct pool_params {
    int32_t pl, pr, pt, pb, sw, sh, fw, fh, fuse, scheme;
    int nchw, implicit;
} pool_params;

static int pool_params_read(nn_ctx *c, pool_params *p)
{
    memset(p, 0, sizeof *p);
    p->sw = p->sh = p->fw = p->fh = 1;
    uint32_t n = c->n_in;
    NN_CHECK(c, n == 7 || n == 8 || n == 10 || n == 11, "%u inputs (takes 10 or 11 explicit, 7 or 8 implicit)", n);
    NN_CHECK(c, c->n_out == 1, "%u outputs (takes 1)", c->n_out);
    p->implicit = n < 10;
    uint32_t base = p->implicit ? 7 : 10;
    for (uint32_t i = 1; i < base; i++)
        NN_CHECK(c, nn_is_type(c, i, ANEURALNETWORKS_INT32), "input %u must be INT32", i);
    uint32_t k = 1;
    if (p->implicit) {
        nn_param_i32(c, k++, &p->scheme);
        if (c->in[1]->data)
            NN_CHECK(c, p->scheme == ANEURALNETWORKS_PADDING_SAME || p->scheme == ANEURALNETWORKS_PADDING_VALID,
                     "padding scheme %d is not SAME (1) or VALID (2)", (int)p->scheme);
    } else {
        nn_param_i32(c, k++, &p->pl), nn_param_i32(c, k++, &p->pr);
        nn_param_i32(c, k++, &p->pt), nn_param_i32(c, k++, &p->pb);
    }
    nn_param_i32(c, k++, &p->sw), nn_param_i32(c, k++, &p->sh);
    nn_param_i32(c, k++, &p->fw), nn_param_i32(c, k++, &p->fh);
    int rc = nn_check_fuse(c, k);
    if (rc) return rc;
    nn_param_i32(c, k, &p->fuse);
    if (n == base + 1) {
        NN_CHECK(c, nn_is_type(c, base, ANEURALNETWORKS_BOOL), "input %u (layout) must be BOOL", base);
        nn_param_bool(c, base, &p->nchw);
        if (c->level < 29) c->level = 29;
    }
    NN_CHECK(c, p->sw > 0 && p->sh > 0 && p->fw > 0 && p->fh > 0, "strides and filter sizes must be positive");
    NN_CHECK(c, p->pl >= 0 && p->pr >= 0 && p->pt >= 0 && p->pb >= 0, "negative padding");
    return OK;
}

int nn_check_pool(nn_ctx *c)
{
    pool_params p;
    int rc = pool_params_read(c, &p);
    if (rc) return rc;
    const nn_tensor *x = c->in[0], *y = c->out[0];
    int32_t t = x->type;
    int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    NN_CHECK(c,
             t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 ||
                 (quant && c->op->type != ANEURALNETWORKS_L2_POOL_2D),
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, y->type == t, "output type %s differs from the input's %s", nn_type_name(y->type), nn_type_name(t));
    NN_CHECK(c, !x->rank || x->rank == 4, "input rank %u (takes 4)", x->rank);
    if (quant)
        NN_CHECK(c, x->scale == y->scale && x->zp == y->zp, "a quantized pool keeps the input's scale and zeroPoint");
    return OK;
}

int nn_eval_pool(nn_ctx *c)
{
    pool_params p;
    int rc = pool_params_read(c, &p);
    if (rc) return rc;
    const nn_tensor *x = c->in[0];
    NN_CHECK(c, x->rank == 4, "input rank %u (takes 4)", x->rank);
    nn_img gi = nn_img_of(x, p.nchw);
    if (p.implicit) {
        nn_implicit_pad(p.scheme, gi.w, (uint32_t)p.sw, (uint32_t)p.fw, 1, &p.pl, &p.pr);
        nn_implicit_pad(p.scheme, gi.h, (uint32_t)p.sh, (uint32_t)p.fh, 1, &p.pt, &p.pb);
    }
    int64_t oh = ((int64_t)gi.h + p.pt + p.pb - p.fh) / p.sh + 1, ow = ((int64_t)gi.w + p.pl + p.pr - p.fw) / p.sw + 1;
    NN_CHECK(c, (int64_t)gi.h + p.pt + p.pb >= p.fh && (int64_t)gi.w + p.pl + p.pr >= p.fw,
             "the window does not fit the padded input");
    uint32_t dims[4];
    nn_img_dims(gi.n, (uint32_t)oh, (uint32_t)ow, gi.c, p.nchw, dims);
    if ((rc = c->alloc(c, 0, 4, dims))) return rc;
    nn_tensor *y = c->out[0];
    nn_img go = nn_img_of(y, p.nchw);
    int32_t op = c->op->type, quant = nn_type_is_quant8(x->type), qmin = 0, qmax = 0;
    float lo, hi;
    nn_fuse_range(p.fuse, &lo, &hi);
    if (quant) nn_fuse_qrange(p.fuse, y, &qmin, &qmax);
    for (uint32_t n = 0; n < gi.n; n++)
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++)
                for (uint32_t ch = 0; ch < gi.c; ch++) {
                    int64_t y0 = (int64_t)oy * p.sh - p.pt, x0 = (int64_t)ox * p.sw - p.pl;
                    int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + p.fh > gi.h ? gi.h : y0 + p.fh;
                    int64_t xa = x0 < 0 ? 0 : x0, xb = x0 + p.fw > gi.w ? gi.w : x0 + p.fw;
                    int32_t count = (int32_t)((yb - ya) * (xb - xa)), qacc = 0, qmx = INT32_MIN;
                    float acc = 0, mx = -INFINITY;
                    for (int64_t iy = ya; iy < yb; iy++)
                        for (int64_t ix = xa; ix < xb; ix++) {
                            size_t xi = nn_img_at(&gi, n, (uint32_t)iy, (uint32_t)ix, ch);
                            if (quant) {
                                int32_t q = nn_q_get(x, xi);
                                qacc += q;
                                qmx = q > qmx ? q : qmx;
                            } else {
                                float v = ((const float *)x->data)[xi];
                                acc += op == ANEURALNETWORKS_L2_POOL_2D ? v * v : v;
                                mx = v > mx ? v : mx;
                            }
                        }
                    size_t yi = nn_img_at(&go, n, oy, ox, ch);
                    if (quant) {
                        int32_t v = !count                              ? y->zp /* a window wholly in the padding */
                                    : op == ANEURALNETWORKS_MAX_POOL_2D ? qmx
                                    : qacc >= 0                         ? (qacc + count / 2) / count
                                                                        : (qacc - count / 2) / count;
                        nn_q_set(y, yi, v < qmin ? qmin : v > qmax ? qmax : v);
                    } else {
                        float v = !count                              ? 0
                                  : op == ANEURALNETWORKS_MAX_POOL_2D ? mx
                                  : op == ANEURALNETWORKS_L2_POOL_2D  ? sqrtf(acc / (float)count)
                                                                      : acc / (float)count;
                        ((float *)y->data)[yi] = v < lo ? lo : v > hi ? hi : v;
                    }
                }
    return OK;
}

/* ---- MEAN ---- */

int nn_check_mean(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 3 && c->n_out == 1, "%u inputs, %u outputs (takes 3 and 1)", c->n_in, c->n_out);
    const nn_tensor *x = c->in[0], *y = c->out[0];
    int32_t t = x->type;
    int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    NN_CHECK(c, t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 || quant,
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, y->type == t, "output type %s differs from the input's %s", nn_type_name(y->type), nn_type_name(t));
    NN_CHECK(c, nn_is_type(c, 1, ANEURALNETWORKS_TENSOR_INT32) && c->in[1]->rank == 1,
             "input 1 (axes) must be a "
             "1-D TENSOR_INT32");
    NN_CHECK(c, nn_is_type(c, 2, ANEURALNETWORKS_INT32), "input 2 (keep_dims) must be INT32");
    if (quant)
        NN_CHECK(c, x->scale == y->scale && x->zp == y->zp, "a quantized MEAN keeps the input's scale and zeroPoint");
    return OK;
}

int nn_eval_mean(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *ax = c->in[1];
    int32_t keep = 0, r = (int32_t)x->rank;
    nn_param_i32(c, 2, &keep);
    int reduce[NN_MAX_RANK] = {0};
    NN_CHECK(c, ax->data || !ax->dims[0], "axes have no value");
    for (uint32_t i = 0; i < ax->dims[0]; i++) {
        int32_t a = ((const int32_t *)ax->data)[i];
        NN_CHECK(c, a >= -r && a < r, "axis %d outside [-%d, %d)", (int)a, (int)r, (int)r);
        reduce[a < 0 ? a + r : a] = 1;
    }
    uint32_t dims[NN_MAX_RANK], rank = 0;
    for (int32_t i = 0; i < r; i++) {
        if (!reduce[i])
            dims[rank++] = x->dims[i];
        else if (keep > 0)
            dims[rank++] = 1;
    }
    if (!rank) dims[rank++] = 1; /* every axis reduced without keep_dims: Android gives shape [1] */
    int rc = c->alloc(c, 0, rank, dims);
    if (rc) return rc;
    nn_tensor *y = c->out[0];
    size_t n_out = nn_numel(y), n_in = nn_numel(x), count = n_out ? n_in / n_out : 1;
    int quant = nn_type_is_quant8(x->type);
    float *sumf = calloc(n_out ? n_out : 1, sizeof *sumf);
    int32_t *sumq = calloc(n_out ? n_out : 1, sizeof *sumq);
    if (!sumf || !sumq) {
        free(sumf), free(sumq);
        return nn_fail(c, ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    uint32_t coord[NN_MAX_RANK] = {0};
    for (size_t k = 0; k < n_in; k++) {
        size_t o = 0;
        for (int32_t i = 0; i < r; i++)
            if (!reduce[i]) o = o * x->dims[i] + coord[i];
        if (quant)
            sumq[o] += nn_q_get(x, k);
        else
            sumf[o] += ((const float *)x->data)[k];
        for (int32_t i = r - 1; i >= 0; i--) {
            if (++coord[i] < x->dims[i]) break;
            coord[i] = 0;
        }
    }
    for (size_t o = 0; o < n_out; o++) {
        if (quant)
            nn_q_set(y, o, sumq[o] / (int32_t)count);
        else
            ((float *)y->data)[o] = sumf[o] / (float)count;
    }
    free(sumf), free(sumq);
    return OK;
}

/* ---- resizes ---- */

typedef struct resize_params {
    int by_scale, nchw, align, half;
    int32_t ow, oh;
    float sw, sh;
} resize_params;

static int resize_params_read(nn_ctx *c, resize_params *p)
{
    int nearest = c->op->type == ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR;
    uint32_t n = c->n_in;
    memset(p, 0, sizeof *p);
    NN_CHECK(c, nearest ? (n == 4 || n == 6) : (n == 3 || n == 4 || n == 6), "%u inputs", n);
    NN_CHECK(c, c->n_out == 1, "%u outputs (takes 1)", c->n_out);
    p->by_scale = !nn_is_type(c, 1, ANEURALNETWORKS_INT32);
    if (p->by_scale) {
        int32_t st =
            c->in[0]->type == ANEURALNETWORKS_TENSOR_FLOAT16 ? ANEURALNETWORKS_FLOAT16 : ANEURALNETWORKS_FLOAT32;
        NN_CHECK(c, nn_is_type(c, 1, st) && nn_is_type(c, 2, st), "inputs 1, 2 must be both INT32 or both %s",
                 nn_type_name(st));
        nn_param_f32(c, 1, &p->sw), nn_param_f32(c, 2, &p->sh);
        if (c->in[1]->data) NN_CHECK(c, p->sw > 0 && p->sh > 0, "scales must be positive");
        if (c->level < 29) c->level = 29;
    } else {
        NN_CHECK(c, nn_is_type(c, 2, ANEURALNETWORKS_INT32), "input 2 (output height) must be INT32");
        nn_param_i32(c, 1, &p->ow), nn_param_i32(c, 2, &p->oh);
        if (c->in[1]->data && c->in[2]->data) NN_CHECK(c, p->ow > 0 && p->oh > 0, "output size must be positive");
    }
    if (n >= 4) {
        NN_CHECK(c, nn_is_type(c, 3, ANEURALNETWORKS_BOOL), "input 3 (layout) must be BOOL");
        nn_param_bool(c, 3, &p->nchw);
        if (c->level < 29) c->level = 29;
    }
    if (n == 6) {
        NN_CHECK(c, nn_is_type(c, 4, ANEURALNETWORKS_BOOL) && nn_is_type(c, 5, ANEURALNETWORKS_BOOL),
                 "inputs 4, 5 (align_corners, half_pixel_centers) must be BOOL");
        nn_param_bool(c, 4, &p->align), nn_param_bool(c, 5, &p->half);
        NN_CHECK(c, !(p->align && p->half), "align_corners and half_pixel_centers cannot both be true");
        c->level = 30;
    }
    return OK;
}

int nn_check_resize(nn_ctx *c)
{
    resize_params p;
    int rc = resize_params_read(c, &p);
    if (rc) return rc;
    int32_t t = c->in[0]->type;
    int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    NN_CHECK(c, t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 || quant,
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, c->out[0]->type == t, "output type differs from the input's");
    NN_CHECK(c, !c->in[0]->rank || c->in[0]->rank == 4, "input rank %u (takes 4)", c->in[0]->rank);
    if (quant) {
        if (c->op->type == ANEURALNETWORKS_RESIZE_BILINEAR && c->level < 29) c->level = 29;
        NN_CHECK(c, c->in[0]->scale == c->out[0]->scale && c->in[0]->zp == c->out[0]->zp,
                 "a quantized resize keeps the input's scale and zeroPoint");
    }
    return OK;
}

int nn_eval_resize(nn_ctx *c)
{
    resize_params p;
    int rc = resize_params_read(c, &p);
    if (rc) return rc;
    const nn_tensor *x = c->in[0];
    NN_CHECK(c, x->rank == 4, "input rank %u (takes 4)", x->rank);
    nn_img gi = nn_img_of(x, p.nchw);
    if (p.by_scale) {
        p.ow = (int32_t)floorf((float)gi.w * p.sw);
        p.oh = (int32_t)floorf((float)gi.h * p.sh);
    }
    NN_CHECK(c, p.ow > 0 && p.oh > 0, "output size %d x %d", (int)p.oh, (int)p.ow);
    uint32_t dims[4];
    nn_img_dims(gi.n, (uint32_t)p.oh, (uint32_t)p.ow, gi.c, p.nchw, dims);
    if ((rc = c->alloc(c, 0, 4, dims))) return rc;
    nn_tensor *y = c->out[0];
    nn_img go = nn_img_of(y, p.nchw);
    float hs = (p.align && p.oh > 1) ? (float)(gi.h - 1) / (float)(p.oh - 1) : (float)gi.h / (float)p.oh;
    float ws = (p.align && p.ow > 1) ? (float)(gi.w - 1) / (float)(p.ow - 1) : (float)gi.w / (float)p.ow;
    int quant = nn_type_is_quant8(x->type);
    int nearest = c->op->type == ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR;
    for (uint32_t n = 0; n < gi.n; n++)
        for (uint32_t oy = 0; oy < (uint32_t)p.oh; oy++)
            for (uint32_t ox = 0; ox < (uint32_t)p.ow; ox++)
                for (uint32_t ch = 0; ch < gi.c; ch++) {
                    size_t yi = nn_img_at(&go, n, oy, ox, ch);
                    float v;
                    if (nearest) { /* TFLite GetNearestNeighbor */
                        float off = p.half ? 0.5f : 0.0f;
                        int32_t iy = p.align ? (int32_t)roundf((oy + off) * hs) : (int32_t)floorf((oy + off) * hs);
                        int32_t ix = p.align ? (int32_t)roundf((ox + off) * ws) : (int32_t)floorf((ox + off) * ws);
                        iy = iy > (int32_t)gi.h - 1 ? (int32_t)gi.h - 1 : iy;
                        ix = ix > (int32_t)gi.w - 1 ? (int32_t)gi.w - 1 : ix;
                        if (p.half) iy = iy < 0 ? 0 : iy, ix = ix < 0 ? 0 : ix;
                        size_t xi = nn_img_at(&gi, n, (uint32_t)iy, (uint32_t)ix, ch);
                        if (quant)
                            nn_q_set(y, yi, nn_q_get(x, xi));
                        else
                            ((float *)y->data)[yi] = ((const float *)x->data)[xi];
                        continue;
                    }
                    /* TFLite ComputeInterpolationValues */
                    float fy = p.half ? ((float)oy + 0.5f) * hs - 0.5f : (float)oy * hs;
                    float fx = p.half ? ((float)ox + 0.5f) * ws - 0.5f : (float)ox * ws;
                    int32_t y0 = (int32_t)floorf(fy), x0 = (int32_t)floorf(fx);
                    y0 = y0 < 0 ? 0 : y0, x0 = x0 < 0 ? 0 : x0;
                    int32_t y1 = (int32_t)ceilf(fy), x1 = (int32_t)ceilf(fx);
                    y1 = y1 > (int32_t)gi.h - 1 ? (int32_t)gi.h - 1 : y1;
                    x1 = x1 > (int32_t)gi.w - 1 ? (int32_t)gi.w - 1 : x1;
                    float a[4];
                    uint32_t yy[2] = {(uint32_t)y0, (uint32_t)y1}, xx[2] = {(uint32_t)x0, (uint32_t)x1};
                    for (int k = 0; k < 4; k++) {
                        size_t xi = nn_img_at(&gi, n, yy[k >> 1], xx[k & 1], ch);
                        a[k] = quant ? (float)nn_q_get(x, xi) : ((const float *)x->data)[xi];
                    }
                    float dy = fy - (float)y0, dx = fx - (float)x0;
                    v = a[0] * (1 - dy) * (1 - dx) + a[2] * dy * (1 - dx) + a[1] * (1 - dy) * dx + a[3] * dy * dx;
                    if (quant)
                        nn_q_set(y, yi, (int32_t)v); /* static_cast<T>: toward zero */
                    else
                        ((float *)y->data)[yi] = v;
                }
    return OK;
}
