#version 450
#extension GL_GOOGLE_include_directive : enable
// norm.comp - layer_norm (OP 0: weight and bias per position in the slice), group_norm and instance_norm (OP 1:
// per channel, the channel at 4-D axis p0.y) per docs/ops.md: one work item per normalized slice, which is the
// contiguous row-major range [s L, (s + 1) L) of the logical tensor (L = p0.x). Two passes in f32: the mean, then
// the biased variance of x - mean; y = (x - mean) / sqrt(var + eps) * weight + bias (eps = f0; weight b when
// p0.z != 0, bias c when p0.w != 0). rms_norm (OP 2, layer_norm's slices) skips the mean (0) and has no bias:
// y = x / sqrt(mean(x^2) + eps) * weight. In f32 in every precision variant.
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    int L = pc.p0.x;
    int base = k * L;
    float s = 0.0;
    if (OP != VK_NORM_RMS)
        for (int t = 0; t < L; t++) s += float(LDA(off(pc.ad, a_nc4(), coords(pc.ad, base + t))));
    float mean = s / float(L);
    float q = 0.0;
    for (int t = 0; t < L; t++) {
        float d = float(LDA(off(pc.ad, a_nc4(), coords(pc.ad, base + t)))) - mean;
        q += d * d;
    }
    float den = sqrt(q / float(L) + pc.f0);
    for (int t = 0; t < L; t++) {
        ivec4 i = coords(pc.ad, base + t);
        int p = OP != VK_NORM_GROUP ? t : i[pc.p0.y];
        float y = (float(LDA(off(pc.ad, a_nc4(), i))) - mean) / den;
        if (pc.p0.z != 0) y = y * float(LDB(p));
        if (pc.p0.w != 0) y = y + float(LDC(p));
        STO(off(pc.od, out_nc4(), i), y);
    }
}
