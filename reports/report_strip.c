/*
 * report_strip.c - a record's localization strip in report.json (report.h, par_node_strip): where the error of a
 * failing model enters and how it grows, node by node. Written by report_json.c, read back by the reader with the
 * checks every field of the report gets (types, ranges, counts within counts, node indices increasing), so that a
 * report from another machine renders the same.
 *
 *   "localization": {"by_prefixes": false, "node_outputs": true,
 *                    "first": {"node": 57, "name": "features7_project", "op": "conv2d",
 *                              "error_budget": 3.2, "companion": 51.1} | null,
 *                    "why": "..." (by prefixes: why the per-node outputs were not available),
 *                    "companion_bound": 9.53, "companion_k": 152 (the bound every node value's companion is held
 *                                       to, that of the case's K node values; absent where none was judged),
 *                    "nodes": [{"node": 0, "name": "features0", "op": "conv2d", "error_budget": 0.01,
 *                               "infinite": false, "companion": 0.2, "n": 401408, "over": 0,
 *                               "diverges": false}, ...]}
 */
#include "report_strip.h"
#include "report_read_int.h"

#include "json_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A strip lists at most this many nodes (the op table's graphs stay far below it). */
#define STRIP_NODES_MAX 100000

static void put(json_object *o, const char *key, json_object *v)
{
    json_object_object_add(o, key, v);
}

json_object *par_strip_json(const par_node_strip *s)
{
    if (!s || !s->present) return NULL;
    json_object *o = json_object_new_object(), *nodes = json_object_new_array();
    put(o, "by_prefixes", json_object_new_boolean(s->by_prefix != 0));
    put(o, "node_outputs", json_object_new_boolean(s->node_outputs != 0));
    if (s->first >= 0) {
        json_object *f = json_object_new_object();
        put(f, "node", json_object_new_int(s->first));
        put(f, "name", par_json_str(s->first_name));
        put(f, "op", par_json_str(s->first_op));
        put(f, "error_budget", par_json_num(s->first_ratio));
        put(f, "companion", par_json_num(s->first_z));
        put(o, "first", f);
    } else {
        put(o, "first", NULL);
    }
    if (s->why[0]) put(o, "why", par_json_str(s->why));
    if (s->stat_k > 0) {
        put(o, "companion_bound", par_json_num(s->stat_bound));
        put(o, "companion_k", json_object_new_int(s->stat_k));
    }
    for (int32_t i = 0; i < s->n; i++) {
        const par_node_verdict *v = &s->nodes[i];
        json_object *e = json_object_new_object();
        put(e, "node", json_object_new_int(v->node));
        put(e, "name", par_json_str(v->name));
        put(e, "op", par_json_str(v->op));
        put(e, "error_budget", par_json_num(v->max_ratio));
        put(e, "infinite", json_object_new_boolean(isinf(v->max_ratio) != 0));
        put(e, "companion", par_json_num(v->stat_z));
        put(e, "n", json_object_new_int64(v->n));
        put(e, "over", json_object_new_int64(v->n_over));
        put(e, "diverges", json_object_new_boolean(v->diverges != 0));
        json_object_array_add(nodes, e);
    }
    put(o, "nodes", nodes);
    return o;
}

static const rr_spec first_fields[] = {
    F_I32(par_node_strip, first, "node", 0, 0, INT32_MAX),
    F_LINE(par_node_strip, first_name, "name", 0),
    F_LINE(par_node_strip, first_op, "op", 0),
    F_NUM(par_node_strip, first_ratio, "error_budget", 1, RR_NUM),
    F_NUM(par_node_strip, first_z, "companion", 1, RR_NUM),
};

static const rr_spec bound_fields[] = {
    F_NUM(par_node_strip, stat_bound, "companion_bound", 1, RR_NUM),
    F_I32(par_node_strip, stat_k, "companion_k", 1, 1, INT32_MAX),
};

static const rr_spec node_fields[] = {
    F_I32(par_node_verdict, node, "node", 0, 0, INT32_MAX),
    F_LINE(par_node_verdict, name, "name", 0),
    F_LINE(par_node_verdict, op, "op", 0),
    F_NUM(par_node_verdict, max_ratio, "error_budget", 1, RR_NUM),
    F_NUM(par_node_verdict, stat_z, "companion", 1, RR_NUM),
    F_I64(par_node_verdict, n, "n", 0, 0, RR_COUNT_MAX),
    F_I64_LE(par_node_verdict, n_over, "over", 0, 5),
    F_BOOL(par_node_verdict, diverges, "diverges", 0),
};

static void read_nodes(rd *x, json_object *a, const char *w, par_node_strip *s)
{
    size_t n = json_object_array_length(a);
    if (n > STRIP_NODES_MAX) return rr_fail(x, w, "nodes", "%zu nodes, more than %d", n, STRIP_NODES_MAX);
    s->nodes = calloc(n ? n : 1, sizeof *s->nodes);
    if (!s->nodes) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char wn[128];
        snprintf(wn, sizeof wn, "%s.nodes[%zu]", w, i);
        json_object *e = json_object_array_get_idx(a, i);
        par_node_verdict *v = &s->nodes[i];
        if (!json_object_is_type(e, json_type_object))
            return rr_fail(x, wn, NULL, "is %s, expected an object", par_json_type_name(e));
        RR_FIELDS(x, e, wn, node_fields, v);
        if (isnan(v->max_ratio) && rr_bool(x, e, wn, "infinite", 1, 0)) v->max_ratio = INFINITY;
        if (!x->bad && i > 0 && v->node <= s->nodes[i - 1].node)
            rr_fail(x, wn, "node", "%d after %d: nodes are listed in graph order, each once", (int)v->node,
                    (int)s->nodes[i - 1].node);
        s->n = (int32_t)i + 1;
    }
}

void rr_read_strip(rd *x, json_object *o, const char *w, par_node_strip *s)
{
    memset(s, 0, sizeof *s);
    s->first = -1;
    s->first_ratio = s->first_z = s->stat_bound = NAN;
    s->by_prefix = rr_bool(x, o, w, "by_prefixes", 0, 0);
    s->node_outputs = rr_bool(x, o, w, "node_outputs", 1, 0);
    if (!x->bad && s->by_prefix && s->node_outputs)
        rr_fail(x, w, "node_outputs", "true for a strip localized by prefixes (which has no node outputs)");
    rr_buf(x, o, w, "why", 1, s->why, sizeof s->why, 1);
    RR_FIELDS(x, o, w, bound_fields, s);
    if (!x->bad && (s->stat_k > 0) != !isnan(s->stat_bound))
        rr_fail(x, w, "companion_bound", "and companion_k go together (both present, or both absent)");
    if (!x->bad && s->stat_k > 0 && !(s->stat_bound > 0))
        rr_fail(x, w, "companion_bound", "is %g, expected a positive number", s->stat_bound);
    char wf[128];
    snprintf(wf, sizeof wf, "%s.first", w);
    json_object *f = rr_obj(x, o, w, "first", 1);
    if (f && !x->bad) RR_FIELDS(x, f, wf, first_fields, s);
    json_object *a = rr_arr(x, o, w, "nodes", 0);
    if (a && !x->bad) read_nodes(x, a, w, s);
    if (!x->bad && s->by_prefix && s->n > 0)
        rr_fail(x, w, "nodes", "%d nodes listed for a strip localized by prefixes (which has none)", (int)s->n);
    if (!x->bad && f && s->n > 0) {
        int found = 0;
        for (int32_t i = 0; i < s->n; i++) found |= s->nodes[i].node == s->first && s->nodes[i].diverges;
        if (!found) rr_fail(x, wf, "node", "%d is not a diverging node of the strip", (int)s->first);
    }
    s->present = !x->bad;
}
