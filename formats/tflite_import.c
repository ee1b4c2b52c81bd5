/*
 * tflite_import.c - a TFLite model as a parity case (formats/model.h): the main subgraph's operators mapped one by
 * one onto parity ops through the op table of tflite.c, its weights as constants with their data, its inputs
 * generated from the case seed.
 *
 * Layout. TFLite is NHWC, parity's graphs are logical NCHW. Every TFLite tensor is held as a parity value V and a
 * permutation pv with V = permute(L, pv) (V.dims[i] = L.dims[pv[i]]), L being the tensor as TFLite sees it. The
 * "stored" form of a rank-4 tensor is pv = [0,3,1,2] (NCHW; identity for other ranks): graph inputs, the outputs of
 * convolutions, pools, pads, resizes and concatenations are stored. An op that needs another form asks for it
 * (get) and gets a permute node only when the permutation is not the identity, once per tensor and form. Ops that
 * do not care where their axes are (elementwise ops, reductions, softmax, slices, squeezes) run on V as it is, with
 * their axes mapped through pv, and TRANSPOSE emits nothing: it only changes pv. So an exporter's layout permutes
 * fold away on the way back, and a TFLite graph becomes the parity graph a PyTorch model of it would be.
 *
 *   L (TFLite, NHWC)  --pv-->  V (parity value)       conv, pool, ... want pv = [0,3,1,2]
 *                                                       RESHAPE, FULLY_CONNECTED, BATCH_MATMUL want pv = identity
 *
 * Constants are made lazily, in the form their consumer asks for (the data permuted at import: OHWI -> OIHW for
 * CONV_2D, [1,H,W,C*m] -> [C*m,1,H,W] for DEPTHWISE_CONV_2D). A DEQUANTIZE of a constant (float16 or int8 weights)
 * is folded into an f32 constant. After every op the output's shape is checked against the model's.
 *
 * An op that does not map is listed in par_import_info (op, first output tensor, count, why) and the import fails;
 * the ops that consume its outputs are skipped without being listed.
 *
 * Must not: accept what it cannot express exactly (it says why instead), or write files.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/layout.h"
#include "formats/tflite.h"

#define MAXR PAR_TFL_MAX_RANK
#define MAX_FORMS 4

typedef struct form {
    int32_t perm[MAXR];
    int32_t v;
} form;

typedef struct tens {
    int32_t v;             /* the parity value, -1 until made */
    int32_t pv[MAXR];
    int32_t n_forms;
    form forms[MAX_FORMS]; /* materialized forms (cache) */
    float *fold;           /* f32 data of a folded DEQUANTIZE of a constant */
    int bad;               /* produced by an op that did not map */
    int32_t n_uses;        /* operators reading it, plus 1 for a graph output */
    int32_t pad_of;        /* a zero spatial PAD left for its one consumer, a VALID convolution, to take: the PAD's
                            * input tensor (-1: none) and its pads [top, left, bottom, right] */
    int64_t pad[4];
} tens;

typedef struct imp {
    const par_tfl_model *m;
    const par_tfl_subgraph *g;
    par_case *c;
    tens *t;
    par_import_info *info;
    par_msg *msg;
    const char *origin;
    int32_t op;            /* index of the operator being mapped, -1 outside */
    int failed;            /* a hard error (msg set) */
    int unmapped;          /* the current op does not map: why */
    char why[160];
    char name[256];
} imp;

/* ---- messages ------------------------------------------------------------------------------------------------- */

static const char *opname(const imp *im, const par_tfl_op *op)
{
    const par_tfl_opcode *oc = &im->m->opcodes[op->opcode_index];
    return oc->builtin == PAR_TFL_OP_CUSTOM && oc->custom ? oc->custom : par_tfl_op_name(oc->builtin);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int fail(imp *im, const char *fmt, ...)
{
    if (im->failed) return 0;
    im->failed = 1;
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (im->op >= 0)
        par_msgf(im->msg, PAR_ERROR, "%s: subgraphs[0].operators[%d] (%s): %s", im->origin, (int)im->op,
                 opname(im, &im->g->ops[im->op]), why);
    else
        par_msgf(im->msg, PAR_ERROR, "%s: subgraphs[0]: %s", im->origin, why);
    return 0;
}

/* The op does not map: say why (listed in info, not an error by itself). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int unmapped(imp *im, const char *fmt, ...)
{
    if (im->unmapped) return 0;
    im->unmapped = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->why, sizeof im->why, fmt, ap);
    va_end(ap);
    return 0;
}

static int builder(imp *im)
{
    if (im->c->status == PAR_OK) return 1;
    return fail(im, "%s", im->c->err.text);
}

/* ---- permutations ---------------------------------------------------------------------------------------------- */

static void ident(int32_t r, int32_t *p)
{
    for (int32_t i = 0; i < r; i++) p[i] = i;
}

/* The stored form: NCHW for rank 4, else as TFLite has it. */
static void stored(int32_t r, int32_t *p)
{
    static const int32_t nchw[4] = {0, 3, 1, 2};
    if (r == 4) memcpy(p, nchw, sizeof nchw);
    else ident(r, p);
}

static void invert(int32_t r, const int32_t *p, int32_t *inv)
{
    for (int32_t i = 0; i < r; i++) inv[p[i]] = i;
}

static int is_ident(int32_t r, const int32_t *p)
{
    for (int32_t i = 0; i < r; i++)
        if (p[i] != i) return 0;
    return 1;
}

/* ---- tensors, constants ---------------------------------------------------------------------------------------- */

static const par_tfl_tensor *T(const imp *im, int32_t ti) { return &im->g->tensors[ti]; }

/* The element count, saturated at 2^62 (a hostile shape must not overflow; check_dims refuses dims < 1). */
static int64_t numel(const par_tfl_tensor *t)
{
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        int64_t d = t->shape[i] > 0 ? t->shape[i] : 0;
        n = d && n > (INT64_C(1) << 62) / d ? INT64_C(1) << 62 : n * d;
    }
    return n;
}

static const par_tfl_buffer *tbuf(const imp *im, int32_t ti)
{
    uint32_t b = T(im, ti)->buffer;
    if (b == 0 || b >= (uint32_t)im->m->n_buffers) return NULL;
    const par_tfl_buffer *bf = &im->m->buffers[b];
    return bf->size ? bf : NULL;
}

static int is_const(const imp *im, int32_t ti) { return ti >= 0 && (im->t[ti].fold || tbuf(im, ti)); }

/* A unique value name from a tensor's name and a suffix (valid per core/graph.c: no quotes, backslashes or control
 * characters, at most 200 bytes). Lives until the next call. */
static const char *uname(imp *im, int32_t ti, const char *suffix)
{
    char base[160];
    const char *n = ti >= 0 ? T(im, ti)->name : "";
    size_t k = 0;
    for (const char *p = n; *p && k < 120; p++)
        base[k++] = ((unsigned char)*p < 0x20 || *p == '\'' || *p == '"' || *p == '\\') ? '_' : *p;
    base[k] = 0;
    if (!k) snprintf(base, sizeof base, "t%d", (int)ti);
    snprintf(im->name, sizeof im->name, "%s%s%s", base, *suffix ? ":" : "", suffix);
    for (int i = 2; par_graph_find_value(im->c->graph, im->name) >= 0; i++)
        snprintf(im->name, sizeof im->name, "%s%s%s#%d", base, *suffix ? ":" : "", suffix, i);
    return im->name;
}

static par_dtype dtype_of(const par_tfl_tensor *t)
{
    switch (t->type) {
    case PAR_TFL_FLOAT32: return PAR_DTYPE_F32;
    case PAR_TFL_FLOAT16: return PAR_DTYPE_F16;
    case PAR_TFL_INT8: return t->quant && t->quant->n_scale ? PAR_DTYPE_QS8 : PAR_DTYPE_INVALID;
    case PAR_TFL_UINT8: return t->quant && t->quant->n_scale ? PAR_DTYPE_QU8 : PAR_DTYPE_INVALID;
    case PAR_TFL_INT32: return PAR_DTYPE_I32;
    case PAR_TFL_BOOL: return PAR_DTYPE_BOOL;
    default: return PAR_DTYPE_INVALID;
    }
}

static int quantized(const par_tfl_tensor *t) { return t->type == PAR_TFL_INT8 || t->type == PAR_TFL_UINT8; }

/* The output declaration of a tensor (a quantized one carries its parameters). */
static par_out_spec spec(const imp *im, int32_t ti, const char *name)
{
    par_out_spec s = {name, 0, 0, 0};
    const par_tfl_tensor *t = T(im, ti);
    if (quantized(t) && t->quant && t->quant->n_scale >= 1) {
        s.dtype = t->type == PAR_TFL_INT8 ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
        s.scale = t->quant->scale[0];
        s.zero_point = t->quant->n_zero_point ? (int32_t)t->quant->zero_point[0] : 0;
    } else if (t->type == PAR_TFL_INT32) {
        s.dtype = PAR_DTYPE_I32;
    }
    return s;
}

static float half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, f = h & 1023, u;
    if (e == 31) u = s | 0x7f800000u | (f << 13);
    else if (e) u = s | ((e + 112) << 23) | (f << 13);
    else if (!f) u = s;
    else {
        float x = ldexpf((float)f, -24);
        return s ? -x : x;
    }
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* Check a constant's buffer against its shape and type; its bytes. */
static const uint8_t *const_bytes(imp *im, int32_t ti, size_t esz)
{
    const par_tfl_tensor *t = T(im, ti);
    const par_tfl_buffer *b = tbuf(im, ti);
    int64_t n = numel(t);
    if (n > PAR_CASE_MAX_ELEMS) return fail(im, "tensor '%s': %lld elements: too many", t->name, (long long)n), NULL;
    if (!b || n < 1 || esz == 0 || (uint64_t)n * esz != b->size)
        return fail(im, "tensor '%s': buffer %u holds %llu bytes, the shape and type %s need %llu", t->name,
                    t->buffer, b ? (unsigned long long)b->size : 0ULL, par_tfl_type_name(t->type),
                    (unsigned long long)n * esz), NULL;
    return b->data;
}

/* A constant of tensor ti in form p (its logical dims first reshaped to lift_rank dims by leading 1s when lift_rank
 * exceeds its rank), then optionally reshaped to (rank_out, dims_out) of the same size. */
static int32_t make_const(imp *im, int32_t ti, int32_t lift_rank, const int32_t *p, int32_t rank_out,
                          const int64_t *dims_out, const char *suffix)
{
    const par_tfl_tensor *t = T(im, ti);
    par_dtype dt = im->t[ti].fold ? PAR_DTYPE_F32 : dtype_of(t);
    if (dt == PAR_DTYPE_INVALID || dt == PAR_DTYPE_BOOL)
        return unmapped(im, "constant '%s' of type %s%s", t->name, par_tfl_type_name(t->type),
                        quantized(t) ? " without quantization" : ""), -1;
    size_t esz = par_dtype_size(dt);
    const void *src = im->t[ti].fold;
    if (!src && !(src = const_bytes(im, ti, esz))) return -1;
    int32_t r = lift_rank > t->rank ? lift_rank : t->rank, off = r - t->rank;
    int64_t dims[MAXR], pd[MAXR];
    for (int32_t i = 0; i < r; i++) dims[i] = i < off ? 1 : t->shape[i - off];
    int64_t n = 1;
    for (int32_t i = 0; i < r; i++) n *= dims[i];
    void *data = malloc((size_t)n * esz + 1);
    if (!data) return fail(im, "out of memory"), -1;
    par_fmt_permute(src, data, esz, r, dims, p);
    for (int32_t j = 0; j < r; j++) pd[j] = dims[p[j]];
    if (rank_out < 0) rank_out = r, dims_out = pd;
    int32_t v = par_case_const_data(im->c, uname(im, ti, suffix), dt, rank_out, dims_out, data);
    free(data);
    if (v < 0) return builder(im), -1;
    const par_tfl_quant *q = t->quant;
    if (!im->t[ti].fold && q && q->n_scale >= 1 && (dt == PAR_DTYPE_QS8 || dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_I32)) {
        if (q->n_scale > 1 && dt == PAR_DTYPE_QS8) {
            for (int32_t k = 0; k < q->n_zero_point; k++)
                if (q->zero_point[k] != 0)
                    return unmapped(im, "constant '%s': per-channel zero point %lld (parity's are 0)", t->name,
                                    (long long)q->zero_point[k]), -1;
            /* The quantized dimension, after lifting and permuting, is where the channel axis lands. */
            int32_t la = q->quantized_dimension + off, axis = -1;
            for (int32_t j = 0; j < r; j++)
                if (p[j] == la) axis = j;
            if (rank_out != r) {
                /* Reshaped (depthwise [1,H,W,C*m] -> [C*m,1,H,W]): the channel axis is the one of that size. */
                axis = -1;
                for (int32_t j = 0; j < rank_out && axis < 0; j++)
                    if (dims_out[j] == q->n_scale) axis = j;
            }
            if (axis < 0) return fail(im, "constant '%s': cannot place its quantized dimension", t->name), -1;
            if (par_graph_set_channel_quant(im->c->graph, v, axis, q->scale, q->n_scale, &im->c->err) != PAR_OK)
                return im->c->status = PAR_ERROR, builder(im), -1;
        } else if (q->n_scale > 1 && dt != PAR_DTYPE_I32) {
            return unmapped(im, "constant '%s': per-channel quantized %s (parity: qs8 only)", t->name,
                            par_dtype_name(dt)), -1;
        } else {
            /* An i32 bias: parity reads it as q * s_x * s_w[c] whatever it declares (docs/quantization.md), so a
             * per-channel bias declares its first scale. */
            int32_t zp = dt == PAR_DTYPE_I32 ? 0 : (q->n_zero_point ? (int32_t)q->zero_point[0] : 0);
            par_case_quant(im->c, v, q->scale[0], zp);
            if (!builder(im)) return -1;
        }
    }
    return v;
}

static int check_dims(imp *im, int32_t ti)
{
    const par_tfl_tensor *t = T(im, ti);
    if (t->has_sparsity) return unmapped(im, "tensor '%s' is sparse", t->name);
    for (int32_t i = 0; i < t->rank; i++)
        if (t->shape[i] < 1) return unmapped(im, "tensor '%s': dimension %d is %d (dynamic or empty)", t->name,
                                             (int)i, (int)t->shape[i]);
    if (numel(t) > PAR_CASE_MAX_ELEMS)
        return unmapped(im, "tensor '%s': %lld elements (parity's limit: %lld)", t->name, (long long)numel(t),
                        (long long)PAR_CASE_MAX_ELEMS);
    return 1;
}

/* The tensor's value as it is (made in the stored form when a constant has none yet). */
static int32_t cur(imp *im, int32_t ti, int32_t *pv)
{
    tens *s = &im->t[ti];
    int32_t r = T(im, ti)->rank;
    if (s->v < 0 && is_const(im, ti)) {
        stored(r, s->pv);
        if (!check_dims(im, ti)) return -1;
        s->v = make_const(im, ti, 0, s->pv, -1, NULL, "");
    }
    if (s->v < 0) {
        if (!im->unmapped && !im->failed) fail(im, "tensor '%s' is used before it is produced", T(im, ti)->name);
        return -1;
    }
    memcpy(pv, s->pv, sizeof s->pv);
    return s->v;
}

/* The tensor in form p (V = permute(L, p)): a permute node when it is not already so, once. */
static int32_t get(imp *im, int32_t ti, const int32_t *p)
{
    tens *s = &im->t[ti];
    int32_t r = T(im, ti)->rank;
    if (s->v < 0 && is_const(im, ti)) {
        if (!check_dims(im, ti)) return -1;
        int32_t v = make_const(im, ti, 0, p, -1, NULL, "");
        if (v < 0) return -1;
        s->v = v;
        memcpy(s->pv, p, sizeof(int32_t) * (size_t)r);
        return v;
    }
    int32_t pv[MAXR], inv[MAXR], q[MAXR];
    int32_t v = cur(im, ti, pv);
    if (v < 0) return -1;
    invert(r, pv, inv);
    for (int32_t j = 0; j < r; j++) q[j] = inv[p[j]];
    if (is_ident(r, q)) return v;
    for (int32_t k = 0; k < s->n_forms; k++)
        if (!memcmp(s->forms[k].perm, p, sizeof(int32_t) * (size_t)r)) return s->forms[k].v;
    int64_t qq[MAXR];
    for (int32_t j = 0; j < r; j++) qq[j] = q[j];
    par_attr a = par_a_ints("perm", r, qq);
    par_out_spec o = spec(im, ti, uname(im, ti, r == 4 && p[1] == 3 ? "nchw" : r == 4 && p[3] == 3 ? "nhwc" : "perm"));
    int32_t w = par_case_node(im->c, "permute", 1, &v, 1, &a, &o);
    if (w < 0) return builder(im), -1;
    if (s->n_forms < MAX_FORMS) {
        memcpy(s->forms[s->n_forms].perm, p, sizeof(int32_t) * (size_t)r);
        s->forms[s->n_forms++].v = w;
    }
    return w;
}

static int32_t get_stored(imp *im, int32_t ti)
{
    int32_t p[MAXR];
    stored(T(im, ti)->rank, p);
    return get(im, ti, p);
}

static int32_t get_logical(imp *im, int32_t ti)
{
    int32_t p[MAXR];
    ident(T(im, ti)->rank, p);
    return get(im, ti, p);
}

/* Record an op's output: value v holds tensor ti in form pv; its dims must be the model's. */
static int set_out(imp *im, int32_t ti, int32_t v, const int32_t *pv)
{
    const par_tfl_tensor *t = T(im, ti);
    const par_value *val = &par_graph_desc_of(im->c->graph)->values[v];
    int ok = val->rank == t->rank;
    for (int32_t i = 0; ok && i < t->rank; i++) ok = pv[i] >= 0 && pv[i] < t->rank && val->dims[i] == t->shape[pv[i]];
    if (!ok) {
        char a[96], b[96];
        int64_t d[MAXR];
        for (int32_t i = 0; i < t->rank; i++) d[i] = t->shape[i];
        par_shape_format(val->rank, val->dims, a, sizeof a);
        par_shape_format(t->rank, d, b, sizeof b);
        return fail(im, "output '%s': parity's value has shape %s, the model's tensor %s (in TFLite order)", t->name,
                    a, b);
    }
    tens *s = &im->t[ti];
    s->v = v;
    memcpy(s->pv, pv, sizeof(int32_t) * (size_t)t->rank);
    s->n_forms = 0;
    return 1;
}

/* ---- emitting ------------------------------------------------------------------------------------------------- */

static const char *act_op(int32_t act)
{
    switch (act) {
    case PAR_TFL_ACT_RELU: return "relu";
    case PAR_TFL_ACT_RELU_N1_TO_1: return "hardtanh";
    case PAR_TFL_ACT_RELU6: return "relu6";
    case PAR_TFL_ACT_TANH: return "tanh";
    default: return NULL;
    }
}

/* One parity node producing tensor ti (then its fused activation as the next node); the final value or -1. */
static int32_t emit(imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs,
                    int32_t ti, int32_t act)
{
    par_out_spec o = spec(im, ti, uname(im, ti, act ? "pre" : ""));
    int32_t v = par_case_node(im->c, op, n_in, ins, n_attrs, attrs, &o);
    if (v < 0) return builder(im), -1;
    if (!act) return v;
    o = spec(im, ti, uname(im, ti, ""));
    int32_t w = par_case_node(im->c, act_op(act), 1, &v, 0, NULL, &o);
    if (w < 0) return builder(im), -1;
    return w;
}

/* An int32 / int64 constant's elements (axes, paddings, sizes). */
static int const_ints(imp *im, int32_t ti, int64_t *out, int64_t max, int64_t *n)
{
    if (ti < 0 || !tbuf(im, ti)) return unmapped(im, "its %s input is not a constant", ti < 0 ? "second" : T(im, ti)->name);
    const par_tfl_tensor *t = T(im, ti);
    if (t->type != PAR_TFL_INT32 && t->type != PAR_TFL_INT64)
        return unmapped(im, "tensor '%s': indices of type %s", t->name, par_tfl_type_name(t->type));
    size_t esz = par_tfl_type_size(t->type);
    const uint8_t *b = const_bytes(im, ti, esz);
    if (!b) return 0;
    *n = numel(t);
    if (*n > max) return fail(im, "tensor '%s': %lld elements, at most %lld expected", t->name, (long long)*n,
                              (long long)max);
    for (int64_t i = 0; i < *n; i++) {
        uint8_t e[8];
        memcpy(e, b + i * (int64_t)esz, esz);
        out[i] = esz == 4 ? (int64_t)(int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
                                               (uint32_t)e[3] << 24)
                          : (int64_t)((uint64_t)e[0] | (uint64_t)e[1] << 8 | (uint64_t)e[2] << 16 |
                                      (uint64_t)e[3] << 24 | (uint64_t)e[4] << 32 | (uint64_t)e[5] << 40 |
                                      (uint64_t)e[6] << 48 | (uint64_t)e[7] << 56);
    }
    return 1;
}

/* Explicit padding [before, after] of one spatial dimension under TFLite's SAME (the odd pad at the end). */
static void same_pad(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *lo, int64_t *hi)
{
    int64_t out = (in + stride - 1) / stride, ext = (k - 1) * dil + 1;
    int64_t total = (out - 1) * stride + ext - in;
    if (total < 0) total = 0;
    *lo = total / 2;
    *hi = total - *lo;
}

/* Remove the stored positions `drop` (a mask over V's axes, each of size 1) with a reshape; the new pv. */
static int32_t drop_axes(imp *im, int32_t v, int32_t r, const int32_t *pv, const int *drop, int32_t ti_out,
                         int32_t *pv_out)
{
    const par_value *val = &par_graph_desc_of(im->c->graph)->values[v];
    int64_t dims[MAXR];
    int32_t k = 0, logical[MAXR];
    for (int32_t i = 0; i < r; i++)
        if (!drop[i]) dims[k] = val->dims[i], logical[k++] = pv[i];
    /* the remaining logical axes keep their order: pv_out is each one's rank among them */
    for (int32_t i = 0; i < k; i++) {
        int32_t rank = 0;
        for (int32_t j = 0; j < k; j++) rank += logical[j] < logical[i];
        pv_out[i] = rank;
    }
    par_attr a = par_a_ints("shape", k, dims);
    return emit(im, "reshape", 1, &v, 1, &a, ti_out, 0);
}

/* ---- the op families ------------------------------------------------------------------------------------------- */

static int32_t in(const par_tfl_op *op, int32_t i) { return i < op->n_inputs ? op->inputs[i] : -1; }

/* A constant of all-zero bytes that nothing else reads. */
static int zero_const(const imp *im, int32_t ti)
{
    const par_tfl_buffer *b = tbuf(im, ti);
    if (!b || im->t[ti].fold || im->t[ti].n_uses != 1 || im->t[ti].v >= 0) return 0;
    for (uint64_t i = 0; i < b->size; i++)
        if (b->data[i]) return 0;
    return 1;
}

static int conv(imp *im, const par_tfl_op *op, int dw)
{
    int32_t x = in(op, 0), w = in(op, 1), b = in(op, 2), y = op->outputs[0];
    const par_tfl_tensor *tx = T(im, x), *tw = T(im, w);
    if (tx->rank != 4 || tw->rank != 4) return unmapped(im, "input or filter not of rank 4");
    const par_tfl_options *o = &im->g->ops[im->op].opt;
    if (o->stride_h < 1 || o->stride_w < 1 || o->dilation_h < 1 || o->dilation_w < 1)
        return fail(im, "stride %dx%d, dilation %dx%d: must be at least 1", (int)o->stride_h, (int)o->stride_w,
                    (int)o->dilation_h, (int)o->dilation_w);
    int64_t kh = tw->shape[1], kw = tw->shape[2], cin = tx->shape[3], groups;
    int32_t wv;
    if (dw) {
        /* [1, kh, kw, C*m] -> [C*m, 1, kh, kw], groups = C */
        static const int32_t p[4] = {3, 0, 1, 2};
        if (tw->shape[0] != 1 || tw->shape[3] % cin) return unmapped(im, "depthwise filter of shape [%d,..,%d]",
                                                                        (int)tw->shape[0], (int)tw->shape[3]);
        wv = get(im, w, p);
        groups = cin;
    } else {
        if (cin % tw->shape[3]) return fail(im, "filter of %d input channels for an input of %d", (int)tw->shape[3],
                                            (int)cin);
        wv = get_stored(im, w);
        groups = cin / tw->shape[3];
    }
    int64_t pad[4] = {0, 0, 0, 0};
    if (im->t[x].pad_of >= 0) {
        memcpy(pad, im->t[x].pad, sizeof pad);
        x = im->t[x].pad_of;
    }
    if (b >= 0 && zero_const(im, b)) b = -1; /* a zero bias is no bias (the exporter writes one: LiteRT wants it) */
    int32_t xv = get_stored(im, x);
    int32_t bv = b >= 0 ? get_logical(im, b) : -1;
    if (xv < 0 || wv < 0 || (b >= 0 && bv < 0)) return 0;
    if (o->padding == PAR_TFL_PAD_SAME) {
        same_pad(tx->shape[1], kh, o->stride_h, o->dilation_h, &pad[0], &pad[2]);
        same_pad(tx->shape[2], kw, o->stride_w, o->dilation_w, &pad[1], &pad[3]);
    }
    int64_t stride[2] = {o->stride_h, o->stride_w}, dil[2] = {o->dilation_h, o->dilation_w};
    for (int32_t i = 0; i < 2; i++) {
        int64_t padded = T(im, x)->shape[1 + i] + pad[i] + pad[i + 2], ext = (tw->shape[1 + i] - 1) * dil[i] + 1;
        if (ext > padded || (padded - ext) / stride[i] + 1 != T(im, y)->shape[1 + i])
            return fail(im, "a %lld filter extent with stride %lld over %lld (padded) does not give the output's %d",
                        (long long)ext, (long long)stride[i], (long long)padded, (int)T(im, y)->shape[1 + i]);
    }
    par_attr a[4] = {par_a_ints("stride", 2, stride), par_a_ints("padding", 4, pad), par_a_ints("dilation", 2, dil),
                     par_a_int("groups", groups)};
    int32_t ins[3] = {xv, wv, bv}, pv[4];
    int32_t v = emit(im, "conv2d", b >= 0 ? 3 : 2, ins, 4, a, y, o->activation);
    stored(4, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

static int fc(imp *im, const par_tfl_op *op)
{
    const par_tfl_options *o = &op->opt;
    int32_t x = in(op, 0), w = in(op, 1), b = in(op, 2), y = op->outputs[0];
    const par_tfl_tensor *tx = T(im, x), *tw = T(im, w);
    if (o->weights_format != 0) return unmapped(im, "shuffled weights format %d", (int)o->weights_format);
    if (tw->rank != 2) return unmapped(im, "weights of rank %d", (int)tw->rank);
    int32_t xv = get_logical(im, x), wv = get_logical(im, w), bv = b >= 0 ? get_logical(im, b) : -1;
    if (xv < 0 || wv < 0 || (b >= 0 && bv < 0)) return 0;
    int64_t k = tw->shape[1];
    if (!o->keep_num_dims && tx->rank != 2) {
        if (numel(tx) % k) return fail(im, "input of %lld elements is not a multiple of %lld", (long long)numel(tx),
                                       (long long)k);
        int64_t d[2] = {numel(tx) / k, k};
        par_attr a = par_a_ints("shape", 2, d);
        par_out_spec s = spec(im, x, uname(im, x, "flat"));
        xv = par_case_node(im->c, "reshape", 1, &xv, 1, &a, &s);
        if (xv < 0) return builder(im);
    }
    int32_t ins[3] = {xv, wv, bv}, pv[MAXR];
    int32_t v = emit(im, "linear", b >= 0 ? 3 : 2, ins, 0, NULL, y, o->activation);
    ident(T(im, y)->rank, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

/* An operand of a rank-4 elementwise op in the stored form, lifted from a lower rank by leading 1s (NHWC's
 * broadcasting aligns the last axes). */
static int32_t lifted(imp *im, int32_t ti, int32_t ro)
{
    const par_tfl_tensor *t = T(im, ti);
    int32_t p[MAXR];
    stored(ro, p);
    if (t->rank > ro) return fail(im, "operand '%s' of rank %d, the output's is %d", t->name, (int)t->rank, (int)ro), -1;
    if (t->rank == ro) return get(im, ti, p);
    if (ro != 4 || numel(t) == 1) return get_logical(im, ti); /* a single element broadcasts the same anywhere */
    if (is_const(im, ti) && im->t[ti].v < 0) {
        if (!check_dims(im, ti)) return -1;
        return make_const(im, ti, 4, p, -1, NULL, "nchw");
    }
    int32_t v = get_logical(im, ti);
    if (v < 0) return -1;
    int64_t d[4] = {1, 1, 1, 1}, pd[4];
    for (int32_t i = 0; i < t->rank; i++) d[4 - t->rank + i] = t->shape[i];
    par_attr a = par_a_ints("shape", 4, d);
    par_out_spec s = spec(im, ti, uname(im, ti, "4d"));
    v = par_case_node(im->c, "reshape", 1, &v, 1, &a, &s);
    if (v < 0) return builder(im), -1;
    for (int32_t j = 0; j < 4; j++) pd[j] = p[j];
    a = par_a_ints("perm", 4, pd);
    s = spec(im, ti, uname(im, ti, "nchw"));
    v = par_case_node(im->c, "permute", 1, &v, 1, &a, &s);
    return v < 0 ? (builder(im), -1) : v;
}

static int binary(imp *im, const par_tfl_op *op, const char *pop)
{
    int32_t y = op->outputs[0], ro = T(im, y)->rank, pv[MAXR];
    if (op->n_inputs != 2) return fail(im, "%d inputs, expected 2", (int)op->n_inputs);
    int32_t ins[2] = {lifted(im, op->inputs[0], ro), lifted(im, op->inputs[1], ro)};
    if (ins[0] < 0 || ins[1] < 0) return 0;
    int32_t v = emit(im, pop, 2, ins, 0, NULL, y, op->opt.activation);
    stored(ro, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

static int pool(imp *im, const par_tfl_op *op, int avg)
{
    const par_tfl_options *o = &op->opt;
    int32_t x = in(op, 0), y = op->outputs[0], pv[4];
    const par_tfl_tensor *tx = T(im, x);
    if (tx->rank != 4) return unmapped(im, "input of rank %d", (int)tx->rank);
    if (o->stride_h < 1 || o->stride_w < 1 || o->filter_h < 1 || o->filter_w < 1)
        return fail(im, "filter %dx%d, stride %dx%d: must be at least 1", (int)o->filter_h, (int)o->filter_w,
                    (int)o->stride_h, (int)o->stride_w);
    int32_t xv = get_stored(im, x);
    if (xv < 0) return 0;
    int64_t pad[4] = {0, 0, 0, 0}, k[2] = {o->filter_h, o->filter_w}, s[2] = {o->stride_h, o->stride_w};
    if (o->padding == PAR_TFL_PAD_SAME) {
        same_pad(tx->shape[1], k[0], s[0], 1, &pad[0], &pad[2]);
        same_pad(tx->shape[2], k[1], s[1], 1, &pad[1], &pad[3]);
    }
    /* the window must fit the padded input and give the model's output size; a padded window beyond 4096 is
     * refused (parity's check that no padded window is empty walks the padding window by window) */
    for (int32_t i = 0; i < 2; i++) {
        int64_t padded = tx->shape[1 + i] + pad[i] + pad[i + 2];
        if (k[i] > padded || (padded - k[i]) / s[i] + 1 != T(im, y)->shape[1 + i])
            return fail(im, "a %lld window with stride %lld over %lld (padded) does not give the output's %d",
                        (long long)k[i], (long long)s[i], (long long)padded, (int)T(im, y)->shape[1 + i]);
        if ((pad[i] || pad[i + 2]) && k[i] > 4096) return unmapped(im, "a padded window of %lld", (long long)k[i]);
    }
    /* TFLite averages over the window's real elements; without padding the flag changes nothing, and is left at
     * parity's default */
    int unpadded = !pad[0] && !pad[1] && !pad[2] && !pad[3];
    par_attr a[4] = {par_a_ints("kernel", 2, k), par_a_ints("stride", 2, s), par_a_ints("padding", 4, pad),
                     par_a_int("count_include_pad", unpadded)};
    int32_t v = emit(im, avg ? "avg_pool2d" : "max_pool2d", 1, &xv, avg ? 4 : 3, a, y, o->activation);
    stored(4, pv);
    return v >= 0 && set_out(im, y, v, pv);
}

static int reduce(imp *im, const par_tfl_op *op, const char *pop)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], inv[MAXR], pvo[MAXR];
    int64_t ax[MAXR], n, axes[MAXR];
    if (!const_ints(im, in(op, 1), ax, MAXR, &n)) return 0;
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    invert(r, pv, inv);
    int red[MAXR] = {0}, k = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
        if (a < 0 || a >= r) return fail(im, "axis %lld out of range for rank %d", (long long)ax[i], (int)r);
        if (!red[inv[a]]) red[inv[a]] = 1, axes[k++] = inv[a];
    }
    par_attr at[2] = {par_a_ints("axes", k, axes), par_a_int("keepdims", op->opt.keep_dims != 0)};
    int32_t w = emit(im, pop, 1, &v, 2, at, y, 0);
    if (w < 0) return 0;
    if (op->opt.keep_dims) return set_out(im, y, w, pv);
    int32_t m = 0, logical[MAXR];
    for (int32_t i = 0; i < r; i++)
        if (!red[i]) logical[m++] = pv[i];
    for (int32_t i = 0; i < m; i++) {
        pvo[i] = 0;
        for (int32_t j = 0; j < m; j++) pvo[i] += logical[j] < logical[i];
    }
    return set_out(im, y, w, pvo);
}

static int reshape(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR];
    const par_tfl_tensor *ty = T(im, y);
    int64_t d[MAXR];
    for (int32_t i = 0; i < ty->rank; i++) d[i] = ty->shape[i];
    int32_t v = get_logical(im, x);
    if (v < 0) return 0;
    par_attr a = par_a_ints("shape", ty->rank, d);
    int32_t w = emit(im, "reshape", 1, &v, 1, &a, y, 0);
    ident(ty->rank, pv);
    return w >= 0 && set_out(im, y, w, pv);
}

static int squeeze(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], pvo[MAXR];
    int sq[MAXR] = {0}, drop[MAXR] = {0};
    for (int32_t i = 0; i < op->opt.n_ints; i++) {
        int32_t a = op->opt.ints[i] < 0 ? op->opt.ints[i] + r : op->opt.ints[i];
        if (a < 0 || a >= r || T(im, x)->shape[a] != 1) return fail(im, "squeeze axis %d", (int)op->opt.ints[i]);
        sq[a] = 1;
    }
    for (int32_t a = 0; a < r && !op->opt.n_ints; a++) sq[a] = T(im, x)->shape[a] == 1;
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    for (int32_t i = 0; i < r; i++) drop[i] = sq[pv[i]];
    int32_t w = drop_axes(im, v, r, pv, drop, y, pvo);
    return w >= 0 && set_out(im, y, w, pvo);
}

static int softmax(imp *im, const par_tfl_op *op, const char *pop)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], inv[MAXR];
    if (r < 1) return unmapped(im, "input of rank 0");
    if (!strcmp(pop, "softmax") && op->opt.beta != 1.0f)
        return unmapped(im, "beta %g (parity's softmax has no temperature: beta 1 only)", (double)op->opt.beta);
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    invert(r, pv, inv);
    /* the last axis is written -1, as parity's default */
    par_attr a = par_a_int("axis", inv[r - 1] == r - 1 ? -1 : inv[r - 1]);
    int32_t w = emit(im, pop, 1, &v, 1, &a, y, 0);
    return w >= 0 && set_out(im, y, w, pv);
}

static int concat(imp *im, const par_tfl_op *op)
{
    int32_t y = op->outputs[0], r = T(im, y)->rank, p[MAXR], inv[MAXR], ins[64];
    if (op->n_inputs < 1 || op->n_inputs > 64) return unmapped(im, "%d inputs (parity: 1 to 64)", (int)op->n_inputs);
    int32_t axis = op->opt.axis < 0 ? op->opt.axis + r : op->opt.axis;
    if (axis < 0 || axis >= r) return fail(im, "axis %d out of range for rank %d", (int)op->opt.axis, (int)r);
    stored(r, p);
    invert(r, p, inv);
    for (int32_t i = 0; i < op->n_inputs; i++) {
        if (op->inputs[i] < 0 || T(im, op->inputs[i])->rank != r) return fail(im, "input %d: absent or not of rank %d", (int)i, (int)r);
        if ((ins[i] = get(im, op->inputs[i], p)) < 0) return 0;
    }
    par_attr a = par_a_int("axis", inv[axis]);
    int32_t w = emit(im, "concat", op->n_inputs, ins, 1, &a, y, op->opt.activation);
    return w >= 0 && set_out(im, y, w, p);
}

/* A zero PAD of H and W only, read by one VALID CONV_2D / DEPTHWISE_CONV_2D and nothing else, becomes that
 * convolution's padding (the exporter writes explicit padding TFLite has no mode for this way). */
static int pad_into_conv(imp *im, const par_tfl_op *op, const int64_t *pd, int v2)
{
    int32_t x = in(op, 0), y = op->outputs[0];
    if (v2 || T(im, x)->rank != 4 || im->t[y].n_uses != 1 || pd[0] || pd[1] || pd[6] || pd[7]) return 0;
    for (int32_t k = im->op + 1; k < im->g->n_ops; k++) {
        const par_tfl_op *c = &im->g->ops[k];
        if (c->n_inputs < 2 || c->inputs[0] != y) continue;
        int32_t code = im->m->opcodes[c->opcode_index].builtin;
        if ((code != PAR_TFL_OP_CONV_2D && code != PAR_TFL_OP_DEPTHWISE_CONV_2D) || c->opt.padding != PAR_TFL_PAD_VALID)
            return 0;
        im->t[y].pad_of = x;
        im->t[y].pad[0] = pd[2], im->t[y].pad[1] = pd[4], im->t[y].pad[2] = pd[3], im->t[y].pad[3] = pd[5];
        return 1;
    }
    return 0;
}

static int pad(imp *im, const par_tfl_op *op, int v2)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, p[MAXR];
    int64_t pd[2 * MAXR], n, pads[2 * MAXR];
    if (!const_ints(im, in(op, 1), pd, 2 * MAXR, &n)) return 0;
    if (n != 2 * r) return fail(im, "paddings of %lld elements for rank %d", (long long)n, (int)r);
    double value = 0;
    if (v2 && in(op, 2) >= 0) {
        int32_t ci = in(op, 2);
        const par_tfl_tensor *tc = T(im, ci);
        if (!tbuf(im, ci) || numel(tc) != 1) return unmapped(im, "pad value not a constant scalar");
        const uint8_t *b = const_bytes(im, ci, par_tfl_type_size(tc->type));
        if (!b) return 0;
        if (tc->type == PAR_TFL_FLOAT32) {
            float f;
            memcpy(&f, b, 4);
            value = f;
        } else if (quantized(tc) && tc->quant && tc->quant->n_scale) {
            int32_t q = tc->type == PAR_TFL_INT8 ? (int8_t)b[0] : b[0];
            value = tc->quant->scale[0] * (double)(q - (tc->quant->n_zero_point ? tc->quant->zero_point[0] : 0));
        } else {
            return unmapped(im, "pad value of type %s", par_tfl_type_name(tc->type));
        }
    }
    for (int32_t a = 0; a < r; a++)
        if (pd[2 * a] < 0 || pd[2 * a + 1] < 0 ||
            T(im, x)->shape[a] + pd[2 * a] + pd[2 * a + 1] != T(im, y)->shape[a])
            return fail(im, "paddings [%lld, %lld] of axis %d do not give the output's %d", (long long)pd[2 * a],
                        (long long)pd[2 * a + 1], (int)a, (int)T(im, y)->shape[a]);
    if (pad_into_conv(im, op, pd, v2)) return 1;
    stored(r, p);
    for (int32_t j = 0; j < r; j++) pads[2 * j] = pd[2 * p[j]], pads[2 * j + 1] = pd[2 * p[j] + 1];
    int32_t xv = get(im, x, p);
    if (xv < 0) return 0;
    par_attr a[2] = {par_a_ints("pads", 2 * r, pads), par_a_float("value", value)};
    int32_t w = emit(im, "pad", 1, &xv, 2, a, y, 0);
    return w >= 0 && set_out(im, y, w, p);
}

static int unary(imp *im, const par_tfl_op *op, const par_tfl_opmap *mp)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR], na = 0;
    par_attr a[2];
    switch (mp->code) {
    case PAR_TFL_OP_RELU_N1_TO_1: a[0] = par_a_float("min_val", -1), a[1] = par_a_float("max_val", 1), na = 2; break;
    case PAR_TFL_OP_LEAKY_RELU: a[0] = par_a_float("negative_slope", op->opt.alpha), na = 1; break;
    case PAR_TFL_OP_GELU: a[0] = par_a_str("approximate", op->opt.approximate ? "tanh" : "none"), na = 1; break;
    default: break;
    }
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    int32_t w = emit(im, mp->par_op, 1, &v, na, a, y, 0);
    return w >= 0 && set_out(im, y, w, pv);
}

static int prelu(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), s = in(op, 1), y = op->outputs[0], r = T(im, x)->rank, p[MAXR];
    const par_tfl_tensor *ts = T(im, s);
    if (r != 4 && r != 2) return unmapped(im, "input of rank %d (parity's slope is per channel: rank 2 or 4)", (int)r);
    if (!is_const(im, s)) return unmapped(im, "slope not a constant");
    int64_t c = ts->rank ? ts->shape[ts->rank - 1] : 1;
    if (numel(ts) != c || (c != 1 && c != T(im, x)->shape[r - 1]))
        return unmapped(im, "slope of shape other than [..., 1, C] (parity's slope is one per channel)");
    stored(ts->rank, p);
    ident(ts->rank, p);
    int32_t sv = im->t[s].v >= 0 ? get_logical(im, s) : make_const(im, s, 0, p, 1, &c, "");
    stored(r, p);
    int32_t xv = get(im, x, p);
    if (sv < 0 || xv < 0) return 0;
    if (par_graph_desc_of(im->c->graph)->values[sv].rank != 1)
        return unmapped(im, "slope already used at another shape");
    int32_t ins[2] = {xv, sv};
    int32_t w = emit(im, "prelu", 2, ins, 0, NULL, y, 0);
    return w >= 0 && set_out(im, y, w, p);
}

static int quantize(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR];
    if (!quantized(T(im, y))) return unmapped(im, "output of type %s", par_tfl_type_name(T(im, y)->type));
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    if (quantized(T(im, x))) {
        /* a requantization: parity's quantize takes f32 */
        par_out_spec s = {uname(im, x, "deq"), PAR_DTYPE_F32, 0, 0};
        v = par_case_node(im->c, "dequantize", 1, &v, 0, NULL, &s);
        if (v < 0) return builder(im);
    } else if (T(im, x)->type != PAR_TFL_FLOAT32) {
        return unmapped(im, "input of type %s", par_tfl_type_name(T(im, x)->type));
    }
    int32_t w = emit(im, "quantize", 1, &v, 0, NULL, y, 0);
    return w >= 0 && set_out(im, y, w, pv);
}

static int dequantize(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], pv[MAXR];
    if (im->t[y].fold) return 1; /* folded at import */
    if (!quantized(T(im, x))) return unmapped(im, "input of type %s", par_tfl_type_name(T(im, x)->type));
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    par_out_spec s = {uname(im, y, ""), PAR_DTYPE_F32, 0, 0};
    int32_t w = par_case_node(im->c, "dequantize", 1, &v, 0, NULL, &s);
    if (w < 0) return builder(im);
    return set_out(im, y, w, pv);
}

static int resize(imp *im, const par_tfl_op *op, const par_tfl_opmap *mp)
{
    int32_t x = in(op, 0), y = op->outputs[0], p[4];
    const par_tfl_tensor *tx = T(im, x), *ty = T(im, y);
    const par_tfl_options *o = &op->opt;
    if (tx->rank != 4) return unmapped(im, "input of rank %d", (int)tx->rank);
    const char *pop;
    int32_t na = 1;
    int64_t size[2] = {ty->shape[1], ty->shape[2]};
    par_attr a[2] = {par_a_ints("size", 2, size), par_a_int("align_corners", 0)};
    if (mp->code == PAR_TFL_OP_RESIZE_BILINEAR) {
        pop = "upsample_bilinear2d";
        na = 2;
        if (o->align_corners && o->half_pixel_centers)
            return unmapped(im, "align_corners and half_pixel_centers both set");
        if (o->align_corners) a[1].i = 1;
        else if (!o->half_pixel_centers && (size[0] != tx->shape[1] || size[1] != tx->shape[2]))
            return unmapped(im, "TF1 coordinates (half_pixel_centers=false, align_corners=false: source = dst * "
                                "in/out); parity's upsample_bilinear2d has align_corners and half-pixel only");
    } else {
        if (o->align_corners) return unmapped(im, "align_corners (rounds to the nearest source; parity's nearest "
                                                  "upsamplings floor)");
        pop = o->half_pixel_centers ? "upsample_nearest_exact2d" : "upsample_nearest2d";
    }
    int32_t xv = get_stored(im, x);
    if (xv < 0) return 0;
    int32_t w = emit(im, pop, 1, &xv, na, a, y, 0);
    stored(4, p);
    return w >= 0 && set_out(im, y, w, p);
}

static int transpose(imp *im, const par_tfl_op *op)
{
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], pvo[MAXR], inv[MAXR];
    int64_t perm[MAXR], n;
    if (!const_ints(im, in(op, 1), perm, MAXR, &n)) return 0;
    int seen[MAXR] = {0};
    if (n != r) return fail(im, "perm of %lld elements for rank %d", (long long)n, (int)r);
    for (int32_t i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r || seen[perm[i]]) return fail(im, "perm is not a permutation");
        seen[perm[i]] = 1;
        inv[perm[i]] = i;
    }
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    /* no node: only the form changes. O.dims[i] = L.dims[perm[i]], V.dims[k] = L.dims[pv[k]] = O.dims[inv[pv[k]]] */
    for (int32_t k = 0; k < r; k++) pvo[k] = inv[pv[k]];
    /* ... unless the output is a graph output that would then be no node's value */
    int32_t p[MAXR], ip[MAXR], id = 1;
    stored(r, p);
    invert(r, pvo, ip);
    for (int32_t j = 0; j < r; j++) id &= ip[p[j]] == j;
    const par_value *val = &par_graph_desc_of(im->c->graph)->values[v];
    if (id && val->kind != PAR_VALUE_NODE)
        for (int32_t i = 0; i < im->g->n_outputs; i++)
            if (im->g->outputs[i] == y) {
                int64_t q[MAXR];
                for (int32_t j = 0; j < r; j++) q[j] = j;
                par_attr a = par_a_ints("perm", r, q);
                if ((v = emit(im, "permute", 1, &v, 1, &a, y, 0)) < 0) return 0;
                break;
            }
    return set_out(im, y, v, pvo);
}

static int slice(imp *im, const par_tfl_op *op)
{
    const par_tfl_options *o = &op->opt;
    int32_t x = in(op, 0), y = op->outputs[0], r = T(im, x)->rank, pv[MAXR], inv[MAXR], pvo[MAXR];
    int64_t b[MAXR], e[MAXR], s[MAXR], nb, ne, ns;
    if (o->ellipsis_mask || o->new_axis_mask || o->offset)
        return unmapped(im, "ellipsis_mask, new_axis_mask or offset set");
    if (!const_ints(im, in(op, 1), b, MAXR, &nb) || !const_ints(im, in(op, 2), e, MAXR, &ne) ||
        !const_ints(im, in(op, 3), s, MAXR, &ns))
        return 0;
    if (nb != r || ne != r || ns != r) return unmapped(im, "begin/end/strides of other than %d elements", (int)r);
    int32_t v = cur(im, x, pv);
    if (v < 0) return 0;
    invert(r, pv, inv);
    int drop[MAXR] = {0}, any = 0, sliced = 0;
    for (int32_t d = 0; d < r; d++) {
        int64_t dim = T(im, x)->shape[d], st = s[d], lo = b[d], hi = e[d];
        int shrink = (o->shrink_axis_mask >> d) & 1;
        if (st < 1) return unmapped(im, "stride %lld on axis %d (parity's slice steps forward)", (long long)st, (int)d);
        if ((o->begin_mask >> d) & 1) lo = 0;
        if ((o->end_mask >> d) & 1) hi = dim;
        if (lo < 0) lo += dim;
        if (hi < 0) hi += dim;
        lo = lo < 0 ? 0 : lo > dim ? dim : lo;
        if (shrink) hi = lo + 1, st = 1;
        hi = hi < lo ? lo : hi > dim ? dim : hi;
        if (shrink) drop[inv[d]] = 1, any = 1;
        if (lo == 0 && hi == dim && st == 1 && !(d == r - 1 && !any && !sliced)) continue;
        /* to the end is written as parity's default end; a slice of nothing but the whole is still one node */
        par_attr a[4] = {par_a_int("dim", inv[d]), par_a_int("start", lo), par_a_int("end", hi == dim ? INT64_MAX : hi),
                         par_a_int("step", st)};
        sliced = 1;
        int32_t last = 1;
        for (int32_t d2 = d + 1; d2 < r; d2++) {
            int64_t lo2 = ((o->begin_mask >> d2) & 1) ? 0 : b[d2], hi2 = ((o->end_mask >> d2) & 1) ? T(im, x)->shape[d2] : e[d2];
            if (lo2 < 0) lo2 += T(im, x)->shape[d2];
            if (hi2 < 0) hi2 += T(im, x)->shape[d2];
            if (((o->shrink_axis_mask >> d2) & 1) || lo2 > 0 || hi2 < T(im, x)->shape[d2] || s[d2] != 1) last = 0;
        }
        par_out_spec sp = spec(im, y, uname(im, y, last && !any ? "" : "slice"));
        v = par_case_node(im->c, "slice", 1, &v, 4, a, &sp);
        if (v < 0) return builder(im);
    }
    if (any) {
        v = drop_axes(im, v, r, pv, drop, y, pvo);
        return v >= 0 && set_out(im, y, v, pvo);
    }
    return set_out(im, y, v, pv);
}

static int bmm(imp *im, const par_tfl_op *op)
{
    int32_t y = op->outputs[0], pv[MAXR], ins[2];
    for (int32_t i = 0; i < 2; i++) {
        int32_t ti = in(op, i), r = T(im, ti)->rank, p[MAXR];
        if (r < 2) return fail(im, "input %d of rank %d", (int)i, (int)r);
        ident(r, p);
        if (i == 0 ? op->opt.adj_x : op->opt.adj_y) p[r - 2] = r - 1, p[r - 1] = r - 2;
        if ((ins[i] = get(im, ti, p)) < 0) return 0;
    }
    int32_t w = emit(im, "matmul", 2, ins, 0, NULL, y, 0);
    ident(T(im, y)->rank, pv);
    return w >= 0 && set_out(im, y, w, pv);
}

/* ---- the driver ------------------------------------------------------------------------------------------------ */

static void note_missing(imp *im, const char *op, const char *node, const char *why)
{
    par_import_info *info = im->info;
    if (!info) return;
    for (int32_t i = 0; i < info->n_missing; i++)
        if (!strcmp(info->missing[i].op, op) && !strcmp(info->missing[i].why, why)) {
            info->missing[i].count++;
            return;
        }
    if (info->n_missing >= PAR_IMPORT_MAX_MISSING) return;
    par_import_missing *m = &info->missing[info->n_missing++];
    snprintf(m->op, sizeof m->op, "%s", op);
    snprintf(m->first_node, sizeof m->first_node, "%s", node);
    snprintf(m->why, sizeof m->why, "%s", why);
    m->count = 1;
}

static int map_op(imp *im, const par_tfl_op *op)
{
    const par_tfl_opcode *oc = &im->m->opcodes[op->opcode_index];
    const par_tfl_opmap *mp = oc->builtin == PAR_TFL_OP_CUSTOM ? NULL : par_tfl_opmap_code(oc->builtin);
    if (!mp) return unmapped(im, "%s", "");
    if (op->n_outputs != 1) return unmapped(im, "%d outputs", (int)op->n_outputs);
    /* the inputs each family reads unconditionally */
    int32_t need = 1;
    switch (mp->family) {
    case PAR_TFL_K_CONV: case PAR_TFL_K_DWCONV: case PAR_TFL_K_FC: case PAR_TFL_K_BINARY: case PAR_TFL_K_PRELU:
    case PAR_TFL_K_REDUCE: case PAR_TFL_K_PAD: case PAR_TFL_K_TRANSPOSE: case PAR_TFL_K_BMM: need = 2; break;
    case PAR_TFL_K_SLICE: need = 4; break;
    default: break;
    }
    for (int32_t i = 0; i < need; i++)
        if (i >= op->n_inputs || op->inputs[i] < 0) return fail(im, "input %d is missing (%d needed)", (int)i, (int)need);
    if (op->options_type != mp->options_type && op->options_type != PAR_TFL_OPT_NONE)
        return fail(im, "builtin_options of type %d, expected %d", (int)op->options_type, (int)mp->options_type);
    if (op->opt.activation && !act_op(op->opt.activation))
        return unmapped(im, "fused activation %d", (int)op->opt.activation);
    for (int32_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i] >= 0 && !check_dims(im, op->inputs[i])) return 0;
    if (!check_dims(im, op->outputs[0])) return 0;
    switch (mp->family) {
    case PAR_TFL_K_CONV: return conv(im, op, 0);
    case PAR_TFL_K_DWCONV: return conv(im, op, 1);
    case PAR_TFL_K_FC: return fc(im, op);
    case PAR_TFL_K_BINARY: return binary(im, op, mp->par_op);
    case PAR_TFL_K_POOL: return pool(im, op, mp->code == PAR_TFL_OP_AVERAGE_POOL_2D);
    case PAR_TFL_K_REDUCE: return reduce(im, op, mp->par_op);
    case PAR_TFL_K_RESHAPE: return reshape(im, op);
    case PAR_TFL_K_SQUEEZE: return squeeze(im, op);
    case PAR_TFL_K_SOFTMAX: return softmax(im, op, mp->par_op);
    case PAR_TFL_K_CONCAT: return concat(im, op);
    case PAR_TFL_K_PAD: return pad(im, op, mp->code == PAR_TFL_OP_PADV2);
    case PAR_TFL_K_UNARY: return unary(im, op, mp);
    case PAR_TFL_K_PRELU: return prelu(im, op);
    case PAR_TFL_K_QUANTIZE: return quantize(im, op);
    case PAR_TFL_K_DEQUANTIZE: return dequantize(im, op);
    case PAR_TFL_K_RESIZE: return resize(im, op, mp);
    case PAR_TFL_K_TRANSPOSE: return transpose(im, op);
    case PAR_TFL_K_SLICE: return slice(im, op);
    case PAR_TFL_K_BMM: return bmm(im, op);
    }
    return unmapped(im, "%s", "");
}

/* Fold every DEQUANTIZE of a constant (float16 or int8 / uint8 weights) into f32 data. */
static int fold_dequantize(imp *im)
{
    const par_tfl_subgraph *g = im->g;
    for (int32_t k = 0; k < g->n_ops; k++) {
        const par_tfl_op *op = &g->ops[k];
        if (im->m->opcodes[op->opcode_index].builtin != PAR_TFL_OP_DEQUANTIZE || op->n_inputs < 1 ||
            op->n_outputs != 1 || op->inputs[0] < 0 || !tbuf(im, op->inputs[0]))
            continue;
        int32_t x = op->inputs[0], y = op->outputs[0];
        const par_tfl_tensor *t = T(im, x);
        if (im->t[y].fold || numel(t) != numel(T(im, y))) continue;
        if (t->type != PAR_TFL_FLOAT16 && !(quantized(t) && t->quant && t->quant->n_scale)) continue;
        im->op = k;
        const uint8_t *b = const_bytes(im, x, par_tfl_type_size(t->type));
        if (!b) return 0;
        int64_t n = numel(t);
        float *f = malloc((size_t)n * sizeof *f + 1);
        if (!f) return fail(im, "out of memory");
        const par_tfl_quant *q = t->quant;
        int64_t inner = 1;
        if (q && q->n_scale > 1)
            for (int32_t i = q->quantized_dimension + 1; i < t->rank; i++) inner *= t->shape[i];
        for (int64_t i = 0; i < n; i++) {
            if (t->type == PAR_TFL_FLOAT16) {
                f[i] = half_to_float((uint16_t)(b[2 * i] | b[2 * i + 1] << 8));
            } else {
                int64_t c = q->n_scale > 1 ? (i / inner) % q->n_scale : 0;
                int32_t qv = t->type == PAR_TFL_INT8 ? (int8_t)b[i] : b[i];
                int64_t zp = c < q->n_zero_point ? q->zero_point[c] : 0;
                f[i] = (float)(q->scale[c] * (double)(qv - zp));
            }
        }
        im->t[y].fold = f;
        if (im->info) im->info->n_folded++;
    }
    im->op = -1;
    return 1;
}

static void gen_for(const par_tfl_tensor *t, par_gen *gen)
{
    memset(gen, 0, sizeof *gen);
    gen->dist = PAR_DIST_UNIFORM;
    if (quantized(t)) {
        gen->a = t->type == PAR_TFL_INT8 ? -128 : 0;
        gen->b = t->type == PAR_TFL_INT8 ? 127 : 255;
    } else if (t->rank == 4 && (t->shape[3] == 1 || t->shape[3] == 3)) {
        gen->a = 0, gen->b = 1; /* an image */
    } else {
        gen->a = -1, gen->b = 1;
    }
}

/* Map subgraph g (of model m) into case c; ops [k0, k1). */
static int import_graph(imp *im)
{
    const par_tfl_subgraph *g = im->g;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int32_t ti = g->inputs[i];
        const par_tfl_tensor *t = T(im, ti);
        if (im->t[ti].v >= 0 || is_const(im, ti)) continue;
        par_dtype dt = dtype_of(t);
        if (!check_dims(im, ti) || (dt != PAR_DTYPE_F32 && dt != PAR_DTYPE_QS8 && dt != PAR_DTYPE_QU8))
            return fail(im, "input '%s': %s", t->name, im->unmapped ? im->why : "type not f32, int8 or uint8");
        int32_t p[MAXR];
        int64_t d[MAXR];
        stored(t->rank, p);
        for (int32_t j = 0; j < t->rank; j++) d[j] = t->shape[p[j]];
        par_gen gen;
        gen_for(t, &gen);
        int32_t v = par_case_input(im->c, uname(im, ti, ""), dt, t->rank, d, gen);
        if (v >= 0 && dt != PAR_DTYPE_F32)
            par_case_quant(im->c, v, t->quant->scale[0], t->quant->n_zero_point ? (int32_t)t->quant->zero_point[0] : 0);
        if (!builder(im)) return 0;
        im->t[ti].v = v;
        memcpy(im->t[ti].pv, p, sizeof p);
    }
    for (int32_t k = 0; k < g->n_ops; k++) {
        const par_tfl_op *op = &g->ops[k];
        im->op = k;
        im->unmapped = 0;
        int skip = 0;
        for (int32_t i = 0; i < op->n_inputs; i++)
            if (op->inputs[i] >= 0 && im->t[op->inputs[i]].bad) skip = 1;
        if (!skip && map_op(im, op)) continue;
        if (im->failed) return 0;
        /* an op fed by one that did not map is listed only when its own type has no mapping */
        const par_tfl_opcode *oc = &im->m->opcodes[op->opcode_index];
        if (skip && (oc->builtin == PAR_TFL_OP_CUSTOM || !par_tfl_opmap_code(oc->builtin)))
            skip = 0, im->why[0] = 0;
        if (!skip) {
            const char *nm = op->n_outputs ? T(im, op->outputs[0])->name : "";
            note_missing(im, opname(im, op), nm, im->why);
        }
        for (int32_t i = 0; i < op->n_outputs; i++) im->t[op->outputs[i]].bad = 1;
    }
    im->op = -1;
    if (im->info && im->info->n_missing) return 0;
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t v = get_stored(im, g->outputs[i]);
        if (v < 0) return im->failed ? 0 : fail(im, "output '%s': %s", T(im, g->outputs[i])->name, im->why);
        par_case_output(im->c, v);
    }
    if (par_case_finish(im->c) != PAR_OK) return fail(im, "%s", im->c->err.text);
    return 1;
}

static const char *base_name(const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, len, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = 0;
    return buf;
}

static par_case *import_sub(const par_tfl_model *m, const par_tfl_subgraph *g, const char *id, const char *origin,
                            const par_import_opts *o, par_import_info *info, par_msg *msg, float **fold)
{
    imp im;
    memset(&im, 0, sizeof im);
    im.m = m;
    im.g = g;
    im.info = info;
    im.msg = msg;
    im.origin = origin;
    im.op = -1;
    im.c = par_case_create(id, o && o->seed ? o->seed : 1);
    im.t = calloc((size_t)g->n_tensors + 1, sizeof *im.t);
    if (!im.c || !im.t) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", origin);
        goto fail;
    }
    size_t ol = strlen(origin) + 1;
    if ((im.c->origin = malloc(ol))) memcpy(im.c->origin, origin, ol);
    for (int32_t i = 0; i < g->n_tensors; i++) im.t[i].v = -1, im.t[i].pad_of = -1, im.t[i].fold = fold ? fold[i] : NULL;
    for (int32_t k = 0; k < g->n_ops; k++)
        for (int32_t i = 0; i < g->ops[k].n_inputs; i++)
            if (g->ops[k].inputs[i] >= 0) im.t[g->ops[k].inputs[i]].n_uses++;
    for (int32_t i = 0; i < g->n_outputs; i++) im.t[g->outputs[i]].n_uses++;
    if (!fold && !fold_dequantize(&im)) goto fail;
    if (!import_graph(&im)) {
        if (!im.failed && info && info->n_missing)
            par_msgf(msg, PAR_ERROR, "%s: %d op type(s) parity cannot map (first: %s at '%s'%s%s)", origin,
                     (int)info->n_missing, info->missing[0].op, info->missing[0].first_node,
                     info->missing[0].why[0] ? ": " : "", info->missing[0].why);
        goto fail;
    }
    if (!fold)
        for (int32_t i = 0; i < g->n_tensors; i++) free(im.t[i].fold);
    free(im.t);
    return im.c;
fail:
    if (im.t && !fold)
        for (int32_t i = 0; i < g->n_tensors; i++) free(im.t[i].fold);
    free(im.t);
    par_case_destroy(im.c);
    return NULL;
}

par_case *par_tflite_import_model(const par_tfl_model *m, const char *id, const char *origin,
                                  const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    if (info) memset(info, 0, sizeof *info);
    if (m->n_subgraphs < 1) return par_msgf(msg, PAR_ERROR, "%s: no subgraph", origin), NULL;
    if (info) info->n_nodes = m->subgraphs[0].n_ops;
    return import_sub(m, &m->subgraphs[0], id, origin, o, info, msg, NULL);
}

par_case *par_tflite_import(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    char id[256];
    if (info) memset(info, 0, sizeof *info);
    par_tfl_model *m = par_tfl_load(path, msg);
    if (!m) return NULL;
    par_case *c = par_tflite_import_model(m, base_name(path, id, sizeof id), path, o, info, msg);
    par_tfl_free(m);
    return c;
}

/* ---- one case per distinct op ---------------------------------------------------------------------------------- */

/* The identity of an op for de-duplication: code, input shapes and types, options. */
static void op_key(const par_tfl_model *m, const par_tfl_subgraph *g, const par_tfl_op *op, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "%d", (int)m->opcodes[op->opcode_index].builtin);
    for (int32_t i = 0; i < op->n_inputs && k < len; i++) {
        const par_tfl_tensor *t = op->inputs[i] >= 0 ? &g->tensors[op->inputs[i]] : NULL;
        k += (size_t)snprintf(buf + k, len - k, "|%d:", t ? t->type : -1);
        for (int32_t j = 0; t && j < t->rank && k < len; j++) k += (size_t)snprintf(buf + k, len - k, "%d,", (int)t->shape[j]);
    }
    par_tfl_options o = op->opt;
    o.ints = NULL;
    const uint8_t *p = (const uint8_t *)&o;
    for (size_t i = 0; i < sizeof o && k + 3 < len; i++) k += (size_t)snprintf(buf + k, len - k, "%02x", p[i]);
    for (int32_t i = 0; i < op->opt.n_ints && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, ",%d", (int)op->opt.ints[i]);
}

par_status par_tflite_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                                 par_import_info *info, par_msg *msg)
{
    *cases = NULL;
    *n = 0;
    if (info) memset(info, 0, sizeof *info);
    par_tfl_model *m = par_tfl_load(path, msg);
    if (!m) return PAR_ERROR;
    const par_tfl_subgraph *g = &m->subgraphs[0];
    char base[200];
    base_name(path, base, sizeof base);
    if (info) info->n_nodes = g->n_ops;
    par_status st = PAR_OK;
    imp im;
    memset(&im, 0, sizeof im);
    im.m = m, im.g = g, im.msg = msg, im.origin = path, im.op = -1, im.info = info;
    im.t = calloc((size_t)g->n_tensors + 1, sizeof *im.t);
    float **fold = calloc((size_t)g->n_tensors + 1, sizeof *fold);
    char (*keys)[512] = calloc((size_t)g->n_ops + 1, sizeof *keys);
    *cases = calloc((size_t)g->n_ops + 1, sizeof **cases);
    if (!im.t || !fold || !keys || !*cases) {
        st = par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        goto done;
    }
    if (!fold_dequantize(&im)) {
        st = PAR_ERROR;
        goto done;
    }
    for (int32_t i = 0; i < g->n_tensors; i++) fold[i] = im.t[i].fold;
    for (int32_t k = 0; k < g->n_ops; k++) {
        const par_tfl_op *op = &g->ops[k];
        if (op->n_outputs < 1 || fold[op->outputs[0]]) continue;
        op_key(m, g, op, keys[k], sizeof keys[k]);
        int dup = 0;
        for (int32_t j = 0; j < k && !dup; j++) dup = !strcmp(keys[j], keys[k]);
        if (dup) continue;
        /* a subgraph of this one op: its non-constant inputs are the graph's inputs */
        par_tfl_subgraph one = *g;
        int32_t ins[64], n_in = 0;
        for (int32_t i = 0; i < op->n_inputs && n_in < 64; i++) {
            int32_t ti = op->inputs[i], dup_in = 0;
            if (ti < 0 || fold[ti] || (g->tensors[ti].buffer && g->tensors[ti].buffer < (uint32_t)m->n_buffers &&
                                       m->buffers[g->tensors[ti].buffer].size))
                continue;
            for (int32_t j = 0; j < n_in; j++) dup_in |= ins[j] == ti;
            if (!dup_in) ins[n_in++] = ti;
        }
        one.n_inputs = n_in, one.inputs = ins;
        one.n_outputs = op->n_outputs, one.outputs = op->outputs;
        one.n_ops = 1, one.ops = (par_tfl_op *)op;
        char id[300];
        snprintf(id, sizeof id, "%s:%d:%s", base, (int)k, opname(&im, op));
        par_import_info sub;
        memset(&sub, 0, sizeof sub);
        par_msg m2;
        par_case *c = import_sub(m, &one, id, path, o, &sub, &m2, fold);
        if (c) {
            (*cases)[(*n)++] = c;
        } else if (info) {
            if (sub.n_missing) {
                note_missing(&im, sub.missing[0].op, sub.missing[0].first_node, sub.missing[0].why);
            } else {
                char why[160];
                snprintf(why, sizeof why, "%s", m2.text);
                note_missing(&im, opname(&im, op), g->tensors[op->outputs[0]].name, why);
            }
        }
    }
done:
    if (fold)
        for (int32_t i = 0; i < g->n_tensors; i++) free(fold[i]);
    free(fold);
    free(keys);
    free(im.t);
    par_tfl_free(m);
    if (st != PAR_OK) {
        for (int32_t i = 0; i < *n; i++) par_case_destroy((*cases)[i]);
        free(*cases);
        *cases = NULL;
        *n = 0;
    }
    return st;
}
