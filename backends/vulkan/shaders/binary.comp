#version 450
#extension GL_GOOGLE_include_directive : enable
// binary.comp - add, sub, mul, div (OP 0..3) with numpy broadcasting: one work item per logical output element,
// each operand read at the broadcast coordinates in its own layout.
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k);
    float x = a[off(pc.ad, a_nc4(), bcast(i, pc.ad))];
    if (OP == 4) {
        float slope = b[pc.bd.w == 1 ? 0 : i[pc.p0.x]];
        o[off(pc.od, out_nc4(), i)] = x >= 0.0 ? x : slope * x;
        return;
    }
    if (OP == 5) {
        int ch = i[pc.p0.x];
        o[off(pc.od, out_nc4(), i)] = x * b[ch] + c[ch];
        return;
    }
    float y = b[off(pc.bd, b_nc4(), bcast(i, pc.bd))];
    float r;
    switch (OP) {
    case 0: r = x + y; break;
    case 1: r = x - y; break;
    case 2: r = x * y; break;
    default: r = x / y; break;
    }
    o[off(pc.od, out_nc4(), i)] = r;
}
