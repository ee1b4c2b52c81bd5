#version 450
#extension GL_GOOGLE_include_directive : enable
// softmax.comp - softmax (OP 0) and log_softmax (OP 1) along axis p0.x of the 4-D view: one work item per slice
// (every coordinate but the axis), in three passes over it: the max, the sum of exp(x - max), the outputs
// exp(x - max) / sum, or (x - max) - log(sum). In f32 in every precision variant.
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    int ax = pc.p0.x;
    ivec4 rd = pc.od;
    int L = rd[ax];
    rd[ax] = 1;
    ivec4 i = coords(rd, k);
    float m = uintBitsToFloat(0xff800000u);
    for (int t = 0; t < L; t++) {
        i[ax] = t;
        float v = float(LDA(off(pc.ad, a_nc4(), i)));
        m = (isnan(v) || v > m) ? v : m; // a NaN in the row makes m NaN (then every output)
    }
    float s = 0.0;
    for (int t = 0; t < L; t++) {
        i[ax] = t;
        s += exp_(float(LDA(off(pc.ad, a_nc4(), i))) - m);
    }
    float ls = log(s);
    for (int t = 0; t < L; t++) {
        i[ax] = t;
        float x = float(LDA(off(pc.ad, a_nc4(), i))) - m;
        STO(off(pc.od, out_nc4(), i), OP == VK_SOFTMAX_SOFTMAX ? exp_(x) / s : x - ls);
    }
}
