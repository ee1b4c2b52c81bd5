/*
 * shape_dims.c - the small shape helpers every layer uses: element count, axis normalization, and the "[1,3,224,224]"
 * form of a shape for messages (declared in core/shape.h). It must not know any op.
 */
#include "shape.h"

#include <stdio.h>

int64_t par_shape_numel(int32_t rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

int32_t par_axis_norm(int64_t axis, int32_t rank)
{
    if (axis < 0) axis += rank;
    return (axis >= 0 && axis < rank) ? (int32_t)axis : -1;
}

void par_shape_format(int32_t rank, const int64_t *dims, char *buf, size_t len)
{
    size_t used = 0;
    if (!len) return;
    buf[0] = 0;
    for (int32_t i = 0; i <= rank && used < len; i++) {
        int k;
        if (i == rank) k = snprintf(buf + used, len - used, "]");
        else k = snprintf(buf + used, len - used, "%s%lld", i ? "," : "[", (long long)dims[i]);
        if (k < 0) break;
        used += (size_t)k;
    }
    if (rank == 0 && len > 2) snprintf(buf, len, "[]");
}
