#version 450
#extension GL_GOOGLE_include_directive : enable
// pool.comp - max (OP 0) and average (OP 1) 2-D pooling, global average pooling as the window of the whole image.
// One work item per output element. p0 = (KH, KW, sh, sw), p1 = (pt, pl, dh, dw), p2 = (pb, pr,
// count_include_pad, -). Max: padding never wins, a NaN in the window propagates. Average: the window is clipped
// to the padded extent [-pt, H + pb) x [-pl, W + pr); the divisor is that clipped area with count_include_pad,
// else the number of in-image elements. OP 2: adaptive average pooling, rows [floor(oh H / OH), ceil((oh + 1) H / OH)),
// likewise columns. The sums in afloat (f16 in the VK_FP16_ARITH variant), the division in f32.
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k);
    int KH = pc.p0.x, KW = pc.p0.y, sh = pc.p0.z, sw = pc.p0.w;
    int pt = pc.p1.x, pl = pc.p1.y, dh = pc.p1.z, dw = pc.p1.w;
    int pb = pc.p2.x, pr = pc.p2.y;
    int H = pc.ad.z, W = pc.ad.w;
    float r;
    if (OP == VK_POOL_MAX) {
        r = uintBitsToFloat(0xff800000u); // -inf
        bool nan = false;
        for (int kh = 0; kh < KH; kh++) {
            int ih = i.z * sh - pt + kh * dh;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; kw++) {
                int iw = i.w * sw - pl + kw * dw;
                if (iw < 0 || iw >= W) continue;
                float v = float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, ih, iw))));
                if (isnan(v) && !nan) { nan = true; r = v; }
                if (!nan && v > r) r = v;
            }
        }
    } else if (OP == VK_POOL_ADAPTIVE_AVG) {
        int hs = (i.z * H) / pc.od.z, he = ((i.z + 1) * H + pc.od.z - 1) / pc.od.z;
        int ws = (i.w * W) / pc.od.w, we = ((i.w + 1) * W + pc.od.w - 1) / pc.od.w;
        afloat s = afloat(0.0);
        for (int ih = hs; ih < he; ih++)
            for (int iw = ws; iw < we; iw++)
                s += LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, ih, iw)));
        r = float(s) / float((he - hs) * (we - ws));
    } else {
        int h0 = i.z * sh - pt, w0 = i.w * sw - pl;
        int h1 = min(h0 + KH, H + pb), w1 = min(w0 + KW, W + pr);
        int pool_area = (h1 - h0) * (w1 - w0);
        int hs = max(h0, 0), ws = max(w0, 0), he = min(h1, H), we = min(w1, W);
        afloat s = afloat(0.0);
        for (int ih = hs; ih < he; ih++)
            for (int iw = ws; iw < we; iw++)
                s += LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, ih, iw)));
        int n = pc.p2.z != 0 ? pool_area : (he - hs) * (we - ws);
        r = float(s) / float(n);
    }
    STO(off(pc.od, out_nc4(), i), r);
}
