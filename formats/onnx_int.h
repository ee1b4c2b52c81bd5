/*
 * onnx_int.h - shared by the ONNX importer's parts: the values and the node being mapped (onnx_values.c), the op
 * table (onnx_ops.c: one mapping function per ONNX op type, folding, QDQ fusion), the driver that walks a graph
 * (onnx_import.c), op cases (onnx_import_ops.c) and the exporter (onnx_export.c). The driver calls the table and the
 * values; the table calls the values; nothing calls back up. Not a public header.
 */
#ifndef PAR_FORMATS_ONNX_INT_H
#define PAR_FORMATS_ONNX_INT_H

#include "formats/model.h"
#include "formats/onnx.h"

/* An ONNX value during import: a parity value (v >= 0), a constant known at import (data set; materialized as a
 * parity constant only when a node takes it as a tensor), or both. Folded constants hold int64 (integer and bool
 * dtypes) or float (float dtypes) elements in `data`, whatever their ONNX dtype. */
typedef struct ox_val {
    const char *name;          /* the ONNX name (the model's arena) */
    int32_t v;                 /* parity value index, -1 when not materialized */
    int32_t dtype;             /* ONNX dtype */
    int32_t rank;
    int64_t dims[PAR_ONNX_MAX_RANK];
    int64_t numel;
    int is_const;
    int from_data;             /* known only from a test data set (a graph input fixed for this test): never folded
                                * away when it is also a parity input, and a graph output computed from such values
                                * alone at import tests nothing */
    const void *raw;           /* const: the ONNX tensor's own data (initializers, Constant), or NULL */
    int64_t *ints;             /* const of an integer / bool dtype: every element (owned) */
    float *floats;             /* const of a float dtype: every element (owned) */
    int quantized;             /* a qu8 / qs8 value: its quantization */
    float scale;
    int32_t zero_point;
    int32_t q_axis;            /* per-axis (-1: per tensor) */
    float *q_scales;           /* per-axis scales (owned) */
    const char *dq_of;         /* a DequantizeLinear's output not made yet: the quantized value it reads (made by
                                * ox_tensor when a float consumer needs it; a QDQ-fused consumer reads the source) */
} ox_val;

typedef struct ox_imp {
    par_case *c;
    const par_onnx_model *m;
    int64_t opset;
    const char *origin;
    par_import_info *info;
    par_msg *msg;
    ox_val *vals;
    int32_t n_vals, cap_vals;
    int32_t *hash;             /* open addressing over vals by name; -1 empty */
    int32_t hash_cap;
    int32_t serial;            /* for generated names */
    int failed;                /* a hard error: msg is set */
    const par_onnx_node *node; /* the node being mapped */
    const char *twin;          /* its row's parity op (the one-to-one rows' mapping functions emit it) */
    char why[160];             /* an unsupported node's reason */
    /* QDQ fusion of the current node (ox_qdq_try): its dequantized inputs read as their quantized sources, its
     * output made as the following QuantizeLinear's */
    int fused;
    ox_val *in_override[8];
    const char *fuse_out;
    par_out_spec fuse_spec;
    int32_t skip_node;         /* a QuantizeLinear already mapped with its producer, or -1 */
} ox_imp;

/* Results of a mapping function. */
#define OX_OK 0
#define OX_UNSUPPORTED 1       /* im->why says what parity cannot express */
#define OX_ERROR (-1)          /* im->msg is set */

/* The value table (onnx_values.c): a name's value (NULL when undefined); a fresh definition of a name (a later
 * one replaces an earlier); everything freed. */
ox_val *ox_define(ox_imp *im, const char *name);
void ox_free_vals(ox_imp *im);
/* A parity name for an ONNX one (kept when valid and unused, else `<base>_<n>` in buf). */
const char *ox_pname(ox_imp *im, const char *name, const char *base, char *buf, size_t len);
/* The parity dtype of a value (PAR_DTYPE_INVALID: none, e.g. an int8 tensor without quantization). */
par_dtype ox_parity_dtype(const ox_val *x);
/* A constant's elements in a parity dtype (malloc'ed), NULL with why or msg set. */
void *ox_const_bytes(ox_imp *im, const ox_val *x, par_dtype dt);
/* Whether a value's rank and dims fit parity (why set when not). */
int ox_rank_ok(ox_imp *im, const ox_val *x);
/* A parity node whose output value is named oname (the node nodename, or a generated name when NULL). */
int32_t ox_emit_named(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs,
                      const par_attr *attrs, const char *oname, const char *nodename, const par_out_spec *spec);

/* A constant the mapping makes (named `<base>_<n>`): data in dtype dt; a one-element f32 [1] (broadcasts to any
 * shape). The value, -1 with msg set. */
int32_t ox_const_made(ox_imp *im, const char *base, par_dtype dt, int32_t rank, const int64_t *dims,
                      const void *data);
int32_t ox_scalar_f32(ox_imp *im, const char *base, float value);

/* Inputs, attributes and outputs of the node being mapped. */
ox_val *ox_in(ox_imp *im, int32_t i);                /* NULL when absent ("" or past the end) */
int32_t ox_n_in(const ox_imp *im);                   /* inputs given (trailing absent ones not counted) */
const par_onnx_attr *ox_attr(const ox_imp *im, const char *name);
int64_t ox_attr_i(const ox_imp *im, const char *name, int64_t def);
double ox_attr_f(const ox_imp *im, const char *name, double def);
const char *ox_attr_s(const ox_imp *im, const char *name, const char *def);
/* An ints attribute into out (at most max); its count, or -1 when absent. */
int32_t ox_attr_ints(const ox_imp *im, const char *name, int64_t *out, int32_t max);
int32_t ox_attr_floats(const ox_imp *im, const char *name, double *out, int32_t max);

/* A constant input's integer / float elements into out (at most max; more is unsupported); its count, or -1 when
 * the input is absent or not known at import (why set). */
int32_t ox_const_ints(ox_imp *im, ox_val *x, int64_t *out, int32_t max);
int32_t ox_const_floats(ox_imp *im, ox_val *x, double *out, int32_t max);

/* The parity value of an ONNX value, materializing a constant (-1 with why or msg set). */
int32_t ox_tensor(ox_imp *im, ox_val *x);

/* Add a parity node for output k of the current node (k < 0: an intermediate with a generated name) and define the
 * ONNX output. Returns the parity value, -1 on error. out_dt 0: f32 unless the node's first input is quantized
 * (then the graph builder's default). */
int32_t ox_emit(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs,
                int32_t k, const par_out_spec *spec);
/* A composition's steps: an intermediate node (its value; -1 when an input is -1 or the node is unsupported, why or
 * msg set) and the node that gives output 0 (OX_OK, OX_UNSUPPORTED or OX_ERROR). */
int32_t ox_step(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs);
int ox_last(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs);
/* The parity value of a tensor the node takes as data: as ox_tensor, except that an int64 test input becomes an i32
 * graph input (every value within 32 bits, else unsupported) instead of a constant folded away. */
int32_t ox_data_tensor(ox_imp *im, ox_val *x);
/* The ONNX value of output k of the current node, defined afresh (NULL when the output is absent). */
ox_val *ox_out(ox_imp *im, int32_t k);
/* Fuse the current node (index i of the graph) with its dequantized inputs and its one QuantizeLinear consumer into
 * parity's quantized op: OX_OK when done, OX_UNSUPPORTED when the pattern does not apply. */
int ox_qdq_try(ox_imp *im, int32_t i);

/* Define output k of the current node as an existing parity value (a no-op op such as Identity / Dropout). */
int ox_alias(ox_imp *im, int32_t k, int32_t v);
/* Define output k as a constant folded at import: ints (integer/bool dtypes) or floats (float dtypes), owned by the
 * importer from now on. */
int ox_fold(ox_imp *im, int32_t k, int32_t dtype, int32_t rank, const int64_t *dims, int64_t *ints, float *floats);

/* Decode an ONNX tensor into a constant value (its ints or floats). */
int ox_load_tensor(ox_imp *im, ox_val *x, const par_onnx_tensor *t);
/* A quantized (uint8 / int8) graph input, made when the first DequantizeLinear gives its quantization: the parity
 * input's value, -1 on error, -2 when x is not such an input. */
int32_t ox_quant_input(ox_imp *im, ox_val *x, float scale, int32_t zp);

/* Shape of a parity value. */
const par_value *ox_pv(const ox_imp *im, int32_t v);

int ox_unsupported(ox_imp *im, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int ox_error(ox_imp *im, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A constant float matrix [K, N] made [N, K] in place (its file bytes dropped). OX_OK or OX_ERROR. */
int ox_transpose_const(ox_imp *im, ox_val *x);
/* An axis counted from the end when negative. */
static inline int32_t ox_norm_axis(int64_t a, int32_t rank) { return (int32_t)(a < 0 ? a + rank : a); }
/* ONNX Reshape's output dims (0 copies the input's dim unless allowzero; one -1 inferred): OX_OK or why. */
int ox_reshape_dims(ox_imp *im, const int64_t *in, int32_t in_rank, int64_t in_numel, const int64_t *shape,
                    int32_t n, int64_t *out);

/* The op table (onnx_ops.c): the mapping function of an ONNX op type, NULL when parity lacks it (its row's parity
 * op is not in this build's op table); ox_map_node maps the current node with it (setting im->twin). */
typedef int (*ox_map_fn)(ox_imp *im);
ox_map_fn par_onnx_op_mapper(const char *op_type);
int ox_map_node(ox_imp *im);

/* The mapping functions of the other files (rows of the table). */
int ox_map_conv(ox_imp *im);
int ox_map_conv_transpose(ox_imp *im);
int ox_map_matmul(ox_imp *im);
int ox_map_gemm(ox_imp *im);
int ox_map_pool(ox_imp *im);
int ox_map_global_avg(ox_imp *im);
int ox_map_reduce(ox_imp *im);
int ox_map_arg(ox_imp *im);
/* A reduction's axes (attribute, or input 1 from opset 13 / 18; none: all), checked against x: OX_OK or why. */
int ox_reduce_axes(ox_imp *im, const par_value *xv, int64_t *ax, int32_t *n);
int ox_map_softmax(ox_imp *im);
int ox_map_batch_norm(ox_imp *im);
int ox_map_instance_norm(ox_imp *im);
int ox_map_layer_norm(ox_imp *im);
int ox_map_resize(ox_imp *im);
int ox_map_reduce_composite(ox_imp *im); /* onnx_map_compose.c */
int ox_map_selu(ox_imp *im);
int ox_map_thresholded_relu(ox_imp *im);
int ox_map_depth_space(ox_imp *im);
int ox_map_gather_elements(ox_imp *im);
int ox_map_nll(ox_imp *im);
int ox_map_sce(ox_imp *im);
int ox_map_elementwise_composite(ox_imp *im);
int ox_map_expand(ox_imp *im);
int ox_map_tile(ox_imp *im);
int ox_map_mvn(ox_imp *im);
int ox_map_gemm_any(ox_imp *im);
int ox_map_hardmax(ox_imp *im);
int ox_map_pow(ox_imp *im);
int ox_map_trilu(ox_imp *im); /* onnx_map_index.c */
int ox_map_cumsum(ox_imp *im);
int ox_map_compress(ox_imp *im);
int ox_map_onehot(ox_imp *im);
int ox_map_scatter(ox_imp *im);
int ox_map_gather_nd(ox_imp *im);
/* PRelu as where(x < 0, x * slope, x), for a slope parity's prelu does not take (OX_OK / OX_UNSUPPORTED). */
int ox_prelu_where(ox_imp *im, int32_t x, int32_t slope);
int ox_map_quantize(ox_imp *im);
int ox_map_dequantize(ox_imp *im);
/* Whether an op type is constant-folded when every input is known at import (shape arithmetic). */
int par_onnx_op_foldable(const char *op_type);
int ox_fold_node(ox_imp *im); /* fold the current node (all inputs constant); OX_UNSUPPORTED when it cannot */

/* What to import: the model file (for names and the ID), its test data set folder (NULL: generated inputs), the
 * --shape spec, and in op-case mode (each != NULL) a callback that receives every mappable node before it is
 * mapped, with the importer's values as they stand (the whole graph is then not built; an unmappable node is
 * listed and skipped). */
typedef struct ox_job {
    const char *path;
    const char *test_dir;
    const char *shapes;
    int (*each)(const struct ox_job *job, ox_imp *im);
    void *user;
} ox_job;

par_case *ox_import_model(const par_onnx_model *m, const ox_job *job, const par_import_opts *o,
                          par_import_info *info, par_msg *msg);
ox_val *ox_lookup(ox_imp *im, const char *name);

/* A ceil_mode pool's output along one axis differs between ONNX and PyTorch (parity) when ONNX's last window
 * would start in the end padding: PyTorch drops that window, ONNX (opset <= 17) keeps it (docs/formats.md). */
static inline int ox_ceil_pool_differs(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pt, int64_t pb)
{
    int64_t span = in + pt + pb - ((k - 1) * d + 1);
    if (span < 0) return 0;
    int64_t out = (span + s - 1) / s + 1;   /* ONNX: ceil(span / s) + 1 */
    return (out - 1) * s >= in + pt;       /* its last window starts past the input */
}

/* The ONNX halves of formats/model.h (onnx_import.c, onnx_export.c). */
par_case *par_onnx_import_file(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg);
par_onnx_model *par_onnx_export_model(const par_case *c, par_status *st, par_msg *msg);
/* The same from a graph as a backend sees it (its constants' data included); name: the graph's name. */
par_onnx_model *par_onnx_export_graph(const par_graph_desc *g, const char *name, par_status *st, par_msg *msg);
par_status par_onnx_export(const par_case *c, const char *path, par_msg *msg);
par_status par_onnx_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                               par_import_info *info, par_msg *msg);

#endif
