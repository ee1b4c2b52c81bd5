/*
 * gen.h - the graph generator: from a seed, a random case whose graph is valid by construction. Ops are drawn from
 * the op table (core/ops.def) with per-op weights; shapes are solved from each op's constraints (one constraint
 * function per op family at most, fuzz/gen_*.c), element counts are bounded, attributes cover each op's schema;
 * graphs have branches, reuse earlier values, constants and broadcasting. A share of the graphs become quantized
 * (the quantized twin of the float graph, oracle/quantize.h, so scales and zero points are consistent), a share get
 * hazard inputs (core/case.h, par_hazard). The same seed and options give the same case on every machine: every
 * choice comes from the portable PRNG (core/prng.h) or, for the libFuzzer target, from the fuzzer's bytes.
 */
#ifndef PAR_FUZZ_GEN_H
#define PAR_FUZZ_GEN_H

#include "core/case.h"

typedef struct par_fuzz_opts {
    int32_t max_nodes;              /* most op nodes in a graph (1 .. 64; default 8) */
    int64_t max_elems;              /* most elements of any tensor (default 4096) */
    double weight[PAR_OP_COUNT];    /* relative weight of each op; 0: never drawn (defaults: 1, see gen.c) */
    double hazard_share;            /* share of the graphs whose inputs use hazard generators (default 0.25): a hazard
                                     * kind the case model refuses (par_gen_check) is left out, and NaN / Inf /
                                     * overflow hazards go only to graphs of PAR_OPF_NONFINITE ops */
    double quant_share;             /* share of the graphs made quantized (default 0.2) */
} par_fuzz_opts;

void par_fuzz_opts_default(par_fuzz_opts *o);

/* Apply a weight list "*=1,conv2d=4,softmax|relu=0" ("*" sets every op, '|' joins names; later entries win) to o. PAR_ERROR with msg
 * naming the entry (unknown op, bad number) and o unchanged. */
par_status par_fuzz_weights_parse(par_fuzz_opts *o, const char *spec, par_msg *msg);

/* The case of graph seed `seed`. Its ID names the options that differ from the defaults and the seed, e.g.
 * "fuzz(max_nodes=4)#seed=17", so that par_fuzz_case_by_id rebuilds it. Options in this order: max_nodes,
 * max_elems, hazard_share, quant_share (shortest decimal that reads back), then weights: "w[*]=x" when more than half
 * of the ops share a weight x other than 1, and "w[op]=y" for each op whose weight differs, in table order. A
 * quantized case (the quantized twin of the float graph, oracle/quantize.h) keeps the same ID; a graph the quantizer
 * refuses stays float. NULL with msg when every weight is 0, when the options are out of range or do not fit an ID,
 * or on an internal error (a generator bug): the generator never produces an invalid graph. */
par_case *par_fuzz_case(uint64_t seed, const par_fuzz_opts *o, par_msg *msg);

/* Rebuild a case from an ID par_fuzz_case gave. Returns NULL with msg when id is not a fuzz ID or is malformed. */
par_case *par_fuzz_case_by_id(const char *id, par_msg *msg);
/* 1 when id starts like a fuzz ID ("fuzz(" or "fuzz#"). */
int par_fuzz_is_id(const char *id);

/* The case decoded from arbitrary bytes (the structured libFuzzer target): the first 8 bytes are the case seed (the
 * input generators'), every later choice reads the next bytes, and running out of bytes reads zeros (the simplest
 * option of every choice), so any input decodes to a valid graph. Its ID, "fuzz-bytes#seed=N", is not a fuzz ID:
 * the bytes, not the ID, reproduce it. NULL only on an internal error. */
par_case *par_fuzz_case_from_bytes(const uint8_t *data, size_t n, const par_fuzz_opts *o, par_msg *msg);

#endif
