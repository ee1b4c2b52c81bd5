/*
 * cli_case.c - `parity show` and `parity export`: one case, by file or by ID, printed for people or written as JSON
 * with its materialized inputs and reference outputs for other tools.
 */
#include <json-c/json.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/tensor.h"
#include "formats/model.h"
#include "reference/reference.h"

par_case *par_cli_load_case(const char *arg, par_msg *msg)
{
    struct stat st;
    if (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)) {
        if (par_model_format_of(arg) != PAR_FMT_NONE) {
            par_import_opts o = {.seed = 1, .test_data = 1};
            return par_model_import(arg, &o, NULL, msg);
        }
        return par_case_load(arg, msg);
    }
    par_selection sel = {0};
    sel.case_id = arg;
    par_case_set set;
    if (par_select_cases(&sel, &set, msg) != 0) {
        if (!strstr(arg, "#seed=")) par_msgf(msg, PAR_ERROR, "'%s' is neither a case file nor a case ID", arg);
        return NULL;
    }
    int owned = 0;
    par_case *c = par_case_set_get(&set, 0, &owned, msg);
    if (c && !owned) set.cases[0].loaded = NULL; /* take it from the set */
    par_case_set_free(&set);
    return c;
}

int par_cli_arith(const char *cmd, const char *name, par_arith *a)
{
    static const struct {
        const char *name;
        par_arith a;
    } t[] = {{"f32", PAR_ARITH_F32}, {"f16-storage", PAR_ARITH_F16_STORAGE}, {"f16", PAR_ARITH_F16},
             {"bf16", PAR_ARITH_BF16}, {"bf16-storage", PAR_ARITH_BF16_STORAGE}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(name, t[i].name)) {
            *a = t[i].a;
            return 0;
        }
    fprintf(stderr, "%s: --arith: '%s' is not f32, f16-storage, f16, bf16 or bf16-storage\n", cmd, name);
    return -1;
}

static void gen_text(const par_tensor_src *s, char *buf, size_t len)
{
    switch (s->kind) {
    case PAR_SRC_GEN: {
        const par_gen *g = &s->gen;
        const char *fan = g->fan_in ? " fan_in" : "";
        switch (g->dist) {
        case PAR_DIST_UNIFORM: snprintf(buf, len, "uniform[%g,%g)%s seed=%llu", g->a, g->b, fan, (unsigned long long)g->seed); break;
        case PAR_DIST_NORMAL: snprintf(buf, len, "normal(%g,%g)%s seed=%llu", g->a, g->b, fan, (unsigned long long)g->seed); break;
        case PAR_DIST_CONST: snprintf(buf, len, "const %g", g->a); break;
        case PAR_DIST_EDGE: snprintf(buf, len, "edge(max %g) seed=%llu", g->b, (unsigned long long)g->seed); break;
        case PAR_DIST_HAZARD: {
            const char *hn = par_hazard_name(g->hazard) ? par_hazard_name(g->hazard) : "?";
            unsigned long long seed = (unsigned long long)g->seed;
            if (g->hazard == PAR_HAZARD_TIES)
                snprintf(buf, len, "hazard ties(step %g, count %g) seed=%llu", g->a, g->b, seed);
            else
                snprintf(buf, len, "hazard %s[%g,%g)%s seed=%llu", hn, g->a, g->b, fan, seed);
            break;
        }
        default: snprintf(buf, len, "?");
        }
        break;
    }
    case PAR_SRC_INLINE: snprintf(buf, len, "inline data"); break;
    case PAR_SRC_FILE: snprintf(buf, len, "file %s @%lld", s->file ? s->file : "?", (long long)s->offset); break;
    default: snprintf(buf, len, "?");
    }
}

static void value_text(const par_value *v, char *buf, size_t len)
{
    char shape[128];
    par_shape_format(v->rank, v->dims, shape, sizeof shape);
    if (v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8 || v->dtype == PAR_DTYPE_I32) {
        if (v->quant_axis >= 0)
            snprintf(buf, len, "%s %s per-channel(axis %d)", par_dtype_name(v->dtype), shape, (int)v->quant_axis);
        else
            snprintf(buf, len, "%s %s scale=%g zp=%d", par_dtype_name(v->dtype), shape, (double)v->scale,
                     (int)v->zero_point);
    } else {
        snprintf(buf, len, "%s %s", par_dtype_name(v->dtype), shape);
    }
}

static const par_tensor_src *find_src(const par_case *c, int32_t value)
{
    for (int32_t i = 0; i < c->n_srcs; i++)
        if (c->srcs[i].value == value) return &c->srcs[i];
    return NULL;
}

int par_cmd_show(int argc, char **argv, const char *exe)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc == 2 ? stdout : stderr;
        fprintf(f, "usage: parity show CASE\n  CASE is a case file or a case ID (e.g. 'relu(x=[3])#seed=1').\n"
                   "  Prints the graph, how inputs and constants are made, and the outputs.\n");
        return argc == 2 ? PAR_EXIT_OK : PAR_EXIT_USAGE;
    }
    par_msg msg = {{0}};
    par_case *c = par_cli_load_case(argv[1], &msg);
    if (!c) {
        fprintf(stderr, "parity: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    char buf[256], gbuf[256];
    printf("case   %s\norigin %s\nseed   %llu\n", c->id, c->origin ? c->origin : "-", (unsigned long long)c->seed);
    if (c->description) printf("about  %s\n", c->description);
    printf("\ninputs:\n");
    for (int32_t i = 0; i < g->n_inputs; i++) {
        const par_value *v = &g->values[g->inputs[i]];
        const par_tensor_src *s = find_src(c, g->inputs[i]);
        value_text(v, buf, sizeof buf);
        if (s) gen_text(s, gbuf, sizeof gbuf);
        else snprintf(gbuf, sizeof gbuf, "-");
        printf("  %-16s %-32s %s\n", v->name, buf, gbuf);
    }
    int nconst = 0;
    int64_t const_elems = 0;
    for (int32_t i = 0; i < g->n_values; i++)
        if (g->values[i].kind == PAR_VALUE_CONST) {
            nconst++;
            const_elems += g->values[i].numel;
        }
    printf("\nconstants: %d (%lld elements)\n", nconst, (long long)const_elems);
    int shown = 0;
    for (int32_t i = 0; i < g->n_values && shown < 40; i++) {
        const par_value *v = &g->values[i];
        if (v->kind != PAR_VALUE_CONST) continue;
        const par_tensor_src *s = find_src(c, i);
        value_text(v, buf, sizeof buf);
        if (s) gen_text(s, gbuf, sizeof gbuf);
        else snprintf(gbuf, sizeof gbuf, "-");
        printf("  %-16s %-32s %s\n", v->name, buf, gbuf);
        shown++;
    }
    if (shown < nconst) printf("  ... %d more\n", nconst - shown);
    printf("\nnodes: %d\n", (int)g->n_nodes);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        printf("  %-16s %s(", n->name, n->op);
        for (int32_t k = 0; k < n->n_inputs; k++)
            printf("%s%s", k ? ", " : "", n->inputs[k] >= 0 ? g->values[n->inputs[k]].name : "-");
        value_text(&g->values[n->outputs[0]], buf, sizeof buf);
        printf(") -> %s %s", g->values[n->outputs[0]].name, buf);
        for (int32_t k = 0; k < n->n_attrs; k++) {
            char a[128];
            par_attr_format(&n->attrs[k], a, sizeof a);
            printf(" %s=%s", n->attrs[k].name, a);
        }
        printf("\n");
    }
    printf("\noutputs:\n");
    for (int32_t i = 0; i < g->n_outputs; i++) {
        value_text(&g->values[g->outputs[i]], buf, sizeof buf);
        printf("  %-16s %s\n", g->values[g->outputs[i]].name, buf);
    }
    par_case_destroy(c);
    return PAR_EXIT_OK;
}

static json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL; /* JSON has no NaN or Inf: null */
}

int par_cmd_export(int argc, char **argv, const char *exe)
{
    static const struct option opts[] = {{"out", required_argument, NULL, 'O'},
                                         {"format", required_argument, NULL, 'f'},
                                         {"arith", required_argument, NULL, 'a'},
                                         {"flush-subnormals", no_argument, NULL, 'F'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL, *arith = "f32", *format = NULL;
    int flush = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        if (ch == 'O' || ch == 'o') out = optarg;
        else if (ch == 'f') format = optarg;
        else if (ch == 'a') arith = optarg;
        else if (ch == 'F') flush = 1;
        else {
            FILE *f = ch == 'h' ? stdout : stderr;
            fprintf(f, "usage: parity export CASE [--out FILE] [--arith f32|f16-storage|f16|bf16|bf16-storage] [--flush-subnormals]\n"
                       "       parity export CASE --format onnx|tflite|ncnn -o FILE\n"
                       "  --format: the case as a model file that the format's own tools load (docs/formats.md says\n"
                       "  which ops map to what; a case that cannot be expressed is exit 2 with the node and reason).\n"
                       "  Otherwise writes the case as JSON with every input and constant inline and a \"reference\" object:\n"
                       "  per output, the reference values and error budgets for the given arithmetic (default\n"
                       "  f32; --flush-subnormals: as declared by PAR_ARITH_FLUSH_SUBNORMALS). Non-finite numbers\n"
                       "  are written as null. Default output: standard output.\n");
            return ch == 'h' ? PAR_EXIT_OK : PAR_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: parity export CASE [--out FILE] [--arith f32|f16-storage|f16|bf16|bf16-storage] [--flush-subnormals]\n");
        return PAR_EXIT_USAGE;
    }
    if (format) {
        par_model_format mf = par_model_format_find(format);
        if (mf == PAR_FMT_NONE || !out) {
            fprintf(stderr, mf == PAR_FMT_NONE ? "parity export: --format: '%s' is not onnx, tflite or ncnn\n"
                                               : "parity export: --format %s needs -o FILE\n", format);
            return PAR_EXIT_USAGE;
        }
        par_msg m = {{0}};
        par_case *c = par_cli_load_case(argv[optind], &m);
        if (!c) {
            fprintf(stderr, "parity: %s\n", m.text);
            return PAR_EXIT_USAGE;
        }
        par_status st = par_model_export(c, mf, out, &m);
        par_case_destroy(c);
        if (st == PAR_UNSUPPORTED) {
            fprintf(stderr, "parity export: %s cannot express this case: %s\n", format, m.text);
            return PAR_EXIT_USAGE;
        }
        if (st != PAR_OK) {
            fprintf(stderr, "parity export: %s\n", m.text);
            return PAR_EXIT_INTERNAL;
        }
        return PAR_EXIT_OK;
    }
    par_arith a;
    if (par_cli_arith("parity export", arith, &a) != 0) return PAR_EXIT_USAGE;
    par_msg msg = {{0}};
    par_case *c = par_cli_load_case(argv[optind], &msg);
    if (!c) {
        fprintf(stderr, "parity: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    int rc = PAR_EXIT_OK;
    char *text = par_case_to_json(c, 1);
    json_object *root = text ? json_tokener_parse(text) : NULL;
    free(text);
    void **inputs = NULL;
    par_ref_result *ref = NULL;
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    par_prec p = par_prec_for(a);
    par_prec_set_flush(&p, flush);
    if (!root || par_case_make_inputs(c, &inputs, &msg) != PAR_OK ||
        par_ref_run(g, &p, (const void *const *)inputs, &ref, &msg) != PAR_OK) {
        fprintf(stderr, "parity export: %s\n", msg.text[0] ? msg.text : "cannot serialize the case");
        rc = PAR_EXIT_INTERNAL;
    } else {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "arith", json_object_new_string(arith));
        json_object *flags = json_object_new_array();
        const char *fname = par_arith_flag_name(PAR_ARITH_FLUSH_SUBNORMALS);
        if (flush) json_object_array_add(flags, json_object_new_string(fname));
        json_object_object_add(r, "arith_flags", flags);
        json_object *outs = json_object_new_array();
        for (int32_t i = 0; i < g->n_outputs; i++) {
            const par_rt *t = &ref->values[g->outputs[i]];
            json_object *o = json_object_new_object();
            json_object_object_add(o, "name", json_object_new_string(g->values[g->outputs[i]].name));
            json_object *shape = json_object_new_array();
            for (int32_t k = 0; k < t->rank; k++) json_object_array_add(shape, json_object_new_int64(t->dims[k]));
            json_object_object_add(o, "shape", shape);
            json_object *vals = json_object_new_array(), *buds = json_object_new_array();
            for (int64_t k = 0; k < t->numel; k++) {
                json_object_array_add(vals, num_or_null(t->v[k]));
                json_object_array_add(buds, num_or_null(t->e[k]));
            }
            json_object_object_add(o, "values", vals);
            json_object_object_add(o, "budgets", buds);
            json_object_array_add(outs, o);
        }
        json_object_object_add(r, "outputs", outs);
        json_object_object_add(root, "reference", r);
        const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        FILE *f = out ? fopen(out, "w") : stdout;
        if (!f || fputs(s, f) < 0 || fputc('\n', f) < 0) {
            fprintf(stderr, "parity export: cannot write %s\n", out ? out : "standard output");
            rc = PAR_EXIT_INTERNAL;
        }
        if (f && f != stdout && fclose(f) != 0) rc = PAR_EXIT_INTERNAL;
    }
    json_object_put(root);
    par_ref_result_destroy(ref);
    if (inputs) par_case_free_inputs(c, inputs);
    par_case_destroy(c);
    return rc;
}
