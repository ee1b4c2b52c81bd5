/*
 * example.c - the example backend: a naive float32 backend, built as a plugin, that implements every op of parity
 * for f32 graphs but linear_dynamic, linear_8da4w, linear_qd8 and matmul_qd8 (whose arithmetic is a dynamic-quantization
 * backend's integer one);
 * tests/report/test_coverage.sh fails when an op that takes f32 has no kernel here. It is the template to copy when writing a backend; docs/writing-a-backend.md explains the ABI.
 *
 * This file holds the backend table and its life cycle; the kernels (one short function per op, plain NCHW loops in
 * float32 arithmetic) are in example_conv.c, example_eltwise.c, example_norm.c, example_attention.c and
 * example_shape.c.
 *
 * Life cycle, as the harness drives it (every call from one thread; a child process serves cases one after another
 * while they pass, since this backend declares reuse):
 *
 *   parity_backend_entry(version)  returns the table below, or NULL when it cannot serve that ABI version.
 *   init                           creates the context (here: the knob settings).
 *   set_knob (through get_proc)    "check_finite=0|1", only before the first prepare.
 *   supports(node)                 for every node: PAR_OK, or PAR_UNSUPPORTED with the reason (an op or a dtype
 *                                  this backend does not do). UNSUPPORTED is an answer, never a failure.
 *   prepare(graph)                 plans the graph: one buffer per value. Constants are read in place from
 *                                  g->values[i].data (the graph stays valid until release); intermediates get a
 *                                  buffer owned by the plan; graph inputs and outputs alias the bound buffers.
 *                                  All memory is taken here, none in run.
 *   bind(inputs, outputs)          records the caller's buffers (logical NCHW, dense, the values' dtypes).
 *   run                            walks the nodes in graph order (the graph is topologically ordered). Timed, and
 *                                  repeated: it must give the same bits every time.
 *   reuse (through get_proc)       optional: nonzero when the context may serve the next case in the same process
 *                                  (then init once, destroy when the process ends; docs/reliability.md).
 *   node_outputs (through get_proc) optional, for localization: after prepare, buffers for chosen node values;
 *                                  run then copies each of them there once its node has run (every node value is
 *                                  held: this backend fuses nothing).
 *   release, destroy               free the plan, then the context; both accept NULL.
 *
 * Rules this backend keeps, as every backend must: it never writes outside the bound output buffers (the harness
 * guards them), it writes every output element on every run (outputs are poisoned before each run), it never writes
 * into an input buffer or a constant, and every failure comes back as a status with a one-line message naming what
 * failed and why. It must not include any parity header other than parity_backend.h.
 */
#include <stdlib.h>

#include "example.h"

#define EX_NAME "example"

typedef struct ex_ctx {
    int check_finite; /* knob: 1 makes run() fail when an f32 output holds a NaN */
    int prepared;     /* knobs are refused once a graph was prepared */
} ex_ctx;

/* ---------------------------------------------------------------------------------------------------------------
 * Dispatch: op name -> kernel. Names are the stable identity of an op across parity versions (node->op_id is the
 * harness's own numbering and may change), so a backend dispatches on the name. An op absent here is UNSUPPORTED;
 * adding an op is one line here plus its kernel.
 *
 * The dtype rule of this backend (column io): every tensor f32, except across the two boundary ops of a quantized
 * model (quantize: f32 -> qu8/qs8, dequantize: qu8/qs8 -> f32), which are plain float code too. Graphs whose other
 * ops run on qu8/qs8/f16 tensors are UNSUPPORTED: an integer backend would implement those.
 * ------------------------------------------------------------------------------------------------------------- */
typedef enum ex_io {
    EX_IO_F32 = 0,    /* every input and output f32 */
    EX_IO_QUANTIZE,   /* f32 in, qu8/qs8 out */
    EX_IO_DEQUANTIZE, /* qu8/qs8 in, f32 out */
    EX_IO_BOOL0,      /* input 0 bool (where's condition), the others f32 */
    EX_IO_BOOL1,      /* input 1 bool (masked_fill's mask), the others f32 */
    EX_IO_CMP,        /* f32 inputs, a bool output (comparisons) */
    EX_IO_BOOL,       /* every input and output bool (logic ops) */
    EX_IO_I32_0,      /* input 0 i32 (embedding's indices), the others f32 */
    EX_IO_I32_1,      /* input 1 i32 (gather's indices), the others f32 */
    EX_IO_INDEX,      /* f32 in, an i32 index out (argmax, argmin) */
} ex_io;

typedef struct ex_op {
    const char *op;
    ex_kernel_fn fn;
    ex_io io;
} ex_op;

static const ex_op kernel_table[] = {
    {"conv2d", ex_conv2d, EX_IO_F32},
    {"conv_transpose2d", ex_conv_transpose2d, EX_IO_F32},
    {"linear", ex_linear, EX_IO_F32},
    {"matmul", ex_matmul, EX_IO_F32},
    {"add", ex_add, EX_IO_F32},
    {"sub", ex_sub, EX_IO_F32},
    {"mul", ex_mul, EX_IO_F32},
    {"div", ex_div, EX_IO_F32},
    {"minimum", ex_minimum, EX_IO_F32},
    {"maximum", ex_maximum, EX_IO_F32},
    {"pow", ex_pow, EX_IO_F32},
    {"relu", ex_relu, EX_IO_F32},
    {"relu6", ex_clamp, EX_IO_F32},
    {"hardtanh", ex_clamp, EX_IO_F32},
    {"clamp", ex_clamp, EX_IO_F32},
    {"leaky_relu", ex_leaky_relu, EX_IO_F32},
    {"prelu", ex_prelu, EX_IO_F32},
    {"sigmoid", ex_sigmoid, EX_IO_F32},
    {"tanh", ex_tanh, EX_IO_F32},
    {"hardsigmoid", ex_hardsigmoid, EX_IO_F32},
    {"hardswish", ex_hardswish, EX_IO_F32},
    {"elu", ex_elu, EX_IO_F32},
    {"sqrt", ex_sqrt, EX_IO_F32},
    {"rsqrt", ex_rsqrt, EX_IO_F32},
    {"silu", ex_silu, EX_IO_F32},
    {"gelu", ex_gelu, EX_IO_F32},
    {"abs", ex_abs, EX_IO_F32},
    {"neg", ex_neg, EX_IO_F32},
    {"exp", ex_exp, EX_IO_F32},
    {"log", ex_log, EX_IO_F32},
    {"floor", ex_floor, EX_IO_F32},
    {"ceil", ex_ceil, EX_IO_F32},
    {"round", ex_round, EX_IO_F32},
    {"reciprocal", ex_reciprocal, EX_IO_F32},
    {"sign", ex_sign, EX_IO_F32},
    {"softplus", ex_softplus, EX_IO_F32},
    {"mish", ex_mish, EX_IO_F32},
    {"softsign", ex_softsign, EX_IO_F32},
    {"erf", ex_erf, EX_IO_F32},
    {"sin", ex_sin, EX_IO_F32},
    {"cos", ex_cos, EX_IO_F32},
    {"max_pool2d", ex_max_pool2d, EX_IO_F32},
    {"avg_pool2d", ex_avg_pool2d, EX_IO_F32},
    {"adaptive_avg_pool2d", ex_adaptive_avg_pool2d, EX_IO_F32},
    {"global_avg_pool2d", ex_global_avg_pool2d, EX_IO_F32},
    {"mean", ex_mean, EX_IO_F32},
    {"sum", ex_sum, EX_IO_F32},
    {"amax", ex_amax, EX_IO_F32},
    {"prod", ex_prod_reduce, EX_IO_F32},
    {"argmax", ex_argmax, EX_IO_INDEX},
    {"argmin", ex_argmin, EX_IO_INDEX},
    {"amin", ex_amin, EX_IO_F32},
    {"softmax", ex_softmax, EX_IO_F32},
    {"log_softmax", ex_log_softmax, EX_IO_F32},
    {"upsample_nearest2d", ex_upsample_nearest2d, EX_IO_F32},
    {"upsample_bilinear2d", ex_upsample_bilinear2d, EX_IO_F32},
    {"concat", ex_concat, EX_IO_F32},
    {"reshape", ex_copy, EX_IO_F32}, /* a dense row-major reshape or flatten moves no element */
    {"flatten", ex_copy, EX_IO_F32},
    {"permute", ex_permute, EX_IO_F32},
    {"pad", ex_pad, EX_IO_F32},
    {"slice", ex_slice, EX_IO_F32},
    {"batch_norm", ex_batch_norm, EX_IO_F32},
    {"layer_norm", ex_layer_norm, EX_IO_F32},
    {"group_norm", ex_group_norm, EX_IO_F32},
    {"instance_norm", ex_instance_norm, EX_IO_F32},
    {"rms_norm", ex_rms_norm, EX_IO_F32},
    {"rope", ex_rope, EX_IO_F32},
    {"sdpa", ex_sdpa, EX_IO_F32},
    {"slice_scatter", ex_slice_scatter, EX_IO_F32},
    {"quantize", ex_quantize, EX_IO_QUANTIZE},
    {"dequantize", ex_dequantize, EX_IO_DEQUANTIZE},
    /* selection and resampling (example_select.c) */
    {"where", ex_where, EX_IO_BOOL0},
    {"masked_fill", ex_masked_fill, EX_IO_BOOL1},
    {"eq", ex_compare, EX_IO_CMP},
    {"gt", ex_compare, EX_IO_CMP},
    {"lt", ex_compare, EX_IO_CMP},
    {"ge", ex_compare, EX_IO_CMP},
    {"le", ex_compare, EX_IO_CMP},
    {"logical_and", ex_logical, EX_IO_BOOL},
    {"logical_or", ex_logical, EX_IO_BOOL},
    {"logical_xor", ex_logical, EX_IO_BOOL},
    {"logical_not", ex_logical, EX_IO_BOOL},
    {"gather", ex_gather, EX_IO_I32_1},
    {"embedding", ex_embedding, EX_IO_I32_0},
    {"upsample_nearest_exact2d", ex_upsample_nearest_exact2d, EX_IO_F32},
    {"upsample_bicubic2d", ex_upsample_bicubic2d, EX_IO_F32},
};

static const ex_op *kernel_find(const char *op)
{
    for (size_t i = 0; i < sizeof kernel_table / sizeof kernel_table[0]; i++)
        if (strcmp(kernel_table[i].op, op) == 0) return &kernel_table[i];
    return NULL;
}

static int is_quantized(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

/* Whether input `input` (-1: an output) of dtype t fits the op's io column. */
static int dtype_ok(const ex_op *e, int32_t input, par_dtype t)
{
    const int is_input = input >= 0;
    switch (e->io) {
    case EX_IO_QUANTIZE: return is_input ? t == PAR_DTYPE_F32 : is_quantized(t);
    case EX_IO_DEQUANTIZE: return is_input ? is_quantized(t) : t == PAR_DTYPE_F32;
    case EX_IO_CMP: return is_input ? t == PAR_DTYPE_F32 : t == PAR_DTYPE_BOOL;
    case EX_IO_INDEX: return is_input ? t == PAR_DTYPE_F32 : t == PAR_DTYPE_I32;
    case EX_IO_BOOL: return t == PAR_DTYPE_BOOL;
    case EX_IO_BOOL0: if (input == 0) return t == PAR_DTYPE_BOOL; break;
    case EX_IO_BOOL1: if (input == 1) return t == PAR_DTYPE_BOOL; break;
    case EX_IO_I32_0: if (input == 0) return t == PAR_DTYPE_I32; break;
    case EX_IO_I32_1: if (input == 1) return t == PAR_DTYPE_I32; break;
    case EX_IO_F32: break;
    }
    return t == PAR_DTYPE_F32;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Context and knobs
 * ------------------------------------------------------------------------------------------------------------- */
static par_status ex_init(void **ctx, par_msg *msg)
{
    ex_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    *ctx = c;
    return PAR_OK;
}

static void ex_destroy(void *ctx)
{
    free(ctx);
}

static par_status ex_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    ex_ctx *c = ctx;
    if (c->prepared) return par_knob_too_late(key, NULL, msg);
    if (strcmp(key, "check_finite") != 0)
        return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (the example backend has one knob: check_finite=0|1)", key);
    return par_knob_bool(key, value, &c->check_finite, msg);
}

/* Like snprintf: writes what fits (always terminated when len > 0) and returns the length it needed. */
static size_t ex_describe(void *ctx, char *buf, size_t len)
{
    const ex_ctx *c = ctx;
    int need = snprintf(buf, len, "check_finite=%d", c->check_finite);
    return need < 0 ? 0 : (size_t)need;
}

/* PAR_PROC_NODE_OUTPUTS: the buffers of chosen node values; ex_run copies each value there after its node. */
static par_status ex_node_outputs(void *ctx, void *prepared, int32_t n, const int32_t *values, void *const *buffers,
                                  uint8_t *given, par_msg *msg)
{
    (void)ctx;
    ex_plan *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "node outputs: no prepared graph");
    const par_graph_desc *g = p->g;
    if (!p->tap && !(p->tap = calloc(g->n_values > 0 ? (size_t)g->n_values : 1, sizeof *p->tap)))
        return par_msgf(msg, PAR_ERROR, "node outputs: out of memory");
    for (int32_t i = 0; i < n; i++) {
        if (values[i] < 0 || values[i] >= g->n_values || g->values[values[i]].kind != PAR_VALUE_NODE || !buffers[i])
            return par_msgf(msg, PAR_ERROR, "node outputs: tap %d names value %d, not a node value of the graph",
                            (int)i, (int)values[i]);
        p->tap[values[i]] = buffers[i];
        given[i] = 1;
    }
    return PAR_OK;
}

/* PAR_PROC_REUSE: a context serves the next case. It holds the knob (the instance's, the same for every case) and
 * the prepared flag; each prepare builds a plan of its own that release frees, and nothing is cached or kept that
 * points into a graph, so no case can change another's results. */
static int ex_reuse(void *ctx)
{
    (void)ctx;
    return 1;
}

static void *ex_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_REUSE) == 0) return (void *)(par_reuse_fn)ex_reuse;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)ex_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)ex_describe;
    if (strcmp(name, PAR_PROC_NODE_OUTPUTS) == 0) return (void *)(par_node_outputs_fn)ex_node_outputs;
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * supports: an op this backend has a kernel for, with the dtypes it handles. Anything else is UNSUPPORTED, with the
 * reason, so that the report says why the case did not run.
 * ------------------------------------------------------------------------------------------------------------- */
static par_status ex_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx;
    if (node < 0 || node >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "supports: node index %d out of range [0, %d)", node, g->n_nodes);
    const par_node *n = &g->nodes[node];
    const ex_op *e = kernel_find(n->op);
    if (!e)
        return par_msgf(msg, PAR_UNSUPPORTED, "op '%s' is not implemented by the example backend", n->op);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (v && !dtype_ok(e, i, v->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') is %s; the example backend does not take that dtype there",
                            n->op, i, v->name, par_dtype_name(v->dtype));
    }
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_value *v = par_node_output(g, n, i);
        if (!dtype_ok(e, -1, v->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: output %d ('%s') is %s; the example backend runs f32 graphs only",
                            n->op, i, v->name, par_dtype_name(v->dtype));
    }
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * prepare / bind / run / release
 * ------------------------------------------------------------------------------------------------------------- */
static void ex_release(void *ctx, void *prepared)
{
    (void)ctx;
    ex_plan *p = prepared;
    if (!p) return;
    if (p->owned)
        for (int32_t i = 0; i < p->g->n_values; i++) free(p->owned[i]);
    free(p->owned);
    free(p->src);
    free(p->dst);
    free(p->kernels);
    free(p->out_copy);
    free(p->out_buf);
    free(p->tap);
    free(p);
}

static int is_graph_output(const par_graph_desc *g, int32_t v)
{
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return 1;
    return 0;
}

static par_status ex_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    ex_ctx *c = ctx;
    c->prepared = 1;
    *prepared = NULL;

    ex_plan *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    p->g = g;
    size_t nv = g->n_values > 0 ? (size_t)g->n_values : 1;
    size_t nn = g->n_nodes > 0 ? (size_t)g->n_nodes : 1;
    size_t no = g->n_outputs > 0 ? (size_t)g->n_outputs : 1;
    p->src = calloc(nv, sizeof *p->src);
    p->dst = calloc(nv, sizeof *p->dst);
    p->owned = calloc(nv, sizeof *p->owned);
    p->kernels = calloc(nn, sizeof *p->kernels);
    p->out_copy = calloc(no, sizeof *p->out_copy);
    p->out_buf = calloc(no, sizeof *p->out_buf);
    if (!p->src || !p->dst || !p->owned || !p->kernels || !p->out_copy || !p->out_buf) {
        ex_release(ctx, p);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }

    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ex_op *e = kernel_find(g->nodes[i].op);
        p->kernels[i] = e ? e->fn : NULL;
        if (!p->kernels[i]) {
            ex_release(ctx, p);
            return par_msgf(msg, PAR_UNSUPPORTED, "prepare: node '%s': op '%s' is not implemented",
                            g->nodes[i].name, g->nodes[i].op);
        }
    }

    for (int32_t i = 0; i < g->n_values; i++) {
        const par_value *v = &g->values[i];
        if (v->kind == PAR_VALUE_CONST) {
            if (!v->data) {
                ex_release(ctx, p);
                return par_msgf(msg, PAR_ERROR, "prepare: constant '%s' has no data", v->name);
            }
            p->src[i] = v->data; /* read in place: the graph outlives the plan */
        } else if (v->kind == PAR_VALUE_NODE && !is_graph_output(g, i)) {
            size_t bytes = (size_t)v->numel * par_dtype_size(v->dtype);
            p->owned[i] = malloc(bytes ? bytes : 1);
            if (!p->owned[i]) {
                ex_release(ctx, p);
                return par_msgf(msg, PAR_ERROR, "prepare: out of memory for value '%s' (%zu bytes)", v->name, bytes);
            }
            p->src[i] = p->owned[i];
            p->dst[i] = p->owned[i];
        }
        /* graph inputs and node values that are graph outputs: set by bind */
    }
    *prepared = p;
    return PAR_OK;
}

static par_status ex_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    ex_plan *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    const par_graph_desc *g = p->g;
    p->bound = 0;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        if (!inputs[i]) return par_msgf(msg, PAR_ERROR, "bind: input %d ('%s') is NULL", i, g->values[g->inputs[i]].name);
        p->src[g->inputs[i]] = inputs[i];
    }
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        if (g->values[v].kind == PAR_VALUE_NODE) p->src[v] = p->dst[v] = NULL;
    }
    /* A node value listed as a graph output is computed straight into its output buffer. Outputs that alias a graph
     * input, a constant, or an output listed earlier are copied at the end of run instead. */
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        if (!outputs[i]) return par_msgf(msg, PAR_ERROR, "bind: output %d ('%s') is NULL", i, g->values[v].name);
        p->out_buf[i] = outputs[i];
        p->out_copy[i] = 1;
        if (g->values[v].kind == PAR_VALUE_NODE && !p->dst[v]) {
            p->src[v] = p->dst[v] = outputs[i];
            p->out_copy[i] = 0;
        }
    }
    p->bound = 1;
    return PAR_OK;
}

/* check_finite=1: a demonstration of a knob. A NaN is usually a backend bug, but the oracle already judges NaNs;
 * this turns one into an ERROR at run time, as a production runtime with a debug check would. */
static par_status check_outputs_finite(const ex_plan *p, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    for (int32_t i = 0; i < g->n_outputs; i++) {
        const par_value *v = &g->values[g->outputs[i]];
        if (v->dtype != PAR_DTYPE_F32) continue;
        const float *y = p->out_buf[i];
        for (int64_t k = 0; k < v->numel; k++)
            if (y[k] != y[k])
                return par_msgf(msg, PAR_ERROR, "output %d ('%s') element %lld is NaN (knob check_finite=1)", i,
                                v->name, (long long)k);
    }
    return PAR_OK;
}

static par_status ex_run(void *ctx, void *prepared, par_msg *msg)
{
    const ex_ctx *c = ctx;
    const ex_plan *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "run: no prepared graph");
    const par_graph_desc *g = p->g;
    if (!p->bound) return par_msgf(msg, PAR_ERROR, "run: no buffers bound (bind must succeed before run)");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        p->kernels[i](p, &g->nodes[i]);
        for (int32_t k = 0; p->tap && k < g->nodes[i].n_outputs; k++) {
            const int32_t v = g->nodes[i].outputs[k];
            if (p->tap[v]) memcpy(p->tap[v], p->src[v], (size_t)g->values[v].numel * par_dtype_size(g->values[v].dtype));
        }
    }
    for (int32_t i = 0; i < g->n_outputs; i++) {
        if (!p->out_copy[i]) continue;
        const par_value *v = &g->values[g->outputs[i]];
        memcpy(p->out_buf[i], p->src[g->outputs[i]], (size_t)v->numel * par_dtype_size(v->dtype));
    }
    return c->check_finite ? check_outputs_finite(p, msg) : PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The table and the entry point
 * ------------------------------------------------------------------------------------------------------------- */
static const par_backend example_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = EX_NAME,
    .description = "naive float32 reference-style backend (NCHW loops); the template plugin",
    .version = "1.0",
    /* Every op computes in float32 and stores float32: the oracle budgets for unit roundoff 2^-24. */
    .arith = PAR_ARITH_F32,
    .init = ex_init,
    .destroy = ex_destroy,
    .supports = ex_supports,
    .prepare = ex_prepare,
    .bind = ex_bind,
    .run = ex_run,
    .release = ex_release,
    .get_proc = ex_get_proc,
};

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const par_backend *parity_backend_entry(uint32_t harness_api_version);

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    /* The table layout is fixed within a major version; refuse any other. */
    if (harness_api_version != PAR_BACKEND_API_VERSION) return NULL;
    return &example_backend;
}
