/*
 * case.c - the case builder (sticky error) and the materialization of a case's inputs. The generators are in
 * case_gen.c, the JSON writer in case_write.c, the reader in case_json.c.
 *
 * Must not: validate graphs (graph.c does arity, attributes and shapes), or allocate before a tensor's size is
 * known to be sane.
 */
#include "case.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "prng.h"
#include "tensor.h"

/* ------------------------------------------------------------------------------------------------------------------
 * Builder
 * ---------------------------------------------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int32_t fail(par_case *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.text, sizeof c->err.text, fmt, ap);
    va_end(ap);
    c->status = PAR_ERROR;
    return -1;
}

static int live(par_case *c)
{
    return c && c->status == PAR_OK && c->graph;
}

/* The seed of a generator whose seed is 0: derived from the tensor's name and the case seed, never 0. */
uint64_t par_case_derive_seed(const char *name, uint64_t case_seed)
{
    uint64_t s = par_hash_str(name, case_seed);
    return s ? s : 1;
}

/* Shape checks shared by the builders, before the graph sees the tensor: the graph repeats them, but the size must
 * be known to be sane before this file allocates numel * size bytes. */
static int check_tensor(par_case *c, const char *what, const char *name, par_dtype dt, int32_t rank,
                        const int64_t *dims)
{
    if (!name || !*name) return fail(c, "%s: missing name", what), 0;
    if (dt != PAR_DTYPE_F32 && dt != PAR_DTYPE_F16 && dt != PAR_DTYPE_QU8 && dt != PAR_DTYPE_QS8 &&
        dt != PAR_DTYPE_QS16 && dt != PAR_DTYPE_I32 && dt != PAR_DTYPE_BOOL)
        return fail(c, "%s '%.60s': dtype %s is not a case dtype", what, name, par_dtype_name(dt)), 0;
    if (rank < 0 || rank > PAR_MAX_RANK || (rank > 0 && !dims))
        return fail(c, "%s '%.60s': rank %d is outside 0..%d", what, name, (int)rank, PAR_MAX_RANK), 0;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return fail(c, "%s '%.60s': dimension %d is %lld; must be >= 1", what, name, (int)i, (long long)dims[i]),
                   0;
        if (dims[i] > PAR_CASE_MAX_ELEMS || n > PAR_CASE_MAX_ELEMS / dims[i])
            return fail(c, "%s '%.60s': more than %lld elements", what, name, (long long)PAR_CASE_MAX_ELEMS), 0;
        n *= dims[i];
    }
    return 1;
}

static par_tensor_src *push_src(par_case *c)
{
    par_tensor_src *s = realloc(c->srcs, sizeof *s * (size_t)(c->n_srcs + 1));
    if (!s) return NULL;
    c->srcs = s;
    memset(&s[c->n_srcs], 0, sizeof *s);
    return &s[c->n_srcs];
}

/* The checks of an input or constant (what) filled by a generator: the tensor, the generator for dt, and its seed
 * derived from the name when it has none. 0 with the case failed. */
static int check_gen(par_case *c, const char *what, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                     par_gen *gen)
{
    if (!live(c) || !check_tensor(c, what, name, dt, rank, dims)) return 0;
    par_msg m;
    if (par_gen_check(gen, dt, &m) != PAR_OK) return fail(c, "%s '%.60s': init: %s", what, name, m.text), 0;
    if (gen->seed == 0) gen->seed = par_case_derive_seed(name, c->seed);
    return 1;
}

/* Complete the source s (the one push_src gave) of value v, filled by gen; returns v. */
static int32_t keep_gen_src(par_case *c, par_tensor_src *s, int32_t v, const par_gen *gen)
{
    s->value = v;
    s->kind = PAR_SRC_GEN;
    s->gen = *gen;
    c->n_srcs++;
    return v;
}

static size_t tensor_bytes(par_dtype dt, int32_t rank, const int64_t *dims)
{
    size_t n = (size_t)par_shape_numel(rank, dims) * par_dtype_size(dt);
    return n ? n : 1;
}

par_case *par_case_create(const char *id, uint64_t seed)
{
    par_case *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->id = strdup(id ? id : "");
    c->graph = par_graph_create(id && *id ? id : "case");
    if (!c->id || !c->graph) {
        par_case_destroy(c);
        return NULL;
    }
    c->seed = seed;
    c->status = PAR_OK;
    return c;
}

void par_case_destroy(par_case *c)
{
    if (!c) return;
    for (int32_t i = 0; i < c->n_srcs; i++) {
        free(c->srcs[i].data);
        free(c->srcs[i].file);
    }
    free(c->srcs);
    if (c->expected && c->graph) {
        const par_graph_desc *d = par_graph_desc_of(c->graph);
        for (int32_t k = 0; k < d->n_outputs; k++) free(c->expected[k]);
    }
    free(c->expected);
    par_graph_destroy(c->graph);
    free(c->id);
    free(c->origin);
    free(c->description);
    free(c);
}

int32_t par_case_input(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims, par_gen gen)
{
    if (!check_gen(c, "input", name, dt, rank, dims, &gen)) return -1;
    par_tensor_src *s = push_src(c);
    if (!s) return fail(c, "out of memory");
    int32_t v = par_graph_add_input(c->graph, name, dt, rank, dims, &c->err);
    if (v < 0) return c->status = PAR_ERROR, -1;
    return keep_gen_src(c, s, v, &gen);
}

int32_t par_case_input_data(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data)
{
    if (!live(c) || !check_tensor(c, "input", name, dt, rank, dims)) return -1;
    if (!data) return fail(c, "input '%.60s': no data", name);
    size_t bytes = tensor_bytes(dt, rank, dims);
    void *copy = malloc(bytes);
    par_tensor_src *s = copy ? push_src(c) : NULL;
    if (!s) return free(copy), fail(c, "out of memory");
    memcpy(copy, data, (size_t)par_shape_numel(rank, dims) * par_dtype_size(dt));
    int32_t v = par_graph_add_input(c->graph, name, dt, rank, dims, &c->err);
    if (v < 0) return free(copy), c->status = PAR_ERROR, -1;
    s->value = v;
    s->kind = PAR_SRC_INLINE;
    s->data = copy;
    c->n_srcs++;
    return v;
}

int32_t par_case_const(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims, par_gen gen)
{
    if (!check_gen(c, "constant", name, dt, rank, dims, &gen)) return -1;
    void *buf = malloc(tensor_bytes(dt, rank, dims));
    par_tensor_src *s = buf ? push_src(c) : NULL;
    if (!s) return free(buf), fail(c, "out of memory");
    par_gen_fill(&gen, dt, rank, dims, buf);
    int32_t v = par_graph_add_const(c->graph, name, dt, rank, dims, buf, &c->err);
    free(buf);
    if (v < 0) return c->status = PAR_ERROR, -1;
    return keep_gen_src(c, s, v, &gen);
}

int32_t par_case_const_data(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data)
{
    if (!live(c) || !check_tensor(c, "constant", name, dt, rank, dims)) return -1;
    if (!data) return fail(c, "constant '%.60s': no data", name);
    par_tensor_src *s = push_src(c);
    if (!s) return fail(c, "out of memory");
    int32_t v = par_graph_add_const(c->graph, name, dt, rank, dims, data, &c->err);
    if (v < 0) return c->status = PAR_ERROR, -1;
    s->value = v;
    s->kind = PAR_SRC_INLINE; /* the data lives in the graph */
    c->n_srcs++;
    return v;
}

void par_case_quant(par_case *c, int32_t value, float scale, int32_t zero_point)
{
    if (!live(c)) return;
    if (par_graph_set_quant(c->graph, value, scale, zero_point, &c->err) != PAR_OK) c->status = PAR_ERROR;
}

int32_t par_case_node(par_case *c, const char *op, int32_t n_inputs, const int32_t *inputs, int32_t n_attrs,
                      const par_attr *attrs, const par_out_spec *out)
{
    if (!live(c)) return -1;
    if (!op) return fail(c, "node: missing op");
    if (n_inputs < 0 || (n_inputs > 0 && !inputs) || n_attrs < 0 || (n_attrs > 0 && !attrs))
        return fail(c, "node (%.60s): bad input or attribute list", op);
    int32_t k = par_graph_add_node(c->graph, op, NULL, n_inputs, inputs, n_attrs, attrs, out, &c->err);
    if (k < 0) return c->status = PAR_ERROR, -1;
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    return d->nodes[k].outputs[0];
}

void par_case_output(par_case *c, int32_t value)
{
    if (!live(c)) return;
    if (par_graph_mark_output(c->graph, value, &c->err) != PAR_OK) c->status = PAR_ERROR;
}

par_status par_case_finish(par_case *c)
{
    if (!c) return PAR_ERROR;
    if (!live(c)) {
        if (c->status == PAR_OK) return fail(c, "case has no graph"), PAR_ERROR;
        return c->status;
    }
    if (par_graph_finalize(c->graph, &c->err) != PAR_OK) c->status = PAR_ERROR;
    return c->status;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Materialization
 * ---------------------------------------------------------------------------------------------------------------- */

par_status par_case_make_inputs(const par_case *c, void ***bufs, par_msg *msg)
{
    *bufs = NULL;
    if (!c || !c->graph || c->status != PAR_OK)
        return par_msgf(msg, PAR_ERROR, "case '%s': not a valid case", c && c->id ? c->id : "?");
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    void **out = calloc((size_t)(d->n_inputs ? d->n_inputs : 1), sizeof *out);
    if (!out) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int32_t i = 0; i < d->n_inputs; i++) {
        const par_value *v = &d->values[d->inputs[i]];
        const par_tensor_src *s = NULL;
        for (int32_t k = 0; k < c->n_srcs && !s; k++)
            if (c->srcs[k].value == d->inputs[i]) s = &c->srcs[k];
        size_t bytes = (size_t)v->numel * par_dtype_size(v->dtype);
        out[i] = malloc(bytes ? bytes : 1);
        if (!out[i] || !s || (s->kind != PAR_SRC_GEN && !s->data)) {
            par_status st = out[i] ? par_msgf(msg, PAR_ERROR, "case '%s': input '%s' has no data source", c->id,
                                              v->name)
                                   : par_msgf(msg, PAR_ERROR, "out of memory for input '%s'", v->name);
            for (int32_t k = 0; k <= i; k++) free(out[k]);
            free(out);
            return st;
        }
        if (s->kind == PAR_SRC_GEN) par_gen_fill(&s->gen, v->dtype, v->rank, v->dims, out[i]);
        else memcpy(out[i], s->data, bytes);
    }
    *bufs = out;
    return PAR_OK;
}

void par_case_free_inputs(const par_case *c, void **bufs)
{
    if (!bufs) return;
    const par_graph_desc *d = c && c->graph ? par_graph_desc_of(c->graph) : NULL;
    for (int32_t i = 0; d && i < d->n_inputs; i++) free(bufs[i]);
    free(bufs);
}
