/*
 * ops.h - the op table (expanded from ops.def): op ids, arity, attribute schemas, and the hooks each op carries.
 * It does not know any op's semantics: shape inference lives in core/shape_<family>.c (core/shape.h), the kernels
 * in reference/ and the sweeps in cases/ops/.
 */
#ifndef PAR_OPS_H
#define PAR_OPS_H

#include "parity_backend.h"

#define PAR_OPF_EXACT 1u    /* data movement or selection: a correct backend is bit-exact */
#define PAR_OPF_QUANT_OK 2u /* has a quantized form in the reference: set from the qform column, never in ops.def */
#define PAR_OPF_OUT_01 4u   /* the output lies in [0, 1] whatever the input */
#define PAR_OPF_OUT_PM1 8u  /* the output lies in [-1, 1] whatever the input */
#define PAR_OPF_NONFINITE 16u /* the op's NaN and Inf rules are defined (docs/ops.md): hazard inputs with NaN, Inf and overflow are fair */

/* The integer form of a quantized op (the qform column of ops.def, where each family is described). */
typedef enum par_qform {
    PAR_QFORM_NONE,
    PAR_QFORM_ACC_AXIS1,
    PAR_QFORM_ACC_LAST,
    PAR_QFORM_ADD,
    PAR_QFORM_MUL,
    PAR_QFORM_MOVE,
    PAR_QFORM_SELECT,
    PAR_QFORM_CLAMP,
    PAR_QFORM_LUT,
    PAR_QFORM_AVG,
    PAR_QFORM_ROUND_INTERP,
    PAR_QFORM_ROUND_FREE,
    PAR_QFORM_CONVERT,
} par_qform;

typedef enum par_op_id {
#define PAR_OP(id, name, in_min, in_max, n_out, flags, qform, schema, infer, ref, sweep) PAR_OP_##id,
#include "ops.def"
#undef PAR_OP
    PAR_OP_COUNT
} par_op_id;

/* Shape inference: fill outs[i].rank and outs[i].dims (and dtype when it differs from the prefilled one, which is
 * the node's declared output dtype, or else input 0's). Errors name the attribute and the reason; the caller
 * prefixes the node's name and op. */
typedef par_status (*par_infer_fn)(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg);

/* Shape inference of every op: declared from the table. (The reference kernels and the sweep specs of the table's
 * last two columns are expanded by the layers that own them: reference/reference.h and cases/sweep.h.) */
#define PAR_OP(id, name, in_min, in_max, n_out, flags, qform, schema, infer, ref, sweep)                               \
    par_status infer(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg);
#include "ops.def"
#undef PAR_OP

#define PAR_MAX_ATTRS 12

typedef struct par_attr_spec {
    const char *name;
    par_attr_type type;
    int32_t fixed_count;        /* lists: exact element count, or 0 for any */
    int has_default;
    par_attr def;               /* the default (name set, lists point into def_ints / def_floats) */
    int64_t def_ints[8];
    double def_floats[8];
    char choices[96];           /* str: "a|b|c" or "" for any */
} par_attr_spec;

typedef struct par_op_info {
    par_op_id id;
    const char *name;
    int32_t in_min, in_max, n_out;
    unsigned flags;
    par_qform qform;
    const char *schema;         /* the schema text, as in ops.def */
    par_infer_fn infer;
    int32_t n_attrs;
    par_attr_spec attrs[PAR_MAX_ATTRS];
} par_op_info;

/* The table; parsed once, on first use (thread-safe to call after the first call returned). */
const par_op_info *par_op_get(par_op_id id);
/* Look an op up by name; NULL when unknown. */
const par_op_info *par_op_find(const char *name);
/* The op of a node (looked up by node->op, a handful of string compares); NULL for an unknown op, which a graph
 * built by core/graph.c never holds. */
const par_op_info *par_op_of(const par_node *n);
/* The edit distance (insertions, deletions, substitutions, a swap of two neighbours) between two short names; names
 * longer than 63 bytes count as far from everything. */
int par_name_distance(const char *a, const char *b);
/* For "did you mean": the one of names[0..n) nearest to name, when it is within a third of name's length (at
 * least 1, at most 3 edits); else NULL. */
const char *par_name_nearest(const char *name, const char *const *names, int32_t n);
/* The op whose name is nearest to name, as par_name_nearest; NULL when none is near. */
const char *par_op_nearest(const char *name);
/* Format one attribute value for messages and IDs ("[1,2]", "0.5", "same"). */
void par_attr_format(const par_attr *a, char *buf, size_t len);

#endif
