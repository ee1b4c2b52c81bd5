/*
 * gen_ops_data.c - constraint functions of the data-movement and selection families: concat, reshape, flatten,
 * permute, pad, slice, where, masked_fill, gather, embedding. Shapes are solved from the operand (factorizations
 * for reshape, permutations, pads below the size for reflect, index tensors within the gathered axis), with axes
 * both positive and counted from the end; bool masks and i32 index tensors are generated where the ops take them.
 */
#include "gen/gen_int.h"

#define TRIES 4

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static double mag_of(const gen_ctx *g, const gen_in *in)
{
    return in->v >= 0 ? g->mag[in->v] : in->mag;
}

static int pos_of(const gen_ctx *g, const gen_in *in)
{
    return in->v >= 0 ? (g->flags[in->v] & GV_POS) != 0 : in->pos;
}

static int64_t axis_any(gen_ctx *g, int64_t a, int32_t r)
{
    return gen_chance(g->src, 0.3) ? a - r : a;
}

int32_t gen_op_concat(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[4];
        ins[0] = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t d[PAR_MAX_RANK];
        memcpy(d, xd, sizeof(int64_t) * (size_t)r);
        int32_t axis = (int32_t)gen_range(g->src, 0, r - 1);
        int32_t n = (int32_t)gen_range(g->src, 1, 4);
        int pos = pos_of(g, &ins[0]);
        double m = mag_of(g, &ins[0]);
        for (int32_t i = 1; i < n; i++) {
            int32_t ex = gen_find(g, r, d, 0);
            if (ex >= 0 && gen_chance(g->src, 0.5)) {
                ins[i] = gen_in_val(g, ex);
            } else {
                int64_t e[PAR_MAX_RANK];
                memcpy(e, d, sizeof e);
                e[axis] = gen_range(g->src, 1, 6);
                ins[i] = gen_in_new(g, gen_chance(g->src, 0.3), r, e, 0);
            }
            pos = pos && pos_of(g, &ins[i]);
            if (mag_of(g, &ins[i]) > m) m = mag_of(g, &ins[i]);
        }
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "axis", axis_any(g, axis, r));
        int32_t v = gen_emit(g, op, n, ins, &at, 0, 0, 0, pos, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_reshape(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    gen_in x = gen_act(g, 1, GEN_RANK, 0);
    int32_t r;
    const int64_t *xd = gen_in_dims(g, &x, &r);
    int64_t rem = 1;
    for (int32_t i = 0; i < r; i++) rem *= xd[i];
    int32_t nr = (int32_t)gen_range(g->src, 1, 4);
    int64_t shape[PAR_MAX_RANK];
    for (int32_t i = 0; i < nr - 1; i++) {
        /* a divisor of what is left */
        int64_t dv[32];
        int32_t k = 0;
        for (int64_t j = 1; j <= rem && k < 32; j++)
            if (rem % j == 0) dv[k++] = j;
        shape[i] = dv[gen_below(g->src, (uint32_t)k)];
        rem /= shape[i];
    }
    shape[nr - 1] = rem;
    if (gen_chance(g->src, 0.3)) shape[gen_below(g->src, (uint32_t)nr)] = -1;
    gen_attrs at;
    gen_attrs_schema(g, op, r, &at);
    gen_attr_set_ints(&at, "shape", nr, shape);
    return gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos_of(g, &x), mag_of(g, &x));
}

int32_t gen_op_flatten(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    gen_in x = gen_act(g, 1, GEN_RANK, 0);
    int32_t r;
    gen_in_dims(g, &x, &r);
    int64_t s = gen_range(g->src, 0, r - 1), e = gen_range(g->src, s, r - 1);
    gen_attrs at;
    gen_attrs_schema(g, op, r, &at);
    gen_attr_set_int(&at, "start_dim", axis_any(g, s, r));
    gen_attr_set_int(&at, "end_dim", axis_any(g, e, r));
    return gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos_of(g, &x), mag_of(g, &x));
}

int32_t gen_op_permute(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    gen_in x = gen_act(g, 2, GEN_RANK, 0);
    int32_t r;
    gen_in_dims(g, &x, &r);
    int64_t perm[PAR_MAX_RANK];
    for (int32_t i = 0; i < r; i++) perm[i] = i;
    for (int32_t i = r - 1; i > 0; i--) {
        int32_t j = (int32_t)gen_range(g->src, 0, i);
        int64_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    gen_attrs at;
    gen_attrs_schema(g, op, r, &at);
    gen_attr_set_ints(&at, "perm", r, perm);
    return gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos_of(g, &x), mag_of(g, &x));
}

int32_t gen_op_pad(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        const par_attr *mode = NULL;
        for (int32_t i = 0; i < at.n; i++)
            if (strcmp(at.a[i].name, "mode") == 0) mode = &at.a[i];
        int reflect = mode && strcmp(mode->s, "reflect") == 0;
        int64_t pads[PAR_MAX_RANK * 2];
        for (int32_t i = 0; i < 2 * r; i++) {
            /* mostly the last two dims, as images are padded; reflect pads stay below the size */
            int64_t hi = i / 2 >= r - 2 ? 3 : 1;
            if (reflect) hi = min64(hi, xd[i / 2] - 1);
            pads[i] = gen_chance(g->src, 0.4) ? 0 : gen_range(g->src, 0, hi);
        }
        gen_attr_set_ints(&at, "pads", 2 * r, pads);
        double value = gen_real(g->src, -2.0, 2.0);
        gen_attr_set_float(&at, "value", value);
        int pos = pos_of(g, &x) && (!mode || strcmp(mode->s, "constant") != 0 || value >= 0.5);
        double m = mag_of(g, &x) > 2.0 ? mag_of(g, &x) : 2.0;
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_slice(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        int32_t dim = (int32_t)gen_range(g->src, 0, r - 1);
        int64_t s = xd[dim];
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "dim", axis_any(g, dim, r));
        gen_attr_set_int(&at, "start", gen_range(g->src, -s - 1, s - 1));
        if (gen_chance(g->src, 0.7)) gen_attr_set_int(&at, "end", gen_range(g->src, -s, s + 1));
        else gen_attr_drop(&at, "end");                    /* the default: to the end */
        gen_attr_set_int(&at, "step", gen_range(g->src, 1, 3));
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos_of(g, &x), mag_of(g, &x));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* A bool mask broadcasting to (r, d): a graph input or a constant, both values. */
static gen_in bool_mask(gen_ctx *g, int32_t r, const int64_t *d)
{
    int64_t md[PAR_MAX_RANK];
    int32_t mr = gen_chance(g->src, 0.5) ? r : gen_bcast(g, r, d, md);
    if (mr == r) memcpy(md, d, sizeof(int64_t) * (size_t)r);
    return gen_in_uniform(g->quant || gen_chance(g->src, 0.3), PAR_DTYPE_BOOL, mr, md, 0, 1);
}

int32_t gen_op_where(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[3];
        gen_in a = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *ad = gen_in_dims(g, &a, &r);
        int64_t bd[PAR_MAX_RANK];
        memcpy(bd, ad, sizeof(int64_t) * (size_t)r);
        int32_t rb = gen_chance(g->src, 0.5) ? r : gen_bcast(g, r, ad, bd);
        int32_t ex = gen_find(g, rb, bd, 0);
        gen_in b = ex >= 0 && gen_chance(g->src, 0.6) ? gen_in_val(g, ex) : gen_in_new(g, gen_chance(g->src, 0.5), rb, bd, 0);
        ins[0] = bool_mask(g, r, ad);
        int swap = gen_chance(g->src, 0.5);
        ins[1] = swap ? b : a;
        ins[2] = swap ? a : b;
        double m = mag_of(g, &a) > mag_of(g, &b) ? mag_of(g, &a) : mag_of(g, &b);
        int32_t v = gen_emit(g, op, 3, ins, NULL, 0, 0, 0, pos_of(g, &a) && pos_of(g, &b), m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* logical_and / _or / _xor (two bool masks, the second broadcast to the first's shape or the other way) and
 * logical_not (one): the shape is an activation's, the masks bool inputs or constants. */
int32_t gen_op_logical(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in a = gen_act(g, 1, GEN_RANK, 0), ins[2];
        int32_t r;
        const int64_t *ad = gen_in_dims(g, &a, &r);
        int64_t d[PAR_MAX_RANK];
        memcpy(d, ad, sizeof(int64_t) * (size_t)r);
        ins[0] = gen_in_uniform(g->quant || gen_chance(g->src, 0.3), PAR_DTYPE_BOOL, r, d, 0, 1);
        if (op->in_min > 1) {
            ins[1] = bool_mask(g, r, d);
            if (gen_chance(g->src, 0.3)) {
                gen_in tmp = ins[0];
                ins[0] = ins[1];
                ins[1] = tmp;
            }
        }
        int32_t v = gen_emit(g, op, op->in_min, ins, NULL, 0, 0, 0, 1, 1.0);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_masked_fill(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        ins[0] = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        ins[1] = bool_mask(g, r, xd);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        double value = gen_real(g->src, -4.0, 4.0);
        gen_attr_set_float(&at, "value", value);
        double m = mag_of(g, &ins[0]) > 4.0 ? mag_of(g, &ins[0]) : 4.0;
        int32_t v = gen_emit(g, op, 2, ins, &at, 0, 0, 0, pos_of(g, &ins[0]) && value >= 0.5, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* An i32 index tensor of rank r (0..3) with entries in [0, n). */
static gen_in indices(gen_ctx *g, int32_t r, int64_t n)
{
    int64_t d[PAR_MAX_RANK];
    gen_shape(g, r, 6, 64, d);
    return gen_in_uniform(g->quant || gen_chance(g->src, 0.3), PAR_DTYPE_I32, r, d, 0, (double)(n - 1));
}

int32_t gen_op_gather(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        ins[0] = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int32_t axis = (int32_t)gen_range(g->src, 0, r - 1);
        ins[1] = indices(g, (int32_t)gen_range(g->src, 0, 2), xd[axis]);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "axis", axis_any(g, axis, r));
        int32_t v = gen_emit(g, op, 2, ins, &at, 0, 0, 0, pos_of(g, &ins[0]), mag_of(g, &ins[0]));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_embedding(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        if (gen_chance(g->src, 0.5)) {
            ins[1] = gen_act(g, 2, 2, 0);                   /* a table computed by the graph */
        } else {
            int64_t wd[2] = {gen_range(g->src, 1, 32), gen_range(g->src, 1, 16)};
            ins[1] = gen_in_weight(2, wd, 1);
            ins[1].gen.b = 1.0;
            ins[1].mag = 6.0;
        }
        int32_t r;
        const int64_t *wd = gen_in_dims(g, &ins[1], &r);
        ins[0] = indices(g, (int32_t)gen_range(g->src, 1, 3), wd[0]);
        int32_t v = gen_emit(g, op, 2, ins, NULL, 0, 0, 0, pos_of(g, &ins[1]), mag_of(g, &ins[1]));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}
