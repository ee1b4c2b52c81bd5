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

/* The magnitude of the Winograd computation of one output element, before any rounding factor (exposed for its
 * tests): y[n, o, oh, ow] belongs to the tile of outputs [th*m, th*m + m) x [tw*m, tw*m + m), th = oh / m, whose
 * input tile starts at (th*m - pt, tw*m - pl); inputs outside the image read 0. mt (t x t, t = m + 2, row-major)
 * receives M = sum_c (|G| |g_c|~ |G^T|) (elementwise *) (|B^T| |d_c|~ |B|) over the channels of o's group, with
 * |v|~ = |v| + e(v); the return value is (|A^T| M |A|)[oh mod m, ow mod m], the sum of the absolute values of every
 * elementary product the algorithm adds up for that element. */
double par_winograd_mag(int32_t algo, const par_conv_geom *q, const par_rt *x, const par_rt *w, int64_t n, int64_t o,
                        int64_t oh, int64_t ow, double *mt);

/* The matrices of a Winograd algorithm in float64 (1/6 as the nearest double): B^T (t x t), G (t x 3), A^T (m x t),
 * row-major into bt[64], g[24], at[48]; returns m (0 for PAR_ALGO_DIRECT or a value outside par_algo). */
int32_t par_winograd_matrices(int32_t algo, double *bt, double *g, double *at);

/* The number of roundings on the path of an elementary product (docs/budgets/winograd.md): output position (a, b)
 * of the tile, transform position (i, j), cg channels summed; with_bias adds the bias's addition. 0 for positions
 * out of range. */
int32_t par_winograd_path_roundings(int32_t algo, int32_t a, int32_t b, int32_t i, int32_t j, int64_t cg,
                                    int with_bias);

/* The reference conv2d judged as the declared Winograd algorithm: the same value and propagated budget as the direct
 * kernel, the own-rounding term from the Winograd error bound. q is the node's resolved geometry. */
par_status par_ref_conv2d_winograd(const par_ref_ctx *c, int32_t algo, const par_conv_geom *q, const par_rt *x,
                                   const par_rt *w, const par_rt *b, par_rt *y, par_msg *msg);

#endif
