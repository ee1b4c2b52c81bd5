/*
 * act_table.h - the unary activations and math ops of the activation sweep, one row each (act_table.c): the sweep
 * of elementwise.c generates their cases from it, and hazard.c their hazard rows, so adding a unary op to the sweeps
 * is one row there. Private to cases/ops/.
 */
#ifndef PAR_ACT_TABLE_H
#define PAR_ACT_TABLE_H

/* What the sweep varies beyond the plain case (the defaults, one input): each op with attributes or a second input
 * has its kind; a plain unary op needs none. */
typedef enum act_kind { ACT_PLAIN = 0, ACT_HARDTANH, ACT_CLAMP, ACT_LEAKY, ACT_PRELU, ACT_ELU, ACT_GELU } act_kind;

typedef struct act_info {
    const char *name;
    double range;   /* inputs uniform in [-range, range): wide enough to cross every kink and saturation */
    double out_lo, out_hi; /* real output range for the quantized form (read for ops with one) */
    double wide;    /* > 0: a variant with inputs in [-wide, wide) ("x=wide"), deep in the saturated tails */
    int pos;        /* inputs in [0, range) and [0, wide) instead (log: its domain) */
    act_kind kind;
} act_info;

extern const act_info par_act_table[];
extern const int par_act_count;

#endif
