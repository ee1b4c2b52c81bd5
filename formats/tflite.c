/*
 * tflite.c - the TFLite reader: schema.fbs's subset (formats/tflite.h) decoded from a flatbuffer with fb.h's
 * checked reader, into an arena owned by the model. Each error names the origin, the schema path of the field and
 * the reason: "m.tflite: subgraphs[0].operators[12].inputs[1]: tensor 97 out of range (80 tensors)".
 *
 * Must not: build a parity graph (tflite_import.c does), or trust any index it reads: tensor, buffer and opcode
 * indices are checked here so that the importer and the writer may use them as they are.
 */
#include "formats/tflite.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/fb.h"

/* ---- arena ----------------------------------------------------------------------------------------------------- */

typedef struct arena_block {
    struct arena_block *next;
    max_align_t data[];
} arena_block;

struct par_tfl_arena {
    arena_block *blocks;
};

void *par_tfl_alloc(par_tfl_model *m, size_t size)
{
    if (size > ((size_t)1 << 40)) return NULL;
    arena_block *b = calloc(1, sizeof *b + (size ? size : 1));
    if (!b) return NULL;
    b->next = m->arena->blocks;
    m->arena->blocks = b;
    return b->data;
}

char *par_tfl_strdup(par_tfl_model *m, const char *s)
{
    size_t n = strlen(s);
    char *d = par_tfl_alloc(m, n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

par_tfl_model *par_tfl_new(void)
{
    par_tfl_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->arena = calloc(1, sizeof *m->arena);
    if (!m->arena) return free(m), NULL;
    m->version = 3;
    m->description = "";
    return m;
}

void par_tfl_free(par_tfl_model *m)
{
    if (!m) return;
    if (m->arena) {
        for (arena_block *b = m->arena->blocks, *n; b; b = n) {
            n = b->next;
            free(b);
        }
        free(m->arena);
    }
    free(m);
}

/* ---- names ----------------------------------------------------------------------------------------------------- */

static const char *const op_names[] = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE",
    "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU",
    "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
    "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB",
    "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP",
    "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM",
    "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN",
    "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT",
    "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT",
    "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL",
    "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS",
    "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU",
    "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE",
    "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM",
    "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D",
    "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL",
    "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS",
    "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE",
    "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2",
    "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT", "STABLEHLO_LOGISTIC", "STABLEHLO_ADD",
    "STABLEHLO_DIVIDE", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE", "STABLEHLO_CLAMP",
    "STABLEHLO_CONCATENATE", "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE",
    "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE", "STABLEHLO_ABS", "STABLEHLO_AND", "STABLEHLO_COSINE",
    "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR", "STABLEHLO_LOG", "STABLEHLO_MINIMUM", "STABLEHLO_NEGATE",
    "STABLEHLO_OR", "STABLEHLO_POWER", "STABLEHLO_REMAINDER", "STABLEHLO_RSQRT", "STABLEHLO_SELECT",
    "STABLEHLO_SUBTRACT", "STABLEHLO_TANH", "STABLEHLO_SCATTER", "STABLEHLO_COMPARE", "STABLEHLO_CONVERT",
    "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_PAD", "STABLEHLO_IOTA",
    "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT", "STABLEHLO_WHILE", "STABLEHLO_GATHER",
    "STABLEHLO_TRANSPOSE", "DILATE", "STABLEHLO_RNG_BIT_GENERATOR", "REDUCE_WINDOW", "STABLEHLO_COMPOSITE",
    "STABLEHLO_SHIFT_LEFT", "STABLEHLO_CBRT", "STABLEHLO_CASE",
};

const char *par_tfl_op_name(int32_t code)
{
    if (code < 0 || code >= (int32_t)(sizeof op_names / sizeof op_names[0]) || !op_names[code][0]) return "UNKNOWN";
    return op_names[code];
}

size_t par_tfl_type_size(int32_t type)
{
    switch (type) {
    case PAR_TFL_FLOAT32: case PAR_TFL_INT32: return 4;
    case PAR_TFL_FLOAT16: case PAR_TFL_INT16: return 2;
    case PAR_TFL_UINT8: case PAR_TFL_INT8: case PAR_TFL_BOOL: return 1;
    case PAR_TFL_INT64: case PAR_TFL_FLOAT64: return 8;
    default: return 0;
    }
}

const char *par_tfl_type_name(int32_t type)
{
    static const char *const n[] = {"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16",
                                    "COMPLEX64", "INT8", "FLOAT64"};
    return type >= 0 && type < (int32_t)(sizeof n / sizeof n[0]) ? n[type] : "UNKNOWN";
}

/* ---- the options field table ----------------------------------------------------------------------------------- */

#define F(type, slot, kind, member, def) {PAR_TFL_OPT_##type, slot, PAR_TFL_F_##kind, offsetof(par_tfl_options, member), def}
static const par_tfl_field fields[] = {
    F(CONV2D, 0, BYTE, padding, 0), F(CONV2D, 1, INT, stride_w, 0), F(CONV2D, 2, INT, stride_h, 0),
    F(CONV2D, 3, BYTE, activation, 0), F(CONV2D, 4, INT, dilation_w, 1), F(CONV2D, 5, INT, dilation_h, 1),
    F(DEPTHWISE, 0, BYTE, padding, 0), F(DEPTHWISE, 1, INT, stride_w, 0), F(DEPTHWISE, 2, INT, stride_h, 0),
    F(DEPTHWISE, 3, INT, depth_multiplier, 0), F(DEPTHWISE, 4, BYTE, activation, 0),
    F(DEPTHWISE, 5, INT, dilation_w, 1), F(DEPTHWISE, 6, INT, dilation_h, 1),
    F(POOL2D, 0, BYTE, padding, 0), F(POOL2D, 1, INT, stride_w, 0), F(POOL2D, 2, INT, stride_h, 0),
    F(POOL2D, 3, INT, filter_w, 0), F(POOL2D, 4, INT, filter_h, 0), F(POOL2D, 5, BYTE, activation, 0),
    F(FULLY_CONNECTED, 0, BYTE, activation, 0), F(FULLY_CONNECTED, 1, BYTE, weights_format, 0),
    F(FULLY_CONNECTED, 2, BYTE, keep_num_dims, 0), F(FULLY_CONNECTED, 3, BYTE, asymmetric_quantize_inputs, 0),
    F(SOFTMAX, 0, FLOAT, beta, 0),
    F(CONCATENATION, 0, INT, axis, 0), F(CONCATENATION, 1, BYTE, activation, 0),
    F(ADD, 0, BYTE, activation, 0), F(ADD, 1, BYTE, pot_scale_int16, 1),
    F(RESIZE_BILINEAR, 2, BYTE, align_corners, 0), F(RESIZE_BILINEAR, 3, BYTE, half_pixel_centers, 0),
    F(RESHAPE, 0, INTS, ints, 0),
    F(MUL, 0, BYTE, activation, 0),
    F(REDUCER, 0, BYTE, keep_dims, 0),
    F(SUB, 0, BYTE, activation, 0), F(SUB, 1, BYTE, pot_scale_int16, 1),
    F(DIV, 0, BYTE, activation, 0),
    F(SQUEEZE, 0, INTS, ints, 0),
    F(STRIDED_SLICE, 0, INT, begin_mask, 0), F(STRIDED_SLICE, 1, INT, end_mask, 0),
    F(STRIDED_SLICE, 2, INT, ellipsis_mask, 0), F(STRIDED_SLICE, 3, INT, new_axis_mask, 0),
    F(STRIDED_SLICE, 4, INT, shrink_axis_mask, 0), F(STRIDED_SLICE, 5, BYTE, offset, 0),
    F(RESIZE_NEAREST, 0, BYTE, align_corners, 0), F(RESIZE_NEAREST, 1, BYTE, half_pixel_centers, 0),
    F(LEAKY_RELU, 0, FLOAT, alpha, 0),
    F(BATCH_MATMUL, 0, BYTE, adj_x, 0), F(BATCH_MATMUL, 1, BYTE, adj_y, 0),
    F(BATCH_MATMUL, 2, BYTE, asymmetric_quantize_inputs, 0),
    F(GELU, 0, BYTE, approximate, 0),
};
#undef F

const par_tfl_field *par_tfl_fields(int32_t *n)
{
    *n = (int32_t)(sizeof fields / sizeof fields[0]);
    return fields;
}

int par_tfl_options_known(int32_t t)
{
    switch (t) {
    case PAR_TFL_OPT_PAD: case PAR_TFL_OPT_TRANSPOSE: case PAR_TFL_OPT_LOG_SOFTMAX: case PAR_TFL_OPT_DEQUANTIZE:
    case PAR_TFL_OPT_PADV2: case PAR_TFL_OPT_QUANTIZE: case PAR_TFL_OPT_HARD_SWISH: case PAR_TFL_OPT_EXP:
    case PAR_TFL_OPT_MAXIMUM_MINIMUM: case PAR_TFL_OPT_NEG: case PAR_TFL_OPT_POW: case PAR_TFL_OPT_ABS:
    case PAR_TFL_OPT_COS: case PAR_TFL_OPT_SIGN: return 1;
    default: break;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].options_type == t) return 1;
    return 0;
}

void par_tfl_options_default(par_tfl_options *o, int32_t t)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].options_type != t) continue;
        char *p = (char *)o + fields[i].member;
        if (fields[i].kind == PAR_TFL_F_FLOAT) *(float *)p = (float)fields[i].def;
        else if (fields[i].kind != PAR_TFL_F_INTS) *(int32_t *)p = (int32_t)fields[i].def;
    }
}

/* ---- the op correspondence ------------------------------------------------------------------------------------ */

#define M(code, opt, fam, op) {PAR_TFL_OP_##code, PAR_TFL_OPT_##opt, PAR_TFL_K_##fam, op}
static const par_tfl_opmap opmap[] = {
    M(CONV_2D, CONV2D, CONV, "conv2d"),
    M(DEPTHWISE_CONV_2D, DEPTHWISE, DWCONV, "conv2d"),
    M(FULLY_CONNECTED, FULLY_CONNECTED, FC, "linear"),
    M(ADD, ADD, BINARY, "add"),
    M(SUB, SUB, BINARY, "sub"),
    M(MUL, MUL, BINARY, "mul"),
    M(DIV, DIV, BINARY, "div"),
    M(AVERAGE_POOL_2D, POOL2D, POOL, "avg_pool2d"),
    M(MAX_POOL_2D, POOL2D, POOL, "max_pool2d"),
    M(MEAN, REDUCER, REDUCE, "mean"),
    M(SUM, REDUCER, REDUCE, "sum"),
    M(REDUCE_MAX, REDUCER, REDUCE, "amax"),
    M(RESHAPE, RESHAPE, RESHAPE, "reshape"),
    M(RESHAPE, RESHAPE, RESHAPE, "flatten"),
    M(SQUEEZE, SQUEEZE, SQUEEZE, "reshape"),
    M(SOFTMAX, SOFTMAX, SOFTMAX, "softmax"),
    M(LOG_SOFTMAX, LOG_SOFTMAX, SOFTMAX, "log_softmax"),
    M(CONCATENATION, CONCATENATION, CONCAT, "concat"),
    M(PAD, PAD, PAD, "pad"),
    M(PADV2, PADV2, PAD, "pad"),
    M(RELU, NONE, UNARY, "relu"),
    M(RELU6, NONE, UNARY, "relu6"),
    M(RELU_N1_TO_1, NONE, UNARY, "hardtanh"),
    M(LOGISTIC, NONE, UNARY, "sigmoid"),
    M(TANH, NONE, UNARY, "tanh"),
    M(HARD_SWISH, HARD_SWISH, UNARY, "hardswish"),
    M(LEAKY_RELU, LEAKY_RELU, UNARY, "leaky_relu"),
    M(ELU, NONE, UNARY, "elu"),
    M(GELU, GELU, UNARY, "gelu"),
    M(MAXIMUM, MAXIMUM_MINIMUM, BINARY, "maximum"),
    M(MINIMUM, MAXIMUM_MINIMUM, BINARY, "minimum"),
    M(POW, POW, BINARY, "pow"),
    M(ABS, ABS, UNARY, "abs"),
    M(NEG, NEG, UNARY, "neg"),
    M(EXP, EXP, UNARY, "exp"),
    M(LOG, NONE, UNARY, "log"),
    M(FLOOR, NONE, UNARY, "floor"),
    M(CEIL, NONE, UNARY, "ceil"),
    M(ROUND, NONE, UNARY, "round"),
    M(SIGN, SIGN, UNARY, "sign"),
    M(SIN, NONE, UNARY, "sin"),
    M(COS, COS, UNARY, "cos"),
    M(SQRT, NONE, UNARY, "sqrt"),
    M(RSQRT, NONE, UNARY, "rsqrt"),
    M(PRELU, NONE, PRELU, "prelu"),
    M(QUANTIZE, QUANTIZE, QUANTIZE, "quantize"),
    M(DEQUANTIZE, DEQUANTIZE, DEQUANTIZE, "dequantize"),
    M(RESIZE_BILINEAR, RESIZE_BILINEAR, RESIZE, "upsample_bilinear2d"),
    M(RESIZE_NEAREST_NEIGHBOR, RESIZE_NEAREST, RESIZE, "upsample_nearest2d"),
    M(RESIZE_NEAREST_NEIGHBOR, RESIZE_NEAREST, RESIZE, "upsample_nearest_exact2d"),
    M(TRANSPOSE, TRANSPOSE, TRANSPOSE, "permute"),
    M(STRIDED_SLICE, STRIDED_SLICE, SLICE, "slice"),
    M(BATCH_MATMUL, BATCH_MATMUL, BMM, "matmul"),
};
#undef M

const par_tfl_opmap *par_tfl_opmap_code(int32_t code)
{
    for (size_t i = 0; i < sizeof opmap / sizeof opmap[0]; i++)
        if (opmap[i].code == code) return &opmap[i];
    return NULL;
}

const par_tfl_opmap *par_tfl_opmap_par(const char *par_op)
{
    for (size_t i = 0; i < sizeof opmap / sizeof opmap[0]; i++)
        if (strcmp(opmap[i].par_op, par_op) == 0) return &opmap[i];
    return NULL;
}

/* ---- parsing --------------------------------------------------------------------------------------------------- */

typedef struct parser {
    par_fb_reader r;
    par_tfl_model *m;
    const char *origin;
    par_msg *msg;
    char path[160];
    int failed;
} parser;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int err(parser *p, const char *fmt, ...)
{
    if (p->failed) return 0;
    p->failed = 1;
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    par_msgf(p->msg, PAR_ERROR, "%s: %s: %s", p->origin, p->path[0] ? p->path : "(root)", why);
    return 0;
}

/* Set the path (printf-style) of what is read next. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void at(parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->path, sizeof p->path, fmt, ap);
    va_end(ap);
}

/* A reader error at the current path. */
static int checked(parser *p)
{
    if (p->failed) return 0;
    if (p->r.why) return err(p, "%s", p->r.why);
    return 1;
}

static void *alloc(parser *p, size_t n)
{
    void *q = par_tfl_alloc(p->m, n);
    if (!q) err(p, "out of memory (%zu bytes)", n);
    return q;
}

static const char *string(parser *p, const par_fb_table *t, int slot)
{
    const char *s;
    uint32_t n;
    if (!par_fb_string(&p->r, t, slot, &s, &n)) return checked(p) ? "" : NULL;
    char *d = alloc(p, (size_t)n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* A vector of int32 (n may be 0; *out NULL when absent). */
static int ints(parser *p, const par_fb_table *t, int slot, int32_t **out, int32_t *n, int *present)
{
    par_fb_vec v;
    *out = NULL;
    *n = 0;
    if (present) *present = 0;
    if (!par_fb_vector(&p->r, t, slot, 4, &v)) return checked(p);
    if (v.n > INT32_MAX / 4) return err(p, "%u elements: too many", v.n);
    if (present) *present = 1;
    *out = alloc(p, (size_t)v.n * 4);
    if (!*out) return 0;
    for (uint32_t i = 0; i < v.n; i++) (*out)[i] = par_fb_vec_i32(&p->r, &v, i);
    *n = (int32_t)v.n;
    return 1;
}

static int floats(parser *p, const par_fb_table *t, int slot, float **out, int32_t *n)
{
    par_fb_vec v;
    *out = NULL;
    *n = 0;
    if (!par_fb_vector(&p->r, t, slot, 4, &v)) return checked(p);
    if (v.n > INT32_MAX / 4) return err(p, "%u elements: too many", v.n);
    *out = alloc(p, (size_t)v.n * 4);
    if (!*out) return 0;
    for (uint32_t i = 0; i < v.n; i++) (*out)[i] = par_fb_vec_f32(&p->r, &v, i);
    *n = (int32_t)v.n;
    return 1;
}

static int parse_quant(parser *p, const par_fb_table *qt, par_tfl_tensor *t, const char *base)
{
    par_tfl_quant *q = alloc(p, sizeof *q);
    if (!q) return 0;
    at(p, "%s.quantization.min", base);
    if (!floats(p, qt, 0, &q->min, &q->n_min)) return 0;
    at(p, "%s.quantization.max", base);
    if (!floats(p, qt, 1, &q->max, &q->n_max)) return 0;
    at(p, "%s.quantization.scale", base);
    if (!floats(p, qt, 2, &q->scale, &q->n_scale)) return 0;
    at(p, "%s.quantization.zero_point", base);
    par_fb_vec v;
    if (par_fb_vector(&p->r, qt, 3, 8, &v)) {
        if (v.n > INT32_MAX / 8) return err(p, "%u elements: too many", v.n);
        q->zero_point = alloc(p, (size_t)v.n * 8);
        if (!q->zero_point) return 0;
        for (uint32_t i = 0; i < v.n; i++) q->zero_point[i] = par_fb_vec_i64(&p->r, &v, i);
        q->n_zero_point = (int32_t)v.n;
    }
    if (!checked(p)) return 0;
    at(p, "%s.quantization.quantized_dimension", base);
    q->quantized_dimension = par_fb_i32(&p->r, qt, 6, 0);
    if (!checked(p)) return 0;
    if (q->n_zero_point && q->n_scale && q->n_zero_point != q->n_scale)
        return at(p, "%s.quantization", base), err(p, "%d scales but %d zero points", (int)q->n_scale,
                                                    (int)q->n_zero_point);
    if (q->n_scale > 1 && (q->quantized_dimension < 0 || q->quantized_dimension >= t->rank ||
                           q->n_scale != t->shape[q->quantized_dimension]))
        return at(p, "%s.quantization", base), err(p, "%d scales on dimension %d of a rank-%d tensor",
                                                    (int)q->n_scale, (int)q->quantized_dimension, (int)t->rank);
    t->quant = q;
    return 1;
}

static int parse_tensor(parser *p, const par_fb_table *tt, par_tfl_tensor *t, int32_t sg, int32_t i)
{
    char base[64];
    snprintf(base, sizeof base, "subgraphs[%d].tensors[%d]", (int)sg, (int)i);
    int32_t *shape, n;
    at(p, "%s.shape", base);
    if (!ints(p, tt, 0, &shape, &n, NULL)) return 0;
    if (n > PAR_TFL_MAX_RANK) return err(p, "rank %d: more than %d", (int)n, PAR_TFL_MAX_RANK);
    t->rank = n;
    for (int32_t k = 0; k < n; k++) t->shape[k] = shape[k];
    at(p, "%s.shape_signature", base);
    if (!ints(p, tt, 7, &shape, &n, &t->has_shape_signature)) return 0;
    if (t->has_shape_signature) {
        if (n != t->rank) return err(p, "%d dims, but the shape has %d", (int)n, (int)t->rank);
        for (int32_t k = 0; k < n; k++) t->shape_signature[k] = shape[k];
    }
    at(p, "%s.type", base);
    t->type = par_fb_i8(&p->r, tt, 1, 0);
    at(p, "%s.buffer", base);
    t->buffer = par_fb_u32(&p->r, tt, 2, 0);
    if (!checked(p)) return 0;
    if (t->buffer >= (uint32_t)p->m->n_buffers && t->buffer != 0)
        return err(p, "buffer %u out of range (%d buffers)", t->buffer, (int)p->m->n_buffers);
    at(p, "%s.name", base);
    if (!(t->name = string(p, tt, 3))) return 0;
    at(p, "%s.is_variable", base);
    t->is_variable = par_fb_u8(&p->r, tt, 5, 0) != 0;
    at(p, "%s.sparsity", base);
    t->has_sparsity = par_fb_has(&p->r, tt, 6);
    if (!checked(p)) return 0;
    par_fb_table qt;
    at(p, "%s.quantization", base);
    if (par_fb_table_field(&p->r, tt, 4, &qt)) {
        if (!parse_quant(p, &qt, t, base)) return 0;
    }
    return checked(p);
}

static int parse_options(parser *p, const par_fb_table *ot, par_tfl_op *op, const char *base)
{
    int32_t nf;
    const par_tfl_field *fs = par_tfl_fields(&nf);
    for (int32_t k = 0; k < nf; k++) {
        const par_tfl_field *f = &fs[k];
        if (f->options_type != op->options_type) continue;
        at(p, "%s.builtin_options[%d]", base, f->slot);
        char *dst = (char *)&op->opt + f->member;
        switch (f->kind) {
        case PAR_TFL_F_BYTE: *(int32_t *)dst = (int8_t)par_fb_i8(&p->r, ot, f->slot, (int8_t)f->def); break;
        case PAR_TFL_F_INT: *(int32_t *)dst = par_fb_i32(&p->r, ot, f->slot, (int32_t)f->def); break;
        case PAR_TFL_F_FLOAT: *(float *)dst = par_fb_f32(&p->r, ot, f->slot, (float)f->def); break;
        case PAR_TFL_F_INTS:
            if (!ints(p, ot, f->slot, &op->opt.ints, &op->opt.n_ints, &op->opt.has_ints)) return 0;
            break;
        default: break;
        }
        if (!checked(p)) return 0;
    }
    return 1;
}

static int index_vec(parser *p, const par_fb_table *t, int slot, int32_t **out, int32_t *n, int32_t lo, int32_t hi,
                     const char *what)
{
    if (!ints(p, t, slot, out, n, NULL)) return 0;
    for (int32_t k = 0; k < *n; k++)
        if ((*out)[k] < lo || (*out)[k] >= hi) {
            size_t l = strlen(p->path);
            snprintf(p->path + l, sizeof p->path - l, "[%d]", (int)k);
            return err(p, "%s %d out of range (%d %ss)", what, (int)(*out)[k], (int)hi, what);
        }
    return 1;
}

static int parse_op(parser *p, const par_fb_table *ot, par_tfl_op *op, int32_t sg, int32_t i, int32_t n_tensors)
{
    char base[64];
    snprintf(base, sizeof base, "subgraphs[%d].operators[%d]", (int)sg, (int)i);
    at(p, "%s.opcode_index", base);
    op->opcode_index = par_fb_u32(&p->r, ot, 0, 0);
    if (!checked(p)) return 0;
    if (op->opcode_index >= (uint32_t)p->m->n_opcodes)
        return err(p, "%u out of range (%d operator codes)", op->opcode_index, (int)p->m->n_opcodes);
    at(p, "%s.inputs", base);
    if (!index_vec(p, ot, 1, &op->inputs, &op->n_inputs, -1, n_tensors, "tensor")) return 0;
    at(p, "%s.outputs", base);
    if (!index_vec(p, ot, 2, &op->outputs, &op->n_outputs, 0, n_tensors, "tensor")) return 0;
    at(p, "%s.builtin_options_type", base);
    op->options_type = par_fb_u8(&p->r, ot, 3, 0);
    if (!checked(p)) return 0;
    par_tfl_options_default(&op->opt, op->options_type);
    par_fb_table opt;
    at(p, "%s.builtin_options", base);
    if (par_fb_table_field(&p->r, ot, 4, &opt)) {
        if (!parse_options(p, &opt, op, base)) return 0;
    } else if (!checked(p)) {
        return 0;
    }
    at(p, "%s.custom_options", base);
    par_fb_vec v;
    if (par_fb_vector(&p->r, ot, 5, 1, &v) && v.n) {
        op->custom_options = alloc(p, v.n);
        if (!op->custom_options) return 0;
        memcpy(op->custom_options, p->r.buf + v.pos, v.n);
        op->n_custom_options = v.n;
    }
    return checked(p);
}

static int parse_subgraph(parser *p, const par_fb_table *st, par_tfl_subgraph *s, int32_t sg)
{
    par_fb_vec v;
    at(p, "subgraphs[%d].tensors", (int)sg);
    if (!par_fb_vector(&p->r, st, 0, 4, &v) && !checked(p)) return 0;
    if (v.n > INT32_MAX / sizeof(par_tfl_tensor)) return err(p, "%u tensors: too many", v.n);
    s->n_tensors = (int32_t)v.n;
    s->tensors = alloc(p, (size_t)v.n * sizeof *s->tensors + 1);
    if (!s->tensors) return 0;
    for (uint32_t i = 0; i < v.n; i++) {
        par_fb_table tt;
        at(p, "subgraphs[%d].tensors[%u]", (int)sg, i);
        if (!par_fb_vec_table(&p->r, &v, i, &tt)) return checked(p) ? err(p, "missing") : 0;
        if (!parse_tensor(p, &tt, &s->tensors[i], sg, (int32_t)i)) return 0;
    }
    at(p, "subgraphs[%d].inputs", (int)sg);
    if (!index_vec(p, st, 1, &s->inputs, &s->n_inputs, 0, s->n_tensors, "tensor")) return 0;
    at(p, "subgraphs[%d].outputs", (int)sg);
    if (!index_vec(p, st, 2, &s->outputs, &s->n_outputs, 0, s->n_tensors, "tensor")) return 0;
    at(p, "subgraphs[%d].operators", (int)sg);
    if (!par_fb_vector(&p->r, st, 3, 4, &v) && !checked(p)) return 0;
    if (v.n > INT32_MAX / sizeof(par_tfl_op)) return err(p, "%u operators: too many", v.n);
    s->n_ops = (int32_t)v.n;
    s->ops = alloc(p, (size_t)v.n * sizeof *s->ops + 1);
    if (!s->ops) return 0;
    for (uint32_t i = 0; i < v.n; i++) {
        par_fb_table ot;
        at(p, "subgraphs[%d].operators[%u]", (int)sg, i);
        if (!par_fb_vec_table(&p->r, &v, i, &ot)) return checked(p) ? err(p, "missing") : 0;
        if (!parse_op(p, &ot, &s->ops[i], sg, (int32_t)i, s->n_tensors)) return 0;
    }
    at(p, "subgraphs[%d].name", (int)sg);
    return (s->name = string(p, st, 4)) != NULL;
}

static int parse_buffers(parser *p, const par_fb_table *root)
{
    par_fb_vec v;
    at(p, "buffers");
    if (!par_fb_vector(&p->r, root, 4, 4, &v) && !checked(p)) return 0;
    if (v.n > INT32_MAX / sizeof(par_tfl_buffer)) return err(p, "%u buffers: too many", v.n);
    p->m->n_buffers = (int32_t)v.n;
    p->m->buffers = alloc(p, (size_t)v.n * sizeof *p->m->buffers + 1);
    if (!p->m->buffers) return 0;
    for (uint32_t i = 0; i < v.n; i++) {
        par_fb_table bt;
        par_fb_vec d;
        par_tfl_buffer *b = &p->m->buffers[i];
        at(p, "buffers[%u]", i);
        if (!par_fb_vec_table(&p->r, &v, i, &bt)) return checked(p) ? err(p, "missing") : 0;
        at(p, "buffers[%u].data", i);
        if (par_fb_vector(&p->r, &bt, 0, 1, &d)) {
            b->data = d.n ? p->r.buf + d.pos : NULL;
            b->size = d.n;
        }
        if (!checked(p)) return 0;
        at(p, "buffers[%u].offset", i);
        uint64_t off = par_fb_u64(&p->r, &bt, 1, 0), size = par_fb_u64(&p->r, &bt, 2, 0);
        if (!checked(p)) return 0;
        if (off > 1 || size) {
            /* Data past the flatbuffer (models beyond 2 GiB): offsets from the start of the file. */
            if (b->size) return err(p, "both inline data and an offset");
            if (off > p->r.len || size > p->r.len - off)
                return err(p, "%llu bytes at %llu lie past the end of the file (%zu bytes)", (unsigned long long)size,
                           (unsigned long long)off, p->r.len);
            b->data = size ? p->r.buf + off : NULL;
            b->size = size;
        }
        /* The data is copied so that the model outlives the bytes it was parsed from. */
        if (b->size) {
            uint8_t *c = alloc(p, (size_t)b->size);
            if (!c) return 0;
            memcpy(c, b->data, (size_t)b->size);
            b->data = c;
        }
    }
    return 1;
}

par_tfl_model *par_tfl_parse(const uint8_t *buf, size_t len, const char *origin, par_msg *msg)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.origin = origin ? origin : "tflite";
    p.msg = msg;
    par_fb_table root;
    if (!par_fb_open(&p.r, buf, len, PAR_TFL_IDENT, &root)) {
        par_msgf(msg, PAR_ERROR, "%s: not a TFLite model: %s", p.origin, p.r.why);
        return NULL;
    }
    if (!(p.m = par_tfl_new())) return par_msgf(msg, PAR_ERROR, "%s: out of memory", p.origin), NULL;
    par_tfl_model *m = p.m;
    par_fb_vec v;
    at(&p, "version");
    m->version = par_fb_u32(&p.r, &root, 0, 0);
    if (!checked(&p)) goto fail;
    at(&p, "description");
    if (!(m->description = string(&p, &root, 3))) goto fail;
    if (!parse_buffers(&p, &root)) goto fail;
    at(&p, "operator_codes");
    if (!par_fb_vector(&p.r, &root, 1, 4, &v) && !checked(&p)) goto fail;
    m->n_opcodes = (int32_t)(v.n > INT32_MAX / sizeof(par_tfl_opcode) ? 0 : v.n);
    if (v.n != (uint32_t)m->n_opcodes) { err(&p, "too many"); goto fail; }
    if (!(m->opcodes = alloc(&p, (size_t)v.n * sizeof *m->opcodes + 1))) goto fail;
    for (uint32_t i = 0; i < v.n; i++) {
        par_fb_table ct;
        par_tfl_opcode *c = &m->opcodes[i];
        at(&p, "operator_codes[%u]", i);
        if (!par_fb_vec_table(&p.r, &v, i, &ct)) { if (checked(&p)) err(&p, "missing"); goto fail; }
        int32_t dep = par_fb_i8(&p.r, &ct, 0, 0), code = par_fb_i32(&p.r, &ct, 3, 0);
        c->builtin = dep > code ? dep : code;
        c->version = par_fb_i32(&p.r, &ct, 2, 1);
        if (!checked(&p)) goto fail;
        if (c->builtin < 0) { err(&p, "builtin code %d", (int)c->builtin); goto fail; }
        at(&p, "operator_codes[%u].custom_code", i);
        const char *s;
        uint32_t n;
        if (par_fb_string(&p.r, &ct, 1, &s, &n)) {
            char *d = alloc(&p, (size_t)n + 1);
            if (!d) goto fail;
            memcpy(d, s, n);
            c->custom = d;
        }
        if (!checked(&p)) goto fail;
    }
    at(&p, "subgraphs");
    if (!par_fb_vector(&p.r, &root, 2, 4, &v)) {
        if (checked(&p)) err(&p, "missing (a model needs a subgraph)");
        goto fail;
    }
    if (v.n == 0) { err(&p, "empty (a model needs a subgraph)"); goto fail; }
    if (v.n > 4096) { err(&p, "%u subgraphs: too many", v.n); goto fail; }
    m->n_subgraphs = (int32_t)v.n;
    if (!(m->subgraphs = alloc(&p, (size_t)v.n * sizeof *m->subgraphs))) goto fail;
    for (uint32_t i = 0; i < v.n; i++) {
        par_fb_table st;
        at(&p, "subgraphs[%u]", i);
        if (!par_fb_vec_table(&p.r, &v, i, &st)) { if (checked(&p)) err(&p, "missing"); goto fail; }
        if (!parse_subgraph(&p, &st, &m->subgraphs[i], (int32_t)i)) goto fail;
    }
    return m;
fail:
    par_tfl_free(m);
    return NULL;
}

par_tfl_model *par_tfl_load(const char *path, par_msg *msg)
{
    FILE *f = fopen(path, "rb");
    if (!f) return par_msgf(msg, PAR_ERROR, "%s: cannot open", path), NULL;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap > ((size_t)1 << 34)) break;
            size_t nc = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = realloc(buf, nc);
            if (!nb) break;
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (!r) break;
        len += r;
    }
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (bad) return free(buf), par_msgf(msg, PAR_ERROR, "%s: read error", path), NULL;
    par_tfl_model *m = par_tfl_parse(buf, len, path, msg);
    free(buf);
    return m;
}
