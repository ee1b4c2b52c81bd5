/*
 * onnx.h - ONNX model files (onnx.proto, IR version 3-9) in memory: a reader that decodes a ModelProto (and a
 * lone TensorProto, the node tests' test_data_set_N/input_K.pb) with every length, count and nesting checked, and a writer
 * that encodes the same structure back. Only what parity imports and exports is kept; unknown fields are skipped as
 * protobuf requires.
 *
 * Everything a model holds lives in one arena owned by the model: par_onnx_free releases it all. The builder
 * functions (par_onnx_new, par_onnx_alloc, par_onnx_strdup) let the exporter build a model in the same arena and
 * write it with par_onnx_write.
 *
 * Errors name the origin (the file), the protobuf path of the bad field and the reason, e.g.
 * "m.onnx: graph.node[3].attribute[1].ints: truncated varint at byte 1234". A hostile file is an error, never a
 * crash: lengths beyond the buffer, nesting deeper than PAR_ONNX_MAX_DEPTH, dims whose product overflows, data whose
 * size disagrees with dims and dtype, counts beyond the limits below.
 *
 * Must not: know parity's ops or build a graph (formats/onnx_import.c does); read external data files.
 */
#ifndef PAR_FORMATS_ONNX_H
#define PAR_FORMATS_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "core/parity_backend.h"

#define PAR_ONNX_MAX_RANK 8
#define PAR_ONNX_MAX_DEPTH 16               /* nested messages, subgraphs included */
#define PAR_ONNX_MAX_ELEMS (INT64_C(1) << 30) /* one tensor */

/* TensorProto.DataType */
typedef enum par_onnx_dtype {
    PAR_ONNX_UNDEFINED = 0,
    PAR_ONNX_FLOAT = 1,
    PAR_ONNX_UINT8 = 2,
    PAR_ONNX_INT8 = 3,
    PAR_ONNX_UINT16 = 4,
    PAR_ONNX_INT16 = 5,
    PAR_ONNX_INT32 = 6,
    PAR_ONNX_INT64 = 7,
    PAR_ONNX_STRING = 8,
    PAR_ONNX_BOOL = 9,
    PAR_ONNX_FLOAT16 = 10,
    PAR_ONNX_DOUBLE = 11,
    PAR_ONNX_UINT32 = 12,
    PAR_ONNX_UINT64 = 13,
    PAR_ONNX_COMPLEX64 = 14,
    PAR_ONNX_COMPLEX128 = 15,
    PAR_ONNX_BFLOAT16 = 16,
} par_onnx_dtype;

/* Bytes per element of a dtype's decoded data (bool 1, float16/bfloat16 2 as their bits); 0 for string, complex and
 * unknown types. */
size_t par_onnx_dtype_size(int32_t dtype);
/* "float", "int64", ...; "unknown" for anything else. */
const char *par_onnx_dtype_name(int32_t dtype);

typedef struct par_onnx_tensor {
    const char *name;      /* "" when absent */
    int32_t dtype;         /* par_onnx_dtype */
    int32_t rank;
    int64_t dims[PAR_ONNX_MAX_RANK];
    int64_t numel;         /* product of dims (1 for rank 0) */
    /* numel elements, little-endian, each par_onnx_dtype_size bytes, decoded from raw_data or from the typed field
     * (float_data, int32_data, int64_data, double_data, uint64_data; int32_data holds the narrow integer types,
     * bool and the 16-bit floats' bits as TensorProto says). NULL when numel is 0 or the dtype has no size. */
    void *data;
    int external;          /* data_location EXTERNAL (data in another file: not read, data NULL) */
    /* STRING: numel byte strings (string_data), NUL-terminated copies of string_lens[k] bytes each (a string may
     * hold NULs; a builder may leave string_lens NULL, then strlen counts). NULL otherwise. */
    const char *const *strings;
    const size_t *string_lens;
} par_onnx_tensor;

/* AttributeProto.AttributeType */
typedef enum par_onnx_attr_type {
    PAR_ONNX_ATTR_UNDEFINED = 0,
    PAR_ONNX_ATTR_FLOAT = 1,
    PAR_ONNX_ATTR_INT = 2,
    PAR_ONNX_ATTR_STRING = 3,
    PAR_ONNX_ATTR_TENSOR = 4,
    PAR_ONNX_ATTR_GRAPH = 5,
    PAR_ONNX_ATTR_FLOATS = 6,
    PAR_ONNX_ATTR_INTS = 7,
    PAR_ONNX_ATTR_STRINGS = 8,
    PAR_ONNX_ATTR_TENSORS = 9,
    PAR_ONNX_ATTR_GRAPHS = 10,
    PAR_ONNX_ATTR_SPARSE_TENSOR = 11,
    PAR_ONNX_ATTR_SPARSE_TENSORS = 12,
    PAR_ONNX_ATTR_TYPE_PROTO = 13,
    PAR_ONNX_ATTR_TYPE_PROTOS = 14,
} par_onnx_attr_type;

struct par_onnx_graph;

typedef struct par_onnx_attr {
    const char *name;
    int32_t type;          /* par_onnx_attr_type; when the file leaves it 0 (IR < 2), inferred from the field set */
    float f;
    int64_t i;
    const char *s;         /* NUL-terminated copy; s_len bytes (a string attribute may hold NULs) */
    size_t s_len;
    int32_t n;             /* element count of floats / ints / strings / tensors / graphs */
    const float *floats;
    const int64_t *ints;
    const char *const *strings;
    par_onnx_tensor *t;                /* TENSOR */
    struct par_onnx_graph *g;          /* GRAPH (If / Loop bodies) */
    par_onnx_tensor *tensors;          /* TENSORS: n */
    struct par_onnx_graph *graphs;     /* GRAPHS: n */
    const char *ref_attr_name;         /* a function body's reference; NULL when absent */
    const size_t *strings_lens;        /* STRINGS: the byte length of each (they may hold NULs); NULL: strlen */
    /* The fields this structure does not model (sparse_tensor 22, sparse_tensors 23, tp 14, type_protos 15): their
     * wire bytes, tags included, kept verbatim and written back as they are. NULL / 0 when none. */
    const uint8_t *other_fields;
    size_t other_fields_len;
} par_onnx_attr;

typedef struct par_onnx_node {
    const char *name;      /* "" when absent */
    const char *op_type;
    const char *domain;    /* "" for the default domain (ai.onnx) */
    int32_t n_inputs;
    const char *const *inputs;   /* "" for an absent optional input */
    int32_t n_outputs;
    const char *const *outputs;  /* "" for an absent optional output */
    int32_t n_attrs;
    par_onnx_attr *attrs;
} par_onnx_node;

/* ValueInfoProto with a tensor type; other types (sequence, map, optional) have elem_type 0 and rank -1. */
typedef struct par_onnx_value_info {
    const char *name;
    int32_t elem_type;     /* par_onnx_dtype; 0 when unknown */
    int32_t rank;          /* -1 when the shape is absent */
    int64_t dims[PAR_ONNX_MAX_RANK];          /* -1 for a symbolic or unknown dimension */
    const char *dim_params[PAR_ONNX_MAX_RANK]; /* the symbolic name, or NULL */
    /* A type other than a tensor's (sequence, map, optional, sparse tensor): its encoded TypeProto, kept verbatim and
     * written back as it is. NULL / 0 for a tensor type or none. */
    const uint8_t *type_proto;
    size_t type_proto_len;
} par_onnx_value_info;

typedef struct par_onnx_graph {
    const char *name;
    int32_t n_nodes;
    par_onnx_node *nodes;
    int32_t n_initializers;
    par_onnx_tensor *initializers;
    int32_t n_inputs;
    par_onnx_value_info *inputs;      /* may include initializers (IR < 4 style) */
    int32_t n_outputs;
    par_onnx_value_info *outputs;
    int32_t n_value_info;
    par_onnx_value_info *value_info;
    const char *doc_string;           /* NULL when absent */
} par_onnx_graph;

typedef struct par_onnx_opset {
    const char *domain;               /* "" for ai.onnx */
    int64_t version;
} par_onnx_opset;

typedef struct par_onnx_model {
    int64_t ir_version;
    const char *producer_name;        /* "" when absent */
    const char *producer_version;
    const char *doc_string;           /* NULL when absent */
    int32_t n_opsets;
    par_onnx_opset *opsets;
    par_onnx_graph graph;
    struct par_onnx_arena *arena;     /* owns everything above */
} par_onnx_model;

/* Decode a ModelProto from bytes / a file. NULL with msg set ("origin: path: reason") on any error. */
par_onnx_model *par_onnx_parse(const uint8_t *buf, size_t len, const char *origin, par_msg *msg);
par_onnx_model *par_onnx_load(const char *path, par_msg *msg);
void par_onnx_free(par_onnx_model *m); /* NULL is a no-op */

/* The opset version imported for a domain ("" and "ai.onnx" are the same), 0 when the model imports none. */
int64_t par_onnx_opset_version(const par_onnx_model *m, const char *domain);

/* A lone TensorProto (a node test's input_K.pb / output_K.pb), decoded into the arena of a fresh model (free it
 * with par_onnx_free; the tensor is m->graph.initializers[0]). NULL with msg set on any error. */
par_onnx_model *par_onnx_tensor_load(const char *path, par_msg *msg);
par_onnx_model *par_onnx_tensor_parse(const uint8_t *buf, size_t len, const char *origin, par_msg *msg);

/* Building a model to write: an empty model (ir_version 8, no opsets) whose arena the builder allocates from.
 * par_onnx_alloc returns zeroed memory or NULL; par_onnx_strdup NULL for NULL. Arrays in the structures above are
 * allocated with par_onnx_alloc and filled in by the caller. */
par_onnx_model *par_onnx_new(void);
void *par_onnx_alloc(par_onnx_model *m, size_t size);
char *par_onnx_strdup(par_onnx_model *m, const char *s);

/* Encode a model as a ModelProto (malloc'ed bytes in *out, length *len; the caller frees). Tensors are written with
 * raw_data; attributes with their type set. PAR_ERROR with msg on a structure it cannot encode (a NULL name, a
 * tensor whose data is missing). */
par_status par_onnx_write(const par_onnx_model *m, uint8_t **out, size_t *len, par_msg *msg);
/* par_onnx_write into a file, written atomically (core/files.h). */
par_status par_onnx_save(const par_onnx_model *m, const char *path, par_msg *msg);
/* A lone TensorProto (test data), as above. */
par_status par_onnx_tensor_write(const par_onnx_tensor *t, uint8_t **out, size_t *len, par_msg *msg);

#endif
