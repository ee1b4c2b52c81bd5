/*
 * plan.c - the cpu backend's graph planner: lowers a validated graph to a list of steps on NHWC / row-major buffers,
 * decides fusions (batch_norm folded into a preceding conv2d, relu / relu6 / hardtanh / clamp into the epilogue of
 * conv2d and linear), adds the NCHW <-> NHWC conversions at the graph boundary, and places every intermediate in one
 * arena by liveness (two tensors share memory only when their lifetimes do not overlap).
 *
 * It must not allocate in run, nor write anywhere but the arena, its own copies and the bound output buffers; it never
 * writes into a bound input or a constant. The op kernels are in ops_*.c; the convolution and GEMM kernels behind
 * cpu_kernels.h.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "plan_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Op table: how each op lowers. An op absent here is UNSUPPORTED; adding an op is one line here plus its lower
 * function in ops_*.c (a unary map: one row and one function in ops_eltwise.c).
 *   params_from  inputs at and after this index are parameters packed or read at prepare (weights, bias, batch norm
 *                statistics): they must be constants and are not tensors of the plan; 0 = none.
 *   fuse         FUSE_BN: a following batch_norm folds into the weights (conv2d); FUSE_CLAMP: a following relu /
 *                relu6 / hardtanh / clamp becomes the epilogue clamp (conv2d, linear).
 *   variant      for a function that lowers a family (binary, unary, pool, reduce, ...): which member (plan.h).
 * Every input is f32, except the raw inputs listed after the table. The element-wise math maps (abs, exp, silu, ...)
 * are not rows here: each is one row of ops_eltwise.c's map table and one f32 function (cpu_unary_map).
 * ------------------------------------------------------------------------------------------------------------- */
enum { FUSE_BN = 1, FUSE_CLAMP = 2 };

typedef struct op_entry {
    const char *op;
    cpu_lower_fn lower;
    int32_t params_from;
    unsigned fuse;
    int32_t variant;            /* which member of the lowering function's family (plan.h's variant enums) */
} op_entry;

static const op_entry op_table[] = {
    {"conv2d", cpu_lower_conv2d, 1, FUSE_BN | FUSE_CLAMP, 0},
    {"conv_transpose2d", cpu_lower_conv_transpose2d, 1, 0, 0},
    {"linear", cpu_lower_linear, 1, FUSE_CLAMP, 0},
    {"matmul", cpu_lower_matmul, 0, 0, 0},
    {"add", cpu_lower_binary, 0, 0, CPU_BIN_ADD},
    {"sub", cpu_lower_binary, 0, 0, CPU_BIN_SUB},
    {"mul", cpu_lower_binary, 0, 0, CPU_BIN_MUL},
    {"div", cpu_lower_binary, 0, 0, CPU_BIN_DIV},
    {"minimum", cpu_lower_binary, 0, 0, CPU_BIN_MINIMUM},
    {"maximum", cpu_lower_binary, 0, 0, CPU_BIN_MAXIMUM},
    {"pow", cpu_lower_binary, 0, 0, CPU_BIN_POW},
    {"relu", cpu_lower_unary, 0, 0, CPU_UN_CLAMP},
    {"relu6", cpu_lower_unary, 0, 0, CPU_UN_CLAMP},
    {"hardtanh", cpu_lower_unary, 0, 0, CPU_UN_CLAMP},
    {"clamp", cpu_lower_unary, 0, 0, CPU_UN_CLAMP},
    {"leaky_relu", cpu_lower_unary, 0, 0, CPU_UN_LEAKY},
    {"sigmoid", cpu_lower_unary, 0, 0, CPU_UN_SIGMOID},
    {"tanh", cpu_lower_unary, 0, 0, CPU_UN_TANH},
    {"hardsigmoid", cpu_lower_unary, 0, 0, CPU_UN_HARDSIGMOID},
    {"hardswish", cpu_lower_unary, 0, 0, CPU_UN_HARDSWISH},
    {"elu", cpu_lower_unary, 0, 0, CPU_UN_ELU},
    {"gelu", cpu_lower_gelu, 0, 0, 0},
    {"prelu", cpu_lower_prelu, 0, 0, 0},
    {"max_pool2d", cpu_lower_pool2d, 0, 0, CPU_POOL_MAX},
    {"avg_pool2d", cpu_lower_pool2d, 0, 0, CPU_POOL_AVG},
    {"adaptive_avg_pool2d", cpu_lower_pool2d, 0, 0, CPU_POOL_ADAPTIVE},
    {"global_avg_pool2d", cpu_lower_pool2d, 0, 0, CPU_POOL_GLOBAL},
    {"mean", cpu_lower_reduce, 0, 0, CPU_RED_MEAN},
    {"sum", cpu_lower_reduce, 0, 0, CPU_RED_SUM},
    {"amax", cpu_lower_reduce, 0, 0, CPU_RED_AMAX},
    {"amin", cpu_lower_reduce, 0, 0, CPU_RED_AMIN},
    {"prod", cpu_lower_reduce, 0, 0, CPU_RED_PROD},
    {"argmax", cpu_lower_arg, 0, 0, CPU_ARG_MAX},
    {"argmin", cpu_lower_arg, 0, 0, CPU_ARG_MIN},
    {"softmax", cpu_lower_softmax, 0, 0, CPU_SOFTMAX},
    {"log_softmax", cpu_lower_softmax, 0, 0, CPU_LOG_SOFTMAX},
    {"upsample_nearest2d", cpu_lower_upsample, 0, 0, CPU_UP_NEAREST},
    {"upsample_bilinear2d", cpu_lower_upsample, 0, 0, CPU_UP_BILINEAR},
    {"concat", cpu_lower_concat, 0, 0, 0},
    {"reshape", cpu_lower_copy, 0, 0, 0},
    {"flatten", cpu_lower_copy, 0, 0, 0},
    {"permute", cpu_lower_permute, 0, 0, 0},
    {"pad", cpu_lower_pad, 0, 0, 0},
    {"slice", cpu_lower_slice, 0, 0, 0},
    {"batch_norm", cpu_lower_batch_norm, 1, 0, 0},
    {"layer_norm", cpu_lower_norm, 0, 0, CPU_NORM_LAYER},
    {"group_norm", cpu_lower_norm, 0, 0, CPU_NORM_GROUP},
    {"instance_norm", cpu_lower_norm, 0, 0, CPU_NORM_INSTANCE},
    {"rms_norm", cpu_lower_norm, 0, 0, CPU_NORM_RMS},
    /* decoder blocks (ops_attention.c) */
    {"rope", cpu_lower_rope, 0, 0, 0},
    {"sdpa", cpu_lower_sdpa, 0, 0, 0},
    {"slice_scatter", cpu_lower_slice_scatter, 0, 0, 0},
    /* selection and resampling (ops_select.c, ops_pool.c) */
    {"where", cpu_lower_where, 0, 0, 0},
    {"masked_fill", cpu_lower_masked_fill, 0, 0, 0},
    {"gather", cpu_lower_gather, 0, 0, 0},
    {"embedding", cpu_lower_embedding, 0, 0, 0},
    {"eq", cpu_lower_compare, 0, 0, CPU_CMP_EQ},
    {"gt", cpu_lower_compare, 0, 0, CPU_CMP_GT},
    {"lt", cpu_lower_compare, 0, 0, CPU_CMP_LT},
    {"ge", cpu_lower_compare, 0, 0, CPU_CMP_GE},
    {"le", cpu_lower_compare, 0, 0, CPU_CMP_LE},
    {"logical_and", cpu_lower_logical, 0, 0, CPU_LOG_AND},
    {"logical_or", cpu_lower_logical, 0, 0, CPU_LOG_OR},
    {"logical_xor", cpu_lower_logical, 0, 0, CPU_LOG_XOR},
    {"logical_not", cpu_lower_logical, 0, 0, CPU_LOG_NOT},
    {"upsample_nearest_exact2d", cpu_lower_upsample, 0, 0, CPU_UP_NEAREST_EXACT},
    {"upsample_bicubic2d", cpu_lower_upsample, 0, 0, CPU_UP_BICUBIC},
    /* dynamically quantized linear (ops_dynamic.c): qs8 weights and an f32 bias, read at prepare */
    {"linear_dynamic", cpu_lower_linear_dynamic, 1, 0, 0},
    /* linear_8da4w (ops_dynamic.c): packed int4 weights (qu8 bytes), f32 block scales and bias, read at prepare */
    {"linear_8da4w", cpu_lower_linear_8da4w, 1, 0, 0},
};

/* Raw inputs: the one input of an op that is not f32 (a bool condition or mask, i32 indices, qs8 weights). It must
 * have this dtype, and is read in place in it, row-major (a raw tensor is never converted to NHWC; plan.h); a raw
 * parameter (params_from) is read from its constant at prepare. */
static const struct raw_input {
    const char *op;
    int32_t input;
    par_dtype dtype;
} raw_inputs[] = {
    {"where", 0, PAR_DTYPE_BOOL},
    {"masked_fill", 1, PAR_DTYPE_BOOL},
    {"gather", 1, PAR_DTYPE_I32},
    {"embedding", 0, PAR_DTYPE_I32},
    {"linear_dynamic", 1, PAR_DTYPE_QS8},
    {"linear_8da4w", 1, PAR_DTYPE_QU8},
    {"logical_and", 0, PAR_DTYPE_BOOL},
    {"logical_and", 1, PAR_DTYPE_BOOL},
    {"logical_or", 0, PAR_DTYPE_BOOL},
    {"logical_or", 1, PAR_DTYPE_BOOL},
    {"logical_xor", 0, PAR_DTYPE_BOOL},
    {"logical_xor", 1, PAR_DTYPE_BOOL},
    {"logical_not", 0, PAR_DTYPE_BOOL},
};

/* Raw outputs: the ops whose output is not f32, computed row-major in their dtype: bool bytes (comparisons and logic
 * ops), i32 indices (argmax, argmin). */
static const struct raw_output {
    const char *op;
    par_dtype dtype;
} raw_outputs[] = {
    {"eq", PAR_DTYPE_BOOL},          {"gt", PAR_DTYPE_BOOL},          {"lt", PAR_DTYPE_BOOL},
    {"ge", PAR_DTYPE_BOOL},          {"le", PAR_DTYPE_BOOL},          {"logical_and", PAR_DTYPE_BOOL},
    {"logical_or", PAR_DTYPE_BOOL},  {"logical_xor", PAR_DTYPE_BOOL}, {"logical_not", PAR_DTYPE_BOOL},
    {"argmax", PAR_DTYPE_I32},       {"argmin", PAR_DTYPE_I32},
};

/* Whether op computes a raw output of dtype dt. */
static int has_raw_output(const char *op, par_dtype dt)
{
    for (size_t k = 0; k < sizeof raw_outputs / sizeof raw_outputs[0]; k++)
        if (raw_outputs[k].dtype == dt && strcmp(raw_outputs[k].op, op) == 0) return 1;
    return 0;
}

/* The dtype input i of op must have when it is raw, else PAR_DTYPE_INVALID (it must be f32). */
static par_dtype raw_dtype(const char *op, int32_t i)
{
    for (size_t k = 0; k < sizeof raw_inputs / sizeof raw_inputs[0]; k++)
        if (raw_inputs[k].input == i && strcmp(raw_inputs[k].op, op) == 0) return raw_inputs[k].dtype;
    return PAR_DTYPE_INVALID;
}

/* Whether some op takes a raw input of this dtype. */
static int is_raw_dtype(par_dtype dt)
{
    for (size_t k = 0; k < sizeof raw_inputs / sizeof raw_inputs[0]; k++)
        if (raw_inputs[k].dtype == dt) return 1;
    return 0;
}

static const op_entry *op_find(const char *op)
{
    static const op_entry map_entry = {"(unary map)", cpu_lower_map, 0, 0, CPU_UN_MAP};
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (strcmp(op_table[i].op, op) == 0) return &op_table[i];
    return cpu_unary_map(op) ? &map_entry : NULL;
}

/* Inputs that are parameters packed or read at prepare (never tensors of the plan): they must be constants. */
static int is_param_input(const op_entry *e, int32_t i)
{
    return e->params_from > 0 && i >= e->params_from;
}

par_status cpu_plan_supports(const par_graph_desc *g, int32_t node, par_msg *msg)
{
    if (node < 0 || node >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "supports: node index %d out of range [0, %d)", node, g->n_nodes);
    const par_node *n = &g->nodes[node];
    const op_entry *e = op_find(n->op);
    if (!e)
        return par_msgf(msg, PAR_UNSUPPORTED, "op '%s' is not implemented by the cpu backend", n->op);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (!v) continue;
        const par_dtype raw = raw_dtype(n->op, i);
        if (raw != PAR_DTYPE_INVALID) {
            if (v->dtype != raw)
                return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') is %s; the cpu backend takes %s there",
                                n->op, i, v->name, par_dtype_name(v->dtype), par_dtype_name(raw));
            continue;
        }
        if (v->dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') is %s; the cpu backend runs f32 graphs only",
                            n->op, i, v->name, par_dtype_name(v->dtype));
        if (is_param_input(e, i) && (v->kind != PAR_VALUE_CONST || !v->data))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d ('%s') must be a constant (packed at prepare)",
                            n->op, i, v->name);
    }
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_value *v = par_node_output(g, n, i);
        if (has_raw_output(n->op, v->dtype)) continue;
        if (v->dtype != PAR_DTYPE_F32)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: output %d ('%s') is %s; the cpu backend runs f32 graphs only",
                            n->op, i, v->name, par_dtype_name(v->dtype));
    }
    return PAR_OK;
}



static void tensor_init(cpu_tensor *t, const par_value *v)
{
    memset(t, 0, sizeof *t);
    t->rank = v->rank;
    t->numel = v->numel;
    for (int32_t d = 0; d < v->rank; d++) t->dims[d] = v->dims[d];
    t->raw = v->dtype != PAR_DTYPE_F32;
    t->nhwc = v->rank == 4 && !t->raw;
    if (t->nhwc) {
        const int64_t C = v->dims[1], H = v->dims[2], W = v->dims[3];
        t->strides[0] = H * W * C;
        t->strides[1] = 1;
        t->strides[2] = W * C;
        t->strides[3] = C;
    } else {
        cpu_rowmajor_strides(v->rank, v->dims, t->strides);
    }
    t->first = t->last = -1;
}





/* ---------------------------------------------------------------------------------------------------------------
 * Steps
 * ------------------------------------------------------------------------------------------------------------- */
static cpu_step *add_step(cpu_plan *p, const par_node *n, const char *label)
{
    if (p->n_steps == p->cap_steps) {
        int32_t cap = p->cap_steps ? p->cap_steps * 2 : 32;
        cpu_step *s = realloc(p->steps, (size_t)cap * sizeof *s);
        if (!s) return NULL;
        p->steps = s;
        p->cap_steps = cap;
    }
    cpu_step *s = &p->steps[p->n_steps++];
    memset(s, 0, sizeof *s);
    s->node = n;
    s->out = -1;
    s->port = -1;
    s->out_min = -INFINITY;
    s->out_max = INFINITY;
    snprintf(s->label, sizeof s->label, "%s", label);
    return s;
}

int32_t cpu_plan_step_count(const cpu_plan *p)
{
    return p ? p->n_steps : 0;
}

const char *cpu_plan_step_label(const cpu_plan *p, int32_t i)
{
    return p && i >= 0 && i < p->n_steps ? p->steps[i].label : NULL;
}

void cpu_plan_release(cpu_plan *p)
{
    if (!p) return;
    for (int32_t i = 0; i < p->n_steps; i++) {
        if (p->steps[i].destroy) p->steps[i].destroy(p->steps[i].state);
        free(p->steps[i].scratch);
    }
    if (p->t)
        for (int32_t i = 0; i < p->g->n_values; i++) free(p->t[i].owned);
    free(p->steps);
    free(p->step_ms);
    free(p->tap_of);
    free(p->tap_buf);
    free(p->t);
    free(p->arena);
    free(p->out_copy);
    free(p->out_buf);
    free(p->in_buf);
    free(p);
}

typedef struct value_use {
    int32_t uses;     /* input slots of nodes that read the value */
    int32_t user;     /* the last node reading it */
    int is_output;
} value_use;

/* The node that alone consumes value v as its input 0, when v is not a graph output: the fusion candidate. */
static const par_node *sole_consumer(const par_graph_desc *g, const value_use *u, int32_t v)
{
    if (u[v].is_output || u[v].uses != 1) return NULL;
    const par_node *n = &g->nodes[u[v].user];
    return n->n_inputs >= 1 && n->inputs[0] == v ? n : NULL;
}

static int bn_params_const(const par_graph_desc *g, const par_node *bn)
{
    for (int32_t i = 1; i < 5; i++) {
        const par_value *v = par_node_input(g, bn, i);
        if (!v || v->kind != PAR_VALUE_CONST || !v->data || v->dtype != PAR_DTYPE_F32) return 0;
    }
    return 1;
}

/* Place arena tensors: largest first, each at the lowest offset (64-byte aligned) free of every placed tensor whose
 * lifetime overlaps. O(n^2) in the number of tensors, which is fine for graphs of hundreds of nodes. */
static par_status place_arena(cpu_plan *p, par_msg *msg)
{
    const int32_t nv = p->g->n_values;
    int32_t *order = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *order);
    int32_t *placed = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *placed);
    if (!order || !placed) {
        free(order);
        free(placed);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    int32_t n = 0, np = 0;
    for (int32_t i = 0; i < nv; i++)
        if (p->t[i].kind == CPU_T_ARENA) order[n++] = i;
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0 && p->t[order[j]].numel > p->t[order[j - 1]].numel; j--) {
            int32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t total = 0;
    for (int32_t k = 0; k < n; k++) {
        cpu_tensor *t = &p->t[order[k]];
        const size_t len = ((size_t)t->numel + 15) / 16 * 16;
        size_t off = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int32_t j = 0; j < np; j++) {
                const cpu_tensor *o = &p->t[placed[j]];
                if (o->last < t->first || t->last < o->first) continue; /* lifetimes apart */
                const size_t olen = ((size_t)o->numel + 15) / 16 * 16;
                if (off < o->offset + olen && o->offset < off + len) {
                    off = o->offset + olen;
                    moved = 1;
                }
            }
        }
        t->offset = off;
        placed[np++] = order[k];
        if (off + len > total) total = off + len;
    }
    free(order);
    free(placed);
    /* 16 floats past the end: vector kernels may read (never write) up to one vector beyond a tensor */
    p->arena_len = total + 16;
    p->arena = aligned_alloc(64, (p->arena_len * sizeof(float) + 63) / 64 * 64);
    if (!p->arena) return par_msgf(msg, PAR_ERROR, "prepare: out of memory for the arena (%zu floats)", total);
    memset(p->arena, 0, p->arena_len * sizeof(float));
    for (int32_t i = 0; i < nv; i++)
        if (p->t[i].kind == CPU_T_ARENA) p->t[i].data = p->arena + p->t[i].offset;
    return PAR_OK;
}

/* A constant read as an activation: in place, or converted to NHWC once, at prepare. */
static par_status materialize_const(cpu_plan *p, int32_t vi, par_msg *msg)
{
    cpu_tensor *t = &p->t[vi];
    const par_value *v = &p->g->values[vi];
    if (t->kind == CPU_T_CONST) return PAR_OK;
    t->kind = CPU_T_CONST;
    if (!v->data) return par_msgf(msg, PAR_ERROR, "prepare: constant '%s' has no data", v->name);
    if (!t->nhwc) {
        t->data = (float *)(uintptr_t)v->data; /* read only: no step writes a tensor it reads */
        return PAR_OK;
    }
    t->owned = malloc((size_t)t->numel * sizeof(float) + 64);
    if (!t->owned) return par_msgf(msg, PAR_ERROR, "prepare: out of memory for constant '%s'", v->name);
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, t->owned, t->strides, v->data, rm);
    t->data = t->owned;
    return PAR_OK;
}

/* The fusions of a node's step s (its table line e): a batch_norm with constant parameters, then a clamp, each when
 * it is the sole consumer of what the step computes so far; marks them absorbed. Returns the value s computes. */
static int32_t fuse_consumers(const par_graph_desc *g, const value_use *use, const op_entry *e, const par_node *n,
                              cpu_step *s, char *absorbed)
{
    int32_t v = n->outputs[0];
    if (e->fuse & FUSE_BN) {
        const par_node *c = sole_consumer(g, use, v);
        if (c && strcmp(c->op, "batch_norm") == 0 && bn_params_const(g, c)) {
            absorbed[c - g->nodes] = 1;
            s->bn = c;
            v = c->outputs[0];
            strncat(s->label, "+batch_norm", sizeof s->label - strlen(s->label) - 1);
        }
    }
    if (e->fuse & FUSE_CLAMP) {
        const par_node *c = sole_consumer(g, use, v);
        float lo, hi;
        if (c && par_clamp_bounds_f32(c, &lo, &hi)) {
            absorbed[c - g->nodes] = 1;
            s->out_min = lo;
            s->out_max = hi;
            v = c->outputs[0];
            strncat(s->label, "+", sizeof s->label - strlen(s->label) - 1);
            strncat(s->label, c->op, sizeof s->label - strlen(s->label) - 1);
        }
    }
    return v;
}

/* Each step's inputs: constants materialized, the last step that reads each value; each step's output: placed in
 * the arena unless bound, the first and last steps that hold it. */
static par_status set_lifetimes(cpu_plan *p, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    par_status st;
    for (int32_t si = 0; si < p->n_steps; si++) {
        cpu_step *s = &p->steps[si];
        for (int32_t k = 0; k < s->n_in; k++) {
            const int32_t v = s->in[k];
            if (v < 0) continue;
            if (g->values[v].kind == PAR_VALUE_CONST) {
                if ((st = materialize_const(p, v, msg)) != PAR_OK) return st;
                continue;
            }
            cpu_tensor *t = &p->t[v];
            if (t->kind == CPU_T_NONE)
                return par_msgf(msg, PAR_ERROR, "prepare: internal: value '%s' read before it is computed",
                                g->values[v].name);
            if (si > t->last) t->last = si;
        }
        if (s->out >= 0) {
            cpu_tensor *t = &p->t[s->out];
            if (t->kind == CPU_T_NONE) t->kind = CPU_T_ARENA;
            if (t->first < 0) t->first = si;
            if (t->last < si) t->last = si;
        }
    }
    return PAR_OK;
}

/* Row chains of conv2d steps (plan.h, cpu_conv_chain_run): marks each chain's steps and labels them. */
static par_status find_chains(cpu_plan *p, const value_use *use, int32_t from, int32_t to, par_msg *msg)
{
    for (int32_t si = from; si < to;) {
        int32_t len = 0;
        for (cpu_conv_params cp; si + len < to && len < CPU_CHAIN_MAX; len++) {
            const cpu_step *s = &p->steps[si + len];
            if (strcmp(s->node->op, "conv2d") != 0) break;
            if (cpu_conv2d_params(p, s, &cp, msg) != PAR_OK || !cpu_conv_runs_by_rows(&cp)) break;
            if (len > 0) {
                const cpu_step *prev = s - 1;
                const int32_t v = prev->out;
                if (s->in[0] != v || use[v].is_output || use[v].uses != 1 ||
                    (size_t)p->t[v].numel * sizeof(float) < CPU_CHAIN_MIN_BYTES)
                    break;
            }
        }
        if (len < 2) {
            si++;
            continue;
        }
        for (int32_t j = 0; j < len; j++) {
            cpu_step *s = &p->steps[si + j];
            s->chain = j == 0 ? len : -1;
            char tag[24];
            snprintf(tag, sizeof tag, " [chain %d/%d]", (int)(j + 1), (int)len);
            strncat(s->label, tag, sizeof s->label - strlen(s->label) - 1);
        }
        si += len;
    }
    msg->text[0] = 0;
    return PAR_OK;
}

/* A chain's steps run interleaved by its first one: every tensor they read or write lives across the whole chain,
 * so no two of them share arena memory. */
static void extend_chain_lifetimes(cpu_plan *p)
{
    for (int32_t a = 0; a < p->n_steps; a++) {
        const int32_t len = p->steps[a].chain;
        if (len < 2) continue;
        for (int32_t j = a; j < a + len; j++) {
            const cpu_step *s = &p->steps[j];
            const int32_t vs[2] = {s->in[0], s->out};
            for (int k = 0; k < 2; k++) {
                cpu_tensor *t = vs[k] >= 0 ? &p->t[vs[k]] : NULL;
                if (!t || t->kind != CPU_T_ARENA) continue;
                if (t->first > a) t->first = a;
                if (t->last < a + len - 1) t->last = a + len - 1;
            }
        }
    }
}

#define FAIL(st_, ...)                                                                                             \
    do {                                                                                                           \
        st = par_msgf(msg, st_, __VA_ARGS__);                                                                      \
        goto fail;                                                                                                 \
    } while (0)

par_status cpu_plan_prepare(const cpu_ctx *ctx, const par_graph_desc *g, cpu_plan **out, par_msg *msg)
{
    *out = NULL;
    par_status st = PAR_ERROR;
    const int32_t nv = g->n_values, nn = g->n_nodes;
    value_use *use = calloc((size_t)(nv > 0 ? nv : 1), sizeof *use);
    /* per step (the input conversions come first, then at most one step per node) */
    const size_t max_steps = (size_t)nn + (size_t)(g->n_inputs > 0 ? g->n_inputs : 0) + 1;
    const op_entry **entry_of = calloc(max_steps, sizeof *entry_of); /* per step: its op's table line */
    char *absorbed = calloc((size_t)(nn > 0 ? nn : 1), 1);
    cpu_plan *p = calloc(1, sizeof *p);
    if (!use || !entry_of || !absorbed || !p) {
        st = par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        goto fail;
    }
    p->g = g;
    p->ctx = ctx;
    p->isa = ctx->isa;
    p->pool = ctx->pool;
    p->t = calloc((size_t)(nv > 0 ? nv : 1), sizeof *p->t);
    p->out_copy = calloc((size_t)(g->n_outputs > 0 ? g->n_outputs : 1), sizeof *p->out_copy);
    p->out_buf = calloc((size_t)(g->n_outputs > 0 ? g->n_outputs : 1), sizeof *p->out_buf);
    p->in_buf = calloc((size_t)(g->n_inputs > 0 ? g->n_inputs : 1), sizeof *p->in_buf);
    if (!p->t || !p->out_copy || !p->out_buf || !p->in_buf) FAIL(PAR_ERROR, "prepare: out of memory");
    for (int32_t i = 0; i < nv; i++) {
        /* a value of a raw dtype is only read as a node's raw input (supports() checks where), never computed */
        const par_dtype dt = g->values[i].dtype;
        const int raw_node = g->values[i].kind == PAR_VALUE_NODE && g->values[i].producer >= 0 &&
                             g->values[i].producer < nn && has_raw_output(g->nodes[g->values[i].producer].op, dt);
        if (dt != PAR_DTYPE_F32 && !raw_node && (g->values[i].kind == PAR_VALUE_NODE || !is_raw_dtype(dt)))
            FAIL(PAR_UNSUPPORTED, "value '%s' is %s; the cpu backend runs f32 graphs only", g->values[i].name,
                 par_dtype_name(dt));
        tensor_init(&p->t[i], &g->values[i]);
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (p->t[g->outputs[i]].raw && g->values[g->outputs[i]].kind != PAR_VALUE_NODE)
            FAIL(PAR_UNSUPPORTED, "graph output '%s' is %s; the cpu backend outputs f32 only",
                 g->values[g->outputs[i]].name, par_dtype_name(g->values[g->outputs[i]].dtype));
    for (int32_t i = 0; i < nn; i++) {
        par_status s2 = cpu_plan_supports(g, i, msg);
        if (s2 != PAR_OK) {
            char why[PAR_MSG_LEN];
            snprintf(why, sizeof why, "%s", msg->text);
            FAIL(s2, "prepare: node '%s': %s", g->nodes[i].name, why);
        }
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++) {
            int32_t v = g->nodes[i].inputs[k];
            if (v < 0) continue;
            use[v].uses++;
            use[v].user = i;
        }
    }
    for (int32_t i = 0; i < g->n_outputs; i++) use[g->outputs[i]].is_output = 1;

    /* 1. boundary: rank-4 graph inputs are converted to NHWC into the arena; others are read in place */
    for (int32_t i = 0; i < g->n_inputs; i++) {
        cpu_tensor *t = &p->t[g->inputs[i]];
        if (t->kind != CPU_T_NONE) continue; /* the same value listed twice */
        if (t->nhwc) {
            cpu_step *s = add_step(p, NULL, "nchw_to_nhwc");
            if (!s) FAIL(PAR_ERROR, "prepare: out of memory");
            s->run = cpu_step_to_nhwc;
            s->port = i;
            s->out = g->inputs[i];
            t->kind = CPU_T_ARENA;
        } else {
            t->kind = CPU_T_BOUND_IN;
        }
    }
    const int32_t first_node_step = p->n_steps;

    /* 2. one step per node, with fusions */
    for (int32_t i = 0; i < nn; i++) {
        if (absorbed[i]) continue;
        const par_node *n = &g->nodes[i];
        const op_entry *e = op_find(n->op); /* every node passed cpu_plan_supports */
        cpu_step *s = add_step(p, n, n->op);
        if (!s) FAIL(PAR_ERROR, "prepare: out of memory");
        entry_of[p->n_steps - 1] = e;
        s->out = fuse_consumers(g, use, e, n, s, absorbed);
        /* activation inputs: everything but the parameters packed at prepare */
        for (int32_t k = 0; k < n->n_inputs && k < 64; k++) {
            if (is_param_input(e, k)) continue;
            s->in[s->n_in++] = n->inputs[k];
        }
    }
    const int32_t end_node_step = p->n_steps;

    /* 3. outputs: a rank != 4 node value, listed once, is computed in its bound buffer; others are copied at the end */
    for (int32_t i = 0; i < g->n_outputs; i++) {
        const int32_t v = g->outputs[i];
        cpu_tensor *t = &p->t[v];
        int repeat = 0;
        for (int32_t j = 0; j < i; j++) repeat |= g->outputs[j] == v;
        if (g->values[v].kind == PAR_VALUE_NODE && !t->nhwc && !repeat) {
            t->kind = CPU_T_BOUND_OUT;
            t->port = i;
            continue;
        }
        if (t->raw) /* a raw node output listed twice: the copy step moves f32 only */
            FAIL(PAR_UNSUPPORTED, "graph output '%s' is listed twice and is %s; the cpu backend copies f32 only",
                 g->values[v].name, par_dtype_name(g->values[v].dtype));
        p->out_copy[i] = 1;
        cpu_step *s = add_step(p, NULL, t->nhwc ? "nhwc_to_nchw" : "copy_out");
        if (!s) FAIL(PAR_ERROR, "prepare: out of memory");
        s->run = cpu_step_out_copy;
        s->port = i;
        s->in[s->n_in++] = v;
    }

    /* 4. row chains, kinds and lifetimes */
    if (ctx->chain && (st = find_chains(p, use, first_node_step, end_node_step, msg)) != PAR_OK) goto fail;
    if ((st = set_lifetimes(p, msg)) != PAR_OK) goto fail;
    extend_chain_lifetimes(p);
    if ((st = place_arena(p, msg)) != PAR_OK) goto fail;

    /* 5. lower every node step (tensor layouts and arena places are final now) */
    for (int32_t si = first_node_step; si < end_node_step; si++) {
        cpu_step *s = &p->steps[si];
        s->variant = entry_of[si]->variant;
        if ((st = entry_of[si]->lower(p, s, msg)) != PAR_OK) {
            if (!strstr(msg->text, s->node->name)) {
                char why[PAR_MSG_LEN];
                snprintf(why, sizeof why, "%s", msg->text);
                par_msgf(msg, st, "prepare: node '%s' (%s): %s", s->node->name, s->node->op, why);
            }
            goto fail;
        }
        if (!s->run) FAIL(PAR_ERROR, "prepare: internal: node '%s' has no kernel", s->node->name);
    }
    free(use);
    free(entry_of);
    free(absorbed);
    *out = p;
    return PAR_OK;

fail:
    st = st == PAR_OK ? PAR_ERROR : st;
    free(use);
    free(entry_of);
    free(absorbed);
    cpu_plan_release(p);
    return st;
}
#undef FAIL

par_status cpu_plan_bind(cpu_plan *p, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    p->bound = 0;
    if (p->ctx->profile && !p->step_ms && !(p->step_ms = calloc((size_t)p->n_steps + 1, sizeof *p->step_ms)))
        return par_msgf(msg, PAR_ERROR, "bind: out of memory for the profile of %d steps", (int)p->n_steps);
    for (int32_t i = 0; i < g->n_inputs; i++) {
        if (!inputs[i]) return par_msgf(msg, PAR_ERROR, "bind: input %d ('%s') is NULL", i, g->values[g->inputs[i]].name);
        p->in_buf[i] = inputs[i];
        cpu_tensor *t = &p->t[g->inputs[i]];
        if (t->kind == CPU_T_BOUND_IN) t->data = (float *)(uintptr_t)inputs[i];
    }
    for (int32_t i = 0; i < g->n_outputs; i++) {
        if (!outputs[i])
            return par_msgf(msg, PAR_ERROR, "bind: output %d ('%s') is NULL", i, g->values[g->outputs[i]].name);
        p->out_buf[i] = outputs[i];
        cpu_tensor *t = &p->t[g->outputs[i]];
        if (t->kind == CPU_T_BOUND_OUT && t->port == i) t->data = outputs[i];
    }
    for (int32_t si = 0; si < p->n_steps; si++) {
        cpu_step *s = &p->steps[si];
        if (s->bind) {
            par_status st = s->bind(p, s, msg);
            if (st != PAR_OK) return st;
        }
    }
    p->bound = 1;
    return PAR_OK;
}

par_status cpu_plan_taps(cpu_plan *p, int32_t n, const int32_t *values, void *const *buffers, uint8_t *given,
                         par_msg *msg)
{
    const par_graph_desc *g = p->g;
    free(p->tap_of);
    free(p->tap_buf);
    p->tap_of = malloc(sizeof *p->tap_of * (size_t)(g->n_values > 0 ? g->n_values : 1));
    p->tap_buf = malloc(sizeof *p->tap_buf * (size_t)(n > 0 ? n : 1));
    if (!p->tap_of || !p->tap_buf) return par_msgf(msg, PAR_ERROR, "node outputs: out of memory");
    for (int32_t v = 0; v < g->n_values; v++) p->tap_of[v] = -1;
    for (int32_t i = 0; i < n; i++) {
        if (values[i] < 0 || values[i] >= g->n_values || !buffers[i])
            return par_msgf(msg, PAR_ERROR, "node outputs: tap %d names value %d of %d or has no buffer", (int)i,
                            (int)values[i], (int)g->n_values);
        p->tap_buf[i] = buffers[i];
        given[i] = 0;
        for (int32_t si = 0; si < p->n_steps && !given[i]; si++)
            given[i] = p->steps[si].node && p->steps[si].out == values[i];
        if (given[i]) p->tap_of[values[i]] = i;
    }
    return PAR_OK;
}

/* The tap of step s's output, when the harness asked for it: its value in logical order. */
static void tap_copy(const cpu_plan *p, const cpu_step *s)
{
    const int32_t k = s->node && s->out >= 0 ? p->tap_of[s->out] : -1;
    if (k < 0) return;
    const cpu_tensor *t = &p->t[s->out];
    if (t->raw) {
        memcpy(p->tap_buf[k], t->data, (size_t)t->numel * par_dtype_size(p->g->values[s->out].dtype));
        return;
    }
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, p->tap_buf[k], rm, t->data, t->strides);
}

par_status cpu_plan_run(cpu_plan *p, par_msg *msg)
{
    if (!p->bound) return par_msgf(msg, PAR_ERROR, "run: no buffers bound (bind must succeed before run)");
    if (p->tap_of) {
        for (int32_t si = 0; si < p->n_steps; si++) {
            p->steps[si].run(p, &p->steps[si]);
            tap_copy(p, &p->steps[si]);
        }
        return PAR_OK;
    }
    if (!p->step_ms) {
        for (int32_t si = 0; si < p->n_steps; si++) p->steps[si].run(p, &p->steps[si]);
        return PAR_OK;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int32_t si = 0; si < p->n_steps; si++) {
        p->steps[si].run(p, &p->steps[si]);
        clock_gettime(CLOCK_MONOTONIC, &b);
        p->step_ms[si] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6;
        a = b;
    }
    return PAR_OK;
}

int cpu_plan_step_times(const cpu_plan *p, double *total_ms, double *node_ms, int32_t n_nodes)
{
    if (!p || !p->step_ms) return 0;
    double total = 0;
    for (int32_t i = 0; i < n_nodes; i++) node_ms[i] = -1;
    for (int32_t si = 0; si < p->n_steps; si++) {
        total += p->step_ms[si];
        const par_node *n = p->steps[si].node;
        int32_t k = n ? (int32_t)(n - p->g->nodes) : -1; /* a boundary conversion counts in the total only */
        if (k >= 0 && k < n_nodes) node_ms[k] = (node_ms[k] < 0 ? 0 : node_ms[k]) + p->step_ms[si];
    }
    *total_ms = total;
    return 1;
}
