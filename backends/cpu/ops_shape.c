/*
 * ops_shape.c - the cpu backend's data movement: the boundary conversions (NCHW input -> NHWC, tensor -> NCHW
 * output), reshape / flatten, permute, concat, pad and slice, each one strided walk (cpu_nd_copy) between tensor
 * views whatever their layouts, so NHWC tensors are never converted back to NCHW inside the graph.
 *
 * Every op here is a selection: it copies floats and computes every index exactly, so it is bit-exact. Nothing is
 * allocated at run time; nothing is written outside the output tensor (or the bound output buffer).
 */
#include <stdlib.h>

#include "plan_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Boundary conversions
 * ------------------------------------------------------------------------------------------------------------- */
void cpu_step_to_nhwc(const cpu_plan *p, const cpu_step *s)
{
    const cpu_tensor *t = &p->t[s->out];
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, t->data, t->strides, p->in_buf[s->port], rm);
}

void cpu_step_out_copy(const cpu_plan *p, const cpu_step *s)
{
    const cpu_tensor *t = &p->t[s->in[0]];
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, p->out_buf[s->port], rm, t->data, t->strides);
}

/* ---------------------------------------------------------------------------------------------------------------
 * reshape / flatten: logical order is kept; a memcpy when both sides are in logical order.
 * ------------------------------------------------------------------------------------------------------------- */
static void run_copy(const cpu_plan *p, const cpu_step *s)
{
    cpu_copy_logical(&p->t[s->out], &p->t[s->in[0]], s->scratch);
}

par_status cpu_lower_copy(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    if (x->numel != y->numel)
        return par_msgf(msg, PAR_ERROR, "%s: %lld elements in, %lld out", s->node->op, (long long)x->numel,
                        (long long)y->numel);
    if (!cpu_tensor_rowmajor(x) && !cpu_tensor_rowmajor(y)) {
        par_status st = cpu_step_scratch(s, (size_t)x->numel, msg);
        if (st != PAR_OK) return st;
    }
    s->run = run_copy;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * permute: y.dims[i] = x.dims[perm[i]], so y's logical dim i walks x's logical dim perm[i].
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct view_state {
    int64_t xs[PAR_MAX_RANK]; /* x strides seen along y's dims (permute), or x sub-view strides (slice) */
    int64_t offset;           /* element offset of the sub-view (slice: in x; pad: in y) */
} view_state;

static void free_state(void *st)
{
    free(st);
}

static void run_permute(const cpu_plan *p, const cpu_step *s)
{
    const view_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out];
    cpu_nd_copy(y->rank, y->dims, y->data, y->strides, p->t[s->in[0]].data, st->xs);
}

par_status cpu_lower_permute(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    view_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    if (par_attr_count(s->node, "perm") != y->rank)
        return par_msgf(msg, PAR_ERROR, "attribute 'perm': %d entries for rank %d", par_attr_count(s->node, "perm"),
                        y->rank);
    for (int32_t i = 0; i < y->rank; i++) {
        const int64_t d = par_attr_ints_at(s->node, "perm", i, i);
        if (d < 0 || d >= x->rank) return par_msgf(msg, PAR_ERROR, "attribute 'perm': %lld out of range", (long long)d);
        st->xs[i] = x->strides[d];
    }
    s->run = run_permute;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * concat: input k lands in y's sub-view that starts at the running offset along the axis.
 * ------------------------------------------------------------------------------------------------------------- */
static void run_concat(const cpu_plan *p, const cpu_step *s)
{
    const int64_t *axis = s->state;
    const cpu_tensor *y = &p->t[s->out];
    int64_t at = 0;
    for (int32_t k = 0; k < s->n_in; k++) {
        const cpu_tensor *x = &p->t[s->in[k]];
        cpu_nd_copy(x->rank, x->dims, y->data + at * y->strides[*axis], y->strides, x->data, x->strides);
        at += x->dims[*axis];
    }
}

par_status cpu_lower_concat(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *y = &p->t[s->out];
    int64_t axis = par_attr_int(s->node, "axis", 1);
    if (axis < 0) axis += y->rank;
    if (axis < 0 || axis >= y->rank) return par_msgf(msg, PAR_ERROR, "attribute 'axis': out of range for rank %d", y->rank);
    int64_t *st = malloc(sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    *st = axis;
    s->state = st;
    s->destroy = free_state;
    s->run = run_concat;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * pad, mode constant: y filled with the value, then x copied into y's sub-view at the begin pads. Modes reflect and
 * replicate (PyTorch's F.pad): every y element reads x at its logical index minus the begin pad, mirrored about the
 * edge element (reflect) or clamped to the edge (replicate), per dimension.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct pad_state {
    int64_t offset;
    float value;
    int mode;                     /* 0 constant, 1 reflect, 2 replicate */
    int64_t begin[PAR_MAX_RANK];  /* begin pads */
} pad_state;

static void run_pad_mode(const cpu_plan *p, const cpu_step *s)
{
    const pad_state *st = s->state;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    int64_t idx[PAR_MAX_RANK] = {0};
    for (int64_t k = 0; k < y->numel; k++) {
        int64_t yo = 0, xo = 0;
        for (int32_t d = 0; d < y->rank; d++) {
            const int64_t n = x->dims[d];
            int64_t i = idx[d] - st->begin[d];
            if (st->mode == 1) i = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
            else i = i < 0 ? 0 : i >= n ? n - 1 : i;
            yo += idx[d] * y->strides[d];
            xo += i * x->strides[d];
        }
        y->data[yo] = x->data[xo];
        for (int32_t d = y->rank - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
}

static void run_pad(const cpu_plan *p, const cpu_step *s)
{
    const pad_state *st = s->state;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    for (int64_t i = 0; i < y->numel; i++) y->data[i] = st->value;
    cpu_nd_copy(x->rank, x->dims, y->data + st->offset, y->strides, x->data, x->strides);
}

par_status cpu_lower_pad(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    if (par_attr_count(s->node, "pads") != 2 * x->rank)
        return par_msgf(msg, PAR_ERROR, "attribute 'pads': %d entries for rank %d", par_attr_count(s->node, "pads"),
                        x->rank);
    pad_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    st->value = (float)par_attr_float(s->node, "value", 0.0);
    const char *mode = par_attr_str(s->node, "mode", "constant");
    st->mode = strcmp(mode, "reflect") == 0 ? 1 : strcmp(mode, "replicate") == 0 ? 2 : 0;
    for (int32_t d = 0; d < x->rank; d++) {
        st->begin[d] = par_attr_ints_at(s->node, "pads", 2 * d, 0);
        st->offset += st->begin[d] * y->strides[d];
        if (st->mode == 1 && (st->begin[d] >= x->dims[d] || par_attr_ints_at(s->node, "pads", 2 * d + 1, 0) >= x->dims[d]))
            return par_msgf(msg, PAR_ERROR, "mode reflect: a pad of dimension %d is not below its size %lld", (int)d,
                            (long long)x->dims[d]);
    }
    s->run = st->mode ? run_pad_mode : run_pad;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * slice: y is x's sub-view starting at `start` along dim, stepping `step`.
 * ------------------------------------------------------------------------------------------------------------- */
static void run_slice(const cpu_plan *p, const cpu_step *s)
{
    const view_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out];
    cpu_nd_copy(y->rank, y->dims, y->data, y->strides, p->t[s->in[0]].data + st->offset, st->xs);
}

par_status cpu_lower_slice(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]];
    int64_t dim = par_attr_int(s->node, "dim", 0);
    if (dim < 0) dim += x->rank;
    if (dim < 0 || dim >= x->rank) return par_msgf(msg, PAR_ERROR, "attribute 'dim': out of range for rank %d", x->rank);
    const int64_t size = x->dims[dim], step = par_attr_int(s->node, "step", 1);
    if (step < 1) return par_msgf(msg, PAR_ERROR, "attribute 'step': %lld < 1", (long long)step);
    int64_t start = par_attr_int(s->node, "start", 0);
    if (start < 0) start += size;
    start = start < 0 ? 0 : (start > size ? size : start);
    view_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    for (int32_t i = 0; i < x->rank; i++) st->xs[i] = x->strides[i];
    st->xs[dim] *= step;
    st->offset = start * x->strides[dim];
    s->run = run_slice;
    return PAR_OK;
}
