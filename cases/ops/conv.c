/*
 * conv.c - sweep specs of conv2d and conv_transpose2d: geometry (kernels 1x1, 2x2, 3x3, 5x5, 1xk, kx1, strides 1-3
 * and asymmetric, explicit symmetric and asymmetric paddings, same and valid modes, dilations 1-2, and 4-18 as in DeepLabV3's ASPP), channel counts
 * below, at and above the vector widths, groups (depthwise with multiplier 1 and 2, grouped), batch > 1, no bias,
 * layer shapes of real networks (full only), and quantize -> conv2d -> dequantize graphs (qu8, qs8).
 *
 * It must not encode expected results: cases carry inputs and attributes only; the reference decides the values.
 * Output sizes are computed here only to skip grid points that are invalid or too large (docs/ops.md, conv2d).
 */
#include "sweep_util.h"

enum { PM_EXPLICIT = 0, PM_SAME = 1, PM_VALID = 2 };

/* A conv2d grid point (ints only: no padding bytes). dt: 0 f32, else the quantized dtype. */
typedef struct conv_pt {
    int n, c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g, bias, mode, dt, pc;
} conv_pt;

/* Output size along one dimension (docs/ops.md); <= 0 when the point is invalid. */
static int conv_out(int in, int k, int s, int d, int p0, int p1, int mode)
{
    int ext = d * (k - 1) + 1;
    if (mode == PM_SAME) return (in + s - 1) / s;
    if (mode == PM_VALID) return in >= ext ? (in - ext) / s + 1 : 0;
    int num = in + p0 + p1 - ext;
    return num >= 0 ? num / s + 1 : 0;
}

static void conv_emit(grid *gr, conv_pt p, int quick)
{
    if (p.mode != PM_EXPLICIT) p.pt = p.pl = p.pb = p.pr = 0;
    if (p.c % p.g || p.o % p.g) return;
    int oh = conv_out(p.h, p.kh, p.sh, p.dh, p.pt, p.pb, p.mode);
    int ow = conv_out(p.w, p.kw, p.sw, p.dw, p.pl, p.pr, p.mode);
    if (oh < 1 || ow < 1) return;
    int64_t xd[4] = {p.n, p.c, p.h, p.w}, wd[4] = {p.o, p.c / p.g, p.kh, p.kw}, yd[4] = {p.n, p.o, oh, ow};
    int64_t macs = su_numel(4, yd) * wd[1] * p.kh * p.kw;
    int64_t big = su_max64(su_max64(su_numel(4, xd), su_numel(4, wd)), su_numel(4, yd));
    if (!grid_take(gr, &p, quick, big, macs)) return;

    char xs[64], ws[64], pad[64], dts[16] = "";
    su_shape(xs, sizeof xs, 4, xd);
    su_shape(ws, sizeof ws, 4, wd);
    if (p.mode == PM_SAME)
        snprintf(pad, sizeof pad, "same");
    else if (p.mode == PM_VALID)
        snprintf(pad, sizeof pad, "valid");
    else
        snprintf(pad, sizeof pad, "[%d,%d,%d,%d]", p.pt, p.pl, p.pb, p.pr);
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s%s", su_dt((par_dtype)p.dt), p.pc ? ",w=qs8/pc" : "");
    par_case *c = par_sweep_case(gr->s, "conv2d", "conv2d(in=%s,w=%s,s=[%d,%d],p=%s,d=[%d,%d],g=%d,bias=%d%s)", xs, ws,
                                 p.sh, p.sw, pad, p.dh, p.dw, p.g, p.bias, dts);
    if (!c) return;

    int64_t stride[2] = {p.sh, p.sw}, padding[4] = {p.pt, p.pl, p.pb, p.pr}, dil[2] = {p.dh, p.dw};
    par_attr at[5];
    int na = 0;
    at[na++] = par_a_ints("stride", 2, stride);
    at[na++] = par_a_ints("dilation", 2, dil);
    at[na++] = par_a_int("groups", p.g);
    if (p.mode == PM_EXPLICIT)
        at[na++] = par_a_ints("padding", 4, padding);
    else
        at[na++] = par_a_str("pad_mode", p.mode == PM_SAME ? "same" : "valid");
    int32_t in[3] = {-1, -1, -1};
    int64_t bd[1] = {p.o};
    if (!p.dt) {
        in[0] = par_case_input(c, "x", PAR_DTYPE_F32, 4, xd, su_uniform(-1.0, 1.0));
        in[1] = par_case_const(c, "w", PAR_DTYPE_F32, 4, wd, su_weight());
        if (p.bias) in[2] = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5));
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, "conv2d", p.bias ? 3 : 2, in, na, at, &o));
    } else {
        /* Weights q uniform in [-100, 100] around the zero point, real range +-1/sqrt(fan_in); the bias is i32 at
         * scale x_scale * w_scale with real range +-0.1. The real result then stays mostly within [-2, 2], the
         * output's range (rare tails saturate, deterministically). */
        par_dtype dt = (par_dtype)p.dt;
        int32_t fan_in = (p.c / p.g) * p.kh * p.kw;
        float xs_ = 0.0f, ws_ = (float)(1.0 / (100.0 * sqrt((double)fan_in)));
        /* pc: qs8 weights with per-output-channel scales (axis 0), zero point 0, as PyTorch and TFLite quantize */
        int32_t xz = 0, wz = dt == PAR_DTYPE_QU8 && !p.pc ? 128 : 0;
        su_qparams(dt, -1.0, 1.0, &xs_, &xz);
        in[0] = su_qinput(c, "x", dt, 4, xd, -1.0, 1.0);
        su_qweights(c, dt, p.pc, 0, p.o, 4, wd, ws_, wz, xs_, p.bias, bd, in);
        par_out_spec o = su_qout_spec("y_q", dt, -2.0, 2.0);
        su_qoutput(c, par_case_node(c, "conv2d", p.bias ? 3 : 2, in, na, at, &o));
    }
    par_sweep_done(gr->s, c);
}

/* Lists: the first `q` entries of each are in the quick grid, the rest only in full. */
static const int K[][2] = {{1, 1}, {3, 3}, {5, 5}, {1, 3}, {3, 1}, {2, 2}, {1, 5}, {5, 1}, {7, 7}, {1, 7}, {4, 4}};
enum { KQ = 6, KN = 11 };
static const int S[][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 2}, {2, 1}};
enum { SQ = 3, SN = 5 };
static const int D[][2] = {{1, 1}, {2, 2}, {1, 2}};
enum { DQ = 2, DN = 3 };
static const int HW[][2] = {{7, 7}, {9, 8}, {13, 17}, {16, 16}};
enum { HWQ = 2, HWN = 3 };
/* padding kinds: 0 none, 1 symmetric (extent / 2), 2 asymmetric [1,0,0,1], 3 same, 4 valid, 5 asymmetric [0,2,1,0] */
enum { PQ = 5, PN = 6 };
static const int CH[] = {1, 2, 3, 4, 7, 8, 9, 16, 17, 5, 15, 31, 32, 33, 64};
enum { CHQ = 9, CHN = 15 };
static const int OC[] = {1, 4, 7, 8, 9, 16, 17, 32, 3, 15, 31, 33, 64};
enum { OCQ = 8, OCN = 13 };

static void set_pad(conv_pt *p, int kind)
{
    int eh = p->dh * (p->kh - 1) + 1, ew = p->dw * (p->kw - 1) + 1;
    p->mode = PM_EXPLICIT;
    p->pt = p->pl = p->pb = p->pr = 0;
    switch (kind) {
    case 1: p->pt = p->pb = eh / 2; p->pl = p->pr = ew / 2; break;
    case 2: p->pt = 1; p->pr = 1; break;
    case 3: p->mode = PM_SAME; break;
    case 4: p->mode = PM_VALID; break;
    case 5: p->pl = 2; p->pb = 1; break;
    default: break;
    }
}

static conv_pt conv_base(void)
{
    conv_pt p;
    memset(&p, 0, sizeof p);
    p.n = 1; p.c = 3; p.o = 5; p.h = p.w = 7; p.kh = p.kw = 3; p.sh = p.sw = 1; p.dh = p.dw = 1; p.g = 1; p.bias = 1;
    return p;
}

/* Geometry: kernel x stride x padding x dilation x spatial size, at 3 -> 5 channels. */
static void sweep_geometry(grid *gr)
{
    for (int k = 0; k < KN; k++)
        for (int st = 0; st < SN; st++)
            for (int pk = 0; pk < PN; pk++)
                for (int d = 0; d < DN; d++)
                    for (int hw = 0; hw < HWN; hw++) {
                        conv_pt p = conv_base();
                        p.kh = K[k][0]; p.kw = K[k][1]; p.sh = S[st][0]; p.sw = S[st][1];
                        p.dh = D[d][0]; p.dw = D[d][1]; p.h = HW[hw][0]; p.w = HW[hw][1];
                        if (p.kh == 1 && p.kw == 1 && d > 0) continue; /* dilation means nothing for 1x1 */
                        /* full: every pair of values outside the quick lists, not every triple */
                        if ((k >= KQ) + (st >= SQ) + (pk >= PQ) + (d >= DQ) + (hw >= HWQ) > 2) continue;
                        set_pad(&p, pk);
                        conv_emit(gr, p, k < KQ && st < SQ && pk < PQ && d < DQ && hw < HWQ);
                    }
}

/* Large dilations: DeepLabV3's ASPP branches (3x3, dilation 6 / 12 / 18, padding = dilation, so the output keeps
 * the input's size) on inputs larger than the dilated extent, plain and depthwise; 4 to 6 in quick, with the
 * padding dilation (same size), none (valid) and 1 (taps mostly in the padding on one side). */
static void sweep_dilations(grid *gr)
{
    static const int DL[][4] = {/* dilation h, w, input size, channels */
                                {4, 4, 11, 3}, {5, 5, 13, 4}, {4, 2, 12, 3}, {6, 6, 33, 8}, {12, 12, 33, 8},
                                {18, 18, 45, 16}, {6, 12, 40, 4}, {12, 12, 65, 4}, {18, 18, 65, 2}};
    enum { DLQ = 4, DLN = 9 };
    for (int i = 0; i < DLN; i++)
        for (int pk = 0; pk < 3; pk++)
            for (int dw = 0; dw < 2; dw++) {
                conv_pt p = conv_base();
                p.dh = DL[i][0]; p.dw = DL[i][1]; p.h = p.w = DL[i][2]; p.c = DL[i][3]; p.o = dw ? p.c : 5;
                if (dw) p.g = p.c;
                if (pk == 0) { p.pt = p.pb = p.dh; p.pl = p.pr = p.dw; }
                if (pk == 2) p.pt = p.pl = p.pb = p.pr = 1;
                conv_emit(gr, p, i < DLQ && (pk == 0 || !dw));
            }
}

/* Channels: 3x3 (pad 1) and 1x1 (a GEMM) kernels over channel counts around the vector widths. */
static void sweep_channels(grid *gr)
{
    for (int k = 0; k < 2; k++)
        for (int ci = 0; ci < CHN; ci++)
            for (int oi = 0; oi < OCN; oi++)
                for (int hw = 0; hw < 2; hw++) {
                    conv_pt p = conv_base();
                    p.c = CH[ci]; p.o = OC[oi];
                    p.kh = p.kw = k ? 1 : 3;
                    p.h = p.w = hw ? 9 : 5;
                    set_pad(&p, k ? 0 : 1);
                    conv_emit(gr, p, ci < CHQ && oi < OCQ && hw == 0);
                }
}

/* Depthwise (groups = C) with multiplier 1 and 2. */
static void sweep_depthwise(grid *gr)
{
    static const int DWC[] = {1, 3, 8, 9, 17, 2, 4, 7, 15, 16, 24, 32, 33};
    enum { DWQ = 5, DWN = 13 };
    static const int DWK[][2] = {{3, 3}, {5, 5}, {3, 1}, {1, 3}};
    for (int ci = 0; ci < DWN; ci++)
        for (int m = 1; m <= 2; m++)
            for (int k = 0; k < 4; k++)
                for (int st = 1; st <= 2; st++)
                    for (int pk = 0; pk < 4; pk++)
                        for (int d = 1; d <= 2; d++) {
                            static const int kinds[4] = {1, 3, 0, 2};
                            conv_pt p = conv_base();
                            p.c = DWC[ci]; p.g = p.c; p.o = p.c * m;
                            p.kh = DWK[k][0]; p.kw = DWK[k][1]; p.sh = p.sw = st; p.dh = p.dw = d;
                            p.h = p.w = 9 + 7 * (d - 1);
                            set_pad(&p, kinds[pk]);
                            if ((ci >= DWQ) + (k >= 2) + (pk >= 2) + (d == 2) > 2) continue;
                            conv_emit(gr, p, ci < DWQ && k < 2 && pk < 2 && d == 1);
                        }
}

/* Grouped (non-depthwise): groups 2-4, channels per group 1-8. */
static void sweep_grouped(grid *gr)
{
    static const int CPG[] = {1, 2, 3, 4, 5, 8};
    static const int OPG[] = {1, 2, 4, 3, 5};
    for (int g = 2; g <= 4; g++)
        for (int ci = 0; ci < 6; ci++)
            for (int oi = 0; oi < 5; oi++)
                for (int st = 1; st <= 2; st++) {
                    conv_pt p = conv_base();
                    p.g = g; p.c = g * CPG[ci]; p.o = g * OPG[oi]; p.sh = p.sw = st;
                    set_pad(&p, 1);
                    conv_emit(gr, p, ci < 3 && oi < 3 && st == 1);
                }
}

/* Batch > 1 over three layer kinds. */
static void sweep_batch(grid *gr)
{
    for (int n = 2; n <= 5; n++)
        for (int kind = 0; kind < 3; kind++)
            for (int hw = 0; hw < 2; hw++) {
                conv_pt p = conv_base();
                p.n = n;
                p.h = p.w = hw ? 12 : 7;
                if (kind == 0) { p.c = 3; p.o = 8; set_pad(&p, 1); }
                if (kind == 1) { p.c = 8; p.o = 4; p.kh = p.kw = 1; set_pad(&p, 0); }
                if (kind == 2) { p.c = 8; p.o = 8; p.g = 8; p.sh = p.sw = 2; set_pad(&p, 3); }
                conv_emit(gr, p, n <= 3 && hw == 0);
            }
}

/* Without bias. */
static void sweep_no_bias(grid *gr)
{
    static const int NB[][5] = {{3, 5, 3, 1, 1}, {8, 8, 3, 1, 1}, {3, 5, 1, 1, 0}, {16, 16, 1, 1, 0},
                                {3, 5, 5, 2, 2}, {8, 8, 3, 2, 1}, {17, 9, 3, 1, 1}, {8, 16, 5, 1, 2}};
    for (int i = 0; i < 8; i++)
        for (int dw = 0; dw < 2; dw++) {
            conv_pt p = conv_base();
            p.c = NB[i][0]; p.o = NB[i][1]; p.kh = p.kw = NB[i][2]; p.sh = p.sw = NB[i][3];
            p.pt = p.pl = p.pb = p.pr = NB[i][4];
            p.bias = 0;
            if (dw) { p.g = p.c; p.o = p.c; }
            conv_emit(gr, p, 1);
        }
}

/* Layer shapes of real networks (MobileNet, ResNet stems and blocks); the size gates keep them to full. */
static void sweep_networks(grid *gr)
{
    static const int NET[][9] = {
        /* c, h, o, k, s, pad, groups, bias, - */
        {3, 112, 16, 3, 2, 1, 1, 1, 0},   {16, 56, 16, 3, 1, 1, 16, 1, 0}, {16, 56, 32, 1, 1, 0, 1, 1, 0},
        {32, 28, 32, 3, 1, 1, 32, 1, 0},  {32, 28, 32, 1, 1, 0, 1, 0, 0},  {16, 28, 16, 3, 1, 1, 1, 1, 0},
        {64, 14, 64, 1, 1, 0, 1, 1, 0},   {64, 14, 64, 3, 2, 1, 64, 1, 0}, {96, 14, 24, 1, 1, 0, 1, 1, 0},
        {3, 64, 8, 7, 2, 3, 1, 0, 0},     {24, 28, 144, 1, 1, 0, 1, 1, 0}, {144, 28, 144, 3, 2, 1, 144, 1, 0},
        {8, 56, 8, 3, 1, 1, 1, 1, 0},     {1, 96, 4, 5, 1, 2, 1, 1, 0},    {32, 20, 48, 3, 1, 1, 1, 1, 0},
    };
    for (int i = 0; i < (int)(sizeof NET / sizeof NET[0]); i++) {
        conv_pt p = conv_base();
        p.c = NET[i][0]; p.h = p.w = NET[i][1]; p.o = NET[i][2]; p.kh = p.kw = NET[i][3];
        p.sh = p.sw = NET[i][4]; p.pt = p.pl = p.pb = p.pr = NET[i][5]; p.g = NET[i][6]; p.bias = NET[i][7];
        conv_emit(gr, p, 0);
    }
}

/* Quantized: quantize -> conv2d -> dequantize, qu8 and qs8. */
static void sweep_quantized(grid *gr)
{
    static const int QC[][8] = {
        /* c, o, k, s, pad kind, groups, bias, h */
        {3, 5, 3, 1, 1, 1, 1, 7}, {8, 8, 1, 1, 0, 1, 1, 6}, {8, 8, 3, 2, 1, 8, 1, 9}, {16, 4, 3, 2, 3, 1, 1, 8},
        {5, 7, 3, 1, 0, 1, 0, 7}, {4, 8, 3, 1, 1, 4, 1, 7}, {17, 9, 3, 1, 2, 1, 1, 7}, {32, 16, 1, 1, 0, 1, 1, 8},
        {6, 6, 5, 1, 1, 2, 1, 9}, {3, 16, 3, 2, 4, 1, 1, 15},
    };
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 10; i++) {
            conv_pt p = conv_base();
            p.c = QC[i][0]; p.o = QC[i][1]; p.kh = p.kw = QC[i][2]; p.sh = p.sw = QC[i][3];
            p.g = QC[i][5]; p.bias = QC[i][6]; p.h = p.w = QC[i][7];
            set_pad(&p, QC[i][4]);
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            conv_emit(gr, p, i < 6);
        }
    /* Quantized, per-channel qs8 weights (dense, grouped, depthwise 3x3 and 5x5) and depthwise 5x5 per tensor. */
    static const int QP[][9] = {
        /* c, o, k, s, pad kind, groups, bias, h, per-channel */
        {3, 5, 3, 1, 1, 1, 1, 7, 1},    {8, 8, 3, 2, 1, 8, 1, 9, 1},   {16, 16, 5, 1, 1, 16, 1, 9, 1},
        {8, 8, 5, 1, 1, 8, 1, 9, 0},    {17, 9, 1, 1, 0, 1, 1, 6, 1},  {16, 16, 5, 2, 1, 16, 1, 12, 0},
        {24, 24, 5, 2, 3, 24, 0, 11, 1}, {4, 8, 3, 1, 1, 4, 1, 7, 1},   {32, 16, 3, 1, 2, 1, 1, 8, 1},
    };
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 9; i++) {
            conv_pt p = conv_base();
            p.c = QP[i][0]; p.o = QP[i][1]; p.kh = p.kw = QP[i][2]; p.sh = p.sw = QP[i][3];
            p.g = QP[i][5]; p.bias = QP[i][6]; p.h = p.w = QP[i][7]; p.pc = QP[i][8];
            set_pad(&p, QP[i][4]);
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            conv_emit(gr, p, 1);
        }
}

void par_sweep_conv2d(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(conv_pt));
    sweep_geometry(&gr);
    sweep_dilations(&gr);
    sweep_channels(&gr);
    sweep_depthwise(&gr);
    sweep_grouped(&gr);
    sweep_batch(&gr);
    sweep_no_bias(&gr);
    sweep_networks(&gr);
    sweep_quantized(&gr);
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * conv_transpose2d
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct convt_pt {
    int n, c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, oph, opw, dh, dw, g, bias, dt, pc;
} convt_pt;

static void convt_emit(grid *gr, convt_pt p, int quick)
{
    if (p.c % p.g || p.o % p.g) return;
    if ((p.oph >= p.sh && p.oph >= p.dh) || (p.opw >= p.sw && p.opw >= p.dw)) return;
    int oh = (p.h - 1) * p.sh - p.pt - p.pb + p.dh * (p.kh - 1) + p.oph + 1;
    int ow = (p.w - 1) * p.sw - p.pl - p.pr + p.dw * (p.kw - 1) + p.opw + 1;
    if (oh < 1 || ow < 1) return;
    int64_t xd[4] = {p.n, p.c, p.h, p.w}, wd[4] = {p.c, p.o / p.g, p.kh, p.kw}, yd[4] = {p.n, p.o, oh, ow};
    int64_t macs = su_numel(4, xd) * wd[1] * p.kh * p.kw;
    int64_t big = su_max64(su_max64(su_numel(4, xd), su_numel(4, wd)), su_numel(4, yd));
    if (!grid_take(gr, &p, quick, big, macs)) return;

    char xs[64], ws[64], dts[24] = "";
    su_shape(xs, sizeof xs, 4, xd);
    su_shape(ws, sizeof ws, 4, wd);
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s%s", su_dt((par_dtype)p.dt), p.pc ? ",w=qs8/pc" : "");
    par_case *c = par_sweep_case(gr->s, "conv_transpose2d",
                                 "conv_transpose2d(in=%s,w=%s,s=[%d,%d],p=[%d,%d,%d,%d],op=[%d,%d],d=[%d,%d],g=%d,bias=%d%s)",
                                 xs, ws, p.sh, p.sw, p.pt, p.pl, p.pb, p.pr, p.oph, p.opw, p.dh, p.dw, p.g, p.bias, dts);
    if (!c) return;
    int64_t stride[2] = {p.sh, p.sw}, padding[4] = {p.pt, p.pl, p.pb, p.pr}, opad[2] = {p.oph, p.opw};
    int64_t dil[2] = {p.dh, p.dw}, bd[1] = {p.o};
    par_attr at[5] = {par_a_ints("stride", 2, stride), par_a_ints("padding", 4, padding),
                      par_a_ints("output_padding", 2, opad), par_a_ints("dilation", 2, dil), par_a_int("groups", p.g)};
    int32_t in[3] = {-1, -1, -1};
    if (p.dt) {
        /* As conv2d's quantized cases; the fan-in of an output is at most (C/g) ceil(kh/sh) ceil(kw/sw). pc: qs8
         * weights with per-output-channel scales on axis 1 of [C, O/g, kh, kw] (groups = 1). */
        par_dtype dt = (par_dtype)p.dt;
        int32_t fan_in = (p.c / p.g) * ((p.kh + p.sh - 1) / p.sh) * ((p.kw + p.sw - 1) / p.sw);
        float xs_ = 0.0f, ws_ = (float)(1.0 / (100.0 * sqrt((double)fan_in)));
        int32_t xz = 0, wz = dt == PAR_DTYPE_QU8 && !p.pc ? 128 : 0;
        su_qparams(dt, -1.0, 1.0, &xs_, &xz);
        in[0] = su_qinput(c, "x", dt, 4, xd, -1.0, 1.0);
        su_qweights(c, dt, p.pc, 1, p.o / p.g, 4, wd, ws_, wz, xs_, p.bias, bd, in);
        par_out_spec o = su_qout_spec("y_q", dt, -2.0, 2.0);
        su_qoutput(c, par_case_node(c, "conv_transpose2d", p.bias ? 3 : 2, in, 5, at, &o));
        par_sweep_done(gr->s, c);
        return;
    }
    in[0] = par_case_input(c, "x", PAR_DTYPE_F32, 4, xd, su_uniform(-1.0, 1.0));
    in[1] = par_case_const(c, "w", PAR_DTYPE_F32, 4, wd, su_weight());
    if (p.bias) in[2] = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5));
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, "conv_transpose2d", p.bias ? 3 : 2, in, 5, at, &o));
    par_sweep_done(gr->s, c);
}

static convt_pt convt_base(void)
{
    convt_pt p;
    memset(&p, 0, sizeof p);
    p.n = 1; p.c = 3; p.o = 5; p.h = p.w = 5; p.kh = p.kw = 3; p.sh = p.sw = 2; p.dh = p.dw = 1; p.g = 1; p.bias = 1;
    return p;
}

void par_sweep_conv_transpose2d(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(convt_pt));
    static const int TK[][2] = {{2, 2}, {3, 3}, {4, 4}, {1, 1}, {5, 5}, {1, 3}, {3, 1}, {2, 4}};
    enum { TKQ = 4, TKN = 8 };
    static const int TS[][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 2}, {2, 1}};
    enum { TSQ = 3, TSN = 5 };
    /* padding kinds: 0 none, 1 symmetric (extent - 1) / 2, 2 asymmetric [1,0,0,1]; output padding 0 or 1 */
    static const int THW[][2] = {{5, 5}, {4, 7}, {8, 8}, {9, 6}};
    enum { THWQ = 2, THWN = 4 };

    /* Geometry at 3 -> 5 channels. */
    for (int k = 0; k < TKN; k++)
        for (int st = 0; st < TSN; st++)
            for (int pk = 0; pk < 3; pk++)
                for (int op = 0; op < 2; op++)
                    for (int d = 1; d <= 2; d++)
                        for (int hw = 0; hw < THWN; hw++) {
                            convt_pt p = convt_base();
                            p.kh = TK[k][0]; p.kw = TK[k][1]; p.sh = TS[st][0]; p.sw = TS[st][1];
                            p.dh = p.dw = d; p.h = THW[hw][0]; p.w = THW[hw][1];
                            if (p.kh == 1 && p.kw == 1 && d > 1) continue;
                            int eh = p.dh * (p.kh - 1), ew = p.dw * (p.kw - 1);
                            if (pk == 1) { p.pt = p.pb = eh / 2; p.pl = p.pr = ew / 2; }
                            if (pk == 2) { p.pt = eh > 0; p.pr = ew > 0; if (!p.pt && !p.pr) continue; }
                            p.oph = op && p.sh > 1; p.opw = op && p.sw > 1;
                            if (op && !p.oph && !p.opw) continue;
                            if ((k >= TKQ) + (st >= TSQ) + (d > 1) + (hw >= THWQ) > 2) continue;
                            convt_emit(&gr, p, k < TKQ && st < TSQ && d == 1 && hw < THWQ && (pk < 2 || op == 0));
                        }

    /* Channels and groups (depthwise with multiplier 1 and 2, grouped). */
    static const int TC[] = {1, 4, 8, 9, 17, 3, 16, 32, 33};
    enum { TCQ = 5, TCN = 9 };
    for (int ci = 0; ci < TCN; ci++)
        for (int oi = 0; oi < TCN; oi++)
            for (int bias = 0; bias < 2; bias++) {
                convt_pt p = convt_base();
                p.c = TC[ci]; p.o = TC[oi]; p.bias = bias; p.pt = p.pl = p.pb = p.pr = 1; p.oph = p.opw = 1;
                convt_emit(&gr, p, ci < TCQ && oi < TCQ && (bias || ci == oi));
            }
    for (int ci = 0; ci < TCN; ci++)
        for (int m = 1; m <= 2; m++)
            for (int st = 1; st <= 2; st++) {
                convt_pt p = convt_base();
                p.c = TC[ci]; p.g = p.c; p.o = p.c * m; p.sh = p.sw = st; p.pt = p.pl = p.pb = p.pr = 1;
                convt_emit(&gr, p, ci < TCQ && st == 2);
            }
    for (int g = 2; g <= 4; g++)
        for (int cpg = 1; cpg <= 3; cpg++)
            for (int opg = 1; opg <= 3; opg++) {
                convt_pt p = convt_base();
                p.g = g; p.c = g * cpg; p.o = g * opg;
                convt_emit(&gr, p, cpg != 3 && opg != 3);
            }
    /* Batch > 1 and decoder-sized layers (full only beyond the quick gates). */
    for (int n = 2; n <= 4; n++)
        for (int big = 0; big < 2; big++) {
            convt_pt p = convt_base();
            p.n = n;
            if (big) { p.c = 16; p.o = 8; p.h = p.w = 16; p.kh = p.kw = 4; p.pt = p.pl = p.pb = p.pr = 1; }
            convt_emit(&gr, p, !big && n < 4);
        }
    static const int TNET[][6] = {/* c, h, w, o, k, s */
                                  {64, 14, 14, 32, 4, 2}, {32, 28, 28, 16, 4, 2}, {16, 1, 250, 8, 8, 4},
                                  {32, 1, 500, 16, 4, 2}, {8, 56, 56, 3, 2, 2},   {24, 20, 20, 24, 3, 1}};
    for (int i = 0; i < 6; i++) {
        convt_pt p = convt_base();
        p.c = TNET[i][0]; p.h = TNET[i][1]; p.w = TNET[i][2]; p.o = TNET[i][3];
        p.sh = TNET[i][1] > 1 ? TNET[i][5] : 1; p.sw = TNET[i][5];
        p.kh = TNET[i][1] > 1 ? TNET[i][4] : 1; p.kw = TNET[i][4];
        p.pl = p.pr = (TNET[i][4] - TNET[i][5]) / 2;
        if (TNET[i][1] > 1) p.pt = p.pb = p.pl;
        convt_emit(&gr, p, 0);
    }
    /* Quantized: stride, padding, output padding, dilation, groups, per-channel qs8 weights (axis 1, groups 1). */
    static const int TQ[][12] = {
        /* c, o, k, s, pad, op, d, g, bias, h, w, per-channel */
        {3, 5, 3, 2, 1, 1, 1, 1, 1, 5, 5, 0}, {4, 4, 2, 2, 0, 0, 1, 1, 1, 4, 7, 1}, {8, 6, 4, 2, 1, 0, 1, 2, 1, 6, 6, 0},
        {5, 7, 3, 1, 1, 0, 1, 1, 0, 5, 5, 1}, {3, 8, 3, 3, 0, 1, 2, 1, 1, 4, 4, 1}, {6, 6, 3, 2, 1, 1, 1, 6, 1, 5, 5, 0},
        {16, 8, 4, 2, 1, 0, 1, 1, 1, 8, 8, 1}, {9, 3, 5, 2, 2, 1, 1, 1, 1, 6, 5, 0},
    };
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 8; i++) {
            convt_pt p = convt_base();
            p.c = TQ[i][0]; p.o = TQ[i][1]; p.kh = p.kw = TQ[i][2]; p.sh = p.sw = TQ[i][3];
            p.pt = p.pl = p.pb = p.pr = TQ[i][4]; p.oph = p.opw = TQ[i][5]; p.dh = p.dw = TQ[i][6];
            p.g = TQ[i][7]; p.bias = TQ[i][8]; p.h = TQ[i][9]; p.w = TQ[i][10]; p.pc = TQ[i][11];
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            convt_emit(&gr, p, 1);
        }
    grid_free(&gr);
}
