/*
 * torch_emit_util.cpp - what the float lowerings (torch_emit.cpp) and the quantized ones (torch_emit_q.cpp) both write:
 * TorchScript literals, a value's name (a constant becomes a module attribute), the arguments of a resize.
 * It names no lowering, so both lowering files call down into it and never into each other's helpers.
 */
#include <cmath>
#include <cstdio>

#include "torch_int.hpp"

/* ---------------------------------------------------------------------------------------------------------------
 * Literals and values
 * ------------------------------------------------------------------------------------------------------------- */
std::string par_t_float(double f)
{
    if (std::isnan(f)) return "float(\"nan\")";
    if (std::isinf(f)) return f > 0 ? "float(\"inf\")" : "float(\"-inf\")";
    char b[48];
    snprintf(b, sizeof b, "%.17g", f);
    std::string s = b;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

std::string par_t_ints(const std::vector<int64_t> &v)
{
    std::string s = "[";
    for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

std::vector<int64_t> par_t_dims(const par_value *v)
{
    return std::vector<int64_t>(v->dims, v->dims + v->rank);
}

bool par_t_is_q(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

at::Tensor par_t_qconst(const par_value *v)
{
    at::Tensor raw = at::from_blob(const_cast<void *>(v->data), par_t_dims(v), at::kByte).clone();
    int32_t zp = v->zero_point;
    if (v->dtype == PAR_DTYPE_QS8) {
        raw = at::bitwise_xor(raw, 0x80);
        zp += 128;
    }
    return at::_make_per_tensor_quantized_tensor(raw, v->scale, zp);
}

std::string temit::add_attr(const std::string &stem, c10::IValue val)
{
    std::string name = stem + std::to_string(n_attr++);
    if (!dry) attrs.emplace_back(name, std::move(val));
    return "self." + name;
}

std::string temit::v(int32_t idx)
{
    const par_value *pv = &g->values[idx];
    if (pv->kind != PAR_VALUE_CONST) return out(idx);
    auto it = consts.find(idx);
    if (it != consts.end()) return it->second;
    at::Tensor t;
    if (!dry) {
        void *d = const_cast<void *>(pv->data);
        switch (pv->dtype) {
        case PAR_DTYPE_F32: t = at::from_blob(d, par_t_dims(pv), at::kFloat).clone(); break;
        case PAR_DTYPE_I32: t = at::from_blob(d, par_t_dims(pv), at::kInt).to(at::kLong); break;
        case PAR_DTYPE_BOOL: t = at::from_blob(d, par_t_dims(pv), at::kBool).clone(); break;
        default: t = par_t_qconst(pv); break;
        }
    }
    std::string name = add_attr("c", t);
    consts[idx] = name;
    return name;
}

/* The output size from the graph, and the scales when the op gives them (PyTorch's interpolate with
 * recompute_scale_factor unset passes both). */
std::string par_t_resize_args(const par_graph_desc *g, const par_node *n, bool align, bool has_align)
{
    const par_value *y = par_node_output(g, n, 0);
    std::string s = ", " + par_t_ints({y->dims[2], y->dims[3]});
    if (has_align) s += align ? ", True" : ", False";
    if (par_attr_count(n, "scale") == 2)
        s += ", " + par_t_float(par_attr_floats_at(n, "scale", 0, 1)) + ", " + par_t_float(par_attr_floats_at(n, "scale", 1, 1));
    else
        s += ", None, None";
    return s;
}

std::string par_t_prepad(temit &e, const par_node *n, const std::string &x, const std::vector<int64_t> &p,
                         const std::string &fill, std::vector<int64_t> &sym)
{
    if (p[0] == p[2] && p[1] == p[3]) {
        sym = {p[0], p[1]};
        return x;
    }
    sym = {0, 0};
    std::string t = "p" + std::to_string(n->outputs[0]);
    e.line(t + " = aten.constant_pad_nd(" + x + ", " + par_t_ints({p[1], p[3], p[0], p[2]}) + ", " + fill + ")");
    return t;
}
