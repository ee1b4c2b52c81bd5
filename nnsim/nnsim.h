/*
 * nnsim.h - the simulated NNAPI library's internal types and the helpers its files share (model, operation table,
 * devices, compilation, execution, logging). Nothing here is exported: the library exports only the NNAPI symbols
 * and parity_nnapi_sim.h's (sim.map).
 *
 * Layout of a run: every operand of the model has a run-time nn_tensor (type, shape, quantization, data). Constants
 * point at the model's copy, model inputs and outputs at the caller's buffers, temporaries at buffers the execution
 * allocates once their producer knows their shape. Kernels read and write nn_tensors only; they must not reach the
 * model or the execution except through nn_ctx.
 */
#ifndef NNSIM_H
#define NNSIM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <android/NeuralNetworks.h>

#define NN_MAX_RANK  6
#define NN_MAX_IO    64 /* operands of one operation (CONCATENATION's inputs) */
#define NN_LEVEL_MAX 30 /* the highest feature level simulated */

/* ---- logging (log.c) ---- */
/* One line on stderr, "nnapi-sim: FUNC: reason", unless PARITY_NNAPI_LOG=0; kept as the last error
 * (parity_nnapi_sim.h). Returns code, so that `return nn_err(code, __func__, ...)` reads as the documented result. */
int nn_err(int code, const char *func, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Informational lines (the partition) when the environment variable `var` is set and not "0". */
void nn_info(const char *var, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- tensors ---- */
typedef struct nn_tensor {
    int32_t type; /* OperandCode */
    uint32_t rank;
    uint32_t dims[NN_MAX_RANK]; /* 0: not known yet */
    float scale;
    int32_t zp;
    const float *ch_scales; /* TENSOR_QUANT8_SYMM_PER_CHANNEL */
    uint32_t ch_dim, ch_count;
    void *data;   /* NULL: no value (an omitted optional operand, or not known at validation) */
    size_t bytes; /* bytes of data */
} nn_tensor;

size_t nn_type_size(int32_t type); /* bytes of one element; 0 for an unknown type */
int nn_type_is_scalar(int32_t type);
int nn_type_is_quant8(int32_t type); /* QUANT8_ASYMM, QUANT8_ASYMM_SIGNED, QUANT8_SYMM, QUANT8_SYMM_PER_CHANNEL */
int nn_type_is_float(int32_t type);  /* FLOAT32, FLOAT16, TENSOR_FLOAT32, TENSOR_FLOAT16 */
const char *nn_type_name(int32_t type);
size_t nn_numel(const nn_tensor *t); /* 0 when a dimension is unknown */
int nn_shape_known(const nn_tensor *t);

/* IEEE half conversion, round to nearest even (f16 tensors and relaxed computation). */
uint16_t nn_f32_to_f16(float x);
float nn_f16_to_f32(uint16_t h);
static inline float nn_round_f16(float x)
{
    return nn_f16_to_f32(nn_f32_to_f16(x));
}

/* ---- models (model.c) ---- */
enum { NN_TEMP = 0, NN_MODEL_INPUT, NN_MODEL_OUTPUT, NN_CONST, NN_NO_VALUE };

typedef struct nn_operand {
    nn_tensor t; /* declared type; t.data = the constant's bytes (owned), NULL otherwise */
    int lifetime;
    float *scales; /* owned copy of the per-channel scales */
    int written;   /* some operation writes it */
} nn_operand;

typedef struct nn_operation {
    int32_t type;
    uint32_t n_in, n_out;
    uint32_t *in, *out;
    int level; /* the feature level the operation needs, as finish found it */
    int kind;  /* NN_KIND_* of its main tensor type */
} nn_operation;

enum { NN_KIND_FLOAT32 = 0, NN_KIND_FLOAT16, NN_KIND_QUANT, NN_KIND_OTHER };

struct ANeuralNetworksModel {
    nn_operand *operands;
    uint32_t n_operands, cap_operands;
    nn_operation *ops;
    uint32_t n_ops, cap_ops;
    uint32_t *inputs, *outputs;
    uint32_t n_inputs, n_outputs;
    uint32_t *order; /* operations in an order that runs producers first (finish) */
    int identified, finished, invalid, relaxed;
};

struct ANeuralNetworksMemory {
    void *base;
    size_t size;
    int prot;
};

/* ---- operations (op_table.c; kernels in ops_*.c, their shared helpers in ops.c) ---- */
typedef struct nn_ctx {
    const nn_operation *op;
    nn_tensor *in[NN_MAX_IO];
    nn_tensor *out[NN_MAX_IO];
    uint32_t n_in, n_out;
    int validating; /* 1 at Model_finish: shapes may be unknown, data only for constants */
    int level;      /* validation: raised to the level the operation's form needs */
    int relaxed;    /* run: the device computes float32 in float16 (round each result) */
    int android27;  /* run: the device is Android 8.1's CPU path (float requantization multipliers) */
    /* run: give output i its shape and get its buffer; NN error code */
    int (*alloc)(struct nn_ctx *c, uint32_t i, uint32_t rank, const uint32_t *dims);
    void *run;
    char msg[200];
} nn_ctx;

typedef struct nn_op_def {
    int32_t code;
    const char *name;
    int level;               /* the level that introduced the operation */
    int (*check)(nn_ctx *c); /* counts, types and constant parameters; ANEURALNETWORKS_* */
    int (*eval)(nn_ctx *c);  /* shapes, outputs and values */
} nn_op_def;

const nn_op_def *nn_op_find(int32_t code);
const char *nn_op_name(int32_t code);

/* Failure with a reason in c->msg; returns code. */
int nn_fail(nn_ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define NN_CHECK(c, cond, ...)                                                                                         \
    do {                                                                                                               \
        if (!(cond)) return nn_fail((c), ANEURALNETWORKS_BAD_DATA, __VA_ARGS__);                                       \
    } while (0)

/* Scalar parameters (a constant, or a model input at run time); validation: *known = 0 when not constant. */
int nn_param_i32(const nn_ctx *c, uint32_t i, int32_t *v);
int nn_param_f32(const nn_ctx *c, uint32_t i, float *v); /* FLOAT32 or FLOAT16 */
int nn_param_bool(const nn_ctx *c, uint32_t i, int *v);
int nn_is_type(const nn_ctx *c, uint32_t i, int32_t type);
int nn_quant_zp_min(int32_t type);
int nn_quant_zp_max(int32_t type);
/* Stored element of a quantized tensor, and a store clamped to [lo, hi]. */
static inline int32_t nn_q_get(const nn_tensor *t, size_t i)
{
    return t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? (int32_t)((const uint8_t *)t->data)[i]
                                                          : (int32_t)((const int8_t *)t->data)[i];
}
static inline void nn_q_set(nn_tensor *t, size_t i, int32_t q)
{
    if (t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM)
        ((uint8_t *)t->data)[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    else
        ((int8_t *)t->data)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}
/* Quantize a real value to t's stored range, rounding half away from zero. */
int32_t nn_quantize(const nn_tensor *t, double x);
/* The output clamp of a fused activation: float bounds, and the stored-integer range of a quantized output. */
void nn_fuse_range(int32_t fuse, float *lo, float *hi);
void nn_fuse_qrange(int32_t fuse, const nn_tensor *out, int32_t *qmin, int32_t *qmax);
int nn_check_fuse(nn_ctx *c, uint32_t i);
/* Implicit padding (FACTS.md): out = ceil(in / stride) (SAME) or ceil((in - dilated_f + 1) / stride) (VALID). */
void nn_implicit_pad(int32_t scheme, uint32_t in, uint32_t stride, uint32_t f, uint32_t dil, int32_t *before,
                     int32_t *after);

/* gemmlowp's fixed point (ops_fixed.c), Q0.31 results: exp of a value <= 0 in Q(int_bits); 1 / (1 + x) for x
 * in [0, 1) in Q0.31; logistic and tanh of a Q4.27 value. */
int32_t nn_fixed_exp_negative(int32_t a, int int_bits);
int32_t nn_fixed_one_over_one_plus_x(int32_t a);
int32_t nn_fixed_logistic_q4(int32_t a);
int32_t nn_fixed_tanh_q4(int32_t a);
/* Quantized HARD_SWISH as TFLite's reference_ops::HardSwish (int16 fixed point): the multipliers of an input and
 * output scale (0 when the output multiplier would need a left shift, which Android refuses), and one stored input
 * minus its zero point to the output before its zero point and clamp. */
typedef struct nn_hswish_params {
    int16_t out_mult, reluish_mult;
    int out_exp, reluish_exp;
} nn_hswish_params;
int nn_fixed_hard_swish_params(float in_scale, float out_scale, nn_hswish_params *p);
int32_t nn_fixed_hard_swish(int32_t v, const nn_hswish_params *p);

/* Kernels, one family per file. */
int nn_check_conv(nn_ctx *c);
int nn_eval_conv(nn_ctx *c);
int nn_check_dwconv(nn_ctx *c);
int nn_eval_dwconv(nn_ctx *c);
int nn_check_gconv(nn_ctx *c);
int nn_eval_gconv(nn_ctx *c);
int nn_check_tconv(nn_ctx *c);
int nn_eval_tconv(nn_ctx *c);
int nn_check_fc(nn_ctx *c);
int nn_eval_fc(nn_ctx *c);
int nn_check_binary(nn_ctx *c);
int nn_eval_binary(nn_ctx *c);
int nn_check_minmax(nn_ctx *c);
int nn_eval_minmax(nn_ctx *c);
int nn_check_gather(nn_ctx *c);
int nn_eval_gather(nn_ctx *c);
int nn_check_unary(nn_ctx *c);
int nn_eval_unary(nn_ctx *c);
int nn_check_prelu(nn_ctx *c);
int nn_eval_prelu(nn_ctx *c);
int nn_check_softmax(nn_ctx *c);
int nn_eval_softmax(nn_ctx *c);
int nn_check_quantize(nn_ctx *c);
int nn_eval_quantize(nn_ctx *c);
int nn_check_dequantize(nn_ctx *c);
int nn_eval_dequantize(nn_ctx *c);
int nn_check_pool(nn_ctx *c);
int nn_eval_pool(nn_ctx *c);
int nn_check_mean(nn_ctx *c);
int nn_eval_mean(nn_ctx *c);
int nn_check_reshape(nn_ctx *c);
int nn_eval_reshape(nn_ctx *c);
int nn_check_transpose(nn_ctx *c);
int nn_eval_transpose(nn_ctx *c);
int nn_check_concat(nn_ctx *c);
int nn_eval_concat(nn_ctx *c);
int nn_check_resize(nn_ctx *c);
int nn_eval_resize(nn_ctx *c);
int nn_check_pad(nn_ctx *c);
int nn_eval_pad(nn_ctx *c);
int nn_check_slice(nn_ctx *c);
int nn_eval_slice(nn_ctx *c);
int nn_check_strided_slice(nn_ctx *c);
int nn_eval_strided_slice(nn_ctx *c);

/* A rank-4 image in NHWC or NCHW order: the index of element (n, y, x, ch). */
typedef struct nn_img {
    uint32_t n, h, w, c;
    int nchw;
} nn_img;
static inline nn_img nn_img_of(const nn_tensor *t, int nchw)
{
    nn_img g = {t->dims[0], nchw ? t->dims[2] : t->dims[1], nchw ? t->dims[3] : t->dims[2],
                nchw ? t->dims[1] : t->dims[3], nchw};
    return g;
}
static inline size_t nn_img_at(const nn_img *g, uint32_t n, uint32_t y, uint32_t x, uint32_t ch)
{
    return g->nchw ? (((size_t)n * g->c + ch) * g->h + y) * g->w + x : (((size_t)n * g->h + y) * g->w + x) * g->c + ch;
}
/* The dims of an image of that layout. */
static inline void nn_img_dims(uint32_t n, uint32_t h, uint32_t w, uint32_t c, int nchw, uint32_t dims[4])
{
    dims[0] = n;
    dims[1] = nchw ? c : h;
    dims[2] = nchw ? h : w;
    dims[3] = nchw ? w : c;
}

/* ---- devices (device.c) ---- */
enum { NN_DEV_REFERENCE = 0, NN_DEV_NPU_INT8, NN_DEV_GPU_FP16, NN_DEV_OLD_ANDROID, NN_N_DEVICES };

struct ANeuralNetworksDevice {
    int id;
    const char *name;    /* "parity-reference" ... */
    const char *profile; /* "reference" ... (PARITY_NNAPI_PROFILE) */
    int32_t type;        /* DeviceTypeCode */
    int64_t level;
};

const ANeuralNetworksDevice *nn_device(int id);
/* The device of a profile name, or NULL. */
const ANeuralNetworksDevice *nn_device_by_profile(const char *profile);
/* 1 when the device runs operation i of the finished model (why it does not in why, when given). */
int nn_device_supports(const ANeuralNetworksDevice *d, const ANeuralNetworksModel *m, uint32_t i, char *why,
                       size_t why_len);

/* ---- compilations (compile.c) ---- */
struct ANeuralNetworksCompilation {
    ANeuralNetworksModel *model;
    const ANeuralNetworksDevice *devices[NN_N_DEVICES + 1];
    uint32_t n_devices;
    int for_devices;    /* createForDevices: no CPU fallback beyond the listed devices */
    int fallback_level; /* feature level of the CPU fallback (create) */
    int finished, failed;
    int32_t preference, priority;
    int *placement;    /* per operation: device id, or -1 the CPU fallback */
    int *relaxed_op;   /* per operation: computed in relaxed float16 */
    int *android27_op; /* per operation: placed on Android 8.1's CPU path (parity-old-android) */
};

/* ---- executions (exec.c) ---- */
typedef struct nn_binding {
    int set; /* 0 unset, 1 buffer, 2 memory, 3 omitted (NULL buffer, length 0) */
    void *data;
    size_t length;
    uint32_t rank;
    uint32_t dims[NN_MAX_RANK];
    int has_type;
} nn_binding;

#endif
