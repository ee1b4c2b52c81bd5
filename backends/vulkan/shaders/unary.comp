#version 450
#extension GL_GOOGLE_include_directive : enable
// unary.comp - the elementwise unary ops, one work item per logical element of the output; OP (specialization
// constant 1) picks the function (the VK_UNARY_* numbers of vk_ops.c); f0, f1 are its float parameters. The input
// element is the one of the same row-major index in its own dims, so OP 0 (the identity) is both the layout
// conversion (NCHW <-> NC4HW4) at the graph's edges and reshape / flatten. OP 14 places its input into a slice of
// the output: element i of a goes to i shifted by p0.y along the 4-D axis p0.x (one input of concat). The functions
// compute in f32 in every precision variant (rounded once at the store).
#include "common.glsl"

float expm1_(float x)
{
    // exp(x) - 1 without the cancellation near 0: Taylor series to x^10 for |x| < 0.5 (truncation < 2.8e-10 relative).
    if (abs(x) < 0.5) {
        float s = 1.0 / 3628800.0;
        s = s * x + 1.0 / 362880.0;
        s = s * x + 1.0 / 40320.0;
        s = s * x + 1.0 / 5040.0;
        s = s * x + 1.0 / 720.0;
        s = s * x + 1.0 / 120.0;
        s = s * x + 1.0 / 24.0;
        s = s * x + 1.0 / 6.0;
        s = s * x + 0.5;
        s = s * x + 1.0;
        return s * x;
    }
    return exp_(x) - 1.0;
}

float tanh_(float x)
{
    // tanh(x) = expm1(2x) / (expm1(2x) + 2), and +-1 beyond |x| = 10 (where it is 1 in f32).
    float ax = abs(x);
    if (isnan(x)) return x;
    if (ax > 10.0) return sign(x);
    float e = expm1_(2.0 * ax);
    float t = e / (e + 2.0);
    return x < 0.0 ? -t : t;
}

float sigmoid_(float x)
{
    if (isnan(x)) return x;
    if (x < -88.0) return exp_(x); // 1 / (1 + e^-x) with e^-x beyond f32: e^x (to within its rounding)
    return 1.0 / (1.0 + exp_(-x));
}

// x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), gelu with approximate = none. |x| < 0.7: erf's Taylor series (z^2 < 0.25,
// 9 terms: truncation below 1e-10 relative). Else erfc(z), z = |x| / sqrt 2, by Numerical Recipes' erfcc (relative
// error below 1.2e-7 everywhere): t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), with exp(-z^2) = exp(-x^2 / 2) taken from
// x split into a 12-bit head and its tail, so that the square, whose rounding erfc would amplify by 2 z^2, is exact.
float gelu_erf(float x)
{
    if (isinf(x)) return x > 0.0 ? x : -0.0;
    float ax = abs(x);
    if (ax < 0.7) {
        float z = x * 0.70710678118654752;
        float z2 = z * z;
        // erf(z) = 2 / sqrt(pi) * sum_n (-1)^n z^(2n+1) / (n! (2n+1)), n = 0..8, Horner in z^2.
        float s = 1.0 / 685440.0;
        s = s * z2 - 1.0 / 75600.0;
        s = s * z2 + 1.0 / 9360.0;
        s = s * z2 - 1.0 / 1320.0;
        s = s * z2 + 1.0 / 216.0;
        s = s * z2 - 1.0 / 42.0;
        s = s * z2 + 1.0 / 10.0;
        s = s * z2 - 1.0 / 3.0;
        s = s * z2 + 1.0;
        float erf_ = 1.1283791670955126 * z * s;
        return 0.5 * x * (1.0 + erf_);
    }
    float z = ax * 0.70710678118654752;
    float t = 1.0 / (1.0 + 0.5 * z);
    float p = 0.17087277;
    p = p * t - 0.82215223;
    p = p * t + 1.48851587;
    p = p * t - 1.13520398;
    p = p * t + 0.27886807;
    p = p * t - 0.18628806;
    p = p * t + 0.09678418;
    p = p * t + 0.37409196;
    p = p * t + 1.00002368;
    p = p * t - 1.26551223;
    float xh = uintBitsToFloat(floatBitsToUint(ax) & 0xfffff000u);
    precise float head = -(xh * xh) * 0.5;
    precise float tail = -((ax - xh) * (ax + xh)) * 0.5;
    float erfc_ = t * exp_(head) * exp_(tail + p);
    return x < 0.0 ? 0.5 * x * erfc_ : x - 0.5 * x * erfc_;
}

float f(float x)
{
    if (isnan(x)) return x; // NaN propagates through every op (min, max and comparisons would drop it)
    switch (OP) {
    case VK_UNARY_COPY: return x;
    case VK_UNARY_RELU: return x > 0.0 ? x : 0.0;
    case VK_UNARY_RELU6: return min(max(x, 0.0), 6.0);
    case VK_UNARY_SIGMOID: return sigmoid_(x);
    case VK_UNARY_TANH: return tanh_(x);
    case VK_UNARY_HARDSWISH: return x * min(max(x + 3.0, 0.0), 6.0) / 6.0;
    case VK_UNARY_HARDSIGMOID: return min(max(x + 3.0, 0.0), 6.0) / 6.0;
    case VK_UNARY_GELU_TANH: {  // gelu, approximate = tanh
        if (isinf(x)) return x > 0.0 ? x : -0.0;
        float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh_(u));
    }
    case VK_UNARY_SILU:
        if (isinf(x)) return x > 0.0 ? x : -0.0;
        return x * sigmoid_(x);
    case VK_UNARY_ELU: return x > 0.0 ? x : pc.f0 * expm1_(x);  // elu (alpha = f0)
    case VK_UNARY_LEAKY_RELU: return x >= 0.0 ? x : pc.f0 * x;  // leaky_relu (negative_slope = f0)
    case VK_UNARY_CLAMP: return min(max(x, pc.f0), pc.f1);  // clamp, hardtanh (min f0, max f1)
    case VK_UNARY_SQRT: return sqrt(x);
    case VK_UNARY_RSQRT: return 1.0 / sqrt(x);
    case VK_UNARY_GELU_ERF: return gelu_erf(x);  // gelu, approximate = none
    }
    return x;
}

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    if (OP == VK_UNARY_PLACE) {
        ivec4 i = coords(pc.ad, k);
        afloat v = LDA(off(pc.ad, a_nc4(), i));
        i[pc.p0.x] += pc.p0.y;
        STO(off(pc.od, out_nc4(), i), v);
        return;
    }
    STO(off(pc.od, out_nc4(), coords(pc.od, k)), f(float(LDA(off(pc.ad, a_nc4(), coords(pc.ad, k))))));
}
