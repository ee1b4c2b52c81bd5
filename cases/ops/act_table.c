/*
 * act_table.c - the rows of the activation sweep (act_table.h): per op its input range, the real output range of its
 * quantized form, the wide variant through its saturated tails and whether its domain is the positive half-line.
 */
#include "act_table.h"

const act_info par_act_table[A_N] = {
    [A_RELU] = {"relu", 2.0, 0.0, 2.0},
    [A_RELU6] = {"relu6", 8.0, 0.0, 6.0},
    [A_HARDTANH] = {"hardtanh", 3.0, -1.0, 1.0},
    [A_CLAMP] = {"clamp", 2.0, -0.5, 1.0},
    [A_LEAKY] = {"leaky_relu", 2.0, -0.02, 2.0}, /* quantized: the default slope 0.01 */
    [A_PRELU] = {"prelu", 2.0, 0, 0},
    [A_SIGMOID] = {"sigmoid", 8.0, 0.0, 1.0},
    [A_TANH] = {"tanh", 4.0, -1.0, 1.0},
    [A_HSIG] = {"hardsigmoid", 4.0, 0.0, 1.0},
    [A_HSWISH] = {"hardswish", 4.0, -0.375, 4.0},
    [A_ELU] = {"elu", 4.0, 0, 0},
    [A_SILU] = {"silu", 8.0, 0, 0, 100.0},
    [A_GELU] = {"gelu", 6.0, 0, 0, 100.0},
    /* the unary math ops: the exact ones get the edge values (zeros, ties of round half to even at +-0.5, +-1.5,
     * +-2.5, subnormals); the others a wide variant through overflow (exp, reciprocal), underflow (exp), range
     * reduction (sin, cos) and saturation (softplus, softsign, erf) */
    [A_ABS] = {"abs", 2.0, 0, 0},
    [A_NEG] = {"neg", 2.0, 0, 0},
    [A_EXP] = {"exp", 10.0, 0, 0, 100.0},
    [A_LOG] = {"log", 8.0, 0, 0, 1e30, 1},
    [A_FLOOR] = {"floor", 4.0, 0, 0},
    [A_CEIL] = {"ceil", 4.0, 0, 0},
    [A_ROUND] = {"round", 4.0, 0, 0},
    [A_RECIPROCAL] = {"reciprocal", 2.0, 0, 0, 1e38},
    [A_SIGN] = {"sign", 2.0, 0, 0},
    [A_SOFTPLUS] = {"softplus", 10.0, 0, 0, 100.0},
    [A_SOFTSIGN] = {"softsign", 10.0, 0, 0, 1e6},
    [A_ERF] = {"erf", 4.0, 0, 0, 100.0},
    [A_SIN] = {"sin", 8.0, 0, 0, 1e4},
    [A_COS] = {"cos", 8.0, 0, 0, 1e4},
};
