/*
 * torch_int.hpp - shared declarations of libparity_torch.so's C++ files: the settings of a context, the emitter that
 * turns a parity graph into TorchScript source (torch_emit.cpp, torch_emit_q.cpp, torch_emit_util.cpp) and the
 * tensors a module holds as attributes (constants, prepacked quantized weights).
 *
 * It must not be included by C code (torch_lib.h is the C side's contract).
 */
#ifndef PAR_TORCH_INT_HPP
#define PAR_TORCH_INT_HPP

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "torch_lib.h"

enum tmode { TM_EAGER = 0, TM_MOBILE = 1, TM_QUANT = 2 };

struct tsettings {
    tmode mode = TM_EAGER;
    at::QEngine qengine = at::QEngine::QNNPACK;
    int threads = 1;
    bool rq_float = false; /* requantize=float: input-keeping quantized kernels requantized through float */
};

/* One graph being lowered. With dry set (supports), lowerings only check and say why not; without (prepare), they
 * append TorchScript lines to body and attributes to attrs. */
struct temit {
    const par_graph_desc *g = nullptr;
    tsettings set;
    bool dry = true;
    std::string body;                                  /* the lines of forward, indented */
    std::vector<std::pair<std::string, c10::IValue>> attrs; /* module attributes: name, value */
    std::map<int32_t, std::string> consts;             /* constant value index -> its attribute expression */
    std::map<int32_t, par_requant> node_requant;       /* the scheme each quantized node's PyTorch op uses */
    int n_attr = 0;

    /* The script expression of value idx (a constant becomes an attribute on first use). */
    std::string v(int32_t idx);
    /* The script name a node output is assigned to. */
    static std::string out(int32_t idx) { return "v" + std::to_string(idx); }
    std::string add_attr(const std::string &stem, c10::IValue val);
    void line(const std::string &s) { body += "    " + s + "\n"; }
};

/* Literals: a float as a script float (inf and nan spelled as float("...")), an int list. */
std::string par_t_float(double f);
std::string par_t_ints(const std::vector<int64_t> &v);
std::vector<int64_t> par_t_dims(const par_value *v);

bool par_t_is_q(par_dtype t);

/* Padding p = [top, left, bottom, right] of node n applied to x: symmetric padding is returned in sym (for the ATen
 * operator's own padding argument) and x unchanged; otherwise a constant_pad_nd line with fill, and sym = {0, 0}. */
std::string par_t_prepad(temit &e, const par_node *n, const std::string &x, const std::vector<int64_t> &p,
                         const std::string &fill, std::vector<int64_t> &sym);
/* The output size from the graph, and the scales when the op gives them (", [h, w], align, sh, sw"). */
std::string par_t_resize_args(const par_graph_desc *g, const par_node *n, bool align, bool has_align);

/* Lower node i (dry: check only). PAR_OK, or PAR_UNSUPPORTED with the reason naming node and mode. Float ops in
 * torch_emit.cpp, quantized ones in torch_emit_q.cpp. */
par_status par_t_lower(temit &e, int32_t i, par_msg *msg);
par_status par_t_lower_float(temit &e, int32_t i, par_msg *msg);
par_status par_t_lower_quant(temit &e, int32_t i, par_msg *msg);

/* A quantized constant as a quint8 tensor (qs8 shifted by 128, per tensor) for activations. */
at::Tensor par_t_qconst(const par_value *v);

#endif
