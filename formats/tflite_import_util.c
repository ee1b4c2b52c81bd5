/*
 * tflite_import_util.c - the TFLite importer's building blocks, shared by its driver (tflite_import.c) and its op
 * families (tflite_import_ops.c): messages (an error, an op that does not map), permutations, tensors, constants in
 * the form their consumer asks for, a tensor's value in a given form (a permute node at most once per form), the
 * output's shape check, parity nodes with their fused activation.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/layout.h"
#include "formats/tflite_import_int.h"

/* ---- messages ------------------------------------------------------------------------------------------------- */

const char *opname(const imp *im, const par_tfl_op *op)
{
    const par_tfl_opcode *oc = &im->m->opcodes[op->opcode_index];
    return oc->builtin == PAR_TFL_OP_CUSTOM && oc->custom ? oc->custom : par_tfl_op_name(oc->builtin);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int fail(imp *im, const char *fmt, ...)
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
int unmapped(imp *im, const char *fmt, ...)
{
    if (im->unmapped) return 0;
    im->unmapped = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->why, sizeof im->why, fmt, ap);
    va_end(ap);
    return 0;
}

int builder(imp *im)
{
    if (im->c->status == PAR_OK) return 1;
    return fail(im, "%s", im->c->err.text);
}

/* ---- permutations ---------------------------------------------------------------------------------------------- */

void ident(int32_t r, int32_t *p)
{
    for (int32_t i = 0; i < r; i++) p[i] = i;
}

/* The stored form: NCHW for rank 4, else as TFLite has it. */
void stored(int32_t r, int32_t *p)
{
    static const int32_t nchw[4] = {0, 3, 1, 2};
    if (r == 4) memcpy(p, nchw, sizeof nchw);
    else ident(r, p);
}

void invert(int32_t r, const int32_t *p, int32_t *inv)
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

const par_tfl_tensor *T(const imp *im, int32_t ti) { return &im->g->tensors[ti]; }

/* The element count, saturated at 2^62 (a hostile shape must not overflow; check_dims refuses dims < 1). */
int64_t numel(const par_tfl_tensor *t)
{
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        int64_t d = t->shape[i] > 0 ? t->shape[i] : 0;
        n = d && n > (INT64_C(1) << 62) / d ? INT64_C(1) << 62 : n * d;
    }
    return n;
}

const par_tfl_buffer *tbuf(const imp *im, int32_t ti)
{
    uint32_t b = T(im, ti)->buffer;
    if (b == 0 || b >= (uint32_t)im->m->n_buffers) return NULL;
    const par_tfl_buffer *bf = &im->m->buffers[b];
    return bf->size ? bf : NULL;
}

int is_const(const imp *im, int32_t ti) { return ti >= 0 && (im->t[ti].fold || tbuf(im, ti)); }

/* A unique value name from a tensor's name and a suffix (valid per core/graph.c: no quotes, backslashes or control
 * characters, at most 200 bytes). Lives until the next call. */
const char *uname(imp *im, int32_t ti, const char *suffix)
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

par_dtype dtype_of(const par_tfl_tensor *t)
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

int quantized(const par_tfl_tensor *t) { return t->type == PAR_TFL_INT8 || t->type == PAR_TFL_UINT8; }

/* The output declaration of a tensor (a quantized one carries its parameters). */
par_out_spec spec(const imp *im, int32_t ti, const char *name)
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

float half_to_float(uint16_t h)
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
const uint8_t *const_bytes(imp *im, int32_t ti, size_t esz)
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
int32_t make_const(imp *im, int32_t ti, int32_t lift_rank, const int32_t *p, int32_t rank_out,
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

int check_dims(imp *im, int32_t ti)
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
int32_t cur(imp *im, int32_t ti, int32_t *pv)
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
int32_t get(imp *im, int32_t ti, const int32_t *p)
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

int32_t get_stored(imp *im, int32_t ti)
{
    int32_t p[MAXR];
    stored(T(im, ti)->rank, p);
    return get(im, ti, p);
}

int32_t get_logical(imp *im, int32_t ti)
{
    int32_t p[MAXR];
    ident(T(im, ti)->rank, p);
    return get(im, ti, p);
}

/* Record an op's output: value v holds tensor ti in form pv; its dims must be the model's. */
int set_out(imp *im, int32_t ti, int32_t v, const int32_t *pv)
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

const char *act_op(int32_t act)
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
int32_t emit(imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs,
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
int const_ints(imp *im, int32_t ti, int64_t *out, int64_t max, int64_t *n)
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
void same_pad(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *lo, int64_t *hi)
{
    int64_t out = (in + stride - 1) / stride, ext = (k - 1) * dil + 1;
    int64_t total = (out - 1) * stride + ext - in;
    if (total < 0) total = 0;
    *lo = total / 2;
    *hi = total - *lo;
}

/* Remove the stored positions `drop` (a mask over V's axes, each of size 1) with a reshape; the new pv. */
int32_t drop_axes(imp *im, int32_t v, int32_t r, const int32_t *pv, const int *drop, int32_t ti_out,
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
