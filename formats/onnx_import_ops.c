/*
 * onnx_import_ops.c - `parity import --ops`: each distinct (op, input shapes and dtypes, attributes) of an ONNX
 * model as an op case of its own, with the model's real weights. The whole graph is walked as an import does (so
 * shapes are known where parity can follow them), and before each mappable node is mapped, a one-node ONNX model is
 * built from it: its constant inputs as initializers with their real data, its other inputs as graph inputs of the
 * shapes found, its outputs as graph outputs. That model is imported like any other, so an op case is exactly what
 * the node means, and it runs even where the whole graph cannot (an op parity lacks elsewhere in the model).
 *
 * Must not: map ops itself (the importer does, through the same table).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

typedef struct ops_acc {
    par_case **cases;
    int32_t n, cap;
    char **keys;               /* the signature of each case kept: op, inputs (dtype, shape, constness), attributes */
    const par_import_opts *o;
    const char *base;          /* the model file's base name, for IDs */
    par_msg *msg;
} ops_acc;

/* Append text to the key (cut at len). */
static void key_add(char *k, size_t len, size_t *at, const char *text)
{
    if (*at < len) *at += (size_t)snprintf(k + *at, len - *at, "%s", text);
}

/* The signature of the current node: op type, each input's dtype, shape and whether it is constant (and, for small
 * constants, their values: a Reshape's shape is part of what the node does), every attribute. */
static void signature(ox_imp *im, char *k, size_t len)
{
    const par_onnx_node *n = im->node;
    size_t at = 0;
    char tmp[96];
    key_add(k, len, &at, n->op_type);
    for (int32_t i = 0; i < n->n_inputs; i++) {
        ox_val *x = n->inputs[i][0] ? ox_lookup(im, n->inputs[i]) : NULL;
        if (!x) {
            key_add(k, len, &at, "|-");
            continue;
        }
        snprintf(tmp, sizeof tmp, "|%d%s[", (int)x->dtype, x->is_const ? "c" : "");
        key_add(k, len, &at, tmp);
        for (int32_t d = 0; d < x->rank; d++) {
            snprintf(tmp, sizeof tmp, "%lld,", (long long)x->dims[d]);
            key_add(k, len, &at, tmp);
        }
        key_add(k, len, &at, "]");
        if (x->is_const && x->numel <= 16)
            for (int64_t e = 0; e < x->numel; e++) {
                snprintf(tmp, sizeof tmp, ":%.9g", x->floats ? (double)x->floats[e] : (double)x->ints[e]);
                key_add(k, len, &at, tmp);
            }
    }
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const par_onnx_attr *a = &n->attrs[i];
        snprintf(tmp, sizeof tmp, "|%.40s=%d:%lld:%.9g:%.40s", a->name, (int)a->type, (long long)a->i, (double)a->f,
                 a->s ? a->s : "");
        key_add(k, len, &at, tmp);
        for (int32_t e = 0; e < a->n && e < 16; e++) {
            snprintf(tmp, sizeof tmp, ",%lld/%.9g", a->ints ? (long long)a->ints[e] : 0LL,
                     a->floats ? (double)a->floats[e] : 0.0);
            key_add(k, len, &at, tmp);
        }
    }
}

/* A constant value as an ONNX tensor in m's arena: its own data when it has it, else its folded elements. */
static int const_tensor(par_onnx_model *m, const ox_val *x, par_onnx_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->name = x->name;
    t->rank = x->rank;
    memcpy(t->dims, x->dims, sizeof t->dims);
    t->numel = x->numel;
    size_t n = (size_t)(x->numel > 0 ? x->numel : 1);
    if (x->raw) {
        t->dtype = x->dtype;
        size_t bytes = n * par_onnx_dtype_size(x->dtype);
        t->data = par_onnx_alloc(m, bytes);
        if (!t->data) return -1;
        if (x->numel) memcpy(t->data, x->raw, (size_t)x->numel * par_onnx_dtype_size(x->dtype));
    } else if (x->floats) {
        t->dtype = PAR_ONNX_FLOAT;
        t->data = par_onnx_alloc(m, n * 4);
        if (!t->data) return -1;
        if (x->numel) memcpy(t->data, x->floats, (size_t)x->numel * 4);
    } else if (x->ints) {
        t->dtype = x->dtype == PAR_ONNX_BOOL ? PAR_ONNX_BOOL : PAR_ONNX_INT64;
        t->data = par_onnx_alloc(m, n * (t->dtype == PAR_ONNX_BOOL ? 1 : 8));
        if (!t->data) return -1;
        for (int64_t i = 0; i < x->numel; i++) {
            if (t->dtype == PAR_ONNX_BOOL) ((uint8_t *)t->data)[i] = x->ints[i] != 0;
            else memcpy((int64_t *)t->data + i, &x->ints[i], 8);
        }
    } else {
        return -1;
    }
    return 0;
}

static int each_node(const ox_job *job, ox_imp *im)
{
    ops_acc *acc = job->user;
    const par_onnx_node *n = im->node;
    char key[2048];
    signature(im, key, sizeof key);
    for (int32_t i = 0; i < acc->n; i++)
        if (strcmp(acc->keys[i], key) == 0) return 0;
    /* every input must be known: its shape found, or constant */
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (!n->inputs[i][0]) continue;
        ox_val *x = ox_lookup(im, n->inputs[i]);
        if (!x) return 0;
    }
    par_onnx_model *m = par_onnx_new();
    if (!m) return par_msgf(acc->msg, PAR_ERROR, "out of memory"), -1;
    m->ir_version = im->m->ir_version;
    m->opsets = im->m->opsets;
    m->n_opsets = im->m->n_opsets;
    par_onnx_graph *g = &m->graph;
    g->nodes = (par_onnx_node *)n;
    g->n_nodes = 1;
    g->initializers = par_onnx_alloc(m, sizeof *g->initializers * (size_t)(n->n_inputs + 1));
    g->inputs = par_onnx_alloc(m, sizeof *g->inputs * (size_t)(n->n_inputs + 1));
    g->outputs = par_onnx_alloc(m, sizeof *g->outputs * (size_t)(n->n_outputs + 1));
    int bad = !g->initializers || !g->inputs || !g->outputs;
    for (int32_t i = 0; !bad && i < n->n_inputs; i++) {
        if (!n->inputs[i][0]) continue;
        int seen = 0;
        for (int32_t j = 0; j < i; j++) seen |= strcmp(n->inputs[j], n->inputs[i]) == 0;
        if (seen) continue;
        ox_val *x = ox_lookup(im, n->inputs[i]);
        if (x->is_const) {
            if (const_tensor(m, x, &g->initializers[g->n_initializers++]) != 0) bad = 1;
            continue;
        }
        par_onnx_value_info *vi = &g->inputs[g->n_inputs++];
        memset(vi, 0, sizeof *vi);
        vi->name = x->name;
        vi->elem_type = x->dtype;
        vi->rank = x->rank;
        memcpy(vi->dims, x->dims, sizeof vi->dims);
    }
    for (int32_t k = 0; !bad && k < n->n_outputs; k++) {
        if (!n->outputs[k][0]) continue;
        par_onnx_value_info *vo = &g->outputs[g->n_outputs++];
        memset(vo, 0, sizeof *vo);
        vo->name = n->outputs[k];
        vo->rank = -1;
    }
    par_case *c = NULL;
    if (!bad) {
        char path[512];
        snprintf(path, sizeof path, "%.200s:%.80s(%.120s)", acc->base, n->op_type, n->name[0] ? n->name : n->outputs[0]);
        for (char *p = path; *p; p++)
            if (*p == '/') *p = '.';
        ox_job sub = {.path = path};
        par_import_info info;
        memset(&info, 0, sizeof info);
        par_msg m2 = {{0}};
        c = ox_import_model(m, &sub, acc->o, &info, &m2);
    }
    g->nodes = NULL; /* the node is the big model's */
    m->opsets = NULL;
    par_onnx_free(m);
    if (bad) return par_msgf(acc->msg, PAR_ERROR, "out of memory"), -1;
    if (!c) return 0; /* not expressible on its own: the whole import lists it */
    if (acc->n == acc->cap) {
        int32_t nc = acc->cap ? acc->cap * 2 : 32;
        par_case **pc = realloc(acc->cases, sizeof *pc * (size_t)nc);
        char **pk = realloc(acc->keys, sizeof *pk * (size_t)nc);
        if (pc) acc->cases = pc;
        if (pk) acc->keys = pk;
        if (!pc || !pk) return par_case_destroy(c), par_msgf(acc->msg, PAR_ERROR, "out of memory"), -1;
        acc->cap = nc;
    }
    acc->keys[acc->n] = strdup(key);
    acc->cases[acc->n++] = c;
    return 0;
}

par_status par_onnx_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                               par_import_info *info, par_msg *msg)
{
    par_import_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    msg->text[0] = 0;
    par_onnx_model *m = par_onnx_load(path, msg);
    if (!m) return PAR_ERROR;
    const char *base = strrchr(path, '/');
    char b[256];
    snprintf(b, sizeof b, "%s", base ? base + 1 : path);
    char *dot = strrchr(b, '.');
    if (dot) *dot = 0;
    ops_acc acc = {.o = o, .base = b, .msg = msg};
    ox_job job = {.path = path, .shapes = o ? o->input_shapes : NULL, .each = each_node, .user = &acc};
    par_case *ok = ox_import_model(m, &job, o, info, msg);
    par_onnx_free(m);
    for (int32_t i = 0; i < acc.n; i++) free(acc.keys[i]);
    free(acc.keys);
    if (!ok) {
        for (int32_t i = 0; i < acc.n; i++) par_case_destroy(acc.cases[i]);
        free(acc.cases);
        if (!msg->text[0]) par_msgf(msg, PAR_ERROR, "%s: cannot be imported", path);
        return PAR_ERROR;
    }
    *cases = acc.cases;
    *n = acc.n;
    return PAR_OK;
}
