/*
 * test_ref_conv.c - tests of the reference conv2d, conv_transpose2d, linear and matmul (reference/conv.c,
 * reference/matrix.c): hand-computed cases, independent formulations (im2col + matmul, the adjoint identity,
 * linear vs matmul), error budgets (non-negative, and sound against a float32 computation in another summation
 * order), and shape-inference errors. The reference is the ground truth, so these tests are strict: exact equality
 * where the numbers are exact, 1e-12 relative where an independent formulation sums in another order.
 *
 * Kernels are called directly on a one-node graph view (tests/ref_helpers.h); tests/test_ref_pool.c runs a chain of
 * these ops through the graph builder and the interpreter.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

/* ---- attributes ---------------------------------------------------------------------------------------------- */

/* Attributes of conv2d (transpose = 0) or conv_transpose2d (transpose = 1): every schema attribute present. */
typedef struct conv_p {
    int64_t s[2], p[4], d[2], op[2], groups;
    const char *mode;
} conv_p;

static int32_t conv_attrs(const conv_p *c, int transpose, par_attr *a)
{
    int32_t n = 0;
    a[n++] = par_a_ints("stride", 2, c->s);
    a[n++] = par_a_ints("padding", 4, c->p);
    a[n++] = par_a_ints("dilation", 2, c->d);
    a[n++] = par_a_int("groups", c->groups);
    if (transpose) a[n++] = par_a_ints("output_padding", 2, c->op);
    else a[n++] = par_a_str("pad_mode", c->mode ? c->mode : "explicit");
    return n;
}

static const conv_p CONV_DEFAULT = {{1, 1}, {0, 0, 0, 0}, {1, 1}, {0, 0}, 1, "explicit"};

static par_status conv(const conv_p *p, par_rt *x, par_rt *w, par_rt *b, const par_prec *prec, par_rt **y,
                       par_msg *msg)
{
    par_attr a[8];
    par_rt *in[3] = {x, w, b};
    return run_opq(par_infer_conv2d, par_ref_conv2d, "conv2d", 3, in, a, conv_attrs(p, 0, a), prec, NULL, y, msg);
}

static par_status convt(const conv_p *p, par_rt *x, par_rt *w, par_rt *b, const par_prec *prec, par_rt **y,
                        par_msg *msg)
{
    par_attr a[8];
    par_rt *in[3] = {x, w, b};
    return run_opq(par_infer_conv_transpose2d, par_ref_conv_transpose2d, "conv_transpose2d", 3, in, a,
                  conv_attrs(p, 1, a), prec, NULL, y, msg);
}

/* conv2d without bias of x [xd] = xv by w [wd] = wv, in float32: exactly shape yd and values want. */
static void expect_conv(const conv_p *p, const int64_t *xd, const double *xv, const int64_t *wd, const double *wv,
                        const int64_t *yd, const double *want)
{
    par_rt *x = rt_of(4, xd, xv), *w = rt_of(4, wd, wv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(conv(p, x, w, NULL, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd, want);
    rt_del(x), rt_del(w), rt_del(y);
}

/* ---- hand-computed cases ------------------------------------------------------------------------------------ */

/* x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]], bias 0.5, padding 1 all round, stride 2:
 * OH = floor((3 + 2 - 1 - 1) / 2) + 1 = 2. Window origins (oh*2 - 1, ow*2 - 1):
 *   (-1,-1): only x[0][0]=1 under w[1][1]=4                -> 4 + 0.5 = 4.5
 *   (-1, 1): x[0][1]=2 * w[1][0]=3 + x[0][2]=3 * w[1][1]=4 -> 18 + 0.5 = 18.5
 *   ( 1,-1): x[1][0]=4 * w[0][1]=2 + x[2][0]=7 * w[1][1]=4 -> 36 + 0.5 = 36.5
 *   ( 1, 1): 5*1 + 6*2 + 8*3 + 9*4 = 77                    -> 77.5 */
static void test_conv2d_pad_stride_bias(void)
{
    int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {1, 1, 2, 2}, bd[1] = {1}, yd[4] = {1, 1, 2, 2};
    double xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv[4] = {1, 2, 3, 4}, bv[1] = {0.5};
    double want[4] = {4.5, 18.5, 36.5, 77.5};
    par_rt *x = rt_of(4, xd, xv), *w = rt_of(4, wd, wv), *b = rt_of(1, bd, bv), *y;
    conv_p p = CONV_DEFAULT;
    p.s[0] = p.s[1] = 2;
    p.p[0] = p.p[1] = p.p[2] = p.p[3] = 1;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(conv(&p, x, w, b, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd, want);
    /* Budget of (1,1): 4 products + bias, gamma_5 * (77 + 0.5) rounding, then storage of 77.5. */
    double pre = par_gamma(5, 0x1p-24) * 77.5;
    CU_ASSERT_DOUBLE_EQUAL(y->e[3], pre + 0x1p-24 * (77.5 + pre), 1e-20);
    /* Budget of (0,0): one product + bias. */
    pre = par_gamma(2, 0x1p-24) * 4.5;
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], pre + 0x1p-24 * (4.5 + pre), 1e-20);
    rt_del(x), rt_del(w), rt_del(b), rt_del(y);
}

/* Depthwise, multiplier 2: x ch0 = [[1,2],[3,4]], ch1 = [[5,6],[7,8]]; groups 2, O = 4, 2x2 kernels, no padding:
 *   o0 (ch0) w = [[1,0],[0,0]]  -> 1
 *   o1 (ch0) w = [[1,1],[1,1]]  -> 10
 *   o2 (ch1) w = [[0,0],[0,1]]  -> 8
 *   o3 (ch1) w = [[2,0],[0,-1]] -> 10 - 8 = 2 */
static void test_conv2d_depthwise_multiplier(void)
{
    int64_t xd[4] = {1, 2, 2, 2}, wd[4] = {4, 1, 2, 2}, yd[4] = {1, 4, 1, 1};
    double xv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double wv[16] = {1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 2, 0, 0, -1};
    double want[4] = {1, 10, 8, 2};
    conv_p p = CONV_DEFAULT;
    p.groups = 2;
    expect_conv(&p, xd, xv, wd, wv, yd, want);
}

/* groups = 2, C = 4, O = 2, 1x1: x = [1,2,3,4]; o0 sees channels 0,1 with w [10,100] -> 210;
 * o1 sees channels 2,3 with w [1000,10000] -> 3000 + 40000 = 43000. */
static void test_conv2d_groups2(void)
{
    int64_t xd[4] = {1, 4, 1, 1}, wd[4] = {2, 2, 1, 1}, yd[4] = {1, 2, 1, 1};
    double xv[4] = {1, 2, 3, 4}, wv[4] = {10, 100, 1000, 10000}, want[2] = {210, 43000};
    conv_p p = CONV_DEFAULT;
    p.groups = 2;
    expect_conv(&p, xd, xv, wd, wv, yd, want);
}

/* Dilation 2 along W: x = [1,2,3,4,5], w = [1,10], extent 3, OW = 3: y[i] = x[i] + 10 x[i+2] = 31, 42, 53. */
static void test_conv2d_dilation(void)
{
    int64_t xd[4] = {1, 1, 1, 5}, wd[4] = {1, 1, 1, 2}, yd[4] = {1, 1, 1, 3};
    double xv[5] = {1, 2, 3, 4, 5}, wv[2] = {1, 10}, want[3] = {31, 42, 53};
    conv_p p = CONV_DEFAULT;
    p.d[1] = 2;
    expect_conv(&p, xd, xv, wd, wv, yd, want);
}

/* pad_mode along W = 4, kernel 3 of ones, stride 2, x = [1,2,3,4]:
 *   same:  out = ceil(4/2) = 2, total = max(0, 1*2 + 3 - 4) = 1, begin 0, end 1: windows [0,3) = 6, [2,5) = 7;
 *   valid: out = ceil((4 - 2) / 2) = 1: [6]. The explicit padding given (3 everywhere) is ignored by both. */
static void test_conv2d_pad_modes(void)
{
    int64_t xd[4] = {1, 1, 1, 4}, wd[4] = {1, 1, 1, 3}, yd_same[4] = {1, 1, 1, 2}, yd_valid[4] = {1, 1, 1, 1};
    double xv[4] = {1, 2, 3, 4}, wv[3] = {1, 1, 1}, want_same[2] = {6, 7}, want_valid[1] = {6};
    conv_p p = CONV_DEFAULT;
    p.s[1] = 2;
    p.p[0] = p.p[1] = p.p[2] = p.p[3] = 3;
    p.mode = "same";
    expect_conv(&p, xd, xv, wd, wv, yd_same, want_same);
    p.mode = "valid";
    expect_conv(&p, xd, xv, wd, wv, yd_valid, want_valid);
}

/* conv_transpose2d:
 *  (a) x = [[1,2],[3,4]], w = ones 2x2, stride 2, output_padding [1,0], bias 0.25: OH = (2-1)*2 + 1 + 1 + 1 = 5,
 *      OW = 4; every input scatters a 2x2 block, the extra last row only has the bias.
 *  (b) stride 1, w = [[1,2],[3,4]]: the full convolution, OH = 3:
 *      [[1, 1*2+2*1, 2*2], [1*3+3*1, 1*4+2*3+3*2+4*1, 2*4+4*2], [3*3, 3*4+4*3, 4*4]] = [[1,4,4],[6,20,16],[9,24,16]].
 *  (c) as (b) with padding 1 all round: the centre, [[20]]. */
static void test_conv_transpose2d_small(void)
{
    int64_t xd[4] = {1, 1, 2, 2}, wd[4] = {1, 1, 2, 2}, bd[1] = {1};
    double xv[4] = {1, 2, 3, 4}, ones[4] = {1, 1, 1, 1}, wv[4] = {1, 2, 3, 4}, bv[1] = {0.25};
    par_rt *x = rt_of(4, xd, xv), *w1 = rt_of(4, wd, ones), *w = rt_of(4, wd, wv), *b = rt_of(1, bd, bv), *y;
    par_msg msg;
    conv_p p = CONV_DEFAULT;
    p.s[0] = p.s[1] = 2;
    p.op[0] = 1;
    int64_t yda[4] = {1, 1, 5, 4};
    double wa[20] = {1.25, 1.25, 2.25, 2.25, 1.25, 1.25, 2.25, 2.25, 3.25, 3.25, 4.25, 4.25,
                     3.25, 3.25, 4.25, 4.25, 0.25, 0.25, 0.25, 0.25};
    CU_ASSERT_EQUAL_FATAL(convt(&p, x, w1, b, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, yda, wa);
    rt_del(y);

    p = CONV_DEFAULT;
    int64_t ydb[4] = {1, 1, 3, 3};
    double wb[9] = {1, 4, 4, 6, 20, 16, 9, 24, 16};
    CU_ASSERT_EQUAL_FATAL(convt(&p, x, w, NULL, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, ydb, wb);
    rt_del(y);

    p.p[0] = p.p[1] = p.p[2] = p.p[3] = 1;
    int64_t ydc[4] = {1, 1, 1, 1};
    double wc[1] = {20};
    CU_ASSERT_EQUAL_FATAL(convt(&p, x, w, NULL, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, ydc, wc);
    rt_del(y);
    rt_del(x), rt_del(w1), rt_del(w), rt_del(b);
}

/* linear: x = [[1,2,3],[4,5,6]], w = [[1,0,-1],[2,1,0]], b = [0.5,-1]:
 *   row 0: [1 - 3 + 0.5, 2 + 2 - 1] = [-1.5, 3]; row 1: [4 - 6 + 0.5, 8 + 5 - 1] = [-1.5, 12]. */
static void test_linear_hand(void)
{
    int64_t xd[2] = {2, 3}, wd[2] = {2, 3}, bd[1] = {2}, yd[2] = {2, 2};
    double xv[6] = {1, 2, 3, 4, 5, 6}, wv[6] = {1, 0, -1, 2, 1, 0}, bv[2] = {0.5, -1}, want[4] = {-1.5, 3, -1.5, 12};
    par_rt *in[3] = {rt_of(2, xd, xv), rt_of(2, wd, wv), rt_of(1, bd, bv)}, *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_linear, par_ref_linear, "linear", 3, in, NULL, 0, &y, &msg), PAR_OK);
    expect_exact(y, 2, yd, want);
    rt_del(y);
    for (int i = 0; i < 3; i++) rt_del(in[i]);
}

/* matmul with broadcast batch: a [2,1,2,2] = {I, [[0,1],[1,0]]}, b [3,2,2] with b[j] = [[j,1],[2,j]]:
 * y [2,3,2,2]: y[0][j] = b[j], y[1][j] = b[j] with its rows swapped = [[2,j],[j,1]]. */
static void test_matmul_broadcast(void)
{
    int64_t ad[4] = {2, 1, 2, 2}, bd[3] = {3, 2, 2}, yd[4] = {2, 3, 2, 2};
    double av[8] = {1, 0, 0, 1, 0, 1, 1, 0}, bv[12], want[24];
    for (int j = 0; j < 3; j++) {
        double m[4] = {j, 1, 2, j}, s[4] = {2, j, j, 1};
        memcpy(&bv[4 * j], m, sizeof m);
        memcpy(&want[4 * j], m, sizeof m);
        memcpy(&want[12 + 4 * j], s, sizeof s);
    }
    par_rt *in[2] = {rt_of(4, ad, av), rt_of(3, bd, bv)}, *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_matmul, par_ref_matmul, "matmul", 2, in, NULL, 0, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd, want);
    rt_del(y);
    /* The other way round: a [3,2,2] (the b above) times b [2,1,2,2] (the a above) gives [2,3,2,2]:
     * b[j] I = b[j], and b[j] times the swap = b[j] with its columns swapped = [[1,j],[j,2]]. */
    par_rt *in2[2] = {in[1], in[0]};
    double want2[24];
    for (int j = 0; j < 3; j++) {
        double m[4] = {j, 1, 2, j}, s[4] = {1, j, j, 2};
        memcpy(&want2[4 * j], m, sizeof m);
        memcpy(&want2[12 + 4 * j], s, sizeof s);
    }
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_matmul, par_ref_matmul, "matmul", 2, in2, NULL, 0, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd, want2);
    rt_del(y);
    rt_del(in[0]), rt_del(in[1]);
}

/* ---- independent formulations ------------------------------------------------------------------------------ */

/* NNAPI padding for pad_mode same, written out again here. */
static void same_pads(int64_t in, int64_t k, int64_t s, int64_t d, int64_t *b, int64_t *e)
{
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + (k - 1) * d + 1 - in;
    if (total < 0) total = 0;
    *b = total / 2;
    *e = total - *b;
}

/* conv2d as im2col + matmul per group: cols[(c, kh, kw)][(oh, ow)] holds the input under each tap (0 in the
 * padding), y_g = W_g [Og x (Cg KH KW)] * cols_g. */
static void im2col_conv(const par_rt *x, const par_rt *w, const par_rt *b, int64_t groups, const int64_t *s,
                        const int64_t *d, const int64_t *pad, int64_t oh_n, int64_t ow_n, double *y)
{
    int64_t n_ = x->dims[0], c_ = x->dims[1], h_ = x->dims[2], w_ = x->dims[3];
    int64_t o_ = w->dims[0], kh_ = w->dims[2], kw_ = w->dims[3], cg = c_ / groups, og = o_ / groups;
    int64_t rows = cg * kh_ * kw_, cols = oh_n * ow_n;
    double *col = calloc((size_t)(rows * cols), sizeof(double));
    for (int64_t n = 0; n < n_; n++)
        for (int64_t g = 0; g < groups; g++) {
            for (int64_t r = 0; r < rows; r++) {
                int64_t c = r / (kh_ * kw_), kh = (r / kw_) % kh_, kw = r % kw_;
                for (int64_t q = 0; q < cols; q++) {
                    int64_t ih = (q / ow_n) * s[0] - pad[0] + kh * d[0], iw = (q % ow_n) * s[1] - pad[1] + kw * d[1];
                    col[r * cols + q] = (ih >= 0 && ih < h_ && iw >= 0 && iw < w_)
                                            ? x->v[((n * c_ + g * cg + c) * h_ + ih) * w_ + iw] : 0.0;
                }
            }
            for (int64_t o = g * og; o < (g + 1) * og; o++)
                for (int64_t q = 0; q < cols; q++) {
                    double acc = b ? b->v[o] : 0.0;
                    for (int64_t r = 0; r < rows; r++) acc += w->v[o * rows + r] * col[r * cols + q];
                    y[(n * o_ + o) * cols + q] = acc;
                }
        }
    free(col);
}

static void test_conv2d_vs_im2col(void)
{
    const uint64_t seed = 20240611;
    uint64_t s = seed;
    int ran = 0, bad = 0, kinds[4] = {0};
    for (int it = 0; it < 300 && bad == 0; it++) {
        int kind = (int)rng_int(&s, 0, 3); /* 0 groups 1, 1 grouped, 2 depthwise with multiplier, 3 pad modes */
        int64_t groups = kind == 1 ? rng_int(&s, 2, 3) : 1, cg = rng_int(&s, 1, 3);
        int64_t c = kind == 2 ? rng_int(&s, 1, 4) : groups * cg;
        if (kind == 2) groups = c;
        int64_t o = groups * rng_int(&s, 1, 3);
        conv_p p = CONV_DEFAULT;
        p.groups = groups;
        for (int i = 0; i < 2; i++) {
            p.s[i] = rng_int(&s, 1, 3);
            p.d[i] = rng_int(&s, 1, 3);
        }
        for (int i = 0; i < 4; i++) p.p[i] = rng_int(&s, 0, 3);
        p.mode = kind == 3 ? (rng_int(&s, 0, 1) ? "same" : "valid") : "explicit";
        int64_t xd[4] = {rng_int(&s, 1, 2), c, rng_int(&s, 1, 9), rng_int(&s, 1, 9)};
        int64_t wd[4] = {o, c / groups, rng_int(&s, 1, 4), rng_int(&s, 1, 4)}, bd[1] = {o};
        par_rt *x = rt_rand(4, xd, &s), *w = rt_rand(4, wd, &s), *b = rng_int(&s, 0, 1) ? rt_rand(1, bd, &s) : NULL;
        int64_t pad[4] = {p.p[0], p.p[1], p.p[2], p.p[3]};
        if (kind == 3 && strcmp(p.mode, "same") == 0) {
            same_pads(xd[2], wd[2], p.s[0], p.d[0], &pad[0], &pad[2]);
            same_pads(xd[3], wd[3], p.s[1], p.d[1], &pad[1], &pad[3]);
        } else if (kind == 3) {
            pad[0] = pad[1] = pad[2] = pad[3] = 0;
        }
        int64_t oh = (xd[2] + pad[0] + pad[2] - p.d[0] * (wd[2] - 1) - 1);
        int64_t ow = (xd[3] + pad[1] + pad[3] - p.d[1] * (wd[3] - 1) - 1);
        par_msg msg;
        par_rt *y = NULL;
        par_status st = conv(&p, x, w, b, &F32, &y, &msg);
        if (oh < 0 || ow < 0) {
            /* Output size below 1: the reference must refuse and name the attributes. */
            if (st != PAR_ERROR || !strstr(msg.text, "'padding'")) {
                fprintf(stderr, "\n  seed=%llu it=%d: expected an output-size error, got %d '%s'",
                        (unsigned long long)seed, it, (int)st, msg.text);
                bad++;
            }
        } else if (st != PAR_OK) {
            fprintf(stderr, "\n  seed=%llu it=%d: %s", (unsigned long long)seed, it, msg.text);
            bad++;
        } else {
            oh = oh / p.s[0] + 1;
            ow = ow / p.s[1] + 1;
            CU_ASSERT_EQUAL(y->dims[2], oh);
            CU_ASSERT_EQUAL(y->dims[3], ow);
            double *ref = calloc((size_t)y->numel, sizeof(double));
            im2col_conv(x, w, b, groups, p.s, p.d, pad, oh, ow, ref);
            for (int64_t i = 0; i < y->numel && y->dims[2] == oh && y->dims[3] == ow; i++) {
                double scale = 1.0 + fabs(ref[i]);
                if (fabs(y->v[i] - ref[i]) > 1e-12 * scale) {
                    fprintf(stderr, "\n  seed=%llu it=%d element %lld: %.17g vs im2col %.17g",
                            (unsigned long long)seed, it, (long long)i, y->v[i], ref[i]);
                    bad++;
                    break;
                }
            }
            if (!budgets_ok(y)) bad++;
            free(ref);
            ran++;
            kinds[kind]++;
        }
        rt_del(x), rt_del(w), rt_del(b), rt_del(y);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(ran >= 150);
    for (int k = 0; k < 4; k++) CU_ASSERT(kinds[k] >= 20);
}

/* <conv2d(x), y> == <x, conv_transpose2d(y)> with the same weight tensor: conv2d's weight [O, C/g, KH, KW] is
 * conv_transpose2d's [C', O'/g, KH, KW] with C' = O and O' = C. output_padding restores H exactly: it is the
 * remainder of conv2d's floor division, which is < stride. */
static void test_conv_transpose2d_adjoint(void)
{
    const uint64_t seed = 77;
    uint64_t s = seed;
    int ran = 0, bad = 0;
    for (int it = 0; it < 200 && !bad; it++) {
        int64_t groups = rng_int(&s, 1, 3), cg = rng_int(&s, 1, 3), og = rng_int(&s, 1, 3);
        conv_p p = CONV_DEFAULT;
        p.groups = groups;
        for (int i = 0; i < 2; i++) {
            p.s[i] = rng_int(&s, 1, 3);
            p.d[i] = rng_int(&s, 1, 2);
        }
        for (int i = 0; i < 4; i++) p.p[i] = rng_int(&s, 0, 2);
        int64_t xd[4] = {rng_int(&s, 1, 2), groups * cg, rng_int(&s, 1, 8), rng_int(&s, 1, 8)};
        int64_t wd[4] = {groups * og, cg, rng_int(&s, 1, 3), rng_int(&s, 1, 3)};
        par_rt *x = rt_rand(4, xd, &s), *w = rt_rand(4, wd, &s), *cx = NULL, *ty = NULL;
        par_msg msg;
        if (conv(&p, x, w, NULL, &F32, &cx, &msg) != PAR_OK) {
            rt_del(x), rt_del(w);
            continue;
        }
        par_rt *y = rt_rand(4, cx->dims, &s);
        for (int i = 0; i < 2; i++)
            p.op[i] = (xd[2 + i] + p.p[i] + p.p[i + 2] - p.d[i] * (wd[2 + i] - 1) - 1) % p.s[i];
        if (convt(&p, y, w, NULL, &F32, &ty, &msg) != PAR_OK) {
            fprintf(stderr, "\n  seed=%llu it=%d: conv_transpose2d refused: %s", (unsigned long long)seed, it,
                    msg.text);
            bad++;
        } else if (ty->rank != 4 || memcmp(ty->dims, x->dims, 4 * sizeof(int64_t)) != 0) {
            fprintf(stderr, "\n  seed=%llu it=%d: transposed shape differs from x", (unsigned long long)seed, it);
            bad++;
        } else {
            double l = 0, r = 0, mag = 0;
            for (int64_t i = 0; i < cx->numel; i++) {
                l += cx->v[i] * y->v[i];
                mag += fabs(cx->v[i] * y->v[i]);
            }
            for (int64_t i = 0; i < x->numel; i++) r += x->v[i] * ty->v[i];
            if (fabs(l - r) > 1e-12 * (mag + 1e-300)) {
                fprintf(stderr, "\n  seed=%llu it=%d: <conv(x),y> = %.17g, <x,convT(y)> = %.17g",
                        (unsigned long long)seed, it, l, r);
                bad++;
            }
            ran++;
        }
        rt_del(x), rt_del(w), rt_del(cx), rt_del(y), rt_del(ty);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(ran >= 100);
}

/* linear(x, w) == matmul(x, w^T), with and without a leading batch; with a bias, matmul's result plus b. */
static void test_linear_vs_matmul(void)
{
    const uint64_t seed = 5;
    uint64_t s = seed;
    int bad = 0;
    for (int it = 0; it < 50; it++) {
        int64_t bsz = rng_int(&s, 1, 3), m = rng_int(&s, 1, 5), k = rng_int(&s, 1, 7), o = rng_int(&s, 1, 5);
        int64_t xd[3] = {bsz, m, k}, wd[2] = {o, k}, wtd[2] = {k, o}, bd[1] = {o};
        par_rt *x = rt_rand(3, xd, &s), *w = rt_rand(2, wd, &s), *b = rt_rand(1, bd, &s);
        par_rt *wt = rt_new(PAR_DTYPE_F32, 2, wtd);
        for (int64_t i = 0; i < o; i++)
            for (int64_t j = 0; j < k; j++) wt->v[j * o + i] = w->v[i * k + j];
        par_rt *lin[3] = {x, w, b}, *mm[2] = {x, wt}, *yl, *ym;
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_linear, par_ref_linear, "linear", 3, lin, NULL, 0, &yl, &msg),
                              PAR_OK);
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_matmul, par_ref_matmul, "matmul", 2, mm, NULL, 0, &ym, &msg),
                              PAR_OK);
        CU_ASSERT_EQUAL(yl->numel, ym->numel);
        for (int64_t i = 0; i < yl->numel; i++) {
            double want = ym->v[i] + b->v[i % o];
            if (fabs(yl->v[i] - want) > 1e-12 * (1 + fabs(want))) {
                if (!bad) fprintf(stderr, "\n  seed=%llu it=%d element %lld: linear %.17g, matmul + b %.17g",
                                  (unsigned long long)seed, it, (long long)i, yl->v[i], want);
                bad++;
            }
            /* The bias adds one term to the bound, so linear's budget is at least matmul's. */
            if (!(yl->e[i] >= ym->e[i] - 1e-300) && !bad) bad++;
        }
        rt_del(x), rt_del(w), rt_del(b), rt_del(wt), rt_del(yl), rt_del(ym);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- budgets --------------------------------------------------------------------------------------------------- */

/* The same conv computed in float32, summing the terms in reverse order and the bias last: every element must lie
 * within its budget, and the worst ratio well under 1 (the bound is a worst case; typical errors are ~sqrt(k) u). */
static void test_conv2d_budget_vs_f32(void)
{
    const uint64_t seed = 99;
    uint64_t s = seed;
    double worst = 0.0;
    int64_t checked = 0, over = 0;
    for (int it = 0; it < 40; it++) {
        conv_p p = CONV_DEFAULT;
        int64_t groups = rng_int(&s, 1, 2);
        p.groups = groups;
        for (int i = 0; i < 2; i++) {
            p.s[i] = rng_int(&s, 1, 2);
            p.d[i] = rng_int(&s, 1, 2);
        }
        for (int i = 0; i < 4; i++) p.p[i] = rng_int(&s, 0, 2);
        int64_t xd[4] = {1, groups * rng_int(&s, 4, 16), rng_int(&s, 5, 10), rng_int(&s, 5, 10)};
        int64_t wd[4] = {groups * rng_int(&s, 1, 4), xd[1] / groups, rng_int(&s, 1, 5), rng_int(&s, 1, 5)};
        int64_t bd[1] = {wd[0]};
        par_rt *x = rt_rand(4, xd, &s), *w = rt_rand(4, wd, &s), *b = rt_rand(1, bd, &s), *y = NULL;
        par_msg msg;
        if (conv(&p, x, w, b, &F32, &y, &msg) != PAR_OK) {
            rt_del(x), rt_del(w), rt_del(b);
            continue;
        }
        int64_t cg = xd[1] / groups, og = wd[0] / groups;
        for (int64_t o = 0; o < y->dims[1]; o++)
            for (int64_t oh = 0; oh < y->dims[2]; oh++)
                for (int64_t ow = 0; ow < y->dims[3]; ow++) {
                    float acc = 0.0f;
                    for (int64_t ci = cg - 1; ci >= 0; ci--)
                        for (int64_t kh = wd[2] - 1; kh >= 0; kh--)
                            for (int64_t kw = wd[3] - 1; kw >= 0; kw--) {
                                int64_t ih = oh * p.s[0] - p.p[0] + kh * p.d[0];
                                int64_t iw = ow * p.s[1] - p.p[1] + kw * p.d[1];
                                if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3]) continue;
                                float xv = (float)x->v[((o / og) * cg + ci) * xd[2] * xd[3] + ih * xd[3] + iw];
                                float wv = (float)w->v[((o * cg + ci) * wd[2] + kh) * wd[3] + kw];
                                volatile float prod = xv * wv; /* no fused multiply-add: f32 rounding each step */
                                acc = acc + prod;
                            }
                    acc = acc + (float)b->v[o];
                    int64_t yi = (o * y->dims[2] + oh) * y->dims[3] + ow;
                    double err = fabs((double)acc - y->v[yi]);
                    if (!(err <= y->e[yi])) {
                        if (!over) fprintf(stderr, "\n  seed=%llu it=%d element %lld: |f32 - ref| = %g > budget %g",
                                           (unsigned long long)seed, it, (long long)yi, err, y->e[yi]);
                        over++;
                    }
                    if (y->e[yi] > 0 && err / y->e[yi] > worst) worst = err / y->e[yi];
                    checked++;
                }
        rt_del(x), rt_del(w), rt_del(b), rt_del(y);
    }
    PAR_TEST_NOTE("\n  conv2d f32 vs reference: %lld elements, max |f32 - ref| / budget = %.3g\n", (long long)checked, worst);
    CU_ASSERT(checked > 1000);
    CU_ASSERT_EQUAL(over, 0);
    CU_ASSERT(worst < 0.5);
    CU_ASSERT(worst > 0.0); /* the f32 path really rounds: a zero here would mean the check compared nothing */
}

/* Input budgets propagate: a weight budget ew and an input budget ex on a 1x1 conv with one channel give
 * |w| ex + |x| ew + ex ew on top of the rounding; with u = 0 (an exact arithmetic profile) only that remains. */
static void test_conv2d_budget_propagation(void)
{
    int64_t xd[4] = {1, 1, 1, 1}, wd[4] = {1, 1, 1, 1}, bd[1] = {1};
    double xv[1] = {3}, wv[1] = {-2}, bv[1] = {1};
    par_rt *x = rt_of(4, xd, xv), *w = rt_of(4, wd, wv), *b = rt_of(1, bd, bv), *y;
    x->e[0] = 0.01;
    w->e[0] = 0.001;
    b->e[0] = 0.1;
    par_prec exact = {.u = 0, .u_store = 0, .fn_ulps = 0};
    par_msg msg;
    conv_p p = CONV_DEFAULT;
    CU_ASSERT_EQUAL_FATAL(conv(&p, x, w, b, &exact, &y, &msg), PAR_OK);
    CU_ASSERT_DOUBLE_EQUAL(y->v[0], -5.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], 2 * 0.01 + 3 * 0.001 + 0.01 * 0.001 + 0.1, 1e-15);
    rt_del(y);
    /* The float32 profile adds gamma_2 times the reference terms' magnitude plus the propagated bound B (here the
     * worst case: 6 sqrt(sum t^2) = 0.62 exceeds it), u (1 + gamma_2) times the worst case for the products'
     * roundings, then the storage rounding (docs/budgets/conv-pool.md, "Rounding"). */
    CU_ASSERT_EQUAL_FATAL(conv(&p, x, w, b, &F32, &y, &msg), PAR_OK);
    double prop = 2 * 0.01 + 3 * 0.001 + 0.01 * 0.001 + 0.1, g2 = par_gamma(2, 0x1p-24);
    double pre = g2 * (3 * 2 + 1 + prop) + 0x1p-24 * (1 + g2) * prop + prop;
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], pre + 0x1p-24 * (5.0 + pre), 1e-15);
    rt_del(y);
    /* An unbounded input budget (upstream division by an interval containing 0) under an exact zero weight stays
     * unbounded (a backend may compute 0 * inf = NaN there), never NaN, in both profiles. */
    w->v[0] = 0;
    w->e[0] = 0;
    x->e[0] = INFINITY;
    CU_ASSERT_EQUAL_FATAL(conv(&p, x, w, b, &exact, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->e[0]) && y->e[0] > 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(conv(&p, x, w, b, &F32, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->e[0]) && y->e[0] > 0);
    CU_ASSERT_EQUAL(y->v[0], 1.0);
    rt_del(y);
    rt_del(x), rt_del(w), rt_del(b);
}

/* ---- errors ----------------------------------------------------------------------------------------------------- */

/* x rounded to f16 (11 significant bits, round to nearest even; the subnormal grid 2^-24 below 2^-14). */
static double f16_round(double x)
{
    if (x == 0 || !isfinite(x)) return x;
    if (fabs(x) < 0x1p-14) return nearbyint(x * 0x1p24) * 0x1p-24;
    int ex;
    double m = frexp(x, &ex);
    return ldexp(nearbyint(ldexp(m, 11)), ex - 11);
}

/* A dot product in f16 arithmetic whose inputs carry errors (a layer deep in a model): the own rounding counts the
 * additions on the reference terms' magnitude plus the propagated bound, and the products alone on the worst case
 * (reference/dot.h; docs/budgets/conv-pool.md, "Rounding"). An emulated f16 backend (every product and partial sum
 * rounded to f16, sequentially and in reverse) on inputs perturbed within their budgets, independently as rule 5
 * assumes, stays within it. rel: the inputs' budgets relative to their values (plus 1e-3); where they are as large
 * as the values (rel = 1, as deep in MobileNetV3 under f16), the budget is 1.29 times smaller than the one that
 * charged gamma_k to the held terms' magnitude sum (|w| + e(w)) (|x| + e(x)): a factor per layer, which compounded
 * over MobileNetV3's dozens of layers past f16's range. */
static void linear_f16_inexact(double rel, ratio *r, double *gain)
{
    const int64_t M = 6, K = 576, N = 12;
    int64_t xd[2] = {M, K}, wd[2] = {N, K}, bd[1] = {N};
    uint64_t seed = 2026;
    par_rt *x = rt_rand(2, xd, &seed), *w = rt_rand(2, wd, &seed), *b = rt_rand(1, bd, &seed), *y;
    for (int64_t i = 0; i < x->numel; i++) {
        x->v[i] = f16_round(x->v[i]);
        x->e[i] = rel * fabs(x->v[i]) + 1e-3; /* scales read as the budgets (no s array) */
    }
    for (int64_t i = 0; i < w->numel; i++) w->v[i] = f16_round(0.2 * w->v[i]);
    for (int64_t i = 0; i < b->numel; i++) b->v[i] = f16_round(b->v[i]);
    const par_prec f16 = par_prec_for(PAR_ARITH_F16);
    const double u = 0x1p-11;
    par_rt *in[3] = {x, w, b};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_linear, par_ref_linear, "linear", 3, in, NULL, 0, &f16, NULL, &y, &msg),
                          PAR_OK);
    *gain = INFINITY;
    for (int trial = 0; trial < 20; trial++)
        for (int64_t m = 0; m < M; m++) {
            double xp[576];
            for (int64_t k = 0; k < K; k++)
                xp[k] = f16_round(x->v[m * K + k] + rng_f(&seed, -1, 1) * x->e[m * K + k]);
            for (int64_t n = 0; n < N; n++) {
                double acc = b->v[n];
                for (int64_t j = 0; j < K; j++) {
                    int64_t k = trial & 1 ? K - 1 - j : j;
                    acc = f16_round(acc + f16_round(w->v[n * K + k] * xp[k]));
                }
                ratio_add(r, acc, y->v[m * N + n], y->e[m * N + n]);
                if (trial) continue;
                double held = fabs(b->v[n]), worst = 0, rss = 0;
                for (int64_t k = 0; k < K; k++) {
                    double t = fabs(w->v[n * K + k]) * x->e[m * K + k];
                    held += fabs(w->v[n * K + k]) * (fabs(x->v[m * K + k]) + x->e[m * K + k]);
                    worst += t;
                    rss += t * t;
                }
                double pre = par_gamma(K + 1, u) * held + fmin(worst, 6 * sqrt(rss));
                *gain = fmin(*gain, (pre + u * (fabs(y->v[m * N + n]) + pre)) / y->e[m * N + n]);
            }
        }
    rt_del(x), rt_del(w), rt_del(b), rt_del(y);
}

static void test_linear_f16_inexact_inputs(void)
{
    const double rels[] = {0.01, 1.0};
    for (int i = 0; i < 2; i++) {
        ratio r = {0, 0, 0};
        double gain;
        linear_f16_inexact(rels[i], &r, &gain);
        char what[64];
        snprintf(what, sizeof what, "linear f16 k=576, inputs' e %.2g |x|", rels[i]);
        ratio_report(what, &r);
        PAR_TEST_NOTE("; the held-magnitude bound was %.2f x this budget", gain);
        CU_ASSERT(r.max > 0); /* the f16 sums really round and the inputs really move */
        CU_ASSERT(gain >= 1.0);
        if (rels[i] >= 1) CU_ASSERT(gain > 1.2); /* per layer: compounded over a model's dozens of layers */
    }
}

static void test_conv_shape_errors(void)
{
    int64_t xd[4] = {1, 8, 5, 5}, wd[4] = {4, 8, 3, 3}, bd[1] = {4}, bad_bd[1] = {5};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, xd), *w = rt_new(PAR_DTYPE_F32, 4, wd), *b = rt_new(PAR_DTYPE_F32, 1, bd);
    par_rt *bb = rt_new(PAR_DTYPE_F32, 1, bad_bd);
    par_msg msg;
    conv_p p = CONV_DEFAULT;
    par_attr a[8];
    par_rt *in[3] = {x, w, b};
    int32_t na;
#define INFER(fn, op, n, arr) run_op(fn, NULL, op, n, arr, a, na, NULL, &msg)
    /* Sanity: the valid case is accepted, [1,4,3,3]. */
    na = conv_attrs(&p, 0, a);
    CU_ASSERT_EQUAL(INFER(par_infer_conv2d, "conv2d", 3, in), PAR_OK);
    /* groups not dividing the input channels */
    p.groups = 3;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'groups'");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "does not divide 8 input channels"));
    /* groups dividing C but not O: C = 8, O = 4, groups 8 */
    p.groups = 8;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'groups'");
    /* wrong weight channels: groups 2 wants weight dims[1] = 4 */
    p.groups = 2;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "weight");
    /* output size below 1: 5x5 input, 3x3 kernel with dilation 3 has extent 7 */
    p = CONV_DEFAULT;
    p.d[0] = 3;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'dilation'");
    /* stride 0, negative padding, negative dilation */
    p = CONV_DEFAULT;
    p.s[1] = 0;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'stride'");
    p = CONV_DEFAULT;
    p.p[2] = -1;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'padding'");
    p = CONV_DEFAULT;
    p.groups = 0;
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'groups'");
    /* unknown pad_mode (validation checks choices; inference must still not accept it) */
    p = CONV_DEFAULT;
    p.mode = "reflect";
    na = conv_attrs(&p, 0, a);
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "'pad_mode'");
    /* bias of the wrong length */
    p = CONV_DEFAULT;
    na = conv_attrs(&p, 0, a);
    in[2] = bb;
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "bias");
    in[2] = NULL;
    /* rank 3 input */
    x->rank = 3;
    expect_error(INFER(par_infer_conv2d, "conv2d", 3, in), &msg, "rank 3");
    x->rank = 4;

    /* conv_transpose2d: weight dims[0] must be C; output_padding below stride or dilation; output size >= 1 */
    p = CONV_DEFAULT;
    na = conv_attrs(&p, 1, a);
    expect_error(INFER(par_infer_conv_transpose2d, "conv_transpose2d", 3, in), &msg, "weight");
    int64_t twd[4] = {8, 2, 3, 3};
    par_rt *tw = rt_new(PAR_DTYPE_F32, 4, twd);
    in[1] = tw;
    CU_ASSERT_EQUAL(INFER(par_infer_conv_transpose2d, "conv_transpose2d", 3, in), PAR_OK);
    p.op[0] = 1;
    na = conv_attrs(&p, 1, a);
    expect_error(INFER(par_infer_conv_transpose2d, "conv_transpose2d", 3, in), &msg, "'output_padding'");
    p = CONV_DEFAULT;
    p.p[0] = p.p[2] = 4; /* OH = 4 - 8 + 2 + 1 = -1 */
    na = conv_attrs(&p, 1, a);
    expect_error(INFER(par_infer_conv_transpose2d, "conv_transpose2d", 3, in), &msg, "'padding'");
    p = CONV_DEFAULT;
    p.groups = 3;
    na = conv_attrs(&p, 1, a);
    expect_error(INFER(par_infer_conv_transpose2d, "conv_transpose2d", 3, in), &msg, "'groups'");

    /* linear and matmul */
    int64_t ld[2] = {3, 5}, lwd[2] = {2, 4}, m1[3] = {2, 3, 4}, m2[3] = {3, 4, 5}, m3[2] = {5, 2};
    par_rt *lx = rt_new(PAR_DTYPE_F32, 2, ld), *lw = rt_new(PAR_DTYPE_F32, 2, lwd), *a1 = rt_new(PAR_DTYPE_F32, 3, m1);
    par_rt *a2 = rt_new(PAR_DTYPE_F32, 3, m2), *a3 = rt_new(PAR_DTYPE_F32, 2, m3);
    par_rt *lin[3] = {lx, lw, NULL}, *mm[2] = {a1, a2}, *mm2[2] = {a1, a3};
    na = 0;
    expect_error(INFER(par_infer_linear, "linear", 3, lin), &msg, "weight");
    expect_error(INFER(par_infer_matmul, "matmul", 2, mm), &msg, "broadcast");
    expect_error(INFER(par_infer_matmul, "matmul", 2, mm2), &msg, "input 1 (b)");
#undef INFER
    rt_del(x), rt_del(w), rt_del(b), rt_del(bb), rt_del(tw);
    rt_del(lx), rt_del(lw), rt_del(a1), rt_del(a2), rt_del(a3);
}

/* A quantized dtype reaching a float kernel is refused as unsupported, with the reason. */
static void test_conv_dtype_refused(void)
{
    int64_t xd[4] = {1, 1, 2, 2}, wd[4] = {1, 1, 1, 1};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, xd), *w = rt_new(PAR_DTYPE_F32, 4, wd), *y = NULL;
    x->dtype = PAR_DTYPE_QU8;
    par_msg msg;
    conv_p p = CONV_DEFAULT;
    CU_ASSERT_EQUAL(conv(&p, x, w, NULL, &F32, &y, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "qu8"));
    CU_ASSERT_PTR_NULL(y);
    rt_del(x), rt_del(w);
}

static const CU_TestInfo tests[] = {
    {"linear f16 inexact inputs", test_linear_f16_inexact_inputs},
    {"conv2d padding, stride, bias", test_conv2d_pad_stride_bias},
    {"conv2d depthwise multiplier 2", test_conv2d_depthwise_multiplier},
    {"conv2d groups 2", test_conv2d_groups2},
    {"conv2d dilation 2", test_conv2d_dilation},
    {"conv2d pad_mode same and valid", test_conv2d_pad_modes},
    {"conv_transpose2d small", test_conv_transpose2d_small},
    {"linear", test_linear_hand},
    {"matmul broadcast batch", test_matmul_broadcast},
    {"conv2d vs im2col + matmul", test_conv2d_vs_im2col},
    {"conv_transpose2d is the adjoint of conv2d", test_conv_transpose2d_adjoint},
    {"linear vs matmul", test_linear_vs_matmul},
    {"conv2d budget vs f32", test_conv2d_budget_vs_f32},
    {"conv2d budget propagation", test_conv2d_budget_propagation},
    {"shape inference errors", test_conv_shape_errors},
    {"non-float dtype refused", test_conv_dtype_refused},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_conv", tests)
