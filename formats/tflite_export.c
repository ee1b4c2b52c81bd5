/*
 * tflite_export.c - a parity case as a TFLite model: the inverse of tflite_import.c through the same op table
 * (tflite.c), one subgraph, constants as buffers, the case's inputs as the model's inputs. This file is the driver
 * (tensors, buffers, quantization, operators, layouts, the model); the op writers are tflite_export_ops.c, and what
 * the two share is tflite_export_int.h.
 *
 * Layout. A parity value of rank 4 (logical NCHW) becomes a TFLite tensor of its NHWC shape; constants' data is
 * permuted accordingly (OIHW filters become OHWI, depthwise filters [C*m,1,kh,kw] become [1,kh,kw,C*m]). An op
 * whose result depends on memory order (reshape, flatten, linear and matmul on rank 4) is written between two
 * TRANSPOSEs: one to a tensor in parity's own order ("raw", [0,3,1,2]) and one back to NHWC ([0,2,3,1]); a reduce
 * without keepdims or a softmax over another axis than the last gets the TRANSPOSE that puts its axes where
 * parity has them. The importer turns a TRANSPOSE into a change of form, not a node, so these come back as
 * nothing: import(export(case)) gives back the case's graph (tests/test_tflite.c counts where it does not).
 *
 * Not expressible (PAR_UNSUPPORTED "node 'x' (op): reason"): ops without a TFLite builtin in the table, explicit
 * pool padding other than SAME's, average pooling that counts padding, ceil_mode, dilated pools, hardtanh other
 * than [-1, 1], elu with alpha != 1, reflect / replicate padding, linear_dynamic.
 *
 * Must not: write a model LiteRT would read differently from parity's graph; guess.
 */
#include <float.h>
#include <math.h>
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

static par_tfl_model *export_model(const par_graph_desc *g, const char *name, par_msg *msg, par_status *st)
{
    ex e;
    memset(&e, 0, sizeof e);
    e.g = g;
    e.msg = msg;
    e.node = -1;
    e.m = par_tfl_new();
    e.tv = malloc(((size_t)e.g->n_values + 1) * sizeof *e.tv);
    e.raw = malloc(((size_t)e.g->n_values + 1) * sizeof *e.raw);
    if (!e.m || !e.tv || !e.raw) {
        fail(&e, PAR_ERROR, "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < e.g->n_values; i++) e.tv[i] = e.raw[i] = -1;
    e.m->description = par_tfl_strdup(e.m, "parity");
    buffer(&e, NULL, 0); /* buffer 0: the empty sentinel */
    for (int32_t i = 0; i < e.g->n_inputs; i++) tv(&e, e.g->inputs[i]);
    for (int32_t k = 0; k < e.g->n_nodes && e.st == PAR_OK; k++) {
        e.node = k;
        const par_node *n = &e.g->nodes[k];
        if (n->n_outputs != 1) {
            fail(&e, PAR_UNSUPPORTED, "%d outputs", (int)n->n_outputs);
            break;
        }
        if (!par_tfx_node(&e, n) && e.st == PAR_OK) fail(&e, PAR_ERROR, "not written");
    }
    e.node = -1;
    if (e.st != PAR_OK) goto done;
    par_tfl_subgraph *s = par_tfl_alloc(e.m, sizeof *s);
    if (!s) goto oom;
    s->name = par_tfl_strdup(e.m, name ? name : "parity");
    s->n_inputs = e.g->n_inputs;
    s->n_outputs = e.g->n_outputs;
    s->inputs = par_tfl_alloc(e.m, (size_t)s->n_inputs * 4 + 1);
    s->outputs = par_tfl_alloc(e.m, (size_t)s->n_outputs * 4 + 1);
    if (!s->inputs || !s->outputs) goto oom;
    for (int32_t i = 0; i < s->n_inputs; i++) s->inputs[i] = e.tv[e.g->inputs[i]];
    for (int32_t i = 0; i < s->n_outputs; i++) s->outputs[i] = tv(&e, e.g->outputs[i]);
    if (e.st != PAR_OK) goto done;
    s->n_tensors = e.n_t, s->tensors = par_tfl_alloc(e.m, (size_t)e.n_t * sizeof *e.t + 1);
    s->n_ops = e.n_ops, s->ops = par_tfl_alloc(e.m, (size_t)e.n_ops * sizeof *e.ops + 1);
    e.m->n_buffers = e.n_b, e.m->buffers = par_tfl_alloc(e.m, (size_t)e.n_b * sizeof *e.b + 1);
    e.m->n_opcodes = e.n_codes, e.m->opcodes = par_tfl_alloc(e.m, (size_t)e.n_codes * sizeof *e.codes + 1);
    if (!s->tensors || !s->ops || !e.m->buffers || !e.m->opcodes) goto oom;
    if (e.n_t) memcpy(s->tensors, e.t, (size_t)e.n_t * sizeof *e.t);
    if (e.n_ops) memcpy(s->ops, e.ops, (size_t)e.n_ops * sizeof *e.ops);
    memcpy(e.m->buffers, e.b, (size_t)e.n_b * sizeof *e.b);
    if (e.n_codes) memcpy(e.m->opcodes, e.codes, (size_t)e.n_codes * sizeof *e.codes);
    e.m->n_subgraphs = 1;
    e.m->subgraphs = s;
    goto done;
oom:
    fail(&e, PAR_ERROR, "out of memory");
done:
    free(e.t);
    free(e.ops);
    free(e.b);
    free(e.codes);
    free(e.tv);
    free(e.raw);
    *st = e.st;
    if (e.st != PAR_OK) {
        par_tfl_free(e.m);
        return NULL;
    }
    return e.m;
}

par_tfl_model *par_tflite_export_model(const par_case *c, par_msg *msg)
{
    par_status st;
    return export_model(par_graph_desc_of(c->graph), par_graph_name(c->graph), msg, &st);
}

par_tfl_model *par_tflite_export_graph(const par_graph_desc *g, const char *name, par_status *st, par_msg *msg)
{
    return export_model(g, name, msg, st);
}

par_status par_tflite_export(const par_case *c, const char *path, par_msg *msg)
{
    par_status st;
    par_tfl_model *m = export_model(par_graph_desc_of(c->graph), par_graph_name(c->graph), msg, &st);
    if (!m) return st;
    size_t len;
    uint8_t *bytes = par_tfl_write(m, &len, msg);
    par_tfl_free(m);
    if (!bytes) return PAR_ERROR;
    /* atomically: a temporary file beside the target, then rename */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(bytes, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = 0;
    free(bytes);
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return par_msgf(msg, PAR_ERROR, "%s: cannot write", path);
    }
    return PAR_OK;
}
