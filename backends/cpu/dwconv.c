/*
 * dwconv.c - depthwise convolution (groups == in_c, out_c = in_c * multiplier), NHWC, through an indirection buffer
 * of kh*kw input-pixel pointers per output pixel (padding taps point at a zero row). Multiplier 1 runs the per-ISA
 * micro-kernels vectorized over channels (3x3 and 5x5 unrolled, any other size through the generic kernel);
 * multiplier > 1 runs a plain loop over (channel, multiplier). A 3x3, dilation 1, stride 1 convolution with
 * multiplier 1 runs the ISA's row kernel instead when it has one (AVX-512): no indirection buffer, each output row
 * from its three input rows, padding rows passed as NULL. Rows of output are split across the thread pool.
 * Each output is bias + sum over taps in row-major tap order (the SIMD kernels sum even and odd taps in two chains
 * and add them at the end): the error bound is gamma_taps * sum|w x|, as for any reordering of the sum.
 * Must not read input outside the bound tensor: every tap is bounds-checked when the indirection is built.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_ukernels.h"

struct cpu_dwconv {
    cpu_conv_params p;
    const cpu_ukernel_set *uk;
    cpu_dwconv_ukernel kernel; /* multiplier 1 */
    cpu_dwconv3x3_ukernel row_kernel; /* 3x3 row kernel, or NULL: the indirection path */
    const float *x;
    size_t taps, mult;
    cpu_minmax mm;
    float *packed; /* multiplier 1: cpu_pack_dw blocks; otherwise [out_c][1 + taps] */
    float *zero;
    const float **ind;
    float *y;
    size_t row_base; /* cpu_dwconv_run_rows: the first output row of the range being run */
};

cpu_dwconv *cpu_dwconv_create(const cpu_conv_params *p, const float *w, const float *bias, cpu_isa isa, char *err,
                              size_t err_len)
{
    if (p->groups != p->in_c || p->in_c < 1 || p->out_c % p->in_c != 0) {
        snprintf(err, err_len, "depthwise convolution: groups %lld must equal in_c %lld and divide out_c %lld",
                 (long long)p->groups, (long long)p->in_c, (long long)p->out_c);
        return NULL;
    }
    cpu_dwconv *d = calloc(1, sizeof *d);
    if (!d) goto oom;
    d->p = *p;
    d->uk = cpu_ukernels_for(isa);
    d->taps = (size_t)(p->kh * p->kw);
    d->mult = (size_t)(p->out_c / p->in_c);
    d->mm.min = p->out_min;
    d->mm.max = p->out_max;
    d->kernel = d->taps == 9 ? d->uk->dw9 : d->taps == 25 ? d->uk->dw25 : d->uk->dw_any;
    /* Stride 2 stays on the indirection kernels: the row kernel walked MobileNetV2's stride-2 layers 7% slower. */
    if (d->mult == 1 && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->sh == 1 && p->sw == 1)
        d->row_kernel = d->uk->dw3x3;
    const size_t c = (size_t)p->in_c;
    if (d->mult == 1) {
        d->packed = cpu_alloc_floats(cpu_pack_dw_size(c, d->taps, d->uk->dw_cb));
        if (!d->packed) goto oom;
        cpu_pack_dw(c, d->taps, d->uk->dw_cb, w, bias, d->packed);
    } else {
        const size_t oc = (size_t)p->out_c;
        d->packed = cpu_alloc_floats(oc * (d->taps + 1));
        if (!d->packed) goto oom;
        for (size_t o = 0; o < oc; o++) {
            d->packed[o * (d->taps + 1)] = bias ? bias[o] : 0.0f;
            memcpy(d->packed + o * (d->taps + 1) + 1, w + o * d->taps, d->taps * sizeof(float));
        }
    }
    if (d->row_kernel) return d;
    d->zero = cpu_alloc_floats(c);
    if (!d->zero) goto oom;
    memset(d->zero, 0, c * sizeof(float));
    const size_t npix = (size_t)(p->batch * p->out_h * p->out_w);
    d->ind = malloc(npix * d->taps * sizeof *d->ind);
    if (!d->ind) goto oom;
    return d;
oom:
    cpu_dwconv_destroy(d);
    snprintf(err, err_len, "depthwise convolution: out of memory");
    return NULL;
}

int cpu_dwconv_setup(cpu_dwconv *d, const float *x, float *y, char *err, size_t err_len)
{
    if (!x || !y) {
        snprintf(err, err_len, "depthwise convolution: %s pointer is NULL", x ? "output" : "input");
        return -1;
    }
    d->x = x;
    d->y = y;
    if (d->row_kernel) return 0;
    const cpu_conv_params *p = &d->p;
    const float **ind = d->ind;
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t oy = 0; oy < p->out_h; oy++)
            for (int64_t ox = 0; ox < p->out_w; ox++)
                for (int64_t ky = 0; ky < p->kh; ky++)
                    for (int64_t kx = 0; kx < p->kw; kx++) {
                        const int64_t iy = oy * p->sh - p->pad_top + ky * p->dh;
                        const int64_t ix = ox * p->sw - p->pad_left + kx * p->dw;
                        const int inside = iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w;
                        *ind++ = inside ? x + ((n * p->in_h + iy) * p->in_w + ix) * p->in_c : d->zero;
                    }
    return 0;
}

static void dw_row(void *ctx, size_t task)
{
    const cpu_dwconv *d = ctx;
    const size_t row = d->row_base + task;
    const size_t ow = (size_t)d->p.out_w, oc = (size_t)d->p.out_c, taps = d->taps;
    if (d->row_kernel) {
        const cpu_conv_params *p = &d->p;
        const int64_t n = (int64_t)row / p->out_h, oy = (int64_t)row % p->out_h;
        const float *rows[3];
        for (int64_t ky = 0; ky < 3; ky++) {
            const int64_t iy = oy - p->pad_top + ky;
            rows[ky] = iy >= 0 && iy < p->in_h ? d->x + (n * p->in_h + iy) * p->in_w * p->in_c : NULL;
        }
        d->row_kernel(oc, ow, (size_t)p->in_w, (size_t)p->pad_left, rows, d->packed, d->y + row * ow * oc, &d->mm);
        return;
    }
    const float **ind = d->ind + row * ow * taps;
    float *y = d->y + row * ow * oc;
    if (d->mult == 1) {
        d->kernel(oc, ow, taps, ind, d->packed, y, oc, d->zero, &d->mm);
        return;
    }
    const size_t ic = (size_t)d->p.in_c, mult = d->mult;
    for (size_t px = 0; px < ow; px++, ind += taps, y += oc)
        for (size_t c = 0; c < ic; c++)
            for (size_t j = 0; j < mult; j++) {
                const size_t o = c * mult + j;
                const float *wp = d->packed + o * (taps + 1);
                float acc = wp[0];
                for (size_t t = 0; t < taps; t++) acc += ind[t][c] * wp[t + 1];
                /* NaN stays NaN: both comparisons are false for it. */
                if (acc < d->mm.min) acc = d->mm.min;
                if (acc > d->mm.max) acc = d->mm.max;
                y[o] = acc;
            }
}

void cpu_dwconv_run_rows(cpu_dwconv *d, size_t row0, size_t row1, pthreadpool_t pool)
{
    if (!d || !d->y || row1 <= row0) return;
    d->row_base = row0;
    pthreadpool_parallelize_1d(pool, dw_row, d, row1 - row0, 0);
}

void cpu_dwconv_run(cpu_dwconv *d, pthreadpool_t pool)
{
    if (d) cpu_dwconv_run_rows(d, 0, (size_t)(d->p.batch * d->p.out_h), pool);
}

void cpu_dwconv_destroy(cpu_dwconv *d)
{
    if (!d) return;
    free(d->packed);
    free(d->zero);
    free(d->ind);
    free(d);
}
