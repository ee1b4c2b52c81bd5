#version 450
#extension GL_GOOGLE_include_directive : enable
// resize.comp - upsample_bilinear2d (OP 0), upsample_nearest2d (OP 1) and upsample_nearest_exact2d (OP 2) per
// docs/ops.md: one work item per output element. p0.x: align_corners (bilinear); f0, f1: the coordinate ratios r of
// H and W (in / out from the sizes, or 1 / scale), computed by the host in f32 as PyTorch does. PyTorch's same-size
// rule: an axis whose output size equals its input size is copied (bilinear, nearest); nearest also takes dst / 2
// where the output size is twice the input size. OP 3: upsample_bicubic2d (cubic convolution, A = -0.75, taps
// floor(src) - 1 .. floor(src) + 2 clamped to the image, rows along W first, then along H; no same-size rule).
#include "common.glsl"

// Source index pair and weight along one axis.
void src_of(int dst, int in_, int out_, float r, out int i0, out int i1, out float l)
{
    if (in_ == out_) {
        i0 = dst; i1 = dst; l = 0.0;
        return;
    }
    float s;
    if (pc.p0.x != 0) s = out_ > 1 ? float(dst) * float(in_ - 1) / float(out_ - 1) : 0.0;
    else s = max(0.0, (float(dst) + 0.5) * r - 0.5);
    i0 = int(floor(s));
    if (i0 > in_ - 1) i0 = in_ - 1;
    i1 = min(i0 + 1, in_ - 1);
    l = s - float(i0);
}

int nearest_of(int dst, int in_, int out_, float r)
{
    if (OP == VK_RESIZE_NEAREST && in_ == out_) return dst;
    if (OP == VK_RESIZE_NEAREST && out_ == 2 * in_) return dst / 2;
    float s = OP == VK_RESIZE_NEAREST ? float(dst) * r : (float(dst) + 0.5) * r;
    return min(int(floor(s)), in_ - 1);
}

float cc1(float x) { return ((-0.75 + 2.0) * x - (-0.75 + 3.0)) * x * x + 1.0; }
float cc2(float x) { return ((-0.75 * x - 5.0 * -0.75) * x + 8.0 * -0.75) * x - 4.0 * -0.75; }

// Source coordinate of bicubic along one axis (not clamped at 0).
float cubic_src(int dst, int in_, int out_, float r)
{
    if (pc.p0.x != 0) return out_ > 1 ? float(dst) * float(in_ - 1) / float(out_ - 1) : 0.0;
    return (float(dst) + 0.5) * r - 0.5;
}

float bicubic(ivec4 i)
{
    float sh = cubic_src(i.z, pc.ad.z, pc.od.z, pc.f0), sw = cubic_src(i.w, pc.ad.w, pc.od.w, pc.f1);
    float fh = floor(sh), fw = floor(sw);
    float th = sh - fh, tw = sw - fw;
    vec4 wh = vec4(cc2(th + 1.0), cc1(th), cc1(1.0 - th), cc2(2.0 - th));
    vec4 ww = vec4(cc2(tw + 1.0), cc1(tw), cc1(1.0 - tw), cc2(2.0 - tw));
    float acc = 0.0;
    for (int y = 0; y < 4; y++) {
        int h = clamp(int(fh) - 1 + y, 0, pc.ad.z - 1);
        float row = 0.0;
        for (int x = 0; x < 4; x++) {
            int w = clamp(int(fw) - 1 + x, 0, pc.ad.w - 1);
            row += ww[x] * float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, h, w))));
        }
        acc += wh[y] * row;
    }
    return acc;
}

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k);
    if (OP == VK_RESIZE_BICUBIC) {
        STO(off(pc.od, out_nc4(), i), bicubic(i));
        return;
    }
    if (OP != VK_RESIZE_BILINEAR) {
        int h = nearest_of(i.z, pc.ad.z, pc.od.z, pc.f0), w = nearest_of(i.w, pc.ad.w, pc.od.w, pc.f1);
        STO(off(pc.od, out_nc4(), i), LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, h, w))));
        return;
    }
    int h0, h1, w0, w1;
    float lh, lw;
    src_of(i.z, pc.ad.z, pc.od.z, pc.f0, h0, h1, lh);
    src_of(i.w, pc.ad.w, pc.od.w, pc.f1, w0, w1, lw);
    float x00 = float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, h0, w0))));
    float x01 = float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, h0, w1))));
    float x10 = float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, h1, w0))));
    float x11 = float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, h1, w1))));
    STO(off(pc.od, out_nc4(), i), (1.0 - lh) * (1.0 - lw) * x00 + (1.0 - lh) * lw * x01 + lh * (1.0 - lw) * x10 +
                                      lh * lw * x11);
}
