/*
 * torch_emit_q.cpp - parity's quantized nodes as TorchScript over PyTorch's quantized operators (mode=quantized):
 * conv2d, conv_transpose2d and linear through quantized::*_prepack at prepare (the packed weights are module
 * attributes) and quantized::conv2d / conv_transpose2d / linear at run, add, mul, cat, softmax and matmul through
 * quantized::*, and the rest (relu, pooling, resizing, moves) through ATen's own kernels on quantized tensors.
 *
 * PyTorch's quantized activations are quint8: a qs8 tensor (q, z) is carried as the quint8 tensor (q + 128, z + 128),
 * which holds the same real values and requantizes to the same integers (the shift cancels in every difference
 * q - z); torch_backend.cpp shifts at the graph boundary. Weights are qint8: a qu8 weight (q, z) becomes
 * (q - 128, z - 128). An i32 bias becomes the float bias PyTorch expects, q * (in_scale * w_scale), which PyTorch
 * quantizes back to q exactly while |q| < 2^22.
 *
 * ATen's kernels keep their input's quantization (relu, max_pool2d, reshape) or fix their own (sigmoid: 1/256, 0);
 * a node whose output quantization differs is UNSUPPORTED with both (PyTorch has no requantizing form of them;
 * composing dequantize and quantize would round twice, which is not PyTorch's operator), except a relu or relu6
 * right after a conv2d, linear or add, which is fused into it as PyTorch's fused modules do (act_fusable). The
 * line of such a kernel goes through rq (torch_backend.cpp), which returns its input when the quantization matches;
 * with the knob requantize=float (off by default) the other nodes run too, rq then requantizing through float
 * (dequantize, quantize_per_tensor: two roundings, a composition and not a PyTorch operator). It must not run the
 * module.
 */
#include <ATen/core/dispatch/Dispatcher.h>

#include <cmath>
#include <cstring>

#include "torch_int.hpp"

typedef par_status (*lower_fn)(temit &e, const par_node *n, par_msg *msg);

static std::vector<int64_t> ints(const par_node *n, const char *name)
{
    const par_attr *a = par_node_attr(n, name);
    if (!a || a->type != PAR_ATTR_INTS) return {};
    return std::vector<int64_t>(a->ints, a->ints + a->count);
}

static std::string in(temit &e, const par_node *n, int k)
{
    return e.v(n->inputs[k]);
}

static const par_value *val(temit &e, const par_node *n, int k)
{
    return k < n->n_inputs && n->inputs[k] >= 0 ? &e.g->values[n->inputs[k]] : nullptr;
}

static const par_value *outv(temit &e, const par_node *n)
{
    return &e.g->values[n->outputs[0]];
}

/* parity's output quantization as PyTorch's quint8 (scale, zero point). */
static std::string qparams(const par_value *y)
{
    return par_t_float(y->scale) + ", " + std::to_string(y->zero_point + (y->dtype == PAR_DTYPE_QS8 ? 128 : 0));
}

static std::string o0(const par_node *n)
{
    return temit::out(n->outputs[0]);
}

/* y = expr, requantized to the node's output quantization when PyTorch's kernel left another one. */
static void assign_rq(temit &e, const par_node *n, const std::string &expr)
{
    e.line(o0(n) + " = self.rq(" + expr + ", " + qparams(outv(e, n)) + ")");
}

/* The first n_q inputs (all when -1) and the output are quantized. */
static par_status need_q(temit &e, const par_node *n, int n_q, par_msg *msg)
{
    for (int k = 0; k < (n_q < 0 ? n->n_inputs : n_q); k++) {
        const par_value *x = val(e, n, k);
        if (x && !par_t_is_q(x->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): input %d is %s; mode=quantized runs this op on "
                            "quantized tensors only", n->name, n->op, k, par_dtype_name(x->dtype));
    }
    if (!par_t_is_q(outv(e, n)->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): a %s output from quantized inputs is not a PyTorch "
                        "quantized operator", n->name, n->op, par_dtype_name(outv(e, n)->dtype));
    return PAR_OK;
}

static par_status need_q_input(temit &e, const par_node *n, par_msg *msg)
{
    return need_q(e, n, -1, msg);
}

/* PyTorch's quint8 view of a quantized value: (scale, zero point + 128 for qs8). */
static bool same_qparams(const par_value *a, const par_value *b)
{
    return a->scale == b->scale &&
           a->zero_point + (a->dtype == PAR_DTYPE_QS8 ? 128 : 0) == b->zero_point + (b->dtype == PAR_DTYPE_QS8 ? 128 : 0);
}

/* Fusion of an activation into its producer, as PyTorch's fused modules (ConvReLU2d, LinearReLU, add_relu) do:
 * relu, or relu6 whose output quantization saturates at 6 or below (so the clamp at 6 is the saturation), right
 * after a quantized conv2d, linear or add whose output nothing else reads. The producer then requantizes straight
 * to the activation's output and clamps at its zero point (quantized::conv2d_relu, linear_relu, add_relu). */
static bool act_fusable(const par_graph_desc *g, const par_node *act)
{
    const par_value *y = &g->values[act->outputs[0]];
    if (!par_t_is_q(y->dtype)) return false;
    if (strcmp(act->op, "relu6") == 0) {
        double qmax = y->dtype == PAR_DTYPE_QS8 ? 127 : 255;
        if ((qmax - y->zero_point) * (double)y->scale > 6.0 + 0.5 * (double)y->scale) return false;
    } else if (strcmp(act->op, "relu") != 0) {
        return false;
    }
    int32_t xi = act->inputs[0];
    const par_value *x = &g->values[xi];
    if (x->producer < 0 || x->dtype != y->dtype) return false;
    const par_node *p = &g->nodes[x->producer];
    if (strcmp(p->op, "conv2d") && strcmp(p->op, "linear") && strcmp(p->op, "add")) return false;
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == xi) return false;
    int readers = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++) readers += g->nodes[i].inputs[k] == xi;
    return readers == 1;
}

/* The activation node fused into producer p, or nullptr. */
static const par_node *fused_act(const par_graph_desc *g, const par_node *p)
{
    int32_t yi = p->outputs[0];
    for (int32_t i = (int32_t)(p - g->nodes) + 1; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        if (n->n_inputs >= 1 && n->inputs[0] == yi && act_fusable(g, n)) return n;
    }
    return nullptr;
}

/* A PyTorch kernel that keeps its input's quantization: the node must ask for the same one. */
static par_status keeps_qparams(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *x = val(e, n, 0), *y = outv(e, n);
    if (same_qparams(x, y) || e.set.rq_float) return PAR_OK;
    return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): output scale %.9g zero point %d differs from the input's "
                    "(%.9g, %d); PyTorch's quantized %s keeps its input's quantization and has no requantizing form "
                    "(knob requantize=float composes one)",
                    n->name, n->op, (double)y->scale, (int)y->zero_point, (double)x->scale, (int)x->zero_point, n->op);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Weights and prepacking
 * ------------------------------------------------------------------------------------------------------------- */
/* A constant qu8/qs8 weight as PyTorch's qint8 tensor (per tensor or per channel on its quant_axis). */
static at::Tensor qweight(const par_value *w)
{
    at::Tensor raw = at::from_blob(const_cast<void *>(w->data), par_t_dims(w), at::kChar).clone();
    if (w->dtype == PAR_DTYPE_QU8) raw = at::bitwise_xor(raw, -128); /* q - 128 as int8 */
    if (w->quant_axis >= 0) {
        int64_t c = w->dims[w->quant_axis];
        at::Tensor s = at::empty({c}, at::kDouble), z = at::zeros({c}, at::kLong);
        for (int64_t i = 0; i < c; i++) s[i] = (double)w->channel_scales[i];
        return at::_make_per_channel_quantized_tensor(raw, s, z, w->quant_axis);
    }
    return at::_make_per_tensor_quantized_tensor(raw, w->scale, w->zero_point - (w->dtype == PAR_DTYPE_QU8 ? 128 : 0));
}

/* The i32 bias as the float bias PyTorch's quantized ops take (they quantize it again with in_scale * w_scale). */
static c10::optional<at::Tensor> fbias(const par_value *b, const par_value *x, const par_value *w)
{
    if (!b) return c10::nullopt;
    const int32_t *q = (const int32_t *)b->data;
    at::Tensor t = at::empty({b->numel}, at::kFloat);
    float *f = t.data_ptr<float>();
    for (int64_t o = 0; o < b->numel; o++) {
        float ws = w->quant_axis >= 0 ? w->channel_scales[o] : w->scale;
        f[o] = (float)((double)q[o] * (double)(x->scale * ws));
    }
    return t;
}

static c10::IValue call_op(const char *name, torch::jit::Stack st)
{
    auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
    op.callBoxed(&st);
    return st.at(0);
}

/* Checks common to the weighted ops: constant weight and bias, a weight PyTorch's engine takes. */
static par_status check_weights(temit &e, const par_node *n, int w_axis, par_msg *msg)
{
    const par_value *w = val(e, n, 1), *b = val(e, n, 2);
    if (w->kind != PAR_VALUE_CONST || (b && b->kind != PAR_VALUE_CONST))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): PyTorch prepacks quantized weights and bias at load "
                        "time; a run-time weight or bias is not expressible", n->name, n->op);
    if (!par_t_is_q(w->dtype) || (b && b->dtype != PAR_DTYPE_I32))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): weight %s and bias %s; PyTorch's quantized ops take a "
                        "quantized weight and an i32 bias", n->name, n->op, par_dtype_name(w->dtype),
                        b ? par_dtype_name(b->dtype) : "none");
    if (w->quant_axis >= 0 && w->quant_axis != w_axis)
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): per-channel weight on axis %d; PyTorch's prepack "
                        "takes axis %d", n->name, n->op, (int)w->quant_axis, w_axis);
    if (e.set.qengine == at::QEngine::ONEDNN && w->quant_axis < 0 &&
        w->zero_point != (w->dtype == PAR_DTYPE_QU8 ? 128 : 0))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): weight zero point %d; oneDNN's prepack takes "
                        "symmetric weights only (zero point 0 as qint8)", n->name, n->op, (int)w->zero_point);
    return PAR_OK;
}

static par_status l_conv2d(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q(e, n, 1, msg);
    if (st == PAR_OK) st = check_weights(e, n, 0, msg);
    if (st != PAR_OK) return st;
    std::vector<int64_t> p = ints(n, "padding");
    const char *pm = par_attr_str(n, "pad_mode", "explicit");
    if (strcmp(pm, "explicit") != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (conv2d): pad_mode=%s in mode=quantized (explicit padding "
                        "only)", n->name, pm);
    if (p[0] != p[2] || p[1] != p[3])
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (conv2d): asymmetric padding [%lld, %lld, %lld, %lld]; "
                        "quantized::conv2d takes symmetric padding", n->name, (long long)p[0], (long long)p[1],
                        (long long)p[2], (long long)p[3]);
    e.node_requant[(int32_t)(n - e.g->nodes)] = PAR_REQUANT_FP32;
    if (e.dry) return PAR_OK;
    const par_value *x = val(e, n, 0), *w = val(e, n, 1), *b = val(e, n, 2);
    c10::List<int64_t> stride(ints(n, "stride")), pad({p[0], p[1]}), dil(ints(n, "dilation"));
    c10::IValue pk = call_op("quantized::conv2d_prepack", {qweight(w), fbias(b, x, w), stride, pad, dil,
                                                             par_attr_int(n, "groups", 1)});
    std::string a = e.add_attr("pk", pk);
    const par_node *act = fused_act(e.g, n);
    if (act)
        e.line(o0(act) + " = quantized.conv2d_relu(" + in(e, n, 0) + ", " + a + ", " + qparams(outv(e, act)) + ")");
    else
        e.line(o0(n) + " = quantized.conv2d(" + in(e, n, 0) + ", " + a + ", " + qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status l_conv_transpose2d(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q(e, n, 1, msg);
    if (st == PAR_OK) st = check_weights(e, n, 1, msg);
    if (st != PAR_OK) return st;
    std::vector<int64_t> p = ints(n, "padding"), opad = ints(n, "output_padding");
    if (p[0] != p[2] || p[1] != p[3])
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (conv_transpose2d): asymmetric padding; "
                        "quantized::conv_transpose2d takes symmetric padding", n->name);
    /* oneDNN's prepack refuses both, with these words */
    if (e.set.qengine == at::QEngine::ONEDNN && val(e, n, 1)->quant_axis >= 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (conv_transpose2d): per-channel weights; oneDNN's prepack: "
                        "\"Per Channel Quantization is currently disabled for transposed conv\"", n->name);
    if (e.set.qengine == at::QEngine::ONEDNN && (opad[0] || opad[1]))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (conv_transpose2d): output_padding [%lld, %lld]; oneDNN's "
                        "prepack: \"ONEDNN only supports zero output_padding\"", n->name, (long long)opad[0],
                        (long long)opad[1]);
    e.node_requant[(int32_t)(n - e.g->nodes)] = PAR_REQUANT_FP32;
    if (e.dry) return PAR_OK;
    const par_value *x = val(e, n, 0), *w = val(e, n, 1), *b = val(e, n, 2);
    c10::List<int64_t> stride(ints(n, "stride")), pad({p[0], p[1]}), op(ints(n, "output_padding")),
        dil(ints(n, "dilation"));
    c10::IValue pk = call_op("quantized::conv_transpose2d_prepack",
                             {qweight(w), fbias(b, x, w), stride, pad, op, dil, par_attr_int(n, "groups", 1)});
    std::string a = e.add_attr("pk", pk);
    e.line(o0(n) + " = quantized.conv_transpose2d(" + in(e, n, 0) + ", " + a + ", " + qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status l_linear(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q(e, n, 1, msg);
    if (st == PAR_OK) st = check_weights(e, n, 0, msg);
    if (st != PAR_OK) return st;
    e.node_requant[(int32_t)(n - e.g->nodes)] = PAR_REQUANT_FP32;
    if (e.dry) return PAR_OK;
    const par_value *x = val(e, n, 0), *w = val(e, n, 1), *b = val(e, n, 2);
    c10::IValue pk = call_op("quantized::linear_prepack", {qweight(w), fbias(b, x, w)});
    std::string a = e.add_attr("pk", pk);
    const par_node *act = fused_act(e.g, n);
    if (act)
        e.line(o0(act) + " = quantized.linear_relu(" + in(e, n, 0) + ", " + a + ", " + qparams(outv(e, act)) + ")");
    else
        e.line(o0(n) + " = quantized.linear(" + in(e, n, 0) + ", " + a + ", " + qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status l_linear_dynamic(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *x = val(e, n, 0), *w = val(e, n, 1), *b = val(e, n, 2);
    if (x->dtype != PAR_DTYPE_F32 || w->dtype != PAR_DTYPE_QS8 || w->kind != PAR_VALUE_CONST ||
        (b && (b->dtype != PAR_DTYPE_F32 || b->kind != PAR_VALUE_CONST)))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (linear_dynamic): quantized::linear_dynamic takes an f32 "
                        "input, a constant qs8 weight and a constant f32 bias", n->name);
    if (e.set.qengine == at::QEngine::ONEDNN && w->quant_axis < 0 && w->zero_point != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (linear_dynamic): weight zero point %d; oneDNN's prepack: "
                        "\"ONEDNN only supports symmetric quantization of weight\"", n->name, (int)w->zero_point);
    if (e.dry) return PAR_OK;
    c10::optional<at::Tensor> fb;
    if (b) fb = at::from_blob(const_cast<void *>(b->data), {b->numel}, at::kFloat).clone();
    c10::IValue pk = call_op("quantized::linear_prepack", {qweight(w), fb});
    std::string a = e.add_attr("pk", pk);
    e.line(o0(n) + " = quantized.linear_dynamic(" + in(e, n, 0) + ", " + a + ", " +
           (par_attr_int(n, "reduce_range", 0) ? "True" : "False") + ")");
    return PAR_OK;
}

static bool same_shape(const par_value *a, const par_value *b)
{
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* add, mul: quantized::add / quantized::mul, whose own requantization the engine decides (QNNPACK's add rounds
 * with its 22-bit multipliers, pytorch_qnnp_add_quantize). */
static par_status binary(temit &e, const par_node *n, const char *op, par_requant rq, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK) return st;
    e.node_requant[(int32_t)(n - e.g->nodes)] = rq;
    if (e.dry) return PAR_OK;
    const par_node *act = strcmp(op, "add") == 0 ? fused_act(e.g, n) : nullptr;
    if (act)
        e.line(o0(act) + " = quantized.add_relu(" + in(e, n, 0) + ", " + in(e, n, 1) + ", " + qparams(outv(e, act)) +
               ")");
    else
        e.line(o0(n) + " = quantized." + op + "(" + in(e, n, 0) + ", " + in(e, n, 1) + ", " + qparams(outv(e, n)) +
               ")");
    return PAR_OK;
}

static par_status l_add(temit &e, const par_node *n, par_msg *msg)
{
    const par_value *a = val(e, n, 0), *b = val(e, n, 1);
    /* QNNPACK's quantized add takes equal shapes; ATen's generic kernel (other engines) broadcasts */
    if (e.set.qengine == at::QEngine::QNNPACK && !same_shape(a, b))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (add): broadcasting; PyTorch's QNNPACK quantized add "
                        "takes inputs of one shape", n->name);
    return binary(e, n, "add", e.set.qengine == at::QEngine::QNNPACK ? PAR_REQUANT_PYTORCH_QNNP : PAR_REQUANT_FP32,
                  msg);
}

static par_status l_mul(temit &e, const par_node *n, par_msg *msg)
{
    return binary(e, n, "mul", PAR_REQUANT_FP32, msg);
}

static par_status l_matmul(temit &e, const par_node *n, par_msg *msg)
{
    return binary(e, n, "matmul", PAR_REQUANT_FP32, msg);
}

static par_status l_concat(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK) return st;
    if (e.dry) return PAR_OK;
    std::string s = o0(n) + " = quantized.cat([";
    for (int k = 0; k < n->n_inputs; k++) s += (k ? ", " : "") + in(e, n, k);
    e.line(s + "], " + std::to_string(par_attr_int(n, "axis", 1)) + ", " + qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status l_softmax(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK || e.dry) return st;
    e.line(o0(n) + " = quantized.softmax(" + in(e, n, 0) + ", " + std::to_string(par_attr_int(n, "axis", -1)) + ", " +
           qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status l_quantize(temit &e, const par_node *n, par_msg *msg)
{
    if (val(e, n, 0)->dtype != PAR_DTYPE_F32)
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (quantize): a %s input; torch.quantize_per_tensor takes "
                        "f32", n->name, par_dtype_name(val(e, n, 0)->dtype));
    if (e.dry) return PAR_OK;
    e.line(o0(n) + " = aten.quantize_per_tensor(" + in(e, n, 0) + ", " + qparams(outv(e, n)) + ", 13)");
    return PAR_OK;
}

static par_status l_dequantize(temit &e, const par_node *n, par_msg *msg)
{
    if (e.dry) return PAR_OK;
    e.line(o0(n) + " = aten.dequantize(" + in(e, n, 0) + ")");
    return PAR_OK;
}

/* ATen's kernel on the quantized tensor, which keeps the input's quantization; a relu or relu6 fused into its
 * producer emits nothing (the producer wrote its output). */
static par_status aten_rq(temit &e, const par_node *n, const char *op, const std::string &extra, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK) return st;
    if (act_fusable(e.g, n)) {
        const par_node *p = &e.g->nodes[e.g->values[n->inputs[0]].producer];
        auto it = e.node_requant.find((int32_t)(p - e.g->nodes));
        if (it != e.node_requant.end()) e.node_requant[(int32_t)(n - e.g->nodes)] = it->second;
        return PAR_OK;
    }
    if ((st = keeps_qparams(e, n, msg)) != PAR_OK || e.dry) return st;
    assign_rq(e, n, std::string("aten.") + op + "(" + in(e, n, 0) + extra + ")");
    return PAR_OK;
}

/* Kernels with a fixed output quantization (PyTorch's, as quint8): the node must ask for it. */
static par_status fixed_q(temit &e, const par_node *n, const char *op, double scale, int zp, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK) return st;
    const par_value *y = outv(e, n);
    if (!e.set.rq_float && ((double)y->scale != scale || y->zero_point + (y->dtype == PAR_DTYPE_QS8 ? 128 : 0) != zp))
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): output scale %.9g zero point %d; PyTorch's quantized "
                        "%s has the fixed output quantization scale %.9g zero point %d (as quint8)", n->name, n->op,
                        (double)y->scale, (int)y->zero_point, op, scale, zp);
    if (e.dry) return PAR_OK;
    assign_rq(e, n, std::string("aten.") + op + "(" + in(e, n, 0) + ")");
    return PAR_OK;
}

static par_status l_relu(temit &e, const par_node *n, par_msg *msg) { return aten_rq(e, n, "relu", "", msg); }
static par_status l_sigmoid(temit &e, const par_node *n, par_msg *msg) { return fixed_q(e, n, "sigmoid", 1.0 / 256, 0, msg); }
static par_status l_tanh(temit &e, const par_node *n, par_msg *msg) { return fixed_q(e, n, "tanh", 2.0 / 256, 128, msg); }
static par_status l_hardsigmoid(temit &e, const par_node *n, par_msg *msg)
{
    return fixed_q(e, n, "hardsigmoid", 1.0 / 256, 0, msg);
}

/* Ops with a requantizing PyTorch operator: quantized::hardswish and quantized::leaky_relu take the output's. */
static par_status l_hardswish(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK || e.dry) return st;
    e.line(o0(n) + " = quantized.hardswish(" + in(e, n, 0) + ", " + qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status l_relu6(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "hardtanh", ", 0.0, 6.0", msg);
}

static par_status l_hardtanh(temit &e, const par_node *n, par_msg *msg)
{
    double lo, hi;
    par_clamp_bounds(n, &lo, &hi);
    return aten_rq(e, n, "hardtanh", ", " + par_t_float(lo) + ", " + par_t_float(hi), msg);
}

static par_status l_clamp(temit &e, const par_node *n, par_msg *msg)
{
    double lo, hi;
    par_clamp_bounds(n, &lo, &hi);
    return aten_rq(e, n, "clamp",
                   ", " + (std::isinf(lo) ? std::string("None") : par_t_float(lo)) + ", " +
                       (std::isinf(hi) ? std::string("None") : par_t_float(hi)),
                   msg);
}

static par_status l_leaky_relu(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = need_q_input(e, n, msg);
    if (st != PAR_OK || e.dry) return st;
    e.line(o0(n) + " = quantized.leaky_relu(" + in(e, n, 0) + ", " + par_t_float(par_attr_float(n, "negative_slope", 0.01)) +
           ", False, " + qparams(outv(e, n)) + ")");
    return PAR_OK;
}

static par_status sym_pool(temit &e, const par_node *n, par_msg *msg)
{
    std::vector<int64_t> p = ints(n, "padding");
    if (p[0] != p[2] || p[1] != p[3])
        return par_msgf(msg, PAR_UNSUPPORTED, "node '%s' (%s): asymmetric padding; PyTorch's quantized pooling "
                        "takes symmetric padding", n->name, n->op);
    return PAR_OK;
}

static par_status l_max_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = sym_pool(e, n, msg);
    if (st != PAR_OK) return st;
    std::vector<int64_t> p = ints(n, "padding");
    return aten_rq(e, n, "max_pool2d",
                   ", " + par_t_ints(ints(n, "kernel")) + ", " + par_t_ints(ints(n, "stride")) + ", " +
                       par_t_ints({p[0], p[1]}) + ", " + par_t_ints(ints(n, "dilation")) + ", " +
                       (par_attr_int(n, "ceil_mode", 0) ? "True" : "False"),
                   msg);
}

static par_status l_avg_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    par_status st = sym_pool(e, n, msg);
    if (st != PAR_OK) return st;
    std::vector<int64_t> p = ints(n, "padding");
    return aten_rq(e, n, "avg_pool2d",
                   ", " + par_t_ints(ints(n, "kernel")) + ", " + par_t_ints(ints(n, "stride")) + ", " +
                       par_t_ints({p[0], p[1]}) + ", " + (par_attr_int(n, "ceil_mode", 0) ? "True" : "False") + ", " +
                       (par_attr_int(n, "count_include_pad", 1) ? "True" : "False"),
                   msg);
}

static par_status l_adaptive_avg_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "adaptive_avg_pool2d", ", " + par_t_ints(ints(n, "output_size")), msg);
}

static par_status l_global_avg_pool2d(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "adaptive_avg_pool2d", ", [1, 1]", msg);
}

static par_status l_mean(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "mean",
                   ", " + par_t_ints(ints(n, "axes")) + ", " + (par_attr_int(n, "keepdims", 0) ? "True" : "False"), msg);
}

static par_status l_upsample_nearest2d(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "upsample_nearest2d", par_t_resize_args(e.g, n, false, false), msg);
}

static par_status l_upsample_nearest_exact2d(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "_upsample_nearest_exact2d", par_t_resize_args(e.g, n, false, false), msg);
}

static par_status l_upsample_bilinear2d(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "upsample_bilinear2d", par_t_resize_args(e.g, n, par_attr_int(n, "align_corners", 0), true),
                   msg);
}

static par_status l_reshape(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "reshape", ", " + par_t_ints(ints(n, "shape")), msg);
}

static par_status l_flatten(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "flatten",
                   ", " + std::to_string(par_attr_int(n, "start_dim", 1)) + ", " +
                       std::to_string(par_attr_int(n, "end_dim", -1)),
                   msg);
}

static par_status l_permute(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "permute", ", " + par_t_ints(ints(n, "perm")), msg);
}

static par_status l_slice(temit &e, const par_node *n, par_msg *msg)
{
    return aten_rq(e, n, "slice",
                   ", " + std::to_string(par_attr_int(n, "dim", 0)) + ", " + std::to_string(par_attr_int(n, "start", 0)) +
                       ", " + std::to_string(par_attr_int(n, "end", INT64_MAX)) + ", " +
                       std::to_string(par_attr_int(n, "step", 1)),
                   msg);
}

static const struct {
    const char *op;
    lower_fn fn;
} quant_ops[] = {
#define OP(name) {#name, l_##name},
    OP(conv2d) OP(conv_transpose2d) OP(linear) OP(linear_dynamic) OP(add) OP(mul) OP(matmul) OP(concat) OP(softmax)
    OP(quantize) OP(dequantize) OP(relu) OP(relu6) OP(hardtanh) OP(clamp) OP(leaky_relu) OP(sigmoid) OP(tanh)
    OP(hardsigmoid) OP(hardswish) OP(max_pool2d) OP(avg_pool2d) OP(adaptive_avg_pool2d) OP(global_avg_pool2d)
    OP(mean) OP(upsample_nearest2d) OP(upsample_nearest_exact2d) OP(upsample_bilinear2d) OP(reshape) OP(flatten)
    OP(permute) OP(slice)
#undef OP
};

par_status par_t_lower_quant(temit &e, int32_t i, par_msg *msg)
{
    const par_node *n = &e.g->nodes[i];
    for (const auto &o : quant_ops)
        if (strcmp(o.op, n->op) == 0) return o.fn(e, n, msg);
    return par_msgf(msg, PAR_UNSUPPORTED, "node '%s': quantized %s has no PyTorch quantized operator in the torch "
                    "backend", n->name, n->op);
}
