/*
 * layout.c - moving tensor data between layouts (layout.h). One walk over the output in order, the input offset
 * kept from the permuted strides.
 */
#include "formats/layout.h"

#include <string.h>

void par_fmt_permute(const void *src, void *dst, size_t esz, int32_t r, const int64_t *dims, const int32_t *p)
{
    int64_t n = 1, stride[8], odims[8], idx[8] = {0};
    if (r < 0 || r > 8) return;
    for (int32_t i = r; i-- > 0;) stride[i] = n, n *= dims[i];
    for (int32_t j = 0; j < r; j++) odims[j] = dims[p[j]];
    const uint8_t *s = src;
    uint8_t *d = dst;
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int32_t j = 0; j < r; j++) off += idx[j] * stride[p[j]];
        memcpy(d + (size_t)k * esz, s + (size_t)off * esz, esz);
        for (int32_t j = r; j-- > 0;) {
            if (++idx[j] < odims[j]) break;
            idx[j] = 0;
        }
    }
}
