#version 450
#extension GL_GOOGLE_include_directive : enable
// gemm.comp - matmul and linear as a tiled GEMM through shared memory: out[m, n] = sum_t A[m, t] * B[t, n]
// (+ bias[n]). A workgroup of 64 invocations computes a tile of TM = 32 rows x TN = 32 columns; each invocation a
// register block of 4 rows (strided by 8) x 4 consecutive columns (a vec4). The K loop walks tiles of TK: every
// invocation stores TK / 2 elements of the A tile and of the B tile into shared memory, a barrier, TK rank-1
// updates from shared memory, a barrier. Shared tiles are float whatever the storage type, the
// products and accumulators afloat (f16 in the relaxed variant);
// t is summed in order within each invocation (any order is within the oracle's dot-product budget).
//
// OP 0, matmul: a [B0, B1, M, K] x b [B0', B1', K, N] (batch dims broadcast, either layout), out [B0, B1, M, N]; a
// tile never spans two batches: workgroup y = batch * ceil(N / TN) + column tile.
// OP 1, linear: x [..., K] (its leading dims flattened into the rows, either layout) and w [N, K] plain, read as
// B[t, n] = w[n * K + t]; bias c [N] when p0.y != 0; workgroup y = column tile.
// Workgroup x = row tile. p0 = (K, has_bias, rows per batch, -).
#include "common.glsl"

layout(constant_id = 2) const int TK = 16; // K columns of A (rows of B) per shared tile

const int TM = 32;
const int TN = 32;

shared float as_[TK * TM];
shared float bs_[TK * TN];

void main()
{
    int lid = int(gl_LocalInvocationID.x);
    int tx = lid & 7, ty = lid >> 3;
    int K = pc.p0.x, M = pc.p0.z, N = pc.od.w;
    int ntiles = (N + TN - 1) / TN;
    int batch = int(gl_WorkGroupID.y) / ntiles;
    int n0 = (int(gl_WorkGroupID.y) - batch * ntiles) * TN;
    int m0 = int(gl_WorkGroupID.x) * TM;
    // Output coordinates (x, y) of the batch (matmul); linear flattens od.x * od.y * od.z into the rows.
    ivec2 bo = ivec2(batch / pc.od.y, batch % pc.od.y);

    // The row of A and the column of B this invocation loads (fixed over the K loop); its t rows lid / 32 + 2 r.
    int l = lid & 31, lk = lid >> 5;
    int am = m0 + l, bn = n0 + l;
    bool avalid = am < M, bvalid = bn < N;
    ivec4 ai = ivec4(0); // A's coordinates of row am, t = 0
    ivec2 bb = ivec2(0); // B's batch coordinates
    if (OP == VK_MATMUL_LINEAR) {
        int r = am;
        ai.z = r % pc.od.z; r /= pc.od.z;
        ai.y = r % pc.od.y; ai.x = r / pc.od.y;
    } else {
        ai = ivec4(bcast(ivec4(bo, 0, 0), pc.ad).xy, am, 0);
        bb = bcast(ivec4(bo, 0, 0), pc.bd).xy;
    }

    avec4 acc0 = avec4(0.0), acc1 = avec4(0.0), acc2 = avec4(0.0), acc3 = avec4(0.0);
    for (int k0 = 0; k0 < K; k0 += TK) {
        for (int r = lk; r < TK; r += 2) {
            int t = k0 + r;
            float x = 0.0, y = 0.0;
            if (t < K) {
                if (avalid) x = float(LDA(off(pc.ad, a_nc4(), ivec4(ai.xyz, t))));
                if (bvalid) y = OP == VK_MATMUL_LINEAR ? float(LDB(bn * K + t)) : float(LDB(off(pc.bd, b_nc4(), ivec4(bb, t, bn))));
            }
            as_[r * TM + l] = x;
            bs_[r * TN + l] = y;
        }
        barrier();
        for (int r = 0; r < TK; r++) {
            int bo4 = r * TN + tx * 4;
            avec4 bv = avec4(bs_[bo4], bs_[bo4 + 1], bs_[bo4 + 2], bs_[bo4 + 3]);
            acc0 += afloat(as_[r * TM + ty]) * bv;
            acc1 += afloat(as_[r * TM + ty + 8]) * bv;
            acc2 += afloat(as_[r * TM + ty + 16]) * bv;
            acc3 += afloat(as_[r * TM + ty + 24]) * bv;
        }
        barrier();
    }

    int nc = n0 + tx * 4; // first of this invocation's 4 columns
    vec4 bias = vec4(0.0);
    if (OP == VK_MATMUL_LINEAR && pc.p0.y != 0)
        for (int j = 0; j < 4; j++)
            if (nc + j < N) bias[j] = float(LDC(nc + j));
    vec4 accs[4] = vec4[4](vec4(acc0), vec4(acc1), vec4(acc2), vec4(acc3));
    for (int i = 0; i < 4; i++) {
        int m = m0 + ty + 8 * i;
        if (m >= M) continue;
        ivec3 oi;
        if (OP == VK_MATMUL_LINEAR) {
            int r = m;
            oi.z = r % pc.od.z; r /= pc.od.z;
            oi.y = r % pc.od.y; oi.x = r / pc.od.y;
        } else {
            oi = ivec3(bo, m);
        }
        vec4 v = accs[i] + bias;
        for (int j = 0; j < 4; j++)
            if (nc + j < N) STO(off(pc.od, out_nc4(), ivec4(oi, nc + j)), v[j]);
    }
}
