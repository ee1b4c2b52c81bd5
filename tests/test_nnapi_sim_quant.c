/*
 * test_nnapi_sim_quant.c - the quantized operations of the simulated libneuralnetworks.so, each on small cases whose
 * expected values are worked out by hand in the comments (or by an independent model of the integer arithmetic,
 * named where used): gemmlowp requantization (ties, per-channel filters, Android's multiplier precisions), the
 * fixed-point LOGISTIC, TANH and SOFTMAX swept against the exact functions, and float16. The float operations are
 * test_nnapi_sim_ops.c's.
 */
#include "nnapi_sim_helpers.h"

/* ---- quantized operations ---- */

/* A 1x1 CONV_2D over x [1,1,4,1] (scale 1, zero point 128: stored {133,123,134,122} = 5, -5, 6, -6) with a
 * per-channel filter of two output channels, both weights 1, scales {0.5, 0.25}; bias TENSOR_INT32 scale 0 (per
 * channel: input_scale * filter_scale[c]) {0, 0}; output scale 1, zero point 100.
 * gemmlowp by hand (QuantizeMultiplier: 0.5 = 2^30 * 2^-31, exponent 0; 0.25: 2^30, right shift 1):
 *   SRDHM(a, 2^30) = (a 2^30 + nudge) / 2^31 truncated, nudge 2^30 (>= 0) or 1 - 2^30: half up.
 *   channel 0: 5 -> 3 (2.5 up), -5 -> -2 (-2.5 up), 6 -> 3, -6 -> -3.
 *   channel 1: SRDHM then RoundingDivideByPOT(., 1) half away from zero: 5 -> 3 -> 2 (the exact 1.25 would give 1:
 *   the double rounding is gemmlowp's), -5 -> -2 -> -1, 6 -> 3 -> 2 (1.5 away), -6 -> -3 -> -2 (-1.5 away).
 * NHWC output [1,1,4,2]: {103,102, 98,99, 103,102, 97,98}. */
static void test_conv_quant_per_channel(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 4, 1), 1.0f, 128);
    uint32_t w = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, D(2, 1, 1, 1), 0, 0);
    ANeuralNetworksSymmPerChannelQuantParams pc = {0, 2, (const float[]){0.5f, 0.25f}};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(b.m, (int32_t)w, &pc),
                    ANEURALNETWORKS_NO_ERROR);
    const int8_t wv[2] = {1, 1};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)w, wv, 2), ANEURALNETWORKS_NO_ERROR);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(2), 0, 0, (const int32_t[]){0, 0}, 8);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 4, 2), 1.0f, 100), z = i32(&b, 0),
             one = i32(&b, 1);
    op(&b, ANEURALNETWORKS_CONV_2D, IDX(in, w, bias, z, z, z, z, one, one, z), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[8];
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){133, 123, 134, 122}, 4, got, 8), ANEURALNETWORKS_NO_ERROR);
    static const uint8_t want[8] = {103, 102, 98, 99, 103, 102, 97, 98};
    CU_ASSERT_EQUAL(memcmp(got, want, 8), 0);
    for (int i = 0; i < 8; i++)
        if (got[i] != want[i]) printf("  element %d: got %u, expected %u\n", i, got[i], want[i]);
    ANeuralNetworksModel_free(b.m);
}

static void test_conv_quant_bias(void)
{
    ANeuralNetworksModel *m = quant_conv_model(0.7f);
    uint8_t got[2] = {0};
    CU_ASSERT_EQUAL(run1(m, (const uint8_t[]){130, 125}, 2, got, 2), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got[0], 103);
    CU_ASSERT_EQUAL(got[1], 90);
    ANeuralNetworksModel_free(m);

    /* A bias whose scale is not input_scale * filter_scale is refused when the operation is added. */
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 0.5f, 128);
    uint32_t w = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2, 1, 1, 2), 0.3f, 120,
                     (const uint8_t[]){123, 121, 110, 127}, 4);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(2), 0.2f, 0, (const int32_t[]){10, -7}, 8);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 0.7f, 100);
    uint32_t ins[7] = {in, w, bias, i32(&b, 2), i32(&b, 1), i32(&b, 1), i32(&b, 0)};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_CONV_2D, 7, ins, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(parity_nnapi_sim_last_error(), "bias scale"));
    ANeuralNetworksModel_free(b.m);
}

/* Quantized ADD (Android's addQuant8): a scale 0.5 {2,4,5} + b scale 0.25 {4,1,0}, zero points 0, output scale 1:
 * reals 1+1 = 2, 2+0.25 = 2.25 -> 2, 2.5+0 = 2.5. By hand for the last: twice_max = 1, a multiplier 0.5 (2^30, 0),
 * output 2^-20 (2^30, right shift 19): 5 << 20 = 5242880 -> SRDHM 2621440 -> SRDHM 1310720 -> divide by 2^19 =
 * 2.5, half away from zero -> 3. Quantized MUL: {2,4,5} * {4,1,0} at 0.5 * 0.25 / 1 = 0.125: 8 * 0.125 = 1,
 * 4 * 0.125 = 0.5 -> 1 (half away), 0. */
static void test_add_mul_quant(void)
{
    for (int k = 0; k < 2; k++) {
        mb b = mb_new();
        uint32_t a = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.5f, 0);
        uint32_t c = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.25f, 0, (const uint8_t[]){4, 1, 0}, 3);
        uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 1.0f, 0);
        op(&b, k ? ANEURALNETWORKS_MUL : ANEURALNETWORKS_ADD, IDX(a, c, i32(&b, 0)), y);
        finish(&b, IDX(a), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        uint8_t got[3] = {0};
        CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){2, 4, 5}, 3, got, 3), ANEURALNETWORKS_NO_ERROR);
        if (!k) CU_ASSERT_TRUE(got[0] == 2 && got[1] == 2 && got[2] == 3);
        if (k) CU_ASSERT_TRUE(got[0] == 1 && got[1] == 1 && got[2] == 0);
        ANeuralNetworksModel_free(b.m);
    }
    /* Level 27's MUL needs output_scale > scale_a * scale_b: 0.125 = 0.5 * 0.25 is refused by old-android. */
    for (int k = 0; k < 2; k++) {
        mb b = mb_new();
        uint32_t a = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.5f, 0);
        uint32_t c = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.25f, 0, (const uint8_t[]){4, 1, 0}, 3);
        uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), k ? 0.125f : 0.126f, 0);
        op(&b, ANEURALNETWORKS_MUL, IDX(a, c, i32(&b, 0)), y);
        finish(&b, IDX(a), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        const ANeuralNetworksDevice *old = dev("parity-old-android");
        bool sup = k;
        CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup),
                        ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(sup, !k);
        ANeuralNetworksModel_free(b.m);
    }
}

/* Quantized LOGISTIC: input scale 0.1 zp 128 {128, 138, 108} = 0, 1, -2; NNAPI prescribes output scale 1/256 and
 * zero point 0: 256 / (1 + e^-x) = 128, 187.15 -> 187, 30.52 -> 31. Another output scale is refused. */
static void test_logistic_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.1f, 128);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 1.0f / 256, 0);
    op(&b, ANEURALNETWORKS_LOGISTIC, IDX(in), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[3] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){128, 138, 108}, 3, got, 3), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 128 && got[1] == 187 && got[2] == 31);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.1f, 128);
    y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 1.0f / 128, 0);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_LOGISTIC, 1, &in, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksModel_free(b.m);
}

/* Quantized LOGISTIC and TANH follow Android's integer path (gemmlowp fixed point): over every stored input at
 * several input scales, uint8 and int8, the result is within one step of the exact function quantized by the test
 * (round half away from zero), and equal to it for nearly all inputs; saturation far out is exact (0 / 255, -128 /
 * 127). */
static void test_logistic_tanh_fixed_point(void)
{
    static const float scales[] = {0.01f, 0.05f, 0.1f, 0.5f};
    unsigned total = 0, exact = 0, far = 0;
    for (int signed8 = 0; signed8 < 2; signed8++)
        for (int tanh_op = 0; tanh_op < 2; tanh_op++)
            for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
                int32_t t = signed8 ? ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED : ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
                int32_t in_zp = signed8 ? 3 : 131, out_zp = tanh_op ? (signed8 ? 0 : 128) : (signed8 ? -128 : 0);
                float out_scale = tanh_op ? 1.0f / 128 : 1.0f / 256;
                mb b = mb_new();
                uint32_t in = opnd(&b, t, D(256), scales[si], in_zp), y = opnd(&b, t, D(256), out_scale, out_zp);
                op(&b, tanh_op ? ANEURALNETWORKS_TANH : ANEURALNETWORKS_LOGISTIC, IDX(in), y);
                finish(&b, IDX(in), IDX(y));
                CU_ASSERT_FALSE(b.bad);
                uint8_t x[256], got[256];
                for (int i = 0; i < 256; i++) x[i] = (uint8_t)i;
                CU_ASSERT_EQUAL(run1(b.m, x, 256, got, 256), ANEURALNETWORKS_NO_ERROR);
                for (int i = 0; i < 256; i++) {
                    int32_t q = signed8 ? (int8_t)x[i] : x[i], o = signed8 ? (int8_t)got[i] : got[i];
                    double r = scales[si] * (double)(q - in_zp);
                    double f = tanh_op ? tanh(r) : 1 / (1 + exp(-r));
                    double w = out_zp + round(f / out_scale);
                    w = fmin(fmax(w, signed8 ? -128 : 0), signed8 ? 127 : 255);
                    total++;
                    exact += o == (int32_t)w;
                    far += fabs(o - w) > 1;
                }
                ANeuralNetworksModel_free(b.m);
            }
    CU_ASSERT_EQUAL(far, 0);
    CU_ASSERT_TRUE(exact >= total * 95 / 100);
    PAR_TEST_NOTE("logistic/tanh fixed point: %u of %u equal to the rounded exact value\n", exact, total);
}

/* Quantized SOFTMAX through Android's integer path: [1,3] at scale 0.1 zp 128, stored {138, 128, 118} = (1, 0, -1),
 * beta 1: e / (e + 1 + 1/e) = 0.66524 -> 170.3 -> 170, 0.24473 -> 62.65 -> 63, 0.09003 -> 23.05 -> 23 (output
 * scale 1/256). And over 64 rows of random stored values, uint8 and int8, within one step of the exact softmax
 * quantized by the test. */
static void test_softmax_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 3), 0.1f, 128);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 3), 1.0f / 256, 0);
    op(&b, ANEURALNETWORKS_SOFTMAX, IDX(in, f32s(&b, 1)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[3] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){138, 128, 118}, 3, got, 3), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 170 && got[1] == 63 && got[2] == 23);
    ANeuralNetworksModel_free(b.m);

    unsigned far = 0, exact = 0, total = 0;
    for (int signed8 = 0; signed8 < 2; signed8++) {
        int32_t t = signed8 ? ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED : ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
        int32_t zp = signed8 ? -5 : 120, out_zp = signed8 ? -128 : 0;
        const float scale = 0.07f, beta = 1.5f;
        b = mb_new();
        in = opnd(&b, t, D(64, 8), scale, zp);
        y = opnd(&b, t, D(64, 8), 1.0f / 256, out_zp);
        op(&b, ANEURALNETWORKS_SOFTMAX, IDX(in, f32s(&b, beta)), y);
        finish(&b, IDX(in), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        uint8_t x[512], o[512];
        for (int i = 0; i < 512; i++) x[i] = (uint8_t)rnd(256);
        CU_ASSERT_EQUAL(run1(b.m, x, 512, o, 512), ANEURALNETWORKS_NO_ERROR);
        for (int r = 0; r < 64; r++) {
            double mx = -1e30, sum = 0, v[8];
            for (int k = 0; k < 8; k++) {
                int32_t q = signed8 ? (int8_t)x[r * 8 + k] : x[r * 8 + k];
                v[k] = scale * (double)(q - zp);
                mx = fmax(mx, v[k]);
            }
            for (int k = 0; k < 8; k++) sum += exp(beta * (v[k] - mx));
            for (int k = 0; k < 8; k++) {
                double w = out_zp + round(exp(beta * (v[k] - mx)) / sum * 256);
                w = fmin(fmax(w, signed8 ? -128 : 0), signed8 ? 127 : 255);
                int32_t g = signed8 ? (int8_t)o[r * 8 + k] : o[r * 8 + k];
                total++;
                exact += g == (int32_t)w;
                far += fabs(g - w) > 1;
            }
        }
        ANeuralNetworksModel_free(b.m);
    }
    CU_ASSERT_EQUAL(far, 0);
    CU_ASSERT_TRUE(exact >= total * 9 / 10);
    PAR_TEST_NOTE("softmax fixed point: %u of %u equal to the rounded exact value\n", exact, total);
}

/* Quantized HARD_SWISH (level 30) through TFLite's int16 fixed point, as Android: over every stored input, uint8 and
 * int8, within one step of x * relu6(x + 3) / 6 quantized by the test; an output scale below input_scale / 128 (a
 * left-shifting output multiplier, which Android refuses) fails the run with OP_FAILED. */
static void test_hard_swish_quant(void)
{
    unsigned total = 0, exact = 0, far = 0;
    for (int signed8 = 0; signed8 < 2; signed8++) {
        int32_t t = signed8 ? ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED : ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
        int32_t zp = signed8 ? 0 : 128, out_zp = signed8 ? -108 : 20;
        const float scale = 0.05f, out_scale = 0.03f;
        mb b = mb_new();
        uint32_t in = opnd(&b, t, D(256), scale, zp), y = opnd(&b, t, D(256), out_scale, out_zp);
        op(&b, ANEURALNETWORKS_HARD_SWISH, IDX(in), y);
        finish(&b, IDX(in), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        uint8_t x[256], got[256];
        for (int i = 0; i < 256; i++) x[i] = (uint8_t)i;
        CU_ASSERT_EQUAL(run1(b.m, x, 256, got, 256), ANEURALNETWORKS_NO_ERROR);
        for (int i = 0; i < 256; i++) {
            int32_t q = signed8 ? (int8_t)x[i] : x[i], o = signed8 ? (int8_t)got[i] : got[i];
            double r = scale * (double)(q - zp), f = r * fmin(fmax(r + 3, 0), 6) / 6;
            double w = fmin(fmax(out_zp + round(f / out_scale), signed8 ? -128 : 0), signed8 ? 127 : 255);
            total++;
            exact += o == (int32_t)w;
            far += fabs(o - w) > 1;
        }
        ANeuralNetworksModel_free(b.m);
    }
    CU_ASSERT_EQUAL(far, 0);
    CU_ASSERT_TRUE(exact >= total * 9 / 10);
    PAR_TEST_NOTE("hard swish fixed point: %u of %u equal to the rounded exact value\n", exact, total);

    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 1.0f, 128);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 1.0f / 256, 0);
    op(&b, ANEURALNETWORKS_HARD_SWISH, IDX(in), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[2];
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){128, 129}, 2, got, 2), ANEURALNETWORKS_OP_FAILED);
    ANeuralNetworksModel_free(b.m);
}

/* Quantized signed (level 30) average pool, 1x2 window, VALID, stored {-3, 2, 2}: sums -1 and 4 over 2 elements,
 * rounded half away from zero in integers: (-1 - 1) / 2 = -1, (4 + 1) / 2 = 2. */
static void test_avgpool_quant_signed(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, D(1, 1, 3, 1), 0.5f, -1);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, D(1, 1, 2, 1), 0.5f, -1);
    uint32_t z = i32(&b, 0), one = i32(&b, 1), two = i32(&b, 2);
    op(&b, ANEURALNETWORKS_AVERAGE_POOL_2D, IDX(in, z, z, z, z, one, one, two, one, z), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    int8_t got[2] = {9, 9};
    CU_ASSERT_EQUAL(run1(b.m, (const int8_t[]){-3, 2, 2}, 3, got, 2), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == -1 && got[1] == 2);
    /* the level-30 signed type runs nowhere older */
    const ANeuralNetworksDevice *old = dev("parity-old-android");
    bool sup = true;
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_FALSE(sup);
    ANeuralNetworksModel_free(b.m);
}

/* Quantized DEPTHWISE_CONV_2D, multiplier 2: x [1,2,1,1] scale 1 zp 0 {3, 5}; filter [1,2,1,2] scale 0.5 zp 10,
 * [ky][kx][oc] = {12, 8; 11, 13} = (2, -2; 1, 3); bias scale 0.5 {1, 2}. acc0 = 6 + 5 + 1 = 12, acc1 = -6 + 15 + 2
 * = 11; output scale 1 zp 0, ratio 0.5: 12 -> 6, 11 -> SRDHM(11, 2^30) = 5.5 half up = 6. */
static void test_depthwise_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2, 1, 1), 1, 0);
    uint32_t w =
        cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2, 1, 2), 0.5f, 10, (const uint8_t[]){12, 8, 11, 13}, 4);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(2), 0.5f, 0, (const int32_t[]){1, 2}, 8);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 1, 0);
    op(&b, ANEURALNETWORKS_DEPTHWISE_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_VALID), i32(&b, 1), i32(&b, 1), i32(&b, 2), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){3, 5}, 2, got, 2), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 6 && got[1] == 6);
    ANeuralNetworksModel_free(b.m);
}

/* Quantized FULLY_CONNECTED: x scale 0.5 zp 2 {6, 0} = (4, -2); w scale 0.25 zp 4 {8, 0} = (4, -4); bias 0.125 {4}:
 * acc 16 + 8 + 4 = 28, output scale 0.5 (ratio 0.25): 7. Quantized SUB, scales 1, output zp 10: {5,2} - {3,4} =
 * {12, 8}. */
static void test_fc_sub_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2), 0.5f, 2);
    uint32_t w = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2), 0.25f, 4, (const uint8_t[]){8, 0}, 2);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(1), 0.125f, 0, (const int32_t[]){4}, 4);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1), 0.5f, 0);
    op(&b, ANEURALNETWORKS_FULLY_CONNECTED, IDX(in, w, bias, i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[2] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){6, 0}, 2, got, 1), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got[0], 7);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 1, 0);
    uint32_t c = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 1, 0, (const uint8_t[]){3, 4}, 2);
    y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 1, 10);
    op(&b, ANEURALNETWORKS_SUB, IDX(in, c, i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){5, 2}, 2, got, 2), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 12 && got[1] == 8);
    ANeuralNetworksModel_free(b.m);
}

/* CONCATENATION of quant8 inputs with their own scales (level 29; level 27 needs the output's for all): a scale 0.5
 * {4, 6} = (2, 3), b scale 1 zp 10 {12} = (2); output scale 0.25: {8, 12, 8}. With one quantization it runs on
 * old-android, with two it does not. */
static void test_concat_requant(void)
{
    for (int differ = 0; differ < 2; differ++) {
        mb b = mb_new();
        uint32_t a = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), differ ? 0.5f : 0.25f, 0);
        uint32_t c = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1), differ ? 1.0f : 0.25f, differ ? 10 : 0,
                         (const uint8_t[]){differ ? 12 : 8}, 1);
        uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.25f, 0);
        op(&b, ANEURALNETWORKS_CONCATENATION, IDX(a, c, i32(&b, 0)), y);
        finish(&b, IDX(a), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        const ANeuralNetworksDevice *old = dev("parity-old-android");
        bool sup = !differ;
        CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup),
                        ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(sup, !differ);
        uint8_t got[3] = {0};
        const uint8_t x[2] = {differ ? 4 : 8, differ ? 6 : 12};
        CU_ASSERT_EQUAL(run1(b.m, x, 2, got, 3), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_TRUE(got[0] == 8 && got[1] == 12 && got[2] == 8);
        ANeuralNetworksModel_free(b.m);
    }
}

/* TENSOR_FLOAT16 (level 29): {1, 0.5} + {0.25, 2048} = {1.25, 2048.5}; 2048.5 is not a float16 (spacing 2 there)
 * and rounds to 2048 (even). Bits: 1 0x3C00, 0.5 0x3800, 0.25 0x3400, 2048 0x6800, 1.25 0x3D00. parity-gpu-fp16
 * takes it without relaxation; the level-27 device does not. */
static void test_float16(void)
{
    mb b = mb_new();
    uint32_t a = opnd(&b, ANEURALNETWORKS_TENSOR_FLOAT16, D(2), 0, 0);
    uint32_t c = cst(&b, ANEURALNETWORKS_TENSOR_FLOAT16, D(2), 0, 0, (const uint16_t[]){0x3400, 0x6800}, 4);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_FLOAT16, D(2), 0, 0);
    op(&b, ANEURALNETWORKS_ADD, IDX(a, c, i32(&b, 0)), y);
    finish(&b, IDX(a), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    const ANeuralNetworksDevice *gpu = dev("parity-gpu-fp16"), *old = dev("parity-old-android");
    uint16_t x[2] = {0x3C00, 0x3800}, got[2] = {0};
    io in = {x, 4}, out = {got, 4};
    CU_ASSERT_EQUAL(run_on(b.m, &gpu, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 0x3D00 && got[1] == 0x6800);
    CU_ASSERT_EQUAL(run_on(b.m, &old, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksModel_free(b.m);
}

/* Quantized MEAN (same quantization in and out) sums the stored integers and divides truncating, as Android's
 * meanGeneric<uint8_t, int32_t>: {1,2,2,2} -> 7 / 4 = 1 (1.75 would round to 2). Quantized PAD (level 29) fills with
 * the zero point: {7} padded by one on each side at zp 3 -> {3, 7, 3}. */
static void test_mean_pad_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 4), 1, 0);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1), 1, 0);
    op(&b, ANEURALNETWORKS_MEAN, IDX(in, i32c(&b, D(1), (const int32_t[]){1}), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[3] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){1, 2, 2, 2}, 4, got, 1), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got[0], 1);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1), 0.5f, 3);
    y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(3), 0.5f, 3);
    op(&b, ANEURALNETWORKS_PAD, IDX(in, i32c(&b, D(1, 2), (const int32_t[]){1, 1})), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){7}, 1, got, 3), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 3 && got[1] == 7 && got[2] == 3);
    const ANeuralNetworksDevice *old = dev("parity-old-android");
    bool sup = true;
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_FALSE(sup);
    ANeuralNetworksModel_free(b.m);
}

/* Quantized TRANSPOSE_CONV_2D: x [1,1,1,1] scale 0.5 {4}; filter [1,2,2,1] scale 0.25 {1,2,3,4}; bias 0.125 {1};
 * stride 1, no padding: out [1,2,2,1] acc = 4 * w + 1 = {5, 9, 13, 17}; output scale 0.25 zp 0, ratio 0.5:
 * 2.5 -> 3 (SRDHM half up), 4.5 -> 5, 6.5 -> 7, 8.5 -> 9. */
static void test_transpose_conv_quant(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 1), 0.5f, 0);
    uint32_t w =
        cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2, 2, 1), 0.25f, 0, (const uint8_t[]){1, 2, 3, 4}, 4);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(1), 0.125f, 0, (const int32_t[]){1}, 4);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2, 2, 1), 0.25f, 0), z = i32(&b, 0),
             one = i32(&b, 1);
    op(&b, ANEURALNETWORKS_TRANSPOSE_CONV_2D, IDX(in, w, bias, z, z, z, z, one, one, z, flag(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    uint8_t got[4] = {0};
    CU_ASSERT_EQUAL(run1(b.m, (const uint8_t[]){4}, 1, got, 4), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 3 && got[1] == 5 && got[2] == 7 && got[3] == 9);
    ANeuralNetworksModel_free(b.m);
}

/* The requantization multiplier in Android's precisions (GetQuantizedConvolutionMultipler): scales x 0.02497048,
 * w 0.01879747, out 0.16248474 (the floats below); acc = 1 * 1 + 40673 = 40674. The multipliers and results were
 * worked out with an independent model of QuantizeMultiplier and gemmlowp (frexp, round half away, SRDHM, rounding
 * divide) in Python over numpy float32:
 *   levels 28-30: float(x * w) / out in double  -> 118 (TFLite's all-double product would give 117)
 *   Android 8.1:  float(float(x * w) / out)      -> 117 */
static void test_conv_quant_multiplier_precision(void)
{
    const float sx = 0.02497047930955887f, sw = 0.01879747211933136f, so = 0.16248473525047302f;
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 1), sx, 0);
    uint32_t w = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 1), sw, 0, (const uint8_t[]){1}, 1);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(1), sx * sw, 0, (const int32_t[]){40673}, 4);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 1), so, 0);
    op(&b, ANEURALNETWORKS_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_VALID), i32(&b, 1), i32(&b, 1), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    const ANeuralNetworksDevice *ref = dev("parity-reference"), *old = dev("parity-old-android");
    uint8_t x = 1, got = 0;
    io i1 = {&x, 1}, o1 = {&got, 1};
    CU_ASSERT_EQUAL(run_on(b.m, &ref, 1, 1, &i1, 1, &o1, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got, 118);
    CU_ASSERT_EQUAL(run_on(b.m, &old, 1, 1, &i1, 1, &o1, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(got, 117);
    ANeuralNetworksModel_free(b.m);
}

static const CU_TestInfo tests[] = {
    {"conv_quant_per_channel", test_conv_quant_per_channel},
    {"conv_quant_bias", test_conv_quant_bias},
    {"conv_quant_multiplier_precision", test_conv_quant_multiplier_precision},
    {"add_mul_quant", test_add_mul_quant},
    {"logistic_quant", test_logistic_quant},
    {"logistic_tanh_fixed_point", test_logistic_tanh_fixed_point},
    {"softmax_quant", test_softmax_quant},
    {"hard_swish_quant", test_hard_swish_quant},
    {"avgpool_quant_signed", test_avgpool_quant_signed},
    {"depthwise_quant", test_depthwise_quant},
    {"fc_sub_quant", test_fc_sub_quant},
    {"concat_requant", test_concat_requant},
    {"float16", test_float16},
    {"mean_pad_quant", test_mean_pad_quant},
    {"transpose_conv_quant", test_transpose_conv_quant},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi_sim_quant", tests)
