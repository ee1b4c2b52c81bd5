#version 450
#extension GL_GOOGLE_include_directive : enable
// conv2d.comp - direct 2-D convolution (groups, stride, padding, dilation, optional bias): one work item per output
// element, the products summed in order (channel, kh, kw) in afloat (f32, or f16 in the VK_FP16_ARITH variant),
// then the bias added. a: x [N,C,H,W]; b: w [O, C/groups, KH, KW] (either layout); c: bias [O].
// p0 = (KH, KW, sh, sw), p1 = (pt, pl, dh, dw), p2 = (groups, has_bias, -, -).
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
    int g0 = (i.y / og) * cg;
    afloat acc = afloat(0.0);
    for (int ci = 0; ci < cg; ci++) {
        for (int kh = 0; kh < KH; kh++) {
            int ih = i.z * sh - pt + kh * dh;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; kw++) {
                int iw = i.w * sw - pl + kw * dw;
                if (iw < 0 || iw >= W) continue;
                afloat x = LDA(off(pc.ad, a_nc4(), ivec4(i.x, g0 + ci, ih, iw)));
                afloat w = LDB(off(pc.bd, b_nc4(), ivec4(i.y, ci, kh, kw)));
                acc += x * w;
            }
        }
    }
    if (pc.p2.y != 0) acc += LDC(i.y);
    STO(off(pc.od, out_nc4(), i), acc);
}
