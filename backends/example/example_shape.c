/*
 * example_shape.c - the example backend's resampling and data movement kernels: upsample (nearest, nearest-exact,
 * bilinear, bicubic), concat, reshape/flatten (a copy), permute, pad, slice.
 *
 * Data movement and nearest upsampling are selections: a correct backend is bit-exact, so these kernels only copy
 * floats, and every index is computed exactly. Bilinear and bicubic upsampling interpolate in float32 as PyTorch's
 * CPU kernels do, coordinates and weights included; the reference allows for their rounding. Kernels never allocate
 * and never write outside y.
 */
#include <math.h>

#include "example.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Upsampling. Exactly one of the attributes size [OH, OW] and scale [sh, sw] is given; the output size is in the
 * graph either way. The coordinate ratio r (input units per output unit) is in / out with size, 1 / scale with scale.
 * ------------------------------------------------------------------------------------------------------------- */
static int has_size(const par_node *n)
{
    return par_attr_count(n, "size") == 2;
}

/* r in double. */
static double ratio(const par_node *n, int axis, int64_t in, int64_t out)
{
    return has_size(n) ? (double)in / (double)out : 1.0 / par_attr_floats_at(n, "scale", axis, 1.0);
}

/* Nearest: src = min(floor(dst * r), in - 1). The index selects an element, so it is computed exactly where the
 * definition allows: with size, floor(dst * in / out) in integers; with scale, in double from r = 1 / scale. (A
 * backend computing it in f32, as PyTorch does, may land on the neighbour when dst * r is within a few ulps of an
 * integer; the reference admits that, but exact is simpler than arguing about it.) */
static int64_t nearest_src(const par_node *n, int axis, int64_t dst, int64_t in, int64_t out)
{
    /* PyTorch's same-size and double-size rules, whatever the scale (docs/ops.md, "Resampling") */
    if (out == in) return dst;
    if (out == 2 * in) return dst / 2;
    const int64_t src = has_size(n) ? dst * in / out
                                    : (int64_t)floor((double)dst * (1.0 / par_attr_floats_at(n, "scale", axis, 1.0)));
    return src < in - 1 ? src : in - 1;
}

/* nearest and nearest-exact: one selection per output element, the source index from src. */
static void nearest_loop(const ex_plan *p, const par_node *n,
                         int64_t (*src)(const par_node *, int, int64_t, int64_t, int64_t))
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t oh = 0; oh < OH; oh++) {
            const int64_t ih = src(n, 0, oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++)
                y[(nc * OH + oh) * OW + ow] = x[(nc * H + ih) * W + src(n, 1, ow, W, OW)];
        }
}

void ex_upsample_nearest2d(const ex_plan *p, const par_node *n)
{
    nearest_loop(p, n, nearest_src);
}

/* One axis of a bilinear interpolation: the two source indices and their weights. */
typedef struct lerp {
    int64_t i0, i1;
    float w0, w1;
} lerp;

/* The source coordinate, in float32 as PyTorch computes it:
 *   align_corners = 1: src = dst * (in - 1) / (out - 1)   (0 when out = 1; the ratio always from the sizes)
 *   align_corners = 0: src = max(0, (dst + 0.5) * r - 0.5)
 * then i0 = floor(src), i1 = min(i0 + 1, in - 1), w1 = src - i0, w0 = 1 - w1. */
static lerp bilinear_axis(const par_node *n, int axis, int64_t dst, int64_t in, int64_t out)
{
    float src;
    if (in == out) { /* PyTorch: the same size copies along the axis, whatever the scale */
        lerp l = {dst, dst, 1.0f, 0.0f};
        return l;
    }
    if (par_attr_int(n, "align_corners", 0)) {
        const float r = out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
        src = r * (float)dst;
    } else {
        const float r = has_size(n) ? (float)in / (float)out : (float)(1.0 / par_attr_floats_at(n, "scale", axis, 1.0));
        src = r * ((float)dst + 0.5f) - 0.5f;
        if (src < 0.0f) src = 0.0f;
    }
    lerp l;
    l.i0 = (int64_t)src; /* src >= 0: truncation is floor */
    if (l.i0 > in - 1) l.i0 = in - 1; /* float rounding must never carry an index past the edge */
    l.i1 = l.i0 + 1 < in ? l.i0 + 1 : in - 1;
    l.w1 = src - (float)l.i0;
    if (l.w1 > 1.0f) l.w1 = 1.0f;
    l.w0 = 1.0f - l.w1;
    return l;
}

void ex_upsample_bilinear2d(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const int64_t NC = xv->dims[0] * xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    const int64_t OH = yv->dims[2], OW = yv->dims[3];
    for (int64_t nc = 0; nc < NC; nc++) {
        const float *xc = x + nc * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            const lerp h = bilinear_axis(n, 0, oh, H, OH);
            for (int64_t ow = 0; ow < OW; ow++) {
                const lerp w = bilinear_axis(n, 1, ow, W, OW);
                const float top = w.w0 * xc[h.i0 * W + w.i0] + w.w1 * xc[h.i0 * W + w.i1];
                const float bottom = w.w0 * xc[h.i1 * W + w.i0] + w.w1 * xc[h.i1 * W + w.i1];
                y[(nc * OH + oh) * OW + ow] = h.w0 * top + h.w1 * bottom;
            }
        }
    }
}

/* nearest-exact: src = min(floor((dst + 1/2) r), in - 1), exactly (integers with size, double with scale). */
static int64_t nearest_exact_src(const par_node *n, int axis, int64_t dst, int64_t in, int64_t out)
{
    const int64_t src = par_attr_count(n, "size") == 2 ? (2 * dst + 1) * in / (2 * out)
                                                       : (int64_t)floor(((double)dst + 0.5) * ratio(n, axis, in, out));
    return src < in - 1 ? src : in - 1;
}

/* Bicubic: PyTorch's cubic convolution with A = -0.75, in float32. */
#define EX_CUBIC_A (-0.75f)

static float cc1(float x) { return ((EX_CUBIC_A + 2.0f) * x - (EX_CUBIC_A + 3.0f)) * x * x + 1.0f; }
static float cc2(float x)
{
    return ((EX_CUBIC_A * x - 5.0f * EX_CUBIC_A) * x + 8.0f * EX_CUBIC_A) * x - 4.0f * EX_CUBIC_A;
}

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

void ex_upsample_nearest_exact2d(const ex_plan *p, const par_node *n)
{
    nearest_loop(p, n, nearest_exact_src);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Data movement
 * ------------------------------------------------------------------------------------------------------------- */

/* reshape and flatten: a dense row-major tensor keeps its element order. */
void ex_copy(const ex_plan *p, const par_node *n)
{
    memcpy(ex_out(p, n), ex_in(p, n, 0), (size_t)ex_out_value(p, n)->numel * sizeof(float));
}

/* concat along axis: seen as [outer, row], each input contributes a contiguous chunk of every row. */
void ex_concat(const ex_plan *p, const par_node *n)
{
    const par_value *yv = ex_out_value(p, n);
    float *y = ex_out(p, n);
    int64_t axis = par_attr_int(n, "axis", 1);
    if (axis < 0) axis += yv->rank;
    const int64_t outer = ex_prod(yv->dims, 0, (int32_t)axis), row = ex_prod(yv->dims, (int32_t)axis, yv->rank);
    int64_t at = 0; /* where the current input's chunk starts within a row */
    for (int32_t k = 0; k < n->n_inputs; k++) {
        const par_value *xv = ex_in_value(p, n, k);
        const float *x = ex_in(p, n, k);
        const int64_t chunk = ex_prod(xv->dims, (int32_t)axis, xv->rank);
        for (int64_t o = 0; o < outer; o++) memcpy(y + o * row + at, x + o * chunk, (size_t)chunk * sizeof(float));
        at += chunk;
    }
}

/* permute: y.dims[i] = x.dims[perm[i]], so stepping y's axis i steps x's axis perm[i]. */
void ex_permute(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    int64_t xstride[PAR_MAX_RANK], s[PAR_MAX_RANK], acc = 1;
    for (int32_t d = xv->rank - 1; d >= 0; d--) {
        xstride[d] = acc;
        acc *= xv->dims[d];
    }
    for (int32_t i = 0; i < yv->rank; i++) s[i] = xstride[par_attr_ints_at(n, "perm", i, i)];
    for (int64_t j = 0; j < yv->numel; j++) y[j] = x[ex_offset(j, yv->dims, yv->rank, s)];
}

/* pad: pads [b0, e0, b1, e1, ...] per dimension from the first; mode constant: new elements take `value`;
 * reflect: the mirror image about the edge element; replicate: the edge element. */
void ex_pad(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    const float value = (float)par_attr_float(n, "value", 0.0);
    const char *mode = par_attr_str(n, "mode", "constant");
    const int reflect = strcmp(mode, "reflect") == 0, replicate = strcmp(mode, "replicate") == 0;
    for (int64_t j = 0; j < yv->numel; j++) {
        int64_t rest = j, off = 0, stride = 1;
        int inside = 1;
        for (int32_t d = yv->rank - 1; d >= 0; d--) {
            int64_t xi = rest % yv->dims[d] - par_attr_ints_at(n, "pads", 2 * d, 0);
            const int64_t size = xv->dims[d];
            if (reflect) xi = xi < 0 ? -xi : xi >= size ? 2 * (size - 1) - xi : xi; /* mirror, edge not repeated */
            if (replicate) xi = xi < 0 ? 0 : xi >= size ? size - 1 : xi;          /* the edge repeated */
            rest /= yv->dims[d];
            if (xi < 0 || xi >= xv->dims[d]) inside = 0;
            off += xi * stride;
            stride *= xv->dims[d];
        }
        y[j] = inside ? x[off] : value;
    }
}

/* slice along dim: start (and end) get size added when negative, then are clamped to [0, size]; y takes elements
 * start, start + step, ...; how many is the graph's output size. */
void ex_slice(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    int64_t dim = par_attr_int(n, "dim", 0);
    if (dim < 0) dim += xv->rank;
    const int64_t size = xv->dims[dim], step = par_attr_int(n, "step", 1);
    int64_t start = par_attr_int(n, "start", 0);
    if (start < 0) start += size;
    start = start < 0 ? 0 : (start > size ? size : start);
    const int64_t outer = ex_prod(yv->dims, 0, (int32_t)dim), K = yv->dims[dim];
    const int64_t inner = ex_prod(yv->dims, (int32_t)dim + 1, yv->rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < K; k++)
            memcpy(y + (o * K + k) * inner, x + (o * size + start + k * step) * inner, (size_t)inner * sizeof(float));
}
