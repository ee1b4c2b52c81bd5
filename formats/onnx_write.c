/*
 * onnx_write.c - the ONNX writer (onnx.h): the structures of onnx.h encoded as a ModelProto (or a lone
 * TensorProto) in the protobuf wire format (formats/pb.h).
 *
 * Encoding, chosen to be what onnx's Python helpers write, so that a model onnx made comes back field for field:
 * fields in field-number order; repeated scalars unpacked (onnx.proto is proto2 and declares dims, floats and ints
 * without [packed]); tensors as dims, data_type, name and raw_data (little-endian; present even when empty, as
 * numpy_helper.from_array does), string tensors as string_data; attributes with their type; an opset's domain
 * always (make_opsetid sets it, "" included); optional strings only when present ("" is absent for the names onnx.h
 * gives "" when absent; NULL for the doc strings). The verbatim parts the reader kept (a value's non-tensor
 * TypeProto, an attribute's other fields) are written back as they are.
 *
 * Whatever the reader produced, the writer can encode, except data the reader does not keep (external, complex and
 * unknown types): those are PAR_ERROR with "not kept" in the message. So parse -> write -> parse -> write gives the
 * same bytes twice (fuzz/targets/fuzz_onnx.c checks it).
 *
 * Must not: change the model; write what it cannot read back.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "onnx.h"
#include "pb.h"

typedef struct enc {
    par_pb_writer w;
    par_msg *msg;
    int failed;
    int depth;
    size_t plen;
    char path[320];
} enc;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int fail(enc *e, const char *fmt, ...)
{
    if (e->failed) return -1;
    char reason[PAR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    par_msgf(e->msg, PAR_ERROR, "onnx write: %s: %s", e->plen ? e->path : "model", reason);
    e->failed = 1;
    return -1;
}

static size_t push(enc *e, const char *name, int64_t index)
{
    size_t old = e->plen, cap = sizeof e->path;
    int k = index >= 0 ? snprintf(e->path + old, cap - old, "%s%s[%lld]", old ? "." : "", name, (long long)index)
                       : snprintf(e->path + old, cap - old, "%s%s", old ? "." : "", name);
    size_t n = k > 0 ? (size_t)k : 0;
    e->plen = old + n < cap ? old + n : cap - 1;
    return old;
}

static void pop(enc *e, size_t old)
{
    e->plen = old;
    e->path[old] = 0;
}

static void put_opt_string(enc *e, uint32_t field, const char *s)
{
    if (s && *s) par_pb_put_string(&e->w, field, s);
}

/* numel from dims, each checked; -1 (message set) when they are not a tensor's */
static int64_t checked_numel(enc *e, const par_onnx_tensor *t)
{
    if (t->rank < 0 || t->rank > PAR_ONNX_MAX_RANK) return fail(e, "rank %d outside [0, %d]", (int)t->rank,
                                                                 PAR_ONNX_MAX_RANK);
    int64_t numel = 1;
    int zero = 0;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return fail(e, "dims[%d] is %lld", (int)i, (long long)t->dims[i]);
        zero |= t->dims[i] == 0;
    }
    for (int32_t i = 0; i < t->rank && !zero; i++) {
        if (t->dims[i] > INT64_MAX / numel) return fail(e, "the product of dims overflows int64");
        numel *= t->dims[i];
    }
    return zero ? 0 : numel;
}

static int put_tensor_body(enc *e, const par_onnx_tensor *t)
{
    const char *name = t->name ? t->name : "";
    int64_t numel = checked_numel(e, t);
    if (numel < 0) return -1;
    if (t->numel != numel)
        return fail(e, "tensor '%s': numel %lld is not the product of its dims, %lld", name, (long long)t->numel,
                    (long long)numel);
    if (t->external) return fail(e, "tensor '%s': its data is in an external file, not kept", name);
    size_t es = par_onnx_dtype_size(t->dtype);
    if (t->dtype != PAR_ONNX_STRING && es == 0 && numel > 0)
        return fail(e, "tensor '%s': the data of a %s tensor is not kept", name, par_onnx_dtype_name(t->dtype));
    if (t->dtype == PAR_ONNX_STRING && numel > 0 && !t->strings)
        return fail(e, "tensor '%s': a string tensor without its strings", name);
    if (es && numel > 0 && !t->data) return fail(e, "tensor '%s': no data", name);
    if (es && (uint64_t)numel > SIZE_MAX / es) return fail(e, "tensor '%s': too large", name);

    for (int32_t i = 0; i < t->rank; i++) par_pb_put_int(&e->w, 1, t->dims[i]);
    par_pb_put_int(&e->w, 2, t->dtype);
    if (t->dtype == PAR_ONNX_STRING) {
        for (int64_t k = 0; k < numel; k++) {
            const char *s = t->strings[k];
            if (!s) return fail(e, "tensor '%s': string %lld is NULL", name, (long long)k);
            par_pb_put_bytes(&e->w, 6, s, t->string_lens ? t->string_lens[k] : strlen(s));
        }
    }
    put_opt_string(e, 8, name);
    if (es) par_pb_put_bytes(&e->w, 9, t->data, (size_t)numel * es);
    return 0;
}

static int put_tensor(enc *e, uint32_t field, const par_onnx_tensor *t, const char *pname, int64_t index)
{
    size_t old = push(e, pname, index);
    size_t mark = par_pb_begin(&e->w, field);
    int rc = put_tensor_body(e, t);
    par_pb_end(&e->w, mark);
    pop(e, old);
    return rc;
}

static int put_value_info(enc *e, uint32_t field, const par_onnx_value_info *vi, const char *pname, int64_t index)
{
    size_t old = push(e, pname, index);
    if (!vi->name) return fail(e, "a value without a name");
    if (vi->rank < -1 || vi->rank > PAR_ONNX_MAX_RANK)
        return fail(e, "value '%s': rank %d outside [-1, %d]", vi->name, (int)vi->rank, PAR_ONNX_MAX_RANK);
    size_t mark = par_pb_begin(&e->w, field);
    par_pb_put_string(&e->w, 1, vi->name);
    if (vi->type_proto) {
        par_pb_put_bytes(&e->w, 2, vi->type_proto, vi->type_proto_len);
    } else if (vi->elem_type != 0 || vi->rank >= 0) {
        size_t tp = par_pb_begin(&e->w, 2);
        size_t tt = par_pb_begin(&e->w, 1);
        if (vi->elem_type != 0) par_pb_put_int(&e->w, 1, vi->elem_type);
        if (vi->rank >= 0) {
            size_t sh = par_pb_begin(&e->w, 2);
            for (int32_t i = 0; i < vi->rank; i++) {
                size_t dm = par_pb_begin(&e->w, 1);
                if (vi->dim_params[i])
                    par_pb_put_string(&e->w, 2, vi->dim_params[i]);
                else if (vi->dims[i] >= 0)
                    par_pb_put_int(&e->w, 1, vi->dims[i]);
                par_pb_end(&e->w, dm);
            }
            par_pb_end(&e->w, sh);
        }
        par_pb_end(&e->w, tt);
        par_pb_end(&e->w, tp);
    }
    par_pb_end(&e->w, mark);
    pop(e, old);
    return 0;
}

static int put_graph(enc *e, uint32_t field, const par_onnx_graph *g, const char *pname, int64_t index);

static int put_attr(enc *e, const par_onnx_attr *a, int64_t index)
{
    size_t old = push(e, "attribute", index);
    if (!a->name) return fail(e, "an attribute without a name");
    if (a->n < 0) return fail(e, "attribute '%s': n is %d", a->name, (int)a->n);
    size_t mark = par_pb_begin(&e->w, 5);
    par_pb_put_string(&e->w, 1, a->name);
    switch (a->type) {
    case PAR_ONNX_ATTR_FLOAT: par_pb_put_float(&e->w, 2, a->f); break;
    case PAR_ONNX_ATTR_INT: par_pb_put_int(&e->w, 3, a->i); break;
    case PAR_ONNX_ATTR_STRING:
        if (a->s)
            par_pb_put_bytes(&e->w, 4, a->s, a->s_len ? a->s_len : strlen(a->s));
        else
            par_pb_put_bytes(&e->w, 4, "", 0);
        break;
    case PAR_ONNX_ATTR_TENSOR:
        if (!a->t) return fail(e, "attribute '%s': TENSOR without a tensor", a->name);
        if (put_tensor(e, 5, a->t, "t", -1)) return -1;
        break;
    case PAR_ONNX_ATTR_GRAPH:
        if (!a->g) return fail(e, "attribute '%s': GRAPH without a graph", a->name);
        if (put_graph(e, 6, a->g, "g", -1)) return -1;
        break;
    case PAR_ONNX_ATTR_FLOATS:
        if (a->n && !a->floats) return fail(e, "attribute '%s': FLOATS without floats", a->name);
        for (int32_t k = 0; k < a->n; k++) par_pb_put_float(&e->w, 7, a->floats[k]);
        break;
    case PAR_ONNX_ATTR_INTS:
        if (a->n && !a->ints) return fail(e, "attribute '%s': INTS without ints", a->name);
        for (int32_t k = 0; k < a->n; k++) par_pb_put_int(&e->w, 8, a->ints[k]);
        break;
    case PAR_ONNX_ATTR_STRINGS:
        if (a->n && !a->strings) return fail(e, "attribute '%s': STRINGS without strings", a->name);
        for (int32_t k = 0; k < a->n; k++) {
            const char *s = a->strings[k];
            if (!s) return fail(e, "attribute '%s': string %d is NULL", a->name, (int)k);
            par_pb_put_bytes(&e->w, 9, s, a->strings_lens ? a->strings_lens[k] : strlen(s));
        }
        break;
    case PAR_ONNX_ATTR_TENSORS:
        if (a->n && !a->tensors) return fail(e, "attribute '%s': TENSORS without tensors", a->name);
        for (int32_t k = 0; k < a->n; k++)
            if (put_tensor(e, 10, &a->tensors[k], "tensors", k)) return -1;
        break;
    case PAR_ONNX_ATTR_GRAPHS:
        if (a->n && !a->graphs) return fail(e, "attribute '%s': GRAPHS without graphs", a->name);
        for (int32_t k = 0; k < a->n; k++)
            if (put_graph(e, 11, &a->graphs[k], "graphs", k)) return -1;
        break;
    case PAR_ONNX_ATTR_UNDEFINED:
    case PAR_ONNX_ATTR_SPARSE_TENSOR:
    case PAR_ONNX_ATTR_SPARSE_TENSORS:
    case PAR_ONNX_ATTR_TYPE_PROTO:
    case PAR_ONNX_ATTR_TYPE_PROTOS: break; /* in other_fields, if anywhere */
    default: return fail(e, "attribute '%s': type %d is not an AttributeType", a->name, (int)a->type);
    }
    if (a->type != PAR_ONNX_ATTR_UNDEFINED) par_pb_put_int(&e->w, 20, a->type);
    if (a->ref_attr_name) par_pb_put_string(&e->w, 21, a->ref_attr_name);
    if (a->other_fields) par_pb_put_raw(&e->w, a->other_fields, a->other_fields_len);
    par_pb_end(&e->w, mark);
    pop(e, old);
    return 0;
}

static int put_node(enc *e, const par_onnx_node *n, int64_t index)
{
    size_t old = push(e, "node", index);
    if (!n->op_type) return fail(e, "a node without an op_type");
    if (n->n_inputs < 0 || n->n_outputs < 0 || n->n_attrs < 0) return fail(e, "a negative count");
    if ((n->n_inputs && !n->inputs) || (n->n_outputs && !n->outputs) || (n->n_attrs && !n->attrs))
        return fail(e, "node '%s': a count without its array", n->op_type);
    size_t mark = par_pb_begin(&e->w, 1);
    for (int32_t k = 0; k < n->n_inputs; k++) {
        if (!n->inputs[k]) return fail(e, "input %d is NULL (\"\" for an absent input)", (int)k);
        par_pb_put_string(&e->w, 1, n->inputs[k]);
    }
    for (int32_t k = 0; k < n->n_outputs; k++) {
        if (!n->outputs[k]) return fail(e, "output %d is NULL (\"\" for an absent output)", (int)k);
        par_pb_put_string(&e->w, 2, n->outputs[k]);
    }
    put_opt_string(e, 3, n->name);
    par_pb_put_string(&e->w, 4, n->op_type);
    for (int32_t k = 0; k < n->n_attrs; k++)
        if (put_attr(e, &n->attrs[k], k)) return -1;
    put_opt_string(e, 7, n->domain);
    par_pb_end(&e->w, mark);
    pop(e, old);
    return 0;
}

static int put_graph(enc *e, uint32_t field, const par_onnx_graph *g, const char *pname, int64_t index)
{
    size_t old = push(e, pname, index);
    /* the reader's limit: a structure deeper than it (or a cycle a builder made) is not a file it could read */
    if (++e->depth > PAR_ONNX_MAX_DEPTH) return fail(e, "graphs nested deeper than %d", PAR_ONNX_MAX_DEPTH);
    if (g->n_nodes < 0 || g->n_initializers < 0 || g->n_inputs < 0 || g->n_outputs < 0 || g->n_value_info < 0)
        return fail(e, "a negative count");
    if ((g->n_nodes && !g->nodes) || (g->n_initializers && !g->initializers) || (g->n_inputs && !g->inputs) ||
        (g->n_outputs && !g->outputs) || (g->n_value_info && !g->value_info))
        return fail(e, "a count without its array");
    size_t mark = par_pb_begin(&e->w, field);
    for (int32_t k = 0; k < g->n_nodes; k++)
        if (put_node(e, &g->nodes[k], k)) return -1;
    put_opt_string(e, 2, g->name);
    for (int32_t k = 0; k < g->n_initializers; k++)
        if (put_tensor(e, 5, &g->initializers[k], "initializer", k)) return -1;
    if (g->doc_string) par_pb_put_string(&e->w, 10, g->doc_string);
    for (int32_t k = 0; k < g->n_inputs; k++)
        if (put_value_info(e, 11, &g->inputs[k], "input", k)) return -1;
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (put_value_info(e, 12, &g->outputs[k], "output", k)) return -1;
    for (int32_t k = 0; k < g->n_value_info; k++)
        if (put_value_info(e, 13, &g->value_info[k], "value_info", k)) return -1;
    par_pb_end(&e->w, mark);
    e->depth--;
    pop(e, old);
    return 0;
}

static int put_model(enc *e, const par_onnx_model *m)
{
    if (m->n_opsets < 0 || (m->n_opsets && !m->opsets)) return fail(e, "opsets: a count without its array");
    par_pb_put_int(&e->w, 1, m->ir_version);
    put_opt_string(e, 2, m->producer_name);
    put_opt_string(e, 3, m->producer_version);
    if (m->doc_string) par_pb_put_string(&e->w, 6, m->doc_string);
    if (put_graph(e, 7, &m->graph, "graph", -1)) return -1;
    for (int32_t k = 0; k < m->n_opsets; k++) {
        size_t mark = par_pb_begin(&e->w, 8);
        par_pb_put_string(&e->w, 1, m->opsets[k].domain ? m->opsets[k].domain : "");
        par_pb_put_int(&e->w, 2, m->opsets[k].version);
        par_pb_end(&e->w, mark);
    }
    return 0;
}

static par_status finish(enc *e, int rc, uint8_t **out, size_t *len)
{
    if (!rc && e->w.oom) rc = fail(e, "out of memory");
    if (rc) {
        par_pb_writer_free(&e->w);
        return PAR_ERROR;
    }
    if (!e->w.buf) {
        /* an empty message (a tensor can be): still a buffer the caller frees */
        e->w.buf = malloc(1);
        if (!e->w.buf) {
            fail(e, "out of memory");
            return PAR_ERROR;
        }
    }
    *out = e->w.buf;
    *len = e->w.len;
    return PAR_OK;
}

par_status par_onnx_write(const par_onnx_model *m, uint8_t **out, size_t *len, par_msg *msg)
{
    enc e;
    memset(&e, 0, sizeof e);
    e.msg = msg;
    par_pb_writer_init(&e.w);
    if (!m || !out || !len) {
        par_msgf(msg, PAR_ERROR, "onnx write: no model");
        return PAR_ERROR;
    }
    return finish(&e, put_model(&e, m), out, len);
}

par_status par_onnx_tensor_write(const par_onnx_tensor *t, uint8_t **out, size_t *len, par_msg *msg)
{
    enc e;
    memset(&e, 0, sizeof e);
    e.msg = msg;
    par_pb_writer_init(&e.w);
    if (!t || !out || !len) {
        par_msgf(msg, PAR_ERROR, "onnx write: no tensor");
        return PAR_ERROR;
    }
    push(&e, "TensorProto", -1);
    return finish(&e, put_tensor_body(&e, t), out, len);
}

par_status par_onnx_save(const par_onnx_model *m, const char *path, par_msg *msg)
{
    uint8_t *buf;
    size_t len;
    if (par_onnx_write(m, &buf, &len, msg) != PAR_OK) {
        if (msg) {
            char t[PAR_MSG_LEN];
            snprintf(t, sizeof t, "%s", msg->text);
            par_msgf(msg, PAR_ERROR, "%s: %s", path, t);
        }
        return PAR_ERROR;
    }
    int rc = par_write_bytes_atomic(path, buf, len, msg);
    free(buf);
    return rc ? PAR_ERROR : PAR_OK;
}
