/*
 * tflite.h - TFLite / LiteRT model files (schema.fbs, file identifier "TFL3") in memory: a reader that decodes the
 * subset of the schema parity imports, checked field by field on top of formats/fb.h, and a writer that encodes the
 * same structure back (formats/tflite_write.c). And the entry points formats/model.c dispatches to: the import of a
 * model as a parity case (formats/tflite_import.c) and the export of a case as a model (formats/tflite_export.c).
 *
 * Kept: the model's version, operator codes, description, buffers, and every subgraph's tensors (shape, type,
 * buffer, name, quantization's scale / zero_point / quantized_dimension / min / max, is_variable, shape_signature;
 * sparsity only as a flag), inputs, outputs and operators (opcode index, inputs, outputs, the builtin options of the
 * option tables listed in par_tfl_options, custom options as bytes). Dropped: metadata, signature defs, options
 * tables parity has no use for (their type survives, their fields do not), quantization details.
 *
 * Buffers: inline data (Buffer.data) and, for models beyond 2 GiB, data stored past the flatbuffer (Buffer.offset /
 * size, offsets from the start of the file): read when the bytes given hold them, an error otherwise. The writer
 * always writes inline data, so it refuses a model of 2 GiB or more.
 *
 * Errors: "origin: subgraphs[0].operators[12].inputs: reason". A hostile file is an error, never a crash.
 *
 * Everything a model holds lives in its arena: par_tfl_free releases it all.
 */
#ifndef PAR_FORMATS_TFLITE_H
#define PAR_FORMATS_TFLITE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/model.h"

#define PAR_TFL_IDENT "TFL3"
#define PAR_TFL_MAX_RANK 8

/* TensorType (schema.fbs) */
enum {
    PAR_TFL_FLOAT32 = 0, PAR_TFL_FLOAT16 = 1, PAR_TFL_INT32 = 2, PAR_TFL_UINT8 = 3, PAR_TFL_INT64 = 4,
    PAR_TFL_STRING = 5, PAR_TFL_BOOL = 6, PAR_TFL_INT16 = 7, PAR_TFL_INT8 = 9, PAR_TFL_FLOAT64 = 10,
};

/* BuiltinOperator codes parity maps (schema.fbs; the full list of names is in tflite.c for messages). */
enum {
    PAR_TFL_OP_ADD = 0, PAR_TFL_OP_AVERAGE_POOL_2D = 1, PAR_TFL_OP_CONCATENATION = 2, PAR_TFL_OP_CONV_2D = 3,
    PAR_TFL_OP_DEPTHWISE_CONV_2D = 4, PAR_TFL_OP_DEQUANTIZE = 6, PAR_TFL_OP_FULLY_CONNECTED = 9,
    PAR_TFL_OP_LOGISTIC = 14, PAR_TFL_OP_MAX_POOL_2D = 17, PAR_TFL_OP_MUL = 18, PAR_TFL_OP_RELU = 19,
    PAR_TFL_OP_RELU_N1_TO_1 = 20, PAR_TFL_OP_RELU6 = 21, PAR_TFL_OP_RESHAPE = 22, PAR_TFL_OP_RESIZE_BILINEAR = 23,
    PAR_TFL_OP_SOFTMAX = 25, PAR_TFL_OP_TANH = 28, PAR_TFL_OP_CUSTOM = 32, PAR_TFL_OP_PAD = 34,
    PAR_TFL_OP_TRANSPOSE = 39, PAR_TFL_OP_MEAN = 40, PAR_TFL_OP_SUB = 41, PAR_TFL_OP_DIV = 42,
    PAR_TFL_OP_SQUEEZE = 43, PAR_TFL_OP_STRIDED_SLICE = 45, PAR_TFL_OP_LOG_SOFTMAX = 50, PAR_TFL_OP_PRELU = 54,
    PAR_TFL_OP_PADV2 = 60, PAR_TFL_OP_SUM = 74, PAR_TFL_OP_SQRT = 75, PAR_TFL_OP_RSQRT = 76,
    PAR_TFL_OP_REDUCE_MAX = 82, PAR_TFL_OP_RESIZE_NEAREST_NEIGHBOR = 97, PAR_TFL_OP_LEAKY_RELU = 98,
    PAR_TFL_OP_ELU = 111, PAR_TFL_OP_QUANTIZE = 114, PAR_TFL_OP_HARD_SWISH = 117, PAR_TFL_OP_BATCH_MATMUL = 126,
    PAR_TFL_OP_GELU = 150, PAR_TFL_OP_FLOOR = 8, PAR_TFL_OP_EXP = 47, PAR_TFL_OP_MAXIMUM = 55,
    PAR_TFL_OP_MINIMUM = 57, PAR_TFL_OP_NEG = 59, PAR_TFL_OP_SIN = 66, PAR_TFL_OP_LOG = 73, PAR_TFL_OP_POW = 78,
    PAR_TFL_OP_ABS = 101, PAR_TFL_OP_CEIL = 104, PAR_TFL_OP_COS = 108, PAR_TFL_OP_ROUND = 116, PAR_TFL_OP_SIGN = 158,
};

/* BuiltinOptions union types parity reads and writes (schema.fbs). */
enum {
    PAR_TFL_OPT_NONE = 0, PAR_TFL_OPT_CONV2D = 1, PAR_TFL_OPT_DEPTHWISE = 2, PAR_TFL_OPT_POOL2D = 5,
    PAR_TFL_OPT_FULLY_CONNECTED = 8, PAR_TFL_OPT_SOFTMAX = 9, PAR_TFL_OPT_CONCATENATION = 10, PAR_TFL_OPT_ADD = 11,
    PAR_TFL_OPT_RESIZE_BILINEAR = 15, PAR_TFL_OPT_RESHAPE = 17, PAR_TFL_OPT_MUL = 21, PAR_TFL_OPT_PAD = 22,
    PAR_TFL_OPT_TRANSPOSE = 26, PAR_TFL_OPT_REDUCER = 27, PAR_TFL_OPT_SUB = 28, PAR_TFL_OPT_DIV = 29,
    PAR_TFL_OPT_SQUEEZE = 30, PAR_TFL_OPT_STRIDED_SLICE = 32, PAR_TFL_OPT_LOG_SOFTMAX = 36,
    PAR_TFL_OPT_DEQUANTIZE = 38, PAR_TFL_OPT_PADV2 = 43, PAR_TFL_OPT_RESIZE_NEAREST = 74,
    PAR_TFL_OPT_LEAKY_RELU = 75, PAR_TFL_OPT_QUANTIZE = 89, PAR_TFL_OPT_HARD_SWISH = 91,
    PAR_TFL_OPT_BATCH_MATMUL = 101, PAR_TFL_OPT_GELU = 116, PAR_TFL_OPT_EXP = 33, PAR_TFL_OPT_MAXIMUM_MINIMUM = 39,
    PAR_TFL_OPT_NEG = 42, PAR_TFL_OPT_POW = 56, PAR_TFL_OPT_ABS = 78, PAR_TFL_OPT_COS = 84, PAR_TFL_OPT_SIGN = 123,
};

/* Padding and ActivationFunctionType */
enum { PAR_TFL_PAD_SAME = 0, PAR_TFL_PAD_VALID = 1 };
enum { PAR_TFL_ACT_NONE = 0, PAR_TFL_ACT_RELU = 1, PAR_TFL_ACT_RELU_N1_TO_1 = 2, PAR_TFL_ACT_RELU6 = 3,
       PAR_TFL_ACT_TANH = 4, PAR_TFL_ACT_SIGN_BIT = 5 };

/* The fields of every options table above, flattened: each table uses the ones its schema has (the field table in
 * tflite.c maps (options type, slot) to a member here, for the reader and the writer alike). */
typedef struct par_tfl_options {
    int32_t padding, stride_w, stride_h, dilation_w, dilation_h, depth_multiplier, filter_w, filter_h;
    int32_t activation, axis, keep_num_dims, keep_dims, weights_format, align_corners, half_pixel_centers;
    int32_t adj_x, adj_y, approximate, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
    int32_t pot_scale_int16, asymmetric_quantize_inputs, offset;
    float beta, alpha;
    int32_t n_ints;        /* ReshapeOptions.new_shape / SqueezeOptions.squeeze_dims */
    int32_t *ints;
    int has_ints;          /* the vector was present (possibly empty) */
} par_tfl_options;

typedef struct par_tfl_quant {
    int32_t n_scale, n_zero_point, n_min, n_max;
    float *scale;
    int64_t *zero_point;
    float *min, *max;
    int32_t quantized_dimension;
} par_tfl_quant;

typedef struct par_tfl_tensor {
    const char *name;      /* "" when absent */
    int32_t type;          /* TensorType */
    int32_t rank;
    int32_t shape[PAR_TFL_MAX_RANK];
    int has_shape_signature;
    int32_t shape_signature[PAR_TFL_MAX_RANK];
    uint32_t buffer;       /* index into buffers (0: the empty sentinel buffer) */
    par_tfl_quant *quant;  /* NULL when absent */
    int is_variable;
    int has_sparsity;      /* sparse tensors are not imported */
} par_tfl_tensor;

typedef struct par_tfl_op {
    uint32_t opcode_index;
    int32_t n_inputs, n_outputs, n_intermediates;
    int32_t *inputs;       /* tensor indices, -1 for an absent optional input */
    int32_t *outputs;
    uint8_t options_type;  /* BuiltinOptions union type */
    par_tfl_options opt;
    uint8_t *custom_options;
    uint32_t n_custom_options;
} par_tfl_op;

typedef struct par_tfl_subgraph {
    const char *name;
    int32_t n_tensors, n_inputs, n_outputs, n_ops;
    par_tfl_tensor *tensors;
    int32_t *inputs, *outputs;
    par_tfl_op *ops;
} par_tfl_subgraph;

typedef struct par_tfl_opcode {
    int32_t builtin;       /* max(deprecated_builtin_code, builtin_code), the schema's rule */
    const char *custom;    /* NULL unless CUSTOM */
    int32_t version;
} par_tfl_opcode;

typedef struct par_tfl_buffer {
    const uint8_t *data;   /* NULL when empty */
    uint64_t size;
} par_tfl_buffer;

typedef struct par_tfl_arena par_tfl_arena;

typedef struct par_tfl_model {
    uint32_t version;
    const char *description;
    int32_t n_opcodes, n_subgraphs, n_buffers;
    par_tfl_opcode *opcodes;
    par_tfl_subgraph *subgraphs;
    par_tfl_buffer *buffers;
    par_tfl_arena *arena;
} par_tfl_model;

/* The name of a builtin operator code ("CONV_2D"), "UNKNOWN" beyond the table. */
const char *par_tfl_op_name(int32_t code);
/* Bytes per element of a TensorType (0 for string and unknown types). */
size_t par_tfl_type_size(int32_t type);
const char *par_tfl_type_name(int32_t type);

/* Parse bytes (origin names them in messages) / a file. NULL with msg set on any error. */
par_tfl_model *par_tfl_parse(const uint8_t *buf, size_t len, const char *origin, par_msg *msg);
par_tfl_model *par_tfl_load(const char *path, par_msg *msg);
void par_tfl_free(par_tfl_model *m); /* NULL is a no-op */

/* Building a model in memory for the writer: an empty model with its arena, and allocations in it (zeroed). */
par_tfl_model *par_tfl_new(void);
void *par_tfl_alloc(par_tfl_model *m, size_t size);
char *par_tfl_strdup(par_tfl_model *m, const char *s);

/* Encode (malloc'ed bytes, *len). NULL with msg set when the model cannot be written (beyond 2 GiB, bad indices). */
uint8_t *par_tfl_write(const par_tfl_model *m, size_t *len, par_msg *msg);

/* formats/model.h's entry points for TFLite. */
par_case *par_tflite_import(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg);
par_status par_tflite_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                                 par_import_info *info, par_msg *msg);
par_status par_tflite_export(const par_case *c, const char *path, par_msg *msg);
/* The same on memory: a parsed model as a case (id names it), and a case as a model. */
par_case *par_tflite_import_model(const par_tfl_model *m, const char *id, const char *origin,
                                  const par_import_opts *o, par_import_info *info, par_msg *msg);
par_tfl_model *par_tflite_export_model(const par_case *c, par_msg *msg);
/* The same from a graph as a backend sees it (its constants' data included); *st says why on NULL. */
par_tfl_model *par_tflite_export_graph(const par_graph_desc *g, const char *name, par_status *st, par_msg *msg);

#endif

/* ---- the options field table, shared by the reader and the writer --------------------------------------------- */

typedef enum par_tfl_field_kind { PAR_TFL_F_BYTE = 1, PAR_TFL_F_INT = 2, PAR_TFL_F_FLOAT = 3, PAR_TFL_F_INTS = 4 } par_tfl_field_kind;

typedef struct par_tfl_field {
    uint8_t options_type;  /* BuiltinOptions union type */
    uint8_t slot;          /* field id in its table */
    uint8_t kind;          /* par_tfl_field_kind */
    size_t member;         /* offsetof(par_tfl_options, ...) */
    double def;            /* the schema's default */
} par_tfl_field;

/* Every field the reader decodes and the writer encodes; n gets the count. */
const par_tfl_field *par_tfl_fields(int32_t *n);
/* Whether an options type is one parity knows (its fields are in the table, or it has none). */
int par_tfl_options_known(int32_t options_type);
/* The schema defaults of an options type (dilations 1, pot_scale_int16 1, the rest 0). */
void par_tfl_options_default(par_tfl_options *o, int32_t options_type);

/* ---- the op correspondence, one table for the importer and the exporter --------------------------------------- */

/* How an op is mapped; each direction has one handler per family. */
typedef enum par_tfl_family {
    PAR_TFL_K_CONV = 1,    /* CONV_2D <-> conv2d (OHWI <-> OIHW) */
    PAR_TFL_K_DWCONV,      /* DEPTHWISE_CONV_2D <-> conv2d with groups = C, weights [C*m, 1, kh, kw] */
    PAR_TFL_K_FC,          /* FULLY_CONNECTED <-> linear */
    PAR_TFL_K_BINARY,      /* ADD / SUB / MUL / DIV / MAXIMUM / MINIMUM / POW <-> add / sub / mul / div / maximum /
                            * minimum / pow (broadcasting, fused activation where the op has one) */
    PAR_TFL_K_POOL,        /* AVERAGE_POOL_2D / MAX_POOL_2D <-> avg_pool2d / max_pool2d */
    PAR_TFL_K_REDUCE,      /* MEAN / SUM / REDUCE_MAX <-> mean / sum / amax */
    PAR_TFL_K_RESHAPE,     /* RESHAPE <-> reshape (flatten exports as RESHAPE too) */
    PAR_TFL_K_SQUEEZE,     /* SQUEEZE -> reshape (import only) */
    PAR_TFL_K_SOFTMAX,     /* SOFTMAX / LOG_SOFTMAX <-> softmax / log_softmax on the last axis */
    PAR_TFL_K_CONCAT,      /* CONCATENATION <-> concat */
    PAR_TFL_K_PAD,         /* PAD / PADV2 <-> pad (constant mode) */
    PAR_TFL_K_UNARY,       /* elementwise ops of one input */
    PAR_TFL_K_PRELU,       /* PRELU <-> prelu (per-channel slope) */
    PAR_TFL_K_QUANTIZE,    /* QUANTIZE <-> quantize */
    PAR_TFL_K_DEQUANTIZE,  /* DEQUANTIZE <-> dequantize (of a constant: folded at import) */
    PAR_TFL_K_RESIZE,      /* RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR <-> upsample_*2d */
    PAR_TFL_K_TRANSPOSE,   /* TRANSPOSE <-> permute */
    PAR_TFL_K_SLICE,       /* STRIDED_SLICE <-> slice (one per sliced axis) */
    PAR_TFL_K_BMM,         /* BATCH_MATMUL <-> matmul */
} par_tfl_family;

typedef struct par_tfl_opmap {
    int32_t code;          /* BuiltinOperator */
    uint8_t options_type;  /* its BuiltinOptions type (NONE for ops without options) */
    par_tfl_family family;
    const char *par_op;    /* the parity op */
} par_tfl_opmap;

/* The entry of a TFLite op code / the first entry of a parity op (NULL when none). */
const par_tfl_opmap *par_tfl_opmap_code(int32_t code);
const par_tfl_opmap *par_tfl_opmap_par(const char *par_op);
