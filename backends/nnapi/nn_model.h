/*
 * nn_model.h - the nnapi backend's converter: a parity graph turned into an NNAPI model description held in plain
 * memory (operands with their NNAPI types, physical dimensions and constant data; operations with their operand
 * lists; the model's inputs and outputs with the host-side permutation each needs). The description is built
 * without the library, so supports() and prepare() run the same conversion and the unit tests can read it;
 * nnapi.c hands it to libneuralnetworks.so through the public C API.
 *
 * Shared by nn_convert.c (the graph walk, operands, layouts, level gates) and nn_ops*.c (per-op lowering). It must
 * not call the NNAPI library (nn_lib.h does) nor include anything but core/ and this folder.
 */
#ifndef PAR_NN_MODEL_H
#define PAR_NN_MODEL_H

#include <stdint.h>

#include "core/parity_backend.h"

#include "backends/nnapi/include/android/NeuralNetworks.h"

/* Feature levels the converter knows (Android 8.1 to 11). */
#define NN_LEVEL_MIN 27
#define NN_LEVEL_MAX 30

/* The simulator's device profiles (knob profile=). */
typedef enum nn_profile {
    NN_PROFILE_REFERENCE = 0,
    NN_PROFILE_NPU_INT8 = 1,
    NN_PROFILE_GPU_FP16 = 2,
    NN_PROFILE_OLD_ANDROID = 3,
    NN_PROFILE_COUNT
} nn_profile;

const char *par_nn_profile_name(nn_profile p);

/* The converter's settings (from the knobs). */
typedef struct nn_settings {
    int level;          /* 27..30: the feature level the model may use */
    nn_profile profile;
    int relax_f16;      /* relaxComputationFloat32toFloat16 (gpu-fp16) */
} nn_settings;

/* One NNAPI operand. dims are physical: a rank-4 tensor whose value is logical NCHW holds NHWC when nhwc is set. */
typedef struct nn_operand {
    int32_t type;            /* ANEURALNETWORKS_* operand code */
    uint32_t rank;
    uint32_t dims[PAR_MAX_RANK];
    float scale;
    int32_t zp;
    int32_t nhwc;            /* rank-4 value held as NHWC */
    const void *data;        /* constant data (owned by the model's arena), or NULL */
    size_t len;
    const float *ch_scales;  /* TENSOR_QUANT8_SYMM_PER_CHANNEL: one scale per channel of ch_dim */
    uint32_t ch_dim, n_ch;
} nn_operand;

typedef struct nn_operation {
    int32_t type;  /* ANEURALNETWORKS_* operation code */
    int32_t node;  /* the parity node it lowers (-1: none) */
    uint32_t n_in, n_out;
    uint32_t *in, *out;
} nn_operation;

/* A model input or output: which graph input / output, its operand, and the host-side conversion. */
typedef struct nn_io {
    int32_t value;    /* parity value index */
    int32_t operand;
    int32_t nhwc;     /* permute NCHW <-> NHWC on the host */
    int32_t xor80;    /* qs8 held as qu8 (zero point + 128): flip the top bit on the host */
    size_t elsize;
    int64_t dims[4];  /* logical NCHW dims when nhwc */
    size_t bytes;
} nn_io;

typedef struct nn_block nn_block;

typedef struct nn_model {
    nn_settings set;
    const par_graph_desc *g;
    nn_operand *opnd;
    int32_t n_opnd, cap_opnd;
    nn_operation *oper;
    int32_t n_oper, cap_oper;
    int32_t *val_opnd;   /* per parity value: its operand in the layout its producer chose, or -1 */
    int32_t *val_nchw;   /* per parity value: its operand in logical order (a TRANSPOSE of val_opnd), or -1 */
    nn_io *in, *out;
    int32_t n_in, n_out;
    par_status *node_st; /* per node: the lowering's status, and its message */
    par_msg *node_msg;
    int32_t failed;      /* index of the first node that failed, or -1 */
    nn_block *arena;
} nn_model;

/* Convert g under the settings: fills m (always: a node that fails leaves placeholder operands behind it and
 * records its status and message, so supports() can answer for every node). Returns PAR_ERROR only when out of
 * memory (msg says so); the nodes' statuses are in m->node_st. */
par_status par_nn_convert(nn_model *m, const par_graph_desc *g, const nn_settings *set, par_msg *msg);
void par_nn_model_free(nn_model *m);

/* ---- services for the lowering (nn_convert.c) ---- */

/* Memory owned by the model, freed with it; NULL when out of memory. */
void *par_nn_alloc(nn_model *m, size_t n);

/* The NNAPI operand type of a parity tensor dtype: qs8 is TENSOR_QUANT8_ASYMM_SIGNED at level 30 and, below,
 * TENSOR_QUANT8_ASYMM with zero point + 128 (an exact shift: every quantized op depends on q - zp only). *zp_shift
 * receives 128 or 0. UNSUPPORTED for a dtype NNAPI lacks (at this level). */
par_status par_nn_tensor_type(const nn_model *m, par_dtype dt, int32_t *type, int32_t *zp_shift, par_msg *msg);

/* A new operand; returns its index or -1 when out of memory. */
int32_t par_nn_operand(nn_model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale, int32_t zp);
/* A constant operand: the data is copied. */
int32_t par_nn_const(nn_model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale, int32_t zp,
                     const void *data, size_t len);
int32_t par_nn_i32(nn_model *m, int32_t v);
int32_t par_nn_f32(nn_model *m, float v);
int32_t par_nn_bool(nn_model *m, int v);
int32_t par_nn_i32_vec(nn_model *m, uint32_t n, const int32_t *v);

/* Append an operation; UNSUPPORTED when `type` needs a later feature level than the model's (the reason names the
 * operation and the level), PAR_ERROR when out of memory. */
par_status par_nn_op(nn_model *m, int32_t type, int32_t node, uint32_t n_in, const uint32_t *in, uint32_t n_out,
                     const uint32_t *out, par_msg *msg);

/* Layouts of value operands. */
enum { NN_ANY = 0, NN_LOGICAL = 1, NN_NHWC = 2 };
/* The operand holding value v in the wanted layout (NN_ANY: as produced; NN_LOGICAL: the logical order, through a
 * cached TRANSPOSE when held NHWC; NN_NHWC: rank 4 only). Constants become operands on demand. -1 with msg set
 * (UNSUPPORTED or ERROR in *st) when it cannot. */
int32_t par_nn_value(nn_model *m, int32_t v, int want, int32_t node, par_status *st, par_msg *msg);
/* A new operand for node output value v, of v's dtype and quantization, in NHWC (nhwc != 0, rank 4) or logical
 * order; recorded as v's operand. -1 with *st/msg set on failure. */
int32_t par_nn_out(nn_model *m, int32_t v, int nhwc, par_status *st, par_msg *msg);

/* Helpers of the lowering files. */
int nn_is_q(par_dtype t);
/* The quantization parameters of a value as the model holds them (zero point shifted for qs8 below level 30). */
int32_t nn_zp(const nn_model *m, const par_value *v);
/* An input of node n as an operand (NN_ANY / NN_LOGICAL / NN_NHWC); -1 with *st, msg set. */
int32_t nn_in(nn_model *m, int32_t node, int32_t k, int want, par_status *st, par_msg *msg);
/* Same scale and zero point (NNAPI requires it of many quantized operations). */
int nn_same_q(const par_value *a, const par_value *b);

/* ---- pure helpers (tested by tests/test_nnapi.c) ---- */

/* Minimum feature level of an NNAPI operation code (27 for the first set, ...); 0 for a code the converter does not
 * know. */
int par_nn_op_level(int32_t type);
const char *par_nn_op_name(int32_t type);
/* The physical axis of logical axis `axis` (already in [0, rank)) of a value held NHWC (nhwc) or in logical order. */
int32_t par_nn_axis(int32_t rank, int nhwc, int32_t axis);
/* conv2d weights [O, C, KH, KW] -> NNAPI CONV_2D / GROUPED_CONV_2D filter [O, KH, KW, C] (elements of `es` bytes). */
void par_nn_filter_ohwi(const void *src, void *dst, int64_t o, int64_t c, int64_t kh, int64_t kw, size_t es);
/* depthwise weights [O, 1, KH, KW] -> DEPTHWISE_CONV_2D filter [1, KH, KW, O]. */
void par_nn_filter_dw(const void *src, void *dst, int64_t o, int64_t kh, int64_t kw, size_t es);
/* NCHW <-> NHWC of a dense rank-4 tensor (dims are the logical NCHW dims). */
void par_nn_nchw_to_nhwc(const void *src, void *dst, const int64_t dims[4], size_t es);
void par_nn_nhwc_to_nchw(const void *src, void *dst, const int64_t dims[4], size_t es);
/* NNAPI's implicit padding of one spatial dimension: code ANEURALNETWORKS_PADDING_SAME or _VALID; the output size
 * and the begin / end padding its formula gives. */
void par_nn_implicit_pad(int code, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *out, int64_t *begin,
                         int64_t *end);

#endif /* PAR_NN_MODEL_H */
