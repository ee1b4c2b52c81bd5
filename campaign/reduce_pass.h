/*
 * reduce_pass.h - the reducer's candidates (reduce_pass.c): each pass enumerates edits of the current case, one
 * candidate per index, most aggressive first; reduce.c runs them and keeps the first that shows the signature.
 */
#ifndef PAR_REDUCE_PASS_H
#define PAR_REDUCE_PASS_H

#include "core/case.h"

typedef enum par_rd_pass {
    PAR_RD_OUTPUTS = 0, /* drop graph outputs: keep one alone, or all but one */
    PAR_RD_NODES,       /* the prefix of the first divergent node; cut a node (its consumers read a new input of its
                         * shape); bypass a node (its consumers read its input of the same shape and dtype) */
    PAR_RD_ATTRS,       /* one attribute of one node back to its default (padding 0, stride 1, ...) */
    PAR_RD_DIMS_ALL,    /* one dimension value shrunk everywhere it appears in the inputs and constants */
    PAR_RD_DIMS_ONE,    /* one dimension of one input or constant shrunk */
    PAR_RD_DATA,        /* an input's or constant's data replaced by constant 0, constant 1, or integers in [-2, 2] */
    PAR_RD_PASS_COUNT
} par_rd_pass;

/* Candidate i of pass on cur (div_node: cur's first divergent node, -1 unknown). Returns the candidate case, with
 * what (a short description) filled; NULL with *end = 1 when the pass has fewer candidates, or NULL with *end = 0
 * when candidate i is not a valid case (skip it). The candidate keeps cur's ID. */
par_case *par_rd_candidate(const par_case *cur, par_rd_pass pass, int32_t div_node, int32_t i, char *what,
                           size_t what_len, int *end);

const char *par_rd_pass_name(par_rd_pass pass);

#endif
