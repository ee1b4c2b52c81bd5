/*
 * case_edit.c - a case rebuilt with edits (case_edit.h). The new case is built value by value through the case
 * builder: first the inputs and constants that survive (in their original order, so the graph inputs keep their bind
 * order), then the kept nodes in their original (topological) order with their original names and attributes, then
 * the outputs. Nothing is patched in place: a graph is immutable once finalized.
 */
#include "case_edit.h"

#include <stdlib.h>
#include <string.h>

const par_tensor_src *par_case_src_of(const par_case *c, int32_t v)
{
    for (int32_t i = 0; i < c->n_srcs; i++)
        if (c->srcs[i].value == v) return &c->srcs[i];
    return NULL;
}

int64_t par_case_data_elems(const par_case *c)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    int64_t n = 0;
    for (int32_t v = 0; v < d->n_values; v++)
        if (d->values[v].kind != PAR_VALUE_NODE) n += d->values[v].numel;
    return n;
}

/* The value read in place of v: the substitution followed to its end (at most n steps, so a cycle ends). */
static int32_t resolve(const par_case_edit *e, int32_t n_values, int32_t v)
{
    if (!e->subst || v < 0) return v;
    for (int32_t step = 0; step < n_values && e->subst[v] != v && e->subst[v] >= 0 && e->subst[v] < n_values; step++)
        v = e->subst[v];
    return v;
}

/* Copy the leading block ndims of a row-major tensor of sdims (elements of es bytes) to dst. */
static void slice(const unsigned char *src, int32_t rank, const int64_t *sdims, const int64_t *ndims, size_t es,
                  unsigned char *dst)
{
    int64_t idx[PAR_MAX_RANK] = {0};
    int64_t n = par_shape_numel(rank, ndims);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int32_t i = 0; i < rank; i++) off = off * sdims[i] + idx[i];
        memcpy(dst + (size_t)k * es, src + (size_t)off * es, es);
        for (int32_t i = rank - 1; i >= 0; i--) {
            if (++idx[i] < ndims[i]) break;
            idx[i] = 0;
        }
    }
}

par_gen par_case_edit_fresh_gen(const par_value *val)
{
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
    switch (val->dtype) {
    case PAR_DTYPE_QU8: g.a = 0, g.b = 255; break;
    case PAR_DTYPE_QS8: g.a = -128, g.b = 127; break;
    case PAR_DTYPE_I32: g.a = -100, g.b = 100; break;
    case PAR_DTYPE_BOOL: g.a = 0, g.b = 1; break;
    default: break;
    }
    return g;
}

/* Add input or constant v of c to the new case nc with the edit's dims and generator; returns the new index. */
static int32_t add_source(par_case *nc, const par_case *c, const par_case_edit *e, int32_t v)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    const par_value *val = &d->values[v];
    const par_tensor_src *s = par_case_src_of(c, v);
    int is_const = val->kind == PAR_VALUE_CONST, cut = val->kind == PAR_VALUE_NODE;
    int64_t dims[PAR_MAX_RANK];
    memcpy(dims, val->dims, sizeof dims);
    if (e->dims && e->dims[(size_t)v * PAR_MAX_RANK] > 0) {
        for (int32_t i = 0; i < val->rank; i++) {
            int64_t nd = e->dims[(size_t)v * PAR_MAX_RANK + i];
            if (nd < 1 || nd > val->dims[i]) {
                par_msgf(&nc->err, PAR_ERROR, "'%s': dimension %d: %lld is not in 1..%lld", val->name, (int)i,
                         (long long)nd, (long long)val->dims[i]);
                nc->status = PAR_ERROR;
                return -1;
            }
            dims[i] = nd;
        }
    }
    int32_t nv = -1;
    const void *over = e->data ? e->data[v] : NULL;
    const par_gen *g = (e->gen && e->gen[v].dist) ? &e->gen[v] : (s && s->kind == PAR_SRC_GEN ? &s->gen : NULL);
    par_gen fresh;
    if (cut && !g) {
        fresh = par_case_edit_fresh_gen(val);
        g = &fresh;
    }
    if (g && !over) {
        nv = is_const ? par_case_const(nc, val->name, val->dtype, val->rank, dims, *g)
                      : par_case_input(nc, val->name, val->dtype, val->rank, dims, *g);
    } else {
        const void *data = over ? over : is_const ? val->data : (s ? s->data : NULL);
        if (!data) {
            par_msgf(&nc->err, PAR_ERROR, "'%s': no data to copy", val->name);
            nc->status = PAR_ERROR;
            return -1;
        }
        size_t es = par_dtype_size(val->dtype);
        void *buf = malloc((size_t)par_shape_numel(val->rank, dims) * es + 1);
        if (!buf) {
            par_msgf(&nc->err, PAR_ERROR, "out of memory");
            nc->status = PAR_ERROR;
            return -1;
        }
        slice(data, val->rank, val->dims, dims, es, buf);
        nv = is_const ? par_case_const_data(nc, val->name, val->dtype, val->rank, dims, buf)
                      : par_case_input_data(nc, val->name, val->dtype, val->rank, dims, buf);
        free(buf);
    }
    if (nv < 0) return -1;
    if (val->quant_axis >= 0 && val->channel_scales) {
        if (par_graph_set_channel_quant(nc->graph, nv, val->quant_axis, val->channel_scales, dims[val->quant_axis],
                                        &nc->err) != PAR_OK)
            return nc->status = PAR_ERROR, -1;
    } else if (val->dtype == PAR_DTYPE_QU8 || val->dtype == PAR_DTYPE_QS8 || val->dtype == PAR_DTYPE_I32) {
        par_case_quant(nc, nv, val->scale, val->zero_point);
    }
    return nc->status == PAR_OK ? nv : -1;
}

par_case *par_case_edited(const par_case *c, const par_case_edit *e, const char *id, par_msg *msg)
{
    if (!c || !c->graph || c->status != PAR_OK) {
        par_msgf(msg, PAR_ERROR, "case edit: not a valid case");
        return NULL;
    }
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    int32_t nvals = d->n_values;
    int32_t *map = malloc(sizeof *map * (size_t)(nvals ? nvals : 1));
    uint8_t *used = calloc((size_t)(nvals ? nvals : 1), 1);
    par_case *nc = par_case_create(id ? id : c->id, c->seed);
    if (!map || !used || !nc) {
        free(map);
        free(used);
        par_case_destroy(nc);
        par_msgf(msg, PAR_ERROR, "out of memory");
        return NULL;
    }
    for (int32_t v = 0; v < nvals; v++) map[v] = -1;
    nc->repeat = c->repeat;
    nc->timeout_s = c->timeout_s;
    if (c->origin) nc->origin = strdup(c->origin);
    if (c->description) nc->description = strdup(c->description);

    /* which nodes stay: kept, not cut off (every output an input), and with prune reaching an output */
    int32_t n_out = e->n_outputs > 0 ? e->n_outputs : d->n_outputs;
    const int32_t *outs = e->n_outputs > 0 ? e->outputs : d->outputs;
    uint8_t *live = malloc((size_t)(d->n_nodes ? d->n_nodes : 1));
    if (!live) {
        free(map);
        free(used);
        par_case_destroy(nc);
        par_msgf(msg, PAR_ERROR, "out of memory");
        return NULL;
    }
    for (int32_t k = 0; k < d->n_nodes; k++) {
        int all_cut = d->nodes[k].n_outputs > 0;
        for (int32_t j = 0; j < d->nodes[k].n_outputs; j++)
            all_cut &= e->as_input && e->as_input[d->nodes[k].outputs[j]];
        live[k] = (!e->keep || e->keep[k]) && !all_cut;
    }
    if (e->prune) {
        /* backwards from the outputs; a value read through a substitution is the value its reader sees */
        uint8_t *need = calloc((size_t)(nvals ? nvals : 1), 1);
        if (!need) {
            free(live);
            free(map);
            free(used);
            par_case_destroy(nc);
            par_msgf(msg, PAR_ERROR, "out of memory");
            return NULL;
        }
        for (int32_t i = 0; i < n_out; i++) {
            int32_t v = resolve(e, nvals, outs[i]);
            if (v >= 0 && v < nvals) need[v] = 1;
        }
        for (int32_t k = d->n_nodes - 1; k >= 0; k--) {
            int any = 0;
            for (int32_t j = 0; j < d->nodes[k].n_outputs; j++)
                any |= need[d->nodes[k].outputs[j]] && !(e->as_input && e->as_input[d->nodes[k].outputs[j]]);
            if (!live[k] || !any) {
                live[k] = 0;
                continue;
            }
            for (int32_t i = 0; i < d->nodes[k].n_inputs; i++) {
                int32_t v = resolve(e, nvals, d->nodes[k].inputs[i]);
                if (v >= 0 && v < nvals) need[v] = 1;
            }
        }
        free(need);
    }
    /* which values the kept nodes and the outputs read */
    for (int32_t k = 0; k < d->n_nodes; k++) {
        if (!live[k]) continue;
        for (int32_t i = 0; i < d->nodes[k].n_inputs; i++) {
            int32_t v = resolve(e, nvals, d->nodes[k].inputs[i]);
            if (v >= 0 && v < nvals) used[v] = 1;
        }
    }
    for (int32_t i = 0; i < n_out; i++) {
        int32_t v = resolve(e, nvals, outs[i]);
        if (v >= 0 && v < nvals) used[v] = 1;
    }
    for (int32_t v = 0; v < nvals && nc->status == PAR_OK; v++)
        if (used[v] && (d->values[v].kind != PAR_VALUE_NODE || (e->as_input && e->as_input[v])))
            map[v] = add_source(nc, c, e, v);

    for (int32_t k = 0; k < d->n_nodes && nc->status == PAR_OK; k++) {
        if (!live[k]) continue;
        const par_node *n = &d->nodes[k];
        int32_t ins[16];
        par_out_spec os[4];
        if (n->n_inputs > 16 || n->n_outputs > 4 || n->n_attrs > 32) {
            par_msgf(&nc->err, PAR_ERROR, "node '%s': too many inputs or outputs to edit", n->name);
            nc->status = PAR_ERROR;
            break;
        }
        for (int32_t i = 0; i < n->n_inputs; i++) {
            int32_t v = resolve(e, nvals, n->inputs[i]);
            ins[i] = v >= 0 ? map[v] : -1;
            if (v >= 0 && ins[i] < 0) {
                par_msgf(&nc->err, PAR_ERROR, "node '%s' reads '%s', which is not kept", n->name,
                         d->values[v].name);
                nc->status = PAR_ERROR;
            }
        }
        for (int32_t j = 0; j < n->n_outputs; j++) {
            const par_value *ov = &d->values[n->outputs[j]];
            os[j] = (par_out_spec){.name = ov->name, .dtype = ov->dtype, .scale = ov->scale,
                                   .zero_point = ov->zero_point};
        }
        if (nc->status != PAR_OK) break;
        par_attr attrs[32];
        int32_t na = 0;
        for (int32_t a = 0; a < n->n_attrs && na < 32; a++)
            if (!(e->drop_attr && e->drop_attr[0] == k && e->drop_attr[1] == a)) attrs[na++] = n->attrs[a];
        int32_t nk = par_graph_add_node(nc->graph, n->op, n->name, n->n_inputs, ins, na, attrs, os, &nc->err);
        if (nk < 0) {
            nc->status = PAR_ERROR;
            break;
        }
        const par_graph_desc *nd = par_graph_desc_of(nc->graph);
        /* an output made an input keeps the input (it was added first, under the output's name) */
        for (int32_t j = 0; j < n->n_outputs; j++)
            if (map[n->outputs[j]] < 0) map[n->outputs[j]] = nd->nodes[nk].outputs[j];
    }
    for (int32_t i = 0; i < n_out && nc->status == PAR_OK; i++) {
        int32_t v = resolve(e, nvals, outs[i]);
        if (v < 0 || v >= nvals || map[v] < 0) {
            par_msgf(&nc->err, PAR_ERROR, "output %d is not kept", (int)i);
            nc->status = PAR_ERROR;
            break;
        }
        /* the same value twice is one output */
        const par_graph_desc *nd = par_graph_desc_of(nc->graph);
        int dup = 0;
        for (int32_t j = 0; j < nd->n_outputs; j++) dup |= nd->outputs[j] == map[v];
        if (!dup) par_case_output(nc, map[v]);
    }
    free(live);
    free(map);
    free(used);
    if (par_case_finish(nc) != PAR_OK) {
        par_msgf(msg, PAR_ERROR, "%s", nc->err.text);
        par_case_destroy(nc);
        return NULL;
    }
    return nc;
}

par_case *par_case_copy(const par_case *c, const char *id, par_msg *msg)
{
    par_case_edit e = {0};
    return par_case_edited(c, &e, id, msg);
}
