#version 450
#extension GL_GOOGLE_include_directive : enable
// rope.comp - the rotary position embedding of x (a) by the tables cos (b) and sin (c), [S, D/2] each, plain: one
// work item per pair of the 4-D view [N, C, S, D] (total = numel / 2). Pair i of the row at position p is
// (x[2i], x[2i+1]) when p0.x != 0 (interleaved), else (x[i], x[i + D/2]); y_a = a c - b s, y_b = b c + a s in f32
// in every precision variant (the compiler may contract either into a fused multiply-add: both forms are budgeted).
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    int D = pc.od.w, half_ = D / 2;
    int row = k / half_, i = k % half_;
    ivec4 ia = coords(pc.od, row * D + (pc.p0.x != 0 ? 2 * i : i));
    ivec4 ib = coords(pc.od, row * D + (pc.p0.x != 0 ? 2 * i + 1 : i + half_));
    int t = ia.z * half_ + i; // ia.z: the row's position
    float xa = float(LDA(off(pc.ad, a_nc4(), ia))), xb = float(LDA(off(pc.ad, a_nc4(), ib)));
    float cv = float(LDB(t)), sv = float(LDC(t));
    STO(off(pc.od, out_nc4(), ia), xa * cv - xb * sv);
    STO(off(pc.od, out_nc4(), ib), xb * cv + xa * sv);
}
