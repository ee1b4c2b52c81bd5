/*
 * qd8.c - sweep specs of linear_qd8 and matmul_qd8 (docs/quantization.md, "Dynamic int8 activations (qd8)"): x f32
 * quantized at run time to int8 per row (token) or per tensor, qs8 weights per channel or per tensor (symmetric),
 * f32 out; linear with and without bias, matmul with batch dimensions over a constant [K, N]. Hazards: all-zero rows
 * among ordinary ones (a row of the empty range, scale 1, per token; zeros that quantize to the zero point, per
 * tensor), an all-zero x, one huge element per row (the rest of the row quantizes to the zero point or next to it),
 * large values of both signs that cancel, rows of one equal value, the extreme weights -128 and 127 everywhere, and
 * exact ties: every row holds -127.5 and 127.5 (range 255: inv = 1, x inv = x) and otherwise half-integers, so every
 * element and the zero point (-0.5) is a tie, which a backend that promises the rule's integers (strict) must round
 * half to even.
 *
 * It must not encode expected results; it only describes cases.
 */
#include "sweep_util.h"
#include "core/prng.h"

#include <stdlib.h>

typedef struct qd8_pt {
    int mm, per_tensor, batch, rows, k, o, bias, pc, xr, wr; /* xr: XR below; wr: 0 any, 1 all -128, 2 all 127 */
} qd8_pt;

enum { XR_ANY, XR_ZERO_ROWS, XR_ZERO, XR_HUGE, XR_CANCEL, XR_EQUAL, XR_TIES, XR_N };
static const char *const XR[XR_N] = {"[-1,1]", "zero_rows", "zero", "huge", "cancel", "all_equal", "ties"};

/* The values of the hazards that no generator draws: zero rows, one huge element per row, ties (see the top). */
static int32_t qd8_x_data(par_case *c, int xr, int rank, const int64_t *xd, int64_t rows, int64_t k)
{
    float *v = malloc(sizeof *v * (size_t)(rows * k + 1));
    if (!v) {
        c->status = par_msgf(&c->err, PAR_ERROR, "out of memory");
        return -1;
    }
    par_prng r;
    par_prng_seed(&r, par_hash_str("x", c->seed));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < k; j++) {
            float *e = &v[i * k + j];
            *e = (float)(2.0 * par_prng_uniform(&r) - 1.0);
            if (xr == XR_ZERO_ROWS && i % 2 == 0) *e = 0.0f;
            if (xr == XR_HUGE && j == (i * 5) % k) *e = i % 2 ? -1.0e4f : 1.0e4f;
            if (xr == XR_TIES)
                *e = j == 0 ? -127.5f : j == 1 ? 127.5f : (float)((j * 37 + i * 11) % 255 - 127) + 0.5f;
        }
    int32_t id = par_case_input_data(c, "x", PAR_DTYPE_F32, rank, xd, v);
    free(v);
    return id;
}

static void qd8_emit(grid *gr, qd8_pt p, int quick)
{
    /* linear: x [rows, K] (batch > 1: [batch, rows, K]), w [O, K]; matmul: a [batch, rows, K], b [K, O] */
    int64_t xd[3], wd[2] = {p.mm ? p.k : p.o, p.mm ? p.o : p.k}, bd[1] = {p.o};
    int rank = 0;
    if (p.batch > 1 || p.mm) xd[rank++] = p.batch;
    xd[rank++] = p.rows;
    xd[rank++] = p.k;
    const int64_t rows = (int64_t)p.batch * p.rows;
    if (!grid_take(gr, &p, quick, su_max64(rows * p.k, (int64_t)p.o * p.k), rows * p.k * p.o)) return;
    static const char *const WR[3] = {"", ",w=-128", ",w=127"};
    const char *op = p.mm ? "matmul_qd8" : "linear_qd8";
    char xs[64], ws[64];
    su_shape(xs, sizeof xs, rank, xd);
    su_shape(ws, sizeof ws, 2, wd);
    par_case *c = p.mm ? par_sweep_case(gr->s, op, "%s(a=%s,b=%s,per=%s,wq=%s,x=%s%s)", op, xs, ws,
                                        p.per_tensor ? "tensor" : "token", p.pc ? "pc" : "pt", XR[p.xr], WR[p.wr])
                       : par_sweep_case(gr->s, op, "%s(in=%s,w=%s,bias=%d,per=%s,wq=%s,x=%s%s)", op, xs, ws, p.bias,
                                        p.per_tensor ? "tensor" : "token", p.pc ? "pc" : "pt", XR[p.xr], WR[p.wr]);
    if (!c) return;
    int32_t in[3] = {-1, -1, -1};
    if (p.xr == XR_ZERO_ROWS || p.xr == XR_HUGE || p.xr == XR_TIES) {
        in[0] = qd8_x_data(c, p.xr, rank, xd, rows, p.k);
    } else {
        par_gen gx = su_uniform(-1.0, 1.0);
        if (p.xr == XR_ZERO) gx = (par_gen){.dist = PAR_DIST_CONST, .a = 0, .b = 0};
        if (p.xr == XR_CANCEL) gx = (par_gen){.dist = PAR_DIST_HAZARD, .a = -1, .b = 1, .hazard = PAR_HAZARD_CANCEL};
        if (p.xr == XR_EQUAL) gx = (par_gen){.dist = PAR_DIST_HAZARD, .a = -2, .b = 2, .hazard = PAR_HAZARD_ALL_EQUAL};
        in[0] = par_case_input(c, "x", PAR_DTYPE_F32, rank, xd, gx);
    }
    /* weights q in [-127, 127] (or all one extreme), real range about +-1/sqrt(K): a unit-range row keeps unit range */
    par_gen gw = {.dist = PAR_DIST_UNIFORM, .a = -127, .b = 127};
    if (p.wr) gw = (par_gen){.dist = PAR_DIST_CONST, .a = p.wr == 1 ? -128 : 127};
    in[1] = par_case_const(c, "w", PAR_DTYPE_QS8, 2, wd, gw);
    const float s = (float)(1.0 / (127.0 * sqrt((double)p.k)));
    if (p.pc)
        su_channel_quant(c, in[1], p.mm ? 1 : 0, p.o, s);
    else
        par_case_quant(c, in[1], s, 0);
    if (p.bias) in[2] = par_case_const(c, "b", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5));
    par_attr at[1] = {par_a_str("per", p.per_tensor ? "tensor" : "token")};
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, op, p.bias ? 3 : 2, in, 1, at, &o));
    par_sweep_done(gr->s, c);
}

/* Both ops (matmul_qd8's column of the op table is par_sweep_none). */
void par_sweep_linear_qd8(par_sweep *s)
{
    static const int SH[][4] = {{1, 4, 16, 8}, {1, 1, 33, 10}, {2, 3, 64, 17}, {1, 5, 9, 9},
                                {1, 8, 128, 32}, {3, 16, 256, 64}, {1, 1, 1000, 10}, {2, 33, 512, 31}};
    enum { SQ = 4, SN = 8 };
    grid gr;
    grid_init(&gr, s, sizeof(qd8_pt));
    for (int mm = 0; mm < 2; mm++)
        for (int pt = 0; pt < 2; pt++) {
            for (int sh = 0; sh < SN; sh++)
                for (int pc = 0; pc < 2; pc++)
                    for (int bias = 0; bias < 2 - mm; bias++) {
                        qd8_pt p = {mm, pt, SH[sh][0], SH[sh][1], SH[sh][2], SH[sh][3], bias, pc, XR_ANY, 0};
                        qd8_emit(&gr, p, sh < SQ && pc == 1 && bias == !mm);
                    }
            for (int xr = 1; xr < XR_N; xr++) {
                qd8_pt p = {mm, pt, 2, 4, 64, 16, !mm, 1, xr, 0};
                qd8_emit(&gr, p, 1);
            }
            for (int wr = 1; wr < 3; wr++) {
                qd8_pt p = {mm, pt, 1, 4, 64, 16, !mm, 1, wr == 1 ? XR_TIES : XR_ANY, wr};
                qd8_emit(&gr, p, 1);
                qd8_emit(&gr, (qd8_pt){mm, pt, 1, 8, 256, 16, 0, 0, XR_HUGE, wr}, 0);
            }
        }
    grid_free(&gr);
}
