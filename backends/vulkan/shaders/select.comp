#version 450
#extension GL_GOOGLE_include_directive : enable
// select.comp - ops with integer or boolean operands, which stay plain and raw 32-bit words in buffer c (VK_C_RAW,
// in every precision variant; a bool is one byte, four to a word). One work item per output element.
//   OP 0 where(cond, a, b): y = cond ? a : b, all three broadcast; a, b in slots 1, 2, cond (bytes) in slot 3 with
//        its 4-D dims in p0.
//   OP 1 masked_fill(x, mask): y = mask ? f0 : x; x in slot 1, mask (bytes) in slot 3, dims in p0.
//   OP 2 gather / embedding: y[(p I + i) Q + q] = x[(p A + idx[i]) Q + q], x in slot 1, the i32 indices in slot 3;
//        p1 = (I, A, Q, -).
#define VK_C_RAW
#include "common.glsl"

uint byte_at(int k)
{
    return (c[k >> 2] >> (8 * (k & 3))) & 0xffu;
}

int plain(ivec4 d, ivec4 i)
{
    return ((i.x * d.y + i.y) * d.z + i.z) * d.w + i.w;
}

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k);
    float r;
    if (OP == VK_SELECT_GATHER) {
        int I = pc.p1.x, A = pc.p1.y, Q = pc.p1.z;
        int q = k % Q, pi = k / Q;
        int ii = pi % I, p = pi / I;
        int idx = int(c[ii]);
        r = float(LDA(off(pc.ad, a_nc4(), coords(pc.ad, (p * A + idx) * Q + q))));
    } else {
        bool cond = byte_at(plain(pc.p0, bcast(i, pc.p0))) != 0u;
        if (OP == VK_SELECT_MASKED_FILL) r = cond ? pc.f0 : float(LDA(off(pc.ad, a_nc4(), bcast(i, pc.ad))));
        else r = float(cond ? LDA(off(pc.ad, a_nc4(), bcast(i, pc.ad))) : LDB(off(pc.bd, b_nc4(), bcast(i, pc.bd))));
    }
    STO(off(pc.od, out_nc4(), i), r);
}
