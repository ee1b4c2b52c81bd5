/*
 * test_nnapi_sim.c - the simulated libneuralnetworks.so (nnsim/), linked directly, as an API: the
 * published values of every NNAPI constant the header declares, the device list, partitioning across the simulated
 * devices and the partition query, relaxed float16, the feature-level gates, seeded random models that must never
 * crash, and a client that only dlopens the library, run under valgrind. The API contract, dynamic output shapes and
 * memory objects are test_nnapi_sim_contract.c's; the operations' values test_nnapi_sim_ops.c's and
 * test_nnapi_sim_quant.c's.
 */
#include <unistd.h>

#include "nnapi_sim_helpers.h"

/* ---- the published values ----
 * Transcribed from public copies of the NNAPI header and its mirrors, not from our header: the operation codes 0-101
 * from the NNAPI test generator's OperationType list (TestHarness) and TFLite's nnapi/NeuralNetworksTypes.h (which
 * calls 91 TRANSPOSE_CONV), cross-checked with PyTorch's torch/backends/_nnapi/serializer.py (0-94); operand types,
 * result codes, fuse, padding, preference, device type, priority and duration codes and the two size constants from
 * TFLite's NeuralNetworksTypes.h and an Android 11 NeuralNetworks.h copy. */
static const struct pin {
    const char *name;
    long have, want;
} pins[] = {
    {"FLOAT32", ANEURALNETWORKS_FLOAT32, 0},
    {"INT32", ANEURALNETWORKS_INT32, 1},
    {"UINT32", ANEURALNETWORKS_UINT32, 2},
    {"TENSOR_FLOAT32", ANEURALNETWORKS_TENSOR_FLOAT32, 3},
    {"TENSOR_INT32", ANEURALNETWORKS_TENSOR_INT32, 4},
    {"TENSOR_QUANT8_ASYMM", ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 5},
    {"BOOL", ANEURALNETWORKS_BOOL, 6},
    {"TENSOR_QUANT16_SYMM", ANEURALNETWORKS_TENSOR_QUANT16_SYMM, 7},
    {"TENSOR_FLOAT16", ANEURALNETWORKS_TENSOR_FLOAT16, 8},
    {"TENSOR_BOOL8", ANEURALNETWORKS_TENSOR_BOOL8, 9},
    {"FLOAT16", ANEURALNETWORKS_FLOAT16, 10},
    {"TENSOR_QUANT8_SYMM_PER_CHANNEL", ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 11},
    {"TENSOR_QUANT16_ASYMM", ANEURALNETWORKS_TENSOR_QUANT16_ASYMM, 12},
    {"TENSOR_QUANT8_SYMM", ANEURALNETWORKS_TENSOR_QUANT8_SYMM, 13},
    {"TENSOR_QUANT8_ASYMM_SIGNED", ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, 14},
    {"MODEL", ANEURALNETWORKS_MODEL, 15},
    {"ADD", ANEURALNETWORKS_ADD, 0},
    {"AVERAGE_POOL_2D", ANEURALNETWORKS_AVERAGE_POOL_2D, 1},
    {"CONCATENATION", ANEURALNETWORKS_CONCATENATION, 2},
    {"CONV_2D", ANEURALNETWORKS_CONV_2D, 3},
    {"DEPTHWISE_CONV_2D", ANEURALNETWORKS_DEPTHWISE_CONV_2D, 4},
    {"DEPTH_TO_SPACE", ANEURALNETWORKS_DEPTH_TO_SPACE, 5},
    {"DEQUANTIZE", ANEURALNETWORKS_DEQUANTIZE, 6},
    {"EMBEDDING_LOOKUP", ANEURALNETWORKS_EMBEDDING_LOOKUP, 7},
    {"FLOOR", ANEURALNETWORKS_FLOOR, 8},
    {"FULLY_CONNECTED", ANEURALNETWORKS_FULLY_CONNECTED, 9},
    {"HASHTABLE_LOOKUP", ANEURALNETWORKS_HASHTABLE_LOOKUP, 10},
    {"L2_NORMALIZATION", ANEURALNETWORKS_L2_NORMALIZATION, 11},
    {"L2_POOL_2D", ANEURALNETWORKS_L2_POOL_2D, 12},
    {"LOCAL_RESPONSE_NORMALIZATION", ANEURALNETWORKS_LOCAL_RESPONSE_NORMALIZATION, 13},
    {"LOGISTIC", ANEURALNETWORKS_LOGISTIC, 14},
    {"LSH_PROJECTION", ANEURALNETWORKS_LSH_PROJECTION, 15},
    {"LSTM", ANEURALNETWORKS_LSTM, 16},
    {"MAX_POOL_2D", ANEURALNETWORKS_MAX_POOL_2D, 17},
    {"MUL", ANEURALNETWORKS_MUL, 18},
    {"RELU", ANEURALNETWORKS_RELU, 19},
    {"RELU1", ANEURALNETWORKS_RELU1, 20},
    {"RELU6", ANEURALNETWORKS_RELU6, 21},
    {"RESHAPE", ANEURALNETWORKS_RESHAPE, 22},
    {"RESIZE_BILINEAR", ANEURALNETWORKS_RESIZE_BILINEAR, 23},
    {"RNN", ANEURALNETWORKS_RNN, 24},
    {"SOFTMAX", ANEURALNETWORKS_SOFTMAX, 25},
    {"SPACE_TO_DEPTH", ANEURALNETWORKS_SPACE_TO_DEPTH, 26},
    {"SVDF", ANEURALNETWORKS_SVDF, 27},
    {"TANH", ANEURALNETWORKS_TANH, 28},
    {"BATCH_TO_SPACE_ND", ANEURALNETWORKS_BATCH_TO_SPACE_ND, 29},
    {"DIV", ANEURALNETWORKS_DIV, 30},
    {"MEAN", ANEURALNETWORKS_MEAN, 31},
    {"PAD", ANEURALNETWORKS_PAD, 32},
    {"SPACE_TO_BATCH_ND", ANEURALNETWORKS_SPACE_TO_BATCH_ND, 33},
    {"SQUEEZE", ANEURALNETWORKS_SQUEEZE, 34},
    {"STRIDED_SLICE", ANEURALNETWORKS_STRIDED_SLICE, 35},
    {"SUB", ANEURALNETWORKS_SUB, 36},
    {"TRANSPOSE", ANEURALNETWORKS_TRANSPOSE, 37},
    {"ABS", ANEURALNETWORKS_ABS, 38},
    {"ARGMAX", ANEURALNETWORKS_ARGMAX, 39},
    {"ARGMIN", ANEURALNETWORKS_ARGMIN, 40},
    {"AXIS_ALIGNED_BBOX_TRANSFORM", ANEURALNETWORKS_AXIS_ALIGNED_BBOX_TRANSFORM, 41},
    {"BIDIRECTIONAL_SEQUENCE_LSTM", ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_LSTM, 42},
    {"BIDIRECTIONAL_SEQUENCE_RNN", ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_RNN, 43},
    {"BOX_WITH_NMS_LIMIT", ANEURALNETWORKS_BOX_WITH_NMS_LIMIT, 44},
    {"CAST", ANEURALNETWORKS_CAST, 45},
    {"CHANNEL_SHUFFLE", ANEURALNETWORKS_CHANNEL_SHUFFLE, 46},
    {"DETECTION_POSTPROCESSING", ANEURALNETWORKS_DETECTION_POSTPROCESSING, 47},
    {"EQUAL", ANEURALNETWORKS_EQUAL, 48},
    {"EXP", ANEURALNETWORKS_EXP, 49},
    {"EXPAND_DIMS", ANEURALNETWORKS_EXPAND_DIMS, 50},
    {"GATHER", ANEURALNETWORKS_GATHER, 51},
    {"GENERATE_PROPOSALS", ANEURALNETWORKS_GENERATE_PROPOSALS, 52},
    {"GREATER", ANEURALNETWORKS_GREATER, 53},
    {"GREATER_EQUAL", ANEURALNETWORKS_GREATER_EQUAL, 54},
    {"GROUPED_CONV_2D", ANEURALNETWORKS_GROUPED_CONV_2D, 55},
    {"HEATMAP_MAX_KEYPOINT", ANEURALNETWORKS_HEATMAP_MAX_KEYPOINT, 56},
    {"INSTANCE_NORMALIZATION", ANEURALNETWORKS_INSTANCE_NORMALIZATION, 57},
    {"LESS", ANEURALNETWORKS_LESS, 58},
    {"LESS_EQUAL", ANEURALNETWORKS_LESS_EQUAL, 59},
    {"LOG", ANEURALNETWORKS_LOG, 60},
    {"LOGICAL_AND", ANEURALNETWORKS_LOGICAL_AND, 61},
    {"LOGICAL_NOT", ANEURALNETWORKS_LOGICAL_NOT, 62},
    {"LOGICAL_OR", ANEURALNETWORKS_LOGICAL_OR, 63},
    {"LOG_SOFTMAX", ANEURALNETWORKS_LOG_SOFTMAX, 64},
    {"MAXIMUM", ANEURALNETWORKS_MAXIMUM, 65},
    {"MINIMUM", ANEURALNETWORKS_MINIMUM, 66},
    {"NEG", ANEURALNETWORKS_NEG, 67},
    {"NOT_EQUAL", ANEURALNETWORKS_NOT_EQUAL, 68},
    {"PAD_V2", ANEURALNETWORKS_PAD_V2, 69},
    {"POW", ANEURALNETWORKS_POW, 70},
    {"PRELU", ANEURALNETWORKS_PRELU, 71},
    {"QUANTIZE", ANEURALNETWORKS_QUANTIZE, 72},
    {"QUANTIZED_16BIT_LSTM", ANEURALNETWORKS_QUANTIZED_16BIT_LSTM, 73},
    {"RANDOM_MULTINOMIAL", ANEURALNETWORKS_RANDOM_MULTINOMIAL, 74},
    {"REDUCE_ALL", ANEURALNETWORKS_REDUCE_ALL, 75},
    {"REDUCE_ANY", ANEURALNETWORKS_REDUCE_ANY, 76},
    {"REDUCE_MAX", ANEURALNETWORKS_REDUCE_MAX, 77},
    {"REDUCE_MIN", ANEURALNETWORKS_REDUCE_MIN, 78},
    {"REDUCE_PROD", ANEURALNETWORKS_REDUCE_PROD, 79},
    {"REDUCE_SUM", ANEURALNETWORKS_REDUCE_SUM, 80},
    {"ROI_ALIGN", ANEURALNETWORKS_ROI_ALIGN, 81},
    {"ROI_POOLING", ANEURALNETWORKS_ROI_POOLING, 82},
    {"RSQRT", ANEURALNETWORKS_RSQRT, 83},
    {"SELECT", ANEURALNETWORKS_SELECT, 84},
    {"SIN", ANEURALNETWORKS_SIN, 85},
    {"SLICE", ANEURALNETWORKS_SLICE, 86},
    {"SPLIT", ANEURALNETWORKS_SPLIT, 87},
    {"SQRT", ANEURALNETWORKS_SQRT, 88},
    {"TILE", ANEURALNETWORKS_TILE, 89},
    {"TOPK_V2", ANEURALNETWORKS_TOPK_V2, 90},
    {"TRANSPOSE_CONV_2D", ANEURALNETWORKS_TRANSPOSE_CONV_2D, 91},
    {"UNIDIRECTIONAL_SEQUENCE_LSTM", ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_LSTM, 92},
    {"UNIDIRECTIONAL_SEQUENCE_RNN", ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_RNN, 93},
    {"RESIZE_NEAREST_NEIGHBOR", ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR, 94},
    {"QUANTIZED_LSTM", ANEURALNETWORKS_QUANTIZED_LSTM, 95},
    {"IF", ANEURALNETWORKS_IF, 96},
    {"WHILE", ANEURALNETWORKS_WHILE, 97},
    {"ELU", ANEURALNETWORKS_ELU, 98},
    {"HARD_SWISH", ANEURALNETWORKS_HARD_SWISH, 99},
    {"FILL", ANEURALNETWORKS_FILL, 100},
    {"RANK", ANEURALNETWORKS_RANK, 101},
    {"NO_ERROR", ANEURALNETWORKS_NO_ERROR, 0},
    {"OUT_OF_MEMORY", ANEURALNETWORKS_OUT_OF_MEMORY, 1},
    {"INCOMPLETE", ANEURALNETWORKS_INCOMPLETE, 2},
    {"UNEXPECTED_NULL", ANEURALNETWORKS_UNEXPECTED_NULL, 3},
    {"BAD_DATA", ANEURALNETWORKS_BAD_DATA, 4},
    {"OP_FAILED", ANEURALNETWORKS_OP_FAILED, 5},
    {"BAD_STATE", ANEURALNETWORKS_BAD_STATE, 6},
    {"UNMAPPABLE", ANEURALNETWORKS_UNMAPPABLE, 7},
    {"OUTPUT_INSUFFICIENT_SIZE", ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE, 8},
    {"UNAVAILABLE_DEVICE", ANEURALNETWORKS_UNAVAILABLE_DEVICE, 9},
    {"MISSED_DEADLINE_TRANSIENT", ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT, 10},
    {"MISSED_DEADLINE_PERSISTENT", ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT, 11},
    {"RESOURCE_EXHAUSTED_TRANSIENT", ANEURALNETWORKS_RESOURCE_EXHAUSTED_TRANSIENT, 12},
    {"RESOURCE_EXHAUSTED_PERSISTENT", ANEURALNETWORKS_RESOURCE_EXHAUSTED_PERSISTENT, 13},
    {"DEAD_OBJECT", ANEURALNETWORKS_DEAD_OBJECT, 14},
    {"FUSED_NONE", ANEURALNETWORKS_FUSED_NONE, 0},
    {"FUSED_RELU", ANEURALNETWORKS_FUSED_RELU, 1},
    {"FUSED_RELU1", ANEURALNETWORKS_FUSED_RELU1, 2},
    {"FUSED_RELU6", ANEURALNETWORKS_FUSED_RELU6, 3},
    {"PADDING_SAME", ANEURALNETWORKS_PADDING_SAME, 1},
    {"PADDING_VALID", ANEURALNETWORKS_PADDING_VALID, 2},
    {"PREFER_LOW_POWER", ANEURALNETWORKS_PREFER_LOW_POWER, 0},
    {"PREFER_FAST_SINGLE_ANSWER", ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER, 1},
    {"PREFER_SUSTAINED_SPEED", ANEURALNETWORKS_PREFER_SUSTAINED_SPEED, 2},
    {"DEVICE_UNKNOWN", ANEURALNETWORKS_DEVICE_UNKNOWN, 0},
    {"DEVICE_OTHER", ANEURALNETWORKS_DEVICE_OTHER, 1},
    {"DEVICE_CPU", ANEURALNETWORKS_DEVICE_CPU, 2},
    {"DEVICE_GPU", ANEURALNETWORKS_DEVICE_GPU, 3},
    {"DEVICE_ACCELERATOR", ANEURALNETWORKS_DEVICE_ACCELERATOR, 4},
    {"PRIORITY_LOW", ANEURALNETWORKS_PRIORITY_LOW, 90},
    {"PRIORITY_MEDIUM", ANEURALNETWORKS_PRIORITY_MEDIUM, 100},
    {"PRIORITY_HIGH", ANEURALNETWORKS_PRIORITY_HIGH, 110},
    {"PRIORITY_DEFAULT", ANEURALNETWORKS_PRIORITY_DEFAULT, 100},
    {"DURATION_ON_HARDWARE", ANEURALNETWORKS_DURATION_ON_HARDWARE, 0},
    {"DURATION_IN_DRIVER", ANEURALNETWORKS_DURATION_IN_DRIVER, 1},
    {"FENCED_DURATION_ON_HARDWARE", ANEURALNETWORKS_FENCED_DURATION_ON_HARDWARE, 2},
    {"FENCED_DURATION_IN_DRIVER", ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER, 3},
    {"MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES", ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES, 128},
    {"BYTE_SIZE_OF_CACHE_TOKEN", ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN, 32},
};

static void test_enum_values(void)
{
    unsigned wrong = 0;
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++)
        if (pins[i].have != pins[i].want) {
            printf("  ANEURALNETWORKS_%s is %ld, published %ld\n", pins[i].name, pins[i].have, pins[i].want);
            wrong++;
        }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(sizeof pins / sizeof pins[0], 16 + 102 + 15 + 24);
    CU_ASSERT_EQUAL(sizeof(ANeuralNetworksOperandType), 24); /* int32, uint32, pointer, float, int32 on LP64 */
}

/* ---- devices ---- */

static void test_devices(void)
{
    static const struct {
        const char *name;
        int32_t type;
        int64_t level;
    } want[] = {
        {"parity-reference", ANEURALNETWORKS_DEVICE_CPU, 30},
        {"parity-npu-int8", ANEURALNETWORKS_DEVICE_ACCELERATOR, 30},
        {"parity-gpu-fp16", ANEURALNETWORKS_DEVICE_GPU, 30},
        {"parity-old-android", ANEURALNETWORKS_DEVICE_CPU, 27},
    };
    uint32_t n = 0;
    CU_ASSERT_EQUAL(ANeuralNetworks_getDeviceCount(&n), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(n, 4);
    for (uint32_t i = 0; i < n && i < 4; i++) {
        ANeuralNetworksDevice *d = NULL;
        const char *name = NULL, *version = NULL;
        int32_t type = -1;
        int64_t level = -1;
        CU_ASSERT_EQUAL(ANeuralNetworks_getDevice(i, &d), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksDevice_getName(d, &name), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksDevice_getType(d, &type), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksDevice_getFeatureLevel(d, &level), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksDevice_getVersion(d, &version), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksDevice_wait(d), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_STRING_EQUAL(name ? name : "", want[i].name);
        CU_ASSERT_EQUAL(type, want[i].type);
        CU_ASSERT_EQUAL(level, want[i].level);
        CU_ASSERT_PTR_NOT_NULL(version);
    }
    ANeuralNetworksDevice *d = NULL;
    CU_ASSERT_EQUAL(ANeuralNetworks_getDevice(4, &d), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworks_getDeviceCount(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
}

/* ---- partitioning ---- */

/* quant8 CONV_2D (quant_conv_model's) -> DEQUANTIZE -> float RELU: one quantized operation, two that are not. */
static ANeuralNetworksModel *mixed_model(void)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 0.5f, 128);
    uint32_t w = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2, 1, 1, 2), 0.3f, 120,
                     (const uint8_t[]){123, 121, 110, 127}, 4);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(2), 0.5f * 0.3f, 0, (const int32_t[]){10, -7}, 8);
    uint32_t q = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 0.7f, 100);
    op(&b, ANEURALNETWORKS_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_VALID), i32(&b, 1), i32(&b, 1), i32(&b, 0)), q);
    uint32_t f = f32t(&b, D(1, 1, 1, 2)), y = f32t(&b, D(1, 1, 1, 2));
    op(&b, ANEURALNETWORKS_DEQUANTIZE, IDX(q), f);
    op(&b, ANEURALNETWORKS_RELU, IDX(f), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    return b.m;
}

/* conv gives {103, 90} (test_conv_quant_bias); dequantized at 0.7, zp 100: {2.1, -7}; RELU: {2.1, 0}. */
static void test_partition(void)
{
    ANeuralNetworksModel *m = mixed_model();
    const ANeuralNetworksDevice *npu = dev("parity-npu-int8"), *ref = dev("parity-reference");
    bool sup[3] = {false, true, true};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(m, &npu, 1, sup), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(sup[0] && !sup[1] && !sup[2]);
    float y[2] = {0};
    io in = {(const uint8_t[]){130, 125}, 2}, out = {y, 8};
    const char *names[3] = {0};

    /* only the NPU listed: no fallback, finish fails */
    CU_ASSERT_EQUAL(run_on(m, &npu, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(parity_nnapi_sim_last_error(), "ANeuralNetworksCompilation_finish"));

    /* NPU then reference: the conv on the NPU, the rest on the reference device */
    const ANeuralNetworksDevice *both[2] = {npu, ref};
    CU_ASSERT_EQUAL(run_on(m, both, 2, 1, &in, 1, &out, names, 3), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_STRING_EQUAL(names[0] ? names[0] : "", "parity-npu-int8");
    CU_ASSERT_STRING_EQUAL(names[1] ? names[1] : "", "parity-reference");
    CU_ASSERT_STRING_EQUAL(names[2] ? names[2] : "", "parity-reference");
    CU_ASSERT_TRUE(close_all(y, (const float[]){0.7f * 3, 0}, 2, 1e-6));

    /* an unmodified client (Compilation_create) under PARITY_NNAPI_PROFILE=npu-int8: the runtime's CPU fallback */
    setenv("PARITY_NNAPI_PROFILE", "npu-int8", 1);
    memset(names, 0, sizeof names);
    y[0] = y[1] = -1;
    CU_ASSERT_EQUAL(run_on(m, NULL, 0, 1, &in, 1, &out, names, 3), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_STRING_EQUAL(names[0] ? names[0] : "", "parity-npu-int8");
    CU_ASSERT_STRING_EQUAL(names[1] ? names[1] : "", "cpu-fallback");
    CU_ASSERT_STRING_EQUAL(names[2] ? names[2] : "", "cpu-fallback");
    CU_ASSERT_TRUE(close_all(y, (const float[]){0.7f * 3, 0}, 2, 1e-6));
    setenv("PARITY_NNAPI_PROFILE", "no-such-profile", 1);
    ANeuralNetworksCompilation *c = NULL;
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(m, &c), ANEURALNETWORKS_BAD_DATA);
    unsetenv("PARITY_NNAPI_PROFILE");
    ANeuralNetworksModel_free(m);
}

/* parity-gpu-fp16 computes in float16: it takes float32 operations only when the model allows relaxed computation,
 * and then every input and result is a float16 value. 0.1 is 1638 / 16384 = 0.0999755859375 in float16; adding
 * 2^-16, a quarter of float16's spacing 2^-14 in [1/16, 1/8), rounds back to it. The reference device gives the
 * float32 sum 0.1f + 2^-16. */
static void test_relaxed_fp16(void)
{
    for (int relaxed = 0; relaxed < 2; relaxed++) {
        mb b = mb_new();
        uint32_t a = f32t(&b, D(1)), c = f32c(&b, D(1), (const float[]){0x1p-16f}), y = f32t(&b, D(1));
        op(&b, ANEURALNETWORKS_ADD, IDX(a, c, i32(&b, 0)), y);
        CU_ASSERT_EQUAL(ANeuralNetworksModel_relaxComputationFloat32toFloat16(b.m, relaxed), ANEURALNETWORKS_NO_ERROR);
        finish(&b, IDX(a), IDX(y));
        CU_ASSERT_FALSE(b.bad);
        const ANeuralNetworksDevice *gpu = dev("parity-gpu-fp16"), *ref = dev("parity-reference");
        float x = 0.1f, got = 0;
        io in = {&x, 4}, out = {&got, 4};
        const char *name = NULL;
        if (!relaxed) {
            CU_ASSERT_EQUAL(run_on(b.m, &gpu, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_BAD_DATA);
        } else {
            CU_ASSERT_EQUAL(run_on(b.m, &gpu, 1, 1, &in, 1, &out, &name, 1), ANEURALNETWORKS_NO_ERROR);
            CU_ASSERT_STRING_EQUAL(name ? name : "", "parity-gpu-fp16");
            CU_ASSERT_EQUAL(got, 0.0999755859375f);
        }
        CU_ASSERT_EQUAL(run_on(b.m, &ref, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(got, 0.1f + 0x1p-16f);
        ANeuralNetworksModel_free(b.m);
    }
}

/* ---- feature-level gates ---- */

static void test_level_gates(void)
{
    const ANeuralNetworksDevice *old = dev("parity-old-android"), *ref = dev("parity-reference");
    uint8_t got[2];
    io in = {(const uint8_t[]){130, 125}, 2}, out = {got, 2};
    /* Level 27: a quantized conv needs output_scale > input_scale * filter_scale (0.5 * 0.3 = 0.15). */
    ANeuralNetworksModel *m = quant_conv_model(0.7f);
    CU_ASSERT_EQUAL(run_on(m, &old, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(got[0] == 103 && got[1] == 90);
    ANeuralNetworksModel_free(m);
    m = quant_conv_model(0.15f);
    CU_ASSERT_EQUAL(run_on(m, &old, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(parity_nnapi_sim_last_error(), "output_scale"));
    CU_ASSERT_EQUAL(run_on(m, &ref, 1, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    /* an unmodified client on an old Android: the old runtime's CPU path has the same rule, no fallback helps */
    setenv("PARITY_NNAPI_PROFILE", "old-android", 1);
    CU_ASSERT_EQUAL(run_on(m, NULL, 0, 1, &in, 1, &out, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    unsetenv("PARITY_NNAPI_PROFILE");
    ANeuralNetworksModel_free(m);

    /* SLICE came with level 29 */
    mb b = mb_new();
    uint32_t x = f32t(&b, D(4)), y = f32t(&b, D(2));
    op(&b, ANEURALNETWORKS_SLICE, IDX(x, i32c(&b, D(1), (const int32_t[]){1}), i32c(&b, D(1), (const int32_t[]){2})),
       y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    bool sup = true;
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_FALSE(sup);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &ref, 1, &sup),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(sup);
    float xf[4] = {1, 2, 3, 4}, yf[2] = {0};
    io fin = {xf, 16}, fout = {yf, 8};
    CU_ASSERT_EQUAL(run_on(b.m, &old, 1, 1, &fin, 1, &fout, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(parity_nnapi_sim_last_error(), "feature level 29"));
    setenv("PARITY_NNAPI_PROFILE", "old-android", 1);
    CU_ASSERT_EQUAL(run_on(b.m, NULL, 0, 1, &fin, 1, &fout, NULL, 0), ANEURALNETWORKS_BAD_DATA);
    unsetenv("PARITY_NNAPI_PROFILE");
    CU_ASSERT_EQUAL(run_on(b.m, &ref, 1, 1, &fin, 1, &fout, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(yf[0] == 2 && yf[1] == 3);
    ANeuralNetworksModel_free(b.m);
}

/* ---- robustness ----
 * Seeded random single-operation models over the simulated operation codes: random operand types, shapes (a 0
 * extent is "unknown"), scalar constants in [-2, 5], inputs of random bytes. Whatever the library makes of them, it
 * must return a documented result code at every step and never crash or read out of bounds (the test runs under
 * valgrind and the sanitizers too). */

static int is_scalar(int32_t t)
{
    return t == ANEURALNETWORKS_INT32 || t == ANEURALNETWORKS_BOOL || t == ANEURALNETWORKS_FLOAT32;
}

static size_t elem_size(int32_t t)
{
    return t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ? 1
           : t == ANEURALNETWORKS_TENSOR_FLOAT16                                                       ? 2
                                                                                                       : 4;
}

static void test_random_models(void)
{
    /* operation codes with their usual input counts */
    static const struct {
        int32_t code;
        uint32_t n[3];
    } ops[] = {
        {ANEURALNETWORKS_ADD, {3}},
        {ANEURALNETWORKS_AVERAGE_POOL_2D, {7, 10, 11}},
        {ANEURALNETWORKS_CONCATENATION, {3}},
        {ANEURALNETWORKS_CONV_2D, {7, 10, 13}},
        {ANEURALNETWORKS_DEPTHWISE_CONV_2D, {8, 11, 14}},
        {ANEURALNETWORKS_DEQUANTIZE, {1}},
        {ANEURALNETWORKS_FULLY_CONNECTED, {4}},
        {ANEURALNETWORKS_L2_POOL_2D, {7, 10}},
        {ANEURALNETWORKS_LOGISTIC, {1}},
        {ANEURALNETWORKS_MAX_POOL_2D, {7, 10, 8}},
        {ANEURALNETWORKS_MUL, {3}},
        {ANEURALNETWORKS_RELU, {1}},
        {ANEURALNETWORKS_RELU1, {1}},
        {ANEURALNETWORKS_RELU6, {1}},
        {ANEURALNETWORKS_RESHAPE, {2}},
        {ANEURALNETWORKS_RESIZE_BILINEAR, {3, 4, 6}},
        {ANEURALNETWORKS_SOFTMAX, {2, 3}},
        {ANEURALNETWORKS_TANH, {1}},
        {ANEURALNETWORKS_DIV, {3}},
        {ANEURALNETWORKS_MEAN, {3}},
        {ANEURALNETWORKS_PAD, {2}},
        {ANEURALNETWORKS_SUB, {3}},
        {ANEURALNETWORKS_TRANSPOSE, {2}},
        {ANEURALNETWORKS_LOG_SOFTMAX, {3}},
        {ANEURALNETWORKS_PRELU, {2}},
        {ANEURALNETWORKS_QUANTIZE, {1}},
        {ANEURALNETWORKS_SLICE, {3}},
        {ANEURALNETWORKS_TRANSPOSE_CONV_2D, {9, 11}},
        {ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR, {4, 6}},
        {ANEURALNETWORKS_HARD_SWISH, {1}},
    };
    static const int32_t main_types[] = {ANEURALNETWORKS_TENSOR_FLOAT32, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM,
                                         ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, ANEURALNETWORKS_TENSOR_FLOAT16};
    unsigned ran = 0, added = 0, bad_code = 0;
    for (int iter = 0; iter < 4000; iter++) {
        ANeuralNetworksModel *m = NULL;
        ANeuralNetworksModel_create(&m);
        uint32_t pick = rnd(sizeof ops / sizeof ops[0]), n_in = ops[pick].n[rnd(3)];
        if (!n_in || rnd(10) == 0) n_in = 1 + rnd(12);
        int32_t code = ops[pick].code, main_t = main_types[rnd(4)];
        uint32_t ins[16], out = n_in, model_in[16], n_model_in = 0, rank_of[17], dims_of[17][4];
        int32_t type_of[17];
        int rc = 0;
        for (uint32_t i = 0; i <= n_in; i++) {
            uint32_t roll = rnd(20);
            int32_t t = i == 0 || i == n_in ? main_t
                        : roll < 10         ? ANEURALNETWORKS_INT32
                        : roll < 14         ? main_t
                        : roll < 16         ? ANEURALNETWORKS_TENSOR_INT32
                        : roll < 18         ? ANEURALNETWORKS_BOOL
                                            : ANEURALNETWORKS_FLOAT32;
            if (i == n_in && code == ANEURALNETWORKS_DEQUANTIZE) t = ANEURALNETWORKS_TENSOR_FLOAT32;
            if (i == n_in && code == ANEURALNETWORKS_QUANTIZE) t = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
            uint32_t rank = is_scalar(t) || i == n_in ? 0 : (i == 0 && rnd(4)) ? 4 : 1 + rnd(4);
            for (uint32_t d = 0; d < rank; d++) dims_of[i][d] = rnd(4);
            int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
            ANeuralNetworksOperandType ot = {t, rank, rank ? dims_of[i] : NULL, quant ? 0.5f : 0,
                                             t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 128 : 0};
            rc |= ANeuralNetworksModel_addOperand(m, &ot) > 14;
            type_of[i] = t, rank_of[i] = rank;
            if (i == n_in) break;
            ins[i] = i;
            if (!rank) { /* a scalar constant */
                int32_t v = (int32_t)rnd(8) - 2;
                float f = (float)v;
                uint8_t bb = (uint8_t)(v & 1);
                const void *p = t == ANEURALNETWORKS_INT32     ? (const void *)&v
                                : t == ANEURALNETWORKS_FLOAT32 ? (const void *)&f
                                                               : (const void *)&bb;
                rc |= ANeuralNetworksModel_setOperandValue(m, (int32_t)i, p, t == ANEURALNETWORKS_BOOL ? 1 : 4) > 14;
            } else {
                model_in[n_model_in++] = i;
            }
        }
        int r = ANeuralNetworksModel_addOperation(m, code, n_in, ins, 1, &out);
        rc |= r > 14;
        added += r == 0;
        if (!r) {
            rc |= ANeuralNetworksModel_identifyInputsAndOutputs(m, n_model_in, model_in, 1, &out) > 14;
            r = ANeuralNetworksModel_finish(m);
            rc |= r > 14;
        }
        if (!r) {
            ANeuralNetworksCompilation *c = NULL;
            ANeuralNetworksExecution *e = NULL;
            r = ANeuralNetworksCompilation_create(m, &c);
            if (!r) r = ANeuralNetworksCompilation_finish(c);
            if (!r) r = ANeuralNetworksExecution_create(c, &e);
            static unsigned char buf[16][512], obuf[1 << 16];
            for (uint32_t k = 0; !r && k < n_model_in; k++) {
                uint32_t o = model_in[k], dims[4];
                size_t bytes = elem_size(type_of[o]);
                for (uint32_t d = 0; d < rank_of[o]; d++) { /* the declared extent, or 1..3 where it is open */
                    dims[d] = dims_of[o][d] ? dims_of[o][d] : 1 + rnd(3);
                    bytes *= dims[d];
                }
                for (size_t b = 0; b < bytes; b++)
                    buf[k][b] = (unsigned char)(type_of[o] == ANEURALNETWORKS_TENSOR_INT32 ? rnd(4) : rnd(256));
                int quant = type_of[o] == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ||
                            type_of[o] == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
                ANeuralNetworksOperandType it = {type_of[o], rank_of[o], dims, quant ? 0.5f : 0,
                                                 type_of[o] == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 128 : 0};
                rc |= ANeuralNetworksExecution_setInput(e, (int32_t)k, &it, buf[k], bytes) > 14;
            }
            if (!r) {
                rc |= ANeuralNetworksExecution_setOutput(e, 0, NULL, obuf, sizeof obuf) > 14;
                r = ANeuralNetworksExecution_compute(e);
                rc |= r > 14;
                ran += r == 0;
            }
            ANeuralNetworksExecution_free(e);
            ANeuralNetworksCompilation_free(c);
        }
        bad_code += rc != 0;
        ANeuralNetworksModel_free(m);
    }
    CU_ASSERT_EQUAL(bad_code, 0);
    CU_ASSERT_TRUE(ran > 0); /* some random models ran to the end: the loop reached the kernels */
    PAR_TEST_NOTE("random models: %u of 4000 added, %u ran\n", added, ran);
}

/* ---- the unmodified client ---- */

static void test_client_under_valgrind(void)
{
    char exe[4096], dir[4096], cmd[12288];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CU_ASSERT_TRUE_FATAL(n > 0);
    exe[n] = 0;
    snprintf(dir, sizeof dir, "%s", exe);
    char *slash = strrchr(dir, '/');
    CU_ASSERT_PTR_NOT_NULL_FATAL(slash);
    *slash = 0;
    /* the plain run first: it must pass wherever the library was built */
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s/../lib' '%s/nnapi_client' >/dev/null 2>&1", dir, dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
#if defined(__SANITIZE_ADDRESS__)
    PAR_TEST_SKIP("valgrind: a sanitizer build cannot run under it");
#else
    if (system("command -v valgrind >/dev/null 2>&1") != 0) PAR_TEST_SKIP("valgrind is not installed");
    snprintf(cmd, sizeof cmd,
             "LD_LIBRARY_PATH='%s/../lib' valgrind -q --leak-check=full --errors-for-leak-kinds=all "
             "--error-exitcode=9 '%s/nnapi_client' >/dev/null 2>&1",
             dir, dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
#endif
}

static const CU_TestInfo tests[] = {
    {"enum_values", test_enum_values},
    {"devices", test_devices},
    {"partition", test_partition},
    {"relaxed_fp16", test_relaxed_fp16},
    {"level_gates", test_level_gates},
    {"random_models", test_random_models},
    {"client_under_valgrind", test_client_under_valgrind},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi_sim", tests)
