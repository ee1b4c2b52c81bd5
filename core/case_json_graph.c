/*
 * case_json_graph.c - the nodes of a case file (docs/case-format.md, "nodes"): the op, its inputs by value name, its
 * outputs (a name, or a name with dtype and quantization), and its attributes converted by the op table's schema.
 * Part of the reader whose top level is case_json.c.
 *
 * Must not: accept an unknown op, attribute or field, or a value name not defined before the node; validate what
 * graph.c validates (attribute values, shapes) beyond what precise messages need.
 * Every error reads "<origin>: <JSON path>: <reason>".
 */
#include "case_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "ops.h"

#define MAX_LIST 64 /* elements of an attribute list (graph.c has the same cap) */

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
    case PAR_ATTR_INT: return par_cj_get_i64(r, v, path, INT64_MIN, INT64_MAX, &a->i);
    case PAR_ATTR_FLOAT: return par_cj_get_num_or_inf(r, v, path, &a->f);
    case PAR_ATTR_STRING:
        if (!par_cj_get_str(r, v, path, &a->s)) return 0;
        if (sp->choices[0] && !choice_ok(sp->choices, a->s)) {
            char b[80];
            return par_cj_perr(r, path, "'%s' is not one of %s", par_cj_san(a->s, b, sizeof b), sp->choices);
        }
        return 1;
    case PAR_ATTR_INTS:
    case PAR_ATTR_FLOATS: {
        int ints = sp->type == PAR_ATTR_INTS;
        if (!par_cj_want(r, v, json_type_array, path, ints ? "a list of integers" : "a list of numbers")) return 0;
        size_t n = json_object_array_length(v);
        if (n > MAX_LIST) return par_cj_perr(r, path, "list of %zu elements; at most %d", n, MAX_LIST);
        if (sp->fixed_count && n != (size_t)sp->fixed_count)
            return par_cj_perr(r, path, "expected %d elements, got %zu", (int)sp->fixed_count, n);
        *mem = malloc((n ? n : 1) * 8);
        if (!*mem) return par_cj_perr(r, path, "out of memory");
        a->count = (int32_t)n;
        for (size_t i = 0; i < n; i++) {
            jpath ep = par_cj_pidx(path, i);
            json_object *e = json_object_array_get_idx(v, i);
            if (ints ? !par_cj_get_i64(r, e, &ep, INT64_MIN, INT64_MAX, &((int64_t *)*mem)[i])
                     : !par_cj_get_num_or_inf(r, e, &ep, &((double *)*mem)[i]))
                return 0;
        }
        if (ints) a->ints = *mem;
        else a->floats = *mem;
        return 1;
    }
    }
    return par_cj_perr(r, path, "bad attribute type in the op table");
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
        if (!par_cj_check_keys(r, v, path, keys)) return 0;
        np = par_cj_pkey(path, "name");
        if (!par_cj_has(v, "name", &f)) return par_cj_perr(r, &np, "missing");
        if (!par_cj_get_str(r, f, &np, &os->name)) return 0;
        if (par_cj_has(v, "dtype", &f)) {
            jpath tp = par_cj_pkey(path, "dtype");
            if (!par_cj_get_dtype(r, f, &tp, &os->dtype)) return 0;
        }
        jpath sp = par_cj_pkey(path, "scale"), zp = par_cj_pkey(path, "zero_point");
        int hs = par_cj_has(v, "scale", &f);
        if (hs && !par_cj_is_quant_dtype(os->dtype))
            return par_cj_perr(r, &sp, "only for outputs declared qu8, qs8, qs16 or i32");
        if (!hs && (os->dtype == PAR_DTYPE_QU8 || os->dtype == PAR_DTYPE_QS8 || os->dtype == PAR_DTYPE_QS16))
            return par_cj_perr(r, &sp, "missing (required for %s)", par_dtype_name(os->dtype));
        os->scale = 1.0f;
        if (hs && !par_cj_get_scale(r, f, &sp, &os->scale)) return 0;
        if (par_cj_has(v, "zero_point", &f)) {
            int64_t lo, hi, z;
            if (!par_cj_is_quant_dtype(os->dtype))
                return par_cj_perr(r, &zp, "only for outputs declared qu8, qs8, qs16 or i32");
            par_cj_int_limits(os->dtype, &lo, &hi);
            if (os->dtype == PAR_DTYPE_I32 || os->dtype == PAR_DTYPE_QS16) lo = hi = 0; /* symmetric */
            if (!par_cj_get_i64(r, f, &zp, lo, hi, &z)) return 0;
            os->zero_point = (int32_t)z;
        }
    } else if (!par_cj_get_str(r, v, path, &os->name)) {
        return 0;
    }
    if (!*os->name) return par_cj_perr(r, &np, "empty name");
    if (par_graph_find_value(c->graph, os->name) >= 0)
        return par_cj_perr(r, &np, "duplicate name '%s'", par_cj_san(os->name, b, sizeof b));
    return 1;
}

int par_cj_parse_node(reader *r, par_case *c, json_object *o, const jpath *path)
{
    static const char *const keys[] = {"name", "op", "inputs", "attrs", "outputs", NULL};
    json_object *v, *ins, *outs;
    const char *opname, *name = NULL;
    char b[80];
    if (!par_cj_want(r, o, json_type_object, path, "an object")) return 0;
    if (!par_cj_check_keys(r, o, path, keys)) return 0;
    jpath opp = par_cj_pkey(path, "op"), np = par_cj_pkey(path, "name"), ip = par_cj_pkey(path, "inputs");
    jpath ap = par_cj_pkey(path, "attrs"), outp = par_cj_pkey(path, "outputs");
    if (!par_cj_has(o, "op", &v)) return par_cj_perr(r, &opp, "missing");
    if (!par_cj_get_str(r, v, &opp, &opname)) return 0;
    const par_op_info *info = par_op_find(opname);
    if (!info)
        return par_cj_perr(r, &opp, "unknown op '%s' (`parity list ops` prints the op set)",
                           par_cj_san(opname, b, sizeof b));
    if (par_cj_has(o, "name", &v) && !par_cj_get_str(r, v, &np, &name)) return 0;

    if (!par_cj_has(o, "inputs", &ins)) return par_cj_perr(r, &ip, "missing");
    if (!par_cj_want(r, ins, json_type_array, &ip, "an array of value names")) return 0;
    size_t n_in = json_object_array_length(ins);
    if (n_in < (size_t)info->in_min || n_in > (size_t)info->in_max || n_in > 64)
        return par_cj_perr(r, &ip, "%s takes %d to %d inputs, got %zu", info->name, (int)info->in_min,
                           (int)info->in_max, n_in);
    int32_t in_idx[64];
    for (size_t i = 0; i < n_in; i++) {
        jpath ep = par_cj_pidx(&ip, i);
        json_object *e = json_object_array_get_idx(ins, i);
        const char *vn;
        if (!e) {
            in_idx[i] = -1;
            continue;
        }
        if (json_object_get_type(e) != json_type_string)
            return par_cj_perr(r, &ep, "expected a value name or null, got %s", par_json_type_name(e));
        if (!par_cj_get_str(r, e, &ep, &vn)) return 0;
        in_idx[i] = par_graph_find_value(c->graph, vn);
        if (in_idx[i] < 0)
            return par_cj_perr(r, &ep, "no value named '%s' (a node uses inputs, constants and earlier nodes' outputs)",
                               par_cj_san(vn, b, sizeof b));
    }

    if (!par_cj_has(o, "outputs", &outs)) return par_cj_perr(r, &outp, "missing");
    if (!par_cj_want(r, outs, json_type_array, &outp, "an array")) return 0;
    if (json_object_array_length(outs) != (size_t)info->n_out)
        return par_cj_perr(r, &outp, "%s has %d output%s, got %zu", info->name, (int)info->n_out,
                           info->n_out == 1 ? "" : "s", json_object_array_length(outs));
    par_out_spec os[4];
    if (info->n_out > 4) return par_cj_perr(r, &outp, "too many outputs in the op table");
    for (int32_t k = 0; k < info->n_out; k++) {
        jpath ep = par_cj_pidx(&outp, (size_t)k);
        if (!parse_out(r, c, json_object_array_get_idx(outs, (size_t)k), &ep, &os[k])) return 0;
    }

    par_attr attrs[PAR_MAX_ATTRS];
    void *mem[PAR_MAX_ATTRS] = {0};
    int32_t n_attrs = 0;
    int ok = 0;
    if (par_cj_has(o, "attrs", &v)) {
        if (!par_cj_want(r, v, json_type_object, &ap, "an object")) return 0;
        struct json_object_iterator it = json_object_iter_begin(v), end = json_object_iter_end(v);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
            const char *k = json_object_iter_peek_name(&it);
            jpath kp = par_cj_pkey(&ap, par_cj_san(k, b, sizeof b));
            const par_attr_spec *sp = NULL;
            for (int j = 0; j < info->n_attrs && !sp; j++)
                if (strcmp(info->attrs[j].name, k) == 0) sp = &info->attrs[j];
            if (!sp || n_attrs >= PAR_MAX_ATTRS) {
                char list[200] = "";
                for (int j = 0; j < info->n_attrs; j++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                             info->attrs[j].name);
                if (info->n_attrs == 0) par_cj_perr(r, &kp, "unknown attribute: %s takes none", info->name);
                else par_cj_perr(r, &kp, "unknown attribute for %s (expected one of: %s)", info->name, list);
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
        par_cj_perr(r, path, "%s", c->err.text);
        goto out;
    }
    ok = 1;
out:
    for (int32_t i = 0; i < n_attrs; i++) free(mem[i]);
    return ok;
}
