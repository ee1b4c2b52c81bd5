#version 450
#extension GL_GOOGLE_include_directive : enable
// deconv2d.comp - conv_transpose2d per docs/ops.md, as a gather: one work item per output element (n, o, oh, ow)
// sums x[n, c, ih, iw] * w[c, o - og0, kh, kw] over the channels c of o's group and the taps with
// ih * sh = oh + pt - kh * dh (likewise iw) inside the input, in order (c, kh, kw) in afloat (f16 in the VK_FP16_ARITH variant), then adds the bias.
// a: x; b: w [C, O/groups, KH, KW] (either layout); c: bias [O]. p0 = (KH, KW, sh, sw), p1 = (pt, pl, dh, dw),
// p2 = (groups, has_bias, -, -).
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k); // n, o, oh, ow
    int KH = pc.p0.x, KW = pc.p0.y, sh = pc.p0.z, sw = pc.p0.w;
    int pt = pc.p1.x, pl = pc.p1.y, dh = pc.p1.z, dw = pc.p1.w;
    int groups = pc.p2.x;
    int H = pc.ad.z, W = pc.ad.w;
    int cg = pc.ad.y / groups;
    int og = pc.od.y / groups;
    int g = i.y / og;
    int oo = i.y - g * og;
    afloat acc = afloat(0.0);
    for (int ci = 0; ci < cg; ci++) {
        int ch = g * cg + ci;
        for (int kh = 0; kh < KH; kh++) {
            int th = i.z + pt - kh * dh;
            if (th < 0 || th % sh != 0) continue;
            int ih = th / sh;
            if (ih >= H) continue;
            for (int kw = 0; kw < KW; kw++) {
                int tw = i.w + pl - kw * dw;
                if (tw < 0 || tw % sw != 0) continue;
                int iw = tw / sw;
                if (iw >= W) continue;
                acc += LDA(off(pc.ad, a_nc4(), ivec4(i.x, ch, ih, iw))) * LDB(off(pc.bd, b_nc4(), ivec4(ch, oo, kh, kw)));
            }
        }
    }
    if (pc.p2.y != 0) acc += LDC(i.y);
    STO(off(pc.od, out_nc4(), i), acc);
}
