/*
 * test_nnapi_sim_ops2.c - GROUPED_CONV_2D, STRIDED_SLICE and PAD_V2 of the simulated libneuralnetworks.so, on
 * small cases whose expected values are worked out by hand in the comments (one is the published NNAPI example
 * strided_slice_float_8), and their refusals: wrong group counts, a pad value of the wrong type, a shrunk
 * dimension wider than one, and the level gate (none runs on the level-27 device).
 */
#include "nnapi_sim_helpers.h"

/* GROUPED_CONV_2D, 2 groups, explicit padding 0, stride 1, NHWC: x [1,1,1,4] = {1,2,3,4}; filter [2,1,1,2]
 * (out, h, w, in / groups) = oc 0 {1,1}, oc 1 {1,-1}; bias {0, 10}. oc 0 reads channels 0, 1: 1 + 2 = 3;
 * oc 1 reads channels 2, 3: 3 - 4 + 10 = 9.
 * Then implicit SAME, NCHW, RELU, bias {0, -10}: oc 1 = 3 - 4 - 10 = -11 -> 0. */
static void test_grouped_conv_float(void)
{
    const float x[4] = {1, 2, 3, 4}, wv[4] = {1, 1, 1, -1};
    mb b = mb_new();
    uint32_t in = f32t(&b, D(1, 1, 1, 4)), w = f32c(&b, D(2, 1, 1, 2), wv);
    uint32_t bias = f32c(&b, D(2), (const float[]){0, 10});
    uint32_t y = f32t(&b, D(1, 1, 1, 2)), z = i32(&b, 0), one = i32(&b, 1), two = i32(&b, 2);
    op(&b, ANEURALNETWORKS_GROUPED_CONV_2D, IDX(in, w, bias, z, z, z, z, one, one, two, z, flag(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, x, sizeof x, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){3, 9}, 2, 0));
    /* Not on Android 8.1's device: GROUPED_CONV_2D came with level 29. */
    const ANeuralNetworksDevice *old = dev("parity-old-android");
    io i1 = {x, sizeof x}, o1 = {got, sizeof got};
    CU_ASSERT_EQUAL(run_on(b.m, &old, 1, 1, &i1, 1, &o1, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    in = f32t(&b, D(1, 4, 1, 1));
    w = f32c(&b, D(2, 1, 1, 2), wv);
    bias = f32c(&b, D(2), (const float[]){0, -10});
    y = f32t(&b, D(1, 2, 1, 1));
    one = i32(&b, 1);
    op(&b, ANEURALNETWORKS_GROUPED_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_SAME), one, one, i32(&b, 2),
           i32(&b, ANEURALNETWORKS_FUSED_RELU), flag(&b, 1)),
       y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    CU_ASSERT_EQUAL(run1(b.m, x, sizeof x, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){3, 0}, 2, 0));
    ANeuralNetworksModel_free(b.m);

    /* 3 groups do not divide 4 input channels with 2 per group (nor 2 output channels): refused. */
    b = mb_new();
    in = f32t(&b, D(1, 1, 1, 4));
    w = f32c(&b, D(2, 1, 1, 2), wv);
    bias = f32c(&b, D(2), (const float[]){0, 0});
    y = f32t(&b, D(1, 1, 1, 2));
    z = i32(&b, 0), one = i32(&b, 1);
    CU_ASSERT_FALSE(b.bad);
    uint32_t ins[12] = {in, w, bias, z, z, z, z, one, one, i32(&b, 3), z, flag(&b, 0)};
    int rc = ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_GROUPED_CONV_2D, 12, ins, 1, &y);
    CU_ASSERT_EQUAL(rc, ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("groups"));
    /* Without the layout flag (11 inputs, as CONV_2D's explicit form): refused, GROUPED_CONV_2D requires it. */
    ins[9] = i32(&b, 2);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_GROUPED_CONV_2D, 11, ins, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksModel_free(b.m);
}

/* GROUPED_CONV_2D quantized with a per-channel filter (channelDim 0): x [1,1,1,4] scale 1 zp 128, stored
 * {133,123,134,122} = 5, -5, 6, -6; 2 groups, filter oc 0 {1,0} scale 0.5, oc 1 {1,0} scale 0.25; bias 0; output
 * scale 1 zp 100. acc0 = 5 (channel 0), acc1 = 6 (channel 2).
 * gemmlowp: 0.5 = 2^30 * 2^-31, SRDHM(5, 2^30) = 2.5 rounded half up = 3 -> 103; 0.25: SRDHM(6, 2^30) = 3, then a
 * rounding divide by 2: 1.5 away from zero = 2 -> 102. */
static void test_grouped_conv_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 4), 1.0f, 128);
    uint32_t w = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, D(2, 1, 1, 2), 0, 0);
    ANeuralNetworksSymmPerChannelQuantParams pc = {0, 2, (const float[]){0.5f, 0.25f}};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(b.m, (int32_t)w, &pc),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)w, (const int8_t[]){1, 0, 1, 0}, 4),
                    ANEURALNETWORKS_NO_ERROR);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(2), 0, 0, (const int32_t[]){0, 0}, 8);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 1.0f, 100), z = i32(&b, 0),
             one = i32(&b, 1);
    op(&b, ANEURALNETWORKS_GROUPED_CONV_2D, IDX(in, w, bias, z, z, z, z, one, one, i32(&b, 2), z, flag(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){133, 123, 134, 122}, 4, got, 2), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got[0], 103);
    CU_ASSERT_EQUAL(got[1], 102);
    ANeuralNetworksModel_free(b.m);
}

/* STRIDED_SLICE on x [2,3] = {1..6}; returns the compute's code, the output in got. */
static int strided_case(const int32_t *begin, const int32_t *end, const int32_t *strides, int32_t bmask, int32_t emask,
                        int32_t smask, float *got, size_t got_bytes)
{
    mb b = mb_new();
    uint32_t x = f32t(&b, D(2, 3)), y = opnd(&b, ANEURALNETWORKS_TENSOR_FLOAT32, NULL, 0, 0, 0);
    op(&b, ANEURALNETWORKS_STRIDED_SLICE,
       IDX(x, i32c(&b, D(2), begin), i32c(&b, D(2), end), i32c(&b, D(2), strides), i32(&b, bmask), i32(&b, emask),
           i32(&b, smask)),
       y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    int rc = run1(b.m, (const float[]){1, 2, 3, 4, 5, 6}, 24, got, got_bytes);
    ANeuralNetworksModel_free(b.m);
    return rc;
}

static void test_strided_slice(void)
{
    float got[6] = {0};
    /* NNAPI's strided_slice_float_8: begins {1,-1}, ends {2,-4}, strides {2,-1}. Dimension 0: begin 1, end 2,
     * ceil(1 / 2) = 1 row (row 1). Dimension 1 (negative stride): begin -1 -> 2, end -4 < -3 -> -1,
     * ceil((-1 - 2) / -1) = 3: columns 2, 1, 0 of {4,5,6}: {6,5,4}. */
    CU_ASSERT_EQUAL(strided_case((const int32_t[]){1, -1}, (const int32_t[]){2, -4}, (const int32_t[]){2, -1}, 0, 0, 0,
                                 got, 12),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){6, 5, 4}, 3, 0));
    /* end_mask bit 1 (end 0 ignored: to the end), stride 2, shrink bit 0 (row 0, size 1): columns 0, 2 -> {1,3}. */
    CU_ASSERT_EQUAL(strided_case((const int32_t[]){0, 0}, (const int32_t[]){1, 0}, (const int32_t[]){1, 2}, 0, 2, 1,
                                 got, 8),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){1, 3}, 2, 0));
    /* begin_mask bit 1 with stride -1 starts at the last column; end -4 -> -1: all three reversed; row 1 shrunk
     * from begin 1, end 2: {6,5,4}. */
    CU_ASSERT_EQUAL(strided_case((const int32_t[]){1, 0}, (const int32_t[]){2, -4}, (const int32_t[]){1, -1}, 2, 0, 1,
                                 got, 12),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){6, 5, 4}, 3, 0));
    /* A shrunk dimension must slice exactly one index: rows 0..2 with shrink bit 0 fail the run. */
    CU_ASSERT_NOT_EQUAL(strided_case((const int32_t[]){0, 0}, (const int32_t[]){2, 3}, (const int32_t[]){1, 1}, 0, 0, 1,
                                     got, 24),
                        ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(said("shrunk"));

    /* Quantized: x [4] scale 0.5 zp 3, stored {10,11,12,13}; begin 3, end 0, stride -2: indices 3, 1 -> {13, 11},
     * the output keeping the input's scale and zero point. */
    mb b = mb_new();
    uint32_t x = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(4), 0.5f, 3);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 0.5f, 3);
    op(&b, ANEURALNETWORKS_STRIDED_SLICE,
       IDX(x, i32c(&b, D(1), (const int32_t[]){3}), i32c(&b, D(1), (const int32_t[]){0}),
           i32c(&b, D(1), (const int32_t[]){-2}), i32(&b, 0), i32(&b, 0), i32(&b, 0)),
       y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t q[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){10, 11, 12, 13}, 4, q, 2), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(q[0], 13);
    CU_ASSERT_EQUAL(q[1], 11);
    ANeuralNetworksModel_free(b.m);
}

/* PAD_V2: float [1,2] {1,2}, paddings {{0,0},{1,2}}, value -1.5 -> {-1.5, 1, 2, -1.5, -1.5}; quant8 [2] {7,9}
 * paddings {{1,1}}, value INT32 200 (a stored value) -> {200, 7, 9, 200}; float16 [1] {1.0 = 0x3c00} paddings
 * {{1,0}} value FLOAT16 0x2e66 (0.1) -> {0x2e66, 0x3c00}. A FLOAT32 pad value with a quantized input is refused. */
static void test_pad_v2(void)
{
    mb b = mb_new();
    uint32_t x = f32t(&b, D(1, 2)), y = f32t(&b, D(1, 5));
    op(&b, ANEURALNETWORKS_PAD_V2, IDX(x, i32c(&b, D(2, 2), (const int32_t[]){0, 0, 1, 2}), f32s(&b, -1.5f)), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    float got[5] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const float[]){1, 2}, 8, got, sizeof got), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(close_all(got, (const float[]){-1.5f, 1, 2, -1.5f, -1.5f}, 5, 0));
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    x = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 0.25f, 5);
    y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(4), 0.25f, 5);
    uint32_t pads = i32c(&b, D(1, 2), (const int32_t[]){1, 1});
    op(&b, ANEURALNETWORKS_PAD_V2, IDX(x, pads, i32(&b, 200)), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t q[4] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){7, 9}, 2, q, 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(memcmp(q, ((const uint8_t[]){200, 7, 9, 200}), 4), 0);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    x = opnd(&b, ANEURALNETWORKS_TENSOR_FLOAT16, D(1), 0, 0);
    y = opnd(&b, ANEURALNETWORKS_TENSOR_FLOAT16, D(2), 0, 0);
    uint32_t v = cst(&b, ANEURALNETWORKS_FLOAT16, NULL, 0, 0, 0, (const uint16_t[]){0x2e66}, 2);
    op(&b, ANEURALNETWORKS_PAD_V2, IDX(x, i32c(&b, D(1, 2), (const int32_t[]){1, 0}), v), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint16_t h[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint16_t[]){0x3c00}, 2, h, 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(h[0], 0x2e66);
    CU_ASSERT_EQUAL(h[1], 0x3c00);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    x = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 0.25f, 5);
    y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(4), 0.25f, 5);
    uint32_t ins[3] = {x, i32c(&b, D(1, 2), (const int32_t[]){1, 1}), f32s(&b, 1.0f)};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_PAD_V2, 3, ins, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("pad value"));
    ANeuralNetworksModel_free(b.m);
}

static const CU_TestInfo tests[] = {
    {"grouped_conv_float", test_grouped_conv_float},
    {"grouped_conv_quant", test_grouped_conv_quant},
    {"strided_slice", test_strided_slice},
    {"pad_v2", test_pad_v2},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi_sim_ops2", tests)
