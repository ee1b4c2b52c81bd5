/*
 * onnx_import.c - an ONNX model as a parity case: the driver. Initializers and Constant nodes become constants known
 * at import; graph inputs become case inputs (their data from the model's test data when asked, else generated);
 * each node is either folded (every input known at import and the op is shape arithmetic: Shape, Gather, Concat,
 * Unsqueeze, Cast, ...) or mapped by the op table (onnx_ops.c) onto parity nodes. Op types parity lacks are listed
 * (op, first node, count) before anything is built, so one import names all of them.
 *
 * Names: ONNX names may hold any bytes; parity's may not hold quotes, backslashes or control characters and are
 * at most 200 bytes, so a name is kept when it is valid and unused, else replaced by `<op>_<n>`.
 *
 * Must not: know an op's semantics (onnx_ops.c maps them); read anything but the model file and its test data.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/onnx_int.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------------------------------- */

int ox_unsupported(ox_imp *im, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->why, sizeof im->why, fmt, ap);
    va_end(ap);
    return OX_UNSUPPORTED;
}

int ox_error(ox_imp *im, const char *fmt, ...)
{
    char buf[PAR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const par_onnx_node *n = im->node;
    if (n)
        par_msgf(im->msg, PAR_ERROR, "%s: node '%.80s' (%.40s): %s", im->origin, n->name, n->op_type, buf);
    else
        par_msgf(im->msg, PAR_ERROR, "%s: %s", im->origin, buf);
    im->failed = 1;
    return OX_ERROR;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The value table
 * ------------------------------------------------------------------------------------------------------------- */

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static ox_val *lookup(ox_imp *im, const char *name)
{
    if (!im->hash_cap) return NULL;
    for (uint32_t i = hash_name(name) & (uint32_t)(im->hash_cap - 1);; i = (i + 1) & (uint32_t)(im->hash_cap - 1)) {
        int32_t k = im->hash[i];
        if (k < 0) return NULL;
        if (strcmp(im->vals[k].name, name) == 0) return &im->vals[k];
    }
}

static int rehash(ox_imp *im, int32_t cap)
{
    int32_t *h = malloc(sizeof *h * (size_t)cap);
    if (!h) return -1;
    for (int32_t i = 0; i < cap; i++) h[i] = -1;
    for (int32_t k = 0; k < im->n_vals; k++) {
        uint32_t i = hash_name(im->vals[k].name) & (uint32_t)(cap - 1);
        while (h[i] >= 0) i = (i + 1) & (uint32_t)(cap - 1);
        h[i] = k;
    }
    free(im->hash);
    im->hash = h;
    im->hash_cap = cap;
    return 0;
}

/* A new value named `name` (the model's string); a later definition of the same name replaces the earlier one. */
static ox_val *define(ox_imp *im, const char *name)
{
    ox_val *old = lookup(im, name);
    if (old) {
        free(old->ints);
        free(old->floats);
        free(old->q_scales);
        memset(old, 0, sizeof *old);
        old->name = name;
        old->v = -1;
        old->q_axis = -1;
        return old;
    }
    if (im->n_vals == im->cap_vals) {
        int32_t nc = im->cap_vals ? im->cap_vals * 2 : 256;
        ox_val *p = realloc(im->vals, sizeof *p * (size_t)nc);
        if (!p) return NULL;
        im->vals = p;
        im->cap_vals = nc;
    }
    if ((im->n_vals + 1) * 2 > im->hash_cap && rehash(im, im->hash_cap ? im->hash_cap * 2 : 512) != 0) return NULL;
    ox_val *x = &im->vals[im->n_vals];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->v = -1;
    x->q_axis = -1;
    uint32_t i = hash_name(name) & (uint32_t)(im->hash_cap - 1);
    while (im->hash[i] >= 0) i = (i + 1) & (uint32_t)(im->hash_cap - 1);
    im->hash[i] = im->n_vals++;
    return x;
}

static void free_vals(ox_imp *im)
{
    for (int32_t k = 0; k < im->n_vals; k++) {
        free(im->vals[k].ints);
        free(im->vals[k].floats);
        free(im->vals[k].q_scales);
    }
    free(im->vals);
    free(im->hash);
}

const par_value *ox_pv(const ox_imp *im, int32_t v)
{
    return &par_graph_desc_of(im->c->graph)->values[v];
}

static int is_float_dtype(int32_t dt)
{
    return dt == PAR_ONNX_FLOAT || dt == PAR_ONNX_FLOAT16 || dt == PAR_ONNX_DOUBLE || dt == PAR_ONNX_BFLOAT16;
}

static int is_int_dtype(int32_t dt)
{
    switch (dt) {
    case PAR_ONNX_UINT8: case PAR_ONNX_INT8: case PAR_ONNX_UINT16: case PAR_ONNX_INT16: case PAR_ONNX_INT32:
    case PAR_ONNX_INT64: case PAR_ONNX_BOOL: case PAR_ONNX_UINT32: case PAR_ONNX_UINT64:
        return 1;
    default:
        return 0;
    }
}

static float f16_to_f32(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023u;
    float f;
    if (e == 0) f = ldexpf((float)m, -24);
    else if (e == 31) f = m ? NAN : INFINITY;
    else f = ldexpf((float)(m | 1024u), (int)e - 25);
    return s ? -f : f;
}

/* Decode an ONNX tensor's data into a constant value's ints or floats. */
int ox_load_tensor(ox_imp *im, ox_val *x, const par_onnx_tensor *t)
{
    x->dtype = t->dtype;
    x->rank = t->rank;
    memcpy(x->dims, t->dims, sizeof x->dims);
    x->numel = t->numel;
    x->is_const = 1;
    x->raw = t->data;
    if (t->external) return ox_unsupported(im, "tensor '%.60s' keeps its data in an external file", t->name);
    if (t->numel > 0 && !t->data) return ox_unsupported(im, "tensor '%.60s' of type %s", t->name,
                                                         par_onnx_dtype_name(t->dtype));
    size_t n = (size_t)(t->numel > 0 ? t->numel : 1);
    const uint8_t *d = t->data;
    if (is_float_dtype(t->dtype)) {
        x->floats = malloc(sizeof(float) * n);
        if (!x->floats) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < t->numel; i++) {
            switch (t->dtype) {
            case PAR_ONNX_FLOAT: memcpy(&x->floats[i], d + 4 * i, 4); break;
            case PAR_ONNX_DOUBLE: { double v; memcpy(&v, d + 8 * i, 8); x->floats[i] = (float)v; break; }
            case PAR_ONNX_FLOAT16: { uint16_t h; memcpy(&h, d + 2 * i, 2); x->floats[i] = f16_to_f32(h); break; }
            default: { uint16_t h; memcpy(&h, d + 2 * i, 2); uint32_t b = (uint32_t)h << 16; memcpy(&x->floats[i], &b, 4); }
            }
        }
    } else if (is_int_dtype(t->dtype)) {
        x->ints = malloc(sizeof(int64_t) * n);
        if (!x->ints) return ox_error(im, "out of memory");
        for (int64_t i = 0; i < t->numel; i++) {
            int64_t v = 0;
            switch (t->dtype) {
            case PAR_ONNX_UINT8: case PAR_ONNX_BOOL: v = d[i]; break;
            case PAR_ONNX_INT8: v = (int8_t)d[i]; break;
            case PAR_ONNX_UINT16: { uint16_t u; memcpy(&u, d + 2 * i, 2); v = u; break; }
            case PAR_ONNX_INT16: { int16_t u; memcpy(&u, d + 2 * i, 2); v = u; break; }
            case PAR_ONNX_INT32: { int32_t u; memcpy(&u, d + 4 * i, 4); v = u; break; }
            case PAR_ONNX_UINT32: { uint32_t u; memcpy(&u, d + 4 * i, 4); v = u; break; }
            default: memcpy(&v, d + 8 * i, 8); break;
            }
            x->ints[i] = v;
        }
    } else {
        return ox_unsupported(im, "tensor '%.60s' of type %s", t->name, par_onnx_dtype_name(t->dtype));
    }
    return OX_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The node being mapped
 * ------------------------------------------------------------------------------------------------------------- */

ox_val *ox_in(ox_imp *im, int32_t i)
{
    const par_onnx_node *n = im->node;
    if (i < 0 || i >= n->n_inputs || !n->inputs[i][0]) return NULL;
    if (im->fused && i < 8 && im->in_override[i]) return im->in_override[i];
    return lookup(im, n->inputs[i]);
}

int32_t ox_n_in(const ox_imp *im)
{
    int32_t k = im->node->n_inputs;
    while (k > 0 && !im->node->inputs[k - 1][0]) k--;
    return k;
}

const par_onnx_attr *ox_attr(const ox_imp *im, const char *name)
{
    for (int32_t i = 0; i < im->node->n_attrs; i++)
        if (strcmp(im->node->attrs[i].name, name) == 0) return &im->node->attrs[i];
    return NULL;
}

int64_t ox_attr_i(const ox_imp *im, const char *name, int64_t def)
{
    const par_onnx_attr *a = ox_attr(im, name);
    return a && a->type == PAR_ONNX_ATTR_INT ? a->i : def;
}

double ox_attr_f(const ox_imp *im, const char *name, double def)
{
    const par_onnx_attr *a = ox_attr(im, name);
    if (!a) return def;
    if (a->type == PAR_ONNX_ATTR_FLOAT) return a->f;
    if (a->type == PAR_ONNX_ATTR_INT) return (double)a->i;
    return def;
}

const char *ox_attr_s(const ox_imp *im, const char *name, const char *def)
{
    const par_onnx_attr *a = ox_attr(im, name);
    return a && a->type == PAR_ONNX_ATTR_STRING && a->s ? a->s : def;
}

int32_t ox_attr_ints(const ox_imp *im, const char *name, int64_t *out, int32_t max)
{
    const par_onnx_attr *a = ox_attr(im, name);
    if (!a || a->type != PAR_ONNX_ATTR_INTS) return -1;
    int32_t n = a->n < max ? a->n : max;
    for (int32_t i = 0; i < n; i++) out[i] = a->ints[i];
    return a->n;
}

int32_t ox_attr_floats(const ox_imp *im, const char *name, double *out, int32_t max)
{
    const par_onnx_attr *a = ox_attr(im, name);
    if (!a || a->type != PAR_ONNX_ATTR_FLOATS) return -1;
    int32_t n = a->n < max ? a->n : max;
    for (int32_t i = 0; i < n; i++) out[i] = a->floats[i];
    return a->n;
}

int32_t ox_const_ints(ox_imp *im, ox_val *x, int64_t *out, int32_t max)
{
    if (!x) return -1;
    if (!x->is_const) return ox_unsupported(im, "input '%.60s' is computed at run time, not a constant", x->name), -1;
    if (x->numel > max) return ox_unsupported(im, "constant '%.60s' has too many elements", x->name), -1;
    for (int64_t i = 0; i < x->numel; i++) {
        if (x->ints) out[i] = x->ints[i];
        else if (x->floats) out[i] = (int64_t)x->floats[i];
        else return ox_unsupported(im, "constant '%.60s' has no data", x->name), -1;
    }
    return (int32_t)x->numel;
}

int32_t ox_const_floats(ox_imp *im, ox_val *x, double *out, int32_t max)
{
    if (!x) return -1;
    if (!x->is_const) return ox_unsupported(im, "input '%.60s' is computed at run time, not a constant", x->name), -1;
    if (x->numel > max) return ox_unsupported(im, "constant '%.60s' has too many elements", x->name), -1;
    for (int64_t i = 0; i < x->numel; i++) {
        if (x->floats) out[i] = x->floats[i];
        else if (x->ints) out[i] = (double)x->ints[i];
        else return ox_unsupported(im, "constant '%.60s' has no data", x->name), -1;
    }
    return (int32_t)x->numel;
}

/* A parity name for an ONNX name: the name itself when valid and unused, else `<base>_<n>`. */
static const char *pname(ox_imp *im, const char *name, const char *base, char *buf, size_t len)
{
    int ok = name && *name && strlen(name) <= 120;
    for (const char *p = name; ok && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '\'' || *p == '"' || *p == '\\') ok = 0;
    if (ok && par_graph_find_value(im->c->graph, name) < 0) return name;
    do {
        snprintf(buf, len, "%.60s_%d", base, (int)++im->serial);
    } while (par_graph_find_value(im->c->graph, buf) >= 0);
    return buf;
}

static par_dtype parity_dtype(const ox_val *x)
{
    switch (x->dtype) {
    case PAR_ONNX_FLOAT: case PAR_ONNX_DOUBLE: case PAR_ONNX_BFLOAT16: return PAR_DTYPE_F32;
    case PAR_ONNX_FLOAT16: return PAR_DTYPE_F16;
    case PAR_ONNX_BOOL: return PAR_DTYPE_BOOL;
    case PAR_ONNX_UINT8: return x->quantized ? PAR_DTYPE_QU8 : PAR_DTYPE_INVALID;
    case PAR_ONNX_INT8: return x->quantized ? PAR_DTYPE_QS8 : PAR_DTYPE_INVALID;
    case PAR_ONNX_INT32: case PAR_ONNX_INT64: return PAR_DTYPE_I32;
    default: return PAR_DTYPE_INVALID;
    }
}

static uint16_t f32_to_f16(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    uint32_t s = (b >> 16) & 0x8000u, e = (b >> 23) & 255u, m = b & 0x7fffffu;
    if (e == 255) return (uint16_t)(s | 0x7c00u | (m ? 0x200u : 0));
    int ex = (int)e - 127 + 15;
    if (ex >= 31) return (uint16_t)(s | 0x7c00u);
    if (ex <= 0) {
        if (ex < -10) return (uint16_t)s;
        m |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - ex), r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(s | r);
    }
    uint32_t r = ((uint32_t)ex << 10) | (m >> 13), rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++;
    return (uint16_t)(s | r);
}

/* A constant's elements in a parity dtype (malloc'ed), or NULL with why set. */
static void *const_bytes(ox_imp *im, const ox_val *x, par_dtype dt)
{
    size_t n = (size_t)(x->numel > 0 ? x->numel : 1);
    void *out = malloc(n * par_dtype_size(dt));
    if (!out) return ox_error(im, "out of memory"), NULL;
    for (int64_t i = 0; i < x->numel; i++) {
        double v = x->floats ? x->floats[i] : (double)x->ints[i];
        switch (dt) {
        case PAR_DTYPE_F32: { float f = x->floats ? x->floats[i] : (float)x->ints[i]; memcpy((char *)out + 4 * i, &f, 4); break; }
        case PAR_DTYPE_F16: { uint16_t h = f32_to_f16(x->floats ? x->floats[i] : (float)v); memcpy((char *)out + 2 * i, &h, 2); break; }
        case PAR_DTYPE_I32:
            if (x->ints[i] < INT32_MIN || x->ints[i] > INT32_MAX) {
                free(out);
                ox_unsupported(im, "constant '%.60s' holds %lld, beyond 32 bits (parity has no 64-bit integers)",
                               x->name, (long long)x->ints[i]);
                return NULL;
            }
            { int32_t k = (int32_t)x->ints[i]; memcpy((char *)out + 4 * i, &k, 4); }
            break;
        case PAR_DTYPE_BOOL: ((uint8_t *)out)[i] = x->ints[i] != 0; break;
        case PAR_DTYPE_QU8: ((uint8_t *)out)[i] = (uint8_t)x->ints[i]; break;
        case PAR_DTYPE_QS8: ((int8_t *)out)[i] = (int8_t)x->ints[i]; break;
        default: free(out); return ox_unsupported(im, "constant '%.60s' of type %s", x->name,
                                                  par_onnx_dtype_name(x->dtype)), NULL;
        }
    }
    return out;
}

static int rank_ok(ox_imp *im, const ox_val *x)
{
    if (x->rank > PAR_MAX_RANK) return ox_unsupported(im, "'%.60s' has rank %d (parity: at most %d)", x->name,
                                                      (int)x->rank, PAR_MAX_RANK), 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] < 1) return ox_unsupported(im, "'%.60s' has a zero-sized dimension", x->name), 0;
    return 1;
}

static int32_t emit_named(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs,
                          const par_attr *attrs, const char *oname, const char *nodename, const par_out_spec *spec);

/* A pending DequantizeLinear made: of an int32 constant (a bias outside a fused op) as the float constant it
 * means, else as parity's dequantize node. */
static int32_t make_dequantize(ox_imp *im, ox_val *x)
{
    ox_val *src = lookup(im, x->dq_of);
    if (!src) return ox_unsupported(im, "'%.60s' is not available", x->dq_of), -1;
    if (src->is_const && src->dtype == PAR_ONNX_INT32 && src->ints) {
        float *f = malloc(sizeof(float) * (size_t)(src->numel ? src->numel : 1));
        if (!f) return ox_error(im, "out of memory"), -1;
        int64_t inner = 1;
        if (src->q_axis >= 0)
            for (int32_t i = src->q_axis + 1; i < src->rank; i++) inner *= src->dims[i];
        for (int64_t i = 0; i < src->numel; i++) {
            float sc = src->q_axis >= 0 ? src->q_scales[(i / inner) % src->dims[src->q_axis]] : src->scale;
            f[i] = (float)((double)src->ints[i] * (double)sc);
        }
        x->floats = f;
        x->is_const = 1;
        x->dq_of = NULL;
        return ox_tensor(im, x);
    }
    int32_t q = ox_tensor(im, src);
    if (q < 0) return -1;
    par_out_spec spec = {.dtype = PAR_DTYPE_F32};
    char buf[128];
    int32_t v = emit_named(im, "dequantize", 1, &q, 0, NULL, pname(im, x->name, "dequantize", buf, sizeof buf), NULL,
                           &spec);
    if (v < 0) return -1;
    x->dq_of = NULL;
    x->v = v;
    return v;
}

int32_t ox_tensor(ox_imp *im, ox_val *x)
{
    if (!x) return ox_unsupported(im, "an input is missing"), -1;
    if (x->v >= 0) return x->v;
    if (x->dq_of) return make_dequantize(im, x);
    if (!x->is_const) return ox_unsupported(im, "'%.60s' is not available", x->name), -1;
    if (!rank_ok(im, x)) return -1;
    par_dtype dt = parity_dtype(x);
    if (dt == PAR_DTYPE_INVALID)
        return ox_unsupported(im, "constant '%.60s' of type %s outside quantization", x->name,
                              par_onnx_dtype_name(x->dtype)), -1;
    void *bytes = const_bytes(im, x, dt);
    if (!bytes) return -1;
    char buf[128];
    const char *nm = pname(im, x->name, "const", buf, sizeof buf);
    int32_t v = par_case_const_data(im->c, nm, dt, x->rank, x->dims, bytes);
    free(bytes);
    if (v < 0) return ox_error(im, "constant '%.60s': %s", x->name, im->c->err.text), -1;
    if (x->quantized) {
        if (x->q_axis >= 0 && dt == PAR_DTYPE_QS8) {
            par_msg m;
            if (par_graph_set_channel_quant(im->c->graph, v, x->q_axis, x->q_scales, x->dims[x->q_axis], &m) != PAR_OK)
                return ox_unsupported(im, "per-axis quantization of '%.60s': %s", x->name, m.text), -1;
        } else {
            par_case_quant(im->c, v, x->scale, x->zero_point);
            if (im->c->status != PAR_OK) return ox_error(im, "%s", im->c->err.text), -1;
        }
    }
    x->v = v;
    return v;
}

static ox_val *out_val(ox_imp *im, int32_t k)
{
    const par_onnx_node *n = im->node;
    if (k == 0 && im->fused && im->fuse_out) return define(im, im->fuse_out);
    if (k >= n->n_outputs || !n->outputs[k][0]) return NULL;
    return define(im, n->outputs[k]);
}

ox_val *ox_out(ox_imp *im, int32_t k) { return out_val(im, k); }

static void set_shape_from(ox_val *x, const par_value *pv)
{
    x->rank = pv->rank;
    for (int32_t i = 0; i < pv->rank; i++) x->dims[i] = pv->dims[i];
    x->numel = pv->numel;
    switch (pv->dtype) {
    case PAR_DTYPE_F16: x->dtype = PAR_ONNX_FLOAT16; break;
    case PAR_DTYPE_QU8: x->dtype = PAR_ONNX_UINT8; break;
    case PAR_DTYPE_QS8: x->dtype = PAR_ONNX_INT8; break;
    case PAR_DTYPE_I32: x->dtype = PAR_ONNX_INT32; break;
    case PAR_DTYPE_BOOL: x->dtype = PAR_ONNX_BOOL; break;
    default: x->dtype = PAR_ONNX_FLOAT; break;
    }
    if (pv->dtype == PAR_DTYPE_QU8 || pv->dtype == PAR_DTYPE_QS8) {
        x->quantized = 1;
        x->scale = pv->scale;
        x->zero_point = pv->zero_point;
    }
}

static int32_t emit_named(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs,
                          const par_attr *attrs, const char *oname, const char *nodename, const par_out_spec *spec)
{
    par_out_spec s = spec ? *spec : (par_out_spec){0};
    s.name = oname;
    /* node names live in their own namespace in parity's graph; avoid clashes with the value just named */
    if (nodename && strcmp(nodename, oname) == 0) nodename = NULL;
    par_msg m;
    int32_t node = par_graph_add_node(im->c->graph, op, nodename, n_in, ins, n_attrs, attrs, &s, &m);
    if (node < 0 && nodename) node = par_graph_add_node(im->c->graph, op, NULL, n_in, ins, n_attrs, attrs, &s, &m);
    if (node < 0) return ox_unsupported(im, "%s", m.text), -1;
    return par_graph_desc_of(im->c->graph)->nodes[node].outputs[0];
}

int32_t ox_emit(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs,
                int32_t k, const par_out_spec *spec)
{
    const par_onnx_node *n = im->node;
    const char *oname = k >= 0 && k < n->n_outputs && n->outputs[k][0] ? n->outputs[k] : NULL;
    if (k == 0 && im->fused && im->fuse_out) {
        oname = im->fuse_out;
        spec = &im->fuse_spec;
    }
    char vbuf[128], nbuf[128];
    const char *vname = pname(im, oname, n->op_type, vbuf, sizeof vbuf);
    const char *nodename = oname && n->name[0] ? pname(im, n->name, n->op_type, nbuf, sizeof nbuf) : NULL;
    int32_t v = emit_named(im, op, n_in, ins, n_attrs, attrs, vname, nodename, spec);
    if (v < 0) return -1;
    if (oname) {
        ox_val *x = out_val(im, k);
        if (!x) return ox_error(im, "out of memory"), -1;
        x->v = v;
        set_shape_from(x, ox_pv(im, v));
    }
    return v;
}

int ox_alias(ox_imp *im, int32_t k, int32_t v)
{
    ox_val *x = out_val(im, k);
    if (!x) return OX_OK;
    x->v = v;
    set_shape_from(x, ox_pv(im, v));
    return OX_OK;
}

int ox_fold(ox_imp *im, int32_t k, int32_t dtype, int32_t rank, const int64_t *dims, int64_t *ints, float *floats)
{
    ox_val *x = out_val(im, k);
    if (!x) {
        free(ints);
        free(floats);
        return OX_OK;
    }
    x->dtype = dtype;
    x->rank = rank;
    x->numel = 1;
    for (int32_t i = 0; i < rank; i++) {
        x->dims[i] = dims[i];
        x->numel *= dims[i];
    }
    x->is_const = 1;
    x->ints = ints;
    x->floats = floats;
    for (int32_t i = 0; i < im->node->n_inputs; i++) {
        ox_val *in = im->node->inputs[i][0] ? lookup(im, im->node->inputs[i]) : NULL;
        if (in && in->from_data) x->from_data = 1;
    }
    return OX_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The walk
 * ------------------------------------------------------------------------------------------------------------- */

static void note_missing(ox_imp *im, const par_onnx_node *n, const char *why)
{
    par_import_info *info = im->info;
    char op[64];
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) snprintf(op, sizeof op, "%.30s:%.30s", n->domain, n->op_type);
    else snprintf(op, sizeof op, "%.60s", n->op_type);
    for (int32_t i = 0; i < info->n_missing; i++)
        if (strcmp(info->missing[i].op, op) == 0) {
            info->missing[i].count++;
            return;
        }
    if (info->n_missing == PAR_IMPORT_MAX_MISSING) return;
    par_import_missing *e = &info->missing[info->n_missing++];
    snprintf(e->op, sizeof e->op, "%s", op);
    snprintf(e->first_node, sizeof e->first_node, "%.120s", n->name[0] ? n->name : (n->n_outputs ? n->outputs[0] : ""));
    snprintf(e->why, sizeof e->why, "%s", why ? why : "");
    e->count = 1;
}

static int node_foldable(ox_imp *im, const par_onnx_node *n)
{
    /* a shape is known at import whatever computes the tensor */
    if ((strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0) && n->n_inputs >= 1) {
        ox_val *x = lookup(im, n->inputs[0]);
        return x && (x->is_const || x->v >= 0 || x->rank > 0);
    }
    if (!par_onnx_op_foldable(n->op_type)) return 0;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (!n->inputs[i][0]) continue;
        ox_val *x = lookup(im, n->inputs[i]);
        if (!x || !x->is_const || x->v >= 0) return 0;
    }
    return 1;
}

/* A test data set's tensors: files input_0.pb, input_1.pb, ... (prefix "input") of folder dir. */
static par_onnx_model *load_pb(const char *dir, const char *prefix, int32_t k, par_msg *msg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, (int)k);
    struct stat st;
    if (stat(path, &st) != 0) return NULL;
    return par_onnx_tensor_load(path, msg);
}

static int dims_from_shapes(ox_imp *im, const char *spec, const char *name, ox_val *x)
{
    /* spec: "name=1,3,224,224;other=..." */
    size_t ln = strlen(name);
    for (const char *p = spec; p && *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > ln && strncmp(p, name, ln) == 0 && p[ln] == '=') {
            int32_t r = 0;
            const char *q = p + ln + 1;
            while (q < p + len && r < PAR_ONNX_MAX_RANK) {
                char *e;
                long long d = strtoll(q, &e, 10);
                if (e == q || d < 1) return ox_error(im, "--shape %.60s: bad dimension", name);
                x->dims[r++] = d;
                q = *e == ',' ? e + 1 : e;
                if (*e != ',' ) break;
            }
            x->rank = r;
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

static int make_input(ox_imp *im, const par_onnx_value_info *vi, const par_onnx_model *td)
{
    ox_val *x = define(im, vi->name);
    if (!x) return ox_error(im, "out of memory");
    x->dtype = vi->elem_type;
    if (td) {
        const par_onnx_tensor *t = &td->graph.initializers[0];
        x->rank = t->rank;
        memcpy(x->dims, t->dims, sizeof x->dims);
        if (t->dtype != vi->elem_type && vi->elem_type) return ox_error(im, "input '%.60s': test data is %s, the graph says %s",
                                                                       vi->name, par_onnx_dtype_name(t->dtype),
                                                                       par_onnx_dtype_name(vi->elem_type));
        x->dtype = t->dtype;
    } else if (!dims_from_shapes(im, im->c->description, vi->name, x)) {
        if (im->failed) return OX_ERROR;
        if (vi->rank < 0) return ox_unsupported(im, "input '%.60s' has no shape (give it with --shape)", vi->name);
        x->rank = vi->rank;
        for (int32_t i = 0; i < vi->rank; i++) {
            x->dims[i] = vi->dims[i];
            if (x->dims[i] < 0 && i == 0) x->dims[i] = 1; /* a symbolic batch: 1 */
            if (x->dims[i] < 0)
                return ox_unsupported(im, "input '%.60s' dimension %d is symbolic ('%.30s'): give the shape with "
                                      "--shape %.60s=D0,D1,...", vi->name, (int)i,
                                      vi->dim_params[i] ? vi->dim_params[i] : "?", vi->name);
        }
    }
    x->numel = 1;
    for (int32_t i = 0; i < x->rank; i++) x->numel *= x->dims[i];
    if (td) {
        /* the test's inputs are data known at import: a parameter input (axes, shape, scales) reads them; a tensor
         * input becomes a parity input with that data (an int64 one, which parity cannot take, a constant) */
        if (ox_load_tensor(im, x, &td->graph.initializers[0]) != OX_OK) return OX_UNSUPPORTED;
        x->from_data = 1;
        if (x->dtype == PAR_ONNX_INT64 || x->numel == 0 || x->dtype == PAR_ONNX_UINT8 || x->dtype == PAR_ONNX_INT8)
            return OX_OK;
    }
    if (!rank_ok(im, x)) return OX_UNSUPPORTED;
    if (x->dtype == PAR_ONNX_UINT8 || x->dtype == PAR_ONNX_INT8) return OX_OK; /* made when its quantization is known */
    par_dtype dt = parity_dtype(x);
    if (dt == PAR_DTYPE_INVALID || x->dtype == PAR_ONNX_DOUBLE || x->dtype == PAR_ONNX_BFLOAT16 ||
        x->dtype == PAR_ONNX_INT64)
        return ox_unsupported(im, "input '%.60s' of type %s (parity's inputs: float, float16, int32, bool, and "
                              "quantized 8-bit)", vi->name, par_onnx_dtype_name(x->dtype));
    char buf[128];
    const char *nm = pname(im, vi->name, "input", buf, sizeof buf);
    int32_t v;
    if (td) {
        void *bytes = const_bytes(im, x, dt);
        if (!bytes) return OX_UNSUPPORTED;
        v = par_case_input_data(im->c, nm, dt, x->rank, x->dims, bytes);
        free(bytes);
    } else {
        par_gen g = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
        if (dt == PAR_DTYPE_BOOL) g.a = 0, g.b = 1;
        if (dt == PAR_DTYPE_I32) g.a = 0, g.b = 3;
        v = par_case_input(im->c, nm, dt, x->rank, x->dims, g);
    }
    if (v < 0) return ox_error(im, "input '%.60s': %s", vi->name, im->c->err.text);
    x->v = v;
    return OX_OK;
}

int32_t ox_quant_input(ox_imp *im, ox_val *x, float scale, int32_t zp)
{
    if (x->v >= 0 || (x->is_const && !x->from_data)) return -2;
    if (x->dtype != PAR_ONNX_UINT8 && x->dtype != PAR_ONNX_INT8) return -2;
    x->quantized = 1;
    x->scale = scale;
    x->zero_point = zp;
    par_dtype dt = parity_dtype(x);
    char buf[128];
    const char *nm = pname(im, x->name, "input", buf, sizeof buf);
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = dt == PAR_DTYPE_QU8 ? 0 : -128, .b = dt == PAR_DTYPE_QU8 ? 255 : 127};
    int32_t v;
    if (x->from_data) {
        void *bytes = const_bytes(im, x, dt);
        if (!bytes) return -1;
        v = par_case_input_data(im->c, nm, dt, x->rank, x->dims, bytes);
        free(bytes);
    } else {
        v = par_case_input(im->c, nm, dt, x->rank, x->dims, g);
    }
    if (v < 0) return ox_error(im, "input '%.60s': %s", x->name, im->c->err.text), -1;
    par_case_quant(im->c, v, scale, zp);
    x->v = v;
    return v;
}

ox_val *ox_lookup(ox_imp *im, const char *name) { return lookup(im, name); }

par_case *ox_import_model(const par_onnx_model *m, const ox_job *job, const par_import_opts *o,
                              par_import_info *info, par_msg *msg)
{
    const par_onnx_graph *g = &m->graph;
    const char *base = strrchr(job->path, '/');
    base = base ? base + 1 : job->path;
    char id[256];
    snprintf(id, sizeof id, "%s", base);
    char *dot = strrchr(id, '.');
    if (dot && strcmp(dot, ".onnx") == 0) *dot = 0;
    if (job->test_dir && strcmp(id, "model") == 0) {
        /* a node test: name the case after its folder */
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(base - job->path > 1 ? base - job->path - 1 : 0), job->path);
        const char *b2 = strrchr(tmp, '/');
        snprintf(id, sizeof id, "onnx:%s", b2 ? b2 + 1 : tmp);
    }
    par_case *c = par_case_create(id, o && o->seed ? o->seed : 1);
    if (!c) return par_msgf(msg, PAR_ERROR, "out of memory"), NULL;
    free(c->origin);
    c->origin = strdup(job->path);
    ox_imp im = {.c = c, .m = m, .origin = job->path, .info = info, .msg = msg, .skip_node = -1};
    im.opset = par_onnx_opset_version(m, "");
    /* the --shape spec travels in description until the case is built (then replaced) */
    c->description = job->shapes ? strdup(job->shapes) : NULL;
    int ok = 1;

    /* 1. op types parity lacks: all of them, before building anything */
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_onnx_node *n = &g->nodes[i];
        int std = !n->domain[0] || strcmp(n->domain, "ai.onnx") == 0;
        if (!std || !par_onnx_op_mapper(n->op_type)) {
            if (std && par_onnx_op_foldable(n->op_type)) continue; /* folded when its inputs are known */
            note_missing(&im, n, NULL);
        }
    }
    info->n_nodes = g->n_nodes;
    if (info->n_missing && !job->each) {
        par_msgf(msg, PAR_ERROR, "%s: %d op type%s parity lacks", job->path, (int)info->n_missing,
                 info->n_missing == 1 ? "" : "s");
        ok = 0;
    }

    /* 2. constants, then inputs */
    for (int32_t i = 0; ok && i < g->n_initializers; i++) {
        ox_val *x = define(&im, g->initializers[i].name);
        if (!x) ok = 0;
        else if (ox_load_tensor(&im, x, &g->initializers[i]) == OX_ERROR) ok = 0;
        else if (im.why[0]) x->is_const = 0, x->numel = 0, im.why[0] = 0; /* unusable: an error where it is used */
    }
    int32_t k_in = 0;
    for (int32_t i = 0; ok && i < g->n_inputs; i++) {
        const par_onnx_value_info *vi = &g->inputs[i];
        ox_val *x = lookup(&im, vi->name);
        if (x && x->is_const) continue; /* an initializer listed as input (IR < 4) */
        par_onnx_model *td = NULL;
        if (job->test_dir) {
            td = load_pb(job->test_dir, "input", k_in, msg);
            if (!td && msg->text[0]) ok = 0;
        }
        k_in++;
        if (!ok) break;
        im.node = NULL;
        int rc = make_input(&im, vi, td);
        par_onnx_free(td);
        if (rc == OX_ERROR) ok = 0;
        else if (rc == OX_UNSUPPORTED) {
            par_onnx_node fake = {.name = vi->name, .op_type = "(graph input)", .domain = ""};
            note_missing(&im, &fake, im.why);
            ok = 0;
            par_msgf(msg, PAR_ERROR, "%s: %s", job->path, im.why);
        }
    }
    free(c->description);
    c->description = NULL;

    /* 3. nodes */
    for (int32_t i = 0; ok && i < g->n_nodes; i++) {
        const par_onnx_node *n = &g->nodes[i];
        if (i == im.skip_node) continue; /* mapped with its producer (QDQ) */
        im.node = n;
        im.why[0] = 0;
        int rc;
        if (ox_qdq_try(&im, i) == OX_OK) continue;
        if (im.failed) {
            ok = 0;
            break;
        }
        im.node = n;
        im.why[0] = 0;
        if (job->each && !node_foldable(&im, n) && par_onnx_op_mapper(n->op_type) && job->each(job, &im) != 0) {
            ok = 0;
            break;
        }
        im.node = n;
        if (node_foldable(&im, n)) {
            rc = ox_fold_node(&im);
            if (rc == OX_OK) info->n_folded++;
            if (rc == OX_UNSUPPORTED && par_onnx_op_mapper(n->op_type)) im.why[0] = 0, rc = par_onnx_op_mapper(n->op_type)(&im);
        } else if (par_onnx_op_mapper(n->op_type)) {
            rc = par_onnx_op_mapper(n->op_type)(&im);
        } else {
            rc = ox_unsupported(&im, "its inputs are computed at run time (parity folds it only on constants)");
        }
        if (rc == OX_ERROR || im.failed) ok = 0;
        else if (rc == OX_UNSUPPORTED && job->each) {
            if (par_onnx_op_mapper(n->op_type)) note_missing(&im, n, im.why[0] ? im.why : "not expressible");
        } else if (rc == OX_UNSUPPORTED) {
            note_missing(&im, n, im.why[0] ? im.why : "not expressible");
            par_msgf(msg, PAR_ERROR, "%s: node '%.80s' (%.40s): %s", job->path, n->name, n->op_type, im.why);
            ok = 0;
        }
    }
    im.node = NULL;
    if (job->each) {
        /* the op cases went to job->each; the whole graph is not built */
        free_vals(&im);
        par_case_destroy(c);
        if (!ok) return NULL;
        return (par_case *)job; /* non-NULL: success */
    }

    /* 4. outputs */
    for (int32_t i = 0; ok && i < g->n_outputs; i++) {
        ox_val *x = lookup(&im, g->outputs[i].name);
        if (!x) {
            ok = 0;
            par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s' is never produced", job->path, g->outputs[i].name);
            break;
        }
        if (x->dq_of) {
            par_onnx_node fake = {.name = "", .op_type = "DequantizeLinear", .domain = ""};
            im.node = &fake;
            if (ox_tensor(&im, x) < 0) {
                par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s': %s", job->path, x->name, im.why);
                ok = 0;
                break;
            }
            im.node = NULL;
        }
        int32_t v = x->v;
        const par_value *pv = v >= 0 ? ox_pv(&im, v) : NULL;
        if (x->from_data && v < 0) {
            par_onnx_node fake = {.name = g->outputs[i].name, .op_type = "(graph output)", .domain = ""};
            note_missing(&im, &fake, "computed at import from int64 data alone (parity has no 64-bit integers)");
            par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s' is computed at import from int64 data alone",
                     job->path, x->name);
            ok = 0;
            break;
        }
        if (v < 0 || pv->kind != PAR_VALUE_NODE) {
            /* an input or a constant as output: a copy node (parity's outputs are node outputs) */
            par_onnx_node fake = {.name = "", .op_type = "Identity", .domain = "", .n_outputs = 0};
            im.node = &fake;
            int32_t src = ox_tensor(&im, x);
            if (src < 0) {
                note_missing(&im, &fake, im.why);
                par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s': %s", job->path, x->name, im.why);
                ok = 0;
                break;
            }
            const par_value *sv = ox_pv(&im, src);
            par_attr a = par_a_ints("shape", sv->rank, sv->dims);
            char buf[128];
            par_out_spec s = {.name = pname(&im, g->outputs[i].name, "output", buf, sizeof buf)};
            par_msg m2;
            int32_t node = par_graph_add_node(c->graph, "reshape", NULL, 1, &src, 1, &a, &s, &m2);
            im.node = NULL;
            if (node < 0) {
                ok = 0;
                par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s': %s", job->path, x->name, m2.text);
                break;
            }
            v = par_graph_desc_of(c->graph)->nodes[node].outputs[0];
        }
        par_case_output(c, v);
    }
    if (ok && g->n_outputs == 0) ok = 0, par_msgf(msg, PAR_ERROR, "%s: the graph has no outputs", job->path);
    if (ok && par_case_finish(c) != PAR_OK) {
        ok = 0;
        par_msgf(msg, PAR_ERROR, "%s: %s", job->path, c->err.text);
    }

    /* 5. the expected outputs of the test data */
    if (ok && job->test_dir) {
        const par_graph_desc *d = par_graph_desc_of(c->graph);
        c->expected = calloc((size_t)d->n_outputs, sizeof *c->expected);
        for (int32_t k = 0; c->expected && k < d->n_outputs; k++) {
            par_msg m2 = {{0}};
            par_onnx_model *td = load_pb(job->test_dir, "output", k, &m2);
            if (!td) {
                if (m2.text[0]) par_msgf(msg, PAR_ERROR, "%s", m2.text), ok = 0;
                break;
            }
            const par_value *pv = &d->values[d->outputs[k]];
            ox_val tmp = {.name = "expected", .q_axis = -1};
            tmp.quantized = pv->dtype == PAR_DTYPE_QU8 || pv->dtype == PAR_DTYPE_QS8;
            im.why[0] = 0;
            int rc = ox_load_tensor(&im, &tmp, &td->graph.initializers[0]);
            if (rc == OX_OK && tmp.numel != pv->numel) {
                par_msgf(msg, PAR_ERROR, "%s: output_%d.pb has %lld elements, the output %lld", job->test_dir, (int)k,
                         (long long)tmp.numel, (long long)pv->numel);
                ok = 0;
            } else if (rc == OX_OK) {
                c->expected[k] = const_bytes(&im, &tmp, pv->dtype);
            }
            free(tmp.ints);
            free(tmp.floats);
            par_onnx_free(td);
            if (!ok) break;
        }
    }
    free_vals(&im);
    if (!ok) {
        par_case_destroy(c);
        return NULL;
    }
    return c;
}

par_case *par_onnx_import_file(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    par_import_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    msg->text[0] = 0;
    par_onnx_model *m = par_onnx_load(path, msg);
    if (!m) return NULL;
    ox_job job = {.path = path, .shapes = o ? o->input_shapes : NULL};
    char dir[4096];
    if (o && o->test_data) {
        /* test_data_set_0 beside the model */
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s/test_data_set_0", slash ? (int)(slash - path) : 1, slash ? path : ".");
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) job.test_dir = dir;
    }
    par_case *c = ox_import_model(m, &job, o, info, msg);
    par_onnx_free(m);
    return c;
}
