/*
 * nn_ops_seq.c - the nnapi converter's lowering of the ops of sequence models, which NNAPI (levels 27-30) has no
 * operation for, as graphs of its operations: embedding (GATHER), rms_norm and layer_norm (MEAN, RSQRT and the
 * arithmetic), silu (MAXIMUM, LOGISTIC, MUL), rope (SLICE or STRIDED_SLICE, MUL, SUB, ADD, CONCATENATION, and GATHER
 * to interleave), sdpa and matmul by a computed operand (per head or batch item: SLICE, RESHAPE, TRANSPOSE and
 * FULLY_CONNECTED with a computed weight operand, SOFTMAX on rank 2, CONCATENATION), slice_scatter
 * (SLICE and CONCATENATION), and masked_fill of constants (folded on the host). Every value is held in the logical order; each intermediate is an NNAPI operand of its
 * own, so a relaxed (f16) device rounds every step, as the op's f16 budget assumes of a backend that decomposes.
 * Float only (f32), every lowering at level 29 or above (SLICE, GATHER, RSQRT, MAXIMUM).
 * Must not call the NNAPI library (docs/backends/nnapi-converter.md, "Sequence models").
 */
#include <math.h>
#include <string.h>

#include "nn_ops.h"

#define OOM(msg) par_msgf(msg, PAR_ERROR, "out of memory")

/* The most heads or batch items sdpa and a batched matmul stack: one CONCATENATION takes at most 64 inputs, the axis
 * among them (the simulator's limit, as Android's operation validation). */
#define SEQ_MAX_ITEMS 63

typedef struct seq {
    nn_model *m;
    int32_t node;
    par_msg *msg;
    par_status st;
} seq;

static const par_value *in_val(const seq *s, int32_t k)
{
    return par_node_input(s->m->g, &s->m->g->nodes[s->node], k);
}

static const par_value *out_val(const seq *s)
{
    return &s->m->g->values[s->m->g->nodes[s->node].outputs[0]];
}

/* A new f32 operand of dims (rank 0: a scalar tensor of one element). */
static int32_t tmp(seq *s, uint32_t rank, const uint32_t *dims)
{
    uint32_t one = 1;
    int32_t o = par_nn_operand(s->m, ANEURALNETWORKS_TENSOR_FLOAT32, rank ? rank : 1, rank ? dims : &one, 0, 0);
    if (o < 0 && s->st == PAR_OK) s->st = OOM(s->msg);
    return o;
}

static int32_t f32_tensor(seq *s, uint32_t rank, const uint32_t *dims, const float *v, size_t n)
{
    uint32_t one = 1;
    int32_t o = par_nn_const(s->m, ANEURALNETWORKS_TENSOR_FLOAT32, rank ? rank : 1, rank ? dims : &one, 0, 0, v,
                             n * sizeof *v);
    if (o < 0 && s->st == PAR_OK) s->st = OOM(s->msg);
    return o;
}

static int32_t f32_scalar_tensor(seq *s, float v)
{
    return f32_tensor(s, 0, NULL, &v, 1);
}

static int32_t i32s(seq *s, uint32_t n, const int32_t *v)
{
    int32_t o = par_nn_i32_vec(s->m, n, v);
    if (o < 0 && s->st == PAR_OK) s->st = OOM(s->msg);
    return o;
}

static int32_t i32(seq *s, int32_t v)
{
    int32_t o = par_nn_i32(s->m, v);
    if (o < 0 && s->st == PAR_OK) s->st = OOM(s->msg);
    return o;
}

/* Where an operation's result goes, besides an operand made for it: the node's own output value (in the logical
 * order), or (reshape only) a new temporary of the target shape. Both differ from -1, a failed operand. */
enum { SEQ_NODE_OUT = -3, SEQ_TEMP = -2 };

/* One operation of in[] into operand `out` (an operand, or SEQ_NODE_OUT). Returns the output operand, or -1 with
 * s->st set. Once s->st is not PAR_OK, nothing more is emitted. */
static int32_t op(seq *s, int32_t type, uint32_t n_in, const int32_t *in, int32_t out)
{
    if (s->st != PAR_OK) return -1;
    uint32_t ii[SEQ_MAX_ITEMS + 2];
    for (uint32_t i = 0; i < n_in; i++) {
        if (in[i] < 0) {
            if (s->st == PAR_OK) s->st = OOM(s->msg);
            return -1;
        }
        ii[i] = (uint32_t)in[i];
    }
    if (out == SEQ_NODE_OUT) {
        out = par_nn_out(s->m, s->m->g->nodes[s->node].outputs[0], 0, &s->st, s->msg);
        if (out < 0) return -1;
    } else if (out < 0) {
        s->st = OOM(s->msg);
        return -1;
    }
    uint32_t oo[1] = {(uint32_t)out};
    s->st = par_nn_op(s->m, type, s->node, n_in, ii, 1, oo, s->msg);
    return s->st == PAR_OK ? out : -1;
}

static int32_t binary(seq *s, int32_t type, int32_t a, int32_t b, int32_t out)
{
    int32_t in[3] = {a, b, i32(s, ANEURALNETWORKS_FUSED_NONE)};
    return op(s, type, 3, in, out);
}

/* An input of the node in the logical order. */
static int32_t input(seq *s, int32_t k)
{
    if (s->st != PAR_OK) return -1;
    return nn_in(s->m, s->node, k, NN_LOGICAL, &s->st, s->msg);
}

static int32_t reshape(seq *s, int32_t x, uint32_t rank, const uint32_t *dims, int32_t out)
{
    int32_t shape[PAR_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) shape[i] = (int32_t)dims[i];
    int32_t in[2] = {x, i32s(s, rank, shape)};
    return op(s, ANEURALNETWORKS_RESHAPE, 2, in, out == SEQ_TEMP ? tmp(s, rank, dims) : out);
}

/* SLICE of x (rank r, logical) from begin with size; a new temporary. */
static int32_t slice(seq *s, int32_t x, uint32_t r, const int32_t *begin, const int32_t *size)
{
    uint32_t d[PAR_MAX_RANK];
    for (uint32_t i = 0; i < r; i++) d[i] = (uint32_t)size[i];
    int32_t in[3] = {x, i32s(s, r, begin), i32s(s, r, size)};
    return op(s, ANEURALNETWORKS_SLICE, 3, in, tmp(s, r, d));
}

static void dims_of(const par_value *v, uint32_t *d)
{
    for (int32_t i = 0; i < v->rank; i++) d[i] = (uint32_t)v->dims[i];
}

/* The checks every lowering here shares: f32 values, rank 1..4, level 29. */
static par_status check_f32(seq *s, int32_t n_vals)
{
    const par_node *n = &s->m->g->nodes[s->node];
    if (s->m->set.level < 29)
        return par_msgf(s->msg, PAR_UNSUPPORTED, "%s as NNAPI operations needs level 29 (SLICE, GATHER, RSQRT, "
                        "MAXIMUM)", n->op);
    for (int32_t k = 0; k < n_vals; k++) {
        const par_value *v = k < n->n_inputs ? par_node_input(s->m->g, n, k) : out_val(s);
        if (!v) continue;
        if (v->dtype != PAR_DTYPE_F32)
            return par_msgf(s->msg, PAR_UNSUPPORTED, "%s of %s: float only", n->op, par_dtype_name(v->dtype));
        if (v->rank < 1 || v->rank > 4)
            return par_msgf(s->msg, PAR_UNSUPPORTED, "%s: '%s' has rank %d; NNAPI operations take rank 1 to 4", n->op,
                            v->name, v->rank);
    }
    const par_value *y = out_val(s);
    if (y->rank < 1 || y->rank > 4)
        return par_msgf(s->msg, PAR_UNSUPPORTED, "%s: the output has rank %d", n->op, y->rank);
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * embedding: GATHER of the table's rows
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_embedding(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_value *ix = in_val(&s, 0), *w = in_val(&s, 1), *y = out_val(&s);
    if (m->set.level < 29) return par_msgf(msg, PAR_UNSUPPORTED, "embedding as GATHER needs level 29");
    if (ix->dtype != PAR_DTYPE_I32 || w->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "embedding of %s rows by %s indices: f32 rows, i32 indices only",
                        par_dtype_name(w->dtype), par_dtype_name(ix->dtype));
    if (ix->rank < 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "embedding of a scalar index: NNAPI's GATHER takes indices of rank >= 1");
    if (y->rank > 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "embedding: output rank %d (NNAPI's GATHER: at most 4)", y->rank);
    int32_t in[3] = {input(&s, 1), i32(&s, 0), input(&s, 0)};
    op(&s, ANEURALNETWORKS_GATHER, 3, in, SEQ_NODE_OUT);
    return s.st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * rms_norm, layer_norm: the statistics by MEAN over the trailing axes (kept), 1 / sqrt by RSQRT
 * ------------------------------------------------------------------------------------------------------------- */
/* The trailing `k` axes of rank r, and the dims of the kept statistics. */
static int32_t norm_axes(seq *s, const par_value *x, int32_t k, uint32_t *sd)
{
    int32_t axes[PAR_MAX_RANK];
    dims_of(x, sd);
    for (int32_t i = 0; i < k; i++) {
        axes[i] = x->rank - k + i;
        sd[x->rank - k + i] = 1;
    }
    return i32s(s, (uint32_t)k, axes);
}

/* y = x * RSQRT(stat + eps) [* w] [+ b] into the node's output; x, stat as operands. */
static void norm_finish(seq *s, const par_value *x, int32_t xo, int32_t stat, const uint32_t *sd, double eps,
                        int32_t w_in, int32_t b_in)
{
    const par_node *n = &s->m->g->nodes[s->node];
    uint32_t xd[PAR_MAX_RANK];
    dims_of(x, xd);
    int32_t ve = binary(s, ANEURALNETWORKS_ADD, stat, f32_scalar_tensor(s, (float)eps), tmp(s, (uint32_t)x->rank, sd));
    int32_t in1[1] = {ve};
    int32_t r = op(s, ANEURALNETWORKS_RSQRT, 1, in1, tmp(s, (uint32_t)x->rank, sd));
    int has_w = w_in < n->n_inputs && par_node_input(s->m->g, n, w_in);
    int has_b = b_in < n->n_inputs && par_node_input(s->m->g, n, b_in);
    const uint32_t r0 = (uint32_t)x->rank;
    int32_t t = binary(s, ANEURALNETWORKS_MUL, xo, r, has_w || has_b ? tmp(s, r0, xd) : SEQ_NODE_OUT);
    if (has_w) t = binary(s, ANEURALNETWORKS_MUL, t, input(s, w_in), has_b ? tmp(s, r0, xd) : SEQ_NODE_OUT);
    if (has_b) binary(s, ANEURALNETWORKS_ADD, t, input(s, b_in), SEQ_NODE_OUT);
}

/* Relaxed f16 (profile gpu-fp16) computes MUL in f16's range: a square (x - mean)^2 or x^2 above 65504, that is
 * |x - mean| > 256, is Inf, the variance Inf and the row 0, where a normalization kernel keeps f32 statistics.
 * NNAPI has no normalization operation that would, so the converter refuses rather than lose such rows. */
static par_status norm_shape(seq *s, const par_value *x, int32_t *k)
{
    const par_node *n = &s->m->g->nodes[s->node];
    if (s->m->set.relax_f16)
        return par_msgf(s->msg, PAR_UNSUPPORTED, "%s under relaxed f16: NNAPI has no normalization operation, and the "
                        "squares of its decomposition overflow f16 (65504) once |x - mean| > 256", n->op);
    *k = par_attr_count(n, "normalized_shape");
    if (*k < 1 || *k > x->rank) return par_msgf(s->msg, PAR_UNSUPPORTED, "%s: normalized_shape of %d axes", n->op, *k);
    return PAR_OK;
}

/* The start both norms share: the checks, x as an operand, its dims, the statistics' dims and axes. */
static int32_t norm_begin(seq *s, const par_value *x, uint32_t *xd, uint32_t *sd, int32_t *axes)
{
    int32_t k = 0;
    s->st = check_f32(s, s->m->g->nodes[s->node].n_inputs);
    if (s->st == PAR_OK) s->st = norm_shape(s, x, &k);
    if (s->st != PAR_OK) return -1;
    dims_of(x, xd);
    *axes = norm_axes(s, x, k, sd);
    return input(s, 0);
}

par_status par_nn_lower_rms_norm(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_value *x = in_val(&s, 0);
    uint32_t xd[PAR_MAX_RANK], sd[PAR_MAX_RANK], r = (uint32_t)x->rank;
    int32_t axes, xo = norm_begin(&s, x, xd, sd, &axes);
    if (s.st != PAR_OK) return s.st;
    int32_t sq = binary(&s, ANEURALNETWORKS_MUL, xo, xo, tmp(&s, r, xd));
    int32_t in[3] = {sq, axes, i32(&s, 1)};
    int32_t ms = op(&s, ANEURALNETWORKS_MEAN, 3, in, tmp(&s, r, sd));
    norm_finish(&s, x, xo, ms, sd, par_attr_float(&m->g->nodes[node], "eps", 1e-6), 1, 99);
    return s.st;
}

par_status par_nn_lower_layer_norm(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_value *x = in_val(&s, 0);
    uint32_t xd[PAR_MAX_RANK], sd[PAR_MAX_RANK], r = (uint32_t)x->rank;
    int32_t axes, xo = norm_begin(&s, x, xd, sd, &axes);
    if (s.st != PAR_OK) return s.st;
    int32_t in[3] = {xo, axes, i32(&s, 1)};
    int32_t mu = op(&s, ANEURALNETWORKS_MEAN, 3, in, tmp(&s, r, sd));
    int32_t d = binary(&s, ANEURALNETWORKS_SUB, xo, mu, tmp(&s, r, xd));
    int32_t d2 = binary(&s, ANEURALNETWORKS_MUL, d, d, tmp(&s, r, xd));
    int32_t in2[3] = {d2, axes, i32(&s, 1)};
    int32_t var = op(&s, ANEURALNETWORKS_MEAN, 3, in2, tmp(&s, r, sd));
    norm_finish(&s, x, d, var, sd, par_attr_float(&m->g->nodes[node], "eps", 1e-5), 1, 2);
    return s.st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * silu: c * LOGISTIC(c), c = MAXIMUM(x, -200)
 * ------------------------------------------------------------------------------------------------------------- */
/* x * sigmoid(x) as MUL(x, LOGISTIC(x)) is -inf * 0 = NaN at x = -inf, where silu's limit is -0 (docs/ops.md). Below
 * -200 sigmoid is 0 in f32 and in f16 (exp(200) overflows), so x * sigmoid(x) is already -0 there: MAXIMUM(x, -200)
 * changes no finite result and turns -inf into -200 * 0 = -0. std::max(x, -200) keeps a NaN x (x first). */
par_status par_nn_lower_silu(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_value *x = in_val(&s, 0);
    par_status st = check_f32(&s, 1);
    if (st != PAR_OK) return st;
    uint32_t xd[PAR_MAX_RANK];
    dims_of(x, xd);
    int32_t in[2] = {input(&s, 0), f32_scalar_tensor(&s, -200.0f)};
    int32_t c = op(&s, ANEURALNETWORKS_MAXIMUM, 2, in, tmp(&s, (uint32_t)x->rank, xd));
    int32_t in1[1] = {c};
    int32_t sg = op(&s, ANEURALNETWORKS_LOGISTIC, 1, in1, tmp(&s, (uint32_t)x->rank, xd));
    binary(&s, ANEURALNETWORKS_MUL, c, sg, SEQ_NODE_OUT);
    return s.st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * rope: y_a = a c - b s, y_b = b c + a s on the pairs (a, b)
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_rope(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(&s, 0);
    par_status st = check_f32(&s, 3);
    if (st != PAR_OK) return st;
    const uint32_t r = (uint32_t)x->rank;
    if (r < 2) return par_msgf(msg, PAR_UNSUPPORTED, "rope of a rank-%u tensor", r);
    const int32_t D = (int32_t)x->dims[r - 1], H = D / 2;
    const int inter = (int)par_attr_int(n, "interleaved", 0);
    uint32_t hd[PAR_MAX_RANK], xd[PAR_MAX_RANK];
    dims_of(x, xd);
    dims_of(x, hd);
    hd[r - 1] = (uint32_t)H;
    int32_t xo = input(&s, 0), a, b;
    int32_t begin[PAR_MAX_RANK] = {0}, size[PAR_MAX_RANK];
    for (uint32_t i = 0; i < r; i++) size[i] = (int32_t)hd[i];
    if (!inter) {
        a = slice(&s, xo, r, begin, size);
        begin[r - 1] = H;
        b = slice(&s, xo, r, begin, size);
    } else {
        int32_t e[PAR_MAX_RANK], st2[PAR_MAX_RANK];
        for (uint32_t i = 0; i < r; i++) e[i] = (int32_t)xd[i], st2[i] = 1;
        st2[r - 1] = 2;
        int32_t ina[7] = {xo, i32s(&s, r, begin), i32s(&s, r, e), i32s(&s, r, st2), i32(&s, 0), i32(&s, 0), i32(&s, 0)};
        a = op(&s, ANEURALNETWORKS_STRIDED_SLICE, 7, ina, tmp(&s, r, hd));
        begin[r - 1] = 1;
        int32_t inb[7] = {xo, i32s(&s, r, begin), i32s(&s, r, e), i32s(&s, r, st2), i32(&s, 0), i32(&s, 0), i32(&s, 0)};
        b = op(&s, ANEURALNETWORKS_STRIDED_SLICE, 7, inb, tmp(&s, r, hd));
    }
    int32_t c = input(&s, 1), sn = input(&s, 2);
    int32_t ac = binary(&s, ANEURALNETWORKS_MUL, a, c, tmp(&s, r, hd));
    int32_t bs = binary(&s, ANEURALNETWORKS_MUL, b, sn, tmp(&s, r, hd));
    int32_t ya = binary(&s, ANEURALNETWORKS_SUB, ac, bs, tmp(&s, r, hd));
    int32_t bc = binary(&s, ANEURALNETWORKS_MUL, b, c, tmp(&s, r, hd));
    int32_t as = binary(&s, ANEURALNETWORKS_MUL, a, sn, tmp(&s, r, hd));
    int32_t yb = binary(&s, ANEURALNETWORKS_ADD, bc, as, tmp(&s, r, hd));
    int32_t in[3] = {ya, yb, i32(&s, (int32_t)r - 1)};
    if (!inter) {
        op(&s, ANEURALNETWORKS_CONCATENATION, 3, in, SEQ_NODE_OUT);
        return s.st;
    }
    /* [ya_0 .. ya_{H-1}, yb_0 .. yb_{H-1}] -> the pairs in place: GATHER on the last axis */
    int32_t cat = op(&s, ANEURALNETWORKS_CONCATENATION, 3, in, tmp(&s, r, xd));
    int32_t *perm = par_nn_alloc(m, (size_t)D * sizeof *perm);
    if (!perm) return OOM(msg);
    for (int32_t i = 0; i < H; i++) perm[2 * i] = i, perm[2 * i + 1] = H + i;
    int32_t ing[3] = {cat, i32(&s, (int32_t)r - 1), i32s(&s, (uint32_t)D, perm)};
    op(&s, ANEURALNETWORKS_GATHER, 3, ing, SEQ_NODE_OUT);
    return s.st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * matmul by a computed operand, sdpa: one FULLY_CONNECTED per batch item or head
 * ------------------------------------------------------------------------------------------------------------- */
/* The [rows, cols] matrix at the leading index `idx` of x (rank r, logical, dims xd): SLICE and RESHAPE. */
static int32_t matrix_at(seq *s, int32_t x, uint32_t r, const uint32_t *xd, const uint32_t *idx)
{
    int32_t begin[PAR_MAX_RANK] = {0}, size[PAR_MAX_RANK];
    for (uint32_t i = 0; i < r; i++) size[i] = (int32_t)xd[i];
    for (uint32_t i = 0; i + 2 < r; i++) begin[i] = (int32_t)idx[i], size[i] = 1;
    int32_t sl = r > 2 ? slice(s, x, r, begin, size) : x;
    uint32_t md[2] = {xd[r - 2], xd[r - 1]};
    return r > 2 ? reshape(s, sl, 2, md, SEQ_TEMP) : sl;
}

/* TRANSPOSE of a [rows, cols] operand. */
static int32_t transpose2(seq *s, int32_t x, uint32_t rows, uint32_t cols)
{
    static const int32_t P[2] = {1, 0};
    uint32_t d[2] = {cols, rows};
    int32_t in[2] = {x, i32s(s, 2, P)};
    return op(s, ANEURALNETWORKS_TRANSPOSE, 2, in, tmp(s, 2, d));
}

/* a [M, K] times the weight operand wt [N, K] (FULLY_CONNECTED: a wt^T + 0). */
static int32_t fc(seq *s, int32_t a, int32_t wt, uint32_t M, uint32_t N)
{
    float *z = par_nn_alloc(s->m, (size_t)N * sizeof *z);
    if (!z) {
        if (s->st == PAR_OK) s->st = OOM(s->msg);
        return -1;
    }
    memset(z, 0, (size_t)N * sizeof *z);
    uint32_t d[2] = {M, N};
    int32_t in[4] = {a, wt, f32_tensor(s, 1, &N, z, N), i32(s, ANEURALNETWORKS_FUSED_NONE)};
    return op(s, ANEURALNETWORKS_FULLY_CONNECTED, 4, in, tmp(s, 2, d));
}

/* The results [1, M, N] of every item stacked on axis 0 and reshaped to the node's output. */
static void stack_out(seq *s, int32_t *items, uint32_t n_items, uint32_t M, uint32_t N)
{
    const par_value *y = out_val(s);
    uint32_t yd[PAR_MAX_RANK];
    dims_of(y, yd);
    if (n_items == 1) {
        reshape(s, items[0], (uint32_t)y->rank, yd, SEQ_NODE_OUT);
        return;
    }
    uint32_t d3[3] = {1, M, N};
    for (uint32_t i = 0; i < n_items; i++) items[i] = reshape(s, items[i], 3, d3, SEQ_TEMP);
    items[n_items] = i32(s, 0);
    d3[0] = n_items;
    int32_t cat = op(s, ANEURALNETWORKS_CONCATENATION, n_items + 1, items, tmp(s, 3, d3));
    reshape(s, cat, (uint32_t)y->rank, yd, SEQ_NODE_OUT);
}

/* The leading (batch) index of item `i` of the output's batch dims, and of an operand of rank r broadcast to it. */
static void batch_index(const par_value *y, uint32_t i, const par_value *v, uint32_t *idx)
{
    uint32_t yo[PAR_MAX_RANK];
    int32_t nb = y->rank - 2;
    for (int32_t d = nb - 1; d >= 0; d--) {
        yo[d] = i % (uint32_t)y->dims[d];
        i /= (uint32_t)y->dims[d];
    }
    int32_t vb = v->rank - 2;
    for (int32_t d = 0; d < vb; d++) {
        uint32_t c = yo[nb - vb + d];
        idx[d] = v->dims[d] == 1 ? 0 : c;
    }
}

par_status par_nn_lower_matmul_computed(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_value *a = in_val(&s, 0), *b = in_val(&s, 1), *y = out_val(&s);
    par_status st = check_f32(&s, 2);
    if (st != PAR_OK) return st;
    if (a->rank < 2 || b->rank < 2) return par_msgf(msg, PAR_UNSUPPORTED, "matmul of a rank-1 operand");
    uint32_t items = 1;
    for (int32_t d = 0; d + 2 < y->rank; d++) items *= (uint32_t)y->dims[d];
    if (items > SEQ_MAX_ITEMS)
        return par_msgf(msg, PAR_UNSUPPORTED, "matmul of %u batch items (the converter stacks at most %d)", items,
                        SEQ_MAX_ITEMS);
    uint32_t ad[PAR_MAX_RANK], bd[PAR_MAX_RANK];
    dims_of(a, ad);
    dims_of(b, bd);
    const uint32_t M = ad[a->rank - 2], K = ad[a->rank - 1], N = bd[b->rank - 1];
    int32_t ao = input(&s, 0), bo = input(&s, 1), res[SEQ_MAX_ITEMS + 1];
    for (uint32_t i = 0; i < items && s.st == PAR_OK; i++) {
        uint32_t ia[PAR_MAX_RANK] = {0}, ib[PAR_MAX_RANK] = {0};
        batch_index(y, i, a, ia);
        batch_index(y, i, b, ib);
        int32_t am = matrix_at(&s, ao, (uint32_t)a->rank, ad, ia);
        int32_t bt = transpose2(&s, matrix_at(&s, bo, (uint32_t)b->rank, bd, ib), K, N);
        res[i] = fc(&s, am, bt, M, N);
    }
    if (s.st == PAR_OK) stack_out(&s, res, items, M, N);
    return s.st;
}

/* sdpa: per (batch, query head), t = FC(q_h, k_kv) * scale (+ mask) (+ causal -inf), p = SOFTMAX(t), o = FC(p, v_kv^T);
 * the key and value matrices of a kv head are made once. */
par_status par_nn_lower_sdpa(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_node *n = &m->g->nodes[node];
    const par_value *q = in_val(&s, 0), *k = in_val(&s, 1), *v = in_val(&s, 2);
    const par_value *mk = n->n_inputs > 3 ? in_val(&s, 3) : NULL;
    par_status st = check_f32(&s, n->n_inputs);
    if (st != PAR_OK) return st;
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "sdpa of rank %d/%d/%d tensors (the converter takes [B, H, S, D])",
                        q->rank, k->rank, v->rank);
    const uint32_t B = (uint32_t)q->dims[0], Hq = (uint32_t)q->dims[1], Sq = (uint32_t)q->dims[2];
    const uint32_t D = (uint32_t)q->dims[3], Hkv = (uint32_t)k->dims[1], Skv = (uint32_t)k->dims[2];
    const uint32_t Dv = (uint32_t)v->dims[3];
    if (B * Hq > SEQ_MAX_ITEMS || B * Hkv > SEQ_MAX_ITEMS)
        return par_msgf(msg, PAR_UNSUPPORTED, "sdpa of %u x %u heads (the converter stacks at most %d)", B, Hq,
                        SEQ_MAX_ITEMS);
    double scale = par_attr_float(n, "scale", 0);
    if (scale == 0) scale = 1.0 / sqrt((double)D);
    const int causal = (int)par_attr_int(n, "is_causal", 0);
    uint32_t qd[4], kd[4], vd[4], md[4] = {1, 1, 1, 1};
    dims_of(q, qd), dims_of(k, kd), dims_of(v, vd);
    int32_t mo = -1;
    if (mk) {
        if (mk->rank < 1 || mk->rank > 4) return par_msgf(msg, PAR_UNSUPPORTED, "sdpa mask of rank %d", mk->rank);
        for (int32_t i = 0; i < mk->rank; i++) md[4 - mk->rank + i] = (uint32_t)mk->dims[i];
        mo = input(&s, 3);
        if (mk->rank != 4) {
            int32_t r4 = reshape(&s, mo, 4, md, SEQ_TEMP);
            mo = r4;
        }
    }
    int32_t cm = -1;
    if (causal) {
        float *c = par_nn_alloc(m, (size_t)Sq * Skv * sizeof *c);
        if (!c) return OOM(msg);
        for (uint32_t i = 0; i < Sq; i++)
            for (uint32_t j = 0; j < Skv; j++) c[i * Skv + j] = j > i ? -INFINITY : 0.0f;
        uint32_t cd[2] = {Sq, Skv};
        cm = f32_tensor(&s, 2, cd, c, (size_t)Sq * Skv);
    }
    int32_t qo = input(&s, 0), ko = input(&s, 1), vo = input(&s, 2);
    int32_t kmat[SEQ_MAX_ITEMS], vt[SEQ_MAX_ITEMS], res[SEQ_MAX_ITEMS + 1];
    for (uint32_t i = 0; i < B * Hkv; i++) kmat[i] = vt[i] = -1;
    const int32_t sc = f32_scalar_tensor(&s, (float)scale), beta = par_nn_f32(m, 1.0f);
    for (uint32_t b = 0; b < B && s.st == PAR_OK; b++)
        for (uint32_t h = 0; h < Hq && s.st == PAR_OK; h++) {
            uint32_t kh = h / (Hq / Hkv), kv = b * Hkv + kh;
            uint32_t idx[2] = {b, kh}, qi[2] = {b, h};
            if (kmat[kv] < 0) {
                kmat[kv] = matrix_at(&s, ko, 4, kd, idx);
                vt[kv] = transpose2(&s, matrix_at(&s, vo, 4, vd, idx), Skv, Dv);
            }
            uint32_t td[2] = {Sq, Skv};
            int32_t t = fc(&s, matrix_at(&s, qo, 4, qd, qi), kmat[kv], Sq, Skv);
            t = binary(&s, ANEURALNETWORKS_MUL, t, sc, tmp(&s, 2, td));
            if (mo >= 0) {
                uint32_t mi[2] = {md[0] == 1 ? 0 : b, md[1] == 1 ? 0 : h};
                t = binary(&s, ANEURALNETWORKS_ADD, t, matrix_at(&s, mo, 4, md, mi), tmp(&s, 2, td));
            }
            if (cm >= 0) t = binary(&s, ANEURALNETWORKS_ADD, t, cm, tmp(&s, 2, td));
            int32_t in[2] = {t, beta};
            int32_t p = op(&s, ANEURALNETWORKS_SOFTMAX, 2, in, tmp(&s, 2, td));
            res[b * Hq + h] = fc(&s, p, vt[kv], Sq, Dv);
        }
    if (s.st == PAR_OK) stack_out(&s, res, B * Hq, Sq, Dv);
    return s.st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * slice_scatter: the rows before, src, the rows after, concatenated on dim (data movement, exact)
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_lower_slice_scatter(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(&s, 0), *src = in_val(&s, 1);
    par_status st = check_f32(&s, 2);
    if (st != PAR_OK) return st;
    const uint32_t r = (uint32_t)x->rank;
    int32_t dim = (int32_t)par_attr_int(n, "dim", 0);
    if (dim < 0) dim += (int32_t)r;
    const int32_t start = (int32_t)par_attr_int(n, "start", 0), len = (int32_t)src->dims[dim];
    const int32_t total = (int32_t)x->dims[dim];
    uint32_t xd[PAR_MAX_RANK];
    dims_of(x, xd);
    int32_t xo = input(&s, 0), parts[4], np = 0;
    int32_t begin[PAR_MAX_RANK] = {0}, size[PAR_MAX_RANK];
    for (uint32_t i = 0; i < r; i++) size[i] = (int32_t)xd[i];
    if (start > 0) {
        size[dim] = start;
        parts[np++] = slice(&s, xo, r, begin, size);
    }
    parts[np++] = input(&s, 1);
    if (start + len < total) {
        begin[dim] = start + len;
        size[dim] = total - start - len;
        parts[np++] = slice(&s, xo, r, begin, size);
    }
    if (np == 1) {
        reshape(&s, parts[0], r, xd, SEQ_NODE_OUT);
        return s.st;
    }
    parts[np] = i32(&s, dim);
    op(&s, ANEURALNETWORKS_CONCATENATION, (uint32_t)np + 1, parts, SEQ_NODE_OUT);
    return s.st;
}

/* ---------------------------------------------------------------------------------------------------------------
 * masked_fill of constants: folded on the host (NNAPI's SELECT is not simulated)
 * ------------------------------------------------------------------------------------------------------------- */
/* An attention mask built from constants (a decode step's `mask ? -inf : 0`) is a constant of the model: the
 * converter computes it, as converters fold constant subgraphs, and holds the node's value as a constant operand.
 * A masked_fill of a computed tensor or mask, or one whose value is a graph output, is refused. */
par_status par_nn_lower_masked_fill(nn_model *m, int32_t node, int32_t code, par_msg *msg)
{
    seq s = {m, node, msg, PAR_OK};
    const par_node *n = &m->g->nodes[node];
    const par_value *x = in_val(&s, 0), *mk = in_val(&s, 1), *y = out_val(&s);
    if (x->kind != PAR_VALUE_CONST || mk->kind != PAR_VALUE_CONST)
        return par_msgf(msg, PAR_UNSUPPORTED, "masked_fill of a computed %s needs SELECT (level 29), which the "
                        "converter does not use: only a masked_fill of constants is folded",
                        x->kind != PAR_VALUE_CONST ? "tensor" : "mask");
    if (x->dtype != PAR_DTYPE_F32 || mk->dtype != PAR_DTYPE_BOOL || y->rank < 1 || y->rank > 4)
        return par_msgf(msg, PAR_UNSUPPORTED, "masked_fill of %s by %s, rank %d: f32 by bool, rank 1 to 4",
                        par_dtype_name(x->dtype), par_dtype_name(mk->dtype), y->rank);
    for (int32_t i = 0; i < m->g->n_outputs; i++)
        if (m->g->outputs[i] == n->outputs[0])
            return par_msgf(msg, PAR_UNSUPPORTED, "masked_fill of constants as a graph output (no operation computes it)");
    const float value = (float)par_attr_float(n, "value", 0);
    float *d = par_nn_alloc(m, (size_t)y->numel * sizeof *d);
    if (!d) return OOM(msg);
    const float *xv = x->data;
    const uint8_t *mv = mk->data;
    for (int64_t i = 0; i < y->numel; i++) {
        /* the mask's element for output element i: right-aligned broadcasting */
        int64_t rem = i, mi = 0, mstride = 1;
        for (int32_t d2 = y->rank - 1, dm = mk->rank - 1; d2 >= 0; d2--, dm--) {
            int64_t c = rem % y->dims[d2];
            rem /= y->dims[d2];
            if (dm >= 0) {
                if (mk->dims[dm] != 1) mi += c * mstride;
                mstride *= mk->dims[dm];
            }
        }
        d[i] = mv[mi] ? value : xv[i];
    }
    uint32_t yd[PAR_MAX_RANK];
    dims_of(y, yd);
    int32_t o = f32_tensor(&s, (uint32_t)y->rank, yd, d, (size_t)y->numel);
    if (o < 0) return s.st;
    m->val_opnd[n->outputs[0]] = o;
    m->val_nchw[n->outputs[0]] = o;
    return PAR_OK;
}
