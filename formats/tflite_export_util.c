/*
 * tflite_export_util.c - the TFLite exporter's building blocks, shared by its driver (tflite_export.c) and its op
 * writers (tflite_export_ops.c): buffers, tensors and their quantization, the NHWC form of a value, operators,
 * constant index tensors, TRANSPOSEs to and from parity's own order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/layout.h"
#include "formats/tflite_export_int.h"


#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int fail(ex *e, par_status st, const char *fmt, ...)
{
    if (e->st != PAR_OK) return 0;
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    e->st = st;
    if (e->node >= 0)
        par_msgf(e->msg, st, "node '%s' (%s): %s", e->g->nodes[e->node].name, e->g->nodes[e->node].op, why);
    else
        par_msgf(e->msg, st, "tflite export: %s", why);
    return 0;
}


static int grow(ex *e, void **p, int32_t *cap, int32_t n, size_t esz)
{
    if (n < *cap) return 1;
    int32_t nc = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, (size_t)nc * esz);
    if (!q) return fail(e, PAR_ERROR, "out of memory");
    memset((char *)q + (size_t)*cap * esz, 0, (size_t)(nc - *cap) * esz);
    *p = q;
    *cap = nc;
    return 1;
}


int32_t tfl_type(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return PAR_TFL_FLOAT32;
    case PAR_DTYPE_F16: return PAR_TFL_FLOAT16;
    case PAR_DTYPE_QS8: return PAR_TFL_INT8;
    case PAR_DTYPE_QU8: return PAR_TFL_UINT8;
    case PAR_DTYPE_I32: return PAR_TFL_INT32;
    case PAR_DTYPE_BOOL: return PAR_TFL_BOOL;
    default: return -1;
    }
}

int32_t buffer(ex *e, const void *data, size_t size)
{
    if (!grow(e, (void **)&e->b, &e->cap_b, e->n_b, sizeof *e->b)) return -1;
    par_tfl_buffer *b = &e->b[e->n_b];
    if (size) {
        uint8_t *d = par_tfl_alloc(e->m, size);
        if (!d) return fail(e, PAR_ERROR, "out of memory"), -1;
        memcpy(d, data, size);
        b->data = d;
        b->size = size;
    }
    return e->n_b++;
}

/* A new tensor; shape in TFLite order. */
int32_t tensor(ex *e, const char *name, int32_t type, int32_t rank, const int64_t *shape, int32_t buf)
{
    if (!grow(e, (void **)&e->t, &e->cap_t, e->n_t, sizeof *e->t)) return -1;
    par_tfl_tensor *t = &e->t[e->n_t];
    t->name = par_tfl_strdup(e->m, name);
    if (!t->name) return fail(e, PAR_ERROR, "out of memory"), -1;
    t->type = type;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++) t->shape[i] = (int32_t)shape[i];
    t->buffer = buf > 0 ? (uint32_t)buf : 0;
    return e->n_t++;
}

/* Quantization of value v onto tensor ti whose axis `axis` holds v's quantized axis. */
int quant(ex *e, int32_t ti, const par_value *v, int32_t axis)
{
    if (v->dtype != PAR_DTYPE_QS8 && v->dtype != PAR_DTYPE_QU8 && v->dtype != PAR_DTYPE_I32) return 1;
    if (v->dtype == PAR_DTYPE_I32 && v->scale == 0 && v->quant_axis < 0) return 1;
    par_tfl_quant *q = par_tfl_alloc(e->m, sizeof *q);
    int32_t n = v->quant_axis >= 0 ? (int32_t)v->dims[v->quant_axis] : 1;
    if (!q || !(q->scale = par_tfl_alloc(e->m, (size_t)n * 4)) || !(q->zero_point = par_tfl_alloc(e->m, (size_t)n * 8)))
        return fail(e, PAR_ERROR, "out of memory");
    q->n_scale = q->n_zero_point = n;
    for (int32_t i = 0; i < n; i++) q->scale[i] = v->quant_axis >= 0 ? v->channel_scales[i] : v->scale;
    q->zero_point[0] = v->quant_axis >= 0 ? 0 : v->zero_point;
    q->quantized_dimension = v->quant_axis >= 0 ? axis : 0;
    e->t[ti].quant = q;
    return 1;
}

/* A tensor for value vi in the form p (TFLite dims[j] = V.dims[p[j]]; data permuted for a constant). */
int32_t make_tensor(ex *e, int32_t vi, const int32_t *p, const char *suffix)
{
    const par_value *v = &e->g->values[vi];
    int32_t type = tfl_type(v->dtype), buf = 0;
    if (type < 0) return UNSUP("value '%s' of dtype %s", v->name, par_dtype_name(v->dtype)), -1;
    int64_t shape[MAXR];
    for (int32_t j = 0; j < v->rank; j++) shape[j] = v->dims[p[j]];
    if (v->kind == PAR_VALUE_CONST) {
        size_t esz = par_dtype_size(v->dtype), size = (size_t)v->numel * esz;
        void *d = malloc(size + 1);
        if (!d) return fail(e, PAR_ERROR, "out of memory"), -1;
        par_fmt_permute(v->data, d, esz, v->rank, v->dims, p);
        buf = buffer(e, d, size);
        free(d);
        if (buf < 0) return -1;
    }
    char name[300];
    snprintf(name, sizeof name, "%s%s", v->name, suffix);
    int32_t ti = tensor(e, name, type, v->rank, shape, buf);
    if (ti < 0) return -1;
    int32_t axis = 0;
    for (int32_t j = 0; j < v->rank; j++)
        if (p[j] == v->quant_axis) axis = j;
    return quant(e, ti, v, axis) ? ti : -1;
}

void fwd(int32_t r, int32_t *p)
{
    if (r == 4) memcpy(p, TO_NHWC, sizeof TO_NHWC);
    else
        for (int32_t i = 0; i < r; i++) p[i] = i;
}

/* The tensor of value vi: NHWC for rank 4. */
int32_t tv(ex *e, int32_t vi)
{
    if (e->tv[vi] >= 0) return e->tv[vi];
    int32_t p[MAXR];
    fwd(e->g->values[vi].rank, p);
    return e->tv[vi] = make_tensor(e, vi, p, "");
}

static int32_t opcode(ex *e, int32_t code)
{
    for (int32_t i = 0; i < e->n_codes; i++)
        if (e->codes[i].builtin == code) return i;
    if (!grow(e, (void **)&e->codes, &e->cap_codes, e->n_codes, sizeof *e->codes)) return -1;
    e->codes[e->n_codes].builtin = code;
    e->codes[e->n_codes].version = 1;
    return e->n_codes++;
}

par_tfl_op *op(ex *e, int32_t code, int32_t n_in, const int32_t *ins, int32_t out)
{
    for (int32_t i = 0; i < n_in; i++)
        if (ins[i] < -1 || (ins[i] == -1 && i == 0)) return NULL;
    if (out < 0 || e->st != PAR_OK) return NULL;
    int32_t oc = opcode(e, code);
    if (oc < 0 || !grow(e, (void **)&e->ops, &e->cap_ops, e->n_ops, sizeof *e->ops)) return NULL;
    par_tfl_op *o = &e->ops[e->n_ops++];
    const par_tfl_opmap *mp = par_tfl_opmap_code(code);
    o->opcode_index = (uint32_t)oc;
    o->options_type = mp ? mp->options_type : 0;
    par_tfl_options_default(&o->opt, o->options_type);
    o->inputs = par_tfl_alloc(e->m, (size_t)n_in * 4 + 1);
    o->outputs = par_tfl_alloc(e->m, 4);
    if (!o->inputs || !o->outputs) return fail(e, PAR_ERROR, "out of memory"), NULL;
    memcpy(o->inputs, ins, (size_t)n_in * 4);
    o->n_inputs = n_in;
    o->outputs[0] = out;
    o->n_outputs = 1;
    return o;
}

/* An int32 constant of rank 1 (or 2: [n/2, 2] for paddings). */
int32_t const_i32(ex *e, const char *name, int32_t n, const int64_t *vals, int pairs)
{
    int32_t d[2 * MAXR + 2];
    for (int32_t i = 0; i < n; i++) d[i] = (int32_t)vals[i];
    int32_t buf = buffer(e, d, (size_t)n * 4);
    int64_t shape[2] = {pairs ? n / 2 : n, 2};
    return buf < 0 ? -1 : tensor(e, name, PAR_TFL_INT32, pairs ? 2 : 1, shape, buf);
}

/* TRANSPOSE(x) into a new tensor of the given type/shape; returns it. */
int32_t transpose(ex *e, int32_t x, int32_t r, const int32_t *perm, const char *name)
{
    int64_t p[MAXR], shape[MAXR];
    for (int32_t i = 0; i < r; i++) p[i] = perm[i], shape[i] = e->t[x].shape[perm[i]];
    char pn[300];
    snprintf(pn, sizeof pn, "%s:perm", name);
    int32_t pt = const_i32(e, pn, r, p, 0);
    int32_t y = tensor(e, name, e->t[x].type, r, shape, 0);
    if (pt < 0 || y < 0) return -1;
    e->t[y].quant = e->t[x].quant;
    int32_t ins[2] = {x, pt};
    return op(e, PAR_TFL_OP_TRANSPOSE, 2, ins, y) ? y : -1;
}

/* Value vi in parity's own order (for ops that depend on memory order): a TRANSPOSE of its NHWC tensor. */
int32_t raw_in(ex *e, int32_t vi)
{
    const par_value *v = &e->g->values[vi];
    if (v->rank != 4) return tv(e, vi);
    if (e->raw[vi] >= 0) return e->raw[vi];
    char name[300];
    snprintf(name, sizeof name, "%s:raw", v->name);
    int32_t x = tv(e, vi);
    return x < 0 ? -1 : (e->raw[vi] = transpose(e, x, 4, TO_NCHW, name));
}

/* The tensor an op writes for output value vi in parity's own order; finish_raw writes the TRANSPOSE to NHWC. */
int32_t raw_out(ex *e, int32_t vi)
{
    const par_value *v = &e->g->values[vi];
    if (v->rank != 4) return tv(e, vi);
    int32_t id[4] = {0, 1, 2, 3};
    return make_tensor(e, vi, id, ":raw");
}

int finish_raw(ex *e, int32_t vi, int32_t r)
{
    const par_value *v = &e->g->values[vi];
    if (v->rank != 4 || r < 0) return r >= 0;
    int32_t y = transpose(e, r, 4, TO_NHWC, v->name);
    e->tv[vi] = y;
    return y >= 0;
}

/* ---- op families ------------------------------------------------------------------------------------------------ */
