/*
 * ops_select.c - the cpu backend's selection ops: where, masked_fill, gather and embedding. Each is one walk over the
 * output's logical index, reading every operand through its physical strides (NHWC for rank-4 f32 tensors,
 * row-major otherwise), so no layout conversion is needed. The bool condition or mask and the i32 indices are raw
 * tensors (plan.h): their bytes read in place, row-major.
 *
 * Selections compute nothing: every output element is a copied f32 (or masked_fill's value, rounded once to f32).
 * Indices are clamped to [0, n - 1] so that a kernel never reads outside x (the harness's reference rejects a case
 * with an index out of range before any verdict). Nothing allocates at run time.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_util.h"

/* Strides of t read along the dims of y (rank yr) under numpy broadcasting: 0 on missing or size-1 dimensions. */
static void bcast_strides(const cpu_tensor *t, int32_t yr, int64_t *st)
{
    for (int32_t d = 0; d < yr; d++) {
        const int32_t k = d - (yr - t->rank);
        st[d] = k < 0 || t->dims[k] == 1 ? 0 : t->strides[k];
    }
}

/* Advance the logical index idx over dims, moving n offsets along their strides. */
static void step(int32_t rank, const int64_t *dims, int64_t *idx, int32_t n, int64_t *off,
                 const int64_t (*st)[PAR_MAX_RANK])
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        idx[d]++;
        for (int32_t j = 0; j < n; j++) off[j] += st[j][d];
        if (idx[d] < dims[d]) return;
        for (int32_t j = 0; j < n; j++) off[j] -= st[j][d] * idx[d];
        idx[d] = 0;
    }
}

typedef struct sel_state {
    int64_t st[4][PAR_MAX_RANK]; /* per operand: its strides along the walk's dims */
    float value;                 /* masked_fill */
    int32_t axis;                /* gather */
    int32_t op;                  /* compare, logical: which one */
} sel_state;

static void free_state(void *st)
{
    free(st);
}

static par_status new_state(cpu_step *s, sel_state **out, par_msg *msg)
{
    sel_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    *out = st;
    return PAR_OK;
}

/* The state of an elementwise selection: st[0] the output's strides, st[1 + i] input i's broadcast to the output. */
static par_status broadcast_state(cpu_plan *p, cpu_step *s, int32_t n_in, sel_state **out, par_msg *msg)
{
    const cpu_tensor *y = &p->t[s->out];
    par_status r = new_state(s, out, msg);
    if (r != PAR_OK) return r;
    for (int32_t d = 0; d < y->rank; d++) (*out)->st[0][d] = y->strides[d];
    for (int32_t i = 0; i < n_in; i++) bcast_strides(&p->t[s->in[i]], y->rank, (*out)->st[1 + i]);
    return PAR_OK;
}

/* ---- where: operands y, cond, a, b --------------------------------------------------------------------------- */
static void run_where(const cpu_plan *p, const cpu_step *s)
{
    const sel_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out];
    const uint8_t *cond = (const uint8_t *)p->t[s->in[0]].data;
    const float *a = p->t[s->in[1]].data, *b = p->t[s->in[2]].data;
    int64_t idx[PAR_MAX_RANK] = {0}, off[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < y->numel; k++) {
        y->data[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
        step(y->rank, y->dims, idx, 4, off, st->st);
    }
}

par_status cpu_lower_where(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    sel_state *st = NULL;
    par_status r = broadcast_state(p, s, 3, &st, msg);
    if (r != PAR_OK) return r;
    s->run = run_where;
    return PAR_OK;
}

/* ---- masked_fill: operands y, x, mask ------------------------------------------------------------------------ */
static void run_masked_fill(const cpu_plan *p, const cpu_step *s)
{
    const sel_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out];
    const float *x = p->t[s->in[0]].data;
    const uint8_t *mask = (const uint8_t *)p->t[s->in[1]].data;
    int64_t idx[PAR_MAX_RANK] = {0}, off[3] = {0, 0, 0};
    for (int64_t k = 0; k < y->numel; k++) {
        y->data[off[0]] = mask[off[2]] ? st->value : x[off[1]];
        step(y->rank, y->dims, idx, 3, off, st->st);
    }
}

par_status cpu_lower_masked_fill(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    sel_state *st = NULL;
    par_status r = broadcast_state(p, s, 2, &st, msg);
    if (r != PAR_OK) return r;
    st->value = (float)par_attr_float(s->node, "value", 0.0);
    s->run = run_masked_fill;
    return PAR_OK;
}

/* ---- gather on axis: y's logical index is x.dims[:axis] + indices.dims + x.dims[axis+1:] ----------------------- */
static int64_t clamp_index(int32_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

static void run_gather(const cpu_plan *p, const cpu_step *s)
{
    const sel_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out], *x = &p->t[s->in[0]], *ix = &p->t[s->in[1]];
    const int32_t *ind = (const int32_t *)ix->data;
    const int32_t axis = st->axis, ir = ix->rank;
    int64_t idx[PAR_MAX_RANK] = {0};
    for (int64_t k = 0; k < y->numel; k++) {
        int64_t yo = 0, xo = 0, j = 0;
        for (int32_t d = 0; d < y->rank; d++) yo += idx[d] * y->strides[d];
        for (int32_t d = 0; d < ir; d++) j = j * ix->dims[d] + idx[axis + d]; /* row-major position in indices */
        for (int32_t d = 0; d < axis; d++) xo += idx[d] * x->strides[d];
        xo += clamp_index(ind[j], x->dims[axis]) * x->strides[axis];
        for (int32_t d = axis + 1; d < x->rank; d++) xo += idx[d - 1 + ir] * x->strides[d];
        y->data[yo] = x->data[xo];
        for (int32_t d = y->rank - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
}

par_status cpu_lower_gather(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]];
    int64_t axis = par_attr_int(s->node, "axis", 0);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return par_msgf(msg, PAR_ERROR, "attribute 'axis': out of range for rank %d", x->rank);
    sel_state *st = NULL;
    par_status r = new_state(s, &st, msg);
    if (r != PAR_OK) return r;
    st->axis = (int32_t)axis;
    s->run = run_gather;
    return PAR_OK;
}

/* ---- embedding: y[..., d] = weight[indices[...], d] ---------------------------------------------------------- */
static void run_embedding(const cpu_plan *p, const cpu_step *s)
{
    const cpu_tensor *y = &p->t[s->out], *ix = &p->t[s->in[0]], *w = &p->t[s->in[1]];
    const int32_t *ind = (const int32_t *)ix->data;
    const int64_t D = w->dims[1], V = w->dims[0];
    int64_t idx[PAR_MAX_RANK] = {0};
    /* y's last dimension is D; the others are the indices' (row-major position j) */
    for (int64_t j = 0; j < ix->numel; j++) {
        int64_t yo = 0;
        for (int32_t d = 0; d < ix->rank; d++) yo += idx[d] * y->strides[d];
        const float *row = w->data + clamp_index(ind[j], V) * w->strides[0];
        for (int64_t c = 0; c < D; c++) y->data[yo + c * y->strides[y->rank - 1]] = row[c * w->strides[1]];
        for (int32_t d = ix->rank - 1; d >= 0; d--) {
            if (++idx[d] < ix->dims[d]) break;
            idx[d] = 0;
        }
    }
}

par_status cpu_lower_embedding(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *w = &p->t[s->in[1]];
    if (w->rank != 2) return par_msgf(msg, PAR_ERROR, "input 1 (weight): rank %d, expected 2", w->rank);
    s->run = run_embedding;
    return PAR_OK;
}

/* ---- eq, gt, lt, ge, le: operands y (bool bytes), a, b; IEEE comparisons (NaN compares false) ------------------- */

static void run_compare(const cpu_plan *p, const cpu_step *s)
{
    const sel_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out];
    uint8_t *out = (uint8_t *)y->data;
    const float *a = p->t[s->in[0]].data, *b = p->t[s->in[1]].data;
    int64_t idx[PAR_MAX_RANK] = {0}, off[3] = {0, 0, 0};
    for (int64_t k = 0; k < y->numel; k++) {
        const float x = a[off[1]], z = b[off[2]];
        int r;
        switch (st->op) {
        case CPU_CMP_EQ: r = x == z; break;
        case CPU_CMP_GT: r = x > z; break;
        case CPU_CMP_LT: r = x < z; break;
        case CPU_CMP_GE: r = x >= z; break;
        default: r = x <= z; break;
        }
        out[off[0]] = (uint8_t)r;
        step(y->rank, y->dims, idx, 3, off, st->st);
    }
}

par_status cpu_lower_compare(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    sel_state *st = NULL;
    par_status r = broadcast_state(p, s, 2, &st, msg);
    if (r != PAR_OK) return r;
    st->op = s->variant;
    s->run = run_compare;
    return PAR_OK;
}

/* ---- logical_and, logical_or, logical_xor, logical_not: operands y, a[, b], all bool bytes ---------------------- */
static void run_logical(const cpu_plan *p, const cpu_step *s)
{
    const sel_state *st = s->state;
    const cpu_tensor *y = &p->t[s->out];
    uint8_t *out = (uint8_t *)y->data;
    const uint8_t *a = (const uint8_t *)p->t[s->in[0]].data;
    const uint8_t *b = s->n_in > 1 ? (const uint8_t *)p->t[s->in[1]].data : a;
    int64_t idx[PAR_MAX_RANK] = {0}, off[3] = {0, 0, 0};
    for (int64_t k = 0; k < y->numel; k++) {
        const int x = a[off[1]] != 0, z = b[off[2]] != 0;
        int r;
        switch (st->op) {
        case CPU_LOG_AND: r = x && z; break;
        case CPU_LOG_OR: r = x || z; break;
        case CPU_LOG_XOR: r = x != z; break;
        default: r = !x; break;
        }
        out[off[0]] = (uint8_t)r;
        step(y->rank, y->dims, idx, 3, off, st->st);
    }
}

par_status cpu_lower_logical(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    sel_state *st = NULL;
    par_status r = broadcast_state(p, s, s->n_in, &st, msg);
    if (r != PAR_OK) return r;
    st->op = s->variant;
    s->run = run_logical;
    return PAR_OK;
}
