/*
 * misc.c - sweep specs of softmax and log_softmax (every axis, narrow and wide input ranges), the resampling ops
 * upsample_nearest2d, upsample_nearest_exact2d, upsample_bilinear2d and upsample_bicubic2d (size and scale, up and
 * down, scales exact and inexact in binary, output sizes equal to the input's, align_corners both ways), batch_norm (ranks 2-4, eps, small
 * variances), the shape ops (concat, reshape, flatten, permute, pad, slice; edge values, as they are exact) and
 * quantize / dequantize (round trips, saturation, round-half-even ties at power-of-two scales).
 *
 * It must not encode expected results; it only describes cases.
 */
#include "sweep_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * softmax, log_softmax
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct sm_pt {
    int log, rank, d[4], axis, range, dt;
} sm_pt;

static void sm_emit(grid *gr, sm_pt p, int quick)
{
    int64_t xd[4];
    for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
    if (!grid_take(gr, &p, quick, su_numel(p.rank, xd), 0)) return;
    const char *op = p.log ? "log_softmax" : "softmax";
    char xs[64], dts[16] = "";
    su_shape(xs, sizeof xs, p.rank, xd);
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    par_case *c = par_sweep_case(gr->s, op, "%s(x=%s,axis=%d,range=%d%s)", op, xs, p.axis, p.range, dts);
    if (!c) return;
    par_attr at[1] = {par_a_int("axis", p.axis)};
    if (p.dt) {
        par_dtype dt = (par_dtype)p.dt;
        int32_t x = su_qinput(c, "x", dt, p.rank, xd, -p.range, p.range);
        par_out_spec o = su_qout_spec("y_q", dt, 0.0, 1.0);
        su_qoutput(c, par_case_node(c, op, 1, &x, 1, at, &o));
    } else {
        /* range 20: exp would overflow without the max subtraction in f16, and underflows for most terms */
        int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, su_uniform(-p.range, p.range));
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, op, 1, &x, 1, at, &o));
    }
    par_sweep_done(gr->s, c);
}

void par_sweep_softmax(par_sweep *s)
{
    static const int SH[][5] = {{1, 1},     {1, 7},  {1, 16},    {1, 33},    {2, 4, 9},        {3, 2, 3, 5},
                                {4, 2, 3, 4, 5}, {2, 1, 10}, {1, 1000}, {2, 8, 1000}, {2, 32, 33}, {4, 1, 16, 8, 8},
                                {3, 17, 9, 31}, {2, 3, 4097}};
    enum { SQ = 8, SN = 14 };
    grid gr;
    grid_init(&gr, s, sizeof(sm_pt));
    for (int lg = 0; lg < 2; lg++)
        for (int sh = 0; sh < SN; sh++) {
            int r = SH[sh][0];
            for (int axis = -1; axis < r; axis++)
                for (int rg = 0; rg < 2; rg++) {
                    sm_pt p;
                    memset(&p, 0, sizeof p);
                    p.log = lg; p.rank = r; p.axis = axis; p.range = rg ? 20 : 1;
                    for (int i = 0; i < r; i++) p.d[i] = SH[sh][1 + i];
                    sm_emit(&gr, p, sh < SQ && (!rg || axis == -1));
                }
        }
    for (int dt = 0; dt < 2; dt++)
        for (int sh = 0; sh < 3; sh++) {
            static const int QS[3][4] = {{1, 10, 0, 0}, {2, 4, 16, 0}, {3, 2, 8, 9}};
            sm_pt p;
            memset(&p, 0, sizeof p);
            p.rank = sh + 1; p.axis = -1; p.range = 4; p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            for (int i = 0; i < p.rank; i++) p.d[i] = QS[sh][1 + i];
            sm_emit(&gr, p, 1);
        }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * upsample_nearest2d, upsample_bilinear2d
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct up_pt {
    int kind, n, c, h, w, by_scale, oh, ow, sh, sw, ac, edge, dt; /* sh, sw: indices into UP_SCALES */
} up_pt;

enum { UP_NEAREST, UP_BILINEAR, UP_NEAREST_EXACT, UP_BICUBIC, UP_KINDS };
static const char *const UP_OPS[UP_KINDS] = {"upsample_nearest2d", "upsample_bilinear2d", "upsample_nearest_exact2d",
                                             "upsample_bicubic2d"};
/* Scales: multiples of 1/4 (0..7, exact in binary), then others (1.3, 0.7, 1/3, 2.5, 1.1, 1.15, 2.05): their
 * coordinates are inexact in f32; 1.1 / 1.15 on small sizes give an output size equal to the input's (floor(5 * 1.1)
 * = 5) and 2.05 twice the input's below 20 (floor(5 * 2.05) = 10): the same-size rules of docs/ops.md. */
static const double UP_SCALES[] = {2.0, 1.5, 0.5, 3.0, 2.5, 1.25, 1.0, 0.75, 1.3, 0.7, 1.0 / 3.0, 4.0, 1.1, 1.15, 2.05};

static void up_emit(grid *gr, up_pt p, int quick)
{
    int interp = p.kind == UP_BILINEAR || p.kind == UP_BICUBIC;
    if (!interp) p.ac = 0;
    if (p.by_scale) {
        p.oh = (int)floor(p.h * UP_SCALES[p.sh]); /* floor(in * scale), as par_resize_sizes */
        p.ow = (int)floor(p.w * UP_SCALES[p.sw]);
    } else {
        p.sh = p.sw = 0;
    }
    if (p.oh < 1 || p.ow < 1) return;
    int64_t xd[4] = {p.n, p.c, p.h, p.w}, yd[4] = {p.n, p.c, p.oh, p.ow};
    int key_oh = p.oh, key_ow = p.ow;
    if (p.by_scale) p.oh = p.ow = 0; /* derived: not part of the point */
    int taken = grid_take(gr, &p, quick, su_max64(su_numel(4, xd), su_numel(4, yd)),
                          (p.kind == UP_BICUBIC ? 16 : 4) * su_numel(4, yd));
    p.oh = key_oh; p.ow = key_ow;
    if (!taken) return;
    const char *op = UP_OPS[p.kind];
    char xs[64], how[64], tail[32] = "";
    su_shape(xs, sizeof xs, 4, xd);
    if (p.by_scale)
        snprintf(how, sizeof how, "scale=[%g,%g]", UP_SCALES[p.sh], UP_SCALES[p.sw]);
    else
        snprintf(how, sizeof how, "size=[%d,%d]", p.oh, p.ow);
    if (interp) snprintf(tail, sizeof tail, ",ac=%d", p.ac);
    if (p.edge) snprintf(tail + strlen(tail), sizeof tail - strlen(tail), ",x=edge");
    if (p.dt) snprintf(tail + strlen(tail), sizeof tail - strlen(tail), ",dt=%s", su_dt((par_dtype)p.dt));
    par_case *c = par_sweep_case(gr->s, op, "%s(in=%s,%s%s)", op, xs, how, tail);
    if (!c) return;
    int64_t size[2] = {p.oh, p.ow};
    double scale[2] = {UP_SCALES[p.sh], UP_SCALES[p.sw]};
    par_attr at[2];
    int na = 0;
    at[na++] = p.by_scale ? par_a_floats("scale", 2, scale) : par_a_ints("size", 2, size);
    if (interp) at[na++] = par_a_int("align_corners", p.ac);
    su_unary_graph(c, op, (par_dtype)p.dt, 4, xd, p.edge ? su_edge(4.0) : su_uniform(-1.0, 1.0), na, at);
    par_sweep_done(gr->s, c);
}

void par_sweep_upsample(par_sweep *s)
{
    static const int IN[][2] = {{1, 1}, {3, 4}, {5, 5}, {7, 9}, {8, 8}, {16, 16}, {2, 13}, {32, 24}};
    enum { INQ = 3, INN = 8 };
    /* output sizes as a function of the input: 0 2x, 1 3x/2 rounded up, 2 halved, 3 same, 4 [1,1], 5 odd [2h+1,3w] */
    enum { OKQ = 5, OKN = 6 };
    /* scale pairs (indices into UP_SCALES): the first SCQ quick, then the inexact ones (SCX on) */
    static const int SC[][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 0}, {4, 5}, {6, 6}, {11, 11}, {7, 7},
                                {8, 8}, {9, 9}, {10, 10}, {8, 9}, {12, 12}, {13, 12}, {10, 4}, {14, 12}};
    enum { SCQ = 4, SCX = 8, SCN = 16 };
    grid gr;
    grid_init(&gr, s, sizeof(up_pt));
    for (int kind = 0; kind < UP_KINDS; kind++) {
        int interp = kind == UP_BILINEAR || kind == UP_BICUBIC;
        for (int ac = 0; ac <= interp; ac++)
            for (int i = 0; i < INN; i++) {
                for (int ok = 0; ok < OKN; ok++)
                    for (int ch = 0; ch < 2; ch++) {
                        up_pt p;
                        memset(&p, 0, sizeof p);
                        p.kind = kind; p.ac = ac; p.n = ch ? 2 : 1; p.c = ch ? 17 : 3; p.h = IN[i][0]; p.w = IN[i][1];
                        int h = p.h, w = p.w;
                        int oh[6] = {2 * h, (3 * h + 1) / 2, h / 2, h, 1, 2 * h + 1};
                        int ow[6] = {2 * w, (3 * w + 1) / 2, w / 2, w, 1, 3 * w};
                        p.oh = oh[ok]; p.ow = ow[ok];
                        up_emit(&gr, p, i < INQ && ok < OKQ && !ch);
                    }
                for (int sc = 0; sc < SCN; sc++) {
                    up_pt p;
                    memset(&p, 0, sizeof p);
                    p.kind = kind; p.ac = ac; p.n = 1; p.c = 3; p.h = IN[i][0]; p.w = IN[i][1];
                    p.by_scale = 1; p.sh = SC[sc][0]; p.sw = SC[sc][1];
                    /* quick: the first scales on the small inputs, the inexact ones on [5,5] and [7,9] */
                    up_emit(&gr, p, (i < INQ && sc < SCQ) || (sc >= SCX && (i == 2 || (i == 3 && sc < SCX + 4))));
                }
            }
    }
    /* Edge values for the selections (exact), quantized forms of nearest, nearest-exact and bilinear. */
    for (int kind = 0; kind < UP_KINDS; kind += 2)
        for (int i = 0; i < 3; i++) {
            up_pt p;
            memset(&p, 0, sizeof p);
            p.kind = kind; p.n = 1; p.c = 4; p.h = IN[i + 1][0]; p.w = IN[i + 1][1]; p.oh = 2 * p.h; p.ow = 3 * p.w;
            p.edge = 1;
            up_emit(&gr, p, 1);
        }
    static const int QK[3] = {UP_NEAREST, UP_BILINEAR, UP_NEAREST_EXACT};
    for (int bl = 0; bl < 3; bl++)
        for (int dt = 0; dt < 2; dt++)
            for (int i = 0; i < 2; i++) {
                up_pt p;
                memset(&p, 0, sizeof p);
                p.kind = QK[bl]; p.n = 1; p.c = 8; p.h = 5; p.w = 6; p.oh = 10; p.ow = 12; p.ac = i;
                p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
                if (p.kind != UP_BILINEAR && i) { p.oh = 7; p.ow = 9; }
                if (p.kind != UP_BILINEAR) p.ac = 0;
                up_emit(&gr, p, 1);
                /* by scale [2.05, 1.1] on [5,6]: [10, 6], twice and the same size (the rules of docs/ops.md) */
                p.by_scale = 1; p.sh = 14; p.sw = 12; p.ac = 0;
                up_emit(&gr, p, 1);
            }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * batch_norm
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct bn_pt {
    int rank, d[4], eps_k, small_var;
} bn_pt;

void par_sweep_batch_norm(par_sweep *s)
{
    static const int SH[][5] = {{4, 1, 3, 7, 7}, {4, 2, 8, 5, 5}, {4, 1, 17, 4, 4}, {4, 1, 16, 1, 1}, {2, 4, 10},
                                {3, 2, 5, 9},    {4, 1, 1, 8, 8}, {4, 4, 32, 9, 9}, {4, 1, 64, 28, 28}, {2, 8, 1000},
                                {3, 3, 33, 31},  {4, 2, 96, 14, 14}};
    enum { SQ = 7, SN = 12 };
    static const double EPS[3] = {1e-5, 1e-3, 0.1};
    grid gr;
    grid_init(&gr, s, sizeof(bn_pt));
    for (int sh = 0; sh < SN; sh++)
        for (int e = 0; e < 3; e++)
            for (int sv = 0; sv < 2; sv++) {
                bn_pt p;
                memset(&p, 0, sizeof p);
                p.rank = SH[sh][0]; p.eps_k = e; p.small_var = sv;
                for (int i = 0; i < p.rank; i++) p.d[i] = SH[sh][1 + i];
                int64_t xd[4];
                for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
                int quick = sh < SQ && (e == 0 || (e == 1 && sv == 0 && sh < 3)) && (sv == 0 || sh < 4);
                if (!grid_take(&gr, &p, quick, su_numel(p.rank, xd), 0)) continue;
                char xs[64];
                su_shape(xs, sizeof xs, p.rank, xd);
                par_case *c = par_sweep_case(s, "batch_norm", "batch_norm(x=%s,eps=%g,var=%s)", xs, EPS[e],
                                             sv ? "small" : "unit");
                if (!c) continue;
                /* Parameters in the ranges of trained networks: weight U[0.5, 1.5], bias and mean U[-0.1, 0.1],
                 * var U[0.5, 1.5]; "small" var U[0, 0.01] makes eps matter and the scale 1/sqrt(var + eps) large. */
                int64_t cd[1] = {p.d[1]};
                int32_t in[5];
                in[0] = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, su_uniform(-1.0, 1.0));
                in[1] = par_case_const(c, "weight", PAR_DTYPE_F32, 1, cd, su_uniform(0.5, 1.5));
                in[2] = par_case_const(c, "bias", PAR_DTYPE_F32, 1, cd, su_uniform(-0.1, 0.1));
                in[3] = par_case_const(c, "running_mean", PAR_DTYPE_F32, 1, cd, su_uniform(-0.1, 0.1));
                in[4] = par_case_const(c, "running_var", PAR_DTYPE_F32, 1, cd,
                                       sv ? su_uniform(0.0, 0.01) : su_uniform(0.5, 1.5));
                par_attr at[1] = {par_a_float("eps", EPS[e])};
                par_out_spec o = {"y", 0, 0.0f, 0};
                par_case_output(c, par_case_node(c, "batch_norm", 5, in, 1, at, &o));
                par_sweep_done(s, c);
            }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * quantize, dequantize
 * ------------------------------------------------------------------------------------------------------------- */
/* Quantization parameters: scale (exactly a float) and zero point per dtype. Power-of-two scales make x / scale
 * exact, so edge inputs (ties x.5) land on exact halves and test round-half-even. */
static const struct {
    double scale;
    int zp_u8, zp_s8;
} QP[] = {
    {2.0 / 255.0, 128, 0}, {0.5, 10, -20}, {1.0, 128, 0}, {0.1, 255, 127}, {0.0078125, 0, -128}, {0.03125, 77, 33},
};
enum { QPQ = 4, QPN = 6 };

typedef struct q_pt {
    int deq, rank, d[4], dt, qp, input, edge, sat;
} q_pt;

void par_sweep_quant(par_sweep *s)
{
    static const int SH[][5] = {{1, 1}, {1, 17}, {4, 1, 3, 7, 7}, {2, 5, 33}, {1, 1000}, {4, 2, 16, 9, 9}, {1, 4097}};
    enum { SQ = 4, SN = 7 };
    grid gr;
    grid_init(&gr, s, sizeof(q_pt));
    for (int deq = 0; deq < 2; deq++)
        for (int sh = 0; sh < SN; sh++)
            for (int dt = 0; dt < 2; dt++)
                for (int qp = 0; qp < QPN; qp++)
                    for (int v = 0; v < 3; v++) {
                        /* v: 0 uniform within the range, 1 edge values, 2 saturating (range 1.5x the type's);
                         * dequantize: 0 a round trip quantize -> dequantize, 1 a quantized graph input */
                        q_pt p;
                        memset(&p, 0, sizeof p);
                        p.deq = deq; p.rank = SH[sh][0]; p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8; p.qp = qp;
                        for (int i = 0; i < p.rank; i++) p.d[i] = SH[sh][1 + i];
                        if (deq && v == 2) continue;
                        if (deq) p.input = v == 1;
                        else { p.edge = v == 1; p.sat = v == 2; }
                        int64_t xd[4];
                        for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
                        int quick = sh < SQ && qp < QPQ && (sh < 2 || v == 0);
                        if (!grid_take(&gr, &p, quick, su_numel(p.rank, xd), 0)) continue;
                        const char *op = deq ? "dequantize" : "quantize";
                        double scale = QP[qp].scale;
                        int zp = dt ? QP[qp].zp_s8 : QP[qp].zp_u8;
                        double qmin = dt ? -128 : 0, qmax = qmin + 255;
                        double lo = scale * (qmin - zp), hi = scale * (qmax - zp);
                        const char *how = deq ? (p.input ? ",src=input" : ",src=quantize")
                                              : (p.edge ? ",x=edge" : p.sat ? ",x=sat" : "");
                        char xs[64];
                        su_shape(xs, sizeof xs, p.rank, xd);
                        par_case *c = par_sweep_case(s, op, "%s(x=%s,dt=%s,scale=%.9g,zp=%d%s)", op, xs,
                                                     su_dt((par_dtype)p.dt), scale, zp, how);
                        if (!c) continue;
                        par_out_spec qo = {"q", (par_dtype)p.dt, (float)scale, zp};
                        par_out_spec fo = {"y", PAR_DTYPE_F32, 0.0f, 0};
                        if (deq && p.input) {
                            int32_t q = par_case_input(c, "q", (par_dtype)p.dt, p.rank, xd, su_uniform(qmin, qmax));
                            par_case_quant(c, q, (float)scale, zp);
                            par_case_output(c, par_case_node(c, "dequantize", 1, &q, 0, NULL, &fo));
                        } else {
                            double m = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
                            par_gen g = p.edge ? su_edge(m) : p.sat ? su_uniform(1.5 * lo, 1.5 * hi) : su_uniform(lo, hi);
                            int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, g);
                            int32_t q = par_case_node(c, "quantize", 1, &x, 0, NULL, &qo);
                            if (deq)
                                par_case_output(c, par_case_node(c, "dequantize", 1, &q, 0, NULL, &fo));
                            else
                                par_case_output(c, q);
                        }
                        par_sweep_done(s, c);
                    }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Shape ops: concat, reshape, flatten, permute, pad, slice (all exact: edge-value variants)
 * ------------------------------------------------------------------------------------------------------------- */
enum { S_CONCAT, S_RESHAPE, S_FLATTEN, S_PERMUTE, S_PAD, S_SLICE, S_N };
static const char *const SHAPE_OPS[S_N] = {"concat", "reshape", "flatten", "permute", "pad", "slice"};
#define END_MAX 1000000 /* slice: end absent (the schema's default, INT64_MAX) */

/* a[]: concat: n, axis, sizes[4]; reshape: rank, dims[6]; flatten: start, end; permute: perm[4];
 * pad: pads[8], value index, mode (PAD_MODES); slice: dim, start, end, step. */
typedef struct sh_pt {
    int op, rank, d[6], a[12], edge, dt;
} sh_pt;

static const double PAD_VALUES[3] = {0.0, -1.5, 7.0};
static const char *const PAD_MODES[3] = {"constant", "reflect", "replicate"};

static int64_t slice_count(int64_t size, int64_t start, int64_t end, int64_t step)
{
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = start < 0 ? 0 : start > size ? size : start;
    end = end < 0 ? 0 : end > size ? size : end;
    return end > start ? (end - start + step - 1) / step : 0;
}

static void sh_emit(grid *gr, sh_pt p, int quick)
{
    int64_t xd[6], big = 0;
    char xs[64], args[160] = "", dts[24] = "";
    for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
    big = su_numel(p.rank, xd);
    su_shape(xs, sizeof xs, p.rank, xd);
    if (p.op == S_CONCAT) {
        int ax = p.a[1] < 0 ? p.a[1] + p.rank : p.a[1];
        int64_t tot = 0;
        size_t k = (size_t)snprintf(args, sizeof args, "x=[");
        for (int i = 0; i < p.a[0]; i++) {
            int64_t di[6];
            memcpy(di, xd, sizeof di);
            di[ax] = p.a[2 + i];
            tot += di[ax];
            char b[64];
            k += (size_t)snprintf(args + k, sizeof args - k, "%s%s", i ? "," : "", su_shape(b, sizeof b, p.rank, di));
        }
        snprintf(args + k, sizeof args - k, "],axis=%d", p.a[1]);
        big = tot; /* xd[ax] is 0 in the point: the sizes along the axis are per input */
        for (int i = 0; i < p.rank; i++)
            if (i != ax) big *= xd[i];
    } else if (p.op == S_RESHAPE) {
        int64_t t[6];
        for (int i = 0; i < p.a[0]; i++) t[i] = p.a[1 + i];
        char b[64];
        snprintf(args, sizeof args, "x=%s,shape=%s", xs, su_shape(b, sizeof b, p.a[0], t));
    } else if (p.op == S_FLATTEN) {
        snprintf(args, sizeof args, "x=%s,start=%d,end=%d", xs, p.a[0], p.a[1]);
    } else if (p.op == S_PERMUTE) {
        int64_t t[6];
        for (int i = 0; i < p.rank; i++) t[i] = p.a[i];
        char b[64];
        snprintf(args, sizeof args, "x=%s,perm=%s", xs, su_shape(b, sizeof b, p.rank, t));
    } else if (p.op == S_PAD) {
        int64_t t[8], n = 1;
        for (int i = 0; i < 2 * p.rank; i++) t[i] = p.a[i];
        for (int i = 0; i < p.rank; i++) n *= xd[i] + t[2 * i] + t[2 * i + 1];
        big = su_max64(big, n);
        char b[64];
        if (p.a[9])
            snprintf(args, sizeof args, "x=%s,pads=%s,mode=%s", xs, su_shape(b, sizeof b, 2 * p.rank, t),
                     PAD_MODES[p.a[9]]);
        else
            snprintf(args, sizeof args, "x=%s,pads=%s,value=%g", xs, su_shape(b, sizeof b, 2 * p.rank, t),
                     PAD_VALUES[p.a[8]]);
    } else {
        int dim = p.a[0] < 0 ? p.a[0] + p.rank : p.a[0];
        if (dim < 0 || dim >= p.rank || slice_count(xd[dim], p.a[1], p.a[2] == END_MAX ? INT64_MAX : p.a[2], p.a[3]) < 1)
            return;
        char e[24];
        if (p.a[2] == END_MAX) snprintf(e, sizeof e, "max");
        else snprintf(e, sizeof e, "%d", p.a[2]);
        snprintf(args, sizeof args, "x=%s,dim=%d,start=%d,end=%s,step=%d", xs, p.a[0], p.a[1], e, p.a[3]);
    }
    if (!grid_take(gr, &p, quick, big, 0)) return;
    if (p.edge) snprintf(dts, sizeof dts, ",x=edge");
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    const char *op = SHAPE_OPS[p.op];
    par_case *c = par_sweep_case(gr->s, op, "%s(%s%s)", op, args, dts);
    if (!c) return;

    int64_t ia[8];
    par_attr at[4];
    int na = 0, nin = 1;
    int32_t in[4];
    par_gen g = p.edge ? su_edge(8.0) : su_uniform(-1.0, 1.0);
    for (int i = 0; i < (p.op == S_CONCAT ? p.a[0] : 1); i++) {
        char name[8];
        int64_t di[6];
        memcpy(di, xd, sizeof di);
        if (p.op == S_CONCAT) di[p.a[1] < 0 ? p.a[1] + p.rank : p.a[1]] = p.a[2 + i];
        snprintf(name, sizeof name, "x%d", i);
        in[i] = p.dt ? su_qinput(c, name, (par_dtype)p.dt, p.rank, di, -1.0, 1.0)
                     : par_case_input(c, name, PAR_DTYPE_F32, p.rank, di, g);
    }
    switch (p.op) {
    case S_CONCAT: nin = p.a[0]; at[na++] = par_a_int("axis", p.a[1]); break;
    case S_RESHAPE:
        for (int i = 0; i < p.a[0]; i++) ia[i] = p.a[1 + i];
        at[na++] = par_a_ints("shape", p.a[0], ia);
        break;
    case S_FLATTEN: at[na++] = par_a_int("start_dim", p.a[0]); at[na++] = par_a_int("end_dim", p.a[1]); break;
    case S_PERMUTE:
        for (int i = 0; i < p.rank; i++) ia[i] = p.a[i];
        at[na++] = par_a_ints("perm", p.rank, ia);
        break;
    case S_PAD:
        for (int i = 0; i < 2 * p.rank; i++) ia[i] = p.a[i];
        at[na++] = par_a_ints("pads", 2 * p.rank, ia);
        if (p.a[9]) at[na++] = par_a_str("mode", PAD_MODES[p.a[9]]);
        else at[na++] = par_a_float("value", PAD_VALUES[p.a[8]]);
        break;
    default:
        at[na++] = par_a_int("dim", p.a[0]);
        at[na++] = par_a_int("start", p.a[1]);
        if (p.a[2] != END_MAX) at[na++] = par_a_int("end", p.a[2]);
        at[na++] = par_a_int("step", p.a[3]);
        break;
    }
    if (p.dt) {
        /* data movement: the output keeps the input's quantization */
        par_out_spec o = su_qout_spec("y_q", (par_dtype)p.dt, -1.0, 1.0);
        su_qoutput(c, par_case_node(c, op, nin, in, na, at, &o));
    } else {
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, op, nin, in, na, at, &o));
    }
    par_sweep_done(gr->s, c);
}

static const int SSH[][5] = {{1, 7},     {2, 3, 9},     {3, 2, 3, 5},       {4, 2, 3, 4, 5},   {4, 1, 8, 5, 5},
                             {1, 33},    {2, 16, 17},   {4, 1, 17, 9, 9},   {4, 2, 16, 12, 12}, {3, 4, 31, 8}};
enum { SSQ = 5, SSN = 10 };

static sh_pt sh_base(int op, int sh)
{
    sh_pt p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.rank = SSH[sh][0];
    for (int i = 0; i < p.rank; i++) p.d[i] = SSH[sh][1 + i];
    return p;
}

static void shape_concat(grid *gr)
{
    for (int sh = 0; sh < SSN; sh++)
        for (int axis = -1; axis < SSH[sh][0]; axis++)
            for (int n = 1; n <= 4; n++)
                for (int e = 0; e < 2; e++) {
                    sh_pt p = sh_base(S_CONCAT, sh);
                    int ax = axis < 0 ? axis + p.rank : axis;
                    p.a[0] = n; p.a[1] = axis; p.edge = e;
                    for (int i = 0; i < n; i++) p.a[2 + i] = i % 3 == 0 ? p.d[ax] : i % 3 == 1 ? 1 : p.d[ax] + 2;
                    for (int i = 0; i < 4; i++) p.d[i] = i < p.rank && i != ax ? p.d[i] : 0;
                    sh_emit(gr, p, sh < SSQ && (n == 2 || n == 3 || (n == 1 && sh == 3)) && (!e || axis == 1));
                }
}

static void shape_reshape(grid *gr)
{
    for (int sh = 0; sh < SSN; sh++)
        for (int t = 0; t < 6; t++)
            for (int e = 0; e < 2; e++) {
                sh_pt p = sh_base(S_RESHAPE, sh);
                int r = p.rank, n = 1;
                for (int i = 0; i < r; i++) n *= p.d[i];
                switch (t) {
                case 0: p.a[0] = 1; p.a[1] = -1; break;
                case 1: p.a[0] = 1; p.a[1] = n; break;
                case 2: if (r < 2) continue; p.a[0] = 2; p.a[1] = p.d[0]; p.a[2] = -1; break;
                case 3: if (r < 2) continue; p.a[0] = 2; p.a[1] = -1; p.a[2] = p.d[r - 1]; break;
                case 4: p.a[0] = r; for (int i = 0; i < r; i++) p.a[1 + i] = p.d[r - 1 - i]; break;
                default: p.a[0] = r + 2; p.a[1] = 1; for (int i = 0; i < r; i++) p.a[2 + i] = p.d[i]; p.a[r + 2] = 1; break;
                }
                p.edge = e;
                sh_emit(gr, p, sh < SSQ && (t < 3 || sh == 3) && (!e || t == 4));
            }
}

static void shape_flatten(grid *gr)
{
    static const int FL[][2] = {{1, -1}, {0, -1}, {-2, -1}, {1, 2}, {0, 0}, {0, 1}, {2, 3}};
    for (int sh = 0; sh < SSN; sh++)
        for (int f = 0; f < 7; f++) {
            sh_pt p = sh_base(S_FLATTEN, sh);
            int s0 = FL[f][0] < 0 ? FL[f][0] + p.rank : FL[f][0], e0 = FL[f][1] < 0 ? FL[f][1] + p.rank : FL[f][1];
            if (s0 < 0 || e0 >= p.rank || s0 > e0) continue;
            p.a[0] = FL[f][0]; p.a[1] = FL[f][1];
            sh_emit(gr, p, sh < SSQ && f < 5);
        }
}

static void shape_permute(grid *gr)
{
    for (int sh = 0; sh < SSN; sh++) {
        int r = SSH[sh][0], perm[4] = {0, 1, 2, 3};
        if (r < 2) continue;
        /* every permutation of 0..r-1 in lexicographic order (next_permutation) */
        for (;;) {
            sh_pt p = sh_base(S_PERMUTE, sh);
            for (int i = 0; i < r; i++) p.a[i] = perm[i];
            int ident = 1;
            for (int i = 0; i < r; i++) ident &= perm[i] == i;
            /* quick: all of rank 2 and 3; for rank 4 the layout changes NCHW <-> NHWC and a few others */
            int nhwc = r == 4 && ((perm[0] == 0 && perm[1] == 2 && perm[2] == 3 && perm[3] == 1) ||
                                  (perm[0] == 0 && perm[1] == 3 && perm[2] == 1 && perm[3] == 2) ||
                                  (perm[0] == 3 && perm[1] == 2 && perm[2] == 1 && perm[3] == 0) ||
                                  (perm[0] == 1 && perm[1] == 0 && perm[2] == 2 && perm[3] == 3));
            sh_emit(gr, p, sh < SSQ && (r < 4 || nhwc) && !(ident && r == 4));
            int i = r - 2;
            while (i >= 0 && perm[i] > perm[i + 1]) i--;
            if (i < 0) break;
            int j = r - 1;
            while (perm[j] < perm[i]) j--;
            int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
            for (int a = i + 1, b = r - 1; a < b; a++, b--) { t = perm[a]; perm[a] = perm[b]; perm[b] = t; }
        }
    }
}

/* Ranks 5 and 6 as models use them: channel shuffle (ShuffleNet: [N, g, C/g, H, W], swap the group axes) and pixel
 * shuffle (ESPCN / PixelShuffle: [N, C, r, r, H, W] -> [N, C, H, r, W, r]), then a few other rank-5/6 orders. */
static void shape_permute_high(grid *gr)
{
    static const int P[][14] = {
        /* rank, dims..., perm... */
        {5, 1, 2, 4, 5, 5, 0, 2, 1, 3, 4},             {5, 2, 4, 8, 7, 7, 0, 2, 1, 3, 4},
        {5, 1, 3, 16, 14, 14, 0, 2, 1, 3, 4},          {5, 2, 3, 4, 5, 6, 4, 3, 2, 1, 0},
        {5, 2, 3, 4, 5, 6, 0, 3, 4, 1, 2},             {6, 1, 3, 2, 2, 5, 5, 0, 1, 4, 2, 5, 3},
        {6, 2, 4, 3, 3, 4, 6, 0, 1, 4, 2, 5, 3},       {6, 1, 8, 4, 4, 8, 8, 0, 1, 4, 2, 5, 3},
        {6, 2, 3, 2, 3, 2, 3, 5, 4, 3, 2, 1, 0},       {6, 2, 3, 2, 3, 2, 3, 0, 2, 4, 1, 3, 5},
    };
    enum { PQ = 7, PN = 10 };
    for (int k = 0; k < PN; k++) {
        sh_pt p;
        memset(&p, 0, sizeof p);
        p.op = S_PERMUTE;
        p.rank = P[k][0];
        for (int i = 0; i < p.rank; i++) {
            p.d[i] = P[k][1 + i];
            p.a[i] = P[k][1 + p.rank + i];
        }
        sh_emit(gr, p, k < PQ && k != 2);
    }
}

static void shape_pad(grid *gr)
{
    for (int sh = 0; sh < SSN; sh++)
        for (int k = 0; k < 6; k++)
            for (int v = 0; v < 3; v++) {
                sh_pt p = sh_base(S_PAD, sh);
                int r = p.rank;
                /* 0 last dim (1,1); 1 last two dims (1,1) and (2,0); 2 first dim (1,0); 3 every dim (1,1);
                 * 4 none; 5 last dim (3,5) */
                switch (k) {
                case 0: p.a[2 * r - 2] = p.a[2 * r - 1] = 1; break;
                case 1: if (r < 2) continue; p.a[2 * r - 4] = p.a[2 * r - 3] = 1; p.a[2 * r - 2] = 2; break;
                case 2: p.a[0] = 1; break;
                case 3: for (int i = 0; i < 2 * r; i++) p.a[i] = 1; break;
                case 4: break;
                default: p.a[2 * r - 2] = 3; p.a[2 * r - 1] = 5; break;
                }
                p.a[8] = v;
                sh_emit(gr, p, sh < SSQ && (v == 0 || k == 1) && k != 5);
                if (v == 0 && k == 1) {
                    p.edge = 1;
                    sh_emit(gr, p, sh < SSQ);
                }
            }
}

/* reflect and replicate: per dimension, symmetric and asymmetric, up to the largest reflect pad (size - 1) */
static void shape_pad_modes(grid *gr)
{
    for (int sh = 0; sh < SSN; sh++)
        for (int mode = 1; mode < 3; mode++)
            for (int k = 0; k < 6; k++) {
                sh_pt p = sh_base(S_PAD, sh);
                int r = p.rank, last = p.d[r - 1] - 1, first = p.d[0] - 1;
                /* 0 last dim (1,1); 1 last dim (0,2); 2 last two dims (2,1),(1,0); 3 last dim maximal (size-1 both);
                 * 4 every dim (1,1) where size > 1; 5 first dim maximal begin, 1 at the end of the last dim */
                switch (k) {
                case 0: p.a[2 * r - 2] = p.a[2 * r - 1] = 1; break;
                case 1: p.a[2 * r - 1] = 2; break;
                case 2: if (r < 2) continue; p.a[2 * r - 4] = 2; p.a[2 * r - 3] = 1; p.a[2 * r - 2] = 1; break;
                case 3: p.a[2 * r - 2] = p.a[2 * r - 1] = last; break;
                case 4: for (int i = 0; i < r; i++) p.a[2 * i] = p.a[2 * i + 1] = p.d[i] > 1; break;
                default: p.a[0] = first; p.a[2 * r - 1] = 1; break;
                }
                int ok = 1, any = 0;
                for (int i = 0; i < 2 * r; i++) {
                    if (mode == 1 && p.a[i] >= p.d[i / 2]) ok = 0; /* reflect needs pad < size */
                    any |= p.a[i] != 0;
                }
                if (!ok || !any) continue;
                p.a[9] = mode;
                sh_emit(gr, p, sh < SSQ && k != 4);
                if (k == 2) {
                    p.edge = 1;
                    sh_emit(gr, p, sh < SSQ);
                }
            }
}

static void shape_slice(grid *gr)
{
    static const int SL[][3] = {{1, END_MAX, 1}, {0, END_MAX, 2}, {-3, END_MAX, 1}, {1, -1, 1},
                                {2, 100, 3},     {0, 1, 1},       {-100, 2, 1},     {3, END_MAX, 4}};
    for (int sh = 0; sh < SSN; sh++)
        for (int dim = -1; dim < SSH[sh][0]; dim++)
            for (int k = 0; k < 8; k++) {
                sh_pt p = sh_base(S_SLICE, sh);
                if (dim < 0 && k) continue; /* the negative dim is spelled once per shape */
                p.a[0] = dim;
                p.a[1] = SL[k][0]; p.a[2] = SL[k][1]; p.a[3] = SL[k][2];
                sh_emit(gr, p, sh < SSQ && k < 5);
            }
}

void par_sweep_shape(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(sh_pt));
    shape_concat(&gr);
    shape_reshape(&gr);
    shape_flatten(&gr);
    shape_permute(&gr);
    shape_permute_high(&gr);
    shape_pad(&gr);
    shape_pad_modes(&gr);
    shape_slice(&gr);
    /* Quantized forms of the ops that have one (all but pad). */
    for (int op = 0; op < S_N; op++) {
        if (op == S_PAD) continue;
        for (int dt = 0; dt < 2; dt++) {
            sh_pt p = sh_base(op, 4);
            p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            switch (op) {
            case S_CONCAT: p.a[0] = 2; p.a[1] = 1; p.a[2] = 8; p.a[3] = 3; p.d[1] = 0; break;
            case S_RESHAPE: p.a[0] = 2; p.a[1] = 8; p.a[2] = -1; break;
            case S_FLATTEN: p.a[0] = 1; p.a[1] = -1; break;
            case S_PERMUTE: p.a[0] = 0; p.a[1] = 2; p.a[2] = 3; p.a[3] = 1; break;
            default: p.a[0] = 1; p.a[1] = 2; p.a[2] = END_MAX; p.a[3] = 2; break;
            }
            sh_emit(&gr, p, 1);
        }
    }
    grid_free(&gr);
}
