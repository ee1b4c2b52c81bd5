/*
 * ops_matrix.c - the cpu backend's lowering of the matrix ops onto the kernels of cpu_kernels.h: conv2d (weights
 * packed at prepare, a following batch_norm folded into them, the fused clamp in the epilogue, the indirection buffer
 * built at bind), linear (packed fully connected), matmul (cpu_gemm_f32 per batch, numpy batch broadcasting), and
 * conv_transpose2d (per image and group, a GEMM of the NHWC input by the weights into a column buffer, then col2im).
 *
 * Folding batch_norm: w'[o] = w[o] s[o], b'[o] = b[o] s[o] + t[o] with s = gamma / sqrt(var + eps),
 * t = beta - mean s, computed in double and rounded once: each folded weight carries one rounding more than the
 * product the conv would otherwise make, which the batch_norm's own budget covers (docs/budgets/elementwise.md).
 *
 * Nothing here allocates at run time: scratch for layout changes and column buffers is taken at prepare.
 */
#include <math.h>
#include <stdlib.h>

#include "plan_util.h"

#define ERR_LEN 256

/* ---------------------------------------------------------------------------------------------------------------
 * conv2d
 * ------------------------------------------------------------------------------------------------------------- */
static void conv_destroy(void *c)
{
    cpu_conv_destroy(c);
}

/* pad_mode same (NNAPI): out = ceil(in / stride), total = max(0, (out-1) stride + (k-1) dilation + 1 - in), begin =
 * total / 2; valid: 0. */
static int64_t same_pad_begin(int64_t in, int64_t k, int64_t stride, int64_t dilation)
{
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = (out - 1) * stride + (k - 1) * dilation + 1 - in;
    return total > 0 ? total / 2 : 0;
}

static par_status conv_bind(const cpu_plan *p, cpu_step *s, par_msg *msg)
{
    char err[ERR_LEN] = "";
    if (cpu_conv_setup(s->state, p->t[s->in[0]].data, p->t[s->out].data, err, sizeof err) != 0)
        return par_msgf(msg, PAR_ERROR, "bind: node '%s' (conv2d): %s", s->node->name, err);
    return PAR_OK;
}

static void run_conv(const cpu_plan *p, const cpu_step *s)
{
    cpu_conv_run(s->state, p->pool);
}

par_status cpu_conv2d_params(const cpu_plan *p, const cpu_step *s, cpu_conv_params *cp, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    const par_value *wv = par_node_input(g, n, 1);
    if (x->rank != 4 || !wv || wv->rank != 4 || y->rank != 4)
        return par_msgf(msg, PAR_ERROR, "conv2d: input, weight and output must be rank 4");
    memset(cp, 0, sizeof *cp);
    cp->batch = x->dims[0], cp->in_c = x->dims[1], cp->in_h = x->dims[2], cp->in_w = x->dims[3];
    cp->out_c = y->dims[1], cp->out_h = y->dims[2], cp->out_w = y->dims[3];
    cp->kh = wv->dims[2], cp->kw = wv->dims[3];
    cp->sh = par_attr_ints_at(n, "stride", 0, 1), cp->sw = par_attr_ints_at(n, "stride", 1, 1);
    cp->dh = par_attr_ints_at(n, "dilation", 0, 1), cp->dw = par_attr_ints_at(n, "dilation", 1, 1);
    cp->groups = par_attr_int(n, "groups", 1);
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(mode, "same") == 0) {
        cp->pad_top = same_pad_begin(cp->in_h, cp->kh, cp->sh, cp->dh);
        cp->pad_left = same_pad_begin(cp->in_w, cp->kw, cp->sw, cp->dw);
    } else if (strcmp(mode, "valid") == 0) {
        cp->pad_top = cp->pad_left = 0;
    } else {
        cp->pad_top = par_attr_ints_at(n, "padding", 0, 0), cp->pad_left = par_attr_ints_at(n, "padding", 1, 0);
    }
    cp->out_min = s->out_min;
    cp->out_max = s->out_max;
    return PAR_OK;
}

/* The head of a row chain runs the chain's convolutions band by band (cpu_conv_chain_run); the steps after it in
 * the chain have run by then and do nothing of their own. */
static void run_conv_chain(const cpu_plan *p, const cpu_step *s)
{
    cpu_conv *convs[CPU_CHAIN_MAX];
    const int32_t head = (int32_t)(s - p->steps);
    for (int32_t j = 0; j < s->chain; j++) convs[j] = p->steps[head + j].state;
    cpu_conv_chain_run(convs, (size_t)s->chain, cpu_conv_chain_band(convs, (size_t)s->chain, CPU_CHAIN_BAND_BYTES),
                       p->pool);
}

static void run_chained(const cpu_plan *p, const cpu_step *s)
{
    (void)p;
    (void)s;
}

par_status cpu_lower_conv2d(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *bn = s->bn;
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const par_value *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    cpu_conv_params cp;
    par_status st = cpu_conv2d_params(p, s, &cp, msg);
    if (st != PAR_OK) return st;

    const float *w = wv->data, *b = bv ? bv->data : NULL;
    float *wf = NULL, *bf = NULL;
    if (bn) {
        const int64_t O = wv->dims[0], per = wv->numel / O;
        wf = malloc((size_t)wv->numel * sizeof(float));
        bf = malloc((size_t)O * sizeof(float));
        if (!wf || !bf) {
            free(wf);
            free(bf);
            return par_msgf(msg, PAR_ERROR, "out of memory folding batch_norm '%s'", bn->name);
        }
        const float *gm = par_node_input(g, bn, 1)->data, *bt = par_node_input(g, bn, 2)->data;
        const float *mean = par_node_input(g, bn, 3)->data, *var = par_node_input(g, bn, 4)->data;
        const double eps = (double)(float)par_attr_float(bn, "eps", 1e-5);
        for (int64_t o = 0; o < O; o++) {
            const double sc = (double)gm[o] / sqrt((double)var[o] + eps);
            const double t = (double)bt[o] - (double)mean[o] * sc;
            for (int64_t k = 0; k < per; k++) wf[o * per + k] = (float)((double)w[o * per + k] * sc);
            bf[o] = (float)((b ? (double)b[o] : 0.0) * sc + t);
        }
        w = wf;
        b = bf;
    }
    char err[ERR_LEN] = "";
    cpu_conv *c = cpu_conv_create(&cp, w, b, p->isa, err, sizeof err);
    free(wf);
    free(bf);
    if (!c) return par_msgf(msg, PAR_UNSUPPORTED, "conv2d: %s", err[0] ? err : "kernel refused the parameters");
    s->state = c;
    s->destroy = conv_destroy;
    s->bind = conv_bind;
    s->run = s->chain > 1 ? run_conv_chain : s->chain < 0 ? run_chained : run_conv;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * linear: rows of x [..., K] times w [O, K]^T. A rank-4 x or y that is not in logical order goes through scratch.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct linear_state {
    cpu_fc *fc;
    int64_t K, O, rows;
    int x_direct, y_direct;
} linear_state;

static void linear_destroy(void *p)
{
    linear_state *st = p;
    if (!st) return;
    cpu_fc_destroy(st->fc);
    free(st);
}

static void run_linear(const cpu_plan *p, const cpu_step *s)
{
    const linear_state *st = s->state;
    const cpu_tensor *xt = &p->t[s->in[0]], *yt = &p->t[s->out];
    const float *x = xt->data;
    /* no scratch at all when x and y are both direct (NULL + 0 is undefined behaviour) */
    float *xs = s->scratch, *ys = s->scratch ? s->scratch + (st->x_direct ? 0 : xt->numel) : NULL;
    int64_t rm[PAR_MAX_RANK];
    if (!st->x_direct) {
        cpu_rowmajor_strides(xt->rank, xt->dims, rm);
        cpu_nd_copy(xt->rank, xt->dims, xs, rm, xt->data, xt->strides);
        x = xs;
    }
    cpu_fc_run(st->fc, st->rows, x, st->y_direct ? yt->data : ys, p->pool);
    if (!st->y_direct) {
        cpu_rowmajor_strides(yt->rank, yt->dims, rm);
        cpu_nd_copy(yt->rank, yt->dims, yt->data, yt->strides, ys, rm);
    }
}

par_status cpu_lower_linear(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    const par_value *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    if (wv->rank != 2) return par_msgf(msg, PAR_ERROR, "linear: weight rank %d, not 2", wv->rank);
    linear_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = linear_destroy;
    st->O = wv->dims[0], st->K = wv->dims[1];
    st->rows = x->numel / st->K;
    st->x_direct = cpu_tensor_rowmajor(x);
    st->y_direct = cpu_tensor_rowmajor(y);
    char err[ERR_LEN] = "";
    st->fc = cpu_fc_create(st->K, st->O, wv->data, bv ? bv->data : NULL, s->out_min, s->out_max, p->isa, err,
                           sizeof err);
    if (!st->fc) return par_msgf(msg, PAR_UNSUPPORTED, "linear: %s", err[0] ? err : "kernel refused the parameters");
    const size_t need = (size_t)((st->x_direct ? 0 : x->numel) + (st->y_direct ? 0 : y->numel));
    if (need) {
        par_status r = cpu_step_scratch(s, need, msg);
        if (r != PAR_OK) return r;
    }
    s->run = run_linear;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * matmul: a [..., M, K] x b [..., K, N], batch dims broadcast (numpy); operands not in logical order go through
 * scratch (rank-4 NHWC tensors).
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct matmul_state {
    int64_t M, K, N, batches;
    int32_t batch_rank;
    int64_t ydims[PAR_MAX_RANK], as[PAR_MAX_RANK], bs[PAR_MAX_RANK]; /* batch dims; operand batch strides in matrices */
    int direct[3];  /* a, b, y in logical order */
    size_t off[3];  /* their scratch offsets */
} matmul_state;

static void broadcast_batch_strides(const int64_t *dims, int32_t rank, int32_t out_rank, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = out_rank - 1; d >= 0; d--) {
        const int32_t k = d - (out_rank - rank);
        if (k < 0) {
            strides[d] = 0;
            continue;
        }
        strides[d] = dims[k] == 1 ? 0 : s;
        s *= dims[k];
    }
}

static const float *to_rowmajor(const cpu_tensor *t, float *scratch)
{
    int64_t rm[PAR_MAX_RANK];
    cpu_rowmajor_strides(t->rank, t->dims, rm);
    cpu_nd_copy(t->rank, t->dims, scratch, rm, t->data, t->strides);
    return scratch;
}

static void run_matmul(const cpu_plan *p, const cpu_step *s)
{
    const matmul_state *st = s->state;
    const cpu_tensor *at = &p->t[s->in[0]], *bt = &p->t[s->in[1]], *yt = &p->t[s->out];
    const float *a = st->direct[0] ? at->data : to_rowmajor(at, s->scratch + st->off[0]);
    const float *b = st->direct[1] ? bt->data : to_rowmajor(bt, s->scratch + st->off[1]);
    float *y = st->direct[2] ? yt->data : s->scratch + st->off[2];
    for (int64_t t = 0; t < st->batches; t++) {
        int64_t r = t, ao = 0, bo = 0;
        for (int32_t d = st->batch_rank - 1; d >= 0; d--) {
            const int64_t k = r % st->ydims[d];
            r /= st->ydims[d];
            ao += k * st->as[d];
            bo += k * st->bs[d];
        }
        cpu_gemm_f32(st->M, st->N, st->K, a + ao * st->M * st->K, st->K, b + bo * st->K * st->N, st->N,
                     y + t * st->M * st->N, st->N, p->isa, p->pool);
    }
    if (!st->direct[2]) {
        int64_t rm[PAR_MAX_RANK];
        cpu_rowmajor_strides(yt->rank, yt->dims, rm);
        cpu_nd_copy(yt->rank, yt->dims, yt->data, yt->strides, y, rm);
    }
}

par_status cpu_lower_matmul(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *a = &p->t[s->in[0]], *b = &p->t[s->in[1]], *y = &p->t[s->out];
    if (a->rank < 2 || b->rank < 2) return par_msgf(msg, PAR_ERROR, "matmul: operands must have rank >= 2");
    matmul_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free;
    st->M = a->dims[a->rank - 2], st->K = a->dims[a->rank - 1], st->N = b->dims[b->rank - 1];
    st->batch_rank = y->rank - 2;
    st->batches = 1;
    for (int32_t d = 0; d < st->batch_rank; d++) {
        st->ydims[d] = y->dims[d];
        st->batches *= y->dims[d];
    }
    broadcast_batch_strides(a->dims, a->rank - 2, st->batch_rank, st->as);
    broadcast_batch_strides(b->dims, b->rank - 2, st->batch_rank, st->bs);
    const cpu_tensor *ts[3] = {a, b, y};
    size_t need = 0;
    for (int i = 0; i < 3; i++) {
        st->direct[i] = cpu_tensor_rowmajor(ts[i]);
        st->off[i] = need;
        if (!st->direct[i]) need += (size_t)ts[i]->numel;
    }
    if (need) {
        par_status r = cpu_step_scratch(s, need, msg);
        if (r != PAR_OK) return r;
    }
    s->run = run_matmul;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * conv_transpose2d: per image n and group g, cols[HW, KH*KW*OPG] = x_g[HW, CPG] w_g[CPG, KH*KW*OPG] (weights
 * repacked at prepare from PyTorch's [C, OPG, KH, KW] so that the output channels are innermost), then each column
 * entry is scattered to y[ih*sh - pt + kh*dh, iw*sw - pl + kw*dw, g*OPG + o] when inside. y starts from the bias;
 * the scatter order is fixed, so results are the same every run.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct convt_state {
    int64_t N, C, H, W, O, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, groups, CPG, OPG;
    float *w;    /* [C, KH, KW, OPG] */
    float *bias; /* [O] or NULL */
} convt_state;

static void convt_destroy(void *p)
{
    convt_state *st = p;
    if (!st) return;
    free(st->w);
    free(st->bias);
    free(st);
}

static void run_convt(const cpu_plan *p, const cpu_step *s)
{
    const convt_state *st = s->state;
    const float *x = p->t[s->in[0]].data;
    float *y = p->t[s->out].data;
    const int64_t HW = st->H * st->W, NN = st->KH * st->KW * st->OPG, O = st->O;
    float *cols = s->scratch;
    for (int64_t n = 0; n < st->N; n++) {
        float *yn = y + n * st->OH * st->OW * O;
        for (int64_t i = 0; i < st->OH * st->OW; i++)
            for (int64_t o = 0; o < O; o++) yn[i * O + o] = st->bias ? st->bias[o] : 0.0f;
        for (int64_t g = 0; g < st->groups; g++) {
            cpu_gemm_f32(HW, NN, st->CPG, x + n * HW * st->C + g * st->CPG, st->C, st->w + g * st->CPG * NN, NN, cols,
                         NN, p->isa, p->pool);
            for (int64_t ih = 0; ih < st->H; ih++)
                for (int64_t kh = 0; kh < st->KH; kh++) {
                    const int64_t oh = ih * st->sh - st->pt + kh * st->dh;
                    if (oh < 0 || oh >= st->OH) continue;
                    for (int64_t iw = 0; iw < st->W; iw++)
                        for (int64_t kw = 0; kw < st->KW; kw++) {
                            const int64_t ow = iw * st->sw - st->pl + kw * st->dw;
                            if (ow < 0 || ow >= st->OW) continue;
                            const float *c = cols + (ih * st->W + iw) * NN + (kh * st->KW + kw) * st->OPG;
                            float *yo = yn + (oh * st->OW + ow) * O + g * st->OPG;
                            for (int64_t o = 0; o < st->OPG; o++) yo[o] += c[o];
                        }
                }
        }
    }
}

par_status cpu_lower_conv_transpose2d(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    const par_value *wv = par_node_input(g, n, 1), *bv = par_node_input(g, n, 2);
    if (x->rank != 4 || wv->rank != 4) return par_msgf(msg, PAR_ERROR, "conv_transpose2d: input and weight must be rank 4");
    convt_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = convt_destroy;
    st->N = x->dims[0], st->C = x->dims[1], st->H = x->dims[2], st->W = x->dims[3];
    st->O = y->dims[1], st->OH = y->dims[2], st->OW = y->dims[3];
    st->OPG = wv->dims[1], st->KH = wv->dims[2], st->KW = wv->dims[3];
    st->groups = par_attr_int(n, "groups", 1);
    st->CPG = st->C / st->groups;
    st->sh = par_attr_ints_at(n, "stride", 0, 1), st->sw = par_attr_ints_at(n, "stride", 1, 1);
    st->dh = par_attr_ints_at(n, "dilation", 0, 1), st->dw = par_attr_ints_at(n, "dilation", 1, 1);
    st->pt = par_attr_ints_at(n, "padding", 0, 0), st->pl = par_attr_ints_at(n, "padding", 1, 0);
    const int64_t NN = st->KH * st->KW * st->OPG;
    st->w = malloc((size_t)(st->C * NN) * sizeof(float) + 64);
    if (!st->w) return par_msgf(msg, PAR_ERROR, "out of memory");
    const float *w = wv->data;
    for (int64_t c = 0; c < st->C; c++)
        for (int64_t o = 0; o < st->OPG; o++)
            for (int64_t kh = 0; kh < st->KH; kh++)
                for (int64_t kw = 0; kw < st->KW; kw++)
                    st->w[c * NN + (kh * st->KW + kw) * st->OPG + o] = w[((c * st->OPG + o) * st->KH + kh) * st->KW + kw];
    if (bv) {
        st->bias = malloc((size_t)st->O * sizeof(float));
        if (!st->bias) return par_msgf(msg, PAR_ERROR, "out of memory");
        memcpy(st->bias, bv->data, (size_t)st->O * sizeof(float));
    }
    par_status r = cpu_step_scratch(s, (size_t)(st->H * st->W * NN), msg);
    if (r != PAR_OK) return r;
    s->run = run_convt;
    return PAR_OK;
}
