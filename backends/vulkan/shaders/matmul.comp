#version 450
#extension GL_GOOGLE_include_directive : enable
// matmul.comp - matmul (OP 0: a [..., M, K] x b [..., K, N], batch dims broadcast) and linear (OP 1: x [..., K] and
// w [O, K] read as b [1, 1, O, K], plus bias c [O] when p0.y != 0). One work item per output element, the k
// products summed in order in afloat
// (f16 in the VK_FP16_ARITH variant). p0 = (K, has_bias, -, -).
#include "common.glsl"

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k); // batch0, batch1, m, n
    int K = pc.p0.x;
    ivec4 ia = bcast(i, pc.ad);
    afloat acc = afloat(0.0);
    if (OP == VK_MATMUL_LINEAR) {
        for (int t = 0; t < K; t++)
            acc += LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, i.z, t))) * LDB(i.w * K + t);
        if (pc.p0.y != 0) acc += LDC(i.w);
    } else {
        ivec4 ib = bcast(i, pc.bd);
        for (int t = 0; t < K; t++)
            acc += LDA(off(pc.ad, a_nc4(), ivec4(ia.x, ia.y, i.z, t))) *
                   LDB(off(pc.bd, b_nc4(), ivec4(ib.x, ib.y, t, i.w)));
    }
    STO(off(pc.od, out_nc4(), i), acc);
}
