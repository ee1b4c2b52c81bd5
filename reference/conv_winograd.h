/*
 * conv_winograd.h - the algorithms a backend may declare for a node (core/parity_backend.h, par_algo) as the
 * reference knows them: their names, which nodes can use them, and the error budget of a Winograd conv2d
 * (docs/budgets/winograd.md). conv.c calls the kernel for a node whose backend declared a Winograd algorithm; exec/
 * validates the declarations with par_algo_check; the reports name them with par_algo_name.
 *
 * It must not know about backends, processes or reports: the declarations arrive as one par_algo per node in
 * par_prec.algo.
 */
#ifndef PAR_REF_CONV_WINOGRAD_H
#define PAR_REF_CONV_WINOGRAD_H

#include "reference.h"
#include "core/shape.h"

/* "direct", "winograd_2x2_3x3", "winograd_4x4_3x3", "winograd_6x6_3x3"; NULL for a value outside par_algo. */
const char *par_algo_name(int32_t algo);

/* The algorithm the reference judges node `node` with: p->algo[node] when declared, else PAR_ALGO_DIRECT. */
static inline int32_t par_algo_of(const par_prec *p, const par_graph_desc *g, int32_t node)
{
    return (p->algo && node >= 0 && node < g->n_nodes) ? p->algo[node] : (int32_t)PAR_ALGO_DIRECT;
}

/* Can node `node` of g be computed with `algo`? PAR_OK, or PAR_ERROR naming the node and the value: a value outside
 * par_algo, or a Winograd value for a node other than a float conv2d with a 3x3 kernel, stride 1 and dilation 1. */
par_status par_algo_check(const par_graph_desc *g, int32_t node, int32_t algo, par_msg *msg);

/* The matrices of a Winograd algorithm in float64 (1/6 as the nearest double): B^T (t x t), G (t x 3), A^T (m x t),
 * row-major into bt[64], g[24], at[48]; returns m (0 for PAR_ALGO_DIRECT or a value outside par_algo). */
int32_t par_winograd_matrices(int32_t algo, double *bt, double *g, double *at);

/* The roundings of one output of a one-dimensional pass over row `row` of matrix 'A' (A^T), 'B' (B^T) or 'G'
 * (docs/budgets/winograd.md): (nonzero entries - 1) additions, + 1 for a multiplication unless every nonzero entry
 * is +-2^j, + 1 for a constant that binary floating point cannot hold. -1 for an unknown algorithm, matrix or row. */
int32_t par_winograd_roundings(int32_t algo, char matrix, int32_t row);

/* The stage bounds of one tile (exposed for its tests): the tile of outputs [th, th + m) x [tw, tw + m) of channel o
 * of batch n, whose input tile starts at (th - pt, tw - pl) (inputs outside the image read 0), t = m + 2, every
 * array t x t row-major over the transform positions (i, j):
 *   val  M = sum_c U_c V_c, U_c = G g_c G^T, V_c = B^T d_c B, of the reference values;
 *   m    |M| plus how far M may move when the operands are off by their budgets: a bound on |M| of the held operands;
 *   dm   the bound on the rounding error of the computed M~ (both transforms, the products, the channel sum);
 *   sm   its root-sum-square analogue (docs/oracle.md, rule 5). */
typedef struct par_wg_tile {
    int32_t t;
    double val[64], m[64], dm[64], sm[64];
} par_wg_tile;
void par_winograd_tile(int32_t algo, const par_conv_geom *q, const par_rt *x, const par_rt *w, double u, int64_t n,
                       int64_t o, int64_t th, int64_t tw, par_wg_tile *tile);

/* The bound on the op's own rounding of output (ra, rb) of a tile: the transform, product and channel-sum error dm
 * carried through the output transform, plus the output transform's own rounding (one more term, the bias of
 * magnitude bias_mag, when with_bias). *scale (may be NULL) receives the root-sum-square analogue. */
double par_winograd_own(int32_t algo, const par_wg_tile *tile, int32_t ra, int32_t rb, double bias_mag, int with_bias,
                        double u, double *scale);

/* The reference conv2d judged as the declared Winograd algorithm: the same value and propagated budget as the direct
 * kernel, the own-rounding term from the Winograd error bound. q is the node's resolved geometry. */
par_status par_ref_conv2d_winograd(const par_ref_ctx *c, int32_t algo, const par_conv_geom *q, const par_rt *x,
                                   const par_rt *w, const par_rt *b, par_rt *y, par_msg *msg);

#endif
