/*
 * torch_emit.cpp - parity's float ops as TorchScript: one line of `forward` per node, calling the ATen operator
 * that is the op's PyTorch definition (aten.conv2d, aten.upsample_bilinear2d, ...), constants as module attributes.
 * Where parity's op takes what the ATen operator cannot (asymmetric padding), the line pads first with
 * aten.constant_pad_nd, as a PyTorch model exported from another framework does. It also holds the dispatch by mode
 * (par_t_lower); the literals and values both lowerings write are torch_emit_util.cpp's.
 *
 * It must not run anything (torch_backend.cpp compiles and runs the module), nor lower quantized nodes
 * (torch_emit_q.cpp).
 */
#include <cmath>
#include <cstdio>
#include <cstring>

#include "torch_int.hpp"

/* ---------------------------------------------------------------------------------------------------------------
 * Float lowerings
 * ------------------------------------------------------------------------------------------------------------- */
typedef par_status (*lower_fn)(temit &e, const par_node *n, par_msg *msg);

static std::vector<int64_t> ints(const par_node *n, const char *name)
{
    const par_attr *a = par_node_attr(n, name);
    if (!a || a->type != PAR_ATTR_INTS) return {};
    return std::vector<int64_t>(a->ints, a->ints + a->count);
}

static std::string in(temit &e, const par_node *n, int k)
{
    return k < n->n_inputs && n->inputs[k] >= 0 ? e.v(n->inputs[k]) : std::string("None");
}

static std::string o0(const par_node *n)
{
    return temit::out(n->outputs[0]);
}

/* conv2d's effective padding [pt, pl, pb, pr] (pad_mode same/valid computed as docs/ops.md says). */
static std::vector<int64_t> conv_pads(const par_graph_desc *g, const par_node *n)
{
    std::vector<int64_t> p = ints(n, "padding");
    const char *mode = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(mode, "explicit") == 0) return p;
    p.assign(4, 0);
    if (strcmp(mode, "valid") == 0) return p;
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1);
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], k = w->dims[2 + d], s = par_attr_ints_at(n, "stride", d, 1),
                dl = par_attr_ints_at(n, "dilation", d, 1);
        int64_t o = (in + s - 1) / s, total = std::max<int64_t>(0, (o - 1) * s + (k - 1) * dl + 1 - in);
        p[d] = total / 2;
        p[2 + d] = total - total / 2;
    }
    return p;
}

static par_status l_conv2d(temit &e, const par_node *n, par_msg *msg)
{
    std::vector<int64_t> sym;
    std::string x = par_t_prepad(e, n, in(e, n, 0), conv_pads(e.g, n), "0.0", sym);
    e.line(o0(n) + " = aten.conv2d(" + x + ", " + in(e, n, 1) + ", " + in(e, n, 2) + ", " +
           par_t_ints(ints(n, "stride")) + ", " + par_t_ints(sym) + ", " + par_t_ints(ints(n, "dilation")) + ", " +
           std::to_string(par_attr_int(n, "groups", 1)) + ")");
    return PAR_OK;
}

static par_status l_conv_transpose2d(temit &e, const par_node *n, par_msg *msg)
{
    std::vector<int64_t> p = ints(n, "padding"), op = ints(n, "output_padding");
    std::string head = "aten.conv_transpose2d(" + in(e, n, 0) + ", " + in(e, n, 1) + ", ";
    std::string tail = ", " + par_t_ints(ints(n, "stride"));
    std::string g = std::to_string(par_attr_int(n, "groups", 1)), dil = par_t_ints(ints(n, "dilation"));
    if (p[0] == p[2] && p[1] == p[3]) {
        e.line(o0(n) + " = " + head + in(e, n, 2) + tail + ", " + par_t_ints({p[0], p[1]}) + ", " + par_t_ints(op) +
               ", " + g + ", " + dil + ")");
        return PAR_OK;
    }
    /* Asymmetric: the full transposed convolution, then cropped (negative pads) or extended (output_padding past
     * the bottom/right padding), then the bias. */
    std::string t = "t" + std::to_string(n->outputs[0]);
    e.line(t + " = " + head + "None" + tail + ", [0, 0], [0, 0], " + g + ", " + dil + ")");
    std::string crop = par_t_ints({-p[1], op[1] - p[3], -p[0], op[0] - p[2]});
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
        e.line(t + " = aten.constant_pad_nd(" + t + ", " + crop + ", 0.0)");
        e.line(o0(n) + " = aten.add(" + t + ", aten.reshape(" + in(e, n, 2) + ", [1, -1, 1, 1]))");
    } else {
        e.line(o0(n) + " = aten.constant_pad_nd(" + t + ", " + crop + ", 0.0)");
    }
    return PAR_OK;
}

static par_status l_linear(temit &e, const par_node *n, par_msg *msg)
{
    e.line(o0(n) + " = aten.linear(" + in(e, n, 0) + ", " + in(e, n, 1) + ", " + in(e, n, 2) + ")");
    return PAR_OK;
}

/* Ops that are one ATen call on their inputs and some literal arguments. */
static par_status call(temit &e, const par_node *n, const char *op, int n_in, const std::string &extra)
{
    std::string s = o0(n) + " = aten." + op + "(";
    for (int k = 0; k < n_in; k++) s += (k ? ", " : "") + in(e, n, k);
    e.line(s + extra + ")");
    return PAR_OK;
}

#define SIMPLE(NAME, OP, N)                                                                                          \
    static par_status l_##NAME(temit &e, const par_node *n, par_msg *msg) { return call(e, n, OP, N, ""); }
SIMPLE(matmul, "matmul", 2)
SIMPLE(add, "add", 2)
SIMPLE(sub, "sub", 2)
SIMPLE(mul, "mul", 2)
SIMPLE(div, "div", 2)
SIMPLE(relu, "relu", 1)
SIMPLE(prelu, "prelu", 2)
SIMPLE(sigmoid, "sigmoid", 1)
SIMPLE(tanh, "tanh", 1)
SIMPLE(hardsigmoid, "hardsigmoid", 1)
SIMPLE(hardswish, "hardswish", 1)
SIMPLE(silu, "silu", 1)
SIMPLE(sqrt, "sqrt", 1)
SIMPLE(rsqrt, "rsqrt", 1)
SIMPLE(where, "where", 3)
#undef SIMPLE

static par_status l_relu6(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "hardtanh", 1, ", 0.0, 6.0");
}

static par_status l_hardtanh(temit &e, const par_node *n, par_msg *msg)
{
    double lo, hi;
    par_clamp_bounds(n, &lo, &hi);
    return call(e, n, "hardtanh", 1, ", " + par_t_float(lo) + ", " + par_t_float(hi));
}

static par_status l_clamp(temit &e, const par_node *n, par_msg *msg)
{
    double lo, hi;
    par_clamp_bounds(n, &lo, &hi);
    /* torch.clamp refuses two None bounds: a clamp without bounds keeps its lower one, -inf, which changes no value
     * (NaN included) */
    const bool both = std::isinf(lo) && std::isinf(hi);
    return call(e, n, "clamp", 1,
                ", " + (std::isinf(lo) && !both ? std::string("None") : par_t_float(lo)) + ", " +
                    (std::isinf(hi) ? std::string("None") : par_t_float(hi)));
}

static par_status l_leaky_relu(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "leaky_relu", 1, ", " + par_t_float(par_attr_float(n, "negative_slope", 0.01)));
}

static par_status l_gelu(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "gelu", 1, std::string(", approximate=\"") + par_attr_str(n, "approximate", "none") + "\"");
}

static par_status l_elu(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "elu", 1, ", " + par_t_float(par_attr_float(n, "alpha", 1)) + ", 1, 1");
}

/* max_pool2d with asymmetric padding: -inf padding first, then the output cropped to parity's shape (a ceil_mode
 * window that starts in the padding is dropped, and those are the last ones). */
static par_status l_max_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    std::vector<int64_t> p = ints(n, "padding"), sym;
    std::string x = par_t_prepad(e, n, in(e, n, 0), p, "float(\"-inf\")", sym);
    std::string args = par_t_ints(ints(n, "kernel")) + ", " + par_t_ints(ints(n, "stride")) + ", " + par_t_ints(sym) +
                       ", " + par_t_ints(ints(n, "dilation")) + ", " +
                       (par_attr_int(n, "ceil_mode", 0) ? "True" : "False");
    const par_value *y = par_node_output(e.g, n, 0);
    if (sym[0] == p[0] && sym[1] == p[1] && p[0] == p[2] && p[1] == p[3]) {
        e.line(o0(n) + " = aten.max_pool2d(" + x + ", " + args + ")");
        return PAR_OK;
    }
    std::string t = "t" + std::to_string(n->outputs[0]);
    e.line(t + " = aten.max_pool2d(" + x + ", " + args + ")");
    e.line(o0(n) + " = aten.slice(aten.slice(" + t + ", 2, 0, " + std::to_string(y->dims[2]) + ", 1), 3, 0, " +
           std::to_string(y->dims[3]) + ", 1)");
    return PAR_OK;
}

static par_status l_avg_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    std::vector<int64_t> p = ints(n, "padding"), sym;
    int cip = (int)par_attr_int(n, "count_include_pad", 1);
    if ((p[0] != p[2] || p[1] != p[3]) && !cip)
        return par_msgf(msg, PAR_UNSUPPORTED,
                        "node '%s' (avg_pool2d): asymmetric padding with count_include_pad=0: aten.avg_pool2d takes "
                        "symmetric padding, and zero padding added before it would be counted", n->name);
    if (e.dry) return PAR_OK;
    std::string x = par_t_prepad(e, n, in(e, n, 0), p, "0.0", sym);
    std::string args = par_t_ints(ints(n, "kernel")) + ", " + par_t_ints(ints(n, "stride")) + ", " + par_t_ints(sym) +
                       ", " + (par_attr_int(n, "ceil_mode", 0) ? "True" : "False") + ", " + (cip ? "True" : "False");
    const par_value *y = par_node_output(e.g, n, 0);
    if (p[0] == p[2] && p[1] == p[3]) {
        e.line(o0(n) + " = aten.avg_pool2d(" + x + ", " + args + ")");
        return PAR_OK;
    }
    std::string t = "t" + std::to_string(n->outputs[0]);
    e.line(t + " = aten.avg_pool2d(" + x + ", " + args + ")");
    e.line(o0(n) + " = aten.slice(aten.slice(" + t + ", 2, 0, " + std::to_string(y->dims[2]) + ", 1), 3, 0, " +
           std::to_string(y->dims[3]) + ", 1)");
    return PAR_OK;
}

static par_status l_adaptive_avg_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "adaptive_avg_pool2d", 1, ", " + par_t_ints(ints(n, "output_size")));
}

static par_status l_global_avg_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "adaptive_avg_pool2d", 1, ", [1, 1]");
}

static std::string reduce_args(const par_node *n)
{
    return ", " + par_t_ints(ints(n, "axes")) + ", " + (par_attr_int(n, "keepdims", 0) ? "True" : "False");
}

static par_status l_mean(temit &e, const par_node *n, par_msg *msg) { return call(e, n, "mean", 1, reduce_args(n)); }
static par_status l_sum(temit &e, const par_node *n, par_msg *msg) { return call(e, n, "sum", 1, reduce_args(n)); }
static par_status l_amax(temit &e, const par_node *n, par_msg *msg) { return call(e, n, "amax", 1, reduce_args(n)); }

static par_status l_softmax(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "softmax", 1, ", " + std::to_string(par_attr_int(n, "axis", -1)));
}

static par_status l_log_softmax(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "log_softmax", 1, ", " + std::to_string(par_attr_int(n, "axis", -1)));
}

static par_status l_upsample_nearest2d(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "upsample_nearest2d", 1, par_t_resize_args(e.g, n, false, false));
}

static par_status l_upsample_nearest_exact2d(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "_upsample_nearest_exact2d", 1, par_t_resize_args(e.g, n, false, false));
}

static par_status l_upsample_bilinear2d(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "upsample_bilinear2d", 1, par_t_resize_args(e.g, n, par_attr_int(n, "align_corners", 0), true));
}

static par_status l_upsample_bicubic2d(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "upsample_bicubic2d", 1, par_t_resize_args(e.g, n, par_attr_int(n, "align_corners", 0), true));
}

static par_status l_concat(temit &e, const par_node *n, par_msg *msg)
{
    std::string s = o0(n) + " = aten.cat([";
    for (int k = 0; k < n->n_inputs; k++) s += (k ? ", " : "") + in(e, n, k);
    e.line(s + "], " + std::to_string(par_attr_int(n, "axis", 1)) + ")");
    return PAR_OK;
}

static par_status l_reshape(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "reshape", 1, ", " + par_t_ints(ints(n, "shape")));
}

static par_status l_flatten(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "flatten", 1,
                ", " + std::to_string(par_attr_int(n, "start_dim", 1)) + ", " + std::to_string(par_attr_int(n, "end_dim", -1)));
}

static par_status l_permute(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "permute", 1, ", " + par_t_ints(ints(n, "perm")));
}

/* pad: PyTorch's pad list runs from the last dimension; reflect and replicate pad at most the last 3 dimensions of
 * an input of 1 or 2 more dimensions (F.pad's rule). */
static par_status l_pad(temit &e, const par_node *n, par_msg *msg)
{
    std::vector<int64_t> p = ints(n, "pads");
    const par_value *x = par_node_input(e.g, n, 0);
    const char *mode = par_attr_str(n, "mode", "constant");
    int first = x->rank; /* the first padded dimension */
    for (int d = 0; d < x->rank; d++)
        if (p[2 * d] || p[2 * d + 1]) {
            first = d;
            break;
        }
    int k = x->rank - first;
    if (k == 0) mode = "constant"; /* nothing padded: any mode is the copy, which reflect and replicate refuse below
                                    * rank 2 */
    if (strcmp(mode, "constant") != 0 && k > 0 && (k > 3 || x->rank < k + 1 || x->rank > k + 2))
        return par_msgf(msg, PAR_UNSUPPORTED,
                        "node '%s' (pad): mode %s pads %d trailing dimension(s) of a rank-%d input; PyTorch's %s "
                        "padding takes the last 1-3 dimensions of an input with 1 or 2 more", n->name, mode, k,
                        (int)x->rank, mode);
    std::vector<int64_t> tp;
    for (int d = x->rank - 1; d >= first; d--) {
        tp.push_back(p[2 * d]);
        tp.push_back(p[2 * d + 1]);
    }
    if (tp.empty()) tp = {0, 0};
    if (strcmp(mode, "constant") == 0)
        return call(e, n, "constant_pad_nd", 1, ", " + par_t_ints(tp) + ", " + par_t_float(par_attr_float(n, "value", 0)));
    return call(e, n, "pad", 1, ", " + par_t_ints(tp) + ", \"" + mode + "\"");
}

static par_status l_slice(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "slice", 1,
                ", " + std::to_string(par_attr_int(n, "dim", 0)) + ", " + std::to_string(par_attr_int(n, "start", 0)) +
                    ", " + std::to_string(par_attr_int(n, "end", INT64_MAX)) + ", " +
                    std::to_string(par_attr_int(n, "step", 1)));
}

static par_status l_masked_fill(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "masked_fill", 2, ", " + par_t_float(par_attr_float(n, "value", 0)));
}

/* gather: index_select on the flattened indices, reshaped to parity's output shape (indices of any rank). */
static par_status l_gather(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *y = par_node_output(e.g, n, 0);
    e.line(o0(n) + " = aten.reshape(aten.index_select(" + in(e, n, 0) + ", " +
           std::to_string(par_attr_int(n, "axis", 0)) + ", aten.reshape(" + in(e, n, 1) + ", [-1])), " +
           par_t_ints(par_t_dims(y)) + ")");
    return PAR_OK;
}

static par_status l_embedding(temit &e, const par_node *n, par_msg *msg)
{
    e.line(o0(n) + " = aten.embedding(" + in(e, n, 1) + ", " + in(e, n, 0) + ")");
    return PAR_OK;
}

static par_status l_batch_norm(temit &e, const par_node *n, par_msg *msg)
{
    return call(e, n, "batch_norm", 5, ", False, 0.1, " + par_t_float(par_attr_float(n, "eps", 1e-5)) + ", False");
}

static par_status l_layer_norm(temit &e, const par_node *n, par_msg *msg)
{
    e.line(o0(n) + " = aten.layer_norm(" + in(e, n, 0) + ", " + par_t_ints(ints(n, "normalized_shape")) + ", " +
           in(e, n, 1) + ", " + in(e, n, 2) + ", " + par_t_float(par_attr_float(n, "eps", 1e-5)) + ", False)");
    return PAR_OK;
}

static par_status l_group_norm(temit &e, const par_node *n, par_msg *msg)
{
    e.line(o0(n) + " = aten.group_norm(" + in(e, n, 0) + ", " + std::to_string(par_attr_int(n, "num_groups", 1)) +
           ", " + in(e, n, 1) + ", " + in(e, n, 2) + ", " + par_t_float(par_attr_float(n, "eps", 1e-5)) + ", False)");
    return PAR_OK;
}

static par_status l_instance_norm(temit &e, const par_node *n, par_msg *msg)
{
    e.line(o0(n) + " = aten.instance_norm(" + in(e, n, 0) + ", " + in(e, n, 1) + ", " + in(e, n, 2) +
           ", None, None, True, 0.1, " + par_t_float(par_attr_float(n, "eps", 1e-5)) + ", False)");
    return PAR_OK;
}

/* rms_norm as Llama's RMSNorm writes it (PyTorch 1.13 has no rms_norm operator): x * rsqrt(mean(x^2) + eps) * w. */
static par_status l_rms_norm(temit &e, const par_node *n, par_msg *msg)
{
    const int32_t k = par_attr_count(n, "normalized_shape");
    std::vector<int64_t> axes;
    for (int32_t i = 0; i < k; i++) axes.push_back(i - k);
    const std::string x = in(e, n, 0), o = o0(n);
    e.line(o + " = " + x + " * aten.rsqrt(aten.mean(" + x + " * " + x + ", " + par_t_ints(axes) + ", True) + " +
           par_t_float(par_attr_float(n, "eps", 1e-6)) + ")");
    if (n->n_inputs > 1 && n->inputs[1] >= 0) e.line(o + " = " + o + " * " + in(e, n, 1));
    return PAR_OK;
}

/* rope as PyTorch models write it: half-split pairs by slicing the last dimension in halves (HF's rotate_half),
 * interleaved pairs by viewing it as [D/2, 2] (Meta's reference); cos and sin [S, D/2] broadcast over the rows. */
static par_status l_rope(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(e.g, n, 0);
    const int64_t D = x->dims[x->rank - 1], h = D / 2;
    const std::string o = o0(n), xs = in(e, n, 0), c = in(e, n, 1), s = in(e, n, 2), a = o + "_a", b = o + "_b";
    if (par_attr_int(n, "interleaved", 0)) {
        std::vector<int64_t> pd = par_t_dims(x);
        pd.back() = h;
        pd.push_back(2);
        e.line(o + "_p = aten.reshape(" + xs + ", " + par_t_ints(pd) + ")");
        e.line(a + " = aten.select(" + o + "_p, -1, 0)");
        e.line(b + " = aten.select(" + o + "_p, -1, 1)");
        e.line(o + " = aten.flatten(aten.stack([" + a + " * " + c + " - " + b + " * " + s + ", " + b + " * " + c +
               " + " + a + " * " + s + "], -1), -2, -1)");
        return PAR_OK;
    }
    e.line(a + " = aten.slice(" + xs + ", -1, 0, " + std::to_string(h) + ", 1)");
    e.line(b + " = aten.slice(" + xs + ", -1, " + std::to_string(h) + ", " + std::to_string(D) + ", 1)");
    e.line(o + " = aten.cat([" + a + " * " + c + " - " + b + " * " + s + ", " + b + " * " + c + " + " + a + " * " + s +
           "], -1)");
    return PAR_OK;
}

/* sdpa as PyTorch 1.13's math (it has no public fused operator): k and v repeated per query head
 * (repeat_interleave), softmax(q k^T scale + mask, causal entries filled with -inf) v. */
static par_status l_sdpa(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *q = par_node_input(e.g, n, 0), *k = par_node_input(e.g, n, 1);
    const int64_t G = q->dims[1] / k->dims[1], Sq = q->dims[2], Skv = k->dims[2];
    const double sa = par_attr_float(n, "scale", 0.0);
    const double scale = sa > 0 ? sa : 1.0 / std::sqrt((double)q->dims[3]);
    const std::string o = o0(n), G_ = std::to_string(G);
    std::string kr = in(e, n, 1), vr = in(e, n, 2);
    if (G > 1) {
        e.line(o + "_k = aten.repeat_interleave(" + kr + ", " + G_ + ", 1)");
        e.line(o + "_v = aten.repeat_interleave(" + vr + ", " + G_ + ", 1)");
        kr = o + "_k", vr = o + "_v";
    }
    e.line(o + "_t = aten.matmul(" + in(e, n, 0) + ", aten.transpose(" + kr + ", -2, -1)) * " + par_t_float(scale));
    if (n->n_inputs > 3 && n->inputs[3] >= 0) e.line(o + "_t = " + o + "_t + " + in(e, n, 3));
    if (par_attr_int(n, "is_causal", 0)) {
        at::Tensor m;
        if (!e.dry) m = at::ones({Sq, Skv}, at::kBool).triu(1);
        e.line(o + "_t = aten.masked_fill(" + o + "_t, " + e.add_attr("causal", m) + ", " + par_t_float(-INFINITY) +
               ")");
    }
    e.line(o + " = aten.matmul(aten.softmax(" + o + "_t, -1), " + vr + ")");
    return PAR_OK;
}

/* slice_scatter: PyTorch's own operator (1.11 and later). */
static par_status l_slice_scatter(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *x = par_node_input(e.g, n, 0), *src = par_node_input(e.g, n, 1);
    int64_t dim = par_attr_int(n, "dim", 0);
    const int64_t start = par_attr_int(n, "start", 0), len = src->dims[dim < 0 ? dim + x->rank : dim];
    return call(e, n, "slice_scatter", 2,
                ", " + std::to_string(dim) + ", " + std::to_string(start) + ", " + std::to_string(start + len) + ", 1");
}

/* The float lowering table: op name -> lowering. An op not here is UNSUPPORTED in the float modes. */
static const struct {
    const char *op;
    lower_fn fn;
} float_ops[] = {
#define OP(name) {#name, l_##name},
    OP(conv2d) OP(conv_transpose2d) OP(linear) OP(matmul) OP(add) OP(sub) OP(mul) OP(div) OP(relu) OP(relu6)
    OP(hardtanh) OP(clamp) OP(leaky_relu) OP(prelu) OP(sigmoid) OP(tanh) OP(hardsigmoid) OP(hardswish) OP(silu)
    OP(gelu) OP(elu) OP(sqrt) OP(rsqrt) OP(max_pool2d) OP(avg_pool2d) OP(adaptive_avg_pool2d) OP(global_avg_pool2d)
    OP(mean) OP(sum) OP(amax) OP(softmax) OP(log_softmax) OP(upsample_nearest2d) OP(upsample_bilinear2d)
    OP(upsample_nearest_exact2d) OP(upsample_bicubic2d) OP(concat) OP(reshape) OP(flatten) OP(permute) OP(pad)
    OP(slice) OP(where) OP(masked_fill) OP(gather) OP(embedding) OP(batch_norm) OP(layer_norm) OP(group_norm)
    OP(instance_norm) OP(rms_norm) OP(rope) OP(sdpa) OP(slice_scatter)
#undef OP
};

static const char *mode_name(tmode m)
{
    return m == TM_EAGER ? "eager" : m == TM_MOBILE ? "mobile" : "quantized";
}

par_status par_t_lower_float(temit &e, int32_t i, par_msg *msg)
{
    const par_node *n = &e.g->nodes[i];
    for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
        int32_t vi = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
        if (vi < 0) continue;
        par_dtype t = e.g->values[vi].dtype;
        if (t == PAR_DTYPE_F16)
            return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): f16 tensors; the torch backend runs PyTorch's "
                            "f32 CPU kernels", n->name, n->op);
        if (par_t_is_q(t))
            return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): %s tensor in mode=%s; quantized graphs run with "
                            "mode=quantized", n->name, n->op, par_dtype_name(t), mode_name(e.set.mode));
    }
    for (const auto &o : float_ops)
        if (strcmp(o.op, n->op) == 0) return o.fn(e, n, msg);
    return par_msgf(msg, PAR_UNSUPPORTED, "node '%s': op %s has no float lowering in the torch backend", n->name, n->op);
}

static bool graph_is_quantized(const par_graph_desc *g)
{
    for (int32_t i = 0; i < g->n_values; i++)
        if (par_t_is_q(g->values[i].dtype)) return true;
    return false;
}

static bool node_is_quantized(const par_graph_desc *g, const par_node *n)
{
    if (strcmp(n->op, "linear_dynamic") == 0) return true;
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && par_t_is_q(g->values[n->inputs[k]].dtype)) return true;
    for (int k = 0; k < n->n_outputs; k++)
        if (par_t_is_q(g->values[n->outputs[k]].dtype)) return true;
    return false;
}

par_status par_t_lower(temit &e, int32_t i, par_msg *msg)
{
    const par_node *n = &e.g->nodes[i];
    bool q = node_is_quantized(e.g, n);
    if (e.set.mode != TM_QUANT) {
        if (q)
            return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): quantized node in mode=%s; quantized graphs run "
                            "with mode=quantized", n->name, n->op, mode_name(e.set.mode));
        return par_t_lower_float(e, i, msg);
    }
    if (q) return par_t_lower_quant(e, i, msg);
    if (!graph_is_quantized(e.g))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): float graph in mode=quantized; float graphs run with "
                        "mode=eager or mode=mobile", n->name, n->op);
    return par_t_lower_float(e, i, msg);
}
