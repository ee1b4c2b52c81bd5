#version 450
#extension GL_GOOGLE_include_directive : enable
// reduce.comp - sum (OP 0), mean (OP 1) and amax (OP 2) over the 4-D axes whose p0 component is 1: one work item per
// output element, the reduced elements visited in row-major order. The output's row-major index is the same with or
// without keepdims (removing dims of size 1 keeps the order). amax: a NaN among the elements gives NaN. sum and mean add in afloat (f16 in the VK_FP16_ARITH variant),
// mean divides in f32.
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 red = pc.p0;                               // 1: reduced
    ivec4 kd = pc.ad * (ivec4(1) - red) + red;       // input dims with the reduced ones set to 1
    ivec4 base = coords(kd, k);
    ivec4 rn = pc.ad * red + (ivec4(1) - red);       // the extents of the reduced block
    int n = rn.x * rn.y * rn.z * rn.w;
    float acc = uintBitsToFloat(0xff800000u); // amax
    afloat sum = afloat(0.0);
    bool nan = false;
    for (int t = 0; t < n; t++) {
        ivec4 i = base + coords(rn, t);
        if (OP == VK_REDUCE_AMAX) {
            float v = float(LDA(off(pc.ad, a_nc4(), i)));
            if (isnan(v) && !nan) { nan = true; acc = v; }
            if (!nan && v > acc) acc = v;
        } else {
            sum += LDA(off(pc.ad, a_nc4(), i));
        }
    }
    if (OP == VK_REDUCE_SUM) acc = float(sum);
    if (OP == VK_REDUCE_MEAN) acc = float(sum) / float(n);
    STO(off(pc.od, out_nc4(), coords(pc.od, k)), acc);
}
