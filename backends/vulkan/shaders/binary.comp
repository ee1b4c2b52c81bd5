#version 450
#extension GL_GOOGLE_include_directive : enable
// binary.comp - add, sub, mul, div (OP 0..3) with numpy broadcasting: one work item per logical output element,
// each operand read at the broadcast coordinates in its own layout. OP 4: prelu (slope b per channel p0.x, or one);
// OP 5: x * b[ch] + c[ch] (batch_norm folded at prepare). Arithmetic in afloat (f16 in the VK_FP16_ARITH variant),
// except div, which stays f32 (Vulkan allows f16 division 2.5 ulp; f32 rounded once at the store is within f16's).
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k);
    afloat x = LDA(off(pc.ad, a_nc4(), bcast(i, pc.ad)));
    if (OP == VK_BINARY_PRELU) {
        afloat slope = LDB(pc.bd.w == 1 ? 0 : i[pc.p0.x]);
        STO(off(pc.od, out_nc4(), i), x >= afloat(0.0) ? x : slope * x);
        return;
    }
    if (OP == VK_BINARY_AFFINE) {
        int ch = i[pc.p0.x];
        STO(off(pc.od, out_nc4(), i), x * LDB(ch) + LDC(ch));
        return;
    }
    afloat y = LDB(off(pc.bd, b_nc4(), bcast(i, pc.bd)));
    if (OP == VK_BINARY_DIV) {
        STO(off(pc.od, out_nc4(), i), float(x) / float(y));
        return;
    }
    afloat r;
    switch (OP) {
    case VK_BINARY_ADD: r = x + y; break;
    case VK_BINARY_SUB: r = x - y; break;
    default: r = x * y; break;
    }
    STO(off(pc.od, out_nc4(), i), r);
}
