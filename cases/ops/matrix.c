/*
 * matrix.c - sweep specs of linear and matmul: inner dimensions K below, at and above the vector widths (1, 3, 4,
 * 7, 8, 9, 15, 16, 17, 31, 32, 33, ...), output widths likewise, rows 1 to 33, inputs of rank 1 to 4, linear with and
 * without bias, matmul with batch dimensions that broadcast in every way, and quantize -> linear -> dequantize
 * graphs (qu8, qs8), and the 16a8w linear (qs16 activations, qs8 weights) with its hazards.
 *
 * It must not encode expected results; it only describes cases.
 */
#include "sweep_util.h"
#include "core/prng.h"
#include "core/tensor.h"

/* A linear point: x [d0.., K] of rank `rank` (leading dims from lead[]), w [O, K]. */
typedef struct lin_pt {
    int rank, lead[3], k, o, bias, dt, pc;
} lin_pt;

static void lin_emit(grid *gr, lin_pt p, int quick)
{
    int64_t xd[4], wd[2] = {p.o, p.k}, bd[1] = {p.o}, yd[4];
    for (int i = 0; i < p.rank - 1; i++) xd[i] = yd[i] = p.lead[i];
    xd[p.rank - 1] = p.k;
    yd[p.rank - 1] = p.o;
    int64_t rows = su_numel(p.rank - 1, xd);
    int64_t big = su_max64(su_max64(su_numel(p.rank, xd), su_numel(2, wd)), su_numel(p.rank, yd));
    if (!grid_take(gr, &p, quick, big, rows * p.k * p.o)) return;
    char xs[64], dts[16] = "";
    su_shape(xs, sizeof xs, p.rank, xd);
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s%s", su_dt((par_dtype)p.dt), p.pc ? ",w=qs8/pc" : "");
    par_case *c = par_sweep_case(gr->s, "linear", "linear(in=%s,w=[%d,%d],bias=%d%s)", xs, p.o, p.k, p.bias, dts);
    if (!c) return;
    int32_t in[3] = {-1, -1, -1};
    if (!p.dt) {
        in[0] = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, su_uniform(-1.0, 1.0));
        in[1] = par_case_const(c, "w", PAR_DTYPE_F32, 2, wd, su_weight());
        if (p.bias) in[2] = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5));
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, "linear", p.bias ? 3 : 2, in, 0, NULL, &o));
    } else {
        /* As conv2d: weights q in zero point +- 100 for a real range of +-1/sqrt(K); i32 bias of real range +-0.1. */
        par_dtype dt = (par_dtype)p.dt;
        float xsc = 0.0f, wsc = (float)(1.0 / (100.0 * sqrt((double)p.k)));
        int32_t xz = 0, wz = dt == PAR_DTYPE_QU8 && !p.pc ? 128 : 0;
        su_qparams(dt, -1.0, 1.0, &xsc, &xz);
        in[0] = su_qinput(c, "x", dt, p.rank, xd, -1.0, 1.0);
        su_qweights(c, dt, p.pc, 0, p.o, 2, wd, wsc, wz, xsc, p.bias, bd, in); /* per channel: on axis 0 */
        par_out_spec o = su_qout_spec("y_q", dt, -2.0, 2.0);
        su_qoutput(c, par_case_node(c, "linear", p.bias ? 3 : 2, in, 0, NULL, &o));
    }
    par_sweep_done(gr->s, c);
}

/* A 16a8w linear point (docs/quantization.md, "16a8w"): x a qs16 graph input [rows, K], qs8 weights [O, K] per
 * tensor or per channel, an i32 bias or none, the qs16 output the graph's output, judged as integers. hz: 0 plain
 * (x over the whole int16 range, the output over 4.5 standard deviations, so a tail saturates rarely); 1 ties
 * (ratio s_x s_w / s_out exactly 1/2 on small integers: every odd accumulator is an exact tie); 2 saturation (ratio
 * 2^-7 on full-range operands: most outputs clamp to -32768 or 32767); 3 a big accumulator (every product near
 * +2^22, K = 511: |acc| up to 2^31 - 2^22, the largest that cannot overflow int32, where (float)acc rounds). */
typedef struct lin16_pt {
    int rows, k, o, bias, pc, hz;
} lin16_pt;

static void lin16_emit(grid *gr, lin16_pt p, int quick)
{
    static const char *const HZ[] = {"", ",x=ties", ",x=sat", ",acc=big"};
    int64_t xd[2] = {p.rows, p.k}, wd[2] = {p.o, p.k}, bd[1] = {p.o}, yd[2] = {p.rows, p.o};
    if (!grid_take(gr, &p, quick, su_max64(su_numel(2, xd), su_numel(2, wd)), (int64_t)p.rows * p.k * p.o)) return;
    par_case *c = par_sweep_case(gr->s, "linear", "linear(in=[%d,%d],w=[%d,%d],bias=%d,dt=qs16,w=qs8%s%s)", p.rows,
                                 p.k, p.o, p.k, p.bias, p.pc ? "/pc" : "", HZ[p.hz]);
    if (!c) return;
    (void)yd;
    /* integer ranges of x and w, and the scales (powers of two, so the ratios are what the comment says) */
    static const double XLO[] = {-32768, -64, -32768, -32768}, XHI[] = {32767, 63, 32767, -32700};
    static const double WLO[] = {-127, -8, -128, -128}, WHI[] = {127, 7, 127, -120};
    const float sx = p.hz == 1 ? 0x1p-6f : 0x1p-15f;
    const float sw = p.hz == 1 ? 0x1p-3f : p.hz == 0 ? (float)(1.0 / (127.0 * sqrt((double)p.k))) : 0x1p-7f;
    const float so = p.hz == 0 ? 1.5f / 32767.0f : p.hz == 1 ? 0x1p-8f : p.hz == 2 ? 0x1p-15f : 0.0165f;
    int32_t in[3] = {-1, -1, -1};
    in[0] = par_case_input(c, "x", PAR_DTYPE_QS16, 2, xd,
                           (par_gen){.dist = PAR_DIST_UNIFORM, .a = XLO[p.hz], .b = XHI[p.hz]});
    par_case_quant(c, in[0], sx, 0);
    in[1] = par_case_const(c, "w", PAR_DTYPE_QS8, 2, wd,
                           (par_gen){.dist = PAR_DIST_UNIFORM, .a = WLO[p.hz], .b = WHI[p.hz]});
    if (p.pc) su_channel_quant(c, in[1], 0, p.o, sw);
    else par_case_quant(c, in[1], sw, 0);
    if (p.bias) {
        /* real range +-0.1 at the plain scales; small integers (which keep the ties) elsewhere */
        double bmax = p.hz == 0 ? 0.1 / ((double)sx * (double)sw) : 64;
        in[2] = par_case_const(c, "b", PAR_DTYPE_I32, 1, bd, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -bmax,
                                                                       .b = bmax});
        par_case_quant(c, in[2], sx * sw, 0);
    }
    par_out_spec o = {"y", PAR_DTYPE_QS16, so, 0};
    par_case_output(c, par_case_node(c, "linear", p.bias ? 3 : 2, in, 0, NULL, &o));
    par_sweep_done(gr->s, c);
}

static void lin16_sweep(par_sweep *s)
{
    /* rows, K, O, bias, per-channel, hazard; the first ten are quick */
    static const int P16[][6] = {{4, 64, 16, 1, 0, 0},   {1, 33, 10, 1, 1, 0},  {3, 8, 17, 0, 0, 0},
                                 {5, 128, 24, 1, 1, 0},  {8, 64, 16, 1, 0, 1},  {8, 64, 16, 0, 0, 1},
                                 {4, 256, 16, 1, 1, 2},  {2, 511, 16, 0, 0, 3}, {1, 16, 64, 1, 0, 0},
                                 {16, 32, 8, 1, 1, 0},   {33, 100, 31, 1, 1, 0}, {7, 1000, 9, 1, 0, 0},
                                 {16, 256, 64, 1, 1, 1}, {8, 511, 33, 1, 1, 2}, {4, 511, 64, 0, 1, 3},
                                 {2, 4096, 32, 1, 1, 0}};
    grid gr;
    grid_init(&gr, s, sizeof(lin16_pt));
    for (size_t i = 0; i < sizeof P16 / sizeof P16[0]; i++) {
        lin16_pt p;
        memset(&p, 0, sizeof p);
        p.rows = P16[i][0], p.k = P16[i][1], p.o = P16[i][2], p.bias = P16[i][3], p.pc = P16[i][4], p.hz = P16[i][5];
        lin16_emit(&gr, p, i < 10);
    }
    grid_free(&gr);
}

static lin_pt lin_base(int rows, int k, int o)
{
    lin_pt p;
    memset(&p, 0, sizeof p);
    p.rank = 2; p.lead[0] = rows; p.k = k; p.o = o; p.bias = 1;
    return p;
}

void par_sweep_linear(par_sweep *s)
{
    static const int KS[] = {1, 3, 4, 7, 8, 9, 16, 17, 32, 33, 2, 5, 15, 31, 63, 64, 65, 100, 127, 128, 256, 1000};
    enum { KQ = 10, KN = 22 };
    static const int OS[] = {1, 3, 4, 8, 9, 16, 17, 2, 7, 15, 31, 32, 33, 64, 100, 128, 1000};
    enum { OQ = 7, ON = 17 };
    static const int RS[] = {5, 1, 3, 16, 33};
    enum { RQ = 1, RN = 5 };
    grid gr;
    grid_init(&gr, s, sizeof(lin_pt));
    for (int r = 0; r < RN; r++)
        for (int k = 0; k < KN; k++)
            for (int o = 0; o < ON; o++)
                if ((r >= RQ) + (k >= KQ) + (o >= OQ) < 2 || (KS[k] >= 64 && OS[o] >= 64 && r == 1))
                    lin_emit(&gr, lin_base(RS[r], KS[k], OS[o]), r < RQ && k < KQ && o < OQ);
    /* Rank 1 to 4 inputs. */
    static const int KO[][2] = {{8, 4}, {17, 9}, {32, 10}, {3, 33}};
    for (int rank = 1; rank <= 4; rank++)
        for (int i = 0; i < 4; i++) {
            lin_pt p = lin_base(1, KO[i][0], KO[i][1]);
            p.rank = rank;
            p.lead[0] = 2; p.lead[1] = 3; p.lead[2] = 4;
            if (rank == 2) p.lead[0] = 6;
            for (int j = rank - 1; j < 3; j++) p.lead[j] = 0;
            lin_emit(&gr, p, i < 2);
        }
    /* Without bias. */
    for (int k = 0; k < KN; k++)
        for (int r = 0; r < 2; r++) {
            lin_pt p = lin_base(r ? 4 : 1, KS[k], KS[k] > 16 ? 9 : 16);
            p.bias = 0;
            lin_emit(&gr, p, k < KQ && r == 0);
        }
    /* Quantized. */
    static const int QL[][4] = {{4, 16, 8, 1}, {1, 33, 10, 1}, {3, 8, 17, 0}, {2, 64, 32, 1}, {5, 9, 9, 1}, {8, 128, 16, 1}};
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 6; i++) {
            lin_pt p = lin_base(QL[i][0], QL[i][1], QL[i][2]);
            p.bias = QL[i][3];
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            lin_emit(&gr, p, i < 4);
            p.pc = 1;
            lin_emit(&gr, p, 1);
        }
    grid_free(&gr);
    lin16_sweep(s);
}

/* A matmul point: a [ab.., M, K], b [bb.., K, N] with up to 2 batch dims each (0 = absent). */
typedef struct mm_pt {
    int ra, rb, ab[2], bb[2], m, k, n, dt;
} mm_pt;

static void mm_emit(grid *gr, mm_pt p, int quick)
{
    int64_t ad[4], bd[4], yd[4];
    int na = p.ra - 2, nb = p.rb - 2, ny = na > nb ? na : nb;
    for (int i = 0; i < na; i++) ad[i] = p.ab[i];
    for (int i = 0; i < nb; i++) bd[i] = p.bb[i];
    /* numpy broadcasting of the batch dims, aligned at the right */
    for (int i = 0; i < ny; i++) {
        int ia = i - (ny - na), ib = i - (ny - nb);
        int64_t x = ia >= 0 ? ad[ia] : 1, y = ib >= 0 ? bd[ib] : 1;
        if (x != y && x != 1 && y != 1) return;
        yd[i] = x > y ? x : y;
    }
    ad[na] = p.m; ad[na + 1] = p.k;
    bd[nb] = p.k; bd[nb + 1] = p.n;
    yd[ny] = p.m; yd[ny + 1] = p.n;
    int64_t big = su_max64(su_max64(su_numel(p.ra, ad), su_numel(p.rb, bd)), su_numel(ny + 2, yd));
    if (!grid_take(gr, &p, quick, big, su_numel(ny + 2, yd) * p.k)) return;
    char as[64], bs[64];
    su_shape(as, sizeof as, p.ra, ad);
    su_shape(bs, sizeof bs, p.rb, bd);
    char dts[16] = "";
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    par_case *c = par_sweep_case(gr->s, "matmul", "matmul(a=%s,b=%s%s)", as, bs, dts);
    if (!c) return;
    if (p.dt) {
        /* Two quantized activations: a over [-1, 1] and b over [-0.5, 1] (both zero points away from the dtype's
         * middle for qu8, b's not 0 for qs8); the output over +-sqrt(K) / 2 covers the sum's usual spread. */
        par_dtype dt = (par_dtype)p.dt;
        int32_t qa = su_qinput(c, "a", dt, p.ra, ad, -1.0, 1.0);
        int32_t qb = su_qinput(c, "b", dt, p.rb, bd, -0.5, 1.0);
        int32_t qin[2] = {qa, qb};
        double r = 0.5 * sqrt((double)p.k);
        par_out_spec o = su_qout_spec("y_q", dt, -r, r);
        su_qoutput(c, par_case_node(c, "matmul", 2, qin, 0, NULL, &o));
        par_sweep_done(gr->s, c);
        return;
    }
    /* Both operands are activations here, uniform in [-1, 1); the sum then grows like sqrt(K). */
    int32_t in[2];
    in[0] = par_case_input(c, "a", PAR_DTYPE_F32, p.ra, ad, su_uniform(-1.0, 1.0));
    in[1] = par_case_input(c, "b", PAR_DTYPE_F32, p.rb, bd, su_uniform(-1.0, 1.0));
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, "matmul", 2, in, 0, NULL, &o));
    par_sweep_done(gr->s, c);
}

void par_sweep_matmul(par_sweep *s)
{
    static const int MS[] = {1, 4, 7, 17, 2, 3, 8, 9, 15, 16, 32, 33, 64};
    enum { MQ = 4, MN = 13 };
    static const int KS[] = {1, 8, 9, 33, 3, 4, 16, 17, 32, 64, 128};
    enum { KQ = 4, KN = 11 };
    static const int NS[] = {1, 8, 15, 17, 4, 7, 9, 16, 32, 33};
    enum { NQ = 4, NN = 10 };
    grid gr;
    grid_init(&gr, s, sizeof(mm_pt));
    for (int m = 0; m < MN; m++)
        for (int k = 0; k < KN; k++)
            for (int n = 0; n < NN; n++) {
                mm_pt p;
                memset(&p, 0, sizeof p);
                p.ra = p.rb = 2; p.m = MS[m]; p.k = KS[k]; p.n = NS[n];
                /* full: every M x K x N would be 1,430 points; keep the ones where at most one size is large */
                int large = (MS[m] > 17) + (KS[k] > 17) + (NS[n] > 17);
                if (large > 1 || (m >= MQ) + (k >= KQ) + (n >= NQ) > 2) continue;
                mm_emit(&gr, p, m < MQ && k < KQ && n < NQ);
            }
    /* Batch dims: equal, one side missing, size 1 on either side, both broadcasting. */
    static const int BT[][6] = {
        /* ra, ab0, ab1, rb, bb0, bb1 */
        {3, 2, 0, 3, 2, 0}, {3, 2, 0, 2, 0, 0}, {2, 0, 0, 3, 3, 0}, {4, 2, 1, 3, 3, 0},
        {3, 1, 0, 3, 4, 0}, {4, 2, 3, 4, 2, 3}, {4, 1, 3, 4, 2, 1}, {4, 2, 3, 2, 0, 0},
        {2, 0, 0, 4, 2, 3}, {3, 5, 0, 4, 2, 5},
    };
    static const int MKN[][3] = {{5, 7, 3}, {8, 16, 9}, {1, 17, 4}, {16, 33, 8}, {3, 64, 32}};
    for (int b = 0; b < 10; b++)
        for (int i = 0; i < 5; i++) {
            mm_pt p;
            memset(&p, 0, sizeof p);
            p.ra = BT[b][0]; p.ab[0] = BT[b][1]; p.ab[1] = BT[b][2];
            p.rb = BT[b][3]; p.bb[0] = BT[b][4]; p.bb[1] = BT[b][5];
            if (p.ra == 3) p.ab[1] = 0;
            if (p.rb == 3) p.bb[1] = 0;
            p.m = MKN[i][0]; p.k = MKN[i][1]; p.n = MKN[i][2];
            mm_emit(&gr, p, i < 2);
        }
    /* Quantized (qu8, qs8): plain, batched, broadcast batch, long K. */
    static const int QM[][9] = {/* ra, ab0, ab1, rb, bb0, bb1, m, k, n */
                                {2, 0, 0, 2, 0, 0, 4, 8, 5},   {2, 0, 0, 2, 0, 0, 17, 33, 9}, {3, 2, 0, 3, 2, 0, 5, 7, 3},
                                {4, 2, 1, 3, 3, 0, 3, 16, 8}, {2, 0, 0, 2, 0, 0, 1, 128, 16}, {3, 1, 0, 3, 4, 0, 8, 64, 32}};
    for (int dt = 0; dt < 2; dt++)
        for (int i = 0; i < 6; i++) {
            mm_pt p;
            memset(&p, 0, sizeof p);
            p.ra = QM[i][0]; p.ab[0] = QM[i][1]; p.ab[1] = QM[i][2];
            p.rb = QM[i][3]; p.bb[0] = QM[i][4]; p.bb[1] = QM[i][5];
            p.m = QM[i][6]; p.k = QM[i][7]; p.n = QM[i][8];
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            mm_emit(&gr, p, i < 4);
        }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * linear_dynamic: x f32 [.., K] quantized at run time, qs8 weights [O, K] per tensor (zero point 0 or not) or per
 * channel, f32 bias or none, reduce_range 0 and 1; inputs whose range excludes 0 (the range is extended to it) and
 * that are all zero (the scale falls back to 0.1).
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct ld_pt {
    int rows, k, o, bias, pc, wz, rr, xr; /* xr: 0 [-1, 1], 1 [0.5, 2] (positive), 2 all zero, 3 [-3, 0.25] */
} ld_pt;

static void ld_emit(grid *gr, ld_pt p, int quick)
{
    int64_t xd[2] = {p.rows, p.k}, wd[2] = {p.o, p.k}, bd[1] = {p.o};
    if (!grid_take(gr, &p, quick, su_max64(su_numel(2, xd), su_numel(2, wd)), (int64_t)p.rows * p.k * p.o)) return;
    static const char *const XR[4] = {"[-1,1]", "[0.5,2]", "zero", "[-3,0.25]"};
    char xs[64];
    su_shape(xs, sizeof xs, 2, xd);
    par_case *c = par_sweep_case(gr->s, "linear_dynamic",
                                 "linear_dynamic(in=%s,w=[%d,%d],bias=%d,w=%s,reduce_range=%d,x=%s)", xs, p.o, p.k,
                                 p.bias, p.pc ? "pc" : p.wz ? "zp" : "sym", p.rr, XR[p.xr]);
    if (!c) return;
    static const double LO[4] = {-1.0, 0.5, 0.0, -3.0}, HI[4] = {1.0, 2.0, 0.0, 0.25};
    par_gen gx = p.xr == 2 ? (par_gen){.dist = PAR_DIST_CONST, .a = 0, .b = 0} : su_uniform(LO[p.xr], HI[p.xr]);
    int32_t in[3] = {-1, -1, -1};
    in[0] = par_case_input(c, "x", PAR_DTYPE_F32, 2, xd, gx);
    /* weights q in [-100, 100] (around the zero point 5 for "zp"), real range +-1/sqrt(K) */
    float ws = (float)(1.0 / (100.0 * sqrt((double)p.k)));
    int32_t wz = p.wz ? 5 : 0;
    in[1] = par_case_const(c, "w", PAR_DTYPE_QS8, 2, wd, (par_gen){.dist = PAR_DIST_UNIFORM, .a = wz - 100, .b = wz + 100});
    if (p.pc)
        su_channel_quant(c, in[1], 0, p.o, ws);
    else
        par_case_quant(c, in[1], ws, wz);
    if (p.bias) in[2] = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5));
    par_attr at[1] = {par_a_int("reduce_range", p.rr)};
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, "linear_dynamic", p.bias ? 3 : 2, in, 1, at, &o));
    par_sweep_done(gr->s, c);
}

void par_sweep_linear_dynamic(par_sweep *s)
{
    static const int SH[][3] = {{4, 16, 8}, {1, 33, 10}, {3, 8, 17}, {2, 64, 32}, {5, 9, 9}, {8, 128, 16},
                                {16, 256, 64}, {1, 1000, 10}};
    enum { SQ = 4, SN = 8 };
    grid gr;
    grid_init(&gr, s, sizeof(ld_pt));
    for (int sh = 0; sh < SN; sh++)
        for (int w = 0; w < 3; w++)
            for (int rr = 0; rr < 2; rr++)
                for (int bias = 0; bias < 2; bias++) {
                    ld_pt p = {SH[sh][0], SH[sh][1], SH[sh][2], bias, w == 2, w == 1, rr, 0};
                    ld_emit(&gr, p, sh < SQ && (bias || w == 0) && (rr == 0 || sh == 0));
                }
    for (int xr = 1; xr < 4; xr++)
        for (int rr = 0; rr < 2; rr++) {
            ld_pt p = {3, 16, 8, 1, 0, 0, rr, xr};
            ld_emit(&gr, p, 1);
        }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * linear_8da4w: x f32 [rows, K] quantized per row at run time, packed int4 weights [O, K / 2], f32 block scales
 * [O, K / block], f32 bias or none. Hazards: every nibble -8 (byte 0x88), all-zero weight blocks, rows of one equal
 * value (hi = lo or the range [0, v]), an all-zero x (the empty range's scale 1), large values of both signs mixed
 * with small ones in one row (most of the row quantizes to the zero point), and exact ties: edge values of max
 * 127.5, so a row holding +-127.5 has the range 255, inv = 1, x inv = x, and its +-0.5, +-1.5, +-2.5 (a quarter of
 * the elements) and its zero point (127 - 127.5) are exact halves; a backend that rounds them another way than half
 * to even fails where it promises the rule (strict: qnnpack).
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct q4_pt {
    int rows, k, o, block, bias, xr, wr; /* xr: 0 [-1, 1], 1 all equal, 2 zero, 3 cancel, 4 ties; wr: 0 any, 1 the
                                          * smallest weight (s4: 0x88), 2 0, 3 the largest (s4: 0x77) */
    int form;                            /* W4F */
} q4_pt;

/* The 4-bit weight forms the sweeps of linear_8da4w and linear_16a4w cover (par_int4_form; docs/quantization.md,
 * "4-bit weights"): the default (s4, low nibble first, f32 scales) keeps its IDs; the others add their attributes to
 * the ID. u4 with zero point 8 is XNNPACK's qc4w; u4 with 0 has only weights >= 0 (up to 15: the largest products)
 * and u4 with 11 a zero point off the middle (weights in [-11, 4]), neither of which signed nibbles hold. */
static const struct w4_form {
    const char *id, *w4, *nibbles, *scales;
    int zp;
} W4F[] = {{"", "s4", "lo", "f32", 0},
           {",w4=u4/8", "u4", "lo", "f32", 8},
           {",nibbles=hi", "s4", "hi", "f32", 0},
           {",w4=u4/8,nibbles=hi,scales=bf16", "u4", "hi", "bf16", 8},
           {",scales=bf16", "s4", "lo", "bf16", 0},
           {",w4=u4/0", "u4", "lo", "f32", 0},
           {",w4=u4/11,nibbles=hi", "u4", "hi", "f32", 11}};
enum { W4F_N = (int)(sizeof W4F / sizeof W4F[0]) };

/* The node's attributes of a form: block and the four of W4F (at holds 5). */
static int w4_attrs(par_attr *at, int block, int form)
{
    const struct w4_form *f = &W4F[form];
    at[0] = par_a_int("block", block);
    at[1] = par_a_str("w4", f->w4);
    at[2] = par_a_int("w4_zp", f->zp);
    at[3] = par_a_str("nibbles", f->nibbles);
    at[4] = par_a_str("scales", f->scales);
    return 5;
}

/* A byte of two equal codes whose weight (code - zero point) is w: the hazards' all-equal weights. */
static double w4_byte(int form, int w)
{
    return (double)(((w + W4F[form].zp) & 15) * 0x11);
}

/* n f32 scales uniform in [lo, hi), each rounded to a bfloat16 (scales = bf16), seeded by the case. */
static int32_t w4_bf16_scales(par_case *c, const char *name, int32_t rank, const int64_t *dims, double lo, double hi)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= dims[i];
    float *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    if (!v) {
        c->status = par_msgf(&c->err, PAR_ERROR, "out of memory");
        return -1;
    }
    par_prng r;
    par_prng_seed(&r, par_hash_str(name, c->seed));
    for (int64_t i = 0; i < n; i++) v[i] = par_f32_round_bf16((float)(lo + (hi - lo) * par_prng_uniform(&r)));
    int32_t id = par_case_const_data(c, name, PAR_DTYPE_F32, rank, dims, v);
    free(v);
    return id;
}

static void q4_emit(grid *gr, q4_pt p, int quick)
{
    int64_t xd[2] = {p.rows, p.k}, wd[2] = {p.o, p.k / 2}, sd[2] = {p.o, p.k / p.block}, bd[1] = {p.o};
    if (!grid_take(gr, &p, quick, su_max64(su_numel(2, xd), (int64_t)p.o * p.k), (int64_t)p.rows * p.k * p.o)) return;
    static const char *const XR[5] = {"[-1,1]", "all_equal", "zero", "cancel", "ties"},
                            *const WR[4] = {"any", "-8", "zero", "7"}, *const WRF[4] = {"any", "min", "zero", "max"};
    char xs[64];
    su_shape(xs, sizeof xs, 2, xd);
    par_case *c = par_sweep_case(gr->s, "linear_8da4w", "linear_8da4w(in=%s,o=%d,block=%d,bias=%d,x=%s,w=%s%s)", xs,
                                 p.o, p.block, p.bias, XR[p.xr], (p.form ? WRF : WR)[p.wr], W4F[p.form].id);
    if (!c) return;
    par_gen gx = su_uniform(-1.0, 1.0);
    if (p.xr == 1) gx = (par_gen){.dist = PAR_DIST_HAZARD, .a = -2, .b = 2, .hazard = PAR_HAZARD_ALL_EQUAL};
    if (p.xr == 2) gx = (par_gen){.dist = PAR_DIST_CONST, .a = 0, .b = 0};
    if (p.xr == 3) gx = (par_gen){.dist = PAR_DIST_HAZARD, .a = -1, .b = 1, .hazard = PAR_HAZARD_CANCEL};
    if (p.xr == 4) gx = (par_gen){.dist = PAR_DIST_EDGE, .a = 0, .b = 127.5};
    par_gen gw = {.dist = PAR_DIST_UNIFORM, .a = 0, .b = 255};
    const int wlo = -8 + (W4F[p.form].w4[0] == 'u' ? 8 : 0) - W4F[p.form].zp; /* the form's smallest weight */
    if (p.wr) gw = (par_gen){.dist = PAR_DIST_CONST, .a = w4_byte(p.form, p.wr == 1 ? wlo : p.wr == 2 ? 0 : wlo + 15)};
    int32_t in[4] = {-1, -1, -1, -1};
    in[0] = par_case_input(c, "x", PAR_DTYPE_F32, 2, xd, gx);
    in[1] = par_case_const(c, "w", PAR_DTYPE_QU8, 2, wd, gw);
    par_case_quant(c, in[1], 1.0f, 0);
    /* block scales around 1 / (8 sqrt(K)): a unit-range row times int4 weights stays near unit range */
    const double s = 1.0 / (8.0 * sqrt((double)p.k));
    in[2] = W4F[p.form].scales[0] == 'b' ? w4_bf16_scales(c, "s", 2, sd, 0.25 * s, 2 * s)
                                          : par_case_const(c, "s", PAR_DTYPE_F32, 2, sd, su_uniform(0.25 * s, 2 * s));
    if (p.bias) in[3] = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5));
    par_attr at[5];
    const int na = p.form ? w4_attrs(at, p.block, p.form) : (at[0] = par_a_int("block", p.block), 1);
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, "linear_8da4w", p.bias ? 4 : 3, in, na, at, &o));
    par_sweep_done(gr->s, c);
}

void par_sweep_linear_8da4w(par_sweep *s)
{
    static const int SH[][3] = {{1, 32, 8}, {4, 64, 16}, {3, 128, 10}, {2, 256, 33}, {8, 512, 64}, {1, 1024, 16},
                                {5, 96, 7}, {16, 2048, 32}};
    enum { SQ = 4, SN = 8 };
    grid gr;
    grid_init(&gr, s, sizeof(q4_pt));
    for (int sh = 0; sh < SN; sh++)
        for (int bl = 32; bl <= 128; bl *= 2)
            for (int bias = 0; bias < 2; bias++) {
                if (SH[sh][1] % bl) continue;
                q4_pt p = {SH[sh][0], SH[sh][1], SH[sh][2], bl, bias, 0, 0, 0};
                q4_emit(&gr, p, sh < SQ && bl == 32);
            }
    for (int xr = 0; xr < 4; xr++)
        for (int wr = 0; wr < 3; wr++) {
            if (!xr && !wr) continue;
            q4_pt p = {4, 64, 8, 32, 1, xr, wr, 0};
            q4_emit(&gr, p, 1);
        }
    q4_emit(&gr, (q4_pt){8, 256, 16, 32, 1, 4, 0, 0}, 1);
    /* every other weight form: plain, the ties, the smallest and largest weights everywhere (quick); a long K and a
     * wide block (full) */
    for (int f = 1; f < W4F_N; f++) {
        q4_emit(&gr, (q4_pt){4, 64, 16, 32, 1, 0, 0, f}, 1);
        q4_emit(&gr, (q4_pt){8, 256, 16, 32, 1, 4, 0, f}, 1);
        q4_emit(&gr, (q4_pt){4, 64, 8, 32, 0, 0, 1, f}, 1);
        q4_emit(&gr, (q4_pt){4, 64, 8, 32, 1, 0, 3, f}, 1);
        q4_emit(&gr, (q4_pt){16, 2048, 32, 128, 1, 0, 0, f}, 0);
        q4_emit(&gr, (q4_pt){3, 128, 10, 64, 0, 3, 0, f}, 0);
    }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * linear_16a4w (docs/quantization.md, "16a4w"): x a qs16 graph input [rows, K], packed int4 weights [O, K / 2],
 * block scales qs8 [O, K / block] (the integer multipliers m, per-channel scales s[o] on axis 0), an i32 bias or
 * none, the qs16 output the graph's output, judged as integers. Per-channel weights are block = K with m = 1
 * ("w=pc"). hz: 0 plain (x over the whole int16 range, any nibble, m in [1, 15] as LPBQ's 4-bit block scales, the
 * output over about 3.5 standard deviations); 1 ties (every s[o] 2^-3, so the ratio s_x s[o] / s_out is exactly 1/2
 * on small integers: every odd accumulator is an exact tie); 2 saturation (ratio 2^-7 on full-range operands: most
 * outputs clamp); 3 a big accumulator (every nibble -8, x near -32768, m = 15, K = 512: every product near +2^18 m,
 * |acc| up to 2^31 - 2^27, where (float)acc rounds); 4 a wrapping partial sum (m = 127 on two blocks of 128 whose
 * sums are about +4.3e9 and -3.7e9: the first block alone leaves int32, the total 5.3e8 does not, so a kernel must
 * accumulate in wrapping int32 or wider, docs/quantization.md).
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct a4w_pt {
    int rows, k, o, block, bias, hz, form; /* form: W4F */
} a4w_pt;

/* Channel scales of the block-scale value: base for every channel (exact ratios), or su_channel_quant's spread;
 * rounded to bfloat16 when the form declares bf16 scales. */
static void a4w_channel_scales(par_case *c, int32_t value, int64_t n, float base, int vary, int bf16)
{
    if (vary && !bf16) {
        su_channel_quant(c, value, 0, n, base);
        return;
    }
    if (c->status != PAR_OK || value < 0) return;
    float *sc = malloc(sizeof *sc * (size_t)(n > 0 ? n : 1));
    if (!sc) {
        c->status = par_msgf(&c->err, PAR_ERROR, "out of memory");
        return;
    }
    for (int64_t k = 0; k < n; k++)
        sc[k] = bf16 ? par_f32_round_bf16(vary ? base * (float)(0.5 + 0.25 * (double)(k % 4)) : base) : base;
    if (par_graph_set_channel_quant(c->graph, value, 0, sc, n, &c->err) != PAR_OK) c->status = PAR_ERROR;
    free(sc);
}

static void a4w_emit(grid *gr, a4w_pt p, int quick)
{
    static const char *const HZ[] = {"", ",x=ties", ",x=sat", ",acc=big", ",acc=wrap"};
    const int blk = p.block ? p.block : p.k, nb = p.k / blk;
    int64_t xd[2] = {p.rows, p.k}, wd[2] = {p.o, p.k / 2}, sd[2] = {p.o, nb}, bd[1] = {p.o};
    if (!grid_take(gr, &p, quick, su_max64(su_numel(2, xd), (int64_t)p.o * p.k), (int64_t)p.rows * p.k * p.o))
        return;
    par_case *c = par_sweep_case(gr->s, "linear_16a4w", "linear_16a4w(in=[%d,%d],o=%d,block=%d,bias=%d%s%s%s)",
                                 p.rows, p.k, p.o, blk, p.bias, p.block ? "" : ",w=pc", HZ[p.hz], W4F[p.form].id);
    if (!c) return;
    static const double XLO[] = {-32768, -64, -32768, -32768, -32768}, XHI[] = {32767, 63, 32767, -32700, -32700};
    static const double MLO[] = {1, 1, 8, 15, 127}, MHI[] = {15, 3, 15, 15, 127};
    const float sx = p.hz == 1 ? 0x1p-6f : 0x1p-15f;
    /* plain: E[(m w)^2] = 82.7 x 21.5 for m uniform in [1, 15] and any nibble, so s = 1 / (42 sqrt(K)) gives the
     * real weights a spread of 1 / sqrt(K) and y about that of x (0.58) */
    const float s = p.hz == 0   ? (float)(1.0 / ((p.block ? 42.0 : 4.6) * sqrt((double)p.k)))
                    : p.hz == 1 ? 0x1p-3f
                    : p.block   ? 0x1p-7f
                                : 0x1p-3f; /* per channel (m = 1): the same ratio to the sum of x w */
    const float so = p.hz == 0 ? 2.0f / 32767.0f : p.hz == 1 ? 0x1p-8f : p.hz == 2 ? 0x1p-15f : p.hz == 3 ? 0.0165f
                                                                                                            : 0.005f;
    int32_t in[4] = {-1, -1, -1, -1};
    in[0] = par_case_input(c, "x", PAR_DTYPE_QS16, 2, xd,
                           (par_gen){.dist = PAR_DIST_UNIFORM, .a = XLO[p.hz], .b = XHI[p.hz]});
    par_case_quant(c, in[0], sx, 0);
    if (p.hz == 4) {
        /* per row: one block of nibbles -8 and one of +7 (their order alternating by row), x near -32768 */
        uint8_t *wb = malloc((size_t)p.o * (size_t)(p.k / 2) + 1);
        if (!wb) {
            c->status = par_msgf(&c->err, PAR_ERROR, "out of memory");
            par_sweep_done(gr->s, c);
            return;
        }
        for (int o = 0; o < p.o; o++)
            for (int j = 0; j < p.k / 2; j++) wb[(size_t)o * (size_t)(p.k / 2) + (size_t)j] = ((2 * j / blk + o) % 2) ? 0x77 : 0x88;
        in[1] = par_case_const_data(c, "w", PAR_DTYPE_QU8, 2, wd, wb);
        free(wb);
    } else {
        par_gen gw = {.dist = PAR_DIST_UNIFORM, .a = 0, .b = 255};
        if (p.hz == 3) gw = (par_gen){.dist = PAR_DIST_CONST, .a = 0x88, .b = 0};
        in[1] = par_case_const(c, "w", PAR_DTYPE_QU8, 2, wd, gw);
    }
    par_case_quant(c, in[1], 1.0f, 0);
    par_gen gm = {.dist = PAR_DIST_UNIFORM, .a = MLO[p.hz], .b = MHI[p.hz]};
    if (!p.block) gm = (par_gen){.dist = PAR_DIST_CONST, .a = 1, .b = 0};
    in[2] = par_case_const(c, "s", PAR_DTYPE_QS8, 2, sd, gm);
    a4w_channel_scales(c, in[2], p.o, s, p.hz == 0, W4F[p.form].scales[0] == 'b');
    if (p.bias) {
        /* real range +-0.1 at the plain scales (channel 0's); small integers (which keep the ties) elsewhere */
        double bmax = p.hz == 0 ? 0.1 / ((double)sx * (double)s) : 64;
        in[3] = par_case_const(c, "b", PAR_DTYPE_I32, 1, bd,
                               (par_gen){.dist = PAR_DIST_UNIFORM, .a = -bmax, .b = bmax});
        par_case_quant(c, in[3], sx * s, 0);
    }
    par_attr at[5];
    const int na = p.form ? w4_attrs(at, blk, p.form) : (at[0] = par_a_int("block", blk), 1);
    par_out_spec o = {"y", PAR_DTYPE_QS16, so, 0};
    par_case_output(c, par_case_node(c, "linear_16a4w", p.bias ? 4 : 3, in, na, at, &o));
    par_sweep_done(gr->s, c);
}

void par_sweep_linear_16a4w(par_sweep *s)
{
    /* rows, K, O, block (0: per channel), bias, hazard; the first eight are quick */
    static const int PT[][6] = {{4, 64, 16, 32, 1, 0},     {1, 128, 10, 0, 1, 0},   {3, 256, 17, 64, 0, 0},
                                {2, 256, 24, 128, 1, 0},   {8, 64, 16, 32, 1, 1},   {4, 256, 16, 64, 1, 2},
                                {2, 512, 16, 32, 0, 3},    {2, 256, 16, 128, 0, 4}, {16, 1024, 64, 128, 1, 0},
                                {33, 96, 31, 32, 1, 0},    {5, 2048, 32, 64, 1, 0}, {16, 256, 64, 32, 1, 1},
                                {8, 512, 33, 0, 1, 2},     {4, 512, 64, 64, 0, 3},  {3, 4096, 8, 0, 1, 0}};
    grid gr;
    grid_init(&gr, s, sizeof(a4w_pt));
    for (size_t i = 0; i < sizeof PT / sizeof PT[0]; i++) {
        a4w_pt p = {PT[i][0], PT[i][1], PT[i][2], PT[i][3], PT[i][4], PT[i][5], 0};
        a4w_emit(&gr, p, i < 8);
    }
    /* every other weight form: plain, ties, saturation (quick); per channel and a long K (full) */
    for (int f = 1; f < W4F_N; f++) {
        a4w_emit(&gr, (a4w_pt){4, 64, 16, 32, 1, 0, f}, 1);
        a4w_emit(&gr, (a4w_pt){8, 64, 16, 32, 1, 1, f}, 1);
        a4w_emit(&gr, (a4w_pt){4, 256, 16, 64, 1, 2, f}, 1);
        a4w_emit(&gr, (a4w_pt){1, 128, 10, 0, 1, 0, f}, 0);
        a4w_emit(&gr, (a4w_pt){16, 1024, 64, 128, 1, 0, f}, 0);
    }
    grid_free(&gr);
}
