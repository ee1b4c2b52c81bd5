/*
 * onnx_decode.c - the ONNX reader's messages below ModelProto, each read by onnx.c's two passes (count, then decode):
 * TensorProto (typed fields and raw_data, checked against dims and data_type), TypeProto and ValueInfoProto,
 * AttributeProto, NodeProto, GraphProto. What is checked, and what is kept or dropped: the top of onnx.c.
 */
#include "onnx_read_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* raw_data is little-endian and is copied as it is; the hosts parity builds for (x86-64, aarch64) are too. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "formats/onnx_decode.c copies little-endian tensor data as it is: a big-endian host needs byte swapping here"
#endif

/* ---------------------------------------------------------------------------------------------------------------
 * Message definitions (the field names of paths, the counting pass's kinds: onnx_read_int.h's msgdef)
 * ------------------------------------------------------------------------------------------------------------- */

static const char *const GRAPH_F[] = {
    [1] = "node", [2] = "name", [5] = "initializer", [10] = "doc_string", [11] = "input", [12] = "output",
    [13] = "value_info", [14] = "quantization_annotation", [15] = "sparse_initializer",
};
static const char GRAPH_K[] = {[1] = 'm', [5] = 'm', [11] = 'm', [12] = 'm', [13] = 'm'};
static const char *const NODE_F[] = {
    [1] = "input", [2] = "output", [3] = "name", [4] = "op_type", [5] = "attribute", [6] = "doc_string",
    [7] = "domain",
};
static const char NODE_K[] = {[1] = 'm', [2] = 'm', [5] = 'm'};
static const char *const ATTR_F[] = {
    [1] = "name",     [2] = "f",         [3] = "i",           [4] = "s",           [5] = "t",
    [6] = "g",        [7] = "floats",    [8] = "ints",        [9] = "strings",     [10] = "tensors",
    [11] = "graphs",  [13] = "doc_string", [14] = "tp",       [15] = "type_protos", [20] = "type",
    [21] = "ref_attr_name", [22] = "sparse_tensor", [23] = "sparse_tensors",
};
static const char ATTR_K[] = {[7] = '4', [8] = 'v', [9] = 'm', [10] = 'm', [11] = 'm',
                              [14] = 'r', [15] = 'r', [22] = 'r', [23] = 'r'};
static const char *const TENSOR_F[] = {
    [1] = "dims",        [2] = "data_type",  [3] = "segment",    [4] = "float_data",   [5] = "int32_data",
    [6] = "string_data", [7] = "int64_data", [8] = "name",       [9] = "raw_data",     [10] = "double_data",
    [11] = "uint64_data", [12] = "doc_string", [13] = "external_data", [14] = "data_location",
};
static const char TENSOR_K[] = {[1] = 'v', [4] = '4', [5] = 'v', [6] = 'm', [7] = 'v', [10] = '8', [11] = 'v'};
static const char *const VALUE_F[] = {[1] = "name", [2] = "type", [3] = "doc_string"};
static const char *const TYPE_F[] = {
    [1] = "tensor_type", [4] = "sequence_type", [5] = "map_type", [6] = "denotation", [7] = "opaque_type",
    [8] = "sparse_tensor_type", [9] = "optional_type",
};
static const char *const TTYPE_F[] = {[1] = "elem_type", [2] = "shape"};
static const char *const SHAPE_F[] = {[1] = "dim"};
static const char SHAPE_K[] = {[1] = 'm'};
static const char *const DIM_F[] = {[1] = "dim_value", [2] = "dim_param", [3] = "denotation"};
static const msgdef GRAPH = MSGDEF("GraphProto", GRAPH_F, GRAPH_K);
static const msgdef NODE = MSGDEF("NodeProto", NODE_F, NODE_K);
static const msgdef ATTR = MSGDEF("AttributeProto", ATTR_F, ATTR_K);
static const msgdef TENSOR = MSGDEF("TensorProto", TENSOR_F, TENSOR_K);
static const msgdef VALUE = MSGDEF0("ValueInfoProto", VALUE_F);
static const msgdef TYPE = MSGDEF0("TypeProto", TYPE_F);
static const msgdef TTYPE = MSGDEF0("TypeProto.Tensor", TTYPE_F);
static const msgdef SHAPE = MSGDEF("TensorShapeProto", SHAPE_F, SHAPE_K);
static const msgdef DIM = MSGDEF0("TensorShapeProto.Dimension", DIM_F);

/* ---------------------------------------------------------------------------------------------------------------
 * TensorProto
 * ------------------------------------------------------------------------------------------------------------- */

/* The typed field that holds a dtype's values (TensorProto's comments), 0 when none does. */
static uint32_t typed_field(int32_t dtype)
{
    switch (dtype) {
    case PAR_ONNX_FLOAT:
    case PAR_ONNX_COMPLEX64: return 4;
    case PAR_ONNX_INT32:
    case PAR_ONNX_INT16:
    case PAR_ONNX_INT8:
    case PAR_ONNX_UINT16:
    case PAR_ONNX_UINT8:
    case PAR_ONNX_BOOL:
    case PAR_ONNX_FLOAT16:
    case PAR_ONNX_BFLOAT16: return 5;
    case PAR_ONNX_STRING: return 6;
    case PAR_ONNX_INT64: return 7;
    case PAR_ONNX_DOUBLE:
    case PAR_ONNX_COMPLEX128: return 10;
    case PAR_ONNX_UINT32:
    case PAR_ONNX_UINT64: return 11;
    default: return 0;
    }
}

/* "float [2, 3]" */
static const char *type_str(const par_onnx_tensor *t, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "%s [", par_onnx_dtype_name(t->dtype));
    for (int32_t i = 0; i < t->rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

/* One element of int32_data as the tensor's type: the range it must be in, stored in its own width. The 16-bit
 * floats' bits are accepted as uint16 (what onnx writes) or int16 (what some writers do). */
static int put_int32_elem(int32_t dtype, int32_t v, uint8_t *out)
{
    int64_t lo, hi;
    size_t w;
    switch (dtype) {
    case PAR_ONNX_INT8: lo = INT8_MIN, hi = INT8_MAX, w = 1; break;
    case PAR_ONNX_UINT8: lo = 0, hi = UINT8_MAX, w = 1; break;
    case PAR_ONNX_BOOL: lo = 0, hi = 1, w = 1; break;
    case PAR_ONNX_INT16: lo = INT16_MIN, hi = INT16_MAX, w = 2; break;
    case PAR_ONNX_UINT16: lo = 0, hi = UINT16_MAX, w = 2; break;
    case PAR_ONNX_FLOAT16:
    case PAR_ONNX_BFLOAT16: lo = INT16_MIN, hi = UINT16_MAX, w = 2; break;
    default: lo = INT32_MIN, hi = INT32_MAX, w = 4; break;
    }
    if (v < lo || v > hi) return -1;
    uint32_t u = (uint32_t)v;
    for (size_t i = 0; i < w; i++) out[i] = (uint8_t)(u >> (8 * i));
    return 0;
}

/* Decode the typed field's elements (counted: numel of them) into t->data. */
static int decode_typed(dec *d, const uint8_t *p, size_t n, par_onnx_tensor *t, uint32_t fld, size_t es)
{
    uint8_t *out = t->data;
    par_pb_wire elem = fld == 4 ? PAR_PB_FIXED32 : fld == 10 ? PAR_PB_FIXED64 : PAR_PB_VARINT;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    int64_t k = 0;
    while ((rc = next(d, &TENSOR, &r, &f)) > 0) {
        if (f.number != fld) continue;
        par_pb_scalars s;
        size_t cnt;
        uint64_t v;
        if (scalars(d, &TENSOR, &f, elem, &s, &cnt)) return -1;
        while (par_pb_scalars_next(&s, &v)) {
            if (k >= t->numel) return fail(d, TENSOR_F[fld], "more elements than counted"); /* cannot happen */
            uint8_t *o = out + (size_t)k * es;
            if (fld == 5) {
                if (put_int32_elem(t->dtype, (int32_t)(uint32_t)v, o))
                    return fail(d, TENSOR_F[fld], "tensor '%s': int32_data[%lld] is %d, out of range for %s", t->name,
                                (long long)k, (int)(int32_t)(uint32_t)v, par_onnx_dtype_name(t->dtype));
            } else if (fld == 11 && t->dtype == PAR_ONNX_UINT32) {
                if (v > UINT32_MAX)
                    return fail(d, TENSOR_F[fld], "tensor '%s': uint64_data[%lld] is %llu, out of range for uint32",
                                t->name, (long long)k, (unsigned long long)v);
                for (size_t i = 0; i < 4; i++) o[i] = (uint8_t)(v >> (8 * i));
            } else {
                for (size_t i = 0; i < es; i++) o[i] = (uint8_t)(v >> (8 * i));
            }
            k++;
        }
    }
    if (rc < 0) return -1;
    if (k != t->numel) return fail(d, TENSOR_F[fld], "fewer elements than counted"); /* cannot happen */
    return 0;
}

static int decode_strings(dec *d, const uint8_t *p, size_t n, par_onnx_tensor *t)
{
    int err = 0;
    char **strs = alloc_array(d, t->numel, sizeof *strs, &err);
    size_t *lens = alloc_array(d, t->numel, sizeof *lens, &err);
    if (err) return -1;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    int64_t k = 0;
    while ((rc = next(d, &TENSOR, &r, &f)) > 0) {
        if (f.number != 6 || k >= t->numel) continue;
        const char *s;
        if (get_str(d, &TENSOR, &f, &s)) return -1;
        strs[k] = (char *)s;
        lens[k++] = f.len;
    }
    if (rc < 0) return -1;
    t->strings = (const char *const *)strs;
    t->string_lens = lens;
    return 0;
}

int decode_tensor(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_tensor *t = obj;
    const msgdef *md = &TENSOR;
    t->name = "";
    int64_t c[MAX_KIND];
    if (count_fields(d, md, p, n, c)) return -1;
    if (c[1] > PAR_ONNX_MAX_RANK)
        return fail(d, "dims", "rank %lld exceeds %d", (long long)c[1], PAR_ONNX_MAX_RANK);
    t->rank = (int32_t)c[1];

    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    int have_raw = 0;
    int64_t loc = 0;
    int32_t k = 0;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    while ((rc = next(d, md, &r, &f)) > 0) {
        switch (f.number) {
        case 1: {
            par_pb_scalars s;
            size_t cnt;
            uint64_t v;
            if (scalars(d, md, &f, PAR_PB_VARINT, &s, &cnt)) return -1;
            while (k < t->rank && par_pb_scalars_next(&s, &v)) t->dims[k++] = (int64_t)v;
            break;
        }
        case 2:
            if (get_i32(d, md, &f, &t->dtype)) return -1;
            break;
        case 3: return fail(d, "segment", "segmented tensors are not supported");
        case 8:
            if (get_str(d, md, &f, &t->name)) return -1;
            break;
        case 9:
            if (want(d, md, &f, PAR_PB_LEN)) return -1;
            raw = f.data;
            raw_len = f.len;
            have_raw = 1;
            break;
        case 14:
            if (get_i64(d, md, &f, &loc)) return -1;
            break;
        default: break;
        }
    }
    if (rc < 0) return -1;

    /* dims: each >= 0, the product within int64 and the element limit; a zero dim makes it 0 whatever the rest */
    int zero = 0;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            return fail(d, "dims", "tensor '%s': dims[%d] is %lld, must be >= 0", t->name, (int)i,
                        (long long)t->dims[i]);
        zero |= t->dims[i] == 0;
    }
    int64_t numel = 1;
    for (int32_t i = 0; i < t->rank && !zero; i++) {
        if (t->dims[i] > INT64_MAX / numel)
            return fail(d, "dims", "tensor '%s': the product of dims overflows int64", t->name);
        numel *= t->dims[i];
    }
    if (zero) numel = 0;
    if (numel > PAR_ONNX_MAX_ELEMS)
        return fail(d, "dims", "tensor '%s': %lld elements, more than the limit of %lld", t->name, (long long)numel,
                    (long long)PAR_ONNX_MAX_ELEMS);
    t->numel = numel;
    if (loc != 0 && loc != 1)
        return fail(d, "data_location", "tensor '%s': %lld is neither DEFAULT (0) nor EXTERNAL (1)", t->name,
                    (long long)loc);
    if (t->dtype == PAR_ONNX_UNDEFINED)
        return fail(d, "data_type", "tensor '%s': missing or UNDEFINED", t->name);
    if (loc == 1) {
        t->external = 1;
        return 0;
    }
    size_t es = par_onnx_dtype_size(t->dtype);
    /* complex and unknown types: the data is not kept (data NULL) */
    if (es == 0 && t->dtype != PAR_ONNX_STRING) return 0;

    char ts[200];
    uint32_t fld = typed_field(t->dtype);
    static const uint32_t typed[] = {4, 5, 6, 7, 10, 11};
    for (size_t i = 0; i < sizeof typed / sizeof *typed; i++)
        if (typed[i] != fld && c[typed[i]])
            return fail(d, TENSOR_F[typed[i]], "tensor '%s': %s holds no %s data", t->name, TENSOR_F[typed[i]],
                        par_onnx_dtype_name(t->dtype));
    if (have_raw && c[fld])
        return fail(d, "raw_data", "tensor '%s': both raw_data and %s hold data", t->name, TENSOR_F[fld]);

    if (t->dtype == PAR_ONNX_STRING) {
        if (have_raw) return fail(d, "raw_data", "tensor '%s': a string tensor cannot have raw_data", t->name);
        if (c[6] != numel)
            return fail(d, "string_data", "tensor '%s': %lld strings, %s needs %lld", t->name, (long long)c[6],
                        type_str(t, ts, sizeof ts), (long long)numel);
        return numel ? decode_strings(d, p, n, t) : 0;
    }

    uint64_t need = (uint64_t)numel * es; /* numel <= 2^30, es <= 8 */
    if (have_raw) {
        if ((uint64_t)raw_len != need)
            return fail(d, "raw_data", "tensor '%s': raw_data holds %zu bytes, %s needs %llu", t->name, raw_len,
                        type_str(t, ts, sizeof ts), (unsigned long long)need);
        if (!numel) return 0;
        if (need > SIZE_MAX || !(t->data = alloc(d, (size_t)need))) return oom(d);
        memcpy(t->data, raw, (size_t)need);
        return 0;
    }
    if (c[fld] != numel) {
        if (!c[fld])
            return fail(d, NULL, "tensor '%s': no data (raw_data or %s), %s needs %llu bytes", t->name, TENSOR_F[fld],
                        type_str(t, ts, sizeof ts), (unsigned long long)need);
        return fail(d, TENSOR_F[fld], "tensor '%s': %s holds %lld elements (%llu bytes), %s needs %lld (%llu bytes)",
                    t->name, TENSOR_F[fld], (long long)c[fld], (unsigned long long)c[fld] * es,
                    type_str(t, ts, sizeof ts), (long long)numel, (unsigned long long)need);
    }
    if (!numel) return 0;
    if (need > SIZE_MAX || !(t->data = alloc(d, (size_t)need))) return oom(d);
    return decode_typed(d, p, n, t, fld, es);
}

/* ---------------------------------------------------------------------------------------------------------------
 * ValueInfoProto and TypeProto
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct dim_slot {
    par_onnx_value_info *vi;
    int32_t k;
} dim_slot;

static int decode_dim(dec *d, const uint8_t *p, size_t n, void *obj)
{
    dim_slot *ds = obj;
    int64_t *dim = &ds->vi->dims[ds->k];
    const char **param = &ds->vi->dim_params[ds->k];
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    /* a oneof: the last of dim_value / dim_param wins; a negative dim_value is unknown */
    while ((rc = next(d, &DIM, &r, &f)) > 0) {
        if (f.number == 1) {
            int64_t v;
            if (get_i64(d, &DIM, &f, &v)) return -1;
            *dim = v >= 0 ? v : -1;
            *param = NULL;
        } else if (f.number == 2) {
            if (get_str(d, &DIM, &f, param)) return -1;
            *dim = -1;
        }
    }
    return rc;
}

static int decode_shape(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_value_info *vi = obj;
    int64_t c[MAX_KIND];
    if (count_fields(d, &SHAPE, p, n, c)) return -1;
    if (c[1] > PAR_ONNX_MAX_RANK) return fail(d, "dim", "rank %lld exceeds %d", (long long)c[1], PAR_ONNX_MAX_RANK);
    vi->rank = (int32_t)c[1];
    for (int32_t i = 0; i < vi->rank; i++) {
        vi->dims[i] = -1;
        vi->dim_params[i] = NULL;
    }
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    int32_t k = 0;
    while ((rc = next(d, &SHAPE, &r, &f)) > 0) {
        if (f.number != 1) continue;
        dim_slot ds = {vi, k};
        if (sub(d, "dim", k, &f, decode_dim, &ds)) return -1;
        k++;
    }
    return rc;
}

static int decode_tensor_type(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_value_info *vi = obj;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc, seen_shape = 0;
    while ((rc = next(d, &TTYPE, &r, &f)) > 0) {
        if (f.number == 1) {
            if (get_i32(d, &TTYPE, &f, &vi->elem_type)) return -1;
        } else if (f.number == 2) {
            if (once(d, &TTYPE, &f, &seen_shape) || sub(d, "shape", -1, &f, decode_shape, vi)) return -1;
        }
    }
    return rc;
}

/* A tensor type is decoded; any other (sequence 4, map 5, opaque 7, sparse tensor 8, optional 9) is kept as its
 * bytes. */
static int decode_type(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_value_info *vi = obj;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f, tensor = {0};
    int rc, seen_tensor = 0, other = 0;
    while ((rc = next(d, &TYPE, &r, &f)) > 0) {
        if (f.number == 1) {
            if (once(d, &TYPE, &f, &seen_tensor)) return -1;
            tensor = f;
        } else if (f.number == 4 || f.number == 5 || f.number == 7 || f.number == 8 || f.number == 9) {
            if (want(d, &TYPE, &f, PAR_PB_LEN)) return -1;
            other = 1;
        }
    }
    if (rc < 0) return -1;
    if (other) {
        uint8_t *copy = alloc(d, n);
        if (!copy) return oom(d);
        if (n) memcpy(copy, p, n);
        vi->type_proto = copy;
        vi->type_proto_len = n;
        return 0;
    }
    return seen_tensor ? sub(d, "tensor_type", -1, &tensor, decode_tensor_type, vi) : 0;
}

static int decode_value_info(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_value_info *vi = obj;
    vi->name = "";
    vi->elem_type = 0;
    vi->rank = -1;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc, seen_type = 0;
    while ((rc = next(d, &VALUE, &r, &f)) > 0) {
        if (f.number == 1) {
            if (get_str(d, &VALUE, &f, &vi->name)) return -1;
        } else if (f.number == 2) {
            if (once(d, &VALUE, &f, &seen_type) || sub(d, "type", -1, &f, decode_type, vi)) return -1;
        }
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------------------------------
 * AttributeProto, NodeProto, GraphProto
 * ------------------------------------------------------------------------------------------------------------- */

/* The type of an attribute that does not say (IR < 2): the lowest-numbered value field present. */
static int32_t infer_attr_type(const int64_t seen[MAX_KIND])
{
    static const struct {
        uint8_t field;
        uint8_t type;
    } map[] = {
        {2, PAR_ONNX_ATTR_FLOAT},    {3, PAR_ONNX_ATTR_INT},       {4, PAR_ONNX_ATTR_STRING},
        {5, PAR_ONNX_ATTR_TENSOR},   {6, PAR_ONNX_ATTR_GRAPH},     {7, PAR_ONNX_ATTR_FLOATS},
        {8, PAR_ONNX_ATTR_INTS},     {9, PAR_ONNX_ATTR_STRINGS},   {10, PAR_ONNX_ATTR_TENSORS},
        {11, PAR_ONNX_ATTR_GRAPHS},  {14, PAR_ONNX_ATTR_TYPE_PROTO}, {15, PAR_ONNX_ATTR_TYPE_PROTOS},
        {22, PAR_ONNX_ATTR_SPARSE_TENSOR}, {23, PAR_ONNX_ATTR_SPARSE_TENSORS},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (seen[map[i].field]) return map[i].type;
    return PAR_ONNX_ATTR_UNDEFINED;
}

static int decode_attr(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_attr *a = obj;
    const msgdef *md = &ATTR;
    int64_t c[MAX_KIND];
    if (count_fields(d, md, p, n, c)) return -1;
    int err = 0;
    float *floats = alloc_array(d, c[7], sizeof *floats, &err);
    int64_t *ints = alloc_array(d, c[8], sizeof *ints, &err);
    char **strings = alloc_array(d, c[9], sizeof *strings, &err);
    size_t *strings_lens = alloc_array(d, c[9], sizeof *strings_lens, &err);
    par_onnx_tensor *tensors = alloc_array(d, c[10], sizeof *tensors, &err);
    par_onnx_graph *graphs = alloc_array(d, c[11], sizeof *graphs, &err);
    size_t n_other = (size_t)(c[14] + c[15] + c[22] + c[23]);
    uint8_t *other = n_other ? alloc(d, n_other) : NULL;
    if (err || (n_other && !other)) return err ? -1 : oom(d);

    int64_t seen[MAX_KIND] = {0}, k[MAX_KIND] = {0};
    size_t other_len = 0;
    int seen_t = 0, seen_g = 0;
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    while ((rc = next(d, md, &r, &f)) > 0) {
        uint32_t num = f.number;
        if (num < MAX_KIND) seen[num] = 1;
        switch (num) {
        case 1:
            if (get_str(d, md, &f, &a->name)) return -1;
            break;
        case 2: {
            if (want(d, md, &f, PAR_PB_FIXED32)) return -1;
            uint32_t u = (uint32_t)f.u;
            memcpy(&a->f, &u, 4);
            break;
        }
        case 3:
            if (get_i64(d, md, &f, &a->i)) return -1;
            break;
        case 4:
            if (get_str(d, md, &f, &a->s)) return -1;
            a->s_len = f.len;
            break;
        case 5: {
            if (once(d, md, &f, &seen_t)) return -1;
            par_onnx_tensor *t = alloc(d, sizeof *t);
            if (!t) return oom(d);
            if (sub(d, "t", -1, &f, decode_tensor, t)) return -1;
            a->t = t;
            break;
        }
        case 6: {
            if (once(d, md, &f, &seen_g)) return -1;
            par_onnx_graph *g = alloc(d, sizeof *g);
            if (!g) return oom(d);
            if (sub(d, "g", -1, &f, decode_graph, g)) return -1;
            a->g = g;
            break;
        }
        case 7:
        case 8: {
            par_pb_scalars s;
            size_t cnt;
            uint64_t v;
            if (scalars(d, md, &f, num == 7 ? PAR_PB_FIXED32 : PAR_PB_VARINT, &s, &cnt)) return -1;
            while (k[num] < c[num] && par_pb_scalars_next(&s, &v)) {
                if (num == 7) {
                    uint32_t u = (uint32_t)v;
                    memcpy(&floats[k[num]++], &u, 4);
                } else {
                    ints[k[num]++] = (int64_t)v;
                }
            }
            break;
        }
        case 9:
            if (k[9] < c[9]) {
                if (get_str(d, md, &f, (const char **)&strings[k[9]])) return -1;
                strings_lens[k[9]++] = f.len;
            }
            break;
        case 10:
            if (k[10] < c[10]) {
                if (sub(d, "tensors", k[10], &f, decode_tensor, &tensors[k[10]])) return -1;
                k[10]++;
            }
            break;
        case 11:
            if (k[11] < c[11]) {
                if (sub(d, "graphs", k[11], &f, decode_graph, &graphs[k[11]])) return -1;
                k[11]++;
            }
            break;
        case 14:
        case 15:
        case 22:
        case 23:
            if (other_len + (f.end - f.offset) <= n_other) {
                memcpy(other + other_len, d->base + f.offset, f.end - f.offset);
                other_len += f.end - f.offset;
            }
            break;
        case 20:
            if (get_i32(d, md, &f, &a->type)) return -1;
            break;
        case 21:
            if (get_str(d, md, &f, &a->ref_attr_name)) return -1;
            break;
        default: break;
        }
    }
    if (rc < 0) return -1;
    if (!a->name) return fail(d, NULL, "an attribute without a name");
    if (a->type == PAR_ONNX_ATTR_UNDEFINED) a->type = infer_attr_type(seen);
    if (a->type < 0 || a->type > PAR_ONNX_ATTR_TYPE_PROTOS)
        return fail(d, "type", "attribute '%s': %d is not an AttributeType", a->name, (int)a->type);
    if (a->type == PAR_ONNX_ATTR_TENSOR && !a->t)
        return fail(d, "t", "attribute '%s': of type TENSOR without a tensor", a->name);
    if (a->type == PAR_ONNX_ATTR_GRAPH && !a->g)
        return fail(d, "g", "attribute '%s': of type GRAPH without a graph", a->name);
    /* only the list of the attribute's type is kept, so that n counts what the pointer holds */
    a->n = 0;
    switch (a->type) {
    case PAR_ONNX_ATTR_FLOATS: a->floats = floats, a->n = (int32_t)c[7]; break;
    case PAR_ONNX_ATTR_INTS: a->ints = ints, a->n = (int32_t)c[8]; break;
    case PAR_ONNX_ATTR_STRINGS:
        a->strings = (const char *const *)strings, a->strings_lens = strings_lens, a->n = (int32_t)c[9];
        break;
    case PAR_ONNX_ATTR_TENSORS: a->tensors = tensors, a->n = (int32_t)c[10]; break;
    case PAR_ONNX_ATTR_GRAPHS: a->graphs = graphs, a->n = (int32_t)c[11]; break;
    default: break;
    }
    if (other_len) {
        a->other_fields = other;
        a->other_fields_len = other_len;
    }
    return 0;
}

static int decode_node(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_node *nd = obj;
    const msgdef *md = &NODE;
    int64_t c[MAX_KIND];
    if (count_fields(d, md, p, n, c)) return -1;
    int err = 0;
    const char **inputs = alloc_array(d, c[1], sizeof *inputs, &err);
    const char **outputs = alloc_array(d, c[2], sizeof *outputs, &err);
    nd->attrs = alloc_array(d, c[5], sizeof *nd->attrs, &err);
    if (err) return -1;
    nd->name = "";
    nd->domain = "";
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    while ((rc = next(d, md, &r, &f)) > 0) {
        switch (f.number) {
        case 1:
            if (nd->n_inputs < c[1] && get_str(d, md, &f, &inputs[nd->n_inputs++])) return -1;
            break;
        case 2:
            if (nd->n_outputs < c[2] && get_str(d, md, &f, &outputs[nd->n_outputs++])) return -1;
            break;
        case 3:
            if (get_str(d, md, &f, &nd->name)) return -1;
            break;
        case 4:
            if (get_str(d, md, &f, &nd->op_type)) return -1;
            break;
        case 5:
            if (nd->n_attrs < c[5]) {
                if (sub(d, "attribute", nd->n_attrs, &f, decode_attr, &nd->attrs[nd->n_attrs])) return -1;
                nd->n_attrs++;
            }
            break;
        case 7:
            if (get_str(d, md, &f, &nd->domain)) return -1;
            break;
        default: break;
        }
    }
    if (rc < 0) return -1;
    nd->inputs = inputs;
    nd->outputs = outputs;
    if (!nd->op_type) return fail(d, NULL, "a node without an op_type");
    return 0;
}

int decode_graph(dec *d, const uint8_t *p, size_t n, void *obj)
{
    par_onnx_graph *g = obj;
    const msgdef *md = &GRAPH;
    int64_t c[MAX_KIND];
    if (count_fields(d, md, p, n, c)) return -1;
    int err = 0;
    g->nodes = alloc_array(d, c[1], sizeof *g->nodes, &err);
    g->initializers = alloc_array(d, c[5], sizeof *g->initializers, &err);
    g->inputs = alloc_array(d, c[11], sizeof *g->inputs, &err);
    g->outputs = alloc_array(d, c[12], sizeof *g->outputs, &err);
    g->value_info = alloc_array(d, c[13], sizeof *g->value_info, &err);
    if (err) return -1;
    g->name = "";
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    while ((rc = next(d, md, &r, &f)) > 0) {
        switch (f.number) {
        case 1:
            if (g->n_nodes < c[1]) {
                if (sub(d, "node", g->n_nodes, &f, decode_node, &g->nodes[g->n_nodes])) return -1;
                g->n_nodes++;
            }
            break;
        case 2:
            if (get_str(d, md, &f, &g->name)) return -1;
            break;
        case 5:
            if (g->n_initializers < c[5]) {
                if (sub(d, "initializer", g->n_initializers, &f, decode_tensor, &g->initializers[g->n_initializers]))
                    return -1;
                g->n_initializers++;
            }
            break;
        case 10:
            if (get_str(d, md, &f, &g->doc_string)) return -1;
            break;
        case 11:
            if (g->n_inputs < c[11]) {
                if (sub(d, "input", g->n_inputs, &f, decode_value_info, &g->inputs[g->n_inputs])) return -1;
                g->n_inputs++;
            }
            break;
        case 12:
            if (g->n_outputs < c[12]) {
                if (sub(d, "output", g->n_outputs, &f, decode_value_info, &g->outputs[g->n_outputs])) return -1;
                g->n_outputs++;
            }
            break;
        case 13:
            if (g->n_value_info < c[13]) {
                if (sub(d, "value_info", g->n_value_info, &f, decode_value_info, &g->value_info[g->n_value_info]))
                    return -1;
                g->n_value_info++;
            }
            break;
        case 15: return fail(d, "sparse_initializer", "sparse initializers are not supported");
        default: break;
        }
    }
    return rc;
}
