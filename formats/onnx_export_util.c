/*
 * onnx_export_util.c - the ONNX exporter's building blocks, shared by its driver and op writers (onnx_export.c):
 * fresh names, initializers and constants, attributes, ONNX nodes, data types, a value's float name (after a
 * DequantizeLinear when quantized), a quantized node's bias and its output through QuantizeLinear.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_export_int.h"

int no(ex *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
    return EX_NO;
}

const char *fresh(ex *e, const char *base)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%.100s__%d", base, (int)++e->serial);
    return par_onnx_strdup(e->m, buf);
}

par_onnx_tensor *add_init(ex *e, const char *name, int32_t dtype, int32_t rank, const int64_t *dims,
                                 const void *data)
{
    if (e->n_inits == e->cap_inits) {
        int32_t nc = e->cap_inits ? e->cap_inits * 2 : 64;
        par_onnx_tensor *p = realloc(e->inits, sizeof *p * (size_t)nc);
        if (!p) return NULL;
        e->inits = p;
        e->cap_inits = nc;
    }
    par_onnx_tensor *t = &e->inits[e->n_inits++];
    memset(t, 0, sizeof *t);
    t->name = par_onnx_strdup(e->m, name);
    t->dtype = dtype;
    t->rank = rank;
    t->numel = 1;
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i], t->numel *= dims[i];
    size_t bytes = (size_t)t->numel * par_onnx_dtype_size(dtype);
    t->data = par_onnx_alloc(e->m, bytes ? bytes : 1);
    if (!t->data || !t->name) return NULL;
    if (bytes) memcpy(t->data, data, bytes);
    return t;
}

const char *const_i64(ex *e, int32_t n, const int64_t *v)
{
    const char *nm = fresh(e, "i64");
    int64_t d = n;
    return nm && add_init(e, nm, PAR_ONNX_INT64, 1, &d, v) ? nm : NULL;
}

const char *const_f32(ex *e, int32_t rank, const int64_t *dims, const float *v)
{
    const char *nm = fresh(e, "f32");
    return nm && add_init(e, nm, PAR_ONNX_FLOAT, rank, dims, v) ? nm : NULL;
}

const char *scalar_f32(ex *e, float v) { return const_f32(e, 0, NULL, &v); }

void at_i(ex *e, attrs *l, const char *name, int64_t v)
{
    par_onnx_attr *a = &l->a[l->n++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = PAR_ONNX_ATTR_INT;
    a->i = v;
}

void at_f(ex *e, attrs *l, const char *name, double v)
{
    par_onnx_attr *a = &l->a[l->n++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = PAR_ONNX_ATTR_FLOAT;
    a->f = (float)v;
}

void at_s(ex *e, attrs *l, const char *name, const char *s)
{
    par_onnx_attr *a = &l->a[l->n++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = PAR_ONNX_ATTR_STRING;
    a->s = par_onnx_strdup(e->m, s);
    a->s_len = strlen(s);
}

void at_ints(ex *e, attrs *l, const char *name, int32_t n, const int64_t *v)
{
    par_onnx_attr *a = &l->a[l->n++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = PAR_ONNX_ATTR_INTS;
    int64_t *c = par_onnx_alloc(e->m, sizeof(int64_t) * (size_t)(n ? n : 1));
    if (c && n) memcpy(c, v, sizeof(int64_t) * (size_t)n);
    a->ints = c;
    a->n = n;
}

/* Add an ONNX node; out NULL: a fresh name. Returns the (first) output's name. */
const char *node(ex *e, const char *op, int32_t n_in, const char *const *in, const char *out, const attrs *l)
{
    if (e->n_nodes == e->cap_nodes) {
        int32_t nc = e->cap_nodes ? e->cap_nodes * 2 : 64;
        par_onnx_node *p = realloc(e->nodes, sizeof *p * (size_t)nc);
        if (!p) return NULL;
        e->nodes = p;
        e->cap_nodes = nc;
    }
    par_onnx_node *n = &e->nodes[e->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op_type = op;
    n->domain = "";
    n->name = e->node && out && e->node->n_outputs && strcmp(out, e->g->values[e->node->outputs[0]].name) == 0
                  ? par_onnx_strdup(e->m, e->node->name) : fresh(e, op);
    const char **ins = par_onnx_alloc(e->m, sizeof(char *) * (size_t)(n_in ? n_in : 1));
    const char **outs = par_onnx_alloc(e->m, sizeof(char *));
    if (!ins || !outs || !n->name) return NULL;
    for (int32_t i = 0; i < n_in; i++) ins[i] = in[i] ? in[i] : "";
    outs[0] = out ? par_onnx_strdup(e->m, out) : fresh(e, op);
    n->inputs = ins;
    n->n_inputs = n_in;
    n->outputs = outs;
    n->n_outputs = 1;
    if (l && l->n) {
        n->attrs = par_onnx_alloc(e->m, sizeof(par_onnx_attr) * (size_t)l->n);
        if (!n->attrs) return NULL;
        memcpy(n->attrs, l->a, sizeof(par_onnx_attr) * (size_t)l->n);
        n->n_attrs = l->n;
    }
    return outs[0];
}

int32_t onnx_dtype(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return PAR_ONNX_FLOAT;
    case PAR_DTYPE_F16: return PAR_ONNX_FLOAT16;
    case PAR_DTYPE_QU8: return PAR_ONNX_UINT8;
    case PAR_DTYPE_QS8: return PAR_ONNX_INT8;
    case PAR_DTYPE_I32: return PAR_ONNX_INT32;
    case PAR_DTYPE_BOOL: return PAR_ONNX_BOOL;
    default: return PAR_ONNX_UNDEFINED;
    }
}

static int is_q(const par_value *v) { return v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8; }

/* The float name of value k (a quantized value: its DequantizeLinear's output, made once). */
const char *in_name(ex *e, int32_t k)
{
    if (k < 0) return "";
    if (e->fname[k]) return e->fname[k];
    const par_value *v = &e->g->values[k];
    if (!is_q(v)) return e->fname[k] = v->name;
    const char *s, *z;
    attrs l = {.n = 0};
    if (v->quant_axis >= 0) {
        int64_t n = v->dims[v->quant_axis];
        s = const_f32(e, 1, &n, v->channel_scales);
        uint8_t *zeros = calloc((size_t)n, 1);
        const char *zn = fresh(e, "zp");
        z = zeros && zn && add_init(e, zn, onnx_dtype(v->dtype), 1, &n, zeros) ? zn : NULL;
        free(zeros);
        at_i(e, &l, "axis", v->quant_axis);
    } else {
        s = scalar_f32(e, v->scale);
        uint8_t zb = (uint8_t)v->zero_point;
        const char *zn = fresh(e, "zp");
        z = zn && add_init(e, zn, onnx_dtype(v->dtype), 0, NULL, &zb) ? zn : NULL;
    }
    if (!s || !z) return NULL;
    const char *in[3] = {v->name, s, z};
    char buf[160];
    snprintf(buf, sizeof buf, "%.100s__dq", v->name);
    const par_node *keep = e->node;
    e->node = NULL;
    const char *r = node(e, "DequantizeLinear", 3, in, buf, &l);
    e->node = keep;
    return e->fname[k] = r;
}

const par_value *iv(ex *e, int32_t i)
{
    return i < e->node->n_inputs && e->node->inputs[i] >= 0 ? &e->g->values[e->node->inputs[i]] : NULL;
}

/* A quantized node's i32 bias: its integers dequantized with the scale they mean, the input's times the weight's
 * per output channel (docs/quantization.md), whatever scale the value declares. */
const char *bias_name(ex *e, int32_t kb)
{
    const par_value *b = &e->g->values[kb], *x = iv(e, 0), *w = iv(e, 1);
    int64_t n = b->numel;
    float *sc = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!sc || n < 1) return free(sc), NULL;
    int same = 1;
    for (int64_t c = 0; c < n; c++) {
        sc[c] = x->scale * (w->quant_axis >= 0 ? w->channel_scales[c % w->dims[w->quant_axis]] : w->scale);
        same &= sc[c] == sc[0];
    }
    int64_t dn = n;
    const char *s = same ? scalar_f32(e, sc[0]) : const_f32(e, 1, &dn, sc);
    free(sc);
    if (!s) return NULL;
    const char *in[2] = {b->name, s};
    char buf[160];
    snprintf(buf, sizeof buf, "%.100s__dq", b->name);
    attrs l = {.n = 0};
    if (!same) at_i(e, &l, "axis", 0);
    const par_node *keep = e->node;
    e->node = NULL;
    const char *r = node(e, "DequantizeLinear", 2, in, buf, &l);
    e->node = keep;
    return r;
}

/* The ONNX name node outputs go to: the value's own name, or for a quantized output a float name whose
 * QuantizeLinear then writes the value's name (finish_out). */
const char *out_name(ex *e)
{
    const par_value *v = &e->g->values[e->node->outputs[0]];
    if (!is_q(v)) return v->name;
    char buf[160];
    snprintf(buf, sizeof buf, "%.100s__f", v->name);
    return par_onnx_strdup(e->m, buf);
}

int finish_out(ex *e, const char *fl)
{
    if (!fl) return EX_ERR;
    int32_t k = e->node->outputs[0];
    const par_value *v = &e->g->values[k];
    if (!is_q(v)) return EX_OK;
    if (v->quant_axis >= 0) return no(e, "a per-channel quantized activation");
    const char *s = scalar_f32(e, v->scale);
    uint8_t zb = (uint8_t)v->zero_point;
    const char *zn = fresh(e, "zp");
    if (!s || !zn || !add_init(e, zn, onnx_dtype(v->dtype), 0, NULL, &zb)) return EX_ERR;
    const char *in[3] = {fl, s, zn};
    return node(e, "QuantizeLinear", 3, in, v->name, NULL) ? EX_OK : EX_ERR;
}
