/*
 * ops.c - the helpers every kernel of the simulated NNAPI driver shares: element types, scalar parameters,
 * quantization, fused activations, implicit padding, float16 conversion.
 * Must not hold an operation's semantics (ops_*.c do) nor name the kernels (op_table.c does), so that the kernels
 * call down into it and nothing here calls back up; nor know about devices or executions.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnsim.h"

size_t nn_type_size(int32_t type)
{
    switch (type) {
    case ANEURALNETWORKS_FLOAT32:
    case ANEURALNETWORKS_INT32:
    case ANEURALNETWORKS_UINT32:
    case ANEURALNETWORKS_TENSOR_FLOAT32:
    case ANEURALNETWORKS_TENSOR_INT32: return 4;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
    case ANEURALNETWORKS_BOOL:
    case ANEURALNETWORKS_TENSOR_BOOL8:
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED: return 1;
    case ANEURALNETWORKS_TENSOR_QUANT16_SYMM:
    case ANEURALNETWORKS_TENSOR_FLOAT16:
    case ANEURALNETWORKS_FLOAT16:
    case ANEURALNETWORKS_TENSOR_QUANT16_ASYMM: return 2;
    default: return 0;
    }
}

int nn_type_is_scalar(int32_t type)
{
    return type == ANEURALNETWORKS_FLOAT32 || type == ANEURALNETWORKS_INT32 || type == ANEURALNETWORKS_UINT32 ||
           type == ANEURALNETWORKS_BOOL || type == ANEURALNETWORKS_FLOAT16;
}

int nn_type_is_quant8(int32_t type)
{
    return type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ||
           type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM || type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL;
}

int nn_type_is_float(int32_t type)
{
    return type == ANEURALNETWORKS_FLOAT32 || type == ANEURALNETWORKS_FLOAT16 ||
           type == ANEURALNETWORKS_TENSOR_FLOAT32 || type == ANEURALNETWORKS_TENSOR_FLOAT16;
}

const char *nn_type_name(int32_t type)
{
    static const char *const names[] = {"FLOAT32",
                                        "INT32",
                                        "UINT32",
                                        "TENSOR_FLOAT32",
                                        "TENSOR_INT32",
                                        "TENSOR_QUANT8_ASYMM",
                                        "BOOL",
                                        "TENSOR_QUANT16_SYMM",
                                        "TENSOR_FLOAT16",
                                        "TENSOR_BOOL8",
                                        "FLOAT16",
                                        "TENSOR_QUANT8_SYMM_PER_CHANNEL",
                                        "TENSOR_QUANT16_ASYMM",
                                        "TENSOR_QUANT8_SYMM",
                                        "TENSOR_QUANT8_ASYMM_SIGNED",
                                        "MODEL"};
    return type >= 0 && type < (int32_t)(sizeof names / sizeof names[0]) ? names[type] : "(unknown type)";
}

size_t nn_numel(const nn_tensor *t)
{
    size_t n = 1;
    for (uint32_t i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

int nn_shape_known(const nn_tensor *t)
{
    if (nn_type_is_scalar(t->type)) return 1;
    if (t->rank == 0) return 0;
    for (uint32_t i = 0; i < t->rank; i++)
        if (!t->dims[i]) return 0;
    return 1;
}

/* float -> half, round to nearest even, with overflow to infinity and gradual underflow. */
uint16_t nn_f32_to_f16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xffu, man = u & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++; /* a carry into the exponent is right */
    return (uint16_t)(sign | half);
}

float nn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    } else {
        u = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int nn_fail(nn_ctx *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    return code;
}

int nn_is_type(const nn_ctx *c, uint32_t i, int32_t type)
{
    return i < c->n_in && c->in[i]->type == type;
}

int nn_param_i32(const nn_ctx *c, uint32_t i, int32_t *v)
{
    const nn_tensor *t = c->in[i];
    if (!t->data) return 0;
    memcpy(v, t->data, 4);
    return 1;
}

int nn_param_f32(const nn_ctx *c, uint32_t i, float *v)
{
    const nn_tensor *t = c->in[i];
    if (!t->data) return 0;
    if (t->type == ANEURALNETWORKS_FLOAT16) {
        uint16_t h;
        memcpy(&h, t->data, 2);
        *v = nn_f16_to_f32(h);
    } else {
        memcpy(v, t->data, 4);
    }
    return 1;
}

int nn_param_bool(const nn_ctx *c, uint32_t i, int *v)
{
    const nn_tensor *t = c->in[i];
    if (!t->data) return 0;
    *v = *(const uint8_t *)t->data != 0;
    return 1;
}

int nn_quant_zp_min(int32_t type)
{
    return type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0 : -128;
}

int nn_quant_zp_max(int32_t type)
{
    return type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 255 : 127;
}

int32_t nn_quantize(const nn_tensor *t, double x)
{
    double q = t->zp + round(x / t->scale);
    double lo = nn_quant_zp_min(t->type), hi = nn_quant_zp_max(t->type);
    if (!(q >= lo)) q = lo; /* NaN to the low end */
    if (q > hi) q = hi;
    return (int32_t)q;
}

void nn_fuse_range(int32_t fuse, float *lo, float *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (fuse == ANEURALNETWORKS_FUSED_RELU) *lo = 0;
    if (fuse == ANEURALNETWORKS_FUSED_RELU1) *lo = -1, *hi = 1;
    if (fuse == ANEURALNETWORKS_FUSED_RELU6) *lo = 0, *hi = 6;
}

/* TFLite's CalculateActivationRangeUint8: the real bounds quantized with round half away from zero, intersected
 * with the type's range. */
void nn_fuse_qrange(int32_t fuse, const nn_tensor *out, int32_t *qmin, int32_t *qmax)
{
    float lo, hi;
    nn_fuse_range(fuse, &lo, &hi);
    *qmin = nn_quant_zp_min(out->type);
    *qmax = nn_quant_zp_max(out->type);
    if (isfinite(lo)) {
        int32_t q = out->zp + (int32_t)round((double)lo / out->scale);
        if (q > *qmin) *qmin = q;
    }
    if (isfinite(hi)) {
        int32_t q = out->zp + (int32_t)round((double)hi / out->scale);
        if (q < *qmax) *qmax = q;
    }
}

int nn_check_fuse(nn_ctx *c, uint32_t i)
{
    NN_CHECK(c, nn_is_type(c, i, ANEURALNETWORKS_INT32), "input %u (fused activation) must be INT32", i);
    int32_t f;
    if (nn_param_i32(c, i, &f))
        NN_CHECK(c, f >= 0 && f <= 3, "fused activation %d is not NONE, RELU, RELU1 or RELU6", (int)f);
    return ANEURALNETWORKS_NO_ERROR;
}

void nn_implicit_pad(int32_t scheme, uint32_t in, uint32_t stride, uint32_t f, uint32_t dil, int32_t *before,
                     int32_t *after)
{
    *before = *after = 0;
    if (scheme != ANEURALNETWORKS_PADDING_SAME) return;
    int64_t out = ((int64_t)in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + ((int64_t)f - 1) * dil + 1 - in;
    if (total < 0) total = 0;
    *before = (int32_t)(total / 2);
    *after = (int32_t)(total - total / 2);
}
