/*
 * case_json.c - the reader of the case file format (docs/case-format.md): par_case_load and par_case_parse, strict
 * and defensive. The writer, par_case_to_json, is in case.c.
 *
 * Must not: crash, leak or read out of bounds on any input bytes; accept unknown fields, NaN or infinite data, or
 * tensors over PAR_CASE_MAX_ELEMS; validate graphs itself beyond what precise messages need (graph.c does that).
 * Every error reads "<origin>: <JSON path>: <reason>".
 */
#include "case.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prng.h"
#include "tensor.h"

#define MAX_DEPTH 32                       /* JSON nesting; the format itself needs 5 */
#define MAX_TEXT_BYTES (INT64_C(1) << 30)  /* a case file; json_tokener takes an int length anyway */
#define MAX_LIST 64                        /* elements of an attribute list (graph.c has the same cap) */

/* ------------------------------------------------------------------------------------------------------------------
 * Reader state, paths and messages
 * ---------------------------------------------------------------------------------------------------------------- */

typedef struct jpath {
    char s[256];
} jpath;

typedef struct reader {
    const char *origin;
    par_msg *msg;
    int failed;
    int64_t total; /* elements of all inputs and constants so far */
} reader;

/* Append at most max bytes of src to dst (capacity cap), always terminated. */
static void append(char *dst, size_t cap, const char *src, size_t max)
{
    size_t n = strlen(dst), k = strlen(src);
    if (k > max) k = max;
    if (n + 1 >= cap) return;
    if (k > cap - 1 - n) k = cap - 1 - n;
    memcpy(dst + n, src, k);
    dst[n + k] = 0;
}

static jpath pkey(const jpath *base, const char *key)
{
    jpath p = *base;
    append(p.s, sizeof p.s, ".", 1);
    append(p.s, sizeof p.s, key, 80);
    return p;
}

static jpath pidx(const jpath *base, size_t i)
{
    char b[32];
    jpath p = *base;
    snprintf(b, sizeof b, "[%zu]", i);
    append(p.s, sizeof p.s, b, sizeof b);
    return p;
}

/* A user string made safe for a one-line message: at most 60 bytes, control characters as '?'. */
static const char *san(const char *s, char *buf, size_t n)
{
    size_t i = 0, k = 0;
    for (; s && s[i] && k + 4 < n && i < 60; i++) buf[k++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (s && s[i] && k + 4 <= n) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = 0;
    return buf;
}

/* Record the first error (later ones are consequences) and return 0, so checks read `if (!ok) return perr(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int perr(reader *r, const jpath *path, const char *fmt, ...)
{
    if (r->failed) return 0;
    r->failed = 1;
    char reason[PAR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    char *t = r->msg->text;
    t[0] = 0;
    append(t, sizeof r->msg->text, r->origin, 200);
    append(t, sizeof r->msg->text, ": ", 2);
    append(t, sizeof r->msg->text, path->s, sizeof path->s);
    append(t, sizeof r->msg->text, ": ", 2);
    append(t, sizeof r->msg->text, reason, sizeof reason);
    return 0;
}

static const char *jtype(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "null";
    case json_type_boolean: return "a boolean";
    case json_type_double: return "a number";
    case json_type_int: return "an integer";
    case json_type_object: return "an object";
    case json_type_array: return "an array";
    case json_type_string: return "a string";
    }
    return "something else";
}

/* ------------------------------------------------------------------------------------------------------------------
 * Typed getters: each checks the JSON type (json-c asserts on mismatches) and the range, and names the path.
 * ---------------------------------------------------------------------------------------------------------------- */

/* 1 if key is present (its value, possibly JSON null = NULL, in *v). */
static int has(json_object *o, const char *key, json_object **v)
{
    *v = NULL;
    return json_object_object_get_ex(o, key, v) ? 1 : 0;
}

static int want(reader *r, json_object *v, json_type t, const jpath *path, const char *what)
{
    if (json_object_get_type(v) != t) return perr(r, path, "expected %s, got %s", what, jtype(v));
    return 1;
}

/* Reject any key not in the NULL-terminated list: a typo must not pass silently. */
static int check_keys(reader *r, json_object *o, const jpath *path, const char *const *allowed)
{
    struct json_object_iterator it = json_object_iter_begin(o), end = json_object_iter_end(o);
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *k = json_object_iter_peek_name(&it);
        int ok = 0;
        for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, k) == 0;
        if (!ok) {
            char list[200] = "", b[80];
            for (const char *const *a = allowed; *a; a++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a == allowed ? "" : ", ", *a);
            jpath kp = pkey(path, san(k, b, sizeof b));
            return perr(r, &kp, "unknown field (expected one of: %s)", list);
        }
    }
    return 1;
}

static int get_str(reader *r, json_object *v, const jpath *path, const char **out)
{
    if (!want(r, v, json_type_string, path, "a string")) return 0;
    const char *s = json_object_get_string(v);
    if (strlen(s) != (size_t)json_object_get_string_len(v)) return perr(r, path, "string contains a NUL character");
    *out = s;
    return 1;
}

/* json-c saturates integers beyond int64 to INT64_MIN / INT64_MAX, which then fail any range narrower than that. */
static int get_i64(reader *r, json_object *v, const jpath *path, int64_t lo, int64_t hi, int64_t *out)
{
    if (!want(r, v, json_type_int, path, "an integer")) return 0;
    int64_t x = json_object_get_int64(v);
    if (x < lo || x > hi)
        return perr(r, path, "%lld is out of range [%lld, %lld]", (long long)x, (long long)lo, (long long)hi);
    *out = x;
    return 1;
}

/* A seed: an integer in [0, 2^64 - 2] (2^64 - 1 cannot be told from larger numbers, which json-c saturates). */
static int get_seed(reader *r, json_object *v, const jpath *path, uint64_t *out)
{
    if (!want(r, v, json_type_int, path, "an integer")) return 0;
    int64_t x = json_object_get_int64(v);
    if (x < 0) return perr(r, path, "%lld is negative; seeds are in [0, 18446744073709551614]", (long long)x);
    if (x == INT64_MAX) {
        uint64_t u = json_object_get_uint64(v);
        if (u == UINT64_MAX) return perr(r, path, "out of range [0, 18446744073709551614]");
        *out = u;
        return 1;
    }
    *out = (uint64_t)x;
    return 1;
}

static int get_num(reader *r, json_object *v, const jpath *path, double *out)
{
    json_type t = json_object_get_type(v);
    if (t != json_type_int && t != json_type_double) return perr(r, path, "expected a number, got %s", jtype(v));
    double d = json_object_get_double(v);
    if (isnan(d)) return perr(r, path, "NaN is not allowed");
    if (isinf(d)) return perr(r, path, "infinite numbers are not allowed (Infinity, or beyond the double range)");
    *out = d;
    return 1;
}

/* Float attributes also take the strings "inf" and "-inf" (clamp bounds); NaN never. */
static int get_num_or_inf(reader *r, json_object *v, const jpath *path, double *out)
{
    if (json_object_get_type(v) == json_type_string) {
        const char *s = json_object_get_string(v);
        if (strcmp(s, "inf") == 0) return *out = INFINITY, 1;
        if (strcmp(s, "-inf") == 0) return *out = -INFINITY, 1;
        char b[80];
        return perr(r, path, "expected a number, \"inf\" or \"-inf\", got \"%s\"", san(s, b, sizeof b));
    }
    return get_num(r, v, path, out);
}

/* A quantization scale: a number > 0 that stays finite and non-zero as an f32. */
static int get_scale(reader *r, json_object *v, const jpath *path, float *out)
{
    double d;
    if (!get_num(r, v, path, &d)) return 0;
    float f = (float)d;
    if (!(d > 0) || !(f > 0) || isinf(f)) return perr(r, path, "scale %.9g must be > 0 and a finite f32", d);
    *out = f;
    return 1;
}

static int get_dtype(reader *r, json_object *v, const jpath *path, par_dtype *out)
{
    static const par_dtype dts[] = {PAR_DTYPE_F32, PAR_DTYPE_F16, PAR_DTYPE_QU8, PAR_DTYPE_QS8, PAR_DTYPE_I32};
    const char *s;
    if (!get_str(r, v, path, &s)) return 0;
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        if (strcmp(s, par_dtype_name(dts[i])) == 0) return *out = dts[i], 1;
    char b[80];
    return perr(r, path, "unknown dtype '%s' (expected f32, f16, qu8, qs8 or i32)", san(s, b, sizeof b));
}

static int is_quant_dtype(par_dtype dt)
{
    return dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_QS8 || dt == PAR_DTYPE_I32;
}

static void int_limits(par_dtype dt, int64_t *lo, int64_t *hi)
{
    *lo = dt == PAR_DTYPE_QU8 ? 0 : dt == PAR_DTYPE_QS8 ? -128 : INT32_MIN;
    *hi = dt == PAR_DTYPE_QU8 ? 255 : dt == PAR_DTYPE_QS8 ? 127 : INT32_MAX;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Tensors: shape, init, inline data, sidecar files, quantization
 * ---------------------------------------------------------------------------------------------------------------- */

static int parse_shape(reader *r, json_object *v, const jpath *path, int32_t *rank, int64_t *dims)
{
    if (!want(r, v, json_type_array, path, "an array of dimensions")) return 0;
    size_t n = json_object_array_length(v);
    if (n > PAR_MAX_RANK) return perr(r, path, "rank %zu exceeds the maximum %d", n, PAR_MAX_RANK);
    int64_t numel = 1;
    for (size_t i = 0; i < n; i++) {
        jpath ip = pidx(path, i);
        if (!get_i64(r, json_object_array_get_idx(v, i), &ip, 1, PAR_CASE_MAX_ELEMS, &dims[i])) return 0;
        if (numel > PAR_CASE_MAX_ELEMS / dims[i]) /* numel <= 2^28 and dims[i] <= 2^28: no int64 overflow */
            return perr(r, path, "more than %lld elements", (long long)PAR_CASE_MAX_ELEMS);
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
    json_object *v;
    const char *dist;
    memset(g, 0, sizeof *g);
    if (!want(r, o, json_type_object, path, "an object")) return 0;
    jpath dp = pkey(path, "dist");
    if (!has(o, "dist", &v)) return perr(r, &dp, "missing (uniform, normal, const or edge)");
    if (!get_str(r, v, &dp, &dist)) return 0;
    const char *a_key = NULL, *b_key = NULL;
    const char *const *keys;
    if (strcmp(dist, "uniform") == 0) g->dist = PAR_DIST_UNIFORM, a_key = "low", b_key = "high", keys = k_uniform;
    else if (strcmp(dist, "normal") == 0) g->dist = PAR_DIST_NORMAL, a_key = "mean", b_key = "std", keys = k_normal;
    else if (strcmp(dist, "const") == 0) g->dist = PAR_DIST_CONST, a_key = "value", keys = k_const;
    else if (strcmp(dist, "edge") == 0) g->dist = PAR_DIST_EDGE, b_key = "max", keys = k_edge;
    else {
        char b[80];
        return perr(r, &dp, "unknown distribution '%s' (expected uniform, normal, const or edge)",
                    san(dist, b, sizeof b));
    }
    if (!check_keys(r, o, path, keys)) return 0;
    const char *pk[2] = {a_key, b_key};
    double *pv[2] = {&g->a, &g->b};
    for (int i = 0; i < 2; i++) {
        if (!pk[i]) continue;
        jpath kp = pkey(path, pk[i]);
        if (!has(o, pk[i], &v)) return perr(r, &kp, "missing (required for %s)", dist);
        if (!get_num(r, v, &kp, pv[i])) return 0;
    }
    if (has(o, "fan_in", &v)) {
        jpath kp = pkey(path, "fan_in");
        if (!want(r, v, json_type_boolean, &kp, "true or false")) return 0;
        g->fan_in = json_object_get_boolean(v) ? 1 : 0;
    }
    if (has(o, "seed", &v)) {
        jpath kp = pkey(path, "seed");
        if (!get_seed(r, v, &kp, &g->seed)) return 0;
    }
    par_msg m;
    if (par_gen_check(g, dt, &m) != PAR_OK) return perr(r, path, "%s", m.text);
    return 1;
}

/* Inline data: exactly numel numbers; real dtypes take finite numbers (rounded to the dtype, which must not overflow),
 * integer dtypes take integers within the type. Returns a malloc'ed buffer of the dtype, or NULL. */
static void *parse_inline(reader *r, json_object *arr, const jpath *path, par_dtype dt, int32_t rank,
                          const int64_t *dims)
{
    int64_t numel = par_shape_numel(rank, dims);
    size_t n = json_object_array_length(arr);
    if ((int64_t)n != numel) {
        char sh[128];
        par_shape_format(rank, dims, sh, sizeof sh);
        return perr(r, path, "expected %lld values for shape %s, got %zu", (long long)numel, sh, n), NULL;
    }
    void *buf = malloc((size_t)numel * par_dtype_size(dt) + 1);
    if (!buf) return perr(r, path, "out of memory"), NULL;
    int64_t lo, hi;
    int_limits(dt, &lo, &hi);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        jpath ip = pidx(path, i);
        double d;
        int64_t q;
        switch (dt) {
        case PAR_DTYPE_F32:
        case PAR_DTYPE_F16: {
            if (!get_num(r, e, &ip, &d)) goto fail;
            float f = (float)d;
            uint16_t h = dt == PAR_DTYPE_F16 ? par_f32_to_f16(f) : 0;
            if (isinf(f) || (dt == PAR_DTYPE_F16 && (h & 0x7c00) == 0x7c00)) {
                perr(r, &ip, "%.9g overflows %s", d, par_dtype_name(dt));
                goto fail;
            }
            if (dt == PAR_DTYPE_F32) ((float *)buf)[i] = f;
            else ((uint16_t *)buf)[i] = h;
            break;
        }
        default:
            if (!get_i64(r, e, &ip, lo, hi, &q)) goto fail;
            if (dt == PAR_DTYPE_QU8) ((uint8_t *)buf)[i] = (uint8_t)q;
            else if (dt == PAR_DTYPE_QS8) ((int8_t *)buf)[i] = (int8_t)q;
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
    if (!check_keys(r, o, path, keys)) return NULL;
    jpath fp = pkey(path, "file"), op = pkey(path, "offset");
    if (!has(o, "file", &v)) return perr(r, &fp, "missing (the sidecar file's path)"), NULL;
    if (!get_str(r, v, &fp, &file)) return NULL;
    if (!*file) return perr(r, &fp, "empty path"), NULL;
    if (has(o, "offset", &v) && !get_i64(r, v, &op, 0, INT64_MAX / 2, &offset)) return NULL;

    const char *slash = strrchr(r->origin, '/');
    size_t dlen = (file[0] == '/' || !slash) ? 0 : (size_t)(slash - r->origin) + 1;
    char *full = malloc(dlen + strlen(file) + 1);
    if (!full) return perr(r, &fp, "out of memory"), NULL;
    memcpy(full, r->origin, dlen);
    strcpy(full + dlen, file);

    const size_t need = (size_t)par_shape_numel(rank, dims) * par_dtype_size(dt);
    void *buf = NULL;
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        perr(r, &fp, "cannot open '%s': %s", san(full, b, sizeof b), strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        perr(r, &fp, "'%s' is not a regular file", san(full, b, sizeof b));
        goto out;
    }
    if ((int64_t)st.st_size < offset || (uint64_t)((int64_t)st.st_size - offset) < (uint64_t)need) {
        perr(r, &fp, "'%s' has %lld bytes; %zu needed from offset %lld", san(full, b, sizeof b),
             (long long)st.st_size, need, (long long)offset);
        goto out;
    }
    buf = malloc(need + 1);
    if (!buf) {
        perr(r, &fp, "out of memory");
        goto out;
    }
    for (size_t got = 0; got < need;) {
        ssize_t k = pread(fd, (char *)buf + got, need - got, (off_t)(offset + (int64_t)got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            perr(r, &fp, "cannot read '%s': %s", san(full, b, sizeof b), k < 0 ? strerror(errno) : "file is short");
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
    /* Data must be finite, as inline data: the writer could not express anything else. */
    for (size_t i = 0; i < need / es && (dt == PAR_DTYPE_F32 || dt == PAR_DTYPE_F16); i++) {
        int bad = dt == PAR_DTYPE_F32 ? !isfinite(((float *)buf)[i]) : (((uint16_t *)buf)[i] & 0x7c00) == 0x7c00;
        if (bad) {
            perr(r, &fp, "element %zu of '%s' is NaN or infinite; data must be finite", i, san(full, b, sizeof b));
            free(buf);
            buf = NULL;
            goto out;
        }
    }
    *file_out = strdup(file);
    *offset_out = offset;
    if (!*file_out) {
        perr(r, &fp, "out of memory");
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
    if (!want(r, o, json_type_object, path, "an object")) return 0;
    if (!check_keys(r, o, path, keys)) return 0;
    if (!is_quant_dtype(dt)) return perr(r, path, "quantization is only for qu8, qs8 and i32 tensors");
    q->present = 1;
    int has_axis = has(o, "axis", &v), has_scales = has(o, "scales", &v);
    if (has_axis || has_scales) {
        jpath ap = pkey(path, "axis"), sp = pkey(path, "scales");
        if (has(o, "scale", &v) || has(o, "zero_point", &v))
            return perr(r, path, "per-channel quantization takes 'axis' and 'scales' only (zero point 0)");
        if (!is_const || dt != PAR_DTYPE_QS8) return perr(r, path, "per-channel scales are for qs8 constants only");
        if (!has_axis) return perr(r, &ap, "missing (required with 'scales')");
        if (!has_scales) return perr(r, &sp, "missing (required with 'axis')");
        int64_t axis;
        has(o, "axis", &v);
        if (!get_i64(r, v, &ap, -(int64_t)rank, rank - 1, &axis)) return 0;
        q->axis = (int32_t)(axis < 0 ? axis + rank : axis);
        has(o, "scales", &v);
        if (!want(r, v, json_type_array, &sp, "an array of numbers")) return 0;
        size_t n = json_object_array_length(v);
        if ((int64_t)n != dims[q->axis])
            return perr(r, &sp, "expected %lld scales (dimension %d), got %zu", (long long)dims[q->axis],
                        (int)q->axis, n);
        q->per_channel = 1;
        q->n = (int64_t)n;
        q->scales = malloc(sizeof(float) * (n ? n : 1));
        if (!q->scales) return perr(r, &sp, "out of memory");
        for (size_t i = 0; i < n; i++) {
            jpath ip = pidx(&sp, i);
            if (!get_scale(r, json_object_array_get_idx(v, i), &ip, &q->scales[i])) return 0;
        }
        return 1;
    }
    jpath sp = pkey(path, "scale"), zp = pkey(path, "zero_point");
    if (!has(o, "scale", &v)) return perr(r, &sp, "missing");
    if (!get_scale(r, v, &sp, &q->scale)) return 0;
    int64_t lo, hi, z = 0;
    int_limits(dt, &lo, &hi);
    if (dt == PAR_DTYPE_I32) lo = hi = 0;
    if (has(o, "zero_point", &v) && !get_i64(r, v, &zp, lo, hi, &z)) return 0;
    q->zero_point = (int32_t)z;
    return 1;
}

/* One input (is_const 0) or constant (1). */
static int parse_tensor(reader *r, par_case *c, json_object *o, const jpath *path, int is_const)
{
    static const char *const keys[] = {"name", "dtype", "shape", "init", "data", "quant", NULL};
    json_object *v, *init = NULL, *data = NULL;
    const char *name;
    par_dtype dt;
    int32_t rank = 0;
    int64_t dims[PAR_MAX_RANK] = {0};
    char b[80];
    if (!want(r, o, json_type_object, path, "an object")) return 0;
    if (!check_keys(r, o, path, keys)) return 0;
    jpath np = pkey(path, "name"), tp = pkey(path, "dtype"), sp = pkey(path, "shape"), qp = pkey(path, "quant");
    jpath ip = pkey(path, "init"), dp = pkey(path, "data");
    if (!has(o, "name", &v)) return perr(r, &np, "missing");
    if (!get_str(r, v, &np, &name)) return 0;
    if (!*name) return perr(r, &np, "empty name");
    if (par_graph_find_value(c->graph, name) >= 0) return perr(r, &np, "duplicate name '%s'", san(name, b, sizeof b));
    if (!has(o, "dtype", &v)) return perr(r, &tp, "missing");
    if (!get_dtype(r, v, &tp, &dt)) return 0;
    if (!has(o, "shape", &v)) return perr(r, &sp, "missing");
    if (!parse_shape(r, v, &sp, &rank, dims)) return 0;
    r->total += par_shape_numel(rank, dims);
    if (r->total > PAR_CASE_MAX_ELEMS)
        return perr(r, &sp, "the case's inputs and constants exceed %lld elements in all", (long long)PAR_CASE_MAX_ELEMS);

    int has_init = has(o, "init", &init), has_data = has(o, "data", &data);
    if (has_init && has_data) return perr(r, path, "give 'init' or 'data', not both");
    if (!has_init && !has_data) return perr(r, path, "missing 'init' or 'data'");

    quant_spec q = {0};
    int ok = 0;
    if (has(o, "quant", &v)) {
        if (!parse_quant(r, v, &qp, dt, rank, dims, is_const, &q)) goto out;
    } else if (dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_QS8) {
        perr(r, &qp, "missing (required for %s)", par_dtype_name(dt));
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
            perr(r, &dp, "expected an array of numbers or {\"file\": ...}, got %s", jtype(data));
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
        perr(r, path, "%s", c->err.text);
        goto out;
    }
    if (q.per_channel) {
        if (par_graph_set_channel_quant(c->graph, val, q.axis, q.scales, q.n, &c->err) != PAR_OK) {
            c->status = PAR_ERROR;
            perr(r, &qp, "%s", c->err.text);
            goto out;
        }
    } else if (q.present) {
        par_case_quant(c, val, q.scale, q.zero_point);
        if (c->status != PAR_OK) {
            perr(r, &qp, "%s", c->err.text);
            goto out;
        }
    }
    ok = 1;
out:
    free(q.scales);
    return ok;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Nodes
 * ---------------------------------------------------------------------------------------------------------------- */

static int choice_ok(const char *choices, const char *s)
{
    size_t len = strlen(s);
    for (const char *p = choices; *p;) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == len && strncmp(p, s, n) == 0) return 1;
        p += n + (e ? 1 : 0);
    }
    return 0;
}

/* One attribute, converted by the schema: integers for int/ints, numbers (integers accepted, and "inf"/"-inf") for
 * float/floats, strings for str. List storage is malloc'ed into *mem (the caller frees it). */
static int parse_attr(reader *r, json_object *v, const jpath *path, const par_attr_spec *sp, par_attr *a, void **mem)
{
    memset(a, 0, sizeof *a);
    a->name = sp->name;
    a->type = sp->type;
    switch (sp->type) {
    case PAR_ATTR_INT: return get_i64(r, v, path, INT64_MIN, INT64_MAX, &a->i);
    case PAR_ATTR_FLOAT: return get_num_or_inf(r, v, path, &a->f);
    case PAR_ATTR_STRING:
        if (!get_str(r, v, path, &a->s)) return 0;
        if (sp->choices[0] && !choice_ok(sp->choices, a->s)) {
            char b[80];
            return perr(r, path, "'%s' is not one of %s", san(a->s, b, sizeof b), sp->choices);
        }
        return 1;
    case PAR_ATTR_INTS:
    case PAR_ATTR_FLOATS: {
        int ints = sp->type == PAR_ATTR_INTS;
        if (!want(r, v, json_type_array, path, ints ? "a list of integers" : "a list of numbers")) return 0;
        size_t n = json_object_array_length(v);
        if (n > MAX_LIST) return perr(r, path, "list of %zu elements; at most %d", n, MAX_LIST);
        if (sp->fixed_count && n != (size_t)sp->fixed_count)
            return perr(r, path, "expected %d elements, got %zu", (int)sp->fixed_count, n);
        *mem = malloc((n ? n : 1) * 8);
        if (!*mem) return perr(r, path, "out of memory");
        a->count = (int32_t)n;
        for (size_t i = 0; i < n; i++) {
            jpath ep = pidx(path, i);
            json_object *e = json_object_array_get_idx(v, i);
            if (ints ? !get_i64(r, e, &ep, INT64_MIN, INT64_MAX, &((int64_t *)*mem)[i])
                     : !get_num_or_inf(r, e, &ep, &((double *)*mem)[i]))
                return 0;
        }
        if (ints) a->ints = *mem;
        else a->floats = *mem;
        return 1;
    }
    }
    return perr(r, path, "bad attribute type in the op table");
}

/* A node output: "name" or {"name", "dtype", "scale", "zero_point"}. */
static int parse_out(reader *r, par_case *c, json_object *v, const jpath *path, par_out_spec *os)
{
    static const char *const keys[] = {"name", "dtype", "scale", "zero_point", NULL};
    json_object *f;
    char b[80];
    memset(os, 0, sizeof *os);
    jpath np = *path;
    if (json_object_get_type(v) == json_type_object) {
        if (!check_keys(r, v, path, keys)) return 0;
        np = pkey(path, "name");
        if (!has(v, "name", &f)) return perr(r, &np, "missing");
        if (!get_str(r, f, &np, &os->name)) return 0;
        if (has(v, "dtype", &f)) {
            jpath tp = pkey(path, "dtype");
            if (!get_dtype(r, f, &tp, &os->dtype)) return 0;
        }
        jpath sp = pkey(path, "scale"), zp = pkey(path, "zero_point");
        int hs = has(v, "scale", &f);
        if (hs && !is_quant_dtype(os->dtype)) return perr(r, &sp, "only for outputs declared qu8, qs8 or i32");
        if (!hs && (os->dtype == PAR_DTYPE_QU8 || os->dtype == PAR_DTYPE_QS8))
            return perr(r, &sp, "missing (required for %s)", par_dtype_name(os->dtype));
        os->scale = 1.0f;
        if (hs && !get_scale(r, f, &sp, &os->scale)) return 0;
        if (has(v, "zero_point", &f)) {
            int64_t lo, hi, z;
            if (!is_quant_dtype(os->dtype)) return perr(r, &zp, "only for outputs declared qu8, qs8 or i32");
            int_limits(os->dtype, &lo, &hi);
            if (os->dtype == PAR_DTYPE_I32) lo = hi = 0;
            if (!get_i64(r, f, &zp, lo, hi, &z)) return 0;
            os->zero_point = (int32_t)z;
        }
    } else if (!get_str(r, v, path, &os->name)) {
        return 0;
    }
    if (!*os->name) return perr(r, &np, "empty name");
    if (par_graph_find_value(c->graph, os->name) >= 0)
        return perr(r, &np, "duplicate name '%s'", san(os->name, b, sizeof b));
    return 1;
}

static int parse_node(reader *r, par_case *c, json_object *o, const jpath *path)
{
    static const char *const keys[] = {"name", "op", "inputs", "attrs", "outputs", NULL};
    json_object *v, *ins, *outs;
    const char *opname, *name = NULL;
    char b[80];
    if (!want(r, o, json_type_object, path, "an object")) return 0;
    if (!check_keys(r, o, path, keys)) return 0;
    jpath opp = pkey(path, "op"), np = pkey(path, "name"), ip = pkey(path, "inputs"), ap = pkey(path, "attrs");
    jpath outp = pkey(path, "outputs");
    if (!has(o, "op", &v)) return perr(r, &opp, "missing");
    if (!get_str(r, v, &opp, &opname)) return 0;
    const par_op_info *info = par_op_find(opname);
    if (!info) return perr(r, &opp, "unknown op '%s' (`parity list ops` prints the op set)", san(opname, b, sizeof b));
    if (has(o, "name", &v) && !get_str(r, v, &np, &name)) return 0;

    if (!has(o, "inputs", &ins)) return perr(r, &ip, "missing");
    if (!want(r, ins, json_type_array, &ip, "an array of value names")) return 0;
    size_t n_in = json_object_array_length(ins);
    if (n_in < (size_t)info->in_min || n_in > (size_t)info->in_max || n_in > 64)
        return perr(r, &ip, "%s takes %d to %d inputs, got %zu", info->name, (int)info->in_min, (int)info->in_max,
                    n_in);
    int32_t in_idx[64];
    for (size_t i = 0; i < n_in; i++) {
        jpath ep = pidx(&ip, i);
        json_object *e = json_object_array_get_idx(ins, i);
        const char *vn;
        if (!e) {
            in_idx[i] = -1;
            continue;
        }
        if (json_object_get_type(e) != json_type_string)
            return perr(r, &ep, "expected a value name or null, got %s", jtype(e));
        if (!get_str(r, e, &ep, &vn)) return 0;
        in_idx[i] = par_graph_find_value(c->graph, vn);
        if (in_idx[i] < 0)
            return perr(r, &ep, "no value named '%s' (a node uses inputs, constants and earlier nodes' outputs)",
                        san(vn, b, sizeof b));
    }

    if (!has(o, "outputs", &outs)) return perr(r, &outp, "missing");
    if (!want(r, outs, json_type_array, &outp, "an array")) return 0;
    if (json_object_array_length(outs) != (size_t)info->n_out)
        return perr(r, &outp, "%s has %d output%s, got %zu", info->name, (int)info->n_out, info->n_out == 1 ? "" : "s",
                    json_object_array_length(outs));
    par_out_spec os[4];
    if (info->n_out > 4) return perr(r, &outp, "too many outputs in the op table");
    for (int32_t k = 0; k < info->n_out; k++) {
        jpath ep = pidx(&outp, (size_t)k);
        if (!parse_out(r, c, json_object_array_get_idx(outs, (size_t)k), &ep, &os[k])) return 0;
    }

    par_attr attrs[PAR_MAX_ATTRS];
    void *mem[PAR_MAX_ATTRS] = {0};
    int32_t n_attrs = 0;
    int ok = 0;
    if (has(o, "attrs", &v)) {
        if (!want(r, v, json_type_object, &ap, "an object")) return 0;
        struct json_object_iterator it = json_object_iter_begin(v), end = json_object_iter_end(v);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
            const char *k = json_object_iter_peek_name(&it);
            jpath kp = pkey(&ap, san(k, b, sizeof b));
            const par_attr_spec *sp = NULL;
            for (int j = 0; j < info->n_attrs && !sp; j++)
                if (strcmp(info->attrs[j].name, k) == 0) sp = &info->attrs[j];
            if (!sp || n_attrs >= PAR_MAX_ATTRS) {
                char list[200] = "";
                for (int j = 0; j < info->n_attrs; j++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                             info->attrs[j].name);
                if (info->n_attrs == 0) perr(r, &kp, "unknown attribute: %s takes none", info->name);
                else perr(r, &kp, "unknown attribute for %s (expected one of: %s)", info->name, list);
                goto out;
            }
            if (!parse_attr(r, json_object_iter_peek_value(&it), &kp, sp, &attrs[n_attrs], &mem[n_attrs])) {
                n_attrs++;
                goto out;
            }
            n_attrs++;
        }
    }
    if (par_graph_add_node(c->graph, info->name, name, (int32_t)n_in, in_idx, n_attrs, attrs, os, &c->err) < 0) {
        c->status = PAR_ERROR;
        perr(r, path, "%s", c->err.text);
        goto out;
    }
    ok = 1;
out:
    for (int32_t i = 0; i < n_attrs; i++) free(mem[i]);
    return ok;
}

/* ------------------------------------------------------------------------------------------------------------------
 * The document
 * ---------------------------------------------------------------------------------------------------------------- */

static par_case *parse_doc(reader *r, json_object *doc)
{
    static const char *const keys[] = {"schema", "version", "id",        "description", "seed", "options",
                                       "inputs", "constants", "nodes", "outputs", "reference", NULL};
    static const char *const opt_keys[] = {"repeat", "timeout_s", NULL};
    const jpath root = {"$"};
    json_object *v;
    const char *s, *id = NULL, *desc = NULL;
    uint64_t seed = 1;
    int64_t repeat = 0;
    double timeout = 0;
    char b[80];
    if (!want(r, doc, json_type_object, &root, "an object")) return NULL;
    if (!check_keys(r, doc, &root, keys)) return NULL;
    /* "reference" (the expected outputs that `parity export` adds) is accepted and ignored. */
    jpath p = pkey(&root, "schema");
    if (!has(doc, "schema", &v)) return perr(r, &p, "missing (\"%s\")", PAR_CASE_SCHEMA), NULL;
    if (!get_str(r, v, &p, &s)) return NULL;
    if (strcmp(s, PAR_CASE_SCHEMA) != 0)
        return perr(r, &p, "expected \"%s\", got \"%s\"", PAR_CASE_SCHEMA, san(s, b, sizeof b)), NULL;
    p = pkey(&root, "version");
    if (!has(doc, "version", &v)) return perr(r, &p, "missing (%d)", PAR_CASE_VERSION), NULL;
    if (!want(r, v, json_type_int, &p, "an integer")) return NULL;
    if (json_object_get_int64(v) != PAR_CASE_VERSION)
        return perr(r, &p, "unsupported version %lld (this build reads version %d)",
                    (long long)json_object_get_int64(v), PAR_CASE_VERSION), NULL;
    p = pkey(&root, "id");
    if (has(doc, "id", &v)) {
        if (!get_str(r, v, &p, &id)) return NULL;
        if (!*id) return perr(r, &p, "empty id"), NULL;
    }
    p = pkey(&root, "description");
    if (has(doc, "description", &v) && !get_str(r, v, &p, &desc)) return NULL;
    p = pkey(&root, "seed");
    if (has(doc, "seed", &v) && !get_seed(r, v, &p, &seed)) return NULL;
    p = pkey(&root, "options");
    if (has(doc, "options", &v)) {
        json_object *f;
        if (!want(r, v, json_type_object, &p, "an object") || !check_keys(r, v, &p, opt_keys)) return NULL;
        jpath rp = pkey(&p, "repeat"), tp = pkey(&p, "timeout_s");
        if (has(v, "repeat", &f) && !get_i64(r, f, &rp, 1, 1000000, &repeat)) return NULL;
        if (has(v, "timeout_s", &f)) {
            if (!get_num(r, f, &tp, &timeout)) return NULL;
            if (!(timeout > 0 && timeout <= 86400)) return perr(r, &tp, "%.9g is outside (0, 86400]", timeout), NULL;
        }
    }

    /* The default ID: the file's base name without ".json". */
    char defid[256];
    if (!id) {
        const char *base = strrchr(r->origin, '/');
        base = base ? base + 1 : r->origin;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0) n -= 5;
        snprintf(defid, sizeof defid, "%.*s", (int)(n < 255 ? n : 255), base);
        id = defid[0] ? defid : "case";
    }
    par_case *c = par_case_create(id, seed);
    if (!c || !(c->origin = strdup(r->origin)) || (desc && !(c->description = strdup(desc)))) {
        par_case_destroy(c);
        return perr(r, &root, "out of memory"), NULL;
    }
    c->repeat = (int32_t)repeat;
    c->timeout_s = timeout;

    static const char *const sections[3] = {"inputs", "constants", "nodes"};
    for (int sec = 0; sec < 3; sec++) {
        p = pkey(&root, sections[sec]);
        if (!has(doc, sections[sec], &v)) continue;
        if (!want(r, v, json_type_array, &p, "an array")) goto fail;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            jpath ep = pidx(&p, i);
            json_object *e = json_object_array_get_idx(v, i);
            if (!(sec == 2 ? parse_node(r, c, e, &ep) : parse_tensor(r, c, e, &ep, sec == 1))) goto fail;
        }
    }
    p = pkey(&root, "outputs");
    if (!has(doc, "outputs", &v)) {
        perr(r, &p, "missing (the names of the graph outputs)");
        goto fail;
    }
    if (!want(r, v, json_type_array, &p, "an array of value names")) goto fail;
    if (json_object_array_length(v) == 0) {
        perr(r, &p, "at least one output is needed");
        goto fail;
    }
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        jpath ep = pidx(&p, i);
        const char *vn;
        if (!get_str(r, json_object_array_get_idx(v, i), &ep, &vn)) goto fail;
        int32_t idx = par_graph_find_value(c->graph, vn);
        if (idx < 0) {
            perr(r, &ep, "no value named '%s'", san(vn, b, sizeof b));
            goto fail;
        }
        par_case_output(c, idx);
        if (c->status != PAR_OK) {
            perr(r, &ep, "%s", c->err.text);
            goto fail;
        }
    }
    if (par_case_finish(c) != PAR_OK) {
        perr(r, &root, "%s", c->err.text);
        goto fail;
    }
    return c;
fail:
    par_case_destroy(c);
    return NULL;
}

par_case *par_case_parse(const char *text, size_t len, const char *origin, par_msg *msg)
{
    par_msg dummy;
    reader r = {origin ? origin : "<text>", msg ? msg : &dummy, 0, 0};
    const jpath root = {"$"};
    r.msg->text[0] = 0;
    if (!text && len) return perr(&r, &root, "no text"), NULL;
    if (len > (size_t)MAX_TEXT_BYTES) return perr(&r, &root, "text of %zu bytes is too large", len), NULL;
    struct json_tokener *tok = json_tokener_new_ex(MAX_DEPTH);
    if (!tok) return perr(&r, &root, "out of memory"), NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, text ? text : "", (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue) {
        /* A top-level literal ("null", "12") is complete only once the tokener sees the end: feed it a NUL. */
        doc = json_tokener_parse_ex(tok, "", 1);
        if (json_tokener_get_error(tok) == json_tokener_success) jerr = json_tokener_success;
        end = len;
    }
    json_tokener_free(tok);
    if (jerr == json_tokener_success && end < len) jerr = json_tokener_error_parse_unexpected; /* e.g. after a NUL */
    if (jerr != json_tokener_success) {
        size_t line = 1, col = 1;
        if (end > len) end = len;
        for (size_t i = 0; i < end; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        perr(&r, &root, "invalid JSON at line %zu, column %zu (byte %zu): %s", line, col, end,
             jerr == json_tokener_continue ? "unexpected end of input" : json_tokener_error_desc(jerr));
        json_object_put(doc);
        return NULL;
    }
    par_case *c = parse_doc(&r, doc);
    json_object_put(doc);
    return c;
}

par_case *par_case_load(const char *path, par_msg *msg)
{
    par_msg dummy;
    if (!msg) msg = &dummy;
    if (!path) return par_msgf(msg, PAR_ERROR, "(null): $: no file name"), NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return par_msgf(msg, PAR_ERROR, "%s: $: cannot open: %s", path, strerror(errno)), NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_TEXT_BYTES) {
        close(fd);
        return par_msgf(msg, PAR_ERROR, "%s: $: not a regular file of at most 1 GiB", path), NULL;
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    size_t got = 0;
    while (buf && got < size) {
        ssize_t k = read(fd, buf + got, size - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    int err = errno;
    close(fd);
    if (!buf) return par_msgf(msg, PAR_ERROR, "%s: $: out of memory", path), NULL;
    if (got < size) {
        free(buf);
        return par_msgf(msg, PAR_ERROR, "%s: $: cannot read: %s", path, err ? strerror(err) : "file is short"), NULL;
    }
    par_case *c = par_case_parse(buf, size, path, msg);
    free(buf);
    return c;
}
