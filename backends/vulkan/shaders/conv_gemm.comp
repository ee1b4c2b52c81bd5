#version 450
#extension GL_GOOGLE_include_directive : enable
// conv_gemm.comp - conv2d as a tiled GEMM through shared memory (implicit im2col). Per group g:
//     out[o, p] = sum_k W[k, o] * X[k, p] (+ bias[o]),  k = (ci, kh, kw) over K = C/groups * KH * KW,
//     p = (n, oh, ow) over P = N * OH * OW,
// the input column X[k, p] gathered on the fly with padding, stride and dilation (zero outside the image).
// A workgroup of 64 invocations computes a tile of TO = 32 output channels x TP = 32 pixels; each invocation a
// register block of 4 channels (a vec4) x 4 pixels (16 float accumulators). The K loop walks tiles of TK rows:
// every invocation stores TK * 64 / 64 elements of the weight tile and of the input tile into shared memory, a
// barrier, then TK rank-1 updates of its block from shared memory, a barrier. Shared tiles are float whatever the
// storage type (LDA/LDB/LDC/STO of common.glsl); the products and accumulators are afloat (f16 in the relaxed
// variant, f32 otherwise); the epilogue runs in f32. Summation order: k in order within each
// invocation, which the oracle's k-term dot-product budget allows in any order (docs/oracle.md).
//
// OP 0: the general gather (any kernel, stride, padding, dilation). OP 1: a 1x1, stride-1, unpadded conv: the
// plain GEMM, k = ci, no bounds or division per element.
//
// a: x [N, C, H, W] (either layout); b: the weights packed at prepare as [groups][KP][OP4] floats (KP = K rounded
// up to TK, OP4 = O/groups rounded up to TO, zeros beyond); c: see p2. od: output dims; ad: input dims.
// p0 = (KH, KW, sh, sw), p1 = (pt, pl, dh, dw), p2 = (groups, epilogue flags, K, OP4), bd.x = KP; f0, f1 the
// clamp; c: the bias, or bias, scale, shift [3][O] (epilogue.glsl).
// Workgroups: x over pixel tiles, y over (group, channel tile): y = g * ceil(OP4 / TO) + tile.
#include "common.glsl"
#include "epilogue.glsl"

layout(constant_id = 2) const int TK = 16; // K rows per shared tile

const int TO = 32; // output channels per workgroup (8 invocation rows x 4)
const int TP = 32; // pixels per workgroup (8 invocation columns x 4, strided by 8)

// Row r of the weight tile: 8 vec4 (channels 4i..4i+3); of the input tile: 8 vec4, vec4 i holding pixels
// i, i + 8, i + 16, i + 24 (an invocation's 4 pixels): one shared load per operand and row.
shared vec4 ws[TK * TO / 4];
shared vec4 xs[TK * TP / 4];

void main()
{
    int lid = int(gl_LocalInvocationID.x);
    int tx = lid & 7, ty = lid >> 3;
    int KH = pc.p0.x, KW = pc.p0.y, sh = pc.p0.z, sw = pc.p0.w;
    int pt = pc.p1.x, pl = pc.p1.y, dh = pc.p1.z, dw = pc.p1.w;
    int groups = pc.p2.x, K = pc.p2.z, OP4 = pc.p2.w, KP = pc.bd.x;
    int OH = pc.od.z, OW = pc.od.w, H = pc.ad.z, W = pc.ad.w;
    int og = pc.od.y / groups, cg = pc.ad.y / groups;
    int otiles = OP4 / TO;
    int g = int(gl_WorkGroupID.y) / otiles;
    int o0 = (int(gl_WorkGroupID.y) - g * otiles) * TO; // first channel of the tile within the group
    int p0 = int(gl_WorkGroupID.x) * TP;
    int P = pc.total;

    // The pixel this invocation gathers for (fixed over the K loop): lid % 32; its K rows lid / 32 + 2 r.
    int lp = lid & 31, lk = lid >> 5;
    int gp = p0 + lp;
    bool pvalid = gp < P;
    int pn = 0, ih0 = 0, iw0 = 0;
    if (pvalid) {
        int ow = gp % OW, t = gp / OW;
        int oh = t % OH;
        pn = t / OH;
        ih0 = oh * sh - pt;
        iw0 = ow * sw - pl;
    }
    int khw = KH * KW;
    int cbase = g * cg;
    int wbase = g * KP * OP4 + o0;

    avec4 acc0 = avec4(0.0), acc1 = avec4(0.0), acc2 = avec4(0.0), acc3 = avec4(0.0);
    for (int k0 = 0; k0 < KP; k0 += TK) {
        for (int r = lk; r < TK; r += 2) {
            int k = k0 + r;
            ws[r * 8 + (lp >> 2)][lp & 3] = float(LDB(wbase + k * OP4 + lp));
            float x = 0.0;
            if (pvalid && k < K) {
                if (OP == VK_CONV_POINTWISE) {
                    x = float(LDA(off(pc.ad, a_nc4(), ivec4(pn, cbase + k, ih0, iw0))));
                } else {
                    int ci = k / khw, rem = k - ci * khw;
                    int kh = rem / KW, kw = rem - kh * KW;
                    int ih = ih0 + kh * dh, iw = iw0 + kw * dw;
                    if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                        x = float(LDA(off(pc.ad, a_nc4(), ivec4(pn, cbase + ci, ih, iw))));
                }
            }
            xs[r * 8 + (lp & 7)][lp >> 3] = x;
        }
        barrier();
        for (int r = 0; r < TK; r++) {
            avec4 w = avec4(ws[r * 8 + ty]), x = avec4(xs[r * 8 + tx]);
            acc0 += w * x.x;
            acc1 += w * x.y;
            acc2 += w * x.z;
            acc3 += w * x.w;
        }
        barrier();
    }

    // Epilogue (vk_ops_tiled.c): flags p2.y: 1 bias c[o], 2 scale c[O + o] and shift c[2 O + o], 4 clamp [f0, f1].
    int flags = pc.p2.y, O = pc.od.y;
    int oc = o0 + ty * 4; // first of this invocation's 4 channels within the group
    vec4 bias = vec4(0.0), scale = vec4(1.0), shift = vec4(0.0);
    for (int l = 0; l < 4; l++) {
        int ch = g * og + oc + l;
        if (oc + l >= og) break;
        if ((flags & 1) != 0) bias[l] = float(LDC(ch));
        if ((flags & 2) != 0) {
            scale[l] = float(LDC(O + ch));
            shift[l] = float(LDC(2 * O + ch));
        }
    }
    vec4 accs[4] = vec4[4](vec4(acc0), vec4(acc1), vec4(acc2), vec4(acc3));
    for (int j = 0; j < 4; j++) {
        int q = p0 + tx + 8 * j;
        if (q >= P) continue;
        int ow = q % OW, t = q / OW;
        int oh = t % OH, n = t / OH;
        vec4 v = epilogue(accs[j], bias, scale, shift, flags);
        for (int l = 0; l < 4; l++)
            if (oc + l < og) STO(off(pc.od, out_nc4(), ivec4(n, g * og + oc + l, oh, ow)), v[l]);
    }
}
