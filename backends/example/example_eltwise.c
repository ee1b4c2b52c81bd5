/*
 * example_eltwise.c - the example backend's elementwise kernels: binary ops with numpy broadcasting, activations,
 * softmax and log_softmax, batch norm, and the quantize / dequantize boundary ops.
 *
 * All arithmetic is float32 with the C library's float functions (expf, expm1f, tanhf, logf, sqrtf), as
 * PAR_ARITH_F32 declares: the reference allows each elementary function a few ulps and each basic operation one
 * rounding, so these plain formulas are within budget. The kernels must not allocate and never write outside y.
 */
#include <math.h>

#include "example.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Binary ops: y[i] = a[...] op b[...], with a and b read through broadcast strides (numpy rules: dims aligned to
 * the right, size-1 dims repeat). The output has the broadcast shape.
 * ------------------------------------------------------------------------------------------------------------- */
typedef enum binop { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MIN, BIN_MAX, BIN_POW } binop;

static float apply(binop op, float a, float b)
{
    switch (op) {
    case BIN_ADD: return a + b;
    case BIN_SUB: return a - b;
    case BIN_MUL: return a * b;
    case BIN_DIV: return a / b; /* true division, correctly rounded */
    /* minimum and maximum propagate NaN (torch.minimum / maximum): fminf / fmaxf would return the other operand */
    case BIN_MIN: return a < b || a != a ? a : b;
    case BIN_MAX: return a > b || a != a ? a : b;
    case BIN_POW: return powf(a, b);
    }
    return 0.0f;
}

static void binary(const ex_plan *p, const par_node *n, binop op)
{
    const par_value *av = ex_in_value(p, n, 0), *bv = ex_in_value(p, n, 1), *yv = ex_out_value(p, n);
    const float *a = ex_in(p, n, 0), *b = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    int64_t as[PAR_MAX_RANK], bs[PAR_MAX_RANK];
    ex_broadcast_strides(av->dims, av->rank, yv->rank, as);
    ex_broadcast_strides(bv->dims, bv->rank, yv->rank, bs);
    for (int64_t i = 0; i < yv->numel; i++)
        y[i] = apply(op, a[ex_offset(i, yv->dims, yv->rank, as)], b[ex_offset(i, yv->dims, yv->rank, bs)]);
}

void ex_add(const ex_plan *p, const par_node *n) { binary(p, n, BIN_ADD); }
void ex_sub(const ex_plan *p, const par_node *n) { binary(p, n, BIN_SUB); }
void ex_mul(const ex_plan *p, const par_node *n) { binary(p, n, BIN_MUL); }
void ex_div(const ex_plan *p, const par_node *n) { binary(p, n, BIN_DIV); }
void ex_minimum(const ex_plan *p, const par_node *n) { binary(p, n, BIN_MIN); }
void ex_maximum(const ex_plan *p, const par_node *n) { binary(p, n, BIN_MAX); }
void ex_pow(const ex_plan *p, const par_node *n) { binary(p, n, BIN_POW); }

/* ---------------------------------------------------------------------------------------------------------------
 * Activations: same shape in and out. Clamps are selections (bit-exact); the others round.
 * ------------------------------------------------------------------------------------------------------------- */
#define UNARY_BEGIN                                                                                                \
    const float *x = ex_in(p, n, 0);                                                                               \
    float *y = ex_out(p, n);                                                                                       \
    const int64_t count = ex_out_value(p, n)->numel;

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

void ex_relu(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) y[i] = x[i] > 0.0f || x[i] != x[i] ? x[i] : 0.0f; /* NaN propagates */
}

/* relu6, hardtanh and clamp, at the bounds the kit reads (either may be infinite: the float infinities clamp
 * nothing). */
void ex_clamp(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    float lo = -INFINITY, hi = INFINITY;
    par_clamp_bounds_f32(n, &lo, &hi);
    for (int64_t i = 0; i < count; i++) y[i] = clampf(x[i], lo, hi);
}

void ex_leaky_relu(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    const float slope = (float)par_attr_float(n, "negative_slope", 0.01);
    for (int64_t i = 0; i < count; i++) y[i] = x[i] >= 0.0f ? x[i] : slope * x[i];
}

/* prelu: slope [1] (shared) or [C] (per channel, C = dims[1]). */
void ex_prelu(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    const par_value *xv = ex_in_value(p, n, 0), *sv = ex_in_value(p, n, 1);
    const float *slope = ex_in(p, n, 1);
    const int64_t C = xv->rank >= 2 ? xv->dims[1] : 1, inner = ex_prod(xv->dims, 2, xv->rank);
    for (int64_t i = 0; i < count; i++) {
        const float s = sv->numel == 1 ? slope[0] : slope[(i / inner) % C];
        y[i] = x[i] >= 0.0f ? x[i] : s * x[i];
    }
}

/* sigmoid = 1 / (1 + exp(-x)). For x < 0 the equal form e / (1 + e), e = exp(x), keeps exp from overflowing and the
 * result's relative error small where sigmoid is tiny. */
void ex_sigmoid(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) {
        if (x[i] >= 0.0f) {
            y[i] = 1.0f / (1.0f + expf(-x[i]));
        } else {
            const float e = expf(x[i]);
            y[i] = e / (1.0f + e);
        }
    }
}

void ex_tanh(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) y[i] = tanhf(x[i]);
}

void ex_hardsigmoid(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) y[i] = clampf(x[i] + 3.0f, 0.0f, 6.0f) / 6.0f;
}

void ex_hardswish(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) y[i] = x[i] * clampf(x[i] + 3.0f, 0.0f, 6.0f) / 6.0f;
}

/* elu: alpha * (exp(x) - 1) for x <= 0. expm1f is the accurate way to compute exp(x) - 1 near 0; expf(x) - 1.0f
 * would be within the budget as well (it allows the cancellation of the subtraction). */
void ex_elu(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    const float alpha = (float)par_attr_float(n, "alpha", 1.0);
    for (int64_t i = 0; i < count; i++) y[i] = x[i] > 0.0f ? x[i] : alpha * expm1f(x[i]);
}

/* silu(x) = x * sigmoid(x) = x / (1 + exp(-x)), in double and rounded once. exp(-x) overflows to inf for very
 * negative x, and x / inf = -0, the right limit; only x = -inf (-inf / inf) needs saying. */
void ex_silu(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) {
        const double v = x[i];
        y[i] = x[i] == -INFINITY ? -0.0f : (float)(v / (1.0 + exp(-v)));
    }
}

/* gelu, attribute approximate = "none" (default) or "tanh", in double and rounded once:
 *   none: 0.5 x (1 + erf(x / sqrt 2)), written 0.5 x erfc(-x / sqrt 2): for x << 0, 1 + erf(...) would cancel to
 *         nothing while erfc keeps its relative accuracy;
 *   tanh: 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3), written x / (1 + exp(-2u)) for the same reason.
 * x = -inf gives -inf * 0 or -inf / inf; the limit is -0. */
void ex_gelu(const ex_plan *p, const par_node *n)
{
    UNARY_BEGIN
    const int tanh_form = strcmp(par_attr_str(n, "approximate", "none"), "tanh") == 0;
    for (int64_t i = 0; i < count; i++) {
        const double v = x[i];
        double r;
        if (tanh_form) {
            const double u = 0.79788456080286535588 * (v + 0.044715 * v * v * v); /* sqrt(2 / pi) */
            r = v / (1.0 + exp(-2.0 * u));
        } else {
            r = 0.5 * v * erfc(-v * 0.70710678118654752440); /* 1 / sqrt 2 */
        }
        y[i] = x[i] == -INFINITY ? -0.0f : (float)r;
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Unary math: the C library's float functions, one call per element (their few ulps are what the reference's
 * elementary-function allowance covers). round is nearbyintf: half to even in the default rounding mode, as
 * torch.round and ONNX Round. softplus without overflow (x + log1p(e^-x) above 0), softsign with its limits +-1 at
 * +-inf (x / (1 + |x|) gives inf / inf = NaN there), sign keeping +-0 and NaN.
 * ------------------------------------------------------------------------------------------------------------- */
static float softplusf(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static float softsignf(float x) { return isinf(x) ? copysignf(1.0f, x) : x / (1.0f + fabsf(x)); }
static float signf(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
static float negf(float x) { return -x; }
static float reciprocalf(float x) { return 1.0f / x; }

static void map(const ex_plan *p, const par_node *n, float (*f)(float))
{
    UNARY_BEGIN
    for (int64_t i = 0; i < count; i++) y[i] = f(x[i]);
}

void ex_abs(const ex_plan *p, const par_node *n) { map(p, n, fabsf); }
void ex_neg(const ex_plan *p, const par_node *n) { map(p, n, negf); }
void ex_exp(const ex_plan *p, const par_node *n) { map(p, n, expf); }
void ex_log(const ex_plan *p, const par_node *n) { map(p, n, logf); }
void ex_floor(const ex_plan *p, const par_node *n) { map(p, n, floorf); }
void ex_ceil(const ex_plan *p, const par_node *n) { map(p, n, ceilf); }
void ex_round(const ex_plan *p, const par_node *n) { map(p, n, nearbyintf); }
void ex_reciprocal(const ex_plan *p, const par_node *n) { map(p, n, reciprocalf); }
void ex_sign(const ex_plan *p, const par_node *n) { map(p, n, signf); }
void ex_softplus(const ex_plan *p, const par_node *n) { map(p, n, softplusf); }

/* mish(x) = x tanh(softplus(x)) in f32 in its rational form: tanh(log(1 + e^x)) = n / (n + 2) with n = e^x (e^x + 2),
 * one exp and no tanh. Above x = 20, n / (n + 2) rounds to 1 in f32 (and e^x would overflow past 88): y = x. At
 * x = -inf, n = 0 and -inf * 0 would be NaN: the limit is -0. */
static float mishf(float x)
{
    if (x > 20.0f) return x;
    if (x == -INFINITY) return -0.0f;
    float e = expf(x), q = e * (e + 2.0f);
    return x * (q / (q + 2.0f));
}
void ex_mish(const ex_plan *p, const par_node *n) { map(p, n, mishf); }
void ex_softsign(const ex_plan *p, const par_node *n) { map(p, n, softsignf); }
void ex_erf(const ex_plan *p, const par_node *n) { map(p, n, erff); }
void ex_sin(const ex_plan *p, const par_node *n) { map(p, n, sinf); }
void ex_cos(const ex_plan *p, const par_node *n) { map(p, n, cosf); }

/* ---------------------------------------------------------------------------------------------------------------
 * softmax / log_softmax along `axis`, stabilised by the max: the tensor is [outer, L, inner] around the axis.
 * ------------------------------------------------------------------------------------------------------------- */
static void softmax_common(const ex_plan *p, const par_node *n, int log_form)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const float *x = ex_in(p, n, 0);
    float *y = ex_out(p, n);
    int64_t axis = par_attr_int(n, "axis", -1);
    if (axis < 0) axis += xv->rank;
    const int64_t outer = ex_prod(xv->dims, 0, (int32_t)axis), L = xv->dims[axis];
    const int64_t inner = ex_prod(xv->dims, (int32_t)axis + 1, xv->rank);

    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const float *xs = x + o * L * inner + in;
            float *ys = y + o * L * inner + in;
            float m = xs[0];
            for (int64_t l = 1; l < L; l++) m = xs[l * inner] > m ? xs[l * inner] : m;
            float s = 0.0f;
            for (int64_t l = 0; l < L; l++) s += expf(xs[l * inner] - m);
            if (log_form) {
                const float ls = logf(s);
                for (int64_t l = 0; l < L; l++) ys[l * inner] = (xs[l * inner] - m) - ls;
            } else {
                for (int64_t l = 0; l < L; l++) ys[l * inner] = expf(xs[l * inner] - m) / s;
            }
        }
}

void ex_softmax(const ex_plan *p, const par_node *n) { softmax_common(p, n, 0); }
void ex_log_softmax(const ex_plan *p, const par_node *n) { softmax_common(p, n, 1); }

/* ---------------------------------------------------------------------------------------------------------------
 * batch_norm (inference), the direct formula in float: (x - mean) / sqrt(var + eps) * weight + bias. A production
 * backend would fold it into one multiply-add at prepare; the budget allows either form.
 * ------------------------------------------------------------------------------------------------------------- */
void ex_batch_norm(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const float *x = ex_in(p, n, 0), *w = ex_in(p, n, 1), *b = ex_in(p, n, 2);
    const float *mean = ex_in(p, n, 3), *var = ex_in(p, n, 4);
    float *y = ex_out(p, n);
    const float eps = (float)par_attr_float(n, "eps", 1e-5);
    const int64_t C = xv->dims[1], inner = ex_prod(xv->dims, 2, xv->rank);
    for (int64_t i = 0; i < xv->numel; i++) {
        const int64_t c = (i / inner) % C;
        y[i] = (x[i] - mean[c]) / sqrtf(var[c] + eps) * w[c] + b[c];
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * quantize / dequantize: real = scale * (q - zero_point), per tensor, or per channel along quant_axis (zero point 0).
 * ------------------------------------------------------------------------------------------------------------- */
static float qscale(const par_value *v, int64_t i)
{
    if (v->quant_axis < 0 || !v->channel_scales) return v->scale;
    const int64_t inner = ex_prod(v->dims, v->quant_axis + 1, v->rank);
    return v->channel_scales[(i / inner) % v->dims[v->quant_axis]];
}

/* q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax). nearbyintf rounds half to even in the default
 * rounding mode; clamping in float before converting keeps huge quotients from overflowing the conversion. */
void ex_quantize(const ex_plan *p, const par_node *n)
{
    const par_value *yv = ex_out_value(p, n);
    const float *x = ex_in(p, n, 0);
    void *y = p->dst[n->outputs[0]];
    const int is_u8 = yv->dtype == PAR_DTYPE_QU8;
    const float qmin = is_u8 ? 0.0f : -128.0f, qmax = is_u8 ? 255.0f : 127.0f;
    for (int64_t i = 0; i < yv->numel; i++) {
        const float q = clampf(nearbyintf(x[i] / qscale(yv, i)) + (float)yv->zero_point, qmin, qmax);
        if (is_u8) ((uint8_t *)y)[i] = (uint8_t)q;
        else ((int8_t *)y)[i] = (int8_t)q;
    }
}

void ex_dequantize(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const void *x = p->src[n->inputs[0]];
    float *y = ex_out(p, n);
    const int is_u8 = xv->dtype == PAR_DTYPE_QU8;
    for (int64_t i = 0; i < xv->numel; i++) {
        const int32_t q = is_u8 ? ((const uint8_t *)x)[i] : ((const int8_t *)x)[i];
        y[i] = qscale(xv, i) * (float)(q - xv->zero_point);
    }
}
