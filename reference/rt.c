/*
 * rt.c - the reference tensor (par_rt): allocation, release and strides, and the precision profile of a backend's
 * arithmetic (par_prec_for). Shared by the interpreter and the kernels; it must not know any op.
 */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

par_prec par_prec_for(par_arith a)
{
    par_prec p;
    memset(&p, 0, sizeof p); /* no per-node declarations (algo, requant_node): every field a caller does not set */
    /* fn_ulps = 8 u = 4 ULP: the accuracy asked of exp, log, tanh and sigmoid implementations (docs/oracle.md). */
    p.fn_ulps = 8.0;
    p.requant = PAR_REQUANT_FP32;
    p.requant_exact = 0;
    p.flush = 0; /* gradual underflow unless the backend declares PAR_ARITH_FLUSH_SUBNORMALS (par_prec_flush) */
    /* The unit roundoffs of each kind (core/parity_backend.h): of the arithmetic inside ops, of the storage between
     * ops (a par_fmt row: f32, f16 or bfloat16) and of the dot products' operands on entry (0: used as stored). */
    static const struct { double u, u_store, u_in; } kinds[PAR_ARITH_N_KINDS] = {
        [PAR_ARITH_F32] = {0x1p-24, 0x1p-24, 0},
        [PAR_ARITH_F16_STORAGE] = {0x1p-24, 0x1p-11, 0},
        [PAR_ARITH_F16] = {0x1p-11, 0x1p-11, 0},
        [PAR_ARITH_BF16] = {0x1p-24, 0x1p-24, 0x1p-8},
        [PAR_ARITH_BF16_STORAGE] = {0x1p-24, 0x1p-8, 0},
    };
    const int k = (int)a >= 0 && a < PAR_ARITH_N_KINDS ? (int)a : (int)PAR_ARITH_F32;
    p.u = kinds[k].u;
    p.u_store = kinds[k].u_store;
    p.u_in = kinds[k].u_in;
    return p;
}

par_prec par_prec_ideal(void)
{
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.u = p.u_store = p.fn_ulps = 0;
    return p;
}

void par_prec_set_flush(par_prec *p, int flush)
{
    /* The smallest normal number of the arithmetic inside ops: f32 operations (f16 storage included) flush below
     * 2^-126; the f16 storage's own 2^-14 applies where a tensor is read or written (interp.c, flush_tau). */
    p->flush = !flush ? 0.0 : par_fmt_of(p->u)->tiny;
}

par_status par_rt_alloc(par_rt *t, par_dtype dt, int32_t rank, const int64_t *dims, par_msg *msg)
{
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->rank = rank;
    t->numel = 1;
    for (int32_t i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        t->numel *= dims[i];
    }
    t->v = calloc((size_t)t->numel, sizeof *t->v);
    t->e = calloc((size_t)t->numel, sizeof *t->e);
    t->s = malloc((size_t)t->numel * sizeof *t->s);
    if (!t->v || !t->e || !t->s) {
        par_rt_free(t);
        return par_msgf(msg, PAR_ERROR, "reference: out of memory for %lld elements", (long long)t->numel);
    }
    for (int64_t i = 0; i < t->numel; i++) t->s[i] = NAN; /* "not computed": the interpreter fills it in */
    return PAR_OK;
}

void par_rt_free(par_rt *t)
{
    if (!t) return;
    free(t->v);
    free(t->e);
    free(t->s);
    free(t->ql);
    free(t->qh);
    free(t->tie);
    free(t->f);
    t->v = t->e = t->s = t->ql = t->qh = t->tie = t->f = NULL;
}

void par_rt_strides(const par_rt *t, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t i = t->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= t->dims[i];
    }
}
