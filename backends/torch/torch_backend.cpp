/*
 * torch_backend.cpp - libparity_torch.so's backend table: PyTorch 1.13's CPU path behind parity's C ABI. prepare
 * lowers the graph to TorchScript source (torch_emit*.cpp), defines it as `forward` of a fresh torch::jit::Module
 * whose attributes are the constants and prepacked weights, and per mode: eager runs that scripted module (ATen's
 * CPU kernels); mobile runs torch::jit::freeze (torch.jit.freeze: conv + batch_norm folding) and then
 * torch::jit::optimizeForMobile (conv/linear rewritten to XNNPACK prepacked ops, clamp fusion), the path of PyTorch
 * Mobile apps; quantized runs PyTorch's
 * quantized operators under the engine the knob qengine= names. bind wraps the buffers, run calls forward and copies
 * the outputs into parity's buffers (qs8 shifted back from PyTorch's quint8).
 *
 * PARITY_TORCH_DUMP=1 in the environment prints the generated source of forward on stderr at prepare (and, in mode
 * mobile, the optimized graph).
 *
 * Every C++ exception stops at this file's C entry points and becomes PAR_ERROR with its first line. It must not
 * write anywhere but the bound outputs, nor keep state between contexts other than libtorch's own globals (thread
 * count, quantized engine), which each context sets before it builds or runs anything.
 */
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/passes/xnnpack_rewrite.h>

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "torch_int.hpp"

#ifndef PAR_TORCH_VERSION
#define PAR_TORCH_VERSION "unknown"
#endif

namespace {

struct tctx {
    tsettings set;
};

struct tprep {
    torch::jit::Module module;
    std::unique_ptr<torch::jit::Method> forward;
    std::map<int32_t, par_requant> node_requant;
    const par_graph_desc *g = nullptr;
    const void *const *inputs = nullptr;
    void *const *outputs = nullptr;
    std::vector<std::vector<uint8_t>> shifted; /* qs8 inputs shifted to quint8, one buffer each */
};

/* aten.X, quantized.X and prim.X name operators directly in the generated source. */
struct resolver : torch::jit::Resolver {
    std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string &name, torch::jit::GraphFunction &m,
                                                           const torch::jit::SourceRange &loc) override
    {
        if (name == "aten" || name == "quantized" || name == "prim")
            return std::make_shared<torch::jit::BuiltinModule>(name);
        return torch::jit::nativeResolver()->resolveValue(name, m, loc);
    }
    c10::TypePtr resolveType(const std::string &name, const torch::jit::SourceRange &loc) override
    {
        return torch::jit::nativeResolver()->resolveType(name, loc);
    }
};

/* rq: the node's output quantization where PyTorch's kernel left another one (torch_emit_q.cpp). */
const char *RQ_SRC = R"(
def rq(self, y: Tensor, s: float, z: int) -> Tensor:
    if y.q_scale() == s and y.q_zero_point() == z:
        return y
    return aten.quantize_per_tensor(aten.dequantize(y), s, z, 13)
)";

/* The first line of an exception's message, without PyTorch's backtrace. */
par_status fail(par_msg *msg, const char *what, const std::exception &ex)
{
    const char *w = ex.what();
    if (auto *ce = dynamic_cast<const c10::Error *>(&ex)) w = ce->what_without_backtrace();
    std::string s = w;
    for (char &c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    size_t k;
    while ((k = s.find("  ")) != std::string::npos) s.erase(k, 1);
    if (s.size() > 400) s.resize(400);
    return par_msgf(msg, PAR_ERROR, "%s: %s", what, s.c_str());
}

/* libtorch's globals, set only when they differ (set_num_threads recreates PyTorch's pthreadpool, the pool XNNPACK
 * and QNNPACK run on). */
void apply(const tsettings &s)
{
    if (at::get_num_threads() != s.threads) at::set_num_threads(s.threads);
    if (s.mode == TM_QUANT && at::globalContext().qEngine() != s.qengine) at::globalContext().setQEngine(s.qengine);
}

const char *engine_name(at::QEngine q)
{
    return q == at::QEngine::QNNPACK  ? "qnnpack"
           : q == at::QEngine::ONEDNN ? "onednn"
           : q == at::QEngine::FBGEMM ? "fbgemm"
                                      : "none";
}

par_status t_init(void **ctx, par_msg *msg)
{
    try {
        *ctx = new tctx();
        return PAR_OK;
    } catch (const std::exception &ex) {
        return fail(msg, "init", ex);
    }
}

void t_destroy(void *ctx)
{
    delete static_cast<tctx *>(ctx);
}

par_status t_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    tctx *c = static_cast<tctx *>(ctx);
    if (strcmp(key, "mode") == 0) {
        if (strcmp(value, "eager") == 0) c->set.mode = TM_EAGER;
        else if (strcmp(value, "mobile") == 0) c->set.mode = TM_MOBILE;
        else if (strcmp(value, "quantized") == 0) c->set.mode = TM_QUANT;
        else return par_msgf(msg, PAR_ERROR, "knob 'mode': value '%s' is not one of eager, mobile, quantized", value);
        return PAR_OK;
    }
    if (strcmp(key, "qengine") == 0) {
        at::QEngine q;
        if (strcmp(value, "qnnpack") == 0) q = at::QEngine::QNNPACK;
        else if (strcmp(value, "onednn") == 0) q = at::QEngine::ONEDNN;
        else if (strcmp(value, "fbgemm") == 0) q = at::QEngine::FBGEMM;
        else return par_msgf(msg, PAR_ERROR, "knob 'qengine': value '%s' is not one of qnnpack, onednn, fbgemm", value);
        bool have = false;
        for (auto e : at::globalContext().supportedQEngines()) have = have || e == q;
        if (!have)
            return par_msgf(msg, PAR_UNSUPPORTED, "knob 'qengine': this libtorch was built without %s", value);
        c->set.qengine = q;
        return PAR_OK;
    }
    if (strcmp(key, "requantize") == 0) {
        if (strcmp(value, "none") && strcmp(value, "float"))
            return par_msgf(msg, PAR_ERROR, "knob 'requantize': value '%s' is not one of none, float", value);
        c->set.rq_float = value[0] == 'f';
        return PAR_OK;
    }
    if (strcmp(key, "threads") == 0) return par_knob_threads(value, &c->set.threads, msg);
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (torch knobs: mode=eager|mobile|quantized, "
                    "qengine=qnnpack|onednn, requantize=none|float, threads=N, lib=PATH)", key);
}

size_t t_describe(void *ctx, char *buf, size_t len)
{
    const tctx *c = static_cast<const tctx *>(ctx);
    int n = snprintf(buf, len, "mode=%s;qengine=%s;requantize=%s;threads=%d;torch=%s",
                     c->set.mode == TM_EAGER ? "eager" : c->set.mode == TM_MOBILE ? "mobile" : "quantized",
                     engine_name(c->set.qengine), c->set.rq_float ? "float" : "none", c->set.threads,
                     PAR_TORCH_VERSION);
    return n < 0 ? 0 : (size_t)n;
}

par_status t_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    tctx *c = static_cast<tctx *>(ctx);
    if (node < 0 || node >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "supports: node index %d out of range [0, %d)", node, g->n_nodes);
    try {
        temit e;
        e.g = g;
        e.set = c->set;
        e.dry = true;
        return par_t_lower(e, node, msg);
    } catch (const std::exception &ex) {
        return fail(msg, "supports", ex);
    }
}

par_status t_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    tctx *c = static_cast<tctx *>(ctx);
    *prepared = nullptr;
    try {
        apply(c->set);
        for (int32_t i = 0; i < g->n_inputs; i++) {
            par_dtype t = g->values[g->inputs[i]].dtype;
            if (t != PAR_DTYPE_F32 && t != PAR_DTYPE_I32 && t != PAR_DTYPE_BOOL && !par_t_is_q(t))
                return par_msgf(msg, PAR_UNSUPPORTED, "graph input %d ('%s'): %s", i, g->values[g->inputs[i]].name,
                                par_dtype_name(t));
        }
        temit e;
        e.g = g;
        e.set = c->set;
        e.dry = false;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            par_status st = par_t_lower(e, i, msg);
            if (st != PAR_OK) return st;
        }
        std::string src = "def forward(self";
        for (int32_t i = 0; i < g->n_inputs; i++) src += ", " + temit::out(g->inputs[i]);
        src += "):\n" + e.body + "    return (";
        for (int32_t i = 0; i < g->n_outputs; i++) src += e.v(g->outputs[i]) + ", ";
        src += ")\n";
        const char *dump = getenv("PARITY_TORCH_DUMP");
        if (dump && *dump && strcmp(dump, "0") != 0) fprintf(stderr, "%s", src.c_str());
        auto p = std::make_unique<tprep>();
        p->g = g;
        p->node_requant = e.node_requant;
        torch::jit::Module m("__torch__.parity.Graph");
        for (auto &a : e.attrs) {
            if (a.second.isTensor()) m.register_buffer(a.first, a.second.toTensor());
            else m.register_attribute(a.first, a.second.type(), a.second);
        }
        auto r = std::make_shared<resolver>();
        if (c->set.mode == TM_QUANT) m.define(RQ_SRC, r);
        m.define(src, r);
        m.eval();
        /* torch.jit.freeze's passes first (constants inlined, conv + batch_norm / add / mul folded into the
         * convolution: optimizeForMobile's own folding works on nn.Conv2d + nn.BatchNorm2d submodules only, which a
         * functional graph has none of), then optimizeForMobile */
        if (c->set.mode == TM_MOBILE) m = torch::jit::optimizeForMobile(torch::jit::freeze(m));
        if (dump && *dump && strcmp(dump, "0") != 0 && c->set.mode == TM_MOBILE)
            fprintf(stderr, "%s", m.get_method("forward").graph()->toString().c_str());
        p->module = m;
        p->forward = std::make_unique<torch::jit::Method>(p->module.get_method("forward"));
        p->shifted.resize(g->n_inputs);
        for (int32_t i = 0; i < g->n_inputs; i++)
            if (g->values[g->inputs[i]].dtype == PAR_DTYPE_QS8) p->shifted[i].resize(g->values[g->inputs[i]].numel);
        *prepared = p.release();
        return PAR_OK;
    } catch (const std::exception &ex) {
        return fail(msg, "prepare", ex);
    }
}

par_status t_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    tprep *p = static_cast<tprep *>(prepared);
    p->inputs = inputs;
    p->outputs = outputs;
    return PAR_OK;
}

at::Tensor input_tensor(tprep *p, int32_t i)
{
    const par_value *v = &p->g->values[p->g->inputs[i]];
    std::vector<int64_t> dims = par_t_dims(v);
    void *d = const_cast<void *>(p->inputs[i]);
    switch (v->dtype) {
    case PAR_DTYPE_F32: return at::from_blob(d, dims, at::kFloat);
    case PAR_DTYPE_BOOL: return at::from_blob(d, dims, at::kBool);
    case PAR_DTYPE_I32: return at::from_blob(d, dims, at::kInt).to(at::kLong);
    case PAR_DTYPE_QU8:
        return at::_make_per_tensor_quantized_tensor(at::from_blob(d, dims, at::kByte), v->scale, v->zero_point);
    case PAR_DTYPE_QS8: {
        uint8_t *s = p->shifted[i].data();
        const uint8_t *q = static_cast<const uint8_t *>(p->inputs[i]);
        for (int64_t k = 0; k < v->numel; k++) s[k] = q[k] ^ 0x80;
        return at::_make_per_tensor_quantized_tensor(at::from_blob(s, dims, at::kByte), v->scale, v->zero_point + 128);
    }
    default: throw std::runtime_error(std::string("graph input dtype ") + par_dtype_name(v->dtype));
    }
}

par_status store_output(tprep *p, int32_t i, const at::Tensor &t, par_msg *msg)
{
    const par_value *v = &p->g->values[p->g->outputs[i]];
    if (t.numel() != v->numel)
        return par_msgf(msg, PAR_ERROR, "run: output %d ('%s') has %lld elements, expected %lld", i, v->name,
                        (long long)t.numel(), (long long)v->numel);
    if (par_t_is_q(v->dtype)) {
        if (!t.is_quantized() || t.scalar_type() != at::kQUInt8)
            return par_msgf(msg, PAR_ERROR, "run: output %d ('%s') is %s, expected quint8", i, v->name,
                            c10::toString(t.scalar_type()));
        at::Tensor r = t.int_repr().contiguous();
        const uint8_t *s = r.data_ptr<uint8_t>();
        uint8_t *d = static_cast<uint8_t *>(p->outputs[i]), x = v->dtype == PAR_DTYPE_QS8 ? 0x80 : 0;
        for (int64_t k = 0; k < v->numel; k++) d[k] = s[k] ^ x;
        return PAR_OK;
    }
    if (v->dtype != PAR_DTYPE_F32 || t.scalar_type() != at::kFloat)
        return par_msgf(msg, PAR_ERROR, "run: output %d ('%s') is %s, expected %s", i, v->name,
                        c10::toString(t.scalar_type()), par_dtype_name(v->dtype));
    at::Tensor r = t.contiguous();
    memcpy(p->outputs[i], r.data_ptr<float>(), (size_t)v->numel * sizeof(float));
    return PAR_OK;
}

par_status t_run(void *ctx, void *prepared, par_msg *msg)
{
    tprep *p = static_cast<tprep *>(prepared);
    try {
        apply(static_cast<tctx *>(ctx)->set);
        c10::InferenceMode guard;
        std::vector<c10::IValue> args;
        for (int32_t i = 0; i < p->g->n_inputs; i++) args.emplace_back(input_tensor(p, i));
        c10::IValue r = (*p->forward)(std::move(args));
        auto tup = r.toTuple();
        if ((int32_t)tup->elements().size() != p->g->n_outputs)
            return par_msgf(msg, PAR_ERROR, "run: forward returned %zu outputs, expected %d", tup->elements().size(),
                            p->g->n_outputs);
        for (int32_t i = 0; i < p->g->n_outputs; i++) {
            par_status st = store_output(p, i, tup->elements()[i].toTensor(), msg);
            if (st != PAR_OK) return st;
        }
        return PAR_OK;
    } catch (const std::exception &ex) {
        return fail(msg, "run", ex);
    }
}

void t_release(void *ctx, void *prepared)
{
    try {
        delete static_cast<tprep *>(prepared);
    } catch (...) {
    }
}

par_requant t_requant(void *ctx)
{
    const tctx *c = static_cast<const tctx *>(ctx);
    return c->set.qengine == at::QEngine::QNNPACK ? PAR_REQUANT_PYTORCH_QNNP : PAR_REQUANT_FP32;
}

par_requant t_node_requant(void *ctx, void *prepared, int32_t node)
{
    const tprep *p = static_cast<const tprep *>(prepared);
    auto it = p->node_requant.find(node);
    return it != p->node_requant.end() ? it->second : t_requant(ctx);
}

void *t_get_proc(void *ctx, const char *name)
{
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)t_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)t_describe;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)(par_requant_fn)t_requant;
    if (strcmp(name, PAR_PROC_NODE_REQUANT) == 0) return (void *)(par_node_requant_fn)t_node_requant;
    return nullptr;
}

par_backend make_table()
{
    par_backend b{};
    b.api_version = PAR_BACKEND_API_VERSION;
    b.struct_size = sizeof(par_backend);
    b.name = "torch";
    b.description = "PyTorch's CPU path (libtorch): TorchScript eager, optimizeForMobile (XNNPACK), quantized ops";
    b.version = PAR_TORCH_VERSION;
    b.arith = PAR_ARITH_F32;
    b.init = t_init;
    b.destroy = t_destroy;
    b.supports = t_supports;
    b.prepare = t_prepare;
    b.bind = t_bind;
    b.run = t_run;
    b.release = t_release;
    b.get_proc = t_get_proc;
    return b;
}

const par_backend table = make_table();

} // namespace

extern "C" __attribute__((visibility("default"))) const par_backend *parity_torch_backend(void)
{
    return &table;
}
