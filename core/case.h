/*
 * case.h - a case: a graph, how its inputs and constants are made (seeded generators, inline data, or a binary
 * sidecar file), and options. Cases come from JSON files (docs/case-format.md), from sweep specs (cases/sweep.h)
 * and from the fuzzer; all three build them through this API.
 *
 * Loading never crashes on malformed input: every error names the file, the JSON path of the bad field and the
 * reason, e.g. "cases/x.json: $.graph.nodes[2].attrs.stride: expected a list of 2 integers, got a string".
 */
#ifndef PAR_CASE_H
#define PAR_CASE_H

#include "graph.h"

#define PAR_CASE_SCHEMA "parity.case"
#define PAR_CASE_VERSION 1

typedef enum par_dist {
    PAR_DIST_UNIFORM = 1, /* real: uniform in [a, b); integer dtypes: uniform integer q in [a, b] (clamped to type) */
    PAR_DIST_NORMAL = 2,  /* mean a, standard deviation b (Irwin-Hall approximation, bounded to +-6 sigma) */
    PAR_DIST_CONST = 3,   /* every element a */
    PAR_DIST_EDGE = 4,    /* edge values: +-0, +-1, ties x.5, tiny, values near +-b; see docs/case-format.md */
    PAR_DIST_HAZARD = 5,  /* a hazard (par_hazard, the generator's `hazard`): values that break careless kernels and
                           * careless error analysis; see docs/case-format.md */
} par_dist;

/* The hazard generators (PAR_DIST_HAZARD). Unless a line says otherwise, a and b give the range [a, b) of the
 * ordinary elements mixed with the hazardous ones. JSON names in parentheses. */
typedef enum par_hazard {
    PAR_HAZARD_NAN_INF = 1,    /* ("nan_inf") ordinary values with some NaN, +Inf and -Inf */
    PAR_HAZARD_HUGE = 2,       /* ("huge") magnitudes far outside [-88, 88] (exp overflows in f32), both signs */
    PAR_HAZARD_SUBNORMAL = 3,  /* ("subnormal") f32 subnormals of both signs mixed with ordinary values */
    PAR_HAZARD_SIGNED_ZERO = 4,/* ("signed_zero") +0 and -0 mixed with ordinary values */
    PAR_HAZARD_TIES = 5,       /* ("ties") exact rounding ties of a quantization step: (k + 1/2) a for integers k in
                                * [-b, b); integer dtypes: ordinary uniform integers */
    PAR_HAZARD_SATURATION = 6, /* ("saturation") real dtypes: values at and beyond +-b, the range the next quantize
                                * saturates at; integer dtypes: the dtype's extremes and their neighbours */
    PAR_HAZARD_CANCEL = 7,     /* ("cancel") large values of both signs whose sums cancel, mixed with small ones */
    PAR_HAZARD_NEAR_OVERFLOW = 8, /* ("near_overflow") magnitudes within a factor 16 of the largest finite f32 */
    PAR_HAZARD_ALL_EQUAL = 9,  /* ("all_equal") every element the same value, drawn from [a, b) */
    PAR_HAZARD_COUNT
} par_hazard;

/* The JSON name of a hazard ("nan_inf"), NULL when out of range; and back (0 when unknown). */
const char *par_hazard_name(par_hazard h);
par_hazard par_hazard_find(const char *name);

typedef struct par_gen {
    par_dist dist;
    double a, b;
    int fan_in;     /* scale a and b by 1/sqrt(fan_in), fan_in = prod(dims[1:]) for rank >= 2, else dims[0] */
    uint64_t seed;  /* 0: derived from the case seed and the tensor's name (par_hash_str) */
    par_hazard hazard; /* PAR_DIST_HAZARD only: which hazard */
} par_gen;

/* Fill n elements of dtype dt at out. The seed must be resolved (non-zero) by the caller. */
void par_gen_fill(const par_gen *g, par_dtype dt, int32_t rank, const int64_t *dims, void *out);
/* Check a generator's parameters against a dtype (finite, ordered, within the dtype's range); PAR_ERROR with the
 * reason in msg. The builders call it; par_gen_fill assumes it passed. */
par_status par_gen_check(const par_gen *g, par_dtype dt, par_msg *msg);

/* The most elements of one input or constant, and of all of a case file's inputs and constants together: 2^28, or
 * 2^20 in fuzzing builds (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) so that memory limits are not all a fuzzer finds. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define PAR_CASE_MAX_ELEMS (INT64_C(1) << 20)
#else
#define PAR_CASE_MAX_ELEMS (INT64_C(1) << 28)
#endif

typedef enum par_src_kind { PAR_SRC_GEN = 1, PAR_SRC_INLINE = 2, PAR_SRC_FILE = 3 } par_src_kind;

/* Where an input's or a constant's data comes from (kept for show and export). */
typedef struct par_tensor_src {
    int32_t value;        /* value index in the graph */
    par_src_kind kind;
    par_gen gen;          /* PAR_SRC_GEN, seed resolved */
    void *data;           /* PAR_SRC_INLINE inputs: the data (constants' data lives in the graph) */
    char *file;           /* PAR_SRC_FILE: path as written in the case file */
    int64_t offset;       /* PAR_SRC_FILE: byte offset */
} par_tensor_src;

typedef struct par_case {
    char *id;             /* stable ID: a sweep's parameters and seed, or the file's "id" */
    char *origin;         /* file path, or "suite:quick" etc. */
    char *description;    /* may be NULL */
    uint64_t seed;        /* the case seed (from the ID's "#seed=N", the file, or --seed) */
    par_graph *graph;
    int32_t n_srcs;
    par_tensor_src *srcs; /* one per graph input and per constant */
    /* The outputs the case's source gives for its inputs (an ONNX node test's output_K.pb), one per graph output in
     * its dtype (malloc'ed), or NULL: judged by the oracle as a backend's outputs would be (the `expected`
     * backend). Not written to case files. */
    void **expected;
    /* options (0 = the runner's default) */
    int32_t repeat;
    double timeout_s;
    /* sticky builder error: after the first failing builder call the others do nothing */
    par_status status;
    par_msg err;
} par_case;

/* Create an empty case (graph named after the ID). */
par_case *par_case_create(const char *id, uint64_t seed);
void par_case_destroy(par_case *c); /* NULL is a no-op */

/* Builders with a sticky error (check c->status once at the end). Each returns the value index, or -1. */
int32_t par_case_input(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims, par_gen gen);
int32_t par_case_input_data(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data);
int32_t par_case_const(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims, par_gen gen);
int32_t par_case_const_data(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data);
void par_case_quant(par_case *c, int32_t value, float scale, int32_t zero_point);
/* A single-output node; returns its output value index. out may be NULL (default name and dtype). */
int32_t par_case_node(par_case *c, const char *op, int32_t n_inputs, const int32_t *inputs, int32_t n_attrs,
                      const par_attr *attrs, const par_out_spec *out);
void par_case_output(par_case *c, int32_t value);
/* Finalize the graph; returns c->status. */
par_status par_case_finish(par_case *c);

/* Load a case file / parse JSON text (origin names the text in messages). NULL with msg set on any error. */
par_case *par_case_load(const char *path, par_msg *msg);
par_case *par_case_parse(const char *text, size_t len, const char *origin, par_msg *msg);

/* Materialize the inputs: bufs[i] (malloc'ed, caller frees each and the array) for graph input i. */
par_status par_case_make_inputs(const par_case *c, void ***bufs, par_msg *msg);
void par_case_free_inputs(const par_case *c, void **bufs);

/* The seed of a generated tensor named `name` in a case of seed case_seed (never 0): tensors of one case draw
 * independent streams, and the writer records it beside the generator. */
uint64_t par_case_derive_seed(const char *name, uint64_t case_seed);

/* Serialize to JSON text (malloc'ed). inline_data: write every input's and constant's data inline (export). */
char *par_case_to_json(const par_case *c, int inline_data);

/* Write the case to path (atomically) with the data of every inline tensor of at least min_elems elements in a
 * binary sidecar beside it (<base>.bin, each tensor 64-byte aligned; docs/case-format.md "Sidecar files"), so large
 * weights stay binary; those tensors' sources become file sources. */
par_status par_case_save(par_case *c, const char *path, int64_t min_elems, par_msg *msg);

#endif
