/*
 * pack.c - weight packing into the micro-kernels' panel layouts (see cpu_ukernels.h): NR-wide column panels with the
 * bias folded in at the head of each panel (as XNNPACK's packw), and CB-wide channel blocks for depthwise kernels.
 * Padding columns and channels are written as zeros so that the kernels' full-width loads read defined values.
 * Packing is pure data movement: no arithmetic, so packed weights are bit-identical to the originals.
 */
#include <string.h>

#include "cpu_ukernels.h"

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

size_t cpu_pack_gemm_size(size_t n, size_t k, size_t nr) { return round_up(n, nr) * (k + 1); }

void cpu_pack_gemm_nk(size_t n, size_t k, size_t nr, const float *w, size_t ldw, const float *bias, float *out)
{
    for (size_t n0 = 0; n0 < n; n0 += nr) {
        const size_t nb = n - n0 < nr ? n - n0 : nr;
        for (size_t j = 0; j < nr; j++) out[j] = (j < nb && bias) ? bias[n0 + j] : 0.0f;
        out += nr;
        for (size_t kk = 0; kk < k; kk++) {
            for (size_t j = 0; j < nr; j++) out[j] = j < nb ? w[(n0 + j) * ldw + kk] : 0.0f;
            out += nr;
        }
    }
}

void cpu_pack_gemm_kn(size_t n, size_t k, size_t nr, const float *b, size_t ldb, const float *bias, float *out)
{
    for (size_t n0 = 0; n0 < n; n0 += nr) {
        const size_t nb = n - n0 < nr ? n - n0 : nr;
        for (size_t j = 0; j < nr; j++) out[j] = (j < nb && bias) ? bias[n0 + j] : 0.0f;
        out += nr;
        for (size_t kk = 0; kk < k; kk++) {
            memcpy(out, b + kk * ldb + n0, nb * sizeof(float));
            if (nb < nr) memset(out + nb, 0, (nr - nb) * sizeof(float));
            out += nr;
        }
    }
}

size_t cpu_pack_conv_size(size_t n, size_t ks, size_t kc, size_t nr) { return round_up(n, nr) * (ks * kc + 1); }

/* Per panel: bias, then for each kernel position (kh, kw) row-major, for each input channel c: NR weights. */
void cpu_pack_conv_oihw(size_t n, size_t kc, size_t kh, size_t kw, size_t nr, const float *w, const float *bias,
                        float *out)
{
    const size_t ks = kh * kw;
    for (size_t n0 = 0; n0 < n; n0 += nr) {
        const size_t nb = n - n0 < nr ? n - n0 : nr;
        for (size_t j = 0; j < nr; j++) out[j] = (j < nb && bias) ? bias[n0 + j] : 0.0f;
        out += nr;
        for (size_t s = 0; s < ks; s++) {
            for (size_t c = 0; c < kc; c++) {
                for (size_t j = 0; j < nr; j++) out[j] = j < nb ? w[((n0 + j) * kc + c) * ks + s] : 0.0f;
                out += nr;
            }
        }
    }
}

size_t cpu_pack_dw_size(size_t c, size_t taps, size_t cb) { return round_up(c, cb) * (taps + 1); }

void cpu_pack_dw(size_t c, size_t taps, size_t cb, const float *w, const float *bias, float *out)
{
    for (size_t c0 = 0; c0 < c; c0 += cb) {
        const size_t nb = c - c0 < cb ? c - c0 : cb;
        for (size_t j = 0; j < cb; j++) out[j] = (j < nb && bias) ? bias[c0 + j] : 0.0f;
        out += cb;
        for (size_t t = 0; t < taps; t++) {
            for (size_t j = 0; j < cb; j++) out[j] = j < nb ? w[(c0 + j) * taps + t] : 0.0f;
            out += cb;
        }
    }
}
