"""gen_models_seq.py - the sequence models of tools/gen_models.py (its Model builder, its seeded weight generators):
a small Llama-style decoder, as a prefill of 32 tokens and as one decode step with a KV cache (in f32, and with
every linear in ExecuTorch's 8da4w form), and a small speech encoder in the shape of Whisper's (a convolution front
end over log-mel frames, then pre-norm transformer blocks).

Both use the decoder-era ops of docs/ops.md (rms_norm, rope, sdpa, slice_scatter) where PyTorch's modules compute
them: the decoder as ExecuTorch's Llama export does (Meta's interleaved rope pairs, grouped-query heads, SwiGLU, no
biases, a static KV cache written at the step's position), the encoder as whisper.cpp and Whisper's PyTorch module
do (two convolutions with gelu, the second of stride 2, sinusoidal positions, attention without a mask).
Standard library only; gen_models.py writes the files.
"""

import math
import struct

import gen_models as g

# the decoder: vocabulary, width, blocks, query heads, key/value heads, head width, SwiGLU width (a multiple of the
# 8da4w form's block), prefill length, static cache length; the 8da4w form's block of inputs per weight scale
V, D, L, HQ, HKV, DH, F, S, CACHE = 256, 64, 2, 4, 2, 16, 192, 32, 48
BLOCK = 32


def f32(v):
    """v rounded to f32 and written with the fewest digits that read back to it."""
    r = struct.unpack("<f", struct.pack("<f", v))[0]
    for digits in range(6, 10):
        t = float("%.*g" % (digits, r))
        if struct.unpack("<f", struct.pack("<f", t))[0] == r:
            return t
    return r


def reshape(m, x, shape, name):
    return m.node("reshape", [x], shape, {"shape": list(shape)}, name)


def permute(m, x, perm, name):
    s = m.shapes[x]
    return m.node("permute", [x], [s[p] for p in perm], {"perm": list(perm)}, name)


def heads(m, x, h, name):
    """[1, T, h * DH] -> [1, h, T, DH]"""
    t = m.shapes[x][1]
    return permute(m, reshape(m, x, [1, t, h, DH], name + "_heads"), [0, 2, 1, 3], name + "_t")


def merge_heads(m, x, name):
    """[1, h, T, DH] -> [1, T, h * DH]"""
    _, h, t, _ = m.shapes[x]
    return reshape(m, permute(m, x, [0, 2, 1, 3], name + "_t"), [1, t, h * DH], name + "_merge")


def rope_tables(m, pos0, t):
    """Llama's cos and sin tables [t, DH / 2] for positions pos0 .. pos0 + t - 1, frequency base 10000."""
    half = DH // 2
    th = [(pos0 + s) * 10000.0 ** (-2.0 * i / DH) for s in range(t) for i in range(half)]
    return (m.const("rope_cos", [t, half], data=[f32(math.cos(a)) for a in th]),
            m.const("rope_sin", [t, half], data=[f32(math.sin(a)) for a in th]))


def rms_norm(m, x, name):
    w = m.const(name + "_weight", [D], {"dist": "uniform", "low": 0.5, "high": 1.5})
    return m.node("rms_norm", [x, w], m.shapes[x], {"normalized_shape": [D], "eps": 1e-5}, name)


def linear_8da4w(m, x, out_f, name):
    """A linear without bias as ExecuTorch's 8da4w quantizer makes it: x quantized per token at run time, signed
    int4 weights packed two per byte (low nibble first; seeded bytes, so every nibble of [-8, 7] is equally likely),
    one f32 scale per output channel and block of BLOCK inputs. The scales give the weights the float model's spread
    (std 1 / sqrt(K); the nibbles' std is sqrt(255 / 12) = 4.6) times U[0.8, 1.2) per block: a seeded statistical
    twin of the float model's weights, not their quantization."""
    k = m.shapes[x][-1]
    w = m.const(name + "_w", [out_f, k // 2], {"dist": "uniform", "low": 0, "high": 255}, dtype="qu8",
                quant={"scale": 1, "zero_point": 0})
    c = 1.0 / (math.sqrt(k) * math.sqrt(255.0 / 12.0))
    sc = m.const(name + "_s", [out_f, k // BLOCK], {"dist": "uniform", "low": f32(0.8 * c), "high": f32(1.2 * c)})
    return m.node("linear_8da4w", [x, w, sc], m.shapes[x][:-1] + [out_f], {"block": BLOCK}, name)


def llama_decoder(decode, q4=False):
    """Token embedding, L blocks (rms_norm, attention with rope on q and k and HKV key/value heads for HQ query
    heads, the output projection and the residual; rms_norm, SwiGLU MLP and the residual), the final rms_norm and
    the logits. Prefill: S tokens at positions 0..S-1, causal attention; the keys (after rope) and values of each
    block are outputs too, the cache a decode step reads. Decode: one token at position S; each block's key and value
    are written by slice_scatter into a static cache of CACHE rows (inputs: rows 0..S-1 stand for the past, rows past
    S are never read), the attention reads the whole cache through an additive mask that is -inf past S (masked_fill
    of a zero row by a bool constant, as ExecuTorch's Llama builds it); the updated caches are outputs. q4: every
    linear (the projections, the MLP and the logits) as linear_8da4w, everything else the float model's."""
    if q4:
        step = "decode" if decode else "prefill"
        m = g.Model("llama_decoder_%s_8da4w" % step, "the llama_decoder_%s with every linear as linear_8da4w "
                    "(ExecuTorch's 8da4w: int8 activations quantized per token at run time, signed int4 weights "
                    "packed two per byte, f32 scales per output channel and block of %d); seeded int4 weights"
                    % (step, BLOCK), 21)
    elif decode:
        m = g.Model("llama_decoder_decode", "Llama-style decoder, one decode step at position %d with a static KV "
                    "cache of %d rows per block (inputs; written by slice_scatter, read through a -inf mask past "
                    "the position): i32 token, embedding %dx%d, %d blocks of rms_norm, attention with interleaved "
                    "rope and %d query / %d key-value heads of %d, SwiGLU MLP of %d, final rms_norm, logits; no "
                    "biases; seeded weights" % (S, CACHE, V, D, L, HQ, HKV, DH, F), 21)
    else:
        m = g.Model("llama_decoder_prefill", "Llama-style decoder, prefill of %d tokens (causal): i32 tokens, "
                    "embedding %dx%d, %d blocks of rms_norm, attention with interleaved rope and %d query / %d "
                    "key-value heads of %d, SwiGLU MLP of %d, final rms_norm, logits; each block's keys and values "
                    "are outputs too; no biases; seeded weights" % (S, V, D, L, HQ, HKV, DH, F), 21)
    t = 1 if decode else S

    def lin(x, out_f, name):
        return linear_8da4w(m, x, out_f, name) if q4 else m.linear(x, out_f, bias=False, name=name)

    tokens = m.input("tokens", [1, t], 0, V - 1, dtype="i32")
    x = m.node("embedding", [tokens, m.const("embedding_weight", [V, D], {"dist": "normal", "mean": 0, "std": 1})],
               [1, t, D], None, "embedding")
    cos, sin = rope_tables(m, S if decode else 0, t)
    mask, caches, present = None, [], []
    if decode:
        zero = m.const("mask_zero", [1, 1, 1, CACHE], data=[0.0] * CACHE)
        past = m.const("mask_future", [1, 1, 1, CACHE], dtype="bool", data=[1 if j > S else 0 for j in range(CACHE)])
        mask = m.node("masked_fill", [zero, past], [1, 1, 1, CACHE], {"value": "-inf"}, "mask")
        for li in range(L):
            caches.append((m.input("cache_k%d" % li, [1, HKV, CACHE, DH], -1.7, 1.7),
                           m.input("cache_v%d" % li, [1, HKV, CACHE, DH], -1.7, 1.7)))
    for li in range(L):
        p = "layer%d" % li
        h = rms_norm(m, x, p + "_attn_norm")
        q = heads(m, lin(h, HQ * DH, p + "_wq"), HQ, p + "_q")
        k = heads(m, lin(h, HKV * DH, p + "_wk"), HKV, p + "_k")
        v = heads(m, lin(h, HKV * DH, p + "_wv"), HKV, p + "_v")
        q = m.node("rope", [q, cos, sin], m.shapes[q], {"interleaved": 1}, p + "_q_rope")
        k = m.node("rope", [k, cos, sin], m.shapes[k], {"interleaved": 1}, p + "_k_rope")
        if decode:
            at = {"dim": 2, "start": S}
            k = m.node("slice_scatter", [caches[li][0], k], [1, HKV, CACHE, DH], at, p + "_cache_k")
            v = m.node("slice_scatter", [caches[li][1], v], [1, HKV, CACHE, DH], at, p + "_cache_v")
            o = m.node("sdpa", [q, k, v, mask], [1, HQ, t, DH], None, p + "_attn")
        else:
            o = m.node("sdpa", [q, k, v], [1, HQ, t, DH], {"is_causal": 1}, p + "_attn")
        present += [k, v]
        o = lin(merge_heads(m, o, p + "_attn"), D, p + "_wo")
        x = m.add(x, o, name=p + "_res1")
        h = rms_norm(m, x, p + "_ffn_norm")
        gate = m.act(lin(h, F, p + "_w1"), "silu", name=p + "_silu")
        up = lin(h, F, p + "_w3")
        f = lin(m.mul(gate, up, name=p + "_swiglu"), D, p + "_w2")
        x = m.add(x, f, name=p + "_res2")
    x = rms_norm(m, x, "norm")
    m.output(lin(x, V, "logits"))
    for c in present:
        m.output(c)
    return m


def llama_decoder_prefill():
    return llama_decoder(False)


def llama_decoder_decode():
    return llama_decoder(True)


def llama_decoder_prefill_8da4w():
    return llama_decoder(False, q4=True)


def llama_decoder_decode_8da4w():
    return llama_decoder(True, q4=True)


def speech_encoder():
    """Whisper's encoder, small: log-mel frames [1, 80, 1, 64] (mel bins as channels, time along W), conv2d 1x3 80->64
    with gelu, conv2d 1x3 stride 2 64->64 with gelu (32 frames), to [1, 32, 64], sinusoidal positions added, two
    pre-norm blocks (layer_norm, attention of 4 heads of 16 through sdpa without a mask, q and v with biases and k
    without as Whisper has them, the output projection and the residual; layer_norm, linear 256, gelu, linear 64 and
    the residual), the final layer_norm; the first block's output is a second graph output."""
    T, M, E, H, FF = 64, 80, 64, 4, 256
    m = g.Model("speech_encoder", "speech encoder in the shape of Whisper's: log-mel-like frames [1,80,1,64], conv2d "
                "1x3 80->64 + gelu, conv2d 1x3 stride 2 + gelu, sinusoidal positions, 2 pre-norm transformer blocks "
                "(d_model 64, 4 heads through sdpa, MLP 256 gelu), final layer_norm; seeded weights", 23)
    x = m.input("mel", [1, M, 1, T], -0.8, 1.2)
    x = m.act(m.conv(x, E, (1, 3), 1, pad=[0, 1, 0, 1], bias=True, gain=g.SQRT2, name="conv1"), "gelu", "conv1_gelu")
    x = m.act(m.conv(x, E, (1, 3), (1, 2), pad=[0, 1, 0, 1], bias=True, gain=g.SQRT2, name="conv2"), "gelu",
              "conv2_gelu")
    t = m.shapes[x][3]
    x = permute(m, reshape(m, x, [1, E, t], "frames"), [0, 2, 1], "frames_t")
    half = E // 2
    inc = [math.exp(-math.log(10000.0) * i / (half - 1)) for i in range(half)]
    pos = [f32(math.sin(s * inc[i])) for s in range(t) for i in range(half)]
    pos = [[pos[s * half + i] for i in range(half)] + [f32(math.cos(s * inc[i])) for i in range(half)]
           for s in range(t)]
    x = m.add(x, m.const("positions", [1, t, E], data=[v for row in pos for v in row]), name="pos_add")

    def layer_norm(y, name):
        ps = [m.const(name + "_weight", [E], {"dist": "uniform", "low": 0.5, "high": 1.5}),
              m.const(name + "_bias", [E], {"dist": "uniform", "low": -0.1, "high": 0.1})]
        return m.node("layer_norm", [y] + ps, m.shapes[y], {"normalized_shape": [E]}, name)

    for li in range(2):
        p = "block%d" % li
        h = layer_norm(x, p + "_attn_ln")
        q = heads(m, m.linear(h, E, name=p + "_query"), H, p + "_q")
        k = heads(m, m.linear(h, E, bias=False, name=p + "_key"), H, p + "_k")
        v = heads(m, m.linear(h, E, name=p + "_value"), H, p + "_v")
        o = m.node("sdpa", [q, k, v], [1, H, t, DH], None, p + "_attn")
        x = m.add(x, m.linear(merge_heads(m, o, p + "_attn"), E, name=p + "_out"), name=p + "_res1")
        h = layer_norm(x, p + "_mlp_ln")
        f = m.act(m.linear(h, FF, gain=g.SQRT2, name=p + "_mlp1"), "gelu", p + "_gelu")
        x = m.add(x, m.linear(f, E, name=p + "_mlp2"), name=p + "_res2")
        if li == 0:
            first = x
    m.output(layer_norm(x, "ln_post"))
    # the first block's output is a graph output too: each block's attention and MLP multiply the budget's
    # worst-case sensitivity about 25 times, so the oracle judges the first block at a tighter budget
    m.output(first)
    return m


MODELS = {
    "llama_decoder_prefill": llama_decoder_prefill,
    "llama_decoder_decode": llama_decoder_decode,
    "llama_decoder_prefill_8da4w": llama_decoder_prefill_8da4w,
    "llama_decoder_decode_8da4w": llama_decoder_decode_8da4w,
    "speech_encoder": speech_encoder,
}
