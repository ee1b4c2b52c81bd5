/*
 * case_json_util.c - the primitives the parts of the case reader share (declared in case_json.h): JSON paths, the
 * first error of a parse, and typed getters that check type and range and name the path. It never calls back into
 * the reader's driver (case_json.c) nor its parts.
 */
#include "case_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------------
 * Reader state, paths and messages
 * ---------------------------------------------------------------------------------------------------------------- */

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

jpath par_cj_pkey(const jpath *base, const char *key)
{
    jpath p = *base;
    append(p.s, sizeof p.s, ".", 1);
    append(p.s, sizeof p.s, key, 80);
    return p;
}

jpath par_cj_pidx(const jpath *base, size_t i)
{
    char b[32];
    jpath p = *base;
    snprintf(b, sizeof b, "[%zu]", i);
    append(p.s, sizeof p.s, b, sizeof b);
    return p;
}

/* A user string made safe for a one-line message: at most 60 bytes, control characters as '?'. */
const char *par_cj_san(const char *s, char *buf, size_t n)
{
    size_t i = 0, k = 0;
    for (; s && s[i] && k + 4 < n && i < 60; i++) buf[k++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (s && s[i] && k + 4 <= n) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = 0;
    return buf;
}

/* Record the first error (later ones are consequences) and return 0, so checks read
 * `if (!ok) return par_cj_perr(...)`. */
int par_cj_perr(reader *r, const jpath *path, const char *fmt, ...)
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

const char *par_json_type_name(json_object *v)
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
int par_cj_has(json_object *o, const char *key, json_object **v)
{
    *v = NULL;
    return json_object_object_get_ex(o, key, v) ? 1 : 0;
}

int par_cj_want(reader *r, json_object *v, json_type t, const jpath *path, const char *what)
{
    if (json_object_get_type(v) != t) return par_cj_perr(r, path, "expected %s, got %s", what, par_json_type_name(v));
    return 1;
}

/* Reject any key not in the NULL-terminated list: a typo must not pass silently. */
int par_cj_check_keys(reader *r, json_object *o, const jpath *path, const char *const *allowed)
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
            jpath kp = par_cj_pkey(path, par_cj_san(k, b, sizeof b));
            return par_cj_perr(r, &kp, "unknown field (expected one of: %s)", list);
        }
    }
    return 1;
}

int par_cj_get_str(reader *r, json_object *v, const jpath *path, const char **out)
{
    if (!par_cj_want(r, v, json_type_string, path, "a string")) return 0;
    const char *s = json_object_get_string(v);
    if (strlen(s) != (size_t)json_object_get_string_len(v))
        return par_cj_perr(r, path, "string contains a NUL character");
    *out = s;
    return 1;
}

/* json-c saturates integers beyond int64 to INT64_MIN / INT64_MAX, which then fail any range narrower than that. */
int par_cj_get_i64(reader *r, json_object *v, const jpath *path, int64_t lo, int64_t hi, int64_t *out)
{
    if (!par_cj_want(r, v, json_type_int, path, "an integer")) return 0;
    int64_t x = json_object_get_int64(v);
    if (x < lo || x > hi)
        return par_cj_perr(r, path, "%lld is out of range [%lld, %lld]", (long long)x, (long long)lo, (long long)hi);
    *out = x;
    return 1;
}

/* A seed: an integer in [0, 2^64 - 2] (2^64 - 1 cannot be told from larger numbers, which json-c saturates). */
int par_cj_get_seed(reader *r, json_object *v, const jpath *path, uint64_t *out)
{
    if (!par_cj_want(r, v, json_type_int, path, "an integer")) return 0;
    int64_t x = json_object_get_int64(v);
    if (x < 0) return par_cj_perr(r, path, "%lld is negative; seeds are in [0, 18446744073709551614]", (long long)x);
    if (x == INT64_MAX) {
        uint64_t u = json_object_get_uint64(v);
        if (u == UINT64_MAX) return par_cj_perr(r, path, "out of range [0, 18446744073709551614]");
        *out = u;
        return 1;
    }
    *out = (uint64_t)x;
    return 1;
}

int par_cj_get_num(reader *r, json_object *v, const jpath *path, double *out)
{
    json_type t = json_object_get_type(v);
    if (t != json_type_int && t != json_type_double)
        return par_cj_perr(r, path, "expected a number, got %s", par_json_type_name(v));
    double d = json_object_get_double(v);
    if (isnan(d)) return par_cj_perr(r, path, "NaN is not allowed");
    if (isinf(d))
        return par_cj_perr(r, path, "infinite numbers are not allowed (Infinity, or beyond the double range)");
    *out = d;
    return 1;
}

/* A number, or the string "inf" or "-inf" (JSON has no infinity): float attributes such as clamp bounds, and real
 * inline data such as an attention mask's -inf. NaN never. */
int par_cj_get_num_or_inf(reader *r, json_object *v, const jpath *path, double *out)
{
    if (json_object_get_type(v) == json_type_string) {
        const char *s = json_object_get_string(v);
        if (strcmp(s, "inf") == 0) return *out = INFINITY, 1;
        if (strcmp(s, "-inf") == 0) return *out = -INFINITY, 1;
        char b[80];
        return par_cj_perr(r, path, "expected a number, \"inf\" or \"-inf\", got \"%s\"", par_cj_san(s, b, sizeof b));
    }
    return par_cj_get_num(r, v, path, out);
}

/* A quantization scale: a number > 0 that stays finite and non-zero as an f32. */
int par_cj_get_scale(reader *r, json_object *v, const jpath *path, float *out)
{
    double d;
    if (!par_cj_get_num(r, v, path, &d)) return 0;
    float f = (float)d;
    if (!(d > 0) || !(f > 0) || isinf(f)) return par_cj_perr(r, path, "scale %.9g must be > 0 and a finite f32", d);
    *out = f;
    return 1;
}

int par_cj_get_dtype(reader *r, json_object *v, const jpath *path, par_dtype *out)
{
    static const par_dtype dts[] = {PAR_DTYPE_F32, PAR_DTYPE_F16, PAR_DTYPE_QU8, PAR_DTYPE_QS8, PAR_DTYPE_I32,
                                    PAR_DTYPE_BOOL, PAR_DTYPE_QS16};
    const char *s;
    if (!par_cj_get_str(r, v, path, &s)) return 0;
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        if (strcmp(s, par_dtype_name(dts[i])) == 0) return *out = dts[i], 1;
    char b[80];
    return par_cj_perr(r, path, "unknown dtype '%s' (expected f32, f16, qu8, qs8, qs16, i32 or bool)", par_cj_san(s, b, sizeof b));
}

int par_cj_is_quant_dtype(par_dtype dt)
{
    return dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_QS8 || dt == PAR_DTYPE_QS16 || dt == PAR_DTYPE_I32;
}

void par_cj_int_limits(par_dtype dt, int64_t *lo, int64_t *hi)
{
    *lo = dt == PAR_DTYPE_QU8 || dt == PAR_DTYPE_BOOL ? 0 : dt == PAR_DTYPE_QS8 ? -128
          : dt == PAR_DTYPE_QS16                  ? -32768
                                                  : INT32_MIN;
    *hi = dt == PAR_DTYPE_QU8 ? 255 : dt == PAR_DTYPE_BOOL ? 1 : dt == PAR_DTYPE_QS8 ? 127
          : dt == PAR_DTYPE_QS16                  ? 32767
                                                  : INT32_MAX;
}
