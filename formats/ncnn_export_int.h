/*
 * ncnn_export_int.h - what the ncnn exporter's three files share: the driver (ncnn_export.c: inputs, nodes,
 * outputs, the container), the op writers (ncnn_export_ops.c: one function per op family, in one table) and their
 * building blocks (ncnn_export_util.c: the .param text, the .bin, blob names, splits, constants, shapes).
 *
 * Shapes: ncnn's blobs are one image without its batch: 1-D w, 2-D (h, w), 3-D (c, h, w), 4-D (c, d, h, w). Every
 * value of parity's graph of rank r >= 2 maps to rank r - 1 by dropping its leading dimension, which must be 1
 * (NCHW [1, C, H, W] is ncnn's (c, h, w), the same bytes); a rank-1 value stays 1-D (w); rank 0 and ranks above 5
 * have no ncnn form. `nd` below is a blob's ncnn shape outer-first (c, d, h, w order, as parity's dims). Internal
 * to formats/.
 */
#ifndef PAR_FORMATS_NCNN_EXPORT_INT_H
#define PAR_FORMATS_NCNN_EXPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/parity_backend.h"

#define NX_MAXR 4

typedef struct nx_buf {
    char *p;
    size_t len, cap;
} nx_buf;

typedef struct nx_shape {
    int32_t r;              /* 1..4 */
    int64_t d[NX_MAXR];     /* outer-first */
} nx_shape;

typedef struct nx {
    const par_graph_desc *g;
    par_msg *msg;
    par_status st;          /* PAR_OK until a failure */
    const par_node *node;   /* the node being written, NULL outside */
    nx_buf param;           /* the layer lines */
    nx_buf bin;             /* the weights */
    int32_t n_layers, n_blobs, serial;
    int32_t *split;         /* per value: how many of its split's outputs were handed out; -1: not split */
    int32_t *nsplit;        /* per value: how many read it (layers and graph outputs); > 1: through a Split */
    char (*blob)[48];       /* per value: its blob's name ("" until made) */
} nx;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int par_nx_no(nx *e, const char *fmt, ...);
int par_nx_shape_of(nx *e, const par_value *v, nx_shape *s);
int par_nx_axis(nx *e, const par_value *v, int64_t axis, int32_t *out);
const char *par_nx_fresh(nx *e, char *buf, const char *base);
int par_nx_put(nx_buf *b, const void *p, size_t n);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int par_nx_printf(nx *e, const char *fmt, ...);
int par_nx_layer(nx *e, const char *type, const char *name, int32_t n_in, const char *const *in, int32_t n_out,
                 const char *const *out);
int par_nx_pi(nx *e, int id, int64_t v);
int par_nx_pf(nx *e, int id, double v);
int par_nx_pints(nx *e, int id, int32_t n, const int32_t *v);
int par_nx_shape_params(nx *e, const nx_shape *s);
int par_nx_end(nx *e);
int par_nx_weights(nx *e, const par_value *v, int tagged);
int par_nx_floats(nx *e, const float *f, int64_t n, int tagged);
const char *par_nx_in(nx *e, int32_t vi);
const char *par_nx_in_shaped(nx *e, int32_t vi, const nx_shape *want);
const char *par_nx_out(nx *e, int32_t vi);
const char *par_nx_reshape(nx *e, const char *from, const nx_shape *s, const char *to);

#define no(...) par_nx_no(__VA_ARGS__)
#define shape_of(...) par_nx_shape_of(__VA_ARGS__)
#define axis_of(...) par_nx_axis(__VA_ARGS__)
#define fresh(...) par_nx_fresh(__VA_ARGS__)
#define layer(...) par_nx_layer(__VA_ARGS__)
#define pi(...) par_nx_pi(__VA_ARGS__)
#define pf(...) par_nx_pf(__VA_ARGS__)
#define pints(...) par_nx_pints(__VA_ARGS__)
#define shape_params(...) par_nx_shape_params(__VA_ARGS__)
#define end_layer(...) par_nx_end(__VA_ARGS__)
#define weights(...) par_nx_weights(__VA_ARGS__)
#define floats(...) par_nx_floats(__VA_ARGS__)
#define in_blob(...) par_nx_in(__VA_ARGS__)
#define in_shaped(...) par_nx_in_shaped(__VA_ARGS__)
#define out_blob(...) par_nx_out(__VA_ARGS__)
#define reshape_to(...) par_nx_reshape(__VA_ARGS__)

/* One node of the graph into the param and bin (ncnn_export_ops.c): 1, or 0 with e->st and e->msg set. */
int par_nx_node(nx *e, const par_node *n);

#endif
