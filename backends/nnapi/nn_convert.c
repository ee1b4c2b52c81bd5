/*
 * nn_convert.c - the nnapi converter's services: the model's memory, operands and their NNAPI types, the layout of
 * every value (4-D activations are held NHWC, NNAPI's order, and permuted on the host at the model's inputs and
 * outputs, as PyTorch's NNAPI runtime does; the logical order through a cached TRANSPOSE where an op needs it), the
 * feature-level gate of every operation, and the pure helpers (weight permutations, NCHW / NHWC, implicit padding).
 * The walk is nn_walk.c; per-op lowering is nn_ops.c and nn_ops_conv.c, which call these services.
 *
 * The result is a description in memory (nn_model.h); this file must not call the NNAPI library, must not call the
 * lowering or the walk, and must not decide an op's semantics (the lowering does).
 */
#include <stdlib.h>
#include <string.h>

#include "nn_model.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Arena
 * ------------------------------------------------------------------------------------------------------------- */
struct nn_block {
    nn_block *next;
    max_align_t align[];
};

void *par_nn_alloc(nn_model *m, size_t n)
{
    nn_block *b = calloc(1, sizeof *b + (n ? n : 1));
    if (!b) return NULL;
    b->next = m->arena;
    m->arena = b;
    return b->align;
}

void par_nn_model_free(nn_model *m)
{
    if (!m) return;
    for (nn_block *b = m->arena, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(m->opnd);
    free(m->oper);
    memset(m, 0, sizeof *m);
}

const char *par_nn_profile_name(nn_profile p)
{
    static const char *const names[NN_PROFILE_COUNT] = {"reference", "npu-int8", "gpu-fp16", "old-android"};
    return (unsigned)p < NN_PROFILE_COUNT ? names[p] : "?";
}

/* ---------------------------------------------------------------------------------------------------------------
 * Operation levels (the NDK's "Available since API level N")
 * ------------------------------------------------------------------------------------------------------------- */
static const struct {
    int32_t code;
    int level;
    const char *name;
} OPS[] = {
    {ANEURALNETWORKS_ADD, 27, "ADD"},
    {ANEURALNETWORKS_AVERAGE_POOL_2D, 27, "AVERAGE_POOL_2D"},
    {ANEURALNETWORKS_CONCATENATION, 27, "CONCATENATION"},
    {ANEURALNETWORKS_CONV_2D, 27, "CONV_2D"},
    {ANEURALNETWORKS_DEPTHWISE_CONV_2D, 27, "DEPTHWISE_CONV_2D"},
    {ANEURALNETWORKS_DEQUANTIZE, 27, "DEQUANTIZE"},
    {ANEURALNETWORKS_FULLY_CONNECTED, 27, "FULLY_CONNECTED"},
    {ANEURALNETWORKS_LOGISTIC, 27, "LOGISTIC"},
    {ANEURALNETWORKS_MAX_POOL_2D, 27, "MAX_POOL_2D"},
    {ANEURALNETWORKS_MUL, 27, "MUL"},
    {ANEURALNETWORKS_RELU, 27, "RELU"},
    {ANEURALNETWORKS_RELU1, 27, "RELU1"},
    {ANEURALNETWORKS_RELU6, 27, "RELU6"},
    {ANEURALNETWORKS_RESHAPE, 27, "RESHAPE"},
    {ANEURALNETWORKS_RESIZE_BILINEAR, 27, "RESIZE_BILINEAR"},
    {ANEURALNETWORKS_SOFTMAX, 27, "SOFTMAX"},
    {ANEURALNETWORKS_TANH, 27, "TANH"},
    {ANEURALNETWORKS_DIV, 28, "DIV"},
    {ANEURALNETWORKS_MEAN, 28, "MEAN"},
    {ANEURALNETWORKS_PAD, 28, "PAD"},
    {ANEURALNETWORKS_STRIDED_SLICE, 28, "STRIDED_SLICE"},
    {ANEURALNETWORKS_SUB, 28, "SUB"},
    {ANEURALNETWORKS_TRANSPOSE, 28, "TRANSPOSE"},
    {ANEURALNETWORKS_GATHER, 29, "GATHER"},
    {ANEURALNETWORKS_GROUPED_CONV_2D, 29, "GROUPED_CONV_2D"},
    {ANEURALNETWORKS_MAXIMUM, 29, "MAXIMUM"},
    {ANEURALNETWORKS_MINIMUM, 29, "MINIMUM"},
    {ANEURALNETWORKS_RSQRT, 29, "RSQRT"},
    {ANEURALNETWORKS_LOG_SOFTMAX, 29, "LOG_SOFTMAX"},
    {ANEURALNETWORKS_PAD_V2, 29, "PAD_V2"},
    {ANEURALNETWORKS_PRELU, 29, "PRELU"},
    {ANEURALNETWORKS_QUANTIZE, 29, "QUANTIZE"},
    {ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR, 29, "RESIZE_NEAREST_NEIGHBOR"},
    {ANEURALNETWORKS_SLICE, 29, "SLICE"},
    {ANEURALNETWORKS_TRANSPOSE_CONV_2D, 29, "TRANSPOSE_CONV_2D"},
    {ANEURALNETWORKS_HARD_SWISH, 30, "HARD_SWISH"},
};

int par_nn_op_level(int32_t type)
{
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (OPS[i].code == type) return OPS[i].level;
    return 0;
}

const char *par_nn_op_name(int32_t type)
{
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (OPS[i].code == type) return OPS[i].name;
    return "?";
}

/* ---------------------------------------------------------------------------------------------------------------
 * Pure helpers
 * ------------------------------------------------------------------------------------------------------------- */
int32_t par_nn_axis(int32_t rank, int nhwc, int32_t axis)
{
    static const int32_t TO_NHWC[4] = {0, 3, 1, 2}; /* N, C, H, W -> positions in N, H, W, C */
    return (nhwc && rank == 4) ? TO_NHWC[axis] : axis;
}

void par_nn_filter_ohwi(const void *src, void *dst, int64_t o, int64_t c, int64_t kh, int64_t kw, size_t es)
{
    const char *s = src;
    char *d = dst;
    for (int64_t a = 0; a < o; a++)
        for (int64_t y = 0; y < kh; y++)
            for (int64_t x = 0; x < kw; x++)
                for (int64_t ch = 0; ch < c; ch++)
                    memcpy(d + (size_t)(((a * kh + y) * kw + x) * c + ch) * es,
                           s + (size_t)(((a * c + ch) * kh + y) * kw + x) * es, es);
}

void par_nn_filter_dw(const void *src, void *dst, int64_t o, int64_t kh, int64_t kw, size_t es)
{
    const char *s = src;
    char *d = dst;
    for (int64_t a = 0; a < o; a++)
        for (int64_t y = 0; y < kh; y++)
            for (int64_t x = 0; x < kw; x++)
                memcpy(d + (size_t)((y * kw + x) * o + a) * es, s + (size_t)((a * kh + y) * kw + x) * es, es);
}

/* One 4-D transposition between NCHW and NHWC, either way: element (a, ch, y, x) moves between its two offsets. */
static void nchw_nhwc(const void *src, void *dst, const int64_t dims[4], size_t es, int to_nhwc)
{
    const char *s = src;
    char *d = dst;
    int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
    for (int64_t a = 0; a < n; a++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++) {
                    size_t nchw = (size_t)(((a * c + ch) * h + y) * w + x) * es;
                    size_t nhwc = (size_t)(((a * h + y) * w + x) * c + ch) * es;
                    if (to_nhwc)
                        memcpy(d + nhwc, s + nchw, es);
                    else
                        memcpy(d + nchw, s + nhwc, es);
                }
}

void par_nn_nchw_to_nhwc(const void *src, void *dst, const int64_t dims[4], size_t es)
{
    nchw_nhwc(src, dst, dims, es, 1);
}

void par_nn_nhwc_to_nchw(const void *src, void *dst, const int64_t dims[4], size_t es)
{
    nchw_nhwc(src, dst, dims, es, 0);
}

void par_nn_implicit_pad(int code, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *out, int64_t *begin,
                         int64_t *end)
{
    int64_t ek = (k - 1) * dil + 1;
    if (code == ANEURALNETWORKS_PADDING_SAME) {
        int64_t o = (in + stride - 1) / stride;
        int64_t total = (o - 1) * stride + ek - in;
        if (total < 0) total = 0;
        *out = o;
        *begin = total / 2;
        *end = total - total / 2;
    } else {
        *out = (in - ek + stride) / stride;
        *begin = *end = 0;
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Operands
 * ------------------------------------------------------------------------------------------------------------- */
par_status par_nn_tensor_type(const nn_model *m, par_dtype dt, int32_t *type, int32_t *zp_shift, par_msg *msg)
{
    *zp_shift = 0;
    switch (dt) {
    case PAR_DTYPE_F32: *type = ANEURALNETWORKS_TENSOR_FLOAT32; return PAR_OK;
    case PAR_DTYPE_I32: *type = ANEURALNETWORKS_TENSOR_INT32; return PAR_OK;
    case PAR_DTYPE_QU8: *type = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM; return PAR_OK;
    case PAR_DTYPE_QS8:
        if (m->set.level >= 30) {
            *type = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
        } else {
            *type = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
            *zp_shift = 128;
        }
        return PAR_OK;
    case PAR_DTYPE_F16:
        if (m->set.level < 29) return par_msgf(msg, PAR_UNSUPPORTED, "TENSOR_FLOAT16 needs level 29");
        *type = ANEURALNETWORKS_TENSOR_FLOAT16;
        return PAR_OK;
    default: return par_msgf(msg, PAR_UNSUPPORTED, "dtype %s has no NNAPI operand type", par_dtype_name(dt));
    }
}

int32_t par_nn_operand(nn_model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale, int32_t zp)
{
    if (m->n_opnd == m->cap_opnd) {
        int32_t cap = m->cap_opnd ? 2 * m->cap_opnd : 64;
        nn_operand *o = realloc(m->opnd, (size_t)cap * sizeof *o);
        if (!o) return -1;
        m->opnd = o;
        m->cap_opnd = cap;
    }
    nn_operand *o = &m->opnd[m->n_opnd];
    memset(o, 0, sizeof *o);
    o->type = type;
    o->rank = rank;
    for (uint32_t i = 0; i < rank && i < PAR_MAX_RANK; i++) o->dims[i] = dims[i];
    o->scale = scale;
    o->zp = zp;
    return m->n_opnd++;
}

int32_t par_nn_const(nn_model *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale, int32_t zp,
                     const void *data, size_t len)
{
    void *copy = par_nn_alloc(m, len);
    if (!copy) return -1;
    memcpy(copy, data, len);
    int32_t i = par_nn_operand(m, type, rank, dims, scale, zp);
    if (i < 0) return -1;
    m->opnd[i].data = copy;
    m->opnd[i].len = len;
    return i;
}

int32_t par_nn_i32(nn_model *m, int32_t v)
{
    return par_nn_const(m, ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0, &v, sizeof v);
}

int32_t par_nn_f32(nn_model *m, float v)
{
    return par_nn_const(m, ANEURALNETWORKS_FLOAT32, 0, NULL, 0.0f, 0, &v, sizeof v);
}

int32_t par_nn_bool(nn_model *m, int v)
{
    uint8_t b = v ? 1 : 0;
    return par_nn_const(m, ANEURALNETWORKS_BOOL, 0, NULL, 0.0f, 0, &b, 1);
}

int32_t par_nn_i32_vec(nn_model *m, uint32_t n, const int32_t *v)
{
    return par_nn_const(m, ANEURALNETWORKS_TENSOR_INT32, 1, &n, 0.0f, 0, v, n * sizeof *v);
}

par_status par_nn_op(nn_model *m, int32_t type, int32_t node, uint32_t n_in, const uint32_t *in, uint32_t n_out,
                     const uint32_t *out, par_msg *msg)
{
    int level = par_nn_op_level(type);
    if (level == 0) return par_msgf(msg, PAR_ERROR, "operation code %d is not in the converter's table", type);
    if (level > m->set.level)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s needs level %d (the model is limited to level %d)",
                        par_nn_op_name(type), level, m->set.level);
    if (m->n_oper == m->cap_oper) {
        int32_t cap = m->cap_oper ? 2 * m->cap_oper : 32;
        nn_operation *o = realloc(m->oper, (size_t)cap * sizeof *o);
        if (!o) return par_msgf(msg, PAR_ERROR, "out of memory");
        m->oper = o;
        m->cap_oper = cap;
    }
    uint32_t *ii = par_nn_alloc(m, (n_in + n_out) * sizeof *ii);
    if (!ii) return par_msgf(msg, PAR_ERROR, "out of memory");
    memcpy(ii, in, n_in * sizeof *ii);
    memcpy(ii + n_in, out, n_out * sizeof *ii);
    m->oper[m->n_oper++] = (nn_operation){type, node, n_in, n_out, ii, ii + n_in};
    return PAR_OK;
}

/* An operand for value v with the given physical dims (its type and quantization from v). */
static int32_t value_operand(nn_model *m, const par_value *v, int nhwc, par_status *st, par_msg *msg)
{
    int32_t type, shift;
    *st = par_nn_tensor_type(m, v->dtype, &type, &shift, msg);
    if (*st != PAR_OK) return -1;
    uint32_t dims[PAR_MAX_RANK];
    for (int32_t i = 0; i < v->rank; i++) dims[par_nn_axis(v->rank, nhwc, i)] = (uint32_t)v->dims[i];
    /* A rank-0 value is a tensor of one element for NNAPI (its tensors have rank >= 1). */
    uint32_t rank = v->rank ? (uint32_t)v->rank : 1;
    if (!v->rank) dims[0] = 1;
    int quant = v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8;
    int32_t o = par_nn_operand(m, type, rank, dims, quant ? v->scale : 0.0f, quant ? v->zero_point + shift : 0);
    if (o < 0) *st = par_msgf(msg, PAR_ERROR, "out of memory");
    else m->opnd[o].nhwc = nhwc && v->rank == 4;
    return o;
}

/* A constant value as an operand in the given layout (data permuted, qs8 shifted below level 30). */
static int32_t const_operand(nn_model *m, const par_value *v, int nhwc, par_status *st, par_msg *msg)
{
    if (v->quant_axis >= 0) {
        *st = par_msgf(msg, PAR_UNSUPPORTED, "constant '%s' with per-channel scales used as an activation", v->name);
        return -1;
    }
    int32_t o = value_operand(m, v, nhwc, st, msg);
    if (o < 0) return -1;
    size_t es = par_dtype_size(v->dtype), len = (size_t)v->numel * es;
    uint8_t *d = par_nn_alloc(m, len);
    if (!d) {
        *st = par_msgf(msg, PAR_ERROR, "out of memory");
        return -1;
    }
    if (nhwc && v->rank == 4) par_nn_nchw_to_nhwc(v->data, d, v->dims, es);
    else memcpy(d, v->data, len);
    if (v->dtype == PAR_DTYPE_QS8 && m->set.level < 30)
        for (size_t i = 0; i < len; i++) d[i] ^= 0x80;
    m->opnd[o].data = d;
    m->opnd[o].len = len;
    return o;
}

int32_t par_nn_out(nn_model *m, int32_t v, int nhwc, par_status *st, par_msg *msg)
{
    const par_value *val = &m->g->values[v];
    int32_t o = value_operand(m, val, nhwc && val->rank == 4, st, msg);
    if (o >= 0) {
        m->val_opnd[v] = o;
        m->val_nchw[v] = m->opnd[o].nhwc ? -1 : o;
    }
    return o;
}

/* TRANSPOSE of a rank-4 operand between NHWC and logical NCHW. */
static int32_t transpose4(nn_model *m, int32_t src, int to_nhwc, const par_value *v, int32_t node, par_status *st,
                          par_msg *msg)
{
    static const int32_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};
    int32_t o = value_operand(m, v, to_nhwc, st, msg);
    if (o < 0) return -1;
    int32_t perm = par_nn_i32_vec(m, 4, to_nhwc ? TO_NHWC : TO_NCHW);
    if (perm < 0) {
        *st = par_msgf(msg, PAR_ERROR, "out of memory");
        return -1;
    }
    uint32_t in[2] = {(uint32_t)src, (uint32_t)perm}, out[1] = {(uint32_t)o};
    *st = par_nn_op(m, ANEURALNETWORKS_TRANSPOSE, node, 2, in, 1, out, msg);
    if (*st != PAR_OK) {
        par_msg t = *msg;
        par_msgf(msg, *st, "'%s' must change layout (%s): %s", v->name, to_nhwc ? "NCHW to NHWC" : "NHWC to NCHW",
                 t.text);
        return -1;
    }
    return o;
}

/* With H = W = 1 or C = 1 the NHWC and NCHW orders hold the same bytes: a RESHAPE-free relabel suffices. */
static int layout_free(const par_value *v)
{
    return v->rank == 4 && ((v->dims[2] == 1 && v->dims[3] == 1) || v->dims[1] == 1);
}

int32_t par_nn_value(nn_model *m, int32_t v, int want, int32_t node, par_status *st, par_msg *msg)
{
    const par_value *val = &m->g->values[v];
    *st = PAR_OK;
    if (val->kind == PAR_VALUE_CONST) {
        int nhwc = want == NN_NHWC && val->rank == 4;
        return const_operand(m, val, nhwc, st, msg);
    }
    int32_t o = m->val_opnd[v];
    if (o < 0) {
        *st = par_msgf(msg, PAR_UNSUPPORTED, "value '%s' has no operand (its producer was not converted)", val->name);
        return -1;
    }
    if (want == NN_ANY || val->rank != 4) return o;
    int have_nhwc = m->opnd[o].nhwc;
    if (want == NN_NHWC && have_nhwc) return o;
    if (want == NN_LOGICAL && !have_nhwc) return o;
    if (want == NN_LOGICAL && m->val_nchw[v] >= 0) return m->val_nchw[v];
    if (layout_free(val)) {
        /* Same bytes in both orders: a second operand description would need an operation to produce it, so
         * reshape to the other dims (RESHAPE is level 27). */
        int32_t r = value_operand(m, val, want == NN_NHWC, st, msg);
        if (r < 0) return -1;
        int32_t shape[4];
        for (int i = 0; i < 4; i++) shape[i] = (int32_t)m->opnd[r].dims[i];
        int32_t sh = par_nn_i32_vec(m, 4, shape);
        if (sh < 0) {
            *st = par_msgf(msg, PAR_ERROR, "out of memory");
            return -1;
        }
        uint32_t in[2] = {(uint32_t)o, (uint32_t)sh}, out[1] = {(uint32_t)r};
        *st = par_nn_op(m, ANEURALNETWORKS_RESHAPE, node, 2, in, 1, out, msg);
        if (*st != PAR_OK) return -1;
        if (want == NN_LOGICAL) m->val_nchw[v] = r;
        return r;
    }
    int32_t r = transpose4(m, o, want == NN_NHWC, val, node, st, msg);
    if (r >= 0 && want == NN_LOGICAL) m->val_nchw[v] = r;
    return r;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Helpers of the lowering files
 * ------------------------------------------------------------------------------------------------------------- */
int nn_is_q(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

int32_t nn_zp(const nn_model *m, const par_value *v)
{
    return v->zero_point + ((v->dtype == PAR_DTYPE_QS8 && m->set.level < 30) ? 128 : 0);
}

int nn_same_q(const par_value *a, const par_value *b)
{
    return a->dtype == b->dtype && (!nn_is_q(a->dtype) || (a->scale == b->scale && a->zero_point == b->zero_point));
}

int32_t nn_in(nn_model *m, int32_t node, int32_t k, int want, par_status *st, par_msg *msg)
{
    const par_node *n = &m->g->nodes[node];
    return par_nn_value(m, n->inputs[k], want, node, st, msg);
}
