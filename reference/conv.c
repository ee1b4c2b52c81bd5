/*
 * conv.c - shape inference and float64 reference kernels of conv2d and conv_transpose2d (docs/ops.md), with the
 * error budget of every output element (docs/budgets/conv-pool.md).
 *
 * The kernels are plain loops over the definition: no im2col, no blocking, no reordering of the sum beyond what the
 * definition says. They see float tensors only (the interpreter dequantizes quantized operands around them), and
 * they must not allocate memory that outlives the call nor read anything but their inputs and the node's attributes.
 *
 * Budget of one output y = b + sum_{i<k} w_i x_i (k = products whose input position is inside the image; padding
 * contributes exact zeros, and adding an exact zero never rounds):
 *   rounding   par_gamma(k + [bias], u) * (sum (|w_i| + e(w_i)) (|x_i| + e(x_i)) + |b| + e(b))
 *   propagated par_prop_bound: the smaller of sum t_i and lambda sqrt(sum ts_i^2), with
 *              t_i = |w_i| e(x_i) + |x_i| e(w_i) + e(w_i) e(x_i) (+ e(b)) and ts_i the same from the scales s
 *   storage    u_store * (|y| + rounding + propagated)
 * The magnitudes in the rounding and storage terms are those of the operands a backend actually holds (reference
 * value plus its budget), which keeps the bound sound at second order. The scale of y is rounding +
 * sqrt(sum ts_i^2) + storage (reference.h, par_prop_bound).
 */
#include "reference.h"
#include "dot.h"
#include "kernel_util.h"

#include <math.h>
#include <stdint.h>

/* Geometry of one convolution, attributes resolved (pad_mode applied). */
typedef struct conv_geom {
    int64_t n, c, h, w;       /* input */
    int64_t o, kh, kw;        /* output channels, kernel */
    int64_t oh, ow;           /* output spatial size */
    int64_t groups;
    int64_t sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;
    int64_t oph, opw;         /* conv_transpose2d only */
} conv_geom;

/* Read the explicit padding [top, left, bottom, right] into q, each element in [0, DIM_LIMIT]. */
static par_status read_padding(const par_node *n, conv_geom *q, par_msg *msg)
{
    int64_t pads[4];
    for (int32_t i = 0; i < 4; i++) {
        pads[i] = par_attr_ints_at(n, "padding", i, 0);
        if (pads[i] < 0 || pads[i] > DIM_LIMIT)
            return par_msgf(msg, PAR_ERROR, "attribute 'padding': element %d is %lld, must be in [0, %lld]", (int)i,
                            (long long)pads[i], (long long)DIM_LIMIT);
    }
    q->pt = pads[0]; q->pl = pads[1]; q->pb = pads[2]; q->pr = pads[3];
    return PAR_OK;
}

/* NNAPI's implicit padding for pad_mode same: out = ceil(in / s), the total padding split with the extra element
 * at the end. */
static void same_padding(int64_t in, int64_t k, int64_t s, int64_t d, int64_t *begin, int64_t *end)
{
    int64_t out = (in + s - 1) / s;
    int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
    if (total < 0) total = 0;
    *begin = total / 2;
    *end = total - *begin;
}

static par_status check_rank4(int32_t rank, const char *what, par_msg *msg)
{
    if (rank != 4) return par_msgf(msg, PAR_ERROR, "%s: rank %d, expected 4", what, (int)rank);
    return PAR_OK;
}

/* What conv2d and conv_transpose2d read alike first: x and weight of rank 4, N, C, H, W and KH, KW from them, and
 * groups (>= 1, dividing the input channels). */
static par_status read_input_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                                  conv_geom *q, par_msg *msg)
{
    par_status st;
    if ((st = check_rank4(xr, "input 0 (x)", msg)) != PAR_OK) return st;
    if ((st = check_rank4(wr, "input 1 (weight)", msg)) != PAR_OK) return st;
    q->n = xd[0]; q->c = xd[1]; q->h = xd[2]; q->w = xd[3];
    q->kh = wd[2]; q->kw = wd[3];
    q->groups = par_attr_int(n, "groups", 1);
    if (q->groups < 1 || q->groups > DIM_LIMIT)
        return par_msgf(msg, PAR_ERROR, "attribute 'groups': %lld, must be >= 1", (long long)q->groups);
    if (q->c % q->groups != 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'groups': %lld does not divide %lld input channels",
                        (long long)q->groups, (long long)q->c);
    return PAR_OK;
}

/* Then, once the output channels q->o are known: the optional bias of shape [O], stride and dilation (>= 1). */
static par_status read_bias_steps(const par_node *n, const int64_t *bd, int32_t br, conv_geom *q, par_msg *msg)
{
    par_status st;
    if (bd && (br != 1 || bd[0] != q->o))
        return par_msgf(msg, PAR_ERROR, "input 2 (bias): shape must be [%lld] (output channels)", (long long)q->o);
    if ((st = read_pair(n, "stride", 1, &q->sh, &q->sw, msg)) != PAR_OK) return st;
    return read_pair(n, "dilation", 1, &q->dh, &q->dw, msg);
}

/* conv2d geometry from input shapes (x dims, weight dims, optional bias dims) and the node's attributes. */
static par_status conv2d_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                              const int64_t *bd, int32_t br, conv_geom *q, par_msg *msg)
{
    par_status st;
    if ((st = read_input_geom(n, xd, xr, wd, wr, q, msg)) != PAR_OK) return st;
    q->o = wd[0];
    q->oph = q->opw = 0;
    if (q->o % q->groups != 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'groups': %lld does not divide %lld output channels (weight dims[0])",
                        (long long)q->groups, (long long)q->o);
    if (wd[1] != q->c / q->groups)
        return par_msgf(msg, PAR_ERROR,
                        "input 1 (weight): dims[1] is %lld, expected %lld (%lld input channels / groups %lld)",
                        (long long)wd[1], (long long)(q->c / q->groups), (long long)q->c, (long long)q->groups);
    if ((st = read_bias_steps(n, bd, br, q, msg)) != PAR_OK) return st;

    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(mode, "explicit") == 0) {
        if ((st = read_padding(n, q, msg)) != PAR_OK) return st;
    } else if (strcmp(mode, "same") == 0) {
        same_padding(q->h, q->kh, q->sh, q->dh, &q->pt, &q->pb);
        same_padding(q->w, q->kw, q->sw, q->dw, &q->pl, &q->pr);
    } else if (strcmp(mode, "valid") == 0) {
        q->pt = q->pl = q->pb = q->pr = 0;
    } else {
        return par_msgf(msg, PAR_ERROR, "attribute 'pad_mode': '%s', expected explicit, same or valid", mode);
    }
    /* OH = floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1; with pad_mode same this is ceil(H / sh), with valid
     * ceil((H - (KH-1)*dh) / sh), as NNAPI defines them. */
    int64_t ext_h = q->dh * (q->kh - 1) + 1, ext_w = q->dw * (q->kw - 1) + 1;
    q->oh = floor_div(q->h + q->pt + q->pb - ext_h, q->sh) + 1;
    q->ow = floor_div(q->w + q->pl + q->pr - ext_w, q->sw) + 1;
    if (q->oh < 1)
        return par_msgf(msg, PAR_ERROR,
                        "attributes 'padding'/'dilation': output height %lld < 1 (input height %lld + padding %lld+%lld "
                        "is smaller than the dilated kernel extent %lld)",
                        (long long)q->oh, (long long)q->h, (long long)q->pt, (long long)q->pb, (long long)ext_h);
    if (q->ow < 1)
        return par_msgf(msg, PAR_ERROR,
                        "attributes 'padding'/'dilation': output width %lld < 1 (input width %lld + padding %lld+%lld "
                        "is smaller than the dilated kernel extent %lld)",
                        (long long)q->ow, (long long)q->w, (long long)q->pl, (long long)q->pr, (long long)ext_w);
    return PAR_OK;
}

/* conv_transpose2d geometry: x [N,C,H,W], weight [C, O/groups, KH, KW], bias [O]. */
static par_status convt_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                             const int64_t *bd, int32_t br, conv_geom *q, par_msg *msg)
{
    par_status st;
    if ((st = read_input_geom(n, xd, xr, wd, wr, q, msg)) != PAR_OK) return st;
    if (wd[0] != q->c)
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): dims[0] is %lld, expected %lld input channels "
                        "(layout [C, O/groups, KH, KW])", (long long)wd[0], (long long)q->c);
    if (wd[1] > DIM_LIMIT)
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): dims[1] is %lld, too large", (long long)wd[1]);
    q->o = wd[1] * q->groups;
    if ((st = read_bias_steps(n, bd, br, q, msg)) != PAR_OK) return st;
    if ((st = read_pair(n, "output_padding", 0, &q->oph, &q->opw, msg)) != PAR_OK) return st;
    if ((st = read_padding(n, q, msg)) != PAR_OK) return st;
    /* PyTorch: output_padding must be smaller than either the stride or the dilation of its dimension. */
    if (q->oph >= q->sh && q->oph >= q->dh)
        return par_msgf(msg, PAR_ERROR, "attribute 'output_padding': element 0 is %lld, must be smaller than the "
                        "stride %lld or the dilation %lld", (long long)q->oph, (long long)q->sh, (long long)q->dh);
    if (q->opw >= q->sw && q->opw >= q->dw)
        return par_msgf(msg, PAR_ERROR, "attribute 'output_padding': element 1 is %lld, must be smaller than the "
                        "stride %lld or the dilation %lld", (long long)q->opw, (long long)q->sw, (long long)q->dw);
    q->oh = (q->h - 1) * q->sh - q->pt - q->pb + q->dh * (q->kh - 1) + q->oph + 1;
    q->ow = (q->w - 1) * q->sw - q->pl - q->pr + q->dw * (q->kw - 1) + q->opw + 1;
    if (q->oh < 1)
        return par_msgf(msg, PAR_ERROR, "attribute 'padding': output height %lld < 1 (padding %lld+%lld removes the "
                        "whole transposed extent)", (long long)q->oh, (long long)q->pt, (long long)q->pb);
    if (q->ow < 1)
        return par_msgf(msg, PAR_ERROR, "attribute 'padding': output width %lld < 1 (padding %lld+%lld removes the "
                        "whole transposed extent)", (long long)q->ow, (long long)q->pl, (long long)q->pr);
    return PAR_OK;
}

typedef par_status (*geom_fn)(const par_node *, const int64_t *, int32_t, const int64_t *, int32_t, const int64_t *,
                              int32_t, conv_geom *, par_msg *);

static par_status infer_common(const par_graph_desc *g, const par_node *n, par_value *outs, geom_fn fn,
                               par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!x || !w) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    conv_geom q;
    par_status st = fn(n, x->dims, x->rank, w->dims, w->rank, b ? b->dims : NULL, b ? b->rank : 0, &q, msg);
    if (st != PAR_OK) return st;
    outs[0].rank = 4;
    outs[0].dims[0] = q.n;
    outs[0].dims[1] = q.o;
    outs[0].dims[2] = q.oh;
    outs[0].dims[3] = q.ow;
    return PAR_OK;
}

par_status par_infer_conv2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_common(g, n, outs, conv2d_geom, msg);
}

par_status par_infer_conv_transpose2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_common(g, n, outs, convt_geom, msg);
}

/* Optional input i: NULL when absent, whether the node lists it as -1 or has fewer inputs (in[] is only valid
 * below n_inputs). */
static const par_rt *opt_input(const par_ref_ctx *c, const par_rt *const *in, int32_t i)
{
    return i < c->n->n_inputs ? in[i] : NULL;
}

/* Resolve the geometry in a kernel and check the output tensor matches it. */
static par_status kernel_geom(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, geom_fn fn,
                              conv_geom *q, par_msg *msg)
{
    par_status st;
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    if ((st = check_float(in[0], "input 0 (x)", msg)) != PAR_OK) return st;
    if ((st = check_float(in[1], "input 1 (weight)", msg)) != PAR_OK) return st;
    const par_rt *b = opt_input(c, in, 2);
    if ((st = check_float(b, "input 2 (bias)", msg)) != PAR_OK) return st;
    if ((st = check_float(out[0], "output 0", msg)) != PAR_OK) return st;
    st = fn(c->n, in[0]->dims, in[0]->rank, in[1]->dims, in[1]->rank, b ? b->dims : NULL, b ? b->rank : 0, q, msg);
    if (st != PAR_OK) return st;
    const par_rt *y = out[0];
    if (y->rank != 4 || y->dims[0] != q->n || y->dims[1] != q->o || y->dims[2] != q->oh || y->dims[3] != q->ow)
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred [%lld,%lld,%lld,%lld]",
                        (long long)q->n, (long long)q->o, (long long)q->oh, (long long)q->ow);
    return PAR_OK;
}

par_status par_ref_conv2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    conv_geom q;
    par_status st = kernel_geom(c, in, out, conv2d_geom, &q, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0], *w = in[1], *b = opt_input(c, in, 2);
    par_rt *y = out[0];
    int64_t cg = q.c / q.groups, og = q.o / q.groups;
    for (int64_t n = 0; n < q.n; n++)
        for (int64_t o = 0; o < q.o; o++) {
            int64_t g0 = (o / og) * cg; /* first input channel of o's group */
            for (int64_t oh = 0; oh < q.oh; oh++)
                for (int64_t ow = 0; ow < q.ow; ow++) {
                    dot_acc a = {0};
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t kh = 0; kh < q.kh; kh++) {
                            int64_t ih = oh * q.sh - q.pt + kh * q.dh;
                            if (ih < 0 || ih >= q.h) continue; /* zero padding */
                            for (int64_t kw = 0; kw < q.kw; kw++) {
                                int64_t iw = ow * q.sw - q.pl + kw * q.dw;
                                if (iw < 0 || iw >= q.w) continue;
                                int64_t xi = ((n * q.c + g0 + ci) * q.h + ih) * q.w + iw;
                                int64_t wi = ((o * cg + ci) * q.kh + kh) * q.kw + kw;
                                dot_add(&a, w, wi, x, xi);
                            }
                        }
                    int64_t yi = ((n * q.o + o) * q.oh + oh) * q.ow + ow;
                    dot_finish(&a, b, o, &c->prec, y, yi);
                }
        }
    return PAR_OK;
}

/*
 * conv_transpose2d is defined by scattering: x[n,c,ih,iw] * w[c, o - og0, kh, kw] goes to
 * y[n, o, ih*sh - pt + kh*dh, iw*sw - pl + kw*dw]. The kernel gathers instead, which sums exactly the same
 * products: for output (oh, ow) and kernel tap (kh, kw), the contributing input row is ih = (oh + pt - kh*dh) / sh
 * when that division is exact and 0 <= ih < H. Gathering keeps each output's terms together for its budget.
 */
par_status par_ref_conv_transpose2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                    par_msg *msg)
{
    conv_geom q;
    par_status st = kernel_geom(c, in, out, convt_geom, &q, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0], *w = in[1], *b = opt_input(c, in, 2);
    par_rt *y = out[0];
    int64_t cg = q.c / q.groups, og = q.o / q.groups;
    for (int64_t n = 0; n < q.n; n++)
        for (int64_t o = 0; o < q.o; o++) {
            int64_t gi = o / og; /* o's group: input channels [gi*cg, (gi+1)*cg), weight column o - gi*og */
            for (int64_t oh = 0; oh < q.oh; oh++)
                for (int64_t ow = 0; ow < q.ow; ow++) {
                    dot_acc a = {0};
                    for (int64_t ci = gi * cg; ci < (gi + 1) * cg; ci++)
                        for (int64_t kh = 0; kh < q.kh; kh++) {
                            int64_t th = oh + q.pt - kh * q.dh;
                            if (th < 0 || th % q.sh != 0 || th / q.sh >= q.h) continue;
                            int64_t ih = th / q.sh;
                            for (int64_t kw = 0; kw < q.kw; kw++) {
                                int64_t tw = ow + q.pl - kw * q.dw;
                                if (tw < 0 || tw % q.sw != 0 || tw / q.sw >= q.w) continue;
                                int64_t iw = tw / q.sw;
                                int64_t xi = ((n * q.c + ci) * q.h + ih) * q.w + iw;
                                int64_t wi = ((ci * og + (o - gi * og)) * q.kh + kh) * q.kw + kw;
                                dot_add(&a, w, wi, x, xi);
                            }
                        }
                    int64_t yi = ((n * q.o + o) * q.oh + oh) * q.ow + ow;
                    dot_finish(&a, b, o, &c->prec, y, yi);
                }
        }
    return PAR_OK;
}
