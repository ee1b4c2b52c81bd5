/*
 * case_edit.h - a case rebuilt with edits, the one graph-editing primitive of the localizer and the reducer: keep a
 * subset of the nodes, let a node's consumers read another value instead of its output (a bypass), choose the graph
 * outputs, give an input or a constant new dimensions (generated data is generated again at the new shape, inline
 * data is sliced: the leading block of each dimension), or replace its data by a generator. The edited case is built
 * through the public case builder (core/case.h), so every edit is checked as a case file would be: an edit that
 * makes the graph invalid (a kept node reading a dropped one, a shape an op refuses) gives NULL with the reason.
 * A node's output can also become a graph input (the node cut off, what it computed replaced by generated data).
 */
#ifndef PAR_CASE_EDIT_H
#define PAR_CASE_EDIT_H

#include "core/case.h"

typedef struct par_case_edit {
    const uint8_t *keep;     /* per node: 1 kept, 0 dropped; NULL: every node kept */
    const int32_t *subst;    /* per value: the value read in its place (itself when not substituted); NULL: none */
    int32_t n_outputs;       /* the graph outputs (value indices, before substitution); 0: c's own outputs */
    const int32_t *outputs;
    const int64_t *dims;     /* per value, PAR_MAX_RANK entries: new dims of an input or constant (same rank);
                              * an entry whose first dim is 0 keeps its dims; NULL: no change */
    const par_gen *gen;      /* per value: the generator that replaces an input's or constant's data (dist 0: keep),
                              * or that fills a node value made an input (as_input) */
    const void *const *data; /* per value: inline data replacing an input's or constant's (at its dims in c, sliced
                              * when dims changes them); NULL entries keep */
    const uint8_t *as_input; /* per value: 1 turns a node's output into a graph input of its shape, dtype and
                              * quantization (the node is cut off: its consumers read the new input); NULL: none */
    const int32_t *drop_attr;/* {node, attribute index}: that attribute of that node left out, so the graph builder
                              * gives it its default; NULL: none */
    int prune;               /* 1: also drop the kept nodes whose outputs reach no graph output */
} par_case_edit;

/* The edited copy of c, named id (NULL: c's ID). Inputs and constants that no kept node reads and that are not
 * outputs are left out; names, attributes, quantization and options are kept. NULL with msg when the edit does not
 * give a valid case. */
par_case *par_case_edited(const par_case *c, const par_case_edit *e, const char *id, par_msg *msg);

/* The generator of a node value made an input: uniform in [-1, 1) for real dtypes, over the whole integer range
 * for qu8 and qs8, [-100, 100] for i32, {0, 1} for bool. */
par_gen par_case_edit_fresh_gen(const par_value *val);

/* A plain copy of c (same ID unless id is given). */
par_case *par_case_copy(const par_case *c, const char *id, par_msg *msg);

/* The source of value v in c (an input or a constant), NULL when none. */
const par_tensor_src *par_case_src_of(const par_case *c, int32_t v);

/* Elements of all inputs and constants of c. */
int64_t par_case_data_elems(const par_case *c);

#endif
