/*
 * tflite_export_int.h - what the TFLite exporter's files share: the driver (tflite_export.c: the model, node
 * by node), the op writers (tflite_export_ops.c: one function per op family; tflite_export_attn.c the decoder-block
 * ops as compositions) and their building blocks
 * (tflite_export_util.c: tensors, buffers, quantization, operators, layouts).
 * The helpers are par_tfx_* outside these two files; function-like macros keep their short names inside. Internal
 * to formats/.
 */
#ifndef PAR_FORMATS_TFLITE_EXPORT_INT_H
#define PAR_FORMATS_TFLITE_EXPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "formats/tflite.h"

#define MAXR PAR_TFL_MAX_RANK

typedef struct ex {
    const par_graph_desc *g;
    par_tfl_model *m;
    par_msg *msg;
    int32_t node;           /* the node being written, -1 outside */
    par_status st;
    par_tfl_tensor *t;
    int32_t n_t, cap_t;
    par_tfl_op *ops;
    int32_t n_ops, cap_ops;
    par_tfl_buffer *b;
    int32_t n_b, cap_b;
    par_tfl_opcode *codes;
    int32_t n_codes, cap_codes;
    int32_t *tv;            /* per value: its tensor (-1 until made) */
    int32_t *raw;           /* per value: its tensor in parity's order (rank 4 only) */
} ex;

static const int32_t TO_NHWC[4] = {0, 2, 3, 1}; /* L.dims[j] = V.dims[TO_NHWC[j]] */
static const int32_t TO_NCHW[4] = {0, 3, 1, 2}; /* V.dims[j] = L.dims[TO_NCHW[j]] */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int par_tfx_fail(ex *e, par_status st, const char *fmt, ...);
int32_t par_tfx_tfl_type(par_dtype dt);
int32_t par_tfx_buffer(ex *e, const void *data, size_t size);
int32_t par_tfx_tensor(ex *e, const char *name, int32_t type, int32_t rank, const int64_t *shape, int32_t buf);
int par_tfx_quant(ex *e, int32_t ti, const par_value *v, int32_t axis);
int32_t par_tfx_make_tensor(ex *e, int32_t vi, const int32_t *p, const char *suffix);
void par_tfx_fwd(int32_t r, int32_t *p);
int32_t par_tfx_tv(ex *e, int32_t vi);
par_tfl_op *par_tfx_op(ex *e, int32_t code, int32_t n_in, const int32_t *ins, int32_t out);
int32_t par_tfx_const_i32(ex *e, const char *name, int32_t n, const int64_t *vals, int pairs);
int32_t par_tfx_transpose(ex *e, int32_t x, int32_t r, const int32_t *perm, const char *name);
int32_t par_tfx_raw_in(ex *e, int32_t vi);
int32_t par_tfx_raw_out(ex *e, int32_t vi);
int par_tfx_finish_raw(ex *e, int32_t vi, int32_t r);

#define fail(...) par_tfx_fail(__VA_ARGS__)
#define tfl_type(...) par_tfx_tfl_type(__VA_ARGS__)
#define buffer(...) par_tfx_buffer(__VA_ARGS__)
#define tensor(...) par_tfx_tensor(__VA_ARGS__)
#define quant(...) par_tfx_quant(__VA_ARGS__)
#define make_tensor(...) par_tfx_make_tensor(__VA_ARGS__)
#define fwd(...) par_tfx_fwd(__VA_ARGS__)
#define tv(...) par_tfx_tv(__VA_ARGS__)
#define op(...) par_tfx_op(__VA_ARGS__)
#define const_i32(...) par_tfx_const_i32(__VA_ARGS__)
#define transpose(...) par_tfx_transpose(__VA_ARGS__)
#define raw_in(...) par_tfx_raw_in(__VA_ARGS__)
#define raw_out(...) par_tfx_raw_out(__VA_ARGS__)
#define finish_raw(...) par_tfx_finish_raw(__VA_ARGS__)
#define UNSUP(...) fail(e, PAR_UNSUPPORTED, __VA_ARGS__)

/* One node of the graph into the model (tflite_export_ops.c): 1, or 0 with e->st set. */
int par_tfx_node(ex *e, const par_node *n);
/* The decoder-block ops' writers (tflite_export_attn.c): 1 written, 0 failed, -1 not a decoder-block op. */
int par_tfx_attn(ex *e, const par_node *n);

#endif
