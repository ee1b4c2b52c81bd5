#version 450
#extension GL_GOOGLE_include_directive : enable
// sdpa.comp - scaled dot-product attention: q (a, dims ad), k (b, dims bd), v (c, dims p1), the additive mask in slot
// 4 (dims p2, right-aligned; a dimension of 1 broadcasts) when p0.z != 0. One work item per output element
// (b, h, i, d): two passes over the visible keys j (j <= i when p0.x != 0, causal), each recomputing the score
// t_j = (q_i . k_j) f0 + mask: the maximum m, then l = sum_j exp(t_j - m) and acc = sum_j exp(t_j - m) v_j[d];
// y = acc / l (one division at the end: neither the stored probabilities of a decomposed graph nor the streaming
// rescaling of flash attention). Query head h reads key/value head h / p0.y. A row with no visible key is
// exp(-inf - -inf) = NaN, as PyTorch gives. In f32 in every precision variant.
#include "common.glsl"

layout(std430, binding = 4) readonly buffer M { VK_BT m_[]; };

bool c_nc4() { return (pc.lay & 8) != 0; }
bool m_nc4() { return (pc.lay & 16) != 0; }

float score(ivec4 i, int hk, int j)
{
    float s = 0.0;
    for (int t = 0; t < pc.ad.w; t++)
        s += float(LDA(off(pc.ad, a_nc4(), ivec4(i.x, i.y, i.z, t)))) *
             float(LDB(off(pc.bd, b_nc4(), ivec4(i.x, hk, j, t))));
    s *= pc.f0;
    if (pc.p0.z != 0) s += float(m_[off(pc.p2, m_nc4(), bcast(ivec4(i.x, i.y, i.z, j), pc.p2))]);
    return s;
}

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k); // batch, query head, query row, value column
    int hk = i.y / pc.p0.y, n = pc.p0.x != 0 ? min(i.z + 1, pc.bd.z) : pc.bd.z;
    float m = uintBitsToFloat(0xff800000u);
    for (int j = 0; j < n; j++) {
        float t = score(i, hk, j);
        m = (isnan(t) || t > m) ? t : m;
    }
    float l = 0.0, acc = 0.0;
    for (int j = 0; j < n; j++) {
        float w = exp_(score(i, hk, j) - m);
        l += w;
        acc += w * float(LDC(off(pc.p1, c_nc4(), ivec4(i.x, hk, j, i.w))));
    }
    STO(off(pc.od, out_nc4(), i), acc / l);
}
