/*
 * gen_int.h - the graph generator's internals, shared by its parts: the choice source (gen_src.c), the value pool
 * and the checked node emitter (gen_emit.c), the per-family constraint functions (gen_ops*.c). The driver (gen.c)
 * calls the parts; the parts never call the driver.
 *
 * Every decision goes through gen_below(): from the portable PRNG for seeded graphs, from the fuzzer's bytes for
 * par_fuzz_case_from_bytes (zeros once they run out), so one code path serves both and stays deterministic.
 */
#ifndef PAR_FUZZ_GEN_INT_H
#define PAR_FUZZ_GEN_INT_H

#include "core/prng.h"
#include "gen/gen.h"

/* ---- the choice source (gen_src.c) ---- */
typedef struct gen_src {
    int bytes;              /* 0: PRNG; 1: byte stream */
    par_prng prng;
    const uint8_t *data;
    size_t n, pos;
} gen_src;

void gen_src_prng(gen_src *s, uint64_t seed);
void gen_src_bytes(gen_src *s, const uint8_t *data, size_t n);
uint32_t gen_below(gen_src *s, uint32_t n);                 /* uniform in [0, n); 0 when n <= 1 */
int64_t gen_range(gen_src *s, int64_t lo, int64_t hi);     /* uniform in [lo, hi]; lo when hi <= lo */
int gen_chance(gen_src *s, double p);                       /* 1 with probability p (2^-16 steps) */
double gen_real(gen_src *s, double lo, double hi);          /* [lo, hi) in 2^-16 steps: exact, no libm */

/* ---- the value pool and the emitter (gen_emit.c) ---- */
/* The highest rank an op of any rank is offered (new graph inputs: rank 4 at most, 5 now and then). */
#define GEN_RANK PAR_MAX_RANK

enum {
    GV_ACT = 1,  /* an f32 activation other nodes may consume */
    GV_POS = 2,  /* positive and bounded away from 0 (for sqrt, rsqrt, divisors) */
};

typedef struct gen_ctx {
    gen_src *src;
    par_case *c;
    const par_fuzz_opts *o;
    int32_t n_nodes;        /* op nodes so far */
    int32_t n_tensors;      /* inputs and constants so far (names) */
    int32_t cap;            /* size of flags / mag */
    uint8_t *flags;         /* per graph value */
    double *mag;            /* per graph value: a rough bound of |x| (for quantize scales) */
    int32_t *uses;          /* per graph value: consumers so far */
    int quant;              /* the graph will be quantized: index tensors and masks are constants (the quantizer
                             * takes f32 graph inputs only) */
    par_msg err;            /* first internal error */
    int failed;
} gen_ctx;

/* One input of a node to emit: an existing value, an absent optional input, or a new tensor (created only when
 * the node is accepted, so a refused attempt leaves nothing behind). */
typedef struct gen_in {
    int32_t v;              /* existing value; -1: new tensor (below) or absent */
    int absent;
    int is_const;
    par_dtype dt;
    int32_t rank;
    int64_t dims[PAR_MAX_RANK];
    par_gen gen;
    float scale;            /* quantized dtypes: per-tensor parameters */
    int32_t zp;
    int32_t ch_axis;        /* >= 0: per-channel qs8 scales on this axis (scale * (1 + k/8 mod 4)) */
    int pos;                /* the new tensor is positive (GV_POS) */
    double mag;
} gen_in;

/* Attributes under construction: storage the par_attr entries point into. */
typedef struct gen_attrs {
    int32_t n;
    par_attr a[PAR_MAX_ATTRS];
    int64_t ints[PAR_MAX_ATTRS][PAR_MAX_RANK * 2];
    double floats[PAR_MAX_ATTRS][8];
    char strs[PAR_MAX_ATTRS][32];
} gen_attrs;

int gen_ctx_init(gen_ctx *g, gen_src *src, par_case *c, const par_fuzz_opts *o);
void gen_ctx_free(gen_ctx *g);
const par_value *gen_val(const gen_ctx *g, int32_t v);

gen_in gen_in_val(const gen_ctx *g, int32_t v);
gen_in gen_in_absent(void);
/* A new f32 tensor: activations uniform in [-1, 1) or normal; pos: uniform in [0.5, 2). */
gen_in gen_in_new(gen_ctx *g, int is_const, int32_t rank, const int64_t *dims, int pos);
/* A new weight tensor: normal, std scaled by 1/sqrt(fan), fan >= 1. */
gen_in gen_in_weight(int32_t rank, const int64_t *dims, int64_t fan);
gen_in gen_in_uniform(int is_const, par_dtype dt, int32_t rank, const int64_t *dims, double a, double b);

/* Draw a shape of `rank` dims with at most max_elems elements (each dim <= cap). */
void gen_shape(gen_ctx *g, int32_t rank, int64_t cap, int64_t max_elems, int64_t *dims);
/* An f32 activation for a node input: an existing one of rank in [lo, hi] (and GV_POS when pos), preferring
 * recent and unconsumed values, or else a new graph input. */
gen_in gen_act(gen_ctx *g, int32_t lo, int32_t hi, int pos);
/* An existing activation of exactly these dims (or broadcastable to them when bcast), or -1. */
int32_t gen_find(gen_ctx *g, int32_t rank, const int64_t *dims, int pos);

/* A shape that broadcasts to (rank, dims): some dims set to 1, some leading dims dropped (at least rank 1). */
int32_t gen_bcast(gen_ctx *g, int32_t rank, const int64_t *dims, int64_t *out);
/* 1 when op's schema has an attribute of this name. */
int gen_has_attr(const par_op_info *op, const char *name);

/* Attributes: every schema attribute drawn generically (choices, axes of input rank `rank`, booleans, scaled float
 * defaults); required ones without a rule are left out (the constraint function sets them). */
void gen_attrs_schema(gen_ctx *g, const par_op_info *op, int32_t rank, gen_attrs *at);
par_attr *gen_attr_set_int(gen_attrs *at, const char *name, int64_t v);
par_attr *gen_attr_set_float(gen_attrs *at, const char *name, double v);
par_attr *gen_attr_set_ints(gen_attrs *at, const char *name, int32_t n, const int64_t *v);
par_attr *gen_attr_set_floats(gen_attrs *at, const char *name, int32_t n, const double *v);
par_attr *gen_attr_set_str(gen_attrs *at, const char *name, const char *s);
void gen_attr_drop(gen_attrs *at, const char *name);

/* Emit a node: infer its output shape first (the op's own shape function on the inputs, attribute defaults filled
 * in), refuse it when invalid or larger than max_elems, else create the new input tensors and add the node.
 * out_dt 0: the op's default. Returns the output value, or -1 (nothing added). pos / mag describe the output. */
int32_t gen_emit(gen_ctx *g, const par_op_info *op, int32_t n, gen_in *ins, const gen_attrs *at, par_dtype out_dt,
                 float out_scale, int32_t out_zp, int pos, double mag);
/* The dims of an emit's would-be input i (existing or new). */
const int64_t *gen_in_dims(const gen_ctx *g, const gen_in *in, int32_t *rank);

/* ---- constraint functions (gen_ops*.c) ---- */
/* Add one node of op `op` (or a short fixed chain, e.g. quantize -> dequantize) to the graph, at most `room` nodes.
 * Returns the new output value or -1 when this attempt found no valid configuration (nothing added). */
typedef int32_t (*gen_op_fn)(gen_ctx *g, const par_op_info *op, int32_t room);

/* The constraint function of op, or gen_op_generic when its family has none; NULL for an op never drawn. */
gen_op_fn gen_op_fn_of(const par_op_info *op);
int32_t gen_op_generic(gen_ctx *g, const par_op_info *op, int32_t room);

/* Family parts (gen_ops_nn.c, gen_ops_data.c), looked up by gen_op_fn_of. */
int32_t gen_op_conv2d(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_conv_transpose2d(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_linear(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_linear_8da4w(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_qd8(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_linear_16a4w(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_matmul(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_binary(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_unary(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_prelu(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_pool(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_adaptive_pool(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_reduce(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_upsample(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_norm(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_rope(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_sdpa(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_slice_scatter(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_quant(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_concat(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_reshape(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_flatten(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_permute(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_pad(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_slice(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_where(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_logical(gen_ctx *g, const par_op_info *op, int32_t room); /* bool masks in */
int32_t gen_op_masked_fill(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_gather(gen_ctx *g, const par_op_info *op, int32_t room);
int32_t gen_op_embedding(gen_ctx *g, const par_op_info *op, int32_t room);

#endif
