/*
 * pool.c - sweep specs of the pools (max_pool2d, avg_pool2d, adaptive_avg_pool2d, global_avg_pool2d) and of mean:
 * kernels 1x1 to 7x7 and 1xk / kx1, strides 1-3, symmetric and asymmetric paddings, dilation (max), ceil_mode and
 * count_include_pad both ways, adaptive windows that divide the input and that do not (and outputs larger than the
 * input), channels and batch, edge values for max_pool2d (exact), quantized pools, and mean over every axis set.
 *
 * It must not encode expected results. Output sizes are computed here only to skip invalid points
 * (docs/ops.md, max_pool2d and avg_pool2d).
 */
#include "sweep_util.h"

enum { P_MAX = 0, P_AVG = 1 };

typedef struct pool_pt {
    int op, n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, ceil, cip, edge, dt;
} pool_pt;

static int pool_out(int in, int k, int s, int d, int p0, int p1, int ceil_mode)
{
    int num = in + p0 + p1 - (d * (k - 1) + 1);
    if (num < 0) return 0;
    int o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p0) o--; /* a window starting in the end padding is dropped */
    return o;
}

static void pool_emit(grid *gr, pool_pt p, int quick)
{
    if (p.op == P_AVG) p.dh = p.dw = 1;
    else p.cip = 0;
    int eh = p.dh * (p.kh - 1) + 1, ew = p.dw * (p.kw - 1) + 1;
    if (p.pt > eh / 2 || p.pb > eh / 2 || p.pl > ew / 2 || p.pr > ew / 2) return;
    int oh = pool_out(p.h, p.kh, p.sh, p.dh, p.pt, p.pb, p.ceil);
    int ow = pool_out(p.w, p.kw, p.sw, p.dw, p.pl, p.pr, p.ceil);
    if (oh < 1 || ow < 1) return;
    int64_t xd[4] = {p.n, p.c, p.h, p.w};
    int64_t macs = (int64_t)p.n * p.c * oh * ow * p.kh * p.kw;
    if (!grid_take(gr, &p, quick, su_numel(4, xd), macs)) return;
    const char *op = p.op == P_MAX ? "max_pool2d" : "avg_pool2d";
    char xs[64], tail[64];
    su_shape(xs, sizeof xs, 4, xd);
    if (p.op == P_MAX)
        snprintf(tail, sizeof tail, "d=[%d,%d],ceil=%d%s", p.dh, p.dw, p.ceil, p.edge ? ",x=edge" : "");
    else
        snprintf(tail, sizeof tail, "ceil=%d,cip=%d", p.ceil, p.cip);
    char dts[16] = "";
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    par_case *c = par_sweep_case(gr->s, op, "%s(in=%s,k=[%d,%d],s=[%d,%d],p=[%d,%d,%d,%d],%s%s)", op, xs, p.kh, p.kw,
                                 p.sh, p.sw, p.pt, p.pl, p.pb, p.pr, tail, dts);
    if (!c) return;
    int64_t k[2] = {p.kh, p.kw}, st[2] = {p.sh, p.sw}, pad[4] = {p.pt, p.pl, p.pb, p.pr}, dil[2] = {p.dh, p.dw};
    par_attr at[5];
    int na = 0;
    at[na++] = par_a_ints("kernel", 2, k);
    at[na++] = par_a_ints("stride", 2, st);
    at[na++] = par_a_ints("padding", 4, pad);
    at[na++] = par_a_int("ceil_mode", p.ceil);
    if (p.op == P_MAX)
        at[na++] = par_a_ints("dilation", 2, dil);
    else
        at[na++] = par_a_int("count_include_pad", p.cip);
    su_unary_graph(c, op, (par_dtype)p.dt, 4, xd, p.edge ? su_edge(4.0) : su_uniform(-1.0, 1.0), na, at);
    par_sweep_done(gr->s, c);
}

static pool_pt pool_base(int op)
{
    pool_pt p;
    memset(&p, 0, sizeof p);
    p.op = op; p.n = 1; p.c = 3; p.h = p.w = 7; p.kh = p.kw = 3; p.sh = p.sw = 2; p.dh = p.dw = 1; p.cip = 1;
    return p;
}

static void pool_grids(grid *gr)
{
    static const int PK[][2] = {{2, 2}, {3, 3}, {3, 2}, {1, 1}, {5, 5}, {1, 3}, {3, 1}, {4, 4}, {7, 7}};
    enum { PKQ = 4, PKN = 9 };
    static const int PS[][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 2}};
    enum { PSQ = 2, PSN = 4 };
    static const int PHW[][2] = {{7, 7}, {8, 9}, {16, 16}, {17, 13}, {32, 31}};
    enum { PHWQ = 2, PHWN = 5 };
    for (int op = 0; op < 2; op++)
        for (int k = 0; k < PKN; k++)
            for (int st = 0; st < PSN; st++)
                for (int pk = 0; pk < 3; pk++)
                    for (int cm = 0; cm < 2; cm++)
                        for (int ci = 0; ci < 2; ci++)
                            for (int d = 1; d <= 2; d++)
                                for (int hw = 0; hw < PHWN; hw++) {
                                    pool_pt p = pool_base(op);
                                    p.kh = PK[k][0]; p.kw = PK[k][1]; p.sh = PS[st][0]; p.sw = PS[st][1];
                                    p.ceil = cm; p.cip = ci; p.dh = p.dw = d; p.h = PHW[hw][0]; p.w = PHW[hw][1];
                                    if ((op == P_MAX && ci == 0) || (op == P_AVG && d == 2)) continue;
                                    /* full: one value outside the quick lists at a time (with every padding and mode) */
                                    if ((k >= PKQ) + (st >= PSQ) + (d > 1) + (hw >= PHWQ) > 1) continue;
                                    if (pk == 1) { p.pt = p.pb = p.kh / 2; p.pl = p.pr = p.kw / 2; }
                                    if (pk == 2) { p.pt = p.kh / 2; p.pr = p.kw / 2; }
                                    if (pk > 0 && !p.pt && !p.pl && !p.pb && !p.pr) continue;
                                    /* count_include_pad only matters with padding or ceil_mode */
                                    if (op == P_AVG && ci == 0 && pk == 0 && !cm) continue;
                                    int q = k < PKQ && st < PSQ && d == 1 && hw < PHWQ && (op == P_MAX || hw == 0 || ci);
                                    pool_emit(gr, p, q);
                                }
    /* Channels and batch. */
    static const int PC[] = {1, 8, 17, 4, 16, 32, 33, 64};
    for (int op = 0; op < 2; op++)
        for (int ci = 0; ci < 8; ci++)
            for (int n = 1; n <= 3; n++) {
                pool_pt p = pool_base(op);
                p.c = PC[ci]; p.n = n; p.h = p.w = 9;
                pool_emit(gr, p, ci < 3 && n < 3);
            }
    /* Edge values (max_pool2d is exact) and quantized forms. */
    for (int k = 0; k < 3; k++)
        for (int st = 1; st <= 2; st++) {
            pool_pt p = pool_base(P_MAX);
            p.kh = p.kw = k + 2; p.sh = p.sw = st; p.edge = 1; p.pt = p.pl = p.pb = p.pr = 1;
            pool_emit(gr, p, 1);
        }
    for (int op = 0; op < 2; op++)
        for (int dt = 0; dt < 2; dt++)
            for (int i = 0; i < 3; i++) {
                pool_pt p = pool_base(op);
                p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
                if (i == 1) { p.c = 8; p.pt = p.pl = p.pb = p.pr = 1; p.h = p.w = 9; }
                if (i == 2) { p.c = 16; p.kh = p.kw = 2; p.h = p.w = 16; }
                pool_emit(gr, p, i < 2);
            }
    /* Quantized avg_pool2d with ceil_mode and count_include_pad = 0: windows of several sizes in one output, so
     * the divisor (and the requantization ratio) varies per output position. */
    static const int QA[][7] = {/* k, s, pad, ceil, cip, h, w */
                                {3, 2, 0, 1, 1, 8, 8}, {3, 2, 1, 0, 0, 7, 7}, {3, 2, 1, 1, 0, 8, 9},
                                {2, 2, 0, 1, 0, 7, 5}, {5, 3, 2, 1, 0, 11, 11}, {3, 1, 1, 0, 0, 6, 6}};
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 6; i++) {
            pool_pt p = pool_base(P_AVG);
            p.kh = p.kw = QA[i][0]; p.sh = p.sw = QA[i][1]; p.pt = p.pl = p.pb = p.pr = QA[i][2];
            p.ceil = QA[i][3]; p.cip = QA[i][4]; p.h = QA[i][5]; p.w = QA[i][6]; p.c = 5;
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            pool_emit(gr, p, 1);
        }
}

/* adaptive_avg_pool2d and global_avg_pool2d */
typedef struct apool_pt {
    int global, n, c, h, w, oh, ow, dt;
    int conv; /* quantized: a 1x1 conv2d first, so that a backend keeping convolutions in NHWC pools there */
} apool_pt;

static void apool_emit(grid *gr, apool_pt p, int quick)
{
    int64_t xd[4] = {p.n, p.c, p.h, p.w};
    if (p.global) p.oh = p.ow = 1;
    int64_t yd[4] = {p.n, p.c, p.oh, p.ow};
    /* each output reads at most ceil(H/OH) + 1 rows and as many columns */
    int64_t macs = su_numel(4, yd) * (p.h / p.oh + 2) * (p.w / p.ow + 2);
    if (!grid_take(gr, &p, quick, su_max64(su_numel(4, xd), su_numel(4, yd)), macs)) return;
    const char *op = p.global ? "global_avg_pool2d" : "adaptive_avg_pool2d";
    char xs[64], dts[48] = "";
    su_shape(xs, sizeof xs, 4, xd);
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    if (p.conv) snprintf(dts + strlen(dts), sizeof dts - strlen(dts), ",after=conv1x1");
    par_case *c = p.global ? par_sweep_case(gr->s, op, "%s(in=%s%s)", op, xs, dts)
                           : par_sweep_case(gr->s, op, "%s(in=%s,out=[%d,%d]%s)", op, xs, p.oh, p.ow, dts);
    if (!c) return;
    int64_t os[2] = {p.oh, p.ow};
    par_attr at[1] = {par_a_ints("output_size", 2, os)};
    int na = p.global ? 0 : 1;
    if (p.conv && p.dt) {
        /* x -> 1x1 conv2d (C -> C, weights and bias as conv.c's quantized cases) -> the pool */
        par_dtype dt = (par_dtype)p.dt;
        int64_t wd[4] = {p.c, p.c, 1, 1}, bd[1] = {p.c};
        float xs_ = 0.0f, ws_ = (float)(1.0 / (100.0 * sqrt((double)p.c)));
        int32_t xz = 0, in[3] = {-1, -1, -1};
        su_qparams(dt, -1.0, 1.0, &xs_, &xz);
        in[0] = su_qinput(c, "x", dt, 4, xd, -1.0, 1.0);
        su_qweights(c, dt, 0, 0, p.c, 4, wd, ws_, dt == PAR_DTYPE_QU8 ? 128 : 0, xs_, 1, bd, in);
        par_out_spec oc = su_qout_spec("h_q", dt, -2.0, 2.0), oy = su_qout_spec("y_q", dt, -2.0, 2.0);
        int32_t h = par_case_node(c, "conv2d", 3, in, 0, NULL, &oc);
        su_qoutput(c, par_case_node(c, op, 1, &h, na, at, &oy));
    } else {
        su_unary_graph(c, op, (par_dtype)p.dt, 4, xd, su_uniform(-1.0, 1.0), na, at);
    }
    par_sweep_done(gr->s, c);
}

static void apool_grids(grid *gr)
{
    static const int IN[][2] = {{7, 7}, {8, 8}, {9, 13}, {16, 16}, {14, 14}, {33, 17}, {1, 1}, {2, 5}};
    enum { INQ = 3, INN = 8 };
    static const int OUT[][2] = {{1, 1}, {2, 2}, {3, 3}, {5, 7}, {4, 2}, {10, 10}, {6, 6}, {7, 7}, {1, 4}, {13, 9}};
    enum { OUTQ = 6, OUTN = 10 };
    for (int i = 0; i < INN; i++)
        for (int o = 0; o < OUTN; o++)
            for (int c = 0; c < 2; c++) {
                apool_pt p = {0, 1, c ? 17 : 3, IN[i][0], IN[i][1], OUT[o][0], OUT[o][1], 0, 0};
                apool_emit(gr, p, i < INQ && o < OUTQ && !c);
            }
    static const int GS[][4] = {{1, 3, 7, 7},   {1, 8, 1, 1},   {2, 16, 5, 5},  {1, 17, 9, 9},   {1, 32, 3, 4},
                                {1, 1, 16, 16}, {1, 4, 1, 33},  {3, 5, 8, 8},   {1, 1280, 7, 7}, {1, 64, 56, 56},
                                {2, 96, 14, 14}, {1, 576, 1, 1}, {1, 33, 17, 31}};
    enum { GQ = 8, GN = 13 };
    for (int i = 0; i < GN; i++) {
        apool_pt p = {1, GS[i][0], GS[i][1], GS[i][2], GS[i][3], 1, 1, 0, 0};
        apool_emit(gr, p, i < GQ);
    }
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 3; i++) {
            apool_pt p = {1, GS[i][0], GS[i][1], GS[i][2], GS[i][3], 1, 1, dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8, 0};
            apool_emit(gr, p, 1);
        }
    /* Quantized adaptive pools: windows that divide the input and that do not (sizes vary per output), outputs
     * larger than the input. */
    static const int QAP[][4] = {{7, 7, 3, 3}, {9, 13, 5, 7}, {8, 8, 2, 2}, {2, 5, 4, 3}, {16, 16, 6, 6}, {33, 17, 7, 7}};
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 6; i++) {
            apool_pt p = {0, 1, 4, QAP[i][0], QAP[i][1], QAP[i][2], QAP[i][3], dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8, 0};
            apool_emit(gr, p, 1);
        }
    /* The same after a 1x1 convolution (its output in NHWC on qnnpack), and a global pool over many channels. */
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 4; i++) {
            apool_pt p = {i == 3, 1 + (i == 1), i == 3 ? 40 : 6, QAP[i][0], QAP[i][1], QAP[i][2], QAP[i][3],
                          dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8, 1};
            apool_emit(gr, p, 1);
        }
}

void par_sweep_pool(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(pool_pt));
    pool_grids(&gr);
    grid_free(&gr);
    grid_init(&gr, s, sizeof(apool_pt));
    apool_grids(&gr);
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * mean
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct mean_pt {
    int rank, d[4], naxes, axes[4], keep, dt;
} mean_pt;

static void mean_emit(grid *gr, mean_pt p, int quick)
{
    int64_t xd[4], ax[4];
    for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
    for (int i = 0; i < p.naxes; i++) ax[i] = p.axes[i];
    if (!grid_take(gr, &p, quick, su_numel(p.rank, xd), su_numel(p.rank, xd))) return;
    char xs[64], as[64];
    su_shape(xs, sizeof xs, p.rank, xd);
    su_shape(as, sizeof as, p.naxes, ax);
    char dts[16] = "";
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    par_case *c = par_sweep_case(gr->s, "mean", "mean(x=%s,axes=%s,keepdims=%d%s)", xs, as, p.keep, dts);
    if (!c) return;
    par_attr at[2] = {par_a_ints("axes", p.naxes, ax), par_a_int("keepdims", p.keep)};
    su_unary_graph(c, "mean", (par_dtype)p.dt, p.rank, xd, su_uniform(-1.0, 1.0), 2, at);
    par_sweep_done(gr->s, c);
}

void par_sweep_mean(par_sweep *s)
{
    static const int MSH[][5] = {{1, 7}, {2, 4, 9}, {3, 2, 3, 5}, {4, 2, 3, 4, 5}, {4, 1, 16, 7, 7},
                                 {1, 1000}, {2, 33, 17}, {3, 8, 1, 31}, {4, 2, 32, 14, 14}, {4, 1, 3, 64, 64}};
    enum { MQ = 5, MN = 10 };
    grid gr;
    grid_init(&gr, s, sizeof(mean_pt));
    for (int sh = 0; sh < MN; sh++) {
        int r = MSH[sh][0];
        /* every non-empty subset of the axes (at most 15 for rank 4), negative spelling for the last axis alone */
        for (int mask = 1; mask < (1 << r); mask++)
            for (int keep = 0; keep < 2; keep++)
                for (int neg = 0; neg < 2; neg++) {
                    mean_pt p;
                    memset(&p, 0, sizeof p);
                    p.rank = r; p.keep = keep;
                    for (int i = 0; i < r; i++) p.d[i] = MSH[sh][1 + i];
                    if (neg && mask != (1 << (r - 1))) continue;
                    for (int i = 0; i < r; i++)
                        if (mask >> i & 1) p.axes[p.naxes++] = neg ? i - r : i;
                    int pop = p.naxes;
                    /* quick: single axes, the trailing pair (spatial), all axes */
                    int q = sh < MQ && (pop == 1 || (r >= 2 && mask == (3 << (r - 2))) || mask == (1 << r) - 1) && (keep || r < 4);
                    mean_emit(&gr, p, q);
                }
    }
    /* Quantized: spatial means (the SE blocks of MobileNetV3), one axis, every axis, counts that are not powers of
     * two. */
    static const int QMN[][7] = {/* rank, d0..d3, axes mask, keepdims */
                                 {4, 1, 8, 7, 7, 12, 1}, {4, 2, 3, 5, 4, 12, 0}, {2, 4, 9, 2, 0}, {3, 2, 3, 5, 7, 1},
                                 {4, 1, 16, 14, 14, 12, 1}, {1, 1000, 1, 0}};
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 6; i++) {
            mean_pt p;
            memset(&p, 0, sizeof p);
            p.rank = QMN[i][0];
            for (int k = 0; k < p.rank; k++) p.d[k] = QMN[i][1 + k];
            int mask = QMN[i][1 + p.rank];
            p.keep = QMN[i][2 + p.rank];
            for (int k = 0; k < p.rank; k++)
                if (mask >> k & 1) p.axes[p.naxes++] = k;
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            mean_emit(&gr, p, 1);
        }
    grid_free(&gr);
}
