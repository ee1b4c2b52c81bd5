/*
 * reduce_pass.c - the reducer's candidates (reduce_pass.h). Every candidate is one edit (case_edit.h) of the current
 * case, with nodes that then reach no output pruned. Candidates are enumerated lazily by index, so a pass over a
 * large case builds only the candidates actually tried. Within a pass the edits that remove the most come first
 * (the divergent node's prefix before single cuts, a dimension to 1 before halving it), as ddmin tries large
 * complements before small ones.
 */
#include "reduce_pass.h"
#include "case_edit.h"
#include "core/prng.h"
#include "core/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *par_rd_pass_name(par_rd_pass pass)
{
    static const char *const names[PAR_RD_PASS_COUNT] = {"outputs", "nodes", "attrs", "dims", "dim", "data"};
    return pass < PAR_RD_PASS_COUNT ? names[pass] : "?";
}

/* ---- outputs ------------------------------------------------------------------------------------------------- */

static par_case *outputs_cand(const par_case *cur, int32_t i, char *what, size_t wl, int *end)
{
    const par_graph_desc *d = par_graph_desc_of(cur->graph);
    int32_t n = d->n_outputs;
    if (n < 2 || i >= 2 * n) return *end = 1, NULL;
    int32_t outs[64];
    int32_t k = 0;
    if (n > 64) return *end = 1, NULL;
    if (i < n) {
        outs[k++] = d->outputs[i];
        snprintf(what, wl, "keep output '%s' alone", d->values[d->outputs[i]].name);
    } else {
        for (int32_t j = 0; j < n; j++)
            if (j != i - n) outs[k++] = d->outputs[j];
        snprintf(what, wl, "drop output '%s'", d->values[d->outputs[i - n]].name);
    }
    par_case_edit e = {.n_outputs = k, .outputs = outs, .prune = 1};
    par_msg m;
    return par_case_edited(cur, &e, NULL, &m);
}

/* ---- nodes --------------------------------------------------------------------------------------------------- */

/* Is value v a graph output of d? */
static int is_output(const par_graph_desc *d, int32_t v)
{
    for (int32_t j = 0; j < d->n_outputs; j++)
        if (d->outputs[j] == v) return 1;
    return 0;
}

static int same_type(const par_value *a, const par_value *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return 0;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

static par_case *nodes_cand(const par_case *cur, int32_t div_node, int32_t i, char *what, size_t wl, int *end)
{
    const par_graph_desc *d = par_graph_desc_of(cur->graph);
    par_msg m;
    int32_t idx = 0;
    /* 1. the prefix of the divergent node, when the graph holds more than it */
    if (div_node >= 0 && div_node < d->n_nodes) {
        int is_prefix = d->n_outputs == d->nodes[div_node].n_outputs && div_node == d->n_nodes - 1;
        for (int32_t j = 0; is_prefix && j < d->n_outputs; j++) is_prefix = d->outputs[j] == d->nodes[div_node].outputs[j];
        if (!is_prefix && idx++ == i) {
            snprintf(what, wl, "the prefix of node '%s'", d->nodes[div_node].name);
            par_case_edit e = {.n_outputs = d->nodes[div_node].n_outputs, .outputs = d->nodes[div_node].outputs,
                               .prune = 1};
            return par_case_edited(cur, &e, NULL, &m);
        }
    }
    /* 2. cut a node off: from the last to the first, skipping the divergent node and output producers */
    for (int32_t k = d->n_nodes - 1; k >= 0; k--) {
        const par_node *n = &d->nodes[k];
        int out = 0;
        for (int32_t j = 0; j < n->n_outputs; j++) out |= is_output(d, n->outputs[j]);
        if (out || k == div_node) continue;
        if (idx++ != i) continue;
        uint8_t *as_input = calloc((size_t)d->n_values, 1);
        if (!as_input) return NULL;
        for (int32_t j = 0; j < n->n_outputs; j++) as_input[n->outputs[j]] = 1;
        snprintf(what, wl, "cut node '%s' (%s): its output becomes an input", n->name, n->op);
        par_case_edit e = {.as_input = as_input, .prune = 1};
        par_case *r = par_case_edited(cur, &e, NULL, &m);
        free(as_input);
        return r;
    }
    /* 3. bypass a node: its consumers (and the outputs) read one of its inputs of the same shape and dtype */
    for (int32_t k = d->n_nodes - 1; k >= 0; k--) {
        const par_node *n = &d->nodes[k];
        if (n->n_outputs != 1) continue;
        const par_value *ov = &d->values[n->outputs[0]];
        for (int32_t j = 0; j < n->n_inputs; j++) {
            int32_t v = n->inputs[j];
            if (v < 0 || !same_type(&d->values[v], ov)) continue;
            if (idx++ != i) continue;
            int32_t *subst = malloc(sizeof *subst * (size_t)d->n_values);
            if (!subst) return NULL;
            for (int32_t t = 0; t < d->n_values; t++) subst[t] = t;
            subst[n->outputs[0]] = v;
            uint8_t *keep = malloc((size_t)d->n_nodes);
            if (!keep) return free(subst), NULL;
            memset(keep, 1, (size_t)d->n_nodes);
            keep[k] = 0;
            snprintf(what, wl, "bypass node '%s' (%s) through '%s'", n->name, n->op, d->values[v].name);
            par_case_edit e = {.keep = keep, .subst = subst, .prune = 1};
            par_case *r = par_case_edited(cur, &e, NULL, &m);
            free(subst);
            free(keep);
            return r;
        }
    }
    *end = 1;
    return NULL;
}

/* ---- attributes ---------------------------------------------------------------------------------------------- */

static int same_attr(const par_attr *a, const par_attr *b)
{
    if (a->type != b->type) return 0;
    switch (a->type) {
    case PAR_ATTR_INT: return a->i == b->i;
    case PAR_ATTR_FLOAT: return a->f == b->f || (a->f != a->f && b->f != b->f);
    case PAR_ATTR_STRING: return strcmp(a->s ? a->s : "", b->s ? b->s : "") == 0;
    case PAR_ATTR_INTS:
        if (a->count != b->count) return 0;
        for (int32_t i = 0; i < a->count; i++)
            if (a->ints[i] != b->ints[i]) return 0;
        return 1;
    case PAR_ATTR_FLOATS:
        if (a->count != b->count) return 0;
        for (int32_t i = 0; i < a->count; i++)
            if (a->floats[i] != b->floats[i]) return 0;
        return 1;
    }
    return 0;
}

static par_case *attrs_cand(const par_case *cur, int32_t i, char *what, size_t wl, int *end)
{
    const par_graph_desc *d = par_graph_desc_of(cur->graph);
    int32_t idx = 0;
    for (int32_t k = 0; k < d->n_nodes; k++) {
        const par_node *n = &d->nodes[k];
        for (int32_t a = 0; a < n->n_attrs; a++) {
            if (idx++ != i) continue;
            int32_t drop[2] = {k, a};
            par_case_edit e = {.drop_attr = drop, .prune = 1};
            par_msg m;
            par_case *r = par_case_edited(cur, &e, NULL, &m);
            if (!r) return NULL;
            /* an attribute already at its default gives the same node: no candidate */
            const par_graph_desc *rd = par_graph_desc_of(r->graph);
            for (int32_t t = 0; t < rd->n_nodes; t++) {
                if (strcmp(rd->nodes[t].name, n->name) != 0) continue;
                const par_attr *now = par_node_attr(&rd->nodes[t], n->attrs[a].name);
                if (now && same_attr(now, &n->attrs[a])) {
                    par_case_destroy(r);
                    return NULL;
                }
            }
            snprintf(what, wl, "node '%s' (%s): attribute '%s' to its default", n->name, n->op, n->attrs[a].name);
            return r;
        }
    }
    *end = 1;
    return NULL;
}

/* ---- dimensions ---------------------------------------------------------------------------------------------- */

/* The smaller values tried for a dimension of size n: 1, n / 2, n - 1 (distinct, in that order); returns how many. */
static int shrink_steps(int64_t n, int64_t out[3])
{
    int k = 0;
    if (n <= 1) return 0;
    out[k++] = 1;
    if (n / 2 > 1) out[k++] = n / 2;
    if (n - 1 > 1 && n - 1 != n / 2) out[k++] = n - 1;
    return k;
}

static int is_source(const par_value *v)
{
    return v->kind == PAR_VALUE_INPUT || v->kind == PAR_VALUE_CONST;
}

/* The edit of dims: every source's dims as they are, then the caller changes some. NULL when out of memory. */
static int64_t *dims_table(const par_graph_desc *d)
{
    int64_t *t = calloc((size_t)d->n_values * PAR_MAX_RANK, sizeof *t);
    if (!t) return NULL;
    for (int32_t v = 0; v < d->n_values; v++)
        if (is_source(&d->values[v]))
            for (int32_t a = 0; a < d->values[v].rank; a++) t[(size_t)v * PAR_MAX_RANK + a] = d->values[v].dims[a];
    return t;
}

static par_case *with_dims(const par_case *cur, int64_t *t)
{
    par_case_edit e = {.dims = t, .prune = 1};
    par_msg m;
    par_case *r = par_case_edited(cur, &e, NULL, &m);
    free(t);
    return r;
}

static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

static par_case *dims_all_cand(const par_case *cur, int32_t i, char *what, size_t wl, int *end)
{
    const par_graph_desc *d = par_graph_desc_of(cur->graph);
    /* the distinct dimension values > 1, largest first */
    int64_t vals[256];
    int32_t nv = 0;
    for (int32_t v = 0; v < d->n_values; v++) {
        if (!is_source(&d->values[v])) continue;
        for (int32_t a = 0; a < d->values[v].rank; a++) {
            int64_t x = d->values[v].dims[a];
            int seen = x <= 1;
            for (int32_t j = 0; j < nv && !seen; j++) seen = vals[j] == x;
            if (!seen && nv < 256) vals[nv++] = x;
        }
    }
    qsort(vals, (size_t)nv, sizeof vals[0], cmp_desc);
    int32_t idx = 0;
    for (int32_t j = 0; j < nv; j++) {
        int64_t steps[3];
        int ns = shrink_steps(vals[j], steps);
        for (int s = 0; s < ns; s++) {
            if (idx++ != i) continue;
            int64_t *t = dims_table(d);
            if (!t) return NULL;
            for (int32_t k = 0; k < d->n_values * PAR_MAX_RANK; k++)
                if (t[k] == vals[j]) t[k] = steps[s];
            snprintf(what, wl, "dimension %lld -> %lld everywhere", (long long)vals[j], (long long)steps[s]);
            return with_dims(cur, t);
        }
    }
    *end = 1;
    return NULL;
}

static par_case *dims_one_cand(const par_case *cur, int32_t i, char *what, size_t wl, int *end)
{
    const par_graph_desc *d = par_graph_desc_of(cur->graph);
    int32_t idx = 0;
    for (int32_t v = 0; v < d->n_values; v++) {
        const par_value *val = &d->values[v];
        if (!is_source(val)) continue;
        for (int32_t a = 0; a < val->rank; a++) {
            int64_t steps[3];
            int ns = shrink_steps(val->dims[a], steps);
            for (int s = 0; s < ns; s++) {
                if (idx++ != i) continue;
                int64_t *t = dims_table(d);
                if (!t) return NULL;
                t[(size_t)v * PAR_MAX_RANK + a] = steps[s];
                snprintf(what, wl, "'%s' dimension %d: %lld -> %lld", val->name, (int)a, (long long)val->dims[a],
                         (long long)steps[s]);
                return with_dims(cur, t);
            }
        }
    }
    *end = 1;
    return NULL;
}

/* ---- data ---------------------------------------------------------------------------------------------------- */

/* How simple a source's data is: 3 constant 0 (or the zero point), 2 constant 1, 1 integers in [-2, 2] (real
 * values; around the zero point for integer dtypes), 0 anything else. */
static int data_level(const par_case *cur, const par_value *val, int32_t v)
{
    const par_tensor_src *s = par_case_src_of(cur, v);
    int quant = val->dtype == PAR_DTYPE_QU8 || val->dtype == PAR_DTYPE_QS8 || val->dtype == PAR_DTYPE_I32;
    double z = quant ? val->zero_point : 0;
    if (s && s->kind == PAR_SRC_GEN && s->gen.dist == PAR_DIST_CONST) {
        if (s->gen.a == z) return 3;
        if (s->gen.a == z + 1) return 2;
    }
    const void *data = val->kind == PAR_VALUE_CONST ? val->data : (s ? s->data : NULL);
    if (!data) {
        /* a generated input: integers only from an integer uniform generator of the small range */
        return s && s->gen.dist == PAR_DIST_UNIFORM && quant && s->gen.a >= z - 2 && s->gen.b <= z + 2 ? 1 : 0;
    }
    int zero = 1, one = 1;
    for (int64_t k = 0; k < val->numel; k++) {
        double x = par_elem_get(val->dtype, data, k) - z;
        if (!(x >= -2 && x <= 2 && x == (double)(int64_t)x)) return 0;
        zero &= x == 0;
        one &= x == 1;
    }
    return zero ? 3 : one ? 2 : 1;
}

static par_case *data_cand(const par_case *cur, int32_t i, char *what, size_t wl, int *end)
{
    const par_graph_desc *d = par_graph_desc_of(cur->graph);
    int32_t idx = 0;
    for (int32_t v = 0; v < d->n_values; v++) {
        const par_value *val = &d->values[v];
        if (!is_source(val) || val->dtype == PAR_DTYPE_BOOL) continue;
        int level = data_level(cur, val, v);
        for (int target = 3; target > level; target--) {
            if (idx++ != i) continue;
            int quant = val->dtype == PAR_DTYPE_QU8 || val->dtype == PAR_DTYPE_QS8 || val->dtype == PAR_DTYPE_I32;
            double z = quant ? val->zero_point : 0;
            const par_tensor_src *s = par_case_src_of(cur, v);
            uint64_t seed = s && s->kind == PAR_SRC_GEN ? s->gen.seed : par_case_derive_seed(val->name, cur->seed);
            par_gen *gens = calloc((size_t)d->n_values, sizeof *gens);
            const void **datas = calloc((size_t)d->n_values, sizeof *datas);
            void *buf = NULL;
            par_case *r = NULL;
            if (!gens || !datas) goto out;
            if (target >= 2 || quant) {
                gens[v] = (par_gen){.dist = target >= 2 ? PAR_DIST_CONST : PAR_DIST_UNIFORM,
                                    .a = target == 3 ? z : target == 2 ? z + 1 : z - 2, .b = z + 2, .seed = seed};
            } else {
                /* real dtypes: the uniform generator draws reals, so the integers are drawn here, inline */
                buf = malloc((size_t)val->numel * par_dtype_size(val->dtype) + 1);
                if (!buf) goto out;
                par_prng rng;
                par_prng_seed(&rng, seed);
                for (int64_t k = 0; k < val->numel; k++) par_elem_set(val->dtype, buf, k, (double)par_prng_int(&rng, -2, 2));
                datas[v] = buf;
            }
            snprintf(what, wl, "'%s' data: %s", val->name,
                     target == 3 ? "constant 0" : target == 2 ? "constant 1" : "integers in [-2, 2]");
            par_case_edit e = {.gen = gens, .data = (const void *const *)datas, .prune = 1};
            par_msg m;
            r = par_case_edited(cur, &e, NULL, &m);
        out:
            free(gens);
            free(datas);
            free(buf);
            return r;
        }
    }
    *end = 1;
    return NULL;
}

par_case *par_rd_candidate(const par_case *cur, par_rd_pass pass, int32_t div_node, int32_t i, char *what,
                           size_t what_len, int *end)
{
    *end = 0;
    what[0] = '\0';
    switch (pass) {
    case PAR_RD_OUTPUTS: return outputs_cand(cur, i, what, what_len, end);
    case PAR_RD_NODES: return nodes_cand(cur, div_node, i, what, what_len, end);
    case PAR_RD_ATTRS: return attrs_cand(cur, i, what, what_len, end);
    case PAR_RD_DIMS_ALL: return dims_all_cand(cur, i, what, what_len, end);
    case PAR_RD_DIMS_ONE: return dims_one_cand(cur, i, what, what_len, end);
    case PAR_RD_DATA: return data_cand(cur, i, what, what_len, end);
    default: *end = 1; return NULL;
    }
}
