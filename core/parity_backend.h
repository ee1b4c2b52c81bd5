/*
 * parity_backend.h - the parity backend ABI.
 *
 * This is the one public header of parity. It is self-contained (C11 and the C standard library only) and is all
 * a backend developer needs to build a backend as a plugin:
 *
 *     cc -shared -fPIC $(pkg-config --cflags parity-backend) my_backend.c -o my_backend.so
 *     parity run --plugin ./my_backend.so -b my_backend
 *
 * A backend is one versioned table of function pointers (par_backend). Built-in backends and plugins use the same
 * table. A plugin exports one symbol, PAR_BACKEND_ENTRY_SYMBOL, of type par_backend_entry_fn, that returns its table.
 *
 * Life cycle (it follows XNNPACK's operator life cycle, so that latency can be reported per phase):
 *
 *     init -> [set knobs] -> supports(node) for every node -> prepare(graph) -> [node_algo(node) for every node]
 *          -> [node_requant(node) for every quantized node] -> [diagnostics] -> bind(buffers)
 *          -> (run -> [diagnostics, device_time]) x N -> release -> destroy
 *
 * The harness calls every entry point of one backend context from one thread. It runs each case in a child process
 * with a time limit, so a backend that crashes or hangs costs that case (verdict CRASH or TIMEOUT), not the run.
 *
 * The graph a backend receives is read-only, topologically ordered, validated and shape-inferred: every value has its
 * dtype and shape, every node carries every attribute of its op's schema (defaults filled in), optional inputs that
 * are absent have index -1. Tensors are logical NCHW (PyTorch order), dense, row-major; constants' data is in the
 * value's dtype. A backend converts to its own physical layout at its boundary: that conversion is under test too.
 *
 * Ops are identified by name (node->op, e.g. "conv2d"); `parity list ops` prints the op set with each op's inputs and
 * attribute schema, and docs/ops.md documents their semantics. Dispatch on the name: names are stable across
 * versions, new ops are added without changing this ABI.
 *
 * Rules for backends:
 *  - Never write outside the output buffers given to bind; the harness surrounds them with guard regions and fails
 *    the case on any write there. Write every output element on every run: outputs are poisoned before each run.
 *  - Return PAR_UNSUPPORTED (with a reason) for what the backend does not implement; that is reported as UNSUPPORTED,
 *    never as a failure. Return PAR_ERROR only for a real error.
 *  - Messages go into the caller's par_msg; keep them to one line.
 */
#ifndef PARITY_BACKEND_H
#define PARITY_BACKEND_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version. A plugin built against another major version is refused with a clear error.
 * 2: par_node has no op_id (plugins dispatch on node->op, the op's name); docs/writing-a-backend.md, "Migrating
 *    from v1". */
#define PAR_BACKEND_API_VERSION 2u

/* The symbol a plugin exports. */
#define PAR_BACKEND_ENTRY_SYMBOL "parity_backend_entry"

#define PAR_MAX_RANK 6

/* ---------------------------------------------------------------------------------------------------------------
 * Data types
 * ------------------------------------------------------------------------------------------------------------- */
typedef enum par_dtype {
    PAR_DTYPE_INVALID = 0,
    PAR_DTYPE_F32 = 1, /* IEEE binary32 */
    PAR_DTYPE_F16 = 2, /* IEEE binary16, stored as uint16_t */
    PAR_DTYPE_F64 = 3, /* binary64; the reference's own type, never handed to a backend */
    PAR_DTYPE_QU8 = 4, /* uint8_t, real = scale * (q - zero_point), as PyTorch quint8 */
    PAR_DTYPE_QS8 = 5, /* int8_t, real = scale * (q - zero_point), as PyTorch qint8; per-channel scales allowed */
    PAR_DTYPE_I32 = 6, /* int32_t: quantized bias (scale = in_scale * w_scale, zero point 0) and indices */
    PAR_DTYPE_BOOL = 7, /* one byte, 0 (false) or 1 (true): conditions and masks (where, masked_fill); any other
                         * byte value is never handed to a backend. Added in ABI 2 without a version change: a
                         * backend that does not know it answers UNSUPPORTED from supports() */
    PAR_DTYPE_QS16 = 8, /* int16_t, real = scale * q, zero point 0, per-tensor scale: the int16 activations of the
                         * 16a8w / 16a4w forms (docs/quantization.md). Added in ABI 2 like bool: a backend that does
                         * not know it answers UNSUPPORTED from supports() */
} par_dtype;

static inline size_t par_dtype_size(par_dtype t)
{
    switch (t) {
    case PAR_DTYPE_F32: return 4;
    case PAR_DTYPE_F16: return 2;
    case PAR_DTYPE_F64: return 8;
    case PAR_DTYPE_QU8: return 1;
    case PAR_DTYPE_QS8: return 1;
    case PAR_DTYPE_I32: return 4;
    case PAR_DTYPE_BOOL: return 1;
    case PAR_DTYPE_QS16: return 2;
    default: return 0;
    }
}

/* The stored range of a quantized activation dtype: 1 with [0, 255] for qu8, [-128, 127] for qs8, [-32768, 32767]
 * for qs16; 0 (and [0, 0]) for every other dtype. The one table of these ranges. */
static inline int par_dtype_qrange(par_dtype t, int32_t *lo, int32_t *hi)
{
    switch (t) {
    case PAR_DTYPE_QU8: *lo = 0, *hi = 255; return 1;
    case PAR_DTYPE_QS8: *lo = -128, *hi = 127; return 1;
    case PAR_DTYPE_QS16: *lo = -32768, *hi = 32767; return 1;
    default: *lo = *hi = 0; return 0;
    }
}

/* A quantized activation dtype (an integer with a scale and a zero point): qu8, qs8, qs16. */
static inline int par_dtype_is_quant(par_dtype t)
{
    int32_t l, h;
    return par_dtype_qrange(t, &l, &h);
}

static inline const char *par_dtype_name(par_dtype t)
{
    switch (t) {
    case PAR_DTYPE_F32: return "f32";
    case PAR_DTYPE_F16: return "f16";
    case PAR_DTYPE_F64: return "f64";
    case PAR_DTYPE_QU8: return "qu8";
    case PAR_DTYPE_QS8: return "qs8";
    case PAR_DTYPE_I32: return "i32";
    case PAR_DTYPE_BOOL: return "bool";
    case PAR_DTYPE_QS16: return "qs16";
    default: return "invalid";
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Values (tensors) and nodes
 * ------------------------------------------------------------------------------------------------------------- */
typedef enum par_value_kind {
    PAR_VALUE_INPUT = 1, /* a graph input, bound at bind time */
    PAR_VALUE_CONST = 2, /* a constant (weights, bias): data is set */
    PAR_VALUE_NODE = 3,  /* produced by a node; may also be a graph output */
} par_value_kind;

typedef struct par_value {
    const char *name;
    par_dtype dtype;
    int32_t rank;                  /* 0..PAR_MAX_RANK */
    int64_t dims[PAR_MAX_RANK];    /* logical NCHW; dims[i] >= 0 (0-sized tensors are rejected by validation) */
    int64_t numel;                 /* product of dims (1 for rank 0) */
    par_value_kind kind;
    int32_t producer;              /* index of the producing node, or -1 */
    const void *data;              /* PAR_VALUE_CONST: numel elements of dtype, row-major; NULL otherwise */
    /* Quantization (qu8, qs8, qs16, and i32 bias). Per-tensor: scale, zero_point. Per-channel (qs8 weights only):
     * quant_axis >= 0 and channel_scales[dims[quant_axis]], zero point 0. */
    float scale;
    int32_t zero_point;
    int32_t quant_axis;            /* -1: per-tensor */
    const float *channel_scales;   /* NULL unless quant_axis >= 0 */
} par_value;

typedef enum par_attr_type {
    PAR_ATTR_INT = 1,    /* i */
    PAR_ATTR_FLOAT = 2,  /* f */
    PAR_ATTR_INTS = 3,   /* count, ints */
    PAR_ATTR_FLOATS = 4, /* count, floats */
    PAR_ATTR_STRING = 5, /* s */
} par_attr_type;

typedef struct par_attr {
    const char *name;
    par_attr_type type;
    int64_t i;
    double f;
    const char *s;
    int32_t count;
    const int64_t *ints;
    const double *floats;
} par_attr;

typedef struct par_node {
    const char *name;           /* unique in the graph */
    const char *op;             /* op name, e.g. "conv2d": the stable identity of the op; dispatch on it */
    int32_t n_inputs;
    const int32_t *inputs;      /* value indices; -1 for an absent optional input (e.g. conv2d without bias) */
    int32_t n_outputs;
    const int32_t *outputs;     /* value indices */
    int32_t n_attrs;
    const par_attr *attrs;      /* every attribute of the op's schema, defaults filled in */
} par_node;

typedef struct par_graph_desc {
    const char *name;
    int32_t n_values;
    const par_value *values;
    int32_t n_nodes;
    const par_node *nodes;      /* topologically ordered */
    int32_t n_inputs;
    const int32_t *inputs;      /* value indices of the graph inputs, in bind order */
    int32_t n_outputs;
    const int32_t *outputs;     /* value indices of the graph outputs, in bind order */
} par_graph_desc;

/* Attribute look-up helpers. Validation guarantees every schema attribute is present with its declared type. */
static inline const par_attr *par_node_attr(const par_node *n, const char *name)
{
    for (int32_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

static inline int64_t par_attr_int(const par_node *n, const char *name, int64_t fallback)
{
    const par_attr *a = par_node_attr(n, name);
    return (a && a->type == PAR_ATTR_INT) ? a->i : fallback;
}

static inline double par_attr_float(const par_node *n, const char *name, double fallback)
{
    const par_attr *a = par_node_attr(n, name);
    if (!a) return fallback;
    if (a->type == PAR_ATTR_FLOAT) return a->f;
    if (a->type == PAR_ATTR_INT) return (double)a->i;
    return fallback;
}

/* Element idx of an int-list attribute, or fallback when absent or too short. */
static inline int64_t par_attr_ints_at(const par_node *n, const char *name, int32_t idx, int64_t fallback)
{
    const par_attr *a = par_node_attr(n, name);
    return (a && a->type == PAR_ATTR_INTS && idx >= 0 && idx < a->count) ? a->ints[idx] : fallback;
}

static inline int32_t par_attr_count(const par_node *n, const char *name)
{
    const par_attr *a = par_node_attr(n, name);
    return a ? a->count : 0;
}

static inline double par_attr_floats_at(const par_node *n, const char *name, int32_t idx, double fallback)
{
    const par_attr *a = par_node_attr(n, name);
    return (a && a->type == PAR_ATTR_FLOATS && idx >= 0 && idx < a->count) ? a->floats[idx] : fallback;
}

static inline const char *par_attr_str(const par_node *n, const char *name, const char *fallback)
{
    const par_attr *a = par_node_attr(n, name);
    return (a && a->type == PAR_ATTR_STRING) ? a->s : fallback;
}

static inline const par_value *par_node_input(const par_graph_desc *g, const par_node *n, int32_t i)
{
    return (i < n->n_inputs && n->inputs[i] >= 0) ? &g->values[n->inputs[i]] : NULL;
}

static inline const par_value *par_node_output(const par_graph_desc *g, const par_node *n, int32_t i)
{
    return (i < n->n_outputs) ? &g->values[n->outputs[i]] : NULL;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Status and messages
 * ------------------------------------------------------------------------------------------------------------- */
typedef enum par_status {
    PAR_OK = 0,
    PAR_UNSUPPORTED = 1, /* a valid graph the backend does not implement: verdict UNSUPPORTED, with the message */
    PAR_ERROR = 2,       /* a real failure: verdict ERROR, with the message */
} par_status;

#define PAR_MSG_LEN 512
typedef struct par_msg {
    char text[PAR_MSG_LEN];
} par_msg;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline par_status par_msgf(par_msg *m, par_status st, const char *fmt, ...)
{
    if (m) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->text, sizeof m->text, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The backend table
 * ------------------------------------------------------------------------------------------------------------- */

/* The arithmetic a backend declares; the oracle derives its error budgets from it (docs/oracle.md). */
typedef enum par_arith {
    PAR_ARITH_F32 = 0,         /* f32 storage and f32 arithmetic: unit roundoff 2^-24 */
    PAR_ARITH_F16_STORAGE = 1, /* f16 storage between ops, f32 arithmetic inside ops: 2^-11 storage, 2^-24 compute */
    PAR_ARITH_F16 = 2,         /* f16 storage and f16 (relaxed) arithmetic: 2^-11 */
    /* f32 storage between ops and f32 arithmetic, but the operands of the dot-product ops (conv2d, conv_transpose2d,
     * linear, matmul: their inputs, weights and bias) may each be rounded to bfloat16 on entry, unit roundoff 2^-8,
     * the products then accumulated in f32: oneDNN's fpmath mode bf16, vdpbf16ps, AMX. Every other op is f32. */
    PAR_ARITH_BF16 = 3,
    /* bfloat16 storage between ops (every activation, graph input and constant rounded to bfloat16 where it is
     * stored: unit roundoff 2^-8, f32's exponent range), f32 arithmetic inside ops: OpenVINO's CPU plugin with
     * INFERENCE_PRECISION_HINT bf16. The dot products' operands are the stored bfloat16 values themselves. */
    PAR_ARITH_BF16_STORAGE = 4,
    PAR_ARITH_N_KINDS          /* the number of kinds; not an arithmetic */
} par_arith;

typedef struct par_backend {
    uint32_t api_version;   /* PAR_BACKEND_API_VERSION */
    uint32_t struct_size;   /* sizeof(par_backend) when built */
    const char *name;       /* short, [a-z0-9_]+, e.g. "cpu" */
    const char *description;/* one line */
    const char *version;    /* the backend's own version string, reported */
    par_arith arith;        /* arithmetic of float graphs (a context may change it: PAR_PROC_ARITH) */

    /* Create a backend context. Returning PAR_UNSUPPORTED means "not usable on this machine" (no device, ...). */
    par_status (*init)(void **ctx, par_msg *msg);
    /* Destroy a context; destroy(NULL) is a no-op. */
    void (*destroy)(void *ctx);
    /* Can this backend run node `node` of graph `g`? PAR_OK or PAR_UNSUPPORTED with the reason. */
    par_status (*supports)(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg);
    /* Compile the whole graph: pack weights, create pipelines. Timed separately from run. */
    par_status (*prepare)(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg);
    /* Point at the buffers: inputs[i] for g->inputs[i], outputs[i] for g->outputs[i], logical NCHW, dense. The
     * buffers stay valid and in place until the next bind or release. */
    par_status (*bind)(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg);
    /* Execute once. Timed over repetitions; must produce the same bits every time for the same inputs. */
    par_status (*run)(void *ctx, void *prepared, par_msg *msg);
    /* Free a prepared graph; release(ctx, NULL) is a no-op. */
    void (*release)(void *ctx, void *prepared);
    /* Optional extras by name (may be NULL, may return NULL): see the PAR_PROC_* names below. */
    void *(*get_proc)(void *ctx, const char *name);
} par_backend;

/* Optional get_proc entries. */

/* par_status ready(void *ctx, par_msg *msg): called once after the knobs are set, before anything else: is this
 * context usable with its knobs? PAR_UNSUPPORTED (with the reason) makes the instance unusable, as init's would;
 * for a backend whose usability depends on its knobs (a runner's program and its options, docs/runners.md). */
#define PAR_PROC_READY "parity_ready"
typedef par_status (*par_ready_fn)(void *ctx, par_msg *msg);

/* size_t companion(const char *const *keys, const char *const *values, int32_t n_knobs, char *argv, size_t len),
 * asked with ctx NULL, of built-in backends only: a process the backend wants kept across jobs (a runtime's runner, docs/runners.md), chosen
 * by the instance's knobs. It writes the process's argv into argv (NUL-separated strings, then an empty one) and
 * returns the length it needed (0: no companion). Each fork server starts it before its warm start, its stdin,
 * stdout and stderr pipes, and tells its backend children where they are in the environment variable
 * PARITY_COMPANION="IN_W OUT_R ERR_R PID STATE_FD" (the fds of the companion's stdin, stdout and stderr, its pid,
 * and a shared page whose first uint32 the child sets to 1 while it has a request in flight and back to 0 when the
 * reply is read). It is kept across jobs, and killed and started afresh after a job that ended with a request in
 * flight (a time-out, a crash) or when it died. A child that finds the companion gone
 * (its stdout closed) should _exit(PAR_COMPANION_GONE): the job then ends as the companion did (its signal or exit
 * status). Where the variable is absent (the probe, --no-isolate) the backend starts the process itself. */
#define PAR_PROC_COMPANION "parity_companion"
typedef size_t (*par_companion_fn)(const char *const *keys, const char *const *values, int32_t n_knobs, char *argv,
                                   size_t len);
#define PAR_COMPANION_GONE 86

/* int reuse(void *ctx): nonzero when this context, after a job that ended cleanly (its prepared graph released), may
 * serve the next job of the same instance in the same process: the backend child is then kept across jobs (init and
 * knobs once, destroy when the child ends), so that what init builds (a Vulkan device, a loaded library) and caches
 * the context keeps (compiled pipelines, scripted modules) serve many cases. Declare it only where no job can change
 * a later job's results: caches keyed by everything that determines what they hold, and nothing kept that points
 * into a graph (each job's graph, inputs and outputs are unmapped at its end). The harness keeps a child only
 * after a job whose verdict is PASS or UNSUPPORTED, for at most PARITY_KEEP_CHILD jobs (default 200; 0: a fresh
 * child for every job), and never for a backend with a companion (docs/reliability.md, "Kept backend children"). */
#define PAR_PROC_REUSE "parity_reuse"
typedef int (*par_reuse_fn)(void *ctx);

/* par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg): a backend setting, e.g.
 * threads=2 or kernels=scalar, set after init and before any prepare. Unknown keys are PAR_ERROR. */
#define PAR_PROC_SET_KNOB "parity_set_knob"
typedef par_status (*par_set_knob_fn)(void *ctx, const char *key, const char *value, par_msg *msg);

/* size_t describe(void *ctx, char *buf, size_t len): the effective settings as "key=value" pairs separated by
 * ';' (e.g. "threads=1;kernels=avx512f"), written into buf; returns the length it needed. Reported as is. */
#define PAR_PROC_DESCRIBE "parity_describe"
typedef size_t (*par_describe_fn)(void *ctx, char *buf, size_t len);

/* par_status microbench(void *ctx, const char *name, double *value, char *unit, size_t unit_len, par_msg *msg):
 * a backend's own micro-benchmark by name (e.g. "gemm" for its GEMM micro-kernel at a large size, "peak" for the
 * machine's measured arithmetic peak), for `parity bench --micro NAME`. Unknown names are PAR_UNSUPPORTED. */
#define PAR_PROC_MICROBENCH "parity_microbench"
typedef par_status (*par_microbench_fn)(void *ctx, const char *name, double *value, char *unit, size_t unit_len,
                                        par_msg *msg);

/* Requantization schemes of quantized (qu8/qs8) ops, as a backend declares them (docs/quantization.md): the
 * reference computes the exact integer result under the declared scheme. Each scheme has a tie rule (how an exact
 * half step of its own arithmetic rounds); where a single op's inputs are exact the oracle measures the rule the
 * backend follows at those ties and fails a record whose ties contradict the declared one, also outside strict mode.
 * New values are appended; the numbers never change. */
typedef enum par_requant {
    PAR_REQUANT_FP32 = 0,     /* float multiply by the scale ratio, round to nearest even (XNNPACK fp32) */
    PAR_REQUANT_RNDNU = 1,    /* 64-bit fixed-point multiply, shift, round half up (XNNPACK rndnu) */
    PAR_REQUANT_GEMMLOWP = 2, /* saturating rounding doubling high multiply, rounding divide by 2^n (NNAPI, TFLite) */
    PAR_REQUANT_RNDNA = 3,    /* rndnu's fixed-point multiply and shift, round half away from zero (XNNPACK rndna) */
    PAR_REQUANT_PYTORCH_QNNP = 4, /* PyTorch's QNNPACK: fp32 requantization (half to even); add with 22-bit
                                   * multipliers rounded half away from zero (pytorch_qnnp_add_quantize) */
    PAR_REQUANT_GEMMLOWP_ANDROID = 5, /* gemmlowp's rounding with Android's ratio: in_scale * w_scale in float, then
                                       * divided by out_scale in double (GetQuantizedConvolutionMultipler) */
} par_requant;

/* par_requant requant(void *ctx): the scheme of the backend's quantized ops; PAR_REQUANT_FP32 when absent. */
#define PAR_PROC_REQUANT "parity_requant"
typedef par_requant (*par_requant_fn)(void *ctx);

/* par_requant node_requant(void *ctx, void *prepared, int32_t node): the scheme the prepared graph requantizes node
 * `node` with, for a backend whose operators do not all follow one scheme (XNNPACK rounds its add half up and its
 * convolutions half to even). Asked once per quantized node (a node with a qu8 or qs8 output) after prepare and
 * after node_algo, before bind. Absent, or returning the backend-wide scheme (PAR_PROC_REQUANT): that scheme
 * applies. The declared scheme picks the node's reference integers and the tie rule its ties are judged by; a value
 * outside par_requant is an ERROR naming the node and the value. PAR_PROC_REQUANT_EXACT applies to every node. */
#define PAR_PROC_NODE_REQUANT "parity_node_requant"
typedef par_requant (*par_node_requant_fn)(void *ctx, void *prepared, int32_t node);

/* int requant_exact(void *ctx): non-zero when the backend promises that the integers of every quantized op it
 * supports are exactly the declared scheme's (docs/quantization.md, "Strict mode"). The oracle then labels no
 * alternative (no other scheme, no tie) at any node: every integer must match, so a bug anywhere in a deep quantized
 * graph shows at its outputs. Absent or 0: the default, where other schemes' one-step differences pass labelled. */
#define PAR_PROC_REQUANT_EXACT "parity_requant_exact"
typedef int (*par_requant_exact_fn)(void *ctx);

/* Algorithms a backend may declare for a node (PAR_PROC_NODE_ALGO). The oracle judges a node with the error budget
 * of the algorithm its backend declared (docs/oracle.md, "Declared algorithms"; docs/budgets/winograd.md); an
 * undeclared node is judged as PAR_ALGO_DIRECT. Each Winograd value means exactly the transform matrices below
 * (Lavin and Gray 2016; the points of wincnn, NNPACK and ncnn), applied to output tiles aligned at output (0, 0),
 * each 2-D transform as two 1-D passes; a backend using other points or another tiling declares PAR_ALGO_DIRECT's
 * budget by declaring nothing. Only conv2d with a 3x3 kernel, stride 1, dilation 1 and a float output can be
 * Winograd; a Winograd value for any other node, or a value outside the enum, is an ERROR naming node and value.
 *   F(2x2,3x3), points 0, 1, -1:      B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *                                      G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
 *                                      A^T = [1 1 1 0; 0 1 -1 -1]
 *   F(4x4,3x3), points 0, +-1, +-2:   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
 *                                             0 2 -1 -2 1 0; 0 4 0 -5 0 1]
 *                                      G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 *                                             1/24 -1/12 1/6; 0 0 1]
 *                                      A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
 *   F(6x6,3x3), points 0, +-1, +-2, +-1/2 (ncnn's order):
 *                                      B^T = [1 0 -21/4 0 21/4 0 -1 0; 0 1 1 -17/4 -17/4 1 1 0;
 *                                             0 -1 1 17/4 -17/4 -1 1 0; 0 1/2 1/4 -5/2 -5/4 2 1 0;
 *                                             0 -1/2 1/4 5/2 -5/4 -2 1 0; 0 2 4 -5/2 -5 1/2 1 0;
 *                                             0 -2 4 5/2 -5 -1/2 1 0; 0 -1 0 21/4 0 -21/4 0 1]
 *                                      G   = [1 0 0; -2/9 -2/9 -2/9; -2/9 2/9 -2/9; 1/90 1/45 2/45;
 *                                             1/90 -1/45 2/45; 32/45 16/45 8/45; 32/45 -16/45 8/45; 0 0 1]
 *                                      A^T = [1 1 1 1 1 1 1 0; 0 1 -1 2 -2 1/2 -1/2 0; 0 1 1 4 4 1/4 1/4 0;
 *                                             0 1 -1 8 -8 1/8 -1/8 0; 0 1 1 16 16 1/16 1/16 0;
 *                                             0 1 -1 32 -32 1/32 -1/32 1]
 * Each output tile is Y = A^T [sum_c (G g_c G^T) (elementwise *) (B^T d_c B)] A (+ bias). */
typedef enum par_algo {
    PAR_ALGO_DIRECT = 0,           /* direct or GEMM (im2col, indirection) summation of the k products: the default */
    PAR_ALGO_WINOGRAD_2X2_3X3 = 1, /* Winograd F(2x2,3x3), the matrices above */
    PAR_ALGO_WINOGRAD_4X4_3X3 = 2, /* Winograd F(4x4,3x3) */
    PAR_ALGO_WINOGRAD_6X6_3X3 = 3, /* Winograd F(6x6,3x3) */
    PAR_ALGO_COUNT                 /* not an algorithm: the number of values */
} par_algo;

/* par_algo node_algo(void *ctx, void *prepared, int32_t node): the algorithm the prepared graph computes node `node`
 * with, asked once per node after prepare (before bind). Absent: every node is PAR_ALGO_DIRECT. */
#define PAR_PROC_NODE_ALGO "parity_node_algo"
typedef par_algo (*par_node_algo_fn)(void *ctx, void *prepared, int32_t node);

/* ---------------------------------------------------------------------------------------------------------------
 * Arithmetic flags: properties of a backend's float arithmetic beyond its par_arith (docs/oracle.md, "Flushed
 * subnormals"). Additive to version 2: a backend without the entry declares none.
 * ------------------------------------------------------------------------------------------------------------- */

/* Subnormals are flushed: any subnormal input element (|x| below the smallest normal number of the format, 2^-126
 * for f32, 2^-14 for f16) may be read as a zero of either sign (DAZ), and any subnormal result, of an op or of an
 * intermediate operation inside it (a product, a partial sum), may be written as a zero of either sign (FTZ). This
 * is what x86's MXCSR FTZ and DAZ bits and ARM's FPCR.FZ give; XNNPACK runs every operator so. The oracle then
 * budgets the smallest normal as an absolute error of every such operation; undeclared, a flushed subnormal fails. */
#define PAR_ARITH_FLUSH_SUBNORMALS 0x1u
/* Every flag this version defines; a backend declaring any other bit is an ERROR naming it. */
#define PAR_ARITH_FLAGS_KNOWN 0x1u

/* The name of an arith as reports show it: "f32", "f16_storage", "f16", "bf16", "bf16_storage", or "unknown". */
static inline const char *par_arith_name(par_arith a)
{
    switch (a) {
    case PAR_ARITH_F32: return "f32";
    case PAR_ARITH_F16_STORAGE: return "f16_storage";
    case PAR_ARITH_F16: return "f16";
    case PAR_ARITH_BF16: return "bf16";
    case PAR_ARITH_BF16_STORAGE: return "bf16_storage";
    default: return "unknown";
    }
}

/* The name of one flag bit as reports show it ("flush_subnormals"), or NULL for a bit this version does not define. */
static inline const char *par_arith_flag_name(uint32_t bit)
{
    return bit == PAR_ARITH_FLUSH_SUBNORMALS ? "flush_subnormals" : NULL;
}

/* uint32_t arith_flags(void *ctx): the PAR_ARITH_* flags of the backend's float arithmetic; 0 when absent. Asked
 * once per backend instance, after init and knobs (a knob may change it). */
#define PAR_PROC_ARITH_FLAGS "parity_arith_flags"
typedef uint32_t (*par_arith_flags_fn)(void *ctx);

/* ---------------------------------------------------------------------------------------------------------------
 * Per-context declarations, diagnostics and device time. Additive to version 2: a backend without an entry keeps
 * the behaviour of before.
 * ------------------------------------------------------------------------------------------------------------- */

/* par_arith arith(void *ctx): the arithmetic of float graphs for this context, when a knob can change it (for
 * example precision=fp16 on a GPU backend). Asked once per backend instance, after init and knobs, with the
 * arithmetic flags; it then replaces the table's `arith` for that instance: the oracle's precision profile and the
 * reports follow it. Absent: the table's `arith`. A value outside par_arith is an ERROR naming the backend. */
#define PAR_PROC_ARITH "parity_arith"
typedef par_arith (*par_arith_fn)(void *ctx);

/* size_t diagnostics(void *ctx, void *prepared, char *buf, size_t len): a defect the backend's own checking found
 * during the last prepare or run, such as a message of a graphics API's validation layer. Asked after prepare and
 * after every run; returning nonzero (the length it needed) with a one-line NUL-terminated text in buf makes the
 * case's verdict FAIL with that text as the reason, whatever the output values (a worse verdict stays). A backend
 * reports each message once: the text of one call is not repeated by the next. */
#define PAR_PROC_DIAGNOSTICS "parity_diagnostics"
typedef size_t (*par_diagnostics_fn)(void *ctx, void *prepared, char *buf, size_t len);

/* int device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes): the device's own
 * time of the last run in milliseconds, as its timestamps measured it (a GPU's timestamp queries around each
 * dispatch): the whole run in *total_ms and node i's share in node_ms[i] (n_nodes is the graph's node count; a node
 * with no work of its own on the device, or not timed apart, gets -1). Returns 1 when measured, 0 when the device
 * cannot time (then nothing is reported). Asked after every run; reported beside the wall time, per run in
 * report.json and per node by `parity bench`. */
#define PAR_PROC_DEVICE_TIME "parity_device_time"
typedef int (*par_device_time_fn)(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes);

/* size_t note(void *ctx, void *prepared, char *buf, size_t len): one line about how the backend prepared this graph
 * that a reader of the report needs and no other field holds, such as where each part of a partitioned graph runs
 * ("3 operations on npu, 1 on cpu: softmax0"). Asked once after prepare; returning nonzero (the length it needed)
 * with a NUL-terminated text in buf puts the text in the record's `note`. It never changes a verdict. */
#define PAR_PROC_NOTE "parity_note"
typedef size_t (*par_note_fn)(void *ctx, void *prepared, char *buf, size_t len);

/* par_status node_outputs(void *ctx, void *prepared, int32_t n, const int32_t *values, void *const *buffers,
 *                         uint8_t *given, par_msg *msg): the values of chosen nodes of the prepared graph as the
 * backend computes them when it runs that graph, fused path included, for localization (docs/oracle.md, "Which layer").
 * Asked at most once per prepared graph, after prepare and the declarations, before bind: values[i] (n of them,
 * distinct) are indices of node values of the graph (g->values[values[i]].kind == PAR_VALUE_NODE; graph outputs
 * may be among them), and buffers[i] a buffer for value values[i], logical NCHW, dense, of its dtype, valid until
 * release. From then on every run writes into buffers[i] the value the run computed, at the precision the backend
 * held it in (an f16 intermediate widened exactly), and changes nothing else: outputs, timing and bits stay those
 * of a run without it. given[i] (zeroed by the harness) is set to 1 for each value the prepared graph holds; a
 * value it never holds (a convolution's output folded into its batch_norm or clamp) is left 0, its buffer
 * untouched, and the harness judges the next value it does hold. PAR_OK, or PAR_UNSUPPORTED (none given: the
 * harness then runs a graph with every node's output made a graph output, else prefixes), or PAR_ERROR. Additive
 * to version 2: a backend without the entry is localized as before. */
#define PAR_PROC_NODE_OUTPUTS "parity_node_outputs"
typedef par_status (*par_node_outputs_fn)(void *ctx, void *prepared, int32_t n, const int32_t *values,
                                          void *const *buffers, uint8_t *given, par_msg *msg);

/* ---------------------------------------------------------------------------------------------------------------
 * The backend kit: what every backend, built-in or plugin, reads and says the same way. A knob setter built from
 * these refuses alike everywhere (the same limits, the same words), and a new backend writes none of it again.
 * ------------------------------------------------------------------------------------------------------------- */

/* The most threads a backend is asked for (the harness checks `threads` against it before any backend sees it). */
#define PAR_MAX_THREADS 64

/* The one refusal of a knob that comes too late: after the backend prepared (or, with `what`, did) its first graph. */
static inline par_status par_knob_too_late(const char *key, const char *what, par_msg *msg)
{
    return par_msgf(msg, PAR_ERROR, "knob '%s': knobs must be set before the first %s", key, what ? what : "prepare");
}

/* An integer knob in [lo, hi]: decimal digits only (an optional '-' where lo is negative), no overflow. */
static inline par_status par_knob_int(const char *key, const char *value, long lo, long hi, long *out, par_msg *msg)
{
    long v = 0;
    int neg = value && value[0] == '-' && lo < 0, digits = 0, big = 0;
    for (const char *p = value ? value + neg : ""; *p; p++, digits++) {
        if (*p < '0' || *p > '9') {
            digits = 0;
            break;
        }
        if (v > (hi > -lo ? hi : -lo) / 10 + 1) big = 1;
        else v = v * 10 + (*p - '0');
    }
    if (neg) v = -v;
    if (!digits || big || v < lo || v > hi)
        return par_msgf(msg, PAR_ERROR, "knob '%s': '%.40s' is not an integer in [%ld, %ld]", key, value ? value : "",
                        lo, hi);
    *out = v;
    return PAR_OK;
}

/* A `kernels` knob naming a kernel set this machine lacks: UNSUPPORTED (the instance cannot run here, which a
 * report shows as a skip with this reason), never an error and never a quiet fallback to another set. */
static inline par_status par_knob_isa_missing(const char *value, const char *best, par_msg *msg)
{
    return par_msgf(msg, PAR_UNSUPPORTED, "knob 'kernels': this machine lacks %.40s (the best set here: %s)", value,
                    best ? best : "scalar");
}

/* The shared knob `threads`: an integer in [1, PAR_MAX_THREADS]. */
static inline par_status par_knob_threads(const char *value, int *out, par_msg *msg)
{
    long v = 0;
    par_status st = par_knob_int("threads", value, 1, PAR_MAX_THREADS, &v, msg);
    if (st == PAR_OK) *out = (int)v;
    return st;
}

/* A switch: "0" or "1". */
static inline par_status par_knob_bool(const char *key, const char *value, int *out, par_msg *msg)
{
    if (!value || (strcmp(value, "0") != 0 && strcmp(value, "1") != 0))
        return par_msgf(msg, PAR_ERROR, "knob '%s': '%.40s' is not 0 or 1", key, value ? value : "");
    *out = value[0] == '1';
    return PAR_OK;
}

/* The clamp family (docs/ops.md): relu [0, inf), relu6 [0, 6], hardtanh [min_val, max_val] (default [-1, 1]),
 * clamp [min, max] (default unbounded). Returns 1 with the node's bounds, or 0 (bounds -inf, inf) when the node is
 * none of them. */
static inline int par_clamp_bounds(const par_node *n, double *lo, double *hi)
{
    *lo = -HUGE_VAL, *hi = HUGE_VAL;
    if (strcmp(n->op, "relu") == 0) *lo = 0.0, *hi = HUGE_VAL;
    else if (strcmp(n->op, "relu6") == 0) *lo = 0.0, *hi = 6.0;
    else if (strcmp(n->op, "hardtanh") == 0) *lo = par_attr_float(n, "min_val", -1.0), *hi = par_attr_float(n, "max_val", 1.0);
    else if (strcmp(n->op, "clamp") == 0)
        *lo = par_attr_float(n, "min", -HUGE_VAL), *hi = par_attr_float(n, "max", HUGE_VAL);
    else return 0;
    return 1;
}

/* The same bounds in f32, as a kernel's clamp holds them. */
static inline int par_clamp_bounds_f32(const par_node *n, float *lo, float *hi)
{
    double l, h;
    int is = par_clamp_bounds(n, &l, &h);
    *lo = (float)l;
    *hi = (float)h;
    return is;
}

/* 4-bit weights (linear_8da4w, linear_16a4w; docs/quantization.md, "4-bit weights"): a qu8 [O, K / 2] constant of
 * bytes holding two weights each, read as the node's attributes declare. w4: a nibble's code, "s4" two's complement
 * in [-8, 7] or "u4" unsigned in [0, 15]; w4_zp: the zero point subtracted from the code, within the code's range
 * (XNNPACK's qc4w and ggml's q4_0 are u4 with 8); nibbles: "lo", weight 2j in bits 0-3 of byte j and 2j + 1 in bits
 * 4-7 (XNNPACK's and ggml's order), or "hi", the other way round. The weight is code - w4_zp, in
 * [lo - w4_zp, lo + 15 - w4_zp]. One table of codes; par_int4_form reads a node's form (0 when an attribute is out of
 * its range: the shape check refuses such a node, naming the attribute). */
typedef struct par_int4 {
    int code_lo;  /* the smallest code: -8 (s4) or 0 (u4); a code spans 16 values */
    int zp;       /* w4_zp */
    int hi_first; /* nibbles = "hi" */
} par_int4;

static inline int par_int4_form(const par_node *n, par_int4 *f)
{
    static const struct {
        const char *name;
        int lo;
    } codes[] = {{"s4", -8}, {"u4", 0}};
    const char *w4 = par_attr_str(n, "w4", "s4"), *order = par_attr_str(n, "nibbles", "lo");
    f->code_lo = 1; /* no code */
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(w4, codes[i].name) == 0) f->code_lo = codes[i].lo;
    f->zp = (int)par_attr_int(n, "w4_zp", 0);
    f->hi_first = strcmp(order, "hi") == 0;
    return f->code_lo <= 0 && f->zp >= f->code_lo && f->zp <= f->code_lo + 15 &&
           (f->hi_first || strcmp(order, "lo") == 0);
}

/* Weight k of a row whose byte k / 2 is `byte`. */
static inline int par_int4_of(const par_int4 *f, int byte, int64_t k)
{
    const int c = (byte >> (4 * ((int)(k & 1) ^ f->hi_first))) & 15;
    return (f->code_lo < 0 && c >= 8 ? c - 16 : c) - f->zp;
}

/* Whether the form's weights are the signed nibbles [-8, 7] (s4 with zero point 0, u4 with 8): what a kernel
 * multiplying sign-extended nibbles takes after swapping the halves of a byte and flipping the codes' top bit. */
static inline int par_int4_signed_range(const par_int4 *f)
{
    return f->code_lo - f->zp == -8;
}

/* Block scales declared bfloat16 (attribute scales = "bf16"): carried as f32 values, each exactly a bfloat16 (the
 * low 16 bits of its binary32 zero), which widens to f32 and f64 exactly. */
static inline int par_f32_is_bf16(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return (b & 0xffffu) == 0;
}

/* The entry point of a plugin. harness_api_version is the harness's PAR_BACKEND_API_VERSION; a plugin may return
 * NULL when it cannot serve that version. */
typedef const par_backend *(*par_backend_entry_fn)(uint32_t harness_api_version);

#ifdef __cplusplus
}
#endif

#endif /* PARITY_BACKEND_H */
