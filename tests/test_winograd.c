/*
 * test_winograd.c - declared algorithms (PAR_PROC_NODE_ALGO) and the Winograd budget (reference/conv_winograd.c,
 * docs/budgets/winograd.md):
 *   - the matrices of each par_algo reproduce direct correlation (float64, random integers);
 *   - the stage bounds of a tile, the roundings per transform row and the budget on hand-computed cases;
 *   - soundness and tightness: float32 Winograd computed here (in another order than the plugin's) stays within the
 *     budget, and not vacuously (the worst ratio is printed with PAR_TEST_VERBOSE=1);
 *   - declarations checked: a value outside par_algo, a Winograd value for a node that cannot be one; the
 *     reference cache's key holds them;
 *   - end to end through build/parity with tests/plugins/winograd.so: declared F(2x2,3x3) and F(4x4,3x3) pass every
 *     conv2d case of the quick suite they support and the full suite's hazards and missing tile residues (every
 *     case of the full suite: make nightly, PAR_TEST_NIGHTLY); a wrong transform entry fails; undeclared F(4x4,3x3) fails the
 *     direct budget; a declaration outside the enum is an ERROR naming node and value; records list the algorithm.
 */
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/result.h"
#include "reference/conv_winograd.h"
#include "runner/refcache.h"
#define PAR_CLI_NO_SH /* runs the CLI with system() into files */
#include "cli_helpers.h"
#include "ref_helpers.h"


/* ---- the matrices ------------------------------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15u;
static double rnd_int(int lo, int hi) /* uniform integer in [lo, hi] */
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (double)(lo + (int)((rng >> 33) % (uint64_t)(hi - lo + 1)));
}
static double rnd_unit(void) /* uniform in [-1, 1) */
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng >> 11) * 0x1p-52 - 1.0;
}

static void test_matrices_reproduce_correlation(void)
{
    for (int32_t algo = 1; algo < PAR_ALGO_COUNT; algo++) {
        double bt[64], g[24], at[48];
        int32_t m = par_winograd_matrices(algo, bt, g, at), t = m + 2;
        CU_ASSERT_FATAL(m == 2 * algo);
        for (int rep = 0; rep < 4; rep++) {
            double k[9], d[64], u[64], v[64], tmp[64], y[36];
            for (int i = 0; i < 9; i++) k[i] = rnd_int(-9, 9);
            for (int i = 0; i < t * t; i++) d[i] = rnd_int(-9, 9);
            for (int i = 0; i < t; i++) /* G k G^T */
                for (int q = 0; q < 3; q++) {
                    tmp[i * 3 + q] = 0;
                    for (int p = 0; p < 3; p++) tmp[i * 3 + q] += g[i * 3 + p] * k[p * 3 + q];
                }
            for (int i = 0; i < t; i++)
                for (int j = 0; j < t; j++) {
                    u[i * t + j] = 0;
                    for (int q = 0; q < 3; q++) u[i * t + j] += tmp[i * 3 + q] * g[j * 3 + q];
                }
            for (int i = 0; i < t; i++) /* B^T d B */
                for (int s = 0; s < t; s++) {
                    tmp[i * t + s] = 0;
                    for (int r = 0; r < t; r++) tmp[i * t + s] += bt[i * t + r] * d[r * t + s];
                }
            for (int i = 0; i < t; i++)
                for (int j = 0; j < t; j++) {
                    v[i * t + j] = 0;
                    for (int s = 0; s < t; s++) v[i * t + j] += tmp[i * t + s] * bt[j * t + s];
                }
            for (int i = 0; i < t * t; i++) u[i] *= v[i];
            for (int a = 0; a < m; a++) /* A^T M A */
                for (int j = 0; j < t; j++) {
                    tmp[a * t + j] = 0;
                    for (int i = 0; i < t; i++) tmp[a * t + j] += at[a * t + i] * u[i * t + j];
                }
            int bad = 0;
            for (int a = 0; a < m; a++)
                for (int b = 0; b < m; b++) {
                    y[a * m + b] = 0;
                    for (int j = 0; j < t; j++) y[a * m + b] += tmp[a * t + j] * at[b * t + j];
                    double want = 0;
                    for (int p = 0; p < 3; p++)
                        for (int q = 0; q < 3; q++) want += k[p * 3 + q] * d[(a + p) * t + b + q];
                    if (!(fabs(y[a * m + b] - want) <= 1e-9 * (1 + fabs(want)))) bad++;
                }
            CU_ASSERT_EQUAL(bad, 0);
        }
    }
    CU_ASSERT_EQUAL(par_winograd_matrices(PAR_ALGO_DIRECT, NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL(par_winograd_matrices(PAR_ALGO_COUNT, NULL, NULL, NULL), 0);
    CU_ASSERT_STRING_EQUAL(par_algo_name(PAR_ALGO_WINOGRAD_4X4_3X3), "winograd_4x4_3x3");
    CU_ASSERT_PTR_NULL(par_algo_name(-1));
    CU_ASSERT_PTR_NULL(par_algo_name(PAR_ALGO_COUNT));
}

/* ---- hand-computed magnitudes and budgets ------------------------------------------------------------------- */

static int32_t conv_attrs(int64_t pad, int64_t stride, par_attr *a)
{
    static int64_t s[2], p[4], d[2] = {1, 1};
    s[0] = s[1] = stride;
    p[0] = p[1] = p[2] = p[3] = pad;
    a[0] = par_a_ints("stride", 2, s);
    a[1] = par_a_ints("padding", 4, p);
    a[2] = par_a_ints("dilation", 2, d);
    a[3] = par_a_int("groups", 1);
    a[4] = par_a_str("pad_mode", "explicit");
    return 5;
}

static par_conv_geom geom(int64_t c, int64_t h, int64_t o, int64_t pad)
{
    par_conv_geom q = {.n = 1, .c = c, .h = h, .w = h, .o = o, .kh = 3, .kw = 3, .groups = 1, .sh = 1, .sw = 1,
                       .dh = 1, .dw = 1, .pt = pad, .pl = pad, .pb = pad, .pr = pad};
    q.oh = q.ow = h + 2 * pad - 2;
    return q;
}

/* The hand case: F(2x2,3x3), one channel, x = 4x4 ones, w = 3x3 ones, no padding, no bias. By hand:
 *   U = G 1 G^T = r r^T with r = G's row sums = (1, 1.5, 0.5, 1); |G| 1 |G^T| = rs rs^T, rs = (1, 1.5, 1.5, 1);
 *   V = B^T 1 B = c c^T with c = B^T's row sums = (0, 2, 0, 0); |B^T| 1 |B| = 4 everywhere;
 *   M = U (.) V is 9 at (1, 1) and 0 elsewhere; y = 9 everywhere (the direct sum of nine ones).
 * Roundings per row: G (0, 2, 2, 0), B^T 1 each, A^T row 0 (1 1 1 0): 2. With one channel the product and channel
 * sum cost gamma(1). So, at transform position (i, j):
 *   du = gamma(kG_i + kG_j) rs_i rs_j,  dv = gamma(2) 4,
 *   dm = gamma(1) (|U| + du)(|V| + dv) + du |V| + |U| dv + du dv,
 * and output (0, 0) (A^T row 0 selects i, j in 0..2) has own = sum dm + gamma(4) sum (|M| + dm). */
static const double RS[4] = {1, 1.5, 1.5, 1}, R[4] = {1, 1.5, 0.5, 1}, CV[4] = {0, 2, 0, 0};
static const int32_t KG[4] = {0, 2, 2, 0};

static double hand_dm(int i, int j, double u)
{
    double U = R[i] * R[j], V = CV[i] * CV[j];
    double du = par_gamma(KG[i] + KG[j], u) * RS[i] * RS[j], dv = par_gamma(2, u) * 4;
    return par_gamma(1, u) * (fabs(U) + du) * (fabs(V) + dv) + du * fabs(V) + fabs(U) * dv + du * dv;
}

static void test_tile_bounds_by_hand(void)
{
    int64_t xd[4] = {1, 1, 4, 4}, wd[4] = {1, 1, 3, 3};
    double ones[16];
    for (int i = 0; i < 16; i++) ones[i] = 1;
    par_rt *x = rt_of(4, xd, ones), *w = rt_of(4, wd, ones);
    par_conv_geom q = geom(1, 4, 1, 0);
    const double u = 0x1p-24;
    par_wg_tile tl;
    par_winograd_tile(PAR_ALGO_WINOGRAD_2X2_3X3, &q, x, w, u, 0, 0, 0, 0, &tl);
    CU_ASSERT_EQUAL_FATAL(tl.t, 4);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double want = (i == 1 && j == 1) ? 9.0 : 0.0, dm = hand_dm(i, j, u);
            CU_ASSERT_DOUBLE_EQUAL(tl.val[i * 4 + j], want, 0);
            CU_ASSERT_DOUBLE_EQUAL(tl.m[i * 4 + j], want, 0);
            CU_ASSERT_DOUBLE_EQUAL(tl.dm[i * 4 + j], dm, 1e-15 * dm);
        }
    double own = 0, held = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            own += hand_dm(i, j, u);
            held += ((i == 1 && j == 1) ? 9.0 : 0.0) + hand_dm(i, j, u);
        }
    own += par_gamma(4, u) * held;
    double sc = -1;
    CU_ASSERT_DOUBLE_EQUAL(par_winograd_own(PAR_ALGO_WINOGRAD_2X2_3X3, &tl, 0, 0, 0, 0, u, &sc), own, 1e-15 * own);
    CU_ASSERT(sc > 0 && sc < own); /* the root-sum-square analogue is smaller than the worst case */
    /* Inputs with budget e(x) = 1: the transform of the held tile may move by |B^T| 1 |B| = 4 times |U|, so
     * m = |M| + 4 |U| (at (0, 0): 0 + 4 * 1). */
    for (int i = 0; i < 16; i++) x->e[i] = 1;
    par_winograd_tile(PAR_ALGO_WINOGRAD_2X2_3X3, &q, x, w, u, 0, 0, 0, 0, &tl);
    CU_ASSERT_DOUBLE_EQUAL(tl.m[0], 4.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(tl.m[1 * 4 + 1], 9.0 + 4 * 2.25, 0);
    /* Padding 1 on a 2x2 input of ones: the tile of output (0, 0) reads rows and columns -1..2, of which 0..1 are
     * inside: d = [0 0 0 0; 0 1 1 0; 0 1 1 0; 0 0 0 0], V = c' c'^T with c' = B^T (0 1 1 0)^T = (-1, 2, 0, 1), and
     * y(0, 0) = (sum_i A^T[0,i] r_i c'_i)^2 = (-1 + 3 + 0)^2 = 4, the direct sum of the four ones. */
    int64_t xd2[4] = {1, 1, 2, 2};
    par_rt *x2 = rt_of(4, xd2, ones);
    par_conv_geom q2 = geom(1, 2, 1, 1);
    const double c2[4] = {-1, 2, 0, 1};
    par_winograd_tile(PAR_ALGO_WINOGRAD_2X2_3X3, &q2, x2, w, u, 0, 0, 0, 0, &tl);
    double y00 = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            CU_ASSERT_DOUBLE_EQUAL(tl.val[i * 4 + j], R[i] * R[j] * c2[i] * c2[j], 0);
            y00 += (i < 3 ? 1 : 0) * (j < 3 ? 1 : 0) * tl.val[i * 4 + j];
        }
    CU_ASSERT_DOUBLE_EQUAL(y00, 4.0, 0);
    rt_del(x), rt_del(x2), rt_del(w);
}

/* Roundings per row (docs/budgets/winograd.md): (nonzeros - 1) + 1 if some entry is not +-2^j + 1 if some entry is
 * not a binary fraction. F(2x2,3x3): A^T (1 1 1 0): 2; G (1 0 0): 0, (1/2 1/2 1/2): 2; B^T rows: 1. F(4x4,3x3):
 * A^T (0 1 -1 2 -2 0): 3; G (1/24 1/12 1/6): 2 + 1 + 1 = 4; G (1/4 0 0): 0; B^T (0 -2 -1 2 1 0): 3;
 * B^T (4 0 -5 0 1 0): 2 + 1 = 3. F(6x6,3x3): G (32/45 16/45 8/45): 4; B^T (1 0 -21/4 0 21/4 0 -1 0): 3 + 1 = 4. */
static void test_row_roundings_by_hand(void)
{
    const struct {
        int32_t algo;
        char mat;
        int32_t row, want;
    } c[] = {{1, 'A', 0, 2}, {1, 'G', 0, 0}, {1, 'G', 1, 2}, {1, 'B', 0, 1}, {1, 'B', 3, 1},
             {2, 'A', 1, 3}, {2, 'G', 3, 4}, {2, 'G', 0, 0}, {2, 'B', 3, 3}, {2, 'B', 0, 3},
             {3, 'G', 5, 4}, {3, 'B', 0, 4}, {2, 'A', 4, -1}, {2, 'X', 0, -1}, {0, 'A', 0, -1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        CU_ASSERT_EQUAL(par_winograd_roundings(c[i].algo, c[i].mat, c[i].row), c[i].want);
}

/* Through the kernel: the budget of output (0, 0) of the hand case is own + u (9 + own) (f32 storage), the value the
 * direct sum's, and the budget differs from direct summation's. */
static void test_budget_by_hand(void)
{
    int64_t xd[4] = {1, 1, 4, 4}, wd[4] = {1, 1, 3, 3};
    double ones[16];
    for (int i = 0; i < 16; i++) ones[i] = 1;
    par_rt *x = rt_of(4, xd, ones), *w = rt_of(4, wd, ones), *in[2] = {x, w}, *y = NULL;
    par_attr a[8];
    par_msg msg;
    int32_t algo[1] = {PAR_ALGO_WINOGRAD_2X2_3X3};
    par_prec p = F32;
    p.algo = algo;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_conv2d, par_ref_conv2d, "conv2d", 2, in, a, conv_attrs(0, 1, a), &p, NULL,
                                  &y, &msg),
                          PAR_OK);
    const double u = 0x1p-24;
    double own = 0, held = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            own += hand_dm(i, j, u);
            held += ((i == 1 && j == 1) ? 9.0 : 0.0) + hand_dm(i, j, u);
        }
    own += par_gamma(4, u) * held;
    CU_ASSERT_DOUBLE_EQUAL(y->v[0], 9.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], own + u * (9 + own), 1e-15 * own);
    par_rt *yd = NULL;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_conv2d, par_ref_conv2d, "conv2d", 2, in, a, conv_attrs(0, 1, a), &F32,
                                  NULL, &yd, &msg),
                          PAR_OK);
    double direct = par_gamma(9, u) * 9;
    CU_ASSERT_DOUBLE_EQUAL(yd->e[0], direct + u * (9 + direct), 1e-15 * direct);
    CU_ASSERT(fabs(y->e[0] - yd->e[0]) > 1e-3 * yd->e[0]); /* the declared algorithm changed the budget */
    CU_ASSERT_DOUBLE_EQUAL(yd->v[0], y->v[0], 0);            /* and not the value */
    rt_del(yd);
    /* A Winograd declaration on a stride-2 node is refused by the kernel too. */
    rt_del(y);
    y = NULL;
    int64_t xd5[4] = {1, 1, 5, 5};
    double v25[25];
    for (int i = 0; i < 25; i++) v25[i] = 1;
    par_rt *x5 = rt_of(4, xd5, v25), *in5[2] = {x5, w};
    CU_ASSERT_EQUAL(run_opq(par_infer_conv2d, par_ref_conv2d, "conv2d", 2, in5, a, conv_attrs(0, 2, a), &p, NULL, &y,
                            &msg),
                    PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "stride 1"));
    rt_del(x5), rt_del(x), rt_del(w);
}

/* ---- soundness: float32 Winograd against the budget ---------------------------------------------------------- */

/* Winograd in float32 with the transforms' sums taken in reverse order and the channels summed last to first (the
 * plugin sums forwards): y [O, OH, OW] for x [C, H, W], w [O, C, 3, 3], bias b, padding pad on every side. */
static void winograd_f32(int32_t algo, const par_conv_geom *q, const float *x, const float *w, const float *b,
                         float *y)
{
    double btd[64], gd[24], atd[48];
    int32_t m = par_winograd_matrices(algo, btd, gd, atd), t = m + 2, tt = t * t;
    float bt[64], g[24], at[48];
    for (int i = 0; i < 64; i++) bt[i] = (float)btd[i];
    for (int i = 0; i < 24; i++) g[i] = (float)gd[i];
    for (int i = 0; i < 48; i++) at[i] = (float)atd[i];
    for (int64_t th = 0; th < q->oh; th += m)
        for (int64_t tw = 0; tw < q->ow; tw += m)
            for (int64_t o = 0; o < q->o; o++) {
                float M[64] = {0};
                for (int64_t c = q->c - 1; c >= 0; c--) {
                    float u[64], v[64], tmp[64], d[64];
                    const float *k = w + (o * q->c + c) * 9;
                    for (int i = 0; i < t; i++)
                        for (int qq = 0; qq < 3; qq++) {
                            float s = 0;
                            for (int p = 2; p >= 0; p--) s += g[i * 3 + p] * k[p * 3 + qq];
                            tmp[i * 3 + qq] = s;
                        }
                    for (int i = 0; i < t; i++)
                        for (int j = 0; j < t; j++) {
                            float s = 0;
                            for (int qq = 2; qq >= 0; qq--) s += tmp[i * 3 + qq] * g[j * 3 + qq];
                            u[i * t + j] = s;
                        }
                    for (int r = 0; r < t; r++)
                        for (int s = 0; s < t; s++) {
                            int64_t ih = th - q->pt + r, iw = tw - q->pl + s;
                            int in = ih >= 0 && ih < q->h && iw >= 0 && iw < q->w;
                            d[r * t + s] = in ? x[(c * q->h + ih) * q->w + iw] : 0.0f;
                        }
                    for (int i = 0; i < t; i++)
                        for (int s = 0; s < t; s++) {
                            float acc = 0;
                            for (int r = t - 1; r >= 0; r--) acc += bt[i * t + r] * d[r * t + s];
                            tmp[i * t + s] = acc;
                        }
                    for (int i = 0; i < t; i++)
                        for (int j = 0; j < t; j++) {
                            float acc = 0;
                            for (int s = t - 1; s >= 0; s--) acc += tmp[i * t + s] * bt[j * t + s];
                            v[i * t + j] = acc;
                        }
                    for (int i = 0; i < tt; i++) M[i] += u[i] * v[i];
                }
                float tmp[64];
                for (int a = 0; a < m; a++)
                    for (int j = 0; j < t; j++) {
                        float acc = 0;
                        for (int i = t - 1; i >= 0; i--) acc += at[a * t + i] * M[i * t + j];
                        tmp[a * t + j] = acc;
                    }
                for (int a = 0; a < m && th + a < q->oh; a++)
                    for (int bb = 0; bb < m && tw + bb < q->ow; bb++) {
                        float acc = 0;
                        for (int j = t - 1; j >= 0; j--) acc += tmp[a * t + j] * at[bb * t + j];
                        y[(o * q->oh + th + a) * q->ow + tw + bb] = acc + b[o];
                    }
            }
}

static void test_float32_within_budget(void)
{
    const int64_t C = 8, H = 11, O = 4, PAD = 1;
    for (int32_t algo = 1; algo < PAR_ALGO_COUNT; algo++) {
        int64_t xd[4] = {1, C, H, H}, wd[4] = {O, C, 3, 3}, bd[1] = {O};
        par_rt *x = rt_new(PAR_DTYPE_F32, 4, xd), *w = rt_new(PAR_DTYPE_F32, 4, wd), *b = rt_new(PAR_DTYPE_F32, 1, bd);
        float *xf = malloc(sizeof *xf * (size_t)x->numel), *wf = malloc(sizeof *wf * (size_t)w->numel), bf[4];
        for (int64_t i = 0; i < x->numel; i++) x->v[i] = xf[i] = (float)rnd_unit();
        for (int64_t i = 0; i < w->numel; i++) w->v[i] = wf[i] = (float)rnd_unit();
        for (int64_t i = 0; i < O; i++) b->v[i] = bf[i] = (float)rnd_unit();
        par_rt *in[3] = {x, w, b}, *y = NULL;
        par_attr a[8];
        par_msg msg;
        int32_t decl[1] = {algo};
        par_prec p = F32;
        p.algo = decl;
        CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_conv2d, par_ref_conv2d, "conv2d", 3, in, a, conv_attrs(PAD, 1, a), &p,
                                      NULL, &y, &msg),
                              PAR_OK);
        par_conv_geom q = geom(C, H, O, PAD);
        float *yf = malloc(sizeof *yf * (size_t)y->numel);
        winograd_f32(algo, &q, xf, wf, bf, yf);
        double worst = 0, worst_direct = 0;
        par_rt *yd = NULL;
        CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_conv2d, par_ref_conv2d, "conv2d", 3, in, a, conv_attrs(PAD, 1, a),
                                      &F32, NULL, &yd, &msg),
                              PAR_OK);
        for (int64_t i = 0; i < y->numel; i++) {
            double d = fabs((double)yf[i] - y->v[i]);
            worst = fmax(worst, d / y->e[i]);
            worst_direct = fmax(worst_direct, d / yd->e[i]);
        }
        PAR_TEST_NOTE("\n  %s: worst error/budget %.3g (%.3g against the direct budget)\n", par_algo_name(algo),
                      worst, worst_direct);
        CU_ASSERT(worst < 1.0);   /* sound */
        CU_ASSERT(worst > 1e-3);  /* and not vacuous: within three orders of magnitude of the error */
        rt_del(y), rt_del(yd), rt_del(x), rt_del(w), rt_del(b);
        free(xf), free(wf), free(yf);
    }
}

/* ---- declarations checked ------------------------------------------------------------------------------------ */

static void test_algo_check(void)
{
    int64_t d4[4] = {1, 2, 5, 5}, w3[4] = {2, 2, 3, 3}, w5[4] = {2, 2, 5, 5}, y3[4] = {1, 2, 3, 3};
    par_value vals[5] = {
        {.name = "x", .dtype = PAR_DTYPE_F32, .rank = 4, .kind = PAR_VALUE_INPUT},
        {.name = "w3", .dtype = PAR_DTYPE_F32, .rank = 4, .kind = PAR_VALUE_INPUT},
        {.name = "y", .dtype = PAR_DTYPE_F32, .rank = 4, .kind = PAR_VALUE_NODE},
        {.name = "w5", .dtype = PAR_DTYPE_F32, .rank = 4, .kind = PAR_VALUE_INPUT},
        {.name = "q", .dtype = PAR_DTYPE_QU8, .rank = 4, .kind = PAR_VALUE_NODE},
    };
    memcpy(vals[0].dims, d4, sizeof d4);
    memcpy(vals[1].dims, w3, sizeof w3);
    memcpy(vals[2].dims, y3, sizeof y3);
    memcpy(vals[3].dims, w5, sizeof w5);
    memcpy(vals[4].dims, y3, sizeof y3);
    int32_t in3[2] = {0, 1}, in5[2] = {0, 3}, out[1] = {2}, outq[1] = {4};
    int64_t s1[2] = {1, 1}, s2[2] = {2, 2};
    par_attr a1[1] = {par_a_ints("stride", 2, s1)}, a2[1] = {par_a_ints("stride", 2, s2)};
    par_node nodes[5] = {
        {.name = "ok", .op = "conv2d", .n_inputs = 2, .inputs = in3, .n_outputs = 1, .outputs = out, .n_attrs = 1,
         .attrs = a1},
        {.name = "strided", .op = "conv2d", .n_inputs = 2, .inputs = in3, .n_outputs = 1, .outputs = out, .n_attrs = 1,
         .attrs = a2},
        {.name = "k5", .op = "conv2d", .n_inputs = 2, .inputs = in5, .n_outputs = 1, .outputs = out, .n_attrs = 1,
         .attrs = a1},
        {.name = "act", .op = "relu", .n_inputs = 1, .inputs = in3, .n_outputs = 1, .outputs = out},
        {.name = "quant", .op = "conv2d", .n_inputs = 2, .inputs = in3, .n_outputs = 1, .outputs = outq, .n_attrs = 1,
         .attrs = a1},
    };
    par_graph_desc g = {.name = "g", .n_values = 5, .values = vals, .n_nodes = 5, .nodes = nodes};
    par_msg msg;
    CU_ASSERT_EQUAL(par_algo_check(&g, 0, PAR_ALGO_WINOGRAD_6X6_3X3, &msg), PAR_OK);
    CU_ASSERT_EQUAL(par_algo_check(&g, 3, PAR_ALGO_DIRECT, &msg), PAR_OK);
    CU_ASSERT_EQUAL(par_algo_check(&g, 0, 77, &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "'ok'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "77"));
    CU_ASSERT_EQUAL(par_algo_check(&g, 0, -1, &msg), PAR_ERROR);
    const struct {
        int32_t node;
        const char *why;
    } bad[] = {{1, "stride"}, {2, "3x3"}, {3, "only conv2d"}, {4, "float"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(par_algo_check(&g, bad[i].node, PAR_ALGO_WINOGRAD_2X2_3X3, &msg), PAR_ERROR);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, bad[i].why));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "winograd_2x2_3x3"));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, nodes[bad[i].node].name));
    }
    CU_ASSERT_EQUAL(par_algo_check(&g, 9, PAR_ALGO_DIRECT, &msg), PAR_ERROR);

    /* The reference cache's key: the declared algorithms are part of it; all-direct keys as no declaration. */
    int32_t none[5] = {0}, d2[5] = {PAR_ALGO_WINOGRAD_4X4_3X3}, d3[5] = {PAR_ALGO_WINOGRAD_6X6_3X3},
            b2[5] = {0, PAR_ALGO_WINOGRAD_4X4_3X3};
    const int32_t *decl[5] = {NULL, none, d2, d3, b2};
    uint8_t key[5][32];
    for (int i = 0; i < 5; i++) {
        par_prec p = F32;
        p.algo = decl[i];
        par_refcache_key(&g, &p, NULL, key[i]);
    }
    CU_ASSERT(memcmp(key[0], key[1], 32) == 0);
    for (int i = 1; i < 5; i++)
        for (int j = i + 1; j < 5; j++) CU_ASSERT(memcmp(key[i], key[j], 32) != 0);
}

/* ---- end to end ---------------------------------------------------------------------------------------------- */

typedef struct run_stats {
    int rc;
    int n[PAR_V_COUNT];
    int with_algo;           /* records carrying "algorithms" */
    char first_fail[PAR_REASON_LEN], first_error[PAR_REASON_LEN];
    double max_ratio;        /* over compared records */
    int summary_line;        /* the terminal summary has the declared algorithms' line */
} run_stats;

static int verdict_of(const char *s)
{
    for (int v = 0; v < PAR_V_COUNT; v++)
        if (strcmp(s, par_verdict_name((par_verdict)v)) == 0) return v;
    return -1;
}

/* build/parity run SEL -o conv2d (SEL: the selection's options, e.g. "--suite quick") with the Winograd plugin's
 * instance spec; the report read back. */
static run_stats run_plugin(const char *sel, const char *spec, const char *tag)
{
    run_stats r;
    memset(&r, 0, sizeof r);
    char cmd[4 * PATH_MAX], out[PATH_MAX + 64];
    snprintf(out, sizeof out, "%s/%s", tmp_dir, tag);
    snprintf(cmd, sizeof cmd,
             "%s run %s -o conv2d --plugin %s/tests/plugins/winograd.so -b 'winograd[%s]' -j 2 --repeat 1 "
             "--warmup 0 --no-progress --out %s > %s.log 2>&1",
             exe, sel, build_dir, spec, out, out);
    int st = system(cmd);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char path[PATH_MAX + 96], line[1024];
    snprintf(path, sizeof path, "%s.log", out);
    FILE *lf = fopen(path, "r");
    while (lf && fgets(line, sizeof line, lf))
        if (strncmp(line, "declared algorithms (judged with their budgets): winograd[", 58) == 0) r.summary_line = 1;
    if (lf) fclose(lf);
    snprintf(path, sizeof path, "%s/report.json", out);
    json_object *root = json_object_from_file(path), *results = NULL;
    if (!root || !json_object_object_get_ex(root, "results", &results)) {
        r.rc = -2;
        if (root) json_object_put(root);
        return r;
    }
    for (size_t i = 0; i < json_object_array_length(results); i++) {
        json_object *rec = json_object_array_get_idx(results, i), *v, *reason, *al, *m, *mr;
        if (!json_object_object_get_ex(rec, "verdict", &v)) continue;
        int vi = verdict_of(json_object_get_string(v));
        if (vi < 0) continue;
        r.n[vi]++;
        if (json_object_object_get_ex(rec, "algorithms", &al) && al) r.with_algo++;
        if (json_object_object_get_ex(rec, "reason", &reason)) {
            if (vi == PAR_V_FAIL && !r.first_fail[0])
                snprintf(r.first_fail, sizeof r.first_fail, "%s", json_object_get_string(reason));
            if (vi == PAR_V_ERROR && !r.first_error[0])
                snprintf(r.first_error, sizeof r.first_error, "%s", json_object_get_string(reason));
        }
        if (json_object_object_get_ex(rec, "metrics", &m) && m && json_object_object_get_ex(m, "max_ratio", &mr) && mr)
            r.max_ratio = fmax(r.max_ratio, json_object_get_double(mr));
    }
    json_object_put(root);
    return r;
}

/* parity bench judges as parity run does: on a depthwise 3x3 case where F(4x4,3x3) exceeds the direct budget
 * (6.7x, measured with parity run), the undeclared instance's check is FAIL, the declared one's PASS, and a
 * declaration outside the enum is an error naming the value. */
static void test_bench_judges_declarations(void)
{
    char cmd[4 * PATH_MAX], path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/bench_case.json", tmp_dir);
    snprintf(cmd, sizeof cmd, "%s export 'conv2d(in=[1,8,7,7],w=[8,1,3,3],s=[1,1],p=[1,1,1,1],d=[1,1],g=8,bias=0)"
             "#seed=1' --out %s", exe, path);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s bench %s --plugin %s/tests/plugins/winograd.so -b 'winograd[variant=f43,declare=0],"
             "winograd[variant=f43],winograd[variant=f43,declare=77]' --repeat 1 --warmup 0 --json %s.out.json "
             "> /dev/null 2>&1", exe, path, build_dir, path);
    (void)system(cmd);
    char jpath[PATH_MAX + 48];
    snprintf(jpath, sizeof jpath, "%s.out.json", path);
    json_object *root = json_object_from_file(jpath), *cases, *c0, *bes;
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_FATAL(json_object_object_get_ex(root, "cases", &cases) && json_object_array_length(cases) == 1);
    c0 = json_object_array_get_idx(cases, 0);
    CU_ASSERT_FATAL(json_object_object_get_ex(c0, "backends", &bes) && json_object_array_length(bes) == 3);
    const char *want[3] = {"FAIL", "PASS", NULL};
    for (size_t i = 0; i < 3; i++) {
        json_object *b = json_object_array_get_idx(bes, i), *x;
        if (want[i]) {
            CU_ASSERT(json_object_object_get_ex(b, "check", &x) && strcmp(json_object_get_string(x), want[i]) == 0);
        } else {
            CU_ASSERT(json_object_object_get_ex(b, "error", &x) && strstr(json_object_get_string(x), "algorithm 77"));
        }
    }
    json_object_put(root);
}

/* The checks of a declared, correct algorithm's run: exit 0, at least MIN_PASS passes and nothing else but
 * UNSUPPORTED, every passing record naming the algorithm, the summary's line, and a worst error within the budget. */
static void check_declared_pass(run_stats r, int min_pass)
{
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT(r.n[PAR_V_PASS] >= min_pass);
    CU_ASSERT_EQUAL(r.n[PAR_V_FAIL] + r.n[PAR_V_ERROR] + r.n[PAR_V_CRASH] + r.n[PAR_V_FLAKY], 0);
    CU_ASSERT_EQUAL(r.with_algo, r.n[PAR_V_PASS]);
    CU_ASSERT(r.summary_line);
    CU_ASSERT(r.max_ratio > 0 && r.max_ratio < 1);
}

/* (a) Declared, a correct F(2x2,3x3) and F(4x4,3x3) pass the quick suite's conv2d cases they support (137: output
 * heights and widths of every residue modulo 4, so every partial last tile of F(4x4,3x3) in each direction, padding,
 * groups, depthwise, batch) and the full suite's cases the quick one lacks for them: the input hazards (NaN, Inf,
 * subnormals, ties, ...: the quick suite's hazard cases are dilated, which the plugin does not support) and the
 * asymmetric padding [0,2,1,0], whose outputs give the residue pairs (0,0), (0,1) and (2,3) the quick suite has not.
 * Each record names the algorithm. */
static void test_declared_pass_quick_suite(void)
{
    const char *spec[2] = {"variant=f23", "variant=f43"};
    for (int i = 0; i < 2; i++) {
        check_declared_pass(run_plugin("--suite quick", spec[i], i ? "quick_f43" : "quick_f23"), 130);
        check_declared_pass(run_plugin("--suite full -k 'hazard|p=\\[0,2,1,0\\]'", spec[i],
                                       i ? "edges_f43" : "edges_f23"),
                            20);
    }
}

/* The same on every conv2d case of the full suite they support (over 600; make nightly: about 20 s of CPU). */
static void test_declared_pass_full_suite(void)
{
    PAR_TEST_NIGHTLY();
    const char *spec[2] = {"variant=f23", "variant=f43"};
    for (int i = 0; i < 2; i++) {
        run_stats r = run_plugin("--suite full", spec[i], i ? "full_f43" : "full_f23");
        PAR_TEST_NOTE("\n  full, %s declared: %d PASS, %d FAIL, %d UNSUPPORTED, worst error/budget %.3g\n", spec[i],
                      r.n[PAR_V_PASS], r.n[PAR_V_FAIL], r.n[PAR_V_UNSUPPORTED], r.max_ratio);
        check_declared_pass(r, 500);
    }
}

/* (b) A wrong transform entry fails, with the oracle's reason. */
static void test_transform_bug_fails(void)
{
    const char *spec[3] = {"variant=f23,bug=transform", "variant=f43,bug=transform", "variant=f63,bug=transform"};
    for (int i = 0; i < 3; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "bug%d", i);
        run_stats r = run_plugin("--suite quick", spec[i], tag);
        CU_ASSERT_EQUAL(r.rc, 1);
        CU_ASSERT(r.n[PAR_V_FAIL] > 0);
        CU_ASSERT_EQUAL(r.n[PAR_V_PASS], 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.first_fail, "over budget"));
    }
}

/* (c) Undeclared, the Winograd error is judged against direct summation's budget: F(4x4,3x3) and F(6x6,3x3) exceed it
 * (the reason an algorithm must be declared); F(2x2,3x3) is within it on all but a few cases of the full suite. */
static void test_undeclared(void)
{
    run_stats r43 = run_plugin("--suite quick", "variant=f43,declare=0", "undecl43");
    run_stats r23 = run_plugin("--suite quick", "variant=f23,declare=0", "undecl23");
    PAR_TEST_NOTE("\n  quick, undeclared: F(4x4,3x3) %d FAIL of %d; F(2x2,3x3) %d FAIL of %d\n", r43.n[PAR_V_FAIL],
                  r43.n[PAR_V_FAIL] + r43.n[PAR_V_PASS], r23.n[PAR_V_FAIL], r23.n[PAR_V_FAIL] + r23.n[PAR_V_PASS]);
    CU_ASSERT(r43.n[PAR_V_FAIL] > 0);
    CU_ASSERT_EQUAL(r43.with_algo, 0);
    CU_ASSERT(!r43.summary_line);
    CU_ASSERT(r23.n[PAR_V_PASS] > 0);
    CU_ASSERT_EQUAL(r23.with_algo, 0);
}

/* A declaration outside par_algo is an ERROR naming the backend, the node and the value. */
static void test_bad_declaration_is_error(void)
{
    run_stats r = run_plugin("--suite quick", "variant=f43,declare=77", "bad");
    CU_ASSERT(r.n[PAR_V_ERROR] > 0);
    CU_ASSERT_EQUAL(r.n[PAR_V_PASS] + r.n[PAR_V_FAIL], 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.first_error, "declared algorithm 77"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.first_error, "conv2d0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.first_error, "winograd"));
}

static const CU_TestInfo tests[] = {
    {"the matrices reproduce direct correlation", test_matrices_reproduce_correlation},
    {"tile stage bounds, hand-computed", test_tile_bounds_by_hand},
    {"roundings per transform row, hand-counted", test_row_roundings_by_hand},
    {"Winograd budget, hand-computed; the value unchanged", test_budget_by_hand},
    {"float32 Winograd within the budget, not vacuously", test_float32_within_budget},
    {"declarations checked against the node", test_algo_check},
    {"declared F(2,3), F(4,3): the quick suite's conv2d cases and the full one's edges pass",
     test_declared_pass_quick_suite},
    {"declared F(2,3), F(4,3): the full suite's conv2d cases pass", test_declared_pass_full_suite},
    {"a wrong transform entry fails", test_transform_bug_fails},
    {"undeclared Winograd judged as direct", test_undeclared},
    {"a declaration outside the enum is an ERROR", test_bad_declaration_is_error},
    {"bench judges declared algorithms as run does", test_bench_judges_declarations},
    CU_TEST_INFO_NULL,
};

PAR_CLI_LOCATE("test_winograd")

PAR_TEST_MAIN("winograd", tests)
