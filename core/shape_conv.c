/*
 * shape_conv.c - geometry and shape inference of conv2d and conv_transpose2d (docs/ops.md, "Convolution"): the
 * explicit, same and valid padding modes, the output size, the checks of groups, weight and bias shapes.
 * The reference kernels (reference/conv.c) walk the same par_conv_geom. It must not compute any value.
 */
#include "shape_util.h"

#include <string.h>

/* Read the explicit padding [top, left, bottom, right] into q, each element in [0, PAR_SHAPE_ATTR_MAX]. */
static par_status read_padding(const par_node *n, par_conv_geom *q, par_msg *msg)
{
    int64_t pads[4];
    for (int32_t i = 0; i < 4; i++) {
        pads[i] = par_attr_ints_at(n, "padding", i, 0);
        if (pads[i] < 0 || pads[i] > PAR_SHAPE_ATTR_MAX)
            return par_msgf(msg, PAR_ERROR, "attribute 'padding': element %d is %lld, must be in [0, %lld]", (int)i,
                            (long long)pads[i], (long long)PAR_SHAPE_ATTR_MAX);
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
                                  par_conv_geom *q, par_msg *msg)
{
    par_status st;
    if ((st = check_rank4(xr, "input 0 (x)", msg)) != PAR_OK) return st;
    if ((st = check_rank4(wr, "input 1 (weight)", msg)) != PAR_OK) return st;
    q->n = xd[0]; q->c = xd[1]; q->h = xd[2]; q->w = xd[3];
    q->kh = wd[2]; q->kw = wd[3];
    q->groups = par_attr_int(n, "groups", 1);
    if (q->groups < 1 || q->groups > PAR_SHAPE_ATTR_MAX)
        return par_msgf(msg, PAR_ERROR, "attribute 'groups': %lld, must be >= 1", (long long)q->groups);
    if (q->c % q->groups != 0)
        return par_msgf(msg, PAR_ERROR, "attribute 'groups': %lld does not divide %lld input channels",
                        (long long)q->groups, (long long)q->c);
    return PAR_OK;
}

/* Then, once the output channels q->o are known: the optional bias of shape [O], stride and dilation (>= 1). */
static par_status read_bias_steps(const par_node *n, const int64_t *bd, int32_t br, par_conv_geom *q, par_msg *msg)
{
    par_status st;
    if (bd && (br != 1 || bd[0] != q->o))
        return par_msgf(msg, PAR_ERROR, "input 2 (bias): shape must be [%lld] (output channels)", (long long)q->o);
    if ((st = read_pair(n, "stride", 1, &q->sh, &q->sw, msg)) != PAR_OK) return st;
    return read_pair(n, "dilation", 1, &q->dh, &q->dw, msg);
}

/* conv2d geometry from input shapes (x dims, weight dims, optional bias dims) and the node's attributes. */
par_status par_conv2d_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                              const int64_t *bd, int32_t br, par_conv_geom *q, par_msg *msg)
{
    par_status st;
    if ((st = read_input_geom(n, xd, xr, wd, wr, q, msg)) != PAR_OK) return st;
    q->o = wd[0];
    q->oph = q->opw = 0;
    if (q->o % q->groups != 0)
        return par_msgf(msg, PAR_ERROR,
                        "attribute 'groups': %lld does not divide %lld output channels (weight dims[0])",
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
    q->oh = par_floor_div(q->h + q->pt + q->pb - ext_h, q->sh) + 1;
    q->ow = par_floor_div(q->w + q->pl + q->pr - ext_w, q->sw) + 1;
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
par_status par_conv_transpose2d_geom(const par_node *n, const int64_t *xd, int32_t xr, const int64_t *wd, int32_t wr,
                             const int64_t *bd, int32_t br, par_conv_geom *q, par_msg *msg)
{
    par_status st;
    if ((st = read_input_geom(n, xd, xr, wd, wr, q, msg)) != PAR_OK) return st;
    if (wd[0] != q->c)
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): dims[0] is %lld, expected %lld input channels "
                        "(layout [C, O/groups, KH, KW])", (long long)wd[0], (long long)q->c);
    if (wd[1] > PAR_SHAPE_ATTR_MAX)
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
                              int32_t, par_conv_geom *, par_msg *);

static par_status infer_common(const par_graph_desc *g, const par_node *n, par_value *outs, geom_fn fn,
                               par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!x || !w) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    par_conv_geom q;
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
    return infer_common(g, n, outs, par_conv2d_geom, msg);
}

par_status par_infer_conv_transpose2d(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    return infer_common(g, n, outs, par_conv_transpose2d_geom, msg);
}
