#version 450
#extension GL_GOOGLE_include_directive : enable
// unary.comp - the elementwise unary ops, one work item per logical element of the output; OP (specialization
// constant 1) picks the function (the VK_UNARY_* numbers of vk_ops.c); f0, f1 are its float parameters. The input
// element is the one of the same row-major index in its own dims, so OP 0 (the identity) is both the layout
// conversion (NCHW <-> NC4HW4) at the graph's edges and reshape / flatten. OP 14 places its input into a slice of
// the output: element i of a goes to i shifted by p0.y along the 4-D axis p0.x (one input of concat).
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

float f(float x)
{
    if (isnan(x)) return x; // NaN propagates through every op (min, max and comparisons would drop it)
    switch (OP) {
    case 0: return x;                                              // copy
    case 1: return x > 0.0 ? x : 0.0;                              // relu
    case 2: return min(max(x, 0.0), 6.0);                          // relu6
    case 3: return sigmoid_(x);                                    // sigmoid
    case 4: return tanh_(x);                                       // tanh
    case 5: return x * min(max(x + 3.0, 0.0), 6.0) / 6.0;          // hardswish
    case 6: return min(max(x + 3.0, 0.0), 6.0) / 6.0;              // hardsigmoid
    case 7: {                                                      // gelu, approximate = tanh
        if (isinf(x)) return x > 0.0 ? x : -0.0;
        float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh_(u));
    }
    case 8:                                                        // silu
        if (isinf(x)) return x > 0.0 ? x : -0.0;
        return x * sigmoid_(x);
    case 9: return x > 0.0 ? x : pc.f0 * expm1_(x);                // elu (alpha = f0)
    case 10: return x >= 0.0 ? x : pc.f0 * x;                      // leaky_relu (negative_slope = f0)
    case 11: return min(max(x, pc.f0), pc.f1);                     // clamp, hardtanh (min f0, max f1)
    case 12: return sqrt(x);                                       // sqrt
    case 13: return 1.0 / sqrt(x);                                 // rsqrt
    }
    return x;
}

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    if (OP == 14) {
        ivec4 i = coords(pc.ad, k);
        float v = a[off(pc.ad, a_nc4(), i)];
        i[pc.p0.x] += pc.p0.y;
        o[off(pc.od, out_nc4(), i)] = v;
        return;
    }
    o[off(pc.od, out_nc4(), coords(pc.od, k))] = f(a[off(pc.ad, a_nc4(), coords(pc.ad, k))]);
}
