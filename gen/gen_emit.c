/*
 * gen_emit.c - the generator's value pool and its checked node emitter. A constraint function proposes a node (its
 * inputs: existing values or new tensors; its attributes); gen_emit runs the op's own shape function on it first
 * (core/shape_*.c through the op table, defaults filled in as the graph builder does) and refuses a node that is
 * invalid or whose output exceeds max_elems, so the builder is only ever given nodes it accepts and a refused attempt
 * leaves no tensor behind. It also keeps, per value, whether it is an f32 activation later nodes may consume, a rough
 * magnitude bound and whether it is positive (for sqrt, rsqrt and divisors).
 */
#include <math.h>
#include <stdlib.h>

#include "gen/gen_int.h"

int gen_ctx_init(gen_ctx *g, gen_src *src, par_case *c, const par_fuzz_opts *o)
{
    memset(g, 0, sizeof *g);
    g->src = src;
    g->c = c;
    g->o = o;
    g->cap = 64;
    g->flags = calloc((size_t)g->cap, 1);
    g->mag = calloc((size_t)g->cap, sizeof *g->mag);
    g->uses = calloc((size_t)g->cap, sizeof *g->uses);
    return g->flags && g->mag && g->uses;
}

void gen_ctx_free(gen_ctx *g)
{
    free(g->flags);
    free(g->mag);
    free(g->uses);
    g->flags = NULL, g->mag = NULL, g->uses = NULL;
}

static int ensure(gen_ctx *g, int32_t v)
{
    if (v < g->cap) return 1;
    int32_t cap = g->cap;
    while (cap <= v) cap *= 2;
    uint8_t *f = realloc(g->flags, (size_t)cap);
    if (f) g->flags = f;
    double *m = realloc(g->mag, (size_t)cap * sizeof *m);
    if (m) g->mag = m;
    int32_t *u = realloc(g->uses, (size_t)cap * sizeof *u);
    if (u) g->uses = u;
    if (!f || !m || !u) return 0;
    memset(g->flags + g->cap, 0, (size_t)(cap - g->cap));
    memset(g->mag + g->cap, 0, (size_t)(cap - g->cap) * sizeof *m);
    memset(g->uses + g->cap, 0, (size_t)(cap - g->cap) * sizeof *u);
    g->cap = cap;
    return 1;
}

const par_value *gen_val(const gen_ctx *g, int32_t v)
{
    return &par_graph_desc_of(g->c->graph)->values[v];
}

gen_in gen_in_val(const gen_ctx *g, int32_t v)
{
    (void)g;
    gen_in in;
    memset(&in, 0, sizeof in);
    in.v = v;
    in.ch_axis = -1;
    return in;
}

gen_in gen_in_absent(void)
{
    gen_in in;
    memset(&in, 0, sizeof in);
    in.v = -1;
    in.absent = 1;
    in.ch_axis = -1;
    return in;
}

gen_in gen_in_uniform(int is_const, par_dtype dt, int32_t rank, const int64_t *dims, double a, double b)
{
    gen_in in;
    memset(&in, 0, sizeof in);
    in.v = -1;
    in.ch_axis = -1;
    in.is_const = is_const;
    in.dt = dt;
    in.rank = rank;
    for (int32_t i = 0; i < rank; i++) in.dims[i] = dims[i];
    in.gen.dist = PAR_DIST_UNIFORM;
    in.gen.a = a;
    in.gen.b = b;
    in.mag = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    in.pos = a >= 0.25;
    return in;
}

gen_in gen_in_new(gen_ctx *g, int is_const, int32_t rank, const int64_t *dims, int pos)
{
    if (pos) return gen_in_uniform(is_const, PAR_DTYPE_F32, rank, dims, 0.5, 2.0);
    gen_in in = gen_in_uniform(is_const, PAR_DTYPE_F32, rank, dims, -1.0, 1.0);
    if (gen_below(g->src, 4) == 3) {
        in.gen.dist = PAR_DIST_NORMAL; /* mean 0, std 1, bounded to +-6 */
        in.gen.a = 0.0;
        in.gen.b = 1.0;
        in.mag = 6.0;
    }
    return in;
}

gen_in gen_in_weight(int32_t rank, const int64_t *dims, int64_t fan)
{
    gen_in in = gen_in_uniform(1, PAR_DTYPE_F32, rank, dims, 0.0, 1.0);
    in.gen.dist = PAR_DIST_NORMAL;
    /* std 1/sqrt(fan): a dot product of unit-range inputs stays near unit range. sqrt is correctly rounded (IEEE),
     * so the value written to the case is the same everywhere. */
    in.gen.b = 1.0 / sqrt((double)(fan > 0 ? fan : 1));
    in.pos = 0;
    in.mag = 6.0 * in.gen.b;
    return in;
}

static int64_t numel(int32_t rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

void gen_shape(gen_ctx *g, int32_t rank, int64_t cap, int64_t max_elems, int64_t *dims)
{
    int64_t budget = max_elems < 1 ? 1 : max_elems;
    for (int32_t i = 0; i < rank; i++) {
        int64_t hi = cap < budget ? cap : budget;
        /* Two nested draws: small dims are common, the cap is reached now and then. */
        int64_t hi2 = gen_range(g->src, 1, hi);
        dims[i] = gen_range(g->src, 1, hi2);
        budget /= dims[i];
    }
}

static int is_act(const gen_ctx *g, int32_t v, int32_t lo, int32_t hi, int pos)
{
    if (v >= g->cap || !(g->flags[v] & GV_ACT)) return 0;
    if (pos && !(g->flags[v] & GV_POS)) return 0;
    int32_t r = gen_val(g, v)->rank;
    return r >= lo && r <= hi;
}

gen_in gen_act(gen_ctx *g, int32_t lo, int32_t hi, int pos)
{
    const par_graph_desc *d = par_graph_desc_of(g->c->graph);
    int32_t n = 0, last = -1, unused = -1, n_unused = 0;
    for (int32_t v = 0; v < d->n_values; v++) {
        if (!is_act(g, v, lo, hi, pos)) continue;
        n++;
        last = v;
        if (g->uses[v] == 0 && d->values[v].kind == PAR_VALUE_NODE) n_unused++, unused = v;
    }
    if (n > 0 && gen_below(g->src, 8) < 7) {
        uint32_t how = gen_below(g->src, 8);
        if (how < 3) return gen_in_val(g, last);           /* a chain */
        if (how < 5 && unused >= 0) {                       /* a dangling value: fewer outputs, deeper graphs */
            uint32_t k = gen_below(g->src, (uint32_t)n_unused);
            for (int32_t v = 0; v < d->n_values; v++)
                if (is_act(g, v, lo, hi, pos) && g->uses[v] == 0 && d->values[v].kind == PAR_VALUE_NODE && k-- == 0)
                    return gen_in_val(g, v);
            return gen_in_val(g, unused);
        }
        uint32_t k = gen_below(g->src, (uint32_t)n);        /* any earlier value: reuse and branches */
        for (int32_t v = 0; v < d->n_values; v++)
            if (is_act(g, v, lo, hi, pos) && k-- == 0) return gen_in_val(g, v);
        return gen_in_val(g, last);
    }
    int32_t hi_new = hi < 4 ? hi : hi >= 5 && gen_chance(g->src, 0.1) ? 5 : 4;
    int32_t rank = (int32_t)gen_range(g->src, lo, hi_new < lo ? lo : hi_new);
    int64_t dims[PAR_MAX_RANK];
    int64_t budget = g->o->max_elems >> gen_below(g->src, 3);
    gen_shape(g, rank, rank >= 3 ? 10 : 24, budget, dims);
    return gen_in_new(g, 0, rank, dims, pos);
}

int32_t gen_find(gen_ctx *g, int32_t rank, const int64_t *dims, int pos)
{
    const par_graph_desc *d = par_graph_desc_of(g->c->graph);
    int32_t found[16], n = 0;
    for (int32_t v = d->n_values - 1; v >= 0 && n < 16; v--) {
        if (!is_act(g, v, rank, rank, pos)) continue;
        if (memcmp(d->values[v].dims, dims, sizeof(int64_t) * (size_t)rank) == 0) found[n++] = v;
    }
    return n ? found[gen_below(g->src, (uint32_t)n)] : -1;
}

/* ---- attributes ---- */

static int32_t attr_slot(gen_attrs *at, const char *name)
{
    for (int32_t i = 0; i < at->n; i++)
        if (strcmp(at->a[i].name, name) == 0) return i;
    if (at->n >= PAR_MAX_ATTRS) return -1;
    memset(&at->a[at->n], 0, sizeof at->a[at->n]);
    return at->n++;
}

par_attr *gen_attr_set_int(gen_attrs *at, const char *name, int64_t v)
{
    int32_t k = attr_slot(at, name);
    if (k < 0) return NULL;
    at->a[k] = par_a_int(name, v);
    return &at->a[k];
}

par_attr *gen_attr_set_float(gen_attrs *at, const char *name, double v)
{
    int32_t k = attr_slot(at, name);
    if (k < 0) return NULL;
    at->a[k] = par_a_float(name, v);
    return &at->a[k];
}

par_attr *gen_attr_set_ints(gen_attrs *at, const char *name, int32_t n, const int64_t *v)
{
    int32_t k = attr_slot(at, name);
    if (k < 0 || n > PAR_MAX_RANK * 2) return NULL;
    for (int32_t i = 0; i < n; i++) at->ints[k][i] = v[i];
    at->a[k] = par_a_ints(name, n, at->ints[k]);
    return &at->a[k];
}

par_attr *gen_attr_set_floats(gen_attrs *at, const char *name, int32_t n, const double *v)
{
    int32_t k = attr_slot(at, name);
    if (k < 0 || n > 8) return NULL;
    for (int32_t i = 0; i < n; i++) at->floats[k][i] = v[i];
    at->a[k] = par_a_floats(name, n, at->floats[k]);
    return &at->a[k];
}

par_attr *gen_attr_set_str(gen_attrs *at, const char *name, const char *s)
{
    int32_t k = attr_slot(at, name);
    if (k < 0) return NULL;
    snprintf(at->strs[k], sizeof at->strs[k], "%s", s);
    at->a[k] = par_a_str(name, at->strs[k]);
    return &at->a[k];
}

void gen_attr_drop(gen_attrs *at, const char *name)
{
    for (int32_t i = 0; i < at->n; i++)
        if (strcmp(at->a[i].name, name) == 0) {
            /* Storage rows move with their attribute: re-point the moved entries. */
            for (int32_t j = i; j + 1 < at->n; j++) {
                at->a[j] = at->a[j + 1];
                memcpy(at->ints[j], at->ints[j + 1], sizeof at->ints[j]);
                memcpy(at->floats[j], at->floats[j + 1], sizeof at->floats[j]);
                memcpy(at->strs[j], at->strs[j + 1], sizeof at->strs[j]);
                if (at->a[j].type == PAR_ATTR_INTS) at->a[j].ints = at->ints[j];
                if (at->a[j].type == PAR_ATTR_FLOATS) at->a[j].floats = at->floats[j];
                if (at->a[j].type == PAR_ATTR_STRING) at->a[j].s = at->strs[j];
            }
            at->n--;
            return;
        }
}

/* Attribute names whose int is a 0/1 switch, and those that name an axis of input 0: the schema grammar has no
 * type for either, and every op uses these names for them. */
static int flag_name(const char *n)
{
    static const char *const names[] = {"keepdims", "ceil_mode", "count_include_pad", "align_corners",
                                        "reduce_range"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n, names[i]) == 0) return 1;
    return 0;
}

static int axis_name(const char *n)
{
    return strcmp(n, "axis") == 0 || strcmp(n, "dim") == 0 || strcmp(n, "start_dim") == 0 ||
           strcmp(n, "end_dim") == 0;
}

void gen_attrs_schema(gen_ctx *g, const par_op_info *op, int32_t rank, gen_attrs *at)
{
    at->n = 0;
    for (int32_t j = 0; j < op->n_attrs; j++) {
        const par_attr_spec *s = &op->attrs[j];
        switch (s->type) {
        case PAR_ATTR_STRING:
            if (s->choices[0]) {
                /* one of "a|b|c", uniformly */
                uint32_t n = 1;
                for (const char *p = s->choices; *p; p++) n += *p == '|';
                uint32_t k = gen_below(g->src, n);
                const char *p = s->choices;
                while (k > 0) k -= *p++ == '|';
                size_t len = strcspn(p, "|");
                char buf[32];
                snprintf(buf, sizeof buf, "%.*s", (int)(len < 31 ? len : 31), p);
                gen_attr_set_str(at, s->name, buf);
            } else if (s->has_default) {
                gen_attr_set_str(at, s->name, s->def.s);
            }
            break;
        case PAR_ATTR_INT:
            if (axis_name(s->name) && rank > 0)
                gen_attr_set_int(at, s->name, gen_range(g->src, -rank, rank - 1));
            else if (flag_name(s->name))
                gen_attr_set_int(at, s->name, gen_below(g->src, 2));
            else if (s->has_default)
                gen_attr_set_int(at, s->name, s->def.i);
            break;
        case PAR_ATTR_FLOAT:
            if (s->has_default) {
                double d = s->def.f;
                if (!(d == d) || d - d != 0.0) {       /* infinite default (an open bound): kept or made finite */
                    gen_attr_set_float(at, s->name, gen_chance(g->src, 0.5) ? d : gen_real(g->src, -2.0, 2.0));
                } else {
                    static const double f[] = {1.0, 1.0, 0.5, 2.0, 0.25, 4.0};
                    gen_attr_set_float(at, s->name, d * f[gen_below(g->src, 6)]);
                }
            }
            break;
        case PAR_ATTR_INTS:
            if (s->has_default) gen_attr_set_ints(at, s->name, s->def.count, s->def.ints);
            break;
        case PAR_ATTR_FLOATS:
            if (s->has_default) gen_attr_set_floats(at, s->name, s->def.count, s->def.floats);
            break;
        }
    }
}

/* ---- the emitter ---- */

const int64_t *gen_in_dims(const gen_ctx *g, const gen_in *in, int32_t *rank)
{
    if (in->v >= 0) {
        const par_value *v = gen_val(g, in->v);
        *rank = v->rank;
        return v->dims;
    }
    *rank = in->rank;
    return in->dims;
}

static int32_t make_tensor(gen_ctx *g, gen_in *in)
{
    char name[32];
    snprintf(name, sizeof name, "%s%d", in->is_const ? "c" : "x", (int)g->n_tensors++);
    int32_t v = in->is_const ? par_case_const(g->c, name, in->dt, in->rank, in->dims, in->gen)
                             : par_case_input(g->c, name, in->dt, in->rank, in->dims, in->gen);
    if (v < 0) return -1;
    if (in->dt == PAR_DTYPE_QU8 || in->dt == PAR_DTYPE_QS8) {
        if (in->ch_axis >= 0) {
            float sc[64];
            int64_t nc = in->dims[in->ch_axis];
            if (nc > 64) return -1;
            for (int64_t k = 0; k < nc; k++) sc[k] = in->scale * (float)(1 + (k % 4)) * 0.5f;
            if (par_graph_set_channel_quant(g->c->graph, v, in->ch_axis, sc, nc, &g->c->err) != PAR_OK) {
                g->c->status = PAR_ERROR;
                return -1;
            }
        } else {
            par_case_quant(g->c, v, in->scale, in->zp);
        }
        if (g->c->status != PAR_OK) return -1;
    }
    if (!ensure(g, v)) return -1;
    g->flags[v] = (uint8_t)((in->dt == PAR_DTYPE_F32 && !in->is_const ? GV_ACT : 0) | (in->pos ? GV_POS : 0));
    g->mag[v] = in->mag;
    return v;
}

int32_t gen_emit(gen_ctx *g, const par_op_info *op, int32_t n, gen_in *ins, const gen_attrs *at, par_dtype out_dt,
                 float out_scale, int32_t out_zp, int pos, double mag)
{
    if (g->failed || n > 8) return -1;
    const int64_t max = g->o->max_elems;
    par_value fv[8];
    int32_t idx[8];
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        if (ins[i].absent) {
            idx[i] = -1;
            continue;
        }
        if (ins[i].v >= 0) {
            fv[k] = *gen_val(g, ins[i].v);
        } else {
            if (ins[i].rank < 0 || ins[i].rank > PAR_MAX_RANK) return -1;
            for (int32_t r = 0; r < ins[i].rank; r++)
                if (ins[i].dims[r] < 1) return -1;
            if (numel(ins[i].rank, ins[i].dims) > max) return -1;
            memset(&fv[k], 0, sizeof fv[k]);
            fv[k].name = "new";
            fv[k].dtype = ins[i].dt;
            fv[k].rank = ins[i].rank;
            memcpy(fv[k].dims, ins[i].dims, sizeof fv[k].dims);
            fv[k].numel = numel(ins[i].rank, ins[i].dims);
            fv[k].kind = ins[i].is_const ? PAR_VALUE_CONST : PAR_VALUE_INPUT;
            fv[k].producer = -1;
            fv[k].scale = ins[i].scale;
            fv[k].zero_point = ins[i].zp;
            fv[k].quant_axis = ins[i].ch_axis;
        }
        idx[i] = k++;
    }
    /* The node as the builder will hold it: every schema attribute, defaults filled in. */
    par_attr full[PAR_MAX_ATTRS];
    for (int32_t j = 0; j < op->n_attrs; j++) {
        int32_t found = -1;
        for (int32_t i = 0; at && i < at->n; i++)
            if (strcmp(at->a[i].name, op->attrs[j].name) == 0) found = i;
        if (found >= 0) full[j] = at->a[found];
        else if (op->attrs[j].has_default) full[j] = op->attrs[j].def;
        else return -1;
    }
    int32_t out_idx = k;
    par_node nd;
    memset(&nd, 0, sizeof nd);
    nd.name = "new";
    nd.op = op->name;
    nd.n_inputs = n;
    nd.inputs = idx;
    nd.n_outputs = 1;
    nd.outputs = &out_idx;
    nd.n_attrs = op->n_attrs;
    nd.attrs = full;
    par_graph_desc d;
    memset(&d, 0, sizeof d);
    d.name = "new";
    d.n_values = k;
    d.values = fv;
    par_value ov;
    memset(&ov, 0, sizeof ov);
    ov.quant_axis = -1;
    ov.scale = 1.0f;
    ov.kind = PAR_VALUE_NODE;
    ov.dtype = out_dt ? out_dt : (n > 0 && idx[0] >= 0 ? fv[idx[0]].dtype : PAR_DTYPE_F32);
    if (op->id == PAR_OP_DEQUANTIZE && !out_dt) ov.dtype = PAR_DTYPE_F32;
    par_msg m;
    m.text[0] = 0;
    if (op->infer(&d, &nd, &ov, &m) != PAR_OK) return -1;
    if (ov.rank < 0 || ov.rank > PAR_MAX_RANK) return -1;
    for (int32_t r = 0; r < ov.rank; r++)
        if (ov.dims[r] < 1 || ov.dims[r] > max) return -1;
    if (numel(ov.rank, ov.dims) > max) return -1;

    /* Accepted: create the new tensors, then the node. */
    int32_t gin[8];
    for (int32_t i = 0; i < n; i++) {
        if (ins[i].absent) gin[i] = -1;
        else if (ins[i].v >= 0) gin[i] = ins[i].v;
        else if ((gin[i] = make_tensor(g, &ins[i])) < 0) goto internal;
    }
    par_out_spec os = {NULL, out_dt, out_scale, out_zp};
    int32_t node = par_graph_add_node(g->c->graph, op->name, NULL, n, gin, at ? at->n : 0, at ? at->a : NULL,
                                      out_dt ? &os : NULL, &g->c->err);
    if (node < 0) {
        g->c->status = PAR_ERROR;
        goto internal;
    }
    const par_graph_desc *gd = par_graph_desc_of(g->c->graph);
    int32_t v = gd->nodes[node].outputs[0];
    if (!ensure(g, v)) goto internal;
    for (int32_t i = 0; i < n; i++)
        if (gin[i] >= 0) g->uses[gin[i]]++;
    g->flags[v] = (uint8_t)((gd->values[v].dtype == PAR_DTYPE_F32 ? GV_ACT : 0) | (pos ? GV_POS : 0));
    g->mag[v] = mag;
    g->n_nodes++;
    return v;

internal:
    /* The shape function accepted what the builder refused (or memory ran out): a generator bug, reported. */
    if (!g->failed) {
        g->failed = 1;
        snprintf(g->err.text, sizeof g->err.text, "generator: %s: %s", op->name,
                 g->c->err.text[0] ? g->c->err.text : "out of memory");
    }
    return -1;
}

int32_t gen_bcast(gen_ctx *g, int32_t rank, const int64_t *dims, int64_t *out)
{
    int32_t drop = rank > 1 ? (int32_t)gen_range(g->src, 0, rank - 1) : 0;
    if (gen_chance(g->src, 0.5)) drop = 0;
    int32_t r = rank - drop;
    for (int32_t i = 0; i < r; i++) out[i] = gen_chance(g->src, 0.5) ? 1 : dims[drop + i];
    return r;
}

int gen_has_attr(const par_op_info *op, const char *name)
{
    for (int32_t j = 0; j < op->n_attrs; j++)
        if (strcmp(op->attrs[j].name, name) == 0) return 1;
    return 0;
}
