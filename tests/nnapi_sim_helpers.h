/*
 * nnapi_sim_helpers.h - what the test programs of the simulated libneuralnetworks.so share (test_nnapi_sim.c,
 * test_nnapi_sim_contract.c, test_nnapi_sim_ops.c, test_nnapi_sim_quant.c, test_nnapi_sim_ops2.c): a quiet library
 * log, a portable seeded PRNG, a small model builder over the NNAPI calls (every failing call marks the builder bad,
 * and the tests assert it is not), one-shot compile-and-run helpers, float comparison, and the quantized conv model
 * the programs use. Included once per program; everything is static inline.
 */
#ifndef NNAPI_SIM_HELPERS_H
#define NNAPI_SIM_HELPERS_H

#include <android/NeuralNetworks.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_nnapi_sim.h"
#include "tmain.h"

/* Refusals are expected by the dozen here: keep stderr quiet (the messages are read through
 * parity_nnapi_sim_last_error). */
__attribute__((constructor)) static void nnapi_sim_quiet(void)
{
    setenv("PARITY_NNAPI_LOG", "0", 1);
    unsetenv("PARITY_NNAPI_PROFILE");
}

/* A portable seeded PRNG for the randomized tests. */
static uint32_t rnd_state = 12345u;
static inline uint32_t rnd(uint32_t n)
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

static inline mb mb_new(void)
{
    mb b = {0};
    if (ANeuralNetworksModel_create(&b.m)) b.bad = 1;
    return b;
}

static inline uint32_t opnd(mb *b, int32_t type, const uint32_t *dims, uint32_t rank, float scale, int32_t zp)
{
    ANeuralNetworksOperandType t = {type, rank, rank ? dims : NULL, scale, zp};
    if (ANeuralNetworksModel_addOperand(b->m, &t)) b->bad = 1;
    return b->n++;
}

static inline uint32_t cst(mb *b, int32_t type, const uint32_t *dims, uint32_t rank, float scale, int32_t zp,
                           const void *data, size_t bytes)
{
    uint32_t i = opnd(b, type, dims, rank, scale, zp);
    if (ANeuralNetworksModel_setOperandValue(b->m, (int32_t)i, data, bytes)) b->bad = 1;
    return i;
}

static inline uint32_t i32(mb *b, int32_t v)
{
    return cst(b, ANEURALNETWORKS_INT32, NULL, 0, 0, 0, &v, 4);
}

static inline uint32_t f32s(mb *b, float v)
{
    return cst(b, ANEURALNETWORKS_FLOAT32, NULL, 0, 0, 0, &v, 4);
}

static inline uint32_t flag(mb *b, int v)
{
    uint8_t u = (uint8_t)v;
    return cst(b, ANEURALNETWORKS_BOOL, NULL, 0, 0, 0, &u, 1);
}

static inline uint32_t f32t(mb *b, const uint32_t *dims, uint32_t rank)
{
    return opnd(b, ANEURALNETWORKS_TENSOR_FLOAT32, dims, rank, 0, 0);
}

static inline uint32_t f32c(mb *b, const uint32_t *dims, uint32_t rank, const float *v)
{
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= dims[i];
    return cst(b, ANEURALNETWORKS_TENSOR_FLOAT32, dims, rank, 0, 0, v, n * 4);
}

static inline uint32_t i32c(mb *b, const uint32_t *dims, uint32_t rank, const int32_t *v)
{
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= dims[i];
    return cst(b, ANEURALNETWORKS_TENSOR_INT32, dims, rank, 0, 0, v, n * 4);
}

static inline void op(mb *b, int32_t code, uint32_t n_in, const uint32_t *ins, uint32_t out)
{
    if (ANeuralNetworksModel_addOperation(b->m, code, n_in, ins, 1, &out)) b->bad = 1;
}

static inline int finish(mb *b, uint32_t n_in, const uint32_t *ins, uint32_t n_out, const uint32_t *outs)
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

static inline const ANeuralNetworksDevice *dev(const char *name)
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
static inline int run_on(ANeuralNetworksModel *m, const ANeuralNetworksDevice *const *devs, uint32_t ndev,
                         uint32_t n_in, const io *in, uint32_t n_out, io *out, const char **names, uint32_t n_names)
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

static inline int run1(ANeuralNetworksModel *m, const void *x, size_t xb, void *y, size_t yb)
{
    io in = {x, xb}, out = {y, yb};
    return run_on(m, NULL, 0, x ? 1 : 0, &in, 1, &out, NULL, 0);
}

static inline int close_all(const float *got, const float *want, size_t n, double tol)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol)) {
            printf("  element %zu: got %.9g, expected %.9g\n", i, (double)got[i], (double)want[i]);
            ok = 0;
        }
    return ok;
}

/* The last refusal names this function (or contains this text). */
static inline int said(const char *func)
{
    return strstr(parity_nnapi_sim_last_error(), func) != NULL;
}

/* A quantized CONV_2D with a per-tensor filter and an int32 bias of scale input_scale * filter_scale:
 * x [1,1,1,2] scale 0.5 zp 128 stored {130,125} = (2, -3); filter [2,1,1,2] scale 0.3 zp 120: channel 0 {123,121}
 * = (3, 1), channel 1 {110,127} = (-10, 7); bias {10, -7}. acc0 = 6 - 3 + 10 = 13, acc1 = -20 - 21 - 7 = -48.
 * Output scale 0.7 zp 100: 13 * 0.15 / 0.7 = 2.786 -> 3 -> 103; -48 * 0.15 / 0.7 = -10.29 -> -10 -> 90 (no tie
 * near either, so every rounding rule agrees). The model takes the bias scale the client computes, 0.5f * 0.3f. */
static inline ANeuralNetworksModel *quant_conv_model(float out_scale)
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

#endif
