/*
 * graph.h - the graph IR: a builder that owns its memory and exposes a read-only par_graph_desc view (the view is
 * what the reference and the backends see).
 *
 * Nodes are added in topological order by construction: a node's inputs must exist when it is added. Adding a node
 * checks its arity and attributes against the op's schema, fills in defaults, and infers its output shapes at once,
 * so an error names the node, the attribute and the reason. Nothing here knows an op's semantics.
 */
#ifndef PAR_GRAPH_H
#define PAR_GRAPH_H

#include "ops.h"
#include "shape.h" /* par_shape_numel, par_axis_norm, par_shape_format */

typedef struct par_graph par_graph;

/* How a node output is declared: a name, and for quantized outputs the dtype and quantization. dtype 0 = the op's
 * default (input 0's dtype; f32 for dequantize). */
typedef struct par_out_spec {
    const char *name;
    par_dtype dtype;
    float scale;
    int32_t zero_point;
} par_out_spec;

par_graph *par_graph_create(const char *name);
void par_graph_destroy(par_graph *g); /* NULL is a no-op */

/* Each returns the new value's index, or -1 with msg set (bad name, duplicate name, bad rank or dimension). */
int32_t par_graph_add_input(par_graph *g, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            par_msg *msg);
/* Copies numel * dtype-size bytes from data. */
int32_t par_graph_add_const(par_graph *g, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data, par_msg *msg);
/* Quantization of an input or constant (per-tensor; a node output is refused: its node declares it), or per-channel
 * scales (qs8 constants only). */
par_status par_graph_set_quant(par_graph *g, int32_t value, float scale, int32_t zero_point, par_msg *msg);
par_status par_graph_set_channel_quant(par_graph *g, int32_t value, int32_t axis, const float *scales, int64_t n,
                                       par_msg *msg);

/* Add a node. inputs: value indices (-1 for an absent optional input). attrs: any subset of the op's schema (copied).
 * outs: n_out declarations (names must be new). name may be NULL (then "<op><index>"). Returns the node index or
 * -1 with msg set, e.g. "node 'conv0' (conv2d): attribute 'groups': 3 does not divide 8 input channels". */
int32_t par_graph_add_node(par_graph *g, const char *op, const char *name, int32_t n_inputs, const int32_t *inputs,
                           int32_t n_attrs, const par_attr *attrs, const par_out_spec *outs, par_msg *msg);

/* Declare a graph output (any value). */
par_status par_graph_mark_output(par_graph *g, int32_t value, par_msg *msg);

/* Final checks (at least one output, every input used or not, ...). After this the graph is immutable. */
par_status par_graph_finalize(par_graph *g, par_msg *msg);

const par_graph_desc *par_graph_desc_of(const par_graph *g);
int32_t par_graph_find_value(const par_graph *g, const char *name); /* -1 if none */
const char *par_graph_name(const par_graph *g);

/* The dtype a graph computes in, for grouping cases in reports: the first of qs8, qu8, f16, f32, i32, bool that
 * some node's output (or, in a graph without nodes, some graph output) has. */
par_dtype par_graph_compute_dtype(const par_graph_desc *g);

/* Attribute constructors for builders (the graph copies what they point to). */
static inline par_attr par_a_int(const char *name, int64_t v)
{
    par_attr a = {0};
    a.name = name; a.type = PAR_ATTR_INT; a.i = v;
    return a;
}
static inline par_attr par_a_float(const char *name, double v)
{
    par_attr a = {0};
    a.name = name; a.type = PAR_ATTR_FLOAT; a.f = v;
    return a;
}
static inline par_attr par_a_ints(const char *name, int32_t count, const int64_t *v)
{
    par_attr a = {0};
    a.name = name; a.type = PAR_ATTR_INTS; a.count = count; a.ints = v;
    return a;
}
static inline par_attr par_a_floats(const char *name, int32_t count, const double *v)
{
    par_attr a = {0};
    a.name = name; a.type = PAR_ATTR_FLOATS; a.count = count; a.floats = v;
    return a;
}
static inline par_attr par_a_str(const char *name, const char *s)
{
    par_attr a = {0};
    a.name = name; a.type = PAR_ATTR_STRING; a.s = s;
    return a;
}

#endif
