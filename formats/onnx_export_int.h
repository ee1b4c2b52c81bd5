/*
 * onnx_export_int.h - what the ONNX exporter's files share: the driver and the op writers (onnx_export.c: the
 * graph, node by node, through the table of one writer per parity op; onnx_export_attn.c the decoder-block ops'
 * writers) and their building blocks (onnx_export_util.c:
 * fresh names, initializers, attributes, ONNX nodes, a value's float name beside its DequantizeLinear, a quantized
 * node's bias and output). The helpers are par_oxe_* outside these files; function-like macros keep their short
 * names inside. Internal to formats/.
 */
#ifndef PAR_FORMATS_ONNX_EXPORT_INT_H
#define PAR_FORMATS_ONNX_EXPORT_INT_H

#include <stdint.h>

#include "formats/onnx_int.h"

typedef struct ex {
    par_onnx_model *m;
    const par_graph_desc *g;
    par_msg *msg;
    par_onnx_node *nodes;
    int32_t n_nodes, cap_nodes;
    par_onnx_tensor *inits;
    int32_t n_inits, cap_inits;
    const char **fname;       /* per parity value: its float name (after a DequantizeLinear when quantized) */
    int32_t serial;
    const par_node *node;     /* the node being exported */
    char why[200];
} ex;

#define EX_OK 0
#define EX_NO 1
#define EX_ERR (-1)

/* An attribute list under construction. */
typedef struct attrs {
    par_onnx_attr a[8];
    int32_t n;
} attrs;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int par_oxe_no(ex *e, const char *fmt, ...);
const char *par_oxe_fresh(ex *e, const char *base);
par_onnx_tensor *par_oxe_add_init(ex *e, const char *name, int32_t dtype, int32_t rank, const int64_t *dims,
                                  const void *data);
const char *par_oxe_const_i64(ex *e, int32_t n, const int64_t *v);
const char *par_oxe_const_f32(ex *e, int32_t rank, const int64_t *dims, const float *v);
const char *par_oxe_scalar_f32(ex *e, float v);
void par_oxe_at_i(ex *e, attrs *l, const char *name, int64_t v);
void par_oxe_at_f(ex *e, attrs *l, const char *name, double v);
void par_oxe_at_s(ex *e, attrs *l, const char *name, const char *s);
void par_oxe_at_ints(ex *e, attrs *l, const char *name, int32_t n, const int64_t *v);
const char *par_oxe_node(ex *e, const char *op, int32_t n_in, const char *const *in, const char *out, const attrs *l);
int32_t par_oxe_onnx_dtype(par_dtype dt);
const char *par_oxe_in_name(ex *e, int32_t k);
const par_value *par_oxe_iv(ex *e, int32_t i);
const char *par_oxe_bias_name(ex *e, int32_t kb);
const char *par_oxe_out_name(ex *e);
int par_oxe_finish_out(ex *e, const char *fl);

/* The writers of the decoder-block ops (onnx_export_attn.c): what they compute, in opset 17's operators. */
int par_oxe_rms_norm(ex *e);
int par_oxe_rope(ex *e);
int par_oxe_sdpa(ex *e);
int par_oxe_slice_scatter(ex *e);

#define no(...) par_oxe_no(__VA_ARGS__)
#define fresh(...) par_oxe_fresh(__VA_ARGS__)
#define add_init(...) par_oxe_add_init(__VA_ARGS__)
#define const_i64(...) par_oxe_const_i64(__VA_ARGS__)
#define const_f32(...) par_oxe_const_f32(__VA_ARGS__)
#define scalar_f32(...) par_oxe_scalar_f32(__VA_ARGS__)
#define at_i(...) par_oxe_at_i(__VA_ARGS__)
#define at_f(...) par_oxe_at_f(__VA_ARGS__)
#define at_s(...) par_oxe_at_s(__VA_ARGS__)
#define at_ints(...) par_oxe_at_ints(__VA_ARGS__)
#define node(...) par_oxe_node(__VA_ARGS__)
#define onnx_dtype(...) par_oxe_onnx_dtype(__VA_ARGS__)
#define in_name(...) par_oxe_in_name(__VA_ARGS__)
#define iv(...) par_oxe_iv(__VA_ARGS__)
#define bias_name(...) par_oxe_bias_name(__VA_ARGS__)
#define out_name(...) par_oxe_out_name(__VA_ARGS__)
#define finish_out(...) par_oxe_finish_out(__VA_ARGS__)

#endif
