/*
 * shape_util.h - helpers shared by the shape files of core (shape_<family>.c): reading geometry attributes in
 * range and writing an output shape. Nothing outside core/shape_*.c includes it; it must hold no op's rule.
 */
#ifndef PAR_SHAPE_UTIL_H
#define PAR_SHAPE_UTIL_H

#include "shape.h"

/* Read an ints2 attribute (each element defaulting to lo) and check each element is in [lo, PAR_SHAPE_ATTR_MAX]. */
static inline par_status read_pair(const par_node *n, const char *name, int64_t lo, int64_t *a, int64_t *b,
                                   par_msg *msg)
{
    int64_t v[2];
    for (int32_t i = 0; i < 2; i++) {
        v[i] = par_attr_ints_at(n, name, i, lo);
        if (v[i] < lo || v[i] > PAR_SHAPE_ATTR_MAX)
            return par_msgf(msg, PAR_ERROR, "attribute '%s': element %d is %lld, must be in [%lld, %lld]", name,
                            (int)i, (long long)v[i], (long long)lo, (long long)PAR_SHAPE_ATTR_MAX);
    }
    *a = v[0];
    *b = v[1];
    return PAR_OK;
}

/* Read a 0/1 int attribute. */
static inline par_status read_flag(const par_node *n, const char *name, int *flag, par_msg *msg)
{
    int64_t v = par_attr_int(n, name, 0);
    if (v != 0 && v != 1)
        return par_msgf(msg, PAR_ERROR, "attribute '%s': %lld, must be 0 or 1", name, (long long)v);
    *flag = (int)v;
    return PAR_OK;
}

/* Output o gets the shape (rank, dims) and its element count. */
static inline void copy_shape(par_value *o, int32_t rank, const int64_t *dims)
{
    o->rank = rank;
    for (int32_t i = 0; i < rank; i++) o->dims[i] = dims[i];
    o->numel = par_shape_numel(rank, dims);
}

#endif
