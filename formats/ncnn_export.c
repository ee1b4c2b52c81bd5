/*
 * ncnn_export.c - a parity graph as an ncnn model (ncnn.h): the driver. One Input layer per graph input (blob
 * "in<i>"), each node through its op writer (ncnn_export_ops.c), then the .param's header (magic 7767517, the
 * layer and blob counts) and the manifest that tells a runner which blob is which graph input and output and how
 * parity's shape maps onto ncnn's (ncnn_export_int.h: the batch of 1 dropped).
 *
 * Refused with the reason (PAR_UNSUPPORTED naming the node): a tensor that is not f32 (ncnn's blobs are float; its
 * int8 path quantizes with its own per-layer scales and no zero points, not parity's asymmetric quantization), a
 * batch other than 1, and what an op writer refuses (docs/formats.md).
 *
 * Must not: know any op (the writers do); write anything but through core/files.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/graph.h"
#include "formats/ncnn.h"
#include "formats/ncnn_export_int.h"

static void nx_free(nx *e)
{
    free(e->param.p);
    free(e->bin.p);
    free(e->split);
    free(e->nsplit);
    free(e->blob);
}

/* Every tensor a node touches is f32 and has an ncnn shape. */
static int check_node(nx *e, const par_node *n)
{
    e->node = n;
    for (int32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
        int32_t vi = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
        if (vi < 0) continue;
        const par_value *v = &e->g->values[vi];
        nx_shape s;
        if (v->dtype != PAR_DTYPE_F32)
            return no(e, "'%s' is %s: ncnn's blobs are f32 (its int8 path has its own per-layer scales, without "
                         "zero points)", v->name, par_dtype_name(v->dtype));
        if (v->kind != PAR_VALUE_CONST && !shape_of(e, v, &s)) return 0;
    }
    return 1;
}

static int shape_json(nx_buf *b, const int64_t *d, int32_t r)
{
    char t[32];
    if (!par_nx_put(b, "[", 1)) return 0;
    for (int32_t i = 0; i < r; i++) {
        int n = snprintf(t, sizeof t, "%s%lld", i ? ", " : "", (long long)d[i]);
        if (!par_nx_put(b, t, (size_t)n)) return 0;
    }
    return par_nx_put(b, "]", 1);
}

/* {"blob": NAME, "shape": [parity's], "ncnn": [ncnn's, outer-first]} */
static int io_json(nx *e, nx_buf *b, const char *blob, int32_t vi, int first)
{
    const par_value *v = &e->g->values[vi];
    nx_shape s;
    char t[128];
    if (!shape_of(e, v, &s)) return 0;
    int n = snprintf(t, sizeof t, "%s{\"blob\": \"%s\", \"shape\": ", first ? "" : ", ", blob);
    return par_nx_put(b, t, (size_t)n) && shape_json(b, v->dims, v->rank) && par_nx_put(b, ", \"ncnn\": ", 10) &&
           shape_json(b, s.d, s.r) && par_nx_put(b, "}", 1);
}

/* Inputs, nodes, outputs; on success the graph outputs' blob names in outs (n_outputs x 48). */
static int walk(nx *e, char (*outs)[48])
{
    const par_graph_desc *g = e->g;
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++) {
            int32_t vi = g->nodes[i].inputs[k];
            if (vi >= 0 && g->values[vi].kind != PAR_VALUE_CONST) e->nsplit[vi]++;
        }
    for (int32_t i = 0; i < g->n_outputs; i++) e->nsplit[g->outputs[i]]++;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int32_t vi = g->inputs[i];
        const par_value *v = &g->values[vi];
        nx_shape s;
        char lname[48];
        if (v->dtype != PAR_DTYPE_F32)
            return no(e, "input '%s' is %s: ncnn's blobs are f32", v->name, par_dtype_name(v->dtype));
        if (!shape_of(e, v, &s)) return 0;
        snprintf(e->blob[vi], sizeof e->blob[vi], "in%d", (int)i);
        const char *out[1] = {e->blob[vi]};
        snprintf(lname, sizeof lname, "input%d", (int)i);
        if (!layer(e, "Input", lname, 0, NULL, 1, out) || !shape_params(e, &s) || !end_layer(e)) return 0;
    }
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (!check_node(e, &g->nodes[i]) || !par_nx_node(e, &g->nodes[i])) return 0;
    e->node = NULL;
    for (int32_t i = 0; i < g->n_outputs; i++) {
        const par_value *v = &g->values[g->outputs[i]];
        if (v->dtype != PAR_DTYPE_F32)
            return no(e, "output '%s' is %s: ncnn's blobs are f32", v->name, par_dtype_name(v->dtype));
        const char *b = in_blob(e, g->outputs[i]);
        if (!b) return 0;
        snprintf(outs[i], 48, "%s", b);
    }
    return 1;
}

/* The .param text (header and layers) into *param, the .bin into *bin, the manifest line into *man. */
static par_status export_parts(const par_graph_desc *g, nx_buf *param, nx_buf *bin, nx_buf *man, par_msg *msg)
{
    nx e = {.g = g, .msg = msg, .st = PAR_OK};
    int32_t nv = g->n_values ? g->n_values : 1;
    e.split = malloc(sizeof *e.split * (size_t)nv);
    e.nsplit = calloc((size_t)nv, sizeof *e.nsplit);
    e.blob = calloc((size_t)nv, sizeof *e.blob);
    char (*outs)[48] = calloc((size_t)(g->n_outputs ? g->n_outputs : 1), sizeof *outs);
    if (!e.split || !e.nsplit || !e.blob || !outs) {
        nx_free(&e);
        free(outs);
        return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    for (int32_t i = 0; i < nv; i++) e.split[i] = -1;
    msg->text[0] = '\0';
    int ok = walk(&e, outs);
    char head[64];
    int n = snprintf(head, sizeof head, "7767517\n%d %d\n", (int)e.n_layers, (int)e.n_blobs);
    ok = ok && par_nx_put(param, head, (size_t)n) && par_nx_put(param, e.param.p ? e.param.p : "", e.param.len);
    ok = ok && par_nx_put(bin, "", 0) && (!e.bin.len || par_nx_put(bin, e.bin.p, e.bin.len));
    char t[128];
    n = snprintf(t, sizeof t, "{\"parity_ncnn\": 1, \"param\": %zu, \"bin\": %zu, \"inputs\": [", param->len,
                 bin->len);
    ok = ok && par_nx_put(man, t, (size_t)n);
    for (int32_t i = 0; ok && i < g->n_inputs; i++) ok = io_json(&e, man, e.blob[g->inputs[i]], g->inputs[i], !i);
    ok = ok && par_nx_put(man, "], \"outputs\": [", 15);
    for (int32_t i = 0; ok && i < g->n_outputs; i++) ok = io_json(&e, man, outs[i], g->outputs[i], !i);
    ok = ok && par_nx_put(man, "]}\n", 3);
    par_status st = ok ? PAR_OK : e.st != PAR_OK ? e.st : par_msgf(msg, PAR_ERROR, "out of memory");
    nx_free(&e);
    free(outs);
    return st;
}

par_status par_ncnn_export_graph(const par_graph_desc *g, uint8_t **buf, size_t *len, par_msg *msg)
{
    nx_buf param = {0}, bin = {0}, man = {0};
    *buf = NULL;
    *len = 0;
    par_status st = export_parts(g, &param, &bin, &man, msg);
    if (st == PAR_OK && (!par_nx_put(&man, param.p, param.len) || (bin.len && !par_nx_put(&man, bin.p, bin.len))))
        st = par_msgf(msg, PAR_ERROR, "out of memory");
    free(param.p);
    free(bin.p);
    if (st != PAR_OK) {
        free(man.p);
        return st;
    }
    *buf = (uint8_t *)man.p;
    *len = man.len;
    return PAR_OK;
}

par_status par_ncnn_export(const par_case *c, const char *path, par_msg *msg)
{
    nx_buf param = {0}, bin = {0}, man = {0};
    par_status st = export_parts(par_graph_desc_of(c->graph), &param, &bin, &man, msg);
    char binpath[4096];
    size_t n = strlen(path);
    if (n > 6 && !strcmp(path + n - 6, ".param")) n -= 6;
    snprintf(binpath, sizeof binpath, "%.*s.bin", (int)n, path);
    if (st == PAR_OK && (par_write_bytes_atomic(path, param.p, param.len, msg) ||
                         par_write_bytes_atomic(binpath, bin.p ? bin.p : "", bin.len, msg)))
        st = PAR_ERROR;
    free(param.p);
    free(bin.p);
    free(man.p);
    return st;
}
