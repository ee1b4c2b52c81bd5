#version 450
#extension GL_GOOGLE_include_directive : enable
// conv_dw.comp - depthwise conv2d (groups == C == O: one filter per channel; any kernel size, stride, padding,
// dilation): one work item per 4 channels (a vec4, the NC4HW4 block) x RW consecutive output pixels of one row.
// Each item keeps RW vec4 accumulators, and reads each tap's 4 weights once for its RW pixels; the taps are summed
// in order (kh, kw) in afloat (f16 in the relaxed variant), then the epilogue (bias, folded batch_norm, clamp) applies. Lanes of channels >= C (padding of the last block) compute on
// whatever the padding holds and are never stored.
//
// a: x [N, C, H, W], NC4HW4 (the lowering checks); b: the weights packed at prepare as [ceil(C/4)][KH*KW][4]
// floats (zeros beyond C); c: the bias, or bias, scale, shift [3][C] (epilogue.glsl). od: output dims; ad: input
// dims. p0 = (KH, KW, sh, sw), p1 = (pt, pl, dh, dw), p2 = (-, epilogue flags, -, -); f0, f1 the clamp. Work items: N * ceil(C/4) * OH * ceil(OW/RW) (pc.total).
#include "common.glsl"
#include "epilogue.glsl"

layout(constant_id = 2) const int RW = 4; // output pixels per work item along a row

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    int KH = pc.p0.x, KW = pc.p0.y, sh = pc.p0.z, sw = pc.p0.w;
    int pt = pc.p1.x, pl = pc.p1.y, dh = pc.p1.z, dw = pc.p1.w;
    int C = pc.od.y, OH = pc.od.z, OW = pc.od.w, H = pc.ad.z, W = pc.ad.w;
    int C4 = (C + 3) / 4;
    int owb = (OW + RW - 1) / RW;
    int bw = k % owb, t = k / owb;
    int oh = t % OH;
    t /= OH;
    int c4 = t % C4, n = t / C4;
    int ow0 = bw * RW;
    int ih0 = oh * sh - pt, iw0 = ow0 * sw - pl;
    int ibase = (n * C4 + c4) * H; // row index of (n, c4, 0) in the NC4HW4 input

    avec4 acc[RW];
    for (int j = 0; j < RW; j++) acc[j] = avec4(0.0);
    for (int kh = 0; kh < KH; kh++) {
        int ih = ih0 + kh * dh;
        if (ih < 0 || ih >= H) continue;
        int rowoff = (ibase + ih) * W;
        for (int kw = 0; kw < KW; kw++) {
            int wo = ((c4 * KH + kh) * KW + kw) * 4;
            avec4 w = avec4(LDB(wo), LDB(wo + 1), LDB(wo + 2), LDB(wo + 3));
            for (int j = 0; j < RW; j++) {
                int iw = iw0 + j * sw + kw * dw;
                if (iw < 0 || iw >= W) continue;
                int xo = (rowoff + iw) * 4;
                acc[j] += w * avec4(LDA(xo), LDA(xo + 1), LDA(xo + 2), LDA(xo + 3));
            }
        }
    }
    int flags = pc.p2.y;
    int nl = min(4, C - c4 * 4); // valid lanes
    vec4 bias = vec4(0.0), scale = vec4(1.0), shift = vec4(0.0);
    for (int l = 0; l < nl; l++) {
        int ch = c4 * 4 + l;
        if ((flags & 1) != 0) bias[l] = float(LDC(ch));
        if ((flags & 2) != 0) {
            scale[l] = float(LDC(C + ch));
            shift[l] = float(LDC(2 * C + ch));
        }
    }
    for (int j = 0; j < RW; j++) {
        int ow = ow0 + j;
        if (ow >= OW) break;
        vec4 v = epilogue(vec4(acc[j]), bias, scale, shift, flags);
        int oo = (((n * C4 + c4) * OH + oh) * OW + ow) * 4;
        for (int l = 0; l < nl; l++) STO(oo + l, v[l]);
    }
}
