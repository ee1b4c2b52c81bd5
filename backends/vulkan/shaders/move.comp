#version 450
#extension GL_GOOGLE_include_directive : enable
// move.comp - data movement, one work item per output element, each read from the input coordinates it maps to
// (values move bit for bit): slice (OP 0: along 4-D axis p0.x, input = p0.y + output * p0.z), permute (OP 1: output
// axis j reads input axis p1[j]), pad (OP 2: p1 the leading pads of the 4 axes, mode p0.x 0 constant f0, 1 reflect,
// 2 replicate), slice_scatter (OP 3: along 4-D axis p0.x, the rows [p0.y, p0.y + bd[p0.x]) read from b, the
// others from a).
#include "common.glsl"

int reflect_(int i, int n)
{
    // docs/ops.md: the mirror image about the edge element (not repeated); pads are below the size, so one fold.
    if (i < 0) return -i;
    if (i >= n) return 2 * (n - 1) - i;
    return i;
}

void main()
{
    int k = work_item();
    if (k >= pc.total) return;
    ivec4 i = coords(pc.od, k);
    ivec4 s = i;
    if (OP == VK_MOVE_SLICE) {
        s[pc.p0.x] = pc.p0.y + i[pc.p0.x] * pc.p0.z;
    } else if (OP == VK_MOVE_SCATTER) {
        int r = i[pc.p0.x] - pc.p0.y;
        if (r >= 0 && r < pc.bd[pc.p0.x]) {
            s[pc.p0.x] = r;
            STO(off(pc.od, out_nc4(), i), LDB(off(pc.bd, b_nc4(), s)));
            return;
        }
    } else if (OP == VK_MOVE_PERMUTE) {
        for (int j = 0; j < 4; j++) s[pc.p1[j]] = i[j];
    } else {
        s = i - pc.p1;
        bool inside = all(greaterThanEqual(s, ivec4(0))) && all(lessThan(s, pc.ad));
        if (!inside) {
            if (pc.p0.x == 0) {
                STO(off(pc.od, out_nc4(), i), pc.f0);
                return;
            }
            for (int j = 0; j < 4; j++)
                s[j] = pc.p0.x == 1 ? reflect_(s[j], pc.ad[j]) : clamp(s[j], 0, pc.ad[j] - 1);
        }
    }
    STO(off(pc.od, out_nc4(), i), LDA(off(pc.ad, a_nc4(), s)));
}
