/*
 * quantize.h - derive the quantized twin of a float case (docs/quantization.md, "Quantized twins of float cases"):
 * calibrate per-tensor activation scales and zero points from the reference's value ranges, quantize conv2d / linear
 * weights to qs8 (per tensor or per output channel) with i32 biases, fold inference batch_norm into the preceding
 * conv2d, and rewrite the graph as quantize -> quantized ops -> dequantize.
 */
#ifndef PAR_QUANTIZE_H
#define PAR_QUANTIZE_H

#include "core/case.h"

typedef struct par_quant_opts {
    par_dtype act;    /* activations: PAR_DTYPE_QU8, PAR_DTYPE_QS8, or PAR_DTYPE_QS16 (16a8w: only conv2d and linear on
                       * integers, every other op float between a dequantize and a quantize) */
    int per_channel;  /* qs8 weights with one scale per output channel */
    int seeded;       /* weights: 1 seeded qs8 generators (a statistical twin: per-channel scales from the float
                       * weights' spread, integers drawn from a normal of std 127/4, the file stays small); 0 the float
                       * weights quantized, written inline; -1 automatic: seeded when the weights come from generators
                       * and hold more than 2^20 elements in all */
    const char *id;   /* the new case's ID; NULL: "<id>_<act>" ("<id>_dynamic") */
    int dynamic;      /* 1: every linear with constant f32 weights becomes linear_dynamic (qs8 weights, f32 bias),
                       * everything else stays float (torch.ao.quantization.quantize_dynamic); act is ignored */
    int int4_block;   /* qs16 only: every linear with constant f32 weights and K divisible by the block becomes
                       * linear_16a4w (16a4w: int4 weights with integer block multipliers and per-channel scales,
                       * Qualcomm's LPBQ) with blocks of int4_block inputs, or one block of K with per_channel;
                       * 0: qs8 weights (16a8w). Its weights are always written inline. */
    int w4_unsigned;  /* int4 only: the nibbles as u4 with zero point 8 (code = w + 8, XNNPACK's qc4w); 0 s4 */
    int w4_hi_first;  /* int4 only: weight 2j in bits 4-7 of byte j (nibbles = hi); 0 low nibble first */
    int w4_bf16;      /* int4 only: the channel scales rounded to bfloat16 (half to even) before the multipliers and
                       * the nibbles are computed from them (scales = bf16) */
} par_quant_opts;

/* The quantized twin of src, or NULL with msg set (no float graph, a reference failure, ...). Ops without a quantized
 * form stay float between a dequantize and a quantize. */
par_case *par_case_quantize(const par_case *src, const par_quant_opts *o, par_msg *msg);

#endif
