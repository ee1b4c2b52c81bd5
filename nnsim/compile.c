/*
 * compile.c - ANeuralNetworksCompilation_*: the devices of a compilation and the placement of each operation, as
 * Android partitions a model.
 *   createForDevices: each operation goes to the first listed device that supports it; an operation no listed
 *     device supports fails finish with BAD_DATA (Android adds no CPU fallback to an explicit device list).
 *   create: the device of PARITY_NNAPI_PROFILE (default reference) first, then the runtime's CPU fallback
 *     ("cpu-fallback", reference semantics at level 30; under old-android the fallback is the old runtime's own CPU
 *     path, with level 27's rules, so a model old Android cannot run still fails).
 * PARITY_NNAPI_LOG_PARTITION=1 prints the placement at finish; parity_nnapi_sim_partition() returns it.
 * Must not execute (exec.c) or decide what a device supports (device.c).
 */
#include <stdlib.h>
#include <string.h>

#include "nnsim.h"
#include "parity_nnapi_sim.h"

#define OK       ANEURALNETWORKS_NO_ERROR
#define FALLBACK (-1)

static int new_compilation(ANeuralNetworksModel *m, ANeuralNetworksCompilation **out, const char *func)
{
    if (!m || !out) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "model or compilation is NULL");
    *out = NULL;
    if (!m->finished) return nn_err(ANEURALNETWORKS_BAD_STATE, func, "the model is not finished");
    ANeuralNetworksCompilation *c = calloc(1, sizeof *c);
    if (!c) return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, func, "out of memory");
    c->model = m;
    c->preference = ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER;
    c->priority = ANEURALNETWORKS_PRIORITY_DEFAULT;
    *out = c;
    return OK;
}

int ANeuralNetworksCompilation_create(ANeuralNetworksModel *m, ANeuralNetworksCompilation **out)
{
    const char *profile = getenv("PARITY_NNAPI_PROFILE");
    const ANeuralNetworksDevice *d = nn_device(NN_DEV_REFERENCE);
    if (profile && *profile && !(d = nn_device_by_profile(profile)))
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__,
                      "PARITY_NNAPI_PROFILE=%s is none of reference, npu-int8, gpu-fp16, old-android", profile);
    int rc = new_compilation(m, out, __func__);
    if (rc) return rc;
    (*out)->devices[0] = d;
    (*out)->n_devices = 1;
    (*out)->fallback_level = (int)d->level < NN_LEVEL_MAX ? (int)d->level : NN_LEVEL_MAX;
    return OK;
}

int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *m, const ANeuralNetworksDevice *const *devs,
                                                uint32_t n, ANeuralNetworksCompilation **out)
{
    if (!devs) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "devices is NULL");
    if (!n || n > NN_N_DEVICES)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "numDevices %u (this library has %d)", n, NN_N_DEVICES);
    for (uint32_t k = 0; k < n; k++) {
        if (!devs[k]) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "devices[%u] is NULL", k);
        if (devs[k] != nn_device(devs[k]->id < 0 ? 0 : devs[k]->id))
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "devices[%u] is not a device of this library", k);
        for (uint32_t j = 0; j < k; j++)
            if (devs[j] == devs[k]) return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "devices[%u] is listed twice", k);
    }
    int rc = new_compilation(m, out, __func__);
    if (rc) return rc;
    for (uint32_t k = 0; k < n; k++) (*out)->devices[k] = devs[k];
    (*out)->n_devices = n;
    (*out)->for_devices = 1;
    return OK;
}

void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *c)
{
    if (!c) return;
    free(c->placement);
    free(c->relaxed_op);
    free(c->android27_op);
    free(c);
}

static int editable(const ANeuralNetworksCompilation *c, const char *func)
{
    if (!c) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, func, "compilation is NULL");
    if (c->finished || c->failed) return nn_err(ANEURALNETWORKS_BAD_STATE, func, "the compilation is already finished");
    return OK;
}

int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *c, int32_t preference)
{
    int rc = editable(c, __func__);
    if (rc) return rc;
    if (preference < ANEURALNETWORKS_PREFER_LOW_POWER || preference > ANEURALNETWORKS_PREFER_SUSTAINED_SPEED)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "unknown preference %d", (int)preference);
    c->preference = preference;
    return OK;
}

/* Accepted and ignored: the simulator compiles nothing worth caching. */
int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation *c, const char *dir, const uint8_t *token)
{
    int rc = editable(c, __func__);
    if (rc) return rc;
    if (!dir || !token) return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "cacheDir or token is NULL");
    return OK;
}

int ANeuralNetworksCompilation_setPriority(ANeuralNetworksCompilation *c, int priority)
{
    int rc = editable(c, __func__);
    if (rc) return rc;
    if (priority != ANEURALNETWORKS_PRIORITY_LOW && priority != ANEURALNETWORKS_PRIORITY_MEDIUM &&
        priority != ANEURALNETWORKS_PRIORITY_HIGH)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "unknown priority %d", priority);
    c->priority = priority;
    return OK;
}

/* Android accepts a timeout only on a compilation made by createForDevices with exactly one device. The simulator
 * never runs out of time, so the value is kept for nothing else. */
int ANeuralNetworksCompilation_setTimeout(ANeuralNetworksCompilation *c, uint64_t duration)
{
    int rc = editable(c, __func__);
    if (rc) return rc;
    if (!c->for_devices || c->n_devices != 1)
        return nn_err(ANEURALNETWORKS_BAD_DATA, __func__,
                      "a timeout needs a compilation made by createForDevices with one device");
    (void)duration;
    return OK;
}

static const char *placement_name(int where)
{
    return where == FALLBACK ? "cpu-fallback" : nn_device(where)->name;
}

int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *c)
{
    int rc = editable(c, __func__);
    if (rc) return rc;
    const ANeuralNetworksModel *m = c->model;
    c->placement = malloc((m->n_ops ? m->n_ops : 1) * sizeof *c->placement);
    c->relaxed_op = calloc(m->n_ops ? m->n_ops : 1, sizeof *c->relaxed_op);
    c->android27_op = calloc(m->n_ops ? m->n_ops : 1, sizeof *c->android27_op);
    if (!c->placement || !c->relaxed_op || !c->android27_op) {
        c->failed = 1;
        return nn_err(ANEURALNETWORKS_OUT_OF_MEMORY, __func__, "out of memory");
    }
    /* The fallback of create: reference semantics, or under old-android the old runtime's own rules. */
    const ANeuralNetworksDevice *fallback =
        c->devices[0]->id == NN_DEV_OLD_ANDROID ? c->devices[0] : nn_device(NN_DEV_REFERENCE);
    for (uint32_t i = 0; i < m->n_ops; i++) {
        char why[160] = "";
        int where = -2;
        for (uint32_t k = 0; k < c->n_devices && where == -2; k++)
            if (nn_device_supports(c->devices[k], m, i, why, sizeof why)) where = c->devices[k]->id;
        if (where == -2 && !c->for_devices) {
            char why2[160];
            if (nn_device_supports(fallback, m, i, why2, sizeof why2))
                where = FALLBACK;
            else
                memcpy(why, why2, sizeof why);
        }
        if (where == -2) {
            c->failed = 1;
            return nn_err(ANEURALNETWORKS_BAD_DATA, __func__, "operation %u (%s) runs on none of the devices: %s", i,
                          nn_op_name(m->ops[i].type), why);
        }
        c->placement[i] = where;
        c->relaxed_op[i] = where == NN_DEV_GPU_FP16 && m->ops[i].kind == NN_KIND_FLOAT32;
        c->android27_op[i] = where == NN_DEV_OLD_ANDROID || (where == FALLBACK && fallback->id == NN_DEV_OLD_ANDROID);
        nn_info("PARITY_NNAPI_LOG_PARTITION", "partition: operation %u (%s) on %s%s", i, nn_op_name(m->ops[i].type),
                placement_name(where), c->relaxed_op[i] ? " (relaxed float16)" : "");
    }
    c->finished = 1;
    return OK;
}

int parity_nnapi_sim_partition(const ANeuralNetworksCompilation *c, const char **names, uint32_t capacity,
                               uint32_t *count)
{
    if (!c || !count || (capacity && !names))
        return nn_err(ANEURALNETWORKS_UNEXPECTED_NULL, __func__, "compilation, names or count is NULL");
    if (!c->finished) return nn_err(ANEURALNETWORKS_BAD_STATE, __func__, "the compilation is not finished");
    *count = c->model->n_ops;
    for (uint32_t i = 0; i < capacity && i < c->model->n_ops; i++) names[i] = placement_name(c->placement[i]);
    return OK;
}
