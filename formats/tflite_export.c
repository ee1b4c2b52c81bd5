/*
 * tflite_export.c - a parity case as a TFLite model: the inverse of tflite_import.c through the same op table
 * (tflite.c), one subgraph, constants as buffers, the case's inputs as the model's inputs. This file is the driver
 * (the model, node by node); the op writers are tflite_export_ops.c, their building blocks (tensors, buffers,
 * quantization, operators, layouts) tflite_export_util.c, and tflite_export_int.h what the three share.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tflite_export_int.h"

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
    for (int32_t k = 0; k < e.g->n_nodes && e.st == PAR_OK; k++) { /* int16 activations: no form here */
        const par_node *n = &e.g->nodes[k];
        for (int32_t i = -n->n_outputs; i < n->n_inputs; i++) {
            const int32_t v = i < 0 ? n->outputs[-1 - i] : n->inputs[i];
            if (v >= 0 && e.g->values[v].dtype == PAR_DTYPE_QS16) {
                e.node = k;
                fail(&e, PAR_UNSUPPORTED, "qs16 tensors (no int16 form here)");
                break;
            }
        }
    }
    e.node = -1;
    if (e.st != PAR_OK) goto done;
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
