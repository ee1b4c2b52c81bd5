/*
 * onnx_values.c - what the ONNX importer's driver (onnx_import.c) and its op table (onnx_ops.c) share: the table of
 * ONNX values (parity values, constants known at import, pending dequantizes), the node being mapped (its inputs,
 * attributes and outputs), constants turned into parity tensors, and parity nodes emitted for ONNX outputs. Names:
 * an ONNX name is kept when it is a valid, unused parity name, else replaced by `<op>_<n>`.
 *
 * Must not: walk a graph or know an op (the driver and the op table do).
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/layout.h"
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

ox_val *ox_lookup(ox_imp *im, const char *name)
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
ox_val *ox_define(ox_imp *im, const char *name)
{
    ox_val *old = ox_lookup(im, name);
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

void ox_free_vals(ox_imp *im)
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
    return ox_lookup(im, n->inputs[i]);
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
const char *ox_pname(ox_imp *im, const char *name, const char *base, char *buf, size_t len)
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

par_dtype ox_parity_dtype(const ox_val *x)
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
void *ox_const_bytes(ox_imp *im, const ox_val *x, par_dtype dt)
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

int ox_rank_ok(ox_imp *im, const ox_val *x)
{
    if (x->rank > PAR_MAX_RANK) return ox_unsupported(im, "'%.60s' has rank %d (parity: at most %d)", x->name,
                                                      (int)x->rank, PAR_MAX_RANK), 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->dims[i] < 1) return ox_unsupported(im, "'%.60s' has a zero-sized dimension", x->name), 0;
    return 1;
}


/* A pending DequantizeLinear made: of an int32 constant (a bias outside a fused op) as the float constant it
 * means, else as parity's dequantize node. */
static int32_t make_dequantize(ox_imp *im, ox_val *x)
{
    ox_val *src = ox_lookup(im, x->dq_of);
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
    int32_t v = ox_emit_named(im, "dequantize", 1, &q, 0, NULL, ox_pname(im, x->name, "dequantize", buf, sizeof buf), NULL,
                           &spec);
    if (v < 0) return -1;
    x->dq_of = NULL;
    x->v = v;
    return v;
}

/* A known value's data as a parity constant, or as a graph input (as_input): the value, -1 with why or msg set. */
static int32_t made_of(ox_imp *im, ox_val *x, par_dtype dt, int as_input)
{
    void *bytes = ox_const_bytes(im, x, dt);
    if (!bytes) return -1;
    char buf[128];
    const char *nm = ox_pname(im, x->name, as_input ? "input" : "const", buf, sizeof buf);
    int32_t v = as_input ? par_case_input_data(im->c, nm, dt, x->rank, x->dims, bytes)
                         : par_case_const_data(im->c, nm, dt, x->rank, x->dims, bytes);
    free(bytes);
    if (v < 0) return ox_error(im, "%s '%.60s': %s", as_input ? "input" : "constant", x->name, im->c->err.text), -1;
    return v;
}

int32_t ox_tensor(ox_imp *im, ox_val *x)
{
    if (!x) return ox_unsupported(im, "an input is missing"), -1;
    if (x->v >= 0) return x->v;
    if (x->dq_of) return make_dequantize(im, x);
    if (!x->is_const) return ox_unsupported(im, "'%.60s' is not available", x->name), -1;
    if (!ox_rank_ok(im, x)) return -1;
    par_dtype dt = ox_parity_dtype(x);
    if (dt == PAR_DTYPE_INVALID)
        return ox_unsupported(im, "constant '%.60s' of type %s outside quantization", x->name,
                              par_onnx_dtype_name(x->dtype)), -1;
    int32_t v = made_of(im, x, dt, 0);
    if (v < 0) return -1;
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

int32_t ox_step(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs)
{
    for (int32_t i = 0; i < n_in; i++)
        if (ins[i] < 0) return -1;
    return ox_emit(im, op, n_in, ins, n_attrs, attrs, -1, NULL);
}

int ox_last(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs, const par_attr *attrs)
{
    for (int32_t i = 0; i < n_in; i++)
        if (ins[i] < 0) return im->failed ? OX_ERROR : OX_UNSUPPORTED;
    return ox_emit(im, op, n_in, ins, n_attrs, attrs, 0, NULL) < 0 ? OX_UNSUPPORTED : OX_OK;
}

int32_t ox_data_tensor(ox_imp *im, ox_val *x)
{
    if (!x || x->v >= 0 || !x->from_data || x->dtype != PAR_ONNX_INT64 || !x->ints) return ox_tensor(im, x);
    if (!ox_rank_ok(im, x)) return -1;
    int32_t v = made_of(im, x, PAR_DTYPE_I32, 1); /* every value within 32 bits, or why */
    if (v >= 0) x->v = v;
    return v;
}

static ox_val *out_val(ox_imp *im, int32_t k)
{
    const par_onnx_node *n = im->node;
    if (k == 0 && im->fused && im->fuse_out) return ox_define(im, im->fuse_out);
    if (k >= n->n_outputs || !n->outputs[k][0]) return NULL;
    return ox_define(im, n->outputs[k]);
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

int32_t ox_const_made(ox_imp *im, const char *base, par_dtype dt, int32_t rank, const int64_t *dims,
                      const void *data)
{
    char nm[96];
    snprintf(nm, sizeof nm, "%.60s_%d", base, (int)im->serial++);
    int32_t v = par_case_const_data(im->c, nm, dt, rank, dims, data);
    if (v < 0) return ox_error(im, "%s", im->c->err.text), -1;
    return v;
}

int32_t ox_scalar_f32(ox_imp *im, const char *base, float value)
{
    int64_t one = 1;
    return ox_const_made(im, base, PAR_DTYPE_F32, 1, &one, &value);
}

int32_t ox_emit_named(ox_imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs,
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
    const char *vname = ox_pname(im, oname, n->op_type, vbuf, sizeof vbuf);
    const char *nodename = oname && n->name[0] ? ox_pname(im, n->name, n->op_type, nbuf, sizeof nbuf) : NULL;
    int32_t v = ox_emit_named(im, op, n_in, ins, n_attrs, attrs, vname, nodename, spec);
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
        ox_val *in = im->node->inputs[i][0] ? ox_lookup(im, im->node->inputs[i]) : NULL;
        if (in && in->from_data) x->from_data = 1;
    }
    return OX_OK;
}

int32_t ox_quant_input(ox_imp *im, ox_val *x, float scale, int32_t zp)
{
    if (x->v >= 0 || (x->is_const && !x->from_data)) return -2;
    if (x->dtype != PAR_ONNX_UINT8 && x->dtype != PAR_ONNX_INT8) return -2;
    x->quantized = 1;
    x->scale = scale;
    x->zero_point = zp;
    par_dtype dt = ox_parity_dtype(x);
    char buf[128];
    const char *nm = ox_pname(im, x->name, "input", buf, sizeof buf);
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = dt == PAR_DTYPE_QU8 ? 0 : -128, .b = dt == PAR_DTYPE_QU8 ? 255 : 127};
    int32_t v;
    if (x->from_data) {
        void *bytes = ox_const_bytes(im, x, dt);
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

/* The output dims of ONNX Reshape: 0 copies the input's dim (unless allowzero), one -1 is inferred. */
int ox_reshape_dims(ox_imp *im, const int64_t *in, int32_t in_rank, int64_t in_numel, const int64_t *shape,
                        int32_t n, int64_t *out)
{
    int64_t known = 1;
    int32_t infer = -1;
    for (int32_t i = 0; i < n; i++) {
        out[i] = shape[i];
        if (shape[i] == 0 && !ox_attr_i(im, "allowzero", 0)) {
            if (i >= in_rank) return ox_unsupported(im, "shape copies dimension %d of a rank-%d input", (int)i,
                                                    (int)in_rank);
            out[i] = in[i];
        }
        if (out[i] == -1) {
            if (infer >= 0) return ox_unsupported(im, "two -1 in the shape");
            infer = i;
        } else if (out[i] < 1) {
            return ox_unsupported(im, "dimension %lld in the shape", (long long)out[i]);
        } else {
            known *= out[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || in_numel % known) return ox_unsupported(im, "the shape does not divide %lld elements",
                                                                  (long long)in_numel);
        out[infer] = in_numel / known;
    }
    return OX_OK;
}

int ox_transpose_const(ox_imp *im, ox_val *x)
{
    float *t = malloc(sizeof(float) * (size_t)(x->numel ? x->numel : 1));
    if (!t) return ox_error(im, "out of memory");
    const int32_t perm[2] = {1, 0};
    par_fmt_permute(x->floats, t, sizeof(float), 2, x->dims, perm);
    free(x->floats);
    x->floats = t;
    x->raw = NULL; /* the file's bytes are the other layout now */
    int64_t d0 = x->dims[0];
    x->dims[0] = x->dims[1];
    x->dims[1] = d0;
    return OX_OK;
}
