/*
 * case_json_tensor.c - the inputs and constants of a case file (docs/case-format.md): name, dtype, shape, a generator
 * ("init") or data (inline numbers, or a sidecar file of raw little-endian elements), and quantization (per tensor,
 * or per channel for qs8 constants). Part of the reader whose top level is case_json.c.
 *
 * Must not: accept NaN data, a finite number that overflows the dtype, tensors over PAR_CASE_MAX_ELEMS (alone or
 * together), or read anything but a regular file; crash, leak or read out of bounds on any input.
 * Every error reads "<origin>: <JSON path>: <reason>".
 */
#include "case_json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph.h"
#include "tensor.h"

static int parse_shape(reader *r, json_object *v, const jpath *path, int32_t *rank, int64_t *dims)
{
    if (!par_cj_want(r, v, json_type_array, path, "an array of dimensions")) return 0;
    size_t n = json_object_array_length(v);
    if (n > PAR_MAX_RANK) return par_cj_perr(r, path, "rank %zu exceeds the maximum %d", n, PAR_MAX_RANK);
    int64_t numel = 1;
    for (size_t i = 0; i < n; i++) {
        jpath ip = par_cj_pidx(path, i);
        if (!par_cj_get_i64(r, json_object_array_get_idx(v, i), &ip, 1, PAR_CASE_MAX_ELEMS, &dims[i])) return 0;
        if (numel > PAR_CASE_MAX_ELEMS / dims[i]) /* numel <= 2^28 and dims[i] <= 2^28: no int64 overflow */
            return par_cj_perr(r, path, "more than %lld elements", (long long)PAR_CASE_MAX_ELEMS);
        numel *= dims[i];
    }
    *rank = (int32_t)n;
    return 1;
}

static int parse_gen(reader *r, json_object *o, const jpath *path, par_dtype dt, par_gen *g)
{
    static const char *const k_uniform[] = {"dist", "low", "high", "fan_in", "seed", NULL};
    static const char *const k_normal[] = {"dist", "mean", "std", "fan_in", "seed", NULL};
    static const char *const k_const[] = {"dist", "value", "fan_in", "seed", NULL};
    static const char *const k_edge[] = {"dist", "max", "fan_in", "seed", NULL};
    static const char *const k_hazard[] = {"dist", "hazard", "low", "high", "fan_in", "seed", NULL};
    static const char *const k_ties[] = {"dist", "hazard", "step", "count", "seed", NULL};
    json_object *v;
    const char *dist;
    memset(g, 0, sizeof *g);
    if (!par_cj_want(r, o, json_type_object, path, "an object")) return 0;
    jpath dp = par_cj_pkey(path, "dist");
    if (!par_cj_has(o, "dist", &v)) return par_cj_perr(r, &dp, "missing (uniform, normal, const, edge or hazard)");
    if (!par_cj_get_str(r, v, &dp, &dist)) return 0;
    const char *a_key = NULL, *b_key = NULL;
    const char *const *keys;
    if (strcmp(dist, "uniform") == 0) g->dist = PAR_DIST_UNIFORM, a_key = "low", b_key = "high", keys = k_uniform;
    else if (strcmp(dist, "normal") == 0) g->dist = PAR_DIST_NORMAL, a_key = "mean", b_key = "std", keys = k_normal;
    else if (strcmp(dist, "const") == 0) g->dist = PAR_DIST_CONST, a_key = "value", keys = k_const;
    else if (strcmp(dist, "edge") == 0) g->dist = PAR_DIST_EDGE, b_key = "max", keys = k_edge;
    else if (strcmp(dist, "hazard") == 0) {
        /* which hazard first: ties names its parameters step and count, the others low and high */
        const char *hn;
        jpath hp = par_cj_pkey(path, "hazard");
        g->dist = PAR_DIST_HAZARD;
        if (!par_cj_has(o, "hazard", &v)) return par_cj_perr(r, &hp, "missing (required for hazard)");
        if (!par_cj_get_str(r, v, &hp, &hn)) return 0;
        g->hazard = par_hazard_find(hn);
        if (!g->hazard) {
            char b[80];
            return par_cj_perr(r, &hp, "unknown hazard '%s' (expected nan_inf, huge, subnormal, signed_zero, ties, "
                               "saturation, cancel, near_overflow or all_equal)", par_cj_san(hn, b, sizeof b));
        }
        if (g->hazard == PAR_HAZARD_TIES) a_key = "step", b_key = "count", keys = k_ties;
        else a_key = "low", b_key = "high", keys = k_hazard;
    } else {
        char b[80];
        return par_cj_perr(r, &dp, "unknown distribution '%s' (expected uniform, normal, const, edge or hazard)",
                           par_cj_san(dist, b, sizeof b));
    }
    if (!par_cj_check_keys(r, o, path, keys)) return 0;
    const char *pk[2] = {a_key, b_key};
    double *pv[2] = {&g->a, &g->b};
    for (int i = 0; i < 2; i++) {
        if (!pk[i]) continue;
        jpath kp = par_cj_pkey(path, pk[i]);
        if (!par_cj_has(o, pk[i], &v)) return par_cj_perr(r, &kp, "missing (required for %s)", dist);
        if (!par_cj_get_num(r, v, &kp, pv[i])) return 0;
    }
    if (par_cj_has(o, "fan_in", &v)) {
        jpath kp = par_cj_pkey(path, "fan_in");
        if (!par_cj_want(r, v, json_type_boolean, &kp, "true or false")) return 0;
        g->fan_in = json_object_get_boolean(v) ? 1 : 0;
    }
    if (par_cj_has(o, "seed", &v)) {
        jpath kp = par_cj_pkey(path, "seed");
        if (!par_cj_get_seed(r, v, &kp, &g->seed)) return 0;
    }
    par_msg m;
    if (par_gen_check(g, dt, &m) != PAR_OK) return par_cj_perr(r, path, "%s", m.text);
    return 1;
}

/* Inline data: exactly numel numbers; real dtypes take numbers (rounded to the dtype, which a finite number must not
 * overflow) and the strings "inf" / "-inf" (an attention mask's -inf is data, not a hazard),
 * integer dtypes take integers within the type. Returns a malloc'ed buffer of the dtype, or NULL. */
static void *parse_inline(reader *r, json_object *arr, const jpath *path, par_dtype dt, int32_t rank,
                          const int64_t *dims)
{
    int64_t numel = par_shape_numel(rank, dims);
    size_t n = json_object_array_length(arr);
    if ((int64_t)n != numel) {
        char sh[128];
        par_shape_format(rank, dims, sh, sizeof sh);
        return par_cj_perr(r, path, "expected %lld values for shape %s, got %zu", (long long)numel, sh, n), NULL;
    }
    void *buf = malloc((size_t)numel * par_dtype_size(dt) + 1);
    if (!buf) return par_cj_perr(r, path, "out of memory"), NULL;
    int64_t lo, hi;
    par_cj_int_limits(dt, &lo, &hi);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        jpath ip = par_cj_pidx(path, i);
        double d;
        int64_t q;
        switch (dt) {
        case PAR_DTYPE_F32:
        case PAR_DTYPE_F16: {
            if (!par_cj_get_num_or_inf(r, e, &ip, &d)) goto fail;
            float f = (float)d;
            uint16_t h = dt == PAR_DTYPE_F16 ? par_f32_to_f16(f) : 0;
            if (!isinf(d) && (isinf(f) || (dt == PAR_DTYPE_F16 && (h & 0x7c00) == 0x7c00))) {
                par_cj_perr(r, &ip, "%.9g overflows %s", d, par_dtype_name(dt));
                goto fail;
            }
            if (dt == PAR_DTYPE_F32) ((float *)buf)[i] = f;
            else ((uint16_t *)buf)[i] = h;
            break;
        }
        case PAR_DTYPE_BOOL:
            /* true / false, or the integers 0 / 1 */
            if (json_object_get_type(e) == json_type_boolean) q = json_object_get_boolean(e) ? 1 : 0;
            else if (!par_cj_get_i64(r, e, &ip, lo, hi, &q)) goto fail;
            ((uint8_t *)buf)[i] = (uint8_t)q;
            break;
        default:
            if (!par_cj_get_i64(r, e, &ip, lo, hi, &q)) goto fail;
            if (dt == PAR_DTYPE_QU8) ((uint8_t *)buf)[i] = (uint8_t)q;
            else if (dt == PAR_DTYPE_QS8) ((int8_t *)buf)[i] = (int8_t)q;
            else if (dt == PAR_DTYPE_QS16) ((int16_t *)buf)[i] = (int16_t)q;
            else ((int32_t *)buf)[i] = (int32_t)q;
            break;
        }
    }
    return buf;
fail:
    free(buf);
    return NULL;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Sidecar data {"file": "w.bin", "offset": 0}: raw little-endian elements of the dtype, the path relative to the
 * case file's folder. Only regular files are read (a FIFO or device could block or never end). */
static void *load_sidecar(reader *r, json_object *o, const jpath *path, par_dtype dt, int32_t rank,
                          const int64_t *dims, char **file_out, int64_t *offset_out)
{
    static const char *const keys[] = {"file", "offset", NULL};
    json_object *v;
    const char *file;
    int64_t offset = 0;
    char b[80];
    if (!par_cj_check_keys(r, o, path, keys)) return NULL;
    jpath fp = par_cj_pkey(path, "file"), op = par_cj_pkey(path, "offset");
    if (!par_cj_has(o, "file", &v)) return par_cj_perr(r, &fp, "missing (the sidecar file's path)"), NULL;
    if (!par_cj_get_str(r, v, &fp, &file)) return NULL;
    if (!*file) return par_cj_perr(r, &fp, "empty path"), NULL;
    if (par_cj_has(o, "offset", &v) && !par_cj_get_i64(r, v, &op, 0, INT64_MAX / 2, &offset)) return NULL;

    const char *slash = strrchr(r->origin, '/');
    size_t dlen = (file[0] == '/' || !slash) ? 0 : (size_t)(slash - r->origin) + 1;
    char *full = malloc(dlen + strlen(file) + 1);
    if (!full) return par_cj_perr(r, &fp, "out of memory"), NULL;
    memcpy(full, r->origin, dlen);
    strcpy(full + dlen, file);

    const size_t need = (size_t)par_shape_numel(rank, dims) * par_dtype_size(dt);
    void *buf = NULL;
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        par_cj_perr(r, &fp, "cannot open '%s': %s", par_cj_san(full, b, sizeof b), strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        par_cj_perr(r, &fp, "'%s' is not a regular file", par_cj_san(full, b, sizeof b));
        goto out;
    }
    if ((int64_t)st.st_size < offset || (uint64_t)((int64_t)st.st_size - offset) < (uint64_t)need) {
        par_cj_perr(r, &fp, "'%s' has %lld bytes; %zu needed from offset %lld", par_cj_san(full, b, sizeof b),
                    (long long)st.st_size, need, (long long)offset);
        goto out;
    }
    buf = malloc(need + 1);
    if (!buf) {
        par_cj_perr(r, &fp, "out of memory");
        goto out;
    }
    for (size_t got = 0; got < need;) {
        ssize_t k = pread(fd, (char *)buf + got, need - got, (off_t)(offset + (int64_t)got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            par_cj_perr(r, &fp, "cannot read '%s': %s", par_cj_san(full, b, sizeof b),
                        k < 0 ? strerror(errno) : "file is short");
            free(buf);
            buf = NULL;
            goto out;
        }
        got += (size_t)k;
    }
    const size_t es = par_dtype_size(dt);
    if (!host_is_little_endian() && es > 1) {
        unsigned char *p = buf;
        for (size_t i = 0; i < need; i += es)
            for (size_t j = 0; j < es / 2; j++) {
                unsigned char t = p[i + j];
                p[i + j] = p[i + es - 1 - j];
                p[i + es - 1 - j] = t;
            }
    }
    /* No NaN, as inline data: the writer could not express it (infinities it writes as "inf" / "-inf"). */
    for (size_t i = 0; i < need / es && (dt == PAR_DTYPE_F32 || dt == PAR_DTYPE_F16); i++) {
        int bad = dt == PAR_DTYPE_F32 ? isnan(((float *)buf)[i])
                                      : (((uint16_t *)buf)[i] & 0x7fff) > 0x7c00; /* f16 NaN */
        if (bad) {
            par_cj_perr(r, &fp, "element %zu of '%s' is NaN; data must not hold NaN", i,
                        par_cj_san(full, b, sizeof b));
            free(buf);
            buf = NULL;
            goto out;
        }
    }
    for (size_t i = 0; i < need && dt == PAR_DTYPE_BOOL; i++) {
        if (((unsigned char *)buf)[i] > 1) {
            par_cj_perr(r, &fp, "element %zu of '%s' is the byte %d; bool data must be 0 or 1", i,
                        par_cj_san(full, b, sizeof b), (int)((unsigned char *)buf)[i]);
            free(buf);
            buf = NULL;
            goto out;
        }
    }
    *file_out = strdup(file);
    *offset_out = offset;
    if (!*file_out) {
        par_cj_perr(r, &fp, "out of memory");
        free(buf);
        buf = NULL;
    }
out:
    if (fd >= 0) close(fd);
    free(full);
    return buf;
}

typedef struct quant_spec {
    int present, per_channel;
    float scale;
    int32_t zero_point;
    int32_t axis;
    float *scales;
    int64_t n;
} quant_spec;

static int parse_quant(reader *r, json_object *o, const jpath *path, par_dtype dt, int32_t rank, const int64_t *dims,
                       int is_const, quant_spec *q)
{
    static const char *const keys[] = {"scale", "zero_point", "axis", "scales", NULL};
    json_object *v;
    if (!par_cj_want(r, o, json_type_object, path, "an object")) return 0;
    if (!par_cj_check_keys(r, o, path, keys)) return 0;
    if (!par_cj_is_quant_dtype(dt)) return par_cj_perr(r, path, "quantization is only for qu8, qs8, qs16 and i32 tensors");
    q->present = 1;
    int has_axis = par_cj_has(o, "axis", &v), has_scales = par_cj_has(o, "scales", &v);
    if (has_axis || has_scales) {
        jpath ap = par_cj_pkey(path, "axis"), sp = par_cj_pkey(path, "scales");
        if (par_cj_has(o, "scale", &v) || par_cj_has(o, "zero_point", &v))
            return par_cj_perr(r, path, "per-channel quantization takes 'axis' and 'scales' only (zero point 0)");
        if (!is_const || dt != PAR_DTYPE_QS8)
            return par_cj_perr(r, path, "per-channel scales are for qs8 constants only");
        if (!has_axis) return par_cj_perr(r, &ap, "missing (required with 'scales')");
        if (!has_scales) return par_cj_perr(r, &sp, "missing (required with 'axis')");
        int64_t axis;
        par_cj_has(o, "axis", &v);
        if (!par_cj_get_i64(r, v, &ap, -(int64_t)rank, rank - 1, &axis)) return 0;
        q->axis = (int32_t)(axis < 0 ? axis + rank : axis);
        par_cj_has(o, "scales", &v);
        if (!par_cj_want(r, v, json_type_array, &sp, "an array of numbers")) return 0;
        size_t n = json_object_array_length(v);
        if ((int64_t)n != dims[q->axis])
            return par_cj_perr(r, &sp, "expected %lld scales (dimension %d), got %zu", (long long)dims[q->axis],
                               (int)q->axis, n);
        q->per_channel = 1;
        q->n = (int64_t)n;
        q->scales = malloc(sizeof(float) * (n ? n : 1));
        if (!q->scales) return par_cj_perr(r, &sp, "out of memory");
        for (size_t i = 0; i < n; i++) {
            jpath ip = par_cj_pidx(&sp, i);
            if (!par_cj_get_scale(r, json_object_array_get_idx(v, i), &ip, &q->scales[i])) return 0;
        }
        return 1;
    }
    jpath sp = par_cj_pkey(path, "scale"), zp = par_cj_pkey(path, "zero_point");
    if (!par_cj_has(o, "scale", &v)) return par_cj_perr(r, &sp, "missing");
    if (!par_cj_get_scale(r, v, &sp, &q->scale)) return 0;
    int64_t lo, hi, z = 0;
    par_cj_int_limits(dt, &lo, &hi);
    if (dt == PAR_DTYPE_I32 || dt == PAR_DTYPE_QS16) lo = hi = 0; /* symmetric */
    if (par_cj_has(o, "zero_point", &v) && !par_cj_get_i64(r, v, &zp, lo, hi, &z)) return 0;
    q->zero_point = (int32_t)z;
    return 1;
}

/* One input (is_const 0) or constant (1). */
int par_cj_parse_tensor(reader *r, par_case *c, json_object *o, const jpath *path, int is_const)
{
    static const char *const keys[] = {"name", "dtype", "shape", "init", "data", "quant", NULL};
    json_object *v, *init = NULL, *data = NULL;
    const char *name;
    par_dtype dt;
    int32_t rank = 0;
    int64_t dims[PAR_MAX_RANK] = {0};
    char b[80];
    if (!par_cj_want(r, o, json_type_object, path, "an object")) return 0;
    if (!par_cj_check_keys(r, o, path, keys)) return 0;
    jpath np = par_cj_pkey(path, "name"), tp = par_cj_pkey(path, "dtype"), sp = par_cj_pkey(path, "shape");
    jpath qp = par_cj_pkey(path, "quant"), ip = par_cj_pkey(path, "init"), dp = par_cj_pkey(path, "data");
    if (!par_cj_has(o, "name", &v)) return par_cj_perr(r, &np, "missing");
    if (!par_cj_get_str(r, v, &np, &name)) return 0;
    if (!*name) return par_cj_perr(r, &np, "empty name");
    if (par_graph_find_value(c->graph, name) >= 0)
        return par_cj_perr(r, &np, "duplicate name '%s'", par_cj_san(name, b, sizeof b));
    if (!par_cj_has(o, "dtype", &v)) return par_cj_perr(r, &tp, "missing");
    if (!par_cj_get_dtype(r, v, &tp, &dt)) return 0;
    if (!par_cj_has(o, "shape", &v)) return par_cj_perr(r, &sp, "missing");
    if (!parse_shape(r, v, &sp, &rank, dims)) return 0;
    r->total += par_shape_numel(rank, dims);
    if (r->total > PAR_CASE_MAX_ELEMS)
        return par_cj_perr(r, &sp, "the case's inputs and constants exceed %lld elements in all",
                           (long long)PAR_CASE_MAX_ELEMS);

    int has_init = par_cj_has(o, "init", &init), has_data = par_cj_has(o, "data", &data);
    if (has_init && has_data) return par_cj_perr(r, path, "give 'init' or 'data', not both");
    if (!has_init && !has_data) return par_cj_perr(r, path, "missing 'init' or 'data'");

    quant_spec q = {0};
    int ok = 0;
    if (par_cj_has(o, "quant", &v)) {
        if (!parse_quant(r, v, &qp, dt, rank, dims, is_const, &q)) goto out;
    } else if (dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_QS8 || dt == PAR_DTYPE_QS16) {
        par_cj_perr(r, &qp, "missing (required for %s)", par_dtype_name(dt));
        goto out;
    }

    int32_t val;
    if (has_init) {
        par_gen g;
        if (!parse_gen(r, init, &ip, dt, &g)) goto out;
        val = is_const ? par_case_const(c, name, dt, rank, dims, g) : par_case_input(c, name, dt, rank, dims, g);
    } else {
        char *file = NULL;
        int64_t offset = 0;
        void *buf;
        json_type t = json_object_get_type(data);
        if (t == json_type_array) buf = parse_inline(r, data, &dp, dt, rank, dims);
        else if (t == json_type_object) buf = load_sidecar(r, data, &dp, dt, rank, dims, &file, &offset);
        else {
            par_cj_perr(r, &dp, "expected an array of numbers or {\"file\": ...}, got %s", par_json_type_name(data));
            goto out;
        }
        if (!buf) goto out;
        val = is_const ? par_case_const_data(c, name, dt, rank, dims, buf)
                       : par_case_input_data(c, name, dt, rank, dims, buf);
        free(buf);
        if (val >= 0 && file) {
            par_tensor_src *s = &c->srcs[c->n_srcs - 1];
            s->kind = PAR_SRC_FILE;
            s->file = file;
            s->offset = offset;
            file = NULL;
        }
        free(file);
    }
    if (val < 0) {
        par_cj_perr(r, path, "%s", c->err.text);
        goto out;
    }
    if (q.per_channel) {
        if (par_graph_set_channel_quant(c->graph, val, q.axis, q.scales, q.n, &c->err) != PAR_OK) {
            c->status = PAR_ERROR;
            par_cj_perr(r, &qp, "%s", c->err.text);
            goto out;
        }
    } else if (q.present) {
        par_case_quant(c, val, q.scale, q.zero_point);
        if (c->status != PAR_OK) {
            par_cj_perr(r, &qp, "%s", c->err.text);
            goto out;
        }
    }
    ok = 1;
out:
    free(q.scales);
    return ok;
}
