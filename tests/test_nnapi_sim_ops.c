/*
 * test_nnapi_sim_ops.c - the float operations of the simulated libneuralnetworks.so, each on small cases whose
 * expected values are worked out by hand in the comments (or by an independent libm formula, named where used):
 * broadcasting, padding, strides, dilation, NCHW, resizing, quantize and dequantize, and the level-29 operations
 * sequence models decompose into (GATHER, MAXIMUM, MINIMUM, RSQRT). The quantized operations and
 * float16 are test_nnapi_sim_quant.c's.
 */
#include "nnapi_sim_helpers.h"


/* ---- float operations ---- */

/* y = a OP b with b a constant, fused activation `fuse`. */
static void binary_case(int32_t code, const uint32_t *ad, uint32_t ar, const float *a, const uint32_t *bd, uint32_t br,
                        const float *bv, int32_t fuse, const float *want, size_t n)
{
    mb b = mb_new();
    uint32_t x = f32t(&b, ad, ar), c = f32c(&b, bd, br, bv), f = i32(&b, fuse),
             y = opnd(&b, ANEURALNETWORKS_TENSOR_FLOAT32, NULL, 0, 0, 0);
    /* y has unknown rank: a dynamic output (level 29), sized by the run */
    op(&b, code, IDX(x, c, f), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    size_t na = 1;
    for (uint32_t i = 0; i < ar; i++) na *= ad[i];
    float got[16] = {0};
    CU_ASSERT_EQUAL(run1(b.m, a, na * 4, got, n * 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, want, n, 0));
    ANeuralNetworksModel_free(b.m);
}

static void test_binary_float(void)
{
    const float a[4] = {1, -2, 3, -4}, row[2] = {0.5f, 1};
    /* [2,2] with [2] broadcast over rows */
    binary_case(ANEURALNETWORKS_ADD, D(2, 2), a, D(2), row, ANEURALNETWORKS_FUSED_RELU,
                (const float[]){1.5f, 0, 3.5f, 0}, 4);
    binary_case(ANEURALNETWORKS_SUB, D(2, 2), a, D(2), row, 0, (const float[]){0.5f, -3, 2.5f, -5}, 4);
    binary_case(ANEURALNETWORKS_MUL, D(2, 2), a, D(2), row, ANEURALNETWORKS_FUSED_RELU1,
                (const float[]){0.5f, -1, 1, -1}, 4);
    binary_case(ANEURALNETWORKS_DIV, D(2, 2), a, D(2), row, 0, (const float[]){2, -2, 6, -4}, 4);
    /* [2,1] + [3] -> [2,3] */
    binary_case(ANEURALNETWORKS_ADD, D(2, 1), (const float[]){1, 2}, D(3), (const float[]){10, 20, 30}, 0,
                (const float[]){11, 21, 31, 12, 22, 32}, 6);
}

/* CONV_2D: x [1,3,3,1] = 1..9, 2x2 filter of ones, SAME, stride 2: out = ceil(3/2) = 2, padding total
 * (2-1)*2 + 2 - 3 = 1, begin 0, end 1: 1+2+4+5 = 12, 3+6 = 9, 7+8 = 15, 9. */
static void test_conv_float(void)
{
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, ones[4] = {1, 1, 1, 1}, zero[1] = {0};
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 3, 3, 1)), w = f32c(&b, D(1, 2, 2, 1), ones), bias = f32c(&b, D(1), zero);
    uint32_t y = f32t(&b, D(1, 2, 2, 1));
    op(&b, ANEURALNETWORKS_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_SAME), i32(&b, 2), i32(&b, 2), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[4];
    CU_ASSERT_EQUAL(run1(b.m, x, sizeof x, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){12, 9, 15, 9}, 4, 0));
    ANeuralNetworksModel_free(b.m);

    /* Dilation 2 (explicit padding 0, NHWC flag false): filter {1,0,0,1} spans 3x3: x[0][0] + x[2][2] = 10. */
    b = mb_new();
    in = f32t(&b, D(1, 3, 3, 1));
    w = f32c(&b, D(1, 2, 2, 1), (const float[]){1, 0, 0, 1});
    bias = f32c(&b, D(1), zero);
    y = f32t(&b, D(1, 1, 1, 1));
    uint32_t z = i32(&b, 0), one = i32(&b, 1), two = i32(&b, 2);
    op(&b, ANEURALNETWORKS_CONV_2D, IDX(in, w, bias, z, z, z, z, one, one, z, flag(&b, 0), two, two), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    CU_ASSERT_EQUAL(run1(b.m, x, sizeof x, got, 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got[0], 10);
    ANeuralNetworksModel_free(b.m);

    /* NCHW: x [1,2,2,2] channel 0 {1,2,3,4}, channel 1 {10,20,30,40}; 1x1 filter {1, 0.5}, bias 1:
     * 1 + x0 + x1 / 2 = 7, 13, 19, 25 (output NCHW [1,1,2,2]). */
    b = mb_new();
    in = f32t(&b, D(1, 2, 2, 2));
    w = f32c(&b, D(1, 1, 1, 2), (const float[]){1, 0.5f});
    bias = f32c(&b, D(1), (const float[]){1});
    y = f32t(&b, D(1, 1, 2, 2));
    z = i32(&b, 0), one = i32(&b, 1);
    op(&b, ANEURALNETWORKS_CONV_2D, IDX(in, w, bias, z, z, z, z, one, one, z, flag(&b, 1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    const float xc[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    CU_ASSERT_EQUAL(run1(b.m, xc, sizeof xc, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){7, 13, 19, 25}, 4, 0));
    ANeuralNetworksModel_free(b.m);
}

/* DEPTHWISE_CONV_2D, multiplier 2: x [1,2,2,1] = {1,2,3,4}; filter [1,2,2,2] laid out [ky][kx][oc]: oc 0 all ones,
 * oc 1 {1,-1,0,2}; bias {0,1}; VALID: oc 0 = 10, oc 1 = 1 - 2 + 0 + 8 + 1 = 8. */
static void test_depthwise_float(void)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 2, 2, 1));
    uint32_t w = f32c(&b, D(1, 2, 2, 2), (const float[]){1, 1, 1, -1, 1, 0, 1, 2});
    uint32_t bias = f32c(&b, D(2), (const float[]){0, 1}), y = f32t(&b, D(1, 1, 1, 2));
    op(&b, ANEURALNETWORKS_DEPTHWISE_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_VALID), i32(&b, 1), i32(&b, 1), i32(&b, 2), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[2];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3, 4}, 16, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){10, 8}, 2, 0));
    ANeuralNetworksModel_free(b.m);
}

/* TRANSPOSE_CONV_2D, explicit, stride 2, 2x2 filter of ones: each input pixel fills a 2x2 block of the 4x4 output. */
static void test_transpose_conv_float(void)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 2, 2, 1)), w = f32c(&b, D(1, 2, 2, 1), (const float[]){1, 1, 1, 1});
    uint32_t bias = f32c(&b, D(1), (const float[]){0}), y = f32t(&b, D(1, 4, 4, 1)), z = i32(&b, 0), two = i32(&b, 2);
    op(&b, ANEURALNETWORKS_TRANSPOSE_CONV_2D, IDX(in, w, bias, z, z, z, z, two, two, z, flag(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[16];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3, 4}, 16, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 16, 0));
    ANeuralNetworksModel_free(b.m);
}

/* FULLY_CONNECTED: x [2,3], w [2,3] = {1,0,-1; .5,.5,.5}, b {1,0}: row 0 {1-3+1, 3} = {-1, 3}, row 1 {4-6+1, 7.5}. */
static void test_fully_connected_float(void)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(2, 3)), w = f32c(&b, D(2, 3), (const float[]){1, 0, -1, 0.5f, 0.5f, 0.5f});
    uint32_t bias = f32c(&b, D(2), (const float[]){1, 0}), y = f32t(&b, D(2, 2));
    op(&b, ANEURALNETWORKS_FULLY_CONNECTED, IDX(in, w, bias, i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[4];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3, 4, 5, 6}, 24, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){-1, 3, -1, 7.5f}, 4, 0));
    ANeuralNetworksModel_free(b.m);
}

/* Pools over x [1,2,3,1] = {1,2,3; 4,5,6}. */
static void pool_case(int32_t code, int implicit, const float *want, uint32_t ow, uint32_t oh, double tol)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 2, 3, 1)), y = f32t(&b, D(1, oh, ow, 1)), z = i32(&b, 0), one = i32(&b, 1),
             two = i32(&b, 2);
    if (implicit)
        op(&b, code, IDX(in, i32(&b, ANEURALNETWORKS_PADDING_SAME), one, one, two, two, z), y);
    else
        op(&b, code, IDX(in, z, z, z, z, one, one, two, two, z), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[6];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3, 4, 5, 6}, 24, got, ow * oh * 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, want, ow * oh, tol));
    ANeuralNetworksModel_free(b.m);
}

static void test_pools_float(void)
{
    /* 2x2 windows, VALID: {1,2,4,5} and {2,3,5,6} */
    pool_case(ANEURALNETWORKS_AVERAGE_POOL_2D, 0, (const float[]){3, 4}, 2, 1, 0);
    pool_case(ANEURALNETWORKS_MAX_POOL_2D, 0, (const float[]){5, 6}, 2, 1, 0);
    pool_case(ANEURALNETWORKS_L2_POOL_2D, 0, (const float[]){(float)sqrt(46 / 4.0), (float)sqrt(74 / 4.0)}, 2, 1, 1e-6);
    /* SAME, stride 1: padding after (0 before, 1 after) in both dims; padded elements are not counted:
     * (1+2+4+5)/4, (2+3+5+6)/4, (3+6)/2, (4+5)/2, (5+6)/2, 6 */
    pool_case(ANEURALNETWORKS_AVERAGE_POOL_2D, 1, (const float[]){3, 4, 4.5f, 4.5f, 5.5f, 6}, 3, 2, 0);
}

static void unary_case(int32_t code, const float *x, size_t n, const double *want, double tol)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D((uint32_t)n)), y = f32t(&b, D((uint32_t)n));
    op(&b, code, IDX(in), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[8], w[8];
    for (size_t i = 0; i < n; i++) w[i] = (float)want[i];
    CU_ASSERT_EQUAL(run1(b.m, x, n * 4, got, n * 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, w, n, tol));
    ANeuralNetworksModel_free(b.m);
}

static void test_activations_float(void)
{
    const float x[5] = {-4, -0.5f, 0.5f, 2, 7};
    double lg[5], th[5], hs[5];
    for (int i = 0; i < 5; i++) { /* the textbook formulas, in double */
        lg[i] = 1 / (1 + exp(-(double)x[i]));
        th[i] = tanh(x[i]);
        hs[i] = x[i] * fmin(fmax(x[i] + 3.0, 0), 6) / 6;
    }
    unary_case(ANEURALNETWORKS_RELU, x, 5, (const double[]){0, 0, 0.5, 2, 7}, 0);
    unary_case(ANEURALNETWORKS_RELU1, x, 5, (const double[]){-1, -0.5, 0.5, 1, 1}, 0);
    unary_case(ANEURALNETWORKS_RELU6, x, 5, (const double[]){0, 0, 0.5, 2, 6}, 0);
    unary_case(ANEURALNETWORKS_LOGISTIC, x, 5, lg, 1e-6);
    unary_case(ANEURALNETWORKS_TANH, x, 5, th, 1e-6);
    unary_case(ANEURALNETWORKS_HARD_SWISH, x, 5, hs, 1e-6);
    /* hand values of hard swish: -4 -> 0, -0.5 -> -0.5 * 2.5 / 6, 2 -> 2 * 5 / 6, 7 -> 7 */
    CU_ASSERT_DOUBLE_EQUAL(hs[1], -0.2083333, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(hs[3], 1.6666667, 1e-6);
}

/* PRELU x [2,2] {-1,2,-3,4} with alpha [2] {0.5, 0.25}: {-0.5, 2, -1.5, 4}. */
static void test_prelu_float(void)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(2, 2)), al = f32c(&b, D(2), (const float[]){0.5f, 0.25f}), y = f32t(&b, D(2, 2));
    op(&b, ANEURALNETWORKS_PRELU, IDX(in, al), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[4];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){-1, 2, -3, 4}, 16, got, 16), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){-0.5f, 2, -1.5f, 4}, 4, 0));
    ANeuralNetworksModel_free(b.m);
}

static void test_softmax_float(void)
{
    /* beta 1 over the last axis of [1,3] {1,2,3} */
    double e1 = exp(-2.0), e2 = exp(-1.0), s = e1 + e2 + 1;
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 3)), y = f32t(&b, D(1, 3));
    op(&b, ANEURALNETWORKS_SOFTMAX, IDX(in, f32s(&b, 1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[4];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3}, 12, got, 12), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){(float)(e1 / s), (float)(e2 / s), (float)(1 / s)}, 3, 1e-7));
    ANeuralNetworksModel_free(b.m);

    /* beta 2, axis 0 of [2,2] {0,0,1,1}: each column {0,1}: {1, e^2} / (1 + e^2) */
    b = mb_new();
    in = f32t(&b, D(2, 2)), y = f32t(&b, D(2, 2));
    op(&b, ANEURALNETWORKS_SOFTMAX, IDX(in, f32s(&b, 2), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    double lo = 1 / (1 + exp(2.0)), hi = exp(2.0) / (1 + exp(2.0));
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){0, 0, 1, 1}, 16, got, 16), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){(float)lo, (float)lo, (float)hi, (float)hi}, 4, 1e-7));
    ANeuralNetworksModel_free(b.m);

    /* LOG_SOFTMAX beta 1, axis -1 of {1,2,3}: x - 3 - log(e^-2 + e^-1 + 1) */
    b = mb_new();
    in = f32t(&b, D(1, 3)), y = f32t(&b, D(1, 3));
    op(&b, ANEURALNETWORKS_LOG_SOFTMAX, IDX(in, f32s(&b, 1), i32(&b, -1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3}, 12, got, 12), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(
        close_all(got, (const float[]){(float)(-2 - log(s)), (float)(-1 - log(s)), (float)(-log(s))}, 3, 1e-6));
    ANeuralNetworksModel_free(b.m);
}

/* One data-movement operation on x [2,3] = 1..6 with constant operands built by the caller. */
static void shape_case(int32_t code, uint32_t n_extra, const uint32_t *extra_kind, const void *const *extra,
                       const float *want, const uint32_t *ydims, uint32_t yrank)
{
    mb b = mb_new();
    uint32_t ins[4], n = 0;
    ins[n++] = f32t(&b, D(2, 3));
    for (uint32_t i = 0; i < n_extra; i++) {
        const int32_t *v = extra[i];
        if (extra_kind[i] == 0)
            ins[n++] = i32(&b, v[0]);
        else
            ins[n++] = i32c(&b, extra_kind[i] == 1 ? (const uint32_t[]){v[0]} : (const uint32_t[]){v[0], 2},
                            extra_kind[i], v + 1);
    }
    uint32_t y = f32t(&b, ydims, yrank);
    op(&b, code, n, ins, y);
    finish(&b, IDX(ins[0]), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    size_t ny = 1;
    for (uint32_t i = 0; i < yrank; i++) ny *= ydims[i];
    float got[16];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3, 4, 5, 6}, 24, got, ny * 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, want, ny, 0));
    ANeuralNetworksModel_free(b.m);
}

static void test_shape_ops_float(void)
{
    /* extra operands: kind 1 = 1-D TENSOR_INT32 {count, values...}, kind 2 = [count, 2] TENSOR_INT32 */
    shape_case(ANEURALNETWORKS_RESHAPE, 1, (const uint32_t[]){1}, (const void *const[]){(const int32_t[]){2, 3, -1}},
               (const float[]){1, 2, 3, 4, 5, 6}, D(3, 2));
    shape_case(ANEURALNETWORKS_TRANSPOSE, 1, (const uint32_t[]){1}, (const void *const[]){(const int32_t[]){2, 1, 0}},
               (const float[]){1, 4, 2, 5, 3, 6}, D(3, 2));
    /* PAD paddings {{0,1},{1,0}}: [3,4] with a zero row below and a zero column on the left */
    shape_case(ANEURALNETWORKS_PAD, 1, (const uint32_t[]){2}, (const void *const[]){(const int32_t[]){2, 0, 1, 1, 0}},
               (const float[]){0, 1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0}, D(3, 4));
    /* SLICE begin {0,1} size {2,-1}: columns 1..2 */
    shape_case(ANEURALNETWORKS_SLICE, 2, (const uint32_t[]){1, 1},
               (const void *const[]){(const int32_t[]){2, 0, 1}, (const int32_t[]){2, 2, -1}},
               (const float[]){2, 3, 5, 6}, D(2, 2));
    /* MEAN over axis 1, keep_dims 0: {2, 5} */
    shape_case(ANEURALNETWORKS_MEAN, 2, (const uint32_t[]){1, 0},
               (const void *const[]){(const int32_t[]){1, 1}, (const int32_t[]){0}}, (const float[]){2, 5}, D(2));

    /* CONCATENATION on axis 1 of [2,1] {1,2} and [2,2] {3,4,5,6}: {1,3,4, 2,5,6} */
    mb b = mb_new();
    uint32_t a = f32t(&b, D(2, 1)), c = f32c(&b, D(2, 2), (const float[]){3, 4, 5, 6}), y = f32t(&b, D(2, 3));
    op(&b, ANEURALNETWORKS_CONCATENATION, IDX(a, c, i32(&b, 1)), y);
    finish(&b, IDX(a), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[6];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2}, 8, got, 24), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){1, 3, 4, 2, 5, 6}, 6, 0));
    ANeuralNetworksModel_free(b.m);
}

static void resize_case(int32_t code, uint32_t oh, uint32_t ow, int extra, int align, const float *want)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 2, 2, 1)), y = f32t(&b, D(1, oh, ow, 1));
    uint32_t ins[6] = {in, i32(&b, (int32_t)ow), i32(&b, (int32_t)oh)}, n = 3;
    if (extra) {
        ins[n++] = flag(&b, 0);
        if (extra > 1) ins[n++] = flag(&b, align), ins[n++] = flag(&b, 0);
    }
    op(&b, code, n, ins, y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[16];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2, 3, 4}, 16, got, oh * ow * 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, want, oh * ow, 1e-6));
    ANeuralNetworksModel_free(b.m);
}

static void test_resize_float(void)
{
    /* nearest 2x2 -> 4x4, scale 0.5: source index floor(o * 0.5) */
    resize_case(ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR, 4, 4, 1, 0,
                (const float[]){1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
    /* bilinear 2x2 -> 4x4 (level 27 form): source o * 0.5, the upper neighbour clamped: rows at 0, .5, 1, 1.5 */
    resize_case(ANEURALNETWORKS_RESIZE_BILINEAR, 4, 4, 0, 0,
                (const float[]){1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4});
    /* bilinear 2x2 -> 3x3 with align_corners (level 30): scale (2-1)/(3-1) = 0.5, corners kept */
    resize_case(ANEURALNETWORKS_RESIZE_BILINEAR, 3, 3, 2, 1, (const float[]){1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

/* NCHW (level 29) for pools and resizes, with two channels so that the layouts differ: x [1,2,2,2] channel 0
 * {1,2,3,4}, channel 1 {10,20,30,40}. 2x2 max pool, VALID: {4, 40}. Bilinear 2x2 -> 3x3 (scale 2/3): positions 0,
 * 2/3, 4/3 with the upper neighbour clamped; channel 0 rows {1, 5/3, 2}, {7/3, 3, 10/3}, {3, 11/3, 4}; channel 1 ten
 * times that. */
static void test_nchw_pool_resize(void)
{
    const float x[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 2, 2, 2)), y = f32t(&b, D(1, 2, 1, 1)), z = i32(&b, 0), one = i32(&b, 1),
             two = i32(&b, 2);
    op(&b, ANEURALNETWORKS_MAX_POOL_2D, IDX(in, z, z, z, z, one, one, two, two, z, flag(&b, 1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[18];
    CU_ASSERT_EQUAL(run1(b.m, x, sizeof x, got, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){4, 40}, 2, 0));
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    in = f32t(&b, D(1, 2, 2, 2)), y = f32t(&b, D(1, 2, 3, 3));
    op(&b, ANEURALNETWORKS_RESIZE_BILINEAR, IDX(in, i32(&b, 3), i32(&b, 3), flag(&b, 1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float want[18] = {1, 5.0f / 3, 2, 7.0f / 3, 3, 10.0f / 3, 3, 11.0f / 3, 4};
    for (int i = 0; i < 9; i++) want[9 + i] = 10 * want[i];
    CU_ASSERT_EQUAL(run1(b.m, x, sizeof x, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, want, 18, 1e-5));
    ANeuralNetworksModel_free(b.m);
}

/* Quantized RESIZE_BILINEAR (level 29) truncates the float interpolation, as Android 11's TFLite reference
 * (static_cast<uint8_t>): stored {0, 1} widened from 2 to 4 columns interpolates 0, 0.5, 1, 1 -> {0, 0, 1, 1}
 * (rounding would give 1 for the 0.5). */
static void test_resize_bilinear_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 2, 1), 1, 0);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 4, 1), 1, 0);
    op(&b, ANEURALNETWORKS_RESIZE_BILINEAR, IDX(in, i32(&b, 4), i32(&b, 1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[4] = {9, 9, 9, 9};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){0, 1}, 2, got, 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 0 && got[1] == 0 && got[2] == 1 && got[3] == 1);
    ANeuralNetworksModel_free(b.m);
}

/* QUANTIZE f32 -> quant8 asymm scale 0.5 zp 10: 10 + round(x / 0.5) half away from zero, clamped:
 * -10 -> -10 -> 0; 0.25 -> 0.5 -> 1 -> 11; 0.75 -> 1.5 -> 2 -> 12; 1 -> 12; 200 -> 410 -> 255.
 * DEQUANTIZE of {0, 10, 255} at the same parameters: {-5, 0, 122.5}. */
static void test_quantize_dequantize(void)
{
    mb b = mb_new();
    uint32_t in = f32t(&b, D(5)), y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(5), 0.5f, 10);
    op(&b, ANEURALNETWORKS_QUANTIZE, IDX(in), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t q[5];
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){-10, 0.25f, 0.75f, 1, 200}, 20, q, 5), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(q[0] == 0 && q[1] == 11 && q[2] == 12 && q[3] == 12 && q[4] == 255);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.5f, 10);
    y = f32t(&b, D(3));
    op(&b, ANEURALNETWORKS_DEQUANTIZE, IDX(in), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[3];
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){0, 10, 255}, 3, got, 12), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){-5, 0, 122.5f}, 3, 0));
    ANeuralNetworksModel_free(b.m);
}

/* MAXIMUM / MINIMUM of a [2,3] tensor and a [3] constant {0, -1, 5}: std::max / std::min elementwise, broadcast over
 * rows; Android's std::max(a, b) is (a < b) ? b : a, so a NaN first operand comes through and a NaN second one
 * (the constant's) is lost. RSQRT of {4, 0.25, 16} is {0.5, 2, 0.25} exactly. */
static void test_minmax_rsqrt(void)
{
    const float a[6] = {1, -2, 7, NAN, 3, -9}, c[3] = {0, -1, 5};
    const int32_t codes[2] = {ANEURALNETWORKS_MAXIMUM, ANEURALNETWORKS_MINIMUM};
    const float want[2][6] = {{1, -1, 7, NAN, 3, 5}, {0, -2, 5, NAN, -1, -9}};
    for (int k = 0; k < 2; k++) {
        mb b = mb_new();
        uint32_t x = f32t(&b, D(2, 3)), cc = f32c(&b, D(3), c), y = f32t(&b, D(2, 3));
        op(&b, codes[k], IDX(x, cc), y);
        finish(&b, IDX(x), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        float got[6] = {0};
        CU_ASSERT_EQUAL(run1(b.m, a, sizeof a, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
        for (int i = 0; i < 6; i++)
            CU_ASSERT(isnan(want[k][i]) ? isnan(got[i]) : got[i] == want[k][i]);
        ANeuralNetworksModel_free(b.m);
    }
    /* the constant NaN as the second operand: lost */
    mb b = mb_new();
    uint32_t x = f32t(&b, D(2)), cc = f32c(&b, D(1), (const float[]){NAN}), y = f32t(&b, D(2));
    op(&b, ANEURALNETWORKS_MAXIMUM, IDX(x, cc), y);
    finish(&b, IDX(x), IDX(y));
    float got[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){-3, 4}, 8, got, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT(got[0] == -3 && got[1] == 4);
    ANeuralNetworksModel_free(b.m);
    unary_case(ANEURALNETWORKS_RSQRT, (const float[]){4, 0.25f, 16}, 3, (const double[]){0.5, 2, 0.25}, 0);
}

/* GATHER of a [3,2] table {10,11, 20,21, 30,31}: on axis 0 by indices [2,2] {2,0,0,1} -> [2,2,2]
 * {30,31, 10,11, 10,11, 20,21}; on axis 1 (-1) by {1,0,1} -> [3,3] {11,10,11, 21,20,21, 31,30,31}; an index of 3 on
 * axis 0 fails the execution (OP_FAILED), as Android's gather checks its indices. */
static void test_gather(void)
{
    const float t[6] = {10, 11, 20, 21, 30, 31};
    struct {
        int32_t axis;
        uint32_t ir, id[2], yr, yd[3];
        int32_t ix[4];
        float want[9];
        size_t n;
        int32_t rc;
    } cases[] = {
        {0, 2, {2, 2}, 3, {2, 2, 2}, {2, 0, 0, 1}, {30, 31, 10, 11, 10, 11, 20, 21}, 8, ANEURALNETWORKS_NO_ERROR},
        {-1, 1, {3}, 2, {3, 3}, {1, 0, 1}, {11, 10, 11, 21, 20, 21, 31, 30, 31}, 9, ANEURALNETWORKS_NO_ERROR},
        {0, 1, {1}, 2, {1, 2}, {3}, {0}, 2, ANEURALNETWORKS_OP_FAILED},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mb b = mb_new();
        uint32_t x = f32t(&b, D(3, 2)), ix = i32c(&b, cases[k].id, cases[k].ir, cases[k].ix),
                 y = f32t(&b, cases[k].yd, cases[k].yr);
        op(&b, ANEURALNETWORKS_GATHER, IDX(x, i32(&b, cases[k].axis), ix), y);
        finish(&b, IDX(x), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        float got[9] = {0};
        CU_ASSERT_EQUAL(run1(b.m, t, sizeof t, got, cases[k].n * 4), cases[k].rc);
        if (cases[k].rc == ANEURALNETWORKS_NO_ERROR) CU_ASSERT_TRUE(close_all(got, cases[k].want, cases[k].n, 0));
        ANeuralNetworksModel_free(b.m);
    }
}

static const CU_TestInfo tests[] = {
    {"minmax_rsqrt", test_minmax_rsqrt},
    {"gather", test_gather},
    {"binary_float", test_binary_float},
    {"conv_float", test_conv_float},
    {"depthwise_float", test_depthwise_float},
    {"transpose_conv_float", test_transpose_conv_float},
    {"fully_connected_float", test_fully_connected_float},
    {"pools_float", test_pools_float},
    {"activations_float", test_activations_float},
    {"prelu_float", test_prelu_float},
    {"softmax_float", test_softmax_float},
    {"shape_ops_float", test_shape_ops_float},
    {"resize_float", test_resize_float},
    {"nchw_pool_resize", test_nchw_pool_resize},
    {"resize_bilinear_quant", test_resize_bilinear_quant},
    {"quantize_dequantize", test_quantize_dequantize},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi_sim_ops", tests)
