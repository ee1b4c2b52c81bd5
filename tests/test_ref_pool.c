/*
 * test_ref_pool.c - tests of the reference pooling and reduction kernels (reference/pool.c): max_pool2d,
 * avg_pool2d, adaptive_avg_pool2d, global_avg_pool2d and mean. Hand-computed cases derived from PyTorch's rules
 * (docs/ops.md), independent formulations (global pool vs mean, adaptive vs avg pool), error budgets (zero for a
 * max of exact inputs, the candidate rule for near ties, soundness against float32), and shape-inference errors.
 *
 * Kernels are called directly on a one-node graph view (tests/ref_helpers.h); one test also runs a conv2d ->
 * max_pool2d -> mean -> linear chain through the graph builder and the interpreter.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "oracle/oracle.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

/* ---- attributes ---------------------------------------------------------------------------------------------- */

/* Pool attributes, every schema attribute present. */
typedef struct pool_p {
    int64_t k[2], s[2], p[4], d[2], ceil_mode, include_pad;
} pool_p;

static par_status maxpool(const pool_p *q, par_rt *x, const par_prec *prec, par_rt **y, par_msg *msg)
{
    par_attr a[5] = {par_a_ints("kernel", 2, q->k), par_a_ints("stride", 2, q->s), par_a_ints("padding", 4, q->p),
                     par_a_ints("dilation", 2, q->d), par_a_int("ceil_mode", q->ceil_mode)};
    return run_opq(par_infer_max_pool2d, par_ref_max_pool2d, "max_pool2d", 1, &x, a, 5, prec, NULL, y, msg);
}

static par_status avgpool(const pool_p *q, par_rt *x, const par_prec *prec, par_rt **y, par_msg *msg)
{
    par_attr a[5] = {par_a_ints("kernel", 2, q->k), par_a_ints("stride", 2, q->s), par_a_ints("padding", 4, q->p),
                     par_a_int("ceil_mode", q->ceil_mode), par_a_int("count_include_pad", q->include_pad)};
    return run_opq(par_infer_avg_pool2d, par_ref_avg_pool2d, "avg_pool2d", 1, &x, a, 5, prec, NULL, y, msg);
}

static par_status adaptive(const int64_t *size, par_rt *x, const par_prec *prec, par_rt **y, par_msg *msg)
{
    par_attr a[1] = {par_a_ints("output_size", 2, size)};
    return run_opq(par_infer_adaptive_avg_pool2d, par_ref_adaptive_avg_pool2d, "adaptive_avg_pool2d", 1, &x, a, 1,
                   prec, NULL, y, msg);
}

static par_status mean(int32_t n_axes, const int64_t *axes, int64_t keep, par_rt *x, const par_prec *prec,
                       par_rt **y, par_msg *msg)
{
    par_attr a[2] = {par_a_ints("axes", n_axes, axes), par_a_int("keepdims", keep)};
    return run_opq(par_infer_mean, par_ref_mean, "mean", 1, &x, a, 2, prec, NULL, y, msg);
}

/* ---- hand-computed cases ------------------------------------------------------------------------------------ */

/* x [1,1,4,4] = 1..16 row-major (x[r][c] = 4r + c + 1), kernel 3, stride 2, padding 1 all round.
 * floor mode: OH = floor((4 + 2 - 2 - 1) / 2) + 1 = 2; row windows [-1,2) and [1,4) -> max rows 1 and 3.
 *   y = [[x11, x13], [x31, x33]] = [[6, 8], [14, 16]].
 * ceil mode: OH = floor((3 + 1) / 2) + 1 = 3; the third window starts at 3 < H + pt = 5, so it stays; rows [3,6)
 *   -> row 3 only. y = [[6, 8, 8], [14, 16, 16], [14, 16, 16]]. */
static void test_max_pool_pad_ceil(void)
{
    int64_t xd[4] = {1, 1, 4, 4}, y2[4] = {1, 1, 2, 2}, y3[4] = {1, 1, 3, 3};
    double xv[16], want2[4] = {6, 8, 14, 16}, want3[9] = {6, 8, 8, 14, 16, 16, 14, 16, 16};
    for (int i = 0; i < 16; i++) xv[i] = i + 1;
    par_rt *x = rt_of(4, xd, xv), *y;
    pool_p q = {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 0};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, y2, want2);
    for (int64_t i = 0; i < y->numel; i++) CU_ASSERT_EQUAL(y->e[i], 0.0); /* exact inputs: exact selection */
    rt_del(y);
    q.ceil_mode = 1;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, y3, want3);
    rt_del(y);
    /* Padding is -inf, never 0: an all-negative image keeps its negative maxima at the padded border. */
    for (int i = 0; i < 16; i++) x->v[i] = -(i + 1);
    double wantn[4] = {-1, -2, -5, -6};
    q.ceil_mode = 0;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, y2, wantn);
    rt_del(y);
    rt_del(x);
}

/* ceil_mode drops a window that would start in the end padding: H = 5, kernel 3, stride 3, padding 1:
 * ceil: floor((5 + 2 - 3 + 2) / 3) + 1 = 3, but the third starts at 2*3 = 6 >= H + pt = 6: dropped, OH = 2.
 * floor: floor(4 / 3) + 1 = 2. Dilation 2, kernel 2, H = 5, no padding: extent 3, OH = 3; x = 1..5 along W:
 * y[j] = max(x[j], x[j+2]) = 3, 4, 5. */
static void test_max_pool_ceil_drop_dilation(void)
{
    int64_t xd[4] = {1, 1, 5, 5}, yd[4] = {1, 1, 2, 2};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, xd), *y;
    pool_p q = {{3, 3}, {3, 3}, {1, 1, 1, 1}, {1, 1}, 1, 0};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, x, &F32, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->dims[2], yd[2]);
    CU_ASSERT_EQUAL(y->dims[3], yd[3]);
    rt_del(y);
    rt_del(x);
    int64_t xd2[4] = {1, 1, 1, 5}, yd2[4] = {1, 1, 1, 3};
    double xv2[5] = {1, 2, 3, 4, 5}, want[3] = {3, 4, 5};
    x = rt_of(4, xd2, xv2);
    pool_p d = {{1, 2}, {1, 1}, {0, 0, 0, 0}, {1, 2}, 0, 0};
    CU_ASSERT_EQUAL_FATAL(maxpool(&d, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd2, want);
    rt_del(y);
    rt_del(x);
}

/* avg_pool2d along W = 4, x = [1,2,3,4], kernel [1,3], stride [1,2], padding [0,1,0,1] (PyTorch's rules):
 * ceil mode: OW = floor((4 + 2 - 3 + 1) / 2) + 1 = 3 (the third window starts at 3 < 5: kept).
 *   window 0: [-1,2) within the padded extent [-1,5): area 3; real {1,2}, sum 3, count 2
 *   window 1: [1,4): area 3; real {2,3,4}, sum 9, count 3
 *   window 2: [3,6) clipped to [3,5): area 2; real {4}, count 1
 *   count_include_pad 1: [3/3, 9/3, 4/2] = [1, 3, 2];  count_include_pad 0: [3/2, 9/3, 4/1] = [1.5, 3, 4].
 * floor mode: OW = floor(3 / 2) + 1 = 2: [1, 3] and [1.5, 3].
 * Asymmetric padding [0,0,0,1], kernel [1,2], stride [1,2], W = 3, x = [1,2,3]: OW = floor((3 + 1 - 2) / 2) + 1 = 2;
 *   windows [0,2) -> 3/2, [2,4) area 2 with one real element 3 -> 1.5 (include) or 3 (exclude). */
static void test_avg_pool_include_pad_ceil(void)
{
    int64_t xd[4] = {1, 1, 1, 4}, y3[4] = {1, 1, 1, 3}, y2[4] = {1, 1, 1, 2};
    double xv[4] = {1, 2, 3, 4};
    par_rt *x = rt_of(4, xd, xv), *y;
    par_msg msg;
    struct {
        int64_t ceil_mode, include_pad;
        const int64_t *dims;
        double want[3];
    } cases[4] = {{1, 1, y3, {1, 3, 2}}, {1, 0, y3, {1.5, 3, 4}}, {0, 1, y2, {1, 3, 0}}, {0, 0, y2, {1.5, 3, 0}}};
    for (int i = 0; i < 4; i++) {
        pool_p q = {{1, 3}, {1, 2}, {0, 1, 0, 1}, {1, 1}, cases[i].ceil_mode, cases[i].include_pad};
        CU_ASSERT_EQUAL_FATAL(avgpool(&q, x, &F32, &y, &msg), PAR_OK);
        expect_exact(y, 4, cases[i].dims, cases[i].want);
        rt_del(y);
    }
    rt_del(x);
    int64_t xda[4] = {1, 1, 1, 3};
    double xva[3] = {1, 2, 3}, inc[2] = {1.5, 1.5}, exc[2] = {1.5, 3};
    x = rt_of(4, xda, xva);
    pool_p q = {{1, 2}, {1, 2}, {0, 0, 0, 1}, {1, 1}, 0, 1};
    CU_ASSERT_EQUAL_FATAL(avgpool(&q, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, y2, inc);
    rt_del(y);
    q.include_pad = 0;
    CU_ASSERT_EQUAL_FATAL(avgpool(&q, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, y2, exc);
    rt_del(y);
    rt_del(x);
}

/* adaptive_avg_pool2d, x [1,1,3,5] with x[r][c] = 10 r + c, output [2,3]:
 * rows (H 3 -> 2): [0, ceil(3/2)=2) and [floor(3/2)=1, 3): row means 0.5 and 1.5;
 * cols (W 5 -> 3): [0, ceil(5/3)=2), [floor(5/3)=1, ceil(10/3)=4), [floor(10/3)=3, 5): col means 0.5, 2, 3.5;
 * y = 10 * row mean + col mean = [[5.5, 7, 8.5], [15.5, 17, 18.5]]. */
static void test_adaptive_uneven(void)
{
    int64_t xd[4] = {1, 1, 3, 5}, yd[4] = {1, 1, 2, 3}, size[2] = {2, 3};
    double xv[15], want[6] = {5.5, 7, 8.5, 15.5, 17, 18.5};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++) xv[r * 5 + c] = 10 * r + c;
    par_rt *x = rt_of(4, xd, xv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(adaptive(size, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd, want);
    rt_del(y);
    /* Output larger than the input: windows overlap, each of one or two elements. H 3 -> 4: rows [0,1), [0,2),
     * [1,3), [2,3); on column 0 (values 0, 10, 20): 0, 5, 15, 20. */
    int64_t big[2] = {4, 1};
    CU_ASSERT_EQUAL_FATAL(adaptive(big, x, &F32, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->dims[2], 4);
    double col_mean = 2.0; /* columns 0..4 averaged */
    CU_ASSERT_EQUAL(y->v[0], 0 + col_mean);
    CU_ASSERT_EQUAL(y->v[1], 5 + col_mean);
    CU_ASSERT_EQUAL(y->v[2], 15 + col_mean);
    CU_ASSERT_EQUAL(y->v[3], 20 + col_mean);
    rt_del(y);
    rt_del(x);
}

/* mean over axes (0, -1) of x [2,3,2] with x[i][j][k] = 100 i + 10 j + k: 50 + 10 j + 0.5 = [50.5, 60.5, 70.5];
 * keepdims 1 gives [1,3,1], keepdims 0 gives [3]. */
static void test_mean_two_axes(void)
{
    int64_t xd[3] = {2, 3, 2}, axes[2] = {0, -1}, k1[3] = {1, 3, 1}, k0[1] = {3};
    double xv[12], want[3] = {50.5, 60.5, 70.5};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) xv[(i * 3 + j) * 2 + k] = 100 * i + 10 * j + k;
    par_rt *x = rt_of(3, xd, xv), *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(mean(2, axes, 1, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 3, k1, want);
    /* Budget: 4 terms, sum|x| / 4 = 60.5 for j = 1: gamma_5 * 60.5, then storage. */
    double pre = par_gamma(5, 0x1p-24) * 60.5;
    CU_ASSERT_DOUBLE_EQUAL(y->e[1], pre + 0x1p-24 * (60.5 + pre), 1e-20);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(mean(2, axes, 0, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 1, k0, want);
    rt_del(y);
    /* Every axis, keepdims 0: a rank-0 result, the mean of all = 50 + 10 + 0.5. */
    int64_t all[3] = {2, 0, 1};
    CU_ASSERT_EQUAL_FATAL(mean(3, all, 0, x, &F32, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->rank, 0);
    CU_ASSERT_EQUAL(y->v[0], 60.5);
    rt_del(y);
    rt_del(x);
}

/* prod over axis 1 of x [2, 3] = [[0.5, -2, 3], [1e-30, 1e-30, 4]], exact inputs, f32:
 *   row 0: -3; two multiplications, each relative u: rounding gamma_2 * 3; underflow allowance 2 eta (one per
 *     multiplication, eta = 2^-150 the half subnormal) times the growth max(1, .5) * 2 * 3 = 6 (times 1 + gamma_3);
 *     no propagated part; then storage u (3 + pre). That is about 9 u * 3 / 3 = 2.25 f32 ulps of 3 (2^-22): a
 *     backend 2 ulps off passes, 3 ulps off fails.
 *   row 1: 4e-60, below f32's subnormals: an f32 product is 0, within the underflow allowance 2 eta * 4; 1e-30 is
 *     not. */
static void test_prod(void)
{
    int64_t xd[2] = {2, 3}, ax[1] = {1};
    double xv[6] = {0.5, -2, 3, 1e-30, 1e-30, 4};
    par_rt *x = rt_of(2, xd, xv), *y;
    par_attr a[2] = {par_a_ints("axes", 1, ax), par_a_int("keepdims", 0)};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_opq(par_infer_mean, par_ref_prod, "prod", 1, &x, a, 2, &F32, NULL, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], -3);
    CU_ASSERT_DOUBLE_EQUAL(y->v[1], 4e-60, 1e-75);
    const double u = 0x1p-24, eta = 0x1p-150;
    double pre = par_gamma(2, u) * 3 + 2 * eta * 6 * (1 + par_gamma(3, u));
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], pre + u * (3 + pre), 1e-22);
    CU_ASSERT(y->e[1] >= 4e-60 && y->e[1] < 1e-43);
    par_metrics m;
    const float two_ulps[2] = {-3.0f - 2 * 0x1p-22f, 0.0f}, three_ulps[2] = {-3.0f - 3 * 0x1p-22f, 0.0f};
    const float not_underflow[2] = {-3.0f, 1e-30f};
    CU_ASSERT_EQUAL(par_oracle_compare(y, two_ulps, &m), 0);
    CU_ASSERT_EQUAL(par_oracle_compare(y, three_ulps, &m), 1);
    CU_ASSERT_EQUAL(par_oracle_compare(y, not_underflow, &m), 1);
    rt_del(y);
    rt_del(x);
}

/* ---- independent formulations ------------------------------------------------------------------------------ */

/* global_avg_pool2d == mean over axes (2, 3) with keepdims, values and budgets. */
static void test_global_vs_mean(void)
{
    const uint64_t seed = 3;
    uint64_t s = seed;
    int bad = 0;
    for (int it = 0; it < 30; it++) {
        int64_t xd[4] = {rng_int(&s, 1, 2), rng_int(&s, 1, 4), rng_int(&s, 1, 9), rng_int(&s, 1, 9)};
        int64_t axes[2] = {2, 3};
        par_rt *x = rt_rand(4, xd, &s), *yg, *ym;
        for (int64_t i = 0; i < x->numel; i++) x->e[i] = 1e-7 * (double)(i % 3);
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_global_avg_pool2d, par_ref_global_avg_pool2d, "global_avg_pool2d", 1,
                                     &x, NULL, 0, &yg, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(mean(2, axes, 1, x, &F32, &ym, &msg), PAR_OK);
        CU_ASSERT_EQUAL(yg->rank, 4);
        CU_ASSERT_EQUAL(yg->dims[2] * yg->dims[3], 1);
        CU_ASSERT_EQUAL(yg->numel, ym->numel);
        for (int64_t i = 0; i < yg->numel; i++)
            if (fabs(yg->v[i] - ym->v[i]) > 1e-15 || fabs(yg->e[i] - ym->e[i]) > 1e-20 * (1 + yg->e[i])) {
                if (!bad) fprintf(stderr, "\n  seed=%llu it=%d element %lld: global %.17g (%g), mean %.17g (%g)",
                                  (unsigned long long)seed, it, (long long)i, yg->v[i], yg->e[i], ym->v[i], ym->e[i]);
                bad++;
            }
        rt_del(x), rt_del(yg), rt_del(ym);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* adaptive_avg_pool2d with output = input / k equals avg_pool2d with kernel k and stride k (no padding), values
 * and budgets; also the mean over the window computed here. */
static void test_adaptive_vs_avg_pool(void)
{
    const uint64_t seed = 11;
    uint64_t s = seed;
    int bad = 0;
    for (int it = 0; it < 40; it++) {
        int64_t kh = rng_int(&s, 1, 4), kw = rng_int(&s, 1, 4), oh = rng_int(&s, 1, 4), ow = rng_int(&s, 1, 4);
        int64_t xd[4] = {1, rng_int(&s, 1, 3), kh * oh, kw * ow}, size[2] = {oh, ow};
        par_rt *x = rt_rand(4, xd, &s), *ya, *yp;
        par_msg msg;
        pool_p q = {{kh, kw}, {kh, kw}, {0, 0, 0, 0}, {1, 1}, rng_int(&s, 0, 1), rng_int(&s, 0, 1)};
        CU_ASSERT_EQUAL_FATAL(adaptive(size, x, &F32, &ya, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(avgpool(&q, x, &F32, &yp, &msg), PAR_OK);
        CU_ASSERT_EQUAL_FATAL(ya->numel, yp->numel);
        for (int64_t i = 0; i < ya->numel; i++) {
            int64_t c = i / (oh * ow), r = (i / ow) % oh, col = i % ow;
            double sum = 0;
            for (int64_t a = 0; a < kh; a++)
                for (int64_t b = 0; b < kw; b++) sum += x->v[(c * xd[2] + r * kh + a) * xd[3] + col * kw + b];
            double want = sum / (double)(kh * kw);
            if (fabs(ya->v[i] - yp->v[i]) > 1e-15 || ya->e[i] != yp->e[i] || fabs(ya->v[i] - want) > 1e-15) {
                if (!bad) fprintf(stderr, "\n  seed=%llu it=%d element %lld: adaptive %.17g, avg_pool %.17g, want %.17g",
                                  (unsigned long long)seed, it, (long long)i, ya->v[i], yp->v[i], want);
                bad++;
            }
        }
        rt_del(x), rt_del(ya), rt_del(yp);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* max_pool2d against a brute force over the padded image (padding -inf) for random shapes, paddings, dilations,
 * ceil modes: the values must agree exactly. */
static void test_max_pool_vs_padded(void)
{
    const uint64_t seed = 123;
    uint64_t s = seed;
    int ran = 0, bad = 0;
    for (int it = 0; it < 200; it++) {
        pool_p q;
        for (int i = 0; i < 2; i++) {
            q.k[i] = rng_int(&s, 1, 4);
            q.s[i] = rng_int(&s, 1, 3);
            q.d[i] = rng_int(&s, 1, 2);
        }
        for (int i = 0; i < 4; i++) q.p[i] = rng_int(&s, 0, (q.d[i % 2] * (q.k[i % 2] - 1) + 1) / 2);
        q.ceil_mode = rng_int(&s, 0, 1);
        q.include_pad = 0;
        int64_t xd[4] = {1, 2, rng_int(&s, 1, 8), rng_int(&s, 1, 8)};
        par_rt *x = rt_rand(4, xd, &s), *y;
        par_msg msg;
        if (maxpool(&q, x, &F32, &y, &msg) != PAR_OK) {
            rt_del(x);
            continue;
        }
        ran++;
        for (int64_t c = 0; c < 2; c++)
            for (int64_t oh = 0; oh < y->dims[2]; oh++)
                for (int64_t ow = 0; ow < y->dims[3]; ow++) {
                    double m = -INFINITY;
                    for (int64_t a = 0; a < q.k[0]; a++)
                        for (int64_t b = 0; b < q.k[1]; b++) {
                            int64_t ih = oh * q.s[0] + a * q.d[0] - q.p[0], iw = ow * q.s[1] + b * q.d[1] - q.p[1];
                            double v = (ih >= 0 && ih < xd[2] && iw >= 0 && iw < xd[3])
                                           ? x->v[(c * xd[2] + ih) * xd[3] + iw] : -INFINITY;
                            m = v > m ? v : m;
                        }
                    double got = y->v[(c * y->dims[2] + oh) * y->dims[3] + ow];
                    if (got != m) {
                        if (!bad) fprintf(stderr, "\n  seed=%llu it=%d: got %.17g, brute force %.17g",
                                          (unsigned long long)seed, it, got, m);
                        bad++;
                    }
                }
        rt_del(x), rt_del(y);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(ran >= 100);
}

/* ---- budgets --------------------------------------------------------------------------------------------------- */

/* Near ties: window [a = 1 (e 1e-6), b = 1 + 1e-7 (e 0), c = 0.5 (e 0.1), d = 0.9 (e 0.05)]. The max is b; a backend's
 * max is at least max(v - e) = 1 + 1e-7, so a (1 + 1e-6 >= that) could be selected, c (0.6) and d (0.95) could
 * not: budget max(e_a, e_b) = 1e-6. */
static void test_max_pool_near_tie_budget(void)
{
    int64_t xd[4] = {1, 1, 2, 2}, yd[4] = {1, 1, 1, 1};
    double xv[4] = {1, 1 + 1e-7, 0.5, 0.9}, want[1] = {1 + 1e-7};
    par_rt *x = rt_of(4, xd, xv), *y;
    x->e[0] = 1e-6;
    x->e[2] = 0.1;
    x->e[3] = 0.05;
    pool_p q = {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, x, &F32, &y, &msg), PAR_OK);
    expect_exact(y, 4, yd, want);
    CU_ASSERT_EQUAL(y->e[0], 1e-6);
    rt_del(y);
    /* Raise d's budget to 0.2: 0.9 + 0.2 >= 1 + 1e-7, so d could now be selected and its budget rules. */
    x->e[3] = 0.2;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, x, &F32, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->e[0], 0.2);
    rt_del(y);
    rt_del(x);
}

/* Averages computed in float32 (reversed summation order, then a multiply by the rounded reciprocal, as XNNPACK
 * does) stay within their budgets; the worst ratio is printed and must be well under 1. Its ceiling is about 2/3:
 * a one-element window with a divisor other than 1 has two roundings (reciprocal, product) against a budget of
 * about 3u|y| (gamma_2 for them plus the storage u); bigger windows sit lower. */
static void test_avg_budget_vs_f32(void)
{
    const uint64_t seed = 8;
    uint64_t s = seed;
    double worst = 0;
    int64_t checked = 0, over = 0;
    for (int it = 0; it < 60; it++) {
        pool_p q;
        for (int i = 0; i < 2; i++) {
            q.k[i] = rng_int(&s, 1, 6);
            q.s[i] = rng_int(&s, 1, 3);
            q.d[i] = 1;
        }
        for (int i = 0; i < 4; i++) q.p[i] = rng_int(&s, 0, q.k[i % 2] / 2);
        q.ceil_mode = rng_int(&s, 0, 1);
        q.include_pad = rng_int(&s, 0, 1);
        int64_t xd[4] = {1, 3, rng_int(&s, 4, 12), rng_int(&s, 4, 12)};
        par_rt *x = rt_rand(4, xd, &s), *y;
        for (int64_t i = 0; i < x->numel; i++) x->v[i] += 2.0; /* same sign: the sum's relative error is largest */
        par_msg msg;
        if (avgpool(&q, x, &F32, &y, &msg) != PAR_OK) {
            rt_del(x);
            continue;
        }
        for (int64_t c = 0; c < 3; c++)
            for (int64_t oh = 0; oh < y->dims[2]; oh++)
                for (int64_t ow = 0; ow < y->dims[3]; ow++) {
                    int64_t h0 = oh * q.s[0] - q.p[0], w0 = ow * q.s[1] - q.p[1];
                    int64_t h1 = h0 + q.k[0] < xd[2] + q.p[2] ? h0 + q.k[0] : xd[2] + q.p[2];
                    int64_t w1 = w0 + q.k[1] < xd[3] + q.p[3] ? w0 + q.k[1] : xd[3] + q.p[3];
                    int64_t area = (h1 - h0) * (w1 - w0), cnt = 0;
                    float acc = 0.0f;
                    for (int64_t ih = h1 - 1; ih >= h0; ih--)
                        for (int64_t iw = w1 - 1; iw >= w0; iw--) {
                            if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3]) continue;
                            acc = acc + (float)x->v[(c * xd[2] + ih) * xd[3] + iw];
                            cnt++;
                        }
                    float recip = 1.0f / (float)(q.include_pad ? area : cnt);
                    volatile float r = acc * recip;
                    int64_t yi = (c * y->dims[2] + oh) * y->dims[3] + ow;
                    double err = fabs((double)r - y->v[yi]);
                    if (!(err <= y->e[yi])) {
                        if (!over) fprintf(stderr, "\n  seed=%llu it=%d element %lld: |f32 - ref| %g > budget %g",
                                           (unsigned long long)seed, it, (long long)yi, err, y->e[yi]);
                        over++;
                    }
                    if (y->e[yi] > 0 && err / y->e[yi] > worst) worst = err / y->e[yi];
                    checked++;
                }
        rt_del(x), rt_del(y);
    }
    PAR_TEST_NOTE("\n  avg_pool2d f32 vs reference: %lld elements, max |f32 - ref| / budget = %.3g\n", (long long)checked,
           worst);
    CU_ASSERT(checked > 1000);
    CU_ASSERT_EQUAL(over, 0);
    CU_ASSERT(worst < 0.7);
    CU_ASSERT(worst > 0.0);
}

/* Averages propagate sum e(x) / d; with an exact arithmetic profile that is the whole budget. */
static void test_avg_budget_propagation(void)
{
    int64_t xd[4] = {1, 1, 2, 2}, size[2] = {1, 1};
    double xv[4] = {1, -2, 3, -4};
    par_rt *x = rt_of(4, xd, xv), *y;
    double es[4] = {0.1, 0.2, 0.3, 0.4};
    memcpy(x->e, es, sizeof es);
    par_prec exact = {.u = 0, .u_store = 0, .fn_ulps = 0};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(adaptive(size, x, &exact, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], -0.5);
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], 0.25, 1e-16);
    rt_del(y);
    /* An unbounded input budget gives an unbounded average, never NaN (u = 0 times inf). */
    x->e[2] = INFINITY;
    CU_ASSERT_EQUAL_FATAL(adaptive(size, x, &exact, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->e[0]) && y->e[0] > 0);
    rt_del(y);
    CU_ASSERT_EQUAL_FATAL(adaptive(size, x, &F32, &y, &msg), PAR_OK);
    CU_ASSERT(isinf(y->e[0]) && y->e[0] > 0);
    rt_del(y);
    rt_del(x);
}

/* ---- through the graph builder and the interpreter --------------------------------------------------------- */

/* A chain built with the graph builder (schema defaults filled by it, conv2d's bias left out):
 *   x [1,2,5,5] -> conv2d (depthwise, multiplier 2, padding 1) -> max_pool2d 2x2 s2 ceil -> mean (2,3) -> linear.
 * par_ref_run must agree with a brute-force conv here, and, stage by stage, with the pool and mean kernels called
 * directly on the interpreter's previous tensor (values and budgets), with the shapes inference promises. */
static void test_graph_chain(void)
{
    const uint64_t seed = 31;
    uint64_t s = seed;
    par_msg msg;
    par_graph *g = par_graph_create("chain");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {4, 1, 3, 3}, lwd[2] = {3, 4}, lbd[1] = {3};
    float xf[50], wf[36], lwf[12], lbf[3];
    for (int i = 0; i < 50; i++) xf[i] = (float)rng_val(&s);
    for (int i = 0; i < 36; i++) wf[i] = (float)rng_val(&s);
    for (int i = 0; i < 12; i++) lwf[i] = (float)rng_val(&s);
    for (int i = 0; i < 3; i++) lbf[i] = (float)rng_val(&s);
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, xd, &msg);
    int32_t w = par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, wd, wf, &msg);
    int32_t lw = par_graph_add_const(g, "lw", PAR_DTYPE_F32, 2, lwd, lwf, &msg);
    int32_t lb = par_graph_add_const(g, "lb", PAR_DTYPE_F32, 1, lbd, lbf, &msg);
    CU_ASSERT_FATAL(x >= 0 && w >= 0 && lw >= 0 && lb >= 0);
    int64_t pad[4] = {1, 1, 1, 1}, k2[2] = {2, 2}, axes[2] = {2, 3};
    par_attr ca[2] = {par_a_int("groups", 2), par_a_ints("padding", 4, pad)};
    par_attr pa[3] = {par_a_ints("kernel", 2, k2), par_a_ints("stride", 2, k2), par_a_int("ceil_mode", 1)};
    par_attr ma[1] = {par_a_ints("axes", 2, axes)};
    par_out_spec o1 = {.name = "c"}, o2 = {.name = "p"}, o3 = {.name = "m"}, o4 = {.name = "y"};
    int32_t n1 = par_graph_add_node(g, "conv2d", "conv", 2, (int32_t[]){x, w}, 2, ca, &o1, &msg);
    if (n1 < 0) fprintf(stderr, "\n  %s", msg.text);
    CU_ASSERT_FATAL(n1 >= 0);
    int32_t c = par_graph_find_value(g, "c");
    CU_ASSERT_FATAL(par_graph_add_node(g, "max_pool2d", "pool", 1, &c, 3, pa, &o2, &msg) >= 0);
    int32_t p = par_graph_find_value(g, "p");
    CU_ASSERT_FATAL(par_graph_add_node(g, "mean", "mean", 1, &p, 1, ma, &o3, &msg) >= 0);
    int32_t m = par_graph_find_value(g, "m");
    CU_ASSERT_FATAL(par_graph_add_node(g, "linear", "fc", 3, (int32_t[]){m, lw, lb}, 0, NULL, &o4, &msg) >= 0);
    int32_t y = par_graph_find_value(g, "y");
    CU_ASSERT_FATAL(par_graph_mark_output(g, y, &msg) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(g, &msg) == PAR_OK);
    const par_graph_desc *d = par_graph_desc_of(g);
    /* Inferred shapes: conv [1,4,5,5]; pool floor((5 - 2 + 1) / 2) + 1 = 3 -> [1,4,3,3]; mean [1,4]; linear [1,3]. */
    CU_ASSERT_EQUAL(d->values[c].dims[1], 4);
    CU_ASSERT_EQUAL(d->values[c].dims[2], 5);
    CU_ASSERT_EQUAL(d->values[p].dims[3], 3);
    CU_ASSERT_EQUAL(d->values[m].rank, 2);
    CU_ASSERT_EQUAL(d->values[y].dims[1], 3);

    par_ref_result *r = NULL;
    const void *inputs[1] = {xf};
    par_status rs = par_ref_run(d, &F32, inputs, &r, &msg);
    if (rs != PAR_OK) fprintf(stderr, "\n  par_ref_run: %s", msg.text);
    CU_ASSERT_EQUAL_FATAL(rs, PAR_OK);
    /* conv: output channel o reads input channel o / 2, zero padding 1. */
    int bad = 0;
    for (int o = 0; o < 4; o++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++) {
                double acc = 0;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        int ih = i - 1 + a, iw = j - 1 + b;
                        if (ih >= 0 && ih < 5 && iw >= 0 && iw < 5)
                            acc += (double)wf[(o * 3 + a) * 3 + b] * (double)xf[((o / 2) * 5 + ih) * 5 + iw];
                    }
                bad += fabs(r->values[c].v[(o * 5 + i) * 5 + j] - acc) > 1e-15;
                bad += !(r->values[c].e[(o * 5 + i) * 5 + j] > 0);
            }
    CU_ASSERT_EQUAL(bad, 0);
    /* pool and mean on the interpreter's tensors, directly. */
    pool_p q = {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, 0};
    par_rt *yp = NULL, *ym = NULL;
    CU_ASSERT_EQUAL_FATAL(maxpool(&q, &r->values[c], &F32, &yp, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(mean(2, axes, 0, &r->values[p], &F32, &ym, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(yp->numel, r->values[p].numel);
    CU_ASSERT_EQUAL_FATAL(ym->numel, r->values[m].numel);
    for (int64_t i = 0; i < yp->numel; i++)
        bad += yp->v[i] != r->values[p].v[i] || yp->e[i] != r->values[p].e[i];
    for (int64_t i = 0; i < ym->numel; i++)
        bad += ym->v[i] != r->values[m].v[i] || ym->e[i] != r->values[m].e[i];
    /* linear: y[o] = lb[o] + sum_k m[k] lw[o][k]. */
    for (int o = 0; o < 3; o++) {
        double acc = lbf[o];
        for (int k = 0; k < 4; k++) acc += r->values[m].v[k] * (double)lwf[o * 4 + k];
        bad += fabs(r->values[y].v[o] - acc) > 1e-15 || !(r->values[y].e[o] > 0);
    }
    CU_ASSERT_EQUAL(bad, 0);
    rt_del(yp), rt_del(ym);
    par_ref_result_destroy(r);
    par_graph_destroy(g);
}

/* ---- errors ----------------------------------------------------------------------------------------------------- */

static void test_pool_shape_errors(void)
{
    int64_t xd[4] = {1, 2, 3, 3}, x3d[3] = {2, 3, 3};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, xd), *x3 = rt_new(PAR_DTYPE_F32, 3, x3d), *y;
    par_msg msg;
    /* kernel larger than the padded input: output size 0 */
    pool_p q = {{5, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0};
    expect_error(maxpool(&q, x, &F32, &y, &msg), &msg, "'kernel'");
    expect_error(avgpool(&q, x, &F32, &y, &msg), &msg, "'kernel'");
    /* padding beyond half the kernel */
    pool_p p = {{3, 3}, {1, 1}, {0, 2, 0, 0}, {1, 1}, 0, 0};
    expect_error(maxpool(&p, x, &F32, &y, &msg), &msg, "'padding'");
    expect_error(avgpool(&p, x, &F32, &y, &msg), &msg, "'padding'");
    /* zero stride, zero kernel, bad ceil_mode, bad count_include_pad */
    pool_p s0 = {{2, 2}, {0, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0};
    expect_error(maxpool(&s0, x, &F32, &y, &msg), &msg, "'stride'");
    pool_p k0 = {{2, 0}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0};
    expect_error(avgpool(&k0, x, &F32, &y, &msg), &msg, "'kernel'");
    pool_p c2 = {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 2, 0};
    expect_error(maxpool(&c2, x, &F32, &y, &msg), &msg, "'ceil_mode'");
    pool_p i2 = {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 7};
    expect_error(avgpool(&i2, x, &F32, &y, &msg), &msg, "'count_include_pad'");
    /* a dilated window that skips the whole image: H = 1, kernel 2, dilation 3, padding 2 top and bottom */
    int64_t xd1[4] = {1, 1, 1, 1};
    par_rt *x1 = rt_new(PAR_DTYPE_F32, 4, xd1);
    pool_p dl = {{2, 1}, {1, 1}, {2, 0, 2, 0}, {3, 1}, 0, 0};
    expect_error(maxpool(&dl, x1, &F32, &y, &msg), &msg, "'dilation'");
    /* rank 3 input */
    pool_p ok = {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0};
    expect_error(maxpool(&ok, x3, &F32, &y, &msg), &msg, "rank 3");
    CU_ASSERT_EQUAL(maxpool(&ok, x, &F32, &y, &msg), PAR_OK);
    rt_del(y);
    /* adaptive: output_size 0 */
    int64_t zero[2] = {2, 0};
    expect_error(adaptive(zero, x, &F32, &y, &msg), &msg, "'output_size'");
    expect_error(run_op(par_infer_global_avg_pool2d, NULL, "global_avg_pool2d", 1, &x3, NULL, 0, NULL, &msg), &msg,
                 "rank 3");
    /* mean: repeated axis (1 and -3 are the same for rank 4), out of range, empty */
    int64_t rep[2] = {1, -3}, far[1] = {4}, neg[1] = {-5};
    expect_error(mean(2, rep, 0, x, &F32, &y, &msg), &msg, "'axes'");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "repeated"));
    expect_error(mean(1, far, 0, x, &F32, &y, &msg), &msg, "'axes'");
    expect_error(mean(1, neg, 0, x, &F32, &y, &msg), &msg, "'axes'");
    expect_error(mean(0, NULL, 0, x, &F32, &y, &msg), &msg, "'axes'");
    expect_error(mean(1, far, 3, x, &F32, &y, &msg), &msg, "'keepdims'");
    rt_del(x), rt_del(x3), rt_del(x1);
}

static void test_pool_dtype_refused(void)
{
    int64_t xd[4] = {1, 1, 2, 2}, axes[1] = {1};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, xd), *y = NULL;
    x->dtype = PAR_DTYPE_QS8;
    par_msg msg;
    pool_p q = {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0};
    CU_ASSERT_EQUAL(maxpool(&q, x, &F32, &y, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "qs8"));
    CU_ASSERT_EQUAL(mean(1, axes, 0, x, &F32, &y, &msg), PAR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(y);
    rt_del(x);
}

static const CU_TestInfo tests[] = {
    {"prod", test_prod},
    {"max_pool2d padding and ceil_mode", test_max_pool_pad_ceil},
    {"max_pool2d ceil_mode drop, dilation", test_max_pool_ceil_drop_dilation},
    {"avg_pool2d count_include_pad and ceil_mode", test_avg_pool_include_pad_ceil},
    {"adaptive_avg_pool2d uneven windows", test_adaptive_uneven},
    {"mean over two axes", test_mean_two_axes},
    {"global_avg_pool2d vs mean", test_global_vs_mean},
    {"adaptive_avg_pool2d vs avg_pool2d", test_adaptive_vs_avg_pool},
    {"max_pool2d vs brute force", test_max_pool_vs_padded},
    {"max_pool2d near-tie budget", test_max_pool_near_tie_budget},
    {"avg_pool2d budget vs f32", test_avg_budget_vs_f32},
    {"average budget propagation", test_avg_budget_propagation},
    {"graph builder and interpreter", test_graph_chain},
    {"shape inference errors", test_pool_shape_errors},
    {"non-float dtype refused", test_pool_dtype_refused},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_pool", tests)
