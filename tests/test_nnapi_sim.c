/*
 * test_nnapi_sim.c - the simulated libneuralnetworks.so (backends/nnapi/sim/), linked directly: the published
 * values of every NNAPI constant the header declares, each simulated operation on small cases whose expected values
 * are worked out by hand in the comments (or by an independent libm formula for the transcendental ones), quantized
 * convolution with an int32 bias against hand-computed gemmlowp results (ties included, per-channel filters), the
 * API contract (each misuse returns its documented code and names the function), partitioning across the simulated
 * devices and the partition query, the feature-level gates, dynamic output shapes, memory objects, and a client
 * that only dlopens the library, run under valgrind.
 */
#include <android/NeuralNetworks.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "parity_nnapi_sim.h"
#include "tmain.h"

/* Refusals are expected by the dozen here: keep stderr quiet (the messages are read through
 * parity_nnapi_sim_last_error). */
__attribute__((constructor)) static void quiet(void)
{
    setenv("PARITY_NNAPI_LOG", "0", 1);
    unsetenv("PARITY_NNAPI_PROFILE");
}

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

/* A portable seeded PRNG for the randomized tests. */
static uint32_t rnd_state = 12345u;
static uint32_t rnd(uint32_t n)
{
    rnd_state = rnd_state * 1664525u + 1013904223u;
    return (rnd_state >> 8) % n;
}

/* ---- model building ---- */

typedef struct mb {
    ANeuralNetworksModel *m;
    uint32_t n;
    int bad; /* some call failed: the test asserts it did not */
} mb;

#define D(...)   ((const uint32_t[]){__VA_ARGS__}), (uint32_t)(sizeof((const uint32_t[]){__VA_ARGS__}) / 4)
#define IDX(...) (uint32_t)(sizeof((const uint32_t[]){__VA_ARGS__}) / 4), ((const uint32_t[]){__VA_ARGS__})

static mb mb_new(void)
{
    mb b = {0};
    if (ANeuralNetworksModel_create(&b.m)) b.bad = 1;
    return b;
}

static uint32_t opnd(mb *b, int32_t type, const uint32_t *dims, uint32_t rank, float scale, int32_t zp)
{
    ANeuralNetworksOperandType t = {type, rank, rank ? dims : NULL, scale, zp};
    if (ANeuralNetworksModel_addOperand(b->m, &t)) b->bad = 1;
    return b->n++;
}

static uint32_t cst(mb *b, int32_t type, const uint32_t *dims, uint32_t rank, float scale, int32_t zp, const void *data,
                    size_t bytes)
{
    uint32_t i = opnd(b, type, dims, rank, scale, zp);
    if (ANeuralNetworksModel_setOperandValue(b->m, (int32_t)i, data, bytes)) b->bad = 1;
    return i;
}

static uint32_t i32(mb *b, int32_t v)
{
    return cst(b, ANEURALNETWORKS_INT32, NULL, 0, 0, 0, &v, 4);
}

static uint32_t f32s(mb *b, float v)
{
    return cst(b, ANEURALNETWORKS_FLOAT32, NULL, 0, 0, 0, &v, 4);
}

static uint32_t flag(mb *b, int v)
{
    uint8_t u = (uint8_t)v;
    return cst(b, ANEURALNETWORKS_BOOL, NULL, 0, 0, 0, &u, 1);
}

static uint32_t f32t(mb *b, const uint32_t *dims, uint32_t rank)
{
    return opnd(b, ANEURALNETWORKS_TENSOR_FLOAT32, dims, rank, 0, 0);
}

static uint32_t f32c(mb *b, const uint32_t *dims, uint32_t rank, const float *v)
{
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= dims[i];
    return cst(b, ANEURALNETWORKS_TENSOR_FLOAT32, dims, rank, 0, 0, v, n * 4);
}

static uint32_t i32c(mb *b, const uint32_t *dims, uint32_t rank, const int32_t *v)
{
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= dims[i];
    return cst(b, ANEURALNETWORKS_TENSOR_INT32, dims, rank, 0, 0, v, n * 4);
}

static void op(mb *b, int32_t code, uint32_t n_in, const uint32_t *ins, uint32_t out)
{
    if (ANeuralNetworksModel_addOperation(b->m, code, n_in, ins, 1, &out)) b->bad = 1;
}

static int finish(mb *b, uint32_t n_in, const uint32_t *ins, uint32_t n_out, const uint32_t *outs)
{
    if (ANeuralNetworksModel_identifyInputsAndOutputs(b->m, n_in, ins, n_out, outs)) b->bad = 1;
    int rc = ANeuralNetworksModel_finish(b->m);
    if (rc) b->bad = 1;
    return rc;
}

typedef struct io {
    const void *data;
    size_t bytes;
} io;

static const ANeuralNetworksDevice *dev(const char *name)
{
    uint32_t n = 0;
    ANeuralNetworks_getDeviceCount(&n);
    for (uint32_t i = 0; i < n; i++) {
        ANeuralNetworksDevice *d;
        const char *s;
        if (!ANeuralNetworks_getDevice(i, &d) && !ANeuralNetworksDevice_getName(d, &s) && !strcmp(s, name)) return d;
    }
    return NULL;
}

/* Compiles (for the listed devices, or with Compilation_create when ndev is 0), runs once, frees; the first
 * failing code. names (may be NULL) receives the partition. */
static int run_on(ANeuralNetworksModel *m, const ANeuralNetworksDevice *const *devs, uint32_t ndev, uint32_t n_in,
                  const io *in, uint32_t n_out, io *out, const char **names, uint32_t n_names)
{
    ANeuralNetworksCompilation *c = NULL;
    ANeuralNetworksExecution *e = NULL;
    int rc = ndev ? ANeuralNetworksCompilation_createForDevices(m, devs, ndev, &c)
                  : ANeuralNetworksCompilation_create(m, &c);
    if (!rc) rc = ANeuralNetworksCompilation_finish(c);
    if (!rc && names) {
        uint32_t count;
        rc = parity_nnapi_sim_partition(c, names, n_names, &count);
    }
    if (!rc) rc = ANeuralNetworksExecution_create(c, &e);
    for (uint32_t i = 0; !rc && i < n_in; i++)
        rc = ANeuralNetworksExecution_setInput(e, (int32_t)i, NULL, in[i].data, in[i].bytes);
    for (uint32_t i = 0; !rc && i < n_out; i++)
        rc = ANeuralNetworksExecution_setOutput(e, (int32_t)i, NULL, (void *)out[i].data, out[i].bytes);
    if (!rc) rc = ANeuralNetworksExecution_compute(e);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    return rc;
}

static int run1(ANeuralNetworksModel *m, const void *x, size_t xb, void *y, size_t yb)
{
    io in = {x, xb}, out = {y, yb};
    return run_on(m, NULL, 0, x ? 1 : 0, &in, 1, &out, NULL, 0);
}

static int close_all(const float *got, const float *want, size_t n, double tol)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol)) {
            printf("  element %zu: got %.9g, expected %.9g\n", i, (double)got[i], (double)want[i]);
            ok = 0;
        }
    return ok;
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

/* A quantized CONV_2D with a per-tensor filter and an int32 bias of scale input_scale * filter_scale:
 * x [1,1,1,2] scale 0.5 zp 128 stored {130,125} = (2, -3); filter [2,1,1,2] scale 0.3 zp 120: channel 0 {123,121}
 * = (3, 1), channel 1 {110,127} = (-10, 7); bias {10, -7}. acc0 = 6 - 3 + 10 = 13, acc1 = -20 - 21 - 7 = -48.
 * Output scale 0.7 zp 100: 13 * 0.15 / 0.7 = 2.786 -> 3 -> 103; -48 * 0.15 / 0.7 = -10.29 -> -10 -> 90 (no tie
 * near either, so every rounding rule agrees). The model takes the bias scale the client computes, 0.5f * 0.3f. */
static ANeuralNetworksModel *quant_conv_model(float out_scale)
{
    mb b = mb_new();
    uint32_t in = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), 0.5f, 128);
    uint32_t w = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2, 1, 1, 2), 0.3f, 120,
                     (const uint8_t[]){123, 121, 110, 127}, 4);
    uint32_t bias = cst(&b, ANEURALNETWORKS_TENSOR_INT32, D(2), 0.5f * 0.3f, 0, (const int32_t[]){10, -7}, 8);
    uint32_t y = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 1, 1, 2), out_scale, 100);
    op(&b, ANEURALNETWORKS_CONV_2D,
       IDX(in, w, bias, i32(&b, ANEURALNETWORKS_PADDING_VALID), i32(&b, 1), i32(&b, 1), i32(&b, 0)), y);
    finish(&b, IDX(in), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    return b.m;
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
        CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup), ANEURALNETWORKS_NO_ERROR);
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
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup), ANEURALNETWORKS_NO_ERROR);
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
    uint32_t w = cst(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(1, 2, 2, 1), 0.25f, 0, (const uint8_t[]){1, 2, 3, 4}, 4);
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

/* ---- the API contract ---- */

static int said(const char *func)
{
    return strstr(parity_nnapi_sim_last_error(), func) != NULL;
}

static void test_contract_model(void)
{
    CU_ASSERT_EQUAL(ANeuralNetworksModel_create(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksOperandType f = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, (const uint32_t[]){2}, 0, 0};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperand(NULL, &f), ANEURALNETWORKS_UNEXPECTED_NULL);
    CU_ASSERT_TRUE(said("ANeuralNetworksModel_addOperand"));
    mb b = mb_new();
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperand(b.m, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    /* operand types */
    ANeuralNetworksOperandType bad[] = {
        {99, 0, NULL, 0, 0},                                                     /* unknown code */
        {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 1, (const uint32_t[]){2}, 0, 0},   /* scale 0 */
        {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 1, (const uint32_t[]){2}, 1, 300}, /* zero point out of range */
        {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, 1, (const uint32_t[]){2}, 1, 128},
        {ANEURALNETWORKS_INT32, 1, (const uint32_t[]){2}, 0, 0},          /* a scalar with dimensions */
        {ANEURALNETWORKS_TENSOR_FLOAT32, 1, (const uint32_t[]){2}, 1, 0}, /* float with a scale */
        {ANEURALNETWORKS_TENSOR_FLOAT32, 2, NULL, 0, 0},                  /* dimensions NULL */
        {ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 1, (const uint32_t[]){2}, 0.5f, 0}, /* per-channel scale */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperand(b.m, &bad[i]), ANEURALNETWORKS_BAD_DATA);
        CU_ASSERT_TRUE(said("ANeuralNetworksModel_addOperand"));
    }
    uint32_t x = f32t(&b, D(2)), c = f32t(&b, D(2)), s = opnd(&b, ANEURALNETWORKS_INT32, NULL, 0, 0, 0);
    uint32_t y = f32t(&b, D(2));
    CU_ASSERT_FALSE(b.bad);
    const float v[2] = {1, 2};
    const int32_t zero = 0;
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, 17, v, 8), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, -1, v, 8), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)c, v, 4), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("ANeuralNetworksModel_setOperandValue") && strstr(parity_nnapi_sim_last_error(), "length"));
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)c, NULL, 8), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)c, v, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)s, &zero, 4), ANEURALNETWORKS_NO_ERROR);
    ANeuralNetworksSymmPerChannelQuantParams pc = {0, 2, v};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(b.m, (int32_t)x, &pc),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(b.m, (int32_t)x, NULL),
                    ANEURALNETWORKS_UNEXPECTED_NULL);
    /* operations */
    uint32_t ins3[3] = {x, c, s}, ins2[2] = {x, c}, far[3] = {x, c, 99};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, 1000, 3, ins3, 1, &y), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_LSTM, 3, ins3, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("not simulated"));
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, 3, far, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, 2, ins2, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("ANeuralNetworksModel_addOperation") && said("ADD"));
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, 3, NULL, 1, &y),
                    ANEURALNETWORKS_UNEXPECTED_NULL);
    uint32_t q = opnd(&b, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, D(2), 1, 0), mixed[3] = {x, q, s};
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, 3, mixed, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, 3, ins3, 1, &y),
                    ANEURALNETWORKS_NO_ERROR);
    /* y is written once */
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, 3, ins3, 1, &y),
                    ANEURALNETWORKS_BAD_DATA);
    /* a compilation needs a finished model */
    ANeuralNetworksCompilation *comp = NULL;
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(b.m, &comp), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_PTR_NULL(comp);
    /* finish without outputs */
    CU_ASSERT_EQUAL(ANeuralNetworksModel_finish(b.m), ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksModel_free(b.m);

    b = mb_new();
    x = f32t(&b, D(2)), c = f32c(&b, D(2), v), s = i32(&b, 0), y = f32t(&b, D(2));
    op(&b, ANEURALNETWORKS_ADD, IDX(x, c, s), y);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, 1, &c, 1, &y), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, 1, &x, 1, (const uint32_t[]){42}),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, IDX(x, x), IDX(y)), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, IDX(x), IDX(y)), ANEURALNETWORKS_NO_ERROR);
    /* x is an input now: it cannot be identified again */
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, IDX(x), IDX(y)), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_finish(b.m), ANEURALNETWORKS_NO_ERROR);
    /* after finish nothing changes */
    CU_ASSERT_EQUAL(ANeuralNetworksModel_finish(b.m), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperand(b.m, &f), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValue(b.m, (int32_t)c, v, 8), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_TRUE(said("ANeuralNetworksModel_setOperandValue") && said("finished"));
    CU_ASSERT_EQUAL(ANeuralNetworksModel_addOperation(b.m, ANEURALNETWORKS_ADD, IDX(x, c, s), 1, &y),
                    ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_relaxComputationFloat32toFloat16(b.m, true), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, IDX(x), IDX(y)), ANEURALNETWORKS_BAD_STATE);
    ANeuralNetworksModel_free(b.m);

    /* an operand that is read but never written and has no value */
    b = mb_new();
    x = f32t(&b, D(2)), c = f32t(&b, D(2)), s = i32(&b, 0), y = f32t(&b, D(2));
    op(&b, ANEURALNETWORKS_ADD, IDX(x, c, s), y);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_identifyInputsAndOutputs(b.m, IDX(x), IDX(y)), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_finish(b.m), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("ANeuralNetworksModel_finish"));
    ANeuralNetworksModel_free(b.m);

    /* freeing NULL is allowed */
    ANeuralNetworksModel_free(NULL);
    ANeuralNetworksCompilation_free(NULL);
    ANeuralNetworksExecution_free(NULL);
    ANeuralNetworksEvent_free(NULL);
    ANeuralNetworksMemory_free(NULL);
}

/* x + {1, 2} on [2] */
static ANeuralNetworksModel *add_model(void)
{
    mb b = mb_new();
    uint32_t x = f32t(&b, D(2)), c = f32c(&b, D(2), (const float[]){1, 2}), y = f32t(&b, D(2));
    op(&b, ANEURALNETWORKS_ADD, IDX(x, c, i32(&b, 0)), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    return b.m;
}

static void test_contract_compile_execute(void)
{
    ANeuralNetworksModel *m = add_model();
    ANeuralNetworksCompilation *c = NULL;
    ANeuralNetworksExecution *e = NULL;
    ANeuralNetworksEvent *ev = NULL;
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(NULL, &c), ANEURALNETWORKS_UNEXPECTED_NULL);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_createForDevices(m, NULL, 1, &c), ANEURALNETWORKS_UNEXPECTED_NULL);
    const ANeuralNetworksDevice *ref = dev("parity-reference");
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_createForDevices(m, &ref, 0, &c), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(m, &c), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_create(c, &e), ANEURALNETWORKS_BAD_STATE); /* not finished */
    CU_ASSERT_TRUE(said("ANeuralNetworksExecution_create"));
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setPreference(c, 7), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setPriority(c, 95), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setPriority(c, ANEURALNETWORKS_PRIORITY_HIGH), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setTimeout(c, 1000), ANEURALNETWORKS_BAD_DATA); /* not for devices */
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN] = {0};
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setCaching(c, NULL, token), ANEURALNETWORKS_UNEXPECTED_NULL);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setCaching(c, "/tmp", token), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_finish(c), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_finish(c), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setPreference(c, 0), ANEURALNETWORKS_BAD_STATE);
    const char *names[1];
    uint32_t count = 0;
    CU_ASSERT_EQUAL(parity_nnapi_sim_partition(c, names, 1, &count), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(count, 1);

    CU_ASSERT_EQUAL(ANeuralNetworksExecution_create(c, &e), ANEURALNETWORKS_NO_ERROR);
    float x[2] = {1, 1}, y[2] = {0};
    uint32_t rank = 9, dims[2];
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 1, NULL, x, 8), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, x, 4), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_TRUE(said("ANeuralNetworksExecution_setInput"));
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, NULL, 8), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksOperandType wrong = {ANEURALNETWORKS_TENSOR_INT32, 1, (const uint32_t[]){2}, 0, 0};
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, &wrong, x, 8), ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksOperandType wrong_dims = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, (const uint32_t[]){3}, 0, 0};
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, &wrong_dims, x, 12), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_BAD_DATA); /* input 0 missing */
    CU_ASSERT_TRUE(said("input 0 is not set"));
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, x, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, x, 8), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_startCompute(e, NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_startCompute(e, &ev), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksEvent_wait(ev), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(y[0] == 2 && y[1] == 3);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_BAD_STATE); /* one compute per execution */
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, 8), ANEURALNETWORKS_BAD_STATE);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(rank, 1);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(dims[0], 2);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getOutputOperandDimensions(e, 1, dims), ANEURALNETWORKS_BAD_DATA);
    uint64_t ns = 0;
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_ON_HARDWARE, &ns),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ns, UINT64_MAX); /* timing was not asked for */
    CU_ASSERT_EQUAL(ANeuralNetworksEvent_wait(NULL), ANEURALNETWORKS_UNEXPECTED_NULL);
    ANeuralNetworksEvent_free(ev);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);

    /* timing on a one-device compilation */
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_createForDevices(m, &ref, 1, &c), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_setTimeout(c, 1000000000), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_finish(c), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_create(c, &e), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setMeasureTiming(e, true), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, x, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getDuration(e, 9, &ns), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_getDuration(e, ANEURALNETWORKS_DURATION_IN_DRIVER, &ns),
                    ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_NOT_EQUAL(ns, UINT64_MAX);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* An omitted required input (NULL, 0) fails the run instead of being read. */
static void test_omitted_input(void)
{
    ANeuralNetworksModel *m = add_model();
    float y[2];
    CU_ASSERT_EQUAL(run1(m, NULL, 0, y, 8), ANEURALNETWORKS_BAD_DATA); /* not set at all */
    ANeuralNetworksCompilation *c = NULL;
    ANeuralNetworksExecution *e = NULL;
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(m, &c), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_finish(c), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_create(c, &e), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, NULL, 0), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setOutput(e, 0, NULL, y, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_OP_FAILED);
    CU_ASSERT_TRUE(said("has no value"));
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
}

/* An output of unknown shape: the run sizes it; a buffer too small gives OUTPUT_INSUFFICIENT_SIZE and the shape it
 * needs. [2,1] + [3] -> [2,3]. */
static void test_dynamic_output(void)
{
    mb b = mb_new();
    uint32_t x = f32t(&b, D(2, 1)), c = f32c(&b, D(3), (const float[]){10, 20, 30});
    uint32_t y = f32t(&b, D(0, 0));
    op(&b, ANEURALNETWORKS_ADD, IDX(x, c, i32(&b, 0)), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    const ANeuralNetworksDevice *old = dev("parity-old-android");
    bool sup = true; /* dynamic shapes came with level 29 */
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_FALSE(sup);
    for (int small = 0; small < 2; small++) {
        ANeuralNetworksCompilation *comp = NULL;
        ANeuralNetworksExecution *e = NULL;
        CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(b.m, &comp), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksCompilation_finish(comp), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksExecution_create(comp, &e), ANEURALNETWORKS_NO_ERROR);
        float xv[2] = {1, 2}, yv[6] = {0};
        uint32_t rank = 0, dims[2] = {0};
        CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInput(e, 0, NULL, xv, 8), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksExecution_setOutput(e, 0, NULL, yv, small ? 16 : 24), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksExecution_compute(e),
                        small ? ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE : ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksExecution_getOutputOperandRank(e, 0, &rank), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_EQUAL(ANeuralNetworksExecution_getOutputOperandDimensions(e, 0, dims), ANEURALNETWORKS_NO_ERROR);
        CU_ASSERT_TRUE(rank == 2 && dims[0] == 2 && dims[1] == 3);
        if (!small) CU_ASSERT_TRUE(close_all(yv, (const float[]){11, 21, 31, 12, 22, 32}, 6, 0));
        ANeuralNetworksExecution_free(e);
        ANeuralNetworksCompilation_free(comp);
    }
    ANeuralNetworksModel_free(b.m);
}

/* Weights and input through a shared memory object (memfd): x + c with c at offset 8 of the memory. */
static void test_memory(void)
{
    int fd = memfd_create("nnapi-sim-test", 0);
    if (fd < 0) PAR_TEST_SKIP("memfd_create is not available");
    const float content[4] = {5, 6, 1, 2}; /* input at 0, constant at 8 */
    CU_ASSERT_EQUAL(write(fd, content, sizeof content), (ssize_t)sizeof content);
    ANeuralNetworksMemory *mem = NULL;
    CU_ASSERT_EQUAL(ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, NULL),
                    ANEURALNETWORKS_UNEXPECTED_NULL);
    CU_ASSERT_EQUAL(ANeuralNetworksMemory_createFromFd(16, PROT_EXEC, fd, 0, &mem), ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, &mem),
                    ANEURALNETWORKS_NO_ERROR);
    mb b = mb_new();
    uint32_t x = f32t(&b, D(2)), c = f32t(&b, D(2)), y = f32t(&b, D(2));
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValueFromMemory(b.m, (int32_t)c, mem, 12, 8),
                    ANEURALNETWORKS_BAD_DATA);
    CU_ASSERT_EQUAL(ANeuralNetworksModel_setOperandValueFromMemory(b.m, (int32_t)c, mem, 8, 8),
                    ANEURALNETWORKS_NO_ERROR);
    op(&b, ANEURALNETWORKS_ADD, IDX(x, c, i32(&b, 0)), y);
    finish(&b, IDX(x), IDX(y));
    CU_ASSERT_FALSE(b.bad);
    ANeuralNetworksCompilation *comp = NULL;
    ANeuralNetworksExecution *e = NULL;
    float out[2] = {0};
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_create(b.m, &comp), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksCompilation_finish(comp), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_create(comp, &e), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setInputFromMemory(e, 0, NULL, mem, 0, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, 8), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_EQUAL(ANeuralNetworksExecution_compute(e), ANEURALNETWORKS_NO_ERROR);
    CU_ASSERT_TRUE(out[0] == 6 && out[1] == 8);
    ANeuralNetworksExecution_free(e);
    ANeuralNetworksCompilation_free(comp);
    ANeuralNetworksModel_free(b.m);
    ANeuralNetworksMemory_free(mem);
    close(fd);
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
           : t == ANEURALNETWORKS_TENSOR_FLOAT16                                                          ? 2
                                                                                                          : 4;
}

static void test_random_models(void)
{
    /* operation codes with their usual input counts */
    static const struct { int32_t code; uint32_t n[3]; } ops[] = {
        {ANEURALNETWORKS_ADD, {3}},          {ANEURALNETWORKS_AVERAGE_POOL_2D, {7, 10, 11}},
        {ANEURALNETWORKS_CONCATENATION, {3}}, {ANEURALNETWORKS_CONV_2D, {7, 10, 13}},
        {ANEURALNETWORKS_DEPTHWISE_CONV_2D, {8, 11, 14}}, {ANEURALNETWORKS_DEQUANTIZE, {1}},
        {ANEURALNETWORKS_FULLY_CONNECTED, {4}}, {ANEURALNETWORKS_L2_POOL_2D, {7, 10}},
        {ANEURALNETWORKS_LOGISTIC, {1}},      {ANEURALNETWORKS_MAX_POOL_2D, {7, 10, 8}},
        {ANEURALNETWORKS_MUL, {3}},           {ANEURALNETWORKS_RELU, {1}},
        {ANEURALNETWORKS_RELU1, {1}},         {ANEURALNETWORKS_RELU6, {1}},
        {ANEURALNETWORKS_RESHAPE, {2}},       {ANEURALNETWORKS_RESIZE_BILINEAR, {3, 4, 6}},
        {ANEURALNETWORKS_SOFTMAX, {2, 3}},    {ANEURALNETWORKS_TANH, {1}},
        {ANEURALNETWORKS_DIV, {3}},           {ANEURALNETWORKS_MEAN, {3}},
        {ANEURALNETWORKS_PAD, {2}},           {ANEURALNETWORKS_SUB, {3}},
        {ANEURALNETWORKS_TRANSPOSE, {2}},     {ANEURALNETWORKS_LOG_SOFTMAX, {3}},
        {ANEURALNETWORKS_PRELU, {2}},         {ANEURALNETWORKS_QUANTIZE, {1}},
        {ANEURALNETWORKS_SLICE, {3}},         {ANEURALNETWORKS_TRANSPOSE_CONV_2D, {9, 11}},
        {ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR, {4, 6}}, {ANEURALNETWORKS_HARD_SWISH, {1}},
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
            int32_t t = i == 0 || i == n_in     ? main_t
                        : roll < 10               ? ANEURALNETWORKS_INT32
                        : roll < 14               ? main_t
                        : roll < 16               ? ANEURALNETWORKS_TENSOR_INT32
                        : roll < 18               ? ANEURALNETWORKS_BOOL
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
    {"quantize_dequantize", test_quantize_dequantize},
    {"conv_quant_per_channel", test_conv_quant_per_channel},
    {"conv_quant_bias", test_conv_quant_bias},
    {"conv_quant_multiplier_precision", test_conv_quant_multiplier_precision},
    {"add_mul_quant", test_add_mul_quant},
    {"logistic_quant", test_logistic_quant},
    {"logistic_tanh_fixed_point", test_logistic_tanh_fixed_point},
    {"softmax_quant", test_softmax_quant},
    {"avgpool_quant_signed", test_avgpool_quant_signed},
    {"depthwise_quant", test_depthwise_quant},
    {"fc_sub_quant", test_fc_sub_quant},
    {"concat_requant", test_concat_requant},
    {"float16", test_float16},
    {"mean_pad_quant", test_mean_pad_quant},
    {"transpose_conv_quant", test_transpose_conv_quant},
    {"partition", test_partition},
    {"relaxed_fp16", test_relaxed_fp16},
    {"level_gates", test_level_gates},
    {"contract_model", test_contract_model},
    {"contract_compile_execute", test_contract_compile_execute},
    {"omitted_input", test_omitted_input},
    {"dynamic_output", test_dynamic_output},
    {"memory", test_memory},
    {"random_models", test_random_models},
    {"client_under_valgrind", test_client_under_valgrind},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi_sim", tests)
