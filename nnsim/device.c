/*
 * device.c - the simulated devices (one per profile) and what each supports: ANeuralNetworks_getDevice*,
 * ANeuralNetworksDevice_*, ANeuralNetworksModel_getSupportedOperationsForDevices.
 *   parity-reference    CPU, level 30: every simulated operation, exact float32 and gemmlowp.
 *   parity-npu-int8     ACCELERATOR, level 30: operations whose tensors are all quantized (quant8 in and out).
 *   parity-gpu-fp16     GPU, level 30: float16 operations, and float32 ones only where the model allows relaxed
 *                       computation (it computes in float16 and cannot honour float32 precision).
 *   parity-old-android  CPU, level 27 (Android 8.1): level-27 operations and operand types, and level 27's rule that a
 *                       quantized CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED needs output_scale > input_scale *
 *                       filter_scale, and a quantized MUL output_scale > input1_scale * input2_scale (its
 *                       multipliers had to be below one).
 * Must not place operations (compile.c) nor run them (exec.c).
 */
#include <stdio.h>
#include <string.h>

#include "nnsim.h"

#define OK ANEURALNETWORKS_NO_ERROR

static const struct ANeuralNetworksDevice devices[NN_N_DEVICES] = {
    {NN_DEV_REFERENCE, "parity-reference", "reference", ANEURALNETWORKS_DEVICE_CPU, 30},
    {NN_DEV_NPU_INT8, "parity-npu-int8", "npu-int8", ANEURALNETWORKS_DEVICE_ACCELERATOR, 30},
    {NN_DEV_GPU_FP16, "parity-gpu-fp16", "gpu-fp16", ANEURALNETWORKS_DEVICE_GPU, 30},
    {NN_DEV_OLD_ANDROID, "parity-old-android", "old-android", ANEURALNETWORKS_DEVICE_CPU, 27},
};

const ANeuralNetworksDevice *nn_device(int id)
{
    return id >= 0 && id < NN_N_DEVICES ? &devices[id] : NULL;
}

const ANeuralNetworksDevice *nn_device_by_profile(const char *profile)
{
    for (int i = 0; i < NN_N_DEVICES; i++)
        if (!strcmp(devices[i].profile, profile) || !strcmp(devices[i].name, profile)) return &devices[i];
    return NULL;
}

static int known_device(const ANeuralNetworksDevice *d)
{
    for (int i = 0; i < NN_N_DEVICES; i++)
        if (d == &devices[i]) return 1;
    return 0;
}

int nn_device_supports(const ANeuralNetworksDevice *d, const ANeuralNetworksModel *m, uint32_t i, char *why,
                       size_t why_len)
{
    const nn_operation *op = &m->ops[i];
    char dummy[8];
    if (!why) why = dummy, why_len = sizeof dummy;
    if (op->level > d->level) {
        snprintf(why, why_len, "needs feature level %d, the device has %d", op->level, (int)d->level);
        return 0;
    }
    switch (d->id) {
    case NN_DEV_NPU_INT8:
        if (op->kind != NN_KIND_QUANT) {
            snprintf(why, why_len, "not a quantized operation");
            return 0;
        }
        return 1;
    case NN_DEV_GPU_FP16:
        if (op->kind == NN_KIND_FLOAT16 || (op->kind == NN_KIND_FLOAT32 && m->relaxed)) return 1;
        snprintf(why, why_len,
                 op->kind == NN_KIND_FLOAT32 ? "float32 without relaxed computation" : "not a float operation");
        return 0;
    case NN_DEV_OLD_ANDROID:
        if ((op->type == ANEURALNETWORKS_CONV_2D || op->type == ANEURALNETWORKS_DEPTHWISE_CONV_2D ||
             op->type == ANEURALNETWORKS_FULLY_CONNECTED) &&
            op->kind == NN_KIND_QUANT) {
            const nn_tensor *x = &m->operands[op->in[0]].t, *w = &m->operands[op->in[1]].t,
                            *y = &m->operands[op->out[0]].t;
            double prod = (double)x->scale * w->scale;
            if (!((double)y->scale > prod)) {
                snprintf(why, why_len, "level 27 needs output_scale %g > input_scale * filter_scale %g",
                         (double)y->scale, prod);
                return 0;
            }
        }
        if (op->type == ANEURALNETWORKS_MUL && op->kind == NN_KIND_QUANT) { /* QuantizeMultiplierSmallerThanOne */
            const nn_tensor *a = &m->operands[op->in[0]].t, *b = &m->operands[op->in[1]].t,
                            *y = &m->operands[op->out[0]].t;
            double prod = (double)a->scale * b->scale;
            if (!((double)y->scale > prod)) {
                snprintf(why, why_len, "level 27 needs MUL output_scale %g > input1_scale * input2_scale %g",
                         (double)y->scale, prod);
                return 0;
            }
        }
        return 1;
    default: return 1;
    }
}

int ANeuralNetworks_getDeviceCount(uint32_t *n)
{
    if (!n) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "numDevices is NULL");
    *n = NN_N_DEVICES;
    return OK;
}

int ANeuralNetworks_getDevice(uint32_t index, ANeuralNetworksDevice **device)
{
    if (!device) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "device is NULL");
    if (index >= NN_N_DEVICES)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "device index %u out of range [0, %d)", index, NN_N_DEVICES);
    *device = (ANeuralNetworksDevice *)&devices[index];
    return OK;
}

static int device_arg(const ANeuralNetworksDevice *d, const void *out, const char *func)
{
    if (!d || !out) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "device or result pointer is NULL");
    if (!known_device(d)) return nn_err(ANEURALNETWORKS_BAD_DATA, func, "not a device of this library");
    return OK;
}

int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *d, const char **name)
{
    int rc = device_arg(d, name, __func__);
    if (!rc) *name = d->name;
    return rc;
}

int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *d, int32_t *type)
{
    int rc = device_arg(d, type, __func__);
    if (!rc) *type = d->type;
    return rc;
}

int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice *d, const char **version)
{
    int rc = device_arg(d, version, __func__);
    if (!rc) *version = "parity-nnapi-sim-1";
    return rc;
}

int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *d, int64_t *level)
{
    int rc = device_arg(d, level, __func__);
    if (!rc) *level = d->level;
    return rc;
}

int ANeuralNetworksDevice_wait(const ANeuralNetworksDevice *d)
{
    if (!d) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "device is NULL");
    return known_device(d) ? OK : nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "not a device of this library");
}

int ANeuralNetworksModel_getSupportedOperationsForDevices(const ANeuralNetworksModel *m,
                                                          const ANeuralNetworksDevice *const *devs, uint32_t n,
                                                          bool *supported)
{
    if (!m || !devs || !supported)
        return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "model, devices or supportedOps is NULL");
    if (!m->finished) return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the model is not finished");
    if (!n) return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "numDevices is 0");
    for (uint32_t k = 0; k < n; k++) {
        if (!devs[k]) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "devices[%u] is NULL", k);
        if (!known_device(devs[k])) return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "devices[%u] is unknown", k);
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        supported[i] = false;
        for (uint32_t k = 0; k < n && !supported[i]; k++) supported[i] = nn_device_supports(devs[k], m, i, NULL, 0);
    }
    return OK;
}
