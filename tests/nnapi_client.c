/*
 * nnapi_client.c - an NNAPI client that knows nothing of parity: it dlopens "libneuralnetworks.so" (found through
 * LD_LIBRARY_PATH, as on a device through the linker's path), looks every function up by its NNAPI name, and runs a
 * quantized CONV_2D with an int32 bias, then a float ADD with a fused RELU, each through startCompute and an event,
 * as an unmodified program would. It checks the outputs against values worked out by hand below, prints "nnapi_client: ok" and exits 0; any failure prints
 * one line and exits 1. tests/test_nnapi_sim.c runs it under valgrind (no leak, no error).
 */
#include <android/NeuralNetworks.h>
#include <dlfcn.h>
#include <stdio.h>

#define SYM(name) static __typeof__(&name) p_##name;
#define LOOK(name)                                                                                                   \
    if (!(p_##name = (__typeof__(&name))dlsym(lib, #name))) {                                                        \
        printf("nnapi_client: %s is not exported\n", #name);                                                        \
        goto out;                                                                                                    \
    }
SYM(ANeuralNetworksModel_create)
SYM(ANeuralNetworksModel_free)
SYM(ANeuralNetworksModel_addOperand)
SYM(ANeuralNetworksModel_setOperandValue)
SYM(ANeuralNetworksModel_addOperation)
SYM(ANeuralNetworksModel_identifyInputsAndOutputs)
SYM(ANeuralNetworksModel_finish)
SYM(ANeuralNetworksCompilation_create)
SYM(ANeuralNetworksCompilation_setPreference)
SYM(ANeuralNetworksCompilation_finish)
SYM(ANeuralNetworksCompilation_free)
SYM(ANeuralNetworksExecution_create)
SYM(ANeuralNetworksExecution_setInput)
SYM(ANeuralNetworksExecution_setOutput)
SYM(ANeuralNetworksExecution_startCompute)
SYM(ANeuralNetworksExecution_getOutputOperandDimensions)
SYM(ANeuralNetworksExecution_free)
SYM(ANeuralNetworksEvent_wait)
SYM(ANeuralNetworksEvent_free)

#define CHECK(call)                                                                                                  \
    if ((rc = (call)) != ANEURALNETWORKS_NO_ERROR) {                                                                 \
        printf("nnapi_client: %s returned %d\n", #call, rc);                                                        \
        goto out;                                                                                                    \
    }

int main(void)
{
    int rc = 1, ok = 0;
    void *lib = dlopen("libneuralnetworks.so", RTLD_NOW | RTLD_LOCAL);
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksCompilation *comp = NULL;
    ANeuralNetworksExecution *exec = NULL;
    ANeuralNetworksEvent *event = NULL;
    if (!lib) {
        printf("nnapi_client: dlopen(libneuralnetworks.so): %s\n", dlerror());
        return 1;
    }
    LOOK(ANeuralNetworksModel_create) LOOK(ANeuralNetworksModel_free) LOOK(ANeuralNetworksModel_addOperand)
    LOOK(ANeuralNetworksModel_setOperandValue) LOOK(ANeuralNetworksModel_addOperation)
    LOOK(ANeuralNetworksModel_identifyInputsAndOutputs) LOOK(ANeuralNetworksModel_finish)
    LOOK(ANeuralNetworksCompilation_create) LOOK(ANeuralNetworksCompilation_setPreference)
    LOOK(ANeuralNetworksCompilation_finish) LOOK(ANeuralNetworksCompilation_free) LOOK(ANeuralNetworksExecution_create)
    LOOK(ANeuralNetworksExecution_setInput) LOOK(ANeuralNetworksExecution_setOutput)
    LOOK(ANeuralNetworksExecution_startCompute) LOOK(ANeuralNetworksExecution_getOutputOperandDimensions)
    LOOK(ANeuralNetworksExecution_free) LOOK(ANeuralNetworksEvent_wait) LOOK(ANeuralNetworksEvent_free)

    /* x [1,2,2,1] scale 0.5 zp 10: stored 12 14 16 18 (real 1 2 3 4); w [1,2,2,1] scale 0.25 zp 128: stored 132 136
     * 124 128 (real 1 2 -1 0); bias 8 at scale 0.125 (real 1). VALID, stride 1: acc = 2*4 + 4*8 + 6*(-4) + 8*0 + 8
     * = 24, real 24 * 0.125 = 3; output scale 0.25 zp 5: 5 + 3 / 0.25 = 17 (the ratio 0.5 is exact in gemmlowp). */
    uint32_t d4[4] = {1, 2, 2, 1}, d1[1] = {1}, dout[4] = {1, 1, 1, 1};
    ANeuralNetworksOperandType tx = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, d4, 0.5f, 10};
    ANeuralNetworksOperandType tw = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, d4, 0.25f, 128};
    ANeuralNetworksOperandType tb = {ANEURALNETWORKS_TENSOR_INT32, 1, d1, 0.125f, 0};
    ANeuralNetworksOperandType ti = {ANEURALNETWORKS_INT32, 0, NULL, 0, 0};
    ANeuralNetworksOperandType ty = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, dout, 0.25f, 5};
    const uint8_t w[4] = {132, 136, 124, 128}, x[4] = {12, 14, 16, 18};
    const int32_t bias = 8, pad = ANEURALNETWORKS_PADDING_VALID, one = 1, fuse = ANEURALNETWORKS_FUSED_NONE;
    CHECK(p_ANeuralNetworksModel_create(&model));
    CHECK(p_ANeuralNetworksModel_addOperand(model, &tx)); /* 0 */
    CHECK(p_ANeuralNetworksModel_addOperand(model, &tw)); /* 1 */
    CHECK(p_ANeuralNetworksModel_addOperand(model, &tb)); /* 2 */
    for (int i = 0; i < 4; i++) CHECK(p_ANeuralNetworksModel_addOperand(model, &ti)); /* 3..6 */
    CHECK(p_ANeuralNetworksModel_addOperand(model, &ty)); /* 7 */
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 1, w, sizeof w));
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 2, &bias, sizeof bias));
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 3, &pad, sizeof pad));
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 4, &one, sizeof one));
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 5, &one, sizeof one));
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 6, &fuse, sizeof fuse));
    uint32_t ins[7] = {0, 1, 2, 3, 4, 5, 6}, outs[1] = {7}, in0[1] = {0};
    CHECK(p_ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_CONV_2D, 7, ins, 1, outs));
    CHECK(p_ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, in0, 1, outs));
    CHECK(p_ANeuralNetworksModel_finish(model));
    CHECK(p_ANeuralNetworksCompilation_create(model, &comp));
    CHECK(p_ANeuralNetworksCompilation_setPreference(comp, ANEURALNETWORKS_PREFER_SUSTAINED_SPEED));
    CHECK(p_ANeuralNetworksCompilation_finish(comp));
    CHECK(p_ANeuralNetworksExecution_create(comp, &exec));
    uint8_t y = 0;
    uint32_t dims[4] = {0};
    CHECK(p_ANeuralNetworksExecution_setInput(exec, 0, NULL, x, sizeof x));
    CHECK(p_ANeuralNetworksExecution_setOutput(exec, 0, NULL, &y, sizeof y));
    CHECK(p_ANeuralNetworksExecution_startCompute(exec, &event));
    CHECK(p_ANeuralNetworksEvent_wait(event));
    CHECK(p_ANeuralNetworksExecution_getOutputOperandDimensions(exec, 0, dims));
    if (y != 17 || dims[0] != 1 || dims[1] != 1 || dims[2] != 1 || dims[3] != 1) {
        printf("nnapi_client: output %u with dimensions %u %u %u %u, expected 17 with 1 1 1 1\n", y, dims[0], dims[1],
               dims[2], dims[3]);
        goto out;
    }
    p_ANeuralNetworksEvent_free(event);
    p_ANeuralNetworksExecution_free(exec);
    p_ANeuralNetworksCompilation_free(comp);
    p_ANeuralNetworksModel_free(model);
    event = NULL, exec = NULL, comp = NULL, model = NULL;

    /* A float model: a [1,2,2,1] input plus a constant of the same shape, ADD with RELU fused: 1.5 + 0.25 = 1.75,
     * -2 + 1 = -1 -> 0, 3 - 5 = -2 -> 0, -4 + 5 = 1; every value exact in float32. */
    ANeuralNetworksOperandType tf = {ANEURALNETWORKS_TENSOR_FLOAT32, 4, d4, 0.0f, 0};
    const float a[4] = {1.5f, -2.0f, 3.0f, -4.0f}, b[4] = {0.25f, 1.0f, -5.0f, 5.0f}, want[4] = {1.75f, 0, 0, 1.0f};
    const int32_t relu = ANEURALNETWORKS_FUSED_RELU;
    float z[4] = {-9, -9, -9, -9};
    CHECK(p_ANeuralNetworksModel_create(&model));
    CHECK(p_ANeuralNetworksModel_addOperand(model, &tf)); /* 0: input */
    CHECK(p_ANeuralNetworksModel_addOperand(model, &tf)); /* 1: constant */
    CHECK(p_ANeuralNetworksModel_addOperand(model, &ti)); /* 2: fuse code */
    CHECK(p_ANeuralNetworksModel_addOperand(model, &tf)); /* 3: output */
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 1, b, sizeof b));
    CHECK(p_ANeuralNetworksModel_setOperandValue(model, 2, &relu, sizeof relu));
    uint32_t fins[3] = {0, 1, 2}, fout[1] = {3};
    CHECK(p_ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_ADD, 3, fins, 1, fout));
    CHECK(p_ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, in0, 1, fout));
    CHECK(p_ANeuralNetworksModel_finish(model));
    CHECK(p_ANeuralNetworksCompilation_create(model, &comp));
    CHECK(p_ANeuralNetworksCompilation_finish(comp));
    CHECK(p_ANeuralNetworksExecution_create(comp, &exec));
    CHECK(p_ANeuralNetworksExecution_setInput(exec, 0, NULL, a, sizeof a));
    CHECK(p_ANeuralNetworksExecution_setOutput(exec, 0, NULL, z, sizeof z));
    CHECK(p_ANeuralNetworksExecution_startCompute(exec, &event));
    CHECK(p_ANeuralNetworksEvent_wait(event));
    for (int i = 0; i < 4; i++)
        if (z[i] != want[i]) {
            printf("nnapi_client: float ADD element %d is %g, expected %g\n", i, (double)z[i], (double)want[i]);
            goto out;
        }
    ok = 1;
    printf("nnapi_client: ok\n");
out:
    if (p_ANeuralNetworksEvent_free) p_ANeuralNetworksEvent_free(event);
    if (p_ANeuralNetworksExecution_free) p_ANeuralNetworksExecution_free(exec);
    if (p_ANeuralNetworksCompilation_free) p_ANeuralNetworksCompilation_free(comp);
    if (p_ANeuralNetworksModel_free) p_ANeuralNetworksModel_free(model);
    dlclose(lib);
    return ok ? 0 : 1;
}
