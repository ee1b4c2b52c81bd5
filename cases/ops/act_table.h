/*
 * act_table.h - the unary activations and math ops of the activation sweep, one row each (act_table.c): the sweep
 * of elementwise.c generates their cases from it, and hazard.c their hazard rows, so adding a unary op to the sweeps
 * is one row there. Private to cases/ops/.
 */
#ifndef PAR_ACT_TABLE_H
#define PAR_ACT_TABLE_H

enum {
    A_RELU, A_RELU6, A_HARDTANH, A_CLAMP, A_LEAKY, A_PRELU, A_SIGMOID, A_TANH, A_HSIG, A_HSWISH, A_ELU, A_SILU, A_GELU,
    A_ABS, A_NEG, A_EXP, A_LOG, A_FLOOR, A_CEIL, A_ROUND, A_RECIPROCAL, A_SIGN, A_SOFTPLUS, A_SOFTSIGN, A_ERF, A_SIN,
    A_COS, A_N
};

typedef struct act_info {
    const char *name;
    double range;   /* inputs uniform in [-range, range): wide enough to cross every kink and saturation */
    double out_lo, out_hi; /* real output range for the quantized form (read for ops with one) */
    double wide;    /* > 0: a variant with inputs in [-wide, wide) ("x=wide"), deep in the saturated tails */
    int pos;        /* inputs in [0, range) and [0, wide) instead (log: its domain) */
} act_info;

extern const act_info par_act_table[A_N];

#endif
