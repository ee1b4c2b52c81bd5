/*
 * example_select.c - the example backend's selection kernels (where, masked_fill, gather, embedding) and the
 * nearest-exact and bicubic resampling kernels.
 *
 * Selections copy floats: conditions and masks are bool bytes (0 or 1), indices i32 that the harness's reference has
 * checked to lie in [0, n) (a case with an index out of range never reaches a backend's verdict, but the kernels
 * clamp anyway so that they never read outside x). Bicubic interpolates in float32 as PyTorch's CPU kernel does,
 * weights included. Kernels never allocate and never write outside y.
 */
#include <math.h>

#include "example.h"

/* where: y = cond ? a : b, all three broadcast to y's shape. */
void ex_where(const ex_plan *p, const par_node *n)
{
    const par_value *cv = ex_in_value(p, n, 0), *av = ex_in_value(p, n, 1), *bv = ex_in_value(p, n, 2);
    const par_value *yv = ex_out_value(p, n);
    const uint8_t *cond = ex_in_raw(p, n, 0);
    const float *a = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    int64_t sc[PAR_MAX_RANK], sa[PAR_MAX_RANK], sb[PAR_MAX_RANK];
    ex_broadcast_strides(cv->dims, cv->rank, yv->rank, sc);
    ex_broadcast_strides(av->dims, av->rank, yv->rank, sa);
    ex_broadcast_strides(bv->dims, bv->rank, yv->rank, sb);
    for (int64_t j = 0; j < yv->numel; j++)
        y[j] = cond[ex_offset(j, yv->dims, yv->rank, sc)] ? a[ex_offset(j, yv->dims, yv->rank, sa)]
                                                          : b[ex_offset(j, yv->dims, yv->rank, sb)];
}

/* masked_fill: y = mask ? value : x, the mask broadcast to x's shape. */
void ex_masked_fill(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *mv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0);
    const uint8_t *mask = ex_in_raw(p, n, 1);
    float *y = ex_out(p, n);
    const float value = (float)par_attr_float(n, "value", 0.0);
    int64_t sm[PAR_MAX_RANK];
    ex_broadcast_strides(mv->dims, mv->rank, xv->rank, sm);
    for (int64_t j = 0; j < xv->numel; j++) y[j] = mask[ex_offset(j, xv->dims, xv->rank, sm)] ? value : x[j];
}

static int64_t clamp_index(int32_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* gather on axis: x seen as [outer, n, inner]; y as [outer, count, inner] with row j = x's row indices[j]. */
void ex_gather(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *iv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0);
    const int32_t *idx = ex_in_raw(p, n, 1);
    float *y = ex_out(p, n);
    int64_t axis = par_attr_int(n, "axis", 0);
    if (axis < 0) axis += xv->rank;
    const int64_t outer = ex_prod(xv->dims, 0, (int32_t)axis), rows = xv->dims[axis];
    const int64_t inner = ex_prod(xv->dims, (int32_t)axis + 1, xv->rank), count = iv->numel;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < count; j++)
            memcpy(y + (o * count + j) * inner, x + (o * rows + clamp_index(idx[j], rows)) * inner,
                   (size_t)inner * sizeof(float));
}

/* embedding: y[..., :] = weight[indices[...], :]. */
void ex_embedding(const ex_plan *p, const par_node *n)
{
    const par_value *iv = ex_in_value(p, n, 0), *wv = ex_in_value(p, n, 1);
    const int32_t *idx = ex_in_raw(p, n, 0);
    const float *w = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    const int64_t V = wv->dims[0], D = wv->dims[1];
    for (int64_t j = 0; j < iv->numel; j++)
        memcpy(y + j * D, w + clamp_index(idx[j], V) * D, (size_t)D * sizeof(float));
}

/* ---------------------------------------------------------------------------------------------------------------
 * Resampling. The coordinate ratio r is in / out with size, 1 / scale with scale.
 * ------------------------------------------------------------------------------------------------------------- */
static double ratio(const par_node *n, int axis, int64_t in, int64_t out)
{
    return par_attr_count(n, "size") == 2 ? (double)in / (double)out : 1.0 / par_attr_floats_at(n, "scale", axis, 1.0);
}

/* nearest-exact: src = min(floor((dst + 1/2) r), in - 1), exactly (integers with size, double with scale). */
static int64_t nearest_exact_src(const par_node *n, int axis, int64_t dst, int64_t in, int64_t out)
{
    const int64_t src = par_attr_count(n, "size") == 2 ? (2 * dst + 1) * in / (2 * out)
                                                       : (int64_t)floor(((double)dst + 0.5) * ratio(n, axis, in, out));
    return src < in - 1 ? src : in - 1;
}

void ex_upsample_nearest_exact2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t oh = 0; oh < OH; oh++) {
            const int64_t ih = nearest_exact_src(n, 0, oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++)
                y[(nc * OH + oh) * OW + ow] = x[(nc * H + ih) * W + nearest_exact_src(n, 1, ow, W, OW)];
        }
}

/* Bicubic: PyTorch's cubic convolution with A = -0.75, in float32. */
#define EX_CUBIC_A (-0.75f)

static float cc1(float x) { return ((EX_CUBIC_A + 2.0f) * x - (EX_CUBIC_A + 3.0f)) * x * x + 1.0f; }
static float cc2(float x) { return ((EX_CUBIC_A * x - 5.0f * EX_CUBIC_A) * x + 8.0f * EX_CUBIC_A) * x - 4.0f * EX_CUBIC_A; }

typedef struct cubic {
    int64_t i[4]; /* the taps floor(src) - 1 .. floor(src) + 2, clamped to [0, in - 1] */
    float w[4];
} cubic;

/* align_corners = 1: src = dst (in - 1) / (out - 1); else src = (dst + 0.5) r - 0.5, not clamped. Unlike nearest and
 * bilinear, PyTorch's bicubic has no same-size rule: an axis of unchanged size is resampled with the scale given. */
static cubic cubic_axis(const par_node *n, int axis, int64_t dst, int64_t in, int64_t out)
{
    float src;
    if (par_attr_int(n, "align_corners", 0)) src = (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) * (float)dst;
    else src = (float)ratio(n, axis, in, out) * ((float)dst + 0.5f) - 0.5f;
    const float f = floorf(src), t = src - f;
    cubic c;
    for (int k = 0; k < 4; k++) {
        int64_t i = (int64_t)f - 1 + k;
        c.i[k] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
    }
    c.w[0] = cc2(t + 1.0f);
    c.w[1] = cc1(t);
    c.w[2] = cc1(1.0f - t);
    c.w[3] = cc2(2.0f - t);
    return c;
}

void ex_upsample_bicubic2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    for (int64_t nc = 0; nc < NC; nc++) {
        const float *xc = x + nc * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            const cubic h = cubic_axis(n, 0, oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++) {
                const cubic w = cubic_axis(n, 1, ow, W, OW);
                float acc = 0.0f;
                for (int a = 0; a < 4; a++) {
                    const float *row = xc + h.i[a] * W;
                    const float r = w.w[0] * row[w.i[0]] + w.w[1] * row[w.i[1]] + w.w[2] * row[w.i[2]] +
                                    w.w[3] * row[w.i[3]];
                    acc += h.w[a] * r;
                }
                y[(nc * OH + oh) * OW + ow] = acc;
            }
        }
    }
}
