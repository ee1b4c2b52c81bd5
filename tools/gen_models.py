#!/usr/bin/env python3
"""gen_models.py - writes the model cases of cases/models/ (parity case format, docs/case-format.md).

Each model is a whole network graph whose weights are seeded generators (no downloads): convolution and linear
weights normal with fan_in scaling (He: std sqrt(2) / sqrt(fan_in) before a ReLU-like activation, 1 / sqrt(fan_in)
otherwise), batch_norm parameters in the ranges of trained networks. The architectures follow torchvision
(mobilenet_v2, mobilenet_v3_small, DeepLabV3's head on a dilated MobileNetV2), timm / TensorFlow (efficientnet_lite0)
and torch.nn.TransformerEncoderLayer (transformer_encoder, and its quantize_dynamic form transformer_encoder_dynq)
layer by layer, batch_norm nodes included (not folded into the convolutions); tools/gen_models_seq.py adds a
Llama-style decoder (llama_decoder_prefill, llama_decoder_decode, and their 8da4w twins *_8da4w) and a
Whisper-shaped speech encoder (speech_encoder). The qs8 twins of cases/models/
(*_quant.json, *_qs8.json) are not written here but by `parity quantize` (docs/quantization.md).

    python3 tools/gen_models.py                      # (re)writes cases/models/*.json
    python3 tools/gen_models.py --out DIR            # elsewhere
    python3 tools/gen_models.py --sidecar DIR mlp    # the constants' data in DIR/mlp.bin, referenced by
                                                     # DIR/mlp.json as {"data": {"file": "mlp.bin", "offset": N}}

The sidecar form is the template for plugging in real weights: replace the .bin (raw little-endian elements of each
constant's dtype, row-major, at the offsets the JSON gives) and keep the JSON.

Standard library only. The output is deterministic (sorted keys are not used: the order is the builder's).
"""

import argparse
import json
import math
import os
import random
import re
import struct
import sys

SQRT2 = math.sqrt(2.0)


class Model:
    """A case under construction: inputs, constants, nodes, outputs, with unique value names."""

    def __init__(self, case_id, description, seed):
        self.case = {
            "schema": "parity.case",
            "version": 1,
            "id": case_id,
            "description": description,
            "seed": seed,
            "inputs": [],
            "constants": [],
            "nodes": [],
            "outputs": [],
        }
        self.shapes = {}
        self.counts = {}

    def _name(self, base):
        k = self.counts.get(base, 0)
        self.counts[base] = k + 1
        return base if k == 0 else "%s_%d" % (base, k)

    def input(self, name, shape, low=-1.0, high=1.0, dtype="f32"):
        self.case["inputs"].append({"name": name, "dtype": dtype, "shape": list(shape),
                                    "init": {"dist": "uniform", "low": low, "high": high}})
        self.shapes[name] = list(shape)
        return name

    def const(self, name, shape, init=None, dtype="f32", data=None, quant=None):
        """A constant from a generator (init) or inline data (a flat list), with its quantization if any."""
        name = self._name(name)
        t = {"name": name, "dtype": dtype, "shape": list(shape)}
        if data is not None:
            t["data"] = list(data)
        else:
            t["init"] = init
        if quant is not None:
            t["quant"] = quant
        self.case["constants"].append(t)
        self.shapes[name] = list(shape)
        return name

    def node(self, op, inputs, shape, attrs=None, name=None):
        name = self._name(name or op)
        n = {"name": name, "op": op, "inputs": list(inputs)}
        if attrs:
            n["attrs"] = attrs
        n["outputs"] = [name]
        self.case["nodes"].append(n)
        self.shapes[name] = list(shape)
        return name

    def output(self, value):
        self.case["outputs"].append(value)

    # -- layers -------------------------------------------------------------------------------------------------
    def conv(self, x, out_c, k, stride=1, pad=None, groups=1, bias=False, dilation=1, gain=SQRT2, name="conv"):
        n, c, h, w = self.shapes[x]
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
        if pad is None:
            pad = [dh * (kh - 1) // 2, dw * (kw - 1) // 2, dh * (kh - 1) // 2, dw * (kw - 1) // 2]
        elif isinstance(pad, int):
            pad = [pad] * 4
        oh = (h + pad[0] + pad[2] - dh * (kh - 1) - 1) // sh + 1
        ow = (w + pad[1] + pad[3] - dw * (kw - 1) - 1) // sw + 1
        wname = self.const(name + "_w", [out_c, c // groups, kh, kw],
                           {"dist": "normal", "mean": 0, "std": gain, "fan_in": True})
        ins = [x, wname]
        if bias:
            ins.append(self.const(name + "_b", [out_c], {"dist": "uniform", "low": -0.1, "high": 0.1}))
        attrs = {"stride": [sh, sw], "padding": pad, "dilation": [dh, dw], "groups": groups}
        return self.node("conv2d", ins, [n, out_c, oh, ow], attrs, name)

    def conv_t(self, x, out_c, k, stride, pad, bias=True, gain=1.0, name="convt"):
        n, c, h, w = self.shapes[x]
        kh, kw = k
        sh, sw = stride
        oh = (h - 1) * sh - pad[0] - pad[2] + kh
        ow = (w - 1) * sw - pad[1] - pad[3] + kw
        # PyTorch layout [C_in, C_out, KH, KW]; fan_in over dims[1:] = C_out * KH * KW. Each output receives about
        # C_in * KH * KW / (sh * sw) terms, so the gain restores unit scale.
        g = gain * math.sqrt(out_c / (c / (sh * sw)))
        wname = self.const(name + "_w", [c, out_c, kh, kw], {"dist": "normal", "mean": 0, "std": g, "fan_in": True})
        ins = [x, wname]
        if bias:
            ins.append(self.const(name + "_b", [out_c], {"dist": "uniform", "low": -0.1, "high": 0.1}))
        attrs = {"stride": [sh, sw], "padding": pad}
        return self.node("conv_transpose2d", ins, [n, out_c, oh, ow], attrs, name)

    def bn(self, x, name="bn"):
        c = self.shapes[x][1]
        ps = [self.const(name + "_weight", [c], {"dist": "uniform", "low": 0.5, "high": 1.5}),
              self.const(name + "_bias", [c], {"dist": "uniform", "low": -0.1, "high": 0.1}),
              self.const(name + "_mean", [c], {"dist": "uniform", "low": -0.1, "high": 0.1}),
              self.const(name + "_var", [c], {"dist": "uniform", "low": 0.5, "high": 1.5})]
        return self.node("batch_norm", [x] + ps, self.shapes[x], {"eps": 1e-5}, name)

    def act(self, x, op, name=None):
        return self.node(op, [x], self.shapes[x], None, name or op)

    def linear(self, x, out_f, bias=True, gain=1.0, name="fc"):
        shape = self.shapes[x]
        k = shape[-1]
        wname = self.const(name + "_w", [out_f, k], {"dist": "normal", "mean": 0, "std": gain, "fan_in": True})
        ins = [x, wname]
        if bias:
            ins.append(self.const(name + "_b", [out_f], {"dist": "uniform", "low": -0.1, "high": 0.1}))
        return self.node("linear", ins, shape[:-1] + [out_f], None, name)

    def add(self, a, b, name="add"):
        return self.node("add", [a, b], self.shapes[a], None, name)

    def mul(self, a, b, name="mul"):
        return self.node("mul", [a, b], self.shapes[a], None, name)

    def gap(self, x, name="gap"):
        n, c = self.shapes[x][:2]
        return self.node("global_avg_pool2d", [x], [n, c, 1, 1], None, name)

    def flatten(self, x, name="flatten"):
        s = self.shapes[x]
        return self.node("flatten", [x], [s[0], int(math.prod(s[1:]))], {"start_dim": 1, "end_dim": -1}, name)

    def upsample(self, x, size, name="up"):
        n, c = self.shapes[x][:2]
        return self.node("upsample_bilinear2d", [x], [n, c] + list(size),
                         {"size": list(size), "align_corners": 0}, name)

    def concat(self, xs, name="cat"):
        s = list(self.shapes[xs[0]])
        s[1] = sum(self.shapes[x][1] for x in xs)
        return self.node("concat", xs, s, {"axis": 1}, name)


def conv_bn_act(m, x, out_c, k, stride=1, groups=1, act="relu6", dilation=1, name="c"):
    gain = SQRT2 if act in ("relu", "relu6", "hardswish") else 1.0
    y = m.conv(x, out_c, k, stride, groups=groups, dilation=dilation, gain=gain, name=name)
    y = m.bn(y, name=name + "_bn")
    return m.act(y, act, name=name + "_" + act) if act else y


# ---------------------------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------------------------
def mobilenet_v2_features(m, x, output_stride=32):
    """torchvision's MobileNetV2 features0 to features17 (the stem and the 17 inverted residual blocks, up to the
    320-channel output; not the 1x1 conv to 1280). With output_stride 16 or 8, the stages that would reduce the
    resolution further keep stride 1 and dilate their depthwise convolutions instead, from their first block on
    (the dilation doubling at each such stage), as torchvision's dilated MobileNetV3 backbones for segmentation."""
    x = conv_bn_act(m, x, 32, 3, 2, name="features0")
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1)]
    block = 1
    in_c = 32
    current_stride = 2
    dilation = 1
    for t, c, n, s in settings:
        if s > 1 and current_stride >= output_stride:
            dilation *= s
            s = 1
        current_stride *= s
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = in_c * t
            p = "features%d" % block
            y = x
            if t != 1:
                y = conv_bn_act(m, y, hidden, 1, name=p + "_expand")
            y = conv_bn_act(m, y, hidden, 3, stride, groups=hidden, dilation=dilation, name=p + "_dw")
            y = conv_bn_act(m, y, c, 1, act=None, name=p + "_project")
            if stride == 1 and in_c == c:
                y = m.add(x, y, name=p + "_add")
            x = y
            in_c = c
            block += 1
    return x


def mobilenet_v2():
    """torchvision.models.mobilenet_v2 (width 1.0), 224x224, batch 1, inference (dropout omitted)."""
    m = Model("mobilenet_v2", "MobileNetV2 (torchvision, width 1.0), 224x224x3, batch 1, seeded weights; batch_norm "
              "nodes as torchvision has them (not folded)", 2)
    x = m.input("image", [1, 3, 224, 224])
    x = mobilenet_v2_features(m, x)
    x = conv_bn_act(m, x, 1280, 1, name="features18")
    x = m.gap(x, name="avgpool")
    x = m.flatten(x)
    x = m.linear(x, 1000, name="classifier")
    m.output(x)
    return m


def make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def mobilenet_v3_small():
    """torchvision.models.mobilenet_v3_small, 224x224, batch 1, inference."""
    m = Model("mobilenet_v3_small", "MobileNetV3-Small (torchvision), 224x224x3, batch 1, seeded weights; hardswish, "
              "squeeze-excitation blocks (global_avg_pool2d -> conv1x1 -> relu -> conv1x1 -> hardsigmoid -> mul)", 3)
    x = m.input("image", [1, 3, 224, 224])
    x = conv_bn_act(m, x, 16, 3, 2, act="hardswish", name="features0")
    # input_c, kernel, expanded_c, out_c, use_se, activation, stride
    cfg = [(16, 3, 16, 16, True, "relu", 2), (16, 3, 72, 24, False, "relu", 2), (24, 3, 88, 24, False, "relu", 1),
           (24, 5, 96, 40, True, "hardswish", 2), (40, 5, 240, 40, True, "hardswish", 1),
           (40, 5, 240, 40, True, "hardswish", 1), (40, 5, 120, 48, True, "hardswish", 1),
           (48, 5, 144, 48, True, "hardswish", 1), (48, 5, 288, 96, True, "hardswish", 2),
           (96, 5, 576, 96, True, "hardswish", 1), (96, 5, 576, 96, True, "hardswish", 1)]
    for i, (cin, k, exp, cout, se, act, s) in enumerate(cfg):
        p = "features%d" % (i + 1)
        y = x
        if exp != cin:
            y = conv_bn_act(m, y, exp, 1, act=act, name=p + "_expand")
        y = conv_bn_act(m, y, exp, k, s, groups=exp, act=act, name=p + "_dw")
        if se:
            sq = make_divisible(exp // 4, 8)
            z = m.gap(y, name=p + "_se_pool")
            z = m.conv(z, sq, 1, bias=True, name=p + "_se_fc1")
            z = m.act(z, "relu", name=p + "_se_relu")
            z = m.conv(z, exp, 1, bias=True, gain=1.0, name=p + "_se_fc2")
            z = m.act(z, "hardsigmoid", name=p + "_se_hsig")
            y = m.mul(y, z, name=p + "_se_scale")
        y = conv_bn_act(m, y, cout, 1, act=None, name=p + "_project")
        if s == 1 and cin == cout:
            y = m.add(x, y, name=p + "_add")
        x = y
    x = conv_bn_act(m, x, 576, 1, act="hardswish", name="features12")
    x = m.gap(x, name="avgpool")
    x = m.flatten(x)
    x = m.linear(x, 1024, gain=SQRT2, name="classifier0")
    x = m.act(x, "hardswish", name="classifier1")
    x = m.linear(x, 1000, name="classifier3")
    m.output(x)
    return m


def mlp():
    m = Model("mlp", "MLP 784-512-256-10 with relu and log_softmax, batch 4", 4)
    x = m.input("x", [4, 784])
    x = m.act(m.linear(x, 512, gain=SQRT2, name="fc1"), "relu", name="relu1")
    x = m.act(m.linear(x, 256, gain=SQRT2, name="fc2"), "relu", name="relu2")
    x = m.linear(x, 10, name="fc3")
    x = m.node("log_softmax", [x], m.shapes[x], {"axis": -1}, "log_softmax")
    m.output(x)
    return m


def segmentation():
    """A background-segmentation encoder-decoder (U-Net style): strided conv encoder, bottleneck, decoder with
    bilinear upsampling and skip concatenations, a 1-channel sigmoid mask at the input resolution."""
    m = Model("segmentation", "encoder-decoder background segmentation, input [1,3,256,256], mask [1,1,256,256]: "
              "strided conv encoder, dilated bottleneck, upsample_bilinear2d (align_corners 0) decoder with skip "
              "concat, sigmoid", 5)
    x = m.input("image", [1, 3, 256, 256])
    e1 = conv_bn_act(m, x, 16, 3, 2, act="relu", name="enc1")     # 128
    e2 = conv_bn_act(m, e1, 32, 3, 2, act="relu", name="enc2")    # 64
    e3 = conv_bn_act(m, e2, 64, 3, 2, act="relu", name="enc3")    # 32
    b = conv_bn_act(m, e3, 96, 3, 2, act="relu", name="bottleneck1")  # 16
    b = m.act(m.bn(m.conv(b, 96, 3, dilation=2, name="bottleneck2"), name="bottleneck2_bn"), "relu",
              name="bottleneck2_relu")
    d = b
    for skip, c, nm in ((e3, 64, "dec3"), (e2, 32, "dec2"), (e1, 16, "dec1")):
        d = m.upsample(d, m.shapes[skip][2:], name=nm + "_up")
        d = m.concat([d, skip], name=nm + "_cat")
        d = conv_bn_act(m, d, c, 3, act="relu", name=nm)
    d = m.upsample(d, [256, 256], name="head_up")
    d = m.act(m.conv(d, 8, 3, bias=True, name="head1"), "relu", name="head1_relu")
    d = m.conv(d, 1, 1, bias=True, gain=1.0, name="head2")
    d = m.act(d, "sigmoid", name="mask")
    m.output(d)
    return m


def audio_denoiser():
    """A 1-D convolutional waveform denoiser (Demucs-like, without the LSTM): one second at 16 kHz as NCHW with
    H = 1, 1xk strided conv encoder, conv_transpose2d decoder with additive skips, tanh output."""
    m = Model("audio_denoiser", "1-D conv waveform denoiser, input [1,1,1,16000] (NCHW with H=1, 1xk kernels): "
              "strided conv encoder, conv_transpose2d decoder with additive skips, tanh", 6)
    x = m.input("wave", [1, 1, 1, 16000], -0.5, 0.5)
    skips = []
    y = x
    for i, c in enumerate((16, 32, 64)):
        y = m.conv(y, c, (1, 8), (1, 4), pad=[0, 2, 0, 2], bias=True, name="enc%d" % (i + 1))
        y = m.act(y, "relu", name="enc%d_relu" % (i + 1))
        skips.append(y)
    y = m.act(m.conv(y, 64, (1, 3), bias=True, name="bottleneck"), "relu", name="bottleneck_relu")
    y = m.add(y, skips[2], name="skip3")
    for i, c in enumerate((32, 16, 1)):
        y = m.conv_t(y, c, (1, 8), (1, 4), [0, 2, 0, 2], gain=SQRT2 if c > 1 else 1.0, name="dec%d" % (3 - i))
        if c > 1:
            y = m.act(y, "relu", name="dec%d_relu" % (3 - i))
            y = m.add(y, skips[1 - i], name="skip%d" % (2 - i))
    y = m.act(y, "tanh", name="denoised")
    m.output(y)
    return m


def deeplabv3_mobilenet_v2():
    """DeepLabV3 (torchvision's DeepLabHead and ASPP) on a MobileNetV2 backbone at output stride 16, 21 classes
    (Pascal VOC), bilinear upsampling of the logits to the input size."""
    m = Model("deeplabv3_mobilenet_v2", "DeepLabV3, MobileNetV2 backbone (features0-17, 320 channels) at output "
              "stride 16 (the 160 and 320 stages at stride 1 with dilation 2), ASPP (1x1, 3x3 with dilation 6, 12, "
              "18, image pooling), 3x3 head, 1x1 classifier to 21 classes, upsample_bilinear2d (align_corners 0) to "
              "the input size; 160x160x3, batch 1, seeded weights, batch_norm nodes not folded", 7)
    x = m.input("image", [1, 3, 160, 160])
    f = mobilenet_v2_features(m, x, output_stride=16)
    size = m.shapes[f][2:]
    branches = [conv_bn_act(m, f, 256, 1, act="relu", name="aspp0")]
    for i, rate in enumerate((6, 12, 18)):
        branches.append(conv_bn_act(m, f, 256, 3, act="relu", dilation=rate, name="aspp%d" % (i + 1)))
    z = m.gap(f, name="aspp4_pool")
    z = conv_bn_act(m, z, 256, 1, act="relu", name="aspp4")
    branches.append(m.upsample(z, size, name="aspp4_up"))
    y = m.concat(branches, name="aspp_cat")
    y = conv_bn_act(m, y, 256, 1, act="relu", name="aspp_project")
    y = conv_bn_act(m, y, 256, 3, act="relu", name="head")
    y = m.conv(y, 21, 1, bias=True, gain=1.0, name="classifier")
    y = m.upsample(y, m.shapes[x][2:], name="logits")
    m.output(y)
    return m


def efficientnet_lite0():
    """EfficientNet-Lite0 (TensorFlow's efficientnet_lite_builder; timm's efficientnet_lite0): EfficientNet-B0's
    block table without squeeze-excitation, relu6, stem (32) and head (1280) not scaled; PyTorch's symmetric
    padding (k // 2) as timm's port has it, not TensorFlow's 'same'."""
    m = Model("efficientnet_lite0", "EfficientNet-Lite0, 224x224x3, batch 1, seeded weights: MBConv blocks "
              "(1x1 expand, 3x3 or 5x5 depthwise, 1x1 project, residual add) without squeeze-excitation, relu6, "
              "stem 32, head 1x1 conv to 1280, global_avg_pool2d, linear 1000; batch_norm nodes not folded", 8)
    x = m.input("image", [1, 3, 224, 224])
    x = conv_bn_act(m, x, 32, 3, 2, name="stem")
    # expansion, kernel, stride, out_c, repeats (EfficientNet-B0, depth and width multipliers 1.0)
    table = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
             (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]
    in_c = 32
    for si, (e, k, s, c, r) in enumerate(table):
        for i in range(r):
            stride = s if i == 0 else 1
            p = "blocks%d_%d" % (si, i)
            y = x
            if e != 1:
                y = conv_bn_act(m, y, in_c * e, 1, name=p + "_expand")
            y = conv_bn_act(m, y, in_c * e, k, stride, groups=in_c * e, name=p + "_dw")
            y = conv_bn_act(m, y, c, 1, act=None, name=p + "_project")
            if stride == 1 and in_c == c:
                y = m.add(x, y, name=p + "_add")
            x = y
            in_c = c
    x = conv_bn_act(m, x, 1280, 1, name="head")
    x = m.gap(x, name="avgpool")
    x = m.flatten(x)
    x = m.linear(x, 1000, name="classifier")
    m.output(x)
    return m


def qs8_scales(rng, n, std):
    """Per-channel scales of seeded qs8 weights (q normal with std 127/4) whose real values have about the given
    std: std / (127/4) per channel, times U[0.8, 1.2) for the channel-to-channel spread of a trained layer; each
    rounded to f32 and written with the fewest digits that read back to it."""
    out = []
    for _ in range(n):
        v = struct.unpack("<f", struct.pack("<f", std / 31.75 * (0.8 + 0.4 * rng.random())))[0]
        for digits in range(6, 10):
            t = float("%.*g" % (digits, v))
            if struct.unpack("<f", struct.pack("<f", t))[0] == v:
                break
        out.append(t)
    return out


def transformer_encoder(dynamic_quant=False):
    """Token embedding + learned positional embedding, then two post-norm torch.nn.TransformerEncoderLayer
    (d_model 64, 4 heads, dim_feedforward 256, gelu, norm_first False, dropout omitted) with a causal attention mask.
    dynamic_quant: every linear as linear_dynamic with qs8 weights, per-channel scales on axis 0, f32 biases, as
    torch.ao.quantization.quantize_dynamic with a per-channel weight observer makes it (the weights are a seeded
    statistical twin, not the float model's numbers; everything else is the float model's, byte for byte)."""
    S, V, D, H, F = 16, 1000, 64, 4, 256
    dh = D // H
    if dynamic_quant:
        m = Model("transformer_encoder_dynq", "the transformer_encoder with every linear dynamically quantized "
                  "(linear_dynamic: f32 activations quantized per call, qs8 weights with per-channel scales on axis "
                  "0, f32 biases; reduce_range 0 as on mobile), as torch.ao.quantization.quantize_dynamic makes it; "
                  "seeded qs8 weights", 9)
    else:
        m = Model("transformer_encoder", "transformer encoder, 16 tokens (i32 ids in [0, 1000)), embedding 1000x64 "
                  "+ learned positional embedding, two post-norm torch.nn.TransformerEncoderLayer (d_model 64, "
                  "4 heads, dim_feedforward 256, gelu, norm_first False) with a causal mask (masked_fill -inf before "
                  "softmax); seeded weights", 9)
    rng = random.Random(9)

    def lin(x, out_f, gain=1.0, name="fc"):
        if not dynamic_quant:
            return m.linear(x, out_f, gain=gain, name=name)
        k = m.shapes[x][-1]
        w = m.const(name + "_w", [out_f, k], {"dist": "normal", "mean": 0, "std": 31.75}, dtype="qs8",
                    quant={"axis": 0, "scales": qs8_scales(rng, out_f, gain / math.sqrt(k))})
        b = m.const(name + "_b", [out_f], {"dist": "uniform", "low": -0.1, "high": 0.1})
        return m.node("linear_dynamic", [x, w, b], m.shapes[x][:-1] + [out_f], None, name)

    def layer_norm(x, name):
        c = m.shapes[x][-1]
        ps = [m.const(name + "_weight", [c], {"dist": "uniform", "low": 0.5, "high": 1.5}),
              m.const(name + "_bias", [c], {"dist": "uniform", "low": -0.1, "high": 0.1})]
        return m.node("layer_norm", [x] + ps, m.shapes[x], {"normalized_shape": [c]}, name)

    def reshape(x, shape, name):
        return m.node("reshape", [x], shape, {"shape": list(shape)}, name)

    def permute(x, perm, name):
        s = m.shapes[x]
        return m.node("permute", [x], [s[p] for p in perm], {"perm": list(perm)}, name)

    tokens = m.input("tokens", [1, S], 0, V - 1, dtype="i32")
    table = m.const("embedding_weight", [V, D], {"dist": "normal", "mean": 0, "std": 1})
    x = m.node("embedding", [tokens, table], [1, S, D], None, "embedding")
    pos = m.const("pos_embedding", [1, S, D], {"dist": "normal", "mean": 0, "std": 1})
    x = m.add(x, pos, name="pos_add")
    # the causal mask (True above the diagonal: key j > query i is masked); row i keeps keys 0..i, none is empty
    mask = m.const("causal_mask", [S, S], dtype="bool", data=[1 if j > i else 0 for i in range(S) for j in range(S)])
    scale = m.const("attn_scale", [1], data=[1.0 / math.sqrt(dh)])
    for li in range(2):
        p = "layer%d" % li
        q = lin(x, D, name=p + "_q")
        k = lin(x, D, name=p + "_k")
        v = lin(x, D, name=p + "_v")
        q = permute(reshape(q, [1, S, H, dh], p + "_q_heads"), [0, 2, 1, 3], p + "_q_t")       # [1,H,S,dh]
        k = permute(reshape(k, [1, S, H, dh], p + "_k_heads"), [0, 2, 3, 1], p + "_k_t")       # [1,H,dh,S]
        v = permute(reshape(v, [1, S, H, dh], p + "_v_heads"), [0, 2, 1, 3], p + "_v_t")       # [1,H,S,dh]
        a = m.node("matmul", [q, k], [1, H, S, S], None, p + "_scores")
        a = m.mul(a, scale, name=p + "_scaled")
        a = m.node("masked_fill", [a, mask], [1, H, S, S], {"value": "-inf"}, p + "_masked")
        a = m.node("softmax", [a], [1, H, S, S], {"axis": -1}, p + "_attn")
        o = m.node("matmul", [a, v], [1, H, S, dh], None, p + "_context")
        o = reshape(permute(o, [0, 2, 1, 3], p + "_context_t"), [1, S, D], p + "_context_merge")
        o = lin(o, D, name=p + "_out")
        x = layer_norm(m.add(x, o, name=p + "_res1"), p + "_norm1")
        if dynamic_quant and li == 0:
            # The first attention block's output is a graph output too: a budget that reaches a linear_dynamic
            # can flip whole quantization steps of its run-time quantization (docs/budgets/linear-dynamic.md), so
            # after the first feed-forward block the budgets are unbounded in the default mode, and this is the
            # deepest output the oracle can still judge.
            m.output(x)
        f = lin(x, F, gain=SQRT2, name=p + "_ff1")
        f = m.node("gelu", [f], m.shapes[f], None, p + "_gelu")
        f = lin(f, D, name=p + "_ff2")
        x = layer_norm(m.add(x, f, name=p + "_res2"), p + "_norm2")
    m.output(x)
    return m


def transformer_encoder_dynq():
    return transformer_encoder(dynamic_quant=True)


MODELS = {
    "mobilenet_v2": mobilenet_v2,
    "mobilenet_v3_small": mobilenet_v3_small,
    "mlp": mlp,
    "segmentation": segmentation,
    "audio_denoiser": audio_denoiser,
    "deeplabv3_mobilenet_v2": deeplabv3_mobilenet_v2,
    "efficientnet_lite0": efficientnet_lite0,
    "transformer_encoder": transformer_encoder,
    "transformer_encoder_dynq": transformer_encoder_dynq,
}


def stats(m):
    """(parameters, multiply-accumulates) of a model: the constants' elements (masks and scalars included) and the
    products of conv2d, conv_transpose2d, linear, linear_dynamic, linear_8da4w and matmul nodes."""
    shapes = m.shapes
    params = sum(int(math.prod(c["shape"])) for c in m.case["constants"])
    macs = 0
    for n in m.case["nodes"]:
        out = int(math.prod(shapes[n["outputs"][0]]))
        if n["op"] in ("conv2d",):
            macs += out * int(math.prod(shapes[n["inputs"][1]][1:]))
        elif n["op"] == "conv_transpose2d":
            w = shapes[n["inputs"][1]]
            macs += int(math.prod(shapes[n["inputs"][0]])) * int(math.prod(w[1:]))
        elif n["op"] in ("linear", "linear_dynamic", "linear_8da4w"):
            macs += out * shapes[n["inputs"][0]][-1]
        elif n["op"] == "matmul":
            macs += out * shapes[n["inputs"][0]][-1]
    return params, macs


# ---------------------------------------------------------------------------------------------------------------
# Sidecar: constants' data in a binary file
# ---------------------------------------------------------------------------------------------------------------
def sample(init, shape, rng):
    """Values for a generator spec (Python's own seeded generator: the same distribution as the harness's, not the
    same numbers)."""
    n = int(math.prod(shape))
    scale = 1.0
    if init.get("fan_in"):
        fan = int(math.prod(shape[1:])) if len(shape) >= 2 else shape[0]
        scale = 1.0 / math.sqrt(fan)
    if init["dist"] == "uniform":
        lo, hi = init["low"] * scale, init["high"] * scale
        return [lo + (hi - lo) * rng.random() for _ in range(n)]
    if init["dist"] == "normal":
        mu, sd = init["mean"] * scale, init["std"] * scale
        return [max(mu - 6 * sd, min(mu + 6 * sd, rng.gauss(mu, sd))) for _ in range(n)]
    raise ValueError("unsupported dist %s" % init["dist"])


def to_sidecar(m, out_dir, name):
    rng = random.Random(m.case["seed"])
    bin_name = name + ".bin"
    offset = 0
    with open(os.path.join(out_dir, bin_name), "wb") as f:
        for c in m.case["constants"]:
            if "init" not in c:
                continue  # inline data (masks, scalars) stays in the JSON
            vals = sample(c["init"], c["shape"], rng)
            if c["dtype"] == "qs8":
                vals = [max(-128, min(127, round(v))) for v in vals]
                f.write(struct.pack("<%db" % len(vals), *vals))
                size = 1
            else:
                f.write(struct.pack("<%df" % len(vals), *vals))
                size = 4
            del c["init"]
            c["data"] = {"file": bin_name, "offset": offset}
            offset += size * len(vals)
    m.case["description"] += "; constants from the sidecar " + bin_name


def dumps(case):
    """JSON with one line per tensor, node and attribute list: lists of numbers or strings are kept inline."""
    text = json.dumps(case, indent=1)
    flat = re.compile(r'\[\s*((?:[-+0-9.eE]+|"[^"\n]*")(?:,\s*(?:[-+0-9.eE]+|"[^"\n]*"))*)\s*\]')
    text = flat.sub(lambda mo: "[" + ", ".join(s.strip() for s in mo.group(1).split(",")) + "]", text)
    return text + "\n"


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_models_seq  # the sequence models, built with this file's Model (imported here: it imports this file)
    MODELS.update(gen_models_seq.MODELS)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", help="models to write (default: all): " + ", ".join(MODELS))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases",
                                                  "models"), help="output folder (default cases/models)")
    ap.add_argument("--sidecar", metavar="DIR", help="write the models to DIR with their constants in DIR/<model>.bin")
    args = ap.parse_args(argv)
    names = args.models or list(MODELS)
    for n in names:
        if n not in MODELS:
            ap.error("unknown model '%s' (known: %s)" % (n, ", ".join(MODELS)))
    out_dir = args.sidecar or args.out
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        m = MODELS[n]()
        if args.sidecar:
            to_sidecar(m, out_dir, n)
        path = os.path.join(out_dir, n + ".json")
        with open(path, "w") as f:
            f.write(dumps(m.case))
        params, macs = stats(m)
        print("%s: %d nodes, %d constants, %.3g M parameters, %.3g M multiply-accumulates, %d bytes"
              % (os.path.relpath(path), len(m.case["nodes"]), len(m.case["constants"]), params / 1e6, macs / 1e6,
                 os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
