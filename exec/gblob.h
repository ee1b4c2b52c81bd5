/*
 * gblob.h - a graph view flattened into one position-independent block (exec/gblob.c), for a backend child forked
 * from a fork server. Private to exec/.
 */
#ifndef PAR_GBLOB_H
#define PAR_GBLOB_H

#include "core/parity_backend.h"

#define PAR_GBLOB_MAGIC 0x626c6f62706172ull /* "parblob" */

typedef struct par_gblob_hdr {
    uint64_t magic;
    size_t total;            /* bytes of the block */
    size_t desc;             /* offset of the par_graph_desc */
    size_t in_off, out_off;  /* offsets of the size_t arrays: input offsets in the input memfd, output offsets */
    int32_t n_in, n_out;
    int32_t n_taps;          /* par_exec_opts.n_taps: the last n_taps outputs are node values read as taps */
} par_gblob_hdr;

size_t par_gblob_size(const par_graph_desc *g, const size_t *in_off, const size_t *out_off);
void par_gblob_write(const par_graph_desc *g, const size_t *in_off, const size_t *out_off, uint8_t *dst);
/* Turn the offsets of a block (a private, writable copy) into pointers; NULL when the block is malformed. */
par_graph_desc *par_gblob_fix(uint8_t *base, size_t len);

#endif
