/*
 * act_table.c - the rows of the activation sweep (act_table.h): per op its input range, the real output range of its
 * quantized form, the wide variant through its saturated tails and whether its domain is the positive half-line.
 */
#include "act_table.h"

const act_info par_act_table[] = {
    {.name = "relu", .range = 2.0, .out_hi = 2.0},
    {.name = "relu6", .range = 8.0, .out_hi = 6.0},
    {.name = "hardtanh", .range = 3.0, .out_lo = -1.0, .out_hi = 1.0, .kind = ACT_HARDTANH},
    {.name = "clamp", .range = 2.0, .out_lo = -0.5, .out_hi = 1.0, .kind = ACT_CLAMP},
    /* quantized: the default slope 0.01 */
    {.name = "leaky_relu", .range = 2.0, .out_lo = -0.02, .out_hi = 2.0, .kind = ACT_LEAKY},
    {.name = "prelu", .range = 2.0, .kind = ACT_PRELU},
    {.name = "sigmoid", .range = 8.0, .out_hi = 1.0},
    {.name = "tanh", .range = 4.0, .out_lo = -1.0, .out_hi = 1.0},
    {.name = "hardsigmoid", .range = 4.0, .out_hi = 1.0},
    {.name = "hardswish", .range = 4.0, .out_lo = -0.375, .out_hi = 4.0},
    {.name = "elu", .range = 4.0, .kind = ACT_ELU},
    {.name = "silu", .range = 8.0, .wide = 100.0},
    {.name = "gelu", .range = 6.0, .wide = 100.0, .kind = ACT_GELU},
    {.name = "mish", .range = 8.0, .wide = 100.0},
    /* the unary math ops: the exact ones get the edge values (zeros, ties of round half to even at +-0.5, +-1.5,
     * +-2.5, subnormals); the others a wide variant through overflow (exp, reciprocal), underflow (exp), range
     * reduction (sin, cos) and saturation (softplus, softsign, erf) */
    {.name = "abs", .range = 2.0},
    {.name = "neg", .range = 2.0},
    {.name = "exp", .range = 10.0, .wide = 100.0},
    {.name = "log", .range = 8.0, .wide = 1e30, .pos = 1},
    {.name = "floor", .range = 4.0},
    {.name = "ceil", .range = 4.0},
    {.name = "round", .range = 4.0},
    {.name = "reciprocal", .range = 2.0, .wide = 1e38},
    {.name = "sign", .range = 2.0},
    {.name = "softplus", .range = 10.0, .wide = 100.0},
    {.name = "softsign", .range = 10.0, .wide = 1e6},
    {.name = "erf", .range = 4.0, .wide = 100.0},
    {.name = "sin", .range = 8.0, .wide = 1e4},
    {.name = "cos", .range = 8.0, .wide = 1e4},
};

const int par_act_count = (int)(sizeof par_act_table / sizeof par_act_table[0]);
