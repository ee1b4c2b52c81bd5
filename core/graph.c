/*
 * graph.c - the graph builder: values, nodes, attributes (checked against the op schema, defaults filled in),
 * shape inference at node insertion, and the read-only par_graph_desc view. Owns all of its memory in an arena.
 * It does not know any op's semantics: shape rules come from the op table's infer hooks.
 */
#include "graph.h"

#include <math.h>
#include <stdlib.h>

#define PAR_MAX_NUMEL (INT64_C(1) << 28)

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(64) unsigned char mem[];
} arena_block;

struct par_graph {
    char *name;
    arena_block *arena;
    par_value *values;
    int32_t n_values, cap_values;
    par_node *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t *inputs;
    int32_t n_inputs, cap_inputs;
    int32_t *outputs;
    int32_t n_outputs, cap_outputs;
    int finalized;
    par_graph_desc desc;
};

static void *galloc(par_graph *g, size_t size)
{
    size = (size + 63) & ~(size_t)63;
    if (size == 0) size = 64;
    arena_block *b = g->arena;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->used = 0;
        nb->cap = cap;
        if (size > 65536 && b) { /* a big block goes behind the current one so the current keeps filling */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            g->arena = nb;
        }
        b = nb;
    }
    void *p = b->mem + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

static char *gstrdup(par_graph *g, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = galloc(g, n);
    if (d) memcpy(d, s, n);
    return d;
}

static int grow(void **arr, int32_t *cap, int32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    int32_t nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *p = realloc(*arr, (size_t)nc * elem);
    if (!p) return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

par_graph *par_graph_create(const char *name)
{
    par_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = gstrdup(g, name ? name : "graph");
    if (!g->name) {
        free(g);
        return NULL;
    }
    return g;
}

void par_graph_destroy(par_graph *g)
{
    if (!g) return;
    for (arena_block *b = g->arena; b;) {
        arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(g->values);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g);
}

static int valid_name(const char *s)
{
    if (!s || !*s || strlen(s) > 200) return 0;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '\'' || *p == '"' || *p == '\\') return 0;
    return 1;
}

int32_t par_graph_find_value(const par_graph *g, const char *name)
{
    for (int32_t i = 0; i < g->n_values; i++)
        if (strcmp(g->values[i].name, name) == 0) return i;
    return -1;
}

const char *par_graph_name(const par_graph *g) { return g->name; }

/* Check a shape: rank 0..6, every dim in [1, 2^28], numel <= 2^28. */
static par_status check_shape(int32_t rank, const int64_t *dims, par_msg *msg)
{
    if (rank < 0 || rank > PAR_MAX_RANK)
        return par_msgf(msg, PAR_ERROR, "rank %d is outside 0..%d", (int)rank, PAR_MAX_RANK);
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 1) return par_msgf(msg, PAR_ERROR, "dimension %d is %lld; must be >= 1", (int)i, (long long)dims[i]);
        if (dims[i] > PAR_MAX_NUMEL || n > PAR_MAX_NUMEL / dims[i])
            return par_msgf(msg, PAR_ERROR, "more than 2^28 elements");
        n *= dims[i];
    }
    return PAR_OK;
}

static int32_t add_value(par_graph *g, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                         par_value_kind kind, par_msg *msg)
{
    if (g->finalized) return par_msgf(msg, PAR_ERROR, "graph is finalized"), -1;
    if (!valid_name(name)) return par_msgf(msg, PAR_ERROR, "invalid value name"), -1;
    if (par_graph_find_value(g, name) >= 0)
        return par_msgf(msg, PAR_ERROR, "value '%s' is defined twice", name), -1;
    if (par_dtype_size(dt) == 0 || dt == PAR_DTYPE_F64)
        return par_msgf(msg, PAR_ERROR, "value '%s': dtype %d is not a tensor dtype of graphs", name, (int)dt), -1;
    par_msg sm;
    if (check_shape(rank, dims, &sm) != PAR_OK)
        return par_msgf(msg, PAR_ERROR, "value '%s': shape: %s", name, sm.text), -1;
    if (grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values))
        return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
    par_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = gstrdup(g, name);
    if (!v->name) return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
    v->dtype = dt;
    v->rank = rank;
    for (int32_t i = 0; i < rank; i++) v->dims[i] = dims[i];
    v->numel = par_shape_numel(rank, dims);
    v->kind = kind;
    v->producer = -1;
    v->quant_axis = -1;
    v->scale = 1.0f;
    return g->n_values++;
}

int32_t par_graph_add_input(par_graph *g, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            par_msg *msg)
{
    int32_t v = add_value(g, name, dt, rank, dims, PAR_VALUE_INPUT, msg);
    if (v < 0) return -1;
    if (grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs))
        return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
    g->inputs[g->n_inputs++] = v;
    return v;
}

int32_t par_graph_add_const(par_graph *g, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data, par_msg *msg)
{
    if (!data) return par_msgf(msg, PAR_ERROR, "constant '%s' has no data", name ? name : "?"), -1;
    int32_t v = add_value(g, name, dt, rank, dims, PAR_VALUE_CONST, msg);
    if (v < 0) return -1;
    size_t bytes = (size_t)g->values[v].numel * par_dtype_size(dt);
    void *d = galloc(g, bytes);
    if (!d) return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
    memcpy(d, data, bytes);
    g->values[v].data = d;
    return v;
}

/* Quantization is set before any node reads the value: shape inference may have copied it into a node's output
 * (where takes its operands'), and a case read back sets it first, so a later change would not survive writing. */
static par_status check_unread(const par_graph *g, const par_value *v, int32_t value, par_msg *msg)
{
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] == value)
                return par_msgf(msg, PAR_ERROR, "value '%s' is already read by node '%s': set its quantization first",
                                v->name, g->nodes[i].name);
    return PAR_OK;
}

static par_status check_quant(par_dtype dt, float scale, int32_t zp, par_msg *msg)
{
    if (!(scale > 0.0f) || !isfinite(scale))
        return par_msgf(msg, PAR_ERROR, "scale %g must be finite and > 0", (double)scale);
    if (dt == PAR_DTYPE_QU8 && (zp < 0 || zp > 255))
        return par_msgf(msg, PAR_ERROR, "zero_point %d outside 0..255 for qu8", (int)zp);
    if (dt == PAR_DTYPE_QS8 && (zp < -128 || zp > 127))
        return par_msgf(msg, PAR_ERROR, "zero_point %d outside -128..127 for qs8", (int)zp);
    if (dt == PAR_DTYPE_I32 && zp != 0) return par_msgf(msg, PAR_ERROR, "zero_point of an i32 tensor must be 0");
    if (dt == PAR_DTYPE_QS16 && zp != 0)
        return par_msgf(msg, PAR_ERROR, "zero_point %d of a qs16 tensor must be 0 (symmetric)", (int)zp);
    if (dt != PAR_DTYPE_QU8 && dt != PAR_DTYPE_QS8 && dt != PAR_DTYPE_QS16 && dt != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_ERROR, "quantization given for a %s tensor", par_dtype_name(dt));
    return PAR_OK;
}

par_status par_graph_set_quant(par_graph *g, int32_t value, float scale, int32_t zero_point, par_msg *msg)
{
    if (g->finalized || value < 0 || value >= g->n_values) return par_msgf(msg, PAR_ERROR, "no such value");
    par_value *v = &g->values[value];
    /* A node's output gets its quantization from its declaration or from shape inference (which may take it from
     * an input, as where does): set here, it would be lost when the case is written and read back. */
    if (v->kind == PAR_VALUE_NODE)
        return par_msgf(msg, PAR_ERROR, "value '%s' is a node output: declare its quantization with the node",
                        v->name);
    if (check_unread(g, v, value, msg) != PAR_OK) return PAR_ERROR;
    par_msg m;
    if (check_quant(v->dtype, scale, zero_point, &m) != PAR_OK)
        return par_msgf(msg, PAR_ERROR, "value '%s': %s", v->name, m.text);
    v->scale = scale;
    v->zero_point = zero_point;
    v->quant_axis = -1;
    v->channel_scales = NULL;
    return PAR_OK;
}

par_status par_graph_set_channel_quant(par_graph *g, int32_t value, int32_t axis, const float *scales, int64_t n,
                                       par_msg *msg)
{
    if (g->finalized || value < 0 || value >= g->n_values) return par_msgf(msg, PAR_ERROR, "no such value");
    par_value *v = &g->values[value];
    if (v->dtype != PAR_DTYPE_QS8 || v->kind != PAR_VALUE_CONST)
        return par_msgf(msg, PAR_ERROR, "value '%s': per-channel scales are for qs8 constants only", v->name);
    if (check_unread(g, v, value, msg) != PAR_OK) return PAR_ERROR;
    int32_t ax = par_axis_norm(axis, v->rank);
    if (ax < 0) return par_msgf(msg, PAR_ERROR, "value '%s': quant axis %d out of range", v->name, (int)axis);
    if (n != v->dims[ax])
        return par_msgf(msg, PAR_ERROR, "value '%s': %lld scales for %lld channels", v->name, (long long)n,
                        (long long)v->dims[ax]);
    float *s = galloc(g, (size_t)n * sizeof *s);
    if (!s) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        if (!(scales[i] > 0.0f) || !isfinite(scales[i]))
            return par_msgf(msg, PAR_ERROR, "value '%s': scale[%lld] = %g must be finite and > 0", v->name,
                            (long long)i, (double)scales[i]);
        s[i] = scales[i];
    }
    v->quant_axis = ax;
    v->channel_scales = s;
    v->scale = s[0];
    v->zero_point = 0;
    return PAR_OK;
}

/* Copy one given attribute into graph storage, converted to the spec's type. */
static par_status take_attr(par_graph *g, const par_attr_spec *sp, const par_attr *a, par_attr *out, par_msg *msg)
{
    *out = (par_attr){0};
    out->name = sp->name;
    out->type = sp->type;
    switch (sp->type) {
    case PAR_ATTR_INT:
        if (a->type != PAR_ATTR_INT) return par_msgf(msg, PAR_ERROR, "expected an integer");
        out->i = a->i;
        return PAR_OK;
    case PAR_ATTR_FLOAT:
        if (a->type == PAR_ATTR_INT) out->f = (double)a->i;
        else if (a->type == PAR_ATTR_FLOAT) out->f = a->f;
        else return par_msgf(msg, PAR_ERROR, "expected a number");
        if (isnan(out->f)) return par_msgf(msg, PAR_ERROR, "NaN is not allowed");
        return PAR_OK;
    case PAR_ATTR_STRING:
        if (a->type != PAR_ATTR_STRING || !a->s) return par_msgf(msg, PAR_ERROR, "expected a string");
        if (sp->choices[0]) {
            const char *c = sp->choices;
            size_t len = strlen(a->s);
            int ok = 0;
            while (*c) {
                const char *e = strchr(c, '|');
                size_t cl = e ? (size_t)(e - c) : strlen(c);
                if (cl == len && strncmp(c, a->s, len) == 0) ok = 1;
                c += cl + (e ? 1 : 0);
            }
            if (!ok) return par_msgf(msg, PAR_ERROR, "'%.60s' is not one of %s", a->s, sp->choices);
        }
        out->s = gstrdup(g, a->s);
        return out->s ? PAR_OK : par_msgf(msg, PAR_ERROR, "out of memory");
    case PAR_ATTR_INTS:
    case PAR_ATTR_FLOATS: {
        int is_ints = sp->type == PAR_ATTR_INTS;
        if (is_ints ? a->type != PAR_ATTR_INTS : (a->type != PAR_ATTR_FLOATS && a->type != PAR_ATTR_INTS))
            return par_msgf(msg, PAR_ERROR, "expected a list of %s", is_ints ? "integers" : "numbers");
        if (a->count < 0 || a->count > 64) return par_msgf(msg, PAR_ERROR, "list of %d elements", (int)a->count);
        if (sp->fixed_count && a->count != sp->fixed_count)
            return par_msgf(msg, PAR_ERROR, "expected %d elements, got %d", (int)sp->fixed_count, (int)a->count);
        out->count = a->count;
        if (is_ints) {
            int64_t *v = galloc(g, (size_t)(a->count ? a->count : 1) * sizeof *v);
            if (!v) return par_msgf(msg, PAR_ERROR, "out of memory");
            for (int32_t i = 0; i < a->count; i++) v[i] = a->ints[i];
            out->ints = v;
        } else {
            double *v = galloc(g, (size_t)(a->count ? a->count : 1) * sizeof *v);
            if (!v) return par_msgf(msg, PAR_ERROR, "out of memory");
            for (int32_t i = 0; i < a->count; i++) {
                v[i] = a->type == PAR_ATTR_INTS ? (double)a->ints[i] : a->floats[i];
                if (isnan(v[i])) return par_msgf(msg, PAR_ERROR, "NaN is not allowed");
            }
            out->floats = v;
        }
        return PAR_OK;
    }
    }
    return par_msgf(msg, PAR_ERROR, "bad attribute type");
}

int32_t par_graph_add_node(par_graph *g, const char *op, const char *name, int32_t n_inputs, const int32_t *inputs,
                           int32_t n_attrs, const par_attr *attrs, const par_out_spec *outs, par_msg *msg)
{
    char autoname[64];
    const par_op_info *info = par_op_find(op);
    if (g->finalized) return par_msgf(msg, PAR_ERROR, "graph is finalized"), -1;
    if (!name) {
        snprintf(autoname, sizeof autoname, "%s%d", op ? op : "node", (int)g->n_nodes);
        name = autoname;
    }
    if (!valid_name(name)) return par_msgf(msg, PAR_ERROR, "node %d: invalid node name", (int)g->n_nodes), -1;
    if (!info) return par_msgf(msg, PAR_ERROR, "node '%s': unknown op '%.60s'", name, op ? op : "(null)"), -1;
#define NODE_ERR(...)                                                                                               \
    do {                                                                                                            \
        par_msg m_;                                                                                                 \
        snprintf(m_.text, sizeof m_.text, __VA_ARGS__);                                                             \
        par_msgf(msg, PAR_ERROR, "node '%s' (%s): %s", name, info->name, m_.text);                                  \
        return -1;                                                                                                  \
    } while (0)
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) NODE_ERR("node name used twice");
    if (n_inputs < info->in_min || n_inputs > info->in_max) {
        if (info->in_min == info->in_max) NODE_ERR("takes %d inputs, got %d", (int)info->in_min, (int)n_inputs);
        NODE_ERR("takes %d to %d inputs, got %d", (int)info->in_min, (int)info->in_max, (int)n_inputs);
    }
    for (int32_t i = 0; i < n_inputs; i++) {
        if (inputs[i] == -1 && i >= info->in_min) continue;
        if (inputs[i] == -1) NODE_ERR("input %d is required", (int)i);
        if (inputs[i] < 0 || inputs[i] >= g->n_values) NODE_ERR("input %d refers to no value", (int)i);
    }
    /* Attributes: each given one must be in the schema, once; then defaults; then required ones present. */
    par_attr *na = galloc(g, sizeof(par_attr) * (size_t)(info->n_attrs ? info->n_attrs : 1));
    if (!na) NODE_ERR("out of memory");
    int have[PAR_MAX_ATTRS] = {0};
    for (int32_t i = 0; i < n_attrs; i++) {
        int k = -1;
        for (int j = 0; j < info->n_attrs; j++)
            if (attrs[i].name && strcmp(attrs[i].name, info->attrs[j].name) == 0) k = j;
        if (k < 0) NODE_ERR("unknown attribute '%.60s'", attrs[i].name ? attrs[i].name : "(null)");
        if (have[k]) NODE_ERR("attribute '%s' given twice", info->attrs[k].name);
        par_msg am;
        if (take_attr(g, &info->attrs[k], &attrs[i], &na[k], &am) != PAR_OK)
            NODE_ERR("attribute '%s': %s", info->attrs[k].name, am.text);
        have[k] = 1;
    }
    for (int j = 0; j < info->n_attrs; j++) {
        if (have[j]) continue;
        if (!info->attrs[j].has_default) NODE_ERR("attribute '%s' is required", info->attrs[j].name);
        na[j] = info->attrs[j].def;
    }
    int32_t *nin = galloc(g, sizeof(int32_t) * (size_t)(n_inputs ? n_inputs : 1));
    int32_t *nout = galloc(g, sizeof(int32_t) * (size_t)info->n_out);
    if (!nin || !nout) NODE_ERR("out of memory");
    memcpy(nin, inputs, sizeof(int32_t) * (size_t)n_inputs);

    par_node node = {0};
    node.name = gstrdup(g, name);
    node.op = info->name;
    node.n_inputs = n_inputs;
    node.inputs = nin;
    node.n_outputs = info->n_out;
    node.outputs = nout;
    node.n_attrs = info->n_attrs;
    node.attrs = na;
    if (!node.name) NODE_ERR("out of memory");

    /* Output declarations and shape inference. */
    par_value ov[4];
    if (info->n_out > 4) NODE_ERR("too many outputs");
    char oname[4][256];
    for (int32_t k = 0; k < info->n_out; k++) {
        const par_out_spec *os = outs ? &outs[k] : NULL;
        memset(&ov[k], 0, sizeof ov[k]);
        if (os && os->name) snprintf(oname[k], sizeof oname[k], "%s", os->name);
        else if (info->n_out == 1) snprintf(oname[k], sizeof oname[k], "%s", name);
        else snprintf(oname[k], sizeof oname[k], "%s.%d", name, (int)k);
        if (!valid_name(oname[k])) NODE_ERR("output %d: invalid name", (int)k);
        if (par_graph_find_value(g, oname[k]) >= 0) NODE_ERR("output '%s' is defined twice", oname[k]);
        ov[k].name = oname[k];
        ov[k].quant_axis = -1;
        ov[k].scale = 1.0f;
        ov[k].producer = g->n_nodes;
        ov[k].kind = PAR_VALUE_NODE;
        if (os && os->dtype) {
            if (par_dtype_size(os->dtype) == 0 || os->dtype == PAR_DTYPE_F64)
                NODE_ERR("output '%s': invalid dtype", oname[k]);
            ov[k].dtype = os->dtype;
            if (par_dtype_is_quant(os->dtype) || os->dtype == PAR_DTYPE_I32) {
                par_msg qm;
                if (check_quant(os->dtype, os->scale, os->zero_point, &qm) != PAR_OK)
                    NODE_ERR("output '%s': %s", oname[k], qm.text);
                ov[k].scale = os->scale;
                ov[k].zero_point = os->zero_point;
            }
        } else {
            ov[k].dtype = n_inputs > 0 && inputs[0] >= 0 ? g->values[inputs[0]].dtype : PAR_DTYPE_F32;
            if (info->id == PAR_OP_DEQUANTIZE) ov[k].dtype = PAR_DTYPE_F32;
            if (par_dtype_is_quant(ov[k].dtype)) {
                /* a quantized result keeps input 0's quantization unless declared */
                ov[k].scale = g->values[inputs[0]].scale;
                ov[k].zero_point = g->values[inputs[0]].zero_point;
            }
        }
    }
    const par_graph_desc *d = par_graph_desc_of(g);
    par_msg im = {{0}};
    if (info->infer(d, &node, ov, &im) != PAR_OK) NODE_ERR("%s", im.text[0] ? im.text : "shape inference failed");
    for (int32_t k = 0; k < info->n_out; k++) {
        par_msg sm;
        if (check_shape(ov[k].rank, ov[k].dims, &sm) != PAR_OK) NODE_ERR("output '%s': %s", oname[k], sm.text);
        int32_t vi = add_value(g, oname[k], ov[k].dtype, ov[k].rank, ov[k].dims, PAR_VALUE_NODE, msg);
        if (vi < 0) return -1;
        par_value *v = &g->values[vi];
        v->producer = g->n_nodes;
        v->scale = ov[k].scale;
        v->zero_point = ov[k].zero_point;
        nout[k] = vi;
    }
#undef NODE_ERR
    if (grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return par_msgf(msg, PAR_ERROR, "out of memory"), -1;
    g->nodes[g->n_nodes] = node;
    return g->n_nodes++;
}

par_status par_graph_mark_output(par_graph *g, int32_t value, par_msg *msg)
{
    if (g->finalized) return par_msgf(msg, PAR_ERROR, "graph is finalized");
    if (value < 0 || value >= g->n_values) return par_msgf(msg, PAR_ERROR, "output refers to no value");
    const par_value *v = &g->values[value];
    if (v->kind != PAR_VALUE_NODE)
        return par_msgf(msg, PAR_ERROR, "output '%s' is a graph %s, not computed by a node", v->name,
                        v->kind == PAR_VALUE_INPUT ? "input" : "constant");
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == value) return par_msgf(msg, PAR_ERROR, "output '%s' is listed twice", v->name);
    if (grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs))
        return par_msgf(msg, PAR_ERROR, "out of memory");
    g->outputs[g->n_outputs++] = value;
    return PAR_OK;
}

par_status par_graph_finalize(par_graph *g, par_msg *msg)
{
    if (g->finalized) return PAR_OK;
    if (g->n_nodes == 0) return par_msgf(msg, PAR_ERROR, "graph '%s' has no nodes", g->name);
    if (g->n_outputs == 0) return par_msgf(msg, PAR_ERROR, "graph '%s' has no outputs", g->name);
    g->finalized = 1;
    return PAR_OK;
}

const par_graph_desc *par_graph_desc_of(const par_graph *g)
{
    par_graph *mg = (par_graph *)g; /* the view is refreshed in place: arrays may have moved */
    mg->desc.name = g->name;
    mg->desc.n_values = g->n_values;
    mg->desc.values = g->values;
    mg->desc.n_nodes = g->n_nodes;
    mg->desc.nodes = g->nodes;
    mg->desc.n_inputs = g->n_inputs;
    mg->desc.inputs = g->inputs;
    mg->desc.n_outputs = g->n_outputs;
    mg->desc.outputs = g->outputs;
    return &mg->desc;
}

par_dtype par_graph_compute_dtype(const par_graph_desc *g)
{
    static const par_dtype order[] = {PAR_DTYPE_QS16, PAR_DTYPE_QS8, PAR_DTYPE_QU8, PAR_DTYPE_F16, PAR_DTYPE_F32,
                                      PAR_DTYPE_I32, PAR_DTYPE_BOOL};
    unsigned seen = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t o = 0; o < g->nodes[n].n_outputs; o++) seen |= 1u << g->values[g->nodes[n].outputs[o]].dtype;
    if (g->n_nodes == 0)
        for (int32_t o = 0; o < g->n_outputs; o++) seen |= 1u << g->values[g->outputs[o]].dtype;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (seen & (1u << order[k])) return order[k];
    return PAR_DTYPE_INVALID;
}
