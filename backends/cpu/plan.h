/*
 * plan.h - private to the cpu backend: the prepared graph (the plan), its tensors in their physical layouts, its
 * steps, and the ops that steps run (ops_*.c). The helpers the planner and the ops share are in plan_util.h.
 *
 * Layouts: every rank-4 tensor inside the plan is NHWC; every other tensor is dense row-major in logical order.
 * A tensor is described by its logical (NCHW) dims and, per logical dim, its physical stride in elements, so that
 * data movement (concat, pad, slice, permute, reshape, broadcasting) is one strided walk whatever the layouts. Graph
 * inputs and outputs of rank 4 are converted at the boundary (a step at the start / end of the plan); the others are
 * read and written in place in the bound buffers.
 *
 * Steps are what run() executes, in order: one per graph node, except that a conv2d absorbs a following batch_norm
 * (folded into its weights) and a following relu / relu6 / hardtanh / clamp (its epilogue clamp), and a linear
 * absorbs a following clamp, when the intermediate value has one user and is not a graph output.
 *
 * Nothing here allocates at run time: steps take their scratch at prepare. Nothing reads the bound buffers but the
 * boundary steps and the steps that read or write a rank != 4 input or output directly.
 */
#ifndef CPU_PLAN_H
#define CPU_PLAN_H

#include <pthreadpool.h>

#include "core/parity_backend.h"
#include "cpu_kernels.h"

#define CPU_NAME "cpu"

/* The backend context: knobs and the thread pool (created at the first prepare, from the threads knob). */
typedef struct cpu_ctx {
    int threads;          /* knob threads=N, >= 1 */
    int kernels_forced;   /* 1 when kernels= named an ISA (not auto) */
    cpu_isa isa;          /* the ISA the kernels run with */
    cpu_isa detected;     /* the best this machine supports */
    int prepared;         /* knobs are refused once a graph was prepared */
    int profile;          /* knob profile=1: each step of a run timed, reported as PAR_PROC_DEVICE_TIME */
    int chain;            /* knob chain=1 (default): conv2d row chains (find_chains in plan.c) */
    pthreadpool_t pool;   /* NULL when threads = 1 */
} cpu_ctx;

/* ---- tensors ------------------------------------------------------------------------------------------------- */
typedef enum cpu_tensor_kind {
    CPU_T_NONE = 0,       /* not materialized (absorbed by a fusion, or never read) */
    CPU_T_ARENA = 1,      /* an intermediate in the plan's arena (also rank-4 inputs and outputs, converted) */
    CPU_T_CONST = 2,      /* a constant read by a step as an activation: in place, or an NHWC copy when rank 4 */
    CPU_T_BOUND_IN = 3,   /* a rank != 4 graph input read in place from the bound buffer */
    CPU_T_BOUND_OUT = 4,  /* a rank != 4 node value written straight into its bound output buffer */
} cpu_tensor_kind;

typedef struct cpu_tensor {
    float *data;                    /* where the elements are (set at prepare, or at bind for BOUND_*) */
    int32_t rank;
    int64_t dims[PAR_MAX_RANK];     /* logical (NCHW) dims */
    int64_t strides[PAR_MAX_RANK];  /* physical stride of each logical dim, in elements */
    int64_t numel;
    int nhwc;                       /* rank 4, stored NHWC */
    int raw;                        /* bool or i32 (a condition, mask or index tensor): data points to its bytes,
                                     * row-major, read in place (a bound input or a constant), never NHWC */
    cpu_tensor_kind kind;
    int32_t first, last;            /* steps that define and last read it (arena liveness) */
    size_t offset;                  /* in the arena */
    int32_t port;                   /* BOUND_OUT: the graph output position it is bound to */
    float *owned;                   /* an NHWC copy of a rank-4 constant */
} cpu_tensor;

/* ---- steps --------------------------------------------------------------------------------------------------- */
typedef struct cpu_plan cpu_plan;
typedef struct cpu_step cpu_step;
typedef void (*cpu_step_fn)(const cpu_plan *p, const cpu_step *s);

#define CPU_LABEL_LEN 64

struct cpu_step {
    cpu_step_fn run;
    /* Optional: called at bind, after the tensors' pointers are final (conv setup builds its indirection buffer). */
    par_status (*bind)(const cpu_plan *p, cpu_step *s, par_msg *msg);
    void (*destroy)(void *state);
    void *state;                /* op-specific, owned by the step */
    const par_node *node;       /* the node the step computes (NULL for boundary conversions) */
    const par_node *bn;         /* conv2d: the batch_norm node folded into its weights, or NULL */
    int32_t variant;            /* the op table row's variant: which member of its lowering function's family */
    int32_t n_in;
    int32_t in[64];             /* tensor (= value) indices read; -1 for an absent optional input */
    int32_t out;                /* tensor written */
    int32_t port;               /* boundary steps: the graph input / output position they convert */
    float out_min, out_max;     /* fused clamp (conv2d, linear); -inf/inf when none */
    int32_t chain;              /* conv2d row chain: n > 1 in its first step (which runs all n), -1 in the others,
                                 * 0 outside a chain */
    float *scratch;             /* prepare-time scratch, owned */
    size_t scratch_len;         /* floats */
    char label[CPU_LABEL_LEN];  /* "conv2d+batch_norm+relu6", "nchw_to_nhwc", ... */
};

struct cpu_plan {
    const par_graph_desc *g;
    const cpu_ctx *ctx;
    cpu_isa isa;
    pthreadpool_t pool;
    cpu_tensor *t;              /* per value */
    cpu_step *steps;
    int32_t n_steps, cap_steps;
    float *arena;
    size_t arena_len;           /* floats */
    int32_t *out_copy;          /* per graph output: 1 when the last steps copy it (NHWC, input, constant, repeat) */
    void **out_buf;             /* per graph output: the bound buffer */
    const void **in_buf;        /* per graph input: the bound buffer */
    int bound;
    double *step_ms;            /* profile=1: each step's time in the last run (allocated at bind) */
    int32_t *tap_of;            /* per value: its tap (PAR_PROC_NODE_OUTPUTS), -1 none; NULL when nothing is tapped */
    void **tap_buf;             /* per tap: the harness's buffer */
};

/* ---- plan (plan.c) ------------------------------------------------------------------------------------------- */
par_status cpu_plan_prepare(const cpu_ctx *ctx, const par_graph_desc *g, cpu_plan **out, par_msg *msg);
par_status cpu_plan_bind(cpu_plan *p, const void *const *inputs, void *const *outputs, par_msg *msg);
par_status cpu_plan_run(cpu_plan *p, par_msg *msg);
void cpu_plan_release(cpu_plan *p);
/* PAR_PROC_NODE_OUTPUTS: after the step that computes value values[i], each run copies it (logical NCHW, dense)
 * into buffers[i]; given[i] = 1 for each value a step computes, 0 for one a fusion absorbed. */
par_status cpu_plan_taps(cpu_plan *p, int32_t n, const int32_t *values, void *const *buffers, uint8_t *given,
                         par_msg *msg);
/* profile=1: the last run's time per node (the sum of its steps; -1 for a node with none) and in all; 0 when the
 * plan was not profiled. */
int cpu_plan_step_times(const cpu_plan *p, double *total_ms, double *node_ms, int32_t n_nodes);
/* Whether this backend can run node `node` (dtypes, constant weights, op known). */
par_status cpu_plan_supports(const par_graph_desc *g, int32_t node, par_msg *msg);

/* Introspection for tests and reports: the steps in run order and what each fused. */
int32_t cpu_plan_step_count(const cpu_plan *p);
const char *cpu_plan_step_label(const cpu_plan *p, int32_t i);

/* ---- vector kernels (ops_vec_*.c, chosen by ISA) ------------------------------------------------------------- */
typedef enum cpu_binop { CPU_BIN_ADD = 0, CPU_BIN_SUB = 1, CPU_BIN_MUL = 2, CPU_BIN_DIV = 3 } cpu_binop;

typedef struct cpu_vops {
    /* y[i] = a[i*sa] op b[i*sb] with sa, sb in {0, 1} (a scalar operand has stride 0). */
    void (*binary)(cpu_binop op, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb, float *y);
    void (*clamp)(int64_t n, const float *x, float *y, float lo, float hi);
    void (*sigmoid)(int64_t n, const float *x, float *y);
    void (*tanh)(int64_t n, const float *x, float *y);
    void (*exp)(int64_t n, const float *x, float *y); /* x <= 88 */
    void (*hardswish)(int64_t n, const float *x, float *y);
    void (*hardsigmoid)(int64_t n, const float *x, float *y);
    /* y[i] = x[i] * s[i] + t[i] (one fused multiply-add) */
    void (*scale_shift)(int64_t n, const float *x, const float *s, const float *t, float *y);
} cpu_vops;

const cpu_vops *cpu_vops_for(cpu_isa isa);
const cpu_vops *cpu_vops_scalar(void);
const cpu_vops *cpu_vops_avx2(void);   /* NULL when not compiled in */
const cpu_vops *cpu_vops_avx512(void); /* NULL when not compiled in */
const cpu_vops *cpu_vops_neon(void);   /* NULL when not compiled in (not AArch64) */

/* ---- op variants: a row of the op table names its lowering function and, where that function lowers a family,
 * which member (cpu_step.variant), so no lowering function dispatches again by op name. ---------------------- */
enum { CPU_BIN_MINIMUM = 4, CPU_BIN_MAXIMUM, CPU_BIN_POW };  /* binary: cpu_binop's four, then these */
typedef enum cpu_unary_kind {                                /* cpu_lower_unary; the math ops are maps instead */
    CPU_UN_CLAMP, CPU_UN_LEAKY, CPU_UN_SIGMOID, CPU_UN_TANH, CPU_UN_HARDSIGMOID, CPU_UN_HARDSWISH, CPU_UN_ELU,
    CPU_UN_MAP
} cpu_unary_kind;
enum { CPU_POOL_MAX, CPU_POOL_AVG, CPU_POOL_ADAPTIVE, CPU_POOL_GLOBAL };              /* cpu_lower_pool2d */
enum { CPU_RED_MEAN, CPU_RED_SUM, CPU_RED_AMAX, CPU_RED_AMIN, CPU_RED_PROD };          /* cpu_lower_reduce */
enum { CPU_ARG_MAX, CPU_ARG_MIN };                                                    /* cpu_lower_arg */
enum { CPU_UP_NEAREST, CPU_UP_NEAREST_EXACT, CPU_UP_BILINEAR, CPU_UP_BICUBIC };       /* cpu_lower_upsample */
enum { CPU_NORM_LAYER, CPU_NORM_GROUP, CPU_NORM_INSTANCE, CPU_NORM_RMS };             /* cpu_lower_norm */
enum { CPU_SOFTMAX, CPU_LOG_SOFTMAX };                                                /* cpu_lower_softmax */
enum { CPU_CMP_EQ, CPU_CMP_GT, CPU_CMP_LT, CPU_CMP_GE, CPU_CMP_LE,                    /* cpu_lower_compare */
       CPU_LOG_AND, CPU_LOG_OR, CPU_LOG_XOR, CPU_LOG_NOT };                           /* cpu_lower_logical */

/* The element-wise unary maps (ops_eltwise.c): one row each, name and f32 function. An op found here needs no row
 * in the op table; it lowers through cpu_lower_map. NULL when `op` is not one of them. */
typedef float (*cpu_map_fn)(float x);
cpu_map_fn cpu_unary_map(const char *op);

/* ---- op lowering (ops_*.c): fill step s for node n at prepare; the planner has set s->in, s->out, s->node and the
 * tensors' layouts. Return PAR_UNSUPPORTED / PAR_ERROR with a message naming the node. ------------------------ */
typedef par_status (*cpu_lower_fn)(cpu_plan *p, cpu_step *s, par_msg *msg);

/* ops_eltwise.c */
par_status cpu_lower_binary(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_unary(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_prelu(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_batch_norm(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_softmax(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_map(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_gelu(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_pool.c */
par_status cpu_lower_pool2d(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_reduce(cpu_plan *p, cpu_step *s, par_msg *msg); /* mean, sum, amax */
par_status cpu_lower_arg(cpu_plan *p, cpu_step *s, par_msg *msg);    /* argmax, argmin: i32 out */
par_status cpu_lower_upsample(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_norm.c: layer_norm, group_norm, instance_norm, rms_norm */
par_status cpu_lower_norm(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_attention.c: rope, sdpa, slice_scatter */
par_status cpu_lower_rope(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_sdpa(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_slice_scatter(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_select.c: where, masked_fill, gather, embedding (their bool / i32 input is raw) */
par_status cpu_lower_where(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_masked_fill(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_gather(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_embedding(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_select.c: eq, gt, lt, ge, le (f32 in, bool out) and the logic ops (bool in and out): raw bool outputs */
par_status cpu_lower_compare(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_logical(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_dynamic.c: linear_dynamic (run-time qu8 input, qs8 weights, f32 epilogue), linear_8da4w (run-time qd8 rows,
 * packed int4 weights with block scales, f32 epilogue) */
par_status cpu_lower_linear_dynamic(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_linear_8da4w(cpu_plan *p, cpu_step *s, par_msg *msg);
/* ops_shape.c */
par_status cpu_lower_copy(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_permute(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_concat(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_pad(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_slice(cpu_plan *p, cpu_step *s, par_msg *msg);
void cpu_step_to_nhwc(const cpu_plan *p, const cpu_step *s);   /* boundary: bound NCHW input -> NHWC tensor */
void cpu_step_out_copy(const cpu_plan *p, const cpu_step *s);  /* boundary: tensor -> bound NCHW output */
/* ops_matrix.c: conv2d (with the batch_norm s->bn folded in when not NULL), linear, matmul, conv_transpose2d */
par_status cpu_lower_conv2d(cpu_plan *p, cpu_step *s, par_msg *msg);
/* conv2d step s's kernel parameters (from its node's attributes and its tensors' dims, before lowering). */
par_status cpu_conv2d_params(const cpu_plan *p, const cpu_step *s, cpu_conv_params *cp, par_msg *msg);
/* Row chains (cpu_conv_chain_run): consecutive conv2d steps that run by rows are chained when each one's output,
 * read only by the next, has at least CPU_CHAIN_MIN_BYTES (smaller ones stay in L2 anyway); at most CPU_CHAIN_MAX
 * steps; bands sized so an intermediate's rows of one band take at most CPU_CHAIN_BAND_BYTES. */
#define CPU_CHAIN_MAX 3
#define CPU_CHAIN_MIN_BYTES (1024u * 1024u)
#define CPU_CHAIN_BAND_BYTES (64u * 1024u)
par_status cpu_lower_linear(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_matmul(cpu_plan *p, cpu_step *s, par_msg *msg);
par_status cpu_lower_conv_transpose2d(cpu_plan *p, cpu_step *s, par_msg *msg);


#endif
