/*
 * case_write.c - the JSON writer of cases (par_case_to_json, docs/case-format.md).
 *
 * Must not: write text that is not JSON (no NaN or infinity tokens), or lose a bit of any number it writes.
 */
#include "case.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "files.h"
#include "prng.h"
#include "tensor.h"

/* ------------------------------------------------------------------------------------------------------------------
 * Writer (docs/case-format.md). Numbers are printed here, not by json-c: the shortest text that reads back to the
 * same bits (through strtod, as the reader does), "-0.0" for negative zero (json-c reads "-0" as the integer 0), and
 * never NaN: a case holding one in its data cannot be written (NULL). Infinities, in float attributes and in real
 * data, are written as the strings "inf" / "-inf", which the reader accepts there.
 * ---------------------------------------------------------------------------------------------------------------- */

typedef struct wbuf {
    char *p;
    size_t n, cap;
    int bad; /* out of memory, or a value JSON cannot hold */
} wbuf;

static void wraw(wbuf *w, const char *s, size_t k)
{
    if (w->bad) return;
    if (w->n + k + 1 > w->cap) {
        size_t nc = w->cap ? w->cap : 4096;
        while (nc < w->n + k + 1) nc *= 2;
        char *np = realloc(w->p, nc);
        if (!np) {
            w->bad = 1;
            return;
        }
        w->p = np;
        w->cap = nc;
    }
    memcpy(w->p + w->n, s, k);
    w->n += k;
    w->p[w->n] = 0;
}

static void wput(wbuf *w, const char *s)
{
    wraw(w, s, strlen(s));
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void wputf(wbuf *w, const char *fmt, ...)
{
    char b[160];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof b) w->bad = 1;
    else wraw(w, b, (size_t)k);
}

/* A JSON string: quote, backslash and control characters escaped; other bytes as they are (names are UTF-8). */
static void wstr(wbuf *w, const char *s)
{
    wput(w, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"') wput(w, "\\\"");
        else if (*p == '\\') wput(w, "\\\\");
        else if (*p == '\n') wput(w, "\\n");
        else if (*p == '\t') wput(w, "\\t");
        else if (*p < 0x20 || *p == 0x7f) wputf(w, "\\u%04x", *p);
        else wraw(w, (const char *)p, 1);
    }
    wput(w, "\"");
}

/* Shortest "%.Ng" (N from 6) that reads back exactly: %.17g always does for a double, %.9g for a float (is_f32:
 * the reader rounds the double it parsed to f32, so the text need only round back to the same float). */
static void wnum(wbuf *w, double v, int is_f32)
{
    char b[40];
    if (!isfinite(v)) {
        w->bad = 1;
        return;
    }
    if (v == 0) {
        wput(w, signbit(v) ? "-0.0" : "0");
        return;
    }
    for (int prec = 6; prec <= (is_f32 ? 9 : 17); prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        double r = strtod(b, NULL);
        if (is_f32 ? (float)r == (float)v : r == v) break;
    }
    wput(w, b);
}

static void wf64(wbuf *w, double v) { wnum(w, v, 0); }

static void wf32(wbuf *w, float f) { wnum(w, (double)f, 1); }

static void wshape(wbuf *w, int32_t rank, const int64_t *dims)
{
    wput(w, "[");
    for (int32_t i = 0; i < rank; i++) wputf(w, "%s%lld", i ? ", " : "", (long long)dims[i]);
    wput(w, "]");
}

/* A real data element: an infinity as the string the reader takes (an attention mask's -inf); NaN marks the text bad. */
static void wdata_real(wbuf *w, float f)
{
    if (isinf(f)) wput(w, f > 0 ? "\"inf\"" : "\"-inf\"");
    else wf32(w, f);
}

static void wdata(wbuf *w, par_dtype dt, const void *buf, int64_t n)
{
    const int wrap = n > 8; /* short lists stay on one line; long ones take 8 values a line */
    wput(w, "[");
    for (int64_t i = 0; i < n && !w->bad; i++) {
        if (!wrap) wput(w, i ? ", " : "");
        else wput(w, i == 0 ? "\n        " : i % 8 == 0 ? ",\n        " : ", ");
        switch (dt) {
        case PAR_DTYPE_F32: wdata_real(w, ((const float *)buf)[i]); break;
        case PAR_DTYPE_F16: wdata_real(w, par_f16_to_f32(((const uint16_t *)buf)[i])); break;
        case PAR_DTYPE_QU8: wputf(w, "%d", ((const uint8_t *)buf)[i]); break;
        case PAR_DTYPE_QS8: wputf(w, "%d", ((const int8_t *)buf)[i]); break;
        case PAR_DTYPE_QS16: wputf(w, "%d", ((const int16_t *)buf)[i]); break;
        case PAR_DTYPE_I32: wputf(w, "%d", (int)((const int32_t *)buf)[i]); break;
        case PAR_DTYPE_BOOL: wput(w, ((const uint8_t *)buf)[i] ? "true" : "false"); break;
        default: w->bad = 1; break;
        }
    }
    wput(w, wrap ? "\n      ]" : "]");
}

static void wgen(wbuf *w, const par_gen *g, uint64_t derived)
{
    switch (g->dist) {
    case PAR_DIST_UNIFORM: wput(w, "{\"dist\": \"uniform\", \"low\": "), wf64(w, g->a), wput(w, ", \"high\": "); break;
    case PAR_DIST_NORMAL: wput(w, "{\"dist\": \"normal\", \"mean\": "), wf64(w, g->a), wput(w, ", \"std\": "); break;
    case PAR_DIST_CONST: wput(w, "{\"dist\": \"const\", \"value\": "), wf64(w, g->a); break;
    case PAR_DIST_EDGE: wput(w, "{\"dist\": \"edge\", \"max\": "); break;
    case PAR_DIST_HAZARD:
        if (!par_hazard_name(g->hazard)) {
            w->bad = 1;
            return;
        }
        wputf(w, "{\"dist\": \"hazard\", \"hazard\": \"%s\", \"%s\": ", par_hazard_name(g->hazard),
              g->hazard == PAR_HAZARD_TIES ? "step" : "low");
        wf64(w, g->a);
        wput(w, g->hazard == PAR_HAZARD_TIES ? ", \"count\": " : ", \"high\": ");
        break;
    default: w->bad = 1; return;
    }
    if (g->dist != PAR_DIST_CONST) wf64(w, g->b);
    if (g->fan_in) wput(w, ", \"fan_in\": true");
    if (g->seed != derived) wputf(w, ", \"seed\": %llu", (unsigned long long)g->seed);
    wput(w, "}");
}

static void wtensor(wbuf *w, const par_case *c, const par_value *v, const par_tensor_src *s, int inline_data)
{
    wput(w, "    {\n      \"name\": ");
    wstr(w, v->name);
    wputf(w, ",\n      \"dtype\": \"%s\",\n      \"shape\": ", par_dtype_name(v->dtype));
    wshape(w, v->rank, v->dims);
    const void *data = v->kind == PAR_VALUE_CONST ? v->data : s ? s->data : NULL;
    void *tmp = NULL;
    /* NaN and Inf have no JSON number: a nan_inf tensor keeps its generator even when data is asked for inline */
    const int nonfinite = s && s->kind == PAR_SRC_GEN && s->gen.dist == PAR_DIST_HAZARD &&
                          s->gen.hazard == PAR_HAZARD_NAN_INF &&
                          (v->dtype == PAR_DTYPE_F32 || v->dtype == PAR_DTYPE_F16 || v->dtype == PAR_DTYPE_F64);
    if (s && s->kind == PAR_SRC_GEN && (!inline_data || nonfinite)) {
        wput(w, ",\n      \"init\": ");
        wgen(w, &s->gen, par_case_derive_seed(v->name, c->seed));
    } else if (s && s->kind == PAR_SRC_FILE && !inline_data) {
        wput(w, ",\n      \"data\": {\"file\": ");
        wstr(w, s->file);
        wputf(w, ", \"offset\": %lld}", (long long)s->offset);
    } else {
        if (!data && s && s->kind == PAR_SRC_GEN) {
            tmp = malloc((size_t)par_shape_numel(v->rank, v->dims) * par_dtype_size(v->dtype) + 1);
            if (tmp) par_gen_fill(&s->gen, v->dtype, v->rank, v->dims, tmp);
            data = tmp;
        }
        if (!data) w->bad = 1; /* an input with no known source */
        wput(w, ",\n      \"data\": ");
        if (data) wdata(w, v->dtype, data, v->numel);
    }
    free(tmp);
    if (v->quant_axis >= 0 && v->channel_scales) {
        wputf(w, ",\n      \"quant\": {\"axis\": %d, \"scales\": [", (int)v->quant_axis);
        for (int64_t i = 0; i < v->dims[v->quant_axis]; i++) {
            if (i) wput(w, ", ");
            wf32(w, v->channel_scales[i]);
        }
        wput(w, "]}");
    } else if (v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8 || v->dtype == PAR_DTYPE_QS16 ||
               (v->dtype == PAR_DTYPE_I32 && (v->scale != 1.0f || v->zero_point != 0))) {
        wput(w, ",\n      \"quant\": {\"scale\": ");
        wf32(w, v->scale);
        wputf(w, ", \"zero_point\": %d}", (int)v->zero_point);
    }
    wput(w, "\n    }");
}

static int attr_is_default(const par_attr_spec *sp, const par_attr *a)
{
    const par_attr *d = &sp->def;
    if (!sp->has_default || d->type != a->type) return 0;
    switch (a->type) {
    case PAR_ATTR_INT: return a->i == d->i;
    case PAR_ATTR_FLOAT: return a->f == d->f && !signbit(a->f) == !signbit(d->f);
    case PAR_ATTR_STRING: return a->s && d->s && strcmp(a->s, d->s) == 0;
    case PAR_ATTR_INTS:
    case PAR_ATTR_FLOATS:
        if (a->count != d->count) return 0;
        for (int32_t i = 0; i < a->count; i++)
            if (a->type == PAR_ATTR_INTS ? a->ints[i] != d->ints[i] : a->floats[i] != d->floats[i]) return 0;
        return 1;
    }
    return 0;
}

static void wattr_float(wbuf *w, double f)
{
    if (isinf(f)) wput(w, f > 0 ? "\"inf\"" : "\"-inf\"");
    else wf64(w, f); /* NaN marks the text bad */
}

/* The dtype output k of node n has when its declaration names none: input 0's (f32 for dequantize), then what shape
 * inference sets, as the builder does. An output whose dtype differs was declared so and is written with it, so
 * that the reader rebuilds the same graph; PAR_DTYPE_INVALID when inference fails without the declaration. */
static par_dtype undeclared_dtype(const par_graph_desc *d, const par_node *n, const par_op_info *info, int32_t k)
{
    par_value ov[4];
    if (!info || info->n_out > 4) return PAR_DTYPE_INVALID;
    memset(ov, 0, sizeof ov);
    par_dtype dt = n->n_inputs > 0 && n->inputs[0] >= 0 ? d->values[n->inputs[0]].dtype : PAR_DTYPE_F32;
    if (info->id == PAR_OP_DEQUANTIZE) dt = PAR_DTYPE_F32;
    for (int32_t i = 0; i < info->n_out; i++) {
        ov[i].dtype = dt;
        ov[i].quant_axis = -1;
        ov[i].scale = 1.0f;
        if (n->n_inputs > 0 && n->inputs[0] >= 0 && (dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_QS8 || dt == PAR_DTYPE_QS16)) {
            ov[i].scale = d->values[n->inputs[0]].scale;
            ov[i].zero_point = d->values[n->inputs[0]].zero_point;
        }
    }
    par_msg m;
    if (info->infer(d, n, ov, &m) != PAR_OK) return PAR_DTYPE_INVALID;
    return ov[k].dtype;
}

static void wnode(wbuf *w, const par_graph_desc *d, const par_node *n)
{
    const par_op_info *info = par_op_find(n->op);
    wput(w, "    {\"name\": ");
    wstr(w, n->name);
    wput(w, ", \"op\": ");
    wstr(w, n->op);
    wput(w, ", \"inputs\": [");
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (i) wput(w, ", ");
        if (n->inputs[i] < 0) wput(w, "null");
        else wstr(w, d->values[n->inputs[i]].name);
    }
    wput(w, "]");
    int first = 1;
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const par_attr *a = &n->attrs[i];
        const par_attr_spec *sp = NULL;
        for (int32_t j = 0; info && j < info->n_attrs && !sp; j++)
            if (strcmp(info->attrs[j].name, a->name) == 0) sp = &info->attrs[j];
        if (sp && attr_is_default(sp, a)) continue;
        wput(w, first ? ", \"attrs\": {" : ", ");
        first = 0;
        wstr(w, a->name);
        wput(w, ": ");
        switch (a->type) {
        case PAR_ATTR_INT: wputf(w, "%lld", (long long)a->i); break;
        case PAR_ATTR_FLOAT: wattr_float(w, a->f); break;
        case PAR_ATTR_STRING: wstr(w, a->s); break;
        case PAR_ATTR_INTS:
        case PAR_ATTR_FLOATS:
            wput(w, "[");
            for (int32_t k = 0; k < a->count; k++) {
                if (k) wput(w, ", ");
                if (a->type == PAR_ATTR_INTS) wputf(w, "%lld", (long long)a->ints[k]);
                else wattr_float(w, a->floats[k]);
            }
            wput(w, "]");
            break;
        }
    }
    if (!first) wput(w, "}");
    wput(w, ", \"outputs\": [");
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_value *v = &d->values[n->outputs[i]];
        if (i) wput(w, ", ");
        if (v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8 || v->dtype == PAR_DTYPE_QS16 ||
            v->dtype == PAR_DTYPE_I32) {
            wput(w, "{\"name\": ");
            wstr(w, v->name);
            wputf(w, ", \"dtype\": \"%s\", \"scale\": ", par_dtype_name(v->dtype));
            wf32(w, v->scale);
            wputf(w, ", \"zero_point\": %d}", (int)v->zero_point);
        } else if (v->dtype != undeclared_dtype(d, n, info, i)) {
            wput(w, "{\"name\": ");
            wstr(w, v->name);
            wputf(w, ", \"dtype\": \"%s\"}", par_dtype_name(v->dtype));
        } else {
            wstr(w, v->name);
        }
    }
    wput(w, "]}");
}

char *par_case_to_json(const par_case *c, int inline_data)
{
    if (!c || !c->graph || c->status != PAR_OK) return NULL;
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    wbuf w = {0};
    int32_t *src_of = malloc(sizeof(int32_t) * (size_t)(d->n_values ? d->n_values : 1));
    if (!src_of) return NULL;
    for (int32_t i = 0; i < d->n_values; i++) src_of[i] = -1;
    for (int32_t k = 0; k < c->n_srcs; k++)
        if (c->srcs[k].value >= 0 && c->srcs[k].value < d->n_values) src_of[c->srcs[k].value] = k;

    wput(&w, "{\n  \"schema\": \"" PAR_CASE_SCHEMA "\",\n");
    wputf(&w, "  \"version\": %d,\n  \"id\": ", PAR_CASE_VERSION);
    wstr(&w, c->id);
    if (c->description) wput(&w, ",\n  \"description\": "), wstr(&w, c->description);
    wputf(&w, ",\n  \"seed\": %llu,\n", (unsigned long long)c->seed);
    if (c->repeat > 0 || c->timeout_s > 0) {
        wput(&w, "  \"options\": {");
        if (c->repeat > 0) wputf(&w, "\"repeat\": %d%s", (int)c->repeat, c->timeout_s > 0 ? ", " : "");
        if (c->timeout_s > 0) wput(&w, "\"timeout_s\": "), wf64(&w, c->timeout_s);
        wput(&w, "},\n");
    }
    for (int pass = 0; pass < 2; pass++) {
        int first = 1;
        int32_t count = pass == 0 ? d->n_inputs : d->n_values;
        for (int32_t i = 0; i < count; i++) {
            int32_t vi = pass == 0 ? d->inputs[i] : i;
            if (pass == 1 && d->values[vi].kind != PAR_VALUE_CONST) continue;
            wput(&w, first ? (pass == 0 ? "  \"inputs\": [\n" : "  \"constants\": [\n") : ",\n");
            first = 0;
            wtensor(&w, c, &d->values[vi], src_of[vi] >= 0 ? &c->srcs[src_of[vi]] : NULL, inline_data);
        }
        if (!first) wput(&w, "\n  ],\n");
    }
    wput(&w, "  \"nodes\": [\n");
    for (int32_t i = 0; i < d->n_nodes; i++) {
        if (i) wput(&w, ",\n");
        wnode(&w, d, &d->nodes[i]);
    }
    wput(&w, "\n  ],\n  \"outputs\": [");
    for (int32_t i = 0; i < d->n_outputs; i++) {
        if (i) wput(&w, ", ");
        wstr(&w, d->values[d->outputs[i]].name);
    }
    wput(&w, "]\n}\n");
    free(src_of);
    if (w.bad) {
        free(w.p);
        return NULL;
    }
    return w.p;
}

par_status par_case_save(par_case *c, const char *path, int64_t min_elems, par_msg *msg)
{
    if (!c || !c->graph || c->status != PAR_OK) return par_msgf(msg, PAR_ERROR, "%s: the case is not built", path);
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char bin[4096], rel[1024];
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".json") == 0) bl -= 5;
    snprintf(rel, sizeof rel, "%.*s.bin", (int)bl, base);
    snprintf(bin, sizeof bin, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, rel);
    /* the tensors that go to the sidecar, 64-byte aligned, in the order of the case's sources */
    size_t total = 0;
    for (int32_t k = 0; k < c->n_srcs; k++) {
        const par_tensor_src *s = &c->srcs[k];
        const par_value *v = &d->values[s->value];
        if (s->kind != PAR_SRC_INLINE || v->numel < min_elems) continue;
        total = (total + 63) & ~(size_t)63;
        total += (size_t)v->numel * par_dtype_size(v->dtype);
    }
    if (total > 0) {
        uint8_t *buf = calloc(total, 1);
        if (!buf) return par_msgf(msg, PAR_ERROR, "%s: out of memory", bin);
        size_t at = 0;
        for (int32_t k = 0; k < c->n_srcs; k++) {
            par_tensor_src *s = &c->srcs[k];
            const par_value *v = &d->values[s->value];
            if (s->kind != PAR_SRC_INLINE || v->numel < min_elems) continue;
            at = (at + 63) & ~(size_t)63;
            const void *data = v->kind == PAR_VALUE_CONST ? v->data : s->data;
            size_t bytes = (size_t)v->numel * par_dtype_size(v->dtype);
            memcpy(buf + at, data, bytes);
            s->offset = (int64_t)at;
            at += bytes;
        }
        int rc = par_write_bytes_atomic(bin, buf, total, msg);
        free(buf);
        if (rc != 0) return PAR_ERROR;
        for (int32_t k = 0; k < c->n_srcs; k++) {
            par_tensor_src *s = &c->srcs[k];
            const par_value *v = &d->values[s->value];
            if (s->kind != PAR_SRC_INLINE || v->numel < min_elems) continue;
            free(s->file);
            s->file = strdup(rel);
            if (!s->file) return par_msgf(msg, PAR_ERROR, "out of memory");
            if (v->kind != PAR_VALUE_CONST) free(s->data), s->data = NULL;
            s->kind = PAR_SRC_FILE;
        }
    }
    char *text = par_case_to_json(c, 0);
    if (!text) return par_msgf(msg, PAR_ERROR, "%s: the case cannot be written as JSON", path);
    int rc = par_write_file_atomic(path, text, msg);
    free(text);
    return rc == 0 ? PAR_OK : PAR_ERROR;
}
