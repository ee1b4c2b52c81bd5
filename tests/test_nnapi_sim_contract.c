/*
 * test_nnapi_sim_contract.c - the simulated libneuralnetworks.so (nnsim/), linked directly: the API contract, code
 * by code (each misuse returns its documented code and names the function), omitted inputs, dynamic output shapes
 * and OUTPUT_INSUFFICIENT_SIZE, memory objects. The rest of the API is test_nnapi_sim.c's.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "nnapi_sim_helpers.h"

/* ---- the API contract ---- */

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
    CU_ASSERT_EQUAL(ANeuralNetworksModel_getSupportedOperationsForDevices(b.m, &old, 1, &sup),
                    ANEURALNETWORKS_NO_ERROR);
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

static const CU_TestInfo tests[] = {
    {"contract_model", test_contract_model},
    {"contract_compile_execute", test_contract_compile_execute},
    {"omitted_input", test_omitted_input},
    {"dynamic_output", test_dynamic_output},
    {"memory", test_memory},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("nnapi_sim_contract", tests)
